#!/bin/sh
# check_needed.sh LIBRARY SONAME [SANITIZERS]: libgreenctx.so must not depend on libcuda (or any
# CUDA library): it loads the driver at run time. Outside sanitizer builds its NEEDED entries
# may only be libc, libdl, libpthread and the dynamic loader. Its SONAME is SONAME (one per
# minor before 1.0: libgreenctx.so.0.3).
lib=$1
expected_soname=$2
sanitize=$3
if command -v readelf >/dev/null 2>&1; then
    dyn=$(readelf -d "$lib") || exit 1
    needed=$(printf '%s\n' "$dyn" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p')
    soname=$(printf '%s\n' "$dyn" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
elif command -v objdump >/dev/null 2>&1; then
    dyn=$(objdump -p "$lib") || exit 1
    needed=$(printf '%s\n' "$dyn" | awk '$1 == "NEEDED" { print $2 }')
    soname=$(printf '%s\n' "$dyn" | awk '$1 == "SONAME" { print $2 }')
else
    echo "neither readelf nor objdump is installed (binutils): cannot read $lib"
    exit 77
fi
echo "$lib: SONAME $soname; NEEDED:" $needed
status=0
if [ "$soname" != "$expected_soname" ]; then
    echo "FAIL: SONAME is '$soname', expected $expected_soname"
    status=1
fi
for n in $needed; do
    case "$n" in
    *cuda* | *CUDA* | *nvidia*)
        echo "FAIL: $lib depends on $n: the driver must be loaded at run time, never linked"
        status=1 ;;
    libc.so.* | libdl.so.* | libpthread.so.* | ld-linux*.so.* | ld64.so.*) ;;
    libasan.so.* | libubsan.so.* | libtsan.so.* | libclang_rt.* | libstdc++.so.* | libm.so.* | libgcc_s.so.*)
        if [ -z "$sanitize" ]; then
            echo "FAIL: $lib depends on $n (only libc, libdl and pthreads are allowed)"
            status=1
        fi ;;
    *)
        echo "FAIL: $lib depends on $n (only libc, libdl and pthreads are allowed)"
        status=1 ;;
    esac
done
[ $status -eq 0 ] && echo "ok: no CUDA dependency"
exit $status
