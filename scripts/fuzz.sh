#!/usr/bin/env bash
# libFuzzer runs of mixfx's six fuzz targets (Fuzz/MixFXFuzz): the preset parser, the
# command-line parsers (render, play), the live control protocol, the file-reading path
# (libsndfile through SoundFileReader into a track), mixfx batch's manifest parser, and the
# numeric settings at their edges (planning and a short render of the sessions they make).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   default 5 s each, all targets (make test runs this)
#   make fuzz                                600 s each (to a plateau); see Fuzz/README.md
#
# Each target starts from the seeds committed in Fuzz/corpus/TARGET plus what earlier runs on
# this machine found (.build/fuzz-corpus/TARGET, not committed). A crash leaves its input as
# .build/fuzz-artifacts/crash-* and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(preset cli control file manifest numeric)
swift build -c release --product mixfx-fuzz --build-path .build/fuzz \
  -Xswiftc -sanitize=fuzzer -Xswiftc -DMIXFX_FUZZ -Xswiftc -parse-as-library -Xswiftc -enable-testing
mkdir -p .build/fuzz-artifacts
for t in "${targets[@]}"; do
  work=.build/fuzz-corpus/$t
  mkdir -p "$work"
  log=.build/fuzz-artifacts/$t.log
  echo "fuzz $t: ${seconds}s"
  # (the Swift runtime's backtracer off, so libFuzzer sees a crash and saves its input)
  if ! SWIFT_BACKTRACE=enable=no MIXFX_FUZZ_TARGET=$t .build/fuzz/release/mixfx-fuzz "$work" "Fuzz/corpus/$t" \
       -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix=.build/fuzz-artifacts/ -print_final_stats=1 > "$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz $t: FAILED (input saved under .build/fuzz-artifacts/)"
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  echo "fuzz $t: ok, $runs inputs, coverage $cov edges, $ft features, corpus $(ls "$work" | wc -l) files"
done
