#!/usr/bin/env bash
# layer_test.sh LAUNCHER LIB BINDIR TREDUCE PART: the test programs of the
# MPI layer (layer_*.c) run with the launcher of the MPI they were built
# with, through tests/mpi/run_mpi.sh (60 s limit each), in three modes:
#   plain    the program alone, as MPI runs it without the layer;
#   preload  the same program with LD_PRELOAD=LIB (libtreduce_mpi.so);
#   linked   layer_X_linked, linked with the layer before the MPI library.
# Every run must end with "ok"; where the layer is in, TREDUCE_MPI_STATS
# shows that it ran the calls (not passed them all to MPI).  PART:
#   types    every predefined type x operator (plain; preload: two
#            TREDUCE_MPI_REPRODUCIBLE=1 runs with the same checksum, and
#            recursive doubling, where both ranks of a pair combine);
#   comms    sub-communicators and user operators (plain, preload, linked);
#   scans    MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan,
#            MPI_Exscan, MPI_Reduce_local (layer_scans.c: plain, preload on
#            1 to 5 processes, linked, and TREDUCE_MPI_VERBOSE's lines);
#   requests MPI_Iallreduce, MPI_Ireduce, MPI_Ireduce_scatter_block,
#            MPI_Ireduce_scatter, MPI_Iscan, MPI_Iexscan (layer_requests.c:
#            plain, preload and linked, at MPI_Init and MPI_THREAD_MULTIPLE;
#            progress while a rank computes; a passed deadline);
#   algos    layer_comms --quick (MPI_COMM_WORLD) under auto (the measured
#            model) and every registered algorithm of reduce and allreduce
#            (TREDUCE_MPI_ALGO), on 5 processes (star: 6), and layer_scans
#            --quick under every one of the other collectives;
#   errors   erroneous calls: the same error classes and handler calls with
#            and without the layer; a passed deadline -> MPI_ERR_OTHER;
#   stats    the exact TREDUCE_MPI_STATS lines, TREDUCE_MPI=off, VERBOSE,
#            malformed values, MPI_THREAD_MULTIPLE (initialised so: the same counts);
#   fortran  a Fortran program (the MPI's own Fortran wrapper), whose calls
#            reach the layer or not depending on the MPI;
#   lifecycle communicators made, used and freed with ranks arriving late
#            (layer_lifecycle.c);
#   threads  MPI_THREAD_MULTIPLE, threads reducing at once (layer_threads.c);
#   mpi4py   a Python program with mpi4py's defaults (layer_mpi4py.py): the
#            same results with and without the layer.
# TRD_TEST_LOAD=1 (tests/mpi/run_mpi.sh): every launch with the cores busy.
# Exit 77 (skip) without a launcher.  Under MPICH (busy-polling) at most 3
# processes and fewer algorithms.  LAYER_TEST_QUICK=1 (the sanitizer
# build): the main run of each part with the layer (types with binomial,
# not auto), and errors' plain run.
set -uo pipefail
launcher=$1 lib=$2 bin=$3 tool=$4 part=$5
here=$(cd "$(dirname "$0")" && pwd)
run_mpi="$here/../mpi/run_mpi.sh"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

if [ -z "$launcher" ] || ! command -v "$launcher" >/dev/null 2>&1; then
  echo "SKIP: mpirun not found"
  exit 77
fi
mpich=false
"$launcher" --version 2>&1 | grep -qi "open mpi\|open-rte\|openrte" || mpich=true
np_max=64
$mpich && np_max=3
quick=${LAYER_TEST_QUICK:-0}

# launch NP MODE [VAR=VALUE ...] -- PROGRAM ARGS: one run; its output in $out.
launch() {
  local np=$1 mode=$2 vars=() opts=() kv prog
  shift 2
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  prog=$bin/$1
  [[ $1 == /* ]] && prog=$1 # an interpreter, by its full path
  shift
  [ "$np" -gt "$np_max" ] && np=$np_max
  case $mode in
    preload) vars+=("LD_PRELOAD=$lib") ;;
    linked) prog=${prog}_linked ;;
  esac
  for kv in "${vars[@]}"; do
    if $mpich; then opts+=(-genv "${kv%%=*}" "${kv#*=}"); else opts+=(-x "$kv"); fi
  done
  out=$("$run_mpi" "$launcher" "$np" "${opts[@]}" "$prog" "$@" 2>&1)
}

# runs_ok WHAT PATTERN...: the last run passed and its output has every
# (extended) pattern.
runs_ok() {
  local what=$1 p
  shift
  if ! grep -q ": ok (" <<<"$out"; then
    bad "$what: did not pass: $(tail -15 <<<"$out")"
    return
  fi
  for p in "$@"; do
    if ! grep -qE -- "$p" <<<"$out"; then
      bad "$what: no line matches /$p/: $(grep treduce-mpi <<<"$out" | head -5)"
      return
    fi
  done
  ok
}

all_handled='MPI_Allreduce handled=[1-9][0-9]* passed=0$'
all_handled_reduce='MPI_Reduce handled=[1-9][0-9]* passed=0$'
# every call of the functions layer_scans makes
scans_handled=()
for fn in MPI_Reduce_scatter_block MPI_Reduce_scatter MPI_Scan MPI_Exscan MPI_Reduce_local; do
  scans_handled+=("$fn handled=[1-9][0-9]* passed=0\$")
done

# every nonblocking function layer_requests makes, and at MPI_Init (below
# MPI_THREAD_MULTIPLE: no thread may advance them) passed to MPI
req_handled=() req_threads=()
for fn in MPI_Iallreduce MPI_Ireduce MPI_Ireduce_scatter_block MPI_Ireduce_scatter MPI_Iscan \
          MPI_Iexscan; do
  req_handled+=("$fn handled=[1-9][0-9]* passed=0\$")
  req_threads+=("$fn handled=0 passed=([0-9]+) threads=\\1\$")
done

part_types() {
  if [ "$quick" = 1 ]; then # tens of seconds (2 processes) under ASan
    TRD_TEST_MPI_LIMIT=240 launch 2 preload TREDUCE_MPI_STATS=1 TREDUCE_MPI_ALGO=binomial \
      -- layer_types
    runs_ok "types, preload (binomial)" "$all_handled" "$all_handled_reduce"
    return
  fi
  launch 3 plain -- layer_types --plain
  runs_ok "types, plain"
  # recursive doubling combines each pair on both of its ranks; the reduces
  # it cannot run go to MPI, whose known bugs --plain tolerates
  launch 4 preload TREDUCE_MPI_STATS=1 TREDUCE_MPI_ALGO=recursive-doubling -- layer_types --plain
  runs_ok "types, recursive doubling" "$all_handled"
  local sums=()
  for i in 1 2; do
    launch 3 preload TREDUCE_MPI_REPRODUCIBLE=1 TREDUCE_MPI_STATS=1 -- layer_types
    runs_ok "types, reproducible run $i" "$all_handled" "$all_handled_reduce"
    sums+=("$(grep '^checksum' <<<"$out")")
  done
  if [ -n "${sums[0]}" ] && [ "${sums[0]}" = "${sums[1]}" ]; then ok; else
    bad "reproducible: two runs gave '${sums[0]}' and '${sums[1]}'"; fi
}

part_comms() {
  local n=4
  $mpich && n=3
  launch 4 preload TREDUCE_MPI_STATS=1 TREDUCE_MPI_ALGO=binomial -- layer_comms
  runs_ok "comms, preload" "MPI_Allreduce handled=[1-9][0-9]* passed=$n intercomm=$n\$" \
    "$all_handled_reduce"
  [ "$quick" = 1 ] && return
  launch 4 plain -- layer_comms
  runs_ok "comms, plain"
  launch 4 linked TREDUCE_MPI_STATS=1 TREDUCE_MPI_ALGO=greedy -- layer_comms
  runs_ok "comms, linked" "MPI_Allreduce handled=[1-9][0-9]* passed=$n intercomm=$n\$"
}

# The algorithms of `treduce list` that compute any of the collectives
# named (jq's names: reduce, allreduce, reduce-scatter, scan, exscan).
algos_of() {
  local sel
  sel=$(printf '"%s",' "$@")
  "$tool" list --format json |
    jq -r ".[] | select(any(.collectives[]; IN(${sel%,}))) | .name" | tr '\n' ' '
}

part_algos() {
  local algo algos scans np
  local costly want
  algos="auto $(algos_of reduce allreduce)"
  scans="auto $(algos_of reduce-scatter scan exscan)"
  if $mpich; then
    algos="binomial fibonacci pipeline nc-tree-dyn recursive-doubling rabenseifner"
    scans="reduce-scatter-pairwise scan-recursive-doubling"
  fi
  # planners for heterogeneous costs need a cost matrix the layer does not
  # have: it must pass every call of theirs to MPI
  costly=" $("$tool" list --format json | jq -r '.[] | select(.uses_costs) | .name' | tr '\n' ' ') "
  for algo in $algos; do
    np=5
    [[ $algo == star* ]] && np=6 # 3! ranks
    want="handled=[1-9]"
    [[ $costly == *" $algo "* ]] && want="handled=0 passed=[1-9][0-9]* algo="
    launch $np preload TREDUCE_MPI_STATS=1 "TREDUCE_MPI_ALGO=$algo" -- layer_comms --quick
    runs_ok "comms under $algo" "$want"
  done
  # each runs the calls of its collectives (ring and halving: those of
  # commutative operators); the others go to MPI (algo)
  for algo in $scans; do
    want=("handled=[1-9]") # an array: auto's is several lines
    [ "$algo" = auto ] && want=("${scans_handled[@]}")
    launch 5 preload TREDUCE_MPI_STATS=1 "TREDUCE_MPI_ALGO=$algo" -- layer_scans --quick
    runs_ok "scans under $algo" "${want[@]}"
  done
}

# The other reductions (layer_scans.c): plain, preloaded on 1 to 5
# processes (every call the layer's), linked; TREDUCE_MPI_VERBOSE names
# each function and its algorithm.
part_scans() {
  local np nps="1 2 3 4 5"
  [ "${TRD_TEST_LOAD:-}" = 1 ] && nps="1 3 5" # each launch waits for the scheduler
  if [ "$quick" != 1 ]; then
    # MPICH 4.0.2 alone corrupts its heap on the reversed split's strided
    # reduce-scatter (the layer runs it right): its plain run on the world only
    if $mpich; then launch 3 plain -- layer_scans --quick; else launch 3 plain -- layer_scans; fi
    runs_ok "scans, plain"
  fi
  for np in $nps; do
    [ "$np" -gt "$np_max" ] && break # MPICH busy-polls: at most 3
    launch $np preload TREDUCE_MPI_STATS=1 -- layer_scans
    runs_ok "scans, preload, $np processes" "${scans_handled[@]}"
    [ "$quick" = 1 ] && return
  done
  launch 3 linked TREDUCE_MPI_STATS=1 -- layer_scans
  runs_ok "scans, linked" "${scans_handled[@]}"
  launch 3 preload TREDUCE_MPI_VERBOSE=1 -- layer_scans --quick
  runs_ok "scans, verbose" \
    "^treduce-mpi: MPI_Reduce_scatter_block of 7 x MPI_INT, MPI_SUM: reduce-scatter-[a-z]+ \(predicted" \
    "^treduce-mpi: MPI_Reduce_scatter of 0 x MPI_DOUBLE, MPI_SUM: nothing to reduce\$" \
    "^treduce-mpi: MPI_Scan of 1000 x MPI_INT, a user operator: scan-[a-z-]+ \(predicted" \
    "^treduce-mpi: MPI_Exscan of 1 x MPI_DOUBLE, MPI_SUM: scan-[a-z-]+ \(predicted" \
    "^treduce-mpi: MPI_Reduce_local of 7 x MPI_INT, MPI_SUM: local\$"
}

# The lines layer_errors prints about its calls (not the layer's own).
calls() { grep -E '^(-- |.* returned class )' <<<"$1"; }

part_errors() {
  local plain
  launch 3 plain -- layer_errors
  runs_ok "errors, plain"
  plain=$(calls "$out")
  launch 3 preload TREDUCE_MPI_STATS=1 -- layer_errors
  runs_ok "errors, preload" "MPI_Allreduce handled=[0-9]+ passed=[0-9]+ invalid="
  if [ -n "$plain" ] && [ "$(calls "$out")" = "$plain" ]; then ok; else
    bad "errors: preload differs from plain: $(diff <(echo "$plain") <(calls "$out"))"; fi
  [ "$quick" = 1 ] && return
  launch 3 linked -- layer_errors
  runs_ok "errors, linked"
  if [ "$(calls "$out")" = "$plain" ]; then ok; else
    bad "errors: linked differs from plain: $(diff <(echo "$plain") <(calls "$out"))"; fi
  launch 3 preload TREDUCE_MPI_TIMEOUT=1 TREDUCE_MPI_ALGO=binomial TREDUCE_MPI_STATS=1 \
    -- layer_errors --deadline
  runs_ok "errors, a passed deadline" "failed in the layer" \
    "MPI_Allreduce handled=[0-9]+ passed=[0-9]+ failed="
}

part_stats() {
  local np=3 v count
  launch $np preload TREDUCE_MPI_STATS=1 -- layer_stats
  runs_ok "stats" "^treduce-mpi: MPI_Allreduce handled=9 passed=9 intercomm=3 derived=6\$" \
    "^treduce-mpi: MPI_Reduce handled=3 passed=12 invalid=6 type=3 op=3\$" \
    "^treduce-mpi: MPI_Reduce_scatter_block handled=3 passed=0\$" \
    "^treduce-mpi: MPI_Reduce_scatter handled=3 passed=0\$" \
    "^treduce-mpi: MPI_Scan handled=3 passed=3 derived=3\$" \
    "^treduce-mpi: MPI_Exscan handled=3 passed=0\$" \
    "^treduce-mpi: MPI_Reduce_local handled=3 passed=6 type=3 op=3\$"
  launch $np linked TREDUCE_MPI_STATS=1 TREDUCE_MPI=off -- layer_stats
  runs_ok "stats, off" "^treduce-mpi: MPI_Allreduce handled=0 passed=18 off=18\$" \
    "^treduce-mpi: MPI_Reduce handled=0 passed=15 off=15\$" \
    "^treduce-mpi: MPI_Scan handled=0 passed=6 off=6\$" \
    "^treduce-mpi: MPI_Reduce_local handled=0 passed=9 off=9\$"
  launch $np preload TREDUCE_MPI_VERBOSE=1 TREDUCE_MPI_ALGO=fibonacci -- layer_stats
  count=$(grep -c "MPI_SUM: fibonacci (TREDUCE_MPI_ALGO)\$" <<<"$out")
  runs_ok "verbose" "passed to MPI \(intercomm\)" \
    "MPI_Reduce of 3 x MPI_DOUBLE, MPI_SUM: passed to MPI \(invalid\)" \
    "MPI_Scan of 3 x MPI_DOUBLE, MPI_SUM: passed to MPI \(algo\)" \
    "MPI_Reduce_local of 2 x MPI_INTEGER, MPI_SUM: passed to MPI \(type\)"
  if [ "$count" -eq 4 ]; then ok; else bad "verbose: $count lines name fibonacci, not 4"; fi
  # auto says why: the model's time of its choice and of the next one
  launch $np preload TREDUCE_MPI_VERBOSE=1 -- layer_stats
  count=$(grep -cE "MPI_SUM: [a-z-]+ \(predicted [0-9.e+-]+ us; next [a-z-]+, [0-9.e+-]+ us\)\$" \
    <<<"$out")
  if [ "$count" -ge 4 ]; then ok; else bad "verbose, auto: $count lines say why: $out"; fi
  for v in TREDUCE_MPI=maybe TREDUCE_MPI_TIMEOUT=2e6 TREDUCE_MPI_ALGO=nope \
    TREDUCE_MPI_STAT=1; do
    launch $np preload "$v" TREDUCE_MPI_STATS=1 -- layer_stats
    count=$(grep -c "the layer steps aside" <<<"$out")
    runs_ok "malformed $v" "^treduce-mpi: ${v%%=*}"
    if [ "$count" -eq 1 ] && ! grep -q "handled=" <<<"$out"; then ok; else
      bad "malformed $v: $count messages, or stats printed: $out"; fi
  done
  # MPI_THREAD_MULTIPLE: run as at any other level (tests/mpi_layer/layer_threads.c
  # runs several threads at once)
  launch $np preload TREDUCE_MPI_STATS=1 -- layer_stats --threads
  runs_ok "MPI_THREAD_MULTIPLE" "MPI_Allreduce handled=9 passed=9 intercomm=3 derived=6\$"
}

part_fortran() {
  local fc=mpifort.openmpi dir
  $mpich && fc=mpifort.mpich
  command -v "$fc" >/dev/null 2>&1 || fc=mpifort
  if ! command -v "$fc" >/dev/null 2>&1; then
    echo "SKIP: no Fortran MPI compiler"
    exit 77
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/trd-fortran.XXXXXX")
  trap 'rm -rf "$dir"' RETURN
  if ! (cd "$dir" && "$fc" -o layer_fortran "$here/layer_fortran.f90" >/dev/null 2>&1); then
    bad "fortran: $fc cannot build layer_fortran.f90"
    return
  fi
  bin=$dir launch 3 preload TREDUCE_MPI_STATS=1 -- layer_fortran
  if $mpich; then
    # MPICH's Fortran calls the C functions: the user operator runs in the
    # layer, DOUBLE PRECISION (no kernel) goes to MPI
    runs_ok "fortran (MPICH)" "MPI_Allreduce handled=3 passed=3 type=3\$"
  elif grep -q "treduce-mpi" <<<"$out"; then
    bad "fortran (Open MPI): the layer saw the calls: $out"
  else
    runs_ok "fortran (Open MPI: every call to PMPI_* directly)"
  fi
}

# Communicators made and freed in rounds, ranks arriving up to 50 ms late,
# splits freed in different orders, a root still in a reduce while the
# others move on: plain, preloaded (every call the layer's but MPI_Comm_idup's
# communicator, which it does not see made) on 2 to 5 processes, linked.
part_lifecycle() {
  local np rounds=100 want
  [ "$quick" = 1 ] && rounds=30
  [ "${TRD_TEST_LOAD:-}" = 1 ] && rounds=25 # each round waits for the scheduler
  launch 3 plain -- layer_lifecycle 40
  runs_ok "lifecycle, plain"
  for np in 2 3 4 5; do
    [ "$np" -gt "$np_max" ] && break # MPICH busy-polls: at most 3
    launch $np preload TREDUCE_MPI_STATS=1 -- layer_lifecycle $rounds
    want="MPI_Allreduce handled=[1-9][0-9]* passed=$((2 * np)) unseen=$((2 * np))\$"
    runs_ok "lifecycle, preload, $np processes" "$want" \
      "MPI_Reduce handled=[1-9][0-9]* passed=$np unseen=$np\$"
    [ "$quick" = 1 ] && return
  done
  launch 3 linked TREDUCE_MPI_STATS=1 -- layer_lifecycle 30
  runs_ok "lifecycle, linked" "MPI_Allreduce handled=[1-9][0-9]* passed=6 unseen=6\$"
}

# MPI_THREAD_MULTIPLE: 4 threads per process reducing at once, each on its
# own communicators (made, used and freed beside the others).
part_threads() {
  local iters=2000
  [ "$quick" = 1 ] && iters=200
  launch 2 plain -- layer_threads 300
  runs_ok "threads, plain"
  launch 3 preload TREDUCE_MPI_STATS=1 -- layer_threads $iters
  if grep -q "provided multiple" <<<"$out"; then
    runs_ok "threads, preload" "$all_handled" "$all_handled_reduce"
  else
    echo "note: MPI provides less than MPI_THREAD_MULTIPLE: one thread"
    runs_ok "threads, preload (one thread)" "$all_handled"
  fi
}

# mpi4py (Debian's python3-mpi4py, built against Open MPI), with its default
# MPI_THREAD_MULTIPLE: the same digest of every result plain and with the
# layer, whose statistics show it ran every buffer reduction.
part_mpi4py() {
  local py="" digests=() np
  for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import mpi4py, numpy" 2>/dev/null; then
      py=$(command -v "$p")
      break
    fi
  done
  if [ -z "$py" ] || $mpich; then
    echo "SKIP: no python3 with mpi4py and numpy for this MPI (python3-mpi4py is Open MPI's)"
    exit 77
  fi
  for np in 2 3; do
    launch $np plain -- "$py" "$here/layer_mpi4py.py" 12
    runs_ok "mpi4py, plain, $np processes"
    digests=("$(grep '^digest' <<<"$out")")
    launch $np preload TREDUCE_MPI_STATS=1 -- "$py" "$here/layer_mpi4py.py" 12
    runs_ok "mpi4py, preload, $np processes" "$all_handled" "$all_handled_reduce" \
      "MPI_Iallreduce handled=[1-9][0-9]* passed=0\$"
    digests+=("$(grep '^digest' <<<"$out")")
    if [ -n "${digests[0]}" ] && [ "${digests[0]}" = "${digests[1]}" ]; then ok; else
      bad "mpi4py, $np processes: plain '${digests[0]}', with the layer '${digests[1]}'"; fi
  done
}

# The nonblocking reductions (layer_requests.c): plain and preloaded at
# MPI_Init and MPI_THREAD_MULTIPLE, linked; the progress of a call while
# its rank computes (not under load, nor MPICH, which busy-polls: timing);
# a passed deadline.
part_requests() {
  local level
  for level in single multiple; do
    if [ "$quick" != 1 ]; then
      launch 3 plain -- layer_requests $level
      runs_ok "requests, plain, $level"
    fi
    launch 3 preload TREDUCE_MPI_STATS=1 -- layer_requests $level
    if [ $level = single ]; then runs_ok "requests, preload, single" "${req_threads[@]}"
    else runs_ok "requests, preload, multiple" "${req_handled[@]}"; fi
  done
  [ "$quick" = 1 ] && return
  launch 3 linked TREDUCE_MPI_STATS=1 -- layer_requests multiple
  runs_ok "requests, linked" "${req_handled[@]}"
  if [ "${TRD_TEST_LOAD:-}" != 1 ] && ! $mpich; then
    launch 3 preload -- layer_requests multiple --progress
    runs_ok "requests, progress while rank 0 computes"
  fi
  launch 3 preload TREDUCE_MPI_TIMEOUT=1 TREDUCE_MPI_ALGO=binomial TREDUCE_MPI_STATS=1 \
    -- layer_requests multiple --deadline
  runs_ok "requests, a passed deadline" "MPI_Iallreduce on a communicator of 3 ranks failed" \
    "MPI_Iallreduce handled=6 passed=3 failed=3\$"
}

case $part in
  types | comms | scans | requests | algos | errors | stats | fortran | lifecycle | threads | mpi4py)
    "part_$part" ;;
  *) echo "usage: layer_test.sh LAUNCHER LIB BINDIR TREDUCE" \
          "types|comms|scans|requests|algos|errors|stats|fortran|lifecycle|threads|mpi4py"
     exit 2 ;;
esac
echo "layer_test $part: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
