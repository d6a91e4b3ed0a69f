#!/usr/bin/env bash
# Installs the Debian packages mixfx needs that are missing (run as root, or with sudo present).
#   install-deps.sh          build + run: libsndfile, ALSA headers, pkg-config
#   install-deps.sh test     also what the tests use: sox (oracle), PulseAudio and the ALSA pulse
#                            plugin (real-time playback tests), tmux (terminal UI test), gcc,
#                            chromium (the HTML report's browser check), python3-jsonschema (a
#                            second validator for the report schema), and pyloudnorm from PyPI
#                            (the loudness meter's oracle), qemu-user (the portable build under an
#                            emulated pre-AVX CPU), lilv-utils (lv2ls, lv2info, lv2apply: the LV2
#                            plugin as hosts load it), lv2-dev (LV2's header and vocabularies,
#                            against which our ABI declaration and bundle are checked; the build
#                            does not need it), sordi (sord_validate, which checks the bundle),
#                            make, groff-base and man-db (the installed man page), bash-completion
#                            and zsh (the installed completions), binutils (readelf: what the
#                            installed library needs), rubberband-cli (--pitchmap and --timemap
#                            against Rubber Band reading the same maps), exfatprogs and exfat-fuse
#                            (a case-blind volume on a loop device, where root may mount one)
#   install-deps.sh slurm    what make test-slurm uses: sox (the test's inputs and frame counts)
#                            and a single-node Slurm from Debian's archive (slurmctld, slurmd,
#                            slurm-client, munge); the daemons are not started (scripts/slurm/)
set -euo pipefail
pkgs=(libsndfile1-dev libasound2-dev pkg-config)
if [ "${1:-}" = test ]; then pkgs+=(sox pulseaudio libasound2-plugins pulseaudio-utils tmux gcc chromium python3-jsonschema qemu-user lilv-utils lv2-dev sordi make groff-base man-db bash-completion zsh binutils rubberband-cli exfatprogs exfat-fuse); fi
if [ "${1:-}" = slurm ]; then pkgs+=(sox slurmctld slurmd slurm-client munge); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# the loudness meter's independent oracle (pyloudnorm, from PyPI), for the tests
if [ "${1:-}" = test ] && command -v python3 >/dev/null && ! python3 -c "import pyloudnorm" 2>/dev/null; then
  echo "installing: pyloudnorm (pip)"
  python3 -m pip install -q pyloudnorm 2>/dev/null || echo "pyloudnorm could not be installed: its test will show as skipped"
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# Without an init system (a container, CI) the packages' postinst scripts cannot start their
# services: a policy-rc.d that answers 101 (action forbidden) keeps them from trying; one that
# is already there (Docker images have one) stays, ours is removed afterwards.
policy=""
if [ "${1:-}" = slurm ] && [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  trap '$SUDO rm -f "$policy"' EXIT
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
