#!/usr/bin/env bash
# cli_star_mpi.sh LAUNCHER TREDUCE: the all-reduce on the n-star graph over
# MPI (docs/STAR.md), each run started by run_mpi.sh (mpirun
# --oversubscribe, 60 s limit):
#   - star and star-reduce-bcast on S_3 and S_4 (6 and 24 processes, ranks
#     = permutations in lexicographic order), int32 and double sums, one
#     segment and several, verified against the sequential fold, with the
#     JSON keys of `treduce run`;
#   - a process count that is no n! and a non-commutative operator: exit 2
#     with one message saying why.
set -uo pipefail
launcher=$1
tool=$2
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/treduce-cli-star-mpi.$$
# shellcheck source=../cli_lib.sh
source "$here/../cli_lib.sh"
trap 'rm -rf "$out"' EXIT
if [ -z "$launcher" ] || ! command -v "$launcher" >/dev/null 2>&1; then
  echo "SKIP: mpirun not found"
  exit 77
fi
launch=("$here/run_mpi.sh" "$launcher")

# run_ok NP ARGS...: a verified allreduce, the contract's JSON keys.
run_ok() {
  local np=$1; shift
  local f="$out/run.json"
  if ! "${launch[@]}" "$np" "$tool" run --transport mpi --allreduce "$@" --iters 3 \
       --format json >"$f" 2>"$out/err"; then
    bad "np=$np $*: exit $?: $(tail -3 "$out/err")"
    return
  fi
  jcheck ".verified == true and .transport == \"mpi\" and .p == $np and .allreduce == true
          and (.median_us | type) == \"number\" and (.predicted_us | type) == \"number\"" "$f"
}

for np in 6 24; do
  for algo in star star-reduce-bcast; do
    run_ok "$np" --algo "$algo" --count 1001 --type int32
    run_ok "$np" --algo "$algo" --count 100000 --segment 65536
  done
done

# bad input: exit 2, said once (rank 0)
text=$("${launch[@]}" 5 "$tool" run --transport mpi --algo star --allreduce --count 10 2>&1)
status=$?
n=$(grep -c "n! ranks" <<<"$text")
if [ "$status" -eq 2 ] && [ "$n" -eq 1 ]; then ok; else
  bad "star on 5 processes: exit $status, the message $n times: $text"; fi
expect 2 "commutative" -- "${launch[@]}" 6 "$tool" run --transport mpi --algo star \
  --allreduce --count 10 --op matrix

echo "cli_star_mpi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
