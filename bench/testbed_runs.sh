#!/usr/bin/env bash
# testbed_runs.sh: real runs across an emulated cluster (docs/TESTBED.md,
# docs/BENCHMARKS.md "Testbed"), as root:
#   1. a testbed of PLATFORM (default bench/platforms/testbed-8.json: 8 hosts
#      on two switches, links of 20 to 200 Mbit/s), one rank per host;
#   2. calibrate --matrix: every ordered pair's bandwidth next to the rate
#      of its route's bottleneck (the ratio), and the cost files of each
#      message size (d[i][j] = latency + bytes / bandwidth, c[i] = combine);
#   3. a single reduce of SIZES_MIB MiB of doubles (sum, verified) by each of
#      ALGOS, one segment (as the simulator models it), ITERS timed runs,
#      the median measured next to `treduce simulate --costs` with the
#      calibrated matrix (one run, constant costs, one-port full duplex);
#      greedy is planned with the mean of the matrix (--d, --c);
#      HETERO_ALGOS (the heterogeneous planners) get the matrix itself
#      (--costs FILE) instead;
#   4. the series of reduces (steady --run --wire mpi, one rank per
#      node) on PLATFORM and on Figure 6's platform: operations per second
#      next to the LP's TP with the testbed's units.
# usage: bench/testbed_runs.sh [OUTDIR]              (default build/testbed-runs)
# environment: TREDUCE (build/treduce), PLATFORM, TARGET (the series'
# target, H0), SIZES_MIB ("1 4"), ALGOS ("binomial greedy tree-dyn
# hetero-greedy hetero-exact"), HETERO_ALGOS ("hetero-greedy hetero-exact"),
# ITERS (3), SERIES_OPS (400), FIG6_OPS (400),
# UNIT_BYTES / TIME_UNIT (50000 / 0.05: the rates of a unit of 1 MB per
# second, the series 20x faster than with a time unit of 1 s), MPIRUN.
set -euo pipefail
tool=$(realpath "${TREDUCE:-build/treduce}")
out=${1:-build/testbed-runs}
here=$(cd "$(dirname "$0")" && pwd)
platform=$(realpath "${PLATFORM:-$here/platforms/testbed-8.json}")
fig6=$here/../tests/data/steady/fig6-reduce.json
target=${TARGET:-H0}
sizes=${SIZES_MIB:-1 4}
algos=${ALGOS:-binomial greedy tree-dyn hetero-greedy hetero-exact}
hetero=" ${HETERO_ALGOS-hetero-greedy hetero-exact} "
iters=${ITERS:-3}
unit=${UNIT_BYTES:-50000}
time_unit=${TIME_UNIT:-0.05}
name=bench$$
mpirun=(${MPIRUN:+--mpirun "$MPIRUN"})
mkdir -p "$out"
trap '"$tool" testbed down --name "$name" >/dev/null 2>&1 || true' EXIT
run() { "$tool" testbed run --name "$name" "${mpirun[@]}" "$@"; }

echo "# treduce testbed runs, $(date -u +%F), $(nproc) cores, $(uname -r)"
"$tool" testbed up -p "$platform" --name "$name" --unit-bytes "$unit" --time-unit "$time_unit"
"$tool" testbed show --name "$name" --format json >"$out/show.json"
hosts=$(jq '.hosts' "$out/show.json")

# --- 2. calibration ---------------------------------------------------------------
run -- "$tool" calibrate --matrix --wire mpi --format json >"$out/matrix.json"
echo
echo "## calibrated / configured bandwidth (route bottleneck), every ordered pair"
jq -r -s '.[0] as $s | .[1] as $m
  | [range($m.p) as $i | range($m.p) as $j | select($i != $j)
     | ($s.routes[] | select(.from == $m.nodes[$i] and .to == $m.nodes[$j]) | .rate_bps)
       as $want
     | {pair: "\($m.nodes[$i])>\($m.nodes[$j])", want: ($want / 1e6),
        got: ($m.bandwidth_Bps[$i][$j] * 8 / 1e6), ratio: ($m.bandwidth_Bps[$i][$j] * 8 / $want)}]
  | (map(.ratio) | sort) as $r
  | "pairs \(length), ratio min \($r[0] * 1000 | round / 1000), median \($r[length / 2 | floor] * 1000 | round / 1000), max \($r[-1] * 1000 | round / 1000)",
    (.[] | "  \(.pair) \(.want) Mbit/s configured, \(.got * 10 | round / 10) measured, ratio \(.ratio * 1000 | round / 1000)")' \
  "$out/show.json" "$out/matrix.json" | tee "$out/ratios.txt" | head -1
echo "(every pair: $out/ratios.txt)"

# costs BYTES FILE: the cost file of a message of BYTES from the matrix; prints
# "MEAN_D MEAN_C" (the means over i != j and over i).
costs() {
  jq -r --argjson b "$1" '. as $m | [range($m.p) as $i | [range($m.p) as $j
      | if $i == $j then 0 else $m.latency_s[$i][$j] + $b / $m.bandwidth_Bps[$i][$j] end]] as $d
    | [range($m.p) as $i | $m.combine_fixed_s[$i] + ($b / 8) * $m.combine_seconds_per_element[$i]] as $c
    | "n \($m.p)", ($d[] | map(tostring) | join(" ")), ($c | map(tostring) | join(" "))' \
    "$out/matrix.json" >"$2"
  jq -r --argjson b "$1" '. as $m | ([range($m.p) as $i | range($m.p) as $j | select($i != $j)
      | $m.latency_s[$i][$j] + $b / $m.bandwidth_Bps[$i][$j]] | add / length) as $md
    | ([range($m.p) as $i | $m.combine_fixed_s[$i] + ($b / 8) * $m.combine_seconds_per_element[$i]]
       | add / length) as $mc | "\($md) \($mc)"' "$out/matrix.json"
}

# --- 3. single reduces --------------------------------------------------------------
echo
echo "## reduce of doubles (sum) to H0, $hosts ranks, one segment; seconds"
echo "| MiB | algorithm | predicted | measured (median of $iters) | measured / predicted | verified |"
echo "|---:|---|---:|---:|---:|---|"
errors=()
for mib in $sizes; do
  bytes=$((mib * 1048576))
  read -r md mc < <(costs "$bytes" "$out/costs-${mib}MiB.txt")
  for algo in $algos; do
    model=(--d "$md" --c "$mc")
    [[ $hetero == *" $algo "* ]] && model=(--costs "$out/costs-${mib}MiB.txt")
    pred=$("$tool" simulate --algo "$algo" -n "$hosts" --costs "$out/costs-${mib}MiB.txt" \
      --mean-d "$md" --mean-c "$mc" --port full --runs 1 --format json | jq '.mean')
    run -- "$tool" run --wire mpi --algo "$algo" --count $((bytes / 8)) --op sum \
      --segment "$bytes" "${model[@]}" --iters "$iters" --timeout 120 \
      --format json >"$out/run-$algo-${mib}MiB.json"
    meas=$(jq '.median_us / 1e6' "$out/run-$algo-${mib}MiB.json")
    ok=$(jq '.verified' "$out/run-$algo-${mib}MiB.json")
    ratio=$(jq -n "$meas / $pred")
    errors+=("$(jq -n "($ratio - 1) | fabs")")
    printf '| %s | %s | %.3f | %.3f | %.3f | %s |\n' "$mib" "$algo" "$pred" "$meas" "$ratio" "$ok"
  done
done
printf '%s\n' "${errors[@]}" | sort -g | awk '{v[NR] = $1} END {
  printf "median |measured / predicted - 1| over %d runs: %.3f\n", NR, v[int((NR + 1) / 2)]}'

# --- 4. series of reduces -------------------------------------------------------------
series() { # LABEL PLATFORM TARGET OPS
  run --all-nodes -- "$tool" steady --problem reduce -p "$2" --target "$3" --run "$4" \
    --wire mpi --format json >"$out/series-$1.json"
  jq -r --arg l "$1" '"| \($l) | \(.throughput) | \(.run.ops) | \(.run.bytes_per_op) | \(.run.tp_ops_per_second * 100 | round / 100) | \(.run.ops_per_second * 100 | round / 100) | \(.run.ratio_to_tp * 1000 | round / 1000) | \(.run.verified) |"' \
    "$out/series-$1.json"
}
echo
echo "## series of reduces (steady --run --wire mpi, one rank per node)"
echo "| platform | TP per time unit | operations | bytes each | TP per second | measured per second | measured / TP | verified |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
series "$(basename "$platform" .json)" "$platform" "$target" "${SERIES_OPS:-400}"
"$tool" testbed down --name "$name" >/dev/null
"$tool" testbed up -p "$fig6" --name "$name" --unit-bytes 250000 --time-unit 0.05 >/dev/null
series fig6 "$fig6" P0 "${FIG6_OPS:-400}"
