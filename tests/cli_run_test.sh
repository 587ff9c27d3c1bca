#!/usr/bin/env bash
# cli_run_test.sh: end-to-end checks of `treduce run` (real reductions over
# the threads wire): one JSON object with the documented keys and a
# verified result for tree, pipelined, dynamic and exchange algorithms
# (reduce, --allreduce, --root, --segment, the non-commutative checkers),
# the text report, and clear errors: exit 2 with a message naming the bad
# value, exit 1 within a few seconds for a dead rank; --kind runs every
# reduce-scatter and scan algorithm (and auto) with each rank's result
# checked.
# usage: cli_run_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# run NAME ARGS...: `treduce run ARGS --format json` into $out/NAME.json;
# returns 1 (after a note) when the algorithm is not written yet.
run() {
  local name=$1
  shift
  timeout 60 "$tool" run "$@" --iters 3 --format json >"$out/$name.json" 2>"$out/$name.err"
  local status=$?
  if [ "$status" -ne 0 ] && grep -q 'not yet available' "$out/$name.err"; then
    echo "note: skipped run $*: $(cat "$out/$name.err")"
    return 1
  fi
  [ "$status" -eq 0 ] || bad "run $* exited $status: $(cat "$out/$name.err")"
  return 0
}

# jrun NAME P BYTES ARGS...: run, then the JSON contract for P ranks and BYTES.
jrun() {
  local name=$1 p=$2 bytes=$3
  shift 3
  run "$name" "$@" -p "$p" || return 0
  jcheck '.algo and .wire == "threads" and .transport == "threads" and .p == '"$p"'
          and .bytes == '"$bytes"' and .iters == 3 and .verified == true
          and (.median_us | type) == "number" and (.min_us | type) == "number"
          and (.predicted_us | type) == "number"
          and .min_us > 0 and .min_us <= .median_us and .predicted_us >= 0' "$out/$name.json"
  # exactly one JSON object on stdout
  if [ "$(jq -s 'length' "$out/$name.json" 2>/dev/null)" = 1 ]; then ok; else
    bad "$name: stdout is not one JSON object"; fi
}

# --- normal use: every kind of algorithm ------------------------------------
jrun binomial 4 800 --algo binomial --count 100
jcheck '.algo == "binomial" and .allreduce == false and .count == 100 and .type == "double"
        and .op == "sum" and .predicted_us > 0' "$out/binomial.json"
jrun greedy 7 4 --algo greedy --count 1 --type int32
jrun flat-root 5 2056 --algo flat --count 257 --type uint64 --op bxor --root 4
jrun chain-prod 3 56 --algo chain --count 7 --type int64 --op prod --root 2
jrun fib-matrix 6 1600 --algo fibonacci --count 100 --op matrix --root 5
jcheck '.op == "matrix"' "$out/fib-matrix.json"
jrun bin-interval 5 1600 --algo binomial-strategy --count 100 --op interval
jrun gkt 6 400 --algo greedy-k-transfers --K 3 --count 100 --type int32
jrun pipeline 5 32792 --algo pipeline --count 4099 --d 1e-3 --c 1e-3 --latency 1e-5
jrun pfib 8 16400 --algo pipelined-fibonacci --count 1025 --op matrix --d 1e-3 --c 1e-3 \
  --latency 1e-5
jrun tree-dyn 7 800 --algo tree-dyn --count 100 --root 3
jrun nc-tree-dyn 7 1600 --algo nc-tree-dyn --count 100 --op matrix --root 2
jrun p1 1 80 --algo greedy --count 10
jrun count0 4 0 --algo binomial --count 0
# --allreduce: trees (reduce + broadcast) and the exchange algorithms
jrun all-greedy 5 800 --algo greedy --count 100 --allreduce
jcheck '.allreduce == true' "$out/all-greedy.json"
jrun all-fib 6 1648 --algo fibonacci --count 103 --op interval --allreduce
for a in recursive-doubling ring rabenseifner; do
  jrun "all-$a" 6 8200 --algo "$a" --count 1025 --type uint64 --op bxor --allreduce
  jrun "all-$a-7" 7 56 --algo "$a" --count 7 --allreduce
done
jrun all-rd-matrix 5 1600 --algo recursive-doubling --count 100 --op matrix --allreduce
# --kind: every reduce-scatter and scan algorithm, verified rank by rank
# (reduce-scatter: rank r's part, the fold of every rank's part r; scan:
# the fold of ranks 0..r; exscan: 0..r-1, and rank 0's buffer untouched)
# with the non-commutative checkers wherever the algorithm takes them;
# --count is the part of a reduce-scatter (bytes: the part's).  The model
# is measured for one run of each kind, given for the others (faster).
given=(--d 1e-6 --c 1e-7)
for a in reduce-scatter-ring reduce-scatter-halving; do # commutative only
  jrun "rs-$a" 6 4100 --algo "$a" --kind reduce-scatter --count 1025 --type int32 --op bxor \
    "${given[@]}"
  jrun "rs-$a-5" 5 24 --algo "$a" --kind reduce-scatter --count 3 --type int64 --op prod \
    "${given[@]}"
done
jrun rs-pairwise-matrix 7 1616 --algo reduce-scatter-pairwise --kind reduce-scatter \
  --count 101 --op matrix
jrun rs-pairwise-interval 4 16 --algo reduce-scatter-pairwise --kind reduce-scatter \
  --count 1 --op interval "${given[@]}"
jrun rs-pairwise-seg 5 16400 --algo reduce-scatter-pairwise --kind reduce-scatter \
  --count 1025 --op matrix --segment 2048 "${given[@]}"
jcheck '.kind == "reduce-scatter" and .allreduce == false and .count == 1025' \
  "$out/rs-pairwise-seg.json"
jrun rs-p1 1 80 --algo reduce-scatter-pairwise --kind reduce-scatter --count 10 "${given[@]}"
# --parts: uneven parts, empty ones too, each rank's checked against the
# fold of its part (count: the largest; bytes: its)
for a in reduce-scatter-pairwise reduce-scatter-ring reduce-scatter-halving; do
  op=(--op matrix)
  [ "$a" = reduce-scatter-pairwise ] || op=(--type int64 --op sum) # commutative only
  jrun "rs-parts-$a" 5 "$([ ${#op[@]} = 2 ] && echo 1616 || echo 808)" --algo "$a" \
    --kind reduce-scatter --parts 3,0,101,7,0 "${op[@]}" "${given[@]}"
  jcheck '.count == 101 and .parts == [3, 0, 101, 7, 0]' "$out/rs-parts-$a.json"
done
jrun rs-parts-auto 4 8 --algo auto --kind reduce-scatter --parts 0,1,0,1 "${given[@]}"
jrun rs-count0 4 0 --algo reduce-scatter-ring --kind reduce-scatter --count 0 "${given[@]}"
model=()
for a in scan-chain scan-recursive-doubling scan-binomial; do
  for k in scan exscan; do
    jrun "$k-$a" 7 1616 --algo "$a" --kind "$k" --count 101 --op matrix "${model[@]}"
    jrun "$k-$a-4" 4 16400 --algo "$a" --kind "$k" --count 1025 --op interval --segment 4096 \
      "${given[@]}"
    jrun "$k-$a-int" 5 12 --algo "$a" --kind "$k" --count 3 --type int32 "${given[@]}"
    jcheck '.kind == "'"$k"'" and .allreduce == false' "$out/$k-$a.json"
  done
  model=("${given[@]}")
done
jrun exscan-p1 1 80 --algo scan-chain --kind exscan --count 5 --op matrix "${given[@]}"
jrun scan-seg 6 32792 --algo scan-chain --kind scan --count 4099 --segment 1024 --d 1e-3 \
  --c 1e-3 --latency 1e-5
# auto ranks only the algorithms that run the kind
for k in reduce-scatter scan exscan; do
  jrun "auto-$k" 6 1600 --algo auto --kind "$k" --count 100 --op matrix --d 1e-5 --c 1e-6 \
    --explain
  pre=$([ "$k" = reduce-scatter ] && echo reduce-scatter- || echo scan-)
  jcheck '.kind == "'"$k"'" and .chosen_by == "auto" and (.algo | startswith("'"$pre"'"))
          and (.candidates | length) >= 1
          and all(.candidates[]; .algo | startswith("'"$pre"'"))' "$out/auto-$k.json"
done
# --allreduce is --kind allreduce
jrun kind-all 5 800 --algo greedy --count 100 --kind allreduce "${given[@]}"
jcheck '.kind == "allreduce" and .allreduce == true' "$out/kind-all.json"
jcheck '.kind == "reduce"' "$out/binomial.json"
jcheck '.kind == "allreduce"' "$out/all-greedy.json"
# --segment: many blocks
jrun seg-bin 8 16396 --algo binomial --count 4099 --type int32 --segment 128
jrun seg-matrix 4 8240 --algo greedy --count 515 --op matrix --segment 64 --root 3
jrun seg-all 5 16396 --algo fibonacci --count 4099 --type int32 --segment 512 --allreduce
jrun seg-ring 4 32792 --algo ring --count 4099 --segment 1024 --allreduce
# a given model is reported as given
run given --algo binomial -p 4 --count 10 --d 2e-6 --c 1e-7 --latency 1e-6 && \
  jcheck '.model.given == true and (.model.d_us - 2 | fabs) < 1e-9
          and (.model.c_us - 0.1 | fabs) < 1e-9' "$out/given.json"

# --- text output -----------------------------------------------------------
expect 0 'verified +yes' -- "$tool" run --algo binomial -p 4 --count 100
expect 0 'verified' -- "$tool" run --algo nc-tree-dyn -p 5 --count 30 --op interval --root 4
expect 0 'allreduce.*ring|ring.*allreduce' -- "$tool" run --algo ring -p 3 --count 9 --allreduce
expect 0 '^reduce-scatter of 9 x double \(72 bytes per part, p parts each\)' -- "$tool" run \
  --algo reduce-scatter-pairwise --kind reduce-scatter -p 3 --count 9 "${given[@]}"
expect 0 '^exscan of 9 x matrix2x2 .*scan-binomial' -- "$tool" run --algo scan-binomial \
  --kind exscan -p 3 --count 9 --op matrix "${given[@]}"
expect 0 'usage: treduce run' -- "$tool" run --help

# --- bad usage: exit 2, the message names the value ---------------------------
expect 2 '-p 0' -- "$tool" run --algo binomial -p 0 --count 4
expect 2 '-p -3' -- "$tool" run --algo binomial -p -3 --count 4
expect 2 '4097' -- "$tool" run --algo binomial -p 4097 --count 4
expect 2 'count -1' -- "$tool" run --algo binomial -p 4 --count -1
expect 2 "wire 'foo'" -- "$tool" run --algo binomial -p 4 --count 4 --transport foo
expect 2 "unknown algorithm 'nope'.*valid names: .*tree-dyn" -- \
  "$tool" run --algo nope -p 4 --count 4
expect 2 "band.*float|float.*band" -- "$tool" run -p 4 --count 4 --type float --op band
expect 2 "root = 9" -- "$tool" run --algo binomial -p 4 --count 4 --root 9
expect 2 "root = -1" -- "$tool" run --algo binomial -p 4 --count 4 --root -1
expect 2 "tree-dyn.*non-commutative" -- \
  "$tool" run --algo tree-dyn -p 4 --count 4 --op interval
expect 2 "tree-dyn.*allreduce|allreduce.*tree-dyn" -- \
  "$tool" run --algo tree-dyn -p 4 --count 4 --allreduce
expect 2 "ring.*allreduce" -- "$tool" run --algo ring -p 4 --count 4
expect 2 "gives 3 parts for -p 4" -- "$tool" run --algo reduce-scatter-pairwise -p 4 \
  --kind reduce-scatter --parts 1,2,3
expect 2 "needs --kind reduce-scatter and excludes --count" -- "$tool" run -p 2 --parts 1,2
expect 2 "needs --kind reduce-scatter and excludes --count" -- "$tool" run -p 2 \
  --kind reduce-scatter --parts 1,2 --count 4
expect 2 "part 1 is -2, must be >= 0" -- "$tool" run -p 3 --kind reduce-scatter --parts 1,-2,3
expect 2 "invalid --parts" -- "$tool" run -p 3 --kind reduce-scatter --parts 1,x,3
# --kind: a collective the algorithm does not run names the ones it does;
# --root belongs to a reduce; a bad name lists the valid ones
expect 2 "ring runs allreduce only, not a reduce-scatter" -- "$tool" run --algo ring \
  --kind reduce-scatter -p 4 --count 4
expect 2 "reduce-scatter-ring takes commutative operators only" -- "$tool" run \
  --algo reduce-scatter-ring --kind reduce-scatter -p 4 --count 4 --op matrix
expect 2 "binomial runs reduce, allreduce only, not a scan" -- "$tool" run --algo binomial \
  --kind scan -p 4 --count 4
expect 2 "scan-chain runs scan, exscan only, not a reduce" -- "$tool" run --algo scan-chain \
  -p 4 --count 4
expect 2 "invalid --kind: unknown collective 'bcast': need reduce, allreduce, reduce-scatter, scan or exscan" \
  -- "$tool" run --algo auto -p 4 --count 4 --kind bcast
expect 2 "--root .*a scan has none" -- "$tool" run --algo scan-chain --kind scan -p 4 \
  --count 4 --root 2
expect 2 "--root .*an allreduce has none" -- "$tool" run --algo ring --allreduce -p 4 \
  --count 4 --root 1
expect 2 "contradicts" -- "$tool" run --algo scan-chain --kind scan --allreduce -p 4 --count 4
expect 2 "format 'xml'" -- "$tool" run --algo binomial -p 4 --count 4 --format xml
expect 2 "type 'quad'" -- "$tool" run --algo binomial -p 4 --count 4 --type quad
expect 2 "'nope'" -- "$tool" run --algo binomial -p 4 --count 4 --op nope
expect 2 "segment" -- "$tool" run --algo binomial -p 4 --count 4 --segment -8
expect 2 "timeout" -- "$tool" run --algo binomial -p 4 --count 4 --timeout 0
# the library takes deadlines up to 1e6 s: a larger one is bad usage, not a crash
expect 2 "timeout" -- "$tool" run --algo binomial -p 4 --count 4 --timeout 1e7
expect 2 "unknown option '--bogus'|--bogus" -- "$tool" run --algo binomial -p 4 --count 4 --bogus

# --- calibrate: the profile, its flight time, and run --profile ------------------
prof=$out/profile.json
expect 0 'in flight' -- "$tool" calibrate -p 2 --out "$prof"
jcheck '.treduce_profile == 2 and (.latency_s | type) == "number"
        and (.flight_s | type) == "number" and .flight_s >= 0 and .flight_s <= .latency_s
        and .seconds_per_byte >= 0 and .combine_seconds_per_element >= 0
        and .parallelism >= 1 and .parallelism <= 2
        and .recv_combine_saving >= 0 and .recv_combine_saving <= 1' "$prof"
if run from-profile --algo binomial -p 2 --count 100 --profile "$prof"; then
  jcheck '.verified == true and .model.flight_us >= 0
          and .model.flight_us <= .model.latency_us and .model.parallelism >= 1
          and .model.recv_combine_saving == ('"$(jq .recv_combine_saving "$prof")"')' \
    "$out/from-profile.json"
fi
# a profile written before flight_s existed still loads (flight 0)
jq 'del(.flight_s, .parallelism, .recv_combine_saving)' "$prof" >"$out/old-profile.json"
if run run-old-profile --algo binomial -p 2 --count 100 --profile "$out/old-profile.json"; then
  jcheck '.model.flight_us == 0 and .model.parallelism == 0 and .model.recv_combine_saving == 0' \
    "$out/run-old-profile.json"
fi
jq '.flight_s = -1' "$prof" >"$out/bad-profile.json"
expect 2 "flight_s" -- "$tool" run --algo binomial -p 2 --count 4 --profile "$out/bad-profile.json"
jq '.parallelism = "two"' "$prof" >"$out/bad-profile2.json"
expect 2 "parallelism" -- "$tool" run --algo binomial -p 2 --count 4 \
  --profile "$out/bad-profile2.json"
expect 2 "parallelism" -- "$tool" run --algo auto -p 2 --count 4 --d 1e-5 --c 1e-7 \
  --parallelism -1
expect 2 "parallelism" -- "$tool" run --algo binomial -p 2 --count 4 --d 1e-5 --c 1e-7 \
  --parallelism nan
# calibrate --matrix on threads: every pair measured; the cost file holds
# d[i][j] = latency + bytes / bandwidth of the JSON's tables (8000 bytes)
# and reads back in simulate, the platform in platform show
if "$tool" calibrate --matrix -p 3 --count 1000 --costs-out "$out/pairs.txt" \
  --platform-out "$out/pairs-platform.json" --format json >"$out/pairs.json"; then
  jcheck '.p == 3 and .nodes == ["r0", "r1", "r2"] and .latency_s[0][0] == 0
          and ([.bandwidth_Bps[0][1], .bandwidth_Bps[2][0]] | all(. > 0))' "$out/pairs.json"
  grep -v '^#' "$out/pairs.txt" | sed -n 2,4p | tr ' ' '\n' | jq -s . >"$out/pairs-d.json"
  jq -s '.[0] as $m | .[1] as $got | [range(3) as $i | range(3) as $j | if $i == $j then 0
           else $m.latency_s[$i][$j] + 8000 / $m.bandwidth_Bps[$i][$j] end] as $want
         | [range(9) | ($got[.] - $want[.]) | fabs] as $err
         | all(range(9); $err[.] <= 1e-6 * ($want[.] | fabs))' \
    "$out/pairs.json" "$out/pairs-d.json" >"$out/pairs-ok.json"
  jcheck '. == true' "$out/pairs-ok.json"
  expect 0 'mean' -- "$tool" simulate --algo binomial -n 3 --costs "$out/pairs.txt" --runs 1
  expect 0 '3 nodes' -- "$tool" platform show -p "$out/pairs-platform.json"
else
  bad "calibrate --matrix -p 3 failed"
fi
expect 2 '--count 0' -- "$tool" calibrate --matrix -p 2 --count 0
expect 2 'need --matrix' -- "$tool" calibrate -p 2 --costs-out "$out/x.txt"
# the parallelism: one rank's work at a time makes a pipeline's stages take
# turns, so auto leaves it for a tree of the same work and fewer messages
if run par-auto --algo auto -p 8 --count 100000 --d 1e-3 --c 1e-3 --latency 1e-6 \
  --parallelism 1 --explain; then
  jcheck '(.algo | test("pipeline") | not) and .model.parallelism == 1' "$out/par-auto.json"
fi
if run nopar-auto --algo auto -p 8 --count 100000 --d 1e-3 --c 1e-3 --latency 1e-6 --explain; then
  jcheck '(.algo | test("pipeline")) and .model.parallelism == 0' "$out/nopar-auto.json"
fi
# --tune: the model (cost per element) puts pipeline first; the operator
# costs 2 ms a call, so its segment combines lose: auto keeps another of
# the three it timed, and --explain shows their times
if run tuned --algo auto -p 4 --count 8 --allreduce --op sleep-sum --op-cost 2000 \
  --d 1e-3 --c 1 --tune 3 --explain; then
  jcheck '.algo != "pipeline" and ([.candidates[] | select(.measured_us)] | length) == 3
          and (.candidates[0].measured_us <= ([.candidates[] | select(.measured_us)
               | .measured_us] | min))
          and ([.candidates[] | select(.algo == "pipeline") | .measured_us] | length) == 1' \
    "$out/tuned.json"
fi
expect 2 "invalid --tune 9" -- "$tool" run --algo auto -p 2 --count 4 --tune 9
expect 2 "invalid --tune -1" -- "$tool" run --algo auto -p 2 --count 4 --tune -1
expect 2 "needs --algo auto" -- "$tool" run --algo binomial -p 2 --count 4 --tune 2
expect 2 "flight" -- "$tool" run --algo binomial -p 2 --count 4 --d 1e-5 --c 1e-7 \
  --latency 1e-5 --flight 2e-5
# the model: with most of the latency in flight and free combines, eight
# ranks reduce fastest with one level (flat); without flight, not
if run flight-auto --algo auto -p 8 --count 1 --d 1e-5 --c 1e-9 --latency 1e-5 \
  --flight 9e-6 --explain; then
  jcheck '.algo == "flat" and .model.flight_us == 9' "$out/flight-auto.json"
fi
if run noflight-auto --algo auto -p 8 --count 1 --d 1e-5 --c 1e-9 --latency 1e-5 --explain; then
  jcheck '.algo != "flat"' "$out/noflight-auto.json"
fi

# --- a dead rank: exit 1 within a few seconds, naming the deadline --------------
ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(ms)
expect 1 'deadline' -- "$tool" run --algo binomial -p 3 --count 10 --dead-rank 1 --timeout 1
took=$(($(ms) - start))
if [ "$took" -lt 5000 ]; then ok; else bad "dead rank took $took ms"; fi
start=$(ms)
expect 1 'deadline' -- "$tool" run --algo ring -p 3 --count 10 --allreduce --dead-rank 1 \
  --timeout 1 --format json
took=$(($(ms) - start))
if [ "$took" -lt 5000 ]; then ok; else bad "dead rank (ring) took $took ms"; fi

echo "cli_run: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
