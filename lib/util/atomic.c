#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "error.h"
#include "interrupt.h"
#include "root.h"
#include "xalloc.h"

int el_write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Not a regular file (/dev/null, a FIFO, a terminal): write into it as it
 * is; renaming over it would replace the device with a file.
 */
static int write_special(envlock_ctx *ctx, const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY), rc = 0;

	if (fd < 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", path, el_strerror(errno));
	if (el_write_all(fd, data, len) != 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': write failed: %s", path, el_strerror(errno));
	if (close(fd) != 0 && rc == 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", path, el_strerror(errno));
	return rc;
}

static char *dir_of(const char *path)
{
	return strchr(path, '/') ? el_path_dir(path) : el_xstrdup(".");
}

static void fsync_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
}

void el_fsync_parent(const char *path)
{
	char *dir = dir_of(path);

	fsync_dir(dir);
	free(dir);
}

static void tmpfile_end(el_tmpfile *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->tmp)
		unlink(t->tmp);
	el_interrupt_forget(t->tmp);
	free(t->tmp);
	free(t->dir);
	free(t->path);
	t->tmp = t->dir = t->path = NULL;
	t->fd = -1;
}

int el_tmpfile_open(el_tmpfile *t, envlock_ctx *ctx, const char *path)
{
	t->ctx = ctx;
	t->path = el_xstrdup(path);
	t->dir = dir_of(path);
	t->tmp = el_xasprintf("%s/.%s.XXXXXX", t->dir, el_path_base(path));
	/* registered: a signal that kills envlock removes it */
	t->fd = el_interrupt_mkstemp(t->tmp);
	if (t->fd < 0) {
		int rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': cannot create a file in '%s': %s",
				      path, t->dir, el_strerror(errno));

		free(t->tmp);
		t->tmp = NULL;
		tmpfile_end(t);
		return rc;
	}
	return 0;
}

void el_tmpfile_rollback(el_tmpfile *t)
{
	tmpfile_end(t);
}

/* Commit by rename(2) over path (replace) or link(2) to it. */
static int tmpfile_commit(el_tmpfile *t, mode_t mode, int replace)
{
	int rc = 0, fd = t->fd;

	if (fchmod(fd, mode) != 0 || fsync(fd) != 0)
		rc = el_error_set(t->ctx, ENVLOCK_EIO, "'%s': write failed: %s", t->path, el_strerror(errno));
	t->fd = -1;
	if (close(fd) != 0 && rc == 0)
		rc = el_error_set(t->ctx, ENVLOCK_EIO, "'%s': %s", t->path, el_strerror(errno));
	/* a signal in a polling section (interrupt.h): the old file stays, the new one goes */
	if (rc == 0 && el_interrupted())
		rc = el_interrupt_error(t->ctx, t->path);
	if (rc == 0 && (replace ? rename(t->tmp, t->path) : link(t->tmp, t->path)) != 0) {
		if (!replace && errno == EEXIST)
			rc = el_error_set(t->ctx, ENVLOCK_EINVAL, "'%s' already exists", t->path);
		else
			rc = el_error_set(t->ctx, ENVLOCK_EIO, "'%s': %s", t->path, el_strerror(errno));
	}
	if (rc == 0 && replace) {
		el_interrupt_forget(t->tmp);
		free(t->tmp); /* renamed: nothing left to remove */
		t->tmp = NULL;
	}
	/* make the rename or link itself durable */
	if (rc == 0)
		fsync_dir(t->dir);
	tmpfile_end(t);
	return rc;
}

int el_tmpfile_commit(el_tmpfile *t, mode_t mode)
{
	return tmpfile_commit(t, mode, 1);
}

int el_tmpfile_commit_new(el_tmpfile *t, mode_t mode)
{
	return tmpfile_commit(t, mode, 0);
}

/* The temporary file, then rename(2) over path, or link(2) to it when it must not exist yet. */
static int write_new(envlock_ctx *ctx, const char *path, const void *data, size_t len,
		     mode_t mode, int replace)
{
	char *real = NULL;
	mode_t mask = umask(0);
	struct stat st;
	el_tmpfile t;
	int rc;

	umask(mask);
	if (replace && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_special(ctx, path, data, len);
	/* through a symlink, replace the file it names, not the link */
	if (replace && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && (real = realpath(path, NULL)) != NULL)
		path = real;
	rc = el_tmpfile_open(&t, ctx, path);
	if (rc == 0 && el_write_all(t.fd, data, len) != 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': write failed: %s", path, el_strerror(errno));
		el_tmpfile_rollback(&t);
	}
	if (rc == 0)
		rc = replace ? el_tmpfile_commit(&t, mode & ~mask) : el_tmpfile_commit_new(&t, mode & ~mask);
	free(real);
	return rc;
}

int el_write_atomic(envlock_ctx *ctx, const char *path, const void *data,
		    size_t len, mode_t mode)
{
	return write_new(ctx, path, data, len, mode, 1);
}

int el_write_atomic_new(envlock_ctx *ctx, const char *path, const void *data,
			size_t len, mode_t mode)
{
	return write_new(ctx, path, data, len, mode, 0);
}

int el_mkdir_p(const char *dir, mode_t mode)
{
	char *p = el_xstrdup(dir);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) != 0 && errno != EEXIST) {
				rc = ENVLOCK_EIO;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return rc;
}

int el_write_output(envlock_ctx *ctx, const char *path, const void *data, size_t len)
{
	if (strcmp(path, "-") != 0)
		return el_write_atomic(ctx, path, data, len, 0644);
	if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
		return el_error_set(ctx, ENVLOCK_EIO, "stdout: %s", el_strerror(errno));
	return 0;
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* renameat2(2) by its system call: musl's libc may have no wrapper. */
static int rename2(const char *from, const char *to, unsigned flags)
{
#ifdef SYS_renameat2
	return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
#else
	(void)from, (void)to, (void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

/* The kernel or the file system has no such renameat2 flag. */
static int no_rename2(int err)
{
	return err == ENOSYS || err == EINVAL || err == ENOTSUP;
}

int el_dir_rename(const char *staged, const char *path, int replace)
{
	struct stat st;
	char *aside;
	int e;

	if (!replace) {
		if (rename2(staged, path, RENAME_NOREPLACE) == 0)
			goto done;
		if (!no_rename2(errno))
			return -1;
		/* without the flag: a folder made meanwhile would be replaced only if empty */
		if (lstat(path, &st) == 0) {
			errno = EEXIST;
			return -1;
		}
		if (rename(staged, path) != 0)
			return -1;
		goto done;
	}
	if (rename2(staged, path, RENAME_EXCHANGE) == 0) {
		el_remove_tree(staged);
		goto done;
	}
	if (!no_rename2(errno))
		return -1;
	/* no exchange: the old folder aside, the new one in, the old one back if that fails */
	aside = el_xasprintf("%s.old", staged);
	if (rename(path, aside) != 0) {
		e = errno;
		free(aside);
		errno = e;
		return -1;
	}
	if (rename(staged, path) != 0) {
		e = errno;
		rename(aside, path);
		free(aside);
		errno = e;
		return -1;
	}
	el_remove_tree(aside);
	free(aside);
done:
	el_fsync_parent(path);
	return 0;
}

/* Let us into a folder of ours that has lost its owner's rwx (a kept read-only folder). */
static void open_up(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0700) != 0700)
		fchmodat(dfd, name, (st.st_mode & 07777) | 0700, 0);
}

/* Empty the folder open on dfd (closed here); 0, or the errno of the first thing left in it. */
static int empty_at(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int err = 0, progress;

	if (!d) {
		err = errno;
		close(dfd);
		return err;
	}
	/* again while a pass removed something: a folder changed while read may hide a name */
	do {
		progress = 0;
		err = 0;
		rewinddir(d);
		while ((e = readdir(d)) != NULL) {
			const char *name = e->d_name;
			int sub;

			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if (unlinkat(dirfd(d), name, 0) == 0) {
				progress = 1;
				continue;
			}
			if (errno != EISDIR) {
				err = err ? err : errno;
				continue;
			}
			open_up(dirfd(d), name);
			sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				empty_at(sub);
			if (unlinkat(dirfd(d), name, AT_REMOVEDIR) == 0)
				progress = 1;
			else
				err = err ? err : errno;
		}
	} while (progress);
	closedir(d);
	return err;
}

int el_remove_tree(const char *path)
{
	struct stat st;
	int fd, err;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if ((st.st_mode & 0700) != 0700)
		chmod(path, (st.st_mode & 07777) | 0700);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	err = empty_at(fd);
	if (rmdir(path) == 0)
		return 0;
	if (err)
		errno = err;
	return -1;
}
