/*
 * A wheel rebuilt from an installed distribution, for one no cache has
 * (built on a machine long gone): the files its dist-info's RECORD lists,
 * each checked against RECORD's sha256 (a file changed since pip
 * installed it means the wheel cannot be rebuilt), laid out as the wheel
 * had them: paths relative to site-packages, the prefix's bin/ as
 * <name>-<version>.data/scripts (console scripts pip writes itself from
 * entry_points.txt are left out, and a script's shebang goes back to
 * "#!python"), anything else under the prefix as .data/data. The
 * dist-info's own METADATA and WHEEL go in as installed; what pip adds at
 * install (INSTALLER, REQUESTED, direct_url.json, byte code) is left
 * out; RECORD is written anew.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include "internal.h"
#include "util/error.h"
#include "util/root.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define PK_RECORD_MAX (64u << 20)
#define PK_SCRIPT_MAX (64u << 20)
#define PK_RECORD_LINES 1000000
/* 1980-01-02: the zip format's epoch, a day in so that no time zone takes it before 1980 */
#define PK_ZIP_MTIME 315619200

typedef struct {
	char *path, *hash; /* as RECORD has them */
	char *arc;         /* the name in the wheel */
	char *abs;         /* the installed file */
	bool script;       /* goes to .data/scripts: shebang rewritten */
} rec_entry;

static bool read_small(const char *path, el_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char chunk[65536];
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (el_buf_put(b, chunk, (size_t)n) != 0) {
			close(fd);
			return false;
		}
	close(fd);
	return n == 0;
}

/* One CSV field of a RECORD line (Python's csv module: "..." with "" for a quote). */
static char *csv_field(const char **p, const char *end)
{
	el_buf b;

	el_buf_init_fits(&b, (size_t)(end - *p), "a field is never longer than the text it is read from");
	if (*p < end && **p == '"') {
		(*p)++;
		while (*p < end) {
			if (**p == '"' && *p + 1 < end && (*p)[1] == '"') {
				el_buf_addc(&b, '"');
				*p += 2;
			} else if (**p == '"') {
				(*p)++;
				break;
			} else {
				el_buf_addc(&b, *(*p)++);
			}
		}
	}
	while (*p < end && **p != ',')
		el_buf_addc(&b, *(*p)++);
	if (*p < end)
		(*p)++;
	return el_buf_detach(&b);
}

/* RECORD's form of a digest: urlsafe base64 without padding. */
static void record_b64(const unsigned char *d, unsigned n, char *out)
{
	int len = EVP_EncodeBlock((unsigned char *)out, d, (int)n);

	while (len > 0 && out[len - 1] == '=')
		out[--len] = '\0';
	for (char *c = out; *c; c++)
		*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
}

/* "a/./b/../c" -> "a/c"; NULL when it climbs above its start. */
static char *lexical_norm(const char *path)
{
	el_strvec parts = EL_STRVEC_INIT;
	const char *s = path;
	el_buf b;

	el_buf_init_fits(&b, strlen(path), "a path with its '.' and '..' taken out is never longer");

	while (*s) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (n == 2 && strncmp(s, "..", 2) == 0) {
			if (!parts.n) {
				el_strvec_release(&parts);
				return NULL;
			}
			free(parts.v[--parts.n]);
			parts.v[parts.n] = NULL;
		} else if (n && !(n == 1 && *s == '.')) {
			el_strvec_push_owned(&parts, el_xstrndup(s, n));
		}
		s += n + (e ? 1 : 0);
	}
	if (path[0] == '/')
		el_buf_addc(&b, '/');
	for (size_t i = 0; i < parts.n; i++)
		el_buf_addf(&b, "%s%s", i ? "/" : "", parts.v[i]);
	el_strvec_release(&parts);
	return el_buf_detach(&b);
}

/* The prefix of a site dir "<prefix>/lib/pythonX.Y/site-packages" (or dist-packages, lib64), or NULL. */
static char *site_prefix(const char *site)
{
	char *a = el_path_dir(site), *b = el_path_dir(a), *c = el_path_dir(b);
	const char *sb = el_path_base(site);
	bool ok = (strcmp(sb, "site-packages") == 0 || strcmp(sb, "dist-packages") == 0) &&
		  el_starts_with(el_path_base(a), "python") &&
		  (strcmp(el_path_base(b), "lib") == 0 || strcmp(el_path_base(b), "lib64") == 0);

	free(a), free(b);
	if (!ok) {
		free(c);
		return NULL;
	}
	return c;
}

/* Console and GUI scripts pip writes itself at install, from entry_points.txt. */
static void entry_point_scripts(const char *dist_info, el_strvec *names)
{
	char *path = el_path_join(dist_info, "entry_points.txt");
	el_buf b = EL_BUF_INIT(1u << 20);
	const char *pos, *end, *line;
	size_t n;
	bool in = false;

	if (read_small(path, &b)) {
		pos = el_buf_cstr(&b);
		end = pos + b.len;
		while (el_next_line(&pos, end, &line, &n)) {
			const char *eq;

			el_trim(&line, &n);
			if (n && line[0] == '[') {
				in = (n == 17 && strncmp(line, "[console_scripts]", 17) == 0) ||
				     (n == 13 && strncmp(line, "[gui_scripts]", 13) == 0);
				continue;
			}
			if (!in || !n || !(eq = memchr(line, '=', n)))
				continue;
			{
				const char *k = line;
				size_t kl = (size_t)(eq - line);

				el_trim(&k, &kl);
				if (kl)
					el_strvec_push_owned(names, el_xstrndup(k, kl));
			}
		}
	}
	el_buf_release(&b);
	free(path);
}

static void entries_free(rec_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path), free(v[i].hash), free(v[i].arc), free(v[i].abs);
	free(v);
}

static int arc_cmp(const void *a, const void *b)
{
	const rec_entry *x = a, *y = b;
	bool dx = strstr(x->arc, ".dist-info/") != NULL, dy = strstr(y->arc, ".dist-info/") != NULL;

	/* PEP 427: the .dist-info last */
	if (dx != dy)
		return dx ? 1 : -1;
	return strcmp(x->arc, y->arc);
}

/* Where a RECORD path goes in the wheel; NULL with *skip (a note) or *why (it cannot be rebuilt). */
static char *arc_name(const char *site, const char *prefix, const char *data_dir, const char *path,
		      const el_strvec *ep, bool *script, char **why)
{
	char *joined, *abs, *rel, *out = NULL;

	*script = false;
	if (path[0] == '/') {
		*why = el_xasprintf("RECORD names an absolute path '%s'", path);
		return NULL;
	}
	if (!strstr(path, "..")) {
		char *n = lexical_norm(path);

		if (n && *n)
			return n;
		free(n);
	}
	joined = el_path_join(site, path);
	abs = lexical_norm(joined);
	free(joined);
	if (abs && el_starts_with(abs, site) && abs[strlen(site)] == '/') {
		out = el_xstrdup(abs + strlen(site) + 1);
		free(abs);
		return out;
	}
	if (!abs || !prefix || !el_starts_with(abs, prefix) || abs[strlen(prefix)] != '/') {
		*why = el_xasprintf("RECORD names '%s', outside the environment's prefix", path);
		free(abs);
		return NULL;
	}
	rel = abs + strlen(prefix) + 1;
	if (el_starts_with(rel, "bin/") && !strchr(rel + 4, '/')) {
		if (el_strvec_has(ep, rel + 4)) {
			free(abs);
			return el_xstrdup(""); /* pip writes it again */
		}
		out = el_xasprintf("%s/scripts/%s", data_dir, rel + 4);
		*script = true;
	} else {
		out = el_xasprintf("%s/data/%s", data_dir, rel);
	}
	free(abs);
	return out;
}

/* Read RECORD into entries; 0, or -1 with *why. */
static int read_record(const el_pip_dist *d, const char *site, const char *prefix, const char *data_dir,
		       rec_entry **out, size_t *nout, char **why)
{
	char *path = el_path_join(d->path, "RECORD");
	const char *info = el_path_base(d->path);
	el_buf b = EL_BUF_INIT(PK_RECORD_MAX);
	el_strvec ep = EL_STRVEC_INIT;
	rec_entry *v = NULL;
	size_t n = 0, cap = 0, lines = 0;
	const char *pos, *end, *line;
	size_t len;
	int rc = 0;

	if (!read_small(path, &b)) {
		*why = el_xasprintf("'%s': cannot be read", path);
		free(path);
		el_buf_release(&b);
		return -1;
	}
	entry_point_scripts(d->path, &ep);
	pos = el_buf_cstr(&b);
	end = pos + b.len;
	while (rc == 0 && el_next_line(&pos, end, &line, &len)) {
		const char *p = line, *le = line + len;
		char *f = csv_field(&p, le), *h = csv_field(&p, le), *arc;
		bool script;
		size_t il = strlen(info);

		if (++lines > PK_RECORD_LINES) {
			*why = el_xasprintf("'%s': more than %u lines", path, PK_RECORD_LINES);
			rc = -1;
		}
		/* what pip writes at install, and RECORD itself (written anew) */
		if (rc || !*f || (strncmp(f, info, il) == 0 && f[il] == '/' &&
				  (strcmp(f + il + 1, "RECORD") == 0 || strcmp(f + il + 1, "INSTALLER") == 0 ||
				   strcmp(f + il + 1, "REQUESTED") == 0 || strcmp(f + il + 1, "direct_url.json") == 0)) ||
		    (!*h && el_ends_with(f, ".pyc"))) {
			free(f), free(h);
			continue;
		}
		if (!el_starts_with(h, "sha256=")) {
			*why = el_xasprintf("RECORD has no sha256 for '%s'", f);
			free(f), free(h);
			rc = -1;
			break;
		}
		arc = arc_name(site, prefix, data_dir, f, &ep, &script, why);
		if (!arc) {
			free(f), free(h);
			rc = -1;
			break;
		}
		if (!*arc) {
			free(arc), free(f), free(h);
			continue;
		}
		EL_GROW(v, n + 1, cap);
		v[n].path = f;
		v[n].hash = h;
		v[n].arc = arc;
		{
			char *j = el_path_join(site, f);

			v[n].abs = lexical_norm(j);
			free(j);
		}
		v[n].script = script;
		n++;
	}
	el_strvec_release(&ep);
	el_buf_release(&b);
	free(path);
	if (rc != 0) {
		entries_free(v, n);
		return -1;
	}
	qsort(v, n, sizeof(*v), arc_cmp);
	*out = v;
	*nout = n;
	return 0;
}

/* Write one zip entry; data of len bytes. */
static int zip_put(struct archive *a, const char *name, mode_t mode, const void *data, size_t len)
{
	struct archive_entry *e = archive_entry_new();
	int rc = 0;

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, mode);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, PK_ZIP_MTIME, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK || (len && archive_write_data(a, data, len) != (la_ssize_t)len))
		rc = -1;
	archive_entry_free(e);
	return rc;
}

static void record_line(el_buf *record, const char *arc, const char *b64, unsigned long long len)
{
	if (strpbrk(arc, ",\"\n")) {
		el_buf_addc(record, '"');
		for (const char *c = arc; *c; c++)
			if (*c == '"')
				el_buf_adds(record, "\"\"");
			else
				el_buf_addc(record, *c);
		el_buf_addc(record, '"');
	} else {
		el_buf_adds(record, arc);
	}
	el_buf_addf(record, ",sha256=%s,%llu\n", b64, len);
}

/* A script: read whole (they are small), checked, its shebang put back to "#!python". */
static int put_script(struct archive *a, const rec_entry *x, el_buf *record, char **why)
{
	el_buf b = EL_BUF_INIT(PK_SCRIPT_MAX);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdn = 0;
	char b64[128];
	const char *data;
	size_t len;
	int rc = -1;

	if (!read_small(x->abs, &b)) {
		*why = el_xasprintf("'%s' cannot be read", x->abs);
		goto done;
	}
	EVP_Digest(el_buf_cstr(&b), b.len, md, &mdn, EVP_sha256(), NULL);
	record_b64(md, mdn, b64);
	if (strcmp(b64, x->hash + 7) != 0) {
		*why = el_xasprintf("'%s' changed since pip installed it (its sha256 is not RECORD's)", x->abs);
		goto done;
	}
	data = el_buf_cstr(&b);
	len = b.len;
	if (len > 2 && data[0] == '#' && data[1] == '!') {
		const char *nl = memchr(data, '\n', len);
		size_t first = nl ? (size_t)(nl - data) : len;

		/* pip wrote this interpreter's path into "#!python" at install */
		if (memmem(data, first, "python", 6)) {
			el_buf s = EL_BUF_FITS(PK_SCRIPT_MAX + 16, "#!python and the rest of a script read within PK_SCRIPT_MAX");

			el_buf_adds(&s, "#!python");
			el_buf_add(&s, data + first, len - first);
			el_buf_release(&b);
			b = s;
			data = el_buf_cstr(&b);
			len = b.len;
			EVP_Digest(data, len, md, &mdn, EVP_sha256(), NULL);
			record_b64(md, mdn, b64);
		}
	}
	if (zip_put(a, x->arc, 0755, data, len) != 0) {
		*why = el_xasprintf("cannot write '%s' into the wheel: %s", x->arc, archive_error_string(a));
		goto done;
	}
	record_line(record, x->arc, b64, len);
	rc = 0;
done:
	el_buf_release(&b);
	return rc;
}

/* Put the installed file of x into the wheel, streamed and checked against RECORD; appends its RECORD line. */
static int put_file(struct archive *a, const rec_entry *x, el_buf *record, char **why)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdn = 0;
	char b64[128], *buf;
	struct stat st;
	struct archive_entry *e;
	EVP_MD_CTX *h;
	unsigned long long total = 0;
	ssize_t got;
	int fd, rc = -1;

	if (lstat(x->abs, &st) != 0) {
		*why = el_xasprintf("'%s': %s", x->abs, el_strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = el_xasprintf("'%s' is not a regular file any more", x->abs);
		return -1;
	}
	if (x->script)
		return put_script(a, x, record, why);
	if ((fd = open(x->abs, O_RDONLY | O_CLOEXEC)) < 0) {
		*why = el_xasprintf("'%s': %s", x->abs, el_strerror(errno));
		return -1;
	}
	buf = el_xmalloc(1u << 20);
	h = EVP_MD_CTX_new();
	e = archive_entry_new();
	EVP_DigestInit_ex(h, EVP_sha256(), NULL);
	archive_entry_set_pathname(e, x->arc);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, (st.st_mode & 0111) ? 0755 : 0644);
	archive_entry_set_size(e, (la_int64_t)st.st_size);
	archive_entry_set_mtime(e, PK_ZIP_MTIME, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK)
		goto wfail;
	while ((got = read(fd, buf, 1u << 20)) > 0) {
		EVP_DigestUpdate(h, buf, (size_t)got);
		if (archive_write_data(a, buf, (size_t)got) != got)
			goto wfail;
		total += (unsigned long long)got;
	}
	EVP_DigestFinal_ex(h, md, &mdn);
	record_b64(md, mdn, b64);
	if (got < 0 || total != (unsigned long long)st.st_size) {
		*why = el_xasprintf("'%s' changed while it was read", x->abs);
	} else if (strcmp(b64, x->hash + 7) != 0) {
		*why = el_xasprintf("'%s' changed since pip installed it (its sha256 is not RECORD's)", x->abs);
	} else {
		record_line(record, x->arc, b64, total);
		rc = 0;
	}
	goto done;
wfail:
	*why = el_xasprintf("cannot write '%s' into the wheel: %s", x->arc, archive_error_string(a));
done:
	EVP_MD_CTX_free(h);
	archive_entry_free(e);
	free(buf);
	close(fd);
	return rc;
}

int pk_rebuild(pk_pack *p, const el_pip_dist *d, char **file, long long *nfiles, char **why)
{
	char *site = el_path_dir(d->path), *prefix = site_prefix(site);
	char *wheel_path = el_path_join(d->path, "WHEEL");
	el_buf wb = EL_BUF_INIT(1u << 20), record = EL_BUF_INIT((size_t)1 << 30);
	char *tags = NULL, *build = NULL, *data_dir = NULL, *name = NULL, *tmp = NULL, *dst = NULL;
	const char *info = el_path_base(d->path);
	rec_entry *v = NULL;
	size_t n = 0;
	struct archive *a = NULL;
	int rc = -1, fd = -1;

	*file = NULL;
	*why = NULL;
	if (!read_small(wheel_path, &wb) || !(tags = pk_wheel_tags(el_buf_cstr(&wb), wb.len))) {
		*why = el_xasprintf("'%s': no WHEEL file with its tags", wheel_path);
		goto done;
	}
	build = el_rfc822_header(el_buf_cstr(&wb), wb.len, "Build");
	name = pk_wheel_filename(d->name, d->version, build, tags);
	if (!name) {
		*why = el_xasprintf("its name, version or tags cannot make a wheel file name");
		goto done;
	}
	/* the .data dir is named as the .dist-info is, so pip matches them */
	data_dir = el_xasprintf("%.*s.data", (int)(strlen(info) - strlen(".dist-info")), info);
	if (!el_ends_with(info, ".dist-info"))
		goto done;
	if (read_record(d, site, prefix, data_dir, &v, &n, why) != 0)
		goto done;
	dst = el_xasprintf("%s/wheels/%s", p->kit, name);
	tmp = el_xasprintf("%s/wheels/.rebuild-XXXXXX", p->kit);
	if ((fd = mkstemp(tmp)) < 0) {
		*why = el_xasprintf("'%s': %s", tmp, el_strerror(errno));
		goto done;
	}
	{
		/* mkstemp's 0600, made what a new file gets */
		mode_t um = umask(0);

		umask(um);
		fchmod(fd, 0644 & ~um);
	}
	a = archive_write_new();
	if (!a || archive_write_set_format_zip(a) != ARCHIVE_OK ||
	    archive_write_set_options(a, "zip:compression=deflate") != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		*why = el_xasprintf("cannot write a zip: %s", a ? archive_error_string(a) : "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		if (put_file(a, &v[i], &record, why) != 0)
			goto done;
	{
		char *rec_name = el_xasprintf("%s/RECORD", info);

		el_buf_addf(&record, "%s,,\n", rec_name);
		if (el_buf_failed(&record)) {
			*why = el_xasprintf("its RECORD would be longer than %zu bytes", record.limit);
			free(rec_name);
			goto done;
		}
		if (zip_put(a, rec_name, 0644, el_buf_cstr(&record), record.len) != 0 ||
		    archive_write_close(a) != ARCHIVE_OK) {
			*why = el_xasprintf("cannot write the wheel: %s", archive_error_string(a));
			free(rec_name);
			goto done;
		}
		free(rec_name);
	}
	if (access(dst, F_OK) == 0) {
		*why = el_xasprintf("'%s' is in the kit already", name);
		goto done;
	}
	if (rename(tmp, dst) != 0) {
		*why = el_xasprintf("'%s': %s", dst, el_strerror(errno));
		goto done;
	}
	*file = name;
	name = NULL;
	*nfiles = (long long)n + 1;
	rc = 0;
done:
	if (a)
		archive_write_free(a);
	if (fd >= 0)
		close(fd);
	if (rc != 0 && tmp && fd >= 0)
		unlink(tmp);
	if (rc != 0 && !*why)
		*why = el_xstrdup("its dist-info is not named <name>-<version>.dist-info");
	entries_free(v, n);
	el_buf_release(&wb);
	el_buf_release(&record);
	free(site), free(prefix), free(wheel_path), free(tags), free(build), free(data_dir), free(name);
	free(tmp), free(dst);
	return rc;
}
