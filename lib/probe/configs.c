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

#include "cfgcheck/cfgcheck.h"
#include "config/config.h"
#include "lock/model.h"
#include "probe.h"
#include "util/error.h"
#include "util/hash.h"
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

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * Python source scanning: just enough to find top-level statements and the
 * extent of one, stepping over strings, comments, brackets and backslash
 * continuations.
 */

/*
 * s[i] is a quote: the index just past the string it opens, or len when
 * it is not closed before len (or, for a one-line string, the newline).
 */
static size_t skip_string(const char *s, size_t i, size_t len, bool *closed)
{
	char q = s[i];
	bool triple = i + 2 < len && s[i + 1] == q && s[i + 2] == q;

	*closed = false;
	i += triple ? 3 : 1;
	while (i < len) {
		if (s[i] == '\\') {
			i += 2;
			continue;
		}
		if (!triple && s[i] == '\n')
			return len;
		if (s[i] == q && (!triple || (i + 2 < len && s[i + 1] == q && s[i + 2] == q))) {
			*closed = true;
			return i + (triple ? 3 : 1);
		}
		i++;
	}
	return len;
}

/* The length of a backslash-newline continuation at s[i], or 0. */
static size_t continuation(const char *s, size_t i, size_t len)
{
	if (s[i] != '\\')
		return 0;
	if (i + 1 < len && s[i + 1] == '\n')
		return 2;
	if (i + 2 < len && s[i + 1] == '\r' && s[i + 2] == '\n')
		return 3;
	return 0;
}

/*
 * The end of the statement starting at i: the newline (or ';' with
 * at_semicolon) outside brackets, or len. *last gets the index just past
 * its last character that is not a blank, a comment or a continuation.
 */
static size_t stmt_end(const char *s, size_t i, size_t len, bool at_semicolon, size_t *last)
{
	int depth = 0;

	*last = i;
	while (i < len) {
		char c = s[i];

		if (c == '#') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (continuation(s, i, len)) {
			i += continuation(s, i, len);
			continue;
		}
		if (c == '\n' && depth == 0)
			return i;
		if (c == ';' && depth == 0 && at_semicolon)
			return i;
		if (c == '\'' || c == '"') {
			bool closed;

			i = skip_string(s, i, len, &closed);
			*last = i;
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && depth > 0)
			depth--;
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f')
			*last = i + 1;
		i++;
	}
	return len;
}

/* Step over blanks, newlines, comments and continuations inside [i, end). */
static size_t skip_blank(const char *s, size_t i, size_t end)
{
	while (i < end) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' || s[i] == '\f')
			i++;
		else if (continuation(s, i, end))
			i += continuation(s, i, end);
		else if (s[i] == '#')
			while (i < end && s[i] != '\n')
				i++;
		else
			break;
	}
	return i;
}

/*
 * One string literal at s[*i] appended to out: plain or r/u-prefixed, any
 * quote style. Byte and f-strings, and escapes other than \\ \' \" and a
 * continuation, are not literal paths: false.
 */
static bool parse_literal(const char *s, size_t *i, size_t end, el_buf *out)
{
	size_t k = *i, close, quote;
	bool raw = false, closed;

	if (k < end && (s[k] == 'r' || s[k] == 'R')) {
		raw = true;
		k++;
	} else if (k < end && (s[k] == 'u' || s[k] == 'U')) {
		k++;
	}
	if (k >= end || (s[k] != '\'' && s[k] != '"'))
		return false;
	close = skip_string(s, k, end, &closed);
	if (!closed)
		return false;
	quote = close - k >= 6 && s[k + 1] == s[k] && s[k + 2] == s[k] ? 3 : 1;
	for (size_t j = k + quote; j < close - quote; j++) {
		if (s[j] == '\\' && !raw) {
			char e = s[++j];

			if (e == '\\' || e == '\'' || e == '"')
				el_buf_putc(out, e);
			else if (e == '\r' && s[j + 1] == '\n')
				j++;
			else if (e != '\n')
				return false;
			continue;
		}
		el_buf_putc(out, s[j]);
	}
	*i = close;
	return true;
}

/* Adjacent literals ('a' 'b'), concatenated as Python does; malloc'd or NULL. */
static char *parse_path(const char *s, size_t *i, size_t end)
{
	el_buf b = EL_BUF_INIT(EL_CONFIG_MAX_BYTES);
	size_t k = *i;
	int n = 0;

	while (parse_literal(s, &k, end, &b)) {
		n++;
		*i = k;
		k = skip_blank(s, k, end);
	}
	/* mmcv fills {{ fileDirname }} and the like in before it runs the file */
	if (n == 0 || strstr(el_buf_cstr(&b), "{{")) {
		el_buf_release(&b);
		return NULL;
	}
	el_buf_put(&b, "", 0);
	return el_buf_detach(&b);
}

/* The right-hand side [i, end) as a string or a list of strings, into d. */
static bool parse_rhs(const char *s, size_t i, size_t end, base_decl *d)
{
	char *name;

	i = skip_blank(s, i, end);
	if (i < end && s[i] == '[') {
		i = skip_blank(s, i + 1, end);
		while (i < end && s[i] != ']') {
			if (!(name = parse_path(s, &i, end)))
				return false;
			el_strvec_push_owned(&d->names, name);
			i = skip_blank(s, i, end);
			if (i < end && s[i] == ',')
				i = skip_blank(s, i + 1, end);
			else if (i >= end || s[i] != ']')
				return false;
		}
		if (i >= end)
			return false;
		i++;
	} else if (i < end && s[i] == '(') {
		/* a parenthesised string; a tuple is not a list to mmcv */
		i = skip_blank(s, i + 1, end);
		if (!(name = parse_path(s, &i, end)))
			return false;
		el_strvec_push_owned(&d->names, name);
		i = skip_blank(s, i, end);
		if (i >= end || s[i] != ')')
			return false;
		i++;
	} else {
		if (!(name = parse_path(s, &i, end)))
			return false;
		el_strvec_push_owned(&d->names, name);
	}
	return skip_blank(s, i, end) == end;
}

/* "_base_ ..." at the start of a top-level statement at s[i]. */
static void parse_assignment(const char *s, size_t i, size_t len, base_decl *d)
{
	size_t rhs, last;

	/* the last assignment wins, as when Python runs the file */
	el_strvec_release(&d->names);
	free(d->unresolved);
	d->unresolved = NULL;
	rhs = i + strlen("_base_");
	while (rhs < len && (s[rhs] == ' ' || s[rhs] == '\t'))
		rhs++;
	if (rhs < len && s[rhs] == '=' && (rhs + 1 >= len || s[rhs + 1] != '=')) {
		stmt_end(s, ++rhs, len, true, &last);
		if (parse_rhs(s, rhs, last, d))
			return;
		el_strvec_release(&d->names);
		rhs = skip_blank(s, rhs, last);
	} else {
		/* _base_ += [...], _base_.append(...): changed, not assigned */
		rhs = i;
		stmt_end(s, rhs, len, true, &last);
	}
	d->unresolved = el_xstrndup(s + rhs, last > rhs ? last - rhs : 0);
}

/* Does the statement at s[i] read `with read_base():` (mmengine's new style)? */
static bool is_read_base(const char *s, size_t i, size_t len)
{
	if (len - i < 5 || strncmp(s + i, "with", 4) != 0 || (s[i + 4] != ' ' && s[i + 4] != '\t'))
		return false;
	i += 4;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return len - i > 9 && strncmp(s + i, "read_base", 9) == 0 && !is_ident(s[i + 9]);
}

/* The _base_ of a Python config: only top-level statements count. */
static void python_bases(const char *s, size_t len, base_decl *d)
{
	size_t i = 0, last;

	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3; /* a UTF-8 byte order mark, which Python skips */
	while (i < len) {
		if (len - i > 6 && strncmp(s + i, "_base_", 6) == 0 && !is_ident(s[i + 6]))
			parse_assignment(s, i, len, d);
		else if (is_read_base(s, i, len))
			d->read_base = true;
		/* to the end of the line, past any ';' and what follows it */
		i = stmt_end(s, i, len, false, &last);
		if (i < len)
			i++;
	}
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

/* abs with ".", ".." and repeated slashes taken out, like os.path.normpath; malloc'd. */
static char *path_normalise(const char *abs)
{
	size_t n = strlen(abs), o = 0;
	char *out = el_xmalloc(n + 2);
	const char *s = abs;

	out[o++] = '/';
	while (*s) {
		const char *comp;
		size_t clen;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		comp = s;
		clen = strcspn(s, "/");
		s += clen;
		if (clen == 1 && comp[0] == '.')
			continue;
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
			continue;
		}
		if (o > 1)
			out[o++] = '/';
		memcpy(out + o, comp, clen);
		o += clen;
	}
	out[o] = '\0';
	return out;
}

static seen_file *find_seen(config_walk *w, const char *key)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (strcmp(w->seen[i].key, key) == 0)
			return &w->seen[i];
	return NULL;
}

static void add_seen(config_walk *w, char *key, cJSON *entry)
{
	EL_GROW(w->seen, w->nseen + 1, w->seen_cap);
	w->seen[w->nseen].key = key;
	w->seen[w->nseen++].entry = entry;
}

/* "a -> b -> a", from the first link holding key to the end of the chain. */
static char *cycle_text(const config_walk *w, size_t from)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 26); /* 1000 links of PATH_MAX fit */

	for (size_t i = from; i < w->depth; i++)
		el_buf_printf(&b, "%s -> ", w->chain[i].shown);
	el_buf_puts(&b, w->chain[from].shown);
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

		el_strvec_push_owned(&paths, path_normalise(joined));
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
		if (requested && !el_jget_bool(seen->entry, "requested", false)) {
			el_jset_bool(seen->entry, "requested", true);
			if (el_jget_str(seen->entry, "error"))
				el_probe_request_error(w->p, "'%s': %s", shown, el_jget_str(seen->entry, "error"));
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
	add_seen(w, key, entry);

	rc = el_root_read(&w->live, abs, &b, &e);
	if (rc == 0 && !el_is_text(b.data, b.len))
		rc = ENVLOCK_EPARSE;
	if (rc != 0) {
		const char *why = rc == ENVLOCK_EPARSE ? "binary data, not UTF-8 text" : read_reason(rc, e);

		el_jset_str(entry, "error", why);
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
static void record_effective(el_probe *p, cJSON *entry, const char *abs, const char *cwd)
{
	cJSON *res = NULL, *eff;

	if (!el_jget_str(entry, "text") || !el_ends_with(abs, ".py"))
		return;
	eff = cJSON_AddObjectToObject(entry, "effective");
	/* 'mmdet::...' bases are read from the packages the probed Python has, as mmengine does */
	{
		const cJSON *dirs = el_jget(el_probe_section(p, "python"), "site_packages"), *d;
		char **host = el_xcalloc((size_t)cJSON_GetArraySize(dirs) + 1, sizeof(char *));
		el_config_sites sites = { (const char *const *)host, 0 };
		char *missing = NULL;
		int rc;

		cJSON_ArrayForEach(d, dirs)
			if (cJSON_IsString(d) && d->valuestring[0] == '/')
				host[sites.n++] = el_root_host(&p->root, d->valuestring);
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
	cJSON_AddItemToObject(eff, "value", cJSON_DetachItemFromObject(res, "effective"));
	/* the files it names, as this machine has them, for the config rules (lib/cfgcheck) */
	el_cfg_files_record(p->ctx, el_jset_arr(eff, "files"), el_jget(eff, "value"), abs, cwd);
	move_notes(eff, res, "not_evaluated");
	move_notes(eff, res, "imports");
	if (p->opts->cfg_option_count) {
		cJSON *opts = cJSON_AddArrayToObject(eff, "cfg_options");

		for (size_t i = 0; i < p->opts->cfg_option_count; i++)
			cJSON_AddItemToArray(opts, cJSON_CreateString(p->opts->cfg_options[i]));
	}
	cJSON_Delete(res);
}

static void effective_of_seen(el_probe *p, cJSON *files, const char *abs, const char *cwd)
{
	char *shown = el_userpath_display(abs);

	for (cJSON *f = files->child; f; f = f->next)
		if (!strcmp(el_jget_str(f, "path") ? el_jget_str(f, "path") : "", shown) &&
		    !cJSON_GetObjectItemCaseSensitive(f, "effective")) {
			record_effective(p, f, abs, cwd);
			break;
		}
	free(shown);
}

void el_probe_configs(el_probe *p)
{
	cJSON *section = el_probe_section(p, "configs");
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
		abs = path_normalise(joined);
		w.added = 0;
		w.over_limit = false;
		{
			int before = cJSON_GetArraySize(w.files);

			visit(&w, abs, true, NULL, NULL);
			if (cJSON_GetArraySize(w.files) > before)
				record_effective(p, cJSON_GetArrayItem(w.files, before), abs, w.cwd);
			else /* reached before as a base of another config: its entry gets it */
				effective_of_seen(p, w.files, abs, w.cwd);
		}
		free(abs);
		free(joined);
	}
	for (size_t i = 0; i < w.nseen; i++)
		free(w.seen[i].key);
	free(w.seen);
	free(w.chain);
	free(w.cwd);
}
