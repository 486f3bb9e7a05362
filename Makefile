# nvtaskset - build with gcc, make and glibc only; no CUDA toolkit needed.
#
#   make                      build into build/
#   make check                run the test suite (no GPU needed)
#   make check-gpu            GPU tests (on a machine with an NVIDIA GPU)
#   make install PREFIX=/usr/local DESTDIR=
#   make uninstall PREFIX=/usr/local DESTDIR=

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib/nvtaskset
MANDIR = $(PREFIX)/share/man/man1

CC ?= gcc
CFLAGS ?= -O2 -g
WARN = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ALL_CFLAGS = -std=gnu11 $(WARN) -Iinclude -Isrc $(CFLAGS)
TEST_CFLAGS = $(ALL_CFLAGS) -Wno-missing-prototypes
SHIM_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden -D_FORTIFY_SOURCE=2

B = build
PURE = tpcset tmd topo segment
SHIM_SRC = $(PURE) sysutil segfile shim
CORE_CLI = $(PURE) mpslog driverinfo sysutil segfile segopen gpu calibrate mps
CMD_SRC = main common run pid list mpsctl topology

SHIM_OBJ = $(SHIM_SRC:%=$(B)/shim/%.o)
CLI_OBJ = $(CORE_CLI:%=$(B)/cli/%.o) $(CMD_SRC:%=$(B)/cmd/%.o)
PURE_OBJ = $(PURE:%=$(B)/cli/%.o) $(B)/cli/mpslog.o $(B)/cli/driverinfo.o

CLI = $(B)/bin/nvtaskset
SHIM = $(B)/lib/nvtaskset/libnvtaskset.so
WRAPPER = $(B)/lib/nvtaskset/wrapper/libcuda.so.1
STUB = $(B)/stub/libcuda.so

all: $(CLI) $(SHIM) $(WRAPPER)

$(B)/shim/%.o: src/%.c $(wildcard src/*.h) include/nvtaskset.h
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c -o $@ $<

$(B)/cli/%.o: src/%.c $(wildcard src/*.h) include/nvtaskset.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/cmd/%.o: tools/nvtaskset/%.c tools/nvtaskset/cli.h $(wildcard src/*.h) include/nvtaskset.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itools/nvtaskset -c -o $@ $<

$(CLI): $(CLI_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ -ldl

$(SHIM): $(SHIM_OBJ) src/shim.map
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -o $@ $(SHIM_OBJ) -Wl,--version-script=src/shim.map \
		-Wl,-z,now -Wl,-z,nodelete -ldl -lpthread

# The drop-in wrapper: the same shim, named libcuda.so.1, depending on the
# real driver through its unversioned name so that dlsym() on its handle
# reaches every driver symbol. The stub only records that dependency.
$(STUB):
	@mkdir -p $(@D)
	echo 'void nvtaskset_stub(void); void nvtaskset_stub(void) {}' | \
		$(CC) -shared -fPIC -x c -o $@ -Wl,-soname,libcuda.so -

$(WRAPPER): $(SHIM_OBJ) src/shim.map $(STUB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -o $@ $(SHIM_OBJ) -Wl,--version-script=src/shim.map \
		-Wl,-soname,libcuda.so.1 -Wl,-z,now -Wl,-z,nodelete \
		-L$(B)/stub -Wl,--no-as-needed -lcuda -Wl,--as-needed -ldl -lpthread

# ---- Tests ----------------------------------------------------------------

T = $(B)/test
FAKE = $(T)/fake/libcuda.so.1
TEST_BINS = $(T)/test_tpcset $(T)/test_tmd $(T)/test_topo $(T)/test_segment $(T)/test_mpslog $(T)/test_driverinfo \
	$(T)/fakeapp-dlopen $(T)/fakeapp-linked $(T)/fuzz_parsers $(T)/segpoke

$(FAKE): tests/fake/fakecuda.c tests/fake/fakecuda.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/fake -fPIC -shared -o $@ $< -Wl,-soname,libcuda.so.1 -lpthread
	ln -sf libcuda.so.1 $(T)/fake/libcuda.so

$(T)/test_%: tests/unit/test_%.c tests/unit/check.h $(PURE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/unit -o $@ $< $(PURE_OBJ) -lpthread

$(T)/segpoke: tests/unit/segpoke.c $(PURE_OBJ) $(B)/cli/segfile.o $(B)/cli/segopen.o $(B)/cli/sysutil.o
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $^

$(T)/fakeapp-dlopen: tests/fake/fakeapp.c tests/fake/fakecuda.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/fake -DUSE_DLOPEN -o $@ $< -ldl -lpthread

$(T)/fakeapp-linked: tests/fake/fakeapp.c tests/fake/fakecuda.h $(FAKE)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/fake -o $@ $< -L$(T)/fake -lcuda -lpthread

# The parser fuzz target, driven by its own random mutator under
# AddressSanitizer (works with gcc); `make fuzz-libfuzzer` uses clang's.
$(T)/fuzz_parsers: tests/unit/fuzz_parsers.c $(PURE:%=src/%.c) src/mpslog.c src/driverinfo.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Iinclude -Isrc -O1 -g -fsanitize=address,undefined \
		-fno-sanitize-recover=all -DFUZZ_STANDALONE -o $@ $^

check: all $(FAKE) $(TEST_BINS)
	@tests/run-tests.sh

# GPU tests: on a machine with an NVIDIA Hopper GPU, nvcc and python3.
GPU_LOG ?= $(B)/gpu
check-gpu: all
	@tests/gpu/check-gpu.sh $(GPU_LOG)

# Benchmarks (paper 000's evaluation): on the GPU machine, under 10 minutes.
BENCH_OUT ?= docs/bench
bench: all
	@tests/bench/bench.sh $(abspath $(BENCH_OUT))

# Undefined behaviour must end the run (-fno-sanitize-recover), or libFuzzer
# reports it and exits 0. The regression inputs run first.
FUZZ_TIME ?= 60
fuzz-libfuzzer: $(PURE:%=src/%.c) src/mpslog.c src/driverinfo.c tests/unit/fuzz_parsers.c
	@mkdir -p $(T)
	clang -std=gnu11 -Iinclude -Isrc -O1 -g -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $(T)/fuzz_parsers_libfuzzer $^
	$(T)/fuzz_parsers_libfuzzer tests/unit/fuzz-regressions/*
	$(T)/fuzz_parsers_libfuzzer -max_total_time=$(FUZZ_TIME)

# ---- Install --------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/wrapper $(DESTDIR)$(MANDIR)
	install -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/nvtaskset
	install -m 0644 $(SHIM) $(DESTDIR)$(LIBDIR)/libnvtaskset.so
	install -m 0644 $(WRAPPER) $(DESTDIR)$(LIBDIR)/wrapper/libcuda.so.1
	install -m 0644 man/nvtaskset.1 $(DESTDIR)$(MANDIR)/nvtaskset.1

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/nvtaskset $(DESTDIR)$(LIBDIR)/libnvtaskset.so \
		$(DESTDIR)$(LIBDIR)/wrapper/libcuda.so.1 $(DESTDIR)$(MANDIR)/nvtaskset.1
	-rmdir $(DESTDIR)$(LIBDIR)/wrapper $(DESTDIR)$(LIBDIR) 2>/dev/null

clean:
	rm -rf $(B)

.PHONY: all check check-gpu bench install uninstall clean fuzz-libfuzzer
.DELETE_ON_ERROR:
