/* envlock ldd: the loader's answer for one file, as a tree or as JSON (envlock/ldd.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/ldd.h"
#include "loader.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

struct envlock_ldd {
	el_root root;
	el_loader *ld;
	el_ld_tree *tree;
};

int envlock_ldd_resolve(envlock_ldd **out, envlock_ctx *ctx, const char *file, const envlock_ldd_opts *opts)
{
	el_ld_opts lo = { opts ? opts->library_path : NULL, NULL, NULL, NULL, NULL };
	envlock_ldd *l = el_xcalloc(1, sizeof(*l));
	int rc;

	*out = NULL;
	if ((rc = el_root_init(&l->root, ctx, opts ? opts->root : NULL)) != 0) {
		free(l);
		return rc;
	}
	if ((rc = el_loader_new(&l->ld, ctx, &l->root)) != 0 ||
	    (rc = el_loader_resolve(&l->tree, ctx, l->ld, file, &lo)) != 0) {
		envlock_ldd_free(l);
		return rc;
	}
	el_loader_near(l->ld, l->tree);
	*out = l;
	return 0;
}

int envlock_ldd_complete(const envlock_ldd *l)
{
	return l->tree->not_found == 0 && l->tree->nmissing == 0;
}

void envlock_ldd_free(envlock_ldd *l)
{
	if (!l)
		return;
	el_ld_tree_free(l->tree);
	el_loader_free(l->ld);
	el_root_release(&l->root);
	free(l);
}

#define RED "\033[31m"
#define DIM "\033[2m"
#define BOLD "\033[1m"
#define OFF "\033[0m"

static void tint(FILE *out, unsigned flags, const char *colour)
{
	if (flags & ENVLOCK_PRINT_COLOR)
		fputs(colour, out);
}

static void print_need(FILE *out, unsigned flags, const el_ld_need *n)
{
	el_term_put(out, n->name);
	if (!n->obj) {
		tint(out, flags, RED);
		fputs(n->error ? " cannot be loaded: " : " not found", out);
		if (n->error)
			el_term_put(out, n->error);
		tint(out, flags, OFF);
		return;
	}
	fputs(" => ", out);
	el_term_put(out, n->obj->path);
	tint(out, flags, DIM);
	fprintf(out, " [%s]", el_ld_how_name(n->obj->how));
	if (!n->expand && n->obj->nneeded)
		fputs(" (see above)", out);
	tint(out, flags, OFF);
}

/* The needs of obj under prefix, depth first, each library's own needs at its first place. */
static void print_tree(FILE *out, unsigned flags, const el_ld_obj *obj, el_buf *prefix)
{
	for (size_t k = 0; k < obj->nneeded; k++) {
		const el_ld_need *n = &obj->needed[k];
		int last = k + 1 == obj->nneeded;
		size_t keep = prefix->len;

		fputs(el_buf_cstr(prefix), out);
		fputs(last ? "\u2514\u2500\u2500 " : "\u251c\u2500\u2500 ", out);
		print_need(out, flags, n);
		fputc('\n', out);
		if (n->obj && n->expand) {
			el_buf_adds(prefix, last ? "    " : "\u2502   ");
			print_tree(out, flags, n->obj, prefix);
			prefix->len = keep;
			prefix->data[keep] = '\0';
		}
	}
}

/*
 * The near misses of the need n of obj: a file with the soname wanted
 * gets the command that makes its link, on a line of its own to paste;
 * another version gets none (a link across versions loads a library
 * of another ABI), and then what the name wanted needs instead.
 */
static void print_near(FILE *out, unsigned flags, const el_ld_obj *obj, const el_ld_need *n)
{
	int same = 0;

	fputs("near misses for ", out);
	tint(out, flags, BOLD);
	el_term_put(out, n->name);
	tint(out, flags, OFF);
	fputs(" (needed by ", out);
	el_term_put(out, obj->path);
	fputs("):\n", out);
	for (size_t i = 0; i < n->nnear; i++) {
		const el_ld_near *m = &n->near[i];

		fputs("  ", out);
		if (m->soname && strcmp(m->soname, n->name) == 0) {
			same = 1;
			el_term_put(out, m->path);
			fputs(" has the soname ", out);
			el_term_put(out, n->name);
			if (m->fix) {
				fputs(", but no link of that name leads to it; this makes the link:\n    ", out);
				el_term_put(out, m->fix);
				fputc('\n', out);
				if (m->ldconfig)
					fputs("    ldconfig alone makes the link too: it scans that folder\n", out);
			} else {
				fputs(", but the ", out);
				el_term_put(out, n->name);
				fputs(" there is a file the loader passes over, not a link to it\n", out);
			}
			continue;
		}
		fputs("another version: ", out);
		el_term_put(out, m->path);
		if (m->soname) {
			fputs(" (soname ", out);
			el_term_put(out, m->soname);
			fputs(")\n", out);
		} else {
			fputs(" (no soname)\n", out);
		}
	}
	if (!same) {
		fputs("  install the library that provides ", out);
		el_term_put(out, n->name);
		fputc('\n', out);
	}
}

int envlock_ldd_print(const envlock_ldd *l, envlock_ctx *ctx, FILE *out, unsigned flags)
{
	const el_ld_tree *t = l->tree;
	el_buf prefix = EL_BUF_FITS(EL_BUF_JOIN_MAX, "four columns per level of the load tree in memory");

	tint(out, flags, BOLD);
	el_term_put(out, t->main->path);
	tint(out, flags, OFF);
	if (!t->main->elf->dynamic)
		fputs(" (statically linked)", out);
	fputc('\n', out);
	el_buf_adds(&prefix, "");
	print_tree(out, flags, t->main, &prefix);
	el_buf_release(&prefix);
	if (t->nmissing) {
		fputs("missing symbol versions:\n", out);
		for (size_t i = 0; i < t->nmissing; i++) {
			const el_ld_missing *m = &t->missing[i];

			fputs("  ", out);
			tint(out, flags, RED);
			el_term_put(out, m->version);
			tint(out, flags, OFF);
			fputs(" of ", out);
			el_term_put(out, m->library);
			fputs(" (", out);
			el_term_put(out, m->library_path);
			fputs("), needed by ", out);
			el_term_put(out, m->file);
			fputc('\n', out);
		}
	}
	for (size_t i = 0; i < t->nobjs; i++)
		for (size_t k = 0; k < t->objs[i]->nneeded; k++) {
			const el_ld_need *n = &t->objs[i]->needed[k];

			if (n->nnear && !n->near_again)
				print_near(out, flags, t->objs[i], n);
		}
	if (t->truncated)
		fprintf(out, "more than %d objects: the rest was not followed\n", EL_LD_MAX_OBJECTS);
	if (ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	return 0;
}

static void json_needs(cJSON *arr, const el_ld_obj *obj)
{
	for (size_t k = 0; k < obj->nneeded; k++) {
		const el_ld_need *n = &obj->needed[k];
		cJSON *j = el_jpush_obj(arr);

		el_jset_str(j, "soname", n->name);
		el_jset_str_or_null(j, "path", n->obj ? n->obj->path : NULL);
		el_jset_str_or_null(j, "realpath", n->obj ? n->obj->realpath : NULL);
		el_jset_str_or_null(j, "found_by", n->obj ? el_ld_how_name(n->obj->how) : NULL);
		if (n->error)
			el_jset_str(j, "error", n->error);
		if (!n->obj) {
			cJSON *near = el_jset_arr(j, "near");

			for (size_t i = 0; i < n->nnear; i++) {
				cJSON *m = el_jpush_obj(near);

				el_jset_str(m, "path", n->near[i].path);
				el_jset_str_or_null(m, "soname", n->near[i].soname);
				el_jset_str_or_null(m, "fix", n->near[i].fix);
			}
		}
		if (n->obj && n->expand)
			json_needs(el_jset_arr(j, "needed"), n->obj);
		else if (n->obj)
			el_jset_bool(j, "repeat", true);
	}
}

int envlock_ldd_print_json(const envlock_ldd *l, envlock_ctx *ctx, FILE *out)
{
	const el_ld_tree *t = l->tree;
	cJSON *doc = el_jnew_obj(), *miss, *nf;
	el_buf b = EL_BUF_INIT(256u << 20);
	int rc = 0;

	el_jset_str(doc, "file", t->main->path);
	el_jset_str_or_null(doc, "interpreter", t->interp ? t->interp->path : NULL);
	json_needs(el_jset_arr(doc, "needed"), t->main);
	miss = el_jset_arr(doc, "missing_versions");
	for (size_t i = 0; i < t->nmissing; i++) {
		cJSON *m = el_jpush_obj(miss);

		el_jset_str(m, "file", t->missing[i].file);
		el_jset_str(m, "version", t->missing[i].version);
		el_jset_str(m, "library", t->missing[i].library);
		el_jset_str(m, "library_path", t->missing[i].library_path);
	}
	nf = el_jset_arr(doc, "not_found");
	for (char **n = t->not_found_names; n && *n; n++)
		el_jpush_str(nf, *n);
	if (t->truncated)
		el_jset_bool(doc, "truncated", true);
	if (el_json_write_term(doc, &b, 2) != 0)
		rc = el_error_set(ctx, ENVLOCK_ELIMIT, "the answer is larger than %u MiB", 256u);
	else if (fwrite(b.data, 1, b.len, out) != b.len || ferror(out))
		rc = el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	el_buf_release(&b);
	cJSON_Delete(doc);
	return rc;
}
