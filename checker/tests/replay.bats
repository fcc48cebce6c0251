#!/usr/bin/env bats
# replay.bats -- the labs' checkers judge recorded runs rightly, with no GPU.
#
# checker/tests/replays/LAB/VARIANT holds one run of a variant recorded on a
# GPU (output, exit status, trace; `RECORD=1 checker/tests/gpu-suite.sh`).
# Here a stand-in program (progs/replay-prog) replays it to the lab's real
# checker. This tests the checkers' logic -- that a correct run passes and
# each mutant's run fails its named check -- on every machine, CI included.
# It proves nothing about a GPU: labs.bats does that, on one.

bats_require_minimum_version 1.5.0
load ../lib/kit


# unexpected TAPFILE LAB: its failed and skipped checks, but for the skips of
# the runs LAB's file `unrecorded` lists (a checker's run newer than the
# recordings: replay-prog answers "no run recorded for: ARGS").
unexpected() {
    local u="$KIT_ROOT/checker/tests/replays/$2/unrecorded" line args
    while IFS= read -r line; do
        if [[ $line == "ok "*"no run recorded for: "* ]]; then
            args=${line##*no run recorded for: }
            args=${args% (record the replays again)}
            grep -v '^#' "$u" 2>/dev/null | grep -qxF -- "$args" && continue
        fi
        echo "$line"
    done < <(grep -E '^(not ok|ok .*# skip)' "$1")
}

# passes_all LAB/VARIANT: its replay ran, and failed and skipped nothing unexpected.
passes_all() { [ -s "$(tap_of "$1")" ] && [ -z "$(unexpected "$(tap_of "$1")" "${1%%/*}")" ]; }

# recorded KIND [LAB]: every LAB/VARIANT recorded whose VARIANT matches KIND.
recorded() { (cd "$KIT_ROOT/checker/tests/replays" && ls -d ${2:-*}/$1 2>/dev/null); }

# A mutant's checker runs only the check its patch names: the verdict this
# file proves, at a twelfth of the cost. (labs.bats, on a GPU, runs them all.)
named_check() { expected_check "$KIT_ROOT/checker/mutants/${1%%/*}/${1#*/mut-}.patch"; }
replay_named() { replay_check "$1" "$(named_check "$1")"; }

# mutants_fail_named LAB/VARIANT...: each replayed mutant failed the check it
# names; else say which did not, and what its checker printed.
mutants_fail_named() {
    local v bad=""
    for v in "$@"; do
        tap_failed "$(tap_of "$v")" "$(named_check "$v")" ||
            bad+=$'\n'"$v must fail \"$(named_check "$v")\":"$'\n'"$(sed 's/^/    /' "$BATS_TEST_TMPDIR/$v.log")"
    done
    echo "${bad:-$# mutants fail the check each one names}"
    [ -z "$bad" ] && [ $# -gt 0 ]
}

@test "recorded runs of the solutions pass every check" {
    local v runs bad=""
    runs=$(recorded solution)
    at_once replay_check $runs
    for v in $runs; do
        # (`! cmd` would not fail a bats test: bash's errexit ignores it)
        if ! passes_all "$v"; then
            bad+=$'\n'"$v: the recorded run does not pass every check:"$'\n'"$(cat "$BATS_TEST_TMPDIR/$v.log")"
        fi
    done
    echo "${bad:-$(echo $runs | wc -w) recorded solutions pass}"
    [ -z "$bad" ] && [ -n "$runs" ]
}

@test "recorded runs of the starters fail" {
    skip_full "$(recorded starter | wc -l) more replays"
    local v runs bad=""
    runs=$(recorded starter)
    at_once replay_check $runs
    for v in $runs; do
        grep -q '^not ok' "$(tap_of "$v")" || bad+=$'\n'"$v: the recorded starter run fails no check"
    done
    echo "${bad:-$(echo $runs | wc -w) recorded starters fail}"
    [ -z "$bad" ] && [ -n "$runs" ]
}

# first_mutants / other_mutants: the first recorded mutant of each lab (by
# name), and all the others.
first_mutants() { recorded 'mut-*' | awk -F/ '!seen[$1]++'; }
other_mutants() { recorded 'mut-*' | awk -F/ 'seen[$1]++'; }

@test "a recorded mutant of each lab fails the check it names" {
    local runs
    runs=$(first_mutants)
    at_once replay_named $runs
    mutants_fail_named $runs
}

@test "every other recorded mutant fails the check it names" {
    skip_full "$(other_mutants | wc -l) more replays"
    local runs
    runs=$(other_mutants)
    at_once replay_named $runs
    mutants_fail_named $runs
}

# one_engine LAB/VARIANT: a copy of the recording whose traces say the GPU
# has one copy engine (as many laptop and older GPUs do), and its replay.
one_engine() {
    local d="$BATS_TEST_TMPDIR/one-engine/$1"
    mkdir -p "$d"
    cp "$KIT_ROOT/checker/tests/replays/$1"/* "$d/"
    sed -i 's/^meta\tcopy_engines\t.*/meta\tcopy_engines\t1/' "$d"/*.trace
    if [ "${1#*/}" = solution ]; then
        REPLAY_DIR=$d replay_check "$1"
    else
        REPLAY_DIR=$d replay_named "$1"
    fi
}

@test "lab 05 on a GPU with one copy engine: the solution passes, the H2D/D2H check skips and says why" {
    skip_full "one more replay"
    one_engine 05-overlap/solution
    grep -q '^meta.copy_engines.1$' "$BATS_TEST_TMPDIR/one-engine/05-overlap/solution/r.trace"
    run unexpected "$(tap_of 05-overlap/solution)" 05-overlap
    echo "$output"
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == *"H2D and D2H copies overlapped"*"# skip this GPU has 1 copy engine(s)"* ]]
}

@test "lab 05 on a GPU with one copy engine: every mutant still fails the check it names" {
    skip_full "$(recorded 'mut-*' 05-overlap | wc -l) more replays"
    local runs
    runs=$(recorded 'mut-*' 05-overlap)
    at_once one_engine $runs
    mutants_fail_named $runs
}

# make test-shared keeps every run (KEEP_RUNS) in a folder made on the way.
# Lab 03's check once wrote into it before it existed: its awk died with the
# verdict unwritten, and the unit mutant passed (seen on an H100).
@test "keeping the runs (KEEP_RUNS, a folder not made yet) changes no verdict" {
    skip_full "one more replay, for make test-shared"
    local v=03-pinned-memory/mut-gbps-in-mib check
    check=$(expected_check "$KIT_ROOT/checker/mutants/03-pinned-memory/gbps-in-mib.patch")
    KEEP_RUNS="$BATS_TEST_TMPDIR/keep/not-made-yet" replay_check "$v" "$check"
    tap_failed "$(tap_of "$v")" "$check" || { cat "$BATS_TEST_TMPDIR/$v.log"; return 1; }
    [ -s "$BATS_TEST_TMPDIR/keep/not-made-yet/event-times.txt" ]
}
