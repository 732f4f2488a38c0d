#!/bin/sh
# envlock solve over a sweep of made-up machines (drivers 390 to 580, GPUs
# from Kepler to Ada, glibc 2.17 to 2.39, gcc 4.8 to 14; tests/solve/sweep.py):
# every stack it proposes satisfies the reference data of ../shared/data/matrix,
# and it finds a stack exactly where a brute-force enumeration over the same
# knowledge files, written apart from its search, finds one.
. "$(dirname "$0")/lib.sh"

mkdir sweep
"$PYTHON" "$top/tests/solve/sweep.py" "$ENVLOCK" "$top" "$scratch/sweep" "$top/../shared/data/matrix" >sweep.tap 2>sweep.err
st=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok [0-9]* - }" ;;
	"not ok "*) not_ok "${line#not ok [0-9]* - }" ;;
	"1.."*) ;;
	*) echo "$line" ;;
	esac
done <sweep.tap
check_status "the sweep ran to its end" 0 "$([ -s sweep.err ] && { sed 's/^/#   /' sweep.err; echo 1; } || echo "$st")"
