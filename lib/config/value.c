/*
 * Config values: Python's literals, lists, tuples and insertion-ordered
 * dicts with a hash index (so 10^5 keys stay linear), each counted
 * against the run's node limit, copies included, which bounds the work
 * any text can ask for. Containers are shared by reference, as Python
 * shares them, and freed by counting: no value may hold itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"
#include "lock/model.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"

cv *cv_new(el_cfg_run *r, cv_kind kind)
{
	cv *v = el_xcalloc(1, sizeof(*v));

	v->kind = kind;
	v->refs = 1;
	if (kind == CV_DICT)
		v->u.d = el_xcalloc(1, sizeof(cv_dict));
	if (kind == CV_LIST || kind == CV_TUPLE || kind == CV_DICT)
		v->depth = 1;
	if (++r->nodes > EL_CFG_MAX_NODES && !r->fatal)
		el_cfg_fail(r, ENVLOCK_ELIMIT, "more than %d values: evaluation stopped", EL_CFG_MAX_NODES);
	return v;
}

cv *cv_str(el_cfg_run *r, const char *s, size_t n)
{
	cv *v = cv_new(r, CV_STR);

	v->u.str.s = el_xstrndup(s, n);
	v->u.str.n = n;
	return v;
}

cv *cv_int(el_cfg_run *r, long long i)
{
	cv *v = cv_new(r, CV_INT);

	v->u.i = i;
	return v;
}

cv *cv_float(el_cfg_run *r, double f)
{
	cv *v = cv_new(r, CV_FLOAT);

	v->u.f = f;
	return v;
}

cv *cv_bool(el_cfg_run *r, bool b)
{
	cv *v = cv_new(r, CV_BOOL);

	v->u.b = b;
	return v;
}

cv *cv_unknown(el_cfg_run *r, const char *file, int line, const char *what)
{
	cv *v = cv_new(r, CV_UNKNOWN);

	v->file = el_xstrdup(file ? file : "");
	v->line = line;
	v->why = el_xstrdup(what);
	return v;
}

cv *cv_ref(cv *v)
{
	v->refs++;
	return v;
}

/* A value's own memory and the children it drops, pushed on todo. */
static void release_one(cv *v, cv ***todo, size_t *n, size_t *cap)
{
	size_t k = 0;
	cv **kids = NULL;

	switch (v->kind) {
	case CV_LIST:
	case CV_TUPLE:
		kids = v->u.seq.v;
		k = v->u.seq.n;
		break;
	case CV_DICT:
		kids = v->u.d->vals;
		k = v->u.d->n;
		for (size_t i = 0; i < v->u.d->n; i++)
			free(v->u.d->keys[i]);
		break;
	default:
		break;
	}
	for (size_t i = 0; i < k; i++) {
		if (!kids[i])
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*todo = el_xrealloc(*todo, *cap * sizeof(cv *));
		}
		(*todo)[(*n)++] = kids[i];
	}
	if (v->kind == CV_DICT) {
		free(v->u.d->keys);
		free(v->u.d->vals);
		free(v->u.d->index);
		free(v->u.d);
	} else if (v->kind == CV_LIST || v->kind == CV_TUPLE)
		free(v->u.seq.v);
	else if (v->kind == CV_STR || v->kind == CV_BASEREF || v->kind == CV_BIGINT)
		free(v->u.str.s);
	free(v->file);
	free(v->why);
}

/* Iterative, so a value nested however deep is freed without deep recursion. */
void cv_free(cv *v)
{
	cv **todo = NULL;
	size_t n = 0, cap = 0;

	if (!v || --v->refs > 0)
		return;
	release_one(v, &todo, &n, &cap);
	free(v);
	while (n) {
		cv *x = todo[--n];

		if (--x->refs > 0)
			continue;
		release_one(x, &todo, &n, &cap);
		free(x);
	}
	free(todo);
}

void cv_taint(cv *v, const char *file, int line, const char *what)
{
	cv **todo = NULL;
	size_t n = 0, cap = 0;

	if (v->kind == CV_UNKNOWN)
		return;
	release_one(v, &todo, &n, &cap);
	for (size_t i = 0; i < n; i++)
		cv_free(todo[i]);
	free(todo);
	memset(&v->u, 0, sizeof(v->u));
	v->kind = CV_UNKNOWN;
	v->cfgdict = false;
	v->depth = 0;
	v->file = el_xstrdup(file ? file : "");
	v->line = line;
	v->why = el_xstrdup(what);
}

/* Whether needle is inside hay (or is it), looking no deeper than the depth limit. */
static bool contains(const cv *hay, const cv *needle, int depth, bool *too_deep)
{
	if (hay == needle)
		return true;
	if (depth > EL_CFG_MAX_DEPTH) {
		*too_deep = true;
		return false;
	}
	if (hay->kind == CV_LIST || hay->kind == CV_TUPLE) {
		for (size_t i = 0; i < hay->u.seq.n; i++)
			if (contains(hay->u.seq.v[i], needle, depth + 1, too_deep) || *too_deep)
				return !*too_deep;
	} else if (hay->kind == CV_DICT) {
		for (size_t i = 0; i < hay->u.d->n; i++)
			if (contains(hay->u.d->vals[i], needle, depth + 1, too_deep) || *too_deep)
				return !*too_deep;
	}
	return false;
}

/* A limit met inside a value, said at the statement being run. */
static int value_fail(el_cfg_run *r, int code, const char *what)
{
	if (r->at_file)
		return el_cfg_fail(r, code, "%s:%d: %s", r->at_file, r->at_line, what);
	return el_cfg_fail(r, code, "%s", what);
}

/* Before parent holds child: never itself, never deeper than the limit. 0 or r->fatal. */
static int may_hold(el_cfg_run *r, cv *parent, const cv *child)
{
	bool too_deep = false;

	if (r->fatal)
		return r->fatal;
	if (child->kind == CV_LIST || child->kind == CV_TUPLE || child->kind == CV_DICT) {
		if (child->refs > 1 && contains(child, parent, 0, &too_deep))
			return value_fail(r, ENVLOCK_EPARSE, "a value that would hold itself");
		if (too_deep)
			return value_fail(r, ENVLOCK_ELIMIT, "a value nested deeper than 200 levels");
	}
	if (child->depth + 1 > parent->depth)
		parent->depth = child->depth + 1;
	if (parent->depth > EL_CFG_MAX_DEPTH)
		return value_fail(r, ENVLOCK_ELIMIT, "a value nested deeper than 200 levels");
	return 0;
}

int cv_seq_push(el_cfg_run *r, cv *seq, cv *item)
{
	if (may_hold(r, seq, item)) {
		cv_free(item);
		return r->fatal;
	}
	/* a place in a list counts as a value made: a + a, doubled 40 times, stops at the limit */
	if (++r->nodes > EL_CFG_MAX_NODES) {
		cv_free(item);
		return value_fail(r, ENVLOCK_ELIMIT, "more than 1000000 values: evaluation stopped");
	}
	if (seq->u.seq.n == seq->u.seq.cap) {
		seq->u.seq.cap = seq->u.seq.cap ? seq->u.seq.cap * 2 : 4;
		seq->u.seq.v = el_xrealloc(seq->u.seq.v, seq->u.seq.cap * sizeof(cv *));
	}
	seq->u.seq.v[seq->u.seq.n++] = item;
	return 0;
}

int cv_seq_set(el_cfg_run *r, cv *seq, size_t i, cv *item)
{
	if (may_hold(r, seq, item)) {
		cv_free(item);
		return r->fatal;
	}
	cv_free(seq->u.seq.v[i]);
	seq->u.seq.v[i] = item;
	return 0;
}

static uint32_t key_hash(const char *k)
{
	uint32_t h = 2166136261u;

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h;
}

static void index_rebuild(cv_dict *d)
{
	free(d->index);
	d->index_cap = 16;
	while (d->index_cap < d->n * 2 + 2)
		d->index_cap *= 2;
	d->index = el_xcalloc(d->index_cap, sizeof(uint32_t));
	for (size_t i = 0; i < d->n; i++) {
		size_t slot = key_hash(d->keys[i]) & (d->index_cap - 1);

		while (d->index[slot])
			slot = (slot + 1) & (d->index_cap - 1);
		d->index[slot] = (uint32_t)(i + 1);
	}
}

int cv_dict_find(const cv *dv, const char *key)
{
	const cv_dict *d = dv->u.d;

	if (d->n < 8 || !d->index) {
		for (size_t i = 0; i < d->n; i++)
			if (!strcmp(d->keys[i], key))
				return (int)i;
		return -1;
	}
	for (size_t slot = key_hash(key) & (d->index_cap - 1); d->index[slot];
	     slot = (slot + 1) & (d->index_cap - 1))
		if (!strcmp(d->keys[d->index[slot] - 1], key))
			return (int)d->index[slot] - 1;
	return -1;
}

cv *cv_dict_get(const cv *d, const char *key)
{
	int i = cv_dict_find(d, key);

	return i < 0 ? NULL : d->u.d->vals[i];
}

int cv_dict_set(el_cfg_run *r, cv *dv, const char *key, cv *val)
{
	cv_dict *d = dv->u.d;
	int i = cv_dict_find(dv, key);

	if (may_hold(r, dv, val)) {
		cv_free(val);
		return r->fatal;
	}
	if (i >= 0) {
		cv_free(d->vals[i]);
		d->vals[i] = val;
		return 0;
	}
	if (++r->nodes > EL_CFG_MAX_NODES) {
		cv_free(val);
		return value_fail(r, ENVLOCK_ELIMIT, "more than 1000000 values: evaluation stopped");
	}
	if (d->n >= EL_CFG_MAX_KEYS) {
		cv_free(val);
		return el_cfg_fail(r, ENVLOCK_ELIMIT, "a dict with more than %d keys", EL_CFG_MAX_KEYS);
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->keys = el_xrealloc(d->keys, d->cap * sizeof(char *));
		d->vals = el_xrealloc(d->vals, d->cap * sizeof(cv *));
	}
	d->keys[d->n] = el_xstrdup(key);
	d->vals[d->n] = val;
	d->n++;
	if (d->n >= 8) {
		if (d->index_cap < d->n * 2 + 2)
			index_rebuild(d);
		else {
			size_t slot = key_hash(key) & (d->index_cap - 1);

			while (d->index[slot])
				slot = (slot + 1) & (d->index_cap - 1);
			d->index[slot] = (uint32_t)d->n;
		}
	}
	return 0;
}

cv *cv_dict_pop(cv *dv, const char *key)
{
	cv_dict *d = dv->u.d;
	int i = cv_dict_find(dv, key);
	cv *val;

	if (i < 0)
		return NULL;
	val = d->vals[i];
	free(d->keys[i]);
	memmove(d->keys + i, d->keys + i + 1, (d->n - (size_t)i - 1) * sizeof(char *));
	memmove(d->vals + i, d->vals + i + 1, (d->n - (size_t)i - 1) * sizeof(cv *));
	d->n--;
	if (d->index)
		index_rebuild(d);
	return val;
}

static cv *copy_at(el_cfg_run *r, const cv *v, int depth)
{
	cv *c;

	if (r->fatal)
		return NULL;
	if (depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(r, ENVLOCK_ELIMIT, "a value nested deeper than %d levels", EL_CFG_MAX_DEPTH);
		return NULL;
	}
	c = cv_new(r, v->kind);
	c->cfgdict = v->cfgdict;
	c->line = v->line;
	switch (v->kind) {
	case CV_BOOL:
		c->u.b = v->u.b;
		break;
	case CV_INT:
		c->u.i = v->u.i;
		break;
	case CV_FLOAT:
		c->u.f = v->u.f;
		break;
	case CV_STR:
	case CV_BASEREF:
	case CV_BIGINT:
		c->u.str.s = el_xstrndup(v->u.str.s, v->u.str.n);
		c->u.str.n = v->u.str.n;
		if (v->file)
			c->file = el_xstrdup(v->file);
		break;
	case CV_UNKNOWN:
		c->file = el_xstrdup(v->file);
		c->why = el_xstrdup(v->why);
		break;
	case CV_LIST:
	case CV_TUPLE:
		for (size_t i = 0; i < v->u.seq.n && !r->fatal; i++) {
			cv *x = copy_at(r, v->u.seq.v[i], depth + 1);

			if (x)
				cv_seq_push(r, c, x);
		}
		break;
	case CV_DICT:
		for (size_t i = 0; i < v->u.d->n && !r->fatal; i++) {
			cv *x = copy_at(r, v->u.d->vals[i], depth + 1);

			if (x)
				cv_dict_set(r, c, v->u.d->keys[i], x);
		}
		break;
	default:
		break;
	}
	if (r->fatal) {
		cv_free(c);
		return NULL;
	}
	return c;
}

cv *cv_copy(el_cfg_run *r, const cv *v)
{
	return copy_at(r, v, 0);
}

cv *cv_shallow(el_cfg_run *r, const cv *v, cv_kind kind)
{
	cv *c = cv_new(r, kind);

	if (v->kind == CV_DICT && kind == CV_DICT) {
		c->cfgdict = v->cfgdict;
		for (size_t i = 0; i < v->u.d->n && !r->fatal; i++)
			cv_dict_set(r, c, v->u.d->keys[i], cv_ref(v->u.d->vals[i]));
	} else if (v->kind == CV_DICT) { /* list(d): its keys */
		for (size_t i = 0; i < v->u.d->n && !r->fatal; i++)
			cv_seq_push(r, c, cv_str(r, v->u.d->keys[i], strlen(v->u.d->keys[i])));
	} else if (v->kind == CV_LIST || v->kind == CV_TUPLE) {
		for (size_t i = 0; i < v->u.seq.n && !r->fatal; i++)
			cv_seq_push(r, c, cv_ref(v->u.seq.v[i]));
	}
	return c;
}

static cv *hook_at(el_cfg_run *r, cv *v, int depth)
{
	cv *c;

	if (r->fatal)
		return cv_ref(v);
	if (depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(r, ENVLOCK_ELIMIT, "a value nested deeper than %d levels", EL_CFG_MAX_DEPTH);
		return cv_ref(v);
	}
	if (v->kind == CV_DICT && !v->cfgdict) {
		c = cv_new(r, CV_DICT);
		c->cfgdict = true;
		for (size_t i = 0; i < v->u.d->n && !r->fatal; i++)
			cv_dict_set(r, c, v->u.d->keys[i], hook_at(r, v->u.d->vals[i], depth + 1));
		return c;
	}
	if (v->kind == CV_LIST || v->kind == CV_TUPLE) {
		c = cv_new(r, v->kind);
		for (size_t i = 0; i < v->u.seq.n && !r->fatal; i++)
			cv_seq_push(r, c, hook_at(r, v->u.seq.v[i], depth + 1));
		return c;
	}
	return cv_ref(v);
}

cv *cv_hook(el_cfg_run *r, cv *v)
{
	return hook_at(r, v, 0);
}

void cv_mark_cfgdict(cv *v)
{
	if (v->kind == CV_DICT) {
		v->cfgdict = true;
		for (size_t i = 0; i < v->u.d->n; i++)
			cv_mark_cfgdict(v->u.d->vals[i]);
	} else if (v->kind == CV_LIST || v->kind == CV_TUPLE) {
		for (size_t i = 0; i < v->u.seq.n; i++)
			cv_mark_cfgdict(v->u.seq.v[i]);
	}
}

static bool is_number(const cv *v)
{
	return v->kind == CV_INT || v->kind == CV_FLOAT || v->kind == CV_BOOL;
}

static double number_of(const cv *v)
{
	return v->kind == CV_FLOAT ? v->u.f : v->kind == CV_INT ? (double)v->u.i : v->u.b;
}

static int equal_at(const cv *a, const cv *b, int depth)
{
	int e;

	if (a->kind == CV_UNKNOWN || b->kind == CV_UNKNOWN || a->kind == CV_MODULE || b->kind == CV_MODULE ||
	    depth > EL_CFG_MAX_DEPTH)
		return -1;
	if (a == b)
		return 1;
	if (is_number(a) && is_number(b)) {
		if (a->kind != CV_FLOAT && b->kind != CV_FLOAT)
			return (a->kind == CV_INT ? a->u.i : a->u.b) == (b->kind == CV_INT ? b->u.i : b->u.b);
		return number_of(a) == number_of(b);
	}
	if (a->kind != b->kind)
		return (a->kind == CV_BIGINT || b->kind == CV_BIGINT) && (is_number(a) || is_number(b)) ? 0 : 0;
	switch (a->kind) {
	case CV_NONE:
		return 1;
	case CV_STR:
	case CV_BIGINT:
		return a->u.str.n == b->u.str.n && !memcmp(a->u.str.s, b->u.str.s, a->u.str.n);
	case CV_LIST:
	case CV_TUPLE:
		if (a->u.seq.n != b->u.seq.n)
			return 0;
		for (size_t i = 0; i < a->u.seq.n; i++)
			if ((e = equal_at(a->u.seq.v[i], b->u.seq.v[i], depth + 1)) != 1)
				return e;
		return 1;
	case CV_DICT:
		if (a->u.d->n != b->u.d->n)
			return 0;
		for (size_t i = 0; i < a->u.d->n; i++) {
			const cv *o = cv_dict_get(b, a->u.d->keys[i]);

			if (!o)
				return 0;
			if ((e = equal_at(a->u.d->vals[i], o, depth + 1)) != 1)
				return e;
		}
		return 1;
	default:
		return -1;
	}
}

int cv_equal(const cv *a, const cv *b)
{
	return equal_at(a, b, 0);
}

int cv_truthy(const cv *v)
{
	switch (v->kind) {
	case CV_NONE: return 0;
	case CV_BOOL: return v->u.b;
	case CV_INT: return v->u.i != 0;
	case CV_BIGINT: return 1;
	case CV_FLOAT: return v->u.f != 0;
	case CV_STR: return v->u.str.n != 0;
	case CV_LIST: case CV_TUPLE: return v->u.seq.n != 0;
	case CV_DICT: return v->u.d->n != 0;
	default: return -1;
	}
}

/* A note for a value left out at path, said once for each path and reason. */
static void note_left_out(el_cfg_run *r, const cv *v, const char *path)
{
	const char *what = v->kind == CV_UNKNOWN ? v->why
			   : v->kind == CV_BIGINT ? "an integer past 64 bits (a lock holds integers to 2^64)"
			   : v->line ? "a module (import), not a config value" : "an imported name";

	if (r->last_key && !strcmp(r->last_key, path) && !strcmp(r->last_what, what) && r->last_line == v->line)
		return;
	el_cfg_note(r, v->file ? v->file : "", v->line, path, what);
}

static cJSON *emit_at(el_cfg_run *r, const cv *v, const char *path, bool top, int depth)
{
	cJSON *j, *item;
	bool whole = true;

	if (depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(r, ENVLOCK_ELIMIT, "a value nested deeper than %d levels", EL_CFG_MAX_DEPTH);
		return NULL;
	}
	switch (v->kind) {
	case CV_NONE:
		return cJSON_CreateNull();
	case CV_BOOL:
		return cJSON_CreateBool(v->u.b);
	case CV_INT:
		/* past 2^53 as its digits: 2**60 + 1 is not 2**60 */
		return el_jnew_int(v->u.i);
	case CV_BIGINT:
		/* its digits, as the lock writer keeps an integer (el_jraw_int): within [-2^63, 2^64) */
		if (!el_json_int_text(v->u.str.s, v->u.str.n, NULL)) {
			note_left_out(r, v, path);
			return NULL;
		}
		j = cJSON_CreateRaw(v->u.str.s);
		if (j)
			j->valuedouble = strtod(v->u.str.s, NULL);
		return j;
	case CV_FLOAT:
		return cJSON_CreateNumber(v->u.f);
	case CV_STR:
		return cJSON_CreateString(v->u.str.s);
	case CV_LIST:
	case CV_TUPLE:
		/* a list missing an item would shift the rest: it is left out whole, its path named */
		j = cJSON_CreateArray();
		for (size_t i = 0; i < v->u.seq.n && !r->fatal; i++) {
			item = emit_at(r, v->u.seq.v[i], path, false, depth + 1);
			if (!item)
				whole = false;
			else
				cJSON_AddItemToArray(j, item);
		}
		if (whole && !r->fatal)
			return j;
		cJSON_Delete(j);
		return NULL;
	case CV_DICT:
		j = cJSON_CreateObject();
		for (size_t i = 0; i < v->u.d->n && !r->fatal; i++) {
			char *sub = path[0] ? el_xasprintf("%s.%s", path, v->u.d->keys[i]) : el_xstrdup(v->u.d->keys[i]);

			item = emit_at(r, v->u.d->vals[i], sub, top && depth == 0, depth + 1);
			free(sub);
			if (item)
				cJSON_AddItemToObject(j, v->u.d->keys[i], item);
		}
		if (r->fatal) {
			cJSON_Delete(j);
			return NULL;
		}
		return j;
	case CV_MODULE:
		/* a name from `from x import y` is left out silently (mmengine's imported names); a module
		 * bound by `import x`, or one put inside a value, is named */
		if (!top || v->line)
			note_left_out(r, v, path);
		return NULL;
	default:
		note_left_out(r, v, path);
		return NULL;
	}
}

cJSON *cv_emit(el_cfg_run *r, const cv *v, const char *path, bool top)
{
	return emit_at(r, v, path, top, 0);
}

const char *cv_kind_name(cv_kind k)
{
	static const char *const names[] = { "None", "bool", "int", "float", "str", "list", "tuple",
					     "dict", "value not evaluated", "module", "{{_base_}} placeholder", "int" };

	return names[k];
}
