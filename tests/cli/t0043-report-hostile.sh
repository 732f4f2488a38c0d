#!/bin/sh
# envlock report of a hostile lock: strings with every LaTeX special,
# Markdown table breakers, HTML/script injections, terminal escapes, a bidi
# override and a byte that is not UTF-8. Each format must show them as text:
# the terminal gets no escape, GitHub's Markdown renderer keeps the table's
# shape and the strings, pdflatex compiles (even with \write18 allowed) and
# prints them, Chromium builds no element from them. Loading a lock validates
# it against the schema: the strings sit where the schema lets them in (any
# text, or a one-word ^\S+$ version, which takes control characters and
# U+202E but no space); a string with spaces in a version gets the lock
# refused, by report in every format and by show, check and diff, with one
# line on stderr that names the field and shows the value escaped.
# python3-jsonschema confirms which lock is valid and which is not.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
# Each string that has spaces and was a version goes, as it was, to a field of
# any text in the same place (the kernel release in the OS row, the CUDA torch
# was built for in torch's row, a conda package's build beside its version);
# the version keeps a string of the same kind without spaces. bad-*.lock.json
# is the hostile lock with one version as it was, with its spaces. Python's
# json cannot read the byte that is not UTF-8: the schema checks read the
# hostile lock's twin, hostile-utf8.lock.json, with U+FFFD for it.
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" hostile.lock.json <<'PY'
import copy, json, sys
doc = json.load(open(sys.argv[1]))
latex = r'_ % # & ~ ^ \ { } $ < > | " -- ' + "''" + r' `` !` ?`'
doc['system']['os']['pretty_name'] = ('Ubuntu | 16.04 \\| <b>bold</b> *emph* _u_ `code` [link](x.html) $x^2$ '
                                      '~~strike~~ &amp; ' + latex)
glibc = '2.23\x1b]0;owned\x07\x1b[31m red \u202egnp.exe'
doc['system']['glibc']['version'] = glibc.replace(' red ', '')
doc['system']['kernel']['release'] = '4.15.0' + glibc[4:]
doc['gpu']['devices'][0]['name'] = 'Tesla \u00e9\u4e2d'
doc['frameworks']['mmdet']['version'] = '2.25.1_%#&~^\\{}$'
torch = '1.10.0 \\input{/etc/passwd} \\write18{touch pwned} \\end{document}'
doc['frameworks']['torch']['version'] = '1.10.0+cu102\\input{/etc/passwd}\\write18{touch${IFS}pwned}\\end{document}'
doc['frameworks']['torch']['cuda'] = '10.2' + torch[6:]
doc['conda']['packages'][0]['name'] = '<script>alert("xss")</script>'
conda = '1.0"><img src=x onerror=alert(1)>'
doc['conda']['packages'][1]['version'] = '1.0"><img/src="x"/onerror=alert(1)>'
doc['conda']['packages'][1]['build'] = conda
doc['conda']['packages'][2]['build'] = "'; background:url(http://127.0.0.1:9/x.png)"
doc['pip']['distributions'][0]['name'] = '<svg/onload=alert(2)>'
doc['pip']['distributions'][1]['version'] = '&lt;not-an-entity&gt;'
doc['configs'] = {'status': 'present', 'files': [{
    'path': 'cfg/a|b\nc</td></tr></table><h1>injected</h1>.py', 'requested': True,
    'sha256': 'ab' * 32, 'size': 1, 'text': 'x', 'bases': []}]}
doc['checkpoints'] = {'status': 'present', 'count': 1, 'total_bytes': 5, 'files': [{
    'path': 'w/$(rm -rf ~)/e.pth', 'size': 5, 'mtime': '2024-01-01T00:00:00.000000000Z', 'sha256': 'cd' * 32}]}
dump = lambda d: json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False).encode()
# a byte that is not UTF-8, where the JSON text can carry one
raw = dump(doc).replace(b'/include/cudnn_version.h"', b'/include/\xffcudnn_version.h"', 1)
open(sys.argv[2], 'wb').write(raw)
open('hostile-utf8.lock.json', 'wb').write(raw.decode('utf-8', 'replace').encode())
for name, path, value in (('glibc', ('system', 'glibc', 'version'), glibc),
                          ('torch', ('frameworks', 'torch', 'version'), torch),
                          ('conda', ('conda', 'packages', 1, 'version'), conda)):
    # each bad lock differs from the hostile one (less its byte 0xff) in this one value
    bad = copy.deepcopy(doc)
    node = bad
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    open('bad-%s.lock.json' % name, 'wb').write(dump(bad))
PY

# the checker itself catches each kind of raw byte it is meant to
for what in ESC:033 BEL:007 C1-CSI:302233 RLO:342200256 0xFF:377; do
	printf "x$(echo "${what#*:}" | sed 's/\([0-7][0-7][0-7]\)/\\\1/g')y\n" >probe.txt
	if [ "$(clean probe.txt)" = clean ]; then not_ok "the checker flags a raw ${what%:*}"; else ok "the checker flags a raw ${what%:*}"; fi
done

# --- the schema, read by python3-jsonschema: the hostile lock is valid, each bad one is not, for its one value
check_eq "the hostile lock is valid by the schema (its UTF-8 twin: json cannot read the 0xff byte)" \
	valid "$(schema_errors hostile-utf8.lock.json)"
check_eq "the hostile lock really holds the byte 0xff" 1 "$(LC_ALL=C grep -c "$(printf '/\377cudnn')" hostile.lock.json)"
check_eq "glibc's version with spaces is not valid" "system/glibc/version
status 1" "$(schema_errors bad-glibc.lock.json)"
check_eq "torch's version with spaces is not valid" "frameworks/torch/version
status 1" "$(schema_errors bad-torch.lock.json)"
check_eq "a conda package's version with spaces is not valid" "conda/packages/1/version
status 1" "$(schema_errors bad-conda.lock.json)"

# --- text: nothing a terminal acts on, everything visible
"$ENVLOCK" report hostile.lock.json >text.txt 2>err
check_status "text report" 0 $?
check_eq "the edited lock is said once on stderr" "1" "$(grep -c 'was edited after it was saved' err)"
check_eq "text: no control character, valid UTF-8, no bidi override" "clean" "$("$PYTHON" - text.txt <<'PY'
import sys
raw = open(sys.argv[1], 'rb').read()
try:
    s = raw.decode('utf-8')
except UnicodeDecodeError as e:
    sys.exit(print('not UTF-8: %s' % e))
bad = [hex(ord(c)) for c in s if (ord(c) < 32 and c != '\n') or 0x7f <= ord(c) < 0xa0 or 0x202a <= ord(c) <= 0x202e]
print('clean' if not bad else ' '.join(bad))
PY
)"
check_grep "text: the escape sequence is shown, not sent" 'glibc *2.23\\x1b\]0;owned\\x07\\x1b\[31m\\u202egnp.exe$' text.txt
check_grep "text: and in a field of any text, with its spaces" 'kernel 4.15.0\\x1b\]0;owned\\x07\\x1b\[31m red \\u202egnp.exe$' text.txt
check_grep "text: the byte that is not UTF-8 is shown" 'include/\\xffcudnn_version.h' text.txt

# --- json: the data as it is (the invalid byte as U+FFFD, as in envlock's own JSON)
"$ENVLOCK" report hostile.lock.json --format json >report.json 2>/dev/null
check_status "json report" 0 $?
check_eq "json: strict JSON whose rows hold the hostile strings exactly" "ok" "$("$PYTHON" - report.json hostile.lock.json <<'PY'
import json, sys
rep = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))
lock = json.loads(open(sys.argv[2], 'rb').read().decode('utf-8', 'replace'))
rows = {r['component']: r for r in rep['rows']}
want = {'OS': lock['system']['os']['pretty_name'], 'glibc': lock['system']['glibc']['version'],
        'mmdet': lock['frameworks']['mmdet']['version'], 'torch': lock['frameworks']['torch']['version']}
bad = [k for k, v in want.items() if rows[k]['version'] != v]
details = {'OS': 'x86_64, kernel ' + lock['system']['kernel']['release'],
           'torch': 'CUDA %s build, git 36449ea93134, pip wheel cp37-cp37m-linux_x86_64' % lock['frameworks']['torch']['cuda']}
bad += ['%s details %r' % (k, rows[k]['details']) for k, v in details.items() if rows[k]['details'] != v]
if rows['cuDNN']['details'] != lock['cudnn']['header']:
    bad.append('cuDNN header %r' % rows['cuDNN']['details'])
print(' '.join(bad) or 'ok')
PY
)"

# --- Markdown, rendered by GitHub's cmark-gfm: one table of three cells a row, each cell the string
"$ENVLOCK" report hostile.lock.json --format md >report.md 2>/dev/null
check_status "md report" 0 $?
if command -v cmark-gfm >/dev/null 2>&1; then
	cmark-gfm -e table report.md >md.html
	check_eq "md: rendered, the table is the report's rows and every cell its string" "ok" "$("$PYTHON" - md.html report.json <<'PY'
import html.parser, json, sys
rep = json.load(open(sys.argv[2]))
tags, rows, cur, cell = [], [], None, None
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        global cur, cell
        tags.append(tag)
        if tag == 'tr':
            cur = []
        elif tag in ('td', 'th'):
            cell = []
    def handle_endtag(self, tag):
        global cur, cell
        if tag in ('td', 'th'):
            cur.append(''.join(cell))
            cell = None
        elif tag == 'tr':
            rows.append(cur)
    def handle_data(self, d):
        if cell is not None:
            cell.append(d)
    def handle_comment(self, d):
        tags.append('comment ' + d)
P().feed(open(sys.argv[1], encoding='utf-8').read())
def visible(s):
    out = []
    for c in s:
        o = ord(c)
        if o < 32 or 0x7f <= o < 0xa0:
            out.append(''.join('\\x%02x' % b for b in c.encode()))
        elif 0x202a <= o <= 0x202e or 0x2066 <= o <= 0x2069:
            out.append('\\u%04x' % o)
        elif c == '\ufffd':
            out.append('\\xff')  # the byte that is not UTF-8
        else:
            out.append(c)
    return ''.join(out)
want, group = [['Component', 'Version', 'Details']], None
for r in rep['rows']:
    if r['group'] != group:
        group = r['group']
        want.append([group, '', ''])
    want.append([visible(r['component']), visible(r['version']), visible(r['details'])])
odd = sorted(set(t for t in tags if t not in ('p', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'strong')))
if odd:
    print('markup from lock strings:', odd)
elif tags.count('table') != 1:
    print('%d tables' % tags.count('table'))
elif rows != want:
    diff = [(a, b) for a, b in zip(rows, want) if a != b]
    print('%d rows for %d; first difference: %r' % (len(rows), len(want), diff[:1]))
else:
    print('ok')
PY
)"
else
	skip "md: rendered by cmark-gfm" "cmark-gfm is not installed (make deps installs it)"
fi

# --- LaTeX: compiles with shell escape allowed, prints the strings, runs nothing
"$ENVLOCK" report hostile.lock.json --format latex >table.tex 2>/dev/null
check_status "latex report" 0 $?
check_eq "latex: ASCII only" "" "$(LC_ALL=C grep -n '[^ -~]' table.tex | head -n 3)"
if command -v pdflatex >/dev/null 2>&1 && command -v pdftotext >/dev/null 2>&1; then
	mkdir tex && cp table.tex tex/ && cd tex || exit 1
	printf '\\documentclass{article}\n\\begin{document}\n\\input{table.tex}\n\\end{document}\n' >doc.tex
	if pdflatex -shell-escape -interaction=nonstopmode -halt-on-error doc.tex >out.txt 2>&1; then
		ok "latex: compiles, with \\write18 allowed"
		pdftotext -layout doc.pdf doc.txt
		# pdftotext loses the narrow spaces between symbols and the table wraps: compare without white space
		tr -d ' \n' <doc.txt >doc.flat
		for s in '\input{/etc/passwd}' '\write18{touch pwned}' '\end{document}' '<b>bold</b> *emph*' \
			'1.10.0+cu102\input{/etc/passwd}\write18{touch${IFS}pwned}\end{document}' \
			'Ubuntu | 16.04 \|' '2.25.1 %#&' '\{}$' '{ } $ < > | "' '-- ' '<U+00E9><U+4E2D>' \
			'\x1b]0;owned\x07\x1b[31m' '2.23\x1b]0;owned\x07\x1b[31m\u202egnp.exe' \
			'\xffcudnn' '$(rm -rf' 'a|b\x0ac</td></tr></table><h1>injected</h1>.py'; do
			if grep -F -q -- "$(printf '%s' "$s" | tr -d ' ')" doc.flat; then ok "latex: the PDF prints '$s'"; else not_ok "latex: the PDF prints '$s'"; fi
		done
		if [ -e pwned ]; then not_ok "latex: \\write18 in a lock string ran nothing"; else ok "latex: \\write18 in a lock string ran nothing"; fi
		check_eq "latex: no file was read into the PDF" "0" "$(grep -c 'root:' doc.txt)"
	else
		not_ok "latex: compiles, with \\write18 allowed"
		grep -A 3 '^!' doc.log | sed 's/^/#   /' | head -n 20
	fi
	cd "$scratch" || exit 1
else
	skip "latex: compiles and prints the strings" "pdflatex or pdftotext is not installed (make deps installs them)"
fi

# --- HTML: Chromium builds no element from a lock string and shows each one as text
"$ENVLOCK" report hostile.lock.json --format html -o page.html 2>/dev/null
check_status "html report" 0 $?
if command -v chromium >/dev/null 2>&1; then
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-dev-shm-usage \
		--user-data-dir="$scratch/chromium" --enable-logging=stderr --v=0 --dump-dom "file://$scratch/page.html" \
		>dom.html 2>chromium.log
	check_status "html: Chromium loads the page" 0 $?
	check_eq "html: nothing was blocked (nothing tried to load)" "" "$(grep -i 'Content Security Policy' chromium.log)"
	check_eq "html: the DOM has only the page's own elements, and the strings as text" "ok" "$("$PYTHON" - dom.html <<'PY'
import html.parser, sys
tags, text = set(), []
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        tags.add(tag)
        for k, v in attrs:
            if k.startswith('on') or k in ('src', 'href', 'style'):
                tags.add('attribute ' + k)
    def handle_data(self, d):
        text.append(d)
P().feed(open(sys.argv[1], encoding='utf-8').read())
page = {'html', 'head', 'meta', 'title', 'style', 'body', 'header', 'main', 'footer', 'section', 'h1', 'h2', 'p',
        'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span'}
flat = ''.join(text)
want = ['<script>alert("xss")</script>', '1.0"><img src=x onerror=alert(1)>', '<svg/onload=alert(2)>',
        '1.0"><img/src="x"/onerror=alert(1)>', '&lt;not-an-entity&gt;', "'; background:url(http://127.0.0.1:9/x.png)",
        'cfg/a|b\\x0ac</td></tr></table><h1>injected</h1>.py', '\\x1b]0;owned\\x07', '\\u202egnp.exe',
        '2.23\\x1b]0;owned\\x07\\x1b[31m\\u202egnp.exe', 'kernel 4.15.0\\x1b]0;owned\\x07\\x1b[31m red \\u202egnp.exe']
bad = sorted(tags - page) + [w for w in want if w not in flat]
print(' '.join(map(repr, bad)) or 'ok')
PY
)"
else
	skip "html: Chromium builds no element from lock strings" "chromium is not installed (make deps installs it)"
fi

# --- a version with spaces: the lock is refused, by report in every format and by show, check and diff
good=$GOLDEN/ubuntu1604-mmdet.lock.json
why="'bad-glibc.lock.json': not a valid lockfile: system.glibc.version: \"2.23\\x1b]0;owned\\x07\\x1b[31m red \\u202egnp.exe\" is not of the form ^\\S+\$"
refused "report refuses glibc's version with spaces" "$why" report bad-glibc.lock.json
for format in json md latex; do
	refused "report --format $format refuses it" "$why" report bad-glibc.lock.json --format $format
done
refused "report --format html -o refuses it" "$why" report bad-glibc.lock.json --format html -o bad.html
check_eq "report --format html -o writes no page for it" "" "$(ls bad.html 2>/dev/null)"
refused "show refuses it" "$why" show bad-glibc.lock.json
refused "check refuses it" "$why" check bad-glibc.lock.json
refused "diff refuses it" "$why" diff "$good" bad-glibc.lock.json
why="'bad-torch.lock.json': not a valid lockfile: frameworks.torch.version: \"1.10.0 \\input{/etc/passwd} \\write18{touch pwned} \\end{document}\" is not of the form ^\\S+\$"
refused "report refuses torch's version with spaces" "$why" report bad-torch.lock.json
refused "report --format latex refuses it" "$why" report bad-torch.lock.json --format latex
refused "show refuses it" "$why" show bad-torch.lock.json
refused "check refuses it" "$why" check bad-torch.lock.json
refused "diff refuses it" "$why" diff "$good" bad-torch.lock.json
why="'bad-conda.lock.json': not a valid lockfile: conda.packages[1].version: \"1.0\"><img src=x onerror=alert(1)>\" is not of the form ^\\S+\$"
refused "report refuses a conda package's version with spaces" "$why" report bad-conda.lock.json
refused "report --format html refuses it" "$why" report bad-conda.lock.json --format html
refused "show refuses it" "$why" show bad-conda.lock.json
refused "check refuses it" "$why" check bad-conda.lock.json
refused "diff refuses it" "$why" diff "$good" bad-conda.lock.json

# --- a million-device lock is no denial of service: GPUs are grouped by sorting, not pairwise
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" many.lock.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc['gpu']['devices'] = [{'bus': str(i), 'name': 'GPU %d' % (i % 3)} for i in range(1000000)]
json.dump(doc, open(sys.argv[2], 'w'))
PY
timeout 60 "$ENVLOCK" report many.lock.json --format md >many.md 2>/dev/null
check_status "a lock with a million GPUs is reported" 0 $?
check_eq "its GPUs, grouped by model in order of appearance" \
	"| GPU | 333334 × GPU 0 |  |,| GPU | 333333 × GPU 1 |  |,| GPU | 333333 × GPU 2 |  |" \
	"$(grep '^| GPU |' many.md | tr '\n' ',' | sed 's/,$//')"
