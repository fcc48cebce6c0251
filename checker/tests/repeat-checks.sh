#!/usr/bin/env bash
# repeat-checks.sh -- the same checks N times in a row: are the verdicts stable?
#   checker/tests/repeat-checks.sh N LAB...   one line per run: LAB run i: counts, seconds
# Runs the checks on the solutions (the starters and mutants: make test).
set -u
n=$1
shift
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
for lab in "$@"; do
    d=$(ls -d solutions/"$lab"* | head -n 1)
    for i in $(seq "$n"); do
        t0=$(date +%s%N)
        line=$(./checker/run-checks --dir "$d" "$lab" 2>&1 | grep -E '^  [0-9]+ passed')
        echo "$(basename "$d") run $i:$line in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    done
done
