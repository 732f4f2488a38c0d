#!/bin/sh
# envlock restore --kit with no conda (or --no-conda): envlock links the
# kit's conda archives itself, as conda's package format defines it. The
# archives are real ones, made here by Debian's conda-package-handling
# (cph create, cph transmute) from generated package folders
# (tests/kit/mkconda.py): this machine's python3 wrapped as a venv
# --copies does, a text file and an ELF program with a placeholder, a soft
# link, a no_link file, a noarch python package with an entry point, an
# old package with only info/has_prefix. What envlock linked is compared
# with cph extract's output after the documented replacement, computed
# independently in Python. The round trip (pack -> restore -> save ->
# diff) runs with no network (unshare -n) and no conda on PATH.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
MK=$top/tests/kit/mkconda.py
if ! command -v cph >/dev/null 2>&1; then
	skip "envlock links conda archives itself" "no cph here (Debian: conda-package-handling; make deps)"
	exit 0
fi
# conda-build's placeholder is long (255 bytes) so that any prefix fits a binary one
PH=/tmp/_h_env$(printf '_placehold%.0s' $(seq 20))
if ! "$PYTHON" "$MK" pkgs "$scratch" "$PH" >mk.err 2>&1; then
	not_ok "tests/kit/mkconda.py made the packages with cph"
	sed 's/^/#   /' mk.err
	exit 1
fi
ok "tests/kit/mkconda.py made the packages with cph"
check_eq "a .tar.bz2, three .conda (one transmuted from a .tar.bz2)" \
	"elc-lib-1.2.0-h1a2b3c_0.conda elc-noarch-0.3-pyh0_0.conda elc-old-0.9-0.tar.bz2 python-$($PYTHON -c 'import platform; print(platform.python_version())')-h0_0.conda" \
	"$(ls pkgs | tr '\n' ' ' | sed 's/ $//')"
XY=$($PYTHON -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# the machine before: its environment as cph extracts the archives, with conda-meta records
"$PYTHON" "$MK" env "$PWD/S" https://conda.example/main pkgs/*
"$ENVLOCK" save -q --conda-prefix "$PWD/S" --python "$PWD/S/bin/python" -o L.lock 2>save.err
"$ENVLOCK" pack L.lock -o KIT --conda-pkgs "$PWD/pkgs" >/dev/null 2>pack.err
check_status "pack the lock's four archives" 0 $?
"$ENVLOCK" pack L.lock -o kit.tar.zst --conda-pkgs "$PWD/pkgs" >/dev/null 2>pack.err
check_status "and as a .tar.zst" 0 $?

# no conda anywhere: PATH of the system's folders only, none with a conda in it
NOCONDA=/usr/bin:/bin
for d in /usr/bin /bin; do
	for c in conda mamba micromamba; do
		[ -x "$d/$c" ] && skip "restore with no conda on PATH" "$d/$c is there" && exit 0
	done
done
if unshare -n true 2>/dev/null; then
	offline() { env PATH=$NOCONDA unshare -n "$@"; }
else
	offline() { env PATH=$NOCONDA "$@"; }
	skip "the restores run with no network" "unshare -n fails here"
fi
# restore KIT PREFIX ARGS...: the conda step alone, into $PWD/PREFIX
restore() {
	_kit=$1 _prefix=$2
	shift 2
	offline "$ENVLOCK" restore L.lock --prefix "$PWD/$_prefix" --only conda --state-dir "$PWD/state" --kit "$_kit" "$@"
}

# --- the round trip ----------------------------------------------------------------
restore KIT P --no-conda --yes >out 2>err
check_status "restore --kit --no-conda, offline, no conda on PATH" 0 $?
check_grep "envlock linked it" "done    create conda environment $scratch/P with envlock (4 packages, offline, linked from the kit's archives)" out
check_eq "every file as cph extracts it, after the documented replacement; modes and link targets" "" \
	"$("$PYTHON" "$MK" check "$PWD/P" "$XY" pkgs/*)"
check_eq "the ELF program runs, its string the new prefix" "elc-hello $scratch/P/share/elc" "$(P/bin/elc-hello)"
check_eq "its RUNPATH the new prefix" "[$scratch/P/lib]" \
	"$(readelf -d P/bin/elc-hello | sed -n 's/.*Library runpath: //p')"
check_eq "a soft link stays a link" "libelc.so.1" "$(readlink P/lib/libelc.so)"
check_eq "the no_link file is a copy, the plain one a hard link (of the cache, now gone: one link)" "1 1" \
	"$(stat -c %h P/share/elc/no-link.dat) $(stat -c %h P/share/elc/plain.txt)"
check_eq "the old package's has_prefix file, with the standard placeholder" "echo $scratch/P/bin" "$(sed -n 3p P/bin/elc-old)"
check_eq "noarch python under lib/python$XY/site-packages" "ok" \
	"$([ -f "P/lib/python$XY/site-packages/elcmod/__init__.py" ] && echo ok)"
check_eq "the entry point's shebang: the environment's python" "#!$scratch/P/bin/python" "$(head -n 1 P/bin/elc-entry)"
check_eq "the entry point runs" "elc-entry ok $scratch/P/lib/python$XY/site-packages/elcmod/__init__.py" "$(P/bin/elc-entry)"
check_eq "a text script's shebang within the kernel's 127 bytes: kept" "#!$scratch/P/bin/python" "$(head -n 1 P/bin/elc-tool)"
check_eq "the .pyc, compiled where the environment is, names the real path" \
	"$scratch/P/lib/python$XY/site-packages/elcmod/__init__.py" \
	"$("$PYTHON" -c 'import marshal,sys; print(marshal.loads(open(sys.argv[1],"rb").read()[16:]).co_filename)' \
		P/lib/python$XY/site-packages/elcmod/__pycache__/__init__.cpython-$(echo "$XY" | tr -d .).pyc)"
check_eq "conda-meta: a record per package, the lock's channel and url, the kit's path only in link" \
	"elc-lib 1.2.0 h1a2b3c_0 https://conda.example/main https://conda.example/main/linux-64/elc-lib-1.2.0-h1a2b3c_0.conda $scratch/KIT/conda/elc-lib-1.2.0-h1a2b3c_0.conda 7
elc-noarch 0.3 pyh0_0 https://conda.example/main https://conda.example/main/noarch/elc-noarch-0.3-pyh0_0.conda $scratch/KIT/conda/elc-noarch-0.3-pyh0_0.conda 4
elc-old 0.9 0 https://conda.example/main https://conda.example/main/linux-64/elc-old-0.9-0.tar.bz2 $scratch/KIT/conda/elc-old-0.9-0.tar.bz2 2" \
	"$("$PYTHON" -c 'import json,sys,glob
for f in sorted(glob.glob(sys.argv[1] + "/conda-meta/elc-*.json")):
    r = json.load(open(f))
    assert r["files"] == [p["_path"] for p in r["paths_data"]["paths"]]
    assert len(r["md5"]) == 32 and len(r["sha256"]) == 64
    print(r["name"], r["version"], r["build"], r["channel"], r["url"], r["link"]["source"], len(r["files"]))' P)"
check_eq "each record as conda writes it: json.dumps(indent=2, sort_keys=True, separators=(',', ': ')), ASCII" "" \
	"$("$PYTHON" -c 'import json,sys,glob
for f in sorted(glob.glob(sys.argv[1] + "/conda-meta/*.json")):
    text = open(f, "rb").read()
    if text != json.dumps(json.loads(text), indent=2, sort_keys=True, separators=(",", ": ")).encode():
        print(f)
r = json.load(open(sys.argv[1] + "/conda-meta/elc-lib-1.2.0-h1a2b3c_0.json"))
if r["license"] != "MIT (\u00a9 elc, \U0001d53c)":
    print(repr(r["license"]))' P)"
check_grep "conda-meta/history: each package added" "^+https://conda.example/main::elc-noarch-0.3-pyh0_0$" P/conda-meta/history
"$ENVLOCK" save -q --conda-prefix "$PWD/P" --python "$PWD/P/bin/python" -o N.lock 2>/dev/null
"$ENVLOCK" diff L.lock N.lock >diff.txt
check_grep "diff: nothing breaking, nothing risky" "^0 breaking, 0 risky, " diff.txt
check_eq "and no conda package changed: only the prefixes" \
	"python prefix $scratch/S -> $scratch/P
conda prefix $scratch/S -> $scratch/P" \
	"$("$ENVLOCK" diff L.lock N.lock --json | "$PYTHON" -c 'import json,sys
for d in json.load(sys.stdin)["differences"]:
    print(d["section"], d["key"], d.get("a") or "", "->", d.get("b") or "")')"
restore KIT P --no-conda --dry-run >again 2>&1
check_status "a second run: nothing to do" 0 $?

# with no conda found, a .tar.zst kit: the same, without --no-conda, into a prefix
# long enough that "#!PREFIX/bin/python" passes the kernel's 127 bytes
long2=$(printf 'l%.0s' $(seq $((128 - ${#scratch}))))/P2
restore kit.tar.zst "$long2" --yes >out 2>err
check_status "restore --kit kit.tar.zst with no conda found" 0 $?
check_grep "envlock linked it, saying why" "with envlock (4 packages, offline, linked from the kit's archives; no conda found)" out
check_eq "the same files, a long shebang of a text file as conda rewrites it" "" "$("$PYTHON" "$MK" check "$PWD/$long2" "$XY" pkgs/*)"
check_eq "a text script's long shebang: /usr/bin/env and the program" "#!/usr/bin/env python" "$(head -n 1 "$long2/bin/elc-tool")"
check_eq "which runs the environment's python from PATH" "elc-tool $scratch/$long2" "$(PATH=$scratch/$long2/bin:$PATH "$long2/bin/elc-tool")"
# the .tar.zst kit is read once: each file checked against the bundle's manifest as it streams
if command -v strace >/dev/null 2>&1; then
	# LeakSanitizer cannot run under ptrace (make asan): leaks are checked by the runs without strace
	env PATH=$NOCONDA ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -y -e trace=read,pread64 -o io.trace \
		"$ENVLOCK" restore L.lock --prefix "$PWD/P3" --only conda --state-dir "$PWD/state3" --kit kit.tar.zst --yes >out 2>err
	check_status "restore --kit kit.tar.zst under strace" 0 $?
	check_eq "the kit's bytes read once" "$(stat -c %s kit.tar.zst)" \
		"$(grep -F "<$scratch/kit.tar.zst>" io.trace | sed -n 's/.* = \([0-9][0-9]*\)$/\1/p' | awk '{s += $1} END {print s + 0}')"
	check_eq "and no line about a second read" "0" "$(grep -c 'read a second time' err)"
else
	skip "the .tar.zst kit is read once" "no strace here"
fi

# --- refused, one line naming the archive, nothing left ------------------------------
long=$scratch/$(printf 'x%.0s' $(seq 120))/$(printf 'y%.0s' $(seq 120))/env
offline "$ENVLOCK" restore L.lock --prefix "$long" --only conda --state-dir "$PWD/state" --kit KIT --no-conda --yes >out 2>err
check_status "a prefix longer than a binary placeholder: the step fails" 1 $?
check_grep "naming the archive, the file and the lengths" \
	"'$scratch/KIT/conda/elc-lib-1.2.0-h1a2b3c_0.conda': path 'bin/elc-hello': the prefix '$long' is 2[0-9][0-9] bytes, longer than the ${#PH} of its binary placeholder" out
check_eq "before anything was written" "no prefix" "$([ -e "$long" ] && echo prefix || echo no prefix)"

# bad_kit KIND: a lock and a kit whose one package is tests/kit/mkconda.py's hostile KIND
bad_kit() {
	rm -rf "B$1" && mkdir "B$1" && "$PYTHON" "$MK" bad "$PWD/B$1" "$1" "$PH" &&
		"$PYTHON" "$MK" env "$PWD/B$1/S" https://conda.example/main "B$1"/pkgs/* 2>/dev/null
	"$ENVLOCK" save -q --conda-prefix "$PWD/B$1/S" --python "$PWD/S/bin/python" -o "B$1/L.lock" 2>/dev/null
	"$ENVLOCK" pack "B$1/L.lock" -o "B$1/KIT" --conda-pkgs "$PWD/B$1/pkgs" >/dev/null 2>&1
}
restore_bad() {
	rm -rf "$2"
	offline "$ENVLOCK" restore "B$1/L.lock" --prefix "$2" --only conda --state-dir "$PWD/state" --kit "B$1/KIT" --no-conda --yes >out 2>err
}
for kind in escape outlink longph; do
	bad_kit $kind
	restore_bad $kind "$PWD/Q"
	check_status "$kind: the step fails" 1 $?
	case $kind in
	escape) want="info/paths.json: path '../../escaped.txt': has a '..' component" ;;
	outlink) want="path 'share/passwd': a link to '/etc/passwd', outside the environment" ;;
	longph) want="path 'etc/x.conf': prefix placeholder of 2048 bytes" ;;
	esac
	check_eq "$kind: one line naming the archive" 1 "$(grep -c -- "'$scratch/B$kind/KIT/conda/elc-bad-1.0-0.conda': $want" out)"
	check_eq "$kind: nothing left" "no prefix, no staging folder, nothing outside" \
		"$([ -e Q ] && echo prefix || echo no prefix), $(ls -a | grep -q '\.envlock-link\.' && echo staging || echo no staging folder), $([ -e "$scratch/escaped.txt" ] || [ -e /escaped.txt ] && echo escaped || echo nothing outside)"
done
# a truncated archive the lock recorded as it is: the kit agrees, the archive cannot be read
bad_kit truncated
restore_bad truncated "$PWD/Q"
check_status "truncated: the step fails" 1 $?
check_eq "truncated: one line naming the archive" 1 "$(grep -c "'$scratch/Btruncated/KIT/conda/elc-bad-1.0-0.conda': " out)"
check_eq "truncated: nothing left" "no prefix" "$([ -e Q ] && echo prefix || echo no prefix)"
# a sha256 mismatch: the kit's own check, before the plan
cp -R KIT T1 && printf 'x' >>T1/conda/elc-old-0.9-0.tar.bz2
restore T1 Q --no-conda --yes >out 2>err
check_status "an archive changed by a byte: refused" 2 $?
check_eq "one line naming it" "1" "$(grep -c "kit 'T1/conda/elc-old-0.9-0.tar.bz2': " err)"
check_eq "nothing made" "no prefix" "$([ -e Q ] && echo prefix || echo no prefix)"

# --- interrupted: nothing half-made; the journal and log stay ---------------------------
# (one SIGINT to envlock, as Ctrl-C sends it: timeout without --foreground sends a
# second one to the whole group, and a second signal kills at once, by design)
if command -v timeout >/dev/null 2>&1; then
	rm -rf state2
	env PATH=$NOCONDA timeout --foreground -s INT 0.3 "$ENVLOCK" restore L.lock --prefix "$PWD/P4" --only conda --state-dir "$PWD/state2" \
		--kit KIT --no-conda --yes >out 2>err
	st=$?
	if [ -e P4 ]; then
		check_eq "Ctrl-C after the link: the environment is whole" "" "$("$PYTHON" "$MK" check "$PWD/P4" "$XY" pkgs/*)"
	else
		check_eq "Ctrl-C: no prefix, no staging folder" "no staging folder" \
			"$(ls -a | grep -q '\.envlock-link\.' && echo staging || echo no staging folder)"
	fi
	restore KIT P4 --no-conda --yes >out 2>err
	check_status "a second run (exit $st before) finishes the job" 0 $?
	check_eq "and the environment is whole" "" "$("$PYTHON" "$MK" check "$PWD/P4" "$XY" pkgs/*)"
fi
