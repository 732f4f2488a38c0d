#!/bin/sh
# envlock save --checkpoint: digests equal sha256sum's, folders and globs,
# the digest cache (a second save reads nothing), --no-cache, bad input.
. "$(dirname "$0")/lib.sh"

root=$FIXTURES/no-nvidia
work=$scratch/work
mkdir -p "$work/work_dirs/exp1" "$work/other" "$work/logs"
echo "no weights here" >"$work/logs/train.log"
head -c 3000000 /dev/urandom >"$work/work_dirs/exp1/epoch_1.pth"
head -c 1000 /dev/urandom >"$work/work_dirs/exp1/epoch_2.pth"
head -c 500 /dev/urandom >"$work/work_dirs/exp1/model.safetensors"
echo "loss: 0.5" >"$work/work_dirs/exp1/20261130.log"
head -c 700 /dev/urandom >"$work/other/weights.bin"
cd "$work" || exit 1
save() { "$ENVLOCK" save -q --no-repo --root "$root" "$@"; }

save --checkpoint work_dirs/exp1 --checkpoint 'other/*.bin' -o lock.json --json >summary.json
check_status "save with a folder and a glob" 0 $?
check_eq "the folder gives its weight files, the glob its match" \
	"other/weights.bin work_dirs/exp1/epoch_1.pth work_dirs/exp1/epoch_2.pth work_dirs/exp1/model.safetensors" \
	"$("$PYTHON" -c 'import json; print(" ".join(f["path"] for f in json.load(open("lock.json"))["checkpoints"]["files"]))')"
for f in work_dirs/exp1/epoch_1.pth work_dirs/exp1/epoch_2.pth work_dirs/exp1/model.safetensors other/weights.bin; do
	got=$("$PYTHON" - "$f" <<'PY'
import json, sys
for c in json.load(open("lock.json"))["checkpoints"]["files"]:
    if c["path"] == sys.argv[1]:
        print(c["sha256"], c["size"])
PY
)
	check_eq "$f: sha256 and size = sha256sum and stat" "$(sha256sum "$f" | cut -d' ' -f1) $(stat -c %s "$f")" "$got"
done
check_eq "mtime recorded to the nanosecond, UTC" \
	"$(date -u -d "@$(stat -c %.9Y work_dirs/exp1/epoch_2.pth)" +%Y-%m-%dT%H:%M:%S).$(stat -c %.9Y work_dirs/exp1/epoch_2.pth | cut -d. -f2)Z" \
	"$(jget lock.json checkpoints.files.2.mtime)"
if validate lock.json >"$scratch/v" 2>&1; then ok "a lock with checkpoints is valid against the schema"; else not_ok "a lock with checkpoints is valid against the schema"; sed 's/^/#   /' "$scratch/v"; fi
check_eq "total bytes" "$((3000000 + 1000 + 500 + 700))" "$(jget lock.json checkpoints.total_bytes)"
check_eq "first save read every byte" "$((3000000 + 1000 + 500 + 700))" "$(jget summary.json hashed.bytes_read)"

# the digest cache: a second save reads nothing; --no-cache reads it all again
save --checkpoint work_dirs/exp1 --checkpoint 'other/*.bin' -o lock2.json --json >summary2.json
check_eq "second save: every checkpoint from the cache" "4" "$(jget summary2.json hashed.cached)"
check_eq "second save reads no byte" "0" "$(jget summary2.json hashed.bytes_read)"
check_eq "same lock from the cache" "$(jget lock.json id)" "$(jget lock2.json id)"
save --no-cache --checkpoint work_dirs/exp1 --checkpoint 'other/*.bin' -o /dev/null --json >summary3.json
check_eq "--no-cache reads everything again" "$((3000000 + 1000 + 500 + 700))" "$(jget summary3.json hashed.bytes_read)"
# a changed file is hashed again, and only it
head -c 1000 /dev/urandom >work_dirs/exp1/epoch_2.pth
save --checkpoint work_dirs/exp1 -o lock4.json --json >summary4.json
check_eq "after a change only that file is read" "1000" "$(jget summary4.json hashed.bytes_read)"
check_eq "and its new digest is recorded" "$(sha256sum work_dirs/exp1/epoch_2.pth | cut -d' ' -f1)" "$(jget lock4.json checkpoints.files.1.sha256)"
# a corrupt cache: a warning on stderr, then a full hash
printf 'envlock-hashes 1\nnot a cache line\n' >"$XDG_CACHE_HOME/envlock/hashes"
"$ENVLOCK" save --no-repo --root "$root" --checkpoint work_dirs/exp1 -o lock5.json --json >summary5.json 2>err5
check_grep "a corrupt cache is named in a warning" "envlock: warning: '$XDG_CACHE_HOME/envlock/hashes': line 2 is corrupt" err5
check_eq "and everything is hashed" "$(jget lock4.json id)" "$(jget lock5.json id)"

# a file named twice, or through a folder and a glob, is recorded once
save --checkpoint work_dirs/exp1/epoch_1.pth --checkpoint "$work/work_dirs/exp1/epoch_1.pth" -o lock6.json
check_eq "one file named twice is recorded once" "1" "$(jget lock6.json checkpoints.count)"
check_eq "a path inside the current directory is shown relative to it" "work_dirs/exp1/epoch_1.pth" "$(jget lock6.json checkpoints.files.0.path)"

# bad input: one line each, exit 1, nothing written
rm -f bad.json
save --checkpoint missing.pth --checkpoint 'nothing*.pt' --checkpoint logs -o bad.json 2>err
check_status "bad --checkpoint arguments" 1 $?
check_grep "missing file named" "envlock: save: 'missing.pth': no such file or directory" err
check_grep "empty glob named" "envlock: save: 'nothing\*.pt': matches no file" err
check_grep "folder without weights named" "envlock: save: 'logs': no \*.pth, \*.pt, \*.ckpt, \*.safetensors or \*.bin files in it" err
check_grep "nothing written, said once" "envlock: save: nothing written" err
if [ -e bad.json ]; then not_ok "no lockfile written after an error"; else ok "no lockfile written after an error"; fi

# not a terminal: no progress bar on stderr
save --no-cache --checkpoint work_dirs/exp1 -o /dev/null 2>err7
check_eq "no progress output when stderr is not a terminal" "0" "$(wc -c <err7)"
