#!/usr/bin/env bash
# compare_builds.sh BEFORE AFTER [OUTDIR]: the figures a change must not
# regress (docs/BENCHMARKS.md), measured for two builds of treduce (e.g. a
# build of the commit before a change, and one of after it), alternated run
# by run so that both see the same moments of a noisy machine:
#   plan       bench_plan: ns per rank of the linear-time greedy and of the
#              whole trd_plan_create, n = 10^6 and 10^7;
#   sim        bench_sim --only binomial --cpu: µs of CPU per simulation of
#              binomial-64, constant and exponential costs; and SimGrid's
#              µs for the same simulation (AFTER's bench/simgrid_binomial,
#              where built), once per run, so the report gives the ratio
#              SimGrid / treduce of each build;
#   auto/MPI   bench_pair: `auto` against Open MPI's own collective in the
#              same program, np 4, reduce of 8 B and allreduce of 64 KiB.
# Each measure runs REPS times per build (default 5; odd runs BEFORE first,
# even runs AFTER first).  Writes OUTDIR/raw.txt (measure build run value)
# and prints per measure the median of each build and AFTER / BEFORE
# (below 1: AFTER is faster).  Open MPI's mpirun (MPIRUN) for bench_pair.
# environment: REPS (5), MPIRUN (mpirun)
set -euo pipefail
before=${1:?usage: compare_builds.sh BEFORE_BUILD AFTER_BUILD [OUTDIR]}
after=${2:?usage: compare_builds.sh BEFORE_BUILD AFTER_BUILD [OUTDIR]}
out=${3:-compare-out}
reps=${REPS:-5}
mpirun=${MPIRUN:-mpirun}
for b in "$before" "$after"; do
  for exe in bench_plan bench_sim bench_pair; do
    [ -x "$b/bench/$exe" ] || { echo "compare_builds: no $b/bench/$exe (build it first)" >&2; exit 2; }
  done
done
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"

# measure BUILD RUN: one run of every measure with BUILD, appended to raw.txt
measure() {
  local b=$1 run=$2 name
  name=$([ "$b" = "$before" ] && echo before || echo after)
  "$b/bench/bench_plan" 7 1 | awk -v b="$name" -v r="$run" \
    '$1 == 1000000 || $1 == 10000000 {
       print "plan-linear-ns/rank-n" $1, b, r, $2; print "plan-create-ns/rank-n" $1, b, r, $5 }' \
    >>"$raw"
  "$b/bench/bench_sim" --only binomial --cpu | awk -v b="$name" -v r="$run" \
    '$1 == "binomial" { print "sim-binomial64-const-us", b, r, $2; print "sim-binomial64-exp-us", b, r, $4 }' \
    >>"$raw"
  "$mpirun" --oversubscribe -np 4 "$b/bench/bench_pair" --algo auto --count 1 --calls 2000 |
    sed -n 's/.*treduce \/ MPI \([0-9.]*\).*/auto\/mpi-reduce-8B '"$name $run"' \1/p' >>"$raw"
  "$mpirun" --oversubscribe -np 4 "$b/bench/bench_pair" --algo auto --allreduce --count 8192 \
    --calls 500 | sed -n 's/.*treduce \/ MPI \([0-9.]*\).*/auto\/mpi-allreduce-64K '"$name $run"' \1/p' \
    >>"$raw"
}

simgrid=$after/bench/simgrid_binomial
for run in $(seq 1 "$reps"); do
  echo "== run $run of $reps" >&2
  if [ -x "$simgrid" ]; then
    "$simgrid" | awk -v r="$run" '$1 == "simgrid_us_per_sim" {
      print "simgrid-binomial64-us", "before", r, $2; print "simgrid-binomial64-us", "after", r, $2 }' \
      >>"$raw"
  fi
  if [ $((run % 2)) -eq 1 ]; then
    measure "$before" "$run"; measure "$after" "$run"
  else
    measure "$after" "$run"; measure "$before" "$run"
  fi
done

# the median of each (measure, build), then after / before
awk '
  { v[$1 SUBSEP $2] = v[$1 SUBSEP $2] " " $4; seen[$1] = 1 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%-28s %12s %12s %14s\n", "measure (median)", "before", "after", "after/before"
    for (m in seen) {
      b = median(v[m SUBSEP "before"]); a = median(v[m SUBSEP "after"])
      printf "%-28s %12.3f %12.3f %14.3f\n", m, b, a, (b > 0 ? a / b : 0)
      med[m, "before"] = b; med[m, "after"] = a
    }
    m = "sim-binomial64-const-us"; g = "simgrid-binomial64-us"
    if ((g, "before") in med && med[m, "before"] > 0 && med[m, "after"] > 0)
      printf "%-28s %12.1f %12.1f\n", "simgrid/treduce (binomial64)",
             med[g, "before"] / med[m, "before"], med[g, "after"] / med[m, "after"]
  }' "$raw"
