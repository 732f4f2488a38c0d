/* Secrets in text and URLs: which key names hold one, and how their values are masked. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"
#include "util/buf.h"
#include "util/xalloc.h"

#define EL_REDACT_MAX_WORDS 16
#define EL_REDACT_WORD 32
/* a text only shrinks or grows by placeholders; 1 GiB is a lock's own cap */
#define EL_REDACT_TEXT_MAX ((size_t)1 << 30)

static bool word_in(const char *w, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(w, *list) == 0)
			return true;
	return false;
}

/* Split "WANDB_API_KEY", "accessToken", "api-key" into lowercase words. */
static size_t split_words(const char *name, size_t len, char words[][EL_REDACT_WORD])
{
	size_t n = 0, wl = 0;

	for (size_t i = 0; i <= len && n < EL_REDACT_MAX_WORDS; i++) {
		unsigned char c = i < len ? (unsigned char)name[i] : 0;
		/* camelCase: a capital after a small letter starts a word */
		bool boundary = !isalnum(c) || (i > 0 && isupper(c) && islower((unsigned char)name[i - 1]));

		if (boundary && wl > 0) {
			words[n][wl] = 0;
			n++;
			wl = 0;
		}
		if (isalnum(c) && n < EL_REDACT_MAX_WORDS && wl + 1 < EL_REDACT_WORD)
			words[n][wl++] = (char)tolower(c);
	}
	return n;
}

bool el_redact_secret_key(const char *name, size_t len)
{
	static const char *const secret[] = { "secret", "secrets", "password", "passwd", "passphrase",
		"credential", "credentials", "apikey", "accesskey", "secretkey", "privatekey",
		"authtoken", "accesstoken", NULL };
	/* tokenizers name their special tokens pad_token, eos_token, ...: no secret in them */
	static const char *const not_token[] = { "pad", "bos", "eos", "unk", "cls", "sep", "mask", "start",
		"end", "special", "num", "max", "min", "len", "length", "id", "ids", "type", NULL };
	char words[EL_REDACT_MAX_WORDS][EL_REDACT_WORD];
	size_t n = split_words(name, len, words);
	bool token = false;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (word_in(words[i], secret))
			return true;
		if (strcmp(words[i], "token") == 0)
			token = true;
	}
	if (token) {
		for (size_t i = 0; i < n; i++)
			if (word_in(words[i], not_token))
				return false;
		return true;
	}
	/* api_key, access_key, WANDB_API_KEY, key; not keys, key_indicator or meta_keys */
	return strcmp(words[n - 1], "key") == 0;
}

static bool has_prefix_run(const char *s, size_t n, const char *prefix, size_t min, const char *extra)
{
	size_t k = strlen(prefix), run = 0;

	if (n < k + min || strncmp(s, prefix, k))
		return false;
	for (size_t i = k; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && !(extra && strchr(extra, s[i])))
			return false;
		run++;
	}
	return run >= min;
}

bool el_redact_credential(const char *s, size_t n, bool secret_key)
{
	static const char *const gh[] = { "ghp_", "gho_", "ghu_", "ghs_", "ghr_", NULL };
	bool digit = false, alpha = false;

	for (const char *const *g = gh; *g; g++)
		if (has_prefix_run(s, n, *g, 30, NULL))
			return true;
	if (has_prefix_run(s, n, "hf_", 30, NULL) || has_prefix_run(s, n, "github_pat_", 20, "_") ||
	    has_prefix_run(s, n, "glpat-", 20, "-_") || has_prefix_run(s, n, "sk-", 20, "-_") ||
	    has_prefix_run(s, n, "AIza", 35, "-_") ||
	    ((has_prefix_run(s, n, "AKIA", 16, NULL) || has_prefix_run(s, n, "ASIA", 16, NULL)) && n == 20))
		return true;
	if (n > 5 && !strncmp(s, "xox", 3) && strchr("abprs", s[3]) && s[4] == '-' && has_prefix_run(s, n, "", 10, "-"))
		return true;
	/* a JWT: base64url header and payload, both JSON objects ("eyJ") */
	if (n > 20 && !strncmp(s, "eyJ", 3) && memchr(s, '.', n)) {
		const char *dot = memchr(s, '.', n);

		if ((size_t)(dot - s) + 4 < n && !strncmp(dot + 1, "eyJ", 3) &&
		    memchr(dot + 1, '.', n - (size_t)(dot + 1 - s)) && has_prefix_run(s, n, "", 20, "-_."))
			return true;
	}
	if (!secret_key || n < 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (isdigit((unsigned char)s[i]))
			digit = true;
		else if (isalpha((unsigned char)s[i]))
			alpha = true;
		else if (!strchr("-_+/=.", s[i]))
			return false;
	}
	(void)alpha;
	return digit; /* a word (proposals, bbox_head) is a name, not a credential */
}

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* Could [s, e) be a key's name (api_key, HF_TOKEN, api-key)? Else it is a string to look into. */
static bool key_like(const char *s, const char *e)
{
	for (; s < e; s++)
		if (!is_ident((unsigned char)*s) && *s != '-' && *s != '.')
			return false;
	return true;
}

/*
 * A quoted literal starting at p (a quote, after any r/b/u/f prefix):
 * [*vs, *ve) is its content, the return value points past it; NULL
 * when it does not end (a short one at its line's end).
 */
static const char *literal(const char *p, const char **vs, const char **ve)
{
	char q = *p;

	if (p[1] == q && p[2] == q) {
		const char *e = strstr(p + 3, q == '"' ? "\"\"\"" : "'''");

		if (!e)
			return NULL;
		*vs = p + 3, *ve = e;
		return e + 3;
	}
	for (const char *s = p + 1; *s && *s != '\n'; s++) {
		if (*s == '\\' && s[1] && s[1] != '\n') {
			s++;
			continue;
		}
		if (*s == q) {
			*vs = p + 1, *ve = s;
			return s + 1;
		}
	}
	return NULL;
}

/* A string prefix (r, b, u, f, rb, ...) then a quote: where the quote is, or NULL. */
static const char *quote_after_prefix(const char *p)
{
	for (int i = 0; i < 3; i++, p++) {
		if (*p == '\'' || *p == '"')
			return p;
		if (i == 2 || !strchr("rRbBuUfF", *p) || !*p)
			return NULL;
	}
	return NULL;
}

static bool bare_keeps(const char *s, size_t n)
{
	static const char *const keep[] = { "None", "True", "False", "null", "Null", "NULL", "true", "false",
		"~", "yes", "no", "|", ">", NULL };
	char w[8];

	if (n == 0 || s[0] == '$' || memchr(s, '(', n) || memchr(s, '[', n) || memchr(s, '{', n))
		return true;	/* a reference (os.getenv(...), ${VAR}) or an expression, not the secret itself */
	if (n >= sizeof(w))
		return false;
	memcpy(w, s, n);
	w[n] = 0;
	return word_in(w, keep);
}

static void put(el_buf *b, const char *s, size_t n)
{
	if (el_buf_put(b, s, n) != 0)
		abort();	/* EL_REDACT_TEXT_MAX is larger than any lock's text */
}

/* text with the value of each assignment to a secret-looking key masked; NULL when there is none. */
static char *mask_assignments(const char *text, size_t *count)
{
	el_buf b = EL_BUF_INIT(EL_REDACT_TEXT_MAX);
	const char *p = text, *copied = text;
	size_t masked = 0;

	while (*p) {
		const char *ks, *ke, *q, *vs = NULL, *ve = NULL, *end;
		bool quoted = false;

		if (is_ident((unsigned char)*p) && !isdigit((unsigned char)*p) &&
		    (p == text || !is_ident((unsigned char)p[-1]))) {
			ks = p;
			while (is_ident((unsigned char)*p) || (*p == '-' && is_ident((unsigned char)p[1])))
				p++;
			ke = p;
		} else if (*p == '\'' || *p == '"') {
			/* a quoted key ('api_key': ..., os.environ["HF_TOKEN"] = ...) */
			if (!(end = literal(p, &ks, &ke)) || ke - ks > 128 || ke == ks || !key_like(ks, ke)) {
				p++;
				continue;
			}
			p = end;
			quoted = true;
		} else {
			p++;
			continue;
		}
		if (!el_redact_secret_key(ks, (size_t)(ke - ks)))
			continue;
		q = p;
		if (quoted && *q == ']')
			q++;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '=' && q[1] != '=')
			q++;
		else if (*q == ':' && q[1] != '=')
			q++;
		else
			continue;
		for (int annotation = 0; annotation < 2; annotation++) {
			const char *qq;

			while (*q == ' ' || *q == '\t')
				q++;
			if ((qq = quote_after_prefix(q)) != NULL) {
				if (!(end = literal(qq, &vs, &ve)))
					break;
				if (ve > vs && *vs != '$' && el_redact_credential(vs, (size_t)(ve - vs), true)) {
					put(&b, copied, (size_t)(vs - copied));
					put(&b, EL_REDACT_SECRET, strlen(EL_REDACT_SECRET));
					copied = ve;
					masked++;
				}
				p = end;
				break;
			}
			vs = q;
			while (*q && !strchr(" \t\r\n,;)]}#&'\"", *q))
				q++;
			ve = q;
			/* `api_key: str = '...'`: the annotation names a type, the value follows */
			while (*q == ' ' || *q == '\t')
				q++;
			if (annotation == 0 && *q == '=' && q[1] != '=') {
				q++;
				continue;
			}
			if (!bare_keeps(vs, (size_t)(ve - vs)) && el_redact_credential(vs, (size_t)(ve - vs), true)) {
				put(&b, copied, (size_t)(vs - copied));
				put(&b, EL_REDACT_SECRET, strlen(EL_REDACT_SECRET));
				copied = ve;
				masked++;
			}
			p = ve;
			break;
		}
	}
	*count += masked;
	if (masked == 0) {
		el_buf_release(&b);
		return NULL;
	}
	put(&b, copied, strlen(copied));
	return el_buf_detach(&b);
}

/* Every word of the text that is a token by its own shape (hf_..., ghp_..., a JWT), whatever names it. */
static char *mask_tokens(const char *text, size_t *count)
{
	el_buf b = EL_BUF_INIT(EL_REDACT_TEXT_MAX);
	const char *p = text, *copied = text;
	size_t masked = 0;

	while (*p) {
		const char *s = p;

		if (!(isalnum((unsigned char)*p) || *p == '_') || (p > text && (is_ident((unsigned char)p[-1]) ||
									      p[-1] == '-' || p[-1] == '.'))) {
			p++;
			continue;
		}
		while (is_ident((unsigned char)*p) || *p == '-' || *p == '.')
			p++;
		if (el_redact_credential(s, (size_t)(p - s), false)) {
			put(&b, copied, (size_t)(s - copied));
			put(&b, EL_REDACT_SECRET, strlen(EL_REDACT_SECRET));
			copied = p;
			masked++;
		}
	}
	*count += masked;
	if (masked == 0) {
		el_buf_release(&b);
		return NULL;
	}
	put(&b, copied, strlen(copied));
	return el_buf_detach(&b);
}

char *el_redact_text_secrets(const char *text, size_t *count)
{
	/* URLs first: a token in a query string goes with its parameter, not as a placeholder inside it */
	char *urls = el_redact_urls(text, false, count), *masked = mask_assignments(urls ? urls : text, count);
	char *tokens;

	if (masked) {
		free(urls);
		urls = masked;
	}
	tokens = mask_tokens(urls ? urls : text, count);
	if (!tokens)
		return urls;
	free(urls);
	return tokens;
}

static bool scheme_char(int c)
{
	return isalnum(c) || c == '+' || c == '.' || c == '-';
}

static bool query_secret(const char *name, size_t len)
{
	static const char *const extra[] = { "sig", "signature", "auth", "code", "x-amz-signature",
		"x-goog-signature", NULL };
	char w[24];

	if (el_redact_secret_key(name, len))
		return true;
	if (len >= sizeof(w))
		return false;
	for (size_t i = 0; i < len; i++)
		w[i] = (char)tolower((unsigned char)name[i]);
	w[len] = 0;
	return word_in(w, extra);
}

/* One URL [s, e) into b, rewritten; how many things were left out. */
static size_t rewrite_url(el_buf *b, const char *s, const char *e, bool all, bool mark)
{
	const char *auth = strstr(s, "://") + 3, *at = NULL, *a, *path, *query = NULL, *frag = NULL;
	bool conda = false;
	size_t n = 0;

	for (a = auth; a < e && *a != '/' && *a != '?' && *a != '#'; a++)
		if (*a == '@')
			at = a;
	path = a;
	put(b, s, (size_t)(auth - s));
	if (at) {
		size_t ulen = (size_t)(at - auth);
		/* ssh's "git" user and ${VAR} placeholders carry no secret (PEP 610 keeps them) */
		bool keep = (ulen == 3 && memcmp(auth, "git", 3) == 0) ||
			    (ulen > 3 && auth[0] == '$' && auth[1] == '{' && auth[ulen - 1] == '}' &&
			     !memchr(auth, ':', ulen));

		if (keep)
			put(b, auth, (size_t)(at + 1 - auth));
		else
			n++;
		auth = at + 1;
	}
	for (a = auth; a + 8 <= path; a++)
		if (strncmp(a, "anaconda", 8) == 0)
			conda = true;
	put(b, auth, (size_t)(path - auth));
	for (a = path; a < e; a++) {
		if (*a == '#' && !frag)
			frag = a;
		else if (*a == '?' && !query && !frag)
			query = a;
	}
	{
		const char *pe = query ? query : frag ? frag : e;

		for (a = path; a < pe;) {
			/* anaconda.org puts a token in the path: https://conda.anaconda.org/t/<token>/channel */
			if (conda && pe - a > 3 && strncmp(a, "/t/", 3) == 0 && a[3] != '/') {
				const char *te = memchr(a + 3, '/', (size_t)(pe - a - 3));

				a = te ? te : pe;
				n++;
				continue;
			}
			put(b, a, 1);
			a++;
		}
	}
	if (all) {
		if (query || frag)
			n++;
		return n;
	}
	if (query) {
		const char *qe = frag ? frag : e, *p = query + 1;
		bool first = true;

		while (p < qe) {
			const char *pe = p, *eq;

			while (pe < qe && *pe != '&' && *pe != ';')
				pe++;
			eq = memchr(p, '=', (size_t)(pe - p));
			if (query_secret(p, (size_t)((eq ? eq : pe) - p))) {
				n++;
				if (mark) {
					put(b, first ? "?" : "&", 1);
					put(b, p, (size_t)((eq ? eq : pe) - p));
					put(b, "=" EL_REDACT_SECRET, strlen("=" EL_REDACT_SECRET));
					first = false;
				}
			} else if (pe > p) {
				put(b, first ? "?" : "&", 1);
				put(b, p, (size_t)(pe - p));
				first = false;
			}
			p = pe < qe ? pe + 1 : pe;
		}
	}
	if (frag)
		put(b, frag, (size_t)(e - frag));
	return n;
}

/* The length of the placeholder (<secret>, <user1>) at p, else 0: part of a URL, not its end. */
static size_t placeholder_at(const char *p)
{
	const char *e = p + 1;

	if (*p != '<' || !islower((unsigned char)*e))
		return 0;
	while (islower((unsigned char)*e))
		e++;
	while (isdigit((unsigned char)*e))
		e++;
	return *e == '>' && e - p <= 16 ? (size_t)(e + 1 - p) : 0;
}

/*
 * Whether rewrite_url would give [s, e) back as it is: no user or
 * password before the host, no query or fragment, no anaconda.org token
 * path. Most URLs a lock holds (every conda package's) are such, and
 * are then neither copied nor compared.
 */
static bool url_unchanged(const char *s, const char *e)
{
	for (const char *a = s; a < e; a++)
		if (*a == '@' || *a == '?' || *a == '#' || (*a == '/' && e - a >= 3 && a[1] == 't' && a[2] == '/'))
			return false;
	return true;
}

/* the bytes that end a URL in running text (with white space and the end) */
static const unsigned char url_stop[256] = { ['\''] = 1, ['"'] = 1, ['<'] = 1, ['>'] = 1, ['`'] = 1, [')'] = 1,
					     [']'] = 1, ['}'] = 1, ['|'] = 1, ['\\'] = 1 };

static char *urls(const char *s, bool all, bool mark, size_t *count)
{
	el_buf b = EL_BUF_INIT(EL_REDACT_TEXT_MAX);
	const char *copied = s, *p = s, *m;
	size_t n = 0;

	while ((m = strstr(p, "://")) != NULL) {
		const char *start = m, *e = m + 3;
		size_t k;

		while (start > p && scheme_char((unsigned char)start[-1]))
			start--;
		while (start < m && !isalpha((unsigned char)*start))
			start++;
		if (m - start < 2) {
			p = m + 3;
			continue;
		}
		while (*e && !isspace((unsigned char)*e) && (!url_stop[(unsigned char)*e] || placeholder_at(e)))
			e += placeholder_at(e) ? placeholder_at(e) : 1;
		if (url_unchanged(m + 3, e)) {
			p = e;
			continue;
		}
		put(&b, copied, (size_t)(start - copied));
		k = rewrite_url(&b, start, e, all, mark);
		n += k;
		copied = p = e;
	}
	if (n > 0)
		put(&b, copied, strlen(copied));
	/* a URL masked before (name=<secret> in a message) is left as it is, and not counted again */
	if (n == 0 || strcmp(el_buf_cstr(&b), s) == 0) {
		el_buf_release(&b);
		return NULL;
	}
	*count += n;
	return el_buf_detach(&b);
}

char *el_redact_urls(const char *s, bool all, size_t *count)
{
	return urls(s, all, false, count);
}

char *el_redact_message(const char *s)
{
	size_t n = 0;

	return urls(s, false, true, &n);
}
