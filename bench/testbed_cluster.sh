#!/usr/bin/env bash
# testbed_cluster.sh [OUTDIR]: an unmodified MPI program on emulated
# clusters of multi-core hosts (docs/TESTBED.md, docs/BENCHMARKS.md
# "Testbed: clusters of multi-core hosts"), as root.  For each platform
# of PLATFORMS (default bench/platforms/cluster-4x2.json: 4 hosts of 2
# cores on one switch, 100 Mbit/s links; and cluster-4x2-slow.json: the
# same with one host's link 4x slower) a testbed with two ranks per host
# (block placement) runs bench_mpi_layer (MPI_Reduce or MPI_Allreduce of
# doubles, sum, its result checked) under
#   tuned   Open MPI's default selection,
#   han     OMPI_MCA_coll_han_priority=100 (hierarchical: within a host,
#           then across hosts),
#   adapt   OMPI_MCA_coll_adapt_priority=100 (event-driven trees),
#   layer   LD_PRELOAD=libtreduce_mpi.so (treduce's `auto`),
# and, for each algorithm NAME of LAYER_ALGOS (e.g. "node-ring ring"), the
# layer running NAME (TREDUCE_MPI_ALGO=NAME: the node-aware node-ring plans
# for the hosts the layer learnt at MPI_Init),
# all alternated launch by launch (the order rotates each run), REPS
# runs each.  Writes OUTDIR/raw.txt (platform kind config run bytes us)
# and prints per point the median of each configuration, the best of
# Open MPI's three, layer / best (and each NAME / best), and the
# allreduce's link bound: every
# host sends and receives 2 (H - 1) / H n bytes over its link, at the
# slowest host link's rate.
# environment: TREDUCE (build/treduce), BENCH (build/bench/bench_mpi_layer),
# LAYER (build/mpi_layer/libtreduce_mpi.so), PLATFORMS, SIZES
# (65536,1048576,8388608), KINDS ("allreduce reduce"), REPS (3), MPIRUN,
# LAYER_ALGOS (none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$(realpath "${TREDUCE:-build/treduce}")
bench=$(realpath "${BENCH:-build/bench/bench_mpi_layer}")
layer=$(realpath "${LAYER:-build/mpi_layer/libtreduce_mpi.so}")
platforms=${PLATFORMS:-$here/platforms/cluster-4x2.json $here/platforms/cluster-4x2-slow.json}
sizes=${SIZES:-65536,1048576,8388608}
kinds=${KINDS:-allreduce reduce}
reps=${REPS:-3}
out=${1:-build/testbed-cluster}
name=cl$$
mpirun=(${MPIRUN:+--mpirun "$MPIRUN"})
layer_algos=(${LAYER_ALGOS:-})
configs=(tuned han adapt layer "${layer_algos[@]}")
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"
trap '"$tool" testbed down --name "$name" >/dev/null 2>&1 || true' EXIT

# launch CONFIG KIND: "BYTES US" per size, from one launch across the hosts
launch() {
  local env=()
  case $1 in
    han) env=(OMPI_MCA_coll_han_priority=100) ;;
    adapt) env=(OMPI_MCA_coll_adapt_priority=100) ;;
    layer) env=(LD_PRELOAD="$layer") ;;
    tuned) ;;
    *) env=(LD_PRELOAD="$layer" TREDUCE_MPI_ALGO="$1") ;;
  esac
  "$tool" testbed run --name "$name" "${mpirun[@]}" -- env "${env[@]}" "$bench" --kind "$2" \
    --sizes "$sizes" --seconds 0.5
}

echo "# treduce testbed clusters, $(date -u +%F), $(nproc) cores, $(uname -r)"
for pf in $platforms; do
  base=$(basename "$pf" .json)
  "$tool" testbed up -p "$pf" --name "$name" >/dev/null
  "$tool" testbed show --name "$name" --format json >"$out/$base.show.json"
  for ((run = 1; run <= reps; run++)); do
    for kind in $kinds; do
      for ((k = 0; k < ${#configs[@]}; k++)); do
        c=${configs[(k + run) % ${#configs[@]}]}
        echo "== $base $kind $c run $run" >&2
        launch "$c" "$kind" | awk -v p="$base" -v k="$kind" -v c="$c" -v r="$run" \
          'NF == 2 {print p, k, c, r, $1, $2}' >>"$raw"
      done
    done
  done
  "$tool" testbed down --name "$name" >/dev/null
done

# the report: medians, the best of Open MPI's, the bound
head="| platform | call | bytes |" rule="|---|---|---:|"
for c in "${configs[@]}"; do head="$head $c (ms) |" rule="$rule---:|"; done
for c in layer "${layer_algos[@]}"; do head="$head $c / best |" rule="$rule---:|"; done
echo "$head bound (ms) |"
echo "$rule---:|"
for pf in $platforms; do
  base=$(basename "$pf" .json)
  # the slowest host link (bit/s) and the hosts
  rate=$(jq '[.links[] | select(.from != "S") | .rate_bps] | min' "$out/$base.show.json")
  hosts=$(jq '.hosts' "$out/$base.show.json")
  for kind in $kinds; do
    for b in $(awk -v p="$base" -v k="$kind" '$1 == p && $2 == k {print $5}' "$raw" | sort -nu); do
      line="| $base | $kind | $b"
      declare -A med=()
      for c in "${configs[@]}"; do
        med[$c]=$(awk -v p="$base" -v k="$kind" -v c="$c" -v b="$b" \
          '$1 == p && $2 == k && $3 == c && $5 == b {print $6}' "$raw" | sort -g |
          awk '{v[NR] = $1} END {print NR ? (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) : "nan"}')
        line="$line | $(awk -v v="${med[$c]}" 'BEGIN {printf "%.2f", v / 1000}')"
      done
      best=$(printf '%s\n' "${med[tuned]}" "${med[han]}" "${med[adapt]}" | sort -g | head -1)
      bound=$(awk -v b="$b" -v h="$hosts" -v r="$rate" -v k="$kind" \
        'BEGIN {if (k == "allreduce") printf "%.2f", 2 * (h - 1) / h * b * 8 / r * 1000; else printf "-"}')
      for c in layer "${layer_algos[@]}"; do
        line="$line | $(awk -v l="${med[$c]}" -v o="$best" 'BEGIN {printf "%.3f", l / o}')"
      done
      echo "$line | $bound |"
      unset med
    done
  done
done
