#!/bin/sh
# A real fleet (issue 12): a Slurm cluster on this one host, on loopback,
# with its own munged, slurmctld and three slurmd (Debian's slurmd runs
# several node names on one host: slurmd -N NAME, a Port per NodeName).
# Each slurmd runs in its own UTS namespace with its node's name as host
# name, as on a real cluster, where srun's --output %N (the node's short
# host name in Slurm 22.05) tells the nodes apart. A TaskProlog gives the
# odd node's tasks another OMP_NUM_THREADS, as an admin's prolog would.
# The README's recipes run as written, inside an allocation; the locks and
# the drift table are checked. Everything lives in the scratch folder and
# every daemon is stopped at the end, also on failure.
#
# Needs root and Debian's munge, slurmctld, slurmd and slurm-client; without
# them (or with no free ports) it prints "ok 1 - slurm fleet # SKIP why".
# Env: ENVLOCK (the CLI to test), FLEET_NODES (how many slurmd, default 3).
. "$(dirname "$0")/../cli/lib.sh"

passed=0
failed=0
ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

began=$(date +%s)
case "$ENVLOCK" in /*) ;; *) ENVLOCK=$PWD/$ENVLOCK ;; esac # the nodes run it from elsewhere
PATH=$PATH:/usr/sbin:/sbin
want=${FLEET_NODES:-3}
NODES=$(i=1; while [ "$i" -le "$want" ]; do printf 'node%d ' "$i"; i=$((i + 1)); done)
NODES=${NODES% }
ODD=node3           # the TaskProlog's odd one out
ODD_VALUE=2         # its OMP_NUM_THREADS
USUAL_VALUE=8       # everyone else's
SUBMIT_VALUE=64     # the submitter's own, which every node's prolog overrides
pids=""             # every daemon this test started
slurmd_pids=""
conf=$scratch/slurm.conf
shared=$scratch/shared # "a folder every node can write"

# --- processes -------------------------------------------------------------

# alive PID: running, not a zombie
alive() {
	[ -r "/proc/$1/stat" ] && [ "$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

any_alive() {
	for p in "$@"; do alive "$p" && return 0; done
	return 1
}

# Processes other than this shell that still use the scratch folder (as
# cwd, an open file or in their command line): a slurmstepd is slurmd's
# grandchild, not ours, so it is found this way, not by its pid.
strays() {
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = "$$" ] && continue
		alive "$p" || continue
		hit=
		case "$(readlink "$d/cwd" 2>/dev/null)" in "$scratch" | "$scratch"/*) hit=1 ;; esac
		if [ -z "$hit" ]; then
			# a process may end between the checks: its /proc entry is then gone, and so is it
			case "$( (tr '\0' ' ' <"$d/cmdline") 2>/dev/null)" in *"$scratch"*) hit=1 ;; esac
		fi
		if [ -z "$hit" ]; then
			for f in "$d"/fd/*; do
				case "$(readlink "$f" 2>/dev/null)" in "$scratch"/*) hit=1; break ;; esac
			done
		fi
		[ -z "$hit" ] || echo "$p"
	done
	return 0
}

# Stop every daemon: TERM, up to 5 s, then KILL; then anything left in scratch.
teardown() {
	# out of the scratch folder first: this shell's own subshells (the $(strays) below) would
	# otherwise have it as their working folder and be counted as left behind
	cd / || return
	if [ -n "$pids" ]; then
		for p in $pids; do kill -TERM "$p" 2>/dev/null; done
		i=0
		while [ "$i" -lt 50 ] && any_alive $pids; do sleep 0.1; i=$((i + 1)); done
		for p in $pids; do kill -KILL "$p" 2>/dev/null; done
		wait $pids 2>/dev/null
		pids=""
	fi
	i=0
	while [ "$i" -lt 3 ] && left=$(strays) && [ -n "$left" ]; do
		kill -KILL $left 2>/dev/null
		sleep 0.2
		i=$((i + 1))
	done
}

finish() {
	teardown
	chmod -R u+rwX "$scratch" 2>/dev/null
	rm -rf "$scratch"
}
trap finish EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# plural N WORD: "1 node", "3 nodes"
plural() { if [ "$1" -eq 1 ]; then echo "$1 $2"; else echo "$1 $2s"; fi; }

# show_log FILE...: the last lines of each, as TAP comments
show_log() {
	for f in "$@"; do
		[ -s "$f" ] || continue
		echo "# --- ${f#"$scratch"/} (last lines)"
		tail -n 12 "$f" | sed 's/^/#   /'
	done
}

# skip_all REASON [LOG...]: this machine cannot run the cluster; say why, stop cleanly
skip_all() {
	echo "ok 1 - slurm fleet # SKIP $1"
	shift
	show_log "$@"
	teardown
	echo "0 passed, 0 failed"
	exit 0
}

summary() {
	teardown
	# a process killed a moment ago may still be on its way out: wait up to 3 s for it to go
	i=0
	while left=$(strays) && [ -n "$left" ] && [ "$i" -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -z "$left" ]; then
		ok "teardown: every daemon stopped, no process left using the scratch folder"
	else
		not_ok "teardown: every daemon stopped, no process left using the scratch folder"
		for p in $left; do echo "#   $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done
	fi
	echo "# ran in $(($(date +%s) - began)) s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# --- can this machine run a cluster? ---------------------------------------

[ "$(id -u)" = 0 ] || skip_all "not root (uid $(id -u)): this test runs munged, slurmctld and slurmd as root"
missing=""
for c in munged munge unmunge slurmctld slurmd slurmstepd srun salloc sinfo timeout; do
	command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
[ -z "$missing" ] || skip_all "not installed:$missing (Debian: munge slurmctld slurmd slurm-client)"
"$PYTHON" -c 'import jsonschema' 2>/dev/null ||
	skip_all "$PYTHON with jsonschema (python3-jsonschema) is needed to check ports and validate the locks"
if [ ! -x "$ENVLOCK" ]; then
	not_ok "the envlock under test exists"
	echo "#   no executable '$ENVLOCK' (ENVLOCK)"
	summary
fi
echo "# $(slurmd -V 2>&1), $(munged -V 2>&1 | head -n 1); envlock under test: $ENVLOCK"

# free_ports PORT...: none of them is bound on any address
free_ports() {
	"$PYTHON" - "$@" <<'PY'
import socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("0.0.0.0", int(p)))
    except OSError:
        sys.exit(1)
    finally:
        s.close()
PY
}

# One port for slurmctld and one per slurmd, consecutive, below Linux's
# ephemeral range (32768-60999) so srun's own connections cannot take them.
base=""
tries=0
while [ "$tries" -lt 20 ]; do
	b=$(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12000 + 20000))
	set -- "$b"
	for node in $NODES; do set -- "$@" $((b + $#)); done
	if free_ports "$@"; then base=$b; break; fi
	tries=$((tries + 1))
done
[ -n "$base" ] || skip_all "no $((want + 1)) consecutive free TCP ports found in 20000-31999 after 20 tries"

# --- munged, with its own key and socket ------------------------------------

chmod 0755 "$scratch" # munged wants every folder above its socket searchable by all
mkdir -p "$scratch/munge" "$scratch/state" "$scratch/log" "$scratch/pid" "$scratch/bin" "$shared"
key=$scratch/munge/munge.key
if command -v mungekey >/dev/null 2>&1; then
	mungekey --create --keyfile="$key" >"$scratch/log/mungekey.out" 2>&1 ||
		skip_all "mungekey could not create a key" "$scratch/log/mungekey.out"
else
	dd if=/dev/urandom of="$key" bs=1024 count=1 2>/dev/null
fi
chown root:root "$key"
chmod 0400 "$key"
chmod 0755 "$scratch/munge" # clients (srun, slurmd) reach the socket through it; the key stays 0400
sock=$scratch/munge/munge.socket
munged --foreground --socket="$sock" --key-file="$key" --pid-file="$scratch/munge/munged.pid" \
	--log-file="$scratch/log/munged.log" --seed-file="$scratch/munge/munged.seed" \
	>"$scratch/log/munged.out" 2>&1 &
munged_pid=$!
pids="$pids $munged_pid"
i=0
until munge -n -S "$sock" 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -ge 50 ] || ! alive "$munged_pid"; then
		skip_all "munged did not answer on its socket within 5 s" "$scratch/log/munged.out" "$scratch/log/munged.log"
	fi
	sleep 0.1
done

# --- slurm.conf, the TaskProlog, slurmctld -----------------------------------

# Each node gets its own host name when this machine allows a UTS namespace
# (root in most containers); otherwise all nodes share the host's.
if unshare --uts true 2>/dev/null && command -v hostname >/dev/null 2>&1; then
	uts=1
else
	uts=""
fi
host=$(uname -n)
host=${host%%.*}
node_host() { if [ -n "$uts" ]; then echo "$1"; else echo "$host"; fi; }
sed -e "s|@SCRATCH@|$scratch|g" -e "s|@CLUSTER@|envlockfleet$$|g" \
	-e "s|@CTLD_HOST@|$host|g" -e "s|@CTLD_PORT@|$base|g" \
	"$top/tests/fleet/slurm.conf.in" >"$conf"
i=1
for node in $NODES; do
	echo "NodeName=$node NodeHostname=$(node_host "$node") NodeAddr=127.0.0.1 Port=$((base + i)) CPUs=1 RealMemory=100 State=UNKNOWN"
	i=$((i + 1))
done >>"$conf"
echo "PartitionName=fleet Nodes=$(echo "$NODES" | tr ' ' ',') Default=YES MaxTime=INFINITE State=UP" >>"$conf"
: >"$scratch/plugstack.conf"
cat >"$scratch/taskprolog.sh" <<EOF
#!/bin/sh
# "export NAME=VALUE" on a TaskProlog's stdout goes into the task's environment
case "\$SLURMD_NODENAME" in
$ODD) echo "export OMP_NUM_THREADS=$ODD_VALUE" ;;
*) echo "export OMP_NUM_THREADS=$USUAL_VALUE" ;;
esac
EOF
chmod 0755 "$scratch/taskprolog.sh"
ln -s "$ENVLOCK" "$scratch/bin/envlock" # the recipes say "envlock"

export SLURM_CONF="$conf"
slurmctld -D -i -f "$conf" >"$scratch/log/slurmctld.out" 2>&1 &
ctld_pid=$!
pids="$pids $ctld_pid"
i=0
until sinfo -h >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -ge 100 ] || ! alive "$ctld_pid"; then
		skip_all "slurmctld did not answer on 127.0.0.1:$base within 10 s" "$scratch/log/slurmctld.out"
	fi
	sleep 0.1
done

# --- the slurmd, one per node name ------------------------------------------

for node in $NODES; do
	mkdir -p "$scratch/spool/$node"
	if [ -n "$uts" ]; then
		unshare --uts sh -c 'hostname "$1" && exec slurmd -D -f "$2" -N "$1"' sh "$node" "$conf" \
			>"$scratch/log/slurmd.$node.out" 2>&1 &
	else
		slurmd -D -f "$conf" -N "$node" >"$scratch/log/slurmd.$node.out" 2>&1 &
	fi
	pids="$pids $!"
	slurmd_pids="$slurmd_pids $!"
done

idle_nodes() {
	sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle" { print $1 }' | sort | tr '\n' ' ' | sed 's/ $//'
}
# until every node is idle, or every slurmd still running is (a slurmd that
# exited will not come), or 15 s
i=0
while [ "$i" -lt 150 ]; do
	idle=$(idle_nodes)
	[ "$idle" = "$NODES" ] && break
	alive "$ctld_pid" || break
	running=0
	for p in $slurmd_pids; do alive "$p" && running=$((running + 1)); done
	[ "$running" -gt 0 ] && [ "$(echo "$idle" | wc -w)" -ge "$running" ] && break
	[ "$running" -eq 0 ] && break
	sleep 0.1
	i=$((i + 1))
done
up=$(idle_nodes)
nup=$(echo "$up" | wc -w)
if [ "$nup" -eq 0 ]; then
	skip_all "no slurmd became idle within 15 s (sinfo: $(sinfo -h -N -o '%N=%t' 2>&1 | tr '\n' ' ' | sed 's/ $//'))" \
		"$scratch/log/slurmctld.out" "$scratch/log/slurmd.node1.out"
fi
if [ -n "$uts" ]; then
	how="$nup slurmd on one host (slurmd -N NAME, a Port each), each in its own UTS namespace named after its node"
else
	how="$nup slurmd on one host (slurmd -N NAME, a Port each), all with this host's name '$host' (unshare --uts failed)"
fi
if [ "$up" = "$NODES" ]; then
	ok "slurm cluster up on 127.0.0.1:$base: $(plural "$nup" node) idle ($up): $how"
else
	# Debian's build runs several slurmd on one host; a build that does not
	# still gives one node, and the checks below say what they could not do.
	ok "slurm cluster up on 127.0.0.1:$base: $nup of $want nodes idle ($up): $how"
	show_log "$scratch/log/slurmd.$(echo "$NODES" | awk '{ print $NF }').out"
fi

# --- the README's recipes ----------------------------------------------------

# The section's code block: its srun command, with its continuation lines.
recipe_output=$(awk '
	/^## / { f = ($0 ~ /^## Fleets/); next }
	f && /^```/ { b = !b; next }
	f && b && /^srun / { s = 1 }
	s { print; if ($0 !~ /\\$/) exit }' "$top/README.md")
# The section's one-line alternative that names the files after $SLURMD_NODENAME.
recipe_nodename=$(awk '/^## / { f = ($0 ~ /^## Fleets/); next } f' "$top/README.md" |
	grep -o '`srun [^`]*SLURMD_NODENAME[^`]*`' | head -n 1 | tr -d '`')

expected_value() { if [ "$1" = "$ODD" ]; then echo "$ODD_VALUE"; else echo "$USUAL_VALUE"; fi; }

# on_cluster OUT CMD...: run CMD in the shared folder with a clean
# environment, at most 20 s, output to OUT. In the background, waited for,
# so that a signal to this test stops it at once (the trap tears down).
on_cluster() {
	out=$1
	shift
	(cd "$shared" && exec env -i PATH="$scratch/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		HOME="$HOME" LANG=C LC_ALL=C TZ=UTC SLURM_CONF="$conf" OMP_NUM_THREADS="$SUBMIT_VALUE" \
		timeout -k 5 20 "$@") >"$out" 2>&1 </dev/null &
	wait $!
}

# run_recipe RECIPE: in a fresh shared folder, inside an allocation of the idle nodes
run_recipe() {
	rm -rf "$shared"
	mkdir -p "$shared"
	printf 'mkdir -p locks\n%s\n' "$1" >"$scratch/recipe.sh"
	on_cluster "$scratch/recipe.out" salloc -N "$nup" -w "$(echo "$up" | tr ' ' ',')" -J envlock-fleet sh "$scratch/recipe.sh"
}

# check_fleet WHAT: the locks in $shared/locks, one per node, and their drift
check_fleet() {
	w=$1
	names=$(cd "$shared/locks" 2>/dev/null && ls -- *.json 2>/dev/null | tr '\n' ' ' | sed 's/ $//')
	check_eq "$w: one lock per node, named after it" "$(for x in $up; do printf '%s.json ' "$x"; done | sed 's/ $//')" "$names"
	errs=$(cat "$shared"/locks/*.err 2>/dev/null; grep -v '^salloc: ' "$scratch/recipe.out")
	check_eq "$w: nothing on any node's stderr, nothing from srun" "" "$errs"
	bad=""
	for x in $up; do
		[ -f "$shared/locks/$x.json" ] || { bad="$bad $x.json: missing"; continue; }
		validate "$shared/locks/$x.json" >"$scratch/validate.out" 2>&1 || bad="$bad $(head -n 3 "$scratch/validate.out")"
	done
	check_eq "$w: every node's lock validates against schemas/envlock.lock.schema.json" "" "$bad"
	want_env="" got_env="" want_host="" got_host=""
	for x in $up; do
		want_env="$want_env $x=$(expected_value "$x")"
		got_env="$got_env $x=$(jget "$shared/locks/$x.json" env.variables.OMP_NUM_THREADS 2>/dev/null)"
		want_host="$want_host $x=$(node_host "$x")"
		got_host="$got_host $x=$(jget "$shared/locks/$x.json" host.hostname 2>/dev/null)"
	done
	check_eq "$w: each lock records its own node's OMP_NUM_THREADS (its TaskProlog's, not the submitter's $SUBMIT_VALUE)" "$want_env" "$got_env"
	check_eq "$w: each lock was saved on its own node (host.hostname)" "$want_host" "$got_host"

	if [ "$nup" -lt 2 ]; then
		skip "$w: the drift table" "only $nup node up: a drift table needs two locks or more"
		return
	fi
	case " $up " in
	*" $ODD "*) ;;
	*) skip "$w: the drift table" "$ODD, the odd node, is not up"; return ;;
	esac
	if [ "$up" != "$NODES" ] || [ "$want" -ne 3 ]; then
		skip "$w: the drift table" "the expected table is written for node1..node3, and $up are up"
		return
	fi
	# README: envlock diff locks/*.json
	(cd "$shared" && "$ENVLOCK" diff locks/*.json) >"$scratch/drift.out" 2>"$scratch/drift.err"
	check_status "$w: envlock diff locks/*.json" 1 $?
	check_eq "$w: the drift table holds exactly OMP_NUM_THREADS, with the majority and the odd node's value" \
"env
  OMP_NUM_THREADS  $USUAL_VALUE  2 of 3  info      $ODD.json: $ODD_VALUE" "$(sed '$d' "$scratch/drift.out")"
	case "$(tail -n 1 "$scratch/drift.out")" in
	"1 of "*" items drift across 1 of 3 files") ok "$w: drift verdict: 1 item, 1 odd file of 3" ;;
	*) not_ok "$w: drift verdict: 1 item, 1 odd file of 3"; tail -n 1 "$scratch/drift.out" | sed 's/^/#   /' ;;
	esac
	check_eq "$w: envlock diff: nothing on stderr" "" "$(cat "$scratch/drift.err")"
	# README: envlock diff --json locks/*.json >drift.json
	(cd "$shared" && "$ENVLOCK" diff --json locks/*.json >drift.json)
	check_status "$w: envlock diff --json locks/*.json >drift.json" 1 $?
	check_eq "$w: drift.json says the same" \
		"files=locks/node1.json,locks/node2.json,locks/node3.json drifting=1 odd_files=1 identical=False | env OMP_NUM_THREADS majority=$USUAL_VALUE x2 info differs: locks/$ODD.json=$ODD_VALUE" \
		"$("$PYTHON" - "$shared/drift.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = ["%s %s majority=%s x%d %s differs: %s" % (r["section"], r["key"], r["majority"], r["majority_count"], r["severity"],
        " ".join("%s=%s" % (o["file"], o["value"]) for o in r["differs"])) for r in d["drift"]]
print("files=%s drifting=%d odd_files=%d identical=%s | %s" % (",".join(d["files"]), d["drifting"], d["odd_files"],
      d["identical"], " ; ".join(rows)))
PY
)"
	# host name, id and time are not compared: two nodes alike are identical
	"$ENVLOCK" diff "$shared/locks/node1.json" "$shared/locks/node2.json" >"$scratch/pair.out" 2>&1
	check_status "$w: envlock diff node1 node2 (alike but for host name, id and time)" 0 $?
	check_eq "$w: node1 and node2 are identical" "identical" "$(cat "$scratch/pair.out")"
	"$ENVLOCK" diff "$shared/locks/node1.json" "$shared/locks/$ODD.json" >"$scratch/pair.out" 2>&1
	check_status "$w: envlock diff node1 $ODD" 1 $?
	check_eq "$w: node1 against $ODD: the one env difference" \
"env
  OMP_NUM_THREADS  $USUAL_VALUE → $ODD_VALUE  info
0 breaking, 0 risky, 1 info difference: no core part changed" "$(cat "$scratch/pair.out")"
}

# recipe_check WHAT RECIPE: run it, then check what it left
recipe_check() {
	if [ -z "$2" ]; then
		not_ok "$1: found in README.md's Fleets (Slurm) section"
		return
	fi
	printf '%s\n' "$2" | while IFS= read -r line; do echo "# $1: $line"; done
	run_recipe "$2"
	rc=$?
	check_status "$1: runs in an allocation of $(plural "$nup" node)" 0 "$rc"
	[ "$rc" -eq 0 ] || { show_log "$scratch/recipe.out"; show_log "$scratch/log/slurmd.node1.log"; }
	check_fleet "$1"
}

# README: "srun expands %N only in its own --output/--error, not in the command's arguments"
on_cluster "$scratch/echo.out" srun -N 1 -w "${up%% *}" echo 'locks/%N.json'
check_eq "srun leaves %N in the command's arguments alone (so envlock save -o locks/%N.json would write one file named %N.json)" \
	"locks/%N.json" "$(cat "$scratch/echo.out")"

if [ -n "$uts" ] || [ "$nup" -eq 1 ]; then
	recipe_check "README recipe (--output=locks/%N.json)" "$recipe_output"
else
	skip "README recipe (--output=locks/%N.json)" \
		"the nodes share this host's name ('$host', no UTS namespace here), and Slurm 22.05 expands --output's %N to the node's short host name, so every node would write locks/$host.json"
fi
recipe_check "README recipe (sh -c, \$SLURMD_NODENAME)" "$recipe_nodename"

summary
