#!/usr/bin/env bash
# cli_run_mpi.sh LAUNCHER TREDUCE [PART]: `treduce run --wire mpi` end
# to end, each run started by run_mpi.sh (mpirun --oversubscribe, 60 s
# limit).  PART: algos (every algorithm on 4 processes), cases (all the
# rest), or all (the default); spread (every algorithm on 4 and a few on
# 5, for testbed_matrix.sh); ctest runs the first two as separate tests,
# each with its own time limit.  Under TRD_TEST_QUICK=1 (make
# test-sanitize) every algorithm runs on 3 processes, the other cases on
# 2 and 5, and spread one algorithm of each kind.  Every algorithm on
# every process count, operator and buffer mode is the correctness
# matrix's job (test_runtime_matrix_mpi, one launch per count): here the
# command line end to end.
#   - every registered algorithm on 4 processes (those on the star graph,
#     p = n! only, on 2: see cli_star_mpi.sh),
#     verified against the rank-order fold (the non-commutative 2x2 matrix
#     checker wherever the algorithm accepts it, else int32 sum), the first
#     collective its row runs (--kind: reduce to the last rank, allreduce,
#     reduce-scatter, scan), with the JSON keys of the contract; the
#     planners for heterogeneous costs with a random cost file (--costs);
#   - counts 0, 1, odd and large on 1, 2, 5, 8 and 9 processes for a tree,
#     an exchange and a dynamic algorithm; a reduce-scatter of uneven parts;
#   - small messages through MPI too (TRD_MPI_SHM_MAX=0: no shared-memory
#     rings), long ones in fragments through the rings, a /dev/shm too
#     small for them (MPI only, no SIGBUS), and a malformed TRD_MPI_SHM_MAX
#     refused;
#   - calibrate --matrix names every rank in its place; the series of
#     reduces of a steady-state schedule, one rank per node, verified;
#   - buffers that fit one process but not the node's four: refused on
#     every rank before anything is allocated;
#   - bad input exits 2 on every rank with one message; a killed process
#     (--dead-rank) ends the job with a failure, never a hang.
set -uo pipefail
# shellcheck source=SCRIPTDIR/mpi_lib.sh
source "$(dirname "$0")/mpi_lib.sh" "$@"
part=${3:-all}

# first_kind ALGO: the first collective its registry row runs (treduce list)
first_kind() {
  "$tool" list --format json | jq -r ".[] | select(.name == \"$1\") | .collectives[0]"
}
# flag_of ALGO FLAG: its registry row's flag (treduce list --format json)
flag_of() { "$tool" list --format json | jq -r ".[] | select(.name == \"$1\") | .$2"; }

# algorithms [one-per-kind]: the registered algorithms, or the first of each kind
algorithms() {
  if [ "${1:-}" = one-per-kind ]; then
    "$tool" list --format json | jq -r 'group_by(.kind) | .[][0].name'
  else
    "$tool" list --format json | jq -r '.[].name'
  fi
}

# every_algorithm [--one-per-kind] NP...: every registered algorithm (or
# the first of each kind) on each process count
every_algorithm() {
  local algo kind np mode op model root which=all
  [ "$1" = --one-per-kind ] && { which=one-per-kind; shift; }
  for algo in $(algorithms "$which"); do
    kind=$(first_kind "$algo")
    mode=(--kind "$kind"); op=(--op matrix)
    [ "$(flag_of "$algo" commutative_only)" = true ] && op=(--op sum --type int32)
    for np in "$@"; do
      # the star graph's algorithms take p = n! only: cli_star_mpi.sh runs S_3, S_4
      [ "$(flag_of "$algo" needs_factorial_p)" = true ] && [ "$np" -gt 2 ] && np=2
      model=(--d 1 --c 1)
      if [ "$(flag_of "$algo" uses_costs)" = true ]; then # every rank reads the same file
        "$tool" costs generate -n "$np" --seed "$np" --model nodes --out "$out/costs.txt"
        model=(--costs "$out/costs.txt")
      fi
      root=()
      [ "$kind" = reduce ] && root=(--root $((np - 1)))
      run_ok "$np" --algo "$algo" --count 1001 "${op[@]}" "${mode[@]}" "${root[@]}" \
        "${model[@]}"
    done
  done
}

# other_cases: counts, the rings, bad input, a killed process
other_cases() {
  local nps=(1 2 5 8 9)
  quick && nps=(2 5)
  for np in "${nps[@]}"; do
    for count in 0 1 4097; do
      run_ok "$np" --algo greedy --count "$count" --op interval --allreduce --d 1 --c 1
      run_ok "$np" --algo rabenseifner --count "$count" --op matrix --allreduce --d 1 --c 1
      run_ok "$np" --algo nc-tree-dyn --count "$count" --op matrix --d 1 --c 1
    done
  done
  run_ok 4 --algo binomial --count 300000 --type int64 --op bxor --segment 65536
  # a reduce-scatter of uneven parts, one empty (--parts: trd_reduce_scatter)
  run_ok 3 --algo reduce-scatter-pairwise --kind reduce-scatter --parts 1001,0,7 --op matrix \
    --d 1 --c 1
  run_ok 5 --algo pipeline --count 100000 --type uint64 --op prod --allreduce

  # small messages through MPI as well: the shared-memory rings off
  for algo in binomial nc-tree-dyn; do
    TRD_MPI_SHM_MAX=0 run_ok 4 --algo "$algo" --count 1001 --op matrix --d 1 --c 1
  done
  TRD_MPI_SHM_MAX=0 run_ok 3 --algo rabenseifner --count 1001 --op matrix --allreduce --d 1 --c 1
  # long messages in fragments through the rings: a limit above the message
  # at np 2, and the default where ranks share cores at np 3
  TRD_MPI_SHM_MAX=4000000 run_ok 2 --algo binomial --count 50001 --op matrix --d 1 --c 1
  # tuned auto at np 2 also times its first candidate with the long messages
  # the other way than the probe kept: the limit changes between calls,
  # and every call must still pair each send with its receive
  run_ok 2 --algo auto --tune=3 --count 50001 --op matrix
  jcheck '.shm_max_bytes == 16384 or .shm_max_bytes == 2147483647' "$out/run.json"
  run_ok 2 --algo auto --tune=2 --count 30001 --op matrix --allreduce
  run_ok 3 --algo recursive-doubling --count 50001 --op matrix --allreduce --d 1 --c 1
  # the limit as calibrate reports it: on one node where every rank has a
  # core, 16 KiB or every message (INT_MAX) as the creation's probe found
  # the rings slower or faster (below 0.95x MPI's time) for a 64 KiB
  # reduce; every message where ranks share cores (no probe); 0 with the
  # rings off; 0 for threads
  if [ "$(nproc)" -ge 2 ]; then
    want='(.shm_max_bytes == 2147483647) == (.shm_probe_us.rings < 0.95 * .shm_probe_us.mpi)
          and (.shm_max_bytes == 2147483647 or .shm_max_bytes == 16384)
          and .shm_probe_us.rings > 0 and .shm_probe_us.mpi > 0'
  else
    want='.shm_max_bytes == 2147483647 and .shm_probe_us == null'
  fi
  "${launch[@]}" 2 "$tool" calibrate --wire mpi --format json >"$out/cal.json" 2>"$out/err" &&
    jcheck "$want" "$out/cal.json" || bad "calibrate: $(tail -3 "$out/err")"
  "${launch[@]}" 3 "$tool" calibrate --wire mpi --format json >"$out/cal.json" 2>"$out/err" &&
    jcheck '.shm_probe_us == null' "$out/cal.json" || bad "calibrate np 3: $(tail -3 "$out/err")"
  TRD_MPI_SHM_MAX=0 "${launch[@]}" 2 "$tool" calibrate --wire mpi --format json \
    >"$out/cal.json" 2>"$out/err" && jcheck '.shm_max_bytes == 0 and .shm_probe_us == null' \
    "$out/cal.json" || bad "calibrate, rings off: $(tail -3 "$out/err")"
  "$tool" calibrate -p 2 --format json >"$out/cal.json" && jcheck '.shm_max_bytes == 0' "$out/cal.json"
  # calibrate --matrix names each process after its host, here each rank's
  # own TRD_TESTBED_NODE (as a testbed sets it): every rank's name in its
  # rank's place, "#rank" where two share one (the names gathered through
  # the communicator, trd_comm_allgather)
  named=(sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
                TRD_TESTBED_NODE=h$(((5 - r) / 2)) exec "$0" "$@"' "$tool")
  "${launch[@]}" 3 "${named[@]}" calibrate --matrix --transport mpi --count 1000 --format json \
    >"$out/m.json" 2>"$out/err" &&
    jcheck '.p == 3 and .nodes == ["h2#0", "h2#1", "h1"] and .latency_s[1][2] > 0' \
      "$out/m.json" || bad "calibrate --matrix: $(tail -3 "$out/err")"
  # the series of reduces of Figure 6 over MPI, one rank per node: the
  # target's check and the slowest rank's time reach rank 0 (through the
  # communicator's agreement); a rank short is refused on rank 0
  series=("$tool" steady --problem reduce -p "$here/../data/steady/fig6-reduce.json" --target P0)
  "${launch[@]}" 3 "${series[@]}" --run 30 --wire mpi --unit-bytes 1000 --time-unit 0.01 \
    --format json >"$out/series.json" 2>"$out/err" &&
    jcheck '.run.verified == true and .run.transport == "mpi" and .run.ops == 30
            and .run.bytes_per_op == 1008 and .run.seconds > 0
            and (.run.tp_ops_per_second - 100 | fabs) < 1e-9' "$out/series.json" ||
    bad "series over MPI: $(tail -3 "$out/err")"
  expect 2 'one rank per platform node: 2 ranks for 3 nodes' -- "${launch[@]}" 2 \
    "${series[@]}" --run 4 --wire mpi
  # a /dev/shm too small for the rings (a private 16 MiB one; np 8 needs 34
  # MiB): the wire goes without them, MPI only, and never dies of SIGBUS
  small_shm() { unshare -m bash -c 'mount -t tmpfs -o size=16m tmpfs /dev/shm && "$@"' _ "$@"; }
  if unshare -m true 2>/dev/null; then
    small_shm "${launch[@]}" 8 "$tool" calibrate --wire mpi --format json \
      >"$out/cal.json" 2>"$out/err" &&
      jcheck '.shm_max_bytes == 0' "$out/cal.json" || bad "small /dev/shm: $(tail -3 "$out/err")"
    small_shm "${launch[@]}" 8 "$tool" run --wire mpi --algo binomial --count 1001 \
      --op matrix --format json >"$out/run.json" 2>"$out/err" &&
      jcheck '.verified == true' "$out/run.json" || bad "small /dev/shm run: $(tail -3 "$out/err")"
  else
    echo "note: unshare -m is not permitted here: the small /dev/shm case is skipped"
  fi
  # a ring limit that is a byte count only in part: refused on every rank
  expect 2 "TRD_MPI_SHM_MAX=12x is not a byte count" -- env TRD_MPI_SHM_MAX=12x "${launch[@]}" 2 \
    "$tool" run --wire mpi --algo binomial --count 10

  # buffers that fit one process but not the four on this node: refused on
  # every rank (the node's ranks counted), before anything is allocated
  local phys count
  phys=$(( $(getconf _PHYS_PAGES) * $(getconf PAGESIZE) ))
  count=$(( phys / 7 / 8 )) # doubles: one process 4/7 of 80 %, four 10/7
  expect 1 "too large: 4 ranks on this machine need" -- "${launch[@]}" 4 "$tool" run \
    --transport mpi --algo binomial --count "$count" --d 1 --c 1

  # bad input: exit 2, the message once (rank 0), no hang
  expect 2 "band.*double|double.*band" -- "${launch[@]}" 3 "$tool" run --wire mpi \
    --algo binomial --count 10 --op band
  expect 2 "non-commutative" -- "${launch[@]}" 3 "$tool" run --wire mpi \
    --algo tree-dyn --count 10 --op matrix
  "$tool" costs generate -n 3 --out "$out/costs3.txt"
  expect 2 "commutative operators only" -- "${launch[@]}" 3 "$tool" run --wire mpi \
    --algo hetero-greedy --count 10 --op matrix --costs "$out/costs3.txt"
  expect 2 "n = 3 ranks.*n = 4|n = 4.*n = 3" -- "${launch[@]}" 4 "$tool" run --wire mpi \
    --algo hetero-greedy --count 10 --costs "$out/costs3.txt"
  expect 2 "root = 7" -- "${launch[@]}" 3 "$tool" run --wire mpi --algo binomial \
    --count 10 --root 7
  text=$(mpi 3 --algo binomial --count 10 --op band 2>&1)
  n=$(grep -c "band" <<<"$text")
  [ "$n" -eq 1 ] && ok || bad "the usage error was printed $n times: $text"

  # a process killed mid-run: a failure within seconds, not a hang
  start=$(date +%s)
  mpi 4 --algo binomial --count 100000 --iters 50 --dead-rank 2 --timeout 5 >"$out/dead" 2>&1
  status=$?
  took=$(( $(date +%s) - start ))
  if [ "$status" -ne 0 ] && [ "$took" -lt 30 ]; then ok; else
    bad "dead rank: exit $status after ${took}s: $(tail -3 "$out/dead")"; fi
}

algos=4 spread=()
quick && algos=3 spread=(--one-per-kind)
case $part in
  algos) every_algorithm "$algos" ;;
  cases) other_cases ;;
  spread) # testbed_matrix.sh: on 4 testbed hosts, and 5 ranks (two share a host)
    every_algorithm "${spread[@]}" 4
    run_ok 5 --algo greedy --count 4097 --op interval --allreduce --d 1 --c 1
    run_ok 5 --algo nc-tree-dyn --count 4097 --op matrix --d 1 --c 1 ;;
  all) every_algorithm "$algos"; other_cases ;;
  *) echo "cli_run_mpi.sh: unknown part '$part' (algos, cases, spread, all)" >&2; exit 2 ;;
esac

echo "cli_run_mpi $part: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
