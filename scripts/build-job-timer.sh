#!/usr/bin/env bash
# One compile job of a timed build (lib.sh, when KB_BUILD_TIMES names a folder): runs the
# toolchain's real tool named like this link (swift-frontend, cc → clang, c++ → clang++), then
# appends "phase, tool, package, module, wall seconds, CPU seconds" to $KB_BUILD_TIMES/jobs.tsv.
# The package is the checkout a source comes from (kb for this repository's own); the module is
# the Swift module, or the target folder of a C object. scripts/build-times.sh sums them.
tool="$(basename "$0")"
case "$tool" in
    cc) real="$KB_TOOLCHAIN_BIN/clang" ;;
    c++) real="$KB_TOOLCHAIN_BIN/clang++" ;;
    *) real="$KB_TOOLCHAIN_BIN/$tool" ;;
esac
start=$EPOCHREALTIME
"$real" "$@"
status=$?
end=$EPOCHREALTIME
module="" package="" previous=""
for argument in "$@"; do
    [ "$previous" = "-module-name" ] && module="$argument"
    if [ -z "$package" ]; then
        case "$argument" in
            */checkouts/*) package="${argument#*/checkouts/}"; package="${package%%/*}" ;;
            */Sources/*|*/Tests/*|*/Benchmarks/*|*/Plugins/*|*/Examples/*) case "$argument" in *.swift|*.c|*.cpp) package=kb ;; esac ;;
        esac
    fi
    case "$argument" in *.build/*.o) [ -n "$module" ] || { module="${argument%.build/*}"; module="${module##*/}"; } ;; esac
    previous="$argument"
done
# The CPU the tool used: this shell's children's user and system time (fields 16 and 17 of its
# /proc stat, in clock ticks).
read -ra stat </proc/$$/stat
ticks=$(getconf CLK_TCK)
awk -v phase="${KB_PHASE:-other}" -v tool="$tool" -v package="${package:-(none)}" -v module="${module:-(queries)}" \
    -v start="$start" -v end="$end" -v cpu=$(( stat[15] + stat[16] )) -v ticks="$ticks" \
    'BEGIN { printf "%s\t%s\t%s\t%s\t%.3f\t%.2f\n", phase, tool, package, module, end - start, cpu / ticks }' >>"$KB_BUILD_TIMES/jobs.tsv"
exit $status
