#!/bin/sh
# Versions from the files that carry them, on a tree of Debian 12's own
# packages (apt-get download + dpkg -x, tests/loader/fetch.sh): Python from
# patchlevel.h, else from the interpreter's or libpython's own PY_VERSION;
# gcc from cc1's version string; and the package that installed each
# recorded file, from a dpkg status and info/*.list built from the .debs
# themselves (dpkg-deb -f, dpkg-deb --fsys-tarfile). Every expected version
# is read from the packages at test time.
. "$(dirname "$0")/lib.sh"

build=${BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
cache=$build/loader/debs
pkgs="libc6 python3-minimal python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
libpython3.11 libpython3.11-dev cpp-12 python3-torch"
# shellcheck disable=SC2086
setup_or_skip "tests/loader/fetch.sh fetched the packages" \
	"versions from the files that carry them, on Debian 12's packages" sh "$top/tests/loader/fetch.sh" "$cache" $pkgs
deb() { ls "$cache/${1}_"*.deb | head -n 1; }
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
upstream() { field "$1" Version | sed -e 's/^[0-9]*://' -e 's/[-+~].*//'; }

# mkdeb TREE: the packages laid out, with dpkg's own record of them
mkdeb() {
	t=$1
	rm -rf "$t" && mkdir -p "$t/var/lib/dpkg/info"
	: >"$t/var/lib/dpkg/status"
	for p in $pkgs; do
		d=$(deb "$p")
		dpkg -x "$d" "$t" || return 1
		# dpkg names a Multi-Arch: same package's list <package>:<arch>.list
		name=$p
		[ "$(field "$p" Multi-Arch)" = same ] && name=$p:$(field "$p" Architecture)
		dpkg-deb --fsys-tarfile "$d" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' -e 's|^$|/.|' \
			>"$t/var/lib/dpkg/info/$name.list"
		# dpkg adds the Status field when it installs a package
		{ dpkg-deb -f "$d" | sed '/^Package:/a Status: install ok installed'; echo; } >>"$t/var/lib/dpkg/status"
	done
	# Debian 12 is merged-/usr (usrmerge): /lib, /lib64, /bin, /sbin lead into /usr
	for d in lib lib64 bin sbin; do
		if [ -d "$t/$d" ] && [ ! -L "$t/$d" ]; then
			mkdir -p "$t/usr/$d" && cp -a "$t/$d/." "$t/usr/$d/" && rm -rf "${t:?}/$d"
		fi
		[ -e "$t/$d" ] || ln -s "usr/$d" "$t/$d"
	done
}
tree=$scratch/debian
if ! mkdeb "$tree"; then
	not_ok "the Debian tree is laid out"; exit 1
fi
py=$(upstream python3.11-minimal)
gcc=$(upstream cpp-12)
# the interpreter's own PY_VERSION: what the package's file really says
carried=$("$PYTHON" -c 'import re, sys; m = re.search(rb"\0(3\.11\.[0-9]+)\0", open(sys.argv[1], "rb").read()); print(m.group(1).decode() if m else "")' "$tree/usr/bin/python3.11")
check_eq "python3.11's own string is the package's upstream version" "$py" "$carried"

"$ENVLOCK" save --root "$tree" -o a.lock.json 2>a.err
check_status "save of the Debian tree" 0 $?
check_eq "the lock is valid" valid "$(schema_errors a.lock.json)"
check_eq "python: the version patchlevel.h carries" \
	"$py /usr/include/python3.11/patchlevel.h" \
	"$(jget a.lock.json python.version) $(jget a.lock.json python.version_source)"
check_eq "python: its package" "python3.11-minimal $(field python3.11-minimal Version)" \
	"$(jget a.lock.json python.deb.package) $(jget a.lock.json python.deb.version)"
check_eq "gcc 12: the version cc1 carries" \
	"$gcc /usr/lib/gcc/x86_64-linux-gnu/12/cc1" \
	"$(jget a.lock.json compilers.gcc.0.version) $(jget a.lock.json compilers.gcc.0.version_source)"
check_eq "gcc 12: cc1's package" "cpp-12 $(field cpp-12 Version)" \
	"$(jget a.lock.json compilers.gcc.0.deb.package) $(jget a.lock.json compilers.gcc.0.deb.version)"
check_eq "glibc: libc6 (Multi-Arch: same, its list named libc6:amd64), through merged /usr" \
	"libc6 $(field libc6 Version) $(field libc6 Architecture)" \
	"$(jget a.lock.json system.glibc.deb.package) $(jget a.lock.json system.glibc.deb.version) $(jget a.lock.json system.glibc.deb.arch)"
# Debian's torch/version.py says what it says ("1.13.0a0" for 1.13.1+dfsg-4): the file decides
torchv=$(sed -n "s/^__version__ = '\(.*\)'\$/\1/p" "$tree/usr/lib/python3/dist-packages/torch/version.py")
check_eq "torch: Debian's python3-torch" \
	"$torchv python3-torch $(field python3-torch Version)" \
	"$(jget a.lock.json frameworks.torch.version) $(jget a.lock.json frameworks.torch.deb.package) $(jget a.lock.json frameworks.torch.deb.version)"
"$ENVLOCK" show a.lock.json >show.out 2>&1
check_grep "show names python's package" "package python3.11-minimal $(field python3.11-minimal Version)" show.out

# Debian's python3-torch 1.13 is built for Debian's Python 3.11, where PyTorch's
# table gives torch 1.13 Python 3.7 to 3.10: its own files decide, and they
# say 3.11 (the module's name and the egg-info's Requires-Python, as the
# package ships them)
tdir=$tree/usr/lib/python3/dist-packages
cmod=$(cd "$tdir/torch" && ls _C.cpython-*.so)
ctag=$(echo "$cmod" | sed -n 's/^_C\.cpython-\([0-9]\)\([0-9]*\)-.*/\1.\2/p')
check_eq "torch: the Python its compiled module is tagged for is Debian's python" "${py%.*}" "$ctag"
check_eq "torch: python_tags from that module" "$ctag /usr/lib/python3/dist-packages/torch/$cmod" \
	"$(jget a.lock.json frameworks.torch.python_tags.0) $(jget a.lock.json frameworks.torch.python_tags_source)"
pkginfo=$(cd "$tdir" && ls -d torch-*.egg-info)/PKG-INFO
check_eq "torch: Requires-Python from its egg-info" \
	"$(sed -n 's/^Requires-Python: //p' "$tdir/$pkginfo") /usr/lib/python3/dist-packages/$pkginfo" \
	"$(jget a.lock.json frameworks.torch.requires_python) $(jget a.lock.json frameworks.torch.requires_python_source)"
# rules FILE: the ids of check's findings, sorted
rules() { "$ENVLOCK" check --json "$1" 2>/dev/null | "$PYTHON" -c 'import json, sys; print(" ".join(sorted(f["rule"] for f in json.load(sys.stdin)["findings"])))'; }
case " $(rules a.lock.json) " in
*" torch-python-unsupported "*) not_ok "Debian's torch on Debian's Python: no torch-python-unsupported finding" ;;
*) ok "Debian's torch on Debian's Python: no torch-python-unsupported finding" ;;
esac
# what check said before envlock read the files: the table's claim
"$PYTHON" - a.lock.json bare.lock.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("python_tags", "python_tags_source", "requires_python", "requires_python_source"):
    d["frameworks"]["torch"].pop(k)
json.dump(d, open(sys.argv[2], "w"))
PY
"$ENVLOCK" check bare.lock.json >bare.out 2>&1
check_grep "without them, the table would say otherwise" "supports Python 3.7 to 3.10; this environment has Python $py" bare.out

# the same tree without patchlevel.h and without dpkg's record
rm -rf "$tree/var/lib/dpkg" "$tree/usr/include/python3.11/patchlevel.h"
"$ENVLOCK" save --root "$tree" -o b.lock.json 2>b.err
check_status "save without patchlevel.h and dpkg status" 0 $?
check_eq "python: the interpreter's own string" "$py /usr/bin/python3.11" \
	"$(jget b.lock.json python.version) $(jget b.lock.json python.version_source)"
check_eq "gcc 12: still cc1's string" "$gcc" "$(jget b.lock.json compilers.gcc.0.version)"
check_eq "no package is named without dpkg's record" "  " \
	"$(jget b.lock.json python.deb) $(jget b.lock.json compilers.gcc.0.deb) $(jget b.lock.json system.glibc.deb)"
"$ENVLOCK" diff --json a.lock.json b.lock.json >diff.json 2>&1
check_eq "diff: each package a file came from is an item, gone with dpkg's record" \
	"compilers gcc-12 package;frameworks torch deb;python package;system glibc package" \
	"$("$PYTHON" -c 'import json,sys; print(";".join(sorted(e["section"] + " " + e["key"] for e in json.load(open(sys.argv[1]))["differences"] if e["b"] is None and (e["key"].endswith(" package") or e["key"].endswith(" deb") or e["key"] == "package"))))' diff.json)"

# an interpreter that says nothing: libpython3.11.so.1.0 carries the version too
rm "$tree/usr/bin/python3.11"
printf '#!/bin/sh\nexit 127\n' >"$tree/usr/bin/python3.11"
chmod 755 "$tree/usr/bin/python3.11"
"$ENVLOCK" save --root "$tree" -o c.lock.json 2>c.err
check_eq "python: libpython's string" "$py /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0" \
	"$(jget c.lock.json python.version) $(jget c.lock.json python.version_source)"

# and nothing carries it: no version, rather than "3.11" from a folder's name
rm -f "$tree"/usr/lib/x86_64-linux-gnu/libpython3.11.so*
"$ENVLOCK" save --root "$tree" -o d.lock.json 2>d.err
check_eq "python: no file carries a version, none is recorded" "present " \
	"$(jget d.lock.json python.status) $(jget d.lock.json python.version)"
check_eq "that lock is valid" valid "$(schema_errors d.lock.json)"
echo "1..$n"
