#!/bin/sh
# envlock restore clones over HTTPS from a real git server on loopback (git
# http-backend behind TLS, tests/restore/https_git.py) with a CA made here:
# SSL_CERT_FILE names the CA and the clone succeeds; the machine's own
# bundle does not hold it and the certificate is refused; an SSL_CERT_FILE
# that cannot be read is named in the error. The static binary, alone in a
# chroot with no CA certificates at all, says there are none and how to
# give them.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_CONFIG_NOSYSTEM=1
unset SSL_CERT_FILE SSL_CERT_DIR

# a CA and a server certificate for localhost (P-256: every TLS library libgit2 may use takes it)
ec() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "$@" 2>>openssl.err; }
ec -x509 -keyout ca.key -out ca.pem -days 2 -subj /CN=envlock-test-ca &&
	ec -keyout server.key -out server.csr -subj /CN=localhost &&
	printf 'subjectAltName=DNS:localhost\n' >ext &&
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
		-extfile ext 2>>openssl.err
check_status "a CA and a server certificate" 0 $?

git init -q --bare -b main repos/proj.git
git init -q -b main w && printf 'lr = 0.02\n' >w/train.py && git -C w add train.py && git -C w commit -qm one &&
	git -C w push -q "$scratch/repos/proj.git" main
commit=$(git -C w rev-parse HEAD)

"$PYTHON" "$top/tests/restore/https_git.py" "$scratch/repos" "$scratch" port 2>server.err &
server=$!
trap 'kill $server 2>/dev/null; chmod -R u+rwX "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
for _ in $(seq 50); do [ -s port ] && break; sleep 0.1; done
url="https://localhost:$(cat port)/git/proj.git"
GIT_SSL_CAINFO=ca.pem git clone -q "$url" proj 2>git.err
check_status "git itself clones from the server with the CA" 0 $?
"$ENVLOCK" save --repo proj -o P.lock 2>/dev/null
check_eq "the lock records the https remote" "$url" "$(jget P.lock repos.repositories.0.remotes.0.url)"

# restore_into DIR [VAR=VALUE]...: restore only the repos step into DIR; its log's failure line in DIR.why
restore_into() {
	d=$1
	shift
	mkdir "$d"
	env "$@" "$ENVLOCK" restore P.lock --dest "$d" --only repos --state-dir "$d.state" --yes >"$d.out" 2>"$d.err"
	rc=$?
	sed -n 's/.*repos: failed: //p' "$d.state"/*.log >"$d.why" 2>/dev/null
	return $rc
}

restore_into A SSL_CERT_FILE="$scratch/ca.pem"
check_status "clone with SSL_CERT_FILE naming the CA" 0 $?
check_eq "checked out at the locked commit" "$commit" "$(git -C A/proj rev-parse HEAD 2>/dev/null)"

restore_into B
check_status "the machine's own CA bundle does not hold the test CA" 1 $?
check_grep "the certificate is refused" "clone of '$url': .*certificate" B.why
check_eq "nothing was cloned" "" "$(ls B)"

restore_into C SSL_CERT_FILE="$scratch/no-such.pem"
check_status "SSL_CERT_FILE that does not exist" 1 $?
check_grep "the error names it" "SSL_CERT_FILE '$scratch/no-such.pem' is not a readable file" C.why

restore_into E SSL_CERT_DIR="$scratch/no-such-dir"
check_status "SSL_CERT_DIR that does not exist" 1 $?
check_grep "the error names it" "SSL_CERT_DIR '$scratch/no-such-dir' is not a folder" E.why

# the static binary alone in a chroot: no /etc/ssl at all (only /etc/hosts, which musl's resolver needs)
if ! readelf -lW "$ENVLOCK" 2>/dev/null | grep -q 'Requesting program interpreter' && [ "$(id -u)" = 0 ]; then
	jail=$scratch/jail
	mkdir -p "$jail/etc" "$jail/dest"
	cp "$ENVLOCK" "$jail/envlock"
	cp P.lock "$jail/"
	printf '127.0.0.1 localhost\n' >"$jail/etc/hosts"
	env -i "$(command -v chroot || echo /usr/sbin/chroot)" "$jail" /envlock restore /P.lock --dest /dest --only repos \
		--state-dir /state --yes >jail.out 2>&1
	check_status "the static binary in a chroot with no CA certificates" 1 $?
	check_grep "it says there are none, and what to do" \
		"no CA certificates were found (SSL_CERT_FILE, SSL_CERT_DIR, /etc/ssl/certs/ca-certificates.crt, .*set SSL_CERT_FILE to a PEM bundle" \
		"$jail/state/$(ls "$jail/state" | grep '\.log$' | head -n 1)"
	cp ca.pem "$jail/ca.pem"
	env -i SSL_CERT_FILE=/ca.pem "$(command -v chroot || echo /usr/sbin/chroot)" "$jail" /envlock restore /P.lock \
		--dest /dest --only repos --state-dir /state2 --yes >jail.out 2>&1
	check_status "and clones once SSL_CERT_FILE names the CA" 0 $?
	check_eq "at the locked commit" "$commit" "$(git -C "$jail/dest/proj" rev-parse HEAD 2>/dev/null)"
else
	skip "the static binary in a chroot with no CA certificates" "'$ENVLOCK' is not the static binary run as root (make check-static)"
fi
