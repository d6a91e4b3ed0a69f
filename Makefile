# mixfx: the two commands of the README.
#   make run    install what is missing, build in release, render the demo session to demo-mix.wav
#   make test   install what is missing (with the test oracles) and run the whole suite
#   make install      build (portable, release) and install under PREFIX (default /usr/local);
#                     DESTDIR, BINDIR, LIBDIR, ... as GNU make has them (see below)
#   make uninstall    remove what make install put there (its manifest), nothing else
#   make test-slurm   the README's sbatch recipe for `mixfx batch` on a private single-node Slurm
#                     (as root; installs Debian's Slurm and munge; scripts/test-slurm.sh, about 20 s)
#
# Everything is built for this machine's CPU (scripts/swift-flags.sh: `-target-cpu native`, and
# the FFT's eight-lane stages where the CPU has AVX2; the output is the same bytes as a portable
# build's). `make run CPU=x86-64` (or a plain `swift build -c release`) builds binaries that run
# on any x86-64.
CPU ?= native
export CPU
SWIFTFLAGS = $(shell scripts/swift-flags.sh)

.PHONY: run test test-slurm build bench clean fuzz test-asan test-tsan soak install install-build uninstall

run:
	scripts/install-deps.sh
	swift build -c release --product mixfx $(SWIFTFLAGS)
	.build/release/mixfx render Demo/*.flac --preset demo -o demo-mix.wav --force

# (the tests run on the portable build, the one users and packagers get; TEST_CPU=native for this CPU's)
TEST_CPU ?= x86-64
test:
	scripts/install-deps.sh test
	CPU=$(TEST_CPU) scripts/test.sh

# mixfx as the README's batch section builds it for a cluster: the portable release build
test-slurm:
	scripts/install-deps.sh slurm
	swift build -c release --product mixfx
	scripts/test-slurm.sh .build/release/mixfx

build:
	swift build -c release $(SWIFTFLAGS)

# make install [PREFIX=/usr/local] [DESTDIR=] [BINDIR=... LIBDIR=... INCLUDEDIR=... DATAROOTDIR=...
# MANDIR=... PKGCONFIGDIR=... LV2DIR=... BASHCOMPDIR=... ZSHCOMPDIR=...]: bin/mixfx,
# lib/libmixfx.so{,.0}, include/mixfx.h, lib/pkgconfig/mixfx.pc, lib/lv2/mixfx.lv2/ (when
# scripts/lv2-bundle.sh is there), share/man/man1/mixfx.1, the bash and zsh completions, and
# share/mixfx/install-manifest (what `make uninstall` removes). scripts/install.sh does it.
# It builds first, in a build folder of its own (.build/install, so it never undoes `make run`'s
# build for this CPU or the tests'): release, for any x86-64 (INSTALL_CPU=native: for this
# machine's CPU), the executable with the Swift runtime inside (--static-swift-stdlib); swift
# build redoes only what changed. NOBUILD=1 installs BUILD_DIR as it is (the tests install
# their own build so: NOBUILD=1 BUILD_DIR=.build/release).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATAROOTDIR ?= $(PREFIX)/share
DATADIR ?= $(DATAROOTDIR)
MANDIR ?= $(DATAROOTDIR)/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
LV2DIR ?= $(LIBDIR)/lv2
BASHCOMPDIR ?= $(DATAROOTDIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATAROOTDIR)/zsh/site-functions
INSTALL_BUILD_PATH ?= .build/install
BUILD_DIR ?= $(INSTALL_BUILD_PATH)/release
INSTALL_CPU ?= x86-64
NOBUILD ?=
# (-L the toolchain's static runtime: SwiftPM gives it to an executable's link under
# --static-swift-stdlib, not to the library's, whose objects then name Foundation's static parts;
# that link is only a step: scripts/capi-static-link.sh links the installed library)
SWIFT_STATIC_DIR = $(shell d=$$(dirname "$$(readlink -f "$$(command -v swiftc)")") && echo "$$d/../lib/swift_static/linux")
INSTALL_SWIFTFLAGS = $(shell CPU=$(INSTALL_CPU) scripts/swift-flags.sh) -Xlinker -L$(SWIFT_STATIC_DIR)
INSTALL_VARS = DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" BINDIR="$(BINDIR)" LIBDIR="$(LIBDIR)" \
	INCLUDEDIR="$(INCLUDEDIR)" DATAROOTDIR="$(DATAROOTDIR)" DATADIR="$(DATADIR)" MANDIR="$(MANDIR)" \
	PKGCONFIGDIR="$(PKGCONFIGDIR)" LV2DIR="$(LV2DIR)" BASHCOMPDIR="$(BASHCOMPDIR)" \
	ZSHCOMPDIR="$(ZSHCOMPDIR)" BUILD_DIR="$(BUILD_DIR)"

install-build:
ifeq ($(NOBUILD),)
	scripts/install-deps.sh
	swift build -c release --build-path $(INSTALL_BUILD_PATH) --static-swift-stdlib --product mixfx $(INSTALL_SWIFTFLAGS)
	swift build -c release --build-path $(INSTALL_BUILD_PATH) --static-swift-stdlib --product mixfx-c $(INSTALL_SWIFTFLAGS)
	scripts/capi-static-link.sh $(BUILD_DIR) $(BUILD_DIR)/libmixfx.so.0
	swift build -c release --build-path $(INSTALL_BUILD_PATH) --product mixfx_lv2 $(INSTALL_SWIFTFLAGS)
endif

install: install-build
	$(INSTALL_VARS) scripts/install.sh install

uninstall:
	$(INSTALL_VARS) scripts/install.sh uninstall

# libFuzzer, 600 s per target (make test runs 5 s of each)
fuzz:
	scripts/install-deps.sh test
	scripts/fuzz.sh 600

# the whole suite under AddressSanitizer / ThreadSanitizer (debug builds of their own)
test-asan:
	scripts/install-deps.sh test
	scripts/test.sh --sanitize=address

test-tsan:
	scripts/install-deps.sh test
	scripts/test.sh --sanitize=thread

# long runs: a one-hour offline session and 30 minutes of live playback with changes
soak:
	scripts/install-deps.sh test
	scripts/soak.sh

bench:
	scripts/install-deps.sh test
	Benchmarks/run.sh

clean:
	rm -rf .build demo-mix.wav
