/* lib/redact: which keys hold secrets, how config text and URLs are masked, the --redact pass. */
#include "unit.h"
#include <cJSON.h>

#include "redact/redact.h"

static void secret_keys_by_their_words(void **state)
{
	static const char *const secret[] = { "api_key", "WANDB_API_KEY", "access_key", "accessToken", "hf_token",
		"token", "password", "db_password", "client_secret", "key", "api-key", "apiKey", "aws_secret_access_key",
		"private_key", "credentials", "use_auth_token", NULL };
	static const char *const plain[] = { "keys", "meta_keys", "key_indicator", "pad_token", "eos_token",
		"max_tokens", "tokenizer", "monkey", "type", "work_dir", "load_from", "token_len", "", NULL };

	(void)state;
	for (const char *const *s = secret; *s; s++)
		if (!el_redact_secret_key(*s, strlen(*s)))
			fail_msg("'%s' should be a secret's key", *s);
	for (const char *const *s = plain; *s; s++)
		if (el_redact_secret_key(*s, strlen(*s)))
			fail_msg("'%s' should not be a secret's key", *s);
}

static void expect_text(const char *in, const char *want, size_t want_n)
{
	size_t n = 0;
	char *out = el_redact_text_secrets(in, &n);

	if (!want) {
		if (out)
			fail_msg("'%s' changed into '%s'", in, out);
	} else {
		if (!out || strcmp(out, want) != 0)
			fail_msg("'%s' changed into '%s', not '%s'", in, out ? out : "(nothing)", want);
	}
	if (n != want_n)
		fail_msg("'%s': %zu masked, not %zu", in, n, want_n);
	free(out);
}

static void config_text_masks_values_not_keys(void **state)
{
	(void)state;
	/* the W&B hook of an OpenMMLab config, with a key of W&B's shape (40 hex digits) */
	expect_text("log_config = dict(hooks=[dict(type='WandbLoggerHook', init_kwargs=dict(project='det', api_key='6f1b2c3d4e5f60718293a4b5c6d7e8f901234567'))])\n",
		    "log_config = dict(hooks=[dict(type='WandbLoggerHook', init_kwargs=dict(project='det', api_key='<secret>'))])\n", 1);
	/* Python, dict literals, JSON, YAML, INI and shell, each as people write them */
	expect_text("hf_token = \"hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\"\n", "hf_token = \"<secret>\"\n", 1);
	expect_text("cfg = {'password': 'c0rrectHorseBattery9', 'user': 'x'}\n", "cfg = {'password': '<secret>', 'user': 'x'}\n", 1);
	expect_text("{\"client_secret\": \"9f8e7d6c5b4a39281706f5e4\", \"n\": 1}", "{\"client_secret\": \"<secret>\", \"n\": 1}", 1);
	expect_text("wandb:\n  api_key: abcdef1234567890abcd # mine\n", "wandb:\n  api_key: <secret> # mine\n", 1);
	expect_text("[auth]\naccess_key = AKIAIOSFODNN7EXAMPLE\n", "[auth]\naccess_key = <secret>\n", 1);
	expect_text("export WANDB_API_KEY=6f1b2c3d4e5f60718293a4b5c6d7e8f901234567\n", "export WANDB_API_KEY=<secret>\n", 1);
	expect_text("os.environ['HF_TOKEN'] = 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'\n", "os.environ['HF_TOKEN'] = '<secret>'\n", 1);
	expect_text("def f(api_key: str = 'k1k2k3k4k5k6k7k8'):\n", "def f(api_key: str = '<secret>'):\n", 1);
	expect_text("token = r'''ghp_0123456789abcdefghijABCDEFGHIJ0123456789'''\n", "token = r'''<secret>'''\n", 1);
	expect_text("api_key = 1234567890123456789\n", "api_key = <secret>\n", 1);
	/* a token by its own shape, under any name */
	expect_text("hub = dict(auth='ghp_0123456789abcdefghijABCDEFGHIJ0123456789')\n", "hub = dict(auth='<secret>')\n", 1);
	/* references, empties, comparisons, the pipeline's keys, and words are not secrets */
	expect_text("api_key = os.environ['WANDB_API_KEY']\n", NULL, 0);
	expect_text("api_key = os.getenv('K')\ntoken = None\npassword = ''\nkey = '${KEY}'\n", NULL, 0);
	expect_text("if api_key == 'x':\n", NULL, 0);
	expect_text("dict(type='Collect', keys=['img', 'gt_bboxes'], meta_keys=('filename',))\n", NULL, 0);
	expect_text("evaluation = dict(interval=1, metric='bbox', save_best='auto', key_indicator='mAP')\n", NULL, 0);
	/* a key's name alone masks nothing: mmdet's proposal field, a short word, a text */
	expect_text("fields = [dict(key='proposals')]\n", NULL, 0);
	expect_text("password = 'hunter2'\ntoken = r'''multi\nline'''\n", NULL, 0);
	/* masking twice changes nothing more */
	expect_text("api_key='<secret>'\n", NULL, 0);
	/* a URL's credentials, and a token in its query */
	expect_text("load_from = 'https://u:p4ss@dl.example/w.pth'\n", "load_from = 'https://dl.example/w.pth'\n", 1);
	expect_text("url = 'https://dl.example/w.pth?token=abc&v=2'\n", "url = 'https://dl.example/w.pth?v=2'\n", 1);
}

static void expect_url(const char *in, bool all, const char *want)
{
	size_t n = 0;
	char *out = el_redact_urls(in, all, &n);

	if (!want) {
		if (out)
			fail_msg("'%s' changed into '%s'", in, out);
		assert_int_equal(n, 0);
	} else {
		assert_non_null(out);
		assert_string_equal(out, want);
		assert_true(n > 0);
	}
	free(out);
}

static void urls_lose_credentials_and_tokens(void **state)
{
	(void)state;
	expect_url("https://alice:ghp_x@github.com/alice/mmdet.git", false, "https://github.com/alice/mmdet.git");
	expect_url("https://ghp_x@github.com/a/b", false, "https://github.com/a/b");
	expect_url("ssh://git@github.com/a/b", false, NULL);
	expect_url("https://${TOKEN}@h.example/simple", false, NULL);
	expect_url("https://h.example/simple?private_token=glpat-1&x=1#frag", false, "https://h.example/simple?x=1#frag");
	expect_url("https://s3.example/o?X-Amz-Signature=ab&X-Amz-Credential=cd", false, "https://s3.example/o");
	expect_url("https://conda.anaconda.org/t/tk-123/ch/linux-64", false, "https://conda.anaconda.org/ch/linux-64");
	expect_url("https://example.org/t/keep/this", false, NULL);
	expect_url("cloned from https://u:p@h.example/r.git, twice", false, "cloned from https://h.example/r.git, twice");
	/* --redact keeps host and path only */
	expect_url("https://h.example/simple?x=1#frag", true, "https://h.example/simple");
	expect_url("https://h.example/simple", true, NULL);
}

static const char *str_at(const cJSON *doc, const char *a, const char *b)
{
	return el_jget_str(el_jget(doc, a), b);
}

static void redact_all_places_stable_placeholders(void **state)
{
	static const char json[] =
		"{\"host\":{\"hostname\":\"gpu07.lab.example\"},"
		"\"gpu\":{\"devices\":[{\"uuid\":\"GPU-0718119d-ad79-9226-f2ec-72bb2f71ab2c\"},"
		"{\"gpu_uuid\":\"GPU-EB10C825-C083-7201-00FE-8890A367D8A5\",\"note\":\"MIG-GPU-0718119d-ad79-9226-f2ec-72bb2f71ab2c/1/0\"}]},"
		"\"python\":{\"prefix\":\"/home/alice/miniconda3\",\"executable\":\"/home/bob/py\"},"
		"\"conda\":{\"prefix\":\"/home/alice/miniconda3/envs/x\",\"note\":\"~alice/envs on gpu07\"},"
		"\"repos\":{\"remote\":\"https://github.com/alice/det.git?ref=main\"},"
		"\"system\":{\"os\":\"ubuntu\",\"where\":\"/home/ubuntu/x\"},"
		"\"env\":{\"variables\":{\"CUDA_HOME\":\"/usr/local/cuda\",\"PATH\":\"/home/alice/bin\",\"CUDA_PATH\":\"/usr/local/cuda\"}},"
		"\"configs\":{\"files\":[{\"path\":\"c.py\",\"text\":\"api_key='6f1b2c3d4e5f60718293a4b5c6d7e8f901234567'\\nwork_dir='/home/alice/w'\\n\","
		"\"effective\":{\"cfg_options\":[\"log_config.hooks.1.init_kwargs.api_key=6f1b2c3d4e5f60718293a4b5c6d7e8f901234567\",\"optimizer.lr=0.01\"],"
		"\"value\":{\"init_kwargs\":{\"api_key\":\"6f1b2c3d4e5f60718293a4b5c6d7e8f901234567\",\"project\":\"p\"},\"fields\":[{\"key\":\"proposals\"}],"
		"\"work_dir\":\"/home/alice/w\"}}}]}}";
	cJSON *doc = cJSON_Parse(json), *red, *vars;
	char *out;

	(void)state;
	assert_non_null(doc);
	el_redact_all(doc);
	out = cJSON_PrintUnformatted(doc);
	assert_null(strstr(out, "alice"));
	assert_null(strstr(out, "bob"));
	assert_null(strstr(out, "gpu07"));
	assert_null(strstr(out, "0718119d"));
	assert_null(strstr(out, "EB10C825"));
	free(out);
	assert_string_equal(str_at(doc, "host", "hostname"), "<host1>");
	{
		cJSON *devs = el_jget(el_jget(doc, "gpu"), "devices");

		/* the same board, the same placeholder, whatever the case of its hex digits */
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(devs, 0), "uuid"), "GPU-<gpu1>");
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(devs, 1), "gpu_uuid"), "GPU-<gpu2>");
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(devs, 1), "note"), "MIG-GPU-<gpu1>/1/0");
	}
	/* alice first, bob second: the same user, the same placeholder everywhere */
	assert_string_equal(str_at(doc, "python", "prefix"), "/home/<user1>/miniconda3");
	assert_string_equal(str_at(doc, "python", "executable"), "/home/<user2>/py");
	assert_string_equal(str_at(doc, "conda", "note"), "~<user1>/envs on <host1>");
	assert_string_equal(str_at(doc, "repos", "remote"), "https://github.com/<user1>/det.git");
	/* a generic account: its home is replaced, the word elsewhere is not */
	assert_string_equal(str_at(doc, "system", "os"), "ubuntu");
	assert_string_equal(str_at(doc, "system", "where"), "/home/<user3>/x");
	vars = el_jget(el_jget(doc, "env"), "variables");
	assert_string_equal(el_jget_str(vars, "CUDA_HOME"), "<env1>");
	assert_string_equal(el_jget_str(vars, "CUDA_PATH"), "<env1>");
	assert_string_equal(el_jget_str(vars, "PATH"), "<env2>");
	{
		cJSON *f = cJSON_GetArrayItem(el_jget(el_jget(doc, "configs"), "files"), 0);
		cJSON *v = el_jget(el_jget(f, "effective"), "value");

		assert_string_equal(el_jget_str(f, "text"), "api_key='<secret>'\nwork_dir='/home/<user1>/w'\n");
		assert_string_equal(str_at(v, "init_kwargs", "api_key"), "<secret>");
		assert_string_equal(str_at(v, "init_kwargs", "project"), "p");
		/* a field named key keeps its value: only a credential's shape is masked */
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(el_jget(v, "fields"), 0), "key"), "proposals");
		assert_string_equal(cJSON_GetArrayItem(el_jget(el_jget(f, "effective"), "cfg_options"), 0)->valuestring,
				    "log_config.hooks.1.init_kwargs.api_key=<secret>");
		assert_string_equal(cJSON_GetArrayItem(el_jget(el_jget(f, "effective"), "cfg_options"), 1)->valuestring,
				    "optimizer.lr=0.01");
	}
	red = el_jget(doc, "redacted");
	assert_true(el_jget_bool(red, "all", false));
	assert_int_equal(cJSON_GetArraySize(el_jget(red, "classes")), 6);
	assert_int_equal(el_jget_int(el_jget(red, "counts"), "secrets", -1), 3);
	assert_int_equal(el_jget_int(el_jget(red, "counts"), "env", -1), 3);
	assert_int_equal(el_jget_int(el_jget(red, "counts"), "urls", -1), 1);
	assert_int_equal(el_jget_int(el_jget(red, "counts"), "devices", -1), 3);
	/* the config values masked, listed by key path */
	{
		const cJSON *m = el_jget(red, "masked");

		assert_int_equal(cJSON_GetArraySize(m), 2);
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(m, 0), "config"), "c.py");
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(m, 0), "key"), "init_kwargs.api_key");
		assert_string_equal(el_jget_str(cJSON_GetArrayItem(m, 1), "key"),
				    "--cfg-options log_config.hooks.1.init_kwargs.api_key");
	}

	/* a second pass finds nothing more: the counts stay */
	out = cJSON_PrintUnformatted(doc);
	el_redact_all(doc);
	{
		char *again = cJSON_PrintUnformatted(doc);

		/* only the counts may differ, and they do not: nothing was left to replace */
		assert_string_equal(again, out);
		free(again);
	}
	free(out);
	cJSON_Delete(doc);
}

static void secrets_pass_records_only_what_it_masked(void **state)
{
	cJSON *doc = cJSON_Parse("{\"host\":{\"hostname\":\"gpu07\"},\"configs\":{\"files\":[{\"text\":\"lr = 0.02\\n\"}]}}");

	(void)state;
	assert_int_equal(el_redact_secrets(doc), 0);
	assert_null(el_jget(doc, "redacted"));
	assert_string_equal(str_at(doc, "host", "hostname"), "gpu07");
	cJSON_Delete(doc);

	doc = cJSON_Parse("{\"repos\":{\"url\":\"https://h.example/r?access_token=x\"},"
			  "\"configs\":{\"files\":[{\"text\":\"password: c0rrectHorseBattery9\\n\"}]}}");
	assert_int_equal(el_redact_secrets(doc), 2);
	assert_string_equal(str_at(doc, "repos", "url"), "https://h.example/r");
	assert_false(el_jget_bool(el_jget(doc, "redacted"), "all", true));
	assert_int_equal(cJSON_GetArraySize(el_jget(el_jget(doc, "redacted"), "classes")), 1);
	cJSON_Delete(doc);
}

/*
 * Config text is outside data: pieces of keys, quotes, URLs and
 * placeholders in any order never make the scanners read past the end
 * (the sanitizers watch), and masking twice changes nothing more.
 */
static void any_text_is_scanned_safely(void **state)
{
	static const char *const pieces[] = { "api_key", "token", "=", "==", ":", " ", "'", "\"", "'''", "\"\"\"",
		"\\", "\n", "https://", "u:p@", "h.example", "/t/", "anaconda", "?", "&", "#", "<secret>", "<user1>",
		"<", ">", "dict(", ")", "[", "]", "${", "}", "r", "x", "~", "-", "." };
	unsigned seed = 12345;
	char text[256];

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t len = 0, n = 0;
		char *once, *twice, *u;

		seed = seed * 1103515245u + 12345u;
		for (int k = (int)((seed >> 16) % 12); k >= 0; k--) {
			const char *p;

			seed = seed * 1103515245u + 12345u;
			p = pieces[(seed >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
			if (len + strlen(p) >= sizeof(text))
				break;
			memcpy(text + len, p, strlen(p));
			len += strlen(p);
		}
		text[len] = 0;
		once = el_redact_text_secrets(text, &n);
		twice = el_redact_text_secrets(once ? once : text, &n);
		if (twice)
			fail_msg("'%s' masked twice: '%s', then '%s'", text, once ? once : text, twice);
		u = el_redact_urls(text, true, &n);
		free(u);
		u = el_redact_message(text);
		free(u);
		free(once);
	}
}

/* A lock that names thousands of users (a shared box's every home): each home folder is replaced, in one pass per string. */
static void every_home_of_many_users(void **state)
{
	cJSON *doc = cJSON_CreateObject(), *paths = cJSON_AddArrayToObject(doc, "paths");
	char buf[64];

	(void)state;
	for (int i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "/home/u%04d/miniconda3 ~u%04d", i, i);
		cJSON_AddItemToArray(paths, cJSON_CreateString(buf));
	}
	el_redact_all(doc);
	for (int i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "/home/<user%d>/miniconda3 ~<user%d>", i + 1, i + 1);
		assert_string_equal(cJSON_GetArrayItem(paths, i)->valuestring, buf);
	}
	assert_int_equal(el_jget_int(el_jget(el_jget(doc, "redacted"), "counts"), "users", -1), 6000);
	cJSON_Delete(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(secret_keys_by_their_words),
		cmocka_unit_test(config_text_masks_values_not_keys),
		cmocka_unit_test(urls_lose_credentials_and_tokens),
		cmocka_unit_test(redact_all_places_stable_placeholders),
		cmocka_unit_test(secrets_pass_records_only_what_it_masked),
		cmocka_unit_test(any_text_is_scanned_safely),
		cmocka_unit_test(every_home_of_many_users),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
