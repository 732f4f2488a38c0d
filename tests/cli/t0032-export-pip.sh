#!/bin/sh
# The requirements export as pip takes it: pip install --dry-run --no-index
# --find-links on tiny wheels built here (standard library only), with and
# without pip's hash-checking mode; and the seed stack (torch 1.10.0+cu102,
# mmcv-full 1.7.5) found where they really are, PyTorch's index and
# OpenMMLab's page, through the index lines the export writes.
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
# pip reads only what a test gives it: not this machine's pip.conf nor its PIP_* settings
export PIP_CONFIG_FILE=/dev/null
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX

# every pinned distribution of a lock as a wheel, then pip resolves the export against them only
for name in no-nvidia cuda92-cudnn7; do
	"$ENVLOCK" export "$GOLDEN/$name.lock.json" --format requirements -o "$name.txt" 2>/dev/null
	# the pins only: not the comments, nor the --extra-index-url lines, which --no-index turns off
	grep -v '^[#-]' "$name.txt" | sed 's/===*/==/' | xargs "$PYTHON" "$top/tests/export/mkwheel.py" "wheels-$name" >/dev/null
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

# --- where the seed stack comes from ------------------------------------------
# PyPI has neither torch 1.10.0+cu102 nor a wheel of mmcv-full 1.7.5: the
# export must say where they are. The lines it writes, exactly:
lock=$GOLDEN/ubuntu1604-mmdet.lock.json
"$ENVLOCK" export "$lock" --format requirements -o seed.txt 2>/dev/null
check_eq "the seed export's index lines, before the first pin" \
	"--find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html
--extra-index-url https://download.pytorch.org/whl/cu102" \
	"$(sed -n '/^[a-zA-Z]/q; /^--/p' seed.txt)"
check_grep "each says it is inferred, naming what it serves" \
	"^# inferred by envlock, pip records no index: torch 1.10.0+cu102, torchvision 0.11.1+cu102$" seed.txt

# The stand-in: this machine reaches neither download.pytorch.org nor
# download.openmmlab.com nor PyPI (no network), so a local mirror takes
# their place, laid out as they are, and the exported URLs are rewritten to
# it by one mapping: https://HOST/PATH -> file://$scratch/mirror/HOST/PATH.
#   mirror/download.pytorch.org/whl/cu102/          PEP 503 index (torch/, torchvision/)
#   mirror/download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html   a page of links
#   mirror/pypi.org/simple/                         PyPI (pip's --index-url here): every
#                                                   other pin, and what PyPI has of the
#                                                   two: torch 1.10.0 without +cu102,
#                                                   mmcv-full 1.7.5 as an sdist only
# The wheels are real (zip, dist-info, RECORD: tests/export/mkwheel.py), and
# so are the export and pip. The editable -e /home/alice/mmdetection line
# (a tree on the saving machine, no index involved) is left out of the run.
M=$scratch/mirror
TORCH_IX=$M/download.pytorch.org/whl/cu102
MMCV_PAGE=$M/download.openmmlab.com/mmcv/dist/cu102/torch1.10
"$PYTHON" "$top/tests/export/mkwheel.py" "$TORCH_IX" torch==1.10.0+cu102 torchvision==0.11.1+cu102 >/dev/null
"$PYTHON" "$top/tests/export/mkindex.py" simple "$TORCH_IX" "$TORCH_IX"/*.whl
"$PYTHON" "$top/tests/export/mkwheel.py" "$MMCV_PAGE" mmcv-full==1.7.5 >/dev/null
"$PYTHON" "$top/tests/export/mkindex.py" links "$MMCV_PAGE/index.html" "$MMCV_PAGE"/*.whl
grep -v '^[#-]' seed.txt | grep -v -e '^torch==' -e '^torchvision==' -e '^mmcv-full==' | sed 's/===*/==/' |
	xargs "$PYTHON" "$top/tests/export/mkwheel.py" "$M/pypi.org/files" >/dev/null
"$PYTHON" "$top/tests/export/mkwheel.py" "$M/pypi.org/files" torch==1.10.0 >/dev/null
"$PYTHON" - "$M/pypi.org/files/mmcv-full-1.7.5.tar.gz" <<'PY'
import io, sys, tarfile
# what PyPI has of mmcv-full 1.7.5: its source, which pip would spend half an hour building
with tarfile.open(sys.argv[1], "w:gz") as t:
    for name, text in (("PKG-INFO", "Metadata-Version: 2.1\nName: mmcv-full\nVersion: 1.7.5\n"),
                       ("setup.py", "raise SystemExit('the stand-in sdist was built')\n")):
        data = text.encode()
        info = tarfile.TarInfo("mmcv-full-1.7.5/" + name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
PY
"$PYTHON" "$top/tests/export/mkindex.py" simple "$M/pypi.org/simple" "$M"/pypi.org/files/*
sed -e "s|https://download.pytorch.org/|file://$M/download.pytorch.org/|" \
	-e "s|https://download.openmmlab.com/|file://$M/download.openmmlab.com/|" \
	-e '/^-e \/home\/alice\/mmdetection$/d' seed.txt >mirrored.txt
$PIP install --dry-run --ignore-installed --no-deps --report report.json \
	--index-url "file://$M/pypi.org/simple" -r mirrored.txt >pip.out 2>&1
check_status "pip install --dry-run of the seed export against the mirror" 0 $?
"$PYTHON" - report.json "$M" >where.out <<'PY'
import json, sys
report, m = json.load(open(sys.argv[1])), sys.argv[2]
for item in report["install"]:
    meta, url = item["metadata"], item["download_info"]["url"]
    # the mapping back: the mirror's folders are the real hosts'
    print(meta["name"], meta["version"], url.replace("file://" + m + "/", "https://").split("#")[0])
PY
check_eq "torch 1.10.0+cu102 from PyTorch's cu102 index" \
	"torch 1.10.0+cu102 https://download.pytorch.org/whl/cu102/torch-1.10.0%2Bcu102-py3-none-any.whl" \
	"$(grep '^torch ' where.out)"
check_eq "mmcv-full 1.7.5 from OpenMMLab's find-links page, a wheel, not PyPI's sdist" \
	"mmcv-full 1.7.5 https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/mmcv_full-1.7.5-py3-none-any.whl" \
	"$(grep '^mmcv-full ' where.out)"
check_eq "torchvision from the same index" \
	"torchvision 0.11.1+cu102 https://download.pytorch.org/whl/cu102/torchvision-0.11.1%2Bcu102-py3-none-any.whl" \
	"$(grep '^torchvision ' where.out)"
check_eq "every other pin from the PyPI stand-in, at the lock's version" \
	"$(grep -v '^[#-]' mirrored.txt | grep -v -e '^torch' -e '^mmcv-full' | sed 's/===*/==/' | tr 'A-Z_' 'a-z-' | sort | tr '\n' ' ')" \
	"$(grep -v -e '^torch' -e '^mmcv-full' where.out | awk '$3 ~ /^https:\/\/pypi.org\/files\// { print $1 "==" $2 }' | tr 'A-Z_' 'a-z-' | sort | tr '\n' ' ')"

# the same requirements without the export's index lines: what the issue saw
grep -v '^--' mirrored.txt >plain.txt
$PIP install --dry-run --ignore-installed --no-deps --index-url "file://$M/pypi.org/simple" -r plain.txt >pip.out 2>&1
check_status "without them, pip cannot install the seed stack" 1 $?
check_grep "it falls back to building mmcv-full from PyPI's source" "the stand-in sdist was built" pip.out
grep '^torch==' plain.txt >torch.txt
$PIP install --dry-run --ignore-installed --no-deps --index-url "file://$M/pypi.org/simple" -r torch.txt >pip.out 2>&1
check_status "and torch alone" 1 $?
check_grep "PyPI has no torch 1.10.0+cu102" "No matching distribution found for torch==1.10.0+cu102" pip.out

# environment.yml carries the same lines in its pip: list, the Dockerfile in the requirements it embeds
"$ENVLOCK" export "$lock" --format environment-yml -o seed.yml 2>/dev/null
check_eq "environment.yml: the same options, first in pip:" "$(grep '^--' seed.txt)" \
	"$("$PYTHON" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); p = [x for x in d["dependencies"] if isinstance(x, dict)][0]["pip"]; print("\n".join(x for x in p if x.startswith("--")))' seed.yml)"
"$ENVLOCK" export "$lock" --format dockerfile -o seed.Dockerfile 2>/dev/null
check_eq "the Dockerfile's requirements: the same lines" "$(grep '^--' seed.txt)" \
	"$(sed -n '/^COPY <<.ENVLOCK_EOF. \/envlock\/requirements.txt$/,/^ENVLOCK_EOF$/p' seed.Dockerfile | grep '^--')"

# a pip configuration's index comes first, its origin named; a torch it serves is not called inferred
lock=$GOLDEN/ubuntu1604-mmdet.lock.json
"$PYTHON" - "$lock" conf.lock.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pip"]["index_options"] = [{"option": "index-url", "url": "https://pypi.mirror.example/simple", "from": "/etc/pip.conf"},
                             {"option": "extra-index-url", "url": "https://download.pytorch.org/whl/cu102/",
                              "from": "PIP_EXTRA_INDEX_URL"}]
for x in d["pip"]["distributions"]:
    if x["name"] in ("torch", "torchvision"):
        x["origin"] = {"kind": "config", "option": "extra-index-url", "url": "https://download.pytorch.org/whl/cu102/",
                       "from": "PIP_EXTRA_INDEX_URL"}
    if x["name"] == "mmcv-full":
        x["origin"] = {"kind": "inferred", "option": "find-links", "note": "inferred from torch 1.10 and CUDA 10.2",
                       "url": "https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html"}
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
reseal conf.lock.json
"$ENVLOCK" export conf.lock.json --format requirements -o conf.txt 2>/dev/null
check_eq "configured options first, then the inferred page; nothing twice" \
	"# from pip's configuration (/etc/pip.conf)
--index-url https://pypi.mirror.example/simple
# from pip's configuration (PIP_EXTRA_INDEX_URL); it serves torch 1.10.0+cu102, torchvision 0.11.1+cu102
--extra-index-url https://download.pytorch.org/whl/cu102/
# inferred by envlock, pip records no index: mmcv-full 1.7.5
--find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html" \
	"$(sed -n '/^[a-zA-Z]/q; 3,$p' conf.txt)"

# URLs a lock must not hand to pip: refused, naming the field, nothing written
for bad in 'https://x.example/$(touch${IFS}pwned)' 'ftp://x.example/simple' 'https://alice:s3cret@x.example/simple' \
	'file:///srv/../etc' "https://x.example/$(printf '%05000d' 0)"; do
	"$PYTHON" - "$lock" bad.lock.json "$bad" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pip"]["index_options"] = [{"option": "find-links", "url": sys.argv[3], "from": "/etc/pip.conf"}]
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
	rm -f bad.txt
	"$ENVLOCK" export bad.lock.json --format requirements -o bad.txt 2>err
	echo "$? $(test -e bad.txt && echo written || echo none) $(sed "s|^envlock: export: 'bad.lock.json': pip.index_options\[0\].url '.*': ||" err)" >>refused
done
check_eq "each refused for its reason" "2 none contains a shell metacharacter or space
2 none is not an http(s) or file URL
2 none has a user name or password in it
2 none has a '..' component
2 none is too long" "$(cat refused)"
