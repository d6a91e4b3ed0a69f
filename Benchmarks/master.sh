#!/usr/bin/env bash
# The master section on the band (four 60 s 44.1 kHz stereo tracks, bass +4, pitch +200): mixfx
# with --normalize -14 --limit -1 against the same mastering done by ffmpeg (loudnorm, two passes,
# linear) and by sox (gain -n: two passes, peak normalisation, the nearest it has), in one run;
# the loudness and true peak each one lands at (measured by mixfx analyze); and the loudness
# meter's own cost against the render.
#   Benchmarks/master.sh          (installs sox and ffmpeg when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
need=()
command -v sox >/dev/null || need+=(sox)
command -v ffmpeg >/dev/null || need+=(ffmpeg)
[ -x /usr/bin/time ] || need+=(time)
install_missing "${need[@]}"
read -r -a cpu <<< "$(scripts/swift-flags.sh)"
swift build -c release --product mixfx "${cpu[@]}" >/dev/null
swift build -c release --product mixfx-bench "${cpu[@]}" >/dev/null
M=.build/release/mixfx
W=${BENCH_DIR:-/tmp/mixfx-band}
make_band "$W"

band() { "$M" render "${T[@]}" --bass 4 --pitch 200 --force --quiet "$@"; }
plain() { band -o "$W/m-plain.wav" --sample-format s16; }
mastered() { band -o "$W/m-master.wav" --sample-format s16 --normalize -14 --limit -1; }
float_mix() { band -o "$W/m-float.wav" --sample-format f32; }
# ffmpeg: loudnorm's measuring pass, then its linear pass with the measured values (EBU R128
# two-pass use), from the same float mix
ffmpeg_master() {
  local j; j=$(ffmpeg -hide_banner -nostats -i "$W/m-float.wav" -af loudnorm=I=-14:TP=-1:LRA=20:print_format=json -f null - 2>&1 | sed -n '/^{/,/^}/p')
  local mi mtp mlra mth off
  mi=$(echo "$j" | awk -F'"' '/input_i/{print $4}'); mtp=$(echo "$j" | awk -F'"' '/input_tp/{print $4}')
  mlra=$(echo "$j" | awk -F'"' '/input_lra/{print $4}'); mth=$(echo "$j" | awk -F'"' '/input_thresh/{print $4}')
  off=$(echo "$j" | awk -F'"' '/target_offset/{print $4}')
  ffmpeg -hide_banner -nostats -y -i "$W/m-float.wav" \
    -af "loudnorm=I=-14:TP=-1:LRA=20:measured_I=$mi:measured_TP=$mtp:measured_LRA=$mlra:measured_thresh=$mth:offset=$off:linear=true" \
    -ar 44100 -c:a pcm_s16le "$W/ffmpeg.wav"
}
# sox: gain -n reads the file twice (peak, then gain): peak normalisation to -1 dBFS
sox_master() { sox -D "$W/m-float.wav" -b 16 "$W/sox.wav" gain -n -1; }
meter() { "$M" analyze "$W/m-float.wav"; }
# CPU seconds (user + system) of one run
cpu_of() { /usr/bin/time -f "%U %S" -o "$W/cpu.txt" "$@" >/dev/null 2>&1; awk '{printf "%.3f", $1 + $2}' "$W/cpu.txt"; }

echo "master section on the band ($(nproc) cores): the mix normalised to -14 LUFS with a -1 dBTP ceiling"
float_mix
p=$(best_of 3 plain)
m=$(best_of 3 mastered)
f=$(best_of 3 ffmpeg_master)
s=$(best_of 3 sox_master)
a=$(best_of 3 meter)
over=$(awk -v a="$m" -v b="$p" 'BEGIN{printf "%.3f", a-b}')
printf "%-52s %8s\n" "" "wall s"
printf "%-52s %8.3f\n" "mixfx render (plain, s16)" "$p"
printf "%-52s %8.3f\n" "mixfx render --normalize -14 --limit -1 (s16)" "$m"
printf "%-52s %8.3f\n" "  its master section (the difference)" "$over"
printf "%-52s %8.3f\n" "ffmpeg loudnorm, two passes, on the float mix" "$f"
printf "%-52s %8.3f\n" "sox gain -n -1 (peak), two passes, on the float mix" "$s"
printf "%-52s %8.3f\n" "mixfx analyze (the meter alone) on the float mix" "$a"
echo "ratios: ffmpeg's mastering takes $(awk -v f="$f" -v o="$over" 'BEGIN{printf "%.1f", f/o}')× the time of mixfx's master section;" \
     "sox's $(awk -v f="$s" -v o="$over" 'BEGIN{printf "%.1f", f/o}')×;" \
     "the whole mastered render takes $(awk -v f="$f" -v m="$m" 'BEGIN{printf "%.2f", m/f}')× ffmpeg's mastering alone"
pc=$(cpu_of "$M" render "${T[@]}" --bass 4 --pitch 200 --force --quiet -o "$W/m-plain.wav" --sample-format s16)
ac=$(cpu_of "$M" analyze "$W/m-float.wav")
echo "CPU: the plain render $pc s, the meter alone (loudness + true peak, reading the file, process start) $ac s:" \
     "$(awk -v a="$ac" -v p="$pc" 'BEGIN{printf "%.1f", 100*a/p}') % of the render"
echo
echo "where each lands (mixfx analyze):"
"$M" analyze "$W/m-master.wav" "$W/ffmpeg.wav" "$W/sox.wav"
