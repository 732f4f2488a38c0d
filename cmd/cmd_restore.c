/* envlock restore: plan, then apply, the steps that make this machine match a lockfile. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "envlock/restore.h"

static void usage(FILE *out)
{
	fputs("usage: envlock restore FILE [--dry-run] [--yes] [--only STEP]... [--skip STEP]...\n"
	      "                        [--root DIR [--chroot]] [--python EXE] [--cuda-runfile FILE]\n"
	      "                        [--cudnn-archive FILE] [--wheels DIR] [--kit DIR|FILE [--no-conda]]\n"
	      "                        [--conda-exe EXE]"
	      "                        [--prefix DIR | --name NAME] [--force] [--dest DIR] [--state-dir DIR] [--json]\n"
	      "\n"
	      "Compare the lockfile with this machine, print the steps (ok, do, manual),\n"
	      "then do the 'do' ones. Steps, in order: driver, cuda, compilers, cudnn, conda,\n"
	      "repos, pip, configs, checkpoints, verify (run after a change, or with --only verify).\n"
	      "\n"
	      "  --dry-run            print the plan and stop\n"
	      "  -y, --yes            apply without asking (required when stdin is not a terminal)\n"
	      "  --only STEP          plan only these steps (repeatable)\n"
	      "  --skip STEP          leave these steps out (repeatable)\n"
	      "  --root DIR           restore the tree under DIR instead of this machine\n"
	      "  --chroot             with --root, run the tree's conda and pip inside it (chroot; root only)\n"
	      "  --python EXE         install pip packages into this Python (absolute path)\n"
	      "  --cuda-runfile FILE  install a missing CUDA toolkit from NVIDIA's runfile (toolkit only)\n"
	      "  --cudnn-archive FILE install missing cuDNN files from NVIDIA's archive (.tgz, .tar.xz)\n"
	      "  --wheels DIR         pip installs from this folder only (--no-index --find-links)\n"
	      "  --kit DIR|FILE       install with no network from `envlock pack`'s kit (a folder or .tar.zst):\n"
	      "                       checked whole first; conda --offline from its archives, pip from its wheels\n"
	      "  --no-conda           with --kit, envlock links the kit's conda archives itself, as conda's\n"
	      "                       package format defines it (also what it does when no conda is found)\n"
	      "  --conda-exe EXE      create the conda environment with this program (in the tree, under --root)\n"
	      "  --prefix DIR         create the conda environment here instead of the locked prefix\n"
	      "  --name NAME          create it as NAME in the locked conda install (<root>/envs/NAME)\n"
	      "  --force              replace a conda environment that differs (it is moved aside)\n"
	      "  --dest DIR           restore configs, checkpoints and repositories under DIR (default .)\n"
	      "  --state-dir DIR      journal, log and generated spec files (default .envlock)\n"
	      "  --json               print the plan as JSON\n"
	      "\n"
	      "Exit status: 0 when nothing is left to do, 1 when a step failed or needs you\n"
	      "(or, with --dry-run, when there is something to do), 2 on error.\n", out);
}

enum { OPT_ONLY = 256, OPT_SKIP, OPT_ROOT, OPT_PYTHON, OPT_RUNFILE, OPT_CUDNN, OPT_WHEELS,
       OPT_CONDA_EXE, OPT_PREFIX, OPT_NAME, OPT_FORCE, OPT_DEST, OPT_STATE, OPT_JSON, OPT_DRY,
       OPT_CHROOT, OPT_KIT, OPT_NO_CONDA };

static const cmd_choices steps = { "no such step", "steps", envlock_restore_step_count, envlock_restore_step_name };


static int confirm(size_t n)
{
	char answer[16];

	fprintf(stderr, "Apply %zu change%s to this machine? [y/N] ", n, n == 1 ? "" : "s");
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return 0;
	return answer[0] == 'y' || answer[0] == 'Y';
}

/* The plan's advice names the flags of this command line (and of save's). */
static const char *option_flag(const char *option)
{
	static const char *const flags[][2] = {
		{ "cuda_runfile", "--cuda-runfile" }, { "cudnn_archive", "--cudnn-archive FILE" },
		{ "conda_exe", "--conda-exe" },       { "conda_target", "--prefix DIR" },
		{ "conda_name", "--name NAME" },      { "force", "--force" },
		{ "dest", "--dest" },                 { "python", "--python EXE" },
		{ "root", "--root" },                 { "repo", "`envlock save --repo`" },
		{ "chroot", "--chroot" },
		{ "no_patch", "--no-patch" },         { "kit", "--kit" },
		{ "no_conda", "--no-conda" },
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(flags[i][0], option) == 0)
			return flags[i][1];
	return NULL;
}

int cmd_restore(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, OPT_DRY },
		{ "yes", no_argument, NULL, 'y' },
		{ "only", required_argument, NULL, OPT_ONLY },
		{ "skip", required_argument, NULL, OPT_SKIP },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "chroot", no_argument, NULL, OPT_CHROOT },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "cuda-runfile", required_argument, NULL, OPT_RUNFILE },
		{ "cudnn-archive", required_argument, NULL, OPT_CUDNN },
		{ "wheels", required_argument, NULL, OPT_WHEELS },
		{ "kit", required_argument, NULL, OPT_KIT },
		{ "no-conda", no_argument, NULL, OPT_NO_CONDA },
		{ "conda-exe", required_argument, NULL, OPT_CONDA_EXE },
		{ "prefix", required_argument, NULL, OPT_PREFIX },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "dest", required_argument, NULL, OPT_DEST },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_restore_opts opts = { 0 };
	const char **only = NULL, **skip = NULL;
	size_t n_only = 0, n_skip = 0, breaking = 0;
	envlock_restore *plan = NULL;
	envlock_lock *lock = NULL;
	int c, rc = CMD_USAGE, dry = 0, yes = 0, json = 0;
	unsigned flags = 0;

	while ((c = getopt_long(argc, argv, "yh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DRY: dry = 1; break;
		case 'y': yes = 1; break;
		case OPT_ONLY: cmd_push_arg(&only, &n_only, optarg); break;
		case OPT_SKIP: cmd_push_arg(&skip, &n_skip, optarg); break;
		case OPT_ROOT: opts.probe.root = optarg; break;
		case OPT_CHROOT: opts.chroot = 1; break;
		case OPT_PYTHON: opts.probe.python = optarg; break;
		case OPT_RUNFILE: opts.cuda_runfile = optarg; break;
		case OPT_CUDNN: opts.cudnn_archive = optarg; break;
		case OPT_WHEELS: opts.wheels = optarg; break;
		case OPT_KIT: opts.kit = optarg; break;
		case OPT_NO_CONDA: opts.no_conda = 1; break;
		case OPT_CONDA_EXE: opts.conda_exe = optarg; break;
		case OPT_PREFIX: opts.conda_target = optarg; break;
		case OPT_NAME: opts.conda_name = optarg; break;
		case OPT_FORCE: opts.force = 1; break;
		case OPT_DEST: opts.dest = optarg; break;
		case OPT_STATE: opts.state_dir = optarg; break;
		case OPT_JSON: json = 1; break;
		case 'h': usage(stdout); rc = CMD_OK; goto out;
		default: rc = cmd_bad_option("restore", argv, usage); goto out;
		}
	}
	if (argc - optind != 1) {
		cmd_error("restore: expected one lockfile, got %d", argc - optind);
		goto out;
	}
	/* files the user named must exist now, not halfway through an apply */
	{
		const char *const named[] = { opts.cuda_runfile, opts.cudnn_archive, opts.wheels, opts.kit };
		const char *const flag[] = { "--cuda-runfile", "--cudnn-archive", "--wheels", "--kit" };

		for (size_t i = 0; i < 4; i++) {
			if (named[i] && access(named[i], R_OK) != 0) {
				cmd_error("restore: %s '%s': %s", flag[i], named[i], cmd_strerror(errno));
				goto out;
			}
		}
		if (opts.conda_target && opts.conda_target[0] != '/') {
			cmd_error("restore: --prefix '%s': must be an absolute path", opts.conda_target);
			goto out;
		}
		if (opts.chroot && !opts.probe.root) {
			cmd_error("restore: --chroot runs the tree's programs inside it: give --root DIR too");
			goto out;
		}
		/* chroot(2) needs root: say so now, not when the conda step fails */
		if (opts.chroot && geteuid() != 0) {
			cmd_error("restore: --chroot needs root (chroot(2) is for root only): run envlock as root, or leave --chroot out and run the printed commands inside the tree yourself");
			goto out;
		}
		if (opts.no_conda && !opts.kit) {
			cmd_error("restore: --no-conda links a kit's conda archives: give --kit DIR|FILE too");
			goto out;
		}
		if (opts.no_conda && opts.conda_exe) {
			cmd_error("restore: give --no-conda or --conda-exe, not both");
			goto out;
		}
		if (opts.kit && opts.wheels) {
			cmd_error("restore: give --kit or --wheels, not both (the kit's wheels are its wheels/ folder)");
			goto out;
		}
		if (opts.conda_target && opts.conda_name) {
			cmd_error("restore: give --name or --prefix, not both");
			goto out;
		}
		if (cmd_check_choices("restore", "--only", only, n_only, &steps) != 0 ||
		    cmd_check_choices("restore", "--skip", skip, n_skip, &steps) != 0)
			goto out;
	}
	opts.option_text = option_flag;
	opts.only = only;
	opts.only_count = n_only;
	opts.skip = skip;
	opts.skip_count = n_skip;
	flags = cmd_print_flags();
	if ((rc = cmd_lock_load(&lock, ctx, argv[optind])) != 0)
		goto out;
	rc = CMD_USAGE;
	if (envlock_restore_plan(&plan, ctx, lock, &opts) != 0) {
		cmd_error("restore: '%s': %s", argv[optind], envlock_error_last(ctx));
		goto out;
	}
	if (envlock_restore_interrupted(plan))
		fprintf(stderr, "envlock: restore: the last apply of this lock stopped during step '%s'; planning again from what is there now\n",
			envlock_restore_interrupted(plan));
	/* one JSON document: the plan when nothing is applied, else the plan as applied */
	dry = dry || envlock_restore_count(plan, ENVLOCK_ITEM_DO) == 0;
	if (json ? dry && envlock_restore_print_json(plan, ctx, stdout) != 0
		 : (envlock_restore_print(plan, stdout, flags), 0)) {
		cmd_error("restore: %s", envlock_error_last(ctx));
		goto out;
	}
	if (dry) {
		rc = envlock_restore_count(plan, ENVLOCK_ITEM_DO) || envlock_restore_count(plan, ENVLOCK_ITEM_MANUAL)
			     ? CMD_FAIL : CMD_OK;
		goto out;
	}
	if (!yes) {
		if (!isatty(STDIN_FILENO)) {
			cmd_error("restore: refusing to change this machine without --yes (standard input is not a terminal)");
			goto out;
		}
		if (!confirm(envlock_restore_count(plan, ENVLOCK_ITEM_DO))) {
			fputs("envlock: restore: nothing changed\n", stderr);
			rc = CMD_FAIL;
			goto out;
		}
	}
	fflush(stdout);
	if (envlock_restore_apply(plan, ctx, stderr) != 0 && envlock_restore_count(plan, ENVLOCK_ITEM_FAILED) == 0) {
		cmd_error("restore: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
		goto out;
	}
	if (json) {
		if (envlock_restore_print_json(plan, ctx, stdout) != 0) {
			cmd_error("restore: %s", envlock_error_last(ctx));
			rc = CMD_FAIL;
			goto out;
		}
	} else {
		fputc('\n', stdout);
		envlock_restore_print(plan, stdout, flags);
	}
	if (envlock_restore_count(plan, ENVLOCK_ITEM_FAILED)) {
		fprintf(stderr, "envlock: restore: a step failed; the log is %s (rerun to resume)\n",
			envlock_restore_log_path(plan));
		rc = CMD_FAIL;
		goto out;
	}
	/* with --json, stdout holds only the JSON: the comparison goes to stderr */
	if (envlock_restore_remaining(&breaking, plan, ctx, lock, json ? stderr : stdout, json ? 0 : flags) != 0) {
		cmd_error("restore: checking the result: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
		goto out;
	}
	rc = breaking || envlock_restore_count(plan, ENVLOCK_ITEM_MANUAL) ? CMD_FAIL : CMD_OK;
out:
	envlock_restore_free(plan);
	envlock_lock_free(lock);
	free(only);
	free(skip);
	return rc;
}
