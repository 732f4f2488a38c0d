#!/bin/sh
# make install / uninstall as a package build runs them (DESTDIR, PREFIX=/usr):
# the files and their modes, man pages lint-clean and naming every command
# and option the binary has, both shell completions, the installed library
# through pkg-config, an uninstall that leaves only empty standard folders;
# and DEVELOPER=0 / 1 turning -Werror off and on.
. "$(dirname "$0")/lib.sh"

build=${BUILD:-build}
d=$scratch/d
b=$(printf '\b')
mkdir -p "$scratch/empty"

# make in the tree; the command-line variables of an outer make (make check,
# make asan) reach it through MAKEFLAGS, so it sees the build under test as built
mk() { make -C "$top" --no-print-directory "$@"; }
case $build in /*) buildpath=$build ;; *) buildpath=$top/$build ;; esac

# install lays out the build's binary ($ENVLOCK is the static one under make check-static)
before=$(cksum <"$buildpath/envlock")
mk install DESTDIR="$d" PREFIX=/usr BUILD="$build" >"$scratch/install.out" 2>&1
rc=$?
check_status "make install DESTDIR=... PREFIX=/usr" 0 $rc
[ $rc = 0 ] || sed 's/^/#   /' "$scratch/install.out" | tail -n 20

# --- what was installed, and with which mode ---------------------------------
cmds=$("$ENVLOCK" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
if [ "$(echo "$cmds" | wc -w)" -ge 10 ]; then ok "envlock --help lists the commands ($(echo $cmds))"; else not_ok "envlock --help lists the commands"; echo "#   got: '$cmds'"; fi

{
	echo "755 usr/bin/envlock"
	echo "644 usr/share/man/man1/envlock.1"
	for c in $cmds; do echo "644 usr/share/man/man1/envlock-$c.1"; done
	echo "644 usr/share/bash-completion/completions/envlock"
	echo "644 usr/share/zsh/vendor-completions/_envlock"
	echo "644 usr/lib/libenvlock.a"
	for h in "$top"/include/envlock/*.h; do echo "644 usr/include/envlock/${h##*/}"; done
	echo "644 usr/lib/pkgconfig/envlock.pc"
} | sort -k2 >"$scratch/expected-files"
(cd "$d" 2>/dev/null && find . ! -type d | sed 's|^\./||' | while read -r f; do echo "$(stat -c %a "$f") $f"; done) |
	sort -k2 >"$scratch/installed-files"
check_diff "install puts exactly these files there, with these modes" "$scratch/expected-files" "$scratch/installed-files"
if [ "$before" = "$(cksum <"$d/usr/bin/envlock")" ]; then
	ok "the installed binary is the build's"
else
	not_ok "the installed binary is the build's"
	echo "#   install rebuilt $build/envlock: run this test with the flags the build used (make check does)"
fi
if cmp -s "$buildpath/libenvlock.a" "$d/usr/lib/libenvlock.a"; then
	ok "the installed library is the build's"
else
	not_ok "the installed library is the build's"
fi

# --- man pages ----------------------------------------------------------------
man1=$d/usr/share/man/man1
if command -v mandoc >/dev/null 2>&1; then
	mandoc -Tlint -W warning "$man1"/*.1 >"$scratch/lint" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ ! -s "$scratch/lint" ]; then
		ok "installed man pages are clean under mandoc -Tlint -W warning"
	else
		not_ok "installed man pages are clean under mandoc -Tlint -W warning"; sed 's/^/#   /' "$scratch/lint" | head -n 30
	fi
	# the text a reader sees, one line per paragraph so that nothing wraps
	render() { mandoc -Tascii -Owidth=1000 "$1" 2>/dev/null | sed "s/.$b//g"; }
else
	skip "installed man pages are clean under mandoc -Tlint -W warning" "mandoc is not installed (apt-get install mandoc)"
	render() { sed 's/Fl -/--/g; s/Fl \([A-Za-z]\)/-\1/g' "$1"; }
fi
render "$man1/envlock.1" >"$scratch/envlock.1.txt"

# the options a command's --help prints: every one in its usage lines, and
# the first of each option line ("  -o, --output FILE  ..."), so that pip's
# flags quoted in a description are not taken for envlock's
help_opts() {
	"$ENVLOCK" "$1" --help >"$scratch/help" 2>&1
	{
		sed -n '1,/^$/p' "$scratch/help" | grep -oE -- '(^|[][ |])--?[a-zA-Z][a-z0-9-]*' | sed 's/^[][ |]//'
		grep -E '^[[:space:]]+(-[a-zA-Z], )?--[a-z]' "$scratch/help" |
			sed -E 's/^[[:space:]]+(-[a-zA-Z]), .*/\1/; s/^[[:space:]]+(--[a-z][a-z0-9-]*).*/\1/'
		grep -E '^[[:space:]]+-[a-zA-Z], --[a-z]' "$scratch/help" |
			sed -E 's/^[[:space:]]+-[a-zA-Z], (--[a-z][a-z0-9-]*).*/\1/'
	} | sort -u
}
# has_word FILE WORD: WORD appears in FILE, not as part of a longer option
has_word() { grep -Eq -- "(^|[^A-Za-z0-9-])$2([^A-Za-z0-9-]|\$)" "$1"; }

for c in $cmds; do
	page=$man1/envlock-$c.1
	if [ -f "$page" ] && has_word "$scratch/envlock.1.txt" "envlock-$c\\(1\\)"; then
		ok "$c has its man page, and envlock(1) names it"
	else
		not_ok "$c has its man page, and envlock(1) names it"
		continue
	fi
	render "$page" >"$scratch/page.txt"
	help_opts "$c" >"$scratch/opts.$c"
	missing=""
	for o in $(cat "$scratch/opts.$c"); do has_word "$scratch/page.txt" "$o" || missing="$missing $o"; done
	if [ ! -s "$scratch/opts.$c" ]; then
		not_ok "envlock-$c(1) has every option of envlock $c --help"; echo "#   no option found in envlock $c --help"
	else
		check_eq "envlock-$c(1) has every option of envlock $c --help ($(echo $(cat "$scratch/opts.$c")))" "" "$missing"
	fi
done
for s in "EXIT STATUS" "ENVIRONMENT" "FILES" "EXAMPLES"; do
	check_grep "envlock(1) has $s" "^$s" "$scratch/envlock.1.txt"
done
check_grep "envlock(1) has the Slurm recipe: srun --output='locks/%N.json'" "--output='locks/%N.json'" "$scratch/envlock.1.txt"
check_grep "envlock(1) has the Slurm recipe: ... envlock save -o -" "envlock save -q -o -" "$scratch/envlock.1.txt"
check_grep "envlock(1) has the Slurm recipe: the drift table" "envlock diff locks/\*.json" "$scratch/envlock.1.txt"
check_grep "envlock(1) names NO_COLOR" "NO_COLOR" "$scratch/envlock.1.txt"
check_grep "envlock(1) names XDG_CACHE_HOME" "XDG_CACHE_HOME" "$scratch/envlock.1.txt"

# --- the values the binary accepts, from its own help and errors -----------
sections=$("$ENVLOCK" diff --help | sed -n 's/^sections: //p' | tr -d ',')
report_formats=$("$ENVLOCK" report /dev/null --format '?' 2>&1 | sed -n 's/.*(\(.*\))$/\1/p' | sed 's/,//g; s/ or / /')
export_formats=$("$ENVLOCK" export /dev/null --format '?' 2>&1 | sed -n 's/.*(\(.*\))$/\1/p' | tr -d ',')
steps=$("$ENVLOCK" restore "$GOLDEN/no-nvidia.lock.json" --dry-run --only '?' 2>&1 | sed -n 's/.*(steps: \(.*\))$/\1/p' | tr -d ',')
verbs=$("$ENVLOCK" bundle --help | sed -n 's/^.*envlock bundle \([a-z][a-z]*\) ARCHIVE.*/\1/p')
for v in sections report_formats export_formats steps verbs; do
	eval "val=\$$v"
	if [ "$(echo "$val" | wc -w)" -ge 3 ]; then ok "the binary names its $v ($(echo $val))"; else not_ok "the binary names its $v"; echo "#   got: '$val'"; fi
done
words() { tr ' ' '\n' | grep -v '^$' | sort -u | tr '\n' ' '; }

# --- bash completion, run for real ------------------------------------------
bashcomp=$d/usr/share/bash-completion/completions/envlock
# comp WORD...: what the completion offers for the command line WORD... (the
# last word being completed), run in an empty folder so files do not mix in
comp() {
	(cd "$scratch/empty" && bash --norc --noprofile -c '. "$1" || exit 1; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_envlock; printf "%s\n" "${COMPREPLY[@]}"' sh "$bashcomp" "$@" 2>"$scratch/comp.err") | words
}
if ! command -v bash >/dev/null 2>&1; then
	skip "bash completion" "bash is not installed"
else
	check_eq "bash: envlock di -> diff" "diff " "$(comp envlock di)"
	check_eq "bash: envlock verify -> verify, verify-sig" "verify verify-sig " "$(comp envlock verify)"
	check_eq "bash: envlock <tab> -> every command of --help" "$(echo $cmds --help --version | words)" "$(comp envlock '')"
	check_eq "bash: envlock diff --only <tab> -> the sections" "$(echo $sections | words)" "$(comp envlock diff --only '')"
	check_eq "bash: envlock diff --ignore=c -> the sections starting with c" \
		"$(for s in $sections; do case $s in c*) echo "--ignore=$s" ;; esac; done | words)" "$(comp envlock diff --ignore=c)"
	check_eq "bash: envlock restore --skip <tab> -> the steps" "$(echo $steps | words)" "$(comp envlock restore x.json --skip '')"
	check_eq "bash: envlock report --format <tab> -> its formats" "$(echo $report_formats | words)" "$(comp envlock report x.json --format '')"
	check_eq "bash: envlock export -f <tab> -> its formats" "$(echo $export_formats | words)" "$(comp envlock export x.json -f '')"
	check_eq "bash: envlock bundle <tab> -> the sub-verbs" "$(echo $verbs | words)" "$(comp envlock bundle '')"
	check_eq "bash: envlock bundle --checkpoints <tab>" "hash include " "$(comp envlock bundle w --checkpoints '')"
	mkdir -p "$scratch/empty/locks" && : >"$scratch/empty/a.lock.json"
	check_eq "bash: envlock show <tab> -> files" "a.lock.json locks " "$(comp envlock show '')"
	check_eq "bash: envlock save --root <tab> -> folders only" "locks " "$(comp envlock save --root '')"
	rm -rf "$scratch/empty/locks" "$scratch/empty/a.lock.json"
	for c in $cmds; do
		offered=$(comp envlock "$c" -)
		[ "$c" = bundle ] && for v in $verbs; do offered="$offered $(comp envlock bundle "$v" -)"; done
		echo "$offered" | tr ' ' '\n' >"$scratch/offered"
		missing=""
		for o in $(grep -- '^--' "$scratch/opts.$c"); do grep -qx -- "$o" "$scratch/offered" || missing="$missing $o"; done
		check_eq "bash: envlock $c - offers every long option of its --help" "" "$missing"
	done
	check_eq "bash: sourcing and completing print nothing on stderr" "" "$(cat "$scratch/comp.err")"
fi

# --- zsh completion -------------------------------------------------------------
zdir=$d/usr/share/zsh/vendor-completions
if ! command -v zsh >/dev/null 2>&1; then
	skip "zsh completion parses and registers with compinit" "zsh is not installed"
else
	zsh -n "$zdir/_envlock" >"$scratch/zsh.err" 2>&1
	check_status "zsh -n _envlock (syntax)" 0 $?
	got=$(zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit && compinit -u -d "$2" &&
		autoload -Uz +X _envlock && print -r -- "${_comps[envlock]}"' zsh "$zdir" "$scratch/zcompdump" 2>"$scratch/zsh.err")
	check_eq "zsh -f: compinit finds _envlock for envlock, and it loads" "_envlock" "$got"
	[ -s "$scratch/zsh.err" ] && sed 's/^/#   /' "$scratch/zsh.err"
	for c in $cmds; do
		missing=""
		grep -q "'$c:" "$zdir/_envlock" || missing=" (the command)"
		for o in $(grep -- '^--' "$scratch/opts.$c"); do has_word "$zdir/_envlock" "$o" || missing="$missing $o"; done
		check_eq "zsh: _envlock has $c and every long option of its --help" "" "$missing"
	done
	# completion in an interactive zsh on a pseudo-terminal, compadd recording what is offered
	if zsh -f -c 'zmodload zsh/zpty' 2>/dev/null; then
		cat >"$scratch/zcomp.zsh" <<'EOF'
zmodload zsh/zpty
out=$1 fp=$2 dump=$3; shift 3
zpty z zsh -f -i
zpty -w z "PS1=; fpath=(${(q)fp} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)dump}; unsetopt beep"
zpty -w z "compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi
  local -a h; builtin compadd -A h \"\$@\"; (( \$#h )) && print -rl -- \$h >>${(q)out}; builtin compadd \"\$@\"; }"
while (( $# >= 2 )); do
  line=$1 want=(${=2}); shift 2
  : >$out
  zpty -w -n z "$line"$'\t'
  for i in {1..50}; do
    while zpty -rt z junk 2>/dev/null; do :; done   # drain the terminal, or zsh blocks writing to it
    have=(${(f)"$(<$out)"})
    missing=(${want:|have})
    (( $#missing )) || break
    sleep 0.1
  done
  print -r -- "${line}: ${(oj: :)missing}"
  zpty -w -n z $'\C-u'
  sleep 0.1
done
zpty -d z
EOF
		(cd "$scratch/empty" && zsh -f "$scratch/zcomp.zsh" "$scratch/zout" "$zdir" "$scratch/zcompdump2" \
			"envlock di" "diff" \
			"envlock diff --only " "$sections" \
			"envlock bundle " "$verbs" \
			"envlock report x.json --format=" "$report_formats" \
			"envlock export x.json --format " "$export_formats" \
			"envlock restore x.json --skip " "$steps") >"$scratch/zres" 2>&1
		while IFS= read -r l; do
			case $l in
			*": ") ok "zsh: ${l%: } offers what the binary accepts" ;;
			envlock*) not_ok "zsh: ${l%%: *} offers what the binary accepts"; echo "#   missing: ${l#*: }" ;;
			esac
		done <"$scratch/zres"
		check_eq "zsh: six completions were run" "6" "$(grep -c '^envlock' "$scratch/zres")"
	else
		skip "zsh: completion on a pseudo-terminal" "zsh has no zsh/zpty module"
	fi
fi

# --- the library through pkg-config ----------------------------------------
pc=$d/usr/lib/pkgconfig/envlock.pc
check_grep "envlock.pc: prefix=/usr" "^prefix=/usr$" "$pc"
check_grep "envlock.pc: Libs" '^Libs: -L${libdir} -lenvlock$' "$pc"
check_grep "envlock.pc: Libs.private" '^Libs.private: -lpthread -lm\( -ldl\)\?$' "$pc"
check_grep "envlock.pc: Requires.private" '^Requires.private: libcjson libcrypto libgit2 libarchive libzstd$' "$pc"
if ! command -v pkg-config >/dev/null 2>&1; then
	skip "a program links against the installed library" "pkg-config is not installed"
else
	PKG_CONFIG_PATH=$d/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d pkg-config --modversion envlock >"$scratch/modversion" 2>&1
	check_eq "pkg-config --modversion envlock = envlock --version" "$("$ENVLOCK" --version | head -n 1)" "envlock $(cat "$scratch/modversion")"
	flags=$(PKG_CONFIG_PATH=$d/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d pkg-config --cflags --libs --static envlock 2>"$scratch/pc.err")
	check_status "pkg-config --cflags --libs --static envlock" 0 $?
	case " $flags " in
	*" -L$d/usr/lib "*) ok "pkg-config points into DESTDIR through its sysroot" ;;
	*) not_ok "pkg-config points into DESTDIR through its sysroot"; echo "#   flags: $flags" ;;
	esac
	cat >"$scratch/v.c" <<'EOF'
#include <stdio.h>
#include <envlock/envlock.h>

int main(void)
{
	printf("envlock %s\n", envlock_version());
	return 0;
}
EOF
	# the system's own folders are not filtered out: here /usr is DESTDIR's
	pc() { PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_PATH=$d/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d pkg-config "$@"; }
	# a library built with sanitizers (make asan) links only into a program built with them too
	sanitize=$(grep -o -- '-fsanitize=[^ ]*' "$buildpath/CFLAGS" 2>/dev/null | tr '\n' ' ')
	# shellcheck disable=SC2086
	link() { ${CC:-cc} -std=c11 -Wall -Werror $sanitize -o "$scratch/v" "$scratch/v.c" "$@" >"$scratch/cc.out" 2>&1; }
	# shellcheck disable=SC2046
	link $(pc --cflags --libs --static envlock)
	rc=$?
	how="pkg-config --static"
	# --static also asks for the private libraries of libarchive's and
	# libgit2's own .pc files (-lacl, -llz4, ...), whose -dev packages a
	# machine with only the shared libraries lacks: link with the libraries
	# envlock.pc requires then, as a consumer of their shared builds would
	missing=$(sed -n 's/.*cannot find -l\([^:]*\).*/\1/p' "$scratch/cc.out" | sort -u | tr '\n' ' ')
	if [ $rc != 0 ] && [ -n "$missing" ] && ! echo " $missing" | grep -Eq ' (envlock|pthread|m|dl) '; then
		echo "# pkg-config --static names libraries this machine has no development files for: $missing"
		# shellcheck disable=SC2046
		link $(pc --cflags --libs envlock) $(pc --libs $(pc --print-requires-private envlock)) \
			$(sed -n 's/^Libs.private: //p' "$pc")
		rc=$?
		how="envlock.pc's Libs, Requires.private and Libs.private without --static"
	fi
	check_status "a program compiles and links against the installed libenvlock.a ($how)" 0 $rc
	[ $rc = 0 ] || sed 's/^/#   /' "$scratch/cc.out" | head -n 20
	check_eq "its envlock_version() is envlock --version" "$("$ENVLOCK" --version | head -n 1)" "$("$scratch/v" 2>&1)"
fi

# --- uninstall: what install wrote, and nothing else ------------------------
mkdir -p "$d/usr/share/man/man1" "$d/usr/bin"
echo other >"$d/usr/share/man/man1/other.1"
echo other >"$d/usr/bin/other"
mk uninstall DESTDIR="$d" PREFIX=/usr BUILD="$build" >"$scratch/uninstall.out" 2>&1
check_status "make uninstall DESTDIR=... PREFIX=/usr" 0 $?
check_eq "uninstall leaves another package's files" "usr/bin/other usr/share/man/man1/other.1 " \
	"$(cd "$d" && find . ! -type d | sed 's|^\./||' | words)"
rm -f "$d/usr/share/man/man1/other.1" "$d/usr/bin/other"
check_eq "uninstall leaves only empty standard folders" \
	"usr/ usr/bin/ usr/include/ usr/lib/ usr/lib/pkgconfig/ usr/share/ usr/share/bash-completion/ usr/share/bash-completion/completions/ usr/share/man/ usr/share/man/man1/ usr/share/zsh/ usr/share/zsh/vendor-completions/ " \
	"$(cd "$d" && find . -mindepth 1 \( -type d -printf '%P/\n' \) -o -printf '%P\n' | words)"
mk uninstall DESTDIR="$d" PREFIX=/usr BUILD="$build" >"$scratch/uninstall.out" 2>&1
check_status "a second uninstall finds nothing to do and succeeds" 0 $?

# --- DEVELOPER: -Werror for developers, not for packagers ---------------------
mk BUILD="$scratch/dev0" DEVELOPER=0 "$scratch/dev0/CFLAGS" >/dev/null 2>&1
if [ -f "$scratch/dev0/CFLAGS" ] && ! grep -q -- '-Werror' "$scratch/dev0/CFLAGS"; then
	ok "DEVELOPER=0: no -Werror in \$(BUILD)/CFLAGS"
else
	not_ok "DEVELOPER=0: no -Werror in \$(BUILD)/CFLAGS"; sed 's/^/#   /' "$scratch/dev0/CFLAGS" 2>/dev/null
fi
mk BUILD="$scratch/dev1" DEVELOPER=1 "$scratch/dev1/CFLAGS" >/dev/null 2>&1
check_grep "DEVELOPER=1: -Werror in \$(BUILD)/CFLAGS" '-Werror' "$scratch/dev1/CFLAGS"
mk -n BUILD="$scratch/dev0" DEVELOPER=0 "$scratch/dev0/lib/util/error.o" >"$scratch/dev0.n" 2>&1
if grep -q -- '-c -o .*lib/util/error.o' "$scratch/dev0.n" && ! grep -q -- '-Werror' "$scratch/dev0.n"; then
	ok "DEVELOPER=0: an object is compiled without -Werror"
else
	not_ok "DEVELOPER=0: an object is compiled without -Werror"; sed 's/^/#   /' "$scratch/dev0.n" | head -n 5
fi
mk -n BUILD="$scratch/dev1" DEVELOPER=1 "$scratch/dev1/lib/util/error.o" >"$scratch/dev1.n" 2>&1
check_grep "DEVELOPER=1: an object is compiled with -Werror" '-Werror.*-c -o .*lib/util/error.o' "$scratch/dev1.n"
# by default: on in a git checkout, off in a release tarball
if [ -e "$top/.git" ]; then want=yes; else want=no; fi
env -u DEVELOPER -u MAKEFLAGS -u MFLAGS make -C "$top" --no-print-directory BUILD="$scratch/devd" "$scratch/devd/CFLAGS" >/dev/null 2>&1
if grep -q -- '-Werror' "$scratch/devd/CFLAGS" 2>/dev/null; then got=yes; else got=no; fi
check_eq "DEVELOPER unset: -Werror only in a git checkout" "$want" "$got"
