#!/bin/sh
# One meaning for each fact, whichever command reads it (lib/lock/view.c):
# the default CUDA toolkit is the one cuda.default names, by its home or by
# an alias, for show, report, diff, export, check and restore alike; the
# frameworks envlock knows are one registry (mmpretrain and mmcls need
# mmcv's ops as mmdet does).
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
# the CUDA 9.2 box with 10.0 installed beside it, its default named by the
# /usr/local/cuda link (as CUDA_HOME usually names it), not by the folder
"$PYTHON" - "$GOLDEN/cuda92-cudnn7.lock.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [t["home"] for t in d["cuda"]["toolkits"] if t["layout"] == "vendor"] == ["/usr/local/cuda-10.0", "/usr/local/cuda-9.2"]
d["cuda"]["default"] = "/usr/local/cuda"
json.dump(d, open("alias.lock.json", "w"), indent=2)
PY
"$ENVLOCK" show alias.lock.json >show.out 2>&1
check_status "show" 0 $?
check_grep "show: 9.2 is the default, by the alias" "^CUDA *9.2.148 at /usr/local/cuda-9.2 (default)$" show.out
"$ENVLOCK" report alias.lock.json --format json >report.json 2>/dev/null
check_status "report" 0 $?
check_eq "report: the default toolkit's row, and CUDA in the citation" "9.2.148 9.2.148" \
	"$("$PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(next(x["version"] for x in r["rows"] if "(default)" in x["details"]), next(c["version"] for c in r["cites"] if c["name"] == "CUDA"))' report.json 2>&1)"
"$ENVLOCK" diff --json "$GOLDEN/cuda92-cudnn7.lock.json" alias.lock.json >diff.json 2>/dev/null
check_eq "diff: the same default toolkit version, only its path differs" "cuda/default" \
	"$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted(e["section"]+"/"+e["key"] for e in d["differences"])))' diff.json 2>&1)"
"$ENVLOCK" export alias.lock.json --format dockerfile -q >Dockerfile 2>/dev/null
check_grep "export: the Dockerfile is for the lock's CUDA 9.2" "^# The lock has CUDA 9.2.148 (toolkit)" Dockerfile
"$ENVLOCK" restore alias.lock.json --dry-run --only cuda >plan.out 2>&1
check_grep "restore: the locked toolkit is 9.2.148" "CUDA 9.2.148" plan.out

# the registry: mmcv without ops under mmpretrain alone is the same finding as under mmdet
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k, v in d["frameworks"].items():
    if k.startswith("mm") and k not in ("mmcv", "mmengine"):
        d["frameworks"][k] = {"status": "absent"}
d["frameworks"]["mmpretrain"] = {"status": "present", "version": "1.2.0", "path": "/opt/conda/lib/python3.10/site-packages/mmpretrain/version.py"}
d["frameworks"]["mmcv"]["ops"] = False
d["frameworks"]["mmcv"].pop("ops_files", None)
json.dump(d, open("pretrain.lock.json", "w"), indent=2)
PY
"$ENVLOCK" check pretrain.lock.json --json >check.json 2>check.err
check_eq "check: mmcv without ops under mmpretrain is breaking" "breaking: mmcv-full 1.7.5 has no compiled ops (no mmcv/_ext*.so) but mmpretrain 1.2.0 needs them" \
	"$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(f["severity"]+": "+f["message"].split(":")[0] for f in d["findings"] if f["rule"]=="mmcv-without-ops"))' check.json 2>&1)"
