/* envlock check's findings for a person, lock text escaped for the terminal. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "envlock/show.h"
#include "lock/model.h"
#include "rules/rules.h"
#include "util/error.h"
#include "util/text.h"

#define INDENT 20

/* "<indent><label><text>\n", text escaped and wrapped at width (0: never) under the indent. */
static void detail(FILE *out, const char *label, const char *text, int width)
{
	fprintf(out, "%*s%s", INDENT, "", label);
	el_term_wrap(out, text, width, INDENT + (int)strlen(label), INDENT);
	fputc('\n', out);
}

int envlock_show_findings(const envlock_findings *f, envlock_ctx *ctx, FILE *out, unsigned flags)
{
	static const char *const tint[] = { "", "\033[33m", "\033[1;31m" };
	int colour = (flags & ENVLOCK_PRINT_COLOR) != 0, width = ENVLOCK_PRINT_WIDTH_OF(flags);
	size_t n = envlock_findings_count(f), count[3] = { 0, 0, 0 };

	for (size_t i = 0; i < n; i++) {
		const envlock_finding *x = envlock_findings_get(f, i);
		size_t w = el_term_width(x->section);

		count[x->severity]++;
		fprintf(out, "%s%-9s%s ", colour ? tint[x->severity] : "", envlock_severity_name(x->severity),
			colour ? "\033[0m" : "");
		el_term_put(out, x->section);
		fprintf(out, "%*s ", w < 10 ? (int)(10 - w) : 0, "");
		el_term_put(out, x->subject);
		fputc('\n', out);
		detail(out, "", x->message, width);
		if (*x->fix)
			detail(out, "fix: ", x->fix, width);
		detail(out, "source: ", x->source, width);
	}
	if (n == 0)
		fputs("no findings: every rule passed\n", out);
	else
		fprintf(out, "%zu breaking, %zu risky, %zu info\n", count[ENVLOCK_SEV_BREAKING],
			count[ENVLOCK_SEV_RISKY], count[ENVLOCK_SEV_INFO]);
	if (fflush(out) != 0 || ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	return 0;
}

int envlock_show_findings_json(const envlock_findings *f, envlock_ctx *ctx, FILE *out)
{
	cJSON *doc = el_jnew_obj(), *arr = el_jset_arr(doc, "findings");
	size_t n = envlock_findings_count(f);
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		el_finding_json(arr, envlock_findings_get(f, i), 0);
	el_jset_str(doc, "worst", n ? envlock_severity_name(envlock_findings_worst(f)) : "none");
	/* the lock writer: sorted keys, and bytes that are not UTF-8 written as U+FFFD, so always valid JSON */
	if (el_json_write_term(doc, &b, 2) != 0)
		rc = el_error_set(ctx, ENVLOCK_ELIMIT, "the findings are larger than 1 GiB of JSON");
	else if (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	el_buf_release(&b);
	cJSON_Delete(doc);
	return rc;
}
