#!/usr/bin/env bash
# Lays out the C API under PREFIX: what `make install` copies for it, and what the C API
# tests install into a temporary prefix.
#
#   scripts/capi-install.sh PREFIX [BUILD_DIR]     BUILD_DIR: .build/release by default
#
#   BUILD_DIR/libmixfx-c.so        -> PREFIX/lib/libmixfx.so.0   (its soname: the file is the product
#                                     mixfx-c; SwiftPM names it after the product)
#   PREFIX/lib/libmixfx.so         -> libmixfx.so.0              (symlink, for -lmixfx)
#   Sources/CMixFX/include/mixfx.h -> PREFIX/include/mixfx.h
#
# The library finds the Swift runtime through its RUNPATH (the toolchain's lib/swift/linux, where
# it was built) unless the build was --static-swift-stdlib; libsndfile and libasound come from
# the system.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
prefix=${1:?usage: scripts/capi-install.sh PREFIX [BUILD_DIR]}
build=${2:-$here/.build/release}
[ -f "$build/libmixfx-c.so" ] || { echo "capi-install: $build/libmixfx-c.so is not built (swift build -c release --product mixfx-c)" >&2; exit 1; }
install -d "$prefix/lib" "$prefix/include"
install -m 755 "$build/libmixfx-c.so" "$prefix/lib/libmixfx.so.0"
ln -sfn libmixfx.so.0 "$prefix/lib/libmixfx.so"
install -m 644 "$here/Sources/CMixFX/include/mixfx.h" "$prefix/include/mixfx.h"
