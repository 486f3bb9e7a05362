# Packaging and documentation. Sourced by tests/run-tests.sh: each t_NAME function is one test,
# run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

# submake ARGS...: make in the source tree, as a user would run it (not as part of
# the make that runs these tests: no jobserver, no variables passed down).
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j"$(nproc)" -C "$ROOT" "$@"; }
# install_tree DEST MAKE-ARGS...: `make install` into DEST from a build tree of its own (so
# that the paths compiled into the command do not change the one under test).
install_tree() {
	local dest=$1
	shift
	submake -s B="$WORK/build.$(basename "$dest")" install DESTDIR="$dest" "$@" \
		>"$WORK/install.log" 2>&1 || die "make install $* failed: $(cat "$WORK/install.log")"
}
uninstall_tree() {
	local dest=$1
	shift
	submake -s B="$WORK/build.$(basename "$dest")" uninstall DESTDIR="$dest" "$@" \
		>"$WORK/install.log" 2>&1 || die "make uninstall $* failed: $(cat "$WORK/install.log")"
	[ -z "$(find "$dest" ! -type d)" ] || die "left after uninstall: $(find "$dest" ! -type d)"
}
t_install_uninstall() {
	local dest=$WORK/dest f files
	# A directory that was there before the install (as a PREFIX's bin/ is) stays.
	mkdir -p "$dest/opt/nvt/bin"
	install_tree "$dest" PREFIX=/opt/nvt
	for f in bin/nvtaskset lib/nvtaskset/libnvtaskset.so lib/nvtaskset/wrapper/libcuda.so.1 \
		lib/nvtaskset/nvtaskset-hog share/man/man1/nvtaskset.1 share/bash-completion/completions/nvtaskset \
		share/doc/nvtaskset/README.md share/doc/nvtaskset/LICENSE lib/nvtaskset/libsmctrl.so \
		include/libsmctrl.h share/man/man3/libsmctrl.3 share/man/man8/spank_nvtaskset.8; do
		[ -f "$dest/opt/nvt/$f" ] || die "missing $f after install"
	done
	cmp "$ROOT/include/libsmctrl.h" "$dest/opt/nvt/include/libsmctrl.h"
	# libsmctrl.so where the linker looks (PREFIX/lib), and pkg-config's record.
	eq "$(readlink "$dest/opt/nvt/lib/libsmctrl.so")" nvtaskset/libsmctrl.so "the link in PREFIX/lib"
	has "$(cat "$dest/opt/nvt/lib/pkgconfig/libsmctrl.pc")" "Libs: -L\${libdir} -lsmctrl"
	# A program written for libsmctrl builds against the installed header and
	# library with pkg-config, and its calls reach the installed shim beside
	# the link's target.
	local flags
	flags=$(PKG_CONFIG_PATH="$dest/opt/nvt/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config --cflags --libs libsmctrl) ||
		die "pkg-config does not know libsmctrl"
	# README's program, linked against the fake driver as README says for a machine without one.
	# (Word splitting wanted: pkg-config's flags.)
	# shellcheck disable=SC2086
	cc -o "$WORK/prog" "$ROOT/docs/examples/prog.c" $flags -L"$FAKEDIR" -lcuda -Wl,-rpath,"$dest/opt/nvt/lib" ||
		die "README's libsmctrl program does not build against the install ($flags)"
	run_rc out rc env LD_LIBRARY_PATH="$FAKEDIR" "$WORK/prog"
	eq "$out" "GPU 0 has 66 TPCs; masked to TPCs 0-3, this program's kernel ran on TPCs 0-3" \
		"README's libsmctrl program"
	# Under a partition, its mask applies within it: GPC 1 holds TPC 1 of 0-3.
	run_rc out rc env LD_LIBRARY_PATH="$FAKEDIR" "$dest/opt/nvt/bin/nvtaskset" --no-mps -g 1 "$WORK/prog"
	eq "$out" "GPU 0 has 66 TPCs; masked to TPCs 0-3, this program's kernel ran on TPCs 1" \
		"README's libsmctrl program under -g 1"
	ldd "$WORK/prog" | grep -q "$dest/opt/nvt/lib/nvtaskset/libnvtaskset.so" || die "not the installed shim: $(ldd "$WORK/prog")"
	cmp "$ROOT/tools/completion/nvtaskset.bash" "$dest/opt/nvt/share/bash-completion/completions/nvtaskset"
	cmp "$ROOT/README.md" "$dest/opt/nvt/share/doc/nvtaskset/README.md"
	# The documentation pages, beside README as its links name them; each one a man page names.
	local ndocs=0 page
	for f in "$ROOT"/docs/*.md; do
		cmp "$f" "$dest/opt/nvt/share/doc/nvtaskset/docs/${f##*/}"
		ndocs=$((ndocs + 1))
	done
	for page in $(grep -ohE 'docs/[a-z-]+\.md' "$ROOT"/man/*.[138] | sort -u); do
		[ -f "$dest/opt/nvt/share/doc/nvtaskset/$page" ] || die "the man pages name $page, which make install does not install"
	done
	# The example programs the pages point at, where their links find them.
	for page in $(grep -ohE 'docs/examples/[a-z_-]+\.c' "$ROOT"/README.md "$ROOT"/docs/*.md | sort -u); do
		cmp "$ROOT/$page" "$dest/opt/nvt/share/doc/nvtaskset/$page"
		ndocs=$((ndocs + 1))
	done
	# The Slurm plugin and its cli_filter, where this tree builds the plugin.
	if [ -f "$WORK/build.dest/lib/nvtaskset/spank_nvtaskset.so" ]; then
		for f in lib/nvtaskset/spank_nvtaskset.so share/nvtaskset/cli_filter.lua; do
			[ -f "$dest/opt/nvt/$f" ] || die "missing $f after install"
		done
		files=16
	fi
	# The metrics exporter, where this tree builds it (libmicrohttpd's header): it serves.
	if [ -f "$B/lib/nvtaskset/nvtaskset-exporter" ]; then
		[ -x "$dest/opt/nvt/lib/nvtaskset/nvtaskset-exporter" ] || die "missing the exporter after install"
		files=$((${files:-14} + 1))
		"$dest/opt/nvt/bin/nvtaskset" --exporter 127.0.0.1:0 2>"$WORK/exporter.err" &
		local exporter=$!
		wait_for 10 grep -q "serving the metrics on" "$WORK/exporter.err"
		kill -TERM "$exporter"
		wait "$exporter" || die "the installed exporter: $(cat "$WORK/exporter.err")"
	fi
	# (And make uninstall's record of the directories the install made.)
	[ "$(find "$dest" -type f | wc -l)" == "$((${files:-14} + ndocs))" ] || die "unexpected files: $(find "$dest" -type f)"
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 /usr/bin/env
	has "$out" "LD_PRELOAD=$dest/opt/nvt/lib/nvtaskset/libnvtaskset.so"
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 "$APP" launch 1
	has "$out" "tpcs=2 hung=0"
	# --profile --beside-hog finds the installed hog.
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --profile --no-mps --rounds 1 --sizes 33 --beside-hog "$APP" launch 1
	eq "$rc" 0
	has "$out" "beside a memory-bandwidth hog"
	uninstall_tree "$dest" PREFIX=/opt/nvt
	# The directories the install made are gone; the one that was there before stays.
	eq "$(cd "$dest" && find . -mindepth 1 | sort | tr '\n' ' ')" "./opt ./opt/nvt ./opt/nvt/bin " \
		"what is left after uninstall"
}
t_install_libdir() {
	# A distribution's LIBDIR: the command finds its shim there, staged or not.
	local dest=$WORK/dest64 root=$WORK/root64 f
	install_tree "$dest" PREFIX=/usr LIBDIR=/usr/lib64/nvtaskset
	for f in lib64/nvtaskset/libnvtaskset.so lib64/nvtaskset/wrapper/libcuda.so.1; do
		[ -f "$dest/usr/$f" ] || die "missing $f after install"
	done
	[ ! -e "$dest/usr/lib/nvtaskset" ] || die "installed into lib/ despite LIBDIR"
	run_rc out rc "$dest/usr/bin/nvtaskset" --no-mps -c 2 /usr/bin/env
	eq "$rc" 0
	has "$out" "LD_PRELOAD=$dest/usr/lib64/nvtaskset/libnvtaskset.so"
	run_rc out rc "$dest/usr/bin/nvtaskset" --no-mps -c 2 "$APP" launch 1
	has "$out" "tpcs=2 hung=0"
	# The LIBDIR compiled in, when the command is not beside its tree.
	grep -q /usr/lib64/nvtaskset "$dest/usr/bin/nvtaskset" || die "LIBDIR not compiled in"
	uninstall_tree "$dest" PREFIX=/usr LIBDIR=/usr/lib64/nvtaskset
	# Not staged (as PREFIX=$HOME/.local is), with an ldconfig that says when it runs and only
	# answers questions (the machine's cache stays as it is).
	mkdir "$WORK/ldc"
	printf '#!/bin/sh\necho "ldconfig $*" >>"%s"\ncase " $* " in *" -N "*) exec /sbin/ldconfig "$@" ;; esac\n' \
		"$WORK/ldconfig.log" >"$WORK/ldc/ldconfig"
	chmod +x "$WORK/ldc/ldconfig"
	PATH=$WORK/ldc:$PATH submake -s B="$WORK/build.root64" install PREFIX="$root/usr" LIBDIR="$root/usr/lib64/nvt" \
		>"$WORK/install.log" 2>&1 || die "make install failed: $(cat "$WORK/install.log")"
	# Where the loader and pkg-config do not look, the install says what finds libsmctrl, and it
	# does: pkg-config, the linker, ctypes.util.find_library.
	if [ "$(id -u)" == 0 ]; then
		grep -qx 'ldconfig ' "$WORK/ldconfig.log" || die "install as root did not run ldconfig"
	fi
	local note
	note=$(grep '^  export ' "$WORK/install.log") || die "no note on where libsmctrl is: $(cat "$WORK/install.log")"
	has "$note" "export LD_LIBRARY_PATH=$root/usr/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} LIBRARY_PATH=$root/usr/lib"
	has "$note" "export PKG_CONFIG_PATH=$root/usr/lib/pkgconfig"
	run_rc out rc bash -c "$note
		pkg-config --cflags --libs libsmctrl &&
		cc -o '$WORK/prog' -x c - \$(pkg-config --cflags --libs libsmctrl) -L'$FAKEDIR' -lcuda <<<'#include <libsmctrl.h>
int main(void) { libsmctrl_set_global_mask(0); return 0; }' &&
		python3 -c 'import ctypes, ctypes.util; n = ctypes.util.find_library(\"smctrl\"); ctypes.CDLL(n); print(\"found\", n)'"
	eq "$rc" 0 "following the note: $out"
	has "$out" "-I$root/usr/include"
	has "$out" "found libsmctrl.so"
	[ -x "$WORK/prog" ] || die "no program built against the install"
	# Uninstalled: no error (its directories' rmdir), the loader's cache rebuilt, no link left.
	: >"$WORK/ldconfig.log"
	run_rc out rc env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$WORK/ldc:$PATH" make -C "$ROOT" -j1 B="$WORK/build.root64" uninstall \
		PREFIX="$root/usr" LIBDIR="$root/usr/lib64/nvt"
	eq "$rc" 0 "make uninstall: $out"
	hasnt "$out" "Error"
	hasnt "$out" "ignored"
	if [ "$(id -u)" == 0 ]; then
		grep -qx 'ldconfig ' "$WORK/ldconfig.log" || die "uninstall as root did not run ldconfig"
	fi
	[ ! -e "$root/usr/lib/libsmctrl.so" ] && [ ! -e "$root/usr/lib64/nvt" ] || die "left after uninstall: $(find "$root")"
	PATH=$WORK/ldc:$PATH submake -s B="$WORK/build.root64" install PREFIX="$root/usr" LIBDIR="$root/usr/lib64/nvt" \
		>"$WORK/install.log" 2>&1 || die "make install failed: $(cat "$WORK/install.log")"
	mkdir -p "$WORK/elsewhere"
	cp "$root/usr/bin/nvtaskset" "$WORK/elsewhere/"
	run_rc out rc "$WORK/elsewhere/nvtaskset" --no-mps -c 2 /usr/bin/env
	eq "$rc" 0
	has "$out" "LD_PRELOAD=$root/usr/lib64/nvt/libnvtaskset.so"
	# NVTASKSET_SHIM still wins.
	run_rc out rc env NVTASKSET_SHIM="$SHIM" "$WORK/elsewhere/nvtaskset" --no-mps -c 2 /usr/bin/env
	has "$out" "LD_PRELOAD=$SHIM"
	rm -rf "$root"
	run_rc out rc "$WORK/elsewhere/nvtaskset" --no-mps -c 2 /usr/bin/env
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot find the nvtaskset shim in $WORK/elsewhere/../lib64/nvt, $WORK/elsewhere/../lib/nvtaskset or $root/usr/lib64/nvt"
}
t_build_flags() {
	# A packager's flags: a fortification level of their own, hardening link flags.
	local b=$WORK/build.flags
	submake -s B="$b" CFLAGS="-O2 -g -Wp,-D_FORTIFY_SOURCE=3" CPPFLAGS="-DNVT_PACKAGER_FLAG" \
		LDFLAGS="-Wl,-z,relro -Wl,-z,now" WERROR=1 >"$WORK/flags.log" 2>&1 ||
		die "build with packager flags failed: $(cat "$WORK/flags.log")"
	hasnt "$(cat "$WORK/flags.log")" "warning"
	readelf -d "$b/bin/nvtaskset" | grep -q 'BIND_NOW' || die "LDFLAGS not used to link the command"
	readelf -d "$b/lib/nvtaskset/libnvtaskset.so" | grep -q 'BIND_NOW' || die "LDFLAGS not used for the shim"
	readelf -lW "$b/bin/nvtaskset" | grep -q GNU_RELRO || die "no RELRO segment"
	has "$(cat "$b/flags")" "-DNVT_PACKAGER_FLAG"
	# New flags rebuild everything; the same flags rebuild nothing.
	submake B="$b" CFLAGS="-O1" >"$WORK/flags.log" 2>&1 || die "rebuild failed"
	has "$(cat "$WORK/flags.log")" "-O1 -fPIC -fvisibility=hidden -c -o $b/obj/core/tpcset.o"
	submake B="$b" CFLAGS="-O1" >"$WORK/flags.log" 2>&1 || die "rebuild failed"
	hasnt "$(cat "$WORK/flags.log")" " -c -o "
	# A warning fails the build only with WERROR=1 (make check's and CI's build).
	submake -s B="$b" CFLAGS="-O2 -D_FORTIFY_SOURCE=1 -Wp,-D_FORTIFY_SOURCE=3" \
		>"$WORK/flags.log" 2>&1 || die "a warning failed the packager's build: $(cat "$WORK/flags.log")"
	has "$(cat "$WORK/flags.log")" "warning: \"_FORTIFY_SOURCE\" redefined"
	if submake -s B="$b.werror" CFLAGS="-O2 -D_FORTIFY_SOURCE=1 -Wp,-D_FORTIFY_SOURCE=3" WERROR=1 \
		>"$WORK/flags.log" 2>&1; then
		die "WERROR=1 let a warning pass"
	fi
	has "$(cat "$WORK/flags.log")" "error: \"_FORTIFY_SOURCE\" redefined"
}
# ---- One truth: --help, the man page, docs/usage.md and README ----

# The options --help-all lists in its Options section, short and long, one a line, sorted.
help_option_list() {
	"$NVT" --help-all | sed -n '/^Options:/,/^$/p' | grep -oE -- '^ {1,5}(-[a-zA-Z], )?--[a-z-]+' |
		grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u
}
# The options the man page's OPTIONS section describes (the line after each .TP).
man_option_list() {
	sed -n '/^\.SH OPTIONS/,/^\.SH [^O]/p' "$ROOT/man/nvtaskset.1" | sed 's/\\-/-/g' |
		awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' | grep -oE -- '(^|[ "])--?[a-zA-Z][a-z-]*' |
		grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u
}
# The options in the first column of docs/usage.md's options table.
usage_option_list() {
	sed -n '/^| option | meaning |$/,/^$/p' "$ROOT/docs/usage.md" | awk -F'|' 'NR > 2 { print $2 }' |
		grep -oE -- '(^|[ `])--?[a-zA-Z][a-z-]*' | grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u
}
# The options the parser takes: main.c's getopt_long string and long option table.
parser_option_list() {
	local main=$ROOT/tools/nvtaskset/main.c
	{
		sed -n 's/^#define SHORT_OPTIONS "+\([^"]*\)".*/\1/p' "$main" | tr -d ':' | grep -o . | sed 's/^/-/'
		grep -oE '\{"[a-z-]+", *(no|required|optional)_argument' "$main" | sed 's/{"\([a-z-]*\)".*/--\1/'
	} | sort -u
}
# Usage lines: --help-all's, the man page's SYNOPSIS (roff stripped), docs/usage.md's code block under "## Synopsis".
help_synopsis() { "$NVT" --help-all | sed -n '2,/^$/p' | sed '/^$/d; s/^ //'; }
man_synopsis() {
	sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$ROOT/man/nvtaskset.1" | sed '1d;$d' |
		sed 's/\\-/-/g; s/\\f[BIRP]//g; s/^\.B //' |
		awk '/^\.br/ { print line; line = ""; next } { line = line (line ? " " : "") $0 } END { print line }'
}
usage_synopsis() {
	awk '/^## Synopsis$/ { use = 1; next } use && /^```/ { if (block) exit; block = 1; next } block' "$ROOT/docs/usage.md"
}

t_docs_options_agree() {
	# --help-all, the man page, docs/usage.md and the parser name the same options, short and
	# long; --help's common options are some of them.
	local help man usage parser
	help=$(help_option_list)
	man=$(man_option_list)
	usage=$(usage_option_list)
	parser=$(parser_option_list)
	[ "$(wc -l <<<"$help")" -ge 20 ] || die "too few options found in --help: $help"
	eq "$(comm -3 <(echo "$help") <(echo "$man") | tr -d '\t' | tr '\n' ' ')" "" "options only in --help or only in the man page"
	eq "$(comm -3 <(echo "$help") <(echo "$usage") | tr -d '\t' | tr '\n' ' ')" "" "options only in --help or only in docs/usage.md"
	eq "$(comm -3 <(echo "$help") <(echo "$parser") | tr -d '\t' | tr '\n' ' ')" "" "options only in --help or only in the parser"
	local common
	common=$("$NVT" --help | sed -n '/^Common options:/,/^$/p' | grep -oE -- '^ {1,5}(-[a-zA-Z], )?--[a-z-]+' |
		grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u)
	[ "$(wc -l <<<"$common")" -ge 10 ] || die "too few common options in --help: $common"
	eq "$(comm -23 <(echo "$common") <(echo "$help") | tr '\n' ' ')" "" "--help's options that --help-all lacks"
}
t_help_first_screen() {
	# --help is a first screen (at most 45 lines, each under 80 columns), and says where the
	# rest is; --help-all is the whole text, and names top's options, which top's usage
	# errors send to nvtaskset top --help.
	local help all
	help=$("$NVT" --help)
	all=$("$NVT" --help-all)
	[ "$(wc -l <<<"$help")" -le 45 ] || die "--help has $(wc -l <<<"$help") lines"
	[ "$(awk 'length > 79' <<<"$help")" == "" ] || die "--help's long lines: $(awk 'length > 79' <<<"$help")"
	has "$help" "Every option: nvtaskset --help-all; the rest: nvtaskset(1)."
	# The headline options are on it: a partition, a running task's, the list, a priority and
	# a memory limit.
	for opt in " -c, --tpc-list" " -n, --tpcs COUNT" " -p, --pid" " -l, --list" \
		"     --priority LEVEL" "     --mem SIZE" "     --dry-run"; do
		grep -qF -- "$opt" <<<"$help" || die "--help's first screen lacks '$opt'"
	done
	[ "$(wc -l <<<"$all")" -gt 100 ] || die "--help-all has $(wc -l <<<"$all") lines"
	for opt in --batch --frames --delay --sort; do
		has "$all" "$opt"
	done
	run_rc out rc "$NVT" top -o cpu
	eq "$rc" 1
	has "$out" "Try 'nvtaskset top --help' for more information."
	has "$("$NVT" top --help)" " -o, --sort FIELD"
}
t_docs_examples_agree() {
	# Each example --help gives is one of the man page's EXAMPLES, and --help
	# says where options go (after MASK they are COMMAND's).
	local help man line n=0
	help=$("$NVT" --help; "$NVT" --help-all)
	man=$(sed -n '/^\.SH EXAMPLES/,/^\.SH BUGS/p' "$ROOT/man/nvtaskset.1" | sed 's/\\-/-/g')
	while read -r line; do
		line=$(sed 's/  .*//' <<<"$line")
		grep -qxF -- "$line" <<<"$man" || die "--help's example '$line' is not in the man page's EXAMPLES"
		n=$((n + 1))
	done < <(sed -n '/^Examples:/,/^$/p' <<<"$help" | grep '^ nvtaskset ')
	[ "$n" -ge 10 ] || die "--help and --help-all give $n examples"
	has "$help" "Options go before MASK (or PID): what follows MASK is COMMAND."
}
t_docs_synopsis_agree() {
	local help man usage line
	help=$(help_synopsis)
	man=$(man_synopsis)
	usage=$(usage_synopsis)
	[ "$(wc -l <<<"$help")" -ge 5 ] || die "too few usage lines in --help: $help"
	while read -r line; do
		grep -qxF -- "$line" <<<"$man" || die "--help's '$line' is not in the man page's SYNOPSIS: $man"
		grep -qxF -- "$line" <<<"$usage" || die "--help's '$line' is not in docs/usage.md's synopsis: $usage"
	done <<<"$help"
	eq "$(wc -l <<<"$man")" "$(wc -l <<<"$help")" "usage lines in the man page"
	eq "$(wc -l <<<"$usage")" "$(wc -l <<<"$help")" "usage lines in docs/usage.md"
}
# The variables a section describes: the man page's ENVIRONMENT (.B/.BR lines after .TP),
# docs/environment.md's table (its first column); one a line, sorted.
man_env_list() {
	awk '/^\.SH / { env = ($0 == ".SH ENVIRONMENT"); next } env && tp { print; tp = 0 } env && /^\.TP/ { tp = 1 }' \
		"$ROOT/man/nvtaskset.1" | grep -oE '[A-Z][A-Z_]{3,}' | sort -u
}
envdoc_env_list() {
	sed -n '/^| variable | meaning |$/,/^$/p' "$ROOT/docs/environment.md" | awk -F'|' 'NR > 2 { print $2 }' |
		grep -oE '[A-Z][A-Z_]{3,}' | sort -u
}
t_docs_agree() {
	local opt help man usage sources
	help=$("$NVT" --help-all)
	man=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$ROOT/man/nvtaskset.1")
	usage=$(sed 's/`//g' "$ROOT/docs/usage.md")
	# What --json covers, as the issue found them disagreeing.
	for opt in "$(tr -s ' \n' ' ' <<<"$help")" "$man" "$usage"; do
		has "$opt" "what -p, -l, --topology, --mps status, --dry-run and -n's pick report as JSON"
	done
	# Every NVTASKSET_ variable the code reads is described in the man page's ENVIRONMENT
	# and in docs/environment.md, and both describe the same variables.
	sources=$(grep -rhoE '"NVTASKSET_[A-Z_]+"' "$ROOT/src" "$ROOT/tools" "$ROOT/include" | tr -d '"' | sort -u)
	[ "$(wc -l <<<"$sources")" -ge 10 ] || die "too few NVTASKSET_ variables found in the sources: $sources"
	eq "$(comm -23 <(echo "$sources") <(man_env_list) | tr '\n' ' ')" "" "variables the code reads that the man page's ENVIRONMENT lacks"
	eq "$(man_env_list | tr '\n' ' ')" "$(envdoc_env_list | tr '\n' ' ')" "the man page's ENVIRONMENT against docs/environment.md"
	for opt in CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_DEVICE_MAX_CONNECTIONS CUDA_VISIBLE_DEVICES; do
		grep -qx "$opt" <(man_env_list) || die "the man page's ENVIRONMENT lacks $opt"
	done
	has "$man" "$(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/src/nvtaskset.h")"
	# The test command README gives is the one CI runs.
	grep -q '^make check$' "$ROOT/README.md" || die "README lacks 'make check'"
	grep -q 'make check' "$ROOT/.ci/run" || die ".ci/run does not run make check"
	# The other suites: HACKING's table, which README points to.
	grep -q '^| `make check-slurm` |' "$ROOT/HACKING.md" || die "HACKING lacks 'make check-slurm'"
	has "$(cat "$ROOT/README.md")" "[HACKING.md](HACKING.md) gives each suite"
	grep -q '^make check-slurm$' "$ROOT/.ci/run" || die ".ci/run does not run make check-slurm"
	# Every page README links to exists.
	local link
	for link in $(grep -oE '\]\([^)#]+' "$ROOT/README.md" | sed 's/^](//'); do
		[ -e "$ROOT/$link" ] || die "README links to $link, which does not exist"
	done
}
# The variables PREFIX (FAKECUDA_, PRIOAPP_, ...) that the table under tests/fake/README.md's
# heading HEADING names in its first column, and those that FILES name in quotes; one a line, sorted.
fake_knobs_documented() {
	sed -n "/^## $2\$/,/^## /p" "$ROOT/tests/fake/README.md" | grep '^| `' | awk -F'|' '{ print $2 }' |
		grep -oE "$1[A-Z0-9_]+" | sort -u
}
fake_knobs_read() {
	local prefix=$1
	shift
	grep -hoE "\"${prefix}[A-Z0-9_]+\"" "$@" | tr -d '"' | sort -u
}
# Fails unless the table under HEADING names exactly the PREFIX variables that FILES read, and
# FILES read at least MIN of them (a source moved or renamed finds none).
fake_knobs_agree() {
	local prefix=$1 heading=$2 min=$3 code doc
	shift 3
	code=$(fake_knobs_read "$prefix" "$@")
	doc=$(fake_knobs_documented "$prefix" "$heading")
	[ "$(grep -c . <<<"$code")" -ge "$min" ] || die "too few $prefix variables found in the sources: $code"
	eq "$(comm -23 <(echo "$code") <(echo "$doc") | tr '\n' ' ')" "" "$prefix variables read that tests/fake/README.md's \"$heading\" lacks"
	eq "$(comm -13 <(echo "$code") <(echo "$doc") | tr '\n' ' ')" "" "$prefix variables in tests/fake/README.md's \"$heading\" that nothing reads"
}
t_docs_fake_knobs_agree() {
	# Every FAKECUDA_ variable the fake driver's sources read (getenv, env_long), every PRIOAPP_
	# one prioapp's sources read, and every FAKERM_, TESTSUB_, FAKEAPP_, MEMAPP_ and STALLREAD_
	# one that a source in tests/fake reads is in its table of tests/fake/README.md, and each
	# table names only variables that are read.
	local fake=("$ROOT"/tests/fake/*.c)
	fake_knobs_agree FAKECUDA_ "The driver's knobs" 30 "${fake[@]}"
	fake_knobs_agree PRIOAPP_ "prioapp's knobs" 15 "$ROOT"/tests/fake/prioapp*.c
	fake_knobs_agree FAKERM_ "fakerm's knobs" 2 "${fake[@]}"
	fake_knobs_agree TESTSUB_ "testsub's knobs" 1 "${fake[@]}"
	fake_knobs_agree FAKEAPP_ "fakeapp's knobs" 8 "${fake[@]}"
	fake_knobs_agree MEMAPP_ "memapp's knobs" 1 "${fake[@]}"
	fake_knobs_agree STALLREAD_ "stallread's knobs" 2 "${fake[@]}"
}
t_docs_topology_example() {
	# docs/usage.md's --topology example is real output: the fake driver has the H100's map.
	local example
	example=$(sed -n '/^\$ nvtaskset --topology$/,/^```$/p' "$ROOT/docs/usage.md" | sed '1,2d;$d')
	[ "$(wc -l <<<"$example")" -ge 10 ] || die "no --topology example in docs/usage.md"
	run_rc out rc "$NVT" --topology
	eq "$rc" 0
	eq "$example" "$(sed 1d <<<"$out")" "docs/usage.md's --topology example, after the GPU's name"
}
t_package_version() {
	# The Debian package's version is the command's (make deb checks it too).
	local version
	version=$(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/src/nvtaskset.h")
	eq "$(sed -n '1s/^nvtaskset (\([^)]*\)).*/\1/p' "$ROOT/debian/changelog")" "$version" "debian/changelog's version"
	eq "$("$NVT" --version)" "nvtaskset $version"
	[ -x "$ROOT/debian/rules" ] || die "debian/rules is not executable"
	# The .ci/run that CI runs builds and tests the package too.
	grep -qx 'make check-package' "$ROOT/.ci/run" || die ".ci/run does not run make check-package"
}
t_package_test_checks_first() {
	# make check-package looks for what it needs before it builds or installs anything, and
	# names every missing tool's Debian package (it failed on a machine without
	# bash-completion with "FAIL bash-completion is installed" after the whole build).
	local dir tool want=debhelper before
	mkdir "$WORK/bin"
	# Every program of the machine but debhelper's dh.
	for dir in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
		for tool in "$dir"/*; do
			[ -x "$tool" ] && [ ! -e "$WORK/bin/${tool##*/}" ] && [ "${tool##*/}" != dh ] &&
				ln -s "$tool" "$WORK/bin/${tool##*/}"
		done
	done
	[ -r /usr/share/bash-completion/bash_completion ] || want+=" bash-completion"
	before=$(ls -d /tmp/nvtaskset-package.* 2>/dev/null | wc -l)
	run_rc out rc env PATH="$WORK/bin" "$ROOT/tests/package-test.sh"
	eq "$rc" 1 "$out"
	eq "$out" "package-test: needs $want to build the package and check what it installs: apt-get install $want"
	eq "$(ls -d /tmp/nvtaskset-package.* 2>/dev/null | wc -l)" "$before" "package-test's directories"
}
t_messages_plain() {
	# What users read says what happened, not where a paper says so.
	local f found
	for f in "$NVT" "$SHIM" "$WRAPDIR/libcuda.so.1"; do
		strings "$f" >"$WORK/strings" || die "cannot read the strings of $f"
		grep -q 'nvtaskset: ' "$WORK/strings" || die "no message of nvtaskset's in $f"
		found=$(grep -Ei 'paper|pitfall|section [0-9]|HARDWARE-FACTS' "$WORK/strings" || true)
		[ -z "$found" ] || die "$f says: $found"
	done
}
t_exports() {
	local f syms
	for f in "$SHIM" "$WRAPDIR/libcuda.so.1"; do
		# The instance marker, libsmctrl's interface under the shim's own
		# prefix (libsmctrl.so forwards to it: include/libsmctrl.h), the
		# driver calls through which a program learns its SM count (shimsmcount.c),
		# and ioctl(2), through which it follows its channel groups (shimchan.c).
		syms=$(nm -D --defined-only "$f" | awk '{print $3}' | grep -v '^_' | grep -v '^nvtaskset_smctrl_' |
			sort | tr '\n' ' ')
		eq "$syms" "cuDeviceGetAttribute cuGetProcAddress cuGetProcAddress_v2 ioctl nvtaskset_shim_instance " \
			"exported symbols of $f"
		eq "$(nm -D --defined-only "$f" | grep -c ' T nvtaskset_smctrl_')" 10 "libsmctrl functions of $f"
	done
	readelf -d "$WRAPDIR/libcuda.so.1" | grep -q 'NEEDED.*\[libcuda.so\]' ||
		die "the wrapper does not depend on the real driver"
}
t_man_pages_break_lines() {
	# man renders the pages without a warning at 80 columns, and breaks every line at 60.
	command -v man >/dev/null || skip "needs man"
	local page out
	for page in "$ROOT"/man/*.[138]; do
		out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		eq "$out" "" "man --warnings at 80 columns of ${page##*/}"
		out=$(MANWIDTH=60 man --warnings -l "$page" 2>&1 >/dev/null | grep "can't break" || true)
		eq "$out" "" "lines man cannot break at 60 columns of ${page##*/}"
	done
}
