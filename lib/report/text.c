/* The report for a terminal: aligned plain text, nothing a terminal would interpret. */
#include <string.h>

#include "report/report.h"

#define COMPONENT_MAX 14 /* longer names push their line out rather than widen every line */
#define VERSION_MAX 28

static void pad(el_out *o, size_t used, size_t width)
{
	for (; used < width; used++)
		el_out_put(o, " ", 1);
}

static void table(const el_report *r, el_out *o)
{
	size_t wc = 0, wv = 0;
	int group = -1;

	for (size_t i = 0; i < r->nrows; i++) {
		size_t c = el_term_width(r->rows[i].component), v = el_term_width(r->rows[i].version);

		if (c > wc && c <= COMPONENT_MAX)
			wc = c;
		if (v > wv && v <= VERSION_MAX && !r->rows[i].wide)
			wv = v;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const el_report_row *row = &r->rows[i];

		if (row->group != group) {
			group = row->group;
			el_out_printf(o, "%s%s\n", i ? "\n" : "", el_report_groups[group]);
		}
		el_out_puts(o, "  ");
		el_esc_text(o, row->component);
		pad(o, el_term_width(row->component), wc);
		el_out_puts(o, "  ");
		el_esc_text(o, row->version);
		if (*row->details) {
			pad(o, el_term_width(row->version), wv);
			el_out_puts(o, "  ");
			el_esc_text(o, row->details);
		}
		el_out_puts(o, "\n");
	}
}

static void findings(const el_report *r, el_out *o)
{
	size_t n = envlock_findings_count(r->findings), count[3] = { 0, 0, 0 };

	for (size_t i = 0; i < n; i++)
		count[envlock_findings_get(r->findings, i)->severity]++;
	if (!n) {
		el_out_puts(o, "\nRule findings: none, every compatibility rule passed\n");
		return;
	}
	el_out_printf(o, "\nRule findings: %zu breaking, %zu risky, %zu info\n", count[ENVLOCK_SEV_BREAKING],
		      count[ENVLOCK_SEV_RISKY], count[ENVLOCK_SEV_INFO]);
	for (size_t i = 0; i < n; i++) {
		const envlock_finding *f = envlock_findings_get(r->findings, i);

		el_out_printf(o, "  %-9s ", envlock_severity_name(f->severity));
		el_esc_text(o, f->section);
		el_out_puts(o, "  ");
		el_esc_text(o, f->subject);
		el_out_puts(o, "\n            ");
		el_esc_text(o, f->message);
		if (*f->fix) {
			el_out_puts(o, "\n            fix: ");
			el_esc_text(o, f->fix);
		}
		el_out_puts(o, "\n            source: ");
		el_esc_text(o, f->source);
		el_out_puts(o, "\n");
	}
}

static void differences(const el_report *r, el_out *o)
{
	size_t n = envlock_diff_count(r->diff);

	el_out_puts(o, "\nDifferences from ");
	el_esc_text(o, r->opts->name ? r->opts->name : "A");
	el_out_puts(o, " to ");
	el_esc_text(o, r->opts->against_name ? r->opts->against_name : "B");
	el_out_puts(o, ": ");
	el_esc_text(o, envlock_diff_verdict(r->diff));
	el_out_puts(o, "\n");
	for (size_t i = 0; i < n; i++) {
		const envlock_diff_entry *e = envlock_diff_get(r->diff, i);

		el_out_printf(o, "  %-9s ", envlock_severity_name(e->severity));
		el_esc_text(o, e->section);
		el_out_puts(o, "  ");
		el_esc_text(o, e->key);
		if (e->change != ENVLOCK_DIFF_FINDING && e->change != ENVLOCK_DIFF_RESOLVED) {
			el_out_puts(o, "  ");
			el_esc_text(o, e->a ? e->a : "(none)");
			el_out_puts(o, " \xE2\x86\x92 ");
			el_esc_text(o, e->b ? e->b : "(none)");
		} else {
			el_out_printf(o, "  (%s)", envlock_diff_change_name(e->change));
		}
		if (e->reason) {
			el_out_puts(o, "\n            ");
			el_esc_text(o, e->reason);
		}
		el_out_puts(o, "\n");
	}
}

void el_report_text(const el_report *r, el_out *o)
{
	el_esc_text(o, r->citation);
	el_out_puts(o, "\n");
	if (r->opts->short_only)
		return;
	el_out_puts(o, "\n");
	table(r, o);
	if (r->findings)
		findings(r, o);
	if (r->diff)
		differences(r, o);
}
