/* A lock's pip requirements, one line per distribution, as pip freeze writes them. */
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/text.h"
#include "util/xalloc.h"

/* ------------------------------------------------------------------ PEP 440 */

static regex_t pep440_re;
static int pep440_ok;
static pthread_once_t pep440_once = PTHREAD_ONCE_INIT;

static void pep440_compile(void)
{
	/*
	 * packaging's VERSION_PATTERN (PEP 440, appendix B), which pip uses to
	 * decide between "==" and "===" in pip freeze; POSIX groups instead of
	 * (?:...), matched case-insensitively as packaging does.
	 */
	static const char pattern[] =
		"^[[:space:]]*v?([0-9]+!)?[0-9]+(\\.[0-9]+)*"
		"([-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?"
		"((-[0-9]+)|([-_.]?(post|rev|r)[-_.]?[0-9]*))?"
		"([-_.]?dev[-_.]?[0-9]*)?"
		"(\\+[a-z0-9]+([-_.][a-z0-9]+)*)?[[:space:]]*$";

	pep440_ok = regcomp(&pep440_re, pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0;
}

bool el_pep440_valid(const char *version)
{
	pthread_once(&pep440_once, pep440_compile);
	return pep440_ok && version && regexec(&pep440_re, version, 0, NULL, 0) == 0;
}

/* ------------------------------------------------------------------ pip lines */

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return path && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static el_owner owner_of(const el_pip_dist *d)
{
	const char *installer = d->installer, *path = d->path;

	if (installer && strcmp(installer, "conda") == 0)
		return EL_OWNER_CONDA;
	if (d->also_conda && (!installer || strcmp(installer, "pip") != 0))
		return EL_OWNER_CONDA;
	/* Debian's python3-* packages install here; pip installs into /usr/local (Debian Python Policy) */
	if (!installer && (el_starts_with(path ? path : "", "/usr/lib/python3/dist-packages/") ||
			   el_starts_with(path ? path : "", "/usr/lib/python2.7/dist-packages/")))
		return EL_OWNER_SYSTEM;
	return EL_OWNER_PIP;
}

/* "name==1.0", or "name===1.0ubuntu1" for a version PEP 440 cannot parse (pip freeze's rule). */
static char *pin(const char *name, const char *version)
{
	return el_xasprintf("%s%s%s", name, el_pep440_valid(version) ? "==" : "===", version);
}

/* file:///a/b -> /a/b (percent escapes left as they are: paths in locks are plain) */
static const char *file_url_path(const char *url)
{
	return url && el_starts_with(url, "file://") && url[7] == '/' ? url + 7 : NULL;
}

/* A git remote as pip writes it in a requirement: scp-like "git@host:p" becomes "ssh://git@host/p". */
static char *pip_git_url(const char *remote)
{
	const char *colon = strchr(remote, ':'), *at = strchr(remote, '@');

	if (strstr(remote, "://"))
		return el_xasprintf("git+%s", remote);
	if (remote[0] == '/')
		return el_xasprintf("git+file://%s", remote);
	if (colon && at && at < colon)
		return el_xasprintf("git+ssh://%.*s/%s", (int)(colon - remote), remote, colon + 1);
	return el_xasprintf("git+%s", remote);
}

/* The recorded repository holding source (absolute paths only), its commit and remote. */
static char *vcs_requirement(const el_view *v, const char *source, const char *name, bool *dirty)
{
	for (size_t i = 0; i < v->repos.nrepos; i++) {
		const el_repo *r = &v->repos.repos[i];
		const char *path = r->path, *commit = r->head.commit;
		const char *url = NULL;
		char *egg, *git, *req;

		if (!path || path[0] != '/' || !el_export_word(commit) || !under(source, path))
			continue;
		/* pip asks git for remote.origin.url */
		for (size_t j = 0; j < r->nremotes; j++) {
			const char *n = r->remotes[j].name, *u = r->remotes[j].url;

			if (el_export_word(u) && (!url || (n && strcmp(n, "origin") == 0)))
				url = u;
		}
		if (!url)
			return NULL;
		egg = el_xstrdup(name);
		for (char *p = egg; *p; p++)
			if (*p == '-')
				*p = '_';
		git = pip_git_url(url);
		req = source[strlen(path)] == '/'
			? el_xasprintf("-e %s@%s#egg=%s&subdirectory=%s", git, commit, egg, source + strlen(path) + 1)
			: el_xasprintf("-e %s@%s#egg=%s", git, commit, egg);
		*dirty = r->dirty;
		free(git);
		free(egg);
		return req;
	}
	return NULL;
}

static void one_req(const el_view *v, const el_pip_dist *d, el_pip_req *r)
{
	const char *name = d->name, *version = d->version;
	const char *url = d->direct_url.url, *vcs = d->direct_url.vcs;
	const char *commit = d->direct_url.commit_id, *hash = d->direct_url.archive_hash;

	r->dist = d;
	r->name = el_xstrdup(name);
	r->key = el_xstrdup(name);
	r->unsafe = !el_export_word(name) || (version && !el_export_word(version)) ||
		    (url && !el_export_word(url)) || (vcs && !el_export_word(vcs)) ||
		    (commit && !el_export_word(commit)) || (hash && !el_export_word(hash)) ||
		    (d->source && !el_export_word(d->source));
	for (char *p = r->key; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	r->version = version ? el_xstrdup(version) : NULL;
	r->owner = owner_of(d);
	if (r->unsafe)
		return;
	if (hash && el_starts_with(hash, "sha256=") && strlen(hash) == 7 + 64)
		r->sha256 = el_xstrdup(hash + 7);

	if (d->editable) {
		const char *source = d->source;
		bool dirty = false;

		if (vcs && commit && url) {
			char *egg = el_xstrdup(name);

			for (char *p = egg; *p; p++)
				if (*p == '-')
					*p = '_';
			r->req = el_xasprintf("-e %s+%s@%s#egg=%s", vcs, url, commit, egg);
			free(egg);
			return;
		}
		if (!source)
			source = file_url_path(url);
		if (source && (r->req = vcs_requirement(v, source, name, &dirty)) != NULL) {
			if (dirty)
				r->comment = el_xasprintf("# the checkout had uncommitted changes when the lock was saved");
			return;
		}
		if (source) {
			char *p = version ? pin(name, version) : el_xstrdup(name);

			/* pip freeze's words for an editable tree that is not a VCS checkout */
			r->comment = el_xasprintf("# Editable install with no version control (%s)", p);
			r->req = el_xasprintf("-e %s", source);
			r->local_editable = true;
			free(p);
		}
		return;
	}
	/* conda's builds record a direct URL of their build directory: pin the version instead */
	if (url && r->owner != EL_OWNER_CONDA) {
		if (vcs && commit)
			r->req = el_xasprintf("%s @ %s+%s@%s", name, vcs, url, commit);
		else
			r->req = el_xasprintf("%s @ %s%s%s", name, url, hash ? "#" : "", hash ? hash : "");
		return;
	}
	if (version)
		r->req = pin(name, version);
}

static int cmp_req(const void *a, const void *b)
{
	const el_pip_req *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->name, y->name);
}

/* A distribution with its PEP 503 name and place in the lock, to keep the first of each name. */
typedef struct {
	char *norm;
	size_t order;
	const el_pip_dist *dist;
} dist_ref;

static int cmp_ref(const void *a, const void *b)
{
	const dist_ref *x = a, *y = b;
	int c = strcmp(x->norm, y->norm);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

void el_pip_reqs(const el_view *v, el_pip_req **out, size_t *n)
{
	size_t total = 0, count = 0;
	el_pip_req *reqs;
	dist_ref *refs;

	*out = NULL;
	*n = 0;
	if (!v->pip.st.present)
		return;
	refs = el_xcalloc(v->pip.ndists + 1, sizeof(*refs));
	for (size_t i = 0; i < v->pip.ndists; i++) {
		const el_pip_dist *d = &v->pip.dists[i];
		const char *name = d->name;

		if (!name || !*name)
			continue;
		refs[total].norm = el_pep503_name(name);
		refs[total].order = total;
		refs[total].dist = d;
		total++;
	}
	/* one line per distribution: the first of a name in the lock's order */
	qsort(refs, total, sizeof(*refs), cmp_ref);
	reqs = el_xcalloc(total + 1, sizeof(*reqs));
	for (size_t i = 0; i < total; i++)
		if (i == 0 || strcmp(refs[i].norm, refs[i - 1].norm) != 0)
			one_req(v, refs[i].dist, &reqs[count++]);
	for (size_t i = 0; i < total; i++)
		free(refs[i].norm);
	free(refs);
	qsort(reqs, count, sizeof(*reqs), cmp_req);
	*out = reqs;
	*n = count;
}

void el_pip_reqs_free(el_pip_req *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].key);
		free(r[i].name);
		free(r[i].version);
		free(r[i].comment);
		free(r[i].req);
		free(r[i].sha256);
	}
	free(r);
}
