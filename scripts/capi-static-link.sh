#!/usr/bin/env bash
# Links the C API library with the Swift runtime inside, from the objects of a release build:
# what `make install` installs as libmixfx.so.0, so it needs only system libraries (libsndfile,
# libasound, libstdc++, libc) and no Swift toolchain where it runs.
#
#   scripts/capi-static-link.sh BUILD_DIR OUT     BUILD_DIR: a build of the product mixfx-c
#
# SwiftPM links a dynamic library product only against the shared Swift runtime
# (--static-swift-stdlib applies to executables), so this repeats its link of mixfx-c (the same
# objects, BUILD_DIR/mixfx-c.product/Objects.LinkFileList, the same soname and dead stripping)
# with the driver's -static-stdlib and the toolchain's static libraries. The runtime's symbols
# stay inside (not exported), so the library does not clash with another Swift runtime in the
# same process; only the mixfx_ functions and mixfx's own Swift symbols are exported, as in the
# shared build.
set -euo pipefail
build=${1:?usage: scripts/capi-static-link.sh BUILD_DIR OUT}
out=${2:?usage: scripts/capi-static-link.sh BUILD_DIR OUT}
list="$build/mixfx-c.product/Objects.LinkFileList"
[ -f "$list" ] || { echo "capi-static-link: $list is missing (swift build -c release --product mixfx-c)" >&2; exit 1; }
swiftc=$(command -v swiftc) || { echo "capi-static-link: swiftc is not on the PATH" >&2; exit 1; }
static="$(cd "$(dirname "$(readlink -f "$swiftc")")/.." && pwd)/lib/swift_static/linux"
[ -d "$static" ] || { echo "capi-static-link: the toolchain has no static Swift runtime ($static)" >&2; exit 1; }
# Foundation's own static parts: the objects' autolink entries name Foundation, not what it is
# built on, and nothing else names them for a library (an executable's link gets them from its
# static-executable-args); -z defs makes any symbol still missing an error here, not in the
# program that links the library later
extra=()
for l in CoreFoundation _FoundationCShims _FoundationCollections _FoundationICU; do
  [ -f "$static/lib$l.a" ] && extra+=("-l$l")
done
rm -f "$out"
"$swiftc" -emit-library -static-stdlib -o "$out" @"$list" -L "$static" \
  -Xlinker --gc-sections -Xlinker -soname=libmixfx.so.0 -Xlinker -z -Xlinker defs \
  -lsndfile -lasound "${extra[@]}" 2>&1 | grep -v "the use of \`mktemp' is dangerous" >&2 || true
[ -f "$out" ] || { echo "capi-static-link: the link made no $out" >&2; exit 1; }
if readelf -d "$out" | grep -q 'NEEDED.*libswiftCore'; then
  echo "capi-static-link: $out still needs the shared Swift runtime" >&2; exit 1
fi
