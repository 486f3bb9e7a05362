# README's examples, run as written against the fake H100 (its programs replaced by the fake
# app). Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell
# under set -e with the helpers defined there.
# shellcheck shell=bash

# readme_block N: the lines of the Nth code block (from 1) of README's "## Examples".
readme_block() {
	awk -v want="$1" '/^## / { ex = ($0 == "## Examples"); next }
		ex && /^```/ { if (inb) { inb = 0; if (n == want) exit } else { inb = 1; n++ } next }
		ex && inb && n == want' "$ROOT/README.md"
}
# gpcs_of LIST: the GPCs (per --topology) that hold a TPC of LIST, one a line.
gpcs_of() {
	local tpcs
	tpcs=$(python3 -c 'import sys
out = set()
for item in sys.argv[1].split(","):
    a, _, b = item.partition("-")
    out.update(range(int(a), int(b or a) + 1))
print(" ".join(map(str, sorted(out))))' "$1")
	"$NVT" --topology | awk -v want=" $tpcs " '$1 ~ /^[0-9]+$/ { n = split($2, t, ",");
		for (i = 1; i <= n; i++) if (index(want, " " t[i] " ")) { print $1; break } }'
}
# wait_nonempty FILE [SECONDS]: waits (poll_until SECONDS, 5 by default) until a fake app has
# written its TPCs there.
wait_nonempty() {
	poll_until "${2:-5}" test -s "$1" || die "$1 stayed empty"
}
# readme_words LINE: LINE's words with nvtaskset the built command, its comment and '&' dropped.
readme_words() {
	sed 's/  *#.*//; s/ *&$//' <<<"$1" | sed "s|^nvtaskset |$NVT |"
}

t_readme_corun_disjoint_gpcs() {
	# Example 1: the two tasks get disjoint TPCs in disjoint GPCs (the issue: -c 0-32 and
	# -c 33-65 shared 7 of the 8 large GPCs, and clustered kernels ran over the other task).
	own_mps_dirs readme
	export PATH=$FAKEBIN:$PATH
	local block line det pla g1 g2
	block=$(readme_block 1)
	eq "$(wc -l <<<"$block")" 2 "lines of README's first example"
	line=$(readme_words "$(sed -n 1p <<<"$block")")
	has "$line" "./detector"
	# shellcheck disable=SC2086 # the example's words
	start_loop det ${line/.\/detector/$APP}
	det=$PID
	wait_nonempty "$WORK/det.state"
	line=$(readme_words "$(sed -n 2p <<<"$block")")
	has "$line" "./planner"
	# shellcheck disable=SC2086
	start_loop pla ${line/.\/planner/$APP}
	pla=$PID
	wait_nonempty "$WORK/pla.state"
	g1=$(gpcs_of "$(cat "$WORK/det.state")")
	g2=$(gpcs_of "$(cat "$WORK/pla.state")")
	[ -n "$g1" ] && [ -n "$g2" ] || die "no partitions: '$(cat "$WORK/det.state")' '$(cat "$WORK/pla.state")'"
	eq "$(comm -12 <(sort <<<"$g1") <(sort <<<"$g2") | tr '\n' ' ')" "" "GPCs both tasks of README's first example use"
	# The text names the GPCs each gets, and the -g halves it offers are those very picks.
	has "$(tr '\n' ' ' <"$ROOT/README.md")" "the first to claim gets GPCs 1, 2, 3 and 6, and the other GPCs 0, 4, 5 and 7-11"
	eq "$(tr '\n' ',' <<<"$g1")" "1,2,3,6," "the detector's GPCs"
	local half
	for half in detector:det planner:pla; do
		line=$(grep -oE "nvtaskset -g [0-9,-]+ \./${half%:*}" "$ROOT/README.md" | head -1)
		[ -n "$line" ] || die "README names no -g half for ${half%:*}"
		run_rc out rc "$NVT" --dry-run -g "$(awk '{print $3}' <<<"$line")"
		eq "$rc" 0
		eq "${out##*TPCs }" "$(cat "$WORK/${half#*:}.state")" "README's -g half for ${half%:*}"
	done
	# Example 2: moving the detector prints what README shows.
	block=$(readme_block 2)
	line=$(sed -n 's/^\$ //p' <<<"$block")
	# shellcheck disable=SC2086
	run_rc out rc $(readme_words "${line/4242/$det}")
	eq "$rc" 0
	eq "$out" "$(sed 1d <<<"$block" | sed "s/4242/$det/g")" "README's second example"
	wait_file "$WORK/det.state" "$("$NVT" --no-mps --dry-run -g "$(sed -n 's/.*new GPC list: //p' <<<"$out")" | sed -n 's/.*: TPCs //p')"
	stop_loop det "$det"
	stop_loop pla "$pla"
}
t_readme_wrapper_and_queries() {
	# Example 3: a program started with the drop-in wrapper (the package's path, which
	# debian/rules' PREFIX=/usr gives) is moved by -p; example 4's commands all work.
	# As written, the package's wrapper directory the build's: the library path it keeps
	# (LD_LIBRARY_PATH=/usr/lib/nvtaskset/wrapper alone lost the fake driver's directory, and
	# the wrapper could not load libcuda.so).
	local block line cmd
	block=$(readme_block 3)
	line=$(sed -n 1p <<<"$block")
	# shellcheck disable=SC2016 # the line as README shows it
	has "$line" 'LD_LIBRARY_PATH=/usr/lib/nvtaskset/wrapper${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ./service &'
	grep -q 'PREFIX=/usr SLURM=0' "$ROOT/debian/rules" || die "debian/rules no longer installs to /usr"
	cmd=${line//\/usr\/lib\/nvtaskset\/wrapper/$WRAPDIR}
	cmd=${cmd/.\/service &/$APP loop $WORK/svc.stop $WORK/svc.state}
	eval "$cmd >$WORK/svc.out 2>&1 &"
	PID=$!
	poll_until 10 file_reads "$WORK/svc.state" "0-65" || die "the service did not run: $(cat "$WORK/svc.out")"
	line=$(sed -n 2p <<<"$block")
	# shellcheck disable=SC2086
	run_rc out rc $(readme_words "${line/\$!/$PID}")
	eq "$rc" 0
	has "$out" "new GPC list: 4-5"
	wait_file "$WORK/svc.state" "$("$NVT" --no-mps --dry-run -g 4-5 | sed -n 's/.*: TPCs //p')"
	block=$(readme_block 4)
	eq "$(wc -l <<<"$block")" 3 "lines of README's fourth example"
	while read -r line; do
		# shellcheck disable=SC2086
		run_rc out rc $(readme_words "$line")
		eq "$rc" 0 "rc of '$line': $out"
	done <<<"$block"
	stop_loop svc "$PID"
}
t_readme_several_gpus() {
	# docs/usage.md's several GPUs (README points there) on the fake node with two H100s, as
	# make try GPUS=2 gives it: what each start would give.
	export FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR=$WORK/cache-readme
	local block line
	# (--dry-run refuses a COMMAND that cannot run, as a start does: the example's is here)
	cd "$WORK" || die "cd $WORK"
	printf '#!/bin/sh\n' >train
	chmod +x train
	has "$(cat "$ROOT/README.md")" "[docs/usage.md](docs/usage.md#several-gpus)"
	block=$(awk '/^## / { sg = ($0 == "## Several GPUs"); next } sg && /^```/ { if (inb) exit; inb = 1; next }
		sg && inb' "$ROOT/docs/usage.md" | grep -E -- '--gpu (0=0-32|1 )')
	eq "$(wc -l <<<"$block")" 2 "usage.md's lines of a partition per GPU and of GPU 1 only"
	line=$(readme_words "$(sed -n 1p <<<"$block")")
	# shellcheck disable=SC2086
	run_rc out rc ${line/$NVT /$NVT --dry-run }
	eq "$rc" 0 "rc of '$line': $out"
	has "$out" "GPU 0 ("
	has "$out" "TPCs 0-32"
	has "$out" "TPCs 40-65"
	line=$(readme_words "$(sed -n 2p <<<"$block")")
	# shellcheck disable=SC2086
	run_rc out rc ${line/$NVT /$NVT --dry-run }
	eq "$rc" 0 "rc of '$line': $out"
	has "$out" "GPU 1 ("
	has "$out" "TPCs 0-15"
	grep -q '^GPU 0 (.*): TPCs all$' <<<"$out" || die "GPU 0 is partitioned: $out"
}
t_readme_first_screen() {
	# README in the order a newcomer needs it: what it is, make try, make check, install,
	# three examples, the pages; no dated timing or load average (HACKING's and
	# performance.md's); its recipe for the test count counts what the suite runs.
	local heads tests n
	heads=$(grep '^## ' "$ROOT/README.md" | tr '\n' '|')
	eq "$heads" "## Try it without a GPU|## Tests|## Install|## Examples|## libsmctrl|## Documentation|" "README's sections"
	eq "$(grep -cE '^\*\*[0-9]\. ' "$ROOT/README.md")" 3 "README's examples"
	tests=$(awk '/^## Tests$/ { t = 1; next } /^## / { t = 0 } t' "$ROOT/README.md")
	if grep -qE '20[0-9]{2}-[0-9]{2}-[0-9]{2}|load (average|[0-9])|[0-9]+ min [0-9]+ s' <<<"$tests"; then
		die "README's Tests give timings: $tests"
	fi
	[ "$(wc -l <"$ROOT/README.md")" -le 250 ] || die "README has $(wc -l <"$ROOT/README.md") lines"
	has "$(tr '\n' ' ' <"$ROOT/README.md" | tr -s ' ')" "\`tests/run-tests.sh --list\` names the end-to-end tests it runs"
	# (Names alone: as root in a checkout other users cannot reach, the suite says it runs a
	# copy; --list does not.)
	n=$("$ROOT/tests/run-tests.sh" --list | sort)
	eq "$n" "$(declare -F | sed -n 's/^declare -f t_//p' | sort)" "the tests --list names, against those this suite defines"
	# The choice of a priority: in short, then a table, at the top of priorities.md; a line in
	# README.
	eq "$(grep '^## ' "$ROOT/docs/priorities.md" | head -2 | tr '\n' '|')" "## In short|## Which one?|" \
		"priorities.md's first sections"
	grep -q '^| situation | flags (the batch task.s) | what the service gets | what the batch task keeps |$' \
		"$ROOT/docs/priorities.md" || die "no 'Which one?' table in priorities.md"
	has "$(tr '\n' ' ' <"$ROOT/README.md" | tr -s ' ')" "Which form to use opens the page"
	# README's words, not its measurements: those are in the pages it links, with their runs.
	! grep -nP '(?<![-/\w])20[0-9]{2}-[01][0-9]-[0-3][0-9]' "$ROOT/README.md" || die "README carries a dated measurement (above)"
}
t_docs_plots_shown() {
	# Every plot under docs/ is shown (an image link, ![...](path)) on some page of docs/,
	# and every image link on a page of docs/ or README names a file that exists.
	python3 - "$ROOT" <<'PY' || die "plots not shown, or image links broken (above)"
import os, re, sys
root = sys.argv[1]
pngs, shown, broken = set(), set(), []
pages = [os.path.join(root, "README.md")]
for d, _, files in os.walk(os.path.join(root, "docs")):
    for f in files:
        p = os.path.join(d, f)
        if f.endswith(".png"):
            pngs.add(os.path.normpath(p))
        elif f.endswith(".md"):
            pages.append(p)
for page in pages:
    text = open(page, encoding="utf-8").read()
    for m in re.finditer(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
        target = os.path.normpath(os.path.join(os.path.dirname(page), m.group(1)))
        shown.add(target)
        if not os.path.exists(target):
            broken.append("%s: %s" % (os.path.relpath(page, root), m.group(1)))
missing = sorted(os.path.relpath(p, root) for p in pngs - shown)
for m in missing:
    print("not shown on any page:", m)
for b in broken:
    print("image link to a missing file:", b)
sys.exit(1 if missing or broken or len(pngs) < 20 else 0)
PY
}
t_docs_man_examples() {
	# nvtaskset(1)'s EXAMPLES start with README's first example, and each of its commands
	# uses options the parser takes.
	local cmds opt parser
	# The commands: the lines of EXAMPLES' .nf/.fi blocks.
	cmds=$(awk '/^\.SH / { ex = ($0 == ".SH EXAMPLES"); next } ex && /^\.nf/ { nf = 1; next }
		ex && /^\.fi/ { nf = 0; next } ex && nf { print }' "$ROOT/man/nvtaskset.1" | sed 's/\\-/-/g')
	[ "$(wc -l <<<"$cmds")" -ge 10 ] || die "too few EXAMPLES in the man page: $cmds"
	eq "$(head -2 <<<"$cmds")" "$(readme_block 1)" "the man page's first example against README's"
	parser=$(parser_option_list)
	for opt in $(grep -vE '^nvtaskset (--profile|--plan|top) ' <<<"$cmds" | grep -oE -- '(^| )--?[a-zA-Z][a-z-]*' | sort -u); do
		grep -qx -- "$opt" <<<"$parser" || die "the man page's EXAMPLES use $opt, which the parser does not take"
	done
	# A sub-command's (--profile, --plan, top) options: those its --help lists.
	local sub line
	while read -r sub line; do
		parser=$("$NVT" "$sub" --help | grep -oE -- '^ {1,5}(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--?[a-zA-Z][a-z-]*')
		for opt in $(grep -oE -- '(^| )--?[a-zA-Z][a-z-]*' <<<"$line" | sort -u); do
			grep -qx -- "$opt" <<<"$parser" || die "the man page's EXAMPLES give $sub $opt, which its --help does not list"
		done
	done < <(sed -nE 's/^nvtaskset (--profile|--plan|top) /\1 /p' <<<"$cmds")
}
t_docs_slurm_arguments() {
	# The plugin's plugstack.conf arguments: what parse_args takes, spank_nvtaskset(8)'s
	# ARGUMENTS and docs/slurm.md's table name the same ones.
	local code man doc
	code=$(sed -n '/^static int parse_args/,/^}/p' "$ROOT/tools/slurm/spank_nvtaskset.c" |
		grep -v slurm_error | grep -oE '"[a-z_]+=' | tr -d '"=' | sort -u)
	man=$(awk '/^\.SH / { a = ($0 == ".SH ARGUMENTS"); next } a && /^\.(B|BI|BR) / { print $2 }' \
		"$ROOT/man/spank_nvtaskset.8" | grep -oE '^[a-z_]+=' | tr -d '=' | sort -u)
	doc=$(sed -n '/^| argument | meaning |$/,/^$/p' "$ROOT/docs/slurm.md" | awk -F'|' 'NR > 2 { print $2 }' |
		grep -oE '[a-z_]+=' | tr -d '=' | sort -u)
	[ "$(wc -l <<<"$code")" -ge 8 ] || die "too few arguments found in parse_args: $code"
	eq "$(tr '\n' ' ' <<<"$man")" "$(tr '\n' ' ' <<<"$code")" "spank_nvtaskset(8)'s ARGUMENTS against parse_args"
	eq "$(tr '\n' ' ' <<<"$doc")" "$(tr '\n' ' ' <<<"$code")" "docs/slurm.md's arguments against parse_args"
	# And its srun options.
	for opt in gpu-tpcs gpu-gpcs; do
		grep -q "{\"$opt\"" "$ROOT/tools/slurm/spank_nvtaskset.c" || die "the plugin lost --$opt"
		grep -q "^\.BI \\\\-\\\\-${opt//-/\\\\-}= N" "$ROOT/man/spank_nvtaskset.8" || die "spank_nvtaskset(8) lacks --$opt"
	done
}
t_docs_speak_of_the_project() {
	# The pages (README, HACKING, docs/, the man pages, every README.md) speak of the project as
	# it is: no issue numbers, reviews or branches of its making, no sudo (readers may have no
	# root: "as root" says it), a paper number only on a page that gives the paper's title, and
	# no link or path to a file the repository does not hold.
	python3 - "$ROOT" <<'PY' || die "the pages above speak of something that is not the project"
import os, re, sys
root = sys.argv[1]
pages = ["README.md", "HACKING.md"]
for top in ("docs", "src", "tools", "tests", "man", "debian"):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if f.endswith(".md") or (top == "man" and re.search(r"\.[1-8]$", f)):
                pages.append(os.path.relpath(os.path.join(d, f), root))
titles = {"000": "Hardware Compute Partitioning on NVIDIA GPUs for Composable Systems",
          "002": "Hardware Compute Partitioning on NVIDIA GPUs"}
rules = [
    (r"\b[Ii]ssues? #?[0-9]+|\(issue\b", "an issue number"),
    (r"\breview of (this|the) branch|\bearlier review\b|\bthe review's\b", "a review"),
    (r"\b(this|the) branch\b|\bbranch `|\b[Ss]ession [0-9]+\b|\bround-?[0-9]+ fixes\b",
     "the history of the work"),
    (r"PRIO-DESIGN|STYLE\.md|HARDWARE-FACTS\.md", "a file not in the repository"),
    (r"\bsudo\b", "sudo (say 'as root')"),
]
path_rx = re.compile(r"(?<![\w/.$:-])((?:docs|tests|src|tools|man|mk|debian|include)/[\w./+-]*[\w/])")
bad = []
for page in sorted(set(pages)):
    text = open(os.path.join(root, page), encoding="utf-8", errors="replace").read()
    flat = " ".join(text.replace("\\fI", "").replace("\\fR", "").split())
    here = os.path.dirname(page)
    for n, line in enumerate(text.splitlines(), 1):
        for rx, what in rules:
            if re.search(rx, line):
                bad.append("%s:%d: %s: %s" % (page, n, what, line.strip()[:100]))
        for m in re.finditer(r"\b[Pp]aper (0[0-9][0-9])\b", line):
            if titles.get(m.group(1), "\0") not in flat:
                bad.append("%s:%d: paper %s, and the page does not give its title" % (page, n, m.group(1)))
    targets = [m.group(1) for m in re.finditer(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text)
               if not re.match(r"[a-z]+:", m.group(1))]
    if page.endswith(".md"):
        targets += [p for p in path_rx.findall(text) if not re.search(r"NAME|DATE|[A-Z]{3,}|<|\*", p)]
    for t in targets:
        if not any(os.path.exists(os.path.join(root, d, t)) for d in (here, "")):
            bad.append("%s: names %s, which the repository does not hold" % (page, t))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

# ---- Every example a reader can paste, run on the fake driver --------------------------

# examples_extract DIR: writes each block of examples to DIR/NN.SOURCE, one command a line:
# README's code blocks, its inline commands (one block: a code span of several words whose
# first, after VAR=VALUE words, names a program, as `make deb`; not an option or a path), the
# man page's EXAMPLES blocks, and --help's examples and the commands it names (one block). A
# transcript block ("$ CMD" and what it printed) gives its commands only.
examples_extract() {
	"$NVT" --help-all >"$1.help"
	python3 - "$ROOT" "$1" <<'PY'
import os, re, sys
root, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
blocks = []
readme = open(os.path.join(root, "README.md")).read()
for m in re.finditer(r"^```[a-z]*\n(.*?)^```", readme, re.S | re.M):
    lines = m.group(1).splitlines()
    if any(l.startswith("$ ") for l in lines):
        lines = [l[2:] for l in lines if l.startswith("$ ")]
    blocks.append(("README", lines))
prose = re.sub(r"^```.*?^```", "", readme, flags=re.S | re.M)
inline = [c for c in re.findall(r"`([^`\n]+)`", " ".join(prose.split()))
          if re.match(r"([A-Z_]+=\S* )*[a-z][a-z0-9_-]* ", c)]
blocks.append(("README-inline", inline))
man = open(os.path.join(root, "man/nvtaskset.1")).read()
ex = man.split("\n.SH EXAMPLES\n", 1)[1].split("\n.SH ", 1)[0]
for m in re.finditer(r"^\.nf\n(.*?)^\.fi", ex, re.S | re.M):
    blocks.append(("man", [l.replace("\\-", "-") for l in m.group(1).splitlines()]))
help_text = open(out + ".help").read()
cmds = []
for l in help_text.split("\nExamples:\n", 1)[1].splitlines():
    m = re.match(r" (nvtaskset .*?)(?: {2,}.*)?$", l)
    if not m:
        break
    cmds.append(m.group(1))
cmds += re.findall(r"nvtaskset (?:--[a-z]+ )+--help", help_text)
blocks.append(("help", cmds))
for n, (src, lines) in enumerate(blocks):
    with open(os.path.join(out, "%02d.%s" % (n, src)), "w") as f:
        f.write("".join(re.sub(r"\s+#.*$", "", l).strip() + "\n" for l in lines if l.strip()))
PY
}

# The commands of the docs that no test here runs as shown, each with why and what checks it
# instead: PATTERN|REASON (an extended regular expression matching the whole command). Every
# entry must match a command of the docs (t_docs_examples_not_run_listed), and every other
# command runs.
EXAMPLES_NOT_RUN=(
	"([A-Z_]+=[^ ]* )*make( .*)?|run as a dry run (make -n: the target exists and its recipe parses): run as \
shown, it would install into the system, build the package or run this suite within itself; \
tests/e2e/package.sh installs, try.sh runs make try's tour"
	"cc -o prog docs/examples/prog\.c .*|builds docs/examples/prog.c against an installed libsmctrl; \
t_install_uninstall builds and runs it against a staged install"
	"\./prog|the reader's program built by the line before"
	"apt-get install .*|installs the Debian package as root: make check-package does"
	"srun .*|needs Slurm: make check-slurm runs srun --gpu-tpcs jobs"
	"man .*|reads the installed man pages: make check-package checks that man finds them"
	"nvtaskset top|a live view that runs until q, on a terminal: t_top_in_a_terminal runs it in \
tmux, t_top_batch_frames runs top -b"
	"nvtaskset -l --svg [^ ]+|writes the picture where the reader is: t_svg_map and \
t_svg_renders_in_chromium write it in their own directories"
	"nvtaskset --exporter [^ ]+|serves until it is ended: t_exporter_serves and make \
check-prometheus run it"
)
# example_not_run LINE: prints why LINE is not run as shown and succeeds, if EXAMPLES_NOT_RUN
# lists it.
example_not_run() {
	local entry
	for entry in "${EXAMPLES_NOT_RUN[@]}"; do
		if [[ "$1" =~ ^(${entry%%|*})$ ]]; then
			echo "${entry#*|}"
			return 0
		fi
	done
	return 1
}
t_docs_examples_not_run_listed() {
	# Each entry of EXAMPLES_NOT_RUN still matches a command of the docs (a stale entry would
	# let a new command of its pattern go unrun without anyone deciding so).
	local entry dir=$WORK/examples
	examples_extract "$dir"
	for entry in "${EXAMPLES_NOT_RUN[@]}"; do
		grep -qxE -- "${entry%%|*}" "$dir"/* || die "EXAMPLES_NOT_RUN lists '${entry%%|*}', which no example matches"
		echo "not run: ${entry%%|*}: ${entry#*|}"
	done
}

# example_program LINE BG TAG: LINE with its program (./NAME) the fake app: a loop writing
# $WORK/ex.TAG.state (until $WORK/ex.TAG.stop exists) when BG is 1, else one launch.
example_program() {
	local prog
	prog=$(grep -oE '(^| )\./[a-z_]+' <<<"$1" | head -1 | tr -d ' ')
	[ -n "$prog" ] || {
		echo "$1"
		return
	}
	if [ "$2" == 1 ]; then
		echo "${1/$prog/$APP loop $WORK/ex.$3.stop $WORK/ex.$3.state}"
	else
		echo "${1/$prog/$APP launch 1}"
	fi
}

# example_block FILE: runs the block's commands in order, as a reader pastes them, with the
# fake driver's stand-ins: programs (./NAME) are the fake app, 4242 a task started (on every
# TPC) where the block first names it, $! the last program started in the background, a UUID
# prefix GPU 0's, the installed library directory the build's, the calibration cache the test's
# own. A block that names GPU 1 (or shows only it) runs on two fake GPUs. Every command must exit 0, but for those
# EXAMPLES_NOT_RUN lists, which it names with the reason (make's as a dry run).
example_block() {
	local file=$1 tag line cmd bg n=0 last="" task="" out rc pid part why
	local -a bgs=()
	tag=$(basename "$file")
	cd "$ROOT" || die "cannot enter $ROOT"
	own_mps_dirs "ex-$tag"
	# What a command makes in the temporary directory (mktemp -d, named in the prose) is the
	# test's, and goes with it.
	mkdir -p "$WORK/tmp"
	export TMPDIR=$WORK/tmp
	export PATH=$B/bin:$B/test:$FAKEBIN:$PATH
	if grep -qE -- '--gpu 1|[0-9]=[0-9]|CUDA_VISIBLE_DEVICES=[1-9]' "$file"; then
		export FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR=$WORK/cache-examples
	fi
	while read -r line; do
		n=$((n + 1))
		# (build/try-*: the test's own directories, not the checkout's build/.)
		line=${line//\$PWD\/build\/try-/$WORK/try-}
		line=${line// build\/try-/ $WORK/try-}
		echo "[$tag] $line"
		case "$line" in
		export\ *)
			eval "$line"
			continue
			;;
		esac
		if why=$(example_not_run "$line"); then
			echo "[$tag] not run as shown: $why"
			[[ "$line" == *make* ]] || continue
			while read -r part; do
				part=${part#time }
				[[ "$part" =~ ^([A-Z_]+=[^ ]+ )*make( |$) ]] || die "[$tag] not a make command: $part"
				# shellcheck disable=SC2086 # its words
				out=$(submake -s -n ${part#*make} 2>&1) && rc=0 || rc=$?
				eq "$rc" 0 "[$tag] make -n of '$part': $out"
			done < <(sed 's/ *&& */\n/g; s/ *; */\n/g' <<<"$line")
			continue
		fi
		if [[ " $line " == *" 4242 "* ]] && [ -z "$task" ]; then
			"$NVT" -c all "$APP" loop "$WORK/ex.$tag.task.stop" "$WORK/ex.$tag.task.state" \
				>"$WORK/ex.$tag.task.out" 2>&1 &
			task=$!
			wait_nonempty "$WORK/ex.$tag.task.state" 60
		fi
		bg=0
		[[ "$line" == *" &" ]] && bg=1 && line=${line% &}
		cmd=$(example_program "$line" "$bg" "$tag.$n")
		cmd=${cmd//4242/$task}
		cmd=${cmd//\$!/$last}
		cmd=$(sed -E "s|/usr(/local)?/lib/nvtaskset/wrapper|$WRAPDIR|;
			s|GPU-[0-9a-f]{8}=|$(fake_uuid 0 | cut -c1-12)=|" <<<"$cmd")
		if [ "$bg" == 1 ]; then
			eval "$cmd >$WORK/ex.$tag.$n.out 2>&1 &"
			last=$!
			bgs+=("$tag.$n:$last")
			# (A first start calibrates and starts MPS: on a loaded machine, seconds.)
			[[ "$cmd" != *"$APP loop"* ]] || (wait_nonempty "$WORK/ex.$tag.$n.state" 60) ||
				die "[$tag] '$line' launched nothing: $(cat "$WORK/ex.$tag.$n.out")"
		else
			run_rc out rc bash -c "$cmd"
			echo "$out" | head -5
			eq "$rc" 0 "[$tag] the exit status of '$line' (run as: $cmd): $out"
		fi
	done <"$file"
	for pid in "${bgs[@]}"; do
		touch "$WORK/ex.${pid%%:*}.stop"
	done
	for pid in "${bgs[@]}"; do
		wait "${pid#*:}" || die "[$tag] the background command ${pid%%:*} failed: $(cat "$WORK/ex.${pid%%:*}.out")"
	done
	if [ -n "$task" ]; then
		stop_loop "ex.$tag.task" "$task"
	fi
	return 0
}

# examples_run SOURCE MIN: runs the blocks of SOURCE (README, README-inline, man, help), which
# must hold at least MIN commands.
examples_run() {
	local f count dir=$WORK/examples.$1
	examples_extract "$dir"
	count=$(cat "$dir"/*."$1" | wc -l)
	[ "$count" -ge "$2" ] || die "only $count commands found in $1's examples"
	for f in "$dir"/*."$1"; do
		(example_block "$f") || die "an example of $(basename "$f") failed (above)"
	done
}
# Every command README, the man page's EXAMPLES and --help give runs as shown (on the fake H100
# and the stand-ins example_block names) and exits 0.
t_docs_examples_keep_to_work() {
	# A command of the docs that makes a temporary directory makes it in the test's own (each
	# make check left two empty /tmp/tmp.* from README's inline mktemp -d).
	printf '%s\n' "mktemp -d" "mktemp" >"$WORK/00.README-inline"
	(example_block "$WORK/00.README-inline") || die "the block failed (above)"
	eq "$(find "$WORK/tmp" -mindepth 1 -maxdepth 1 -name 'tmp.*' | wc -l)" 2 "what mktemp made in the test's directory"
}
t_docs_examples_readme() { examples_run README 20; }
t_docs_examples_readme_inline() { examples_run README-inline 15; }
t_docs_examples_man() { examples_run man 12; }
t_docs_examples_help() { examples_run help 8; }
