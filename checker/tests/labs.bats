#!/usr/bin/env bats
# labs.bats -- every lab is complete, builds cleanly, and its checker can tell
# right from wrong: on a GPU the solution passes every check, the unmodified
# starter fails, and every mutant (a planted student mistake) fails the check
# its patch names. Results are also written to build/selftest-gpu.txt.
# KIT_LABS="07 09" builds and checks those labs' variants only (lib.bash's
# selftest_labs): on two H100s the nine labs' GPU self-test took 11.4
# minutes.
# With no GPU, variants are built for one architecture (kit_arch), not the
# seven of a laptop build: it still proves each builds without warnings. The
# quick run (make test without a GPU) builds none, and applies every mutant's
# patch; make test-all builds them all.

bats_require_minimum_version 1.5.0
load lib

setup_file() {
    mkdir -p "$KIT_ROOT/build"     # for build/selftest-gpu.txt
    build_progs
    build_variants
}

@test "every lab has a starter, solution, README, checker, deck and three mutants" {
    local id prog missing=""
    for id in $(lab_ids); do
        prog=$(src_of "$id")
        for f in "labs/$id/$prog" "labs/$id/Makefile" "labs/$id/README.md" \
                 "solutions/$id/$prog" "solutions/$id/Makefile" \
                 "checker/$id.bats" "slides/$id.md"; do
            [ -f "$KIT_ROOT/$f" ] || missing+=" $f"
        done
        [ "$(ls "$KIT_ROOT/checker/tests/mutants/$id"/*.patch 2>/dev/null | wc -l)" -ge 3 ] ||
            missing+=" checker/tests/mutants/$id/(3 patches)"
    done
    echo "missing:$missing"
    [ -z "$missing" ]
}

@test "KIT_LABS picks the labs the self-test builds and checks; a name that is no lab's is refused" {
    run -0 env KIT_LABS="07, 09-multi-gpu" bash -c 'unset BATS_TEST_FILENAME; . "$1/checker/tests/lib.bash"; KIT_ROOT=$1; selftest_labs' _ "$KIT_ROOT"
    assert_output "$(printf '07-default-streams\n09-multi-gpu')"
    run -0 env -u KIT_LABS bash -c 'unset BATS_TEST_FILENAME; . "$1/checker/tests/lib.bash"; KIT_ROOT=$1; selftest_labs' _ "$KIT_ROOT"
    assert_output "$(lab_ids)"
    run -1 env KIT_LABS="07 7" bash -c 'unset BATS_TEST_FILENAME; . "$1/checker/tests/lib.bash"; KIT_ROOT=$1; selftest_labs' _ "$KIT_ROOT"
    assert_output --partial 'KIT_LABS: no lab "7" (the labs: 01-sync-copy '
}

@test "every mutant patch applies and names a check of its lab's checker" {
    local p id check bad=""
    for p in "$KIT_ROOT"/checker/tests/mutants/*/*.patch; do
        id=$(basename "$(dirname "$p")")
        check=$(expected_check "$p")
        [ -f "$KIT_BUILD/variants/$id/mut-$(basename "$p" .patch)/patch.failed" ] &&
            bad+=$'\n'"$id/$(basename "$p"): does not apply to the solution"
        grep -qF "@test \"$check\"" "$KIT_ROOT/checker/$id.bats" ||
            bad+=$'\n'"$id/$(basename "$p"): names no check of $id.bats: '$check'"
    done
    echo "${bad:-all apply}"
    [ -z "$bad" ]
}

# builds_clean VARIANT...: each built, without a warning; else say which not
builds_clean() {
    local v bad=""
    for v in "$@"; do
        if [ "$(cat "$KIT_BUILD/variants/$v/build.rc" 2>/dev/null)" != 0 ]; then
            bad+=$'\n'"$v: build failed"$'\n'"$(head -n 5 "$KIT_BUILD/variants/$v/build.log" 2>/dev/null)"
        elif grep -qi warning "$KIT_BUILD/variants/$v/build.log"; then
            bad+=$'\n'"$v: warnings"$'\n'"$(grep -i -m 3 warning "$KIT_BUILD/variants/$v/build.log")"
        fi
    done
    echo "${bad:-$# variants built cleanly$(a=$(kit_arch); echo "${a:+ for sm_$a}")}"
    [ -z "$bad" ] && [ $# -gt 0 ]
}

@test "every solution builds without warnings" {
    skip_full "$(variant_dirs | grep -c /solution) builds"
    builds_clean $(variant_dirs | grep /solution)
}

@test "every starter builds without warnings" {
    skip_full "$(variant_dirs | grep -c /starter) builds; make check builds and checks them too"
    builds_clean $(variant_dirs | grep /starter)
}

@test "every mutant builds without warnings" {
    skip_full "$(variant_dirs | grep -c /mut-) builds; a mutant is built to be run, on a GPU"
    builds_clean $(variant_dirs | grep /mut-)
}

# summary line of one variant's checks: "N passed, N failed, N skipped"
counts_of() { grep -E '^  [0-9]+ passed' "$KIT_BUILD/variants/$1/checks.log" | sed 's/^ *//'; }

@test "on a GPU, every solution passes every check" {
    gpu_or_skip
    local id bad=""
    for id in $(selftest_labs); do
        check_variant "$id/solution"
        echo "$id solution: $(counts_of "$id/solution")" | tee -a "$KIT_ROOT/build/selftest-gpu.txt"
        grep -q '^not ok' "$KIT_BUILD/variants/$id/solution/checks.tap" &&
            bad+=$'\n'"$(grep -A 12 FAIL "$KIT_BUILD/variants/$id/solution/checks.log")"
        # a check that needs more GPUs than this machine has is not graded
        # here ("needs 2 GPUs: ..."): any other skip is wrong on a GPU
        grep '# skip' "$KIT_BUILD/variants/$id/solution/checks.tap" |
            grep -qvE '# skip needs [0-9]+ GPUs: ' &&
            bad+=$'\n'"$id solution: checks were skipped on a GPU"
    done
    echo "$bad"
    [ -z "$bad" ]
}

@test "on a GPU, every unmodified starter fails its checks" {
    gpu_or_skip
    local id
    for id in $(selftest_labs); do
        check_variant "$id/starter"
        echo "$id starter: $(counts_of "$id/starter")" | tee -a "$KIT_ROOT/build/selftest-gpu.txt"
        grep -q '^not ok' "$KIT_BUILD/variants/$id/starter/checks.tap" || {
            echo "$id: the starter passes every check"; return 1; }
    done
}

# A mutant that only more GPUs can tell from the solution ("# needs: 2
# GPUs") is not judged on a machine with fewer: listed, never a failure.
@test "on a GPU, every mutant fails the check it names" {
    gpu_or_skip
    local v id check bad="" p gpus
    gpus=$(kit_gpus)
    for v in $(variant_dirs | grep /mut-); do
        id=${v%%/*} p="$KIT_ROOT/checker/tests/mutants/$id/${v#*/mut-}.patch"
        check=$(expected_check "$p")
        if [ "$(mutant_gpus "$p")" -gt "$gpus" ]; then
            echo "$v: not judged here: needs $(mutant_gpus "$p") GPUs, this machine has $gpus" |
                tee -a "$KIT_ROOT/build/selftest-gpu.txt"
            continue
        fi
        check_variant "$v"
        if tap_failed "$KIT_BUILD/variants/$v/checks.tap" "$check"; then
            echo "$v: fails \"$check\" as it should ($(counts_of "$v"))" | tee -a "$KIT_ROOT/build/selftest-gpu.txt"
        elif grep -qE "^ok [0-9]+ " "$KIT_BUILD/variants/$v/checks.tap"; then
            bad+=$'\n'"$v: survived: \"$check\" did not fail ($(counts_of "$v"))"
        else
            bad+=$'\n'"$v: its checks did not run:"$'\n'"$(head -n 8 "$KIT_BUILD/variants/$v/checks.log")"
        fi
    done
    echo "$bad"
    [ -z "$bad" ]
}
