#!/usr/bin/env python3
"""ViSQOL's MOS-LQO (PyPI visqol-python, a port of Google's ViSQOL v3; audio mode, its bundled
SVR model) of DEGRADED against REFERENCE, printed as one number.

    visqol_mos.py REFERENCE DEGRADED [REFERENCE DEGRADED ...]   (one score per pair, a line each)
    visqol_mos.py --check                                       (exit 0 if visqol imports)

Channels are averaged (ViSQOL scores mono). Audio mode wants 48 kHz: other rates are resampled
with scipy.signal.resample_poly (a polyphase FIR, Kaiser window; 44.1 → 48 kHz is up 160, down
147), not with mixfx's own resampler, so that the yardstick does not share code with what it
measures. ViSQOL aligns the pair itself (its global and per-patch alignment); the bench passes
pairs it has already aligned and cut to the same length. Scores run from 1 to about 4.75 (a file
against itself).
"""
import sys
from math import gcd

import numpy as np


def load48(path):
    import soundfile as sf
    from scipy.signal import resample_poly
    x, rate = sf.read(path, dtype="float64", always_2d=True)
    x = x.mean(axis=1)
    if rate != 48000:
        g = gcd(48000, rate)
        x = resample_poly(x, 48000 // g, rate // g)
    return x


def main(argv):
    import logging
    logging.disable(logging.WARNING)   # (its duration and rate notes)
    from visqol import VisqolApi
    if argv == ["--check"]:
        return 0
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    api = VisqolApi()
    api.create(mode="audio")
    for ref, deg in zip(argv[0::2], argv[1::2]):
        r = api.measure_from_arrays(load48(ref), load48(deg), 48000)
        print(f"{r.moslqo:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
