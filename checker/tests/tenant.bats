#!/usr/bin/env bats
# tenant.bats -- the checkers' verdicts when another program holds the GPU for
# a while, modelled on the recorded runs (tenant.py), with no GPU: the three
# ways the checks of labs 01-03 used to fail a correct program on a shared
# GPU (measured on an H100 with 8 checkers at once), each replayed. The
# solution must still pass every check, and each mutant still fail the check
# it names. The proof on a real shared GPU is `make test-shared`.

bats_require_minimum_version 1.5.0
load lib

# tenant LAB/VARIANT [CHECK] -- ARGS...: the recording of VARIANT with
# tenant.py ARGS applied, replayed to its lab's checker (replay_check, only
# CHECK when given); its TAP at $(tap_of LAB/VARIANT). Returns 3 when the
# anchor is not in that recording.
tenant() {
    local v=$1 check=$2 d
    shift 3
    d="$BATS_TEST_TMPDIR/tenant/$v"
    python3 "$KIT_ROOT/checker/tests/tenant.py" \
        "$KIT_ROOT/checker/tests/fixtures/replays/$v" "$d" "$@" >/dev/null 2>&1 || return 3
    REPLAY_DIR=$d replay_check "$v" "$check"
}

# under_tenant LAB "MUTANT..." ARGS...: the solution passes every check, and
# each of those mutants (the lab's timing mistakes) fails the check it names.
under_tenant() {
    local id=$1 muts=$2 v check
    shift 2
    tenant "$id/solution" "" -- "$@" || { echo "$id: no anchor in the solution's recording"; return 1; }
    if grep -qE '^not ok|# skip' "$(tap_of "$id/solution")"; then
        cat "$BATS_TEST_TMPDIR/$id/solution.log"
        echo "$id: the solution fails under the modelled tenant"
        return 1
    fi
    for v in $muts; do
        check=$(expected_check "$KIT_ROOT/checker/tests/mutants/$id/${v#mut-}.patch")
        tenant "$id/$v" "$check" -- "$@" || { echo "$id/$v: no anchor in its recording"; return 1; }
        tap_failed "$(tap_of "$id/$v")" "$check" ||
            { echo "$id/$v passes \"$check\" under the modelled tenant"; return 1; }
    done
    echo "$id: the solution passes; $muts fail their checks"
}

setup() {
    skip_full "a solution and two mutants replayed under a modelled tenant"
    command -v python3 >/dev/null || skip "python3 is not installed"
}

@test "lab 01: a tenant between the timed kernel's start event and the kernel fails no correct program" {
    # the events also measure the wait: kernel_ms 4.7 against a 2.1 ms kernel
    under_tenant 01-sync-copy "mut-kernel-time-no-sync mut-sync-inside-launch-time" --match '^event' --nth 3 --delay 2.6 --figure kernel_ms=+2.6
}

@test "lab 02: a tenant that holds the GPU for 73 ms before the measured kernel fails no correct program" {
    # the GPU work stretches from 36 to 109 ms while the CPU works for 18
    under_tenant 02-async-copy "mut-sync-after-issue mut-plain-memcpy" --match '^copy.*H2D' --nth 3 --edge end --delay 73 \
        --figure wait_ms=+73 --figure wall_ms=+73 --figure gpu_ms=+73 --figure serial_ms=+73
}

@test "lab 03: a tenant between two timed copies fails no correct program" {
    # pinned H2D at 16 MiB: 4 copies (1.259 ms at 53.32 GB/s) and a 1 ms gap between the events: 29.71 GB/s
    under_tenant 03-pinned-memory "mut-timed-without-waiting mut-return-after-sync" --match 'H2D	16777216	PINNED' --nth 3 --edge end --delay 1.0 \
        --sed 's/53\.32  54\.76/29.71  54.76/'
}
