#!/usr/bin/env bash
# CPU seconds (user + sys, best of 3) of one 60 s 44.1 kHz stereo track (the band's track 1,
# 16-bit) shifted +200 cents to 16-bit WAV: mixfx render against the Python peers' adapters,
# and each ratio to mixfx. Python's start (the interpreter, numpy, soundfile and the peer's module
# imported, nothing processed) is timed apart and also subtracted, so both ratios are printed.
#   Benchmarks/peers/speed.sh            (after swift build -c release --product mixfx and mixfx-bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
source Benchmarks/common.sh
W=${BENCH_DIR:-/tmp/mixfx-band}
make_band "$W"
in=${T[0]}
m=$(best_cpu_of 3 .build/release/mixfx render "$in" --pitch 200 -o "$W/speed-mixfx.wav" --force --quiet --sample-format s16)
echo "mixfx render --pitch 200: $m s CPU"
peer() {  # peer NAME MODULE ADAPTER ARGS...
  local name=$1 module=$2 adapter=$3; shift 3
  if ! python3 -c "import $module" 2>/dev/null; then echo "$name: skipped ($module does not import)"; return; fi
  local t s
  t=$(best_cpu_of 3 python3 "Benchmarks/peers/$adapter" "$in" "$W/speed-$adapter.wav" --cents 200 "$@")
  s=$(best_cpu_of 3 python3 -c "import numpy, soundfile, $module")
  awk -v n="$name" -v t="$t" -v s="$s" -v m="$m" 'BEGIN {
    printf "%s: %.3f s CPU (%.2f× mixfx); Python start %.3f s; less it %.3f s (%.2f×)\n", n, t, t / m, s, t - s, (t - s) / m }'
}
peer "signalsmith (default preset)" python_stretch signalsmith.py
peer "signalsmith 8k (tonality limit 8 kHz)" python_stretch signalsmith.py --tonality-limit 8000
peer "bungee (the binding's default grain)" bungee_python bungee.py
