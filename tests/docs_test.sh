#!/usr/bin/env bash
# docs_test.sh: README.md and docs/*.md as tested text.
#
# Every fenced block marked ```sh (or ```console, ```bash) is an example
# and is run, in a scratch folder where build/ is the build, tests/, bench/,
# examples/ ... are the sources' and `treduce` is on the PATH:
#   - a block with `$ ` prompts is a session: each `$ COMMAND` (continued
#     by a trailing backslash) must exit 0 and print the lines that follow
#     it up to the next prompt, exactly (stdout and stderr together,
#     trailing blanks aside), where a line `...` stands for any number of
#     lines; a command shown without output is only run;
#   - a block without prompts is a list of commands (comments aside), each
#     of which must exit 0;
#   - a block that cannot run here (MPI on many processes, a root-only
#     testbed, an installation, a benchmark of minutes) says so in an HTML
#     comment on the line before it, `<!-- docs-test: skip: REASON -->`,
#     and `<!-- docs-test: output varies: REASON -->` runs a session
#     without comparing what it prints (timings); each is counted with
#     its reason, so nothing is skipped silently.
# Outside sh blocks, a `$ ` prompt or a concrete command (treduce, mpirun,
# make, cmake with no placeholder such as N, FILE or [...]) is an error: it
# would never run.  The docs must not link a file a clone does not have
# (../shared/..., DESIGN.md, ERRATA.md, a missing path), and no comment of
# the sources may cite those either.
# usage: docs_test.sh SOURCE_DIR BUILD_DIR OUTDIR
set -u
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
out=$3
rm -rf "$out" && mkdir -p "$out/work" "$out/blocks"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
work=$out/work
for d in tests bench examples docs scripts include src tools cmake; do
  ln -s "$src/$d" "$work/$d"
done
ln -s "$build" "$work/build"
export PATH="$build:$PATH" TREDUCE_PROGRESS=off
docs=("$src/README.md" "$src"/docs/*.md)

# --- split every doc into its fenced blocks: blocks/K.meta (file, line,
# tag, marker) and blocks/K.body ---------------------------------------------
awk -v dir="$out/blocks" -v root="$src/" '
  FNR == 1 { prev = ""; inb = 0 }
  /^ *```/ {
    if (!inb) {
      inb = 1; k++; tag = $0; sub(/^ *```/, "", tag); marker = ""
      indent = $0; sub(/```.*/, "", indent)
      if (prev ~ /^<!-- docs-test: /) { marker = prev; sub(/^<!-- docs-test: */, "", marker);
                                        sub(/ *-->$/, "", marker) }
      f = FILENAME; sub(root, "", f)
      printf "%s\t%d\t%s\t%s\n", f, FNR, tag, marker > (dir "/" k ".meta")
      printf "" > (dir "/" k ".body")
    } else inb = 0
    next
  }
  inb { line = $0; if (substr(line, 1, length(indent)) == indent) line = substr(line, length(indent) + 1)
        print line >> (dir "/" k ".body"); next }
  NF { prev = $0 }
' "${docs[@]}"

# Commands this test never runs, whatever a doc says: they build, install,
# run the suite or benchmarks, need MPI or root, or touch the system.  A
# block with one must be marked skip (with its reason); unmarked, it fails
# here before anything of it runs.
never_run() {
  grep -nE '(^|[;&|(] *|\$ )(sudo|make|cmake|cpack|ctest|apt-get|apt|dpkg|mpirun|mpiexec|mpicc|cc|scripts/bootstrap\.sh|bash|rm|REPS=|NPS=|TREDUCE=|build[a-z-]*/bench/|bench/)|treduce testbed (up|run|down)' "$1" || true
}

# A concrete command: no placeholder (an upper-case word, [...], |, ...).
concrete() {
  grep -E '^(\$ )?(build/)?(treduce|mpirun|mpiexec|make|cmake) ' <<<"$1" |
    grep -vE '\[|\||\.\.\.|\b[A-Z][A-Z_]*[A-Z]\b|\b[A-Z]\b|<[a-z]+>' || true
}

# run_cmd CMD OUTFILE: runs CMD in the scratch folder; its status.
run_cmd() {
  (cd "$work" && timeout 60 bash -c "$1") >"$2" 2>&1
}

# matches EXPECTED ACTUAL: the actual lines match the expected ones, `...`
# standing for any lines (trailing blanks ignored).
matches() {
  awk 'NR == FNR { e[++ne] = $0; sub(/[ \t]+$/, "", e[ne]); next }
       { a[++na] = $0; sub(/[ \t]+$/, "", a[na]) }
       function m(i, j,   k) {
         if (i > ne) return j > na
         if (e[i] == "...") { for (k = j; k <= na + 1; k++) if (m(i + 1, k)) return 1; return 0 }
         return j <= na && e[i] == a[j] && m(i + 1, j + 1)
       }
       END { exit !m(1, 1) }' "$1" "$2"
}

declare -A skipped
nskipped=0
# session WHERE BODY COMPARE: the prompts of a block, each run and compared.
session() {
  local where=$1 body=$2 compare=$3 cmd="" expect="$out/expect" got="$out/got" line st
  : >"$expect"
  flush() {
    [ -z "$cmd" ] && return
    run_cmd "$cmd" "$got"
    st=$?
    if [ "$st" -ne 0 ]; then
      bad "$where: '$cmd' exited $st: $(head -5 "$got")"
    elif [ "$compare" = yes ] && [ -s "$expect" ] && ! matches "$expect" "$got"; then
      bad "$where: '$cmd' prints otherwise than documented:
$(diff "$expect" "$got" | head -20)"
    else ok; fi
    cmd=""
    : >"$expect"
  }
  local cont=no
  while IFS= read -r line; do
    if [ "$cont" = yes ]; then
      cmd+=$'\n'"$line"
      [[ "$line" == *\\ ]] || cont=no
    elif [[ "$line" == '$ '* ]]; then
      flush
      cmd=${line#\$ }
      [[ "$line" == *\\ ]] && cont=yes
    elif [ -n "$cmd" ]; then
      printf '%s\n' "$line" >>"$expect"
    fi
  done <"$body"
  flush
}

# commands WHERE BODY: a block of commands, each must exit 0.
commands() {
  local where=$1 body=$2 cmd="" line st
  while IFS= read -r line; do
    cmd+="$line"
    if [[ "$line" == *\\ ]]; then cmd+=$'\n'; continue; fi
    if [[ "$cmd" =~ ^[[:space:]]*(#|$) ]]; then cmd=""; continue; fi
    run_cmd "$cmd" "$out/got"
    st=$?
    [ "$st" -eq 0 ] && ok || bad "$where: '$cmd' exited $st: $(head -5 "$out/got")"
    cmd=""
  done <"$body"
}

nblocks=$(find "$out/blocks" -name '*.meta' | wc -l)
for ((k = 1; k <= nblocks; k++)); do
  meta=$out/blocks/$k.meta
  IFS=$'\t' read -r file line tag marker <"$meta"
  body=${meta%.meta}.body
  where="$file:$line"
  case "$tag" in
  sh | console | bash)
    case "$marker" in
    skip:*)
      reason=${marker#skip: }
      skipped[$reason]=$((${skipped[$reason]:-0} + 1))
      nskipped=$((nskipped + 1))
      [ -n "${reason// /}" ] && ok || bad "$where: a skip without a reason"
      ;;
    "output varies:"*)
      reason=${marker#output varies: }
      skipped["output not compared: $reason"]=$((${skipped["output not compared: $reason"]:-0} + 1))
      danger=$(never_run "$body")
      if [ -n "$danger" ]; then
        bad "$where: not run: this test never runs $(head -1 <<<"$danger"): mark it skip"
      elif [ -z "${DOCS_TEST_DRY:-}" ]; then session "$where" "$body" no; fi
      ;;
    "")
      danger=$(never_run "$body")
      if [ -n "$danger" ]; then
        bad "$where: not run: this test never runs $(head -1 <<<"$danger"): mark the block" \
          "<!-- docs-test: skip: REASON -->"
      elif [ -n "${DOCS_TEST_DRY:-}" ]; then
        echo "would run $where"
      elif grep -q '^\$ ' "$body"; then session "$where" "$body" yes; else commands "$where" "$body"; fi
      ;;
    *) bad "$where: unknown marker '$marker' (skip: REASON, or output varies: REASON)" ;;
    esac
    ;;
  *)
    grep -q '^\$ ' "$body" && bad "$where: a session in a block not marked sh: it never runs"
    c=$(concrete "$(cat "$body")")
    [ -z "$c" ] || bad "$where: an example command outside a sh block: $c"
    ;;
  esac
done

# --- links to files a clone does not have -------------------------------------
for f in "${docs[@]}"; do
  rel=${f#"$src"/}
  while IFS= read -r hit; do
    bad "$rel: names a file a clone does not have: $hit"
  done < <(grep -noE '\.\./shared[^ `)]*|\bDESIGN\.md|\bERRATA\.md' "$f")
  # markdown links and `path` references into the tree
  while IFS=: read -r n ref; do
    ref=${ref#\`}
    ref=${ref%\`}
    ref=${ref#(}
    ref=${ref%)}
    ref=${ref%%#*}
    [ -z "$ref" ] && continue
    ref=$(sed -E 's/<[a-z_]+>/*/g' <<<"$ref") # src/plan/<name>.c: any file of that form
    if ! compgen -G "$src/$ref" >/dev/null && ! compgen -G "$(dirname "$f")/$ref" >/dev/null; then
      bad "$rel:$n: names $ref, which is not in the tree"
    fi
  done < <(grep -noE '\]\([^)]+\)|`(docs|src|tests|tools|bench|include|examples|cmake|scripts|mpi_layer)/[^` ]+`' "$f" |
    grep -v 'http' | sed -E 's/^([0-9]+):\]?/\1:/')
done
cites=$(grep -rnE 'DESIGN\.md|ERRATA\.md|\.\./shared/' "$src/src" "$src/include" "$src/tools" \
  "$src/mpi_layer" "$src/tests" "$src/bench" "$src/examples" "$src/cmake" "$src/scripts" \
  "$src/CMakeLists.txt" 2>/dev/null | grep -v '/tests/docs_test.sh:')
[ -z "$cites" ] && ok || bad "sources cite a file a clone does not have: $cites"

echo "docs: $nskipped blocks skipped, and why:"
for r in "${!skipped[@]}"; do echo "  ${skipped[$r]}  $r"; done | sort -k2
echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
