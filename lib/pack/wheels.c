/*
 * The wheels a kit can take: those of --wheels folders, pip's cache of
 * built wheels (every .whl under wheels/, where a long mmcv-full build lands) and
 * pip's HTTP cache: http/ (pip <= 23.2, CacheControl files: "cc=4," and a
 * msgpack map whose response body is the downloaded file) and http-v2/
 * (pip >= 23.3: "<key>.body" files holding the response as it came).
 * Each is identified by its own .dist-info/METADATA and WHEEL, read from
 * inside the zip, never by its file name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "internal.h"
#include "util/root.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define PK_META_MAX (4u << 20)   /* METADATA and WHEEL files are a few kB; a README inside can be large */
#define PK_SCAN_DEPTH 24         /* pip's caches nest 5 levels of hash prefixes */
#define PK_SCAN_FILES 1000000

/* A region of a file that libarchive reads as if it were the whole file. */
typedef struct {
	int fd;
	off_t start, length, pos;
	char buf[1 << 16];
} region;

static la_ssize_t region_read(struct archive *a, void *data, const void **out)
{
	region *r = data;
	size_t want = sizeof(r->buf);
	ssize_t got;

	(void)a;
	if ((off_t)want > r->length - r->pos)
		want = (size_t)(r->length - r->pos);
	if (want == 0)
		return 0;
	do
		got = pread(r->fd, r->buf, want, r->start + r->pos);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -1;
	r->pos += got;
	*out = r->buf;
	return got;
}

static la_int64_t region_seek(struct archive *a, void *data, la_int64_t off, int whence)
{
	region *r = data;
	off_t to = whence == SEEK_SET ? off : whence == SEEK_CUR ? r->pos + off : r->length + off;

	(void)a;
	if (to < 0 || to > r->length)
		return ARCHIVE_FATAL;
	r->pos = to;
	return to;
}

static la_int64_t region_skip(struct archive *a, void *data, la_int64_t n)
{
	region *r = data;

	(void)a;
	if (n > r->length - r->pos)
		n = r->length - r->pos;
	r->pos += n;
	return n;
}

/* The entry's data, up to PK_META_MAX; NULL when larger or unreadable. */
static char *read_entry(struct archive *a, size_t *len)
{
	el_buf b = EL_BUF_INIT(PK_META_MAX);
	char chunk[16384];
	la_ssize_t got;

	while ((got = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		if (el_buf_put(&b, chunk, (size_t)got) != 0) {
			el_buf_release(&b);
			return NULL;
		}
	if (got < 0) {
		el_buf_release(&b);
		return NULL;
	}
	*len = b.len;
	return el_buf_detach(&b);
}

/* "X.dist-info/NAME" at the top of the wheel: the length of "X.dist-info", else 0. */
static size_t dist_info_file(const char *path, const char *name)
{
	const char *slash = strchr(path, '/');

	if (!slash || strcmp(slash + 1, name) != 0)
		return 0;
	if ((size_t)(slash - path) <= strlen(".dist-info") ||
	    strncmp(slash - strlen(".dist-info"), ".dist-info", strlen(".dist-info")) != 0)
		return 0;
	return (size_t)(slash - path);
}

/* Words that can go into a file name: PEP 427's escaped name, a version, a tag. */
static bool name_word(const char *s, const char *extra)
{
	if (!s || !*s || strlen(s) > 200)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || strchr(extra, *c)))
			return false;
	return s[0] != '.';
}

char *pk_wheel_filename(const char *name, const char *version, const char *build, const char *tags)
{
	el_buf b = EL_BUF_INIT(1024);
	bool run = false;

	/* PEP 427: runs of anything but letters, digits and "." become one "_"; "-" in the version "_" */
	for (const char *c = name; *c; c++) {
		bool word = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.';

		if (word) {
			el_buf_addc(&b, *c);
			run = false;
		} else if (!run) {
			el_buf_addc(&b, '_');
			run = true;
		}
	}
	el_buf_addc(&b, '-');
	for (const char *c = version; *c; c++)
		el_buf_addc(&b, *c == '-' ? '_' : *c);
	if (build && *build)
		el_buf_addf(&b, "-%s", build);
	el_buf_addf(&b, "-%s.whl", tags);
	if (el_buf_failed(&b)) {
		el_buf_release(&b);
		return NULL;
	}
	{
		char *s = el_buf_detach(&b);
		const char *v = strchr(s, '-') + 1;

		if (!name_word(s, "-!+") || strstr(s, "..") || !*name || !*version || !name_word(tags, "-") ||
		    (build && *build && !name_word(build, "")) || *v == '-') {
			free(s);
			return NULL;
		}
		return s;
	}
}

/* Append word to a "."-joined set unless it is there. */
static void add_part(el_strvec *set, const char *s, size_t n)
{
	char *w = el_xstrndup(s, n);

	if (el_strvec_has(set, w))
		free(w);
	else
		el_strvec_push_owned(set, w);
}

static char *join_parts(const el_strvec *set)
{
	el_buf b = EL_BUF_INIT(4096);

	for (size_t i = 0; i < set->n; i++)
		el_buf_addf(&b, "%s%s", i ? "." : "", set->v[i]);
	return el_buf_detach(&b);
}

char *pk_wheel_tags(const char *text, size_t len)
{
	el_strvec py = EL_STRVEC_INIT, abi = EL_STRVEC_INIT, plat = EL_STRVEC_INIT;
	const char *pos = text, *end = text + len, *line;
	size_t n;
	char *out = NULL;

	while (el_next_line(&pos, end, &line, &n)) {
		const char *a, *b;

		if (n < 5 || strncmp(line, "Tag:", 4) != 0)
			continue;
		line += 4, n -= 4;
		el_trim(&line, &n);
		a = memchr(line, '-', n);
		b = a ? memchr(a + 1, '-', (size_t)(line + n - a - 1)) : NULL;
		if (!a || !b)
			continue;
		add_part(&py, line, (size_t)(a - line));
		add_part(&abi, a + 1, (size_t)(b - a - 1));
		add_part(&plat, b + 1, (size_t)(line + n - b - 1));
	}
	if (py.n) {
		char *x = join_parts(&py), *y = join_parts(&abi), *z = join_parts(&plat);

		out = el_xasprintf("%s-%s-%s", x, y, z);
		free(x), free(y), free(z);
	}
	el_strvec_release(&py);
	el_strvec_release(&abi);
	el_strvec_release(&plat);
	return out;
}

int pk_wheel_identify(const char *path, off_t offset, off_t length, pk_wheel *w)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	region *r = el_xcalloc(1, sizeof(*r));
	char *meta = NULL, *wheel = NULL, *meta_dir = NULL;
	size_t mlen = 0, wlen = 0;
	int rc = -1;

	memset(w, 0, sizeof(*w));
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	r->start = offset;
	r->length = length;
	if (r->fd < 0 || !a)
		goto done;
	archive_read_support_format_zip_seekable(a);
	archive_read_set_read_callback(a, region_read);
	archive_read_set_seek_callback(a, region_seek);
	archive_read_set_skip_callback(a, region_skip);
	archive_read_set_callback_data(a, r);
	if (archive_read_open1(a) != ARCHIVE_OK)
		goto done;
	while (archive_read_next_header(a, &e) == ARCHIVE_OK && (!meta || !wheel)) {
		const char *name = archive_entry_pathname(e);
		size_t dl;

		if (!name)
			continue;
		if (!meta && (dl = dist_info_file(name, "METADATA"))) {
			meta = read_entry(a, &mlen);
			meta_dir = el_xstrndup(name, dl);
		} else if (!wheel && dist_info_file(name, "WHEEL")) {
			wheel = read_entry(a, &wlen);
		}
	}
	if (!meta || !wheel)
		goto done;
	w->name = el_rfc822_header(meta, mlen, "Name");
	w->version = el_rfc822_header(meta, mlen, "Version");
	w->tags = pk_wheel_tags(wheel, wlen);
	if (!w->name || !w->version || !w->tags)
		goto done;
	{
		char *build = el_rfc822_header(wheel, wlen, "Build");

		w->file = pk_wheel_filename(w->name, w->version, build, w->tags);
		free(build);
	}
	if (!w->file)
		goto done;
	w->norm = el_pep503_name(w->name);
	w->offset = offset;
	w->length = length;
	rc = 0;
done:
	if (rc != 0) {
		free(w->name), free(w->version), free(w->tags), free(w->file);
		memset(w, 0, sizeof(*w));
	}
	free(meta), free(wheel), free(meta_dir);
	if (a)
		archive_read_free(a);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
	return rc;
}

static void push(pk_pack *p, pk_wheel *w, const char *path, const char *from)
{
	w->path = el_xstrdup(path);
	w->from = from;
	EL_GROW(p->wheels, p->nwheels + 1, p->wcap);
	p->wheels[p->nwheels++] = *w;
}

/* Where the zip is in a pip <= 23.2 cache file: "cc=4," then msgpack; the body is a bin8/16/32 value. */
static bool cachecontrol_body(int fd, off_t size, off_t *offset, off_t *length)
{
	unsigned char head[4096];
	ssize_t n = pread(fd, head, sizeof(head), 0);

	if (n < 16 || memcmp(head, "cc=", 3) != 0)
		return false;
	for (ssize_t i = 3; i + 9 < n; i++) {
		size_t hl = head[i] == 0xc4 ? 1 : head[i] == 0xc5 ? 2 : head[i] == 0xc6 ? 4 : 0;
		unsigned long long len = 0;

		if (!hl || i + 1 + (ssize_t)hl + 4 > n)
			continue;
		for (size_t k = 0; k < hl; k++)
			len = len << 8 | head[i + 1 + k];
		if (memcmp(head + i + 1 + hl, "PK\003\004", 4) != 0)
			continue;
		if ((off_t)(i + 1 + hl) + (off_t)len > size)
			continue;
		*offset = i + 1 + (off_t)hl;
		*length = (off_t)len;
		return true;
	}
	return false;
}

static bool zip_magic(int fd, off_t at)
{
	char m[4];

	return pread(fd, m, 4, at) == 4 && memcmp(m, "PK\003\004", 4) == 0;
}

typedef enum { SCAN_WHL, SCAN_HTTP, SCAN_HTTP_V2 } scan_mode;

static void consider(pk_pack *p, const char *path, const struct stat *st, scan_mode mode, const char *from)
{
	off_t off = 0, len = st->st_size;
	pk_wheel w;
	int fd;

	if (mode == SCAN_WHL && !el_ends_with(path, ".whl"))
		return;
	if (mode == SCAN_HTTP_V2 && !el_ends_with(path, ".body"))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (mode == SCAN_HTTP) {
		if (!cachecontrol_body(fd, st->st_size, &off, &len)) {
			close(fd);
			return;
		}
	} else if (!zip_magic(fd, 0)) {
		close(fd);
		return;
	}
	close(fd);
	if (pk_wheel_identify(path, off, len, &w) == 0)
		push(p, &w, path, from);
}

static void walk(pk_pack *p, const char *dir, int depth, scan_mode mode, const char *from, size_t *budget)
{
	DIR *d;
	struct dirent *de;
	el_strvec names = EL_STRVEC_INIT;

	if (depth > PK_SCAN_DEPTH || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			el_strvec_push(&names, de->d_name);
	closedir(d);
	/* sorted: the same caches give the same kit */
	el_strvec_sort(&names);
	for (size_t i = 0; i < names.n && *budget; i++) {
		char *path = el_path_join(dir, names.v[i]);
		struct stat st;

		(*budget)--;
		if (lstat(path, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				walk(p, path, depth + 1, mode, from, budget);
			else if (S_ISREG(st.st_mode))
				consider(p, path, &st, mode, from);
		}
		free(path);
	}
	el_strvec_release(&names);
}

static char *pip_cache_dir(const pk_pack *p)
{
	const char *env;

	if (p->opts->pip_cache)
		return pk_abs(p->opts->pip_cache);
	if ((env = getenv("PIP_CACHE_DIR")) && *env)
		return pk_abs(env);
	if ((env = getenv("XDG_CACHE_HOME")) && *env)
		return el_path_join(env, "pip");
	if ((env = getenv("HOME")) && *env)
		return el_xasprintf("%s/.cache/pip", env);
	return NULL;
}

void pk_wheels_scan(pk_pack *p)
{
	char *cache = pip_cache_dir(p);
	size_t budget = PK_SCAN_FILES;

	for (size_t i = 0; i < p->opts->wheel_dir_count; i++) {
		char *d = pk_abs(p->opts->wheel_dirs[i]);

		walk(p, d, 0, SCAN_WHL, "wheels-dir", &budget);
		free(d);
	}
	if (cache) {
		char *w = el_path_join(cache, "wheels");
		char *h = el_path_join(cache, "http");
		char *h2 = el_path_join(cache, "http-v2");

		walk(p, w, 0, SCAN_WHL, "pip-wheel-cache", &budget);
		walk(p, h2, 0, SCAN_HTTP_V2, "pip-http-cache", &budget);
		walk(p, h, 0, SCAN_HTTP, "pip-http-cache", &budget);
		free(w), free(h), free(h2);
	}
	if (!budget)
		pk_warn(p, "stopped looking for wheels after %u files", PK_SCAN_FILES);
	free(cache);
}

void pk_wheels_free(pk_pack *p)
{
	for (size_t i = 0; i < p->nwheels; i++) {
		pk_wheel *w = &p->wheels[i];

		free(w->path), free(w->name), free(w->norm), free(w->version), free(w->tags), free(w->file);
	}
	free(p->wheels);
	p->wheels = NULL;
	p->nwheels = p->wcap = 0;
}
