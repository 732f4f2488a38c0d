/*
 * Unit tests for lib/report: UTF-8 decoding, the escaping of each format,
 * the citation and rows of small hand-made locks, locks whose members
 * have the wrong types, the edited-lock warning and the API's errors.
 */
#include "unit.h"

#include "report/report.h"
#include "util/xalloc.h"

static char *dir;
static int nfile;

static int setup(void **state)
{
	(void)state;
	dir = unit_tmpdir();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unit_rmtree(dir);
	return 0;
}

static envlock_lock *load_text(const char *text)
{
	return unit_load_text(dir, &nfile, text);
}

/* s through one escaper, as a malloc'd string. */
static char *esc(void (*fn)(el_out *, const char *), const char *s)
{
	el_out o = { EL_BUF_INIT(1 << 20), false };

	fn(&o, s);
	assert_false(o.overflow);
	return el_buf_detach(&o.b);
}

static void assert_esc(void (*fn)(el_out *, const char *), const char *in, const char *want)
{
	char *got = esc(fn, in);

	assert_string_equal(got, want);
	free(got);
}

/* Render lock with opts (format, short) and return the text; fails the test on error. */
static char *render(const envlock_lock *lock, envlock_report_format format, int short_only)
{
	envlock_report_opts opts;
	envlock_ctx *ctx;
	char *out = NULL;
	size_t len = 0;

	memset(&opts, 0, sizeof(opts));
	opts.format = format;
	opts.short_only = short_only;
	opts.name = "t.lock.json";
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (envlock_report_render(&out, &len, ctx, lock, &opts) != 0)
		fail_msg("render: %s", envlock_error_last(ctx));
	assert_int_equal(len, strlen(out));
	envlock_ctx_free(ctx);
	return out;
}

static void utf8_decoding(void **state)
{
	static const struct {
		const char *s;
		long cp;     /* the first code point, -1 for invalid */
		int advance; /* bytes consumed */
	} cases[] = {
		{ "A", 'A', 1 },
		{ "\xC3\xA9", 0xE9, 2 },
		{ "\xE2\x80\xA6", 0x2026, 3 },
		{ "\xF0\x9F\x98\x80", 0x1F600, 4 },
		{ "\xC0\x80", -1, 1 },         /* overlong NUL */
		{ "\xE0\x80\x80", -1, 1 },     /* overlong */
		{ "\xED\xA0\x80", -1, 1 },     /* UTF-16 surrogate */
		{ "\xF4\x90\x80\x80", -1, 1 }, /* past U+10FFFF */
		{ "\xE2\x82", -1, 1 },         /* truncated */
		{ "\xE2\x28\xA1", -1, 1 },     /* bad continuation */
		{ "\xFF", -1, 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].s, *end = p + strlen(p);

		assert_int_equal(el_utf8_next(&p, end), cases[i].cp);
		assert_int_equal(p - cases[i].s, cases[i].advance);
	}
}

static void latex_escapes_every_special(void **state)
{
	(void)state;
	assert_esc(el_esc_latex, "_ % # & ~ ^ \\ { } $",
		   "\\_ \\% \\# \\& \\textasciitilde{} \\textasciicircum{} \\textbackslash{} \\{ \\} \\$");
	assert_esc(el_esc_latex, "<a>|\"b\"", "\\textless{}a\\textgreater{}\\textbar{}\\texttt{\\char34}b\\texttt{\\char34}");
	/* ligatures broken, a single dash kept */
	assert_esc(el_esc_latex, "--hash a-b '' `` !` ?`", "-{}-hash a-b '{}' `{}` !{}` ?{}`");
	assert_esc(el_esc_latex, "/usr/lib", "/\\allowbreak{}usr/\\allowbreak{}lib");
	/* envlock's own symbols as LaTeX; anything else non-ASCII as <U+XXXX> */
	assert_esc(el_esc_latex, "2 \xC3\x97 A\xE2\x80\xA6 \xE2\x80\x94 \xE2\x86\x92",
		   "2 $\\times$ A\\ldots{} --- $\\rightarrow$");
	assert_esc(el_esc_latex, "jos\xC3\xA9 \xE4\xB8\xAD", "jos\\textless{}U+00E9\\textgreater{} \\textless{}U+4E2D\\textgreater{}");
	/* controls and a bad byte, visible */
	assert_esc(el_esc_latex, "a\x1b[1m\xff", "a\\textbackslash{}x1b[1m\\textbackslash{}xff");
	assert_esc(el_esc_latex, "\\input{/etc/passwd}", "\\textbackslash{}input\\{/\\allowbreak{}etc/\\allowbreak{}passwd\\}");
}

static void markdown_escapes_table_breakers(void **state)
{
	(void)state;
	assert_esc(el_esc_md, "a|b", "a\\|b");
	assert_esc(el_esc_md, "\\|", "\\\\\\|");
	assert_esc(el_esc_md, "*x* _y_ `z` [l](u) <b> ~s~ $m$ &amp;",
		   "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\<b\\> \\~s\\~ \\$m\\$ \\&amp;");
	assert_esc(el_esc_md, "line\nbreak", "line\\\\x0abreak");
	assert_esc(el_esc_md, "1.10.0+cu102 #1 (x)", "1.10.0+cu102 #1 (x)");
}

static void html_escapes_into_entities(void **state)
{
	(void)state;
	assert_esc(el_esc_html, "<script>alert(\"x\")</script>", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
	assert_esc(el_esc_html, "a & 'b' &lt;", "a &amp; &#39;b&#39; &amp;lt;");
	assert_esc(el_esc_html, "\xE2\x80\xAEgnp.exe", "\\u202egnp.exe");
	assert_esc(el_esc_html, "ok \xC3\xA9", "ok \xC3\xA9");
}

static void text_shows_controls(void **state)
{
	static const char *const samples[] = { "plain", "\x1b]0;t\x07", "\xC2\x9b" "31m", "a\xffz",
		"\xE2\x80\xAE" "x", "tab\there", "caf\xC3\xA9" };

	(void)state;
	assert_esc(el_esc_text, "\x1b[31mred\x7f", "\\x1b[31mred\\x7f");
	assert_esc(el_esc_text, "\xC2\x9b" "31m", "\\xc2\\x9b31m"); /* C1 CSI: both bytes shown */
	assert_esc(el_esc_text, "\xE2\x81\xA6" "a", "\\u2066a");
	assert_esc(el_esc_text, "caf\xC3\xA9 \xE2\x80\xA6", "caf\xC3\xA9 \xE2\x80\xA6");
	/* the width used for alignment is the width of what is printed */
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		char *got = esc(el_esc_text, samples[i]);
		size_t cps = 0;

		for (const char *p = got, *end = got + strlen(got); p < end; cps++)
			el_utf8_next(&p, end);
		assert_int_equal(el_term_width(samples[i]), cps);
		free(got);
	}
}

static void citation_names_the_key_versions(void **state)
{
	envlock_lock *lock = load_text(
		"{\"envlock\": 1, \"created\": \"2024-01-01T00:00:00Z\","
		" \"cuda\": {\"status\": \"present\", \"default\": \"/usr/local/cuda-11.8\", \"toolkits\": ["
		"  {\"home\": \"/usr/local/cuda-12.1\", \"version\": \"12.1.105\"},"
		"  {\"home\": \"/usr/local/cuda-11.8\", \"version\": \"11.8.89\", \"nvcc\": {}}]},"
		" \"cudnn\": {\"status\": \"present\", \"version\": \"8.9.7\"},"
		" \"frameworks\": {\"torch\": {\"status\": \"present\", \"version\": \"2.1.2+cu118\", \"cuda\": \"11.8\"},"
		"  \"mmcv\": {\"status\": \"present\", \"version\": \"2.1.0\", \"ops\": true},"
		"  \"mmpose\": {\"status\": \"present\", \"version\": \"1.3.1\"},"
		"  \"mmdet\": {\"status\": \"present\", \"version\": \"3.2.0\"},"
		"  \"mmseg\": {\"status\": \"absent\", \"version\": \"9.9\"}}}\n");
	char *line = render(lock, ENVLOCK_REPORT_TEXT, 1), *want;
	const char *id = envlock_lock_id(lock);

	(void)state;
	/* the default toolkit, not the first; mmcv in the table only; an absent package not at all */
	want = el_xasprintf("environment: envlock %.19s\xE2\x80\xA6 \xE2\x80\x94 CUDA 11.8.89, cuDNN 8.9.7, "
			    "PyTorch 2.1.2+cu118, mmdet 3.2.0, mmpose 1.3.1\n", id);
	assert_string_equal(line, want);
	free(want);
	free(line);
	line = render(lock, ENVLOCK_REPORT_LATEX, 1);
	want = el_xasprintf("environment: envlock %.19s\\ldots{} --- CUDA 11.8.89, cuDNN 8.9.7, "
			    "PyTorch 2.1.2+cu118, mmdet 3.2.0, mmpose 1.3.1\n", id);
	assert_string_equal(line, want);
	free(want);
	free(line);
	envlock_lock_free(lock);

	/* nothing to cite but Python */
	lock = load_text("{\"envlock\": 1, \"python\": {\"status\": \"present\", \"version\": \"3.11.2\"}}\n");
	line = render(lock, ENVLOCK_REPORT_TEXT, 1);
	want = el_xasprintf("environment: envlock %.19s\xE2\x80\xA6 \xE2\x80\x94 Python 3.11.2\n", envlock_lock_id(lock));
	assert_string_equal(line, want);
	free(want);
	free(line);
	envlock_lock_free(lock);
}

static void gpus_grouped_in_order(void **state)
{
	envlock_lock *lock = load_text(
		"{\"envlock\": 1, \"gpu\": {\"status\": \"present\", \"devices\": ["
		" {\"bus\": \"1\", \"name\": \"B\"}, {\"bus\": \"2\", \"name\": \"A\", \"compute_capability\": \"8.0\","
		" \"memory_mib\": 81920}, {\"bus\": \"3\", \"name\": \"B\"}, {\"bus\": \"4\"}]}}\n");
	char *md = render(lock, ENVLOCK_REPORT_MARKDOWN, 0);
	const char *b = strstr(md, "| GPU | 2 \xC3\x97 B |  |\n"), *a = strstr(md, "| GPU | 1 \xC3\x97 A | compute capability 8.0, 81920 MiB |\n");
	const char *u = strstr(md, "| GPU | 1 \xC3\x97 unknown GPU |  |\n");

	(void)state;
	assert_non_null(b);
	assert_non_null(a);
	assert_non_null(u);
	assert_true(b < a && a < u);
	free(md);
	envlock_lock_free(lock);
}

/* Members of the wrong type read as absent, and so do numbers out of range (the view's rule): nothing overflows. */
static void wrong_types_are_absent(void **state)
{
	envlock_lock *lock = load_text(
		"{\"envlock\": 1, \"id\": 5, \"created\": [], \"system\": \"x\", \"gpu\": {\"devices\": {\"a\": 1},"
		" \"driver\": []}, \"cuda\": {\"status\": \"present\", \"default\": 3, \"toolkits\": [1, \"a\", {\"home\": 2}]},"
		" \"cudnn\": {\"status\": \"present\", \"version\": {}}, \"compilers\": {\"default\": \"gcc\", \"gcc\": [null]},"
		" \"python\": 7, \"conda\": {\"status\": \"present\", \"package_count\": 1e300, \"packages\": \"x\"},"
		" \"pip\": {\"status\": \"present\", \"distributions\": [{\"name\": 1}, {\"name\": \"torch\", \"tags\": [1]}]},"
		" \"frameworks\": {\"torch\": 5, \"mmcv\": {\"status\": \"present\", \"version\": 7},"
		"  \"mmdet\": {\"version\": \"2.25.1\", \"status\": \"present\"}},"
		" \"repos\": {\"status\": \"present\", \"repositories\": [1, \"a\", {\"status\": \"present\", \"head\": \"x\","
		"  \"changes\": \"y\", \"patch\": {\"sha256\": \"ab\", \"size\": -1e300}}]},"
		" \"configs\": {\"status\": \"present\", \"files\": {\"path\": 1}},"
		" \"checkpoints\": {\"status\": \"present\", \"files\": [{\"size\": 1e300}, {\"size\": \"big\", \"sha256\": 9}]}}\n");

	(void)state;
	for (int f = ENVLOCK_REPORT_TEXT; f <= ENVLOCK_REPORT_JSON; f++) {
		char *out = render(lock, (envlock_report_format)f, 0);

		assert_non_null(strstr(out, "2.25.1"));
		free(out);
	}
	{
		char *md = render(lock, ENVLOCK_REPORT_MARKDOWN, 0);

		assert_non_null(strstr(md, "| conda env | unnamed | 0 packages |"));
		assert_non_null(strstr(md, "| checkpoint | no digest | ?, 0 bytes |\n| checkpoint | no digest | ?, 0 bytes |"));
		assert_non_null(strstr(md, "| **Code** | | |\n| code | commit unknown | ?, patch sha256:ab (0 bytes) |\n| **Checkpoints"));
		free(md);
	}
	envlock_lock_free(lock);
}

/* What envlock show prints for lock (malloc'd). */
static char *show_text(const envlock_lock *lock)
{
	envlock_ctx *ctx;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_show_print(lock, ctx, f), 0);
	assert_int_equal(fclose(f), 0);
	envlock_ctx_free(ctx);
	return text;
}

/*
 * show and report print the same facts (report/facts.c) in their own
 * words, where they once disagreed: a ROCm torch (show said CPU-only), a
 * driver and a cuDNN recorded present without a version (show printed
 * "?"), a toolkit known by its release alone (the table said "version
 * unknown" where the citation said 11.8), and gcc versions past 256 bytes
 * (show cut them off).
 */
static void show_and_report_say_the_same(void **state)
{
	el_buf gccs = EL_BUF_INIT(1 << 20), also = EL_BUF_INIT(1 << 20);
	char *text, *md, *want;
	envlock_lock *lock;

	(void)state;
	for (int i = 0; i < 40; i++) {
		el_buf_addf(&gccs, ", {\"version\": \"%d.1.0\"}", 100 + i);
		el_buf_addf(&also, "%s%d.1.0", i ? ", " : "", 100 + i);
	}
	text = el_xasprintf(
		"{\"envlock\": 1, \"gpu\": {\"status\": \"present\", \"driver\": {\"status\": \"present\"}},"
		" \"cuda\": {\"status\": \"present\", \"default\": \"/opt/cuda\", \"toolkits\": ["
		"  {\"home\": \"/opt/cuda\", \"release\": \"11.8\", \"nvcc\": {}}]},"
		" \"cudnn\": {\"status\": \"present\", \"header\": \"/usr/include/cudnn.h\","
		"  \"libraries\": [{\"name\": \"libcudnn.so.8\"}]},"
		" \"compilers\": {\"status\": \"present\", \"default\": {\"version\": \"9.4.0\"}, \"gcc\": [{\"version\": \"9.4.0\"}%s]},"
		" \"frameworks\": {\"torch\": {\"status\": \"present\", \"version\": \"2.1.0+rocm5.6\", \"cuda\": null,"
		"  \"hip\": \"5.6.31061\"}}}\n", el_buf_cstr(&gccs));
	lock = load_text(text);
	free(text);
	text = show_text(lock);
	md = render(lock, ENVLOCK_REPORT_MARKDOWN, 0);
	assert_non_null(strstr(text, "\ntorch       2.1.0+rocm5.6 (ROCm build)\n              built for ROCm 5.6.31061\n"));
	assert_non_null(strstr(md, "| torch | 2.1.0+rocm5.6 | ROCm 5.6.31061 build |\n"));
	assert_non_null(strstr(text, "\ndriver      NVIDIA driver present, version unknown\n"));
	assert_non_null(strstr(md, "| NVIDIA driver | version unknown |  |\n"));
	assert_non_null(strstr(text, "\ncuDNN       libraries without a header\n"));
	assert_non_null(strstr(md, "| cuDNN | version unknown | libraries without a header |\n"));
	assert_non_null(strstr(text, "\nCUDA        11.8 at /opt/cuda (default)\n"));
	assert_non_null(strstr(md, "| CUDA toolkit | 11.8 | /opt/cuda (default) |\n"));
	assert_non_null(strstr(md, " \xE2\x80\x94 CUDA 11.8, PyTorch 2.1.0+rocm5.6\n"));
	want = el_xasprintf("\ngcc         9.4.0 (default); also %s\n", el_buf_cstr(&also));
	assert_non_null(strstr(text, want));
	free(want);
	want = el_xasprintf("| gcc | 9.4.0 | default compiler, also %s |\n", el_buf_cstr(&also));
	assert_non_null(strstr(md, want));
	free(want);
	free(md);
	free(text);
	el_buf_release(&gccs);
	el_buf_release(&also);
	envlock_lock_free(lock);
}

/* How a framework was installed is read from its distribution in the registry: mmseg is mmsegmentation. */
static void install_read_from_the_registry(void **state)
{
	envlock_lock *lock = load_text(
		"{\"envlock\": 1, \"pip\": {\"status\": \"present\", \"distributions\": ["
		"  {\"name\": \"MMSegmentation\", \"version\": \"1.2.2\", \"installer\": \"pip\", \"tags\": [\"py3-none-any\"]},"
		"  {\"name\": \"mmcv\", \"version\": \"2.1.0\", \"installer\": \"uv\"}]},"
		" \"frameworks\": {\"mmseg\": {\"status\": \"present\", \"version\": \"1.2.2\"},"
		"  \"mmcv\": {\"status\": \"present\", \"version\": \"2.1.0\", \"ops\": false}}}\n");
	char *md = render(lock, ENVLOCK_REPORT_MARKDOWN, 0);

	(void)state;
	assert_non_null(strstr(md, "| mmseg | 1.2.2 | pip wheel py3-none-any |\n"));
	/* mmcv without its distribution recorded: the registry's first that is installed */
	assert_non_null(strstr(md, "| mmcv | 2.1.0 | no compiled ops, installed by uv |\n"));
	free(md);
	envlock_lock_free(lock);
}

static void warning(const char *msg, void *data)
{
	char **seen = data;

	assert_null(*seen); /* once */
	*seen = el_xstrdup(msg);
}

static void edited_lock_is_said(void **state)
{
	envlock_lock *lock = load_text(
		"{\"envlock\": 1, \"id\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\","
		" \"created\": \"2024-01-01T00:00:00Z\"}\n");
	envlock_report_opts opts;
	envlock_ctx *ctx;
	char *seen = NULL, *out = NULL, *want;
	size_t len;

	(void)state;
	memset(&opts, 0, sizeof(opts));
	opts.format = ENVLOCK_REPORT_MARKDOWN;
	opts.name = "x.json";
	opts.on_warning = warning;
	opts.warning_data = &seen;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_report_render(&out, &len, ctx, lock, &opts), 0);
	want = el_xasprintf("'x.json': its stored id sha256:%064d does not match its content (%s): it was edited "
			    "after it was saved; the report cites the content", 0, envlock_lock_id(lock));
	assert_non_null(seen);
	assert_string_equal(seen, want);
	assert_non_null(strstr(out, "| stored id | sha256:0000000000000000000000000000000000000000000000000000000000000000 |"));
	free(want);
	free(seen);
	envlock_report_free(out);

	/* a lock whose id is its content's: no warning, no row */
	seen = NULL;
	envlock_lock_free(lock);
	lock = load_text("{\"envlock\": 1}\n");
	assert_int_equal(envlock_report_render(&out, &len, ctx, lock, &opts), 0);
	assert_null(seen);
	assert_null(strstr(out, "stored id"));
	envlock_report_free(out);
	envlock_ctx_free(ctx);
	envlock_lock_free(lock);
}

static void api_errors(void **state)
{
	envlock_lock *lock = load_text("{\"envlock\": 1}\n");
	envlock_report_opts opts;
	envlock_report_format f;
	envlock_ctx *ctx;
	char *out = (char *)"unset", path[4096];
	size_t len = 7;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_report_format_parse(&f, ctx, "markdown"), 0);
	assert_int_equal(f, ENVLOCK_REPORT_MARKDOWN);
	assert_int_equal(envlock_report_format_parse(&f, ctx, "tex"), 0);
	assert_int_equal(f, ENVLOCK_REPORT_LATEX);
	assert_string_equal(envlock_report_format_name(ENVLOCK_REPORT_LATEX), "latex");
	assert_int_equal(envlock_report_format_parse(&f, ctx, "pdf"), ENVLOCK_EINVAL);
	assert_string_equal(envlock_error_last(ctx), "unknown format 'pdf' (md, latex, html, json or text)");

	memset(&opts, 0, sizeof(opts));
	opts.against = lock;
	opts.format = ENVLOCK_REPORT_LATEX;
	assert_int_equal(envlock_report_render(&out, &len, ctx, lock, &opts), ENVLOCK_EINVAL);
	assert_null(out);
	assert_int_equal(len, 0);
	opts.format = ENVLOCK_REPORT_HTML;
	opts.short_only = 1;
	assert_int_equal(envlock_report_render(&out, &len, ctx, lock, &opts), ENVLOCK_EINVAL);

	/* write: the file is the rendering; a missing folder fails and creates nothing */
	opts.against = NULL;
	opts.short_only = 0;
	snprintf(path, sizeof(path), "%s/r.html", dir);
	assert_int_equal(envlock_report_write(ctx, lock, &opts, path), 0);
	assert_int_equal(envlock_report_render(&out, &len, ctx, lock, &opts), 0);
	{
		FILE *fp = fopen(path, "rb");
		char *back = el_xmalloc(len + 1);

		assert_non_null(fp);
		assert_int_equal(fread(back, 1, len + 1, fp), len);
		assert_memory_equal(back, out, len);
		fclose(fp);
		free(back);
	}
	envlock_report_free(out);
	snprintf(path, sizeof(path), "%s/no/such/dir/r.html", dir);
	assert_int_not_equal(envlock_report_write(ctx, lock, &opts, path), 0);
	assert_non_null(strstr(envlock_error_last(ctx), "no/such/dir/r.html"));
	assert_int_equal(access(path, F_OK), -1);
	envlock_ctx_free(ctx);
	envlock_lock_free(lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_decoding),
		cmocka_unit_test(latex_escapes_every_special),
		cmocka_unit_test(markdown_escapes_table_breakers),
		cmocka_unit_test(html_escapes_into_entities),
		cmocka_unit_test(text_shows_controls),
		cmocka_unit_test(citation_names_the_key_versions),
		cmocka_unit_test(gpus_grouped_in_order),
		cmocka_unit_test(wrong_types_are_absent),
		cmocka_unit_test(show_and_report_say_the_same),
		cmocka_unit_test(install_read_from_the_registry),
		cmocka_unit_test(edited_lock_is_said),
		cmocka_unit_test(api_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
