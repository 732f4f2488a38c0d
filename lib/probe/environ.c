/*
 * The probed process's environment: <root>/proc/self/environ, which on
 * the live root is envlock's own. Only an allow-list is recorded, and
 * never a name that says TOKEN, SECRET, PASSWORD or KEY.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_ENV_MAX_VALUE 8192

static const char *const allowed[] = {
	"CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
	"LD_LIBRARY_PATH", "PATH", "PYTHONPATH",
	"CONDA_PREFIX", "CONDA_DEFAULT_ENV", "VIRTUAL_ENV",
	"TORCH_CUDA_ARCH_LIST", "FORCE_CUDA", "MMCV_WITH_OPS", "OMP_NUM_THREADS",
	"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
	NULL
};

static bool is_secret(const char *name, size_t n)
{
	static const char *const words[] = { "TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", NULL };

	for (const char *const *w = words; *w; w++) {
		size_t wl = strlen(*w);

		for (size_t i = 0; i + wl <= n; i++)
			if (strncasecmp(name + i, *w, wl) == 0)
				return true;
	}
	return false;
}

static bool is_allowed(const char *name, size_t n)
{
	if (is_secret(name, n))
		return false;
	if (n > 5 && strncmp(name, "NCCL_", 5) == 0)
		return true;
	for (const char *const *a = allowed; *a; a++)
		if (strlen(*a) == n && strncmp(name, *a, n) == 0)
			return true;
	return false;
}

void el_probe_environ(el_probe *p)
{
	static const char path[] = "/proc/self/environ";
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	cJSON *env = el_probe_section(p, "env"), *vars;
	el_strvec all = EL_STRVEC_INIT;
	size_t index = 0;
	const char *s, *end;

	if (el_probe_read(p, path, &b) != 0) {
		el_jset_str(env, "status", "absent");
		goto done;
	}
	el_jset_str(env, "status", "present");
	el_jset_str(env, "source", path);
	vars = el_jset_obj(env, "variables");
	for (s = b.data, end = b.data + b.len; s < end; s += strlen(s) + 1) {
		const char *eq = strchr(s, '=');
		size_t len = strlen(s);

		index++;
		if (len == 0)
			continue;
		if (!eq) {
			el_probe_warn(p, "'%s': entry %zu has no '=', ignored", path, index);
			continue;
		}
		el_strvec_push(&all, s);
		if (!is_allowed(s, (size_t)(eq - s)))
			continue;
		if (len - (size_t)(eq - s) - 1 > EL_ENV_MAX_VALUE) {
			el_probe_warn(p, "'%s': %.*s is longer than %d bytes, not recorded", path,
				      (int)(eq - s), s, EL_ENV_MAX_VALUE);
			continue;
		}
		{
			char *name = el_xstrndup(s, (size_t)(eq - s));

			el_jset_str(vars, name, eq + 1);
			free(name);
		}
	}
done:
	p->environ = el_strvec_detach(&all);
	el_buf_release(&b);
}
