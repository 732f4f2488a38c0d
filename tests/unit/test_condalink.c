/*
 * Unit tests for lib/condalink, conda's link step without conda: the
 * prefix replacement rules (conda/core/portability.py's cases), noarch
 * python's paths, links that stay inside the prefix; then environments
 * made from .tar.bz2 archives written here with libarchive (the .conda
 * form, made by Debian's cph, is tests/cli/t0110-conda-link.sh's): the
 * files, the records, and hostile archives refused with nothing left.
 */
#include "unit.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>

#include "condalink/condalink.h"
#include "util/hash.h"

/* --- the rules ------------------------------------------------------------ */

static void test_binary_replace(void **state)
{
	char a[] = "xxxaaaaaxyz\0zz", b[] = "xxxaaaaaxyz\0zz", c[] = "xxxaaaaaxyz\0zz";
	char d[] = "aaaaa/x\0aaaaa/y\0tail";
	char *out;
	size_t len, n;

	(void)state;
	/* conda's own tests of binary_replace (tests/test_install.py TestBinaryReplace) */
	assert_int_equal(el_clink_replace(&out, &len, a, sizeof(a) - 1, "aaaaa", "bbbbb", true, &n), 0);
	assert_memory_equal(out, "xxxbbbbbxyz\0zz", 14);
	assert_int_equal(el_clink_replace(&out, &len, b, sizeof(b) - 1, "aaaaa", "bbbb", true, &n), 0);
	assert_memory_equal(out, "xxxbbbbxyz\0\0zz", 14);
	assert_int_equal(len, 14);
	assert_int_equal(el_clink_replace(&out, &len, c, sizeof(c) - 1, "aaaaa", "bbbbbbbb", true, &n), -1);
	assert_memory_equal(c, "xxxaaaaaxyz\0zz", 14);
	/* two strings, each padded on its own */
	assert_int_equal(el_clink_replace(&out, &len, d, sizeof(d) - 1, "aaaaa", "/p", true, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(out, "/p/x\0\0\0\0/p/y\0\0\0\0tail", sizeof(d) - 1);
}

static void test_text_replace(void **state)
{
	char t[] = "#!/ph/bin/python\nprefix=/ph\n/ph/ph";
	char *out;
	size_t len, n;

	(void)state;
	assert_int_equal(el_clink_replace(&out, &len, t, strlen(t), "/ph", "/a/longer/prefix", false, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(out, "#!/a/longer/prefix/bin/python\nprefix=/a/longer/prefix\n/a/longer/prefix/a/longer/prefix");
	assert_int_equal(len, strlen(out));
	free(out);
}

/* shebang(IN) after conda's long shebang rule, malloc'd; changed says whether it did change */
static char *shebang(const char *in, bool *changed)
{
	size_t len = strlen(in);
	char *d = strdup(in);

	assert_non_null(d);
	*changed = el_clink_long_shebang(&d, &len);
	assert_int_equal(strlen(d), len);
	return d;
}

static void test_long_shebang(void **state)
{
	char longp[200], in[512], want[512], *out;
	bool changed;

	(void)state;
	memset(longp, 'p', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	/* 127 bytes is the kernel's limit: kept */
	snprintf(in, sizeof(in), "#!/%.*s/bin/python\nprint(1)\n", 127 - 2 - 1 - 11, longp);
	out = shebang(in, &changed);
	assert_false(changed);
	assert_string_equal(out, in);
	free(out);
	/* one more: /usr/bin/env and the program's name, the options kept, every copy of the line replaced */
	snprintf(in, sizeof(in), "#!/%.*s/bin/python -E -s\nx\n#!/%.*s/bin/python -E -s\n", 127 - 2 - 1 - 17 + 1, longp,
		 127 - 2 - 1 - 17 + 1, longp);
	out = shebang(in, &changed);
	assert_true(changed);
	assert_string_equal(out, "#!/usr/bin/env python -E -s\nx\n#!/usr/bin/env python -E -s\n");
	free(out);
	/* spaces after #!, a CR, a line with no newline after it */
	snprintf(in, sizeof(in), "#!  /%s/perl -w\r", longp);
	out = shebang(in, &changed);
	assert_true(changed);
	assert_string_equal(out, "#!/usr/bin/env perl -w\r");
	free(out);
	/* short, but an escaped space in the program's folder */
	out = shebang("#!/opt/my\\ env/bin/python\n", &changed);
	assert_true(changed);
	assert_string_equal(out, "#!/usr/bin/env python\n");
	free(out);
	/* not a shebang conda's expression matches: left alone, however long */
	snprintf(in, sizeof(in), "#!%s\n", longp);
	snprintf(want, sizeof(want), "%s", in);
	out = shebang(in, &changed);
	assert_false(changed);
	assert_string_equal(out, want);
	free(out);
	snprintf(in, sizeof(in), "# /%s\n", longp);
	out = shebang(in, &changed);
	assert_false(changed);
	free(out);
}

static void test_paths(void **state)
{
	char *s;

	(void)state;
	s = el_clink_python_xy("3.7.12");
	assert_string_equal(s, "3.7");
	free(s);
	s = el_clink_python_xy("3.11.7");
	assert_string_equal(s, "3.11");
	free(s);
	assert_null(el_clink_python_xy("x.1"));
	assert_null(el_clink_python_xy("3"));
	s = el_clink_noarch_path("site-packages/m/__init__.py", "3.7");
	assert_string_equal(s, "lib/python3.7/site-packages/m/__init__.py");
	free(s);
	s = el_clink_noarch_path("python-scripts/tool", "3.7");
	assert_string_equal(s, "bin/tool");
	free(s);
	s = el_clink_noarch_path("share/doc/x", "3.7");
	assert_string_equal(s, "share/doc/x");
	free(s);
	s = el_clink_pyc_path("lib/python3.11/site-packages/m/mod.py", "3.11");
	assert_string_equal(s, "lib/python3.11/site-packages/m/__pycache__/mod.cpython-311.pyc");
	free(s);
	assert_true(el_clink_link_inside("bin/y", "x", "/p"));
	assert_true(el_clink_link_inside("lib/a/b", "../../bin/x", "/p"));
	assert_false(el_clink_link_inside("lib/a/b", "../../../etc/passwd", "/p"));
	assert_false(el_clink_link_inside("bin/y", "../..", "/p"));
	assert_true(el_clink_link_inside("bin/y", "/p/lib/x", "/p"));
	assert_false(el_clink_link_inside("bin/y", "/etc/passwd", "/p"));
	assert_false(el_clink_link_inside("bin/y", "/pp/x", "/p"));
	assert_false(el_clink_link_inside("bin/y", "/p/../etc", "/p"));
	assert_false(el_clink_link_inside("bin/y", "", "/p"));
}

/* --- archives ---------------------------------------------------------------- */

typedef struct {
	const char *path;
	char type;         /* f file, x executable, l link */
	const char *data;  /* content or link target */
	size_t len;        /* 0: strlen */
} ent;

/* A .tar.bz2 at path holding the entries; truncated to cut bytes when cut > 0. */
static void write_tar_bz2(const char *path, const ent *e, size_t n, long cut)
{
	struct archive *a = archive_write_new();
	struct archive_entry *ae = archive_entry_new();

	archive_write_add_filter_bzip2(a);
	archive_write_set_format_pax_restricted(a);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		size_t len = e[i].len ? e[i].len : strlen(e[i].data);

		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, e[i].path);
		archive_entry_set_mtime(ae, 1700000000, 0);
		if (e[i].type == 'l') {
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_perm(ae, 0777);
			archive_entry_set_symlink(ae, e[i].data);
			archive_write_header(a, ae);
		} else {
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_perm(ae, e[i].type == 'x' ? 0755 : 0644);
			archive_entry_set_size(ae, (la_int64_t)len);
			archive_write_header(a, ae);
			archive_write_data(a, e[i].data, len);
		}
	}
	archive_entry_free(ae);
	archive_write_close(a);
	archive_write_free(a);
	if (cut > 0) {
		struct stat st;

		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(truncate(path, st.st_size - cut), 0);
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

static void sha_of(const char *path, char hex[EL_SHA256_HEX])
{
	size_t len;
	char *b = slurp(path, &len);

	el_sha256_buf(b, len, hex);
	free(b);
}

#define PH "/opt/anaconda1anaconda2anaconda3"
#define BIN_PH "/placehold_placehold_placehold_placehold_placehold_placehold"

static const char elf_like[] = "\x7f" "ELF....RPATH=" BIN_PH "/lib\0..." BIN_PH "/lib:" BIN_PH "/x\0end";

static const char lib_paths[] =
	"{\"paths_version\": 1, \"paths\": ["
	"{\"_path\": \"etc/lib.conf\", \"path_type\": \"hardlink\", \"prefix_placeholder\": \"" PH "\", \"file_mode\": \"text\"},"
	"{\"_path\": \"lib/libx.so.1\", \"path_type\": \"hardlink\", \"prefix_placeholder\": \"" BIN_PH "\", \"file_mode\": \"binary\"},"
	"{\"_path\": \"lib/libx.so\", \"path_type\": \"softlink\"},"
	"{\"_path\": \"share/data\", \"path_type\": \"hardlink\", \"no_link\": true},"
	"{\"_path\": \"bin/tool\", \"path_type\": \"hardlink\"}]}";

/* A package "lib": a text and a binary placeholder, a link, a no_link file, an executable. */
static void make_lib(const char *path, const char *paths_json, long cut)
{
	const ent e[] = {
		{ "info/index.json", 'f', "{\"name\": \"elc-lib\", \"version\": \"1.0\", \"build\": \"h0_0\", \"build_number\": 0, \"subdir\": \"linux-64\", \"depends\": []}", 0 },
		{ "info/paths.json", 'f', paths_json, 0 },
		{ "etc/lib.conf", 'f', "prefix=" PH "\nlibdir=" PH "/lib\n", 0 },
		{ "lib/libx.so.1", 'f', elf_like, sizeof(elf_like) - 1 },
		{ "lib/libx.so", 'l', "libx.so.1", 0 },
		{ "share/data", 'f', "no link\n", 0 },
		{ "bin/tool", 'x', "#!/bin/sh\necho tool\n", 0 },
	};

	write_tar_bz2(path, e, sizeof(e) / sizeof(e[0]), cut);
}

/* An old package: info/files and info/has_prefix only. */
static void make_old(const char *path)
{
	const ent e[] = {
		{ "info/index.json", 'f', "{\"name\": \"elc-old\", \"version\": \"0.9\", \"build\": \"0\", \"build_number\": 0}", 0 },
		{ "info/files", 'f', "bin/old-tool\nshare/old.txt\n", 0 },
		{ "info/has_prefix", 'f', "bin/old-tool\n", 0 },
		{ "bin/old-tool", 'x', "#!" PH "/bin/sh\n", 0 },
		{ "share/old.txt", 'f', PH " stays: not listed in has_prefix\n", 0 },
	};

	write_tar_bz2(path, e, sizeof(e) / sizeof(e[0]), 0);
}

typedef struct {
	char *dir, *prefix, lib[4096], old[4096];
	el_clink_pkg pkgs[2];
	envlock_ctx *ctx;
} fixture;

static void fixture_begin(fixture *f, const char *lib_json, long cut)
{
	memset(f, 0, sizeof(*f));
	f->dir = unit_tmpdir();
	snprintf(f->lib, sizeof(f->lib), "%s/elc-lib-1.0-h0_0.tar.bz2", f->dir);
	snprintf(f->old, sizeof(f->old), "%s/elc-old-0.9-0.tar.bz2", f->dir);
	make_lib(f->lib, lib_json, cut);
	make_old(f->old);
	f->prefix = malloc(strlen(f->dir) + 8);
	sprintf(f->prefix, "%s/env", f->dir);
	f->pkgs[0] = (el_clink_pkg){ .archive = f->lib, .channel = "https://conda.example/main", .url = "https://conda.example/main/linux-64/elc-lib-1.0-h0_0.tar.bz2" };
	f->pkgs[1] = (el_clink_pkg){ .archive = f->old, .channel = "https://conda.example/main", .url = "https://conda.example/main/linux-64/elc-old-0.9-0.tar.bz2" };
	assert_int_equal(envlock_ctx_new(&f->ctx), 0);
}

static int rm_cb(const char *p, const struct stat *st, int fl, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return fl == FTW_DP ? rmdir(p) : unlink(p);
}

static void fixture_end(fixture *f)
{
	nftw(f->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	envlock_ctx_free(f->ctx);
	free(f->dir);
	free(f->prefix);
}

/* Nothing but the archives in the folder: no environment, no staging folder. */
static void assert_nothing_left(const fixture *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	assert_int_equal(n, 2);
}

static int create(fixture *f, el_clink_result *res, size_t n)
{
	el_clink_opts o = { .prefix = f->prefix, .host_prefix = f->prefix, .log_fd = -1, .history_cmd = "unit" };

	return el_clink_create(res, f->ctx, &o, f->pkgs, n);
}

static void test_create(void **state)
{
	fixture f;
	el_clink_result res;
	char path[4096], target[256], want[512], sha[EL_SHA256_HEX];
	struct stat st, st2;
	size_t len;
	char *s;
	ssize_t tl;

	(void)state;
	fixture_begin(&f, lib_paths, 0);
	assert_int_equal(create(&f, &res, 2), 0);
	assert_int_equal(res.packages, 2);
	/* text: every occurrence */
	snprintf(path, sizeof(path), "%s/etc/lib.conf", f.prefix);
	s = slurp(path, NULL);
	snprintf(want, sizeof(want), "prefix=%s\nlibdir=%s/lib\n", f.prefix, f.prefix);
	assert_string_equal(s, want);
	free(s);
	/* binary: the same length, each string padded */
	snprintf(path, sizeof(path), "%s/lib/libx.so.1", f.prefix);
	s = slurp(path, &len);
	assert_int_equal(len, sizeof(elf_like) - 1);
	snprintf(want, sizeof(want), "RPATH=%s/lib", f.prefix);
	assert_non_null(memmem(s, len, want, strlen(want)));
	assert_null(memmem(s, len, BIN_PH, strlen(BIN_PH)));
	assert_memory_equal(s + len - 4, "\0end", 4);
	free(s);
	/* a link as a link */
	snprintf(path, sizeof(path), "%s/lib/libx.so", f.prefix);
	tl = readlink(path, target, sizeof(target) - 1);
	assert_int_equal(tl, 9);
	target[tl] = '\0';
	assert_string_equal(target, "libx.so.1");
	/* an executable keeps its mode; a hard link from the cache, which is gone: one link */
	snprintf(path, sizeof(path), "%s/bin/tool", f.prefix);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	assert_true(res.hardlinks >= 1);
	assert_true(res.copies >= 1);
	snprintf(path, sizeof(path), "%s/share/data", f.prefix);
	assert_int_equal(stat(path, &st2), 0);
	assert_int_equal(st2.st_mode & 0777, 0644);
	/* the old package: has_prefix's default placeholder, text; an unlisted file untouched */
	snprintf(path, sizeof(path), "%s/bin/old-tool", f.prefix);
	s = slurp(path, NULL);
	snprintf(want, sizeof(want), "#!%s/bin/sh\n", f.prefix);
	assert_string_equal(s, want);
	free(s);
	snprintf(path, sizeof(path), "%s/share/old.txt", f.prefix);
	s = slurp(path, NULL);
	assert_string_equal(s, PH " stays: not listed in has_prefix\n");
	free(s);
	/* the records */
	snprintf(path, sizeof(path), "%s/conda-meta/elc-lib-1.0-h0_0.json", f.prefix);
	s = slurp(path, NULL);
	{
		cJSON *r = cJSON_Parse(s), *pd;

		assert_non_null(r);
		assert_string_equal(el_jget_str(r, "channel"), "https://conda.example/main");
		assert_string_equal(el_jget_str(r, "url"), "https://conda.example/main/linux-64/elc-lib-1.0-h0_0.tar.bz2");
		assert_string_equal(el_jget_str(r, "fn"), "elc-lib-1.0-h0_0.tar.bz2");
		sha_of(f.lib, sha);
		assert_string_equal(el_jget_str(r, "sha256"), sha);
		assert_int_equal(strlen(el_jget_str(r, "md5")), 32);
		assert_int_equal(cJSON_GetArraySize(el_jget(r, "files")), 5);
		pd = el_jget(el_jget(r, "paths_data"), "paths");
		assert_int_equal(cJSON_GetArraySize(pd), 5);
		assert_string_equal(el_jget_str(el_jget(r, "link"), "source"), f.lib);
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(pd, 1), "file_mode"), "binary");
		cJSON_Delete(r);
	}
	free(s);
	snprintf(path, sizeof(path), "%s/conda-meta/history", f.prefix);
	s = slurp(path, NULL);
	assert_non_null(strstr(s, "+https://conda.example/main::elc-old-0.9-0\n"));
	free(s);
	el_clink_result_release(&res);
	/* made once: a second create into the same prefix is refused */
	assert_int_equal(create(&f, &res, 2), ENVLOCK_EEXISTS);
	fixture_end(&f);
}

/* refused: an ENVLOCK_E code, one line naming the archive, nothing left */
static void refused(const char *lib_json, long cut, const char *want, size_t n, const char *sha256, const char *prefix)
{
	fixture f;
	el_clink_result res;
	const char *msg;

	fixture_begin(&f, lib_json, cut);
	f.pkgs[0].sha256 = sha256;
	if (prefix) {
		free(f.prefix);
		f.prefix = malloc(strlen(f.dir) + strlen(prefix) + 2);
		sprintf(f.prefix, "%s/%s", f.dir, prefix);
	}
	assert_true(create(&f, &res, n) < 0);
	msg = envlock_error_last(f.ctx);
	if (!strstr(msg, want) || strchr(msg, '\n'))
		fail_msg("expected '%s' in one line, got '%s'", want, msg);
	assert_non_null(strstr(msg, "elc-lib-1.0-h0_0.tar.bz2"));
	assert_nothing_left(&f);
	el_clink_result_release(&res);
	fixture_end(&f);
}

static void test_hostile(void **state)
{
	char longp[300];

	(void)state;
	refused("{\"paths_version\": 1, \"paths\": [{\"_path\": \"../escape\", \"path_type\": \"hardlink\"}]}", 0,
		"path '../escape'", 1, NULL, NULL);
	refused("{\"paths_version\": 1, \"paths\": [{\"_path\": \"/etc/passwd\", \"path_type\": \"hardlink\"}]}", 0,
		"path '/etc/passwd'", 1, NULL, NULL);
	refused("{\"paths_version\": 1, \"paths\": [{\"_path\": \"bin/tool\", \"path_type\": \"softlink\"}]}", 0,
		"listed as a link, a file", 1, NULL, NULL);
	refused("{\"paths_version\": 1, \"paths\": [{\"_path\": \"missing/file\", \"path_type\": \"hardlink\"}]}", 0,
		"is listed in info/ and not in the archive", 1, NULL, NULL);
	refused(lib_paths, 200, "truncated", 1, NULL, NULL);
	refused(lib_paths, 0, "sha256 ", 1, "0000000000000000000000000000000000000000000000000000000000000000", NULL);
	/* a prefix longer than the binary placeholder: refused before anything is written */
	memset(longp, 'p', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	refused(lib_paths, 0, "longer than the 60 of its binary placeholder", 1, NULL, longp + 200);
	{
		char json[4096], ph[2100];

		ph[0] = '/';
		memset(ph + 1, 'q', sizeof(ph) - 2);
		ph[sizeof(ph) - 1] = '\0';
		snprintf(json, sizeof(json), "{\"paths_version\": 1, \"paths\": [{\"_path\": \"etc/lib.conf\", \"path_type\": \"hardlink\", \"prefix_placeholder\": \"%s\", \"file_mode\": \"text\"}]}", ph);
		refused(json, 0, "prefix placeholder of 2099 bytes", 1, NULL, NULL);
	}
}

/* A link in the package to outside the environment. */
static void test_link_outside(void **state)
{
	fixture f;
	el_clink_result res;
	const ent e[] = {
		{ "info/index.json", 'f', "{\"name\": \"elc-lib\", \"version\": \"1.0\", \"build\": \"h0_0\"}", 0 },
		{ "info/paths.json", 'f', "{\"paths_version\": 1, \"paths\": [{\"_path\": \"etc/passwd\", \"path_type\": \"softlink\"}]}", 0 },
		{ "etc/passwd", 'l', "/etc/passwd", 0 },
	};

	(void)state;
	fixture_begin(&f, lib_paths, 0);
	write_tar_bz2(f.lib, e, 3, 0);
	assert_int_equal(create(&f, &res, 1), ENVLOCK_EINVAL);
	assert_non_null(strstr(envlock_error_last(f.ctx), "a link to '/etc/passwd', outside the environment"));
	assert_nothing_left(&f);
	fixture_end(&f);
}

/* A folder link an earlier package made (lib64 -> lib) is written through, as conda does; one out of the prefix is not. */
static void test_dir_link(void **state)
{
	fixture f;
	el_clink_result res;
	char path[4096];
	char *s;
	const ent a[] = {
		{ "info/index.json", 'f', "{\"name\": \"elc-lib\", \"version\": \"1.0\", \"build\": \"h0_0\"}", 0 },
		{ "info/files", 'f', "lib/.keep\nlib64\n", 0 },
		{ "lib/.keep", 'f', "", 1 },
		{ "lib64", 'l', "lib", 0 },
	};
	const ent b[] = {
		{ "info/index.json", 'f', "{\"name\": \"elc-old\", \"version\": \"0.9\", \"build\": \"0\"}", 0 },
		{ "info/files", 'f', "lib64/x.so\n", 0 },
		{ "lib64/x.so", 'f', "x\n", 0 },
	};

	(void)state;
	fixture_begin(&f, lib_paths, 0);
	write_tar_bz2(f.lib, a, 4, 0);
	write_tar_bz2(f.old, b, 3, 0);
	assert_int_equal(create(&f, &res, 2), 0);
	snprintf(path, sizeof(path), "%s/lib/x.so", f.prefix);
	s = slurp(path, NULL);
	assert_string_equal(s, "x\n");
	free(s);
	el_clink_result_release(&res);
	fixture_end(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binary_replace),
		cmocka_unit_test(test_text_replace),
		cmocka_unit_test(test_long_shebang),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_link_outside),
		cmocka_unit_test(test_dir_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
