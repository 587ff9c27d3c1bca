#!/usr/bin/env bash
# run_mpi_layer_comms.sh [BUILD [OUTDIR]]: what a new communicator costs
# under the MPI layer (docs/BENCHMARKS.md, "libtreduce_mpi.so:
# communicators"): bench_mpi_layer_comms, a plain MPI program, run without
# the layer and with LD_PRELOAD=libtreduce_mpi.so, alternated run by run,
# REPS runs each (default 5), on NPS (default "2 4"), for COUNTS doubles
# (default "1 8192 131072": 8 B, 64 KiB, 1 MiB), in two modes: `reuse`
# (each duplicate freed before the next is made) and `keep` (the last one
# freed only after the next is made: every duplicate sets up afresh).
# Writes OUTDIR/raw.txt and OUTDIR/comms.md: per point the median of the
# runs' medians (us) of MPI_Comm_dup, the first MPI_Allreduce on the
# duplicate, the later ones, MPI_Comm_free, and the ratios first / later
# (with the layer) and dup with / without the layer.  Open MPI only.
set -euo pipefail
build=${1:-build}
out=${2:-$build/bench-mpi-layer-comms}
nps=${NPS:-2 4}
reps=${REPS:-5}
counts=${COUNTS:-1 8192 131072}
mpirun=${MPIRUN:-mpirun}
bench=$build/bench/bench_mpi_layer_comms
lib=$(cd "$build/mpi_layer" && pwd)/libtreduce_mpi.so
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"
for np in $nps; do
  for count in $counts; do
    for how in reuse keep; do
      flag=()
      [ "$how" = keep ] && flag=(--keep-last)
      for run in $(seq 1 "$reps"); do
        modes="plain layer"
        [ $((run % 2)) -eq 0 ] && modes="layer plain"
        for mode in $modes; do
          env=()
          [ "$mode" = layer ] && env=(-x "LD_PRELOAD=$lib")
          echo "== np $np count $count $how $mode run $run" >&2
          line=$("$mpirun" --oversubscribe -np "$np" "${env[@]}" "$bench" --count "$count" \
            "${flag[@]}")
          echo "$np $count $how $mode $run $line" >>"$raw"
        done
      done
    done
  done
done
# raw: np count how mode run dup D first F later L free R
awk '
  function median(s,   n, a, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $1 " " $2 " " $3; m = $4
    d[key, m] = d[key, m] " " $7; f[key, m] = f[key, m] " " $9
    l[key, m] = l[key, m] " " $11; r[key, m] = r[key, m] " " $13
    if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
  END {
    print "| np | bytes | dups | dup plain / layer (us) | first plain / layer | later plain / layer | free plain / layer | layer: first / later | dup: layer / plain |"
    print "|---:|---:|---|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
      split(order[i], k, " "); K = order[i]
      dp = median(d[K, "plain"]); dl = median(d[K, "layer"])
      fp = median(f[K, "plain"]); fl = median(f[K, "layer"])
      lp = median(l[K, "plain"]); ll = median(l[K, "layer"])
      rp = median(r[K, "plain"]); rl = median(r[K, "layer"])
      printf "| %s | %d | %s | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.2f | %.2f |\n",
        k[1], 8 * k[2], k[3], dp, dl, fp, fl, lp, ll, rp, rl, fl / ll, dl / dp
    }
  }' "$raw" >"$out/comms.md"
cat "$out/comms.md"
