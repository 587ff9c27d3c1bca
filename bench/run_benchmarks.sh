#!/usr/bin/env bash
# run_benchmarks.sh: the target configurations of `treduce bench`, each
# run REPS times (default 3), with the median over the runs reported
# (docs/BENCHMARKS.md has the results and what they mean).  Open MPI only:
# MPICH busy-polls, which on a machine with fewer cores than ranks measures
# the scheduler rather than the library.
#
#   sum       MPI, np = 2, 4, 8: sum reduce and allreduce, 8 B to 16 MiB, every
#             algorithm, auto and MPI_Reduce / MPI_Allreduce;
#   costly    MPI, np = 8: reduce of 8 B with sleep-sum, 200 us per combine;
#   cd        MPI, np = 8: reduce at a size where the transfer time d equals the
#             combine time c: the platform's profile (treduce calibrate) gives
#             d at SIZE, and the sleep-sum's cost per call is set so that
#             c = d; greedy, fibonacci, binomial, auto and MPI_Reduce, next to
#             the ratios the model predicts;
#   threads   threads, p = 2: allreduce of 64 MiB against the memory bound.
#
# usage: bench/run_benchmarks.sh [OUTDIR]       (default build/bench-results)
# environment: TREDUCE (default build/treduce), REPS (3), PARTS ("sum costly cd
# threads"), NPS ("2 4 8"), CD_SIZE (512K), ALGOS (all), TUNE (auto's --tune;
# default: treduce bench's, 4).
set -euo pipefail
tool=${TREDUCE:-build/treduce}
out=${1:-build/bench-results}
reps=${REPS:-3}
parts=${PARTS:-sum costly cd threads}
nps=${NPS:-2 4 8}
cd_size=${CD_SIZE:-512K}
algos=${ALGOS:-all}
tune=(${TUNE:+--tune="$TUNE"}) # one word: mpirun also reads a bare --tune as its own
if [ "$(id -u)" -eq 0 ]; then # Open MPI refuses root unless told
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"

# run NAME LAUNCH... : REPS runs of one configuration into OUT/NAME/runK,
# each run's text summary in OUT/NAME/runK.txt; the exact command goes to
# OUT/NAME/command.txt.
run() {
  local name=$1
  shift
  mkdir -p "$out/$name"
  echo "$* --out $out/$name/runK" >"$out/$name/command.txt"
  for k in $(seq 1 "$reps"); do
    echo "== $name run $k: $*" >&2
    "$@" --out "$out/$name/run$k" >"$out/$name/run$k.txt"
  done
}

# launch=(the command line of an MPI bench on $1 ranks)
mpi() { launch=(mpirun --oversubscribe -np "$1" "$tool" bench --wire mpi "${tune[@]}"); }

# median of the runs, per point: ratios.csv -> OUT/NAME/ratios-median.csv
# (kind,op,bytes,ratio_median,ratio_lo,ratio_hi,auto_algos) and bench.csv ->
# OUT/NAME/bench-median.csv (kind,op,bytes,algo,median_us,predicted_us,
# verified_all): each a median of the runs' medians.
aggregate() {
  local dir=$out/$1
  awk -F, -f - "$dir"/run*/ratios.csv >"$dir/ratios-median.csv" <<'AWK'
function med(s,    v, n, i, j, x) {
  n = split(s, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
    x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
  }
  lo = v[1]; hi = v[n]
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
FNR == 1 { next }
{ k = $3 "," $4 "," $5; if (!(k in r)) order[++n] = k; r[k] = r[k] " " $10
  if (index("/" a[k] "/", "/" $6 "/") == 0) a[k] = a[k] (a[k] == "" ? "" : "/") $6 }
END { print "kind,op,bytes,ratio_median,ratio_lo,ratio_hi,auto_algos"
  for (i = 1; i <= n; i++) { m = med(r[order[i]])
    printf "%s,%.3f,%.3f,%.3f,%s\n", order[i], m, lo, hi, a[order[i]] } }
AWK
  awk -F, -f - "$dir"/run*/bench.csv >"$dir/bench-median.csv" <<'AWK'
function med(s,    v, n, i, j, x) {
  n = split(s, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
    x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
  }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
FNR == 1 { next }
{ k = $3 "," $4 "," $5 "," $6; if (!(k in t)) order[++n] = k
  t[k] = t[k] " " $7; if ($9 != "") p[k] = p[k] " " $9; if ($10 != "true") bad[k] = 1 }
END { print "kind,op,bytes,algo,median_us,predicted_us,verified_all"
  for (i = 1; i <= n; i++) { k = order[i]
    printf "%s,%.1f,%s,%s\n", k, med(t[k]), p[k] == "" ? "" : sprintf("%.1f", med(p[k])),
           (k in bad) ? "false" : "true" } }
AWK
  { echo "## $1: $(cat "$dir/command.txt")"
    column -s, -t "$dir/ratios-median.csv"; echo; } >>"$summary"
}

# The cost per call of sleep-sum that makes c = d at CD_SIZE bytes on np
# ranks: d = latency + bytes x time per byte, c = cost + elements x time per
# element of the sum (both from treduce calibrate on the same launch).
cd_cost_us() {
  local np=$1 bytes=$2
  mpirun --oversubscribe -np "$np" "$tool" calibrate --wire mpi --format json |
    jq --argjson b "$bytes" '((.latency_s + $b * .seconds_per_byte)
         - ($b / 8) * .combine_seconds_per_element - .combine_fixed_s) * 1e6
         | if . < 1 then 1 else (. * 10 | round / 10) end'
}

bytes_of() { # 512K -> 524288
  local s=$1
  case $s in
    *K) echo $(( ${s%K} * 1024 )) ;;
    *M) echo $(( ${s%M} * 1048576 )) ;;
    *) echo "$s" ;;
  esac
}

for part in $parts; do
  case $part in
    sum)
      for np in $nps; do
        mpi "$np"
        run "sum-np$np" "${launch[@]}" --ops sum --kinds reduce,allreduce --algos "$algos"
        aggregate "sum-np$np"
      done ;;
    costly)
      mpi 8
      run costly-np8 "${launch[@]}" --ops costly --op-cost 200 --sizes 8 --kinds reduce --algos all
      aggregate costly-np8 ;;
    cd)
      cost=$(cd_cost_us 8 "$(bytes_of "$cd_size")")
      echo "c = d at $cd_size on 8 ranks: sleep-sum cost $cost us per call" | tee -a "$summary"
      mpi 8
      run cd-np8 "${launch[@]}" --ops costly --op-cost "$cost" --sizes "$cd_size" --kinds reduce \
        --algos greedy,fibonacci,binomial
      aggregate cd-np8 ;;
    threads)
      run threads-p2 "$tool" bench "${tune[@]}" -p 2 --ops sum --sizes 64M --kinds allreduce --algos all
      aggregate threads-p2 ;;
    *) echo "run_benchmarks.sh: unknown part '$part' (sum costly cd threads)" >&2; exit 2 ;;
  esac
done
cat "$summary"
