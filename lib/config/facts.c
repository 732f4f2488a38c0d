/*
 * The facts of an effective config, in both OpenMMLab dialects. Each is
 * read where the framework itself reads it:
 *   loaders      mmengine: {train,val,test}_dataloader.{batch_size,num_workers,
 *                prefetch_factor,persistent_workers,pin_memory,dataset}; mmcv 1.x:
 *                data.{samples_per_gpu,workers_per_gpu} (data.train_dataloader
 *                overrides them, as mmdet 2.x's train_detector does) and data.train
 *   lr           optim_wrapper.optimizer.lr; optimizer.lr
 *   reference    auto_scale_lr.base_batch_size; else the file name's NxbM
 *   AMP          optim_wrapper.type == 'AmpOptimWrapper' (what --amp sets); fp16 = dict(...)
 *   cuDNN        env_cfg.cudnn_benchmark; cudnn_benchmark
 *   needs        custom_imports.imports, default_scope, _scope_, and every
 *                scoped type ('mmpretrain.VisionTransformer')
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_CFG_MAX_WALK 64 /* nesting the walks follow */
#define EL_CFG_MAX_NEEDS 256

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* o.a.b for "a.b" */
static const cJSON *at(const cJSON *o, const char *dotted)
{
	char buf[128];
	const char *p = dotted;

	while (o && *p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(buf))
			return NULL;
		memcpy(buf, p, n);
		buf[n] = '\0';
		o = get(o, buf);
		p += n;
		if (*p == '.')
			p++;
	}
	return o;
}

static long long int_of(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 ? (long long)v->valuedouble : -1;
}

static int bool_of(const cJSON *v)
{
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? EL_CFG_YES : EL_CFG_NO;
	if (cJSON_IsNumber(v))
		return v->valuedouble != 0 ? EL_CFG_YES : EL_CFG_NO;
	return EL_CFG_UNSET;
}

static char *join_key(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = el_xmalloc(na + nb + 2);

	memcpy(s, a, na);
	s[na] = '.';
	memcpy(s + na + 1, b, nb + 1);
	return na ? s : memmove(s, s + 1, nb + 1);
}

/* The dataset that reads the files: RepeatDataset/ClassBalancedDataset/MultiImageMixDataset wrap one in
 * "dataset", ConcatDataset lists them in "datasets" (the first is taken). */
static const cJSON *unwrap(const cJSON *ds, char **key)
{
	for (int depth = 0; cJSON_IsObject(ds) && depth < EL_CFG_MAX_WALK; depth++) {
		const cJSON *inner = get(ds, "dataset");
		const char *step = "dataset";
		char *k;

		if (!cJSON_IsObject(inner)) {
			const cJSON *list = get(ds, "datasets");

			inner = cJSON_IsArray(list) ? list->child : NULL;
			step = "datasets.0";
		}
		if (!cJSON_IsObject(inner) || get(ds, "ann_file"))
			break;
		k = join_key(*key, step);
		free(*key);
		*key = k;
		ds = inner;
	}
	return ds;
}

static const cJSON *pipeline_of(const cJSON *outer, const cJSON *inner)
{
	const cJSON *p = get(outer, "pipeline");

	return cJSON_IsArray(p) ? p : cJSON_IsArray(get(inner, "pipeline")) ? get(inner, "pipeline") : NULL;
}

static void classes_of(el_cfg_loader *l)
{
	static const char *const where[] = { "classes", "metainfo.classes" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		const cJSON *c = at(l->dataset, where[i]);

		if (cJSON_IsArray(c)) {
			l->classes = cJSON_GetArraySize(c);
			l->classes_key = join_key(l->dataset_key, where[i]);
			return;
		}
	}
}

static void loader_dataset(el_cfg_loader *l, const cJSON *outer, const char *key)
{
	l->dataset_key = el_xstrdup(key);
	l->dataset = unwrap(outer, &l->dataset_key);
	l->pipeline = pipeline_of(outer, l->dataset);
	classes_of(l);
}

static el_cfg_loader *new_loader(el_cfg_facts *f, const char *phase, const char *key)
{
	el_cfg_loader *l = &f->loaders[f->nloaders++];

	memset(l, 0, sizeof(*l));
	l->phase = phase;
	l->key = el_xstrdup(key);
	l->batch_size = l->num_workers = l->prefetch_factor = l->classes = -1;
	l->persistent_workers = l->pin_memory = EL_CFG_UNSET;
	return l;
}

static void read_mmengine_loaders(el_cfg_facts *f, const cJSON *v)
{
	static const char *const phases[] = { "train", "val", "test" };

	for (size_t i = 0; i < 3; i++) {
		char key[32];
		const cJSON *d;
		el_cfg_loader *l;

		snprintf(key, sizeof(key), "%s_dataloader", phases[i]);
		d = get(v, key);
		if (!cJSON_IsObject(d))
			continue;
		l = new_loader(f, phases[i], key);
		l->batch_size = int_of(get(d, "batch_size"));
		l->num_workers = int_of(get(d, "num_workers"));
		l->prefetch_factor = int_of(get(d, "prefetch_factor"));
		l->persistent_workers = bool_of(get(d, "persistent_workers"));
		l->pin_memory = bool_of(get(d, "pin_memory"));
		l->workers_key = join_key(key, "num_workers");
		if (cJSON_IsObject(get(d, "dataset"))) {
			char *dk = join_key(key, "dataset");

			loader_dataset(l, get(d, "dataset"), dk);
			free(dk);
		}
	}
}

/* mmcv 1.x: data.samples_per_gpu/workers_per_gpu for every phase, data.<phase>_dataloader over them */
static void read_mmcv_loaders(el_cfg_facts *f, const cJSON *v)
{
	static const char *const phases[] = { "train", "val", "test" };
	const cJSON *data = get(v, "data");

	for (size_t i = 0; i < 3; i++) {
		const cJSON *ds = get(data, phases[i]), *over;
		char key[40];
		el_cfg_loader *l;
		long long n;

		if (!cJSON_IsObject(ds))
			continue;
		l = new_loader(f, phases[i], "data");
		l->batch_size = int_of(get(data, "samples_per_gpu"));
		l->num_workers = int_of(get(data, "workers_per_gpu"));
		l->persistent_workers = bool_of(get(data, "persistent_workers"));
		l->pin_memory = bool_of(get(data, "pin_memory"));
		l->workers_key = el_xstrdup("data.workers_per_gpu");
		snprintf(key, sizeof(key), "%s_dataloader", phases[i]);
		over = get(data, key);
		if (cJSON_IsObject(over)) {
			if ((n = int_of(get(over, "samples_per_gpu"))) >= 0)
				l->batch_size = n;
			if ((n = int_of(get(over, "workers_per_gpu"))) >= 0) {
				l->num_workers = n;
				free(l->workers_key);
				l->workers_key = el_xmalloc(strlen(key) + sizeof("data..workers_per_gpu"));
				sprintf(l->workers_key, "data.%s.workers_per_gpu", key);
			}
			/* build_dataloader hands the rest of <phase>_dataloader to PyTorch's DataLoader */
			l->prefetch_factor = int_of(get(over, "prefetch_factor"));
			if (bool_of(get(over, "persistent_workers")) != EL_CFG_UNSET)
				l->persistent_workers = bool_of(get(over, "persistent_workers"));
			free(l->key);
			l->key = join_key("data", key);
		}
		snprintf(key, sizeof(key), "data.%s", phases[i]);
		loader_dataset(l, ds, key);
	}
}

/* "8xb2" in "faster-rcnn_r50_fpn_8xb2-1x_coco.py": N GPUs x M samples each, OpenMMLab's naming convention */
static void read_name(el_cfg_facts *f, const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	for (const char *p = base; p && *p; p++) {
		char *end;
		long gpus, batch;

		if (!isdigit((unsigned char)*p) || (p > base && isalnum((unsigned char)p[-1])))
			continue;
		gpus = strtol(p, &end, 10);
		if (end[0] != 'x' || end[1] != 'b' || !isdigit((unsigned char)end[2]))
			continue;
		batch = strtol(end + 2, &end, 10);
		if (isalnum((unsigned char)*end) || gpus <= 0 || batch <= 0 || gpus > 4096 || batch > 1 << 20)
			continue;
		f->name_ref = el_xstrndup(p, (size_t)(end - p));
		f->name_batch = batch;
		if (f->base_batch < 0) {
			f->base_batch = gpus * batch;
			f->base_from = "the file name";
		}
		return;
	}
}

static void add_need(el_cfg_facts *f, const char *name, size_t n, const char *key, const char *value)
{
	el_cfg_need *x;

	if (n == 0 || f->nneeds >= EL_CFG_MAX_NEEDS)
		return;
	for (size_t i = 0; i < f->nneeds; i++)
		if (strlen(f->needs[i].name) == n && !memcmp(f->needs[i].name, name, n))
			return;
	f->needs = el_xrealloc(f->needs, (f->nneeds + 1) * sizeof(*f->needs));
	x = &f->needs[f->nneeds++];
	x->name = el_xstrndup(name, n);
	x->key = el_xstrdup(key);
	x->value = el_xstrdup(value);
}

/* every "type": "scope.Name" and "_scope_": "scope", every num_classes under model */
static void walk(el_cfg_facts *f, const cJSON *o, const char *key, bool in_model, int depth)
{
	if (depth > EL_CFG_MAX_WALK || !(cJSON_IsObject(o) || cJSON_IsArray(o)))
		return;
	int i = 0;

	for (const cJSON *c = o->child; c; c = c->next, i++) {
		char idx[24];
		char *k;

		snprintf(idx, sizeof(idx), "%d", i);
		k = join_key(key, cJSON_IsArray(o) ? idx : c->string);
		if (cJSON_IsObject(o) && cJSON_IsString(c)) {
			const char *dot = strchr(c->valuestring, '.');

			if (!strcmp(c->string, "type") && dot)
				add_need(f, c->valuestring, (size_t)(dot - c->valuestring), k, c->valuestring);
			else if (!strcmp(c->string, "_scope_"))
				add_need(f, c->valuestring, strlen(c->valuestring), k, c->valuestring);
		}
		if (in_model && cJSON_IsObject(o) && !strcmp(c->string, "num_classes") && int_of(c) >= 0 &&
		    !strstr(k, "rpn_head")) {
			f->classes = el_xrealloc(f->classes, (f->nclasses + 1) * sizeof(*f->classes));
			f->classes[f->nclasses].key = el_xstrdup(k);
			f->classes[f->nclasses++].value = int_of(c);
		}
		walk(f, c, k, in_model || (depth == 0 && c->string && !strcmp(c->string, "model")), depth + 1);
		free(k);
	}
}

static void read_needs(el_cfg_facts *f, const cJSON *v)
{
	const cJSON *imports = at(v, "custom_imports.imports"), *scope = get(v, "default_scope");

	if (cJSON_IsString(imports))
		add_need(f, imports->valuestring, strlen(imports->valuestring), "custom_imports.imports",
			 imports->valuestring);
	else if (cJSON_IsArray(imports))
		for (const cJSON *m = imports->child; m; m = m->next)
			if (cJSON_IsString(m))
				add_need(f, m->valuestring, strlen(m->valuestring), "custom_imports.imports",
					 m->valuestring);
	if (cJSON_IsString(scope))
		add_need(f, scope->valuestring, strlen(scope->valuestring), "default_scope", scope->valuestring);
	walk(f, v, "", false, 0);
}

static const char *type_of(const cJSON *t)
{
	const cJSON *ty = get(t, "type");
	const char *s = cJSON_IsString(ty) ? ty->valuestring : "";
	const char *dot = strrchr(s, '.');

	return dot ? dot + 1 : s;
}

static bool is_pair(const cJSON *v)
{
	return cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 && cJSON_IsNumber(v->child) &&
	       cJSON_IsNumber(v->child->next);
}

static void decide(el_cfg_facts *f, int fixed, const char *why)
{
	f->fixed_size = fixed;
	free(f->size_why);
	f->size_why = el_xstrdup(why);
}

/*
 * Whether the train pipeline makes every image the same size: the last
 * transform that sets the size decides. TopdownAffine (mmpose),
 * RandomResizedCrop/CenterCrop (mmpretrain), Resize to one scale without
 * keep_ratio and Pad to a size make it fixed; Resize with keep_ratio,
 * several scales or RandomResize/RandomChoiceResize make it vary.
 */
static void read_sizes(el_cfg_facts *f, const cJSON *pipeline, int depth)
{
	if (!cJSON_IsArray(pipeline) || depth > 4)
		return;
	for (const cJSON *t = pipeline->child; t; t = t->next) {
		const char *ty = type_of(t);

		if (!strcmp(ty, "TopdownAffine") || !strcmp(ty, "RandomResizedCrop") || !strcmp(ty, "CenterCrop") ||
		    !strcmp(ty, "ResizeEdge") || !strcmp(ty, "RandomCrop")) {
			if (strcmp(ty, "ResizeEdge") && strcmp(ty, "RandomCrop"))
				decide(f, EL_CFG_YES, ty);
		} else if (!strcmp(ty, "Resize")) {
			const cJSON *scale = get(t, "scale") ? get(t, "scale") : get(t, "img_scale");
			int keep = bool_of(get(t, "keep_ratio"));

			if (keep == EL_CFG_YES || (cJSON_IsArray(scale) && !is_pair(scale)))
				decide(f, EL_CFG_NO, keep == EL_CFG_YES ? "Resize(keep_ratio=True)" : "Resize(several scales)");
			else if (is_pair(scale) || get(t, "size"))
				decide(f, EL_CFG_YES, "Resize to one scale");
		} else if (!strcmp(ty, "RandomResize") || !strcmp(ty, "RandomChoiceResize") ||
			   !strcmp(ty, "RandomChoice") || !strcmp(ty, "Mosaic")) {
			decide(f, EL_CFG_NO, ty);
		} else if (!strcmp(ty, "Pad") && (is_pair(get(t, "size")) || cJSON_IsNumber(get(t, "size")))) {
			decide(f, EL_CFG_YES, "Pad(size=...)");
		}
	}
}

/* An int, or the two ints of a (height, width) pair: 0 when it is neither */
static bool size_pair(const cJSON *v, long long *h, long long *w)
{
	if (int_of(v) > 0) {
		*h = *w = int_of(v);
		return true;
	}
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
		return false;
	*h = int_of(cJSON_GetArrayItem(v, 0));
	*w = int_of(cJSON_GetArrayItem(v, 1));
	return *h > 0 && *w > 0;
}

/*
 * model.backbone as a vision transformer (mmpretrain's VisionTransformer,
 * ViTPose's backbone): an arch of numbers (embed_dims, num_layers,
 * num_heads), img_size and patch_size make its tokens, plus the class
 * token unless with_cls_token=False (mmpretrain's default is True). An
 * arch named by a string ('small') is not known here: left out.
 */
static void read_vit(el_cfg_facts *f, const cJSON *v)
{
	const cJSON *b = at(v, "model.backbone"), *arch = get(b, "arch"), *t = get(b, "type");
	long long h, w, p = int_of(get(b, "patch_size")), cls;

	if (!cJSON_IsString(t) || !strstr(t->valuestring, "VisionTransformer") || !cJSON_IsObject(arch) ||
	    !size_pair(get(b, "img_size"), &h, &w) || p <= 0 || h < p || w < p)
		return;
	cls = bool_of(get(b, "with_cls_token")) == EL_CFG_NO ? 0 : 1;
	f->vit_dims = int_of(get(arch, "embed_dims"));
	f->vit_layers = int_of(get(arch, "num_layers"));
	f->vit_heads = int_of(get(arch, "num_heads"));
	f->vit_tokens = (h / p) * (w / p) + cls;
	if (f->vit_dims <= 0 || f->vit_layers <= 0 || f->vit_heads <= 0 || f->vit_layers > 1000 || f->vit_dims > 100000 ||
	    f->vit_tokens > 1000000)
		f->vit_layers = 0;
}

void el_cfg_facts_read(el_cfg_facts *f, const cJSON *v, const char *path)
{
	const cJSON *x;
	const el_cfg_loader *train;

	memset(f, 0, sizeof(*f));
	f->base_batch = f->name_batch = -1;
	f->auto_scale = f->amp = f->cudnn_benchmark = f->fixed_size = f->resume = EL_CFG_UNSET;
	if (!cJSON_IsObject(v))
		return;
	f->mmengine = cJSON_IsObject(get(v, "train_dataloader")) || cJSON_IsObject(get(v, "val_dataloader")) ||
		      cJSON_IsObject(get(v, "optim_wrapper"));
	if (f->mmengine)
		read_mmengine_loaders(f, v);
	else
		read_mmcv_loaders(f, v);

	f->lr_key = f->mmengine ? "optim_wrapper.optimizer.lr" : "optimizer.lr";
	x = at(v, f->lr_key);
	if (cJSON_IsNumber(x) && x->valuedouble > 0) {
		f->lr = x->valuedouble;
		f->has_lr = true;
	}
	if (int_of(at(v, "auto_scale_lr.base_batch_size")) > 0) {
		f->base_batch = int_of(at(v, "auto_scale_lr.base_batch_size"));
		f->base_from = "auto_scale_lr.base_batch_size";
	}
	f->auto_scale = bool_of(at(v, "auto_scale_lr.enable"));
	read_name(f, path);

	x = at(v, "optim_wrapper.type");
	if (cJSON_IsString(x)) {
		f->amp = !strcmp(x->valuestring, "AmpOptimWrapper") ? EL_CFG_YES : EL_CFG_NO;
		f->amp_key = "optim_wrapper.type";
	} else if ((x = get(v, "fp16")) != NULL) {
		f->amp = cJSON_IsObject(x) ? EL_CFG_YES : EL_CFG_NO;
		f->amp_key = "fp16";
	} else {
		f->amp = EL_CFG_NO;
		f->amp_key = f->mmengine ? "optim_wrapper.type" : "fp16";
	}
	f->cudnn_key = f->mmengine ? "env_cfg.cudnn_benchmark" : "cudnn_benchmark";
	f->cudnn_benchmark = bool_of(at(v, f->cudnn_key));

	if ((train = el_cfg_loader_of(f, "train")) != NULL)
		read_sizes(f, train->pipeline, 0);
	if (f->fixed_size == EL_CFG_YES && cJSON_IsArray(at(v, "model.data_preprocessor.batch_augments")))
		for (const cJSON *t = at(v, "model.data_preprocessor.batch_augments")->child; t; t = t->next)
			if (!strcmp(type_of(t), "BatchSyncRandomResize"))
				decide(f, EL_CFG_NO, "BatchSyncRandomResize");
	read_needs(f, v);
	read_vit(f, v);

	x = get(v, "load_from");
	f->load_from = cJSON_IsString(x) && *x->valuestring ? x->valuestring : NULL;
	x = get(v, "resume_from");
	f->resume_from = cJSON_IsString(x) && *x->valuestring ? x->valuestring : NULL;
	f->resume = bool_of(get(v, "resume"));
	x = get(v, "work_dir");
	f->work_dir = cJSON_IsString(x) && *x->valuestring ? x->valuestring : NULL;
}

const el_cfg_loader *el_cfg_loader_of(const el_cfg_facts *f, const char *phase)
{
	for (size_t i = 0; i < f->nloaders; i++)
		if (!strcmp(f->loaders[i].phase, phase))
			return &f->loaders[i];
	return NULL;
}

char *el_cfg_ann_file(const cJSON *dataset)
{
	const cJSON *ann = get(dataset, "ann_file"), *root = get(dataset, "data_root");
	const char *a, *r;
	size_t rn;
	char *out;

	if (!cJSON_IsString(ann) || !*ann->valuestring)
		return NULL;
	a = ann->valuestring;
	if (a[0] == '/' || !cJSON_IsString(root) || !*root->valuestring || strstr(a, "://"))
		return el_xstrdup(a);
	/* os.path.join(data_root, ann_file), even when ann_file already starts with it, as both do */
	r = root->valuestring;
	rn = strlen(r);
	out = el_xmalloc(rn + strlen(a) + 2);
	sprintf(out, "%s%s%s", r, r[rn - 1] == '/' ? "" : "/", a);
	return out;
}

void el_cfg_facts_free(el_cfg_facts *f)
{
	for (size_t i = 0; i < f->nloaders; i++) {
		free(f->loaders[i].key);
		free(f->loaders[i].workers_key);
		free(f->loaders[i].dataset_key);
		free(f->loaders[i].classes_key);
	}
	for (size_t i = 0; i < f->nneeds; i++) {
		free(f->needs[i].name);
		free(f->needs[i].key);
		free(f->needs[i].value);
	}
	for (size_t i = 0; i < f->nclasses; i++)
		free(f->classes[i].key);
	free(f->needs);
	free(f->classes);
	free(f->name_ref);
	free(f->size_why);
	memset(f, 0, sizeof(*f));
}
