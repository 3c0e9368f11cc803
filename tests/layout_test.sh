#!/bin/sh
# layout_test.sh CASE SOURCE_DIR: rules of the source layout that the compiler cannot see.
#   private_headers  nothing outside src/ includes src/internal.h, directly or through another
#                    header of src/
#   bench_tool_header  nothing in bench/ includes tools/tool.h (the tool's own header),
#                    directly or through another header of tools/: the bench takes
#                    tools/command.h, options.h and json.h
#   bench_program TOOL BENCH_LIB  the bench is its own program: the tool defines none of the
#                    bench library's symbols (local ones included), nothing in tools/ includes
#                    a header of bench/ (greenctx-bench links greenctx_cli without the tool:
#                    its build is the check that greenctx_cli calls back into neither
#                    program); no generated C in bench/ (its PTX is data, bench/kernels/*.ptx,
#                    compiled in by the build); no kernel of the bench named in sim/'s code
#                    (it registers its cost model)
#   driver_table     every entry point of the library's table (GCU_LIBRARY_SYMBOLS in
#                    src/cuda_abi.h) is called somewhere in src/*.c
#   rooms ROOMS_TXT  `greenctx run`'s rooms stay apart: the tool (tools/), the preload
#                    (preload/) and the Slurm plugin (slurm/) compile only their own sources
#                    and share only common/ (its own target); no target's include
#                    directories name another room or src/ (the library's private headers:
#                    the rooms call its public API), and no source includes a header by a
#                    path
set -u
case=$1
src=$2

# The headers of DIR that are HEADER or include one of those, found again until the list
# stops growing (observe.h -> stream.h -> partition.h -> internal.h).
including() {
    found=$2
    while :; do
        more=$( (echo "$found"
                 for p in $found; do grep -l "#include \"$p\"" "$1"/*.h; done) |
               sed 's#.*/##' | sort -u)
        [ "$more" = "$found" ] && break
        found=$more
    done
    echo $found
}

# none_include WHY HEADERS FILES...: no FILE includes any of HEADERS (each one that does is
# listed with WHY).
none_include() {
    why=$1 headers=$2
    shift 2
    status=0
    for h in $headers; do
        found=$(grep -l "#include \"$h\"" "$@" 2>/dev/null)
        if [ -n "$found" ]; then
            echo "not ok: these files include $h ($why):"
            echo "$found"; status=1
        fi
    done
    return $status
}

case $case in
private_headers)
    private=$(including "$src/src" internal.h)
    outside=$(find "$src" \( -path "$src/src" -o -path "$src/build*" -o -path "$src/.git" \) \
        -prune -o \( -name '*.c' -o -name '*.h' \) -print)
    # $outside is split into its file names on purpose (none has a space: the tree's own).
    none_include "they are outside src/, and it is or includes internal.h" "$private" $outside &&
        echo "ok: nothing outside src/ includes any of:" $private ;;
bench_tool_header)
    tool=$(including "$src/tools" tool.h)
    none_include "they are in bench/, and it is or includes tools/tool.h" "$tool" \
        "$src"/bench/*.c "$src"/bench/*.h &&
        echo "ok: nothing in bench/ includes any of:" $tool ;;
bench_program)
    tool=$3 bench_lib=$4
    none_include "they are in tools/, and it is a header of bench/" \
        "$(cd "$src/bench" && echo *.h)" "$src"/tools/*.c "$src"/tools/*.h || exit 1
    # Every name the file defines, local ones too: the libraries' symbols are hidden, so they
    # are local in a linked program (a compiler's "f.cold" counts as f).
    defined() {
        nm --defined-only ${2:-} "$1" 2>/dev/null | awk 'NF == 3 { sub(/\..*/, "", $3); print $3 }' |
            sort -u
    }
    syms=${TMPDIR:-/tmp}/layout-bench.$$
    defined "$bench_lib" -g >"$syms"
    in_tool=$(defined "$tool" | comm -12 - "$syms")
    [ -s "$syms" ] || { rm -f "$syms"; echo "not ok: no symbols read from $bench_lib"; exit 1; }
    rm -f "$syms"
    if [ -n "$in_tool" ]; then
        echo "not ok: the tool defines the bench's symbols:" $in_tool; exit 1
    fi
    generated=$(grep -l "GENERATED\|^const char [a-z_]*ptx\[\] =" "$src"/bench/*.c)
    if [ -n "$generated" ]; then
        echo "not ok: generated code in bench/ (keep the data, compile it in):" $generated; exit 1
    fi
    for entry in $(sed -n 's/^\.visible \.entry \([A-Za-z0-9_]*\)(.*/\1/p' \
        "$src"/bench/kernels/*.ptx); do
        named=$(grep -rl "$entry" "$src"/sim --include='*.c' --include='*.h')
        if [ -n "$named" ]; then
            echo "not ok: sim/ names the bench's kernel $entry:" $named; exit 1
        fi
    done
    echo "ok: the tool defines no symbol of the bench, tools/ includes no header of bench/," \
        "bench/ holds no generated C, sim/ names none of its kernels" ;;
driver_table)
    names=$(sed -n '/^#define GCU_LIBRARY_SYMBOLS/,/^$/p' "$src/src/cuda_abi.h" |
        grep -o 'X(cu[A-Za-z0-9_]*' | sed 's/^X(//')
    [ -n "$names" ] || { echo "not ok: no GCU_LIBRARY_SYMBOLS table found"; exit 1; }
    status=0
    for name in $names; do
        # Called through the table (drv->NAME( or driver.NAME( ), or named in driver.c's
        # feature rows (cuGreenCtxCreate, ...) which the loader checks for.
        if ! grep -q -e "->$name(" -e "\.$name(" "$src"/src/*.c; then
            echo "not ok: $name is in the library's driver table but src/ never calls it"
            status=1
        fi
    done
    [ $status -eq 0 ] && echo "ok: $(echo "$names" | wc -l) entry points, each called in src/"
    exit $status ;;
rooms)
    rooms_txt=$3
    src=$(realpath "$src")
    [ -s "$rooms_txt" ] || { echo "not ok: $rooms_txt (each room's build) is empty"; exit 1; }
    status=0
    others() { for r in tools preload slurm; do [ "$r" = "$1" ] || echo "$r"; done; }
    while read -r room kind path; do
        [ -n "$path" ] || continue
        case $path in /*) ;; *) path=$src/$room/$path ;; esac
        path=$(realpath -m "$path")
        if [ "$kind" = source ]; then
            case $path in "$src/$room"/*) ;; *)
                echo "not ok: the $room room compiles $path, which is not its own"; status=1 ;;
            esac
        else
            for other in $(others "$room") src; do
                case $path/ in "$src/$other"/*)
                    echo "not ok: the $room room includes headers of $other/ ($path)"; status=1 ;;
                esac
            done
        fi
    done <"$rooms_txt"
    # A header by a path ("../tools/tool.h") would pass any include directory: none has one.
    for room in tools preload slurm common; do
        found=$(grep -n '#include "[^"]*/' "$src/$room"/*.[ch] 2>/dev/null)
        if [ -n "$found" ]; then
            echo "not ok: $room/ includes a header by a path (another room's?):"
            echo "$found"; status=1
        fi
    done
    for room in tools preload slurm; do
        grep -q "^$room source" "$rooms_txt" || [ "$room" = slurm ] ||
            { echo "not ok: no sources listed for $room"; status=1; }
    done
    [ $status -eq 0 ] &&
        echo "ok: tools/, preload/ and slurm/ compile their own sources, share only common/" \
            "and include no header of src/"
    exit $status ;;
*) echo "unknown case $case"; exit 2 ;;
esac
