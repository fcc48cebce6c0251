#!/usr/bin/env bats
# 02-async-copy.bats -- the checks of lab 02 (async copy).
# Run from the lab folder with `make check`, or `make check LAB=02` at the top.
# The program runs once under the trace tool; each check reads that run.
#
# The measured run is marked by three NVTX ranges on the host: "issue" (queue
# H2D, kernel, D2H), "cpu_work" (independent host work) and "wait" (wait for
# the stream). GPU work that starts after "issue" began belongs to it; what
# came before is the program's rehearsal, which waits on purpose.

bats_require_minimum_version 1.5.0
LAB_ID=02-async-copy
PROG=async_copy
# Hardware queues under the grader (lib/checks.bash, run_lab). A right
# program's trace (an H200, 2026-11-27): none shared with 1
QUEUES=1
load lib/checks

setup_file() {
    build_lab
    run_beside badopt -- --frobnicate
    run_beside nodev --env CUDA_VISIBLE_DEVICES= --
    run_lab main --trace
    runs_done
    # the questions its checks ask of the run, answered in one parse
    tq_ahead main <<'EOF'
        count api:cudaMemcpy
        events h2d
        list api
        list api --window nvtx:wait#1 --whole
        list api:cudaMemcpyAsync
        list api:cudaMemcpyAsync --window nvtx:issue#1 --whole
        list d2h
        list gpu
        list h2d
        list kernel
        list nvtx:cpu_work
        list nvtx:issue
        list nvtx:wait
        list sync
        list sync --window nvtx:wait#1 --whole
        overlap nvtx:cpu_work gpu
        streams gpu
EOF
    ask_ahead main <<'EOF'
        elapsed
EOF
}

# range NAME FIELD: start (1) or end (2) of the NVTX range NAME, ms into the trace
# (of run RUN, default main)
range() {
    local v
    tq_field v "${3:-main}" 1 "$2" list "nvtx:$1"
    [ -z "$v" ] || echo "$v"
}

# measured SEL: the `list` lines of SEL that start once "issue" has begun
measured() {
    local from
    from=$(range issue 1)
    [ -n "$from" ] || return 0
    tq main list "$1" --from "$from" --whole
}

# the end of the measured run's GPU work (its last copy or kernel), in ms
gpu_end() { last_end "$(measured gpu)"; }

# the number of the measured run's H2D copy among all H2D copies (the
# rehearsals come first): the copy whose events gpu_ms was read from
measured_h2d() {
    local from l f n=0 t
    from=$(range issue 1 "${1:-main}")
    ns_of from "$from"
    tq_in l "${1:-main}" list h2d
    while IFS=$'\t' read -r -a f; do
        n=$((n + 1))
        ns_of t "${f[0]:-}"
        [ "$t" -lt "$from" ] || { echo "$n"; return 0; }
    done <<<"$l"
}

# host_waits [--no-memcpy] WINDOW...: the host's waits for the GPU that
# start in WINDOW (streamtrace's window words), "KIND NAME at MS ms (MS ms
# long); " each: the sync records, then the calls that wait (a synchronize,
# and but with --no-memcpy cudaMemcpy)
host_waits() {
    local l f memcpy=api:cudaMemcpy
    [ "$1" != --no-memcpy ] || { memcpy=-; shift; }
    l=$(tq main list sync "$@"; tq main list api "$@")
    while IFS=$'\t' read -r -a f; do
        case ${f[3]:-}:${f[5]:-} in
            sync:*|api:cudaStreamSynchronize|api:cudaDeviceSynchronize|api:cudaEventSynchronize|"$memcpy")
                printf '%s %s at %.3f ms (%.3f ms long); ' "${f[3]}" "${f[5]}" "${f[0]}" "${f[2]}" ;;
        esac
    done <<<"$l"
}

# MEASURED: the measured run, as streamtrace's window words: from "issue"
# until the GPU work it queued is done, the CPU work, the wait. A failed
# check of the measured run draws it (draw_on_fail).
MEASURED=(--window nvtx:issue+gpu --window nvtx:cpu_work --window nvtx:wait)

# sync_copies RUN: the directions of the copies that synchronous calls
# (cudaMemcpy) made in the measured run (the trace marks each copy async or
# not), one each: "H2D D2H"
sync_copies() {
    local l f out=""
    tq_in l "$1" corr copy "${MEASURED[@]}"
    while IFS=$'\t' read -r -a f; do
        [ "${f[11]:-}" = 0 ] && [[ " $out " != *" ${f[5]} "* ]] && out+="${out:+ }${f[5]}"
    done <<<"$l"
    echo "$out"
}

# the three ranges must be there for any check on the measured run
need_ranges() {
    local r
    for r in issue cpu_work wait; do
        [ -n "$(range "$r" 1)" ] || {
            say_fail "an NVTX range \"$r\" in the trace" "none" \
                "keep the NVTX_PUSH(\"$r\", ...) / NVTX_POP() pair of main() as given"
            return 1
        }
    done
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace.
your_run() {
    your_run_ok main || return 0
    local i0 i1 c0 c1 w1 end busy
    read -r i0 i1 <<<"$(range issue 1) $(range issue 2)"
    read -r c0 c1 <<<"$(range cpu_work 1) $(range cpu_work 2)"
    w1=$(range wait 2) end=$(gpu_end)
    your_fig issue_ms "$(diff_of "$i1" "$i0")" ms \
        "the host queueing H2D, kernel and D2H (the range \"issue\")"
    tq_in busy main overlap nvtx:cpu_work gpu
    read -r _ busy _ <<<"$busy"
    your_fig gpu_busy_pct "$(calc '100 * b' b="$busy")" % \
        "of the CPU work, the share during which the GPU was busy"
    [ -n "$i0" ] && [ -n "$c0" ] && [ -n "$w1" ] && [ -n "$end" ] || i0=""
    your_fig wall_pct "$(calc '100 * (w1 - i0) / ((c1 - c0) + (e - i0))' i0="$i0" w1="$w1" c0="$c0" c1="${c1:-0}" e="$end")" % \
        "wall time (issue to the end of wait) against CPU work + GPU work one after the other"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0" {
    check_exits_ok main \
        "a CUDA error names the file:line and the call; a wrong result is the next check"
}

# results_right RUN: RUN verified every element, with the right digest.
results_right() {
    check_verified "$1" "RESULT: verified all $(elements) elements" '^RESULT' \
        "got 3452816845 (0xcdcdcdcd, the poison): h_out was read before the D2H copy had landed -- wait for the stream (TODO 5) before verify() reads it"
}

# wait_tested RUN: did RUN put the wait to the test? A program that reads
# h_out right after "cpu_work", before it waits, still gets the right
# numbers when the D2H copy had landed by then. The CPU work is sized from a
# rehearsal of the GPU work, to half of it; another program on the GPU can
# stretch the rehearsal, and then the CPU work outlasts the measured GPU
# work. The run tested the wait if its D2H copy began at least 0.1 ms after
# "cpu_work" ended: h_out then still held the poison when the CPU work was
# done. Else say what happened, in a few words, and return 1. (A run without
# those records is judged by the other checks.)
wait_tested() {
    local from c1 d0
    tq_field from "$1" 1 1 list nvtx:issue
    tq_field c1 "$1" 1 2 list nvtx:cpu_work
    [ -n "$from" ] && [ -n "$c1" ] || return 0
    tq_field d0 "$1" 1 1 list d2h --from "$from" --whole
    [ -n "$d0" ] || return 0
    is_true 'd >= c + 0.1' d="$d0" c="$c1" && return 0
    echo "its D2H copy began at $(fmt "$d0") ms, before the CPU work ended at $(fmt "$c1") ms"
    return 1
}

# The verdict must not rest on a race the program won: a run whose D2H copy
# was under way before the CPU work ended cannot show a read before the wait,
# so the program is run again (second_look), at most twice, to look again.
@test "every element of the result is right" {
    second_look main wait_tested results_right
}

@test "it reports the issue, CPU work, wait, GPU and wall times" {
    need_run main
    local k v
    for k in rehearsal_ms issue_ms cpu_ms wait_ms wall_ms gpu_ms; do
        need_figure_in v main "$k" || return 1
        is_true 'v > 0' v="$v" || say_fail "$k above 0" "$k = $v" \
            "a time of 0: is the clock read on both sides of the step?"
    done
    local i c w t
    figure_in i main issue_ms; figure_in c main cpu_ms; figure_in w main wait_ms; figure_in t main wall_ms
    is_true 't >= 0.98 * (i + c + w) && t <= 1.02 * (i + c + w) + 0.05' t="$t" i="$i" c="$c" w="$w" ||
        say_fail "wall_ms = issue_ms + cpu_ms + wait_ms" \
        "wall_ms = $t, issue + cpu + wait = $(fmt "$(calc 'a + b + d' a="${i:-0}" b="${c:-0}" d="${w:-0}")")" \
        "keep the clock readings t0..t3 of main() as given"
}

# cpu_ms and wall_ms are host clock readings around NVTX ranges: the same
# intervals as the ranges in the trace. gpu_ms is cudaEventElapsedTime between
# the events around the measured work: the same interval as the GPU's own
# stamps of those events in the trace.
# gpu_time RUN: the printed gpu_ms agrees with the events around the measured
# work. Another program can come between an event's own stamp and the
# trace's, so this part may look at up to 2 more runs (see same_gpu_time).
gpu_time() {
    local k
    k=$(measured_h2d "$1")
    [ -n "$k" ] || { say_fail "an H2D copy once \"issue\" began" "none" \
        "issue_work() queues the copy in (TODO 2)"; return "$HOPELESS"; }
    check_event_time "$1" h2d "$k" gpu_ms "the measured H2D copy, kernel and D2H copy" 3 \
        "the start and stop events are recorded on the stream: the copies and the kernel must be on it too, between them"
}

# timing_faults RUN: what makes a printed event time of RUN untrue or lucky,
# in words, or nothing. An event is stamped when the GPU reaches it in its
# stream: recorded on another stream than the work it times, it is stamped
# whenever that stream gets there, before, during or after the work, unless
# CUDA orders the two streams (the legacy default stream and a blocking
# stream order each other; a per-thread default stream and a created stream
# do not). And cudaEventElapsedTime returns cudaErrorNotReady while the
# stop event is not complete (CUDA Runtime API): the host must wait after
# cudaEventRecord(stop, stream). Both are structures, the same in every
# run: a program that breaks one got its time by luck. Prints
# "K<TAB>WHAT": the first such timing (figure_of K) and what is wrong.
timing_faults() {
    local k a b
    while IFS=$'\t' read -r k a b _; do
        [ "$a" = ok ] || { printf '%s\t%s\n' "$k" "$a"; return; }
        [ "$b" = ok ] || { printf '%s\t%s\n' "$k" "$b"; return; }
    done < <(timed_pairs "$1")
}

@test "the times it reports agree with what the trace recorded" {
    need_run main
    need_trace main
    draw_on_fail main "${MEASURED[@]}"
    need_ranges || return 1
    local c w tc tw k
    need_figure_in c main cpu_ms || return 1
    need_figure_in w main wall_ms || return 1
    tc=$(calc 'b - a' a="$(range cpu_work 1)" b="$(range cpu_work 2)")
    tw=$(calc 'b - a' a="$(range issue 1)" b="$(range wait 2)")
    is_true 'c >= 0.9 * t - 0.2 && c <= 1.1 * t + 0.2' c="$c" t="$tc" || say_fail \
        "cpu_ms within 10% (+0.2 ms) of the traced range \"cpu_work\", $(fmt "$tc") ms" \
        "cpu_ms = $c" "keep t1 and t2 right around the cpu_work range"
    is_true 'w >= 0.9 * t - 0.2 && w <= 1.1 * t + 0.2' w="$w" t="$tw" || say_fail \
        "wall_ms within 10% (+0.2 ms) of issue start -> wait end in the trace, $(fmt "$tw") ms" \
        "wall_ms = $w" "keep t0 right before \"issue\" and t3 right after \"wait\""
    # every event time (the rehearsals' too): events ordered with their
    # work, and waited for before the time is read
    local fault k
    fault=$(timing_faults main)
    if [ -n "$fault" ]; then
        k=${fault%%$'\t'*}
        say_fail "the start and stop events of each timing on the stream of the work between them, and a wait after the stop event's record before cudaEventElapsedTime" \
            "$(figure_of "$k"): ${fault#*$'\t'}" \
            "$(case $k,$fault in
                3,*no\ wait*) echo "gpu_ms is read after the wait for the stream (TODO 5)" ;;
                *no\ wait*) echo "keep the rehearsal's cudaStreamSynchronize(stream) right after cudaEventRecord(stop, stream) as given" ;;
                3,*) echo "keep the given cudaEventRecord(start, stream) and cudaEventRecord(stop, stream) around issue_work(), and queue its copies and kernel on \`stream\` (TODO 2, 3, 4)" ;;
                *) echo "keep the rehearsal's cudaEventRecord(start, stream) and cudaEventRecord(stop, stream) as given, and queue issue_work()'s copies and kernel on \`stream\` (TODO 2, 3, 4)" ;;
               esac): $(case $fault in
                *no\ wait*) echo "without it, cudaEventElapsedTime returns cudaErrorNotReady whenever the GPU has not reached stop yet; this run got its time only because the GPU happened to be done first" ;;
                *) echo "an event on another stream is stamped whenever that stream gets to it" ;;
               esac)"
        return 1
    fi
    second_chance main gpu_time
}

# figure_of K: the figure the Kth cudaEventElapsedTime of the program reads
# (two rehearsals, then the measured run)
figure_of() {
    case $1 in 1) echo "rehearsal_ms (rehearsal 1)" ;; 2) echo "rehearsal_ms (rehearsal 2)" ;;
        3) echo gpu_ms ;; *) echo "time $1" ;; esac
}

@test "copies and kernel run on the stream the program created" {
    need_run main
    need_trace main
    draw_on_fail main "${MEASURED[@]}"
    need_ranges || return 1
    local all streams sel off id kind sync note="" used
    tq_in all main streams gpu
    streams=$(words_of 2 "$all")
    [ "$streams" = "created " ] || {
        # the streams by the names the drawing gives their lanes
        while read -r id kind _ sync; do
            [ -n "$id" ] || continue
            if [ "$kind" = default ]; then note+="${note:+, }default (the legacy default stream)"
            elif [ "$sync" != - ]; then note+="${note:+, }stream $id ($kind, $sync)"
            else note+="${note:+, }stream $id ($kind)"; fi
        done <<<"$all"
        [ -z "$note" ] || echo "note: the run used $note"
        # what ran elsewhere is the hint: the kernel or a copy
        off=$(ran_elsewhere main created)
        local fix="the default stream shows up when a call has no stream: the 4th launch parameter <<<b, t, 0, stream>>> (TODO 3), cudaMemcpyAsync's last argument, not cudaMemcpy"
        case $off in
            *copy*) ;;
            *kernel*) fix="give the launch the stream: its 4th launch parameter, <<<blocks, THREADS, 0, stream>>> (TODO 3)" ;;
        esac
        say_fail "every copy and kernel on a stream made with cudaStreamCreate" \
            "streams used: $streams" "${off:+$off: }$fix"
    }
    for sel in h2d kernel d2h; do
        [ -n "$(measured $sel)" ] || say_fail \
            "an H2D copy, a kernel and a D2H copy in the measured run" \
            "no $sel after \"issue\" began" "issue_work() queues all three"
    done
    used=$(words_of 5 "$(measured gpu)")
    read -r -a used <<<"$used"
    [ ${#used[@]} = 1 ] || say_fail \
        "the measured run's copies and kernel on one stream" \
        "streams $([ ${#used[@]} = 0 ] || printf '%s ' "${used[@]}")" \
        "one stream keeps them in order: H2D, then kernel, then D2H"
}

@test "the copies are asynchronous cudaMemcpyAsync calls" {
    need_run main
    need_trace main
    draw_on_fail main "${MEASURED[@]}"
    need_ranges || return 1
    local sync calls kinds issue end pageable="" copies f dirs=()
    tq_in sync main count api:cudaMemcpy
    [ "$sync" = 0 ] || say_fail "no cudaMemcpy at all (it makes the host wait)" \
        "$sync cudaMemcpy calls" \
        "$(case $(sync_copies main) in
            "H2D D2H"|"D2H H2D") echo "both copies were made by cudaMemcpy: " ;;
            H2D) echo "the H2D copy was made by cudaMemcpy (TODO 2): " ;;
            D2H) echo "the D2H copy was made by cudaMemcpy (TODO 4): " ;;
           esac)queue the copies with cudaMemcpyAsync(..., stream) (TODO 2, 4)"
    calls=$(tq main list api:cudaMemcpyAsync --window nvtx:issue#1 --whole | wc -l)
    [ "$calls" = 2 ] || say_fail "2 cudaMemcpyAsync calls while issuing (H2D and D2H)" \
        "$calls" "issue_work() queues one copy in (TODO 2) and one out (TODO 4)"
    copies=$(measured h2d; measured d2h)
    kinds=$(words_of 8 "$copies")
    [ "$kinds" = "PINNED " ] || pageable_dirs dirs main --from "$(range issue 1)" --whole
    for f in "${dirs[@]}"; do
        if [ "$f" = H2D ]; then pageable+="${pageable:+; }the H2D copies came from pageable memory"
        else pageable+="${pageable:+; }the $f copies went to pageable memory"; fi
    done
    [ "$kinds" = "PINNED " ] || say_fail "the copies to and from pinned host memory" \
        "memory kinds: $kinds" \
        "${pageable:+$pageable: }keep cudaMallocHost for h_in and h_out: from malloc memory cudaMemcpyAsync may make the host wait (lab 03 measures it)"
    # structure, not a ratio of times: the host was done issuing while the
    # GPU still had the work to do
    issue=$(range issue 2) end=$(gpu_end)
    is_true 'i < e' i="$issue" e="${end:-0}" || say_fail \
        "\"issue\" over before the GPU finished the work it queued" \
        "\"issue\" ended at $(fmt "$issue") ms, the GPU's last copy at $(fmt "${end:-0}") ms" \
        "the host must only queue the work: nothing in issue_work() may wait for the GPU"
}

@test "nothing waits for the GPU between issuing the work and the CPU work" {
    need_run main
    need_trace main
    draw_on_fail main "${MEASURED[@]}"
    need_ranges || return 1
    local from to waits
    from=$(range issue 1) to=$(range cpu_work 1)
    waits=$(host_waits --from "$from" --to "$to" --whole)
    [ -z "$waits" ] || say_fail \
        "no synchronization from the start of \"issue\" to the start of \"cpu_work\"" \
        "$waits" \
        "a cudaStreamSynchronize (or cudaMemcpy) right after issuing makes the CPU idle while the GPU works; wait only after the CPU work (TODO 5)"
}

# A structure that another program on the GPU cannot fake or break: the GPU
# work queued in "issue" was not finished yet when "cpu_work" began. (How
# much of "cpu_work" the GPU was busy for is no proof: a shared GPU may run
# someone else's kernel first.)
@test "the CPU work runs while the GPU works" {
    need_run main
    need_trace main
    draw_on_fail main "${MEASURED[@]}"
    need_ranges || return 1
    local c0 end
    c0=$(range cpu_work 1) end=$(gpu_end)
    is_true 'e > c' e="${end:-0}" c="$c0" || say_fail \
        "the GPU work queued in \"issue\" still unfinished when \"cpu_work\" began" \
        "it ended at $(fmt "${end:-0}") ms; \"cpu_work\" began at $(fmt "$c0") ms" \
        "the GPU's work must still be queued or running when the CPU work starts: no wait, no cudaMemcpy before it"
}

@test "the host waits for the stream before it reads the results" {
    need_run main
    need_trace main
    draw_on_fail main "${MEASURED[@]}"
    need_ranges || return 1
    local from to waits last
    from=$(range wait 1) to=$(range wait 2)
    waits=$(host_waits --no-memcpy --window nvtx:wait#1 --whole)
    [ -n "$waits" ] || say_fail "a cudaStreamSynchronize in the range \"wait\"" \
        "no synchronization there" \
        "h_out is only safe to read once the stream is done: cudaStreamSynchronize(stream) (TODO 5)"
    last=$(gpu_end)
    last=${last:-0}
    is_true 'last <= to' last="$last" to="$to" || say_fail \
        "the D2H copy finished before \"wait\" ended" \
        "the GPU still worked until $(fmt "$last") ms, \"wait\" ended at $(fmt "$to") ms" \
        "wait for the stream the work is on, not another one"
}

# Done one after the other, CPU work and GPU work take C + G; overlapped, the
# wall time saves up to the shorter of the two. G is the GPU work as the host
# sees it: from the start of "issue" to the end of the last copy. A GPU shared
# with other programs stretches G, and the saving stays the shorter part, so
# the check asks for most of it: saved >= 0.8 x min(C, G). Every figure is an
# interval of this run on the trace's one clock.
@test "the wall time is clearly below CPU work plus GPU work" {
    need_run main
    need_trace main
    draw_on_fail main "${MEASURED[@]}"
    need_ranges || return 1
    local wall cpu gpu ge saved short own
    wall=$(calc 'b - a' a="$(range issue 1)" b="$(range wait 2)")
    cpu=$(calc 'b - a' a="$(range cpu_work 1)" b="$(range cpu_work 2)")
    ge=$(gpu_end)
    gpu=$(calc 'b - a' a="$(range issue 1)" b="${ge:-0}")
    saved=$(calc -f '%.6f' 'c + g - w' w="${wall:-0}" c="${cpu:-0}" g="${gpu:-0}")
    short=$(calc 'c < g ? c : g' c="${cpu:-0}" g="${gpu:-0}")
    figure_in own main wall_vs_serial
    is_true 's >= 0.8 * m' s="$saved" m="$short" || say_fail \
        "wall time at least 0.8 x min(CPU work, GPU work) below CPU work + GPU work (overlap saves the shorter one)" \
        "wall $(fmt "$wall") ms, CPU work $(fmt "$cpu") ms + GPU work $(fmt "$gpu") ms: $(fmt "$saved") ms saved of $(fmt "$short") (the program's ratio: ${own:-?})" \
        "nothing saved: the CPU and the GPU took turns. Issue everything, do the CPU work, and only then wait"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
