/* The pip commands of the knowledge's rows, written as the install pages of their era write them. */
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "internal.h"
#include "util/buf.h"
#include "util/version.h"
#include "util/xalloc.h"

const char *el_kb_pip_flag(const char *option)
{
	static const char *const flags[][2] = {
		{ "find-links", "-f" }, { "extra-index-url", "--extra-index-url" }, { "index-url", "--index-url" },
	};

	for (size_t i = 0; option && i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(option, flags[i][0]) == 0)
			return flags[i][1];
	return NULL;
}

char *el_kb_torch_pip(const el_kb_torch_wheel *w)
{
	if (!w->index_option)
		return el_xasprintf("pip install %s %s", w->torch_pin, w->vision_pin);
	return el_xasprintf("pip install %s %s %s %s", w->torch_pin, w->vision_pin, el_kb_pip_flag(w->index_option),
			    w->index_url);
}

char *el_kb_mmcv_pip(const el_kb *kb, const el_kb_mmcv *m, const char *torch, const char *cuda)
{
	char *url, *cmd;

	if (!torch || !el_kb_mmcv_has_wheel(m, torch, cuda))
		return el_xasprintf("pip install %s==%s", m->package, m->version);
	url = el_kb_mmcv_index_url(kb, torch, cuda, NULL);
	cmd = el_xasprintf("pip install %s==%s -f %s", m->package, m->version, url);
	free(url);
	return cmd;
}

const el_kb_mmcv *el_kb_mmcv_newest(const el_kb *kb, const char *lo, const char *hi, bool incl,
				    const char *torch, const char *cuda)
{
	size_t n;
	const el_kb_mmcv *all = el_kb_mmcv_releases(kb, &n);

	for (size_t i = n; i-- > 0;) {
		const el_kb_mmcv *m = &all[i];
		int c = hi ? envlock_version_cmp(m->version, hi) : -1;

		if ((lo && envlock_version_cmp(m->version, lo) < 0) || c > 0 || (c == 0 && !incl))
			continue;
		if (torch && !el_kb_mmcv_has_wheel(m, torch, cuda))
			continue;
		return m;
	}
	return NULL;
}

const el_kb_guard *el_kb_newest_accepting(const el_kb *kb, const char *package, const char *mmcv)
{
	size_t n;
	const el_kb_guard *g = el_kb_guards(kb, package, &n);

	/* a final release first, as pip prefers one; a pre-release only when no final one fits */
	for (int pre = 0; pre < 2; pre++)
		for (size_t i = n; i-- > 0;)
			if ((g[i].mmcv_min || g[i].mmcv_max) && el_kb_guard_accepts_mmcv(&g[i], mmcv) &&
			    el_version_is_prerelease(g[i].version) == (pre == 1))
				return &g[i];
	return NULL;
}

char *el_kb_mmcv_build_pip(const el_kb_mmcv_build *b, const char *version)
{
	el_buf out = EL_BUF_INIT(4096);
	const char *s = b->build;

	while (*s) {
		const char *what = strncmp(s, "{package}", 9) == 0 ? b->package : strncmp(s, "{version}", 9) == 0 ? version : NULL;

		if (what ? el_buf_puts(&out, what) : el_buf_putc(&out, *s)) {
			el_buf_release(&out);
			return el_xstrdup(""); /* past 4 KB: no command of this table is */
		}
		s += what ? 9 : 1;
	}
	return out.data ? el_buf_detach(&out) : el_xstrdup("");
}
