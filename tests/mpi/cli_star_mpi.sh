#!/usr/bin/env bash
# cli_star_mpi.sh LAUNCHER TREDUCE: the all-reduce on the n-star graph over
# MPI (docs/STAR.md), each run started by run_mpi.sh (mpirun
# --oversubscribe, 60 s limit):
#   - star and star-reduce-bcast on S_3 and S_4 (6 and 24 processes, ranks
#     = permutations in lexicographic order), int32 and double sums, one
#     segment and several, verified against the sequential fold, with the
#     JSON keys of `treduce run`;
#     (S_3 only under TRD_TEST_QUICK=1: 24 processes under ASan take
#     minutes);
#   - a process count that is no n! and a non-commutative operator: exit 2
#     with one message saying why.
set -uo pipefail
# shellcheck source=SCRIPTDIR/mpi_lib.sh
source "$(dirname "$0")/mpi_lib.sh" "$@"

nps=(6 24)
quick && nps=(6)
for np in "${nps[@]}"; do
  for algo in star star-reduce-bcast; do
    run_ok "$np" --allreduce --algo "$algo" --count 1001 --type int32
    run_ok "$np" --allreduce --algo "$algo" --count 100000 --segment 65536
  done
done

# bad input: exit 2, said once (rank 0)
text=$("${launch[@]}" 5 "$tool" run --wire mpi --algo star --allreduce --count 10 2>&1)
status=$?
n=$(grep -c "n! ranks" <<<"$text")
if [ "$status" -eq 2 ] && [ "$n" -eq 1 ]; then ok; else
  bad "star on 5 processes: exit $status, the message $n times: $text"; fi
expect 2 "commutative" -- "${launch[@]}" 6 "$tool" run --wire mpi --algo star \
  --allreduce --count 10 --op matrix

echo "cli_star_mpi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
