#!/usr/bin/env bats
# 01-sync-copy.bats -- the checks of lab 01 (sync copy).
# Run from the lab folder with `make check`, or `make check LAB=01` at the top.
# The program runs once under the trace tool; each check reads that run.

bats_require_minimum_version 1.5.0
LAB_ID=01-sync-copy
PROG=sync_copy
# Hardware queues under the grader (lib/checks.bash, run_lab). A right
# program's trace (an H200, 2026-11-27): none shared with 1 (its work is all
# on the legacy default stream)
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
        bandwidth h2d
        bytes d2h
        count api:cudaMemcpy
        count d2h --mem PAGEABLE
        count h2d --mem PAGEABLE
        count kernel
        durations kernel
        events d2h
        events h2d
        events kernel
        list gpu
        overlap copy kernel
        streams gpu
EOF
    # and what the program guaranteed, asked of the run in one parse
    ask_ahead main <<'EOF'
        order copy:H2D#1 kernel:scramble_kernel#1
        elapsed
EOF
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace and output.
your_run() {
    your_run_ok main || return 0
    local h="" k="-" k3="" d="" launch n steps gpu f ks=() bw
    figure_in launch main launch_ms
    # the first H2D copy, the second and third kernels (the event-timed one
    # and the one timed by the host), the last D2H copy
    tq_in gpu main list gpu
    while IFS=$'\t' read -r -a f; do
        case ${f[3]:-} in
            copy) [ "${f[5]}" = H2D ] && [ -z "$h" ] && h=${f[2]}
                  [ "${f[5]}" = D2H ] && d=${f[2]} ;;
            kernel) ks+=("${f[2]}") ;;
        esac
    done <<<"$gpu"
    [ ${#ks[@]} -ge 2 ] && k=${ks[1]}
    [ ${#ks[@]} -ge 3 ] && k3=${ks[2]}
    your_fig launch_us "$(calc '1000 * l' l="$launch")" us \
        "launch_ms: the host's time for one launch alone"
    announced_in n elements
    announced_in steps steps
    is_positive "$k" || steps=""
    your_fig kernel_gsteps "$(calc 'n * s / (k * 1e6)' n="$n" s="$steps" k="$k")" G/s \
        "scramble steps a second, in billions, over the event-timed kernel's run in the trace"
    [ -n "$h" ] && [ "$k" != - ] && [ -n "$d" ] || h="" k="" d=""
    your_fig copy_share "$(pct "$(calc 'h + d' h="${h:-0}" d="${d:-0}")" \
        "$(calc 'h + k + d' h="$h" k="$k" d="$d")")" % \
        "the copies' share of H2D + timed kernel + D2H on the GPU"
    tq_in bw main bandwidth h2d
    is_positive "${bw%% *}" || bw=""
    your_fig h2d_gbps "${bw%% *}" GB/s \
        "the H2D cudaMemcpy from malloc memory, as the trace timed it"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0" {
    need_run main
    local rc
    rc_in rc main
    [ "$rc" = 0 ] || say_fail "exit status 0 (results verified)" \
        "the program $(describe_exit "$rc"): $(cat "$RUNS/main.err" <(grep '^RESULT' "$RUNS/main.out") | head -n 1)" \
        "a CUDA error names the file:line and the call; a wrong result is the next check"
}

@test "every element of the result is right" {
    check_verified main "RESULT: verified all $(elements) elements" '^RESULT' \
        "elements at the end wrong: does the grid cover all n (TODO 3)? All wrong: are the copies the right size and direction?"
}

@test "it reports the H2D, kernel and D2H times and bandwidths" {
    need_run main
    local k v ms gbps n
    for k in h2d_ms h2d_gbps kernel_ms d2h_ms d2h_gbps launch_ms launch_sync_ms; do
        need_figure_in v main "$k" || return 1
        is_true 'v > 0' v="$v" || say_fail "$k above 0" "$k = $v" \
            "a time of 0 means the events were not recorded around the work"
    done
    n=$(elements)
    for k in h2d d2h; do
        figure_in ms main ${k}_ms; figure_in gbps main ${k}_gbps
        is_true 'g > 0.05 && g < 2000 && g / (4 * n / (ms * 1e6)) > 0.98 && g / (4 * n / (ms * 1e6)) < 1.02' \
            g="$gbps" n="$n" ms="$ms" || say_fail \
            "${k}_gbps = bytes / time, between 0.05 and 2000 GB/s" \
            "${k}_gbps = $gbps for $((4 * n)) bytes in $ms ms" \
            "GB/s is bytes / (ms * 1e6)"
    done
}

# waited_for_stop RUN K FIGURE HINT: the Kth cudaEventElapsedTime of RUN
# (the one FIGURE is read with) came after a wait that followed its stop
# event's record; else say so, with HINT (the fix). cudaEventElapsedTime
# returns cudaErrorNotReady while the stop event is not complete (CUDA
# Runtime API): a program that reads the time first gets it only when the
# GPU happened to be done, as it often is right after a synchronous
# cudaMemcpy. A structure: the same in every run, so no re-run.
waited_for_stop() {
    local wait="" line
    while IFS= read -r line; do
        [ "${line%%$'\t'*}" = "$2" ] && wait=${line##*$'\t'}
    done < <(timed_pairs "$1")
    [ -z "$wait" ] || [ "$wait" = ok ] || say_fail \
        "after cudaEventRecord(stop, 0), cudaEventSynchronize(stop) before cudaEventElapsedTime reads $3" \
        "$3: $wait" \
        "$4: without it, cudaEventElapsedTime returns cudaErrorNotReady whenever the GPU has not reached stop yet; this run got its time only because the GPU happened to be done first"
}

# Each time the program prints comes from cudaEventElapsedTime between two
# events; the trace has the GPU's own stamp of every event. So each printed
# time must be the time between the events right around its work (the same
# interval, read twice), and those events must enclose that work alone.
# Another program on the GPU may stretch the interval, never split the two;
# it can come between the event's own stamp and the trace's, so these checks
# may look at up to 2 more runs (see same_gpu_time). Before that, each time
# must have been read after a wait for its stop event (waited_for_stop).
# copy_times RUN: both copies' printed times agree with their events.
copy_times() {
    check_event_time "$1" h2d 1 h2d_ms "the H2D copy" 1 \
        "record start right before the copy and stop right after it, both on stream 0, then cudaEventSynchronize(stop) and cudaEventElapsedTime" &&
    check_event_time "$1" d2h 1 d2h_ms "the D2H copy" 1 \
        "record start right before the copy and stop right after it, both on stream 0, then cudaEventSynchronize(stop) and cudaEventElapsedTime"
}

@test "the copy times are the GPU's times between the events around each copy" {
    need_run main
    need_trace main
    draw_on_fail main --timed h2d 1 --timed d2h 1
    local k fig
    for k in 1 3; do
        fig=h2d_ms
        [ "$k" = 1 ] || fig=d2h_ms
        waited_for_stop main "$k" "$fig" \
            "keep the given cudaEventSynchronize(stop) between cudaEventRecord(stop, 0) and cudaEventElapsedTime as it is" || return 1
    done
    second_chance main copy_times
}

# kernel_time RUN: the printed kernel_ms agrees with the events around it.
kernel_time() {
    check_event_time "$1" kernel 2 kernel_ms "the timed kernel (the 2nd)" 1 \
        "time the launch like the H2D copy above (TODO 4): record start, launch, record stop, cudaEventSynchronize(stop), then cudaEventElapsedTime"
}

@test "the kernel time covers the kernel's whole run" {
    need_run main
    need_trace main
    # kernel 2 of 3 is the one timed with events (1 is the warm-up)
    draw_on_fail main
    [ "$(tq main count kernel)" = 3 ] || { say_fail \
        "3 kernel runs in the trace (warm-up, timed, launch demo)" \
        "$(tq main count kernel) kernels" "keep the three scramble() calls"; return 1; }
    draw_on_fail main --timed kernel 2
    waited_for_stop main 2 kernel_ms \
        "record stop, then cudaEventSynchronize(stop), then cudaEventElapsedTime (TODO 4)" || return 1
    second_chance main kernel_time
}


@test "a launch returns before its kernel has finished" {
    need_run main
    # the third kernel is the one whose launch was timed alone
    draw_on_fail main --record kernel 3
    local l ls
    need_figure_in l main launch_ms || return 1
    need_figure_in ls main launch_sync_ms || return 1
    is_true 'l < 0.25 * ls' l="$l" ls="$ls" || say_fail \
        "launch_ms far below launch_sync_ms (under a quarter of it)" \
        "launch_ms = $l, launch_sync_ms = $ls" \
        "launch_ms must time the launch alone; the wait (cudaDeviceSynchronize) comes after t1"
    if need_trace main >/dev/null; then
        local k
        k=$(tq main durations kernel | sed -n 3p)
        is_true 'ls >= 0.8 * k' ls="$ls" k="$k" || say_fail \
            "launch_sync_ms at least the kernel's traced run, $(fmt "$k") ms" \
            "launch_sync_ms = $ls" \
            "synchronize after the launch (TODO 5), so the host waits for the kernel"
    fi
}

@test "all work ran on the default stream, one thing at a time" {
    need_run main
    need_trace main
    draw_on_fail main
    local streams ov
    tq_in streams main streams gpu
    streams=$(words_of 2 "$streams")
    [ "$streams" = "default " ] || say_fail "every copy and kernel on the default stream" \
        "streams: $streams" "$(ran_elsewhere main default | sed '/./s/$/: /')lab 01 uses no streams of its own: cudaMemcpy and <<<grid, block>>>"
    tq_in ov main overlap copy kernel
    ov=${ov%% *}
    is_true 'ov == 0' ov="$ov" || say_fail "no copy overlapping a kernel" \
        "$(fmt "$ov") ms of overlap" "the default stream runs one thing after another"
    # (what the program guaranteed: the default stream's order, not this
    # run's schedule)
    local a why
    IFS=$'\t' read -r a why <<<"$(ask main "order copy:H2D#1 kernel:scramble_kernel#1")"
    [ "$a" = guaranteed ] || say_fail \
        "the H2D copy before the first kernel, by the stream's order" "$a${why:+: $why}" \
        "copy the input in (TODO 2) before launching"
}

@test "the copies are synchronous cudaMemcpy from pageable memory" {
    need_run main
    need_trace main
    draw_on_fail main
    local pageable calls
    pageable=$(( $(tq main count h2d --mem PAGEABLE) + $(tq main count d2h --mem PAGEABLE) ))
    tq_in calls main count api:cudaMemcpy
    [ "$pageable" = 2 ] && [ "$calls" = 2 ] || say_fail \
        "2 cudaMemcpy calls, both copies from/to pageable (malloc) memory" \
        "$calls cudaMemcpy calls, $pageable pageable copies" \
        "lab 01 copies from malloc'd memory with cudaMemcpy; pinned memory is lab 03"
}

@test "all of the result is copied back to the host" {
    need_run main
    need_trace main
    draw_on_fail main
    local want got
    want=$((4 * $(elements)))
    tq_in got main bytes d2h
    [ "$got" = "$want" ] || say_fail "$want bytes copied device -> host (n * sizeof(uint32_t))" \
        "$got bytes" \
        "$([ "$got" = "$(elements)" ] && echo "the D2H copy moved n bytes, one per element: ")cudaMemcpy counts bytes, not elements"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
