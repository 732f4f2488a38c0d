/*
 * envlock import: a partial lock from `conda list --explicit` or `pip
 * freeze` output. The file is untrusted (a colleague pasted it): capped in
 * size, line length and entries, every line checked, and the first problem
 * reported as "<file>:<line>: <problem>".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lock/model.h"
#include "lock/untrusted.h"
#include "util/error.h"
#include "util/text.h"
#include "util/userpath.h"
#include "util/xalloc.h"

#define IMPORT_MAX_BYTES ((size_t)16 << 20)
#define IMPORT_MAX_LINE 8192
#define IMPORT_MAX_ENTRIES 100000

typedef struct {
	envlock_ctx *ctx;
	const char *path;
	size_t line;
	cJSON *items;     /* packages or distributions */
	cJSON *options;   /* pip's index options, in the file's order (pip.index_options) */
	size_t count;
	/* pip freeze writes "# Editable install with no version control (name==1.0)" before "-e /path" */
	char *pending_name, *pending_version;
} importer;

static int fail(importer *im, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(importer *im, int code, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return el_error_set(im->ctx, code, "%s:%zu: %s", im->path, im->line, msg);
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* PEP 508's name: letters and digits, with . _ - inside. */
static bool pep508_name(const char *s, size_t n)
{
	if (n == 0 || n > 200)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || i == n - 1 || !strchr("._-", c)))
			return false;
	}
	return true;
}

/* A version as a lock holds one: one word, printable ASCII, not too long. */
static bool version_word(const char *s, size_t n)
{
	if (n == 0 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || strchr("\"'\\;,#", s[i]))
			return false;
	return true;
}

static cJSON *new_item(importer *im)
{
	if (im->count >= IMPORT_MAX_ENTRIES)
		return NULL;
	im->count++;
	return el_jpush_obj(im->items);
}

/* ------------------------------------------------------------------ conda */

/* One URL line of an explicit file, by CEP 23's grammar: URL/name-version-build.(conda|tar.bz2)[#md5|#[sha256:]sha256] */
static int conda_line(importer *im, const char *s, size_t n)
{
	char *line = el_xstrndup(s, n), *hash = strrchr(line, '#'), *fn, *dot, *d1, *d2, *url;
	cJSON *pkg;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		if (line[i] <= 0x20 || line[i] == 0x7f) {
			rc = fail(im, ENVLOCK_EPARSE, "spaces or control characters in a package URL");
			goto done;
		}
	if (hash)
		*hash++ = '\0';
	fn = strrchr(line, '/');
	fn = fn ? fn + 1 : line;
	dot = el_ends_with(fn, ".conda") ? fn + strlen(fn) - 6 : el_ends_with(fn, ".tar.bz2") ? fn + strlen(fn) - 8 : NULL;
	if (!dot || dot == fn) {
		rc = fail(im, ENVLOCK_EPARSE, "not a conda package URL (a file name ending in .conda or .tar.bz2)");
		goto done;
	}
	if (hash && !((strlen(hash) == 32 && all_hex(hash, 32)) || (strlen(hash) == 64 && all_hex(hash, 64)) ||
		      (strlen(hash) == 71 && el_starts_with(hash, "sha256:") && all_hex(hash + 7, 64)))) {
		rc = fail(im, ENVLOCK_EPARSE, "'#%.80s' is neither an MD5 nor a SHA-256 (lowercase hex)", hash);
		goto done;
	}
	/* name-version-build: the name may hold dashes, version and build may not */
	*dot = '\0';
	d2 = strrchr(fn, '-');
	if (d2) {
		*d2 = '\0';
		d1 = strrchr(fn, '-');
		*d2 = '-';
	} else {
		d1 = NULL;
	}
	if (!d1 || d1 == fn || d2 == d1 + 1 || !d2[1]) {
		rc = fail(im, ENVLOCK_EPARSE, "'%.120s' is not name-version-build", fn);
		goto done;
	}
	if (!(pkg = new_item(im))) {
		rc = fail(im, ENVLOCK_ELIMIT, "more than %d packages", IMPORT_MAX_ENTRIES);
		goto done;
	}
	el_jset_strn(pkg, "name", fn, (size_t)(d1 - fn));
	el_jset_strn(pkg, "version", d1 + 1, (size_t)(d2 - d1 - 1));
	el_jset_str(pkg, "build", d2 + 1);
	*dot = '.';
	/* a lock never holds credentials: user:password@ and anaconda.org's /t/<token>/ go */
	url = el_url_strip_credentials(line, true);
	el_jset_str(pkg, "url", url);
	if (fn > line + 1) {
		char *ch = el_xstrndup(url, (size_t)(strrchr(url, '/') - url));
		const char *sub = strrchr(ch, '/');

		el_jset_str(pkg, "channel", ch);
		if (sub && sub[1])
			el_jset_str(pkg, "subdir", sub + 1);
		free(ch);
	}
	free(url);
	if (hash && strlen(hash) == 32)
		el_jset_str(pkg, "md5", hash);
	else if (hash)
		el_jset_str(pkg, "sha256", hash + strlen(hash) - 64);
done:
	free(line);
	return rc;
}

/* ------------------------------------------------------------------ pip */

/* Keep the name and version of "# Editable install with no version control (name==1.0)" for the next -e line. */
static void pip_comment(importer *im, const char *s, size_t n)
{
	const char *open = memchr(s, '(', n), *eq, *close;

	free(im->pending_name);
	free(im->pending_version);
	im->pending_name = im->pending_version = NULL;
	if (!open || !el_starts_with(s, "# Editable "))
		return;
	close = memchr(open, ')', n - (size_t)(open - s));
	eq = close ? memchr(open, '=', (size_t)(close - open)) : NULL;
	if (!eq || eq[1] != '=' || !pep508_name(open + 1, (size_t)(eq - open - 1)))
		return;
	im->pending_name = el_xstrndup(open + 1, (size_t)(eq - open - 1));
	eq += eq[2] == '=' ? 3 : 2;
	if (version_word(eq, (size_t)(close - eq)))
		im->pending_version = el_xstrndup(eq, (size_t)(close - eq));
}

/* "git+https://host/repo.git@rev" -> vcs, url, rev (malloc'd into dist's direct_url). */
static bool vcs_url(const char *s, cJSON *du)
{
	static const char *const schemes[] = { "git+", "hg+", "svn+", "bzr+", NULL };
	const char *plus, *at, *scheme = strstr(s, "://");

	for (int i = 0; schemes[i]; i++) {
		if (!el_starts_with(s, schemes[i]))
			continue;
		plus = s + strlen(schemes[i]);
		/* the revision follows the last '@' after the host (user@host is part of the URL) */
		at = strrchr(plus, '@');
		if (!scheme || !at || at < scheme || !at[1] || strchr(at, '/'))
			return false;
		el_jset_strn(du, "vcs", s, strlen(schemes[i]) - 1);
		el_jset_strn(du, "url", plus, (size_t)(at - plus));
		el_jset_str(du, "commit_id", at + 1);
		return true;
	}
	return false;
}

/* "#egg=name&subdirectory=x" off the end of a requirement URL; egg name copied out. */
static char *cut_fragment(char *url, char **egg, char **hash)
{
	char *frag = strchr(url, '#'), *save = NULL;

	*egg = *hash = NULL;
	if (!frag)
		return url;
	*frag++ = '\0';
	for (char *tok = strtok_r(frag, "&", &save); tok; tok = strtok_r(NULL, "&", &save)) {
		if (el_starts_with(tok, "egg="))
			*egg = tok + 4;
		else if (strchr(tok, '=') && !el_starts_with(tok, "subdirectory="))
			*hash = tok;
	}
	return url;
}

static int pip_editable(importer *im, char *arg)
{
	cJSON *dist, *du;
	char *egg, *hash, *name;

	cut_fragment(arg, &egg, &hash);
	name = egg && pep508_name(egg, strlen(egg)) ? egg : im->pending_name;
	if (!name)
		return fail(im, ENVLOCK_EPARSE, "an editable install without a name (no #egg= and no \"# Editable install ... (name==version)\" line before it)");
	if (!(dist = new_item(im)))
		return fail(im, ENVLOCK_ELIMIT, "more than %d distributions", IMPORT_MAX_ENTRIES);
	el_jset_str(dist, "name", name);
	if (im->pending_version && im->pending_name && strcmp(name, im->pending_name) == 0)
		el_jset_str(dist, "version", im->pending_version);
	el_jset_str(dist, "kind", "requirement");
	el_jset_bool(dist, "editable", true);
	du = el_jset_obj(dist, "direct_url");
	if (vcs_url(arg, du)) {
		char *clean = el_url_strip_credentials(el_jget_str(du, "url"), false);

		el_jset_str(du, "url", clean);
		free(clean);
	} else if (arg[0] == '/') {
		char *url = el_xasprintf("file://%s", arg);

		el_jset_str(du, "url", url);
		el_jset_str(dist, "source", arg);
		free(url);
	} else {
		return fail(im, ENVLOCK_EPARSE, "'-e %.120s' is neither a VCS URL (git+...@rev) nor an absolute path", arg);
	}
	el_jset_bool(du, "editable", true);
	return 0;
}

/*
 * An index option line (`--extra-index-url URL`, `-f URL`, as pip freeze
 * copies them from the requirements file it was given, and as people write
 * them by hand): recorded in pip.index_options, so export and restore
 * install the CUDA builds of torch and mmcv-full from where they came.
 * An absolute path is a file:// URL; a relative one, or a URL that is not
 * http(s) or file or that carries credentials, is an error. Returns 1
 * when the line was not one of these.
 */
static int pip_index_option(importer *im, const char *line)
{
	static const struct {
		const char *flag, *option;
	} flags[] = {
		{ "--index-url", "index-url" }, { "-i", "index-url" },
		{ "--extra-index-url", "extra-index-url" },
		{ "--find-links", "find-links" }, { "-f", "find-links" },
	};
	const char *value = NULL, *option = NULL, *why;
	char *url, *clean;
	cJSON *it;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]) && !option; i++) {
		size_t n = strlen(flags[i].flag);

		if (strncmp(line, flags[i].flag, n) != 0)
			continue;
		if (line[n] == '=' || line[n] == ' ' || line[n] == '\t')
			value = line + n + 1;
		else if (n == 2 && line[n])
			value = line + n; /* -fURL, as optparse takes it */
		else
			continue;
		option = flags[i].option;
	}
	if (!option)
		return 1;
	value += strspn(value, " \t=");
	if (!*value || strpbrk(value, " \t"))
		return fail(im, ENVLOCK_EPARSE, "--%s with no single URL", option);
	if (value[0] != '/' && !strstr(value, "://"))
		return fail(im, ENVLOCK_EPARSE, "--%s '%.80s': a relative path (give a URL or an absolute path)", option, value);
	url = value[0] == '/' ? el_xasprintf("file://%s", value) : el_xstrdup(value);
	clean = el_url_strip_credentials(url, false);
	free(url);
	if ((why = el_bad_index_url(clean)) != NULL) {
		int rc = fail(im, ENVLOCK_EPARSE, "--%s '%.80s': %s", option, clean, why);

		free(clean);
		return rc;
	}
	cJSON_ArrayForEach(it, im->options)
		if (strcmp(el_jget_str(it, "option"), option) == 0 && strcmp(el_jget_str(it, "url"), clean) == 0) {
			free(clean);
			return 0;
		}
	it = el_jpush_obj(im->options);
	el_jset_str(it, "option", option);
	el_jset_str(it, "url", clean);
	el_jset_str(it, "from", im->path);
	free(clean);
	return 0;
}

static int pip_line(importer *im, char *line)
{
	char *at, *eq, *semi = strchr(line, ';'), *hashopt;
	cJSON *dist, *du;
	size_t n;

	/* pip-compile's --hash options and environment markers say nothing about what is installed */
	while ((hashopt = strstr(line, " --hash=")) != NULL)
		*hashopt = '\0';
	if (semi)
		*semi = '\0';
	n = strlen(line);
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = '\0';
	if (el_starts_with(line, "-e ") || el_starts_with(line, "--editable ") || el_starts_with(line, "--editable=")) {
		char *arg = line + (line[1] == 'e' ? 3 : 11);

		while (*arg == ' ')
			arg++;
		return pip_editable(im, arg);
	}
	if (el_starts_with(line, "-r") || el_starts_with(line, "-c") || el_starts_with(line, "--requirement") ||
	    el_starts_with(line, "--constraint"))
		return fail(im, ENVLOCK_EPARSE, "'%.40s' names another file; envlock import reads one file", line);
	if (line[0] == '-') {
		int rc = pip_index_option(im, line);

		return rc == 1 ? 0 : rc; /* other options (--trusted-host, --pre, ...) say nothing about what is installed */
	}
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return fail(im, ENVLOCK_EPARSE, "a control character");
	if (!(dist = new_item(im)))
		return fail(im, ENVLOCK_ELIMIT, "more than %d distributions", IMPORT_MAX_ENTRIES);
	if ((at = strstr(line, " @ ")) != NULL) {
		char *url = at + 3, *egg, *hash, *clean;
		size_t nl = (size_t)(at - line);

		if (!pep508_name(line, nl))
			return fail(im, ENVLOCK_EPARSE, "'%.*s' is not a distribution name", (int)(nl > 80 ? 80 : nl), line);
		while (*url == ' ')
			url++;
		if (!*url || strchr(url, ' '))
			return fail(im, ENVLOCK_EPARSE, "'name @ URL' with no single URL");
		el_jset_strn(dist, "name", line, nl);
		el_jset_str(dist, "kind", "requirement");
		el_jset_bool(dist, "editable", false);
		du = el_jset_obj(dist, "direct_url");
		cut_fragment(url, &egg, &hash);
		if (!vcs_url(url, du))
			el_jset_str(du, "url", url);
		clean = el_url_strip_credentials(el_jget_str(du, "url"), false);
		el_jset_str(du, "url", clean);
		free(clean);
		if (hash && strlen(hash) < 200 && version_word(hash, strlen(hash)))
			el_jset_str(du, "archive_hash", hash);
		return 0;
	}
	eq = strstr(line, "==");
	if (!eq) {
		return fail(im, ENVLOCK_EPARSE, "'%.80s' is not pinned: envlock import reads pip freeze output (name==version)", line);
	} else {
		char *name_end = eq, *bracket = memchr(line, '[', (size_t)(eq - line));
		const char *v = eq[2] == '=' ? eq + 3 : eq + 2;

		if (bracket)
			name_end = bracket; /* extras: "name[cuda]==1.0" */
		while (name_end > line && name_end[-1] == ' ')
			name_end--;
		while (*v == ' ')
			v++;
		if (!pep508_name(line, (size_t)(name_end - line)))
			return fail(im, ENVLOCK_EPARSE, "'%.*s' is not a distribution name",
				    (int)((size_t)(name_end - line) > 80 ? 80 : (size_t)(name_end - line)), line);
		if (!version_word(v, strlen(v)) || strstr(v, "=="))
			return fail(im, ENVLOCK_EPARSE, "'%.80s' is not a version", v);
		el_jset_strn(dist, "name", line, (size_t)(name_end - line));
		el_jset_str(dist, "version", v);
		el_jset_str(dist, "kind", "requirement");
		el_jset_bool(dist, "editable", false);
	}
	return 0;
}

/* ------------------------------------------------------------------ the file */

static int cmp_by_name(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	char *nx = el_pep503_name(el_jget_str(x, "name")), *ny = el_pep503_name(el_jget_str(y, "name"));
	int c = strcmp(nx, ny);

	free(nx);
	free(ny);
	if (!c)
		c = strcmp(el_jget_str(x, "version") ? el_jget_str(x, "version") : "",
			   el_jget_str(y, "version") ? el_jget_str(y, "version") : "");
	return c;
}

/* Sort the items by PEP 503 name (a lock's order); a name twice in pip freeze output is an error. */
static int sort_items(importer *im, bool pip)
{
	size_t n = (size_t)cJSON_GetArraySize(im->items), i = 0;
	cJSON **v = el_xcalloc(n + 1, sizeof(*v)), *it;
	int rc = 0;

	while ((it = im->items->child) != NULL)
		v[i++] = cJSON_DetachItemViaPointer(im->items, it);
	qsort(v, n, sizeof(*v), cmp_by_name);
	for (i = 0; i < n; i++) {
		if (pip && rc == 0 && i > 0) {
			char *a = el_pep503_name(el_jget_str(v[i - 1], "name")), *b = el_pep503_name(el_jget_str(v[i], "name"));

			if (strcmp(a, b) == 0)
				rc = el_error_set(im->ctx, ENVLOCK_EPARSE, "%s: '%s' is listed twice", im->path,
						  el_jget_str(v[i], "name"));
			free(a);
			free(b);
		}
		cJSON_AddItemToArray(im->items, v[i]);
	}
	free(v);
	return rc;
}

int envlock_import(envlock_lock **out, envlock_import_kind *kind, envlock_ctx *ctx, const char *path)
{
	el_buf b = EL_BUF_INIT(IMPORT_MAX_BYTES);
	importer im = { ctx, path, 0, NULL, NULL, 0, NULL, NULL };
	const char *pos, *end, *line;
	bool conda = false, explicit_seen = false;
	el_buf joined = EL_BUF_INIT(IMPORT_MAX_LINE * 4);
	cJSON *section = NULL;
	size_t len;
	int rc;

	*out = NULL;
	if ((rc = el_userpath_read(&b, ctx, path, "conda or pip list")) != 0)
		goto done;
	pos = b.data ? b.data : "";
	end = pos + b.len;
	if ((line = memchr(pos, '\0', b.len)) != NULL) {
		im.line = 1;
		for (const char *p = pos; p < line; p++)
			im.line += *p == '\n';
		rc = fail(&im, ENVLOCK_EPARSE, "a NUL byte: not a text file");
		goto done;
	}
	/* which of the two: conda's marker line decides (CEP 23) */
	while (el_next_line(&pos, end, &line, &len)) {
		el_trim(&line, &len);
		if (len == 9 && memcmp(line, "@EXPLICIT", 9) == 0)
			conda = true;
	}
	pos = b.data ? b.data : "";
	section = el_jnew_obj();
	el_jset_str(section, "status", "present");
	im.items = el_jset_arr(section, conda ? "packages" : "distributions");
	im.options = cJSON_CreateArray();
	while (el_next_line(&pos, end, &line, &len)) {
		im.line++;
		if (len > IMPORT_MAX_LINE) {
			rc = fail(&im, ENVLOCK_ELIMIT, "line longer than %d bytes", IMPORT_MAX_LINE);
			goto done;
		}
		if (!el_is_text(line, len)) {
			rc = fail(&im, ENVLOCK_EPARSE, "not text: control characters or bytes that are not UTF-8");
			goto done;
		}
		el_trim(&line, &len);
		if (!len)
			continue;
		if (line[0] == '#') {
			if (!conda)
				pip_comment(&im, line, len);
			continue;
		}
		if (conda) {
			if (len == 9 && memcmp(line, "@EXPLICIT", 9) == 0) {
				explicit_seen = true;
				continue;
			}
			if (!explicit_seen) {
				rc = fail(&im, ENVLOCK_EPARSE, "a package line before @EXPLICIT");
				goto done;
			}
			if ((rc = conda_line(&im, line, len)) != 0)
				goto done;
			continue;
		}
		/* a pip line may go on after a backslash */
		el_buf_reset(&joined);
		while (len && line[len - 1] == '\\') {
			if (el_buf_put(&joined, line, len - 1) != 0) {
				rc = fail(&im, ENVLOCK_ELIMIT, "continued line longer than %d bytes", IMPORT_MAX_LINE * 4);
				goto done;
			}
			if (!el_next_line(&pos, end, &line, &len))
				len = 0;
			im.line++;
			el_trim(&line, &len);
		}
		if (el_buf_put(&joined, line, len) != 0) {
			rc = fail(&im, ENVLOCK_ELIMIT, "continued line longer than %d bytes", IMPORT_MAX_LINE * 4);
			goto done;
		}
		if (joined.len && joined.data[0] != '-' && im.count == 0 && !strstr(joined.data, "==") &&
		    !strstr(joined.data, " @ ")) {
			/* conda list --export writes name=version=build */
			const char *e1 = strchr(joined.data, '='), *e2 = e1 ? strchr(e1 + 1, '=') : NULL;

			if (e1 && e2 && e2 > e1 + 1) {
				rc = fail(&im, ENVLOCK_EPARSE, "name=version=build: a `conda list --export` file; envlock import reads `conda list --explicit` output");
				goto done;
			}
		}
		if ((rc = pip_line(&im, joined.data)) != 0)
			goto done;
		free(im.pending_name);
		free(im.pending_version);
		im.pending_name = im.pending_version = NULL;
	}
	if (conda && !explicit_seen) {
		rc = el_error_set(ctx, ENVLOCK_EPARSE, "%s: no @EXPLICIT line", path);
		goto done;
	}
	if (im.count == 0) {
		rc = el_error_set(ctx, ENVLOCK_EPARSE, "%s: no %s in it: neither `conda list --explicit` nor `pip freeze` output",
				  path, conda ? "packages" : "requirements");
		goto done;
	}
	if ((rc = sort_items(&im, !conda)) != 0)
		goto done;
	el_jset_int(section, conda ? "package_count" : "count", (long long)im.count);
	if (cJSON_GetArraySize(im.options)) {
		el_jset(section, "index_options", im.options);
		im.options = NULL;
	}
	{
		el_lock_section parts[] = { { conda ? "conda" : "pip", section }, { "partial", el_jnew_obj() } };

		el_jset_str(parts[1].value, "from", conda ? "conda-explicit" : "pip-freeze");
		section = NULL;
		*out = el_lock_build(parts, sizeof(parts) / sizeof(parts[0]), NULL, NULL, NULL, true);
	}
	if (kind)
		*kind = conda ? ENVLOCK_IMPORT_CONDA_EXPLICIT : ENVLOCK_IMPORT_PIP_FREEZE;
done:
	cJSON_Delete(section);
	cJSON_Delete(im.options);
	free(im.pending_name);
	free(im.pending_version);
	el_buf_release(&joined);
	el_buf_release(&b);
	return rc;
}
