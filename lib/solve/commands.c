/* The commands that install a stack, as a user pastes them, and the script and requirements file made of them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

const char *sv_env_name(const sv_problem *p)
{
	if (p->opts->env_name)
		return p->opts->env_name;
	for (size_t i = 0; i < p->nreq; i++)
		if (p->req[i].kind == SV_CODEBASE)
			return p->req[i].codebase->distribution;
	return "torch";
}

/* A pip argument as the shell needs it: quoted when it has a character the shell would read ('<', '>', '*'). */
static char *shell_arg(const char *s)
{
	return strpbrk(s, "<>*|&;!~ ") ? el_xasprintf("'%s'", s) : el_xstrdup(s);
}

static void add_command(sv_stack *s, char *cmd)
{
	s->commands[s->ncommands++] = cmd;
}

/* The prebuilt wheel of the chosen mmcv, else the build from source with its CUDA ops (mmcv_builds); malloc'd. */
static char *mmcv_command(const sv_problem *p, const sv_choice *c)
{
	el_kb_mmcv_build b;

	if (c->prebuilt || !c->torch->cuda || !el_kb_mmcv_build_of(p->kb, c->mmcv->version, &b))
		return el_kb_mmcv_pip(p->kb, c->mmcv, c->torch->torch, c->torch->cuda);
	b.package = c->mmcv->package; /* the release's own name, as its pin has it */
	return el_kb_mmcv_build_pip(&b, c->mmcv->version);
}

void sv_commands_build(sv_stack *s, const sv_problem *p)
{
	const sv_choice *c = &s->c;
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a pin per request");

	s->pins[s->npins++] = el_xasprintf("python==%s", c->python);
	s->pins[s->npins++] = el_xstrdup(c->torch->torch_pin);
	s->pins[s->npins++] = el_xstrdup(c->torch->vision_pin);
	add_command(s, el_xasprintf("conda create -n %s python=%s -y", sv_env_name(p), c->python));
	add_command(s, el_xasprintf("conda activate %s", sv_env_name(p)));
	add_command(s, el_kb_torch_pip(c->torch));
	if (!c->mmcv)
		return;
	s->pins[s->npins++] = el_xasprintf("%s==%s", c->mmcv->package, c->mmcv->version);
	add_command(s, mmcv_command(p, c));
	for (size_t i = 0; i < s->nlayers; i++)
		if (strcmp(s->layers[i].name, "mmengine") == 0) {
			char *pin = el_xasprintf("mmengine%s", s->layers[i].version), *arg = shell_arg(pin);

			s->pins[s->npins++] = pin;
			add_command(s, el_xasprintf("pip install %s", arg));
			free(arg);
		}
	for (size_t i = 0; i < p->nreq; i++)
		if (c->codebase[i]) {
			char *pin = el_xasprintf("%s==%s", p->req[i].codebase->distribution, c->codebase[i]->version);

			el_buf_addf(&b, " %s", pin);
			s->pins[s->npins++] = pin;
		}
	if (b.len)
		add_command(s, el_xasprintf("pip install%s", el_buf_cstr(&b)));
	el_buf_release(&b);
}

/* "# <text>", one comment line per reason (newlines in text become spaces). */
static void comment(el_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void comment(el_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = el_xvasprintf(fmt, ap);
	va_end(ap);
	for (char *t = text; *t; t++)
		if (*t == '\n' || *t == '\r')
			*t = ' ';
	el_buf_addf(b, "# %s\n", text);
	free(text);
}

static void header(el_buf *b, const sv_problem *p, const sv_stack *s, size_t rank, size_t of)
{
	char *req = sv_requests_text(p);

	comment(b, "envlock solve: stack %zu of %zu for %s (%s)", rank, of, req, p->gpu ? "GPU" : "CPU");
	comment(b, "machine: %s%s%s%s%s%s%s", p->m.host ? p->m.host : "this machine", p->m.driver ? ", NVIDIA driver " : "",
		p->m.driver ? p->m.driver : "", p->m.glibc ? ", glibc " : "", p->m.glibc ? p->m.glibc : "",
		p->m.os ? ", " : "", p->m.os ? p->m.os : "");
	for (size_t i = 0; i < s->nlayers; i++)
		comment(b, "%s %s: %s", s->layers[i].name, s->layers[i].version, s->layers[i].why);
	for (size_t i = 0; i < s->nnotes; i++)
		comment(b, "note: %s", s->notes[i]);
	free(req);
}

char *sv_script(const sv_problem *p, const sv_stack *s, size_t rank, size_t of)
{
	el_buf b = EL_BUF_INIT(SV_SCRIPT_MAX);

	el_buf_adds(&b, "#!/bin/sh\n");
	header(&b, p, s, rank, of);
	el_buf_adds(&b, "set -e\n");
	for (size_t i = 0; i < s->ncommands; i++) {
		if (strncmp(s->commands[i], "conda activate ", 15) == 0)
			el_buf_adds(&b, "# conda's shell functions, which a script does not have\neval \"$(conda shell.posix hook)\"\n");
		el_buf_addf(&b, "%s\n", s->commands[i]);
	}
	if (el_buf_failed(&b)) {
		el_buf_release(&b);
		return NULL;
	}
	return el_buf_detach(&b);
}

/* An index option as a requirements line; --index-url there would hide PyPI from every other line, so it becomes --extra-index-url. */
static void index_line(el_buf *b, const char *option, const char *url)
{
	if (!option)
		return;
	el_buf_addf(b, "%s %s\n", strcmp(option, "find-links") == 0 ? "--find-links" : "--extra-index-url", url);
}

char *sv_requirements(const sv_problem *p, const sv_stack *s, size_t rank, size_t of)
{
	el_buf b = EL_BUF_INIT(SV_SCRIPT_MAX);
	const sv_choice *c = &s->c;

	header(&b, p, s, rank, of);
	comment(&b, "make the environment first: conda create -n %s python=%s -y && conda activate %s", sv_env_name(p),
		c->python, sv_env_name(p));
	if (c->mmcv && !c->prebuilt && c->torch->cuda)
		comment(&b, "%s %s is built from source: run pip with MMCV_WITH_OPS=1 FORCE_CUDA=1 set", c->mmcv->package,
			c->mmcv->version);
	index_line(&b, c->torch->index_option, c->torch->index_url);
	if (c->mmcv && (c->prebuilt || !c->torch->cuda)) {
		char *url = el_kb_mmcv_index_url(p->kb, c->torch->torch, c->torch->cuda, NULL);

		index_line(&b, "find-links", url);
		free(url);
	}
	/* python is the environment's, not a requirement pip installs */
	for (size_t i = 1; i < s->npins; i++)
		el_buf_addf(&b, "%s\n", s->pins[i]);
	if (el_buf_failed(&b)) {
		el_buf_release(&b);
		return NULL;
	}
	return el_buf_detach(&b);
}
