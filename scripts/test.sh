#!/usr/bin/env bash
# The whole test suite (make test): builds in release, starts the private PulseAudio server the
# real-time playback tests use (Tests/alsa), runs the tests, stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
# for this machine's CPU, as `make run` builds mixfx (CPU=x86-64 for a portable build)
read -r -a cpu <<< "$(scripts/swift-flags.sh)"
flags=(-c release -Xswiftc -enable-testing "${cpu[@]}")
swift build "${flags[@]}"
if command -v pulseaudio >/dev/null; then
  export MIXFX_PULSE_DIR=$(mktemp -d /tmp/mixfx-pulse.XXXXXX)
  # shellcheck source=/dev/null
  source Tests/alsa/start-pulse.sh || echo "PulseAudio did not start: the real-time playback tests will skip"
  trap 'bash Tests/alsa/stop-pulse.sh' EXIT
fi
swift test "${flags[@]}" "$@"
