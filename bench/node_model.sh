#!/bin/bash
# node_model.sh: the figures of docs/BENCHMARKS.md ("Model accuracy and
# the node model"): for each wire and rank count, one `treduce bench` over
# the grid 8 B, 64 KiB, 1 MiB, 16 MiB x reduce, allreduce, then per run the
# median prediction error |predicted - measured| / measured and the model's
# first choice over the best measured algorithm (median, worst, points
# within 1.1x), and the calibrated bandwidth curve with its time.
#
#   bash bench/node_model.sh DIR                  # this 2-core VM: p 2 4 8
#   NPS="2 4 8 16" bash bench/node_model.sh DIR   # a 16-core machine
#
# TREDUCE (build/treduce), NPS ("2 4 8"), WIRES ("threads mpi"),
# SIZES (8,64K,1M,16M), MPIRUN_FLAGS (--oversubscribe; on a machine with a
# core per rank: --use-hwthread-cpus --bind-to hwthread).
set -euo pipefail
dir=${1:?usage: node_model.sh DIR}
tool=${TREDUCE:-build/treduce}
nps=${NPS:-2 4 8}
wires=${WIRES:-threads mpi}
sizes=${SIZES:-8,64K,1M,16M}
mpirun_flags=${MPIRUN_FLAGS:---oversubscribe}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$dir"
for t in $wires; do
  for p in $nps; do
    name="$t$p"
    if [ "$t" = mpi ]; then
      # shellcheck disable=SC2086
      mpirun $mpirun_flags -np "$p" "$tool" bench --wire mpi --sizes "$sizes" \
        --format json --out "$dir/$name" >"$dir/$name.json" 2>"$dir/$name.err"
    else
      "$tool" bench --wire threads -p "$p" --sizes "$sizes" \
        --format json --out "$dir/$name" >"$dir/$name.json" 2>"$dir/$name.err"
    fi
  done
done
for p in $nps; do
  start=$(date +%s.%N)
  "$tool" calibrate -p "$p" --format json >"$dir/calibrate$p.json"
  end=$(date +%s.%N)
  echo "calibrate -p $p: $(awk "BEGIN { print $end - $start }") s, stream GB/s: $(jq -c \
    '[.stream_bandwidth_Bps[] / 1e9 | . * 10 | round / 10]' "$dir/calibrate$p.json")"
done | tee "$dir/calibrate.txt"
for f in "$dir"/*[0-9].json; do
  case "$f" in */calibrate*) continue ;; esac
  jq -r --arg f "$(basename "$f" .json)" \
    '"\($f): prediction error \(.median_prediction_error * 1000 | round / 10) %, first/best median \(.first_over_best.median * 100 | round / 100), worst \(.first_over_best.worst * 100 | round / 100), within 1.1x at \(.first_over_best.within_1_1) of \(.first_over_best.points)"' "$f"
done | tee "$dir/summary.txt"
