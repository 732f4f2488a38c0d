/* The report as data: the citation, the table's rows, the findings and the diff, in one JSON document. */
#include "lock/model.h"
#include "report/report.h"

#define REPORT_FORMAT_VERSION 1

static void set_str_or_null(cJSON *o, const char *key, const char *s)
{
	if (s)
		el_jset_str(o, key, s);
	else
		el_jset(o, key, cJSON_CreateNull());
}

static void findings(const el_report *r, cJSON *doc)
{
	cJSON *list = el_jset_arr(doc, "findings");

	for (size_t i = 0; i < envlock_findings_count(r->findings); i++) {
		const envlock_finding *f = envlock_findings_get(r->findings, i);
		cJSON *x = el_jpush_obj(list);

		el_jset_str(x, "rule", f->rule);
		el_jset_str(x, "severity", envlock_severity_name(f->severity));
		el_jset_str(x, "section", f->section);
		el_jset_str(x, "subject", f->subject);
		el_jset_str(x, "message", f->message);
		el_jset_str(x, "fix", f->fix);
		el_jset_str(x, "source", f->source);
	}
}

static void differences(const el_report *r, cJSON *doc)
{
	cJSON *d = el_jset_obj(doc, "diff"), *list;

	set_str_or_null(d, "a", r->opts->name);
	set_str_or_null(d, "b", r->opts->against_name);
	el_jset_str(d, "verdict", envlock_diff_verdict(r->diff));
	el_jset_int(d, "breaking", (long long)envlock_diff_tally(r->diff, ENVLOCK_SEV_BREAKING));
	el_jset_int(d, "risky", (long long)envlock_diff_tally(r->diff, ENVLOCK_SEV_RISKY));
	el_jset_int(d, "info", (long long)envlock_diff_tally(r->diff, ENVLOCK_SEV_INFO));
	list = el_jset_arr(d, "entries");
	for (size_t i = 0; i < envlock_diff_count(r->diff); i++) {
		const envlock_diff_entry *e = envlock_diff_get(r->diff, i);
		cJSON *x = el_jpush_obj(list);

		el_jset_str(x, "section", e->section);
		el_jset_str(x, "key", e->key);
		el_jset_str(x, "change", envlock_diff_change_name(e->change));
		el_jset_str(x, "severity", envlock_severity_name(e->severity));
		set_str_or_null(x, "a", e->a);
		set_str_or_null(x, "b", e->b);
		set_str_or_null(x, "reason", e->reason);
		if (e->rule) {
			el_jset_str(x, "rule", e->rule);
			el_jset_str(x, "fix", e->fix ? e->fix : "");
			el_jset_str(x, "source", e->source ? e->source : "");
		}
	}
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
		set_str_or_null(doc, "file", r->opts->name);
		set_str_or_null(doc, "stored_id", r->stored_id);
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
	if (el_json_write(doc, &b, 2) != 0)
		o->overflow = true;
	else
		el_out_put(o, b.data, b.len);
	el_buf_release(&b);
	cJSON_Delete(doc);
}
