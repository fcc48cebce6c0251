#!/usr/bin/env bash
# gpu-suite.sh -- everything the kit proves on a GPU, in one go, for a GPU
# node (on one without network or bats, carry checker/vendor/node_modules
# there: README.md, "On a GPU node without network").
#   checker/tests/gpu-suite.sh [LAB...]     logs and traces under $OUT
# Builds everything, runs make test (solutions pass, starters and mutants
# fail, trace tests), and make trace on each given lab's solution.
set -u
OUT=${OUT:-/tmp/gpu-suite}
mkdir -p "$OUT"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export NO_COLOR=1

echo "== $(nvidia-smi -L 2>&1 | head -n 1); $(nvcc --version | tail -n 1)"
command -v patch >/dev/null || echo "warning: no patch(1) here: mutants cannot be built"
start=$(date +%s)
# -k: a lab still being written must not stop the others from being checked
make -k -j"$(nproc)" >"$OUT/build.log" 2>&1 || { echo "build errors:"; grep -m 10 -E 'error|Error' "$OUT/build.log"; }
echo "== build: $(( $(date +%s) - start )) s"

rm -rf build/selftest-gpu.txt build/selftest
t0=$(date +%s)
# keep the self-test's builds (KIT_BUILD) for the recordings below
KIT_BUILD=$PWD/build/selftest make test 2>&1 | tee "$OUT/test.log" | grep -E '^  (FAIL|skip)|[0-9]+ passed, '
echo "== make test: $(( $(date +%s) - t0 )) s"
cp build/selftest-gpu.txt "$OUT/" 2>/dev/null && cat build/selftest-gpu.txt

# Recordings of every variant for checker/tests/replay.bats ($OUT/replays.tgz)
[ -n "${RECORD:-}" ] && checker/tests/record-replays.sh "$OUT" >"$OUT/record.log" 2>&1

for lab in "$@"; do
    d=$(ls -d solutions/"$lab"* | head -n 1)
    echo "== make check on $d"
    t0=$(date +%s%N)
    ./checker/run-checks --dir "$d" "$lab" >"$OUT/check-$lab.log" 2>&1
    echo "   $(grep -E '^  [0-9]+ passed' "$OUT/check-$lab.log") in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    grep -A4 FAIL "$OUT/check-$lab.log"
    echo "== make trace on $d"
    COLUMNS=120 make --no-print-directory -C "$d" trace >"$OUT/trace-$lab.log" 2>&1
    cat "$OUT/trace-$lab.log"
    cp "$d"/*.trace "$d"/*.json "$OUT/" 2>/dev/null
done
