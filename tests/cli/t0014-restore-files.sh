#!/bin/sh
# envlock restore: repositories (libgit2: clone from a local remote, check
# out the commit, apply the recorded patch; local changes left alone),
# configs written back with a backup, checkpoints verified only; a hostile
# lock refused before anything runs; this machine's own lock needs
# nothing; and a round trip from a fixture lock into an empty sandbox.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
STANDIN=$top/tests/restore/standin.py
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_CONFIG_NOSYSTEM=1

# --- repositories ----------------------------------------------------------
git init -q -b main origin
printf 'lr = 0.02\n' >origin/train.py && git -C origin add train.py && git -C origin commit -qm one
c1=$(git -C origin rev-parse HEAD)
printf 'lr = 0.01\n' >origin/train.py && git -C origin commit -qam two
c2=$(git -C origin rev-parse HEAD)
git clone -q origin proj && git -C proj checkout -q "$c1"
printf 'lr = 0.02\nwarmup = 500\n' >proj/train.py
mkdir -p cfg/_base_ ckpt
printf "_base_ = ['_base_/runtime.py']\nmodel = dict(type='FasterRCNN')\n" >cfg/frcnn.py
printf 'log_level = "INFO"\n' >cfg/_base_/runtime.py
head -c 100000 /dev/urandom >ckpt/epoch_1.pth
"$ENVLOCK" save --repo proj --config cfg/frcnn.py --checkpoint ckpt/epoch_1.pth -o P.lock 2>/dev/null
check_eq "the lock has the detached commit" "$c1" "$(jget P.lock repos.repositories.0.head.commit)"

mkdir D
"$ENVLOCK" restore P.lock --dest D --only repos --only configs --only checkpoints --yes >out 2>err
check_status "restore into an empty folder: the checkpoint is missing (manual)" 1 $?
check_eq "cloned and checked out at the commit" "$c1" "$(git -C D/proj rev-parse HEAD)"
check_eq "the recorded patch applied" "$(cat proj/train.py)" "$(cat D/proj/train.py)"
check_eq "the config written back" "$(cat cfg/frcnn.py)" "$(cat D/cfg/frcnn.py)"
check_eq "its _base_ written back" "$(cat cfg/_base_/runtime.py)" "$(cat D/cfg/_base_/runtime.py)"
check_grep "the checkpoint: manual, never downloaded" "checkpoint ckpt/epoch_1.pth: missing" out
check_eq "no weights invented" "" "$(ls D/ckpt 2>/dev/null)"
mkdir -p D/ckpt && cp ckpt/epoch_1.pth D/ckpt/
"$ENVLOCK" restore P.lock --dest D --only repos --only configs --only checkpoints --dry-run >again
check_status "second run: nothing to do" 0 $?
check_grep "the repository is as locked" "ok      1 repository at the locked commit" again
check_grep "the checkpoint matches" "ok      1 checkpoint match their digests" again

# a config that differs: rewritten, the old one kept
printf 'edited = True\n' >D/cfg/frcnn.py
"$ENVLOCK" restore P.lock --dest D --only configs --yes >out 2>err
check_status "a changed config is rewritten" 0 $?
check_eq "with the locked text" "$(cat cfg/frcnn.py)" "$(cat D/cfg/frcnn.py)"
check_eq "the edited one kept beside it" "edited = True" "$(cat D/cfg/frcnn.py.envlock-bak-*)"
# a checkpoint that differs: reported, not touched
printf 'x' >>D/ckpt/epoch_1.pth
"$ENVLOCK" restore P.lock --dest D --only checkpoints --yes >out 2>err
check_status "a different checkpoint" 1 $?
check_grep "named with both digests" "checkpoint ckpt/epoch_1.pth differs: sha256" out

# a clean clone at another commit: checked out; one with local changes: left alone
mkdir E && git clone -q origin E/proj
"$ENVLOCK" restore P.lock --dest E --only repos --yes >out 2>err
check_status "clean clone at another commit" 0 $?
check_eq "now at the locked commit" "$c1" "$(git -C E/proj rev-parse HEAD)"
mkdir F && git clone -q origin F/proj && printf 'mine\n' >>F/proj/train.py
"$ENVLOCK" restore P.lock --dest F --only repos --yes >out 2>err
check_status "a repository with local changes" 1 $?
check_grep "manual, saying why" "repository proj has local changes" out
check_eq "still at its own commit" "$c2" "$(git -C F/proj rev-parse HEAD)"
check_eq "its changes untouched" "mine" "$(tail -n 1 F/proj/train.py)"

# a clone an interrupted restore left half made (the journal says it began it): cloned again
mkdir -p I/proj istate && printf 'partial\n' >I/proj/HEAD
printf '2026-11-30T00:00:00Z start repos\n2026-11-30T00:00:01Z creating %s\n' "$PWD/I/proj" \
	>"istate/restore-$(jget P.lock id | cut -c8-19).journal"
"$ENVLOCK" restore P.lock --dest I --only repos --state-dir istate --yes >out 2>err
check_status "a half-made clone is replaced" 0 $?
check_grep "the rerun says where the last one stopped" "stopped during step 'repos'" err
check_eq "cloned at the commit" "$c1" "$(git -C I/proj rev-parse HEAD)"
check_eq "the half-made one kept aside" "partial" "$(cat I/proj.envlock-bak-*/HEAD)"
"$ENVLOCK" restore P.lock --dest I --only repos --state-dir istate --dry-run >again
check_status "and then it is the user's: nothing to do" 0 $?

# --- a hostile lock: refused before anything runs --------------------------
mkdir -p bin H && ln -s "$STANDIN" bin/conda
export STANDIN_LOG="$scratch/standin.log"
lock=$GOLDEN/ubuntu1604-mmdet.lock.json
hostile() { # NAME PYTHON-EXPRESSION-ON-d
	"$PYTHON" -c "
import json
d = json.load(open('$lock'))
$2
json.dump(d, open('$1', 'w'))"
}
hostile h1.lock "d['conda']['packages'][0]['name'] = 'x; rm -rf ~'"
hostile h2.lock "d['configs'] = {'status': 'present', 'files': [{'path': '../../etc/cron.d/x', 'requested': True, 'sha256': '0'*64, 'size': 1, 'text': 'x', 'bases': []}]}"
hostile h3.lock "d['cudnn']['libraries'][0]['links'][0]['target'] = '../../../bin/sh'"
hostile h4.lock "d['pip']['distributions'][0]['name'] = '\$(touch pwned)'"
hostile h5.lock "d['conda']['packages'][0]['url'] = 'https://x.invalid/a.conda\`reboot\`'"
hostile h6.lock "d['conda']['prefix'] = '/home/alice/../../etc'"
for h in h1 h2 h3 h4 h5 h6; do
	"$ENVLOCK" restore $h.lock --root H --conda-exe "$PWD/bin/conda" --yes >out 2>err
	check_status "hostile lock $h refused" 2 $?
done
"$ENVLOCK" restore h1.lock --root H --yes >out 2>err
check_eq "the error names the file, the field and the problem" \
	"envlock: restore: 'h1.lock': conda.packages[0].name 'x; rm -rf ~': contains a shell metacharacter or space" "$(cat err)"
"$ENVLOCK" restore h2.lock --root H --yes >out 2>err
check_grep "a '..' path refused" "configs.files\[0\].path '../../etc/cron.d/x': has a '..' component" err
"$ENVLOCK" restore h3.lock --root H --yes >out 2>err
check_grep "a link target with a slash refused" "cudnn.libraries\[0\].links\[0\].target '../../../bin/sh': contains a character not allowed here" err
check_eq "nothing was run" "" "$(cat standin.log 2>/dev/null)"
check_eq "nothing was written" "" "$(ls -A H)"
check_eq "no file appeared" "" "$(ls pwned 2>/dev/null)"
# a terminal escape in a path: refused, and the message carries no raw control byte
hostile h8.lock "d['configs'] = {'status': 'present', 'files': [{'path': 'x\\u001b]0;owned\\u0007.py', 'requested': True, 'error': 'gone'}]}"
"$ENVLOCK" restore h8.lock --only configs --dry-run >out 2>err
check_status "a control character in a path" 2 $?
check_grep "refused, saying why (the value escaped as every lock text is)" "configs.files\[0\].path 'x\\\\x1b\]0;owned\\\\x07.py': contains a control character" err
check_eq "no raw escape byte reaches the terminal" "0" "$(cat out err | tr -cd '\033\007' | wc -c)"
# a terminal escape in a value restore only prints (the locked driver version): the
# schema's pattern refuses it when the lock is loaded, with the value escaped
hostile h9.lock "d['gpu']['driver']['version'] = '450\\u001b]0;owned\\u0007'"
mkdir H9
"$ENVLOCK" restore h9.lock --root H9 --only driver --dry-run >out 2>err
check_grep "refused at load, naming the field, the value escaped" \
	"'h9.lock': not a valid lockfile: gpu.driver.version: \"450\\\\x1b\\]0;owned\\\\x07\" is not of the form" err
check_eq "no raw escape byte reaches the terminal" "0" "$(cat out err | tr -cd '\033\007' | wc -c)"
# an absolute config path outside the destination: not written
hostile h7.lock "d['configs'] = {'status': 'present', 'files': [{'path': '$scratch/outside/x.py', 'requested': True, 'sha256': __import__('hashlib').sha256(b'x').hexdigest(), 'size': 1, 'text': 'x', 'bases': []}]}"
mkdir G
"$ENVLOCK" restore h7.lock --dest G --only configs --yes >out 2>err
check_status "an absolute path outside --dest" 1 $?
check_grep "manual, saying how" "outside $scratch/G" out
check_eq "not written" "" "$(ls outside 2>/dev/null)"
# a 1 GB string (sparse file): the size limit, before any parse
"$PYTHON" -c "
f = open('big.lock', 'w'); f.write('{\"envlock\": 1, \"host\": \"'); f.truncate(1 << 30)"
"$ENVLOCK" restore big.lock --yes >out 2>err
check_status "a 1 GB lock" 2 $?
check_grep "refused at the size limit" "'big.lock': larger than 64 MiB" err

# --- this machine's own lock: nothing to do ---------------------------------
mkdir own && cd own || exit 1
"$ENVLOCK" save -o own.lock 2>/dev/null
"$ENVLOCK" restore own.lock --dry-run >plan 2>err
check_status "this machine's fresh lock: --dry-run has nothing to do" 0 $?
check_grep "says so" "^0 to do, 0 manual" plan
check_grep "verify is not run when nothing changed" "ok      nothing changed (\`envlock verify\` proves this machine trains)" plan
"$ENVLOCK" restore own.lock --only verify --yes >out 2>err
check_status "--only verify runs envlock verify (no GPU here: the CPU stages pass)" 0 $?
check_grep "done, saying there is no GPU" "no GPU here: the toolchain and CPU stages passed" out
check_grep "verify's report is in the log" "toolchain" .envlock/restore-*.log
cd "$scratch" || exit 1

# --- round trip: a fixture lock into an empty sandbox ------------------------
if [ "$(id -u)" != 0 ]; then
	skip "round trip into an empty sandbox" "ldconfig -r needs root"
	exit 0
fi
fx=$FIXTURES/ubuntu1604-mmdet
env_src=$fx/home/alice/miniconda3/envs/mmdet
# NVIDIA's runfile and conda cannot be installed here: stand-ins that copy from the fixture
printf '#!/bin/sh\nexec %s %s runfile "$@"\n' "$PYTHON" "$STANDIN" >cuda_10.2.89_440.33.01_linux.run
arch=cudnn-linux-x86_64-8.2.1.32_cuda10.2-archive
mkdir -p $arch/include $arch/lib
cp "$fx"/usr/local/cuda-10.2/include/cudnn*.h $arch/include/
for f in "$fx"/usr/local/cuda-10.2/lib64/libcudnn*.so.8.2.1; do cp "$f" $arch/lib/; done
tar -cJf cudnn.tar.xz $arch
# conda and pip run inside the sandbox (--chroot): a Debian tree with its own
# python3.11 to run the stand-ins, the captured environment theirs to copy from
chroot_tree R
mkdir -p R/opt/fixture-env && cp -a "$env_src/." R/opt/fixture-env/
"$PYTHON" -c "
import json
for p in json.load(open('$lock'))['conda']['packages']:
    print('%s#%s' % (p['url'], p['md5']))" >R/expect
"$ENVLOCK" restore "$lock" --root R --only pip --dry-run >plan
check_grep "an editable install whose source is missing: manual" "editable mmdet 2.25.1: its source /home/alice/mmdetection is missing" plan
# the user's own code checkout is theirs to bring (a --repo in the lock would be cloned)
mkdir -p R/home/alice && cp -a "$fx/home/alice/mmdetection" R/home/alice/
STANDIN_EXPECT=/expect STANDIN_FIXTURE_ENV=/opt/fixture-env STANDIN_TOOLKIT=$fx/usr/local/cuda-10.2 \
	STANDIN_LOG=/standin.log \
	"$ENVLOCK" restore "$lock" --root R --cuda-runfile cuda_10.2.89_440.33.01_linux.run \
	--cudnn-archive cudnn.tar.xz --chroot --conda-exe /opt/envlock-test/conda --yes >out 2>err
check_status "round trip: only the driver and the host compiler are left (manual)" 1 $?
check_grep "the driver: manual, never installed" "manual  no NVIDIA driver found (locked: 450.142.00)" out
check_grep "the compiler: manual, never installed (the sandbox has no gcc)" "manual  no default gcc here: nvcc of CUDA 10.2 needs a host gcc" out
check_eq "nothing else manual, in the plan and after apply" "2 2" \
	"$(sed -n 's/^[0-9]* to do, \([0-9]*\) manual.*/\1/p' out | tr '\n' ' ' | sed 's/ $//')"
check_eq "no step failed" "" "$(grep '^  failed' out)"
check_eq "conda and pip ran inside the sandbox: no host path in the environment" "" \
	"$(grep -l "$scratch" R/standin.log; grep -rl "$scratch" R/home/alice/miniconda3)"
"$ENVLOCK" save --root R --conda-prefix /home/alice/miniconda3/envs/mmdet -o R.lock 2>/dev/null
"$ENVLOCK" diff --json "$lock" R.lock >diff.json
check_eq "diff of the result against the lock: nothing breaking" "0" "$(jget diff.json counts.breaking)"
# (but which rule chose the default toolkit: CUDA_HOME is the user's shell's, which restore does not write)
for s in cuda cudnn python conda pip frameworks; do
	check_eq "round trip: section $s as locked" "" \
		"$("$PYTHON" -c "import json; print(' '.join(e['key'] for e in json.load(open('diff.json'))['differences'] if e['section'] == '$s' and e['key'] != 'default by'))")"
done

# the driver step judges this machine's driver against the locked toolkit, through the rules
"$ENVLOCK" restore "$GOLDEN/ubuntu1604-mmdet.lock.json" --root "$FIXTURES/cuda92-cudnn7" --dry-run --only driver >out 2>err
check_status "an older driver than the locked CUDA needs: manual" 1 $?
check_grep "the rule names both, with this machine's driver" \
	"manual  driver 418.56 / CUDA 10.2.89: CUDA 10.2.89 needs NVIDIA driver 440.33 or newer; this machine has 418.56" out
check_grep "the rule's id is named" "(rule driver-too-old-for-cuda; NVIDIA CUDA Toolkit Release Notes" out
"$ENVLOCK" restore "$GOLDEN/ubuntu1604-mmdet.lock.json" --root "$FIXTURES/mmpose-container" --dry-run --only driver >out 2>err
check_status "a newer driver: nothing to do" 0 $?
check_eq "a newer driver: new enough" "  ok      NVIDIA driver 535.129.03 (locked 450.142.00): new enough for CUDA 10.2.89" "$(sed -n 2p out)"
