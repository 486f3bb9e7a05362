# bash completion for nvtaskset(1)                          -*- shell-script -*-
#
# Installed as share/bash-completion/completions/nvtaskset, where bash-completion
# loads it on first use. Works without bash-completion too (source this file).
# It reads only /proc, the calibration cache and `nvtaskset -l --json`: it
# never starts CUDA or a calibration.
#
# SPDX-License-Identifier: MIT

# The GPU numbers: one per GPU the kernel module lists, else 0.
_nvtaskset_gpus()
{
	local dir n=0
	for dir in "${NVTASKSET_PROC_NVIDIA:-/proc/driver/nvidia}"/gpus/*; do
		[[ -e $dir ]] && n=$((n + 1))
	done
	((n)) || n=1
	for ((dir = 0; dir < n; dir++)); do
		echo "$dir"
	done
}

# The GPC numbers of GPU $1, from its cached calibration: the record of the GPU's
# UUID, or the only record there is. Nothing when neither is found.
_nvtaskset_gpcs()
{
	local proc=${NVTASKSET_PROC_NVIDIA:-/proc/driver/nvidia} uuid="" line file
	local -a gpus=("$proc"/gpus/*) dirs=() records=()
	if [[ $1 == [0-9]* && -r ${gpus[$1]}/information ]]; then
		while IFS= read -r line; do
			if [[ $line == "GPU UUID:"* ]]; then
				uuid=${line#GPU UUID:}
				uuid=${uuid//[[:space:]]/}
			fi
		done <"${gpus[$1]}/information"
	fi
	if [[ ${NVTASKSET_CACHE_DIR-} == /* ]]; then
		dirs=("$NVTASKSET_CACHE_DIR")
	else
		dirs=(/var/cache/nvtaskset "${XDG_CACHE_HOME:-$HOME/.cache}/nvtaskset")
	fi
	for line in "${dirs[@]}"; do
		for file in "$line"/*.topo; do
			[[ -r $file ]] || continue
			if [[ -z $uuid ]]; then
				records+=("$file")
			elif [[ $file == */"$uuid.topo" ]]; then
				records=("$file")
				break 2
			fi
		done
	done
	((${#records[@]} == 1)) || return 0
	while IFS= read -r line; do
		if [[ $line =~ ^nvtaskset-topology\ .*\ gpcs=([0-9]+) ]]; then
			for ((file = 0; file < BASH_REMATCH[1]; file++)); do
				echo "$file"
			done
		fi
	done <"${records[0]}"
}

# The PIDs of the running tasks under nvtaskset that the caller may see.
_nvtaskset_pids()
{
	local json
	json=$("$1" -l --json 2>/dev/null) || return 0
	while [[ $json =~ \{\"pid\":([0-9]+)(.*) ]]; do
		echo "${BASH_REMATCH[1]}"
		json=${BASH_REMATCH[2]}
	done
}

# The options of the sub-commands (nvtaskset --profile --help, --plan --help).
_nvtaskset_profile_options="--sizes --rounds --timeout --slowdown --metric --higher-is-better
	--strategy --gpu --beside-hog --mem --no-mps --json --plot -h --help"
_nvtaskset_plan_options="--gpu --json -h --help"
_nvtaskset_top_options="-b --batch -n --frames -d --delay -o --sort --gpu -h --help"
_nvtaskset_cdi_options="--cdi-dir --vendor --with-mps -h --help"

# nvtaskset --cdi ...: its options, a directory for --cdi-dir (nvtaskset --cdi --help).
_nvtaskset_cdi()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	--cdi-dir)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0
		;;
	--vendor) return 0 ;;
	esac
	[[ $cur == -* ]] && mapfile -t COMPREPLY < <(compgen -W "$_nvtaskset_cdi_options" -- "$cur")
	return 0
}

# nvtaskset top ...: its options and their values (nvtaskset top --help).
_nvtaskset_top()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-o | --sort)
		mapfile -t COMPREPLY < <(compgen -W "launches waits tpcs pid user prio gpu" -- "$cur")
		return 0
		;;
	--gpu)
		mapfile -t COMPREPLY < <(compgen -W "$(_nvtaskset_gpus)" -- "$cur")
		return 0
		;;
	-n | --frames | -d | --delay) return 0 ;;
	esac
	mapfile -t COMPREPLY < <(compgen -W "$_nvtaskset_top_options" -- "$cur")
	return 0
}

# nvtaskset --profile ... and --plan ...: their options and values, then COMMAND (profile) or
# FILE (plan). $1: the sub-command; $2: the nvtaskset to ask for PIDs (unused).
_nvtaskset_sub()
{
	local sub=$1 cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i word
	local options=$_nvtaskset_plan_options first=-1
	[[ $sub == --profile ]] && options=$_nvtaskset_profile_options
	# The first word that is no option nor an option's value: COMMAND or FILE.
	for ((i = 2; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		case $word in
		--sizes | --rounds | --timeout | --slowdown | --metric | --strategy | --gpu | --plot | --mem) ((i++)) ;;
		-*) ;;
		*)
			first=$i
			break
			;;
		esac
	done
	if ((first < 0)); then
		case $prev in
		--strategy)
			mapfile -t COMPREPLY < <(compgen -W "packed spread clusters" -- "$cur")
			return 0
			;;
		--gpu)
			mapfile -t COMPREPLY < <(compgen -W "$(_nvtaskset_gpus)" -- "$cur")
			return 0
			;;
		--plot)
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
			;;
		--sizes | --rounds | --timeout | --slowdown | --metric | --mem) return 0 ;;
		esac
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
			return 0
		fi
		first=$COMP_CWORD
	fi
	if [[ $sub == --plan ]]; then
		((first == COMP_CWORD)) && mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
	fi
	if declare -F _command_offset >/dev/null; then
		_command_offset "$first"
	elif ((first == COMP_CWORD)); then
		mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
	return 0
}

_nvtaskset()
{
	local options="-c --tpc-list -g --gpc-list -n --tpcs --strategy --exclude-running --wait --memory-half
		--gpu -p --pid -a --all-tasks -l --list --launched --json --no-mps --sm-limit --sm-count --channels
		--dry-run --mps --topology --calibrate --priority --yield --guard --no-lend --agent --hold --poll
		--idle-exit --across-users --svg --metrics --exporter --mem --mem-exclusive --force -h --help --help-all -V --version"
	local -a words=() at=()
	local i j word cur prev cmd=${COMP_WORDS[0]} values="" prefix=""
	local opts_done=0 args=0 first_arg=-1 pid_mode=0 gpc_list=0 count=0 other=0 list=0 gpu=0

	# bash splits "--gpu=1" and "0-7:2" at = and :; glue the pieces together
	# again, remembering where each word starts in COMP_WORDS.
	for ((j = 0; j <= COMP_CWORD; j++)); do
		word=${COMP_WORDS[j]}
		if ((${#words[@]} > 1)) && [[ $word == [=:] || ${words[-1]} == *[=:] ]]; then
			words[-1]+=$word
		else
			words+=("$word")
			at+=("$j")
		fi
	done
	cur=${words[-1]}
	prev=${words[-2]-}
	[[ -x $cmd ]] || cmd=nvtaskset
	COMPREPLY=()
	# The sub-commands, a first word of their own.
	if ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} == --profile || ${COMP_WORDS[1]} == --plan ]]; then
		_nvtaskset_sub "${COMP_WORDS[1]}"
		return 0
	fi
	if ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} == top ]]; then
		_nvtaskset_top
		return 0
	fi
	if ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} == --cdi ]]; then
		_nvtaskset_cdi
		return 0
	fi
	((COMP_CWORD == 1)) && options+=" --profile --plan --cdi"

	for ((i = 1; i < ${#words[@]} - 1; i++)); do
		word=${words[i]}
		if ((opts_done)) || [[ $word != -?* ]]; then
			opts_done=1 # "+" in getopt's option string: the first argument ends options
			((args++ == 0)) && first_arg=$i
			continue
		fi
		case $word in
		--) opts_done=1 ;;
		-n | --tpcs) count=1 && ((i++)) ;;
		--tpcs=*) count=1 ;;
		--strategy | --memory-half | --channels | --sm-count | --priority | --yield | --guard | --hold | --poll | --idle-exit | --svg | --mem) ((i++)) ;;
		--metrics) other=1 ;;
		--exporter) other=1 && ((i++)) ;;
		--agent) other=1 ;;
		--mps) other=1 && ((i++)) ;;
		--gpu) gpu=${words[i + 1]-0} && gpu=${gpu%%=*} && ((i++)) ;;
		--gpu=*) gpu=${word#--gpu=} && gpu=${gpu%%=*} ;;
		--pid) pid_mode=1 ;;
		--gpc-list) gpc_list=1 ;;
		--list) other=1 list=1 ;;
		--topology | --calibrate | --mps=*) other=1 ;;
		--*) ;;
		-*)
			[[ $word == *p* ]] && pid_mode=1
			[[ $word == *g* ]] && gpc_list=1
			[[ $word == *l* ]] && other=1 list=1
			if [[ $word == *n* ]]; then
				count=1
				[[ $word == *n ]] && ((i++)) # -n COUNT as two words
			fi
			;;
		esac
	done

	COMPREPLY=()
	if ((!opts_done)); then
		# An option's value, given as "--opt VALUE" or "--opt=VALUE".
		if [[ $cur == --*=* ]]; then
			prev=${cur%%=*}
			prefix=${prev}=
		elif [[ $prev == -n || $prev == --tpcs || $prev == -[!-]*n ]]; then
			return 0 # a TPC count
		fi
		case $prev in
		--strategy) values="packed spread clusters" ;;
		--memory-half) values="auto 0 1" ;;
		--channels) values="default 2 4 8" ;;
		--sm-count) values="partition follow gpu fit" ;;
		--priority) values="high normal low" && ((pid_mode)) && values+=" none" ;; # none: -p only
		--yield) values="default none protect gate bound ahead borrow client guard any slice duty= protect,any protect,borrow" ;;
		--guard | --hold | --poll | --idle-exit | --exporter | --mem) return 0 ;; # a number, a port
		--svg)
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
			;;
		--mps) values="status start stop" ;;
		--gpu) values=$(_nvtaskset_gpus) ;;
		esac
		if [[ -n $values || -n $prefix ]]; then
			# bash replaces only what follows the "=".
			mapfile -t COMPREPLY < <(compgen -W "$values" -- "${cur#"$prefix"}")
			return 0
		fi
		# -l, --mps, --topology and --calibrate take none of a start's options.
		((list)) && options="--json --launched --svg -h --help"
		((other && !list)) && options="--gpu --json -h --help"
		[[ " ${COMP_WORDS[*]} " == *" --mps stop "* ]] && options="--force -h --help"
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
			return 0
		fi
	fi
	((other)) && return 0 # -l, --mps, --topology and --calibrate take no arguments

	if ((pid_mode)); then
		# [MASK] PID: a GPC list (with -g) or the PID first, then the PID.
		((args == 0 && gpc_list)) && values=$(_nvtaskset_gpcs "$gpu")
		((args <= 1 - count)) && values+=" $(_nvtaskset_pids "$cmd")"
	elif ((args == 0 && !count)); then
		((gpc_list)) && values=$(_nvtaskset_gpcs "$gpu")
		((COMP_CWORD == 1)) && values="top" # the sub-command, where MASK would be
	else
		# COMMAND [ARG...]: complete as that command would.
		((first_arg < 0)) && first_arg=$((${#words[@]} - 1))
		((count)) || first_arg=$((first_arg + 1))
		if declare -F _command_offset >/dev/null; then
			_command_offset "${at[first_arg]}"
		elif ((first_arg == ${#words[@]} - 1)); then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
		else
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return 0
	fi
	# A list item after the last comma (and after any ":" bash split off).
	[[ $cur == *,* ]] && prefix=${cur%,*},
	mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$values" -- "${cur#"$prefix"}")
	if [[ $cur == *:* ]]; then
		for i in "${!COMPREPLY[@]}"; do
			COMPREPLY[i]=${COMPREPLY[i]#"${cur%:*}:"}
		done
	fi
	return 0
}
complete -F _nvtaskset nvtaskset
