#!/usr/bin/env bash
# Long runs (make soak), each ending in PASS or FAIL lines with its figures:
#
# 1. Offline: a one-hour four-track session (EQ and pitch on every track) rendered next to a
#    one-minute one: peak memory must not grow with the length (within 8 MB), the hour's
#    output must be exactly 3600 s long and finite.
# 2. Live: `mixfx play --loop` for 30 minutes through the private PulseAudio null sink at the
#    default buffer, a random change from the control input every 50 ms (volume, pan, EQ,
#    pitch, mute, master volume, now and then a seek), captured through the tap: no underrun,
#    no NaN or infinity, resident memory flat within 1 MiB after the first minute.
#
#   SOAK_OFFLINE_SECONDS=3600 SOAK_LIVE_SECONDS=1800 scripts/soak.sh   (the defaults)
#   SOAK_PARTS="2" scripts/soak.sh                                     (only the live run)
set -euo pipefail
cd "$(dirname "$0")/.."
offline=${SOAK_OFFLINE_SECONDS:-3600}
live=${SOAK_LIVE_SECONDS:-1800}
parts=" ${SOAK_PARTS:-0 1 2} "
read -r -a cpu <<< "$(scripts/swift-flags.sh)"
swift build -c release --product mixfx "${cpu[@]}"
W=$(mktemp -d /tmp/mixfx-soak.XXXXXX)
trap 'rm -rf "$W"' EXIT
M=.build/release/mixfx
fail=0

if [[ $parts == *" 0 "* ]]; then
echo "soak 0: a render past 4 GiB to .wav (written as RF64; its header must hold every frame)"
python3 - "$W/huge.w64" <<'PY'
import struct, sys, os
# a 16-bit stereo W64 file claiming 1.1e9 frames of silence, sparse (no disk, instant)
frames, ch, rate = 1_100_000_000, 2, 44100
def guid(s): return bytes.fromhex(s)
riff = guid("726966662e91cf11a5d628db04c10000"); wave = guid("77617665f3acd3118cd100c04f8edb8a")
fmt = guid("666d7420f3acd3118cd100c04f8edb8a"); data = guid("64617461f3acd3118cd100c04f8edb8a")
fmt_body = struct.pack("<HHIIHH", 1, ch, rate, rate * ch * 2, ch * 2, 16)
n = frames * ch * 2
head = riff + struct.pack("<Q", 40 + 24 + len(fmt_body) + 24 + n) + wave + fmt + struct.pack("<Q", 24 + len(fmt_body)) + fmt_body + data + struct.pack("<Q", 24 + n)
with open(sys.argv[1], "wb") as f:
    f.write(head)
    f.truncate(len(head) + n)
PY
if "$M" render "$W/huge.w64" -o "$W/huge.wav" --json > "$W/huge.json" && python3 - "$W" <<'PY'
import json, struct, sys
w = sys.argv[1]
s = json.load(open(f"{w}/huge.json"))
with open(f"{w}/huge.wav", "rb") as f: head = f.read(64)
ds64 = head.find(b"ds64")
# ds64: id, size, riff size (8), data size (8), ...: the data size / 4 bytes per frame
frames_in_header = struct.unpack("<Q", head[ds64 + 16: ds64 + 24])[0] // 4 if ds64 >= 0 else -1
ok = head[:4] == b"RF64" and s["frames"] == 1_100_000_000 and frames_in_header == 1_100_000_000
print(f"soak 0: {'PASS' if ok else 'FAIL'}: {head[:4].decode()} header, {frames_in_header} frames in ds64, "
      f"{s['frames']} rendered in {s['elapsedSeconds']:.1f} s")
sys.exit(0 if ok else 1)
PY
then :; else fail=1; fi
rm -f "$W/huge.wav" "$W/huge.w64"
fi

if [[ $parts == *" 1 "* ]]; then
echo "soak 1: offline, four tracks of $offline s"
for i in 1 2 3 4; do
  f=$((110 * i))
  sox -n -r 44100 -c 2 -b 16 "$W/long$i.flac" synth "$offline" sine $f sine $((f * 3 / 2)) pinknoise vol 0.2 remix 1,3 2,3
  sox "$W/long$i.flac" "$W/short$i.flac" trim 0 60
done
run_offline() {  # tag files...
  local tag=$1; shift
  /usr/bin/time -f "%M" -o "$W/$tag.rss" "$M" render "$@" --bass 4 --pitch 200 --track 2:pitch=-300,treble=3 \
    --track 3:pitch=700,formant=on -o "$W/$tag.wav" --json --force > "$W/$tag.json"
}
run_offline short "$W"/short*.flac
run_offline long "$W"/long*.flac
python3 - "$W" "$offline" <<'PY' || fail=1
import json, sys, wave, struct
w, seconds = sys.argv[1], int(sys.argv[2])
short, long = (json.load(open(f"{w}/{t}.json")) for t in ("short", "long"))
rss = {t: int(open(f"{w}/{t}.rss").read().split()[-1]) / 1024 for t in ("short", "long")}
ok = long["frames"] == seconds * 44100 and rss["long"] - rss["short"] < 8
print(f"soak 1: {'PASS' if ok else 'FAIL'}: {long['frames']} frames ({long['durationSeconds']:.0f} s) in "
      f"{long['elapsedSeconds']:.1f} s ({long['speedTimesRealTime']:.0f}x real time); peak memory "
      f"{rss['long']:.1f} MB for the hour, {rss['short']:.1f} MB for one minute")
sys.exit(0 if ok else 1)
PY
fi

if [[ $parts == *" 2 "* ]]; then
echo "soak 2: live, $live s with a change every 50 ms"
export MIXFX_PULSE_DIR=$W/pulse
mkdir -p "$MIXFX_PULSE_DIR"
# shellcheck source=/dev/null
source Tests/alsa/start-pulse.sh
trap 'bash Tests/alsa/stop-pulse.sh; rm -rf "$W"' EXIT
sox -n -r 48000 -c 2 -b 16 "$W/a.wav" synth 20 sine 220 sine 330 vol 0.3
sox -n -r 48000 -c 1 -b 16 "$W/b.wav" synth 17 pinknoise vol 0.2
python3 - "$M" "$W" "$live" <<'PY' || fail=1
import json, os, random, subprocess, sys, time, array, math
mixfx, w, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
env = dict(os.environ, ALSA_CONFIG_PATH=os.path.abspath("Tests/alsa/asound-mixfx.conf"), MIXFX_TAP_FILE=f"{w}/tap.raw")
# stdout and stderr go to files: every command is acknowledged on stdout, and a pipe nobody
# reads fills up and stalls the control input
out_file, err_file = open(f"{w}/play.out", "w"), open(f"{w}/play.err", "w")
p = subprocess.Popen([mixfx, "play", f"{w}/a.wav", f"{w}/b.wav", "--loop", "--device", "mixfx_pulse_tap", "--no-ui",
                      "--json", "--sample-format", "f32"], stdin=subprocess.PIPE, stdout=out_file, stderr=err_file, env=env, text=True)
rng = random.Random(1)
def command():
    k = rng.random()
    t = rng.randint(1, 2)
    if k < 0.2: return f"track {t} volume {rng.uniform(0, 1.5):.3f}"
    if k < 0.35: return f"track {t} pan {rng.uniform(-1, 1):.3f}"
    if k < 0.5: return f"track {t} bass {rng.uniform(-12, 12):.2f}"
    if k < 0.6: return f"track {t} treble {rng.uniform(-12, 12):.2f}"
    if k < 0.8: return f"track {t} pitch {rng.uniform(-1200, 1200):.1f}"
    if k < 0.85: return f"track {t} mute {rng.choice(['on', 'off'])}"
    if k < 0.95: return f"master volume {rng.uniform(0.2, 1.2):.3f}"
    return f"seek {rng.uniform(0, 16):.2f}"
def steal_jiffies():
    # time the hypervisor gave this VM's CPUs to others (/proc/stat, cpu line, 8th value)
    with open("/proc/stat") as f:
        return int(f.readline().split()[8])
rss, start, sent = [], time.time(), 0
next_sample = start + 10
statuses = []   # (seconds since start, steal jiffies) of each status command, in order
while time.time() - start < seconds:
    # every second a status line: the underrun count, to place each underrun within a second
    if sent % 20 == 19:
        statuses.append((time.time() - start, steal_jiffies()))
        p.stdin.write("status\n")
    else:
        p.stdin.write(command() + "\n")
    p.stdin.flush(); sent += 1
    time.sleep(0.05)
    if time.time() >= next_sample:
        with open(f"/proc/{p.pid}/status") as f:
            rss.append(int(next(l for l in f if l.startswith("VmRSS")).split()[1]))
        next_sample += 10
p.stdin.write("quit\n"); p.stdin.flush()
p.stdin.close()
p.wait(timeout=30)
out, err = open(f"{w}/play.out").read(), open(f"{w}/play.err").read()
acks = sum(1 for l in out.splitlines() if l.startswith("ok "))
report = json.loads(out[out.index("\n{") + 1:] if "\n{" in out else out[out.index("{"):])
bad = 0
with open(f"{w}/tap.raw", "rb") as f:
    while chunk := f.read(1 << 22):
        a = array.array("f"); a.frombytes(chunk[: len(chunk) // 4 * 4])
        try:
            import numpy
            bad += int((~numpy.isfinite(numpy.frombuffer(a, dtype=numpy.float32))).sum())
        except ImportError:
            bad += sum(1 for x in a if not math.isfinite(x))
# each second in which the underrun count rose: when, how many, and how much CPU time the
# hypervisor took from this machine in that second (steal), against the DSP load then
import re
lines = [l for l in out.splitlines() if l.startswith("ok position")]
hz = os.sysconf("SC_CLK_TCK")
prev = 0
for k, line in enumerate(lines[: len(statuses)]):
    m = re.search(r"dsp ([0-9.]+)%, underruns (\d+)", line)
    if not m: continue
    n = int(m.group(2))
    if n > prev and k > 0:
        t, steal = statuses[k]
        steal_ms = (steal - statuses[k - 1][1]) * 1000 / hz
        print(f"soak 2: underrun(s) {prev + 1}..{n} within the second before {t:.0f} s: steal {steal_ms:.0f} ms of CPU in that second, DSP load {m.group(1)} %")
    prev = n
total_steal = (statuses[-1][1] - statuses[0][1]) * 1000 / hz if len(statuses) > 1 else 0
print(f"soak 2: the hypervisor took {total_steal / 1000:.1f} s of CPU (steal) over the run")
after = rss[6:] if len(rss) > 6 else rss
spread = (max(after) - min(after)) / 1024 if after else 0
ok = p.returncode == 0 and report["underruns"] == 0 and bad == 0 and spread <= 1 and acks >= sent * 0.99
print(f"soak 2: {'PASS' if ok else 'FAIL'}: played (looped) for "
      f"{report['wallSeconds']:.0f} s, {sent} changes ({acks} acknowledged), underruns {report['underruns']}, non-finite samples {bad}, "
      f"max DSP load {report['maxDSPLoad'] * 100:.1f} %, resident memory after the first minute "
      f"{min(after) / 1024:.1f}-{max(after) / 1024:.1f} MB (spread {spread:.2f} MB)")
if err.strip(): print(err.strip()[-2000:])
sys.exit(0 if ok else 1)
PY
fi
exit $fail
