# mixfx: the two commands of the README.
#   make run    install what is missing, build in release, render the demo session to demo-mix.wav
#   make test   install what is missing (with the test oracles) and run the whole suite
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

.PHONY: run test test-slurm build bench clean fuzz test-asan test-tsan soak

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
