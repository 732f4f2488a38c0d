#!/bin/sh
# The static binary (make static) where nothing else is: no interpreter and
# no needed library (readelf); copied alone into an empty directory beside a
# fixture root and run there by chroot with an empty environment (but for
# COLUMNS, the width the suite prints at), each
# command's output and files equal the dynamic build's for the same input;
# and on Linux 3.10's system calls (a seccomp filter makes every later one
# fail with ENOSYS, as that kernel does), it still saves, bundles and signs.
. "$(dirname "$0")/lib.sh"

STATIC=${ENVLOCK_STATIC_BIN:-$top/build/static/envlock}
DYNAMIC=${ENVLOCK_DYNAMIC_BIN:-$top/build/envlock}
if [ ! -x "$STATIC" ]; then
	skip "static binary" "'$STATIC' is not built (make static)"
	exit 0
fi
if [ ! -x "$DYNAMIC" ]; then
	skip "static binary" "'$DYNAMIC' is not built (make)"
	exit 0
fi
# a static binary from older sources would be compared with today's dynamic one: say so, not a diff
newer=$(find "$top/lib" "$top/cmd" "$top/include" "$top/rules" "$top/schemas" "$top/data" -type f -newer "$STATIC" 2>/dev/null | head -n 1)
if [ -n "$newer" ]; then
	skip "static binary" "'$STATIC' is older than ${newer#"$top"/} (make static)"
	exit 0
fi

cd "$scratch" || exit 1
readelf -lW "$STATIC" >phdrs 2>&1
readelf -dW "$STATIC" >dyn 2>&1
check_eq "no PT_INTERP: the kernel runs it without any ld.so" "0" "$(grep -c INTERP phdrs)"
check_eq "no DT_NEEDED: it needs no shared library" "0" "$(grep -c '(NEEDED)' dyn)"
check_eq "no dlopen in it: a static binary cannot load host libraries" "" \
	"$(nm "$STATIC" 2>/dev/null | awk '$3 == "dlopen" && $2 ~ /[TtWw]/' )"
"$STATIC" --version >ver
check_grep "--version names the Debian sources it was built from" "static x86_64 musl build from Debian sources: musl .*, openssl .*, libgit2 " ver

if [ "$(id -u)" != 0 ] || ! command -v chroot >/dev/null 2>&1 && [ ! -x /usr/sbin/chroot ]; then
	skip "the static binary in an empty chroot" "chroot needs root (uid $(id -u))"
else
	CHROOT=$(command -v chroot || echo /usr/sbin/chroot)
	jail=$scratch/jail
	mkdir -p "$jail/wd/exp1"
	cp "$STATIC" "$jail/envlock"
	cp -a "$FIXTURES/ubuntu1604-mmdet" "$jail/box"
	cp -a "$FIXTURES/no-nvidia" "$jail/box2"
	printf 'lr = 0.02\n' >"$jail/wd/exp1/cfg.py"
	head -c 300000 /dev/urandom >"$jail/wd/exp1/epoch_1.pth"
	check_eq "the jail holds only the binary and the data" "box box2 envlock wd" "$(ls "$jail" | tr '\n' ' ' | sed 's/ $//')"

	# in: the static binary in the chroot, env -i but for the width the suite prints at
	# (COLUMNS, which lib.sh sets); out: the dynamic one in the same folder
	jailed() { env -i COLUMNS="$COLUMNS" "$CHROOT" "$jail" /envlock "$@"; }
	host() { (cd "$jail" && "$DYNAMIC" "$@"); }
	# same WHAT ARGS...: both give the same stdout and exit status
	same() {
		what=$1
		shift
		jailed "$@" >"$scratch/in.out" 2>"$scratch/in.err"
		irc=$?
		host "$@" >"$scratch/out.out" 2>"$scratch/out.err"
		orc=$?
		check_eq "$what: same exit status in the chroot" "$orc" "$irc"
		check_diff "$what: same output in the chroot" "$scratch/out.out" "$scratch/in.out"
	}

	jailed save --root /box -o /a.lock.json 2>err
	check_status "save --root in the empty chroot" 0 $?
	host save --root box -o b.lock.json 2>/dev/null
	"$PYTHON" - "$jail/a.lock.json" "$jail/b.lock.json" >lockdiff <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for k in sorted(set(a) | set(b)):
    if k != "created" and a.get(k) != b.get(k):
        print(k)
PY
	check_eq "the lock it writes equals the dynamic build's (except created)" "" "$(cat lockdiff)"
	check_eq "and so do their ids" "$(jget "$jail/b.lock.json" id)" "$(jget "$jail/a.lock.json" id)"
	if validate "$jail/a.lock.json" >v 2>&1; then ok "the chroot's lock validates against the schema"; else not_ok "the chroot's lock validates against the schema"; cat v; fi
	jailed save --root /box2 -o /c.lock.json 2>/dev/null

	same "show" show a.lock.json
	same "check" check a.lock.json
	same "check --json" check --json c.lock.json
	same "diff of two machines" diff a.lock.json c.lock.json
	same "diff --json" diff --json a.lock.json c.lock.json
	for f in conda-explicit requirements environment-yml dockerfile; do
		same "export --format $f" export -q a.lock.json --format "$f"
	done

	jailed bundle -q wd/exp1 --lock a.lock.json -o in.tar.zst >/dev/null 2>err
	check_status "bundle in the chroot" 0 $?
	host bundle -q wd/exp1 --lock a.lock.json -o out.tar.zst >/dev/null 2>&1
	if cmp -s "$jail/in.tar.zst" "$jail/out.tar.zst"; then ok "the bundle is byte for byte the dynamic build's"; else not_ok "the bundle is byte for byte the dynamic build's"; fi
	same "bundle verify" bundle verify in.tar.zst
	same "bundle list" bundle list in.tar.zst

	jailed keygen -o k >/dev/null 2>err
	check_status "keygen in the chroot (random numbers without /dev)" 0 $?
	jailed sign a.lock.json --key k.key.pem -o in.sig >/dev/null 2>&1
	check_status "sign in the chroot" 0 $?
	host sign a.lock.json --key k.key.pem -o out.sig >/dev/null 2>&1
	check_eq "Ed25519 is deterministic: the same signature file as the dynamic build's" \
		"$(jget "$jail/out.sig" signature)" "$(jget "$jail/in.sig" signature)"
	same "verify-sig of the chroot's signature" verify-sig a.lock.json --pub k.pub.pem --sig in.sig
	check_eq "verify-sig says ok" "0" "$(host verify-sig a.lock.json --pub k.pub.pem --sig in.sig >/dev/null 2>&1; echo $?)"
fi

# Linux 3.10's system calls only
if ! cc -o kernel310 "$top/tests/static/kernel310.c" 2>cc.err; then
	skip "on Linux 3.10's system calls" "the seccomp harness does not build: $(head -n 1 cc.err)"
	exit 0
fi
./kernel310 "$PYTHON" -c 'import os; os.getrandom(1)' >/dev/null 2>gr.err
check_eq "the harness works: getrandom (3.17) fails with ENOSYS under it" "1" \
	"$(grep -c 'Function not implemented' gr.err)"
./kernel310 "$STATIC" save --root "$FIXTURES/ubuntu1604-mmdet" -o k.lock.json 2>err
check_status "save on 3.10's system calls" 0 $?
"$DYNAMIC" save --root "$FIXTURES/ubuntu1604-mmdet" -o d.lock.json 2>/dev/null
check_eq "the same lock id as the dynamic build's" "$(jget d.lock.json id)" "$(jget k.lock.json id)"
mkdir -p wd && head -c 3000000 /dev/urandom >wd/big.pth && printf 'x\n' >wd/a.py
./kernel310 "$STATIC" bundle -q wd --lock k.lock.json -o k.tar.zst >/dev/null 2>err
check_status "bundle on 3.10's system calls (threads, zstd workers)" 0 $?
"$DYNAMIC" bundle -q wd --lock k.lock.json -o d.tar.zst >/dev/null 2>&1
if cmp -s k.tar.zst d.tar.zst; then ok "the same bundle bytes"; else not_ok "the same bundle bytes"; fi
./kernel310 "$STATIC" bundle verify k.tar.zst >out 2>&1
check_status "bundle verify on 3.10's system calls" 0 $?
./kernel310 "$STATIC" keygen -o old >/dev/null 2>err
check_status "keygen on 3.10's system calls (no getrandom: /dev/urandom)" 0 $?
./kernel310 "$STATIC" sign k.lock.json --key old.key.pem -o k.sig >/dev/null 2>&1 &&
	"$DYNAMIC" verify-sig k.lock.json --pub old.pub.pem --sig k.sig >/dev/null 2>&1
check_status "its signature verifies" 0 $?

# the machine's openssl.cnf is another OpenSSL's: envlock never reads it
printf 'openssl_conf = init\n[init]\nproviders = provs\n[provs]\nfips = fips_sect\n[fips_sect]\nmodule = /nonexistent/fips.so\nactivate = 1\n' >bad.cnf
OPENSSL_CONF=$scratch/bad.cnf "$STATIC" keygen -o cnf >/dev/null 2>err
check_status "keygen with an openssl.cnf naming a module it cannot load" 0 $?
OPENSSL_CONF=$scratch/bad.cnf "$STATIC" sign k.lock.json --key cnf.key.pem -o cnf.sig >/dev/null 2>&1
check_status "sign too" 0 $?
