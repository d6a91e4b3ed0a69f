#!/usr/bin/env python3
"""The adapters' alignment and length check: a click train through each adapter, as the bench
runs it (a WAV file in, a WAV file out), at 0, +300 and −300 cents and at tempos 0.8, 1.25, 2.

    python3 Benchmarks/peers/alignment.py [ADAPTER.py ...] [--mixfx PATH]   (default: all here)

Input: 3 s of silence at 44.1 kHz with a one-sample click (0.8) every 0.25 s, mono float and
16-bit stereo. A click at frame T should come out at T/R. For each click the output's largest
|sample| within ±10 ms of T/R is found; printed are the offsets (output − expected, samples):
their median and the largest in magnitude, over every click and channel, and whether the length
is round(n/R) and the channel count kept. `--mixfx PATH` runs the mixfx CLI the same way, as a
reference.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import soundfile as sf

RATE = 44100
HERE = os.path.dirname(os.path.abspath(__file__))


def clicks(channels):
    n = 3 * RATE
    x = np.zeros((n, channels), dtype=np.float32)
    at = np.arange(RATE // 4, n - RATE // 4 + 1, RATE // 4)
    x[at, :] = 0.8
    return x, at


def offsets(y, at, tempo):
    w = RATE // 100
    out = []
    for t in at:
        e = int(np.floor(t / tempo + 0.5))
        for c in range(y.shape[1]):
            seg = np.abs(y[max(0, e - w):e + w + 1, c])
            out.append(max(0, e - w) + int(np.argmax(seg)) - e)
    return np.array(out)


def run(cmd, cents, tempo, channels, subtype, work):
    x, at = clicks(channels)
    src, dst = os.path.join(work, "in.wav"), os.path.join(work, "out.wav")
    sf.write(src, x, RATE, subtype=subtype)
    subprocess.run(cmd(src, dst, cents, tempo), check=True, stdout=subprocess.DEVNULL)
    y, _ = sf.read(dst, dtype="float32", always_2d=True)
    o = offsets(y, at, tempo)
    frames = int(np.floor(len(x) / tempo + 0.5))
    return o, len(y) == frames and y.shape[1] == channels, len(y), frames


def main():
    args = sys.argv[1:]
    tools = []
    if "--mixfx" in args:
        i = args.index("--mixfx")
        exe = args[i + 1]
        del args[i:i + 2]
        tools.append(("mixfx", lambda s, d, c, r: [exe, "render", s, "-o", d, "--force", "--quiet", "--pitch", str(c)]
                      + (["--tempo", str(r)] if r != 1 else [])))
    for a in args or ["signalsmith.py", "bungee.py"]:
        path = a if os.path.isabs(a) or os.path.exists(a) else os.path.join(HERE, a)
        name = os.path.basename(path)
        tools.append((name, lambda s, d, c, r, p=path: [sys.executable, p, s, d, "--cents", str(c), "--tempo", str(r)]))
    print("click every 0.25 s through each tool; offset of each click's peak from T/R (samples): median / largest |offset|; length round(n/R) and channels kept")
    with tempfile.TemporaryDirectory() as work:
        for name, cmd in tools:
            for cents, tempo in [(0, 1), (300, 1), (-300, 1), (0, 0.8), (0, 1.25), (0, 2)]:
                cells = []
                for channels, subtype in [(1, "FLOAT"), (2, "PCM_16")]:
                    o, ok, got, want = run(cmd, cents, tempo, channels, subtype, work)
                    worst = int(o[np.argmax(np.abs(o))])
                    cells.append(f"{'mono float' if channels == 1 else 'stereo s16'}: {np.median(o):+5.1f} / {worst:+4d}"
                                 + ("" if ok else f" (LENGTH {got} ≠ {want} or channels)"))
                print(f"{name:16s} {cents:+5d} ct, tempo {tempo:<5g} " + "   ".join(cells))


if __name__ == "__main__":
    main()
