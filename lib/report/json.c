/* The report as data: the citation, the table's rows, the findings and the diff, in one JSON document. */
#include "lock/model.h"
#include "report/report.h"
#include "diff/diff.h"
#include "rules/rules.h"

#define REPORT_FORMAT_VERSION 1

static void findings(const el_report *r, cJSON *doc)
{
	cJSON *list = el_jset_arr(doc, "findings");

	for (size_t i = 0; i < envlock_findings_count(r->findings); i++)
		el_finding_json(list, envlock_findings_get(r->findings, i), 0);
}

static void differences(const el_report *r, cJSON *doc)
{
	cJSON *d = el_jset_obj(doc, "diff"), *list;

	el_jset_str_or_null(d, "a", r->opts->name);
	el_jset_str_or_null(d, "b", r->opts->against_name);
	el_jset_str(d, "verdict", envlock_diff_verdict(r->diff));
	el_jset_int(d, "breaking", (long long)envlock_diff_tally(r->diff, ENVLOCK_SEV_BREAKING));
	el_jset_int(d, "risky", (long long)envlock_diff_tally(r->diff, ENVLOCK_SEV_RISKY));
	el_jset_int(d, "info", (long long)envlock_diff_tally(r->diff, ENVLOCK_SEV_INFO));
	list = el_jset_arr(d, "entries");
	for (size_t i = 0; i < envlock_diff_count(r->diff); i++)
		el_diff_entry_json(list, envlock_diff_get(r->diff, i));
}

void el_report_json(const el_report *r, el_out *o)
{
	cJSON *doc = el_jnew_obj(), *list;
	el_buf b = EL_BUF_INIT(EL_REPORT_MAX_BYTES);

	el_jset_int(doc, "report", REPORT_FORMAT_VERSION);
	el_jset_str(doc, "id", r->id);
	el_jset_str(doc, "short_id", r->short_id);
	el_jset_str(doc, "citation", r->citation);
	list = el_jset_arr(doc, "cites");
	for (size_t i = 0; i < r->ncites; i++) {
		cJSON *c = el_jpush_obj(list);

		el_jset_str(c, "name", r->cites[i].name);
		el_jset_str(c, "version", r->cites[i].version);
	}
	if (!r->opts->short_only) {
		el_jset_str_or_null(doc, "file", r->opts->name);
		el_jset_str_or_null(doc, "stored_id", r->stored_id);
		list = el_jset_arr(doc, "rows");
		for (size_t i = 0; i < r->nrows; i++) {
			cJSON *row = el_jpush_obj(list);

			el_jset_str(row, "group", el_report_groups[r->rows[i].group]);
			el_jset_str(row, "component", r->rows[i].component);
			el_jset_str(row, "version", r->rows[i].version);
			el_jset_str(row, "details", r->rows[i].details);
		}
		if (r->findings)
			findings(r, doc);
		if (r->diff)
			differences(r, doc);
	}
	if (el_json_write_term(doc, &b, 2) != 0)
		o->overflow = true;
	else
		el_out_put(o, b.data, b.len);
	el_buf_release(&b);
	cJSON_Delete(doc);
}
