/*
 * The NVIDIA kernel driver, from /proc/driver/nvidia/version. Its first
 * line has two forms:
 *   NVRM version: NVIDIA UNIX x86_64 Kernel Module  450.142.00  Wed Jun 30 ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build ...
 * and versions have two or three parts (418.56, 450.142.00). On the live
 * machine nvidia-smi, when present, adds the highest CUDA the driver runs.
 */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_NVSMI_TIMEOUT_MS 10000

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

void el_probe_driver(el_probe *p)
{
	static const char path[] = "/proc/driver/nvidia/version";
	cJSON *gpu = el_probe_section(p, "gpu"), *driver = el_jset_obj(gpu, "driver");
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;
	driver_line d;
	int rc = el_probe_read_text(p, path, &b);

	if (rc != 0) {
		el_jset_str(driver, "status", rc == ENVLOCK_ENOTFOUND ? "absent" : "unknown");
		el_buf_release(&b);
		return;
	}
	el_jset_str(driver, "source", path);
	pos = b.data;
	if (!el_next_line(&pos, b.data + b.len, &line, &len) || parse_nvrm(line, len, &d) != 0) {
		el_probe_warn(p, "'%s': no \"NVRM version: ... Kernel Module <version>\" line", path);
		el_jset_str(driver, "status", "unknown");
		el_buf_release(&b);
		return;
	}
	el_jset_str(driver, "status", "present");
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
