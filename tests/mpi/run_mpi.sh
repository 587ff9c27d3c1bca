#!/usr/bin/env bash
# run_mpi.sh LAUNCHER NP PROGRAM [ARGS...]: runs an MPI test program on NP
# local processes with the launcher of the MPI it was built with (CMake's
# MPIEXEC_EXECUTABLE: Open MPI's mpirun or MPICH's mpiexec.mpich), under a
# 60 s limit so a hung rank fails the test instead of stalling ctest.
# TRD_TEST_RECOVERY=1 keeps the other processes running when one dies;
# TRD_TEST_MPI_LIMIT sets another limit (seconds); TRD_TEST_LOAD=1 runs the
# program with every core busy (one bounded busy loop per core, started
# here and stopped when the program ends: a loaded cluster node, where
# ranks are preempted and arrive late).
# Exit 77 (ctest SKIP_RETURN_CODE) when there is no launcher.
set -uo pipefail
launcher=${1:-}
np=${2:?usage: run_mpi.sh LAUNCHER NP PROGRAM [ARGS...]}
shift 2
if [ -z "$launcher" ] || ! command -v "$launcher" >/dev/null 2>&1; then
  echo "SKIP: mpirun not found (launcher '${launcher}'; install openmpi-bin)"
  exit 77
fi

# Open MPI refuses to run as root without these (containers, CI).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under AddressSanitizer (make test-sanitize) the MPI libraries' own
# allocations are not ours: suppress leaks whose stack passes through them.
# Open MPI makes some from plugins it has unloaded by exit time, whose
# frames have no name; the slow unwinder walks on to a named MPI frame.
supp="$(cd "$(dirname "$0")" && pwd)/lsan_mpi.supp"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp:fast_unwind_on_malloc=0"

extra=()
if "$launcher" --version 2>&1 | grep -qi "open mpi\|open-rte\|openrte"; then
  extra=(--oversubscribe) # more ranks than cores is what these tests want
  # TRD_TEST_RECOVERY=1: a process that dies does not take the others with it
  [ "${TRD_TEST_RECOVERY:-}" = 1 ] && extra+=(--enable-recovery)
elif [ "${TRD_TEST_RECOVERY:-}" = 1 ]; then
  extra=(-disable-auto-cleanup) # MPICH's hydra
fi
# A private temporary directory: Open MPI keeps its session directory
# there, and two runs starting at once (ctest -j) race on a shared one.
# Its shared-memory segments go there too: a killed job (the dead-rank
# tests) cannot remove them, and in /dev/shm they would pile up.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trd-mpi.XXXXXX")
limit=${TRD_TEST_MPI_LIMIT:-60}
loads=()
stop() {
  [ ${#loads[@]} -gt 0 ] && kill "${loads[@]}" 2>/dev/null
  rm -rf "$tmp"
}
trap stop EXIT
if [ "${TRD_TEST_LOAD:-}" = 1 ]; then
  for _ in $(seq "$(nproc)"); do
    timeout "$limit" sh -c 'while :; do :; done' &
    loads+=($!)
  done
fi
export TMPDIR=$tmp OMPI_MCA_btl_vader_backing_directory=$tmp
timeout "$limit" "$launcher" "${extra[@]}" -np "$np" "$@"
