#!/bin/sh
# Every fixture root round-trips to its golden lockfile and summary; every
# lockfile validates against the schema. UPDATE_GOLDEN=1 rewrites the
# golden files from the current output (review the diff before committing).
. "$(dirname "$0")/lib.sh"

# The broken root holds a file with mode 000: only a non-root user sees
# "permission denied", so as root that root is saved as user nobody.
as_user() {
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$HOME" XDG_CACHE_HOME="$XDG_CACHE_HOME/nobody" "$@"
	else
		"$@"
	fi
}

chmod 755 "$scratch"
mkdir -p "$XDG_CACHE_HOME" && chmod 777 "$XDG_CACHE_HOME" "$HOME"

for root in ubuntu1604-mmdet mmpose-container cuda92-cudnn7 no-nvidia broken; do
	dir=$FIXTURES/$root
	if [ ! -d "$dir" ]; then
		not_ok "$root: fixture root missing (run make fixtures)"
		continue
	fi
	out=$scratch/$root.lock.json
	runner=
	[ "$root" = broken ] && runner=as_user
	if [ "$root" = broken ] && [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$dir/etc/hostname" -a -x "$ENVLOCK"; then
		skip "$root: saved as an unprivileged user" "user nobody cannot read $dir"
		continue
	fi
	SOURCE_DATE_EPOCH=0 $runner "$ENVLOCK" save --root "$dir" -o - >"$out" 2>"$scratch/$root.stderr"
	check_status "$root: save" 0 $?
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$out" "$GOLDEN/$root.lock.json"
		"$ENVLOCK" show "$out" >"$GOLDEN/$root.show.txt"
	fi
	check_diff "$root: lockfile matches tests/golden/$root.lock.json" "$GOLDEN/$root.lock.json" "$out"
	if validate "$out" >"$scratch/validate.out" 2>&1; then
		ok "$root: lockfile is valid against the schema"
	else
		not_ok "$root: lockfile is valid against the schema"
		sed 's/^/#   /' "$scratch/validate.out"
	fi
	"$ENVLOCK" show "$out" >"$scratch/$root.show.txt"
	check_status "$root: show" 0 $?
	check_diff "$root: show matches tests/golden/$root.show.txt" "$GOLDEN/$root.show.txt" "$scratch/$root.show.txt"
	# every warning in the lock was also printed on stderr, one line each
	check_eq "$root: warnings on stderr = warnings in the lock" \
		"$(jget "$out" warnings | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)))')" \
		"$(grep -c '^envlock: warning: ' "$scratch/$root.stderr")"
done

# The acceptance line: the 16.04 box, saved and shown
show=$scratch/ubuntu1604-mmdet.show.txt
for want in "CUDA        10.2.89" "cuDNN       8.2.1" "driver      450.142.00" "gcc         5.4.0" \
	"glibc       2.23" "torch       1.10.0+cu102" "mmcv-full   1.7.5 (ops)" "mmdet       2.25.1"; do
	check_grep "16.04 box shows '$want'" "$want" "$show"
done

# Same state, same bytes; created is the only field that moves, and the id ignores it
a=$scratch/a.json b=$scratch/b.json
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q --root "$FIXTURES/mmpose-container" -o "$a"
SOURCE_DATE_EPOCH=86400 "$ENVLOCK" save -q --root "$FIXTURES/mmpose-container" -o "$b"
check_eq "created follows SOURCE_DATE_EPOCH" "1970-01-02T00:00:00Z" "$(jget "$b" created)"
check_eq "the id does not depend on created" "$(jget "$a" id)" "$(jget "$b" id)"
check_eq "only created differs" "1" "$(diff "$a" "$b" | grep -c '^<')"
check_eq "keys sorted, 2-space indent, final newline" "ok" "$("$PYTHON" - "$a" <<'PY'
import json, sys
raw = open(sys.argv[1], 'rb').read()
doc = json.loads(raw)
print('ok' if raw == (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + '\n').encode() else 'differs')
PY
)"
check_eq "id is sha256 of the compact sorted form without id and created" "$(jget "$a" id)" "$("$PYTHON" - "$a" <<'PY'
import hashlib, json, sys
doc = json.load(open(sys.argv[1]))
del doc['id'], doc['created']
canon = json.dumps(doc, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode()
print('sha256:' + hashlib.sha256(canon).hexdigest())
PY
)"
