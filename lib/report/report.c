/* envlock report: render the summary of a lock in the format asked for, and write it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/atomic.h"
#include "util/error.h"

static const struct {
	const char *name;
	envlock_report_format format;
} format_names[] = {
	{ "text", ENVLOCK_REPORT_TEXT },
	{ "md", ENVLOCK_REPORT_MARKDOWN },
	{ "markdown", ENVLOCK_REPORT_MARKDOWN },
	{ "latex", ENVLOCK_REPORT_LATEX },
	{ "tex", ENVLOCK_REPORT_LATEX },
	{ "html", ENVLOCK_REPORT_HTML },
	{ "json", ENVLOCK_REPORT_JSON },
};

const char *envlock_report_format_name(envlock_report_format f)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (format_names[i].format == f)
			return format_names[i].name;
	return "unknown";
}

int envlock_report_format_parse(envlock_report_format *out, envlock_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcmp(format_names[i].name, name) == 0) {
			*out = format_names[i].format;
			return 0;
		}
	return el_error_set(ctx, ENVLOCK_EINVAL, "unknown format '%s' (md, latex, html, json or text)", name);
}

/* Findings and, with --against, the diff: what the HTML, JSON and text reports show beyond the table. */
static int add_checks(el_report *r, envlock_ctx *ctx, const envlock_lock *lock, const envlock_report_opts *opts)
{
	envlock_rules *own = NULL;
	const envlock_rules *rules = opts->rules;
	envlock_diff_opts dopts;
	int rc;

	if (!rules) {
		if ((rc = envlock_rules_load_default(&own, ctx)) != 0)
			return rc;
		rules = own;
	}
	rc = envlock_check(&r->findings, ctx, rules, lock);
	if (rc == 0 && opts->against) {
		memset(&dopts, 0, sizeof(dopts));
		dopts.rules = rules;
		rc = envlock_diff_locks(&r->diff, ctx, lock, opts->name, opts->against, opts->against_name, &dopts);
	}
	envlock_rules_free(own);
	return rc;
}

int envlock_report_render(char **out, size_t *len, envlock_ctx *ctx, const envlock_lock *lock,
			  const envlock_report_opts *opts)
{
	el_out o = { EL_BUF_INIT(EL_REPORT_MAX_BYTES), false };
	envlock_report_opts none;
	el_report r;
	int rc = 0;

	*out = NULL;
	*len = 0;
	if (!opts) {
		memset(&none, 0, sizeof(none));
		opts = &none;
	}
	if (opts->against && (opts->short_only || opts->format == ENVLOCK_REPORT_MARKDOWN ||
			      opts->format == ENVLOCK_REPORT_LATEX))
		return el_error_set(ctx, ENVLOCK_EINVAL, "a diff against a second lock is shown in html, json and text "
				    "reports only, and not in the citation line alone");
	el_report_build(&r, lock, opts);
	if (r.stored_id && opts->on_warning) {
		char *msg = NULL;

		if (asprintf(&msg, "'%s': its stored id %s does not match its content (%s): it was edited after it "
			     "was saved; the report cites the content", opts->name ? opts->name : "lockfile",
			     r.stored_id, r.id) >= 0) {
			opts->on_warning(msg, opts->warning_data);
			free(msg);
		}
	}
	if (!opts->short_only && opts->format != ENVLOCK_REPORT_MARKDOWN && opts->format != ENVLOCK_REPORT_LATEX)
		rc = add_checks(&r, ctx, lock, opts);
	if (rc == 0) {
		switch (opts->format) {
		case ENVLOCK_REPORT_MARKDOWN: el_report_markdown(&r, &o); break;
		case ENVLOCK_REPORT_LATEX: el_report_latex(&r, &o); break;
		case ENVLOCK_REPORT_HTML: rc = el_report_html(&r, ctx, &o); break;
		case ENVLOCK_REPORT_JSON: el_report_json(&r, &o); break;
		case ENVLOCK_REPORT_TEXT:
		default: el_report_text(&r, &o); break;
		}
	}
	el_report_release(&r);
	if (rc == 0 && o.overflow)
		rc = el_error_set(ctx, ENVLOCK_ELIMIT, "report larger than %zu MiB", EL_REPORT_MAX_BYTES >> 20);
	if (rc != 0) {
		el_buf_release(&o.b);
		return rc;
	}
	*len = o.b.len;
	*out = el_buf_detach(&o.b);
	return 0;
}

int envlock_report_write(envlock_ctx *ctx, const envlock_lock *lock, const envlock_report_opts *opts,
			 const char *path)
{
	char *text;
	size_t len;
	int rc = envlock_report_render(&text, &len, ctx, lock, opts);

	if (rc != 0)
		return rc;
	rc = el_write_output(ctx, path, text, len);
	free(text);
	return rc;
}

void envlock_report_free(char *report)
{
	free(report);
}
