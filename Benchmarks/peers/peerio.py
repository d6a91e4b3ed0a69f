"""Shared by the peer adapters (signalsmith.py, bungee.py): the command line, WAV in and out.

    ADAPTER.py IN OUT [--cents C] [--tempo R]

shifts IN by C cents and plays it at tempo R (R > 1 faster: the output lasts round(n/R) frames,
n the input's; R = 1 keeps n exactly) into OUT, in IN's sample format (16-bit stays 16-bit,
float stays float), as the bench's other tools do. `--check` exits 0 if the peer's package
imports (the bench's test for "installed"). Needs numpy and soundfile (pip install soundfile).
"""
import argparse
import sys

import numpy as np


def parse(description, extra=None):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("input", nargs="?")
    p.add_argument("output", nargs="?")
    p.add_argument("--cents", type=float, default=0.0)
    p.add_argument("--tempo", type=float, default=1.0)
    p.add_argument("--check", action="store_true", help="exit 0 if the peer's package imports")
    if extra:
        extra(p)
    a = p.parse_args()
    if not a.check and (a.input is None or a.output is None):
        p.error("IN and OUT are required")
    return a


def read(path):
    """(frames × channels float32, sample rate, soundfile subtype)"""
    import soundfile as sf
    info = sf.info(path)
    x, rate = sf.read(path, dtype="float32", always_2d=True)
    return x, rate, info.subtype


def write(path, y, rate, subtype):
    import soundfile as sf
    if not subtype.startswith("FLOAT") and not subtype.startswith("DOUBLE"):
        y = np.clip(y, -1.0, 1.0)   # integer formats: clip rather than wrap
    sf.write(path, y, rate, subtype=subtype)


def exact_length(y, frames):
    """`y` (frames × channels) cut or padded with silence at its end to `frames` frames."""
    if len(y) >= frames:
        return y[:frames]
    return np.concatenate([y, np.zeros((frames - len(y), y.shape[1]), dtype=y.dtype)])


def output_frames(n, tempo):
    """round(n/R), halves rounded up (as the bench's other tools do)."""
    return int(np.floor(n / tempo + 0.5))


def main(description, process, extra=None):
    """Runs an adapter: `process(x, rate, cents, tempo, args)` maps frames × channels float32 to
    frames × channels float32, aligned with x at its start (its latency removed)."""
    a = parse(description, extra)
    if a.check:
        return 0
    x, rate, subtype = read(a.input)
    y = process(x, rate, a.cents, a.tempo, a)
    write(a.output, exact_length(np.asarray(y, dtype=np.float32), output_frames(len(x), a.tempo)), rate, subtype)
    return 0


if __name__ == "__main__":
    sys.exit("peerio.py is a module for the adapters")
