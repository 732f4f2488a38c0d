/*
 * The effective config against the real one: every config of three
 * OpenMMLab trees (../shared/data/configs, its README.md says what each
 * file holds) evaluated in this one process and compared with the value
 * mmcv's or mmengine's Config.fromfile gave, then the --cfg-options cases.
 * Prints a table per tree and a line for each config that is not right,
 * then fails when a goal below is not met.
 *
 * Env: ENVLOCK_CORPUS_DIR (the corpus folder), ENVLOCK_CORPUS_ONLY=<text>
 * (only the configs whose "<corpus>/<path>" contains it),
 * ENVLOCK_CORPUS_VERBOSE=1 (every difference of every config).
 */
#include <limits.h>
#include <math.h>
#include <time.h>

#include <zstd.h>

#include "unit.h"

#include "config/config.h"

/* The goals, per corpus; the --cfg-options cases have the first three too. */
#define GOAL_WRONG_MAX     0
#define GOAL_ALIASED_MAX   0
#define GOAL_UNATTR_MAX    0
#define GOAL_EXACT_PERCENT 99.0 /* of the eligible configs */

#define CORPUS_DIR      "../shared/data/configs" /* from the checkout's top, where make check runs */
#define FLOAT_REL_TOL   1e-12                    /* tolerated, and counted as "near" */
#define SHOW_MAX        40                       /* lines per category per corpus */
#define SHOW_ACCEPTED   5                        /* reference errors we accepted, per corpus */
#define ZST_MAX_IN      (16u << 20)
#define ZST_MAX_OUT     (256u << 20)

static const char *const corpora[] = { "mmdet-2.25.0", "mmdet-3.3.0+", "mmpose-1.3.2" };
#define N_CORPORA (sizeof(corpora) / sizeof(corpora[0]))

/* How a config came out, worst last among the first five. */
enum verdict {
	V_EXACT,
	V_HONEST,
	V_ALIASED,
	V_UNATTR,
	V_WRONG,
	V_REFUSED,      /* the reference gave a value, we refused */
	V_REF_REFUSED,  /* the reference raised, so did we */
	V_REF_ACCEPTED, /* the reference raised, we gave a value */
	V_N
};

static const char *const verdict_tag[V_N] = { "EXACT", "HONEST", "ALIASED", "UNATTR", "WRONG",
					      "REFUSED", "REFUSED-OK", "ACCEPTED" };

typedef struct {
	unsigned lines, ref_ok, eligible, eligible_exact, near;
	unsigned n[V_N], shown[V_N];
	double eval_s;
} tally;

/* One difference between our value and the reference's. */
enum dkind {
	D_MISSING, /* a key the reference has, left out on our side */
	D_SHORT,   /* our list is shorter (items left out) */
	D_VALUE,   /* present on both sides, not equal */
	D_EXTRA,   /* a key only we have */
	D_LONG     /* our list is longer */
};

typedef struct {
	enum dkind kind;
	char *shown; /* train_pipeline[2].type */
	char *key;   /* train_pipeline.type, as not_evaluated writes key paths */
	const cJSON *ours, *theirs;
	enum verdict verdict;
	const char *by; /* the note that named it (honest, aliased) */
} diff;

typedef struct {
	diff *v;
	size_t n, cap;
	unsigned near;
} diffs;

typedef struct {
	char shown[2048], key[2048];
	size_t ns, nk;
} kpath;

static bool verbose;
static const char *only;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The corpus folder, or NULL (with why) when it is not there. */
static const char *corpus_dir(void)
{
	const char *d = getenv("ENVLOCK_CORPUS_DIR");
	struct stat st;

	if (!d || !*d)
		d = CORPUS_DIR;
	if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
		char cwd[4096];

		print_message("skipped: no config corpus at %s (from %s; ENVLOCK_CORPUS_DIR names another)\n", d,
			      getcwd(cwd, sizeof(cwd)) ? cwd : "here");
		return NULL;
	}
	return d;
}

/* The whole of a .zst file, NUL-terminated (malloc'd); fails the test on error. */
static char *read_zst(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned long long size;
	char *in, *out;
	size_t n_in, got;

	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	in = malloc(ZST_MAX_IN + 1);
	assert_non_null(in);
	n_in = fread(in, 1, ZST_MAX_IN + 1, f);
	if (ferror(f) || n_in > ZST_MAX_IN)
		fail_msg("%s: unreadable, or larger than %u bytes", path, ZST_MAX_IN);
	fclose(f);
	size = ZSTD_getFrameContentSize(in, n_in);
	if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > ZST_MAX_OUT)
		fail_msg("%s: not a zstd file with its size in the header, or over %u bytes", path, ZST_MAX_OUT);
	out = malloc((size_t)size + 1);
	assert_non_null(out);
	got = ZSTD_decompress(out, (size_t)size, in, n_in);
	free(in);
	if (ZSTD_isError(got) || got != size)
		fail_msg("%s: %s", path, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size differs from the header");
	out[got] = '\0';
	*len = got;
	return out;
}

/* The digits of v when it is an integer held as a Raw node ("-123..."), else NULL. */
static const char *int_digits(const cJSON *v)
{
	const char *s;

	if (!cJSON_IsRaw(v) || !v->valuestring)
		return NULL;
	s = v->valuestring + (v->valuestring[0] == '-');
	if (!*s)
		return NULL;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return NULL;
	return v->valuestring;
}

/* Whether the n digits at s (no sign) make 2^53 or more. */
static bool digits_big(const char *s, size_t n)
{
	return n > 16 || (n == 16 && memcmp(s, "9007199254740992", 16) >= 0);
}

typedef struct {
	size_t *index; /* places among the text's numbers */
	char **digits;
	size_t n, next, seen;
} bigs;

/* The numbers under item in document order (the text's order); false when done or out of step. */
static bool bigs_place(cJSON *item, bigs *b)
{
	for (; item && b->next < b->n; item = item->next) {
		if (cJSON_IsNumber(item)) {
			if (b->seen++ == b->index[b->next]) {
				char *d = b->digits[b->next];

				if (strtod(d, NULL) != item->valuedouble)
					return false;
				item->type = cJSON_Raw | (item->type & cJSON_StringIsConst);
				item->valuestring = d;
				b->digits[b->next++] = NULL;
			}
		} else if (item->child && !bigs_place(item->child, b)) {
			return false;
		}
	}
	return b->next < b->n;
}

/*
 * Python's json writes integers exactly, cJSON keeps a double: each
 * integer of the text of magnitude 2^53 or more becomes a Raw node with
 * the text's digits, matched to the text's numbers in order. (model.h's
 * el_json_exact_ints does this within 64 bits; the options' big=
 * 12345678901234567890 is past 2^63 and other texts may go further.)
 */
static void exact_ints(cJSON *doc, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	bigs b = { NULL, NULL, 0, 0, 0 };
	size_t cap = 0, index = 0;

	while (p < end) {
		const char *start = p;
		bool integer = true;

		if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				p += *p == '\\';
			p++;
			continue;
		}
		if (*p != '-' && (*p < '0' || *p > '9')) {
			p++;
			continue;
		}
		for (p++; p < end && strchr("0123456789.eE+-", *p); p++)
			integer &= *p >= '0' && *p <= '9';
		if (integer && digits_big(start + (*start == '-'), (size_t)(p - start) - (*start == '-'))) {
			if (b.n == cap) {
				cap = cap ? 2 * cap : 4;
				b.index = realloc(b.index, cap * sizeof(*b.index));
				b.digits = realloc(b.digits, cap * sizeof(*b.digits));
				assert_true(b.index && b.digits);
			}
			b.index[b.n] = index;
			b.digits[b.n] = cJSON_malloc((size_t)(p - start) + 1);
			assert_non_null(b.digits[b.n]);
			memcpy(b.digits[b.n], start, (size_t)(p - start));
			b.digits[b.n++][p - start] = '\0';
		}
		index++;
	}
	if (b.n)
		bigs_place(doc, &b);
	for (size_t i = 0; i < b.n; i++)
		cJSON_free(b.digits[i]);
	free(b.index);
	free(b.digits);
}

static bool is_number(const cJSON *v)
{
	return cJSON_IsNumber(v) || int_digits(v);
}

/* {"__lazy__": ...} or {"__py__": ...}: what a static evaluator cannot make. */
static bool is_marker(const cJSON *v)
{
	return cJSON_IsObject(v) && (cJSON_GetObjectItemCaseSensitive(v, "__lazy__") ||
				     cJSON_GetObjectItemCaseSensitive(v, "__py__"));
}

static bool has_marker(const cJSON *v)
{
	if (is_marker(v))
		return true;
	for (const cJSON *c = v ? v->child : NULL; c; c = c->next)
		if (has_marker(c))
			return true;
	return false;
}

/* An integer's digits against a double: equal only when the double is that very integer. */
static bool digits_equal_double(const char *digits, double d)
{
	char buf[400];

	if (!isfinite(d) || d != floor(d))
		return false;
	if (d == 0)
		return strcmp(digits, "0") == 0 || strcmp(digits, "-0") == 0;
	snprintf(buf, sizeof(buf), "%.0f", d);
	return strcmp(buf, digits) == 0;
}

/* Numbers as Python compares them (1 == 1.0); *near when only within FLOAT_REL_TOL. */
static bool num_equal(const cJSON *a, const cJSON *b, bool *near)
{
	const char *da = int_digits(a), *db = int_digits(b);
	double x, y;

	if (da && db)
		return strcmp(da, db) == 0;
	if (da || db)
		return digits_equal_double(da ? da : db, da ? b->valuedouble : a->valuedouble);
	x = a->valuedouble;
	y = b->valuedouble;
	if (x == y)
		return true;
	if (isfinite(x) && isfinite(y) && fabs(x - y) <= FLOAT_REL_TOL * fmax(fabs(x), fabs(y))) {
		*near = true;
		return true;
	}
	return false;
}

typedef struct {
	size_t ns, nk;
} kmark;

/* p extended by .key, or by [index] when key is NULL; returns where to cut it back to. */
static kmark kpath_push(kpath *p, const char *key, long index)
{
	kmark saved = { p->ns, p->nk };

	if (key) {
		p->ns += (size_t)snprintf(p->shown + p->ns, sizeof(p->shown) - p->ns, "%s%s", p->ns ? "." : "", key);
		p->nk += (size_t)snprintf(p->key + p->nk, sizeof(p->key) - p->nk, "%s%s", p->nk ? "." : "", key);
	} else {
		p->ns += (size_t)snprintf(p->shown + p->ns, sizeof(p->shown) - p->ns, "[%ld]", index);
	}
	p->ns = p->ns < sizeof(p->shown) ? p->ns : sizeof(p->shown) - 1;
	p->nk = p->nk < sizeof(p->key) ? p->nk : sizeof(p->key) - 1;
	return saved;
}

static void kpath_pop(kpath *p, kmark saved)
{
	p->ns = saved.ns;
	p->nk = saved.nk;
	p->shown[p->ns] = '\0';
	p->key[p->nk] = '\0';
}

static void record(diffs *d, enum dkind kind, const kpath *p, const cJSON *ours, const cJSON *theirs)
{
	diff *x;

	if (!d)
		return;
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 8;
		d->v = realloc(d->v, d->cap * sizeof(*d->v));
		assert_non_null(d->v);
	}
	x = &d->v[d->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->shown = strdup(p->ns ? p->shown : "(top)");
	x->key = strdup(p->key);
	x->ours = ours;
	x->theirs = theirs;
}

static void diffs_release(diffs *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].shown);
		free(d->v[i].key);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static bool compare(const cJSON *ours, const cJSON *theirs, kpath *p, diffs *d);

/* Whether ours is theirs with some items taken out, each kept item equal. */
static bool subsequence(const cJSON *ours, const cJSON *theirs)
{
	const cJSON *t = theirs->child;

	for (const cJSON *o = ours->child; o; o = o->next, t = t->next) {
		while (t && !compare(o, t, NULL, NULL))
			t = t->next;
		if (!t)
			return false;
	}
	return true;
}

static bool compare_lists(const cJSON *ours, const cJSON *theirs, kpath *p, diffs *d)
{
	int no = cJSON_GetArraySize(ours), nt = cJSON_GetArraySize(theirs);
	const cJSON *o = ours->child, *t = theirs->child;
	bool eq = true;

	if (no > nt) {
		record(d, D_LONG, p, ours, theirs);
		return false;
	}
	if (no < nt) {
		record(d, D_SHORT, p, ours, theirs);
		if (!d || subsequence(ours, theirs))
			return false;
		eq = false;
	}
	/* same length, or shorter and not a plain subsequence: item by item from the start */
	for (long i = 0; o; o = o->next, t = t->next, i++) {
		kmark saved = kpath_push(p, NULL, i);

		eq &= compare(o, t, p, d);
		kpath_pop(p, saved);
		if (!eq && !d)
			return false;
	}
	return eq;
}

static bool compare_objects(const cJSON *ours, const cJSON *theirs, kpath *p, diffs *d)
{
	bool eq = true;

	for (const cJSON *t = theirs->child; t; t = t->next) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(ours, t->string);
		kmark saved = kpath_push(p, t->string, 0);

		if (!o) {
			record(d, D_MISSING, p, NULL, t);
			eq = false;
		} else {
			eq &= compare(o, t, p, d);
		}
		kpath_pop(p, saved);
		if (!eq && !d)
			return false;
	}
	for (const cJSON *o = ours->child; o; o = o->next) {
		if (!cJSON_GetObjectItemCaseSensitive(theirs, o->string)) {
			kmark saved = kpath_push(p, o->string, 0);

			record(d, D_EXTRA, p, o, NULL);
			kpath_pop(p, saved);
			eq = false;
			if (!d)
				return false;
		}
	}
	return eq;
}

/*
 * README.md's rules: objects as key sets, arrays item by item, an int
 * equal to a float of its value, integers exactly past 2^53, floats as
 * doubles (within 1e-12 relative tolerated and counted), true is no
 * number, null only null. A lazy or py marker is never matched by a value.
 * With d NULL: stops at the first difference, p may be NULL.
 */
static bool compare(const cJSON *ours, const cJSON *theirs, kpath *p, diffs *d)
{
	kpath scratch;
	bool near = false;

	if (!p) {
		memset(&scratch, 0, sizeof(scratch));
		p = &scratch;
	}
	if (is_marker(theirs)) {
		record(d, D_VALUE, p, ours, theirs);
		return false;
	}
	if (is_number(ours) && is_number(theirs)) {
		if (num_equal(ours, theirs, &near)) {
			if (near && d)
				d->near++;
			return true;
		}
	} else if (cJSON_IsObject(ours) && cJSON_IsObject(theirs)) {
		return compare_objects(ours, theirs, p, d);
	} else if (cJSON_IsArray(ours) && cJSON_IsArray(theirs)) {
		return compare_lists(ours, theirs, p, d);
	} else if (cJSON_IsString(ours) && cJSON_IsString(theirs)) {
		if (strcmp(ours->valuestring, theirs->valuestring) == 0)
			return true;
	} else if ((cJSON_IsTrue(ours) && cJSON_IsTrue(theirs)) || (cJSON_IsFalse(ours) && cJSON_IsFalse(theirs)) ||
		   (cJSON_IsNull(ours) && cJSON_IsNull(theirs))) {
		return true;
	}
	record(d, D_VALUE, p, ours, theirs);
	return false;
}

static const char *note_key(const cJSON *note)
{
	const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(note, "key"));

	return k ? k : "";
}

/* The note naming key or a key path above it, or NULL. */
static const char *named_by(const char *key, const cJSON *notes)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, notes)
	{
		const char *k = note_key(n);
		size_t len = strlen(k);

		if (len && strncmp(key, k, len) == 0 && (key[len] == '\0' || key[len] == '.'))
			return k;
	}
	return NULL;
}

static const char *last_segment(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot ? dot + 1 : key;
}

/* Whether value is what the reference holds at the dotted key (lists searched through), markers too. */
static bool held_at(const cJSON *node, const char *key, const cJSON *value)
{
	const char *dot;
	char seg[512];
	size_t n;

	if (!*key)
		return node && cJSON_Compare(value, node, true);
	if (cJSON_IsArray(node)) {
		for (const cJSON *c = node->child; c; c = c->next)
			if (held_at(c, key, value))
				return true;
		return false;
	}
	if (!cJSON_IsObject(node))
		return false;
	dot = strchr(key, '.');
	n = dot ? (size_t)(dot - key) : strlen(key);
	if (n >= sizeof(seg))
		return false;
	memcpy(seg, key, n);
	seg[n] = '\0';
	return held_at(cJSON_GetObjectItemCaseSensitive(node, seg), dot ? dot + 1 : "", value);
}

/*
 * What a left-out key not named under its own path is. The heuristic:
 * when some note has no key (a loop, an .update(), an import) the config
 * is "unattributed"; else when the reference holds the very value left
 * out at a key a note names (y = x with x named), or a note's key ends in
 * the same last segment (x named as _base_.x), it is "aliased"; else the
 * omission is unnamed, "wrong". x->by is the note it was taken for.
 */
static enum verdict judge_unnamed(diff *x, const cJSON *notes, const cJSON *theirs_root)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, notes)
	{
		if (!*note_key(n))
			return V_UNATTR;
	}
	cJSON_ArrayForEach(n, notes)
	{
		const char *k = note_key(n);

		if (held_at(theirs_root, k, x->theirs) ||
		    (strncmp(k, "_base_.", 7) == 0 && held_at(theirs_root, k + 7, x->theirs))) {
			x->by = k;
			return V_ALIASED;
		}
	}
	cJSON_ArrayForEach(n, notes)
	{
		if (strcmp(last_segment(note_key(n)), last_segment(x->key)) == 0) {
			x->by = note_key(n);
			return V_ALIASED;
		}
	}
	return V_WRONG;
}

/* The config's verdict: exact, or the worst of its differences; *first the first one that worst. */
static enum verdict judge(diffs *d, const cJSON *notes, const cJSON *theirs_root, const diff **first)
{
	enum verdict worst = V_EXACT;

	*first = NULL;
	for (size_t i = 0; i < d->n; i++) {
		diff *x = &d->v[i];

		if (x->kind == D_MISSING || x->kind == D_SHORT)
			x->verdict = (x->by = named_by(x->key, notes)) ? V_HONEST : judge_unnamed(x, notes, theirs_root);
		else
			x->verdict = V_WRONG;
		if (x->verdict > worst) {
			worst = x->verdict;
			*first = x;
		}
	}
	return worst;
}

/* A value as compact JSON, cut to about 70 bytes (buf). */
static const char *brief(const cJSON *v, char *buf, size_t size)
{
	char *s;

	if (!v)
		return "(absent)";
	s = cJSON_PrintUnformatted(v);
	if (!s)
		return "(unprintable)";
	if (strlen(s) > 70)
		snprintf(buf, size, "%.67s...", s);
	else
		snprintf(buf, size, "%s", s);
	free(s);
	return buf;
}

/* "key.path: ours vs theirs" for one difference. */
static void describe(const diff *x, char *out, size_t size)
{
	char a[96], b[96];

	switch (x->kind) {
	case D_MISSING:
		snprintf(out, size, "%s: left out%s%s%s vs %s", x->shown,
			 x->verdict == V_HONEST ? ", named as " : x->verdict == V_ALIASED ? ", named only as " : "",
			 x->by ? x->by : "",
			 x->verdict == V_UNATTR ? " under a key-less note" : x->verdict == V_WRONG ? ", not named" : "",
			 brief(x->theirs, b, sizeof(b)));
		break;
	case D_SHORT:
	case D_LONG:
		snprintf(out, size, "%s: %d items vs %d%s%s", x->shown, cJSON_GetArraySize(x->ours),
			 cJSON_GetArraySize(x->theirs), x->by ? ", named as " : "", x->by ? x->by : "");
		break;
	case D_VALUE:
		snprintf(out, size, "%s: %s vs %s", x->shown, brief(x->ours, a, sizeof(a)), brief(x->theirs, b, sizeof(b)));
		break;
	case D_EXTRA:
		snprintf(out, size, "%s: %s vs (no such key)", x->shown, brief(x->ours, a, sizeof(a)));
		break;
	}
}

static bool wanted(const char *corpus, const char *path)
{
	char both[4096];

	if (!only)
		return true;
	snprintf(both, sizeof(both), "%s/%s", corpus, path);
	return strstr(both, only) != NULL;
}

/* One line for a config in category v, up to SHOW_MAX of them per category. */
static void show(tally *t, enum verdict v, const char *corpus, const char *path, const char *set, const char *what)
{
	unsigned max = v == V_REF_ACCEPTED ? SHOW_ACCEPTED : SHOW_MAX;

	if (t->shown[v]++ < max || verbose)
		print_message("%s %s/%s%s%s%s: %s\n", verdict_tag[v], corpus, path, set ? " [" : "", set ? set : "",
			      set ? "]" : "", what);
}

static void show_rest(const tally *t, const char *corpus)
{
	for (int v = 0; v < V_N; v++) {
		unsigned max = v == V_REF_ACCEPTED ? SHOW_ACCEPTED : SHOW_MAX;

		if (!verbose && t->shown[v] > max)
			print_message("%s %s: and %u more\n", verdict_tag[v], corpus, t->shown[v] - max);
	}
}

/*
 * One line of expected.jsonl or cfg-options.jsonl: evaluate, compare,
 * count in t, print what is not right.
 */
static void score_line(envlock_ctx *ctx, const char *root, const char *corpus, const char *line, size_t len,
		       tally *t)
{
	cJSON *want = cJSON_ParseWithLength(line, len), *out = NULL;
	const cJSON *path, *value, *ref_error, *set, *opts;
	const char **options = NULL;
	size_t n_options = 0;
	char abs[4096], what[1024];
	const char *site = root;
	el_config_sites sites = { &site, 1 };
	double t0;
	int rc;

	if (!want)
		fail_msg("%s: a line that is not JSON: %.80s", corpus, line);
	exact_ints(want, line, len);
	path = cJSON_GetObjectItemCaseSensitive(want, "path");
	value = cJSON_GetObjectItemCaseSensitive(want, "value");
	ref_error = cJSON_GetObjectItemCaseSensitive(want, "ref_error");
	set = cJSON_GetObjectItemCaseSensitive(want, "set");
	opts = cJSON_GetObjectItemCaseSensitive(want, "options");
	if (!cJSON_IsString(path) || !value == !ref_error)
		fail_msg("%s: a line without path, or without one of value and ref_error: %.80s", corpus, line);
	if (!wanted(corpus, path->valuestring)) {
		cJSON_Delete(want);
		return;
	}
	if (opts) {
		const cJSON *o;

		options = calloc((size_t)cJSON_GetArraySize(opts) + 1, sizeof(*options));
		assert_non_null(options);
		cJSON_ArrayForEach(o, opts)
		{
			assert_true(cJSON_IsString(o));
			options[n_options++] = o->valuestring;
		}
	}
	t->lines++;
	if (snprintf(abs, sizeof(abs), "%s/%s", root, path->valuestring) >= (int)sizeof(abs))
		fail_msg("%s: a path too long", path->valuestring);
	t0 = now_s();
	rc = el_config_effective_in(&out, ctx, abs, options, n_options, &sites, NULL);
	t->eval_s += now_s() - t0;
	free(options);

	if (ref_error) {
		if (rc) {
			t->n[V_REF_REFUSED]++;
		} else {
			t->n[V_REF_ACCEPTED]++;
			snprintf(what, sizeof(what), "the reference raised %.200s", ref_error->valuestring);
			show(t, V_REF_ACCEPTED, corpus, path->valuestring, cJSON_GetStringValue(set), what);
		}
	} else {
		bool eligible = !has_marker(value);

		t->ref_ok++;
		t->eligible += eligible;
		if (rc) {
			t->n[V_REFUSED]++;
			snprintf(what, sizeof(what), "%.900s", envlock_error_last(ctx));
			show(t, V_REFUSED, corpus, path->valuestring, cJSON_GetStringValue(set), what);
		} else {
			const cJSON *eff = cJSON_GetObjectItemCaseSensitive(out, "effective");
			const cJSON *notes = cJSON_GetObjectItemCaseSensitive(out, "not_evaluated");
			kpath p;
			diffs d = { NULL, 0, 0, 0 };
			const diff *first;
			enum verdict v;

			memset(&p, 0, sizeof(p));
			compare(eff, value, &p, &d);
			v = judge(&d, notes, value, &first);
			t->n[v]++;
			t->eligible_exact += eligible && v == V_EXACT;
			t->near += d.near > 0;
			if (v >= V_ALIASED) {
				describe(first, what, sizeof(what));
				show(t, v, corpus, path->valuestring, cJSON_GetStringValue(set), what);
			}
			if (verbose)
				for (size_t i = 0; i < d.n; i++) {
					describe(&d.v[i], what, sizeof(what));
					print_message("  %s %s/%s%s%s%s: %s\n", verdict_tag[d.v[i].verdict], corpus,
						      path->valuestring, set ? " [" : "", set ? set->valuestring : "",
						      set ? "]" : "", what);
				}
			diffs_release(&d);
		}
	}
	cJSON_Delete(out);
	cJSON_Delete(want);
}

/* Every line of <root>/<corpus>/<file> scored into t. */
static void score_file(envlock_ctx *ctx, const char *root, const char *corpus, const char *file, tally *t)
{
	char dir[4096], zst[4096], real[PATH_MAX];
	size_t len;
	char *text, *line, *end;

	snprintf(dir, sizeof(dir), "%s/%s", root, corpus);
	if (!realpath(dir, real))
		fail_msg("%s: %s (the corpus folder lacks it)", dir, strerror(errno));
	if (snprintf(zst, sizeof(zst), "%s/%s", real, file) >= (int)sizeof(zst))
		fail_msg("%s: a path too long", real);
	text = read_zst(zst, &len);
	for (line = text; line < text + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(text + len - line));
		if (!end)
			end = text + len;
		if (end > line)
			score_line(ctx, real, corpus, line, (size_t)(end - line), t);
	}
	free(text);
}

static double percent(unsigned part, unsigned whole)
{
	return whole ? 100.0 * part / whole : 100.0;
}

/* The goals not met, appended to why; whether all were. */
static bool goals_met(const tally *t, const char *corpus, bool exact_goal, char *why, size_t size)
{
	size_t n = strlen(why);

	if (t->n[V_WRONG] > GOAL_WRONG_MAX)
		n += (size_t)snprintf(why + n, size - n, " %s: wrong %u (goal <= %d);", corpus, t->n[V_WRONG],
				      GOAL_WRONG_MAX);
	if (n < size && t->n[V_ALIASED] > GOAL_ALIASED_MAX)
		n += (size_t)snprintf(why + n, size - n, " %s: aliased %u (goal <= %d);", corpus, t->n[V_ALIASED],
				      GOAL_ALIASED_MAX);
	if (n < size && t->n[V_UNATTR] > GOAL_UNATTR_MAX)
		n += (size_t)snprintf(why + n, size - n, " %s: unattributed %u (goal <= %d);", corpus,
				      t->n[V_UNATTR], GOAL_UNATTR_MAX);
	if (n < size && exact_goal && percent(t->eligible_exact, t->eligible) < GOAL_EXACT_PERCENT)
		snprintf(why + n, size - n, " %s: exact %.1f%% of eligible (goal >= %.1f%%);", corpus,
			 percent(t->eligible_exact, t->eligible), GOAL_EXACT_PERCENT);
	return strlen(why) == 0;
}

/*
 * Columns: configs (lines read), ref-ok (the reference gave a value),
 * split into exact .. wrong and refused (we refused it); near (exact or
 * not, a float matched only within FLOAT_REL_TOL); ref-err (the reference
 * raised), split into refused (so did we) and accepted (we gave a value);
 * eligible (ref-ok without __lazy__/__py__) and the exact share of it.
 */
static void print_table(const char *title, const tally *t, bool eligible)
{
	print_message("%s\n", title);
	print_message("corpus        configs ref-ok exact honest aliased unattr wrong refused near | ref-err refused accepted%s\n",
		      eligible ? " | eligible exact%" : "");
	for (size_t c = 0; c < N_CORPORA; c++) {
		const tally *x = &t[c];
		char tail[64] = "";

		if (eligible)
			snprintf(tail, sizeof(tail), " | %8u %5.1f%%", x->eligible, percent(x->eligible_exact, x->eligible));
		print_message("%-13s %7u %6u %5u %6u %7u %6u %5u %7u %4u | %7u %7u %8u%s\n", corpora[c], x->lines,
			      x->ref_ok, x->n[V_EXACT], x->n[V_HONEST], x->n[V_ALIASED], x->n[V_UNATTR], x->n[V_WRONG],
			      x->n[V_REFUSED], x->near, x->n[V_REF_REFUSED] + x->n[V_REF_ACCEPTED],
			      x->n[V_REF_REFUSED], x->n[V_REF_ACCEPTED], tail);
	}
}

/* Score file of every corpus, print the table, fail on a goal not met. */
static void run_corpus(const char *file, const char *title, bool exact_goal)
{
	const char *root = corpus_dir();
	tally t[N_CORPORA];
	envlock_ctx *ctx;
	char why[2048] = "";
	double t0 = now_s(), eval_s = 0;
	bool ok = true;

	if (!root)
		skip();
	verbose = getenv("ENVLOCK_CORPUS_VERBOSE") && strcmp(getenv("ENVLOCK_CORPUS_VERBOSE"), "0") != 0;
	only = getenv("ENVLOCK_CORPUS_ONLY");
	if (only && !*only)
		only = NULL;
	memset(t, 0, sizeof(t));
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	for (size_t c = 0; c < N_CORPORA; c++) {
		score_file(ctx, root, corpora[c], file, &t[c]);
		show_rest(&t[c], corpora[c]);
		eval_s += t[c].eval_s;
	}
	envlock_ctx_free(ctx);
	print_table(title, t, exact_goal);
	print_message("%.2f s in all, %.2f s of it evaluating%s%s\n", now_s() - t0, eval_s, only ? "; only " : "",
		      only ? only : "");
	for (size_t c = 0; c < N_CORPORA; c++)
		ok &= goals_met(&t[c], corpora[c], exact_goal, why, sizeof(why));
	if (!ok)
		fail_msg("goals not met:%s", why);
}

static void test_corpus_configs(void **state)
{
	(void)state;
	run_corpus("expected.jsonl.zst", "every config, against Config.fromfile:", true);
}

static void test_corpus_cfg_options(void **state)
{
	(void)state;
	run_corpus("cfg-options.jsonl.zst", "--cfg-options cases, against merge_from_dict:", false);
}

/* The scorer itself, on values written here. */
static void test_scorer(void **state)
{
	static const struct {
		const char *ours, *notes, *theirs;
		enum verdict want;
	} cases[] = {
		{ "{\"a\":1,\"b\":[1,2.5],\"c\":{\"d\":null}}", "[]", "{\"c\":{\"d\":null},\"b\":[1.0,2.5],\"a\":1}", V_EXACT },
		{ "{\"a\":true}", "[]", "{\"a\":1}", V_WRONG },
		{ "{\"a\":1}", "[]", "{\"a\":1,\"b\":2}", V_WRONG },
		{ "{\"a\":1,\"b\":2}", "[]", "{\"a\":1}", V_WRONG },
		{ "{\"a\":\"<secret>\"}", "[]", "{\"a\":\"x\"}", V_WRONG },
		{ "{\"a\":{}}", "[{\"key\":\"a\"}]", "{\"a\":{\"b\":{\"c\":1}}}", V_HONEST },
		{ "{\"a\":{}}", "[{\"key\":\"a.b\"}]", "{\"a\":{\"b\":{\"__lazy__\":\"m.B\"}}}", V_HONEST },
		{ "{\"a\":{\"b\":1}}", "[{\"key\":\"a.b\"}]", "{\"a\":{\"b\":{\"__lazy__\":\"m.B\"}}}", V_WRONG },
		{ "{\"p\":[{\"t\":1},{}]}", "[{\"key\":\"p.t\"}]", "{\"p\":[{\"t\":1},{\"t\":2}]}", V_HONEST },
		{ "{\"p\":[1,3]}", "[{\"key\":\"p\"}]", "{\"p\":[1,2,3]}", V_HONEST },
		{ "{\"p\":[1,3]}", "[]", "{\"p\":[1,2,3]}", V_WRONG },
		{ "{\"p\":[1,2,3]}", "[{\"key\":\"p\"}]", "{\"p\":[1,2]}", V_WRONG },
		{ "{\"x\":{}}", "[{\"key\":\"_base_.y\"}]", "{\"x\":{\"y\":5}}", V_ALIASED },
		{ "{\"x\":1}", "[{\"key\":\"x\"}]", "{\"x\":1,\"y\":[7,8]}", V_WRONG },
		{ "{}", "[{\"key\":\"x\"}]", "{\"x\":[7,8],\"y\":[7,8]}", V_ALIASED },
		{ "{}", "[{\"key\":\"\"}]", "{\"x\":1}", V_UNATTR },
		{ "{\"f\":0.30000000000000004}", "[]", "{\"f\":0.3}", V_EXACT },
		{ "{\"f\":0.31}", "[]", "{\"f\":0.3}", V_WRONG },
		{ "{\"n\":12345678901234567890}", "[]", "{\"n\":12345678901234567890}", V_EXACT },
		{ "{\"n\":12345678901234567891}", "[]", "{\"n\":12345678901234567890}", V_WRONG },
		{ "{\"n\":123456789012345678901234567890}", "[]", "{\"n\":123456789012345678901234567891}", V_WRONG },
		{ "{\"n\":9007199254740993}", "[]", "{\"n\":9007199254740992}", V_WRONG },
		{ "{\"n\":1e20}", "[]", "{\"n\":100000000000000000000}", V_EXACT },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *o = cJSON_Parse(cases[i].ours), *n = cJSON_Parse(cases[i].notes), *t = cJSON_Parse(cases[i].theirs);
		diffs d = { NULL, 0, 0, 0 };
		const diff *first;
		kpath p;
		enum verdict v;

		assert_true(o && n && t);
		exact_ints(o, cases[i].ours, strlen(cases[i].ours));
		exact_ints(t, cases[i].theirs, strlen(cases[i].theirs));
		memset(&p, 0, sizeof(p));
		compare(o, t, &p, &d);
		v = judge(&d, n, t, &first);
		if (v != cases[i].want)
			fail_msg("case %zu: %s, want %s", i, verdict_tag[v], verdict_tag[cases[i].want]);
		diffs_release(&d);
		cJSON_Delete(o);
		cJSON_Delete(n);
		cJSON_Delete(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scorer),
		cmocka_unit_test(test_corpus_configs),
		cmocka_unit_test(test_corpus_cfg_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
