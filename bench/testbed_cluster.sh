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
# LAYER_ALGOS (none), BASE_CONFIGS ("tuned han adapt layer"), BENCH_REPS
# (bench_mpi_layer --reps N after its 3 warm-ups; default: --seconds 0.5).
# treduce's own runs (RUN_CONFIGS, default none; allreduce only): each
# NAME of RUN_CONFIGS is `treduce run --wire mpi --algo ALGO` across the
# hosts, one launch per size, ITERS timed calls (3) after one warm-up;
# NAME is ALGO (the cost model measured by the run) or ALGO+costs (the run
# given `--costs FILE`: the matrix that `treduce calibrate --matrix`
# measured on this testbed's ranks, cached in MATRIX_CACHE (default
# /tmp/treduce-tb-matrix) per platform file's content, made into the cost
# file of each size as bench/testbed_runs.sh does; with --explain).  The
# report adds each one's prediction (the run's predicted_us, median over
# launches), the algorithm auto chose, and the satellite's bound: n bytes
# over the slowest host link (what node-ring's satellites send each way).
# A suffix :mN (node-ring+costs:m16) cuts the buffer into N segments
# (--segment BYTES/N; skipped at a size where the default, 1 MiB segments,
# gives N already; "-" in the report).
# E.g. node-ring with and without satellites against Open MPI:
#   SIZES=1048576,16777216 KINDS=allreduce BASE_CONFIGS="tuned han adapt" \
#   RUN_CONFIGS="node-ring node-ring+costs auto+costs" bench/testbed_cluster.sh DIR
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
base_configs=(${BASE_CONFIGS:-tuned han adapt layer})
run_configs=(${RUN_CONFIGS:-})
iters=${ITERS:-3}
cache=${MATRIX_CACHE:-/tmp/treduce-tb-matrix}
bench_len=(--seconds 0.5)
[[ -n ${BENCH_REPS:-} ]] && bench_len=(--reps "$BENCH_REPS")
configs=("${base_configs[@]}" "${layer_algos[@]}" "${run_configs[@]}")
mkdir -p "$out"
raw=$out/raw.txt pred=$out/pred.txt
if [[ -z ${REPORT_ONLY:-} ]]; then # REPORT_ONLY=1: the report of OUTDIR's figures again
  : >"$raw"
  : >"$pred"
fi
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
    --sizes "$sizes" "${bench_len[@]}"
}

# matrix PLATFORM BASE: the calibrated matrix of this testbed's ranks (JSON),
# measured once per platform file's content and kept in the cache
matrix() {
  local f
  f=$cache/$2-$(sha256sum "$1" | cut -c1-12).matrix.json
  if ! jq -e '.treduce_pairs' "$f" >/dev/null 2>&1; then
    mkdir -p "$cache"
    echo "== $2 calibrate --matrix (cached in $f)" >&2
    "$tool" testbed run --name "$name" "${mpirun[@]}" -- "$tool" calibrate --matrix --wire mpi \
      --format json >"$f.tmp"
    mv "$f.tmp" "$f"
  fi
  cp "$f" "$out/$2.matrix.json"
}

# costs MATRIX BYTES FILE: the cost file of a message of BYTES (d[i][j] =
# latency + BYTES / bandwidth, c[i] = one combine of BYTES of doubles)
costs() {
  jq -r --argjson b "$2" '. as $m | [range($m.p) as $i | [range($m.p) as $j
      | if $i == $j then 0 else $m.latency_s[$i][$j] + $b / $m.bandwidth_Bps[$i][$j] end]] as $d
    | [range($m.p) as $i | $m.combine_fixed_s[$i] + ($b / 8) * $m.combine_seconds_per_element[$i]] as $c
    | "n \($m.p)", ($d[] | map(tostring) | join(" ")), ($c | map(tostring) | join(" "))' \
    "$1" >"$3"
}

# run_launch CONFIG BASE RUN: "BYTES US" per size, one `treduce run` launch
# each; the prediction, the result's check and auto's choice go to pred.txt
run_launch() {
  local algo=${1%%[+:]*} b model js m dm
  for b in ${sizes//,/ }; do
    model=()
    [[ $1 == *+costs* ]] && model=(--costs "$out/$2.costs-$b.txt" --explain)
    if [[ $1 == *:m* ]]; then
      m=${1##*:m}
      # the default already cuts b into m segments (1 MiB each, 64 at most): skip
      dm=$(((b + 1048575) / 1048576))
      ((dm > 64)) && dm=64
      ((dm == m)) && continue
      model+=(--segment $(((b + m - 1) / m)))
    fi
    js=$out/run-$2-$1-$b-r$3.json
    if ! "$tool" testbed run --name "$name" "${mpirun[@]}" -- "$tool" run --wire mpi \
      --algo "$algo" --kind allreduce --count $((b / 8)) --op sum --iters "$iters" --warmup 1 \
      --timeout 600 "${model[@]}" --format json >"$js"; then
      echo "treduce run $1 at $b bytes failed (exit status above; output: $js)" >&2
      return 1
    fi
    jq -r --arg p "$2" --arg c "$1" --arg r "$3" '"\($p) allreduce \($c) \($r) \(.bytes) \(.predicted_us) \(.verified) \(.algo)"' \
      "$js" >>"$pred"
    jq -e '.verified' "$js" >/dev/null || { echo "treduce run $1 at $b bytes: not verified ($js)" >&2; return 1; }
    jq -r '"\(.bytes) \(.median_us)"' "$js"
  done
}

echo "# treduce testbed clusters, $(date -u +%F), $(nproc) cores, $(uname -r)"
for pf in $platforms; do
  [[ -n ${REPORT_ONLY:-} ]] && break
  base=$(basename "$pf" .json)
  "$tool" testbed up -p "$pf" --name "$name" >/dev/null
  "$tool" testbed show --name "$name" --format json >"$out/$base.show.json"
  if [[ " ${run_configs[*]} " == *+costs* ]]; then
    matrix "$pf" "$base"
    for b in ${sizes//,/ }; do costs "$out/$base.matrix.json" "$b" "$out/$base.costs-$b.txt"; done
  fi
  for ((run = 1; run <= reps; run++)); do
    for kind in $kinds; do
      for ((k = 0; k < ${#configs[@]}; k++)); do
        c=${configs[(k + run) % ${#configs[@]}]}
        [[ " ${run_configs[*]} " == *" $c "* && $kind != allreduce ]] && continue
        echo "== $base $kind $c run $run ($(date +%T), load $(cut -d' ' -f1 /proc/loadavg))" >&2
        if [[ " ${run_configs[*]} " == *" $c "* ]]; then
          run_launch "$c" "$base" "$run"
        else
          launch "$c" "$kind"
        fi | awk -v p="$base" -v k="$kind" -v c="$c" -v r="$run" \
          'NF == 2 {print p, k, c, r, $1, $2}' >>"$raw"
      done
    done
  done
  "$tool" testbed down --name "$name" >/dev/null
done

# the report: medians, the best of Open MPI's, the bound
head="| platform | call | bytes |" rule="|---|---|---:|"
for c in "${configs[@]}"; do head="$head $c (ms) |" rule="$rule---:|"; done
ratio_configs=()
[[ " ${base_configs[*]} " == *" layer "* ]] && ratio_configs=(layer)
ratio_configs+=("${layer_algos[@]}" "${run_configs[@]}")
for c in "${ratio_configs[@]}"; do head="$head $c / best |" rule="$rule---:|"; done
for c in "${run_configs[@]}"; do head="$head $c predicted (ms) |" rule="$rule---:|"; done
if [[ ${#run_configs[@]} -gt 0 ]]; then head="$head satellite bound (ms) |" rule="$rule---:|"; fi
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
        line="$line | $(awk -v v="${med[$c]}" 'BEGIN {if (v == "nan") printf "-"; else printf "%.2f", v / 1000}')"
      done
      best=$(for c in tuned han adapt; do if [[ -n ${med[$c]:-} ]]; then echo "${med[$c]}"; fi; done |
        sort -g | head -1)
      bound=$(awk -v b="$b" -v h="$hosts" -v r="$rate" -v k="$kind" \
        'BEGIN {if (k == "allreduce") printf "%.2f", 2 * (h - 1) / h * b * 8 / r * 1000; else printf "-"}')
      for c in "${ratio_configs[@]}"; do
        line="$line | $(awk -v l="${med[$c]}" -v o="$best" 'BEGIN {if (l == "nan") printf "-"; else printf "%.3f", l / o}')"
      done
      for c in "${run_configs[@]}"; do
        p=$(awk -v p="$base" -v k="$kind" -v c="$c" -v b="$b" \
          '$1 == p && $2 == k && $3 == c && $5 == b {print $6}' "$pred" | sort -g |
          awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "nan"}')
        chose=$(awk -v p="$base" -v c="$c" -v b="$b" '$1 == p && $3 == c && $5 == b {print $8}' "$pred" |
          sort | uniq -c | awk '{printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1}')
        [[ $c == auto* ]] || chose=""
        line="$line | $(awk -v v="$p" 'BEGIN {if (v == "nan") printf "-"; else printf "%.2f", v / 1000}')${chose:+ ($chose)}"
      done
      if [[ ${#run_configs[@]} -gt 0 ]]; then
        line="$line | $(awk -v b="$b" -v r="$rate" 'BEGIN {printf "%.2f", b * 8 / r * 1000}')"
      fi
      echo "$line | $bound |"
      unset med
    done
  done
done
