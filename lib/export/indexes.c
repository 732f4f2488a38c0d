/*
 * Where pip is to look for what an export pins: pip's requirements-file
 * options (--index-url, --extra-index-url, --find-links, which pip takes on
 * a line of their own in a requirements file) from the lock's pip
 * configuration and from each distribution's recorded or inferred origin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/buf.h"
#include "util/xalloc.h"

/* " torch 1.10.0+cu102, torchvision 0.11.1+cu102": the distributions an index serves */
static void names(el_buf *b, const el_pip_index *x)
{
	for (size_t i = 0; i < x->ndists; i++)
		el_buf_addf(b, "%s %s %s", i ? "," : "", x->dists[i]->name,
			      x->dists[i]->version ? x->dists[i]->version : "");
}

size_t el_pip_index_lines(const el_pip_req *reqs, size_t n, bool (*keep)(const el_pip_req *r),
			  const el_view *v, el_index_line **out)
{
	const el_pip_dist **dists = el_xcalloc(n + 1, sizeof(*dists));
	el_pip_index *ix;
	el_index_line *lines;
	size_t nd = 0, nix, count = 0;

	for (size_t i = 0; i < n; i++)
		if ((!keep || keep(&reqs[i])) && !reqs[i].unsafe && reqs[i].req && reqs[i].dist)
			dists[nd++] = reqs[i].dist;
	el_pip_indexes(v, dists, nd, &ix, &nix);
	lines = el_xcalloc(nix + 1, sizeof(*lines));
	for (size_t i = 0; i < nix; i++) {
		const el_pip_index *x = &ix[i];
		const char *flag = el_pip_option_flag(x->option);
		el_buf c = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a fixed sentence, where pip's configuration came from and the names it serves");

		/* the lock passed the untrusted checks; a hand-made document may still hold anything */
		if (!flag || !el_export_word(x->url))
			continue;
		if (x->from) {
			el_buf_adds(&c, "# from pip's configuration");
			if (el_export_line(x->from))
				el_buf_addf(&c, " (%s)", x->from);
			if (x->ndists) {
				el_buf_adds(&c, "; it serves");
				names(&c, x);
			}
		} else {
			el_buf_adds(&c, "# inferred by envlock, pip records no index:");
			names(&c, x);
		}
		lines[count].comment = el_buf_detach(&c);
		lines[count++].line = el_xasprintf("%s %s", flag, x->url);
	}
	el_pip_indexes_free(ix, nix);
	free(dists);
	*out = lines;
	return count;
}

void el_index_lines_free(el_index_line *l, size_t n)
{
	for (size_t i = 0; l && i < n; i++) {
		free(l[i].comment);
		free(l[i].line);
	}
	free(l);
}
