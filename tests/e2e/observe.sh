# What runs where (docs/observability.md): nvtaskset top, in batch and in a real terminal
# (tmux), --metrics (and promtool on it), -l --svg (and headless Chromium rendering it), and
# the exporter with polite and hostile clients. Sourced by tests/run-tests.sh: each t_NAME
# function is one test, run in a subshell under set -e with the helpers defined there (and
# prio.sh's start_agent, stop_agent, guarded_to).
# Over 500 lines on purpose: the viewers read one view (src/view) of the tasks these helpers
# start; split by viewer, the suites of --metrics or --svg would skip whole where promtool or
# Chromium is missing, which fails the run.
# shellcheck shell=bash

# ---- Helpers -------------------------------------------------------------------------

PROBE=$HELPERS/httpprobe.py
# The user the suite runs as, whose tasks and agent these are, is the runner's ME (top shows 9
# characters of it).

# two_tasks: starts task A on GPC 1 (8 TPCs) and B on GPCs 3-4 (16), plain; sets A and B.
two_tasks() {
	start_loop ta "$NVT" --no-mps -g 1 "$APP"
	A=$PID
	start_loop tb "$NVT" --no-mps -g 3-4 "$APP"
	B=$PID
	wait_file "$WORK/ta.state" "1,9,17,25,32,39,46,53"
	wait_file "$WORK/tb.state" "3-4,11-12,19-20,27-28,34-35,41-42,48-49,55-56"
}
# The TPCs of GPCs 5-11 of the fake H100 (30), and with GPC 0's (34).
GPCS_5_11=5-7,13-15,21-23,29-31,36-38,43-45,50-52,57-65
GPCS_0_5_11=0,5-8,13-16,21-24,29-31,36-38,43-45,50-52,57-65
# lending_pair: the agent (hold 100 ms, guard 4), a high task on GPC 0 that pauses and a low one
# (--yield guard) on GPCs 5-11 that borrows GPC 0 while it does; sets HI, LO, AGENT. GPCs 1-4
# stay free (two_tasks takes GPCs 1, 3 and 4).
lending_pair() {
	start_agent ag -- --hold 100 --poll 500 --guard 4
	start_loop plo "$NVT" --no-mps --priority low --yield guard -g 5-11 "$APP"
	LO=$PID
	wait_file "$WORK/plo.state" "$GPCS_5_11"
	FAKEAPP_PAUSE=$WORK/phi.pause start_loop phi "$NVT" --no-mps --priority high -g 0 "$APP"
	HI=$PID
	wait_file "$WORK/phi.state" "0,8,16,24"
	touch "$WORK/phi.pause"
	wait_file "$WORK/plo.state" "$GPCS_0_5_11" 10
}
end_lending_pair() {
	stop_agent "$AGENT"
	rm -f "$WORK/phi.pause"
	stop_loop phi "$HI"
	stop_loop plo "$LO"
}
# exporter_start [ADDR:]PORT: starts `nvtaskset --exporter` (skips where it was not built);
# sets EXPORTER (its PID) and PORT (the port it says it serves on).
exporter_start() {
	[ -x "$RUN/build/lib/nvtaskset/nvtaskset-exporter" ] ||
		skip "the exporter was not built: it needs libmicrohttpd's header at build time (Debian: libmicrohttpd-dev)"
	"$NVT" --exporter "$1" 2>"$WORK/exporter.err" &
	EXPORTER=$!
	# Its command line does not name $WORK, which the suite's clean-up looks for: ended here,
	# pass or fail.
	trap 'kill -TERM "$EXPORTER" 2>/dev/null || :' EXIT
	wait_for 10 grep -q "serving the metrics on" "$WORK/exporter.err"
	PORT=$(sed -n 's|.*serving the metrics on http://[^ ]*:\([0-9]*\)/metrics$|\1|p' "$WORK/exporter.err")
	[ -n "$PORT" ] || die "no port in: $(cat "$WORK/exporter.err")"
}
# exporter_stop: SIGTERM ends it, status 0.
exporter_stop() {
	local rc
	kill -TERM "$EXPORTER"
	wait "$EXPORTER" && rc=0 || rc=$?
	eq "$rc" 0 "the exporter's status on SIGTERM ($(cat "$WORK/exporter.err"))"
}
# get PATH [METHOD]: the exporter's answer (status line first).
get() { timeout "$HANG" python3 "$PROBE" get "$PORT" "$@"; }
# serves: a GET of /metrics is a 200 with the whole document, and the exporter lives.
serves() {
	local out
	kill -0 "$EXPORTER" || die "the exporter ended: $(cat "$WORK/exporter.err")"
	out=$(get /metrics)
	eq "$(head -1 <<<"$out")" 200 "GET /metrics"
	has "$out" "# TYPE nvtaskset_mps_daemon_up gauge"
}
# sample NAME PID: the value of metric NAME of task PID in the text on stdin.
sample() { grep -E "^$1\{[^}]*pid=\"$2\"" | awk '{print $NF}'; }

# ---- top ----------------------------------------------------------------------------------

t_top_batch_frames() {
	local out first second rows
	two_tasks
	run_rc out rc "$NVT" top -b -n 2 -d 1
	eq "$rc" 0 "top -b: $out"
	# Two frames, one after the other, each with its header.
	eq "$(grep -c '^nvtaskset top - ' <<<"$out")" 2 "frames"
	first=$(awk '/^nvtaskset top - / { n++ } n == 1' <<<"$out")
	second=$(awk '/^nvtaskset top - / { n++ } n == 2' <<<"$out")
	has "$first" "tasks: 2"
	# The map: A's letter on GPC 1's 8 TPCs, B's on GPCs 3 and 4, the rest free.
	grep -qE '^  GPC 1 +(A +){8}$' <<<"$first" || die "GPC 1: $first"
	grep -qE '^  GPC 3 +(B +){8}$' <<<"$first" || die "GPC 3: $first"
	grep -qE '^  GPC 4 +(B +){8}$' <<<"$first" || die "GPC 4: $first"
	grep -qE '^  GPC 0 +(\. +){4}$' <<<"$first" || die "GPC 0: $first"
	has "$first" "66 TPCs, 42 free, 0 borrowed"
	# A row each: letter, PID, user, GPU, TPCs; in the first frame, launches per second since
	# the task started (procps' first frame), over 0 for a loop that launched; no waits (no
	# priority).
	grep -qE "^A +$A +${ME:0:9} +0 +- +- +- +8 +0 +[0-9.]+ +- +.*fakeapp" <<<"$first" || die "A's row: $first"
	grep -qE "^B +$B +${ME:0:9} +0 +- +- +- +16 +0 +[0-9.]+ +- " <<<"$first" || die "B's row: $first"
	rows=$(grep -E "^A +$A " <<<"$first" | awk '{print $10}')
	[ "$(awk -v r="$rows" 'BEGIN { print (r > 0) }')" = 1 ] || die "A's first rate is 0: $first"
	# Then launches per second, which the loops make (over 0), and no waits (no priority).
	grep -qE "^A +$A( +[^ ]+){7} +[0-9.]+ +- " <<<"$second" || die "A's rate: $second"
	rows=$(grep -E "^A +$A " <<<"$second" | awk '{print $10}')
	[ "${rows%.*}" -gt 0 ] || die "A launches 0 a second: $second"
	# Sorted by PID on request.
	run_rc out rc "$NVT" top -b -n 1 -o pid
	eq "$rc" 0
	eq "$(grep -E '^[AB] ' <<<"$out" | awk '{print $2}' | tr '\n' ' ')" "$A $B " "rows by PID"
	stop_loop ta "$A"
	stop_loop tb "$B"
}

t_top_usage() {
	local out
	run_rc out rc "$NVT" top
	eq "$rc" 1 "top without a terminal"
	has "$out" "top: standard input and output must be a terminal (give -b"
	for bad in "-d 0" "-d 0.05" "-d 1.2345" "-d x" "-n 0" "-o bogus" "-b extra" "--gpu 7"; do
		# shellcheck disable=SC2086 # the words
		run_rc out rc "$NVT" top -b $bad
		eq "$rc" 1 "top -b $bad: $out"
		has "$out" "nvtaskset: "
	done
	run_rc out rc "$NVT" top -b -d 1.5 -n 1 -o tpcs --gpu 0
	eq "$rc" 0 "top -b -d 1.5: $out"
	run_rc out rc "$NVT" top --help
	eq "$rc" 0
	has "$out" "Usage: nvtaskset top [-b] [-n N] [-d SECS] [-o FIELD] [--gpu GPU]"
}

t_top_borrowing_and_lending() {
	local out
	lending_pair
	run_rc out rc "$NVT" top -b -n 1
	eq "$rc" 0 "$out"
	# GPC 0 is the high task's (A), borrowed by the low one (b); GPCs 5-11 the low one's.
	grep -qE '^  GPC 0 +(Ab +){4}$' <<<"$out" || die "GPC 0 borrowed: $out"
	grep -qE '^  GPC 5 +(B +){8}$' <<<"$out" || die "GPC 5: $out"
	grep -qE '^  GPC 2 +(\. +){8}$' <<<"$out" || die "GPC 2: $out"
	has "$out" "66 TPCs, 32 free, 4 borrowed"
	grep -qE "^A +$HI +${ME:0:9} +0 +- +high +lending +4 +0 " <<<"$out" || die "the high row: $out"
	grep -qE "^B +$LO +${ME:0:9} +0 +- +low +borrowing +34 +4 " <<<"$out" || die "the low row: $out"
	has "$out" "$ME's runs"
	end_lending_pair
}

# tmux_screen: what the terminal shows now.
tmux_screen() { tmux -S "$WORK/tmux.sock" capture-pane -p -t top; }
# tmux_shows TEXT: the screen holds TEXT.
tmux_shows() { tmux_screen | grep -qF -- "$1"; }

t_top_in_a_terminal() {
	local screen line
	command -v tmux >/dev/null || skip "needs tmux (Debian: tmux) to run top in a terminal"
	two_tasks
	printf 'set -g remain-on-exit on\nset -g status off\n' >"$WORK/tmux.conf"
	# After top, the terminal's settings and its screen say whether top gave them back.
	tmux -S "$WORK/tmux.sock" -f "$WORK/tmux.conf" new-session -d -s top -x 120 -y 30 \
		"$NVT top -d 0.3; echo top-ended=\$?; stty -a | grep -o -- '-\\?icanon\\|-\\?echo '; echo tty-listed; exec sleep 600"
	wait_for 20 tmux_shows "nvtaskset top - "
	# The map and the rows, as in batch mode; after a second look, rates.
	wait_for 20 tmux_shows "sort: launches"
	screen=$(tmux_screen)
	grep -qE '^  GPC 1 +(A +){7}A *$' <<<"$screen" || die "GPC 1 on the screen: $screen"
	line=$(grep -E "^A +$A " <<<"$screen") || die "no row for $A: $screen"
	wait_for 20 eval 'tmux_screen | grep -qE "^A +$A( +[^ ]+){7} +[0-9.]+ "'
	# In colour: A's cells on a background of their own (SGR 42; tmux gives each attribute
	# an escape of its own).
	tmux -S "$WORK/tmux.sock" capture-pane -p -e -t top | grep -q $'\e\\[42mA' ||
		die "no coloured cells: $(tmux -S "$WORK/tmux.sock" capture-pane -p -e -t top | head -5 | od -c | head)"
	# Keys: s sorts by waits, r reverses, 7 is no GPU, 0 picks GPU 0, a all again.
	tmux -S "$WORK/tmux.sock" send-keys -t top s
	wait_for 10 tmux_shows "sort: waits"
	tmux -S "$WORK/tmux.sock" send-keys -t top r
	wait_for 10 tmux_shows "sort: waits (reversed)"
	tmux -S "$WORK/tmux.sock" send-keys -t top 7
	wait_for 10 tmux_shows "no GPU 7"
	tmux -S "$WORK/tmux.sock" send-keys -t top 0
	wait_for 10 tmux_shows "GPU: 0"
	tmux -S "$WORK/tmux.sock" send-keys -t top a
	wait_for 10 tmux_shows "GPU: all"
	# A narrower, shorter terminal: the frame fits it (a GPU on a line, no line wider, the rows
	# cut and counted).
	tmux -S "$WORK/tmux.sock" resize-window -t top -x 60 -y 7
	wait_for 10 eval '[ "$(tmux_screen | awk "length > 60" | wc -l)" == 0 ] && tmux_screen | grep -q "^\.\.\. 2 more (s sorts"'
	tmux_shows "  [....|AAAAAAAA|........|BBBBBBBB|BBBBBBBB|" || die "the GPU on a line: $(tmux_screen)"
	# Shorter than the frame's head: cut, not scrolled (the header stays on the first line).
	tmux -S "$WORK/tmux.sock" resize-window -t top -x 60 -y 4
	wait_for 10 eval '[ "$(tmux_screen | grep -c .)" == 4 ] && tmux_screen | tail -1 | grep -q "GPU: all"'
	tmux_screen | head -1 | grep -q "^nvtaskset top - " || die "the frame scrolled: $(tmux_screen)"
	# q ends it, status 0, and the terminal is as it was: the alternate screen left (top's frame
	# is gone from the screen), the line discipline's canonical mode and echo back.
	tmux -S "$WORK/tmux.sock" resize-window -t top -x 120 -y 30 # (room for what follows)
	wait_for 10 eval 'tmux_screen | grep -q "^GPU 0 .*Fake GPU"'
	tmux -S "$WORK/tmux.sock" send-keys -t top q
	# (the shell's lines after top's end, all of them: the last one written last)
	wait_for 10 tmux_shows "tty-listed"
	tmux_shows "top-ended=0" || die "top's status: $(tmux_screen)"
	tmux_shows "nvtaskset top - " && die "top's frame stayed on the screen: $(tmux_screen)"
	screen=$(tmux_screen)
	grep -qx "icanon" <<<"$screen" && grep -qx "echo" <<<"$screen" ||
		die "the terminal's settings were not given back: $screen"
	tmux -S "$WORK/tmux.sock" kill-server
	stop_loop ta "$A"
	stop_loop tb "$B"
}

# selected_row PID: top's row of PID is in reverse video (SGR 7), and no other row is.
selected_row() {
	local rows
	rows=$(tmux -S "$WORK/tmux.sock" capture-pane -p -e -t top | grep -F $'\e[7m' | grep -F "fakeapp")
	[ "$(grep -c . <<<"$rows")" == 1 ] && grep -qE "(^|[^0-9])$1 " <<<"$rows"
}
# In a terminal, top's keys change the selected task as nvtaskset -p does: p a TPC list, P a
# priority; up and down (j, k) select; Esc cancels; what -p says shows in the footer.
t_top_keys_change_task() {
	local screen
	command -v tmux >/dev/null || skip "needs tmux (Debian: tmux) to run top in a terminal"
	two_tasks
	printf 'set -g remain-on-exit on\nset -g status off\n' >"$WORK/tmux.conf"
	tmux -S "$WORK/tmux.sock" -f "$WORK/tmux.conf" new-session -d -s top -x 160 -y 40 \
		"$NVT top -o pid -d 0.3; echo top-ended=\$?; exec sleep 600"
	wait_for 20 tmux_shows "sort: pid"
	# The first row (A, the lower PID) is selected, in reverse video.
	wait_for 10 selected_row "$A"
	tmux -S "$WORK/tmux.sock" send-keys -t top p
	wait_for 10 tmux_shows "TPC list for pid $A (Enter sets it, Esc cancels): _"
	tmux -S "$WORK/tmux.sock" send-keys -t top 6 0 - 6 3 Enter
	# A runs on them (its launches), and the footer says what -p said.
	wait_file "$WORK/ta.state" "60-63"
	wait_for 10 tmux_shows "pid $A's new TPC list: 60-63"
	# A list that shares B's TPCs: -p's warning shows (and A moves all the same).
	tmux -S "$WORK/tmux.sock" send-keys -t top p 4 1 - 4 2 Enter
	wait_file "$WORK/ta.state" "41-42"
	wait_for 10 tmux_shows "warning: pid $A's TPCs 41-42 of GPU 0 are pid $B's too"
	tmux -S "$WORK/tmux.sock" send-keys -t top p 6 0 - 6 3 Enter
	wait_file "$WORK/ta.state" "60-63"
	# Esc cancels: nothing is given.
	tmux -S "$WORK/tmux.sock" send-keys -t top p 0 - 3 Escape
	wait_for 10 tmux_shows "cancelled"
	eq "$("$NVT" -p -c "$A")" "pid $A's current TPC list: 60-63" "A after a cancelled change"
	# Down selects B; P gives it a priority.
	tmux -S "$WORK/tmux.sock" send-keys -t top Down
	wait_for 10 selected_row "$B"
	tmux -S "$WORK/tmux.sock" send-keys -t top P l o w Enter
	# (-p's note: B was started without a priority, so it yields through the agent's guard,
	# which the command says and starts)
	wait_for 10 tmux_shows "note: pid $B was started without a priority"
	wait_for 10 eval 'tmux_screen | grep -qE "^[A-Z] +$B +[^ ]+ +0 +- +low "'
	# What -p refuses shows as its reason, and changes nothing.
	tmux -S "$WORK/tmux.sock" send-keys -t top k p 9 9 9 Enter
	wait_for 10 tmux_shows "TPC 999 does not exist"
	eq "$("$NVT" -p -c "$A")" "pid $A's current TPC list: 60-63" "A after a refused change"
	tmux -S "$WORK/tmux.sock" send-keys -t top q
	wait_for 10 tmux_shows "top-ended=0"
	tmux -S "$WORK/tmux.sock" kill-server
	stop_loop ta "$A"
	stop_loop tb "$B"
	stop_agents
}

# The task a prompt (p, P) was opened for ends while the words are typed: the prompt closes and
# says so; the words go to no other task (before, the selection moved to the next row, another
# user's task maybe, and Enter changed that one: root's top moved a task of another user).
t_top_prompt_task_gone() {
	local b_tpcs
	command -v tmux >/dev/null || skip "needs tmux (Debian: tmux) to run top in a terminal"
	two_tasks
	b_tpcs=$("$NVT" -p -c "$B")
	printf 'set -g remain-on-exit on\nset -g status off\n' >"$WORK/tmux.conf"
	tmux -S "$WORK/tmux.sock" -f "$WORK/tmux.conf" new-session -d -s top -x 160 -y 40 \
		"$NVT top -o pid -d 0.3; echo top-ended=\$?; exec sleep 600"
	wait_for 20 tmux_shows "sort: pid"
	wait_for 10 selected_row "$A"
	tmux -S "$WORK/tmux.sock" send-keys -t top p 6 0 - 6 3
	wait_for 10 tmux_shows "TPC list for pid $A (Enter sets it, Esc cancels): 60-63_"
	stop_loop ta "$A"
	wait_for 10 tmux_shows "pid $A ended: nothing changed"
	tmux_shows "for pid $B" && die "the prompt moved to pid $B: $(tmux_screen)"
	# Enter, then q: once top has ended, it has handled the Enter (keys are read in order, and
	# a change top gives is made before its next key is read).
	tmux -S "$WORK/tmux.sock" send-keys -t top Enter q
	wait_for 10 tmux_shows "top-ended=0"
	eq "$("$NVT" -p -c "$B")" "$b_tpcs" "B after its neighbour's prompt"
	tmux -S "$WORK/tmux.sock" kill-server
	stop_loop tb "$B"
}
t_top_prompt_task_gone_before_a_frame() {
	# A task that ends after the last frame, its words typed: Enter gives them to nobody
	# (top looks at the PID's start time first; a PID reused since would be another task).
	command -v tmux >/dev/null || skip "needs tmux (Debian: tmux) to run top in a terminal"
	two_tasks
	printf 'set -g remain-on-exit on\nset -g status off\n' >"$WORK/tmux.conf"
	tmux -S "$WORK/tmux.sock" -f "$WORK/tmux.conf" new-session -d -s top -x 160 -y 40 \
		"$NVT top -o pid -d 3600; echo top-ended=\$?; exec sleep 600"
	wait_for 20 tmux_shows "sort: pid"
	wait_for 10 selected_row "$A"
	tmux -S "$WORK/tmux.sock" send-keys -t top p 6 0 - 6 3
	wait_for 10 tmux_shows "TPC list for pid $A (Enter sets it, Esc cancels): 60-63_"
	stop_loop ta "$A"
	tmux -S "$WORK/tmux.sock" send-keys -t top Enter
	wait_for 10 tmux_shows "pid $A ended: nothing changed"
	tmux_shows "No such process" && die "-p ran for the ended task: $(tmux_screen)"
	tmux -S "$WORK/tmux.sock" send-keys -t top q
	wait_for 10 tmux_shows "top-ended=0"
	tmux -S "$WORK/tmux.sock" kill-server
	stop_loop tb "$B"
}

# ---- --metrics ------------------------------------------------------------------------

# -l --json, top -b and --metrics read what runs through one view: task by task they name the same
# tasks with the same user, priority, state and TPCs (current, own, borrowed), and launches that
# only grow from one reading to the next.
t_viewers_agree() {
	lending_pair
	two_tasks
	"$NVT" -l --json >"$WORK/agree.json"
	"$NVT" --metrics >"$WORK/agree.metrics"
	"$NVT" top -b -n 1 >"$WORK/agree.top"
	python3 - "$WORK/agree.json" "$WORK/agree.metrics" "$WORK/agree.top" "$HI $LO $A $B" <<'PY' ||
import json, re, sys
lst = {t["pid"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
met = {}
for line in open(sys.argv[2]):
    m = re.match(r'^(nvtaskset_task_\w+)\{(.*)\} (\S+)$', line)
    if not m:
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    t = met.setdefault(int(labels["pid"]), {"labels": labels})
    if m.group(1) == "nvtaskset_task_state":
        if m.group(3) == "1":
            t["state"] = labels["state"]
    else:
        t[m.group(1)] = float(m.group(3))
top = {}
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) > 9 and re.fullmatch(r'[A-Z#]', f[0]) and f[1].isdigit():
        top[int(f[1])] = {"user": f[2], "prio": f[5], "state": f[6], "tpcs": int(f[7]), "borrowed": int(f[8])}
want = {int(p) for p in sys.argv[4].split()}
assert set(lst) == set(met) == set(top) == want, (sorted(lst), sorted(met), sorted(top), sorted(want))
def count(text):
    n = 0
    for part in text.split(","):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n
for pid in sorted(want):
    l, m, t = lst[pid], met[pid], top[pid]
    g = l["gpus"][0]
    own = count(g["own_tpcs"]) if g["own_tpcs"] else g["tpc_count"]
    assert l["user"] == m["labels"]["user"] and l["user"][:9] == t["user"], (pid, l["user"], m, t)
    assert (g["priority"] or "") == m["labels"]["priority"] == (t["prio"] if t["prio"] != "-" else ""), (pid, g, m, t)
    assert g["tpc_count"] == m["nvtaskset_task_tpcs"] == t["tpcs"], (pid, g["tpc_count"], m, t)
    assert own == m["nvtaskset_task_own_tpcs"], (pid, own, m)
    assert g["tpc_count"] - own == m["nvtaskset_task_borrowed_tpcs"] == t["borrowed"], (pid, g, m, t)
    assert l["launches"] <= m["nvtaskset_task_launches_total"], (pid, l["launches"], m)
    if g["priority"]:
        assert g["mode"] == m.get("state") == t["state"], (pid, g["mode"], m.get("state"), t["state"])
    else:
        assert g["mode"] is None and "state" not in m and t["state"] == "-", (pid, g["mode"], m, t)
PY
		die "the viewers disagree: $(cat "$WORK/agree.json" "$WORK/agree.metrics" "$WORK/agree.top")"
	end_lending_pair
	stop_loop ta "$A"
	stop_loop tb "$B"
}

t_metrics_text() {
	local out dead seg
	lending_pair
	two_tasks
	run_rc out rc "$NVT" --metrics
	eq "$rc" 0 "$out"
	eq "$(sample nvtaskset_task_tpcs "$A" <<<"$out")" 8 "A's TPCs"
	eq "$(sample nvtaskset_task_sms "$A" <<<"$out")" 16 "A's SMs"
	eq "$(sample nvtaskset_task_tpcs "$LO" <<<"$out")" 34 "the borrower's TPCs"
	eq "$(sample nvtaskset_task_own_tpcs "$LO" <<<"$out")" 30 "the borrower's own TPCs"
	eq "$(sample nvtaskset_task_borrowed_tpcs "$LO" <<<"$out")" 4 "TPCs borrowed"
	[ "$(sample nvtaskset_task_launches_total "$A" <<<"$out")" -gt 0 ] || die "A launched nothing: $out"
	# Waits only for tasks with a priority; states one-hot.
	eq "$(sample nvtaskset_task_waits_total "$A" <<<"$out")" "" "waits of a task without a priority"
	[ -n "$(sample nvtaskset_task_waits_total "$LO" <<<"$out")" ] || die "no waits for $LO: $out"
	has "$out" "pid=\"$LO\",user=\"$ME\",command=\"fakeapp-dlopen\",container=\"\",slurm_job=\"\",priority=\"low\",state=\"borrowing\"} 1"
	has "$out" "pid=\"$HI\",user=\"$ME\",command=\"fakeapp-dlopen\",container=\"\",slurm_job=\"\",priority=\"high\",state=\"lending\"} 1"
	eq "$(grep -c "^nvtaskset_task_state{[^}]*pid=\"$LO\".*} 1$" <<<"$out")" 1 "states at 1"
	has "$out" "nvtaskset_agent_up{uid=\"$(id -u)\",user=\"$ME\"} 1"
	has "$out" "nvtaskset_mps_daemon_up{pipe_directory=\"$CUDA_MPS_PIPE_DIRECTORY\",priority=\"\"} 0"
	has "$out" 'nvtaskset_tasks 4'
	# GPC 0 borrowed, GPCs 1 and 3-4 the plain tasks', GPCs 5-11 the low one's: GPC 2 is free.
	grep -qE '^nvtaskset_gpu_free_tpcs\{gpu="0",UUID="GPU-[0-9a-f-]+"\} 8$' <<<"$out" || die "free: $out"
	grep -qE '^nvtaskset_gpu_borrowed_tpcs\{gpu="0",UUID="GPU-[0-9a-f-]+"\} 4$' <<<"$out" || die "$out"
	# Each family's HELP and TYPE once.
	eq "$(grep '^# TYPE ' <<<"$out" | sort | uniq -d)" "" "families named twice"
	end_lending_pair
	# A dead task's segment is left as it is: the viewers tidy nothing (-l does).
	dead=$A
	seg=$(seg_file "$dead")
	kill -KILL "$dead"
	wait "$dead" 2>/dev/null || true
	[ -e "$seg" ] || die "no segment left by the killed task"
	run_rc out rc "$NVT" --metrics
	eq "$rc" 0
	[ -e "$seg" ] || die "--metrics removed a dead task's segment"
	hasnt "$out" "pid=\"$dead\""
	run_rc out rc "$NVT" top -b -n 1
	[ -e "$seg" ] || die "top removed a dead task's segment"
	run_rc out rc "$NVT" -l
	[ -e "$seg" ] && die "-l left the dead task's segment (the check above needs it to tidy)"
	stop_loop tb "$B"
}

# An agent is shown where it runs, or where a task needs one (--yield guard) and none runs:
# never on a node where no task needs one (an alert on nvtaskset_agent_up == 0 fires there).
t_metrics_agent_only_where_wanted() {
	local out uid
	uid=$(id -u)
	run_rc out rc "$NVT" --metrics
	eq "$rc" 0 "$out"
	hasnt "$out" "nvtaskset_agent_up{"
	has "$out" "# TYPE nvtaskset_agent_up gauge"
	run_rc out rc "$NVT" top -b -n 1
	has "$out" "agents: none  MPS:"
	# A priority that yields by its shim (the default, client) needs no agent.
	start_loop ph "$NVT" --no-mps --priority high -g 1 "$APP"
	PH=$PID
	wait_file "$WORK/ph.state" "1,9,17,25,32,39,46,53"
	run_rc out rc "$NVT" --metrics
	hasnt "$out" "nvtaskset_agent_up{"
	run_rc out rc "$NVT" top -b -n 1
	has "$out" "agents: none  MPS:"
	# A guard task with its agent: 1; the agent gone: 0, and top says it is needed.
	start_agent ag -- --hold 100 --poll 500
	start_loop pg "$NVT" --no-mps --priority low --yield guard -g 5-11 "$APP"
	PG=$PID
	# ph launches all the time: the agent guards pg to 8 TPCs (its default guard) away from
	# ph's GPC, packed into GPC 5 (its first launch may still run on all of GPCs 5-11).
	wait_file "$WORK/pg.state" "5,13,21,29,36,43,50,57"
	run_rc out rc "$NVT" --metrics
	has "$out" "nvtaskset_agent_up{uid=\"$uid\",user=\"$ME\"} 1"
	eq "$(grep -c '^nvtaskset_agent_up{' <<<"$out")" 1 "agents shown: $out"
	stop_agent "$AGENT"
	run_rc out rc "$NVT" --metrics
	has "$out" "nvtaskset_agent_up{uid=\"$uid\",user=\"$ME\"} 0"
	eq "$(grep -c '^nvtaskset_agent_up{' <<<"$out")" 1 "agents shown: $out"
	run_rc out rc "$NVT" top -b -n 1
	has "$out" "agents: $ME's needed, not running  MPS:"
	stop_loop pg "$PG"
	stop_loop ph "$PH"
}

# top's header names the agents' users as its rows do, through terminal_text: a user whose
# name carries terminal escapes (in a password database of the test's own, bound over
# /etc/passwd for top alone) is shown with a '?' for each.
t_top_agent_user_no_terminal_escapes() {
	[ "$(id -u)" == 0 ] || skip "needs root to bind a password database over /etc/passwd"
	unshare --mount --propagation private true 2>/dev/null || skip "cannot unshare a mount namespace"
	local out
	start_agent ag -- --hold 100 --poll 500
	start_loop pg "$NVT" --no-mps --priority low --yield guard -g 5-11 "$APP"
	wait_file "$WORK/pg.state" "5-7,13-15,21-23,29-31,36-38,43-45,50-52,57-65" # (GPCs 5-11)
	stop_agent "$AGENT"
	{ printf '%s:x:%s:%s::/:/bin/sh\n' "$ESCAPING_NAME" "$(id -u)" "$(id -g)"; cat /etc/passwd; } >"$WORK/passwd"
	unshare --mount --propagation private sh -c 'mount --bind "$1" /etc/passwd && shift && exec "$@"' \
		_ "$WORK/passwd" "$NVT" top -b -n 1 >"$WORK/top.out" 2>&1
	has "$(cat "$WORK/top.out")" "agents: t?]0;owned??]52;c;aGk=???2J?x's needed, not running  MPS:"
	no_terminal_escapes "$WORK/top.out"
	stop_loop pg "$PID"
}

t_metrics_promtool() {
	local out prog odd esc
	command -v promtool >/dev/null || skip "needs promtool (Debian: prometheus) to check the format"
	# A program whose name needs escaping in a label: quote, backslash, a byte that is not UTF-8;
	# and one whose terminal escapes go out as '?'.
	prog=$WORK/$'we"ird\\name\xff'
	ln -s "$APP" "$prog"
	start_loop odd "$NVT" --no-mps -g 1 "$prog"
	odd=$PID
	wait_file "$WORK/odd.state" "1,9,17,25,32,39,46,53"
	ln -s "$APP" "$WORK/$ESCAPING_NAME"
	start_loop esc "$NVT" --no-mps -g 2 "$WORK/$ESCAPING_NAME"
	esc=$PID
	wait_file "$WORK/esc.state" "2,10,18,26,33,40,47,54"
	lending_pair
	run_rc out rc "$NVT" --metrics
	eq "$rc" 0
	has "$out" 'command="we\"ird\\name'$'\xef\xbf\xbd''"'
	has "$out" "$ESCAPING_LABEL"
	printf '%s\n' "$out" >"$WORK/metrics.prom"
	run_rc out rc promtool check metrics <"$WORK/metrics.prom"
	eq "$rc" 0 "promtool check metrics: $out"
	end_lending_pair
	stop_loop esc "$esc"
	stop_loop odd "$odd"
}

# A program named to take over a terminal: a window title (OSC 0), the clipboard (OSC 52), BEL,
# DEL, C1's CSI as UTF-8 (clear the screen), a text-direction override.
ESCAPING_NAME=$'t\e]0;owned\a\e]52;c;aGk=\a\x7f\xc2\x9b2J\xe2\x80\xaex'
# What ESCAPING_NAME is as a label value: each of those characters a '?'.
ESCAPING_LABEL='command="t?]0;owned??]52;c;aGk=???2J?x"'
# no_terminal_escapes FILE: FILE holds no control but newline, no C1 (as UTF-8), no
# text-direction override or isolate.
no_terminal_escapes() {
	python3 - "$1" <<'PY' || die "terminal escapes in $1"
import re, sys
text = open(sys.argv[1], "rb").read()
bad = re.findall(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]", text)
if bad:
    sys.exit("%d escapes: %r" % (len(bad), sorted(set(bad))))
PY
}

t_metrics_no_terminal_escapes() {
	local out
	ln -s "$APP" "$WORK/$ESCAPING_NAME"
	start_loop odd "$NVT" --no-mps -g 1 "$WORK/$ESCAPING_NAME"
	wait_file "$WORK/odd.state" "1,9,17,25,32,39,46,53"
	run_rc out rc "$NVT" --metrics
	eq "$rc" 0 "$out"
	printf '%s\n' "$out" >"$WORK/metrics.prom"
	has "$out" "pid=\"$PID\",user=\"$ME\",$ESCAPING_LABEL"
	no_terminal_escapes "$WORK/metrics.prom"
	stop_loop odd "$PID"
}

t_metrics_usage() {
	local out
	for bad in "--metrics -l" "--metrics --json" "--metrics extra" "--metrics --gpu 0" \
		"--metrics --exporter 1" "--exporter 1 -p" "--svg x" "-p --svg x 1" "-l --svg x --json" \
		"-l --launched --svg x"; do
		# shellcheck disable=SC2086 # the words
		run_rc out rc "$NVT" $bad
		eq "$rc" 1 "nvtaskset $bad: $out"
		has "$out" "Try 'nvtaskset --help' for more information."
	done
	for bad in "host.example:80" "::1:80" "65536" ":80" "[::1]"; do
		run_rc out rc "$NVT" --exporter "$bad"
		eq "$rc" 1 "--exporter $bad: $out"
		has "$out" "nvtaskset: --exporter: "
	done
}

# metrics_to_full: --metrics into a full disk (/dev/full): exit 1, and why on stderr.
metrics_to_full() {
	local rc
	"$NVT" --metrics >/dev/full 2>"$WORK/full.err" && rc=0 || rc=$?
	eq "$rc" 1 "--metrics >/dev/full: $(cat "$WORK/full.err")"
	eq "$(cat "$WORK/full.err")" "nvtaskset: write error: No space left on device"
}
t_metrics_write_error_says_why() {
	# A --metrics that cannot write its text says why, whether the text is shorter than
	# stdio's buffer or longer (then an early write failed, whose reason a flush at exit no
	# longer knows).
	local a b
	[ -c /dev/full ] || skip "needs /dev/full"
	metrics_to_full
	start_loop wa "$NVT" --no-mps -g 1 "$APP"
	a=$PID
	start_loop wb "$NVT" --no-mps -g 2 "$APP"
	b=$PID
	wait_file "$WORK/wa.state" "1,9,17,25,32,39,46,53"
	wait_file "$WORK/wb.state" "2,10,18,26,33,40,47,54"
	[ "$("$NVT" --metrics | wc -c)" -gt "$(stat -c %o /dev/full)" ] || die "a text of two tasks fits stdio's buffer"
	metrics_to_full
	stop_loop wa "$a"
	stop_loop wb "$b"
}

# mps_up TEXT PIPE PRIORITY: the value of nvtaskset_mps_daemon_up of that daemon in TEXT.
mps_up() {
	grep -F "nvtaskset_mps_daemon_up{pipe_directory=\"$2\",priority=\"$3\"} " <<<"$1" | awk '{print $NF}'
}
# The MPS daemons in the metrics, --metrics' and the exporter's: the shared one always (priority
# empty), a priority level's own where it runs, and once one was started there, 0 when stopped.
t_metrics_mps_level_daemons() {
	local out text
	own_mps_dirs lvl
	PATH=$FAKEBIN:$PATH
	run_rc out rc "$NVT" --metrics
	eq "$(mps_up "$out" "$CUDA_MPS_PIPE_DIRECTORY" "")" 0 "the shared daemon before: $out"
	eq "$(grep -c '^nvtaskset_mps_daemon_up{' <<<"$out")" 1 "daemons before: $out"
	# A time-sliced task at low joins (and starts) the low level's daemon.
	run_rc out rc "$NVT" --priority low --yield slice "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	run_rc out rc "$NVT" --metrics
	eq "$rc" 0 "$out"
	eq "$(mps_up "$out" "$CUDA_MPS_PIPE_DIRECTORY-low" low)" 1 "the low level's daemon: $out"
	eq "$(mps_up "$out" "$CUDA_MPS_PIPE_DIRECTORY" "")" 0 "the shared daemon: $out"
	eq "$(grep -c '^nvtaskset_mps_daemon_up{' <<<"$out")" 2 "daemons shown: $out"
	if [ -x "$RUN/build/lib/nvtaskset/nvtaskset-exporter" ]; then
		exporter_start 0
		text=$(get /metrics | sed '1,/^\r\?$/d')
		eq "$(mps_up "$text" "$CUDA_MPS_PIPE_DIRECTORY-low" low)" 1 "the exporter's low level: $text"
		eq "$(mps_up "$text" "$CUDA_MPS_PIPE_DIRECTORY" "")" 0 "the exporter's shared daemon: $text"
		exporter_stop
	fi
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 0 "--mps stop: $out"
	run_rc out rc "$NVT" --metrics
	eq "$(mps_up "$out" "$CUDA_MPS_PIPE_DIRECTORY-low" low)" 0 "the low level's daemon stopped: $out"
}

# ---- -l --svg --------------------------------------------------------------------------------

# svg_check FILE HI LO: the map of lending_pair's tasks, as XML (their TPCs by prio.sh's tpcs_of).
svg_check() {
	python3 - "$1" "$2" "$3" "$(tpcs_of 0,8,16,24 | tr '\n' ' ')" "$(tpcs_of "$GPCS_5_11" | tr '\n' ' ')" "$ME" \
		<<'PY' || die "the SVG: $(head -c 3000 "$1")"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
hi, lo = sys.argv[2], sys.argv[3]
high, low = set(map(int, sys.argv[4].split())), set(map(int, sys.argv[5].split()))
texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
cells = root.findall(".//s:g[@class='tpc']", ns)
assert len(cells) == 66, len(cells)
for g in range(12):
    assert "GPC %d" % g in texts, g
legend = [t for t in texts if " \u00b7 pid " in t]
me = sys.argv[6]
assert any(t.startswith("A \u00b7 pid %s \u00b7 %s \u00b7 high, lending \u00b7 4 TPCs" % (hi, me)) for t in legend), legend
assert any(t.startswith("B \u00b7 pid %s \u00b7 %s \u00b7 low, borrowing \u00b7 30 TPCs, borrows 4" % (lo, me)) for t in legend), legend
# GPC 0's TPCs are A's, hatched for B (b); GPCs 5-11 B's; the others free, nothing on them.
for g in cells:
    tpc = int(g.get("data-tpc"))
    hatched = any(r.get("fill", "").startswith("url(#lent") for r in g.findall("s:rect", ns))
    assert hatched == (tpc in high), (tpc, hatched)
    words = ["".join(t.itertext()) for t in g.findall("s:text", ns)]
    assert words[0] == str(tpc), (tpc, words)
    want = ["A", "b"] if tpc in high else ["B"] if tpc in low else []
    assert words[1:] == want, (tpc, words)
assert root.get("width") and root.get("height")
PY
}

t_svg_map() {
	local out odd
	lending_pair
	run_rc out rc "$NVT" -l --svg "$WORK/map.svg"
	eq "$rc" 0 "$out"
	eq "$out" "" "-l --svg's output"
	svg_check "$WORK/map.svg" "$HI" "$LO"
	# A command with markup and bytes that are not UTF-8 in it stays text (escaped): the
	# picture still parses, and its legend names it.
	ln -s "$APP" "$WORK/"$'<b a="1">&amp;\xff'
	start_loop odd "$NVT" --no-mps -g 1 "$WORK/"$'<b a="1">&amp;\xff'
	odd=$PID
	wait_file "$WORK/odd.state" "1,9,17,25,32,39,46,53"
	run_rc out rc "$NVT" -l --svg "$WORK/odd.svg"
	eq "$rc" 0 "$out"
	python3 - "$WORK/odd.svg" "$odd" <<'PY' || die "the SVG with markup in a command: $(grep -a "pid $odd" "$WORK/odd.svg")"
import sys, xml.etree.ElementTree as ET
texts = ["".join(t.itertext()) for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text")]
assert any(("pid %s " % sys.argv[2]) in t and '<b a="1">&amp;\ufffd loop' in t for t in texts), texts
PY
	stop_loop odd "$odd"
	# To standard output with '-'.
	timeout "$HANG" "$NVT" -l --svg - >"$WORK/map2.svg"
	svg_check "$WORK/map2.svg" "$HI" "$LO"
	run_rc out rc "$NVT" -l --svg "$WORK/no/such/dir/map.svg"
	eq "$rc" 1
	has "$out" "nvtaskset: cannot write $WORK/no/such/dir/map.svg: No such file or directory"
	end_lending_pair
}

# map_cells TOP_FRAME: the map's cells that are not free, in order.
map_cells() {
	grep -E '^  GPC [0-9]+ ' <<<"$1" | sed -E 's/^  GPC [0-9]+ +//' | tr -s ' ' '\n' | grep -v '^\.*$' |
		tr '\n' ' ' | sed 's/ $//'
}
# One user's task started on its own on the very TPCs of another of hers (two starts of -n 8
# take the same TPCs): top and the SVG show an overlap, as -l's Overlap line does; a program's
# forked child on its parent's partition is that partition's holder all the same.
t_viewers_unrelated_tasks_same_tpcs() {
	local out parent child un letters
	rm -f "$WORK/fk.stop"
	"$NVT" --no-mps -c 0-3 "$APP" fork "$WORK/fk.stop" "$WORK/fk" >"$WORK/fk.out" 2>&1 &
	parent=$!
	wait_file "$WORK/fk.parent" "0-3"
	wait_file "$WORK/fk.child" "0-3"
	child=$(cat "$WORK/fk.childpid")
	run_rc out rc "$NVT" top -b -n 1
	eq "$rc" 0 "top -b: $out"
	# (TPCs 0-3 are the first of GPCs 0-3 on the fake H100's map.)
	eq "$(map_cells "$out")" "A A A A" "a parent and its child are one holder: $out"
	start_loop un "$NVT" --no-mps -c 0-3 "$APP"
	un=$PID
	wait_file "$WORK/un.state" "0-3"
	run_rc out rc "$NVT" top -b -n 1
	eq "$rc" 0 "top -b: $out"
	eq "$(map_cells "$out")" "A! A! A! A!" "an overlap on the map: $out"
	letters=$(awk '$1 ~ /^[A-Z]$/ && $2 ~ /^[0-9]+$/ {print $2, $1}' <<<"$out" | sort -n | tr '\n' ' ')
	eq "$letters" "$parent A $child A $un B " "the rows' holders"
	run_rc out rc "$NVT" -l --svg "$WORK/same.svg"
	eq "$rc" 0 "$out"
	grep -q '#d00000' "$WORK/same.svg" || die "no red outline in the SVG"
	grep -q ">A!<" "$WORK/same.svg" || die "no A! in the SVG: $(grep -o '>[A-Z]!*<' "$WORK/same.svg" | sort | uniq -c)"
	stop_loop un "$un"
	touch "$WORK/fk.stop"
	wait "$parent" || die "fork app failed: $(cat "$WORK/fk.out")"
}

# A command with U+FFFE and U+FFFF, UTF-8 that XML 1.0 has no place for: the picture still
# parses, each a space in the legend.
t_svg_xml_noncharacters() {
	local odd
	ln -s "$APP" "$WORK/"$'a\xef\xbf\xbeb\xef\xbf\xbfc'
	start_loop odd "$NVT" --no-mps -g 1 "$WORK/"$'a\xef\xbf\xbeb\xef\xbf\xbfc'
	odd=$PID
	wait_file "$WORK/odd.state" "1,9,17,25,32,39,46,53"
	run_rc out rc "$NVT" -l --svg "$WORK/odd.svg"
	eq "$rc" 0 "$out"
	python3 - "$WORK/odd.svg" "$odd" <<'PY' || die "the SVG with U+FFFE and U+FFFF in a command: $(grep -a "pid $odd" "$WORK/odd.svg")"
import sys, xml.etree.ElementTree as ET
texts = ["".join(t.itertext()) for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text")]
assert any(("pid %s " % sys.argv[2]) in t and "/a b c" in t for t in texts), texts
PY
	stop_loop odd "$odd"
}

# A task's slot that says its GPU has 4294967295 GPCs (its user may write any topology into
# her own segment) is no map of the GPU for the viewers: -l --svg and top draw the GPU's map
# from the cache, at once.
t_viewers_slot_topology_bounded() {
	local seg
	start_loop seg "$NVT" --no-mps -g 1 "$APP"
	seg=$PID
	wait_file "$WORK/seg.state" "1,9,17,25,32,39,46,53"
	"$T/segpoke" "$seg" gpcs 4294967295
	run_rc out rc "$NVT" -l --svg "$WORK/map.svg"
	eq "$rc" 0 "-l --svg beside a slot of 4294967295 GPCs: $out"
	has "$(cat "$WORK/map.svg")" ">GPC 11</text>"
	hasnt "$(cat "$WORK/map.svg")" ">GPC 12</text>"
	run_rc out rc "$NVT" top -b -n 1
	eq "$rc" 0 "top beside a slot of 4294967295 GPCs: $out"
	has "$out" "GPC 11"
	hasnt "$out" "GPC 12"
	# (its user column may be cut: top gives a user 9 characters)
	grep -qE "^A +$seg " <<<"$out" || die "no row of task $seg in top: $out"
	stop_loop seg "$seg"
}

# A task's slot whose map is valid but false (every TPC in one GPC: her segment may say so)
# decides nothing the viewers draw: the GPU's map from the cache (root's and the viewer's own
# calibration records) comes first, as long as it has one.
t_viewers_slot_false_map_not_taken() {
	local seg
	start_loop seg "$NVT" --no-mps -g 1 "$APP"
	seg=$PID
	wait_file "$WORK/seg.state" "1,9,17,25,32,39,46,53"
	"$T/segpoke" "$seg" onegpc
	run_rc out rc "$NVT" -l --svg "$WORK/map.svg"
	eq "$rc" 0 "-l --svg beside a slot of one GPC: $out"
	has "$(cat "$WORK/map.svg")" ">GPC 11</text>"
	run_rc out rc "$NVT" top -b -n 1
	eq "$rc" 0 "top beside a slot of one GPC: $out"
	has "$out" "GPC 11"
	stop_loop seg "$seg"
}

# A task's segment that names one GPU in two slots (its user may write so; the shim never does):
# every viewer shows the task once on that GPU, with the first slot's TPCs, as its metrics do.
t_viewers_one_row_a_gpu() {
	local twice out rows
	start_loop twice "$NVT" --no-mps -g 1 "$APP"
	twice=$PID
	wait_file "$WORK/twice.state" "1,9,17,25,32,39,46,53"
	"$T/segpoke" "$twice" twice 0-3 || die "segpoke $twice twice"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l: $out"
	rows=$(grep -E "^ *$twice " <<<"$out") || die "-l lost $twice: $out"
	grep -Eq "$(row_re "$twice" "$ME")1,9,17,25,32,39,46,53 " <<<"$rows" ||
		die "-l's row of $twice is not its first slot's, on GPU 0 alone: $out"
	eq "$(wc -l <<<"$rows")" 1 "-l's rows of $twice ($out)"
	"$NVT" -l --json >"$WORK/twice.json"
	python3 - "$WORK/twice.json" "$twice" <<'PY' || die "-l --json: $(cat "$WORK/twice.json")"
import json, sys
task = [t for t in json.load(open(sys.argv[1]))["tasks"] if t["pid"] == int(sys.argv[2])]
assert len(task) == 1, task
gpus = task[0]["gpus"]
assert len(gpus) == 1 and gpus[0]["tpcs"] == "1,9,17,25,32,39,46,53", gpus
PY
	run_rc out rc "$NVT" top -b -n 1
	eq "$rc" 0 "top: $out"
	eq "$(awk -v p="$twice" '$2 == p' <<<"$out" | wc -l)" 1 "top's rows of $twice ($out)"
	out=$("$NVT" --metrics)
	eq "$(sample nvtaskset_task_tpcs "$twice" <<<"$out")" 8 "its metrics' TPCs"
	stop_loop twice "$twice"
}

# stallme_task: starts a task whose program is named stallme, which stallread.so's readers stall
# on (a read of its command line or environment waits until the reader is killed), and one
# named as usual; sets STALLED and A.
stallme_task() {
	ln -s "$APP" "$WORK/stallme"
	start_loop stall "$NVT" --no-mps -g 1 "$WORK/stallme"
	STALLED=$PID
	start_loop ta "$NVT" --no-mps -g 3-4 "$APP"
	A=$PID
	wait_file "$WORK/stall.state" "1,9,17,25,32,39,46,53"
	wait_file "$WORK/ta.state" "3-4,11-12,19-20,27-28,34-35,41-42,48-49,55-56"
}
# "${STALLING[@]}" CMD...: runs CMD with reads of stallme's memory stalled, each stall logged
# (tests/fake/stallread.c), within a scrape's time.
stalling_within_a_scrape() {
	STALLING=(timeout "$(scrape_timeout)" env LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme
		STALLREAD_LOG="$WORK/stalls")
}
# stalls_seen: how many reads stallread.so has stalled (each in a child of a viewer's).
stalls_seen() { grep -c "^stalled $STALLED " "$WORK/stalls" 2>/dev/null || echo 0; }

# A read of a task's command line that never returns (its user can back the memory it reads by
# a FUSE file she never answers) stalls none of -l, -l --json, top and --metrics: each ends
# within a scrape's time (a stalled read costs 0.2 s), shows the other task whole, and names the
# stalled one as the kernel does (its comm), without a command line.
t_viewers_beside_stalled_reads() {
	local out n
	stallme_task
	stalling_within_a_scrape
	run_rc out rc "${STALLING[@]}" "$NVT" -l
	eq "$rc" 0 "-l beside a stalled read: $out"
	grep -Eq "$(row_re "$STALLED" "$ME")1,9,17,25,32,39,46,53 +stallme$" <<<"$out" || die "-l's row of $STALLED: $out"
	grep -Eq "$(row_re "$A" "$ME").* $APP loop $WORK/ta.stop" <<<"$out" || die "-l's row of $A: $out"
	[ "$(stalls_seen)" -ge 1 ] || die "no read stalled: $(cat "$WORK/stalls" 2>&1)"
	"${STALLING[@]}" "$NVT" -l --json >"$WORK/stall.json" || die "-l --json beside a stalled read"
	python3 - "$WORK/stall.json" "$STALLED" "$A" <<'PY' || die "-l --json: $(cat "$WORK/stall.json")"
import json, sys
tasks = {t["pid"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
assert tasks[int(sys.argv[2])]["command"] is None, tasks
assert " loop " in tasks[int(sys.argv[3])]["command"], tasks
PY
	run_rc out rc "${STALLING[@]}" "$NVT" top -b -n 2 -d 0.1
	eq "$rc" 0 "top beside a stalled read: $out"
	has "$out" " stallme"
	run_rc out rc "${STALLING[@]}" "$NVT" --metrics
	eq "$rc" 0 "--metrics beside a stalled read: $out"
	has "$out" "pid=\"$STALLED\",user=\"$ME\",command=\"stallme\",container=\"\",slurm_job=\"\""
	has "$out" "pid=\"$A\",user=\"$ME\",command=\"fakeapp-dlopen\""
	# (A read each run at least: top's second frame reads the task again only if the child
	# left in its first frame's read has ended, killed, by then.)
	n=$(stalls_seen)
	[ "$n" -ge 4 ] || die "$n stalled reads for 4 viewers' runs: $(cat "$WORK/stalls")"
	stop_loop stall "$STALLED"
	stop_loop ta "$A"
}

# A view reads a task's command line once: its words, and whether the task is a slurmstepd
# (its Slurm step: one titled so is seen to be), come from the one read (each read waits for
# the task's memory map's lock).
t_viewers_read_command_line_once() {
	local out viewer stepd
	stallme_task
	# shellcheck disable=SC2016 # the task's shell expands them
	start_loop sd "$NVT" --no-mps -g 5 bash -c 'exec -a "slurmstepd: [12.0]" "$0" "$@"' "$APP"
	stepd=$PID
	wait_file "$WORK/sd.state" "5,13,21,29,36,43,50,57"
	for viewer in -l --metrics; do
		rm -f "$WORK/opens"
		run_rc out rc env LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme STALLREAD_FILES=none \
			STALLREAD_OPENS="$WORK/opens" "$NVT" "$viewer"
		eq "$rc" 0 "$viewer: $out"
		if [ "$viewer" == -l ]; then
			has "$out" "stallme loop $WORK/stall.stop"
		else
			has "$out" "pid=\"$STALLED\",user=\"$ME\",command=\"stallme\""
			has "$out" "pid=\"$stepd\",user=\"$ME\",command=\"slurmstepd: [12.0]\",container=\"\",slurm_job=\"12\""
		fi
		eq "$(grep -c "^open $STALLED cmdline$" "$WORK/opens")" 1 "$viewer's reads of its command line: $(cat "$WORK/opens")"
	done
	stop_loop sd "$stepd"
	stop_loop stall "$STALLED"
	stop_loop ta "$A"
}

# One user's stalled reads take nobody else's command line: two tasks of uid 65534's whose reads
# stall, then one of hers that does not (named by its comm: her tasks' stalls are spent) and
# one of root's, whose command line -l shows whole.
t_viewers_stalls_of_one_user() {
	need_users
	local out s1 s2 c
	ln -s "$APP" "$WORK/stallme"
	start_loop u/s1 $(as_user 65534) "$NVT" --no-mps -g 1 "$WORK/stallme"
	s1=$PID
	start_loop u/s2 $(as_user 65534) "$NVT" --no-mps -g 2 "$WORK/stallme"
	s2=$PID
	start_loop u/c $(as_user 65534) "$NVT" --no-mps -g 5 "$APP"
	c=$PID
	start_loop ta "$NVT" --no-mps -g 3-4 "$APP"
	A=$PID
	wait_file "$WORK/u/s1.state" "1,9,17,25,32,39,46,53"
	wait_file "$WORK/u/s2.state" "2,10,18,26,33,40,47,54"
	wait_file "$WORK/u/c.state" "5,13,21,29,36,43,50,57"
	wait_file "$WORK/ta.state" "3-4,11-12,19-20,27-28,34-35,41-42,48-49,55-56"
	stalling_within_a_scrape
	run_rc out rc "${STALLING[@]}" "$NVT" -l
	eq "$rc" 0 "-l beside stalled reads: $out"
	grep -Eq "$(row_re "$A" "$ME").* $APP loop $WORK/ta.stop" <<<"$out" || die "-l's row of root's $A: $out"
	grep -E "^ *$c " <<<"$out" | grep -Eq " fakeapp-dlopen$" || die "-l's row of 65534's $c: $out"
	eq "$(grep -c "^stalled \($s1\|$s2\) " "$WORK/stalls")" 2 "stalled reads: $(cat "$WORK/stalls")"
	stop_loop u/s1 "$s1"
	stop_loop u/s2 "$s2"
	stop_loop u/c "$c"
	stop_loop ta "$A"
}

# -p reads a task's environment (its start's MPS share, its priority's words) for its warnings:
# a task whose memory stalls that read does not stall -p, which moves it all the same.
t_pid_beside_stalled_environ() {
	local out
	stallme_task
	# (Its read waits 1 s at most, then -p goes on: 10 s, or the suite's hang time if longer,
	# tell a bounded wait from one that never ends on a busy machine.)
	run_rc out rc timeout "$(awk -v h="$HANG" 'BEGIN { print (h / 12 < 10 ? 10 : h / 12) }')" env \
		LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme STALLREAD_LOG="$WORK/stalls" \
		"$NVT" -p -g 2 "$STALLED"
	eq "$rc" 0 "-p beside a stalled read: $out"
	wait_file "$WORK/stall.state" "2,10,18,26,33,40,47,54"
	grep -q "^stalled $STALLED environ" "$WORK/stalls" || die "no read of its environ stalled: $(cat "$WORK/stalls" 2>&1)"
	stop_loop stall "$STALLED"
	stop_loop ta "$A"
}

# within_bound: a command's time limit that tells a read bounded at a second or so from one that
# never ends on a busy machine: 10 s, or the suite's hang time / 12 if longer.
within_bound() { awk -v h="$HANG" 'BEGIN { print (h / 12 < 10 ? 10 : h / 12) }'; }

# root_task_with_rival: root starts a task named stallme that becomes uid 65534 in the same
# process (its segment stays in root's run directory), and she writes a rival of that file into
# her own run directory (its header, hers): root's readers then read the task's maps to tell
# the two apart (nvt_seg_is_its), which stallread.so stalls (STALLREAD_FILES). Sets STALLED,
# ROOT_SEG (the task's segment) and RIVAL (hers).
root_task_with_rival() {
	need_users
	ln -s "$APP" "$WORK/stallme"
	start_loop u/sm "$NVT" --no-mps -g 1 "$WORK/stallme" setuid 65534
	STALLED=$PID
	wait_file "$WORK/u/sm.state" "1,9,17,25,32,39,46,53"
	RIVAL=$(seg_file "$STALLED")
	has "$RIVAL" "/nvtaskset-65534/"
	ROOT_SEG=$NVTASKSET_RUNDIR/nvtaskset-0/${RIVAL##*/}
	[ -f "$ROOT_SEG" ] || die "no segment $ROOT_SEG"
	write_rival "$ROOT_SEG" "$RIVAL"
	export STALLREAD_FILES="maps cmdline environ"
}

# Her own run directory holding a rival of root's segment of a task that became her, she can
# stall the read of the task's maps that tells them apart. Root's -l, --metrics, top and -p each
# end within their bound all the same (the read is made in a child, killed when it stalls): the
# task is counted unreadable, and said to be, where neither header can be trusted (hers may be
# forged, root's may be one the task no longer maps); -p changes nothing and says why; neither
# file is removed. Read without the stall, -l shows the task again and -p moves it.
t_viewers_beside_stalled_maps() {
	local out limit
	root_task_with_rival
	limit=$(within_bound)
	STALLING=(timeout "$limit" env LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme
		STALLREAD_LOG="$WORK/stalls")
	run_rc out rc "${STALLING[@]}" "$NVT" -l
	eq "$rc" 0 "-l beside a stalled read of maps: $out"
	has "$out" "pid $STALLED: which of its control segments it uses could not be told in time"
	grep -q "^stalled $STALLED maps" "$WORK/stalls" || die "no read of its maps stalled: $(cat "$WORK/stalls" 2>&1)"
	run_rc out rc "${STALLING[@]}" "$NVT" --metrics
	eq "$rc" 0 "--metrics beside a stalled read of maps: $out"
	has "$out" "nvtaskset_tasks_unreadable 1"
	run_rc out rc "${STALLING[@]}" "$NVT" top -b -n 1
	eq "$rc" 0 "top beside a stalled read of maps: $out"
	run_rc out rc "${STALLING[@]}" "$NVT" -p -g 2 "$STALLED"
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || die "-p beside a stalled read of maps: status $rc: $out"
	has "$out" "could not be told in time"
	[ -f "$ROOT_SEG" ] && [ -f "$RIVAL" ] || die "a segment file was removed: $(ls -l "$ROOT_SEG" "$RIVAL" 2>&1)"
	run_rc out rc "$NVT" -l
	grep -Eq "$(row_re "$STALLED" nobody)1,9,17,25,32,39,46,53 " <<<"$out" || die "-l's row of $STALLED: $out"
	run_rc out rc "$NVT" -p -g 2 "$STALLED"
	eq "$rc" 0 "-p: $out"
	wait_file "$WORK/u/sm.state" "2,10,18,26,33,40,47,54"
	stop_loop u/sm "$STALLED"
}

# Nor does it fail or free anything for root's claims (-n --exclude-running, as a container's
# start or a Slurm step claims): where the read comes late, every file that names the task holds
# its TPCs. The fake GPU has 66 TPCs and the task holds 8: 58 can be claimed, 59 cannot, and
# the claim ends within its bound.
t_claim_beside_stalled_maps() {
	local out rc limit
	root_task_with_rival
	limit=$(within_bound)
	STALLING=(timeout "$limit" env LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme
		STALLREAD_LOG="$WORK/stalls")
	run_rc out rc "${STALLING[@]}" "$NVT" --no-mps -n 58 --exclude-running true
	eq "$rc" 0 "a claim of the TPCs the task does not hold, beside a stalled read of its maps: $out"
	grep -q "^stalled $STALLED maps" "$WORK/stalls" || die "no read of its maps stalled: $(cat "$WORK/stalls" 2>&1)"
	run_rc out rc "${STALLING[@]}" "$NVT" --no-mps -n 59 --exclude-running true
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || die "a claim of the task's TPCs beside a stalled read of its maps: status $rc: $out"
	hasnt "$out" "cannot list the tasks"
	[ -f "$ROOT_SEG" ] && [ -f "$RIVAL" ] || die "a segment file was removed: $(ls -l "$ROOT_SEG" "$RIVAL" 2>&1)"
	stop_loop u/sm "$STALLED"
}

# Nor does a late read of maps fail another user's listing or claim, or free a task's TPCs, where
# her listing tells the tasks' files by their headers: two of root's tasks, each PID 2 of a PID
# namespace of its own (its PID 1 a shell: another test's task, PID 1 of its namespace, as B's
# user and started in the same clock tick, would fit B's header as well), A on TPCs 0-3 and B on 4-7, B become uid 65534, who wrote a rival of
# its file. User 65532, who may look into neither's namespace, reads B's maps in a child to tell
# its two files apart, and that read stalls (as one comes late under strace -f or on a loaded
# machine): her -l ends and lists A, her claim of the 58 TPCs that neither holds ends, and one of
# 59 is refused, its listing read.
t_user_beside_stalled_maps_in_namespaces() {
	need_users
	need_pidns
	local out rc jobs a b seg her
	ln -s "$APP" "$WORK/stallme"
	rm -f "$WORK"/u/na.* "$WORK"/u/nb.*
	# shellcheck disable=SC2016 # the shell's own "$@"
	unshare --pid --fork --mount-proc sh -c '"$@" & wait "$!"' sh "$NVT" --no-mps -c 0-3 "$WORK/stallme" \
		loop "$WORK/u/na.stop" "$WORK/u/na.state" >"$WORK/na.out" 2>&1 &
	jobs=$!
	wait_file "$WORK/u/na.state" 0-3
	# shellcheck disable=SC2016
	unshare --pid --fork --mount-proc sh -c '"$@" & wait "$!"' sh "$NVT" --no-mps -c 4-7 "$WORK/stallme" \
		setuid 65534 loop "$WORK/u/nb.stop" "$WORK/u/nb.state" >"$WORK/nb.out" 2>&1 &
	jobs="$jobs $!"
	wait_file "$WORK/u/nb.state" 4-7
	a=$(ns_init_of "$(ns_init_of "${jobs%% *}")")
	b=$(ns_init_of "$(ns_init_of "${jobs##* }")")
	seg=$(seg_file "$b")
	has "$seg" "/nvtaskset-65534/"
	write_rival "$NVTASKSET_RUNDIR/nvtaskset-0/${seg##*/}" "$seg"
	read -ra her <<<"$(as_user 65532)"
	STALLING=(timeout "$(within_bound)" env LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme
		STALLREAD_FILES=maps STALLREAD_LOG="$WORK/u/stalls" "${her[@]}" "$NVT")
	run_rc out rc "${STALLING[@]}" -l
	eq "$rc" 0 "her -l beside stalled reads of maps: $out"
	grep -Eq "$(row_re "$a" root)0-3 " <<<"$out" || die "her -l lost root's task $a: $out"
	grep -q "^stalled $b maps" "$WORK/u/stalls" || die "no read of B's maps stalled: $(cat "$WORK/u/stalls" 2>&1)"
	# (A's file has no rival: nothing to tell apart, its maps are not read.)
	! grep -q "^stalled $a " "$WORK/u/stalls" || die "A's maps were read: $(cat "$WORK/u/stalls")"
	run_rc out rc "${STALLING[@]}" --no-mps -n 58 --exclude-running true
	eq "$rc" 0 "her claim of the TPCs neither task holds, beside stalled reads of their maps: $out"
	run_rc out rc "${STALLING[@]}" --no-mps -n 59 --exclude-running true
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || die "her claim of a task's TPC beside stalled reads of maps: status $rc: $out"
	has "$out" "free of other tasks"
	touch "$WORK/u/na.stop" "$WORK/u/nb.stop"
	for a in $jobs; do
		wait "$a" || die "a task in a namespace failed: $(cat "$WORK/na.out" "$WORK/nb.out")"
	done
}

# Nor, for root's claims, where the task is a container's: its files lie in its container's run
# directory, where every file that names it holds its TPCs too. The container's first process,
# started by root on TPCs 0-7, became uid 65534, who wrote a rival of its file in her run
# directory of the container's: 58 TPCs can be claimed beside it, 59 cannot.
t_claim_beside_stalled_maps_in_container() {
	need_users
	need_pidns
	local out rc job task seg
	ln -s "$APP" "$WORK/stallme"
	make_container cs 0
	rm -f "$WORK"/u/cs.*
	unshare --pid --fork --mount-proc env NVTASKSET_RUNDIR="$CTR_RUN" "$NVT" --no-mps -c 0-7 \
		"$WORK/stallme" setuid 65534 loop "$WORK/u/cs.stop" "$WORK/u/cs.state" >"$WORK/cs.out" 2>&1 &
	job=$!
	wait_file "$WORK/u/cs.state" 0-7
	task=$(ns_init_of "$job")
	stat -L -c %i "/proc/$task/ns/pid" >"$NVTASKSET_RUNDIR/containers/cs/pidns"
	seg=nvtaskset.$(cat "$NVTASKSET_RUNDIR/containers/cs/pidns").1
	[ -f "$CTR_RUN/nvtaskset-0/$seg" ] || die "no segment $CTR_RUN/nvtaskset-0/$seg"
	write_rival "$CTR_RUN/nvtaskset-0/$seg" "$CTR_RUN/nvtaskset-65534/$seg"
	STALLING=(timeout "$(within_bound)" env LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme
		STALLREAD_FILES=maps STALLREAD_LOG="$WORK/u/stalls" "$NVT")
	run_rc out rc "${STALLING[@]}" --no-mps -n 58 --exclude-running true
	eq "$rc" 0 "a claim of the TPCs the container's task does not hold, beside a stalled read of its maps: $out"
	grep -q "^stalled $task maps" "$WORK/u/stalls" || die "no read of its maps stalled: $(cat "$WORK/u/stalls" 2>&1)"
	run_rc out rc "${STALLING[@]}" --no-mps -n 59 --exclude-running true
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || die "a claim of the task's TPCs beside a stalled read of its maps: status $rc: $out"
	has "$out" "free of other tasks"
	[ -f "$CTR_RUN/nvtaskset-0/$seg" ] && [ -f "$CTR_RUN/nvtaskset-65534/$seg" ] ||
		die "a segment file was removed: $(ls -l "$CTR_RUN"/nvtaskset-*/ 2>&1)"
	touch "$WORK/u/cs.stop"
	wait "$job" || die "the container's task failed: $(cat "$WORK/cs.out")"
}

# Nor does it stall the exporter: a scrape beside it is answered within the bound, the task
# counted unreadable.
t_exporter_beside_stalled_maps() {
	local out
	root_task_with_rival
	STALLREAD_COMM=stallme STALLREAD_LOG=$WORK/stalls LD_PRELOAD=$T/fake/stallread.so exporter_start 0
	out=$(timeout "$(within_bound)" python3 "$PROBE" get "$PORT" /metrics) ||
		die "a scrape beside a stalled read of maps was not answered"
	eq "$(head -1 <<<"$out")" 200 "a scrape beside a stalled read of maps"
	has "$out" "nvtaskset_tasks_unreadable 1"
	grep -q "^stalled $STALLED maps" "$WORK/stalls" || die "no read of its maps stalled: $(cat "$WORK/stalls" 2>&1)"
	serves
	exporter_stop
	stop_loop u/sm "$STALLED"
}

# Where such a read's wait does not end at SIGKILL (kernels that take the memory map's lock
# unkillably; stallread.so keeps SIGKILL from the child that stalled), -p does not wait for its
# killed child either: it moves the task all the same, the child left (and ended here).
t_pid_beside_unkillable_stalled_environ() {
	local out left
	stallme_task
	run_rc out rc timeout "$(within_bound)" env LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme \
		STALLREAD_LOG="$WORK/stalls" STALLREAD_UNKILLABLE=1 "$NVT" -p -g 2 "$STALLED"
	left=$(sed -n 's/^stalled .* by \([0-9]*\)$/\1/p' "$WORK/stalls" 2>/dev/null)
	[ -z "$left" ] || kill -KILL $left
	eq "$rc" 0 "-p beside a stalled read that SIGKILL does not end: $out"
	[ -n "$left" ] || die "no read of its environ stalled: $(cat "$WORK/stalls" 2>&1)"
	wait_file "$WORK/stall.state" "2,10,18,26,33,40,47,54"
	stop_loop stall "$STALLED"
	stop_loop ta "$A"
}

# scrape_beside_stalled N: one scrape, answered within a scrape's time with both of
# stallme_task's tasks; true once N reads have stalled (each scrape's read, FRESH_MS after the
# one before, is a read of its own).
scrape_beside_stalled() {
	local out
	out=$(timeout "$(scrape_timeout)" python3 "$PROBE" get "$PORT" /metrics) ||
		die "a scrape beside a stalled read was not answered (after $(stalls_seen) stalled reads)"
	eq "$(head -1 <<<"$out")" 200 "a scrape beside a stalled read"
	has "$out" "pid=\"$STALLED\",user=\"$ME\",command=\"stallme\""
	has "$out" "pid=\"$A\",user=\"$ME\",command=\"fakeapp-dlopen\""
	[ "$(stalls_seen)" -ge "$1" ]
}

# Nor does it stall the exporter: every scrape, through a read that stalled, is answered within
# a scrape's time, with both tasks; the stalled task is not read again for a while (the views
# of the scrapes after it, each a read of its own, stall no more).
t_exporter_beside_stalled_reads() {
	local views
	stallme_task
	STALLREAD_COMM=stallme STALLREAD_LOG=$WORK/stalls LD_PRELOAD=$T/fake/stallread.so exporter_start 0
	wait_for 10 scrape_beside_stalled 1
	for views in 1 2 3; do
		sleep 0.6 # (FRESH_MS: the next scrape reads a view of its own)
		scrape_beside_stalled 1
	done
	eq "$(stalls_seen)" 1 "stalled reads after four views"
	serves
	exporter_stop
	stop_loop stall "$STALLED"
	stop_loop ta "$A"
}

# A GPU the cache has no map for, with tasks of users but none of root's: a user's task's map
# (valid, but false: every TPC in one GPC) decides only what she sees; another user, and root,
# are told the map is not known.
t_viewers_other_users_map_not_taken() {
	need_users
	local seg out
	start_loop u/seg $(as_user 65534) env NVTASKSET_CACHE_DIR="$WORK/u/taskcache" \
		"$NVT" --no-mps -g 1 "$APP"
	seg=$PID
	wait_file "$WORK/u/seg.state" "1,9,17,25,32,39,46,53"
	$(as_user 65534) "$T/segpoke" "$seg" onegpc
	export NVTASKSET_CACHE_DIR=$WORK/u/viewcache NVTASKSET_PROC_NVIDIA=$WORK/no-proc-nvidia
	for viewer in 0 65524; do
		out=$($(as_user "$viewer") "$NVT" top -b -n 1) || die "top as $viewer failed: $out"
		has "$out" "TPC map not known (no calibration cached, no task of root's or yours on it)"
		hasnt "$out" "GPC 0 "
		out=$($(as_user "$viewer") "$NVT" -l --svg -) || die "-l --svg as $viewer failed: $out"
		has "$out" "TPC map not known"
	done
	# Her own task's map is hers to see.
	out=$($(as_user 65534) "$NVT" top -b -n 1) || die "top as 65534 failed: $out"
	hasnt "$out" "TPC map not known"
	has "$out" "GPC 0 "
	hasnt "$out" "GPC 1 "
	stop_loop u/seg "$seg"
}

# A setuid-root program a user starts under nvtaskset keeps her segment (ld.so drops the shim
# from it): its file is hers to write, so its map is not root's for root or anyone else.
t_viewers_setuid_task_map_not_roots() {
	need_users
	local pid out sleeper=$WORK/u/suid-sleep
	cp "$(command -v sleep)" "$sleeper"
	chmod 4755 "$sleeper"
	# shellcheck disable=SC2016 # the task's shell expands them
	$(as_user 65534) env NVTASKSET_CACHE_DIR="$WORK/u/taskcache" "$NVT" --no-mps -g 1 \
		sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done; exec "$2" 30' sh "$WORK/u/go" "$sleeper" \
		>"$WORK/suid.out" 2>"$WORK/suid.err" &
	pid=$!
	trap 'kill "$pid" 2>/dev/null || :' EXIT
	wait_for 10 test -e "$NVTASKSET_RUNDIR/nvtaskset-65534/nvtaskset.$(stat -L -c %i /proc/self/ns/pid).$pid"
	$(as_user 65534) "$T/segpoke" "$pid" onegpc
	$(as_user 65534) touch "$WORK/u/go"
	poll_until 10 euid_is "$pid" 0 || skip "the setuid copy of sleep did not run as root here (a nosuid file system?)"
	export NVTASKSET_CACHE_DIR=$WORK/u/viewcache NVTASKSET_PROC_NVIDIA=$WORK/no-proc-nvidia
	for viewer in 0 65524; do
		out=$($(as_user "$viewer") "$NVT" top -b -n 1) || die "top as $viewer failed: $out"
		has "$out" "TPC map not known"
		hasnt "$out" "GPC 0 "
	done
	out=$($(as_user 65534) "$NVT" top -b -n 1) || die "top as 65534 failed: $out"
	has "$out" "GPC 0 "
	kill "$pid"
	wait "$pid" || :
	trap - EXIT
}
euid_is() { [ "$(awk '/^Uid:/ {print $3}' "/proc/$1/status" 2>/dev/null)" = "$2" ]; }

t_svg_renders_in_chromium() {
	local browser size out stat
	browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
	[ -n "$browser" ] || skip "needs chromium (Debian: chromium) to render the map"
	lending_pair
	run_rc out rc "$NVT" -l --svg "$WORK/map.svg"
	eq "$rc" 0 "$out"
	end_lending_pair
	size=$(sed -n 's/^<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1,\2/p' "$WORK/map.svg")
	[ -n "$size" ] || die "no size in the SVG"
	mkdir -p "$WORK/home"
	HOME=$WORK/home timeout "$HANG" "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$WORK/chrome" --window-size="$size" --screenshot="$WORK/map.png" \
		"file://$WORK/map.svg" >"$WORK/chromium.log" 2>&1 || die "chromium: $(tail -5 "$WORK/chromium.log")"
	# It rendered: a PNG of the SVG's size, white mostly, with both tasks' colours.
	stat=$(python3 "$HELPERS/pngstat.py" "$WORK/map.png" '#4e79a7' '#f28e2b' '#ffffff') || die "$stat"
	eq "$(head -1 <<<"$stat" | awk '{print $1","$2}')" "$size" "the picture's size"
	[ "$(head -1 <<<"$stat" | awk '{print $3}')" -ge 10 ] || die "too few colours: $stat"
	[ "$(sed -n 2p <<<"$stat" | awk '{print $2}')" -ge 500 ] || die "A's colour barely there: $stat"
	[ "$(sed -n 3p <<<"$stat" | awk '{print $2}')" -ge 10000 ] || die "B's colour barely there: $stat"
	[ "$(sed -n 4p <<<"$stat" | awk '{print $2}')" -ge 100000 ] || die "little white: $stat"
	# The labels are there as the browser parsed them (no XML error page).
	HOME=$WORK/home timeout "$HANG" "$browser" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$WORK/chrome" --dump-dom "file://$WORK/map.svg" >"$WORK/dom.txt" 2>/dev/null ||
		die "chromium --dump-dom failed"
	hasnt "$(cat "$WORK/dom.txt")" "parsererror"
	has "$(cat "$WORK/dom.txt")" "pid $HI · $ME · high, lending"
	has "$(cat "$WORK/dom.txt")" ">GPC 11</text>"
}

# ---- The exporter ---------------------------------------------------------------------------

t_exporter_serves() {
	local out text VERSION
	VERSION=$(sed -n 's/^#define NVT_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/src/nvtaskset.h")
	[ -n "$VERSION" ] || die "no version in src/nvtaskset.h"
	two_tasks
	exporter_start 0
	# Loopback only, as nothing was said: its socket listens on 127.0.0.1.
	grep -qiE "^ *[0-9]+: 0100007F:$(printf '%04X' "$PORT") 00000000:0000 0A " /proc/net/tcp ||
		die "not listening on 127.0.0.1:$PORT alone: $(grep ' 0A ' /proc/net/tcp)"
	out=$(get /metrics)
	eq "$(head -1 <<<"$out")" 200 "GET /metrics"
	has "$out" "Content-Type: text/plain; version=0.0.4; charset=utf-8"
	text=$(sed '1,/^\r\?$/d' <<<"$out")
	eq "$(sample nvtaskset_task_tpcs "$A" <<<"$text")" 8 "A's TPCs"
	eq "$(sample nvtaskset_task_tpcs "$B" <<<"$text")" 16 "B's TPCs"
	# The same families as --metrics prints.
	eq "$(grep '^# TYPE' <<<"$text")" "$("$NVT" --metrics | grep '^# TYPE')" "the families"
	# HEAD: the headers alone. Others: 404 and 405, nothing changed.
	out=$(get /metrics HEAD)
	eq "$(head -1 <<<"$out")" 200 "HEAD /metrics"
	hasnt "$out" "# TYPE"
	# / is a landing page that links /metrics (node_exporter's habit); other paths are 404.
	out=$(get / GET)
	eq "$(head -1 <<<"$out")" 200 "GET /"
	has "$out" "Content-Type: text/html; charset=utf-8"
	has "$out" '<a href="/metrics">Metrics</a>'
	has "$out" "nvtaskset $VERSION"
	out=$(get / HEAD)
	eq "$(head -1 <<<"$out")" 200 "HEAD /"
	hasnt "$out" "<html>"
	# (a NUL decoded from %00 ends no path early: /metrics%00 is not /metrics)
	for path in /index.html /metricsx /metrics/ //metrics /metrics%00 /metrics%00.html /%00 /%00/metrics \
		'/metrics%00/../x' /metrics%2500 /metrics%00?a=1; do
		out=$(get "$path" GET)
		eq "$(head -1 <<<"$out")" 404 "GET $path"
	done
	# The version that serves them, as node_exporter's build_info.
	has "$text" "nvtaskset_build_info{version=\"$VERSION\"} 1"
	for method in POST PUT DELETE PATCH OPTIONS; do
		out=$(get /metrics $method)
		eq "$(head -1 <<<"$out")" 405 "$method /metrics"
		has "$out" "Allow: GET, HEAD"
	done
	serves
	exporter_stop
	stop_loop ta "$A"
	stop_loop tb "$B"
}

t_exporter_no_terminal_escapes() {
	local out
	ln -s "$APP" "$WORK/$ESCAPING_NAME"
	start_loop odd "$NVT" --no-mps -g 1 "$WORK/$ESCAPING_NAME"
	wait_file "$WORK/odd.state" "1,9,17,25,32,39,46,53"
	exporter_start 0
	get /metrics >"$WORK/scrape"
	eq "$(head -1 "$WORK/scrape")" 200 "GET /metrics"
	has "$(cat "$WORK/scrape")" "pid=\"$PID\",user=\"$ME\",$ESCAPING_LABEL"
	sed '1,/^\r\?$/d' "$WORK/scrape" >"$WORK/scrape.body" # (the body: the head has its CRs)
	has "$(cat "$WORK/scrape.body")" "# TYPE nvtaskset_mps_daemon_up gauge"
	no_terminal_escapes "$WORK/scrape.body"
	exporter_stop
	stop_loop odd "$PID"
}

# scrape_timeout: Prometheus' 1 s for a scrape, stretched as a loaded machine stretches the work
# (HANG is 120 s a CPU's load).
scrape_timeout() { awk -v h="$HANG" 'BEGIN { t = h / 120; print (t < 1 ? 1 : t) }'; }

# No client holds the exporter: 300 slow connections that a local user keeps open, each
# sending a header line every 4 s, leave every scrape answered within a second; one address
# keeps at most 16; a head whose bytes trickle is closed at its deadline.
t_exporter_held_by_no_client() {
	local out closed open lines
	two_tasks
	exporter_start 0
	# From 20 loopback addresses, 15 each (under the per-address limit): the table (256)
	# closes its oldest connections without a whole request for the newer ones, the scrapes'
	# among them, for 12 s (about 3 lines on each).
	run_rc out rc env SCRAPE_TIMEOUT="$(scrape_timeout)" python3 "$PROBE" flood "$PORT" 300 20 12
	eq "$rc" 0 "$out"
	closed=$(sed -n 's/^ok scrapes=[0-9]* closed=\([0-9]*\)$/\1/p' <<<"$out")
	[ -n "$closed" ] && [ "$closed" -ge 44 ] || die "the slow connections closed for room: $out"
	# 40 from one address (127.0.0.2: 127.0.0.1, which every local client shares, has no such
	# limit): at most 16 stay open, and a GET from it is answered, and one from 127.0.0.1.
	run_rc out rc env SCRAPE_TIMEOUT="$(scrape_timeout)" python3 "$PROBE" oneaddr "$PORT" 40
	eq "$rc" 0 "$out"
	open=${out#ok open=}
	[ "$open" -le 16 ] || die "one address kept $open connections"
	# A head that trickles a line every 0.25 s is closed at its deadline (5 s from its accept):
	# long before 240 lines (60 s).
	run_rc out rc python3 "$PROBE" trickle "$PORT" 60
	eq "$rc" 0 "$out"
	lines=${out#closed lines=}
	[ "$lines" -lt 240 ] || die "the trickled head: $out"
	serves
	exporter_stop
	stop_loop ta "$A"
	stop_loop tb "$B"
}

# sleepers [OPTION...]: 64 tasks (`sleep 600`, nvtaskset's OPTIONs), listed; sets SLEEPERS.
sleepers() {
	local i
	SLEEPERS=()
	for ((i = 0; i < 64; i++)); do
		"$NVT" --no-mps "$@" -c "$i" sleep 600 >/dev/null 2>&1 &
		SLEEPERS+=($!)
	done
	wait_for 60 sh -c '"$1" --metrics | grep -qx "nvtaskset_tasks 64"' - "$NVT"
}
stop_sleepers() {
	kill "${SLEEPERS[@]}"
	wait "${SLEEPERS[@]}" || :
}

# Nor does one that does not read the answers it asked for: 300 GETs whose answers (the
# metrics of 64 tasks, 60 kB) stay unsent, 64 bytes read of each now and then so that none is
# idle, and 5 more each round, leave every scrape answered within a second.
t_exporter_unread_answers() {
	local out
	sleepers
	exporter_start 0
	run_rc out rc env SCRAPE_TIMEOUT="$(scrape_timeout)" python3 "$PROBE" unread "$PORT" 300 12
	eq "$rc" 0 "$out"
	serves
	exporter_stop
	stop_sleepers
}

# Nor the exporter's memory: unread answers each of a read of its own (the metrics of 64 tasks
# with a priority, 210 kB, more than the kernel's buffers take) keep the texts of the last 4
# reads at most: the older answers are cut (the oldest, and at least one), the newer come whole.
t_exporter_unread_answers_keep_few_texts() {
	local out
	sleepers --priority low
	exporter_start 0
	run_rc out rc python3 "$PROBE" pinned "$PORT" 12 4
	eq "$rc" 0 "$out"
	serves
	exporter_stop
	stop_sleepers
}

t_exporter_bad_requests() {
	local hex
	exporter_start 127.0.0.1:0
	# Garbage, a version it does not speak, a request line of 100 KiB and 20000 headers (past
	# its 32 KiB for a request's head), random bytes, a path that climbs, a body where none
	# belongs, nothing at all (httpprobe.py's BAD): after each, it serves.
	# What it answers, where it answers: the head's limit (414, 431), the version (505), the
	# path (404), the method (405).
	for kind in garbage version:505 long:414 headers:431 binary climb:404 body:405 empty; do
		timeout "$HANG" python3 "$PROBE" raw "$PORT" "${kind%:*}" >"$WORK/raw.out" ||
			die "the connection of '$kind' hung or failed: $(cat "$WORK/raw.out")"
		hasnt "$(cat "$WORK/raw.out")" "HTTP/1.1 200"
		[[ "$kind" != *:* ]] || [[ "$(head -1 "$WORK/raw.out")" == "HTTP/1.1 ${kind#*:} "* ]] ||
			die "'${kind%:*}' answered: $(head -1 "$WORK/raw.out")"
		serves
	done
	exporter_stop
}

t_exporter_slow_and_many_clients() {
	local out
	two_tasks
	exporter_start 0
	# 20 slowloris connections, each sending a byte of a header at a time: the GETs beside them
	# are served.
	run_rc out rc python3 "$PROBE" slow "$PORT" 20
	eq "$rc" 0 "$out"
	eq "$out" "ok"
	serves
	# 100 scrapes at once: each gets a whole document.
	run_rc out rc python3 "$PROBE" parallel "$PORT" 100
	eq "$rc" 0 "$out"
	eq "$out" "ok 100"
	serves
	exporter_stop
	stop_loop ta "$A"
	stop_loop tb "$B"
}

t_viewers_read_topology_cache() {
	# Where the kernel module's version cannot be read (make try's fake GPU), top and -l --svg
	# show the map --topology just cached (they said "no calibration cached").
	export NVTASKSET_CACHE_DIR=$WORK/fresh-cache NVTASKSET_PROC_NVIDIA=$WORK/no-proc-nvidia
	local out
	out=$("$NVT" top -b -n 1)
	has "$out" "no calibration cached"
	"$NVT" --topology >/dev/null 2>&1 || die "--topology failed"
	out=$("$NVT" top -b -n 1)
	hasnt "$out" "no calibration cached"
	has "$out" "66 TPCs, 66 free"
	out=$("$NVT" -l --svg -)
	hasnt "$out" "no calibration cached"
	has "$out" "GPC 11"
}
