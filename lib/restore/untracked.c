/*
 * Restore step 6, continued: a repository's untracked files, written
 * back into its work tree after the patch. The path comes from the lock
 * (el_bad_repo_file has refused "..", absolute paths and .git); each
 * folder on the way is opened without following symbolic links, so a
 * link in the restored tree cannot lead a file outside it. A file is
 * written under a temporary name and linked into place, and one that is
 * already there is never overwritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/xalloc.h"

/* The folder rel's last component goes in, opened (made when missing) one component at a time; -1 on failure. */
static int open_parent(el_item *it, int top, const char *rel, const char **last)
{
	const char *p = rel;
	int dir = dup(top);

	while (dir >= 0) {
		size_t len = strcspn(p, "/");
		char *name;
		int next;

		if (!p[len]) {
			*last = p;
			return dir;
		}
		name = el_xstrndup(p, len);
		next = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && mkdirat(dir, name, 0777) == 0)
			next = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			el_item_fail(it, "untracked '%s': folder '%.*s': %s", rel, (int)(p + len - rel), rel,
				     errno == ELOOP || errno == ENOTDIR ? "a symbolic link or a file stands there"
									: el_strerror(errno));
		free(name);
		close(dir);
		dir = next;
		p += len + 1;
	}
	return -1;
}

/* Does the regular file name in dir hold exactly sha256's bytes? */
static bool same_content(int dir, const char *name, const char *sha256)
{
	char hex[EL_SHA256_HEX];
	uint64_t n;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool same;

	if (fd < 0)
		return false;
	same = el_sha256_fd(fd, hex, &n, NULL, NULL) == 0 && strcmp(hex, sha256) == 0;
	close(fd);
	return same;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int el_restore_write_untracked(el_item *it, el_apply *ap, const char *top_path, const char *rel,
			       const char *text, const char *sha256, bool executable)
{
	size_t len = strlen(text);
	char hex[EL_SHA256_HEX], *tmp = NULL;
	const char *last = NULL;
	struct stat st;
	int top, dir = -1, fd, rc = -1, err_no = 0;
	bool bad;

	el_sha256_buf(text, len, hex);
	if (strcmp(hex, sha256) != 0) {
		el_item_fail(it, "untracked '%s': the recorded text does not match its sha256", rel);
		return -1;
	}
	if ((top = open(top_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		el_item_fail(it, "'%s': %s", top_path, el_strerror(errno));
		return -1;
	}
	if ((dir = open_parent(it, top, rel, &last)) < 0)
		goto done;
	if (fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISREG(st.st_mode) && same_content(dir, last, sha256)) {
			el_apply_log(ap, "untracked '%s' is already there", rel);
			rc = 0;
		} else {
			el_item_fail(it, "untracked '%s': something else is there: not overwritten", rel);
		}
		goto done;
	}
	tmp = el_xasprintf(".%s.envlock-tmp-%ld", last, (long)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, executable ? 0777 : 0666);
	if (fd < 0) {
		el_item_fail(it, "untracked '%s': %s", rel, el_strerror(errno));
		goto done;
	}
	bad = write_all(fd, text, len) != 0 || fsync(fd) != 0;
	err_no = errno;
	if (close(fd) != 0 && !bad) {
		bad = true;
		err_no = errno;
	}
	/* a link, not a rename: a file that appeared there meanwhile is still not replaced */
	if (!bad && linkat(dir, tmp, dir, last, 0) != 0) {
		err_no = errno;
		/* a file system without hard links: a rename, after one more look */
		bad = !((err_no == EPERM || err_no == EOPNOTSUPP) &&
			fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT &&
			renameat(dir, tmp, dir, last) == 0);
		if (!bad)
			goto written;
	}
	unlinkat(dir, tmp, 0);
	if (bad) {
		el_item_fail(it, "untracked '%s': %s", rel,
			     err_no == EEXIST ? "something else is there: not overwritten" : el_strerror(err_no));
		goto done;
	}
written:
	el_apply_log(ap, "wrote untracked '%s' (%zu bytes, sha256 %s)", rel, len, sha256);
	rc = 0;
done:
	if (dir >= 0)
		close(dir);
	close(top);
	free(tmp);
	return rc;
}
