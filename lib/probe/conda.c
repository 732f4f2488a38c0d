/*
 * The conda probe: the packages of a conda environment, from its
 * conda-meta/<package>.json records (one per installed package), and where the
 * environment sits in its install.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "probe.h"
#include "util/pool.h"
#include "util/text.h"
#include "util/xalloc.h"

typedef struct {
	cJSON *obj;		/* detached, until added to "packages"; NULL: not a record */
	el_conda_pkg pkg;	/* what obj says, handed to the later probes */
	char *file;
	char *warning;		/* why it was not used, said in order after the reads */
} conda_pkg;

static bool has_conda_meta(el_probe *p, const char *dir)
{
	char *real = NULL;
	struct stat st;
	bool yes = false;

	if (el_root_realpath_at(&p->root, dir, "conda-meta", &real, NULL) == 0)
		yes = el_root_lstat(&p->root, real, &st) == 0 && S_ISDIR(st.st_mode);
	free(real);
	return yes;
}

/* The conda env to describe, resolved: --conda-prefix, the chosen Python, CONDA_PREFIX. */
static char *conda_prefix(el_probe *p)
{
	const char *env = el_probe_getenv(p, "CONDA_PREFIX");
	const char *tries[3];
	size_t n = 0;

	if (p->opts->conda_prefix)
		tries[n++] = p->opts->conda_prefix;
	else {
		if (p->py.prefix)
			tries[n++] = p->py.prefix;
		if (env && env[0] == '/')
			tries[n++] = env;
	}
	for (size_t i = 0; i < n; i++) {
		char *real = NULL;

		if (el_root_realpath(&p->root, tries[i], &real, NULL) == 0 && has_conda_meta(p, real))
			return real;
		/* a missing prefix was reported by the python probe already */
		if (real && p->opts->conda_prefix)
			el_probe_warn(p, "'%s': the conda prefix asked for has no conda-meta: not a conda environment",
				      p->opts->conda_prefix);
		free(real);
	}
	return NULL;
}


static void copy_url(cJSON *to, const char *key, const char *val)
{
	char *clean;

	if (!val)
		return;
	clean = el_url_strip_credentials(val, true);
	el_jset_str(to, key, clean);
	free(clean);
}


/*
 * A conda record is mostly its file list ("files", "paths_data": a few
 * KB to a few MB); a lock needs ten short members. The record is
 * checked as a whole by skipping over every value (brackets, literals,
 * numbers, strings found by memchr), and only the members kept are
 * handed to cJSON, so a big environment costs a scan, not a tree.
 */
#define RECORD_DEPTH 1000	/* as cJSON's CJSON_NESTING_LIMIT */

enum {
	R_NAME, R_VERSION, R_BUILD, R_BUILD_NUMBER, R_CHANNEL, R_SCHANNEL,
	R_SUBDIR, R_URL, R_MD5, R_SHA256, RECORD_NKEYS
};

#define KEY(k) { k, sizeof(k) - 1 }
static const struct {
	const char *key;
	size_t len;
} record_keys[RECORD_NKEYS] = {
	[R_NAME] = KEY("name"), [R_VERSION] = KEY("version"), [R_BUILD] = KEY("build"),
	[R_BUILD_NUMBER] = KEY("build_number"), [R_CHANNEL] = KEY("channel"),
	[R_SCHANNEL] = KEY("schannel"), [R_SUBDIR] = KEY("subdir"), [R_URL] = KEY("url"),
	[R_MD5] = KEY("md5"), [R_SHA256] = KEY("sha256"),
};
#undef KEY

typedef struct {
	const char *end;
	const char *val[RECORD_NKEYS];	/* the value of each record_keys member */
	size_t vlen[RECORD_NKEYS];
} record_scan;

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/* p at the opening quote; past the closing one, or NULL */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end;) {
		const char *q = memchr(p, '"', (size_t)(end - p)), *b;

		if (!q)
			return NULL;
		for (b = q; b > p && b[-1] == '\\'; b--)
			;
		if ((q - b) % 2 == 0)
			return q + 1;
		p = q + 1;	/* an escaped quote */
	}
	return NULL;
}

static const char *skip_digits(const char *p, const char *end)
{
	const char *start = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > start ? p : NULL;
}

static const char *skip_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = skip_digits(p, end)))
		return NULL;
	if (p < end && *p == '.' && !(p = skip_digits(p + 1, end)))
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = skip_digits(p, end)))
			return NULL;
	}
	return p;
}

static const char *skip_value(const char *p, const char *end, int depth);

/* p at '{' or '['; past the closing bracket, or NULL */
static const char *skip_container(const char *p, const char *end, int depth)
{
	char close = *p == '{' ? '}' : ']';

	if (depth > RECORD_DEPTH)
		return NULL;
	p = skip_ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			if (p >= end || *p != '"' || !(p = skip_string(p, end)))
				return NULL;
			p = skip_ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p = skip_ws(p + 1, end);
		}
		if (!(p = skip_value(p, end, depth + 1)))
			return NULL;
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
		else if (p < end && *p == close)
			return p + 1;
		else
			return NULL;
	}
}

static const char *skip_literal(const char *p, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0 ? p + n : NULL;
}

static const char *skip_value(const char *p, const char *end, int depth)
{
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		return skip_string(p, end);
	case '{':
	case '[':
		return skip_container(p, end, depth);
	case 't':
		return skip_literal(p, end, "true");
	case 'f':
		return skip_literal(p, end, "false");
	case 'n':
		return skip_literal(p, end, "null");
	default:
		return skip_number(p, end);
	}
}

/* Check the whole text and note where the kept top-level members are. */
static const char *scan_record(record_scan *rs, const char *text, size_t len, bool *is_object)
{
	const char *p = skip_ws(text, text + len), *end = text + len;

	memset(rs, 0, sizeof(*rs));
	*is_object = p < end && *p == '{';
	if (!*is_object) {
		p = skip_value(p, end, 1);
		return p && skip_ws(p, end) == end ? p : NULL;
	}
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return skip_ws(p + 1, end) == end ? p : NULL;
	for (;;) {
		const char *key = p + 1, *val;
		int k = -1;

		if (p >= end || *p != '"' || !(p = skip_string(p, end)))
			return NULL;
		for (int i = 0; i < RECORD_NKEYS && k < 0; i++)
			if ((size_t)(p - 1 - key) == record_keys[i].len &&
			    memcmp(key, record_keys[i].key, record_keys[i].len) == 0)
				k = i;
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return NULL;
		val = p = skip_ws(p + 1, end);
		if (!(p = skip_value(p, end, 2)))
			return NULL;
		if (k >= 0 && !rs->val[k]) {	/* the first of duplicates, as cJSON */
			rs->val[k] = val;
			rs->vlen[k] = (size_t)(p - val);
		}
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
		else if (p < end && *p == '}')
			return skip_ws(p + 1, end) == end ? p : NULL;
		else
			return NULL;
	}
}

/* The kept member k as a cJSON item (the caller deletes it); NULL unless a string or number. */
static cJSON *member(const record_scan *rs, int k)
{
	const char *v = rs->val[k];

	if (!v || !(*v == '"' || *v == '-' || (*v >= '0' && *v <= '9')))
		return NULL;
	return cJSON_ParseWithLength(v, rs->vlen[k]);
}

static const char *jstr(const cJSON *item)
{
	return cJSON_IsString(item) ? item->valuestring : NULL;
}

/*
 * Read and check one record; NULL when it cannot be used, with *warning
 * set (malloc'd) when that is worth saying. Runs on the pool's threads:
 * it touches only its own arguments.
 */
static cJSON *read_record(el_probe *p, const char *meta, const char *name,
			  const char *path, el_buf *b, char **warning, el_conda_pkg *pkg)
{
	int e = 0, rc = el_root_read_at(&p->root, meta, name, b, &e);
	cJSON *items[RECORD_NKEYS], *out = NULL;
	record_scan rs;
	bool is_object;
	const char *missing = NULL;

	*warning = NULL;
	if (rc == ENVLOCK_ENOTFOUND && e != ENOTDIR)
		return NULL;	/* removed meanwhile, or a dangling link */
	if (rc == ENVLOCK_EINVAL)
		return NULL;	/* not a regular file: not a record */
	if (rc == ENVLOCK_ELIMIT && e != ELOOP) {
		*warning = el_xasprintf("'%s': larger than %zu bytes, not read", path, b->limit);
		return NULL;
	}
	if (rc) {
		*warning = el_xasprintf("'%s': %s", path, el_root_reason(rc, e));
		return NULL;
	}
	if (!scan_record(&rs, b->data, b->len, &is_object)) {
		*warning = el_xasprintf("'%s': not valid JSON", path);
		return NULL;
	}
	if (!is_object) {
		*warning = el_xasprintf("'%s': not a JSON object", path);
		return NULL;
	}
	for (int k = 0; k < RECORD_NKEYS; k++)
		items[k] = member(&rs, k);
	if (!jstr(items[R_NAME]) || !*jstr(items[R_NAME]))
		missing = "name";
	else if (!jstr(items[R_VERSION]) || !*jstr(items[R_VERSION]))
		missing = "version";
	if (missing) {
		*warning = el_xasprintf("'%s': no \"%s\" string", path, missing);
		goto done;
	}

	out = el_jnew_obj();
	pkg->name = el_xstrdup(jstr(items[R_NAME]));
	pkg->version = el_xstrdup(jstr(items[R_VERSION]));
	pkg->build = jstr(items[R_BUILD]) ? el_xstrdup(jstr(items[R_BUILD])) : NULL;
	el_jset_str(out, "name", jstr(items[R_NAME]));
	el_jset_str(out, "version", jstr(items[R_VERSION]));
	el_jset_str(out, "build", jstr(items[R_BUILD]));
	/* a whole number in range only: a hostile 1e300 must not reach the cast */
	if (cJSON_IsNumber(items[R_BUILD_NUMBER]) && items[R_BUILD_NUMBER]->valuedouble >= 0 &&
	    items[R_BUILD_NUMBER]->valuedouble < 1e15 &&
	    items[R_BUILD_NUMBER]->valuedouble == (double)(long long)items[R_BUILD_NUMBER]->valuedouble)
		el_jset_int(out, "build_number", (long long)items[R_BUILD_NUMBER]->valuedouble);
	/* real records carry a channel URL; "schannel" (its short name) stands in */
	copy_url(out, "channel", jstr(items[R_CHANNEL]) ? jstr(items[R_CHANNEL])
						      : jstr(items[R_SCHANNEL]));
	el_jset_str(out, "subdir", jstr(items[R_SUBDIR]));
	copy_url(out, "url", jstr(items[R_URL]));
	el_jset_str(out, "md5", jstr(items[R_MD5]));
	el_jset_str(out, "sha256", jstr(items[R_SHA256]));
done:
	for (int k = 0; k < RECORD_NKEYS; k++)
		cJSON_Delete(items[k]);
	return out;
}

static int pkg_cmp(const void *a, const void *b)
{
	const conda_pkg *x = a, *y = b;
	int c = strcmp(x->pkg.name, y->pkg.name);

	if (!c)
		c = strcmp(x->pkg.version, y->pkg.version);
	return c ? c : strcmp(x->file, y->file);
}

/* One batch of a conda-meta folder's records, read on the pool's threads. */
typedef struct {
	el_probe *p;
	const char *meta;
	conda_pkg *pkgs; /* one per .json name, file set */
} read_batch;

#define EL_CONDA_BATCH 64 /* records a job reads: a job per record costs more than a small one's read */

static void read_job(size_t job, void *data)
{
	read_batch *rb = data;
	el_buf b = EL_BUF_INIT(EL_LIMIT_RECORD);

	for (size_t i = job * EL_CONDA_BATCH; i < (job + 1) * EL_CONDA_BATCH && rb->pkgs[i].file; i++) {
		conda_pkg *k = &rb->pkgs[i];

		k->obj = read_record(rb->p, rb->meta, el_path_base(k->file), k->file, &b, &k->warning, &k->pkg);
	}
	el_buf_release(&b);
}

/*
 * The records of prefix/conda-meta into arr, sorted; returns how many.
 * An environment holds thousands (16 KB each in a big one): they are
 * read and checked on every core, and what each says is kept in the
 * folder's order, so the lock and the warnings do not depend on it.
 */
static int add_packages(el_probe *p, const char *prefix, cJSON *arr, bool *has_conda)
{
	char *meta = NULL, **names = NULL;
	conda_pkg *pkgs = NULL;
	size_t count = 0, n = 0, m = 0;

	*has_conda = false;
	if (el_root_realpath_at(&p->root, prefix, "conda-meta", &meta, NULL) == 0 &&
	    el_root_list(&p->root, meta, &names, &count) == 0)
		pkgs = el_xcalloc(count + 1, sizeof(*pkgs)); /* ends with a NULL file */
	for (size_t i = 0; i < count; i++)
		if (el_ends_with(names[i], ".json"))
			pkgs[m++].file = el_path_join(meta, names[i]);
	if (m) {
		read_batch rb = { p, meta, pkgs };
		size_t jobs = (m + EL_CONDA_BATCH - 1) / EL_CONDA_BATCH;

		el_pool_run(jobs, el_pool_default_threads(), read_job, &rb);
	}
	for (size_t i = 0; i < m; i++) {
		if (pkgs[i].warning)
			el_probe_warn(p, "%s", pkgs[i].warning);
		free(pkgs[i].warning);
		if (!pkgs[i].obj) {
			free(pkgs[i].file);
			continue;
		}
		if (strcmp(pkgs[i].pkg.name, "conda") == 0)
			*has_conda = true;
		pkgs[n++] = pkgs[i];
	}
	if (n)
		qsort(pkgs, n, sizeof(*pkgs), pkg_cmp);
	p->conda.pkgs = el_xcalloc(n + 1, sizeof(*p->conda.pkgs));
	for (size_t i = 0; i < n; i++) {
		if (!cJSON_AddItemToArray(arr, pkgs[i].obj))
			cJSON_Delete(pkgs[i].obj);
		p->conda.pkgs[p->conda.n++] = pkgs[i].pkg;
		free(pkgs[i].file);
	}
	free(pkgs);
	el_strv_free(names);
	free(meta);
	return (int)n;
}

/* base first, then every envs/<name> that is a conda env */
static void add_envs(el_probe *p, const char *root, cJSON *arr)
{
	char *envs = NULL, **names = NULL;
	cJSON *o = el_jpush_obj(arr);

	el_jset_str(o, "name", "base");
	el_jset_str(o, "prefix", root);
	if (el_root_realpath_at(&p->root, root, "envs", &envs, NULL) == 0 &&
	    el_root_list(&p->root, envs, &names, NULL) == 0) {
		for (char **n = names; *n; n++) {
			char *env = NULL;

			if (el_root_realpath_at(&p->root, envs, *n, &env, NULL) == 0 &&
			    has_conda_meta(p, env)) {
				o = el_jpush_obj(arr);
				el_jset_str(o, "name", *n);
				el_jset_str(o, "prefix", env);
			}
			free(env);
		}
	}
	el_strv_free(names);
	free(envs);
}

/* The directory names conda installers choose ("/opt/conda" in Docker images). */
static bool install_name(const char *base)
{
	static const char *const names[] = {
		"conda", "miniconda", "miniconda3", "anaconda", "anaconda3",
		"miniforge3", "mambaforge", NULL
	};

	for (const char *const *n = names; *n; n++)
		if (strcmp(base, *n) == 0)
			return true;
	return false;
}

void el_probe_conda(el_probe *p)
{
	cJSON *sec = el_probe_section(p, EL_SEC_CONDA), *pkgs;
	char *prefix = conda_prefix(p), *parent, *root = NULL;
	bool has_conda = false;
	int n;

	if (!prefix) {
		el_jset_str(sec, "status", "absent");
		return;
	}
	el_jset_str(sec, "status", "present");
	el_jset_str(sec, "prefix", prefix);
	p->conda.prefix = el_xstrdup(prefix);
	pkgs = el_jset_arr(sec, "packages");
	n = add_packages(p, prefix, pkgs, &has_conda);
	el_jset_int(sec, "package_count", n);

	/* <install>/envs/<name>, or the install itself (base) */
	parent = el_path_dir(prefix);
	if (strcmp(el_path_base(parent), "envs") == 0) {
		char *grand = el_path_dir(parent);

		el_jset_str(sec, "name", el_path_base(prefix));
		if (has_conda_meta(p, grand))
			root = grand;
		else
			free(grand);
	} else {
		struct stat st;
		char *condabin = el_path_join(prefix, "condabin");
		char *envs = el_path_join(prefix, "envs");

		if (has_conda || el_root_lstat(&p->root, condabin, &st) == 0 ||
		    el_root_lstat(&p->root, envs, &st) == 0 || install_name(el_path_base(prefix))) {
			el_jset_str(sec, "name", "base");
			root = el_xstrdup(prefix);
		}
		free(condabin);
		free(envs);
	}
	if (root) {
		el_jset_str(sec, "root_prefix", root);
		add_envs(p, root, el_jset_arr(sec, "envs"));
	}
	free(root);
	free(parent);
	free(prefix);
}
