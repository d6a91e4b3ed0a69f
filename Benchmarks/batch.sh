#!/usr/bin/env bash
# mixfx batch's throughput: 200 ten-second stereo clips at 44.1 kHz, each with its own pitch
# (-600…+600 cents) and EQ, rendered to 16-bit WAV by `mixfx batch --jobs 1` and `--jobs 2` in one
# process, and by GNU parallel running one `mixfx render` per clip (-j 2), in one run; jobs per
# second and peak memory.
#   Benchmarks/batch.sh          (installs sox, parallel and time when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
need=()
command -v sox >/dev/null || need+=(sox)
command -v parallel >/dev/null || need+=(parallel)
[ -x /usr/bin/time ] || need+=(time)
install_missing "${need[@]}"
read -r -a cpu <<< "$(scripts/swift-flags.sh)"
swift build -c release --product mixfx "${cpu[@]}" >/dev/null
M=$PWD/.build/release/mixfx
W=${BENCH_DIR:-/tmp/mixfx-batch-bench}
rm -rf "$W/out1" "$W/out2" "$W/outp"; mkdir -p "$W/clips" "$W/out1" "$W/out2" "$W/outp"
for i in $(seq 0 199); do
  f="$W/clips/c$i.wav"
  [ -f "$f" ] || sox -D -n -r 44100 -c 2 -b 16 "$f" synth 10 pluck $((110 + i)) pinknoise mix vol 0.4 2>/dev/null
done
: > "$W/jobs.tsv"
for d in out1 out2; do : > "$W/$d.jsonl"; done
for i in $(seq 0 199); do
  p=$(( (i * 37) % 1201 - 600 )); b=$(( i % 9 - 4 ))
  for d in out1 out2; do
    printf '{"tracks": ["clips/c%d.wav"], "output": "%s/c%d.wav", "args": ["--pitch", "%d", "--bass", "%d", "--sample-format", "s16"]}\n' "$i" "$d" "$i" "$p" "$b" >> "$W/$d.jsonl"
  done
  printf '%s\t%s\t%d\t%d\n' "$W/clips/c$i.wav" "$W/outp/c$i.wav" "$p" "$b" >> "$W/jobs.tsv"
done
run_timed() {  # run_timed LABEL cmd... : wall seconds and peak RSS (the largest process's, KiB)
  local label=$1; shift
  local t0; t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$W/mem.txt" "$@" >/dev/null 2>"$W/err.txt" || { cat "$W/err.txt"; exit 1; }
  local t; t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')
  printf "%-52s %7.2f s %8.1f jobs/s %8.0f MiB\n" "$label" "$t" "$(awk -v t="$t" 'BEGIN{print 200/t}')" "$(awk '{print $1/1024}' "$W/mem.txt")"
  echo "$t" > "$W/last.txt"
}
echo "200 clips × 10 s (44.1 kHz stereo), pitch and bass per clip, to s16 ($(nproc) cores)"
printf "%-52s %9s %13s %12s\n" "" "wall" "throughput" "peak memory"
run_timed "mixfx batch --jobs 1" "$M" batch "$W/out1.jsonl" --jobs 1 --quiet --force; b1=$(cat "$W/last.txt")
run_timed "mixfx batch --jobs 2" "$M" batch "$W/out2.jsonl" --jobs 2 --quiet --force; b2=$(cat "$W/last.txt")
run_timed "GNU parallel -j 2, one mixfx render per clip" \
  parallel -j 2 --colsep '\t' "$M" render {1} -o {2} --pitch {3} --bass {4} --sample-format s16 --quiet --force :::: "$W/jobs.tsv"
gp=$(cat "$W/last.txt")
echo "(GNU parallel's peak memory is its own Perl process's; each mixfx render is a separate process)"
if cmp -s "$W/out2/c17.wav" "$W/outp/c17.wav" && cmp -s "$W/out1/c17.wav" "$W/out2/c17.wav"; then same="the same bytes"; else same="DIFFERENT bytes"; fi
echo "outputs of the three: $same (clip 17 compared)"
echo "ratios: --jobs 2 is $(awk -v a="$b1" -v b="$b2" 'BEGIN{printf "%.2f", a/b}')× --jobs 1; GNU parallel takes $(awk -v a="$gp" -v b="$b2" 'BEGIN{printf "%.2f", a/b}')× the time of --jobs 2"
# a second run finds every job done
t0=$(date +%s.%N); "$M" batch "$W/out2.jsonl" --jobs 2 --quiet
echo "a second run of the same manifest (every job skipped): $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s"
