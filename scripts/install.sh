#!/usr/bin/env bash
# make install / make uninstall (the Makefile passes its variables in the environment).
#
#   scripts/install.sh install     copies the release build in BUILD_DIR under DESTDIR+PREFIX
#   scripts/install.sh uninstall   removes what the install's manifest lists, nothing else
#
# What goes where (each directory may be set on its own, as GNU make users expect):
#   BINDIR/mixfx                                  the executable
#   LIBDIR/libmixfx.so.0, LIBDIR/libmixfx.so      the C API (libmixfx.so -> libmixfx.so.0),
#   INCLUDEDIR/mixfx.h                            laid out by scripts/capi-install.sh
# Both carry the Swift runtime inside (the executable built with --static-swift-stdlib, the
# library linked by scripts/capi-static-link.sh), so they need only system libraries: libsndfile,
# libasound, libstdc++ and libc.
#   PKGCONFIGDIR/mixfx.pc                         pkg-config mixfx (prefix written for PREFIX)
#   LV2DIR/mixfx.lv2/                             the LV2 bundle, when scripts/lv2-bundle.sh exists
#   MANDIR/man1/mixfx.1                           `mixfx --man-page`: the help texts as roff
#   BASHCOMPDIR/mixfx, ZSHCOMPDIR/_mixfx          `mixfx --completions bash|zsh`
#   DATADIR/mixfx/install-manifest                every file, link and folder this install made
#
# The man page, the completions and the pkg-config version come from the built mixfx itself
# (BUILD_DIR/mixfx), so they describe exactly the program installed.
#
# The manifest holds paths as installed (without DESTDIR), one a line: `file PATH`, `link
# PATH`, or `dir PATH` for a folder this install created. Uninstall removes the files and links
# it lists, then those folders if they are empty; a file someone else put beside them stays.
# Installing again over an install keeps the earlier manifest's entries (the union is removed).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
action=${1:?usage: scripts/install.sh install|uninstall}

: "${PREFIX:=/usr/local}"
: "${DESTDIR:=}"
: "${BINDIR:=$PREFIX/bin}"
: "${LIBDIR:=$PREFIX/lib}"
: "${INCLUDEDIR:=$PREFIX/include}"
: "${DATAROOTDIR:=$PREFIX/share}"
: "${DATADIR:=$DATAROOTDIR}"
: "${MANDIR:=$DATAROOTDIR/man}"
: "${PKGCONFIGDIR:=$LIBDIR/pkgconfig}"
: "${LV2DIR:=$LIBDIR/lv2}"
: "${BASHCOMPDIR:=$DATAROOTDIR/bash-completion/completions}"
: "${ZSHCOMPDIR:=$DATAROOTDIR/zsh/site-functions}"
: "${BUILD_DIR:=$here/.build/install/release}"
manifest=$DATADIR/mixfx/install-manifest

for v in PREFIX BINDIR LIBDIR INCLUDEDIR DATADIR MANDIR PKGCONFIGDIR LV2DIR BASHCOMPDIR ZSHCOMPDIR; do
  case ${!v} in /*) ;; *) echo "install: $v must be an absolute path (it is '${!v}')" >&2; exit 2 ;; esac
done

uninstall() {
  local m="$DESTDIR$manifest" kind path
  if [ ! -f "$m" ]; then
    echo "uninstall: no mixfx installed here: $m is missing (give the PREFIX/DESTDIR of the install)" >&2
    exit 1
  fi
  head -n 1 "$m" | grep -q '^# mixfx install manifest' || { echo "uninstall: $m is not a mixfx install manifest" >&2; exit 1; }
  local -a files=() dirs=()
  while read -r kind path; do
    case $kind in
      file|link) files+=("$path") ;;
      dir) dirs+=("$path") ;;
    esac
  done < <(grep -v '^#' "$m")
  local f i
  for f in "${files[@]}"; do
    if [ -L "$DESTDIR$f" ] || [ -f "$DESTDIR$f" ]; then rm -f "$DESTDIR$f"; echo "removed $DESTDIR$f"; fi
  done
  rm -f "$m"
  # deepest first; a folder that holds something else stays
  for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do
    rmdir "$DESTDIR${dirs[i]}" 2>/dev/null && echo "removed $DESTDIR${dirs[i]}/" || true
  done
}

if [ "$action" = uninstall ]; then uninstall; exit 0; fi
[ "$action" = install ] || { echo "usage: scripts/install.sh install|uninstall" >&2; exit 2; }

mixfx="$BUILD_DIR/mixfx"
for f in "$mixfx" "$BUILD_DIR/libmixfx-c.so"; do
  [ -f "$f" ] || { echo "install: $f is not built (make install builds it; NOBUILD=1 takes BUILD_DIR as it is)" >&2; exit 1; }
done
version=$("$mixfx" --version | awk '{print $2}')
[ -n "$version" ] || { echo "install: $mixfx --version printed no version" >&2; exit 1; }

stage=$(mktemp -d "${TMPDIR:-/tmp}/mixfx-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
entries=()          # the manifest's lines, in the order made

# the earlier install's entries, kept (installing again must not forget what the first made)
if [ -f "$DESTDIR$manifest" ] && head -n 1 "$DESTDIR$manifest" | grep -q '^# mixfx install manifest'; then
  while IFS= read -r line; do entries+=("$line"); done < <(grep -v '^#' "$DESTDIR$manifest")
fi
record() {
  local e
  for e in "${entries[@]+"${entries[@]}"}"; do [ "$e" = "$1" ] && return 0; done
  entries+=("$1")
}
# makedir DIR: creates DIR (under DESTDIR) and its missing parents, recording those it made
makedir() {
  local d=$1 missing=()
  while [ "$d" != / ] && [ ! -d "$DESTDIR$d" ]; do missing=("$d" "${missing[@]+"${missing[@]}"}"); d=$(dirname "$d"); done
  [ -z "$DESTDIR" ] || mkdir -p "$DESTDIR"   # (DESTDIR itself is the packager's, not recorded)
  for d in "${missing[@]+"${missing[@]}"}"; do mkdir "$DESTDIR$d"; record "dir $d"; done
}
# put MODE SRC DEST: installs a file
put() {
  case $3 in *$'\n'*) echo "install: a newline in '$3'" >&2; exit 2 ;; esac
  makedir "$(dirname "$3")"
  install -m "$1" "$2" "$DESTDIR$3"
  record "file $3"
  echo "installed $DESTDIR$3"
}
# link TARGET DEST: a symbolic link
link() {
  makedir "$(dirname "$2")"
  ln -sfn "$1" "$DESTDIR$2"
  record "link $2"
  echo "installed $DESTDIR$2 -> $1"
}

# the executable
put 755 "$mixfx" "$BINDIR/mixfx"

# the C API, as scripts/capi-install.sh lays it out, the library linked with the Swift runtime
# inside (scripts/capi-static-link.sh); where that cannot be done, the build's own library, which
# finds the runtime in the toolchain it was built with (its RUNPATH)
# (make install-build links it into BUILD_DIR, so that installing needs no swiftc on the PATH:
# sudo's has none; a build without it, NOBUILD=1, is linked here)
"$here/scripts/capi-install.sh" "$stage/capi" "$BUILD_DIR" >/dev/null
library="$BUILD_DIR/libmixfx.so.0"
if [ -f "$library" ] && [ ! "$library" -ot "$BUILD_DIR/libmixfx-c.so" ]; then
  :
elif library="$stage/libmixfx.so.0"; ! "$here/scripts/capi-static-link.sh" "$BUILD_DIR" "$library"; then
  library="$stage/capi/lib/libmixfx.so.0"
  echo "install: warning: libmixfx.so.0 is installed as built: it needs the Swift toolchain's runtime ($(readelf -d "$library" | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p'))" >&2
fi
put 755 "$library" "$LIBDIR/libmixfx.so.0"
link libmixfx.so.0 "$LIBDIR/libmixfx.so"
put 644 "$stage/capi/include/mixfx.h" "$INCLUDEDIR/mixfx.h"

# the executable: make install builds it with --static-swift-stdlib; say so when it was not
if readelf -d "$mixfx" | grep -q 'NEEDED.*libswiftCore'; then
  echo "install: note: $BINDIR/mixfx needs the Swift runtime of the toolchain it was built with (built without --static-swift-stdlib)"
fi

# pkg-config: the prefix as installed (without DESTDIR); libdir and includedir relative to it
# when they are under it, so `pkg-config --define-prefix` can move it
rel() { case $1 in "$PREFIX"/*) echo "\${prefix}${1#"$PREFIX"}" ;; *) echo "$1" ;; esac; }
cat > "$stage/mixfx.pc" <<EOF
prefix=$PREFIX
libdir=$(rel "$LIBDIR")
includedir=$(rel "$INCLUDEDIR")

Name: mixfx
Description: mixfx audio effects engine: time-pitch, shelf EQ and session renders (C API)
Version: $version
Libs: -L\${libdir} -lmixfx
Cflags: -I\${includedir}
EOF
put 644 "$stage/mixfx.pc" "$PKGCONFIGDIR/mixfx.pc"

# the man page and the completions, from the built program
"$mixfx" --man-page > "$stage/mixfx.1"
put 644 "$stage/mixfx.1" "$MANDIR/man1/mixfx.1"
"$mixfx" --completions bash > "$stage/mixfx.bash"
put 644 "$stage/mixfx.bash" "$BASHCOMPDIR/mixfx"
"$mixfx" --completions zsh > "$stage/_mixfx"
put 644 "$stage/_mixfx" "$ZSHCOMPDIR/_mixfx"

# the LV2 bundle: scripts/lv2-bundle.sh DIR assembles DIR/mixfx.lv2 from the release build
if [ -x "$here/scripts/lv2-bundle.sh" ]; then
  mkdir "$stage/lv2"
  # (the plugin library of BUILD_DIR; it carries the Swift runtime inside: Package.swift)
  [ -f "$BUILD_DIR/libmixfx_lv2.so" ] || { echo "install: $BUILD_DIR/libmixfx_lv2.so is not built (make install builds it)" >&2; exit 1; }
  MIXFX_LV2_LIB="$BUILD_DIR/libmixfx_lv2.so" "$here/scripts/lv2-bundle.sh" "$stage/lv2" >/dev/null
  [ -d "$stage/lv2/mixfx.lv2" ] || { echo "install: scripts/lv2-bundle.sh made no mixfx.lv2" >&2; exit 1; }
  while IFS= read -r -d '' f; do
    rel=${f#"$stage/lv2/"}
    if [ -L "$f" ]; then link "$(readlink "$f")" "$LV2DIR/$rel"
    else put "$(stat -c %a "$f")" "$f" "$LV2DIR/$rel"; fi
  done < <(find "$stage/lv2/mixfx.lv2" \( -type f -o -type l \) -print0 | sort -z)
else
  echo "LV2 bundle: not installed (scripts/lv2-bundle.sh is not in this checkout)"
fi

# the manifest, last (it lists itself)
makedir "$(dirname "$manifest")"
record "file $manifest"
{
  echo "# mixfx install manifest: mixfx $version, PREFIX=$PREFIX (make uninstall removes these)"
  printf '%s\n' "${entries[@]}"
} > "$DESTDIR$manifest"
echo "installed $DESTDIR$manifest"
