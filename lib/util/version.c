/*
 * Version comparison for the forms envlock meets: NVIDIA's "418.56" and
 * "450.142.00", CUDA's "10.2.89", PEP 440 ("2.0.0rc4", "1.0.post1",
 * "1.0.dev3", "1.10.0+cu102"), and conda builds.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "util/xalloc.h"
#include "util/version.h"

#define MAX_PARTS 8

typedef struct {
	long release[MAX_PARTS];
	int nrelease;
	int pre_kind;   /* -1 none; 0 dev-only; 1 a/alpha, 2 b/beta, 3 rc/c */
	long pre;
	long post;      /* -1 none */
	long dev;       /* -1 none */
	const char *local; /* after '+', or NULL */
} parsed;

static const char *number(const char *s, long *out)
{
	long v = 0;

	while (isdigit((unsigned char)*s)) {
		if (v < 100000000L)
			v = v * 10 + (*s - '0');
		s++;
	}
	*out = v;
	return s;
}

static void parse(const char *s, parsed *p)
{
	memset(p, 0, sizeof(*p));
	p->pre_kind = -1;
	p->post = -1;
	p->dev = -1;
	if (*s == 'v' || *s == 'V')
		s++;
	while (isdigit((unsigned char)*s)) {
		long v;

		s = number(s, &v);
		if (p->nrelease < MAX_PARTS)
			p->release[p->nrelease++] = v;
		if (*s == '.' && isdigit((unsigned char)s[1]))
			s++;
		else
			break;
	}
	while (*s && *s != '+') {
		if (*s == '.' || *s == '-' || *s == '_') {
			s++;
			continue;
		}
		if (strncmp(s, "rc", 2) == 0 || (*s == 'c' && isdigit((unsigned char)s[1]))) {
			p->pre_kind = 3;
			s = number(s + (s[0] == 'r' ? 2 : 1), &p->pre);
		} else if (strncmp(s, "alpha", 5) == 0 || *s == 'a') {
			p->pre_kind = 1;
			s = number(s + (strncmp(s, "alpha", 5) == 0 ? 5 : 1), &p->pre);
		} else if (strncmp(s, "beta", 4) == 0 || *s == 'b') {
			p->pre_kind = 2;
			s = number(s + (strncmp(s, "beta", 4) == 0 ? 4 : 1), &p->pre);
		} else if (strncmp(s, "post", 4) == 0) {
			s = number(s + 4, &p->post);
		} else if (strncmp(s, "dev", 3) == 0) {
			s = number(s + 3, &p->dev);
		} else {
			s++; /* an unknown letter: ignore it, keep reading */
		}
	}
	if (*s == '+')
		p->local = s + 1;
}

static int cmp_long(long a, long b)
{
	return a < b ? -1 : a > b;
}

int envlock_version_cmp(const char *a, const char *b)
{
	parsed x, y;
	int n, c;

	parse(a, &x);
	parse(b, &y);
	/* release: missing parts count as 0, so 10.2 == 10.2.0 */
	n = x.nrelease > y.nrelease ? x.nrelease : y.nrelease;
	for (int i = 0; i < n; i++) {
		c = cmp_long(i < x.nrelease ? x.release[i] : 0, i < y.nrelease ? y.release[i] : 0);
		if (c)
			return c;
	}
	/* PEP 440: 1.0.dev1 < 1.0a1 < 1.0 < 1.0.post1; a dev release of a pre sorts before it */
	{
		int xk = x.pre_kind >= 0 ? x.pre_kind : (x.dev >= 0 && x.post < 0 ? 0 : 4);
		int yk = y.pre_kind >= 0 ? y.pre_kind : (y.dev >= 0 && y.post < 0 ? 0 : 4);

		if ((c = cmp_long(xk, yk)) != 0)
			return c;
		if ((c = cmp_long(x.pre, y.pre)) != 0)
			return c;
	}
	if ((c = cmp_long(x.post, y.post)) != 0)
		return c;
	/* no dev part sorts after any dev part */
	if ((c = cmp_long(x.dev < 0 ? 1L << 40 : x.dev, y.dev < 0 ? 1L << 40 : y.dev)) != 0)
		return c;
	if (!x.local || !y.local)
		return x.local ? 1 : y.local ? -1 : 0;
	return strcmp(x.local, y.local) < 0 ? -1 : strcmp(x.local, y.local) > 0;
}

bool el_version_is_prerelease(const char *v)
{
	parsed p;

	parse(v, &p);
	return p.pre_kind >= 0 || p.dev >= 0;
}

long el_version_major(const char *v)
{
	long m;

	if (!v || !isdigit((unsigned char)*v))
		return -1;
	number(v, &m);
	return m;
}

char *el_version_local_cuda(const char *v)
{
	const char *plus = v ? strchr(v, '+') : NULL;
	size_t n;

	if (!plus || strncmp(plus + 1, "cu", 2) != 0)
		return NULL;
	plus += 3;
	n = strspn(plus, "0123456789");
	/* "cu102" = 10.2, "cu92" = 9.2, "cu121" = 12.1: the last digit is the minor */
	if (n < 2 || n > 4)
		return NULL;
	return el_xasprintf("%.*s.%c", (int)(n - 1), plus, plus[n - 1]);
}

char *el_conda_build_field(const char *build, const char *field)
{
	size_t fl = strlen(field);

	for (const char *s = build; s && *s; s = strchr(s, '_') ? strchr(s, '_') + 1 : NULL) {
		if (strncmp(s, field, fl) == 0 && isdigit((unsigned char)s[fl]))
			return el_xstrndup(s + fl, strspn(s + fl, "0123456789."));
	}
	return NULL;
}

bool el_version_in_release(const char *v, const char *r)
{
	size_t n = strlen(r);

	if (n >= 2 && strcmp(r + n - 2, ".x") == 0)
		return el_version_major(v) == el_version_major(r);
	return strncmp(v, r, n) == 0 && (v[n] == '\0' || v[n] == '.');
}

char *el_version_prefix(const char *v, int n)
{
	const char *s = v;

	for (int i = 0; i < n && *s; i++) {
		s += strspn(s, "0123456789");
		if (i + 1 < n && *s == '.')
			s++;
		else
			break;
	}
	return el_xstrndup(v, (size_t)(s - v));
}

/* v's release equals the release prefix r ("3.11.2" against "3.11" for ==3.11.*) */
static bool release_prefix_is(const char *v, const char *r)
{
	parsed x, y;

	parse(v, &x);
	parse(r, &y);
	if (y.nrelease == 0 || y.nrelease > x.nrelease)
		return false;
	for (int i = 0; i < y.nrelease; i++)
		if (x.release[i] != y.release[i])
			return false;
	return true;
}

/* One clause, op and version already split: 1, 0 or -1 as el_version_satisfies. */
static int clause(const char *v, const char *op, const char *ver)
{
	size_t n = strlen(ver);
	bool wild = n > 2 && strcmp(ver + n - 2, ".*") == 0;
	int c;

	if (n == 0 || !isdigit((unsigned char)ver[0]) || strspn(ver, "0123456789.*abcdefghijklmnopqrstuvwxyz+!") != n)
		return -1;
	if (strcmp(op, "===") == 0)
		return strcmp(v, ver) == 0;
	if (wild) {
		char *r = el_xstrndup(ver, n - 2);
		int eq = release_prefix_is(v, r);

		free(r);
		if (strcmp(op, "==") == 0)
			return eq;
		if (strcmp(op, "!=") == 0)
			return !eq;
		return -1;
	}
	if (strchr(ver, '*'))
		return -1;
	c = envlock_version_cmp(v, ver);
	if (strcmp(op, "==") == 0)
		return c == 0;
	if (strcmp(op, "!=") == 0)
		return c != 0;
	if (strcmp(op, ">=") == 0)
		return c >= 0;
	if (strcmp(op, "<=") == 0)
		return c <= 0;
	if (strcmp(op, ">") == 0)
		return c > 0;
	if (strcmp(op, "<") == 0)
		return c < 0;
	if (strcmp(op, "~=") == 0) {
		/* ~=3.9.1 is >=3.9.1 and ==3.9.*; it needs two release parts */
		const char *dot = strrchr(ver, '.');
		char *r;
		int eq;

		if (!dot || c < 0)
			return dot ? 0 : -1;
		r = el_xstrndup(ver, (size_t)(dot - ver));
		eq = release_prefix_is(v, r);
		free(r);
		return eq;
	}
	return -1;
}

int el_version_satisfies(const char *v, const char *spec)
{
	static const char *const ops[] = { "===", "~=", "==", "!=", "<=", ">=", "<", ">", NULL };
	const char *s = spec;
	int result = 1;

	if (!v || !spec)
		return -1;
	for (;;) {
		const char *end = strchr(s, ','), *const *op;
		char *text, *t, *ver;
		size_t n;
		int r;

		n = end ? (size_t)(end - s) : strlen(s);
		text = el_xstrndup(s, n);
		t = text + strspn(text, " \t");
		for (op = ops; *op && strncmp(t, *op, strlen(*op)) != 0; op++)
			;
		if (!*op) {
			free(text);
			return -1;
		}
		ver = t + strlen(*op);
		ver += strspn(ver, " \t");
		for (size_t k = strlen(ver); k > 0 && (ver[k - 1] == ' ' || ver[k - 1] == '\t'); k--)
			ver[k - 1] = '\0';
		r = clause(v, *op, ver);
		free(text);
		if (r < 0)
			return -1;
		if (r == 0)
			result = 0;
		if (!end)
			return result;
		s = end + 1;
	}
}
