#!/usr/bin/env bash
# The swift build flags for the CPU mixfx is built for: CPU=native (the default) is this
# machine's; on a CPU with AVX2 the FFT's radix-4 stages then also run two butterflies at a
# time in eight-lane vectors (-D MIXFX_WIDE_VECTORS; the same bits, fewer instructions).
# Any other CPU name (CPU=x86-64: a binary for any x86-64) gets just -target-cpu. A build for
# anything narrower than any x86-64 is marked -D MIXFX_HOST_BUILD (the tests that run mixfx
# under an emulated older CPU skip there). Either way the engine also carries the AVX2 copy of
# the DSP kernels and picks one at run time (DSPCopy).
# (CPU=x86-64 passes nothing: it is the default, and a global -target-cpu would override the
# AVX2 copy's own.)
cpu=${CPU:-native}
if [ "$cpu" = x86-64 ]; then echo ""; exit 0; fi
flags="-Xswiftc -target-cpu -Xswiftc $cpu -Xswiftc -DMIXFX_HOST_BUILD"
if [ "$cpu" = native ] && grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  flags="$flags -Xswiftc -DMIXFX_WIDE_VECTORS"
fi
echo "$flags"
