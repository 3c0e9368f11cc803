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
#   library_rooms    the library's rooms (docs/architecture.md, "The library's rooms"): tenancy
#                    (src/claim*, mps.c, guard_policy.*, nvml.*) and policy (src/controller*)
#                    point at the core only: no core file of src/ includes a header of either
#                    room (src/claim.h, guard_policy.h, nvml.h, controller.h, greenctx_claims.h,
#                    greenctx_controller.h, or a header that includes one), policy includes no
#                    tenancy header and tenancy no policy header
#   public_headers   outside the library (tools/, common/, bench/, preload/, slurm/) a file
#                    that includes a public header uses a name that header declares itself:
#                    each includes only the public headers it needs
#   src_headers TREE [HEADER...]  no file of TREE includes a header of src/ (the library's
#                    private ones) but the HEADERs named
#   include_circles  no circle of #include among the project's own headers
#   call_circles OBJECTS_TXT  no circle of calls among the object files OBJECTS_TXT lists (a
#                    program's own files: each calls only files below it)
set -u
case=$1
src=$2

# The headers of DIR that are HEADER or include one of those, found again until the list
# stops growing (context_cache.h -> partition.h -> internal.h).
including() {
    found=$(printf '%s\n' $2 | sort -u)
    while :; do
        more=$( (echo "$found"
                 for p in $found; do grep -l "#include \"$p\"" "$1"/*.h; done) |
               sed 's#.*/##' | sort -u)
        [ "$more" = "$found" ] && break
        found=$more
    done
    echo $found
}

# A C file without its comments (names in comments are no use of them).
stripped() {
    perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g' "$1"
}
tmp=${TMPDIR:-/tmp}/layout-$case.$$

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
library_rooms)
    cd "$src/src" || exit 1
    tenancy=$(ls claim*.[ch] mps.c guard_policy.[ch] nvml.[ch])
    policy=$(ls controller*.[ch])
    core=$(ls ./*.[ch] | sed 's#^\./##' | grep -vxF "$tenancy
$policy")
    [ -n "$tenancy" ] && [ -n "$policy" ] && [ -n "$core" ] ||
        { echo "not ok: a room of src/ is empty (tenancy: $tenancy; policy: $policy)"; exit 1; }
    tenancy_h=$(including . "claim.h guard_policy.h nvml.h greenctx_claims.h")
    policy_h=$(including . "controller.h greenctx_controller.h")
    status=0
    # The lists are split into their file names on purpose (src/ has no name with a space).
    none_include "they are core, which points at neither tenancy nor policy" \
        "$tenancy_h $policy_h" $core || status=1
    none_include "they are policy: the controller reads no claim and no registry" \
        "$tenancy_h" $policy || status=1
    none_include "they are tenancy, which takes no policy" "$policy_h" $tenancy || status=1
    [ $status -eq 0 ] && echo "ok: src/ has three rooms, tenancy -> core and policy -> core:" \
        "no core file includes" $tenancy_h $policy_h
    exit $status ;;
public_headers)
    status=0
    for h in greenctx.h greenctx_claims.h greenctx_controller.h; do
        # The names the header declares itself: not the core's, which the other two include.
        stripped "$src/include/$h" | grep -v '^#\(ifndef\|define\) GREENCTX_' |
            grep -oE '\b((gctx|GCTX)_[A-Za-z0-9_]+|CU[A-Za-z]+)\b' | grep -vx GCTX_API |
            sort -u >"$tmp.$h"
        [ "$h" = greenctx.h ] || { comm -23 "$tmp.$h" "$tmp.greenctx.h" >"$tmp.own"; mv "$tmp.own" "$tmp.$h"; }
    done
    for tree in tools common bench preload slurm; do
        for f in "$src/$tree"/*.[ch]; do
            for h in greenctx.h greenctx_claims.h greenctx_controller.h; do
                grep -q "^#include [\"<]$h[\">]" "$f" || continue
                if ! stripped "$f" | grep -v '^#include' | grep -qwF -f "$tmp.$h"; then
                    echo "not ok: ${f#$src/} includes $h but uses nothing it declares"; status=1
                fi
            done
        done
    done
    rm -f "$tmp".*
    [ $status -eq 0 ] && echo "ok: tools/, common/, bench/, preload/ and slurm/ include only" \
        "the public headers they use"
    exit $status ;;
src_headers)
    tree=$3
    shift 3
    allowed=" $* "
    status=0
    for f in "$src/$tree"/*.[ch]; do
        for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
            # A header of the tree or of common/ is theirs (tools/nvml.h is not src/nvml.h).
            [ -f "$src/$tree/$h" ] || [ -f "$src/common/$h" ] || [ ! -f "$src/src/$h" ] && continue
            case $allowed in *" $h "*) continue ;; esac
            echo "not ok: ${f#$src/} includes src/$h, a private header of the library"; status=1
        done
    done
    [ $status -eq 0 ] && echo "ok: $tree/ includes no header of src/${1:+ but $*}"
    exit $status ;;
include_circles)
    # Each header's quoted includes, found as the build finds them: beside it, then in the
    # include directories the trees use.
    find "$src" \( -path "$src/build*" -o -path "$src/.git" -o -path "$src/python" \) -prune -o \
        \( -name '*.h' -o -name '*.hpp' \) -print | while read -r h; do
        dir=$(dirname "$h")
        echo "${h#$src/} ${h#$src/}"
        for inc in $(sed -n 's/^#include ["<]\([^">]*\)[">].*/\1/p' "$h"); do
            for d in "$dir" "$src/include" "$src/src" "$src/common" "$src/tools" "$src/bench"; do
                if [ -f "$d/$inc" ]; then
                    echo "${h#$src/} $(realpath --relative-to="$src" "$d/$inc")"; break
                fi
            done
        done
    done >"$tmp.edges"
    loop=$(tsort "$tmp.edges" 2>&1 >/dev/null | sed '/input contains a loop/d; s/^tsort: /  /')
    nb=$(cut -d' ' -f1 "$tmp.edges" | sort -u | wc -l)
    rm -f "$tmp.edges"
    if [ -n "$loop" ]; then
        echo "not ok: the headers include each other in a circle:"; echo "$loop"; exit 1
    fi
    echo "ok: no #include circle among the project's $nb headers" ;;
call_circles)
    # shellcheck disable=SC2046
    set -- $(cat "$3")
    # Which object defines each global name, then one edge per object that uses a name
    # another one defines.
    for o in "$@"; do
        nm --defined-only -g "$o" | awk -v o="$(basename "$o" .o)" 'NF == 3 { print $3, o }'
    done | sort >"$tmp.defs"
    [ -s "$tmp.defs" ] || { rm -f "$tmp".*; echo "not ok: no symbols read from $*"; exit 1; }
    for o in "$@"; do
        b=$(basename "$o" .o)
        echo "$b $b"
        nm -u "$o" | awk '{ print $NF }' | sort | join - "$tmp.defs" |
            awk -v o="$b" '$2 != o { print o, $2 }'
    done | sort -u >"$tmp.edges"
    loop=$(tsort "$tmp.edges" 2>&1 >/dev/null | sed '/input contains a loop/d; s/^tsort: /  /')
    rm -f "$tmp".*
    if [ -n "$loop" ]; then
        echo "not ok: these files call each other in a circle:"; echo "$loop"; exit 1
    fi
    echo "ok: no circle of calls among $# files:" $(for o in "$@"; do basename "$o" .o; done) ;;
*) echo "unknown case $case"; exit 2 ;;
esac
