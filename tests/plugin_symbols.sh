#!/bin/sh
# plugin_symbols.sh PLUGIN: every symbol the SPANK plugin leaves undefined is one Slurm (spank_*,
# slurm_*) or the C library provides. Slurm loads plugins lazily, so a symbol missing from the
# plugin's own sources (a helper of tools/ it links without its file) would only fail the day a
# task reaches the code that calls it.
plugin=$1
command -v nm >/dev/null 2>&1 || { echo "nm is not installed (binutils)"; exit 77; }
missing=$(nm -D --undefined-only "$plugin" | awk '$1 == "U" { print $2 }' |
    grep -v -e '@' -e '^spank_' -e '^slurm_') || true
if [ -n "$missing" ]; then
    echo "FAIL: $plugin leaves these undefined, and neither Slurm nor libc has them:"
    echo "$missing"
    exit 1
fi
echo "every undefined symbol of $plugin is Slurm's or libc's"
