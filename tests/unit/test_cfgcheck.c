/*
 * Unit tests for what lib/config reads of a config (config/facts.h): the
 * COCO categories reader (the file is
 * skipped key by key, only "categories" parsed: strings holding brackets
 * and escaped quotes must not fool it, a cut file must be refused), and
 * the facts read from an effective config in both OpenMMLab dialects.
 */
#include "unit.h"

#include "config/facts.h"

static int coco(const char *text, long long *count, cJSON **names)
{
	envlock_ctx *ctx;
	int rc;

	assert_int_equal(envlock_ctx_new(&ctx), 0);
	rc = el_coco_categories_mem(ctx, "t.json", text, strlen(text), count, names, 10);
	envlock_ctx_free(ctx);
	return rc;
}

static void coco_categories(void **state)
{
	long long n = -1;
	cJSON *names = NULL;

	(void)state;
	/* last, after values whose strings hold brackets, braces and escaped quotes */
	assert_int_equal(coco("{\"info\": {\"d\": \"a } ] [ { \\\" \\\\\"}, \"images\": [[1, [2]], {\"x\": \"]\"}],"
			      " \"n\": -1.5e3, \"t\": true, \"z\": null,"
			      " \"categories\": [{\"id\": 1, \"name\": \"a\\\"b\"}, {\"id\": 2, \"name\": \"c\"}]}",
			      &n, &names),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(cJSON_GetArraySize(names), 2);
	assert_string_equal(cJSON_GetArrayItem(names, 0)->valuestring, "a\"b");
	cJSON_Delete(names);
	/* first, and the rest of the file never read (it is not even JSON) */
	assert_int_equal(coco("\n{ \"categories\" : [ ] , garbage", &n, NULL), 0);
	assert_int_equal(n, 0);
	/* a key that only contains the word is not it */
	assert_int_equal(coco("{\"my_categories\": [{}], \"x\": 1}", &n, NULL), ENVLOCK_ENOTFOUND);
	assert_int_equal(coco("{}", &n, NULL), ENVLOCK_ENOTFOUND);
	/* nested categories are not COCO's */
	assert_int_equal(coco("{\"a\": {\"categories\": [{}]}}", &n, NULL), ENVLOCK_ENOTFOUND);
}

static void coco_refused(void **state)
{
	long long n = -1;
	cJSON *names = NULL;
	char *deep;

	(void)state;
	assert_int_equal(coco("", &n, NULL), ENVLOCK_EPARSE);
	assert_int_equal(coco("[1]", &n, NULL), ENVLOCK_EPARSE);
	assert_int_equal(coco("{\"images\": [1, 2", &n, NULL), ENVLOCK_EPARSE);
	assert_int_equal(coco("{\"images\": \"open", &n, NULL), ENVLOCK_EPARSE);
	assert_int_equal(coco("{\"categories\": [{\"id\": 1}", &n, NULL), ENVLOCK_EPARSE);
	assert_int_equal(coco("{\"categories\": {\"id\": 1}}", &n, NULL), ENVLOCK_EPARSE);
	assert_int_equal(coco("{\"categories\": [1, 2]}", &n, &names), ENVLOCK_EPARSE);
	assert_null(names);
	assert_int_equal(coco("{\"a\" 1}", &n, NULL), ENVLOCK_EPARSE);
	assert_int_equal(coco("{\"a\": 1 \"b\": 2}", &n, NULL), ENVLOCK_EPARSE);
	/* brackets nested past the limit are refused, not recursed into */
	deep = malloc(40010);
	memcpy(deep, "{\"a\": ", 6);
	memset(deep + 6, '[', 20000);
	memset(deep + 20006, ']', 20000);
	strcpy(deep + 40006, "}");
	assert_int_equal(coco(deep, &n, NULL), ENVLOCK_EPARSE);
	free(deep);
}

static cJSON *parse(const char *json)
{
	cJSON *v = cJSON_Parse(json);

	assert_non_null(v);
	return v;
}

static void facts_mmengine(void **state)
{
	cJSON *v = parse("{\"default_scope\": \"mmpose\","
			 " \"custom_imports\": {\"imports\": [\"mmpretrain.models\", \"mmpose.engine\"]},"
			 " \"model\": {\"backbone\": {\"type\": \"mmpretrain.VisionTransformer\"},"
			 "   \"head\": {\"type\": \"HeatmapHead\", \"num_classes\": 17}, \"rpn_head\": {\"num_classes\": 1}},"
			 " \"train_dataloader\": {\"batch_size\": 32, \"num_workers\": 8, \"persistent_workers\": true,"
			 "   \"dataset\": {\"type\": \"RepeatDataset\", \"times\": 2, \"dataset\": {\"type\": \"CocoDataset\","
			 "     \"data_root\": \"data/coco\", \"ann_file\": \"annotations/a.json\","
			 "     \"metainfo\": {\"classes\": [\"a\", \"b\", \"c\"]},"
			 "     \"pipeline\": [{\"type\": \"LoadImage\"}, {\"type\": \"Resize\", \"scale\": [1333, 800],"
			 "       \"keep_ratio\": true}, {\"type\": \"Pad\", \"size\": [1024, 1024]}]}}},"
			 " \"val_dataloader\": {\"batch_size\": 1, \"num_workers\": 2},"
			 " \"optim_wrapper\": {\"type\": \"AmpOptimWrapper\", \"optimizer\": {\"type\": \"SGD\", \"lr\": 0.02}},"
			 " \"auto_scale_lr\": {\"enable\": false, \"base_batch_size\": 16},"
			 " \"env_cfg\": {\"cudnn_benchmark\": true}, \"resume\": true, \"load_from\": null}");
	el_cfg_facts f;
	const el_cfg_loader *t;
	char *ann;

	(void)state;
	el_cfg_facts_read(&f, v, "/p/configs/x/faster-rcnn_r50_fpn_4xb8-1x_coco.py");
	assert_true(f.mmengine);
	assert_int_equal(f.nloaders, 2);
	t = el_cfg_loader_of(&f, "train");
	assert_non_null(t);
	assert_int_equal(t->batch_size, 32);
	assert_int_equal(t->num_workers, 8);
	assert_int_equal(t->persistent_workers, EL_CFG_YES);
	assert_int_equal(t->pin_memory, EL_CFG_UNSET);
	assert_string_equal(t->workers_key, "train_dataloader.num_workers");
	assert_string_equal(t->dataset_key, "train_dataloader.dataset.dataset");
	assert_int_equal(t->classes, 3);
	assert_string_equal(t->classes_key, "train_dataloader.dataset.dataset.metainfo.classes");
	ann = el_cfg_ann_file(t->dataset);
	assert_string_equal(ann, "data/coco/annotations/a.json");
	free(ann);
	assert_int_equal(el_cfg_loader_of(&f, "val")->num_workers, 2);
	assert_null(el_cfg_loader_of(&f, "test"));
	assert_true(f.has_lr);
	assert_true(f.lr == 0.02);
	assert_string_equal(f.lr_key, "optim_wrapper.optimizer.lr");
	/* auto_scale_lr wins over the name's 4xb8; the name still gives the per-GPU reference */
	assert_int_equal(f.base_batch, 16);
	assert_string_equal(f.base_from, "auto_scale_lr.base_batch_size");
	assert_string_equal(f.name_ref, "4xb8");
	assert_int_equal(f.name_batch, 8);
	assert_int_equal(f.auto_scale, EL_CFG_NO);
	assert_int_equal(f.amp, EL_CFG_YES);
	assert_int_equal(f.cudnn_benchmark, EL_CFG_YES);
	/* Resize(keep_ratio) varies, the Pad to one size after it fixes it */
	assert_int_equal(f.fixed_size, EL_CFG_YES);
	assert_string_equal(f.size_why, "Pad(size=...)");
	assert_int_equal(f.nneeds, 4);
	assert_string_equal(f.needs[0].name, "mmpretrain.models");
	assert_string_equal(f.needs[1].name, "mmpose.engine");
	assert_string_equal(f.needs[2].name, "mmpose");
	assert_string_equal(f.needs[2].key, "default_scope");
	assert_string_equal(f.needs[3].name, "mmpretrain");
	assert_string_equal(f.needs[3].key, "model.backbone.type");
	assert_int_equal(f.nclasses, 1);
	assert_string_equal(f.classes[0].key, "model.head.num_classes");
	assert_int_equal(f.resume, EL_CFG_YES);
	assert_null(f.load_from);
	el_cfg_facts_free(&f);
	cJSON_Delete(v);
}

static void facts_mmcv(void **state)
{
	cJSON *v = parse("{\"data\": {\"samples_per_gpu\": 2, \"workers_per_gpu\": 4,"
			 "  \"train_dataloader\": {\"samples_per_gpu\": 4},"
			 "  \"train\": {\"type\": \"CocoDataset\", \"ann_file\": \"/d/a.json\", \"classes\": [\"x\"],"
			 "    \"pipeline\": [{\"type\": \"Resize\", \"img_scale\": [[1333, 640], [1333, 800]]}]},"
			 "  \"val\": {\"type\": \"CocoDataset\"}},"
			 " \"optimizer\": {\"type\": \"SGD\", \"lr\": 0.01}, \"fp16\": {\"loss_scale\": 512.0},"
			 " \"cudnn_benchmark\": false, \"load_from\": \"ckpt/x.pth\", \"resume_from\": \"\","
			 " \"model\": {\"roi_head\": {\"bbox_head\": [{\"num_classes\": 80}, {\"num_classes\": 80}]}}}");
	el_cfg_facts f;
	const el_cfg_loader *t;
	char *ann;

	(void)state;
	el_cfg_facts_read(&f, v, "cascade_rcnn_r50_fpn_1x_coco.py");
	assert_false(f.mmengine);
	t = el_cfg_loader_of(&f, "train");
	assert_int_equal(t->batch_size, 4);
	assert_int_equal(t->num_workers, 4);
	assert_string_equal(t->key, "data.train_dataloader");
	assert_string_equal(t->workers_key, "data.workers_per_gpu");
	assert_int_equal(el_cfg_loader_of(&f, "val")->batch_size, 2);
	assert_int_equal(t->classes, 1);
	ann = el_cfg_ann_file(t->dataset);
	assert_string_equal(ann, "/d/a.json");
	free(ann);
	assert_string_equal(f.lr_key, "optimizer.lr");
	assert_true(f.lr == 0.01);
	/* no NxbM in the name and no auto_scale_lr: no reference */
	assert_int_equal(f.base_batch, -1);
	assert_null(f.name_ref);
	assert_int_equal(f.amp, EL_CFG_YES);
	assert_string_equal(f.amp_key, "fp16");
	assert_int_equal(f.cudnn_benchmark, EL_CFG_NO);
	assert_int_equal(f.fixed_size, EL_CFG_NO);
	assert_string_equal(f.size_why, "Resize(several scales)");
	assert_int_equal(f.nclasses, 2);
	assert_string_equal(f.classes[1].key, "model.roi_head.bbox_head.1.num_classes");
	assert_string_equal(f.load_from, "ckpt/x.pth");
	assert_null(f.resume_from);
	assert_int_equal(f.nneeds, 0);
	el_cfg_facts_free(&f);
	cJSON_Delete(v);
}

static void facts_names(void **state)
{
	static const struct {
		const char *path;
		const char *ref;
		long long base;
	} cases[] = {
		{ "td-hm_ViTPose-small_8xb64-210e_coco-256x192.py", "8xb64", 512 },
		{ "/a/resnet18_8xb32_in1k.py", "8xb32", 256 },
		{ "rtmdet_l_8xb32-300e_coco.py", "8xb32", 256 },
		{ "faster_rcnn_r50_fpn_1x_coco.py", NULL, -1 },
		{ "yolox_s_8x8_300e_coco.py", NULL, -1 },  /* the old NxM style names no batch with a b */
		{ "x_18xb2.py", "18xb2", 36 },
		{ "ax8xb2.py", NULL, -1 },                  /* 8 inside a word is not a count */
	};
	cJSON *v = parse("{}");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		el_cfg_facts f;

		el_cfg_facts_read(&f, v, cases[i].path);
		if (cases[i].ref)
			assert_string_equal(f.name_ref, cases[i].ref);
		else
			assert_null(f.name_ref);
		assert_int_equal(f.base_batch, cases[i].base);
		el_cfg_facts_free(&f);
	}
	cJSON_Delete(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(coco_categories),
		cmocka_unit_test(coco_refused),
		cmocka_unit_test(facts_mmengine),
		cmocka_unit_test(facts_mmcv),
		cmocka_unit_test(facts_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
