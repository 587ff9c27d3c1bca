#!/usr/bin/env bash
# cli_platform_test.sh: end-to-end checks of `treduce platform`: generate
# writes the JSON of docs/PLATFORMS.md (the same bytes for a seed, other
# bytes for another, Figure 9's size by default, about 30 nodes with 7
# LANs), show reads it back (json output = the file, from a pipe too),
# reads the samples and the SimGrid sample (text, json, dot), and bad
# input gives exit 2 with a message naming the file, element and value,
# exit 1 for a file that cannot be read or written.
# usage: cli_platform_test.sh PATH/TO/treduce OUTDIR
set -u
tool=$1
out=$2
data="$(cd "$(dirname "$0")" && pwd)/data/platforms"
# shellcheck source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"

# same FILE1 FILE2: identical bytes.
same() { if cmp -s "$1" "$2"; then ok; else bad "$1 and $2 differ"; fi; }

# --- generate ------------------------------------------------------------------
expect 0 '' -- "$tool" platform generate --seed 7 --out "$out/s7.json"
expect 0 '' -- "$tool" platform generate --seed 7 --lans 3 --out "$out/s7b.json"
same "$out/s7.json" "$out/s7b.json"
"$tool" platform generate --seed 7 >"$out/s7-stdout.json" 2>/dev/null
same "$out/s7.json" "$out/s7-stdout.json"
"$tool" platform generate --seed 8 --out - >"$out/s8.json"
if cmp -s "$out/s7.json" "$out/s8.json"; then bad "seeds 7 and 8 give one platform"; else ok; fi
jcheck '(.nodes | length) >= 12 and (.nodes | length) <= 15
        and ([.nodes[] | select(.router != true)] | length) >= 6
        and ([.nodes[] | select(.router != true)] | length) <= 9
        and all(.nodes[]; (.router == true and (has("speed") | not))
                          or (.speed | type) == "string")
        and all(.links[]; (.cost | test("^[0-9]+(/2)?$")) and .both == true)' "$out/s7.json"
"$tool" platform generate --seed 1 --lans 7 --out "$out/l7.json"
jcheck '(.nodes | length) >= 26 and (.nodes | length) <= 33' "$out/l7.json"

# --- show ----------------------------------------------------------------------
"$tool" platform show --platform "$out/s7.json" --format json >"$out/s7-show.json"
same "$out/s7.json" "$out/s7-show.json"
"$tool" platform show -p /dev/stdin --format json <"$out/s7.json" >"$out/s7-pipe.json"
same "$out/s7.json" "$out/s7-pipe.json"
expect 0 'nodes \(5 computing, 0 routers\), 5 links' -- \
  "$tool" platform show --platform "$data/fig2-scatter.json"
expect 0 'Pa +-> P0 +cost 2/3' -- "$tool" platform show --platform "$data/fig2-scatter.json"
expect 0 '^digraph platform' -- "$tool" platform show -p "$data/fig6-reduce.json" --format dot
expect 0 '"P0" -> "P1" \[label="1"\]' -- \
  "$tool" platform show -p "$data/fig6-reduce.json" --format dot
expect 0 'gw-right +-> carol +cost 2/25' -- \
  "$tool" platform show --platform "$data/simgrid-small.xml"
"$tool" platform show --platform "$data/simgrid-small.xml" --format json >"$out/sg.json"
jcheck '(.nodes | length) == 5 and (.links | length) == 6
        and (.nodes[] | select(.name == "bob") | .speed) == "1/5"
        and ([.links[] | select(.from == "gw-left" and .to == "gw-right")][0]
             | .cost == "1/1250" and .both == true)' "$out/sg.json"
expect 0 'usage: treduce platform generate' -- "$tool" platform generate --help
expect 0 'usage: treduce platform show' -- "$tool" platform show --help
expect 0 'usage: treduce platform' -- "$tool" platform --help
expect 0 'platform' -- "$tool" --help

# --- bad usage -----------------------------------------------------------------
expect 2 'missing sub-command' -- "$tool" platform
expect 2 "unknown sub-command 'draw'" -- "$tool" platform draw
expect 2 'seed' -- "$tool" platform generate --seed -1
expect 2 "invalid --seed 'abc'" -- "$tool" platform generate --seed abc
expect 2 'invalid --lans 0: need 1 to 1000' -- "$tool" platform generate --lans 0
expect 2 'invalid --lans 1001: need 1 to 1000' -- "$tool" platform generate --lans 1001
# the value given, not one clamped to 32 bits
expect 2 'invalid --lans 99999999999: need 1 to 1000' -- "$tool" platform generate \
  --lans 99999999999
expect 2 "unknown or incomplete option '--bogus'" -- "$tool" platform generate --bogus
expect 2 'unexpected argument' -- "$tool" platform generate extra
expect 2 '--platform FILE is required' -- "$tool" platform show
expect 2 "invalid --format 'svg'" -- "$tool" platform show -p "$data/fig2-scatter.json" --format svg
expect 1 'cannot write' -- "$tool" platform generate --out "$out/no/such/dir/p.json"

# --- bad files -----------------------------------------------------------------
expect 1 'No such file' -- "$tool" platform show --platform "$out/missing.json"
expect 1 'folder' -- "$tool" platform show --platform "$out"
printf '{"nodes": [\n  {"name": "A", "speed": 1},\n  {"name" "B"}]}' >"$out/syntax.json"
expect 2 'syntax.json:3:.*malformed JSON' -- "$tool" platform show -p "$out/syntax.json"
printf '{"nodes": [{"name": "A", "speed": 1}],\n "links": [{"from": "A", "to": "Z", "cost": 1}]}' \
  >"$out/unknown.json"
expect 2 "unknown.json: links\[0\]: \"to\": unknown node 'Z'" -- \
  "$tool" platform show -p "$out/unknown.json"
printf '{"nodes": [{"name": "A", "speed": 1}, {"name": "A", "speed": 2}]}' >"$out/dup.json"
expect 2 "dup.json: nodes\[1\] 'A'.*used twice" -- "$tool" platform show -p "$out/dup.json"
printf '{"nodes": [{"name": "A", "speed": 1}, {"name": "B", "speed": 1}],
 "links": [{"from": "A", "to": "B", "cost": "-2/3"}]}' >"$out/neg.json"
expect 2 "neg.json: links\[0\] \(A -> B\): invalid cost '-2/3': must not be negative" -- \
  "$tool" platform show -p "$out/neg.json"
printf '{"nodes": [{"name": "A", "speed": "0"}]}' >"$out/zero.json"
expect 2 "zero.json: nodes\[0\] 'A'.*must be > 0" -- "$tool" platform show -p "$out/zero.json"
cat >"$out/route.xml" <<'EOF'
<?xml version="1.0"?>
<platform version="4.1">
<zone id="z" routing="Full">
<host id="a" speed="1Gf"/>
<link id="l" bandwidth="1Gbps"/>
<route src="a" dst="b"><link_ctn id="l"/></route>
</zone>
</platform>
EOF
expect 2 "route.xml:6: <route src='a' dst='b'>: unknown host or router 'b'" -- \
  "$tool" platform show -p "$out/route.xml"
cat >"$out/broken.xml" <<'EOF'
<platform version="4.1">
<zone id="z" routing="Full">
<host id="a" speed="1Gf">
</zone></platform>
EOF
expect 2 'broken.xml:4: malformed XML' -- "$tool" platform show -p "$out/broken.xml"

echo "cli_platform: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
