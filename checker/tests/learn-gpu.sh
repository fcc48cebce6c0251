#!/usr/bin/env bash
# learn-gpu.sh -- on a GPU node: what a student reads when a check fails, and
# the "Your run" block, for one planted mistake (mutant) of every lab.
#
#   checker/tests/learn-gpu.sh [OUT]          (default: build/learn-gpu)
#
# For each lab, its solution and one mutant are copied (the mutant is the
# solution with its patch applied, as the self-test does), built for this GPU
# and checked with `run-checks`, a student's predictions.txt beside them
# (tests/fixtures/learn/LAB.predictions), as on a 100-column terminal. Then
# lab 02's mutant again on a 60-column terminal, and lab 05's with
# REPORT=junit (the drawing must be in the <failure> text, the TAP's result
# lines must have none). Writes:
#   OUT/learn-gpu.log     the short log: per lab the mutant's whole check
#                         (failures with their drawings, Your run), the
#                         solution's Your run; a table at the end
#   OUT/LAB-VARIANT.log   each run-checks output in full
# Exit status: 0 every mutant failed with a drawing and every solution
# passed with a Your run; 1 not; 77 no GPU here.
set -u
KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT=${1:-$KIT/build/learn-gpu}
LEARN="$KIT/checker/tests/fixtures/learn"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG="$OUT/learn-gpu.log"

if ! nvidia-smi --query-gpu=name --format=csv,noheader >/dev/null 2>&1; then
    echo "learn-gpu: no GPU here (nvidia-smi finds none): run it on a GPU node" >&2
    exit 77
fi

# lab -> the mutant shown: one of each kind of check that draws
MUTANTS="01-sync-copy:kernel-time-no-sync 02-async-copy:kernel-default-stream
03-pinned-memory:pinned-with-malloc 04-events:no-stream-wait
05-overlap:kernel-default-stream 06-lifetime:s1-wait-for-kernels
07-default-streams:pipeline-memset-on-stream-0 08-pytorch:clock-before-sync
09-multi-gpu:split-wait-before-next-device"

make --no-print-directory -s -C "$KIT" tools >"$OUT/tools.log" 2>&1 ||
    { echo "learn-gpu: make tools failed, see $OUT/tools.log" >&2; exit 1; }
[ -x "$KIT/checker/vendor/node_modules/bats/bin/bats" ] || command -v bats >/dev/null ||
    make --no-print-directory -C "$KIT" deps >>"$OUT/tools.log" 2>&1

# copies of the solutions and mutants, built in parallel
V="$OUT/variants"
rm -rf "$V"
for lm in $MUTANTS; do
    lab=${lm%%:*} mut=${lm#*:}
    prog=$(sed -n 's/^PROG *:= *//p' "$KIT/solutions/$lab/Makefile")
    src=$(sed -n 's/^SRC *:= *//p' "$KIT/solutions/$lab/Makefile")
    src=${src:-$prog.cu}
    for v in solution "mut-$mut"; do
        mkdir -p "$V/$lab/$v"
        cp "$KIT/solutions/$lab/Makefile" "$KIT/solutions/$lab/$src" "$V/$lab/$v/"
        cp "$LEARN/$lab.predictions" "$V/$lab/$v/predictions.txt"
    done
    patch -s -F0 -p1 -d "$V/$lab/mut-$mut" <"$KIT/checker/tests/mutants/$lab/$mut.patch" ||
        { echo "learn-gpu: $lab/$mut.patch does not apply" >&2; exit 1; }
done
(cd "$V" && ls -d */*) | xargs -P "$(nproc)" -I{} sh -c \
    'make --no-print-directory -C "$1/$2" KIT_ROOT="$3" >"$1/$2/build.log" 2>&1 || echo "build failed: $2"' \
    _ "$V" {} "$KIT"

# check VARIANT_DIR LAB NAME [ENV...]: run-checks on it, the output kept
check() {
    local d=$1 lab=$2 name=$3
    shift 3
    env COLUMNS=100 "$@" "$KIT/checker/run-checks" --dir "$d" --tap-out "$OUT/$name.tap" "$lab" \
        >"$OUT/$name.log" 2>&1
    echo $? >"$OUT/$name.rc"
}

: >"$LOG"
{
    echo "learn-gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1), $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "Each lab: a planted mistake, checked as a student with predictions.txt sees it (COLUMNS=100)."
    echo
} >>"$LOG"
rows=() bad=0
for lm in $MUTANTS; do
    lab=${lm%%:*} mut=${lm#*:}
    check "$V/$lab/mut-$mut" "$lab" "$lab-mut-$mut"
    check "$V/$lab/solution" "$lab" "$lab-solution"
    {
        echo "===== $lab, mutant $mut ($(sed -n '2s/^# //p' "$KIT/checker/tests/mutants/$lab/$mut.patch"))"
        cat "$OUT/$lab-mut-$mut.log"
        echo "----- $lab, the solution: its Your run"
        sed -n '/^  [0-9]* passed,/,/^$/p' "$OUT/$lab-solution.log"
    } >>"$LOG"
    drawn=$(grep -c '^          timeline: ' "$OUT/$lab-mut-$mut.log")
    failed=$(grep -c '^  FAIL ' "$OUT/$lab-mut-$mut.log")
    named=$(sed -n '1s/^# expect: //p' "$KIT/checker/tests/mutants/$lab/$mut.patch")
    grep -qxF "  FAIL  $named" "$OUT/$lab-mut-$mut.log" || named="(NOT FAILED) $named"
    yr_m=$(grep -c '^  Your run' "$OUT/$lab-mut-$mut.log")
    yr_s=$(grep -c '^  Your run (never graded)' "$OUT/$lab-solution.log")
    sol=$(grep -c '^  FAIL ' "$OUT/$lab-solution.log")
    rows+=("$(printf '%-17s %-24s %2d FAIL, %d drawn, Your run %d | solution: %d FAIL, Your run %d | %s' \
        "$lab" "$mut" "$failed" "$drawn" "$yr_m" "$sol" "$yr_s" "$named")")
    [ "$drawn" -ge 1 ] && [ "$yr_s" = 1 ] && [ "$sol" = 0 ] && [[ $named != "(NOT"* ]] || bad=1
done

# a narrow terminal, and a JUnit report
check "$V/02-async-copy/mut-kernel-default-stream" 02-async-copy narrow-02 COLUMNS=60
env COLUMNS=100 "$KIT/checker/run-checks" --report junit --reports-dir "$OUT/reports" \
    --dir "$V/05-overlap/mut-kernel-default-stream" 05-overlap >"$OUT/junit-05.log" 2>&1
xml="$OUT/reports/05-overlap/report.xml"
{
    echo "===== 02-async-copy, mutant kernel-default-stream on a 60-column terminal"
    sed -n '/^  FAIL/,/^  [a-z]/p' "$OUT/narrow-02.log" | head -n 24
    echo
    echo "===== 05-overlap with REPORT=junit: lines of the drawing in $xml: $(grep -c '^| ' "$xml" 2>/dev/null)"
    echo "      TAP result lines (ok / not ok) holding a drawing: $(grep -c '^\(not \)\?ok .*|' "$OUT/05-overlap-mut-kernel-default-stream.tap")"
    echo
    echo "===== summary (lab, mutant, its failures, drawings, Your run | the solution | the check the mutant names)"
    printf '%s\n' "${rows[@]}"
} >>"$LOG"
[ "$(grep -c '^| ' "$xml" 2>/dev/null)" -gt 0 ] || bad=1
echo "learn-gpu: $LOG ($(wc -l <"$LOG") lines)$([ "$bad" = 0 ] && echo ", all as expected" || echo ", NOT all as expected: see the summary")"
exit "$bad"
