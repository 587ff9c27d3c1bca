#!/usr/bin/env bash
# cli_spelling_test.sh: one spelling per concept across commands
# (docs/CLI.md, "Spellings"), the older ones still accepted:
#   the wire                       --wire NAME      (older: --transport NAME)
#   a preset's slow-transfer factor --slow X        (older: --D X)
#   the platform file              --platform FILE  (older: -p FILE)
#   the number of ranks            -p P             (run, calibrate, bench)
# Each spelling gives what its older one gives, in every command that takes
# the concept; the help texts and the docs use the spelling, naming the
# older one only as an alias.
# usage: cli_spelling_test.sh PATH/TO/treduce OUTDIR DOCS_DIR
set -u
tool=$1
out=$2
docs=$3
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# same WHAT CMD1 -- CMD2: both exit alike and print the same (stdout and
# stderr, the option's name taken out of error lines).
same() {
  local what=$1 a b sa sb
  shift
  local -a one=()
  while [ "$1" != -- ]; do one+=("$1"); shift; done
  shift
  a=$(timeout 60 "${one[@]}" 2>&1); sa=$?
  b=$(timeout 60 "$@" 2>&1); sb=$?
  if [ "$sa" -ne "$sb" ] || [ "$a" != "$b" ]; then
    bad "$what: '${one[*]}' (exit $sa) and '$*' (exit $sb) differ: $(diff <(echo "$a") \
      <(echo "$b") | head -6)"
  else ok; fi
}

# --- --slow X / --D X --------------------------------------------------------
same "plan --slow" "$tool" plan -n 6 --preset lower-to-higher --slow 3 --format json -- \
  "$tool" plan -n 6 --preset lower-to-higher --D 3 --format json
same "simulate --slow" "$tool" simulate --algo binomial -n 6 --preset fib-root-slow --slow 3 \
  --runs 20 --format json -- \
  "$tool" simulate --algo binomial -n 6 --preset fib-root-slow --D 3 --runs 20 --format json
same "costs preset --slow" "$tool" costs preset higher-to-lower -n 5 --slow 3 -- \
  "$tool" costs preset higher-to-lower -n 5 --D 3
expect 0 '^n 5$' -- "$tool" costs preset higher-to-lower -n 5 --slow 3
"$tool" plan -n 6 --preset lower-to-higher --slow 3 --format json >"$out/slow.json"
"$tool" plan -n 6 --preset lower-to-higher --format json >"$out/default.json"
jq -s -e '.[0].makespan > .[1].makespan' "$out/slow.json" "$out/default.json" >/dev/null && ok ||
  bad "plan --slow 3 is not slower than the default 2"

# --- --platform FILE / -p FILE ------------------------------------------------
"$tool" platform generate --seed 4 --lans 2 --out "$out/pf.json" || bad "platform generate failed"
same "platform show --platform" "$tool" platform show --platform "$out/pf.json" -- \
  "$tool" platform show -p "$out/pf.json"
same "steady --platform" "$tool" steady --problem gossip --platform "$out/pf.json" --format json -- \
  "$tool" steady --problem gossip -p "$out/pf.json" --format json
same "testbed up --platform" "$tool" testbed up --platform "$out/none.json" --name t-spell -- \
  "$tool" testbed up -p "$out/none.json" --name t-spell
expect 2 'steady.*--platform' -- "$tool" steady --problem gossip

# --- --wire NAME / --transport NAME -------------------------------------------
for w in --wire --transport; do
  expect 0 'verified +yes' -- "$tool" run --algo binomial "$w" threads -p 3 --count 64 \
    --d 1e-6 --c 1e-6 --iters 2
  expect 0 'latency' -- "$tool" calibrate "$w" threads -p 2
  expect 0 'results verified' -- "$tool" bench "$w" threads -p 2 --sizes 8 --ops sum \
    --kinds reduce --algos binomial --iters 2 --tune 0 --out "$out/bench$w"
done
same "run --wire tcp" "$tool" run --wire tcp -p 2 --count 1 -- \
  "$tool" run --transport tcp -p 2 --count 1
expect 2 "unknown wire 'tcp'" -- "$tool" run --wire tcp -p 2 --count 1

# --- help texts: the spellings, the older ones as aliases only ----------------
# old_in_commands TEXT: the lines of TEXT that spell a command (a usage
# line, an example) with an older spelling.
old_in_commands() {
  grep -nE -- '(treduce|usage:).*(--transport [a-z]|--D [A-Z0-9]|(testbed up|platform show|steady[^|]*) -p [A-Z/a-z])|^ {6,}\[?--D [A-Z0-9]|^ {6,}.*\[--transport' <<<"$1"
}
for c in run calibrate bench steady plan simulate costs platform testbed; do
  h=$("$tool" "$c" --help 2>&1)
  [ "$c" = platform ] && h=$("$tool" platform show --help 2>&1)
  lines=$(old_in_commands "$h")
  [ -z "$lines" ] && ok || bad "treduce $c --help spells a command the older way: $lines"
done
for c in run calibrate bench steady; do
  "$tool" "$c" --help | grep -q -- '--wire' && "$tool" "$c" --help | grep -q -- '--transport' &&
    ok || bad "treduce $c --help does not give --wire and name --transport as its alias"
done
for c in plan simulate costs; do
  "$tool" "$c" --help | grep -q -- '--slow X' && "$tool" "$c" --help | grep -q -- '--D' && ok ||
    bad "treduce $c --help does not give --slow X and name --D as its alias"
done
for c in steady "platform show" testbed; do
  # shellcheck disable=SC2086
  "$tool" $c --help | grep -q -- '--platform FILE' && "$tool" $c --help | grep -q -- '-p FILE' &&
    ok || bad "treduce $c --help does not give --platform FILE and name -p FILE as its alias"
done

# --- the docs -----------------------------------------------------------------
for f in "$docs"/*.md "$docs"/../README.md; do
  lines=$(old_in_commands "$(cat "$f")" | grep -v 'older spelling')
  [ -z "$lines" ] && ok || bad "$(basename "$f") spells a command the older way: $lines"
done
grep -q 'older spelling' "$docs/CLI.md" && ok || bad "docs/CLI.md lists no older spellings"

echo "cli_spelling: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
