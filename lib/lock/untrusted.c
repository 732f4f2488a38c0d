/*
 * What a lock may hand to programs and the file system (untrusted.h):
 * one bad value stops restore's whole plan, and export, before anything
 * runs or is written.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"
#include "untrusted.h"
#include "view.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_MAX_NAME 200
#define EL_MAX_VERSION 128
#define EL_MAX_URL 4096
#define EL_MAX_PATH 4096

static const char *bad_chars(const char *v, const char *allowed_extra, size_t max)
{
	size_t n = strlen(v);

	if (n == 0)
		return "is empty";
	if (n > max)
		return "is too long";
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return "contains a control character";
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
			continue;
		if (!strchr(allowed_extra, *p))
			return strchr(";&|`$<>\\\"'*?(){}[]!~ \t", *p) ? "contains a shell metacharacter or space"
								   : "contains a character not allowed here";
	}
	return NULL;
}

const char *el_bad_name(const char *v)
{
	const char *why = bad_chars(v, "._+-", EL_MAX_NAME);

	if (!why && (v[0] == '-' || v[0] == '.'))
		why = "starts with '-' or '.'";
	return why;
}

const char *el_bad_version(const char *v)
{
	const char *why = bad_chars(v, "._+!-", EL_MAX_VERSION);

	if (!why && v[0] == '-')
		why = "starts with '-'";
	return why;
}

static const char *bad_components(const char *v)
{
	const char *p = v;

	while (*p) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.')
			return "has a '..' component";
		p += len;
		while (*p == '/')
			p++;
	}
	return NULL;
}

const char *el_bad_abs_path(const char *v)
{
	const char *why = bad_chars(v, "/._+-@=,:%~ ", EL_MAX_PATH);

	if (why)
		return why;
	if (v[0] != '/')
		return "is not an absolute path";
	return bad_components(v);
}

const char *el_bad_rel_path(const char *v)
{
	const char *why = bad_chars(v, "/._+-@=,:%~ ", EL_MAX_PATH);

	if (why)
		return why;
	if (v[0] == '-')
		return "starts with '-'";
	return bad_components(v);
}

const char *el_bad_repo_file(const char *v)
{
	const char *why = el_bad_rel_path(v), *p = v;

	if (why)
		return why;
	if (v[0] == '/')
		return "is an absolute path";
	for (;;) {
		size_t len = strcspn(p, "/");

		if (len == 0)
			return "has an empty component";
		if (len == 1 && p[0] == '.')
			return "has a '.' component";
		/* git's own folder: a hook written there would run at the next commit */
		if (len == 4 && strncasecmp(p, ".git", 4) == 0)
			return "is inside .git";
		if (!p[len])
			return NULL;
		p += len + 1;
	}
}

const char *el_bad_url(const char *v)
{
	static const char *const schemes[] = { "https://", "http://", "file://", "ssh://", "git://",
					       "git+https://", "git+http://", "git+ssh://",
					       "git+file://", NULL };
	const char *why = bad_chars(v, "/._+-@=,:%~#", EL_MAX_URL);

	if (why)
		return why;
	for (size_t i = 0; schemes[i]; i++)
		if (strncmp(v, schemes[i], strlen(schemes[i])) == 0)
			return NULL;
	/* scp-like "git@host:path" and plain local paths (repository remotes) */
	if (v[0] == '/')
		return bad_components(v);
	if (v[0] != '-' && strchr(v, '@') && strchr(v, ':') && strchr(v, '@') < strchr(v, ':'))
		return NULL;
	return "is not an http(s), file, ssh or git URL";
}

/*
 * A URL pip is told to look in (--index-url, --extra-index-url, -f): only
 * http(s) and file, which is what pip's index and find-links pages are;
 * no user or password (save strips them; one here was put in by hand) and,
 * for file:, no '..' component.
 */
const char *el_bad_index_url(const char *v)
{
	static const char *const schemes[] = { "https://", "http://", "file://", NULL };
	const char *why = bad_chars(v, "/._+-@=,:%~#", EL_MAX_URL), *auth = NULL;

	if (why)
		return why;
	for (size_t i = 0; schemes[i] && !auth; i++)
		if (strncmp(v, schemes[i], strlen(schemes[i])) == 0)
			auth = v + strlen(schemes[i]);
	if (!auth)
		return "is not an http(s) or file URL";
	if (memchr(auth, '@', strcspn(auth, "/#")))
		return "has a user name or password in it";
	if (v[0] == 'f')
		return bad_components(auth);
	return NULL;
}

const char *el_bad_hex(const char *v, size_t len)
{
	if (strlen(v) != len)
		return "is not a hex digest of the expected length";
	for (; *v; v++)
		if (!strchr("0123456789abcdef", *v))
			return "is not a lowercase hex digest";
	return NULL;
}

const char *el_bad_sha256(const char *v) { return el_bad_hex(v, 64); }
static const char *bad_md5(const char *v) { return el_bad_hex(v, 32); }
static const char *bad_commit(const char *v)
{
	return strlen(v) == 64 ? el_bad_hex(v, 64) : el_bad_hex(v, 40);
}

void el_lock_refuse(int *failed, envlock_ctx *ctx, const char *field, const char *value, const char *why)
{
	el_buf shown = EL_BUF_INIT(1024);
	char *cut;

	if ((*failed)++)
		return;
	if (!value) {
		el_error_set(ctx, ENVLOCK_EPARSE, "%s: %s", field, why);
		return;
	}
	/* a bounded excerpt of what was refused, escaped like every lock text on a terminal */
	cut = el_xstrndup(value, 40);
	el_term_text(&shown, cut);
	el_error_set(ctx, ENVLOCK_EPARSE, "%s '%s%s: %s", field, el_buf_cstr(&shown), strlen(value) > 40 ? "...'" : "'",
		     why);
	el_buf_release(&shown);
	free(cut);
}

const char *el_lock_str(int *failed, envlock_ctx *ctx, const cJSON *obj, const char *key,
			el_check_fn bad, const char *fmt, ...)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
	const char *why = NULL;
	char field[256];
	va_list ap;
	int n;

	if (!item)
		return NULL;
	if (!cJSON_IsString(item))
		why = "is not a string";
	else if (bad)
		why = bad(item->valuestring);
	if (!why)
		return item->valuestring;
	va_start(ap, fmt);
	n = vsnprintf(field, sizeof(field), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(field))
		snprintf(field + n, sizeof(field) - (size_t)n, ".%s", key);
	el_lock_refuse(failed, ctx, field, cJSON_IsString(item) ? item->valuestring : NULL, why);
	return NULL;
}


static int check_values(envlock_ctx *ctx, const cJSON *lock)
{
	const cJSON *sec, *arr, *el, *sub, *sub_el;
	int failed = 0, i, j;

	/* CUDA: where the toolkit goes */
	sec = cJSON_GetObjectItemCaseSensitive(lock, "cuda");
	el_lock_str(&failed, ctx, sec, "default", el_bad_abs_path, "cuda");
	arr = cJSON_GetObjectItemCaseSensitive(sec, "toolkits");
	EL_EACH(arr, i, el) {
		el_lock_str(&failed, ctx, el, "home", el_bad_abs_path, "cuda.toolkits[%d]", i);
		el_lock_str(&failed, ctx, el, "version", el_bad_version, "cuda.toolkits[%d]", i);
	}
	/* conda: the explicit spec and the prefix */
	sec = cJSON_GetObjectItemCaseSensitive(lock, "conda");
	el_lock_str(&failed, ctx, sec, "prefix", el_bad_abs_path, "conda");
	el_lock_str(&failed, ctx, sec, "root_prefix", el_bad_abs_path, "conda");
	arr = cJSON_GetObjectItemCaseSensitive(sec, "packages");
	EL_EACH(arr, i, el) {
		el_lock_str(&failed, ctx, el, "name", el_bad_name, "conda.packages[%d]", i);
		el_lock_str(&failed, ctx, el, "version", el_bad_version, "conda.packages[%d]", i);
		el_lock_str(&failed, ctx, el, "build", el_bad_name, "conda.packages[%d]", i);
		el_lock_str(&failed, ctx, el, "url", el_bad_url, "conda.packages[%d]", i);
		el_lock_str(&failed, ctx, el, "md5", bad_md5, "conda.packages[%d]", i);
		el_lock_str(&failed, ctx, el, "sha256", el_bad_sha256, "conda.packages[%d]", i);
	}
	/* pip: requirement lines */
	sec = cJSON_GetObjectItemCaseSensitive(lock, "python");
	el_lock_str(&failed, ctx, sec, "executable", el_bad_abs_path, "python");
	sec = cJSON_GetObjectItemCaseSensitive(lock, "pip");
	arr = cJSON_GetObjectItemCaseSensitive(sec, "distributions");
	EL_EACH(arr, i, el) {
		el_lock_str(&failed, ctx, el, "name", el_bad_name, "pip.distributions[%d]", i);
		el_lock_str(&failed, ctx, el, "version", el_bad_version, "pip.distributions[%d]", i);
		el_lock_str(&failed, ctx, el, "source", el_bad_abs_path, "pip.distributions[%d]", i);
		sub = cJSON_GetObjectItemCaseSensitive(el, "direct_url");
		el_lock_str(&failed, ctx, sub, "url", el_bad_url, "pip.distributions[%d].direct_url", i);
		el_lock_str(&failed, ctx, sub, "vcs", el_bad_name, "pip.distributions[%d].direct_url", i);
		el_lock_str(&failed, ctx, sub, "commit_id", el_bad_name, "pip.distributions[%d].direct_url", i);
		sub = cJSON_GetObjectItemCaseSensitive(el, "origin");
		el_lock_str(&failed, ctx, sub, "url", el_bad_index_url, "pip.distributions[%d].origin", i);
	}
	/* pip: the index options export writes and restore hands to pip */
	arr = cJSON_GetObjectItemCaseSensitive(sec, "index_options");
	EL_EACH(arr, i, el)
		el_lock_str(&failed, ctx, el, "url", el_bad_index_url, "pip.index_options[%d]", i);
	/* repositories: where they go, where from, which commit */
	sec = cJSON_GetObjectItemCaseSensitive(lock, "repos");
	arr = cJSON_GetObjectItemCaseSensitive(sec, "repositories");
	EL_EACH(arr, i, el) {
		const char *path = el_lock_str(&failed, ctx, el, "path", NULL, "repos.repositories[%d]", i);

		if (path)
			el_lock_str(&failed, ctx, el, "path", path[0] == '/' ? el_bad_abs_path : el_bad_rel_path,
				    "repos.repositories[%d]", i);
		sub = cJSON_GetObjectItemCaseSensitive(el, "head");
		el_lock_str(&failed, ctx, sub, "commit", bad_commit, "repos.repositories[%d].head", i);
		el_lock_str(&failed, ctx, sub, "branch", el_bad_rel_path, "repos.repositories[%d].head", i);
		sub = cJSON_GetObjectItemCaseSensitive(el, "remotes");
		EL_EACH(sub, j, sub_el) {
			el_lock_str(&failed, ctx, sub_el, "name", el_bad_name, "repos.repositories[%d].remotes[%d]", i, j);
			el_lock_str(&failed, ctx, sub_el, "url", el_bad_url, "repos.repositories[%d].remotes[%d]", i, j);
		}
		/* untracked files: restore writes them inside the work tree */
		sub = cJSON_GetObjectItemCaseSensitive(el, "untracked_files");
		EL_EACH(sub, j, sub_el) {
			el_lock_str(&failed, ctx, sub_el, "path", el_bad_repo_file,
				    "repos.repositories[%d].untracked_files[%d]", i, j);
			el_lock_str(&failed, ctx, sub_el, "sha256", el_bad_sha256,
				    "repos.repositories[%d].untracked_files[%d]", i, j);
		}
	}
	/* configs and checkpoints: where they go */
	static const char *const file_sections[] = { "configs", "checkpoints" };
	for (size_t s = 0; s < 2; s++) {
		sec = cJSON_GetObjectItemCaseSensitive(lock, file_sections[s]);
		arr = cJSON_GetObjectItemCaseSensitive(sec, "files");
		EL_EACH(arr, i, el) {
			const char *path = el_lock_str(&failed, ctx, el, "path", NULL, "%s.files[%d]",
						       file_sections[s], i);

			if (path)
				el_lock_str(&failed, ctx, el, "path",
					    path[0] == '/' ? el_bad_abs_path : el_bad_rel_path,
					    "%s.files[%d]", file_sections[s], i);
			el_lock_str(&failed, ctx, el, "sha256", el_bad_sha256, "%s.files[%d]", file_sections[s], i);
		}
	}
	return failed ? ENVLOCK_EPARSE : 0;
}

int el_lock_check_untrusted(envlock_ctx *ctx, const envlock_lock *given)
{
	/* once per lock: the verdict and its message are kept (a cache, so a const lock is fine) */
	envlock_lock *lock = (envlock_lock *)given;

	if (!lock->untrusted_checked) {
		envlock_ctx *mine = NULL;

		lock->untrusted_checked = 1;
		if (envlock_ctx_new(&mine) != 0)
			el_oom();
		if (check_values(mine, lock->doc) != 0)
			lock->untrusted_why = el_xstrdup(envlock_error_last(mine));
		envlock_ctx_free(mine);
	}
	if (lock->untrusted_why)
		return el_error_set(ctx, ENVLOCK_EPARSE, "%s", lock->untrusted_why);
	return 0;
}

int envlock_lock_edited(const envlock_lock *lock, const char **stored)
{
	const char *was = el_lock_view(lock)->id;

	*stored = NULL;
	if (!was || strcmp(was, envlock_lock_id(lock)) == 0 || el_lock_check_untrusted(NULL, lock) != 0)
		return 0;
	*stored = was;
	return 1;
}
