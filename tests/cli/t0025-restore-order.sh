#!/bin/sh
# envlock restore's step order: repos before pip, so an editable install
# whose repository the lock records is made from the checkout the same run
# clones (planned from it, never "missing"; one run, not two), and the one
# order everywhere it is written (the binary, --help, the man page, the
# README, the completions).
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
STANDIN=$top/tests/restore/standin.py
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_CONFIG_NOSYSTEM=1

# --- the order, and the same order everywhere -------------------------------
steps=$("$ENVLOCK" restore "$GOLDEN/no-nvidia.lock.json" --dry-run --only '?' 2>&1 | sed -n 's/.*(steps: \(.*\))$/\1/p' | tr -d ',')
pos() { echo "$steps" | tr ' ' '\n' | grep -nx "$1" | cut -d: -f1; }
if [ -n "$(pos repos)" ] && [ -n "$(pos pip)" ] && [ "$(pos repos)" -lt "$(pos pip)" ]; then
	ok "repos comes before pip ($steps)"
else
	not_ok "repos comes before pip"; echo "#   steps: '$steps'"
fi
if [ -n "$(pos cuda)" ] && [ -n "$(pos compilers)" ] && [ "$(pos cuda)" -lt "$(pos compilers)" ] && [ "$(pos compilers)" -lt "$(pos pip)" ]; then
	ok "compilers comes after cuda and before pip"
else
	not_ok "compilers comes after cuda and before pip"; echo "#   steps: '$steps'"
fi
check_eq "--help lists the steps in that order" "$steps" \
	"$("$ENVLOCK" restore --help | tr '\n' ' ' | sed -n 's/.*Steps, in order: \(.*\) (run after.*/\1/p' | tr -d ',' | tr -s ' ')"
check_eq "envlock-restore(1) describes them in that order" "$steps" \
	"$(sed -n '/^The steps, in order:/,/^\.El/s/^\.It Ic \([a-z]*\)$/\1/p' "$top/man/envlock-restore.1" | tr '\n' ' ' | sed 's/ $//')"
check_eq "the README's table lists them in that order" "$steps" \
	"$(sed -n '/^| step | what restore does |$/,/^$/s/^| `\([a-z]*\)` |.*/\1/p' "$top/README.md" | tr '\n' ' ' | sed 's/ $//')"
check_eq "bash completion offers them in that order" "$steps" \
	"$(sed -n 's/^_envlock_steps="\(.*\)"$/\1/p' "$top/completion/envlock.bash")"
check_eq "zsh completion offers them in that order" "$steps" \
	"$(sed -n 's/^ *steps=(\(.*\))$/\1/p' "$top/completion/_envlock")"

# --- an editable install whose repository the lock records -----------------
# the fixture's mmdetection checkout, as a repository with a remote: the
# lock records mmdet installed editable from /home/alice/mmdetection and
# the repository "mmdetection" (saved from alice's home, relative to it)
fx=$FIXTURES/ubuntu1604-mmdet
cp -a "$fx/home/alice/mmdetection" origin && git -C origin init -q -b main && git -C origin add -A &&
	git -C origin commit -qm mmdet
commit=$(git -C origin rev-parse HEAD)
mkdir saved && git clone -q origin saved/mmdetection
(cd saved && "$ENVLOCK" save --root "$fx" --repo mmdetection -o ../M.lock 2>/dev/null)
check_eq "the lock records the repository" "mmdetection $commit" \
	"$(jget M.lock repos.repositories.0.path) $(jget M.lock repos.repositories.0.head.commit)"
check_eq "and mmdet editable from the checkout" "True /home/alice/mmdetection" \
	"$("$PYTHON" -c "import json; d=[x for x in json.load(open('M.lock'))['pip']['distributions'] if x['name']=='mmdet'][0]; print(d['editable'], d['source'])")"

# a sandbox with nothing of alice's: --root R for the machine, --dest R/home/alice for
# the repository; conda and pip run inside it (--chroot), as the stand-ins run by
# the tree's own python3.11, the captured environment theirs to copy from
chroot_tree R
mkdir -p R/home/alice R/opt/fixture-env && cp -a "$fx/home/alice/miniconda3/envs/mmdet/." R/opt/fixture-env/
C="--chroot --conda-exe /opt/envlock-test/conda"
"$ENVLOCK" restore M.lock --root R --dest R/home/alice $C \
	--only conda --only repos --only pip --dry-run >plan 2>err
check_status "the plan: conda, repos and pip to do" 1 $?
check_eq "nothing is missing" "" "$(grep -i 'missing' plan)"
check_eq "nothing manual" "0" "$(sed -n 's/^[0-9]* to do, \([0-9]*\) manual.*/\1/p' plan)"
clone=$(grep -n "^  do      clone $scratch/origin at $(echo "$commit" | cut -c1-12)$" plan | cut -d: -f1)
editable=$(grep -n "^  do      pip install 1 editable install into " plan | cut -d: -f1)
if [ -n "$clone" ] && [ -n "$editable" ] && [ "$clone" -lt "$editable" ]; then
	ok "the clone is planned before the editable install (lines $clone, $editable)"
else
	not_ok "the clone is planned before the editable install"; sed 's/^/#   /' plan
fi
check_grep "the editable install says where its source comes from" \
	"from the checkouts the repos step restores first: mmdet (mmdetection)" plan
# the repos step left out: the source is missing, and the plan says which step brings it
"$ENVLOCK" restore M.lock --root R --dest R/home/alice $C \
	--only conda --only pip --dry-run >plan 2>err
check_grep "without the repos step: missing (manual)" "manual  editable mmdet 2.25.1: its source /home/alice/mmdetection is missing" plan
check_grep "naming the step that restores it" "the repos step restores it (the locked repository mmdetection): plan that step too" plan

# the real apply, in one run: conda and pip through the stand-ins (the pip one
# refuses an editable source that is not there, as pip does), the clone by libgit2
"$PYTHON" -c "
import json
for p in json.load(open('M.lock'))['conda']['packages']:
    print('%s#%s' % (p['url'], p['md5']))" >R/expect
STANDIN_EXPECT=/expect STANDIN_FIXTURE_ENV=/opt/fixture-env STANDIN_LOG=/standin.log STANDIN_FORBID=$scratch \
	"$ENVLOCK" restore M.lock --root R --dest R/home/alice $C \
	--only conda --only repos --only pip --yes >out 2>err
check_status "one run restores the environment, the checkout and the editable install" 0 $?
check_eq "no step failed" "" "$(grep '^  failed' out)"
check_eq "the checkout is at the locked commit" "$commit" "$(git -C R/home/alice/mmdetection rev-parse HEAD)"
check_eq "pip was given the restored checkout's folder, by its path in the tree" "-e /home/alice/mmdetection" \
	"$(sed -n 's/^\(-e .*\)$/\1/p' .envlock/restore-*.log)"
site=R/home/alice/miniconda3/envs/mmdet/lib/python3.7/site-packages
id12=$(jget M.lock id | cut -c8-19)
check_eq "pip ran as the tree's python, inside it, with its requirements files in the tree" \
	"prefix: /home/alice/miniconda3/envs/mmdet,requirements: /tmp/envlock-restore-$id12.requirements.txt,prefix: /home/alice/miniconda3/envs/mmdet,requirements: /tmp/envlock-restore-$id12.editable.txt" \
	"$(tr '\n' ',' <$site/standin-pip.txt | sed 's/,$//')"
check_eq "pip's argv named no path outside the tree" "" "$(grep -e "$scratch" -e '"--prefix", "[^/]' R/standin.log)"
check_eq "no host path in the environment pip and conda made" "" "$(grep -rl "$scratch" R/home/alice/miniconda3 2>/dev/null)"
check_eq "the requirements files removed from the tree afterwards" "" "$(ls R/tmp)"
check_eq "the editable install points at it" "/home/alice/mmdetection" \
	"$(head -n 1 R/home/alice/miniconda3/envs/mmdet/lib/python3.7/site-packages/mmdet.egg-link 2>/dev/null)"
check_eq "the journal has repos end before pip starts" "end repos ok,start pip" \
	"$(sed -n 's/^[^ ]* \(end repos ok\|start pip\)$/\1/p' .envlock/restore-*.journal | tr '\n' ',' | sed 's/,$//')"
"$ENVLOCK" restore M.lock --root R --dest R/home/alice $C \
	--only conda --only repos --only pip --dry-run >again 2>err
check_status "a second run has nothing to do" 0 $?
check_grep "the repository as locked" "ok      1 repository at the locked commit" again
check_grep "the pip distributions as locked, the editable one too" "ok      24 distributions as locked" again
