#!/usr/bin/env bats
# 04-events.bats -- the checks of lab 04 (events).
# Run from the lab folder with `make check`, or `make check LAB=04` at the top.
# The program runs once under the trace tool (all three parts); each check
# reads that run: its figures, its verdict and what the GPU recorded.

bats_require_minimum_version 1.5.0
LAB_ID=04-events
PROG=events
# Hardware queues under the grader (lib/checks.bash, run_lab). A right
# program's trace (an H200, 2026-11-27): none shared with 3 (its two streams
# share one with 1 or 2)
QUEUES=3
load lib/checks

setup_file() {
    build_lab
    run_beside badopt -- --frobnicate
    run_beside nodev --env CUDA_VISIBLE_DEVICES= --
    run_lab main --trace
    runs_done
    # the questions its checks ask of the run, answered in one parse
    tq_ahead main <<'EOF'
        corr api
        corr d2h
        corr event
        corr gpu
        corr kernel
        corr kernel:busy_kernel
        corr memset
        corr sync
        count kernel:busy_kernel
        durations kernel:busy_kernel
        events kernel:busy_kernel
        list kernel:consumer_kernel
        list kernel:producer_kernel
        overlap nvtx:polling kernel:busy_kernel
        streams
        streams kernel:consumer_kernel
        streams kernel:producer_kernel
EOF
    # and what the program guaranteed, asked of the run in one parse
    ask_ahead main <<'EOF'
        order kernel:producer_kernel kernel:consumer_kernel
        elapsed
EOF
}

# busy_ms N: the traced duration of the Nth busy_kernel run. Part 1 launches
# them in this order on one stream: 1 cold, 2 timed with events, 3 host clock
# with a synchronize, 4 host clock without, 5-6 the "late" pair; part 2: 7.
busy_ms() { tq main durations kernel:busy_kernel | sed -n "${1}p"; }

# between_launches: what the host did between queueing producer_kernel and
# queueing consumer_kernel, from the trace's records with the call that
# queued each (records: a kernel and the cudaLaunchKernel call that queued
# it share a correlation id). Prints one line: "ok", or "missing"; then the host waits found in
# between as "NAME xCOUNT" (or "-"); then how long after the producer's end the
# consumer was queued, in ms (negative: while the producer still ran).
between_launches() {
    local f x pk="" pe pc="" ck="" cc="" lo hi key found="" keys=() ws=() we=() wk=() i sel fl
    local -A as=() n=()
    # the host's waits (a stream wait aside), by start and end
    for sel in kernel sync api; do
        tq_file fl main corr "$sel"
        while IFS=$'\t' read -r -a f; do
            case ${f[3]}:${f[5]} in
                kernel:producer_kernel*)
                    ns_of x "${f[0]}"
                    [ -n "$pk" ] && ((x >= pk)) || { pk=$x pc=${f[10]}; ns_of pe "${f[1]}"; } ;;
                kernel:consumer_kernel*)
                    ns_of x "${f[0]}"
                    [ -n "$ck" ] && ((x >= ck)) || ck=$x cc=${f[10]} ;;
                api:*) ns_of x "${f[0]}"; as[${f[10]}]=$x ;;&
                sync:wait) ;;
                sync:*) wk+=("sync:${f[5]}") ;;&
                api:*Synchronize | api:cudaMemcpy | api:cudaMemset | api:cudaStreamQuery | api:cudaEventQuery)
                    wk+=("${f[5]}") ;;&
                sync:* | api:*)
                    if [ ${#wk[@]} -gt ${#ws[@]} ]; then
                        ns_of x "${f[0]}"; ws+=("$x")
                        ns_of x "${f[1]}"; we+=("$x")
                    fi ;;
            esac
        done <"$fl"
    done
    [ -n "$pc" ] && [ -n "$cc" ] && [ -n "${as[$pc]:-}" ] && [ -n "${as[$cc]:-}" ] || { echo missing; return 0; }
    lo=${as[$pc]} hi=${as[$cc]}
    for ((i = 0; i < ${#wk[@]}; i++)); do
        ((ws[i] < hi && we[i] > lo)) || continue
        key=${wk[i]}
        [ -n "${n[$key]:-}" ] || keys+=("$key")
        n[$key]=$((${n[$key]:-0} + 1))
    done
    # in the order of their first records
    for key in "${keys[@]}"; do found+="${found:+, }$key x${n[$key]}"; done
    printf 'ok\t%s\t%.3f\n' "${found:--}" "$((hi - pe))e-6"
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace and output.
your_run() {
    your_run_ok main || return 0
    local gap
    your_fig nosync_pct "$(pct "$(figure main host_nosync_ms)" "$(busy_ms 4)")" % \
        "host_nosync_ms against the traced run of the kernel it meant to time"
    your_fig cold_extra_ms "$(diff_of "$(figure main cold_ms)" "$(figure main event_ms)")" ms \
        "cold_ms - event_ms: what the first launch cost more"
    local pe cs
    tq_field pe main 1 2 list kernel:producer_kernel
    tq_field cs main 1 1 list kernel:consumer_kernel
    your_fig wait_gap_us "$(calc '1000 * (c - p)' c="$cs" p="$pe")" us "from the producer's end to the consumer's start, on the GPU"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0" {
    check_exits_ok main \
        "cudaErrorNotReady from cudaEventElapsedTime: the stop event was not waited for (cudaEventSynchronize)"
}

@test "the consumer sees all of the producer's result" {
    check_verified main "RESULT: verified all ... elements of every part that was run" WRONG \
        "part 3 wrong: the consumer read d_buf before the producer wrote it; record produced on stream A and make stream B wait for it (TODO 4, 5)"
}

@test "it prints the five timings side by side" {
    need_run main
    local k v
    for k in event_ms host_sync_ms host_nosync_ms host_late_ms cold_ms; do
        need_figure_in v main "$k" || return 1
        is_true 'v > 0' v="$v" || say_fail "$k above 0" "$k = $v" \
            "a time of 0: the events were not recorded around the work, or not read"
    done
}

# event_ms is cudaEventElapsedTime between two events; the trace has the
# GPU's own stamps of both. So event_ms must be the time between the events
# right around the timed kernel, and those must enclose that kernel alone.
# Another program on the GPU may stretch the interval, never split the two.
# event_time RUN: event_ms agrees with the events around the timed kernel.
# Another program can come between an event's own stamp and the trace's, so
# this part may look at up to 2 more runs (see same_gpu_time).
event_time() {
    check_event_time "$1" kernel:busy_kernel 2 event_ms "the timed busy_kernel (the 2nd)" 1 \
        "record start and stop on stream s, the kernel's stream (stream 0 does not wait for a non-blocking stream), and cudaEventSynchronize(stop) before reading"
}

@test "the event time matches the kernel's traced duration" {
    need_run main
    need_trace main
    draw_on_fail main --timed kernel:busy_kernel 2
    local ms
    figure_in ms main event_ms
    [ -n "$ms" ] || { say_fail "a line \"event_ms = <number>\"" \
        "none: the program $(describe_exit "$(rc_of main)"): $(grep -v '^ ' "$RUNS/main.err" | head -n 1)" \
        "cudaErrorNotReady: the time was read before the stop event was reached; cudaEventSynchronize(stop) first"; return 1; }
    [ "$(tq main count kernel:busy_kernel)" -ge 2 ] || { say_fail "7 runs of busy_kernel in the trace" \
        "$(tq main count kernel:busy_kernel)" "keep every busy() call of parts 1 and 2"; return 1; }
    second_chance main event_time
}

@test "a host clock without a synchronize times only the launch" {
    need_run main
    need_trace main
    local nosync sync k3 k4
    draw_on_fail main --record kernel:busy_kernel 3 --record kernel:busy_kernel 4
    need_figure_in nosync main host_nosync_ms || return 1
    need_figure_in sync main host_sync_ms || return 1
    k3=$(busy_ms 3) k4=$(busy_ms 4)
    is_true 'n < 0.1 * k' n="$nosync" k="$k4" || say_fail \
        "host_nosync_ms far below the kernel's traced run ($(fmt "$k4") ms): under a tenth" \
        "host_nosync_ms = $nosync" \
        "that case must not wait: the launch returns at once, t1 is read right after it"
    is_true 's >= 0.98 * k' s="$sync" k="$k3" || say_fail \
        "host_sync_ms at least the kernel's traced run, $(fmt "$k3") ms" \
        "host_sync_ms = $sync" \
        "wait for stream s (cudaStreamSynchronize) before t1 is read (TODO 2)"
}

# An event is stamped when the GPU reaches it in its stream. Streams A and B
# are non-blocking: the GPU orders nothing on them with stream 0, nor with
# another stream, so an event recorded there is stamped before, during or
# after a kernel on s. A structure, the same in every run: a time read from
# such events is right only by luck.
@test "the GPU orders the timing events with the work they time" {
    need_run main
    need_trace main
    draw_on_fail main --timed kernel:busy_kernel 1 --timed kernel:busy_kernel 2
    local k order wait seen="" first=""
    while IFS=$'\t' read -r k order wait; do
        [ "$order" = ok ] && continue
        seen+="${seen:+; }$(case $k in 1) echo cold_ms ;; 2) echo event_ms ;; *) echo "time $k" ;; esac): $order"
        [ -n "$first" ] || first=$k
    done < <(timed_pairs main)
    [ -z "$seen" ] || say_fail \
        "start, busy_kernel and stop of each event timing on stream s, in that order" \
        "$seen" \
        "$(if [ "$first" = 1 ]; then echo "keep the given cudaEventRecord(start, s), busy(w, s), cudaEventRecord(stop, s) of the cold launch as they are"
           else echo "record start on s right before busy(w, s) and stop on s right after it (TODO 1)"; fi): stream 0 does not wait for a non-blocking stream, nor it for stream 0"
}

# part1 RUN: part 1's six busy_kernel runs in the order the host launched
# them, one line each: "N START END STREAM KIND SYNC LAUNCH_START", times in
# ns from the trace's first record; then one line "W T" per synchronize call
# of the host (T its start).
part1() {
    local -A ki=() sy=() as=()
    local id k y f x i j n c=() ks=() ke=() st=() l=() w=() sel fl
    while read -r id k _ y _; do ki[$id]=$k sy[$id]=$y; done < <(tq "$1" streams)
    for sel in kernel:busy_kernel api; do
        tq_file fl "$1" corr "$sel"
        while IFS=$'\t' read -r -a f; do
            case ${f[3]}:${f[5]} in
                kernel:busy_kernel*)
                    c+=("${f[10]}") st+=("${f[4]}")
                    ns_of x "${f[0]}"; ks+=("$x")
                    ns_of x "${f[1]}"; ke+=("$x") ;;
                api:*)
                    ns_of x "${f[0]}"; as[${f[10]}]=$x
                    [[ ${f[5]} != *Synchronize ]] || w+=("$x") ;;
            esac
        done <"$fl"
    done
    n=${#c[@]}
    for ((i = 0; i < n; i++)); do l[i]=${as[${c[i]}]:-${ks[i]}}; done
    # by launch: insertion sort (7 kernels)
    for ((i = 1; i < n; i++)); do
        for ((j = i; j > 0 && l[j] < l[j - 1]; j--)); do
            x=${l[j]} l[j]=${l[j - 1]} l[j - 1]=$x
            x=${ks[j]} ks[j]=${ks[j - 1]} ks[j - 1]=$x
            x=${ke[j]} ke[j]=${ke[j - 1]} ke[j - 1]=$x
            x=${st[j]} st[j]=${st[j - 1]} st[j - 1]=$x
        done
    done
    for ((i = 0; i < n && i < 6; i++)); do
        echo "$((i + 1)) ${ks[i]} ${ke[i]} ${st[i]} ${ki[${st[i]}]:-} ${sy[${st[i]}]:-} ${l[i]}"
    done
    for x in "${w[@]}"; do echo "W $x"; done
}

# waited_between RUN: "waitI<TAB>WORDS" for the first busy_kernel I of part
# 1 (1 to 4) that the host did not wait for before it launched the next
# (streamtrace ask's order: a host wait after the kernel, before the next
# launch call; what the program guaranteed, not how far the kernel had got
# in this run); nothing where it waited each time
waited_between() {
    local c=() qs=() i a
    mapfile -t c < <(records "$1" kernel:busy_kernel | cut -f 11 | sort -n)
    [ ${#c[@]} -ge 5 ] || return 0
    for i in 1 2 3 4; do qs+=("order kernel:busy_kernel#$i api:${c[i]}"); done
    i=0
    while IFS=$'\t' read -r a _; do
        i=$((i + 1))
        [ "$a" != guaranteed ] || continue
        printf 'wait%d\tbusy_kernel %d (%s) was launched with no wait of the host for busy_kernel %d (%s) before it (%s)\n' \
            "$i" $((i + 1)) "${P1_CASE[i + 1]}" "$i" "${P1_CASE[i]}" "$a"
        return 0
    done < <(ask "$1" "${qs[@]}")
}

# stream_words ID KIND SYNC: a stream of part 1 in words
stream_words() {
    case $2 in
        default) echo "stream 0 (the legacy default stream)" ;;
        per-thread) echo "a per-thread default stream" ;;
        "") echo "stream $1" ;;
        *) case $3 in
               "?" | - | "") echo "stream $1 ($2)" ;;
               *) echo "stream $1 ($2, $3)" ;;
           esac ;;
    esac
}

# the cases of part 1, by the number of their busy_kernel run
P1_CASE=("" "the cold launch" "the event-timed launch" "the host clock with a synchronize"
    "the host clock without one" "the late case's earlier kernel" "the late case's timed kernel")

# Each case of part 1 must find stream s idle: the host waits for one case
# before it launches the next (what the program guaranteed: a host wait
# after the kernel, before the next launch; not how far the kernel had got
# in this run), and all six kernels run on s. Else a
# case's kernel runs beside or behind another case's, and the five timings
# no longer time what they say (the late case needs exactly its one earlier
# kernel still running at t0).
@test "part 1 runs one case at a time, every kernel on stream s" {
    need_run main
    need_trace main
    draw_on_fail main --record kernel:busy_kernel 1 --record kernel:busy_kernel 6
    local facts bad
    facts=$(part1 main)
    local f n=0 st=() ki=() sy=() i
    while read -r -a f; do
        [ -n "${f[0]:-}" ] && [ "${f[0]}" != W ] || continue
        st[n]=${f[3]} ki[n]=${f[4]:-} sy[n]=${f[5]:-} n=$((n + 1))
    done <<<"$facts"
    bad=""
    if [ "$n" -lt 6 ]; then
        printf -v bad 'count\t%d busy_kernel runs in part 1, not 6' "$n"
    elif [ "${ki[0]}" != created ]; then
        bad="stream"$'\t'"busy_kernel 1 (${P1_CASE[1]}) ran on $(stream_words "${st[0]}" "${ki[0]}" "${sy[0]}")"
    else
        for ((i = 1; i < 6; i++)); do
            [ "${st[i]}" = "${st[0]}" ] && continue
            bad="stream"$'\t'"busy_kernel $((i + 1)) (${P1_CASE[i + 1]}) ran on $(stream_words "${st[i]}" "${ki[i]}" "${sy[i]}"), busy_kernel 1 on $(stream_words "${st[0]}" "${ki[0]}" "${sy[0]}")"
            break
        done
    fi
    [ -n "$bad" ] || bad=$(waited_between main)
    [ -z "$bad" ] || say_fail \
        "six busy_kernel runs on stream s, each of the first five waited for by the host before it launched the next" \
        "${bad#*$'\t'}" \
        "$(case ${bad%%$'\t'*} in
            count) echo "keep every busy(w, s) call of part_timing() as given" ;;
            stream) echo "keep the given busy(w, s) calls as they are: every case of part 1 runs on stream s, w->stream_a, or it runs beside the others" ;;
            wait1) echo "keep the given cudaEventSynchronize(stop) after the cold launch as it is" ;;
            wait2) echo "wait for the stop event after the timed launch, cudaEventSynchronize(stop) (TODO 1)" ;;
            wait3) echo "wait for stream s before t1 (TODO 2)" ;;
            wait4) echo "keep the given cudaStreamSynchronize(s) after the launch-only case as it is" ;;
           esac)$(case ${bad%%$'\t'*} in wait*) echo ": s is non-blocking, so a wait on stream 0 or on the per-thread stream does not wait for it" ;; esac)"
}

# The "late" case: busy(w, s); t0; busy(w, s); wait; t1. Nothing may wait
# between the two launches, so the earlier kernel still runs at t0 and
# host_late_ms counts its rest too; and the wait after the second holds all
# of it (a containment, as host_sync_ms's).
@test "a host clock started while an earlier kernel runs counts that kernel too" {
    need_run main
    need_trace main
    draw_on_fail main --record kernel:busy_kernel 5 --record kernel:busy_kernel 6
    local facts f l5="" l6="" d6="" waits=0 late
    facts=$(part1 main)
    while read -r -a f; do
        [ "${f[0]:-}" = 5 ] && l5=${f[6]}
        [ "${f[0]:-}" = 6 ] && l6=${f[6]} d6=$((f[2] - f[1]))
    done <<<"$facts"
    [ -n "$l6" ] || { say_fail "six busy_kernel runs in part 1" "fewer" "keep every busy(w, s) call of part_timing() as given"; return 1; }
    while read -r -a f; do
        [ "${f[0]:-}" = W ] && [ "${f[1]}" -gt "$l5" ] && [ "${f[1]}" -lt "$l6" ] && waits=$((waits + 1))
    done <<<"$facts"
    [ "$waits" = 0 ] || { say_fail \
        "no wait between launching the late case's two kernels" \
        "$waits synchronize call(s) between them" \
        "keep the given busy(w, s); t0 = lab_now_ms(); busy(w, s); as they are: the earlier kernel must still run at t0"; return 1; }
    need_figure_in late main host_late_ms || return 1
    printf -v d6 '%d.%06d' $((d6 / 1000000)) $((d6 % 1000000))
    is_true 'l >= 0.98 * k' l="$late" k="$d6" || say_fail \
        "host_late_ms at least the timed kernel's traced run, $(fmt "$d6") ms" \
        "host_late_ms = $late" \
        "keep the given cudaStreamSynchronize(s) before t1 of the late case as it is: s is non-blocking, so a wait on stream 0 or the per-thread stream does not wait for it"
}

# waited_before_polling: a wait that the host sat in while the polled kernel
# ran, before the loop began, in words; nothing if none
waited_before_polling() {
    local k0 p0
    tq_field k0 main 7 1 list kernel:busy_kernel
    tq_field p0 main 1 1 list nvtx:polling
    [ -n "$k0" ] && [ -n "$p0" ] || return 0
    local a b d f k p fl
    ns_of k "$k0"; ns_of p "$p0"
    tq_file fl main list api
    while IFS=$'\t' read -r a b d _ _ f _; do
        [[ $f == *Synchronize ]] || continue
        ns_of a "$a"; ns_of b "$b"; ns_of d "$d"
        if ((b > k && b <= p && d > 100000)); then
            printf 'the host sat in %s for %.3g ms of the kernel, before the loop began' "$f" "$((b - (a > k ? a : k)))e-6"
            return 0
        fi
    done <"$fl"
}

# The polling loop is an NVTX range "polling"; the polled kernel is the only
# kernel running then. It must cover most of the kernel, and the loop must
# have asked more than once.
@test "the CPU kept working while the kernel ran" {
    need_run main
    need_trace main
    local slices ov k7 waited
    draw_on_fail main --record kernel:busy_kernel 7 --record nvtx:polling 1
    need_figure_in slices main poll_slices || return 1
    is_true 's > 1' s="$slices" || waited=$(waited_before_polling)
    is_true 's > 1' s="$slices" || say_fail "more than 1 slice of CPU work while the event was not ready" \
        "poll_slices = $slices" \
        "${waited:+$waited: }ask cudaEventQuery(done) in the loop, without waiting first: cudaErrorNotReady means 'not yet, do a slice'"
    tq_in ov main overlap nvtx:polling kernel:busy_kernel
    ov=${ov%% *}
    k7=$(busy_ms 7)
    is_true 'k > 0 && ov >= 0.5 * k' ov="${ov:-0}" k="${k7:-0}" || waited=$(waited_before_polling)
    is_true 'k > 0 && ov >= 0.5 * k' ov="${ov:-0}" k="${k7:-0}" || say_fail \
        "the polling loop (NVTX range \"polling\") running during at least half of the polled kernel, $(fmt "${k7:-0}") ms" \
        "$(fmt "${ov:-0}") ms of it" \
        "${waited:+$waited: }no cudaEventSynchronize or cudaDeviceSynchronize before the loop: polling replaces the wait"
}

# why_unordered: what the trace shows of the consumer's wait, in words: no
# cudaStreamWaitEvent at all, or an event recorded on the consumer's own
# stream (complete at once); nothing where neither shows.
why_unordered() {
    local w="--window nvtx:dependency+gpu" c ev f n
    [ "$(tq main count api:cudaStreamWaitEvent $w)" = 0 ] && {
        echo "no cudaStreamWaitEvent was called in part 3: stream B never waited (TODO 5)"; return 0; }
    tq_field c main 1 5 list kernel:consumer_kernel $w
    tq_in ev main list event $w
    n=0
    while IFS=$'\t' read -r -a f; do
        [ ${#f[@]} -gt 0 ] && [ "${f[4]:-}" = "$c" ] && n=$((n + 1))
    done <<<"$ev"
    ev=$n
    [ -n "$c" ] && [ "$ev" -gt 0 ] &&
        echo "the event was recorded on stream $c, the consumer's own: it was complete at once, so the wait ordered nothing (record it on stream A, TODO 4)"
    return 0
}

# Judged by what the program guaranteed (streamtrace ask), not by this run's
# schedule: a consumer that happened to start after the producer ended (the
# producer was short, the GPU busy) passes only where an event orders it.
@test "the consumer is ordered after the producer" {
    need_run main
    need_trace main
    draw_on_fail main --window nvtx:dependency+gpu
    local a why
    a=$(ask main "order kernel:producer_kernel kernel:consumer_kernel")
    [[ $a == guaranteed* ]] || { why=$(why_unordered)
        say_fail "consumer_kernel ordered after producer_kernel (an event recorded on stream A after the producer, waited for by stream B)" \
        "${a/$'\t'/: }" \
        "${why:-record produced on stream A after the producer (TODO 4) and make stream B wait for it (TODO 5): an event recorded on B orders nothing}"; }
}

@test "producer and consumer run on two different created streams" {
    need_run main
    need_trace main
    local p c
    draw_on_fail main --window nvtx:dependency+gpu
    p=$(tq main streams kernel:producer_kernel | tr '\n' ' ')
    c=$(tq main streams kernel:consumer_kernel | tr '\n' ' ')
    [ -n "$p" ] && [ -n "$c" ] && [ "$p" != "$c" ] &&
        [[ $p == *created* ]] && [[ $c == *created* ]] || say_fail \
        "producer on stream A, consumer on stream B: two created streams" \
        "producer on: ${p:-none}; consumer on: ${c:-none}" \
        "launch the producer in w->stream_a and the consumer in w->stream_b"
}

# Between the producer's launch and the consumer's launch the host must not
# wait for the GPU: no cudaDeviceSynchronize / StreamSynchronize /
# EventSynchronize (sync records of type context, stream, event; the `wait`
# of cudaStreamWaitEvent is allowed), no synchronous copy, no polling query;
# and no cudaMemset: not a host wait, but on the legacy default stream it
# orders the blocking streams itself, which would hide a missing event. And the proof that nothing else waited (a sleep, a spin):
# the consumer was queued while the producer was still running.
# first_call "sync:context x1, cudaDeviceSynchronize x1": the first runtime
# call named (cudaDeviceSynchronize), else the first thing
first_call() {
    local part parts first=""
    IFS=, read -r -a parts <<<"$1"
    for part in "${parts[@]}"; do
        part=${part#"${part%%[! ]*}"}
        [[ $part =~ ^(.*)\ x[0-9]*$ ]] && part=${BASH_REMATCH[1]}
        [[ $part == cuda* ]] && { echo "$part"; return 0; }
        [ -n "$first" ] || first=$part
    done
    echo "$first"
}

@test "no host synchronization between producer and consumer" {
    need_run main
    need_trace main
    local facts found gap
    draw_on_fail main --window nvtx:dependency+gpu
    facts=$(between_launches)
    [[ $facts == ok* ]] || { say_fail \
        "producer_kernel and consumer_kernel in the trace, with their launches" \
        "${facts:-nothing}" "keep producer() and consumer()"; return 1; }
    found=$(cut -f 2 <<<"$facts") gap=$(cut -f 3 <<<"$facts")
    [ "$found" = - ] || say_fail "no host wait between the producer's launch and the consumer's" \
        "$found" \
        "$(first_call "$found") made the host wait for the producer: order the streams on the GPU instead, cudaEventRecord on A + cudaStreamWaitEvent on B, not a synchronize"
    is_true 'g < 0' g="$gap" || say_fail \
        "the consumer queued while the producer still ran" \
        "the consumer was launched $gap ms after the producer ended" \
        "the host waited for the producer somehow: queue the consumer at once, the event makes the GPU wait"
}

# part3_waits RUN: how the host ordered part 3's work on stream 0 with
# streams A and B: "MEMSETS<TAB>COPY", each "ok" or what the trace shows
# instead. The two cudaMemset calls (the poison) and the copy back run on
# the legacy default stream, which non-blocking streams do not wait for,
# nor it for them: only the host can order them, by a wait between. So
# between the last cudaMemset call and the producer's launch the host must
# wait for the device or for the memsets' stream, and between the
# consumer's launch and the copy back's call for the device or for the
# consumer's stream.
part3_waits() {
    local -A yt=() ys=() ms=() cp=()
    local f calls=() pc="" qc="" qs="" c m1 m2 mst="" after=0 w="" sel fl
    for sel in api sync memset d2h kernel; do
        tq_file fl "$1" corr "$sel"
        while IFS=$'\t' read -r -a f; do
            case ${f[3]}:${f[5]} in
                api:*) calls+=("${f[10]}") ;;
                sync:*) yt[${f[10]}]=${f[5]} ys[${f[10]}]=${f[4]} ;;
                memset:*) ms[${f[10]}]=${f[4]} ;;
                copy:*) cp[${f[10]}]=1 ;;
                kernel:producer_kernel*) [ -n "$pc" ] || pc=${f[10]} ;;
                kernel:consumer_kernel*) [ -n "$qc" ] || qc=${f[10]} qs=${f[4]} ;;
            esac
        done <"$fl"
    done
    [ -n "$pc" ] && [ -n "$qc" ] || { printf 'no producer or consumer\t-\n'; return 0; }
    # the calls in time order (as the trace lists them)
    m1="no cudaMemset before the producer" m2="no copy back after the consumer"
    for c in "${calls[@]}"; do
        [ "$c" != "$pc" ] || break
        if [ -n "${ms[$c]+x}" ]; then
            m1="no wait between the memsets and the producer's launch" mst=${ms[$c]}
        elif [ -n "${yt[$c]+x}" ] && [ -n "$mst" ]; then
            if [ "${yt[$c]}" = context ] || { [ "${yt[$c]}" = stream ] && [ "${ys[$c]}" = "$mst" ]; }; then
                m1=ok
            elif [ "$m1" != ok ]; then
                m1="only $(wait_words "$c"), not on the memsets' stream $mst"
            fi
        fi
    done
    for c in "${calls[@]}"; do
        [ "$c" != "$qc" ] || { after=1; continue; }
        [ "$after" = 1 ] || continue
        if [ -n "${cp[$c]+x}" ]; then
            if [ "$w" = ok ]; then m2=ok
            elif [ -z "$w" ]; then m2="no wait between the consumer's launch and the copy back"
            else m2=$w; fi
            break
        fi
        [ -n "${yt[$c]+x}" ] && [ "${yt[$c]}" != wait ] && [ "$w" != ok ] || continue
        if [ "${yt[$c]}" = context ] || { [ "${yt[$c]}" = stream ] && [ "${ys[$c]}" = "$qs" ]; }; then
            w=ok
        else
            w="only $(wait_words "$c"), the consumer ran on stream $qs"
        fi
    done
    printf '%s\t%s\n' "$m1" "$m2"
}

# wait_words CORR: part3_waits' sync record of call CORR, in words
wait_words() {
    case ${yt[$1]} in
        context) echo cudaDeviceSynchronize ;;
        stream) echo "cudaStreamSynchronize on stream ${ys[$1]}" ;;
        event) echo cudaEventSynchronize ;;
        *) echo "a wait (${yt[$1]})" ;;
    esac
}

# Part 3's memsets and its copy back run on stream 0; streams A and B are
# non-blocking, so the GPU does not order them with the kernels: the host
# does, with the given waits. Without one, the poison may land after the
# producer's output, or the copy back may read d_out before the consumer
# wrote it: a race a run can win.
@test "part 3 waits on the host where stream 0 meets streams A and B" {
    need_run main
    need_trace main
    draw_on_fail main --window nvtx:dependency+gpu
    local m c
    IFS=$'\t' read -r m c <<<"$(part3_waits main)"
    [ "$m" = ok ] || { say_fail \
        "a wait for the device between the poison cudaMemsets and the producer's launch" \
        "$m" \
        "keep the given cudaDeviceSynchronize() after the two cudaMemset calls: they run on stream 0, which streams A and B (non-blocking) do not wait for, so the poison could land after the producer's output"; return 1; }
    [ "$c" = ok ] || say_fail \
        "a wait for stream B (or the device) between the consumer's launch and the copy back" \
        "$c" \
        "keep the given cudaStreamSynchronize(w->stream_b) as it is: the copy back runs on stream 0, which does not wait for a non-blocking stream, so it could read d_out before the consumer wrote it"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
