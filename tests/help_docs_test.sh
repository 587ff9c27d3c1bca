#!/usr/bin/env bash
# help_docs_test.sh TOOL MAN_DIR COMPLETION: the manual pages and the bash
# completion made from the tool's help texts (cmake/help_docs.pl), checked
# against the tool itself:
#   - a page per command `treduce --help` lists and treduce(1), whose NAME
#     line is the command's summary, that man renders without a warning,
#     and that holds every word of the command's help text (and of the
#     help of each of its sub-commands that has one);
#   - the completion offers the commands at the first word, and for each
#     command every option of its synopsis and of its option lines, none
#     that its help does not name, `treduce list`'s names after --algo,
#     the values a synopsis lists (--format text|json ...), files after a
#     FILE option, folders after a DIR one, and the sub-commands.
# The options are read from the help texts here with grep and sed, not by
# the generator's parser.
set -u
tool=$1
man_dir=$2
completion=$3
fail=0
pass=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
ok() { pass=$((pass + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trd-help-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

commands=$("$tool" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}')
[ -n "$commands" ] || bad "treduce --help lists no commands"
summary() { "$tool" --help | sed -n '/^commands:/,/^$/p' | awk -v c="$1" '$1 == c {
  $1 = ""; sub(/^ +/, ""); print }'; }
# The synopsis (up to the first blank line, after "treduce CMD") and the
# option lines' tags of a help text on stdin: the options a user sees.
listed_options() {
  awk -v cmd="$1" 'NR == 1 || syn { if ($0 ~ /^[ \t]*$/) { syn = 0; next } syn = 1
         sub(".*treduce " cmd, ""); print; next }
       /^ +-/ { sub(/^ +/, ""); sub(/  .*/, ""); print }' |
    grep -oE -- '(^|[][ ,|(])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ ,|(]//' | sort -u
}
# Sub-commands with a help text of their own.
sub_helps() {
  local cmd=$1 text sub
  text=$("$tool" "$cmd" --help)
  for sub in $(sed -n '1,/^$/p' <<<"$text" | grep -oE "treduce $cmd [a-z][a-z0-9|-]*" |
               awk '{print $3}' | tr '|' '\n' | sort -u); do
    local t
    t=$("$tool" "$cmd" "$sub" --help 2>/dev/null) || continue
    [ "$t" != "$text" ] && echo "$sub"
  done
}
# The page rendered as plain text, one long line per paragraph, hyphenation off.
render() {
  MANWIDTH=2000 MANROFFOPT=-rHY=0 LC_ALL=C.UTF-8 man -l -Tutf8 "$1" 2>"$tmp/man.err" |
    sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g'
}
# The words of a help text on stdin missing from the rendered page $1, in
# any case, but "usage" (the synopsis's heading is SYNOPSIS).
has_words() {
  tr -c 'A-Za-z0-9_\n' '\n' | tr 'A-Z' 'a-z' | grep -E '^[a-z0-9_]{2,}$' | grep -vx usage |
    sort -u >"$tmp/want"
  tr -c 'A-Za-z0-9_\n' '\n' <"$1" | tr 'A-Z' 'a-z' | sort -u >"$tmp/have"
  comm -23 "$tmp/want" "$tmp/have"
}

# ---- manual pages ----
check_page() { # check_page PAGE NAME SUMMARY HELP_TEXT_FILE...
  local page=$1 name=$2 sum=$3
  shift 3
  if [ ! -f "$page" ]; then bad "no manual page $page"; return; fi
  render "$page" >"$tmp/page.txt"
  [ -s "$tmp/man.err" ] && bad "$page: man warns: $(head -3 "$tmp/man.err")"
  local whatis
  whatis=$(lexgrog "$page" 2>&1 | sed 's/^[^:]*: //')
  [ "$whatis" = "\"$name - $sum\"" ] && ok || bad "$page: whatis $whatis, not \"$name - $sum\""
  local missing
  missing=$(cat "$@" | has_words "$tmp/page.txt" | head -5 | tr '\n' ' ')
  [ -z "$missing" ] && ok || bad "$page lacks words of the help: $missing"
}
"$tool" --help >"$tmp/top.txt"
# its summary: the first line after the synopsis (up to a blank line)
check_page "$man_dir/treduce.1" treduce \
  "$(awk 'p && NF {print; exit} !NF {p = 1}' "$tmp/top.txt" | sed 's/\.$//' | sed 's/^./\L&/')" \
  "$tmp/top.txt"
for c in $commands; do
  "$tool" "$c" --help >"$tmp/help-$c.txt"
  files=("$tmp/help-$c.txt")
  for s in $(sub_helps "$c"); do
    "$tool" "$c" "$s" --help >"$tmp/help-$c-$s.txt"
    files+=("$tmp/help-$c-$s.txt")
  done
  check_page "$man_dir/treduce-$c.1" "treduce-$c" "$(summary "$c")" "${files[@]}"
  grep -q "treduce-$c" <(render "$man_dir/treduce.1") && ok || bad "treduce.1 does not name treduce-$c"
done

# ---- bash completion ----
if [ ! -f "$completion" ]; then
  bad "no bash completion $completion"
else
  # shellcheck disable=SC1090
  . "$completion"
  complete -p treduce >/dev/null 2>&1 && ok || bad "the completion does not complete treduce"
  comp() { # comp WORD...: what completing the last word offers, sorted
    COMP_WORDS=(treduce "$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _treduce 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort -u
  }
  same() { # same WHAT WANT GOT
    [ "$2" = "$3" ] && ok || bad "$1: offers [$(echo $3)], not [$(echo $2)]"
  }
  same "treduce <TAB>" "$(printf '%s\n' $commands --help | sort -u)" "$(comp '')"
  for c in $commands; do
    offered=$(comp "$c" -)
    { "$tool" "$c" --help | listed_options "$c"
      for s in $(sub_helps "$c"); do "$tool" "$c" "$s" --help | listed_options "$c $s"; done
      echo --help; } | sort -u >"$tmp/want"
    missing=$(comm -23 "$tmp/want" <(echo "$offered") | tr '\n' ' ')
    [ -z "$missing" ] && ok || bad "treduce $c -<TAB> lacks $missing"
    { "$tool" "$c" --help; for s in $(sub_helps "$c"); do "$tool" "$c" "$s" --help; done
      echo --help; } >"$tmp/all.txt"
    for o in $offered; do
      grep -qF -- "$o" "$tmp/all.txt" && ok || bad "treduce $c -<TAB> offers $o, which its help does not name"
    done
  done
  same "treduce plan --algo <TAB>" "$("$tool" list | awk '{print $1}' | sort -u)" "$(comp plan --algo '')"
  comp run --algo '' | grep -qx auto && ok || bad "treduce run --algo <TAB> does not offer auto"
  same "treduce plan --format <TAB>" "$(printf '%s\n' dot json text)" "$(comp plan --format '')"
  same "treduce simulate --port <TAB>" "$(printf '%s\n' full half multi)" "$(comp simulate --port '')"
  same "treduce platform <TAB>" "$(printf '%s\n' generate show)" "$(comp platform '')"
  mkdir -p "$tmp/files/dir.d" && touch "$tmp/files/file.f"
  same "treduce plan --gantt <TAB>" "$(printf '%s\n' "$tmp/files/dir.d" "$tmp/files/file.f")" \
    "$(comp plan --gantt "$tmp/files/")"
  same "treduce ratios --out <TAB>" "$tmp/files/dir.d" "$(comp ratios --out "$tmp/files/")"
  same "treduce plan -n <TAB>" "" "$(comp plan -n '')"
fi

echo "help docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
