#!/bin/sh
# Privacy: secrets never reach a lock, and save/report/bundle --redact leave
# out who and where. A copy of the fixture box (user alice, /home/alice)
# gets a host name, a W&B api_key (in the config and in --cfg-options) and a
# Hugging Face token in a config, a password in the config's load_from URL,
# credentials and a token in git remotes, a pip index and a conda channel;
# every output format (the lock, show, report md/LaTeX/HTML/JSON/text, the
# bundle's files) is searched for each planted value. Without --redact the
# secrets are absent while the home folder is kept; with it the user and
# host names and the GPUs' UUIDs are gone too, and the redacted lock loads,
# validates, says what was redacted, and diffs.
. "$(dirname "$0")/lib.sh"

if ! "$ENVLOCK" save --help 2>&1 | grep -q -- '--redact'; then
	skip "save --redact" "this envlock has no --redact option yet"
	exit 0
fi

tree=$scratch/tree
cp -R "$FIXTURES/ubuntu1604-mmdet" "$tree" || exit 1
host=plantedhost-q7
echo "$host" >"$tree/etc/hostname"
echo "$host" >"$tree/proc/sys/kernel/hostname"

# pip's index with a password; an extra index whose token is in the query (refused, with a warning)
cat >"$tree/etc/pip.conf" <<'EOF'
[global]
index-url = https://pipuser:pippassPLANT@pypi.mirror.example/simple
extra-index-url = https://mirror.example/extra?private_token=pipqueryPLANT
EOF

# a package from a private anaconda.org channel: the token is in the path, and one in the query
meta=$tree/home/alice/miniconda3/envs/mmdet/conda-meta/_libgcc_mutex-0.1-main.json
"$PYTHON" - "$meta" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['channel'] = 'https://conda.anaconda.org/t/condatokenPLANT/mychan/linux-64'
d['url'] = 'https://conda.anaconda.org/t/condatokenPLANT/mychan/linux-64/_libgcc_mutex-0.1-main.conda?token=condaqueryPLANT'
json.dump(d, open(sys.argv[1], 'w'))
PY

# the experiment's repository and its config, with what W&B and the Hugging Face hub want
mkdir -p proj/configs
cat >proj/configs/wandb.py <<'EOF'
model = dict(type='FasterRCNN')
log_config = dict(
    interval=50,
    hooks=[
        dict(type='TextLoggerHook'),
        dict(type='WandbLoggerHook', init_kwargs=dict(project='mmdet', api_key='wandbkey0PLANT9f8e7d6c5b4a')),
    ])
hf_token = "hf_PLANTtoken0123456789abcdefghijklmn"
# mmdet's proposal field: a key's name alone masks nothing
train = dict(fields=[dict(key='proposals')])
load_from = 'https://ckptuser:ckptpassPLANT@download.example/faster.pth'
work_dir = '/home/alice/work_dirs/faster'
EOF
git -C proj init -q &&
	git -C proj add . &&
	git -C proj -c user.name=alice -c user.email=alice@example.com commit -qm 'faster rcnn with wandb' &&
	git -C proj remote add origin https://gituser:gitpassPLANT@github.com/alice/proj.git &&
	git -C proj remote add mirror 'https://gitlab.example/alice/proj.git?private_token=gitqueryPLANT' ||
	exit 1

secrets="wandbkeyPLANT clikeyPLANT hf_PLANTtoken ckptpassPLANT pippassPLANT pipqueryPLANT condatokenPLANT condaqueryPLANT gitpassPLANT gitqueryPLANT"
# the fixture's own /etc/environment secrets, never recorded either
secrets="$secrets hf_FixtureTokenDoNotRecord 0123456789abcdef0123456789abcdef01234567 hunter2 wJalrXUtnFEMI"
# who and where: the user, the host, and a GPU board's UUID (the fixture's first V100)
gpu=GPU-0718119d-ad79-9226-f2ec-72bb2f71ab2c
people="alice $host $gpu"

save() {
	SOURCE_DATE_EPOCH=0 "$ENVLOCK" save --root "$tree" --repo proj --config proj/configs/wandb.py \
		--cfg-options log_config.hooks.1.init_kwargs.api_key=clikey0PLANT9f8e7d6c5b4a3 --cfg-options optimizer.lr=0.01 "$@"
}

# every output of one lock into the folder out.NAME
outputs() {
	lock=$1 dir=out.$2
	shift 2
	mkdir -p "$dir"
	cp "$lock" "$dir/lock.json"
	"$ENVLOCK" show "$lock" >"$dir/show.txt" 2>"$dir/show.err"
	for f in md latex html json text; do
		"$ENVLOCK" report "$lock" --format $f "$@" -o "$dir/report.$f" 2>"$dir/report-$f.err" ||
			echo "report --format $f failed" >>"$dir/failed"
	done
	mkdir -p work
	echo "epoch 1: loss 0.5" >work/train.log
	"$ENVLOCK" bundle work --lock "$lock" "$@" -o "$dir/work.tar.zst" -q >/dev/null 2>"$dir/bundle.err" &&
		"$ENVLOCK" bundle extract "$dir/work.tar.zst" "$dir/bundle" >/dev/null 2>>"$dir/bundle.err" &&
		"$ENVLOCK" bundle list "$dir/work.tar.zst" >"$dir/bundle-list.txt" 2>>"$dir/bundle.err" ||
		echo "bundle failed: $(cat "$dir/bundle.err")" >>"$dir/failed"
	rm -f "$dir/work.tar.zst"
}

# which of the words appear in any file under DIR, as "word:file" lines
found() {
	dir=$1
	shift
	for w in "$@"; do
		grep -rl -F -- "$w" "$dir" 2>/dev/null | sed "s|^$dir/|$w:|"
	done
}

# ---- without --redact: no secret anywhere, the home folder and the host kept
save -o plain.json 2>plain.err
check_status "save of the planted tree" 0 $?
check_eq "the refused index's warning names the parameter, not its token" \
	"envlock: warning: '/etc/pip.conf': extra-index-url 'https://mirror.example/extra?private_token=<secret>': contains a shell metacharacter or space, not recorded" \
	"$(grep extra-index-url plain.err)"
outputs plain.json plain
check_eq "every output of the plain lock was made" "" "$(cat out.plain/failed 2>/dev/null)"
check_eq "no planted secret in the plain lock, show, reports or bundle" "" "$(found out.plain $secrets)"
check_eq "nor on save's stderr" "" "$(found plain.err $secrets)"
check_grep "the plain lock keeps the home folder" '/home/alice/miniconda3/envs/mmdet' plain.json
check_eq "and the host name" "$host" "$(jget plain.json host.hostname)"
check_grep "and the GPUs' UUIDs" "$gpu" plain.json
"$PYTHON" - plain.json >plain.facts <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d['configs']['files'][0]
ev = f['effective']['value']
print(ev['log_config']['hooks'][1]['init_kwargs']['api_key'], ev['log_config']['hooks'][1]['init_kwargs']['project'])
print(ev['hf_token'], ev['load_from'])
print(' '.join(f['effective']['cfg_options']))
print(' '.join(sorted(r['url'] for r in d['repos']['repositories'][0]['remotes'])))
print(' '.join(o['url'] for o in d['pip'].get('index_options', [])))
p = [p for p in d['conda']['packages'] if p['name'] == '_libgcc_mutex'][0]
print(p['channel'], p['url'])
print(json.dumps(d['redacted'], sort_keys=True))
PY
# (11 secrets: the load_from URL is masked in the config and again in the files its effective value names)
check_eq "masked, each where it was: the config's values, the URLs' credentials and tokens" \
	"<secret> mmdet
<secret> https://download.example/faster.pth
log_config.hooks.1.init_kwargs.api_key=<secret> optimizer.lr=0.01
https://github.com/alice/proj.git https://gitlab.example/alice/proj.git
https://pypi.mirror.example/simple
https://conda.anaconda.org/mychan/linux-64 https://conda.anaconda.org/mychan/linux-64/_libgcc_mutex-0.1-main.conda
{\"all\": false, \"classes\": [\"secrets\"], \"counts\": {\"secrets\": 11}, \"masked\": [{\"config\": \"proj/configs/wandb.py\", \"key\": \"log_config.hooks.init_kwargs.api_key\"}, {\"config\": \"proj/configs/wandb.py\", \"key\": \"hf_token\"}, {\"config\": \"proj/configs/wandb.py\", \"key\": \"load_from\"}, {\"config\": \"proj/configs/wandb.py\", \"key\": \"--cfg-options log_config.hooks.1.init_kwargs.api_key\"}]}" "$(cat plain.facts)"
check_grep "a field named key keeps its value, in the text" "fields=\\[dict(key='proposals')\\]" plain.json
check_eq "and in the effective value" proposals \
	"$("$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['configs']['files'][0]['effective']['value']['train']['fields'][0]['key'])" plain.json)"
check_grep "the config's text keeps its shape, the value masked" \
	"init_kwargs=dict(project='mmdet', api_key='<secret>')" plain.json
check_eq "the plain lock is valid" valid "$(schema_errors plain.json)"
mkdir -p restored
"$ENVLOCK" restore plain.json --only configs --dry-run --dest restored >restore.out 2>&1
check_grep "restore says a masked config is not the file, and why" "save masked a secret in it (<secret>)" restore.out

# ---- save --redact: neither secrets nor who or where
save --redact -o red.json 2>red.err
check_status "save --redact" 0 $?
outputs red.json red
check_eq "every output of the redacted lock was made" "" "$(cat out.red/failed 2>/dev/null)"
check_eq "no planted secret, user or host name in the redacted lock, show, reports or bundle" "" \
	"$(found out.red $secrets $people)"
check_eq "the redacted lock is valid" valid "$(schema_errors red.json)"
"$ENVLOCK" show red.json >/dev/null 2>show.err
check_status "the redacted lock loads" 0 $?
check_eq "its id is of its content (nothing said on load)" "" "$(cat show.err)"
"$PYTHON" - red.json plain.json >red.facts <<'PY'
import json, re, sys
d, p = (json.load(open(a)) for a in sys.argv[1:])
r = d['redacted']
users = r['counts'].pop('users')
print(json.dumps(r, sort_keys=True), 'users', users > 100)
print(' '.join(g.get('gpu_uuid', g.get('uuid', '-')) for g in d['gpu']['devices']))
print(d['host']['hostname'], d['conda']['prefix'], d['python']['executable'])
env = d['env']['variables']
print('names kept' if sorted(env) == sorted(p['env']['variables']) else 'names differ',
      'values replaced' if all(re.fullmatch(r'<env[0-9]+>', v) for v in env.values()) else 'values kept')
# the same input, the same placeholder: CONDA_PREFIX's value is conda.prefix's in the plain lock
same = [k for k, v in p['env']['variables'].items() if v == p['env']['variables']['CONDA_PREFIX']]
print(len({env[k] for k in same}))
print(' '.join(sorted(r['url'] for r in d['repos']['repositories'][0]['remotes'])))
print(d['configs']['files'][0]['effective']['value']['work_dir'])
# alice, and conda's build folder (/home/conda/feedstock_root) in numpy's direct_url
ids = set(re.findall(r'<user[0-9]+>', json.dumps(d)))
print(' '.join(sorted(ids)))
PY
check_eq "what was redacted; the placeholders, one per user, host and value" \
	"{\"all\": true, \"classes\": [\"secrets\", \"users\", \"hosts\", \"urls\", \"env\", \"devices\"], \"counts\": {\"devices\": 2, \"env\": 8, \"hosts\": 1, \"secrets\": 11, \"urls\": 1}, \"masked\": [{\"config\": \"proj/configs/wandb.py\", \"key\": \"log_config.hooks.init_kwargs.api_key\"}, {\"config\": \"proj/configs/wandb.py\", \"key\": \"hf_token\"}, {\"config\": \"proj/configs/wandb.py\", \"key\": \"load_from\"}, {\"config\": \"proj/configs/wandb.py\", \"key\": \"--cfg-options log_config.hooks.1.init_kwargs.api_key\"}]} users True
GPU-<gpu1> GPU-<gpu2>
<host1> /home/<user1>/miniconda3/envs/mmdet /home/<user1>/miniconda3/envs/mmdet/bin/python3.7
names kept values replaced
1
https://github.com/<user1>/proj.git https://gitlab.example/<user1>/proj.git
/home/<user1>/work_dirs/faster
<user1> <user2>" "$(cat red.facts)"

# stable: a second redacted save is the same lock; the plain one differs from it
save --redact -o red2.json 2>/dev/null
check_eq "a second save --redact has the same id" "$(jget red.json id)" "$(jget red2.json id)"
"$ENVLOCK" diff red.json red2.json >diff.same 2>&1
check_status "diff of two redacted saves" 0 $?
"$ENVLOCK" diff plain.json red.json >diff.out 2>&1
check_status "diff of the plain and the redacted lock" 1 $?
check_grep "the diff shows the placeholder for the prefix" '/home/alice/miniconda3/envs/mmdet → /home/<user1>/miniconda3/envs/mmdet' diff.out
if [ "$(jget plain.json id)" != "$(jget red.json id)" ]; then ok "the redacted lock's id is not the plain one's"; else not_ok "the redacted lock's id is not the plain one's"; fi

# ---- report --redact and bundle --redact of the plain lock: what they print and seal is redacted
outputs plain.json late --redact
check_eq "every output of report --redact and bundle --redact was made" "" "$(cat out.late/failed 2>/dev/null)"
check_eq "no planted secret, user or host name from report --redact or bundle --redact" "" \
	"$(found out.late/report.md out.late/report.latex out.late/report.html out.late/report.json out.late/report.text out.late/bundle \
		$secrets $people)"
check_eq "the bundle's lock is the lock save --redact writes" "$(jget red.json id)" "$(jget out.late/bundle/envlock.lock.json id)"

# ---- bundle --redact of this machine: its own host name is not sealed
me=$(cat /proc/sys/kernel/hostname 2>/dev/null || hostname)
mkdir -p live
echo "epoch 1" >live/train.log
"$ENVLOCK" bundle live --redact -q -o live.tar.zst >/dev/null 2>live.err &&
	"$ENVLOCK" bundle extract live.tar.zst live.out >/dev/null 2>>live.err
check_status "bundle --redact of this machine" 0 $?
if [ ${#me} -lt 3 ] || [ "$me" = localhost ]; then
	skip "this machine's host name is not in its redacted bundle" "the host name '$me' is too short or generic to search for"
else
	check_eq "this machine's host name is not in its redacted bundle" "" "$(found live.out "$me")"
fi
