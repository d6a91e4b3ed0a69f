#!/usr/bin/env python3
"""Renders a session through libmixfx's C API with ctypes (MixFXCTests compares the file's bytes
with `mixfx render`'s).

    ctypes_render.py LIBMIXFX.so PRESET.json OUTPUT REPORT.json TRACK...

Also checks that a bad preset is refused with MIXFX_ERR_INVALID and a message. Prints the
summary's frames and exits 0 on success."""
import ctypes
import sys

MIXFX_OK, MIXFX_ERR_INVALID = 0, -6


class Summary(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("sample_rate_hz", ctypes.c_int32), ("channels", ctypes.c_int32),
                ("peak_dbfs", ctypes.c_double), ("clipped_samples", ctypes.c_int64),
                ("applied_gain_db", ctypes.c_double), ("elapsed_seconds", ctypes.c_double)]


def main():
    lib_path, preset_path, output, report, tracks = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    lib = ctypes.CDLL(lib_path)
    lib.mixfx_last_error.restype = ctypes.c_char_p
    lib.mixfx_version.restype = ctypes.c_char_p
    lib.mixfx_render_preset.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_char_p,
                                        ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(Summary)]
    lib.mixfx_render_preset.restype = ctypes.c_int
    inputs = (ctypes.c_char_p * len(tracks))(*[t.encode() for t in tracks])
    with open(preset_path, "rb") as f:
        preset = f.read()

    bad = lib.mixfx_render_preset(b'{"schemaVersion": 2, "all": {"eq": {"bass": {"gainDB": 99}}}}', inputs, len(tracks),
                                  output.encode(), None, 0, None)
    message = lib.mixfx_last_error().decode()
    if bad != MIXFX_ERR_INVALID or "99" not in message:
        print(f"a bad preset returned {bad}: {message!r}", file=sys.stderr)
        return 1

    summary = Summary()
    status = lib.mixfx_render_preset(preset, inputs, len(tracks), output.encode(), report.encode(), 0, ctypes.byref(summary))
    if status != MIXFX_OK:
        print(f"mixfx_render_preset returned {status}: {lib.mixfx_last_error().decode()}", file=sys.stderr)
        return 1
    print(f"{summary.frames} frames, {summary.sample_rate_hz} Hz, {summary.channels} channels, "
          f"mixfx {lib.mixfx_version().decode()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
