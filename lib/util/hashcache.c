#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "buf.h"
#include "envlock/common.h"
#include "hashcache.h"
#include "root.h"
#include "text.h"
#include "xalloc.h"

#define EL_HASHCACHE_MAGIC "envlock-hashes 1"
#define EL_HASHCACHE_MAX_ENTRIES 200000
#define EL_HASHCACHE_MAX_BYTES (32u << 20)

typedef struct {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	char hex[EL_SHA256_HEX];
	int used; /* slot in use */
} cache_entry;

struct el_hashcache {
	int disabled;
	int dirty;
	char *path;
	cache_entry *slots;
	size_t nslots, count;
	pthread_mutex_t lock;    /* guards the table, dirty and stats */
	envlock_hash_stats stats;
	void (*on_bytes)(uint64_t n, void *data);
	void *on_bytes_data;
};

static int64_t ns_of(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t slot_of(const el_hashcache *c, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ULL) ^ (ino * 0xc2b2ae3d27d4eb4fULL);
	return (size_t)(h ^ (h >> 29)) & (c->nslots - 1);
}

static cache_entry *find(el_hashcache *c, uint64_t dev, uint64_t ino)
{
	size_t i = slot_of(c, dev, ino);

	while (c->slots[i].used) {
		if (c->slots[i].dev == dev && c->slots[i].ino == ino)
			return &c->slots[i];
		i = (i + 1) & (c->nslots - 1);
	}
	return &c->slots[i];
}

static void grow(el_hashcache *c)
{
	cache_entry *old = c->slots;
	size_t n = c->nslots;

	c->nslots = n ? n * 2 : 1024;
	c->slots = el_xcalloc(c->nslots, sizeof(*c->slots));
	for (size_t i = 0; i < n; i++)
		if (old[i].used)
			*find(c, old[i].dev, old[i].ino) = old[i];
	free(old);
}

static void put(el_hashcache *c, const cache_entry *e)
{
	cache_entry *slot;

	if (c->count >= EL_HASHCACHE_MAX_ENTRIES)
		return;
	if ((c->count + 1) * 2 > c->nslots)
		grow(c);
	slot = find(c, e->dev, e->ino);
	if (!slot->used)
		c->count++;
	*slot = *e;
	slot->used = 1;
}

static char *cache_path(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return el_xasprintf("%s/envlock/hashes", xdg);
	if (home && home[0] == '/')
		return el_xasprintf("%s/.cache/envlock/hashes", home);
	return NULL;
}

static int load(el_hashcache *c, char **warning)
{
	el_buf b = EL_BUF_INIT(EL_HASHCACHE_MAX_BYTES);
	el_root live = EL_ROOT_LIVE_INIT;
	const char *p, *end;
	int rc, line = 1;

	rc = el_root_read(&live, c->path, &b, NULL);
	if (rc == ENVLOCK_ENOTFOUND) {
		el_buf_release(&b);
		return 0;
	}
	if (rc != 0) {
		*warning = el_xasprintf("'%s': %s; ignoring the digest cache", c->path,
					rc == ENVLOCK_ELIMIT ? "larger than 32 MiB" : "unreadable");
		el_buf_release(&b);
		return rc;
	}
	p = el_buf_cstr(&b);
	end = p + b.len;
	if (!el_starts_with(p, EL_HASHCACHE_MAGIC "\n")) {
		*warning = el_xasprintf("'%s': not an envlock digest cache; ignoring it", c->path);
		el_buf_release(&b);
		return ENVLOCK_EPARSE;
	}
	p += strlen(EL_HASHCACHE_MAGIC) + 1;
	while (p < end) {
		cache_entry e = { 0 };
		int used = 0;

		line++;
		if (sscanf(p, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNd64 " %" SCNd64 " %64[0-9a-f]%n",
			   &e.dev, &e.ino, &e.size, &e.mtime_ns, &e.ctime_ns, e.hex, &used) != 6 ||
		    strlen(e.hex) != 64 || p[used] != '\n') {
			*warning = el_xasprintf("'%s': line %d is corrupt; ignoring the digest cache",
						c->path, line);
			free(c->slots);
			c->slots = NULL;
			c->nslots = c->count = 0;
			grow(c);
			el_buf_release(&b);
			c->dirty = 1; /* rewrite it clean */
			return ENVLOCK_EPARSE;
		}
		put(c, &e);
		p += used + 1;
	}
	el_buf_release(&b);
	return 0;
}

el_hashcache *el_hashcache_open(int disabled, char **warning)
{
	el_hashcache *c = el_xcalloc(1, sizeof(*c));

	*warning = NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->disabled = disabled;
	c->path = disabled ? NULL : cache_path();
	if (!c->path)
		c->disabled = 1;
	grow(c);
	if (!c->disabled)
		load(c, warning);
	return c;
}

static int hash_once(el_hashcache *c, const char *host_path, char hex[EL_SHA256_HEX],
		     struct stat *before, int *changed, int *err_no)
{
	struct stat after;
	uint64_t n = 0;
	int fd = open(host_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), rc;

	if (fd < 0) {
		*err_no = errno;
		return errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO;
	}
	if (fstat(fd, before) != 0 || !S_ISREG(before->st_mode)) {
		close(fd);
		return ENVLOCK_EINVAL;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	rc = el_sha256_fd(fd, hex, &n, c->on_bytes, c->on_bytes_data);
	pthread_mutex_lock(&c->lock);
	c->stats.bytes_read += n;
	pthread_mutex_unlock(&c->lock);
	if (rc != 0)
		*err_no = errno;
	if (rc == 0 && fstat(fd, &after) == 0)
		*changed = after.st_size != before->st_size || (uint64_t)after.st_size != n ||
			   ns_of(after.st_mtim) != ns_of(before->st_mtim);
	close(fd);
	return rc;
}

int el_hashcache_file(el_hashcache *c, const char *host_path,
		      char hex[EL_SHA256_HEX], uint64_t *size, int *err_no)
{
	struct stat st;
	cache_entry e = { 0 }, *hit;
	int rc, changed = 0;

	*err_no = 0;
	if (stat(host_path, &st) != 0) {
		*err_no = errno;
		return errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO;
	}
	pthread_mutex_lock(&c->lock);
	c->stats.files++;
	hit = find(c, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (hit->used && hit->size == (uint64_t)st.st_size &&
	    hit->mtime_ns == ns_of(st.st_mtim) && hit->ctime_ns == ns_of(st.st_ctim)) {
		memcpy(hex, hit->hex, EL_SHA256_HEX);
		*size = hit->size;
		c->stats.cached++;
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	pthread_mutex_unlock(&c->lock);
	for (int attempt = 0; attempt < 3; attempt++) {
		rc = hash_once(c, host_path, hex, &st, &changed, err_no);
		if (rc != 0)
			return rc;
		if (!changed)
			break;
	}
	if (changed)
		return ENVLOCK_ERROR;
	*size = (uint64_t)st.st_size;
	if (c->disabled)
		return 0;
	e.dev = (uint64_t)st.st_dev;
	e.ino = (uint64_t)st.st_ino;
	e.size = (uint64_t)st.st_size;
	e.mtime_ns = ns_of(st.st_mtim);
	e.ctime_ns = ns_of(st.st_ctim);
	memcpy(e.hex, hex, EL_SHA256_HEX);
	pthread_mutex_lock(&c->lock);
	put(c, &e);
	c->dirty = 1;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void el_hashcache_stats(el_hashcache *c, envlock_hash_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->stats;
	pthread_mutex_unlock(&c->lock);
}

void el_hashcache_set_progress(el_hashcache *c, void (*on_bytes)(uint64_t n, void *data), void *data)
{
	c->on_bytes = on_bytes;
	c->on_bytes_data = data;
}

void el_hashcache_save(el_hashcache *c)
{
	el_buf b = EL_BUF_INIT(EL_HASHCACHE_MAX_BYTES);
	char *dir;

	if (!c || c->disabled || !c->dirty)
		return;
	el_buf_adds(&b, EL_HASHCACHE_MAGIC "\n");
	for (size_t i = 0; i < c->nslots; i++) {
		const cache_entry *e = &c->slots[i];

		if (e->used)
			el_buf_addf(&b, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %s\n",
				      e->dev, e->ino, e->size, e->mtime_ns, e->ctime_ns, e->hex);
	}
	/* a cache past its cap is not written: the next run hashes again */
	if (el_buf_failed(&b)) {
		el_buf_release(&b);
		c->dirty = 0;
		return;
	}
	dir = el_path_dir(c->path);
	if (el_mkdir_p(dir, 0700) == 0)
		el_write_atomic(NULL, c->path, b.data, b.len, 0600);
	free(dir);
	el_buf_release(&b);
	c->dirty = 0;
}

void el_hashcache_free(el_hashcache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c->slots);
	free(c->path);
	free(c);
}
