/* A step's items: adding them, their notes, and the argument lists of their programs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

el_item *el_step_add(el_step *s, envlock_item_state state, const char *fmt, ...)
{
	el_item *it;
	va_list ap;
	char *text;

	EL_GROW(s->items, s->n + 1, s->cap);
	it = &s->items[s->n++];
	memset(it, 0, sizeof(*it));
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		el_oom();
	va_end(ap);
	it->state = state;
	it->text = text;
	it->mode = 0644;
	return it;
}

void el_item_vnote(el_item *it, const char *fmt, va_list ap)
{
	char *note;

	if (vasprintf(&note, fmt, ap) < 0)
		el_oom();
	free(it->note);
	it->note = note;
}

void el_item_note(el_item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	el_item_vnote(it, fmt, ap);
	va_end(ap);
}

void el_args_push(el_strvec *v, const char *first, ...)
{
	va_list ap;

	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		el_strvec_push(v, s);
	va_end(ap);
}

void el_item_release(el_item *it)
{
	free(it->text);
	free(it->note);
	free(it->path);
	free(it->target);
	free(it->seen_target);
	free(it->data);
	el_strvec_release(&it->argv);
	el_strvec_release(&it->envv);
	if (it->free_extra)
		it->free_extra(it->extra);
	memset(it, 0, sizeof(*it));
}

const char *el_restore_option(envlock_restore *r, const char *option)
{
	const char *text = r->opts.option_text ? r->opts.option_text(option) : NULL;

	if (text)
		return text;
	/* the library names no command line's flags: the option by its name */
	el_strvec_push_owned(&r->option_texts, el_xasprintf("the '%s' option", option));
	return r->option_texts.v[r->option_texts.n - 1];
}

/*
 * The file a program inside the tree reads (the item's data, for its
 * in-tree path file), written now beside the journal so that the command
 * a person runs names a file that exists: its path there (absolute, made
 * from the state folder), or NULL when it cannot be written.
 */
static char *save_tree_file(envlock_restore *r, const el_item *it, const char *file)
{
	char *path, *real;

	if (!it->data || el_mkdir_p(r->state_dir, 0700) != 0 || !(real = realpath(r->state_dir, NULL)))
		return NULL;
	path = el_path_join(real, el_path_base(file));
	free(real);
	if (el_write_atomic(NULL, path, it->data, it->data_len, 0644) != 0) {
		free(path);
		return NULL;
	}
	return path;
}

void el_restore_needs_chroot(envlock_restore *r, el_item *it, const char *file_hint)
{
	el_buf cmd = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a command's words and two paths");
	char *old = it->note, *saved = NULL;
	const char *file = el_restore_tree_file_in(r, &it->argv);

	if (file && (saved = save_tree_file(r, it, file)) != NULL)
		el_buf_addf(&cmd, "cp %s %s%s && ", saved, r->root.prefix, file);
	el_buf_addf(&cmd, "chroot %s", r->root.prefix);
	for (size_t i = 0; i < it->argv.n; i++)
		el_buf_addf(&cmd, " %s", it->argv.v[i]);
	it->note = NULL;
	el_item_note(it, "under %s, run from here it would bake this machine's path to the tree into the environment and load this machine's libraries: rerun with %s as root, or run it inside the tree yourself: %s%s%s%s%s",
		     el_restore_option(r, "root"), el_restore_option(r, "chroot"), el_buf_cstr(&cmd),
		     file_hint ? " (" : "", file_hint ? file_hint : "", file_hint ? ")" : "", old ? "; " : "");
	if (old) {
		char *joined = el_xasprintf("%s%s", it->note, old);

		free(it->note);
		it->note = joined;
		free(old);
	}
	it->state = ENVLOCK_ITEM_MANUAL;
	free(saved);
	el_buf_release(&cmd);
}
