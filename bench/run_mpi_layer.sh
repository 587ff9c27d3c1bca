#!/usr/bin/env bash
# run_mpi_layer.sh [BUILD [OUTDIR]]: the MPI layer's benchmark
# (docs/BENCHMARKS.md, "libtreduce_mpi.so"): bench_mpi_layer, a plain MPI
# program, run without the layer and with LD_PRELOAD=libtreduce_mpi.so
# (default `auto`), the two alternated run by run (odd runs plain first,
# even runs layer first), REPS runs each (default 5):
#   sum     MPI_Reduce and MPI_Allreduce of doubles, 8 B to 16 MiB, on NPS;
#   costly  MPI_Reduce of 8 B with a commutative user operator sleeping
#           200 us per call (MPI_Op_create), on NPS.
# Every layer run must show, in its TREDUCE_MPI_STATS line, that the layer
# ran every call.  Writes OUTDIR/raw.txt (np kind op mode run bytes us) and
# OUTDIR/ratios.md: per point the median of the runs' medians for each
# mode and their ratio layer / plain.  Open MPI only (MPICH busy-polls).
# environment: NPS ("2 4 8"), REPS (5), PARTS ("sum costly"), MPIRUN (mpirun)
set -euo pipefail
build=${1:-build}
out=${2:-$build/bench-mpi-layer}
nps=${NPS:-2 4 8}
reps=${REPS:-5}
parts=${PARTS:-sum costly}
mpirun=${MPIRUN:-mpirun}
bench=$build/bench/bench_mpi_layer
lib=$(cd "$build/mpi_layer" && pwd)/libtreduce_mpi.so
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"

# one NP MODE KIND OP RUN ARGS...: one launch, its medians appended to raw.txt.
one() {
  local np=$1 mode=$2 kind=$3 op=$4 run=$5 env=() text
  shift 5
  [ "$mode" = layer ] && env=(-x "LD_PRELOAD=$lib" -x TREDUCE_MPI_STATS=1)
  echo "== np $np $kind $op $mode run $run" >&2
  text=$("$mpirun" --oversubscribe -np "$np" "${env[@]}" "$bench" --kind "$kind" --op "$op" \
    "$@" 2>"$out/stderr.txt")
  if [ "$mode" = layer ] && ! grep -qE "MPI_(All)?[Rr]educe handled=[1-9][0-9]* passed=0$" \
    "$out/stderr.txt"; then
    echo "the layer did not run every call: $(cat "$out/stderr.txt")" >&2
    exit 1
  fi
  awk -v p="$np" -v k="$kind" -v o="$op" -v m="$mode" -v r="$run" \
    '{print p, k, o, m, r, $1, $2}' <<<"$text" >>"$raw"
}

for np in $nps; do
  for run in $(seq 1 "$reps"); do
    modes="plain layer"
    [ $((run % 2)) -eq 0 ] && modes="layer plain"
    for mode in $modes; do
      if [[ " $parts " == *" sum "* ]]; then
        one "$np" "$mode" reduce sum "$run"
        one "$np" "$mode" allreduce sum "$run"
      fi
      if [[ " $parts " == *" costly "* ]]; then
        one "$np" "$mode" reduce costly "$run" --sizes 8 --cost-us 200 --seconds 0.5
      fi
    done
  done
done

# Median over the runs per (np, kind, op, bytes, mode), then the ratio.
sort -k1,1n -k2,2 -k3,3 -k6,6n "$raw" | awk '
  function median(s,   n, a, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $1 " " $2 " " $3 " " $6; v[key, $4] = v[key, $4] " " $7
    if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
  END {
    print "| np | call | op | bytes | plain (us) | layer (us) | layer / plain |"
    print "|---:|---|---|---:|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
      split(order[i], k, " "); pl = median(v[order[i], "plain"]); ly = median(v[order[i], "layer"])
      printf "| %s | %s | %s | %s | %.1f | %.1f | %.3f |\n", k[1], k[2], k[3], k[4], pl, ly, ly / pl
    }
  }' >"$out/ratios.md"
cat "$out/ratios.md"
