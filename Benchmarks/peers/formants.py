#!/usr/bin/env python3
"""Formants against the peers (issue #32): how closely each shifter's formant mode keeps a
voice's spectral envelope under a pitch shift.

    python3 Benchmarks/peers/formants.py --mixfx PATH [--signalsmith PATH] [--work DIR]
    (Benchmarks/formants.sh builds the Signalsmith tool and runs this)

Inputs, made here at 44.1 kHz mono float: espeak-ng speech in three voices (en-us, en-us+f3,
en-gb+m3; espeak-ng's 22.05 kHz resampled by sox) and two sung-like vowels (a harmonic source
with 1/k partials, 5.5 Hz vibrato of ±50 cents, five notes a fifth wide, through fixed formant
resonators: /a/ from 220 Hz, /i/ from 147 Hz). Each is shifted by −500, +500 and +900 cents by
  mixfx        `mixfx render IN --pitch C --formant on` (and without --formant),
  rubberband   `rubberband -3 -F -p S` (and -3 without -F),
  signalsmith  its C++ library's formant mode (signalsmith_formant.cpp: setFormantFactor(1, true),
               setFormantBase(0), i.e. its own pitch detection), and its plain shift.
Alignment: each tool, mode and shift is first run on a click train (a click every 0.25 s); the
median offset of the clicks' peaks is its delay, which is removed before the output is cut to the
input's length. The delays and whether the length was kept are printed (every tool here
compensates its own latency: expect 0). Energy-envelope correlation was tried first and is not
used: on sustained vowels it wandered up to 10 ms with the level changes a formant mode makes.

The measure, per 2048-sample Hann frame (hop 512) where the input is voiced (normalised
autocorrelation peak > 0.6 between 70 and 600 Hz, level within 35 dB of the loudest frame): the
true envelope (iterated cepstral smoothing that rests on the harmonic peaks, Röbel and Rodet
2005) of input and output, with the lifter at half the wider harmonic spacing of the two
(fs / (2 f0 max(1, ratio))), f0 the input frame's; the error is the RMS of their dB difference
over 100 Hz–5 kHz, then the mean over frames. "level-free" removes each frame's mean difference
first (the envelope's shape only). The plain shifts' error is how far the envelope moved without
correction: a formant mode should land well under it.

Formant positions, beside the error: per voiced frame, the input envelope's first two formants
(its local maxima over 150 Hz-3.5 kHz standing 3 dB or more over their surroundings) and the
output envelope's largest value within ±25 % of each; the mean |F out / F in - 1| per row and
overall. And the unit tests' synthetic vowel (PitchShifterTests.formantsStayWherePreserved,
formants 700, 1500, 2600 Hz) at f0 100 and 150 Hz, -700 to +700 cents, each formant's peak
read from the harmonics' amplitudes as that test reads it (--no-vowel leaves it out).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import soundfile as sf

RATE = 44100
SHIFTS = [-500, 500, 900]
VOICES = [("speech en-us", "en-us"), ("speech en-us+f3", "en-us+f3"), ("speech en-gb+m3", "en-gb+m3")]
TEXT = ("Where were you a year ago? I was singing in the rain, and the whole town heard my voice. "
        "Now the morning light is warm and slow.")
WIN, HOP = 2048, 512


def speech(work, name, voice):
    raw = os.path.join(work, f"{name.replace(' ', '_')}-22k.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-w", raw, TEXT], check=True, stderr=subprocess.DEVNULL)
    out = subprocess.run(["sox", raw, "-t", "f32", "-r", str(RATE), "-c", "1", "-"], capture_output=True, check=True).stdout
    x = np.frombuffer(out, dtype=np.float32).astype(np.float64)
    return 0.5 * x / np.max(np.abs(x))


def sung(f0, formants):
    """A sung phrase: five notes (0, 2, 4, 5, 7 semitones over f0; 0.6 s each with 30 ms attacks
    and releases, 0.15 s apart: onsets for the alignment), a harmonic source (partials 1/k up to
    10 kHz) with vibrato, through fixed formant resonators (two-pole, each (Hz, bandwidth Hz))."""
    from scipy.signal import lfilter
    note, gap = int(0.6 * RATE), int(0.15 * RATE)
    n = gap + 5 * (note + gap)
    t = np.arange(n) / RATE
    f = np.full(n, float(f0))
    gate = np.zeros(n)
    ramp = int(0.03 * RATE)
    shape = np.minimum(1, np.minimum(np.arange(note), np.arange(note)[::-1]) / ramp)
    for i, st in enumerate([0, 2, 4, 5, 7]):
        a = gap + i * (note + gap)
        f[a - gap // 2:a + note + gap // 2] = f0 * 2 ** (st / 12)
        gate[a:a + note] = shape
    f *= 2 ** (50 / 1200 * np.sin(2 * np.pi * 5.5 * t))
    phase = 2 * np.pi * np.cumsum(f) / RATE
    x = np.zeros(n)
    for k in range(1, int(10000 / (f0 * 2 ** (7 / 12) * 1.03)) + 1):
        x += np.sin(k * phase) / k
    x *= gate
    for fc, bw in formants:
        r = np.exp(-np.pi * bw / RATE)
        a = [1, -2 * r * np.cos(2 * np.pi * fc / RATE), r * r]
        x = lfilter([sum(a)], a, x)
    return 0.5 * x / np.max(np.abs(x))


def inputs(work):
    out = [(name, speech(work, name, voice)) for name, voice in VOICES]
    out.append(("sung /a/ 220 Hz", sung(220, [(730, 80), (1090, 90), (2440, 120), (3400, 150), (4500, 200)])))
    out.append(("sung /i/ 147 Hz", sung(147, [(270, 60), (2290, 100), (3010, 120), (3500, 150), (4500, 200)])))
    return out


def tools(args):
    m = args.mixfx
    t = [("mixfx", lambda i, o, c, fm: [m, "render", i, "-o", o, "--pitch", str(c), "--sample-format", "f32",
                                       "--dither", "none", "--quiet", "--force"] + (["--formant", "on"] if fm else [])),
         ("rubberband", lambda i, o, c, fm: ["rubberband", "-q", "-3"] + (["-F"] if fm else []) + ["-p", str(c / 100), i, o])]
    if args.signalsmith:
        t.append(("signalsmith", "raw"))
    return t


def render(tool, x, cents, formant, work, args):
    name, cmd = tool
    src, dst = os.path.join(work, "in.wav"), os.path.join(work, "out.wav")
    if cmd == "raw":
        src, dst = os.path.join(work, "in.f32"), os.path.join(work, "out.f32")
        x.astype(np.float32).tofile(src)
        subprocess.run([args.signalsmith, src, dst, str(RATE), str(cents / 100), "1" if formant else "0", "0"],
                       check=True, stdout=subprocess.DEVNULL)
        return np.fromfile(dst, dtype=np.float32).astype(np.float64)
    sf.write(src, x.astype(np.float32), RATE, subtype="FLOAT")
    subprocess.run(cmd(src, dst, cents, formant), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    y, _ = sf.read(dst, dtype="float64", always_2d=True)
    return y[:, 0]


def click_lag(tool, cents, formant, work, args):
    """The tool's delay (samples) on a click train (one click, 0.8, every 0.25 s for 3 s): the
    median offset of each click's largest |output| within ±10 ms of where it went in."""
    x = np.zeros(3 * RATE)
    at = np.arange(RATE // 4, 3 * RATE - RATE // 4 + 1, RATE // 4)
    x[at] = 0.8
    y = render(tool, x, cents, formant, work, args)
    w = RATE // 100
    return int(np.median([t - w + int(np.argmax(np.abs(y[t - w:t + w + 1]))) - t for t in at])), len(y) == len(x)


def align(x, y, lag):
    """y advanced by lag samples (delayed if negative), cut or padded to len(x)."""
    z = np.zeros(len(x))
    src = y[max(0, lag):]
    dst0 = max(0, -lag)
    k = min(len(src), len(x) - dst0)
    z[dst0:dst0 + k] = src[:k]
    return z


def frames(x):
    w = np.hanning(WIN)
    starts = np.arange(0, len(x) - WIN, HOP)
    return starts, np.array([x[s:s + WIN] * w for s in starts])


def voiced_f0(fr):
    """Per frame: f0 (Hz) where voiced, else 0."""
    spec = np.fft.rfft(fr, 2 * WIN)
    lo, hi = int(RATE / 600), int(RATE / 70)
    ac = np.fft.irfft(np.abs(spec) ** 2)[:, :hi]
    wac = np.correlate(np.hanning(WIN), np.hanning(WIN), "full")[WIN - 1:WIN - 1 + hi]
    ac = ac / wac[None, :] / np.maximum(ac[:, :1], 1e-20) * wac[0]
    lag = lo + np.argmax(ac[:, lo:hi], axis=1)
    peak = ac[np.arange(len(ac)), lag]
    level = 10 * np.log10(np.sum(fr ** 2, axis=1) + 1e-20)
    return np.where((peak > 0.6) & (level > level.max() - 35), RATE / lag, 0.0)


ITERATIONS = 40


def true_envelope(logmag, order, iterations=None):
    """Cepstral smoothing iterated to rest on the peaks (dB in, dB out): one frame, or frames in
    rows with an order each."""
    a = np.atleast_2d(logmag).astype(np.float64)
    order = np.atleast_1d(order)
    q = np.arange(2 * (a.shape[1] - 1))
    keep = (q[None, :] <= order[:, None]) | (q[None, :] >= len(q) - order[:, None])
    v = a.copy()
    for _ in range(ITERATIONS if iterations is None else iterations):
        c = np.fft.irfft(v, axis=1)
        c[~keep] = 0
        env = np.fft.rfft(c, axis=1).real
        v = np.maximum(a, env)
    return env if np.ndim(logmag) > 1 else env[0]


def formant_peaks(env, lo=150.0, hi=3500.0, prominence=3.0):
    """The first two formants of an envelope (dB per bin of a WIN-point frame): its local maxima
    between lo and hi Hz that stand at least `prominence` dB over the lowest point between them
    and the next higher maximum (or the band's end) on both sides, in Hz, lowest first."""
    a, b = int(lo * WIN / RATE), int(hi * WIN / RATE)
    e = env[a:b + 1]
    cand = [i for i in range(1, len(e) - 1) if e[i] >= e[i - 1] and e[i] > e[i + 1]]
    out = []
    for i in cand:
        left = e[:i][::-1]
        hl = np.nonzero(left > e[i])[0]
        ml = left[:hl[0]].min() if len(hl) else left.min() if len(left) else e[i]
        right = e[i + 1:]
        hr = np.nonzero(right > e[i])[0]
        mr = right[:hr[0]].min() if len(hr) else right.min() if len(right) else e[i]
        if e[i] - max(ml, mr) >= prominence:
            out.append((a + i) * RATE / WIN)
        if len(out) == 2:
            break
    return out


def peak_near(env, f, reach=1.25):
    """The largest value of env within f/reach..f·reach, in Hz (parabola through its bins)."""
    a, b = int(f / reach * WIN / RATE), int(np.ceil(f * reach * WIN / RATE))
    i = a + int(np.argmax(env[a:b + 1]))
    if a < i < b:
        den = env[i - 1] - 2 * env[i] + env[i + 1]
        d = 0.5 * (env[i - 1] - env[i + 1]) / den if den < 0 else 0.0
        return (i + d) * RATE / WIN
    return i * RATE / WIN


def envelope_error(x, y, ratio):
    _, fx = frames(x)
    _, fy = frames(y)
    f0 = voiced_f0(fx)
    sx = np.abs(np.fft.rfft(fx)) ** 2
    sy = np.abs(np.fft.rfft(fy)) ** 2
    floor = sx.max() * 1e-10
    band = slice(int(100 * WIN / RATE), int(5000 * WIN / RATE) + 1)
    raw, shape, moved = [], [], [[], []]
    idx = np.nonzero(f0)[0]
    orders = np.maximum(8, (RATE / (2 * f0[idx] * max(1.0, ratio))).astype(int))
    exs = true_envelope(10 * np.log10(sx[idx] + floor), orders)
    eys = true_envelope(10 * np.log10(sy[idx] + floor), orders)
    for ex, ey in zip(exs, eys):
        d = (ey - ex)[band]
        raw.append(np.sqrt(np.mean(d ** 2)))
        shape.append(np.sqrt(np.mean((d - d.mean()) ** 2)))
        for j, f in enumerate(formant_peaks(ex)):
            moved[j].append(abs(peak_near(ey, f) / f - 1))
    # formant positions: mean |output's peak / input's − 1| over the frames where the input has it
    pos = [float(np.mean(m)) if m else float("nan") for m in moved]
    return float(np.mean(raw)), float(np.mean(shape)), int(len(raw)), pos


def vowel_positions(ts, work, args):
    """The unit tests' synthetic vowel (PitchShifterTests.formantsStayWherePreserved: harmonics
    under Gaussian formants at 700, 1500, 2600 Hz, σ 150 Hz, troughs −34 dB), at f0 100 and 150 Hz,
    through each tool's formant mode: where each formant peak lands (a parabola through the dB
    amplitudes of the three harmonics around the largest within ±30 %), in % off."""
    formants = [700.0, 1500.0, 2600.0]
    n = 3 * RATE
    t = np.arange(n) / RATE
    print("synthetic vowel (formants 700, 1500, 2600 Hz): % off per formant, formant mode")
    worst = {name: 0.0 for name, _ in ts}
    for f0 in (100.0, 150.0):
        x = np.zeros(n)
        k = 1
        while k * f0 < 8000:
            a = 0.05 * (0.02 + sum(np.exp(-((k * f0 - f) / 150) ** 2 / 2) for f in formants))
            x += a * np.sin(2 * np.pi * k * f0 * t + k * k * 0.7)
            k += 1
        body = slice(RATE, RATE + 8192)

        def peaks(y, f0):
            seg = y[body]
            i = np.arange(len(seg))
            def amp(f):
                return 2 * abs(np.sum(seg * np.exp(-2j * np.pi * f * i / RATE))) / len(seg)
            out = []
            for f in formants:
                ks = np.arange(int(np.ceil(0.7 * f / f0)), int(1.3 * f / f0) + 1)
                a = np.array([20 * np.log10(amp(kk * f0) + 1e-12) for kk in ks])
                m = int(np.argmax(a))
                if 0 < m < len(a) - 1:
                    d = 0.5 * (a[m - 1] - a[m + 1]) / (a[m - 1] - 2 * a[m] + a[m + 1])
                else:
                    d = 0.0
                out.append((ks[m] + d) * f0)
            return out
        for cents in (-700, -300, 300, 700):
            ratio = 2 ** (cents / 1200)
            row = []
            for tool in ts:
                lag = click_lag(tool, cents, True, work, args)[0]
                y = align(x, render(tool, x, cents, True, work, args), lag)
                off = [100 * (p / f - 1) for p, f in zip(peaks(y, f0 * ratio), formants)]
                worst[tool[0]] = max(worst[tool[0]], max(abs(o) for o in off))
                row.append(f"{tool[0]} " + " ".join(f"{o:+5.1f}" for o in off))
            print(f"  f0 {f0:3.0f} Hz {cents:+d} ct:  " + "   ".join(row))
    print("  largest |% off|: " + ", ".join(f"{k} {v:.1f}" for k, v in worst.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mixfx", required=True)
    p.add_argument("--signalsmith", help="the built signalsmith_formant tool (left out without it)")
    p.add_argument("--work")
    p.add_argument("--cepstral", action="store_true",
                   help="a cross-check: plain cepstral smoothing (one pass, between the peaks and troughs) instead of the true envelope")
    p.add_argument("--formant-only", action="store_true", help="leave out the plain shifts (quicker)")
    p.add_argument("--no-vowel", action="store_true", help="leave out the synthetic vowel's formant positions")
    p.add_argument("--tools", default="mixfx,rubberband,signalsmith", help="which of them to run (comma-separated)")
    args = p.parse_args()
    global ITERATIONS
    if args.cepstral:
        ITERATIONS = 1
    work = args.work or tempfile.mkdtemp(prefix="mixfx-formants.")
    os.makedirs(work, exist_ok=True)
    ts = [t for t in tools(args) if t[0] in args.tools.split(",")]
    lags = {}
    print("delays on a click train (samples; formant mode, plain), length kept:")
    for tool in ts:
        cells = []
        for cents in SHIFTS:
            for formant in (True, False):
                if formant is False and args.formant_only:
                    lags[tool[0], cents, formant], kept = 0, True
                    cells.append("-")
                    continue
                lags[tool[0], cents, formant], kept = click_lag(tool, cents, formant, work, args)
                cells.append(f"{lags[tool[0], cents, formant]:+d}{'' if kept else ' (LENGTH)'}")
        print(f"  {tool[0]:12s} " + "   ".join(f"{c:+d} ct: {cells[2 * i]}, {cells[2 * i + 1]}" for i, c in enumerate(SHIFTS)))
    print("spectral envelope error, dB RMS over 100 Hz-5 kHz, mean over voiced frames (lower is better)")
    print("formant mode: raw / level-free;  plain shift (no correction): raw / level-free")
    totals = {name: [] for name, _ in ts}
    positions = {name: [] for name, _ in ts}
    for label, x in inputs(work):
        for cents in SHIFTS:
            ratio = 2 ** (cents / 1200)
            print(f"\n{label}, {cents:+d} cents")
            for tool in ts:
                cells = []
                for formant in (True,) if args.formant_only else (True, False):
                    y = align(x, render(tool, x, cents, formant, work, args), lags[tool[0], cents, formant])
                    raw, shape, nf, pos = envelope_error(x, y, ratio)
                    cells.append(f"{raw:5.2f} / {shape:5.2f}")
                    if formant:
                        totals[tool[0]].append((raw, shape))
                        positions[tool[0]].append(pos)
                        fpos = pos
                cells.append("  -   /   -  ")
                print(f"  {tool[0]:12s} formant {cells[0]}   plain {cells[1]}   ({nf} frames)"
                      f"   F1 {100 * fpos[0]:4.1f} %, F2 {100 * fpos[1]:4.1f} % off")
    print("\nsummary: mean over inputs and shifts, formant mode (raw / level-free), and mixfx's against each")
    m = np.mean(totals["mixfx"], axis=0) if "mixfx" in totals else np.full(2, np.nan)
    for name, v in totals.items():
        v = np.mean(v, axis=0)
        print(f"  {name:12s} {v[0]:5.2f} / {v[1]:5.2f}" + ("" if name == "mixfx" else f"   mixfx/{name} {m[0] / v[0]:.2f} / {m[1] / v[1]:.2f}"))
    print("formant positions, formant mode: mean over inputs and shifts of the mean |F out / F in - 1| (F1, F2)")
    for name, v in positions.items():
        v = np.nanmean(v, axis=0)
        print(f"  {name:12s} F1 {100 * v[0]:4.1f} %, F2 {100 * v[1]:4.1f} %")
    if not args.no_vowel:
        vowel_positions(ts, work, args)


if __name__ == "__main__":
    sys.exit(main())
