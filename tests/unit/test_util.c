/* Unit tests for lib/util and the lock's JSON writer. */
#include <signal.h>
#include <sys/wait.h>

#include "unit.h"

#include <fcntl.h>
#include <math.h>
#include <time.h>

#include "util/atomic.h"
#include "util/error.h"
#include "util/bigblock.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/hashcache.h"
#include "util/pysource.h"
#include "util/root.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/xalloc.h"

/* A borrowed buffer is written in place, copied out when it must grow, and never freed by the buffer. */
static void buf_borrowed_memory(void **state)
{
	char mem[16];
	el_buf b = EL_BUF_INIT(64);
	char *out;

	(void)state;
	memset(mem, 'z', sizeof(mem));
	el_buf_borrow(&b, mem, sizeof(mem));
	assert_int_equal(el_buf_puts(&b, "0123456789abcde"), 0); /* 15 bytes and the NUL: still the caller's */
	assert_ptr_equal(b.data, mem);
	assert_true(b.borrowed);
	assert_int_equal(el_buf_putc(&b, 'f'), 0);                  /* one more: moved to malloc, content kept */
	assert_ptr_not_equal(b.data, mem);
	assert_false(b.borrowed);
	assert_string_equal(el_buf_cstr(&b), "0123456789abcdef");
	assert_memory_equal(mem, "0123456789abcde", 15);
	el_buf_release(&b);
	el_buf_borrow(&b, mem, sizeof(mem));
	assert_int_equal(el_buf_puts(&b, "kept"), 0);
	out = el_buf_detach(&b);                                     /* a copy the caller frees; mem is left alone */
	assert_ptr_not_equal(out, mem);
	assert_string_equal(out, "kept");
	free(out);
	assert_null(b.data);
	el_buf_borrow(&b, mem, sizeof(mem));
	el_buf_release(&b);                                          /* freeing mem (on the stack) would abort */
	assert_null(b.data);
	assert_false(b.borrowed);
}

/* Big blocks: 2 MiB multiples on a 2 MiB line, writable, handed out again after use; a huge one is not kept. */
static void bigblocks_come_back(void **state)
{
	size_t size = 0, size2 = 0;
	char *p, *q;

	(void)state;
	p = el_bigblock_get(1, &size);
	assert_non_null(p);
	assert_int_equal(size, EL_BIGBLOCK_MIN);
	assert_int_equal((uintptr_t)p % EL_BIGBLOCK_MIN, 0);
	memset(p, 1, size);
	el_bigblock_put(p, size);
	q = el_bigblock_get(EL_BIGBLOCK_MIN, &size2);
	assert_ptr_equal(q, p);                                      /* the kept one */
	assert_int_equal(size2, size);
	assert_int_equal(q[size - 1], 1);                            /* not cleared */
	p = el_bigblock_get(EL_BIGBLOCK_MIN + 1, &size);             /* none kept is large enough: a new one */
	assert_non_null(p);
	assert_int_equal(size, 2 * EL_BIGBLOCK_MIN);
	assert_ptr_not_equal(p, q);
	p[size - 1] = 2;
	el_bigblock_put(p, size);
	el_bigblock_put(q, size2);
	p = el_bigblock_get((size_t)64 << 20, &size);
	assert_non_null(p);
	p[size - 1] = 3;
	el_bigblock_put(p, size);                                    /* past what is kept: unmapped */
	q = el_bigblock_get((size_t)64 << 20, &size2);
	assert_non_null(q);
	el_bigblock_put(q, size2);
	el_bigblock_put(NULL, 0);
	assert_null(el_bigblock_get(SIZE_MAX - 1, &size));
}

static void buf_cap_is_hard(void **state)
{
	el_buf b = EL_BUF_INIT(8);

	(void)state;
	assert_int_equal(el_buf_puts(&b, "12345678"), 0);
	assert_int_equal(el_buf_putc(&b, '9'), ENVLOCK_ELIMIT);
	assert_int_equal(b.len, 8);
	assert_string_equal(el_buf_cstr(&b), "12345678");
	el_buf_reset(&b);
	assert_int_equal(el_buf_printf(&b, "%d-%s", 42, "x"), 0);
	assert_string_equal(el_buf_cstr(&b), "42-x");
	assert_int_equal(el_buf_printf(&b, "%s", "too long for it"), ENVLOCK_ELIMIT);
	el_buf_release(&b);
}

/* A failed append marks the buffer: every later one fails too, until reset. */
static void buf_failure_is_sticky(void **state)
{
	el_buf b = EL_BUF_INIT(8);

	(void)state;
	assert_int_equal(el_buf_failed(&b), 0);
	assert_int_equal(el_buf_puts(&b, "123456"), 0);
	assert_int_equal(el_buf_puts(&b, "789"), ENVLOCK_ELIMIT);
	assert_int_equal(el_buf_failed(&b), ENVLOCK_ELIMIT);
	/* this one would fit, but a text with a hole in it is no text */
	assert_int_equal(el_buf_putc(&b, '7'), ENVLOCK_ELIMIT);
	assert_int_equal(el_buf_put(&b, "", 0), ENVLOCK_ELIMIT);
	assert_int_equal(el_buf_reserve(&b, 1), ENVLOCK_ELIMIT);
	assert_string_equal(el_buf_cstr(&b), "123456");
	el_buf_reset(&b);
	assert_int_equal(el_buf_failed(&b), 0);
	assert_int_equal(el_buf_puts(&b, "12345678"), 0);
	el_buf_release(&b);
	assert_int_equal(el_buf_failed(&b), 0);
}

/* The el_buf_add* forms append as the checked ones do, and one check at the end sees any failure. */
static void buf_add_checks_once(void **state)
{
	el_buf b = EL_BUF_INIT(16);
	char *out;

	(void)state;
	el_buf_adds(&b, "ab");
	el_buf_addc(&b, 'c');
	el_buf_add(&b, "def", 2);
	el_buf_addf(&b, "-%d-%s", 7, "x");
	assert_int_equal(el_buf_failed(&b), 0);
	assert_string_equal(el_buf_cstr(&b), "abcde-7-x");
	el_buf_addf(&b, "%s", "past the cap");   /* fails: nothing appended */
	el_buf_addc(&b, '!');                     /* would fit, but b has failed */
	assert_int_equal(el_buf_failed(&b), ENVLOCK_ELIMIT);
	assert_string_equal(el_buf_cstr(&b), "abcde-7-x");
	out = el_buf_detach(&b);                  /* emptied: no longer failed */
	assert_string_equal(out, "abcde-7-x");
	free(out);
	assert_int_equal(el_buf_failed(&b), 0);
	el_buf_addf(&b, "%0300d", 1);             /* longer than printf's first try, and than the cap */
	assert_int_equal(el_buf_failed(&b), ENVLOCK_ELIMIT);
	el_buf_release(&b);

	el_buf_init(&b, 400);
	el_buf_addf(&b, "%0300d", 1);
	assert_int_equal(el_buf_failed(&b), 0);
	assert_int_equal(b.len, 300);
	el_buf_release(&b);
}

static void overflow_a_fits_buffer(void)
{
	el_buf b = EL_BUF_FITS(4, "four bytes hold it");

	el_buf_adds(&b, "1234");
	el_buf_addc(&b, '5');
}

/* A buffer made with a reason why its cap cannot be reached stops envlock, saying so, when it is. */
static void buf_fits_holds_its_promise(void **state)
{
	el_buf b = EL_BUF_FITS(4, "four bytes hold it");
	int p[2], status = 0;
	char err[512];
	ssize_t got;
	size_t have = 0;
	pid_t pid;

	(void)state;
	el_buf_adds(&b, "1234");
	assert_int_equal(el_buf_failed(&b), 0);
	el_buf_release(&b);
	el_buf_init_fits(&b, 2, "two bytes hold it");
	el_buf_adds(&b, "12");
	assert_string_equal(el_buf_cstr(&b), "12");
	el_buf_release(&b);

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		overflow_a_fits_buffer();
		_exit(0);
	}
	close(p[1]);
	while (have < sizeof(err) - 1 && (got = read(p[0], err + have, sizeof(err) - 1 - have)) > 0)
		have += (size_t)got;
	err[have] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_non_null(strstr(err, "four bytes hold it"));
}

static void c_define_reads_only_real_macros(void **state)
{
	const char *h = "/* CUDNN_MAJOR 7 was the previous release */\r\n"
			"// #define CUDNN_MAJOR 6\r\n"
			"#define CUDNN_MAJOR_VERSION_STR \"x\"\r\n"
			"#  define CUDNN_MAJOR\t8\r\n"
			"#define CUDNN_MINOR 2\r\n"
			"#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100)\r\n"
			"#define PY_VERSION \"3.7.16\"\n";
	long v = -1;
	char *s = NULL;

	(void)state;
	assert_true(el_c_define_int(h, strlen(h), "CUDNN_MAJOR", &v));
	assert_int_equal(v, 8);
	assert_true(el_c_define_int(h, strlen(h), "CUDNN_MINOR", &v));
	assert_int_equal(v, 2);
	assert_false(el_c_define_int(h, strlen(h), "CUDNN_VERSION", &v));
	assert_false(el_c_define_int(h, strlen(h), "CUDNN_PATCHLEVEL", &v));
	assert_true(el_c_define_str(h, strlen(h), "PY_VERSION", &s));
	assert_string_equal(s, "3.7.16");
	free(s);
}

static void py_assign_and_headers(void **state)
{
	const char *py = "__version__ = '1.10.0+cu102'\ndebug = False\ncuda = None\n"
			 "git_version = \"36449ea93134574c2a22b87baad3de0bf8d64d42\"\n"
			 "short_version = '.'.join(parts)\n"
			 "hip: Optional[str] = '5.6'\n"
			 "__version__ = '2.0.0'  # the last assignment wins, as in Python\n";
	const char *meta = "Metadata-Version: 2.1\nName: mmcv-full\nVersion: 1.7.5\n\nVersion: 9.9\n";
	bool present = false;
	char *v;

	(void)state;
	v = el_py_assign_str(py, strlen(py), "__version__", &present);
	assert_string_equal(v, "2.0.0");
	assert_true(present);
	free(v);
	assert_null(el_py_assign_str(py, strlen(py), "cuda", &present));
	assert_true(present);
	assert_null(el_py_assign_str(py, strlen(py), "short_version", &present));
	assert_false(present);
	assert_null(el_py_assign_str(py, strlen(py), "missing", &present));
	assert_false(present);
	v = el_py_assign_str(py, strlen(py), "hip", &present);
	assert_string_equal(v, "5.6");
	free(v);
	v = el_py_assign_str(py, strlen(py), "git_version", &present);
	assert_string_equal(v, "36449ea93134574c2a22b87baad3de0bf8d64d42");
	free(v);
	assert_int_equal(el_py_assign_bool(py, strlen(py), "debug"), 0);
	assert_int_equal(el_py_assign_bool(py, strlen(py), "cuda"), -1);
	v = el_pep503_name("Mmcv_Full..x");
	assert_string_equal(v, "mmcv-full-x");
	free(v);
	v = el_rfc822_header(meta, strlen(meta), "version");
	assert_string_equal(v, "1.7.5");
	free(v);
	v = el_unquote("\"Ubuntu 16.04.7 LTS\"", 20);
	assert_string_equal(v, "Ubuntu 16.04.7 LTS");
	free(v);
	v = el_unquote("'a \\\"b'", 7);
	assert_string_equal(v, "a \\\"b");
	free(v);
	assert_true(el_is_text("caf\xc3\xa9\r\n", 6));
	assert_false(el_is_text("a\0b", 3));
	assert_false(el_is_text("\xff\xfe", 2));
}

static void json_writer_sorts_and_escapes(void **state)
{
	cJSON *o = el_jnew_obj(), *a;
	el_buf b = EL_BUF_INIT(1 << 20);

	(void)state;
	el_jset_str(o, "zeta", "tab\there \"q\" \\ \x01");
	el_jset_int(o, "alpha", 9007199254740991LL);
	el_jset_int(o, "neg", -42);
	el_jset_str(o, "bad", "ok\xff\xc3(");
	a = el_jset_arr(o, "list");
	el_jpush_str(a, "b");
	el_jpush_str(a, "a");
	el_jset_obj(o, "empty");
	assert_int_equal(el_json_write(o, &b, 0), 0);
	assert_string_equal(el_buf_cstr(&b),
			    "{\"alpha\":9007199254740991,\"bad\":\"ok\\ufffd\\ufffd(\",\"empty\":{},"
			    "\"list\":[\"b\",\"a\"],\"neg\":-42,\"zeta\":\"tab\\there \\\"q\\\" \\\\ \\u0001\"}");
	el_buf_reset(&b);
	assert_int_equal(el_json_write(o, &b, 2), 0);
	assert_string_equal(el_buf_cstr(&b),
			    "{\n  \"alpha\": 9007199254740991,\n  \"bad\": \"ok\\ufffd\\ufffd(\",\n"
			    "  \"empty\": {},\n  \"list\": [\n    \"b\",\n    \"a\"\n  ],\n  \"neg\": -42,\n"
			    "  \"zeta\": \"tab\\there \\\"q\\\" \\\\ \\u0001\"\n}\n");
	el_buf_release(&b);
	cJSON_Delete(o);
}

/*
 * --json output (el_json_write_term) writes C1 and bidi controls as
 * \uXXXX, which parse back to the same string; the lock writer keeps them raw.
 */
static void json_for_a_terminal_escapes_c1_and_bidi(void **state)
{
	static const char raw[] = "a\x7f\xC2\x9B" "2J\xC2\x80\xE2\x80\xAEz\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C"
				  "\xE2\x81\xA6\xE2\x81\xA9\xE2\x80\xAA\xC2\xA0\xE2\x80\xA6\xE2\x80\xAF\xE2\x81\xAA\xF0\x9F\x98\x80";
	el_buf b = EL_BUF_INIT(1 << 20);
	cJSON *o = el_jnew_obj(), *back;

	(void)state;
	el_jset_str(o, raw, raw); /* keys too */
	assert_int_equal(el_json_write_term(o, &b, 0), 0);
	assert_string_equal(el_buf_cstr(&b),
			    "{\"a\\u007f\\u009b2J\\u0080\\u202ez\\u200e\\u200f\\u061c\\u2066\\u2069\\u202a\xC2\xA0\xE2\x80\xA6\xE2\x80\xAF\xE2\x81\xAA\xF0\x9F\x98\x80\":"
			    "\"a\\u007f\\u009b2J\\u0080\\u202ez\\u200e\\u200f\\u061c\\u2066\\u2069\\u202a\xC2\xA0\xE2\x80\xA6\xE2\x80\xAF\xE2\x81\xAA\xF0\x9F\x98\x80\"}");
	back = cJSON_Parse(el_buf_cstr(&b));
	assert_non_null(back);
	assert_string_equal(el_jget_str(back, raw), raw);
	cJSON_Delete(back);
	el_buf_reset(&b);
	assert_int_equal(el_json_write(o, &b, 0), 0);
	assert_int_equal(b.len, 2 * strlen(raw) + 7); /* {"raw":"raw"}, raw as it is */
	assert_non_null(strstr(el_buf_cstr(&b), raw));
	el_buf_release(&b);
	cJSON_Delete(o);
}

static void lock_id_ignores_created_and_id(void **state)
{
	envlock_lock a = { 0 }, b = { 0 };
	char want[80], hex[EL_SHA256_HEX];
	const char *canon = "{\"envlock\":1,\"x\":\"y\"}";

	(void)state;
	a.doc = el_jnew_obj();
	el_jset_int(a.doc, "envlock", 1);
	el_jset_str(a.doc, "x", "y");
	el_jset_str(a.doc, "created", "2020-01-01T00:00:00Z");
	b.doc = el_jnew_obj();
	el_jset_str(b.doc, "x", "y");
	el_jset_int(b.doc, "envlock", 1);
	el_jset_str(b.doc, "created", "2026-11-30T00:00:00Z");
	el_jset_str(b.doc, "id", "sha256:stale");
	el_lock_update_id(&a);
	el_lock_update_id(&b);
	el_sha256_buf(canon, strlen(canon), hex);
	snprintf(want, sizeof(want), "sha256:%s", hex);
	assert_string_equal(a.id, want);
	assert_string_equal(b.id, want);
	assert_string_equal(el_jget_str(b.doc, "id"), want);
	assert_string_equal(el_jget_str(b.doc, "created"), "2026-11-30T00:00:00Z");
	cJSON_Delete(a.doc);
	cJSON_Delete(b.doc);
}

/*
 * The canonical form read from a lock's text (the id every load computes)
 * against the one written from its document: the same bytes whenever the
 * text path says yes, and a no for every form it cannot prove the same.
 */
static int text_and_document(const char *text, char *why, size_t whylen)
{
	el_buf fromdoc = EL_BUF_INIT((size_t)1 << 30);
	envlock_lock l = { 0 };
	size_t n = strlen(text);
	char *copy = strdup(text);
	int rc;

	l.doc = cJSON_Parse(text);
	assert_non_null(l.doc);
	el_lock_canonical(&l, &fromdoc);
	rc = el_lock_canonical_text(copy, &n);
	if (rc == 0 && (n != fromdoc.len || memcmp(copy, fromdoc.data, n) != 0))
		snprintf(why, whylen, "text gives %.*s, document %s", (int)n, copy, fromdoc.data);
	else
		why[0] = '\0';
	free(copy);
	el_buf_release(&fromdoc);
	cJSON_Delete(l.doc);
	return rc;
}

/* tests/golden/<name>.lock.json's text, NUL-terminated (free it). */
static char *golden_text(const char *name, char *path, size_t pathlen)
{
	char *text;
	FILE *f;
	long len;

	snprintf(path, pathlen, "tests/golden/%s.lock.json", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return text;
}

/*
 * A saved lock is written once, its id hashed from that text
 * (el_lock_write_settled): the same id as the document's own canonical
 * form gives, the same text as writing the settled document, and the id
 * in the text; a document the text path cannot prove (a 16-digit number)
 * takes the document's path and says the same.
 */
static void settled_write_is_the_documents(const char *json)
{
	envlock_lock a = { 0 }, b = { 0 };
	el_buf once = EL_BUF_INIT((size_t)1 << 30), again = EL_BUF_INIT((size_t)1 << 30);
	char want[EL_LOCK_DIGEST_SIZE];

	a.doc = cJSON_Parse(json);
	b.doc = cJSON_Parse(json);
	assert_non_null(a.doc);
	assert_non_null(b.doc);
	el_lock_compute_id(&b);
	memcpy(want, b.id, sizeof(want));
	el_lock_touch(&a);
	assert_int_equal(el_lock_write_settled(&a, &once), 0);
	assert_true(a.id_ready);
	assert_false(a.doc_id_stale);
	assert_string_equal(a.id, want);
	assert_string_equal(el_jget_str(a.doc, "id"), want);
	assert_int_equal(el_json_write(a.doc, &again, 2), 0);
	assert_int_equal(once.len, again.len);
	assert_memory_equal(once.data, again.data, once.len);
	/* settled, it is written as it is */
	el_buf_release(&again);
	assert_int_equal(el_lock_write_settled(&a, &again), 0);
	assert_int_equal(once.len, again.len);
	assert_memory_equal(once.data, again.data, once.len);
	el_buf_release(&once);
	el_buf_release(&again);
	cJSON_Delete(a.doc);
	cJSON_Delete(b.doc);
}

static void lock_written_once(void **state)
{
	const char *docs[] = {
		"{\"envlock\":1}",
		"{\"envlock\":1,\"id\":\"sha256:old\",\"created\":\"2020-01-01T00:00:00Z\",\"a\":{\"id\":\"inner\"}}",
		"{\"z\":[1,-2,true,null,{\"b\":\"q\\\"\\n\",\"a\":\"caf\xc3\xa9\"}],\"verify\":{\"steps\":3},\"envlock\":1}",
		"{\"envlock\":1,\"n\":1234567890123456}", /* the document's path */
		"{\"envlock\":1,\"s\":\"\xff\"}",            /* not UTF-8: written as U+FFFD on both paths */
	};
	const char *golden[] = { "cuda92-cudnn7", "mmpose-container", "ubuntu1604-mmdet" };

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		settled_write_is_the_documents(docs[i]);
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		char path[256], *text = golden_text(golden[i], path, sizeof(path));

		settled_write_is_the_documents(text);
		free(text);
	}
}

/*
 * Strings and runs of space longer than the sixteen bytes the scanner
 * looks at in one go, with what stops it at every offset of a block:
 * each still read as the writer writes it, or refused as before.
 */
static void canonical_text_long_runs(void **state)
{
	static const char *const kept[] = { "\\\"", "\\n", "\\u001f", "\xc3\xa9", "\xf0\x9f\x90\x8d", "\x7f", "~" };
	static const char *const refused[] = { "\x01", "\t", "\xff", "\xc0\xaf", "\\/" };
	static const char *const spaces = " \n\t\r";
	char why[512], text[1024], pad[64];

	(void)state;
	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++)
		for (int at = 0; at < 40; at++) {
			memset(pad, 'x', (size_t)at);
			pad[at] = '\0';
			snprintf(text, sizeof(text), "{\"a\":\"%s%s0123456789abcdef0123456789abcdef\"}", pad, kept[k]);
			if (text_and_document(text, why, sizeof(why)) != 0)
				fail_msg("the text path refused %s", text);
			if (why[0])
				fail_msg("%s", why);
		}
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
		for (int at = 0; at < 40; at++) {
			size_t n;

			memset(pad, 'x', (size_t)at);
			pad[at] = '\0';
			n = (size_t)snprintf(text, sizeof(text), "{\"a\":\"%s%s0123456789abcdef0123456789abcdef\"}", pad, refused[k]);
			if (el_lock_canonical_text(text, &n) == 0)
				fail_msg("the text path took a string with byte %d of %s", at, refused[k]);
		}
	/* runs of space of every length to 40, of every kind, between every token */
	for (int len = 0; len <= 40; len++) {
		char run[64];

		for (int i = 0; i < len; i++)
			run[i] = spaces[(i * 7 + len) % 4];
		run[len] = '\0';
		snprintf(text, sizeof(text), "%s{%s\"a\"%s:%s[%s1%s,%s\"0123456789abcdef0123\"%s]%s,%s\"b\":{%s}%s}%s", run, run,
			 run, run, run, run, run, run, run, run, run, run, run);
		if (text_and_document(text, why, sizeof(why)) != 0)
			fail_msg("the text path refused space of %d bytes", len);
		if (why[0])
			fail_msg("%s", why);
	}
}

static void canonical_text_is_the_writers(void **state)
{
	const char *same[] = {
		"{}",
		"{\"a\":1}",
		"{\n  \"created\": \"2020-01-01T00:00:00Z\",\n  \"envlock\": 1,\n  \"id\": \"sha256:x\",\n  \"verify\": {\"steps\": 3}\n}\n",
		"{\"id\":\"x\",\"z\":[1, -2, 0, true, false, null, [], {}, \"q\\\"\\\\\\n\\t\\u001f\"]}",
		"{\"a\":{\"b\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d\",\"c\":123456789012345}}",
		"{\"aa\":1,\"ab\":2,\"b\":{\"a\":1,\"ab\":2,\"b\":3}}",
		"{ \"x\" : [ 1 , 2 ] , \"y\" :{ } }",
	};
	const char *other[] = {
		"{\"b\":1,\"a\":2}",              /* keys out of order: the writer sorts them */
		"{\"a\":1,\"a\":2}",              /* a repeated key */
		"{\"a\":1.5}",                    /* not a whole number */
		"{\"a\":1e3}",
		"{\"a\":-0}",
		"{\"a\":01}",
		"{\"a\":1234567890123456}",       /* 16 digits: past what the text path proves */
		"{\"a\":\"\\/\"}",                /* an escape the writer does not write */
		"{\"a\":\"\\u00e9\"}",
		"{\"a\":\"\\u0041\"}",
		"{\"a\":\"\\u000a\"}",            /* \n has a short form */
		"{\"a\":\"\\u001F\"}",            /* upper-case hex */
		"{\"a\":\"\xff\"}",               /* not UTF-8: the writer writes U+FFFD */
		"{\"a\":\"\xc0\xaf\"}",           /* overlong */
		"{\"a\\u0062\":1}",               /* an escape in a key */
		"{\"a\":\"\\u0000\"}",
		"[1]",
		"\xef\xbb\xbf{}",                 /* a byte order mark */
	};
	char why[512];

	(void)state;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		if (text_and_document(same[i], why, sizeof(why)) != 0)
			fail_msg("the text path refused %s", same[i]);
		if (why[0])
			fail_msg("%s", why);
	}
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		char *copy = strdup(other[i]);
		size_t n = strlen(copy);

		if (el_lock_canonical_text(copy, &n) == 0)
			fail_msg("the text path took %s", other[i]);
		free(copy);
	}
	/* every golden lock, and its id as envlock_lock_load gives it */
	const char *golden[] = { "broken", "cuda92-cudnn7", "mmpose-container", "no-nvidia", "ubuntu1604-mmdet" };
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		char path[256], *text = golden_text(golden[i], path, sizeof(path));
		envlock_ctx *ctx;
		envlock_lock *lock;

		assert_int_equal(text_and_document(text, why, sizeof(why)), 0);
		if (why[0])
			fail_msg("%s: %s", path, why);
		free(text);
		assert_int_equal(envlock_ctx_new(&ctx), 0);
		assert_int_equal(envlock_lock_load(&lock, ctx, path), 0);
		assert_true(lock->id_ready); /* from the text, at load */
		char fromtext[sizeof(lock->id)];
		memcpy(fromtext, lock->id, sizeof(fromtext));
		el_lock_compute_id(lock);
		assert_string_equal(fromtext, lock->id);
		envlock_lock_free(lock);
		envlock_ctx_free(ctx);
	}
}

static void root_resolves_like_a_chroot(void **state)
{
	char *dir = unit_tmpdir(), *out = NULL;
	el_root r;
	el_buf b = EL_BUF_INIT(64);
	int e = 0;

	(void)state;
	unit_write(dir, "usr/local/cuda-11.8/version.json", "{}", -1);
	unit_symlink(dir, "usr/local/cuda", "/usr/local/cuda-11.8");   /* absolute: under the root */
	unit_symlink(dir, "lib", "usr/lib");
	unit_write(dir, "usr/lib/x/libc.so.6", "libc", -1);
	unit_symlink(dir, "usr/local/escape", "../../../../../../etc"); /* climbs: stops at root */
	unit_write(dir, "etc/passwd", "inside", -1);
	unit_symlink(dir, "loop", "loop");
	unit_symlink(dir, "dangling", "/nonexistent/x");
	unit_write(dir, "big", "0123456789012345678901234567890123456789012345678901234567890123456789", -1);
	assert_int_equal(el_root_init(&r, NULL, dir), 0);
	assert_false(r.live);

	assert_int_equal(el_root_realpath(&r, "/usr/local/cuda/version.json", &out, NULL), 0);
	assert_string_equal(out, "/usr/local/cuda-11.8/version.json");
	free(out);
	assert_int_equal(el_root_realpath(&r, "/lib/x/libc.so.6", &out, NULL), 0);
	assert_string_equal(out, "/usr/lib/x/libc.so.6");
	free(out);
	assert_int_equal(el_root_read(&r, "/usr/local/escape/passwd", &b, &e), 0);
	assert_string_equal(el_buf_cstr(&b), "inside");
	assert_int_equal(el_root_read(&r, "/loop", &b, &e), ENVLOCK_ELIMIT);
	assert_int_equal(e, ELOOP);
	assert_string_equal(el_root_reason(ENVLOCK_ELIMIT, e), "symlink loop");
	assert_int_equal(el_root_read(&r, "/dangling", &b, &e), ENVLOCK_ENOTFOUND);
	assert_int_equal(el_root_read(&r, "/big", &b, &e), ENVLOCK_ELIMIT);
	assert_int_equal(el_root_read(&r, "/usr", &b, &e), ENVLOCK_EINVAL);
	el_root_release(&r);
	el_buf_release(&b);
	unit_rmtree(dir);
}

/* A stable root keeps the listing of a large folder (the multiarch one): copies, by real path. */
static void root_keeps_large_listings(void **state)
{
	char *dir = unit_tmpdir(), **a = NULL, **b = NULL, name[64];
	el_root stable, plain;
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "usr/lib/big/lib%03d.so", i);
		unit_write(dir, name, "x", -1);
	}
	unit_write(dir, "usr/lib/small/one", "x", -1);
	unit_symlink(dir, "lib", "usr/lib");
	assert_int_equal(el_root_init(&stable, NULL, dir), 0);
	assert_int_equal(el_root_init(&plain, NULL, dir), 0);
	el_root_set_stable(&stable);

	assert_int_equal(el_root_list(&stable, "/usr/lib/big", &a, &n), 0);
	assert_int_equal(n, 300);
	assert_string_equal(a[0], "lib000.so");
	assert_string_equal(a[299], "lib299.so");
	assert_null(a[300]);
	unit_write(dir, "usr/lib/big/lib300.so", "x", -1);
	unit_write(dir, "usr/lib/small/two", "x", -1);
	/* through the link, the same real folder: the kept names, a copy of their own */
	assert_int_equal(el_root_list(&stable, "/lib/big", &b, &n), 0);
	assert_int_equal(n, 300);
	el_strv_free(a);
	assert_string_equal(b[299], "lib299.so");
	assert_null(b[300]);
	el_strv_free(b);
	/* a small folder is read again, and a root not marked stable always is */
	assert_int_equal(el_root_list(&stable, "/usr/lib/small", &a, &n), 0);
	assert_int_equal(n, 2);
	el_strv_free(a);
	assert_int_equal(el_root_list(&plain, "/usr/lib/big", &a, &n), 0);
	assert_int_equal(n, 301);
	el_strv_free(a);
	/* a thread's end forgets what it kept */
	el_root_thread_done();
	assert_int_equal(el_root_list(&stable, "/usr/lib/big", &a, &n), 0);
	assert_int_equal(n, 301);
	assert_string_equal(a[300], "lib300.so");
	el_strv_free(a);
	el_root_thread_done();
	el_root_release(&stable);
	el_root_release(&plain);
	unit_rmtree(dir);
}

static void atomic_write_keeps_old_file_on_failure(void **state)
{
	char *dir = unit_tmpdir(), path[4200], bad[4200];
	envlock_ctx *ctx;
	FILE *f;
	char got[32] = "";

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	snprintf(path, sizeof(path), "%s/lock.json", dir);
	assert_int_equal(el_write_atomic(ctx, path, "old\n", 4, 0644), 0);
	snprintf(bad, sizeof(bad), "%s/missing-dir/lock.json", dir);
	assert_int_equal(el_write_atomic(ctx, bad, "new\n", 4, 0644), ENVLOCK_EIO);
	assert_non_null(strstr(envlock_error_last(ctx), "missing-dir/lock.json"));
	assert_int_equal(el_write_atomic(ctx, path, "new\n", 4, 0644), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "new\n");
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

static void spawn_captures_and_times_out(void **state)
{
	const char *echo[] = { "printf", "a%sb", "-", NULL };
	const char *sleeper[] = { "sleep", "5", NULL };
	const char *missing[] = { "envlock-no-such-program", NULL };
	el_buf out = EL_BUF_INIT(1024);
	struct timespec t0, t1;
	int status;

	(void)state;
	assert_int_equal(el_spawn(echo, 5000, &out, &status), 0);
	assert_int_equal(status, 0);
	assert_string_equal(el_buf_cstr(&out), "a-b");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(el_spawn(sleeper, 200, &out, &status), ENVLOCK_ETIMEOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 3);
	assert_int_equal(el_spawn(missing, 1000, &out, &status), ENVLOCK_ENOTFOUND);
	el_buf_release(&out);
}

/*
 * Inside a tree: the program is found by its path in the tree, not on the
 * host's PATH, and one that is not there is reported with the reason
 * (chroot's EPERM when not root, else exec's ENOENT).
 */
static void spawn_in_tree_runs_there(void **state)
{
	char *dir = unit_tmpdir(), log[4200];
	const char *missing[] = { "/bin/sh", "-c", "exit 3", NULL };
	const char *host_sh[] = { "/bin/sh", "-c", "echo \"in $ENVLOCK_T\"; exit 3", NULL };
	const char *env[] = { "ENVLOCK_T=tree", NULL };
	int fd, status, child_errno;

	(void)state;
	snprintf(log, sizeof(log), "%s/log", dir);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	/* an empty tree has no /bin/sh: the host's is never run instead */
	assert_int_equal(el_spawn_logged_in(dir, missing, NULL, fd, &status, &child_errno), ENVLOCK_ENOTFOUND);
	assert_int_equal(child_errno, geteuid() == 0 ? ENOENT : EPERM);
	/* the live machine's "/" as the tree: the program runs, with envv, its status returned */
	if (geteuid() == 0) {
		el_buf b = EL_BUF_INIT(1024);
		el_root live = EL_ROOT_LIVE_INIT;
		int e = 0;

		assert_int_equal(el_spawn_logged_in("/", host_sh, env, fd, &status, &child_errno), 0);
		assert_int_equal(status, 3);
		assert_int_equal(el_root_read(&live, log, &b, &e), 0);
		assert_string_equal(el_buf_cstr(&b), "in tree\n");
		el_buf_release(&b);
	}
	close(fd);
	unit_rmtree(dir);
}

/* A timeout ends what the program started too (nvcc's cicc and ptxas), not only the program. */
static void spawn_timeout_ends_the_whole_group(void **state)
{
	char *dir = unit_tmpdir(), pidfile[4200], script[4300];
	const char *argv[] = { "sh", "-c", script, NULL };
	el_buf out = EL_BUF_INIT(1024), pid_text = EL_BUF_INIT(64);
	int status, e = 0;
	el_root live = EL_ROOT_LIVE_INIT;
	long grandchild;

	(void)state;
	snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
	/* the grandchild sleeps in the background; the child waits for it */
	snprintf(script, sizeof(script), "sleep 30 & echo $! >'%s'; wait", pidfile);
	assert_int_equal(el_spawn(argv, 300, &out, &status), ENVLOCK_ETIMEOUT);
	assert_int_equal(el_root_read(&live, pidfile, &pid_text, &e), 0);
	grandchild = strtol(el_buf_cstr(&pid_text), NULL, 10);
	assert_true(grandchild > 1);
	/* killed with the group: gone once the kernel has reaped it (init adopts and reaps it) */
	for (int i = 0; i < 100 && kill((pid_t)grandchild, 0) == 0; i++)
		usleep(20000);
	assert_int_equal(kill((pid_t)grandchild, 0), -1);
	assert_int_equal(errno, ESRCH);
	el_buf_release(&out);
	el_buf_release(&pid_text);
	unit_rmtree(dir);
}

static void hashcache_hits_and_survives_corruption(void **state)
{
	char *dir = unit_tmpdir(), file[4200], cache[4200], *warning = NULL;
	char hex1[EL_SHA256_HEX], hex2[EL_SHA256_HEX], want[EL_SHA256_HEX];
	el_hashcache *c;
	uint64_t size = 0;
	int e;
	FILE *f;

	(void)state;
	setenv("XDG_CACHE_HOME", dir, 1);
	snprintf(file, sizeof(file), "%s/weights.bin", dir);
	snprintf(cache, sizeof(cache), "%s/envlock/hashes", dir);
	unit_write(dir, "weights.bin", "abc", 3);
	el_sha256_buf("abc", 3, want);

	c = el_hashcache_open(0, &warning);
	assert_null(warning);
	assert_int_equal(el_hashcache_file(c, file, hex1, &size, &e), 0);
	assert_string_equal(hex1, want);
	assert_int_equal(size, 3);
	el_hashcache_save(c);
	el_hashcache_free(c);
	assert_int_equal(access(cache, R_OK), 0);

	/* a stale digest planted in the cache for this very inode is served: proof of a hit */
	{
		struct stat st;
		char line[512];

		assert_int_equal(stat(file, &st), 0);
		snprintf(line, sizeof(line), "envlock-hashes 1\n%llu %llu 3 %lld %lld %s\n",
			 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			 (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
			 (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec,
			 "0000000000000000000000000000000000000000000000000000000000000000");
		unit_write(dir, "envlock/hashes", line, -1);
	}
	c = el_hashcache_open(0, &warning);
	assert_null(warning);
	assert_int_equal(el_hashcache_file(c, file, hex2, &size, &e), 0);
	assert_string_equal(hex2, "0000000000000000000000000000000000000000000000000000000000000000");
	el_hashcache_free(c);

	/* --no-cache ignores it */
	c = el_hashcache_open(1, &warning);
	assert_int_equal(el_hashcache_file(c, file, hex2, &size, &e), 0);
	assert_string_equal(hex2, want);
	el_hashcache_free(c);

	/* a corrupt cache is ignored with a warning naming it */
	f = fopen(cache, "w");
	fputs("envlock-hashes 1\ngarbage line\n", f);
	fclose(f);
	c = el_hashcache_open(0, &warning);
	assert_non_null(warning);
	assert_non_null(strstr(warning, cache));
	assert_non_null(strstr(warning, "line 2 is corrupt"));
	free(warning);
	assert_int_equal(el_hashcache_file(c, file, hex2, &size, &e), 0);
	assert_string_equal(hex2, want);
	el_hashcache_free(c);
	unsetenv("XDG_CACHE_HOME");
	unit_rmtree(dir);
}

/* el_term_text into a fresh buffer; malloc'd. */
static char *term(const char *s)
{
	el_buf b = EL_BUF_INIT(1 << 20);

	assert_int_equal(el_term_text(&b, s), 0);
	return el_buf_detach(&b);
}

/* el_term_put through a FILE; malloc'd. */
static char *term_file(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	el_term_put(f, s);
	assert_int_equal(fclose(f), 0);
	return text;
}

/*
 * What every escaped string must be: no byte below 0x20, no DEL, valid
 * UTF-8 without a C1 or bidi control, its width its code point count.
 */
static void assert_terminal_safe(const char *in, const char *out)
{
	const char *p = out, *end = out + strlen(out);
	size_t cps = 0;

	while (p < end) {
		long cp = el_utf8_next(&p, end);

		if (cp < 0 || el_is_control_cp(cp))
			fail_msg("escaping '%s' left code point %ld in '%s'", in, cp, out);
		cps++;
	}
	assert_true(el_term_safe(out));
	assert_int_equal(el_term_width(in), cps);
}

static void term_text_escapes_what_drives_a_terminal(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "11.8.89", "11.8.89" },
		{ "caf\xC3\xA9 \xE2\x80\xA6 \xE4\xB8\xAD \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x80\xA6 \xE4\xB8\xAD \xF0\x9F\x98\x80" },
		{ "a\\x1b", "a\\x1b" },                                 /* a backslash is copied */
		{ "\x1b]0;owned\x07", "\\x1b]0;owned\\x07" },           /* OSC title, BEL */
		{ "\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m" },
		{ "tab\there\nnl\rcr\x7f", "tab\\x09here\\x0anl\\x0dcr\\x7f" },
		{ "\xC2\x9b" "31m", "\\xc2\\x9b31m" },                  /* C1 CSI, both bytes */
		{ "\xC2\x80\xC2\x9f\xC2\xA0", "\\xc2\\x80\\xc2\\x9f\xC2\xA0" }, /* U+0080, U+009F; NBSP kept */
		{ "\xE2\x80\xAEgnp.exe", "\\u202egnp.exe" },            /* RIGHT-TO-LEFT OVERRIDE */
		{ "\xE2\x80\xAA\xE2\x80\xAD\xE2\x81\xA6\xE2\x81\xA9", "\\u202a\\u202d\\u2066\\u2069" },
		{ "\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C", "\\u200e\\u200f\\u061c" }, /* LRM, RLM, ARABIC LETTER MARK */
		{ "\xE2\x80\x8D\xD8\x9B", "\xE2\x80\x8D\xD8\x9B" },  /* ZWJ, U+061B: not controls */
		{ "\xE2\x80\xA9\xE2\x80\xAF\xE2\x81\xA5\xE2\x81\xAA",   /* U+2029, U+202F, U+2065, U+206A: not controls */
		  "\xE2\x80\xA9\xE2\x80\xAF\xE2\x81\xA5\xE2\x81\xAA" },
		{ "a\xffz", "a\\xffz" },
		{ "\xE2\x80", "\\xe2\\x80" },                           /* truncated */
		{ "\xC0\xAF", "\\xc0\\xaf" },                           /* overlong '/' */
		{ "\xED\xA0\x80", "\\xed\\xa0\\x80" },                  /* UTF-16 surrogate */
		{ "\xF4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },         /* past U+10FFFF */
		{ "", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = term(cases[i].in), *via_file = term_file(cases[i].in);

		assert_string_equal(got, cases[i].out);
		assert_string_equal(via_file, cases[i].out);
		assert_int_equal(el_term_safe(cases[i].in), strcmp(cases[i].in, cases[i].out) == 0);
		assert_terminal_safe(cases[i].in, got);
		free(got);
		free(via_file);
	}
}

/* Every string of one and two bytes, and of three from a set of edge bytes, comes out safe. */
static void term_text_is_safe_for_every_short_string(void **state)
{
	static const unsigned char edge[] = { 0x01, 0x1b, 0x41, 0x5c, 0x7f, 0x80, 0x9b, 0xa0, 0xaa, 0xae,
		0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x81, 0xa6, 0xa9 };
	char s[4];

	(void)state;
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 0; b < 256; b++) {
			char *got;

			s[0] = (char)a, s[1] = (char)b, s[2] = '\0';
			got = term(s);
			assert_terminal_safe(s, got);
			free(got);
		}
	for (size_t a = 0; a < sizeof(edge); a++)
		for (size_t b = 0; b < sizeof(edge); b++)
			for (size_t c = 0; c < sizeof(edge); c++) {
				char *got;

				s[0] = (char)edge[a], s[1] = (char)edge[b], s[2] = (char)edge[c], s[3] = '\0';
				got = term(s);
				assert_terminal_safe(s, got);
				free(got);
			}
}

static void term_text_respects_the_cap(void **state)
{
	el_buf b = EL_BUF_INIT(8);

	(void)state;
	assert_int_equal(el_term_text(&b, "\x1b\x1b"), 0); /* 8 bytes: fits */
	assert_string_equal(el_buf_cstr(&b), "\\x1b\\x1b");
	assert_int_equal(el_term_text(&b, "x"), ENVLOCK_ELIMIT);
	assert_true(b.len <= 8);
	el_buf_release(&b);
}

/* el_jget_int: only whole numbers that fit a long long; anything else is the fallback. */
static void jget_int_rejects_what_does_not_fit(void **state)
{
	static const char doc[] =
		"{\"big\": 1e300, \"small\": -1e300, \"inf\": 1e400, \"ninf\": -1e400, \"half\": 1.5,"
		" \"nhalf\": -2.5, \"tiny\": 1e-300, \"max\": 9223372036854775807, \"min\": -9223372036854775808,"
		" \"e18\": 1e18, \"p62\": 4611686018427387904, \"zero\": -0.0, \"n\": 42, \"neg\": -7,"
		" \"str\": \"7\", \"t\": true, \"nul\": null}";
	cJSON *o = cJSON_Parse(doc);

	(void)state;
	assert_non_null(o);
	assert_true(isinf(el_jget(o, "inf")->valuedouble)); /* what cJSON makes of 1e400 */
	cJSON_AddNumberToObject(o, "nan", NAN);
	cJSON_AddNumberToObject(o, "nnan", -NAN);
	cJSON_AddNumberToObject(o, "pinf", INFINITY);
	assert_true(isnan(el_jget(o, "nan")->valuedouble));
	for (const char *const *k = (const char *const[]){ "big", "small", "inf", "ninf", "half", "nhalf",
		"tiny", "max", "str", "t", "nul", "nan", "nnan", "pinf", "missing", NULL }; *k; k++) {
		if (el_jget_int(o, *k, -99) != -99)
			fail_msg("el_jget_int(\"%s\") = %lld, not the fallback", *k, el_jget_int(o, *k, -99));
	}
	/* 2^63 - 1 is 2^63 as a double: out of range; -2^63 is exact and in range */
	assert_true(el_jget_int(o, "min", 0) == -9223372036854775807LL - 1);
	assert_true(el_jget_int(o, "e18", 0) == 1000000000000000000LL);
	assert_true(el_jget_int(o, "p62", 0) == 4611686018427387904LL);
	assert_int_equal(el_jget_int(o, "zero", 5), 0);
	assert_int_equal(el_jget_int(o, "n", 0), 42);
	assert_int_equal(el_jget_int(o, "neg", 0), -7);
	assert_int_equal(el_jget_int(NULL, "n", 3), 3);
	cJSON_Delete(o);
}

/* text's mmcv range as "rc min max incl" ("-" for an unbounded side) */
static char *range_of(const char *text, size_t len)
{
	el_mmcv_range r;
	int rc = el_py_mmcv_range(text, len, &r);
	char *out = el_xasprintf("%d %s %s %s", rc, r.min ? r.min : "-", r.max ? r.max : "-",
				 r.max ? (r.max_inclusive ? "<=" : "<") : "-");

	el_mmcv_range_release(&r);
	return out;
}

static void expect_range(const char *text, const char *want)
{
	char *got = range_of(text, strlen(text));

	if (strcmp(got, want) != 0)
		fail_msg("'%s': got '%s', want '%s'", text, got, want);
	free(got);
}

#define MMDET2_HEAD "import mmcv\n\nfrom .version import __version__, short_version\n\n\n" \
	"def digit_version(version_str):\n    digit_version = []\n    for x in version_str.split('.'):\n" \
	"        if x.isdigit():\n            digit_version.append(int(x))\n" \
	"        elif x.find('rc') != -1:\n            patch_version = x.split('rc')\n" \
	"            digit_version.append(int(patch_version[0]) - 1)\n" \
	"            digit_version.append(int(patch_version[1]))\n    return digit_version\n\n\n"
#define MMDET2_ASSERT "assert (mmcv_version >= digit_version(mmcv_minimum_version)\n" \
	"        and mmcv_version <= digit_version(mmcv_maximum_version)), \\\n" \
	"    f'MMCV=={mmcv.__version__} is used but incompatible. ' \\\n" \
	"    f'Please install mmcv>={mmcv_minimum_version}, <={mmcv_maximum_version}.'\n"

/* The shapes of OpenMMLab's own __init__.py files, and what is not read for certain. */
static void py_mmcv_range_of_openmmlab_files(void **state)
{
	(void)state;
	/* mmdet 2.x (open-mmlab/mmdetection at 22694d9): <=, and the common edit of its maximum */
	expect_range(MMDET2_HEAD "mmcv_minimum_version = '1.3.17'\nmmcv_maximum_version = '1.5.0'\n"
		     "mmcv_version = digit_version(mmcv.__version__)\n\n\n" MMDET2_ASSERT
		     "\n__all__ = ['__version__', 'short_version']\n", "1 1.3.17 1.5.0 <=");
	expect_range(MMDET2_HEAD "mmcv_minimum_version = '1.3.17'\nmmcv_maximum_version = '1.7.0'\n"
		     "mmcv_maximum_version = '1.8.0'  # edited: the last assignment is the one asserted\n"
		     "mmcv_version = digit_version(mmcv.__version__)\n" MMDET2_ASSERT, "1 1.3.17 1.8.0 <=");
	/* mmdet 3.x, black-formatted: < */
	expect_range("import mmcv\nimport mmengine\nfrom mmengine.utils import digit_version\n\n"
		     "mmcv_minimum_version = \"2.0.0rc4\"\nmmcv_maximum_version = \"2.2.0\"\n"
		     "mmcv_version = digit_version(mmcv.__version__)\n\n"
		     "mmengine_minimum_version = \"0.7.1\"\nmmengine_maximum_version = \"1.0.0\"\n"
		     "mmengine_version = digit_version(mmengine.__version__)\n\n"
		     "assert mmcv_version >= digit_version(\n    mmcv_minimum_version\n"
		     ") and mmcv_version < digit_version(mmcv_maximum_version), (\n"
		     "    f\"MMCV=={mmcv.__version__} is used but incompatible. \"\n"
		     "    f\"Please install mmcv>={mmcv_minimum_version}, <{mmcv_maximum_version}.\"\n)\n\n"
		     "assert mmengine_version >= digit_version(\n    mmengine_minimum_version\n"
		     ") and mmengine_version < digit_version(mmengine_maximum_version), (\n"
		     "    f\"MMEngine=={mmengine.__version__} is used but incompatible.\"\n)\n", "1 2.0.0rc4 2.2.0 <");
	/* mmpose 0.x (056d8db): two asserts, the bound on the left */
	expect_range("import mmcv\nfrom mmcv import digit_version, parse_version_info\n\n"
		     "mmcv_minimum_version = '1.1.1'\nmmcv_maximum_version = '1.2'\n"
		     "mmcv_version = digit_version(mmcv.__version__)\n"
		     "version_info = parse_version_info(__version__)\n\n"
		     "assert digit_version(mmcv_minimum_version) <= mmcv_version, \\\n"
		     "        f'MMCV=={mmcv.__version__} is used but incompatible. ' \\\n"
		     "        f'Please install mmcv>={mmcv_minimum_version}.'\n\n"
		     "assert digit_version(mmcv_maximum_version) > mmcv_version, \\\n"
		     "        f'Please install mmcv<{mmcv_maximum_version}.'\n", "1 1.1.1 1.2 <");
	/* mmaction2: a chain */
	expect_range("mmcv_minimum_version = '1.1.1'\nmmcv_maximum_version = '1.2'\n"
		     "mmcv_version = digit_version(mmcv.__version__)\n\n"
		     "assert (digit_version(mmcv_minimum_version) <= mmcv_version\n"
		     "        <= digit_version(mmcv_maximum_version)), \\\n    f'MMCV=={mmcv.__version__}'\n",
		     "1 1.1.1 1.2 <=");
	/* mmsegmentation 0.x (2c7724f): MMCV_MIN, versions made once */
	expect_range("import mmcv\n\nMMCV_MIN = '1.3.7'\nMMCV_MAX = '1.4.0'\n\n\ndef digit_version(version_str):\n"
		     "    return []\n\n\nmmcv_min_version = digit_version(MMCV_MIN)\n"
		     "mmcv_max_version = digit_version(MMCV_MAX)\nmmcv_version = digit_version(mmcv.__version__)\n\n\n"
		     "assert (mmcv_min_version <= mmcv_version <= mmcv_max_version), \\\n"
		     "    f'MMCV=={mmcv.__version__} is used but incompatible. ' \\\n"
		     "    f'Please install mmcv>={mmcv_min_version}, <={mmcv_max_version}.'\n", "1 1.3.7 1.4.0 <=");
	/* the bounds without an assert (or with it commented out): importing checks nothing */
	expect_range("mmcv_minimum_version = '2.0.0rc4'\nmmcv_maximum_version = '2.1.0'\n"
		     "mmcv_version = digit_version(mmcv.__version__)\n"
		     "# assert (mmcv_version >= digit_version(mmcv_minimum_version)\n"
		     "#         and mmcv_version < digit_version(mmcv_maximum_version))\n"
		     "__all__ = ['__version__']\n", "0 - - -");
	expect_range("", "0 - - -");
	/* an assert in a function runs only when it is called */
	expect_range("mmcv_maximum_version = '1.8.0'\nmmcv_version = digit_version(mmcv.__version__)\n"
		     "def check():\n    assert mmcv_version <= digit_version(mmcv_maximum_version)\n"
		     "\n__all__ = []\n", "0 - - -");
	/* not read for certain: a computed bound, a conditional bound, an or, an if ... raise, a bare string compare */
	expect_range("mmcv_maximum_version = '.'.join(['1', '8'])\nmmcv_version = digit_version(mmcv.__version__)\n"
		     "assert mmcv_version <= digit_version(mmcv_maximum_version)\n", "-1 - - -");
	expect_range("if torch2:\n    mmcv_maximum_version = '2.2.0'\nelse:\n    mmcv_maximum_version = '2.1.0'\n"
		     "mmcv_version = digit_version(mmcv.__version__)\n"
		     "assert mmcv_version < digit_version(mmcv_maximum_version)\n", "-1 - - -");
	expect_range("mmcv_version = digit_version(mmcv.__version__)\n"
		     "assert mmcv_version < digit_version('2.1.0') or ALLOW\n", "-1 - - -");
	expect_range("mmcv_version = digit_version(mmcv.__version__)\n"
		     "if mmcv_version < digit_version('2.0.0rc0'):\n    raise RuntimeError('old mmcv')\n", "-1 - - -");
	expect_range("assert mmcv.__version__ < '2.1.0'\n", "-1 - - -");
	expect_range("mmcv_version = digit_version(mmcv.__version__)\n"
		     "assert mmcv_version < digit_version('not a version')\n", "-1 - - -");
	/* text that does not tokenize: an open bracket, an open string */
	expect_range("mmcv_version = digit_version(mmcv.__version__\n", "-1 - - -");
	expect_range("x = '''never closed\n", "-1 - - -");
}

/* Odd and huge input: no crash, no hang, no answer it cannot stand behind. */
static void py_mmcv_range_on_odd_input(void **state)
{
	size_t n = 1u << 20;
	char *big = el_xmalloc(n), *got;
	el_buf b = EL_BUF_INIT(4u << 20);

	(void)state;
	/* one statement far longer than is followed, naming mmcv past the part kept */
	memcpy(big, "assert (", 8);
	for (size_t i = 8; i < n; i += 2)
		memcpy(big + i, "1+", 2);
	memcpy(big + n - 40, "0) or mmcv_version < digit_version('9')\n", 40);
	got = range_of(big, n);
	assert_string_equal(got, "-1 - - -");
	free(got);
	/* brackets a million deep, never closed */
	memset(big, '(', n);
	got = range_of(big, n);
	assert_string_equal(got, "-1 - - -");
	free(got);
	/* NUL bytes, stray closers, lone backslashes */
	memset(big, 0, n);
	memcpy(big, ")\\\\\n'", 5);
	got = range_of(big, n);
	assert_string_equal(got, "-1 - - -");
	free(got);
	free(big);
	/* a hundred thousand assignments: only so many names are followed, the assert still reads */
	el_buf_adds(&b, "mmcv_maximum_version = '1.8.0'\nmmcv_version = digit_version(mmcv.__version__)\n");
	for (int i = 0; i < 100000; i++)
		el_buf_addf(&b, "v%d = '%d'\n", i, i);
	el_buf_adds(&b, "assert mmcv_version <= digit_version(mmcv_maximum_version)\n");
	got = range_of(b.data, b.len);
	assert_string_equal(got, "1 - 1.8.0 <=");
	free(got);
	el_buf_release(&b);
}

/* a failure in a staging place is said of the output the user named; any other message stays */
static void staged_errors_name_the_output(void **state)
{
	envlock_ctx *ctx;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	el_error_set(ctx, ENVLOCK_EIO, "'/d/kit.tar.zst.tmp-Ab12Cd/kit/envlock.lock': write failed: no space left on device");
	assert_int_equal(el_error_restate_staged(ctx, ENVLOCK_EIO, "/d/kit.tar.zst.tmp-Ab12Cd", "/d/kit.tar.zst"),
			 ENVLOCK_EIO);
	assert_string_equal(envlock_error_last(ctx),
			    "'/d/kit.tar.zst': staging kit/envlock.lock: write failed: no space left on device");
	el_error_set(ctx, ENVLOCK_EIO, "'/d/k.pub.pem.new': write failed: read-only file system");
	el_error_restate_staged(ctx, ENVLOCK_EIO, "/d/k.pub.pem.new", "/d/k.pub.pem");
	assert_string_equal(envlock_error_last(ctx), "'/d/k.pub.pem': write failed: read-only file system");
	/* a longer name that starts the same is another file; an input's error is the input's */
	el_error_set(ctx, ENVLOCK_EIO, "'/d/k.pub.pem.newer': gone");
	el_error_restate_staged(ctx, ENVLOCK_EIO, "/d/k.pub.pem.new", "/d/k.pub.pem");
	assert_string_equal(envlock_error_last(ctx), "'/d/k.pub.pem.newer': gone");
	el_error_set(ctx, ENVLOCK_EIO, "'wd/big.bin': permission denied");
	el_error_restate_staged(ctx, ENVLOCK_EIO, "/d/kit.tmp-x", "/d/kit");
	assert_string_equal(envlock_error_last(ctx), "'wd/big.bin': permission denied");
	envlock_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buf_cap_is_hard),
		cmocka_unit_test(buf_failure_is_sticky),
		cmocka_unit_test(buf_add_checks_once),
		cmocka_unit_test(buf_fits_holds_its_promise),
		cmocka_unit_test(buf_borrowed_memory),
		cmocka_unit_test(bigblocks_come_back),
		cmocka_unit_test(c_define_reads_only_real_macros),
		cmocka_unit_test(py_assign_and_headers),
		cmocka_unit_test(py_mmcv_range_of_openmmlab_files),
		cmocka_unit_test(py_mmcv_range_on_odd_input),
		cmocka_unit_test(json_writer_sorts_and_escapes),
		cmocka_unit_test(lock_id_ignores_created_and_id),
		cmocka_unit_test(canonical_text_is_the_writers),
		cmocka_unit_test(canonical_text_long_runs),
		cmocka_unit_test(lock_written_once),
		cmocka_unit_test(root_resolves_like_a_chroot),
		cmocka_unit_test(root_keeps_large_listings),
		cmocka_unit_test(atomic_write_keeps_old_file_on_failure),
		cmocka_unit_test(spawn_captures_and_times_out),
		cmocka_unit_test(spawn_in_tree_runs_there),
		cmocka_unit_test(spawn_timeout_ends_the_whole_group),
		cmocka_unit_test(hashcache_hits_and_survives_corruption),
		cmocka_unit_test(term_text_escapes_what_drives_a_terminal),
		cmocka_unit_test(json_for_a_terminal_escapes_c1_and_bidi),
		cmocka_unit_test(term_text_is_safe_for_every_short_string),
		cmocka_unit_test(term_text_respects_the_cap),
		cmocka_unit_test(jget_int_rejects_what_does_not_fit),
		cmocka_unit_test(staged_errors_name_the_output),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
