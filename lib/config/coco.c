/*
 * The categories of a COCO annotation file, streamed. instances_train2017
 * is 448 MB with "categories" last; parsing it whole (as pycocotools
 * does) takes seconds and gigabytes. Here the top-level object is walked
 * key by key, every other value skipped by its brackets and strings in a
 * tight loop over 256 KiB reads, and only "categories" is kept and parsed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "facts.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/xalloc.h"

#define COCO_CHUNK (256u << 10)
#define COCO_MAX_CATEGORIES_TEXT (16u << 20)
#define COCO_MAX_KEY 64

typedef struct {
	int fd;               /* -1: data is all there is */
	const char *name;
	char *own;            /* the read buffer (fd >= 0) */
	const unsigned char *p, *end;
	int io_errno;
	el_buf *capture;      /* bytes of the value being skipped are kept here */
	bool over;            /* the capture hit its limit */
} coco_in;

static bool refill(coco_in *in)
{
	ssize_t n;

	if (in->fd < 0)
		return false;
	do
		n = read(in->fd, in->own, COCO_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		if (n < 0)
			in->io_errno = errno;
		return false;
	}
	in->p = (const unsigned char *)in->own;
	in->end = in->p + n;
	return true;
}

static int peek(coco_in *in)
{
	if (in->p == in->end && !refill(in))
		return -1;
	return *in->p;
}

static void keep(coco_in *in, const unsigned char *from, size_t n)
{
	if (in->capture && !in->over && el_buf_put(in->capture, from, n) != 0)
		in->over = true;
}

static int take(coco_in *in)
{
	int c = peek(in);

	if (c >= 0) {
		keep(in, in->p, 1);
		in->p++;
	}
	return c;
}

static int skip_ws(coco_in *in)
{
	int c;

	while ((c = peek(in)) == ' ' || c == '\n' || c == '\r' || c == '\t')
		in->p++;
	return c;
}

/* Read a string whose opening quote was taken; its first max bytes go to key. -1: not closed. */
static int string_body(coco_in *in, char *key, size_t max)
{
	size_t n = 0;

	for (;;) {
		int c = take(in);

		if (c < 0)
			return -1;
		if (c == '"')
			break;
		if (c == '\\') {
			if ((c = take(in)) < 0)
				return -1;
		} else if (c < 0x20) {
			return -1;
		}
		if (key && n + 1 < max)
			key[n++] = (char)c;
	}
	if (key)
		key[n] = '\0';
	return 0;
}

/* Skip one value; its bytes go to the capture when one is set. 0, or -1 when it is not JSON. */
static int skip_value(coco_in *in)
{
	int c = skip_ws(in), depth = 0;
	bool str = false, esc = false;

	if (c < 0)
		return -1;
	if (c == '"') {
		take(in);
		return string_body(in, NULL, 0);
	}
	if (c != '{' && c != '[') {
		/* a number, true, false or null: up to the next delimiter */
		size_t n = 0;

		while ((c = peek(in)) >= 0 && c != ',' && c != '}' && c != ']' && c != ' ' && c != '\n' &&
		       c != '\r' && c != '\t')
			take(in), n++;
		return n ? 0 : -1;
	}
	/* a container: brackets counted outside strings, one chunk at a time */
	for (;;) {
		const unsigned char *s, *e;

		if (peek(in) < 0)
			return -1;
		s = in->p;
		e = in->end;
		for (; s < e; s++) {
			unsigned char b = *s;

			if (str) {
				if (esc)
					esc = false;
				else if (b == '\\')
					esc = true;
				else if (b == '"')
					str = false;
			} else if (b == '"') {
				str = true;
			} else if (b == '{' || b == '[') {
				if (++depth > 10000)
					return -1;
			} else if (b == '}' || b == ']') {
				if (--depth == 0) {
					s++;
					break;
				}
			}
		}
		keep(in, in->p, (size_t)(s - in->p));
		in->p = s;
		if (depth == 0)
			return 0;
	}
}

static int fail(envlock_ctx *ctx, const coco_in *in, const char *what)
{
	if (in->io_errno)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", in->name, strerror(in->io_errno));
	return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not a COCO annotation file: %s", in->name, what);
}

static int from_text(envlock_ctx *ctx, const coco_in *in, const el_buf *text, long long *count, cJSON **names,
		     size_t max_names)
{
	cJSON *cats = cJSON_ParseWithLength(text->data, text->len);
	long long n = 0;

	if (!cJSON_IsArray(cats)) {
		cJSON_Delete(cats);
		return fail(ctx, in, "\"categories\" is not an array");
	}
	if (names)
		*names = cJSON_CreateArray();
	for (const cJSON *c = cats->child; c; c = c->next, n++) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");

		if (!cJSON_IsObject(c)) {
			cJSON_Delete(cats);
			if (names) {
				cJSON_Delete(*names);
				*names = NULL;
			}
			return fail(ctx, in, "a category is not an object");
		}
		if (names && (size_t)n < max_names)
			cJSON_AddItemToArray(*names, cJSON_CreateString(cJSON_IsString(name) ? name->valuestring : ""));
	}
	cJSON_Delete(cats);
	*count = n;
	return 0;
}

static int scan(envlock_ctx *ctx, coco_in *in, long long *count, cJSON **names, size_t max_names)
{
	el_buf text = EL_BUF_INIT(COCO_MAX_CATEGORIES_TEXT);
	char key[COCO_MAX_KEY];
	int c, rc;

	if (skip_ws(in) != '{')
		return fail(ctx, in, "not a JSON object");
	in->p++;
	if (skip_ws(in) == '}')
		return el_error_set(ctx, ENVLOCK_ENOTFOUND, "'%s': no \"categories\"", in->name);
	for (;;) {
		if (skip_ws(in) != '"')
			return fail(ctx, in, "a key is not a string");
		in->p++;
		if (string_body(in, key, sizeof(key)) != 0 || skip_ws(in) != ':')
			return fail(ctx, in, "a key is not followed by ':'");
		in->p++;
		if (!strcmp(key, "categories")) {
			in->capture = &text;
			rc = skip_value(in);
			in->capture = NULL;
			if (rc == 0 && in->over)
				rc = el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': \"categories\" is over %u MiB", in->name,
						  COCO_MAX_CATEGORIES_TEXT >> 20);
			else if (rc != 0)
				rc = fail(ctx, in, "\"categories\" does not end");
			else
				rc = from_text(ctx, in, &text, count, names, max_names);
			el_buf_release(&text);
			return rc;
		}
		if (skip_value(in) != 0)
			return fail(ctx, in, "a value does not end");
		c = skip_ws(in);
		if (c == ',') {
			in->p++;
			continue;
		}
		if (c == '}')
			return el_error_set(ctx, ENVLOCK_ENOTFOUND, "'%s': no \"categories\"", in->name);
		return fail(ctx, in, "values are not separated by ','");
	}
}

int el_coco_categories_mem(envlock_ctx *ctx, const char *name, const char *data, size_t len, long long *count,
			   cJSON **names, size_t max_names)
{
	coco_in in;

	memset(&in, 0, sizeof(in));
	in.fd = -1;
	in.name = name;
	in.p = (const unsigned char *)data;
	in.end = in.p + len;
	*count = 0;
	if (names)
		*names = NULL;
	return scan(ctx, &in, count, names, max_names);
}

int el_coco_categories(envlock_ctx *ctx, const char *path, long long *count, cJSON **names, size_t max_names)
{
	coco_in in;
	int rc;

	memset(&in, 0, sizeof(in));
	*count = 0;
	if (names)
		*names = NULL;
	in.name = path;
	in.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in.fd < 0)
		return el_error_set(ctx, errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO, "'%s': %s", path,
				    strerror(errno));
	if (posix_memalign((void **)&in.own, 4096, COCO_CHUNK) != 0) {
		close(in.fd);
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': out of memory", path);
	}
	in.p = in.end = (const unsigned char *)in.own;
	rc = scan(ctx, &in, count, names, max_names);
	free(in.own);
	close(in.fd);
	return rc;
}
