#!/usr/bin/env bats
# 04-events.bats -- the checks of lab 04 (events).
# Run from the lab folder with `make check`, or `make check LAB=04` at the top.
# The program runs once under the trace tool (all three parts); each check
# reads that run: its figures, its verdict and what the GPU recorded.

bats_require_minimum_version 1.5.0
LAB_ID=04-events
PROG=events
load lib/checks

setup_file() {
    build_lab
    run_lab main --trace
    run_lab badopt -- --frobnicate
    run_lab nodev --env CUDA_VISIBLE_DEVICES= --
}

# busy_ms N: the traced duration of the Nth busy_kernel run. Part 1 launches
# them in this order on one stream: 1 cold, 2 timed with events, 3 host clock
# with a synchronize, 4 host clock without, 5-6 the "late" pair; part 2: 7.
busy_ms() { tq main durations kernel:busy_kernel | sed -n "${1}p"; }

# between_launches: what the host did between queueing producer_kernel and
# queueing consumer_kernel, from the trace file itself (trace/FORMAT.md): a
# kernel and the cudaLaunchKernel call that queued it share a correlation id
# (`kernel START END STREAM GRID BLOCK CORR NAME`, `api START END THREAD CORR
# NAME`). Prints one line: "ok", or "missing"; then the host waits found in
# between as "NAME xCOUNT" (or "-"); then how long after the producer's end the
# consumer was queued, in ms (negative: while the producer still ran).
# Times are ns near 2^61: split into seconds and ns so awk's doubles stay exact.
between_launches() {
    awk -F'\t' "$TRACE_AWK"'
        FNR == NR && $1 == "kernel" {
            if (index($(8 + d), "producer_kernel") == 1 && (pk == "" || t($2) < pk)) { pk = t($2); pe = t($3); pc = $(7 + d) }
            if (index($(8 + d), "consumer_kernel") == 1 && (ck == "" || t($2) < ck)) { ck = t($2); cc = $(7 + d) }
        }
        FNR == NR && $1 == "api" { as[$5] = t($2) }
        FNR == NR { next }
        FNR == 1 {
            if (pc == "" || cc == "" || !(pc in as) || !(cc in as)) { print "missing"; exit }
            lo = as[pc]; hi = as[cc]
        }
        ($1 == "sync" && $(5 + d) != "wait") ||
        ($1 == "api" && $6 ~ /Synchronize$|^cudaMemcpy$|^cudaMemset$|^cudaStreamQuery$|^cudaEventQuery$/) {
            if (t($2) < hi && t($3) > lo)
                n[$1 == "sync" ? "sync:" $(5 + d) : $6]++
        }
        END {
            if (lo == "") exit
            for (k in n) found = found (found == "" ? "" : ", ") k " x" n[k]
            printf "ok\t%s\t%.3f\n", found == "" ? "-" : found, (hi - pe) / 1e6
        }' "$RUNS/main.trace" "$RUNS/main.trace"
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
    gap=$( { tq main list kernel:producer_kernel | sed 's/^/P\t/'; tq main list kernel:consumer_kernel | sed 's/^/C\t/'; } |
        awk -F'\t' '$1 == "P" && pe == "" { pe = $3 } $1 == "C" && cs == "" { cs = $2 }
            END { if (pe != "" && cs != "") printf "%.6g\n", 1000 * (cs - pe) }')
    your_fig wait_gap_us "$gap" us "from the producer's end to the consumer's start, on the GPU"
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
        v=$(need_figure main "$k") || return 1
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
    ms=$(figure main event_ms)
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
    nosync=$(need_figure main host_nosync_ms) || return 1
    sync=$(need_figure main host_sync_ms) || return 1
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

# waited_before_polling: a wait that the host sat in while the polled kernel
# ran, before the loop began, in words; nothing if none
waited_before_polling() {
    local k0 p0
    k0=$(tq main list kernel:busy_kernel | awk -F'\t' 'NR == 7 { print $1 }')
    p0=$(tq main list nvtx:polling | awk -F'\t' 'NR == 1 { print $1 }')
    [ -n "$k0" ] && [ -n "$p0" ] || return 0
    tq main list api | awk -F'\t' -v k="$k0" -v p="$p0" '
        $6 ~ /Synchronize$/ && $2 + 0 > k + 0 && $2 + 0 <= p + 0 && $3 > 0.1 {
            printf "the host sat in %s for %.3g ms of the kernel, before the loop began", $6, $2 - ($1 > k ? $1 : k); exit }'
}

# The polling loop is an NVTX range "polling"; the polled kernel is the only
# kernel running then. It must cover most of the kernel, and the loop must
# have asked more than once.
@test "the CPU kept working while the kernel ran" {
    need_run main
    need_trace main
    local slices ov k7 waited
    draw_on_fail main --record kernel:busy_kernel 7 --record nvtx:polling 1
    slices=$(need_figure main poll_slices) || return 1
    is_true 's > 1' s="$slices" || waited=$(waited_before_polling)
    is_true 's > 1' s="$slices" || say_fail "more than 1 slice of CPU work while the event was not ready" \
        "poll_slices = $slices" \
        "${waited:+$waited: }ask cudaEventQuery(done) in the loop, without waiting first: cudaErrorNotReady means 'not yet, do a slice'"
    ov=$(tq main overlap nvtx:polling kernel:busy_kernel | awk '{ print $1 }')
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
    local w="--window nvtx:dependency+gpu" c ev
    [ "$(tq main count api:cudaStreamWaitEvent $w)" = 0 ] && {
        echo "no cudaStreamWaitEvent was called in part 3: stream B never waited (TODO 5)"; return 0; }
    c=$(tq main list kernel:consumer_kernel $w | awk -F'\t' 'NR == 1 { print $5 }')
    ev=$(tq main list event $w | awk -F'\t' -v c="$c" '$5 == c { n++ } END { print n + 0 }')
    [ -n "$c" ] && [ "$ev" -gt 0 ] &&
        echo "the event was recorded on stream $c, the consumer's own: it was complete at once, so the wait ordered nothing (record it on stream A, TODO 4)"
    return 0
}

@test "the consumer starts only after the producer has finished" {
    need_run main
    need_trace main
    draw_on_fail main --window nvtx:dependency+gpu
    local order why
    order=$(tq main order kernel:producer_kernel kernel:consumer_kernel)
    [ "$order" = before ] || { why=$(why_unordered)
        say_fail "producer_kernel ends before consumer_kernel starts" \
        "$order" \
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
    tr ',' '\n' <<<"$1" | sed 's/^ *//; s/ x[0-9]*$//' |
        awk '/^cuda/ { print; found = 1; exit } NR == 1 { first = $0 } END { if (!found) print first }'
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

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
