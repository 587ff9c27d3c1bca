#!/usr/bin/env bash
# cli_sim_test.sh: end-to-end checks of `treduce simulate` and `treduce markov`
# (docs/SIMULATION.md): JSON keys and values against closed forms computed
# here with jq (Markov chain of Benoit et al. Sec. 5, constant-cost runs
# against `treduce plan`, Theorem 1's worst case, Figure 3), reproducibility
# across thread counts, --kind (every other collective's plans against
# `treduce plan`), and clear usage errors (exit 2, 1 for I/O).
# usage: cli_sim_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# sim NAME ARGS...: runs simulate with JSON output into $out/NAME.json.
sim() {
  local name=$1
  shift
  timeout 60 "$tool" simulate "$@" --format json >"$out/$name.json" \
    || bad "simulate $* failed"
}

# --- simulate: JSON contract, every algorithm ------------------------------
for a in greedy greedy-k-transfers greedy-k-reducers binomial-strategy fibonacci-strategy \
         binomial fibonacci chain flat tree-dyn nc-tree-dyn; do
  sim "$a" --algo "$a" -n 16 --K 3 --dist gamma --cv 0.5 --mean-c 0.5 --runs 2000 --seed 3
  jcheck '.algo == "'"$a"'" and .n == 16 and .runs == 2000
          and ([.mean, .std, .q10, .q50, .q90, .min, .max] | map(type) | unique) == ["number"]
          and .std > 0 and .min <= .q10 and .q10 <= .q50 and .q50 <= .q90 and .q90 <= .max
          and .min <= .mean and .mean <= .max and .dist == "gamma" and .cv == 0.5
          and .port == "half" and .seed == 3' "$out/$a.json"
done

# Constant costs: every run equals the plan's makespan (docs/SIMULATION.md).
for a in greedy binomial fibonacci chain flat; do
  sim "const-$a" --algo "$a" -n 13 --mean-d 2 --mean-c 0.5 --runs 20
  timeout 60 "$tool" plan --algo "$a" -n 13 --d 2 --c 0.5 --format json >"$out/plan-$a.json" \
    || bad "plan --algo $a failed"
  want=$(jq .makespan "$out/plan-$a.json")
  jcheck '.std == 0 and .min == .max and (.mean - '"$want"' | fabs) < 1e-9' \
    "$out/const-$a.json"
done
# Prop. 13 with d = 2, c = 0.5 on 16 ranks: 4 (d + c) = 10.
sim bin16 --algo binomial -n 16 --mean-d 2 --mean-c 0.5 --runs 5
jcheck '.mean == 10 and .q90 == 10' "$out/bin16.json"

# Same seed, any thread count: identical output; another seed differs.
sim thr1 --algo tree-dyn -n 40 --dist exp --runs 3000 --seed 9 --threads 1
sim thr2 --algo tree-dyn -n 40 --dist exp --runs 3000 --seed 9 --threads 2
sim seed10 --algo tree-dyn -n 40 --dist exp --runs 3000 --seed 10 --threads 2
cmp -s "$out/thr1.json" "$out/thr2.json" && ok || bad "--threads 1 and 2 differ"
cmp -s "$out/thr1.json" "$out/seed10.json" && bad "--seed 9 and 10 agree" || ok

# Theorem 1's instance: lower-to-higher with D = 3 on 16 ranks takes 3 log2 16.
for a in binomial tree-dyn; do
  sim "l2h-$a" --algo "$a" -n 16 --preset lower-to-higher --slow 3 --runs 3
  jcheck '.mean == 12 and .std == 0' "$out/l2h-$a.json"
done

# Figure 3 (Benoit et al. Sec. 4): 3->2 and 5->4 end first; nc-tree-dyn needs
# 4 steps, tree-dyn 1.1 + 1 + 1.
{
  echo "n 8"
  for i in 0 1 2 3 4 5 6 7; do
    row=""
    for j in 0 1 2 3 4 5 6 7; do
      v=1
      [ "$i" -eq "$j" ] && v=0
      { [ "$i$j" = 10 ] || [ "$i$j" = 76 ]; } && v=1.1
      row="$row $v"
    done
    echo "$row"
  done
  echo "0 0 0 0 0 0 0 0"
} >"$out/fig3.txt"
sim fig3-nc --algo nc-tree-dyn -n 8 --costs "$out/fig3.txt" --runs 2
jcheck '.mean == 4' "$out/fig3-nc.json"
sim fig3-td --algo tree-dyn -n 8 --costs "$out/fig3.txt" --runs 2
jcheck '(.mean - 3.1 | fabs) < 1e-12' "$out/fig3-td.json"

# --kind: the other collectives simulate their plans; with constant costs,
# one-port full duplex (how a plan's makespan is defined), every run ends at
# the plan's makespan; random costs spread them
for ak in scan-chain:scan scan-recursive-doubling:exscan scan-binomial:scan \
          reduce-scatter-ring:reduce-scatter reduce-scatter-halving:reduce-scatter \
          reduce-scatter-pairwise:reduce-scatter ring:allreduce binomial:allreduce; do
  a=${ak%%:*} k=${ak#*:}
  sim "kind-$a" --algo "$a" --kind "$k" -n 7 --mean-d 1 --mean-c 0.5 --port full --runs 5
  want=$(timeout 60 "$tool" plan --algo "$a" --kind "$k" -n 7 --d 1 --c 0.5 --format json |
         jq .makespan)
  jcheck '.kind == "'"$k"'" and .std == 0 and (.mean - '"${want:-0}"' | fabs) < 1e-9
          and .mean > 0' "$out/kind-$a.json"
  sim "kind-$a-exp" --algo "$a" --kind "$k" -n 7 --dist exp --runs 200 --seed 4
  jcheck '.kind == "'"$k"'" and .std > 0 and .min < .max' "$out/kind-$a-exp.json"
done
sim kind-default --algo binomial -n 7 --runs 2
jcheck '.kind == "reduce"' "$out/kind-default.json"
expect 0 '^scan-chain on n = 5 ranks \(scan\), 10 runs' -- "$tool" simulate --algo scan-chain \
  --kind scan -n 5 --runs 10
expect 2 'binomial runs reduce, allreduce only, not a reduce-scatter' -- "$tool" simulate \
  --algo binomial --kind reduce-scatter -n 4 --runs 2
expect 2 'scan-chain runs scan, exscan only, not a reduce' -- "$tool" simulate \
  --algo scan-chain -n 4 --runs 2
expect 2 "invalid --kind: unknown collective 'prefix': need reduce, allreduce, reduce-scatter, scan or exscan" \
  -- "$tool" simulate --algo scan-chain --kind prefix -n 4
expect 2 '--root .*an exscan has none' -- "$tool" simulate --algo scan-chain --kind exscan \
  -n 4 --root 1

expect 0 'mean .*std' -- "$tool" simulate --algo fibonacci -n 8 --runs 100
expect 0 'usage: treduce simulate' -- "$tool" simulate --help
expect 0 'usage: treduce markov' -- "$tool" markov --help

# --- markov: closed form of Sec. 5 (docs/SIMULATION.md) ----------------------
timeout 60 "$tool" markov -n 64 --format json >"$out/markov64.json" || bad "markov -n 64"
jcheck '.n == 64
        and (.mean - (2 * ([range(1; 32)] | map(1 / .) | add) + 2 / 64) | fabs) < 1e-9
        and (.variance - (2 * ([range(1; 32)] | map(1 / (. * .)) | add) + 4 / (64 * 64))
             | fabs) < 1e-9' "$out/markov64.json"
timeout 60 "$tool" markov -n 64 --mean-d 2 --format json >"$out/markov64x2.json" \
  || bad "markov --mean-d 2"
if jq -e -n --slurpfile a "$out/markov64.json" --slurpfile b "$out/markov64x2.json" \
     '($b[0].mean - 2 * $a[0].mean | fabs) < 1e-9
      and ($b[0].variance - 4 * $a[0].variance | fabs) < 1e-9' >/dev/null; then
  ok
else
  bad "markov --mean-d 2 should double the mean and quadruple the variance"
fi
# odd n starts with the slot full: E = 2 H((n-1)/2)
timeout 60 "$tool" markov -n 63 --format json >"$out/markov63.json" || bad "markov -n 63"
jcheck '(.mean - 2 * ([range(1; 32)] | map(1 / .) | add) | fabs) < 1e-9' "$out/markov63.json"
expect 0 'expected makespan +8\.0857' -- "$tool" markov -n 64

# --- bad input: clear message naming the value, status 2 (1 for I/O) --------
printf 'n 2\n0 1\n1 abc\n0 0\n' >"$out/bad.txt"
printf 'n 3\n0 1 1\n1 0 1\n1 1 0\n0 0 0\n' >"$out/n3.txt"
expect 2 'n = 0 is out of range' -- "$tool" simulate --algo binomial -n 0
expect 2 '--runs 0 is invalid' -- "$tool" simulate --algo binomial -n 4 --runs 0
expect 2 'cv = -1 is invalid' -- "$tool" simulate --algo binomial -n 4 --dist gamma --cv -1
expect 2 "invalid --dist 'foo'" -- "$tool" simulate --algo binomial -n 4 --dist foo
expect 2 "invalid --port 'foo'" -- "$tool" simulate --algo binomial -n 4 --port foo
expect 2 'mean-d = -1 is invalid' -- "$tool" simulate --algo binomial -n 4 --mean-d -1
expect 2 "invalid --mean-c 'nan'" -- "$tool" simulate --algo binomial -n 4 --mean-c nan
expect 2 'missing --algo' -- "$tool" simulate -n 4
expect 2 "bad\.txt:3: invalid transfer time 'abc'" -- \
  "$tool" simulate --algo binomial -n 2 --costs "$out/bad.txt"
expect 2 'for n = 3 ranks.*n = 2' -- "$tool" simulate --algo binomial -n 2 --costs "$out/n3.txt"
expect 1 'cannot read cost file' -- "$tool" simulate --algo binomial -n 2 --costs "$out/none.txt"
expect 2 "unknown algorithm 'nope'.*valid names: .*tree-dyn" -- \
  "$tool" simulate --algo nope -n 4
expect 2 "unknown cost preset 'nope'.*lower-to-higher" -- \
  "$tool" simulate --algo binomial -n 4 --preset nope
expect 2 'exclude each other' -- \
  "$tool" simulate --algo binomial -n 2 --costs "$out/n3.txt" --preset fib-root-slow
expect 2 'nc-tree-dyn' -- "$tool" simulate --algo tree-dyn -n 4 --noncommutative
expect 2 'exponential' -- "$tool" simulate --algo binomial -n 4 --dist exp --cv 0.5
expect 2 '--threads -1 is invalid' -- "$tool" simulate --algo binomial -n 4 --threads -1
expect 2 "unknown option '--bogus'" -- "$tool" simulate --algo binomial -n 4 --bogus
expect 2 'n = 0 is out of range' -- "$tool" markov -n 0
expect 2 'mean-d = 0 is invalid' -- "$tool" markov -n 4 --mean-d 0
expect 2 "invalid -n 'abc'" -- "$tool" markov -n abc
expect 2 "unexpected or incomplete argument '--bogus'" -- "$tool" markov -n 4 --bogus

echo "cli_sim: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
