/*
 * Where the pip distributions came from, beside the direct_url.json pip.c
 * reads (PEP 610): pip's own index options (pip.index_options), as pip
 * combines its configuration files and PIP_* variables, and each
 * distribution's "origin": pip recorded it (direct_url), the configured
 * index serves it (config), or envlock infers it where pip records
 * nothing (inferred): PyTorch's per-variant index for torch 1.10.0+cu102,
 * OpenMMLab's find-links page for mmcv-full.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "knowledge/knowledge.h"
#include "lock/model.h"
#include "lock/untrusted.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* ------------------------------------------------------------------ pip's configuration */

enum { K_INDEX, K_EXTRA, K_FIND, NKEYS };
static const char *const key_names[NKEYS] = { "index-url", "extra-index-url", "find-links" };

/* the sections pip install reads, in the order that lets a later one override an earlier */
enum { S_GLOBAL, S_INSTALL, S_ENV, NSECTIONS };

typedef struct {
	char *val;  /* as written; "" counts as set (it clears what an earlier file said) */
	char *from; /* the file or the variable */
} setting;

typedef struct {
	setting s[NSECTIONS][NKEYS];
} settings;

static void setting_put(setting *s, const char *val, size_t len, const char *from)
{
	free(s->val);
	free(s->from);
	s->val = el_xstrndup(val, len);
	s->from = el_xstrdup(from);
}

/* A key as pip names it (configuration.py, _normalize_name): lowercase, '_' as '-', no leading "--". */
static int key_index(const char *k, size_t n)
{
	char name[32];

	if (n >= 2 && k[0] == '-' && k[1] == '-') {
		k += 2;
		n -= 2;
	}
	if (n >= sizeof(name))
		return -1;
	for (size_t i = 0; i < n; i++)
		name[i] = k[i] == '_' ? '-' : (k[i] >= 'A' && k[i] <= 'Z') ? (char)(k[i] - 'A' + 'a') : k[i];
	name[n] = '\0';
	for (int i = 0; i < NKEYS; i++)
		if (strcmp(name, key_names[i]) == 0)
			return i;
	return -1;
}

/*
 * One pip.conf, as Python's configparser reads it for pip (RawConfigParser:
 * "[section]" lines, "key = value" or "key: value", whole-line '#' and ';'
 * comments, indented lines continuing a value, no inline comments, no
 * interpolation). Only [global] and [install] matter to pip install.
 */
static void settings_release(settings *st)
{
	for (int s = 0; s < NSECTIONS; s++)
		for (int k = 0; k < NKEYS; k++) {
			free(st->s[s][k].val);
			free(st->s[s][k].from);
		}
	memset(st, 0, sizeof(*st));
}

/* what from sets, over what into had; from is left empty */
static void settings_merge(settings *into, settings *from)
{
	for (int s = 0; s < NSECTIONS; s++)
		for (int k = 0; k < NKEYS; k++)
			if (from->s[s][k].val) {
				free(into->s[s][k].val);
				free(into->s[s][k].from);
				into->s[s][k] = from->s[s][k];
				from->s[s][k].val = from->s[s][k].from = NULL;
			}
}

static void read_conf(el_probe *p, const char *path, settings *into)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	el_buf val = EL_BUF_FITS(EL_LIMIT_SMALL, "a value is the file's own bytes, a newline for each line break, "
				 "so no longer than the file, read under the same cap");
	const char *pos, *line = NULL;
	size_t len = 0, lineno = 0;
	int section = -1, key = -1;
	bool in_section = false, in_value = false, bad = false;
	settings mine, *st = &mine;

	if (el_probe_read_text(p, path, &b) != 0) {
		el_buf_release(&b);
		return;
	}
	memset(&mine, 0, sizeof(mine));
	pos = b.data;
	for (;;) {
		bool more = el_next_line(&pos, b.data + b.len, &line, &len);
		const char *s = line, *v;
		size_t sl = more ? len : 0, k, kl, vl;

		lineno++;
		if (more) {
			el_trim(&s, &sl);
			if (sl && (s[0] == '#' || s[0] == ';'))
				continue;
			if (in_value && sl && (line[0] == ' ' || line[0] == '\t')) {
				el_buf_addc(&val, '\n');
				el_buf_add(&val, s, sl);
				continue;
			}
			if (!sl)
				continue;
		}
		/* the value being read ends here */
		if (in_value && key >= 0 && section >= 0)
			setting_put(&st->s[section][key], val.len ? val.data : "", val.len, path);
		in_value = false;
		el_buf_reset(&val);
		if (!more)
			break;
		if (s[0] == '[' && s[sl - 1] == ']') {
			in_section = true;
			section = sl == 8 && memcmp(s, "[global]", 8) == 0 ? S_GLOBAL
				: sl == 9 && memcmp(s, "[install]", 9) == 0 ? S_INSTALL : -1;
			continue;
		}
		k = strcspn(s, "=:");
		if (k >= sl || !in_section) {
			/* configparser refuses such a file, and pip with it: nothing of it counts */
			el_probe_warn(p, "'%s': line %zu is %s, the file is left out", path, lineno,
				      k >= sl ? "not 'key = value'" : "before any [section]");
			bad = true;
			break;
		}
		for (kl = k; kl && (s[kl - 1] == ' ' || s[kl - 1] == '\t'); kl--)
			;
		v = s + k + 1;
		vl = sl - k - 1;
		el_trim(&v, &vl);
		key = key_index(s, kl);
		in_value = true;
		el_buf_add(&val, v, vl);
	}
	if (!bad)
		settings_merge(into, &mine);
	settings_release(&mine);
	el_buf_release(&val);
	el_buf_release(&b);
}

/* An excerpt of a refused value for a warning: bounded, escaped like lock text on a terminal. */
static char *shown(const char *v)
{
	el_buf b = EL_BUF_FITS(1024, "60 bytes escaped, 8 bytes for 2 at most, and '...'");
	char *cut = el_xstrndup(v, 60);

	el_term_text(&b, cut);
	if (strlen(v) > 60)
		el_buf_adds(&b, "...");
	free(cut);
	return el_buf_detach(&b);
}

/*
 * One URL (or absolute path, pip takes those too) of option into arr and
 * p->pip.options, without credentials, once; a bad one is warned about.
 */
static void add_option(el_probe *p, cJSON *arr, int key, const char *token, size_t len, const char *from)
{
	char *raw = el_xstrndup(token, len), *url, *clean;
	const char *why;
	el_pip_found *pip = &p->pip;
	cJSON *it;

	url = raw[0] == '/' ? el_xasprintf("file://%s", raw) : el_xstrdup(raw);
	clean = el_url_strip_credentials(url, false);
	if ((why = el_bad_index_url(clean)) != NULL) {
		char *s = shown(clean);

		el_probe_warn(p, "'%s': %s '%s': %s, not recorded", from, key_names[key], s, why);
		free(s);
		goto done;
	}
	for (size_t i = 0; i < pip->noptions; i++)
		if (strcmp(pip->options[i].option, key_names[key]) == 0 && strcmp(pip->options[i].url, clean) == 0)
			goto done;
	it = el_jpush_obj(arr);
	el_jset_str(it, "option", key_names[key]);
	el_jset_str(it, "url", clean);
	el_jset_str(it, "from", from);
	EL_GROW(pip->options, pip->noptions + 1, pip->options_cap);
	pip->options[pip->noptions++] = (el_pip_option){ key_names[key], el_xstrdup(clean), el_xstrdup(from) };
done:
	free(clean);
	free(url);
	free(raw);
}

static char *join(const char *dir, const char *rest)
{
	return el_xasprintf("%s%s%s", dir, el_ends_with(dir, "/") ? "" : "/", rest);
}

/*
 * The configuration files in the order pip 23 loads them (pip's
 * configuration.py: iter_config_files, OVERRIDE_ORDER; docs, "Configuration"):
 * global ($XDG_CONFIG_DIRS or /etc/xdg, then /etc), user ($HOME/.pip, then
 * $XDG_CONFIG_HOME or $HOME/.config; not read when PIP_CONFIG_FILE names a
 * file that exists), site (sys.prefix, the chosen environment's prefix,
 * which is $VIRTUAL_ENV in a venv), and last PIP_CONFIG_FILE, which
 * overrides them all in pip's code although pip's docs say it is
 * overridden; PIP_CONFIG_FILE=/dev/null reads none.
 */
static void read_files(el_probe *p, settings *st)
{
	const char *envfile = el_probe_getenv(p, "PIP_CONFIG_FILE"), *home = el_probe_getenv(p, "HOME");
	const char *dirs = el_probe_getenv(p, "XDG_CONFIG_DIRS"), *xhome = el_probe_getenv(p, "XDG_CONFIG_HOME");
	const char *site = p->py.prefix ? p->py.prefix : el_probe_getenv(p, "VIRTUAL_ENV");
	el_strvec files = EL_STRVEC_INIT;
	struct stat sb;
	bool envfile_there = envfile && envfile[0] == '/' && el_root_stat(&p->root, envfile, &sb) == 0;

	if (envfile && strcmp(envfile, "/dev/null") == 0)
		return;
	if (!dirs || !*dirs)
		dirs = "/etc/xdg";
	for (const char *d = dirs; *d;) {
		size_t n = strcspn(d, ":");

		if (n && d[0] == '/') {
			char *dir = el_xstrndup(d, n);

			el_strvec_push_owned(&files, join(dir, "pip/pip.conf"));
			free(dir);
		}
		d += n + (d[n] == ':');
	}
	el_strvec_push(&files, "/etc/pip.conf");
	if (!envfile_there && home && home[0] == '/') {
		el_strvec_push_owned(&files, join(home, ".pip/pip.conf"));
		if (xhome && xhome[0] == '/')
			el_strvec_push_owned(&files, join(xhome, "pip/pip.conf"));
		else
			el_strvec_push_owned(&files, join(home, ".config/pip/pip.conf"));
	}
	if (site && site[0] == '/')
		el_strvec_push_owned(&files, join(site, "pip.conf"));
	if (envfile_there)
		el_strvec_push(&files, envfile);
	for (size_t i = 0; i < files.n; i++)
		read_conf(p, files.v[i], st);
	el_strvec_release(&files);
}

void el_probe_pip_config(el_probe *p, cJSON *pip)
{
	static const char *const vars[NKEYS] = { "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS" };
	settings st;
	cJSON *arr = cJSON_CreateArray();

	memset(&st, 0, sizeof(st));
	read_files(p, &st);
	for (int k = 0; k < NKEYS; k++) {
		const char *v = el_probe_getenv(p, vars[k]);

		if (v)
			setting_put(&st.s[S_ENV][k], v, strlen(v), vars[k]);
	}
	/* pip's option parser: [global], then [install], then PIP_*; an empty value is skipped */
	for (int k = 0; k < NKEYS; k++) {
		const setting *use = NULL;

		for (int s = 0; s < NSECTIONS; s++)
			if (st.s[s][k].val && st.s[s][k].val[0])
				use = &st.s[s][k];
		if (!use)
			continue;
		/* index-url holds one URL; the other two are lists split on whitespace, as pip splits them */
		for (const char *t = use->val; *t;) {
			size_t n = k == K_INDEX ? strlen(t) : strcspn(t, " \t\n");

			if (n)
				add_option(p, arr, k, t, n, use->from);
			t += n;
			t += strspn(t, " \t\n");
		}
	}
	settings_release(&st);
	if (p->pip.noptions) {
		el_jset(pip, "index_options", arr);
	} else {
		cJSON_Delete(arr);
	}
}

/* ------------------------------------------------------------------ each distribution's origin */

static bool index_kind(const char *option)
{
	return strcmp(option, "find-links") != 0;
}

/* The configured option for url (a trailing '/' aside) of the same kind (an index, or a page of links), or NULL. */
static const el_pip_option *configured(const el_pip_found *pip, const char *option, const char *url)
{
	size_t ul = strlen(url);

	ul -= ul && url[ul - 1] == '/';
	for (size_t i = 0; i < pip->noptions; i++) {
		const el_pip_option *it = &pip->options[i];
		size_t l = strlen(it->url);

		if (index_kind(it->option) != index_kind(option))
			continue;
		l -= l && it->url[l - 1] == '/';
		if (l == ul && memcmp(it->url, url, l) == 0)
			return it;
	}
	return NULL;
}

static void set_origin(cJSON *d, const el_pip_found *pip, const char *option, const char *url, const char *note)
{
	const el_pip_option *conf = configured(pip, option, url);
	cJSON *o = el_jset_obj(d, "origin");

	if (conf) {
		el_jset_str(o, "kind", "config");
		el_jset_str(o, "option", conf->option);
		el_jset_str(o, "url", conf->url);
		el_jset_str(o, "from", conf->from);
		return;
	}
	el_jset_str(o, "kind", "inferred");
	el_jset_str(o, "option", option);
	el_jset_str(o, "url", url);
	el_jset_str(o, "note", note);
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

/*
 * torch, torchvision, torchaudio with a local version +cuXYZ or +cpu:
 * PyPI has none of those builds; PyTorch's index for the variant (a PEP
 * 503 index, the knowledge's torch_sources pip_index) has them, whatever
 * the release: older install lines name a listing of the same folder.
 */
static bool torch_origin(cJSON *d, const el_pip_found *options, const char *norm, const char *version)
{
	const char *local = strchr(version, '+');
	char *url, *note;

	if (strcmp(norm, "torch") != 0 && strcmp(norm, "torchvision") != 0 && strcmp(norm, "torchaudio") != 0)
		return false;
	if (!local || !((strncmp(local + 1, "cu", 2) == 0 && strlen(local + 3) >= 2 && strlen(local + 3) <= 4 &&
			 all_digits(local + 3, strlen(local + 3))) || strcmp(local + 1, "cpu") == 0))
		return false;
	url = el_kb_torch_index_url(el_kb_builtin(), local + 1, NULL);
	note = el_xasprintf("inferred from the local version %s: PyTorch's index for that variant; pip records no index",
			    local);
	set_origin(d, options, "extra-index-url", url, note);
	free(note);
	free(url);
	return true;
}

/* "1.10.0+cu102" -> "1.10" (malloc'd), or NULL */
static char *major_minor(const char *v)
{
	size_t a = strspn(v, "0123456789"), b;

	if (!a || v[a] != '.')
		return NULL;
	b = strspn(v + a + 1, "0123456789");
	return b ? el_xstrndup(v, a + 1 + b) : NULL;
}

/*
 * mmcv-full, or mmcv 2.x with its ops: OpenMMLab's pre-built wheels, on a
 * find-links page per CUDA and torch release (the knowledge's
 * mmcv_wheel_index), for the torch and the CUDA it was built for that the
 * frameworks section records.
 */
static void mmcv_origin(cJSON *d, const el_pip_found *options, const char *norm, const el_fw_found *torch,
			const el_fw_found *mmcv)
{
	const char *tv = torch ? torch->version : NULL, *cuda = torch ? torch->cuda : NULL;
	char *mm, *rel = NULL, *url, *note;

	if (strcmp(norm, "mmcv-full") != 0 && !(strcmp(norm, "mmcv") == 0 && mmcv && mmcv->ops))
		return;
	if (!tv || !torch->present || (mm = major_minor(tv)) == NULL)
		return;
	if (!torch->cuda_none && (!cuda || (rel = major_minor(cuda)) == NULL)) {
		free(mm);
		return;
	}
	/* the CUDA release ("10.2") or NULL, the CPU build's */
	url = el_kb_mmcv_index_url(el_kb_builtin(), mm, rel, NULL);
	note = torch->cuda_none
		? el_xasprintf("inferred from torch %s without CUDA (frameworks.torch): OpenMMLab's pre-built "
			       "wheels for it; pip records no index", mm)
		: el_xasprintf("inferred from torch %s built for CUDA %s (frameworks.torch): OpenMMLab's pre-built "
			       "wheels for them; pip records no index", mm, cuda);
	set_origin(d, options, "find-links", url, note);
	free(note);
	free(url);
	free(rel);
	free(mm);
}

/* The framework key names in what the frameworks probe handed over, or NULL. */
static const el_fw_found *found_framework(const el_probe *p, const char *key)
{
	for (const el_fw_found *f = p->fw; f && f->key; f++)
		if (strcmp(f->key, key) == 0)
			return f;
	return NULL;
}

void el_probe_pip_origins(el_probe *p)
{
	const el_fw_found *torch = found_framework(p, "torch"), *mmcv = found_framework(p, "mmcv");

	for (size_t i = 0; i < p->pip.n; i++) {
		const el_dist_found *d = &p->pip.v[i];
		const char *installer = d->installer;
		char *norm;

		/* conda's builds record their build folder as a direct URL: not where they came from */
		if ((installer && strcmp(installer, "conda") == 0) ||
		    (d->also_conda && (!installer || strcmp(installer, "pip") != 0)))
			continue;
		if (d->direct_url) {
			el_jset_str(el_jset_obj(d->entry, "origin"), "kind", "direct_url");
			continue;
		}
		if (strcmp(d->kind, "dist-info") != 0 || d->editable)
			continue;
		norm = el_pep503_name(d->name);
		if (!torch_origin(d->entry, &p->pip, norm, d->version))
			mmcv_origin(d->entry, &p->pip, norm, torch, mmcv);
		free(norm);
	}
}
