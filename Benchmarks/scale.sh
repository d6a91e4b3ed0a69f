#!/usr/bin/env bash
# How mixfx scales with the work (issue #15): the band's settings (bass +4 dB, pitch +200 cents,
# 16-bit output) on 1, 4, 16 and 64 tracks of 60 s, on 4 tracks of 1, 10 and 60 minutes, on 1 and
# 2 cores, and on 300 tracks of 10 s; wall and CPU seconds, peak resident memory, and the CPU
# cost per track-second, which must stay flat.
#   Benchmarks/scale.sh      (release build first: swift build -c release)
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A peak_kb
source Benchmarks/common.sh
command -v sox >/dev/null || install_missing sox
M=$(pwd)/.build/release/mixfx
W=${BENCH_DIR:-/tmp/mixfx-band}
make_band "$W"
S=$(mktemp -d /tmp/mixfx-scale.XXXXXX)
trap 'rm -rf "$S"' EXIT
# N tracks: links to the band's four, cycled (each read and processed on its own)
tracks() {  # tracks N SECONDS : paths in $L
  local n=$1 s=$2; L=()
  for i in 1 2 3 4; do
    [ -f "$S/t$i-$s.wav" ] || sox "$W/track$i.wav" "$S/t$i-$s.wav" repeat $(( (s + 59) / 60 )) trim 0 "$s"
  done
  for k in $(seq 1 "$n"); do
    ln -sf "$S/t$(( (k - 1) % 4 + 1 ))-$s.wav" "$S/in-$s-$k.wav"; L+=("$S/in-$s-$k.wav")
  done
}
measure() {  # measure LABEL TRACKS SECONDS [taskset...]
  local label=$1 n=$2 s=$3; shift 3
  tracks "$n" "$s"
  /usr/bin/time -f "%e %U %S %M" -o "$S/t" "$@" "$M" render "${L[@]}" --bass 4 --pitch 200 -o "$S/out.wav" --force --quiet --sample-format s16
  read -r wall user sys rss < "$S/t"
  peak_kb[$n]=$rss
  awk -v l="$label" -v n="$n" -v s="$s" -v w="$wall" -v u="$user" -v y="$sys" -v m="$rss" 'BEGIN{
    cpu = u + y; printf "%-22s wall %7.2f s  cpu %7.2f s  peak %7.1f MB  cpu per track-second %.2f ms  %.0f KB per track\n",
    l, w, cpu, m / 1024, 1000 * cpu / (n * s), m / n }'
}
echo "tracks (60 s each)"
for n in 1 4 16 64; do measure "$n tracks" "$n" 60; done
# (the cores before the long renders: after the hour, in one run, the one-core render sat idle
# for a tenth of its time, which it does not on its own)
echo "cores (4 tracks of 60 s)"
measure "1 core" 4 60 taskset -c 0
measure "2 cores" 4 60 taskset -c 0,1
echo "length (4 tracks)"
for s in 60 600 3600; do measure "$(( s / 60 )) min" 4 "$s"; done
echo "many tracks"
measure "300 tracks of 10 s" 300 10
# what one more track costs: the peaks' difference over the tracks' (the process's own memory, the
# worker threads' and the tables cancel; "KB per track" above divides them in)
awk -v a="${peak_kb[16]}" -v b="${peak_kb[64]}" 'BEGIN{ printf "one more track (16 against 64 tracks): %.0f KB\n", (b - a) / 48 }'
