/*
 * Run a program as if on Linux 3.10 (RHEL/CentOS 7, the oldest kernel
 * envlock's static binary supports): every x86_64 system call added after
 * 3.10 fails with ENOSYS, as it does on that kernel, through a seccomp
 * filter inherited by the program and everything it starts.
 *
 *   kernel310 PROGRAM [ARG]...
 *
 * The last system call of 3.10 on x86_64 is finit_module (313); 314
 * (sched_setattr, 3.14) and everything after it, getrandom (318, 3.17),
 * statx (332, 4.11), clone3 (435, 5.3) and faccessat2 (439, 5.8) among
 * them, did not exist (arch/x86/entry/syscalls/syscall_64.tbl).
 *
 * uname(2) reports a release before 4.8 too (the UNAME26 personality makes
 * it 2.6.x): OpenSSL reads the release when getrandom is missing, and only
 * on a kernel before 4.8 takes /dev/urandom once /dev/random is readable
 * (crypto/rand/rand_unix.c, wait_random_seeded), as it does on a real 3.10.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <unistd.h>

#define LAST_SYSCALL_OF_3_10 313
#define X32_SYSCALL_BIT 0x40000000u

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* the x32 ABI numbers: not part of the x86_64 binary's world */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, LAST_SYSCALL_OF_3_10, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	if (argc < 2) {
		fputs("usage: kernel310 PROGRAM [ARG]...\n", stderr);
		return 2;
	}
	if (personality(PER_LINUX | UNAME26) == -1) {
		fprintf(stderr, "kernel310: personality: %s\n", strerror(errno));
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		fprintf(stderr, "kernel310: seccomp: %s\n", strerror(errno));
		return 125;
	}
	execv(argv[1], argv + 1);
	fprintf(stderr, "kernel310: '%s': %s\n", argv[1], strerror(errno));
	return 127;
}
