/*
 * The files a config names, as this machine has them: the training
 * set's annotation file (with its COCO categories), load_from and
 * resume_from, and work_dir. Recorded by save and check --config so
 * that the rules, which only read the lock, can judge them later.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "facts.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/root.h"
#include "util/userpath.h"
#include "util/xalloc.h"

#define EL_CFG_MAX_NAMES 1000 /* category names kept in the lock */

/* The project root of a config: the folder above its last "/configs/", or NULL. */
static char *project_root(const char *config_path)
{
	const char *p = config_path, *hit = NULL;

	while ((p = strstr(p, "/configs/")) != NULL)
		hit = p++;
	return hit && config_path[0] == '/' ? el_xstrndup(config_path, (size_t)(hit - config_path)) : NULL;
}

/* Where path is on this machine: itself when absolute, else the first of cwd/path, root/path that exists
 * (the first of them when neither does). */
static char *resolve(const char *path, const char *cwd, const char *root, struct stat *st, bool *exists)
{
	const char *base[2] = { cwd, root };
	char *first = NULL;

	*exists = false;
	if (path[0] == '/') {
		*exists = stat(path, st) == 0;
		return el_xstrdup(path);
	}
	for (int i = 0; i < 2; i++) {
		char *cand;

		if (!base[i])
			continue;
		cand = el_path_join(base[i], path);
		if (stat(cand, st) == 0) {
			free(first);
			*exists = true;
			return cand;
		}
		if (first)
			free(cand);
		else
			first = cand;
	}
	return first;
}

static cJSON *entry(cJSON *files, const char *role, const char *key, const char *path)
{
	cJSON *e = el_jpush_obj(files);

	el_jset_str(e, "role", role);
	el_jset_str(e, "key", key);
	el_jset_str(e, "path", path);
	return e;
}

/* Record where path is and whether it exists; the place found, malloc'd (NULL: nowhere to look). */
static char *look(cJSON *e, const char *path, const char *cwd, const char *root, struct stat *st, bool *exists)
{
	char *where = resolve(path, cwd, root, st, exists);

	if (where) {
		char *shown = el_userpath_display(where);

		el_jset_str(e, "resolved", shown);
		free(shown);
	}
	el_jset_bool(e, "exists", *exists);
	return where;
}

static void annotations(envlock_ctx *ctx, cJSON *files, const el_cfg_loader *l, const char *cwd, const char *root)
{
	char *ann = el_cfg_ann_file(l->dataset), *key, *where;
	struct stat st;
	bool exists;
	cJSON *e, *names = NULL;
	long long n;

	if (!ann)
		return;
	key = el_xmalloc(strlen(l->dataset_key) + sizeof(".ann_file"));
	strcpy(key, l->dataset_key);
	strcat(key, ".ann_file");
	e = entry(files, "annotations", key, ann);
	el_jset_str(e, "phase", l->phase);
	if (strstr(ann, "://")) {
		el_jset_bool(e, "url", true);
	} else {
		where = look(e, ann, cwd, root, &st, &exists);
		if (exists && S_ISREG(st.st_mode)) {
			el_jset_int(e, "size", (long long)st.st_size);
			if (el_coco_categories(ctx, where, &n, &names, EL_CFG_MAX_NAMES) == 0) {
				el_jset_int(e, "categories", n);
				cJSON_AddItemToObject(e, "category_names", names);
			} else {
				el_jset_str(e, "error", envlock_error_last(ctx));
			}
		}
		free(where);
	}
	free(key);
	free(ann);
}

static void checkpoint(cJSON *files, const char *key, const char *path, const char *cwd, const char *root)
{
	cJSON *e = entry(files, "checkpoint", key, path);
	struct stat st;
	bool exists;

	if (strstr(path, "://")) {
		el_jset_bool(e, "url", true);
		return;
	}
	free(look(e, path, cwd, root, &st, &exists));
	if (exists)
		el_jset_int(e, "size", (long long)st.st_size);
}

/* mmengine's Runner resumes from <work_dir>/last_checkpoint when resume=True and load_from is None */
static void work_dir(cJSON *files, const char *path, const char *cwd, const char *root)
{
	cJSON *e = entry(files, "work_dir", "work_dir", path);
	struct stat st;
	bool exists;
	char *where = look(e, path, cwd, root, &st, &exists), *last;

	if (exists && S_ISDIR(st.st_mode)) {
		last = el_path_join(where, "last_checkpoint");
		el_jset_bool(e, "last_checkpoint", access(last, F_OK) == 0);
		el_jset_bool(e, "writable", access(where, W_OK) == 0);
		free(last);
	}
	free(where);
}

void el_cfg_files_record(envlock_ctx *ctx, cJSON *files, const cJSON *value, const char *config_path,
			 const char *cwd)
{
	el_cfg_facts f;
	char *root = project_root(config_path);
	const el_cfg_loader *train;

	el_cfg_facts_read(&f, value, config_path);
	if ((train = el_cfg_loader_of(&f, "train")) != NULL)
		annotations(ctx, files, train, cwd, root);
	if (f.load_from)
		checkpoint(files, "load_from", f.load_from, cwd, root);
	if (f.resume_from)
		checkpoint(files, "resume_from", f.resume_from, cwd, root);
	if (f.work_dir)
		work_dir(files, f.work_dir, cwd, root);
	el_cfg_facts_free(&f);
	free(root);
}
