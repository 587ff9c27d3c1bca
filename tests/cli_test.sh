#!/usr/bin/env bash
# cli_test.sh: end-to-end checks of the `treduce` command-line contract:
# exit statuses, JSON keys and values, output files, and clear errors.
# usage: cli_test.sh PATH/TO/treduce OUTDIR VERSION (CMake's project version)
set -u
tool=$1
out=$2
version=$3
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# --- normal use ---------------------------------------------------------
expect 0 'greedy-k-transfers' -- "$tool" list
for a in greedy greedy-k-transfers greedy-k-reducers binomial-strategy fibonacci-strategy \
         binomial fibonacci chain flat; do
  expect 0 "^$a " -- "$tool" list
  timeout 60 "$tool" plan --algo "$a" -n 13 --d 1 --c 0.5 --K 3 --format json >"$out/$a.json" \
    || bad "plan --algo $a failed"
  jcheck '.algo and .n == 13 and .d == 1 and .c == 0.5 and (.makespan|type) == "number"
          and .lower_bound <= .makespan and .makespan <= .upper_bound + 1e-9
          and (.parent|length) == 13 and (.send_start|length) == 13
          and .parent[0] == -1 and .send_start[0] == null
          and ([.send_start[1:][] | numbers] | length) == 12' "$out/$a.json"
done
# Theorem 17: with d = c the optimum on F(6) = 8 ranks is d + 3 max(d,c) + c = 5.
"$tool" plan --algo greedy -n 8 --format json >"$out/fib8.json"
jcheck '.makespan == 5' "$out/fib8.json"
# Prop. 13: binomial on 2^4 ranks takes 4 (d + c).
"$tool" plan --algo binomial -n 16 --d 2 --c 0.5 --format json >"$out/bin16.json"
jcheck '.makespan == 10 and .lower_bound == 8' "$out/bin16.json"
# --root moves the result; the root's parent is -1.
"$tool" plan --algo binomial -n 8 --root 3 --noncommutative --format json >"$out/root3.json"
jcheck '.parent[3] == -1 and ([.parent[] | select(. == -1)] | length) == 1' "$out/root3.json"
expect 0 'makespan +5' -- "$tool" plan -n 8
expect 0 '^digraph' -- "$tool" plan -n 8 --format dot
expect 0 'usage: treduce plan' -- "$tool" plan --help
expect 0 'commands:' -- "$tool" --help
# --version / -V: "treduce X.Y.Z", the project's version, alone on stdout.
for v in --version -V; do
  [ "$("$tool" "$v" 2>/dev/null)" = "treduce $version" ] && ok \
    || bad "'treduce $v' does not print 'treduce $version': $("$tool" "$v" 2>&1)"
done
# help CMD is CMD --help; help of no command is the usage, exit 2 naming it.
for c in plan list simulate run steady testbed costs; do
  [ "$("$tool" help "$c" 2>&1)" = "$("$tool" "$c" --help 2>&1)" ] && ok \
    || bad "'treduce help $c' differs from 'treduce $c --help'"
done
expect 0 'commands:' -- "$tool" help
expect 2 "unknown command 'nosuch'" -- "$tool" help nosuch
expect 2 "help takes one command" -- "$tool" help plan run
for ext in png svg; do
  "$tool" plan -n 20 --c 0.5 --gantt "$out/gantt.$ext" >/dev/null || bad "gantt .$ext failed"
  [ -s "$out/gantt.$ext" ] && ok || bad "gantt.$ext missing or empty"
done
head -c 4 "$out/gantt.png" | grep -q PNG && ok || bad "gantt.png is not a PNG"
grep -q '<svg' "$out/gantt.svg" && ok || bad "gantt.svg is not an SVG"
expect 0 'worst binomial' -- "$tool" ratios --n-max 60 --out "$out/ratios"
[ "$(wc -l <"$out/ratios/ratios.csv")" -eq 60 ] && ok || bad "ratios.csv should have 60 lines"
head -1 "$out/ratios/ratios.csv" | grep -qx 'n,binomial_over_opt,fibonacci_over_opt' && ok \
  || bad "ratios.csv header"
[ -s "$out/ratios/ratios.png" ] && ok || bad "ratios.png missing"
expect 0 'lower bound' -- "$tool" demo --out "$out/demo"
[ -s "$out/demo/greedy-gantt.png" ] && ok || bad "demo gantt missing"

# --- bad input: clear message naming the value, status 2 (1 for resources) ---
expect 2 "unknown algorithm 'nope'.*valid names: greedy" -- "$tool" plan --algo nope -n 4
expect 2 'n = 0 is out of range' -- "$tool" plan -n 0
expect 2 'n = -3 is out of range' -- "$tool" plan -n -3
expect 2 "invalid -n 'abc'" -- "$tool" plan -n abc
expect 2 "invalid -n '12x'" -- "$tool" plan -n 12x
expect 2 'missing -n' -- "$tool" plan
expect 2 'd = -1 is invalid' -- "$tool" plan -n 4 --d -1
expect 2 "invalid --d 'nan'" -- "$tool" plan -n 4 --d nan
expect 2 "invalid --c 'inf'" -- "$tool" plan -n 4 --c inf
expect 2 "invalid --c ''" -- "$tool" plan -n 4 --c ''
expect 2 'needs K >= 1' -- "$tool" plan --algo greedy-k-transfers -n 6
expect 2 'needs K >= 1 \(got K = 0\)' -- "$tool" plan --algo greedy-k-reducers -n 6 --K 0
expect 2 'root = 5 is not a rank' -- "$tool" plan -n 5 --root 5
expect 2 "invalid --format 'xml'" -- "$tool" plan -n 5 --format xml
expect 2 "unknown option '--bogus'" -- "$tool" plan -n 5 --bogus
expect 2 "needs a value" -- "$tool" plan -n
expect 2 "out of range" -- "$tool" plan -n 99999999999999999999
expect 1 'too large' -- "$tool" plan -n 2000000000
expect 2 'root.*rank 1' -- "$tool" plan --algo chain -n 4 --root 1 --noncommutative
expect 2 '\.png or \.svg' -- "$tool" plan -n 4 --gantt "$out/x.txt"
expect 1 'cannot write' -- "$tool" plan -n 4 --gantt /nonexistent/dir/x.png
# Without PLplot's cairo driver (plplot-driver-cairo) a figure is a clear
# error, exit 1, not PLplot's exit; no file is written and an old one stays
# whole: a drivers folder with PLplot's other drivers only, and an empty one.
drivers=$(pkg-config --variable=drvdir plplot)
mkdir -p "$out/drv-nocairo" "$out/drv-none"
for f in "$drivers"/*; do
  case ${f##*/} in cairo.*) ;; *) ln -sf "$f" "$out/drv-nocairo/" ;; esac
done
for d in drv-nocairo drv-none; do
  for ext in png svg; do
    rm -f "$out/nodrv.$ext"
    PLPLOT_DRV_DIR=$out/$d expect 1 "${ext}cairo.*plplot-driver-cairo" -- \
      "$tool" plan -n 4 --gantt "$out/nodrv.$ext"
    [ ! -e "$out/nodrv.$ext" ] && ok || bad "$d: plan --gantt left $out/nodrv.$ext behind"
  done
  echo old >"$out/old.png"
  PLPLOT_DRV_DIR=$out/$d "$tool" plan -n 4 --gantt "$out/old.png" >/dev/null 2>&1
  [ "$(cat "$out/old.png")" = old ] && ok || bad "$d: a failed plan --gantt changed old.png"
done
expect 2 'out of range' -- "$tool" ratios --n-max 1
expect 2 "unknown command 'frobnicate'" -- "$tool" frobnicate
expect 2 "unexpected" -- "$tool" list extra

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
