#!/usr/bin/env bash
# The LV2 plugin against Rubber Band's (issue #34): mixfx.lv2 and rubberband-lv2 (R2, #mono)
# through the same host, Debian's lv2apply, on the same files, mono at 48 kHz. Debian 12's
# rubberband-lv2 (3.1.2) declares its R3 plugins as #r3mono/#r3stereo while its library calls
# them lv2-rubberband-r3#mono/#stereo, so lilv cannot load R3 (lv2apply crashes): R3 is measured
# in the C host only, which loads the library by the library's URI.
#   Benchmarks/lv2-compare.sh     (installs lilv-utils, rubberband-lv2, sox and gcc when missing)
# Prints the reported latencies, CPU time (lv2apply on one minute of music, best of 3, and the
# plugins alone in the C host with 256-frame blocks) with mixfx's ratio to each, then quality
# side by side (mixfx-bench --lv2: the click against the latency, tones, round trips).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
need=()
command -v lv2apply >/dev/null || need+=(lilv-utils)
[ -d /usr/lib/lv2/rubberband.lv2 ] || need+=(rubberband-lv2)
command -v sox >/dev/null || need+=(sox)
command -v gcc >/dev/null || need+=(gcc)
install_missing "${need[@]}"
W=${BENCH_DIR:-/tmp/mixfx-lv2-compare}
rm -rf "$W"; mkdir -p "$W/rec"
swift build -c release --product mixfx-bench >/dev/null
scripts/lv2-bundle.sh "$W/lv2" >/dev/null
export LV2_PATH="$W/lv2:/usr/lib/lv2"
gcc -O2 -I Sources/CLV2/include -o "$W/lv2-host" Tests/lv2/lv2-host.c -ldl

MIXFX=https://mixfx.dev/lv2/pitch#mono
RB=http://breakfastquay.com/rdf/lv2-rubberband
# the demo tracks, mono 48 kHz float: the round trips' recordings; one minute of them for CPU
for f in Demo/*.flac; do sox -G "$f" -r 48000 -c 1 -e floating-point -b 32 "$W/rec/$(basename "$f" .flac).wav"; done
sox "$W"/rec/*.wav "$W/minute.wav" repeat 1 trim 0 60
sox "$W/minute.wav" -t f32 "$W/minute.f32"

# host  URI ARGS... : the C host on the minute (mono), extra arguments as lv2-host takes them
host() { local uri=$1; shift; "$W/lv2-host" "$(plugin_lib "$uri")" "$uri" 48000 1 "$W/minute.f32" "$W/host-out.f32" "$@"; }
plugin_lib() { case "$1" in "$MIXFX") echo "$W/lv2/mixfx.lv2/mixfx.so" ;; *) echo /usr/lib/lv2/rubberband.lv2/lv2-rubberband.so ;; esac; }
# the ports: mixfx 11 (audio 9, 10); Rubber Band R2 9 (audio 7, 8; crispness 3), R3 8 (audio 6, 7)
mixfx_args=(ports=11 audio=9,10 latency=0 1=300 5=55 7=5800 8=1)
r2_args=(ports=9 audio=7,8 latency=0 2=3 4=3)
r3_args=(ports=8 audio=6,7 latency=0 2=3)
lat() { awk '/^latency_end/{print $2}'; }
mixfx_latency=$(host "$MIXFX" "${mixfx_args[@]}" | lat)
r2_latency=$(host "$RB#mono" "${r2_args[@]}" | lat)
R3=http://breakfastquay.com/rdf/lv2-rubberband-r3#mono
r3_latency=$(host "$R3" "${r3_args[@]}" | lat)

plugin_cpu() {  # plugin_cpu URI ARGS... : least run CPU seconds of 3 in the C host, 256-frame blocks
  local best=""
  for _ in 1 2 3; do
    local t; t=$(host "$@" blocks=256 | awk '/^run_cpu_seconds/{print $2}')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
  done
  echo "$best"
}
apply_mixfx() { lv2apply -i "$W/minute.wav" -o "$W/a.wav" -c cents 300 "$MIXFX"; }
apply_r2() { lv2apply -i "$W/minute.wav" -o "$W/a.wav" -c semitones 3 "$RB#mono"; }

echo "one minute of music, mono 48 kHz, +300 cents"
printf '%-26s %14s %14s %14s\n' "" "mixfx.lv2" "rubberband R2" "rubberband R3"
printf '%-26s %14s %14s %14s\n' "reported latency (frames)" "$mixfx_latency" "$r2_latency" "$r3_latency"
a_m=$(best_cpu_of 3 apply_mixfx); a_2=$(best_cpu_of 3 apply_r2)
printf '%-26s %14s %14s %14s\n' "lv2apply CPU (s)" "$a_m" "$a_2" "(not loadable)"
p_m=$(plugin_cpu "$MIXFX" "${mixfx_args[@]}"); p_2=$(plugin_cpu "$RB#mono" "${r2_args[@]}"); p_3=$(plugin_cpu "$R3" "${r3_args[@]}")
printf '%-26s %14s %14s %14s\n' "plugin alone, run CPU (s)" "$p_m" "$p_2" "$p_3"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
echo "mixfx / R2: lv2apply CPU $(ratio "$a_m" "$a_2"), plugin alone $(ratio "$p_m" "$p_2"), latency $(ratio "$mixfx_latency" "$r2_latency")"
echo "mixfx / R3: plugin alone $(ratio "$p_m" "$p_3"), latency $(ratio "$mixfx_latency" "$r3_latency")"
echo
.build/release/mixfx-bench --lv2 "$W/rec" "$MIXFX=$mixfx_latency" "$RB#mono=$r2_latency"
