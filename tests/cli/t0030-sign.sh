#!/bin/sh
# envlock keygen, sign, verify-sig: key files and modes, valid and broken
# signatures, what a lock's signature covers (the whole document: created
# and verify too), old signatures, hostile inputs, and interop with the
# openssl CLI both ways.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
cp "$GOLDEN/ubuntu1604-mmdet.lock.json" lock.json

# keygen: a private key nobody else can read, even with an open umask
(umask 000 && "$ENVLOCK" keygen -o alice >out 2>err)
check_status "keygen" 0 $?
check_eq "private key mode 0600 under umask 000" "600" "$(stat -c %a alice.key.pem)"
check_eq "public key mode 0644" "644" "$(stat -c %a alice.pub.pem)"
check_eq "openssl reads the private key as ED25519" "ED25519 Private-Key:" \
	"$(openssl pkey -in alice.key.pem -noout -text 2>/dev/null | head -n 1 | sed 's/ *$//')"
fp=$(openssl pkey -pubin -in alice.pub.pem -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)
check_eq "fingerprint = sha256 of the raw 32-byte public key (openssl's DER, last 32 bytes)" \
	"fingerprint sha256:$fp" "$(grep fingerprint out)"
cp alice.key.pem before.pem
"$ENVLOCK" keygen -o alice >out 2>err
check_status "keygen over an existing pair" 1 $?
check_eq "it says why" "envlock: keygen: 'alice.key.pem' already exists; --force replaces the key pair" "$(cat err)"
if cmp -s before.pem alice.key.pem; then ok "the existing private key is untouched"; else not_ok "the existing private key is untouched"; fi
ln -s nowhere bob.pub.pem
"$ENVLOCK" keygen -o bob >out 2>err
check_status "keygen onto a dangling symlink" 1 $?
check_eq "no private key is left behind when the public name is taken" "no" "$(test -e bob.key.pem && echo yes || echo no)"
# a private key alone, what a keygen killed between its two files leaves: the rerun completes the pair
"$ENVLOCK" keygen -o carol >/dev/null 2>&1 && cp carol.key.pem carol-before.pem && rm carol.pub.pem
"$ENVLOCK" keygen -o carol >out 2>err
check_status "keygen where only the private key is completes the pair" 0 $?
check_eq "saying so" "envlock: keygen: 'carol.key.pem' had no public key beside it (a keygen cut short): wrote its public key, 'carol.pub.pem'" "$(cat err)"
check_eq "the public key is the private key's" "$(openssl pkey -in carol.key.pem -pubout)" "$(cat carol.pub.pem)"
if cmp -s carol-before.pem carol.key.pem; then ok "the private key is untouched"; else not_ok "the private key is untouched"; fi
printf 'not a key\n' >dave.key.pem
"$ENVLOCK" keygen -o dave >out 2>err
check_status "a file there that is not a private key is refused as before" 1 $?
check_eq "no public key is made for it" "no" "$(test -e dave.pub.pem && echo yes || echo no)"
"$ENVLOCK" keygen -o alice --force >/dev/null 2>&1
check_status "keygen --force" 0 $?
if cmp -s before.pem alice.key.pem; then not_ok "--force made a new key"; else ok "--force made a new key"; fi
check_eq "--force keeps mode 0600" "600" "$(stat -c %a alice.key.pem)"
"$ENVLOCK" keygen -o mallory >/dev/null 2>&1

# sign and verify
"$ENVLOCK" sign lock.json --key alice.key.pem >out 2>err
check_status "sign" 0 $?
check_eq "sign names the lock it signed" "signed $(jget lock.json id)" "$(head -n 1 out)"
check_eq "and what the signature covers" "covers the whole lock: created $(jget lock.json created), no verify section" \
	"$(sed -n 2p out)"
check_eq "the signature file records it" "2 document $(jget lock.json created)" \
	"$(jget lock.json.sig envlock_signature) $(jget lock.json.sig covers) $(jget lock.json.sig created)"
check_grep "and that the lock had no verify section" '^  "verify": null$' lock.json.sig
if "$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.sig.schema.json" lock.json.sig >v 2>&1; then
	ok "the signature file is valid against its schema"
else
	not_ok "the signature file is valid against its schema"; sed 's/^/#   /' v
fi
"$ENVLOCK" verify-sig lock.json --pub alice.pub.pem >out 2>err
check_status "verify-sig of the signed lock" 0 $?
alice=sha256:$(openssl pkey -pubin -in alice.pub.pem -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)
check_eq "verify-sig says which lock, date and key, and that no verify section was signed" \
	"ok: $(jget lock.json id) (created $(jget lock.json created), no verify section) is signed by key $alice" "$(cat out)"

# re-indented, keys reordered, unicode escaped: the same canonical form
"$PYTHON" -c 'import json,sys; d=json.load(open("lock.json")); d=dict(reversed(list(d.items()))); json.dump(d, open("reindented.json","w"), indent=7, ensure_ascii=True)'
cp lock.json.sig reindented.json.sig
"$ENVLOCK" verify-sig reindented.json --pub alice.pub.pem >/dev/null 2>err
check_status "re-indented, reordered lock still verifies" 0 $?

# one changed value
sed '0,/"version": "2.25.1"/s//"version": "2.25.2"/' lock.json >changed.json
check_eq "the change is one line" "1" "$(diff lock.json changed.json | grep -c '^>')"
cp lock.json.sig changed.json.sig
"$ENVLOCK" verify-sig changed.json --pub alice.pub.pem >out 2>err
check_status "a changed value fails" 1 $?
check_grep "it says the content changed" "the signature is for lock $(jget lock.json id); this lock's content is sha256:" err
# a changed "id" line: not covered by the signature, but it is what a paper cites
"$PYTHON" -c 'import json; d=json.load(open("lock.json")); d["id"]="sha256:"+"0"*64; json.dump(d, open("idedit.json","w"), indent=2)'
cp lock.json.sig idedit.json.sig
"$ENVLOCK" verify-sig idedit.json --pub alice.pub.pem >out 2>err
check_status "an edited id fails" 1 $?
check_grep "it says the recorded id is wrong" "the lock records id sha256:0000" err
# the wrong key
"$ENVLOCK" verify-sig lock.json --pub mallory.pub.pem >out 2>err
check_status "another key fails" 1 $?
check_grep "it says another key signed" "signed by another key" err
# a flipped signature byte, with the file otherwise well-formed
"$PYTHON" - lock.json.sig flipped.sig <<'PY'
import base64, json, sys
s = json.load(open(sys.argv[1])); raw = bytearray(base64.b64decode(s["signature"])); raw[10] ^= 1
s["signature"] = base64.b64encode(bytes(raw)).decode(); json.dump(s, open(sys.argv[2], "w"))
PY
"$ENVLOCK" verify-sig lock.json --sig flipped.sig --pub alice.pub.pem >out 2>err
check_status "a flipped signature bit fails" 1 $?
check_grep "it says the signature does not match" "the signature does not match this lock's content and key" err

# what a paper cites besides the environment: the date and the verify result are signed too
"$PYTHON" - lock.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stages = [{"stage": s, "status": "pass", "reason": "passed", "figures": {"seconds": 0.125, "max_deviation": 1.5e-07}}
          for s in ("toolchain", "runtime", "training", "cudnn", "lock")]
v = {"envlock_verify": 1, "result": "pass", "exit_status": 0, "steps": 200, "stages": stages}
def put(name, doc):
    json.dump(doc, open(name, "w"), indent=2)
put("added.json", dict(d, verify=v))
put("backdated.json", dict(d, created="2019-06-01T00:00:00Z"))
put("verified.json", dict(d, verify=v))
PY
for f in added backdated; do cp lock.json.sig $f.json.sig; done
"$ENVLOCK" verify-sig added.json --pub alice.pub.pem >out 2>err
check_status "a verify section added after signing fails" 1 $?
check_eq "it says so, with the result added" \
	"envlock: verify-sig: 'added.json': a verify section was added after signing: the signature covers none, this lock's says pass" "$(cat err)"
"$ENVLOCK" verify-sig backdated.json --pub alice.pub.pem >out 2>err
check_status "a backdated created fails" 1 $?
check_eq "it names both dates" \
	"envlock: verify-sig: 'backdated.json': \"created\" changed after signing: the signature covers $(jget lock.json created), this lock says 2019-06-01T00:00:00Z" "$(cat err)"
check_eq "neither edit changes the lock id (a measurement and a date, not the environment)" \
	"$(jget lock.json id) $(jget lock.json id)" "$("$ENVLOCK" show added.json 2>/dev/null | sed -n '1s/^envlock //p') $("$ENVLOCK" show backdated.json 2>/dev/null | sed -n '1s/^envlock //p')"
"$ENVLOCK" sign verified.json --key alice.key.pem >out 2>err
check_status "sign a lock with a verify section" 0 $?
check_eq "sign says the verify result is covered" "covers the whole lock: created $(jget verified.json created), verify: pass" "$(sed -n 2p out)"
check_eq "the signature file records the result and the section's digest" "pass sha256:" \
	"$(jget verified.json.sig verify.result) $(jget verified.json.sig verify.sha256 | cut -c1-7)"
if "$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.sig.schema.json" verified.json.sig >v 2>&1; then
	ok "that signature file is valid against the schema"
else
	not_ok "that signature file is valid against the schema"; sed 's/^/#   /' v
fi
"$ENVLOCK" verify-sig verified.json --pub alice.pub.pem >out 2>err
check_status "verify-sig of the verified lock" 0 $?
check_eq "it says the verify result was signed" \
	"ok: $(jget verified.json id) (created $(jget verified.json created), verify: pass) is signed by key $alice" "$(cat out)"
"$PYTHON" -c 'import json; d=json.load(open("verified.json")); d=dict(reversed(list(d.items()))); json.dump(d, open("verified2.json","w"), indent=5, ensure_ascii=True)'
cp verified.json.sig verified2.json.sig
"$ENVLOCK" verify-sig verified2.json --pub alice.pub.pem >/dev/null 2>err
check_status "re-indented and reordered, with its verify section, it still verifies" 0 $?
"$PYTHON" - verified.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
json.dump(dict(d, verify=dict(d["verify"], result="fail", exit_status=1)), open("result.json", "w"), indent=2)
stages = [dict(s) for s in d["verify"]["stages"]]
stages[2] = dict(stages[2], figures={"seconds": 0.125, "max_deviation": 0.5})
json.dump(dict(d, verify=dict(d["verify"], stages=stages)), open("figures.json", "w"), indent=2)
del d["verify"]
json.dump(d, open("removed.json", "w"), indent=2)
PY
for f in result figures removed; do cp verified.json.sig $f.json.sig; done
"$ENVLOCK" verify-sig result.json --pub alice.pub.pem >out 2>err
check_status "a verify result changed after signing fails" 1 $?
check_eq "it names both results" \
	"envlock: verify-sig: 'result.json': the verify result changed after signing: the signature covers pass, this lock says fail" "$(cat err)"
"$ENVLOCK" verify-sig figures.json --pub alice.pub.pem >out 2>err
check_status "a verify figure changed after signing fails" 1 $?
check_eq "it says the section changed, not its result" \
	"envlock: verify-sig: 'figures.json': the verify section changed after signing (its result, pass, did not)" "$(cat err)"
"$ENVLOCK" verify-sig removed.json --pub alice.pub.pem >out 2>err
check_status "a verify section removed after signing fails" 1 $?
check_grep "it says so" "the verify section was removed after signing: the signature covers one that says pass" err
# the signature file's own record edited (the lock is as signed): said as such
sed 's/"result": "pass"/"result": "fail"/' verified.json.sig >recedit.sig
"$ENVLOCK" verify-sig verified.json --sig recedit.sig --pub alice.pub.pem >out 2>err
check_status "a signature file whose record of the verify result was edited fails" 1 $?
check_grep "it says the signature file was edited" "the signature file records created .* and verify result fail, but the signed lock has .* and pass: the signature file was edited" err

# an old signature (format 1, over the lock id's form: neither created nor verify) is refused, saying why
"$PYTHON" - lock.json idform.bin <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d.pop("id"); d.pop("created")
open(sys.argv[2], "wb").write(json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
PY
if openssl pkeyutl -help 2>&1 | grep -q -- -rawin; then
	openssl pkeyutl -sign -inkey alice.key.pem -rawin -in idform.bin -out old.bin 2>/dev/null
	"$PYTHON" - old.bin lock.json.sig old.sig <<'PY'
import base64, json, sys
s = json.load(open(sys.argv[2]))
old = {k: s[k] for k in ("algorithm", "lock_id", "public_key_sha256")}
old.update(envlock_signature=1, signature=base64.b64encode(open(sys.argv[1], "rb").read()).decode())
json.dump(old, open(sys.argv[3], "w"), indent=2)
PY
	if "$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.sig.schema.json" old.sig >v 2>&1; then
		ok "an old lock signature is still a valid signature file"
	else
		not_ok "an old lock signature is still a valid signature file"; sed 's/^/#   /' v
	fi
	"$ENVLOCK" verify-sig lock.json --sig old.sig --pub alice.pub.pem >out 2>err
	check_status "an old signature of an unchanged lock is refused" 1 $?
	check_eq "in one line: intact, but it covers neither created nor verify" \
		"envlock: verify-sig: 'lock.json': an old signature (envlock_signature 1): the lock's content is as signed, but it covers neither \"created\" nor \"verify\", so it is refused; the signer must sign the lock again" \
		"$(cat err)"
	check_eq "and prints no ok" "" "$(cat out)"
	"$ENVLOCK" verify-sig added.json --sig old.sig --pub alice.pub.pem >out 2>err
	check_status "an old signature of a lock given a verify section later" 1 $?
	check_grep "the same refusal" "covers neither \"created\" nor \"verify\", so it is refused" err
	"$ENVLOCK" verify-sig lock.json --sig old.sig --pub mallory.pub.pem >out 2>err
	check_status "an old signature checked with another key" 1 $?
	check_grep "says another key, not old form" "signed by another key" err
	"$PYTHON" - old.sig oldflip.sig <<'PY'
import base64, json, sys
s = json.load(open(sys.argv[1])); raw = bytearray(base64.b64decode(s["signature"])); raw[3] ^= 1
s["signature"] = base64.b64encode(bytes(raw)).decode(); json.dump(s, open(sys.argv[2], "w"))
PY
	"$ENVLOCK" verify-sig lock.json --sig oldflip.sig --pub alice.pub.pem >out 2>err
	check_status "a damaged old signature" 1 $?
	check_grep "says it does not match, not that it is intact" "the signature does not match this lock's content and key" err
else
	skip "old signatures" "this openssl has no -rawin (OpenSSL 3.0 added it)"
fi

# a lock whose recorded id is not its content's is not signed (its signature could never be checked)
"$PYTHON" -c 'import json; d=json.load(open("lock.json")); d["host"]["hostname"]="edited"; json.dump(d, open("stale.json","w"), indent=2)'
"$ENVLOCK" sign stale.json --key alice.key.pem >out 2>err
check_status "sign of a lock edited after it was saved" 2 $?
check_grep "one line naming the file: not signed" "^envlock: sign: 'stale.json': its recorded id $(jget lock.json id) is not the id of its content (sha256:[0-9a-f]*): not signed$" err
check_eq "no signature file" "no" "$(test -e stale.json.sig && echo yes || echo no)"
# a lock that fails its schema: one line naming it, exit 2, for both commands
"$PYTHON" -c 'import json; d=json.load(open("lock.json")); d["created"]="yesterday"; json.dump(d, open("invalid.json","w"), indent=2)'
cp lock.json.sig invalid.json.sig
"$ENVLOCK" sign invalid.json --key alice.key.pem >out 2>err
check_status "sign of a lock that fails its schema" 2 $?
check_eq "one line naming it" "1 yes" "$(wc -l <err | tr -d ' ') $(grep -q "^envlock: sign: 'invalid.json': not a valid lockfile: " err && echo yes || echo no)"
"$ENVLOCK" verify-sig invalid.json --pub alice.pub.pem >out 2>err
check_status "verify-sig of a lock that fails its schema" 2 $?
check_eq "one line naming it" "1 yes" "$(wc -l <err | tr -d ' ') $(grep -q "^envlock: verify-sig: 'invalid.json': not a valid lockfile: " err && echo yes || echo no)"

# malformed signature files: one clear line each, exit 2
bad_sig() { # WHAT CONTENT EXPECTED-MESSAGE
	printf '%s' "$2" >bad.sig
	"$ENVLOCK" verify-sig lock.json --sig bad.sig --pub alice.pub.pem >out 2>err
	check_status "$1" 2 $?
	check_eq "$1: message" "envlock: verify-sig: 'bad.sig': $3" "$(cat err)"
}
good=$(cat lock.json.sig)
bad_sig "not JSON" "not json" "not an envlock signature file: not a JSON object"
bad_sig "no format number" '{"algorithm": "ed25519"}' 'not an envlock signature file: no "envlock_signature" format number'
bad_sig "a future format" '{"envlock_signature": 3}' "signature format 3 is not supported (this envlock reads 1 and 2)"
bad_sig "covers something else" "$(echo "$good" | sed 's/"document"/"content"/')" "it covers 'content', which this envlock does not know (it signs the whole \"document\")"
bad_sig "no covers" "$(echo "$good" | sed '/"covers"/d')" 'not an envlock signature file: no "covers"'
bad_sig "a created that is not a time" "$(echo "$good" | sed 's/"created": "[^"]*"/"created": "yesterday"/')" 'not an envlock signature file: "created" is not a time like 2026-01-31T12:00:00Z'
bad_sig "no verify" "$(echo "$good" | sed '/"verify": null/d; s/\("signature": "[^"]*"\),$/\1/')" 'not an envlock signature file: no "verify" (null when the lock had no verify section)'
bad_sig "a verify that is a string" "$(echo "$good" | sed 's/"verify": null/"verify": "pass"/')" 'not an envlock signature file: "verify" is neither null nor an object'
bad_sig "a verify with another member" "$(echo "$good" | sed 's/"verify": null/"verify": {"result": "pass", "note": 1}/')" 'not an envlock signature file: unexpected member "note" in "verify"'
bad_sig "a verify with an unknown result" "$(echo "$good" | sed 's/"verify": null/"verify": {"result": "great", "sha256": "sha256:'"$(printf '%064d' 0)"'"}/')" 'not an envlock signature file: "verify" has no "result" of pass, fail or no-gpu'
bad_sig "a format 1 file with format 2 members" "$(echo "$good" | sed 's/"envlock_signature": 2/"envlock_signature": 1/')" 'not an envlock signature file: unexpected member "covers"'
bad_sig "another algorithm" "$(echo "$good" | sed 's/"ed25519"/"rsa-pss"/')" "algorithm 'rsa-pss' is not supported (envlock signs with ed25519)"
bad_sig "a short signature" "$(echo "$good" | sed 's/"signature": "..../"signature": "/')" 'not an envlock signature file: "signature" is not the base64 of a 64-byte Ed25519 signature'
bad_sig "a lock id that is not one" "$(echo "$good" | sed 's/"lock_id": "sha256:/"lock_id": "md5:/')" 'not an envlock signature file: "lock_id" is not "sha256:" and 64 hex digits'
bad_sig "an unexpected member" "$(echo "$good" | sed 's/"algorithm"/"comment": "x", "algorithm"/')" 'not an envlock signature file: unexpected member "comment"'
bad_sig "a member twice" "$(echo "$good" | sed 's/"algorithm"/"lock_id": "sha256:'"$(printf '%064d' 0)"'", "algorithm"/')" 'not an envlock signature file: "lock_id" appears twice'
head -c 2000000 /dev/zero | tr '\0' ' ' >big.sig
"$ENVLOCK" verify-sig lock.json --sig big.sig --pub alice.pub.pem >out 2>err
check_status "a 2 MB signature file" 2 $?
check_eq "it is refused by size" "envlock: verify-sig: 'big.sig': larger than 1 MiB, not a signature file" "$(cat err)"

# keys that are not what is expected, made by the real openssl
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem 2>/dev/null
"$ENVLOCK" sign lock.json --key rsa.pem -o x.sig >out 2>err
check_status "an RSA key" 1 $?
check_eq "it says RSA, and what to use" "envlock: sign: 'rsa.pem': an RSA key; envlock signs with Ed25519 keys (envlock keygen makes a pair)" "$(cat err)"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.pem 2>/dev/null
"$ENVLOCK" sign lock.json --key ec.pem -o x.sig >out 2>err
check_eq "an EC key is named too" "envlock: sign: 'ec.pem': an EC key; envlock signs with Ed25519 keys (envlock keygen makes a pair)" "$(cat err)"
openssl pkey -in rsa.pem -pubout -out rsa.pub.pem 2>/dev/null
"$ENVLOCK" verify-sig lock.json --pub rsa.pub.pem >out 2>err
check_status "an RSA public key to verify-sig" 2 $?
check_grep "verify-sig names it RSA" "'rsa.pub.pem': an RSA key" err
head -c 60 alice.key.pem >truncated.pem
"$ENVLOCK" sign lock.json --key truncated.pem -o x.sig >out 2>err
check_status "a truncated key" 1 $?
check_eq "it says truncated" "envlock: sign: 'truncated.pem': a truncated PEM file (no END line)" "$(cat err)"
openssl pkey -in alice.key.pem -aes256 -passout pass:secret -out encrypted.pem 2>/dev/null
"$ENVLOCK" sign lock.json --key encrypted.pem -o x.sig >out 2>err </dev/null
check_status "an encrypted key (no passphrase prompt)" 1 $?
check_eq "it says encrypted" "envlock: sign: 'encrypted.pem': an encrypted private key; envlock reads unencrypted PKCS#8 keys" "$(cat err)"
"$ENVLOCK" sign lock.json --key alice.pub.pem -o x.sig >out 2>err
check_eq "a public key to sign" "envlock: sign: 'alice.pub.pem': a public key; signing needs the private key (<prefix>.key.pem)" "$(cat err)"
"$ENVLOCK" verify-sig lock.json --pub alice.key.pem >out 2>err
check_eq "a private key to verify-sig" "envlock: verify-sig: 'alice.key.pem': a private key; verify-sig takes the public key (<prefix>.pub.pem)" "$(cat err)"
"$ENVLOCK" sign lock.json >out 2>err
check_status "sign without --key" 2 $?

# the id's form, rebuilt independently: Python's json, sorted, compact, without id, created (and verify)
"$PYTHON" - lock.json canon.bin <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d.pop("id"); d.pop("created")
open(sys.argv[2], "wb").write(json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
PY
check_eq "sha256 of Python's canonical bytes = the lock id" "$(jget lock.json id)" "sha256:$(sha256sum canon.bin | cut -d' ' -f1)"
# the signed bytes: the whole document, sorted, compact, as Python's json writes it and as --print-signed-bytes prints it
"$PYTHON" - verified.json whole.bin <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
open(sys.argv[2], "wb").write(json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
PY
"$ENVLOCK" sign verified2.json --print-signed-bytes >printed.bin 2>err
check_status "sign --print-signed-bytes" 0 $?
if cmp -s whole.bin printed.bin; then ok "--print-signed-bytes of the re-indented lock = Python's sorted compact dump of the whole document"
else not_ok "--print-signed-bytes of the re-indented lock = Python's sorted compact dump of the whole document"; cmp whole.bin printed.bin | sed 's/^/#   /'; fi
check_grep "those bytes hold created and verify" '"created":"[^"]*".*"id":"sha256:[0-9a-f]*".*"verify":{"envlock_verify":1' printed.bin
"$ENVLOCK" sign verified.json --print-signed-bytes --key alice.key.pem >out 2>err
check_status "--print-signed-bytes with --key" 2 $?
check_grep "says it signs nothing" "^envlock: sign: --print-signed-bytes signs nothing and writes to stdout: it takes a LOCK and no --key$" err
"$ENVLOCK" sign stale.json --print-signed-bytes >out 2>err
check_status "--print-signed-bytes of a lock edited after it was saved" 2 $?
check_eq "prints no bytes" "" "$(cat out)"
"$PYTHON" -c 'import base64,json,sys; open("sig.bin","wb").write(base64.b64decode(json.load(open("verified.json.sig"))["signature"]))'
if openssl pkeyutl -help 2>&1 | grep -q -- -rawin; then
	openssl pkeyutl -verify -pubin -inkey alice.pub.pem -rawin -in printed.bin -sigfile sig.bin >out 2>&1
	check_status "openssl pkeyutl -verify -rawin accepts envlock's signature over the printed bytes" 0 $?
	openssl pkeyutl -verify -pubin -inkey alice.pub.pem -rawin -in whole.bin -sigfile sig.bin >out 2>&1
	check_status "and over Python's bytes" 0 $?
	"$PYTHON" - verified.json idform2.bin <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d.pop("id"); d.pop("created"); d.pop("verify")
open(sys.argv[2], "wb").write(json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
PY
	openssl pkeyutl -verify -pubin -inkey alice.pub.pem -rawin -in idform2.bin -sigfile sig.bin >out 2>&1
	check_status "but not over the id's form: the signature is not over the environment alone" 1 $?
	# and the other way: openssl signs, envlock verifies
	openssl pkeyutl -sign -inkey alice.key.pem -rawin -in whole.bin -out osig.bin 2>/dev/null
	"$PYTHON" - osig.bin verified.json.sig openssl.sig <<'PY'
import base64, json, sys
s = json.load(open(sys.argv[2])); s["signature"] = base64.b64encode(open(sys.argv[1], "rb").read()).decode()
json.dump(s, open(sys.argv[3], "w"), indent=2)
PY
	"$ENVLOCK" verify-sig verified.json --sig openssl.sig --pub alice.pub.pem >out 2>err
	check_status "envlock accepts a signature made by openssl pkeyutl -sign -rawin" 0 $?
else
	skip "openssl pkeyutl interop" "this openssl has no -rawin (OpenSSL 3.0 added it)"
	skip "openssl signs, envlock verifies" "this openssl has no -rawin (OpenSSL 3.0 added it)"
fi

# -o - writes the signature file to stdout
"$ENVLOCK" sign lock.json --key alice.key.pem -o - >stdout.sig 2>err
check_status "sign -o -" 0 $?
check_eq "the same signature (Ed25519 is deterministic)" "$(jget lock.json.sig signature)" "$(jget stdout.sig signature)"

# keygen --force: both files or neither
mkdir kk && "$ENVLOCK" keygen -o kk/k >/dev/null && cp kk/k.key.pem kk/before.pem
rm kk/k.pub.pem && mkdir kk/k.pub.pem
"$ENVLOCK" keygen -o kk/k --force >out 2>err
check_status "keygen --force where the public key's name is a folder" 1 $?
check_eq "one line naming it" "envlock: keygen: 'kk/k.pub.pem': not a file; nothing written" "$(cat err)"
check_eq "the private key is untouched" "$(sha256sum <kk/before.pem)" "$(sha256sum <kk/k.key.pem)"

# --file: any file's bytes as they are (a release's SHA256SUMS)
printf 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  envlock\n' >SHA256SUMS
"$ENVLOCK" sign --file SHA256SUMS --key alice.key.pem >out 2>err
check_status "sign --file" 0 $?
check_eq "it names the file's sha256" "signed sha256:$(sha256sum SHA256SUMS | cut -d' ' -f1)" "$(head -n 1 out)"
check_eq "the signature file records file_sha256, not lock_id" "sha256:$(sha256sum SHA256SUMS | cut -d' ' -f1) -" \
	"$(jget SHA256SUMS.sig file_sha256) $(jget SHA256SUMS.sig lock_id | sed 's/^$/-/')"
if "$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.sig.schema.json" SHA256SUMS.sig >v 2>&1; then
	ok "a file's signature validates against the schema"
else
	not_ok "a file's signature validates against the schema"; cat v
fi
"$ENVLOCK" verify-sig --file SHA256SUMS --pub alice.pub.pem >out 2>err
check_status "verify-sig --file" 0 $?
check_eq "it says what was signed" "ok: 'SHA256SUMS' (sha256:$(sha256sum SHA256SUMS | cut -d' ' -f1)) is signed by key sha256:$(openssl pkey -pubin -in alice.pub.pem -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)" "$(cat out)"
"$PYTHON" -c 'import base64,json; open("sums.bin","wb").write(base64.b64decode(json.load(open("SHA256SUMS.sig"))["signature"]))'
if openssl pkeyutl -help 2>&1 | grep -q -- -rawin; then
	openssl pkeyutl -verify -pubin -inkey alice.pub.pem -rawin -in SHA256SUMS -sigfile sums.bin >out 2>&1
	check_status "openssl pkeyutl -verify -rawin accepts the file's signature" 0 $?
else
	skip "openssl checks the file's signature" "this openssl has no -rawin (OpenSSL 3.0 added it)"
fi
cp SHA256SUMS sums.orig && printf 'x' >>SHA256SUMS
"$ENVLOCK" verify-sig --file SHA256SUMS --pub alice.pub.pem >out 2>err
check_status "a file changed after signing" 1 $?
check_grep "says the content differs" "the signature is for file sha256:" err
cp sums.orig SHA256SUMS
"$ENVLOCK" verify-sig --file lock.json --sig lock.json.sig --pub alice.pub.pem >out 2>err
check_status "a lock's signature is not a file's" 1 $?
check_grep "and says so" "the signature is not of a file: it signs a lock's content, not a file's bytes" err
"$ENVLOCK" verify-sig lock.json --sig SHA256SUMS.sig --pub alice.pub.pem >out 2>err
check_status "a file's signature is not a lock's" 1 $?
check_grep "and says so" "the signature is not of a lock: it signs a file's bytes, not a lock's content" err
"$ENVLOCK" sign --file no-such-file --key alice.key.pem >out 2>err
check_status "sign --file of a missing file" 1 $?
check_grep "one line naming it" "envlock: sign: 'no-such-file'" err
both=$(sed 's/"file_sha256"/"lock_id": "sha256:'"$(printf '%064d' 0)"'", "file_sha256"/' SHA256SUMS.sig)
printf '%s\n' "$both" >both.sig
"$ENVLOCK" verify-sig --file SHA256SUMS --sig both.sig --pub alice.pub.pem >out 2>err
check_status "a signature file with both lock_id and file_sha256" 2 $?
check_grep "is refused" "it needs one of \"lock_id\" (a lock's) and \"file_sha256\" (a file's)" err
