#!/usr/bin/env bash
# overhead.sh -- what capture under the trace tool costs: the wall time of
# each lab solution (and of a many-small-operations program) run plainly and
# under `streamtrace run`, alternated, N times each; medians and the ratio.
#   checker/tests/overhead.sh [N]     (default 5; build first: make)
set -u
n=${1:-5}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ST=checker/trace/streamtrace
tmp=$(mktemp -d)
nvcc -O2 -o "$tmp/many_small" checker/tests/fixtures/trace-progs/many_small.cu || exit 1
nvcc -O2 -o "$tmp/init_only" checker/tests/fixtures/trace-progs/init_only.cu || exit 1

. checker/tests/timing.bash   # us, median

printf '%-26s %12s %12s %9s\n' program "plain ms" "traced ms" overhead
# init_only: the fixed cost per process (a CUDA context and nothing else)
for prog in "$tmp/init_only" solutions/*/[a-z]*[a-z] "$tmp/many_small"; do
    [ -x "$prog" ] && [ ! -d "$prog" ] || continue
    : >"$tmp/p"; : >"$tmp/t"
    for i in $(seq "$n"); do
        us "$prog" >>"$tmp/p"
        us "$ST" run -o "$tmp/x.trace" -- "$prog" >>"$tmp/t"
    done
    p=$(median <"$tmp/p") t=$(median <"$tmp/t")
    awk -v name="$(basename "$prog")" -v p="$p" -v t="$t" \
        'BEGIN { printf "%-26s %12.1f %12.1f %8.1f%%\n", name, p / 1000, t / 1000, (t / p - 1) * 100 }'
done
rm -rf "$tmp"
