/*
 * The NVIDIA kernel driver, from /proc/driver/nvidia/version. Its first
 * line has two forms:
 *   NVRM version: NVIDIA UNIX x86_64 Kernel Module  450.142.00  Wed Jun 30 ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build ...
 * and versions have two or three parts (418.56, 450.142.00). On the live
 * machine nvidia-smi, when present, adds the highest CUDA the driver runs.
 *
 * The driver's user-space (libcuda.so.<ver>, libnvidia-ml.so.<ver>,
 * nvidia-smi) is recorded apart, in user_space: a container image carries
 * it without the kernel module, and the two disagreeing is NVML's
 * "Driver/library version mismatch".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_NVSMI_TIMEOUT_MS 10000
#define EL_LIMIT_SMI (16u << 20) /* nvidia-smi 535 is 0.7 MB */

typedef struct {
	char *version;
	char *arch;
	const char *flavour;
} driver_line;

/* Parse the first line of /proc/driver/nvidia/version; 0 or ENVLOCK_EPARSE. */
static int parse_nvrm(const char *line, size_t len, driver_line *out)
{
	char *s = el_xstrndup(line, len), *km, *v, *a;
	size_t n;

	memset(out, 0, sizeof(*out));
	km = strstr(s, "Kernel Module");
	if (!strstr(s, "NVRM version:") || !km) {
		free(s);
		return ENVLOCK_EPARSE;
	}
	out->flavour = strstr(s, "Open Kernel Module") ? "open" : "proprietary";
	v = km + strlen("Kernel Module");
	while (*v == ' ' || *v == '\t')
		v++;
	if (strncmp(v, "for ", 4) == 0) {
		/* open module: the architecture follows "for" */
		a = v + 4;
		n = strcspn(a, " \t");
		out->arch = el_xstrndup(a, n);
		v = a + n;
	} else {
		/* proprietary: "NVIDIA UNIX <arch> Kernel Module" */
		char *u = strstr(s, "NVIDIA UNIX ");

		if (u && u + 12 < km) {
			a = u + 12;
			n = strcspn(a, " \t");
			if (a + n <= km && strncmp(a, "Open", 4) != 0)
				out->arch = el_xstrndup(a, n);
		}
	}
	while (*v == ' ' || *v == '\t')
		v++;
	n = strspn(v, "0123456789.");
	if (n == 0 || v[0] == '.' || !strchr(v, '.') || v[n - 1] == '.') {
		free(out->arch);
		out->arch = NULL;
		free(s);
		return ENVLOCK_EPARSE;
	}
	out->version = el_xstrndup(v, n);
	free(s);
	return 0;
}

/* "CUDA Version: 12.2" from nvidia-smi's header. */
static void nvsmi_max_cuda(el_probe *p, cJSON *driver)
{
	const char *argv[] = { "nvidia-smi", NULL };
	el_buf out = EL_BUF_INIT(EL_LIMIT_SMALL);

	if (el_probe_run(p, argv, EL_NVSMI_TIMEOUT_MS, &out) == 0) {
		const char *c = strstr(out.data, "CUDA Version:");

		if (c) {
			c += strlen("CUDA Version:");
			c += strspn(c, " ");
			el_jset_strn(driver, "max_cuda", c, strspn(c, "0123456789."));
			el_jset_str(driver, "max_cuda_source", "nvidia-smi");
		}
	}
	el_buf_release(&out);
}

/*
 * Where the user-space libraries are: the multiarch and lib64 folders
 * (NVIDIA's .run installer, the NVIDIA Container Toolkit's mounts),
 * Debian's nvidia/current (its packages libcuda1, libnvidia-ml1; the
 * plain names are update-alternatives links), and the old
 * nvidia/cuda images' /usr/local/nvidia/lib64.
 */
static const char *const user_lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu/nvidia/current",
	"/usr/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu/nvidia/current",
	"/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64", NULL
};
/* nvidia-smi: on PATH, or Debian's nvidia-smi package's own place */
static const char *const smi_paths[] = { "/usr/bin/nvidia-smi", "/usr/lib/nvidia/current/nvidia-smi", NULL };

/* "535.261.03": three digits, then one or two dot-separated numbers (no soname like "1" or "1.1"). */
static bool is_driver_version(const char *v, size_t n)
{
	size_t i = strspn(v, "0123456789"), dots = 0;

	if (i < 3 || i > n)
		return false;
	for (; i < n; i++) {
		if (v[i] == '.') {
			if (i + 1 >= n || v[i + 1] == '.')
				return false;
			dots++;
		} else if (v[i] < '0' || v[i] > '9') {
			return false;
		}
	}
	return dots >= 1 && dots <= 2;
}

/*
 * What the user-space files say, kept as they are written: how many, and
 * the version of the first one that has one. They are written libcuda's
 * first, then NVML's, then nvidia-smi: libcuda's version is the one the
 * CUDA runtime meets.
 */
typedef struct {
	int n;
	char *version;
} user_space_found;

static void found_file(user_space_found *us, const char *version, size_t len)
{
	us->n++;
	if (version && !us->version)
		us->version = el_xstrndup(version, len);
}

/* The real files <lib>.so.<driver version> in dir (not the soname links). */
/* lib's files among names, dir's entries */
static void user_libs_in(el_probe *p, cJSON *files, user_space_found *us, const char *dir, char **names,
			 const char *lib, const char *kind)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "%s.so.", lib);
	for (char **n = names; n && *n; n++) {
		const char *v = *n + strlen(prefix);
		char *path;
		struct stat st;

		if (!el_starts_with(*n, prefix) || !is_driver_version(v, strlen(v)))
			continue;
		path = el_path_join(dir, *n);
		if (el_root_lstat(&p->root, path, &st) == 0 && S_ISREG(st.st_mode)) {
			cJSON *f = el_jpush_obj(files);

			el_jset_str(f, "kind", kind);
			el_jset_str(f, "path", path);
			el_jset_str(f, "version", v);
			el_jset_str(f, "version_source", "file name");
			found_file(us, v, strlen(v));
		}
		free(path);
	}
}

/*
 * nvidia-smi keeps its driver version as one NUL-terminated string
 * ("535.261.03" in Debian's 535.261.03-1): taken only when exactly one
 * such string is in the file.
 */
static void smi_version(el_probe *p, const char *path, cJSON *f, user_space_found *us)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMI);
	const char *s, *end, *found = NULL;
	size_t found_len = 0;
	bool several = false;

	if (el_probe_read(p, path, &b) != 0) {
		el_buf_release(&b);
		found_file(us, NULL, 0);
		return;
	}
	end = b.data + b.len;
	for (s = b.data; s < end;) {
		size_t n = strnlen(s, (size_t)(end - s));

		if (n >= 5 && n <= 12 && (s == b.data || s[-1] == '\0') && s + n < end && is_driver_version(s, n)) {
			if (found && (found_len != n || memcmp(found, s, n) != 0))
				several = true;
			found = s;
			found_len = n;
		}
		s += n + 1;
	}
	if (found && !several) {
		el_jset_strn(f, "version", found, found_len);
		el_jset_str(f, "version_source", "file");
	}
	found_file(us, found && !several ? found : NULL, found_len);
	el_buf_release(&b);
}

static void probe_user_space(el_probe *p, cJSON *driver)
{
	cJSON *us = el_jset_obj(driver, "user_space"), *files = el_jset_arr(us, "files"), *f;
	/* written in this order, then nvidia-smi: see user_space_found */
	static const char *const kinds[] = { "libcuda", "libnvidia-ml", NULL };
	user_space_found found = { 0, NULL };
	char **names[sizeof(user_lib_dirs) / sizeof(user_lib_dirs[0])] = { NULL };

	/* each folder listed once (the multiarch one holds thousands of files) */
	for (size_t d = 0; user_lib_dirs[d]; d++)
		if (el_root_list(&p->root, user_lib_dirs[d], &names[d], NULL) != 0)
			names[d] = NULL;
	for (const char *const *k = kinds; *k; k++)
		for (size_t d = 0; user_lib_dirs[d]; d++)
			user_libs_in(p, files, &found, user_lib_dirs[d], names[d], *k, *k);
	for (size_t d = 0; user_lib_dirs[d]; d++)
		el_strv_free(names[d]);
	for (const char *const *s = smi_paths; *s; s++) {
		struct stat st;

		if (el_root_lstat(&p->root, *s, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		f = el_jpush_obj(files);
		el_jset_str(f, "kind", "nvidia-smi");
		el_jset_str(f, "path", *s);
		smi_version(p, *s, f, &found);
	}
	if (found.version)
		el_jset_str(us, "version", found.version);
	el_jset_str(us, "status", found.n ? (found.version ? "present" : "unknown") : "absent");
	free(found.version);
}

/* gpu.driver's status, also handed to the GPU probe */
static void driver_status(el_probe *p, cJSON *driver, const char *status)
{
	el_jset_str(driver, "status", status);
	free(p->driver_status);
	p->driver_status = el_xstrdup(status);
}

void el_probe_driver(el_probe *p)
{
	static const char path[] = "/proc/driver/nvidia/version";
	cJSON *gpu = el_probe_section(p, EL_SEC_GPU), *driver = el_jset_obj(gpu, "driver");
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;
	driver_line d;
	int rc = el_probe_read_text(p, path, &b);

	probe_user_space(p, driver);
	if (rc != 0) {
		driver_status(p, driver, rc == ENVLOCK_ENOTFOUND ? "absent" : "unknown");
		el_buf_release(&b);
		return;
	}
	el_jset_str(driver, "source", path);
	pos = b.data;
	if (!el_next_line(&pos, b.data + b.len, &line, &len) || parse_nvrm(line, len, &d) != 0) {
		el_probe_warn(p, "'%s': no \"NVRM version: ... Kernel Module <version>\" line", path);
		driver_status(p, driver, "unknown");
		el_buf_release(&b);
		return;
	}
	driver_status(p, driver, "present");
	el_jset_strn(driver, "raw", line, len);
	el_jset_str(driver, "version", d.version);
	el_jset_str(driver, "flavour", d.flavour);
	el_jset_str(driver, "arch", d.arch);
	{
		char *major = el_xstrndup(d.version, strcspn(d.version, "."));

		el_jset_int(driver, "major", atoll(major));
		free(major);
	}
	/* "GCC version:  gcc version 5.4.0 ..." — the compiler the module was built with */
	while (el_next_line(&pos, b.data + b.len, &line, &len)) {
		if (len > 12 && strncmp(line, "GCC version:", 12) == 0) {
			const char *g = line + 12;
			size_t gl = len - 12;

			el_trim(&g, &gl);
			el_jset_strn(driver, "built_with", g, gl);
		}
	}
	nvsmi_max_cuda(p, driver);
	free(d.version);
	free(d.arch);
	el_buf_release(&b);
}
