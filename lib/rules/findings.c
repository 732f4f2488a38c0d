/* Findings: what a rule found, and the list of them envlock_check returns. */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "rules.h"
#include "util/buf.h"
#include "util/vec.h"
#include "util/xalloc.h"

static const char *const severities[] = { "info", "risky", "breaking" };

const char *envlock_severity_name(envlock_severity s)
{
	return s >= ENVLOCK_SEV_INFO && s <= ENVLOCK_SEV_BREAKING ? severities[s] : "info";
}

int el_severity_of(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (name && strcmp(name, severities[i]) == 0)
			return i;
	return -1;
}

/* Fill {name} placeholders of tmpl from vars. */
static char *fill(const char *tmpl, const char *const vars[])
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a message template with the finding's values in it");

	for (const char *s = tmpl; *s; s++) {
		const char *close;

		if (*s == '{' && (close = strchr(s, '}')) != NULL) {
			const char *value = NULL;
			size_t n = (size_t)(close - s - 1);

			for (int i = 0; vars && vars[i]; i += 2)
				if (strlen(vars[i]) == n && strncmp(vars[i], s + 1, n) == 0)
					value = vars[i + 1] ? vars[i + 1] : "?";
			if (value) {
				el_buf_adds(&b, value);
				s = close;
				continue;
			}
		}
		el_buf_addc(&b, *s);
	}
	return el_buf_detach(&b);
}

/* Does tmpl name a variable that vars leave NULL (a fact nobody knows)? */
static bool names_unknown(const char *tmpl, const char *const vars[])
{
	for (const char *s = tmpl; s && (s = strchr(s, '{')) != NULL; s++) {
		const char *close = strchr(s, '}');
		size_t n = close ? (size_t)(close - s - 1) : 0;

		for (int i = 0; close && vars && vars[i]; i += 2)
			if (strlen(vars[i]) == n && strncmp(vars[i], s + 1, n) == 0 && !vars[i + 1])
				return true;
	}
	return false;
}

void el_finding_add(envlock_findings *f, const cJSON *rule, const char *subject,
		    const char *source, const char *const vars[])
{
	envlock_finding *x;
	const char *fix = el_jget_str(rule, "fix");

	/* a fix made from the knowledge ({install}) when it has something to say, else the rule's words */
	if (el_jget_str(rule, "fix_fallback") && names_unknown(fix, vars))
		fix = el_jget_str(rule, "fix_fallback");

	EL_GROW(f->v, f->n + 1, f->cap);
	x = &f->v[f->n++];
	x->rule = el_xstrdup(el_jget_str(rule, "id"));
	x->severity = (envlock_severity)el_severity_of(el_jget_str(rule, "severity"));
	x->section = el_xstrdup(el_jget_str(rule, "section"));
	x->subject = el_xstrdup(subject);
	x->message = fill(el_jget_str(rule, "message"), vars);
	x->fix = fill(fix ? fix : "", vars);
	x->source = el_xstrdup(source ? source : el_jget_str(rule, "source") ? el_jget_str(rule, "source") : "");
}

void el_finding_push(envlock_findings *f, const char *rule, envlock_severity severity, const char *section,
		     const char *subject, const char *message, const char *fix, const char *source)
{
	envlock_finding *x;

	EL_GROW(f->v, f->n + 1, f->cap);
	x = &f->v[f->n++];
	x->rule = el_xstrdup(rule);
	x->severity = severity;
	x->section = el_xstrdup(section);
	x->subject = el_xstrdup(subject);
	x->message = el_xstrdup(message);
	x->fix = el_xstrdup(fix ? fix : "");
	x->source = el_xstrdup(source ? source : "");
}

static int by_severity(const void *a, const void *b)
{
	const envlock_finding *x = a, *y = b;
	int c;

	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	if ((c = strcmp(x->section, y->section)) != 0)
		return c;
	if ((c = strcmp(x->rule, y->rule)) != 0)
		return c;
	return strcmp(x->subject, y->subject);
}

void el_findings_sort(envlock_findings *f)
{
	if (f->n)
		qsort(f->v, f->n, sizeof(*f->v), by_severity);
}

size_t envlock_findings_count(const envlock_findings *f)
{
	return f ? f->n : 0;
}

const envlock_finding *envlock_findings_get(const envlock_findings *f, size_t i)
{
	return f && i < f->n ? &f->v[i] : NULL;
}

envlock_severity envlock_findings_worst(const envlock_findings *f)
{
	return f && f->n ? f->v[0].severity : ENVLOCK_SEV_INFO;
}

void envlock_findings_free(envlock_findings *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		free((char *)f->v[i].rule);
		free((char *)f->v[i].section);
		free((char *)f->v[i].subject);
		free((char *)f->v[i].message);
		free((char *)f->v[i].fix);
		free((char *)f->v[i].source);
	}
	free(f->v);
	free(f);
}

void el_finding_json(cJSON *arr, const envlock_finding *x, unsigned flags)
{
	cJSON *o = el_jpush_obj(arr);

	el_jset_str(o, "rule", x->rule);
	el_jset_str(o, "severity", envlock_severity_name(x->severity));
	el_jset_str(o, "section", x->section);
	el_jset_str(o, "subject", x->subject);
	el_jset_str(o, "message", x->message);
	if (flags & EL_FINDING_SAVED)
		return;
	el_jset_str(o, "fix", x->fix);
	el_jset_str(o, "source", x->source);
}
