#!/usr/bin/env bash
# cli_dead_rank_mpi.sh LAUNCHER TREDUCE FAULTS: a process killed outright
# (SIGKILL) under a launcher that keeps the others running (Open MPI's
# mpirun --enable-recovery, MPICH's -disable-auto-cleanup: run_mpi.sh with
# TRD_TEST_RECOVERY=1).
#   - the library (FAULTS: test_faults_mpi dead ALGO, on 4 processes, for
#     an algorithm of each kind: a tree, a pipeline, both dynamic ones and
#     the coordinator they ask, two exchanges): every survivor ends its
#     call, a barrier and the next call within the deadline + 1 s, with an
#     error wherever it needs the dead rank (each survivor reports its own
#     checks: the launcher's exit status says nothing here);
#   - the CLI (`treduce run --wire mpi --dead-rank 2`): rank 0 prints
#     its error within the deadline + 1 s of the kill (its result gather
#     has the deadline too: no MPI collective), naming rank 2 dead, and the
#     job ends.
set -uo pipefail
launcher=$1
tool=$2
faults=$3
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/treduce-cli-dead-rank.$$
# shellcheck source=SCRIPTDIR/../cli_lib.sh
source "$here/../cli_lib.sh"
trap 'rm -rf "$out"' EXIT
if [ -z "$launcher" ] || ! command -v "$launcher" >/dev/null 2>&1; then
  echo "SKIP: mpirun not found"
  exit 77
fi
export TRD_TEST_RECOVERY=1

for algo in binomial pipeline tree-dyn nc-tree-dyn ring rabenseifner; do
  "$here/run_mpi.sh" "$launcher" 4 "$faults" dead "$algo" >"$out/lib" 2>&1
  n=$(grep -c "dead rank, $algo: 0 failed checks" "$out/lib")
  if [ "$n" -eq 3 ] && ! grep -q "check failed" "$out/lib"; then ok; else
    bad "library, $algo: $n of 3 survivors passed: $(grep -v PMIX "$out/lib" | tail -5)"; fi
done

# stamp: each line of stdin with the seconds since the epoch it came at
stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
for algo in binomial ring; do
  mode=(); [ "$algo" = ring ] && mode=(--allreduce)
  start=$EPOCHREALTIME
  "$here/run_mpi.sh" "$launcher" 4 "$tool" run --wire mpi --algo "$algo" "${mode[@]}" \
    --count 100000 --iters 50 --dead-rank 2 --timeout 1 --d 1 --c 1 2>&1 | stamp >"$out/cli"
  end=$EPOCHREALTIME
  killed=$(awk '/rank 2 kills itself/ {print $1; exit}' "$out/cli")
  # rank 0's message: "treduce run: <error>" (the others': "treduce run: rank N: ...")
  said=$(awk '$2 == "treduce" && $3 == "run:" && $4 != "rank" {print $1; exit}' "$out/cli")
  named=$(awk '$2 == "treduce" && $3 == "run:" && $4 != "rank"' "$out/cli" | grep -c 'rank 2 (pid [0-9]*) is dead')
  if [ -n "$killed" ] && [ -n "$said" ] && [ "$named" -ge 1 ] &&
     awk -v k="$killed" -v s="$said" -v e="$end" 'BEGIN { exit !(s - k <= 2.0 && e - k <= 10) }'; then
    ok
  else
    bad "CLI, $algo: killed at ${killed:-?}, rank 0 said at ${said:-never} (naming it dead:" \
        "$named), ended at $end" \
        "(started $start): $(cut -d' ' -f2- "$out/cli" | grep -v PMIX | tail -5)"
  fi
done

echo "cli_dead_rank_mpi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
