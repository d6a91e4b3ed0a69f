#!/usr/bin/env bash
# Stops the server start-pulse.sh started (by its PID) and removes its directory.
if [ -n "${MIXFX_PULSE_PID:-}" ] && kill -0 "$MIXFX_PULSE_PID" 2>/dev/null; then
    kill "$MIXFX_PULSE_PID"
    for _ in $(seq 30); do kill -0 "$MIXFX_PULSE_PID" 2>/dev/null || break; sleep 0.1; done
fi
[ -n "${MIXFX_PULSE_DIR:-}" ] && rm -rf "$MIXFX_PULSE_DIR"
