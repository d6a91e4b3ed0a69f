#!/usr/bin/env bash
# Builds the recordings the round-trip benchmark (`mixfx-bench --roundtrip DIR`) uses, from
# Debian packages, into DIR (44.1 kHz 16-bit WAV, peaks at −6 dBFS):
#   voice.wav     real speech: alsa-utils' channel announcements (a recorded human voice)
#   tts.wav       espeak-ng reading a sentence (a synthetic voice, sharp consonants)
#   band.wav      piano chords, bass and drums rendered by fluidsynth from the sampled
#                 instruments of timgm6mb-soundfont (recorded instrument samples, stereo)
#   effects.wav   freedesktop sound theme: phone ring, camera shutter, bell (stereo)
#   Benchmarks/recordings.sh DIR      (installs the packages when missing)
set -euo pipefail
out=${1:?usage: recordings.sh DIR}
mkdir -p "$out"
need=()
[ -f /usr/share/sounds/alsa/Front_Center.wav ] || need+=(alsa-utils)
[ -d /usr/share/sounds/freedesktop ] || need+=(sound-theme-freedesktop)
command -v espeak-ng >/dev/null || need+=(espeak-ng)
command -v fluidsynth >/dev/null || need+=(fluidsynth)
[ -f /usr/share/sounds/sf2/TimGM6mb.sf2 ] || need+=(timgm6mb-soundfont)
command -v sox >/dev/null || need+=(sox libsox-fmt-all)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
A=/usr/share/sounds/alsa
sox -R $A/Front_Center.wav $A/Front_Left.wav $A/Rear_Right.wav $A/Side_Left.wav $A/Rear_Center.wav \
    -r 44100 -b 16 "$out/voice.wav"
espeak-ng -w "$out/tts-raw.wav" "Pitch shifting keeps the timing, but moves every partial of the voice. Sixty six sharp consonants."
sox -R "$out/tts-raw.wav" -r 44100 -b 16 "$out/tts.wav" && rm "$out/tts-raw.wav"
F=/usr/share/sounds/freedesktop/stereo
parts=()
for n in phone-incoming-call camera-shutter bell complete; do
  sox -R "$F/$n.oga" -r 44100 -b 16 -c 2 "$out/part-$n.wav"; parts+=("$out/part-$n.wav")
done
sox -R "${parts[@]}" "$out/effects.wav" && rm "${parts[@]}"

# An 8 s type-0 MIDI file: piano chords (C, Am, F, G), a bass line and a drum pattern at 120 bpm.
python3 - "$out/band.mid" <<'EOF'
import struct, sys
def vlq(n):
    b = [n & 0x7F]
    while n > 0x7F:
        n >>= 7; b.insert(0, 0x80 | (n & 0x7F))
    return bytes(b)
q = 480; events = []                               # (tick, bytes)
def note(t, ch, key, vel, length):
    events.append((t, bytes([0x90 | ch, key, vel]))); events.append((t + length, bytes([0x80 | ch, key, 0])))
events.append((0, bytes([0xC0, 0])))               # piano
events.append((0, bytes([0xC1, 33])))              # finger bass
chords = [[60, 64, 67], [57, 60, 64], [53, 57, 60], [55, 59, 62]]
roots = [36, 33, 29, 31]
for bar in range(4):
    t0 = bar * 4 * q
    for beat in range(4):
        for k in chords[bar]: note(t0 + beat * q, 0, k, 70 + 10 * (beat == 0), q - 20)
        note(t0 + beat * q, 1, roots[bar] + (12 if beat % 2 else 0), 90, q - 40)
    for eighth in range(8):
        t = t0 + eighth * q // 2
        note(t, 9, 42, 60, q // 4)                                 # hi-hat
        if eighth in (0, 4): note(t, 9, 36, 110, q // 4)           # kick
        if eighth in (2, 6): note(t, 9, 38, 100, q // 4)           # snare
events.sort(key=lambda e: e[0])
track, last = b"", 0
track += vlq(0) + b"\xFF\x51\x03" + (500000).to_bytes(3, "big")  # 120 bpm
for t, data in events:
    track += vlq(t - last) + data; last = t
track += vlq(4 * q) + b"\xFF\x2F\x00"
with open(sys.argv[1], "wb") as f:
    f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, q) + b"MTrk" + struct.pack(">I", len(track)) + track)
EOF
fluidsynth -ni -q -g 0.6 -r 44100 -F "$out/band-raw.wav" /usr/share/sounds/sf2/TimGM6mb.sf2 "$out/band.mid" >/dev/null 2>&1
sox -R "$out/band-raw.wav" -b 16 "$out/band.wav" trim 0 8.5 && rm "$out/band-raw.wav" "$out/band.mid"
# peaks at −6 dBFS, so that no tool's 16-bit output clips when shifting raises the crest factor
for f in "$out"/voice.wav "$out"/tts.wav "$out"/band.wav "$out"/effects.wav; do
  sox -R "$f" "$f.tmp.wav" gain -n -6 && mv "$f.tmp.wav" "$f"
done
ls "$out"/*.wav
