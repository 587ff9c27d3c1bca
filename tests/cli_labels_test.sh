#!/usr/bin/env bash
# cli_labels_test.sh: what the tool says about its inputs is what it used
# (docs/CLI.md):
#   - an unknown --op lists every operator the command takes (the built-in
#     ones, the checkers matrix and interval, the costly sleep-sum and
#     spin-sum);
#   - run names the elements it reduced: a checker's, not --type's;
#   - plan prints no bound's name without its value: a bound that does not
#     apply (heterogeneous costs, an allreduce) says "none" and why;
#   - simulate --costs / --preset names the costs it simulated and their
#     means, not the homogeneous defaults;
#   - a long run reports progress on stderr when it is not a terminal: a
#     line every TREDUCE_PROGRESS seconds with the share done and the time
#     left, and nothing on stdout.
# usage: cli_labels_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# --- unknown operators --------------------------------------------------------
ops='sum prod min max land lor band bor bxor matrix interval sleep-sum spin-sum'
for c in run calibrate; do
  if [ "$c" = run ]; then
    text=$(timeout 60 "$tool" run -p 2 --count 4 --op nosuch --d 1e-6 --c 1e-6 2>&1)
  else
    text=$(timeout 60 "$tool" calibrate -p 2 --op nosuch 2>&1)
  fi
  status=$?
  [ "$status" -eq 2 ] && grep -q "unknown operator 'nosuch'" <<<"$text" && ok ||
    bad "$c --op nosuch: exit $status, $text"
  for o in $ops; do
    grep -qw -- "$o" <<<"$text" && ok || bad "$c --op nosuch does not list '$o': $text"
  done
done

# --- the elements run reduced -----------------------------------------------------
for o in matrix interval; do
  timeout 60 "$tool" run -p 3 --count 4 --op "$o" --d 1e-6 --c 1e-6 --format json \
    >"$out/$o.json" || bad "run --op $o failed"
  jcheck ".type == \"$([ $o = matrix ] && echo matrix2x2 || echo interval)\"
          and .bytes == 4 * $([ $o = matrix ] && echo 16 || echo 16)" "$out/$o.json"
done
expect 0 'reduce of 4 x matrix2x2 \(64 bytes\) with matrix' -- "$tool" run -p 2 --count 4 \
  --op matrix --d 1e-6 --c 1e-6
expect 0 'reduce of 4 x int32 \(16 bytes\) with sum' -- "$tool" run -p 2 --count 4 \
  --type int32 --d 1e-6 --c 1e-6
expect 0 'reduce of 4 x double \(32 bytes\) with sleep-sum' -- "$tool" run -p 2 --count 4 \
  --op sleep-sum --op-cost 1 --d 1e-6 --c 1e-6

# --- bounds that do not apply ---------------------------------------------------
"$tool" costs generate -n 6 --seed 5 --out "$out/c6.txt" || bad "costs generate failed"
for args in "--algo binomial --costs $out/c6.txt" "--algo greedy --preset fib-root-slow -n 6" \
            "--algo binomial -n 6 --allreduce" "--algo pipeline -n 6"; do
  # shellcheck disable=SC2086
  line=$("$tool" plan $args | grep 'upper bound')
  grep -qE '^  upper bound  (none \(.+\)|[0-9.e+-]+  \(.+\))$' <<<"$line" && ok ||
    bad "plan $args: '$line' is neither a value with its source nor 'none (why)'"
  # shellcheck disable=SC2086
  "$tool" plan $args --format json >"$out/ub.json"
  jcheck '(.upper_bound == null) == (.upper_bound_source | startswith("none"))' "$out/ub.json"
done
expect 0 'upper bound  none \(heterogeneous costs\)' -- "$tool" plan --algo binomial \
  --costs "$out/c6.txt"
expect 0 'upper bound  none \(allreduce\)' -- "$tool" plan --algo binomial -n 6 --allreduce
expect 0 'upper bound  6  \(Prop. 6\)' -- "$tool" plan -n 8

# --- the costs simulate used ------------------------------------------------------
# the file's means, computed here: off-diagonal d, and c
read -r md mc < <(awk '/^#/ || /^n / {next} {r++; if (r <= 6) {for (j = 1; j <= NF; j++)
  if (j != r) {d += $j; nd++}} else {for (j = 1; j <= NF; j++) c += $j}}
  END {printf "%.6g %.6g\n", d / nd, c / 6}' "$out/c6.txt")
text=$("$tool" simulate --algo binomial -n 6 --costs "$out/c6.txt" --runs 10)
grep -q "heterogeneous costs from $out/c6.txt" <<<"$text" && grep -q "mean d $md" <<<"$text" &&
  grep -q "mean c $mc" <<<"$text" && ok ||
  bad "simulate --costs does not name the file and its means ($md, $mc): $text"
"$tool" simulate --algo binomial -n 6 --costs "$out/c6.txt" --runs 10 --format json \
  >"$out/sim.json"
jcheck ".costs == \"$out/c6.txt\" and .heterogeneous == true
        and ((.mean_d - $md) | . * .) < 1e-10 * $md * $md
        and ((.mean_c - $mc) | . * .) < 1e-10 * $mc * $mc" "$out/sim.json"
expect 0 'preset lower-to-higher.*slow 3' -- "$tool" simulate --algo binomial -n 6 \
  --preset lower-to-higher --slow 3 --runs 10
expect 0 'const costs, mean d 1, mean c 0' -- "$tool" simulate --algo binomial -n 6 --runs 10

# --- progress when stderr is not a terminal -------------------------------------------
TREDUCE_PROGRESS=0.2 timeout 120 "$tool" simulate --algo binomial -n 64 --runs 400000 \
  --threads 1 >"$out/p.out" 2>"$out/p.err" || bad "simulate with progress failed"
lines=$(grep -cE '^treduce simulate: [0-9]+% \([0-9]+/400000 runs\), about [0-9.]+ s left$' \
  "$out/p.err")
[ "$lines" -ge 2 ] && ok || bad "$lines progress lines on stderr: $(head -5 "$out/p.err")"
grep -q '^binomial on n = 64' "$out/p.out" && ! grep -q '%' "$out/p.out" && ok ||
  bad "the progress went to stdout: $(head -3 "$out/p.out")"
TREDUCE_PROGRESS=off timeout 120 "$tool" simulate --algo binomial -n 64 --runs 400000 \
  --threads 1 >/dev/null 2>"$out/p.err"
[ ! -s "$out/p.err" ] && ok || bad "TREDUCE_PROGRESS=off still printed: $(head -3 "$out/p.err")"
"$tool" simulate --algo binomial -n 8 --runs 100 2>"$out/p.err" >/dev/null
[ ! -s "$out/p.err" ] && ok || bad "a short run printed progress: $(head -3 "$out/p.err")"
expect 2 "TREDUCE_PROGRESS='soon'" -- env TREDUCE_PROGRESS=soon "$tool" simulate --algo \
  binomial -n 8 --runs 10

echo "cli_labels: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
