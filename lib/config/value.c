/*
 * Config values: Python's literals, lists, tuples and insertion-ordered
 * dicts with a hash index (so 10^5 keys stay linear), each counted
 * against the run's node limit, copies included, which bounds the work
 * any text can ask for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"
#include "lock/model.h"
#include "util/xalloc.h"

cv *cv_new(el_cfg_run *r, cv_kind kind)
{
	cv *v = el_xcalloc(1, sizeof(*v));

	v->kind = kind;
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

static void dict_free(cv_dict *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->keys[i]);
		cv_free(d->vals[i]);
	}
	free(d->keys);
	free(d->vals);
	free(d->index);
	free(d);
}

void cv_free(cv *v)
{
	if (!v)
		return;
	switch (v->kind) {
	case CV_STR:
	case CV_BASEREF:
		free(v->u.str.s);
		break;
	case CV_LIST:
	case CV_TUPLE:
		for (size_t i = 0; i < v->u.seq.n; i++)
			cv_free(v->u.seq.v[i]);
		free(v->u.seq.v);
		break;
	case CV_DICT:
		dict_free(v->u.d);
		break;
	default:
		break;
	}
	free(v);
}

static void grow_depth(el_cfg_run *r, cv *parent, const cv *child)
{
	if (child->depth + 1 > parent->depth)
		parent->depth = child->depth + 1;
	if (parent->depth > EL_CFG_MAX_DEPTH && !r->fatal)
		el_cfg_fail(r, ENVLOCK_ELIMIT, "a value nested deeper than %d levels", EL_CFG_MAX_DEPTH);
}

int cv_seq_push(el_cfg_run *r, cv *seq, cv *item)
{
	if (seq->u.seq.n == seq->u.seq.cap) {
		seq->u.seq.cap = seq->u.seq.cap ? seq->u.seq.cap * 2 : 4;
		seq->u.seq.v = el_xrealloc(seq->u.seq.v, seq->u.seq.cap * sizeof(cv *));
	}
	seq->u.seq.v[seq->u.seq.n++] = item;
	grow_depth(r, seq, item);
	return r->fatal;
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

	if (d->n < 8) {
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

	if (i >= 0) {
		cv_free(d->vals[i]);
		d->vals[i] = val;
		grow_depth(r, dv, val);
		return r->fatal;
	}
	if (d->n >= EL_CFG_MAX_KEYS) {
		cv_free(val);
		return r->fatal ? r->fatal
				: el_cfg_fail(r, ENVLOCK_ELIMIT, "a dict with more than %d keys", EL_CFG_MAX_KEYS);
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
	grow_depth(r, dv, val);
	return r->fatal;
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

cv *cv_copy(el_cfg_run *r, const cv *v)
{
	cv *c;

	if (r->fatal)
		return cv_new(r, CV_NONE);
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
		c->u.str.s = el_xstrndup(v->u.str.s, v->u.str.n);
		c->u.str.n = v->u.str.n;
		break;
	case CV_LIST:
	case CV_TUPLE:
		for (size_t i = 0; i < v->u.seq.n && !r->fatal; i++)
			cv_seq_push(r, c, cv_copy(r, v->u.seq.v[i]));
		break;
	case CV_DICT:
		for (size_t i = 0; i < v->u.d->n && !r->fatal; i++)
			cv_dict_set(r, c, v->u.d->keys[i], cv_copy(r, v->u.d->vals[i]));
		break;
	default:
		break;
	}
	return c;
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

cJSON *cv_to_json(const cv *v)
{
	cJSON *j, *item;

	switch (v->kind) {
	case CV_NONE:
		return cJSON_CreateNull();
	case CV_BOOL:
		return cJSON_CreateBool(v->u.b);
	case CV_INT:
		/* past 2^53 as its digits: a seed of 2**60 + 1 is not 2**60 */
		return el_jnew_int(v->u.i);
	case CV_FLOAT:
		return cJSON_CreateNumber(v->u.f);
	case CV_STR:
		return cJSON_CreateString(v->u.str.s);
	case CV_LIST:
	case CV_TUPLE:
		j = cJSON_CreateArray();
		for (size_t i = 0; i < v->u.seq.n; i++) {
			item = cv_to_json(v->u.seq.v[i]);
			/* a list keeps its positions: an element not evaluated is null there */
			cJSON_AddItemToArray(j, item ? item : cJSON_CreateNull());
		}
		return j;
	case CV_DICT:
		j = cJSON_CreateObject();
		for (size_t i = 0; i < v->u.d->n; i++) {
			item = cv_to_json(v->u.d->vals[i]);
			if (item)
				cJSON_AddItemToObject(j, v->u.d->keys[i], item);
		}
		return j;
	default:
		return NULL;
	}
}

const char *cv_kind_name(cv_kind k)
{
	static const char *const names[] = { "None", "bool", "int", "float", "str", "list", "tuple",
					     "dict", "value not evaluated", "module", "{{_base_}} placeholder" };

	return names[k];
}
