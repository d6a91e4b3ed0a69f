#!/usr/bin/env python3
"""Bungee (MPL-2.0; PyPI bungee-python, the C++ library's binding) as a bench peer.

    bungee.py IN OUT [--cents C] [--tempo R]

Its documented offline use (bungee-python's README): `Bungee(sample_rate, channels)` with the
binding's default grain (log2_synthesis_hop_adjust −1), `set_speed(R)`, `set_pitch(2^(C/1200))`,
then one `process(audio)` on the whole signal as frames × channels. That call prerolls, streams
the input through Bungee's Stream in 1 s chunks, flushes with silence, drops the first
ceil(latency/R) output frames (the latency Stream reports after its first chunk) and keeps
ceil(n/R) frames; here the length is then set to round(n/R) (cut or padded at the end).
Nothing else is compensated (alignment.py measures it).
"""
import sys

from peerio import main


def process(x, rate, cents, tempo, args):
    from bungee_python import bungee
    b = bungee.Bungee(rate, x.shape[1])
    b.set_speed(tempo)
    b.set_pitch(2 ** (cents / 1200))
    return b.process(x.copy())


if __name__ == "__main__":
    if "--check" in sys.argv:
        from bungee_python import bungee  # noqa: F401 (ImportError: not installed)
    sys.exit(main(__doc__.splitlines()[0], process))
