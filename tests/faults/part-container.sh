# A container stopped without its poststop hook (CONTAINER_TRIALS, 3), in a run directory that
# root's --cdi made (a tmpfs of 128 MiB, as containers get it): a container of the stand-in
# runtime (tests/e2e/helpers/cdirun.py) fills its run directory at the bottom of a 12-level
# tree, its runtime is killed (kill -9) and then the container's program ends: nothing runs its
# poststop hook. Root's -l must name the leftover with its size; then, by turns, the next
# container must start (its createRuntime hook removes the leftover, which filled the tmpfs)
# or the leftover's own poststop hook, run later, must remove it; and nothing of it may stay.
# Each step is bounded (60 s); else a hang, a crash, or "lost". Sourced by tests/faults/run.sh.
# shellcheck shell=bash

# left_container TAG: a container that fills its run directory and is left without its
# poststop hook; sets LEFT_ID (its id) once its program ended.
left_container() {
	local tag=$1 runtime i first bundle=$WORK/bundle.$1
	rm -rf "$bundle" "$WORK/u/$tag.ready" "$WORK/u/$tag.stop" "$WORK/u/$tag.pid"
	mkdir -p "$bundle"
	# (the container's /run/nvtaskset: cdirun.py's mount at BUNDLE/rootfs/run/nvtaskset)
	python3 "$CDIRUN" --bundle "$bundle" --spec-dir "$WORK/container-left.cdi" --device f/tpcs=4 \
		--pid-file "$WORK/u/$tag.pid" -- sh -c 'r=$1/rootfs/run/nvtaskset/d/d/d/d/d/d/d/d/d/d/d/d
		mkdir -p "$r" && dd if=/dev/zero of="$r/fill" bs=1M 2>/dev/null
		: >"$2.ready"; while [ ! -e "$2.stop" ]; do sleep 0.05; done' - "$bundle" "$WORK/u/$tag" \
		>"$WORK/u/$tag.out" 2>&1 &
	runtime=$!
	LEFT_ID=
	for ((i = 0; i < 3000; i++)); do
		[ -e "$WORK/u/$tag.ready" ] && break
		kill -0 "$runtime" 2>/dev/null || break
		sleep 0.02
	done
	if [ ! -e "$WORK/u/$tag.ready" ]; then
		bad hang "$tag: the container did not fill its run directory: $(cat "$WORK/u/$tag.out")"
		kill -KILL "$runtime" 2>/dev/null
		return 1
	fi
	first=$(cat "$WORK/u/$tag.pid")
	kill -KILL "$runtime"
	wait "$runtime" 2>/dev/null
	P_FAULTS=$((P_FAULTS + 1))
	touch "$WORK/u/$tag.stop"
	for ((i = 0; i < 3000; i++)); do
		[ -d "/proc/$first" ] || break
		sleep 0.02
	done
	[ ! -d "/proc/$first" ] || { bad hang "$tag: the container's program did not end"; return 1; }
	LEFT_ID=cdirun-$first
	[ -e "$NVTASKSET_RUNDIR/containers/$LEFT_ID/run/d/d/d/d/d/d/d/d/d/d/d/d/fill" ] || {
		bad lost "$tag: no leftover to look at: $(ls -R "$NVTASKSET_RUNDIR/containers" | head -5)"
		return 1
	}
}

# names_leftover WHAT ID: root's -l names container ID's directory, with its size (the tmpfs,
# 128 MiB, filled: at least 100 MiB).
names_leftover() {
	local size
	OUT=$(timeout 60 "$NVT" -l 2>&1) && RC=0 || RC=$?
	judge "$RC" "$1: -l"
	size=$(sed -n "s|.*warning: $NVTASKSET_RUNDIR/containers/$2 outlived its container (its first process, pid [0-9]*, ended): \([0-9.]*\) MiB in [0-9]* entries.*|\1|p" <<<"$OUT")
	[ -n "$size" ] && [ "${size%.*}" -ge 100 ] || bad lost "$1: -l does not name the leftover with its size: $OUT"
	echo "  $1: -l: ${size:-?} MiB"
}

# gone_leftover WHAT: no container's directory is left, and -l names none.
gone_leftover() {
	[ -z "$(ls -A "$NVTASKSET_RUNDIR/containers" 2>/dev/null)" ] ||
		bad lost "$1: left: $(ls -A "$NVTASKSET_RUNDIR/containers")"
	OUT=$(timeout 60 "$NVT" -l 2>&1) && RC=0 || RC=$?
	judge "$RC" "$1: -l after"
	! grep -q "outlived its container" <<<"$OUT" || bad lost "$1: -l still names a leftover: $OUT"
}

part_container() {
	local i n=${CONTAINER_TRIALS:-3}
	part_begin "container: stopped without its poststop hook ($n trials)"
	if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
		echo "  skipped: cannot unshare a PID namespace"
		part_end
		return
	fi
	shared_dir container-left
	for ((i = 0; i < n; i++)); do
		left_container "c$i" || continue
		P_RUNS=$((P_RUNS + 1))
		names_leftover "trial $i" "$LEFT_ID"
		if ((i % 2 == 0)); then
			# The next container starts, beside a leftover that filled the run directory.
			mkdir -p "$WORK/bundle.next$i"
			OUT=$(timeout 60 python3 "$CDIRUN" --bundle "$WORK/bundle.next$i" \
				--spec-dir "$WORK/container-left.cdi" --device f/tpcs=4 -- "$APP" launch 1 2>&1) &&
				RC=0 || RC=$?
			judge "$RC" "trial $i: the next container"
			[ "$RC" == 0 ] && grep -q "tpcs=[-0-9,]* hung=0" <<<"$OUT" ||
				bad lost "trial $i: the next container did not start: $OUT"
		else
			# Its own poststop hook, run later (a runtime's clean-up).
			OUT=$(printf '{"ociVersion":"1.0.2","id":"%s","status":"stopped","bundle":"/"}' "$LEFT_ID" |
				timeout 60 "$NVT" --cdi-hook poststop 2>&1) && RC=0 || RC=$?
			judge "$RC" "trial $i: the later poststop hook"
		fi
		gone_leftover "trial $i"
	done
	shared_done
	part_end
}
