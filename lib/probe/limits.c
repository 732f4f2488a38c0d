/*
 * The limits a container or a job scheduler puts on the machine that
 * /proc/cpuinfo and /proc/meminfo do not show (system.shm, system.cgroup):
 * the size of /dev/shm, through which PyTorch's DataLoader workers hand
 * over every batch (Docker's default is 64 MiB), and the cgroup's CPU
 * quota, cpuset and memory limit (docker run --cpus 4 --memory 16g still
 * shows every host core).
 *
 * Read from the probed process's mount table and cgroup membership
 * (/proc/self/mountinfo, /proc/self/cgroup) and the controller files of
 * its cgroup. Under a root these are a captured copy, the tree's own
 * (a procfs mounted there is envlock's on the host: nothing is read, as
 * hardware.c says); a tree without a mount table records neither. Every
 * value is untrusted text: digits only, overflow checked, files capped.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* mount tables of nodes running hundreds of containers exceed EL_LIMIT_SMALL */
#define EL_LIMIT_MOUNTS (4u << 20)
/* one value in a controller file: "max 100000", "0-63,128-191" */
#define EL_LIMIT_CGROUP_FILE (64u << 10)
/* cgroup folders walked up from the process's own to the mount */
#define EL_CGROUP_MAX_DEPTH 64
/* the highest CPU number a cpuset may name (the kernel's NR_CPUS is at most 8192) */
#define EL_CPUSET_MAX_CPU 65535
/*
 * A memory limit this large limits nothing: cgroup v1 writes its "none"
 * as 2^63 rounded down to a page (9223372036854771712 with 4 KiB pages),
 * and a JSON number holds whole numbers exactly only below 2^53 (8 PiB).
 */
#define EL_MEMORY_UNLIMITED (1ULL << 53)

typedef struct {
	char *root;   /* the folder of the filesystem that is mounted ("/" from /proc/mounts) */
	char *point;  /* where, in the probed system */
	char *fstype;
	char *opts;   /* the mount's options, then the superblock's, comma-separated */
} mount_entry;

typedef struct {
	mount_entry *v;
	size_t n, cap;
	const char *source; /* the table they came from */
	size_t bad;         /* lines not understood */
} mount_table;

/* A whole number of decimal digits only, without overflow. */
static bool parse_u64(const char *s, size_t n, unsigned long long *out)
{
	unsigned long long v = 0;

	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned)(s[i] - '0');
		if (v > (ULLONG_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* A controller file's one line, without its "\n" and surrounding blanks (a second line stays, and fails to parse). */
static void trimmed(const el_buf *b, const char **s, size_t *n)
{
	*s = el_buf_cstr(b);
	*n = b->len;
	if (*n && (*s)[*n - 1] == '\n')
		(*n)--;
	el_trim(s, n);
}

/* A mount table's field with its octal escapes (\040 for a space) undone; malloc'd. */
static char *unescape(const char *s, size_t n)
{
	char *out = el_xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* The next space-separated field of line [*pos, end), or false at its end. */
static bool next_field(const char **pos, const char *end, const char **f, size_t *n)
{
	const char *s = *pos;

	while (s < end && *s == ' ')
		s++;
	if (s == end)
		return false;
	*f = s;
	while (s < end && *s != ' ')
		s++;
	*n = (size_t)(s - *f);
	*pos = s;
	return true;
}

static void mounts_release(mount_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].root);
		free(t->v[i].point);
		free(t->v[i].fstype);
		free(t->v[i].opts);
	}
	free(t->v);
}

/*
 * One line of mountinfo (proc(5)): "36 35 98:0 /mnt1 /mnt2 rw,noatime
 * master:1 - ext3 /dev/root rw,errors=continue", or of /proc/mounts:
 * "tmpfs /dev/shm tmpfs rw,size=65536k 0 0".
 */
static bool mount_line(mount_table *t, const char *line, size_t len, bool mountinfo)
{
	const char *pos = line, *end = line + len, *f[6];
	size_t n[6];
	mount_entry *m;

	if (mountinfo) {
		const char *sep;
		size_t sn;

		/* ID, parent, major:minor, root, mount point, mount options */
		for (int i = 0; i < 6; i++)
			if (!next_field(&pos, end, &f[i], &n[i]))
				return false;
		/* optional fields up to "-", then type, source, superblock options */
		do
			if (!next_field(&pos, end, &sep, &sn))
				return false;
		while (!(sn == 1 && *sep == '-'));
		if (!next_field(&pos, end, &f[0], &n[0]) || !next_field(&pos, end, &f[1], &n[1]) ||
		    !next_field(&pos, end, &f[2], &n[2]))
			return false;
		EL_GROW(t->v, t->n + 1, t->cap);
		m = &t->v[t->n++];
		m->root = unescape(f[3], n[3]);
		m->point = unescape(f[4], n[4]);
		m->fstype = unescape(f[0], n[0]);
		m->opts = el_xasprintf("%.*s,%.*s", (int)n[5], f[5], (int)n[2], f[2]);
		return true;
	}
	/* source, mount point, type, options */
	for (int i = 0; i < 4; i++)
		if (!next_field(&pos, end, &f[i], &n[i]))
			return false;
	EL_GROW(t->v, t->n + 1, t->cap);
	m = &t->v[t->n++];
	m->root = el_xstrdup("/");
	m->point = unescape(f[1], n[1]);
	m->fstype = unescape(f[2], n[2]);
	m->opts = el_xstrndup(f[3], n[3]);
	return true;
}

/* The probed process's mount table: mountinfo, else /proc/mounts. false when neither is there. */
static bool read_mounts(el_probe *p, mount_table *t)
{
	static const char *const tables[] = { "/proc/self/mountinfo", "/proc/mounts" };
	el_buf b = EL_BUF_INIT(EL_LIMIT_MOUNTS);

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < 2; i++) {
		const char *pos, *line;
		size_t len;
		int rc = el_probe_read_text(p, tables[i], &b);

		if (rc == ENVLOCK_ENOTFOUND)
			continue;
		if (rc != 0)
			break; /* warned: a table that is there and unreadable is not replaced by another */
		t->source = tables[i];
		pos = el_buf_cstr(&b);
		while (el_next_line(&pos, el_buf_cstr(&b) + b.len, &line, &len))
			if (len && !mount_line(t, line, len, i == 0))
				t->bad++;
		break;
	}
	el_buf_release(&b);
	if (t->bad)
		el_probe_warn(p, "'%s': %zu line(s) not understood, ignored", t->source, t->bad);
	return t->source != NULL;
}

/* Is word one of the comma-separated options? */
static bool has_option(const char *opts, const char *word)
{
	size_t wl = strlen(word);

	for (const char *s = opts; s && *s;) {
		size_t n = strcspn(s, ",");

		if (n == wl && strncmp(s, word, n) == 0)
			return true;
		s += n + (s[n] == ',');
	}
	return false;
}

/* The value of "key=" among the options, or NULL; *n its length. */
static const char *option_value(const char *opts, const char *key, size_t *n)
{
	size_t kl = strlen(key);
	const char *found = NULL;

	/* the last one counts: the superblock's options come after the mount's */
	for (const char *s = opts; s && *s;) {
		size_t len = strcspn(s, ",");

		if (len > kl && strncmp(s, key, kl) == 0 && s[kl] == '=') {
			found = s + kl + 1;
			*n = len - kl - 1;
		}
		s += len + (s[len] == ',');
	}
	return found;
}

/* The mount at point: the last one, which hides those before it. */
static const mount_entry *mount_at(const mount_table *t, const char *point)
{
	for (size_t i = t->n; i-- > 0;)
		if (strcmp(t->v[i].point, point) == 0)
			return &t->v[i];
	return NULL;
}

/* tmpfs's size= as the kernel's memparse reads it: digits and one of K M G T P E; never "50%". */
static bool parse_size(const char *s, size_t n, unsigned long long *out)
{
	static const char units[] = "kmgtpe";
	unsigned long long v;
	const char *u;
	int shift = 0;

	if (n && (u = strchr(units, s[n - 1] | 0x20)) != NULL) {
		shift = 10 * (int)(u - units + 1);
		n--;
	}
	if (!parse_u64(s, n, &v) || (shift && v > (ULLONG_MAX >> shift)))
		return false;
	*out = v << shift;
	return true;
}

static void probe_shm(el_probe *p, cJSON *system, const mount_table *t)
{
	const mount_entry *m = mount_at(t, "/dev/shm");
	cJSON *o = el_jset_obj(system, "shm");
	struct stat st;
	struct statvfs fs;
	unsigned long long size;
	const char *opt;
	size_t n = 0;
	bool dir = el_root_stat(&p->root, "/dev/shm", &st) == 0 && S_ISDIR(st.st_mode);
	bool sized = false;

	el_jset_bool(o, "present", m != NULL || dir);
	el_jset_str(o, "source", t->source);
	if (!m && !dir)
		return;
	if (m) {
		el_jset_str(o, "fs", m->fstype[0] ? m->fstype : NULL);
		/* a tmpfs of the kernel's default size (half the RAM) shows no size= */
		if ((opt = option_value(m->opts, "size", &n)) != NULL) {
			if (parse_size(opt, n, &size) && size < EL_MEMORY_UNLIMITED) {
				el_jset_int(o, "size_bytes", (long long)size);
				sized = true;
			} else {
				el_probe_warn(p, "'%s': the size= of /dev/shm is not a size, ignored", t->source);
			}
		}
	}
	if (p->root.live && statvfs("/dev/shm", &fs) == 0 && fs.f_frsize &&
	    fs.f_blocks < EL_MEMORY_UNLIMITED / fs.f_frsize) {
		if (!sized)
			el_jset_int(o, "size_bytes", (long long)(fs.f_blocks * fs.f_frsize));
		el_jset_int(o, "free_bytes", (long long)(fs.f_bavail * fs.f_frsize));
	}
}

/* --- cgroups ------------------------------------------------------------ */

/* The first cgroup v1 mount of controller ("cpu", "memory", "cpuset"), or NULL. */
static const mount_entry *v1_mount(const mount_table *t, const char *controller)
{
	for (size_t i = t->n; i-- > 0;)
		if (strcmp(t->v[i].fstype, "cgroup") == 0 && has_option(t->v[i].opts, controller))
			return &t->v[i];
	return NULL;
}

static const mount_entry *v2_mount(const mount_table *t)
{
	for (size_t i = t->n; i-- > 0;)
		if (strcmp(t->v[i].fstype, "cgroup2") == 0)
			return &t->v[i];
	return NULL;
}

/*
 * The process's cgroup in the hierarchy of controller (v1: a line whose
 * list names it) or the unified one (controller NULL: "0::/path"), from
 * /proc/self/cgroup; malloc'd, or NULL. A path with "." or ".." in it
 * is not used.
 */
static char *cgroup_path(const char *text, size_t len, const char *controller)
{
	const char *pos = text, *line;
	size_t n;

	while (el_next_line(&pos, text + len, &line, &n)) {
		const char *c1 = memchr(line, ':', n), *c2, *path;
		char *list, *out;
		bool match;

		if (!c1 || (c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line))) == NULL)
			continue;
		path = c2 + 1;
		list = el_xstrndup(c1 + 1, (size_t)(c2 - c1 - 1));
		match = controller ? has_option(list, controller)
				   : (c1 - line == 1 && line[0] == '0' && list[0] == '\0');
		free(list);
		if (!match)
			continue;
		out = el_xstrndup(path, n - (size_t)(path - line));
		if (out[0] != '/' || strstr(out, "/../") || strstr(out, "/./") || el_ends_with(out, "/..") ||
		    el_ends_with(out, "/.")) {
			free(out);
			return NULL;
		}
		return out;
	}
	return NULL;
}

/*
 * The folder of the process's cgroup under mount m: the mount point and
 * the part of path below the mount's root. A path outside the mount's
 * root (a container's own cgroup namespace shows "/", or the container
 * has only its own cgroup mounted) is the mount point itself. malloc'd.
 */
static char *cgroup_dir(const el_probe *p, const mount_entry *m, const char *path)
{
	size_t rl = strlen(m->root);
	const char *below = NULL;
	char *dir;
	struct stat st;

	if (path && strcmp(m->root, "/") == 0)
		below = path;
	else if (path && strncmp(path, m->root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
		below = path + rl;
	if (!below || !*below || strcmp(below, "/") == 0)
		return el_xstrdup(m->point);
	dir = el_xasprintf("%s%s", strcmp(m->point, "/") == 0 ? "" : m->point, below);
	/* the cgroup a host sees, in a container that mounted only its own */
	if (el_root_stat(&p->root, dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(dir);
		return el_xstrdup(m->point);
	}
	return dir;
}

/* A limit read from one cgroup folder. */
typedef enum { LIM_NOFILE, LIM_BAD, LIM_NONE, LIM_SET } lim_state;

typedef struct {
	lim_state state;
	unsigned long long a, b; /* CPU: quota and period (us); memory: bytes */
} lim;

/* Read name in dir; LIM_NOFILE when there is none, LIM_BAD (warned) when unreadable. */
static lim_state read_file(el_probe *p, const char *dir, const char *name, el_buf *b)
{
	char *path = el_path_join(dir, name);
	int rc = el_probe_read_text(p, path, b);

	free(path);
	return rc == 0 ? LIM_SET : rc == ENVLOCK_ENOTFOUND ? LIM_NOFILE : LIM_BAD;
}

static void warn_value(el_probe *p, const char *dir, const char *name, const char *what)
{
	char *path = el_path_join(dir, name);

	el_probe_warn(p, "'%s': not %s, ignored", path, what);
	free(path);
}

/* v2 cpu.max "max 100000" / "400000 100000"; v1 cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us */
static lim cpu_at(el_probe *p, const char *dir, int version)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_CGROUP_FILE);
	lim l = { LIM_NOFILE, 0, 0 };
	const char *s, *sp;
	size_t n;

	if (version == 2) {
		if ((l.state = read_file(p, dir, "cpu.max", &b)) != LIM_SET)
			goto done;
		trimmed(&b, &s, &n);
		sp = memchr(s, ' ', n);
		if ((sp ? (size_t)(sp - s) : n) == 3 && strncmp(s, "max", 3) == 0) {
			l.state = LIM_NONE;
		} else if (!sp || !parse_u64(s, (size_t)(sp - s), &l.a) ||
			   !parse_u64(sp + 1, n - (size_t)(sp + 1 - s), &l.b) || !l.a || !l.b) {
			warn_value(p, dir, "cpu.max", "a CPU quota (\"max 100000\" or \"400000 100000\")");
			l.state = LIM_BAD;
		}
		goto done;
	}
	if ((l.state = read_file(p, dir, "cpu.cfs_quota_us", &b)) != LIM_SET)
		goto done;
	trimmed(&b, &s, &n);
	if (n == 2 && strncmp(s, "-1", 2) == 0) {
		l.state = LIM_NONE;
		goto done;
	}
	if (!parse_u64(s, n, &l.a) || !l.a) {
		warn_value(p, dir, "cpu.cfs_quota_us", "a CPU quota (-1 or microseconds)");
		l.state = LIM_BAD;
		goto done;
	}
	if ((l.state = read_file(p, dir, "cpu.cfs_period_us", &b)) != LIM_SET) {
		/* a quota without its period says no number of CPUs */
		if (l.state == LIM_NOFILE)
			warn_value(p, dir, "cpu.cfs_quota_us", "usable without cpu.cfs_period_us beside it");
		l.state = LIM_BAD;
		goto done;
	}
	trimmed(&b, &s, &n);
	if (!parse_u64(s, n, &l.b) || !l.b) {
		warn_value(p, dir, "cpu.cfs_period_us", "a period in microseconds");
		l.state = LIM_BAD;
	}
done:
	el_buf_release(&b);
	return l;
}

/* v2 memory.max ("max" or bytes); v1 memory.limit_in_bytes (2^63 rounded down to a page: none) */
static lim memory_at(el_probe *p, const char *dir, int version)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_CGROUP_FILE);
	const char *name = version == 2 ? "memory.max" : "memory.limit_in_bytes";
	lim l = { LIM_NOFILE, 0, 0 };
	const char *s;
	size_t n;

	if ((l.state = read_file(p, dir, name, &b)) == LIM_SET) {
		trimmed(&b, &s, &n);
		if (version == 2 && n == 3 && strncmp(s, "max", 3) == 0) {
			l.state = LIM_NONE;
		} else if (!parse_u64(s, n, &l.a)) {
			warn_value(p, dir, name, version == 2 ? "a number of bytes or \"max\"" : "a number of bytes");
			l.state = LIM_BAD;
		} else if (l.a >= EL_MEMORY_UNLIMITED) {
			l.state = LIM_NONE;
		}
	}
	el_buf_release(&b);
	return l;
}

/* How many CPUs a cpuset list names ("0-3,8-11" -> 8); -1 when it is not one. */
static long long cpuset_count(const char *s, size_t n)
{
	long long count = 0;
	const char *end = s + n;

	if (n == 0)
		return -1;
	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		size_t len = (size_t)((comma ? comma : end) - s);
		const char *dash = memchr(s, '-', len);
		unsigned long long lo, hi;

		if (!parse_u64(s, dash ? (size_t)(dash - s) : len, &lo))
			return -1;
		hi = lo;
		if (dash && !parse_u64(dash + 1, len - (size_t)(dash + 1 - s), &hi))
			return -1;
		if (hi < lo || hi > EL_CPUSET_MAX_CPU)
			return -1;
		count += (long long)(hi - lo + 1);
		s += len;
		if (s < end && ++s == end)
			return -1; /* a trailing comma */
	}
	return count;
}

/* The folders from dir up to the mount point m, leaf first; a NULL-terminated malloc'd list. */
static char **levels(const mount_entry *m, const char *dir)
{
	el_strvec v = { 0 };
	char *d = el_xstrdup(dir);
	size_t pl = strlen(m->point);

	for (int i = 0; i < EL_CGROUP_MAX_DEPTH; i++) {
		char *up;

		el_strvec_push(&v, d);
		if (strlen(d) <= pl || strcmp(d, m->point) == 0)
			break;
		up = el_path_dir(d);
		free(d);
		d = up;
	}
	free(d);
	return el_strvec_detach(&v);
}

/*
 * The limit in force along dirs (the cgroup and those above it, each
 * limiting all below it): the smallest by size among those set. 1 with
 * *bound (LIM_SET, or LIM_NOFILE when only "no limit" was found) and
 * *src, the folder of the binding file (else of the first found); 0 when
 * no folder has the file; -1 when one of them cannot be read (unknown).
 */
static int tightest(el_probe *p, char **dirs, int version, lim (*at)(el_probe *, const char *, int),
		    double (*size)(const lim *), lim *bound, const char **src)
{
	bool seen = false;

	bound->state = LIM_NOFILE;
	for (size_t i = 0; dirs[i]; i++) {
		lim l = at(p, dirs[i], version);

		if (l.state == LIM_BAD)
			return -1;
		if (l.state == LIM_NOFILE)
			continue;
		if (!seen)
			*src = dirs[i];
		seen = true;
		if (l.state == LIM_SET && (bound->state != LIM_SET || size(&l) < size(bound))) {
			*bound = l;
			*src = dirs[i];
		}
	}
	return seen;
}

static double cpu_size(const lim *l)
{
	return (double)l->a / (double)l->b;
}

static double memory_size(const lim *l)
{
	return (double)l->a;
}

/* The file's path in src, as the lock names where a limit came from */
static void set_source(cJSON *o, const char *key, const char *src, const char *file)
{
	char *path = el_path_join(src, file);

	el_jset_str(o, key, path);
	free(path);
}

/* The CPU limit in force: the smallest quota/period. Unknown (nothing set) when one cannot be read. */
static void record_cpu(el_probe *p, cJSON *o, char **dirs, int version)
{
	const char *src = NULL;
	lim bound;

	if (tightest(p, dirs, version, cpu_at, cpu_size, &bound, &src) != 1)
		return;
	set_source(o, "cpu_source", src, version == 2 ? "cpu.max" : "cpu.cfs_quota_us");
	if (bound.state != LIM_SET) {
		el_jset(o, "cpu_limit", cJSON_CreateNull());
		return;
	}
	el_jset(o, "cpu_limit", cJSON_CreateNumber(cpu_size(&bound)));
	el_jset_int(o, "cpu_quota_us", bound.a > INT64_MAX ? INT64_MAX : (long long)bound.a);
	el_jset_int(o, "cpu_period_us", bound.b > INT64_MAX ? INT64_MAX : (long long)bound.b);
}

/* The memory limit in force: the smallest of those set. */
static void record_memory(el_probe *p, cJSON *o, char **dirs, int version)
{
	const char *src = NULL;
	lim bound;

	if (tightest(p, dirs, version, memory_at, memory_size, &bound, &src) != 1)
		return;
	set_source(o, "memory_source", src, version == 2 ? "memory.max" : "memory.limit_in_bytes");
	if (bound.state == LIM_SET)
		el_jset_int(o, "memory_limit_bytes", (long long)bound.a);
	else
		el_jset(o, "memory_limit_bytes", cJSON_CreateNull());
}

/* The CPUs of the cpuset: the nearest folder that has the file (v2 "effective" already holds its parents'). */
static void record_cpuset(el_probe *p, cJSON *o, char **dirs, int version)
{
	static const char *const v2[] = { "cpuset.cpus.effective", NULL };
	static const char *const v1[] = { "cpuset.effective_cpus", "cpuset.cpus", NULL };
	el_buf b = EL_BUF_INIT(EL_LIMIT_CGROUP_FILE);

	for (size_t i = 0; dirs[i]; i++)
		for (const char *const *name = version == 2 ? v2 : v1; *name; name++) {
			lim_state st = read_file(p, dirs[i], *name, &b);
			const char *s;
			size_t n;
			long long count;
			char *path;

			if (st == LIM_NOFILE)
				continue;
			if (st == LIM_SET) {
				trimmed(&b, &s, &n);
				if ((count = cpuset_count(s, n)) > 0) {
					path = el_path_join(dirs[i], *name);
					el_jset_int(o, "cpuset_cpus", count);
					el_jset_str(o, "cpuset_source", path);
					free(path);
				} else {
					warn_value(p, dirs[i], *name, "a list of CPUs (\"0-3,8-11\")");
				}
			}
			goto done;
		}
done:
	el_buf_release(&b);
}

/* One controller's limits: its mount, the process's folder in it, and the folders above. */
static char **controller_levels(el_probe *p, const mount_entry *m, const char *text, size_t len,
				const char *controller)
{
	char *path = text ? cgroup_path(text, len, controller) : NULL;
	char *dir = cgroup_dir(p, m, path);
	char **v = levels(m, dir);

	free(path);
	free(dir);
	return v;
}

static void probe_cgroup(el_probe *p, cJSON *system, const mount_table *t)
{
	const mount_entry *cpu = v1_mount(t, "cpu"), *mem = v1_mount(t, "memory"), *set = v1_mount(t, "cpuset");
	const mount_entry *unified = v2_mount(t);
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *text = NULL;
	char **dirs;
	cJSON *o;
	int version;

	/* a hybrid host mounts cgroup2 beside the v1 controllers, which are the ones that limit */
	if (cpu || mem || set)
		version = 1;
	else if (unified)
		version = 2;
	else
		return;
	if (el_probe_read_text(p, "/proc/self/cgroup", &b) == 0)
		text = el_buf_cstr(&b);
	o = el_jset_obj(system, "cgroup");
	el_jset_int(o, "version", version);
	if (version == 2) {
		dirs = controller_levels(p, unified, text, b.len, NULL);
		record_cpu(p, o, dirs, 2);
		record_cpuset(p, o, dirs, 2);
		record_memory(p, o, dirs, 2);
		el_strv_free(dirs);
	} else {
		if (cpu) {
			dirs = controller_levels(p, cpu, text, b.len, "cpu");
			record_cpu(p, o, dirs, 1);
			el_strv_free(dirs);
		}
		if (set) {
			dirs = controller_levels(p, set, text, b.len, "cpuset");
			record_cpuset(p, o, dirs, 1);
			el_strv_free(dirs);
		}
		if (mem) {
			dirs = controller_levels(p, mem, text, b.len, "memory");
			record_memory(p, o, dirs, 1);
			el_strv_free(dirs);
		}
	}
	el_buf_release(&b);
}

void el_probe_limits(el_probe *p)
{
	cJSON *system = el_probe_section(p, EL_SEC_SYSTEM);
	mount_table t;

	/* a mounted procfs is envlock's own on the host (hardware.c warns) */
	if (el_probe_host_procfs(p))
		return;
	if (read_mounts(p, &t)) {
		probe_shm(p, system, &t);
		probe_cgroup(p, system, &t);
	}
	mounts_release(&t);
}
