/*
 * Apply a restore plan: the "do" items in order, a journal line as each
 * step starts and ends (so a rerun can say where the last one stopped),
 * every program's output in the log, and nothing deleted — what would be
 * replaced is moved aside (or copied, for files rewritten in place) to
 * NAME.envlock-bak-<time> first. The journal is read back here too, for
 * the planner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plan.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/xalloc.h"

void el_item_fail(el_item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	el_item_vnote(it, fmt, ap);
	va_end(ap);
	it->state = ENVLOCK_ITEM_FAILED;
}

static void now_iso(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One line "<stamp><text>\n" on fd; the journal is fsync'd line by line. */
static void stamped_line(int fd, const char *stamp_fmt, bool sync, const char *fmt, va_list ap)
{
	char when[32], stamp[64], *line;
	int n;

	if (fd < 0)
		return; /* no journal or log was opened (a unit test, a dry run) */
	now_iso(when, sizeof(when));
	/* written, not dprintf'd: glibc's dprintf leaks its buffer on an fd it cannot seek */
	n = snprintf(stamp, sizeof(stamp), stamp_fmt, when);
	(void)el_write_all(fd, stamp, n > 0 && (size_t)n < sizeof(stamp) ? (size_t)n : 0);
	if ((n = vasprintf(&line, fmt, ap)) < 0)
		el_oom();
	(void)el_write_all(fd, line, (size_t)n);
	(void)el_write_all(fd, "\n", 1);
	free(line);
	if (sync)
		fsync(fd);
}

void el_apply_log(el_apply *ap, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	stamped_line(ap->log_fd, "[%s] ", false, fmt, va);
	va_end(va);
}

void el_apply_journal(el_apply *ap, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	stamped_line(ap->journal_fd, "%s ", true, fmt, va);
	va_end(va);
}

/* A free name host_path.envlock-bak-<time>[.N] (malloc'd). */
static char *backup_name(el_apply *ap, const char *host_path)
{
	struct stat st;
	char *name = el_xasprintf("%s.envlock-bak-%s", host_path, ap->stamp);

	for (int n = 1; lstat(name, &st) == 0; n++) {
		free(name);
		name = el_xasprintf("%s.envlock-bak-%s.%d", host_path, ap->stamp, n);
	}
	return name;
}

int el_apply_aside(el_apply *ap, el_item *it, const char *host_path, char **aside)
{
	char *name = backup_name(ap, host_path);

	if (rename(host_path, name) != 0) {
		el_item_fail(it, "'%s': cannot move it aside: %s", host_path, el_strerror(errno));
		free(name);
		return -1;
	}
	el_apply_log(ap, "moved '%s' aside to '%s'", host_path, name);
	el_apply_journal(ap, "aside %s %s", host_path, name);
	if (aside)
		*aside = name;
	else
		free(name);
	return 0;
}

int el_apply_backup_copy(el_apply *ap, el_item *it, const char *host_path)
{
	char *name = backup_name(ap, host_path);
	int rc = 0;

	/* a hard link keeps the old contents: the new file replaces the name by rename */
	if (link(host_path, name) != 0) {
		int in = open(host_path, O_RDONLY | O_CLOEXEC), out, failed;
		char chunk[65536];
		ssize_t n = 0;

		out = in < 0 ? -1 : open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		failed = out < 0;
		while (!failed && (n = read(in, chunk, sizeof(chunk))) > 0)
			failed = el_write_all(out, chunk, (size_t)n) != 0;
		/* a read error, a short write or a failed fsync: no copy, so the original stays */
		if (failed || n < 0 || fsync(out) != 0) {
			el_item_fail(it, "'%s': cannot keep a copy: %s", host_path, el_strerror(errno));
			if (out >= 0)
				unlink(name);
			rc = -1;
		}
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
	}
	if (rc == 0) {
		el_apply_log(ap, "kept a copy of '%s' as '%s'", host_path, name);
		el_apply_journal(ap, "backup %s %s", host_path, name);
	}
	free(name);
	return rc;
}

int el_apply_write_input(el_apply *ap, el_item *it, const char *host_path, bool in_tree)
{
	char *dir = el_path_dir(host_path);
	struct stat st;

	/* a tree without /tmp gets one as a system's is: world-writable, sticky */
	if (in_tree && lstat(dir, &st) != 0 && (mkdir(dir, 01777) != 0 || chmod(dir, 01777) != 0)) {
		el_item_fail(it, "'%s': cannot create the folder: %s", dir, el_strerror(errno));
		free(dir);
		return -1;
	}
	free(dir);
	if (el_write_atomic(ap->ctx, host_path, it->data ? it->data : "", it->data_len, 0644) != 0) {
		el_item_fail(it, "%s", envlock_error_last(ap->ctx));
		return -1;
	}
	return 0;
}

void el_apply_remove_input(el_apply *ap, const char *host_path)
{
	if (unlink(host_path) == 0)
		el_apply_log(ap, "removed '%s'", host_path);
	else
		el_apply_log(ap, "'%s': cannot remove it: %s", host_path, el_strerror(errno));
}

int el_apply_run_argv(el_item *it, el_apply *ap)
{
	int status = -1, rc, child_errno = 0;

	if (it->chroot)
		el_apply_log(ap, "run inside the tree (chroot '%s', chdir /):", ap->r->root.prefix);
	else
		el_apply_log(ap, "run:");
	for (size_t i = 0; i < it->argv.n; i++)
		dprintf(ap->log_fd, " '%s'", it->argv.v[i]);
	for (size_t i = 0; i < it->envv.n; i++)
		dprintf(ap->log_fd, " [env %s]", it->envv.v[i]);
	dprintf(ap->log_fd, "\n");
	if (it->chroot)
		rc = el_spawn_logged_in(ap->r->root.prefix, (const char *const *)it->argv.v,
					(const char *const *)it->envv.v, ap->log_fd, &status, &child_errno);
	else
		rc = el_spawn_logged((const char *const *)it->argv.v, (const char *const *)it->envv.v,
				     ap->log_fd, &status);
	if (rc == ENVLOCK_ENOTFOUND && it->chroot) {
		el_item_fail(it, "'%s': cannot be started inside '%s': %s", it->argv.v[0], ap->r->root.prefix,
			     el_strerror(child_errno));
		return -1;
	}
	if (rc == ENVLOCK_ENOTFOUND) {
		el_item_fail(it, "'%s': cannot be started", it->argv.v[0]);
		return -1;
	}
	if (rc != 0 || status != 0) {
		el_item_fail(it, "'%s' exited with status %d (its output is in %s)", it->argv.v[0], status,
			     ap->r->log_path);
		return -1;
	}
	el_apply_log(ap, "'%s' exited 0", it->argv.v[0]);
	return 0;
}

/*
 * Is what is at it->path still what the plan saw (it->seen)? The plan was
 * made from the probe's view; this one lstat (and readlink) just before
 * the link is replaced keeps apply from moving aside what appeared since.
 */
static bool still_seen(el_item *it)
{
	struct stat st;
	char *now = NULL;
	ssize_t n;
	bool same;

	if (it->seen == EL_SEEN_ANY)
		return true;
	if (lstat(it->path, &st) != 0 || !S_ISLNK(st.st_mode))
		same = it->seen == EL_SEEN_NO_LINK;
	else if (it->seen == EL_SEEN_NO_LINK)
		same = false;
	else {
		now = el_xcalloc(1, (size_t)st.st_size + 2);
		n = readlink(it->path, now, (size_t)st.st_size + 1);
		same = n >= 0 && (size_t)n <= (size_t)st.st_size && strcmp(now, it->seen_target) == 0;
	}
	if (!same)
		el_item_fail(it, "'%s' changed after the plan was made (planned against %s%s, now %s%s); run restore again",
			     it->path, it->seen == EL_SEEN_LINK ? "a link to " : "no link",
			     it->seen == EL_SEEN_LINK ? it->seen_target : "", now ? "a link to " : "",
			     now ? now : it->seen == EL_SEEN_LINK ? "no link" : "a link");
	free(now);
	return same;
}

int el_apply_symlink(el_item *it, el_apply *ap)
{
	struct stat st;

	if (!still_seen(it))
		return -1;
	if (lstat(it->path, &st) == 0 && el_apply_aside(ap, it, it->path, NULL) != 0)
		return -1;
	if (symlink(it->target, it->path) != 0) {
		el_item_fail(it, "'%s': cannot create the link: %s", it->path, el_strerror(errno));
		return -1;
	}
	el_apply_log(ap, "linked '%s' -> '%s'", it->path, it->target);
	return 0;
}

int el_apply_write(el_item *it, el_apply *ap)
{
	struct stat st;
	char *dir = el_path_dir(it->path);
	int rc;

	if (el_mkdir_p(dir, 0755) != 0) {
		el_item_fail(it, "'%s': cannot create the folder: %s", dir, el_strerror(errno));
		free(dir);
		return -1;
	}
	free(dir);
	if (lstat(it->path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			if (el_apply_aside(ap, it, it->path, NULL) != 0)
				return -1;
		} else if (el_apply_backup_copy(ap, it, it->path) != 0) {
			return -1;
		}
	}
	rc = el_write_atomic(ap->ctx, it->path, it->data ? it->data : "", it->data_len, it->mode);
	if (rc != 0) {
		el_item_fail(it, "%s", envlock_error_last(ap->ctx));
		return -1;
	}
	el_apply_log(ap, "wrote '%s' (%zu bytes)", it->path, it->data_len);
	return 0;
}

int envlock_restore_apply(envlock_restore *r, envlock_ctx *ctx, FILE *progress)
{
	el_apply ap = { r, ctx, progress, -1, -1, NULL, "" };
	time_t t = time(NULL);
	struct tm tm;
	int failed = 0;

	gmtime_r(&t, &tm);
	strftime(ap.stamp, sizeof(ap.stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (el_mkdir_p(r->state_dir, 0700) != 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", r->state_dir, el_strerror(errno));
	ap.log_fd = open(r->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	ap.journal_fd = open(r->journal_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (ap.log_fd < 0 || ap.journal_fd < 0) {
		int e = errno;

		if (ap.log_fd >= 0)
			close(ap.log_fd);
		if (ap.journal_fd >= 0)
			close(ap.journal_fd);
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s",
				    ap.log_fd < 0 ? r->log_path : r->journal_path, el_strerror(e));
	}
	el_apply_log(&ap, "envlock %s: restore of %s", envlock_version(), r->id);
	el_apply_journal(&ap, "begin %s", r->id);
	for (int i = 0; i < EL_STEP_COUNT && !failed; i++) {
		el_step *s = &r->steps[i];
		bool started = false;

		for (size_t k = 0; k < s->n && !failed; k++) {
			el_item *it = &s->items[k];

			if (it->state != ENVLOCK_ITEM_DO || !it->run)
				continue;
			if (!started) {
				el_apply_journal(&ap, "start %s", s->name);
				started = true;
			}
			ap.step = s->name;
			if (progress) {
				fprintf(progress, "envlock: %s: ", s->name);
				el_term_put(progress, it->text);
				fputc('\n', progress);
				fflush(progress);
			}
			el_apply_log(&ap, "%s: %s", s->name, it->text);
			if (it->run(it, &ap) != 0) {
				if (it->state != ENVLOCK_ITEM_FAILED)
					el_item_fail(it, "failed");
				el_apply_log(&ap, "%s: failed: %s", s->name, it->note);
				failed = 1;
			} else {
				it->state = ENVLOCK_ITEM_DONE;
			}
		}
		if (started)
			el_apply_journal(&ap, "end %s %s", s->name, failed ? "failed" : "ok");
	}
	el_apply_journal(&ap, failed ? "stopped %s" : "complete %s", r->id);
	close(ap.log_fd);
	close(ap.journal_fd);
	return failed ? el_error_set(ctx, ENVLOCK_ERROR, "a step failed") : 0;
}

/*
 * What the journal of an earlier apply of this lock says: the step it
 * started and never ended, and what it began to create but never
 * finished (an environment half made by a killed run is replaced without
 * --force: it was never the user's).
 */
void el_restore_read_journal(envlock_restore *r)
{
	FILE *f = fopen(r->journal_path, "r");
	char line[8192];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *what, *arg;

		line[strcspn(line, "\n")] = '\0';
		if (!(what = strchr(line, ' ')))
			continue;
		what++;
		arg = strchr(what, ' ');
		if (!arg)
			continue;
		*arg++ = '\0';
		if (strcmp(what, "start") == 0) {
			free(r->interrupted);
			r->interrupted = el_xstrdup(arg);
		} else if (strcmp(what, "end") == 0 && r->interrupted &&
			   strncmp(arg, r->interrupted, strlen(r->interrupted)) == 0 &&
			   arg[strlen(r->interrupted)] == ' ') {
			free(r->interrupted);
			r->interrupted = NULL;
		} else if (strcmp(what, "creating") == 0) {
			el_strvec_push(&r->created, arg);
		} else if (strcmp(what, "created") == 0) {
			/* finished: from now on it is the user's, like any other */
			el_strvec *c = &r->created;
			size_t k = 0;

			for (size_t n = 0; n < c->n; n++) {
				if (strcmp(c->v[n], arg) == 0)
					free(c->v[n]);
				else
					c->v[k++] = c->v[n];
			}
			c->n = k;
			if (c->v)
				c->v[k] = NULL;
		}
	}
	fclose(f);
}

bool el_restore_created(const envlock_restore *r, const char *host_path)
{
	for (size_t i = 0; i < r->created.n; i++)
		if (strcmp(r->created.v[i], host_path) == 0)
			return true;
	return false;
}
