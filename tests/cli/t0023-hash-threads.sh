#!/bin/sh
# Checkpoints are hashed on one thread per core. OpenSSL 3 builds its table
# of algorithm names on the first fetch of a digest, and two threads doing
# that first fetch at once spun forever, or crashed: 2 runs in 400 of this
# very save hung or died with the static binary. SHA-256 is now fetched once
# per process (lib/util/hash.c), and the static binary's OpenSSL is built
# with threads (tools/static-deps.sh: Configure's -static meant no-threads,
# no locks and plain reference counts, and the drift of a big fleet
# crashed). The race is rare, so the save runs 500 times, each with a
# fresh process and the digest cache off.
. "$(dirname "$0")/lib.sh"

mkdir -p work_dirs/exp1
for i in 1 2 3 4; do head -c 200000 /dev/urandom >"work_dirs/exp1/epoch_$i.pth"; done
bad=0 hung=0
i=0
while [ "$i" -lt 500 ]; do
	timeout 10 "$ENVLOCK" save -q --no-repo --no-cache --root "$FIXTURES/no-nvidia" --checkpoint work_dirs/exp1 \
		--json -o /dev/null >/dev/null 2>&1
	rc=$?
	[ "$rc" = 124 ] && hung=$((hung + 1))
	[ "$rc" != 0 ] && bad=$((bad + 1))
	i=$((i + 1))
done
check_eq "500 saves hashing 4 checkpoints on several threads: none hangs" "0" "$hung"
check_eq "and none fails" "0" "$bad"
