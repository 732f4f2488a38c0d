/*
 * Experiment configs (OpenMMLab's mmcv / mmengine Config files): each file
 * named with --config, with its text and digest, and the files its
 * _base_ names, followed the way mmcv does: relative to the folder of the
 * file that names them, joined and normalised like os.path.abspath (so
 * ".." is lexical), depth-first in the order they are listed.
 *
 * These paths are the experiment's, on the running machine: they are read
 * from the live filesystem even when the probe's root is a captured tree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/facts.h"
#include "lock/model.h"
#include "probe.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/pybases.h"
#include "util/text.h"
#include "util/userpath.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_CONFIG_MAX_BYTES EL_LIMIT_TEXT /* 1 MiB: a config is a short text file */
#define EL_CONFIG_CHAIN_MAX 1000          /* files recorded for one requested config */

/* What a config's _base_ says. */
typedef struct {
	el_strvec names;  /* the literal paths, in order */
	char *unresolved; /* the right-hand side as written when it is not literal */
	bool read_base;   /* mmengine's `with read_base():` imports */
	bool yaml;        /* a YAML config: _base_ kept as written */
} base_decl;

static void decl_release(base_decl *d)
{
	el_strvec_release(&d->names);
	free(d->unresolved);
}

/* The _base_ of a Python config (util/pybases.c). */
static void python_bases(const char *s, size_t len, base_decl *d)
{
	el_py_bases b = { 0 };

	el_py_bases_read(&b, s, len);
	d->names = b.names;
	d->unresolved = b.unresolved;
	d->read_base = b.read_base;
	el_strvec_release(&b.modules);
}

/* item as compact JSON text, malloc'd. */
static char *json_text(const cJSON *item)
{
	char *j = cJSON_PrintUnformatted(item), *s;

	if (!j)
		el_oom();
	s = el_xstrdup(j);
	cJSON_free(j);
	return s;
}

/* The "_base_" member of a JSON config. */
static void json_bases(el_probe *p, const char *shown, const char *s, size_t len, base_decl *d)
{
	cJSON *doc = cJSON_ParseWithLength(s, len), *base = el_jget(doc, "_base_"), *item;

	if (!cJSON_IsObject(doc)) {
		el_probe_warn(p, "'%s': not valid JSON, its _base_ is not followed", shown);
	} else if (cJSON_IsString(base)) {
		el_strvec_push(&d->names, base->valuestring);
	} else if (cJSON_IsArray(base)) {
		cJSON_ArrayForEach(item, base) {
			if (!cJSON_IsString(item)) {
				el_strvec_release(&d->names);
				break;
			}
			el_strvec_push(&d->names, item->valuestring);
		}
		if (d->names.n != (size_t)cJSON_GetArraySize(base))
			d->unresolved = json_text(base);
	} else if (base) {
		d->unresolved = json_text(base);
	}
	cJSON_Delete(doc);
}

/* A YAML config's _base_ is recorded as written, not followed. */
static void yaml_bases(const char *s, size_t len, base_decl *d)
{
	const char *pos = s, *line;
	size_t n;

	while (el_next_line(&pos, s + len, &line, &n))
		if (n > 6 && strncmp(line, "_base_", 6) == 0 && (line[6] == ':' || line[6] == ' ')) {
			line += 6;
			n -= 6;
			while (n && (*line == ' ' || *line == ':')) {
				line++;
				n--;
			}
			el_trim(&line, &n);
			d->yaml = true;
			free(d->unresolved);
			d->unresolved = el_xstrndup(line, n);
		}
}

/*
 * The walk over the chains. Files are told apart by their real path;
 * "chain" holds the files from the requested config down to the one
 * being read, to tell a cycle from a file merely reached twice.
 */
typedef struct {
	char *key;     /* real path, or the normalised path when it has none */
	char *shown;   /* its entry's "path" */
	char *error;   /* its entry's "error": its text could not be read; NULL when it was */
	bool requested, effective; /* its entry's "requested"; whether it has an "effective" */
	cJSON *entry;
} seen_file;

typedef struct {
	const char *key;
	const char *shown;
} chain_link;

typedef struct {
	el_probe *p;
	el_root live;
	char *cwd;          /* NULL when it cannot be read */
	cJSON *files;
	seen_file *seen;
	size_t nseen, seen_cap;
	chain_link *chain;
	size_t depth, chain_cap;
	size_t added;       /* files recorded for the current requested config */
	bool over_limit;
} config_walk;

static seen_file *find_seen(config_walk *w, const char *key)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (strcmp(w->seen[i].key, key) == 0)
			return &w->seen[i];
	return NULL;
}

static seen_file *add_seen(config_walk *w, char *key, const char *shown, bool requested, cJSON *entry)
{
	EL_GROW(w->seen, w->nseen + 1, w->seen_cap);
	w->seen[w->nseen] = (seen_file){ key, el_xstrdup(shown), NULL, requested, false, entry };
	return &w->seen[w->nseen++];
}

/* "a -> b -> a", from the first link holding key to the end of the chain. */
static char *cycle_text(const config_walk *w, size_t from)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the chain's names, in memory already, joined by arrows");

	for (size_t i = from; i < w->depth; i++)
		el_buf_addf(&b, "%s -> ", w->chain[i].shown);
	el_buf_adds(&b, w->chain[from].shown);
	return el_buf_detach(&b);
}

/* Why a config could not be read, for "error" and its warning. */
static const char *read_reason(int rc, int err_no)
{
	if (rc == ENVLOCK_ELIMIT && err_no != ELOOP)
		return "larger than 1 MiB";
	if (rc == ENVLOCK_EINVAL)
		return "not a regular file";
	return el_root_reason(rc, err_no);
}

/* The _base_ of the file just read, by its kind. */
static void find_bases(config_walk *w, const char *abs, const char *shown, const el_buf *b,
		       base_decl *d)
{
	if (el_ends_with(abs, ".json"))
		json_bases(w->p, shown, b->data, b->len, d);
	else if (el_ends_with(abs, ".yaml") || el_ends_with(abs, ".yml"))
		yaml_bases(b->data, b->len, d);
	else
		python_bases(b->data, b->len, d);
}

static void visit(config_walk *w, const char *abs, bool requested, const char *parent,
		  const char *written);

/* Record what d says in entry and follow each base. */
static void follow_bases(config_walk *w, const char *abs, const char *shown, cJSON *entry,
			 base_decl *d)
{
	cJSON *bases = el_jset_arr(entry, "bases");
	char *dir = el_path_dir(abs);
	el_strvec paths = EL_STRVEC_INIT;

	for (size_t i = 0; i < d->names.n; i++) {
		const char *name = d->names.v[i];
		char *joined = name[0] == '/' ? el_xstrdup(name) : el_path_join(dir, name);
		char *s;

		el_strvec_push_owned(&paths, el_path_normalise(joined));
		s = el_userpath_display(paths.v[i]);
		el_jpush_str(bases, s);
		free(s);
		free(joined);
	}
	if (d->read_base) {
		el_jset_str(entry, "unresolved_base", "read_base()");
		el_probe_warn(w->p, "'%s': imports its bases with mmengine's read_base(), not followed", shown);
	} else if (d->unresolved) {
		el_jset_str(entry, "unresolved_base", d->unresolved);
		el_probe_warn(w->p, "'%s': _base_ %s (%s), not followed", shown,
			      d->yaml ? "of a YAML config is not read" : "is not a literal path or list of paths",
			      d->unresolved);
	}
	for (size_t i = 0; i < paths.n; i++)
		visit(w, paths.v[i], false, shown, d->names.v[i]);
	el_strvec_release(&paths);
	free(dir);
}

/*
 * Record the config at abs (absolute, normalised) and, depth-first, its
 * bases. parent and written (NULL for a requested config) are the file
 * that names it and the name as it is written there, for warnings.
 */
static void visit(config_walk *w, const char *abs, bool requested, const char *parent,
		  const char *written)
{
	el_buf b = EL_BUF_INIT(EL_CONFIG_MAX_BYTES);
	base_decl d = { 0 };
	char *key = NULL, *shown = el_userpath_display(abs), hex[EL_SHA256_HEX];
	seen_file *seen;
	cJSON *entry;
	int rc, e = 0;

	if (el_root_realpath(&w->live, abs, &key, NULL) != 0) {
		free(key);
		key = el_xstrdup(abs);
	}
	for (size_t i = 0; i < w->depth; i++)
		if (strcmp(w->chain[i].key, key) == 0) {
			char *cycle = cycle_text(w, i);

			el_probe_warn(w->p, "'%s': _base_ '%s' makes a cycle (%s)", parent, written, cycle);
			free(cycle);
			goto done;
		}
	if ((seen = find_seen(w, key)) != NULL) {
		/* named on the command line after it was reached as a base */
		if (requested && !seen->requested) {
			seen->requested = true;
			el_jset_bool(seen->entry, "requested", true);
			if (seen->error)
				el_probe_request_error(w->p, "'%s': %s", shown, seen->error);
		}
		goto done;
	}
	if (w->added == EL_CONFIG_CHAIN_MAX) {
		if (!w->over_limit)
			el_probe_warn(w->p, "'%s': its _base_ chain has more than %d files, the rest are not recorded",
				      w->depth ? w->chain[0].shown : shown, EL_CONFIG_CHAIN_MAX);
		w->over_limit = true;
		goto done;
	}
	w->added++;
	entry = el_jpush_obj(w->files);
	el_jset_str(entry, "path", shown);
	el_jset_bool(entry, "requested", requested);
	seen = add_seen(w, key, shown, requested, entry);

	rc = el_root_read(&w->live, abs, &b, &e);
	if (rc == 0 && !el_is_text(b.data, b.len))
		rc = ENVLOCK_EPARSE;
	if (rc != 0) {
		const char *why = rc == ENVLOCK_EPARSE ? "binary data, not UTF-8 text" : read_reason(rc, e);

		el_jset_str(entry, "error", why);
		seen->error = el_xstrdup(why);
		if (requested)
			el_probe_request_error(w->p, "'%s': %s", shown, why);
		else if (rc == ENVLOCK_ENOTFOUND && e != ENOTDIR)
			el_probe_warn(w->p, "'%s': _base_ '%s' not found", parent, written);
		else
			el_probe_warn(w->p, "'%s': %s (a _base_ of '%s')", shown, why, parent);
		goto done_seen;
	}
	el_sha256_buf(b.data, b.len, hex);
	el_jset_str(entry, "sha256", hex);
	el_jset_int(entry, "size", (long long)b.len);
	el_jset_strn(entry, "text", b.data, b.len);
	find_bases(w, abs, shown, &b, &d);
	el_buf_release(&b);

	/* the chain link borrows key (now owned by seen) and shown (freed after) */
	EL_GROW(w->chain, w->depth + 1, w->chain_cap);
	w->chain[w->depth].key = key;
	w->chain[w->depth].shown = shown;
	w->depth++;
	follow_bases(w, abs, shown, entry, &d);
	w->depth--;
done_seen:
	key = NULL; /* owned by seen */
done:
	decl_release(&d);
	el_buf_release(&b);
	free(key);
	free(shown);
}

/* Move res's list key into eff, each entry's file shown as the user would write it (~/...). */
static void move_notes(cJSON *eff, cJSON *res, const char *key)
{
	cJSON *notes = cJSON_DetachItemFromObject(res, key);

	for (cJSON *n = notes ? notes->child : NULL; n; n = n->next) {
		cJSON *file = cJSON_GetObjectItemCaseSensitive(n, "file");

		if (cJSON_IsString(file) && file->valuestring[0] == '/') {
			char *display = el_userpath_display(file->valuestring);

			cJSON_SetValuestring(file, display);
			free(display);
		}
	}
	if (notes)
		cJSON_AddItemToObject(eff, key, notes);
}

/*
 * A requested config's effective value (lib/config): its chain merged as
 * mmcv does, with --cfg-options, and what could not be evaluated by file
 * and line. A chain mmcv would refuse records the reason instead.
 */
static void record_effective(el_probe *p, seen_file *f, const char *abs, const char *cwd)
{
	cJSON *res = NULL, *eff, *value;

	if (f->error || !el_ends_with(abs, ".py"))
		return;
	eff = cJSON_AddObjectToObject(f->entry, "effective");
	f->effective = true;
	/* 'mmdet::...' bases are read from the packages the probed Python has, as mmengine does */
	{
		size_t ndirs = 0;
		char **host, *missing = NULL;
		el_config_sites sites;
		int rc;

		while (p->py.site_dirs && p->py.site_dirs[ndirs])
			ndirs++;
		host = el_xcalloc(ndirs + 1, sizeof(char *));
		sites = (el_config_sites){ (const char *const *)host, 0 };
		for (size_t i = 0; i < ndirs; i++)
			if (p->py.site_dirs[i][0] == '/')
				host[sites.n++] = el_root_host(&p->root, p->py.site_dirs[i]);
		rc = el_config_effective_in(&res, p->ctx, abs, p->opts->cfg_options, p->opts->cfg_option_count, &sites,
					    &missing);
		for (size_t i = 0; i < sites.n; i++)
			free(host[i]);
		free(host);
		if (rc != 0) {
			/* not a warning: the chain's own problems are warned about by the walk */
			el_jset_str(eff, "error", envlock_error_last(p->ctx));
			if (missing) {
				/* shown as a path in the tree probed, as the lock's other paths are */
				char *top = p->root.live ? NULL : el_root_host(&p->root, "/");
				size_t n = top ? strlen(top) : 0;

				while (n && top[n - 1] == '/')
					n--;
				el_jset_str(eff, "missing", top && n && !strncmp(missing, top, n) && missing[n] == '/'
								    ? missing + n : missing);
				free(top);
			}
			free(missing);
			return;
		}
	}
	value = cJSON_DetachItemFromObject(res, "effective");
	cJSON_AddItemToObject(eff, "value", value);
	/* the files it names, as this machine has them, for the config rules (lib/cfgcheck) */
	el_cfg_files_record(p->ctx, el_jset_arr(eff, "files"), value, abs, cwd);
	move_notes(eff, res, "not_evaluated");
	move_notes(eff, res, "imports");
	if (p->opts->cfg_option_count) {
		cJSON *opts = cJSON_AddArrayToObject(eff, "cfg_options");

		for (size_t i = 0; i < p->opts->cfg_option_count; i++)
			cJSON_AddItemToArray(opts, cJSON_CreateString(p->opts->cfg_options[i]));
	}
	cJSON_Delete(res);
}

static void effective_of_seen(el_probe *p, config_walk *w, const char *abs, const char *cwd)
{
	char *shown = el_userpath_display(abs);

	for (size_t i = 0; i < w->nseen; i++)
		if (!strcmp(w->seen[i].shown, shown) && !w->seen[i].effective) {
			record_effective(p, &w->seen[i], abs, cwd);
			break;
		}
	free(shown);
}

void el_probe_configs(el_probe *p)
{
	cJSON *section = el_probe_section(p, EL_SEC_CONFIGS);
	config_walk w;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.live.prefix = (char *)"";
	w.live.live = 1;
	el_jset_str(section, "status", p->opts->config_count ? "present" : "absent");
	if (!p->opts->config_count)
		return;
	w.files = el_jset_arr(section, "files");
	w.cwd = getcwd(NULL, 0);
	for (size_t i = 0; i < p->opts->config_count; i++) {
		const char *path = p->opts->configs[i];
		char *joined, *abs;

		if (path[0] != '/' && !w.cwd) {
			cJSON *entry = el_jpush_obj(w.files);

			el_jset_str(entry, "path", path);
			el_jset_bool(entry, "requested", true);
			el_jset_str(entry, "error", "the current directory cannot be read");
			el_probe_request_error(p, "'%s': the current directory cannot be read", path);
			continue;
		}
		joined = path[0] == '/' ? el_xstrdup(path) : el_path_join(w.cwd, path);
		abs = el_path_normalise(joined);
		w.added = 0;
		w.over_limit = false;
		{
			size_t before = w.nseen;

			/* the first file a visit records is the one it was asked for */
			visit(&w, abs, true, NULL, NULL);
			if (w.nseen > before)
				record_effective(p, &w.seen[before], abs, w.cwd);
			else /* reached before as a base of another config: its entry gets it */
				effective_of_seen(p, &w, abs, w.cwd);
		}
		free(abs);
		free(joined);
	}
	for (size_t i = 0; i < w.nseen; i++) {
		free(w.seen[i].key);
		free(w.seen[i].shown);
		free(w.seen[i].error);
	}
	free(w.seen);
	free(w.chain);
	free(w.cwd);
}
