# shellcheck shell=bash
# mpi_lib.sh: what cli_run_mpi.sh and cli_star_mpi.sh share.  Sourced with
# the script's own arguments LAUNCHER TREDUCE: sets launcher, tool, here
# and out (emptied, removed at exit), sources ../cli_lib.sh, skips (exit 77)
# without a launcher, and defines
#   "${launch[@]}" NP PROGRAM ARGS...  one run through run_mpi.sh (mpirun
#                              --oversubscribe, 60 s limit; an array, so that
#                              cli_lib.sh's expect can run it);
#   mpi NP ARGS...             `treduce run --wire mpi ARGS` on NP;
#   run_ok NP ARGS...          a verified run with the contract's JSON keys
#                              (allreduce true exactly when ARGS ask for it);
#   quick                      true under TRD_TEST_QUICK=1 (make
#                              test-sanitize, where a launch costs several
#                              times as much): the scripts then run their
#                              matrix on fewer process counts.
launcher=$1
tool=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${TMPDIR:-/tmp}/treduce-$(basename "$0" .sh).$$
# shellcheck source=SCRIPTDIR/../cli_lib.sh
source "$here/../cli_lib.sh"
trap 'rm -rf "$out"' EXIT
# Under AddressSanitizer, no leak checks in these scripts' ranks: at exit,
# LSan walks Open MPI's ~3,000 allocations with the slow unwinder its
# suppressions need, several times a launch's own time, and these scripts
# launch dozens.  The C programs under MPI (mpi_wire, mpi_faults, mpi_layer, the
# runtime matrix) check the wire's leaks, one launch each.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if [ -z "$launcher" ] || ! command -v "$launcher" >/dev/null 2>&1; then
  echo "SKIP: mpirun not found"
  exit 77
fi
launch=("$here/run_mpi.sh" "$launcher")
quick() { [ "${TRD_TEST_QUICK:-0}" = 1 ]; }
mpi() { local np=$1; shift; "${launch[@]}" "$np" "$tool" run --wire mpi "$@"; }

run_ok() {
  local np=$1; shift
  local f="$out/run.json" all=false arg prev=
  for arg in "$@"; do
    { [ "$arg" = --allreduce ] || [ "$prev $arg" = "--kind allreduce" ]; } && all=true
    prev=$arg
  done
  if ! mpi "$np" "$@" --iters 2 --format json >"$f" 2>"$out/err"; then
    bad "np=$np $*: exit $?: $(tail -3 "$out/err")"
    return
  fi
  jcheck ".verified == true and .wire == \"mpi\" and .transport == \"mpi\" and .p == $np and
          .allreduce == $all and
          (.median_us | type) == \"number\" and (.min_us | type) == \"number\" and
          (.predicted_us | type) == \"number\" and has(\"bytes\") and has(\"iters\") and
          has(\"algo\")" "$f"
}
