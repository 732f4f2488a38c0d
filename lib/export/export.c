/* envlock export: format names and the dispatch to each format's file (pip requirement lines: reqs.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lock/untrusted.h"
#include "util/atomic.h"
#include "util/error.h"

#define EXPORT_MAX ((size_t)256 << 20)

static const char *const format_names[] = {
	"conda-explicit", "requirements", "environment-yml", "dockerfile"
};

int envlock_export_format_parse(const char *name, envlock_export_format *out)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (name && strcmp(name, format_names[i]) == 0) {
			*out = (envlock_export_format)i;
			return 0;
		}
	return ENVLOCK_EINVAL;
}

const char *envlock_export_format_name(envlock_export_format f)
{
	return (size_t)f < sizeof(format_names) / sizeof(format_names[0]) ? format_names[f] : "?";
}

int envlock_export(char **out, size_t *len, envlock_ctx *ctx, const envlock_lock *lock,
		   envlock_export_format format, const envlock_export_opts *opts)
{
	static const envlock_export_opts none;
	el_buf b = EL_BUF_INIT(EXPORT_MAX);
	el_export e = { el_lock_view(lock), envlock_lock_id(lock), &b, opts ? opts : &none };
	int rc;

	*out = NULL;
	*len = 0;
	/* the same values restore refuses to act on are never written for another program to act on */
	if ((rc = el_lock_check_untrusted(ctx, lock)) != 0) {
		el_buf_release(&b);
		return rc;
	}
	switch (format) {
	case ENVLOCK_EXPORT_CONDA_EXPLICIT: rc = el_export_conda_explicit(&e); break;
	case ENVLOCK_EXPORT_REQUIREMENTS: rc = el_export_requirements(&e); break;
	case ENVLOCK_EXPORT_ENVIRONMENT_YML: rc = el_export_environment_yml(&e); break;
	case ENVLOCK_EXPORT_DOCKERFILE: rc = el_export_dockerfile(&e); break;
	default: rc = ENVLOCK_EINVAL; break;
	}
	if (rc == ENVLOCK_EINVAL) {
		el_buf_release(&b);
		if (format == ENVLOCK_EXPORT_CONDA_EXPLICIT)
			return el_error_set(ctx, rc, "the lock has no conda packages to export");
		if (format == ENVLOCK_EXPORT_REQUIREMENTS)
			return el_error_set(ctx, rc, "the lock has no pip distributions to export");
		return el_error_set(ctx, rc, "unknown export format");
	}
	if (rc != 0 || el_buf_failed(&b) || b.len >= EXPORT_MAX) {
		el_buf_release(&b);
		return el_error_set(ctx, ENVLOCK_ELIMIT, "%s export larger than %zu MiB",
				    envlock_export_format_name(format), EXPORT_MAX >> 20);
	}
	*len = b.len;
	*out = el_buf_detach(&b);
	return 0;
}

int envlock_export_write(envlock_ctx *ctx, const envlock_lock *lock, envlock_export_format format,
			 const char *path, const envlock_export_opts *opts)
{
	char *text;
	size_t len;
	int rc = envlock_export(&text, &len, ctx, lock, format, opts);

	if (rc)
		return rc;
	rc = el_write_output(ctx, path, text, len);
	free(text);
	return rc;
}
