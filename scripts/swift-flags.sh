#!/usr/bin/env bash
# The swift build flags for the CPU mixfx is built for: CPU=native (the default) is this
# machine's; on a CPU with AVX2 the FFT's radix-4 stages then also run two butterflies at a
# time in eight-lane vectors (-D MIXFX_WIDE_VECTORS; the same bits, fewer instructions).
# Any other CPU name (CPU=x86-64: a binary for any x86-64) gets just -target-cpu.
cpu=${CPU:-native}
flags="-Xswiftc -target-cpu -Xswiftc $cpu"
if [ "$cpu" = native ] && grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  flags="$flags -Xswiftc -DMIXFX_WIDE_VECTORS"
fi
echo "$flags"
