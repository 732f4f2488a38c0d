#!/bin/sh
# envlock save --repo: HEAD and dirty state as git itself reports them, the
# patch digest, --no-patch, credentials left out, a folder outside any
# repository, a missing one, and the current directory's repository.
. "$(dirname "$0")/lib.sh"

root=$FIXTURES/no-nvidia
GIT_AUTHOR_NAME="Ada Lovelace" GIT_AUTHOR_EMAIL=ada@example.org
GIT_COMMITTER_NAME="Ada Lovelace" GIT_COMMITTER_EMAIL=ada@example.org
GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL \
	GIT_AUTHOR_DATE GIT_COMMITTER_DATE GIT_CONFIG_NOSYSTEM
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

repo=$scratch/work/mmdet
g() { git -C "$repo" -c init.defaultBranch=main "$@"; }
mkdir -p "$repo/configs" "$scratch/work/plain"
g init -q
echo "lr = 0.02" >"$repo/configs/train.py"
g add configs/train.py
g commit -q -m "first"
g tag v2.25.1
g remote add origin "https://alice:s3cret@github.com/team/mmdet.git"
cd "$scratch/work" || exit 1
save() { "$ENVLOCK" save --root "$root" "$@"; }
r=repos.repositories.0

# a clean repository
save --repo mmdet -o - >clean.json 2>err
check_status "save --repo of a clean repository" 0 $?
check_eq "no warning for a clean repository" "" "$(cat err)"
check_eq "repos present" "present" "$(jget clean.json repos.status)"
check_eq "path relative to the current directory" "mmdet" "$(jget clean.json $r.path)"
check_eq "the argument as typed" "mmdet" "$(jget clean.json $r.requested)"
check_eq "commit = git rev-parse HEAD" "$(g rev-parse HEAD)" "$(jget clean.json $r.head.commit)"
check_eq "branch" "main" "$(jget clean.json $r.head.branch)"
check_eq "tag = git describe --tags" "$(g describe --tags)" "$(jget clean.json $r.tag)"
check_eq "clean: not dirty" "false" "$(jget clean.json $r.dirty)"
check_eq "clean: no patch" "" "$(jget clean.json $r.patch)"
check_eq "remote url without the credentials" "https://github.com/team/mmdet.git" "$(jget clean.json $r.remotes.0.url)"
check_eq "the password is nowhere in the lock" "0" "$(grep -c s3cret clean.json)"

# uncommitted changes: dirty, listed, the patch is git diff HEAD
echo "lr = 0.01" >mmdet/configs/train.py
echo "scratch" >mmdet/notes.txt
save --repo mmdet -o - >dirty.json 2>/dev/null
check_eq "an edited file makes it dirty" "true" "$(jget dirty.json $r.dirty)"
check_eq "modified list" '["configs/train.py"]' "$(jget dirty.json $r.changes.modified)"
check_eq "untracked list" '["notes.txt"]' "$(jget dirty.json $r.changes.untracked)"
check_eq "patch sha256 = sha256 of git diff HEAD" \
	"$(g diff HEAD --no-color --no-ext-diff | sha256sum | cut -d' ' -f1)" "$(jget dirty.json $r.patch.sha256)"
check_eq "patch size = bytes of git diff HEAD" \
	"$(g diff HEAD --no-color --no-ext-diff | wc -c)" "$(jget dirty.json $r.patch.size)"
jget dirty.json $r.patch.text >patch.txt
check_grep "patch text holds the change" "^+lr = 0.01" patch.txt
save --repo mmdet -o - >dirty2.json 2>/dev/null
check_eq "same state, the same repos section" "$(jget dirty.json repos)" "$(jget dirty2.json repos)"

# --no-patch: the digest stays, the text goes
save --repo mmdet --no-patch -o - >nopatch.json 2>/dev/null
check_status "save --no-patch" 0 $?
check_eq "--no-patch keeps the sha256" "$(jget dirty.json $r.patch.sha256)" "$(jget nopatch.json $r.patch.sha256)"
check_eq "--no-patch leaves out the text" "" "$(jget nopatch.json $r.patch.text)"
check_eq "--no-patch: the changed line is nowhere in the lock" "0" "$(grep -c 'lr = 0.01' nopatch.json)"
check_eq "--no-patch still says dirty" "true" "$(jget nopatch.json $r.dirty)"

# a folder outside any repository: one warning naming it, still saved
save --repo plain -o - >plain.json 2>err
check_status "--repo of a plain folder" 0 $?
check_eq "one warning line naming it" "envlock: warning: 'plain': not inside a git repository" "$(cat err)"
check_eq "recorded as not a repository" "not_a_repository" "$(jget plain.json $r.status)"
check_eq "its path as typed" "plain" "$(jget plain.json $r.path)"
check_eq "repos present: it was asked for" "present" "$(jget plain.json repos.status)"

# a folder that is not there: an error, nothing written
save --repo missing -o missing.json 2>err
check_status "--repo of a missing folder" 1 $?
check_grep "the missing folder is named" "envlock: save: 'missing': no such file or directory" err
if [ -e missing.json ]; then not_ok "nothing written for a missing --repo"; else ok "nothing written for a missing --repo"; fi

# the same repository twice is recorded once
save --repo mmdet --repo mmdet/configs -o - >twice.json 2>/dev/null
check_eq "one entry for one repository" "1" "$("$PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["repos"]["repositories"]))' twice.json)"

# without --repo, on this machine: the current directory's repository
cd mmdet || exit 1
"$ENVLOCK" save -q -o - >"$scratch/default.json"
check_status "save in a repository" 0 $?
check_eq "the current directory's repository is recorded as ." "." "$(jget "$scratch/default.json" $r.path)"
check_eq "its commit" "$(g rev-parse HEAD)" "$(jget "$scratch/default.json" $r.head.commit)"
check_eq "no requested path for it" "" "$(jget "$scratch/default.json" $r.requested)"
"$ENVLOCK" save -q --no-repo -o - >"$scratch/norepo.json"
check_eq "--no-repo records none" "absent" "$(jget "$scratch/norepo.json" repos.status)"
check_eq "--no-repo: no list" "" "$(jget "$scratch/norepo.json" repos.repositories)"
cd ../plain || exit 1
"$ENVLOCK" save -o - >"$scratch/outside.json" 2>"$scratch/err"
check_eq "outside any repository: none recorded" "absent" "$(jget "$scratch/outside.json" repos.status)"
check_eq "outside any repository: no warning about it" "0" "$(grep -c -i 'git' "$scratch/err")"
cd "$scratch/work" || exit 1

if grep -q '"repos"' "$top/schemas/envlock.lock.schema.json"; then
	if validate dirty.json >"$scratch/v.out" 2>&1 && validate plain.json >>"$scratch/v.out" 2>&1 &&
		validate "$scratch/norepo.json" >>"$scratch/v.out" 2>&1; then
		ok "locks with repos match the schema"
	else
		not_ok "locks with repos match the schema"; sed 's/^/#   /' "$scratch/v.out"
	fi
else
	skip "locks with repos match the schema" "the schema has no repos section yet"
fi
