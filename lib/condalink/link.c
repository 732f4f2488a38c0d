/*
 * el_clink_create: the conda environment of a list of package archives,
 * made the way conda's link step makes it (see condalink.h for the
 * sources), in four passes:
 *   1. unpack every archive into the package cache (a thread per core),
 *      its digests checked first where the caller has not;
 *   2. read each package's info/ and check all of it: paths, links,
 *      placeholders against the new prefix;
 *   3. link into the staging prefix: hard links from the cache where the
 *      file system allows them, else copies; links as links; no_link
 *      files and files with a placeholder as new files; noarch python's
 *      entry points; a conda-meta record per package and the history;
 *   4. rename the staging prefix into place and compile noarch python's
 *      .py files with the environment's python, now that paths are final.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "condalink/internal.h"
#include "lock/model.h"
#include "lock/untrusted.h"
#include "util/atomic.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/interrupt.h"
#include "util/pool.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

typedef struct {
	envlock_ctx *ctx;
	const el_clink_opts *o;
	el_clink_result *res;
	cl_pkg *pkgs;
	size_t n;
	char *stage;          /* host path of the staging folder (real) */
	char *stage_prefix;   /* stage/prefix: the environment until it is renamed */
	char *xy;             /* the environment's python X.Y, when it has one */
	char *last_dir;       /* the folder last made or checked in the staging prefix */
	el_strvec pys;        /* noarch python .py files to compile (paths in the environment) */
} cl_run;

/* "'ARCHIVE': why" on ctx. */
static int fail(cl_run *r, const cl_pkg *p, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(cl_run *r, const cl_pkg *p, int code, const char *fmt, ...)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a message joined from strings in memory, escaped for the terminal");
	char *why;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	why = el_xvasprintf(fmt, ap);
	va_end(ap);
	el_term_text(&b, why);
	rc = p ? el_error_set(r->ctx, code, "'%s': %s", p->in->archive, el_buf_cstr(&b))
	       : el_error_set(r->ctx, code, "%s", el_buf_cstr(&b));
	el_buf_release(&b);
	free(why);
	return rc;
}

/* A file of the package cache (no link followed) into b, capped by b's limit; -1 with errno. */
static int read_cached(const char *path, el_buf *b)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char chunk[65536];
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (el_buf_put(b, chunk, (size_t)n) != 0) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
	close(fd);
	return n < 0 ? -1 : 0;
}

/* Size, md5 and sha256 of an archive the caller has not checked. */
static int hash_archive(cl_pkg *p)
{
	int fd = open(p->in->archive, O_RDONLY | O_CLOEXEC);
	el_sha256 *s;
	el_md5 *m;
	unsigned char *buf;
	ssize_t n;

	if (fd < 0)
		return -1;
	buf = el_xmalloc_io(1u << 20);
	s = el_sha256_begin();
	m = el_md5_begin();
	while ((n = read(fd, buf, 1u << 20)) > 0) {
		el_sha256_update(s, buf, (size_t)n);
		el_md5_update(m, buf, (size_t)n);
		p->size += (uint64_t)n;
	}
	el_free_io(buf);
	close(fd);
	if (n < 0) {
		el_sha256_abort(s);
		el_md5_abort(m);
		return -1;
	}
	el_sha256_end(s, p->sha256);
	el_md5_end(m, p->md5);
	p->hashed = true;
	return 0;
}

static void unpack_job(size_t i, void *data)
{
	cl_run *r = data;
	cl_pkg *p = &r->pkgs[i];

	if (el_interrupted()) {
		p->err = el_xstrdup("interrupted");
		return;
	}
	if (!p->in->verified) {
		if (hash_archive(p) != 0) {
			p->err = el_xasprintf("%s", el_strerror(errno));
			return;
		}
		if (p->in->sha256 && strcmp(p->in->sha256, p->sha256) != 0) {
			p->err = el_xasprintf("sha256 %s, the lock has %s", p->sha256, p->in->sha256);
			return;
		}
		if (p->in->md5 && strcmp(p->in->md5, p->md5) != 0) {
			p->err = el_xasprintf("md5 %s, the lock has %s", p->md5, p->in->md5);
			return;
		}
	}
	el_clink_unpack(p);
}

static cl_path *add_path(cl_pkg *p, const char *path)
{
	cl_path *x;

	EL_GROW(p->paths, p->npaths + 1, p->cap);
	x = &p->paths[p->npaths++];
	memset(x, 0, sizeof(*x));
	x->path = el_xstrdup(path);
	x->size = -1;
	return x;
}

static cl_path *find_path(cl_pkg *p, const char *path)
{
	for (size_t i = p->npaths; i-- > 0;)
		if (strcmp(p->paths[i].path, path) == 0)
			return &p->paths[i];
	return NULL;
}

/* A file of info/ (read as it streamed by, capped), parsed as JSON; NULL with *missing when it is not there. */
static cJSON *info_json(cl_run *r, cl_pkg *p, int k, bool *missing, int *rc)
{
	const el_buf *b = &p->info[k];
	cJSON *doc = NULL;

	*missing = !p->has_info[k];
	*rc = 0;
	if (*missing)
		return NULL;
	if (!(doc = cJSON_ParseWithLength(b->data ? b->data : "", b->len)) || !cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		doc = NULL;
		*rc = fail(r, p, ENVLOCK_EPARSE, "%s: not a JSON object", el_clink_info_names[k]);
	}
	return doc;
}

/* info/paths.json (paths_version 1), the format of every package since conda-build 2. */
static int read_paths_json(cl_run *r, cl_pkg *p, const cJSON *doc)
{
	const cJSON *arr = el_jget(doc, "paths"), *el;
	int i;

	if (el_jget_int(doc, "paths_version", -1) != 1)
		return fail(r, p, ENVLOCK_EVERSION, "info/paths.json: paths_version %lld: this envlock reads version 1",
			    el_jget_int(doc, "paths_version", -1));
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > EL_CLINK_FILES_MAX)
		return fail(r, p, ENVLOCK_EPARSE, "info/paths.json: paths: not a list of at most %u", EL_CLINK_FILES_MAX);
	EL_EACH(arr, i, el) {
		const char *path = el_jget_str(el, "_path"), *type = el_jget_str(el, "path_type");
		const char *ph = el_jget_str(el, "prefix_placeholder"), *mode = el_jget_str(el, "file_mode");
		const char *sha = el_jget_str(el, "sha256");
		cl_path *x;

		if (!path)
			return fail(r, p, ENVLOCK_EPARSE, "info/paths.json: paths[%d]: no _path", i);
		x = add_path(p, path);
		if (type && strcmp(type, "softlink") == 0)
			x->kind = CL_SOFTLINK;
		else if (type && strcmp(type, "hardlink") != 0)
			return fail(r, p, ENVLOCK_EPARSE, "info/paths.json: '%s': path_type '%s' is neither hardlink nor softlink",
				    path, type);
		if (ph) {
			x->placeholder = el_xstrdup(ph);
			if (mode && strcmp(mode, "binary") == 0)
				x->binary = true;
			else if (mode && strcmp(mode, "text") != 0)
				return fail(r, p, ENVLOCK_EPARSE, "info/paths.json: '%s': file_mode '%s' is neither text nor binary",
					    path, mode);
		}
		x->no_link = el_jget_bool(el, "no_link", false);
		if (sha && !el_bad_sha256(sha))
			x->sha256 = el_xstrdup(sha);
		x->size = el_jget_int(el, "size_in_bytes", -1);
	}
	return 0;
}

/* A line of info/has_prefix: "PLACEHOLDER MODE PATH" (each may be quoted) or "PATH" alone. */
static int has_prefix_line(cl_run *r, cl_pkg *p, const char *line, size_t len)
{
	char *part[3] = { NULL, NULL, NULL };
	size_t np = 0, i = 0;
	int rc = 0;

	while (i < len && np < 4) {
		char q = 0;
		size_t start;

		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		if (line[i] == '"' || line[i] == '\'')
			q = line[i++];
		start = i;
		while (i < len && (q ? line[i] != q : line[i] != ' '))
			i++;
		if (np < 3)
			part[np] = el_xstrndup(line + start, i - start);
		np++;
		i += q && i < len;
	}
	if (np == 1 || np == 3) {
		const char *path = np == 1 ? part[0] : part[2];
		cl_path *x = find_path(p, path);

		if (!x)
			rc = fail(r, p, ENVLOCK_EPARSE, "info/has_prefix: '%s' is not in info/files", path);
		else {
			free(x->placeholder);
			x->placeholder = el_xstrdup(np == 1 ? EL_CLINK_PLACEHOLDER : part[0]);
			x->binary = np == 3 && strcmp(part[1], "binary") == 0;
			if (np == 3 && !x->binary && strcmp(part[1], "text") != 0)
				rc = fail(r, p, ENVLOCK_EPARSE, "info/has_prefix: '%s': mode '%s' is neither text nor binary",
					  path, part[1]);
		}
	} else if (np) {
		rc = fail(r, p, ENVLOCK_EPARSE, "info/has_prefix: a line of %zu fields (1 or 3)", np);
	}
	for (i = 0; i < 3; i++)
		free(part[i]);
	return rc;
}

/* One path per line of an info/ text file: each handed to fn. */
static int info_lines(cl_run *r, cl_pkg *p, int k, bool *missing,
		      int (*fn)(cl_run *r, cl_pkg *p, const char *line, size_t len))
{
	const el_buf *b = &p->info[k];
	const char *pos = b->data ? b->data : "", *line;
	size_t len;
	int rc = 0;

	*missing = !p->has_info[k];
	while (rc == 0 && !*missing && el_next_line(&pos, (b->data ? b->data : "") + b->len, &line, &len)) {
		el_trim(&line, &len);
		if (len && line[0] != '#')
			rc = fn(r, p, line, len);
	}
	return rc;
}

static int files_line(cl_run *r, cl_pkg *p, const char *line, size_t len)
{
	char *path = el_xstrndup(line, len);

	(void)r;
	if (p->npaths >= EL_CLINK_FILES_MAX) {
		free(path);
		return fail(r, p, ENVLOCK_ELIMIT, "info/files: more than %u paths", EL_CLINK_FILES_MAX);
	}
	add_path(p, path);
	free(path);
	return 0;
}

static int no_link_line(cl_run *r, cl_pkg *p, const char *line, size_t len)
{
	char *path = el_xstrndup(line, len);
	cl_path *x = find_path(p, path);

	(void)r;
	if (x)
		x->no_link = true;
	free(path);
	return 0;
}

/* info/link.json's noarch python entry points: "name = module:func". */
static int read_link_json(cl_run *r, cl_pkg *p)
{
	const cJSON *noarch, *eps, *el;
	bool missing;
	int rc, i;
	cJSON *doc = info_json(r, p, CL_INFO_LINK, &missing, &rc);

	if (!doc)
		return rc;
	noarch = el_jget(doc, "noarch");
	eps = el_jget(noarch, "entry_points");
	if (cJSON_IsObject(noarch) && el_jget_str(noarch, "type") && strcmp(el_jget_str(noarch, "type"), "python") == 0)
		p->noarch_python = true;
	EL_EACH(eps, i, el) {
		const char *s = cJSON_GetStringValue(el);

		if (!s || strlen(s) > 1024) {
			rc = fail(r, p, ENVLOCK_EPARSE, "info/link.json: entry_points[%d]: not a string of at most 1024 bytes", i);
			break;
		}
		el_strvec_push(&p->entry_points, s);
	}
	cJSON_Delete(doc);
	return rc;
}

/* name, module and function of "name = module:func" (conda/common/path.py parse_entry_point_def), or false. */
static bool entry_point(const char *def, char **name, char **module, char **func)
{
	const char *eq = strchr(def, '='), *colon;
	const char *s, *e;

	if (!eq || !(colon = strchr(eq, ':')))
		return false;
	for (s = def; *s == ' '; s++)
		;
	for (e = eq; e > s && e[-1] == ' '; e--)
		;
	*name = el_xstrndup(s, (size_t)(e - s));
	for (s = eq + 1; *s == ' '; s++)
		;
	for (e = colon; e > s && e[-1] == ' '; e--)
		;
	*module = el_xstrndup(s, (size_t)(e - s));
	for (s = colon + 1; *s == ' '; s++)
		;
	*func = el_xstrdup(s);
	for (e = *func + strlen(*func); e > *func && e[-1] == ' ';)
		*(char *)--e = '\0';
	for (const char *c = *name; *c; c++)
		if (*c == '/' || *c < ' ')
			return false;
	for (const char *c = *module; *c; c++)
		if (!(*c == '.' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return false;
	for (const char *c = *func; *c; c++)
		if (!(*c == '.' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return false;
	return **name && **module && **func;
}

/* Pass 2 for one package: its info/, every path checked. */
static int read_package(cl_run *r, cl_pkg *p)
{
	cJSON *doc;
	bool missing;
	int rc;
	const char *noarch;

	p->index = info_json(r, p, CL_INFO_INDEX, &missing, &rc);
	if (rc)
		return rc;
	if (missing)
		return fail(r, p, ENVLOCK_EPARSE, "no info/index.json: not a conda package");
	p->name = el_jget_str(p->index, "name");
	p->version = el_jget_str(p->index, "version");
	p->build = el_jget_str(p->index, "build");
	if (!p->name || el_bad_name(p->name) || !p->version || el_bad_version(p->version) || !p->build ||
	    el_bad_version(p->build))
		return fail(r, p, ENVLOCK_EPARSE, "info/index.json: no valid name, version and build");
	noarch = el_jget_str(p->index, "noarch");
	p->noarch_python = noarch && strcmp(noarch, "python") == 0;
	doc = info_json(r, p, CL_INFO_PATHS, &missing, &rc);
	if (rc)
		return rc;
	if (doc) {
		rc = read_paths_json(r, p, doc);
		cJSON_Delete(doc);
		if (rc)
			return rc;
	} else {
		/* before paths.json: info/files, info/has_prefix, info/no_link (conda/gateways/disk/read.py) */
		if ((rc = info_lines(r, p, CL_INFO_FILES, &missing, files_line)) != 0)
			return rc;
		if (missing)
			return fail(r, p, ENVLOCK_EPARSE, "neither info/paths.json nor info/files: not a conda package");
		if ((rc = info_lines(r, p, CL_INFO_HAS_PREFIX, &missing, has_prefix_line)) != 0 ||
		    (rc = info_lines(r, p, CL_INFO_NO_LINK, &missing, no_link_line)) != 0)
			return rc;
	}
	return read_link_json(r, p);
}

/* Pass 2 again, now that the environment's python is known: where each path goes, and is it safe. */
static int check_package(cl_run *r, cl_pkg *p)
{
	size_t pl = strlen(r->o->prefix);

	if (p->noarch_python && !r->xy)
		return fail(r, p, ENVLOCK_EINVAL, "a noarch python package, and no python package among the environment's");
	for (size_t i = 0; i < p->npaths; i++) {
		cl_path *x = &p->paths[i];
		const cl_entry *e;
		const char *why;

		if ((why = el_bad_rel_path(x->path)) != NULL || strncmp(x->path, "info/", 5) == 0 ||
		    strcmp(x->path, "info") == 0)
			return fail(r, p, ENVLOCK_EINVAL, "info/paths.json: path '%s': %s", x->path,
				    why ? why : "info/ is the package's, not the environment's");
		x->dest = p->noarch_python ? el_clink_noarch_path(x->path, r->xy) : el_xstrdup(x->path);
		if (strncmp(x->dest, "conda-meta/", 11) == 0)
			return fail(r, p, ENVLOCK_EINVAL, "path '%s': conda-meta/ is the environment's records", x->path);
		if (!(e = el_clink_entry(p, x->path)))
			return fail(r, p, ENVLOCK_EPARSE, "path '%s' is listed in info/ and not in the archive", x->path);
		x->ent = e;
		if (e->target) {
			x->kind = CL_SOFTLINK;
			if (!el_clink_link_inside(x->dest, e->target, r->o->prefix))
				return fail(r, p, ENVLOCK_EINVAL, "path '%s': a link to '%s', outside the environment", x->path, e->target);
		} else if (x->kind == CL_SOFTLINK) {
			return fail(r, p, ENVLOCK_EPARSE, "path '%s': listed as a link, a file in the archive", x->path);
		}
		if (x->placeholder && x->kind != CL_SOFTLINK) {
			size_t phl = strlen(x->placeholder);

			if (phl == 0 || phl > EL_CLINK_PLACEHOLDER_MAX || x->placeholder[0] != '/')
				return fail(r, p, ENVLOCK_ELIMIT, "path '%s': prefix placeholder of %zu bytes (an absolute path of at most %u)",
					    x->path, phl, EL_CLINK_PLACEHOLDER_MAX);
			if (x->binary && pl > phl)
				return fail(r, p, ENVLOCK_EINVAL,
					    "path '%s': the prefix '%s' is %zu bytes, longer than the %zu of its binary placeholder: choose a shorter prefix",
					    x->path, r->o->prefix, pl, phl);
		}
		if (p->noarch_python && el_ends_with(x->dest, ".py") && el_starts_with(x->dest, "lib/python"))
			el_strvec_push(&r->pys, x->dest);
	}
	for (size_t i = 0; i < p->entry_points.n; i++) {
		char *name = NULL, *module = NULL, *func = NULL;
		bool ok = entry_point(p->entry_points.v[i], &name, &module, &func);

		free(module);
		free(func);
		if (!ok) {
			free(name);
			return fail(r, p, ENVLOCK_EPARSE, "info/link.json: entry point '%s': not NAME = MODULE:FUNCTION",
				    p->entry_points.v[i]);
		}
		free(name);
	}
	return 0;
}

/*
 * A link an earlier package made (lib64 -> lib) that leads to a folder in
 * the staging prefix, wherever its chain goes on the way: a path through
 * it stays in the environment, as conda writes through such links.
 */
static bool link_to_own_dir(cl_run *r, const char *host, const struct stat *lst)
{
	size_t sl = strlen(r->stage_prefix);
	char *real;
	bool inside;
	struct stat st;

	if (!S_ISLNK(lst->st_mode) || !(real = realpath(host, NULL)))
		return false;
	inside = strncmp(real, r->stage_prefix, sl) == 0 && real[sl] == '/' && stat(real, &st) == 0 && S_ISDIR(st.st_mode);
	free(real);
	return inside;
}

/* Make the folders of rel under the staging prefix: each one a folder of ours, or a link to one. */
static int make_parents(cl_run *r, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	char *dir, *host;
	size_t dl;
	int rc = 0;

	if (!slash)
		return 0;
	dl = (size_t)(slash - rel);
	if (r->last_dir && strlen(r->last_dir) == dl && strncmp(r->last_dir, rel, dl) == 0)
		return 0;
	dir = el_xstrndup(rel, dl);
	host = el_path_join(r->stage_prefix, dir);
	for (char *p = host + strlen(r->stage_prefix) + 1;; p++) {
		char c = *p;
		struct stat st;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(host, 0755) != 0 && (errno != EEXIST || lstat(host, &st) != 0 ||
					       (!S_ISDIR(st.st_mode) && !link_to_own_dir(r, host, &st)))) {
			rc = -1;
			errno = errno == EEXIST ? ENOTDIR : errno;
		}
		*p = c;
		if (rc || !c)
			break;
	}
	free(host);
	free(r->last_dir);
	r->last_dir = rc ? NULL : dir;
	if (rc)
		free(dir);
	return rc;
}

/* A new file of the staging prefix with data (no fsync: the prefix is renamed into place whole, as conda writes). */
static int write_new(cl_run *r, const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode), rc = 0;

	if (fd < 0 || el_write_all(fd, data, len) != 0 || fchmod(fd, mode) != 0)
		rc = fail(r, NULL, ENVLOCK_EIO, "'%s': %s", path, el_strerror(errno));
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = fail(r, NULL, ENVLOCK_EIO, "'%s': %s", path, el_strerror(errno));
	return rc;
}

static int copy_fd_to(int in, const char *dst, mode_t mode)
{
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode), e = 0;
	static __thread char chunk[1u << 18];
	ssize_t n = 0;

	if (out < 0)
		return -1;
	while ((n = read(in, chunk, sizeof(chunk))) > 0)
		if (el_write_all(out, chunk, (size_t)n) != 0)
			break;
	if (n != 0)
		e = errno ? errno : EIO;
	/* the package's mode, not the umask's */
	if (!e && fchmod(out, mode) != 0)
		e = errno;
	if (close(out) != 0 && !e)
		e = errno;
	if (e) {
		unlink(dst);
		errno = e;
		return -1;
	}
	return 0;
}

/* A file with its placeholder replaced (conda/core/portability.py update_prefix), written new at dst. */
static int link_patched(cl_run *r, cl_pkg *p, cl_path *x, const char *src, const char *dst, mode_t mode)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 31);
	char *out = NULL, sha[EL_SHA256_HEX];
	size_t out_len = 0, count = 0;
	int fd, rc = 0;

	if (read_cached(src, &b) != 0)
		return fail(r, p, ENVLOCK_EIO, "path '%s': %s", x->path,
			    errno == EFBIG ? "larger than 2 GiB, the limit of a file with a placeholder" : el_strerror(errno));
	if (el_clink_replace(&out, &out_len, b.data ? b.data : (char *)"", b.len, x->placeholder, r->o->prefix, x->binary,
			     &count) != 0) {
		el_buf_release(&b);
		return fail(r, p, ENVLOCK_EINVAL, "path '%s': the prefix is longer than its binary placeholder", x->path);
	}
	if (!x->binary && el_clink_long_shebang(&out, &out_len))
		r->res->shebangs++;
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 || el_write_all(fd, out, out_len) != 0 || fchmod(fd, mode) != 0)
		rc = fail(r, p, ENVLOCK_EIO, "'%s': %s", dst, el_strerror(errno));
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = fail(r, p, ENVLOCK_EIO, "'%s': %s", dst, el_strerror(errno));
	el_sha256_buf(out, out_len, sha);
	x->sha256_in_prefix = el_xstrdup(sha);
	if (out != b.data)
		free(out);
	el_buf_release(&b);
	r->res->patched++;
	return rc;
}

/* Pass 3 for one path: into the staging prefix. */
static int link_path(cl_run *r, cl_pkg *p, cl_path *x)
{
	char *src = x->kind == CL_SOFTLINK ? NULL : el_clink_cached(p, x->ent), *dst = el_path_join(r->stage_prefix, x->dest);
	struct stat st;
	int rc = 0, in;

	if (make_parents(r, x->dest) != 0) {
		rc = fail(r, p, ENVLOCK_EIO, "path '%s': its folder in the environment: %s", x->dest, el_strerror(errno));
		goto done;
	}
	/* a later package's file replaces an earlier one's, as conda's does (it clobbers) */
	if (lstat(dst, &st) == 0 && (S_ISDIR(st.st_mode) || unlink(dst) != 0)) {
		rc = fail(r, p, ENVLOCK_EINVAL, "path '%s': a folder of another package is there", x->dest);
		goto done;
	}
	r->res->files++;
	if (x->kind == CL_SOFTLINK) {
		if (symlink(x->ent->target, dst) != 0)
			rc = fail(r, p, ENVLOCK_EIO, "path '%s': %s", x->dest, el_strerror(errno));
		r->res->softlinks++;
		goto done;
	}
	if (x->placeholder) {
		rc = link_patched(r, p, x, src, dst, x->ent->mode);
		goto done;
	}
	if (!x->no_link && link(src, dst) == 0) {
		r->res->hardlinks++;
		goto done;
	}
	/* another file system (EXDEV), or one without hard links: a copy, as conda falls back to */
	in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0 || copy_fd_to(in, dst, x->ent->mode) != 0)
		rc = fail(r, p, ENVLOCK_EIO, "path '%s': %s", x->dest, el_strerror(errno));
	if (in >= 0)
		close(in);
	r->res->copies++;
done:
	free(src);
	free(dst);
	return rc;
}

/*
 * A noarch python entry point: bin/NAME running module:func with the
 * environment's python (conda/core/portability.py generate_shebang_for_entry_point,
 * conda/core/path_actions.py python_entry_point_template). A "#!" line
 * longer than the kernel reads (EL_CLINK_SHEBANG_MAX, its newline
 * counted as conda counts it) becomes "/usr/bin/env python".
 */
static int write_entry_point(cl_run *r, cl_pkg *p, const char *def)
{
	char *name = NULL, *module = NULL, *func = NULL, *rel = NULL, *dst = NULL, *shebang, *text;
	cl_path *x;
	int fd, rc = 0;

	entry_point(def, &name, &module, &func);
	shebang = el_xasprintf("%s/bin/python", r->o->prefix);
	/* "#!", the path and its newline past the kernel's limit */
	if (strlen(shebang) + 3 > EL_CLINK_SHEBANG_MAX) {
		free(shebang);
		shebang = el_xstrdup("/usr/bin/env python");
	}
	text = el_xasprintf("#!%s\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n\nfrom %s import %.*s\n\n"
			    "if __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])\n"
			    "    sys.exit(%s())\n",
			    shebang, module, (int)strcspn(func, "."), func, func);
	rel = el_xasprintf("bin/%s", name);
	if (make_parents(r, rel) != 0) {
		rc = fail(r, p, ENVLOCK_EIO, "entry point '%s': %s", rel, el_strerror(errno));
		goto done;
	}
	dst = el_path_join(r->stage_prefix, rel);
	unlink(dst);
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
	if (fd < 0 || el_write_all(fd, text, strlen(text)) != 0 || fchmod(fd, 0755) != 0)
		rc = fail(r, p, ENVLOCK_EIO, "'%s': %s", dst, el_strerror(errno));
	if (fd >= 0)
		close(fd);
	if (rc == 0) {
		char sha[EL_SHA256_HEX];

		x = add_path(p, rel);
		x->dest = el_xstrdup(rel);
		x->kind = CL_ENTRY_POINT;
		el_sha256_buf(text, strlen(text), sha);
		x->sha256 = el_xstrdup(sha);
		x->size = (long long)strlen(text);
		r->res->entry_points++;
	}
done:
	free(name);
	free(module);
	free(func);
	free(rel);
	free(dst);
	free(shebang);
	free(text);
	return rc;
}

/*
 * json's ensure_ascii over a JSON text el_json_write wrote: every code
 * point past ASCII, and DEL, as \\uXXXX (two, a surrogate pair, past
 * U+FFFF), as Python's json.dumps writes them. The text is valid UTF-8
 * (el_json_write writes a bad byte as U+FFFD), and such bytes appear only
 * inside its strings.
 */
static void ascii_json(el_buf *out, const unsigned char *s, size_t n)
{
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned c = s[i];
		int len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;

		if (c < 0x7f) {
			i++;
			continue;
		}
		el_buf_add(out, s + run, i - run);
		if (c == 0x7f) {
			el_buf_adds(out, "\\u007f");
		} else if (i + (size_t)len > n) {
			el_buf_adds(out, "\\ufffd");
			len = (int)(n - i);
		} else {
			unsigned cp = c & (0xff >> (len + 1));

			for (int k = 1; k < len; k++)
				cp = cp << 6 | (s[i + k] & 0x3f);
			if (cp > 0xffff)
				el_buf_addf(out, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
			else
				el_buf_addf(out, "\\u%04x", cp);
		}
		i += (size_t)len;
		run = i;
	}
	el_buf_add(out, s + run, n - run);
}

static const char *kind_name(cl_kind k)
{
	static const char *const names[] = { "hardlink", "softlink", "unix_python_entry_point", "pyc_file" };

	return names[k];
}

/*
 * conda-meta/<name>-<version>-<build>.json: the package's info/index.json
 * with what conda adds when it links (conda/models/records.py
 * PrefixRecord): channel and url of the package's origin (the lock's),
 * fn, md5, sha256, size, files, paths_data, link (where it was linked
 * from: the archive), requested_spec.
 */
static int write_record(cl_run *r, cl_pkg *p)
{
	cJSON *rec = cJSON_Duplicate(p->index, 1), *files, *pd, *paths, *link;
	const char *md5 = p->in->md5 ? p->in->md5 : p->hashed ? p->md5 : NULL;
	const char *sha = p->in->sha256 ? p->in->sha256 : p->hashed ? p->sha256 : NULL;
	el_buf json = EL_BUF_INIT(EL_CLINK_RECORD_MAX), text = EL_BUF_INIT(EL_CLINK_RECORD_MAX);
	char *rel, *host;
	struct stat st;
	int rc;

	static const char *const replaced[] = { "channel", "url", "fn", "md5", "sha256", "size", "files", "paths_data",
						"link", "requested_spec", "extracted_package_dir", "package_tarball_full_path" };

	for (size_t i = 0; i < sizeof(replaced) / sizeof(replaced[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(rec, replaced[i]);
	el_jset_str(rec, "channel", p->in->channel);
	el_jset_str(rec, "url", p->in->url);
	el_jset_str(rec, "fn", el_path_base(p->in->archive));
	el_jset_str(rec, "md5", md5);
	el_jset_str(rec, "sha256", sha);
	if (stat(p->in->archive, &st) == 0)
		el_jset_int(rec, "size", (long long)st.st_size);
	files = el_jset_arr(rec, "files");
	pd = el_jset_obj(rec, "paths_data");
	paths = el_jset_arr(pd, "paths");
	el_jset_int(pd, "paths_version", 1);
	for (size_t i = 0; i < p->npaths; i++) {
		const cl_path *x = &p->paths[i];
		cJSON *o = el_jpush_obj(paths);

		el_jpush_str(files, x->dest);
		el_jset_str(o, "_path", x->dest);
		el_jset_str(o, "path_type", kind_name(x->kind));
		if (x->placeholder && x->kind == CL_HARDLINK) {
			el_jset_str(o, "prefix_placeholder", x->placeholder);
			el_jset_str(o, "file_mode", x->binary ? "binary" : "text");
		}
		if (x->no_link)
			el_jset_bool(o, "no_link", true);
		el_jset_str(o, "sha256", x->sha256);
		el_jset_str(o, "sha256_in_prefix", x->sha256_in_prefix);
		if (x->size >= 0)
			el_jset_int(o, "size_in_bytes", x->size);
	}
	link = el_jset_obj(rec, "link");
	el_jset_str(link, "source", p->in->archive);
	el_jset_int(link, "type", 1);
	el_jset_str(rec, "requested_spec", "");
	rel = el_xasprintf("conda-meta/%s-%s-%s.json", p->name, p->version, p->build);
	/*
	 * As conda writes it (conda/gateways/disk/create.py
	 * write_as_json_to_file, conda/common/serialize.py json_dump:
	 * json.dumps(indent=2, sort_keys=True, separators=(",", ": "))): keys
	 * sorted at every level, two spaces a level, ASCII only, no final
	 * newline.
	 */
	if (el_json_write(rec, &json, 2) != 0) {
		rc = fail(r, p, ENVLOCK_ELIMIT, "'%s': over %zu MiB", rel, json.limit >> 20);
		goto done;
	}
	ascii_json(&text, (const unsigned char *)json.data, json.len - 1);
	if (el_buf_failed(&text) != 0) {
		rc = fail(r, p, ENVLOCK_ELIMIT, "'%s': over %zu MiB", rel, text.limit >> 20);
		goto done;
	}
	host = el_path_join(r->stage_prefix, rel);
	rc = write_new(r, host, text.data, text.len, 0644);
	free(host);
done:
	cJSON_Delete(rec);
	el_buf_release(&json);
	el_buf_release(&text);
	free(rel);
	return rc;
}

/* The .pyc files compileall will write, listed in the records as conda lists them (path_type pyc_file). */
static void add_pycs(cl_run *r, cl_pkg *p)
{
	size_t n = p->npaths;

	for (size_t i = 0; i < n; i++) {
		cl_path *x = &p->paths[i], *y;
		char *pyc;

		if (x->kind != CL_HARDLINK || !el_ends_with(x->dest, ".py") || !el_starts_with(x->dest, "lib/python"))
			continue;
		pyc = el_clink_pyc_path(x->dest, r->xy);
		y = add_path(p, pyc);
		y->dest = pyc;
		y->kind = CL_PYC;
		r->res->pycs++;
	}
}

/* conda-meta/history: one revision, each package added (conda/history.py's format). */
static int write_history(cl_run *r)
{
	el_buf b = EL_BUF_INIT(64u << 20);
	char stamp[32], *host;
	time_t now = time(NULL);
	struct tm tm;
	int rc = 0;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	el_buf_addf(&b, "==> %s <==\n# cmd: %s\n# conda version: (none: linked by envlock)\n", stamp,
		    r->o->history_cmd ? r->o->history_cmd : "envlock restore");
	for (size_t i = 0; i < r->n; i++) {
		const cl_pkg *p = &r->pkgs[i];
		const char *ch = p->in->channel ? p->in->channel : "";

		el_buf_addf(&b, "+%s%s%s-%s-%s\n", ch, *ch ? "::" : "", p->name, p->version, p->build);
	}
	if (el_buf_failed(&b) != 0)
		rc = fail(r, NULL, ENVLOCK_ELIMIT, "conda-meta/history: the lock's packages make it over 64 MiB");
	host = el_path_join(r->stage_prefix, "conda-meta/history");
	if (rc == 0)
		rc = write_new(r, host, b.data ? b.data : "", b.len, 0644);
	free(host);
	el_buf_release(&b);
	return rc;
}

/*
 * Pass 4: compile noarch python's .py files with the environment's
 * python where it now is (conda/core/path_actions.py
 * CompileMultiPycAction: python -Wi -m compileall -q -l -i LIST).
 */
static void compile_pycs(cl_run *r)
{
	char *list = el_path_join(r->stage, "py-files.txt"), *in_tree_list = NULL, *python;
	el_buf b = EL_BUF_INIT(256u << 20);
	int rc = 0, status = 0, child = 0, log = r->o->log_fd;

	for (size_t i = 0; i < r->pys.n; i++)
		el_buf_addf(&b, "%s/%s\n", r->o->prefix, r->pys.v[i]);
	if (el_buf_failed(&b) != 0) {
		r->res->note = el_xasprintf("no .pyc compiled: the list of %zu files to compile is over 256 MiB", r->pys.n);
		goto done;
	}
	if (write_new(r, list, b.data, b.len, 0644) != 0) {
		r->res->note = el_xasprintf("no .pyc compiled: the list of %zu files could not be written", r->pys.n);
		goto done;
	}
	python = el_xasprintf("%s/bin/python", r->o->prefix);
	if (r->o->chroot) {
		/* the list's path inside the tree: the staging folder is beside the prefix */
		char *dir = el_xstrdup(r->o->prefix), *slash = strrchr(dir, '/');

		*slash = '\0';
		in_tree_list = el_xasprintf("%s/%s/py-files.txt", dir, el_path_base(r->stage));
		free(dir);
	}
	{
		const char *argv[] = { python, "-Wi", "-m", "compileall", "-q", "-l", "-i", in_tree_list ? in_tree_list : list, NULL };
		int null = -1;

		if (log < 0)
			log = null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		rc = r->o->chroot ? el_spawn_logged_in(r->o->chroot, argv, NULL, log, &status, &child)
				  : el_spawn_logged(argv, NULL, log, &status);
		if (null >= 0)
			close(null);
	}
	if (rc != 0 || status != 0)
		r->res->note = el_xasprintf("compiling the .pyc of noarch python packages with '%s' failed%s (exit %d): they are made on first import",
					    python, rc ? " to start" : "", status);
	free(python);
done:
	free(list);
	free(in_tree_list);
	el_buf_release(&b);
}

static void pkg_release(cl_pkg *p)
{
	for (size_t i = 0; i < p->npaths; i++) {
		cl_path *x = &p->paths[i];

		free(x->path);
		if (x->dest != x->path)
			free(x->dest);
		free(x->placeholder);
		free(x->sha256);
		free(x->sha256_in_prefix);
	}
	free(p->paths);
	for (size_t i = 0; i < p->nents; i++) {
		free(p->ents[i].name);
		free(p->ents[i].target);
		free(p->ents[i].hardlink);
	}
	free(p->ents);
	for (int i = 0; i < CL_INFO_N; i++)
		el_buf_release(&p->info[i]);
	free(p->cache);
	free(p->err);
	cJSON_Delete(p->index);
	el_strvec_release(&p->entry_points);
}

/* The staging folder beside host_prefix, on its file system (so the rename is one step), real. */
static int make_stage(cl_run *r)
{
	char *dir = el_xstrdup(r->o->host_prefix), *slash, *tmpl, *real;
	int rc = 0;

	while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	slash = strrchr(dir, '/');
	if (!slash || !slash[1]) {
		free(dir);
		return fail(r, NULL, ENVLOCK_EINVAL, "'%s': not a path for an environment", r->o->host_prefix);
	}
	*slash = '\0';
	/* the prefix's name, shortened: the staging folder's name must fit NAME_MAX too */
	tmpl = el_xasprintf("%s/.%.64s.envlock-link.XXXXXX", *dir ? dir : "", slash + 1);
	if (el_mkdir_p(*dir ? dir : "/", 0755) != 0 || !mkdtemp(tmpl) || !(real = realpath(tmpl, NULL))) {
		rc = fail(r, NULL, ENVLOCK_EIO, "'%s': cannot make a staging folder there: %s", *dir ? dir : "/",
			  el_strerror(errno));
		free(tmpl);
		free(dir);
		return rc;
	}
	free(tmpl);
	free(dir);
	r->stage = real;
	r->stage_prefix = el_path_join(real, "prefix");
	return 0;
}

int el_clink_create(el_clink_result *res, envlock_ctx *ctx, const el_clink_opts *o, const el_clink_pkg *pkgs, size_t n)
{
	cl_run run = { .ctx = ctx, .o = o, .res = res, .n = n };
	cl_run *r = &run;
	char *pkgs_dir = NULL;
	struct stat st;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (!o->prefix || o->prefix[0] != '/' || el_bad_abs_path(o->prefix))
		return fail(r, NULL, ENVLOCK_EINVAL, "'%s': the environment's path must be absolute", o->prefix ?: "");
	if (lstat(o->host_prefix, &st) == 0)
		return fail(r, NULL, ENVLOCK_EEXISTS, "'%s': is there already", o->host_prefix);
	el_interrupt_poll_begin();
	if ((rc = make_stage(r)) != 0)
		goto out;
	pkgs_dir = el_path_join(r->stage, "pkgs");
	if (mkdir(pkgs_dir, 0755) != 0 || mkdir(r->stage_prefix, 0755) != 0) {
		rc = fail(r, NULL, ENVLOCK_EIO, "'%s': %s", r->stage, el_strerror(errno));
		goto out;
	}
	r->pkgs = el_xcalloc(n + 1, sizeof(*r->pkgs));
	for (size_t i = 0; i < n; i++) {
		r->pkgs[i].in = &pkgs[i];
		r->pkgs[i].cache = el_xasprintf("%s/%zu.", pkgs_dir, i);
	}
	/* 1: every archive checked and unpacked before anything is linked */
	el_pool_run(n, el_pool_default_threads(), unpack_job, r);
	if (el_interrupted()) {
		rc = el_interrupt_error(ctx, o->host_prefix);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (r->pkgs[i].err) {
			rc = fail(r, &r->pkgs[i], ENVLOCK_EINVAL, "%s", r->pkgs[i].err);
			goto out;
		}
	/* 2: every package's info/ read and every path checked */
	for (size_t i = 0; i < n; i++)
		if ((rc = read_package(r, &r->pkgs[i])) != 0)
			goto out;
	for (size_t i = 0; i < n && !r->xy; i++)
		if (strcmp(r->pkgs[i].name, "python") == 0)
			r->xy = el_clink_python_xy(r->pkgs[i].version);
	for (size_t i = 0; i < n; i++)
		if ((rc = check_package(r, &r->pkgs[i])) != 0)
			goto out;
	/* 3: linked into the staging prefix, in the lock's order */
	for (size_t i = 0; i < n; i++) {
		cl_pkg *p = &r->pkgs[i];

		if (el_interrupted()) {
			rc = el_interrupt_error(ctx, o->host_prefix);
			goto out;
		}
		for (size_t j = 0; j < p->npaths; j++)
			if ((rc = link_path(r, p, &p->paths[j])) != 0)
				goto out;
		for (size_t j = 0; j < p->entry_points.n; j++)
			if ((rc = write_entry_point(r, p, p->entry_points.v[j])) != 0)
				goto out;
		if (p->noarch_python && !o->no_pyc)
			add_pycs(r, p);
		res->packages++;
	}
	{
		char *meta = el_path_join(r->stage_prefix, "conda-meta");

		if (mkdir(meta, 0755) != 0 && errno != EEXIST)
			rc = fail(r, NULL, ENVLOCK_EIO, "'%s': %s", meta, el_strerror(errno));
		free(meta);
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = write_record(r, &r->pkgs[i]);
	if (rc == 0)
		rc = write_history(r);
	if (rc != 0)
		goto out;
	if (el_interrupted()) {
		rc = el_interrupt_error(ctx, o->host_prefix);
		goto out;
	}
	/* 4: into place, then the .pyc by the environment's python at its real path */
	if (el_dir_rename(r->stage_prefix, o->host_prefix, 0) != 0) {
		rc = fail(r, NULL, ENVLOCK_EIO, "'%s': cannot rename the staged environment into place: %s", o->host_prefix,
			  el_strerror(errno));
		goto out;
	}
	if (r->pys.n && !o->no_pyc)
		compile_pycs(r);
	else if (r->pys.n)
		res->note = el_xasprintf("%zu .py files of noarch python packages not compiled: python is run inside the tree only with --chroot (they are compiled on first import)",
					 r->pys.n);
out:
	if (r->stage)
		el_remove_tree(r->stage);
	el_interrupt_poll_end();
	for (size_t i = 0; r->pkgs && i < n; i++)
		pkg_release(&r->pkgs[i]);
	free(r->pkgs);
	free(r->stage);
	free(r->stage_prefix);
	free(r->xy);
	free(r->last_dir);
	free(pkgs_dir);
	el_strvec_release(&r->pys);
	return rc;
}

void el_clink_result_release(el_clink_result *res)
{
	if (res) {
		free(res->note);
		res->note = NULL;
	}
}
