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

# The labs' promise: a student changes only what a TODO asks for, so a
# solution differs from its starter only inside a TODO's region, a marker
# comment `TODO(N)` (or `TODO(N), its second part`...) and the lines after it
# up to the next blank line or marker (checker/tests/todo-regions says the
# rule in full).
@test "each solution differs from its starter only inside a TODO's region" {
    run -0 "$KIT_ROOT/checker/tests/todo-regions" "$KIT_ROOT/labs" "$KIT_ROOT/solutions"
    assert_output ""
}

@test "the TODO-region guard refuses a change outside every region, and takes the changes inside" {
    local d=$BATS_TEST_TMPDIR
    mkdir -p "$d/labs/x" "$d/solutions/x"
    printf '%s\n' 'int f(int a)' '{' '    int b = 0;' '' '    /* TODO(1) */' '    lab_todo(1, "b");' \
        '    return b;' '' '    /* TODO(1), its second part */' '    use(b);' '}' >"$d/labs/x/x.cu"
    # answers in both regions, a line added after one's last line, a
    # region's closing blank line taken out: all inside
    printf '%s\n' 'int f(int a)' '{' '    int b = 0;' '' '    /* TODO(1) */' '    b = a + 1;' \
        '    return b;' '    /* TODO(1), its second part */' '    use(b);' '    use(a);' '}' >"$d/solutions/x/x.cu"
    run -0 "$KIT_ROOT/checker/tests/todo-regions" "$d/labs" "$d/solutions"
    assert_output ""
    # the signature and a line before the first marker: outside
    sed -i 's/^int f(int a)$/int f(int a, int c)/; s/^    int b = 0;$/    int b = c;/' "$d/solutions/x/x.cu"
    run -1 "$KIT_ROOT/checker/tests/todo-regions" "$d/labs" "$d/solutions"
    assert_output "$(printf '%s\n' 'x/x.cu:1: changed outside any TODO'"'"'s region: "int f(int a)"' \
        'x/x.cu:3: changed outside any TODO'"'"'s region: "int b = 0;"')"
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

# PyTorch ships its own judge of stream order: the CUDA Stream Sanitizer
# (TORCH_CUDA_SANITIZER=1, torch.cuda._sanitizer) records each kernel's reads
# and writes of tensors and the streams' waits, and reports a possible data
# race between streams. Lab 08's checker asks the kit's happens-before model
# (streamtrace ask) whether each batch's kernels are ordered after its copy;
# the two must agree on every lab 08 variant: the solution has no race, a
# variant that fails that check has one, and any race the sanitizer reports
# is in a variant the kit fails. A disagreement is a bug in one of them.
@test "on a GPU, PyTorch's CUDA stream sanitizer and lab 08's order check agree on every variant" {
    gpu_or_skip
    selftest_labs | grep -qx 08-pytorch || skip "KIT_LABS leaves out lab 08"
    python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null ||
        skip "no python3 with a CUDA torch here"
    local v d order="each batch's kernels are ordered after its copy" bad="" csan kit
    for v in $(variant_dirs | grep '^08-pytorch/' | grep -v starter); do
        d=$KIT_BUILD/variants/$v
        [ -s "$d/checks.tap" ] || check_variant "$v"
    done
    # the sanitizer's runs, four at once (each a few seconds)
    variant_dirs | grep '^08-pytorch/' | grep -v starter |
        xargs -P 4 -I{} sh -c 'cd "$1/{}" && TORCH_CUDA_SANITIZER=1 timeout 300 python3 streams.py >csan.log 2>&1; echo $? >csan.rc' _ "$KIT_BUILD/variants"
    for v in $(variant_dirs | grep '^08-pytorch/' | grep -v starter); do
        d=$KIT_BUILD/variants/$v
        csan=clean kit=ordered
        grep -q 'CSAN detected a possible data race' "$d/csan.log" && csan=race
        tap_failed "$d/checks.tap" "$order" && kit=unordered
        echo "$v: sanitizer $csan (exit $(cat "$d/csan.rc")), kit $kit$(grep -q '^not ok' "$d/checks.tap" && echo ", fails: $(sed -n 's/^not ok [0-9]* //p' "$d/checks.tap" | paste -sd ';' -)")" |
            tee -a "$KIT_ROOT/build/selftest-gpu.txt"
        if [ $csan = race ] && ! grep -q '^not ok' "$d/checks.tap"; then
            bad+=$'\n'"$v: the sanitizer reports a race the kit passes: $(grep -m 1 -A 3 'CSAN detected' "$d/csan.log")"
        elif [ $kit = unordered ] && [ $csan = clean ]; then
            bad+=$'\n'"$v: the kit finds a batch unordered, the sanitizer no race (exit $(cat "$d/csan.rc")): $(tail -n 3 "$d/csan.log")"
        elif [ "$v" = 08-pytorch/solution ] && { [ $csan = race ] || [ "$(cat "$d/csan.rc")" != 0 ]; }; then
            bad+=$'\n'"$v: the solution under the sanitizer: exit $(cat "$d/csan.rc"): $(tail -n 5 "$d/csan.log")"
        fi
    done
    echo "$bad"
    [ -z "$bad" ]
}
