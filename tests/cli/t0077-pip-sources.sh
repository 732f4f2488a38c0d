#!/bin/sh
# save: where each pip distribution came from. pip's index options from its
# configuration files and PIP_* variables, combined as pip combines them
# (checked against the real pip reading the same files), without
# credentials, bad URLs left out with a warning; and each distribution's
# origin: direct_url, a configured index, or inferred (torch's +cu102,
# mmcv-full's page), on the seed root's copy.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
tree=$scratch/tree
cp -R "$FIXTURES/ubuntu1604-mmdet" "$tree" || exit 1
origins() {
	"$PYTHON" - "$1" <<'PY'
import json, sys
for d in json.load(open(sys.argv[1]))["pip"]["distributions"]:
    o = d.get("origin")
    if o:
        print(d["name"], o["kind"], o.get("option", "-"), o.get("url", "-"), o.get("from", "-"))
PY
}
options() {
	"$PYTHON" -c 'import json,sys; [print(o["option"], o["url"], o["from"]) for o in json.load(open(sys.argv[1]))["pip"].get("index_options", [])]' "$1"
}

# the seed root as it is: no pip configuration, so the inferred origins only
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q --root "$tree" -o plain.lock 2>/dev/null
check_eq "no pip configuration: no index options" "" "$(options plain.lock)"
check_eq "torch and torchvision: PyTorch's cu102 index, mmcv-full: OpenMMLab's page for cu102 and torch 1.10" \
	"mmcv-full inferred find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html -
torch inferred extra-index-url https://download.pytorch.org/whl/cu102 -
torchvision inferred extra-index-url https://download.pytorch.org/whl/cu102 -" "$(origins plain.lock)"
dist() { "$PYTHON" -c 'import json,sys; d=[x for x in json.load(open(sys.argv[1]))["pip"]["distributions"] if x["name"]==sys.argv[2]][0]; print(json.dumps(d.get("origin", {}).get(sys.argv[3])))' "$@"; }
check_eq "an inferred one says so, and from what" \
	"\"inferred from the local version +cu102: PyTorch's index for that variant; pip records no index\"" \
	"$(dist plain.lock torch note)"
check_eq "mmcv-full's names the torch and CUDA it is for" \
	"\"inferred from torch 1.10 built for CUDA 10.2 (frameworks.torch): OpenMMLab's pre-built wheels for them; pip records no index\"" \
	"$(dist plain.lock mmcv-full note)"
check_eq "conda's numpy, whose direct_url is conda's build folder, has no origin" "null" "$(dist plain.lock numpy kind)"

# pip's configuration, with credentials and URLs no command may get
mkdir -p "$tree/etc/xdg/pip" "$tree/home/alice/.config/pip" "$tree/home/alice/.pip"
cat >"$tree/etc/xdg/pip/pip.conf" <<'EOF'
[global]
index-url = https://alice:s3cret@pypi.mirror.example/simple
EOF
long=https://x.example/$(printf '%05000d' 0)
cat >"$tree/etc/pip.conf" <<EOF
# the site's indexes
[global]
extra-index-url =
    https://download.pytorch.org/whl/cu102/
    ftp://old.example/simple
    https://ok.example/\$(id)
    $long
    https://mirror.example/extra
EOF
printf '[global]\nindex_url = https://bob:hunter2@user.mirror.example/simple\n' >"$tree/home/alice/.config/pip/pip.conf"
printf '[install]\nfind-links = /srv/wheels\n' >"$tree/home/alice/.pip/pip.conf"
echo 'PIP_FIND_LINKS="https://tok3n@links.example/f.html /srv/more"' >>"$tree/etc/environment"
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save --root "$tree" -o conf.lock 2>err
check_status "save with pip's configuration" 0 $?
check_eq "index-url from the user file (over the global one), extra-index-url from /etc/pip.conf, find-links from PIP_FIND_LINKS (over the files)" \
	"index-url https://user.mirror.example/simple /home/alice/.config/pip/pip.conf
extra-index-url https://download.pytorch.org/whl/cu102/ /etc/pip.conf
extra-index-url https://mirror.example/extra /etc/pip.conf
find-links https://links.example/f.html PIP_FIND_LINKS
find-links file:///srv/more PIP_FIND_LINKS" "$(options conf.lock)"
check_eq "no password, user or token in the lock or on stderr" "0 0" \
	"$(grep -c -e s3cret -e hunter2 -e tok3n -e 'bob' conf.lock) $(grep -c -e s3cret -e hunter2 -e tok3n -e bob err)"
check_eq "the URLs no command may get: left out, one warning each, naming the file" \
	"envlock: warning: '/etc/pip.conf': extra-index-url 'ftp://old.example/simple': is not an http(s) or file URL, not recorded
envlock: warning: '/etc/pip.conf': extra-index-url 'https://ok.example/\$(id)': contains a shell metacharacter or space, not recorded
envlock: warning: '/etc/pip.conf': extra-index-url 'https://x.example/000000000000000000000000000000000000000000...': is too long, not recorded" \
	"$(grep "pip.conf" err)"
check_eq "torch is served by the configured index: its origin is config, not inferred" \
	"mmcv-full inferred find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html -
torch config extra-index-url https://download.pytorch.org/whl/cu102/ /etc/pip.conf
torchvision config extra-index-url https://download.pytorch.org/whl/cu102/ /etc/pip.conf" "$(origins conf.lock)"
if validate conf.lock >v.out 2>&1; then ok "the lock is valid against the schema"; else not_ok "the lock is valid against the schema"; sed 's/^/#   /' v.out; fi
"$ENVLOCK" export conf.lock --format requirements -o conf.txt 2>/dev/null
check_eq "export: the configured options, then the inferred page, before the pins" \
	"--index-url https://user.mirror.example/simple
--extra-index-url https://download.pytorch.org/whl/cu102/
--extra-index-url https://mirror.example/extra
--find-links https://links.example/f.html
--find-links file:///srv/more
--find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html" "$(sed -n '/^[a-zA-Z]/q; /^--/p' conf.txt)"
printf '[global]\n' >"$tree/etc/pip.conf"
echo 'PIP_CONFIG_FILE=/dev/null' >>"$tree/etc/environment"
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q --root "$tree" -o devnull.lock 2>/dev/null
check_eq "PIP_CONFIG_FILE=/dev/null: no file is read, the variables still count" \
	"find-links https://links.example/f.html PIP_FIND_LINKS
find-links file:///srv/more PIP_FIND_LINKS" "$(options devnull.lock)"

# the environment's own file (pip's site file, sys.prefix/pip.conf); one that
# configparser refuses, and pip with it, counts for nothing, and says so
t3=$scratch/t3
cp -R "$FIXTURES/ubuntu1604-mmdet" "$t3" || exit 1
site=/home/alice/miniconda3/envs/mmdet/pip.conf
printf '[install]\nextra-index-url = https://site.example/simple\n' >"$t3$site"
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q --root "$t3" -o site.lock 2>/dev/null
check_eq "the environment's pip.conf is read" "extra-index-url https://site.example/simple $site" "$(options site.lock)"
printf '[global]\nindex-url = https://site.example/simple\nnot a setting\n' >"$t3$site"
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save --root "$t3" -o site.lock 2>err
check_eq "a file with a line that is no setting: nothing of it" "" "$(options site.lock)"
check_eq "and a warning naming it and the line" \
	"envlock: warning: '$site': line 3 is not 'key = value', the file is left out" "$(grep pip.conf err)"

# the same files read by the real pip: what it says it looks in is what the lock says
if ! "$PYTHON" -m venv venv >venv.log 2>&1 || ! venv/bin/pip --version >/dev/null 2>&1; then
	skip "pip reads the same configuration" "no python3 -m venv with pip here ($(tail -n 1 venv.log))"
	exit 0
fi
t2=$scratch/t2
cp -R "$FIXTURES/ubuntu1604-mmdet" "$t2" || exit 1
mkdir -p "$t2/etc/xdg/pip" "$t2/home/alice/.config/pip" "$t2/home/alice/.pip"
echo 'PIP_EXTRA_INDEX_URL=file:///srv/env-extra' >>"$t2/etc/environment"
# [install] of the global file beats [global] of the user's: pip applies all of
# [global], then all of [install], then PIP_* (cli/parser.py)
# (and a value of another option, on lines of its own, is no line of ours)
printf '[global]\nindex-url = file:///srv/global-index\ntrusted-host =\n    pypi.example\n[install]\nindex-url = file:///srv/install-index\n' \
	>"$t2/etc/xdg/pip/pip.conf"
printf '[global]\nindex-url = file:///srv/user-index\nfind-links =\n  file:///srv/a\n  file:///srv/b\n' \
	>"$t2/home/alice/.config/pip/pip.conf"
printf '[global]\nfind-links = file:///srv/legacy\n' >"$t2/home/alice/.pip/pip.conf"
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q --root "$t2" -o t2.lock 2>/dev/null
want=$("$PYTHON" - t2.lock <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["pip"].get("index_options", [])
ix = [x["url"] for x in o if x["option"] in ("index-url", "extra-index-url")]
links = [x["url"] for x in o if x["option"] == "find-links"]
print("Looking in indexes: " + ", ".join(ix))
print("Looking in links: " + ", ".join(links))
PY
)
check_eq "the lock's view" "Looking in indexes: file:///srv/install-index, file:///srv/env-extra
Looking in links: file:///srv/a, file:///srv/b" "$want"
# pip is pointed at the tree's files: its global folder, its HOME, the tree's variable
env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_CONFIG_FILE XDG_CONFIG_DIRS="$t2/etc/xdg" HOME="$t2/home/alice" \
	PIP_EXTRA_INDEX_URL=file:///srv/env-extra PIP_DISABLE_PIP_VERSION_CHECK=1 \
	venv/bin/pip install --dry-run --no-deps envlock-no-such-project==1 >pip.out 2>&1
check_eq "pip, reading the same files, says the same" "$want" "$(grep '^Looking in' pip.out)"

# a site dir of many distributions is read on every core (EL_PIP_BATCH entries
# a job): what is recorded and what is said keep the folder's order
t3=$scratch/many
cp -R "$FIXTURES/ubuntu1604-mmdet" "$t3" || exit 1
site=$t3/home/alice/miniconda3/envs/mmdet/lib/python3.7/site-packages
i=0
while [ $i -lt 120 ]; do
	d=$site/zzpkg$(printf %03d $i)-1.$i.dist-info
	mkdir "$d"
	printf 'Metadata-Version: 2.1\nName: zzpkg%03d\nVersion: 1.%d\n\n' $i $i >"$d/METADATA"
	echo pip >"$d/INSTALLER"
	i=$((i + 1))
done
rm "$site/zzpkg007-1.7.dist-info/METADATA"
printf 'Name: zzpkg045\0\nVersion: 1\n\n' >"$site/zzpkg045-1.45.dist-info/METADATA"
echo '{not json' >"$site/zzpkg090-1.90.dist-info/direct_url.json"
printf 'pip\0' >"$site/zzpkg119-1.119.dist-info/INSTALLER"
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save --root "$t3" -o many1.lock >/dev/null 2>many1.err
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q --root "$t3" -o many2.lock 2>/dev/null
check_eq "120 more distributions: the 118 readable ones are recorded, in name order" \
	"$(i=0; while [ $i -lt 120 ]; do [ $i = 7 ] || [ $i = 45 ] || printf 'zzpkg%03d\n' $i; i=$((i + 1)); done)" \
	"$("$PYTHON" -c 'import json,sys; [print(d["name"]) for d in json.load(open(sys.argv[1]))["pip"]["distributions"] if d["name"].startswith("zzpkg")]' many1.lock)"
w="'$site/zzpkg007-1.7.dist-info': no METADATA file, skipped
'$site/zzpkg045-1.45.dist-info': METADATA is binary data, skipped
'$site/zzpkg090-1.90.dist-info/direct_url.json': not a valid JSON object, ignored
'$site/zzpkg119-1.119.dist-info/INSTALLER': binary data where text was expected, ignored"
check_eq "their warnings, in the folder's order, in the lock" "$(echo "$w" | sed "s|$t3||g")" \
	"$("$PYTHON" -c 'import json,sys; [print(w) for w in json.load(open(sys.argv[1]))["warnings"] if "zzpkg" in w]' many1.lock)"
check_eq "and as save said them" "$(echo "$w" | sed "s|$t3||g")" "$(grep zzpkg many1.err | sed 's/^envlock: warning: //')"
check_eq "two saves of the tree are the same bytes" "" "$(cmp many1.lock many2.lock 2>&1)"
