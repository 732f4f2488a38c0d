/*
 * The report as one self-contained HTML page: the citation, the table,
 * the rule findings, the diff against a second lock coloured by
 * severity, and the full package lists as plain text the browser's find
 * searches. No script and no outside resource; the Content-Security-
 * Policy allows nothing but the page's own style sheet (by its SHA-256),
 * so even a string that escaped escaping could load or run nothing.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "util/error.h"

static const char style[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328;"
	"background:#fff;max-width:1180px;margin:1.5em auto;padding:0 1em}"
	"h1{font-size:1.5em;margin:0 0 .4em}"
	"h2{font-size:1.15em;margin:1.8em 0 .5em;padding-bottom:.2em;border-bottom:1px solid #d0d7de}"
	".cite{font-size:1.05em;background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6em .8em}"
	".warn{background:#ffebe9;border-left:4px solid #cf222e;padding:.5em .8em}"
	".ok{color:#1a7f37;font-weight:600}"
	"table{border-collapse:collapse;width:100%;margin:.3em 0}"
	"th,td{text-align:left;vertical-align:top;padding:.25em .6em;border-bottom:1px solid #eaeef2;"
	"overflow-wrap:break-word}"
	"thead th{border-bottom:2px solid #8c959f;white-space:nowrap}"
	"tr.group th{background:#f6f8fa;font-weight:600}"
	"td.v,td.m{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em;"
	"overflow-wrap:anywhere}"
	"tr.breaking td{background:#ffebe9}"
	"tr.risky td{background:#fff8c5}"
	".sev{display:inline-block;padding:0 .55em;border-radius:1em;font-size:.85em;font-weight:600;color:#fff;"
	"white-space:nowrap}"
	".sev.breaking{background:#cf222e}"
	".sev.risky{background:#9a6700}"
	".sev.info{background:#6e7781}"
	"footer{margin-top:2.5em;color:#59636e;font-size:.9em}";

/* The CSP source for style: 'sha256-<base64 of the digest of the style element's text>'. */
static int style_hash(char out[64], envlock_ctx *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!EVP_Digest(style, strlen(style), md, &n, EVP_sha256(), NULL) || n != 32)
		return el_error_set(ctx, ENVLOCK_ERROR, "sha256 of the page's style failed");
	EVP_EncodeBlock((unsigned char *)out, md, (int)n); /* 44 characters and a NUL */
	return 0;
}

/* <tag class="cls">s</tag>, s escaped. */
static void td(el_out *o, const char *cls, const char *s)
{
	if (cls)
		el_out_printf(o, "<td class=\"%s\">", cls);
	else
		el_out_puts(o, "<td>");
	el_esc_html(o, s ? s : "");
	el_out_puts(o, "</td>");
}

static void summary(const el_report *r, el_out *o)
{
	int group = -1;

	el_out_puts(o, "<section id=\"summary\">\n<h2>Summary</h2>\n<table>\n"
		    "<thead><tr><th>Component</th><th>Version</th><th>Details</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const el_report_row *row = &r->rows[i];

		if (row->group != group) {
			group = row->group;
			el_out_printf(o, "<tr class=\"group\"><th colspan=\"3\">%s</th></tr>\n", el_report_groups[group]);
		}
		el_out_puts(o, "<tr>");
		td(o, NULL, row->component);
		td(o, "v", row->version);
		td(o, NULL, row->details);
		el_out_puts(o, "</tr>\n");
	}
	el_out_puts(o, "</tbody>\n</table>\n</section>\n");
}

static void sev_cell(el_out *o, envlock_severity s)
{
	el_out_printf(o, "<td><span class=\"sev %s\">%s</span></td>", envlock_severity_name(s),
		      envlock_severity_name(s));
}

static void findings(const el_report *r, el_out *o)
{
	size_t n = envlock_findings_count(r->findings), count[3] = { 0, 0, 0 };

	el_out_puts(o, "<section id=\"findings\">\n<h2>Compatibility findings</h2>\n");
	for (size_t i = 0; i < n; i++)
		count[envlock_findings_get(r->findings, i)->severity]++;
	if (!n) {
		el_out_puts(o, "<p class=\"ok\">Every compatibility rule passed.</p>\n</section>\n");
		return;
	}
	el_out_printf(o, "<p>%zu breaking, %zu risky, %zu info (the rules of this envlock, run on the lock).</p>\n"
		      "<table>\n<thead><tr><th>Severity</th><th>Section</th><th>Subject</th><th>Why</th>"
		      "<th>Fix</th><th>Source</th></tr></thead>\n<tbody>\n",
		      count[ENVLOCK_SEV_BREAKING], count[ENVLOCK_SEV_RISKY], count[ENVLOCK_SEV_INFO]);
	for (size_t i = 0; i < n; i++) {
		const envlock_finding *f = envlock_findings_get(r->findings, i);

		el_out_printf(o, "<tr class=\"%s\">", envlock_severity_name(f->severity));
		sev_cell(o, f->severity);
		td(o, NULL, f->section);
		td(o, NULL, f->subject);
		td(o, NULL, f->message);
		td(o, NULL, f->fix);
		td(o, NULL, f->source);
		el_out_puts(o, "</tr>\n");
	}
	el_out_puts(o, "</tbody>\n</table>\n</section>\n");
}

static void differences(const el_report *r, el_out *o)
{
	size_t n = envlock_diff_count(r->diff);

	el_out_puts(o, "<section id=\"diff\">\n<h2>Differences from ");
	el_esc_html(o, r->opts->name ? r->opts->name : "A");
	el_out_puts(o, " to ");
	el_esc_html(o, r->opts->against_name ? r->opts->against_name : "B");
	el_out_puts(o, "</h2>\n<p>");
	el_esc_html(o, envlock_diff_verdict(r->diff));
	el_out_puts(o, "</p>\n");
	if (!n) {
		el_out_puts(o, "</section>\n");
		return;
	}
	el_out_puts(o, "<table>\n<thead><tr><th>Severity</th><th>Section</th><th>Item</th><th>A</th><th>B</th>"
		    "<th>Why</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < n; i++) {
		const envlock_diff_entry *e = envlock_diff_get(r->diff, i);
		bool finding = e->change == ENVLOCK_DIFF_FINDING || e->change == ENVLOCK_DIFF_RESOLVED;

		el_out_printf(o, "<tr class=\"%s\">", envlock_severity_name(e->severity));
		sev_cell(o, e->severity);
		td(o, NULL, e->section);
		td(o, NULL, e->key);
		td(o, "m", finding ? envlock_diff_change_name(e->change) : e->a ? e->a : "(none)");
		td(o, "m", finding ? "" : e->b ? e->b : "(none)");
		td(o, NULL, e->reason);
		el_out_puts(o, "</tr>\n");
	}
	el_out_puts(o, "</tbody>\n</table>\n</section>\n");
}

static void conda_list(const el_report *r, el_out *o)
{
	const el_conda *conda = &r->view->conda;

	if (!conda->npackages)
		return;
	el_out_printf(o, "<section id=\"conda\">\n<h2>conda packages (%zu)</h2>\n<table>\n"
		      "<thead><tr><th>Name</th><th>Version</th><th>Build</th><th>Channel</th></tr></thead>\n<tbody>\n",
		      conda->npackages);
	for (size_t i = 0; i < conda->npackages; i++) {
		const el_conda_package *p = &conda->packages[i];

		el_out_puts(o, "<tr>");
		td(o, NULL, p->name);
		td(o, "m", p->version);
		td(o, "m", p->build);
		td(o, NULL, p->channel);
		el_out_puts(o, "</tr>\n");
	}
	el_out_puts(o, "</tbody>\n</table>\n</section>\n");
}

static void pip_list(const el_report *r, el_out *o)
{
	const el_pip *pip = &r->view->pip;

	if (!pip->ndists)
		return;
	el_out_printf(o, "<section id=\"pip\">\n<h2>pip distributions (%zu)</h2>\n<table>\n"
		      "<thead><tr><th>Name</th><th>Version</th><th>Installer</th><th>Details</th></tr></thead>\n<tbody>\n",
		      pip->ndists);
	for (size_t i = 0; i < pip->ndists; i++) {
		const el_pip_dist *d = &pip->dists[i];

		el_out_puts(o, "<tr>");
		td(o, NULL, d->name);
		td(o, "m", d->version);
		td(o, NULL, d->installer);
		el_out_puts(o, "<td>");
		if (d->editable) {
			el_out_puts(o, "editable: ");
			el_esc_html(o, d->source ? d->source : "");
		} else if (d->direct_url.url) {
			el_esc_html(o, d->direct_url.url);
			if (d->direct_url.commit_id) {
				el_out_puts(o, " @ ");
				el_esc_html(o, d->direct_url.commit_id);
			}
		} else if (d->tags.n) {
			el_esc_html(o, d->tags.v[0]);
		}
		if (d->also_conda)
			el_out_puts(o, " (also a conda package)");
		el_out_puts(o, "</td></tr>\n");
	}
	el_out_puts(o, "</tbody>\n</table>\n</section>\n");
}

int el_report_html(const el_report *r, envlock_ctx *ctx, el_out *o)
{
	char hash[64];
	int rc;

	if (r->opts->short_only) {
		el_esc_html(o, r->citation);
		el_out_puts(o, "\n");
		return 0;
	}
	if ((rc = style_hash(hash, ctx)) != 0)
		return rc;
	el_out_printf(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'sha256-%s'; base-uri 'none'; form-action 'none'\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		      "<title>envlock report %s\xE2\x80\xA6</title>\n<style>%s</style>\n</head>\n<body>\n"
		      "<header>\n<h1>Environment report</h1>\n<p class=\"cite\" id=\"citation\">",
		      hash, r->short_id, style);
	el_esc_html(o, r->citation);
	el_out_puts(o, "</p>\n");
	if (r->stored_id) {
		el_out_puts(o, "<p class=\"warn\">The lockfile says its id is ");
		el_esc_html(o, r->stored_id);
		el_out_printf(o, ", but its content is %s: it was edited after it was saved. "
			      "This report describes the content.</p>\n", r->id);
	}
	el_out_puts(o, "</header>\n<main>\n");
	summary(r, o);
	if (r->findings)
		findings(r, o);
	if (r->diff)
		differences(r, o);
	conda_list(r, o);
	pip_list(r, o);
	el_out_puts(o, "</main>\n<footer>Made by envlock");
	if (r->opts->name) {
		el_out_puts(o, " from ");
		el_esc_html(o, r->opts->name);
	}
	el_out_printf(o, " (lockfile %s). This page is self-contained: it runs no script and loads nothing.</footer>\n"
		      "</body>\n</html>\n", r->id);
	return 0;
}
