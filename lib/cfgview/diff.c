/* What changed between two effective configs, key path by key path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfgview.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

typedef struct {
	char op;           /* '~' changed, '+' added, '-' removed */
	char *path;        /* for a person: train_pipeline[2].scale */
	cJSON *keys;       /* the steps: key strings and list indexes */
	const cJSON *a, *b; /* the values (NULL on the side without the key), in the diff's copies */
} change;

typedef struct {
	const cJSON *note; /* {file, line, key, what} of the side it is from */
	char side;         /* 'a', 'b', or '=' for the same note on both */
} unknown;

struct envlock_config_diff {
	char *a_path, *b_path;
	cJSON *a, *b; /* copies of the two configs' documents */
	change *ch;
	size_t nch, chcap;
	unknown *un;
	size_t nun, uncap;
};

/* The walk: where it is (each step a key, or NULL for a list index, with the index). */
typedef struct {
	envlock_config_diff *d;
	const cJSON *a_notes, *b_notes;
	const char **steps;
	int *index;
	size_t n, cap, icap;
} walk;

static void push(walk *w, const char *key, int index)
{
	EL_GROW(w->steps, w->n + 1, w->cap);
	EL_GROW(w->index, w->n + 1, w->icap);
	w->steps[w->n] = key;
	w->index[w->n++] = index;
}

/* Does a note of notes cover where the walk is (the side without the key did not evaluate it)? */
static bool covered(const walk *w, const cJSON *notes)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, notes) {
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(n, "key");

		if (cJSON_IsString(key) && el_cfg_note_covers(key->valuestring, w->steps, w->n))
			return true;
	}
	return false;
}

static void record(walk *w, char op, const cJSON *a, const cJSON *b)
{
	el_buf path = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the configs' keys of one path, quoted");
	change *c;

	if ((op == '-' && covered(w, w->b_notes)) || (op == '+' && covered(w, w->a_notes)))
		return; /* not a removal or an addition: unknown, and listed as such */
	EL_GROW(w->d->ch, w->d->nch + 1, w->d->chcap);
	c = &w->d->ch[w->d->nch++];
	c->op = op;
	c->keys = cJSON_CreateArray();
	for (size_t i = 0; i < w->n; i++) {
		if (w->steps[i]) {
			el_cfg_path_key(&path, w->steps[i], i == 0);
			cJSON_AddItemToArray(c->keys, cJSON_CreateString(w->steps[i]));
		} else {
			el_cfg_path_index(&path, w->index[i]);
			cJSON_AddItemToArray(c->keys, cJSON_CreateNumber(w->index[i]));
		}
	}
	c->path = el_buf_detach(&path);
	c->a = a;
	c->b = b;
}

/* Are two values that are not both dicts, nor both lists, equal (as Python's == finds a config's values)? */
static bool same_value(const cJSON *a, const cJSON *b)
{
	const char *da = el_jraw_int(a), *db = el_jraw_int(b);

	if ((cJSON_IsNumber(a) || da) && (cJSON_IsNumber(b) || db))
		return da && db ? strcmp(da, db) == 0 : a->valuedouble == b->valuedouble;
	if ((a->type & 0xff) != (b->type & 0xff))
		return false;
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	return cJSON_IsBool(a) || cJSON_IsNull(a);
}

static int cmp_key(const void *x, const void *y)
{
	return strcmp((*(const cJSON *const *)x)->string, (*(const cJSON *const *)y)->string);
}

/* The members of an object sorted by key, to find each of the other side's in log time (a dict may have 200000). */
typedef struct {
	const cJSON **v;
	size_t n;
} index_t;

static void index_of(index_t *ix, const cJSON *obj)
{
	size_t cap = 0;

	ix->v = NULL;
	ix->n = 0;
	for (const cJSON *c = obj->child; c; c = c->next) {
		EL_GROW(ix->v, ix->n + 1, cap);
		ix->v[ix->n++] = c;
	}
	if (ix->n)
		qsort(ix->v, ix->n, sizeof(*ix->v), cmp_key);
}

static const cJSON *lookup(const index_t *ix, const char *key)
{
	cJSON probe, *pp = &probe;
	const cJSON **hit;

	if (!ix->n)
		return NULL;
	probe.string = (char *)key;
	hit = bsearch(&pp, ix->v, ix->n, sizeof(*ix->v), cmp_key);
	return hit ? *hit : NULL;
}

static void compare(walk *w, const cJSON *a, const cJSON *b)
{
	if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
		index_t ia, ib;

		index_of(&ia, a);
		index_of(&ib, b);
		for (const cJSON *c = a->child; c; c = c->next) {
			const cJSON *other = lookup(&ib, c->string);

			push(w, c->string, 0);
			if (other)
				compare(w, c, other);
			else
				record(w, '-', c, NULL);
			w->n--;
		}
		for (const cJSON *c = b->child; c; c = c->next)
			if (!lookup(&ia, c->string)) {
				push(w, c->string, 0);
				record(w, '+', NULL, c);
				w->n--;
			}
		free(ia.v);
		free(ib.v);
	} else if (cJSON_IsArray(a) && cJSON_IsArray(b)) {
		const cJSON *x = a->child, *y = b->child;

		for (int i = 0; x || y; i++) {
			push(w, NULL, i);
			if (x && y)
				compare(w, x, y);
			else
				record(w, x ? '-' : '+', x, y);
			w->n--;
			x = x ? x->next : NULL;
			y = y ? y->next : NULL;
		}
	} else if (!same_value(a, b)) {
		record(w, '~', a, b);
	}
}

static bool same_note(const cJSON *x, const cJSON *y)
{
	static const char *const fields[] = { "file", "line", "key", "what" };

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(x, fields[i]);
		const cJSON *q = cJSON_GetObjectItemCaseSensitive(y, fields[i]);

		if (!p || !q || !same_value(p, q))
			return false;
	}
	return true;
}

/* The notes of both sides: the same note on both once ('='), then a's own, then b's own. */
static void unknowns(envlock_config_diff *d, const cJSON *a_notes, const cJSON *b_notes)
{
	size_t nb = (size_t)cJSON_GetArraySize(b_notes), k = 0;
	bool *used = el_xcalloc(nb + 1, sizeof(bool));
	const cJSON *x, *y;

	cJSON_ArrayForEach(x, a_notes) {
		char side = 'a';

		k = 0;
		cJSON_ArrayForEach(y, b_notes) {
			if (!used[k] && same_note(x, y)) {
				used[k] = true;
				side = '=';
				break;
			}
			k++;
		}
		EL_GROW(d->un, d->nun + 1, d->uncap);
		d->un[d->nun++] = (unknown){ x, side };
	}
	k = 0;
	cJSON_ArrayForEach(y, b_notes) {
		if (!used[k++]) {
			EL_GROW(d->un, d->nun + 1, d->uncap);
			d->un[d->nun++] = (unknown){ y, 'b' };
		}
	}
	free(used);
}

int envlock_config_compare(envlock_config_diff **out, envlock_ctx *ctx, const envlock_config *a,
			   const envlock_config *b)
{
	envlock_config_diff *d = el_xcalloc(1, sizeof(*d));
	walk w;

	(void)ctx;
	d->a_path = el_xstrdup(a->shown);
	d->b_path = el_xstrdup(b->shown);
	if (!(d->a = cJSON_Duplicate(a->doc, 1)) || !(d->b = cJSON_Duplicate(b->doc, 1)))
		el_oom();
	memset(&w, 0, sizeof(w));
	w.d = d;
	w.a_notes = cJSON_GetObjectItemCaseSensitive(d->a, "not_evaluated");
	w.b_notes = cJSON_GetObjectItemCaseSensitive(d->b, "not_evaluated");
	compare(&w, cJSON_GetObjectItemCaseSensitive(d->a, "effective"), cJSON_GetObjectItemCaseSensitive(d->b, "effective"));
	unknowns(d, w.a_notes, w.b_notes);
	free(w.steps);
	free(w.index);
	*out = d;
	return 0;
}

/* Unknowns that count: a note on one side only. */
static size_t counted(const envlock_config_diff *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nun; i++)
		n += d->un[i].side != '=';
	return n;
}

int envlock_config_diff_same(const envlock_config_diff *d)
{
	return d->nch == 0 && counted(d) == 0;
}

/* Text, then atoms, each kept whole: wrapped at width before an atom that would pass it, 4 spaces in. */
static void put_atoms(FILE *out, const char *const *atoms, size_t n, int width)
{
	size_t col = 0;

	for (size_t i = 0; i < n; i++) {
		size_t w = el_term_width(atoms[i]);

		if (i && width > 0 && col + 1 + w > (size_t)width && col > 4) {
			fputs("\n    ", out);
			col = 4;
		} else if (i) {
			fputc(' ', out);
			col++;
		}
		fputs(atoms[i], out);
		col += w;
	}
	fputc('\n', out);
}

static void note_line(FILE *out, const unknown *u, int width)
{
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(u->note, "key");
	const cJSON *what = cJSON_GetObjectItemCaseSensitive(u->note, "what");
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a note's key path, message and place, escaped");
	el_buf w = EL_BUF_FITS(EL_BUF_JOIN_MAX, "that text with line breaks and indents");

	el_buf_adds(&b, "? ");
	if (cJSON_IsString(key) && key->valuestring[0])
		el_cfg_note_path(&b, key->valuestring);
	else
		el_buf_adds(&b, "(a statement with no key)");
	el_buf_addf(&b, ": not evaluated %s: ", u->side == '=' ? "on both sides" :
					       u->side == 'a' ? "in the old config" : "in the new config");
	el_term_text(&b, cJSON_IsString(what) ? what->valuestring : "?");
	el_buf_adds(&b, " (");
	el_cfg_note_where(&b, u->note);
	el_buf_addc(&b, ')');
	el_wrap(&w, el_buf_cstr(&b), width, 0, 4);
	fprintf(out, "%s\n", el_buf_cstr(&w));
	el_buf_release(&b);
	el_buf_release(&w);
}

int envlock_config_diff_print(const envlock_config_diff *d, envlock_ctx *ctx, FILE *out, unsigned flags)
{
	int width = ENVLOCK_PRINT_WIDTH_OF(flags);
	el_buf head = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the two paths, escaped, or a change's key path");
	el_buf va = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the repr of an old value, in memory");
	el_buf vb = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the repr of a new value, in memory");

	el_buf_adds(&head, "--- ");
	el_term_text(&head, d->a_path);
	el_buf_adds(&head, "\n+++ ");
	el_term_text(&head, d->b_path);
	fprintf(out, "%s\n", el_buf_cstr(&head));
	for (size_t i = 0; i < d->nch; i++) {
		const change *c = &d->ch[i];
		const char *atoms[3];
		size_t n = 0;

		el_buf_reset(&head);
		el_buf_reset(&va);
		el_buf_reset(&vb);
		el_buf_addf(&head, "%c %s:", c->op, c->path);
		atoms[n++] = el_buf_cstr(&head);
		if (c->a) {
			el_py_inline(&va, c->a);
			atoms[n++] = el_buf_cstr(&va);
		}
		if (c->b) {
			if (c->a)
				el_buf_adds(&vb, "-> ");
			el_py_inline(&vb, c->b);
			atoms[n++] = el_buf_cstr(&vb);
		}
		put_atoms(out, atoms, n, width);
	}
	for (size_t i = 0; i < d->nun; i++)
		note_line(out, &d->un[i], width);
	if (envlock_config_diff_same(d))
		fputs(d->nun ? "the same, but for what neither side evaluated\n" : "identical\n", out);
	el_buf_release(&head);
	el_buf_release(&va);
	el_buf_release(&vb);
	if (fflush(out) != 0 || ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "writing the differences failed");
	return 0;
}

int envlock_config_diff_print_json(const envlock_config_diff *d, envlock_ctx *ctx, FILE *out)
{
	static const char *const ops[] = { "changed", "added", "removed" };
	cJSON *doc = cJSON_CreateObject(), *changes, *notes;
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	int rc;

	el_jset_str(doc, "a", d->a_path);
	el_jset_str(doc, "b", d->b_path);
	el_jset_bool(doc, "identical", envlock_config_diff_same(d));
	changes = el_jset_arr(doc, "changes");
	for (size_t i = 0; i < d->nch; i++) {
		const change *c = &d->ch[i];
		cJSON *o = el_jpush_obj(changes);

		el_jset_str(o, "path", c->path);
		el_jset(o, "keys", cJSON_Duplicate(c->keys, 1));
		el_jset_str(o, "op", ops[c->op == '~' ? 0 : c->op == '+' ? 1 : 2]);
		if (c->a)
			el_jset(o, "a", cJSON_Duplicate(c->a, 1));
		if (c->b)
			el_jset(o, "b", cJSON_Duplicate(c->b, 1));
	}
	notes = el_jset_arr(doc, "not_evaluated");
	for (size_t i = 0; i < d->nun; i++) {
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(d->un[i].note, "key");
		cJSON *o = el_jpush_obj(notes);
		el_buf path = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a note's key path, quoted");

		el_cfg_note_path(&path, cJSON_IsString(key) ? key->valuestring : "");
		el_jset_str(o, "path", el_buf_cstr(&path));
		el_buf_release(&path);
		el_jset_str(o, "side", d->un[i].side == '=' ? "both" : d->un[i].side == 'a' ? "a" : "b");
		/* file, line, key (dotted, as the evaluator writes it) and what */
		for (const cJSON *f = d->un[i].note->child; f; f = f->next)
			el_jset(o, f->string, cJSON_Duplicate(f, 1));
	}
	rc = el_json_write_term(doc, &b, 2);
	cJSON_Delete(doc);
	if (rc == 0 && (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0))
		rc = ENVLOCK_EIO;
	el_buf_release(&b);
	if (rc == ENVLOCK_ELIMIT)
		return el_error_set(ctx, rc, "the differences' JSON is larger than 1 GiB");
	return rc ? el_error_set(ctx, ENVLOCK_EIO, "writing the differences failed") : 0;
}

void envlock_config_diff_free(envlock_config_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nch; i++) {
		free(d->ch[i].path);
		cJSON_Delete(d->ch[i].keys);
	}
	free(d->ch);
	free(d->un);
	cJSON_Delete(d->a);
	cJSON_Delete(d->b);
	free(d->a_path);
	free(d->b_path);
	free(d);
}
