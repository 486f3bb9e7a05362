# nvtaskset - build with gcc, make, glibc and json-c (libjson-c-dev); no CUDA toolkit needed.
#
#   make                      build into build/
#   make check                run the test suite (no GPU needed; turns on -Werror;
#                             CHECK_JOBS=N tests at once, default nproc)
#   make check-private        make check in a copy only its owner can read (root; CI runs it)
#   make try                  try nvtaskset on a fake GPU: a tour, then a shell
#   make check-package        build the Debian package, install, check and purge it (root)
#   make check-slurm          the Slurm plugin's tests with a real Slurm on this machine (root)
#   make check-faults         the fault suite: full disks, EMFILE, kill -9, 500 tasks (root)
#   make check-prometheus     the exporter scraped by a real Prometheus on this machine
#   make deb                  build the Debian package into build/deb/
#   make check-gpu            GPU tests (on a machine with an NVIDIA GPU)
#   make install PREFIX=/usr/local DESTDIR= [LIBDIR=...]
#   make uninstall PREFIX=/usr/local DESTDIR= [LIBDIR=...]
#
# This file builds and installs; the tests' programs and targets are in
# mk/tests.mk, the GPU tests' and benchmarks' in mk/gpu.mk.
#
# CFLAGS, CPPFLAGS and LDFLAGS are the packager's (dpkg-buildflags' hardening
# flags work as given); WERROR=1 makes warnings errors, as `make check` and CI do.
# The Slurm SPANK plugin is built where Slurm's headers are (Debian:
# libslurm-dev); SLURM=0 never builds it, SLURM=1 fails without them.
# The metrics exporter (nvtaskset --exporter) is built where libmicrohttpd's
# header is (Debian: libmicrohttpd-dev); EXPORTER=0 never builds it,
# EXPORTER=1 fails without it.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib/nvtaskset
MANDIR ?= $(PREFIX)/share/man/man1
MAN3DIR ?= $(PREFIX)/share/man/man3
MAN8DIR ?= $(PREFIX)/share/man/man8
INCLUDEDIR ?= $(PREFIX)/include
DOCDIR ?= $(PREFIX)/share/doc/nvtaskset
DATADIR ?= $(PREFIX)/share/nvtaskset
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# Where the linker, the dynamic loader and ctypes.util.find_library look for
# libsmctrl.so (a link to LIBDIR's), and pkg-config for libsmctrl.pc.
SMCTRL_LINKDIR ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(SMCTRL_LINKDIR)/pkgconfig

VERSION := $(shell sed -n 's/^\#define NVT_VERSION_STRING "\(.*\)"/\1/p' src/nvtaskset.h)
# The symbol the command exports so that an inherited shim stays passive.
CLI_MARKER := $(shell sed -n 's/^\#define NVT_CLI_MARKER "\(.*\)"/\1/p' src/nvtaskset.h)

CC ?= gcc
CFLAGS ?= -O2 -g
CPPFLAGS ?=
LDFLAGS ?=
ifneq ($(filter check,$(MAKECMDGOALS)),)
WERROR ?= 1
endif
WERROR ?= 0
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(WERROR),1)
WARN += -Werror
endif
# Fortified string functions unless the packager chose a level (a second
# definition would be a "redefined" warning) or optimisation is off.
FORTIFY = -D_FORTIFY_SOURCE=2
ifneq ($(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS))$(findstring -O0,$(CFLAGS)),)
FORTIFY =
endif
ALL_CFLAGS = -std=gnu11 $(WARN) $(FORTIFY) -Iinclude -Isrc $(CPPFLAGS) $(CFLAGS)
TEST_CFLAGS = $(ALL_CFLAGS) -Wno-missing-prototypes
# What each object includes, written by the compiler beside it (NAME.d) and
# read back below: a change to a header rebuilds the files that include it.
DEPFLAGS = -MMD -MP
# Every file of src/ is compiled once, position-independent and hidden, and
# linked into the shim, the command, the Slurm plugin and the tests alike.
LIB_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden

B = build
# src/ by subsystem, lowest first: a folder's files include and call only
# their own folder's and the folders before it (tests/e2e/layers.sh checks).
LAYERS = core os gpu seg mps alloc task prio view shim
CORE = text grow tpcset tmd topo topocal topopick segment gpusel ptree claim mpslog profile prio yield bridge membw smcount memlimit memmap \
	json jsonnames cdi cmdline outbuf promtext listen conns queuerec
OS = sysutil proc slurmproc child progpath rootpath
GPU = driverinfo driver gpu calibrate bwprobe topocache gpus
SEG = segfile segtrust segopen segwrite segscan segown inherit segfor segcontainer segleft segwalk segwatch
MPS = mps
ALLOC = placement reserve queue
TASK = task container admit
PRIO = agent agenttable agentlock agentbeat
VIEW = view viewproc viewcalc viewmetrics
# The shim's files by layer, lowest first: a file calls and includes only
# files of its own layer or of those before it, without circles
# (tests/e2e/layers.sh checks, with tools/dev/layers.py; src/shim/shimstate.h
# says what each layer holds). libsmctrl.so's own file (src/shim/libsmctrl.c)
# is above them all.
SHIM_LAYERS = state features hub setup
SHIM_state = shimstate shimdriver shimslot shimchan
SHIM_features = shimlease shimbridgeptx shimbridge shimyield shimhostfn shimpreempt shimmem shimsmcount shimsmctrlmaps shimsmctrl shimsmctrlapi shimgraph
SHIM_hub = shim
SHIM_setup = shimsetup
SHIMSRC = $(foreach l,$(SHIM_LAYERS),$(SHIM_$(l)))

O = $(B)/obj
CORE_LIB = $(B)/libnvtcore.a
CORE_OBJ = $(CORE:%=$(O)/core/%.o)
OS_OBJ = $(OS:%=$(O)/os/%.o)
GPU_OBJ = $(GPU:%=$(O)/gpu/%.o)
SEG_OBJ = $(SEG:%=$(O)/seg/%.o)
SHIM_OBJ = $(SHIMSRC:%=$(O)/shim/%.o) $(O)/seg/segfile.o $(O)/seg/segtrust.o $(O)/seg/segown.o $(O)/seg/inherit.o \
	$(O)/os/sysutil.o $(O)/os/proc.o $(O)/gpu/topocache.o $(O)/gpu/driverinfo.o $(O)/prio/agentbeat.o
# What the command and the Slurm plugin link besides their own files.
LIB_OBJ = $(OS_OBJ) $(GPU_OBJ) $(SEG_OBJ) $(MPS:%=$(O)/mps/%.o) $(ALLOC:%=$(O)/alloc/%.o) \
	$(TASK:%=$(O)/task/%.o) $(PRIO:%=$(O)/prio/%.o) $(VIEW:%=$(O)/view/%.o)
# The command's files by layer, lowest first: a file calls only files of its
# own layer or of those before it, without circles (tests/e2e/layers.sh checks,
# with tools/dev/layers.py; docs/design.md's picture comes from them).
CMD_LAYERS = output machine partition steps commands main
CMD_output = jsonout output help hint
CMD_machine = machine
CMD_partition = partition
CMD_steps = prio pid observe
CMD_commands = run tree list mpsctl topology profile profreport plot plan cdi cdihook top topframe \
	svg metrics
CMD_main = main
CMD_SRC = $(foreach l,$(CMD_LAYERS),$(CMD_$(l)))
CLI_OBJ = $(CMD_SRC:%=$(B)/cmd/%.o)

CLI = $(B)/bin/nvtaskset
SHIM = $(B)/lib/nvtaskset/libnvtaskset.so
WRAPPER = $(B)/lib/nvtaskset/wrapper/libcuda.so.1
SMCTRL = $(B)/lib/nvtaskset/libsmctrl.so
SMCTRL_PC = $(B)/gen/libsmctrl.pc
# The same for the build tree, without make install: PKG_CONFIG_PATH=$(B)/pkgconfig (make try's
# shell sets it); the program finds libsmctrl.so where the build put it.
SMCTRL_PC_BUILD = $(B)/pkgconfig/libsmctrl.pc
# LIBDIR as seen from SMCTRL_LINKDIR: libsmctrl.so found through the link
# there finds the shim beside its target ($$ORIGIN is the link's directory).
SMCTRL_TO_LIBDIR := $(shell realpath -m --relative-to='$(SMCTRL_LINKDIR)' '$(LIBDIR)')
STUB = $(B)/stub/libcuda.so

# The Slurm plugin: src/ as the command uses it, and tools/slurm/.
SLURM ?= auto
ifeq ($(SLURM),auto)
# Both headers. '\043' is printf's '#': make 4.3 keeps a '\#' in a function
# call as it is, so the probe read '\#include' and always passed (seen on
# the GPU machine, 2026-11-22, which has neither header).
HAVE_SLURM := $(shell printf '\043include <stdint.h>\n\043include <slurm/spank.h>\n\043include <slurm/slurm.h>\n' | \
	$(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && echo 1)
else ifeq ($(SLURM),1)
HAVE_SLURM := 1
endif
SPANK_SRC = request mpsnode place spank_nvtaskset
SPANK_OBJ = $(SPANK_SRC:%=$(B)/spank/%.o)
SPANK = $(B)/lib/nvtaskset/spank_nvtaskset.so
ifeq ($(HAVE_SLURM),1)
PLUGINS = $(SPANK)
endif

HOG = $(B)/lib/nvtaskset/nvtaskset-hog

# The command writes its JSON (every --json) with json-c (Debian: libjson-c-dev).
PKG_CONFIG ?= pkg-config
JSONC_CFLAGS := $(shell $(PKG_CONFIG) --cflags json-c 2>/dev/null)
JSONC_LIBS := $(shell $(PKG_CONFIG) --libs json-c 2>/dev/null || echo -ljson-c)

# The metrics exporter: a program of its own beside the shim, which `nvtaskset
# --exporter` runs, so that the command links no HTTP library (libmicrohttpd
# and GnuTLS cost every start ~2 ms of loading, measured on the 2-core VM).
EXPORTER ?= auto
ifeq ($(EXPORTER),auto)
HAVE_MHD := $(shell printf '\043include <stdint.h>\n\043include <sys/socket.h>\n\043include <microhttpd.h>\n' | \
	$(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && echo 1)
else ifeq ($(EXPORTER),1)
HAVE_MHD := 1
endif
EXPORTER_BIN = $(B)/lib/nvtaskset/nvtaskset-exporter
ifeq ($(HAVE_MHD),1)
EXPORTERS = $(EXPORTER_BIN)
endif

all: $(CLI) $(SHIM) $(WRAPPER) $(SMCTRL) $(SMCTRL_PC) $(SMCTRL_PC_BUILD) $(HOG) $(PLUGINS) $(EXPORTERS)

# Everything is rebuilt when the compiler or its flags change (a packager's
# `make CFLAGS=...` after a plain `make`); -Werror alone changes no output.
# DEPFLAGS is among them so that objects built before there were .d files
# are built again, with theirs.
FLAGS = $(B)/flags
FLAGS_TEXT = $(CC) $(FORTIFY) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(DEPFLAGS)
$(FLAGS): FORCE
	@mkdir -p $(@D)
	@echo '$(subst ','\'',$(FLAGS_TEXT))' | cmp -s - $@ || \
		echo '$(subst ','\'',$(FLAGS_TEXT))' >$@

$(O)/%.o: src/%.c $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(LIB_CFLAGS) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/cmd/%.o: tools/nvtaskset/%.c $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CFLAGS) $(JSONC_CFLAGS) -Itools/nvtaskset -I$(B)/gen -c -o $@ $<

# Default visibility here: spank.map exports the plugin's own symbols, which
# hidden ones could not be.
$(B)/spank/%.o: tools/slurm/%.c $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CFLAGS) -fPIC -Itools/slurm -c -o $@ $<

# Slurm's functions come from the program that loads the plugin (srun,
# slurmstepd: libslurmfull), so it links no Slurm library.
$(SPANK): $(SPANK_OBJ) $(LIB_OBJ) $(CORE_LIB) tools/slurm/spank.map
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(SPANK_OBJ) $(LIB_OBJ) $(CORE_LIB) \
		-Wl,--version-script=tools/slurm/spank.map -ldl

# --profile --beside-hog's bandwidth hog: a program of its own (the command
# itself keeps its shim passive), installed beside the shim; it calls the
# driver through the command's table of entry points (src/gpu/driver.c).
$(HOG): tools/hog/hog.c $(O)/gpu/driver.o $(CORE_LIB) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CFLAGS) -MF $@.d $(LDFLAGS) -o $@ $< $(O)/gpu/driver.o $(CORE_LIB) -ldl

$(EXPORTER_BIN): tools/exporter/exporter.c $(LIB_OBJ) $(CORE_LIB) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CFLAGS) -MF $@.d $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(CORE_LIB) \
		-lmicrohttpd -ldl -lpthread

# Where the command looks for its shim: LIBDIR, and LIBDIR as seen from
# BINDIR, so that an install staged in DESTDIR or moved as a whole works too.
# Rewritten (and run.c rebuilt) only when they change.
PATHS_H = $(B)/gen/install_paths.h
$(PATHS_H): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '/* Generated by make from LIBDIR and BINDIR. */' \
		'#define NVT_INSTALL_LIBDIR "$(LIBDIR)"' \
		'#define NVT_LIBDIR_FROM_BINDIR "$(shell realpath -m --relative-to='$(BINDIR)' '$(LIBDIR)')"' \
		'#define NVT_INSTALL_BINDIR "$(BINDIR)"' \
		'#define NVT_BINDIR_FROM_LIBDIR "$(shell realpath -m --relative-to='$(LIBDIR)' '$(BINDIR)')"' \
		'/* libsmctrl.so'"'"'s RUNPATH: $$ORIGIN, and LIBDIR seen from SMCTRL_LINKDIR */' \
		'#define NVT_SMCTRL_TO_LIBDIR "$(SMCTRL_TO_LIBDIR)"' >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi
$(B)/cmd/machine.o $(B)/cmd/pid.o: $(PATHS_H)
# The shim runs the command to calibrate a GPU for a libsmctrl program.
$(O)/shim/shimsmctrlmaps.o: src/shim/shimsmctrlmaps.c $(PATHS_H) $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(LIB_CFLAGS) -I$(B)/gen -c -o $@ $<

$(CLI): $(CLI_OBJ) $(LIB_OBJ) $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB_OBJ) $(CORE_LIB) \
		-Wl,--export-dynamic-symbol=$(CLI_MARKER) $(JSONC_LIBS) -ldl

$(SHIM): $(SHIM_OBJ) $(CORE_LIB) src/shim/shim.map
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(SHIM_OBJ) $(CORE_LIB) -Wl,--version-script=src/shim/shim.map \
		-Wl,-z,now -Wl,-z,nodelete -Wl,-z,defs -ldl -lpthread

# The drop-in wrapper: the same shim, named libcuda.so.1, depending on the
# real driver through its unversioned name so that dlsym() on its handle
# reaches every driver symbol. The stub only records that dependency.
$(STUB):
	@mkdir -p $(@D)
	echo 'void nvtaskset_stub(void); void nvtaskset_stub(void) {}' | \
		$(CC) -shared -fPIC -x c -o $@ -Wl,-soname,libcuda.so -

$(WRAPPER): $(SHIM_OBJ) $(CORE_LIB) src/shim/shim.map $(STUB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(SHIM_OBJ) $(CORE_LIB) -Wl,--version-script=src/shim/shim.map \
		-Wl,-soname,libcuda.so.1 -Wl,-z,now -Wl,-z,nodelete -Wl,-z,defs \
		-L$(B)/stub -Wl,--no-as-needed -lcuda -Wl,--as-needed -ldl -lpthread

# libsmctrl's names for programs written for it (include/libsmctrl.h): each
# forwards into the shim beside it, found through RUNPATH $$ORIGIN. Its soname
# is libsmctrl's file name, so programs linked against libsmctrl find it too.
$(O)/shim/libsmctrl.o: src/shim/libsmctrl.c $(FLAGS)
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CFLAGS) -Isrc/shim -fPIC -c -o $@ $<

$(SMCTRL): $(O)/shim/libsmctrl.o $(SHIM) $(PATHS_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(O)/shim/libsmctrl.o -Wl,-soname,libsmctrl.so \
		-L$(B)/lib/nvtaskset -Wl,--no-as-needed -lnvtaskset -Wl,--as-needed \
		-Wl,-rpath,'$$ORIGIN:$$ORIGIN/$(SMCTRL_TO_LIBDIR)' -Wl,-z,now

# pkg-config's record: `cc prog.c $$(pkg-config --cflags --libs libsmctrl)`.
$(SMCTRL_PC): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' 'includedir=$(INCLUDEDIR)' 'libdir=$(SMCTRL_LINKDIR)' '' 'Name: libsmctrl' \
		"Description: libsmctrl's TPC masks for CUDA programs, through nvtaskset" \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lsmctrl' >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi
$(SMCTRL_PC_BUILD): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' 'includedir=$(CURDIR)/include' 'libdir=$(abspath $(B))/lib/nvtaskset' '' \
		'Name: libsmctrl' "Description: libsmctrl's TPC masks for CUDA programs, through nvtaskset (the build tree)" \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lsmctrl' >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

# docs/design.md's picture of the layers, generated from the code (tools/dev/layers.py).
design-picture: all
	python3 tools/dev/layers.py design . $(B) --write

# ---- Tests and benchmarks: mk/ ----------------------------------------------

include mk/tests.mk mk/gpu.mk

# ---- Install --------------------------------------------------------------

# The documentation pages (README's list; the man pages name them), installed
# beside README in DOCDIR/docs, where README's links find them, and the example
# programs they point at in DOCDIR/docs/examples.
DOCS = $(wildcard docs/*.md)
EXAMPLES = $(wildcard docs/examples/*.c)

# The directories install puts files in. It records those it makes (and their
# parents it makes) in MADE_DIRS; uninstall removes them where they are empty
# again, and no other: a PREFIX's bin/ that was there before, say, stays.
INSTALL_DIRS = $(BINDIR) $(LIBDIR)/wrapper $(MANDIR) $(MAN3DIR) $(MAN8DIR) $(BASHCOMPDIR) \
	$(DOCDIR)/docs/examples $(INCLUDEDIR) $(SMCTRL_LINKDIR) $(PKGCONFIGDIR) \
	$(if $(filter 1,$(HAVE_SLURM)),$(DATADIR))
MADE_DIRS = $(LIBDIR)/made-directories

install: all
	@# The directories this install makes (with those an install before made), for uninstall.
	made=$$(for d in $(INSTALL_DIRS); do \
		while [ "$$d" != / ] && [ "$$d" != . ] && [ ! -d '$(DESTDIR)'"$$d" ]; do \
			echo "$$d"; d=$$(dirname "$$d"); \
		done; \
	done; cat '$(DESTDIR)$(MADE_DIRS)' 2>/dev/null); \
	install -d $(addprefix $(DESTDIR),$(INSTALL_DIRS)) && \
	printf '%s\n' $$made | sort -u | grep -v '^$$' >'$(DESTDIR)$(MADE_DIRS)'
	install -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/nvtaskset
	install -m 0644 $(SHIM) $(DESTDIR)$(LIBDIR)/libnvtaskset.so
	install -m 0644 $(WRAPPER) $(DESTDIR)$(LIBDIR)/wrapper/libcuda.so.1
	install -m 0755 $(HOG) $(DESTDIR)$(LIBDIR)/nvtaskset-hog
	install -m 0644 $(SMCTRL) $(DESTDIR)$(LIBDIR)/libsmctrl.so
	test '$(SMCTRL_TO_LIBDIR)' = . || ln -sfn '$(SMCTRL_TO_LIBDIR)/libsmctrl.so' $(DESTDIR)$(SMCTRL_LINKDIR)/libsmctrl.so
	install -m 0644 $(SMCTRL_PC) $(DESTDIR)$(PKGCONFIGDIR)/libsmctrl.pc
	install -m 0644 include/libsmctrl.h $(DESTDIR)$(INCLUDEDIR)/libsmctrl.h
	install -m 0644 man/nvtaskset.1 $(DESTDIR)$(MANDIR)/nvtaskset.1
	install -m 0644 man/libsmctrl.3 $(DESTDIR)$(MAN3DIR)/libsmctrl.3
	install -m 0644 man/spank_nvtaskset.8 $(DESTDIR)$(MAN8DIR)/spank_nvtaskset.8
	install -m 0644 tools/completion/nvtaskset.bash $(DESTDIR)$(BASHCOMPDIR)/nvtaskset
	install -m 0644 README.md LICENSE $(DESTDIR)$(DOCDIR)
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/docs
	install -m 0644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/docs/examples
	@# The loader's cache, which find_library reads (a staged install: the package's trigger).
	if [ -z '$(DESTDIR)' ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi
	@# Where the loader or pkg-config does not look (PREFIX=$$HOME/.local), what finds libsmctrl.
	@if [ -z '$(DESTDIR)' ]; then \
		lib=$$(cd '$(SMCTRL_LINKDIR)' && pwd -P); \
		ldc=$$(command -v ldconfig || echo /sbin/ldconfig); \
		for d in $$("$$ldc" -N -X -v 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p') /lib /usr/lib; do \
			[ "$$(cd "$$d" 2>/dev/null && pwd -P)" != "$$lib" ] || loader=1; \
		done; \
		for d in $$(pkg-config --variable pc_path pkg-config 2>/dev/null | tr : ' '); do \
			[ "$$(cd "$$d" 2>/dev/null && pwd -P)" != "$$lib/pkgconfig" ] || pc=1; \
		done; \
		if [ -z "$$loader" ] || [ -z "$$pc" ]; then \
			echo "note: the loader, the linker or pkg-config does not look in $(SMCTRL_LINKDIR); for libsmctrl:"; \
			[ -n "$$loader" ] || echo "  export LD_LIBRARY_PATH=$(SMCTRL_LINKDIR)\$${LD_LIBRARY_PATH:+:\$$LD_LIBRARY_PATH} LIBRARY_PATH=$(SMCTRL_LINKDIR)\$${LIBRARY_PATH:+:\$$LIBRARY_PATH}"; \
			[ -n "$$pc" ] || echo "  export PKG_CONFIG_PATH=$(PKGCONFIGDIR)\$${PKG_CONFIG_PATH:+:\$$PKG_CONFIG_PATH}"; \
		fi; \
	fi
ifeq ($(HAVE_SLURM),1)
	install -m 0644 $(SPANK) $(DESTDIR)$(LIBDIR)/spank_nvtaskset.so
	install -m 0644 tools/slurm/cli_filter.lua $(DESTDIR)$(DATADIR)/cli_filter.lua
endif
ifeq ($(HAVE_MHD),1)
	install -m 0755 $(EXPORTER_BIN) $(DESTDIR)$(LIBDIR)/nvtaskset-exporter
endif

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/nvtaskset $(DESTDIR)$(LIBDIR)/libnvtaskset.so $(DESTDIR)$(LIBDIR)/nvtaskset-hog \
		$(DESTDIR)$(LIBDIR)/wrapper/libcuda.so.1 $(DESTDIR)$(MANDIR)/nvtaskset.1 \
		$(DESTDIR)$(LIBDIR)/libsmctrl.so $(DESTDIR)$(INCLUDEDIR)/libsmctrl.h \
		$(DESTDIR)$(MAN3DIR)/libsmctrl.3 $(DESTDIR)$(MAN8DIR)/spank_nvtaskset.8 \
		$(DESTDIR)$(BASHCOMPDIR)/nvtaskset $(DESTDIR)$(DOCDIR)/README.md $(DESTDIR)$(DOCDIR)/LICENSE \
		$(DESTDIR)$(LIBDIR)/spank_nvtaskset.so $(DESTDIR)$(DATADIR)/cli_filter.lua \
		$(DESTDIR)$(LIBDIR)/nvtaskset-exporter \
		$(DESTDIR)$(PKGCONFIGDIR)/libsmctrl.pc $(addprefix $(DESTDIR)$(DOCDIR)/docs/,$(notdir $(DOCS))) \
		$(addprefix $(DESTDIR)$(DOCDIR)/docs/examples/,$(notdir $(EXAMPLES)))
	test '$(SMCTRL_TO_LIBDIR)' = . || rm -f $(DESTDIR)$(SMCTRL_LINKDIR)/libsmctrl.so
	@# Its own directories and those the install made, where nothing else is in them
	@# (the deepest first).
	made=$$(cat '$(DESTDIR)$(MADE_DIRS)' 2>/dev/null); rm -f '$(DESTDIR)$(MADE_DIRS)'; \
	for d in $$(printf '%s\n' $(LIBDIR)/wrapper $(LIBDIR) $(DOCDIR)/docs/examples $(DOCDIR)/docs \
		$(DOCDIR) $(DATADIR) $$made | sort -ru); do \
		[ ! -d '$(DESTDIR)'"$$d" ] || rmdir --ignore-fail-on-non-empty '$(DESTDIR)'"$$d"; \
	done
	@# The loader's cache names libsmctrl.so until it is rebuilt.
	if [ -z '$(DESTDIR)' ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

# ---- Debian package -------------------------------------------------------

# dpkg-buildpackage (dpkg-dev, debhelper) in a copy of the tree, so that dh's
# `make clean` and its files under debian/ leave this tree alone; the package
# lands in $(B)/deb/. DEB_BUILD_OPTIONS=nocheck skips the build's `make check`.
DEB_SRC = $(B)/deb/nvtaskset-$(VERSION)
deb:
	@test "$$(sed -n '1s/^nvtaskset (\([^)]*\)).*/\1/p' debian/changelog)" = "$(VERSION)" || \
		{ echo "debian/changelog's version is not $(VERSION) (src/nvtaskset.h)" >&2; exit 1; }
	rm -rf $(B)/deb
	mkdir -p $(DEB_SRC)
	tar -c --exclude=./build --exclude=./.git --exclude=__pycache__ --exclude='./$(B)' . | \
		tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b
	@ls $(B)/deb/*.deb

# Builds, installs, checks, removes and purges the package (root; apt).
check-package:
	@tests/package-test.sh

clean:
	rm -rf $(B)

FORCE:

# The headers each object and program was built from (DEPFLAGS).
-include $(wildcard $(O)/*/*.d $(B)/cmd/*.d $(B)/spank/*.d $(T)/*.d $(HOG).d $(EXPORTER_BIN).d)

.PHONY: all design-picture check check-private check-user try try-containers check-faults check-bench check-gpu check-gpu-hostfn check-gpu-memdriver check-gpu-cbid check-package check-slurm check-podman check-prometheus deb bench bench-sizes bench-smcount bench-placement bench-launch bench-startup bench-startup-parts bench-prio install uninstall clean fuzz-libfuzzer FORCE
.DELETE_ON_ERROR:
