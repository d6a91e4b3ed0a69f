# Shared by the benchmark scripts (sourced, from the package's root).

# install_missing PKG... : installs the Debian packages given (as root, or with sudo)
install_missing() {
  [ $# -gt 0 ] || return 0
  local SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@"
}

# install_missing_pip MODULE=PACKAGE... : pip-installs each PyPI PACKAGE whose python MODULE does
# not import (the bench's optional Python peers and ViSQOL; a failed install leaves the peer out,
# and mixfx-bench --quality says so)
install_missing_pip() {
  command -v python3 >/dev/null || return 0
  local want=() pair
  for pair in "$@"; do python3 -c "import ${pair%%=*}" 2>/dev/null || want+=("${pair#*=}"); done
  [ ${#want[@]} -eq 0 ] || python3 -m pip install -q "${want[@]}" || echo "(pip could not install ${want[*]})"
}

# make_band DIR : the band's four tracks in DIR (built once), their paths in T
make_band() {
  mkdir -p "$1"
  .build/release/mixfx-bench --make-band "$1" >/dev/null
  T=("$1"/track1.wav "$1"/track2.wav "$1"/track3.wav "$1"/track4.wav)
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
best_of() {  # best_of N cmd... : best wall time of N runs
  local n=$1; shift; local best=""
  for _ in $(seq "$n"); do
    local t0; t0=$(now); "$@" >/dev/null 2>&1; local t; t=$(secs "$t0" "$(now)")
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
  done
  echo "$best"
}

wall_and_cpu() {  # wall_and_cpu cmd... : "WALL CPU" seconds of one run (CPU: user + sys, children included)
  { TIMEFORMAT='%3R %3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1 | awk '{printf "%.3f %.3f\n", $1, $2 + $3}'
}

best_cpu_of() {  # best_cpu_of N cmd... : least CPU seconds (user + sys, children included) of N runs
  local n=$1; shift; local best=""
  for _ in $(seq "$n"); do
    local t
    t=$( { TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1 | awk '{print $1 + $2}')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
  done
  echo "$best"
}
