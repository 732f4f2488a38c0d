/*
 * lib/util/elf.c: what it reads from libraries the real gcc builds
 * (checked against readelf), and that hostile files (truncated, bytes
 * flipped, tables pointing anywhere) are refused or read without any
 * read outside the file (make asan runs this under the sanitizers).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "unit.h"
#include "util/buf.h"
#include "util/elf.h"
#include "util/spawn.h"

static bool run(const char *const *argv)
{
	el_buf b = EL_BUF_INIT(1 << 16);
	int status = -1, rc = el_spawn(argv, 60000, &b, &status);

	if (rc != 0 || status != 0)
		print_message("%s failed: %s\n", argv[0], el_buf_cstr(&b));
	el_buf_release(&b);
	return rc == 0 && status == 0;
}

/*
 * dir/libv.so.1: soname libv.so.1, DT_RUNPATH "$ORIGIN/../lib:/opt/x",
 * DT_VERDEF V_1 and V_2 (a version script), and a DT_VERNEED on libc's
 * GLIBC_2.2.5 (every x86_64 program needs it through its libc calls).
 */
static bool build_versioned(const char *dir)
{
	char src[4200], map[4200], out[4200];
	const char *argv[] = { "cc", "-shared", "-fPIC", "-o", out, src, "-Wl,-soname,libv.so.1",
			       "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib:/opt/x", NULL, NULL };
	char vs[4300];

	snprintf(src, sizeof(src), "%s/v.c", dir);
	snprintf(map, sizeof(map), "%s/v.map", dir);
	snprintf(out, sizeof(out), "%s/libv.so.1", dir);
	snprintf(vs, sizeof(vs), "-Wl,--version-script=%s", map);
	argv[8] = vs;
	unit_write(dir, "v.c", "#include <stdio.h>\nint v1(void) { return puts(\"1\"); }\nint v2(void) { return 2; }\n", -1);
	unit_write(dir, "v.map", "V_1 { global: v1; local: *; };\nV_2 { global: v2; } V_1;\n", -1);
	return run(argv);
}

static el_elf_info read_path(const char *path, int *rc)
{
	el_elf_info info;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	*rc = el_elf_read(fd, &info);
	close(fd);
	return info;
}

static void reads_what_gcc_wrote(void **state)
{
	char *dir = unit_tmpdir(), path[4200];
	el_elf_info info;
	int rc, glibc = 0;

	(void)state;
	if (!build_versioned(dir)) {
		print_message("skipped: no working cc to build an ELF library\n");
		unit_rmtree(dir);
		skip();
	}
	snprintf(path, sizeof(path), "%s/libv.so.1", dir);
	info = read_path(path, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(info.soname, "libv.so.1");
	assert_null(info.rpath);
	assert_string_equal(info.runpath, "$ORIGIN/../lib:/opt/x");
	assert_null(info.interp);
	assert_non_null(info.verdef);
	assert_string_equal(info.verdef[0], "V_1");
	assert_string_equal(info.verdef[1], "V_2");
	assert_null(info.verdef[2]);
	for (size_t i = 0; i < info.nverneed; i++)
		if (strcmp(info.verneed[i].file, "libc.so.6") == 0 &&
		    strcmp(info.verneed[i].version, "GLIBC_2.2.5") == 0)
			glibc = !info.verneed[i].weak;
	if (info.machine == 62) /* EM_X86_64: the only ABI whose oldest version name is known here */
		assert_true(glibc);
	el_elf_info_release(&info);
	unit_rmtree(dir);
}

/* A search path of each length around the short first read of a name, and one far past it. */
static void reads_long_names(void **state)
{
	const size_t lens[] = { 127, 128, 129, 255, 1000 };
	char *dir = unit_tmpdir();

	(void)state;
	unit_write(dir, "l.c", "int l(void) { return 1; }\n", -1);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char src[4200], out[4200], rpath[1100], opt[1200];
		const char *argv[] = { "cc", "-shared", "-fPIC", "-o", out, src, opt, NULL };
		el_elf_info info;
		int rc;

		snprintf(src, sizeof(src), "%s/l.c", dir);
		snprintf(out, sizeof(out), "%s/libl%zu.so", dir, lens[i]);
		rpath[0] = '/';
		memset(rpath + 1, 'a', lens[i] - 1);
		rpath[lens[i]] = '\0';
		snprintf(opt, sizeof(opt), "-Wl,--enable-new-dtags,-rpath,%s", rpath);
		if (!run(argv)) {
			print_message("skipped: no working cc to build an ELF library\n");
			unit_rmtree(dir);
			skip();
		}
		info = read_path(out, &rc);
		assert_int_equal(rc, 0);
		assert_non_null(info.runpath);
		assert_int_equal(strlen(info.runpath), lens[i]);
		assert_string_equal(info.runpath, rpath);
		el_elf_info_release(&info);
	}
	unit_rmtree(dir);
}

/* "... [value]" from a readelf line, or NULL */
static char *bracketed(const char *line, const char *tag)
{
	const char *p = strstr(line, tag), *open, *close;

	if (!p || !(open = strchr(p, '[')) || !(close = strrchr(open, ']')))
		return NULL;
	return strndup(open + 1, (size_t)(close - open - 1));
}

/* the word after key in line ("File: libc.so.6  Cnt: 2" -> "libc.so.6") into out */
static bool word_after(const char *line, const char *key, char *out, size_t n)
{
	const char *p = strstr(line, key);
	size_t len;

	if (!p)
		return false;
	p += strlen(key);
	len = strcspn(p, " \n");
	if (len >= n)
		return false;
	memcpy(out, p, len);
	out[len] = '\0';
	return true;
}

/*
 * What readelf -dVW says of path, against what el_elf_read read of it;
 * "" when they agree. False when both refuse it (a linker script).
 */
static bool compare_with_readelf(const char *path, char *why, size_t whylen)
{
	const char *argv[] = { "readelf", "-dVW", path, NULL };
	el_buf b = EL_BUF_INIT((size_t)256 << 20);
	int status = -1, rc, fd = open(path, O_RDONLY), section = 0;
	size_t nneeded = 0, nverneed = 0, nverdef = 0;
	char file[512] = "";
	el_elf_info info;
	const char *line;

	why[0] = '\0';
	assert_true(fd >= 0);
	rc = el_elf_read(fd, &info);
	close(fd);
	assert_int_equal(el_spawn(argv, 120000, &b, &status), 0);
	if (status != 0 && rc != 0) {
		el_buf_release(&b);
		return false;
	}
	if (status != 0 || rc != 0) {
		snprintf(why, whylen, "readelf exit %d, el_elf_read %d", status, rc);
		goto done;
	}
	for (line = el_buf_cstr(&b); *line && !why[0]; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
		char l[4600], name[512], flags[64];
		size_t len = strcspn(line, "\n");
		char *v = NULL;

		if (len >= sizeof(l))
			continue; /* a symbol versions line of a huge library: nothing compared there */
		memcpy(l, line, len);
		l[len] = '\0';
		if (strstr(l, "Version definition section"))
			section = 'd';
		else if (strstr(l, "Version needs section"))
			section = 'r';
		else if (strstr(l, "Version symbols section"))
			section = 0;
		if ((v = bracketed(l, "(NEEDED)")) != NULL) {
			if (nneeded >= 1024 || !info.needed || !info.needed[nneeded] || strcmp(info.needed[nneeded], v) != 0)
				snprintf(why, whylen, "NEEDED %zu: readelf %s, envlock %s", nneeded, v,
					 info.needed && nneeded < 1024 && info.needed[nneeded] ? info.needed[nneeded] : "(none)");
			nneeded++;
		} else if ((v = bracketed(l, "(SONAME)")) != NULL) {
			if (!info.soname || strcmp(info.soname, v) != 0)
				snprintf(why, whylen, "SONAME: readelf %s, envlock %s", v, info.soname ? info.soname : "(none)");
		} else if ((v = bracketed(l, "(RUNPATH)")) != NULL) {
			if (!info.runpath || strcmp(info.runpath, v) != 0)
				snprintf(why, whylen, "RUNPATH: readelf %s, envlock %s", v, info.runpath ? info.runpath : "(none)");
		} else if ((v = bracketed(l, "(RPATH)")) != NULL) {
			if (!info.rpath || strcmp(info.rpath, v) != 0)
				snprintf(why, whylen, "RPATH: readelf %s, envlock %s", v, info.rpath ? info.rpath : "(none)");
		} else if (section == 'd' && strstr(l, "Rev:") && word_after(l, "Flags: ", flags, sizeof(flags)) &&
			   word_after(l, "Name: ", name, sizeof(name))) {
			if (strstr(flags, "BASE"))
				continue;
			if (!info.verdef || !info.verdef[nverdef] || strcmp(info.verdef[nverdef], name) != 0)
				snprintf(why, whylen, "version definition %zu: readelf %s, envlock %s", nverdef, name,
					 info.verdef && info.verdef[nverdef] ? info.verdef[nverdef] : "(none)");
			nverdef++;
		} else if (section == 'r' && word_after(l, "File: ", name, sizeof(name))) {
			snprintf(file, sizeof(file), "%s", name);
		} else if (section == 'r' && word_after(l, "Name: ", name, sizeof(name)) &&
			   word_after(l, "Flags: ", flags, sizeof(flags))) {
			const el_elf_verneed *n = nverneed < info.nverneed ? &info.verneed[nverneed] : NULL;

			if (!n || strcmp(n->file, file) != 0 || strcmp(n->version, name) != 0 ||
			    n->weak != (strstr(flags, "WEAK") != NULL))
				snprintf(why, whylen, "version need %zu: readelf %.200s %.200s %.60s, envlock %.200s %.200s %s", nverneed, file,
					 name, flags, n ? n->file : "(none)", n ? n->version : "", n && n->weak ? "WEAK" : "");
			nverneed++;
		}
		free(v);
	}
	if (!why[0] && (nverneed != info.nverneed || (info.needed && info.needed[nneeded]) ||
			(info.verdef && info.verdef[nverdef])))
		snprintf(why, whylen, "readelf lists %zu needed, %zu version needs, %zu definitions; envlock more",
			 nneeded, nverneed, nverdef);
done:
	el_elf_info_release(&info);
	el_buf_release(&b);
	return true;
}

/*
 * Every shared library of this machine's own (libc, libstdc++, OpenSSL,
 * CUDA 13's under /usr/local/cuda, Debian's torch when it is there),
 * read through the block cache, says what GNU readelf says: NEEDED,
 * SONAME, RUNPATH and RPATH, and the version needs and definitions in
 * their order.
 */
static void agrees_with_readelf(void **state)
{
	const char *dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64",
			       "/usr/lib/python3/dist-packages/torch/lib", "/lib/x86_64-linux-gnu" };
	const char *probe[] = { "readelf", "--version", NULL };
	size_t compared = 0;
	char why[1024];

	(void)state;
	if (!run(probe)) {
		print_message("skipped: no readelf to compare with\n");
		skip();
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;
		size_t here = 0;

		if (!dir)
			continue;
		while ((e = readdir(dir)) != NULL && here < 150) {
			char path[4200];
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
			if (!strstr(e->d_name, ".so") || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (!compare_with_readelf(path, why, sizeof(why)))
				continue;
			if (why[0])
				fail_msg("%s: %s", path, why);
			here++;
		}
		closedir(dir);
		compared += here;
	}
	print_message("compared %zu libraries with readelf\n", compared);
	assert_true(compared >= 50);
}

static void reads_a_program(void **state)
{
	el_elf_info info;
	int rc;

	(void)state;
	/* /bin/sh: PT_INTERP, DT_NEEDED libc, no soname */
	info = read_path("/bin/sh", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(info.interp);
	assert_true(info.interp[0] == '/');
	assert_non_null(info.needed);
	assert_null(info.soname);
	el_elf_info_release(&info);
}

static void write_bytes(const char *path, const unsigned char *d, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	fclose(f);
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *d;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	d = malloc((size_t)len);
	assert_non_null(d);
	assert_int_equal(fread(d, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return d;
}

/*
 * Truncated at every length up to the end of its tables, and with bytes
 * flipped at fixed pseudo-random places: each is read or refused, never
 * read past (asan), never crashes.
 */
static void hostile_files(void **state)
{
	char *dir = unit_tmpdir(), src[4200], bad[4200];
	unsigned char *d, *m;
	size_t n, refused = 0;
	uint32_t seed = 14;
	el_elf_info info;
	int rc;

	(void)state;
	if (!build_versioned(dir)) {
		print_message("skipped: no working cc to build an ELF library\n");
		unit_rmtree(dir);
		skip();
	}
	snprintf(src, sizeof(src), "%s/libv.so.1", dir);
	snprintf(bad, sizeof(bad), "%s/bad.so", dir);
	d = slurp(src, &n);
	for (size_t len = 0; len < n; len += len < 2048 ? 1 : 397) {
		write_bytes(bad, d, len);
		info = read_path(bad, &rc);
		refused += rc != 0;
		el_elf_info_release(&info);
	}
	assert_true(refused > 0);
	m = malloc(n);
	assert_non_null(m);
	for (int round = 0; round < 400; round++) {
		memcpy(m, d, n);
		for (int k = 0; k < 8; k++) {
			size_t at;

			seed = seed * 1103515245u + 12345u;
			/* most flips land in the headers and the dynamic tables, where the offsets are */
			at = (seed >> 8) % (n < 8192 ? n : 8192);
			m[at] = (unsigned char)(seed >> 3);
		}
		write_bytes(bad, m, n);
		info = read_path(bad, &rc);
		el_elf_info_release(&info);
	}
	/* a 64-bit file that says it is 32-bit: read as ELF32 or refused, never past the end */
	memcpy(m, d, n);
	m[4] = 1;
	write_bytes(bad, m, n);
	info = read_path(bad, &rc);
	if (rc == 0)
		assert_int_equal(info.bits, 32);
	el_elf_info_release(&info);
	/* garbage and an empty file */
	write_bytes(bad, (const unsigned char *)"\177ELF\002\001\001garbage", 14);
	info = read_path(bad, &rc);
	assert_int_equal(rc, ENVLOCK_EPARSE);
	write_bytes(bad, (const unsigned char *)"", 0);
	info = read_path(bad, &rc);
	assert_int_equal(rc, ENVLOCK_EPARSE);
	free(m);
	free(d);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_what_gcc_wrote),
		cmocka_unit_test(reads_long_names),
		cmocka_unit_test(reads_a_program),
		cmocka_unit_test(agrees_with_readelf),
		cmocka_unit_test(hostile_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
