#!/usr/bin/env bash
# cli_output_test.sh: every file a command writes is written whole or not
# at all (docs/CLI.md, "Output files"; tools/cli_output.c):
#   - each command that writes files leaves them complete and no temporary
#     (a name with .tmp- in its folder);
#   - a command interrupted by SIGINT (or SIGTERM) midway leaves the file of
#     an earlier complete run as it was, and no temporary: `treduce sweep`,
#     which computes for seconds after opening its CSV;
#   - a writer that fails leaves the earlier file, and its message names
#     the file, not the temporary; /dev/stdout is written in place.
# usage: cli_output_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# no_temporaries DIR WHAT: nothing of cli_out's left behind in DIR.
no_temporaries() {
  local left
  left=$(find "$1" -name '*.tmp-*' 2>/dev/null)
  [ -z "$left" ] && ok || bad "$2 left temporaries: $left"
}

# --- every command that writes files --------------------------------------
d=$out/all
mkdir -p "$d"
expect 0 'makespan' -- "$tool" plan -n 6 --gantt "$d/g.svg"
grep -q '</svg>' "$d/g.svg" && ok || bad "plan --gantt: no complete SVG"
expect 0 'worst binomial' -- "$tool" ratios --n-max 12 --out "$d"
[ "$(wc -l <"$d/ratios.csv")" -eq 12 ] && ok || bad "ratios.csv is not 12 lines"
expect 0 'wrote .*fig4.png' -- "$tool" sweep fig4 --runs 5 --threads 1 --out "$d"
[ "$(wc -l <"$d/fig4.csv")" -eq 53 ] && ok || bad "fig4.csv is not 1 + 13 x 4 lines"
expect 0 '' -- "$tool" costs generate -n 4 --out "$d/c.txt"
grep -q '^n 4$' "$d/c.txt" && ok || bad "costs --out: no cost file"
expect 0 '' -- "$tool" platform generate --out "$d/p.json"
jcheck '.nodes | length > 0' "$d/p.json"
expect 0 'profile written' -- "$tool" calibrate -p 2 --out "$d/prof.json"
jcheck '.treduce_profile == 2' "$d/prof.json"
expect 0 'platform written' -- "$tool" calibrate --matrix -p 2 --costs-out "$d/cm.txt" \
  --platform-out "$d/pm.json"
grep -q '^n 2$' "$d/cm.txt" && ok || bad "calibrate --costs-out: no cost file"
jcheck '.links | length == 2' "$d/pm.json"
expect 0 'results verified' -- "$tool" bench -p 2 --sizes 8 --ops sum --kinds reduce \
  --algos binomial --iters 2 --tune 0 --out "$d/bench"
for f in bench.csv ratios.csv profile-sum.json time-reduce-sum.png ratio-sum.png; do
  [ -s "$d/bench/$f" ] && ok || bad "bench did not write $f"
done
no_temporaries "$d" "the writing commands"

# --- a failing writer keeps the earlier file --------------------------------
echo "earlier" >"$d/keep.txt"
expect 2 'keep\.txt.*\.png or \.svg' -- "$tool" plan -n 4 --gantt "$d/keep.txt"
[ "$(cat "$d/keep.txt")" = earlier ] && ok || bad "a failed --gantt changed keep.txt"
if "$tool" plan -n 4 --gantt "$d/keep.txt" 2>&1 | grep -q '\.tmp-'; then
  bad "the error names the temporary"
else ok; fi
expect 1 'cannot write .*/nonexistent/x.svg' -- "$tool" plan -n 4 --gantt "$d/nonexistent/x.svg"
expect 0 '^n 3$' -- "$tool" costs generate -n 3 --out /dev/stdout
no_temporaries "$d" "the failing writers"

# --- interrupted: the earlier complete file stays ----------------------------
# interrupt SIGNAL FIG: a complete run, then a long one killed by SIGNAL once
# its temporary exists; the CSV must be the complete run's, the exit status
# the signal's.
interrupt() {
  local sig=$1 fig=$2 dir=$out/$1-$2 pid status i
  mkdir -p "$dir"
  timeout 120 "$tool" sweep "$fig" --runs 2 --threads 1 --out "$dir" >/dev/null ||
    { bad "sweep $fig --runs 2 failed"; return; }
  cp "$dir/$fig.csv" "$dir/before.csv"
  cp "$dir/$fig.png" "$dir/before.png"
  # a background job would ignore SIGINT: give the tool the default action
  env --default-signal="$sig" "$tool" sweep "$fig" --runs 1000000 --threads 1 \
    --out "$dir" >/dev/null 2>&1 &
  pid=$!
  for ((i = 0; i < 200; i++)); do # up to 10 s for the temporary to appear
    [ -n "$(find "$dir" -name "*.tmp-*")" ] && break
    sleep 0.05
  done
  [ -n "$(find "$dir" -name "*.tmp-*")" ] && ok || bad "sweep $fig wrote no temporary in 10 s"
  sleep 0.3 # midway: rows are being written into the temporary
  kill -s "$sig" "$pid"
  wait "$pid"
  status=$?
  [ "$status" -ge 128 ] && [ "$(kill -l "$status")" = "$sig" ] && ok ||
    bad "sweep $fig killed by $sig exited $status"
  cmp -s "$dir/$fig.csv" "$dir/before.csv" && cmp -s "$dir/$fig.png" "$dir/before.png" && ok ||
    bad "sweep $fig interrupted by $sig changed $fig.csv or $fig.png"
  no_temporaries "$dir" "sweep $fig interrupted by $sig"
}
interrupt INT fig4
interrupt TERM fig5

echo "cli_output: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
