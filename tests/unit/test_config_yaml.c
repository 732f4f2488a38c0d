/*
 * Unit tests for the YAML reader of config bases (lib/config/yaml.c):
 * each construct against the value PyYAML 6.0's safe_load gives (written
 * here by hand, keys as Python's str() writes them), each refusal, the
 * nesting limit, and a differential run against python3's yaml module
 * over generated documents where it is installed (python3-yaml).
 */
#include "unit.h"

#include "config/yaml.h"

/* Parse text (len bytes of a copy that has no NUL after them); want: the error code. */
static cJSON *parse_n(const char *text, size_t len, int want, char *msg, size_t msg_size)
{
	char *copy = malloc(len ? len : 1);
	cJSON *out = NULL;
	int err;

	assert_non_null(copy);
	memcpy(copy, text, len);
	err = el_cfg_yaml_parse("base.yaml", copy, len, &out, msg, msg_size);
	free(copy);
	if (err != want)
		fail_msg("%s: got %d, want %d: %s", text, err, want, err ? msg : "(no error)");
	if (err)
		assert_null(out);
	return out;
}

/* text's JSON, compared with the JSON want (single quotes for double ones, unless want starts {"). */
static void expect(const char *text, const char *want)
{
	char msg[256], *w = strdup(want), *got;
	cJSON *out = parse_n(text, strlen(text), 0, msg, sizeof(msg));

	for (char *c = w; *c && strncmp(want, "{\"", 2); c++)
		if (*c == '\'')
			*c = '"';
	got = cJSON_PrintUnformatted(out);
	if (strcmp(got, w))
		fail_msg("%s\n  got  %s\n  want %s", text, got, w);
	free(got);
	free(w);
	cJSON_Delete(out);
}

/* text refused with code, the message naming base.yaml:line and holding why. */
static void refused(const char *text, int code, int line, const char *why)
{
	char msg[256], head[32];

	parse_n(text, strlen(text), code, msg, sizeof(msg));
	snprintf(head, sizeof(head), "base.yaml:%d: ", line);
	if (strncmp(msg, head, strlen(head)) || !strstr(msg, why) || strchr(msg, '\n'))
		fail_msg("%s: message '%s', want '%s...%s'", text, msg, head, why);
}

/* The values below are what PyYAML 6.0's yaml.safe_load gives for each text. */
static void scalars_resolved_as_pyyaml(void **state)
{
	(void)state;
	expect("a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: nULL\n",
	       "{'a':null,'b':null,'c':null,'d':null,'e':null,'f':'nULL'}");
	expect("a: yes\nb: No\nc: on\nd: OFF\ne: TRUE\nf: false\ng: y\nh: n\ni: tRUE\n",
	       "{'a':true,'b':false,'c':true,'d':false,'e':true,'f':false,'g':'y','h':'n','i':'tRUE'}");
	expect("a: 1_000\nb: 0x1F\nc: -0x_1\nd: 017\ne: 0o17\nf: 0b101\ng: 09\nh: 0_\ni: +1\nj: -0\nk: 1:30\nl: 190:20:30\nm: 1:60\n",
	       "{'a':1000,'b':31,'c':-1,'d':15,'e':'0o17','f':5,'g':'09','h':0,'i':1,'j':0,'k':90,'l':685230,'m':'1:60'}");
	expect("a: 1.5\nb: 1.e+5\nc: .5\nd: 0.\ne: 1e-4\nf: 1.0e5\ng: -.5\nh: +.5\ni: 1.5e-3\nj: 1_2.5\nk: ._5\n",
	       "{'a':1.5,'b':100000,'c':0.5,'d':0,'e':'1e-4','f':'1.0e5','g':'-.5','h':'+.5','i':0.0015,'j':12.5,'k':'._5'}");
	/* from 2^53 on, the digits (Raw nodes) */
	expect("a: 9007199254740993\nb: -9223372036854775808\nc: 18446744073709551615\nd: 123456789012345\n",
	       "{'a':9007199254740993,'b':-9223372036854775808,'c':18446744073709551615,'d':123456789012345}");
	expect("a: x y  z\nb: a#b\nc: a #b\nd: http://h/p\ne: x:y\nf: -x\ng: :x\nh: ?x\ni: 2001-1-1\nj: ...\n",
	       "{'a':'x y  z','b':'a#b','c':'a','d':'http://h/p','e':'x:y','f':'-x','g':':x','h':'?x','i':'2001-1-1','j':'...'}");
}

static void quoted_strings(void **state)
{
	(void)state;
	expect("a: 'it''s'\nb: \"yes\"\nc: '1'\nd: ''\ne: \"\"\nf: 'a\\n'\n",
	       "{\"a\":\"it's\",\"b\":\"yes\",\"c\":\"1\",\"d\":\"\",\"e\":\"\",\"f\":\"a\\\\n\"}");
	expect("a: \"\\x41\\u00e9\\/\\t\\\"\\\\ \\U0001F600\"\n", "{'a':'A\xc3\xa9/\\t\\\"\\\\ \xf0\x9f\x98\x80'}");
	expect("a: \"x\"#c\nb: 'y' # c\n\"q k\" : 1\n", "{'a':'x','b':'y','q k':1}");
}

static void keys_as_python_str(void **state)
{
	(void)state;
	/* {1: 'one', 16: 'hex', None: 'n', True: 'y', -3: 'm'}, keys then str() */
	expect("2: two\n0x10: hex\n~: n\nyes: y\n-3: m\n", "{'2':'two','16':'hex','None':'n','True':'y','-3':'m'}");
	/* a key given again keeps its first place, its last value */
	expect("a: 1\nb: 2\na: 3\nc: 4\na: 5\n", "{'a':5,'b':2,'c':4}");
	expect("a: {x: 1, y: 2, x: 3}\n", "{'a':{'x':3,'y':2}}");
}

static void block_and_flow_collections(void **state)
{
	(void)state;
	expect("model:\n  type: ResNet\n  depth: 50\n  # comment\n  stages: [1, 2, 3]\n"
	       "  norm_cfg: {type: BN, requires_grad: true}\n",
	       "{'model':{'type':'ResNet','depth':50,'stages':[1,2,3],'norm_cfg':{'type':'BN','requires_grad':true}}}");
	expect("p:\n  - type: Load   # c\n    f32: true\n  -\n    type: Flip\n  - - 1\n    - 2\n  -\n",
	       "{'p':[{'type':'Load','f32':true},{'type':'Flip'},[1,2],null]}");
	/* a sequence as a key's value at the key's own indentation */
	expect("a:\n- 1\n- 2\nb: 3\n", "{'a':[1,2],'b':3}");
	expect("a: [1, [2, {b: [3]}], ]\nb: {x: 1,}\nc: {y}\nd: {z: }\ne: []\nf: {}\ng: [a:1, {b:2}]\n",
	       "{'a':[1,[2,{'b':[3]}]],'b':{'x':1},'c':{'y':null},'d':{'z':null},'e':[],'f':{},'g':['a:1',{'b:2':null}]}");
	expect("a: [\n  1, 2,\n  # c\n  3]\nb: {\n x: 1\n}\n", "{'a':[1,2,3],'b':{'x':1}}");
	expect("{a: 1, b: [2]}\n", "{'a':1,'b':[2]}");
	expect("  a: 1\n  b:\n     c: 2\n", "{'a':1,'b':{'c':2}}");
}

static void documents_and_line_ends(void **state)
{
	char msg[256];
	cJSON *out;

	(void)state;
	expect("# c\n--- # doc\na: 1\n...\n# end\n", "{'a':1}");
	expect("a: 1\r\nb:\r\n  - x\r\n", "{'a':1,'b':['x']}");
	expect("\xef\xbb\xbf" "a: 1", "{'a':1}");
	/* the length is kept to: no NUL after the text is needed, none read */
	out = parse_n("a: 12345", 4, 0, msg, sizeof(msg));
	assert_true(cJSON_GetObjectItem(out, "a")->valuedouble == 1);
	cJSON_Delete(out);
	/* 2^53 - 1 is a number still, exact */
	out = parse_n("a: 9007199254740991", 19, 0, msg, sizeof(msg));
	assert_true(el_jint(el_jget(out, "a"), 0) == 9007199254740991LL && cJSON_IsNumber(el_jget(out, "a")));
	cJSON_Delete(out);
}

static void refusals(void **state)
{
	(void)state;
	refused("a: &x 1\n", ENVLOCK_EPARSE, 1, "anchors");
	refused("a: 1\nb: *x\n", ENVLOCK_EPARSE, 2, "aliases");
	refused("a: !!str 1\n", ENVLOCK_EPARSE, 1, "tags");
	refused("a: |\n  x\n", ENVLOCK_EPARSE, 1, "block scalars");
	refused("a: >\n  x\n", ENVLOCK_EPARSE, 1, "block scalars");
	refused("a: 1\n---\nb: 2\n", ENVLOCK_EPARSE, 2, "a second document");
	refused("a: 1\n...\nb: 2\n", ENVLOCK_EPARSE, 3, "document's end");
	refused("? a\n: b\n", ENVLOCK_EPARSE, 1, "complex keys");
	refused("[a]: b\n", ENVLOCK_EPARSE, 1, "unexpected ':'");
	refused("a:\n\tb: 1\n", ENVLOCK_EPARSE, 2, "tab");
	refused("a:\t1\n", ENVLOCK_EPARSE, 1, "tab");
	refused("- a\n- b\n", ENVLOCK_EPARSE, 1, "not a mapping");
	refused("# c\njust text\n", ENVLOCK_EPARSE, 2, "not a mapping");
	refused("", ENVLOCK_EPARSE, 1, "not a mapping");
	refused("%YAML 1.1\n---\na: 1\n", ENVLOCK_EPARSE, 1, "directives");
	refused("a: .inf\n", ENVLOCK_EPARSE, 1, "'.inf'");
	refused("a: -.Inf\n", ENVLOCK_EPARSE, 1, "'-.Inf'");
	refused("a: .nan\n", ENVLOCK_EPARSE, 1, "'.nan'");
	refused("a: 1.0e+400\n", ENVLOCK_EPARSE, 1, "no JSON value");
	refused("a: 1:30.5\n", ENVLOCK_EPARSE, 1, "base 60");
	refused("a: 18446744073709551616\n", ENVLOCK_EPARSE, 1, "past 64 bits");
	refused("a: -9223372036854775809\n", ENVLOCK_EPARSE, 1, "past 64 bits");
	refused("a: 0b_\n", ENVLOCK_EPARSE, 1, "cannot read");
	refused("a: 2001-12-14\n", ENVLOCK_EPARSE, 1, "a date");
	refused("<<: {a: 1}\n", ENVLOCK_EPARSE, 1, "a merge key");
	refused("1.5: x\n", ENVLOCK_EPARSE, 1, "a float as a key");
	refused("1: a\nyes: b\n", ENVLOCK_EPARSE, 2, "one key in Python");
	refused("a: x\n  y\n", ENVLOCK_EPARSE, 2, "more-indented");
	refused("a: 'x\n  y'\n", ENVLOCK_EPARSE, 1, "quoted string");
	refused("a: \"\\0\"\n", ENVLOCK_EPARSE, 1, "NUL");
	refused("a: \"\\ud800\"\n", ENVLOCK_EPARSE, 1, "U+D800");
	refused("a: \"\\q\"\n", ENVLOCK_EPARSE, 1, "unknown escape");
	refused("a: b: c\n", ENVLOCK_EPARSE, 1, "second 'key:'");
	refused("a: - b\n", ENVLOCK_EPARSE, 1, "'- ' entry");
	refused("a: [a: 1]\n", ENVLOCK_EPARSE, 1, "inside [ ]");
	refused("a: [1, 2\n", ENVLOCK_EPARSE, 1, "not closed");
	refused("a:\n  b: 1\n c: 2\n", ENVLOCK_EPARSE, 3, "indented more");
	refused("a: 1\nb: \x01\n", ENVLOCK_EPARSE, 2, "control character");
	refused("a: \xff\n", ENVLOCK_EPARSE, 1, "not UTF-8");
	refused("a: \xc2\x85\n", ENVLOCK_EPARSE, 1, "U+0085");
	refused("a: 1\rb: 2\n", ENVLOCK_EPARSE, 1, "control character");
}

/* Depth counts every mapping and sequence, the top one included. */
static void nesting_limit(void **state)
{
	char *text = malloc(4096), msg[256];
	cJSON *out;
	size_t n;

	(void)state;
	for (int depth = 200; depth <= 201; depth++) {
		int want = depth == 200 ? 0 : ENVLOCK_ELIMIT;

		/* a: [[...]]: depth - 1 sequences under the top mapping */
		n = (size_t)sprintf(text, "a: ");
		for (int i = 1; i < depth; i++)
			text[n++] = '[';
		for (int i = 1; i < depth; i++)
			text[n++] = ']';
		cJSON_Delete(parse_n(text, n, want, msg, sizeof(msg)));
		if (want)
			assert_non_null(strstr(msg, "base.yaml:1: nesting deeper than 200"));
		/* the same in block sequences: a:\n- - - ... x */
		n = (size_t)sprintf(text, "a:\n");
		for (int i = 1; i < depth; i++)
			n += (size_t)sprintf(text + n, "- ");
		text[n++] = 'x';
		out = parse_n(text, n, want, msg, sizeof(msg));
		if (!want)
			assert_string_equal(cJSON_GetArrayItem(el_jget(out, "a"), 0)->type == cJSON_Array ? "deep" : "flat", "deep");
		cJSON_Delete(out);
	}
	free(text);
}

/* python3 with PyYAML: the documents' JSON (keys as str() writes them), one line each, ERR where it refuses. */
static const char differential_py[] =
	"import sys, json\n"
	"try:\n"
	"    import yaml\n"
	"except ImportError:\n"
	"    print('NOYAML'); sys.exit(0)\n"
	"def conv(v):\n"
	"    if isinstance(v, dict): return {str(k): conv(x) for k, x in v.items()}\n"
	"    if isinstance(v, list): return [conv(x) for x in v]\n"
	"    return v\n"
	"for path in sys.argv[1:]:\n"
	"    try: print(json.dumps(conv(yaml.safe_load(open(path, encoding='utf-8'))), allow_nan=False))\n"
	"    except Exception: print('ERR')\n";

static const char *const tokens[] = {
	"a", "b c", "1", "-1", "0x1F", "017", "0o7", "1_000", "1:30", "1.5", "1.e+5", "1e5", ".5", "-.5",
	"yes", "No", "on", "OFF", "~", "null", "true", "y", "\"q\"", "'it''s'", "\"\\u00e9\"", "x:y",
	"http://h/p", "a#b", "9007199254740993", "-9223372036854775808", "18446744073709551615", "0.",
	"+1", "08", "0b101", "1_2.5", "''", "-x", "a b  c", "0_", "12:05:59", "Null", "'#'",
};
#define N_TOKENS (sizeof(tokens) / sizeof(*tokens))

/* Document i: a mapping in block and flow styles over tokens a small generator draws. */
static void make_doc(unsigned i, char *out, size_t size)
{
	unsigned r = i * 2654435761u + 12345;
	const char *t[13];
	size_t n = 0;

	for (size_t k = 0; k < sizeof(t) / sizeof(*t); k++) {
		r = r * 1103515245u + 12345;
		t[k] = tokens[(r >> 8) % N_TOKENS];
	}
#define PUT(...) (n += (size_t)snprintf(out + n, size - n, __VA_ARGS__))
	PUT("%sk%u: %s\nlist:\n", i % 3 == 0 ? "--- # doc\n" : "", i, t[0]);
	for (unsigned j = 1; j <= 3; j++)
		PUT("%s- %s\n", i % 2 ? "  " : "", t[j]);
	PUT("flow: [%s, {f: %s, g: [%s]}, %s]\n", t[4], t[5], t[6], t[7]);
	PUT("nested:\n  deeper:  # c\n    x: %s\n", t[8]);
	/* an entry "- y" at a mapping's key column: both refuse every tenth document */
	PUT("%s", i % 10 ? "" : "    - y\n");
	PUT("  items:\n    - name: %s\n      value: %s\n    - %s\n", t[9], t[10], t[11]);
	PUT("%s: %s\n", i % 4 ? "\"quoted key\"" : "7", t[12]);
#undef PUT
}

static void differential_against_pyyaml(void **state)
{
	enum { N_DOCS = 24 };
	char *dir = unit_tmpdir(), name[32], doc[2048], line[8192], msg[256];
	char *cmd = malloc(65536);
	size_t n;
	FILE *pipe;
	int same = 0;

	(void)state;
	unit_write(dir, "diff.py", differential_py, -1);
	n = (size_t)snprintf(cmd, 65536, "python3 %s/diff.py", dir);
	for (unsigned i = 0; i < N_DOCS; i++) {
		snprintf(name, sizeof(name), "d%u.yaml", i);
		make_doc(i, doc, sizeof(doc));
		unit_write(dir, name, doc, -1);
		n += (size_t)snprintf(cmd + n, 65536 - n, " %s/d%u.yaml", dir, i);
	}
	snprintf(cmd + n, 65536 - n, " 2>/dev/null");
	pipe = popen(cmd, "r");
	if (!pipe || !fgets(line, sizeof(line), pipe) || !strncmp(line, "NOYAML", 6)) {
		print_message("  skipped: python3 with its yaml module (python3-yaml) is not installed\n");
		if (pipe)
			pclose(pipe);
		unit_rmtree(dir);
		free(cmd);
		skip();
	}
	for (unsigned i = 0; i < N_DOCS; i++) {
		cJSON *mine, *theirs;
		char *printed;
		int err;

		if (i && !fgets(line, sizeof(line), pipe))
			fail_msg("python3 gave %u lines for %d documents", i, N_DOCS);
		make_doc(i, doc, sizeof(doc));
		err = el_cfg_yaml_parse("d.yaml", doc, strlen(doc), &mine, msg, sizeof(msg));
		if (!strncmp(line, "ERR", 3)) {
			if (!err)
				fail_msg("document %u: PyYAML refuses it, it was read:\n%s", i, doc);
			cJSON_Delete(mine);
			continue;
		}
		if (err)
			fail_msg("document %u: refused (%s), PyYAML reads it as %s%s", i, msg, line, doc);
		/* printed and read back, as the Raw digits of a big integer are then a number like PyYAML's */
		printed = cJSON_PrintUnformatted(mine);
		theirs = cJSON_Parse(line);
		cJSON_Delete(mine);
		mine = cJSON_Parse(printed);
		if (!theirs || !cJSON_Compare(mine, theirs, true))
			fail_msg("document %u differs:\n%s  mine   %s\n  PyYAML %s", i, doc, printed, line);
		free(printed);
		cJSON_Delete(mine);
		cJSON_Delete(theirs);
		same++;
	}
	pclose(pipe);
	print_message("  %d of %d documents read as PyYAML reads them, the others refused by both\n", same, N_DOCS);
	assert_true(same >= N_DOCS / 2);
	unit_rmtree(dir);
	free(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scalars_resolved_as_pyyaml),
		cmocka_unit_test(quoted_strings),
		cmocka_unit_test(keys_as_python_str),
		cmocka_unit_test(block_and_flow_collections),
		cmocka_unit_test(documents_and_line_ends),
		cmocka_unit_test(refusals),
		cmocka_unit_test(nesting_limit),
		cmocka_unit_test(differential_against_pyyaml),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
