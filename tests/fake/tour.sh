# What make try's tours print with (tests/fake/try.sh, tests/podman/try.sh): a comment, a command
# as typed, and the new lines of a program's output. Sourced.
# shellcheck shell=bash

# say LINE...: a comment of the tour, after an empty line.
say() {
	echo
	printf '# %s\n' "$@"
}
# show CMD...: prints the command as typed, then runs it.
show() {
	printf '$ %s\n' "$*"
	"$@"
}
# follow NAME TEXT CMD...: waits ($TRY_WAIT s at most, 10 by default; the tests give their hang
# guard) for a new line holding TEXT in NAME's output, which CMD prints whole, and prints the
# lines up to it that were not printed yet; else says so and exits 1.
declare -A SHOWN
follow() {
	local name=$1 text=$2 lines end=$((SECONDS + ${TRY_WAIT:-10}))
	shift 2
	while ((SECONDS <= end)); do
		lines=$("$@" 2>&1 | tail -n +"$((${SHOWN[$name]:-0} + 1))")
		if grep -q "$text" <<<"$lines"; then
			lines=$(sed "/$text/q" <<<"$lines")
			printf '%s\n' "$lines"
			SHOWN[$name]=$((${SHOWN[$name]:-0} + $(wc -l <<<"$lines")))
			return 0
		fi
		sleep 0.05
	done
	echo "try: $name printed no '$text' in ${TRY_WAIT:-10} s:" >&2
	"$@" 2>&1 | tail -5 >&2
	exit 1
}
