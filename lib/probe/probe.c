/* What every probe shares: warnings, the probed environment, reads under the root. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock/model.h"
#include "probe.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* vasprintf into one line: a message never spans lines. */
static char *one_line(const char *fmt, va_list ap)
{
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0)
		el_oom();
	for (char *s = msg; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
	return msg;
}

void el_probe_warn(el_probe *p, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = one_line(fmt, ap);
	va_end(ap);
	el_jpush_str(p->warnings, msg);
	if (p->opts->on_warning)
		p->opts->on_warning(msg, p->opts->warning_data);
	free(msg);
}

void el_probe_request_error(el_probe *p, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = one_line(fmt, ap);
	va_end(ap);
	el_jpush_str(p->errors, msg);
	free(msg);
}

const char *el_probe_getenv(const el_probe *p, const char *name)
{
	size_t n = strlen(name);

	for (char **e = p->environ; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

const char *el_probe_recorded_env(const el_probe *p, const char *name)
{
	size_t n = strlen(name);
	const char *val = NULL;

	/* a later entry replaces an earlier one in the lock, as here */
	for (char **e = p->env_recorded; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			val = *e + n + 1;
	return val;
}

void el_probe_warn_read(el_probe *p, const char *path, int rc, int err_no, size_t limit)
{
	if (rc == 0 || (rc == ENVLOCK_ENOTFOUND && err_no != ENOTDIR))
		return;
	if (rc == ENVLOCK_ELIMIT && err_no != ELOOP)
		el_probe_warn(p, "'%s': larger than %zu bytes, not read", path, limit);
	else
		el_probe_warn(p, "'%s': %s", path, el_root_reason(rc, err_no));
}

int el_probe_read(el_probe *p, const char *abs, el_buf *b)
{
	int e = 0, rc = el_root_read(&p->root, abs, b, &e);

	el_probe_warn_read(p, abs, rc, e, b->limit);
	return rc;
}

int el_probe_read_text(el_probe *p, const char *abs, el_buf *b)
{
	int rc = el_probe_read(p, abs, b);

	if (rc == 0 && !el_is_text(b->data, b->len)) {
		el_probe_warn(p, "'%s': binary data where text was expected, ignored", abs);
		return ENVLOCK_EPARSE;
	}
	return rc;
}

int el_probe_run(el_probe *p, const char *const argv[], int timeout_ms, el_buf *out)
{
	int status = -1, rc;

	if (!p->root.live)
		return ENVLOCK_ENOTFOUND;
	rc = el_spawn(argv, timeout_ms, out, &status);
	if (rc == ENVLOCK_ETIMEOUT)
		el_probe_warn(p, "'%s': no answer within %d ms, stopped", argv[0], timeout_ms);
	if (rc)
		return rc;
	return status == 0 ? 0 : ENVLOCK_ERROR;
}

char *el_probe_resolve_dir(el_probe *p, const char *base, const char *rel)
{
	char *out = NULL;
	struct stat st;

	if (el_root_realpath_at(&p->root, base, rel, &out, NULL) != 0)
		return NULL;
	if (el_root_lstat(&p->root, out, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(out);
		return NULL;
	}
	return out;
}

const char *const el_probe_sec_keys[EL_SEC_COUNT] = {
	[EL_SEC_ENV] = "env", [EL_SEC_HOST] = "host", [EL_SEC_SYSTEM] = "system", [EL_SEC_GPU] = "gpu",
	[EL_SEC_PYTHON] = "python", [EL_SEC_CONDA] = "conda", [EL_SEC_PIP] = "pip",
	[EL_SEC_FRAMEWORKS] = "frameworks", [EL_SEC_CUDA] = "cuda", [EL_SEC_CUDNN] = "cudnn",
	[EL_SEC_COMPILERS] = "compilers", [EL_SEC_LOADS] = "loads", [EL_SEC_CHECKPOINTS] = "checkpoints",
	[EL_SEC_CONFIGS] = "configs", [EL_SEC_REPOS] = "repos",
};

cJSON *el_probe_section(el_probe *p, el_probe_sec key)
{
	if (!p->sec[key])
		p->sec[key] = el_jnew_obj();
	return p->sec[key];
}

void el_probe_want_deb(el_probe *p, cJSON *obj, const char *path, const char *alt)
{
	el_deb_want *w;

	if (!obj || (!path && !alt))
		return;
	EL_GROW(p->debs, p->ndebs + 1, p->debs_cap);
	w = &p->debs[p->ndebs++];
	w->obj = obj;
	w->path = path ? el_xstrdup(path) : NULL;
	w->alt = alt ? el_xstrdup(alt) : NULL;
}
