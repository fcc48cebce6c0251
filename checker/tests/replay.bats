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

# replay_check LAB VARIANT: run LAB's checker on the recording; TAP to $BATS_TEST_TMPDIR/v.tap
# (REPLAY_DIR: replay that folder instead of the committed recording)
replay_check() {
    local id=$1 variant=$2 d prog
    d="$BATS_TEST_TMPDIR/$variant"
    prog=$(prog_of "$id")
    mkdir -p "$d"
    printf '%s:\n\t@true\n' "$prog" >"$d/Makefile"
    ln -s "$KIT_ROOT/checker/tests/progs/replay-prog" "$d/$prog"
    REPLAY="${REPLAY_DIR:-$KIT_ROOT/checker/tests/replays/$id/$variant}" without_bats_env \
        "$KIT_ROOT/checker/run-checks" --dir "$d" --tap-out "$d.tap" "$id" >"$d.log" 2>&1 || true
    cat "$d.log"
}

recorded() { ls -d "$KIT_ROOT"/checker/tests/replays/*/$1 2>/dev/null; }

@test "recorded runs of the solutions pass every check" {
    local r id n=0
    for r in $(recorded solution); do
        id=$(basename "$(dirname "$r")")
        replay_check "$id" solution
        n=$((n + 1))
        # (`! cmd` would not fail a bats test: bash's errexit ignores it)
        if grep -qE '^not ok|# skip' "$BATS_TEST_TMPDIR/solution.tap"; then
            echo "$id: the recorded solution run does not pass every check"
            return 1
        fi
    done
    [ "$n" -gt 0 ]
}

@test "recorded runs of the starters fail" {
    local r id
    for r in $(recorded starter); do
        id=$(basename "$(dirname "$r")")
        replay_check "$id" starter
        grep -q '^not ok' "$BATS_TEST_TMPDIR/starter.tap"
    done
}

# fails_named LAB VARIANT: the replayed mutant failed the check its patch names
# (REPLAY_DIR as for replay_check).
fails_named() {
    local check
    check=$(expected_check "$KIT_ROOT/checker/mutants/$1/${2#mut-}.patch")
    replay_check "$1" "$2" >/dev/null
    echo "$1/$2 must fail: $check"
    tap_failed "$BATS_TEST_TMPDIR/$2.tap" "$check"
}

@test "recorded runs of the mutants fail the check each one names" {
    local r n=0
    for r in $(recorded 'mut-*'); do
        fails_named "$(basename "$(dirname "$r")")" "$(basename "$r")"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ]
}

# one_engine LAB VARIANT: a copy of the recording whose traces say the GPU
# has one copy engine (as many laptop and older GPUs do); prints its folder.
one_engine() {
    local d="$BATS_TEST_TMPDIR/one-engine/$1/$2"
    mkdir -p "$d"
    cp "$KIT_ROOT/checker/tests/replays/$1/$2"/* "$d/"
    sed -i 's/^meta\tcopy_engines\t.*/meta\tcopy_engines\t1/' "$d"/*.trace
    echo "$d"
}

@test "lab 05 on a GPU with one copy engine: the solution passes, the H2D/D2H check skips and says why" {
    REPLAY_DIR=$(one_engine 05-overlap solution) replay_check 05-overlap solution
    grep -q '^meta.copy_engines.1$' "$BATS_TEST_TMPDIR/one-engine/05-overlap/solution/r.trace"
    run grep -E '^(not ok|ok .*# skip)' "$BATS_TEST_TMPDIR/solution.tap"
    echo "$output"
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == *"H2D and D2H copies overlapped"*"# skip this GPU has 1 copy engine(s)"* ]]
}

@test "lab 05 on a GPU with one copy engine: every mutant still fails the check it names" {
    local r
    for r in $(ls -d "$KIT_ROOT"/checker/tests/replays/05-overlap/mut-*); do
        REPLAY_DIR=$(one_engine 05-overlap "$(basename "$r")") fails_named 05-overlap "$(basename "$r")"
    done
}
