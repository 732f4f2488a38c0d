/*
 * The pip probe: the distributions installed in the chosen environment's
 * site dirs, from their metadata (PEP 376 dist-info, PEP 610
 * direct_url.json, setuptools egg-info and develop-mode egg-links).
 * RECORD is never read: it is the largest file and says nothing a lock needs.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "probe.h"
#include "util/error.h"
#include "util/pool.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

typedef struct {
	cJSON *obj;	/* detached until added, in order, to "distributions" */
	el_dist_found t;	/* what obj says, handed to the later probes */
	char *norm;
	size_t site;	/* index of its site dir: sys.path order */
} dist;

typedef struct {
	dist *v;
	size_t n, cap;
	el_strvec conda; /* normalised conda package names, sorted */
	size_t site;	 /* the site dir being read */
} dist_list;


static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The conda environment's package names (conda runs first), normalised. */
static void load_conda_names(el_probe *p, dist_list *l)
{
	for (size_t i = 0; i < p->conda.n; i++)
		el_strvec_push_owned(&l->conda, el_pep503_name(p->conda.pkgs[i].name));
	el_strvec_sort(&l->conda);
}

static bool in_conda(const dist_list *l, const char *norm)
{
	return l->conda.n && bsearch(&norm, l->conda.v, l->conda.n, sizeof(char *), cmp_str);
}


/* file:///home/a/b%20c -> /home/a/b c; NULL for other URLs. */
static char *file_url_path(const char *url)
{
	const char *s;
	el_buf b = EL_BUF_FITS(strlen(url) + 1, "decoding a URL only shortens it");

	if (el_starts_with(url, "file://localhost/"))
		s = url + 16;
	else if (el_starts_with(url, "file:///"))
		s = url + 7;
	else
		return NULL;
	for (; *s; s++) {
		if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
			char hex[3] = { s[1], s[2], 0 };

			el_buf_addc(&b, (char)strtol(hex, NULL, 16));
			s += 2;
		} else {
			el_buf_addc(&b, *s);
		}
	}
	return el_buf_detach(&b);
}



/* First line of a small text file in dir (resolved), or NULL. */
static char *first_line(el_probe *p, const char *dir, const char *name)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	char *out = NULL;
	int e, rc = el_root_read_at(&p->root, dir, name, &b, &e);

	if (rc == 0 && !el_is_text(b.data, b.len)) {
		char *path = el_path_join(dir, name);

		el_probe_warn(p, "'%s': binary data where text was expected, ignored", path);
		free(path);
	} else if (rc == 0) {
		const char *pos = b.data, *line;
		size_t ll;

		if (el_next_line(&pos, b.data + b.len, &line, &ll)) {
			el_trim(&line, &ll);
			if (ll)
				out = el_xstrndup(line, ll);
		}
	} else {
		char *path = el_path_join(dir, name);

		el_probe_warn_read(p, path, rc, e, b.limit);
		free(path);
	}
	el_buf_release(&b);
	return out;
}

static bool exists_in(el_probe *p, const char *dir, const char *name)
{
	struct stat st;

	return el_root_lstat_at(&p->root, dir, name, &st) == 0;
}

/* direct_url.json (PEP 610) into d (t: what later probes are told); returns whether it marks an editable install. */
static bool add_direct_url(el_probe *p, const char *dir, cJSON *d, el_dist_found *t)
{
	char *path = el_path_join(dir, "direct_url.json");
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	cJSON *doc = NULL, *du, *info;
	const char *url;
	bool editable = false;
	int e, rc = el_root_read_at(&p->root, dir, "direct_url.json", &b, &e);

	if (rc) {
		el_probe_warn_read(p, path, rc, e, b.limit);
		goto done;
	}
	doc = cJSON_ParseWithLength(b.data, b.len);
	if (!cJSON_IsObject(doc)) {
		el_probe_warn(p, "'%s': not a valid JSON object, ignored", path);
		goto done;
	}
	du = el_jset_obj(d, "direct_url");
	if ((url = el_jget_str(doc, "url")) != NULL) {
		char *clean = el_url_strip_credentials(url, false), *src;

		el_jset_str(du, "url", clean);
		t->direct_url = true;
		free(clean);
		info = el_jget(doc, "dir_info");
		if (cJSON_IsBool(el_jget(info, "editable"))) {
			editable = el_jget_bool(info, "editable", false);
			el_jset_bool(du, "editable", editable);
		}
		/* a PEP 660 editable: its source tree, where frameworks find version.py */
		if (editable && (src = file_url_path(url)) != NULL) {
			el_jset_str(d, "source", src);
			free(t->source);
			t->source = src;
		}
	}
	info = el_jget(doc, "vcs_info");
	if (cJSON_IsObject(info)) {
		el_jset_str(du, "vcs", el_jget_str(info, "vcs"));
		el_jset_str(du, "commit_id", el_jget_str(info, "commit_id"));
		el_jset_str(du, "requested_revision", el_jget_str(info, "requested_revision"));
	}
	info = el_jget(doc, "archive_info");
	if (cJSON_IsObject(info)) {
		const char *hash = el_jget_str(info, "hash");
		const char *sha = el_jget_str(el_jget(info, "hashes"), "sha256");

		if (hash)
			el_jset_str(du, "archive_hash", hash);
		else if (sha) {
			char *h = el_xasprintf("sha256=%s", sha);

			el_jset_str(du, "archive_hash", h);
			free(h);
		}
	}
done:
	cJSON_Delete(doc);
	el_buf_release(&b);
	free(path);
	return editable;
}

/*
 * Read the metadata file in dir (METADATA or PKG-INFO) and take Name and
 * Version from its headers. On failure, warns naming what and returns false.
 */
static bool read_metadata(el_probe *p, const char *what, const char *dir, const char *file,
			  const char *label, char **name, char **version)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	int e = 0, rc = el_root_read_at(&p->root, dir, file, &b, &e);
	size_t hlen;
	const char *blank, *crlf;

	*name = *version = NULL;
	if (rc == ENVLOCK_ENOTFOUND)
		el_probe_warn(p, "'%s': no %s file, skipped", what, label);
	else if (rc == ENVLOCK_ELIMIT && e != ELOOP)
		el_probe_warn(p, "'%s': %s larger than %zu bytes, skipped", what, label, b.limit);
	else if (rc)
		el_probe_warn(p, "'%s': %s: %s, skipped", what, label, el_root_reason(rc, e));
	if (rc)
		goto done;
	/* only the headers matter: they end at the first blank line */
	blank = strstr(b.data, "\n\n");
	crlf = memmem(b.data, blank ? (size_t)(blank - b.data) : b.len, "\n\r\n", 3);
	if (crlf)
		blank = crlf;
	hlen = blank ? (size_t)(blank - b.data) + 1 : b.len;
	if (!el_is_text(b.data, hlen) || memchr(b.data, '\0', b.len)) {
		el_probe_warn(p, "'%s': %s is binary data, skipped", what, label);
		goto done;
	}
	*name = el_rfc822_header(b.data, hlen, "Name");
	*version = el_rfc822_header(b.data, hlen, "Version");
	if (!*name || !**name || !*version || !**version) {
		el_probe_warn(p, "'%s': no %s in %s, skipped", what,
			      !*name || !**name ? "Name" : "Version", label);
		free(*name);
		free(*version);
		*name = *version = NULL;
	}
done:
	el_buf_release(&b);
	return *name != NULL;
}

static dist *push_dist(dist_list *l, const char *name, const char *version,
		       const char *kind, const char *path)
{
	dist *d;

	EL_GROW(l->v, l->n + 1, l->cap);
	d = &l->v[l->n++];
	memset(d, 0, sizeof(*d));
	d->obj = el_jnew_obj();
	d->norm = el_pep503_name(name);
	el_jset_str(d->obj, "name", name);
	el_jset_str(d->obj, "version", version);
	el_jset_str(d->obj, "kind", kind);
	el_jset_str(d->obj, "path", path);
	d->t.name = el_xstrdup(name);
	d->t.version = el_xstrdup(version);
	d->t.kind = el_xstrdup(kind);
	d->t.path = el_xstrdup(path);
	d->site = l->site;
	if (in_conda(l, d->norm)) {
		el_jset_bool(d->obj, "also_conda", true);
		d->t.also_conda = true;
	}
	return d;
}

/* "installer" (NULL: not recorded) and "editable" of d */
static void set_installer(dist *d, const char *installer, bool editable)
{
	el_jset_str(d->obj, "installer", installer);
	d->t.installer = installer ? el_xstrdup(installer) : NULL;
	el_jset_bool(d->obj, "editable", editable);
	d->t.editable = editable;
}

static void free_dist(el_dist_found *t)
{
	free(t->name);
	free(t->version);
	free(t->kind);
	free(t->path);
	free(t->installer);
	free(t->source);
	el_strv_free(t->tags);
	memset(t, 0, sizeof(*t));
}

/*
 * The platform tags of a wheel ("Tag: cp37-cp37m-manylinux2014_x86_64"
 * lines of the dist-info's WHEEL file): what glibc the wheel needs.
 * Only binary (non-"any") tags are kept.
 */
static void add_wheel_tags(el_probe *p, const char *dir, dist *d)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	el_strvec all = EL_STRVEC_INIT;
	const char *pos, *line;
	cJSON *tags = NULL;
	size_t ll;
	int e = 0;

	if (el_root_read_at(&p->root, dir, "WHEEL", &b, &e) != 0 || !el_is_text(b.data, b.len)) {
		el_buf_release(&b);
		return;
	}
	pos = b.data;
	while (el_next_line(&pos, b.data + b.len, &line, &ll)) {
		const char *v = line + 4;
		size_t vl = ll - 4;

		if (ll <= 4 || strncmp(line, "Tag:", 4) != 0)
			continue;
		el_trim(&v, &vl);
		if (vl >= 4 && memcmp(v + vl - 4, "-any", 4) == 0)
			continue;
		if (!tags)
			tags = el_jset_arr(d->obj, "tags");
		{
			char *t = el_xstrndup(v, vl);

			el_jpush_str(tags, t);
			el_strvec_push_owned(&all, t);
		}
	}
	if (all.n)
		d->t.tags = el_strvec_detach(&all);
	el_buf_release(&b);
}

static void dist_info(el_probe *p, dist_list *l, const char *site, const char *entry)
{
	char *dir = el_path_join(site, entry), *real = NULL, *name, *version;
	dist *d;

	/* resolve the entry once; the files inside are then looked at directly */
	if (el_root_realpath_at(&p->root, site, entry, &real, NULL) != 0) {
		free(dir);
		return;
	}
	if (read_metadata(p, dir, real, "METADATA", "METADATA", &name, &version)) {
		char *installer = first_line(p, real, "INSTALLER");
		bool editable;

		d = push_dist(l, name, version, "dist-info", dir);
		el_jset_bool(d->obj, "requested", exists_in(p, real, "REQUESTED"));
		editable = add_direct_url(p, real, d->obj, &d->t);
		set_installer(d, installer, editable);
		add_wheel_tags(p, real, d);
		free(installer);
		free(name);
		free(version);
	}
	free(real);
	free(dir);
}

static void egg_info(el_probe *p, dist_list *l, const char *site, const char *entry)
{
	char *path = el_path_join(site, entry), *real = NULL, *name, *version;
	struct stat st;
	bool is_dir;

	if (el_root_realpath_at(&p->root, site, entry, &real, NULL) != 0 ||
	    el_root_lstat(&p->root, real, &st) != 0) {
		free(real);
		free(path);
		return;
	}
	is_dir = S_ISDIR(st.st_mode);
	/* plain distutils writes the PKG-INFO contents as a file named *.egg-info */
	if (read_metadata(p, path, is_dir ? real : site, is_dir ? "PKG-INFO" : entry, "PKG-INFO",
			  &name, &version)) {
		dist *d = push_dist(l, name, version, "egg-info", path);
		char *installer = is_dir ? first_line(p, real, "INSTALLER") : NULL;

		set_installer(d, installer, false);
		el_jset_bool(d->obj, "requested", is_dir && exists_in(p, real, "REQUESTED"));
		free(installer);
		free(name);
		free(version);
	}
	free(real);
	free(path);
}

/* The egg-info of a develop install in its source tree (resolved), or NULL. */
static char *find_egg_info(el_probe *p, const char *src, const char *base)
{
	char *tries[2], **names = NULL, *out = NULL;

	tries[0] = el_xasprintf("%s.egg-info", base);
	tries[1] = el_xasprintf("%s.egg-info", base);
	for (char *s = tries[1]; *s; s++)
		if (*s == '-')
			*s = '_';
	for (int i = 0; i < 2 && !out; i++)
		if (exists_in(p, src, tries[i]))
			out = el_path_join(src, tries[i]);
	if (!out && el_root_list(&p->root, src, &names, NULL) == 0) {
		for (char **n = names; *n && !out; n++)
			if (el_ends_with(*n, ".egg-info"))
				out = el_path_join(src, *n);
	}
	el_strv_free(names);
	free(tries[0]);
	free(tries[1]);
	return out;
}

/* setup.py develop / pip install -e (before PEP 660): <name>.egg-link names the source tree. */
static void egg_link(el_probe *p, dist_list *l, const char *site, const char *entry)
{
	char *path = el_path_join(site, entry), *src = NULL, *rsrc = NULL, *egg = NULL;
	char *base = el_xstrndup(entry, strlen(entry) - strlen(".egg-link"));
	char *name, *version;
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	int rc, e = 0;

	if (el_probe_read_text(p, path, &b) != 0)
		goto done;
	{
		const char *pos = b.data, *line;
		size_t ll = 0;

		if (el_next_line(&pos, b.data + b.len, &line, &ll))
			el_trim(&line, &ll);
		if (!ll) {
			el_probe_warn(p, "'%s': empty egg-link, skipped", path);
			goto done;
		}
		src = el_xstrndup(line, ll);
	}
	rc = el_root_realpath_at(&p->root, site, src, &rsrc, &e);
	if (rc) {
		el_probe_warn(p, "'%s': source '%s': %s, skipped", path, src, el_root_reason(rc, e));
		goto done;
	}
	egg = find_egg_info(p, rsrc, base);
	if (!egg) {
		el_probe_warn(p, "'%s': no egg-info in '%s', skipped", path, rsrc);
		goto done;
	}
	if (read_metadata(p, egg, egg, "PKG-INFO", "PKG-INFO", &name, &version)) {
		dist *d = push_dist(l, name, version, "egg-link", path);

		el_jset_bool(d->obj, "requested", false);
		el_jset_bool(d->obj, "editable", true);
		d->t.editable = true;
		el_jset_str(d->obj, "source", rsrc);
		d->t.source = el_xstrdup(rsrc);
		el_jset_str(d->obj, "egg_info", egg);
		free(name);
		free(version);
	}
done:
	el_buf_release(&b);
	free(egg);
	free(rsrc);
	free(src);
	free(base);
	free(path);
}

/*
 * One distribution in several site dirs: Python imports it from the first
 * on sys.path (the order of p->py.site_dirs), so that entry is recorded
 * and the later ones become its "shadows". Two entries in one site dir
 * are left as they are: which one importlib picks is a listing accident.
 */
static void mark_shadowed(dist_list *l)
{
	for (size_t i = 0, j; i < l->n; i = j) {
		size_t win = i, last = 0;
		cJSON *shadows = NULL;

		for (j = i; j < l->n && strcmp(l->v[j].norm, l->v[i].norm) == 0; j++) {
			if (l->v[j].site < l->v[win].site)
				win = j;
			if (l->v[j].site > last)
				last = l->v[j].site;
		}
		/* the shadows in sys.path order, each site's in path order */
		for (size_t s = l->v[win].site + 1; s <= last; s++) {
			for (size_t k = i; k < j; k++) {
				dist *d = &l->v[k];
				cJSON *o;

				if (d->site != s)
					continue;
				if (!shadows)
					shadows = el_jset_arr(l->v[win].obj, "shadows");
				o = el_jpush_obj(shadows);
				el_jset_str(o, "path", d->t.path);
				el_jset_str(o, "version", d->t.version);
				el_jset_str(o, "installer", d->t.installer);
				cJSON_Delete(d->obj);
				d->obj = NULL;
				free_dist(&d->t);
			}
		}
	}
}

static int dist_cmp(const void *a, const void *b)
{
	const dist *x = a, *y = b;
	int c = strcmp(x->norm, y->norm);

	return c ? c : strcmp(x->t.path, y->t.path);
}

/*
 * One job's share of a site dir's entries, read on the pool's threads: a
 * copy of the probe whose warnings the job keeps (said in order after
 * the reads), and its own list of distributions. The
 * distributions are sorted afterwards, and the warnings kept in the
 * folder's order, so neither the lock nor what is said depends on the
 * threads.
 */
typedef struct {
	el_probe p;
	envlock_probe_opts opts;
	el_strvec warnings; /* what the copy warned, through opts.on_warning */
	dist_list l; /* l.conda borrowed from the whole list */
} pip_job;

typedef struct {
	el_probe *p;
	const dist_list *all;
	const char *site;
	char **names;
	size_t n;
	pip_job *jobs;
} pip_batch;

#define EL_PIP_BATCH 32 /* entries a job reads: each is four or five small files */

static void read_entry(el_probe *p, dist_list *l, const char *site, const char *name)
{
	if (el_ends_with(name, ".dist-info"))
		dist_info(p, l, site, name);
	else if (el_ends_with(name, ".egg-info"))
		egg_info(p, l, site, name);
	else if (el_ends_with(name, ".egg-link"))
		egg_link(p, l, site, name);
}

static void job_warning(const char *message, void *data)
{
	el_strvec_push(data, message);
}

static void pip_read_job(size_t job, void *data)
{
	pip_batch *pb = data;
	pip_job *j = &pb->jobs[job];

	j->p = *pb->p;
	j->opts = *pb->p->opts;
	j->opts.on_warning = job_warning;
	j->opts.warning_data = &j->warnings;
	j->p.opts = &j->opts;
	/* the copy's own warnings array, never read: job_warning keeps them */
	j->p.warnings = cJSON_CreateArray();
	if (!j->p.warnings)
		el_oom();
	j->l.conda = pb->all->conda;
	j->l.site = pb->all->site;
	for (size_t i = job * EL_PIP_BATCH; i < (job + 1) * EL_PIP_BATCH && i < pb->n; i++)
		read_entry(&j->p, &j->l, pb->site, pb->names[i]);
}

/* The entries of one site dir into l: on the pool when there are more than a job's worth. */
static void read_site(el_probe *p, dist_list *l, const char *site, char **names, size_t n)
{
	size_t njobs = (n + EL_PIP_BATCH - 1) / EL_PIP_BATCH;
	pip_batch pb = { p, l, site, names, n, NULL };

	if (njobs <= 1) {
		for (size_t i = 0; i < n; i++)
			read_entry(p, l, site, names[i]);
		return;
	}
	pb.jobs = el_xcalloc(njobs, sizeof(*pb.jobs));
	el_pool_run(njobs, el_pool_default_threads(), pip_read_job, &pb);
	for (size_t k = 0; k < njobs; k++) {
		pip_job *j = &pb.jobs[k];

		for (size_t i = 0; i < j->warnings.n; i++)
			el_probe_warn(p, "%s", j->warnings.v[i]);
		el_strvec_release(&j->warnings);
		cJSON_Delete(j->p.warnings);
		if (j->l.n) {
			EL_GROW(l->v, l->n + j->l.n, l->cap);
			memcpy(l->v + l->n, j->l.v, j->l.n * sizeof(*l->v));
			l->n += j->l.n;
		}
		free(j->l.v);
	}
	free(pb.jobs);
}

void el_probe_pip(el_probe *p)
{
	cJSON *sec = el_probe_section(p, EL_SEC_PIP), *sites, *dists, *both;
	dist_list l = { 0 };
	const char *last = NULL;
	size_t recorded = 0;

	if (!p->py.site_dirs || !p->py.site_dirs[0]) {
		el_jset_str(sec, "status", "absent");
		return;
	}
	load_conda_names(p, &l);
	el_jset_str(sec, "status", "present");
	sites = el_jset_arr(sec, "site_packages");
	for (char **s = p->py.site_dirs; *s; s++, l.site++) {
		char **names = NULL;
		size_t count = 0;
		int rc;

		el_jpush_str(sites, *s);
		rc = el_root_list(&p->root, *s, &names, &count);
		if (rc != 0 && rc != ENVLOCK_ENOTFOUND)
			el_probe_warn(p, "'%s': %s", *s, el_root_reason(rc, errno));
		if (rc != 0)
			continue;
		read_site(p, &l, *s, names, count);
		el_strv_free(names);
	}
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), dist_cmp);
	mark_shadowed(&l);
	dists = el_jset_arr(sec, "distributions");
	both = el_jset_arr(sec, "conda_and_pip");
	p->pip.v = el_xcalloc(l.n + 1, sizeof(*p->pip.v));
	for (size_t i = 0; i < l.n; i++) {
		if (!l.v[i].obj)
			continue;
		recorded++;
		if (l.v[i].t.also_conda && (!last || strcmp(last, l.v[i].norm) != 0)) {
			el_jpush_str(both, l.v[i].norm);
			last = l.v[i].norm;
		}
		if (!cJSON_AddItemToArray(dists, l.v[i].obj))
			el_oom();
		l.v[i].t.entry = l.v[i].obj;
		p->pip.v[p->pip.n++] = l.v[i].t;
	}
	el_jset_int(sec, "count", (long long)recorded);
	el_probe_pip_config(p, sec);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].norm);
	free(l.v);
	el_strvec_release(&l.conda);
}
