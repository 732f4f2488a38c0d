#!/bin/sh
# The Dockerfile export: the base image chosen from NVIDIA's tag list (data,
# with its source), exact and closest matches, the configs as here-documents
# that give back the lock's text byte for byte, and hostile config paths.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
TAGS=$top/data/nvidia-cuda-tags.json
check_grep "the tag list names its source" "gitlab.com/nvidia/container-images/cuda" "$TAGS"
"$PYTHON" - "$TAGS" >check.out 2>&1 <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
tags = d["supported"] + d["unsupported"]
bad = [t for t in tags if not re.fullmatch(r"\d+\.\d+\.\d+-cudnn\d*-devel-ubuntu\d\d\.\d\d", t)]
assert not bad, bad
assert len(set(tags)) == len(tags), "duplicates"
print(len(tags))
PY
check_eq "every tag in the list is <cuda>-cudnn[N]-devel-ubuntu<release>, none twice" "73" "$(cat check.out)"

MINICONDA=$top/data/miniconda-installers.json
check_eq "every Miniconda installer row names its architecture, its url and its source" "" \
	"$("$PYTHON" -c 'import json,sys; print(" ".join(str(i) for i, r in enumerate(json.load(open(sys.argv[1]))["rows"]) if not (r.get("arch") and r.get("url", "").startswith("https://") and r.get("source"))))' "$MINICONDA")"

from_of() { sed -n 's/^FROM //p' "$1"; }
in_list() { "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("yes" if sys.argv[2] in d["supported"]+d["unsupported"] else "no")' "$TAGS" "$1"; }

"$ENVLOCK" export "$GOLDEN/mmpose-container.lock.json" --format dockerfile -o mmpose.Dockerfile 2>/dev/null
check_eq "CUDA 11.8, cuDNN 8.9, Ubuntu 22.04: the exact tag" "nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04" "$(from_of mmpose.Dockerfile)"
check_grep "and it says it matches" "^# Matches the lock: CUDA 11.8, cuDNN 8, Ubuntu 22.04.$" mmpose.Dockerfile
"$ENVLOCK" export "$GOLDEN/ubuntu1604-mmdet.lock.json" --format dockerfile -o mmdet.Dockerfile 2>/dev/null
check_eq "CUDA 10.2 on Ubuntu 16.04: the closest published tag" "nvidia/cuda:11.0.3-cudnn8-devel-ubuntu16.04" "$(from_of mmdet.Dockerfile)"
check_grep "and a comment says why" "NVIDIA publishes no image of CUDA 10.2 with cuDNN" mmdet.Dockerfile
for f in mmpose mmdet; do
	check_eq "$f: the FROM tag is in NVIDIA's list" "yes" "$(in_list "$(from_of $f.Dockerfile | sed 's/^nvidia\/cuda://')")"
done
check_grep "the lock id is a label of the image" "^LABEL envlock.lock-id=\"$(jget "$GOLDEN/mmpose-container.lock.json" id)\"$" mmpose.Dockerfile
check_grep "a VCS install stays pinned to its commit" "^mmpose @ git+https://github.com/open-mmlab/mmpose.git@cede793811a9119a1995290e42d960ce6eb74ea3$" mmpose.Dockerfile
check_grep "an editable tree of the saving machine becomes a comment" "^# -e /home/alice/mmdetection: that source tree is not in the image" mmdet.Dockerfile

# other machines, made from the mmpose lock: the same CUDA on another Ubuntu, cuDNN 9 tags
variant() { # NAME CUDA CUDNN UBUNTU
	"$PYTHON" - "$GOLDEN/mmpose-container.lock.json" "$1.lock.json" "$2" "$3" "$4" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
next(t for t in d["cuda"]["toolkits"] if t["home"] == d["cuda"]["default"])["version"] = sys.argv[3]
d["cudnn"]["version"] = sys.argv[4]
d["system"]["os"]["version_id"] = sys.argv[5]
d["system"]["os"]["pretty_name"] = "Ubuntu " + sys.argv[5]
json.dump(d, open(sys.argv[2], "w"))
PY
	"$ENVLOCK" export "$1.lock.json" --format dockerfile -o "$1.Dockerfile" 2>/dev/null
}
variant cu113 11.3.109 8.2.1 22.04
check_eq "CUDA 11.3 on 22.04: the same CUDA on the nearest Ubuntu" "nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04" "$(from_of cu113.Dockerfile)"
check_grep "it says the Ubuntu differs" "^# the image's Ubuntu is 20.04, not 22.04.$" cu113.Dockerfile
variant cu126 12.6.77 9.3.0 24.04
check_eq "CUDA 12.6 with cuDNN 9 on 24.04: the unnumbered -cudnn- tag (cuDNN 9)" "nvidia/cuda:12.6.3-cudnn-devel-ubuntu24.04" "$(from_of cu126.Dockerfile)"
variant cu123 12.3.2 9.0.0 22.04
check_eq "CUDA 12.3 with cuDNN 9: the cudnn9 tag" "nvidia/cuda:12.3.2-cudnn9-devel-ubuntu22.04" "$(from_of cu123.Dockerfile)"
"$ENVLOCK" export "$GOLDEN/no-nvidia.lock.json" --format dockerfile -o cpu.Dockerfile 2>/dev/null
check_eq "no CUDA: the lock's own OS" "debian:12" "$(from_of cpu.Dockerfile)"

# configs: here-documents that give back the lock's text exactly
mkdir -p fixture-configs && cp -R "$top/tests/fixtures/configs/configs" fixture-configs/
(cd fixture-configs && "$ENVLOCK" save -q --root "$FIXTURES/ubuntu1604-mmdet" \
	--config configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py -o "$scratch/cfg.lock.json" >/dev/null 2>&1)
"$PYTHON" - cfg.lock.json cfg2.lock.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["configs"]["files"]
f[1]["text"] += "ENVLOCK_EOF\n$HOME \\ `x` 'q'\n"           # the delimiter and what a shell would expand
f.append(dict(f[2], path="a b.py"))                            # a path COPY cannot take: left out
json.dump(d, open(sys.argv[2], "w"))
# paths restore refuses to write (lock/untrusted.c): export refuses the lock too, naming the field
for i, bad in enumerate(("../../etc/escape.py", "x/$HOME.py")):
    f.append(dict(f[2], path=bad))
    json.dump(d, open("hostile%d.lock.json" % i, "w"))
    f.pop()
PY
"$ENVLOCK" export hostile0.lock.json --format dockerfile -o h0.Dockerfile 2>h0.err
check_status "a config path with '..': export refuses the lock, as restore does" 2 $?
check_eq "one line naming the file, the field and why" \
	"envlock: export: 'hostile0.lock.json': configs.files[6].path '../../etc/escape.py': has a '..' component" "$(cat h0.err)"
check_eq "and writes nothing" "no" "$(test -e h0.Dockerfile && echo yes || echo no)"
"$ENVLOCK" export hostile1.lock.json --format requirements -o h1.txt 2>h1.err
check_status "a config path with a shell metacharacter: refused whatever the format" 2 $?
check_grep "naming it" "configs.files\[6\].path 'x/\$HOME.py': contains a shell metacharacter or space" h1.err
"$ENVLOCK" restore hostile1.lock.json --dry-run >/dev/null 2>r1.err
check_eq "restore refuses it with the same words" "$(sed 's/^envlock: export: //' h1.err)" "$(sed 's/^envlock: restore: //' r1.err)"
"$ENVLOCK" export cfg2.lock.json --format dockerfile -o cfg.Dockerfile 2>err
"$PYTHON" - cfg2.lock.json cfg.Dockerfile >check.out 2>&1 <<'PY'
import json, re, sys
lock = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
docs = {}
lines = text.split("\n")
i = 0
while i < len(lines):
    m = re.fullmatch(r"COPY <<'([A-Z_0-9]+)' (\S+)", lines[i])
    if m:
        end = lines.index(m.group(1), i + 1)
        docs[m.group(2)] = "\n".join(lines[i + 1:end]) + "\n"
        i = end
    i += 1
want = {f["path"]: f["text"] for f in lock["configs"]["files"]}
written = [p for p in want if p in docs]
assert all(docs[p] == want[p] for p in written), [p for p in written if docs[p] != want[p]]
print(len(written), sorted(set(want) - set(written)))
PY
check_eq "every config with a plain path comes back byte for byte; a path COPY cannot take is left out" \
	"5 ['a b.py']" "$(cat check.out)"
check_grep "a delimiter inside a config is avoided" "^COPY <<'ENVLOCK_EOF_1' configs/_base_/models/faster_rcnn_r50_fpn.py$" cfg.Dockerfile
check_eq "the left-out config is said, on stderr too" "1" "$(grep -c 'config with an unusual path was left out' err)"
if docker info >/dev/null 2>&1; then
	skip "docker build of the export" "not run by the test suite: it downloads the base image"
else
	skip "docker build of the export" "no Docker daemon on this machine"
fi
