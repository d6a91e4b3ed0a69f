#!/usr/bin/env bash
# Assembles the LV2 bundle mixfx.lv2 (the plugin library as mixfx.so, manifest.ttl, mixfx.ttl)
# from the release build:
#
#   scripts/lv2-bundle.sh DIR        DIR/mixfx.lv2
#   scripts/lv2-bundle.sh --prefix P P/lib/lv2/mixfx.lv2 (what `make install` calls; LV2 hosts
#                                    search /usr/lib/lv2, /usr/local/lib/lv2 and ~/.lv2, or $LV2_PATH)
#
# Builds the library first (swift build -c release --product mixfx_lv2, with scripts/swift-flags.sh's
# flags when CPU is set), unless MIXFX_LV2_LIB names a built one (the tests: the library beside
# them). The library carries
# the Swift runtime (linked with -static-stdlib, Package.swift), so the bundle needs nothing of
# Swift where it is installed: only libc, libm, libstdc++ and libgcc_s.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
case "${1:-}" in
  --prefix) [ $# -eq 2 ] || { echo "usage: $0 DIR | --prefix PREFIX" >&2; exit 2; }
            dest="$2/lib/lv2/mixfx.lv2" ;;
  ""|-*)    echo "usage: $0 DIR | --prefix PREFIX" >&2; exit 2 ;;
  *)        dest="$1/mixfx.lv2" ;;
esac
lib="${MIXFX_LV2_LIB:-}"
if [ -z "$lib" ]; then
  flags=""
  [ -n "${CPU:-}" ] && flags="$("$root/scripts/swift-flags.sh")"
  # shellcheck disable=SC2086
  (cd "$root" && swift build -c release --product mixfx_lv2 $flags >&2)
  lib="$root/.build/release/libmixfx_lv2.so"
fi
[ -f "$lib" ] || { echo "$lib is missing: build it with swift build -c release --product mixfx_lv2" >&2; exit 1; }
mkdir -p "$dest"
install -m 755 "$lib" "$dest/mixfx.so"
install -m 644 "$root/Sources/MixFXLV2/bundle/manifest.ttl" "$root/Sources/MixFXLV2/bundle/mixfx.ttl" "$dest/"
echo "$dest"
