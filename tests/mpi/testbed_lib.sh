# shellcheck shell=bash
# testbed_lib.sh: what testbed_test.sh and testbed_matrix.sh share.
# testbed_require LAUNCHER: exits 77 (ctest's skip) with one line where
# network namespaces cannot be made (not root, no iproute2) or there is no
# mpirun.
testbed_require() {
  if ! command -v ip >/dev/null || ! ip netns add "trdprobe-$$" 2>/dev/null; then
    echo "SKIP: cannot make network namespaces here (needs root and iproute2)"
    exit 77
  fi
  ip netns del "trdprobe-$$"
  if [ -z "$1" ] || ! command -v "$1" >/dev/null 2>&1; then
    echo "SKIP: mpirun not found"
    exit 77
  fi
}
