/*
 * The report as LaTeX to \input into a paper: the citation line as a
 * paragraph, then a table float. It needs no package: booktabs' rules
 * are used when the document loads booktabs, \hline otherwise. Cells are
 * ragged-right paragraphs, rows end with \tabularnewline (\\ would be
 * taken by \raggedright), and the output is ASCII only.
 */
#include "report/report.h"

static void cell(el_out *o, const char *s, const char *after)
{
	el_out_puts(o, "\\raggedright ");
	el_esc_latex(o, s);
	el_out_puts(o, after);
}

void el_report_latex(const el_report *r, el_out *o)
{
	int group = -1;

	if (r->opts->short_only) {
		el_esc_latex(o, r->citation);
		el_out_puts(o, "\n");
		return;
	}
	el_out_printf(o, "%% envlock report of lockfile %s\n"
		      "%% \\input this file where the table belongs; it compiles in any document, with\n"
		      "%% booktabs' rules when the preamble has \\usepackage{booktabs}.\n"
		      "\\providecommand{\\toprule}{\\hline}\n"
		      "\\providecommand{\\midrule}{\\hline}\n"
		      "\\providecommand{\\bottomrule}{\\hline}\n"
		      "\n{\\sloppy\\noindent ", r->id);
	/* sloppy: a long unbreakable id must not stick out of the line (which lock ids do depends on their digits) */
	el_esc_latex(o, r->citation);
	el_out_puts(o, "\\par}\n\n\\begin{table}[htbp]\n"
		    "\\centering\n"
		    "\\small\n"
		    "\\begin{tabular}{@{}p{0.2\\linewidth}p{0.3\\linewidth}p{0.42\\linewidth}@{}}\n"
		    "\\toprule\n"
		    "Component & Version & Details\\tabularnewline\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const el_report_row *row = &r->rows[i];

		if (row->group != group) {
			group = row->group;
			el_out_printf(o, "\\midrule\n\\multicolumn{3}{@{}l}{\\textit{%s}}\\tabularnewline\n",
				      el_report_groups[group]);
		}
		if (row->wide) {
			/* the full lock id is longer than any column: it gets the whole width */
			el_out_puts(o, "\\multicolumn{3}{@{}l@{}}{\\footnotesize ");
			el_esc_latex(o, row->component);
			el_out_puts(o, " \\texttt{");
			el_esc_latex(o, row->version);
			el_out_puts(o, "}}\\tabularnewline\n");
			if (*row->details) {
				el_out_puts(o, "\\multicolumn{3}{@{}l@{}}{\\quad ");
				el_esc_latex(o, row->details);
				el_out_puts(o, "}\\tabularnewline\n");
			}
			continue;
		}
		cell(o, row->component, " & ");
		cell(o, row->version, " & ");
		cell(o, row->details, "\\tabularnewline\n");
	}
	el_out_printf(o, "\\bottomrule\n"
		      "\\end{tabular}\n"
		      "\\caption{Software environment, recorded by envlock (lockfile %s\\ldots{}).}\n"
		      "\\label{tab:envlock-%s}\n"
		      "\\end{table}\n", r->short_id, r->short_id + 7);
}
