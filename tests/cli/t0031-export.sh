#!/bin/sh
# envlock export: every format of every fixture lock against its golden
# file, then each checked by the consumer's own grammar: CEP 23's regex for
# conda's explicit files, pip's requirements parser, a YAML parser.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
for lock in "$GOLDEN"/*.lock.json; do
	name=$(basename "$lock" .lock.json)
	for fmt in conda-explicit requirements environment-yml dockerfile; do
		golden=$GOLDEN/export/$name.$fmt
		"$ENVLOCK" export "$lock" --format "$fmt" -o "$name.$fmt" >out 2>err
		rc=$?
		# UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing)
		[ "${UPDATE_GOLDEN:-0}" = 1 ] && [ -f "$golden" ] && [ $rc = 0 ] && cp "$name.$fmt" "$golden"
		if [ -f "$golden" ]; then
			check_status "$name $fmt" 0 $rc
			check_diff "$name $fmt = golden" "$golden" "$name.$fmt"
		else
			check_status "$name $fmt: nothing to export" 1 $rc
		fi
	done
done
check_eq "a lock without conda: one clear line naming the file" "envlock: export: '$GOLDEN/no-nvidia.lock.json': the lock has no conda packages to export" \
	"$("$ENVLOCK" export "$GOLDEN/no-nvidia.lock.json" --format conda-explicit 2>&1)"
"$ENVLOCK" export "$GOLDEN/no-nvidia.lock.json" --format wheel >out 2>err
check_status "an unknown format" 2 $?
check_eq "it lists the formats" "envlock: export: unknown format 'wheel' (conda-explicit, requirements, environment-yml, dockerfile)" "$(cat err)"
"$ENVLOCK" export "$GOLDEN/ubuntu1604-mmdet.lock.json" --format requirements >a 2>/dev/null
"$ENVLOCK" export "$GOLDEN/ubuntu1604-mmdet.lock.json" --format requirements >b 2>/dev/null
if cmp -s a b; then ok "stdout and repeat runs: the same bytes"; else not_ok "stdout and repeat runs: the same bytes"; fi

# conda-explicit: CEP 23's own regex on every URL line, and each md5 is the lock's
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" ubuntu1604-mmdet.conda-explicit >check.out 2>&1 <<'PY'
import json, re, sys
lock = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
# CEP 23, "Text spec input files" (conda/ceps cep-0023.md)
pat = re.compile(r"(?:(?P<url_p>.+)(?:[/\\]))?(?P<fn>[^/\\#]+(?:\.tar\.bz2|\.conda))(?:#((?P<md5>[0-9a-f]{32})|((sha256:)?(?P<sha256>[0-9a-f]{64}))))?$")
assert "@EXPLICIT" in lines, "no @EXPLICIT"
urls = [l for l in lines[lines.index("@EXPLICIT") + 1:] if l and not l.startswith("#")]
want = {p["url"]: p.get("md5") for p in lock["conda"]["packages"]}
assert len(urls) == len(want), (len(urls), len(want))
for l in urls:
    m = pat.match(l)
    assert m, l
    url = l.split("#")[0]
    assert want[url] == m.group("md5"), l
print("ok", len(urls))
PY
check_eq "every conda line parses by CEP 23 and carries the lock's md5" "ok 29" "$(cat check.out)"

# requirements: pip's own parser reads every line of every export (an editable
# install's tree must exist for pip to parse it: a stand-in project takes its place)
mkdir -p stand-in && printf 'from setuptools import setup\nsetup(name="mmdet")\n' >stand-in/setup.py
for name in ubuntu1604-mmdet mmpose-container cuda92-cudnn7 no-nvidia broken; do
	sed "s|^-e /home/alice/mmdetection\$|-e $scratch/stand-in|" "$name.requirements" >parse.txt
	"$PYTHON" - "$GOLDEN/$name.lock.json" parse.txt >check.out 2>&1 <<'PY'
import json, sys
from pip._internal.network.session import PipSession
from pip._internal.req.req_file import parse_requirements
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._vendor.packaging.utils import canonicalize_name
lock = json.load(open(sys.argv[1]))
got = {}
for parsed in parse_requirements(sys.argv[2], session=PipSession()):
    req = install_req_from_parsed_requirement(parsed)
    if req.req is None:  # a local editable tree: pip learns its name by building it; the stand-in is mmdet's
        assert req.editable and req.link.url.endswith("/stand-in"), req
        got["mmdet"] = ("", True, req.link.url)
        continue
    got[canonicalize_name(req.name)] = (str(req.specifier), req.editable, req.link.url if req.link else None)
dists = {canonicalize_name(d["name"]): d for d in lock["pip"]["distributions"]}
assert set(got) == set(dists), set(got) ^ set(dists)
for n, (spec, editable, url) in got.items():
    d = dists[n]
    assert editable == d["editable"], n
    if d.get("editable") or ("direct_url" in d and d.get("installer") != "conda"):
        assert url, n
    else:
        assert spec in ("==" + d["version"], "===" + d["version"]), (n, spec)
print("ok", len(got))
PY
	check_eq "pip parses $name's requirements: one requirement per distribution, pinned as the lock says" \
		"ok $("$PYTHON" -c 'import json,sys; print(len({d["name"].lower().replace("_","-").replace(".","-") for d in json.load(open(sys.argv[1]))["pip"]["distributions"]}))' "$GOLDEN/$name.lock.json")" \
		"$(tail -n 1 check.out)"
done

# environment.yml: YAML that conda's loader (a YAML parser) reads, pinned as the lock
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" ubuntu1604-mmdet.environment-yml >check.out 2>&1 <<'PY'
import json, sys, yaml
lock = json.load(open(sys.argv[1]))
env = yaml.safe_load(open(sys.argv[2]))
conda = [d for d in env["dependencies"] if isinstance(d, str)]
pip = [d for d in env["dependencies"] if isinstance(d, dict)][0]["pip"]
want = ["%s=%s=%s" % (p["name"], p["version"], p["build"]) for p in lock["conda"]["packages"]]
assert conda == want, set(conda) ^ set(want)
owned = [d for d in lock["pip"]["distributions"] if d.get("installer") != "conda" and not d.get("also_conda")]
# pip's options (where to look) first, then one requirement per distribution pip installed
options = [p for p in pip if p.startswith("--")]
assert pip[:len(options)] == options, pip
assert len(pip) - len(options) == len(owned), (len(pip), len(options), len(owned))
assert "-e /home/alice/mmdetection" in pip
print(env["name"], len(conda), len(pip) - len(options), len(options))
PY
check_eq "environment.yml: conda pins = the lock's, pip: = what pip installed, and where to look" "mmdet 29 24 2" "$(cat check.out)"
