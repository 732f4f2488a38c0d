/* The redaction passes over a lock's whole document (redact.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "envlock/redact.h"
#include "lock/model.h"
#include "redact.h"
#include "util/buf.h"
#include "util/vec.h"
#include "util/xalloc.h"

enum { C_SECRETS, C_USERS, C_HOSTS, C_URLS, C_ENV, C_DEVICES, C_COUNT };
static const char *const class_names[C_COUNT] = { "secrets", "users", "hosts", "urls", "env", "devices" };

#define EL_REDACT_NAME_MAX 64
/*
 * Bare user names ("alice" in github.com/alice/det) are searched one by
 * one, so only this many; home folders and GPU UUIDs, however many a
 * lock holds, in one pass over each string.
 */
#define EL_REDACT_BARE_USERS 64

typedef struct {
	const char *name;
	size_t index;
} named;

typedef struct {
	el_strvec users;      /* user names, in the order found: users.v[i] becomes <user{i+1}> */
	char *host, *host_short;
	el_strvec gpus;       /* GPU UUIDs, in the order found: gpus.v[i] becomes GPU-<gpu{i+1}> */
	named *users_by_name, *gpus_by_name;
	size_t count[C_COUNT];
	cJSON *masked;        /* [{config, key}]: the config values masked */
} redactor;

/* cJSON's own strings go back through cJSON_free: a loaded lock's live in its arena (lib/lock/arena.h) */
static void set_string(cJSON *item, char *val)
{
	cJSON_free(item->valuestring);
	item->valuestring = val;
}

static void set_key(cJSON *item, char *key)
{
	if (!(item->type & cJSON_StringIsConst))
		cJSON_free(item->string);
	item->type &= ~cJSON_StringIsConst;
	item->string = key;
}

/*
 * Mask the strings of a config's effective value that have a
 * credential's shape (init_kwargs.api_key='<40 hex digits>'); a key's
 * name alone masks nothing. Each masked value's key path goes in masked.
 */
static void mask_values(cJSON *v, bool under_secret, el_buf *path, cJSON *masked, size_t *n)
{
	size_t at = path->len;

	for (cJSON *c = v ? v->child : NULL; c; c = c->next) {
		bool secret = under_secret || (c->string && el_redact_secret_key(c->string, strlen(c->string)));

		if (c->string) {
			if (path->len)
				el_buf_addc(path, '.');
			el_buf_adds(path, c->string);
		}
		if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
			mask_values(c, secret, path, masked, n);
		} else if ((cJSON_IsString(c) && el_redact_credential(c->valuestring, strlen(c->valuestring), secret)) ||
			   (secret && el_jraw_int(c) && el_redact_credential(el_jraw_int(c), strlen(el_jraw_int(c)), true))) {
			/* a numeric key past 2^53 is kept as its digits (a Raw node): it becomes the string */
			if (!cJSON_IsString(c))
				c->type = cJSON_String | (c->type & cJSON_StringIsConst);
			set_string(c, el_xstrdup(EL_REDACT_SECRET));
			el_jpush_str(masked, path->data ? el_buf_cstr(path) : "");
			(*n)++;
		} else if (cJSON_IsString(c)) {
			char *u = el_redact_urls(c->valuestring, false, n);

			if (u) {
				set_string(c, u);
				el_jpush_str(masked, path->data ? el_buf_cstr(path) : "");
			}
		}
		path->len = at;
		if (path->data)
			path->data[at] = '\0';
	}
}

/* Every string value in the document through f (keys too with keys). */
static void walk_strings(cJSON *v, char *(*f)(const char *, redactor *), redactor *r, bool keys)
{
	for (cJSON *c = v ? v->child : NULL; c; c = c->next) {
		char *s;

		if (keys && c->string && (s = f(c->string, r)) != NULL)
			set_key(c, s);
		if (cJSON_IsString(c) && (s = f(c->valuestring, r)) != NULL)
			set_string(c, s);
		else if (cJSON_IsObject(c) || cJSON_IsArray(c))
			walk_strings(c, f, r, keys);
	}
}

static char *urls_secret(const char *s, redactor *r)
{
	return el_redact_urls(s, false, &r->count[C_SECRETS]);
}

static char *message(const char *s, redactor *r)
{
	char *m = el_redact_message(s);

	r->count[C_SECRETS] += m != NULL;
	return m;
}

static char *urls_all(const char *s, redactor *r)
{
	return el_redact_urls(s, true, &r->count[C_URLS]);
}

/* --cfg-options as given, "log_config.hooks.1.init_kwargs.api_key=...": the value masked when it is a credential. */
static void mask_cfg_options(cJSON *opts, cJSON *masked, size_t *n)
{
	for (cJSON *c = cJSON_IsArray(opts) ? opts->child : NULL; c; c = c->next) {
		const char *s = cJSON_IsString(c) ? c->valuestring : NULL, *eq, *last;

		if (!s || !(eq = strchr(s, '=')) || strcmp(eq + 1, EL_REDACT_SECRET) == 0 || !eq[1])
			continue;
		for (last = eq; last > s && last[-1] != '.'; last--)
			;
		if (el_redact_credential(eq + 1, strlen(eq + 1), el_redact_secret_key(last, (size_t)(eq - last)))) {
			char *key = el_xasprintf("--cfg-options %.*s", (int)(eq - s), s);

			el_jpush_str(masked, key);
			free(key);
			set_string(c, el_xasprintf("%.*s=%s", (int)(eq - s), s, EL_REDACT_SECRET));
			(*n)++;
		}
	}
}

static void secrets_pass(cJSON *doc, redactor *r)
{
	cJSON *files = el_jget(el_jget(doc, "configs"), "files");

	for (cJSON *f = cJSON_IsArray(files) ? files->child : NULL; f; f = f->next) {
		cJSON *text = el_jget(f, "text");
		char *s;

		if (cJSON_IsString(text) && (s = el_redact_text_secrets(text->valuestring, &r->count[C_SECRETS])) != NULL)
			set_string(text, s);
		{
			el_buf path = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a key path of the config's effective value");
			cJSON *masked = cJSON_CreateArray();

			mask_values(el_jget(el_jget(f, "effective"), "value"), false, &path, masked, &r->count[C_SECRETS]);
			mask_cfg_options(el_jget(el_jget(f, "effective"), "cfg_options"), masked, &r->count[C_SECRETS]);
			el_buf_release(&path);
			/* which values were masked, by key path, as the config names them */
			for (cJSON *m = masked->child; m; m = m->next) {
				cJSON *rec = el_jpush_obj(r->masked);

				el_jset_str(rec, "config", el_jget_str(f, "path") ? el_jget_str(f, "path") : "");
				el_jset_str(rec, "key", m->valuestring);
			}
			cJSON_Delete(masked);
		}
	}
	/*
	 * git remotes, pip index URLs, conda channels, and any URL a text
	 * quotes; the warnings keep the name of what they refused
	 */
	for (cJSON *c = doc->child; c; c = c->next)
		if (c->string && strcmp(c->string, "warnings") == 0)
			walk_strings(c, message, r, false);
		else if (cJSON_IsObject(c) || cJSON_IsArray(c))
			walk_strings(c, urls_secret, r, false);
}

static bool name_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

static bool word_char(int c)
{
	return isalnum(c) || c == '_';
}

static void add_user(redactor *r, const char *s, size_t n)
{
	char name[EL_REDACT_NAME_MAX + 1];

	/* "." and ".." are folders, and a name ends before a trailing dot ("/home/alice.") */
	while (n > 0 && s[n - 1] == '.')
		n--;
	if (n == 0 || n > EL_REDACT_NAME_MAX || !isalnum((unsigned char)s[0]))
		return;
	memcpy(name, s, n);
	name[n] = 0;
	if (!el_strvec_has(&r->users, name))
		el_strvec_push(&r->users, name);
}

/* /home/NAME, /Users/NAME and ~NAME in s: the users whose names the lock holds. */
static void find_users(const char *s, redactor *r)
{
	static const char *const homes[] = { "/home/", "/Users/", NULL };

	for (const char *const *h = homes; *h; h++)
		for (const char *p = s; (p = strstr(p, *h)) != NULL;) {
			const char *e;

			p += strlen(*h);
			for (e = p; name_char((unsigned char)*e); e++)
				;
			add_user(r, p, (size_t)(e - p));
		}
	for (const char *p = s; (p = strchr(p, '~')) != NULL;) {
		const char *e;

		if (p > s && word_char((unsigned char)p[-1])) {
			p++;
			continue;
		}
		for (e = ++p; name_char((unsigned char)*e); e++)
			;
		if (e > p && (!*e || *e == '/' || *e == ':' || isspace((unsigned char)*e) || *e == '\'' || *e == '"'))
			add_user(r, p, (size_t)(e - p));
	}
}

static int by_key(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

/*
 * The members of v in the order the lock file has them (keys sorted; an
 * array's in its order): a probed lock and the same lock loaded from its
 * file number their placeholders alike. malloc'd; *n is their number.
 */
static cJSON **members(const cJSON *v, size_t *n)
{
	cJSON **m;
	size_t k = 0;

	*n = 0;
	for (const cJSON *c = v ? v->child : NULL; c; c = c->next)
		(*n)++;
	m = el_xcalloc(*n ? *n : 1, sizeof(*m));
	for (cJSON *c = v ? v->child : NULL; c; c = c->next)
		m[k++] = c;
	if (cJSON_IsObject(v))
		qsort(m, *n, sizeof(*m), by_key);
	return m;
}

#define EL_GPU_UUID_LEN 36	/* "GPU-" then 8-4-4-4-12 hex digits, as nvidia-smi and /proc/driver/nvidia print it */

static bool gpu_uuid_at(const char *p)
{
	if (strncmp(p, "GPU-", 4) != 0)
		return false;
	for (int i = 0; i < EL_GPU_UUID_LEN; i++) {
		char c = p[4 + i];

		if ((i == 8 || i == 13 || i == 18 || i == 23) ? c != '-' : !isxdigit((unsigned char)c))
			return false;
	}
	return !isalnum((unsigned char)p[4 + EL_GPU_UUID_LEN]);
}

/* The GPUs' UUIDs in s: each names one physical board, so one machine. */
static void find_gpus(const char *s, redactor *r)
{
	for (const char *p = s; (p = strstr(p, "GPU-")) != NULL; p += 4) {
		char uuid[4 + EL_GPU_UUID_LEN + 1];

		if (!gpu_uuid_at(p))
			continue;
		memcpy(uuid, p, sizeof(uuid) - 1);
		uuid[sizeof(uuid) - 1] = 0;
		for (char *u = uuid; *u; u++)
			*u = (char)tolower((unsigned char)*u);
		if (!el_strvec_has(&r->gpus, uuid))
			el_strvec_push(&r->gpus, uuid);
	}
}

static void find_users_walk(const cJSON *v, redactor *r)
{
	size_t n;
	cJSON **m = members(v, &n);

	for (size_t i = 0; i < n; i++) {
		const cJSON *c = m[i];

		if (c->string)
			find_users(c->string, r);
		if (cJSON_IsString(c)) {
			find_users(c->valuestring, r);
			find_gpus(c->valuestring, r);
		} else
			find_users_walk(c, r);
	}
	free(m);
}

/* Accounts every machine has: their names are no one's, so only their home folders are replaced. */
static bool generic_user(const char *name)
{
	static const char *const generic[] = { "root", "ubuntu", "debian", "centos", "fedora", "admin", "user",
		"ec2-user", "conda", "jovyan", "vagrant", "runner", "docker", "linuxbrew", "shared", "local",
		"share", "lib", "bin", "opt", "home", NULL };

	for (const char *const *g = generic; *g; g++)
		if (strcmp(name, *g) == 0)
			return true;
	return false;
}

static bool after_home(const char *s, const char *at)
{
	return (at - s >= 6 && strncmp(at - 6, "/home/", 6) == 0) || (at - s >= 7 && strncmp(at - 7, "/Users/", 7) == 0) ||
	       (at - s >= 1 && at[-1] == '~');
}

/*
 * s with each whole-word occurrence of word replaced by placeholder
 * (only right after a home folder with home_only); malloc'd, or NULL
 * when there was none.
 */
static char *replace_word(const char *s, const char *word, bool icase, bool home_only, const char *placeholder,
			  size_t *n)
{
	size_t wl = strlen(word), found = 0;
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	const char *copied = s;

	for (const char *p = s; *p; p++) {
		if ((icase ? strncasecmp(p, word, wl) : strncmp(p, word, wl)) != 0)
			continue;
		if ((p > s && word_char((unsigned char)p[-1])) || word_char((unsigned char)p[wl]) ||
		    (home_only && !after_home(s, p)))
			continue;
		if (el_buf_put(&b, copied, (size_t)(p - copied)) != 0 || el_buf_puts(&b, placeholder) != 0)
			abort();
		copied = p + wl;
		p += wl - 1;
		found++;
	}
	if (!found) {
		el_buf_release(&b);
		return NULL;
	}
	if (el_buf_puts(&b, copied) != 0)
		abort();
	*n += found;
	return el_buf_detach(&b);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

static named *sorted_names(const el_strvec *v)
{
	named *m = el_xcalloc(v->n ? v->n : 1, sizeof(*m));

	for (size_t i = 0; i < v->n; i++)
		m[i] = (named){ v->v[i], i };
	qsort(m, v->n, sizeof(*m), by_name);
	return m;
}

/* The index of [s, s + len) among the n names, or -1. */
static long find_name(const named *m, size_t n, const char *s, size_t len)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(m[mid].name, s, len);

		if (c == 0 && m[mid].name[len])
			c = 1;
		if (c == 0)
			return (long)m[mid].index;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* s with every home folder's user and every GPU UUID replaced, in one pass; NULL when none. */
static char *homes_and_gpus(const char *s, redactor *r)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	const char *copied = s;
	size_t found = 0;

	for (const char *p = s; *p;) {
		const char *name = NULL, *e;
		char ph[40];
		long i;

		if (strncmp(p, "/home/", 6) == 0)
			name = p + 6;
		else if (strncmp(p, "/Users/", 7) == 0)
			name = p + 7;
		else if (*p == '~' && (p == s || !word_char((unsigned char)p[-1])))
			name = p + 1;
		if (name) {
			for (e = name; name_char((unsigned char)*e); e++)
				;
			while (e > name && e[-1] == '.')
				e--;
			if (e > name && (i = find_name(r->users_by_name, r->users.n, name, (size_t)(e - name))) >= 0) {
				snprintf(ph, sizeof(ph), "<user%ld>", i + 1);
				if (el_buf_put(&b, copied, (size_t)(name - copied)) != 0 || el_buf_puts(&b, ph) != 0)
					abort();
				copied = p = e;
				r->count[C_USERS]++;
				found++;
				continue;
			}
		}
		if (*p == 'G' && gpu_uuid_at(p)) {
			char uuid[4 + EL_GPU_UUID_LEN + 1];

			for (int k = 0; k < 4 + EL_GPU_UUID_LEN; k++)
				uuid[k] = (char)tolower((unsigned char)p[k]);
			uuid[4 + EL_GPU_UUID_LEN] = 0;
			if ((i = find_name(r->gpus_by_name, r->gpus.n, uuid, strlen(uuid))) >= 0 &&
			    (p == s || !word_char((unsigned char)p[-1]))) {
				snprintf(ph, sizeof(ph), "GPU-<gpu%ld>", i + 1);
				if (el_buf_put(&b, copied, (size_t)(p - copied)) != 0 || el_buf_puts(&b, ph) != 0)
					abort();
				copied = p = p + 4 + EL_GPU_UUID_LEN;
				r->count[C_DEVICES]++;
				found++;
				continue;
			}
		}
		p++;
	}
	if (!found) {
		el_buf_release(&b);
		return NULL;
	}
	if (el_buf_puts(&b, copied) != 0)
		abort();
	return el_buf_detach(&b);
}

static char *people(const char *s, redactor *r)
{
	char *cur = homes_and_gpus(s, r), *next, ph[32];

	/* a generic account's name (ubuntu, conda) is no one's: only its home folder was replaced */
	for (size_t i = 0; i < r->users.n && i < EL_REDACT_BARE_USERS; i++) {
		if (generic_user(r->users.v[i]))
			continue;
		snprintf(ph, sizeof(ph), "<user%zu>", i + 1);
		if ((next = replace_word(cur ? cur : s, r->users.v[i], false, false, ph, &r->count[C_USERS])) != NULL) {
			free(cur);
			cur = next;
		}
	}
	if (r->host && (next = replace_word(cur ? cur : s, r->host, true, false, "<host1>", &r->count[C_HOSTS])) != NULL) {
		free(cur);
		cur = next;
	}
	if (r->host_short &&
	    (next = replace_word(cur ? cur : s, r->host_short, true, false, "<host1>", &r->count[C_HOSTS])) != NULL) {
		free(cur);
		cur = next;
	}
	return cur;
}

/* Each environment value becomes <envN>, the same N for the same value. */
static void env_pass(cJSON *doc, redactor *r)
{
	cJSON *vars = el_jget(el_jget(doc, "env"), "variables");
	el_strvec seen = EL_STRVEC_INIT;
	size_t n;
	cJSON **m = members(cJSON_IsObject(vars) ? vars : NULL, &n);

	for (size_t k = 0; k < n; k++) {
		cJSON *c = m[k];
		size_t i;

		if (!cJSON_IsString(c) || strncmp(c->valuestring, "<env", 4) == 0)
			continue;
		for (i = 0; i < seen.n && strcmp(seen.v[i], c->valuestring) != 0; i++)
			;
		if (i == seen.n)
			el_strvec_push(&seen, c->valuestring);
		set_string(c, el_xasprintf("<env%zu>", i + 1));
		r->count[C_ENV]++;
	}
	free(m);
	el_strvec_release(&seen);
}

static void host_names(cJSON *doc, redactor *r)
{
	cJSON *h = el_jget(el_jget(doc, "host"), "hostname");
	const char *dot;

	if (!cJSON_IsString(h) || !*h->valuestring || h->valuestring[0] == '<')
		return;
	if (strcasecmp(h->valuestring, "localhost") != 0) {
		r->host = el_xstrdup(h->valuestring);
		/* the short name of vision-gpu07.lab.example.org is the one prompts and logs show */
		if ((dot = strchr(r->host, '.')) != NULL && dot - r->host >= 3)
			r->host_short = el_xstrndup(r->host, (size_t)(dot - r->host));
	}
	set_string(h, el_xstrdup("<host1>"));
	r->count[C_HOSTS]++;
}

/* The top-level "redacted" member: the classes applied and what each replaced, added to any earlier pass's. */
static void record(cJSON *doc, const redactor *r, bool all)
{
	cJSON *old = el_jget(doc, "redacted"), *m = el_jnew_obj(), *classes, *counts;
	bool was_all = el_jget_bool(old, "all", false);
	long long total[C_COUNT];

	for (int c = 0; c < C_COUNT; c++)
		total[c] = (long long)r->count[c] + el_jget_int(el_jget(old, "counts"), class_names[c], 0);
	all = all || was_all;
	if (!all && total[C_SECRETS] == 0) {
		cJSON_Delete(m);
		return;
	}
	el_jset_bool(m, "all", all);
	/* the config values masked, by config and key path: what a reader of the lock no longer sees */
	if (cJSON_GetArraySize(r->masked) || cJSON_GetArraySize(el_jget(old, "masked"))) {
		cJSON *list = el_jset_arr(m, "masked");

		for (cJSON *o = cJSON_IsArray(el_jget(old, "masked")) ? el_jget(old, "masked")->child : NULL; o; o = o->next)
			cJSON_AddItemToArray(list, cJSON_Duplicate(o, true));
		for (cJSON *o = r->masked ? r->masked->child : NULL; o; o = o->next)
			cJSON_AddItemToArray(list, cJSON_Duplicate(o, true));
	}
	classes = el_jset_arr(m, "classes");
	counts = el_jset_obj(m, "counts");
	for (int c = 0; c < C_COUNT; c++) {
		if (!all && c != C_SECRETS)
			continue;
		el_jpush_str(classes, class_names[c]);
		el_jset_int(counts, class_names[c], total[c]);
	}
	if (old)
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "redacted");
	el_jset(doc, "redacted", m);
}

static void redactor_release(redactor *r)
{
	cJSON_Delete(r->masked);
	el_strvec_release(&r->users);
	el_strvec_release(&r->gpus);
	free(r->users_by_name);
	free(r->gpus_by_name);
	free(r->host);
	free(r->host_short);
}

size_t el_redact_secrets(cJSON *doc)
{
	redactor r;

	memset(&r, 0, sizeof(r));
	r.masked = cJSON_CreateArray();
	secrets_pass(doc, &r);
	record(doc, &r, false);
	redactor_release(&r);
	return r.count[C_SECRETS];
}

void el_redact_all(cJSON *doc)
{
	redactor r;
	cJSON *vars = el_jget(el_jget(doc, "env"), "variables");
	static const char *const login[] = { "USER", "LOGNAME", "USERNAME", NULL };

	memset(&r, 0, sizeof(r));
	r.masked = cJSON_CreateArray();
	secrets_pass(doc, &r);
	/* the login name, when the environment recorded it, even if no path holds it */
	for (const char *const *l = login; *l; l++) {
		const char *v = el_jget_str(vars, *l);

		if (v && v[0] != '<')
			add_user(&r, v, strlen(v));
	}
	find_users_walk(doc, &r);
	r.users_by_name = sorted_names(&r.users);
	r.gpus_by_name = sorted_names(&r.gpus);
	host_names(doc, &r);
	env_pass(doc, &r);
	walk_strings(doc, urls_all, &r, false);
	/* keys too: some sections are keyed by path */
	walk_strings(doc, people, &r, true);
	record(doc, &r, true);
	redactor_release(&r);
}

int envlock_lock_redact(envlock_lock *lock)
{
	el_redact_all(lock->doc);
	el_lock_touch(lock);
	/* the stored id is the redacted content's before anyone builds a view that points at it */
	el_lock_settle(lock);
	return 0;
}
