/*
 * dpkg's own record of what is installed: /var/lib/dpkg/status (deb-control
 * stanzas, dpkg(1)) for each installed package's name, architecture and
 * version, and /var/lib/dpkg/info/<package>[:<arch>].list (one installed
 * path a line) for which package owns a file. Both are read once, on first
 * use, and the paths are indexed (sorted) for lookup. el_probe_dpkg then
 * names the package that owns each recorded file ("deb").
 */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_LIMIT_DPKG_STATUS (64u << 20)
#define EL_DPKG_MAX_PACKAGES 100000
#define EL_DPKG_MAX_FILES 4000000

typedef struct {
	const char *path; /* inside one of lists[] */
	size_t pkg;
} dpkg_file;

struct el_dpkg {
	el_dpkg_pkg *pkgs;
	size_t npkgs, cap;
	bool files_read;
	char **lists;      /* the .list files' text, lines NUL-terminated */
	size_t nlists, lists_cap;
	dpkg_file *files;  /* sorted by path */
	size_t nfiles, files_cap;
};

void el_dpkg_free(el_dpkg *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->npkgs; i++) {
		free((char *)d->pkgs[i].package);
		free((char *)d->pkgs[i].arch);
		free((char *)d->pkgs[i].version);
	}
	free(d->pkgs);
	for (size_t i = 0; i < d->nlists; i++)
		free(d->lists[i]);
	free(d->lists);
	free(d->files);
	free(d);
}

/* "Field: value" of a stanza line; the value (borrowed) or NULL. */
static const char *field(const char *line, size_t len, const char *name, size_t *vlen)
{
	size_t n = strlen(name);
	const char *v;

	if (len <= n + 1 || strncmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	v = line + n + 1;
	*vlen = (size_t)(line + len - v);
	el_trim(&v, vlen);
	return v;
}

/* Status: "install ok installed"; not "deinstall ok config-files", nor a half-installed one. */
static bool is_installed(const char *v, size_t n)
{
	return n >= 10 && strncmp(v + n - 10, " installed", 10) == 0;
}

static void parse_status(el_probe *p, el_dpkg *d, const char *text, size_t len)
{
	const char *pos = text, *end = text + len, *line;
	const char *name = NULL, *arch = NULL, *ver = NULL;
	size_t nl = 0, al = 0, vl = 0, ll;
	bool installed = false, more = true;

	while (more) {
		const char *v;
		size_t n;

		more = el_next_line(&pos, end, &line, &ll);
		if (!more || ll == 0) {
			if (name && ver) {
				if (d->npkgs == EL_DPKG_MAX_PACKAGES) {
					el_probe_warn(p, "'/var/lib/dpkg/status': more than %d packages, the rest ignored",
						      EL_DPKG_MAX_PACKAGES);
					return;
				}
				EL_GROW(d->pkgs, d->npkgs + 1, d->cap);
				d->pkgs[d->npkgs].package = el_xstrndup(name, nl);
				d->pkgs[d->npkgs].arch = arch ? el_xstrndup(arch, al) : NULL;
				d->pkgs[d->npkgs].version = el_xstrndup(ver, vl);
				d->pkgs[d->npkgs].installed = installed;
				d->npkgs++;
			}
			name = arch = ver = NULL;
			installed = false;
			continue;
		}
		if (line[0] == ' ' || line[0] == '\t')
			continue; /* a continuation line (Description, Conffiles) */
		if ((v = field(line, ll, "Package", &n)) != NULL) {
			name = v;
			nl = n;
		} else if ((v = field(line, ll, "Architecture", &n)) != NULL) {
			arch = v;
			al = n;
		} else if ((v = field(line, ll, "Version", &n)) != NULL) {
			ver = v;
			vl = n;
		} else if ((v = field(line, ll, "Status", &n)) != NULL) {
			installed = is_installed(v, n);
		}
	}
}

/* The status file, read and parsed on first use; NULL when the root has none. */
static el_dpkg *dpkg_get(el_probe *p)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_DPKG_STATUS);

	if (p->dpkg || p->dpkg_read)
		return p->dpkg;
	p->dpkg_read = true;
	if (el_probe_read_text(p, "/var/lib/dpkg/status", &b) == 0) {
		p->dpkg = el_xcalloc(1, sizeof(*p->dpkg));
		parse_status(p, p->dpkg, b.data, b.len);
	}
	el_buf_release(&b);
	return p->dpkg;
}

const el_dpkg_pkg *el_dpkg_package(el_probe *p, const char *name)
{
	el_dpkg *d = dpkg_get(p);
	const el_dpkg_pkg *left = NULL;

	for (size_t i = 0; d && i < d->npkgs; i++) {
		if (strcmp(d->pkgs[i].package, name) != 0)
			continue;
		if (d->pkgs[i].installed)
			return &d->pkgs[i];
		if (!left)
			left = &d->pkgs[i];
	}
	return left;
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const dpkg_file *)a)->path, ((const dpkg_file *)b)->path);
}

/* Index the lines of one package's .list text (taken over). */
static bool index_list(el_probe *p, el_dpkg *d, size_t pkg, char *text, size_t len)
{
	char *pos = text, *end = text + len;

	EL_GROW(d->lists, d->nlists + 1, d->lists_cap);
	d->lists[d->nlists++] = text;
	while (pos < end) {
		char *nl = memchr(pos, '\n', (size_t)(end - pos));

		if (nl)
			*nl = '\0';
		if (*pos == '/') {
			if (d->nfiles == EL_DPKG_MAX_FILES) {
				el_probe_warn(p, "'/var/lib/dpkg/info': more than %d files listed, the rest ignored",
					      EL_DPKG_MAX_FILES);
				return false;
			}
			EL_GROW(d->files, d->nfiles + 1, d->files_cap);
			d->files[d->nfiles].path = pos;
			d->files[d->nfiles].pkg = pkg;
			d->nfiles++;
		}
		if (!nl)
			break;
		pos = nl + 1;
	}
	return true;
}

/* Every installed package's file list, indexed by path; once. */
static void read_lists(el_probe *p, el_dpkg *d)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_RECORD);
	char *info = NULL;

	d->files_read = true;
	if (el_root_realpath(&p->root, "/var/lib/dpkg/info", &info, NULL) != 0)
		return;
	for (size_t i = 0; i < d->npkgs; i++) {
		const el_dpkg_pkg *k = &d->pkgs[i];
		/* Multi-Arch: same packages keep <package>:<arch>.list (dpkg 1.16.2 on) */
		char *names[2] = { k->arch ? el_xasprintf("%s:%s.list", k->package, k->arch) : NULL,
				   el_xasprintf("%s.list", k->package) };
		bool more = true;

		/* a removed package's list names only the config files it left */
		for (int j = 0; j < 2 && k->installed; j++) {
			int e = 0, rc;

			if (!names[j])
				continue;
			el_buf_reset(&b);
			rc = el_root_read_at(&p->root, info, names[j], &b, &e);
			if (rc == 0) {
				size_t len = b.len;

				more = index_list(p, d, i, el_buf_detach(&b), len);
				break;
			}
			if (rc != ENVLOCK_ENOTFOUND) {
				char *path = el_path_join(info, names[j]);

				el_probe_warn_read(p, path, rc, e, b.limit);
				free(path);
			}
		}
		free(names[0]);
		free(names[1]);
		if (!more)
			break;
	}
	if (d->nfiles)
		qsort(d->files, d->nfiles, sizeof(*d->files), file_cmp);
	el_buf_release(&b);
	free(info);
}

static const el_dpkg_pkg *lookup(el_dpkg *d, const char *path)
{
	dpkg_file key = { path, 0 }, *hit;

	hit = d->nfiles ? bsearch(&key, d->files, d->nfiles, sizeof(*d->files), file_cmp) : NULL;
	return hit ? &d->pkgs[hit->pkg] : NULL;
}

/*
 * The same file seen through the merged-/usr links: Debian 12's libc6
 * lists /lib/x86_64-linux-gnu/libc.so.6, which the tree reaches as
 * /usr/lib/... (usrmerge makes /lib, /lib64, /bin, /sbin links into /usr).
 */
static char *usr_alias(const char *path)
{
	static const char *const dirs[] = { "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/", NULL };

	for (const char *const *d = dirs; *d; d++) {
		if (el_starts_with(path, *d))
			return el_xasprintf("/usr%s", path);
		if (el_starts_with(path, "/usr") && el_starts_with(path + 4, *d))
			return el_xstrdup(path + 4);
	}
	return NULL;
}

const el_dpkg_pkg *el_dpkg_owner(el_probe *p, const char *abs)
{
	el_dpkg *d = dpkg_get(p);
	const el_dpkg_pkg *k = NULL;
	char *try[4] = { NULL, NULL, NULL, NULL };

	if (!d || !abs || abs[0] != '/')
		return NULL;
	if (!d->files_read)
		read_lists(p, d);
	try[0] = el_xstrdup(abs);
	try[1] = usr_alias(abs);
	if (el_root_realpath(&p->root, abs, &try[2], NULL) == 0 && strcmp(try[2], abs) != 0)
		try[3] = usr_alias(try[2]);
	for (int i = 0; i < 4 && !k; i++)
		if (try[i])
			k = lookup(d, try[i]);
	for (int i = 0; i < 4; i++)
		free(try[i]);
	return k;
}

void el_probe_set_deb(el_probe *p, cJSON *obj, const char *abs)
{
	const el_dpkg_pkg *k = el_dpkg_owner(p, abs);
	cJSON *o;

	if (!k)
		return;
	o = el_jset_obj(obj, "deb");
	el_jset_str(o, "package", k->package);
	el_jset_str(o, "version", k->version);
	if (k->arch)
		el_jset_str(o, "arch", k->arch);
}

/* The package of each gcc: its driver's, else that of cc1 (Debian's cpp-N ships cc1). */
static void gcc_debs(el_probe *p, cJSON *list)
{
	cJSON *g;

	cJSON_ArrayForEach(g, list) {
		const char *driver = el_jget_str(g, "driver"), *dir = el_jget_str(g, "dir");
		char *cc1 = dir ? el_path_join(dir, "cc1") : NULL;

		if (driver && el_dpkg_owner(p, driver))
			el_probe_set_deb(p, g, driver);
		else if (cc1)
			el_probe_set_deb(p, g, cc1);
		free(cc1);
	}
}

void el_probe_dpkg(el_probe *p)
{
	cJSON *sys = el_jget(p->doc, "system"), *py = el_jget(p->doc, "python");
	cJSON *comp = el_jget(p->doc, "compilers"), *fws = el_jget(p->doc, "frameworks");
	cJSON *glibc = el_jget(sys, "glibc"), *fw;

	if (!dpkg_get(p))
		return;
	if (glibc)
		el_probe_set_deb(p, glibc, el_jget_str(glibc, "path"));
	if (py)
		el_probe_set_deb(p, py, el_jget_str(py, "executable"));
	gcc_debs(p, el_jget(comp, "gcc"));
	cJSON_ArrayForEach(fw, fws) {
		if (cJSON_IsObject(fw))
			el_probe_set_deb(p, fw, el_jget_str(fw, "path"));
	}
}
