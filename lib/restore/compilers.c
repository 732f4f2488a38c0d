/*
 * Restore step 3: the host compiler nvcc needs. nvcc refuses a gcc newer
 * than its release allows ("unsupported GNU version"), and mmcv-full's
 * ops are built with nvcc in the pip step. This machine's default gcc is
 * judged against the locked default toolkit with the rules engine (rule
 * gcc-too-new-for-nvcc, the rules file's nvcc_gcc table gives the limit);
 * envlock never installs or switches compilers: a gcc that is too new is
 * "manual", with the commands for this machine's OS, naming an installed
 * gcc-N that fits before one to install.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "rules/rules.h"
#include "util/version.h"
#include "util/buf.h"
#include "util/xalloc.h"

/* Does the OS (os-release ID, ID_LIKE) install Debian's packages with apt? */
static bool debian_like(const el_view *v)
{
	static const char *const names[] = { "debian", "ubuntu" };
	const char *id = v->system.os.id, *like = v->system.os.id_like;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (id && strcmp(id, names[i]) == 0)
			return true;
		/* ID_LIKE is a space-separated list */
		for (const char *p = like; p && (p = strstr(p, names[i])) != NULL; p += n)
			if ((p == like || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
				return true;
	}
	return false;
}

/* The newest gcc this machine has whose major is at most max, with its g++ and a gcc-N driver; or NULL. */
static const el_gcc *installed_fit(const el_view *live, long max)
{
	const el_gcc *best = NULL;

	for (size_t i = 0; i < live->compilers.ngcc; i++) {
		const el_gcc *g = &live->compilers.gcc[i];
		long major = g->major ? el_version_major(g->major) : -1;

		if (major < 0 || major > max || !g->gxx || !g->driver)
			continue;
		if (!best || major > el_version_major(best->major))
			best = g;
	}
	return best;
}

/*
 * What to do about a default gcc nvcc refuses (or no gcc at all): use
 * the installed gcc-N that fits, else install gcc-max; make it the
 * default, or name it to the build. why ends the note (the rule).
 */
static void note_commands(envlock_restore *r, el_item *it, const char *cuda, long max, const char *why)
{
	const el_gcc *fit = installed_fit(r->live, max);
	const el_framework *mmcv = el_view_framework(r->lock, "mmcv");
	const char *what = mmcv && mmcv->ops == EL_YES ? "mmcv's ops" : "CUDA extensions";
	bool apt = debian_like(r->live);
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "fixed instructions round a gcc version and the lock's CUDA version");
	char n[32];

	if (!fit && !apt) {
		el_item_note(it, "install gcc and g++ %ld or older (nvcc of CUDA %s accepts up to %ld) from your distribution, "
			     "then build %s with CC=<that gcc> CXX=<its g++> (nvcc: -ccbin <its g++>)%s",
			     max, cuda, max, what, why);
		return;
	}
	if (fit)
		snprintf(n, sizeof(n), "%s", fit->major);
	else
		snprintf(n, sizeof(n), "%ld", max);
	if (fit)
		el_buf_addf(&b, "gcc-%s is installed and nvcc of CUDA %s accepts it: use it rather than install one: ", n, cuda);
	else
		el_buf_addf(&b, "as root: apt-get install gcc-%s g++-%s, then ", n, n);
	if (apt)
		el_buf_addf(&b, "%supdate-alternatives --install /usr/bin/gcc gcc /usr/bin/gcc-%s 100 --slave /usr/bin/g++ g++ /usr/bin/g++-%s; "
			      "or leave the default and ", fit ? "as root, " : "", n, n);
	el_buf_addf(&b, "build %s with CC=gcc-%s CXX=g++-%s (nvcc: -ccbin g++-%s)", what, n, n, n);
	if (!fit)
		el_buf_addf(&b, "; any gcc up to %s works", n);
	el_item_note(it, "%s%s", el_buf_cstr(&b), why);
	el_buf_release(&b);
}

void el_plan_compilers(envlock_restore *r, el_step *s)
{
	const el_toolkit *tk = r->lock->cuda.default_tk;
	const char *version = tk ? tk->version : NULL, *gcc = r->live->compilers.def.version;
	envlock_rules *rules = NULL;
	envlock_findings *findings = NULL;
	el_view hybrid;
	char *rel = NULL;
	el_item *it;
	long max;

	if (!tk || !tk->nvcc.recorded) {
		it = el_step_add(s, ENVLOCK_ITEM_OK, "no CUDA toolkit with nvcc locked");
		el_item_note(it, "nvcc's limit on the host gcc does not apply: the gcc here is not checked");
		return;
	}
	/* the rule reads the toolkit's full version: without one it judges nothing, and neither does this step */
	if (!version || envlock_rules_load_default(&rules, NULL) != 0 || (max = el_rules_nvcc_max_gcc(rules, version)) < 0) {
		it = el_step_add(s, ENVLOCK_ITEM_OK, "nvcc of CUDA %s: the rules give no gcc limit for it",
				 version ? version : tk->release ? tk->release : "(version not recorded)");
		el_item_note(it, "the host gcc is not checked (no row for this release in the rules file's nvcc_gcc table)");
		goto done;
	}
	rel = el_version_prefix(version, 2);
	if (!gcc) {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "no default gcc here: nvcc of CUDA %s needs a host gcc up to %ld",
				 rel, max);
		note_commands(r, it, rel, max, "");
		goto done;
	}
	/*
	 * this machine's gcc with the locked default toolkit, through the
	 * rules: the live view with that one toolkit in place of its own (a
	 * copy of the struct; both views' strings stay where they are)
	 */
	hybrid = *r->live;
	hybrid.cuda = r->lock->cuda;
	hybrid.cuda.toolkits = tk;
	hybrid.cuda.ntoolkits = 1;
	hybrid.arena = NULL; /* the live view's: never freed through the copy */
	findings = el_check_view(rules, &hybrid);
	for (size_t i = 0; i < envlock_findings_count(findings); i++) {
		const envlock_finding *f = envlock_findings_get(findings, i);
		char *why;

		if (strcmp(f->section, "compilers") != 0 || f->severity != ENVLOCK_SEV_BREAKING)
			continue;
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "%s: %s", f->subject, f->message);
		why = el_xasprintf(" (rule %s)", f->rule);
		note_commands(r, it, rel, max, why);
		free(why);
	}
	if (s->n == 0)
		el_step_add(s, ENVLOCK_ITEM_OK, "gcc %s: nvcc of CUDA %s accepts gcc up to %ld", gcc, rel, max);
done:
	free(rel);
	envlock_findings_free(findings);
	envlock_rules_free(rules);
}

bool el_restore_nvcc_gcc(envlock_restore *r, char **cc, char **cxx)
{
	const el_toolkit *tk = r->lock->cuda.default_tk;
	const char *gcc = r->live->compilers.def.version;
	envlock_rules *rules = NULL;
	const el_gcc *fit;
	long max;
	bool named = false;

	*cc = *cxx = NULL;
	if (!tk || !tk->nvcc.recorded || !tk->version || envlock_rules_load_default(&rules, NULL) != 0 ||
	    (max = el_rules_nvcc_max_gcc(rules, tk->version)) < 0)
		goto done;
	/* the default gcc fits (or there is none to judge): the build takes it as it is */
	if (!gcc || el_version_major(gcc) <= max)
		goto done;
	if ((fit = installed_fit(r->live, max)) != NULL) {
		*cc = el_xasprintf("gcc-%s", fit->major);
		*cxx = el_xasprintf("g++-%s", fit->major);
		named = true;
	}
done:
	envlock_rules_free(rules);
	return named;
}
