#!/usr/bin/env bash
# The same pitch shift through libmixfx's C API and Rubber Band's (rubberband-c.h), CPU seconds
# and ratios (Benchmarks/capi_bench.c). Builds libmixfx in release, lays it out in a temporary
# prefix (scripts/capi-install.sh), installs librubberband-dev when missing.
#   Benchmarks/capi_bench.sh [SECONDS] [CENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
need=()
command -v gcc >/dev/null || need+=(gcc)
[ -f /usr/include/rubberband/rubberband-c.h ] || need+=(librubberband-dev)
install_missing "${need[@]}"
swift build -c release --product mixfx-c >/dev/null
prefix=$(mktemp -d /tmp/mixfx-capi-bench.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
scripts/capi-install.sh "$prefix"
gcc -O2 -std=c99 -Wall -Wextra -Werror -I "$prefix/include" Benchmarks/capi_bench.c -o "$prefix/capi_bench" \
    -L "$prefix/lib" -lmixfx -lrubberband -lm -Wl,-rpath,"$prefix/lib"
"$prefix/capi_bench" "$@"
