#!/usr/bin/env bash
# Shows that a refactor kept the output bytes: renders the same sessions with two mixfx
# binaries and compares the files with cmp. Usage:
#   scripts/same-bytes.sh OLD_MIXFX NEW_MIXFX [WORKDIR]
# The sessions cover the band (s16, the no-clip gain), float output, formants, per-track
# settings, another overlap, resampling, mono and 24-bit inputs, a preset, tempo and placement,
# and the output stage (limiter, normalisation, the dither's second pass).
# NEW_ARGS (optional) is appended to the new binary's command line only: where a new default
# changes output on purpose, it shows that everything else did not (e.g. NEW_ARGS="--dither none").
set -euo pipefail
old=$1 new=$2 work=${3:-$(mktemp -d)}
mkdir -p "$work"
band=$work/band
[ -f "$band/track4.wav" ] || "$(dirname "$new")/mixfx-bench" --make-band "$band" >/dev/null
command -v sox >/dev/null || { echo "same-bytes: needs sox for the extra inputs" >&2; exit 2; }
[ -f "$work/mono48.wav" ] || sox -n -r 48000 -c 1 "$work/mono48.wav" synth 7 sine 220 sine 440 vol 0.4
[ -f "$work/mono16.wav" ] || sox -n -r 48000 -c 1 -b 16 "$work/mono16.wav" synth 6 sine 330 vol 0.3
[ -f "$work/st22.flac" ] || sox -n -r 22050 -c 2 -b 24 "$work/st22.flac" synth 5 pinknoise vol 0.3
sessions=(
  "band-s16|$band/track1.wav $band/track2.wav $band/track3.wav $band/track4.wav --bass 4 --pitch 200 --sample-format s16"
  "band-f32|$band/track1.wav $band/track2.wav $band/track3.wav $band/track4.wav --bass 4 --pitch 200 --sample-format f32"
  "formants|$band/track2.wav --pitch -700 --formant on --treble -6 --sample-format f32"
  "per-track|$band/track1.wav $band/track3.wav --track 1:pitch=-300,pan=-0.5 --track 2:pitch=1200,volume=0.7,bass=-8,bass-freq=120 --sample-format f32"
  "overlap4|$band/track4.wav --pitch 50 --overlap 4 --sample-format f32"
  "resample|$work/mono48.wav $work/st22.flac $band/track1.wav --pitch -1200 --rate 32000 --sample-format f32"
  "neutral|$work/mono48.wav $work/st22.flac --sample-format s24"
  "preset|$band/track1.wav $band/track2.wav --preset chipmunk --sample-format f32"
  "clipped|$band/track1.wav $band/track2.wav $band/track3.wav $band/track4.wav --volume 3 --treble 6 --clip --sample-format s16"
  "s32-mono|$work/mono48.wav --pitch 100 --sample-format s32"
  "s24-tpdf|$work/st22.flac --pitch -100 --sample-format s24 --dither tpdf"
)
# tempo, speed and placement (when the old binary has them: from 036dec9 on)
old_help=$("$old" render --help 2>&1 || true)
if grep -q -- "--tempo" <<< "$old_help"; then
  sessions+=(
    "tempo|$band/track1.wav $band/track2.wav --tempo 0.8 --pitch -200 --track 2:tempo=1.25,start=0.5,trim=1..8,fade-in=0.3 --sample-format f32"
    "tempo-hits|$band/track4.wav --tempo 0.5 --pitch 1200 --sample-format f32"
    "speed|$band/track3.wav $work/st22.flac --speed 0.8 --track 2:tempo=2 --sample-format f32"
  )
fi
# the output stage: limiter, loudness normalisation (with and without it), the no-clip gain
# after the limiter (when the old binary has them)
if grep -q -- "--normalize" <<< "$old_help"; then
  sessions+=(
    "limit|$band/track1.wav $band/track2.wav $band/track3.wav $band/track4.wav --volume 2 --bass 6 --limit -2 --sample-format s16"
    "limit-0|$band/track1.wav $band/track4.wav --volume 4 --limit 0 --sample-format s16"
    "normalize|$band/track1.wav $band/track2.wav --normalize -16 --sample-format s24"
    "normalize-limit|$band/track1.wav $band/track2.wav $band/track3.wav $band/track4.wav --normalize -9 --limit -1 --sample-format s16"
    "strict-dither|$work/mono48.wav --pitch 100 --clip --sample-format s16"
    "avoid-s16|$band/track1.wav $band/track2.wav $band/track3.wav $band/track4.wav --volume 3 --treble 6 --sample-format s16"
    "avoid-s24|$band/track2.wav $band/track3.wav --volume 4 --pitch -300 --sample-format s24"
    "passthrough-s16|$work/mono16.wav $work/mono16.wav --sample-format s16"
  )
fi
status=0
for s in "${sessions[@]}"; do
  name=${s%%|*}; args=${s#*|}
  # shellcheck disable=SC2086
  "$old" render $args -o "$work/$name-old.wav" --force --quiet 2>>"$work/stderr.log"
  # shellcheck disable=SC2086
  "$new" render $args ${NEW_ARGS:-} -o "$work/$name-new.wav" --force --quiet 2>>"$work/stderr.log"
  if cmp -s "$work/$name-old.wav" "$work/$name-new.wav"; then
    echo "same   $name ($(stat -c %s "$work/$name-new.wav") bytes)"
  else
    echo "DIFFER $name"; status=1
  fi
done
exit $status
