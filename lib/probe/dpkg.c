/*
 * dpkg's own record of what is installed: /var/lib/dpkg/status (deb-control
 * stanzas, dpkg(1)) for each installed package's name, architecture and
 * version, and /var/lib/dpkg/info/<package>[:<arch>].list (one installed
 * path a line) for which package owns a file. The status is read once; a
 * machine has about a thousand lists (9 MB), more than a whole save costs
 * to read, so a file's owner is looked for only in the lists of the
 * packages whose names fit its path (python3.11-minimal for
 * /usr/bin/python3.11, libc6 for libc.so.6, cpp-12 for .../gcc/.../12/cc1),
 * each list read at most once; a file in none of them gets no "deb", which
 * is never a wrong one. el_probe_dpkg names the owner of each recorded file.
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
#define EL_DPKG_CANDIDATES 16

struct el_dpkg {
	el_dpkg_pkg *pkgs;
	size_t npkgs, cap;
	char **lists;      /* per package: its .list text with a '\n' in front, once read (or "" when none) */
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
	for (size_t i = 0; d->lists && i < d->npkgs; i++)
		free(d->lists[i]);
	free(d->pkgs);
	free(d->lists);
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
		/* continuation lines (Description, Conffiles) and the many fields not read: by the first byte */
		switch (line[0]) {
		case 'P':
			if ((v = field(line, ll, "Package", &n)) != NULL) {
				name = v;
				nl = n;
			}
			break;
		case 'A':
			if ((v = field(line, ll, "Architecture", &n)) != NULL) {
				arch = v;
				al = n;
			}
			break;
		case 'V':
			if ((v = field(line, ll, "Version", &n)) != NULL) {
				ver = v;
				vl = n;
			}
			break;
		case 'S':
			if ((v = field(line, ll, "Status", &n)) != NULL)
				installed = is_installed(v, n);
			break;
		default:
			break;
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

/* One package's file list, read on first need: "\n" + its text, so a line is "\n" path "\n". */
static const char *list_of(el_probe *p, el_dpkg *d, size_t pkg)
{
	const el_dpkg_pkg *k = &d->pkgs[pkg];
	el_buf b = EL_BUF_INIT(EL_LIMIT_RECORD);
	char *info = NULL;

	if (!d->lists)
		d->lists = el_xcalloc(d->npkgs, sizeof(*d->lists));
	if (d->lists[pkg])
		return d->lists[pkg];
	d->lists[pkg] = el_xstrdup("");
	if (!k->installed || el_root_realpath(&p->root, "/var/lib/dpkg/info", &info, NULL) != 0)
		return d->lists[pkg];
	/* Multi-Arch: same packages keep <package>:<arch>.list (dpkg 1.16.2 on) */
	for (int j = 0; j < 2; j++) {
		char *name = j == 0 ? (k->arch ? el_xasprintf("%s:%s.list", k->package, k->arch) : NULL)
				    : el_xasprintf("%s.list", k->package);
		int e = 0, rc;

		if (!name)
			continue;
		el_buf_reset(&b);
		/* a list that leaves no room for the closing newline is too long too */
		rc = el_buf_putc(&b, '\n');
		if (rc == 0)
			rc = el_root_read_at(&p->root, info, name, &b, &e);
		if (rc == 0)
			rc = el_buf_putc(&b, '\n');
		if (rc == 0) {
			free(d->lists[pkg]);
			d->lists[pkg] = el_buf_detach(&b);
			free(name);
			break;
		}
		if (rc != ENVLOCK_ENOTFOUND) {
			char *path = el_path_join(info, name);

			el_probe_warn_read(p, path, rc, e, b.limit);
			free(path);
		}
		free(name);
	}
	el_buf_release(&b);
	free(info);
	return d->lists[pkg];
}

/* What a path offers a package name to fit, worked out once per path (fit is called for every package). */
#define MAX_PARTS 32

typedef struct {
	const char *path, *base;
	size_t plen, blen, flen;
	char flat[256];          /* libc.so.6 -> libc6, libcudnn.so.8.9.7 -> libcudnn8 */
	struct {
		const char *s;
		size_t n;
	} part[MAX_PARTS];       /* the path's folder and file names */
	size_t nparts;
} path_keys;

static void keys_of(path_keys *k, const char *path)
{
	size_t n = 0;

	memset(k, 0, sizeof(*k));
	k->path = path;
	k->plen = strlen(path);
	k->base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	k->blen = strlen(k->base);
	/* how Debian names a library's package: the name before .so, then the major */
	for (const char *c = k->base; *c && n + 1 < sizeof(k->flat); c++) {
		if (strncmp(c, ".so", 3) == 0 && (c[3] == '.' || !c[3])) {
			c += 3;
			if (*c)
				c++;
			while (*c && *c != '.' && n + 1 < sizeof(k->flat))
				k->flat[n++] = *c++;
			break;
		}
		k->flat[n++] = *c;
	}
	k->flat[n] = '\0';
	k->flen = n;
	for (const char *c = path; *c && k->nparts < MAX_PARTS;) {
		size_t len;

		c += strspn(c, "/");
		len = strcspn(c, "/");
		if (len) {
			k->part[k->nparts].s = c;
			k->part[k->nparts++].n = len;
		}
		c += len;
	}
}

/*
 * How well a package's name fits a path: 8 for the file's own name
 * (/usr/bin/gcc-12 is gcc-12's), 4 when its first "-"-separated part is the
 * file's name, its flat library name or a folder name on the path
 * (/usr/lib/gcc/x86_64-linux-gnu/12/cc1 has 12), 1 for each later part that is.
 */
static int fit(const char *package, const path_keys *k)
{
	int score = 0;

	if (strcmp(k->base, package) == 0)
		score += 8;
	for (const char *t = package; *t;) {
		size_t len = strcspn(t, "-");
		bool hit = (k->blen == len && memcmp(k->base, t, len) == 0) ||
			   (k->flen == len && memcmp(k->flat, t, len) == 0);

		for (size_t i = 0; !hit && i < k->nparts; i++)
			hit = k->part[i].n == len && memcmp(k->part[i].s, t, len) == 0;
		score += hit ? (t == package ? 4 : 1) : 0;
		t += len;
		if (*t == '-')
			t++;
	}
	return score;
}

/* The installed package whose list has path, among those whose names fit it best. */
static const el_dpkg_pkg *lookup(el_probe *p, el_dpkg *d, const char *path)
{
	size_t best[EL_DPKG_CANDIDATES], nbest = 0;
	int score[EL_DPKG_CANDIDATES];
	path_keys k;

	keys_of(&k, path);
	for (size_t i = 0; i < d->npkgs; i++) {
		int sc = d->pkgs[i].installed ? fit(d->pkgs[i].package, &k) : 0;
		size_t at = nbest;

		if (sc == 0)
			continue;
		/* kept best first; a tie keeps status order, so the answer does not depend on chance */
		while (at > 0 && score[at - 1] < sc)
			at--;
		if (at == EL_DPKG_CANDIDATES)
			continue;
		if (nbest < EL_DPKG_CANDIDATES)
			nbest++;
		memmove(best + at + 1, best + at, (nbest - 1 - at) * sizeof(best[0]));
		memmove(score + at + 1, score + at, (nbest - 1 - at) * sizeof(score[0]));
		best[at] = i;
		score[at] = sc;
	}
	for (size_t c = 0; c < nbest; c++) {
		const char *list = list_of(p, d, best[c]), *hit = list;

		while ((hit = strstr(hit, path)) != NULL) {
			if (hit[-1] == '\n' && hit[k.plen] == '\n')
				return &d->pkgs[best[c]];
			hit++;
		}
	}
	return NULL;
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
	try[0] = el_xstrdup(abs);
	try[1] = usr_alias(abs);
	if (el_root_realpath(&p->root, abs, &try[2], NULL) == 0 && strcmp(try[2], abs) != 0)
		try[3] = usr_alias(try[2]);
	for (int i = 0; i < 4 && !k; i++)
		if (try[i])
			k = lookup(p, d, try[i]);
	for (int i = 0; i < 4; i++)
		free(try[i]);
	return k;
}

static void set_deb(cJSON *obj, const el_dpkg_pkg *k)
{
	cJSON *o;

	if (!k)
		return;
	o = el_jset_obj(obj, "deb");
	el_jset_str(o, "package", k->package);
	el_jset_str(o, "version", k->version);
	if (k->arch)
		el_jset_str(o, "arch", k->arch);
}

/* Each object a probe asked about (el_probe_want_deb): the package of its file, else of its second one. */
void el_probe_dpkg(el_probe *p)
{
	if (!dpkg_get(p))
		return;
	for (size_t i = 0; i < p->ndebs; i++) {
		const el_deb_want *w = &p->debs[i];
		const el_dpkg_pkg *k = w->path ? el_dpkg_owner(p, w->path) : NULL;

		set_deb(w->obj, k ? k : w->alt ? el_dpkg_owner(p, w->alt) : NULL);
	}
}
