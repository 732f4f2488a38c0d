/*
 * The rules of conda's link step that are pure functions of their input:
 * prefix replacement, noarch python's paths, the .pyc names, whether a
 * link stays inside the prefix. Sources: data/conda-package-format.json.
 */
#include <stdlib.h>
#include <string.h>

#include "condalink/condalink.h"
#include "util/xalloc.h"

/* conda/core/portability.py replace_prefix, FileMode.text: every occurrence. */
static void replace_text(char **out, size_t *out_len, const char *data, size_t len, const char *ph, size_t phl,
			 const char *prefix, size_t pl, size_t *count)
{
	size_t n = 0, cap, o = 0;
	const char *p = data, *end = data + len, *hit;
	char *buf;

	while ((hit = memmem(p, (size_t)(end - p), ph, phl)) != NULL) {
		n++;
		p = hit + phl;
	}
	cap = len + (pl > phl ? n * (pl - phl) : 0) + 1;
	buf = el_xmalloc(cap);
	for (p = data; (hit = memmem(p, (size_t)(end - p), ph, phl)) != NULL; p = hit + phl) {
		memcpy(buf + o, p, (size_t)(hit - p));
		o += (size_t)(hit - p);
		memcpy(buf + o, prefix, pl);
		o += pl;
	}
	memcpy(buf + o, p, (size_t)(end - p));
	o += (size_t)(end - p);
	buf[o] = '\0';
	*out = buf;
	*out_len = o;
	*count = n;
}

/*
 * conda/core/portability.py binary_replace: each match of
 * placeholder([^\0]*?)\0 (the placeholder up to the end of its C string)
 * has every placeholder in it replaced and is padded with NULs after its
 * terminator, so that every offset after it stays where it was. A
 * placeholder with no NUL after it before the end of the data is not a
 * C string and stays as it is (the regular expression does not match).
 */
static int replace_binary(char *data, size_t len, const char *ph, size_t phl, const char *prefix, size_t pl,
			  size_t *count)
{
	char *p = data, *end = data + len, *hit;
	size_t n = 0;

	if (pl > phl) {
		/* refused before anything changes: is there any string to replace at all? */
		for (hit = memmem(p, len, ph, phl); hit; hit = memmem(hit + 1, (size_t)(end - hit - 1), ph, phl))
			if (memchr(hit + phl, '\0', (size_t)(end - hit - phl)))
				return -1;
		*count = 0;
		return 0;
	}
	while (p < end && (hit = memmem(p, (size_t)(end - p), ph, phl)) != NULL) {
		char *nul = memchr(hit + phl, '\0', (size_t)(end - hit - phl));
		size_t occ = 0, w = 0, slen;
		char *q, *r;

		if (!nul)
			break;
		/* the string from hit to nul (exclusive), each placeholder in it replaced, written in place */
		slen = (size_t)(nul - hit);
		for (q = hit, r = hit; q < nul;) {
			if ((size_t)(nul - q) >= phl && memcmp(q, ph, phl) == 0) {
				memmove(r, prefix, pl);
				r += pl;
				q += phl;
				occ++;
			} else {
				*r++ = *q++;
			}
		}
		w = (size_t)(r - hit);
		memset(r, '\0', slen - w);
		n += occ;
		p = nul + 1;
	}
	*count = n;
	return 0;
}

int el_clink_replace(char **out, size_t *out_len, char *data, size_t len, const char *placeholder,
		     const char *prefix, bool binary, size_t *count)
{
	size_t phl = strlen(placeholder), pl = strlen(prefix);

	*count = 0;
	if (!binary) {
		replace_text(out, out_len, data, len, placeholder, phl, prefix, pl, count);
		return 0;
	}
	*out = data;
	*out_len = len;
	return replace_binary(data, len, placeholder, phl, prefix, pl, count);
}

/*
 * conda/core/portability.py replace_long_shebang, as update_prefix runs
 * it on a text file after the prefix replacement. SHEBANG_REGEX,
 * ^(#!(?:[ ]*)(/(?:\\ |[^ \n\r\t])*)(.*))$ matched at the start of the
 * data: "#!", spaces, the program's path (a backslash escapes a space),
 * and the rest of the first line (its options, a '\r' included).
 */
bool el_clink_long_shebang(char **data, size_t *len)
{
	const char *d = *data, *end = d + *len, *exe, *exe_end, *eol, *name, *q;
	char *line, *out;
	size_t out_len, count;
	bool escaped = false;

	if (*len < 3 || d[0] != '#' || d[1] != '!')
		return false;
	for (q = d + 2; q < end && *q == ' '; q++)
		;
	if (q >= end || *q != '/')
		return false;
	exe = q;
	while (q < end) {
		if (*q == '\\' && q + 1 < end && q[1] == ' ')
			q += 2;
		else if (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')
			break;
		else
			q++;
	}
	exe_end = q;
	eol = memchr(exe_end, '\n', (size_t)(end - exe_end));
	if (!eol)
		eol = end;
	for (name = exe_end; name > exe && name[-1] != '/'; name--)
		;
	/* an escaped space in the program's folder: the kernel would split the path there */
	for (q = exe; q + 1 < name - 1; q++)
		escaped = escaped || (q[0] == '\\' && q[1] == ' ');
	if ((size_t)(eol - d) <= EL_CLINK_SHEBANG_MAX && !escaped)
		return false;
	/* "#!/usr/bin/env NAME OPTIONS", for every copy of the line in the data (bytes.replace) */
	line = el_xasprintf("#!/usr/bin/env %.*s%.*s", (int)(exe_end - name), name, (int)(eol - exe_end), exe_end);
	replace_text(&out, &out_len, d, *len, d, (size_t)(eol - d), line, strlen(line), &count);
	free(line);
	free(*data);
	*data = out;
	*len = out_len;
	return true;
}

char *el_clink_python_xy(const char *version)
{
	const char *dot = version ? strchr(version, '.') : NULL;
	size_t n;

	if (!dot || dot == version || dot[1] < '0' || dot[1] > '9')
		return NULL;
	for (const char *p = version; p < dot; p++)
		if (*p < '0' || *p > '9')
			return NULL;
	n = (size_t)(dot - version) + 1 + strspn(dot + 1, "0123456789");
	return el_xstrndup(version, n);
}

char *el_clink_noarch_path(const char *path, const char *xy)
{
	if (strncmp(path, "site-packages/", 14) == 0)
		return el_xasprintf("lib/python%s/site-packages/%s", xy, path + 14);
	if (strncmp(path, "python-scripts/", 15) == 0)
		return el_xasprintf("bin/%s", path + 15);
	return el_xstrdup(path);
}

char *el_clink_pyc_path(const char *py, const char *xy)
{
	const char *slash = strrchr(py, '/'), *base = slash ? slash + 1 : py;
	size_t dirlen = slash ? (size_t)(slash - py) + 1 : 0, stem = strlen(base) - 3;
	char tag[16];
	size_t t = 0;

	for (const char *p = xy; *p && t + 1 < sizeof(tag); p++)
		if (*p != '.')
			tag[t++] = *p;
	tag[t] = '\0';
	return el_xasprintf("%.*s__pycache__/%.*s.cpython-%s.pyc", (int)dirlen, py, (int)stem, base, tag);
}

bool el_clink_link_inside(const char *rel, const char *target, const char *prefix)
{
	size_t depth = 0, pl = strlen(prefix);
	const char *p;

	if (!*target)
		return false;
	if (target[0] == '/') {
		while (pl > 1 && prefix[pl - 1] == '/')
			pl--;
		/* lexically under the prefix, and no ".." walking back out of it */
		if (strncmp(target, prefix, pl) != 0 || (target[pl] != '/' && target[pl] != '\0'))
			return false;
		target += pl;
		while (*target == '/')
			target++;
		rel = "";
		if (!*target)
			return true;
	}
	/* the folders of rel: where the link is */
	for (p = rel; (p = strchr(p, '/')) != NULL; p++)
		depth++;
	for (p = target; *p;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (depth == 0)
				return false;
			depth--;
		} else if (len && !(len == 1 && p[0] == '.')) {
			depth++;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	return true;
}
