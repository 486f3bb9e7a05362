# mk/gpu.mk - what runs on a machine with an NVIDIA GPU, included by the
# Makefile: make check-gpu and the benchmarks.
#
# SPDX-License-Identifier: MIT

# GPU tests: on a machine with an NVIDIA Hopper GPU, nvcc and python3.
GPU_LOG ?= $(B)/gpu
check-gpu: all
	@tests/gpu/check-gpu.sh $(GPU_LOG)

# Preemptive priorities on the GPU, read back and by their effect (tests/gpu/preempt.sh): ~1 min.
check-gpu-preempt: all
	@tests/gpu/preempt.sh $(GPU_LOG)

# The bridge between a high time-sliced task's steps, by its effect on the GPU's timeline
# (tests/gpu/bridge.sh; nvcc, cuBLAS): ~1 min.
check-gpu-bridge: all
	@tests/gpu/bridge.sh $(GPU_LOG)

# A service that waits by host functions (as JAX does) beside a time-sliced batch: its requests
# end, the batch takes no share (tests/gpu/hostfn.sh; gcc, the CUDA headers): ~30 s.
check-gpu-hostfn: all
	@tests/gpu/hostfn.sh $(GPU_LOG)

# A level's MPS server reached through its pipe directory bound at another path, as a
# time-sliced container's (tests/gpu/mpsbind.sh; root, PyTorch).
check-gpu-mpsbind: all
	@tests/gpu/mpsbind.sh $(GPU_LOG)

# What the driver frees with a context, what mipmapped arrays, the _ptsz forms and shareable
# handles take, and what a mapping keeps of a released cuMemCreate handle, as the fake driver does
# them (tests/gpu/memdriver.sh; memapp alone, and under nvtaskset --mem where it is built).
check-gpu-memdriver:
	@tests/gpu/memdriver.sh $(GPU_LOG)

# The driver and runtime callback ids the shim follows against the toolkit's CUPTI headers
# (tests/gpu/cbid.sh; the headers only, no GPU).
check-gpu-cbid:
	@tests/gpu/cbid.sh

# Benchmarks (after the ECRTS 2025 paper's evaluation): on the GPU machine, under 10 minutes.
BENCH_OUT ?= docs/bench
bench: all
	@tests/bench/bench.sh $(abspath $(BENCH_OUT))

# nvtaskset against MPS's percentage at every partition size.
bench-sizes: all
	@timeout 590 python3 tests/bench/sizes.py $(CURDIR) $(abspath $(BENCH_OUT))/sizes

# The SM count a program is told: bf16 GEMMs (cuBLAS through PyTorch, a persistent Triton
# kernel) and a training step at partition sizes from one GPC to the whole GPU, against MPS's
# percentage of the same SM count, and a stale count after -p (tests/bench/smcount.py).
# SMCOUNT_SIZES picks the sizes (ranges too: "4-24"); each call stays under 8 minutes.
SMCOUNT_TIMEOUT ?= 470
bench-smcount: all
	@timeout $(SMCOUNT_TIMEOUT) python3 tests/bench/smcount.py $(CURDIR) $(abspath $(BENCH_OUT))/smcount

# Where a partition's SMs lie: packed, spread, MPS's share; launch batches.
bench-placement: all
	@tests/bench/placement.sh $(abspath $(BENCH_OUT))/placement

# The launch rate of this build against another's, case by case in one run (tests/bench/launchcost.py):
# LAUNCH_BASE=DIR, a tree built with make (the code before a change); LAUNCH_ROUNDS, LAUNCH_CASES.
bench-launch: all
	@test -n "$(LAUNCH_BASE)" -a -x "$(LAUNCH_BASE)/build/bin/nvtaskset" || \
		{ echo "bench-launch: LAUNCH_BASE=DIR, a tree built with make" >&2; exit 2; }
	@mkdir -p $(B)/bench
	$${NVCC:-$$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)} -O2 -arch=sm_90 -o $(B)/bench/launch \
		tests/bench/launch.cu
	timeout 60 $(B)/bin/nvtaskset --calibrate >/dev/null
	timeout 60 $(LAUNCH_BASE)/build/bin/nvtaskset --calibrate >/dev/null
	LAUNCH_BASE=$(abspath $(LAUNCH_BASE)) timeout 560 python3 tests/bench/launchcost.py $(CURDIR) \
		$(abspath $(B))/bench $(abspath $(BENCH_OUT))/launch

# The launch rate of every form a task can take (no partition, partitioned, high, low,
# time-sliced, and --mem where nvtaskset has it) against a plain process's, in 30 paired
# rounds of fresh processes (tests/bench/launchcost.py; without a GPU, the same forms'
# instructions: tests/bench/launchpath.py). Under 4 minutes after the build; LAUNCH_EX=1
# launches through cudaLaunchKernelEx.
LAUNCH_FORMS ?= plain,plain-again,shim-unset,nvtaskset,priority-high,priority-low,slice
bench-launch-forms: all
	@mkdir -p $(B)/bench
	timeout 120 $${NVCC:-$$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)} -O2 -arch=sm_90 \
		-o $(B)/bench/launch tests/bench/launch.cu
	timeout 60 $(B)/bin/nvtaskset --calibrate >/dev/null
	cases=$(LAUNCH_FORMS); timeout 60 $(B)/bin/nvtaskset --help-all | grep -Eq -- '--mem([^a-z-]|$$)' && \
		cases=$$cases,mem; LAUNCH_CASES=$$cases LAUNCH_ROUNDS=$${LAUNCH_ROUNDS:-30} \
		LAUNCH_BATCHES=$${LAUNCH_BATCHES:-1000,101} LAUNCH_DEADLINE=$${LAUNCH_DEADLINE:-200} \
		timeout 230 python3 tests/bench/launchcost.py $(CURDIR) $(abspath $(B))/bench \
		$(abspath $(BENCH_OUT))/launch-forms

# Start-up as a user feels it, and what the channel count buys.
bench-startup: all
	@tests/bench/startup-gpu.sh $(abspath $(BENCH_OUT))/startup

# What each part adds to start-up, in MPS and outside (tests/bench/startup_parts.py): the
# shim's set-up, its driver callbacks, the yield set-up, the command, 8 channels.
bench-startup-parts: all
	@timeout 470 python3 tests/bench/startup_parts.py $(CURDIR) $(abspath $(BENCH_OUT))/startup-parts

# Priorities: a latency-critical service beside a training loop or a streaming hog, every
# configuration in one run (tests/bench/prio/README.md): PRIO_SET=users, round5 or quick, PRIO_* knobs,
# PRIO_DRY=1 prints the plan and its duration.
bench-prio: all
	@tests/bench/prio/run.sh $(abspath $(BENCH_OUT))/prio

# The GPU timeline of a service's synchronised steps beside a time-sliced batch
# (tests/bench/timeline/README.md): ~3.4 s a phase, ~11 min for all of them after a build.
# TL_PHASES: a subset of run.sh's phases.
bench-timeline: all
	@tests/bench/timeline/run.sh $(abspath $(BENCH_OUT))/timeline $(TL_PHASES)
