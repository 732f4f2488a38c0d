/*
 * Unit tests for the system probes on small roots built here: the real
 * forms of each file (driver version lines, version.txt / version.json,
 * cuDNN headers, glibc layouts, ld.so.cache), and the real programs where
 * this machine has them (cc builds an ELF library; ldconfig -p lists the
 * machine's loader cache).
 */
#include "unit.h"

#include <fcntl.h>

#include "probe/probe.h"
#include "util/elf.h"
#include "util/root.h"
#include "util/spawn.h"

static void driver_line(const char *text, const char *version, const char *flavour,
			const char *arch)
{
	char *root = unit_tmpdir();
	envlock_lock *lock;

	unit_write(root, "proc/driver/nvidia/version", text, -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "gpu.driver.status"), "present");
	assert_string_equal(unit_str(lock, "gpu.driver.version"), version);
	assert_string_equal(unit_str(lock, "gpu.driver.flavour"), flavour);
	assert_string_equal(unit_str(lock, "gpu.driver.arch"), arch);
	assert_string_equal(unit_str(lock, "gpu.status"), "present");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void driver_version_forms(void **state)
{
	(void)state;
	driver_line("NVRM version: NVIDIA UNIX x86_64 Kernel Module  450.142.00  Wed Jun 30 22:23:07 UTC 2021\n"
		    "GCC version:  gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.12) \n",
		    "450.142.00", "proprietary", "x86_64");
	driver_line("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  (dvs-builder@U16-I3-B03-4-3)  Wed May 21 18:21:47 UTC 2025\n",
		    "575.57.08", "open", "x86_64");
	driver_line("NVRM version: NVIDIA UNIX x86_64 Kernel Module  418.56  Fri Mar 15 12:59:26 CDT 2019\n",
		    "418.56", "proprietary", "x86_64");
	driver_line("NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:35 UTC 2023\n",
		    "535.104.05", "proprietary", "aarch64");
	driver_line("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  550.54.14  Release Build\r\n",
		    "550.54.14", "open", "aarch64");
}

static void driver_garbage_is_a_warning(void **state)
{
	char *root = unit_tmpdir();
	char junk[256];
	envlock_lock *lock;

	(void)state;
	for (int i = 0; i < 256; i++)
		junk[i] = (char)i;
	unit_write(root, "proc/driver/nvidia/version", junk, sizeof(junk));
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "gpu.driver.status"), "unknown");
	assert_null(unit_str(lock, "gpu.driver.version"));
	assert_int_equal(unit_warnings_with(lock, "'/proc/driver/nvidia/version': binary data"), 1);
	envlock_lock_free(lock);
	unit_rmtree(root);

	root = unit_tmpdir();
	unit_write(root, "proc/driver/nvidia/version", "NVRM version: something else\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "gpu.driver.status"), "unknown");
	assert_int_equal(unit_warnings_with(lock, "no \"NVRM version"), 1);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void cuda_version_sources(void **state)
{
	char *root = unit_tmpdir();
	envlock_lock *lock;

	(void)state;
	/* version.txt: the patch lines are patches, not the version */
	unit_write(root, "usr/local/cuda-10.2/version.txt",
		   "CUDA Version 10.2.89\nCUDA Patch Version 10.2.1\nCUDA Patch Version 10.2.2\n", -1);
	unit_symlink(root, "usr/local/cuda", "cuda-10.2");
	/* version.json, 11.1+ */
	unit_write(root, "usr/local/cuda-11.8/version.json",
		   "{\"cuda\" : {\"name\" : \"CUDA SDK\", \"version\" : \"11.8.0\"},\n"
		   " \"cuda_nvcc\" : {\"name\" : \"CUDA NVCC\", \"version\" : \"11.8.89\"}}\n", -1);
	/* only cuda.h */
	unit_write(root, "usr/local/cuda-12.4/include/cuda.h", "#define CUDA_VERSION 12040\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "cuda.default"), "/usr/local/cuda-10.2");
	assert_string_equal(unit_str(lock, "cuda.toolkits.0.home"), "/usr/local/cuda-10.2");
	assert_string_equal(unit_str(lock, "cuda.toolkits.0.version"), "10.2.89");
	assert_string_equal(unit_str(lock, "cuda.toolkits.0.release"), "10.2");
	assert_string_equal(unit_str(lock, "cuda.toolkits.0.patches.1"), "10.2.2");
	assert_string_equal(unit_str(lock, "cuda.toolkits.0.aliases.0"), "/usr/local/cuda");
	/* the SDK stamp is kept apart; the version is nvcc's, as nvcc --version prints it */
	assert_string_equal(unit_str(lock, "cuda.toolkits.1.version"), "11.8.89");
	assert_string_equal(unit_str(lock, "cuda.toolkits.1.sdk_version"), "11.8.0");
	assert_string_equal(unit_str(lock, "cuda.toolkits.1.release"), "11.8");
	assert_string_equal(unit_str(lock, "cuda.toolkits.1.components.cuda_nvcc"), "11.8.89");
	assert_string_equal(unit_str(lock, "cuda.toolkits.2.version"), "12.4");
	assert_int_equal(envlock_lock_warning_count(lock), 0);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void cudnn_header_generations(void **state)
{
	char *root = unit_tmpdir();
	envlock_lock *lock;

	(void)state;
	/* 7.x: macros in cudnn.h */
	unit_write(root, "usr/local/cuda-9.2/version.txt", "CUDA Version 9.2.148\n", -1);
	unit_write(root, "usr/local/cuda-9.2/include/cudnn.h",
		   "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n"
		   "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n", -1);
	unit_symlink(root, "usr/local/cuda", "cuda-9.2");
	/* 9.x in /usr/include, CRLF */
	unit_write(root, "usr/include/cudnn_version.h",
		   "#define CUDNN_MAJOR 9\r\n#define CUDNN_MINOR 1\r\n#define CUDNN_PATCHLEVEL 0\r\n"
		   "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\r\n", -1);
	lock = unit_probe(root);
	/* the default toolkit's header wins; the other one is a warning */
	assert_string_equal(unit_str(lock, "cudnn.version"), "7.6.5");
	assert_string_equal(unit_str(lock, "cudnn.header"), "/usr/local/cuda-9.2/include/cudnn.h");
	assert_string_equal(unit_str(lock, "cudnn.headers.1.version"), "9.1.0");
	assert_int_equal(unit_warnings_with(lock, "cuDNN 9.1.0, but"), 1);
	envlock_lock_free(lock);
	unit_rmtree(root);

	root = unit_tmpdir();
	unit_write(root, "usr/include/cudnn_version.h", "#ifndef CUDNN_VERSION_H_\n/* nothing */\n#endif\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "cudnn.status"), "absent");
	assert_int_equal(unit_warnings_with(lock, "'/usr/include/cudnn_version.h': no CUDNN_MAJOR"), 1);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

/* Build a real shared library with the machine's compiler. */
static bool build_so(const char *dir, const char *name, const char *soname)
{
	char src[4200], out[4200], flag[512];
	const char *argv[] = { "cc", "-shared", "-fPIC", "-o", out, src, flag, NULL };
	el_buf b = EL_BUF_INIT(4096);
	int status = -1;

	snprintf(src, sizeof(src), "%s/x.c", dir);
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	snprintf(flag, sizeof(flag), "-Wl,-soname,%s", soname);
	unit_write(dir, "x.c", "#include <stdio.h>\nint envlock_x(void) { return puts(\"x\"); }\n", -1);
	if (el_spawn(argv, 60000, &b, &status) != 0 || status != 0) {
		el_buf_release(&b);
		return false;
	}
	el_buf_release(&b);
	return true;
}

static void soname_link_and_cache_state(void **state)
{
	char *root = unit_tmpdir(), dir[4000];
	envlock_lock *lock;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/usr/local/cuda-11.3/lib64", root);
	unit_mkdirs(dir);
	if (!build_so(dir, "libcudnn.so.8.2.0", "libcudnn.so.8") ||
	    !build_so(dir, "libcudnn_ops_infer.so.8.2.0", "libcudnn_ops_infer.so.8")) {
		print_message("skipped: no working cc to build an ELF library\n");
		unit_rmtree(root);
		skip();
	}
	unit_symlink(root, "usr/local/cuda-11.3/lib64/libcudnn.so", "libcudnn.so.8.2.0");
	unit_symlink(root, "usr/local/cuda-11.3/lib64/libcudnn_ops_infer.so.8", "libcudnn_ops_infer.so.8.2.0");
	unit_write(root, "usr/local/cuda-11.3/version.txt", "CUDA Version 11.3.109\n", -1);
	unit_write(root, "usr/local/cuda-11.3/include/cudnn_version.h",
		   "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 2\n#define CUDNN_PATCHLEVEL 0\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "cudnn.libraries.0.name"), "libcudnn.so.8.2.0");
	assert_string_equal(unit_str(lock, "cudnn.libraries.0.soname"), "libcudnn.so.8");
	assert_string_equal(unit_str(lock, "cudnn.libraries.0.soname_link"), "missing");
	assert_string_equal(unit_str(lock, "cudnn.libraries.0.links.0.name"), "libcudnn.so");
	assert_string_equal(unit_str(lock, "cudnn.libraries.0.ld_cache"), "unknown");
	assert_string_equal(unit_str(lock, "cudnn.libraries.1.soname_link"), "ok");
	assert_int_equal(unit_warnings_with(lock, "the loader looks for 'libcudnn.so.8', which is missing"), 1);
	assert_int_equal(unit_warnings_with(lock, "libcudnn_ops_infer"), 0);
	assert_non_null(unit_str(lock, "cudnn.libraries.0.sha256"));
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void elf_reader_matches_readelf(void **state)
{
	char *dir = unit_tmpdir(), path[4200];
	el_elf_info info;
	int fd;

	(void)state;
	if (!build_so(dir, "libenvlocktest.so.3.1", "libenvlocktest.so.3")) {
		print_message("skipped: no working cc to build an ELF library\n");
		unit_rmtree(dir);
		skip();
	}
	snprintf(path, sizeof(path), "%s/libenvlocktest.so.3.1", dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(el_elf_read(fd, &info), 0);
	assert_string_equal(info.soname, "libenvlocktest.so.3");
	assert_int_equal(info.bits, (int)(sizeof(void *) * 8));
	/* DT_NEEDED, in the order readelf -d lists it */
	{
		const char *argv[] = { "readelf", "-d", path, NULL };
		el_buf out = EL_BUF_INIT(1 << 20), want = EL_BUF_INIT(4096), got = EL_BUF_INIT(4096);
		int status = -1;

		if (el_spawn(argv, 30000, &out, &status) == 0 && status == 0) {
			for (const char *l = strstr(el_buf_cstr(&out), "Shared library: ["); l;
			     l = strstr(l + 1, "Shared library: [")) {
				const char *name = l + strlen("Shared library: ["), *end = strchr(name, ']');

				el_buf_add(&want, name, (size_t)(end - name));
				el_buf_addc(&want, '\n');
			}
			for (char **n = info.needed; n && *n; n++)
				el_buf_addf(&got, "%s\n", *n);
			assert_true(want.len > 0);
			assert_string_equal(el_buf_cstr(&got), el_buf_cstr(&want));
		} else {
			print_message("skipped: DT_NEEDED check needs readelf\n");
		}
		el_buf_release(&out);
		el_buf_release(&want);
		el_buf_release(&got);
	}
	el_elf_info_release(&info);
	close(fd);
	/* not ELF */
	snprintf(path, sizeof(path), "%s/x.c", dir);
	fd = open(path, O_RDONLY);
	assert_int_equal(el_elf_read(fd, &info), ENVLOCK_EPARSE);
	close(fd);
	unit_rmtree(dir);
}

/* The machine's own /etc/ld.so.cache, read by envlock and by `ldconfig -p`. */
static void ldcache_matches_ldconfig(void **state)
{
	const char *argv[] = { "ldconfig", "-p", NULL };
	el_buf out = EL_BUF_INIT(64u << 20), cache = EL_BUF_INIT(64u << 20);
	el_root live = EL_ROOT_LIVE_INIT;
	el_ldcache *c = NULL;
	const char *pos, *end;
	int status = -1, lines = 0;

	(void)state;
	if (el_root_read(&live, "/etc/ld.so.cache", &cache, NULL) != 0 ||
	    (el_spawn(argv, 30000, &out, &status) != 0 &&
	     (argv[0] = "/sbin/ldconfig", el_spawn(argv, 30000, &out, &status) != 0))) {
		print_message("skipped: this machine has no /etc/ld.so.cache or ldconfig\n");
		el_buf_release(&out);
		el_buf_release(&cache);
		skip();
	}
	assert_int_equal(el_ldcache_parse(&c, cache.data, cache.len), 0);
	/* "\tlibfoo.so.1 (libc6,x86-64) => /usr/lib/libfoo.so.1", in cache order */
	pos = out.data;
	end = out.data + out.len;
	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos)), *arrow, *sp;
		const char *soname, *path;

		if (!nl)
			break;
		arrow = memmem(pos, (size_t)(nl - pos), " => ", 4);
		if (pos[0] == '\t' && arrow) {
			sp = memchr(pos + 1, ' ', (size_t)(nl - pos - 1));
			assert_true((size_t)lines < el_ldcache_count(c));
			el_ldcache_entry(c, (size_t)lines, &soname, &path);
			assert_int_equal(strlen(soname), (size_t)(sp - pos - 1));
			assert_memory_equal(soname, pos + 1, strlen(soname));
			assert_int_equal(strlen(path), (size_t)(nl - arrow - 4));
			assert_memory_equal(path, arrow + 4, strlen(path));
			lines++;
		}
		pos = nl + 1;
	}
	assert_true(lines > 0);
	assert_int_equal((size_t)lines, el_ldcache_count(c));
	el_ldcache_free(c);
	el_buf_release(&out);
	el_buf_release(&cache);
}

static void ldcache_rejects_garbage(void **state)
{
	el_ldcache *c = NULL;
	char junk[100];

	(void)state;
	memset(junk, 0xab, sizeof(junk));
	assert_int_equal(el_ldcache_parse(&c, junk, sizeof(junk)), ENVLOCK_EPARSE);
	memcpy(junk, "glibc-ld.so.cache1.1", 20);
	memset(junk + 20, 0xff, 4); /* nlibs far beyond the file */
	assert_int_equal(el_ldcache_parse(&c, junk, sizeof(junk)), ENVLOCK_EPARSE);
	assert_null(c);
}

static void glibc_layouts(void **state)
{
	char *root = unit_tmpdir(), dir[4000];
	envlock_lock *lock;
	const char *banner = "\x7f" "ELF junk GNU C Library (Ubuntu GLIBC 2.23-0ubuntu11.3) stable release version 2.23, by Roland McGrath et al.\n";

	(void)state;
	snprintf(dir, sizeof(dir), "%s/lib/x86_64-linux-gnu", root);
	unit_write(root, "lib/x86_64-linux-gnu/libc-2.23.so", banner, -1);
	unit_symlink(root, "lib/x86_64-linux-gnu/libc.so.6", "libc-2.23.so");
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "system.glibc.version"), "2.23");
	assert_string_equal(unit_str(lock, "system.glibc.file"), "/lib/x86_64-linux-gnu/libc-2.23.so");
	envlock_lock_free(lock);
	unit_rmtree(root);

	root = unit_tmpdir();
	unit_symlink(root, "lib", "usr/lib");
	unit_write(root, "usr/lib/x86_64-linux-gnu/libc.so.6",
		   "GNU C Library (Debian GLIBC 2.36-9+deb12u4) stable release version 2.36.\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "system.glibc.version"), "2.36");
	assert_string_equal(unit_str(lock, "system.glibc.file"), "/usr/lib/x86_64-linux-gnu/libc.so.6");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void environment_allow_list_and_secrets(void **state)
{
	char *root = unit_tmpdir();
	const char env[] = "PATH=/usr/bin\nCUDA_HOME=\"/usr/local/cuda\"\nexport NCCL_DEBUG=INFO\n"
			   "NCCL_IB_KEY=x\nHF_TOKEN=hf_secret\nAWS_SECRET_ACCESS_KEY=s\n"
			   "MY_PASSWORD=p\nHOME=/root\nBROKEN\n# a comment\n";
	/* envlock's own process when a procfs is mounted there: never read under a root */
	const char poison[] = "CUDA_HOME=/poison\0PATH=/poison\0";
	envlock_lock *lock;

	(void)state;
	unit_write(root, "etc/environment", env, sizeof(env) - 1);
	unit_write(root, "proc/self/environ", poison, sizeof(poison) - 1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "env.variables.PATH"), "/usr/bin");
	assert_string_equal(unit_str(lock, "env.variables.CUDA_HOME"), "/usr/local/cuda");
	assert_string_equal(unit_str(lock, "env.variables.NCCL_DEBUG"), "INFO");
	assert_null(unit_get(lock, "env.variables.NCCL_IB_KEY"));
	assert_null(unit_get(lock, "env.variables.HF_TOKEN"));
	assert_null(unit_get(lock, "env.variables.HOME"));
	assert_int_equal(cJSON_GetArraySize(unit_get(lock, "env.variables")), 3);
	assert_int_equal(unit_warnings_with(lock, "'/etc/environment': line 9 has no '='"), 1);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void nothing(el_probe *p)
{
	(void)p;
}

/* envlock's own order passes; a probe that needs what no earlier row gives is named */
static void probe_order_is_checked(void **state)
{
	char why[256];
	const el_probe_step *s;
	unsigned given = 0;
	size_t n = 0;

	(void)state;
	assert_int_equal(el_probe_steps_check(el_probe_steps, why, sizeof(why)), 0);
	/* every hand-off some probe needs is given by one, and the loads are started before they are finished */
	for (s = el_probe_steps; s->name; s++, n++)
		given |= s->gives;
	for (s = el_probe_steps; s->name; s++)
		assert_int_equal(s->needs & ~given, 0);
	assert_true(n > 20);

	{
		const el_probe_step bad[] = {
			{ "python", nothing, EL_GIVES_ENVIRON, EL_GIVES_PYTHON },
			{ "environ", nothing, 0, EL_GIVES_ENVIRON },
			{ NULL, NULL, 0, 0 },
		};
		assert_int_equal(el_probe_steps_check(bad, why, sizeof(why)), -1);
		assert_string_equal(why, "the python probe needs the environment, which no probe before it gives");
	}
	{
		/* envlock's own table with two rows swapped: cuDNN before the toolkits it searches */
		el_probe_step swapped[64];
		size_t cuda = n, cudnn = n;

		assert_true(n < 64);
		memcpy(swapped, el_probe_steps, (n + 1) * sizeof(*swapped));
		for (size_t i = 0; i < n; i++) {
			if (strcmp(swapped[i].name, "cuda") == 0)
				cuda = i;
			if (strcmp(swapped[i].name, "cudnn") == 0)
				cudnn = i;
		}
		assert_true(cuda < cudnn && cudnn < n);
		swapped[cuda] = el_probe_steps[cudnn];
		swapped[cudnn] = el_probe_steps[cuda];
		assert_int_equal(el_probe_steps_check(swapped, why, sizeof(why)), -1);
		assert_string_equal(why, "the cudnn probe needs the CUDA toolkits, which no probe before it gives");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver_version_forms),
		cmocka_unit_test(driver_garbage_is_a_warning),
		cmocka_unit_test(cuda_version_sources),
		cmocka_unit_test(cudnn_header_generations),
		cmocka_unit_test(soname_link_and_cache_state),
		cmocka_unit_test(elf_reader_matches_readelf),
		cmocka_unit_test(ldcache_matches_ldconfig),
		cmocka_unit_test(ldcache_rejects_garbage),
		cmocka_unit_test(glibc_layouts),
		cmocka_unit_test(environment_allow_list_and_secrets),
		cmocka_unit_test(probe_order_is_checked),
	};
	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
