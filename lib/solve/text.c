/* The words solve's text is made of: option names, the requests, wrapping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve.h"
#include "util/text.h"
#include "util/xalloc.h"

const char *sv_opt(const sv_problem *p, const char *option)
{
	static const char *const fallback[][2] = {
		{ "python", "the 'python' option" }, { "cpu", "the 'cpu' option" },
		{ "allow_driver_upgrade", "the 'allow_driver_upgrade' option" }, { "specs", "the 'specs' option" },
		{ "configs", "the 'configs' option" }, { "max_stacks", "the 'max_stacks' option" },
		{ "output", "the 'output' option" }, { "pick", "the 'pick' option" }, { "format", "the 'format' option" },
		{ "json", "the 'json' option" }, { "stack", "the 'stack' option" },
	};
	const char *text = p->opts->option_text ? p->opts->option_text(option) : NULL;

	if (text)
		return text;
	for (size_t i = 0; i < sizeof(fallback) / sizeof(fallback[0]); i++)
		if (strcmp(fallback[i][0], option) == 0)
			return fallback[i][1];
	return option;
}

char *sv_requests_text(const sv_problem *p)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a request's name and spec per request");

	for (size_t i = 0; i < p->nreq; i++) {
		const sv_request *r = &p->req[i];

		el_buf_addf(&b, "%s%s%s", b.len ? ", " : "", r->kind == SV_CODEBASE ? r->codebase->distribution : r->name, r->spec);
	}
	if (!b.len)
		el_buf_adds(&b, "torch");
	return el_buf_detach(&b);
}

