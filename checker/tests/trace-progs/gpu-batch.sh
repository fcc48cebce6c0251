#!/usr/bin/env bash
# gpu-batch.sh -- one batch of trace-tool work on a GPU machine without bats:
# build, capture known.cu, print the timeline and the queries trace-gpu.bats
# asserts, measure capture overhead. Writes traces to $OUT (default /tmp/out).
# Run from the kit root: checker/tests/trace-progs/gpu-batch.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T=checker/trace; P=checker/tests/trace-progs; B=/tmp/stbuild; mkdir -p $B
echo "== machine"; nvidia-smi -L; command -v nvcc
CUPTI=$(find / -name 'libcupti.so' -not -path '/proc/*' 2>/dev/null | head -3)
echo "libcupti: $CUPTI"
echo "== build"; make -C $T clean >/dev/null; make -C $T V=1 libstreamtrace.so || exit 1; make -C $T V=1 streamtrace || echo "(no CLI yet)"
nvcc -O2 -lineinfo -o $B/known $P/known.cu && nvcc -O2 -lineinfo -o $B/many_small $P/many_small.cu || exit 1
ST=$T/streamtrace; LIB=$PWD/$T/libstreamtrace.so
CU1=$(echo "$CUPTI" | head -1)
capture() { # capture FILE PROG ARGS: with the CLI if built, else by hand
  local f=$1; shift
  if [ -x $ST ]; then $ST run -o "$f" -- "$@"
  else CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$CU1 STREAMTRACE_OUT=$f "$@"; fi
}
echo "== known.cu under capture"
capture $OUT/known.trace $B/known; echo "rc=$?"
grep -v '^api' $OUT/known.trace | head -80
echo "api lines: $(grep -c '^api' $OUT/known.trace)"; grep '^api' $OUT/known.trace | cut -f6 | sort | uniq -c
if [ -x $ST ]; then
  echo "== timeline"; COLUMNS=110 $ST timeline --color never $OUT/known.trace
  echo "== summary"; $ST summary $OUT/known.trace
  q() { echo "query $*: $($ST query $OUT/known.trace "$@" 2>&1)"; }
  q count h2d --stream default --mem PAGEABLE; q count h2d --mem PINNED; q streams h2d --mem PINNED
  q count kernel; q overlap h2d kernel; q count nvtx:host_work; q order h2d kernel; q dropped
  q list gpu; q meta device; q meta copy_engines; q meta default_stream
  $ST json $OUT/known.trace -o $OUT/known.json && python3 -m json.tool $OUT/known.json >/dev/null && echo "json ok"
  $ST svg $OUT/known.trace -o $OUT/known.svg && echo "svg ok"
fi
echo "== overhead: many_small 2000 pairs, 5 runs each, interleaved"
ms() { date +%s%N; }
for i in 1 2 3 4 5; do
  a=$(ms); r=$($B/many_small 2000); b=$(ms); echo "plain   wall_ms=$(( (b-a)/1000000 )) $r"
  a=$(ms); r=$(capture /tmp/ms.trace $B/many_small 2000); b=$(ms); echo "capture wall_ms=$(( (b-a)/1000000 )) $r"
done
wc -l /tmp/ms.trace; tail -1 /tmp/ms.trace
for extra in ${EXTRA_PROGS:-}; do :; done
