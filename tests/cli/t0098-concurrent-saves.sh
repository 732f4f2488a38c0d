#!/bin/sh
# Concurrent saves: 8 saves at once, three rounds, sharing one digest cache
# ($XDG_CACHE_HOME/envlock/hashes) and writing the same lockfile, each with
# its own mix of 4 MiB checkpoints so their caches differ. Every save
# succeeds; the lockfile is always one whole lock with the id an
# undisturbed save gives; the cache is always a valid one (its magic line,
# every line whole, every digest the SHA-256 of the file it names by
# device and inode), whichever save wrote it last; no temporary file is
# left beside either; and a save after them reads the cache and gives the
# same id.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
root=$FIXTURES/ubuntu1604-mmdet
mkdir ck out
for i in 1 2 3 4 5 6 7 8; do head -c 4194304 /dev/urandom >ck/c$i.pth; done
all="--checkpoint ck/c1.pth --checkpoint ck/c2.pth --checkpoint ck/c3.pth --checkpoint ck/c4.pth"
all="$all --checkpoint ck/c5.pth --checkpoint ck/c6.pth --checkpoint ck/c7.pth --checkpoint ck/c8.pth"
# the reference: one save alone, with no cache
# shellcheck disable=SC2086
"$ENVLOCK" save -q --root "$root" --no-cache $all -o ref.lock.json
check_status "a save alone" 0 $?
ref=$(jget ref.lock.json id)

# cache_ok: "valid", or what is wrong with the cache
cache_ok() {
	"$PYTHON" - "$XDG_CACHE_HOME/envlock/hashes" "$root" ck <<'PY'
import hashlib, os, re, sys
path, *trees = sys.argv[1:]
known = {}
for t in trees:
    for d, _, fs in os.walk(t):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                st = os.stat(p)
                known[(st.st_dev, st.st_ino)] = p
try:
    lines = open(path, 'rb').read().split(b'\n')
except FileNotFoundError:
    sys.exit(print('no cache'))
if lines[0] != b'envlock-hashes 1' or lines[-1] != b'':
    sys.exit(print('no magic line, or a last line cut short'))
bad, checked = [], 0
for n, l in enumerate(lines[1:-1], 2):
    m = re.fullmatch(rb'(\d+) (\d+) (\d+) (-?\d+) (-?\d+) ([0-9a-f]{64})', l)
    if not m:
        bad.append('line %d torn: %r' % (n, l[:60]))
        continue
    p = known.get((int(m[1]), int(m[2])))
    if p:
        checked += 1
        if hashlib.sha256(open(p, 'rb').read()).hexdigest().encode() != m[6]:
            bad.append('line %d: a wrong digest for %s' % (n, p))
print('; '.join(bad[:5]) if bad else 'valid' if checked else 'no entry for any file')
PY
}

for round in 1 2 3; do
	pids=
	for i in 1 2 3 4 5 6 7 8; do
		# each save hashes half the checkpoints first: its cache differs from the others'
		j=$(( (i % 8) + 1 )) k=$(( ((i + 3) % 8) + 1 ))
		# shellcheck disable=SC2086
		"$ENVLOCK" save -q --root "$root" --checkpoint ck/c$j.pth --checkpoint ck/c$k.pth -o out/s$i.lock.json \
			>/dev/null 2>"err$i" &
		pids="$pids $!"
	done
	failed=0
	for p in $pids; do wait "$p" || failed=$((failed + 1)); done
	check_eq "round $round: 8 saves with their own checkpoints into one cache, all succeed" 0 "$failed"
	check_eq "round $round: the cache is valid" valid "$(cache_ok)"
	pids=
	for i in 1 2 3 4 5 6 7 8; do
		# shellcheck disable=SC2086
		"$ENVLOCK" save -q --root "$root" $all -o out/same.lock.json >/dev/null 2>"err$i" &
		pids="$pids $!"
	done
	failed=0
	for p in $pids; do wait "$p" || failed=$((failed + 1)); done
	check_eq "round $round: 8 saves into the same lockfile, all succeed" 0 "$failed"
	check_eq "round $round: the lockfile is one whole lock, the id of a save alone" "$ref" "$(jget out/same.lock.json id)"
	check_eq "round $round: the cache is still valid" valid "$(cache_ok)"
	check_eq "round $round: no temporary file beside the lockfiles or the cache" "" \
		"$(ls -A out "$XDG_CACHE_HOME/envlock" | grep '^\.')"
done
# shellcheck disable=SC2086
"$ENVLOCK" save --root "$root" $all -o after.lock.json --json >after.json 2>err
check_status "a save after them" 0 $?
check_eq "it reads every checkpoint's digest from the cache" "8" \
	"$("$PYTHON" -c 'import json,sys; print(min(json.load(open(sys.argv[1]))["hashed"]["cached"], 8))' after.json)"
check_eq "and gives the same id" "$ref" "$(jget after.lock.json id)"
