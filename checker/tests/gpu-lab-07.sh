#!/usr/bin/env bash
# gpu-lab-07.sh -- lab 07's proof on a GPU node, in one go (about 4 minutes).
#
#   OUT=/path checker/tests/gpu-lab-07.sh [--beside B] [--repeat R]
#
# Builds the kit, then runs lab 07's checker on its solution, its starter
# and every mutant (checker/tests/mutants/07-default-streams): once alone, then
# again while B copies of `make check-solutions` (default 3, in copies of
# the kit) keep the same GPU busy; the solution and the mutants that hang on
# timing (the race, the verdicts, the overlaps) R more times each way
# (default 0: about a minute more for each 1). Every checker run uses the
# replays' seed (REPLAY_SEED, default 20261123), so that the runs alone are
# the replays: kept, and packed as record-replays.sh packs them
# ($OUT/replays.tgz: tar -C checker/tests/fixtures -xzf it). Draws the
# deck's timeline from the recorded solution
# ($OUT/07-default-streams.svg, for slides/timelines/), and prints one table:
# every variant's verdict alone and beside, the checkers beside, and the
# lab's figures from the solution's trace; then what a student reads: the
# solution's "Your run" and the given stray cudaMemset's failed checks with
# their drawings (both with tests/fixtures/learn's predictions.txt beside
# them, which changes no verdict). Exit status 0: every verdict
# right; 1: some wrong; 77: no CUDA device. Needs bats: Debian's, or the
# kit's own in checker/vendor/node_modules (carry it to a node without
# network). Everything it writes is under $OUT (default /tmp/gpu-lab-07).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
KIT=$PWD
LAB=07-default-streams
OUT=${OUT:-/tmp/gpu-lab-07}
beside=3 repeat=0
while [ $# -gt 0 ]; do
    case $1 in
        --beside) beside=${2:-}; shift ;;
        --repeat) repeat=${2:-}; shift ;;
        *) echo "usage: OUT=DIR checker/tests/gpu-lab-07.sh [--beside B] [--repeat R]" >&2; exit 2 ;;
    esac
    shift
done
for n in "$beside" "$repeat"; do
    [[ $n =~ ^[0-9]+$ ]] || { echo "gpu-lab-07.sh: not a number: $n" >&2; exit 2; }
done
export NO_COLOR=1
# every checker run gets the replays' seed: the runs alone are the recordings
export LAB_SEED=${REPLAY_SEED:-20261123}
PATH=$KIT/checker/vendor/node_modules/bats/bin:$PATH
command -v bats >/dev/null || { echo "gpu-lab-07.sh: no bats (apt-get install bats, or carry checker/vendor/node_modules)" >&2; exit 2; }
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-lab-07.XXXXXX")
trap 'touch "$WORK/stop"; kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
ST=$KIT/checker/trace/streamtrace
start=$(date +%s)
since() { echo "$(( $(date +%s) - start )) s"; }

# The self-test's helpers (check_variant, expected_check, tap_failed), as
# shared-gpu.sh uses them; tests/lib.bash loads bats' libraries only under bats.
load() { :; }
BATS_TEST_DIRNAME=$KIT/checker/tests KIT_BUILD=$WORK/selftest
# shellcheck source=lib.bash
. "$KIT/checker/tests/lib.bash"

# ---------------------------------------------------------------- build

GPU=$({ nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; } | head -n 1 | sed 's/ (UUID.*//')
echo "== $GPU; $(nvcc --version | tail -n 1)"
if ! make --no-print-directory -s -j"$(nproc)" all >"$OUT/build.log" 2>&1; then
    echo "build failed:"; grep -m 10 -E 'error|Error' "$OUT/build.log"; exit 1
fi
solutions/$LAB/default_streams --part 1 >"$OUT/probe.out" 2>&1
case $? in
    0) ;;
    77) echo "gpu-lab-07.sh: not run: $(head -n 1 "$OUT/probe.out")"; exit 77 ;;
    *) echo "gpu-lab-07.sh: the solution failed alone:"; cat "$OUT/probe.out"; exit 1 ;;
esac
V=$KIT_BUILD/variants/$LAB
mkdir -p "$V/solution" "$V/starter"
cp "labs/$LAB/Makefile" "labs/$LAB/default_streams.cu" "$V/starter/"
cp "solutions/$LAB/Makefile" "solutions/$LAB/default_streams.cu" "$V/solution/"
for p in checker/tests/mutants/$LAB/*.patch; do
    m=$V/mut-$(basename "$p" .patch)
    mkdir -p "$m" && cp "$V/solution/Makefile" "$V/solution/default_streams.cu" "$m/"
    patch -s -F0 -p1 -d "$m" <"$p" || echo "$p does not apply" >>"$OUT/build.log"
done
# a student's predictions beside the solution and the mutant shown to students
for v in solution mut-pipeline-memset-on-stream-0; do
    cp "checker/tests/fixtures/learn/$LAB.predictions" "$V/$v/predictions.txt"
done
(cd "$V" && ls -d *) | xargs -P "$(nproc)" -I{} sh -c \
    'make --no-print-directory -C "$1/$2" KIT_ROOT="$3" >"$1/$2/build.log" 2>&1 || echo "$2: build failed" >>"$4"' \
    _ "$V" {} "$KIT" "$OUT/build.log"
echo "== built the kit and $(cd "$V" && ls -d * | wc -l) variants of lab 07 ($(since))"

# ---------------------------------------------------------------- verdicts

# The variants whose verdict hangs on timing: run R more times each way.
TIMING="solution mut-kinds-no-flag mut-kinds-both-nonblocking mut-kinds-verdict-turned-around
        mut-threads-kernel-on-stream-0 mut-pipeline-memsetasync-without-stream mut-pipeline-nonblocking-streams"

# judge VARIANT TAP: "right" or "WRONG: why" for one checker run.
judge() {
    local v=$1 tap=$2 check
    [ -s "$tap" ] || { echo "WRONG: no verdicts"; return; }
    case $v in
        solution)
            if grep -q '^not ok' "$tap"; then echo "WRONG: fails $(sed -n 's/^not ok [0-9]* //p' "$tap" | paste -sd ';' -)"
            elif grep -q '# skip' "$tap"; then echo "WRONG: skipped $(grep -c '# skip' "$tap")"
            else echo right; fi ;;
        starter)
            grep -q '^not ok' "$tap" && echo right || echo "WRONG: passes every check" ;;
        *)
            check=$(expected_check "$KIT/checker/tests/mutants/$LAB/${v#mut-}.patch")
            tap_failed "$tap" "$check" && echo right || echo "WRONG: \"$check\" did not fail" ;;
    esac
}

# run_all PHASE: every variant once, and the timing ones R more times; one
# line per run in $WORK/verdicts ("PHASE VARIANT RUN VERDICT").
run_all() {
    local phase=$1 v r runs
    for v in $(cd "$V" && ls -d *); do
        runs=1
        [[ " $(echo $TIMING) " == *" $v "* ]] && runs=$((1 + repeat))
        for r in $(seq 1 "$runs"); do
            KEEP_RUNS="$OUT/keep/$phase-$v-$r" check_variant "$LAB/$v"
            cp "$V/$v/checks.tap" "$OUT/tap/$phase-$v-$r.tap" 2>/dev/null
            cp "$V/$v/checks.log" "$OUT/tap/$phase-$v-$r.log" 2>/dev/null
            echo "$phase $v $r $(judge "$v" "$V/$v/checks.tap")" >>"$WORK/verdicts"
        done
    done
}
mkdir -p "$OUT/tap"
: >"$WORK/verdicts"

echo "== alone"
run_all alone
echo "   done ($(since))"

echo "== with $beside copies of make check-solutions beside"
for i in $(seq 1 "$beside"); do
    mkdir -p "$WORK/kit$i"
    tar -C "$KIT" --exclude=./build --exclude=./reports --exclude=./.git -cf - . | tar -C "$WORK/kit$i" -xf -
    (
        j=0
        while [ ! -e "$WORK/stop" ]; do
            j=$((j + 1))
            "$WORK/kit$i/checker/run-checks" --tree solutions --report tap \
                --reports-dir "$WORK/beside/k$i-$j" >"$WORK/beside-k$i-$j.log" 2>&1
        done
    ) &
done
sleep 5
run_all beside
touch "$WORK/stop"
wait
echo "   done ($(since))"
b_runs=0 b_fail=0
for tap in "$WORK"/beside/*/*/*.tap; do
    [ -f "$tap" ] || continue
    b_runs=$((b_runs + 1))
    if grep -q '^not ok' "$tap"; then
        b_fail=$((b_fail + 1))
        { echo "beside: ${tap#"$WORK"/beside/}:"; grep '^not ok' "$tap" | sed 's/^/    /'; } >>"$OUT/beside-fails.txt"
    fi
done

# ---------------------------------------------------------------- replays, timeline

# The runs alone, run 1, as record-replays.sh records them: the checker's
# only traced run ("main", no arguments) is r.*, with the seed it was given.
echo "== packing the replays (the runs alone)"
: >"$OUT/record.log"
for v in $(cd "$V" && ls -d *); do
    k=$(ls -d "$OUT/keep/alone-$v-1/$LAB".* 2>/dev/null | head -n 1)
    r=$WORK/rec/replays/$LAB/$v
    if [ -n "$k" ] && [ -s "$k/main.trace" ] && [ -s "$k/main.rc" ]; then
        mkdir -p "$r"
        for f in trace out err rc; do cp "$k/main.$f" "$r/r.$f" 2>/dev/null || : >"$r/r.$f"; done
        cat "$k/seed" >"$r/seed"
        echo "$LAB/$v: exit $(cat "$r/r.rc")" >>"$OUT/record.log"
    else
        echo "$LAB/$v: NOT RECORDED (no kept run)" >>"$OUT/record.log"
    fi
done
tar -C "$WORK/rec" -czf "$OUT/replays.tgz" replays
REC=$WORK/rec/replays/$LAB/solution/r.trace
if [ -f "$REC" ]; then
    "$ST" svg "$REC" -o "$OUT/$LAB.svg" --window 'nvtx:part*'
    COLUMNS=120 "$ST" timeline --color never --window 'nvtx:part*' "$REC" >"$OUT/timeline.txt"
fi
echo "   done ($(since))"

# ---------------------------------------------------------------- figures

# The solution's first run alone, and the given stray memset's, from their traces.
T=$(ls "$OUT"/keep/alone-solution-1/$LAB.*/main.trace 2>/dev/null | head -n 1)
M=$(ls "$OUT"/keep/alone-mut-pipeline-memset-on-stream-0-1/$LAB.*/main.trace 2>/dev/null | head -n 1)
q() { "$ST" query "$@" 2>/dev/null; }
# ivals FILE WINDOW: the two kernels of a window as "thread S E" lines
kernels_of() { q "$1" list kernel --window "nvtx:$2" | awk -F'\t' '{ print $10, $1, $2 }'; }
# (never "printf ..., (a > b ...)": mawk reads that > as output to a file)
pair_overlap() { awk 'NR == 1 { s = $2; e = $3 } NR == 2 { lo = $2 > s ? $2 : s; hi = $3 < e ? $3 : e
                      ov = hi > lo ? hi - lo : 0; printf "%.3f", ov }'; }

{
    echo
    echo "Lab 07 on $GPU, $(since) in all"
    printf '%-42s %-8s %s\n' variant alone "beside ($beside x make check-solutions)"
    for v in $(cd "$V" && ls -d *); do
        a=$(awk -v v="$v" '$1 == "alone" && $2 == v { $1 = $2 = $3 = ""; print substr($0, 4) }' "$WORK/verdicts" | sort | uniq -c | awk '{ $1 = $1 "x"; print }' | paste -sd ',' -)
        b=$(awk -v v="$v" '$1 == "beside" && $2 == v { $1 = $2 = $3 = ""; print substr($0, 4) }' "$WORK/verdicts" | sort | uniq -c | awk '{ $1 = $1 "x"; print }' | paste -sd ',' -)
        printf '%-42s %-8s %s\n' "$v" "$a" "$b"
    done
    echo "checkers beside: $b_fail of $b_runs lab verdicts failed (every one should pass)"
    if [ -n "$T" ]; then
        echo
        echo "Figures from the solution's trace (alone, run 1): $T"
        echo "  part 1: legacy kernel $(q "$T" durations kernel:spin_legacy_kernel) ms;" \
             "non-blocking overlapped it $(q "$T" overlap kernel:spin_legacy_kernel kernel:spin_nonblocking_kernel | cut -d ' ' -f 1) ms;" \
             "short kernels $(q "$T" durations kernel:spin_blocking_kernel) ms"
        echo "  part 1: streams $(q "$T" streams kernel --window nvtx:part1_kinds | paste -sd ',' -)"
        echo "  part 1: printed $(grep -E '^  waited_' "$(dirname "$T")/main.out" | awk '{ print $1 "=" $3 }' | paste -sd ' ' -)"
        echo "  part 2: threads' kernels $(q "$T" durations kernel:worker_kernel | paste -sd ' ' -) ms;" \
             "overlap on stream 0 $(kernels_of "$T" part2_legacy | pair_overlap) ms," \
             "on per-thread streams $(kernels_of "$T" part2_per_thread | pair_overlap) ms"
        echo "  part 2: streams $(q "$T" streams gpu --window nvtx:part2_per_thread | paste -sd ',' -)"
        echo "  part 3: pipeline $(q "$T" span gpu --window nvtx:part3_pipeline) ms;" \
             "copy/kernel overlap $(q "$T" overlap copy kernel --window nvtx:part3_pipeline)" \
             "(ms, of copies, of kernels)"
    fi
    [ -n "$M" ] && echo "  part 3 with the given cudaMemset on stream 0: $(q "$M" span gpu --window nvtx:part3_pipeline) ms;" \
        "copy/kernel overlap $(q "$M" overlap copy kernel --window nvtx:part3_pipeline)"
    [ -f "$OUT/replays.tgz" ] && echo "replays: $OUT/replays.tgz ($(grep -c ': exit' "$OUT/record.log") variants recorded)"
    [ -f "$OUT/$LAB.svg" ] && echo "timeline: $OUT/$LAB.svg (slides/timelines/$LAB.svg), text: $OUT/timeline.txt"
    if grep -q WRONG "$WORK/verdicts"; then
        echo; echo "Wrong verdicts (checker output in $OUT/tap/PHASE-VARIANT-RUN.log):"
        grep WRONG "$WORK/verdicts" | sed 's/^/  /'
    fi
    [ -s "$OUT/beside-fails.txt" ] && { echo; cat "$OUT/beside-fails.txt"; }
    echo
    echo "What a student reads (alone, run 1; whole logs in $OUT/tap/):"
    echo "--- the solution's Your run:"
    sed -n '/^  Your run/,/^$/p' "$OUT/tap/alone-solution-1.log" 2>/dev/null
    echo "--- the given cudaMemset on stream 0 (mutant pipeline-memset-on-stream-0), its first failed check:"
    awk '/^  FAIL/ { n++ } n == 1 && /^  (FAIL|      )/ { print } n == 1 && /^  (ok|[0-9])/ { exit }' \
        "$OUT/tap/alone-mut-pipeline-memset-on-stream-0-1.log" 2>/dev/null
} | tee "$OUT/summary.txt"
cp "$WORK/verdicts" "$OUT/verdicts.txt"
# the runs kept for the figures: only those, and the wrong ones
find "$OUT/keep" -mindepth 1 -maxdepth 1 ! -name 'alone-solution-1' ! -name 'alone-mut-pipeline-memset-on-stream-0-1' \
    $(grep WRONG "$WORK/verdicts" | awk '{ printf "! -name %s-%s-%s ", $1, $2, $3 }') -exec rm -rf {} + 2>/dev/null
! grep -q WRONG "$WORK/verdicts" && [ "$b_fail" = 0 ]
