#!/usr/bin/env bash
# overhead-probe.sh -- where the capture overhead of lab 01 comes from:
# shared vs static CUDA runtime, streamtrace run vs the bare injection
# variables, and the program's own figures under each.
#   checker/tests/overhead-probe.sh [N]   (build first: make)
# Written when the session had no device time left: not yet run on a GPU.
# It exists to split the 11% overhead of lab 01 (trace/README.md) into its
# parts in one GPU call.
set -u
n=${1:-7}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ST=checker/trace/streamtrace
LIB=$PWD/checker/trace/libstreamtrace.so
tmp=$(mktemp -d)
arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
arch=${arch:-90}
src=solutions/01-sync-copy/sync_copy.cu
nvcc -O2 -arch=sm_$arch -Icommon -cudart static -o "$tmp/lab01_static" $src || exit 1
cp solutions/01-sync-copy/sync_copy "$tmp/lab01_shared"
nvcc -O2 -arch=sm_$arch -cudart static -o "$tmp/small_static" checker/tests/fixtures/trace-progs/many_small.cu || exit 1
nvcc -O2 -arch=sm_$arch -cudart shared -o "$tmp/small_shared" checker/tests/fixtures/trace-progs/many_small.cu || exit 1
nvcc -O2 -arch=sm_$arch -cudart static -o "$tmp/init_static" checker/tests/fixtures/trace-progs/init_only.cu || exit 1
nvcc -O2 -arch=sm_$arch -cudart shared -o "$tmp/init_shared" checker/tests/fixtures/trace-progs/init_only.cu || exit 1

"$tmp/init_static" >/dev/null 2>&1
[ $? -ne 77 ] || { echo "overhead-probe: no usable CUDA device: nothing measured" >&2; rm -rf "$tmp"; exit 77; }

. checker/tests/timing.bash   # us, median
plain() { "$@"; }
cli() { "$ST" run -o "$tmp/x.trace" -- "$@"; }
bare() { CUDA_INJECTION64_PATH=$LIB STREAMTRACE_OUT=$tmp/y.trace "$@"; }

printf '%-14s %10s %10s %10s %8s %8s\n' program plain_ms cli_ms bare_ms cli% bare%
for prog in init_static init_shared lab01_static lab01_shared small_static small_shared; do
    : >"$tmp/p"; : >"$tmp/c"; : >"$tmp/b"
    for i in $(seq "$n"); do
        us plain "$tmp/$prog" >>"$tmp/p"
        us cli "$tmp/$prog" >>"$tmp/c"
        us bare "$tmp/$prog" >>"$tmp/b"
    done
    p=$(median <"$tmp/p") c=$(median <"$tmp/c") b=$(median <"$tmp/b")
    awk -v name="$prog" -v p="$p" -v c="$c" -v b="$b" 'BEGIN { printf "%-14s %10.1f %10.1f %10.1f %7.1f%% %7.1f%%\n",
        name, p / 1000, c / 1000, b / 1000, (c / p - 1) * 100, (b / p - 1) * 100 }'
done
echo "--- the programs' own figures, plain then traced"
for prog in lab01_static lab01_shared; do
    echo "$prog plain:  $("$tmp/$prog" | grep -E '_ms|GB' | tr '\n' ' ')"
    echo "$prog traced: $(cli "$tmp/$prog" | grep -E '_ms|GB' | tr '\n' ' ')"
done
for prog in small_static small_shared; do
    echo "$prog plain: $("$tmp/$prog" | tr '\n' ' ') traced: $(cli "$tmp/$prog" | tr '\n' ' ')"
done
echo "records in a lab01 trace: $(grep -c . "$tmp/x.trace")"
rm -rf "$tmp"
