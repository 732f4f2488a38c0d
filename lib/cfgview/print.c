/*
 * The effective config as Python, the way mmengine's Config.pretty_text
 * writes it before yapf: `key = value` lines, dict(a=1), lists, repr of
 * strings and floats; and each key that was not evaluated as a comment
 * where the key would be.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfgview.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define PY_WIDTH 79 /* --format py: PEP 8's line, whatever the terminal */

/* A note and the dict its comment goes in (the effective value itself for a top-level key). */
typedef struct {
	const cJSON *dict;
	size_t seq; /* the note's place in not_evaluated, to keep their order */
	const cJSON *note;
	char *key;  /* the key's last step */
} placed;

typedef struct {
	FILE *out;
	int width;     /* values longer than this break, an item a line; 0: never */
	bool wrap;     /* comments wrap at width */
	placed *at;    /* sorted by dict, then seq */
	size_t nat, atcap;
	const cJSON *mapping; /* the effective value, when it is written as one {...} mapping */
	const cJSON **holds; /* dicts that hold a comment, or hold one that does: never on one line; sorted */
	size_t nholds, holdscap;
	el_buf scratch;
} printer;

static int cmp_placed(const void *a, const void *b)
{
	const placed *x = a, *y = b;

	if ((uintptr_t)x->dict != (uintptr_t)y->dict)
		return (uintptr_t)x->dict < (uintptr_t)y->dict ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const cJSON *const *)a, y = (uintptr_t)*(const cJSON *const *)b;

	return x < y ? -1 : x > y;
}

static bool holds_comment(const printer *p, const cJSON *dict)
{
	return p->nholds && bsearch(&dict, p->holds, p->nholds, sizeof(*p->holds), cmp_ptr);
}

/*
 * Where note's comment goes: the dict its key's last step would be in,
 * reached through dicts only; NULL when the key is empty or leads
 * through a list, a value that is not a dict, or a key that is absent.
 */
static const cJSON *landing(printer *p, const cJSON *root, const char *key, char **last)
{
	const cJSON *d = root;
	const char *s = key;
	size_t first = p->nholds;

	*last = NULL;
	if (!*key)
		return NULL;
	for (;;) {
		size_t n = strcspn(s, ".");
		char *step = el_xstrndup(s, n);

		EL_GROW(p->holds, p->nholds + 1, p->holdscap);
		p->holds[p->nholds++] = d;
		if (!s[n]) {
			*last = step;
			return d;
		}
		d = cJSON_GetObjectItemCaseSensitive(d, step);
		free(step);
		if (!cJSON_IsObject(d)) {
			p->nholds = first;
			return NULL;
		}
		s += n + 1;
	}
}

/*
 * Comment lines at indent: "# " and hang more spaces, then text, wrapped
 * at the width when p->wrap, each line after the first two spaces further in.
 */
static void put_comment(printer *p, int indent, int hang, const char *text)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a comment's text with line breaks and indents");
	const char *s = NULL, *nl;
	int cont = indent + 2 + hang + 2;

	el_wrap(&b, text, p->wrap ? p->width : 0, indent + 2 + hang, cont);
	for (const char *line = el_buf_cstr(&b); line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		/* el_wrap starts each line after the first with cont spaces: the comment's own */
		s = line == el_buf_cstr(&b) ? line : line + cont;
		fprintf(p->out, "%*s#%*s%.*s\n", indent, "", (line == el_buf_cstr(&b) ? 1 + hang : 3 + hang), "",
			nl ? (int)(nl - s) : (int)strlen(s), s);
	}
	el_buf_release(&b);
}

/*
 * "KEY: not evaluated: WHAT (FILE:LINE)" for a comment where the key
 * would be; "PATH: WHAT (FILE:LINE)" under the heading at the top
 * (whole_path). Safe for a terminal and for a Python comment.
 */
static void note_text(el_buf *b, const char *key, const cJSON *note, bool whole_path)
{
	const cJSON *what = cJSON_GetObjectItemCaseSensitive(note, "what");

	if (whole_path)
		el_cfg_note_path(b, key);
	else
		el_cfg_path_key(b, key, true);
	if (b->len)
		el_buf_adds(b, ": ");
	if (!whole_path)
		el_buf_adds(b, "not evaluated: ");
	el_term_text(b, cJSON_IsString(what) ? what->valuestring : "?");
	el_buf_adds(b, " (");
	el_cfg_note_where(b, note);
	el_buf_addc(b, ')');
}

/* The comments for the notes that land in dict, at indent. */
static void put_notes(printer *p, const cJSON *dict, int indent)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a note's key, message and place, escaped");
	size_t lo = 0, hi = p->nat;

	/* the first of dict's, p->at being sorted by dict */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)p->at[mid].dict < (uintptr_t)dict)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < p->nat && p->at[lo].dict == dict; lo++) {
		el_buf_reset(&b);
		note_text(&b, p->at[lo].key, p->at[lo].note, false);
		put_comment(p, indent, 0, el_buf_cstr(&b));
	}
	el_buf_release(&b);
}

/* Columns of the text: code points (what a terminal shows of repr's output, which escapes the rest). */
static size_t columns(const char *s, size_t n)
{
	size_t cols = 0;

	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	return cols;
}

/* The columns v takes on one line, or more than budget (counting stops there). */
static size_t inline_len(printer *p, const cJSON *v, size_t budget)
{
	size_t n;
	bool kw;

	if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) {
		el_buf_reset(&p->scratch);
		el_py_scalar(&p->scratch, v);
		return columns(p->scratch.data, p->scratch.len);
	}
	if (cJSON_IsObject(v) && holds_comment(p, v))
		return budget + 1;
	kw = cJSON_IsObject(v) && el_py_keyword_form(v);
	n = cJSON_IsArray(v) ? 2 : kw ? 6 : 2; /* [] dict() {} */
	for (const cJSON *c = v->child; c && n <= budget; c = c->next) {
		if (c != v->child)
			n += 2;
		if (cJSON_IsObject(v)) {
			el_buf_reset(&p->scratch);
			if (kw)
				el_buf_adds(&p->scratch, c->string);
			else
				el_py_str(&p->scratch, c->string);
			n += columns(p->scratch.data, p->scratch.len) + (kw ? 1 : 2);
		}
		if (n <= budget)
			n += inline_len(p, c, budget - n);
	}
	return n;
}

static void put_scalar(printer *p, const cJSON *v)
{
	el_buf_reset(&p->scratch);
	el_py_scalar(&p->scratch, v);
	fwrite(p->scratch.data ? p->scratch.data : "", 1, p->scratch.len, p->out);
}

static void put_key(printer *p, const char *key, bool kw)
{
	if (kw) {
		fprintf(p->out, "%s=", key);
		return;
	}
	el_buf_reset(&p->scratch);
	el_py_str(&p->scratch, key);
	fwrite(p->scratch.data, 1, p->scratch.len, p->out);
	fputs(": ", p->out);
}

static void put_inline(printer *p, const cJSON *v)
{
	el_buf_reset(&p->scratch);
	el_py_inline(&p->scratch, v);
	fwrite(p->scratch.data ? p->scratch.data : "", 1, p->scratch.len, p->out);
}

/*
 * v, its first line starting at column col of a line indented by indent:
 * on one line when it fits the width (with the comma after it), else an
 * item a line, 4 more spaces in, the closing bracket on its own line.
 */
static void put_value(printer *p, const cJSON *v, size_t col, int indent)
{
	bool kw = cJSON_IsObject(v) && v != p->mapping && el_py_keyword_form(v);
	size_t room = p->width && (size_t)p->width > col + 1 ? (size_t)p->width - col - 1 : 0;

	if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) {
		put_scalar(p, v);
		return;
	}
	if (!(cJSON_IsObject(v) && holds_comment(p, v)) &&
	    (!v->child || inline_len(p, v, p->width ? room : SIZE_MAX - 1) <= (p->width ? room : SIZE_MAX - 1))) {
		put_inline(p, v);
		return;
	}
	fputs(cJSON_IsArray(v) ? "[\n" : kw ? "dict(\n" : "{\n", p->out);
	for (const cJSON *c = v->child; c; c = c->next) {
		size_t at = (size_t)indent + 4;

		fprintf(p->out, "%*s", indent + 4, "");
		if (cJSON_IsObject(v)) {
			el_buf_reset(&p->scratch);
			if (kw)
				el_buf_adds(&p->scratch, c->string);
			else
				el_py_str(&p->scratch, c->string);
			at += columns(p->scratch.data, p->scratch.len) + (kw ? 1 : 2);
			put_key(p, c->string, kw);
		}
		put_value(p, c, at, indent + 4);
		fputs(",\n", p->out);
	}
	if (cJSON_IsObject(v))
		put_notes(p, v, indent + 4);
	fprintf(p->out, "%*s%s", indent, "", cJSON_IsArray(v) ? "]" : kw ? ")" : "}");
}

/* The comments at the top: the notes with no place in the value. */
static void put_header(printer *p, const cJSON *unplaced)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a note's key path, message and place, escaped");
	const cJSON *n;

	if (cJSON_GetArraySize(unplaced))
		put_comment(p, 0, 0, "not evaluated, and left out of the value below:");
	cJSON_ArrayForEach(n, unplaced) {
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(n, "key");

		el_buf_reset(&b);
		note_text(&b, cJSON_IsString(key) ? key->valuestring : "", n, true);
		put_comment(p, 0, 2, el_buf_cstr(&b));
	}
	el_buf_release(&b);
}

static int print_python(const envlock_config *c, envlock_ctx *ctx, FILE *out, int width, bool wrap)
{
	const cJSON *root = cJSON_GetObjectItemCaseSensitive(c->doc, "effective");
	const cJSON *notes = cJSON_GetObjectItemCaseSensitive(c->doc, "not_evaluated"), *n;
	cJSON *unplaced = cJSON_CreateArray();
	printer p;
	size_t seq = 0;

	memset(&p, 0, sizeof(p));
	p.out = out;
	p.width = width;
	p.wrap = wrap;
	el_buf_init_fits(&p.scratch, EL_BUF_JOIN_MAX, "the repr of a key or a value of the effective config, in memory");
	cJSON_ArrayForEach(n, notes) {
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(n, "key");
		char *last;
		const cJSON *d = landing(&p, root, cJSON_IsString(key) ? key->valuestring : "", &last);

		if (d) {
			EL_GROW(p.at, p.nat + 1, p.atcap);
			p.at[p.nat++] = (placed){ d, seq, n, last };
		} else {
			cJSON_AddItemReferenceToArray(unplaced, (cJSON *)n);
		}
		seq++;
	}
	if (p.nat)
		qsort(p.at, p.nat, sizeof(*p.at), cmp_placed);
	if (p.nholds)
		qsort(p.holds, p.nholds, sizeof(*p.holds), cmp_ptr);
	put_header(&p, unplaced);
	/* a top-level `dict = ...` would hide the builtin from the lines after it */
	if (cJSON_IsObject(root) && el_py_keyword_form(root) && !cJSON_GetObjectItemCaseSensitive(root, "dict")) {
		for (const cJSON *k = root->child; k; k = k->next) {
			fprintf(out, "%s = ", k->string);
			put_value(&p, k, strlen(k->string) + 3, 0);
			fputc('\n', out);
		}
		put_notes(&p, root, 0);
	} else if (cJSON_IsObject(root)) {
		/* a top-level key no assignment can make (--cfg-options 'a-b=1'), or dict: one mapping, as mmengine writes it */
		p.mapping = root;
		EL_GROW(p.holds, p.nholds + 1, p.holdscap);
		p.holds[p.nholds++] = root;
		qsort(p.holds, p.nholds, sizeof(*p.holds), cmp_ptr);
		put_value(&p, root, 0, 0);
		fputc('\n', out);
	}
	for (size_t i = 0; i < p.nat; i++)
		free(p.at[i].key);
	free(p.at);
	free(p.holds);
	el_buf_release(&p.scratch);
	cJSON_Delete(unplaced);
	if (fflush(out) != 0 || ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "writing the config failed");
	return 0;
}

int envlock_config_print(const envlock_config *c, envlock_ctx *ctx, FILE *out, unsigned flags)
{
	return print_python(c, ctx, out, ENVLOCK_PRINT_WIDTH_OF(flags), true);
}

int envlock_config_print_py(const envlock_config *c, envlock_ctx *ctx, FILE *out)
{
	return print_python(c, ctx, out, PY_WIDTH, false);
}

int envlock_config_print_json(const envlock_config *c, envlock_ctx *ctx, FILE *out)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	int rc = el_json_write_term(c->doc, &b, 2);

	if (rc == 0 && (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0))
		rc = ENVLOCK_EIO;
	el_buf_release(&b);
	if (rc == ENVLOCK_ELIMIT)
		return el_error_set(ctx, rc, "the config's JSON is larger than 1 GiB");
	return rc ? el_error_set(ctx, ENVLOCK_EIO, "writing the config failed") : 0;
}
