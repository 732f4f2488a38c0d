/* Diffs and drift tables for people (aligned, coloured on request) and as JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

#define KEY_COLS 40   /* wider keys and values overflow their column instead of widening it */
#define VALUE_COLS 32
#define HASH_SHOWN 12 /* hex digits kept of a SHA-256 or commit */
#define ODD_SHOWN 8   /* files named per value in a drift row; JSON has them all */
#define NONE "(none)"

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

char *el_display_value(const char *s)
{
	el_buf b;

	if (!s)
		return el_xstrdup(NONE);
	el_buf_init_fits(&b, strlen(s), "a value with its hashes cut short is never longer than the value");
	while (*s) {
		size_t run = 0;

		while (is_hex(s[run]))
			run++;
		if (run >= 40) {
			el_buf_add(&b, s, HASH_SHOWN);
			el_buf_adds(&b, "…");
		} else if (run) {
			el_buf_add(&b, s, run);
		} else {
			el_buf_addc(&b, *s);
			run = 1;
		}
		s += run;
	}
	return el_buf_detach(&b);
}

void el_print_padded(FILE *out, const char *s, size_t width)
{
	size_t w = el_term_width(s);

	el_term_put(out, s);
	for (; w < width; w++)
		fputc(' ', out);
}

const char *el_severity_sgr(envlock_severity s)
{
	return s == ENVLOCK_SEV_BREAKING ? EL_SGR_RED : s == ENVLOCK_SEV_RISKY ? EL_SGR_YELLOW : NULL;
}

static size_t capped(size_t w, size_t cap)
{
	return w < cap ? w : cap;
}

static void section_header(FILE *out, const char *name, int color)
{
	fprintf(out, "%s%s%s\n", color ? EL_SGR_BOLD : "", name, color ? EL_SGR_RESET : "");
}

static void verdict_line(FILE *out, const char *verdict, envlock_severity worst, int color)
{
	const char *sgr = color ? el_severity_sgr(worst) : NULL;

	fprintf(out, "%s%s%s\n", sgr ? sgr : "", verdict, sgr ? EL_SGR_RESET : "");
}

static int finish_output(envlock_ctx *ctx, FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	return 0;
}

/* The first line of a finding: where the A → B values go, the rule that found it. */
static char *finding_label(const envlock_diff_entry *e)
{
	return el_xasprintf("%s rule %s", e->change == ENVLOCK_DIFF_RESOLVED ? "resolved:" : "new:", e->rule);
}

/* A finding's reason, fix or source under its row, wrapped at width (0: never) */
static void print_detail(FILE *out, const char *label, const char *text, int width)
{
	if (text && *text) {
		fprintf(out, "      %s", label);
		el_term_wrap(out, text, width, 6 + (int)strlen(label), 6);
		fputc('\n', out);
	}
}

static void print_entry(FILE *out, const envlock_diff_entry *e, const char *a, const char *b,
			size_t kw, size_t aw, size_t bw, int color, int width)
{
	const char *sgr = color ? el_severity_sgr(e->severity) : NULL;
	int finding = e->change == ENVLOCK_DIFF_FINDING || e->change == ENVLOCK_DIFF_RESOLVED;

	fputs(sgr ? sgr : "", out);
	fputs("  ", out);
	el_print_padded(out, e->key, kw);
	fputs("  ", out);
	if (e->change == ENVLOCK_DIFF_SAME) {
		el_term_put(out, a);
	} else if (finding) {
		char *label = finding_label(e);

		el_print_padded(out, label, aw + bw + 3);
		fprintf(out, "  %s", envlock_severity_name(e->severity));
		free(label);
	} else {
		el_print_padded(out, a, aw);
		fputs(" → ", out);
		el_print_padded(out, b, bw);
		fprintf(out, "  %s", envlock_severity_name(e->severity));
	}
	fputs(sgr ? EL_SGR_RESET : "", out);
	fputc('\n', out);
	if (finding) {
		print_detail(out, "", e->reason, width);
		if (e->change == ENVLOCK_DIFF_FINDING) {
			print_detail(out, "fix: ", e->fix, width);
			print_detail(out, "source: ", e->source, width);
		}
	}
}

static size_t wider(size_t w, const char *s, size_t cap)
{
	size_t n = el_term_width(s);

	return capped(n > w ? n : w, cap);
}

/* Print the entries of one section, [from, to), with its own column widths. */
static void print_section(FILE *out, const envlock_diff *d, size_t from, size_t to, char **shown, int color,
			  int width)
{
	size_t kw = 0, aw = 0, bw = 0;

	for (size_t i = from; i < to; i++) {
		const envlock_diff_entry *e = &d->v[i].e;

		kw = wider(kw, e->key, KEY_COLS);
		if (e->change == ENVLOCK_DIFF_SAME)
			continue;
		if (e->change == ENVLOCK_DIFF_FINDING || e->change == ENVLOCK_DIFF_RESOLVED) {
			char *label = finding_label(e);
			size_t lw = el_term_width(label);

			/* the label spans both value columns */
			if (lw > aw + bw + 3)
				aw = capped(lw - bw - 3 > aw ? lw - bw - 3 : aw, VALUE_COLS);
			free(label);
			continue;
		}
		aw = wider(aw, shown[2 * i], VALUE_COLS);
		bw = wider(bw, shown[2 * i + 1], VALUE_COLS);
	}
	section_header(out, d->v[from].e.section, color);
	for (size_t i = from; i < to; i++)
		print_entry(out, &d->v[i].e, shown[2 * i], shown[2 * i + 1], kw, aw, bw, color, width);
}

int envlock_diff_print(const envlock_diff *d, envlock_ctx *ctx, FILE *out, unsigned flags)
{
	int color = (flags & ENVLOCK_PRINT_COLOR) != 0;
	char **shown = el_xcalloc(2 * d->n + 1, sizeof(*shown));
	envlock_severity worst = ENVLOCK_SEV_INFO;
	size_t from = 0;

	for (size_t i = 0; i < d->n; i++) {
		shown[2 * i] = el_display_value(d->v[i].e.a);
		shown[2 * i + 1] = el_display_value(d->v[i].e.b);
		if (d->v[i].e.change != ENVLOCK_DIFF_SAME && d->v[i].e.severity > worst)
			worst = d->v[i].e.severity;
	}
	for (size_t i = 1; i <= d->n; i++)
		if (i == d->n || d->v[i].section != d->v[from].section) {
			print_section(out, d, from, i, shown, color, ENVLOCK_PRINT_WIDTH_OF(flags));
			from = i;
		}
	verdict_line(out, d->verdict, worst, color);
	for (size_t i = 0; i < 2 * d->n; i++)
		free(shown[i]);
	free(shown);
	return finish_output(ctx, out);
}

/* Serialise doc (sorted keys, 2-space indent) to out and free it. */
static int write_json(envlock_ctx *ctx, FILE *out, cJSON *doc)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	int rc = el_json_write_term(doc, &b, 2);

	cJSON_Delete(doc);
	if (rc != 0) {
		el_buf_release(&b);
		return el_error_set(ctx, ENVLOCK_ELIMIT, "output larger than 1 GiB");
	}
	fwrite(b.data, 1, b.len, out);
	el_buf_release(&b);
	return finish_output(ctx, out);
}

/* A string member, or null. */
void el_diff_entry_json(cJSON *arr, const envlock_diff_entry *e)
{
	cJSON *o = el_jpush_obj(arr);

	el_jset_str(o, "section", e->section);
	el_jset_str(o, "key", e->key);
	el_jset_str(o, "change", envlock_diff_change_name(e->change));
	if (e->change != ENVLOCK_DIFF_SAME)
		el_jset_str(o, "severity", envlock_severity_name(e->severity));
	if (e->change == ENVLOCK_DIFF_FINDING || e->change == ENVLOCK_DIFF_RESOLVED) {
		el_jset_str(o, "message", e->reason);
		el_jset_str(o, "rule", e->rule);
		el_jset_str(o, "fix", e->fix);
		el_jset_str(o, "source", e->source);
		return;
	}
	el_jset_str_or_null(o, "a", e->a);
	el_jset_str_or_null(o, "b", e->b);
	el_jset_str_or_null(o, "reason", e->reason);
}

static void json_side(cJSON *doc, const char *key, const el_diff_side *s)
{
	cJSON *o = el_jset_obj(doc, key);

	el_jset_str(o, "file", s->name);
	el_jset_str_or_null(o, "id", s->id);
	el_jset_str_or_null(o, "hostname", s->hostname);
	el_jset_str_or_null(o, "created", s->created);
}

int envlock_diff_print_json(const envlock_diff *d, envlock_ctx *ctx, FILE *out)
{
	cJSON *doc = el_jnew_obj(), *counts, *list;

	json_side(doc, "a", &d->a);
	json_side(doc, "b", &d->b);
	el_jset_bool(doc, "identical", envlock_diff_identical(d));
	counts = el_jset_obj(doc, "counts");
	for (int s = ENVLOCK_SEV_INFO; s <= ENVLOCK_SEV_BREAKING; s++)
		el_jset_int(counts, envlock_severity_name((envlock_severity)s), (long long)d->tally[s]);
	el_jset_str(doc, "verdict", d->verdict);
	list = el_jset_arr(doc, "differences");
	for (size_t i = 0; i < d->n; i++)
		el_diff_entry_json(list, &d->v[i].e);
	return write_json(ctx, out, doc);
}

/* "node4.json, node5.json: 12.1.105; node9.json: (none)" — the odd files grouped by value. */
static void print_odd(FILE *out, const envlock_drift_item *it)
{
	unsigned char *done = el_xcalloc(it->odd_count + 1, 1);
	int first_group = 1;

	for (size_t i = 0; i < it->odd_count; i++) {
		size_t named = 0, more = 0;
		char *v;

		if (done[i])
			continue;
		fputs(first_group ? "" : "; ", out);
		first_group = 0;
		/* interned: equal values are the same pointer */
		for (size_t j = i; j < it->odd_count; j++) {
			if (done[j] || it->odd[j].value != it->odd[i].value)
				continue;
			done[j] = 1;
			if (named == ODD_SHOWN) {
				more++;
				continue;
			}
			fputs(named ? ", " : "", out);
			el_term_put(out, it->odd[j].name);
			named++;
		}
		if (more)
			fprintf(out, " and %zu more", more);
		v = el_display_value(it->odd[i].value);
		fputs(": ", out);
		el_term_put(out, v);
		free(v);
	}
	free(done);
}

int envlock_drift_print(const envlock_drift *d, envlock_ctx *ctx, FILE *out, unsigned flags)
{
	int color = (flags & ENVLOCK_PRINT_COLOR) != 0;
	size_t kw = 0, mw = 0, cw = 0;
	char **shown = el_xcalloc(2 * d->n + 1, sizeof(*shown));
	envlock_severity worst = ENVLOCK_SEV_INFO;

	for (size_t i = 0; i < d->n; i++) {
		const envlock_drift_item *it = &d->v[i].pub;

		shown[2 * i] = el_display_value(it->majority);
		shown[2 * i + 1] = el_xasprintf("%zu of %zu", it->majority_count, d->files.n);
		kw = wider(kw, it->key, KEY_COLS);
		mw = wider(mw, shown[2 * i], VALUE_COLS);
		cw = wider(cw, shown[2 * i + 1], VALUE_COLS);
		if (it->odd_count && it->severity > worst)
			worst = it->severity;
	}
	for (size_t i = 0; i < d->n; i++) {
		const envlock_drift_item *it = &d->v[i].pub;
		const char *sgr = color && it->odd_count ? el_severity_sgr(it->severity) : NULL;

		if (i == 0 || d->v[i].section != d->v[i - 1].section)
			section_header(out, it->section, color);
		fputs(sgr ? sgr : "", out);
		fputs("  ", out);
		el_print_padded(out, it->key, kw);
		fputs("  ", out);
		if (!it->odd_count) {
			el_print_padded(out, shown[2 * i], mw);
			fprintf(out, "  %s", shown[2 * i + 1]);
		} else {
			el_print_padded(out, shown[2 * i], mw);
			fputs("  ", out);
			el_print_padded(out, shown[2 * i + 1], cw);
			fputs("  ", out);
			el_print_padded(out, envlock_severity_name(it->severity), 8);
			fputs("  ", out);
			print_odd(out, it);
		}
		fputs(sgr ? EL_SGR_RESET : "", out);
		fputc('\n', out);
	}
	verdict_line(out, d->verdict ? d->verdict : "", worst, color);
	for (size_t i = 0; i < 2 * d->n; i++)
		free(shown[i]);
	free(shown);
	return finish_output(ctx, out);
}

int envlock_drift_print_json(const envlock_drift *d, envlock_ctx *ctx, FILE *out)
{
	cJSON *doc = el_jnew_obj(), *files, *list;

	files = el_jset_arr(doc, "files");
	for (size_t i = 0; i < d->files.n; i++)
		el_jpush_str(files, d->files.v[i]);
	el_jset_int(doc, "items", (long long)d->tab.n);
	el_jset_int(doc, "drifting", (long long)d->drifting);
	el_jset_int(doc, "odd_files", (long long)d->odd_files);
	el_jset_bool(doc, "identical", d->drifting == 0);
	el_jset_str(doc, "verdict", d->verdict ? d->verdict : "");
	list = el_jset_arr(doc, "drift");
	for (size_t i = 0; i < d->n; i++) {
		const envlock_drift_item *it = &d->v[i].pub;
		cJSON *o = el_jpush_obj(list), *odd;

		el_jset_str(o, "section", it->section);
		el_jset_str(o, "key", it->key);
		el_jset_str_or_null(o, "majority", it->majority);
		el_jset_int(o, "majority_count", (long long)it->majority_count);
		el_jset_str(o, "severity", envlock_severity_name(it->severity));
		odd = el_jset_arr(o, "differs");
		for (size_t j = 0; j < it->odd_count; j++) {
			cJSON *x = el_jpush_obj(odd);

			el_jset_str(x, "file", it->odd[j].file);
			el_jset_str_or_null(x, "value", it->odd[j].value);
		}
	}
	return write_json(ctx, out, doc);
}
