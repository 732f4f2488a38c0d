/* Path resolution and file access under a root directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "root.h"
#include "xalloc.h"

#define EL_MAX_LINKS 40

int el_root_init(el_root *r, envlock_ctx *ctx, const char *dir)
{
	char *real;
	struct stat st;

	r->prefix = NULL;
	r->live = 0;
	r->stable = 0;
	if (!dir || strcmp(dir, "/") == 0) {
		r->prefix = el_xstrdup("");
		r->live = 1;
		return 0;
	}
	if (stat(dir, &st) != 0)
		return el_error_set(ctx, ENVLOCK_ENOTFOUND, "'%s': %s", dir, el_strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return el_error_set(ctx, ENVLOCK_EINVAL, "'%s': not a directory", dir);
	real = realpath(dir, NULL);
	if (!real)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
	if (strcmp(real, "/") == 0) {
		real[0] = '\0';
		r->live = 1;
	}
	r->prefix = real;
	return 0;
}

void el_root_release(el_root *r)
{
	free(r->prefix);
	r->prefix = NULL;
}

char *el_root_host(const el_root *r, const char *abs)
{
	if (!*r->prefix)
		return el_xstrdup(*abs ? abs : "/");
	return el_xasprintf("%s%s", r->prefix, abs);
}

char *el_path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);

	if (n && dir[n - 1] == '/')
		return el_xasprintf("%s%s", dir, name);
	return el_xasprintf("%s/%s", dir, name);
}

const char *el_path_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

char *el_path_dir(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s || s == path)
		return el_xstrdup("/");
	return el_xstrndup(path, (size_t)(s - path));
}

char *el_path_normalise(const char *abs)
{
	size_t n = strlen(abs), o = 0;
	char *out = el_xmalloc(n + 2);
	const char *s = abs;

	out[o++] = '/';
	while (*s) {
		const char *comp;
		size_t clen;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		comp = s;
		clen = strcspn(s, "/");
		s += clen;
		if (clen == 1 && comp[0] == '.')
			continue;
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
			continue;
		}
		if (o > 1)
			out[o++] = '/';
		memcpy(out + o, comp, clen);
		o += clen;
	}
	out[o] = '\0';
	return out;
}

/* Drop the last component of an absolute path held in buf (never above "/"). */
/*
 * The folders el_root_realpath_at found to be directories, for a stable
 * root (el_root_set_stable): an open-addressed set of in-root paths, per
 * thread, so workers need no lock; full, it only stops growing.
 */
#define DIRSET_SLOTS 4096u

static _Thread_local struct {
	const char *prefix; /* the root they belong to */
	char **slot;
	size_t n;
} known_dirs;

static uint32_t path_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static void forget_dirs(void)
{
	for (size_t i = 0; known_dirs.slot && i < DIRSET_SLOTS; i++)
		free(known_dirs.slot[i]);
	free(known_dirs.slot);
	known_dirs.slot = NULL;
	known_dirs.n = 0;
	known_dirs.prefix = NULL;
}

/* Is path a directory found before (add: remember it as one)? */
static bool known_dir(const el_root *r, const char *path, bool add)
{
	size_t n = strlen(path);
	uint32_t i;

	if (!r->stable)
		return false;
	if (known_dirs.prefix != r->prefix) {
		forget_dirs();
		known_dirs.prefix = r->prefix;
	}
	if (!known_dirs.slot) {
		if (!add)
			return false;
		known_dirs.slot = el_xcalloc(DIRSET_SLOTS, sizeof(*known_dirs.slot));
	}
	for (i = path_hash(path, n) % DIRSET_SLOTS; known_dirs.slot[i]; i = (i + 1) % DIRSET_SLOTS)
		if (strcmp(known_dirs.slot[i], path) == 0)
			return true;
	if (add && known_dirs.n < DIRSET_SLOTS / 2) {
		known_dirs.slot[i] = el_xstrdup(path);
		known_dirs.n++;
	}
	return false;
}

void el_root_set_stable(el_root *r)
{
	r->stable = 1;
}

static void path_pop(char *buf)
{
	char *s = strrchr(buf, '/');

	if (s == buf)
		buf[1] = '\0';
	else if (s)
		*s = '\0';
}

int el_root_realpath_at(const el_root *r, const char *base, const char *rel,
			char **out, int *err_no)
{
	size_t cap = PATH_MAX * 2;
	char *done = el_xmalloc(cap);   /* resolved so far */
	char *todo = el_xstrdup(rel);   /* still to walk */
	char *host = el_xmalloc(cap + strlen(r->prefix) + 1);
	size_t plen = strlen(r->prefix);
	int links = 0, rc = 0;
	char *p;

	*out = NULL;
	if (err_no)
		*err_no = 0;
	if (rel[0] == '/' || !base)
		strcpy(done, "/");
	else if (strlen(base) >= cap) {
		rc = ENVLOCK_ELIMIT;
		goto done;
	} else
		strcpy(done, base);

	memcpy(host, r->prefix, plen);
	p = todo;
	while (*p) {
		char *comp, *slash;
		size_t clen, dlen;
		struct stat st;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		slash = strchr(p, '/');
		clen = slash ? (size_t)(slash - p) : strlen(p);
		comp = p;
		p = slash ? slash : p + clen;

		if (clen == 1 && comp[0] == '.')
			continue;
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			path_pop(done);
			continue;
		}
		dlen = strlen(done);
		if (dlen + clen + 2 >= cap) {
			rc = ENVLOCK_ELIMIT;
			goto done;
		}
		if (dlen > 1)
			done[dlen++] = '/';
		memcpy(done + dlen, comp, clen);
		done[dlen + clen] = '\0';

		/* a folder already walked through is a directory still (a stable root) */
		if (*p && known_dir(r, done, false))
			continue;
		strcpy(host + plen, done);
		if (lstat(plen ? host : done, &st) != 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				rc = ENVLOCK_ENOTFOUND;
			else
				rc = ENVLOCK_EIO;
			if (err_no)
				*err_no = errno;
			goto done;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n;
			char *rest;

			if (++links > EL_MAX_LINKS) {
				rc = ENVLOCK_ELIMIT;
				if (err_no)
					*err_no = ELOOP;
				goto done;
			}
			n = readlink(plen ? host : done, target, sizeof(target) - 1);
			if (n < 0) {
				rc = ENVLOCK_EIO;
				if (err_no)
					*err_no = errno;
				goto done;
			}
			target[n] = '\0';
			rest = el_xasprintf("%s%s", target, p);
			free(todo);
			todo = p = rest;
			if (target[0] == '/')
				strcpy(done, "/");
			else
				path_pop(done);
		} else if (*p && !S_ISDIR(st.st_mode)) {
			rc = ENVLOCK_ENOTFOUND;
			if (err_no)
				*err_no = ENOTDIR;
			goto done;
		} else if (*p) {
			known_dir(r, done, true);
		}
	}
	*out = el_xstrdup(done);
done:
	free(done);
	free(todo);
	free(host);
	return rc;
}

int el_root_realpath(const el_root *r, const char *abs, char **out, int *err_no)
{
	return el_root_realpath_at(r, "/", abs, out, err_no);
}

int el_root_lstat(const el_root *r, const char *abs, struct stat *st)
{
	char *host = el_root_host(r, abs);
	int rc = lstat(host, st) == 0 ? 0 : (errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO);

	free(host);
	return rc;
}

int el_root_stat(const el_root *r, const char *abs, struct stat *st)
{
	char *real;
	int rc = el_root_realpath(r, abs, &real, NULL);

	if (rc == 0) {
		rc = el_root_lstat(r, real, st);
		free(real);
	}
	return rc;
}

int el_root_readlink(const el_root *r, const char *abs, char **out)
{
	char *host = el_root_host(r, abs);
	char target[PATH_MAX];
	ssize_t n = readlink(host, target, sizeof(target) - 1);

	free(host);
	*out = NULL;
	if (n < 0)
		return errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO;
	target[n] = '\0';
	*out = el_xstrdup(target);
	return 0;
}

/* Read the regular file open on fd into out, within out's cap; closes fd. */
static int read_fd(int fd, el_buf *out, int *err_no)
{
	struct stat st;
	int rc = 0;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ENVLOCK_EINVAL;
	}
	/* /proc files report size 0; the cap below still bounds them */
	if ((size_t)st.st_size > out->limit) {
		close(fd);
		return ENVLOCK_ELIMIT;
	}
	/* a regular file of known size: one read straight into the buffer */
	if (st.st_size > 0 && el_buf_put(out, NULL, 0) == 0 &&
	    el_buf_reserve(out, (size_t)st.st_size) == 0) {
		ssize_t n;

		do
			n = read(fd, out->data + out->len, (size_t)st.st_size);
		while (n < 0 && errno == EINTR);
		if (n == st.st_size) {
			out->len += (size_t)n;
			out->data[out->len] = '\0';
			close(fd);
			return 0;
		}
		/* shorter or failed: start again the general way */
		if (lseek(fd, 0, SEEK_SET) != 0) {
			if (err_no)
				*err_no = errno;
			close(fd);
			return ENVLOCK_EIO;
		}
	}
	for (;;) {
		char chunk[16384];
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (err_no)
				*err_no = errno;
			rc = ENVLOCK_EIO;
			break;
		}
		if (n == 0)
			break;
		if ((rc = el_buf_put(out, chunk, (size_t)n)) != 0)
			break;
	}
	close(fd);
	if (rc == 0 && !out->data)
		el_buf_add(out, "", 0);
	return rc;
}

/* open(2) a host path for reading, never following a final symlink or blocking on a FIFO. */
static int open_host(const char *host, int *err_no)
{
	int fd = open(host, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0 && err_no)
		*err_no = errno;
	return fd;
}

int el_root_read(const el_root *r, const char *abs, el_buf *out, int *err_no)
{
	char *real, *host;
	int fd, rc, e = 0;

	el_buf_reset(out);
	if (err_no)
		*err_no = 0;
	rc = el_root_realpath(r, abs, &real, &e);
	if (rc) {
		if (err_no)
			*err_no = e;
		return rc;
	}
	host = el_root_host(r, real);
	free(real);
	fd = open_host(host, &e);
	free(host);
	if (fd < 0) {
		if (err_no)
			*err_no = e;
		return e == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO;
	}
	return read_fd(fd, out, err_no);
}

/*
 * The directory of the last el_root_read_at / el_root_lstat_at on this
 * thread, kept open: probes read several files from one folder (a
 * dist-info, conda-meta), and openat(2) from it spares the kernel a walk
 * of the whole path each time. Per thread, so workers need no lock.
 */
static _Thread_local struct {
	const char *prefix; /* identifies the root */
	char *dir;
	int fd;
} dir_cache = { NULL, NULL, -1 };

static void drop_dir_fd(void)
{
	if (dir_cache.fd >= 0)
		close(dir_cache.fd);
	free(dir_cache.dir);
	dir_cache.dir = NULL;
	dir_cache.prefix = NULL;
	dir_cache.fd = -1;
}

static int cached_dir_fd(const el_root *r, const char *dir)
{
	char *host;

	if (dir_cache.fd >= 0 && dir_cache.prefix == r->prefix && strcmp(dir_cache.dir, dir) == 0)
		return dir_cache.fd;
	drop_dir_fd();
	host = el_root_host(r, dir);
	dir_cache.fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	free(host);
	if (dir_cache.fd >= 0) {
		dir_cache.prefix = r->prefix;
		dir_cache.dir = el_xstrdup(dir);
	}
	return dir_cache.fd;
}


static void forget_listings(void);

void el_root_thread_done(void)
{
	drop_dir_fd();
	forget_dirs();
	forget_listings();
}

int el_root_read_at(const el_root *r, const char *dir, const char *name, el_buf *out, int *err_no)
{
	int dfd = cached_dir_fd(r, dir), e = 0, fd, rc;
	char *rel;

	el_buf_reset(out);
	if (err_no)
		*err_no = 0;
	if (dfd >= 0) {
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0)
			return read_fd(fd, out, err_no);
		e = errno;
		if (e != ELOOP) {
			if (err_no)
				*err_no = e;
			return e == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO;
		}
	}
	/* a symlink (or a folder that would not open): resolve under the root */
	rel = el_path_join(dir, name);
	rc = el_root_read(r, rel, out, err_no);
	free(rel);
	return rc;
}

int el_root_lstat_at(const el_root *r, const char *dir, const char *name, struct stat *st)
{
	int dfd = cached_dir_fd(r, dir);
	char *rel;
	int rc;

	if (dfd >= 0)
		return fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 ? 0
		       : errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO;
	rel = el_path_join(dir, name);
	rc = el_root_lstat(r, rel, st);
	free(rel);
	return rc;
}

/*
 * The large folders el_root_list read, for a stable root: the multiarch
 * library folder (1,700 names on Debian with python3-torch) is listed by
 * the driver probe and again by the CUDA and cuDNN probes, 0.7 ms each
 * time. A copy of the sorted names costs a tenth of that. Per thread, like
 * the sets above; small folders are read again.
 */
#define LISTING_MIN 256
#define LISTINGS 4

static _Thread_local struct {
	const char *prefix;
	struct {
		char *real;
		char **names;
		size_t n;
	} l[LISTINGS];
	size_t next; /* the slot the next listing takes */
} listings;

static void forget_listings(void)
{
	for (size_t i = 0; i < LISTINGS; i++) {
		free(listings.l[i].real);
		el_strv_free(listings.l[i].names);
		listings.l[i].real = NULL;
		listings.l[i].names = NULL;
		listings.l[i].n = 0;
	}
	listings.next = 0;
	listings.prefix = NULL;
}

static char **copy_names(char *const *names, size_t n)
{
	char **v = el_xmalloc((n + 1) * sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = el_xstrdup(names[i]);
	v[n] = NULL;
	return v;
}

/* The kept listing of the folder at real (in-root), or -1. */
static int kept_listing(const el_root *r, const char *real)
{
	if (!r->stable)
		return -1;
	if (listings.prefix != r->prefix) {
		forget_listings();
		listings.prefix = r->prefix;
	}
	for (int i = 0; i < LISTINGS; i++)
		if (listings.l[i].real && strcmp(listings.l[i].real, real) == 0)
			return i;
	return -1;
}

static void keep_listing(const el_root *r, const char *real, char *const *names, size_t n)
{
	size_t i = listings.next;

	if (!r->stable || n < LISTING_MIN)
		return;
	free(listings.l[i].real);
	el_strv_free(listings.l[i].names);
	listings.l[i].real = el_xstrdup(real);
	listings.l[i].names = copy_names(names, n);
	listings.l[i].n = n;
	listings.next = (i + 1) % LISTINGS;
}

int el_root_list(const el_root *r, const char *abs, char ***names, size_t *count)
{
	char *real, *host;
	DIR *d;
	struct dirent *de;
	el_strvec v = EL_STRVEC_INIT;
	int rc, kept;

	*names = NULL;
	if (count)
		*count = 0;
	rc = el_root_realpath(r, abs, &real, NULL);
	if (rc)
		return rc;
	if ((kept = kept_listing(r, real)) >= 0) {
		free(real);
		if (count)
			*count = listings.l[kept].n;
		*names = copy_names(listings.l[kept].names, listings.l[kept].n);
		return 0;
	}
	host = el_root_host(r, real);
	d = opendir(host);
	free(host);
	if (!d) {
		int e = errno;

		free(real);
		return e == ENOENT || e == ENOTDIR ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			el_strvec_push(&v, de->d_name);
	closedir(d);
	el_strvec_sort(&v);
	keep_listing(r, real, v.v, v.n);
	free(real);
	if (count)
		*count = v.n;
	*names = el_strvec_detach(&v);
	return 0;
}

const char *el_root_reason(int code, int err_no)
{
	switch (code) {
	case ENVLOCK_ENOTFOUND:
		return err_no == ENOTDIR ? "not a directory on the way" : "no such file";
	case ENVLOCK_ELIMIT:
		return err_no == ELOOP ? "symlink loop" : "larger than the size limit";
	case ENVLOCK_EINVAL:
		return "not a regular file";
	case ENVLOCK_EIO:
		switch (err_no) {
		case EACCES:
		case EPERM:
			return "permission denied";
		case EISDIR:
			return "is a directory";
		case ELOOP:
			return "symlink loop";
		case ENAMETOOLONG:
			return "path too long";
		default:
			return "read error";
		}
	default:
		return "unexpected error";
	}
}

bool el_is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *el_which(const char *name)
{
	const char *path = getenv("PATH");

	for (const char *p = path; p && *p;) {
		size_t n = strcspn(p, ":");
		char *dir = el_xstrndup(p, n), *file = dir[0] == '/' ? el_path_join(dir, name) : NULL;

		free(dir);
		if (file && el_is_executable(file))
			return file;
		free(file);
		p += n + (p[n] == ':');
	}
	return NULL;
}
