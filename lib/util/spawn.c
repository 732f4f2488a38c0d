#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "envlock/common.h"
#include "spawn.h"
#include "xalloc.h"

extern char **environ;

/* A wait status as a shell reports it: the exit code, or 128 + the signal. */
static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int el_spawn(const char *const argv[], int timeout_ms, el_buf *out, int *exit_status)
{
	return el_spawn_ex(argv, timeout_ms, out, exit_status, NULL);
}

int el_spawn_ex(const char *const argv[], int timeout_ms, el_buf *out, int *exit_status,
		const el_spawn_opts *opts)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int pipefd[2], status = 0, rc = 0, timed_out = 0;
	long deadline = now_ms() + timeout_ms;
	pid_t pid;

	*exit_status = -1;
	el_buf_reset(out);
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return ENVLOCK_EIO;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	if (opts && opts->merge_stderr)
		posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
	else
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/*
	 * Its own process group, so a timeout ends what it started too (nvcc
	 * runs cicc, ptxas, gcc); stdin is /dev/null, so it never needs the
	 * terminal.
	 */
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv,
			  opts && opts->envp ? opts->envp : environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		return ENVLOCK_ENOTFOUND;
	}
	for (;;) {
		struct pollfd pfd = { pipefd[0], POLLIN, 0 };
		long left = deadline - now_ms();
		char chunk[4096];
		ssize_t n;
		int pr;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		pr = poll(&pfd, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			timed_out = pr == 0;
			break;
		}
		n = read(pipefd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* past the cap, keep draining so the child never blocks (what is
		 * past it is dropped: callers read a bounded head of the output) */
		if (out->len + (size_t)n <= out->limit)
			el_buf_add(out, chunk, (size_t)n);
	}
	close(pipefd[0]);
	if (timed_out)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		return ENVLOCK_ETIMEOUT;
	*exit_status = exit_code(status);
	/* posix_spawnp reports exec failure as exit 127 from the child */
	if (*exit_status == 127 && out->len == 0)
		return ENVLOCK_ENOTFOUND;
	if (!out->data)
		el_buf_add(out, "", 0);
	return 0;
}

/* environ with each KEY=VALUE of extra replacing or adding its key (malloc'd array). */
static char **merged_environ(const char *const extra[])
{
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n])
		n++;
	while (extra && extra[k])
		k++;
	env = el_xcalloc(n + k + 1, sizeof(*env));
	for (i = 0, j = 0; i < n; i++) {
		size_t key = strcspn(environ[i], "=");
		int replaced = 0;

		for (size_t e = 0; e < k; e++)
			if (strncmp(extra[e], environ[i], key + 1) == 0)
				replaced = 1;
		if (!replaced)
			env[j++] = environ[i];
	}
	for (size_t e = 0; e < k; e++)
		env[j++] = (char *)extra[e];
	return env;
}

int el_spawn_logged(const char *const argv[], const char *const envv[], int log_fd, int *exit_status)
{
	posix_spawn_file_actions_t fa;
	char **env = merged_environ(envv);
	int status = 0, rc;
	pid_t pid;

	*exit_status = -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/* in envlock's own process group: Ctrl-C at the terminal reaches it too */
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (rc != 0)
		return ENVLOCK_ENOTFOUND;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return ENVLOCK_EIO;
	*exit_status = exit_code(status);
	return 0;
}

int el_spawn_logged_in(const char *root, const char *const argv[], const char *const envv[], int log_fd,
		       int *exit_status, int *child_errno)
{
	char **env = merged_environ(envv);
	int status = 0, err = 0, pipefd[2];
	ssize_t n;
	pid_t pid;

	*exit_status = -1;
	*child_errno = 0;
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		free(env);
		return ENVLOCK_EIO;
	}
	/* posix_spawn has no chroot: fork, and only async-signal-safe calls in the child */
	pid = fork();
	if (pid < 0) {
		free(env);
		close(pipefd[0]);
		close(pipefd[1]);
		return ENVLOCK_EIO;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);

		if (in < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(log_fd, STDOUT_FILENO) < 0 ||
		    dup2(log_fd, STDERR_FILENO) < 0 || chroot(root) != 0 || chdir("/") != 0)
			err = errno;
		else
			execve(argv[0], (char *const *)argv, env);
		if (!err)
			err = errno;
		/* the exec failed: tell the parent why through the close-on-exec pipe */
		(void)!write(pipefd[1], &err, sizeof(err));
		_exit(127);
	}
	free(env);
	close(pipefd[1]);
	while ((n = read(pipefd[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return ENVLOCK_EIO;
	if (n == (ssize_t)sizeof(err)) {
		*child_errno = err;
		return ENVLOCK_ENOTFOUND;
	}
	*exit_status = exit_code(status);
	return 0;
}
