#!/usr/bin/env bash
# What the fake driver (tests/fake/fakemem.c) does with contexts, mipmapped arrays, the _ptsz
# forms and shareable handles, checked on the real driver: tests/fake/memapp.c, with no
# nvtaskset, runs each sequence tests/e2e/mem.sh gives the fake, and the device's free memory
# (cuMemGetInfo, the whole GPU's: nothing else may run on it) moves as the fake says:
#  - cuCtxDestroy (each of cuCtxCreate_v2, _v3, _v4) gives back what was allocated in it, by its
#    old name too;
#  - cuDevicePrimaryCtxReset gives back the primary context's memory, not a created context's;
#  - the primary context's last cuDevicePrimaryCtxRelease gives it back too, one that is not the
#    last nothing, and nvtaskset --mem counts it given back (with nvtaskset built);
#  - cuMemCreate's, cuMemAllocAsync's and a pool's memory outlive the primary context's reset;
#  - a mipmapped array takes its levels (each extent halved), a layered one its layers, a 1D
#    chain twice its first level, a cubemap its faces at every level;
#  - cuMemAllocAsync_ptsz, cuMemAllocFromPoolAsync_ptsz and cuMemFreeAsync_ptsz are given by
#    cuGetProcAddress with the per-thread default stream's flag, and work;
#  - cuMemImportFromShareableHandle takes no memory, and the memory stays while an import
#    lives after the exporter released its handle;
#  - a cuMemCreate handle released while mapped keeps its memory until cuMemUnmap; one
#    cuMemUnmap ends two mappings that lie end to end; an unmap of part of a mapping is refused;
#    cuMemAddressFree of a range still mapped is refused and gives back nothing; and nvtaskset
#    --mem counts the memory until the unmap (with nvtaskset built).
# Prints PASS/FAIL lines and every memapp line to LOGDIR/memdriver.txt.
#
# Usage: tests/gpu/memdriver.sh LOGDIR   (memapp is built into LOGDIR)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${1:-$ROOT/build/gpu}
W=$(mktemp -d /tmp/nvt-memdrv.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$LOG"
APP=$LOG/memapp
cc -std=gnu11 -O2 -I"$ROOT/include" -I"$ROOT/src" -o "$APP" "$ROOT/tests/fake/memapp.c" -ldl || exit 1
PASS=0 FAIL=0
MIB=1048576
pass() { PASS=$((PASS + 1)); echo "PASS memdriver: $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL memdriver: $1: $2"; }
# run NAME STEPS...: memapp's lines, kept in the log under NAME.
run() {
	local name=$1
	shift
	echo "== $name: $*" >>"$LOG/memdriver.txt"
	timeout 60 "$APP" "$@" 2>&1 | tee -a "$LOG/memdriver.txt"
}
# frees OUT: the free= values of OUT's info lines, one a line, in MiB.
frees() { sed -n 's/^info rc=0 free=\([0-9]*\).*/\1/p' <<<"$1" | awk '{ print int($1 / 1048576) }'; }
# nth OUT N: the N-th (1-based) free value in MiB.
nth() { frees "$1" | sed -n "${2}p"; }
all_ok() { ! grep -qv 'rc=0' <<<"$1"; }
# near GOT WANT SLACK: |GOT - WANT| <= SLACK (MiB).
near() { [ -n "$1" ] && [ $(($1 - $2)) -le "$3" ] && [ $(($2 - $1)) -le "$3" ]; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$LOG/memdriver-env.txt" 2>&1
: >"$LOG/memdriver.txt"

for v in 2 3 4; do
	out=$(run "ctx_v$v" "ctx:$v" alloc:512M pitch:4096:32768 array:4096:16384 mipmap:4096:4096:1 info ctxdestroy info)
	a=$(nth "$out" 1) b=$(nth "$out" 2)
	# 512 + 128 + 256 + 64 MiB were taken in the context.
	if all_ok "$out" && [ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -ge 960 ]; then
		pass "cuCtxCreate_v$v: cuCtxDestroy gave back $((b - a)) MiB (960 taken in it)"
	else
		fail "cuCtxCreate_v$v" "destroy gave back $((${b:-0} - ${a:-0})) MiB, not >= 960"
	fi
done

# cuCtxDestroy by its old name (cuGetProcAddress at CUDA 3.2, and the library's export): the
# same call (the shim follows its callback id of its own).
for via in proc dlsym; do
	out=$(MEMAPP_VIA=$via run "ctx_destroy1_$via" ctx alloc:512M info ctxdestroy1 info)
	a=$(nth "$out" 1) b=$(nth "$out" 2)
	if all_ok "$out" && [ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -ge 512 ]; then
		pass "cuCtxDestroy by its old name ($via) gave back $((b - a)) MiB (512 taken in it)"
	else
		fail "cuCtxDestroy by its old name ($via)" "gave back $((${b:-0} - ${a:-0})) MiB, not >= 512"
	fi
done

out=$(run reset_created alloc:256M ctx alloc:2G info reset info)
a=$(nth "$out" 1) b=$(nth "$out" 2)
if all_ok "$out" && [ -n "$b" ] && [ $((b - a)) -ge 256 ] && [ $((b - a)) -lt 2048 ]; then
	pass "the primary context's reset gave back $((b - a)) MiB (256 of its own; the created context's 2048 kept)"
else
	fail "reset beside a created context" "gave back $((${b:-0} - ${a:-0})) MiB, not 256 to 2047"
fi

# The primary context's overhead alone, then with 1 GiB of cuMemCreate's, cuMemAllocAsync's
# and cuMemAllocFromPoolAsync's memory taken in it: a reset that gives back 1 GiB more than the
# overhead freed that memory.
out=$(run reset_bare ctx info reset info)
a=$(nth "$out" 1) b=$(nth "$out" 2)
bare=$((${b:-0} - ${a:-0}))
echo "memdriver: the primary context's reset alone gave back $bare MiB"
for kind in create async pool; do
	out=$(run "reset_$kind" "$kind:1G" ctx info reset info)
	a=$(nth "$out" 1) b=$(nth "$out" 2)
	if all_ok "$out" && [ -n "$b" ] && [ $((b - a - bare)) -lt 512 ]; then
		pass "$kind's 1024 MiB outlived the primary context's reset (it gave back $((b - a)) MiB)"
	else
		fail "$kind over a reset" "the reset gave back $((${b:-0} - ${a:-0})) MiB ($bare alone)"
	fi
done

# The primary context's last release (memapp retained it once) destroys it: its 1 GiB comes
# back; a release that is not the last (retained twice) gives back nothing. Under nvtaskset with
# a 2 GiB limit, 1.5 GiB taken, the context released and retained, 1.5 GiB more is allowed: the
# shim followed the release (its callback id) and the driver said the context was gone.
out=$(run release_last alloc:1G info release retain info)
a=$(nth "$out" 1) b=$(nth "$out" 2)
if all_ok "$out" && [ -n "$b" ] && [ $((b - a)) -ge 1024 ]; then
	pass "the primary context's last release gave back $((b - a)) MiB (1024 of its own)"
else
	fail "the last release" "gave back $((${b:-0} - ${a:-0})) MiB, not >= 1024"
fi
out=$(run release_not_last retain alloc:1G info release info)
a=$(nth "$out" 1) b=$(nth "$out" 2)
if all_ok "$out" && [ -n "$b" ] && near "$((b - a))" 0 64; then
	pass "a release that is not the last gave back $((b - a)) MiB"
else
	fail "a release not the last" "gave back $((${b:-0} - ${a:-0})) MiB, not ~0"
fi
if [ -x "$ROOT/build/bin/nvtaskset" ]; then
	echo "== release_shim" >>"$LOG/memdriver.txt"
	out=$(timeout 60 "$ROOT/build/bin/nvtaskset" --no-mps --mem 2G "$APP" alloc:1536M release retain alloc:1536M \
		alloc:1G 2>>"$LOG/memdriver.txt" | tee -a "$LOG/memdriver.txt")
	if [ "$out" = "alloc rc=0
release rc=0
retain rc=0
alloc rc=0
alloc rc=2" ]; then
		pass "nvtaskset --mem 2G: after the last release 1536 MiB taken again, 1 GiB more refused"
	else
		fail "nvtaskset --mem over the last release" "$(tr '\n' ' ' <<<"$out")"
	fi
	echo "== destroy1_shim" >>"$LOG/memdriver.txt"
	out=$(timeout 60 "$ROOT/build/bin/nvtaskset" --no-mps --mem 2G "$APP" ctx alloc:1536M ctxdestroy1 ctx \
		alloc:1536M alloc:1G 2>>"$LOG/memdriver.txt" | tee -a "$LOG/memdriver.txt")
	if [ "$out" = "ctx rc=0
alloc rc=0
ctxdestroy1 rc=0
ctx rc=0
alloc rc=0
alloc rc=2" ]; then
		pass "nvtaskset --mem 2G: after cuCtxDestroy by its old name 1536 MiB taken again, 1 GiB more refused"
	else
		fail "nvtaskset --mem over cuCtxDestroy by its old name" "$(tr '\n' ' ' <<<"$out")"
	fi
	# Stream-ordered allocations under the shim on the real driver: on a created stream (the
	# shim asks its device, cuStreamGetDevice, in the allocation's callback) and from each
	# kind of pool it follows, 1536 MiB then 1 GiB more (refused) under --mem 2G, freed.
	for steps in "stream async" "stream asyncptsz" "mkpool:0 pool" "defpool:0 pool" "devpool:0 pool" \
		"locdefpool:0 pool" "locpool:0 pool"; do
		# shellcheck disable=SC2086 # (its two words)
		set -- $steps
		echo "== stream_ordered_shim $steps" >>"$LOG/memdriver.txt"
		out=$(timeout 60 "$ROOT/build/bin/nvtaskset" --no-mps --mem 2G "$APP" "$1" "$2:1536M" "$2:1G" \
			free:0 "$2:1536M" 2>>"$LOG/memdriver.txt" | tee -a "$LOG/memdriver.txt")
		if [ "$out" = "${1%%:*} rc=0
$2 rc=0
$2 rc=2
free rc=0
$2 rc=0" ]; then
			pass "nvtaskset --mem 2G, $steps: 1536 MiB taken, 1 GiB more refused, taken again after the free"
		else
			fail "nvtaskset --mem 2G, $steps" "$(tr '\n' ' ' <<<"$out")"
		fi
	done
fi

# Levels: 64 MiB at level 0 (4096 x 4096 x 4 bytes), 16 at level 1, 4 at level 2, ...
out=$(run mipmap info mipmap:4096:4096:1 info mipmap:4096:4096:2 info mipmap:4096:4096:13 info \
	layered:4096:4096:4:1 info)
f0=$(nth "$out" 1) f1=$(nth "$out" 2) f2=$(nth "$out" 3) f3=$(nth "$out" 4) f4=$(nth "$out" 5)
if all_ok "$out" && near $((f0 - f1)) 64 4 && near $((f1 - f2)) 80 4 && near $((f2 - f3)) 85 4 &&
	near $((f3 - f4)) 256 8; then
	pass "mipmapped arrays take their levels: 1, 2, 13 levels $((f0 - f1)), $((f1 - f2)), $((f2 - f3)) MiB; 4 layers $((f3 - f4)) MiB"
else
	fail "mipmapped arrays" "1, 2, 13 levels, 4 layers took $((${f0:-0} - ${f1:-0})), $((${f1:-0} - ${f2:-0})), $((${f2:-0} - ${f3:-0})), $((${f3:-0} - ${f4:-0})) MiB (want ~64, 80, 85, 256)"
fi

# A chain that halves one extent takes twice its first level: 2048 layers of 16384 floats, with
# one level and with all 15 (the driver gives each 1D layer 8 rows, 1024 MiB for the first level,
# as the fake and the shim count it: H200, driver 580.159.04); a cubemap keeps its 6 faces at
# every level: 4096 x 4096 floats take 384 MiB with one level, 512 with all 13.
out=$(run mipmap_chains info layered:16384:0:2048:1 info layered:16384:0:2048:15 info cubemap:4096:1 \
	info cubemap:4096:13 info)
f0=$(nth "$out" 1) f1=$(nth "$out" 2) f2=$(nth "$out" 3) f3=$(nth "$out" 4) f4=$(nth "$out" 5)
if all_ok "$out" && near $((f1 - f2)) $((2 * (f0 - f1))) 8 && near $((f2 - f3)) 384 4 &&
	near $((f3 - f4)) 512 8; then
	pass "1D layered chains and cubemaps take their levels: $((f0 - f1)), $((f1 - f2)), $((f2 - f3)), $((f3 - f4)) MiB"
else
	fail "1D layered chains and cubemaps" "1 and 15 levels of 2048 layers, 1 and 13 of a cubemap took $((${f0:-0} - ${f1:-0})), $((${f1:-0} - ${f2:-0})), $((${f2:-0} - ${f3:-0})), $((${f3:-0} - ${f4:-0})) MiB (want all 15 twice the one, 384, 512)"
fi

for via in proc dlsym; do
	out=$(MEMAPP_VIA=$via run "ptsz_$via" asyncptsz:64M poolptsz:64M freeptsz:0 freeptsz:1 info)
	if all_ok "$out" && [ "$(grep -c 'rc=0' <<<"$out")" = 5 ]; then
		pass "the _ptsz forms ($via) take and free"
	else
		fail "the _ptsz forms ($via)" "$(tr '\n' ' ' <<<"$out")"
	fi
done

# The exporter takes 1 GiB and exports it; the importer imports (its free memory must not move
# by the import), the exporter releases its handle (the memory stays: the import holds it), then
# the importer releases its import.
timeout 60 "$APP" create:1G "shexport:$W/h" "wait:$W/g1" free:0 info "wait:$W/g2" >"$W/exp.out" 2>&1 &
exp=$!
for _ in $(seq 300); do [ -s "$W/g1.ready" ] && break; sleep 0.1; done
timeout 60 "$APP" info "shimport:$W/h" info "wait:$W/b1" free:0 info >"$W/imp.out" 2>&1 &
imp=$!
for _ in $(seq 300); do [ -s "$W/b1.ready" ] && break; sleep 0.1; done
touch "$W/g1"
for _ in $(seq 300); do [ -s "$W/g2.ready" ] && break; sleep 0.1; done
touch "$W/b1"
wait "$imp"
touch "$W/g2"
wait "$exp"
eo=$(cat "$W/exp.out") io=$(cat "$W/imp.out")
printf '== exporter\n%s\n== importer\n%s\n' "$eo" "$io" >>"$LOG/memdriver.txt"
i0=$(nth "$io" 1) i1=$(nth "$io" 2) i2=$(nth "$io" 3) e1=$(nth "$eo" 1)
if all_ok "$eo" && all_ok "$io" && near $((i0 - i1)) 0 4 && near $((i1 - e1)) 0 4; then
	pass "an import took $((i0 - i1)) MiB; the exporter's release left the memory held ($((e1 - i1)) MiB back); the import's release gave back $((i2 - e1)) MiB"
else
	fail "shareable handles" "import took $((${i0:-0} - ${i1:-0})) MiB, exporter's release gave back $((${e1:-0} - ${i1:-0})) MiB"
fi

# cuMemCreate's memory and its mappings (tests/e2e/memfree.sh's t_mem_handle_mapped_after_release
# and t_mem_one_unmap_ends_two_mappings on the fake): released while mapped, 1 GiB stays taken
# until the unmap; two handles of 512 MiB mapped end to end, released, come back by one unmap.
out=$(run mapped_release info create:1G vmap free:0 info vunmap info)
a=$(nth "$out" 1) b=$(nth "$out" 2) c=$(nth "$out" 3)
if all_ok "$out" && [ -n "$c" ] && near $((a - b)) 1024 64 && near $((c - b)) 1024 64; then
	pass "a handle released while mapped kept $((a - b)) MiB; its unmap gave back $((c - b))"
else
	fail "a handle released while mapped" "kept $((${a:-0} - ${b:-0})) MiB, the unmap gave back $((${c:-0} - ${b:-0})) (want ~1024 both)"
fi
out=$(run mapped_two info create:512M create:512M vmapall free:0 free:1 info vunmap info)
a=$(nth "$out" 1) b=$(nth "$out" 2) c=$(nth "$out" 3)
if all_ok "$out" && [ -n "$c" ] && near $((a - b)) 1024 64 && near $((c - b)) 1024 64; then
	pass "two handles mapped end to end and released kept $((a - b)) MiB; one unmap gave back $((c - b))"
else
	fail "one unmap of two mappings" "$(tr '\n' ' ' <<<"$out")"
fi
out=$(run mapped_cut create:1G vmap vunmap:512M vunmap)
if [ "$out" = "create rc=0
vmap rc=0
vunmap rc=1
vunmap rc=0" ]; then
	pass "an unmap of half a mapping was refused (CUDA_ERROR_INVALID_VALUE), as the fake refuses it"
else
	fail "an unmap of half a mapping" "$(tr '\n' ' ' <<<"$out")"
fi
out=$(run mapped_addrfree info create:1G vmap free:0 info vfree info)
a=$(nth "$out" 1) b=$(nth "$out" 2) c=$(nth "$out" 3)
# The driver refuses it and keeps the memory (as the fake does; H200, runs G44-G45).
if grep -qx 'vfree rc=1' <<<"$out" && near "$c" "$b" 2; then
	pass "cuMemAddressFree of a range still mapped was refused and gave back nothing, as the fake does"
else
	fail "cuMemAddressFree of a mapped range" "$(grep '^vfree' <<<"$out"), gave back $((${c:-0} - ${b:-0})) MiB of $((${a:-0} - ${b:-0}))"
fi
if [ -x "$ROOT/build/bin/nvtaskset" ]; then
	for steps in "create:1536M vmap free:0" "create:768M create:768M vmapall free:0 free:1"; do
		echo "== mapped_shim $steps" >>"$LOG/memdriver.txt"
		# shellcheck disable=SC2086 # (its words)
		out=$(timeout 60 "$ROOT/build/bin/nvtaskset" --no-mps --mem 2G "$APP" $steps create:1G vunmap \
			create:1536M 2>>"$LOG/memdriver.txt" | tee -a "$LOG/memdriver.txt")
		if [ "$(tail -n 3 <<<"$out")" = "create rc=2
vunmap rc=0
create rc=0" ] && ! head -n -3 <<<"$out" | grep -qv 'rc=0'; then
			pass "nvtaskset --mem 2G, $steps: 1 GiB more refused while mapped, 1536 MiB taken after the unmap"
		else
			fail "nvtaskset --mem 2G, $steps" "$(tr '\n' ' ' <<<"$out")"
		fi
	done
fi

echo "memdriver: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
