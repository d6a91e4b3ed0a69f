#!/usr/bin/env python3
"""Signalsmith Stretch (MIT; PyPI python-stretch, the C++ library's binding) as a bench peer.

    signalsmith.py IN OUT [--cents C] [--tempo R] [--tonality-limit HZ]

Its documented offline use (python-stretch's README): `Stretch()`, `preset(channels, rate)`
(presetDefault), `setTransposeSemitones(C/100, limit)`, `timeFactor = R`, then one
`process(audio)` on the whole signal as channels × frames. That call seeks the stretcher over
the first inputLatency() frames of input, processes, flushes outputLatency() frames and drops
them, so its output starts aligned with its input and lasts round(n/R) frames; nothing else is
compensated here (alignment.py measures it). `--tonality-limit HZ` is the library's "tonality
limit" (a non-linear frequency map above HZ that keeps more of the timbre), passed as HZ/rate,
as its README does with 8000/sampleRate; 0 (the default) is its plain transposition.
"""
import sys

from peerio import main


def process(x, rate, cents, tempo, args):
    from python_stretch import Signalsmith
    s = Signalsmith.Stretch()
    s.preset(x.shape[1], rate)
    s.setTransposeSemitones(cents / 100, args.tonality_limit / rate)
    s.timeFactor = tempo
    return s.process(x.T.copy()).T


def extra(p):
    p.add_argument("--tonality-limit", type=float, default=0.0, metavar="HZ")


if __name__ == "__main__":
    if "--check" in sys.argv:
        from python_stretch import Signalsmith  # noqa: F401 (ImportError: not installed)
    sys.exit(main(__doc__.splitlines()[0], process, extra))
