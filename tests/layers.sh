#!/usr/bin/env bash
# Checks the layers of a source directory against its LAYERS table (src/ctl/LAYERS says how it
# reads): every .c and .h file is in exactly one layer; a file includes no header of a higher
# layer; and there is no include circle among its files, x.c and x.h counting as one unit x.
#
# Usage: layers.sh DIR [PREFIX]   PREFIX: how includes name DIR's headers ("ctl/" by default).
# Prints every violation; exits 1 when there is one.
set -euo pipefail
dir=${1:?usage: layers.sh DIR [PREFIX]}
prefix=${2:-ctl/}
table="$dir/LAYERS"
[ -r "$table" ] || { echo "layers: $table: cannot read" >&2; exit 2; }

declare -A rank=() names=()
nlayers=0
while IFS= read -r line; do
    line=${line%%#*}
    [[ $line =~ ^[[:space:]]*([a-z_]+):(.*)$ ]] || continue
    name=${BASH_REMATCH[1]}
    if [ -z "${rank[$name]:-}" ]; then
        nlayers=$((nlayers + 1))
        rank[$name]=$nlayers
    fi
    names[$name]+=" ${BASH_REMATCH[2]}"
done <"$table"

status=0
fail() {
    echo "layers: $*" >&2
    status=1
}

# The layer of each file.
declare -A layer_of=()
files=()
for path in "$dir"/*.c "$dir"/*.h; do
    [ -e "$path" ] || continue
    f=$(basename "$path")
    files+=("$f")
    for name in "${!names[@]}"; do
        for pat in ${names[$name]}; do
            # shellcheck disable=SC2053 # the table's names may be patterns
            if [[ $f == $pat ]]; then
                if [ -n "${layer_of[$f]:-}" ] && [ "${layer_of[$f]}" != "$name" ]; then
                    fail "$f: in two layers, ${layer_of[$f]} and $name"
                fi
                layer_of[$f]=$name
            fi
        done
    done
    [ -n "${layer_of[$f]:-}" ] || fail "$f: in no layer of $table"
done

# Includes: upward ones refused; every edge between units goes to tsort, which finds circles.
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in "${files[@]}"; do
    unit=${f%.*}
    echo "$unit $unit" >>"$edges"
    while IFS= read -r inc; do
        h=${inc#"$prefix"}
        if [ ! -e "$dir/$h" ]; then
            continue
        fi
        from=${layer_of[$f]:-}
        to=${layer_of[$h]:-}
        if [ -n "$from" ] && [ -n "$to" ] && [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
            fail "$f ($from) includes $h ($to): a lower layer may not include a higher one"
        fi
        [ "${h%.*}" = "$unit" ] || echo "$unit ${h%.*}" >>"$edges"
    done < <(sed -n "s|^[[:space:]]*#[[:space:]]*include[[:space:]]*\"\\(${prefix}[^\"]*\\)\".*|\\1|p" \
        "$dir/$f")
done
if ! out=$(tsort "$edges" 2>&1 >/dev/null); then
    fail "include circle among units:" $(printf '%s\n' "$out" | sed -n 's/^tsort: //p' |
        grep -v 'input contains a loop' | tr '\n' ' ')
fi

[ $status -eq 0 ] && echo "layers: ${#files[@]} files of $dir in $nlayers layers, no circle"
exit $status
