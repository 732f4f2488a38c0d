/* The conda exports: `conda list --explicit --md5` and `conda env export` forms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

bool el_conda_exportable(const el_view *v)
{
	return v->conda.st.present && v->conda.npackages > 0;
}

const char *el_conda_platform(const el_view *v)
{
	const char *arch = v->system.arch;

	for (size_t i = 0; el_conda_exportable(v) && i < v->conda.npackages; i++) {
		const char *sub = v->conda.packages[i].subdir;

		if (sub && strcmp(sub, "noarch") != 0)
			return sub;
	}
	if (!arch)
		return NULL;
	if (strcmp(arch, "x86_64") == 0)
		return "linux-64";
	if (strcmp(arch, "aarch64") == 0)
		return "linux-aarch64";
	if (strcmp(arch, "ppc64le") == 0)
		return "linux-ppc64le";
	return NULL;
}

static bool is_md5(const char *s)
{
	if (!s || strlen(s) != 32)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

void el_write_conda_explicit(el_export *e)
{
	const char *platform = el_conda_platform(e->v);
	size_t npkgs = el_conda_exportable(e->v) ? e->v->conda.npackages : 0;

	/* conda's own header (conda/cli/main_list.py, print_export_header) */
	el_buf_adds(e->out, "# This file may be used to create an environment using:\n"
			    "# $ conda create --name <env> --file <this file>\n");
	if (platform)
		el_buf_addf(e->out, "# platform: %s\n", platform);
	el_buf_addf(e->out, "# created-by: envlock export of lock %s\n@EXPLICIT\n", e->lock_id);
	for (size_t i = 0; i < npkgs; i++) {
		const el_conda_package *p = &e->v->conda.packages[i];
		const char *url = p->url, *md5 = p->md5, *sha256 = p->sha256;
		const char *name = p->name, *version = p->version, *build = p->build;

		if (!el_export_word(name) || !el_export_word(version) || (build && !el_export_word(build))) {
			el_export_warn(e, "conda: a package with spaces or control characters in its name or version was left out");
			continue;
		}
		if (!el_export_word(url)) {
			/* conda's words for a record without a URL */
			el_buf_addf(e->out, "# no URL for: %s-%s-%s\n", name ? name : "?",
				      version ? version : "?", build ? build : "?");
			el_export_warn(e, "conda: %s %s has no URL in the lock; conda create cannot install it",
				       name ? name : "?", version ? version : "?");
			continue;
		}
		/*
		 * md5 is what every conda reads; a record with only a sha256 gets
		 * the form `conda list --explicit --sha256` writes (conda >= 24.9,
		 * conda/conda#14048): an older conda refuses it loudly rather than
		 * installing an unchecked file.
		 */
		if (is_md5(md5))
			el_buf_addf(e->out, "%s#%s\n", url, md5);
		else if (sha256 && strlen(sha256) == 64 && strspn(sha256, "0123456789abcdef") == 64)
			el_buf_addf(e->out, "%s#%s\n", url, sha256);
		else
			el_buf_addf(e->out, "%s\n", url);
	}
}

int el_export_conda_explicit(el_export *e)
{
	if (!el_conda_exportable(e->v))
		return ENVLOCK_EINVAL;
	el_write_conda_explicit(e);
	return 0;
}

/* ------------------------------------------------------------------ environment.yml */

/* A YAML scalar: plain when nothing in it means something to YAML, else double-quoted. */
static void yaml_scalar(el_buf *out, const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~", NULL };
	bool plain = *s && strchr("-?:,[]{}#&*!|>'\"%@`", s[0]) == NULL;

	for (const char *p = s; plain && *p; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			strchr("._=+!<>~@/,-", *p) != NULL;
	for (int i = 0; plain && words[i]; i++)
		plain = strcasecmp(s, words[i]) != 0;
	if (plain) {
		el_buf_adds(out, s);
		return;
	}
	el_buf_addc(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			el_buf_addf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			el_buf_addf(out, "\\x%02x", *p);
		else
			el_buf_addc(out, (char)*p);
	}
	el_buf_addc(out, '"');
}

/* The channel as conda env export names it: "defaults", "conda-forge", or the URL without the subdir. */
static char *channel_name(const el_conda_package *pkg)
{
	const char *ch = pkg->channel, *sub = pkg->subdir;
	size_t len;

	if (!ch || !*ch)
		return NULL;
	len = strlen(ch);
	while (len && ch[len - 1] == '/')
		len--;
	if (sub && *sub && len > strlen(sub) && ch[len - strlen(sub) - 1] == '/' &&
	    strncmp(ch + len - strlen(sub), sub, strlen(sub)) == 0)
		len -= strlen(sub) + 1;
	/* pkgs/main, pkgs/r, pkgs/free and pkgs/msys2 of repo.anaconda.com make up "defaults" */
	if (el_starts_with(ch, "https://repo.anaconda.com/pkgs/") || el_starts_with(ch, "http://repo.anaconda.com/pkgs/"))
		return el_xstrdup("defaults");
	if (el_starts_with(ch, "https://conda.anaconda.org/") && len > 27)
		return el_xstrndup(ch + 27, len - 27);
	return el_xstrndup(ch, len);
}

static bool pip_owned(const el_pip_req *r)
{
	return r->owner == EL_OWNER_PIP;
}

int el_export_environment_yml(el_export *e)
{
	const el_conda_package *pkgs = el_conda_exportable(e->v) ? e->v->conda.packages : NULL;
	size_t npkgs = pkgs ? e->v->conda.npackages : 0;
	const char *envname = e->v->conda.name, *pyver = e->v->python.version;
	el_strvec channels = EL_STRVEC_INIT;
	size_t npip = 0, n;
	bool defaults = false;
	el_pip_req *reqs;

	el_pip_reqs(e->v, &reqs, &n);
	for (size_t i = 0; i < n; i++)
		npip += pip_owned(&reqs[i]) && !reqs[i].unsafe;
	el_buf_addf(e->out, "# conda environment of envlock lock %s\n"
			      "# conda env create -f <this file>; the lock does not record channel priority\n",
		      e->lock_id);
	el_buf_adds(e->out, "name: ");
	/* conda reserves "base" for its own environment: conda env create cannot make one */
	yaml_scalar(e->out, envname && strcmp(envname, "base") != 0 ? envname : "envlock");
	el_buf_adds(e->out, "\nchannels:\n");
	for (size_t k = 0; k < npkgs; k++) {
		char *c = el_export_word(pkgs[k].channel) ? channel_name(&pkgs[k]) : NULL;
		bool seen = false;

		if (!c)
			continue;
		if (strcmp(c, "defaults") == 0) {
			defaults = true;
			free(c);
			continue;
		}
		for (size_t i = 0; i < channels.n && !seen; i++)
			seen = strcmp(channels.v[i], c) == 0;
		if (seen) {
			free(c);
			continue;
		}
		el_strvec_push_owned(&channels, c);
	}
	el_strvec_sort(&channels);
	/* like conda env export: named channels first, defaults last */
	for (size_t i = 0; i < channels.n; i++) {
		el_buf_adds(e->out, "  - ");
		yaml_scalar(e->out, channels.v[i]);
		el_buf_addc(e->out, '\n');
	}
	if (defaults || !channels.n)
		el_buf_adds(e->out, "  - defaults\n");
	el_buf_adds(e->out, "dependencies:\n");
	if (pkgs) {
		bool has_pip = false;

		for (size_t k = 0; k < npkgs; k++) {
			const char *name = pkgs[k].name, *version = pkgs[k].version, *build = pkgs[k].build;
			char *spec;

			if (!el_export_word(name) || !el_export_word(version) || (build && !el_export_word(build)))
				continue;
			spec = build ? el_xasprintf("%s=%s=%s", name, version, build) : el_xasprintf("%s=%s", name, version);
			el_buf_adds(e->out, "  - ");
			yaml_scalar(e->out, spec);
			el_buf_addc(e->out, '\n');
			free(spec);
			has_pip |= strcmp(name, "pip") == 0;
		}
		if (npip && !has_pip)
			el_buf_adds(e->out, "  - pip  # not among the lock's conda packages; the pip: section needs it\n");
	} else {
		/* no conda environment was saved: a conda Python of the same version, and pip */
		if (pyver) {
			char *spec = el_xasprintf("python=%s", pyver);

			el_buf_adds(e->out, "  - ");
			yaml_scalar(e->out, spec);
			el_buf_addc(e->out, '\n');
			free(spec);
		}
		el_buf_adds(e->out, "  - pip\n");
	}
	if (npip) {
		el_index_line *lines;
		size_t nlines = el_pip_index_lines(reqs, n, pip_owned, e->v, &lines);

		el_buf_adds(e->out, "  - pip:\n");
		/* conda env create hands the pip: list to pip as a requirements file: its options work there too */
		for (size_t i = 0; i < nlines; i++) {
			el_buf_addf(e->out, "      %s\n      - ", lines[i].comment);
			yaml_scalar(e->out, lines[i].line);
			el_buf_addc(e->out, '\n');
		}
		el_index_lines_free(lines, nlines);
		for (size_t i = 0; i < n; i++) {
			el_pip_req *r = &reqs[i];

			if (!pip_owned(r) || r->unsafe)
				continue;
			if (!r->req) {
				el_buf_addf(e->out, "      # %s: no version or source recorded\n", r->name);
				continue;
			}
			if (r->comment)
				el_buf_addf(e->out, "      %s\n", r->comment);
			el_buf_adds(e->out, "      - ");
			yaml_scalar(e->out, r->req);
			el_buf_addc(e->out, '\n');
		}
	}
	el_strvec_release(&channels);
	el_pip_reqs_free(reqs, n);
	return 0;
}
