#!/usr/bin/env bash
# cli_input_test.sh: input the tool must refuse clearly or read whole, across
# commands: sizes that overflow (exit 2 naming the value) or do not fit in
# memory (exit 1, a message), absurdly long numbers and large platforms in
# bounded time, results that would overflow a double (refused up front, exit
# 2; never inf or nan printed, every JSON output valid), cost files with long
# lines, and the strictness of options, platform files and profiles.
# usage: cli_input_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# jout STATUS PATTERN -- command...: like expect, and stdout is exactly one
# JSON object (jq), or nothing when the status is not 0 (then a JSON object
# must say why in "error"); no bare inf or nan anywhere in the output.
jout() {
  local want=$1 pattern=$2
  shift 3
  timeout 60 "$@" >"$out/jout.json" 2>"$out/jout.err"
  local status=$?
  if [ "$status" -ne "$want" ]; then
    bad "'$*' exited $status, expected $want: $(cat "$out/jout.err")"
  elif ! grep -qE -- "$pattern" "$out/jout.json" "$out/jout.err"; then
    bad "'$*' output lacks /$pattern/: $(cat "$out/jout.err")"
  elif grep -qwiE -- '-?(inf|nan|infinity)' "$out/jout.json" "$out/jout.err"; then
    bad "'$*' printed inf or nan: $(cat "$out/jout.json" "$out/jout.err")"
  elif [ ! -s "$out/jout.json" ]; then
    if [ "$status" -eq 0 ]; then bad "'$*' printed nothing with exit 0"; else ok; fi
  elif [ "$(jq -s 'length' "$out/jout.json" 2>/dev/null)" != 1 ] ||
       ! jq -e 'type == "object"' "$out/jout.json" >/dev/null; then
    bad "'$*' stdout is not one JSON object: $(head -c 300 "$out/jout.json")"
  elif [ "$status" -ne 0 ] && ! jq -e '.error | type == "string"' "$out/jout.json" >/dev/null; then
    bad "'$*' exited $status with JSON that does not say why"
  else
    ok
  fi
}

# digits N: N ones.
digits() { head -c "$1" /dev/zero | tr '\0' '1'; }

# --- sizes that overflow or do not fit (run) -------------------------------------
expect 2 'invalid --count 2305843009213693952: .* too large' -- \
  "$tool" run --algo binomial -p 2 --count 2305843009213693952 --d 1 --c 1
expect 2 'invalid --count 9223372036854775807' -- \
  "$tool" run -p 2 --count 9223372036854775807 --d 1 --c 1
expect 1 'count 1000000000000 is too large: .* GiB' -- \
  "$tool" run -p 2 --count 1000000000000 --d 1 --c 1
expect 1 'count 2147483648 is too large' -- \
  "$tool" run -p 2 --count 2147483648 --type int32 --d 1 --c 1
expect 2 'invalid --iters 9223372036854775807' -- \
  "$tool" run -p 2 --count 1 --iters 9223372036854775807 --d 1 --c 1
expect 2 'invalid --dead-rank 5: not a rank of -p 2' -- \
  "$tool" run -p 2 --count 4 --dead-rank 5 --d 1 --c 1

# --- long numbers and large platforms: bounded time ---------------------------
{ printf '{"nodes": [{"name": "A", "speed": "'; digits 2000001; printf '"}]}'; } >"$out/long.json"
EXPECT_TIMEOUT=60 expect 2 'long.json: nodes\[0\].*2000001 digits \(at most 1000\)' -- \
  "$tool" platform show --platform "$out/long.json"
{ printf '<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/>'
  printf '<link id="l" bandwidth="'; digits 2000001; printf 'Bps"/></zone></platform>'; } \
  >"$out/long.xml"
EXPECT_TIMEOUT=60 expect 2 "long.xml:1: <link id='l'>: invalid bandwidth.*2000001 digits" -- \
  "$tool" platform show --platform "$out/long.xml"
awk 'BEGIN { n = 40000; printf "{\"nodes\": [";
  for (i = 0; i < n; i++) printf "%s{\"name\": \"n%d\", \"speed\": 1}", i ? "," : "", i;
  printf "], \"links\": [";
  for (i = 0; i + 1 < n; i++) printf "%s{\"from\": \"n%d\", \"to\": \"n%d\", \"cost\": 1}", i ? "," : "", i, i + 1;
  print "]}" }' >"$out/many.json"
EXPECT_TIMEOUT=60 expect 0 '40000 nodes \(40000 computing, 0 routers\), 39999 links' -- \
  "$tool" platform show --platform "$out/many.json"

# --- results that would overflow: refused up front, never inf or nan ------------
jout 2 'd = 1e\+308 and c = 1e\+308 are too large' -- \
  "$tool" plan --algo greedy -n 8 --d 1e308 --c 1e308 --format json
expect 2 'too large' -- "$tool" plan --algo greedy -n 8 --d 1e308 --c 1e308
jout 0 'makespan' -- "$tool" plan --algo pipeline -n 4 --format json
jcheck '.upper_bound == null and (.makespan | type) == "number"' "$out/jout.json"
text=$("$tool" plan --algo pipeline -n 4)
if grep -qwiE 'nan|inf' <<<"$text"; then bad "plan text prints nan: $text"; else ok; fi
jout 2 'cv = 1e\+300 is too large' -- \
  "$tool" simulate --algo greedy -n 8 --dist gamma --cv 1e300 --runs 10 --format json
jout 2 'too large for their mean and standard deviation' -- \
  "$tool" simulate --algo tree-dyn -n 8 --dist gamma --cv 10 --mean-d 1e306 --runs 100 \
  --format json
jout 0 'variance' -- "$tool" markov -n 8 --mean-d 1e150 --format json
jout 2 'mean-d = 1e\+308 is too large' -- "$tool" markov -n 8 --mean-d 1e308 --format json
expect 2 'mean-d = 1e\+308 is too large' -- "$tool" markov -n 8 --mean-d 1e308
jout 2 'cv = 1e\+300' -- "$tool" star -n 3 --dist gamma --cv 1e300 --runs 5 --format json
# one rule for every number (trd_real_parse): 0 or a normal double
expect 0 'makespan' -- "$tool" plan -n 4 --d 2.3e-308 --c 0
expect 2 "invalid --d '1e-320': underflows" -- "$tool" plan -n 4 --d 1e-320 --c 0 # subnormal
expect 2 "invalid --d '1e-400': underflows" -- "$tool" plan -n 4 --d 1e-400
expect 2 "invalid --d '1e400': overflows" -- "$tool" plan -n 4 --d 1e400
expect 2 "invalid --d 'inf': not a decimal number" -- "$tool" plan -n 4 --d inf
expect 2 "invalid --c '0x10': not a decimal number" -- "$tool" plan -n 4 --c 0x10
printf 'n 2\n0 1e-320\n1 0\n1 1\n' >"$out/subnormal.costs"
expect 2 "subnormal.costs:2: invalid transfer time '1e-320': underflows" -- \
  "$tool" simulate --algo greedy -n 2 --costs "$out/subnormal.costs" --runs 1
printf '{"nodes": [{"name": "a", "speed": "1e-320"}, {"name": "b", "speed": 1}], "links": %s}\n' \
  '[{"from": "a", "to": "b", "cost": 1}]' >"$out/subnormal.json"
expect 2 "speed '1e-320': underflows" -- "$tool" platform show --platform "$out/subnormal.json"

# --- profiles: metadata, strictness, and results that overflow ------------------
prof=$out/profile.json
expect 0 'written' -- "$tool" calibrate -p 2 --out "$prof"
expect 1 'cannot write /nonexistent/x.json: No such file or directory' -- \
  "$tool" calibrate -p 2 --out /nonexistent/x.json
expect 1 'cannot write /nonexistent/c.txt: No such file or directory' -- \
  "$tool" calibrate -p 2 --matrix --costs-out /nonexistent/c.txt
text=$("$tool" calibrate -p 2 --matrix --costs-out /nonexistent/c.txt 2>&1)
if grep -q 'written to' <<<"$text"; then bad "a failed write says written: $text"; else ok; fi
expect 1 'cannot write /nonexistent/p.json: No such file or directory' -- \
  "$tool" calibrate -p 2 --matrix --platform-out /nonexistent/p.json
jcheck '.treduce_profile == 2 and .wire == "threads" and (has("transport") | not) and .p == 2
        and .op == "sum" and .type == "double" and .elem_size == 8' "$prof"
jq '.seconds_per_byte = 1e300 | del(.bandwidth_GBps)' "$prof" >"$out/huge.json"
jout 2 'too large' -- "$tool" run --algo auto -p 2 --count 100 --profile "$out/huge.json" \
  --format json
jq '.wire = "mpi"' "$prof" >"$out/mpi.json"
expect 2 'measured over mpi, this run is over threads' -- \
  "$tool" run -p 2 --count 8 --profile "$out/mpi.json"
# the wire's older key: read alone (older files), and beside "wire" (calibrate's
# report, which prints both) where it agrees
jq '{transport: "mpi"} + del(.wire)' "$prof" >"$out/mpi-old.json"
expect 2 'measured over mpi, this run is over threads' -- \
  "$tool" run -p 2 --count 8 --profile "$out/mpi-old.json"
timeout 60 "$tool" calibrate -p 2 --format json >"$out/report.json" &&
  jcheck '.wire == "threads" and .transport == "threads"' "$out/report.json" ||
  bad "calibrate --format json failed"
expect 0 'verified' -- "$tool" run -p 2 --count 8 --iters 2 --profile "$out/report.json"
jq '.transport = "mpi"' "$out/report.json" >"$out/disagree.json"
expect 2 '"transport" = "mpi" disagrees with "wire" = "threads"' -- \
  "$tool" run -p 2 --count 8 --profile "$out/disagree.json"
expect 2 'measured with --op sum --type double, this run reduces --op max --type double' -- \
  "$tool" run -p 2 --count 8 --op max --profile "$prof"
expect 2 'measured with --op sum --type double, this run reduces --op sum --type float' -- \
  "$tool" run -p 2 --count 8 --type float --profile "$prof"
expect 0 'warning: profile .* was measured on 2 ranks, this run has 3' -- \
  "$tool" run -p 3 --count 8 --iters 2 --profile "$prof"
expect 2 'give --profile or --d/--c, not both' -- \
  "$tool" run -p 2 --count 8 --profile "$prof" --d 1 --c 1
jq '.colour = 1' "$prof" >"$out/key.json"
expect 2 'unknown key "colour"' -- "$tool" run -p 2 --count 8 --profile "$out/key.json"
jq '.bandwidth_GBps = 1e9' "$prof" >"$out/bw.json"
expect 2 '"bandwidth_GBps" = 1e\+09 disagrees with seconds_per_byte' -- \
  "$tool" run -p 2 --count 8 --profile "$out/bw.json"
expect 1 'cannot read profile .*nope.json' -- \
  "$tool" run -p 2 --count 8 --profile "$out/nope.json"

# --- cost files: whole lines, whole numbers, folders ----------------------------
expect 1 "cannot read cost file $out: it is a folder" -- \
  "$tool" simulate --algo greedy -n 2 --costs "$out" --runs 1
printf 'n 2.0\n0 1\n1 0\n1 1\n' >"$out/n-real.txt"
expect 2 "n-real.txt:1: invalid n '2.0'" -- \
  "$tool" simulate --algo greedy -n 2 --costs "$out/n-real.txt" --runs 1
printf 'n 2\n0 0x1p3\n1 0\n1 1\n' >"$out/hex.txt"
expect 2 "hex.txt:2: invalid transfer time '0x1p3'" -- \
  "$tool" simulate --algo greedy -n 2 --costs "$out/hex.txt" --runs 1
# n 4 needs 20 values: 19 with one of 70,000 characters stay 19
{ printf 'n 4\n1 1.'; head -c 69998 /dev/zero | tr '\0' '0'
  printf ' 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n1 1 1\n'; } >"$out/long.txt"
expect 2 'ends before combine time' -- \
  "$tool" simulate --algo greedy -n 4 --costs "$out/long.txt" --runs 1

# --- options and files named exactly ------------------------------------------
expect 2 "invalid --format 'xml': text or json" -- "$tool" list --format xml
expect 2 "invalid --format 'xml': text or json" -- "$tool" markov -n 4 --format xml
printf '<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">' >"$out/u8.xml"
printf '<host id="a" speed="1Gf"/></zone></platform>\n' >>"$out/u8.xml"
iconv -f UTF-8 -t UTF-16 "$out/u8.xml" >"$out/u16.xml"
expect 2 'u16.xml: the file is UTF-16' -- "$tool" platform show --platform "$out/u16.xml"
sed 's/ version="4.1"//' "$out/u8.xml" >"$out/nover.xml"
expect 2 "nover.xml:2: <platform>: attribute 'version' is missing" -- \
  "$tool" platform show --platform "$out/nover.xml"
sed 's/version="4.1"/version="banana"/' "$out/u8.xml" >"$out/badver.xml"
expect 2 "version 'banana' is not a version number" -- \
  "$tool" platform show --platform "$out/badver.xml"
sed 's/<host id="a"/<host id="a" colour="red"/' "$out/u8.xml" >"$out/attr.xml"
expect 2 "<host id='a'>: attribute 'colour' is not supported" -- \
  "$tool" platform show --platform "$out/attr.xml"

# --- steady: sizes files, and platforms whose nodes compute nothing ------------
data=$(dirname "$0")/data/platforms
printf '{"default": "1", "task": ' >"$out/sizes.json"
expect 2 'sizes.json:1:.*malformed JSON' -- "$tool" steady --problem reduce \
  --platform "$data/fig6-reduce.json" --target P0 --sizes "$out/sizes.json"
expect 1 'cannot read .*nosizes.json' -- "$tool" steady --problem reduce \
  --platform "$data/fig6-reduce.json" --target P0 --sizes "$out/nosizes.json"
printf '{"nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
 "links": [{"from": "a", "to": "b", "cost": 1, "both": true},
           {"from": "b", "to": "c", "cost": 2, "both": true}]}' >"$out/nospeed.json"
expect 0 'throughput 1/2' -- "$tool" steady --problem scatter --platform "$out/nospeed.json" \
  --source a
expect 0 'throughput' -- "$tool" steady --problem gossip --platform "$out/nospeed.json"
dot=$("$tool" steady --problem scatter --platform "$out/nospeed.json" --source a --format dot)
if grep -q 'speed' <<<"$dot"; then bad "dot of speedless nodes shows a speed: $dot"; else ok; fi
expect 2 "node 'a' gives no speed" -- "$tool" steady --problem reduce \
  --platform "$out/nospeed.json" --target a

echo "cli_input: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
