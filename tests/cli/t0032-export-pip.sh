#!/bin/sh
# The requirements export as pip takes it: pip install --dry-run --no-index
# --find-links on tiny wheels built here (standard library only), with and
# without pip's hash-checking mode.
. "$(dirname "$0")/lib.sh"

# A lock a test edited gets the id of its new content back (show prints it
# first), so that only what the test is about is said of it.
reseal() {
	for f in "$@"; do
		"$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); d["id"] = sys.argv[2]; json.dump(d, open(sys.argv[1], "w"), indent=2)' \
			"$f" "$("$ENVLOCK" show "$f" 2>/dev/null | sed -n '1s/^envlock //p')"
	done
}

cd "$scratch" || exit 1
if ! "$PYTHON" -m venv venv >venv.log 2>&1 || ! venv/bin/pip --version >/dev/null 2>&1; then
	skip "pip install --dry-run of the requirements export" "no python3 -m venv with pip here ($(tail -n 1 venv.log))"
	exit 0
fi
PIP="venv/bin/pip"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# every pinned distribution of a lock as a wheel, then pip resolves the export against them only
for name in no-nvidia cuda92-cudnn7; do
	"$ENVLOCK" export "$GOLDEN/$name.lock.json" --format requirements -o "$name.txt" 2>/dev/null
	grep -v '^#' "$name.txt" | sed 's/===*/==/' | xargs "$PYTHON" "$top/tests/export/mkwheel.py" "wheels-$name" >/dev/null
	$PIP install --dry-run --no-index --find-links "wheels-$name" -r "$name.txt" >pip.out 2>&1
	check_status "pip install --dry-run accepts the $name export" 0 $?
	check_eq "pip would install exactly the lock's distributions ($name)" \
		"$("$PYTHON" -c 'import json,sys; print(" ".join(sorted("%s-%s" % (d["name"].lower().replace("_","-"), d["version"]) for d in json.load(open(sys.argv[1]))["pip"]["distributions"])))' "$GOLDEN/$name.lock.json")" \
		"$(sed -n 's/^Would install //p' pip.out | tr ' ' '\n' | tr 'A-Z_' 'a-z-' | sort | tr '\n' ' ' | sed 's/ $//')"
done
check_grep "a version PEP 440 cannot parse is pinned with === (as pip freeze does)" '^python-apt===1.6.5ubuntu0.7$' cuda92-cudnn7.txt

# hashes: a lock whose distributions were all installed from wheel files with recorded hashes
"$PYTHON" "$top/tests/export/mkwheel.py" hw alpha==1.0 beta-pkg==2.0.post1 >hashes
"$PYTHON" - "$GOLDEN/no-nvidia.lock.json" hashes hashed.lock.json partly.lock.json <<'PY'
import json, sys
lock = json.load(open(sys.argv[1]))
files = [l.split() for l in open(sys.argv[2])]
dists = []
for path, sha in files:
    import os
    base = os.path.basename(path)
    name, version = base.split("-")[0].replace("_", "-"), base.split("-")[1]
    dists.append({"name": name, "version": version, "kind": "dist-info", "editable": False, "requested": True,
                  "installer": "pip", "path": "/usr/lib/python3/site-packages/" + base,
                  "direct_url": {"url": "file://" + os.path.abspath(path), "archive_hash": "sha256=" + sha}})
lock["pip"]["distributions"] = dists
json.dump(lock, open(sys.argv[3], "w"), indent=2)
del dists[1]["direct_url"]
json.dump(lock, open(sys.argv[4], "w"), indent=2)
PY
reseal hashed.lock.json partly.lock.json
"$ENVLOCK" export hashed.lock.json --format requirements -o hashed.txt 2>err
check_eq "every line has a hash: --hash on every line" "2" "$(grep -c -- ' --hash=sha256:[0-9a-f]\{64\}$' hashed.txt)"
check_grep "the hash is the wheel's own" "--hash=sha256:$(sha256sum hw/alpha-1.0-py3-none-any.whl | cut -d' ' -f1)" hashed.txt
$PIP install --dry-run --no-index --find-links hw -r hashed.txt >pip.out 2>&1
check_status "pip accepts it in hash-checking mode" 0 $?
check_grep "and would install both" "Would install alpha-1.0 beta-pkg-2.0.post1" pip.out
mv hw/alpha-1.0-py3-none-any.whl alpha.orig
"$PYTHON" -c 'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],"a"); z.writestr("alpha/extra.py","x = 1\n"); z.close()' alpha.orig
mv alpha.orig hw/alpha-1.0-py3-none-any.whl
$PIP install --dry-run --no-index --find-links hw -r hashed.txt >pip.out 2>&1
check_status "a changed wheel is refused" 1 $?
check_grep "pip says the hashes do not match" "DO NOT MATCH THE HASHES" pip.out
"$ENVLOCK" export partly.lock.json --format requirements -o partly.txt 2>err
check_eq "one line without a hash: no --hash at all (pip would demand one everywhere)" "0" "$(grep -c -- '--hash=' partly.txt)"
check_grep "the export says so" "1 of 2 requirements have a known sha256" partly.txt
check_eq "and warns on stderr" "envlock: warning: 1 of 2 pip requirements have no known sha256: no --hash lines" "$(cat err)"

# a name restore refuses is never written for pip or conda to read either (lock/untrusted.c)
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pip"]["distributions"][0]["name"] = "foo$(touch${IFS}pwned)"
json.dump(d, open("pwned.lock.json", "w"), indent=2)
PY
for f in requirements environment-yml dockerfile; do
	"$ENVLOCK" export pwned.lock.json --format "$f" -o "pwned.$f" 2>err
	check_status "export --format $f of a pip name with \$(...)" 2 $?
	check_eq "$f: refused, naming the field, nothing written" \
		"envlock: export: 'pwned.lock.json': pip.distributions[0].name 'foo\$(touch\${IFS}pwned)': contains a shell metacharacter or space no" \
		"$(cat err) $(test -e "pwned.$f" && echo yes || echo no)"
done
"$ENVLOCK" restore pwned.lock.json --dry-run >/dev/null 2>err
check_eq "restore says the same" "envlock: restore: 'pwned.lock.json': pip.distributions[0].name 'foo\$(touch\${IFS}pwned)': contains a shell metacharacter or space" "$(cat err)"
