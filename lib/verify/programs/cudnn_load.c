/*
 * envlock verify's cuDNN loader. envlock carries this file as text
 * (lib/verify/cudnn.c), and compiles and runs it with this machine's C
 * compiler and environment, so cuDNN is loaded as any program loads it
 * (LD_LIBRARY_PATH, ld.so.cache, the default folders) while envlock
 * itself, one static binary, never loads a host library.
 *
 *   cudnn_load SONAME|PATH
 *
 * dlopen()s it, calls cudnnGetVersion() and cudnnGetCudartVersion(),
 * asks the loader which file it picked, and prints on stdout; what the
 * library itself prints there (cuDNN's log can go to stdout) is sent to
 * stderr, so it never comes inside the report:
 *
 *   program=envlock-cudnn-load 1
 *   error=<dlerror()'s text>            when it cannot be loaded
 *   loaded=<the file the loader picked> (empty when the loader does not say)
 *   version=<cudnnGetVersion()>         when the library has it
 *   cudart=<cudnnGetCudartVersion()>    when the library has it
 *   end=1
 *
 * Exit status 0 when cudnnGetVersion() was called, 1 when not, 2 usage.
 * Plain C89 and POSIX, for the oldest compilers envlock meets.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef size_t (*version_fn)(void);

/* a function of the library, or NULL (memcpy: ISO C has no cast from void * to a function pointer) */
static version_fn function(void *h, const char *name)
{
	void *p = dlsym(h, name);
	version_fn f = NULL;

	if (p)
		memcpy(&f, &p, sizeof(f));
	return f;
}

/* key=value on one line, whatever the loader said */
static void put(FILE *f, const char *key, const char *value)
{
	fputs(key, f);
	putc('=', f);
	for (; *value; value++)
		putc(*value == '\n' || *value == '\r' ? ' ' : *value, f);
	putc('\n', f);
}

int main(int argc, char **argv)
{
	void *h;
	const char *err = NULL, *loaded = NULL;
	struct link_map *lm = NULL;
	version_fn get = NULL, cudart = NULL;
	unsigned long version = 0, cudart_version = 0;
	int report_fd;
	FILE *report;

	if (argc != 2) {
		fputs("usage: cudnn_load SONAME|PATH\n", stderr);
		return 2;
	}
	/* the report keeps stdout; the library's stdout goes to stderr */
	report_fd = dup(1);
	if (report_fd < 0 || dup2(2, 1) < 0 || !(report = fdopen(report_fd, "w"))) {
		perror("cudnn_load: stdout");
		return 2;
	}
	dlerror();
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		err = dlerror();
		if (!err)
			err = "cannot be loaded";
	} else {
		get = function(h, "cudnnGetVersion");
		cudart = function(h, "cudnnGetCudartVersion");
		if (get)
			version = (unsigned long)get();
		if (cudart)
			cudart_version = (unsigned long)cudart();
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
			loaded = lm->l_name;
	}
	fflush(stdout);
	fputs("program=envlock-cudnn-load 1\n", report);
	if (err)
		put(report, "error", err);
	if (h)
		put(report, "loaded", loaded ? loaded : "");
	if (get)
		fprintf(report, "version=%lu\n", version);
	if (cudart)
		fprintf(report, "cudart=%lu\n", cudart_version);
	fputs("end=1\n", report);
	if (fflush(report) != 0)
		_exit(2);
	/* no exit handlers: the library's destructors are not this program's business */
	_exit(get ? 0 : 1);
}
