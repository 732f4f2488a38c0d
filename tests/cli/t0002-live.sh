#!/bin/sh
# Save this machine and compare what the lock says with what the machine's
# own tools print right now: nvcc --version, the cuDNN header, gcc
# -dumpfullversion, ldd --version. Nothing here is a hard-coded number.
. "$(dirname "$0")/lib.sh"

lock=$scratch/live.json
"$ENVLOCK" save -q -o "$lock"
check_status "save of this machine" 0 $?
if validate "$lock" >"$scratch/v.out" 2>&1; then ok "live lockfile is valid against the schema"; else not_ok "live lockfile is valid against the schema"; sed 's/^/#   /' "$scratch/v.out"; fi

# the default toolkit's entry
tk=$("$PYTHON" - "$lock" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
d = doc['cuda'].get('default')
for i, t in enumerate(doc['cuda']['toolkits']):
    if t['home'] == d:
        print(i)
PY
)

nvcc=/usr/local/cuda/bin/nvcc
if [ -x "$nvcc" ] && [ -n "$tk" ]; then
	out=$("$nvcc" --version)
	want_release=$(printf '%s\n' "$out" | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
	want_version=$(printf '%s\n' "$out" | sed -n 's/.*, V\([0-9.]*\).*/\1/p')
	check_eq "toolkit release = nvcc --version's release" "$want_release" "$(jget "$lock" "cuda.toolkits.$tk.release")"
	check_eq "nvcc version = nvcc --version's V number" "$want_version" "$(jget "$lock" "cuda.toolkits.$tk.nvcc.version")"
	check_eq "toolkit version = nvcc --version's V number" "$want_version" "$(jget "$lock" "cuda.toolkits.$tk.version")"
else
	skip "toolkit version matches nvcc --version" "no /usr/local/cuda/bin/nvcc on this machine"
fi

hdr=
for h in /usr/local/cuda/include/cudnn_version.h /usr/include/cudnn_version.h /usr/include/x86_64-linux-gnu/cudnn_version.h; do
	[ -f "$h" ] && { hdr=$h; break; }
done
if [ -n "$hdr" ]; then
	want=$(awk '$1 == "#define" && $2 == "CUDNN_MAJOR" {M=$3} $1 == "#define" && $2 == "CUDNN_MINOR" {m=$3}
		$1 == "#define" && $2 == "CUDNN_PATCHLEVEL" {p=$3} END {print M "." m "." p}' "$hdr" | tr -d '\r')
	check_eq "cuDNN version = the macros in $hdr" "$want" "$(jget "$lock" cudnn.version)"
	# cuDNN libraries in the toolkit carry their soname, as readelf says
	lib=$(jget "$lock" cudnn.libraries.0.path)
	if [ -n "$lib" ] && command -v readelf >/dev/null 2>&1; then
		check_eq "cuDNN library soname = readelf's SONAME" \
			"$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" "$(jget "$lock" cudnn.libraries.0.soname)"
		check_eq "cuDNN library digest = sha256sum" "$(sha256sum "$lib" | cut -d' ' -f1)" "$(jget "$lock" cudnn.libraries.0.sha256)"
	else
		skip "cuDNN library soname = readelf" "no cuDNN library or no readelf"
	fi
else
	skip "cuDNN version matches the header" "no cudnn_version.h on this machine"
fi

if command -v gcc >/dev/null 2>&1; then
	check_eq "default gcc = gcc -dumpfullversion" "$(gcc -dumpfullversion -dumpversion)" "$(jget "$lock" compilers.default.version)"
	# a gcc first on PATH that is not /usr/bin/gcc is asked; /usr/bin/gcc is answered by dpkg, unrun
	mkdir -p "$scratch/pathgcc"
	printf '#!/bin/sh\necho 99.1.0\n' >"$scratch/pathgcc/gcc"
	chmod +x "$scratch/pathgcc/gcc"
	PATH=$scratch/pathgcc:$PATH "$ENVLOCK" save -q -o "$scratch/pathgcc.json"
	check_eq "a gcc earlier on PATH is the one recorded" "99.1.0 gcc -dumpfullversion" \
		"$(jget "$scratch/pathgcc.json" compilers.default.version) $(jget "$scratch/pathgcc.json" compilers.default.version_source)"
	if command -v strace >/dev/null 2>&1 && [ "$(readlink -f "$(command -v gcc)")" = "$(readlink -f /usr/bin/gcc)" ]; then
		strace -f -qq -e trace=execve -o "$scratch/execve.txt" "$ENVLOCK" save -q -o /dev/null
		check_eq "live save runs no program whose answer the files give (gcc, nvcc)" "" \
			"$(grep -v "\"$ENVLOCK\"" "$scratch/execve.txt" | grep -E 'gcc|nvcc')"
		# with the toolkit's bin out of PATH, the nvcc found may be a wrapper script
		# (/usr/local/bin/nvcc execs the toolkit's): its target answers, unrun
		nocuda=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '^/usr/local/cuda' | paste -sd: -)
		PATH=$nocuda strace -f -qq -e trace=execve -o "$scratch/execve2.txt" "$ENVLOCK" save -q -o /dev/null
		check_eq "... nor with the toolkit's bin out of PATH (a wrapper script first)" "" \
			"$(grep -v "\"$ENVLOCK\"" "$scratch/execve2.txt" | grep -E 'gcc|nvcc')"
	else
		skip "live save runs no gcc or nvcc" "no strace, or gcc on PATH is not /usr/bin/gcc"
	fi
else
	skip "default gcc version" "no gcc on this machine"
fi

if command -v ldd >/dev/null 2>&1; then
	check_eq "glibc = ldd --version" "$(ldd --version | head -n 1 | awk '{print $NF}')" "$(jget "$lock" system.glibc.version)"
else
	skip "glibc version" "no ldd on this machine"
fi
check_eq "arch = uname -m" "$(uname -m)" "$(jget "$lock" system.arch)"
check_eq "kernel = uname -r" "$(uname -r)" "$(jget "$lock" system.kernel.release)"
check_eq "logical cores = nproc --all" "$(nproc --all)" "$(jget "$lock" system.cpu.logical_cores)"

# The same machine state gives the same bytes (created aside)
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q -o "$scratch/a.json"
SOURCE_DATE_EPOCH=0 "$ENVLOCK" save -q -o "$scratch/b.json"
if cmp -s "$scratch/a.json" "$scratch/b.json"; then ok "two saves of this machine are byte-identical"; else not_ok "two saves of this machine are byte-identical"; diff "$scratch/a.json" "$scratch/b.json" | head -n 20 | sed 's/^/#   /'; fi

# A secret in the environment never reaches the lock
HF_TOKEN=hf_do_not_record MY_API_KEY=k CUDA_VISIBLE_DEVICES=0 "$ENVLOCK" save -q -o "$scratch/env.json"
check_eq "allow-listed variable recorded" "0" "$(jget "$scratch/env.json" env.variables.CUDA_VISIBLE_DEVICES)"
if grep -q 'hf_do_not_record' "$scratch/env.json"; then not_ok "a token in the environment is not recorded"; else ok "a token in the environment is not recorded"; fi
