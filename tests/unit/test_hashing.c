/*
 * Unit tests for checkpoint hashing: a file that changes while it is
 * hashed, the thread pool, and the progress bar's output.
 */
#include "unit.h"

#include <fcntl.h>
#include <stdatomic.h>

#include "util/hash.h"
#include "util/hashcache.h"
#include "util/pool.h"
#include "util/progress.h"

typedef struct {
	const char *path;
	int changes_left; /* how many more appends to make */
	int calls;
} changer;

/*
 * Called after each chunk is read: append a byte, as a training job
 * writing the file would. The reader then reads that byte too (a second
 * call, which appends nothing), so every pass over the file sees exactly
 * one change while changes_left lasts.
 */
static void change_file(uint64_t n, void *data)
{
	changer *c = data;
	int fd;

	(void)n;
	if (c->calls++ % 2 != 0 || c->changes_left <= 0)
		return;
	c->changes_left--;
	fd = open(c->path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static void changed_while_hashed(void **state)
{
	char *dir = unit_tmpdir(), path[4200], *warning = NULL, hex[EL_SHA256_HEX], want[EL_SHA256_HEX];
	el_hashcache *c = el_hashcache_open(1, &warning);
	changer ch;
	uint64_t size = 0;
	int e = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/epoch_9.pth", dir);
	unit_write(dir, "epoch_9.pth", "weights", -1);

	/* changed once: read again, and the digest is of the file as it ends up */
	ch.path = path;
	ch.changes_left = 1;
	ch.calls = 0;
	el_hashcache_set_progress(c, change_file, &ch);
	assert_int_equal(el_hashcache_file(c, path, hex, &size, &e), 0);
	el_sha256_buf("weightsx", 8, want);
	assert_string_equal(hex, want);
	assert_int_equal(size, 8);

	/* changing on every read: reported, never recorded */
	ch.changes_left = 100;
	ch.calls = 0;
	assert_int_equal(el_hashcache_file(c, path, hex, &size, &e), ENVLOCK_ERROR);
	el_hashcache_free(c);
	unit_rmtree(dir);
}

static atomic_int hits[1000];

/* MD5 in pieces gives RFC 1321's test-suite digests, on any split, and the sha256 of the same bytes is FIPS 180's. */
static void md5_in_pieces(void **state)
{
	static const struct {
		const char *text, *md5;
	} rfc1321[] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		  "57edf4a22be3c955ac49da2e2107b67a" },
	};
	char hex[EL_MD5_HEX], sha[EL_SHA256_HEX];

	(void)state;
	for (size_t i = 0; i < sizeof(rfc1321) / sizeof(rfc1321[0]); i++) {
		size_t n = strlen(rfc1321[i].text);

		for (size_t cut = 0; cut <= n; cut += n / 3 + 1) {
			el_md5 *h = el_md5_begin();

			el_md5_update(h, rfc1321[i].text, cut);
			el_md5_update(h, rfc1321[i].text + cut, n - cut);
			el_md5_end(h, hex);
			assert_string_equal(hex, rfc1321[i].md5);
		}
	}
	el_md5_abort(NULL);
	el_md5_abort(el_md5_begin());
	el_sha256_buf("abc", 3, sha);
	assert_string_equal(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void count_hit(size_t i, void *data)
{
	(void)data;
	atomic_fetch_add(&hits[i], 1);
}

static void pool_runs_each_job_once(void **state)
{
	(void)state;
	for (size_t i = 0; i < 1000; i++)
		atomic_init(&hits[i], 0);
	el_pool_run(1000, 4, count_hit, NULL);
	for (size_t i = 0; i < 1000; i++)
		assert_int_equal(atomic_load(&hits[i]), 1);
	el_pool_run(0, 4, count_hit, NULL); /* no jobs: returns */
}

static void progress_bar_draws_after_a_second(void **state)
{
	char *dir = unit_tmpdir(), path[4200], text[4096] = "";
	int saved = dup(STDERR_FILENO), fd;
	el_progress *bar;
	ssize_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);

	bar = el_progress_start("hashing", 4u << 20, 1);
	el_progress_add(1u << 20, bar);
	usleep(1300 * 1000); /* past the one-second delay */
	el_progress_add(1u << 20, bar);
	el_progress_finish(bar);

	/* a bar that was never enabled writes nothing */
	bar = el_progress_start("hashing", 100, 0);
	el_progress_add(100, bar);
	el_progress_finish(bar);

	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	fd = open(path, O_RDONLY);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_true(n > 0);
	text[n] = '\0';
	assert_non_null(strstr(text, "\rhashing 1.0 MiB / 4.0 MiB   25%"));
	assert_non_null(strstr(text, "ETA "));
	/* the line is cleared at the end, so the next output starts clean */
	assert_true(n >= 4 && memcmp(text + n - 4, "\r\033[K", 4) == 0);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(changed_while_hashed),
		cmocka_unit_test(md5_in_pieces),
		cmocka_unit_test(pool_runs_each_job_once),
		cmocka_unit_test(progress_bar_draws_after_a_second),
	};
	return cmocka_run_group_tests_name("hashing", tests, NULL, NULL);
}
