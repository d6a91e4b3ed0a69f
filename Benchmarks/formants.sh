#!/usr/bin/env bash
# Formants against the peers (issue #32): mixfx --formant, rubberband -3 -F and Signalsmith
# Stretch's formant mode on espeak-ng speech and sung vowels at -500, +500, +900 cents; the
# spectral envelope error to the input (Benchmarks/peers/formants.py says how it is measured).
#   Benchmarks/formants.sh                 (release build first: swift build -c release)
#   MIXFX=/path/to/mixfx Benchmarks/formants.sh
# The Signalsmith peer is its C++ library (the Python binding has no formant calls), built here
# from SIGNALSMITH_DIR (a folder holding signalsmith-stretch.h and signalsmith-linear/, the
# library's tag-pinned dependency), or cloned into ~/.cache/mixfx-bench if that folder is not
# given; without either the peer is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
missing=()
for p in sox:sox rubberband:rubberband-cli espeak-ng:espeak-ng g++:g++; do
  command -v "${p%%:*}" >/dev/null || missing+=("${p#*:}")
done
install_missing "${missing[@]}"
install_missing_pip numpy=numpy scipy=scipy soundfile=soundfile
M=${MIXFX:-.build/release/mixfx}
W=$(mktemp -d /tmp/mixfx-formants.XXXXXX)
trap 'rm -rf "$W"' EXIT

S=${SIGNALSMITH_DIR:-$HOME/.cache/mixfx-bench/signalsmith}
if [ ! -f "$S/signalsmith-stretch.h" ] && [ -z "${SIGNALSMITH_DIR:-}" ]; then
  mkdir -p "$S"
  git clone -q --depth 1 https://github.com/Signalsmith-Audio/signalsmith-stretch "$S/stretch" 2>/dev/null &&
    git clone -q --depth 1 --branch 0.2.6 https://github.com/Signalsmith-Audio/linear "$S/signalsmith-linear" 2>/dev/null &&
    cp "$S/stretch/signalsmith-stretch.h" "$S/" || echo "(could not fetch Signalsmith Stretch: its peer is left out)"
fi
peer=()
if [ -f "$S/signalsmith-stretch.h" ] &&
   g++ -O2 -std=c++17 -march=native -I"$S" -I"$S/signalsmith-linear" Benchmarks/peers/signalsmith_formant.cpp -o "$W/signalsmith_formant"; then
  peer=(--signalsmith "$W/signalsmith_formant")
fi
python3 Benchmarks/peers/formants.py --mixfx "$M" "${peer[@]}" --work "$W"
