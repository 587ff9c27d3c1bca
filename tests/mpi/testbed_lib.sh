# shellcheck shell=bash
# testbed_lib.sh: what testbed_test.sh and testbed_matrix.sh share.
# testbed_require LAUNCHER: exits 77 (ctest's skip) with one line where
# network namespaces cannot be made (not root, no iproute2) or there is no
# Open MPI mpirun (testbed run passes Open MPI's parameters); then turns
# off leak checks in the ranks under AddressSanitizer, as mpi_lib.sh does
# (testbed run hands ASAN_OPTIONS to the ranks).
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
  if ! "$1" --version 2>&1 | grep -qi "open mpi\|open-rte\|openrte"; then
    echo "SKIP: the testbed runs Open MPI's mpirun; $1 is another"
    exit 77
  fi
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}
