#!/usr/bin/env bash
# gpu-batch.sh -- one batch of trace-tool work on a GPU machine without bats:
# build, capture the test programs and lab 01's solution, print timelines and
# the queries trace-gpu.bats asserts, measure capture overhead.
# Run from the kit root: checker/tests/trace-progs/gpu-batch.sh
# Traces land in $OUT (default /tmp/out). RUNS=5 repetitions for overhead.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; RUNS=${RUNS:-5}
T=checker/trace; P=checker/tests/trace-progs; B=/tmp/stbuild; mkdir -p $B
ST=$T/streamtrace
echo "== machine"; nvidia-smi -L
echo "== build"; make -C $T clean >/dev/null; make -C $T || exit 1
for p in known many_small extras kinds peers current; do nvcc -O2 -lineinfo -o $B/$p $P/$p.cu || exit 1; done

echo "== known.cu"
$ST run -o $OUT/known.trace -- $B/known; echo "rc=$?"
COLUMNS=110 $ST timeline --color never $OUT/known.trace
$ST summary $OUT/known.trace
q() { echo "query $*: $($ST query $OUT/known.trace "$@" 2>&1 | tr '\n' ' ')"; }
q count h2d --stream default --mem PAGEABLE; q count h2d --mem PINNED; q streams h2d --mem PINNED
q count kernel; q overlap h2d kernel; q count nvtx:host_work; q order h2d kernel; q dropped
$ST json $OUT/known.trace -o $OUT/known.json && python3 -m json.tool $OUT/known.json >/dev/null && echo "json ok"
$ST svg $OUT/known.trace -o $OUT/known.svg && echo "svg ok"

echo "== extras.cu"
$ST run -o $OUT/extras.trace -- $B/extras; echo "rc=$?"
grep -v '^api' $OUT/extras.trace
COLUMNS=100 $ST timeline --color never $OUT/extras.trace

echo "== kinds.cu (format 2: per-thread, blocking, non-blocking streams)"
$ST run -o $OUT/kinds.trace -- $B/kinds; echo "rc=$?"
grep -v '^api' $OUT/kinds.trace | grep -v '^nvtx'
COLUMNS=110 $ST timeline --color never $OUT/kinds.trace

echo "== peers.cu (two GPUs: a peer copy staged, then direct)"
$ST run -o $OUT/peers.trace -- $B/peers; echo "rc=$?"
$ST query $OUT/peers.trace events p2p
COLUMNS=110 $ST timeline --color never $OUT/peers.trace

echo "== current.cu (two GPUs: a kernel into a stream of device 1 while device 0 is current)"
$ST run -o $OUT/current.trace -- $B/current; echo "rc=$?"
$ST query $OUT/current.trace current gpu
$ST query $OUT/current.trace current api:cudaLaunchKernel

echo "== lab 01 solution: make trace"
make -C solutions/01-sync-copy trace 2>&1 | tail -40
cp solutions/01-sync-copy/sync_copy.trace $OUT/lab01.trace 2>/dev/null

echo "== no CUDA context: run true"
$ST run -o $OUT/none.trace -- true; echo "rc=$?"
echo "== exit status passes through"; $ST run -o /tmp/x.trace -- sh -c 'exit 7'; echo "rc=$?"

echo "== overhead: $RUNS runs each, interleaved; wall ms of the whole process"
ms() { date +%s%N; }
overhead() { # NAME CMD...
  local name=$1; shift; local p=() c=()
  for i in $(seq $RUNS); do
    a=$(ms); "$@" >/dev/null; b=$(ms); p+=($(( (b-a)/1000 )))
    a=$(ms); $ST run -o /tmp/ov.trace -- "$@" >/dev/null; b=$(ms); c+=($(( (b-a)/1000 )))
  done
  mp=$(printf '%s\n' "${p[@]}" | sort -n | sed -n "$(( (RUNS+1)/2 ))p")
  mc=$(printf '%s\n' "${c[@]}" | sort -n | sed -n "$(( (RUNS+1)/2 ))p")
  echo "$name: plain us ${p[*]} | capture us ${c[*]} | medians $mp $mc | overhead $(awk -v a=$mp -v b=$mc 'BEGIN{printf "%.1f%%", (b-a)*100/a}') | $(tail -1 /tmp/ov.trace)"
}
overhead many_small $B/many_small 2000
overhead lab01 solutions/01-sync-copy/sync_copy
for i in 1 2 3; do $B/many_small 2000; $ST run -o /tmp/ov.trace -- $B/many_small 2000; done
ls -la $OUT
