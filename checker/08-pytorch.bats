#!/usr/bin/env bats
# 08-pytorch.bats -- the checks of lab 08 (the same lessons from PyTorch).
# Run from the lab folder with `make check`, or `make check LAB=08` at the top.
# The program (streams.py, run by the launcher ./streams with a python3 that
# has torch) runs once under the trace tool; each check reads that run.
#
# Every part runs inside NVTX ranges (torch.cuda.nvtx): "pageable_copy" and
# "pinned_copy" (part 1, each around one .to() call and its clock),
# "side_stream" with one "batch" per batch (part 2), and "sync_before",
# "sync_after", "sync_neither", "sync_both", "events" (part 3, each around
# the clock it names). The GPU work a range queued is found by correlation
# id: a kernel, copy or event and the runtime call that queued it share one
# (trace/FORMAT.md), so a check judges exactly what the code in the range
# did, however late the GPU ran it.

bats_require_minimum_version 1.5.0
LAB_ID=08-pytorch
PROG=streams
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
        corr api --window nvtx:side_stream#1 --whole
        corr copy
        corr event
        corr kernel
        corr memset
        corr nvtx
        corr nvtx:batch
        corr nvtx:events
        corr nvtx:pageable_copy
        corr nvtx:pinned_copy
        corr nvtx:side_stream
        corr nvtx:sync_after
        corr nvtx:sync_before
        corr nvtx:sync_both
        corr nvtx:sync_neither
        corr sync
        count nvtx:batch
        list api --window nvtx:pageable_copy
        count api:cudaLaunchKernel --window nvtx:sync_both
        count nvtx:sync_both
        overlap h2d kernel --window nvtx:side_stream+gpu
        queued
        streams gpu
EOF
    # and what the program guaranteed, asked of the run in one parse
    ask_ahead main <<'EOF'
        idle nvtx:pageable_copy#1
        idle nvtx:pinned_copy#1
        idle nvtx:side_stream#1
        idle nvtx:sync_before#1
        idle nvtx:sync_neither#1
        idle nvtx:events#1
        idle nvtx:sync_both#1
        done nvtx:sync_both#1
        elapsed
        timings
EOF
}

# queued RANGE [K]: what the code in the Kth NVTX range RANGE (default the
# first) of run QUEUED_RUN (default main) did, from the trace's records
# with the call that queued each (records), times in ms from the trace's
# first record:
#   R  START END                 the range
#   A  FIRST_START LAST_END N    the runtime calls made in it (N of them)
#   K  START END STREAM CORR          each kernel they queued
#   C  START END DIR MEM STREAM CORR  each copy they queued
#   E  TIME STREAM               each CUDA event they recorded
#   P  END SINCE                 each GPU record queued before the range that
#                                ended after it began (work still running):
#                                its end, and how long after the range began
# Nothing when there is no such range. Every range of the run is answered in
# one parse (streamtrace query queued) and kept: a check reads its lines
# with bash alone.
queued() {
    local run=${QUEUED_RUN:-main} p="$1"$'\t'"${2:-1}"$'\t' line lines=()
    tq_lines lines "$run" queued
    for line in "${lines[@]}"; do
        [[ $line == "$p"* ]] && printf '%s\n' "${line#"$p"}"
    done
    return 0
}

# stream_kind ID [RUN]: "KIND SYNC" of the stream ID, as the trace of RUN
# (default main) declares it
stream_kind() {
    local all id kind sync
    tq_in all "${2:-main}" streams gpu
    while read -r id kind _ sync _; do
        [ "$id" = "$1" ] && echo "$kind $sync"
    done <<<"$all"
    return 0
}

# first_of TYPE FIELD: the FIELDth field (1 the first) of the first line of
# type TYPE (the first field) of queued's lines on stdin; nothing if none
first_of() {
    local f
    while IFS=$'\t' read -r -a f; do
        [ "${f[0]:-}" = "$1" ] && { echo "${f[$2 - 1]:-}"; return 0; }
    done
    return 0
}

# side_copies FIELD: that field (queued's C line: 5 MEM, 6 STREAM, 7 CORR)
# of each H2D copy part 2 of main queued (the range "side_stream"), a line
# each, in queued's order
side_copies() {
    local f
    while IFS=$'\t' read -r -a f; do
        [ "${f[0]}" = C ] && [ "${f[3]}" = H2D ] && echo "${f[$1 - 1]}"
    done < <(queued side_stream)
    return 0
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace and output.
your_run() {
    your_run_ok main || return 0
    local k ov
    your_fig pageable_call_ms "$(figure main pageable_call_ms)" ms \
        "the .to(non_blocking=True) call from pageable memory kept the host"
    k=$(queued sync_neither | first_of K 2)
    [ -z "$k" ] || k=$(calc 'e - s' s="$k" e="$(queued sync_neither | first_of K 3)")
    your_fig nosync_pct "$(pct "$(figure main sync_neither_ms)" "$k")" % \
        "sync_neither_ms against the traced run of the kernel it meant to time"
    tq_in ov main overlap h2d kernel --window nvtx:side_stream+gpu
    read -r _ ov _ <<<"$ov"
    your_fig overlap_pct "$(calc '100 * f' f="${ov:-0}")" % \
        "of part 2's H2D copy time, the share alongside a kernel"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0" {
    check_exits_ok main \
        "a wrong result is the next check; an error in part 3 (\"not ready\") comes from elapsed_time() read before the stop event was reached on the GPU: stop.synchronize() first (TODO 7)"
}

@test "every copy and every batch is right" {
    check_verified main "RESULT: verified every copy and batch of every part that was run" WRONG \
        "a batch read before its copy ended (TODO 4), or its memory handed to the next copy while its kernels still read it: cur.record_stream(torch.cuda.current_stream()) (TODO 5)"
}

@test "it prints the part 1 and part 3 times" {
    need_run main
    local k v
    for k in pageable_call_ms pinned_call_ms sync_before_ms sync_after_ms sync_neither_ms sync_both_ms event_ms; do
        need_figure_in v main "$k" || return 1
        is_true 'v > 0' v="$v" || say_fail "$k above 0" "$k = $v" "keep the figure() lines as given"
    done
}

# copy_in RANGE: "START END DIR MEM STREAM CALL_END" of the copy the range
# queued and of its runtime call's end (the call that lasted longest)
copy_in() {
    local t x y z w v c="" a1=""
    while IFS=$'\t' read -r t x y z w v _; do
        case $t in
            A) a1=$y ;;
            C) [ -n "$c" ] || c=$x$'\t'$y$'\t'$z$'\t'$w$'\t'$v ;;
        esac
    done < <(queued "$1")
    [ -z "$c" ] || printf '%s\t%s\n' "$c" "$a1"
}

@test "the copy from pageable memory comes from PAGEABLE memory" {
    need_run main
    need_trace main
    local c0 c1 dir mem s a1
    draw_on_fail main --window nvtx:pageable_copy+gpu
    read -r c0 c1 dir mem s a1 <<<"$(copy_in pageable_copy)"
    [ "$dir" = H2D ] && [ "$mem" = PAGEABLE ] || say_fail \
        "one H2D copy from PAGEABLE memory queued in the range \"pageable_copy\"" \
        "${dir:-no copy} ${mem:-}" "keep part 1's pageable copy as given: pageable = src.cpu()"
    # CUDA says only that such a call *might* be synchronous: a note, no verdict
    is_true 'a1 > (c0 + c1) / 2' a1="$a1" c0="$c0" c1="$c1" ||
        note "this driver returned from the pageable call before half of its $(fmt "$(calc 'b - a' a="${c0:-0}" b="${c1:-0}")") ms copy: CUDA allows that"
}

@test "the copy from pinned memory comes from PINNED memory" {
    need_run main
    need_trace main
    local c0 c1 dir mem s a1
    draw_on_fail main --window nvtx:pinned_copy+gpu
    read -r c0 c1 dir mem s a1 <<<"$(copy_in pinned_copy)"
    [ "$dir" = H2D ] && [ "$mem" = PINNED ] || say_fail \
        "one H2D copy from PINNED memory queued in the range \"pinned_copy\"" \
        "${dir:-no copy} ${mem:-}" \
        "$([ "$mem" = PAGEABLE ] && echo "the copy read pageable memory: ")pinned = pageable.pin_memory() makes a page-locked copy (TODO 1)"
}

@test "the .to() from pinned memory returns before its copy is half done" {
    need_run main
    need_trace main
    local c0 c1 dir mem s a1
    draw_on_fail main --window nvtx:pinned_copy+gpu
    read -r c0 c1 dir mem s a1 <<<"$(copy_in pinned_copy)"
    [ -n "$c0" ] && [ -n "$a1" ] || { say_fail "an H2D copy and its call in the range \"pinned_copy\"" \
        "none" "keep part 1's range as given; the copy goes in it (TODO 2)"; return 1; }
    is_true 'a1 < (c0 + c1) / 2' a1="$a1" c0="$c0" c1="$c1" || say_fail \
        "the call back before its copy was half done" \
        "the last call in the range returned $(fmt "$(calc 'a - c' a="${a1:-0}" c="${c0:-0}")") ms into the $(fmt "$(calc 'b - a' a="${c0:-0}" b="${c1:-0}")") ms copy" \
        "non_blocking=True lets .to() return at once from pinned memory; without it the call waits for the copy (TODO 2)"
}

# Each printed host time FIGURE lies between the traced runtime calls made in
# its range (from the first's start to the last's end) and the range itself,
# which holds the clock: the same interval measured from inside and from
# outside, within 0.5% + 0.01 ms.
@test "each printed host time is the interval it was measured in" {
    need_run main
    need_trace main
    local r fig p a n d t x y z
    for r in pageable_copy pinned_copy sync_before sync_after sync_neither sync_both; do
        fig=${r/_copy/_call}_ms
        draw_on_fail main --window "nvtx:$r"
        need_figure_in p main "$fig" || return 1
        a=0 n=0 d=""
        while IFS=$'\t' read -r t x y z _; do
            case $t in
                R) ns_of x "$x"; ns_of y "$y"; printf -v d '%.6f' "$((y - x))e-6" ;;
                A) ns_of x "$x"; ns_of y "$y"; printf -v a '%.6f' "$((y - x))e-6"; n=$z ;;
            esac
        done < <(queued "$r")
        [ -n "$d" ] || { say_fail "an NVTX range \"$r\"" "none" "keep part 1 and part 3's ranges as given"; return 1; }
        is_true 'p >= a - (0.005 * a + 0.01) && p <= d + 0.005 * d + 0.01' p="$p" a="$a" d="$d" || { say_fail \
            "$fig between the calls it timed, $(fmt "$a") ms ($n runtime calls), and its range, $(fmt "$d") ms" \
            "$fig = $p" \
            "t0 = time.perf_counter() right before the work, t1 right after the last call it waits for (a synchronize goes before t1), in milliseconds: 1e3 * (t1 - t0)"; return 1; }
    done
}

@test "part 2 copies the next batch from pinned memory" {
    need_run main
    need_trace main
    local kinds n k
    draw_on_fail main --window nvtx:side_stream+gpu
    kinds=""
    while read -r n k; do kinds+="${kinds:+, }$n $k"; done < <(side_copies 5 | sort | uniq -c)
    [ -n "$kinds" ] && [[ $kinds != *PAGEABLE* ]] && [[ $kinds == *PINNED* ]] || say_fail \
        "every H2D copy of part 2 from PINNED memory" "${kinds:-no H2D copy}" \
        "hosts = [s.cpu().pin_memory() ...] as given: from pageable memory the call waits for its copy, and nothing overlaps"
}

@test "part 2 copies on a side stream that does not wait for the current one" {
    need_run main
    need_trace main
    local ids id seen="" bad=0 k
    draw_on_fail main --window nvtx:side_stream+gpu
    ids=$(side_copies 6 | sort -u)
    for id in $ids; do
        k=$(stream_kind "$id")
        seen+="${seen:+, }stream $id: ${k:-unknown}"
        [ "$k" = "created non-blocking" ] || bad=1
    done
    [ -n "$ids" ] && [ "$bad" = 0 ] || say_fail \
        "the H2D copies on a torch.cuda.Stream() (created non-blocking)" "${seen:-no H2D copy}" \
        "$([[ $seen == *default* ]] && echo "the copies ran on the legacy default stream, torch's current stream: ")queue them inside with torch.cuda.stream(side): (TODO 3)"
}

# part2_copies RUN: each H2D copy that part 2 of run RUN queued (its
# cudaMemcpyAsync made in the first range "side_stream", on that range's
# thread), in the order of their calls, one line of TAB-separated fields;
# times in ms from the trace's first record, as streamtrace and the drawings
# give them; "-" where there is none:
#    1 BATCH     the range "batch" its call was made in (0 for the first);
#                -1: before the loop (that copy carries batch 0)
#    2 C0  3 C1  the copy's start and end    4 STREAM
#    5 WAIT      the first call after the copy's, before the thread's next
#                call that queued GPU work (a kernel, copy, memset, event or
#                stream wait), that waits for the GPU (its name ends in
#                Synchronize) and ended after the copy did:
#                NAME@START@END@STREAM (the stream of its sync record)
#    6 BWAIT     the same, before the first kernel launch after the copy's
#                call in its range "batch" (else before it): before the host
#                queued the batch's kernels
# Made once a run (part2_walk) and kept beside its trace.
part2_copies() {
    local file
    kept_file file "$RUNS/$1.trace.part2" "$RUNS/$1.trace" run_kept "$RUNS/$1.trace" part2 part2_walk "$1"
    put "$file"
}

# part2_walk RUN: part2_copies' lines, from the trace's records with the
# call that queued each (records; each answer is in start order, and one
# thread's calls are in the order it made them). Of the calls, those that
# queued GPU work or waited for it (a kernel launch, a copy, a wait) are
# all the lines need. Times in ns.
part2_walk() {
    local run=$1 file f sel o="" x y r0="" r1="" th="" n=0 nb=0 q b j nx l w bw tn tl c0 c1
    local bs=() be=() A=() As=() Ae=() An=() K0=() cc=()
    local -A gpu=() ks=() cs=() ce=() cst=() cdir=() sst=()
    for sel in nvtx kernel copy memset event sync api; do
        tq_file file "$run" corr "$sel"
        { IFS=$'\t' read -r -a f && ns_of x "${f[0]}" && { [ -n "$o" ] && ((x >= o)) || o=$x; }; } <"$file"
        # (of the calls, those in the range: a few thousand, not all)
        [ "$sel" != api ] || tq_file file "$run" corr api --window nvtx:side_stream#1 --whole
        case $sel in
        nvtx)   # the first range "side_stream", then its thread's ranges "batch" in it
            while IFS=$'\t' read -r -a f; do
                [ "${f[5]:-}" = side_stream ] || continue
                ns_of r0 "${f[0]}"; ns_of r1 "${f[1]}"; th=${f[9]:-}
                break
            done <"$file"
            [ -n "$r0" ] || return 0
            while IFS=$'\t' read -r -a f; do
                [ "${f[5]:-}" = batch ] && [ "${f[9]:-}" = "$th" ] || continue
                ns_of x "${f[0]}"
                ((x >= r0 && x <= r1)) || continue
                ns_of y "${f[1]}"
                bs[nb]=$x be[nb]=$y nb=$((nb + 1))
            done <"$file" ;;
        api)    # the calls of that thread in that range that queued GPU work or waited
            while IFS=$'\t' read -r -a f; do
                [ "${f[9]:-}" = "$th" ] && { [ -n "${gpu[${f[10]}]+x}" ] || [[ ${f[5]} == *Synchronize ]]; } || continue
                ns_of x "${f[0]}"
                ((x >= r0)) || continue
                ((x <= r1)) || break
                ns_of y "${f[1]}"
                A[n]=${f[10]} As[n]=$x Ae[n]=$y An[n]=${f[5]} n=$((n + 1))
            done <"$file" ;;
        kernel) while IFS=$'\t' read -r -a f; do ks[${f[10]}]=1 gpu[${f[10]}]=1; done <"$file" ;;
        copy)
            while IFS=$'\t' read -r -a f; do
                ns_of x "${f[0]}"; ns_of y "${f[1]}"
                cs[${f[10]}]=$x ce[${f[10]}]=$y cst[${f[10]}]=${f[4]} cdir[${f[10]}]=${f[5]} gpu[${f[10]}]=1
            done <"$file" ;;
        memset | event) while IFS=$'\t' read -r -a f; do gpu[${f[10]}]=1; done <"$file" ;;
        sync)
            while IFS=$'\t' read -r -a f; do
                sst[${f[10]}]=${f[4]}
                [ "${f[5]}" != wait ] || gpu[${f[10]}]=1
            done <"$file" ;;
        esac
    done
    # each batch's first kernel launch; the H2D copies' calls
    for ((j = 0; j < n; j++)); do
        if [ -n "${ks[${A[j]}]+x}" ]; then
            p2_batch b "${As[j]}"
            ((b < 0)) || [ -n "${K0[b]:-}" ] || K0[b]=$j
        fi
        [ "${cdir[${A[j]}]:-}" != H2D ] || cc+=("$j")
    done
    for q in "${cc[@]}"; do
        p2_batch b "${As[q]}"
        nx="" l=""
        for ((j = q + 1; j < n; j++)); do
            ((As[j] > As[q])) || continue
            [ -n "$nx" ] || [ -z "${gpu[${A[j]}]+x}" ] || nx=$j
            if [ -z "$l" ] && ((b >= 0)) && [ -n "${ks[${A[j]}]+x}" ]; then
                p2_batch x "${As[j]}"
                [ "$x" != "$b" ] || l=$j
            fi
            [ -z "$nx" ] || [ -z "$l" ] || ((b < 0)) || break
            [ -z "$nx" ] || ((b >= 0)) || break
        done
        ((b < 0)) || [ -n "$l" ] || l=${K0[b]:-}
        tn=$r1 tl=$r1
        [ -z "$nx" ] || tn=${As[nx]}
        [ -z "$l" ] || tl=${As[l]}
        w="" bw=""
        for ((j = q + 1; j < n; j++)); do
            ((As[j] < tn || As[j] < tl)) || break
            ((As[j] > As[q])) && [[ ${An[j]} == *Synchronize ]] && ((Ae[j] >= ce[${A[q]}])) || continue
            [ -n "$w" ] || ((As[j] >= tn)) || w=$j
            [ -n "$bw" ] || ((As[j] >= tl)) || bw=$j
        done
        p2_ms c0 "${cs[${A[q]}]}"; p2_ms c1 "${ce[${A[q]}]}"
        p2_wait w "$w"; p2_wait bw "$bw"
        printf '%d\t%s\t%s\t%s\t%s\t%s\n' "$b" "$c0" "$c1" "${cst[${A[q]}]}" "$w" "$bw"
    done
    return 0
}

# p2_batch VAR NS: VAR = the batch whose range holds NS (0 the first), -1
# for none (part2_walk's bs, be)
p2_batch() {
    local -n _pb_v=$1
    local _pb_i
    for ((_pb_i = 0; _pb_i < nb; _pb_i++)); do
        ((${2} >= bs[_pb_i] && ${2} <= be[_pb_i])) && { _pb_v=$_pb_i; return 0; }
    done
    _pb_v=-1
}

# p2_ms VAR NS: VAR = NS (from the trace's first record) in ms from part2_walk's o
p2_ms() { printf -v "$1" '%d.%06d' $((($2 - o) / 1000000)) $((($2 - o) % 1000000)); }

# p2_wait VAR J: VAR = part2_walk's call J as NAME@START@END@STREAM, "-" for none
p2_wait() {
    local -n _pw_v=$1
    local _pw_s _pw_e
    [ -n "$2" ] || { _pw_v=-; return 0; }
    p2_ms _pw_s "${As[$2]}"; p2_ms _pw_e "${Ae[$2]}"
    _pw_v="${An[$2]}@$_pw_s@$_pw_e@${sst[${A[$2]}]:--}"
}

# wait_hint WAIT STREAM: the hint for a host that waited for a side-stream
# copy, from the wait the trace shows (WAIT: NAME@START@END@STREAM) and the
# copy's STREAM
wait_hint() {
    local name st
    IFS=@ read -r name _ _ st <<<"$1"
    case $name in
        cudaStreamSynchronize)
            [ "$st" = "$2" ] && echo -n "right after the copy the host waited for the side stream (cudaStreamSynchronize) until the copy was done: .to() without non_blocking=True waits that way, and so does side.synchronize(); " ||
                echo -n "the host waited for a stream (cudaStreamSynchronize) until the copy was done; " ;;
        cudaDeviceSynchronize) echo -n "torch.cuda.synchronize() after the copy waited for it (it waits for every stream); " ;;
        cudaEventSynchronize) echo -n "an event's synchronize() after the copy waited for it; " ;;
        *) echo -n "the host waited for the GPU ($name) until the copy was done; " ;;
    esac
    echo "prefetch() queues the copy and returns at once: host.to(DEVICE, non_blocking=True) inside with torch.cuda.stream(side):, and no wait (TODO 3)"
}

# The host's .to() has no record of its own in the trace: its calls do. It
# returned before its copy ended unless one of the calls it made after the
# copy's cudaMemcpyAsync, before the host queued more GPU work, waited for
# the GPU until past the copy's end (a .to() without non_blocking=True
# calls cudaStreamSynchronize after the copy; so does side.synchronize()).
# A structure: a busy machine can hold the host back, not make it wait in a
# synchronize; a correct run has no synchronize in part 2.
@test "each side-stream .to() returns before its copy ends" {
    need_run main
    need_trace main
    local lines bad="" first="" b c0 c1 st w name until
    draw_on_fail main --window nvtx:side_stream+gpu
    lines=$(part2_copies main)
    [ -n "$lines" ] || { say_fail "H2D copies queued in the range \"side_stream\"" "none" \
        "keep part 2 as given; prefetch() queues the next batch's copy (TODO 3)"; return 1; }
    while IFS=$'\t' read -r b c0 c1 st w _; do
        [ "$w" != - ] || continue
        IFS=@ read -r name _ until _ <<<"$w"
        bad+="${bad:+; }$(LC_NUMERIC=C printf "batch %d's copy %.2f-%.2f ms, the host in %s until %.2f ms" $((b + 1)) "$c0" "$c1" "$name" "$until")"
        [ -n "$first" ] || first=$w$'\t'$st
    done <<<"$lines"
    [ -z "$bad" ] || say_fail \
        "every copy of part 2 still running when its .to() returned: no wait for the GPU after the copy's call that lasted past the copy's end" \
        "$bad" "$(wait_hint "${first%%$'\t'*}" "${first##*$'\t'}")"
}

# next_copies RUN: for each range "batch" of RUN that queued a copy (of the
# next batch), "B COPY KERNEL" a line (TAB-separated): B the batch (0 the
# first), COPY the correlation id of that H2D copy, KERNEL the batch's first
# kernel's ("-" where its range queued none), as streamtrace ask takes them
next_copies() {
    local n b f c k
    tq_in n "$1" count nvtx:batch
    for ((b = 1; b <= n; b++)); do
        c="" k=""
        while IFS=$'\t' read -r -a f; do
            [ "${f[0]}" = C ] && [ "${f[3]}" = H2D ] && [ -z "$c" ] && c=${f[6]}
            [ "${f[0]}" = K ] && [ -z "$k" ] && k=${f[4]}
        done < <(QUEUED_RUN=$1 queued batch "$b")
        [ -z "$c" ] || printf '%d\t%s\t%s\n' $((b - 1)) "$c" "${k:--}"
    done
}

# next_copy_hint DIR CHAIN: the hint for a copy of the next batch and the
# batch's kernels that the program ordered (DIR 1: the kernels after the
# copy; 2: the copy after the kernels, as apart numbers them), from the
# CHAIN that orders them
next_copy_hint() {
    local k f w=""
    case $2 in
        *"an event wait"*)
            [ "$1" = 1 ] &&
                echo "torch.cuda.current_stream().wait_stream(side) queued after the next batch's copy makes the batch wait for that copy too: wait first, then prefetch() (TODO 4)" ||
                echo "the side stream was made to wait for the current one (a wait_stream or an event) before the copy: prefetch() only queues the copy, with no wait (TODO 3)" ;;
        *"a host wait"*|*"a synchronous copy"*)
            while IFS=$'\t' read -r -a f; do
                [ "${f[0]}" -ge 0 ] && [ "${f[5]}" != - ] && { w=${f[5]}$'\t'${f[3]}; break; }
            done < <(part2_copies main)
            echo "the batch's kernels were queued only once its copy was done, so they could not run beside it; $(wait_hint "${w%%$'\t'*}" "${w##*$'\t'}")" ;;
        *)
            k=$(stream_kind "$(side_copies 6 | head -n 1)")
            [ "${k%% *}" = default ] &&
                echo "the copy ran on the legacy default stream, torch's current one, behind the kernels: queue it inside with torch.cuda.stream(side): (TODO 3)" ||
                echo "the kernels ran on the side stream, behind the copy: only prefetch()'s .to() goes inside with torch.cuda.stream(side): (TODO 3), the kernels stay on the current stream" ;;
    esac
}

# What the program guaranteed: no copy of the next batch is ordered after
# the current batch's kernels, nor they after it (streamtrace ask, both
# ways: the same in every run). A GPU full of other programs' work may still
# run them one after the other; they were free to run at once, and the
# check passes (a note says when no copy ran beside a kernel). An order
# between them fails every run, the chain named: one stream for both, a
# wait_stream queued after the copy, a host that waited for the copy.
@test "a copy of the next batch may run beside the batch's kernels: nothing orders either after the other" {
    need_run main
    need_trace main
    local pairs b c k a dir why bad="" hint="" ov
    draw_on_fail main --window nvtx:side_stream+gpu
    pairs=$(next_copies main)
    [ -n "$pairs" ] || { say_fail "a copy of the next batch queued in each range \"batch\" but the last" "none" \
        "keep part 2's loop as given; prefetch() queues the next batch's copy (TODO 3)"; return 1; }
    while IFS=$'\t' read -r b c k; do
        if [ "$k" = - ]; then
            bad+="${bad:+; }batch $b: no kernel queued in its range"
            hint=${hint:-"keep part 2's loop as given: scramble() queues the batch's kernels"}
            continue
        fi
        IFS=$'\t' read -r a dir why <<<"$(apart main "copy:$c" "kernel:$k")"
        case $a in
            free) ;;
            ordered)
                [ "$dir" = 1 ] && bad+="${bad:+; }batch $b: its kernels are ordered after the next batch's copy: $why" ||
                    bad+="${bad:+; }batch $b: the next batch's copy is ordered after its kernels: $why"
                hint=${hint:-$(next_copy_hint "$dir" "$why")} ;;
            *) bad+="${bad:+; }batch $b: unknown: $dir"
               hint=${hint:-"the trace cannot tell what orders them: run the check again"} ;;
        esac
    done <<<"$pairs"
    [ -z "$bad" ] || { say_fail \
        "in each batch, the copy of the next batch and the batch's kernels, neither ordered after the other: free to run at the same time" \
        "$bad" "$hint"; return 1; }
    tq_in ov main overlap h2d kernel --window nvtx:side_stream+gpu
    read -r ov _ <<<"$ov"
    is_true 'f > 0' f="${ov:-0}" ||
        note "in this run no copy ran beside a kernel, though nothing ordered them (another program on the GPU?)"
}

# batch_questions: for batch b, whether its first kernel (the first queued
# in its range "batch", the b-th) is ordered after its H2D copy (the b-th
# queued in "side_stream"): one `order` question a batch, for ask
batch_questions() {
    local b n c k
    tq_in n main count nvtx:batch
    c=$(side_copies 7)
    for ((b = 1; b <= n; b++)); do
        k=$(queued batch "$b" | first_of K 5)
        echo "order copy:$(sed -n "${b}p" <<<"$c") kernel:${k:-0}"
    done
}

# Judged by what the program guaranteed, not by what this run's GPU did: a
# batch's kernels that happen to start after its copy (the GPU was busy, the
# copy was quick) pass only where a wait orders them after it.
@test "each batch's kernels are ordered after its copy" {
    need_run main
    need_trace main
    local q bad b v c
    draw_on_fail main --window nvtx:side_stream+gpu
    q=$(batch_questions)
    [ -n "$q" ] || { say_fail "NVTX ranges \"batch\"" "none" "keep part 2's loop as given"; return 1; }
    bad=""
    while IFS=$'\t' read -r b v _ c _; do
        [ "$v" = none ] && v="no kernel or no copy" || v="$v ($c)"
        bad+="${bad:+; }$b: $v"
    done < <(paste <(printf '%s\n' "$q") <(seq 0 $(($(wc -l <<<"$q") - 1)) | sed 's/^/batch /') | unguaranteed main)
    [ -z "$bad" ] || say_fail \
        "every batch's first kernel ordered after its H2D copy (a wait of the current stream for the side stream, queued before the batch is used)" \
        "$bad" \
        "the side stream is non-blocking: the current stream must wait for it, torch.cuda.current_stream().wait_stream(side), before the batch is used (TODO 4)"
}

# The clock stops after the kernel only where the host waited for it: a
# launch returns at once. Judged on what the program guaranteed (streamtrace
# ask's `done`: the work queued in the range waited for by the host before
# the range ended), not on whether this run's kernel happened to be done.
@test "a synchronize after the launch makes the clock cover the kernel" {
    need_run main
    need_trace main
    local $SETTLED_FIELDS
    draw_on_fail main --window nvtx:sync_both+gpu
    [ "$(tq main count api:cudaLaunchKernel --window nvtx:sync_both)" -gt 0 ] || {
        say_fail "x.normal_() queued in the range \"sync_both\"" "no kernel launch" "keep part 3's fourth case as given"; return 1; }
    IFS=$'\t' read -r $SETTLED_FIELDS <<<"$(ask main "done nvtx:sync_both#1")"
    case $answer in
        done) return 0 ;;
        not-done) say_fail \
            "the kernel waited for (torch.cuda.synchronize()) before the clock stopped, in the range \"sync_both\"" \
            "$(printf 'no wait covered its kernel (stream %s, queued at %.3f ms) by the end of the range, %.3f ms; it %s' \
                "$st" "$queued_ms" "$ms" "$(ran_on "$ended_ms" "$ms")")" \
            "a launch is asynchronous, it returns before its kernel is done: torch.cuda.synchronize() after x.normal_() and before t1 (TODO 6)" ;;
        *) say_fail "the kernel waited for before the range \"sync_both\" ended" "$answer: $range" \
            "keep part 3's fourth case as given" ;;
    esac
}

# The clock starts with the GPU idle only where the host waited for what
# the case before queued (streamtrace ask's `idle`: the work queued before
# the range waited for when it began), whether or not that kernel happened
# to be done.
@test "the clock of the synchronized case starts with the GPU idle" {
    need_run main
    need_trace main
    local r seen
    draw_on_fail main --window nvtx:sync_neither+gpu --window nvtx:sync_both
    [ "$(tq main count nvtx:sync_both)" -gt 0 ] || {
        say_fail "the range \"sync_both\"" "none" "keep part 3's cases as given"; return 1; }
    IFS=$'\t' read -r r seen < <(idle_at main sync_both) || true
    [ -z "$r" ] || say_fail \
        "no GPU work queued before the range \"sync_both\" left unwaited: a torch.cuda.synchronize() after the third case, before the range" \
        "$seen" \
        "the kernel of the case before it may still run: torch.cuda.synchronize() before the range, before t0 (TODO 6)"
}

# record_stream(s) marks a tensor as used by stream s: when it is freed, the
# caching allocator records an event on s and hands its memory out again only
# once that event is reached (PyTorch docs, Tensor.record_stream). Batch b's
# tensor is freed in batch b + 1's range (cur = nxt): an event recorded there
# on the stream of the kernels is its mark. Without it, the memory may go to
# the copy after next while the kernels still read it: wrong only when the
# timing is unlucky; the mark is there, or not, every time.
@test "each batch's memory goes back to the allocator only after the current stream's use of it" {
    need_run main
    need_trace main
    local b n ks miss=""
    draw_on_fail main --window nvtx:side_stream+gpu
    tq_in n main count nvtx:batch
    [ "$n" -ge 2 ] || { say_fail "two or more NVTX ranges \"batch\"" "$n" "keep part 2's loop as given"; return 1; }
    for ((b = 2; b <= n; b++)); do
        ks=$(queued batch "$b" | first_of K 4)
        grep -qx "E"$'\t'"[^\t]*"$'\t'"$ks" < <(queued batch "$b") ||
            miss+="${miss:+, }$((b - 2))"
    done
    [ -z "$miss" ] || say_fail \
        "when a batch's tensor is freed (in the next batch), an event recorded on the stream of its kernels: the allocator's mark of record_stream" \
        "none for batch $miss" \
        "the tensor was copied in on the side stream, so the allocator knows only that stream: cur.record_stream(torch.cuda.current_stream()) tells it the current stream uses it too (TODO 5)"
}

# The time between two events can be read only once both are reached on
# the GPU (torch's Event.elapsed_time queries both and raises where one is
# not done): the host must wait for the stop event first. Judged on what
# the program guaranteed (streamtrace ask's `elapsed`): a wait after the
# stop record that the record is before; a query that happened to find it
# done is the GPU winning a race, not a wait.
@test "the host waits for the stop event before it reads the time" {
    need_run main
    need_trace main
    local head k lo hi work range order wait
    draw_on_fail main --window nvtx:events+gpu
    IFS=$'\t' read -r head order wait <<<"$(timing_in main events)"
    read -r k lo hi work range <<<"$head"
    [ -n "$k" ] || say_fail \
        "after stop.record(), a wait for it (stop.synchronize()) before start.elapsed_time(stop)" \
        "no time was read (cudaEventElapsedTime) from two events recorded around the work of the range \"events\"" \
        "elapsed_time() raises while the stop event is not reached: stop.synchronize() first (TODO 7)"
    [ "$wait" = ok ] || say_fail \
        "after stop.record(), a wait for it (stop.synchronize()) before start.elapsed_time(stop)" \
        "$wait" \
        "the kernel may still run when elapsed_time() is called: stop.synchronize() first (TODO 7)"
}

# event_time RUN: event_ms is the time between the two events that the
# elapsed_time() call of the range "events" read, which the program made
# enclose the kernel alone (streamtrace ask's `timings` and `elapsed`: the
# kernel queued between the two records, ordered after the start and
# before the stop). Another program can come between an event's own stamp
# and the trace's, so this check may look at up to 2 more runs (see
# same_gpu_time in lib/checks.bash); a misplaced event is misplaced in every run.
event_time() {
    local v head k lo hi work range order wait w
    need_figure_in v "$1" event_ms || return "$HOPELESS"
    IFS=$'\t' read -r head order wait <<<"$(timing_in "$1" events)"
    read -r k lo hi work range <<<"$head"
    [ -n "$k" ] && [ "$lo" != - ] || { say_fail \
        "event_ms read (start.elapsed_time(stop)) from two events recorded in the range \"events\"" \
        "${k:+the events the call read have no stamp in the trace}${k:-no such time was read}" \
        "start.record() before x.normal_() and stop.record() after it (TODO 7)"; return "$HOPELESS"; }
    [ "$work" = kernel:1 ] || { say_fail "the events around x.normal_() enclosing its kernel alone" \
        "they enclose $(work_words "$work")" "start.record() right before x.normal_(), stop.record() right after (TODO 7)"; return "$HOPELESS"; }
    [ "$order" = ok ] || { say_fail "x.normal_()'s kernel ordered after the start event and before the stop event" \
        "$order" "record both events on the stream x.normal_() runs on, the current one (TODO 7)"; return "$HOPELESS"; }
    w=$(calc -f '%.6f' 'b - a' a="${lo:-0}" b="${hi:-0}")
    kept_time event_ms "$v" "$w"
    same_gpu_time "$v" "$w" || say_fail \
        "event_ms = the GPU's time between those two events, $(fmt "$w") ms (within 0.5% + 0.1 ms)" \
        "event_ms = $v" "event_ms = start.elapsed_time(stop), already in ms (TODO 7)"
}

@test "torch.cuda.Event times exactly the kernel" {
    need_run main
    need_trace main
    draw_on_fail main --window nvtx:events+gpu
    second_chance main event_time
}

# idle_at RUN RANGE...: for each NVTX range RANGE of run RUN (its first),
# whether the GPU work queued before it was known done, by a wait of the
# host, when it began (streamtrace ask's `idle`: what the program
# guaranteed, not when this run's work happened to end): a line
# "RANGE<TAB>WORDS" for the first range where it was not, naming the last
# record (copy, kernel or memset, in the order of the calls) that no wait
# covered, when it was queued and how long it ran on into the range;
# nothing where every one was covered.
idle_at() {
    local run=$1 r qs=() $SETTLED_FIELDS
    shift
    for r in "$@"; do qs+=("idle nvtx:$r#1"); done
    while IFS=$'\t' read -r $SETTLED_FIELDS; do
        r=$1
        shift
        case $answer in
            idle|none) continue ;;
            not-idle) ;;
            *) printf '%s\tunknown: %s\n' "$r" "$range"; return 0 ;;
        esac
        case $what in
            memset) what="a memset" ;;
            H*) what="an $what" ;;
            *copy) what="a $what" ;;
            *) what="a kernel" ;;
        esac
        printf '%s\tthe range "%s" began at %.3f ms with work queued before it that no wait covered: the last, %s on stream %s, queued at %.3f ms, %s\n' \
            "$r" "$r" "$ms" "$what" "$st" "$queued_ms" \
            "$(ran_on "$ended_ms" "$ms")"
        return 0
    done < <(ask "$run" "${qs[@]}")
}

# Each part and case is measured alone: the given code waits for the GPU
# (torch.cuda.synchronize()) before each range but the second case's,
# "sync_after", whose clock is meant to start with case 1's kernel still
# running ("the kernel before it too"). The fourth case's wait is TODO 6's
# and its own check's, "the clock of the synchronized case starts with the
# GPU idle". Without a wait, earlier work may run on into the range: a case
# then times what it was not meant to, and a part's copies wait behind it.
@test "each measured range starts with the GPU idle, but case 2's, as given" {
    need_run main
    need_trace main
    local r seen hint
    IFS=$'\t' read -r r seen < <(idle_at main pageable_copy pinned_copy side_stream sync_before sync_neither events) || true
    [ -n "$r" ] || return 0
    draw_on_fail main --window "nvtx:$r"
    case $r in
        pageable_copy) hint="keep part 1 as given: torch.cuda.synchronize() before the pageable copy's range" ;;
        pinned_copy) hint="keep part 1 as given: torch.cuda.synchronize() between the two copies; the pageable copy's call may return before its copy is done, and the pinned copy would queue behind it" ;;
        side_stream) hint="keep part 2 as given: torch.cuda.synchronize() before the range \"side_stream\"; the warm-up's kernels would run on into the pipeline" ;;
        sync_before) hint="keep part 3 as given: torch.cuda.synchronize() before case 1 (\"1. before only\"); without it the warm-up's kernel may still run, and case 1 is case 3" ;;
        sync_neither) hint="keep case 2 as given: torch.cuda.synchronize() after its launch, before t1; without it case 2 times the launch alone, and its kernel runs on into case 3" ;;
        events) hint="the fourth case waits for its kernel before t1: torch.cuda.synchronize() after x.normal_() (TODO 6); its kernel would run on into the events' range" ;;
    esac
    say_fail "every range but \"sync_after\" beginning with no GPU work queued before it left unwaited (a torch.cuda.synchronize() in between)" \
        "$seen" "$hint"
}

# non_blocking=True lets .to() return before its copy is done; from pageable
# memory the call *may* still wait for it, which is what part 1 measures
# (the check of the PAGEABLE copy notes it). With non_blocking=False the call
# waits by request: a synchronize after the copy, in the trace.
@test "the .to() from pageable memory is given non_blocking=True: it makes no wait of its own" {
    need_run main
    need_trace main
    local waits
    draw_on_fail main --window nvtx:pageable_copy+gpu
    local all f
    waits=""
    tq_in all main list api --window nvtx:pageable_copy
    while IFS=$'\t' read -r -a f; do
        [[ ${f[5]:-} == *Synchronize ]] && waits+="${waits:+, }${f[5]}"
    done <<<"$all"
    [ -z "$waits" ] || say_fail "no wait for the GPU in the range \"pageable_copy\": the copy's call alone" \
        "$waits" \
        "keep part 1's pageable copy as given: pageable.to(DEVICE, non_blocking=True); non_blocking=False asks the call to wait for its copy, and part 1 measures whether from pageable memory it waits anyway"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    # (the given code says so before it imports torch: no torch needed here)
    check_no_device
}
