/* envlock diff: what differs between two lockfiles, or how a fleet drifts. */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "util/xalloc.h"

#define MAX_LOADERS 8 /* lockfiles parsed at once; parsing is most of a diff's time */

static void usage(FILE *out)
{
	fputs("usage: envlock diff [options] A B\n"
	      "       envlock diff [options] F1 F2 F3 ...\n"
	      "\n"
	      "  A B             what differs from A to B, each difference breaking, risky or info\n"
	      "  F1 F2 F3 ...    three or more: a drift table (majority value, files that differ)\n"
	      "  --json          print the result as JSON\n"
	      "  --all           also list identical items\n"
	      "  --only SECTION  compare only SECTION (repeatable)\n"
	      "  --ignore SECTION  leave SECTION out (repeatable)\n"
	      "\n"
	      "sections: ", out);
	for (size_t i = 0; i < envlock_diff_section_count(); i++)
		fprintf(out, "%s%s", i ? ", " : "", envlock_diff_section_name(i));
	fputs("\nexit status: 0 identical, 1 different, 2 error\n", out);
}

/* Lockfiles parsed in parallel, each on its own context; reported in argument order. */
typedef struct {
	char **paths;
	envlock_lock **locks;
	envlock_ctx **ctxs;
	char **warnings;
	int *rcs;
	int n, next;
	pthread_mutex_t mu;
} load_batch;

static void *load_worker(void *arg)
{
	load_batch *b = arg;

	for (;;) {
		int i;

		pthread_mutex_lock(&b->mu);
		i = b->next++;
		pthread_mutex_unlock(&b->mu);
		if (i >= b->n)
			return NULL;
		b->rcs[i] = cmd_lock_load_noting(&b->locks[i], b->ctxs[i], b->paths[i], &b->warnings[i]);
	}
}

/*
 * fn(arg) on up to one thread per core (at most MAX_LOADERS, at most n):
 * the calling thread works too, and a thread that cannot start just
 * leaves the others more to do.
 */
static void run_on_cores(int n, void *(*fn)(void *), void *arg)
{
	int nthreads = n < MAX_LOADERS ? n : MAX_LOADERS, started = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t threads[MAX_LOADERS];

	if (cpus > 0 && nthreads > cpus)
		nthreads = (int)cpus;
	while (started < nthreads - 1 && pthread_create(&threads[started], NULL, fn, arg) == 0)
		started++;
	fn(arg);
	while (started)
		pthread_join(threads[--started], NULL);
}

/* Load paths[0..n) into locks[]; on failure print the first bad file's error and free them all. */
static int load_all(char **paths, int n, envlock_lock **locks)
{
	envlock_ctx *ctxs[MAX_LOADERS * 2];
	char *warnings[MAX_LOADERS * 2];
	int rcs[MAX_LOADERS * 2], rc = 0;
	load_batch b = { paths, locks, ctxs, warnings, rcs, n, 0, PTHREAD_MUTEX_INITIALIZER };

	for (int i = 0; i < n; i++) {
		locks[i] = NULL;
		if (envlock_ctx_new(&ctxs[i]) != 0) {
			while (i--)
				envlock_ctx_free(ctxs[i]);
			cmd_error("out of memory");
			return -1;
		}
	}
	run_on_cores(n, load_worker, &b);
	for (int i = 0; i < n; i++) {
		if (rcs[i] == 0 && warnings[i])
			fputs(warnings[i], stderr);
		free(warnings[i]);
		if (rcs[i] != 0 && rc == 0) {
			cmd_error("diff: %s", envlock_error_last(ctxs[i]));
			rc = -1;
		}
		envlock_ctx_free(ctxs[i]);
	}
	if (rc)
		for (int i = 0; i < n; i++) {
			envlock_lock_free(locks[i]);
			locks[i] = NULL;
		}
	return rc;
}

static int diff_two(envlock_ctx *ctx, char **files, const envlock_diff_opts *opts, int json)
{
	envlock_lock *l[2] = { NULL, NULL };
	envlock_diff *d = NULL;
	int rc = CMD_USAGE;

	if (load_all(files, 2, l))
		return CMD_USAGE;
	if (envlock_diff_locks(&d, ctx, l[0], files[0], l[1], files[1], opts) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		goto done;
	}
	if ((json ? envlock_diff_print_json(d, ctx, stdout)
		  : envlock_diff_print(d, ctx, stdout, cmd_print_flags())) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		goto done;
	}
	rc = envlock_diff_identical(d) ? CMD_OK : CMD_DIFFER;
done:
	envlock_diff_free(d);
	envlock_lock_free(l[0]);
	envlock_lock_free(l[1]);
	return rc;
}

/*
 * A fleet: each thread takes the next file, loads it, adds it to the
 * table and frees it, so the loading of one file overlaps the adding of
 * another, and memory stays that of a lock a thread whatever the fleet's
 * size. What the files say (warnings, the first error) is said in the
 * files' order, after them all.
 */
typedef struct {
	char **paths;
	envlock_drift *d;
	char **warnings; /* by file */
	int n, next;
	int failed;      /* the first file that failed; n while none has */
	char *why;       /* its error */
	pthread_mutex_t mu;
} drift_run;

static void drift_failed(drift_run *r, int i, envlock_ctx *ctx)
{
	pthread_mutex_lock(&r->mu);
	if (i < r->failed) {
		free(r->why);
		r->why = el_xstrdup(envlock_error_last(ctx));
		r->failed = i;
	}
	pthread_mutex_unlock(&r->mu);
}

static void *drift_worker(void *arg)
{
	drift_run *r = arg;
	envlock_ctx *ctx;

	if (envlock_ctx_new(&ctx) != 0)
		return NULL; /* the others do its share */
	for (;;) {
		envlock_lock *lock = NULL;
		int i;

		pthread_mutex_lock(&r->mu);
		i = r->next < r->failed ? r->next++ : r->n; /* nothing after a failed file is needed */
		pthread_mutex_unlock(&r->mu);
		if (i >= r->n)
			break;
		if (cmd_lock_load_noting(&lock, ctx, r->paths[i], &r->warnings[i]) != 0 ||
		    envlock_drift_put(r->d, ctx, lock, (size_t)i) != 0)
			drift_failed(r, i, ctx);
		envlock_lock_free(lock);
	}
	envlock_ctx_free(ctx);
	return NULL;
}

static int drift(envlock_ctx *ctx, char **files, int n, const envlock_diff_opts *opts, int json)
{
	drift_run r = { files, NULL, NULL, n, 0, n, NULL, PTHREAD_MUTEX_INITIALIZER };
	int rc = CMD_USAGE;

	if (envlock_drift_new(&r.d, ctx, opts) != 0 ||
	    envlock_drift_expect(r.d, ctx, (const char *const *)files, (size_t)n) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		envlock_drift_free(r.d);
		return CMD_USAGE;
	}
	r.warnings = el_xcalloc((size_t)n, sizeof(*r.warnings));
	run_on_cores(n, drift_worker, &r);
	for (int i = 0; i < n; i++) {
		if (r.warnings[i] && i < r.failed)
			fputs(r.warnings[i], stderr);
		free(r.warnings[i]);
	}
	free(r.warnings);
	if (r.failed < n) {
		cmd_error("diff: %s", r.why);
		goto done;
	}
	if (envlock_drift_finish(r.d, ctx) != 0 ||
	    (json ? envlock_drift_print_json(r.d, ctx, stdout)
		  : envlock_drift_print(r.d, ctx, stdout, cmd_print_flags())) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		goto done;
	}
	rc = envlock_drift_drifting(r.d) ? CMD_DIFFER : CMD_OK;
done:
	free(r.why);
	envlock_drift_free(r.d);
	return rc;
}

static const cmd_choices sections = { "not a section", "sections", envlock_diff_section_count, envlock_diff_section_name };


int cmd_diff(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "only", required_argument, NULL, 'o' },
		{ "ignore", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char **only = NULL, **ignore = NULL;
	envlock_diff_opts opts;
	envlock_rules *rules = NULL;
	int c, json = 0, nfiles, rc;

	memset(&opts, 0, sizeof(opts));
	/* options may follow the files: envlock diff A B --json */
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'a': opts.all = 1; break;
		case 'o': cmd_push_arg(&only, &opts.only_count, optarg); break;
		case 'i': cmd_push_arg(&ignore, &opts.ignore_count, optarg); break;
		case 'h': usage(stdout); rc = CMD_OK; goto out;
		default: rc = cmd_bad_option("diff", argv, usage); goto out;
		}
	}
	opts.only = only;
	opts.ignore = ignore;
	nfiles = argc - optind;
	rc = CMD_USAGE;
	if (nfiles < 2) {
		cmd_error("diff: expected two lockfiles (or more for a drift table), got %d", nfiles);
		goto out;
	}
	if ((rc = cmd_check_choices("diff", "--only", only, opts.only_count, &sections)) != 0 ||
	    (rc = cmd_check_choices("diff", "--ignore", ignore, opts.ignore_count, &sections)) != 0 ||
	    (rc = envlock_rules_load_default(&rules, ctx)) != 0)
		goto out;
	opts.rules = rules;
	rc = nfiles == 2 ? diff_two(ctx, argv + optind, &opts, json)
			 : drift(ctx, argv + optind, nfiles, &opts, json);
out:
	envlock_rules_free(rules);
	free(only);
	free(ignore);
	return rc;
}
