/*
 * A config chain: files read (1 MiB each), bases loaded and merged as
 * mmcv 1.x's Config._file2dict does, {{_base_.x}} placeholders resolved,
 * --cfg-options parsed as DictAction does and merged with list indexes.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "config/internal.h"
#include "config/yaml.h"
#include "util/buf.h"
#include "util/error.h"
#include "lock/model.h"
#include "util/text.h"
#include "util/xalloc.h"

/* dir of path joined with rel, "." and ".." folded lexically (os.path.abspath's way) */
static char *resolve(const char *path, const char *rel)
{
	const char *slash = strrchr(path, '/');
	char *joined = rel[0] == '/' ? el_xstrdup(rel)
		       : slash ? el_xasprintf("%.*s/%s", (int)(slash - path), path, rel)
			       : el_xstrdup(rel);
	char *out = el_xmalloc(strlen(joined) + 2), *seg, *save = NULL;
	size_t n = 0;
	bool abs = joined[0] == '/';

	out[0] = '\0';
	for (seg = strtok_r(joined, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..") && n && strcmp(out + (strrchr(out, '/') ? strrchr(out, '/') - out + 1 : 0), "..")) {
			char *last = strrchr(out, '/');

			n = last ? (size_t)(last - out) : 0;
			out[n] = '\0';
			continue;
		}
		if (!strcmp(seg, "..") && abs && !n)
			continue;
		n += (size_t)sprintf(out + n, "%s%s", n || abs ? "/" : "", seg);
	}
	if (!n)
		strcpy(out, abs ? "/" : ".");
	free(joined);
	return out;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * 'mmdet::faster_rcnn/x.py' as mmengine reads it: <site>/mmdet/.mim/
 * configs/faster_rcnn/x.py of the first site folder that has the
 * package. malloc'd, or NULL with the run failed (ENVLOCK_ENOTFOUND for
 * a package that is not installed or a config it does not ship).
 */
static char *package_base(el_cfg_run *r, const char *path, int line, const char *base)
{
	const char *sep = strstr(base, "::"), *rel = sep + 2;
	char *pkg = el_xstrndup(base, (size_t)(sep - base)), *out = NULL;
	bool bad = !*pkg || !*rel || rel[0] == '/' || strstr(rel, "..") || strchr(pkg, '/') || pkg[0] == '.';

	if (bad) {
		el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: the base '%s' is no package config", path, line, base);
	} else if (!r->sites) {
		el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: the base '%s' is a package's config, and no site-packages were given to find it in",
			    path, line, base);
	} else {
		for (size_t k = 0; k < r->sites->n && !out; k++) {
			char *dir = el_xasprintf("%s/%s", r->sites->site_dirs[k], pkg);

			if (is_dir(dir)) {
				out = el_xasprintf("%s/.mim/configs/%s", dir, rel);
				if (access(out, F_OK) != 0) {
					el_cfg_fail(r, ENVLOCK_ENOTFOUND, "%s:%d: the base '%s': %s %s has no %s", path, line,
						    base, pkg, dir, out + strlen(dir) + 1);
					free(r->missing);
					r->missing = el_xstrdup(out);
					free(out);
					out = NULL;
					free(dir);
					break;
				}
			}
			free(dir);
		}
		if (!out && !r->fatal) {
			el_cfg_fail(r, ENVLOCK_ENOTFOUND, "%s:%d: the base '%s' is %s's config, and %s is not installed",
				    path, line, base, pkg, pkg);
			free(r->missing);
			r->missing = el_xstrdup(pkg);
		}
	}
	free(pkg);
	return out;
}

static int read_text(el_cfg_run *r, const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	el_buf b = EL_BUF_INIT(EL_CFG_MAX_FILE);
	char chunk[65536];
	size_t got;

	if (!f) {
		if (errno == ENOENT && !r->missing)
			r->missing = el_xstrdup(path);
		return el_cfg_fail(r, errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO, "%s: %s", path, el_strerror(errno));
	}
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (el_buf_put(&b, chunk, got)) {
			fclose(f);
			el_buf_release(&b);
			return el_cfg_fail(r, ENVLOCK_ELIMIT, "%s: larger than %u bytes", path, EL_CFG_MAX_FILE);
		}
	if (ferror(f)) {
		fclose(f);
		el_buf_release(&b);
		return el_cfg_fail(r, ENVLOCK_EIO, "%s: read failed", path);
	}
	fclose(f);
	*len = b.len;
	*text = b.data ? el_buf_detach(&b) : el_xstrdup("");
	return 0;
}

static cv *load_file(el_cfg_run *r, const char *path, const char *text, size_t len);

/* Replace {{_base_.x}} placeholders with the value at x in base. */
static void resolve_baserefs(el_cfg_run *r, const char *path, const char *key, cv **slot, const cv *base, bool lazy)
{
	cv *v = *slot;

	if (v->kind == CV_BASEREF) {
		const cv *cur = base;
		char *var = el_xstrdup(v->u.str.s), *part, *save = NULL;
		char what[300];

		for (part = strtok_r(var, ".", &save); part && cur; part = strtok_r(NULL, ".", &save))
			cur = cur->kind == CV_DICT ? cv_dict_get(cur, part) : NULL;
		if (!base && lazy) {
			/* mmengine reads a read_base() config as Python: {{_base_.x}} is a set of a set of _base_.x */
			el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: name '_base_' is not defined ({{_base_.%s}} in a read_base() config)",
				    path, v->line, v->u.str.s);
			*slot = cv_new(r, CV_NONE);
		} else if (!cur || cur->kind == CV_UNKNOWN) {
			snprintf(what, sizeof(what), "{{_base_.%s}}, %s", v->u.str.s,
				 !base ? "in a file without _base_" : !cur ? "which the bases do not define"
								      : "which is not evaluated");
			*slot = cv_unknown(r, path, v->line, what);
		} else
			*slot = cv_ref((cv *)cur);
		free(var);
		cv_free(v);
	} else if (v->kind == CV_LIST || v->kind == CV_TUPLE) {
		for (size_t i = 0; i < v->u.seq.n && !r->fatal; i++)
			resolve_baserefs(r, path, key, &v->u.seq.v[i], base, lazy);
	} else if (v->kind == CV_DICT) {
		for (size_t i = 0; i < v->u.d->n && !r->fatal; i++)
			resolve_baserefs(r, path, v->u.d->keys[i], &v->u.d->vals[i], base, lazy);
	}
}

/*
 * mmcv's and mmengine's Config._merge_a_into_b: a new value, b's copy
 * with a's keys over it; a dict over a dict merges unless it says
 * _delete_=True (which it loses, as Python pops it), anything else
 * replaces. With allow_list_keys ('--cfg-options'), a key of digits
 * edits that item of a list. NULL with r->fatal.
 */
static cv *merge_into(el_cfg_run *r, const char *file, cv *a, cv *b, bool allow_list_keys, int depth)
{
	cv *out;

	if (depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(r, ENVLOCK_ELIMIT, "%s: a value nested deeper than %d levels", file, EL_CFG_MAX_DEPTH);
		return NULL;
	}
	out = cv_shallow(r, b, b->kind);
	for (size_t i = 0; i < a->u.d->n && !r->fatal; i++) {
		const char *k = a->u.d->keys[i];
		cv *v = a->u.d->vals[i], *cur, *m;

		if (allow_list_keys && out->kind == CV_LIST && k[0] && strspn(k, "0123456789") == strlen(k)) {
			unsigned long idx = strtoul(k, NULL, 10);

			if (idx >= out->u.seq.n || v->kind != CV_DICT) {
				el_cfg_fail(r, ENVLOCK_EPARSE, "%s: index %s exceeds the length of the list", file, k);
				break;
			}
			cur = out->u.seq.v[idx];
			if (cur->kind == CV_UNKNOWN)
				continue;
			if (cur->kind != CV_DICT && cur->kind != CV_LIST) {
				el_cfg_fail(r, ENVLOCK_EPARSE, "%s: item %s is a %s, not a dict", file, k, cv_kind_name(cur->kind));
				break;
			}
			if ((m = merge_into(r, file, v, cur, allow_list_keys, depth + 1)))
				cv_seq_set(r, out, idx, m);
			continue;
		}
		if (out->kind != CV_DICT) {
			el_cfg_fail(r, ENVLOCK_EPARSE, "%s: key '%s' goes into a list", file, k);
			break;
		}
		cur = cv_dict_get(out, k);
		if (v->kind == CV_DICT && cur) {
			cv *del = cv_dict_pop(v, "_delete_");
			int t = del ? cv_truthy(del) : 0;

			if (t < 0) {
				cv_dict_set(r, out, k, cv_unknown(r, file, 0, "a _delete_ that is not evaluated"));
				cv_free(del);
				continue;
			}
			cv_free(del);
			if (!t) {
				if (cur->kind == CV_UNKNOWN) /* merging into what is not known stays unknown */
					continue;
				if (cur->kind != CV_DICT && !(allow_list_keys && cur->kind == CV_LIST)) {
					el_cfg_fail(r, ENVLOCK_EPARSE,
						    "%s: '%s' is a dict in the child config but a %s in its base "
						    "(mmcv asks for _delete_=True)", file, k, cv_kind_name(cur->kind));
					break;
				}
				if ((m = merge_into(r, file, v, cur, allow_list_keys, depth + 1)))
					cv_dict_set(r, out, k, m);
				continue;
			}
		}
		cv_dict_set(r, out, k, cv_ref(v));
	}
	if (r->fatal) {
		cv_free(out);
		return NULL;
	}
	return out;
}

int el_cfg_merge(el_cfg_run *r, const char *file, cv **b, cv *a, bool allow_list_keys)
{
	cv *m = merge_into(r, file, a, *b, allow_list_keys, 0);

	if (!m)
		return r->fatal;
	cv_free(*b);
	*b = m;
	return 0;
}

static cv *load_bases(el_cfg_run *r, const char *path, int line, const cv *bases)
{
	const cv *const *list = bases->kind == CV_STR ? &bases : (const cv *const *)bases->u.seq.v;
	size_t n = bases->kind == CV_STR ? 1 : bases->u.seq.n;
	cv *acc = cv_new(r, CV_DICT), *owner = cv_new(r, CV_DICT);
	char **files = el_xcalloc(n + 1, sizeof(char *));

	if (bases->kind != CV_STR && bases->kind != CV_LIST && bases->kind != CV_TUPLE)
		el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a _base_ that is a %s, not a str or a list", path, line,
			    cv_kind_name(bases->kind));
	for (size_t i = 0; i < n && !r->fatal; i++) {
		const cv *b = list[i];
		cv *c;
		char *text;
		size_t len;

		if (b->kind != CV_STR) {
			el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a _base_ entry that is a %s", path, line, cv_kind_name(b->kind));
			break;
		}
		if (!el_ends_with(b->u.str.s, ".py") && !el_ends_with(b->u.str.s, ".json") &&
		    !el_ends_with(b->u.str.s, ".yaml") && !el_ends_with(b->u.str.s, ".yml")) {
			el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: the base '%s' is not a .py, .json or .yaml config", path,
				    line, b->u.str.s);
			break;
		}
		if (strstr(b->u.str.s, "::")) {
			if (!(files[i] = package_base(r, path, line, b->u.str.s)))
				break;
		} else {
			files[i] = resolve(path, b->u.str.s);
		}
		if (read_text(r, files[i], &text, &len))
			break;
		c = load_file(r, files[i], text, len);
		free(text);
		if (!c)
			break;
		for (size_t k = 0; k < c->u.d->n && !r->fatal; k++) {
			const cv *o = cv_dict_get(owner, c->u.d->keys[k]);

			if (c->u.d->vals[k]->kind == CV_MODULE) /* Config drops a base's imported modules */
				continue;
			if (o) {
				el_cfg_fail(r, ENVLOCK_EPARSE, "%s: duplicate key '%s' among bases: %s and %s", path,
					    c->u.d->keys[k], files[o->u.i], files[i]);
				break;
			}
			{
				cv *idx = cv_new(r, CV_INT);

				idx->u.i = (long long)i;
				cv_dict_set(r, owner, c->u.d->keys[k], idx);
			}
			/* each base's values fresh, as mmengine's _dict_to_config_dict rebuilds them */
			cv_dict_set(r, acc, c->u.d->keys[k], cv_copy(r, c->u.d->vals[k]));
		}
		cv_free(c);
	}
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	cv_free(owner);
	if (r->fatal) {
		cv_free(acc);
		return NULL;
	}
	cv_mark_cfgdict(acc);
	return acc;
}

/*
 * `from mmdet.configs.x import *` inside read_base(): mmengine finds the
 * installed package (get_installed_path) and reads <package>/configs/
 * x.py there; here, the first of the site folders that holds it.
 */
static char *package_module(el_cfg_run *r, const char *path, int line, const char *module)
{
	const char *dot = strchr(module, '.');
	char *rel, *out = NULL, what[400];

	if (!dot || module[0] == '.' || strstr(module, "..")) {
		el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a read_base() import of '%.200s', which names no config module",
			    path, line, module);
		return NULL;
	}
	rel = el_xstrdup(module);
	for (char *c = rel; *c; c++)
		if (*c == '.')
			*c = '/';
	for (size_t k = 0; r->sites && k < r->sites->n && !out; k++) {
		char *f = el_xasprintf("%s/%s.py", r->sites->site_dirs[k], rel);

		if (access(f, F_OK) == 0)
			out = f;
		else
			free(f);
	}
	if (!out) {
		snprintf(what, sizeof(what), "a read_base() import from the package module '%.200s', %s", module,
			 r->sites ? "which the site-packages given do not hold" : "and no site-packages were given");
		el_cfg_note(r, path, line, "", what);
	}
	free(rel);
	return out;
}

static cv *load_module(el_cfg_run *r, const char *path, int line, int dots, const char *module)
{
	el_buf rel = EL_BUF_INIT(4096);
	char *file, *text;
	size_t len;
	cv *v, *fresh;

	if (!dots) {
		if (!(file = package_module(r, path, line, module)))
			return NULL;
	} else {
		el_buf_adds(&rel, "./");
		for (int i = 1; i < dots; i++)
			el_buf_adds(&rel, "../");
		for (const char *m = module; *m; m++)
			el_buf_addc(&rel, *m == '.' ? '/' : *m);
		if (el_buf_puts(&rel, ".py")) {
			el_buf_release(&rel);
			el_cfg_fail(r, ENVLOCK_ELIMIT, "%s:%d: a module name too long", path, line);
			return NULL;
		}
		file = resolve(path, el_buf_cstr(&rel));
		el_buf_release(&rel);
	}
	if (read_text(r, file, &text, &len)) {
		free(file);
		return NULL;
	}
	v = load_file(r, file, text, len);
	free(text);
	free(file);
	if (!v)
		return NULL;
	/* fresh ConfigDicts, as mmengine's _dict_to_config_dict_lazy builds them */
	fresh = cv_copy(r, v);
	cv_free(v);
	if (fresh)
		cv_mark_cfgdict(fresh);
	return fresh;
}

/* A JSON value as a config value (an integer past 2^53 read from its digits). */
static cv *from_json(el_cfg_run *r, const cJSON *j, int depth)
{
	cv *v;

	if (depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(r, ENVLOCK_ELIMIT, "a value nested deeper than %d levels", EL_CFG_MAX_DEPTH);
		return NULL;
	}
	if (cJSON_IsObject(j)) {
		v = cv_new(r, CV_DICT);
		for (const cJSON *c = j->child; c && !r->fatal; c = c->next) {
			cv *x = from_json(r, c, depth + 1);

			if (x)
				cv_dict_set(r, v, c->string, x);
		}
	} else if (cJSON_IsArray(j)) {
		v = cv_new(r, CV_LIST);
		for (const cJSON *c = j->child; c && !r->fatal; c = c->next) {
			cv *x = from_json(r, c, depth + 1);

			if (x)
				cv_seq_push(r, v, x);
		}
	} else if (cJSON_IsString(j)) {
		v = cv_str(r, j->valuestring, strlen(j->valuestring));
	} else if (cJSON_IsBool(j)) {
		v = cv_bool(r, cJSON_IsTrue(j));
	} else if (cJSON_IsNull(j)) {
		v = cv_new(r, CV_NONE);
	} else if (el_jraw_int(j)) {
		v = cv_int(r, el_jint(j, 0));
	} else if (j->valuedouble == floor(j->valuedouble) && fabs(j->valuedouble) < 9007199254740992.0) {
		v = cv_int(r, (long long)j->valuedouble);
	} else {
		v = cv_float(r, j->valuedouble);
	}
	if (r->fatal) {
		cv_free(v);
		return NULL;
	}
	return v;
}

/*
 * A .json or .yaml config (mmengine loads both with their own parsers):
 * its mapping, its own _base_ merged under it as a .py file's would be.
 */
static cv *load_data(el_cfg_run *r, const char *path, const char *text, size_t len)
{
	cJSON *doc = NULL;
	cv *v, *bases_v, *base = NULL;

	if (el_ends_with(path, ".json")) {
		doc = cJSON_ParseWithLength(text, len);
		if (!doc || !cJSON_IsObject(doc)) {
			cJSON_Delete(doc);
			el_cfg_fail(r, ENVLOCK_EPARSE, "%s: not a JSON object", path);
			return NULL;
		}
		el_json_exact_ints(doc, text, len);
	} else {
		char msg[600];
		int rc = el_cfg_yaml_parse(path, text, len, &doc, msg, sizeof(msg));

		if (rc) {
			el_cfg_fail(r, rc, "%s", msg);
			return NULL;
		}
	}
	v = from_json(r, doc, 0);
	cJSON_Delete(doc);
	if (!v)
		return NULL;
	if ((bases_v = cv_dict_pop(v, "_base_"))) {
		r->stack[r->stack_n++] = path;
		base = load_bases(r, path, 0, bases_v);
		r->stack_n--;
		cv_free(bases_v);
		if (!base || el_cfg_merge(r, path, &base, v, false)) {
			cv_free(base);
			cv_free(v);
			return NULL;
		}
		cv_free(v);
		v = base;
	}
	cv_free(cv_dict_pop(v, "_deprecation_"));
	return v;
}

/* A file's effective dict: its names (less _base_, __names, modules) merged into its bases. */
static cv *load_file(el_cfg_run *r, const char *path, const char *text, size_t len)
{
	el_cfg_file f;
	cv *child, *result;

	for (int i = 0; i < r->stack_n; i++)
		if (!strcmp(r->stack[i], path)) {
			el_cfg_fail(r, ENVLOCK_EPARSE, "%s: a _base_ cycle: it is its own base", path);
			return NULL;
		}
	if (r->stack_n >= EL_CFG_MAX_FILES || ++r->files > EL_CFG_MAX_FILES) {
		el_cfg_fail(r, ENVLOCK_ELIMIT, "%s: more than %d files in the chain", path, EL_CFG_MAX_FILES);
		return NULL;
	}
	if (el_ends_with(path, ".json") || el_ends_with(path, ".yaml") || el_ends_with(path, ".yml"))
		return load_data(r, path, text, len);
	r->stack[r->stack_n++] = path;
	el_cfg_eval(r, path, text, len, &f);
	r->stack_n--;
	if (r->fatal) {
		el_cfg_file_release(&f);
		return NULL;
	}
	child = cv_new(r, CV_DICT);
	for (size_t i = 0; i < f.names->u.d->n && !r->fatal; i++) {
		const char *k = f.names->u.d->keys[i];
		cv *v = f.names->u.d->vals[i];

		/* mmengine drops _deprecation_ (it only warns with it) */
		if (!strncmp(k, "__", 2) || !strcmp(k, "_base_") || !strcmp(k, "_deprecation_"))
			continue;
		/* mmcv's _substitute_base_vars deep-copies each value: two names for one dict part there */
		v = v->kind == CV_DICT || v->kind == CV_LIST || v->kind == CV_TUPLE ? cv_copy(r, v) : cv_ref(v);
		if (!v)
			break;
		resolve_baserefs(r, path, k, &v, f.base, f.lazy);
		cv_dict_set(r, child, k, v);
	}
	if (f.base && !r->fatal) {
		el_cfg_merge(r, path, &f.base, child, false);
		cv_free(child);
		result = f.base;
		f.base = NULL;
	} else
		result = child;
	el_cfg_file_release(&f);
	if (r->fatal) {
		cv_free(result);
		return NULL;
	}
	return result;
}

/* DictAction._parse_int_float_bool */
static cv *option_scalar(el_cfg_run *r, const char *s)
{
	char buf[256], *end;
	size_t n = 0;
	bool digits_only = *s != '\0', underscores_ok = true;
	cv *v;

	for (const char *c = s; *c; c++) {
		if (*c == '_' && (c == s || !isdigit((unsigned char)c[-1]) || !isdigit((unsigned char)c[1])))
			underscores_ok = false;
		if (*c != '_' && n + 1 < sizeof(buf))
			buf[n++] = *c;
	}
	buf[n] = '\0';
	if (underscores_ok && n && n < sizeof(buf) - 1) {
		const char *d = buf + (buf[0] == '+' || buf[0] == '-');

		digits_only = *d && strspn(d, "0123456789") == strlen(d);
		if (digits_only) {
			errno = 0;
			long long i = strtoll(buf, &end, 10);

			if (!errno) {
				v = cv_new(r, CV_INT);
				v->u.i = i;
				return v;
			}
			/* int() of more digits than 64 bits hold: kept exact, as its digits */
			{
				const char *digits = d;

				while (digits[0] == '0' && digits[1])
					digits++;
				v = cv_new(r, CV_BIGINT);
				v->u.str.s = el_xasprintf("%s%s", buf[0] == '-' ? "-" : "", digits);
				v->u.str.n = strlen(v->u.str.s);
				v->file = el_xstrdup("--cfg-options");
				return v;
			}
		}
		if (strspn(d, "0123456789.eE+-") == strlen(d) && strpbrk(d, "0123456789")) {
			double f = strtod(buf, &end);

			if (!*end && isfinite(f)) {
				v = cv_new(r, CV_FLOAT);
				v->u.f = f;
				return v;
			}
		}
	}
	if (!strcasecmp(s, "true") || !strcasecmp(s, "false")) {
		v = cv_new(r, CV_BOOL);
		v->u.b = tolower((unsigned char)s[0]) == 't';
		return v;
	}
	if (!strcmp(s, "None"))
		return cv_new(r, CV_NONE);
	{
		const char *d = s + (s[0] == '+' || s[0] == '-');

		if (!strcasecmp(d, "inf") || !strcasecmp(d, "infinity") || !strcasecmp(d, "nan"))
			return cv_unknown(r, "--cfg-options", 0, "a float that is not finite (no JSON for it)");
	}
	return cv_str(r, s, strlen(s));
}

static bool balanced(const char *s, size_t n)
{
	long a = 0, b = 0;

	for (size_t i = 0; i < n; i++)
		a += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0, b += s[i] == '[' ? 1 : s[i] == ']' ? -1 : 0;
	return !a && !b;
}

/* DictAction._parse_iterable, on s[0..n) */
static cv *option_value(el_cfg_run *r, const char *opt, const char *s, size_t n, int depth)
{
	char *val = el_xmalloc(n + 1), *inner;
	size_t m = 0, start = 0, end;
	bool tuple = false;
	cv *v = NULL;

	if (depth > EL_CFG_MAX_DEPTH) {
		free(val);
		el_cfg_fail(r, ENVLOCK_ELIMIT, "--cfg-options '%.100s': nested deeper than %d", opt, EL_CFG_MAX_DEPTH);
		return NULL;
	}
	while (start < n && (s[start] == '\'' || s[start] == '"'))
		start++;
	end = n;
	while (end > start && (s[end - 1] == '\'' || s[end - 1] == '"'))
		end--;
	for (size_t i = start; i < end; i++)
		if (s[i] != ' ')
			val[m++] = s[i];
	val[m] = '\0';
	inner = val;
	if (m >= 2 && val[0] == '(' && val[m - 1] == ')') {
		tuple = true;
		inner = val + 1;
		val[--m] = '\0';
		m--;
	} else if (m >= 2 && val[0] == '[' && val[m - 1] == ']') {
		inner = val + 1;
		val[--m] = '\0';
		m--;
	} else if (!strchr(val, ',')) {
		v = option_scalar(r, val);
		free(val);
		return v;
	}
	if (!balanced(inner, m)) {
		free(val);
		el_cfg_fail(r, ENVLOCK_EINVAL, "--cfg-options '%.100s': imbalanced brackets", opt);
		return NULL;
	}
	v = cv_new(r, tuple ? CV_TUPLE : CV_LIST);
	while (m > 0 && !r->fatal) {
		size_t comma = m;
		cv *item;

		for (size_t i = 0; i < m; i++)
			if (inner[i] == ',' && balanced(inner, i)) {
				comma = i;
				break;
			}
		if (!(item = option_value(r, opt, inner, comma, depth + 1)))
			break;
		cv_seq_push(r, v, item);
		if (comma >= m)
			break;
		inner += comma + 1;
		m -= comma + 1;
	}
	free(val);
	if (r->fatal) {
		cv_free(v);
		return NULL;
	}
	return v;
}

/* the options as merge_from_dict builds them: a.b.c=v as {a: {b: {c: v}}} */
static cv *options_dict(el_cfg_run *r, const char *const *options, size_t n)
{
	cv *top = cv_new(r, CV_DICT);

	for (size_t i = 0; i < n && !r->fatal; i++) {
		const char *eq = strchr(options[i], '=');
		char *key, *part, *save = NULL, *next;
		cv *d = top, *v;

		if (!eq || eq == options[i]) {
			el_cfg_fail(r, ENVLOCK_EINVAL, "--cfg-options '%.100s': expected key=value", options[i]);
			break;
		}
		if (!(v = option_value(r, options[i], eq + 1, strlen(eq + 1), 0)))
			break;
		key = el_xstrndup(options[i], (size_t)(eq - options[i]));
		part = strtok_r(key, ".", &save);
		while (part && (next = strtok_r(NULL, ".", &save))) {
			cv *sub = cv_dict_get(d, part);

			if (!sub) {
				cv_dict_set(r, d, part, cv_new(r, CV_DICT));
				sub = cv_dict_get(d, part);
			} else if (sub->kind != CV_DICT) {
				el_cfg_fail(r, ENVLOCK_EINVAL, "--cfg-options '%.100s': '%s' is set to a value already", options[i], part);
				break;
			}
			d = sub;
			part = next;
		}
		if (!r->fatal && part)
			cv_dict_set(r, d, part, v);
		else
			cv_free(v);
		free(key);
	}
	return top;
}

static void run_init(el_cfg_run *r, envlock_ctx *ctx)
{
	memset(r, 0, sizeof(*r));
	r->ctx = ctx;
	r->load_bases = load_bases;
	r->load_module = load_module;
	r->notes = cJSON_CreateArray();
	r->imports = cJSON_CreateArray();
}

static int run_finish(cJSON **out, el_cfg_run *r, cv *effective, const char *path)
{
	cJSON *doc;

	*out = NULL;
	if (r->fatal || !effective) {
		cv_free(effective);
		cJSON_Delete(r->notes);
		cJSON_Delete(r->imports);
		return r->fatal ? r->fatal : ENVLOCK_ERROR;
	}
	/* Config() refuses a config that defines one of its own attribute names */
	{
		static const char *const reserved[] = { "filename", "text", "pretty_text", "env_variables", NULL };

		for (int i = 0; effective->kind == CV_DICT && reserved[i]; i++)
			if (cv_dict_find(effective, reserved[i]) >= 0) {
				el_cfg_fail(r, ENVLOCK_EPARSE, "%s: '%s' is reserved for config file (Config refuses it)",
					    path, reserved[i]);
				break;
			}
	}
	doc = r->fatal ? NULL : cJSON_CreateObject();
	if (doc) {
		cJSON *value = cv_emit(r, effective, "", true);

		cJSON_AddItemToObject(doc, "effective", value ? value : cJSON_CreateObject());
	}
	if (r->fatal) {
		cJSON_Delete(doc);
		cv_free(effective);
		cJSON_Delete(r->notes);
		cJSON_Delete(r->imports);
		return r->fatal;
	}
	cJSON_AddItemToObject(doc, "not_evaluated", r->notes);
	cJSON_AddItemToObject(doc, "imports", r->imports);
	cv_free(effective);
	*out = doc;
	return 0;
}

static int effective_text(cJSON **out, envlock_ctx *ctx, const char *path, const char *text, size_t len,
			  const char *const *options, size_t n_options, const el_config_sites *sites, char **missing)
{
	el_cfg_run r;
	cv *v = NULL;
	int rc;

	run_init(&r, ctx);
	r.sites = sites;
	if (len > EL_CFG_MAX_FILE)
		el_cfg_fail(&r, ENVLOCK_ELIMIT, "%s: larger than %u bytes", path, EL_CFG_MAX_FILE);
	else
		v = load_file(&r, path, text, len);
	if (v && n_options) {
		cv *opts = options_dict(&r, options, n_options);

		if (!r.fatal)
			el_cfg_merge(&r, "--cfg-options", &v, opts, true);
		cv_free(opts);
	}
	rc = run_finish(out, &r, v, path);
	free(r.last_key);
	free(r.last_what);
	if (missing && rc == ENVLOCK_ENOTFOUND) {
		*missing = r.missing;
		r.missing = NULL;
	}
	free(r.missing);
	return rc;
}

int el_config_effective_text(cJSON **out, envlock_ctx *ctx, const char *path, const char *text, size_t len,
			     const char *const *options, size_t n_options)
{
	return effective_text(out, ctx, path, text, len, options, n_options, NULL, NULL);
}

int el_config_effective(cJSON **out, envlock_ctx *ctx, const char *path, const char *const *options, size_t n_options)
{
	return el_config_effective_in(out, ctx, path, options, n_options, NULL, NULL);
}

int el_config_effective_in(cJSON **out, envlock_ctx *ctx, const char *path, const char *const *options,
			   size_t n_options, const el_config_sites *sites, char **missing)
{
	el_cfg_run r;
	char *text, *norm;
	size_t len;
	int err;

	run_init(&r, ctx);
	norm = el_xstrdup(path);
	if ((err = read_text(&r, norm, &text, &len))) {
		if (missing && err == ENVLOCK_ENOTFOUND) {
			*missing = r.missing;
			r.missing = NULL;
		}
		free(r.missing);
		free(norm);
		*out = NULL;
		cJSON_Delete(r.notes);
		cJSON_Delete(r.imports);
		return err;
	}
	cJSON_Delete(r.notes);
	cJSON_Delete(r.imports);
	err = effective_text(out, ctx, norm, text, len, options, n_options, sites, missing);
	free(text);
	free(norm);
	return err;
}

int el_config_parse_options(cJSON **out, envlock_ctx *ctx, const char *const *options, size_t n_options)
{
	el_cfg_run r;
	int rc;

	run_init(&r, ctx);
	rc = run_finish(out, &r, options_dict(&r, options, n_options), "--cfg-options");
	free(r.last_key);
	free(r.last_what);
	return rc;
}
