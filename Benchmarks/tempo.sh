#!/usr/bin/env bash
# Tempo against the peers, in one run (issue #13): mixfx --tempo, rubberband -3 -T (R3),
# sox tempo and soundstretch -tempo on the same music (the demo band, mixed) and speech
# (espeak-ng), at R = 0.5, 0.8, 1.25, 2:
#   - round trip: R then 1/R, the log-spectral distance to the original (dB, lower is better;
#     aligned by cross-correlation first, so a tool's delay does not count);
#   - lengths: each tool's frames against round(n/R);
#   - speed: CPU seconds (user + sys) for a 60 s stereo track at 0.8 and 1.25, and the ratios.
#   Benchmarks/tempo.sh     (release build first: swift build -c release)
#   TEMPOS="0.5" TOOLS="mixfx sox" SKIP_SPEED=1 Benchmarks/tempo.sh    (one case)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
missing=()
for p in sox:sox rubberband:rubberband-cli soundstretch:soundstretch espeak-ng:espeak-ng; do
  command -v "${p%%:*}" >/dev/null || missing+=("${p#*:}")
done
install_missing "${missing[@]}"
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy
M=.build/release/mixfx
W=$(mktemp -d /tmp/mixfx-tempo.XXXXXX)
trap 'rm -rf "$W"' EXIT
# 16-bit inputs, which every tool reads (the band's mix gets mixfx's no-clip gain)
$M render Demo/*.flac -o "$W/music.wav" --sample-format s16 --quiet --force
espeak-ng -w "$W/speech0.wav" "The quick brown fox jumps over the lazy dog. Slow speech down to learn it, or tighten a podcast by a quarter without changing the voice." 2>/dev/null
sox "$W/speech0.wav" -r 48000 -c 1 -b 16 "$W/speech.wav"
sox -n -r 48000 -c 2 -b 16 "$W/long.wav" synth 60 pinknoise vol 0.2 : synth 60 sine 220 sine 330 vol 0.3 2>/dev/null || \
  sox "$W/music.wav" "$W/long.wav" repeat 7 trim 0 60

# tool R IN OUT
run() {
  local tool=$1 r=$2 in=$3 out=$4
  case $tool in
    mixfx) $M render "$in" --tempo "$r" -o "$out" --sample-format f32 --dither none --quiet --force ;;
    rubberband) rubberband -q -3 -T "$r" "$in" "$out" >/dev/null 2>&1 ;;
    sox) sox "$in" -e floating-point "$out" tempo "$r" 2>/dev/null ;;
    soundstretch) soundstretch "$in" "$out" -tempo="$(awk -v r="$r" 'BEGIN{printf "%.4f", (r - 1) * 100}')" >/dev/null 2>&1 ;;
  esac
}
# (TEMPOS, TOOLS and SKIP_SPEED=1 narrow a run while working on one case)
tools=(${TOOLS:-mixfx rubberband sox soundstretch})
tempos=(${TEMPOS:-0.5 0.8 1.25 2})
echo "round trips (R then 1/R): log-spectral distance to the original, dB (lower is better); length error of the first pass, frames"
for material in music speech; do
  for r in "${tempos[@]}"; do
    inv=$(awk -v r="$r" 'BEGIN{printf "%.10g", 1 / r}')
    for tool in "${tools[@]}"; do
      run "$tool" "$r" "$W/$material.wav" "$W/a-$tool.wav"
      run "$tool" "$inv" "$W/a-$tool.wav" "$W/b-$tool.wav"
    done
    python3 - "$W" "$material" "$r" "${tools[@]}" <<'PY'
import sys, subprocess, numpy as np
w, material, r, tools = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
def load(path):
    raw = subprocess.run(["sox", path, "-t", "f32", "-c", "1", "-r", "48000", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype=np.float32).astype(np.float64)
def frames(path):
    return int(subprocess.run(["soxi", "-s", path], capture_output=True, text=True).stdout)
x = load(f"{w}/{material}.wav")
n = frames(f"{w}/{material}.wav")
def lsd(a, b):
    # align b to a: by the energy envelopes (256-sample steps, ±50 ms; a phase vocoder's
    # waveform need not correlate best at its true delay, its envelope does), then refined to
    # the lag within ±256 samples (16-sample steps) that gives the lowest distance, the same
    # search for every tool (the coarse step alone left some outputs 128 samples off, which
    # read as up to 1 dB worse)
    m = min(len(a), len(b))
    lag_max = 2400
    step = 256
    ea = np.array([np.sqrt(np.mean(a[k:k + step] ** 2)) for k in range(0, m - step, step)])
    eb = np.array([np.sqrt(np.mean(b[k:k + step] ** 2)) for k in range(0, m - step, step)])
    reach = lag_max // step
    scores = [np.dot(ea[reach:-reach], eb[reach + d:len(eb) - reach + d]) for d in range(-reach, reach + 1)]
    coarse = (int(np.argmax(scores)) - reach) * step
    win, hop = 2048, 512
    wnd = np.hanning(win)
    a = a[:m]
    starts = range(lag_max + 256, m - win - lag_max - 256, hop)
    SA = [np.abs(np.fft.rfft(a[i:i + win] * wnd)) ** 2 for i in starts]
    # a floor 80 dB under the loudest bin of the original: differences in what no one hears
    # (16-bit dither-level noise against exact silence) do not count
    floor = max(s.max() for s in SA) * 1e-8
    def at(lag):
        SB = [np.abs(np.fft.rfft(b[i + lag:i + lag + win] * wnd)) ** 2 for i in starts]
        d = [np.sqrt(np.mean((10 * np.log10(A + floor) - 10 * np.log10(B + floor)) ** 2))
             for A, B in zip(SA, SB) if A.sum() > floor * len(A)]
        return float(np.mean(d))
    return min(at(lag) for lag in range(coarse - 256, coarse + 257, 16))
row = []
for t in tools:
    dist = lsd(x, load(f"{w}/b-{t}.wav"))
    err = frames(f"{w}/a-{t}.wav") - int(n / r + 0.5)   # round half up, as round(n/R) is meant (Python rounds half to even)
    row.append(f"{t} {dist:5.2f} dB ({err:+d})")
best = min(float(s.split()[1]) for s in row[1:])
print(f"{material:6s} R={r:<4}  " + "   ".join(row) + f"   mixfx/best peer {float(row[0].split()[1]) / best:.2f}")
PY
  done
done

[ -n "${SKIP_SPEED:-}" ] && exit 0
echo "speed: CPU seconds for 60 s of stereo (user + sys), best of 3"
for r in 0.8 1.25; do
  line="R=$r"
  declare -A cpu=()
  for tool in "${tools[@]}"; do
    best=""
    for _ in 1 2 3; do
      /usr/bin/time -f "%U %S" -o "$W/t" bash -c "$(declare -f run); M=$M; run $tool $r $W/long.wav $W/s-$tool.wav" 2>/dev/null
      s=$(awk '{print $1 + $2}' "$W/t")
      if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$s; fi
    done
    cpu[$tool]=$best
    line="$line  $tool ${best}s"
  done
  for tool in rubberband sox soundstretch; do
    line="$line  mixfx/$tool $(awk -v a="${cpu[mixfx]}" -v b="${cpu[$tool]}" 'BEGIN{printf "%.2f", a / b}')"
  done
  echo "$line"
done
