# What the command says of a command line a newcomer gets wrong: the word that is wrong, and
# the line that was meant. Sourced by tests/run-tests.sh: each t_NAME function is one test, run
# in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

# usage_error OUT MESSAGE: OUT is the usage error MESSAGE.
usage_error() {
	eq "$1" "nvtaskset: $2
Try 'nvtaskset --help' for more information."
}

t_usage_command_before_mask() {
	# COMMAND written first (nvtaskset demo -c 0-3): the line with the options and MASK first,
	# which parses; nothing runs.
	run_rc out rc "$NVT" demo -c 0-3
	eq "$rc" 1
	usage_error "$out" "'-c' after 'demo' is taken as COMMAND (options end at the first word that is not one, as taskset's do); options and MASK go before COMMAND: nvtaskset -c 0-3 demo"
	run_rc out rc "$NVT" ./demo -g 1 --serve
	eq "$rc" 1
	has "$out" "options and MASK go before COMMAND: nvtaskset -g 1 ./demo --serve"
	# The line it suggests runs.
	run_rc out rc "$NVT" "$APP" -c 0-3 launch 1
	has "$out" "options and MASK go before COMMAND: nvtaskset -c 0-3 $APP launch 1"
	run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" launch 1
	eq "$rc" 0 "$out"
	has "$out" "tpcs=0-3 "
}

t_usage_mask_left_out() {
	# MASK forgotten (nvtaskset demo 1): the first word is no MASK, which is said before
	# COMMAND is looked for, as taskset's "failed to parse mask"; exit 1, not 127 (command
	# not found), also where the word is a program that runs.
	local first
	for first in demo python3 ./train.py "$APP"; do
		run_rc out rc "$NVT" --no-mps "$first" launch 1
		eq "$rc" 1 "exit status of nvtaskset $first launch 1"
		eq "$out" "nvtaskset: failed to parse TPC mask '$first': '$first' is not a MASK; give -c LIST, -g LIST, -n COUNT or a hexadecimal MASK (ff: TPCs 0-7) before COMMAND"
	done
	# A lone word: the same, not "no command given".
	run_rc out rc "$NVT" --no-mps ./train.py
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to parse TPC mask './train.py': './train.py' is not a MASK; give -c LIST, -g LIST, -n COUNT or a hexadecimal MASK (ff: TPCs 0-7) before COMMAND"
	# A -c list's syntax, before COMMAND too.
	run_rc out rc "$NVT" --no-mps -c 3-1 nvtaskset-no-such-program
	eq "$rc" 1
	eq "$out" "nvtaskset: TPC list '3-1': the range 3-1 goes down; write it from low to high (1-3)"
	# --priority or --mem without a MASK: the first word is COMMAND.
	run_rc out rc "$NVT" --no-mps --mem 4G nvtaskset-no-such-program 1
	eq "$rc" 127
	eq "$out" "nvtaskset: failed to execute nvtaskset-no-such-program: No such file or directory"
}

t_usage_yield_names_word() {
	run_rc out rc "$NVT" --no-mps --priority low --yield gate,bownd -c 0-3 true
	eq "$rc" 1
	usage_error "$out" "--yield 'gate,bownd': unknown word 'bownd' (did you mean 'bound'?): the words are gate, bound[=US], ahead[=US], client, borrow, guard, any, slice[=US], duty=PCT, protect, default and none"
	run_rc out rc "$NVT" --no-mps --priority low --yield "bownd=5" -c 0-3 true
	has "$out" "unknown word 'bownd' (did you mean 'bound'?):"
	run_rc out rc "$NVT" --no-mps --priority low --yield protct -c 0-3 true
	has "$out" "unknown word 'protct' (did you mean 'protect'?):"
	run_rc out rc "$NVT" --no-mps --priority low --yield xyzzy -c 0-3 true
	has "$out" "unknown word 'xyzzy': the words are"
}

# --yield default is what leaving --yield out does: time-sliced with no partition and no --guard,
# MPS client priority with one; -p --yield default keeps a running task's words, as -p without
# --yield does (no warning that slice is taken away).
t_usage_yield_default_is_left_out() {
	local whole part ways
	start_loop yw "$NVT" --no-mps --priority low --yield default "$APP"
	whole=$PID
	start_loop yp "$NVT" --no-mps --priority low --yield default -c 0-3 "$APP"
	part=$PID
	wait_file "$WORK/yw.state" "0-65"
	wait_file "$WORK/yp.state" "0-3"
	ways='import json,sys; g={t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}; print(g[int(sys.argv[2])]["yield"]["ways"], g[int(sys.argv[3])]["yield"]["ways"])'
	eq "$(python3 -c "$ways" "$(timeout "$HANG" "$NVT" -l --json)" "$whole" "$part")" "slice client" \
		"--yield default's words with no partition and with -c 0-3"
	run_rc out rc "$NVT" -p --priority low --yield default "$whole"
	eq "$rc" 0 "$out"
	has "$out" "pid $whole's new yield: slice"
	hasnt "$out" "warning"
	eq "$(python3 -c "$ways" "$(timeout "$HANG" "$NVT" -l --json)" "$whole" "$part")" "slice client" \
		"words after -p --yield default"
	stop_loop yw "$whole"
	stop_loop yp "$part"
}

t_usage_did_you_mean() {
	# A slip of a long option, of a sub-command's option, of a word an option takes, or of a
	# sub-command's word: the one meant, where one alone is near; nothing runs.
	run_rc out rc "$NVT" -n 4 --exclude-runing true
	eq "$rc" 1
	usage_error "$out" "unrecognized option '--exclude-runing'; did you mean '--exclude-running'?"
	run_rc out rc "$NVT" --profle true
	usage_error "$out" "unrecognized option '--profle'; did you mean '--profile'?"
	run_rc out rc "$NVT" --no-mps --strategy sprad -n 4 true
	usage_error "$out" "--strategy takes packed, spread or clusters (did you mean 'spread'?)"
	run_rc out rc "$NVT" --sm-count parition -c 0-3 true
	usage_error "$out" "--sm-count takes partition, follow, gpu or fit (did you mean 'partition'?)"
	run_rc out rc "$NVT" --priority hihg true
	usage_error "$out" "--priority takes high, normal, low or none (did you mean 'high'?)"
	run_rc out rc "$NVT" --mps stats
	usage_error "$out" "--mps takes status, start or stop (did you mean 'status'?)"
	run_rc out rc "$NVT" tpo
	usage_error "$out" "'tpo' is not a MASK (did you mean 'nvtaskset top'?)"
	run_rc out rc "$NVT" top --gpus 0
	eq "$rc" 1
	has "$out" "top takes [-b] [-n N] [-d SECS] [-o FIELD] [--gpu GPU] (did you mean '--gpu'?)"
	run_rc out rc "$NVT" --cdi --vendr x
	has "$out" "(did you mean '--vendor'?)"
	run_rc out rc "$NVT" --plan --jsno x
	has "$out" "(did you mean '--json'?)"
	run_rc out rc "$NVT" --profile --stratgy x true
	has "$out" "nvtaskset --profile: did you mean '--strategy'?"
	# Nothing near, or a word that is right: no guess.
	run_rc out rc "$NVT" --strategy xyzzy -n 4 true
	usage_error "$out" "--strategy takes packed, spread or clusters"
	run_rc out rc "$NVT" -c tpo true
	has "$out" "failed to parse TPC list 'tpo'"
}

t_usage_command_reads_as_mask() {
	# With the partitions in the options (--gpu GPU=MASK, -n), a MASK after them is COMMAND:
	# the message says so, and nothing starts (own_mps_dirs: no daemon, counted in its log).
	own_mps_dirs mask
	export PATH="$FAKEBIN:$PATH"
	run_rc out rc "$NVT" -c --gpu 0=0-3 -c 4-5 demo
	eq "$rc" 127
	eq "$out" "nvtaskset: failed to execute 4-5: No such file or directory ('4-5' is taken as COMMAND: --gpu GPU=MASK gives each GPU's MASK, and no MASK follows the options; another GPU's is given as --gpu N=MASK)"
	run_rc out rc "$NVT" -n 4 0-3 demo
	eq "$rc" 127
	eq "$out" "nvtaskset: failed to execute 0-3: No such file or directory ('0-3' is taken as COMMAND: -n picks the TPCs, and no MASK follows the options)"
	[ ! -e "$CUDA_MPS_PIPE_DIRECTORY/fake.log" ] || die "an MPS daemon was started: $(cat "$CUDA_MPS_PIPE_DIRECTORY/fake.log")"
}

t_usage_options_that_do_nothing() {
	# Options that would be taken and do nothing are refused, saying what they go with; nothing
	# starts or changes (own_mps_dirs: no daemon is started, counted in its log).
	own_mps_dirs nothing
	export PATH="$FAKEBIN:$PATH"
	start_loop nd "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/nd.state" "0-3"
	run_rc out rc "$NVT" -p --no-mps -c 4-5 "$PID"
	eq "$rc" 1
	usage_error "$out" "--no-mps goes with starting a command: a running task keeps the MPS server it started with"
	run_rc out rc "$NVT" -pc "$PID"
	eq "$out" "pid $PID's current TPC list: 0-3" "partition after a refused -p --no-mps"
	stop_loop nd "$PID"
	for action in start stop; do
		run_rc out rc "$NVT" --json --mps "$action"
		eq "$rc" 1 "exit status of --json --mps $action"
		usage_error "$out" "--json goes with --mps status: --mps start and stop print no JSON"
	done
	run_rc out rc "$NVT" --json --agent
	eq "$rc" 1 "exit status of --json --agent"
	usage_error "$out" "--agent takes only --guard, --hold, --poll, --idle-exit and --across-users"
	[ ! -e "$CUDA_MPS_PIPE_DIRECTORY/fake.log" ] || die "an MPS daemon was started: $(cat "$CUDA_MPS_PIPE_DIRECTORY/fake.log")"
	# Where JSON is printed, --json is taken; so is it by a start (its warnings then left out).
	run_rc out rc "$NVT" --json --no-mps -c 0-3 "$APP" launch 1
	eq "$rc" 0 "a start with --json: $out"
	run_rc out rc "$NVT" --json --no-mps --dry-run -c 0-3 "$APP"
	eq "$rc" 0 "$out"
	has "$out" '"tpcs":"0-3"'
}

t_usage_option_errors() {
	# Our own words, with the program's name (not the path it was run by), and for an option
	# of a sub-command given without it, the line with the sub-command.
	run_rc out rc "$NVT" --cdi-dir "$WORK/cdi"
	eq "$rc" 1
	usage_error "$out" "option '--cdi-dir' goes with --cdi: nvtaskset --cdi --cdi-dir $WORK/cdi"
	run_rc out rc "$NVT" --sizes 4,8 ./app
	usage_error "$out" "option '--sizes' goes with --profile: nvtaskset --profile --sizes 4,8 ./app"
	run_rc out rc "$NVT" --bogus
	usage_error "$out" "unrecognized option '--bogus'"
	run_rc out rc "$NVT" -x
	usage_error "$out" "invalid option -- 'x'"
	run_rc out rc "$NVT" -n
	usage_error "$out" "option requires an argument -- 'n'"
	run_rc out rc "$NVT" --mps
	usage_error "$out" "option '--mps' requires an argument"
	run_rc out rc "$NVT" --json=1 -l
	usage_error "$out" "option '--json' doesn't allow an argument"
	run_rc out rc "$NVT" --t
	usage_error "$out" "option '--t' is ambiguous; possibilities: '--tpc-list' '--tpcs' '--topology'"
	# A sub-command's getopt names it: nvtaskset --cdi, not its word alone.
	run_rc out rc "$NVT" --cdi --bogus
	eq "$rc" 1
	has "$out" "nvtaskset --cdi: unrecognized option '--bogus'"
	run_rc out rc "$NVT" --plan --bogus
	has "$out" "nvtaskset --plan: unrecognized option '--bogus'"
}

t_usage_help_beside_unknown_option() {
	# As taskset: an unknown option is an error (exit 1, the hint to --help) even beside --help,
	# whichever comes first, for the command and for each sub-command with a --help of its own.
	local form name
	for form in "--help --bogus" "-h --bogus" "--bogus --help" "--help-all --bogus" \
		"top --help --bogus" "top -h --bogus" "--cdi --help --bogus" "--plan --help --bogus" \
		"--profile --help --bogus"; do
		name=nvtaskset
		case $form in top*) name="nvtaskset top" ;; --cdi*) name="nvtaskset --cdi" ;;
		--plan*) name="nvtaskset --plan" ;; --profile*) name="nvtaskset --profile" ;; esac
		# shellcheck disable=SC2086 # the form's words
		run_rc out rc "$NVT" $form
		eq "$rc" 1 "nvtaskset $form: $out"
		has "$out" "$name: unrecognized option '--bogus'"
		has "$out" "Try '$name --help' for more information."
		hasnt "$out" "Usage:"
	done
}

t_usage_cdi_not_root() {
	# --cdi by a user who cannot make the shared run directory: run it as root. Root's run
	# is a user's (uid 65534) in a mount namespace whose /run is empty and root's; a user's
	# needs a machine without /run/nvtaskset (where it is, a user's --cdi uses it).
	local as=()
	if [ "$ME_UID" == 0 ]; then
		command -v setpriv >/dev/null || skip "needs setpriv to run --cdi as a user"
		setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$NVT" || skip "uid 65534 cannot run $NVT"
		as=(unshare --mount --propagation private sh -c 'mount -t tmpfs -o mode=0755 tmpfs /run && exec "$@"' _
			setpriv --reuid=65534 --regid=65534 --clear-groups)
		mkdir -m 1777 "$WORK/cdi"
	else
		[ ! -e /run/nvtaskset ] || skip "needs root to hide /run/nvtaskset, which this machine has (a user's --cdi uses it)"
	fi
	run_rc out rc "${as[@]}" env -u NVTASKSET_RUNDIR "$NVT" --cdi --cdi-dir "$WORK/cdi"
	eq "$rc" 1
	eq "$out" "nvtaskset: --cdi: cannot make /run/nvtaskset, which every user's tasks and the containers share: run nvtaskset --cdi as root"
	[ ! -e "$WORK/cdi/nvtaskset-tpcs.json" ] || die "a spec was written"
}

t_usage_help_agent_line() {
	# --help's usage line for --agent names every option --agent takes (it left out
	# --idle-exit and --across-users), as its refusal of another option lists them.
	local takes line opt
	run_rc out rc "$NVT" --agent --no-mps
	eq "$rc" 1
	takes=$(sed -n "s/^nvtaskset: --agent takes only //p" <<<"$out" | grep -oE -- '--[a-z-]+')
	[ "$(wc -l <<<"$takes")" -ge 5 ] || die "--agent's refusal lists: $out"
	line=$("$NVT" --help-all | grep -E '^ nvtaskset --agent ')
	for opt in $takes; do
		has "$line" "[$opt"
	done
}

# The words of main.c's table of every way the command is used (cmds[]), one a line, sorted.
command_table_words() {
	sed -n '/^static const struct cmd cmds\[\] = {$/,/^};$/p' "$ROOT/tools/nvtaskset/main.c" |
		grep -oE '\.word = "[^"]*"' | sed 's/^\.word = "\(.*\)"$/\1/' | sort
}

t_usage_every_command_runs() {
	# Every entry of the command's table (main.c's cmds[]: the first words, and the modes the
	# options select) is one of these, runs its own code (it gives an answer only that code
	# gives), and is named in --help-all and in the man page: on a usage line, or in the text
	# as "nvtaskset WORD". A word added to the table, left out of it or changed fails here.
	local word args rc_want want table help man doc tried=""
	own_mps_dirs every_command
	table=$(command_table_words)
	[ "$(wc -l <<<"$table")" -ge 10 ] || die "too few words found in main.c's cmds[]: $table"
	help=$("$NVT" --help-all)
	man=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$ROOT/man/nvtaskset.1")
	while IFS='|' read -r word args rc_want want; do
		tried+="$word"$'\n'
		# shellcheck disable=SC2086 # its words
		run_rc out rc "$NVT" $args
		eq "$rc" "$rc_want" "exit status of nvtaskset $args: $out"
		has "$out" "$want"
		for doc in help man; do
			if ! "${doc}_synopsis" | tr ' []|' '\n' | grep -qxF -- "$word" &&
				! tr -s ' \n' ' ' <<<"${!doc}" | grep -qF -- "nvtaskset $word "; then
				die "$([ "$doc" == help ] && echo "--help-all" || echo "the man page") names no $word (on a usage line, or as nvtaskset $word)"
			fi
		done
	done <<'EOF2'
top|top -b -n 1 --gpu 0|0|tasks: 0  agents:
--profile|--profile --help|0|nvtaskset --profile [options] COMMAND
--plan|--plan --help|0|Usage: nvtaskset --plan [--gpu GPU]
--cdi|--cdi --help|0|Usage: nvtaskset --cdi [--cdi-dir DIR]
--cdi-hook|--cdi-hook|1|nvtaskset: --cdi-hook takes VENDOR/CLASS=NAME or poststop
--agent|--agent --idle-exit 1|0|no managed task: ending
-l|-l|0|PPID  USER
--svg|-l --svg -|0|<svg
--mps|--mps status|3|MPS control daemon: not running
--topology|--topology|0|GPC  TPCs
--calibrate|--calibrate|0|calibrated GPU 0 in
--metrics|--metrics|0|# TYPE nvtaskset_tasks gauge
--exporter|--exporter 65536|1|nvtaskset: --exporter: '65536' is no port
-p|-p 1|1|failed to get pid 1's partition: not running under nvtaskset
MASK|--dry-run -c 0-3|0|: TPCs 0-3
EOF2
	eq "$(sort <<<"${tried%$'\n'}" | tr '\n' ' ')" "$(tr '\n' ' ' <<<"$table")" \
		"the ways of use this test runs against main.c's cmds[]"
}
