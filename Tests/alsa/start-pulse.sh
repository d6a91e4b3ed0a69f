#!/usr/bin/env bash
# Starts a private PulseAudio server whose only sink is a clocked null sink, for mixfx's real-time
# playback tests: ALSA clients reach it through the `pulse` plugin (libasound2-plugins) and are
# paced in real time and can underrun. No hardware, systemd or D-Bus needed; everything lives in
# $MIXFX_PULSE_DIR. Source it: it exports PULSE_SERVER, PULSE_COOKIE, MIXFX_PULSE_PID.
D=${MIXFX_PULSE_DIR:-/tmp/mixfx-pulse-$$}
mkdir -p "$D" && chmod 700 "$D"
export MIXFX_PULSE_DIR="$D"
export PULSE_RUNTIME_PATH="$D" PULSE_STATE_PATH="$D/state" PULSE_COOKIE="$D/cookie" PULSE_SERVER="unix:$D/native"
unset DBUS_SESSION_BUS_ADDRESS
# The null source looped into the sink keeps the sink in low-latency mode: an idle null sink
# sleeps in ~2 s blocks and each new stream would stall that long.
HOME="$D" pulseaudio --daemonize=no --system=no -n --exit-idle-time=-1 --disallow-exit=yes \
    --use-pid-file=no --log-target=file:"$D/pulseaudio.log" --log-level=notice \
    --load="module-null-sink sink_name=mixfx_sink rate=48000 channels=2" \
    --load="module-null-source source_name=mixfx_silence rate=48000 channels=2" \
    --load="module-loopback source=mixfx_silence sink=mixfx_sink latency_msec=20" \
    --load="module-native-protocol-unix auth-anonymous=1 socket=$D/native" \
    </dev/null >/dev/null 2>&1 &
export MIXFX_PULSE_PID=$!
for _ in $(seq 50); do [ -S "$D/native" ] && break; sleep 0.1; done
if [ ! -S "$D/native" ]; then
    echo "start-pulse: the server did not come up" >&2; cat "$D/pulseaudio.log" >&2
    return 1 2>/dev/null || exit 1
fi
# Wait until the loopback has brought the sink to low latency.
for _ in $(seq 60); do
    L=$(pactl list sinks 2>/dev/null | sed -n 's/^[[:space:]]*Latency: \([0-9]*\) usec.*/\1/p' | head -1)
    [ -n "$L" ] && [ "$L" -lt 100000 ] && break
    sleep 0.1
done
echo "start-pulse: pid $MIXFX_PULSE_PID at $PULSE_SERVER" >&2
