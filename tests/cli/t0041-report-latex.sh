#!/bin/sh
# envlock report --format latex: ASCII only; \input into a plain article it
# compiles with pdflatex (and with booktabs loaded), fits the page, and the
# PDF's text, read back with pdftotext, holds the citation line, the full
# lock id and each key version on the line of its component, as the lock
# itself says them.
. "$(dirname "$0")/lib.sh"

for prog in pdflatex pdftotext; do
	if ! command -v $prog >/dev/null 2>&1; then
		skip "LaTeX reports compile and read back" "$prog is not installed (make deps installs texlive-latex-base and poppler-utils)"
		exit 0
	fi
done

# compile NAME PREAMBLE BODY_FILE: pdflatex in $scratch/tex, text of the PDF in NAME.txt
compile() {
	printf '\\documentclass{article}\n%s\n\\begin{document}\n\\input{%s}\n\\end{document}\n' "$2" "$3" >"$d/$1.tex"
	(cd "$d" && pdflatex -no-shell-escape -interaction=nonstopmode -halt-on-error "$1.tex" >"$1.out" 2>&1) &&
		pdftotext -layout "$d/$1.pdf" "$d/$1.txt"
}

d=$scratch/tex
mkdir -p "$d"
# pdfcheck.py LOCK PDFTEXT CITEFILE: what the PDF's text lacks, one per line, from the lock's
# values: the citation (LaTeX's \ldots reads back as ". . .", written to CITEFILE), the full id,
# and "component  version" on one line of the table
cat >"$scratch/pdfcheck.py" <<'PY'
import json, re, sys
lock = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding='utf-8').read()
flat = ' '.join(text.split())
present = lambda o: isinstance(o, dict) and o.get('status', 'present') == 'present'
cites, rows = [], []
cuda = lock['cuda']
for tk in cuda.get('toolkits', []):
    if present(tk) and tk.get('version'):
        rows.append(('CUDA toolkit', tk['version']))
        if tk.get('home') == cuda.get('default'):
            cites.append('CUDA ' + tk['version'])
if present(lock['cudnn']) and lock['cudnn'].get('version'):
    cites.append('cuDNN ' + lock['cudnn']['version'])
    rows.append(('cuDNN', lock['cudnn']['version']))
fw = lock['frameworks']
if present(fw['torch']):
    cites.append('PyTorch ' + fw['torch']['version'])
for n in ['mmdet', 'mmpose', 'mmpretrain', 'mmseg', 'mmdet3d', 'mmaction', 'mmocr', 'mmcls']:
    if present(fw[n]):
        cites.append(n + ' ' + fw[n]['version'])
for n, f in fw.items():
    if present(f):
        rows.append((f.get('package', n), f['version']))
if present(lock['system']['glibc']):
    rows.append(('glibc', lock['system']['glibc']['version']))
if present(lock['gpu']['driver']):
    rows.append(('NVIDIA driver', lock['gpu']['driver']['version']))
rows.append(('gcc', lock['compilers']['default']['version']))
if present(lock['python']):
    rows.append(('Python', lock['python']['version']))
for f in lock['configs'].get('files', []) + lock['checkpoints'].get('files', []):
    rows.append(('config' if f in lock['configs'].get('files', []) else 'checkpoint', 'sha256:' + f['sha256'][:12]))
missing = []
citation = 'environment: envlock ' + lock['id'][:19] + '. . .' + (' \u2014 ' + ', '.join(cites) if cites else '')
open(sys.argv[3], 'w', encoding='utf-8').write(citation + '\n')
if citation not in flat:
    missing.append('citation ' + citation)
if 'lockfile ' + lock['id'] not in flat:
    missing.append('full id')
for comp, ver in rows:
    if not re.search(r'^\s*' + re.escape(comp) + r'\s{2,}' + re.escape(ver) + r'(\s|$)', text, re.M):
        missing.append('%s %s' % (comp, ver))
print('\n'.join(missing))
PY
booktabs=$(kpsewhich booktabs.sty 2>/dev/null)
cd_golden || exit 1
for name in ubuntu1604-mmdet mmpose-container cuda92-cudnn7 no-nvidia broken report/paper; do
	base=$(basename "$name")
	lock=$name.lock.json
	"$ENVLOCK" report "$lock" --format latex -o "$d/$base-table.tex"
	check_status "$base: report --format latex" 0 $?
	check_eq "$base: the LaTeX is ASCII only" "" "$(LC_ALL=C grep -n '[^ -~]' "$d/$base-table.tex" | head -n 3)"
	if compile "$base" "" "$base-table.tex"; then
		ok "$base: compiles in a plain article"
	else
		not_ok "$base: compiles in a plain article"
		grep -A 3 '^!' "$d/$base.log" | sed 's/^/#   /' | head -n 20
		continue
	fi
	check_eq "$base: the table fits the page (no overfull box)" "" "$(grep 'Overfull' "$d/$base.log")"
	"$PYTHON" "$scratch/pdfcheck.py" "$lock" "$d/$base.txt" "$d/$base.cite" >"$d/$base.missing"
	check_eq "$base: the PDF has the citation, the id and every key version beside its component" "" "$(cat "$d/$base.missing")"

	"$ENVLOCK" report "$lock" --format latex --short -o "$d/$base-cite.tex"
	if compile "$base-short" "" "$base-cite.tex"; then
		check_eq "$base: --short --format latex compiles to the citation line" "$(cat "$d/$base.cite")" \
			"$("$PYTHON" -c 'import sys; print(" ".join(open(sys.argv[1]).read().split()).removesuffix(" 1"))' "$d/$base-short.txt")"
	else
		not_ok "$base: --short --format latex compiles"
	fi

	if [ -z "$booktabs" ]; then
		skip "$base: compiles with booktabs" "booktabs.sty is not installed (make deps installs texlive-latex-recommended)"
		continue
	fi
	if compile "$base-booktabs" '\usepackage{booktabs}' "$base-table.tex"; then
		ok "$base: compiles with booktabs"
		check_grep "$base: booktabs' rules are the ones used" "booktabs.sty" "$d/$base-booktabs.log"
		"$PYTHON" "$scratch/pdfcheck.py" "$lock" "$d/$base-booktabs.txt" "$d/$base.cite" >"$d/$base-booktabs.missing"
		check_eq "$base: with booktabs too, the PDF has the citation, the id and every key version" "" \
			"$(cat "$d/$base-booktabs.missing")"
	else
		not_ok "$base: compiles with booktabs"
		grep -A 3 '^!' "$d/$base-booktabs.log" | sed 's/^/#   /' | head -n 20
	fi
done
