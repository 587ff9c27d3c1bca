# shellcheck shell=bash
# cli_lib.sh: preamble and helpers shared by cli_test.sh and cli_sim_test.sh.
# Sourced, not run: the caller sets `tool` (the treduce binary) and `out` (a
# scratch directory, emptied here) first, and prints its own summary from
# $pass and $fail at the end.
: "${tool:?cli_lib.sh: set tool before sourcing}" "${out:?cli_lib.sh: set out before sourcing}"
rm -rf "$out" && mkdir -p "$out"
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect STATUS PATTERN -- command...: exit status and a stderr/stdout pattern,
# within EXPECT_TIMEOUT seconds (default 60); no error line may end empty
# ("treduce run: " and nothing else).
expect() {
  local want=$1 pattern=$2
  shift 3
  local text status
  text=$(timeout "${EXPECT_TIMEOUT:-60}" "$@" 2>&1)
  status=$?
  if [ "$status" -ne "$want" ]; then
    bad "'$*' exited $status, expected $want: $text"
  elif grep -qE '^treduce[a-z ]*: *$' <<<"$text"; then
    bad "'$*' printed an error line with no message: $text"
  elif ! grep -qE -- "$pattern" <<<"$text"; then
    bad "'$*' output lacks /$pattern/: $text"
  else
    ok
  fi
}

# jcheck FILTER JSONFILE: jq -e must accept the filter.
jcheck() {
  if jq -e "$1" "$2" >/dev/null; then ok; else bad "jq '$1' failed on $2"; fi
}
