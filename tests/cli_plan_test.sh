#!/usr/bin/env bash
# cli_plan_test.sh: every algorithm of `treduce list` can be planned,
# printed, exported and drawn (docs/CLI.md, "treduce plan"):
#   - `plan --format json|text|dot` and `--gantt FILE.svg` exit 0 for each,
#     with the options it needs (--K, --costs, the first collective it
#     runs as --kind: --allreduce, its older spelling, for the allreduce
#     exchanges; n = 3! for the star graph);
#   - `treduce list` names the collectives each algorithm runs, and a plan
#     of another collective is refused naming the algorithm and those;
#     --kind's plans say their kind (text and JSON), --root is refused
#     where the collective has none;
#   - the times printed belong to the makespan printed: every step, and
#     every send start of the text table, ends by the makespan, and the
#     last step ends at it;
#   - the chart draws every transfer and every combine: the SVG's bars in
#     the transfer colour and in the combine colour are counted against the
#     steps of the JSON schedule, by kind (a step's times play no part);
#   - a dynamic algorithm's plan is its run in the simulator under the same
#     constant costs, and a segmented plan's makespan is the simulator's.
# usage: cli_plan_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

n=6 # 3! ranks: the star graph's algorithms take it too
"$tool" costs generate -n $n --seed 2 --out "$out/costs.txt" || bad "costs generate failed"
# The bars' fill colours of src/viz/gantt.c (plot.c's series 0 and 1); each
# also fills one legend box.
blue='fill:rgb(12.156863%,46.666667%,70.588235%)'
orange='fill:rgb(100%,49.803922%,5.490196%)'
count() { grep -o "$1" "$2" | wc -l; }

# plan_all NAME ARGS...: the four outputs of one plan, and their checks.
plan_all() {
  local a=$1 f="$out/$1.json" svg="$out/$1.svg"
  shift
  timeout 60 "$tool" plan --algo "$a" "$@" --d 1 --c 0.5 --format json >"$f" 2>"$out/err" ||
    { bad "plan --algo $a $* --format json: $(cat "$out/err")"; return; }
  jcheck '.makespan as $m | ($m | type) == "number" and $m > 0
          and ([.schedule[][] | .end] | max) == $m
          and all(.schedule[][]; .start >= 0 and .start <= .end and .end <= $m)
          and all(.send_start[] | numbers; . >= 0 and . <= $m)' "$f"
  timeout 60 "$tool" plan --algo "$a" "$@" --d 1 --c 0.5 --gantt "$svg" >"$out/$a.txt" \
    2>"$out/err" || { bad "plan --algo $a $* --gantt: $(cat "$out/err")"; return; }
  # text: the makespan line and the send-start column (3rd of the table)
  awk '/^  makespan/ {m = $2} /^ +[0-9]+ +-?[0-9]+ +[-0-9.e+]+/ && $3 != "-" {
         if ($3 + 0 > m + 1e-9) {print "send start " $3 " of rank " $1 " > makespan " m; e = 1}}
       END {exit e}' "$out/$a.txt" >"$out/err" && ok ||
    bad "plan --algo $a $*: $(cat "$out/err")"
  timeout 60 "$tool" plan --algo "$a" "$@" --format dot >"$out/$a.dot" 2>"$out/err" &&
    head -1 "$out/$a.dot" | grep -q '^digraph' && grep -q -- '->' "$out/$a.dot" && ok ||
    bad "plan --algo $a $* --format dot: $(cat "$out/err" "$out/$a.dot" | head -5)"
  local moves combines
  moves=$(jq '[.schedule[][] | select(.kind | test("send|recv"))] | length' "$f")
  combines=$(jq '[.schedule[][] | select(.kind == "combine" or .kind == "recv-combine")]
                 | length' "$f")
  [ "$moves" -gt 0 ] && [ "$combines" -gt 0 ] || bad "plan --algo $a: no transfer or combine"
  [ "$(($(count "$blue" "$svg") - 1))" -eq "$moves" ] && ok ||
    bad "gantt of $a draws $(($(count "$blue" "$svg") - 1)) transfer bars for $moves transfer steps"
  [ "$(($(count "$orange" "$svg") - 1))" -eq "$combines" ] && ok ||
    bad "gantt of $a draws $(($(count "$orange" "$svg") - 1)) combine bars for $combines combines"
}

"$tool" list --format json >"$out/list.json" || bad "list --format json failed"
jcheck 'length >= 20' "$out/list.json"
# the collectives of the registry's rows: what each kind of row runs
jcheck 'all(.[]; (.collectives | length) >= 1 and all(.collectives[];
          IN("reduce", "allreduce", "reduce-scatter", "scan", "exscan")))
        and ([.[] | select(.kind == "tree" or .kind == "pipelined") | .collectives]
             | unique) == [["reduce", "allreduce"]]
        and ([.[] | select(.kind == "dynamic") | .collectives] | unique) == [["reduce"]]
        and (.[] | select(.name == "ring") | .collectives) == ["allreduce"]
        and ([.[] | select(.name | startswith("reduce-scatter-")) | .collectives] | unique)
            == [["reduce-scatter"]]
        and ([.[] | select(.name | startswith("scan-")) | .collectives] | unique)
            == [["scan", "exscan"]]
        and ([.[] | select(.name | test("^(reduce-scatter|scan)-"))] | length) == 6' \
  "$out/list.json"
expect 0 '^scan-chain +exchange +scan,exscan ' -- "$tool" list
expect 0 '^greedy +tree +reduce,allreduce ' -- "$tool" list
while read -r name uses_k uses_costs first; do
  args=(-n $n)
  [ "$uses_k" = true ] && args+=(--K 2)
  [ "$uses_costs" = true ] && args=(--costs "$out/costs.txt")
  if [ "$first" = allreduce ]; then args+=(--allreduce)
  elif [ "$first" != reduce ]; then args+=(--kind "$first"); fi
  plan_all "$name" "${args[@]}"
  jcheck '.kind == "'"$first"'" and .allreduce == ("'"$first"'" == "allreduce")' "$out/$name.json"
done < <(jq -r '.[] | "\(.name) \(.uses_K) \(.uses_costs) \(.collectives[0])"' "$out/list.json")
# exscan, the second collective of the scans, plans too
for a in scan-chain scan-recursive-doubling scan-binomial; do
  plan_all "$a" -n 7 --kind exscan
  jcheck '.kind == "exscan" and .root == null and all(.parent[]; . == -1)' "$out/$a.json"
done

# --kind: the plan says its kind; a collective the algorithm does not run is
# refused with the ones it does; a bad name lists the valid ones
expect 0 '^scan-chain plan: n = 5, d = 1, c = 1, scan$' -- "$tool" plan --kind scan \
  --algo scan-chain -n 5
"$tool" plan --kind scan --algo scan-chain -n 5 >"$out/scan5.txt"
# no root: every row's parent is -; each rank after 0 receives from the one before
awk 'NR > 6 && ($2 != "-" || ($1 > 0 && $4 != $1 - 1)) {e = 1} END {exit e || NR != 11}' \
  "$out/scan5.txt" && ok || bad "plan --kind scan --algo scan-chain -n 5: $(cat "$out/scan5.txt")"
expect 0 ', reduce-scatter, 3 segments' -- "$tool" plan --kind reduce-scatter \
  --algo reduce-scatter-ring -n 3
expect 2 'ring runs allreduce only, not a reduce-scatter' -- "$tool" plan \
  --kind reduce-scatter --algo ring -n 4
expect 2 'binomial runs reduce, allreduce only, not a scan' -- "$tool" plan --kind scan \
  --algo binomial -n 4
expect 2 'scan-binomial runs scan, exscan only, not a reduce-scatter' -- "$tool" plan \
  --kind reduce-scatter --algo scan-binomial -n 4
expect 2 'reduce-scatter-pairwise runs reduce-scatter only, not an? allreduce' -- "$tool" plan \
  --allreduce --algo reduce-scatter-pairwise -n 4
expect 2 "invalid --kind: unknown collective 'gather': need reduce, allreduce, reduce-scatter, scan or exscan" \
  -- "$tool" plan --kind gather --algo binomial -n 4
expect 2 '--root .*a scan has none' -- "$tool" plan --kind scan --algo scan-chain -n 4 --root 1
expect 2 '--root .*a reduce-scatter has none' -- "$tool" plan --kind reduce-scatter \
  --algo reduce-scatter-ring -n 4 --root 0
expect 2 '--kind scan contradicts the earlier --kind allreduce' -- "$tool" plan --allreduce \
  --kind scan --algo scan-chain -n 4
# --allreduce is --kind allreduce; an allreduce's tree still takes a root
"$tool" plan --algo binomial -n 6 --root 2 --allreduce --format json >"$out/all-old.json"
"$tool" plan --algo binomial -n 6 --root 2 --kind allreduce --format json >"$out/all-new.json"
cmp -s "$out/all-old.json" "$out/all-new.json" && ok || bad "--allreduce and --kind allreduce differ"
jcheck '.kind == "allreduce" and .allreduce and .root == 2 and .parent[2] == -1' \
  "$out/all-new.json"
"$tool" plan --algo binomial -n 6 --kind reduce --format json >"$out/red-kind.json"
"$tool" plan --algo binomial -n 6 --format json >"$out/red-default.json"
cmp -s "$out/red-kind.json" "$out/red-default.json" && ok || bad "--kind reduce is not the default"
jcheck '.kind == "reduce" and (.allreduce | not) and .root == 0' "$out/red-kind.json"

# Tree and pipelined algorithms as allreduces: reduce, then broadcast.
for a in binomial pipeline; do
  plan_all "$a" -n 5 --allreduce
  mv "$out/$a.json" "$out/$a-all.json"
  timeout 60 "$tool" plan --algo "$a" -n 5 --d 1 --c 0.5 --format json >"$out/$a-red.json"
  jq -s -e '.[0].makespan > .[1].makespan and .[0].allreduce and (.[1].allreduce | not)' \
    "$out/$a-all.json" "$out/$a-red.json" >/dev/null && ok ||
    bad "plan --algo $a --allreduce is not longer than the reduce, or not marked allreduce"
done
expect 2 'ring runs allreduce only, not a reduce.*--kind allreduce' -- "$tool" plan --algo ring -n 8

# A pipeline's send starts are its segments', before its makespan (they
# were the whole buffer's, 12, 10, 8 ... past a makespan of 1.2).
"$tool" plan --algo pipeline -n 8 --format json >"$out/pipe8.json"
jcheck '.makespan as $m | $m < 2 and all(.send_start[] | numbers; . < $m)' "$out/pipe8.json"

# Against the simulator (one run of constant costs, one-port full duplex,
# as the plan's makespan is defined): a dynamic algorithm's recorded run
# and a segmented plan end where it says.
for a in tree-dyn nc-tree-dyn pipeline pipelined-fibonacci; do
  for nn in 2 7 13; do
    p=$(timeout 60 "$tool" plan --algo "$a" -n $nn --d 1 --c 0.75 --format json | jq .makespan)
    s=$(timeout 60 "$tool" simulate --algo "$a" -n $nn --mean-d 1 --mean-c 0.75 --port full \
      --runs 1 --format json | jq .mean)
    [ -n "$p" ] && [ "$p" = "$s" ] && ok || bad "plan --algo $a -n $nn: makespan $p, simulated $s"
  done
done
# A dynamic plan is a tree to the rank the run ended on.
"$tool" plan --algo tree-dyn -n 9 --format json >"$out/dyn9.json"
jcheck '([.parent[] | select(. == -1)] | length) == 1 and .parent[.root] == -1
        and (.schedule | length) == 9' "$out/dyn9.json"
expect 2 'tree-dyn decides at run time' -- "$tool" plan --algo tree-dyn -n 4 --root 2

echo "cli_plan: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
