# Bash completion (tools/completion/nvtaskset.bash). Sourced by tests/run-tests.sh: each t_NAME
# function is one test, run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

COMPLETION=$ROOT/tools/completion/nvtaskset.bash

# complete WORD...: the candidates the completion offers for the last WORD (which may be
# empty) of the command line WORD..., one line, sorted, as a fresh bash sees them. Words
# are given as bash splits them (at "=" and ":"). $BASH_COMPLETION_LIB, when set, is
# sourced first.
complete_words() {
	bash -c '
		[ -z "${BASH_COMPLETION_LIB:-}" ] || . "$BASH_COMPLETION_LIB"
		. "$1"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_nvtaskset 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}" | sort -u | tr "\n" " "
	' complete_words "$COMPLETION" "$@" | sed 's/ $//'
}
# own_calibration NAME: a cache directory holding one record, of the default fake GPU.
own_calibration() {
	export NVTASKSET_CACHE_DIR=$WORK/cache.$1
	"$NVT" --calibrate >/dev/null 2>&1 || die "calibration failed"
}
# seq_line FIRST LAST: "FIRST ... LAST", sorted as text.
seq_line() { seq "$1" "$2" | sort -u | tr '\n' ' ' | sed 's/ $//'; }

# first_words: the sub-commands that --help-all's usage gives a first word of their own
# (nvtaskset WORD [...], WORD not an option the option list has), one a line.
first_words() {
	"$NVT" --help-all | sed -n '/^Usage:/,/^$/s/^ nvtaskset \([-a-z][-a-z]*\).*/\1/p' | grep -vxF -f <(help_option_list) | sort -u
}

t_completion_registered() {
	eq "$(bash -c '. "$1"; complete -p nvtaskset' _ "$COMPLETION")" "complete -F _nvtaskset nvtaskset"
	# Every option --help lists (help_option_list: package.sh), and no other; first, the
	# sub-commands too.
	eq "$(complete_words nvtaskset -)" "$( (help_option_list && first_words | grep -- '^-') | sort -u | tr '\n' ' ' |
		sed 's/ $//')" "options offered for '-'"
	eq "$(complete_words nvtaskset '')" "$(first_words | grep -v -- '^-' | sort -u | tr '\n' ' ' | sed 's/ $//')" \
		"sub-commands offered for ''"
	eq "$(complete_words nvtaskset --pro)" "--profile"
	eq "$(complete_words nvtaskset --no-mps --pro)" "" "--profile after an option"
	eq "$(complete_words nvtaskset --st)" "--strategy"
	eq "$(complete_words nvtaskset -c 0-3 --)" "" "options after MASK (they are COMMAND's)"
	# -l, --topology: only what they take (a start's options are refused there).
	eq "$(complete_words nvtaskset -l --)" "--help --json --launched --svg"
	eq "$(complete_words nvtaskset --topology --)" "--gpu --help --json"
}
t_completion_values() {
	eq "$(complete_words nvtaskset --strategy '')" "clusters packed spread"
	eq "$(complete_words nvtaskset --channels '')" "2 4 8 default"
	eq "$(complete_words nvtaskset --channels d)" "default"
	eq "$(complete_words nvtaskset -n 4 --strategy s)" "spread"
	eq "$(complete_words nvtaskset -n 4 --strategy c)" "clusters"
	eq "$(complete_words nvtaskset --strategy = p)" "packed" "--strategy=p"
	eq "$(complete_words nvtaskset -n 4 --memory-half '')" "0 1 auto"
	eq "$(complete_words nvtaskset -n 4 --memory-half a)" "auto"
	eq "$(complete_words nvtaskset --mps '')" "start status stop"
	eq "$(complete_words nvtaskset --priority '')" "high low normal" "a start's priorities"
	eq "$(complete_words nvtaskset -p --priority '')" "high low none normal" "-p's priorities"
	eq "$(complete_words nvtaskset --guard '')" "" "a TPC count"
	eq "$(complete_words nvtaskset --mps st)" "start status stop"
	eq "$(complete_words nvtaskset -n '')" "" "a TPC count"
	eq "$(complete_words nvtaskset -pn '')" "" "a TPC count after -pn"
	eq "$(complete_words nvtaskset -l '')" "" "-l takes no argument"
	eq "$(complete_words nvtaskset --mps status '')" "" "--mps takes no further argument"
	eq "$(complete_words nvtaskset --mps stop --f)" "--force" "--mps stop's --force"
	eq "$(complete_words nvtaskset --mps status --f)" "" "--force goes with stop alone"
	eq "$(complete_words nvtaskset -c 0-3 '')" "$(complete_words nvtaskset -n 4 '')"
}
t_completion_gpus() {
	# One number per GPU the kernel module lists; 0 when it lists none.
	export NVTASKSET_PROC_NVIDIA=$WORK/procnv.completion_gpus
	eq "$(complete_words nvtaskset --gpu '')" "0" "no /proc entries"
	mkdir -p "$NVTASKSET_PROC_NVIDIA"/gpus/0000:{01,41,81}:00.0
	eq "$(complete_words nvtaskset --gpu '')" "0 1 2"
	eq "$(complete_words nvtaskset --topology --gpu = '')" "0 1 2" "--gpu="
}
t_completion_gpcs() {
	# GPC numbers of the calibrated GPU, as --topology counts them.
	local gpcs uuid
	own_calibration completion_gpcs
	gpcs=$("$NVT" --topology --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"][0]["gpcs"]))')
	[ "$gpcs" -gt 1 ] || die "the fake GPU has $gpcs GPCs"
	eq "$(complete_words nvtaskset -g '')" "$(seq_line 0 $((gpcs - 1)))"
	eq "$(complete_words nvtaskset -g 1)" "1 10 11"
	eq "$(complete_words nvtaskset -g 0-3,1)" "0-3,1 0-3,10 0-3,11" "an item after a comma"
	eq "$(complete_words nvtaskset -g 0-3 : 2,1)" "2,1 2,10 2,11" "after a stride bash split at ':'"
	eq "$(complete_words nvtaskset --no-mps -g '')" "$(seq_line 0 $((gpcs - 1)))"
	eq "$(complete_words nvtaskset -c '')" "" "no candidates for a TPC list"
	# With the GPUs listed in /proc, the record of the chosen GPU's UUID.
	uuid=$(basename "$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)" .topo)
	export NVTASKSET_PROC_NVIDIA=$WORK/procnv.completion_gpcs
	mkdir -p "$NVTASKSET_PROC_NVIDIA"/gpus/0000:0{1,2}:00.0
	printf 'Model: \t\t Fake\nGPU UUID: \t GPU-00000000-0000-0000-0000-000000000000\n' \
		>"$NVTASKSET_PROC_NVIDIA/gpus/0000:01:00.0/information"
	printf 'Model: \t\t Fake\nGPU UUID: \t %s\n' "$uuid" >"$NVTASKSET_PROC_NVIDIA/gpus/0000:02:00.0/information"
	eq "$(complete_words nvtaskset --gpu 1 -g '')" "$(seq_line 0 $((gpcs - 1)))" "GPU 1's GPCs"
	eq "$(complete_words nvtaskset -g '')" "" "GPU 0 has no calibration"
	# Without a cache, nothing (never a calibration).
	export NVTASKSET_CACHE_DIR=$WORK/empty-cache
	eq "$(complete_words nvtaskset --gpu 1 -g '')" ""
}
t_completion_pids() {
	local a b
	own_calibration completion_pids
	eq "$(complete_words "$NVT" -p '')" "" "no tasks"
	start_loop ca "$NVT" --no-mps -c 0-3 "$APP"
	a=$PID
	start_loop cb "$NVT" --no-mps -c 4-7 "$APP"
	b=$PID
	wait_file "$WORK/ca.state" "0-3"
	wait_file "$WORK/cb.state" "4-7"
	eq "$(complete_words "$NVT" -p '')" "$(printf '%s\n' "$a" "$b" | sort | tr '\n' ' ' | sed 's/ $//')"
	eq "$(complete_words "$NVT" -p -c 8-9 '')" "$(complete_words "$NVT" -p '')" "PID after MASK"
	eq "$(complete_words "$NVT" -p -n 4 '')" "$(complete_words "$NVT" -p '')" "PID after -n COUNT"
	eq "$(complete_words "$NVT" -p -c 8-9 "$a" '')" "" "nothing after the PID"
	eq "$(complete_words "$NVT" -p -g '')" \
		"$(printf '%s\n' $(seq 0 11) "$a" "$b" | sort -u | tr '\n' ' ' | sed 's/ $//')" "-p -g: GPCs or the PID"
	stop_loop ca "$a"
	stop_loop cb "$b"
}
t_completion_command() {
	own_calibration completion_command
	# After MASK (or -n COUNT) comes a command, then its arguments.
	has " $(complete_words nvtaskset -c 0-3 ech) " " echo "
	has " $(complete_words nvtaskset -n 4 --strategy spread ech) " " echo "
	has " $(complete_words nvtaskset --channels 8 -c 0-3 ech) " " echo "
	local lib=/usr/share/bash-completion/bash_completion
	[ -r "$lib" ] || skip "bash-completion is not installed"
	export BASH_COMPLETION_LIB=$lib
	# bash-completion completes the command's own options.
	has " $(complete_words nvtaskset -c 0-3 ls --al) " " --all "
	has " $(complete_words nvtaskset -n 3 ls --al) " " --all "
	eq "$(complete_words nvtaskset --mps '')" "start status stop"
	eq "$(complete_words nvtaskset --priority '')" "high low normal"
	has " $(complete_words nvtaskset --priority low --yield '') " " protect "
	# Every word of --yield but the values of bound=, ahead= and slice=.
	local w yields
	yields=" $(complete_words nvtaskset --priority low --yield '') "
	for w in gate bound ahead client borrow guard any slice duty= protect default none; do
		has "$yields" " $w "
	done
	eq "$(complete_words nvtaskset --guard '')" "" "a TPC count"
	has " $(complete_words nvtaskset -g '') " " 0 "
}
t_completion_subcommands() {
	# --profile, --plan and --cdi: their own options (as their --help lists them), values,
	# then COMMAND or FILE.
	local want
	want=$("$NVT" --profile --help | sed -n '/^Options:/,/^$/p' | grep -oE -- '^ {1,5}(-[a-zA-Z], )?--[a-z-]+' |
		grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
	[ -n "$want" ] || die "no options in --profile --help"
	eq "$(complete_words nvtaskset --profile -)" "$want" "--profile's options"
	eq "$(complete_words nvtaskset --plan -)" "$(printf '%s\n' --gpu --json -h --help | sort | tr '\n' ' ' | sed 's/ $//')" \
		"--plan's options"
	has "$("$NVT" --plan --help)" "Usage: nvtaskset --plan [--gpu GPU] [--json] FILE"
	# --cdi: the options its usage line gives, a directory for --cdi-dir, nothing for a vendor.
	eq "$(complete_words nvtaskset --cdi --)" "$("$NVT" --cdi --help | sed -n 's/^Usage: nvtaskset --cdi //p' |
		grep -oE -- '--[a-z-]+' | (cat && echo --help) | sort -u | tr '\n' ' ' | sed 's/ $//')" "--cdi's options"
	mkdir -p "$WORK/cdi-specs"
	: >"$WORK/cdi-file"
	eq "$(complete_words nvtaskset --cdi --cdi-dir "$WORK/cdi-")" "$WORK/cdi-specs"
	eq "$(complete_words nvtaskset --cdi --vendor '')" "" "a vendor's name"
	eq "$(complete_words nvtaskset --profile --strategy '')" "clusters packed spread"
	eq "$(complete_words nvtaskset --profile --sizes '')" "" "a list of sizes"
	eq "$(complete_words nvtaskset --profile --rounds 3 --metric x --beside-hog --)" \
		"$(complete_words nvtaskset --profile --)"
	# --mem's value is a size, and the word after it is no COMMAND.
	eq "$(complete_words nvtaskset --profile --mem '')" "" "a size"
	eq "$(complete_words nvtaskset --profile --mem 16G --)" "$(complete_words nvtaskset --profile --)"
	has " $(complete_words nvtaskset --profile --rounds 3 ech) " " echo "
	: >"$WORK/plan-tasks.txt"
	eq "$(complete_words nvtaskset --plan --json "$WORK/plan-t")" "$WORK/plan-tasks.txt"
	eq "$(complete_words nvtaskset --plan "$WORK/plan-tasks.txt" '')" "" "--plan takes one FILE"
	# top: its options (as its --help lists them) and their values; its name in MASK's place.
	want=$("$NVT" top --help | sed -n '/^Options:/,/^$/p' | grep -oE -- '^ {1,5}(-[a-zA-Z], )?--[a-z-]+' |
		grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
	eq "$(complete_words nvtaskset top -)" "$want" "top's options"
	eq "$(complete_words nvtaskset top -o '')" "gpu launches pid prio tpcs user waits"
	eq "$(complete_words nvtaskset top -d '')" "" "seconds"
	eq "$(complete_words nvtaskset t)" "top"
	eq "$(complete_words nvtaskset --exporter '')" "" "a port"
}
