#!/usr/bin/env bash
# cli_hetero_test.sh: heterogeneous costs on the command line: `treduce
# costs` (generate, preset), `treduce plan --costs/--preset`, `treduce
# simulate` and `treduce run --costs` with hetero-greedy and hetero-exact,
# and their bad input (exit 2 with a message naming it).
# usage: cli_hetero_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# --- cost files ---------------------------------------------------------
"$tool" costs generate -n 6 --seed 4 --out "$out/a.txt" || bad "generate"
"$tool" costs generate -n 6 --seed 4 >"$out/b.txt" || bad "generate to stdout"
cmp -s "$out/a.txt" "$out/b.txt" && ok || bad "the same seed gave two files"
"$tool" costs generate -n 6 --seed 5 --out "$out/c.txt"
cmp -s "$out/a.txt" "$out/c.txt" && bad "seeds 4 and 5 gave one file" || ok
# nodes: d[i][j] = max(f_i, f_j) is symmetric; every value within [1, spread]
"$tool" costs generate -n 5 --model nodes --spread 3 --out "$out/nodes.txt"
awk 'BEGIN {r = 0} /^#/ {next} $1 == "n" {n = $2; next} r < n {for (j = 1; j <= n; j++) d[r, j - 1] = $j; r++}
     END {for (i = 0; i < n; i++) for (j = 0; j < n; j++) {
            if (d[i, j] != d[j, i]) exit 1
            if (i != j && (d[i, j] < 1 || d[i, j] > 3)) exit 1 }
          if (n != 5 || r != 5) exit 1}' "$out/nodes.txt" \
  && ok || bad "nodes costs not symmetric or outside [1, 3]"
"$tool" costs preset lower-to-higher -n 4 --D 3 --out "$out/l2h.txt"
grep -qx '3 3 3 1' "$out/l2h.txt" && ok || bad "lower-to-higher row 2: $(cat "$out/l2h.txt")"
expect 0 'hetero-greedy .*--costs' -- "$tool" list
"$tool" list --format json >"$out/list.json"
jcheck '[.[] | select(.uses_costs) | .name] == ["hetero-greedy", "hetero-exact"] and
        ([.[] | select(.commutative_only) | .name] | index("tree-dyn") != null) and
        [.[] | select(.reproducible | not) | .name] == ["tree-dyn", "nc-tree-dyn", "star"] and
        [.[] | select(.needs_factorial_p) | .name] == ["star", "star-reduce-bcast"]' \
  "$out/list.json"

# --- plans under the costs ------------------------------------------------
"$tool" costs generate -n 8 --seed 2 --model nodes --out "$out/c8.txt"
for a in hetero-exact hetero-greedy binomial greedy; do
  "$tool" plan --algo "$a" --costs "$out/c8.txt" --format json >"$out/$a.json" || bad "plan $a"
done
jcheck '.heterogeneous and .n == 8 and (.parent | length) == 8 and .lower_bound <= .makespan' \
  "$out/hetero-exact.json"
jq -s -e '.[0].makespan <= .[1].makespan * (1 + 1e-12) and
          .[1].makespan <= .[2].makespan and .[1].makespan <= .[3].makespan' \
  "$out/hetero-exact.json" "$out/hetero-greedy.json" "$out/binomial.json" "$out/greedy.json" \
  >/dev/null && ok || bad "exact <= hetero-greedy <= binomial, greedy does not hold"
# Benoit Sec. 4, lower-to-higher, D = 5, c = d = 1, n = 9: the optimum sends
# once over a slow link (5 + 1 + Alg. 1 on 8 ranks, 5 = 11); binomial takes
# ceil(log2 9) slow rounds (4 x (5 + 1) = 24, less where its round is fast)
expect 0 'makespan +11$' -- "$tool" plan --algo hetero-exact -n 9 --preset lower-to-higher --D 5
expect 0 'makespan +11$' -- "$tool" plan --algo hetero-greedy -n 9 --preset lower-to-higher --D 5
expect 0 'makespan +21$' -- "$tool" plan --algo binomial -n 9 --preset lower-to-higher --D 5
expect 0 'lower bound +11 ' -- "$tool" plan --algo binomial -n 9 --preset lower-to-higher --D 5
# simulated with constant costs: the plan's makespan
"$tool" simulate --algo hetero-greedy -n 8 --costs "$out/c8.txt" --runs 1 --format json \
  >"$out/sim.json" || bad "simulate"
jq -s -e '(.[0].mean - .[1].makespan | fabs) <= 1e-9 * .[1].makespan' "$out/sim.json" \
  "$out/hetero-greedy.json" >/dev/null && ok || bad "simulated != planned"

# --- real runs (threads) ----------------------------------------------------
"$tool" costs generate -n 5 --seed 9 --out "$out/c5.txt"
for a in hetero-greedy hetero-exact; do
  "$tool" run --algo "$a" -p 5 --count 3000 --type int64 --root 2 --costs "$out/c5.txt" \
    --iters 2 --format json >"$out/run-$a.json" || bad "run $a"
  jcheck '.verified == true and (.predicted_us | type) == "number"' "$out/run-$a.json"
done
"$tool" run --algo hetero-greedy -p 5 --count 3000 --allreduce --segment 4096 \
  --costs "$out/c5.txt" --iters 2 --format json >"$out/run-all.json" || bad "run allreduce"
jcheck '.verified == true' "$out/run-all.json"

# --- bad input ---------------------------------------------------------------
expect 2 'hetero-greedy plans for heterogeneous costs' -- "$tool" plan --algo hetero-greedy -n 4
"$tool" costs generate -n 10 --out "$out/c10.txt"
expect 2 'n = 10 is above its limit of 9' -- "$tool" plan --algo hetero-exact --costs "$out/c10.txt"
expect 2 'for n = 8 ranks, the model has n = 7' -- "$tool" plan --algo hetero-greedy -n 7 \
  --costs "$out/c8.txt"
expect 2 'exclude each other' -- "$tool" plan -n 8 --costs "$out/c8.txt" --preset fib-root-slow
expect 2 'commutative operators only' -- "$tool" plan --algo hetero-greedy --costs "$out/c8.txt" \
  --noncommutative
expect 2 "unknown cost preset 'slow'" -- "$tool" plan -n 4 --preset slow
expect 2 "unknown random cost model 'ring'" -- "$tool" costs generate -n 4 --model ring
expect 2 'spread = 0.5 is invalid' -- "$tool" costs generate -n 4 --spread 0.5
expect 2 "expected 'generate' or 'preset NAME'" -- "$tool" costs
expect 2 'missing -n' -- "$tool" costs generate
expect 1 'cannot write .*/no/such/dir/x.txt: No such file' -- "$tool" costs generate -n 3 --out "$out/no/such/dir/x.txt"
expect 1 'cannot read cost file' -- "$tool" plan --costs "$out/none.txt"
expect 2 'commutative operators only' -- "$tool" run --algo hetero-greedy -p 5 --count 10 \
  --op matrix --costs "$out/c5.txt"
expect 2 'for n = 5 ranks, the plan has n = 4' -- "$tool" run --algo hetero-greedy -p 4 --count 10 \
  --costs "$out/c5.txt"
expect 2 'excludes --d' -- "$tool" run --algo hetero-greedy -p 5 --count 10 --costs "$out/c5.txt" \
  --d 1 --c 1

echo "cli_hetero: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
