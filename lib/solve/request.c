/* What a user asks solve for: specs and a config's scopes, checked against what envlock knows. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/facts.h"
#include "envlock/check.h"
#include "lock/model.h"
#include "solve.h"
#include "util/error.h"
#include "util/text.h"
#include "util/version.h"
#include "util/xalloc.h"

/* Does a spec name a pre-release ("mmcv>=2.0.0rc1"), so that pre-releases may meet it (PEP 440)? */
static bool names_prerelease(const char *spec)
{
	for (const char *s = spec; *s; s++)
		if (isdigit((unsigned char)s[0]) && (s[1] == 'a' || s[1] == 'b' || (s[1] == 'r' && s[2] == 'c')))
			return true;
	return false;
}

bool sv_request_allows(const sv_request *r, const char *v)
{
	char *pub;
	int ok;

	if (!*r->spec)
		return !el_version_is_prerelease(v);
	if (el_version_is_prerelease(v) && !names_prerelease(r->spec))
		return false;
	/* a spec without a local part ignores the candidate's: torch==1.10.0 meets 1.10.0+cu102 (PEP 440) */
	if (strchr(r->spec, '+'))
		return el_version_satisfies(v, r->spec) == 1;
	pub = el_xstrndup(v, strcspn(v, "+"));
	ok = el_version_satisfies(pub, r->spec) == 1;
	free(pub);
	return ok;
}

/* The names solve plans, for the message that refuses another. */
static char *known_names(const el_kb *kb)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the knowledge's codebase names");
	size_t n;
	const el_kb_codebase *c = el_kb_codebases(kb, &n);

	el_buf_adds(&b, "python, torch, torchvision, mmcv, mmcv-full, mmengine");
	for (size_t i = 0; i < n; i++)
		el_buf_addf(&b, ", %s", c[i].distribution);
	return el_buf_detach(&b);
}

bool sv_layer_of(const el_kb *kb, const char *canon, sv_kind *kind, const char **package, const el_kb_codebase **cb)
{
	*package = NULL;
	*cb = NULL;
	if (strcmp(canon, "python") == 0)
		*kind = SV_PYTHON;
	else if (strcmp(canon, "torch") == 0)
		*kind = SV_TORCH;
	else if (strcmp(canon, "torchvision") == 0)
		*kind = SV_TORCHVISION;
	else if (strcmp(canon, "mmcv") == 0 || strcmp(canon, "mmcv-full") == 0)
		*kind = SV_MMCV, *package = strcmp(canon, "mmcv") == 0 ? "mmcv" : "mmcv-full";
	else if (strcmp(canon, "mmengine") == 0)
		*kind = SV_MMENGINE;
	else if ((*cb = el_kb_codebase_find(kb, canon)) != NULL)
		*kind = SV_CODEBASE;
	else
		return false;
	return true;
}

/* Does any release the knowledge has for r meet its spec? */
static bool some_release(const sv_request *r, const el_kb *kb, const sv_problem *p)
{
	size_t n;

	switch (r->kind) {
	case SV_PYTHON:
		for (size_t i = 0; p && i < p->npythons; i++)
			if (sv_request_allows(r, p->pythons[i]))
				return true;
		return false;
	case SV_TORCH:
	case SV_TORCHVISION: {
		const el_kb_torch_wheel *w = el_kb_torch_wheels(kb, &n);

		for (size_t i = 0; i < n; i++)
			if (sv_request_allows(r, sv_pin_version(r->kind == SV_TORCH ? w[i].torch_pin : w[i].vision_pin)))
				return true;
		return false;
	}
	case SV_MMCV: {
		const el_kb_mmcv *m = el_kb_mmcv_releases(kb, &n);

		for (size_t i = 0; i < n; i++)
			if ((!r->package || strcmp(r->package, m[i].package) == 0) && sv_request_allows(r, m[i].version))
				return true;
		return false;
	}
	case SV_CODEBASE: {
		const el_kb_guard *g = el_kb_guards(kb, r->codebase->package, &n);

		for (size_t i = 0; i < n; i++)
			if (sv_request_allows(r, g[i].version))
				return true;
		return false;
	}
	case SV_MMENGINE:
		return true; /* the knowledge lists no mmengine releases: pip judges the range */
	}
	return false;
}

static int parse_into(sv_request *r, envlock_ctx *ctx, const el_kb *kb, const sv_problem *p, const char *text,
		      const char *origin)
{
	size_t n = 0;
	char *name, *canon, *names;
	const char *spec;

	memset(r, 0, sizeof(*r));
	while (text[n] && (isalnum((unsigned char)text[n]) || strchr("._-", text[n])))
		n++;
	if (n == 0)
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s: '%s' is not NAME[SPEC] (pip's syntax: mmdet==2.25.1, mmpose>=1.2,<1.4)",
				    origin, text);
	name = el_xstrndup(text, n);
	spec = text + n;
	spec += strspn(spec, " \t");
	canon = el_pep503_name(name);
	r->name = name;
	r->spec = el_xstrdup(spec);
	for (size_t k = strlen(r->spec); k > 0 && isspace((unsigned char)r->spec[k - 1]); k--)
		r->spec[k - 1] = '\0';
	r->origin = el_xstrdup(origin);
	if (!sv_layer_of(kb, canon, &r->kind, &r->package, &r->codebase)) {
		free(canon);
		names = known_names(kb);
		el_error_set(ctx, ENVLOCK_EINVAL, "%s: envlock does not plan '%s' (it plans %s)", origin, name, names);
		free(names);
		return ENVLOCK_EINVAL;
	}
	free(canon);
	if (*r->spec && el_version_satisfies("0", r->spec) < 0)
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s: '%s' is not a version specifier pip reads (==, !=, <=, >=, <, >, ~=, comma-separated)",
				    origin, r->spec);
	r->pinned = strncmp(r->spec, "==", 2) == 0 && !strchr(r->spec, ',') && !strchr(r->spec, '*');
	if (!some_release(r, kb, p)) {
		if (r->kind == SV_MMCV && r->package && strcmp(r->package, "mmcv") == 0) {
			sv_request other = *r;

			other.package = "mmcv-full";
			if (some_release(&other, kb, p))
				return el_error_set(ctx, ENVLOCK_EINVAL,
						    "%s: no mmcv release meets '%s': 1.x with the compiled ops is published as mmcv-full (mmcv 1.x has no ops)",
						    origin, r->spec);
		}
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s: no %s release envlock knows meets '%s'", origin,
				    r->kind == SV_CODEBASE ? r->codebase->distribution : r->package ? r->package : name, r->spec);
	}
	return 0;
}

const char *sv_pin_version(const char *pin)
{
	const char *eq = strstr(pin, "==");

	return eq ? eq + 2 : pin;
}

int sv_request_parse(sv_request *r, envlock_ctx *ctx, const sv_problem *p, const char *text, const char *origin)
{
	return parse_into(r, ctx, p->kb, p, text, origin);
}

void sv_request_release(sv_request *r)
{
	free(r->name);
	free(r->spec);
	free(r->origin);
	memset(r, 0, sizeof(*r));
}

/* Add a request for codebase cb (any release) unless one for it is there. */
static void add_codebase(sv_request *reqs, size_t *n, const el_kb_codebase *cb, const char *origin)
{
	for (size_t i = 0; i < *n; i++)
		if (reqs[i].kind == SV_CODEBASE && reqs[i].codebase == cb)
			return;
	if (*n >= SV_MAX_REQUESTS)
		return;
	memset(&reqs[*n], 0, sizeof(reqs[*n]));
	reqs[*n].kind = SV_CODEBASE;
	reqs[*n].codebase = cb;
	reqs[*n].name = el_xstrdup(cb->distribution);
	reqs[*n].spec = el_xstrdup("");
	reqs[*n].origin = el_xstrdup(origin);
	reqs[*n].from_config = true;
	(*n)++;
}

/* The distribution a module's scope ("mmpretrain.models") comes from, by the openmmlab_scopes table. */
static const el_kb_codebase *scope_codebase(const el_kb *kb, const char *module)
{
	const cJSON *t = el_kb_table(kb, "openmmlab_scopes"), *row, *d;
	size_t n = strcspn(module, ".");

	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		const char *s = el_jget_str(row, "scope");

		if (!s || strlen(s) != n || strncmp(s, module, n) != 0)
			continue;
		cJSON_ArrayForEach(d, el_jget(row, "distributions"))
			if (cJSON_IsString(d) && el_kb_codebase_find(kb, d->valuestring))
				return el_kb_codebase_find(kb, d->valuestring);
	}
	return NULL;
}

int sv_config_requests(sv_request *reqs, size_t *n, envlock_ctx *ctx, const sv_problem *p, const char *path)
{
	const el_kb *kb = p->kb;
	const char *opt = sv_opt(p, "configs");
	el_config_sites none = { NULL, 0 };
	cJSON *res = NULL;
	char *missing = NULL, *origin;
	el_cfg_facts f;
	const el_kb_codebase *cb;
	int rc = el_config_effective_in(&res, ctx, path, NULL, 0, &none, &missing);

	/* a base from a package ('mmdet::...'): that package is needed, whatever else the config says */
	if (rc == ENVLOCK_ENOTFOUND && missing && !strchr(missing, '/') && (cb = el_kb_codebase_find(kb, missing))) {
		origin = el_xasprintf("%s %s: its _base_ comes from the %s package", opt, path, missing);
		add_codebase(reqs, n, cb, origin);
		free(origin);
		free(missing);
		return 0;
	}
	free(missing);
	if (rc != 0)
		return rc;
	memset(&f, 0, sizeof(f));
	el_cfg_facts_read(&f, el_jget(res, "effective"), path);
	for (size_t i = 0; i < f.nneeds; i++) {
		if (!(cb = scope_codebase(kb, f.needs[i].name)))
			continue;
		origin = el_xasprintf("%s %s: %s = '%s'", opt, path, f.needs[i].key, f.needs[i].value);
		add_codebase(reqs, n, cb, origin);
		free(origin);
	}
	/* the dialect: mmengine's configs run on the mmcv 2.x family, mmcv 1.x's on mmcv-full 1.x */
	if (*n < SV_MAX_REQUESTS) {
		sv_request *r = &reqs[(*n)++];

		memset(r, 0, sizeof(*r));
		r->kind = SV_MMCV;
		r->name = el_xstrdup("mmcv");
		r->spec = el_xstrdup(f.mmengine ? ">=2" : "<2");
		r->from_config = true;
		r->origin = el_xasprintf("%s %s: written for %s", opt, path,
					 f.mmengine ? "mmengine (train_dataloader, optim_wrapper), which runs on mmcv 2.x"
						    : "mmcv 1.x's Config (data=dict(...), optimizer), which runs on mmcv-full 1.x");
	}
	el_cfg_facts_free(&f);
	cJSON_Delete(res);
	return 0;
}
