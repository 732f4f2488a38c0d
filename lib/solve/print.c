/*
 * The solution for a person and as JSON. Strings from the lock (GPU
 * names, the host, the OS) are untrusted: every line goes out through
 * el_term_put. Prose wraps at the width given; commands never do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "solve.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

#define BOLD "\033[1m"
#define RESET "\033[0m"



/* The machine in one line: OS, glibc, driver, GPUs (grouped by name), gcc, nvcc, Python. */
static void machine_line(el_buf *b, const sv_machine *m)
{
	el_buf_addf(b, "%s", m->os ? m->os : "OS not recorded");
	el_buf_addf(b, " · glibc %s", m->glibc ? m->glibc : "not recorded");
	if (m->driver)
		el_buf_addf(b, " · NVIDIA driver %s", m->driver);
	else
		el_buf_adds(b, m->gpu_recorded ? " · no NVIDIA driver" : " · GPU not recorded");
	for (size_t i = 0; i < m->ngpus; i++) {
		size_t same = 0;
		bool told = false;

		for (size_t k = 0; k < i; k++)
			told = told || strcmp(m->gpus[k].name, m->gpus[i].name) == 0;
		if (told)
			continue;
		for (size_t k = i; k < m->ngpus; k++)
			same += strcmp(m->gpus[k].name, m->gpus[i].name) == 0;
		el_buf_adds(b, " · ");
		if (same > 1)
			el_buf_addf(b, "%zu x ", same);
		el_buf_addf(b, "%s (compute capability %s)", m->gpus[i].name, m->gpus[i].cc ? m->gpus[i].cc : "unknown");
	}
	if (m->gcc)
		el_buf_addf(b, " · gcc %s", m->gcc);
	for (size_t i = 0; i < m->nnvcc; i++)
		el_buf_addf(b, " · nvcc %s", m->nvcc[i]);
	if (m->python)
		el_buf_addf(b, " · Python %s", m->python);
}

/* Write b's lines, each through el_term_put (the newlines are the layout's, not the lock's). */
static void put_lines(FILE *out, const el_buf *b)
{
	char *text = el_xstrdup(el_buf_cstr(b)), *s = text, *line;

	while ((line = strsep(&s, "\n")) != NULL) {
		el_term_put(out, line);
		if (s)
			fputc('\n', out);
	}
	free(text);
}

static void stack_text(el_buf *b, const sv_stack *s, size_t rank, unsigned flags, int width)
{
	size_t nw = 0, vw = 0;
	const char *bold = (flags & ENVLOCK_PRINT_COLOR) ? BOLD : "", *reset = (flags & ENVLOCK_PRINT_COLOR) ? RESET : "";

	char *shown[SV_MAX_REQUESTS + 6];

	/* a build pip names without its variant (torch==2.4.1 from the cu121 index) shows it beside */
	for (size_t i = 0; i < s->nlayers; i++) {
		const sv_layer *l = &s->layers[i];

		shown[i] = l->variant && !strchr(l->version, '+') ? el_xasprintf("%s (%s)", l->version, l->variant)
								  : el_xstrdup(l->version);
		if (strlen(l->name) > nw)
			nw = strlen(l->name);
		if (strlen(shown[i]) > vw)
			vw = strlen(shown[i]);
	}
	if (nw < strlen("not newer"))
		nw = strlen("not newer");
	{
		el_buf head = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the stack's layers, names and versions");

		for (size_t i = 0; i < s->nlayers; i++)
			el_buf_addf(&head, "%s%s %s", i ? " · " : "", s->layers[i].name, shown[i]);
		el_buf_addf(b, "%s%zu  ", bold, rank);
		el_wrap(b, el_buf_cstr(&head), width, 3, 3);
		el_buf_addf(b, "%s\n", reset);
		el_buf_release(&head);
	}
	for (size_t i = 0; i < s->nlayers; i++) {
		int col = (int)(3 + nw + 2 + vw + 2);

		el_buf_addf(b, "   %-*s  %-*s  ", (int)nw, s->layers[i].name, (int)vw, shown[i]);
		el_wrap(b, s->layers[i].why, width, col, col);
		el_buf_addc(b, '\n');
		free(shown[i]);
	}
	for (size_t i = 0; i < s->nruled; i++) {
		char *line = el_xasprintf("%s %s: %s", s->ruled[i].layer, s->ruled[i].candidate, s->ruled[i].why);
		int col = (int)(3 + nw + 2);

		el_buf_addf(b, "   %-*s  ", (int)nw, i ? "" : "not newer");
		el_wrap(b, line, width, col, col + 2);
		el_buf_addc(b, '\n');
		free(line);
	}
	for (size_t i = 0; i < s->nnotes; i++) {
		int col = (int)(3 + nw + 2);

		el_buf_addf(b, "   %-*s  ", (int)nw, i ? "" : "note");
		el_wrap(b, s->notes[i], width, col, col);
		el_buf_addc(b, '\n');
	}
	for (size_t i = 0; i < s->ncommands; i++)
		el_buf_addf(b, "   %-*s  %s\n", (int)nw, i ? "" : "install", s->commands[i]);
}

int envlock_solution_print(const envlock_solution *sol, envlock_ctx *ctx, FILE *out, unsigned flags, int width)
{
	const sv_problem *p = &sol->p;
	el_buf b = EL_BUF_INIT(1u << 22);
	char *req = sv_requests_text(p);

	el_buf_addf(&b, "envlock solve: %s", req);
	if (p->opts->python)
		el_buf_addf(&b, " with Python %s", p->opts->python);
	el_buf_addf(&b, ", on %s\n", sol->from);
	el_buf_adds(&b, "machine  ");
	{
		el_buf m = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the machine's recorded names and versions");

		machine_line(&m, &p->m);
		el_wrap(&b, el_buf_cstr(&m), width, 9, 9);
		el_buf_release(&m);
	}
	el_buf_addc(&b, '\n');
	if (!p->gpu) {
		if (!p->m.driver && !p->m.ngpus)
			el_buf_adds(&b, "plan     there is no NVIDIA GPU here, so these are CPU stacks\n");
		else
			el_buf_addf(&b, "plan     CPU stacks, as asked (%s)\n", sv_opt(p, "cpu"));
	} else {
		el_buf_adds(&b, "plan     GPU stacks\n");
	}
	for (size_t i = 0; i < sol->nstacks; i++) {
		el_buf_addc(&b, '\n');
		stack_text(&b, &sol->stacks[i], i + 1, flags, width);
	}
	el_buf_addc(&b, '\n');
	if (sol->nstacks) {
		char *tail = el_xasprintf("%s FILE writes the first as a script (%s N another, %s requirements a requirements file); %s gives each layer's source.",
					  sv_opt(p, "output"), sv_opt(p, "pick"), sv_opt(p, "format"), sv_opt(p, "json"));

		el_buf_addf(&b, "%zu stack%s fit%s. ", sol->nstacks, sol->nstacks == 1 ? "" : "s", sol->nstacks == 1 ? "s" : "");
		el_wrap(&b, tail, width, 14, 0);
		el_buf_addc(&b, '\n');
		free(tail);
	} else {
		const sv_none *n = &sol->none;

		el_buf_addf(&b, "nothing fits: %s\n  ", n->binding);
		el_wrap(&b, n->why, width, 2, 2);
		el_buf_addc(&b, '\n');
		if (n->source && *n->source) {
			/* the source's first sentence: where the fact is; --json has all of it */
			const char *end = strstr(n->source, ". ");
			char *first = end ? el_xstrndup(n->source, (size_t)(end - n->source)) : el_xstrdup(n->source);

			el_buf_adds(&b, "  source: ");
			el_wrap(&b, first, width, 10, 4);
			el_buf_addc(&b, '\n');
			free(first);
		}
		if (n->change) {
			el_buf_adds(&b, "  smallest change: ");
			el_wrap(&b, n->change, width, 19, 4);
			el_buf_addc(&b, '\n');
		}
		if (n->cpu_stacks)
			el_buf_addf(&b, "  %s plans CPU stacks, which do fit this machine\n", sv_opt(p, "cpu"));
	}
	free(req);
	if (el_buf_failed(&b)) {
		el_buf_release(&b);
		return el_error_set(ctx, ENVLOCK_ELIMIT, "the plan is longer than %zu bytes (a recorded name or version is too long)",
				    b.limit);
	}
	put_lines(out, &b);
	el_buf_release(&b);
	if (fflush(out) != 0 || ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "writing the plan failed");
	return 0;
}

int envlock_solution_print_json(const envlock_solution *sol, envlock_ctx *ctx, FILE *out)
{
	const sv_problem *p = &sol->p;
	cJSON *doc = cJSON_CreateObject(), *m, *a, *o;
	el_buf b = EL_BUF_INIT(1u << 24);
	int rc;

	m = el_jset_obj(doc, "machine");
	el_jset_str_or_null(m, "from", sol->from);
	el_jset_str_or_null(m, "os", p->m.os);
	el_jset_str_or_null(m, "glibc", p->m.glibc);
	el_jset_str_or_null(m, "driver", p->m.driver);
	el_jset_str_or_null(m, "gcc", p->m.gcc);
	el_jset_str_or_null(m, "python", p->m.python);
	a = el_jset_arr(m, "gpus");
	for (size_t i = 0; i < p->m.ngpus; i++) {
		o = el_jpush_obj(a);
		el_jset_str(o, "name", p->m.gpus[i].name);
		el_jset_str_or_null(o, "compute_capability", p->m.gpus[i].cc);
		el_jset_str_or_null(o, "compute_capability_source", p->m.gpus[i].cc_source);
		el_jset_str_or_null(o, "architecture", p->m.gpus[i].arch ? p->m.gpus[i].arch->name : NULL);
	}
	a = el_jset_arr(m, "nvcc");
	for (size_t i = 0; i < p->m.nnvcc; i++)
		el_jpush_str(a, p->m.nvcc[i]);
	el_jset_str(doc, "mode", p->gpu ? "gpu" : "cpu");
	a = el_jset_arr(doc, "requests");
	for (size_t i = 0; i < p->nreq; i++) {
		o = el_jpush_obj(a);
		el_jset_str(o, "name", p->req[i].kind == SV_CODEBASE ? p->req[i].codebase->distribution : p->req[i].name);
		el_jset_str(o, "spec", p->req[i].spec);
		el_jset_str(o, "from", p->req[i].origin);
	}
	a = el_jset_arr(doc, "stacks");
	for (size_t i = 0; i < sol->nstacks; i++) {
		const sv_stack *s = &sol->stacks[i];
		cJSON *l;

		o = el_jpush_obj(a);
		el_jset_int(o, "rank", (long long)i + 1);
		l = el_jset_arr(o, "layers");
		for (size_t k = 0; k < s->nlayers; k++) {
			cJSON *x = el_jpush_obj(l);

			el_jset_str(x, "name", s->layers[k].name);
			el_jset_str(x, "version", s->layers[k].version);
			el_jset_str_or_null(x, "variant", s->layers[k].variant);
			el_jset_str(x, "why", s->layers[k].why);
			el_jset_str_or_null(x, "source", s->layers[k].source);
		}
		l = el_jset_arr(o, "pins");
		for (size_t k = 0; k < s->npins; k++)
			el_jpush_str(l, s->pins[k]);
		l = el_jset_arr(o, "commands");
		for (size_t k = 0; k < s->ncommands; k++)
			el_jpush_str(l, s->commands[k]);
		l = el_jset_arr(o, "ruled_out");
		for (size_t k = 0; k < s->nruled; k++) {
			cJSON *x = el_jpush_obj(l);

			el_jset_str(x, "layer", s->ruled[k].layer);
			el_jset_str(x, "candidate", s->ruled[k].candidate);
			el_jset_str(x, "constraint", s->ruled[k].constraint);
			el_jset_str(x, "why", s->ruled[k].why);
			el_jset_str_or_null(x, "source", s->ruled[k].source);
		}
		l = el_jset_arr(o, "notes");
		for (size_t k = 0; k < s->nnotes; k++)
			el_jpush_str(l, s->notes[k]);
	}
	if (sol->nstacks) {
		cJSON_AddNullToObject(doc, "none_fits");
	} else {
		o = el_jset_obj(doc, "none_fits");
		el_jset_str(o, "binding", sol->none.binding);
		el_jset_str(o, "why", sol->none.why);
		el_jset_str_or_null(o, "source", sol->none.source);
		el_jset_str_or_null(o, "smallest_change", sol->none.change);
		el_jset_bool(o, "cpu_stacks", sol->none.cpu_stacks);
	}
	rc = el_json_write_term(doc, &b, 2);
	cJSON_Delete(doc);
	if (rc == 0 && (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0))
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing the plan failed");
	el_buf_release(&b);
	return rc < 0 ? rc : 0;
}
