#!/usr/bin/env bash
# Runs the "band" (four 60 s 44.1 kHz stereo tracks, bass +4 dB at 55 Hz, pitch +200 cents, mixed
# to 16-bit WAV) through mixfx and through the peers, in the same run, and prints the ratios.
#   Benchmarks/run.sh            (installs sox, soundstretch and rubberband-cli when missing, and
#                                 with pip python-stretch, bungee-python and visqol-python)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
need=()
command -v pulseaudio >/dev/null || need+=(pulseaudio libasound2-plugins pulseaudio-utils)
command -v gcc >/dev/null || need+=(gcc)
[ -f /usr/include/fftw3.h ] || need+=(libfftw3-dev)
command -v sox >/dev/null || need+=(sox)
command -v soundstretch >/dev/null || need+=(soundstretch)
command -v rubberband >/dev/null || need+=(rubberband-cli)
install_missing "${need[@]}"
# the Python peers of mixfx-bench --quality (Benchmarks/peers) and its ViSQOL scorer
install_missing_pip soundfile=soundfile python_stretch=python-stretch bungee_python=bungee-python visqol=visqol-python
# mixfx as `make run` builds it, for this machine's CPU; and a portable build beside it, for
# comparison (its own build directory, so neither rebuilds the other)
read -r -a cpu <<< "$(scripts/swift-flags.sh)"
swift build -c release --product mixfx "${cpu[@]}" >/dev/null
swift build -c release --product mixfx-bench "${cpu[@]}" >/dev/null
swift build -c release --product mixfx --scratch-path .build/portable >/dev/null
W=${BENCH_DIR:-/tmp/mixfx-band}
make_band "$W"

# the band into $W/NAME.wav: mixfx_band_with NAME COMMAND... (the mixfx binary, maybe under taskset)
mixfx_band_with() { local name=$1 exe=$2; shift 2; $exe render "${T[@]}" --bass 4 --pitch 200 -o "$W/$name.wav" --force --quiet --sample-format s16 "$@"; }
mixfx_band() { mixfx_band_with mixfx .build/release/mixfx; }
mixfx_band_portable() { mixfx_band_with mixfxp .build/portable/release/mixfx; }
# the portable build made to run its portable DSP copy (what a portable build was before the
# AVX2 copy; see DSPCopy), and at overlaps 4 and 6
mixfx_band_portable_baseline() { MIXFX_DSP=baseline mixfx_band_with mixfxb .build/portable/release/mixfx; }
mixfx_band_portable_overlap() { local o=$1; mixfx_band_with "mixfxo$o" .build/portable/release/mixfx --overlap "$o"; }
mixfx_band_1core() { mixfx_band_with mixfx1 "taskset -c 0 .build/release/mixfx"; }

sox_band() {
  sox -D -m -v 1 "|sox -D ${T[0]} -p bass 4 55 1s pitch 200" -v 1 "|sox -D ${T[1]} -p bass 4 55 1s pitch 200" \
      -v 1 "|sox -D ${T[2]} -p bass 4 55 1s pitch 200" -v 1 "|sox -D ${T[3]} -p bass 4 55 1s pitch 200" \
      -b 16 "$W/sox.wav"
}
# The peers shift the four tracks at once (one process each), so they use both cores as mixfx
# does; sox then applies the EQ and mixes (its per-track pipes run at once too).
soundstretch_band() {
  for i in 0 1 2 3; do soundstretch "${T[$i]}" "$W/ss$i.wav" -pitch=2 >/dev/null 2>&1 & done
  wait
  sox -D -m -v 1 "|sox -D $W/ss0.wav -p bass 4 55 1s" -v 1 "|sox -D $W/ss1.wav -p bass 4 55 1s" \
      -v 1 "|sox -D $W/ss2.wav -p bass 4 55 1s" -v 1 "|sox -D $W/ss3.wav -p bass 4 55 1s" -b 16 "$W/ss.wav"
}
rubberband_band() {
  local mode=$1
  for i in 0 1 2 3; do rubberband "$mode" -p 2 "${T[$i]}" "$W/rb$i.wav" >/dev/null 2>&1 & done
  wait
  sox -D -m -v 1 "|sox -D $W/rb0.wav -p bass 4 55 1s" -v 1 "|sox -D $W/rb1.wav -p bass 4 55 1s" \
      -v 1 "|sox -D $W/rb2.wav -p bass 4 55 1s" -v 1 "|sox -D $W/rb3.wav -p bass 4 55 1s" -b 16 "$W/rb.wav"
}

echo "band: 4 × 60 s 44.1 kHz stereo, bass +4 dB @ 55 Hz, pitch +200 cents, mixed to s16 ($(nproc) cores)"
echo "mixfx built with: ${cpu[*]} (as make run builds it); the peers are Debian's binaries"
m=$(best_of 3 mixfx_band)
m1=$(best_of 3 mixfx_band_1core)
mp=$(best_of 3 mixfx_band_portable)
s=$(best_of 3 sox_band)
ss=$(best_of 3 soundstretch_band)
rb2=$(best_of 1 rubberband_band -2)
rb3=$(best_of 1 rubberband_band -3)
printf "%-34s %8s %12s %18s\n" "tool" "wall s" "× real time" "mixfx is N× faster"
row() { printf "%-34s %8.3f %12.1f %18.2f\n" "$1" "$2" "$(awk -v t="$2" 'BEGIN{print 60/t}')" "$(awk -v t="$2" -v m="$m" 'BEGIN{print t/m}')"; }
row "mixfx render" "$m"
row "mixfx render (1 core, taskset)" "$m1"
row "mixfx render (portable build)" "$mp"
mpb=$(best_of 3 mixfx_band_portable_baseline)
row "mixfx render (portable, MIXFX_DSP=baseline)" "$mpb"
same="the same bytes"
for f in mixfxp mixfxb; do cmp -s "$W/mixfx.wav" "$W/$f.wav" || same="DIFFERENT bytes"; done
echo "(the host build's, the portable build's and its baseline copy's mixes are $same)"
for o in 4 6; do row "mixfx render (portable, --overlap $o)" "$(best_of 3 mixfx_band_portable_overlap $o)"; done
row "sox -m (bass + pitch per track)" "$s"
row "soundstretch + sox (EQ, mix)" "$ss"
row "rubberband -2 + sox (EQ, mix)" "$rb2"
row "rubberband -3 + sox (EQ, mix)" "$rb3"
# The machine's speed drifts by several percent within minutes: the ratios to the two nearest
# peers again over five rounds, each round running the three one after another.
ratios_s=(); ratios_ss=()
for _ in 1 2 3 4 5; do
  a=$(best_of 1 mixfx_band); b=$(best_of 1 sox_band); c=$(best_of 1 soundstretch_band)
  ratios_s+=("$(awk -v t="$b" -v m="$a" 'BEGIN{print t/m}')"); ratios_ss+=("$(awk -v t="$c" -v m="$a" 'BEGIN{print t/m}')")
done
spread() { printf "%s\n" "$@" | sort -g | awk '{v[NR]=$1} END {printf "%.2f–%.2f, median %.2f", v[1], v[NR], v[int((NR+1)/2)]}'; }
echo "five interleaved rounds, each tool's time ÷ mixfx's: sox $(spread "${ratios_s[@]}"); soundstretch $(spread "${ratios_ss[@]}")"
# CPU, what a batch pays for: user + sys seconds of each whole pipeline, best of 3
c_host=$(best_cpu_of 3 mixfx_band); c_port=$(best_cpu_of 3 mixfx_band_portable)
c_base=$(best_cpu_of 3 mixfx_band_portable_baseline)
c_ss=$(best_cpu_of 3 soundstretch_band); c_sox=$(best_cpu_of 3 sox_band)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / b}'; }
echo "CPU seconds: mixfx host $c_host, portable $c_port, portable baseline copy $c_base; soundstretch pipeline $c_ss, sox $c_sox"
echo "  mixfx CPU ÷ soundstretch's: host $(ratio "$c_host" "$c_ss"), portable $(ratio "$c_port" "$c_ss"), portable baseline copy $(ratio "$c_base" "$c_ss")"
echo "  portable wall ÷ soundstretch's $(ratio "$mp" "$ss"), ÷ sox's $(ratio "$mp" "$s")"
# issue #15's goals are ratios of the portable build's; best-of-3 figures taken minutes apart
# move with the machine's drift, so the same ratios again over seven rounds, each round running
# the three pipelines one after another (wall and CPU of each run), their spread and median
r_cpu=(); r_wall_ss=(); r_wall_sox=()
for _ in 1 2 3 4 5 6 7; do
  read -r pw pc <<< "$(wall_and_cpu mixfx_band_portable)"
  read -r sw sc <<< "$(wall_and_cpu soundstretch_band)"
  read -r xw _ <<< "$(wall_and_cpu sox_band)"
  r_cpu+=("$(ratio "$pc" "$sc")"); r_wall_ss+=("$(ratio "$pw" "$sw")"); r_wall_sox+=("$(ratio "$pw" "$xw")")
done
echo "  seven interleaved rounds, portable build: CPU ÷ soundstretch pipeline's $(spread "${r_cpu[@]}");"
echo "    wall ÷ soundstretch's $(spread "${r_wall_ss[@]}"); wall ÷ sox's $(spread "${r_wall_sox[@]}")"
echo
.build/release/mixfx-bench
echo
bash Benchmarks/recordings.sh "$W/recordings" >/dev/null
.build/release/mixfx-bench --quality --recordings "$W/recordings" \
  --band-times "mixfx=$m;sox pitch=$s;soundstretch=$ss;rubberband -2=$rb2;rubberband -3=$rb3"
echo
echo "FFT: ns per real forward transform, mixfx RealFFT (the DSP copy renders use on this CPU) vs FFTW (fftwf r2c, FFTW_MEASURE)"
gcc -O2 -o "$W/fftw_bench" Benchmarks/fftw_bench.c -lfftw3f -lm
paste <(.build/release/mixfx-bench --fft) <("$W/fftw_bench") | awk '{printf "  %5d points: mixfx %8.1f ns, FFTW %8.1f ns, ratio %.2f\n", $1, $2, $4, $2/$4}'

# Live: the render thread's DSP load per period, four stereo tracks with EQ and pitch at 48 kHz,
# played in real time (15 s) through the private PulseAudio null sink of Tests/alsa.
for i in 1 2 3 4; do
  [ -f "$W/live15-$i.wav" ] || sox -D "${T[$((i-1))]}" -r 48000 "$W/live15-$i.wav" trim 0 15 2>/dev/null
done
echo
echo "live: 4 stereo tracks at 48 kHz, bass +4, default buffer (50 ms), 15 s in real time, at +200 cents"
echo "and at both ends of the pitch range (the shifters' worst cases)"
if command -v pulseaudio >/dev/null; then
  export MIXFX_PULSE_DIR=$(mktemp -d /tmp/mixfx-pulse.XXXXXX)
  source Tests/alsa/start-pulse.sh 2>/dev/null
  for pitch in 200 2400 -2400; do
    echo "  pitch $pitch:"
    ALSA_CONFIG_PATH=$PWD/Tests/alsa/asound-mixfx.conf \
      .build/release/mixfx play "$W"/live15-{1,2,3,4}.wav --bass 4 --pitch "$pitch" --device mixfx_pulse --no-ui --json </dev/null \
      | awk -F': ' '/DSPLoad|periodFrames|bufferFrames|latencyFrames|underruns|wallSeconds/ {gsub(/[ ",]/, "", $1); gsub(/,/, "", $2); print "    " $1 " = " $2}'
  done
  # pitch switches: every track from -2400 to +2400 cents and back every half second (each
  # change from -2400 restarts a second vocoder state at the new pitch: its cost lands in a
  # few periods)
  echo "  switching between -2400 and +2400 every 0.5 s:"
  { for _ in $(seq 1 14); do echo "track all pitch 2400"; sleep 0.5; echo "track all pitch -2400"; sleep 0.5; done; echo quit; } \
    | ALSA_CONFIG_PATH=$PWD/Tests/alsa/asound-mixfx.conf \
      .build/release/mixfx play "$W"/live15-{1,2,3,4}.wav --bass 4 --pitch -2400 --device mixfx_pulse --no-ui --json 2>/dev/null \
    | awk -F': ' '/DSPLoad|underruns/ {gsub(/[ ",]/, "", $1); gsub(/,/, "", $2); print "    " $1 " = " $2}'
  bash Tests/alsa/stop-pulse.sh
  echo "  DSP load = render time of a period / the period's duration (1.0 = one core)"
  echo "  control-to-sound latency ≈ buffer + one period; the shifter adds latencyFrames (the same at every overlap: the FFT size is fixed)"
else
  echo "  (skipped: pulseaudio is not installed)"
fi
