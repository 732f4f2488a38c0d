#!/bin/sh
# /dev/shm and the cgroup's CPU and memory limits: probed, recorded in
# system.shm and system.cgroup, shown, and judged against a config's data
# loaders (config-shm-small, config-workers-cgroup, config-workers-memory).
# (a) a real tmpfs mounted on /dev/shm in a private mount namespace;
# (b) cgroup v1 and v2 trees written here (mountinfo, /proc/self/cgroup,
#     controller files), hostile values among them;
# (c) the live machine, against what this script reads from its cgroup files.
. "$(dirname "$0")/lib.sh"

# field LOCK KEY: system.<KEY> as JSON ("absent" when the lock has no such member)
field() {
	"$PYTHON" -c 'import json,sys
v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    if not isinstance(v, dict) or k not in v:
        print("absent"); sys.exit()
    v=v[k]
print(json.dumps(v))' "$1" "system.$2"
}
# check_json NAME ARGS...: envlock check ARGS --json into NAME.json, its findings in NAME.list
check_json() {
	name=$1
	shift
	"$ENVLOCK" check "$@" --json >"$name.json" 2>"$name.err"
	echo $? >"$name.rc"
	findings "$name.json" >"$name.list"
}
valid() { # valid WHAT LOCK
	if validate "$2" >val.out 2>&1; then ok "$1"; else not_ok "$1"; sed 's/^/#   /' val.out; fi
}

printf 'train_dataloader = dict(num_workers=8, batch_size=64)\n' >tiny.py
printf '%s\n' "train_dataloader = dict(num_workers=32, batch_size=64, persistent_workers=True)" \
	"val_dataloader = dict(num_workers=32, batch_size=1)" >trainval.py
SHM_FIX="rerun the container with --shm-size=8g (docker run --shm-size=8g ...) or --ipc=host; on Kubernetes, mount an emptyDir with medium: Memory at /dev/shm"

# --- (a) a real tmpfs on /dev/shm, in a mount namespace of its own ------------------------
# shm SIZE ARGS...: envlock ARGS with a tmpfs of SIZE mounted on /dev/shm for it alone
shm() {
	size=$1
	shift
	unshare -m sh -c 'mount -t tmpfs -o "size=$1" tmpfs /dev/shm && shift && exec "$@"' sh "$size" "$ENVLOCK" "$@"
}
if [ "$(id -u)" != 0 ]; then
	skip "a 64 MiB tmpfs on /dev/shm" "mounting a tmpfs needs root"
elif ! command -v unshare >/dev/null 2>&1 || ! unshare -m true 2>/dev/null; then
	skip "a 64 MiB tmpfs on /dev/shm" "unshare -m does not run here (no util-linux unshare, or no mount namespaces)"
else
	shm 64m save -q --config tiny.py -o shm64.lock 2>shm64.err
	check_status "save with a 64 MiB /dev/shm" 0 $?
	check_eq "its size from the mount table, in bytes" 67108864 "$(field shm64.lock shm.size_bytes)"
	check_eq "a fresh tmpfs is all free (statvfs)" 67108864 "$(field shm64.lock shm.free_bytes)"
	check_eq "the filesystem and where it was read" '"tmpfs" "/proc/self/mountinfo" true' \
		"$(field shm64.lock shm.fs) $(field shm64.lock shm.source) $(field shm64.lock shm.present)"
	valid "the lock validates against the schema" shm64.lock
	"$ENVLOCK" show shm64.lock >show64.txt
	check_grep "show says so" "^limits .*; /dev/shm 64 MiB$" show64.txt
	check_json shm64 shm64.lock
	has "8 workers and 64 MiB of /dev/shm are risky" shm64 "risky config-shm-small"
	check_eq "the message has the arithmetic" \
		"tiny.py: train_dataloader.num_workers=8 hands every batch to the training process through /dev/shm, which is 64 MiB here: 8 workers × 1 process(es) × 2 batches ahead (prefetch_factor) × batch 64 = 1024 samples in /dev/shm at once, 64 KiB each at most, and one 224×224 RGB image as uint8 is 147 KiB; the workers die with \"Bus error\" or \"No space left on device\" (envlock flags any /dev/shm under 1 GiB where workers run)" \
		"$(message shm64.json config-shm-small)"
	check_eq "the fix is a line to paste" "$SHM_FIX" "$(message shm64.json config-shm-small fix)"
	check_grep "the source is PyTorch's and Docker's own words" \
		"https://github.com/pytorch/pytorch#using-pre-built-images.*the system uses 64m" shm64.json
	# check --config probes the live machine itself, in the same namespace
	shm 64m check --config tiny.py --cfg-options train_dataloader.prefetch_factor=4 --json >live64.json 2>live64.err
	findings live64.json >live64.list
	has "check --config sees the 64 MiB too" live64 "risky config-shm-small"
	check_grep "a prefetch_factor set in the config counts" "8 workers × 1 process(es) × 4 batches ahead (prefetch_factor) × batch 64 = 2048 samples in /dev/shm at once, 32 KiB each at most" live64.json
	shm 64m check --config tiny.py --cfg-options train_dataloader.num_workers=0 --json >w0.json 2>w0.err
	findings w0.json >w0.list
	lacks "without workers nothing goes through /dev/shm" w0 config-shm-small
	shm 8g save -q --config tiny.py -o shm8g.lock 2>shm8g.err
	check_eq "an 8 GiB /dev/shm, in bytes" 8589934592 "$(field shm8g.lock shm.size_bytes)"
	check_json shm8g shm8g.lock
	lacks "8 GiB is enough" shm8g config-shm-small
fi

# --- (b) trees: cgroup v2, cgroup v1, hostile values -------------------------------------
# tree DIR CORES MEM_KB: a machine with CORES logical CPUs and MEM_KB of memory
tree() {
	mkdir -p "$1/proc/self" "$1/dev/shm"
	awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++)
		printf "processor\t: %d\nmodel name\t: Test CPU\nphysical id\t: 0\ncore id\t\t: %d\n\n", i, i }' >"$1/proc/cpuinfo"
	printf 'MemTotal:       %s kB\n' "$3" >"$1/proc/meminfo"
}
V2MOUNTS='1026 1025 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate
1028 1023 0:95 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=8388608k'

# a container with its own cgroup namespace: "0::/", the limits directly under the mount
tree v2 32 67108864
: >v2/.dockerenv
echo "$V2MOUNTS" >v2/proc/self/mountinfo
echo "0::/" >v2/proc/self/cgroup
mkdir -p v2/sys/fs/cgroup
echo "400000 100000" >v2/sys/fs/cgroup/cpu.max
echo 17179869184 >v2/sys/fs/cgroup/memory.max
echo 0-31 >v2/sys/fs/cgroup/cpuset.cpus.effective
"$ENVLOCK" save -q --root v2 -o v2.lock 2>v2.err
check_status "save of the cgroup v2 tree" 0 $?
check_eq "v2: version, CPUs, quota and period" "2 4 400000 100000" \
	"$(field v2.lock cgroup.version) $(field v2.lock cgroup.cpu_limit) $(field v2.lock cgroup.cpu_quota_us) $(field v2.lock cgroup.cpu_period_us)"
check_eq "v2: memory and cpuset" "17179869184 32" "$(field v2.lock cgroup.memory_limit_bytes) $(field v2.lock cgroup.cpuset_cpus)"
check_eq "v2: the files they came from" '"/sys/fs/cgroup/cpu.max" "/sys/fs/cgroup/memory.max" "/sys/fs/cgroup/cpuset.cpus.effective"' \
	"$(field v2.lock cgroup.cpu_source) $(field v2.lock cgroup.memory_source) $(field v2.lock cgroup.cpuset_source)"
check_eq "v2: /dev/shm from the tree's mount table; no statvfs under a root" "8589934592 absent" \
	"$(field v2.lock shm.size_bytes) $(field v2.lock shm.free_bytes)"
check_eq "v2: no warnings" "[]" "$(jget v2.lock warnings)"
valid "v2: the lock validates against the schema" v2.lock
"$ENVLOCK" show v2.lock >v2.show
check_grep "show: one line of limits" "^limits      cgroup v2: 4 CPUs (quota), 16.0 GiB memory; /dev/shm 8.0 GiB$" v2.show

check_json v2w32 --root v2 --config tiny.py --cfg-options train_dataloader.num_workers=32
has "32 workers on a 4-CPU container are risky" v2w32 "risky config-workers-cgroup"
check_eq "with the numbers" \
	"tiny.py: train_dataloader.num_workers=32 in each of 1 training process(es) is 32 worker processes, but this container may use 4 CPUs (a CPU quota of 400000 µs every 100000 µs) though /proc/cpuinfo shows 32 logical cores: the workers and the training processes share those 4 CPUs and the kernel throttles them all; the rule of thumb is half the CPUs, 2 each" \
	"$(message v2w32.json config-workers-cgroup)"
check_eq "the fix: half the CPUs" "--cfg-options train_dataloader.num_workers=2" "$(message v2w32.json config-workers-cgroup fix)"
lacks "8 GiB of /dev/shm is not small" v2w32 config-shm-small
check_json v2w64 --root v2 --config tiny.py --cfg-options train_dataloader.num_workers=64
has "64 workers: past the container's 4 CPUs" v2w64 "risky config-workers-cgroup"
lacks "one finding with one fix, not a second against the 32 cores" v2w64 config-workers-oversubscribed
check_json v2w1 --root v2 --config tiny.py --cfg-options train_dataloader.num_workers=1
lacks "1 worker fits 4 CPUs" v2w1 config-workers-cgroup
has "and starves the GPU by the container's CPUs, not the host's cores" v2w1 "info config-workers-starved"
check_eq "the starved rule counts the CPUs the container may use" \
	"tiny.py: train_dataloader runs 1 workers in each of 1 training process(es) on 4 CPUs this container may use; the rule of thumb is half the cores, 2 each: with fewer the GPU waits for data|--cfg-options train_dataloader.num_workers=2" \
	"$(message v2w1.json config-workers-starved)|$(message v2w1.json config-workers-starved fix)"
# the saved lock judges the same
"$ENVLOCK" save -q --root v2 --config tiny.py --cfg-options train_dataloader.num_workers=32 -o v2c.lock 2>v2c.err
check_json v2c v2c.lock
has "check of the saved lock finds it too" v2c "risky config-workers-cgroup"

# memory: 64 train (persistent) + val workers at 0.5 GiB against the 16 GiB limit, not the 64 GiB machine
check_json v2mem --root v2 --config trainval.py
has "the container's memory limit is what the workers fill" v2mem "risky config-workers-memory"
check_eq "the message names the limit" \
	"trainval.py: at the first validation each of 1 training process(es) has 32 train workers (persistent_workers=True: they stay alive) and 32 val workers: 64 worker processes on 32 logical cores; at about 0.5 GiB each that is 32.0 GiB of this container's 16.0 GiB memory limit, and the kernel kills them" \
	"$(message v2mem.json config-workers-memory)"

# "max": no limit; the machine's memory and cores count again
cp -a v2 v2max
echo "max 100000" >v2max/sys/fs/cgroup/cpu.max
echo max >v2max/sys/fs/cgroup/memory.max
"$ENVLOCK" save -q --root v2max -o v2max.lock 2>v2max.err
check_eq "max: recorded as none (null), with the file that said so" 'null null "/sys/fs/cgroup/cpu.max" absent' \
	"$(field v2max.lock cgroup.cpu_limit) $(field v2max.lock cgroup.memory_limit_bytes) $(field v2max.lock cgroup.cpu_source) $(field v2max.lock cgroup.cpu_quota_us)"
valid "max: the lock validates" v2max.lock
"$ENVLOCK" show v2max.lock >v2max.show
check_grep "show: no limits" "^limits      cgroup v2: 32 CPUs (cpuset), no memory limit; /dev/shm 8.0 GiB$" v2max.show
check_json v2maxw --root v2max --config tiny.py --cfg-options train_dataloader.num_workers=32
lacks "max: 32 workers on 32 cores is no finding" v2maxw config-workers-cgroup
check_json v2maxw64 --root v2max --config tiny.py --cfg-options train_dataloader.num_workers=64
check_eq "max: 64 workers on 32 cores are judged against the cores alone" "risky config-workers-oversubscribed" \
	"$(grep 'config-workers-' v2maxw64.list)"
check_json v2maxm --root v2max --config trainval.py
lacks "max: 32 GiB of workers fit the machine's 64 GiB" v2maxm config-workers-memory

# a Kubernetes pod without its own cgroup namespace: the path below the mount, and a parent's lower limit
tree k8s 16 67108864
echo "$V2MOUNTS" >k8s/proc/self/mountinfo
echo "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc.scope" >k8s/proc/self/cgroup
pod=k8s/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice
mkdir -p "$pod/cri-containerd-abc.scope"
echo "max 100000" >"$pod/cri-containerd-abc.scope/cpu.max"
echo max >"$pod/cri-containerd-abc.scope/memory.max"
echo "250000 100000" >"$pod/cpu.max"
echo 8589934592 >"$pod/memory.max"
echo 0-15 >k8s/sys/fs/cgroup/cpuset.cpus.effective
"$ENVLOCK" save -q --root k8s -o k8s.lock 2>k8s.err
check_eq "the pod's limits, one level up, bind the container" '2.5 8589934592 16' \
	"$(field k8s.lock cgroup.cpu_limit) $(field k8s.lock cgroup.memory_limit_bytes) $(field k8s.lock cgroup.cpuset_cpus)"
check_eq "the files named are the pod's, and the root's cpuset" \
	'"/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice/cpu.max" "/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice/memory.max" "/sys/fs/cgroup/cpuset.cpus.effective"' \
	"$(field k8s.lock cgroup.cpu_source) $(field k8s.lock cgroup.memory_source) $(field k8s.lock cgroup.cpuset_source)"
check_json k8sw --root k8s --config tiny.py
check_grep "not a container .dockerenv says: a cgroup; 2.5 CPUs" "but this cgroup may use 2.5 CPUs (a CPU quota of 250000 µs every 100000 µs) though /proc/cpuinfo shows 16 logical cores" k8sw.json
check_eq "half of 2.5 CPUs is 1" "--cfg-options train_dataloader.num_workers=1" "$(message k8sw.json config-workers-cgroup fix)"

# cgroup v1 beside an empty unified hierarchy (a hybrid host), a Slurm job's cgroup
tree v1 32 67108864
cat >v1/proc/self/mountinfo <<'EOF'
31 23 0:28 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
32 31 0:29 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/cpuacct,cpu\040x rw - cgroup cgroup rw,name=odd
EOF
printf '%s\n' "12:cpuset:/slurm/uid_1000/job_42" "7:cpu,cpuacct:/slurm/uid_1000/job_42" \
	"5:memory:/slurm/uid_1000/job_42/step_0" "1:name=systemd:/system.slice/slurmd.service" "0::/system.slice/slurmd.service" \
	>v1/proc/self/cgroup
cpu=v1/sys/fs/cgroup/cpu,cpuacct
mkdir -p "$cpu/slurm/uid_1000/job_42" v1/sys/fs/cgroup/cpuset/slurm/uid_1000/job_42 \
	v1/sys/fs/cgroup/memory/slurm/uid_1000/job_42/step_0
echo -1 >"$cpu/cpu.cfs_quota_us"
echo 100000 >"$cpu/cpu.cfs_period_us"
echo 600000 >"$cpu/slurm/uid_1000/job_42/cpu.cfs_quota_us"
echo 100000 >"$cpu/slurm/uid_1000/job_42/cpu.cfs_period_us"
echo 0-3,8-11 >v1/sys/fs/cgroup/cpuset/slurm/uid_1000/job_42/cpuset.cpus
echo 9223372036854771712 >v1/sys/fs/cgroup/memory/memory.limit_in_bytes
echo 34359738368 >v1/sys/fs/cgroup/memory/slurm/uid_1000/job_42/memory.limit_in_bytes
echo 9223372036854771712 >v1/sys/fs/cgroup/memory/slurm/uid_1000/job_42/step_0/memory.limit_in_bytes
"$ENVLOCK" save -q --root v1 -o v1.lock 2>v1.err
check_status "save of the cgroup v1 tree" 0 $?
check_eq "v1: version, CPUs, quota, period, cpuset, memory" "1 6 600000 100000 8 34359738368" \
	"$(field v1.lock cgroup.version) $(field v1.lock cgroup.cpu_limit) $(field v1.lock cgroup.cpu_quota_us) $(field v1.lock cgroup.cpu_period_us) $(field v1.lock cgroup.cpuset_cpus) $(field v1.lock cgroup.memory_limit_bytes)"
check_eq "v1: each from its controller's own hierarchy" \
	'"/sys/fs/cgroup/cpu,cpuacct/slurm/uid_1000/job_42/cpu.cfs_quota_us" "/sys/fs/cgroup/cpuset/slurm/uid_1000/job_42/cpuset.cpus" "/sys/fs/cgroup/memory/slurm/uid_1000/job_42/memory.limit_in_bytes"' \
	"$(field v1.lock cgroup.cpu_source) $(field v1.lock cgroup.cpuset_source) $(field v1.lock cgroup.memory_source)"
check_eq "v1: no /dev/shm mount, but the folder: present, size unknown" "true absent absent" \
	"$(field v1.lock shm.present) $(field v1.lock shm.size_bytes) $(field v1.lock shm.fs)"
check_eq "v1: no warnings" "[]" "$(jget v1.lock warnings)"
valid "v1: the lock validates" v1.lock
check_json v1w --root v1 --config tiny.py --cfg-options train_dataloader.num_workers=32
check_grep "v1: 32 workers on the job's 6 CPUs" "32 worker processes, but this cgroup may use 6 CPUs (a CPU quota of 600000 µs every 100000 µs) though /proc/cpuinfo shows 32 logical cores" v1w.json
check_eq "v1: half of 6" "--cfg-options train_dataloader.num_workers=3" "$(message v1w.json config-workers-cgroup fix)"
echo 0-1 >v1/sys/fs/cgroup/cpuset/slurm/uid_1000/job_42/cpuset.cpus
check_json v1set --root v1 --config tiny.py
check_grep "v1: a cpuset smaller than the quota is the limit" "8 worker processes, but this cgroup may use 2 CPUs (the cgroup's cpuset) though /proc/cpuinfo shows 32 logical cores" v1set.json
check_eq "v1: with one worker each for 2 CPUs" "--cfg-options train_dataloader.num_workers=1" "$(message v1set.json config-workers-cgroup fix)"

# hostile values: each recorded as not known, with a warning that names the file; never a crash
# hostile NAME FILE VALUE...: a copy of v2 whose FILE (under sys/fs/cgroup) holds VALUE
hostile() {
	name=$1 file=$2
	shift 2
	rm -rf "$name" && cp -a v2 "$name" && printf '%s\n' "$@" >"$name/sys/fs/cgroup/$file"
	"$ENVLOCK" save -q --root "$name" -o "$name.lock" 2>"$name.err"
	echo $? >"$name.rc"
}
hostile letters cpu.max "4oo000 100000"
hostile zero cpu.max "0 100000"
hostile noperiod cpu.max "400000 0"
hostile twolines cpu.max "400000 100000" "max 100000"
hostile overflow memory.max 184467440737095516160
hostile negative memory.max -1
hostile plus memory.max +17179869184
hostile hugecpus cpuset.cpus.effective 0-99999999
hostile backwards cpuset.cpus.effective 8-3
hostile comma cpuset.cpus.effective 0-3,
for name in letters zero noperiod twolines overflow negative plus hugecpus backwards comma; do
	st=$(cat "$name.rc")
	case $name in
	letters | zero | noperiod | twolines) key=cpu_limit file=cpu.max ;;
	overflow | negative | plus) key=memory_limit_bytes file=memory.max ;;
	*) key=cpuset_cpus file=cpuset.cpus.effective ;;
	esac
	check_eq "hostile $name: saved, $key not known, one warning naming $file" \
		"0 absent 1 /sys/fs/cgroup/$file" \
		"$st $(field "$name.lock" "cgroup.$key") $(jget "$name.lock" warnings | "$PYTHON" -c 'import json,sys; w=json.load(sys.stdin); print(len(w), w[0].split("'"'"'")[1] if w else "")')"
done
valid "hostile: a lock with limits not known validates" letters.lock
check_eq "hostile: the other limits are still read" "17179869184 32" \
	"$(field letters.lock cgroup.memory_limit_bytes) $(field letters.lock cgroup.cpuset_cpus)"
check_json letters --root letters --config tiny.py --cfg-options train_dataloader.num_workers=32
lacks "hostile: no CPU limit is guessed (the cpuset allows all 32 cores)" letters config-workers-cgroup
# a huge file is not read
rm -rf huge && cp -a v2 huge
"$PYTHON" -c 'import sys; sys.stdout.write("4" * 200000 + " 100000\n")' >huge/sys/fs/cgroup/cpu.max
"$ENVLOCK" save -q --root huge -o huge.lock 2>huge.err
check_eq "hostile: a 200 kB cpu.max is not read, and says so" \
	"0 absent '/sys/fs/cgroup/cpu.max': larger than 65536 bytes, not read" \
	"$? $(field huge.lock cgroup.cpu_limit) $(jget huge.lock warnings | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0])')"
# binary data, a directory and a link that leaves the tree
rm -rf odd && cp -a v2 odd
printf '4\000\001\002' >odd/sys/fs/cgroup/cpu.max
rm odd/sys/fs/cgroup/memory.max && mkdir odd/sys/fs/cgroup/memory.max
rm odd/sys/fs/cgroup/cpuset.cpus.effective && ln -s /../../../../../../etc/hostname odd/sys/fs/cgroup/cpuset.cpus.effective
"$ENVLOCK" save -q --root odd -o odd.lock 2>odd.err
check_eq "hostile: binary, a folder and a link out of the tree: saved, nothing known" "0 absent absent absent" \
	"$? $(field odd.lock cgroup.cpu_limit) $(field odd.lock cgroup.memory_limit_bytes) $(field odd.lock cgroup.cpuset_cpus)"
valid "hostile: that lock validates" odd.lock
# a cgroup path that climbs, a broken mount table, a size that is no size
rm -rf paths && cp -a v2 paths
echo "0::/../../etc" >paths/proc/self/cgroup
printf '%s\n' "$V2MOUNTS" "garbage" "1 2 3" | sed 's/size=8388608k/size=12q/' >paths/proc/self/mountinfo
"$ENVLOCK" save -q --root paths -o paths.lock 2>paths.err
check_eq "hostile: a climbing path is not followed (the mount's own files are read)" "4 17179869184" \
	"$(field paths.lock cgroup.cpu_limit) $(field paths.lock cgroup.memory_limit_bytes)"
check_eq "hostile: size=12q is no size; two lines not understood" \
	"absent|'/proc/self/mountinfo': 2 line(s) not understood, ignored|'/proc/self/mountinfo': the size= of /dev/shm is not a size, ignored" \
	"$(field paths.lock shm.size_bytes)|$(jget paths.lock warnings | "$PYTHON" -c 'import json,sys; print("|".join(json.load(sys.stdin)))')"
sed -i 's/size=12q/size=99999999999999999999k/' paths/proc/self/mountinfo
"$ENVLOCK" save -q --root paths -o paths2.lock 2>paths2.err
check_eq "hostile: a size that overflows is no size" "absent" "$(field paths2.lock shm.size_bytes)"

# older locks: no shm, no cgroup; nothing shown, nothing judged, still valid
check_eq "an older lock records neither" "absent absent" \
	"$(field "$GOLDEN/ubuntu1604-mmdet.lock.json" shm) $(field "$GOLDEN/ubuntu1604-mmdet.lock.json" cgroup)"
"$ENVLOCK" show "$GOLDEN/ubuntu1604-mmdet.lock.json" >old.show
check_status "show of an older lock" 0 $?
check_eq "no limits line" 0 "$(grep -c '^limits' old.show)"
# a tree without a mount table records neither
tree bare 4 1048576
"$ENVLOCK" save -q --root bare -o bare.lock 2>bare.err
check_eq "a tree without a mount table records neither" "absent absent" "$(field bare.lock shm) $(field bare.lock cgroup)"
# a lock whose limit is not a number is refused at load
"$PYTHON" -c 'import json,sys
d=json.load(open(sys.argv[1])); d["system"]["cgroup"]["cpu_limit"]="4"
json.dump(d, open(sys.argv[2], "w"))' v2.lock v2bad.lock
"$ENVLOCK" check v2bad.lock >v2bad.out 2>v2bad.err
check_status "a cpu_limit that is text is refused" 2 $?
check_eq "naming the field" "envlock: check: 'v2bad.lock': not a valid lockfile: system.cgroup.cpu_limit: expected number or null, got a string" "$(cat v2bad.err)"

# --- (c) the live machine -----------------------------------------------------------------
"$ENVLOCK" save -q -o live.lock 2>live.err
check_status "save of the live machine" 0 $?
# what this script reads itself: its own cgroup (envlock's, its child's), the mount table, the files
"$PYTHON" - >live.want <<'PY'
import json, os
mounts = []
for line in open("/proc/self/mountinfo"):
    f = line.split()
    sep = f.index("-", 6)
    unesc = lambda s: s.encode().decode("unicode_escape")
    mounts.append((unesc(f[3]), unesc(f[4]), f[sep + 1], set(f[5].split(",") + f[sep + 3].split(","))))
cg = [l.rstrip("\n").split(":", 2) for l in open("/proc/self/cgroup")]
def mount(fstype, ctl=None):
    for root, point, t, opts in reversed(mounts):
        if t == fstype and (ctl is None or ctl in opts):
            return root, point
def folder(m, ctl):
    root, point = m
    path = next((p for i, c, p in cg if (ctl in c.split(",") if ctl else i == "0" and c == "")), "/")
    below = path if root == "/" else path[len(root):] if path.startswith(root) else ""
    d = point + below if below not in ("", "/") else point
    return d if os.path.isdir(d) else point
def levels(m, d):
    out = [d]
    while d != m[1] and len(d) > len(m[1]):
        d = os.path.dirname(d)
        out.append(d)
    return out
def read(p):
    try:
        return open(p).read().strip()
    except OSError:
        return None
v1 = any(mount("cgroup", c) for c in ("cpu", "memory", "cpuset"))
want = {}
if v1 or mount("cgroup2"):
    want["version"] = 1 if v1 else 2
    m = mount("cgroup", "cpu") if v1 else mount("cgroup2")
    if m:
        cpus, seen = None, False
        for d in levels(m, folder(m, "cpu" if v1 else None)):
            if v1:
                q = read(d + "/cpu.cfs_quota_us")
                if q is None:
                    continue
                seen = True
                if q != "-1":
                    c = int(q) / int(read(d + "/cpu.cfs_period_us"))
                    cpus = c if cpus is None else min(cpus, c)
            else:
                q = read(d + "/cpu.max")
                if q is None:
                    continue
                seen = True
                a, b = (q.split() + ["100000"])[:2]
                if a != "max":
                    cpus = int(a) / int(b) if cpus is None else min(cpus, int(a) / int(b))
        if seen:
            want["cpu_limit"] = cpus
    m = mount("cgroup", "memory") if v1 else mount("cgroup2")
    if m:
        mem, seen = None, False
        for d in levels(m, folder(m, "memory" if v1 else None)):
            q = read(d + ("/memory.limit_in_bytes" if v1 else "/memory.max"))
            if q is None:
                continue
            seen = True
            if q != "max" and int(q) < 2 ** 53:
                mem = int(q) if mem is None else min(mem, int(q))
        if seen:
            want["memory_limit_bytes"] = mem
    m = mount("cgroup", "cpuset") if v1 else mount("cgroup2")
    if m:
        for d in levels(m, folder(m, "cpuset" if v1 else None)):
            names = ("cpuset.effective_cpus", "cpuset.cpus") if v1 else ("cpuset.cpus.effective",)
            q = next((read(d + "/" + n) for n in names if read(d + "/" + n) is not None), None)
            if q is None:
                continue
            n = 0
            for part in q.split(","):
                lo, _, hi = part.partition("-")
                n += int(hi or lo) - int(lo) + 1
            want["cpuset_cpus"] = n
            break
print(json.dumps(want, sort_keys=True))
PY
"$PYTHON" -c 'import json,sys
c=json.load(open(sys.argv[1]))["system"].get("cgroup")
print(json.dumps(None if c is None else {k: c[k] for k in ("version", "cpu_limit", "memory_limit_bytes", "cpuset_cpus") if k in c}, sort_keys=True))' live.lock >live.got
if [ "$(cat live.want)" = "{}" ]; then
	check_eq "the live machine: no cgroup mounted, none recorded" null "$(cat live.got)"
else
	check_eq "the live machine: the cgroup version and limits this script reads itself" "$(cat live.want)" "$(cat live.got)"
fi
case $(cat live.want) in
*'"version": 1'*) check_eq "this machine runs cgroup v1 (hybrid or not): version 1 is recorded" 1 "$(field live.lock cgroup.version)" ;;
esac
shm_want=$(df -B1 --output=size /dev/shm 2>/dev/null | tail -n 1 | tr -d ' ')
if [ -n "$shm_want" ]; then
	check_eq "the live /dev/shm's size, as df(1) says" "$shm_want" "$(field live.lock shm.size_bytes)"
else
	skip "the live /dev/shm's size, as df(1) says" "no /dev/shm here"
fi
valid "the live lock validates" live.lock

echo "1..$n"
