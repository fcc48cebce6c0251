#!/usr/bin/env bash
# shared-gpu.sh -- do the checkers give the same verdicts on a GPU that other
# programs use at the same time? For any GPU node; `make test-shared` runs it.
#
#   checker/tests/shared-gpu.sh [--k N] [--rounds R] [--load-runs L]
#                               [--beside B] [--alone A] [--phases LIST]
#
# Phases (LIST: any of at,load,variants,alone; default all four):
#   at        N copies of `make check-solutions` at once, in N copies of the
#             kit, R rounds (default 8 x 3): every lab verdict must be a pass.
#   load      `make check-solutions` L times (default 3) while the kit's own
#             load program (checker/tests/load/gpu_load) keeps copies and kernels
#             going on the same GPU.
#   variants  every solution, starter and mutant checked (as labs.bats does)
#             while B copies of `make check-solutions` (default 3) run beside
#             them: solutions pass, starters fail, each mutant fails the check
#             it names; the checkers beside must all pass.
#   alone     `make check-solutions` A times in a row (default 0), timed.
# Prints one table: kit runs, lab verdicts, false FAILs, false PASSes, wall
# time. A false FAIL is a correct program failing a check; a false PASS a
# starter or mutant passing what it must fail. Logs, the runs that went
# wrong and every event time compared: under $OUT (default /tmp/shared-gpu).
# Exit status: 0 no wrong verdict, 1 some, 2 bad option, 77 no CUDA device.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
KIT=$PWD
OUT=${OUT:-/tmp/shared-gpu}
k=8 rounds=3 load_runs=3 beside=3 alone=0 phases=at,load,variants
usage() {
    sed -n '4,5s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
        --k) k=${2:-}; shift ;;
        --rounds) rounds=${2:-}; shift ;;
        --load-runs) load_runs=${2:-}; shift ;;
        --beside) beside=${2:-}; shift ;;
        --alone) alone=${2:-}; shift ;;
        --phases) phases=${2:-}; shift ;;
        *) echo "shared-gpu.sh: unknown option $1" >&2; usage ;;
    esac
    shift
done
for n in "$k" "$rounds" "$load_runs" "$beside" "$alone"; do
    [[ $n =~ ^[0-9]+$ ]] || { echo "shared-gpu.sh: not a number: $n" >&2; usage; }
done
[ "$alone" -gt 0 ] && [[ $phases != *alone* ]] && phases+=,alone
export NO_COLOR=1
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/shared-gpu.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT

# ---------------------------------------------------------------- setup

echo "== building the kit and the load program"
if ! make --no-print-directory -s -j"$(nproc)" all >"$OUT/build.log" 2>&1 ||
   ! make --no-print-directory -s -C checker/tests/load >>"$OUT/build.log" 2>&1; then
    tail -n 20 "$OUT/build.log"
    exit 1
fi
why=$(timeout 60 checker/tests/load/gpu_load --seconds 1 --mib 1 2>&1 >/dev/null)
case $? in
    0) ;;
    77) echo "shared-gpu.sh: not run: ${why:-no CUDA device}"; exit 77 ;;
    *) echo "shared-gpu.sh: the load program failed: $why"; exit 1 ;;
esac
echo "== $(nvidia-smi -L 2>/dev/null | head -n 1)"

# kit_copy I: a copy of the built kit for checker I (nothing is rebuilt).
kit_copy() {
    local d="$WORK/kit$1"
    [ -d "$d" ] && return 0
    mkdir -p "$d"
    tar -C "$KIT" --exclude=./build --exclude=./reports --exclude=./.git -cf - . |
        tar -C "$d" -xf -
}
n_kits=$k
[ "$beside" -gt "$n_kits" ] && n_kits=$beside
for i in $(seq 1 "$n_kits"); do kit_copy "$i"; done

# ---------------------------------------------------------------- verdicts

# The self-test's own helpers (build_variants, check_variant, expected_check,
# tap_failed), as labs.bats uses them; tests/lib.bash loads bats' helper libraries,
# which a plain script does not need.
load() { :; }
BATS_TEST_DIRNAME=$KIT/checker/tests KIT_BUILD=$WORK/selftest
# shellcheck source=lib.bash
. "$KIT/checker/tests/lib.bash"

rows=() bad_total=0
# check_solutions I TAG: make check-solutions in kit I; TAP per lab in
# $WORK/tap/TAG/LAB.tap, the runs in $WORK/keep/TAG.
check_solutions() {
    local d="$WORK/kit$1"
    mkdir -p "$WORK/tap/$2"
    KEEP_RUNS="$WORK/keep/$2" "$d/checker/run-checks" --tree solutions --report tap \
        --reports-dir "$WORK/tap/$2" >"$WORK/tap/$2/log" 2>&1
}

# judge_solutions TAG...: "RUNS VERDICTS FALSE_FAILS" over those runs; each
# lab that failed a check is listed in $OUT/wrong.txt and its runs kept.
judge_solutions() {
    local tag tap lab n=0 v=0 f=0
    for tag in "$@"; do
        n=$((n + 1))
        for tap in "$WORK/tap/$tag"/*/*.tap; do
            [ -f "$tap" ] || continue
            lab=$(basename "$tap" .tap)
            v=$((v + 1))
            if grep -q '^not ok' "$tap"; then
                f=$((f + 1))
                { echo "false FAIL: $tag $lab:"; grep '^not ok' "$tap" | sed 's/^/    /'; } >>"$OUT/wrong.txt"
                cp -r "$WORK/keep/$tag"/"$lab".* "$OUT/wrong-runs/$tag/" 2>/dev/null
            fi
        done
        # a kit run whose TAP is missing is a failure too
        [ -n "$(ls "$WORK/tap/$tag"/*/*.tap 2>/dev/null)" ] ||
            { f=$((f + 1)); echo "no verdicts: $tag ($(tail -n 2 "$WORK/tap/$tag/log"))" >>"$OUT/wrong.txt"; }
    done
    echo "$n $v $f"
}
mkdir -p "$OUT/wrong-runs"
: >"$OUT/wrong.txt"

# row NAME RUNS VERDICTS FALSE_FAILS FALSE_PASSES SECONDS: one line of the table
row() {
    rows+=("$(printf '%-40s %8s %12s %10s %10s %8s' "$@")")
    [ "$4" != - ] && bad_total=$((bad_total + $4))
    [ "$5" != - ] && bad_total=$((bad_total + $5))
    printf '   %s\n' "${rows[-1]}"
}

now() { date +%s; }

# ---------------------------------------------------------------- phases

if [[ $phases == *at* ]]; then
    echo "== $k checkers at once, $rounds rounds"
    tags=() t0=$(now)
    for r in $(seq 1 "$rounds"); do
        for i in $(seq 1 "$k"); do
            mkdir -p "$OUT/wrong-runs/at-r$r-k$i"
            check_solutions "$i" "at-r$r-k$i" &
            tags+=("at-r$r-k$i")
        done
        wait
        echo "   round $r done at $(( $(now) - t0 )) s"
    done
    read -r n v f <<<"$(judge_solutions "${tags[@]}")"
    row "$k checkers at once x $rounds rounds" "$n" "$v" "$f" - "$(( $(now) - t0 ))"
fi

if [[ $phases == *load* ]]; then
    echo "== check-solutions beside the load program, $load_runs runs"
    tags=() t0=$(now)
    checker/tests/load/gpu_load >"$OUT/load.log" 2>&1 &
    load_pid=$!
    sleep 1
    for r in $(seq 1 "$load_runs"); do
        mkdir -p "$OUT/wrong-runs/load-$r"
        check_solutions 1 "load-$r"
        tags+=("load-$r")
    done
    kill -TERM "$load_pid" 2>/dev/null
    wait "$load_pid" 2>/dev/null
    read -r n v f <<<"$(judge_solutions "${tags[@]}")"
    row "with the load program x $load_runs" "$n" "$v" "$f" - "$(( $(now) - t0 ))"
    sed 's/^/   /' "$OUT/load.log"
fi

if [[ $phases == *variants* ]]; then
    echo "== every solution, starter and mutant, with $beside checkers beside"
    t0=$(now)
    build_variants >"$OUT/variants-build.log" 2>&1
    stop="$WORK/stop-beside"
    for i in $(seq 1 "$beside"); do
        (
            j=0
            while [ ! -e "$stop" ]; do
                j=$((j + 1))
                mkdir -p "$OUT/wrong-runs/beside-k$i-$j"
                check_solutions "$i" "beside-k$i-$j"
                echo "beside-k$i-$j" >>"$WORK/beside.tags"
            done
        ) &
    done
    sleep 2
    fp=0 ff=0 nv=0 gpus=$(kit_gpus)
    for v in $(variant_dirs); do
        id=${v%%/*} kind=${v#*/} d="$KIT_BUILD/variants/$v"
        # a mutant only more GPUs can tell apart ("# needs: 2 GPUs"): not here
        [[ $kind == mut-* ]] &&
            [ "$(mutant_gpus "$KIT/checker/tests/mutants/$id/${kind#mut-}.patch")" -gt "$gpus" ] && continue
        nv=$((nv + 1))
        KEEP_RUNS="$WORK/keep/variant-${v//\//-}" check_variant "$v"
        case $kind in
            solution)       # (a check that needs more GPUs than here skips: not graded)
                if grep -q '^not ok' "$d/checks.tap" || [ ! -s "$d/checks.tap" ]; then
                    ff=$((ff + 1)); echo "false FAIL: $v" >>"$OUT/wrong.txt"
                    grep '^not ok' "$d/checks.tap" | sed 's/^/    /' >>"$OUT/wrong.txt"
                fi ;;
            starter)
                grep -q '^not ok' "$d/checks.tap" ||
                    { fp=$((fp + 1)); echo "false PASS: $v passes every check" >>"$OUT/wrong.txt"; } ;;
            mut-*)
                check=$(expected_check "$KIT/checker/tests/mutants/$id/${kind#mut-}.patch")
                if ! tap_failed "$d/checks.tap" "$check"; then
                    fp=$((fp + 1))
                    echo "false PASS: $v does not fail \"$check\"" >>"$OUT/wrong.txt"
                    mkdir -p "$OUT/wrong-runs/$v" && cp -r "$WORK/keep/variant-${v//\//-}"/* "$OUT/wrong-runs/$v/" 2>/dev/null
                fi ;;
        esac
    done
    touch "$stop"
    wait
    row "solutions, starters, mutants ($beside beside)" - "$nv" "$ff" "$fp" "$(( $(now) - t0 ))"
    mapfile -t btags <"$WORK/beside.tags"
    read -r n v f <<<"$(judge_solutions "${btags[@]}")"
    row "  ... the $beside checkers beside them" "$n" "$v" "$f" - "$(( $(now) - t0 ))"
fi

if [[ $phases == *alone* ]] && [ "$alone" -gt 0 ]; then
    echo "== check-solutions alone, $alone runs"
    tags=() t0=$(now) times=()
    for r in $(seq 1 "$alone"); do
        mkdir -p "$OUT/wrong-runs/alone-$r"
        s=$(date +%s%N)
        check_solutions 1 "alone-$r"
        times+=("$(( ($(date +%s%N) - s) / 1000000 ))")
        tags+=("alone-$r")
    done
    read -r n v f <<<"$(judge_solutions "${tags[@]}")"
    row "alone x $alone" "$n" "$v" "$f" - "$(( $(now) - t0 ))"
    med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    alone_line="check-solutions alone: median $((med / 1000)).$(printf '%03d' $((med % 1000))) s (each run, ms: ${times[*]})"
    echo "   $alone_line"
fi

# ---------------------------------------------------------------- report

# every event time a check compared: how far printed and traced were apart
cat "$WORK"/keep/*/event-times.txt 2>/dev/null >"$OUT/event-times.txt"
agree=$(awk '{ p = $(NF - 1); t = $NF; d = p - t; if (d < 0) d = -d
               if (d > md) { md = d; w = $0 } r = t > 0 ? d / t : 0; if (r > mr) mr = r; n++ }
             END { if (n) printf "%d event times compared: largest gap %.4f ms (%s), largest relative %.3f%%", n, md, w, 100 * mr }' \
        "$OUT/event-times.txt")
find "$OUT/wrong-runs" -type d -empty -delete 2>/dev/null
[ -d "$OUT/wrong-runs" ] && tar -C "$OUT" -czf "$OUT/wrong-runs.tgz" wrong-runs && rm -rf "$OUT/wrong-runs"

{
    echo
    echo "Shared GPU: $(nvidia-smi -L 2>/dev/null | head -n 1 | sed 's/ (UUID.*//')"
    printf '%-40s %8s %12s %10s %10s %8s\n' phase "kit runs" "lab verdicts" "false FAIL" "false PASS" "wall s"
    printf '%s\n' "${rows[@]}"
    [ -n "${alone_line:-}" ] && echo "$alone_line"
    [ -n "$agree" ] && echo "$agree"
    if [ -s "$OUT/wrong.txt" ]; then echo; echo "Wrong verdicts:"; sed 's/^/  /' "$OUT/wrong.txt"; fi
} | tee "$OUT/summary.txt"
[ "$bad_total" = 0 ]
