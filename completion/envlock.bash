# bash completion for envlock                              -*- shell-script -*-
# Installed as share/bash-completion/completions/envlock; works without the
# bash-completion package too (source it from ~/.bashrc).

_envlock_commands="save show check diff restore verify bundle report sign verify-sig keygen export import pack ldd solve config"
_envlock_sections="system gpu cuda cudnn compilers python conda pip frameworks loads repos configs checkpoints env"
_envlock_steps="driver cuda compilers cudnn conda repos pip configs checkpoints verify"
_envlock_report_formats="md latex html json text"
_envlock_export_formats="conda-explicit requirements environment-yml dockerfile"

# _envlock_reply WORDLIST CUR: COMPREPLY = the words of WORDLIST that start with CUR
_envlock_reply()
{
	local IFS=$' \t\n'
	COMPREPLY=($(compgen -W "$1" -- "$2"))
}

# _envlock_files CUR [-d]: file (or, with -d, folder) names starting with CUR
_envlock_files()
{
	local IFS=$'\n'
	if [[ ${2-} == -d ]]; then
		COMPREPLY=($(compgen -d -- "$1"))
	else
		COMPREPLY=($(compgen -f -- "$1"))
	fi
	# names with spaces, folders with a slash; only inside a real completion
	compopt -o filenames 2>/dev/null
	return 0
}

# _envlock_options CMD [VERB]: the options CMD (and bundle's VERB) takes
_envlock_options()
{
	case $1 in
	save) echo "-o --output --root --conda-prefix --python --checkpoint --config --cfg-options --repo --no-repo --no-patch --no-cache --verify --redact --json -q --quiet -h --help" ;;
	show) echo "--root -h --help" ;;
	check) echo "--root --config --cfg-options --rules --json -h --help" ;;
	diff) echo "--json --all --only --ignore -h --help" ;;
	restore) echo "--dry-run -y --yes --only --skip --root --chroot --python --cuda-runfile --cudnn-archive --wheels --kit --no-conda --conda-exe --prefix --name --force --dest --state-dir --json -h --help" ;;
	verify) echo "--cuda-home --python --steps --cpu-only --json -h --help" ;;
	bundle)
		case ${2-} in
		verify) echo "-h --help" ;;
		list) echo "--json -h --help" ;;
		extract) echo "--force --max-size --max-entries --max-ratio -h --help" ;;
		*) echo "-o --output --lock --exclude --checkpoints --level --threads --redact -q --quiet -h --help" ;;
		esac ;;
	report) echo "--format -o --output --short --against --rules --redact -h --help" ;;
	sign) echo "-k --key -o --output --file --print-signed-bytes -h --help" ;;
	verify-sig) echo "-s --sig -p --pub --file -h --help" ;;
	keygen) echo "-o --output --force -h --help" ;;
	export) echo "-f --format -o --output -q --quiet -h --help" ;;
	import) echo "-o --output -h --help" ;;
	pack) echo "-o --output --conda-pkgs --pip-cache --wheels --add --link --force -q --quiet -h --help" ;;
	ldd) echo "-r --root -L --library-path --json -h --help" ;;
	solve) echo "-r --root --for --config --python-version --cpu --allow-driver-upgrade -n --stacks --json -o --output --pick --format --name --check --stack -h --help" ;;
	config) echo "--cfg-options --site --format --json --diff -h --help" ;;
	esac
}

# _envlock_value CMD OPT CUR: complete the argument of OPT; 1 when OPT takes none
_envlock_value()
{
	case $1:$2 in
	diff:--only | diff:--ignore) _envlock_reply "$_envlock_sections" "$3" ;;
	restore:--only | restore:--skip) _envlock_reply "$_envlock_steps" "$3" ;;
	report:--format) _envlock_reply "$_envlock_report_formats" "$3" ;;
	export:--format | export:-f) _envlock_reply "$_envlock_export_formats" "$3" ;;
	bundle:--checkpoints) _envlock_reply "include hash" "$3" ;;
	solve:--format) _envlock_reply "script requirements" "$3" ;;
	config:--format) _envlock_reply "text py" "$3" ;;
	config:--site) _envlock_files "$3" -d ;;
	config:--cfg-options) COMPREPLY=() ;;
	*:--root | ldd:-r | *:--library-path | ldd:-L | *:--conda-prefix | *:--repo | *:--wheels | pack:--conda-pkgs | pack:--pip-cache | *:--prefix | *:--dest | *:--state-dir | *:--cuda-home)
		_envlock_files "$3" -d ;;
	*:-o | *:--output | pack:--add | *:--python | *:--checkpoint | *:--config | *:--rules | *:--cuda-runfile | \
	*:--cudnn-archive | *:--conda-exe | *:--lock | *:--against | *:-k | *:--key | *:-s | *:--sig | \
	*:-p | *:--pub)
		_envlock_files "$3" ;;
	*:--name | *:--steps | solve:--for | solve:--python-version | solve:-n | solve:--stacks | solve:--pick | solve:--stack | *:--exclude | *:--level | *:--threads | *:--max-size | *:--max-entries | *:--max-ratio)
		COMPREPLY=() ;;
	*) return 1 ;;
	esac
	return 0
}

_envlock()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev="" cmd verb="" opt
	COMPREPLY=()
	[[ $COMP_CWORD -gt 0 ]] && prev=${COMP_WORDS[COMP_CWORD - 1]}

	if [[ $COMP_CWORD -eq 1 ]]; then
		_envlock_reply "$_envlock_commands --help --version" "$cur"
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	if [[ $cmd == bundle && $COMP_CWORD -ge 3 ]]; then
		case ${COMP_WORDS[2]} in verify | list | extract) verb=${COMP_WORDS[2]} ;; esac
	fi

	# --opt=value, whether or not '=' is in COMP_WORDBREAKS
	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		if _envlock_value "$cmd" "$opt" "${cur#*=}"; then
			# the word replaced is the whole --opt=value
			local i
			for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=$opt=${COMPREPLY[i]}; done
			return 0
		fi
	elif [[ $prev == = && $COMP_CWORD -ge 3 ]]; then
		_envlock_value "$cmd" "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	elif [[ $cur == = ]]; then
		_envlock_value "$cmd" "$prev" "" && return 0
	elif [[ $prev == -* ]]; then
		_envlock_value "$cmd" "$prev" "$cur" && return 0
	fi

	if [[ $cur == -* ]]; then
		_envlock_reply "$(_envlock_options "$cmd" "$verb")" "$cur"
		return 0
	fi
	case $cmd in
	save | keygen) COMPREPLY=() ;;
	bundle)
		if [[ $COMP_CWORD -eq 2 ]]; then
			# the sub-verbs, or the WORK_DIR to seal
			local dirs
			_envlock_files "$cur" -d
			dirs=("${COMPREPLY[@]}")
			_envlock_reply "verify list extract" "$cur"
			COMPREPLY+=("${dirs[@]}")
		elif [[ $verb == extract && $COMP_CWORD -ge 4 ]]; then
			_envlock_files "$cur" -d   # ARCHIVE [DIR]: the target folder
		else
			_envlock_files "$cur"
		fi ;;
	*) _envlock_files "$cur" ;;   # lockfiles, archives, pip/conda lists
	esac
	return 0
}

complete -F _envlock envlock
