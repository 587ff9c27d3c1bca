#!/usr/bin/env bash
# cli_steady_test.sh: end-to-end checks of `treduce steady` (docs/STEADY.md):
# the JSON contract on the paper's examples (Fig. 2 scatter: throughput 1/2;
# Fig. 6 reduce: throughput 1, with --fixed-period and --sizes), a gossip,
# a generated 14-node platform with 8 participants, the text and dot forms,
# an unreachable target (throughput 0, "reachable": false, exit 0), and
# clear errors: exit 2 naming the bad option, node or value, exit 1 for a
# file that cannot be read.
# usage: cli_steady_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
data="$(cd "$(dirname "$0")" && pwd)/data/steady"
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# steady NAME ARGS...: `treduce steady ARGS --format json` into $out/NAME.json.
steady() {
  local name=$1
  shift
  timeout 60 "$tool" steady "$@" --format json >"$out/$name.json" 2>"$out/$name.err"
  local status=$?
  [ "$status" -eq 0 ] || bad "steady $* exited $status: $(cat "$out/$name.err")"
  if [ "$(jq -s 'length' "$out/$name.json" 2>/dev/null)" = 1 ]; then ok; else
    bad "$name: stdout is not one JSON object"; fi
}

# The keys and sub-structures every result has.
contract='(.problem | type) == "string" and (.throughput | type) == "string"
  and (.throughput_float | type) == "number" and (.period | type) == "number"
  and .period >= 1 and (.reachable | type) == "boolean"
  and all(.sends[]; (.from | type) == "string" and (.to | type) == "string"
          and (.message | type) == "string" and (.rate | test("^[0-9]+(/[0-9]+)?$"))
          and (.per_period | type) == "number")
  and all(.trees[]; .weight >= 1 and (.tasks | type) == "array"
          and all(.tasks[]; (.node | type) == "string" and .k <= .l and .l < .m)
          and all(.transfers[]; (.from | type) == "string" and (.message | type) == "string"))
  and ([.trees[].weight] | add // 0) >= 0
  and all(.matchings[]; (.duration | test("^[0-9]+(/[0-9]+)?$"))
          and all(.transfers[]; (.from | type) == "string" and (.to | type) == "string"
                  and (.message | type) == "string" and (.amount | type) == "string"
                  and (.duration | type) == "string"))'

# --- Figure 2: a series of scatters ------------------------------------------
steady fig2 --problem scatter --platform "$data/fig2-scatter.json" --source Ps --targets P0,P1
jcheck "$contract" "$out/fig2.json"
jcheck '.problem == "scatter" and .source == "Ps" and .targets == ["P0", "P1"]
        and .throughput == "1/2" and .throughput_float == 0.5 and .reachable == true
        and (.period % 2) == 0 and .matchings_total == (.period | tostring)
        and ([.trees[].weight] | add) == .period / 2
        and all(.trees[]; (.tasks | length) == 0 and (.transfers | length) >= 2)
        and all(.sends[]; .from != "P0" or .message != "m[P0]")' "$out/fig2.json"
expect 0 'throughput 1/2' -- "$tool" steady --problem scatter -p "$data/fig2-scatter.json" \
  --source Ps --targets P0,P1
expect 0 '^digraph' -- "$tool" steady --problem scatter -p "$data/fig2-scatter.json" \
  --source Ps --targets P0,P1 --format dot

# --- Figure 6: a series of reduces -------------------------------------------
steady fig6 --problem reduce --platform "$data/fig6-reduce.json" --target P0 --fixed-period 2
jcheck "$contract" "$out/fig6.json"
jcheck '.problem == "reduce" and .target == "P0" and .participants == ["P0", "P1", "P2"]
        and .throughput == "1" and all(.trees[]; (.tasks | length) == 2)
        and ([.trees[].weight] | add) == .period
        and .fixed_period.period == 2 and .fixed_period.throughput == "1"
        and .fixed_period.loss == "0" and (.fixed_period.loss_bound | type) == "string"
        and all(.computations[]; .node != null and .k <= .l and .l < .m)' "$out/fig6.json"
printf '{"default": "2", "task": 2}\n' >"$out/sizes2.json"
steady fig6-sizes --problem reduce -p "$data/fig6-reduce.json" --target P0 --sizes "$out/sizes2.json"
jcheck '.throughput == "1/2" and .task_size == "2"' "$out/fig6-sizes.json"
printf '{"sizes": [{"k": 1, "m": 2, "size": "1/2"}]}\n' >"$out/sizes-one.json"
steady fig6-one --problem reduce -p "$data/fig6-reduce.json" --target P2 \
  --participants P2,P0,P1 --sizes "$out/sizes-one.json"
jcheck "$contract"' and .participants == ["P2", "P0", "P1"]' "$out/fig6-one.json"

# --- gossip --------------------------------------------------------------------
steady gossip --problem gossip -p "$data/fig6-reduce.json" --participants P0,P1,P2
jcheck "$contract"' and .throughput == "1/2" and (.sends | all(.message | test("^m\\[")))' \
  "$out/gossip.json"
steady gossip-t --problem gossip -p "$data/fig6-reduce.json" --targets P1,P2
jcheck '.throughput == "1" and .participants == ["P1", "P2"]' "$out/gossip-t.json"

# --- the size of Sec. 4.7: 14 nodes, 8 participants ----------------------------
"$tool" platform generate --seed 5 --lans 3 --out "$out/pf-g14.json"
steady g14 --problem reduce -p "$out/pf-g14.json" --target P0
jcheck "$contract"' and (.nodes | length) == 14 and (.participants | length) == 8
        and .throughput_float > 0 and (.trees | length) >= 1' "$out/g14.json"

# --- unreachable: throughput 0, exit 0 -----------------------------------------
cat >"$out/pf-oneway.json" <<'JSON'
{"nodes": [{"name": "A", "speed": "1"}, {"name": "B", "speed": "1"}, {"name": "R", "router": true}],
 "links": [{"from": "A", "to": "R", "cost": "1"}, {"from": "R", "to": "B", "cost": "1"}]}
JSON
steady oneway --problem reduce -p "$out/pf-oneway.json" --target A
jcheck '.reachable == false and .throughput == "0" and (.unreachable | test("cannot reach .A."))
        and .trees == [] and .matchings == []' "$out/oneway.json"
expect 0 'throughput 0: no schedule exists' -- "$tool" steady --problem reduce \
  -p "$out/pf-oneway.json" --target A

# --- errors ----------------------------------------------------------------------
f2="$data/fig2-scatter.json"
expect 2 '--problem is required' -- "$tool" steady -p "$f2"
expect 2 "unknown steady-state problem 'bcast'" -- "$tool" steady --problem bcast -p "$f2"
expect 2 '--platform is required' -- "$tool" steady --problem reduce --target P0
expect 2 'a scatter needs --source' -- "$tool" steady --problem scatter -p "$f2"
expect 2 'a reduce needs --target' -- "$tool" steady --problem reduce -p "$f2"
expect 2 "unknown node 'P9' in --targets" -- "$tool" steady --problem scatter -p "$f2" \
  --source Ps --targets P0,P9
expect 2 "unknown node 'Q' in --target" -- "$tool" steady --problem reduce -p "$f2" --target Q
expect 2 "empty name in --participants" -- "$tool" steady --problem reduce -p "$f2" \
  --target P0 --participants P0,,P1
expect 2 "participant 'P1' is listed twice" -- "$tool" steady --problem reduce -p "$f2" \
  --target P0 --participants P0,P1,P1
expect 2 "participant 'R' is a router" -- "$tool" steady --problem reduce \
  -p "$out/pf-oneway.json" --target A --participants A,R
expect 2 "the source 'Ps' cannot be a target" -- "$tool" steady --problem scatter -p "$f2" \
  --source Ps --targets Ps,P0
expect 2 '--sizes does not apply to a scatter' -- "$tool" steady --problem scatter -p "$f2" \
  --source Ps --sizes "$out/sizes2.json"
expect 2 '--source does not apply to a reduce' -- "$tool" steady --problem reduce -p "$f2" \
  --target P0 --source Ps
expect 2 'invalid --fixed-period 0' -- "$tool" steady --problem reduce -p "$f2" --target P0 \
  --fixed-period 0
expect 2 "invalid --format 'xml'" -- "$tool" steady --problem reduce -p "$f2" --target P0 \
  --format xml
expect 1 'cannot read' -- "$tool" steady --problem reduce -p "$f2" --target P0 \
  --sizes "$out/nope.json"
printf '{"sizes": [{"k": 2, "m": 1, "size": "3"}]}\n' >"$out/sizes-bad.json"
expect 2 'size of v\[2,1\]' -- "$tool" steady --problem reduce -p "$f2" --target P0 \
  --sizes "$out/sizes-bad.json"
printf '{"default": "0"}\n' >"$out/sizes-zero.json"
expect 2 'message size = 0: must be > 0' -- "$tool" steady --problem reduce -p "$f2" \
  --target P0 --sizes "$out/sizes-zero.json"
printf '{"defaults": "1"}\n' >"$out/sizes-key.json"
expect 2 'unknown key "defaults"' -- "$tool" steady --problem reduce -p "$f2" --target P0 \
  --sizes "$out/sizes-key.json"
expect 1 '' -- "$tool" steady --problem reduce -p "$out/missing.json" --target P0

# An LP too large to solve in reasonable time is refused up front (47
# participants: millions of task variables), not left running for hours.
"$tool" platform generate --seed 2 --lans 20 --out "$out/pf-big.json" || bad "generate --lans 20"
expect 2 'more than 60000 variables: 47 participants on 78 nodes.*--participants' -- \
  "$tool" steady --problem reduce -p "$out/pf-big.json" --target P0

# --simulate / --run: the periodic schedule in the simulator reaches TP in
# its steady state (never more), the threads run verifies every result.
steady fig6-series --problem reduce -p "$data/fig6-reduce.json" --target P0 \
  --simulate 2000 --run 300
jcheck "$contract"' and .simulated.ops == 2000 and .simulated.ratio_to_tp == 1
        and .simulated.throughput <= 1 and .run.ops == 300 and .run.verified == true
        and .run.ops_per_second > 0
        and .run.wire == "threads" and .run.transport == "threads"' "$out/fig6-series.json"
expect 0 'ran 20 operations on threads.*results verified' -- \
  "$tool" steady --problem reduce -p "$data/fig6-reduce.json" --target P0 --simulate 50 \
  --run 20
expect 2 'apply to --problem reduce only' -- "$tool" steady --problem scatter -p "$f2" \
  --source Ps --simulate 10
expect 2 'invalid --run 0: must be >= 1' -- "$tool" steady --problem reduce -p "$f2" \
  --target P0 --run 0
expect 2 'invalid --simulate' -- "$tool" steady --problem reduce -p "$f2" --target P0 \
  --simulate x

echo "cli_steady: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
