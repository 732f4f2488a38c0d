/*
 * The environment: on the live root, envlock's own (the user's shell's);
 * under a root, the tree's /etc/environment, never <root>/proc/self/environ:
 * a procfs mounted there is envlock's own process on the host, not the
 * tree's (a copied one is no better). Only an allow-list is recorded, and
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

/* One KEY=VALUE entry (source's index-th unit, e.g. "line"): kept in all, recorded in vars (and rec) when allowed. */
static void add_entry(el_probe *p, cJSON *vars, el_strvec *all, el_strvec *rec, const char *source,
		      const char *unit, size_t index, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	char *name, *value;

	if (len == 0)
		return;
	if (!eq) {
		el_probe_warn(p, "'%s': %s %zu has no '=', ignored", source, unit, index);
		return;
	}
	{
		char *entry = el_xstrndup(s, len);

		el_strvec_push_owned(all, entry);
	}
	if (!is_allowed(s, (size_t)(eq - s)))
		return;
	if (len - (size_t)(eq - s) - 1 > EL_ENV_MAX_VALUE) {
		el_probe_warn(p, "'%s': %.*s is longer than %d bytes, not recorded", source,
			      (int)(eq - s), s, EL_ENV_MAX_VALUE);
		return;
	}
	name = el_xstrndup(s, (size_t)(eq - s));
	value = el_xstrndup(eq + 1, len - (size_t)(eq - s) - 1);
	el_jset_str(vars, name, value);
	el_strvec_push_owned(rec, el_xasprintf("%s=%s", name, value));
	free(name);
	free(value);
}

/*
 * /etc/environment as pam_env reads it (pam_env(8), modules/pam_env/pam_env.c):
 * KEY=VALUE lines, '#' comments, an optional leading "export ", and one pair
 * of quotes around a value stripped.
 */
static void read_etc_environment(el_probe *p, cJSON *vars, el_strvec *all, el_strvec *rec, const char *path,
				 const el_buf *b)
{
	const char *pos = b->data, *end = b->data + b->len, *line;
	size_t len, index = 0;

	while (el_next_line(&pos, end, &line, &len)) {
		const char *eq;
		el_buf e = EL_BUF_FITS(EL_LIMIT_TEXT, "a line of the file, read under the same cap, less its quotes");

		index++;
		el_trim(&line, &len);
		if (len == 0 || line[0] == '#')
			continue;
		if (len > 7 && strncmp(line, "export ", 7) == 0) {
			line += 7;
			len -= 7;
			el_trim(&line, &len);
		}
		eq = memchr(line, '=', len);
		if (eq) {
			const char *v = eq + 1;
			size_t vl = len - (size_t)(v - line);

			if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
				v++;
				vl -= 2;
			}
			el_buf_addf(&e, "%.*s=%.*s", (int)(eq - line), line, (int)vl, v);
			add_entry(p, vars, all, rec, path, "line", index, e.data, e.len);
		} else {
			add_entry(p, vars, all, rec, path, "line", index, line, len);
		}
		el_buf_release(&e);
	}
}

void el_probe_environ(el_probe *p)
{
	static const char path[] = "/etc/environment";
	cJSON *env = el_probe_section(p, EL_SEC_ENV), *vars;
	el_strvec all = EL_STRVEC_INIT, rec = EL_STRVEC_INIT;

	if (p->root.live) {
		extern char **environ;
		size_t index = 0;

		el_jset_str(env, "status", "present");
		el_jset_str(env, "source", "/proc/self/environ");
		vars = el_jset_obj(env, "variables");
		for (char **e = environ; e && *e; e++)
			add_entry(p, vars, &all, &rec, "environ", "entry", ++index, *e, strlen(*e));
	} else {
		el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);

		if (el_probe_read(p, path, &b) != 0) {
			el_jset_str(env, "status", "absent");
		} else {
			el_jset_str(env, "status", "present");
			el_jset_str(env, "source", path);
			vars = el_jset_obj(env, "variables");
			read_etc_environment(p, vars, &all, &rec, path, &b);
		}
		el_buf_release(&b);
	}
	p->environ = el_strvec_detach(&all);
	p->env_recorded = el_strvec_detach(&rec);
}
