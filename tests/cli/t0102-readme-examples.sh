#!/bin/sh
# The README's examples of show, check, config and diff are what envlock prints:
# each block marked <!-- example: ARGS --> is run on the made-up machines
# under tests/golden and compared line by line (tests/readme_examples.py).
# After a change to what they print, rewrite them with
#   python3 tests/readme_examples.py build/envlock README.md --update
. "$(dirname "$0")/lib.sh"

"$PYTHON" "$top/tests/readme_examples.py" "$ENVLOCK" "$top/README.md" >examples.out 2>&1
st=$?
check_eq "four examples, marked and run" 4 "$(grep -c '^ok \|^differs ' examples.out)"
if [ "$st" = 0 ]; then
	ok "every example in README.md is what envlock prints"
else
	not_ok "every example in README.md is what envlock prints (rewrite them: python3 tests/readme_examples.py build/envlock README.md --update)"
	sed 's/^/#   /' examples.out
fi

# the runner itself: a README whose example was edited by hand is caught, and nothing is rewritten
cp "$top/README.md" R.md
sed -i '0,/^glibc       2.23$/s//glibc       2.27/' R.md
"$PYTHON" "$top/tests/readme_examples.py" "$ENVLOCK" R.md --top "$top" >edited.out 2>&1
check_status "an edited example fails" 1 $?
check_eq "that one only (show, the first)" "differs ok ok ok" "$(cut -d' ' -f1 edited.out | grep -e '^ok$' -e '^differs$' | tr '\n' ' ' | sed 's/ $//')"
check_grep "naming the line that differs" "^  -glibc       2.27$" edited.out
check_eq "and the file is left as it was" "1" "$(grep -c '^glibc       2.27$' R.md)"
