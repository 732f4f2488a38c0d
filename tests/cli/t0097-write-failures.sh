#!/bin/sh
# Failing writes: every command that writes a file (save -o, report -o,
# export -o, sign -o, keygen -o, bundle -o, pack -o) onto a full disk (a
# small tmpfs, filled) and into a read-only folder (the tmpfs remounted
# read-only), and every command's stdout on /dev/full or closed (>&-).
# Each time: one line on stderr naming the file (or stdout) and the
# problem, a non-zero exit, the old file byte for byte as it was, and no
# temporary file left in the folder. Needs root and mount(2) for the tmpfs
# (skipped, saying why, without); /dev/full and >&- always run.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
good=$GOLDEN/ubuntu1604-mmdet.lock.json
root=$FIXTURES/ubuntu1604-mmdet
"$ENVLOCK" keygen -o k >/dev/null 2>&1 || not_ok "keygen for the signing cases"
shut=0
exec 3>/dev/null
mkdir wd && printf 'weights\n' >wd/w.pth && head -c 200000 /dev/urandom >wd/big.bin

# --- stdout on /dev/full and closed: main's final check, as git does, and the commands' own
# out_fails LABEL WHY COMMAND...: with its stdout on fd 3 (closed when shut=1), fails (non-zero) with exactly one
# line on stderr, matching WHY (an extended regular expression)
out_fails() {
	_label=$1 _why=$2
	shift 2
	if [ "$shut" = 1 ]; then "$@" >&- 2>err; else "$@" >&3 2>err; fi
	_rc=$?
	if [ "$_rc" -ne 0 ] && [ "$(wc -l <err | tr -d ' ')" = 1 ] && grep -Eq -- "$_why" err; then
		ok "$_label"
	else
		not_ok "$_label"
		echo "#   status $_rc, stderr:"
		sed 's/^/#   /' err
	fi
}
full='no space left on device'
closed='bad file descriptor'
for shape in full closed; do
	if [ $shape = full ]; then exec 3>/dev/full; shut=0; why=$full; else shut=1; why=$closed; fi
	out_fails "$shape stdout: save -o -" "^envlock: save: stdout: $why\$" "$ENVLOCK" save -q --root "$root" --no-cache -o -
	out_fails "$shape stdout: save --json" "^envlock: save: write error: $why\$" "$ENVLOCK" save -q --root "$root" --no-cache -o s.json --json
	out_fails "$shape stdout: show" "^envlock: show: write error: $why\$" "$ENVLOCK" show "$good"
	out_fails "$shape stdout: check" "^envlock: check: write error: $why\$" "$ENVLOCK" check "$good"
	out_fails "$shape stdout: check --json" "^envlock: check: write error: $why\$" "$ENVLOCK" check --json "$good"
	out_fails "$shape stdout: diff --json" "^envlock: diff: write error: $why\$" "$ENVLOCK" diff --json "$good" "$good"
	out_fails "$shape stdout: report" "^envlock: report: stdout: $why\$" "$ENVLOCK" report "$good"
	out_fails "$shape stdout: export" "^envlock: export: stdout: $why\$" "$ENVLOCK" export "$good" --format requirements
	out_fails "$shape stdout: sign -o -" "^envlock: sign: stdout: $why\$" "$ENVLOCK" sign "$good" --key k.key.pem -o -
	# an output longer than stdio's buffer (musl's is 1 KiB, glibc's 4 KiB) meets the error in the
	# command's own writes, which say it; a shorter one at main's final check
	out_fails "$shape stdout: ldd --json" "^envlock: (ldd: write error|write error on stdout): $why\$" "$ENVLOCK" ldd --json /bin/true
	# restore --dry-run exits 1 when there is work to do: a lost plan is an error all the same
	out_fails "$shape stdout: restore --dry-run (status 1 when it works) says so" "^envlock: write error on stdout: $why\$" \
		"$ENVLOCK" restore "$good" --dry-run
	if [ "$shut" = 1 ]; then "$ENVLOCK" restore "$good" --dry-run >&- 2>/dev/null; else "$ENVLOCK" restore "$good" --dry-run >&3 2>/dev/null; fi
	check_status "$shape stdout: restore --dry-run exits 2, not its 'work to do'" 2 $?
	out_fails "$shape stdout: restore --dry-run --json" "^envlock: (restore: writing the plan|write error on stdout): $why\$" \
		"$ENVLOCK" restore "$good" --dry-run --json
	out_fails "$shape stdout: --version" "^envlock: write error on stdout: $why\$" "$ENVLOCK" --version
	out_fails "$shape stdout: --help" "^envlock: write error on stdout: $why\$" "$ENVLOCK" --help
	out_fails "$shape stdout: a command's --help" "^envlock: write error on stdout: $why\$" "$ENVLOCK" import --help
done
exec 3>/dev/null
shut=0
out_fails "save -o /dev/full" "^envlock: save: '/dev/full': write failed: $full\$" "$ENVLOCK" save -q --root "$root" --no-cache -o /dev/full
out_fails "report -o /dev/full" "^envlock: report: '/dev/full': write failed: $full\$" "$ENVLOCK" report "$good" -o /dev/full
out_fails "sign -o /dev/full" "^envlock: sign: '/dev/full': write failed: $full\$" "$ENVLOCK" sign "$good" --key k.key.pem -o /dev/full

# --- a full disk and a read-only folder: a tmpfs of 1 MiB
mnt=$scratch/small
mkdir "$mnt"
trap 'umount "$mnt" 2>/dev/null; chmod -R u+rwX "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
if [ "$(id -u)" != 0 ]; then
	skip "the full-disk and read-only cases" "not root: mounting a small tmpfs needs root"
	exit 0
fi
if ! mount -t tmpfs -o size=1m,mode=0755 tmpfs "$mnt" 2>mount.err; then
	skip "the full-disk and read-only cases" "mount -t tmpfs failed here: $(head -n 1 mount.err)"
	exit 0
fi
# the old files each command must leave as they were
old() {
	cp "$good" "$mnt/old.lock.json"
	printf 'old report\n' >"$mnt/old.md"
	printf 'old requirements\n' >"$mnt/old.txt"
	printf 'old signature\n' >"$mnt/old.sig"
	printf 'old private key\n' >"$mnt/oldk.key.pem"
	printf 'old public key\n' >"$mnt/oldk.pub.pem"
	printf 'old bundle\n' >"$mnt/old.tar.zst"
	printf 'old kit\n' >"$mnt/kit.tar.zst"
}
old
sums() { (cd "$mnt" && ls -A | LC_ALL=C sort | while read -r f; do [ -f "$f" ] && [ "$f" != fill ] && echo "$f $(sha256sum <"$f" | cut -c1-16)"; done); }
sums >before.txt
# fill the disk: every byte taken, so the first block any write needs fails
dd if=/dev/zero of="$mnt/fill" bs=4096 2>/dev/null
check_eq "the tmpfs is full" 0 "$(df -k --output=avail "$mnt" | tail -n 1 | tr -d ' ')"

# fails_here LABEL WHY COMMAND...: out_fails, then every old file as it was and no new file
fails_here() {
	_l=$1
	out_fails "$@"
	sums >after.txt
	if cmp -s before.txt after.txt; then ok "$_l: the old files untouched, no temporary file left"; else
		not_ok "$_l: the old files untouched, no temporary file left"
		diff before.txt after.txt | sed 's/^/#   /'
	fi
}
for shape in full ro; do
	if [ $shape = ro ]; then
		rm -f "$mnt/fill"
		mount -o remount,ro "$mnt"
		why='read-only file system'
	else
		why=$full
	fi
	fails_here "$shape: save -o" "^envlock: save: '$mnt/old.lock.json': .*$why\$" \
		"$ENVLOCK" save -q --root "$root" --no-cache -o "$mnt/old.lock.json"
	fails_here "$shape: report -o" "^envlock: report: '$mnt/old.md': .*$why\$" "$ENVLOCK" report "$good" -o "$mnt/old.md"
	fails_here "$shape: export -o" "^envlock: export: '$mnt/old.txt': .*$why\$" \
		"$ENVLOCK" export "$good" --format requirements -o "$mnt/old.txt"
	fails_here "$shape: sign -o" "^envlock: sign: '$mnt/old.sig': .*$why\$" "$ENVLOCK" sign "$good" --key k.key.pem -o "$mnt/old.sig"
	fails_here "$shape: keygen --force over a key pair" "^envlock: keygen: '$mnt/oldk\.(key|pub)\.pem': .*$why\$" \
		"$ENVLOCK" keygen -o "$mnt/oldk" --force
	fails_here "$shape: bundle -o" "^envlock: bundle: '$mnt/old.tar.zst': .*$why\$" "$ENVLOCK" bundle wd -o "$mnt/old.tar.zst" --lock "$good"
	# the kit is staged in a folder beside it, kit.tar.zst.tmp-XXXXXX: the error names the kit, and what was staged
	fails_here "$shape: pack -o FILE" "^envlock: pack: '$mnt/kit\.tar\.zst': (staging [^:]*: )?[^']*$why\$" \
		"$ENVLOCK" pack "$good" -o "$mnt/kit.tar.zst" --force --add wd/big.bin
	fails_here "$shape: pack -o DIR" "^envlock: pack: '$mnt/kit': (staging [^:]*: )?[^']*$why\$" \
		"$ENVLOCK" pack "$good" -o "$mnt/kit" --add wd/big.bin
done
