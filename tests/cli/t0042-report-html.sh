#!/bin/sh
# envlock report --format html, as a browser sees it: the page asks for
# nothing outside itself (no script, no URL, a Content-Security-Policy that
# admits only its own style sheet, which Chromium applies without a
# violation); headless Chromium's DOM holds the lock's key versions and
# every conda and pip package as text (what the browser's find searches),
# the findings of envlock check and, with --against, envlock diff's
# entries with their severities; its screenshot is a real picture with the
# severity colours in it; its printed PDF reads back with the key versions.
. "$(dirname "$0")/lib.sh"

if ! command -v chromium >/dev/null 2>&1; then
	skip "HTML reports in headless Chromium" "chromium is not installed (make deps installs it)"
	exit 0
fi
d=$scratch/html
mkdir -p "$d"
# one browser profile for the test; Chromium wants a sandbox it cannot have as root in a container
browse() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check \
		--disable-dev-shm-usage --user-data-dir="$scratch/chromium" --hide-scrollbars \
		--enable-logging=stderr --v=0 "$@"
}

# static.py PAGE: what in the page could load or run something, one per line
cat >"$scratch/static.py" <<'PY'
import base64, hashlib, html.parser, re, sys
page = open(sys.argv[1], encoding='utf-8').read()
allowed_tags = {'html', 'head', 'meta', 'title', 'style', 'body', 'header', 'main', 'footer', 'section',
                'h1', 'h2', 'p', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span'}
allowed_attrs = {'lang', 'charset', 'http-equiv', 'content', 'name', 'class', 'id', 'colspan'}
problems, styles, csp = [], [], []
class P(html.parser.HTMLParser):
    in_style = False
    def handle_starttag(self, tag, attrs):
        if tag not in allowed_tags:
            problems.append('element <%s>' % tag)
        for k, v in attrs:
            if k not in allowed_attrs:
                problems.append('attribute %s on <%s>' % (k, tag))
            if tag == 'meta' and k == 'http-equiv' and v.lower() == 'content-security-policy':
                csp.append(dict(attrs)['content'])
        self.in_style = tag == 'style'
    def handle_endtag(self, tag):
        self.in_style = False
    def handle_data(self, data):
        if self.in_style:
            styles.append(data)
P().feed(page)
if len(styles) != 1:
    problems.append('%d style elements' % len(styles))
elif re.search(r'url\(|@import|expression\(', styles[0]):
    problems.append('the style sheet refers to something outside the page')
if len(csp) != 1:
    problems.append('%d Content-Security-Policy' % len(csp))
elif styles:
    want = "'sha256-%s'" % base64.b64encode(hashlib.sha256(styles[0].encode()).digest()).decode()
    policy = dict(p.strip().split(' ', 1) for p in csp[0].split(';'))
    if policy.get('default-src') != "'none'":
        problems.append('default-src is not none: %r' % policy.get('default-src'))
    if policy.get('style-src') != want:
        problems.append('style-src %r is not the style sheet\'s hash %s' % (policy.get('style-src'), want))
print('\n'.join(problems))
PY

# dom.py LOCK DOM CHECK_JSON [DIFF_JSON]: what Chromium's DOM lacks of the lock, one per line
cat >"$scratch/dom.py" <<'PY'
import html.parser, json, sys
lock = json.load(open(sys.argv[1]))
check = json.load(open(sys.argv[3]))
diff = json.load(open(sys.argv[4])) if len(sys.argv) > 4 else None
tables, cur = {}, None
text = []
class P(html.parser.HTMLParser):
    section = None
    row = None
    cell = None
    skip = False
    head = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'thead':
            self.head = True
        elif tag == 'section':
            self.section = a.get('id')
            tables.setdefault(self.section, [])
        elif tag == 'tr':
            self.row = {'class': a.get('class'), 'cells': []}
        elif tag in ('td', 'th') and self.row is not None:
            self.cell = []
        self.skip = tag in ('style', 'title')
    def handle_endtag(self, tag):
        if tag in ('td', 'th') and self.cell is not None:
            self.row['cells'].append(''.join(self.cell))
            self.cell = None
        elif tag == 'thead':
            self.head = False
        elif tag == 'tr' and self.row is not None:
            if self.section and not self.head:
                tables[self.section].append(self.row)
            self.row = None
        self.skip = False
    def handle_data(self, data):
        if self.skip:
            return
        text.append(data)
        if self.cell is not None:
            self.cell.append(data)
P().feed(open(sys.argv[2], encoding='utf-8').read())
flat = ' '.join(''.join(text).split())
present = lambda o: isinstance(o, dict) and o.get('status', 'present') == 'present'
missing = []
def want(s, what):
    if s not in flat:
        missing.append('%s %r' % (what, s))
want(lock['id'], 'id')
want('environment: envlock ' + lock['id'][:19] + '\u2026', 'citation')
for n, f in lock['frameworks'].items():
    if present(f):
        want(f['version'], n)
for tk in lock['cuda'].get('toolkits', []):
    if tk.get('version'):
        want(tk['version'], 'CUDA')
if present(lock['cudnn']):
    want(lock['cudnn']['version'], 'cuDNN')
if present(lock['gpu']['driver']):
    want(lock['gpu']['driver']['version'], 'driver')
want(lock['compilers']['default']['version'], 'gcc')
def rows(section):
    return [r['cells'] for r in tables.get(section, []) if r['cells'] and r['class'] != 'group' and len(r['cells']) > 1]
conda = [(p['name'], p['version'], p.get('build', '')) for p in lock['conda'].get('packages', [])]
if [tuple(c[:3]) for c in rows('conda')] != conda:
    missing.append('the conda table is not the lock\'s packages')
pip = [(p['name'], p['version']) for p in lock['pip'].get('distributions', [])]
if [tuple(c[:2]) for c in rows('pip')] != pip:
    missing.append('the pip table is not the lock\'s distributions')
got = [(r['class'], r['cells'][1], r['cells'][2]) for r in tables.get('findings', []) if len(r['cells']) == 6]
exp = [(f['severity'], f['section'], f['subject']) for f in check['findings']]
if got != exp:
    missing.append('findings %r are not envlock check\'s %r' % (got, exp))
if diff is not None:
    got = [(r['class'], r['cells'][1], r['cells'][2]) for r in tables.get('diff', []) if len(r['cells']) == 6]
    exp = [(e['severity'], e['section'], e['key']) for e in diff['differences']]
    if got != exp:
        missing.append('diff rows (%d) are not envlock diff\'s (%d)' % (len(got), len(exp)))
    want(diff['verdict'], 'verdict')
print('\n'.join(missing))
PY

# png.py PNG [R,G,B ...]: "WxH, N colours" and, for each colour asked, whether it is there
cat >"$scratch/png.py" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6) and interlace == 0, 'unexpected PNG format'
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, pixels = bytearray(stride), set()
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        pixels.add(bytes(line[x:x + 3]))
    prev = line
print('%dx%d, %s colours' % (w, h, 'many' if len(pixels) > 16 else len(pixels)))
for want in sys.argv[2:]:
    print(want, bytes(int(v) for v in want.split(',')) in pixels)
PY

cd_golden || exit 1
for name in ubuntu1604-mmdet mmpose-container cuda92-cudnn7 no-nvidia broken report/paper; do
	base=$(basename "$name")
	lock=$name.lock.json
	page=$d/$base.html
	"$ENVLOCK" report "$lock" --format html -o "$page"
	check_status "$base: report --format html" 0 $?
	check_eq "$base: nothing in the page can load or run anything" "" "$("$PYTHON" "$scratch/static.py" "$page")"
	browse --dump-dom "file://$page" >"$d/$base.dom" 2>"$d/$base.log"
	check_status "$base: Chromium loads the page" 0 $?
	check_eq "$base: Chromium reports no Content-Security-Policy violation" "" \
		"$(grep -i 'Content Security Policy' "$d/$base.log")"
	"$ENVLOCK" check --json "$lock" >"$d/$base.check.json"
	check_eq "$base: the page's text has the key versions, every package, envlock check's findings" "" \
		"$("$PYTHON" "$scratch/dom.py" "$lock" "$d/$base.dom" "$d/$base.check.json")"
done

# a screenshot and the printed page of a lock with a breaking finding, and of a diff
"$ENVLOCK" report ubuntu1604-mmdet.lock.json --against mmpose-container.lock.json --format html -o "$d/against.html"
check_status "report --against --format html" 0 $?
"$ENVLOCK" diff --json ubuntu1604-mmdet.lock.json mmpose-container.lock.json >"$d/against.diff.json"
"$ENVLOCK" check --json ubuntu1604-mmdet.lock.json >"$d/against.check.json"
browse --dump-dom "file://$d/against.html" >"$d/against.dom" 2>/dev/null
check_eq "--against: the page's diff is envlock diff's, entry by entry, with its severities" "" \
	"$("$PYTHON" "$scratch/dom.py" ubuntu1604-mmdet.lock.json "$d/against.dom" "$d/against.check.json" "$d/against.diff.json")"
breaking=207,34,46 risky=154,103,0 info=110,119,129 # the badges' colours in the page's style
for base in ubuntu1604-mmdet against; do
	rm -f "$d/$base.png"
	browse --screenshot="$d/$base.png" --window-size=1280,2400 "file://$d/$base.html" >/dev/null 2>&1
	if [ ! -s "$d/$base.png" ]; then
		not_ok "$base: Chromium takes a screenshot"
		continue
	fi
	"$PYTHON" "$scratch/png.py" "$d/$base.png" $breaking $risky $info >"$d/$base.png.txt" 2>&1
	check_eq "$base: the screenshot is a 1280x2400 picture, not one colour" "1280x2400, many colours" "$(head -n 1 "$d/$base.png.txt")"
	check_grep "$base: the breaking badge's red is in the screenshot" "^$breaking True" "$d/$base.png.txt"
	if [ $base = against ]; then
		check_grep "the diff's risky badge colour is in the screenshot" "^$risky True" "$d/$base.png.txt"
		check_grep "the diff's info badge colour is in the screenshot" "^$info True" "$d/$base.png.txt"
	else
		check_grep "no diff, no risky badge" "^$risky False" "$d/$base.png.txt"
	fi
done
if command -v pdftotext >/dev/null 2>&1; then
	browse --print-to-pdf="$d/printed.pdf" --no-pdf-header-footer "file://$d/ubuntu1604-mmdet.html" >/dev/null 2>&1
	pdftotext "$d/printed.pdf" "$d/printed.txt"
	check_eq "the printed page reads back with the citation and the key versions" "" "$("$PYTHON" - ubuntu1604-mmdet.lock.json "$d/printed.txt" <<'PY'
import json, sys
lock = json.load(open(sys.argv[1]))
flat = ' '.join(open(sys.argv[2], encoding='utf-8').read().split())
want = ['environment: envlock ' + lock['id'][:19] + '\u2026 \u2014 CUDA ' + lock['cuda']['toolkits'][0]['version'],
        'cuDNN ' + lock['cudnn']['version'], 'PyTorch ' + lock['frameworks']['torch']['version'],
        lock['system']['glibc']['version'], lock['gpu']['driver']['version'], lock['frameworks']['mmcv']['version'],
        lock['compilers']['default']['version'], lock['python']['version']]
want += [p['name'] for p in lock['conda']['packages']]
print(' '.join(repr(w) for w in want if w not in flat))
PY
)"
else
	skip "the printed page reads back" "pdftotext is not installed (make deps installs poppler-utils)"
fi

# the policy is enforced: the same page with its style sheet changed by one byte is refused
sed 's/<style>body{/<style>body {/' "$d/ubuntu1604-mmdet.html" >"$d/tampered.html"
browse --dump-dom "file://$d/tampered.html" >/dev/null 2>"$d/tampered.log"
check_grep "a changed style sheet is refused by the page's own policy" "violates the following Content Security Policy" "$d/tampered.log"
