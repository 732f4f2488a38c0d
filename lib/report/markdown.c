/* The report as Markdown: the citation line, then one GitHub-flavoured table for an appendix. */
#include "report/report.h"

static void cell(el_out *o, const char *s)
{
	el_out_puts(o, " ");
	el_esc_md(o, s);
	el_out_puts(o, " |");
}

void el_report_markdown(const el_report *r, el_out *o)
{
	int group = -1;

	el_esc_md(o, r->citation);
	el_out_puts(o, "\n");
	if (r->opts->short_only)
		return;
	el_out_puts(o, "\n| Component | Version | Details |\n| --- | --- | --- |\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const el_report_row *row = &r->rows[i];

		if (row->group != group) {
			group = row->group;
			el_out_printf(o, "| **%s** | | |\n", el_report_groups[group]);
		}
		el_out_puts(o, "|");
		cell(o, row->component);
		cell(o, row->version);
		cell(o, row->details);
		el_out_puts(o, "\n");
	}
}
