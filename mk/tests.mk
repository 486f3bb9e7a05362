# mk/tests.mk - the test suite's programs and the check targets, included by
# the Makefile (whose variables it uses): the fake driver, the unit tests,
# the fake applications, the fuzz target; make check, check-slurm,
# check-faults, check-private, check-user, check-prometheus, check-bench, try, try-containers,
# fuzz-libfuzzer.
#
# SPDX-License-Identifier: MIT

T = $(B)/test
FAKE = $(T)/fake/libcuda.so.1
TEST_BINS = $(T)/test_tpcset $(T)/test_gpusel $(T)/test_tmd $(T)/test_topo $(T)/test_segment $(T)/test_claim $(T)/test_mpslog $(T)/test_driverinfo \
	$(T)/test_ptree $(T)/test_profile $(T)/test_membw $(T)/test_prio $(T)/test_yield $(T)/test_smcount $(T)/test_memlimit $(T)/test_memmap $(T)/test_cmdline $(T)/test_slurm $(T)/test_task $(T)/test_admit $(T)/test_gpus $(T)/test_cdi \
	$(T)/test_promtext $(T)/test_queuerec $(T)/test_view $(T)/test_segscan $(T)/test_proc $(T)/test_child \
	$(T)/fakeapp-dlopen $(T)/fakeapp-linked $(T)/prioapp $(T)/fuzz_parsers $(T)/segpoke $(T)/testsub.so $(T)/fakegraphcheck \
	$(T)/smctrlapp $(T)/demo $(T)/fake/fakerm.so $(T)/fake/stallread.so $(T)/fake/shrinkmapped.so $(T)/memapp $(FAKE_NOATTR)

# The fake driver: devices and launches, the calibration probe, the callback
# table, CUDA graphs (tests/fake/fakecuda.h).
FAKE_SRC = $(addprefix tests/fake/,fakecuda.c fakeprobe.c fakemembw.c fakecb.c fakegraph.c fakeexec.c fakegraphapi.c \
	fakestream.c fakehostfn.c fakermcalls.c fakemem.c)
FAKE_HDR = tests/fake/fakecuda.h tests/fake/fakeint.h src/gpu/cuda_driver.h src/gpu/nvrm.h
$(FAKE): $(FAKE_SRC) $(FAKE_HDR) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/fake -fPIC -shared $(LDFLAGS) -o $@ $(FAKE_SRC) -Wl,-soname,libcuda.so.1 -ldl -lpthread
	ln -sf libcuda.so.1 $(T)/fake/libcuda.so
# ... and one without cuPointerGetAttributes (a driver older than the call).
FAKE_NOATTR = $(T)/fake-noattr/libcuda.so.1
$(FAKE_NOATTR): $(FAKE_SRC) $(FAKE_HDR) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DFAKECUDA_NO_POINTER_ATTRIBUTES -Itests/fake -fPIC -shared $(LDFLAGS) -o $@ $(FAKE_SRC) \
		-Wl,-soname,libcuda.so.1 -ldl -lpthread

# The kernel side of the fake driver's RM (preloaded after the shim: tests/e2e/preempt.sh).
FAKERM = $(T)/fake/fakerm.so
$(FAKERM): tests/fake/fakerm.c src/gpu/nvrm.h $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $< -ldl -lpthread

# A process whose memory stalls its readers, as seen by a reader it is preloaded into
# (tests/e2e/observe.sh).
$(T)/fake/stallread.so: tests/fake/stallread.c $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $< -ldl

# A segment's owner who shrinks it just after a writer of hers mapped it, as seen by that writer
# (tests/e2e/security.sh).
$(T)/fake/shrinkmapped.so: tests/fake/shrinkmapped.c $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $< -ldl

# Unit tests link the pure core (and driverinfo's parser).
TEST_LIBS = $(O)/gpu/driverinfo.o $(CORE_LIB)
$(T)/test_%: tests/unit/test_%.c $(TEST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_LIBS) -lpthread -lm

# The Slurm plugin's pure code, its checks of root's paths, and the job step
# of a process: built without Slurm.
$(T)/test_slurm: tests/unit/test_slurm.c tests/unit/check.h tools/slurm/request.c tools/slurm/request.h \
		$(OS_OBJ) $(TEST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/unit -Itools/slurm $(LDFLAGS) -o $@ $< tools/slurm/request.c \
		$(OS_OBJ) $(TEST_LIBS) -lpthread

# The reader of /proc (os/proc.c), on processes of its own, their reads doctored for some
# (core/ptree.c's loops wrapped), and a caller of it (nvt_seg_open).
TEST_PROC_SEG = $(addprefix $(O)/seg/,segfile.o segtrust.o segopen.o segcontainer.o segwalk.o segwrite.o)
$(T)/test_proc: tests/unit/test_proc.c tests/unit/check.h $(OS_OBJ) $(TEST_PROC_SEG) $(TEST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_PROC_SEG) $(OS_OBJ) \
		$(TEST_LIBS) -Wl,--wrap=nvt_stat_settle,--wrap=nvt_status_settle -lpthread

# The runner of children (os/child.c): batches of calls, some of which stall.
$(T)/test_child: tests/unit/test_child.c tests/unit/check.h $(OS_OBJ) $(TEST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/unit $(LDFLAGS) -o $@ $< $(OS_OBJ) $(TEST_LIBS) -lpthread

# The task layer, the viewers' (src/view) and the sweep's (src/seg): they link what the command links of src/.
$(T)/test_task $(T)/test_admit $(T)/test_gpus $(T)/test_view $(T)/test_segscan: $(T)/test_%: tests/unit/test_%.c $(LIB_OBJ) $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/unit $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(CORE_LIB) -ldl -lpthread

$(T)/segpoke: tests/unit/segpoke.c $(O)/seg/segfile.o $(O)/seg/segtrust.o $(O)/seg/segopen.o $(O)/seg/segcontainer.o $(O)/seg/segwalk.o $(O)/seg/segwrite.o $(O)/os/sysutil.o $(O)/os/proc.o $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d $(LDFLAGS) -o $@ $(filter-out %.h,$^)

FAKEAPP_SRC = tests/fake/fakeapp.c tests/fake/fakeappgraph.c tests/fake/fakeappsms.c tests/fake/fakeappioctl.c
FAKEAPP_HDR = tests/fake/fakeapp.h tests/fake/fakecuda.h src/gpu/cuda_driver.h src/gpu/nvrm.h
$(T)/fakeapp-dlopen: $(FAKEAPP_SRC) $(FAKEAPP_HDR) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/fake -DUSE_DLOPEN $(LDFLAGS) -o $@ $(FAKEAPP_SRC) -ldl -lpthread

$(T)/fakeapp-linked: $(FAKEAPP_SRC) $(FAKEAPP_HDR) $(FAKE) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/fake $(LDFLAGS) -o $@ $(FAKEAPP_SRC) -L$(T)/fake -lcuda -lpthread

# make try's program: it prints where its kernels ran on the fake GPU (tests/fake/try.sh).
$(T)/demo: tests/fake/demo.c tests/fake/fakecuda.h $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/fake $(LDFLAGS) -o $@ $< -ldl

# A program written for libsmctrl: nvtaskset's libsmctrl.so and the fake driver.
$(T)/smctrlapp: tests/fake/smctrlapp.c $(FAKE) $(SMCTRL) $(CORE_LIB) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/fake $(LDFLAGS) -o $@ $< $(CORE_LIB) -L$(B)/lib/nvtaskset -lsmctrl \
		-Wl,-rpath,$(abspath $(B)/lib/nvtaskset) -L$(T)/fake -lcuda -lpthread

# GPU memory by every path the shim follows (tests/e2e/mem.sh).
$(T)/memapp: tests/fake/memapp.c src/gpu/cuda_driver.h $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< -ldl

# A service and a batch job for the priority tests (tests/e2e/yield.sh).
$(T)/prioapp: tests/fake/prioapp.c tests/fake/prioappwait.c tests/fake/prioapp.h tests/fake/fakecuda.h $(FAKE) $(FLAGS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Itests/fake $(LDFLAGS) -o $@ tests/fake/prioapp.c tests/fake/prioappwait.c -L$(T)/fake -lcuda -lpthread

# Tests of the fake itself: a callback subscriber that is not nvtaskset
# (LD_PRELOADed), and the graph scenarios it drives.
$(T)/testsub.so: tests/fake/testsub.c $(FAKE) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/fake -fPIC -shared $(LDFLAGS) -o $@ $< -L$(T)/fake -lcuda

$(T)/fakegraphcheck: tests/fake/fakegraphcheck.c $(FAKE) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(TEST_CFLAGS) -MF $@.d -Itests/fake $(LDFLAGS) -o $@ $< -L$(T)/fake -lcuda -ldl

# The parser fuzz target, driven by its own random mutator under
# AddressSanitizer (works with gcc); `make fuzz-libfuzzer` uses clang's.
FUZZ_SRC = $(filter-out src/core/claim.c,$(CORE:%=src/core/%.c)) src/gpu/driverinfo.c
$(T)/fuzz_parsers: tests/unit/fuzz_parsers.c $(FUZZ_SRC)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Iinclude -Isrc -O1 -g -fsanitize=address,undefined \
		-fno-sanitize-recover=all -DFUZZ_STANDALONE -o $@ $^

# The end-to-end tests run CHECK_JOBS at a time (each in a directory of its own).
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check: all $(FAKE) $(TEST_BINS)
	@tests/run-tests.sh -j$(CHECK_JOBS)

# make check in a copy of this tree in a directory only its owner may enter
# (a clone in mktemp -d, a private home), as root: the tests of other users run
# a copy of the build they can reach, and none skips for want of it. CI runs it.
check-private:
	@tests/check-private.sh

# make check as the ordinary user CHECK_USER (who must exist), started by root, in a copy of this
# tree in a 0700 directory of that user's; fails on a test that skipped for another reason than
# needing root (tests/check-user.sh). CI runs it.
check-user:
	@tests/check-user.sh $(CHECK_USER)

# nvtaskset on a fake GPU, without one: a short tour of -c, -g, -n, -p and -l
# with the demo program, then (on a terminal) a shell to try more in
# (README's "Try it without a GPU").
# GPUS=N: N fake GPUs (README's several-GPU examples: make try GPUS=2).
try: all $(FAKE) $(T)/demo
	@GPUS=$(or $(GPUS),1) tests/fake/try.sh

# make try's containers: nvtaskset's CDI devices given to podman containers on the fake
# GPU, a short tour (tests/podman/try.sh; docs/containers.md). As root, with podman and runc.
try-containers: all $(FAKE) $(T)/demo
	@tests/podman/try.sh

# The Slurm plugin with a real Slurm (slurmctld, slurmd, munged; Debian:
# slurm-wlm, libslurm-dev, munge, lua5.1 or liblua for cli_filter/lua),
# started on this machine by the script, as root. About a minute.
check-slurm: all $(FAKE) $(T)/fakeapp-dlopen $(T)/fake/stallread.so
	@test -f $(SPANK) || { echo "check-slurm: the Slurm plugin was not built: it needs Slurm's \
headers (libslurm-dev)" >&2; exit 1; }
	@tests/slurm/run.sh

# nvtaskset's CDI devices with real podman and runc (tests/podman/run.sh,
# docs/containers.md): an image built offline, containers given the devices.
# As root; skips, saying why, where podman cannot run containers. Under a minute.
check-podman: all $(FAKE) $(T)/fakeapp-dlopen $(T)/demo
	@tests/podman/run.sh

# The exporter scraped by a real Prometheus on this machine's loopback interface
# (tests/prometheus/run.sh, docs/observability.md; Debian: prometheus, and
# libmicrohttpd-dev at build time). Any user; under a minute.
check-prometheus: all $(FAKE) $(T)/fakeapp-dlopen
	@tests/prometheus/run.sh

# The priorities benchmark's whole check without a GPU (tests/bench/prio/selftest.sh: prio.py's
# orchestration and its report with stand-ins, every preset, a run cut by its budget and one by
# its time limit, bad knobs, the programs on faketorch/; make check runs its round5 part only).
# Any user; about 5 minutes.
check-bench:
	@tests/bench/prio/selftest.sh

# The fault suite (tests/faults/run.sh, docs/faults.md): ENOSPC and EMFILE at
# every segment operation, kill -9 of the CLI, 500 tasks of 3 users, hidepid=2,
# full disks. As root; about 5 minutes.
$(T)/inject.so: tests/faults/inject.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Wextra -O1 -fPIC -shared $(LDFLAGS) -o $@ $< -ldl

check-faults: all $(FAKE) $(T)/fakeapp-dlopen $(T)/inject.so $(T)/segpoke
	@tests/faults/run.sh

# Undefined behaviour must end the run (-fno-sanitize-recover), or libFuzzer
# reports it and exits 0. The regression inputs run first.
FUZZ_TIME ?= 60
fuzz-libfuzzer: $(FUZZ_SRC) tests/unit/fuzz_parsers.c
	@mkdir -p $(T)
	clang -std=gnu11 -Iinclude -Isrc -O1 -g -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $(T)/fuzz_parsers_libfuzzer $^
	$(T)/fuzz_parsers_libfuzzer tests/unit/fuzz-regressions/*
	$(T)/fuzz_parsers_libfuzzer -max_total_time=$(FUZZ_TIME)
