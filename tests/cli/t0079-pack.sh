#!/bin/sh
# envlock pack: an offline restore kit, on real formats. tests/pack/mkseed.py
# builds a conda install with real .tar.bz2 and .conda archives in its
# package cache and distributions installed by the real pip (Debian's
# 23.0.1), whose caches it filled for real: a wheel pip built from an sdist
# (wheels/), one it downloaded from a local HTTP server (http/, and
# pyenv's pip 23.2.1 into a cache of its own). The lock is made by save.
# Then: every item's digest against sha256sum, the wheel only the HTTP
# cache has found there, the one no cache has rebuilt from the installed
# files and installed by the real pip, identical to the original files;
# a changed installed file, a missing archive and a corrupt cache each
# listed missing with why and the fetch command (exit 1); the .tar.zst
# kit through bundle verify and extract; bad input in one line, exit 2.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
setup_or_skip "tests/pack/mkseed.py built the environment" "envlock pack on a real environment" \
	"$PYTHON" "$top/tests/pack/mkseed.py" "$scratch/seed"
seed=$scratch/seed
env=$seed/env
unset CONDA_PKGS_DIRS PIP_CACHE_DIR
# the lock records pip's configuration: only what a check sets
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
PIP_CONFIG_FILE=/dev/null
export PIP_CONFIG_FILE
# the default pip cache: $XDG_CACHE_HOME/pip
rm -rf "$XDG_CACHE_HOME/pip" && mkdir -p "$XDG_CACHE_HOME" && cp -R "$seed/pipcache" "$XDG_CACHE_HOME/pip"

"$ENVLOCK" save -q --conda-prefix "$env" --python "$env/bin/python" -o env.lock 2>save.err
check_status "save records the environment" 0 $?

# jq-less readers of the manifest
item() { # item KIT NAME FIELD: FIELD of the item named NAME (or of path NAME)
	"$PYTHON" -c 'import json,sys; m=json.load(open(sys.argv[1]+"/envlock.kit.json")); r=[i for i in m["items"] if i.get("name")==sys.argv[2] or i["path"]==sys.argv[2]]; print(r[0].get(sys.argv[3], "-") if r else "none")' "$@"
}
missing() { # missing KIT NAME FIELD
	"$PYTHON" -c 'import json,sys; m=json.load(open(sys.argv[1]+"/envlock.kit.json")); r=[i for i in m["missing"] if i["name"]==sys.argv[2]]; print(r[0][sys.argv[3]] if r else "none")' "$@"
}
fact() { "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); [d:=d[k] for k in sys.argv[2:]]; print(d)' "$seed/facts.json" "$@"; }

cudnn=cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz
runfile=cuda_11.8.0_520.61.05_linux.run
printf 'not really cuDNN\n' >"$cudnn"
printf '#!/bin/sh\necho not really CUDA\n' >"$runfile"
printf 'notes\n' >notes.txt
"$ENVLOCK" pack env.lock -o kit --wheels "$seed/wheels" --add "$cudnn" --add "$runfile" --add notes.txt >pack.out 2>pack.err
check_status "pack of a complete environment exits 0" 0 $?
check_eq "and warns of nothing" "" "$(cat pack.err)"
check_grep "it says what it packed" "^kit      kit: 11 items, 0 missing, 1 not needed$" pack.out
check_grep "an editable install (pip install -e) is not packed, and it says why" \
	"^skip     elpk-eps 0.1: an editable install, restore uses its repository$" pack.out
check_eq "the kit's folders and files" \
"conda/tzdata-2023c-h04d1e81_0.conda
conda/xz-5.4.2-h5eee18b_0.tar.bz2
conda/zlib-1.2.13-h5eee18b_0.tar.bz2
envlock.kit.json
envlock.lock
files/$runfile
files/$cudnn
files/notes.txt
wheels/elpk_alpha-1.0-py3-none-any.whl
wheels/elpk_beta-2.0.1-py3-none-any.whl
wheels/elpk_delta-4.2-py3-none-any.whl
wheels/elpk_gamma-0.3-py3-none-any.whl
wheels/elpk_zeta-1.1-py3-none-any.whl" "$(cd kit && find . -type f | sed 's|^\./||' | sort)"
cmp -s kit/envlock.lock env.lock
check_status "envlock.lock is a byte copy of the lock" 0 $?

# the manifest: the fixed format, every digest what sha256sum says
"$PYTHON" - kit env.lock "$("$ENVLOCK" show env.lock 2>/dev/null | sed -n '1s/^envlock //p')" >manifest.out 2>&1 <<'PY'
import hashlib, json, os, subprocess, sys
kit, lock, lock_id = sys.argv[1:4]
text = open(kit + "/envlock.kit.json").read()
m = json.loads(text)
bad = []
if text != json.dumps(m, indent=2, sort_keys=True, ensure_ascii=False) + "\n":
    bad.append("not written as the lockfile writer writes (sorted keys, 2-space indent, final newline)")
if (m["format"], m["version"]) != ("envlock-kit", 1) or not m["created_by"].startswith("envlock "):
    bad.append("format, version or created_by: %r" % [m["format"], m["version"], m["created_by"]])
sha = lambda p: subprocess.run(["sha256sum", p], capture_output=True, text=True).stdout.split()[0]
if m["lock"] != {"path": "envlock.lock", "id": lock_id, "sha256": sha(lock)}:
    bad.append("lock: %r (id %s)" % (m["lock"], lock_id))
keys = [(i["kind"], i["path"]) for i in m["items"]]
if keys != sorted(keys):
    bad.append("items not sorted by kind then path")
for i in m["items"]:
    p = os.path.join(kit, i["path"])
    if ".." in i["path"].split("/") or i["path"].startswith("/"):
        bad.append("path %s" % i["path"])
    if i["sha256"] != sha(p) or i["size"] != os.path.getsize(p):
        bad.append("%s: sha256/size not the file's" % i["path"])
    if i["kind"] == "conda" and i["md5"] != hashlib.md5(open(p, "rb").read()).hexdigest():
        bad.append("%s: md5 not the file's" % i["path"])
print("\n".join(bad) or "fine")
PY
check_eq "the manifest: format, lock, sorted items, each sha256 and size sha256sum's" "fine" "$(cat manifest.out)"
if "$PYTHON" -c 'import jsonschema' 2>/dev/null; then
	"$PYTHON" -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))); print("valid")' \
		kit/envlock.kit.json "$top/schemas/envlock.kit.schema.json" >schema.out 2>&1
	check_eq "the manifest is valid against schemas/envlock.kit.schema.json" "valid" "$(tail -n 1 schema.out)"
else
	skip "the manifest against its schema" "python3-jsonschema is not installed"
fi
for pkg in zlib xz tzdata; do
	check_eq "conda $pkg: the lock's md5, from the install's package cache" \
		"$(fact conda $pkg md5) $env/pkgs/$(fact conda $pkg fn)" "$(item kit $pkg md5) $(item kit $pkg from)"
done
check_eq "elpk-alpha: the wheel pip built from its sdist, from pip's wheel cache (the default, \$XDG_CACHE_HOME/pip)" \
	"pip-wheel-cache" "$(item kit elpk-alpha from)"
case $(item kit elpk-alpha source) in
"$XDG_CACHE_HOME"/pip/wheels/*/elpk_alpha-1.0-py3-none-any.whl) ok "its source is the cached file" ;;
*) not_ok "its source is the cached file"; echo "#   $(item kit elpk-alpha source)" ;;
esac
check_eq "elpk-beta: only the HTTP cache has it, and it is found there" "pip-http-cache" "$(item kit elpk-beta from)"
cmp -s kit/wheels/elpk_beta-2.0.1-py3-none-any.whl "$seed/served/elpk_beta-2.0.1-py3-none-any.whl"
check_status "the body cut out of pip's cache file is the served wheel, byte for byte" 0 $?
check_eq "elpk-delta: from --wheels" "wheels-dir $seed/wheels/elpk_delta-4.2-py3-none-any.whl" \
	"$(item kit elpk-delta from) $(item kit elpk-delta source)"
check_eq "elpk-gamma: no wheel anywhere, rebuilt from its 9 installed files and RECORD" \
	"rebuilt $(fact site)/elpk_gamma-0.3.dist-info 9" \
	"$(item kit elpk-gamma from) $(item kit elpk-gamma source) $(item kit elpk-gamma rebuilt_files)"
check_eq "the added files and their roles" "cudnn-archive cuda-runfile file" \
	"$(item kit "files/$cudnn" role) $(item kit "files/$runfile" role) $(item kit files/notes.txt role)"

# the rebuilt wheel is a real wheel: the real pip installs it, the files are the installed ones
"$PYTHON" -m pip install -q --disable-pip-version-check --no-index --no-deps --target T \
	kit/wheels/elpk_gamma-0.3-py3-none-any.whl >pipi.out 2>&1
check_status "pip installs the rebuilt wheel" 0 $?
same=yes
for f in elpk_gamma/__init__.py elpk_gamma/data.txt elpk_gamma-0.3.dist-info/METADATA \
	elpk_gamma-0.3.dist-info/WHEEL elpk_gamma-0.3.dist-info/entry_points.txt; do
	cmp "T/$f" "$(fact site)/$f" >/dev/null 2>&1 || { same="no: $f"; break; }
done
cmp T/share/elpk-gamma/notes.txt "$env/share/elpk-gamma/notes.txt" >/dev/null 2>&1 || same="no: share/elpk-gamma/notes.txt"
check_eq "its files are the installed ones, byte for byte (the data file under the prefix too)" "yes" "$same"
check_eq "the plain script comes back, pip giving it its interpreter again" \
	"$(tail -n +2 "$env/bin/elpk-gamma-tool")" "$(tail -n +2 T/bin/elpk-gamma-tool 2>&1)"
check_grep "the console script is pip's to write: it wrote it from entry_points.txt" "from elpk_gamma import main" T/bin/elpk-gamma
"$PYTHON" -c 'import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).testzip())' kit/wheels/elpk_gamma-0.3-py3-none-any.whl >zip.out 2>&1
check_eq "zipfile finds every member's CRC right" "None" "$(cat zip.out)"

# pip 23.2's HTTP cache (pyenv's pip), and pip >= 23.3's http-v2 (a .body file is the response as it came)
if [ "$(fact other_pip)" != None ]; then
	"$ENVLOCK" pack env.lock -o kit232 --pip-cache "$seed/pipcache-other" >/dev/null 2>&1
	check_eq "pip $(fact other_pip)'s HTTP cache: elpk-beta found in it" "pip-http-cache" "$(item kit232 elpk-beta from)"
	cmp -s kit232/wheels/elpk_beta-2.0.1-py3-none-any.whl "$seed/served/elpk_beta-2.0.1-py3-none-any.whl"
	check_status "the same wheel, byte for byte" 0 $?
else
	skip "pip 23.2's HTTP cache" "no second python3 with pip on PATH"
fi
# no pip >= 23.3 here: its layout, http-v2/<5 levels>/<key>.body holding the raw response
mkdir -p v2/http-v2/a/b/c/d/e
cp "$seed/served/elpk_beta-2.0.1-py3-none-any.whl" v2/http-v2/a/b/c/d/e/0123456789abcdef.body
printf 'cc=4,not a body' >v2/http-v2/a/b/c/d/e/0123456789abcdef
"$ENVLOCK" pack env.lock -o kitv2 --pip-cache v2 >/dev/null 2>&1
check_eq "pip >= 23.3's http-v2 cache: elpk-beta found in its .body file" "pip-http-cache $scratch/v2/http-v2/a/b/c/d/e/0123456789abcdef.body" \
	"$(item kitv2 elpk-beta from) $(item kitv2 elpk-beta source)"
check_eq "elpk-alpha, in no cache of that one, is rebuilt" "rebuilt" "$(item kitv2 elpk-alpha from)"

check_eq "nor is it listed missing" "none" "$(missing kit elpk-eps reason)"

# a wheel is what its METADATA says, not what its file is called
mkdir nocache
mkdir liar
cp kit/wheels/elpk_delta-4.2-py3-none-any.whl liar/elpk_alpha-1.0-py3-none-any.whl
"$ENVLOCK" pack env.lock -o kitliar --pip-cache nocache --wheels liar >/dev/null 2>&1
check_eq "a wheel named elpk_alpha-1.0 whose METADATA says elpk-delta 4.2 is taken as delta" \
	"rebuilt wheels-dir" "$(item kitliar elpk-alpha from) $(item kitliar elpk-delta from)"

# the lock records the sha256 of the file elpk-zeta was installed from: another file is refused
check_eq "elpk-zeta, installed from its wheel's path and in no cache, is rebuilt" "rebuilt" "$(item kit elpk-zeta from)"
"$ENVLOCK" pack env.lock -o kitz --pip-cache nocache --wheels "$seed/zeta" >/dev/null 2>&1
check_eq "given the file it was installed from, that file is taken" \
	"wheels-dir $(sha256sum "$seed"/zeta/*.whl | cut -d' ' -f1)" "$(item kitz elpk-zeta from) $(item kitz elpk-zeta sha256)"
mkdir zeta2
cp kit/wheels/elpk_zeta-1.1-py3-none-any.whl zeta2/
"$ENVLOCK" pack env.lock -o kitz2 --pip-cache nocache --wheels zeta2 >/dev/null 2>err
check_eq "a wheel of the same name and version whose sha256 is not the lock's is refused (and the rebuild taken)" \
	"rebuilt" "$(item kitz2 elpk-zeta from)"
check_grep "saying so" "elpk_zeta-1.1-py3-none-any.whl': sha256 [0-9a-f]* is not the lock's [0-9a-f]* (the file pip installed from): not used" err
"$ENVLOCK" pack env.lock -o kitz2.tar.zst --pip-cache nocache --wheels zeta2 >/dev/null 2>errz
check_eq "as a .tar.zst: the wheel found wrong at its end in the one pass, the kit made again, the same warning" \
	"$(cat err)" "$(cat errz)"
rm -rf unz2 && "$ENVLOCK" bundle extract kitz2.tar.zst unz2 >/dev/null 2>&1
check_eq "and the rebuild in it" "rebuilt" "$(item unz2/kitz2 elpk-zeta from)"

# another build of the same version (other tags) is not the installed one
mkdir otherbuild
"$PYTHON" - "$seed/wheels/elpk_delta-4.2-py3-none-any.whl" otherbuild/elpk_delta-4.2-cp311-cp311-linux_x86_64.whl <<'PY'
import sys, zipfile
src, dst = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2], "w")
for i in src.infolist():
    data = src.read(i)
    if i.filename.endswith(".dist-info/WHEEL"):
        data = data.replace(b"Tag: py3-none-any", b"Tag: cp311-cp311-linux_x86_64")
    dst.writestr(i, data)
dst.close()
PY
"$ENVLOCK" pack env.lock -o kittags --pip-cache nocache --wheels otherbuild >/dev/null 2>&1
check_eq "a wheel of elpk-delta 4.2 tagged cp311-cp311-linux_x86_64 is not taken for the py3-none-any one installed" \
	"rebuilt wheels/elpk_delta-4.2-py3-none-any.whl" "$(item kittags elpk-delta from) $(item kittags elpk-delta path)"

# .tar.zst: the bundle writer's archive
"$ENVLOCK" pack env.lock -o kit.tar.zst --wheels "$seed/wheels" --add "$cudnn" --add "$runfile" --add notes.txt >/dev/null 2>&1
check_status "pack -o kit.tar.zst exits 0" 0 $?
"$ENVLOCK" bundle verify kit.tar.zst >verify.out 2>&1
check_status "envlock bundle verify passes on it" 0 $?
"$ENVLOCK" bundle extract kit.tar.zst unpacked >/dev/null 2>&1
diff -r kit unpacked/kit >diff.out 2>&1
check_status "it extracts to the same files as the folder kit (under kit/)" 0 $?
check_eq "no temporary folder left beside it" "" "$(ls -d kit.tar.zst.tmp-* kit.tmp-* 2>/dev/null)"
check_eq "the .tar.zst pack says what the folder pack says" \
	"$(sed 's/^kit      kit:/kit      KIT:/' pack.out)" "$("$ENVLOCK" pack env.lock -o kit.tar.zst --force --wheels "$seed/wheels" \
		--add "$cudnn" --add "$runfile" --add notes.txt 2>/dev/null | sed 's/^kit      kit.tar.zst:/kit      KIT:/')"
# one pass: each cache file is read by the bundle writer alone, hashed and compressed from the same reads
opened() { # opened REGEX: how often each file whose name matches was opened for reading, "COUNT PATH"
	sed -n 's/.*open\(at(AT_FDCWD, \|(\)"\([^"]*\)", O_RDONLY[^=]*= [0-9].*/\2/p' opens.out | grep -E "$1\$" | sort | uniq -c
}
if command -v strace >/dev/null 2>&1; then
	# LeakSanitizer cannot run under ptrace (make asan): leaks are checked by the runs without strace;
	# -ff: a file per thread, so no call is split over two lines ("<unfinished ...>") by another thread's;
	# open and openat: glibc opens with openat, the static (musl) binary with open
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -ff -qq -e trace=open,openat -o opens.out "$ENVLOCK" pack env.lock -o kit1pass.tar.zst \
		--wheels "$seed/wheels" >/dev/null 2>&1
	check_status "pack -o kit.tar.zst under strace exits 0" 0 $?
	cat opens.out.* >opens.out && rm -f opens.out.*
	check_eq "every conda archive is opened once (no folder, no second hashing pass)" "3 archives, each once" \
		"$(opened '\.(conda|tar\.bz2)' | awk '{ n++; if ($1 != 1) bad++ } END { print n " archives, " (bad ? bad " not once" : "each once") }')"
	# a cached wheel is opened twice before, for a few bytes: its zip magic, then its zip index and
	# METADATA say what it is; then read whole once
	check_eq "every cached wheel three times: two looks, one whole read" "" \
		"$(opened '\.whl' | grep -v '\.tmp-' | awk '$1 != 3')"
	check_eq "the cache's own file is read, not a copy" "1 $env/pkgs/zlib-1.2.13-h5eee18b_0.tar.bz2" \
		"$(opened 'zlib-1.2.13-h5eee18b_0\.tar\.bz2' | awk '{ print $1, $2 }')"
	rm -f kit1pass.tar.zst
else
	skip "one read per file: strace is not installed"
fi

# --link: the caches' files hard linked, same digests
"$ENVLOCK" pack env.lock -o kitlink --link --wheels "$seed/wheels" >/dev/null 2>&1
check_eq "--link: the conda archive is the cache's file (2 links)" "2" "$(stat -c %h kitlink/conda/zlib-1.2.13-h5eee18b_0.tar.bz2)"
check_eq "with the same sha256" "$(item kit zlib sha256)" "$(item kitlink zlib sha256)"
rm -rf kitlink

# what a kit cannot have: a changed installed file, an archive no cache has, a corrupt cache
good=$scratch/good-pkgs
mkdir "$good"
cp "$env/pkgs/xz-5.4.2-h5eee18b_0.tar.bz2" "$good/"
printf 'truncated download' >"$env/pkgs/xz-5.4.2-h5eee18b_0.tar.bz2"
rm "$env/pkgs/zlib-1.2.13-h5eee18b_0.tar.bz2"
printf 'edited by hand\n' >>"$(fact site)/elpk_gamma/data.txt"
"$ENVLOCK" pack env.lock -o kit1 --wheels "$seed/wheels" >out1 2>err1
check_status "something missing: exit 1" 1 $?
check_eq "the kit is written all the same" "yes" "$([ -f kit1/envlock.kit.json ] && [ -f kit1/envlock.lock ] && echo yes)"
check_eq "elpk-gamma is missing, the changed file named" \
	"no wheel in the caches; cannot rebuild it: '$(fact site)/elpk_gamma/data.txt' changed since pip installed it (its sha256 is not RECORD's)" \
	"$(missing kit1 elpk-gamma reason)"
check_eq "with the command that fetches it" "pip download --no-deps -d wheels elpk-gamma==0.3" "$(missing kit1 elpk-gamma fetch)"
check_eq "and no wheel of it in the kit" "none" "$(item kit1 elpk-gamma path)"
check_eq "zlib: in no cache, listed with curl and the md5 check" \
	"curl -fLo zlib-1.2.13-h5eee18b_0.tar.bz2 https://repo.anaconda.com/pkgs/main/linux-64/zlib-1.2.13-h5eee18b_0.tar.bz2 && echo '$(fact conda zlib md5)  'zlib-1.2.13-h5eee18b_0.tar.bz2 | md5sum -c -" \
	"$(missing kit1 zlib fetch)"
check_eq "xz: the cache's archive is not the lock's, so it is not used" \
	"'$env/pkgs/xz-5.4.2-h5eee18b_0.tar.bz2' in the cache does not match the lock: sha256 $(printf 'truncated download' | sha256sum | cut -d' ' -f1) is not the lock's $(fact conda xz sha256)" \
	"$(missing kit1 xz reason)"
check_grep "and a warning says so" "xz-5.4.2-h5eee18b_0.tar.bz2': sha256 .* a corrupt cache, not used" err1
# the same as a .tar.zst: the one-pass archive finds xz wrong at its end, drops what it wrote and packs again
"$ENVLOCK" pack env.lock -o kit1.tar.zst --wheels "$seed/wheels" >out1z 2>err1z
check_status ".tar.zst with a corrupt cache: exit 1 all the same" 1 $?
check_eq "the same lines as the folder's pack" "$(sed 's/^kit      kit1:/kit      K:/' out1)" \
	"$(sed 's/^kit      kit1.tar.zst:/kit      K:/' out1z)"
check_eq "the warning once, as the folder's pack gives it" "$(cat err1)" "$(cat err1z)"
"$ENVLOCK" bundle verify kit1.tar.zst >/dev/null 2>&1
check_status "the archive written is a good bundle" 0 $?
rm -rf unpacked1 && "$ENVLOCK" bundle extract kit1.tar.zst unpacked1 >/dev/null 2>&1
diff -r kit1 unpacked1/kit1 >diff1.out 2>&1
check_status "with the folder kit's files: xz left out" 0 $?
check_eq "nothing left beside it" "" "$(ls -d kit1.tar.zst.tmp-* kit1.tar.zst.* .kit1.tar.zst* 2>/dev/null)"
check_eq "the manifest's missing list: conda then wheel, by name" "conda:xz conda:zlib wheel:elpk-gamma" \
	"$("$PYTHON" -c 'import json,sys; print(" ".join("%s:%s" % (i["kind"], i["name"]) for i in json.load(open(sys.argv[1]))["missing"]))' kit1/envlock.kit.json)"
# a lock with an md5 and no sha256 (an older conda's records): the md5 is read and checked
"$PYTHON" -c 'import json,sys
d = json.load(open(sys.argv[1]))
for p in d["conda"]["packages"]:
    p.pop("sha256", None)
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)' env.lock md5only.lock
"$ENVLOCK" pack md5only.lock -o kitmd5 --wheels "$seed/wheels" >out5 2>err5
check_eq "md5 only: the corrupt cache found by its md5" \
	"'$env/pkgs/xz-5.4.2-h5eee18b_0.tar.bz2' in the cache does not match the lock: md5 $(printf 'truncated download' | md5sum | cut -d' ' -f1) is not the lock's $(fact conda xz md5)" \
	"$(missing kitmd5 xz reason)"
check_eq "md5 only: the good archive's md5 as md5sum gives it" "$(md5sum kitmd5/conda/tzdata-2023c-h04d1e81_0.conda | cut -d' ' -f1)" \
	"$(item kitmd5 conda/tzdata-2023c-h04d1e81_0.conda md5)"
check_eq "with sha256 in the lock: the kit carries the lock's md5, the archive's own" "$(md5sum kit1/conda/tzdata-2023c-h04d1e81_0.conda | cut -d' ' -f1)" \
	"$(item kit1 conda/tzdata-2023c-h04d1e81_0.conda md5)"
PIP_EXTRA_INDEX_URL=https://mirror.example/simple "$ENVLOCK" save -q --conda-prefix "$env" --python "$env/bin/python" -o mirror.lock 2>/dev/null
"$ENVLOCK" pack mirror.lock -o kitm --wheels "$seed/wheels" >/dev/null 2>&1
check_eq "a lock that records pip's index options: the fetch command has them (export's reading of the lock)" \
	"pip download --no-deps -d wheels elpk-gamma==0.3 --extra-index-url https://mirror.example/simple" "$(missing kitm elpk-gamma fetch)"
check_grep "the output lists each with its fetch command" "^         fetch: pip download --no-deps -d wheels elpk-gamma==0.3$" out1
# the fetch command does what it says
(cd "$scratch" && mkdir -p fetched && cd fetched && cp "$good/xz-5.4.2-h5eee18b_0.tar.bz2" . &&
	echo "$(fact conda xz md5)  xz-5.4.2-h5eee18b_0.tar.bz2" | md5sum -c - >/dev/null 2>&1)
check_status "the md5 a fetch command checks is the archive's" 0 $?
"$ENVLOCK" pack env.lock -o kit2 --wheels "$seed/wheels" --conda-pkgs "$good" >out2 2>err2
check_eq "a good copy in --conda-pkgs is taken instead" "$good/xz-5.4.2-h5eee18b_0.tar.bz2" "$(item kit2 xz from)"
CONDA_PKGS_DIRS="/nonexistent,$good" "$ENVLOCK" pack env.lock -o kit3 --wheels "$seed/wheels" >/dev/null 2>&1
check_eq "and one in \$CONDA_PKGS_DIRS (comma-separated, as conda reads it)" "$good/xz-5.4.2-h5eee18b_0.tar.bz2" "$(item kit3 xz from)"

# a hostile lock: a url whose file name is "..", or no package's
"$PYTHON" - env.lock hostile.lock <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = {x["name"]: x for x in d["conda"]["packages"]}
p["tzdata"]["url"] = "https://repo.anaconda.com/pkgs/main/linux-64/.."
p["zlib"]["url"] = "file:///etc/passwd"
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
"$ENVLOCK" pack hostile.lock -o kith --wheels "$seed/wheels" --conda-pkgs "$good" >/dev/null 2>&1
check_status "a lock whose conda urls name no package file: exit 1" 1 $?
check_eq "neither is looked for, and the fetch command is conda's, not a curl -o of that name" \
	"its url does not end in a package file name|conda create --download-only --no-deps --yes -n envlock-kit-fetch https://repo.anaconda.com/pkgs/main/linux-64::tzdata=2023c=h04d1e81_0" \
	"$(missing kith tzdata reason)|$(missing kith tzdata fetch)"
check_eq "nothing in conda/ but the good one" "xz-5.4.2-h5eee18b_0.tar.bz2" "$(ls kith/conda)"
check_eq "the rebuilt wheel has a new file's mode" "644" "$(stat -c %a kit/wheels/elpk_gamma-0.3-py3-none-any.whl)"

# an installed file removed: named too
mv "$(fact site)/elpk_beta/data.txt" beta-data.txt
"$ENVLOCK" pack env.lock -o kitgone --pip-cache nocache --wheels "$seed/wheels" >/dev/null 2>&1
check_eq "a file RECORD lists that is gone: the rebuild says which" \
	"no wheel in the caches; cannot rebuild it: '$(fact site)/elpk_beta/data.txt': no such file or directory" \
	"$(missing kitgone elpk-beta reason)"
mv beta-data.txt "$(fact site)/elpk_beta/data.txt"

# bad input: one line, exit 2, nothing left behind
"$ENVLOCK" pack nothere.lock -o bad1 >out 2>err
check_status "a missing lock: exit 2" 2 $?
check_eq "one line naming it" "1" "$(wc -l <err | tr -d ' ')"
check_grep "naming the file" "nothere.lock" err
printf 'this is not JSON\n' >junk.lock
"$ENVLOCK" pack junk.lock -o bad2 >out 2>err
check_status "a lock that is not JSON: exit 2" 2 $?
check_eq "one line" "1" "$(wc -l <err | tr -d ' ')"
check_grep "naming the file" "junk.lock" err
mkdir busy && echo x >busy/keep
"$ENVLOCK" pack env.lock -o busy >out 2>err
check_status "-o an existing non-empty folder: exit 2" 2 $?
check_eq "one line saying so" "envlock: pack: 'busy': exists and is not empty (--force replaces it)" "$(cat err)"
check_eq "the folder is untouched" "keep" "$(ls busy)"
"$ENVLOCK" pack env.lock -o busy --force --wheels "$seed/wheels" >/dev/null 2>&1
check_eq "--force replaces it with the kit" "envlock.kit.json" "$(ls busy | grep kit.json)"
"$ENVLOCK" pack env.lock -o /proc/envlock-kit >out 2>err
check_status "an unwritable output: exit 2" 2 $?
check_eq "in one line" "1" "$(wc -l <err | tr -d ' ')"
"$ENVLOCK" pack env.lock -o kit4 --add nothere.run >out 2>err
check_status "--add of a file that is not there: exit 2" 2 $?
check_grep "naming it" "^envlock: pack: --add 'nothere.run': no such file or directory$" err
check_eq "nothing left behind by any of them" "" "$(ls -d bad1 bad2 kit4 ./*.tmp-* busy.old-* 2>/dev/null)"
"$ENVLOCK" pack env.lock -o kit5 --wheels whels >out 2>err
check_status "--wheels of a folder that is not there: exit 2" 2 $?
check_eq "naming it" "envlock: pack: --wheels 'whels': no such file or directory" "$(cat err)"
"$ENVLOCK" pack env.lock -o kit5 --pip-cache env.lock >out 2>err
check_eq "--pip-cache of a file" "envlock: pack: --pip-cache 'env.lock': not a folder" "$(cat err)"
check_eq "nothing left behind" "" "$(ls -d kit5 kit5.tmp-* 2>/dev/null)"
mkdir empty
"$ENVLOCK" pack env.lock -o empty --wheels "$seed/wheels" >/dev/null 2>&1
check_eq "an empty folder is fine as -o" "envlock.kit.json" "$(ls empty | grep kit.json)"
"$ENVLOCK" pack env.lock >out 2>err
check_status "no -o: usage, exit 2" 2 $?
