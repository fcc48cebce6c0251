#!/usr/bin/env bats
# 06-lifetime.bats -- the checks of lab 06 (lifetime pitfalls).
# Run from the lab folder with `make check`, or `make check LAB=06` at the top.
#
# The program runs once plainly under the trace tool (what the GPU did: the
# overlap and synchronization checks), and once per scenario under the stress
# tool, checker/stress (the GPU made as late as it may be, dead memory
# poisoned: a lifetime bug then always gives wrong data). Scenario 4 also runs
# under compute-sanitizer's memcheck, which tracks stream-ordered frees, where
# the machine has it.

bats_require_minimum_version 1.5.0
LAB_ID=06-lifetime
PROG=lifetime
load lib/checks

# (the kit's tests replay a made run with stand-ins: STRESS, and SANITIZER=
# for none)
STRESS="${STRESS:-$KIT_ROOT/checker/stress/stress}"
if [ -z "${SANITIZER+set}" ]; then
    SANITIZER=$(command -v compute-sanitizer ||
        ls "${CUDA_HOME:-/usr/local/cuda}"/bin/compute-sanitizer || true) 2>/dev/null
fi
# small sizes under the sanitizer: it is slow, and the hazard does not need more
SANITIZER_ARGS=(--scenario 4 --n 65536 --chunks 4 --steps 64)

# run_stress NAME ARGS...: one run of the program under the stress tool, given
# ARGS and the checker's --seed, kept like run_lab's ($RUNS/NAME.{out,err,rc,how}).
run_stress() {
    local name=$1 rc=0
    shift
    built_ok || return 0
    { echo 0; echo --; printf '%s\n' "$@"; } >"$RUNS/$name.how"
    timeout -k 5 "$RUN_TIMEOUT" "$STRESS" -- "$LAB_DIR/$PROG" "$@" --seed "$(lab_seed)" \
        >"$RUNS/$name.out" 2>"$RUNS/$name.err" || rc=$?
    echo "$rc" >"$RUNS/$name.rc"
}

setup_file() {
    local sc rc
    build_lab
    make --no-print-directory -C "$KIT_ROOT/checker/stress" >"$RUNS/stress-build.log" 2>&1 || true
    run_lab main --trace
    if [ "$(rc_of main)" != 77 ]; then
        for sc in 1 2 3 4; do
            run_stress "s$sc" --scenario "$sc"
        done
        if [ -n "$SANITIZER" ] && built_ok; then
            rc=0
            timeout -k 5 "$RUN_TIMEOUT" "$SANITIZER" --tool memcheck \
                --track-stream-ordered-races all "$LAB_DIR/$PROG" "${SANITIZER_ARGS[@]}" \
                --seed "$(lab_seed)" \
                >"$RUNS/sanitizer.out" 2>"$RUNS/sanitizer.err" || rc=$?
            echo "$rc" >"$RUNS/sanitizer.rc"
        fi
    fi
    run_lab badopt -- --frobnicate
    run_lab nodev --env CUDA_VISIBLE_DEVICES= --
}

# The verdict line of scenario N in run NAME (empty if none).
scenario_line() { grep -m 1 "^scenario $2 " "$RUNS/$1.out"; }

# need_stress NAME: the run happened under the stress tool, which took hold.
need_stress() {
    need_run "$1" || return 1
    if ! grep -q '^stress: summary: gated=[1-9]' "$RUNS/$1.err"; then
        echo "not checked: the stress tool did not take hold of the program"
        grep -m 2 '^stress' "$RUNS/$1.err" | sed 's/^/          /'
        grep -q . "$RUNS/stress-build.log" &&
            sed -n '1,3s/^/          /p' "$RUNS/stress-build.log"
        return 1
    fi
}

# check_scenario N HINT: scenario N verified under stress, and in the plain
# run, each with the digest of the right result (check_digests).
check_scenario() {
    local sc=$1 hint=$2 line
    need_run main || return 1       # skips when there is no device
    need_stress "s$sc" || return 1
    line=$(scenario_line "s$sc" "$sc")
    if [[ $line != *": verified"* ]]; then
        grep -m 2 -E '^stress: (race|free|cudaFreeHost|cudaHostUnregister)' "$RUNS/s$sc.err" |
            sed 's/^/note: /'
        say_fail "scenario $sc verified with the GPU as late as it is allowed to be" \
            "${line:-no \"scenario $sc\" line (exit status $(rc_of "s$sc"))}" "$hint"
        return 1
    fi
    check_digests "s$sc" "under the stress tool: " "scenario$sc" || return 1
    line=$(scenario_line main "$sc")
    [[ $line == *": verified"* ]] || { say_fail "scenario $sc verified in a plain run too" \
        "${line:-no \"scenario $sc\" line}" "$hint"; return 1; }
    check_digests main "" "scenario$sc"
}

# window N: "START END" (ms) of the NVTX range "scenario N" in the main trace.
window() { tq main list "nvtx:scenario $1" | awk -F'\t' 'NR == 1 { print $1, $2 }'; }

# in_window N SEL: SEL's records (START END per line) that start inside scenario N.
in_window() {
    local w
    w=$(window "$1")
    [ -n "$w" ] || return 0
    tq main list "$2" | awk -F'\t' -v lo="${w% *}" -v hi="${w#* }" \
        '$1 + 0 >= lo + 0 && $1 + 0 <= hi + 0 { print $1, $2 }'
}

# overlap_in N SEL1 SEL2: the fraction of SEL1's time in scenario N that SEL2
# runs alongside (each set on one stream: the records of a set do not overlap).
overlap_in() {
    { in_window "$1" "$2" | sed 's/^/a /'; in_window "$1" "$3" | sed 's/^/b /'; } | awk '
        $1 == "a" { na++; a0[na] = $2 + 0; a1[na] = $3 + 0; tot += $3 - $2 }
        $1 == "b" { nb++; b0[nb] = $2 + 0; b1[nb] = $3 + 0 }
        END {
            for (i = 1; i <= na; i++)
                for (j = 1; j <= nb; j++) {
                    lo = a0[i] > b0[j] ? a0[i] : b0[j]
                    hi = a1[i] < b1[j] ? a1[i] : b1[j]
                    if (hi > lo) ov += hi - lo
                }
            f = tot > 0 ? ov / tot : 0
            printf "%.4f\n", (f > 1 ? 1 : f)
        }'
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure": the plain run's verdicts, the
# stress tool's, and scenario 1's overlap in the trace.
your_run() {
    your_run_ok main || return 0
    local sc plain=0 stress=0 held=0 f
    for sc in 1 2 3 4; do
        scenario_line main "$sc" | grep -q ': WRONG' && plain=$((plain + 1))
        grep -q '^stress: summary: gated=[1-9]' "$RUNS/s$sc.err" 2>/dev/null || continue
        held=$((held + 1))
        scenario_line "s$sc" "$sc" | grep -q ': verified' || stress=$((stress + 1))
    done
    grep -q '^scenario ' "$RUNS/main.out" || plain=""
    [ "$held" = 4 ] || stress=""
    your_fig plain_wrong "$plain" "of 4" "scenarios that printed WRONG in the plain run"
    your_fig stress_wrong "$stress" "of 4" "scenarios that were wrong under the stress tool"
    [ -s "$RUNS/main.trace" ] && f=$(overlap_in 1 h2d kernel)
    your_fig s1_overlap_pct "$(awk -v f="$f" 'BEGIN { if (f != "") print 100 * f }')" % \
        "of scenario 1's copy time, the share alongside its kernels"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs every scenario to the end" {
    need_run main
    local sc missing=""
    for sc in 1 2 3 4; do
        scenario_line main "$sc" | grep -qE ': (verified|WRONG)' || missing+=" $sc"
    done
    [ -z "$missing" ] && grep -q '^RESULT: ' "$RUNS/main.out" || say_fail \
        "a verdict line for each of the 4 scenarios, then RESULT:" \
        "no verdict for scenario(s)$missing; $(grep -v '^ ' "$RUNS/main.err" | head -n 1)" \
        "a CUDA error names the file:line and the call; keep the verdict() calls"
}

@test "scenario 1: the staging buffer is not refilled while its copy is in flight" {
    check_scenario 1 "a queued copy reads h_stage[b] when it runs, not when it is queued: before refilling, wait for the event that marks the last copy out of that buffer (TODO 1)"
}

@test "scenario 2: the results are read only after the copy that brings them is done" {
    check_scenario 2 "cudaMemcpyAsync returns before the copy has run: wait for the event of that half (recorded on that half's stream) before reading it (TODO 2)"
}

@test "scenario 3: a copy never reads a helper's stack after the helper has returned" {
    check_scenario 3 "the copy may run after upload_key returns, when its stack is gone: let the caller pass upload_key a pinned buffer of KEY_N words for each chunk (cudaMallocHost, chunks * KEY_N words in all), freed only after the stream is synchronized; not one static buffer either: each chunk's key would overwrite the last before its copy ran (TODO 3)"
}

@test "scenario 4: scratch memory goes back to the pool only after the kernel that reads it is done" {
    check_scenario 4 "cudaFreeAsync frees in the order of the stream you give it: record an event on the compute stream after the kernel, and make the prep stream wait for it before the free (TODO 4)"
}

@test "compute-sanitizer finds no use of freed memory in scenario 4" {
    need_run main
    [ -n "$SANITIZER" ] || skip "compute-sanitizer not found (it comes with the CUDA toolkit)"
    need_run sanitizer || return 1
    local summary
    summary=$(grep -h -m 1 'ERROR SUMMARY' "$RUNS/sanitizer.out" "$RUNS/sanitizer.err" |
        sed 's/^=* *//')
    # no summary at all: the sanitizer itself could not run on this machine
    [ -n "$summary" ] || skip "compute-sanitizer did not run here: $(grep -h -m 1 . \
        "$RUNS/sanitizer.err" "$RUNS/sanitizer.out" | sed 's/^=* *//')"
    if [ "$summary" != "ERROR SUMMARY: 0 errors" ]; then
        grep -m 3 -hE '^========= +(Invalid|Malloc|Use|Address|Stream|.*freed)' \
            "$RUNS/sanitizer.out" "$RUNS/sanitizer.err" | sed 's/^========= */note: /'
        say_fail "ERROR SUMMARY: 0 errors from compute-sanitizer memcheck on scenario 4" \
            "$summary" \
            "a kernel read memory after cudaFreeAsync had given it back: order the free after the kernel with an event (TODO 4)"
    fi
}

@test "scenario 1's copies still overlap its kernels" {
    need_run main
    need_trace main
    local f
    draw_on_fail main --window 'nvtx:scenario 1+gpu'
    f=$(overlap_in 1 h2d kernel)
    is_true 'f >= 0.5' f="${f:-0}" || say_fail \
        "at least half of scenario 1's copy time alongside its kernels" \
        "$(awk -v f="${f:-0}" 'BEGIN { printf "%.0f%%", 100 * f }')" \
        "wait for the copy out of h_stage[b] (its event), not for the kernels: then the next chunk travels while this one computes"
}

@test "scenario 4's next-chunk copies still overlap its kernels" {
    need_run main
    need_trace main
    local f
    draw_on_fail main --window 'nvtx:scenario 4+gpu'
    f=$(overlap_in 4 h2d kernel)
    is_true 'f >= 0.5' f="${f:-0}" || say_fail \
        "at least half of scenario 4's copy time alongside its kernels" \
        "$(awk -v f="${f:-0}" 'BEGIN { printf "%.0f%%", 100 * f }')" \
        "make only the free wait for the kernel (an event), not the host or the whole prep stream's next copy"
}

@test "no scenario waits for the whole device where an event would do" {
    need_run main
    need_trace main
    local sc n bad=""
    for sc in 1 2 3 4; do
        [ -n "$(window "$sc")" ] || { bad+=" scenario $sc (no NVTX range in the trace)"; continue; }
        n=$(( $(in_window "$sc" sync:context | wc -l) +
              $(in_window "$sc" api:cudaDeviceSynchronize | wc -l) ))
        [ "$n" = 0 ] || { bad+=" scenario $sc ($n)"
            # the first scenario that waited is drawn
            [ -n "${DRAW_RUN:-}" ] || draw_on_fail main --window "nvtx:scenario $sc+gpu"; }
    done
    [ -z "$bad" ] || say_fail "no cudaDeviceSynchronize inside any scenario" \
        "device-wide waits in:$bad" \
        "cudaDeviceSynchronize makes the host wait for the work of every stream: wait for the one event that marks what you need"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
