#!/bin/sh
# envlock import of hostile and broken files: size and line-length limits,
# binary data, lines it cannot read. Each gives exit status 1 and one line,
# "envlock: FILE:LINE: problem", and no lock.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
refused() { # WHAT FILE EXPECTED-MESSAGE
	rm -f out.lock.json
	"$ENVLOCK" import "$2" -o out.lock.json >out 2>err
	check_status "$1" 1 $?
	check_eq "$1: message" "$3" "$(cat err)"
	if [ -e out.lock.json ]; then not_ok "$1: no lock written"; else ok "$1: no lock written"; fi
}

head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >big.txt
refused "a 17 MiB file" big.txt "envlock: 'big.txt': larger than 16 MiB, not a conda or pip list"
{ echo "alpha==1.0"; echo "beta==2.0"; head -c 9000 /dev/zero | tr '\0' 'x'; echo; } >long.txt
refused "a 9000-byte line" long.txt "envlock: long.txt:3: line longer than 8192 bytes"
printf 'alpha==1.0\nbe\000ta==2.0\n' >nul.txt
refused "a NUL byte" nul.txt "envlock: nul.txt:2: a NUL byte: not a text file"
printf 'alpha==1.0\nbeta==2.0\377\376\n' >latin.txt
refused "bytes that are not UTF-8" latin.txt "envlock: latin.txt:2: not text: control characters or bytes that are not UTF-8"
printf 'alpha==1.0\nbeta==2.0\033[2J\n' >ctl.txt
refused "a control character" ctl.txt "envlock: ctl.txt:2: not text: control characters or bytes that are not UTF-8"
printf '# from pip\nalpha==1.0\nnumpy>=1.20\n' >unpinned.txt
refused "an unpinned requirement" unpinned.txt "envlock: unpinned.txt:3: 'numpy>=1.20' is not pinned: envlock import reads pip freeze output (name==version)"
printf -- '-r other.txt\n' >include.txt
refused "an included file" include.txt "envlock: include.txt:1: '-r other.txt' names another file; envlock import reads one file"
printf 'Alpha==1.0\nbeta==2\nalpha==1.1\n' >twice.txt
refused "a name twice" twice.txt "envlock: twice.txt: 'alpha' is listed twice"
printf 'bad name!==1.0\n' >name.txt
refused "a name pip would not take" name.txt "envlock: name.txt:1: 'bad name!' is not a distribution name"
printf -- '-e ./src\n' >rel.txt
refused "an editable install without a name" rel.txt "envlock: rel.txt:1: an editable install without a name (no #egg= and no \"# Editable install ... (name==version)\" line before it)"
printf -- '-e ./src#egg=mine\n' >rel2.txt
refused "an editable install from a relative path" rel2.txt "envlock: rel2.txt:1: '-e ./src' is neither a VCS URL (git+...@rev) nor an absolute path"
printf '' >empty.txt
refused "an empty file" empty.txt "envlock: empty.txt: no requirements in it: neither \`conda list --explicit\` nor \`pip freeze\` output"
printf '# platform: linux-64\nzlib=1.2.13=h5eee18b_0\n' >export.txt
refused "conda list --export (not --explicit)" export.txt "envlock: export.txt:2: name=version=build: a \`conda list --export\` file; envlock import reads \`conda list --explicit\` output"
"$PYTHON" -c 'import sys; sys.stdout.write("".join("p%d==1.0\n" % i for i in range(100001)))' >many.txt
refused "100,001 distributions" many.txt "envlock: many.txt:100001: more than 100000 distributions"

# conda explicit files
printf '@EXPLICIT\nhttps://repo.anaconda.com/pkgs/main/linux-64/zlib-1.2.13-h5eee18b_0.conda#xyz\n' >hash.txt
refused "a hash fragment that is neither" hash.txt "envlock: hash.txt:2: '#xyz' is neither an MD5 nor a SHA-256 (lowercase hex)"
printf '@EXPLICIT\nhttps://repo.anaconda.com/pkgs/main/linux-64/zlib-1.2.13-h5eee18b_0.zip\n' >zip.txt
refused "not a conda package" zip.txt "envlock: zip.txt:2: not a conda package URL (a file name ending in .conda or .tar.bz2)"
printf '@EXPLICIT\nhttps://repo.anaconda.com/pkgs/main/linux-64/zlib.conda\n' >nv.txt
refused "no name-version-build" nv.txt "envlock: nv.txt:2: 'zlib' is not name-version-build"
printf 'zlib\n@EXPLICIT\n' >before.txt
refused "a package before @EXPLICIT" before.txt "envlock: before.txt:1: a package line before @EXPLICIT"
printf '@EXPLICIT\nhttps://repo.anaconda.com/pkgs/main/linux-64/zlib 1.2.13-h5eee18b_0.conda\n' >space.txt
refused "a space in a URL" space.txt "envlock: space.txt:2: spaces or control characters in a package URL"

# files that are not files
mkdir adir
"$ENVLOCK" import adir >out 2>err
check_status "a directory" 2 $?
check_eq "a directory: message" "envlock: import: 'adir': not a regular file" "$(cat err)"
"$ENVLOCK" import missing.txt >out 2>err
check_status "a missing file" 2 $?
check_eq "a missing file: message" "envlock: import: 'missing.txt': no such file" "$(cat err)"
"$ENVLOCK" import >out 2>err
check_status "no file" 2 $?
