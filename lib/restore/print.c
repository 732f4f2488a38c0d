/* The plan for a person (grouped by step) and as JSON. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "envlock/diff.h"
#include "lock/model.h"
#include "plan.h"
#include "util/error.h"
#include "util/text.h"

/* Up to this many "ok" items of a step are listed; more are counted. */
#define EL_OK_SHOWN 4

static envlock_item_state step_state(const el_step *s)
{
	static const int rank[] = { 0, 2, 3, 1, 4 }; /* ok < done < do < manual < failed */
	envlock_item_state worst = ENVLOCK_ITEM_OK;

	for (size_t k = 0; k < s->n; k++)
		if (rank[s->items[k].state] > rank[worst])
			worst = s->items[k].state;
	return worst;
}

static const char *colour(envlock_item_state s, unsigned flags)
{
	static const char *const c[] = { "\033[32m", "\033[33m", "\033[35m", "\033[32m", "\033[31m" };

	return (flags & ENVLOCK_PRINT_COLOR) ? c[s] : "";
}

void envlock_restore_print(const envlock_restore *r, FILE *out, unsigned flags)
{
	const char *reset = (flags & ENVLOCK_PRINT_COLOR) ? "\033[0m" : "";
	int width = ENVLOCK_PRINT_WIDTH_OF(flags);

	for (int i = 0; i < EL_STEP_COUNT; i++) {
		const el_step *s = &r->steps[i];
		envlock_item_state st = step_state(s);
		size_t ok = 0, ok_shown = 0;

		if (s->skipped) {
			fprintf(out, "%-12s skipped\n", s->name);
			continue;
		}
		for (size_t k = 0; k < s->n; k++)
			ok += s->items[k].state == ENVLOCK_ITEM_OK;
		fprintf(out, "%-12s %s%s%s\n", s->name, colour(st, flags), envlock_item_state_name(st), reset);
		for (size_t k = 0; k < s->n; k++) {
			const el_item *it = &s->items[k];

			if (it->state == ENVLOCK_ITEM_OK && ok > EL_OK_SHOWN && ok_shown++ >= EL_OK_SHOWN - 1)
				continue;
			/* item texts quote the lock: escaped so a hostile one cannot drive the terminal */
			fprintf(out, "  %s%-7s%s ", colour(it->state, flags), envlock_item_state_name(it->state), reset);
			el_term_wrap(out, it->text, width, 10, 10);
			fputc('\n', out);
			if (it->note) {
				const char *mark = it->state == ENVLOCK_ITEM_MANUAL ? "->" : " ";
				int at = 10 + (int)strlen(mark) + 1;

				fprintf(out, "          %s ", mark);
				el_term_wrap(out, it->note, width, at, at);
				fputc('\n', out);
			}
		}
		if (ok > EL_OK_SHOWN)
			fprintf(out, "  %s%-7s%s and %zu more as locked\n", colour(ENVLOCK_ITEM_OK, flags), "ok",
				reset, ok - (EL_OK_SHOWN - 1));
	}
	fprintf(out, "\n%zu to do, %zu manual, %zu ok", envlock_restore_count(r, ENVLOCK_ITEM_DO),
		envlock_restore_count(r, ENVLOCK_ITEM_MANUAL), envlock_restore_count(r, ENVLOCK_ITEM_OK));
	if (envlock_restore_count(r, ENVLOCK_ITEM_DONE) || envlock_restore_count(r, ENVLOCK_ITEM_FAILED))
		fprintf(out, ", %zu done, %zu failed", envlock_restore_count(r, ENVLOCK_ITEM_DONE),
			envlock_restore_count(r, ENVLOCK_ITEM_FAILED));
	fputc('\n', out);
}

int envlock_restore_print_json(const envlock_restore *r, envlock_ctx *ctx, FILE *out)
{
	cJSON *doc = el_jnew_obj(), *steps = el_jset_arr(doc, "steps");
	el_buf b;
	int rc = 0;

	el_jset_str(doc, "lock", r->id);
	el_jset_str(doc, "log", r->log_path);
	if (r->interrupted)
		el_jset_str(doc, "interrupted", r->interrupted);
	for (int i = 0; i < EL_STEP_COUNT; i++) {
		const el_step *s = &r->steps[i];
		cJSON *js = el_jpush_obj(steps), *items;

		el_jset_str(js, "step", s->name);
		el_jset_str(js, "state", s->skipped ? "skipped" : envlock_item_state_name(step_state(s)));
		items = el_jset_arr(js, "items");
		for (size_t k = 0; k < s->n; k++) {
			cJSON *ji = el_jpush_obj(items);

			el_jset_str(ji, "state", envlock_item_state_name(s->items[k].state));
			el_jset_str(ji, "what", s->items[k].text);
			el_jset_str(ji, "note", s->items[k].note);
			if (s->items[k].argv.n) {
				cJSON *argv = el_jset_arr(ji, "argv");

				for (size_t a = 0; a < s->items[k].argv.n; a++)
					el_jpush_str(argv, s->items[k].argv.v[a]);
			}
		}
	}
	el_buf_init(&b, 1u << 30);
	if (el_json_write_term(doc, &b, 2) != 0 || fwrite(b.data, 1, b.len, out) != b.len)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing the plan: %s", el_strerror(errno));
	el_buf_release(&b);
	cJSON_Delete(doc);
	return rc;
}
