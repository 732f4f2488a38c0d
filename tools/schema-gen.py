#!/usr/bin/python3
"""Turn a JSON Schema into a C validator, at build time.

    schema-gen.py SCHEMA FUNCTION OUT.c

Writes OUT.c with `int FUNCTION(const cJSON *doc, char *why, size_t
why_size)`: one C function per node of SCHEMA, with its keywords as
straight-line code (an object's members found by a switch on the name's
length and a memcmp, patterns matched in C), so loading a lock neither
parses the schema nor interprets it. It gives the verdict and the error
line of tests/schema/schema.c's interpreter, the reference, for every
document: it is a transcription of validate() and its helpers for one
schema, in the same order, with the same shared pieces (schema_rt.h), and
tests/unit/test_schema.c checks that it does on thousands of documents.
A keyword or a form the interpreter would refuse, or that this file does
not transcribe, fails the build.
"""
import json
import sys

ANNOTATIONS = {"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "format"}
KEYWORDS = {
    "type", "const", "enum", "required", "dependentRequired", "$ref", "allOf", "anyOf", "oneOf", "not", "if",
    "then", "else", "properties", "additionalProperties", "unevaluatedProperties", "propertyNames", "items",
    "uniqueItems", "maxProperties", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength",
    "pattern",
}
TYPE_BITS = {"string": 1, "integer": 2, "number": 4, "object": 8, "array": 16, "boolean": 32, "null": 64}
T_STRING, T_INTEGER, T_NUMBER, T_OBJECT, T_ARRAY, T_BOOLEAN, T_NULL = 1, 2, 4, 8, 16, 32, 64


class Num:
    """A number of the schema, with its text (C reads the text as cJSON's strtod did)."""

    def __init__(self, text):
        self.text = text

    def c(self):
        t = self.text
        return t if any(ch in t for ch in ".eE") else t + ".0"


class SchemaError(Exception):
    pass


def load(path):
    def pairs(items):
        d = {}
        for k, v in items:
            if k in d:
                raise SchemaError("member %r twice in one object" % k)
            d[k] = v
        return d

    with open(path, encoding="utf-8") as f:
        return json.load(f, object_pairs_hook=pairs, parse_int=Num, parse_float=Num)


def streq(var, lit):
    """var (a NUL-terminated string) equals lit: a byte at a time, no call, never past var's NUL"""
    b = lit.encode("utf-8") + b"\0"
    if len(b) > 24:
        return "strcmp(%s, %s) == 0" % (var, cstr(lit))
    return "(" + " && ".join("(unsigned char)%s[%d] == %d" % (var, i, c) for i, c in enumerate(b)) + ")"


def cstr(s):
    """s as a C string literal (UTF-8, every byte outside printable ASCII in octal)."""
    out = '"'
    for b in s.encode("utf-8"):
        if b == 0:
            raise SchemaError("a string with a NUL in it")
        c = chr(b)
        if c in '"\\':
            out += "\\" + c
        elif 32 <= b < 127 and c != "?":
            out += c
        else:
            out += "\\%03o" % b
    return out + '"'


def ccomment(s):
    """s inside a C comment: no end of it, no trigraph"""
    return s.replace("*/", "*\\/").replace("??", "?\\?")


class Node:
    def __init__(self, nid, json_):
        self.id = nid
        self.json = json_
        self.is_bool = False
        self.types = 0
        self.want = ""
        self.const = self.enum = self.required = self.dep_required = None
        self.ref = self.not_ = self.if_ = self.then_ = self.else_ = None
        self.addl = self.uneval = self.prop_names = self.items = None
        self.all_of, self.any_of, self.one_of = [], [], []
        self.props = []  # (name, node), sorted by name
        self.required_in_props = False
        self.unique = False
        self.nums = {}
        self.pattern = None
        self.needs_eval = False

    def has_object(self):
        return bool(self.required is not None or "maxProperties" in self.nums or self.dep_required is not None
                    or self.props or self.addl or self.prop_names or self.uneval)

    def has_array(self):
        return bool("minItems" in self.nums or "maxItems" in self.nums or self.unique or self.items)

    def has_scalar(self):
        return bool(any(k in self.nums for k in ("minimum", "maximum", "minLength", "maxLength")) or self.pattern)


class Compiler:
    def __init__(self, root):
        self.root = root
        self.memo = {}  # id() of a schema object -> its node
        self.nodes = []
        self.keep = []  # what memo's ids name stays alive

    def resolve(self, ref):
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise SchemaError("a $ref it cannot resolve: %r" % (ref,))
        node = self.root
        for part in ref[2:].split("/"):
            if not isinstance(node, dict) or part not in node:
                raise SchemaError("a $ref it cannot resolve: %r" % ref)
            node = node[part]
        return node

    @staticmethod
    def only_ref(s):
        return isinstance(s, dict) and "$ref" in s and all(k in ("$ref", "description", "title", "$comment") for k in s)

    def compile(self, s, where="#"):
        if id(s) in self.memo:
            return self.memo[id(s)]
        self.keep.append(s)
        if self.only_ref(s):
            target, target_where = s, where
            for _ in range(33):
                if not self.only_ref(target):
                    break
                target_where = target["$ref"]
                target = self.resolve(target["$ref"])
            else:
                raise SchemaError("a cycle of $refs")
            n = self.compile(target, target_where)
            self.memo[id(s)] = n
            return n
        n = Node(len(self.nodes), s)
        n.where = where
        self.nodes.append(n)
        self.memo[id(s)] = n
        if isinstance(s, bool):
            n.is_bool = True
            n.bool_value = s
            return n
        if not isinstance(s, dict):
            raise SchemaError("a subschema that is not an object")
        for k in s:
            if k not in KEYWORDS and k not in ANNOTATIONS:
                raise SchemaError("a keyword envlock does not implement: %s" % k)
        if "type" in s:
            t = s["type"]
            if isinstance(t, str):
                n.types = TYPE_BITS.get(t, 0)
                n.want = ("an " if t in ("object", "array", "integer") else "" if t == "null" else "a ") + t
            elif isinstance(t, list):
                words = [w for w in t if isinstance(w, str)]
                n.types = 0
                for w in words:
                    n.types |= TYPE_BITS.get(w, 0)
                n.want = " or ".join(words)
            else:
                raise SchemaError("a type keyword that is neither a string nor a list")
            n.want = n.want.encode("utf-8")[:95].decode("utf-8", "ignore")  # type_words' want[96]
        if "const" in s:
            n.const = s["const"]
        if "enum" in s:
            if not isinstance(s["enum"], list):
                raise SchemaError("an enum that is not a list")
            n.enum = s["enum"]
        if "required" in s:
            if not isinstance(s["required"], list) or not all(isinstance(r, str) for r in s["required"]):
                raise SchemaError("a required that is not a list of names")
            n.required = s["required"]
        if "dependentRequired" in s:
            d = s["dependentRequired"]
            if not isinstance(d, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                                  for v in d.values()):
                raise SchemaError("a dependentRequired that is not names to lists of names")
            n.dep_required = d
        if "$ref" in s:
            n.ref = self.compile(self.resolve(s["$ref"]), s["$ref"])
        for kw, attr in (("allOf", "all_of"), ("anyOf", "any_of"), ("oneOf", "one_of")):
            if kw in s:
                if not isinstance(s[kw], list):
                    raise SchemaError("%s that is not a list" % kw)
                setattr(n, attr, [self.compile(x, "%s/%s/%d" % (where, kw, i)) for i, x in enumerate(s[kw])])
        if "not" in s:
            n.not_ = self.compile(s["not"], where + "/not")
        if "if" in s:
            n.if_ = self.compile(s["if"], where + "/if")
            n.then_ = self.compile(s["then"], where + "/then") if "then" in s else None
            n.else_ = self.compile(s["else"], where + "/else") if "else" in s else None
        if "properties" in s:
            if not isinstance(s["properties"], dict):
                raise SchemaError("properties that are not an object")
            n.props = sorted(((k, self.compile(v, "%s/properties/%s" % (where, k)))
                              for k, v in s["properties"].items()), key=lambda p: p[0].encode())
        if n.required:
            names = {p[0] for p in n.props}
            n.required_in_props = (len(n.props) <= 64 and all(r in names for r in n.required)
                                   and len(set(n.required)) == len(n.required))
        if "additionalProperties" in s:
            n.addl = self.compile(s["additionalProperties"], where + "/additionalProperties")
        if "unevaluatedProperties" in s:
            n.uneval = self.compile(s["unevaluatedProperties"], where + "/unevaluatedProperties")
        if "propertyNames" in s:
            n.prop_names = self.compile(s["propertyNames"], where + "/propertyNames")
        if "items" in s:
            n.items = self.compile(s["items"], where + "/items")
        n.unique = s.get("uniqueItems") is True
        for kw in ("maxProperties", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength"):
            if isinstance(s.get(kw), Num):
                n.nums[kw] = s[kw]
        if isinstance(s.get("pattern"), str):
            n.pattern = s["pattern"]
        return n

    def number_needs_eval(self):
        """unevaluatedProperties at a node or at one applied in place (its least fixpoint)."""
        changed = True
        while changed:
            changed = False
            for n in self.nodes:
                if n.needs_eval or n.is_bool:
                    continue
                inplace = [n.ref, *n.all_of, *n.any_of, *n.one_of, n.if_, n.then_, n.else_]
                if n.uneval or any(m is not None and m.needs_eval for m in inplace):
                    n.needs_eval = changed = True


# ---- patterns ---------------------------------------------------------------

# the forms schema.c matches in C (pattern_kind), with the same functions
KNOWN_PATTERNS = {
    "^\\S+$": "el_sv_nospace(%s)",
    "^/": "(%s[0] == '/')",
    "^[0-9a-f]{32}$": "el_sv_hex(%s, 32)",
    "^[0-9a-f]{64}$": "el_sv_hex(%s, 64)",
    "^sha256:[0-9a-f]{64}$": "el_sv_sha256_id(%s)",
    "^[0-9]+$": "el_sv_digits(%s)",
    "^[0-9]+(\\.[0-9]+)?$": "el_sv_dotted(%s, 1, 2)",
    "^[0-9]+\\.[0-9]+$": "el_sv_dotted(%s, 2, 2)",
    "^[0-9]+(\\.[0-9]+){1,2}$": "el_sv_dotted(%s, 2, 3)",
    "^[0-9]+\\.[0-9]+\\.[0-9]+$": "el_sv_dotted(%s, 3, 3)",
    "^[0-9a-f]{40}([0-9a-f]{24})?$": "el_sv_commit(%s)",
}


def parse_sequence(p):
    """^atoms$ with atoms a literal or a [class] and a quantifier ({n}, +, *, ?), as byte sets; None otherwise."""
    if not (p.startswith("^") and p.endswith("$")) or p.endswith("\\$"):
        return None
    body, i, atoms = p[1:-1], 0, []
    while i < len(body):
        c = body[i]
        if c == "[":
            j = body.find("]", i + 1)
            if j < 0 or body[i + 1:i + 2] in ("^", "]"):
                return None
            inner, k, chars = body[i + 1:j], 0, set()
            while k < len(inner):
                if inner[k] == "\\" or inner[k] == "[":
                    return None
                if k + 2 < len(inner) and inner[k + 1] == "-":
                    chars |= {chr(x) for x in range(ord(inner[k]), ord(inner[k + 2]) + 1)}
                    k += 3
                else:
                    chars.add(inner[k])
                    k += 1
            i = j + 1
        elif c == "\\":
            if i + 1 >= len(body) or body[i + 1].isalnum():
                return None  # \d, \S, … : left to the regular expression
            chars = {body[i + 1]}
            i += 2
        elif c in ".()|*+?{}^$":
            return None
        else:
            chars = {c}
            i += 1
        lo = hi = 1
        if i < len(body) and body[i] in "+*?":
            lo, hi = {"+": (1, None), "*": (0, None), "?": (0, 1)}[body[i]]
            i += 1
        elif i < len(body) and body[i] == "{":
            j = body.find("}", i)
            if j < 0 or not body[i + 1:j].isdigit():
                return None
            lo = hi = int(body[i + 1:j])
            i = j + 1
        if any(ord(ch) >= 128 or ord(ch) == 0 for ch in chars):
            return None
        atoms.append((chars, lo, hi))
    # greedy matching is exact when what a repeated atom takes, the next atom cannot
    for a, b in zip(atoms, atoms[1:]):
        if a[1] != a[2] and a[0] & b[0]:
            return None
    return atoms


def class_test(chars, var):
    ranges, run = [], []
    for o in sorted(ord(c) for c in chars):
        if run and o == run[-1] + 1:
            run.append(o)
        else:
            if run:
                ranges.append(run)
            run = [o]
    ranges.append(run)
    tests = []
    for r in ranges:
        if len(r) == 1:
            tests.append("%s == %d" % (var, r[0]))
        else:
            tests.append("(%s >= %d && %s <= %d)" % (var, r[0], var, r[-1]))
    return "(" + " || ".join(tests) + ")"


def icase_alternatives(p):
    """(?i)(a|b|…) of letters, digits and _: the literals, lower case; None otherwise."""
    if not (p.startswith("(?i)(") and p.endswith(")")):
        return None
    alts = p[5:-1].split("|")
    if not all(a and all(c.isascii() and (c.isalnum() or c == "_") for c in a) for a in alts):
        return None
    return [a.lower() for a in alts]


class Emitter:
    def __init__(self, comp):
        self.c = comp
        self.out = []
        self.consts = []  # static cJSON values for const/enum members that are not strings
        self.patterns = {}  # pattern -> C expression with %s
        self.pattern_defs = []
        self.namefns = []

    # static cJSON trees, compared with cJSON_Compare as schema.c does
    def cjson_value(self, val):
        name = "k%d" % len(self.consts)
        self.consts.append(None)
        idx = len(self.consts) - 1
        fields = []
        if val is True:
            fields.append(".type = cJSON_True")
        elif val is False:
            fields.append(".type = cJSON_False")
        elif val is None:
            fields.append(".type = cJSON_NULL")
        elif isinstance(val, Num):
            fields.append(".type = cJSON_Number, .valuedouble = %s, .valueint = 0" % val.c())
        elif isinstance(val, str):
            fields.append(".type = cJSON_String, .valuestring = (char *)%s" % cstr(val))
        else:
            raise SchemaError("a const or enum value that is an array or an object")
        self.consts[idx] = "static cJSON %s = { %s };" % (name, ", ".join(fields))
        return name

    def pattern_expr(self, p, var):
        if p in KNOWN_PATTERNS:
            return KNOWN_PATTERNS[p] % var
        if p not in self.patterns:
            fn = "pat%d" % len(self.patterns)
            self.patterns[p] = fn
            d = ["/* %s */" % ccomment(p), "static int %s(const char *s)" % fn, "{"]
            atoms = parse_sequence(p)
            alts = icase_alternatives(p)
            if atoms is not None:
                for chars, lo, hi in atoms:
                    t = class_test(chars, "(unsigned char)*s")
                    if lo == hi:
                        for _ in range(lo):
                            d.append("\tif (!%s)\n\t\treturn 0;\n\ts++;" % t)
                    else:
                        for _ in range(lo):
                            d.append("\tif (!%s)\n\t\treturn 0;\n\ts++;" % t)
                        if hi is None:
                            d.append("\twhile (%s)\n\t\ts++;" % t)
                        else:
                            for _ in range(hi - lo):
                                d.append("\tif (%s)\n\t\ts++;" % t)
                d.append("\treturn *s == '\\0';")
            elif alts is not None:
                # REG_ICASE in the C locale (envlock sets none): ASCII letters only
                d.append("\tfor (; *s; s++) {")
                for a in alts:
                    conds = " && ".join("(s[%d] | (s[%d] >= 'A' && s[%d] <= 'Z' ? 0x20 : 0)) == '%s'" % (i, i, i, ch)
                                        if ch.isalpha() else "s[%d] == '%s'" % (i, ch) for i, ch in enumerate(a))
                    d.append("\t\tif (%s)\n\t\t\treturn 1;" % conds)
                d.append("\t}\n\treturn 0;")
            else:
                d = ["/* %s */" % ccomment(p),
                     "static regex_t %s_re;" % fn,
                     "static pthread_once_t %s_once = PTHREAD_ONCE_INIT;" % fn,
                     "static void %s_compile(void)" % fn, "{",
                     "\tif (el_sv_regcomp(&%s_re, %s) != 0)" % (fn, cstr(p)),
                     "\t\tabort(); /* schema.c refuses the schema too */", "}",
                     "static int %s(const char *s)" % fn, "{",
                     "\tpthread_once(&%s_once, %s_compile);" % (fn, fn),
                     "\treturn regexec(&%s_re, s, 0, NULL, 0) == 0;" % fn]
            d.append("}")
            self.pattern_defs.append("\n".join(d))
        return "%s(%s)" % (self.patterns[p], var)

    def name_fn(self, n, names):
        """static int namesN(const char *s): the index of s in names, or -1, a byte at a time (no strlen)."""
        fn = "names%d" % n.id
        keyed = [(nm.encode() + b"\0", i) for i, nm in enumerate(names)]

        def trie(group, d, ind):
            if len(group) == 1:
                key, i = group[0]
                conds = " && ".join("(unsigned char)s[%d] == %d" % (k, key[k]) for k in range(d, len(key)))
                return [ind + "return %s ? %d : -1;" % (conds, i)]
            out = [ind + "switch ((unsigned char)s[%d]) {" % d]
            byte = {}
            for key, i in group:
                byte.setdefault(key[d], []).append((key, i))
            for b in sorted(byte):
                out.append(ind + "case %d:" % b)
                if b == 0:
                    out.append(ind + "\treturn %d;" % byte[b][0][1])
                else:
                    out += trie(byte[b], d + 1, ind + "\t")
            out.append(ind + "default:\n" + ind + "\treturn -1;\n" + ind + "}")
            return out

        d = ["static int %s(const char *s)" % fn, "{"] + trie(keyed, 0, "\t") + ["}"]
        self.namefns.append("\n".join(d))
        return fn

    def child(self, L, ind, node, x, name, index):
        """validate_child: push, a fresh annotation set where one is read, validate, pop."""
        if node.is_bool and node.bool_value:
            return  # true: nothing to check, nothing to say
        L.append(ind + "el_sv_push(v, %s, %s);" % (name, index))
        if node.needs_eval:
            L.append(ind + "{")
            L.append(ind + "\tel_sv_evaluated c;\n" + ind + "\tint rc;\n")
            L.append(ind + "\tEL_SV_EVALUATED_INIT(c);")
            L.append(ind + "\trc = v%d(v, %s, &c);" % (node.id, x))
            L.append(ind + "\tel_sv_eval_release(&c);")
            L.append(ind + "\tel_sv_pop(v);")
            L.append(ind + "\tif (rc != 0)\n" + ind + "\t\treturn -1;")
            L.append(ind + "}")
        else:
            L.append(ind + "if (v%d(v, %s, NULL) != 0) {" % (node.id, x))
            L.append(ind + "\tel_sv_pop(v);\n" + ind + "\treturn -1;\n" + ind + "}")
            L.append(ind + "el_sv_pop(v);")

    def node(self, n):
        L = ["/* %s */" % ccomment(n.where), "static int v%d(el_sv *v, const cJSON *x, el_sv_evaluated *ev)" % n.id, "{"]
        if n.is_bool:
            L.append("\t(void)v;\n\t(void)x;\n\t(void)ev;")
            L.append("\treturn 0;" if n.bool_value else "\treturn FAIL(\"not allowed here\");")
            L.append("}")
            return L
        L.append("\tchar shown[256];\n")
        L.append("\t(void)ev;\n\t(void)shown;")
        L.append("\tif (v->depth > EL_SV_MAX_DEPTH)\n\t\treturn FAIL(\"nested too deeply\");")
        if n.types:
            t = []
            if n.types & T_STRING:
                t.append("J_STRING(x)")
            if n.types & T_NUMBER:
                t.append("J_NUMBER(x)")
            elif n.types & T_INTEGER:
                t.append("(J_NUMBER(x) && el_sv_is_integer(x->valuedouble))")
            if n.types & T_OBJECT:
                t.append("J_OBJECT(x)")
            if n.types & T_ARRAY:
                t.append("J_ARRAY(x)")
            if n.types & T_BOOLEAN:
                t.append("(J_TYPE(x) == cJSON_True || J_TYPE(x) == cJSON_False)")
            if n.types & T_NULL:
                t.append("el_sv_type_of(x) == T_NULL")
            L.append("\tif (!(%s))" % " || ".join(t))
            L.append("\t\treturn FAIL(\"expected %%s, got %%s\", %s, el_sv_type_name(x));" % cstr(n.want))
        self.value(L, n)
        self.inplace(L, n)
        if n.has_object():
            L.append("\tif (J_OBJECT(x)) {")
            self.object(L, n)
            L.append("\t}")
        if n.has_array():
            L.append("\tif (J_ARRAY(x)) {")
            self.array(L, n)
            L.append("\t}")
        if n.has_scalar():
            self.scalar(L, n)
        L.append("\treturn 0;\n}")
        return L

    def value(self, L, n):
        if "const" in n.json:
            c = n.const
            if isinstance(c, str):
                L.append("\tif (!(J_STRING(x) && %s))" % streq("x->valuestring", c))
                L.append("\t\treturn FAIL(\"expected \\\"%%s\\\"\", %s);" % cstr(c))
            else:
                if c is True or c is False or c is None:
                    test = "J_TYPE(x) == %s" % {True: "cJSON_True", False: "cJSON_False", None: "cJSON_NULL"}[c]
                else:
                    test = "cJSON_Compare(&%s, x, 1)" % self.cjson_value(c)
                L.append("\tif (!(%s))" % test)
                L.append("\t\treturn FAIL(\"not the value this field must have\");")
        if n.enum is not None:
            if all(isinstance(e, str) for e in n.enum):
                test = " || ".join(streq("x->valuestring", e) for e in n.enum) or "0"
                L.append("\tif (!(J_STRING(x) && (%s)))" % test)
            else:
                test = " || ".join("cJSON_Compare(&%s, x, 1)" % self.cjson_value(e) for e in n.enum)
                L.append("\tif (!(%s))" % test)
            L.append("\t\treturn J_STRING(x) ? FAIL(\"\\\"%s\\\" is not one of the allowed values\", "
                     "el_sv_esc(shown, 120, x->valuestring))\n\t\t\t\t   : FAIL(\"not one of the allowed values\");")

    def inplace(self, L, n):
        if n.ref:
            L.append("\tif (v%d(v, x, ev) != 0)\n\t\treturn -1;" % n.ref.id)
        for m in n.all_of:
            L.append("\tif (v%d(v, x, ev) != 0)\n\t\treturn -1;" % m.id)
        if n.any_of:
            L.append("\t{\n\t\tint any = 0;\n")
            for m in n.any_of:
                L.append("\t\tany |= matches(v, v%d, x, ev) == 0;" % m.id)
            L.append("\t\tif (!any)\n\t\t\treturn FAIL(\"matches none of the shapes allowed here\");\n\t}")
        if n.one_of:
            L.append("\t{\n\t\tint count = 0;\n")
            for m in n.one_of:
                L.append("\t\tcount += matches(v, v%d, x, ev) == 0;" % m.id)
            L.append("\t\tif (count != 1)\n\t\t\treturn FAIL(count ? \"matches more than one of the shapes "
                     "allowed here\"\n\t\t\t\t\t\t   : \"matches none of the shapes allowed here\");\n\t}")
        if n.not_:
            L.append("\t{\n\t\tel_sv_evaluated none;\n\t\tint rc;\n")
            L.append("\t\tEL_SV_EVALUATED_INIT(none);\n\t\trc = matches(v, v%d, x, &none);" % n.not_.id)
            L.append("\t\tel_sv_eval_release(&none);\n\t\tif (rc == 0)\n"
                     "\t\t\treturn FAIL(\"has a shape that is not allowed here\");\n\t}")
        if n.if_:
            if n.then_ or n.else_:
                L.append("\tif (matches(v, v%d, x, ev) == 0) {" % n.if_.id)
                if n.then_:
                    L.append("\t\tif (v%d(v, x, ev) != 0)\n\t\t\treturn -1;" % n.then_.id)
                L.append("\t} else {")
                if n.else_:
                    L.append("\t\tif (v%d(v, x, ev) != 0)\n\t\t\treturn -1;" % n.else_.id)
                L.append("\t}")
            else:
                L.append("\t(void)matches(v, v%d, x, ev); /* its annotations still count */" % n.if_.id)

    def object(self, L, n):
        props = [p[0] for p in n.props]
        extra = []
        for r in (n.required or []) + [k for k in (n.dep_required or {})] + \
                [x for v in (n.dep_required or {}).values() for x in v]:
            if r not in props and r not in extra:
                extra.append(r)
        names = props + extra
        idx = {nm: i for i, nm in enumerate(names)}
        walk = bool(n.props or n.addl or n.prop_names)
        presence = (n.required and not n.required_in_props) or n.dep_required
        fn = self.name_fn(n, names) if names else None

        def missing(nm, var="have"):
            if len(names) <= 64:
                return "!(%s & (uint64_t)1 << %d)" % (var, idx[nm])
            return "!cJSON_GetObjectItemCaseSensitive(x, %s)" % cstr(nm)

        if presence and len(names) <= 64:
            L.append("\t\tuint64_t have = 0;\n")
            L.append("\t\tfor (const cJSON *m = x->child; m; m = m->next) {\n\t\t\tint id = %s(m->string);\n" % fn)
            L.append("\t\t\tif (id >= 0)\n\t\t\t\thave |= (uint64_t)1 << id;\n\t\t}")
        if n.required and not n.required_in_props:
            for r in n.required:
                L.append("\t\tif (%s)\n\t\t\treturn FAIL(\"\\\"%%s\\\" is missing\", %s);" % (missing(r), cstr(r)))
        if "maxProperties" in n.nums:
            L.append("\t\tif (cJSON_GetArraySize(x) > %s)\n\t\t\treturn FAIL(\"more than %%g members\", %s);"
                     % (n.nums["maxProperties"].c(), n.nums["maxProperties"].c()))
        for k, needs in (n.dep_required or {}).items():
            if not needs:
                continue
            L.append("\t\tif (have & (uint64_t)1 << %d) {" % idx[k] if len(names) <= 64
                     else "\t\tif (cJSON_GetObjectItemCaseSensitive(x, %s)) {" % cstr(k))
            for need in needs:
                L.append("\t\t\tif (%s)\n\t\t\t\treturn FAIL(\"\\\"%%s\\\" needs \\\"%%s\\\"\", %s, %s);"
                         % (missing(need), cstr(k), cstr(need)))
            L.append("\t\t}")
        if walk:
            req_bits = {}
            if n.required_in_props:
                for r in n.required:
                    req_bits[r] = idx[r]
                L.append("\t\tuint64_t seen = 0;\n")
            L.append("\t\tfor (const cJSON *m = x->child; m; m = m->next) {")
            L.append("\t\t\tint id = %s;\n" % ("%s(m->string)" % fn if n.props else "-1"))
            L.append("\t\t\t(void)id;")
            if n.prop_names:
                L.append("\t\t\t{\n\t\t\t\tcJSON key = { .type = cJSON_String, .valuestring = m->string };")
                L.append("\t\t\t\tel_sv_evaluated none;\n\t\t\t\tint rc;\n")
                L.append("\t\t\t\tEL_SV_EVALUATED_INIT(none);\n\t\t\t\trc = matches(v, v%d, &key, &none);"
                         % n.prop_names.id)
                L.append("\t\t\t\tel_sv_eval_release(&none);\n\t\t\t\tif (rc != 0)\n\t\t\t\t\treturn FAIL("
                         "\"the member name \\\"%s\\\" is not allowed\", el_sv_esc(shown, sizeof(shown), m->string));"
                         "\n\t\t\t}")
            L.append("\t\t\tswitch (id) {")
            for i, (nm, node) in enumerate(n.props):
                L.append("\t\t\tcase %d: /* %s */" % (i, ccomment(nm)))
                if nm in req_bits:
                    L.append("\t\t\t\tseen |= (uint64_t)1 << %d;" % req_bits[nm])
                L.append("\t\t\t\tel_sv_eval_add(ev, m->string);")
                self.child(L, "\t\t\t\t", node, "m", "m->string", "0")
                L.append("\t\t\t\tbreak;")
            L.append("\t\t\tdefault:")
            if n.addl:
                if n.addl.is_bool and not n.addl.bool_value:
                    L.append("\t\t\t\treturn FAIL(\"unexpected member \\\"%s\\\"\", "
                             "el_sv_esc(shown, sizeof(shown), m->string));")
                else:
                    L.append("\t\t\t\tel_sv_eval_add(ev, m->string);")
                    self.child(L, "\t\t\t\t", n.addl, "m", "m->string", "0")
            L.append("\t\t\t\tbreak;\n\t\t\t}\n\t\t}")
            if n.required_in_props:
                mask = 0
                for b in req_bits.values():
                    mask |= 1 << b
                L.append("\t\tif (seen != UINT64_C(0x%x)) {" % mask)
                L.append("\t\t\tif (v->quiet || v->reported)\n\t\t\t\treturn -1; /* which one is missing goes unsaid */")
                for r in n.required:
                    L.append("\t\t\tif (!cJSON_GetObjectItemCaseSensitive(x, %s))\n\t\t\t\treturn FAIL("
                             "\"\\\"%%s\\\" is missing\", %s);" % (cstr(r), cstr(r)))
                L.append("\t\t}")
        if n.uneval:
            L.append("\t\t{\n\t\t\tint sorted = 0;\n")
            L.append("\t\t\tfor (const cJSON *m = x->child; m; m = m->next) {")
            L.append("\t\t\t\tif (el_sv_eval_has(ev, m->string, &sorted))\n\t\t\t\t\tcontinue;")
            if n.uneval.is_bool and not n.uneval.bool_value:
                L.append("\t\t\t\treturn FAIL(\"unexpected member \\\"%s\\\"\", "
                         "el_sv_esc(shown, sizeof(shown), m->string));")
            else:
                self.child(L, "\t\t\t\t", n.uneval, "m", "m->string", "0")
            L.append("\t\t\t}")
            L.append("\t\t\tfor (const cJSON *m = x->child; m; m = m->next)\n\t\t\t\tel_sv_eval_add(ev, m->string);")
            L.append("\t\t}")

    def array(self, L, n):
        if "minItems" in n.nums or "maxItems" in n.nums:
            L.append("\t\tint count = cJSON_GetArraySize(x);\n")
            if "minItems" in n.nums:
                c = n.nums["minItems"].c()
                L.append("\t\tif (count < %s)\n\t\t\treturn FAIL(\"fewer than %%g items\", %s);" % (c, c))
            if "maxItems" in n.nums:
                c = n.nums["maxItems"].c()
                L.append("\t\tif (count > %s)\n\t\t\treturn FAIL(\"more than %%g items\", %s);" % (c, c))
        if n.unique:
            L.append("\t\tif (el_sv_has_duplicate(x))\n\t\t\treturn FAIL(\"an item appears twice\");")
        if n.items and not (n.items.is_bool and n.items.bool_value):
            L.append("\t\tlong i = 0;\n")
            L.append("\t\tfor (const cJSON *e = x->child; e; e = e->next, i++) {")
            self.child(L, "\t\t\t", n.items, "e", "NULL", "i")
            L.append("\t\t}")

    def scalar(self, L, n):
        if "minimum" in n.nums or "maximum" in n.nums:
            L.append("\tif (J_NUMBER(x)) {")
            if "minimum" in n.nums:
                c = n.nums["minimum"].c()
                L.append("\t\tif (x->valuedouble < %s)\n\t\t\treturn FAIL(\"%%g is below the minimum %%g\", "
                         "x->valuedouble, %s);" % (c, c))
            if "maximum" in n.nums:
                c = n.nums["maximum"].c()
                L.append("\t\tif (x->valuedouble > %s)\n\t\t\treturn FAIL(\"%%g is above the maximum %%g\", "
                         "x->valuedouble, %s);" % (c, c))
            L.append("\t}")
        lens = "minLength" in n.nums or "maxLength" in n.nums
        if lens or n.pattern:
            L.append("\tif (J_STRING(x)) {")
            if lens:
                mn, mx = n.nums.get("minLength"), n.nums.get("maxLength")
                if mx or not (0 <= float(mn.text) < 4096):
                    enough = "SIZE_MAX"
                else:
                    enough = "(size_t)%s" % mn.c()
                if not mx and enough != "SIZE_MAX" and float(mn.text) == 1:
                    # at least one code point: the first byte that does not continue one
                    L.append("\t\tsize_t len = 0;\n")
                    L.append("\t\tfor (const char *c = x->valuestring; *c && !len; c++)\n"
                             "\t\t\tlen = ((unsigned char)*c & 0xc0) != 0x80;")
                else:
                    L.append("\t\tsize_t len = el_sv_utf8_length(x->valuestring, %s);\n" % enough)
                if mn:
                    L.append("\t\tif ((double)len < %s)\n\t\t\treturn FAIL(\"shorter than %%g characters\", %s);"
                             % (mn.c(), mn.c()))
                if mx:
                    L.append("\t\tif ((double)len > %s)\n\t\t\treturn FAIL(\"longer than %%g characters\", %s);"
                             % (mx.c(), mx.c()))
            if n.pattern:
                L.append("\t\tif (!%s)\n\t\t\treturn FAIL(\"\\\"%%s\\\" is not of the form %%s\", "
                         "el_sv_esc(shown, 120, x->valuestring), %s);"
                         % (self.pattern_expr(n.pattern, "x->valuestring"), cstr(n.pattern)))
            L.append("\t}")


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: schema-gen.py SCHEMA FUNCTION OUT.c")
    schema_path, function, out_path = sys.argv[1:]
    try:
        root = load(schema_path)
        comp = Compiler(root)
        top = comp.compile(root)
        comp.number_needs_eval()
        em = Emitter(comp)
        bodies = []
        for n in comp.nodes:
            bodies.append("\n".join(em.node(n)))
    except SchemaError as e:
        sys.exit("schema-gen.py: %s: %s" % (schema_path, e))
    src = ["/* generated by tools/schema-gen.py from %s: do not edit */" % schema_path,
           "#include <pthread.h>", "#include <regex.h>", "#include <stdint.h>", "#include <stdio.h>",
           "#include <stdlib.h>", "#include <string.h>", "",
           '#include "lock/schema.h"', '#include "lock/schema_rt.h"', "",
           "typedef int el_sv_fn(el_sv *v, const cJSON *x, el_sv_evaluated *ev);", "",
           "/* el_sv_fail, and when it would write nothing, nor are its arguments worked out (el_sv_esc) */",
           "#define FAIL(...) (v->quiet || v->reported ? -1 : el_sv_fail(v, __VA_ARGS__))", "",
           "/* Validate quietly: 0 when x matches (its annotations kept in ev), -1 when not (ev as before). */",
           "static inline __attribute__((unused)) int matches(el_sv *v, el_sv_fn *f, const cJSON *x, el_sv_evaluated *ev)",
           "{\n\tsize_t n0 = ev ? ev->n : 0;\n\tint rc;\n\n\tv->quiet++;\n\trc = f(v, x, ev);\n\tv->quiet--;"
           "\n\tif (rc != 0 && ev)\n\t\tev->n = n0;\n\treturn rc;\n}", ""]
    src += em.consts + [""]
    src += em.pattern_defs + [""]
    src += em.namefns + [""]
    src += ["static int v%d(el_sv *v, const cJSON *x, el_sv_evaluated *ev) __attribute__((unused));" % n.id
            for n in comp.nodes] + [""]
    src += [b + "\n" for b in bodies]
    src += ["int %s(const cJSON *doc, char *why, size_t why_size)" % function,
            "{\n\tel_sv v = { .why = why, .why_size = why_size };\n\tel_sv_evaluated ev;\n\tint rc;\n",
            "\tEL_SV_EVALUATED_INIT(ev);\n\twhy[0] = '\\0';\n\trc = v%d(&v, doc, &ev);\n\tel_sv_eval_release(&ev);" % top.id,
            "\tif (rc != 0 && !why[0])\n\t\tsnprintf(why, why_size, \"the document does not match the schema\");",
            "\treturn rc;\n}"]
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(src) + "\n")
    import os
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
