#!/usr/bin/env bats
# 06-lifetime.bats -- the checks of lab 06 (lifetime pitfalls).
# Run from the lab folder with `make check`, or `make check LAB=06` at the top.
#
# The program runs once plainly under the trace tool (what the GPU did: the
# overlap and synchronization checks), and once under the stress tool,
# checker/stress (the GPU made as late as it may be, dead memory poisoned: a
# lifetime bug then always gives wrong data), all four scenarios in one run.
# A scenario that run did not verify (or a run the tool did not take hold of,
# or one that ended early) runs again alone under the tool, and its check
# judges that run: one scenario's mistake never decides another's verdict.
# Scenario 4 also runs under compute-sanitizer's memcheck, which tracks
# stream-ordered frees, where the machine has it.

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
    local name=$1 t0
    shift
    built_ok || return 0
    { echo 0; echo --; [ $# -eq 0 ] || printf '%s\n' "$@"; } >"$RUNS/$name.how"
    [ -z "${GRADE_STEPS:-}" ] || step_now t0
    launch "$name" -- "$STRESS" -- "$LAB_DIR/$PROG" "$@" --seed "$(lab_seed)"
    [ -z "${GRADE_STEPS:-}" ] || step_done run-stress "$name" "$t0"
}

setup_file() {
    local sc t0
    build_lab
    make --no-print-directory -C "$KIT_ROOT/checker/stress" >"$RUNS/stress-build.log" 2>&1 || true
    run_beside badopt -- --frobnicate
    run_beside nodev --env CUDA_VISIBLE_DEVICES= --
    run_lab main --trace
    runs_done
    local rc
    rc_in rc main
    if [ "$rc" != 77 ]; then
        # one run of the four scenarios under the stress tool, beside the
        # sanitizer's (both are judged by their results, which another
        # program on the GPU cannot change); then each scenario it did not
        # verify, alone (every CUDA program's start costs the node's driver
        # about 0.2 s, one start at a time: checker/grade/README.md, what
        # limits a node)
        beside run_stress stress
        if [ -n "$SANITIZER" ] && built_ok; then
            [ -z "${GRADE_STEPS:-}" ] || step_now t0
            launch sanitizer -- "$SANITIZER" --tool memcheck \
                --track-stream-ordered-races all "$LAB_DIR/$PROG" "${SANITIZER_ARGS[@]}" \
                --seed "$(lab_seed)"
            [ -z "${GRADE_STEPS:-}" ] || step_done run-sanitizer sanitizer "$t0"
        fi
        runs_done
        for sc in 1 2 3 4; do
            stress_verified stress "$sc" || run_stress "s$sc" --scenario "$sc"
        done
    fi
}

# The verdict line of scenario N in run NAME (empty if none).
scenario_line() { grep -m 1 "^scenario $2 " "$RUNS/$1.out"; }

# stress_held RUN: the stress tool took hold of RUN (it gated some work).
stress_held() { grep -q '^stress: summary: gated=[1-9]' "$RUNS/$1.err" 2>/dev/null; }

# stress_verified RUN N: in RUN, made under the stress tool, which took hold,
# the program ran to the end (exit 0 or 1, no TODO reached) and scenario N
# verified its result, with the digest of the right one. Says nothing.
stress_verified() {
    built_ok || return 1
    local rc
    rc_in rc "$1"
    case $rc in 0|1) ;; *) return 1 ;; esac
    ! grep -q '^TODO(' "$RUNS/$1.err" 2>/dev/null || return 1
    stress_held "$1" || return 1
    [[ $(scenario_line "$1" "$2" 2>/dev/null) == *": verified"* ]] || return 1
    check_digests "$1" "" "scenario$2" >/dev/null 2>&1
}

# stress_run N: the run under the stress tool that judges scenario N: its own
# (sN), where the run of the four did not verify it, else that one.
stress_run() { if [ -f "$RUNS/s$1.rc" ]; then echo "s$1"; else echo stress; fi; }

# need_stress NAME: the run happened under the stress tool, which took hold.
need_stress() {
    need_run "$1" || return 1
    if ! stress_held "$1"; then
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
    local sc=$1 hint=$2 line r
    need_run main || return 1       # skips when there is no device
    r=$(stress_run "$sc")
    need_stress "$r" || return 1
    line=$(scenario_line "$r" "$sc")
    if [[ $line != *": verified"* ]]; then
        grep -m 2 -E '^stress: (race|free|cudaFreeHost|cudaHostUnregister)' "$RUNS/$r.err" |
            sed 's/^/note: /'
        say_fail "scenario $sc verified with the GPU as late as it is allowed to be" \
            "${line:-no \"scenario $sc\" line (exit status $(rc_of "$r"))}" "$hint"
        return 1
    fi
    check_digests "$r" "under the stress tool: " "scenario$sc" || return 1
    line=$(scenario_line main "$sc")
    [[ $line == *": verified"* ]] || { say_fail "scenario $sc verified in a plain run too" \
        "${line:-no \"scenario $sc\" line}" "$hint"; return 1; }
    check_digests main "" "scenario$sc"
}

# window N: "START END" (ms) of the NVTX range "scenario N" in the main trace.
window() {
    local w
    tq_line w main 1 list "nvtx:scenario $1"
    [ ${#w[@]} -lt 2 ] || echo "${w[0]} ${w[1]}"
}

# in_window N SEL: SEL's records (START END per line) that start inside scenario N.
in_window() {
    local w
    w=$(window "$1")
    [ -n "$w" ] || return 0
    tq main list "$2" --window "nvtx:scenario $1#1" --whole | cut -f 1,2 | tr '\t' ' '
}

# overlap_in N SEL1 SEL2: the fraction of SEL1's time in scenario N that SEL2
# runs alongside, of the records that start inside the scenario (0.0000
# where there is no such range).
overlap_in() {
    local o
    [ -n "$(window "$1")" ] || { echo 0.0000; return 0; }
    tq_in o main overlap "$2" "$3" --window "nvtx:scenario $1#1" --whole || true
    o=${o#* }
    echo "${o%% *}"
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure": the plain run's verdicts, the
# stress tool's, and scenario 1's overlap in the trace.
your_run() {
    your_run_ok main || return 0
    local sc plain=0 stress=0 held=0 f r
    for sc in 1 2 3 4; do
        scenario_line main "$sc" | grep -q ': WRONG' && plain=$((plain + 1))
        r=$(stress_run "$sc")
        stress_held "$r" || continue
        held=$((held + 1))
        scenario_line "$r" "$sc" | grep -q ': verified' || stress=$((stress + 1))
    done
    grep -q '^scenario ' "$RUNS/main.out" || plain=""
    [ "$held" = 4 ] || stress=""
    your_fig plain_wrong "$plain" "of 4" "scenarios that printed WRONG in the plain run"
    your_fig stress_wrong "$stress" "of 4" "scenarios that were wrong under the stress tool"
    [ -s "$RUNS/main.trace" ] && f=$(overlap_in 1 h2d kernel)
    your_fig s1_overlap_pct "$(calc '100 * f' f="$f")" % \
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

# copies_free N HINT BACK_HINT: passes, or says what is wrong: in scenario N
# no H2D copy is ordered after the kernel of the chunk before it, nor that
# kernel after the copy (the Kth kernel and the K+1th copy, each in the
# order its stream ran them; streamtrace ask both ways: what the program
# guaranteed, the same in every run). An order either way keeps the two
# from running at once, whatever this run's schedule (BACK_HINT: the kernel
# queued behind the next chunk's copy); a pair the program left free
# overlaps unless the GPU is busy with other programs' work. A trace that
# cannot tell (older than format 5 ties no wait to its event record): at
# least half of the copy time alongside the kernels, as measured.
copies_free() {
    local sc=$1 hint=$2 back=$3 c=() k=() qs=() i=0 n=0 a why f
    mapfile -t c < <(tq main corr h2d --window "nvtx:scenario $sc+gpu" | cut -f 11)
    mapfile -t k < <(tq main corr kernel --window "nvtx:scenario $sc+gpu" | cut -f 11)
    # two questions a pair: the copy after the kernel, the kernel after the copy
    for ((i = 0; i + 1 < ${#c[@]} && i < ${#k[@]}; i++)); do
        qs+=("order kernel:${k[i]} copy:${c[i + 1]}" "order copy:${c[i + 1]} kernel:${k[i]}")
    done
    [ ${#qs[@]} -gt 0 ] || { say_fail \
        "scenario $sc's chunks: a copy and a kernel each, in the NVTX range \"scenario $sc\"" \
        "${#c[@]} H2D copies, ${#k[@]} kernels" "keep the scenario's loop as given"; return 1; }
    while IFS=$'\t' read -r a why; do
        n=$((n + 1)) i=$(((n + 1) / 2))
        case $a in
            guaranteed)
                local seen="chunk $((i + 1))'s copy waits for chunk $i's kernel" h=$hint
                [ $((n % 2)) = 1 ] || seen="chunk $i's kernel waits for chunk $((i + 1))'s copy" h=$back
                say_fail "no copy of scenario $sc ordered after the kernel of the chunk before it, nor that kernel after the copy: the next chunk travels while this one computes" \
                    "$seen: $why" "$h"
                return 1 ;;
            unknown) [[ $why == *"older than format 5"* ]] && break
                say_fail "what orders scenario $sc's copies" "unknown: $why" "$hint"
                return 1 ;;
        esac
    done < <(ask main "${qs[@]}")
    if [ "$a" != unknown ]; then
        [ "$n" -lt ${#qs[@]} ] || return 0
        say_fail "what orders scenario $sc's copies" \
            "$n answers to ${#qs[@]} questions: $(tail -n 1 "$RUNS/main.tq.err" 2>/dev/null)" \
            "this is the checker's fault, not yours: report it"
        return 1
    fi
    f=$(overlap_in "$sc" h2d kernel)
    is_true 'f >= 0.5' f="${f:-0}" || say_fail \
        "at least half of scenario $sc's copy time alongside its kernels (this trace cannot tell what the program ordered: $why)" \
        "$(calc -f '%.0f%%' '100 * f' f="${f:-0}")" \
        "$hint"
}

@test "scenario 1's copies can overlap its kernels: no copy and the kernel of the chunk before it wait for each other" {
    need_run main
    need_trace main
    draw_on_fail main --window 'nvtx:scenario 1+gpu'
    copies_free 1 "wait for the copy out of h_stage[b] (its event, ev_staged[b]), not for the kernels: then the next chunk travels while this one computes (TODO 1)" \
        "keep the copies on s_copy and the kernels on s_comp, as given: on one stream each chunk's kernel waits for every copy queued before it"
}

@test "scenario 4's next-chunk copies can overlap its kernels: no copy and the kernel of the chunk before it wait for each other" {
    need_run main
    need_trace main
    draw_on_fail main --window 'nvtx:scenario 4+gpu'
    copies_free 4 "make only the free wait for the kernel (record ev_used[j] after it, make the prep stream wait for it right before cudaFreeAsync), not the host or the prep stream's next copy (TODO 4)" \
        "keep prep_chunk on the prep stream s_prep and scramble on s_comp, as given: the next chunk's copy is queued before this chunk's kernel, and on one stream that kernel waits for it"
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

# on_default N KIND: what scenario N queued on a default stream of KIND
# (default: the legacy one; per-thread: a host thread's own) in the NVTX
# range "scenario N", until its GPU work is done, in words ("2 H2D copies,
# 1 event"); nothing if nothing.
on_default() {
    local w=(--stream "$2" --window "nvtx:scenario $1+gpu") sel n out=""
    for sel in h2d d2h kernel memset event sync:stream sync:wait; do
        tq_in n main count "$sel" "${w[@]}"
        [ "${n:-0}" -gt 0 ] || continue
        case $sel in
            h2d) sel="H2D cop$([ "$n" = 1 ] && echo y || echo ies)" ;;
            d2h) sel="D2H cop$([ "$n" = 1 ] && echo y || echo ies)" ;;
            kernel|memset|event) sel=$sel$([ "$n" = 1 ] || echo s) ;;
            sync:stream) sel="wait$([ "$n" = 1 ] || echo s) for the stream (cudaStreamSynchronize)" ;;
            sync:wait) sel="cudaStreamWaitEvent$([ "$n" = 1 ] || echo s)" ;;
        esac
        out+="${out:+, }$n $sel"
    done
    echo "$out"
}

# The scenarios' streams are made with cudaStreamCreate: blocking streams,
# which the legacy default stream synchronizes with. Work, an event or a wait
# put there orders a scenario by that barrier across all of its streams, not
# by the event the scenario is about (and waiting for it waits for them all):
# the plain and the stress run then verify for the wrong reason. A host
# thread's per-thread default stream (cudaStreamPerThread) is the opposite
# mistake: it synchronizes with the legacy stream only, so none of the
# scenario's events or waits on its own streams orders it, and whether it
# raced shows only in the runs where it happened to.
@test "every scenario keeps its copies, kernels, events and waits off both default streams" {
    need_run main
    need_trace main
    local sc what seen="" hint="" first="" legacy="" ptds=""
    for sc in 1 2 3 4; do
        [ -n "$(window "$sc")" ] || { seen+="${seen:+; }scenario $sc: no NVTX range in the trace"; continue; }
        what=$(on_default "$sc" default)
        if [ -n "$what" ]; then
            seen+="${seen:+; }scenario $sc: $what on the legacy default stream"
            legacy=1
            [ -n "$first" ] || first=$sc
            case $sc:$what in
                4:*event*) hint+=" Record ev_used[j] on s_comp, the stream of the kernel that reads the scratch (TODO 4)." ;;
                [12]:*cudaStreamSynchronize*) hint+=" Wait for the event of what you need, not for stream 0 (TODO $sc)." ;;
            esac
            [ "$(tq main count api:cudaMemcpy --window "nvtx:scenario $sc")" = 0 ] ||
                hint+=" In scenario $sc, cudaMemcpy (without Async) is a copy on the legacy default stream that makes the host wait: keep it cudaMemcpyAsync on the scenario's stream."
        fi
        what=$(on_default "$sc" per-thread)
        if [ -n "$what" ]; then
            seen+="${seen:+; }scenario $sc: $what on a per-thread default stream"
            ptds=1
            [ -n "$first" ] || first=$sc
        fi
    done
    [ -z "$first" ] || draw_on_fail main --window "nvtx:scenario $first+gpu"
    local why=""
    [ -z "$legacy" ] || why="the legacy default stream synchronizes with every blocking stream (CUDA Runtime API, \"Stream synchronization behavior\"): work put there waits for all their earlier work, and their later work waits for it, so a scenario is then ordered by that barrier across all its streams, not by the one event it needs, and a wait on it waits for the work of every stream."
    [ -z "$ptds" ] || why+="${why:+ }a per-thread default stream (cudaStreamPerThread) synchronizes with the legacy default stream only (CUDA Runtime API, \"Stream synchronization behavior\"): no event recorded and no wait made on the scenario's own streams orders it, so what it does there can race them, and a run shows that only when the timing happens to."
    [ -z "$seen" ] || say_fail "nothing of any scenario on the legacy or a per-thread default stream: each keeps to the streams it created" \
        "$seen" \
        "$why Keep each call on the stream the given code names.$hint"
}

# balance: for each scenario, the memory it allocated that it did not give
# back, in words ("scenario 3: 3 cudaMallocHost, 2 cudaFreeHost"), a line
# each; nothing when each was given back. A call belongs to the scenario
# whose NVTX range it is in or next to: an allocation to the first range that
# ends after it, a free to the last range that starts before it.
balance() {
    local f i k p t s out rs=() re=() sc=()
    local -A c=() pair=([cudaMalloc]=1 [cudaFree]=-1 [cudaMallocHost]=2 [cudaHostAlloc]=2
        [cudaFreeHost]=-2 [cudaMallocAsync]=3 [cudaFreeAsync]=-3 [cudaHostRegister]=4 [cudaHostUnregister]=-4)
    local aname=(- cudaMalloc cudaMallocHost cudaMallocAsync cudaHostRegister)
    local fname=(- cudaFree cudaFreeHost cudaFreeAsync cudaHostUnregister)
    while IFS=$'\t' read -r -a f; do
        [[ ${f[5]:-} =~ ^scenario\ [1-4]$ ]] || continue
        ns_of t "${f[0]}"; rs+=("$t")
        ns_of t "${f[1]}"; re+=("$t")
        sc+=("${f[5]#scenario }")
    done < <(tq main list nvtx)
    while IFS=$'\t' read -r -a f; do
        p=${pair[${f[5]:-}]:-}
        [ -n "$p" ] || continue
        ns_of t "${f[0]}"
        s=0
        if [ "$p" -gt 0 ]; then
            for ((i = 0; i < ${#rs[@]}; i++)); do [ "${re[i]}" -ge "$t" ] && { s=$((i + 1)); break; }; done
            k=$s,$p,a
        else
            for ((i = ${#rs[@]} - 1; i >= 0; i--)); do [ "${rs[i]}" -le "$t" ] && { s=$((i + 1)); break; }; done
            k=$s,$((-p)),f
        fi
        c[$k]=$((${c[$k]:-0} + 1))
    done < <(tq main list api)
    for ((i = 1; i <= ${#rs[@]}; i++)); do
        out=""
        for k in 1 2 3 4; do
            [ "${c[$i,$k,a]:-0}" = "${c[$i,$k,f]:-0}" ] ||
                out+="${out:+, }${c[$i,$k,a]:-0} ${aname[k]}, ${c[$i,$k,f]:-0} ${fname[k]}"
        done
        [ -z "$out" ] || echo "scenario ${sc[i - 1]}: $out"
    done
}

# The lesson of the lab is a buffer's whole life: it outlives the work that
# uses it, and is given back once that work is done. A buffer never given
# back outlives everything: the stress tool then has no free to hold against
# the work, and scenario 4 no scratch going back to the pool at all.
@test "every scenario gives back the memory it allocated" {
    need_run main
    need_trace main
    local left hint="keep the given frees: each buffer goes back once the stream is done with it (cudaFree for cudaMalloc, cudaFreeHost for cudaMallocHost, not free())."
    left=$(balance)
    [ -n "$left" ] || return 0
    grep -q '^scenario 3: .*cudaFreeHost' <<<"$left" &&
        hint+=" In scenario 3, free h_keys with cudaFreeHost after the cudaStreamSynchronize at its end (TODO 3)."
    grep -q '^scenario 4: .*cudaFreeAsync' <<<"$left" &&
        hint+=" In scenario 4, the fix is to order cudaFreeAsync(d_tmp[j], s_prep) after the kernel (TODO 4), not to leave it out: every chunk's scratch would then stay out of the pool."
    draw_on_fail main --window "nvtx:$(head -n 1 <<<"$left" | cut -d : -f 1)+gpu"
    say_fail "as many frees as allocations in every scenario, of each kind" \
        "$(tr '\n' ';' <<<"$left" | sed 's/;$//; s/;/; /g')" "$hint"
}

# kernel_orders: for each chunk of scenarios 1, 2 and 4 (the Kth kernel and
# the Kth H2D copy that start in the scenario's NVTX range or after it, until
# its GPU work is done, in the order of the calls that queued them), whether
# the program ordered the kernel after its copy (streamtrace ask: stream
# order, the legacy default stream, an event and a wait for it, a host wait:
# the same in every run): "N K ok", or "N K no KSTREAM CSTREAM ANSWER: WHY"
# (ANSWER not-ordered, observed-only or unknown).
kernel_orders() {
    local sc sel f i a why kk ks cs qs=() meta=()
    local -A str=()
    for sc in 1 2 4; do
        [ -n "$(window "$sc")" ] || continue
        local -a h2d=() kernel=()
        for sel in h2d kernel; do
            local -n _ko=$sel
            while IFS=$'\t' read -r -a f; do
                _ko+=("${f[10]}") str[${f[10]}]=${f[4]}
            done < <(tq main corr "$sel" --window "nvtx:scenario $sc+gpu" --whole | sort -t $'\t' -k 11,11n)
            unset -n _ko
        done
        for ((i = 0; i < ${#h2d[@]} && i < ${#kernel[@]}; i++)); do
            meta+=("$sc $((i + 1)) ${str[${kernel[i]}]} ${str[${h2d[i]}]}")
            qs+=("order copy:${h2d[i]} kernel:${kernel[i]}")
        done
    done
    [ ${#qs[@]} -gt 0 ] || return 0
    i=0
    while IFS=$'\t' read -r a why; do
        read -r sc kk ks cs <<<"${meta[i]}"
        i=$((i + 1))
        if [ "$a" = guaranteed ]; then echo "$sc $kk ok"
        else echo "$sc $kk no $ks $cs $a: $why"; fi
    done < <(ask main "${qs[@]}")
}

# Work on two streams runs in no order unless the program orders it. A kernel
# queued with nothing ordering it after the copy of its chunk reads whatever
# is there when it starts: it is right only when the copy won the race, as
# it does in most runs (the stress tool holds work back, it does not run a
# kernel before a copy queued ahead of it).
@test "each chunk's kernel is queued behind the copy that brings its chunk" {
    need_run main
    need_trace main
    local bad="" line sc k ok ks cs hint
    while read -r line; do
        read -r sc k ok _ <<<"$line"
        [ "$ok" = no ] && { bad=$line; break; }
    done < <(kernel_orders)
    [ -n "$bad" ] || return 0
    local why
    read -r sc k _ ks cs why <<<"$bad"
    case $sc in
        1) hint="keep the given cudaStreamWaitEvent(s_comp, ev_staged[b], 0) right before scramble(): it makes the compute stream wait for the event recorded behind the chunk's copy" ;;
        4) hint="keep the given cudaStreamWaitEvent(s_comp, ev_ready[j], 0) right before scramble(): it makes the compute stream wait for the event recorded behind the chunk's copy" ;;
        *) hint="keep each half's copy, kernel and copy back on that half's stream s[h]" ;;
    esac
    draw_on_fail main --window "nvtx:scenario $sc+gpu"
    say_fail "each chunk's kernel queued behind its copy: on the copy's stream, or after cudaStreamWaitEvent made its stream wait for an event recorded behind the copy" \
        "scenario $sc: the kernel of $([ "$sc" = 2 ] && echo half || echo chunk) $((k - 1)) (stream $ks) was queued $([[ $why == unknown* ]] && echo "with what orders it after its copy (stream $cs) unknown: ${why#unknown: }" || echo "with nothing ordering it after its copy (stream $cs)")" \
        "$hint; work on different streams may run in any order, and without it the kernel may read its input before the copy has landed (a run can win that race)"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
