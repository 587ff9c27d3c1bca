#!/usr/bin/env bash
# cli_bench_test.sh: a quick end-to-end check of `treduce bench` (docs/CLI.md):
# the CSV columns, every result verified, auto and the baseline at every
# point, exchange algorithms only in allreduce, the other collectives
# (--kinds reduce-scatter,scan,exscan) with the algorithms that run them, the
# figures written, the JSON summary, and usage errors (exit 2).  Over
# threads, and under MPI with mpirun -np 2 when this treduce has MPI and
# mpirun is there.  A few seconds.
# usage: cli_bench_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

header='wire,p,kind,op,bytes,algo,median_us,min_us,predicted_us,verified'

# check_csv DIR WIRE BASELINE: bench.csv and ratios.csv of a run of
# sizes 8,1K,64K with --algos binomial,ring, both kinds.
check_csv() {
  local dir=$1 wire=$2 base=$3 csv=$1/bench.csv
  [ "$(head -1 "$csv")" = "$header" ] && ok || bad "$csv header: $(head -1 "$csv")"
  # every row: 10 fields, this wire, p = 2, verified
  awk -F, -v t="$wire" 'NR > 1 && (NF != 10 || $1 != t || $2 != 2 || $10 != "true")' \
    "$csv" | grep -q . && bad "$csv has unverified or malformed rows" || ok
  # 3 sizes: reduce has auto, the baseline, binomial; allreduce those and ring
  local want="allreduce auto 3|allreduce binomial 3|allreduce $base 3|allreduce ring 3|"
  want+="reduce auto 3|reduce binomial 3|reduce $base 3"
  local got
  got=$(awk -F, 'NR > 1 {n[$3 " " $6]++} END {for (k in n) print k, n[k]}' "$csv" | LC_ALL=C sort |
        paste -sd'|')
  [ "$got" = "$want" ] && ok || bad "$csv series: $got (want $want)"
  # predictions for treduce's series, none for the baseline
  awk -F, -v b="$base" 'NR > 1 && (($6 == b) != ($9 == ""))' "$csv" | grep -q . \
    && bad "$csv: predicted_us missing or set on the baseline" || ok
  [ "$(awk 'END {print NR}' "$dir/ratios.csv")" -eq 7 ] && ok || bad "$dir/ratios.csv rows"
  # auto's choice and the model's own first (--tune 4 by default: they may differ)
  awk -F, 'NR == 1 && ($1 != "wire" || $11 != "model_algo") ||
            NR > 1 && (NF != 11 || $6 == "" || $11 == "")' \
    "$dir/ratios.csv" | grep -q . && bad "$dir/ratios.csv: auto_algo or model_algo" || ok
  for f in time-reduce-sum.png time-allreduce-sum.png ratio-sum.png; do
    [ -s "$dir/$f" ] && ok || bad "$dir/$f missing"
  done
}

# --- threads --------------------------------------------------------------
expect 0 'median relative prediction error' -- \
  "$tool" bench -p 2 --sizes 64K,8,1K --algos binomial,ring --iters 3 --out "$out/thr"
check_csv "$out/thr" threads bound

timeout 60 "$tool" bench -p 2 --sizes 8,1K --kinds allreduce --algos ring --iters 2 \
  --format json --out "$out/json" >"$out/bench.json" || bad "bench --format json failed"
jcheck '.wire == "threads" and .transport == "threads" and .p == 2 and .baseline == "bound"
        and (.points | length) == 6 and all(.points[]; .verified)
        and ([.points[] | select(.algo == "auto") | .chosen | type] | unique) == ["string"]
        and (.ratios | length) == 2 and (.median_prediction_error | type) == "number"
        and ([.ratios[] | .model_algo | type] | unique) == ["string"]
        and (.profiles.sum.ns_per_byte | type) == "number"' "$out/bench.json"

# the grid report: with the model's first choice among the algorithms timed
# (at p = 2 every exchange algorithm and a tree's two rounds tie or lose
# to recursive doubling's one round; ties go by name), its time over the
# best's is at least 1
timeout 60 "$tool" bench -p 2 --sizes 8 --kinds allreduce --iters 2 --tune 0 \
  --algos binomial,flat,recursive-doubling,ring,rabenseifner \
  --format json --out "$out/grid" >"$out/grid.json" || bad "bench grid failed"
jcheck '(.grid | length) == 1 and .first_over_best.points == 1
        and all(.grid[]; (.first_over_best | type) == "number" and .first_over_best >= 1
                and (.best_algo | type) == "string" and (.first_algo | type) == "string")
        and (.profiles.sum.stream_GBps | length) >= 1' "$out/grid.json"

# a costly operator: checked too, no memory bound for it
expect 0 'reduce of costly' -- "$tool" bench -p 3 --ops costly --op-cost 20 --sizes 8 \
  --kinds reduce --algos binomial,tree-dyn --iters 2 --out "$out/costly"
awk -F, 'NR > 1 && ($10 != "true" || $6 == "bound")' "$out/costly/bench.csv" | grep -q . \
  && bad "costly: unverified rows or a bound" || ok

# --kinds: the other collectives, each timed with the algorithms that run
# it (binomial runs none of them), auto and the baseline, every rank's
# result checked (a reduce-scatter's size is its part)
# check_kinds DIR JSON BASE: the series and files of a run of sizes 8,1K
# over those kinds and algorithms
check_kinds() {
  local dir=$1 json=$2 base=$3
  jcheck '(.points | length) == 22 and all(.points[]; .verified)
          and ([.points[] | "\(.kind) \(.algo)"] | unique) ==
              (["exscan", "scan"] | map(. + " " + ("auto", "'"$base"'", "scan-binomial",
                                                   "scan-chain"))
               + ["reduce-scatter auto", "reduce-scatter '"$base"'",
                  "reduce-scatter reduce-scatter-pairwise"] | sort)
          and all(.points[] | select(.algo == "auto"); .chosen | test("^(scan|reduce-scatter)-"))
          and ([.points[] | .bytes] | unique) == [8, 1024]' "$json"
  for f in time-reduce-scatter-sum.png time-scan-sum.png time-exscan-sum.png ratio-sum.png; do
    [ -s "$dir/$f" ] && ok || bad "$dir/$f missing"
  done
}
# (--tune=0: Open MPI's mpirun takes a bare --tune N as its own option)
kinds=(--sizes 8,1K --kinds reduce-scatter,scan,exscan --iters 2 --tune=0
       --algos binomial,reduce-scatter-pairwise,scan-chain,scan-binomial --format json)
timeout 60 "$tool" bench -p 3 "${kinds[@]}" --out "$out/kinds" >"$out/kinds.json" ||
  bad "bench --kinds reduce-scatter,scan,exscan failed"
check_kinds "$out/kinds" "$out/kinds.json" bound

# --- bad input: exit 2, naming the bad value --------------------------------
expect 2 "unknown operator 'prod'" -- "$tool" bench --ops sum,prod
expect 2 "invalid size '12'" -- "$tool" bench --sizes 8,12
expect 2 "invalid size '1X'" -- "$tool" bench --sizes 1X
expect 2 'invalid --iters 0' -- "$tool" bench --iters 0
expect 2 'invalid --tune 9' -- "$tool" bench --tune 9
expect 2 "unknown algorithm 'nope'" -- "$tool" bench --algos binomial,nope
expect 2 "invalid --kinds: unknown collective 'gather': need reduce, allreduce, reduce-scatter, scan or exscan" \
  -- "$tool" bench --kinds scan,gather
expect 2 "unknown wire 'tcp'" -- "$tool" bench --transport tcp
expect 0 'usage: treduce bench' -- "$tool" bench --help

# --- MPI: np 2, MPI's own collectives as the baseline ------------------------
# run_mpi.sh sets what Open MPI needs as root, --oversubscribe, a private
# TMPDIR and, under ASan, the suppressions of MPI's own leaks.
launch=("$(dirname "$0")/mpi/run_mpi.sh" mpirun 2)
if command -v mpirun >/dev/null && ldd "$tool" | grep -q 'libmpi'; then
  expect 0 'ranks, baseline ' -- "${launch[@]}" "$tool" bench --transport mpi \
    --sizes 8,1K,64K --algos binomial,ring --iters 3 --out "$out/mpi"
  check_csv "$out/mpi" mpi mpi
  expect 2 "invalid --iters 0" -- "${launch[@]}" "$tool" bench --transport mpi --iters 0
  # MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan as the baselines
  "${launch[@]}" "$tool" bench --wire mpi "${kinds[@]}" --out "$out/mpi-kinds" \
    >"$out/mpi-kinds.json" || bad "bench --wire mpi --kinds reduce-scatter,scan,exscan failed"
  check_kinds "$out/mpi-kinds" "$out/mpi-kinds.json" mpi
else
  echo "cli_bench: MPI part skipped (no mpirun or no MPI in this build)"
fi

echo "cli_bench: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
