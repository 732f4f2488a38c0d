/*
 * JSON Schema validation for the keywords envlock's schemas use (schema.h):
 * the reference that tools/schema-gen.py transcribes into the lockfile
 * validator envlock runs, kept with the tests that compare the two.
 * A schema is compiled once into nodes (keywords looked up, $refs
 * resolved, properties sorted, patterns compiled), so validating a lock
 * of thousands of packages costs little more than walking it; the path
 * to the field is kept as a stack and written out only for the error.
 */
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "lock/schema_rt.h"
#include "schema.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

/* how a pattern is matched: the forms the schemas use in C, anything else by regexec */
enum { P_NONE, P_REGEX, P_NOSPACE, P_ABSOLUTE, P_HEX32, P_HEX64, P_SHA256_ID, P_DIGITS, P_DOTTED, P_COMMIT };

typedef struct snode snode;

typedef struct {
	const char *name;
	snode *schema;
	int required; /* 1 + its bit in a mask of the required members seen, when "required" names it */
	int id;       /* the name's place in the schema's sorted list of names (snames) */
} sprop;

/*
 * Every property name of a schema, sorted, and a hash table over them: a
 * member's name is looked up once per object, and each subschema applied
 * to that object (allOf, if/then, $ref) finds its properties by number.
 */
typedef struct {
	const char **names;
	size_t n;
	const unsigned *slots; /* 1 + a name's id, 0 for an empty slot */
	size_t nslots;         /* a power of two */
} snames;

struct snode {
	const cJSON *json;
	int is_bool, bool_value;
	unsigned types;      /* 0: any type */
	const cJSON *type_kw; /* for the message */
	const cJSON *const_v, *enum_v, *required, *dep_required;
	snode *ref, *not_, *if_, *then_, *else_, *addl, *uneval, *prop_names, *items;
	snode **all_of, **any_of, **one_of;
	size_t n_all_of, n_any_of, n_one_of;
	sprop *props;
	size_t nprops;
	uint64_t *declared;    /* a bit per id of snames: the names props holds, so a member it lacks costs a test */
	size_t nrequired;      /* names in "required" */
	int required_in_props; /* every one of them is in props (at most 64): seen while walking the members */
	uint64_t required_mask; /* the bits of the required props */
	int addl_false, uneval_false, unique;
	int has_max_props, has_min_items, has_max_items, has_minimum, has_maximum, has_min_len, has_max_len;
	double max_props, min_items, max_items, minimum, maximum, min_len, max_len;
	const char *pattern;
	int pat_kind;
	int pat_min, pat_max; /* P_DOTTED: how many dot-separated numbers */
	regex_t re;
	const char **enum_strs; /* an enum of strings only, compared as strings (cJSON_Compare is slower) */
	size_t n_enum_strs;
	int needs_eval; /* -1 unknown; 1: it or an in-place subschema has unevaluatedProperties */
	unsigned has;   /* HAS_*: the groups of keywords it has, so a value skips the groups it lacks at once */
};

enum { HAS_VALUE = 1, HAS_INPLACE = 2, HAS_OBJECT = 4, HAS_ARRAY = 8, HAS_SCALAR = 16 };

typedef struct {
	const cJSON *json;
	snode *node;
} memo_entry;

/* A compiled schema: every node, and the memo from schema objects to nodes ($refs and cycles). */
typedef struct {
	memo_entry *memo;
	size_t nmemo, capmemo;
	size_t *table; /* 1 + the index of an entry in memo, 0 for an empty slot */
	size_t captable;
	const char *error; /* a problem with the schema itself */
	const cJSON *root;
	const char **names; /* every property name, as met */
	size_t nnames, capnames;
} compiler;

/* The ids of an object's member names, in member order, for the object now at one depth. */
typedef struct {
	const cJSON *x;
	int *ids; /* -1: a name no subschema declares; ID_UNKNOWN: not looked up yet */
	size_t cap;
} idlist;

#define ID_UNKNOWN (-2)

typedef struct {
	el_sv sv; /* the path and the error (schema_rt.h) */
	const snames *names;
	idlist *ids; /* one per depth, grown as the walk goes deeper */
	size_t nids;
} vctx;

typedef el_sv_evaluated evaluated;

#define EVALUATED_INIT EL_SV_EVALUATED_INIT
#define eval_release el_sv_eval_release
#define eval_add el_sv_eval_add
#define eval_has el_sv_eval_has
#define esc el_sv_esc
#define utf8_length el_sv_utf8_length
#define type_name el_sv_type_name
#define type_of el_sv_type_of
#define has_duplicate el_sv_has_duplicate
#define fail(v, ...) el_sv_fail(&(v)->sv, __VA_ARGS__)
#define push(v, name, index) el_sv_push(&(v)->sv, name, index)
#define pop(v) el_sv_pop(&(v)->sv)

/* keywords that only annotate: ignored (the ones that validate are gather()'s table) */
static const char *const annotations[] = {
	"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "format", NULL
};

static int is_annotation(const char *k)
{
	for (const char *const *a = annotations; *a; a++)
		if (**a == *k && strcmp(*a, k) == 0)
			return 1;
	return 0;
}

/* ---- compiling ------------------------------------------------------------ */

static snode *compile(compiler *c, const cJSON *s);

static const cJSON *resolve_ref(const cJSON *root, const char *ref)
{
	const cJSON *node = root;
	char part[256];

	if (strncmp(ref, "#/", 2) != 0)
		return NULL;
	for (const char *p = ref + 2; *p;) {
		size_t n = strcspn(p, "/");

		if (n >= sizeof(part))
			return NULL;
		memcpy(part, p, n);
		part[n] = '\0';
		node = cJSON_GetObjectItemCaseSensitive(node, part);
		if (!node)
			return NULL;
		p += n + (p[n] == '/');
	}
	return node;
}

static unsigned type_bit(const char *t)
{
	static const struct {
		const char *name;
		unsigned bit;
	} types[] = { { "string", T_STRING }, { "integer", T_INTEGER }, { "number", T_NUMBER }, { "object", T_OBJECT },
		      { "array", T_ARRAY }, { "boolean", T_BOOLEAN }, { "null", T_NULL } };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i].name, t) == 0)
			return types[i].bit;
	return 0;
}

static snode **compile_list(compiler *c, const cJSON *arr, size_t *n)
{
	snode **out;
	const cJSON *e;
	size_t i = 0;

	*n = (size_t)cJSON_GetArraySize(arr);
	out = el_xcalloc(*n ? *n : 1, sizeof(*out));
	cJSON_ArrayForEach(e, arr) out[i++] = compile(c, e);
	return out;
}

static int cmp_prop(const void *a, const void *b)
{
	return strcmp(((const sprop *)a)->name, ((const sprop *)b)->name);
}

/*
 * The pattern forms the schemas use, matched without a regular expression
 * (regcomp of one costs more than checking a lock's every value of that form).
 */
static int pattern_kind(const char *p, int *min, int *max)
{
	static const struct {
		const char *pattern;
		int kind, min, max;
	} known[] = {
		{ "^\\S+$", P_NOSPACE, 0, 0 },
		{ "^/", P_ABSOLUTE, 0, 0 },
		{ "^[0-9a-f]{32}$", P_HEX32, 0, 0 },
		{ "^[0-9a-f]{64}$", P_HEX64, 0, 0 },
		{ "^sha256:[0-9a-f]{64}$", P_SHA256_ID, 0, 0 },
		{ "^[0-9]+$", P_DIGITS, 0, 0 },
		{ "^[0-9]+(\\.[0-9]+)?$", P_DOTTED, 1, 2 },
		{ "^[0-9]+\\.[0-9]+$", P_DOTTED, 2, 2 },
		{ "^[0-9]+(\\.[0-9]+){1,2}$", P_DOTTED, 2, 3 },
		{ "^[0-9]+\\.[0-9]+\\.[0-9]+$", P_DOTTED, 3, 3 },
		{ "^[0-9a-f]{40}([0-9a-f]{24})?$", P_COMMIT, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(known[i].pattern, p) == 0) {
			*min = known[i].min;
			*max = known[i].max;
			return known[i].kind;
		}
	return P_REGEX;
}

static double number_kw(const cJSON *k, int *has)
{
	*has = cJSON_IsNumber(k);
	return *has ? k->valuedouble : 0;
}

/* A schema object's keywords, gathered in one pass over its members. */
typedef struct {
	const cJSON *type, *const_v, *enum_v, *required, *dep_required, *ref, *all_of, *any_of, *one_of, *not_,
		*if_, *then_, *else_, *properties, *addl, *uneval, *prop_names, *items, *unique, *max_props,
		*min_items, *max_items, *minimum, *maximum, *min_len, *max_len, *pattern;
} keywords_of;

static void gather(compiler *c, const cJSON *s, keywords_of *kw)
{
	static const struct {
		const char *name;
		size_t offset;
	} table[] = {
#define KW(name, field) { name, offsetof(keywords_of, field) }
		KW("type", type), KW("const", const_v), KW("enum", enum_v), KW("required", required),
		KW("dependentRequired", dep_required), KW("$ref", ref), KW("allOf", all_of), KW("anyOf", any_of),
		KW("oneOf", one_of), KW("not", not_), KW("if", if_), KW("then", then_), KW("else", else_),
		KW("properties", properties), KW("additionalProperties", addl), KW("unevaluatedProperties", uneval),
		KW("propertyNames", prop_names), KW("items", items), KW("uniqueItems", unique),
		KW("maxProperties", max_props), KW("minItems", min_items), KW("maxItems", max_items),
		KW("minimum", minimum), KW("maximum", maximum), KW("minLength", min_len), KW("maxLength", max_len),
		KW("pattern", pattern),
#undef KW
	};
	const cJSON *m;

	memset(kw, 0, sizeof(*kw));
	cJSON_ArrayForEach(m, s) {
		size_t i;

		/* the first letter first: this runs on every member of a 52 KB schema at start-up */
		for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			if (table[i].name[0] == m->string[0] && strcmp(table[i].name, m->string) == 0) {
				*(const cJSON **)((char *)kw + table[i].offset) = m;
				break;
			}
		if (i == sizeof(table) / sizeof(table[0]) && !is_annotation(m->string) && !c->error)
			c->error = m->string; /* a keyword envlock does not implement */
	}
}

/* s holds nothing but a $ref (and annotations): its target stands for it. */
static int only_ref(const cJSON *s)
{
	const cJSON *k;
	int ref = 0;

	cJSON_ArrayForEach(k, s) {
		if (strcmp(k->string, "$ref") == 0)
			ref = 1;
		else if (!(strcmp(k->string, "description") == 0 || strcmp(k->string, "title") == 0 ||
			   strcmp(k->string, "$comment") == 0))
			return 0;
	}
	return ref;
}

/* The memo is a list of every entry and an open-addressing table over it, by the schema object's address. */
static size_t memo_slot(const compiler *c, const cJSON *s)
{
	uintptr_t h = (uintptr_t)s;

	h ^= h >> 17;
	h *= (uintptr_t)0x9e3779b97f4a7c15u;
	return (size_t)(h >> 7) & (c->captable - 1);
}

static snode *memo_find(const compiler *c, const cJSON *s)
{
	if (!c->captable)
		return NULL;
	for (size_t i = memo_slot(c, s);; i = (i + 1) & (c->captable - 1)) {
		if (!c->table[i])
			return NULL;
		if (c->memo[c->table[i] - 1].json == s)
			return c->memo[c->table[i] - 1].node;
	}
}

static void memo_add(compiler *c, const cJSON *s, snode *n)
{
	if (c->nmemo == c->capmemo) {
		c->capmemo = c->capmemo ? c->capmemo * 2 : 256;
		c->memo = el_xrealloc(c->memo, c->capmemo * sizeof(*c->memo));
	}
	c->memo[c->nmemo++] = (memo_entry){ s, n };
	if (c->nmemo * 2 > c->captable) {
		/* grow to 4 times the entries and put every entry back */
		free(c->table);
		c->captable = c->captable ? c->captable * 4 : 1024;
		c->table = el_xcalloc(c->captable, sizeof(*c->table));
		for (size_t e = 0; e < c->nmemo; e++) {
			size_t i = memo_slot(c, c->memo[e].json);

			while (c->table[i])
				i = (i + 1) & (c->captable - 1);
			c->table[i] = e + 1;
		}
		return;
	}
	{
		size_t i = memo_slot(c, s);

		while (c->table[i])
			i = (i + 1) & (c->captable - 1);
		c->table[i] = c->nmemo;
	}
}

static void name_add(compiler *c, const char *name)
{
	if (c->nnames == c->capnames) {
		c->capnames = c->capnames ? c->capnames * 2 : 256;
		c->names = el_xrealloc(c->names, c->capnames * sizeof(*c->names));
	}
	c->names[c->nnames++] = name;
}

static snode *compile(compiler *c, const cJSON *s)
{
	snode *n;
	const cJSON *k;
	keywords_of kw;

	if ((n = memo_find(c, s)))
		return n;
	/* a node that holds nothing but a $ref is not a step: its (final) target's node stands for it */
	if (cJSON_IsObject(s) && only_ref(s)) {
		const cJSON *target = s;

		for (int hops = 0; target && only_ref(target); hops++) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(target, "$ref");

			target = hops < 32 && cJSON_IsString(r) ? resolve_ref(c->root, r->valuestring) : NULL;
		}
		if (!target) {
			c->error = "a $ref it cannot resolve (or a cycle of them)";
		} else {
			n = compile(c, target);
			memo_add(c, s, n);
			return n;
		}
	}
	n = el_xcalloc(1, sizeof(*n));
	n->json = s;
	n->needs_eval = -1;
	memo_add(c, s, n);
	if (cJSON_IsBool(s)) {
		n->is_bool = 1;
		n->bool_value = cJSON_IsTrue(s);
		return n;
	}
	if (!cJSON_IsObject(s)) {
		c->error = "a subschema that is not an object";
		return n;
	}
	gather(c, s, &kw);
	if ((n->type_kw = kw.type)) {
		if (cJSON_IsString(n->type_kw)) {
			n->types = type_bit(n->type_kw->valuestring);
		} else {
			cJSON_ArrayForEach(k, n->type_kw) n->types |= cJSON_IsString(k) ? type_bit(k->valuestring) : 0;
		}
	}
	n->const_v = kw.const_v;
	n->enum_v = kw.enum_v;
	if (cJSON_IsArray(n->enum_v)) {
		size_t i = 0, all = (size_t)cJSON_GetArraySize(n->enum_v);

		n->enum_strs = el_xcalloc(all ? all : 1, sizeof(*n->enum_strs));
		cJSON_ArrayForEach(k, n->enum_v) {
			if (!cJSON_IsString(k))
				break;
			n->enum_strs[i++] = k->valuestring;
		}
		if (i == all) {
			n->n_enum_strs = all;
		} else {
			free(n->enum_strs);
			n->enum_strs = NULL;
		}
	}
	n->required = kw.required;
	n->dep_required = kw.dep_required;
	if ((k = kw.ref)) {
		const cJSON *target = cJSON_IsString(k) ? resolve_ref(c->root, k->valuestring) : NULL;

		if (!target)
			c->error = "a $ref it cannot resolve";
		else
			n->ref = compile(c, target);
	}
	if (kw.all_of)
		n->all_of = compile_list(c, kw.all_of, &n->n_all_of);
	if (kw.any_of)
		n->any_of = compile_list(c, kw.any_of, &n->n_any_of);
	if (kw.one_of)
		n->one_of = compile_list(c, kw.one_of, &n->n_one_of);
	if (kw.not_)
		n->not_ = compile(c, kw.not_);
	if (kw.if_) {
		n->if_ = compile(c, kw.if_);
		n->then_ = kw.then_ ? compile(c, kw.then_) : NULL;
		n->else_ = kw.else_ ? compile(c, kw.else_) : NULL;
	}
	if ((k = kw.properties)) {
		const cJSON *p;
		size_t i = 0;

		n->nprops = (size_t)cJSON_GetArraySize(k);
		n->props = el_xcalloc(n->nprops ? n->nprops : 1, sizeof(*n->props));
		cJSON_ArrayForEach(p, k) {
			n->props[i++] = (sprop){ p->string, compile(c, p), 0, -1 };
			name_add(c, p->string);
		}
		qsort(n->props, n->nprops, sizeof(*n->props), cmp_prop);
	}
	n->nrequired = (size_t)cJSON_GetArraySize(n->required);
	n->required_in_props = n->nrequired > 0 && n->nprops <= 64;
	cJSON_ArrayForEach(k, n->required) {
		sprop key = { cJSON_IsString(k) ? k->valuestring : "", NULL, 0, -1 };
		sprop *hit = n->nprops ? bsearch(&key, n->props, n->nprops, sizeof(*n->props), cmp_prop) : NULL;

		if (hit && !hit->required)
			hit->required = 1 + (int)(hit - n->props);
		else
			n->required_in_props = 0;
	}
	for (size_t i = 0; n->required_in_props && i < n->nprops; i++)
		if (n->props[i].required)
			n->required_mask |= (uint64_t)1 << (n->props[i].required - 1);
	if ((k = kw.addl)) {
		n->addl_false = cJSON_IsFalse(k);
		n->addl = compile(c, k);
	}
	if ((k = kw.uneval)) {
		n->uneval_false = cJSON_IsFalse(k);
		n->uneval = compile(c, k);
	}
	if (kw.prop_names)
		n->prop_names = compile(c, kw.prop_names);
	if (kw.items)
		n->items = compile(c, kw.items);
	n->unique = cJSON_IsTrue(kw.unique);
	n->max_props = number_kw(kw.max_props, &n->has_max_props);
	n->min_items = number_kw(kw.min_items, &n->has_min_items);
	n->max_items = number_kw(kw.max_items, &n->has_max_items);
	n->minimum = number_kw(kw.minimum, &n->has_minimum);
	n->maximum = number_kw(kw.maximum, &n->has_maximum);
	n->min_len = number_kw(kw.min_len, &n->has_min_len);
	n->max_len = number_kw(kw.max_len, &n->has_max_len);
	if ((k = kw.pattern) && cJSON_IsString(k)) {
		n->pattern = k->valuestring;
		n->pat_kind = pattern_kind(k->valuestring, &n->pat_min, &n->pat_max);
		if (n->pat_kind == P_REGEX && el_sv_regcomp(&n->re, k->valuestring) != 0)
			c->error = "a pattern it cannot compile";
	}
	n->has = (n->const_v || n->enum_v ? HAS_VALUE : 0) |
		 (n->ref || n->all_of || n->any_of || n->one_of || n->not_ || n->if_ ? HAS_INPLACE : 0) |
		 (n->required || n->has_max_props || n->dep_required || n->nprops || n->addl || n->prop_names || n->uneval
			  ? HAS_OBJECT : 0) |
		 (n->has_min_items || n->has_max_items || n->unique || n->items ? HAS_ARRAY : 0) |
		 (n->has_minimum || n->has_maximum || n->has_min_len || n->has_max_len || n->pattern ? HAS_SCALAR : 0);
	return n;
}

/* ---- validating ----------------------------------------------------------- */

/* "a string or null" from a type keyword */
static void type_words(const cJSON *t, char *out, size_t n)
{
	const cJSON *e;
	size_t len = 0;

	out[0] = '\0';
	if (J_STRING(t)) {
		const char *w = t->valuestring;

		snprintf(out, n, "%s%s", strcmp(w, "object") == 0 || strcmp(w, "array") == 0 || strcmp(w, "integer") == 0 ? "an "
					 : strcmp(w, "null") == 0 ? "" : "a ", w);
		return;
	}
	cJSON_ArrayForEach(e, t) {
		if (J_STRING(e) && len < n)
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? " or " : "", e->valuestring);
	}
}

static int pattern_matches(const snode *n, const char *s)
{
	switch (n->pat_kind) {
	case P_NOSPACE:
		return el_sv_nospace(s);
	case P_ABSOLUTE:
		return s[0] == '/';
	case P_HEX32:
		return el_sv_hex(s, 32);
	case P_HEX64:
		return el_sv_hex(s, 64);
	case P_SHA256_ID:
		return el_sv_sha256_id(s);
	case P_DIGITS:
		return el_sv_digits(s);
	case P_DOTTED:
		return el_sv_dotted(s, n->pat_min, n->pat_max);
	case P_COMMIT:
		return el_sv_commit(s);
	default:
		return regexec(&n->re, s, 0, NULL, 0) == 0;
	}
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The id of a property name, or -1 when no subschema declares it. */
static int name_id(const snames *t, const char *name)
{
	for (size_t i = name_hash(name) & (t->nslots - 1);; i = (i + 1) & (t->nslots - 1)) {
		unsigned e = t->slots[i];

		if (!e)
			return -1;
		if (strcmp(t->names[e - 1], name) == 0)
			return (int)e - 1;
	}
}

/* The ids of x's member names, found once for all the subschemas applied to x (as they are needed). */
static int *member_ids(vctx *v, const cJSON *x)
{
	idlist *l;
	size_t n = 0, i = 0;

	if (v->sv.depth >= v->nids) {
		size_t grown = v->sv.depth + 16;

		v->ids = el_xrealloc(v->ids, grown * sizeof(*v->ids));
		memset(v->ids + v->nids, 0, (grown - v->nids) * sizeof(*v->ids));
		v->nids = grown;
	}
	l = &v->ids[v->sv.depth];
	if (l->x == x)
		return l->ids;
	for (const cJSON *m = x->child; m; m = m->next)
		n++;
	if (n > l->cap) {
		free(l->ids);
		l->cap = n < 32 ? 32 : n;
		l->ids = el_xcalloc(l->cap, sizeof(*l->ids));
	}
	for (; i < n; i++)
		l->ids[i] = ID_UNKNOWN;
	l->x = x;
	return l->ids;
}

/*
 * The property of n with the name numbered id, or NULL. Locks are written
 * with their keys sorted, as the properties are here, so the one after
 * the last match is tried first (*hint), and the search is the exception.
 */
static const sprop *find_prop(const snode *n, int id, size_t *hint)
{
	size_t lo = 0, hi = n->nprops;

	if (id < 0)
		return NULL;
	if (*hint < n->nprops && n->props[*hint].id == id)
		return &n->props[(*hint)++];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->props[mid].id < id) {
			lo = mid + 1;
		} else if (n->props[mid].id > id) {
			hi = mid;
		} else {
			*hint = mid + 1;
			return &n->props[mid];
		}
	}
	return NULL;
}

static int validate(vctx *v, const snode *s, const cJSON *x, evaluated *ev);
static int check_value(vctx *v, const snode *s, const cJSON *x);
static int validate_inplace(vctx *v, const snode *s, const cJSON *x, evaluated *ev);

/* s, or a subschema applied at the same value, has unevaluatedProperties (memoised). */
static int needs_eval(snode *s)
{
	int need = 0;

	if (s->needs_eval >= 0)
		return s->needs_eval;
	s->needs_eval = 0; /* a cycle through $ref adds nothing */
	need = s->uneval != NULL;
	if (s->ref)
		need |= needs_eval(s->ref);
	for (size_t i = 0; i < s->n_all_of; i++)
		need |= needs_eval(s->all_of[i]);
	for (size_t i = 0; i < s->n_any_of; i++)
		need |= needs_eval(s->any_of[i]);
	for (size_t i = 0; i < s->n_one_of; i++)
		need |= needs_eval(s->one_of[i]);
	if (s->if_)
		need |= needs_eval(s->if_) | (s->then_ && needs_eval(s->then_)) | (s->else_ && needs_eval(s->else_));
	return s->needs_eval = need;
}

/* Validate quietly: 0 when x matches s (its annotations kept in ev), -1 when not (ev as before). */
static int matches(vctx *v, const snode *s, const cJSON *x, evaluated *ev)
{
	size_t n0 = ev ? ev->n : 0;
	int rc;

	v->sv.quiet++;
	rc = validate(v, s, x, ev);
	v->sv.quiet--;
	if (rc != 0 && ev)
		ev->n = n0;
	return rc;
}

/* Validate a child value (a member or an item) with its own annotations. */
static int validate_child(vctx *v, const snode *s, const cJSON *x, const char *name, long index)
{
	evaluated child;
	int rc;

	push(v, name, index);
	if (s->needs_eval > 0) {
		EVALUATED_INIT(child);
		rc = validate(v, s, x, &child);
		eval_release(&child);
	} else {
		rc = validate(v, s, x, NULL);
	}
	pop(v);
	return rc;
}

static int validate_object(vctx *v, const snode *s, const cJSON *x, evaluated *ev)
{
	const cJSON *k, *m;
	char shown[256];
	size_t hint = 0, i = 0;
	uint64_t required_seen = 0;
	int *ids;

	if (!s->required_in_props) {
		cJSON_ArrayForEach(k, s->required) {
			if (J_STRING(k) && !cJSON_GetObjectItemCaseSensitive(x, k->valuestring))
				return fail(v, "\"%s\" is missing", k->valuestring);
		}
	}
	if (s->has_max_props && cJSON_GetArraySize(x) > s->max_props)
		return fail(v, "more than %g members", s->max_props);
	cJSON_ArrayForEach(k, s->dep_required) {
		const cJSON *need;

		if (!cJSON_GetObjectItemCaseSensitive(x, k->string))
			continue;
		cJSON_ArrayForEach(need, k) {
			if (J_STRING(need) && !cJSON_GetObjectItemCaseSensitive(x, need->valuestring))
				return fail(v, "\"%s\" needs \"%s\"", k->string, need->valuestring);
		}
	}
	if (!s->nprops && !s->addl && !s->prop_names)
		return 0;
	ids = member_ids(v, x);
	cJSON_ArrayForEach(m, x) {
		int id = ids[i];
		const sprop *p;

		if (id == ID_UNKNOWN) {
			/* the member the hint expects costs a comparison, not a lookup */
			if (hint < s->nprops && strcmp(s->props[hint].name, m->string) == 0)
				id = s->props[hint].id;
			else
				id = name_id(v->names, m->string);
			ids[i] = id;
		}
		i++;
		p = id >= 0 && s->declared && (s->declared[id >> 6] >> (id & 63) & 1) ? find_prop(s, id, &hint) : NULL;

		if (!p && !s->addl && !s->prop_names)
			continue;

		if (p && p->required)
			required_seen |= (uint64_t)1 << (p->required - 1);

		if (s->prop_names) {
			cJSON key = { .type = cJSON_String, .valuestring = m->string };
			evaluated none;
			int rc;

			EVALUATED_INIT(none);
			rc = matches(v, s->prop_names, &key, &none);
			eval_release(&none);
			if (rc != 0)
				return fail(v, "the member name \"%s\" is not allowed", esc(shown, sizeof(shown), m->string));
		}
		if (p) {
			eval_add(ev, m->string);
			if (validate_child(v, p->schema, m, m->string, 0) != 0)
				return -1;
		} else if (s->addl) {
			if (s->addl_false)
				return fail(v, "unexpected member \"%s\"", esc(shown, sizeof(shown), m->string));
			eval_add(ev, m->string);
			if (validate_child(v, s->addl, m, m->string, 0) != 0)
				return -1;
		}
	}
	if (s->required_in_props && required_seen != s->required_mask) {
		cJSON_ArrayForEach(k, s->required) {
			if (J_STRING(k) && !cJSON_GetObjectItemCaseSensitive(x, k->valuestring))
				return fail(v, "\"%s\" is missing", k->valuestring);
		}
	}
	return 0;
}

static int validate_unevaluated(vctx *v, const snode *s, const cJSON *x, evaluated *ev)
{
	const cJSON *m;
	char shown[256];
	int sorted = 0;

	cJSON_ArrayForEach(m, x) {
		if (eval_has(ev, m->string, &sorted))
			continue;
		if (s->uneval_false)
			return fail(v, "unexpected member \"%s\"", esc(shown, sizeof(shown), m->string));
		if (validate_child(v, s->uneval, m, m->string, 0) != 0)
			return -1;
	}
	/* every member is evaluated now, for an enclosing unevaluatedProperties */
	cJSON_ArrayForEach(m, x) eval_add(ev, m->string);
	return 0;
}

static int validate_array(vctx *v, const snode *s, const cJSON *x)
{
	const cJSON *e;
	long i = 0;
	int n = cJSON_GetArraySize(x);

	if (s->has_min_items && n < s->min_items)
		return fail(v, "fewer than %g items", s->min_items);
	if (s->has_max_items && n > s->max_items)
		return fail(v, "more than %g items", s->max_items);
	if (s->unique && has_duplicate(x))
		return fail(v, "an item appears twice");
	if (!s->items)
		return 0;
	cJSON_ArrayForEach(e, x) {
		if (validate_child(v, s->items, e, NULL, i++) != 0)
			return -1;
	}
	return 0;
}

static int validate_scalar(vctx *v, const snode *s, const cJSON *x)
{
	char shown[256];

	if (J_NUMBER(x)) {
		if (s->has_minimum && x->valuedouble < s->minimum)
			return fail(v, "%g is below the minimum %g", x->valuedouble, s->minimum);
		if (s->has_maximum && x->valuedouble > s->maximum)
			return fail(v, "%g is above the maximum %g", x->valuedouble, s->maximum);
	}
	if (J_STRING(x)) {
		if (s->has_min_len || s->has_max_len) {
			/* a minimum alone needs only as many characters as it asks for */
			size_t enough = s->has_max_len || !(s->min_len >= 0 && s->min_len < 4096) ? SIZE_MAX : (size_t)s->min_len;
			size_t len = utf8_length(x->valuestring, enough);

			if (s->has_min_len && (double)len < s->min_len)
				return fail(v, "shorter than %g characters", s->min_len);
			if (s->has_max_len && (double)len > s->max_len)
				return fail(v, "longer than %g characters", s->max_len);
		}
		if (s->pattern && !pattern_matches(s, x->valuestring))
			return fail(v, "\"%s\" is not of the form %s", esc(shown, 120, x->valuestring), s->pattern);
	}
	return 0;
}

static int validate(vctx *v, const snode *s, const cJSON *x, evaluated *ev)
{
	if (s->is_bool)
		return s->bool_value ? 0 : fail(v, "not allowed here");
	if (v->sv.depth > EL_SV_MAX_DEPTH)
		return fail(v, "nested too deeply");
	if (s->types && !(s->types & (J_NUMBER(x) && (s->types & T_NUMBER) ? T_NUMBER : type_of(x)))) {
		char want[96];

		type_words(s->type_kw, want, sizeof(want));
		return fail(v, "expected %s, got %s", want, type_name(x));
	}
	if ((s->has & HAS_VALUE) && check_value(v, s, x) != 0)
		return -1;
	if ((s->has & HAS_INPLACE) && validate_inplace(v, s, x, ev) != 0)
		return -1;
	switch (J_TYPE(x)) {
	case cJSON_Object:
		if (!(s->has & HAS_OBJECT))
			return 0;
		if (validate_object(v, s, x, ev) != 0)
			return -1;
		return s->uneval ? validate_unevaluated(v, s, x, ev) : 0;
	case cJSON_Array:
		return s->has & HAS_ARRAY ? validate_array(v, s, x) : 0;
	case cJSON_Number:
	case cJSON_String:
		return s->has & HAS_SCALAR ? validate_scalar(v, s, x) : 0;
	default:
		return 0;
	}
}

/* const and enum */
static int check_value(vctx *v, const snode *s, const cJSON *x)
{
	char shown[256];

	if (s->const_v && !(J_STRING(s->const_v) && J_STRING(x) ? strcmp(s->const_v->valuestring, x->valuestring) == 0
								       : cJSON_Compare(s->const_v, x, 1))) {
		if (J_STRING(s->const_v))
			return fail(v, "expected \"%s\"", s->const_v->valuestring);
		return fail(v, "not the value this field must have");
	}
	if (s->enum_v) {
		const cJSON *e;
		int ok = 0;

		if (s->enum_strs && J_STRING(x)) {
			for (size_t i = 0; i < s->n_enum_strs && !ok; i++)
				ok = strcmp(s->enum_strs[i], x->valuestring) == 0;
		} else if (!s->enum_strs) {
			cJSON_ArrayForEach(e, s->enum_v) ok |= cJSON_Compare(e, x, 1);
		}
		if (!ok)
			return J_STRING(x) ? fail(v, "\"%s\" is not one of the allowed values", esc(shown, 120, x->valuestring))
						 : fail(v, "not one of the allowed values");
	}
	return 0;
}

/* $ref, allOf, anyOf, oneOf, not, if/then/else: subschemas applied to x itself */
static int validate_inplace(vctx *v, const snode *s, const cJSON *x, evaluated *ev)
{
	if (s->ref && validate(v, s->ref, x, ev) != 0)
		return -1;
	for (size_t i = 0; i < s->n_all_of; i++)
		if (validate(v, s->all_of[i], x, ev) != 0)
			return -1;
	if (s->any_of) {
		int any = 0;

		for (size_t i = 0; i < s->n_any_of; i++)
			any |= matches(v, s->any_of[i], x, ev) == 0;
		if (!any)
			return fail(v, "matches none of the shapes allowed here");
	}
	if (s->one_of) {
		int count = 0;

		for (size_t i = 0; i < s->n_one_of; i++)
			count += matches(v, s->one_of[i], x, ev) == 0;
		if (count != 1)
			return fail(v, count ? "matches more than one of the shapes allowed here"
					     : "matches none of the shapes allowed here");
	}
	if (s->not_) {
		evaluated none;
		int rc;

		EVALUATED_INIT(none);
		rc = matches(v, s->not_, x, &none);
		eval_release(&none);
		if (rc == 0)
			return fail(v, "has a shape that is not allowed here");
	}
	if (s->if_) {
		const snode *branch = matches(v, s->if_, x, ev) == 0 ? s->then_ : s->else_;

		if (branch && validate(v, branch, x, ev) != 0)
			return -1;
	}
	return 0;
}

/* ---- the compiled schemas ------------------------------------------------ */

struct el_schema {
	compiler c;
	snode *top;
	snames names;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted, unique names the compiler met, their hash table, and every property's id. */
static void number_names(el_schema *sc)
{
	compiler *c = &sc->c;
	snames *t = &sc->names;
	unsigned *slots;
	size_t n = 0;

	if (c->nnames)
		qsort(c->names, c->nnames, sizeof(*c->names), cmp_name);
	for (size_t i = 0; i < c->nnames; i++)
		if (!n || strcmp(c->names[n - 1], c->names[i]) != 0)
			c->names[n++] = c->names[i];
	t->names = c->names;
	t->n = n;
	for (t->nslots = 16; t->nslots < 2 * n; t->nslots *= 2)
		;
	slots = el_xcalloc(t->nslots, sizeof(*slots));
	for (size_t id = 0; id < n; id++) {
		size_t i = name_hash(t->names[id]) & (t->nslots - 1);

		while (slots[i])
			i = (i + 1) & (t->nslots - 1);
		slots[i] = (unsigned)id + 1;
	}
	t->slots = slots;
	for (size_t i = 0; i < c->nmemo; i++) {
		snode *node = c->memo[i].node;

		if (!node->nprops || node->declared)
			continue; /* none, or numbered already (a node that held only a $ref shares its target's) */
		node->declared = el_xcalloc((n + 63) / 64, sizeof(*node->declared));
		for (size_t p = 0; p < node->nprops; p++) {
			const char **hit = bsearch(&node->props[p].name, t->names, n, sizeof(*t->names), cmp_name);
			int id = (int)(hit - t->names);

			node->props[p].id = id;
			node->declared[id >> 6] |= (uint64_t)1 << (id & 63);
		}
	}
}

int el_schema_compile(el_schema **out, const cJSON *root, char *why, size_t why_size)
{
	el_schema *sc = el_xcalloc(1, sizeof(*sc));

	sc->c.root = root;
	sc->top = compile(&sc->c, root);
	for (size_t i = 0; i < sc->c.nmemo; i++)
		needs_eval(sc->c.memo[i].node);
	number_names(sc);
	if (sc->c.error) {
		snprintf(why, why_size, "the schema: %s", sc->c.error);
		el_schema_free(sc);
		*out = NULL;
		return -1;
	}
	*out = sc;
	return 0;
}

void el_schema_free(el_schema *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->c.nmemo; i++) {
		snode *n = sc->c.memo[i].node;
		int seen = 0;

		/* a node that only held a $ref shares its target's node */
		for (size_t j = 0; j < i && !seen; j++)
			seen = sc->c.memo[j].node == n;
		if (seen)
			continue;

		if (n->pat_kind == P_REGEX && n->pattern)
			regfree(&n->re);
		free(n->all_of);
		free(n->any_of);
		free(n->one_of);
		free(n->props);
		free(n->declared);
		free(n->enum_strs);
		free(n);
	}
	free(sc->c.memo);
	free(sc->c.table);
	free(sc->c.names);
	free((void *)sc->names.slots);
	free(sc);
}

int el_schema_check(const el_schema *sc, const cJSON *instance, char *why, size_t why_size)
{
	vctx v = { .sv = { .why = why, .why_size = why_size }, .names = &sc->names };
	evaluated ev;
	int rc;

	EVALUATED_INIT(ev);
	why[0] = '\0';
	rc = validate(&v, sc->top, instance, &ev);
	eval_release(&ev);
	for (size_t i = 0; i < v.nids; i++)
		free(v.ids[i].ids);
	free(v.ids);
	if (rc != 0 && !why[0])
		snprintf(why, why_size, "the document does not match the schema");
	return rc;
}

/* schemas/envlock.lock.schema.json, as the assembler includes it, NUL-terminated */
extern const char el_lock_schema_text[];
__asm__(".section .rodata\n"
	".global el_lock_schema_text\n"
	".type el_lock_schema_text, @object\n"
	"el_lock_schema_text:\n"
	".incbin \"schemas/envlock.lock.schema.json\"\n"
	".byte 0\n"
	".previous\n");

static cJSON *lock_schema_json;
static el_schema *lock_schema;
static pthread_once_t lock_schema_once = PTHREAD_ONCE_INIT;

static void compile_lock_schema(void)
{
	char why[256];

	lock_schema_json = cJSON_Parse(el_lock_schema_text);
	if (!lock_schema_json)
		el_oom(); /* the compiled-in schema is valid JSON: only memory can fail */
	/* and it uses only what this file implements (t0018 loads locks through it) */
	if (el_schema_compile(&lock_schema, lock_schema_json, why, sizeof(why)) != 0) {
		fprintf(stderr, "envlock: the compiled-in lockfile schema: %s\n", why);
		abort();
	}
}

const el_schema *el_schema_lock(void)
{
	pthread_once(&lock_schema_once, compile_lock_schema);
	return lock_schema;
}
