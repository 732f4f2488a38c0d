#!/bin/sh
# The broken fixture root: every kind of bad input becomes one clear
# warning naming the file, and the save still succeeds.
. "$(dirname "$0")/lib.sh"

root=$FIXTURES/broken
as_nobody=
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$HOME XDG_CACHE_HOME=$XDG_CACHE_HOME/nobody"
	# a checkout under a private folder (e.g. /root) cannot be read by nobody: stay root then
	if ! $as_nobody test -x "$ENVLOCK" -a -r "$root/etc/hostname"; then
		echo "# user nobody cannot reach $root or $ENVLOCK: running as root"
		as_nobody=
	fi
fi
chmod 755 "$scratch"
mkdir -p "$XDG_CACHE_HOME" && chmod 777 "$XDG_CACHE_HOME" "$HOME"
$as_nobody "$ENVLOCK" save --root "$root" -o - >"$scratch/lock.json" 2>"$scratch/err"
check_status "save of the broken root succeeds" 0 $?

expect() { check_grep "$1" "$2" "$scratch/err"; }
expect "100 MB where a small file is expected: read limit" "'/etc/os-release': larger than 65536 bytes, not read"
expect "binary garbage in a text file" "'/proc/driver/nvidia/version': binary data where text was expected"
expect "truncated version.json" "'/usr/local/cuda-11.3/version.json': not valid JSON"
expect "dangling symlink" "'/usr/local/cuda-dangling': dangling symlink to '/nonexistent/cuda'"
expect "looping symlink" "'/usr/local/cuda-loop': looping symlink"
expect "header without version macros" "'/usr/local/cuda-11.3/include/cudnn_version.h': no CUDNN_MAJOR"
expect "cuDNN soname link missing, with the fix" "the loader looks for 'libcudnn.so.8', which is missing (fix: ln -s"
expect "truncated conda-meta record" "openssl-1.1.1k-h27cfd23_0.json': not valid JSON"
expect "conda-meta record that is not an object" "ca-certificates-2021.7.5-h06a4308_1.json': not a JSON object"
expect "environment entry without '='" "'/etc/environment': line 4 has no '='"
if [ "$(id -u)" != 0 ] || [ -n "$as_nobody" ]; then
	expect "permission denied" "'/usr/local/cuda-11.3/include/cudnn.h': permission denied"
else
	skip "permission denied" "running as root (no setpriv, or user nobody cannot reach the checkout): root reads mode-000 files"
fi
check_eq "every warning is one line starting 'envlock: warning: '" "0" "$(grep -vc '^envlock: warning: ' "$scratch/err")"
check_eq "the other conda record is kept" "python" "$(jget "$scratch/lock.json" conda.packages.0.name)"
check_eq "the cuDNN library is still recorded" "missing" "$(jget "$scratch/lock.json" cudnn.libraries.0.soname_link)"
check_eq "the good header still gives the version" "8.2.0" "$(jget "$scratch/lock.json" cudnn.version)"
check_eq "mmcv-full without ops is recorded as such" "false" "$(jget "$scratch/lock.json" frameworks.mmcv.ops)"
