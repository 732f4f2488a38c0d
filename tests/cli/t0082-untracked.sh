#!/bin/sh
# envlock save/restore of a repository's untracked files (issue 17): a new,
# non-ignored text file is recorded whole and restore recreates it byte
# for byte; an ignored file is left out; a binary file and a file over
# 1 MiB are recorded by sha256 only and restore names them as not
# restorable; show counts them; diff sees an edited one; a lock whose
# untracked path is absolute, climbs out with '..' or leads into .git is
# refused; and a symbolic link in the work tree cannot lead a file out.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_CONFIG_NOSYSTEM=1
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
root=$FIXTURES/no-nvidia
save() { "$ENVLOCK" save --root "$root" "$@"; }
restore() { "$ENVLOCK" restore --root "$root" "$@"; }
r=repos.repositories.0

# --- a repository whose change is new files --------------------------------
git init -q -b main origin
mkdir -p origin/mmdet/models
printf 'from .retina_head import RetinaHead\n' >origin/mmdet/models/__init__.py
printf '*.log\nwork_dirs/\n' >origin/.gitignore
git -C origin add . && git -C origin commit -qm one
c1=$(git -C origin rev-parse HEAD)
git clone -q origin proj
printf 'class MyHead:\n    """Kopf für λ-Netze."""\n    pass\n' >proj/mmdet/models/my_head.py
mkdir -p proj/tools proj/work_dirs
printf '#!/bin/sh\nexec python tools/train.py "$@"\n' >proj/tools/train.sh
chmod 755 proj/tools/train.sh
printf 'loss 0.31\n' >proj/train.log
printf 'epoch 1\n' >proj/work_dirs/epoch.txt
printf '\000\001\002ELF weights\377\376' >proj/anchors.bin
"$PYTHON" -c "open('proj/big.txt', 'w').write('a' * (1024 * 1024 + 1))"
check_eq "git itself lists the untracked files, not the ignored ones" \
	"?? anchors.bin|?? big.txt|?? mmdet/models/my_head.py|?? tools/train.sh" \
	"$(git -C proj status --porcelain --untracked-files=all | sort | paste -sd'|')"

save --repo proj -o P.lock 2>err
check_status "save of a repository with untracked files" 0 $?
check_eq "one warning naming what cannot be restored" \
	"envlock: warning: 'proj': 2 untracked files recorded by sha256 only (binary, a link, or over 1 MiB): restore cannot recreate them: 'anchors.bin', ..." \
	"$(cat err)"
check_eq "the lock is valid against the schema" valid "$(schema_errors P.lock)"
check_eq "still clean: no tracked file changed" "false" "$(jget P.lock $r.dirty)"
check_eq "the untracked files, sorted, the ignored ones left out" \
	"anchors.bin big.txt mmdet/models/my_head.py tools/train.sh" \
	"$("$PYTHON" -c "import json; print(' '.join(f['path'] for f in json.load(open('P.lock'))['repos']['repositories'][0]['untracked_files']))")"
check_eq "the ignored files are nowhere in the lock" 0 "$(grep -c -e 'loss 0.31' -e 'epoch.txt' -e 'train.log' P.lock)"
u=$r.untracked_files
check_eq "text: the file's sha256" "$(sha256sum <proj/mmdet/models/my_head.py | cut -d' ' -f1)" "$(jget P.lock $u.2.sha256)"
check_eq "text: its size" "$(wc -c <proj/mmdet/models/my_head.py | tr -d ' ')" "$(jget P.lock $u.2.size)"
jget P.lock $u.2.text >head.txt
printf '\n' >>proj.nl && cat proj/mmdet/models/my_head.py proj.nl >head.want
check_diff "text: its content, whole" head.want head.txt
check_eq "text: not marked as left out" "" "$(jget P.lock $u.2.omitted)"
check_eq "the script is marked executable" "true" "$(jget P.lock $u.3.executable)"
check_eq "binary: by digest only" "binary" "$(jget P.lock $u.0.omitted)"
check_eq "binary: no text" "" "$(jget P.lock $u.0.text)"
check_eq "binary: its sha256" "$(sha256sum <proj/anchors.bin | cut -d' ' -f1)" "$(jget P.lock $u.0.sha256)"
check_eq "over 1 MiB: by digest only" "too_large" "$(jget P.lock $u.1.omitted)"
check_eq "over 1 MiB: its size" 1048577 "$(jget P.lock $u.1.size)"
check_eq "over 1 MiB: its sha256" "$(sha256sum <proj/big.txt | cut -d' ' -f1)" "$(jget P.lock $u.1.sha256)"

# --- show -----------------------------------------------------------------
"$ENVLOCK" show P.lock >show.out
check_eq "show counts the untracked files the lock holds" \
	"code        proj at $(printf %.12s "$c1") (clean), 4 untracked files included (2 only by digest)" \
	"$(grep '^code' show.out)"
"$ENVLOCK" report P.lock >report.out 2>&1
check_grep "report says the same" "4 untracked files included (2 only by digest)" report.out

# --- restore into a fresh place -------------------------------------------
mkdir D
restore P.lock --dest D --only repos --yes >out 2>err
check_status "restore: the digest-only files need the user" 1 $?
check_eq "cloned at the commit" "$c1" "$(git -C D/proj rev-parse HEAD)"
if cmp proj/mmdet/models/my_head.py D/proj/mmdet/models/my_head.py; then
	ok "the untracked text file is byte-identical"
else
	not_ok "the untracked text file is byte-identical"
fi
if cmp proj/tools/train.sh D/proj/tools/train.sh && [ -x D/proj/tools/train.sh ]; then
	ok "the script is back, executable"
else
	not_ok "the script is back, executable"
fi
check_eq "the ignored files are not there" "no no" \
	"$([ -e D/proj/train.log ] && echo yes || echo no) $([ -e D/proj/work_dirs ] && echo yes || echo no)"
check_eq "nor the digest-only ones" "no no" \
	"$([ -e D/proj/anchors.bin ] && echo yes || echo no) $([ -e D/proj/big.txt ] && echo yes || echo no)"
check_grep "the binary file is named as not restorable" \
	"manual  repository proj: untracked 'anchors.bin' not restorable: content not in the lock" out
check_grep "with why and its digest" "binary, 16 bytes, sha256 $(jget P.lock $u.0.sha256): copy it into proj" out
check_grep "the file over the limit too" "untracked 'big.txt' not restorable: content not in the lock" out
check_grep "the clone writes the files" "done    clone $scratch/origin at $(printf %.12s "$c1"), then write 2 untracked files" out
check_eq "git sees the same untracked files as at save, less the digest-only ones" \
	"?? mmdet/models/my_head.py|?? tools/train.sh" \
	"$(git -C D/proj status --porcelain --untracked-files=all | sort | paste -sd'|')"
check_eq "no temporary file left" "" "$(find D/proj -name '*.envlock-tmp-*')"
restore P.lock --dest D --only repos --dry-run >again 2>&1
check_grep "a rerun finds the repository as locked" "ok      1 repository at the locked commit" again
check_eq "and nothing to do" 0 "$(grep -c '^  do ' again)"

# a clone already at the commit: only the files are written
mkdir E && git clone -q origin E/proj
restore P.lock --dest E --only repos --yes >out 2>err
check_grep "an existing checkout gets only the files" "done    write 2 untracked files into proj" out
if cmp proj/mmdet/models/my_head.py E/proj/mmdet/models/my_head.py; then
	ok "written into the existing checkout"
else
	not_ok "written into the existing checkout"
fi

# a different file already there: never overwritten
mkdir F && git clone -q origin F/proj && mkdir -p F/proj/mmdet/models && printf 'mine\n' >F/proj/mmdet/models/my_head.py
restore P.lock --dest F --only repos --yes >out 2>err
check_grep "a different file there is manual" "manual  repository proj: untracked 'mmdet/models/my_head.py' differs from the lock" out
check_eq "and left as it was" "mine" "$(cat F/proj/mmdet/models/my_head.py)"
check_eq "the other file is still written" "$(cat proj/tools/train.sh)" "$(cat F/proj/tools/train.sh)"

# a symbolic link in the work tree does not lead a file out of it
mkdir -p G outside && git clone -q origin G/proj && ln -s "$scratch/outside" G/proj/tools
restore P.lock --dest G --only repos --yes >out 2>err
check_status "a link on the way fails the restore" 1 $?
check_grep "the item failed" "^  failed  write 2 untracked files into proj" out
check_grep "a link on the way is refused" "untracked 'tools/train.sh': folder 'tools': a symbolic link or a file stands there" out
check_eq "nothing written through the link" "" "$(ls outside)"

# --- the lock edited: a text that is not what its digest says ------------
"$PYTHON" -c "
import json
d = json.load(open('P.lock'))
d['repos']['repositories'][0]['untracked_files'][2]['text'] = 'import os; os.system(\"id\")\n'
json.dump(d, open('edited.lock', 'w'))"
mkdir H
restore edited.lock --dest H --only repos --yes >out 2>err
check_grep "an edited text is refused" "manual  repository proj: a recorded untracked file does not match its digest" out
check_eq "nothing cloned" "" "$(ls H)"

# --- hostile paths: refused before anything runs ---------------------------
hostile() { # NAME PATH
	"$PYTHON" -c "
import json, hashlib
d = json.load(open('P.lock'))
f = d['repos']['repositories'][0]['untracked_files'][2]
f['path'] = '$2'
json.dump(d, open('$1', 'w'))"
}
hostile h1.lock ../evil.py
hostile h2.lock /tmp/evil.py
hostile h3.lock .git/hooks/pre-commit
hostile h4.lock mmdet/./../../evil.py
mkdir I
for h in h1 h2 h3 h4; do
	restore $h.lock --dest I --only repos --yes >out 2>err
	check_status "hostile lock $h refused" 2 $?
	check_eq "$h: one line on stderr" 1 "$(wc -l <err | tr -d ' ')"
done
restore h1.lock --dest I --only repos --yes >out 2>err
check_eq "'..': the error names the lock and the path" \
	"envlock: restore: 'h1.lock': repos.repositories[0].untracked_files[2].path '../evil.py': has a '..' component" "$(cat err)"
restore h2.lock --dest I --only repos --yes >out 2>err
check_eq "absolute: the error names the lock and the path" \
	"envlock: restore: 'h2.lock': repos.repositories[0].untracked_files[2].path '/tmp/evil.py': is an absolute path" "$(cat err)"
restore h3.lock --dest I --only repos --yes >out 2>err
check_eq ".git: the error names the lock and the path" \
	"envlock: restore: 'h3.lock': repos.repositories[0].untracked_files[2].path '.git/hooks/pre-commit': is inside .git" "$(cat err)"
check_eq "nothing cloned or written for a hostile lock" "" "$(ls I)"
check_eq "no evil.py anywhere" "" "$(find "$scratch" /tmp -maxdepth 1 -name evil.py 2>/dev/null)"

# --- diff: an untracked file added or edited is a change of the code ------
printf '    def forward(self, x):\n        return x\n' >>proj/mmdet/models/my_head.py
printf 'lr = 0.01\n' >proj/mmdet/models/new_cfg.py
save --repo proj -o P2.lock 2>/dev/null
"$ENVLOCK" diff P.lock P2.lock >diff.out 2>&1
check_status "diff finds the change" 1 $?
check_grep "an edited untracked file" "proj untracked mmdet/models/my_head.py .*sha256:$(printf %.12s "$(jget P.lock $u.2.sha256)")" diff.out
check_grep "an added untracked file" "proj untracked mmdet/models/new_cfg.py .*(none)" diff.out

# --- a patch and untracked files together: the patch first, then the files ---
printf 'from .my_head import MyHead\n' >>proj/mmdet/models/__init__.py
save --repo proj -o PU.lock 2>/dev/null
check_eq "an edited tracked file makes it dirty" "true" "$(jget PU.lock $r.dirty)"
mkdir K
restore PU.lock --dest K --only repos --yes >out 2>err
check_grep "clone, patch, files" "done    clone $scratch/origin at $(printf %.12s "$c1"), apply the recorded patch, then write 3 untracked files" out
if cmp proj/mmdet/models/__init__.py K/proj/mmdet/models/__init__.py && cmp proj/mmdet/models/my_head.py K/proj/mmdet/models/my_head.py &&
	cmp proj/mmdet/models/new_cfg.py K/proj/mmdet/models/new_cfg.py; then
	ok "the patched file and the untracked ones are byte-identical"
else
	not_ok "the patched file and the untracked ones are byte-identical"
fi
check_eq "git status is the same as where it was saved, less the digest-only files" \
	"$(git -C proj status --porcelain --untracked-files=all | grep -v -e anchors.bin -e big.txt -e '\.lock' | sort | paste -sd'|')" \
	"$(git -C K/proj status --porcelain --untracked-files=all | sort | paste -sd'|')"

# --- --no-patch: digests, no content -----------------------------------------
git -C proj checkout -q mmdet/models/__init__.py
save --repo proj --no-patch -o NP.lock 2>err
check_eq "--no-patch: the text file by digest only" "no_patch" "$(jget NP.lock $u.2.omitted)"
check_eq "--no-patch: its content is nowhere in the lock" 0 "$(grep -c 'MyHead' NP.lock)"
mkdir J
restore NP.lock --dest J --only repos --yes >out 2>err
check_grep "--no-patch: restore names it" "untracked 'mmdet/models/my_head.py' not restorable: content not in the lock" out
check_grep "and says why" "saved with --no-patch" out

# --- what envlock itself writes into the work tree is not the user's code ----
(cd proj && "$ENVLOCK" save --root "$root" --repo . 2>/dev/null && mkdir -p .envlock && printf 'x\n' >.envlock/restore-0.journal &&
	"$ENVLOCK" save --root "$root" --repo . -o again.lock.json 2>/dev/null)
check_eq "git sees save's output and restore's state folder as untracked" "?? .envlock/restore-0.journal|?? envlock.lock.json" \
	"$(git -C proj status --porcelain --untracked-files=all | grep -e envlock | sort | paste -sd'|')"
check_eq "neither is kept in the next lock" "" \
	"$("$PYTHON" -c "import json; print(' '.join(f['path'] for f in json.load(open('proj/again.lock.json'))['repos']['repositories'][0]['untracked_files'] if 'envlock' in f['path']))")"

# --- a repository inside the work tree is not walked into ------------------
git init -q proj/third_party/dep && printf 'x\n' >proj/third_party/dep/f.txt
save --repo proj -o N.lock 2>err
check_grep "a nested repository is named, with what to do" \
	"envlock: warning: 'proj': untracked 'third_party/dep/' is a git repository of its own: not recorded (name it with --repo)" err
check_eq "none of its files is kept" 0 "$(grep -c 'third_party/dep/f.txt' N.lock)"

echo "1..$n"
