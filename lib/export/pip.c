/* The requirements export: the lines pip freeze --all would print, with hashes where pip can use them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void el_write_requirements(el_export *e, el_pip_req *reqs, size_t n,
			   bool (*keep)(const el_pip_req *r), bool image)
{
	size_t kept = 0, hashed = 0, nlines;
	el_index_line *lines;
	bool all_hashed;

	for (size_t i = 0; i < n; i++) {
		if ((keep && !keep(&reqs[i])) || reqs[i].unsafe)
			continue;
		kept++;
		hashed += reqs[i].sha256 != NULL;
	}
	/*
	 * One --hash puts pip in hash-checking mode, where every requirement
	 * must have one (and none can be editable or VCS: those have no archive
	 * hash): give them only when all can.
	 */
	all_hashed = kept && hashed == kept;
	/* pip's requirements-file options go on lines of their own, before the pins they serve */
	nlines = el_pip_index_lines(reqs, n, keep, e->v, &lines);
	for (size_t i = 0; i < nlines; i++)
		el_buf_addf(e->out, "%s\n%s\n", lines[i].comment, lines[i].line);
	el_index_lines_free(lines, nlines);
	if (hashed && !all_hashed) {
		el_buf_addf(e->out, "# %zu of %zu requirements have a known sha256; pip checks --hash only when\n"
				      "# every line has one, so the known ones stay in their URLs (#sha256=)\n",
			      hashed, kept);
		el_export_warn(e, "%zu of %zu pip requirements have no known sha256: no --hash lines", kept - hashed, kept);
	}
	for (size_t i = 0; i < n; i++) {
		el_pip_req *r = &reqs[i];

		if (keep && !keep(r))
			continue;
		if (r->unsafe) {
			el_export_warn(e, "pip: a distribution with spaces or control characters in its name, version or URL was left out");
			continue;
		}
		if (!r->req) {
			el_buf_addf(e->out, "# %s: no version or source recorded\n", r->name);
			el_export_warn(e, "pip: %s has no version or source in the lock; left out", r->name);
			continue;
		}
		if (image && r->local_editable) {
			el_buf_addf(e->out, "%s\n# %s: that source tree is not in the image; COPY it in and pip install -e it\n",
				      r->comment, r->req);
			continue;
		}
		if (r->comment)
			el_buf_addf(e->out, "%s\n", r->comment);
		if (all_hashed)
			el_buf_addf(e->out, "%s --hash=sha256:%s\n", r->req, r->sha256);
		else
			el_buf_addf(e->out, "%s\n", r->req);
	}
}

int el_export_requirements(el_export *e)
{
	el_pip_req *reqs;
	size_t n;

	el_pip_reqs(e->v, &reqs, &n);
	if (!n) {
		el_pip_reqs_free(reqs, n);
		return ENVLOCK_EINVAL;
	}
	el_buf_addf(e->out, "# pip requirements of envlock lock %s\n"
			      "# (pip freeze --all form; conda's packages pinned by version)\n", e->lock_id);
	el_write_requirements(e, reqs, n, NULL, false);
	el_pip_reqs_free(reqs, n);
	return 0;
}
