#!/usr/bin/env bash
# testbed_requests.sh [OUTDIR]: on an emulated cluster where the network,
# not this machine's cores, is the bottleneck (docs/TESTBED.md,
# docs/BENCHMARKS.md "Testbed: clusters of multi-core hosts; overlap,
# reduce-scatter"), as root:
#   overlap   bench_requests overlap (a started allreduce while every rank
#             computes without any call, treduce's trd_iallreduce and the
#             MPI library's MPI_Iallreduce) at each size of OVERLAP_SIZES,
#             at MPI_THREAD_MULTIPLE (treduce's progress thread) and, for
#             the first size, at MPI_Init (no progress thread);
#   rs        treduce bench --kinds reduce-scatter (every algorithm, auto,
#             MPI_Reduce_scatter_block) with parts of RS_PART bytes (each
#             rank's input: P parts), next to the links' bound: each rank
#             sends (P - 1) / P of its input over its host's link.
# One rank per host (--placement round-robin on PLATFORM, default
# bench/platforms/cluster-4x2.json: 4 hosts, 100 Mbit/s links), the parts
# alternated launch by launch, REPS runs each.  Writes OUTDIR/raw.txt (the
# programs' lines), OUTDIR/rs-runK/ (treduce bench's files) and prints the
# medians.  Open MPI's han and adapt implement neither MPI_Reduce_scatter_block
# nor MPI_Iallreduce in 4.1 (their modules' function tables), so the MPI
# library's figures are its default selection (tuned, libnbc).
# environment: TREDUCE (build/treduce), BENCH (build/bench/bench_requests),
# PLATFORM, NP (4), OVERLAP_SIZES ("1M 8M"), ROUNDS (7), ALGO (the overlap's
# allreduce: rabenseifner, bandwidth-optimal), RS_PART (4194304),
# REPS (3), PARTS ("overlap rs"), MPIRUN.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$(realpath "${TREDUCE:-build/treduce}")
bench=$(realpath "${BENCH:-build/bench/bench_requests}")
platform=$(realpath "${PLATFORM:-$here/platforms/cluster-4x2.json}")
np=${NP:-4}
read -ra sizes <<<"${OVERLAP_SIZES:-1M 8M}"
rounds=${ROUNDS:-7}
algo=${ALGO:-rabenseifner}
part=${RS_PART:-4194304}
reps=${REPS:-3}
parts=${PARTS:-overlap rs}
out=${1:-build/testbed-requests}
name=rq$$
mpirun=(${MPIRUN:+--mpirun "$MPIRUN"})
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"
trap '"$tool" testbed down --name "$name" >/dev/null 2>&1 || true' EXIT
run() { "$tool" testbed run --name "$name" --np "$np" --placement round-robin "${mpirun[@]}" -- "$@"; }

echo "# treduce testbed requests, $(date -u +%F), $(nproc) cores, $(uname -r)"
"$tool" testbed up -p "$platform" --name "$name" >/dev/null
"$tool" testbed show --name "$name" --format json >"$out/show.json"
for ((r = 1; r <= reps; r++)); do
  for p in $parts; do
    if [[ $p == overlap ]]; then
      for s in "${sizes[@]}"; do
        echo "== overlap $s multiple run $r" >&2
        run "$bench" overlap --bytes "$s" --rounds "$rounds" --algo "$algo" --thread multiple | tee -a "$raw"
      done
      echo "== overlap ${sizes[0]} single run $r" >&2
      run "$bench" overlap --bytes "${sizes[0]}" --rounds "$rounds" --algo "$algo" \
        --thread single | tee -a "$raw"
    else
      echo "== reduce-scatter run $r" >&2
      # --tune=0: auto is the model's first (tuning would add 24 calls of a
      # second each); mpirun would take a bare --tune for itself
      run "$tool" bench --wire mpi --ops sum --kinds reduce-scatter --sizes "$part" \
        --algos all --tune=0 --out "$out/rs-run$r" >"$out/rs-run$r.txt"
      awk -F, -v r="$r" 'NR > 1 {print "rs run " r, $6, $7}' "$out/rs-run$r/bench.csv" | tee -a "$raw"
    fi
  done
done
"$tool" testbed down --name "$name" >/dev/null

# the report: medians over the runs
med() { sort -g | awk '{v[NR] = $1} END {print NR ? (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) : "nan"}'; }
if [[ $parts == *overlap* ]]; then
  echo "| bytes | thread level | compute (ms) | treduce alone | with compute | overlap | MPI alone | with compute | overlap | CPU: treduce alone | MPI alone |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for s in "${sizes[@]}"; do
    for lvl in MPI_THREAD_MULTIPLE MPI_Init; do
      b=$(awk -v s="$s" 'BEGIN {u = s ~ /K$/ ? 1024 : s ~ /M$/ ? 1048576 : 1; print int(s) * u}')
      # sel RE: the median of RE's number (its group) over the runs' lines
      sel() { grep "^iallreduce of $b B,.* $lvl," "$raw" | sed -E "s/.*$1.*/\\1/" | med; }
      [[ -n $(grep "^iallreduce of $b B,.* $lvl," "$raw" || true) ]] || continue
      n='([-0-9.]+)'
      echo "| $b | $lvl | $(sel "compute: compute $n") | $(sel "treduce alone $n") |" \
        "$(sel "treduce alone [0-9.]+ ms, with compute $n") | $(sel "ms, overlap $n; MPI") |" \
        "$(sel "MPI alone $n") | $(sel "MPI alone [0-9.]+ ms, with compute $n") |" \
        "$(sel "MPI alone .*overlap $n; CPU") | $(sel "alone: treduce $n") |" \
        "$(sel "alone: treduce [0-9.]+ ms, MPI $n") |"
    done
  done
fi
if [[ $parts == *rs* ]]; then
  rate=$(jq '[.links[] | select(.from != "S") | .rate_bps] | min' "$out/show.json")
  bound=$(awk -v b="$part" -v p="$np" -v r="$rate" 'BEGIN {printf "%.1f", (p - 1) / p * p * b * 8 / r * 1e3}')
  echo "reduce-scatter, parts of $part B (inputs of $((np * part)) B), bound $bound ms:"
  for a in $(awk '$1 == "rs" {print $4}' "$raw" | sort -u); do
    m=$(awk -v a="$a" '$1 == "rs" && $4 == a {print $5}' "$raw" | med)
    echo "  $a $(awk -v m="$m" -v b="$bound" 'BEGIN {printf "%.1f ms, bound / time %.3f", m / 1e3, b / (m / 1e3)}')"
  done
fi
