#!/bin/sh
# envlock report: every fixture lock (and a paper's lock, saved here with a
# repository, configs and a checkpoint) in every format against golden
# files; the citation and table checked against the lock's own values;
# --short, -o written atomically, an edited lock, usage errors.
# UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing).
. "$(dirname "$0")/lib.sh"

R=$GOLDEN/report
update=${UPDATE_GOLDEN:-}
[ "$update" = 1 ] && mkdir -p "$R"

# --- the paper's lock: the 16.04 box, a dirty mmdetection checkout, its configs, a checkpoint
GIT_AUTHOR_NAME="Ada Lovelace" GIT_AUTHOR_EMAIL=ada@example.org
GIT_COMMITTER_NAME="Ada Lovelace" GIT_COMMITTER_EMAIL=ada@example.org
GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL \
	GIT_AUTHOR_DATE GIT_COMMITTER_DATE GIT_CONFIG_NOSYSTEM
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
work=$scratch/paper
repo=$work/mmdetection
mkdir -p "$repo" "$work/work_dirs/faster_rcnn"
cp -R "$top/tests/fixtures/configs/configs" "$repo/configs"
g() { git -C "$repo" -c init.defaultBranch=main "$@"; }
g init -q && g add configs && g commit -q -m "configs" && g tag v2.25.1
echo "# lr halved for 2 GPUs" >>"$repo/configs/_base_/schedules/schedule_1x.py"
echo "notes" >"$repo/NOTES.txt"
"$PYTHON" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 4096)' >"$work/work_dirs/faster_rcnn/epoch_12.pth"
touch -d "2024-03-01 12:00:00 UTC" "$work/work_dirs/faster_rcnn/epoch_12.pth"
paper=$scratch/paper.lock.json
(cd "$work" && SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q --root "$FIXTURES/ubuntu1604-mmdet" --repo mmdetection \
	--config mmdetection/configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py \
	--checkpoint work_dirs/faster_rcnn/epoch_12.pth -o "$paper")
check_status "save the paper's lock" 0 $?
[ "$update" = 1 ] && cp "$paper" "$R/paper.lock.json"
check_diff "paper lock matches tests/golden/report/paper.lock.json" "$R/paper.lock.json" "$paper"
check_eq "the paper lock's repository is dirty" "true" "$(jget "$paper" repos.repositories.0.dirty)"
check_eq "the paper lock's commit is git's HEAD" "$(g rev-parse HEAD)" "$(jget "$paper" repos.repositories.0.head.commit)"

# --- every lock, every format, against its golden file
out=$scratch/out
mkdir -p "$out"
cd_golden || exit 1
for name in ubuntu1604-mmdet mmpose-container cuda92-cudnn7 no-nvidia broken report/paper; do
	lock=$name.lock.json
	base=$(basename "$name")
	for fmt in text md latex html json; do
		case $fmt in text) ext=txt ;; latex) ext=tex ;; *) ext=$fmt ;; esac
		"$ENVLOCK" report "$lock" --format $fmt >"$out/$base.$ext" 2>"$out/err"
		check_status "$base: report --format $fmt" 0 $?
		check_eq "$base: report --format $fmt says nothing on stderr" "" "$(cat "$out/err")"
		[ "$update" = 1 ] && cp "$out/$base.$ext" "$R/$base.$ext"
		check_diff "$base: --format $fmt matches tests/golden/report/$base.$ext" "$R/$base.$ext" "$out/$base.$ext"
	done

	# the citation and the table hold the lock's own values, read here with Python
	check_eq "$base: the citation line, computed from the lock" "$("$PYTHON" - "$lock" <<'PY'
import json, sys
lock = json.load(open(sys.argv[1]))
present = lambda o: isinstance(o, dict) and o.get('status', 'present') == 'present'
cites = []
cuda = lock['cuda']
for tk in cuda.get('toolkits', []):
    if present(cuda) and tk.get('home') == cuda.get('default') and tk.get('version'):
        cites.append('CUDA ' + tk['version'])
if present(lock['cudnn']) and lock['cudnn'].get('version'):
    cites.append('cuDNN ' + lock['cudnn']['version'])
fw = lock['frameworks']
if present(fw['torch']) and fw['torch'].get('version'):
    cites.append('PyTorch ' + fw['torch']['version'])
for n in ['mmdet', 'mmpose', 'mmpretrain', 'mmseg', 'mmdet3d', 'mmaction', 'mmocr', 'mmcls']:
    if present(fw[n]) and fw[n].get('version'):
        cites.append(n + ' ' + fw[n]['version'])
print('environment: envlock ' + lock['id'][:19] + '\u2026' + (' \u2014 ' + ', '.join(cites) if cites else ''))
PY
)" "$(head -n 1 "$out/$base.txt")"
	check_eq "$base: the table's rows hold the lock's values" "" "$("$PYTHON" - "$lock" "$out/$base.json" <<'PY'
import json, sys
lock, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = {(r['component'], r['version']) for r in rep['rows']}
present = lambda o: isinstance(o, dict) and o.get('status', 'present') == 'present'
want = [('lockfile', lock['id'])]
if present(lock['system']['glibc']):
    want.append(('glibc', lock['system']['glibc']['version']))
if present(lock['gpu']['driver']) and lock['gpu']['driver'].get('version'):
    want.append(('NVIDIA driver', lock['gpu']['driver']['version']))
if lock['compilers'].get('default', {}).get('version'):
    want.append(('gcc', lock['compilers']['default']['version']))
if present(lock['python']):
    want.append(('Python', lock['python']['version']))
for n, f in lock['frameworks'].items():
    if present(f) and f.get('version'):
        want.append((f.get('package', n), f['version']))
for f in lock['checkpoints'].get('files', []):
    want.append(('checkpoint', 'sha256:' + f['sha256'][:12]))
for f in lock['configs'].get('files', []):
    want.append(('config', 'sha256:' + f['sha256'][:12]))
for r in lock['repos'].get('repositories', []):
    want.append(('code', r['head']['commit'][:12] + (' (dirty)' if r['dirty'] else ' (clean)')))
print(' '.join('%s=%s' % w for w in want if w not in rows))
PY
)"

	"$ENVLOCK" report "$lock" --short >"$out/short"
	check_eq "$base: --short is the text report's first line" "$(head -n 1 "$out/$base.txt")" "$(cat "$out/short")"
	"$ENVLOCK" report "$lock" --short --format latex >"$out/short.tex"
	check_eq "$base: --short --format latex is the LaTeX report's citation paragraph" \
		"$(sed -n 's/^{\\sloppy\\noindent \(.*\)\\par}$/\1/p' "$out/$base.tex")" "$(cat "$out/short.tex")"
	"$ENVLOCK" report "$lock" --short --format md >"$out/short.md"
	check_eq "$base: --short --format md is the Markdown report's first line" "$(head -n 1 "$out/$base.md")" "$(cat "$out/short.md")"
done

# --- a diff against a second lock
for fmt in text html json; do
	case $fmt in text) ext=txt ;; *) ext=$fmt ;; esac
	"$ENVLOCK" report ubuntu1604-mmdet.lock.json --against mmpose-container.lock.json --format $fmt >"$out/against.$ext"
	check_status "report --against --format $fmt" 0 $?
	[ "$update" = 1 ] && cp "$out/against.$ext" "$R/ubuntu1604-mmdet.against-mmpose-container.$ext"
	check_diff "--against --format $fmt matches its golden file" \
		"$R/ubuntu1604-mmdet.against-mmpose-container.$ext" "$out/against.$ext"
done
# the report's diff is envlock diff's: the same entries, member for member, and verdict
"$ENVLOCK" diff --json ubuntu1604-mmdet.lock.json mmpose-container.lock.json >"$out/diff.json"
check_eq "the report's diff entries are envlock diff's" "same" "$("$PYTHON" - "$out/diff.json" "$out/against.json" <<'PY'
import json, sys
d, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))['diff']
de = d['differences']
print('same' if de == r['entries'] and len(de) > 10 and d['verdict'] == r['verdict'] else
      'differ: %d vs %d entries, %r vs %r' % (len(de), len(r['entries']), d['verdict'], r['verdict']))
PY
)"

# --- -o: the file is the report, written whole
cd "$scratch" || exit 1
mkdir -p o
"$ENVLOCK" report "$GOLDEN/ubuntu1604-mmdet.lock.json" --format html -o o/report.html
check_status "report -o" 0 $?
"$ENVLOCK" report "$GOLDEN/ubuntu1604-mmdet.lock.json" --format html >o/stdout.html
check_diff "-o writes what stdout gets" o/stdout.html o/report.html
echo "previous" >o/keep.md
"$ENVLOCK" report "$GOLDEN/ubuntu1604-mmdet.lock.json" --format md --against "$GOLDEN/no-nvidia.lock.json" -o o/keep.md 2>err
check_status "--against with md" 2 $?
check_eq "--against with md: why" "envlock: report: a diff against a second lock is shown in html, json and text reports only, and not in the citation line alone" "$(cat err)"
check_eq "a failed report leaves the file at -o untouched" "previous" "$(cat o/keep.md)"
"$ENVLOCK" report "$GOLDEN/ubuntu1604-mmdet.lock.json" --format md -o o/keep.md
check_diff "an existing file is replaced" "$R/ubuntu1604-mmdet.md" o/keep.md
check_eq "no temporary file left beside it" "keep.md report.html stdout.html" "$(ls o | tr '\n' ' ' | sed 's/ $//')"
"$ENVLOCK" report "$GOLDEN/ubuntu1604-mmdet.lock.json" -o o/missing/dir/r.txt 2>err
check_status "-o into a missing folder" 1 $?
check_grep "-o into a missing folder: the file is named" "^envlock: report: .*o/missing/dir/r.txt" err

# --- an edited lock: the report cites the content and says so
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" edited.lock.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc['cudnn']['version'] = '8.9.7'
json.dump(doc, open(sys.argv[2], 'w'), indent=2, sort_keys=True)
PY
content=$("$PYTHON" - edited.lock.json <<'PY'
import hashlib, json, sys
doc = json.load(open(sys.argv[1]))
del doc['id'], doc['created']
canon = json.dumps(doc, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode()
print('sha256:' + hashlib.sha256(canon).hexdigest())
PY
)
stored=$(jget edited.lock.json id)
"$ENVLOCK" report edited.lock.json --format json >edited.json 2>err
check_status "report of an edited lock" 0 $?
check_eq "the warning names both ids" \
	"envlock: warning: 'edited.lock.json': its stored id $stored does not match its content ($content): it was edited after it was saved; the report cites the content" \
	"$(cat err)"
check_eq "the report's id is the content's" "$content" "$(jget edited.json id)"
check_eq "the stored id is kept apart" "$stored" "$(jget edited.json stored_id)"
"$ENVLOCK" report edited.lock.json --format html 2>/dev/null >edited.html
check_grep "the page says the lock was edited, with both ids" \
	"<p class=\"warn\">The lockfile says its id is $stored, but its content is $content: it was edited after it was saved." edited.html
"$ENVLOCK" report edited.lock.json --format md 2>/dev/null >edited.md
check_grep "the table has the stored id apart" "^| stored id | $stored | differs from the content: the file was edited after it was saved |$" edited.md
"$ENVLOCK" report edited.lock.json --short 2>/dev/null >short
check_grep "the citation cites the content's id" "envlock $(echo "$content" | cut -c1-19)… — CUDA 10.2.89, cuDNN 8.9.7," short

# --- usage
"$ENVLOCK" report 2>err
check_status "no lockfile" 2 $?
check_eq "no lockfile: why" "envlock: report: expected one lockfile, got 0" "$(head -n 1 err)"
"$ENVLOCK" report a.json b.json 2>err
check_status "two lockfiles" 2 $?
"$ENVLOCK" report "$GOLDEN/no-nvidia.lock.json" --format pdf 2>err
check_status "an unknown format" 2 $?
check_eq "an unknown format: why" "envlock: report: unknown format 'pdf' (md, latex, html, json or text)" "$(cat err)"
"$ENVLOCK" report missing.lock.json 2>err
check_status "a missing lockfile" 2 $?
check_eq "a missing lockfile: why" "envlock: report: 'missing.lock.json': no such file" "$(cat err)"
"$ENVLOCK" report "$GOLDEN/no-nvidia.lock.json" --against missing.lock.json 2>err
check_status "a missing --against lockfile" 2 $?
"$ENVLOCK" report "$GOLDEN/no-nvidia.lock.json" --short --against "$GOLDEN/broken.lock.json" 2>err
check_status "--short with --against" 2 $?
"$ENVLOCK" report --help >help
check_status "report --help" 0 $?
check_grep "--help lists the formats" "md|latex|html|json|text" help
