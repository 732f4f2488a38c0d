/*
 * Unit tests for envlock_bundle_extract: hostile archives are refused
 * with the right code and a one-line message naming the entry, nothing
 * is ever written outside the target, the limits stop bombs, and a good
 * bundle comes out exactly. The archives are built here with libarchive's
 * writer (a second, independent generator, tests/bundle/mkhostile.py, is
 * used by tests/cli/t0011-bundle-hostile.sh).
 */
#include "unit.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/sysmacros.h>

#include "util/buf.h"
#include "util/hash.h"
#include "util/spawn.h"

#define T_MTIME 1700000000

/* One archive entry and how the manifest describes it. */
typedef struct {
	const char *path;
	char type;              /* f file, x executable, d folder, l symlink, h hard link,
				   c char device, b block device, p fifo, z zeros, m manifest only */
	const char *data;       /* content, or link target */
	long long zeros;        /* size of a 'z' entry */
	int unlisted;           /* left out of the manifest */
	const char *msha;       /* the manifest's digest instead of the true one */
	const char *mtype;      /* the manifest's type instead of the true one */
	int munstored;          /* the manifest says "stored": false */
} spec;

typedef struct {
	char filter;            /* 'z' zstd (default), 'n' none, 'g' gzip */
	int no_head;            /* no lockfile and manifest in front */
	const char *manifest;   /* manifest text instead of the computed one */
	const char *lock_id;    /* a lock_id member for the manifest */
	const char *empty_name; /* raw tar only: this entry's name is blanked in its header */
} build;

typedef struct {
	char *dir;
	char archive[1024];
	char out[1024];
	envlock_ctx *ctx;
} fixture;

static void json_str(el_buf *b, const char *s)
{
	el_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			el_buf_addf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			el_buf_addf(b, "\\u%04x", (unsigned char)*s);
		else
			el_buf_addc(b, *s);
	}
	el_buf_addc(b, '"');
}

static void zeros_sha(long long size, char hex[EL_SHA256_HEX])
{
	static char chunk[65536];
	el_sha256 *h = el_sha256_begin();

	for (; size > 0; size -= (long long)sizeof(chunk))
		el_sha256_update(h, chunk, size < (long long)sizeof(chunk) ? (size_t)size : sizeof(chunk));
	el_sha256_end(h, hex);
}

static char *manifest_of(const spec *v, size_t n, const build *o)
{
	el_buf b = EL_BUF_INIT(1u << 30);

	el_buf_adds(&b, "{\"envlock_manifest\": 1, ");
	if (o->lock_id) {
		el_buf_adds(&b, "\"lock_id\": ");
		json_str(&b, o->lock_id);
		el_buf_adds(&b, ", ");
	}
	el_buf_adds(&b, "\"files\": [");
	for (size_t i = 0, first = 1; i < n; i++) {
		const spec *s = &v[i];
		const char *type = s->type == 'd' ? "dir" : s->type == 'l' ? "symlink" : "file";
		char hex[EL_SHA256_HEX];
		long long size = s->type == 'z' ? s->zeros : s->data ? (long long)strlen(s->data) : 0;

		if (s->unlisted)
			continue;
		if (s->type == 'z')
			zeros_sha(s->zeros, hex);
		else
			el_sha256_buf(s->data ? s->data : "", s->data ? strlen(s->data) : 0, hex);
		el_buf_adds(&b, first ? "\n  {\"path\": " : ",\n  {\"path\": ");
		first = 0;
		json_str(&b, s->path);
		el_buf_addf(&b, ", \"type\": \"%s\"", s->mtype ? s->mtype : type);
		if (strcmp(type, "file") == 0)
			el_buf_addf(&b, ", \"size\": %lld, \"sha256\": \"%s\", \"stored\": %s", size,
				      s->msha ? s->msha : hex, s->munstored ? "false" : "true");
		if (s->type == 'l') {
			el_buf_adds(&b, ", \"target\": ");
			json_str(&b, s->data);
		}
		el_buf_adds(&b, "}");
	}
	el_buf_adds(&b, "\n]}\n");
	return el_buf_detach(&b);
}

static void put(struct archive *a, const char *path, char type, const char *data, long long zeros)
{
	struct archive_entry *e = archive_entry_new();
	long long size = 0;

	archive_entry_copy_pathname(e, path);
	archive_entry_set_mtime(e, T_MTIME, 0);
	archive_entry_set_perm(e, type == 'x' ? 0755 : type == 'd' ? 0755 : 0644);
	switch (type) {
	case 'd': archive_entry_set_filetype(e, AE_IFDIR); break;
	case 'l': archive_entry_set_filetype(e, AE_IFLNK); archive_entry_copy_symlink(e, data); break;
	case 'h': archive_entry_set_filetype(e, AE_IFREG); archive_entry_copy_hardlink(e, data); break;
	case 'c': archive_entry_set_filetype(e, AE_IFCHR); archive_entry_set_rdev(e, makedev(1, 3)); break;
	case 'b': archive_entry_set_filetype(e, AE_IFBLK); archive_entry_set_rdev(e, makedev(8, 0)); break;
	case 'p': archive_entry_set_filetype(e, AE_IFIFO); break;
	case 'z': archive_entry_set_filetype(e, AE_IFREG); size = zeros; break;
	default: archive_entry_set_filetype(e, AE_IFREG); size = data ? (long long)strlen(data) : 0; break;
	}
	archive_entry_set_size(e, size);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	if (type == 'z') {
		static char chunk[1 << 20];

		for (long long left = zeros; left > 0; left -= (long long)sizeof(chunk)) {
			size_t n = left < (long long)sizeof(chunk) ? (size_t)left : sizeof(chunk);

			assert_int_equal(archive_write_data(a, chunk, n), (la_ssize_t)n);
		}
	} else if (size) {
		assert_int_equal(archive_write_data(a, data, (size_t)size), (la_ssize_t)size);
	}
	archive_entry_free(e);
}

/* Blank the name of the header block whose name is name (a raw ustar tar), fixing its checksum. */
static void blank_name(const char *path, const char *name)
{
	FILE *f = fopen(path, "r+b");
	unsigned char h[512];
	long at = 0;
	int found = 0;

	assert_non_null(f);
	while (fread(h, 1, sizeof(h), f) == sizeof(h)) {
		if (strncmp((char *)h, name, 100) == 0 && memcmp(h + 257, "ustar", 5) == 0) {
			unsigned sum = 0;

			memset(h, 0, 100);
			memset(h + 148, ' ', 8);
			for (int i = 0; i < 512; i++)
				sum += h[i];
			snprintf((char *)h + 148, 8, "%06o", sum);
			fseek(f, at, SEEK_SET);
			assert_int_equal(fwrite(h, 1, sizeof(h), f), sizeof(h));
			found = 1;
			break;
		}
		at += 512;
	}
	fclose(f);
	assert_true(found);
}

static void make_archive(const char *path, const spec *v, size_t n, const build *given)
{
	static const build defaults;
	const build *o = given ? given : &defaults;
	struct archive *a = archive_write_new();

	archive_write_set_format_pax_restricted(a);
	if (o->filter == 'g')
		archive_write_add_filter_gzip(a);
	else if (o->filter != 'n')
		archive_write_add_filter_zstd(a);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	if (!o->no_head) {
		char *m = o->manifest ? strdup(o->manifest) : manifest_of(v, n, o);

		put(a, "envlock.lock.json", 'f', "{}\n", 0);
		put(a, "MANIFEST.json", 'f', m, 0);
		free(m);
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].type != 'm')
			put(a, v[i].path, v[i].type, v[i].data, v[i].zeros);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	if (o->empty_name)
		blank_name(path, o->empty_name);
}

static void fixture_init(fixture *f)
{
	f->dir = unit_tmpdir();
	snprintf(f->archive, sizeof(f->archive), "%s/a.tar.zst", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
	assert_int_equal(envlock_ctx_new(&f->ctx), 0);
}

static void fixture_release(fixture *f)
{
	envlock_ctx_free(f->ctx);
	unit_rmtree(f->dir);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted, space-separated (malloc'd). */
static char *listing(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL, *out;
	size_t n = 0;
	el_buf b = EL_BUF_INIT(1 << 24);

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			names = realloc(names, (n + 1) * sizeof(*names));
			names[n++] = strdup(de->d_name);
		}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		el_buf_addf(&b, "%s%s", i ? " " : "", names[i]);
		free(names[i]);
	}
	free(names);
	out = el_buf_detach(&b);
	return out;
}

static void assert_listing(const char *dir, const char *want)
{
	char *got = listing(dir);

	assert_string_equal(got, want);
	free(got);
}

/* A failed extract leaves nothing: its staging folder is gone and the target never appeared. */
static void assert_nothing_left(const fixture *f)
{
	assert_int_equal(access(f->out, F_OK), -1);
	assert_listing(f->dir, "a.tar.zst");
}

/* Open descriptors of this process: an extraction, failed or not, leaves none behind. */
static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int extract_with(fixture *f, const envlock_extract_opts *opts)
{
	int before = fd_count(), rc = envlock_bundle_extract(f->ctx, f->archive, f->out, opts);

	assert_int_equal(fd_count(), before);
	return rc;
}

/* Extract with the defaults; assert the code and the message (after "'<archive>': "). */
static void expect(fixture *f, int code, const char *msg)
{
	char want[8192];

	assert_int_equal(extract_with(f, NULL), code);
	snprintf(want, sizeof(want), "'%s': %s", f->archive, msg);
	assert_string_equal(envlock_error_last(f->ctx), want);
}

static void read_file(const char *path, char *buf, size_t size)
{
	FILE *fp = fopen(path, "rb");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, size - 1, fp);
	buf[n] = '\0';
	fclose(fp);
}

static const spec good[] = {
	{ "exp1", 'd', NULL, 0, 0, NULL, NULL, 0 },
	{ "exp1/config.py", 'f', "lr = 0.01\n", 0, 0, NULL, NULL, 0 },
	{ "exp1/epoch_0.pth", 'm', "left out", 0, 0, NULL, NULL, 1 },
	{ "exp1/epoch_1.pth", 'f', "weights", 0, 0, NULL, NULL, 0 },
	{ "exp1/latest.pth", 'l', "epoch_1.pth", 0, 0, NULL, NULL, 0 },
	{ "exp1/logs", 'd', NULL, 0, 0, NULL, NULL, 0 },
	{ "exp1/logs/best.pth", 'l', "../epoch_1.pth", 0, 0, NULL, NULL, 0 },
	{ "exp1/logs/train.log", 'f', "epoch 1 loss 0.73\n", 0, 0, NULL, NULL, 0 },
	{ "exp1/run.sh", 'x', "#!/bin/sh\n", 0, 0, NULL, NULL, 0 },
};

static void good_bundle_extracts_exactly(void **state)
{
	fixture f;
	char p[4096], buf[256];
	struct stat st;

	(void)state;
	fixture_init(&f);
	make_archive(f.archive, good, sizeof(good) / sizeof(good[0]), NULL);
	assert_int_equal(extract_with(&f, NULL), 0);
	assert_listing(f.dir, "a.tar.zst out");
	assert_listing(f.out, "MANIFEST.json envlock.lock.json exp1");
	snprintf(p, sizeof(p), "%s/exp1", f.out);
	assert_listing(p, "config.py epoch_1.pth latest.pth logs run.sh");
	snprintf(p, sizeof(p), "%s/exp1/logs/train.log", f.out);
	read_file(p, buf, sizeof(buf));
	assert_string_equal(buf, "epoch 1 loss 0.73\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_mtime, T_MTIME);
	snprintf(p, sizeof(p), "%s/exp1/run.sh", f.out);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	snprintf(p, sizeof(p), "%s/exp1/latest.pth", f.out);
	assert_int_equal(readlink(p, buf, sizeof(buf)), 11);
	assert_memory_equal(buf, "epoch_1.pth", 11);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_mtime, T_MTIME);
	snprintf(p, sizeof(p), "%s/exp1/logs/best.pth", f.out);
	read_file(p, buf, sizeof(buf));
	assert_string_equal(buf, "weights");
	/* folders get their times last, after their files were written */
	snprintf(p, sizeof(p), "%s/exp1/logs", f.out);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_mtime, T_MTIME);
	snprintf(p, sizeof(p), "%s/envlock.lock.json", f.out);
	read_file(p, buf, sizeof(buf));
	assert_string_equal(buf, "{}\n");
	fixture_release(&f);
}

static void existing_target_needs_force(void **state)
{
	fixture f;
	char p[4096], want[4096], buf[64];

	(void)state;
	fixture_init(&f);
	make_archive(f.archive, good, sizeof(good) / sizeof(good[0]), NULL);
	unit_write(f.out, "keep.txt", "mine\n", -1);
	unit_write(f.out, "exp1/config.py", "old\n", -1);
	assert_int_equal(extract_with(&f, NULL), ENVLOCK_EEXISTS);
	snprintf(want, sizeof(want), "'%s': already exists", f.out);
	assert_string_equal(envlock_error_last(f.ctx), want);
	assert_listing(f.out, "exp1 keep.txt");

	envlock_extract_opts force = { 0, 0, 0, 1 };
	assert_int_equal(extract_with(&f, &force), 0);
	assert_listing(f.out, "MANIFEST.json envlock.lock.json exp1 keep.txt");
	snprintf(p, sizeof(p), "%s/exp1/config.py", f.out);
	read_file(p, buf, sizeof(buf));
	assert_string_equal(buf, "lr = 0.01\n");
	/* and again: everything is replaced in place, no temporary left behind */
	assert_int_equal(extract_with(&f, &force), 0);
	snprintf(p, sizeof(p), "%s/exp1", f.out);
	assert_listing(p, "config.py epoch_1.pth latest.pth logs run.sh");
	fixture_release(&f);
}

/* --force into a folder holding symlinks that lead out: they are replaced or refused, never followed. */
static void force_never_follows_existing_links(void **state)
{
	static const spec v[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/a.txt", 'f', "new\n", 0, 0, NULL, NULL, 0 },
	};
	static const spec v2[] = {
		{ "v", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "v/x", 'f', "x\n", 0, 0, NULL, NULL, 0 },
	};
	envlock_extract_opts force = { 0, 0, 0, 1 };
	fixture f;
	char outside[1024], buf[64], p[4096];

	(void)state;
	fixture_init(&f);
	snprintf(outside, sizeof(outside), "%s/outside", f.dir);
	unit_write(outside, "a.txt", "precious\n", -1);
	snprintf(p, sizeof(p), "%s/w", f.out);
	unit_mkdirs(p);
	unit_symlink(f.out, "w/a.txt", "../../outside/a.txt");
	unit_symlink(f.out, "v", "../outside");
	make_archive(f.archive, v, 2, NULL);
	assert_int_equal(extract_with(&f, &force), 0);
	snprintf(p, sizeof(p), "%s/a.txt", outside);
	read_file(p, buf, sizeof(buf));
	assert_string_equal(buf, "precious\n");
	snprintf(p, sizeof(p), "%s/w/a.txt", f.out);
	read_file(p, buf, sizeof(buf));
	assert_string_equal(buf, "new\n");

	make_archive(f.archive, v2, 2, NULL);
	assert_int_equal(extract_with(&f, &force), ENVLOCK_EINVAL);
	snprintf(p, sizeof(p), "'%s': entry 'v': already in the target and not a folder, refused", f.archive);
	assert_string_equal(envlock_error_last(f.ctx), p);
	assert_listing(outside, "a.txt");

	/* no folder entry first: the file's own path goes through the link */
	make_archive(f.archive, v2 + 1, 1, NULL);
	assert_int_equal(extract_with(&f, &force), ENVLOCK_EINVAL);
	snprintf(p, sizeof(p), "'%s': entry 'v/x': 'v' in the target is not a folder (a symlink or a file), refused",
		 f.archive);
	assert_string_equal(envlock_error_last(f.ctx), p);
	assert_listing(outside, "a.txt");
	fixture_release(&f);
}

/* a refused archive leaves nothing: extract writes into a staging folder beside the target, removed on failure */
static void refuse_one(const spec *v, size_t n, int code, const char *msg)
{
	fixture f;

	fixture_init(&f);
	make_archive(f.archive, v, n, NULL);
	expect(&f, code, msg);
	assert_listing(f.dir, "a.tar.zst");
	fixture_release(&f);
}

#define REFUSE(v, code, msg) refuse_one(v, sizeof(v) / sizeof(v[0]), code, msg)

static void dotdot_and_absolute_refused(void **state)
{
	static const spec dotdot[] = { { "../evil", 'f', "evil\n", 0, 0, NULL, NULL, 0 } };
	static const spec inner[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/../../evil", 'f', "evil\n", 0, 0, NULL, NULL, 0 },
	};
	static const spec trailing[] = { { "w/..", 'd', NULL, 0, 0, NULL, NULL, 0 } };
	char abs[256], msg[512];
	spec absolute[1] = { { abs, 'f', "evil\n", 0, 0, NULL, NULL, 0 } };

	(void)state;
	REFUSE(dotdot, ENVLOCK_EINVAL, "entry '../evil': '..' in the path, refused");
	REFUSE(inner, ENVLOCK_EINVAL, "entry 'w/../../evil': '..' in the path, refused");
	REFUSE(trailing, ENVLOCK_EINVAL, "entry 'w/../': '..' in the path, refused");
	snprintf(abs, sizeof(abs), "/tmp/envlock-evil-%ld", (long)getpid());
	snprintf(msg, sizeof(msg), "entry '%s': absolute path, refused", abs);
	REFUSE(absolute, ENVLOCK_EINVAL, msg);
	assert_int_equal(access(abs, F_OK), -1);
}

static void odd_names_refused(void **state)
{
	static const spec control[] = { { "w/a\nb\033[31m", 'f', "x", 0, 0, NULL, NULL, 0 } };
	static const spec dot[] = { { "w/./a", 'f', "x", 0, 0, NULL, NULL, 0 } };
	static const spec slashes[] = { { "w//a", 'f', "x", 0, 0, NULL, NULL, 0 } };
	static const spec empty[] = { { "w/blank-me", 'f', "x", 0, 0, NULL, NULL, 0 } };
	build raw = { 'n', 0, NULL, NULL, "w/blank-me" };
	fixture f;

	(void)state;
	/* the message shows control bytes as '?': one line, nothing for the terminal to act on */
	REFUSE(control, ENVLOCK_EINVAL, "entry 'w/a?b?[31m': control character in the name, refused");
	REFUSE(dot, ENVLOCK_EINVAL, "entry 'w/./a': not a plain relative path, refused");
	REFUSE(slashes, ENVLOCK_EINVAL, "entry 'w//a': not a plain relative path, refused");

	fixture_init(&f);
	make_archive(f.archive, empty, 1, &raw);
	expect(&f, ENVLOCK_EINVAL, "entry '': empty name, refused");
	assert_nothing_left(&f);
	fixture_release(&f);
}

static void escaping_symlinks_refused(void **state)
{
	static const spec up[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/link", 'l', "../../outside", 0, 0, NULL, NULL, 0 },
		{ "w/link/x", 'f', "evil\n", 0, 0, NULL, NULL, 0 },
	};
	static const spec abs[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/l", 'l', "/etc", 0, 0, NULL, NULL, 0 },
	};
	/* "a" -> "b/../..": one level above the target, counted against a depth of 0 */
	static const spec top[] = { { "a", 'l', "b/../..", 0, 0, NULL, NULL, 0 } };
	/* s leads to w; t climbs from there: lexically inside, really two levels out */
	static const spec chain[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/a", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/a/s", 'l', "..", 0, 0, NULL, NULL, 0 },
		{ "w/a/t", 'l', "s/../../..", 0, 0, NULL, NULL, 0 },
	};
	static const spec empty[] = { { "w/l", 'l', "", 0, 0, NULL, NULL, 0 } };

	(void)state;
	REFUSE(up, ENVLOCK_EINVAL, "entry 'w/link': symlink leads outside the target folder ('../../outside'), refused");
	REFUSE(abs, ENVLOCK_EINVAL, "entry 'w/l': symlink to an absolute path ('/etc'), refused");
	REFUSE(top, ENVLOCK_EINVAL, "entry 'a': symlink target has '..' after a name ('b/../..'), refused");
	REFUSE(chain, ENVLOCK_EINVAL, "entry 'w/a/t': symlink target has '..' after a name ('s/../../..'), refused");
	REFUSE(empty, ENVLOCK_EINVAL, "entry 'w/l': symlink with an empty target (''), refused");
}

static void nothing_through_links_or_files(void **state)
{
	static const spec link[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/sub", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/link", 'l', "sub", 0, 0, NULL, NULL, 0 },
		{ "w/link/x", 'f', "through\n", 0, 0, NULL, NULL, 0 },
	};
	static const spec file[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/f", 'f', "data\n", 0, 0, NULL, NULL, 0 },
		{ "w/f/x", 'f', "x\n", 0, 0, NULL, NULL, 0 },
	};
	fixture f;

	(void)state;
	fixture_init(&f);
	make_archive(f.archive, link, 4, NULL);
	expect(&f, ENVLOCK_EINVAL, "entry 'w/link/x': goes through the symlink 'w/link' made by an earlier entry, refused");
	assert_nothing_left(&f);
	fixture_release(&f);
	REFUSE(file, ENVLOCK_EINVAL, "entry 'w/f/x': goes through the file 'w/f' made by an earlier entry, refused");
}

static void links_devices_fifos_refused(void **state)
{
	static const spec hard_abs[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/h", 'h', "/etc/passwd", 0, 0, NULL, NULL, 0 },
	};
	static const spec hard_up[] = { { "w/h", 'h', "../x", 0, 0, NULL, NULL, 0 } };
	static const spec hard_in[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/f", 'f', "data\n", 0, 0, NULL, NULL, 0 },
		{ "w/h", 'h', "w/f", 0, 0, NULL, NULL, 0 },
	};
	static const spec chr[] = { { "w/null", 'c', NULL, 0, 0, NULL, NULL, 0 } };
	static const spec blk[] = { { "w/sda", 'b', NULL, 0, 0, NULL, NULL, 0 } };
	static const spec fifo[] = { { "w/fifo", 'p', NULL, 0, 0, NULL, NULL, 0 } };

	(void)state;
	REFUSE(hard_abs, ENVLOCK_EINVAL, "entry 'w/h': hard link (to '/etc/passwd'), refused: bundles have none");
	REFUSE(hard_up, ENVLOCK_EINVAL, "entry 'w/h': hard link (to '../x'), refused: bundles have none");
	REFUSE(hard_in, ENVLOCK_EINVAL, "entry 'w/h': hard link (to 'w/f'), refused: bundles have none");
	REFUSE(chr, ENVLOCK_EINVAL, "entry 'w/null': character device, refused");
	REFUSE(blk, ENVLOCK_EINVAL, "entry 'w/sda': block device, refused");
	REFUSE(fifo, ENVLOCK_EINVAL, "entry 'w/fifo': fifo, refused");
}

static void duplicates_refused(void **state)
{
	static const spec file[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/a.txt", 'f', "same\n", 0, 0, NULL, NULL, 0 },
		{ "w/a.txt", 'f', "same\n", 0, 1, NULL, NULL, 0 },
	};
	static const spec dir[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/", 'd', NULL, 0, 1, NULL, NULL, 0 },
	};
	static const spec lock[] = { { "envlock.lock.json", 'f', "{}\n", 0, 0, NULL, NULL, 0 } };
	/* a folder made for w/x/y, then a file where it is */
	static const spec implicit[] = {
		{ "w/x/y", 'f', "y\n", 0, 0, NULL, NULL, 0 },
		{ "w/x", 'f', "x\n", 0, 0, NULL, NULL, 0 },
	};

	(void)state;
	REFUSE(file, ENVLOCK_EINVAL, "entry 'w/a.txt': appears twice in the archive, refused");
	REFUSE(dir, ENVLOCK_EINVAL, "entry 'w': appears twice in the archive, refused");
	REFUSE(lock, ENVLOCK_EINVAL, "entry 'envlock.lock.json': appears twice in the archive, refused");
	REFUSE(implicit, ENVLOCK_EINVAL, "entry 'w/x': earlier entries made it a folder, refused");
}

static void manifest_mismatches(void **state)
{
	static const spec flipped[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/a.txt", 'f', "good\n", 0, 0, NULL, NULL, 0 },
		{ "w/b.txt", 'f', "tampered\n", 0, 0, "0000000000000000000000000000000000000000000000000000000000000000", NULL, 0 },
		{ "w/c.txt", 'f', "never reached\n", 0, 0, NULL, NULL, 0 },
	};
	static const spec unlisted[] = { { "w/extra", 'f', "x", 0, 1, NULL, NULL, 0 } };
	static const spec type[] = { { "w/a", 'f', "x", 0, 0, NULL, "symlink", 0 } };
	static const spec unstored[] = { { "w/a.pth", 'f', "weights", 0, 0, NULL, NULL, 1 } };
	static const spec missing[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/gone.txt", 'm', "x", 0, 0, NULL, NULL, 0 },
	};
	fixture f;

	(void)state;
	fixture_init(&f);
	make_archive(f.archive, flipped, 4, NULL);
	expect(&f, ENVLOCK_ERROR, "entry 'w/b.txt': content does not match its sha256 in the manifest");
	assert_nothing_left(&f);
	fixture_release(&f);
	REFUSE(unlisted, ENVLOCK_ERROR, "entry 'w/extra': not in the manifest");
	REFUSE(type, ENVLOCK_ERROR, "entry 'w/a': its type does not match the manifest");
	REFUSE(unstored, ENVLOCK_ERROR, "entry 'w/a.pth': stored, but the manifest says it was left out");
	REFUSE(missing, ENVLOCK_ERROR, "entry 'w/gone.txt': in the manifest but missing from the archive");
}

static void not_a_bundle(void **state)
{
	static const spec files[] = { { "w/a.txt", 'f', "a\n", 0, 0, NULL, NULL, 0 } };
	build nohead = { 'z', 1, NULL, NULL, NULL };
	build notjson = { 'z', 0, "not json", NULL, NULL };
	build future = { 'z', 0, "{\"envlock_manifest\": 2, \"files\": []}", NULL, NULL };
	build twice = { 'z', 0,
			"{\"envlock_manifest\": 1, \"files\": [{\"path\": \"w\", \"type\": \"dir\"},"
			" {\"path\": \"w/\", \"type\": \"dir\"}]}", NULL, NULL };
	build badid = { 'z', 0, NULL, "sha256:0000", NULL };
	fixture f;

	(void)state;
	fixture_init(&f);
	make_archive(f.archive, files, 1, &nohead);
	expect(&f, ENVLOCK_EPARSE, "not an envlock bundle (no envlock.lock.json where it belongs)");
	make_archive(f.archive, files, 1, &notjson);
	expect(&f, ENVLOCK_EPARSE, "MANIFEST.json is not an envlock manifest");
	make_archive(f.archive, files, 1, &future);
	expect(&f, ENVLOCK_EVERSION, "bundle manifest format 2 is not supported");
	make_archive(f.archive, files, 1, &twice);
	expect(&f, ENVLOCK_EPARSE, "MANIFEST.json lists 'w' twice");
	make_archive(f.archive, files, 1, &badid);
	expect(&f, ENVLOCK_ERROR, "entry 'envlock.lock.json': its id does not match the manifest's lock_id");
	/* the head is checked first: none of these made the target folder */
	assert_listing(f.dir, "a.tar.zst");
	fixture_release(&f);
}

static void corrupt_archives(void **state)
{
	static const spec big[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/a.txt", 'f', "first\n", 0, 0, NULL, NULL, 0 },
		{ "w/noise.bin", 'f', NULL, 0, 0, NULL, NULL, 0 },
	};
	spec v[3];
	build gz = { 'g', 0, NULL, NULL, NULL }, raw = { 'n', 0, NULL, NULL, NULL };
	char *noise = malloc(600001), want[8192];
	struct stat st;
	fixture f;
	unsigned x = 12345;

	(void)state;
	/* incompressible, so the cut lands in its data */
	for (int i = 0; i < 600000; i++) {
		x = x * 1103515245u + 12345u;
		noise[i] = (char)('A' + (x >> 16) % 26);
	}
	noise[600000] = '\0';
	memcpy(v, big, sizeof(v));
	v[2].data = noise;
	fixture_init(&f);
	make_archive(f.archive, v, 3, NULL);
	assert_int_equal(stat(f.archive, &st), 0);
	assert_int_equal(truncate(f.archive, st.st_size / 2), 0);
	expect(&f, ENVLOCK_EIO, "truncated zstd input (in 'w/noise.bin')");
	assert_nothing_left(&f);

	/* plain tar is accepted, gzip is not (only zstd reaches the decompressor) */
	unit_rmtree(strdup(f.out));
	make_archive(f.archive, v, 3, &raw);
	assert_int_equal(extract_with(&f, NULL), 0);
	unit_rmtree(strdup(f.out));
	make_archive(f.archive, v, 3, &gz);
	expect(&f, ENVLOCK_EPARSE, "unrecognized archive format");
	unit_write(f.dir, "a.tar.zst", "\x28\xb5\x2f\xfd garbage that is not a zstd frame at all", -1);
	expect(&f, ENVLOCK_EIO, "zstd decompression failed: Data corruption detected");
	unit_write(f.dir, "a.tar.zst", "", 0);
	expect(&f, ENVLOCK_EPARSE, "unrecognized archive format");
	assert_listing(f.dir, "a.tar.zst");

	/* a missing archive and a missing parent folder name the path */
	snprintf(f.archive, sizeof(f.archive), "%s/none.tar.zst", f.dir);
	snprintf(want, sizeof(want), "'%s': no such file or directory", f.archive);
	assert_int_equal(extract_with(&f, NULL), ENVLOCK_ENOTFOUND);
	assert_string_equal(envlock_error_last(f.ctx), want);
	snprintf(f.archive, sizeof(f.archive), "%s/a.tar.zst", f.dir);
	make_archive(f.archive, v, 3, NULL);
	snprintf(f.out, sizeof(f.out), "%s/no/out", f.dir);
	snprintf(want, sizeof(want), "'%s': no such file or directory", f.out);
	assert_int_equal(extract_with(&f, NULL), ENVLOCK_ENOTFOUND);
	assert_string_equal(envlock_error_last(f.ctx), want);
	assert_listing(f.dir, "a.tar.zst");
	free(noise);
	fixture_release(&f);
}

static void limits_stop_early(void **state)
{
	static const spec bomb[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/zeros", 'z', NULL, 64ll << 20, 0, NULL, NULL, 0 },
	};
	static const spec big[] = {
		{ "w", 'd', NULL, 0, 0, NULL, NULL, 0 },
		{ "w/a", 'f', "0123456789", 0, 0, NULL, NULL, 0 },
		{ "w/b", 'f', "0123456789", 0, 0, NULL, NULL, 0 },
	};
	envlock_extract_opts opts;
	spec many[303];
	char names[300][16], want[8192];
	fixture f;
	struct stat st;

	(void)state;
	/* 64 MiB of zeros compress to a few KB: stopped at ~1000x, the partial file removed */
	fixture_init(&f);
	make_archive(f.archive, bomb, 2, NULL);
	assert_int_equal(stat(f.archive, &st), 0);
	assert_true(st.st_size < 64 * 1024);
	expect(&f, ENVLOCK_ELIMIT,
	       "entry 'w/zeros': expands more than 1000 times the compressed bytes read, stopped (a decompression bomb?)");
	assert_nothing_left(&f);
	/* the same archive with a higher ratio allowed comes out whole */
	unit_rmtree(strdup(f.out));
	memset(&opts, 0, sizeof(opts));
	opts.max_ratio = 1000000;
	assert_int_equal(extract_with(&f, &opts), 0);
	snprintf(want, sizeof(want), "%s/w/zeros", f.out);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_size, 64ll << 20);
	fixture_release(&f);

	/* total bytes: the lockfile and manifest count too; a file over is refused before it is written */
	fixture_init(&f);
	make_archive(f.archive, big, 3, NULL);
	memset(&opts, 0, sizeof(opts));
	{
		build plain = { 0 };
		char *m = manifest_of(big, 3, &plain);

		opts.max_total_bytes = 3 + strlen(m) + 15;
		free(m);
	}
	assert_int_equal(extract_with(&f, &opts), ENVLOCK_ELIMIT);
	snprintf(want, sizeof(want), "'%s': entry 'w/b': its 10 bytes would pass the limit of %llu in all, stopped",
		 f.archive, opts.max_total_bytes);
	assert_string_equal(envlock_error_last(f.ctx), want);
	assert_nothing_left(&f);
	unit_rmtree(strdup(f.out));
	opts.max_total_bytes += 5;
	assert_int_equal(extract_with(&f, &opts), 0);
	fixture_release(&f);

	/* entries: 3 + 300; the lockfile and manifest count */
	many[0] = (spec){ "w", 'd', NULL, 0, 0, NULL, NULL, 0 };
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "w/f%05d", i);
		many[i + 1] = (spec){ names[i], 'f', "x", 0, 0, NULL, NULL, 0 };
	}
	fixture_init(&f);
	make_archive(f.archive, many, 301, NULL);
	memset(&opts, 0, sizeof(opts));
	opts.max_entries = 100;
	assert_int_equal(extract_with(&f, &opts), ENVLOCK_ELIMIT);
	snprintf(want, sizeof(want), "'%s': more than 100 entries, stopped at 'w/f00097'", f.archive);
	assert_string_equal(envlock_error_last(f.ctx), want);
	unit_rmtree(strdup(f.out));
	opts.max_entries = 303;
	assert_int_equal(extract_with(&f, &opts), 0);
	fixture_release(&f);
}

/* The CLI test's corpus of 100,000 entries, stopped by a lower max_entries. */
static void python_many_stops_at_max_entries(void **state)
{
	const char *script = "tests/bundle/mkhostile.py";
	el_buf out = EL_BUF_INIT(1 << 16);
	envlock_extract_opts opts;
	fixture f;
	char want[4096], dir[900];
	int status = -1;

	(void)state;
	if (access(script, R_OK) != 0 || access("/usr/bin/python3", X_OK) != 0) {
		print_message("skipped: no %s or python3 here\n", script);
		skip();
	}
	fixture_init(&f);
	snprintf(dir, sizeof(dir), "%s/corpus", f.dir);
	{
		const char *argv[] = { "/usr/bin/python3", script, dir, "many", NULL };

		assert_int_equal(el_spawn(argv, 120000, &out, &status), 0);
		assert_int_equal(status, 0);
	}
	snprintf(f.archive, sizeof(f.archive), "%s/many.tar.zst", dir);
	memset(&opts, 0, sizeof(opts));
	opts.max_entries = 1000;
	assert_int_equal(extract_with(&f, &opts), ENVLOCK_ELIMIT);
	snprintf(want, sizeof(want), "'%s': more than 1000 entries, stopped at 'w/f000997'", f.archive);
	assert_string_equal(envlock_error_last(f.ctx), want);
	/* the 997 entries it wrote went with the staging folder */
	assert_int_equal(access(f.out, F_OK), -1);
	el_buf_release(&out);
	fixture_release(&f);
}

/*
 * A bundle envlock makes (concatenated zstd frames, the manifest's in
 * raw blocks) read by libarchive's own zstd and tar readers, with no
 * envlock code: the entries in order, a file of several buffers intact,
 * its digest in the manifest.
 */
static void created_bundle_read_by_libarchive(void **state)
{
	const char *lock = "tests/golden/ubuntu1604-mmdet.lock.json";
	envlock_bundle_opts opts;
	envlock_bundle_report rep;
	struct archive *a;
	struct archive_entry *e;
	el_buf names = EL_BUF_INIT(1 << 16), manifest = EL_BUF_INIT(1 << 24);
	char *dir, work[1024], out[1024], hex[EL_SHA256_HEX], got[EL_SHA256_HEX], want[128];
	char *weights = malloc(3u << 20);
	unsigned x = 99;
	envlock_ctx *ctx;

	(void)state;
	if (access(lock, R_OK) != 0) {
		print_message("skipped: no %s here (run from the repository root)\n", lock);
		skip();
	}
	for (size_t i = 0; i < (3u << 20); i++) {
		x = x * 1103515245u + 12345u;
		weights[i] = (char)(x >> 16);
	}
	el_sha256_buf(weights, 3u << 20, hex);
	dir = unit_tmpdir();
	snprintf(work, sizeof(work), "%s/exp", dir);
	snprintf(out, sizeof(out), "%s/exp.tar.zst", dir);
	unit_write(work, "a.log", "epoch 1 loss 0.5\n", -1);
	unit_write(work, "w.pth", weights, 3l << 20);
	unit_write(work, "sub/b.txt", "b\n", -1);
	unit_symlink(work, "latest.pth", "w.pth");
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	memset(&opts, 0, sizeof(opts));
	opts.lock_path = lock;
	assert_int_equal(envlock_bundle_create(ctx, work, out, &opts), 0);
	assert_int_equal(envlock_bundle_verify(&rep, ctx, out, NULL), 0);
	assert_int_equal(rep.problems, 0);
	assert_int_equal(rep.entries, 5);

	a = archive_read_new();
	assert_int_equal(archive_read_support_filter_zstd(a), ARCHIVE_OK);
	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_filename(a, out, 65536), ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		char buf[65536];
		la_ssize_t n;

		el_buf_addf(&names, "%s%s", names.len ? " " : "", name);
		if (strcmp(name, "MANIFEST.json") == 0) {
			while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
				el_buf_add(&manifest, buf, (size_t)n);
			assert_int_equal(n, 0);
		} else if (strcmp(name, "exp/w.pth") == 0) {
			el_sha256 *h = el_sha256_begin();

			while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
				el_sha256_update(h, buf, (size_t)n);
			assert_int_equal(n, 0);
			el_sha256_end(h, got);
			assert_string_equal(got, hex);
		}
	}
	assert_string_equal(el_buf_cstr(&names),
			    "envlock.lock.json MANIFEST.json exp/a.log exp/latest.pth exp/sub/ exp/sub/b.txt exp/w.pth");
	snprintf(want, sizeof(want), "\"sha256\": \"%s\"", hex);
	assert_non_null(strstr(el_buf_cstr(&manifest), want));
	archive_read_free(a);
	el_buf_release(&names);
	el_buf_release(&manifest);
	envlock_ctx_free(ctx);
	free(weights);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_bundle_extracts_exactly),
		cmocka_unit_test(existing_target_needs_force),
		cmocka_unit_test(force_never_follows_existing_links),
		cmocka_unit_test(dotdot_and_absolute_refused),
		cmocka_unit_test(odd_names_refused),
		cmocka_unit_test(escaping_symlinks_refused),
		cmocka_unit_test(nothing_through_links_or_files),
		cmocka_unit_test(links_devices_fifos_refused),
		cmocka_unit_test(duplicates_refused),
		cmocka_unit_test(manifest_mismatches),
		cmocka_unit_test(not_a_bundle),
		cmocka_unit_test(corrupt_archives),
		cmocka_unit_test(limits_stop_early),
		cmocka_unit_test(python_many_stops_at_max_entries),
		cmocka_unit_test(created_bundle_read_by_libarchive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
