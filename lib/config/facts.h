/*
 * What an OpenMMLab config says, read from its effective value (config.h)
 * in both dialects: mmcv 1.x (data=dict(samples_per_gpu=..., train=...),
 * optimizer, fp16) and mmengine (train_dataloader, optim_wrapper,
 * env_cfg): its data loaders, learning rate, AMP, cuDNN autotuner, the
 * modules it needs, its classes (facts.c); the files it names, as this
 * machine has them (files.c), with the categories of a COCO annotation
 * file (coco.c). The probe records them; the config rule kinds
 * (lib/cfgcheck) judge them.
 */
#ifndef EL_CONFIG_FACTS_H
#define EL_CONFIG_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "envlock/common.h"

/* a setting that may be absent */
enum { EL_CFG_UNSET = -1, EL_CFG_NO = 0, EL_CFG_YES = 1 };

/* One data loader: mmengine's train_dataloader, mmcv 1.x's data + data.train. */
typedef struct {
	const char *phase;      /* "train", "val", "test" */
	char *key;              /* where the loader is set: "train_dataloader", "data" */
	char *workers_key;      /* where its workers are: "train_dataloader.num_workers", "data.workers_per_gpu" */
	long long batch_size;   /* per GPU; -1 when not set */
	long long num_workers;  /* per GPU; -1 when not set */
	long long prefetch_factor; /* batches each worker loads ahead; -1 when not set (PyTorch's default: 2) */
	int persistent_workers, pin_memory;
	const cJSON *dataset;   /* the dataset that reads ann_file (wrappers unwrapped), or NULL */
	char *dataset_key;
	const cJSON *pipeline;  /* the pipeline the loader runs, or NULL */
	long long classes;      /* the dataset's classes= (metainfo.classes) override: its count, or -1 */
	char *classes_key;
} el_cfg_loader;

/* A module or registry scope the config needs, and where it says so. */
typedef struct {
	char *name;   /* "mmpretrain.models", "mmpretrain" */
	char *key;    /* "custom_imports.imports", "model.backbone.type", "default_scope" */
	char *value;  /* what is written there: "mmpretrain.VisionTransformer" */
} el_cfg_need;

/* A num_classes of the model's heads. */
typedef struct {
	char *key;    /* "model.roi_head.bbox_head.num_classes" */
	long long value;
} el_cfg_classes;

typedef struct {
	bool mmengine;                /* the mmengine dialect (train_dataloader), else mmcv 1.x */
	el_cfg_loader loaders[3];
	size_t nloaders;
	double lr;                    /* the optimizer's lr; has_lr says whether it is set */
	bool has_lr;
	const char *lr_key;
	long long base_batch;         /* auto_scale_lr.base_batch_size, else the name's NxbM; -1 */
	const char *base_from;        /* "auto_scale_lr.base_batch_size" or "the file name (8xb2)" */
	char *name_ref;               /* the file name's "8xb2", or NULL */
	long long name_batch;         /* M of the name's NxbM: the reference per-GPU batch; -1 */
	int auto_scale;               /* auto_scale_lr.enable */
	int amp;                      /* EL_CFG_YES: AmpOptimWrapper or fp16 = dict(...) */
	const char *amp_key;
	int cudnn_benchmark;
	const char *cudnn_key;
	int fixed_size;               /* the train pipeline's images: EL_CFG_YES fixed, NO varying, UNSET */
	char *size_why;               /* the transform that decides it */
	el_cfg_need *needs;
	size_t nneeds;
	el_cfg_classes *classes;
	size_t nclasses;
	const char *load_from, *resume_from, *work_dir;
	int resume;
	/*
	 * A vision transformer backbone (model.backbone, type *VisionTransformer
	 * with its arch given as numbers): its layers, width, heads and the
	 * tokens an image makes; vit_layers is 0 when the config has none.
	 */
	long long vit_layers, vit_dims, vit_heads, vit_tokens;
} el_cfg_facts;

/* Read the facts of an effective config (its "value"); path is the config's, for its name. */
void el_cfg_facts_read(el_cfg_facts *f, const cJSON *value, const char *path);
void el_cfg_facts_free(el_cfg_facts *f);

/* The loader of a phase ("train"), or NULL. */
const el_cfg_loader *el_cfg_loader_of(const el_cfg_facts *f, const char *phase);

/*
 * A dataset's ann_file as the dataset opens it: joined to its data_root
 * when relative, as mmengine's BaseDataset and mmdet 2.x's CustomDataset
 * do. NULL when the dataset names none; the caller frees it.
 */
char *el_cfg_ann_file(const cJSON *dataset);

/*
 * The categories of a COCO annotation file, streamed: only the top-level
 * "categories" array is parsed, everything else is skipped unread (the
 * files are hundreds of MB). *count is their number; names (optional)
 * gets a cJSON array of their names (at most max_names), the caller's.
 * ENVLOCK_ENOTFOUND: no top-level "categories"; ENVLOCK_EPARSE: not JSON
 * or categories not an array of objects; ENVLOCK_EIO. coco.c.
 */
int el_coco_categories(envlock_ctx *ctx, const char *path, long long *count, cJSON **names,
		       size_t max_names);
int el_coco_categories_mem(envlock_ctx *ctx, const char *name, const char *data, size_t len,
			   long long *count, cJSON **names, size_t max_names);

/*
 * The files a config's value names, looked at on this machine: for each,
 * {role, key, path, resolved, exists, ...} appended to files. Relative
 * paths are tried against cwd (tools/train.py runs from the project
 * root) and then the folder above the config's configs/. files.c.
 */
void el_cfg_files_record(envlock_ctx *ctx, cJSON *files, const cJSON *value, const char *config_path,
			 const char *cwd);

#endif
