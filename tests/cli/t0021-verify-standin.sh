#!/bin/sh
# envlock verify on a sandbox toolkit that fails the way real ones do.
#
# Stand-ins, and why: this machine's CUDA 13 nvcc accepts its gcc, and
# its cuDNN is installed properly, so the two classic failures cannot be
# produced with the real files. The sandbox holds
#  - a CUDA 11.8 nvcc stand-in (a shell script) that answers --version as
#    nvcc 11.8 does and fails a compile with the message nvcc 11.8 prints
#    when the host gcc is newer than 11 (quoted from the build log in
#    vectorch-ai/ScaleLLM PR #185); it records how it was called;
#  - a cuDNN 8.9.7 stand-in: a real shared library built here with gcc,
#    soname libcudnn.so.8, exporting cudnnGetVersion() = 8907, installed
#    without its libcudnn.so.8 link, as after copying cuDNN by hand.
# What is real: envlock, the probe of this machine, the rules file, the
# dynamic loader's answer, and this machine's gcc version.
. "$(dirname "$0")/lib.sh"

TMPDIR=$scratch/tmp
export TMPDIR
mkdir -p "$TMPDIR"
unset CUDA_HOME
tk=$scratch/cuda-11.8
mkdir -p "$tk/bin" "$tk/lib64" "$tk/include"
cat >"$tk/version.json" <<'EOF'
{
   "cuda" : { "name" : "CUDA SDK", "version" : "11.8.20220929" },
   "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "11.8.89" },
   "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "11.8.89" }
}
EOF
cat >"$tk/bin/nvcc" <<'EOF'
#!/bin/sh
# stand-in for CUDA 11.8's nvcc (see t0021-verify-standin.sh)
here=$(cd "$(dirname "$0")/.." && pwd)
printf 'TMPDIR=%s ARGS=%s\n' "$TMPDIR" "$*" >>"$here/calls.log"
case "$1" in
--version)
	printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2022 NVIDIA Corporation\nBuilt on Wed_Sep_21_10:33:58_PDT_2022\nCuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0\n'
	exit 0 ;;
--list-gpu-arch)
	# unsorted on purpose: envlock must pick the lowest by number
	printf 'compute_50\ncompute_52\ncompute_35\ncompute_90\ncompute_86\n'
	exit 0 ;;
esac
if [ -n "${STANDIN_OTHER_ERROR:-}" ]; then
	echo "nvcc fatal   : Could not open output file '$STANDIN_OTHER_ERROR'" >&2
	exit 1
fi
cat >&2 <<MSG
In file included from $here/bin/../targets/x86_64-linux/include/cuda_runtime.h:83,
                 from <command-line>:
$here/bin/../targets/x86_64-linux/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 11 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.
  132 | #error -- unsupported GNU version! gcc versions later than 11 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.
      |  ^~~~~
MSG
exit 1
EOF
chmod +x "$tk/bin/nvcc"
cat >"$scratch/cudnn8.c" <<'EOF'
#include <stddef.h>
size_t cudnnGetVersion(void) { return 8907; }
size_t cudnnGetCudartVersion(void) { return 11080; }
EOF
if ! gcc -shared -fPIC -Wl,-soname,libcudnn.so.8 -o "$tk/lib64/libcudnn.so.8.9.7" "$scratch/cudnn8.c" 2>"$scratch/gcc.err"; then
	skip "the cuDNN stand-in" "gcc cannot build a shared library here: $(head -n 1 "$scratch/gcc.err")"
fi

# the lockfile: this machine as saved, with the cuDNN 8.9.7 the project was locked to
"$ENVLOCK" save -q --no-repo -o "$scratch/mine.json"
"$PYTHON" - "$scratch/mine.json" "$scratch/locked.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["cudnn"]["status"] = "present"
d["cudnn"]["version"] = "8.9.7"
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY

"$ENVLOCK" verify "$scratch/locked.json" --cuda-home "$tk" --json >"$scratch/v.json" 2>"$scratch/v.err"
check_status "verify with the stand-in toolkit" 1 $?
stage() {
	"$PYTHON" - "$scratch/v.json" "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = next(x for x in doc["stages"] if x["stage"] == sys.argv[2])
for k in sys.argv[3].split("."):
    s = s.get(k) if isinstance(s, dict) else None
print("" if s is None else s)
PY
}

# toolchain: the failure, nvcc's first real error line, and the fix
check_eq "toolchain fails" "fail" "$(stage toolchain status)"
check_eq "toolchain: the toolkit asked for (--cuda-home)" "asked for" "$(stage toolchain figures.found_by)"
check_eq "toolchain: nvcc's version from the probe" "11.8.89" "$(stage toolchain figures.nvcc_version)"
stage toolchain figures.error >"$scratch/e"
check_grep "toolchain: the first real error line is the #error, not 'In file included from'" \
	"^$tk/bin/../targets/x86_64-linux/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 11 are not supported!" "$scratch/e"
stage toolchain reason >"$scratch/r"
check_grep "toolchain: the reason quotes it" "^nvcc 11.8.89 failed: .*unsupported GNU version" "$scratch/r"
# what the fix must say, from the shipped rules and this machine's gcc
max=$("$PYTHON" -c '
import json, sys
t = json.load(open(sys.argv[1]))["rows"]
print(next(r["max_gcc"] for r in t if r["cuda"] == "11.8"))' "$top/knowledge/nvidia/nvcc_gcc.json")
gcc_major=$(gcc -dumpversion | cut -d. -f1)
stage toolchain fix >"$scratch/f"
if [ "$gcc_major" -gt "$max" ]; then
	check_eq "toolchain: the rule that explains it" "gcc-too-new-for-nvcc" "$(stage toolchain figures.rule)"
	check_grep "toolchain: the rules' fix names gcc-$max and -ccbin" "^install gcc-$max and g++-$max and build with them: nvcc -ccbin g++-$max" "$scratch/f"
	check_grep "toolchain: and the cause" "nvcc of CUDA 11.8 accepts gcc up to $max, but the default gcc is $(gcc -dumpfullversion -dumpversion)" "$scratch/f"
else
	skip "the rules explain the failure" "this machine's gcc $gcc_major is not newer than $max"
fi
grep 'ARGS=-fmad' "$tk/calls.log" >"$scratch/compile" || true
check_grep "the compile asked for PTX of the lowest listed architecture" "-gencode arch=compute_35,code=compute_35 " "$scratch/compile"
check_grep "the compile wrote into a private folder under TMPDIR" "^TMPDIR=$TMPDIR/envlock-verify\.[A-Za-z0-9]* ARGS=" "$scratch/compile"
check_eq "that folder is gone" "" "$(ls -A "$TMPDIR")"

# runtime and training: nothing to run; the CPU reference still trains
check_eq "runtime: skipped" "nothing to run: the toolchain stage did not pass" "$(stage runtime reason)"
stage training reason >"$scratch/r"
check_grep "training: the CPU reference trained" "^the runtime stage did not pass; the CPU reference trained alone" "$scratch/r"

# cuDNN: the loader cannot find libcudnn.so.8; the probe found the file; the rules give the fix
if ldconfig -p | grep -q 'libcudnn\.so\.8 '; then
	skip "cuDNN 8 stand-in" "this machine's loader already knows a libcudnn.so.8"
else
	check_eq "cudnn fails" "fail" "$(stage cudnn status)"
	check_eq "cudnn: the expected version is the lockfile's" "8.9.7" "$(stage cudnn figures.expected)"
	stage cudnn reason >"$scratch/r"
	check_grep "cudnn: the loader's own error" "^libcudnn.so.8 cannot be loaded by its soname, though '$tk/lib64/libcudnn.so.8.9.7' has it: libcudnn.so.8: cannot open shared object file" "$scratch/r"
	stage cudnn fix >"$scratch/f"
	check_grep "cudnn: the missing soname link and how to make it" "^ln -s libcudnn.so.8.9.7 $tk/lib64/libcudnn.so.8 && ldconfig" "$scratch/f"
	check_eq "cudnn: its version read from the file the probe found" "8.9.7" "$(stage cudnn figures.library_version)"
fi

# lock: this machine now has a breaking problem the lockfile did not
check_eq "lock fails" "fail" "$(stage lock status)"
stage lock reason >"$scratch/r"
check_grep "lock: names the breaking difference" "^$scratch/locked.json: [0-9]* breaking" "$scratch/r"

# the same for a person
"$ENVLOCK" verify "$scratch/locked.json" --cuda-home "$tk" >"$scratch/t.out" 2>/dev/null
check_status "text output" 1 $?
if [ "$gcc_major" -gt "$max" ]; then
	check_grep "text: the fix line" "^                    fix: install gcc-$max and g++-$max" "$scratch/t.out"
fi
check_eq "text: verdict" "failed: toolchain cudnn lock" "$(tail -n 1 "$scratch/t.out")"

# a compile failure the rules cannot explain: the error line, and no invented fix
mkdir -p "$scratch/cuda-13.0-standin/bin"
cp "$tk/bin/nvcc" "$scratch/cuda-13.0-standin/bin/nvcc"
printf '{"cuda": {"version": "13.0.0"}, "cuda_nvcc": {"version": "13.0.88"}}\n' >"$scratch/cuda-13.0-standin/version.json"
STANDIN_OTHER_ERROR=/read-only/mlp "$ENVLOCK" verify --cuda-home "$scratch/cuda-13.0-standin" --json >"$scratch/v.json" 2>/dev/null
check_status "another nvcc failure" 1 $?
check_eq "its first error line" "nvcc fatal   : Could not open output file '/read-only/mlp'" "$(stage toolchain figures.error)"
check_eq "no fix the rules do not know" "" "$(stage toolchain fix)"

# a lockfile is untrusted input: hostile values where verify reads the lock
# (cuDNN version, default toolkit, any section diff reads) never crash it
# and never make it run or load anything named there
mkdir -p "$scratch/mut" "$scratch/no-nvcc"
"$PYTHON" - "$GOLDEN" "$scratch/mut" <<'PY'
import glob, json, os, random, sys
random.seed(11)
bases = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.lock.json")))]
junk = [None, 7, -1, 1e308, "", "x" * 300, [], {}, "99999999999999999999.1", "8", "-3.1",
        "/tmp/evil", "../../lib", "libcudnn.so.9/../../x", "\u0000\u001b[2J"]
for n in range(20):
    d = json.loads(json.dumps(random.choice(bases)))
    d.setdefault("cudnn", {})["status"] = "present"
    d["cudnn"]["version"] = random.choice(junk)
    d.setdefault("cuda", {})["default"] = random.choice(junk)
    d["cudnn"]["libraries"] = [{"name": "libcudnn.so.8", "path": random.choice(junk), "soname": random.choice(junk)}]
    json.dump(d, open(os.path.join(sys.argv[2], "m%02d.json" % n), "w"))
PY
crashed=0
for f in "$scratch"/mut/*.json; do
	"$ENVLOCK" verify "$f" --cuda-home "$scratch/no-nvcc" --cpu-only --steps 50 >/dev/null 2>&1
	st=$?
	if [ "$st" -ne 1 ] && [ "$st" -ne 2 ]; then
		crashed=$((crashed + 1))
		echo "# envlock verify $f: exit $st"
	fi
done
check_eq "20 hostile lockfiles: verify fails cleanly (exit 1 or 2), never crashes" "0" "$crashed"

# canaries: a toolkit and a cuDNN that exist only in the lockfile's paths
# would leave a file behind if verify ran or loaded them
mkdir -p "$scratch/evil/bin" "$scratch/evil/lib64"
printf '#!/bin/sh\n: >"%s/evil-nvcc-ran"\nexit 1\n' "$scratch" >"$scratch/evil/bin/nvcc"
chmod +x "$scratch/evil/bin/nvcc"
printf '#include <stdio.h>\n__attribute__((constructor)) static void ran(void) { fclose(fopen("%s/evil-lib-loaded", "w")); }\nunsigned long cudnnGetVersion(void) { return 8907; }\n' \
	"$scratch" >"$scratch/evil.c"
gcc -shared -fPIC -Wl,-soname,libcudnn.so.8 -o "$scratch/evil/lib64/libcudnn.so.8.9.7" "$scratch/evil.c"
"$PYTHON" - "$scratch/locked.json" "$scratch/evil.json" "$scratch/evil" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
home = sys.argv[3]
d["cuda"]["default"] = home
d["cuda"]["toolkits"] = [{"home": home, "status": "present", "version": "11.8.89", "release": "11.8", "nvcc": {"path": home + "/bin/nvcc"}, "libraries": []}]
d["cudnn"]["libraries"] = [{"name": "libcudnn.so.8.9.7", "path": home + "/lib64/libcudnn.so.8.9.7", "soname": "libcudnn.so.8", "links": []}]
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
CUDA_HOME=$tk "$ENVLOCK" verify "$scratch/evil.json" --steps 50 --json >"$scratch/v.json" 2>/dev/null
check_status "a lockfile naming a toolkit and a cuDNN this machine does not have" 1 $?
check_eq "its toolkit's nvcc was not run" "no" "$([ -e "$scratch/evil-nvcc-ran" ] && echo yes || echo no)"
check_eq "its cuDNN was not loaded" "no" "$([ -e "$scratch/evil-lib-loaded" ] && echo yes || echo no)"
check_eq "the toolkit came from \$CUDA_HOME instead" "\$CUDA_HOME" "$(stage toolchain figures.found_by)"
if ! ldconfig -p | grep -q 'libcudnn\.so\.8 '; then
	check_eq "the cuDNN read is the one the probe found on this machine" "$tk/lib64/libcudnn.so.8.9.7" "$(stage cudnn figures.library)"
fi

# a lockfile whose default toolkit this machine's probe finds too (through $CUDA_HOME here):
# that toolkit's nvcc, found as the lockfile's, which comes before $CUDA_HOME
CUDA_HOME=$tk "$ENVLOCK" save -q --no-repo -o "$scratch/with-tk.json"
"$PYTHON" - "$scratch/with-tk.json" "$scratch/default-tk.json" "$tk" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
home = next(t["home"] for t in d["cuda"]["toolkits"] if os.path.realpath(t["home"]) == os.path.realpath(sys.argv[3]))
d["cuda"]["default"] = home
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
CUDA_HOME=$tk "$ENVLOCK" verify "$scratch/default-tk.json" --cpu-only --steps 50 --json >"$scratch/v.json" 2>/dev/null
check_eq "found by the lockfile's default toolkit" "the lockfile's default toolkit" "$(stage toolchain figures.found_by)"
check_eq "its nvcc, at the home the probe found" "$(cd "$tk" && pwd -P)/bin/nvcc" "$(stage toolchain figures.nvcc)"
# the lockfile names its default toolkit by an alias that is another toolkit here: not the lockfile's
mkdir -p "$scratch/other-tk/bin"
cp "$tk/bin/nvcc" "$scratch/other-tk/bin/nvcc"
printf '{"cuda": {"version": "12.1.1"}, "cuda_nvcc": {"version": "12.1.105"}}\n' >"$scratch/other-tk/version.json"
ln -s other-tk "$scratch/alias-tk"
"$PYTHON" - "$scratch/default-tk.json" "$scratch/alias.json" "$scratch/alias-tk" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tk = next(t for t in d["cuda"]["toolkits"] if t["home"] == d["cuda"]["default"])
tk["aliases"] = [sys.argv[3]]
d["cuda"]["default"] = sys.argv[3]
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
CUDA_HOME=$scratch/alias-tk "$ENVLOCK" verify "$scratch/alias.json" --cpu-only --steps 50 --json >"$scratch/v.json" 2>/dev/null
check_eq "an alias of the lockfile's default toolkit is not that toolkit here" "\$CUDA_HOME" "$(stage toolchain figures.found_by)"

# cuDNN is loaded by a program envlock builds with the host compiler and
# runs in its own environment, never in envlock: a stand-in cuDNN 9.12.34
# that LD_LIBRARY_PATH points at is what that program loads, as any
# program would. The stand-in prints a report of its own while it loads
# (as cuDNN's log does with CUDNN_LOGDEST_DBG=stdout), which must not be
# taken for the program's.
mkdir -p "$scratch/fake9" "$scratch/crash9"
cat >"$scratch/cudnn9.c" <<'EOF'
#include <stddef.h>
#include <stdio.h>
__attribute__((constructor)) static void noise(void) { printf("program=envlock-cudnn-load 1\nversion=80000\nend=1\n"); }
size_t cudnnGetVersion(void) { return 91234; }
size_t cudnnGetCudartVersion(void) { return 12080; }
EOF
gcc -shared -fPIC -Wl,-soname,libcudnn.so.9 -o "$scratch/fake9/libcudnn.so.9.12.34" "$scratch/cudnn9.c"
ln -s libcudnn.so.9.12.34 "$scratch/fake9/libcudnn.so.9"
printf '#include <stdlib.h>\n__attribute__((constructor)) static void boom(void) { abort(); }\n' >"$scratch/crash9.c"
gcc -shared -fPIC -Wl,-soname,libcudnn.so.9 -o "$scratch/crash9/libcudnn.so.9" "$scratch/crash9.c"
"$PYTHON" - "$scratch/mine.json" "$scratch/locked9.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["cudnn"]["status"] = "present"
d["cudnn"]["version"] = "9.12.34"
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
fake=$(readlink -f "$scratch/fake9/libcudnn.so.9.12.34")
LD_LIBRARY_PATH=$scratch/fake9 "$ENVLOCK" verify "$scratch/locked9.json" --cuda-home "$scratch/no-nvcc" --cpu-only --steps 50 --json \
	>"$scratch/v.json" 2>/dev/null
check_status "verify with LD_LIBRARY_PATH at a stand-in cuDNN 9 (no nvcc: the toolchain fails)" 1 $?
fake_passed=$(stage cudnn status)
check_eq "cudnn: the stand-in passes against the lockfile's 9.12.34" "pass" "$fake_passed"
check_eq "cudnn: the loaded file is the stand-in, by its real path" "$fake" "$(stage cudnn figures.library)"
check_eq "cudnn: its cudnnGetVersion()" "91234" "$(stage cudnn figures.cudnnGetVersion)"
check_eq "cudnn: decoded" "9.12.34" "$(stage cudnn figures.library_version)"
check_eq "cudnn: its cudnnGetCudartVersion()" "12.8" "$(stage cudnn figures.built_with_cuda)"
check_eq "cudnn: the reason" "cuDNN 9.12.34 loaded by its soname from '$fake' matches the lockfile; no cuDNN operation was run: CPU parts only" \
	"$(stage cudnn reason)"
check_eq "cudnn: built by the gcc in PATH" "$(command -v gcc)" "$(stage cudnn figures.compiler)"
check_eq "the private folder is gone (the program and its source too)" "" "$(ls -A "$TMPDIR")"

# the same lockfile without LD_LIBRARY_PATH: the stand-in is not what loads
(unset LD_LIBRARY_PATH; "$ENVLOCK" verify "$scratch/locked9.json" --cuda-home "$scratch/no-nvcc" --cpu-only --steps 50 --json \
	>"$scratch/v.json" 2>/dev/null)
check_status "the same without LD_LIBRARY_PATH" 1 $?
check_eq "cudnn: fails without the stand-in" "fail" "$(stage cudnn status)"
check_eq "cudnn: the stand-in was not loaded" "no" "$([ "$(stage cudnn figures.library)" = "$fake" ] && echo yes || echo no)"

# a library that kills the program while loading: envlock names it and goes on
LD_LIBRARY_PATH=$scratch/crash9 "$ENVLOCK" verify "$scratch/locked9.json" --cuda-home "$scratch/no-nvcc" --cpu-only --steps 50 --json \
	>"$scratch/v.json" 2>/dev/null
check_status "a cuDNN that aborts while loading: envlock does not crash" 1 $?
stage cudnn reason >"$scratch/r"
check_grep "cudnn: the program was killed, and by what" "^the program that loads libcudnn.so.9 was killed by signal 6 (" "$scratch/r"

# the host compiler: gcc in PATH, else cc; none: said plainly; one that fails: its first error line
if [ "$fake_passed" = pass ]; then
	mkdir -p "$scratch/nocc" "$scratch/ccbin" "$scratch/badcc"
	PATH=$scratch/nocc LD_LIBRARY_PATH=$scratch/fake9 "$ENVLOCK" verify "$scratch/locked9.json" --cuda-home "$scratch/no-nvcc" \
		--cpu-only --steps 50 --json >"$scratch/v.json" 2>/dev/null
	check_status "no C compiler in PATH" 1 $?
	check_eq "cudnn: no compiler, said plainly" "no C compiler to build the program that loads cuDNN (no gcc or cc in PATH)" \
		"$(stage cudnn reason)"
	check_eq "cudnn: and the fix" "install gcc (nvcc needs it as its host compiler too), or add its folder to PATH" "$(stage cudnn fix)"
	check_eq "cudnn: no version is guessed" "" "$(stage cudnn figures.library_version)"
	for tool in as ld; do ln -s "$(command -v "$tool")" "$scratch/ccbin/$tool"; done
	ln -s "$(command -v gcc)" "$scratch/ccbin/cc"
	PATH=$scratch/ccbin LD_LIBRARY_PATH=$scratch/fake9 "$ENVLOCK" verify "$scratch/locked9.json" --cuda-home "$scratch/no-nvcc" \
		--cpu-only --steps 50 --json >"$scratch/v.json" 2>/dev/null
	check_eq "cudnn: with only cc in PATH, cc builds it" "$scratch/ccbin/cc" "$(stage cudnn figures.compiler)"
	check_eq "cudnn: and it loads the stand-in" "pass $fake" "$(stage cudnn status) $(stage cudnn figures.library)"
	printf '#!/bin/sh\nfor a; do case "$a" in *.c) src=$a ;; esac; done\necho "$src:28:10: fatal error: dlfcn.h: No such file or directory" >&2\nexit 1\n' \
		>"$scratch/badcc/gcc"
	chmod +x "$scratch/badcc/gcc"
	PATH=$scratch/badcc:$PATH LD_LIBRARY_PATH=$scratch/fake9 "$ENVLOCK" verify "$scratch/locked9.json" --cuda-home "$scratch/no-nvcc" \
		--cpu-only --steps 50 --json >"$scratch/v.json" 2>/dev/null
	stage cudnn reason >"$scratch/r"
	check_grep "cudnn: a compiler that fails: its first error line" \
		"^'$scratch/badcc/gcc' could not build the program that loads cuDNN: $TMPDIR/envlock-verify\.[A-Za-z0-9]*/cudnn_load\.c:28:10: fatal error: dlfcn.h: No such file or directory$" \
		"$scratch/r"
else
	skip "the host compiler checks" "the stand-in cuDNN 9 did not pass"
fi

# verify compiles with the toolkit save makes the default, by the same rules in the same order:
# the stand-in's nvcc first in PATH comes before /usr/local/cuda (torch.utils.cpp_extension's order)
env -u CUDA_HOME -u CUDA_PATH PATH="$tk/bin:$PATH" "$ENVLOCK" save -q --no-repo -o "$scratch/path.json" 2>/dev/null
env -u CUDA_HOME -u CUDA_PATH PATH="$tk/bin:$PATH" "$ENVLOCK" verify --json >"$scratch/v.json" 2>/dev/null
check_eq "save: PATH's nvcc makes the stand-in the default" "$(cd "$tk" && pwd -P) PATH" \
	"$("$PYTHON" -c 'import json, sys; c = json.load(open(sys.argv[1]))["cuda"]; print(c.get("default"), c.get("default_by"))' "$scratch/path.json")"
check_eq "verify: the same toolkit, found the same way" "$(cd "$tk" && pwd -P) PATH $tk/bin/nvcc" \
	"$(stage toolchain figures.toolkit) $(stage toolchain figures.found_by) $(stage toolchain figures.nvcc)"
