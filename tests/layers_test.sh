#!/usr/bin/env bash
# layers_test.sh LAYERS_TXT [--docs ARCHITECTURE_MD] [--core LIBTREDUCE_SO]
#
# The layers of src/ as the build declares them (LAYERS_TXT, written by
# cmake/layers.cmake: "NAME: DEPS" per layer, and LAYERS_TXT.objects, the
# objects of each) must hold in the code:
#   - every folder of src/ is a layer;
#   - a file of a layer includes headers of its own layer and of those below
#     it only (the build's include shims stop the .c files; this sees the
#     headers too);
#   - a symbol a layer's objects use and some layer defines is defined by
#     the layer itself or one below it: no call, and no use of data, above;
# with --docs, the fenced "layers" block of docs/ARCHITECTURE.md lists the
# same graph; with --core, libtreduce.so needs no MPI, LP solver, XML or
# plotting library.  The build runs it without --docs (a layer that calls
# above itself does not build); ctest runs it with both.
set -euo pipefail
graph=$1
shift
docs= core=
while [ $# -gt 0 ]; do
  case $1 in
    --docs) docs=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    *) echo "layers_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
src=$(cd "$(dirname "$0")/../src" && pwd)
fail=0
bad() { echo "FAIL: $*"; fail=1; }

declare -A deps closure
layers=()
while IFS=: read -r name rest; do
  [ -n "$name" ] || continue
  layers+=("$name")
  deps[$name]=$(echo $rest)
done <"$graph"

closure_of() { # the layer and every layer below it, one per line
  local l=$1 d
  echo "$l"
  for d in ${deps[$l]}; do closure_of "$d"; done
}
for l in "${layers[@]}"; do closure[$l]=" $(closure_of "$l" | sort -u | tr '\n' ' ')"; done

# every folder of src/ is a layer
for d in "$src"/*/; do
  d=$(basename "$d")
  [ -n "${deps[$d]+x}" ] || bad "src/$d/ is no layer of $graph (cmake/layers.cmake, CMakeLists.txt)"
done

# includes: "LAYER/..." only of the closure
for l in "${layers[@]}"; do
  while IFS=: read -r file _ inc; do
    top=${inc%%/*}
    [ -n "${deps[$top]+x}" ] || continue # treduce/..., a system header
    case ${closure[$l]} in *" $top "*) ;; *)
      bad "${file#"$src"/} includes $inc: layer $top is not below $l" ;;
    esac
  done < <(grep -HnoE '^#include "[a-z_]+/[^"]+"' "$src/$l"/*.[ch] 2>/dev/null |
           sed -E 's/:[0-9]+:#include "/::/; s/"$//')
done

# symbols: who defines what, then who uses what (one nm over every object)
closures=$(for l in "${layers[@]}"; do echo "$l${closure[$l]}"; done)
while read -r line; do bad "$line"; done < <(
  while read -r l objs; do
    # shellcheck disable=SC2086
    nm -A $objs | sed "s|^|$l |"
  done <"$graph.objects" |
  awk -v closures="$closures" '
    BEGIN { n = split(closures, rows, "\n")
            for (i = 1; i <= n; i++) { k = split(rows[i], f, " ")
              for (j = 2; j <= k; j++) below[f[1], f[j]] = 1 } }
    { layer = $1; obj = $2; sub(/:$/, "", obj); sub(/.*\//, "", obj); sub(/\.o$/, "", obj) }
    NF == 4 && $3 ~ /^[TDBRCVW]$/ { owner[$4] = layer; next }
    NF == 4 && $3 == "U" { use[++u] = layer " " obj " " $4 }
    END { for (i = 1; i <= u; i++) { split(use[i], f, " ")
            if ((f[3] in owner) && !((f[1], owner[f[3]]) in below))
              printf "layer %s (%s) uses %s of layer %s, which is not below it\n",
                     f[1], f[2], f[3], owner[f[3]] } }')

if [ -n "$docs" ]; then
  want=$(sed 's/[[:space:]]*$//' "$graph" | sed '/^$/d')
  have=$(awk '/^```layers$/ {on = 1; next} on && /^```/ {exit} on' "$docs" | sed 's/[[:space:]]*$//' | sed '/^$/d')
  [ -n "$have" ] || bad "$docs has no \`\`\`layers block"
  if [ -n "$have" ] && [ "$want" != "$have" ]; then
    bad "the layers block of $docs is not the build's graph:"
    diff <(echo "$have") <(echo "$want") | sed 's/^/    /' || true
  fi
fi

if [ -n "$core" ]; then
  needed=$(readelf -d "$core" | awk '/\(NEEDED\)/ {print $NF}' | tr -d '[]')
  for lib in mpi qsopt gmp xml2 plplot; do
    if grep -q "lib$lib" <<<"$needed"; then bad "$core needs lib$lib: $(tr '\n' ' ' <<<"$needed")"; fi
  done
fi
[ "$fail" -eq 0 ] && echo "layers: ok (${#layers[@]} layers)"
exit "$fail"
