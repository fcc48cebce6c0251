#!/usr/bin/env bats
# 10-graphs.bats -- the checks of lab 10 (CUDA graphs).
# Run from the lab folder with `make check`, or `make check LAB=10` at the top.
# The program runs once under the trace tool, all three parts, in NVTX
# ranges: part 1 "stream_loop" (K iterations of N small kernels launched one
# by one), "capture" (the same N launches captured, instantiated, uploaded)
# and "graph_loop" (K replays); part 2 "fork_stream" (the fork and join on
# the streams), "fork_capture", and per replay "replay" (launch and wait)
# then "read" (the host checks the result); part 3 "pitfall_sync",
# "pitfall_legacy" (two calls a capture refuses) and "update" (a kernel's
# parameters changed in the instantiated graph).
#
# What a graph ran is in the trace (format 4): each kernel, copy or memset a
# cudaGraphLaunch ran carries its graph and graph node ids and the launch's
# correlation id (`tq RUN graph SEL`), and each runtime call what it
# returned (`tq RUN returned SEL`). A kernel launched into a stream being
# captured does not run then: only its cudaLaunchKernel call is recorded.
# Every check is a structure (what ran in which graph, counts of calls, an
# order, an overlap of our own kernels, what a call returned) or the same
# interval measured twice (a printed host time against its NVTX range).

bats_require_minimum_version 1.5.0
LAB_ID=10-graphs
PROG=graphs
load lib/checks

setup_file() {
    build_lab
    run_beside badopt -- --frobnicate
    run_beside nodev --env CUDA_VISIBLE_DEVICES= --
    run_lab main --trace
    runs_done
    # the questions its checks ask of the run, answered in one parse
    tq_ahead main <<'EOF'
        caller event --stream not-created
        caller gpu --stream not-created
        caller sync --stream not-created
        corr api:cudaGraphLaunch --window nvtx:graph_loop
        corr api:cudaLaunchKernel --window nvtx:stream_loop
        count api:cudaGraphExecKernelNodeSetParams* --window nvtx:update
        count api:cudaGraphExecNodeSetParams* --window nvtx:update
        count api:cudaGraphExecUpdate* --window nvtx:update
        count api:cudaGraphInstantiate* --window nvtx:graph_loop
        count api:cudaGraphInstantiate* --window nvtx:update
        count api:cudaGraphLaunch* --window nvtx:graph_loop
        count api:cudaGraphLaunch* --window nvtx:stream_loop
        count api:cudaGraphLaunch* --window nvtx:update
        count api:cudaLaunchKernel* --window nvtx:capture
        count api:cudaLaunchKernel* --window nvtx:graph_loop
        count api:cudaLaunchKernel* --window nvtx:stream_loop
        count api:cudaStreamBeginCapture* --window nvtx:graph_loop
        count api:cudaStreamBeginCapture* --window nvtx:update
        count api:cudaStreamEndCapture* --window nvtx:graph_loop
        count d2h --window nvtx:update+gpu
        count nvtx:read
        count nvtx:replay
        graph gpu --window nvtx:replay#1+gpu
        graph gpu --window nvtx:replay#2+gpu
        graph gpu --window nvtx:replay#3+gpu
        graph gpu --window nvtx:replay#4+gpu
        graph kernel:update_kernel --window nvtx:update+gpu
        launches kernel --window nvtx:graph_loop+gpu
        list d2h --window nvtx:update+gpu
        list kernel --window nvtx:graph_loop+gpu
        list kernel --window nvtx:stream_loop+gpu
        list kernel:update_kernel --window nvtx:update+gpu
        list nvtx:fork_capture
        list nvtx:fork_stream
        list nvtx:graph_loop
        list nvtx:pitfall_legacy
        list nvtx:pitfall_sync
        list nvtx:replay
        list nvtx:stream_loop
        list nvtx:update
        next d2h --window nvtx:update+gpu
        order kernel:branch_a kernel:join --window nvtx:fork_stream+gpu
        order kernel:branch_a kernel:join --window nvtx:replay#1+gpu
        order kernel:branch_a kernel:join --window nvtx:replay#2+gpu
        order kernel:branch_a kernel:join --window nvtx:replay#3+gpu
        order kernel:branch_a kernel:join --window nvtx:replay#4+gpu
        order kernel:branch_b kernel:join --window nvtx:fork_stream+gpu
        order kernel:branch_b kernel:join --window nvtx:replay#1+gpu
        order kernel:branch_b kernel:join --window nvtx:replay#2+gpu
        order kernel:branch_b kernel:join --window nvtx:replay#3+gpu
        order kernel:branch_b kernel:join --window nvtx:replay#4+gpu
        overlap kernel:branch_a kernel:branch_b --window nvtx:fork_stream+gpu
        overlap kernel:branch_a kernel:branch_b --window nvtx:replay#1+gpu
        overlap kernel:branch_a kernel:branch_b --window nvtx:replay#2+gpu
        overlap kernel:branch_a kernel:branch_b --window nvtx:replay#3+gpu
        overlap kernel:branch_a kernel:branch_b --window nvtx:replay#4+gpu
        returned api --captured
        returned api --window nvtx:pitfall_legacy
        returned api --window nvtx:pitfall_sync
        returned api:cudaDeviceSynchronize
        returned api:cudaDeviceSynchronize --window nvtx:graph_loop
        returned api:cudaDeviceSynchronize --window nvtx:stream_loop
        returned api:cudaGraphInstantiate*
        returned api:cudaGraphLaunch*
        returned api:cudaGraphLaunch* --window nvtx:graph_loop
        returned api:cudaGraphLaunch* --window nvtx:stream_loop
        returned api:cudaGraphUpload
        returned api:cudaLaunchKernel* --window nvtx:graph_loop
        returned api:cudaLaunchKernel* --window nvtx:stream_loop
        returned api:cudaStreamBeginCapture*
        returned api:cudaStreamEndCapture --window nvtx:fork_capture
        returned api:cudaStreamEndCapture*
        returned api:cudaStreamSynchronize
        returned api:cudaStreamSynchronize --window nvtx:graph_loop
        returned api:cudaStreamSynchronize --window nvtx:stream_loop
        streams
        union kernel --window nvtx:graph_loop+gpu
EOF
    # and what the program guaranteed, asked of the run in one parse
    ask_ahead main <<'EOF'
        order kernel:branch_a#1 kernel:join#1
        order kernel:branch_b#1 kernel:join#1
        waits nvtx:stream_loop
        waits nvtx:graph_loop
        idle nvtx:read
        idle nvtx:stream_loop
        idle nvtx:graph_loop
        idle nvtx:fork_stream
        idle nvtx:fork_capture
        idle nvtx:replay
        idle nvtx:update
        done nvtx:stream_loop#1
        done nvtx:graph_loop#1
EOF
}

# A branch counts as running beside the other when at least this share of
# the shorter branch kernel's time overlaps it. Each branch kernel takes one
# block per SM, so both fit on the GPU at once; one queued behind the other
# overlaps by nothing.
OVERLAP_MIN=0.5

# The error names of the codes a capture answers with (CUDA Runtime API,
# enum cudaError).
err_name() {
    case $1 in
        0) echo cudaSuccess ;;
        900) echo cudaErrorStreamCaptureUnsupported ;;
        901) echo cudaErrorStreamCaptureInvalidated ;;
        902) echo cudaErrorStreamCaptureMerge ;;
        903) echo cudaErrorStreamCaptureUnmatched ;;
        904) echo cudaErrorStreamCaptureUnjoined ;;
        905) echo cudaErrorStreamCaptureIsolation ;;
        906) echo cudaErrorStreamCaptureImplicit ;;
        907) echo cudaErrorCapturedEvent ;;
        908) echo cudaErrorStreamCaptureWrongThread ;;
        -|'') echo "not recorded" ;;
        *) echo "error $1" ;;
    esac
}

# count_calls RUN RANGE NAME...: the runtime calls in the NVTX range RANGE
# whose name begins with one of the NAMEs (streamtrace query's count, asked
# ahead in setup_file: read with no process).
count_calls() {
    local run=$1 w="--window nvtx:$2" name n sum=0
    shift 2
    for name in "$@"; do
        tq_in n "$run" count "api:$name*" $w || true
        sum=$((sum + ${n:-0}))
    done
    echo "$sum"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0" {
    check_exits_ok main \
        "a capture error (cudaErrorStreamCapture...) names the call a capture refused: see the capture checks"
}

@test "every result is right, after every replay" {
    check_verified main "RESULT: verified every result of every part that was run" WRONG \
        "read what the part that is WRONG says: a graph replays what was captured, with the arguments of the capture" || return 1
    local want right
    need_figure_in want main fork_replays || return 1
    need_figure_in right main fork_replays_right || return 1
    is_true 'r == w' r="$right" w="$want" || say_fail "fork_replays_right = $want" \
        "fork_replays_right = $right" "a replay read too early is wrong: wait for the replay (TODO 7)"
}

# ------------------------------------------------------------ captures

# pitfall_ranges RUN: PS and PE (the caller's arrays) = the starts and ends
# (ns) of the NVTX ranges of the pitfall part
pitfall_ranges() {
    local l=() x r v
    PS=() PE=()
    for r in pitfall_sync pitfall_legacy; do
        tq_lines l "$1" list "nvtx:$r"
        for x in "${l[@]}"; do
            [ -n "$x" ] || continue
            ns_of v "${x%%$'\t'*}"; PS+=("$v")
            x=${x#*$'\t'}
            ns_of v "${x%%$'\t'*}"; PE+=("$v")
        done
    done
}

# in_pitfall NS: NS (a time, ns) is in a range of pitfall_ranges' PS, PE
in_pitfall() {
    local i
    for i in "${!PS[@]}"; do
        (($1 >= PS[i] && $1 <= PE[i])) && return 0
    done
    return 1
}

# capture_order RUN: "ok", or what is wrong with the order of the calls
# that begin and end captures, instantiate graphs and launch them: every
# capture begun ends (cudaStreamEndCapture) before another begins, before a
# graph is instantiated or launched, and before the program ends; and every
# capture but the pitfall part's ends with cudaSuccess.
capture_order() {
    local PS=() PE=() f k=0 x t name open=0 ot="" ended=0 calls=() at=() why
    pitfall_ranges "$1"
    # the four kinds of call, in the order they were made (by start, ns)
    for name in cudaStreamBeginCapture cudaStreamEndCapture cudaGraphInstantiate cudaGraphLaunch; do
        tq_lines calls "$1" returned "api:$name*"
        for f in "${calls[@]}"; do
            [ -n "$f" ] || continue
            ns_of x "${f%%$'\t'*}"
            at[x * 4096 + k]=$f k=$((k + 1))
        done
    done
    for x in "${at[@]}"; do
        IFS=$'\t' read -r -a f <<<"$x"
        case ${f[5]} in
            cudaStreamBeginCapture*)
                ((open == 0)) || { echo "a capture begun at $ot ms was still open when another began at ${f[0]} ms"; return 0; }
                open=1 ot=${f[0]} ;;
            cudaStreamEndCapture*)
                ((open == 1)) || { echo "cudaStreamEndCapture at ${f[0]} ms ended no capture"; return 0; }
                open=0 ended=0
                [ "${f[11]}" != 0 ] || ended=1
                ns_of t "${f[0]}"
                if ((ended == 0)) && ! in_pitfall "$t"; then
                    case ${f[11]} in
                        901) why="the capture was invalidated (cudaErrorStreamCaptureInvalidated): a call it refused broke it" ;;
                        904) why="a stream forked from the capture was not joined back (cudaErrorStreamCaptureUnjoined): its last work must be waited for by the origin stream before the end" ;;
                        903) why="cudaErrorStreamCaptureUnmatched: the capture was not begun on this stream" ;;
                        *) why="" ;;
                    esac
                    echo "cudaStreamEndCapture at ${f[0]} ms returned ${f[11]}: $why"
                    return 0
                fi ;;
            cudaGraphInstantiate*)
                ((open == 0)) || { echo "cudaGraphInstantiate at ${f[0]} ms, while the capture begun at $ot ms was still open (no cudaStreamEndCapture)"; return 0; }
                ((ended == 1)) || { echo "cudaGraphInstantiate at ${f[0]} ms, but the capture before it did not end with cudaSuccess"; return 0; } ;;
            cudaGraphLaunch*)
                ((open == 0)) || { echo "cudaGraphLaunch at ${f[0]} ms, while the capture begun at $ot ms was still open"; return 0; } ;;
        esac
    done
    ((open == 0)) || { echo "the capture begun at $ot ms never ended (no cudaStreamEndCapture)"; return 0; }
    echo ok
}

@test "each capture ends before its graph is instantiated" {
    need_run main
    need_trace main
    local o
    o=$(capture_order main)
    draw_on_fail main --window nvtx:capture --window nvtx:fork_capture
    [ "$o" = ok ] || say_fail \
        "cudaStreamBeginCapture, the launches, cudaStreamEndCapture(stream, &graph), then cudaGraphInstantiate" \
        "$o" \
        "end each capture with cudaStreamEndCapture on the stream that began it, after the work of every stream that joined the capture was joined back into it: until then the streams record work instead of running it, and there is no graph to instantiate (TODO 1, 5, 6)"
}

# in_capture RUN: the runtime calls made while a capture was open, outside
# the pitfall part's ranges, that wait for the GPU or returned an error:
# one line each, "NAME at MS ms returned CODE", or nothing. (streamtrace's
# --captured: from each cudaStreamBeginCapture to the next
# cudaStreamEndCapture.)
in_capture() {
    local PS=() PE=() file f x
    pitfall_ranges "$1"
    tq_file file "$1" returned api --captured
    while IFS=$'\t' read -r -a f; do
        ns_of x "${f[0]}"
        ! in_pitfall "$x" || continue
        case ${f[5]} in
            cudaStreamBeginCapture* | cudaStreamEndCapture*) continue ;;
            *Synchronize | cudaMemcpy | cudaMemset | cudaStreamQuery | cudaEventQuery | cudaMalloc | cudaFree) ;;
            *) [ "${f[11]}" != 0 ] && [ "${f[11]}" != - ] || continue ;;
        esac
        printf '%s at %s ms returned %s\n' "${f[5]}" "${f[0]}" "${f[11]}"
    done <"$file"
}

@test "no call during a capture waits for the GPU (the pitfall part aside)" {
    need_run main
    need_trace main
    local o first code
    o=$(in_capture main)
    draw_on_fail main --window nvtx:capture --window nvtx:fork_capture
    [ -z "$o" ] && return 0
    first=$(head -n 1 <<<"$o")
    code=${first##* }
    say_fail "between cudaStreamBeginCapture and cudaStreamEndCapture only work queued into the captured streams" \
        "$(tr '\n' ';' <<<"$o" | sed 's/;$//; s/;/; /g') ($(err_name "$code"))" \
        "while a stream is captured its work is recorded, not run: a wait for it (cudaStreamSynchronize, cudaDeviceSynchronize, a plain cudaMemcpy) is refused and breaks the capture; wait after cudaStreamEndCapture, or for the replay"
}

# off_created RUN: the work, events and waits the program queued on a
# stream it did not create, one line each with a count: "WHAT on KIND
# (CALL) xN". The given cudaMemcpy and cudaMemset calls (synchronous: the
# legacy default stream is theirs) aside; a graph's nodes may run on a
# stream of the runtime's own (`internal`), the graph's launch stream aside.
# (streamtrace's `caller`: each record with the call that queued it, of the
# records on the streams it did not create only.)
off_created() {
    local -A kind=() n=()
    local order=() lines=() l f c k w key
    tq_lines lines "$1" streams
    for l in "${lines[@]}"; do read -r -a f <<<"$l"; [ ${#f[@]} -lt 2 ] || kind[${f[0]}]=${f[1]}; done
    for w in gpu event sync; do
        tq_lines lines "$1" caller "$w" --stream not-created
        for l in "${lines[@]}"; do
            IFS=$'\t' read -r -a f <<<"$l"
            [ ${#f[@]} -ge 12 ] || continue
            c=${f[11]}
            [ "$c" != - ] || c=""
            [ "$c" != cudaMemcpy ] && [ "$c" != cudaMemset ] || continue
            k=${kind[${f[4]}]:-unknown}
            [ "$k" != created ] && { [ "$k" != internal ] || [ "$c" != cudaGraphLaunch ]; } || continue
            case $w in
                gpu) what_of key "${f[@]}" ;;
                event) key="event record" ;;
                *) if [ "${f[5]}" = wait ]; then key="stream wait"; else key="wait for the stream"; fi ;;
            esac
            case $k in
                default) key+=" on the legacy default stream" ;;
                per-thread) key+=" on a per-thread default stream" ;;
                unknown) key+=" on a stream it never declared (a per-thread default stream that carried no work)" ;;
                *) key+=" on an $k stream" ;;
            esac
            key+=" ($c)"
            [ -n "${n[$key]:-}" ] || { order+=("$key"); n[$key]=0; }
            n[$key]=$((n[$key] + 1))
        done
    done
    for key in "${order[@]}"; do printf '%s x%s\n' "$key" "${n[$key]}"; done
}

# The given code puts every launch, copy back, event and wait on the stream
# it created for that part. A kernel, a graph launch or a copy put on the
# legacy default stream (0) still runs, and in a program this short usually
# in the same order, but it is ordered with the part's non-blocking streams
# by nothing; cudaStreamSynchronize(0) or (cudaStreamPerThread) waits for
# its own stream only, not for the part's: the host goes on while the part's
# work runs, and a run shows that only when the GPU happens to lag.
@test "every kernel, graph launch, copy back, event and wait is on a stream the program created" {
    need_run main
    need_trace main
    local o
    o=$(off_created main)
    draw_on_fail main
    [ -z "$o" ] || say_fail \
        "nothing but the given cudaMemcpy and cudaMemset on the legacy or a per-thread default stream" \
        "$(tr '\n' ';' <<<"$o" | sed 's/;$//; s/;/; /g')" \
        "the part's streams are non-blocking: the legacy default stream (0) and cudaStreamPerThread are not ordered with them (CUDA Runtime API, \"Stream synchronization behavior\"), so work put there races the part's own, and cudaStreamSynchronize(0) waits for stream 0 only, not for the part's stream: keep each call on the stream the given code names (s, f->origin, f->side)"
}

# The ranges a check times or reads from, each begun after the given code's
# wait: part 1's two loops, part 2's run on the streams, its capture and
# each replay, part 3's update.
WAITED_RANGES="stream_loop graph_loop fork_stream fork_capture replay update"

# unwaited RUN: for each range of WAITED_RANGES, the first of its instances
# that began with work queued before it that no wait of the host covered,
# by what the program guaranteed (streamtrace ask's `idle`: a stream or
# device synchronize, a synchronous copy, an event synchronize, not a wait
# that happened to return after the work), and the first cudaGraphUpload
# queued before an instance that no cudaStreamSynchronize or
# cudaDeviceSynchronize followed before it began (an upload is queued on
# its stream like work, but has no record of its own: the trace says
# neither its stream nor its end). One line each: "\"RANGE\" #K began at
# MS ms: WHAT"; the GPU work's lines end "<TAB>QUEUED_MS<TAB>ENDED_MS".
unwaited() {
    local r $SETTLED_FIELDS
    while IFS=$'\t' read -r $SETTLED_FIELDS; do
        case $answer in
            idle|none) ;;
            not-idle) printf '"%s" #%s began at %.3f ms: the %s on stream %s, queued at %.3f ms, %s, and no wait of the host made after it and before the range covered it\t%s\t%s\n' \
                "${range%#*}" "${range##*#}" "$ms" "$what" "$st" "$queued_ms" \
                "$(ran_on "$ended_ms" "$ms")" "$queued_ms" "$ended_ms" ;;
            *) printf '%s: %s\n' "$answer" "$range" ;;
        esac
    done < <(ask "$1" "$(printf 'idle nvtx:%s\n' $WAITED_RANGES)")
    local ups waits n k q t c code
    tq_in ups "$1" returned api:cudaGraphUpload
    [ -n "$ups" ] || return 0
    tq_in waits "$1" returned api:cudaStreamSynchronize
    tq_in n "$1" returned api:cudaDeviceSynchronize
    waits+=${waits:+${n:+$'\n'}}$n
    # (times in ns: the ms the trace prints have six decimals)
    local -a us=() uc=() ws=() wc=()
    while IFS=$'\t' read -r t _ _ _ _ _ _ _ _ _ c _; do
        [ -n "$t" ] && us+=("${t/./}") uc+=("$c")
    done <<<"$ups"
    while IFS=$'\t' read -r t _ _ _ _ _ _ _ _ _ c code; do
        [ "$code" = 0 ] && ws+=("${t/./}") wc+=("$c")
    done <<<"$waits"
    for r in $WAITED_RANGES; do
        tq_in n "$1" list "nvtx:$r"
        k=0
        while IFS=$'\t' read -r t _; do
            [ -n "$t" ] || continue
            k=$((k + 1)) t=${t/./}
            for q in "${!us[@]}"; do
                [ "$((10#${us[q]}))" -lt "$((10#$t))" ] || continue
                code=1
                for c in "${!ws[@]}"; do
                    if [ "${wc[c]}" -gt "${uc[q]}" ] && [ "$((10#${ws[c]}))" -lt "$((10#$t))" ]; then code=0; break; fi
                done
                [ "$code" = 0 ] && continue
                printf '"%s" #%d began at %.3f ms: the graph upload (cudaGraphUpload, queued at %.3f ms) was waited for by no cudaStreamSynchronize or cudaDeviceSynchronize before the range\n' \
                    "$r" "$k" "$((10#$t))e-6" "$((10#${us[q]}))e-6"
                break 2
            done
        done <<<"$n"
    done
}

# Each timed or checked range starts with the GPU's earlier work done and
# waited for, as the given code does. The waits it keeps: after the
# warm-up, after each cudaGraphUpload (an upload is stream-ordered work: a
# replay queued behind it would count it), after the poison memsets of part
# 2 (cudaMemset may return before it is done, and it runs on the legacy
# default stream, which part 2's non-blocking streams are not ordered with),
# after each loop and replay.
@test "each timed or checked range begins after the host waited for the work queued before it" {
    need_run main
    need_trace main
    local o span first ms q e
    o=$(unwaited main)
    # the first GPU work's: from its queuing to the later of its end and the range's start
    first=""
    while IFS= read -r q; do [[ $q != *$'\t'* ]] || { first=$q; break; }; done <<<"$o"
    if [ -n "$first" ]; then
        IFS=$'\t' read -r _ q e <<<"$first"
        ms=${first#* began at } ms=${ms%% ms:*}
        span=$(calc -f '%.3f %.3f' 'q - 0.2 * ((s > e ? s : e) - q), (s > e ? s : e) + 0.2 * ((s > e ? s : e) - q)' q="$q" s="$ms" e="$e")
        draw_on_fail main --from "${span% *}" --to "${span#* }"
    else
        draw_on_fail main
    fi
    [ -z "$o" ] || say_fail \
        "every copy, kernel, memset and graph upload queued before ${WAITED_RANGES// /, } waited for by the host before the range began" \
        "$(cut -f 1 <<<"$o" | tr '\n' ';' | sed 's/;$//; s/;/; /g')" \
        "keep the given waits: cudaStreamSynchronize(s) after the warm-up and after each cudaGraphUpload (the upload is queued on the stream like work: a replay behind it times it too), cudaDeviceSynchronize() after part 2's cudaMemset calls (a memset may still run when it returns, on the legacy default stream, which the part's non-blocking streams do not wait for), and the wait that ends each loop and replay"
}

# copy_reads RUN: each copy back of part 3 (cudaMemcpyAsync, in the range
# "update"), and the call its thread made next but for cudaGetLastError and
# cudaPeekAtLastError (streamtrace's `next`), after which the host reads
# the result:
# "CORR<TAB>QUEUED_MS<TAB>NEXT_CORR<TAB>NEXT_NAME" ("-" for both where it
# was the last call).
copy_reads() {
    local lines=() l f
    tq_lines lines "$1" next d2h --window nvtx:update+gpu
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r -a f <<<"$l"
        [ ${#f[@]} -ge 13 ] && printf '%s\t%s\t%s\t%s\n' "${f[10]}" "${f[0]}" "${f[11]}" "${f[12]}"
    done
    return 0
}

# copy_waits RUN: part 3's copies back whose next call (copy_reads) is not a
# wait that the copy is guaranteed to have ended before (streamtrace ask's
# `order`: a cudaStreamSynchronize of its stream, say; not a wait of
# another stream that happened to return after it): one line each.
copy_waits() {
    local c q n name qs=""
    while IFS=$'\t' read -r c q n name; do
        [ -n "$c" ] || continue
        if [ "$n" = - ]; then
            printf 'the copy back queued at %.3f ms is the last call\n' "$q"
        else
            qs+=$(printf 'order copy:%s api:%s\tthe copy back queued at %.3f ms, then %s' "$c" "$n" "$q" "$name")$'\n'
        fi
    done < <(copy_reads "$1")
    printf '%s' "$qs" | unguaranteed "$1" | cut -f 1,3 | sed 's/\t/: /'
}

# copy_streams RUN: part 3's copies back that ran on another stream than
# update_kernel's (the graph's, s): one line each. s is non-blocking, so a
# copy elsewhere (cudaMemcpy on the legacy default stream, say) does not
# wait for the graph; whether it read d_out before the kernel wrote it is
# a race, the stream is what the trace shows every time.
copy_streams() {
    local lines=() x f i ks="" on="," ss=()
    tq_lines lines "$1" list kernel:update_kernel --window nvtx:update+gpu
    for x in "${lines[@]}"; do    # update_kernel's streams, each once, sorted
        IFS=$'\t' read -r -a f <<<"$x"
        [ -n "${f[4]:-}" ] && [[ $on != *",${f[4]},"* ]] || continue
        on+="${f[4]},"
        for ((i = ${#ss[@]}; i > 0; i--)); do
            [[ ${ss[i - 1]} > ${f[4]} ]] || break
            ss[i]=${ss[i - 1]}
        done
        ss[i]=${f[4]}
    done
    [ ${#ss[@]} -eq 0 ] || printf -v ks '%s,' "${ss[@]}"
    ks=${ks%,}
    tq_lines lines "$1" list d2h --window nvtx:update+gpu
    for x in "${lines[@]}"; do
        [ -n "$x" ] || continue
        IFS=$'\t' read -r -a f <<<"$x"
        [[ $on != *",${f[4]:-},"* ]] || continue
        printf 'the copy back at %.3f ms ran on stream %s, update_kernel on %s\n' "${f[0]}" "${f[4]:-}" "${ks:-none}"
    done
}

@test "part 3 waits for each copy back before it reads the result" {
    need_run main
    need_trace main
    local o n e
    tq_in n main count d2h --window nvtx:update+gpu
    draw_on_fail main --window nvtx:update+gpu
    e=$(copy_streams main)
    [ -z "$e" ] || say_fail \
        "each copy back in \"update\" on s, the stream the graph ran update_kernel on" \
        "$(tr '\n' ';' <<<"$e" | sed 's/;$//; s/;/; /g')" \
        "keep the given cudaMemcpyAsync(h_buf, d_out, bytes, cudaMemcpyDeviceToHost, s): s is non-blocking, so a copy on another stream (cudaMemcpy goes to the legacy default stream) does not wait for the graph's update_kernel and may read d_out before the kernel has written it" || return 1
    o=$(copy_waits main)
    [ "$n" -ge 1 ] && [ -z "$o" ] || say_fail \
        "each cudaMemcpyAsync back in \"update\" followed by cudaStreamSynchronize(s), a wait the copy is sure to have ended before" \
        "${o:-no copy back in \"update\"}" \
        "cudaMemcpyAsync returns before its copy runs: keep the given cudaStreamSynchronize(s) right after each copy back, before check_steps reads h_buf"
}

# ------------------------------------------------------------ part 1

@test "the stream loop launches every kernel itself, K times N" {
    need_run main
    need_trace main
    local k n launches graphs
    need_figure_in k main iterations || return 1
    need_figure_in n main kernels || return 1
    k=${k%%.*} n=${n%%.*}
    draw_on_fail main --window nvtx:stream_loop
    launches=$(count_calls main stream_loop cudaLaunchKernel)
    graphs=$(count_calls main stream_loop cudaGraphLaunch)
    is_true 'l == k * n && g == 0' l="$launches" k="$k" n="$n" g="$graphs" || say_fail \
        "$(calc 'k * n' k="$k" n="$n") cudaLaunchKernel calls ($k iterations of $n) and no cudaGraphLaunch in \"stream_loop\"" \
        "$launches cudaLaunchKernel, $graphs cudaGraphLaunch" \
        "keep the given stream loop: it is what the graph is measured against"
}

@test "the replay loop makes one cudaGraphLaunch per replay and nothing else" {
    need_run main
    need_trace main
    local k launches kernels captures inst
    need_figure_in k main iterations || return 1
    k=${k%%.*}
    draw_on_fail main --window nvtx:graph_loop
    launches=$(count_calls main graph_loop cudaGraphLaunch)
    kernels=$(count_calls main graph_loop cudaLaunchKernel)
    captures=$(count_calls main graph_loop cudaStreamBeginCapture cudaStreamEndCapture)
    inst=$(count_calls main graph_loop cudaGraphInstantiate)
    is_true 'l == k && n + c + i == 0' l="$launches" k="$k" n="$kernels" c="$captures" i="$inst" || say_fail \
        "$k cudaGraphLaunch calls in \"graph_loop\", and no kernel launch, capture or instantiation" \
        "$launches cudaGraphLaunch, $kernels cudaLaunchKernel, $captures capture calls, $inst cudaGraphInstantiate" \
        "capture and instantiate once, before the loop (TODO 1, 2); in the loop, only cudaGraphLaunch(exec, s) (TODO 3): a graph launched again needs no new capture"
}

# The two loops are timed alike: K iterations queued, then one wait. A wait
# inside the loop (a cudaStreamSynchronize after every replay) adds K round
# trips to the GPU to one loop's time: a structure of the program, the same
# in every run, whatever the GPU's speed.
@test "each timed loop waits for the GPU once, after its launches" {
    need_run main
    need_trace main
    local a bad="" i n ws w c l f names=(stream_loop graph_loop) calls=(cudaLaunchKernel cudaGraphLaunch)
    draw_on_fail main --window nvtx:stream_loop --window nvtx:graph_loop
    mapfile -t a < <(ask main "waits nvtx:stream_loop" "waits nvtx:graph_loop")
    for i in 0 1; do
        IFS=$'\t' read -r n ws <<<"${a[i]:-}"
        # the loop's last launch, by its correlation id: the one wait comes after it
        tq_in l main corr "api:${calls[i]}" --window "nvtx:${names[i]}" || true
        c=0
        [ -z "$l" ] || { IFS=$'\t' read -r -a f <<<"${l##*$'\n'}"; c=${f[10]:-0}; }
        w=${ws##*:}
        [[ $w =~ ^[0-9]+$ ]] || w=0
        [[ $c =~ ^[0-9]+$ ]] || c=0
        [ "$n" != 1 ] || [ "$w" -lt "$c" ] || continue
        bad+="${bad:+; }\"${names[i]}\": "
        if [ "$n" = none ]; then bad+="no such range"
        else bad+="$n waits${ws:+ ($ws)}$([ "$n" != 1 ] || echo ", before the loop's last launch")"; fi
    done
    [ -z "$bad" ] || say_fail \
        "one wait for the GPU in each of \"stream_loop\" and \"graph_loop\", the cudaStreamSynchronize after the loop" \
        "$bad" \
        "each loop queues its K iterations, then waits once: a cudaStreamSynchronize inside the loop adds a round trip to the GPU per iteration to that loop's time alone (TODO 3: in the loop, only cudaGraphLaunch(exec, s))"
}

# replays_of RUN: each replay of "graph_loop", by its launch's correlation
# id, one line: "CORR KERNELS GRAPHS NODES NAMES SIG": how many kernels it
# ran, its distinct graph ids (comma-separated, "-" for a kernel no graph
# launched), its distinct node ids, its distinct kernel names, and its node
# ids sorted (to compare replays): streamtrace's `launches`.
replays_of() {
    tq "$1" launches kernel --window nvtx:graph_loop+gpu
}

# replays_bad N REPLAYS: the first thing wrong with replays_of's lines, in
# words; nothing where each ran N kernels of one graph, N distinct nodes,
# the same graph and nodes as the first
replays_bad() {
    local f g="" sig="" first=1
    while read -r -a f; do
        [ ${#f[@]} -gt 0 ] || continue
        [ "${f[1]}" = "$1" ] || { echo "a replay ran ${f[1]} kernels"; return 0; }
        [ "${f[2]}" != - ] && [[ ${f[2]} != *,* ]] ||
            { echo "a replay ran kernels of graph ids ${f[2]} (- : launched outside a graph)"; return 0; }
        [ "${f[3]}" = "$1" ] || { echo "a replay ran ${f[3]} distinct graph nodes"; return 0; }
        [ "$first" = 0 ] || g=${f[2]} sig=${f[5]:-} first=0
        [ "${f[2]}" = "$g" ] || { echo "replays ran graphs $g and ${f[2]}"; return 0; }
        [ "${f[5]:-}" = "$sig" ] || { echo "the replays ran different graph nodes"; return 0; }
    done <<<"$2"
}

@test "every replay runs the captured kernels: one graph, N nodes, the same each time" {
    need_run main
    need_trace main
    local k n captured reps count bad line
    need_figure_in k main iterations || return 1
    need_figure_in n main kernels || return 1
    k=${k%%.*} n=${n%%.*}
    draw_on_fail main --window nvtx:capture --window 'nvtx:graph_loop+gpu'
    captured=$(count_calls main capture cudaLaunchKernel)
    [ "$captured" = "$n" ] || { say_fail \
        "the capture records the $n launches of one iteration: $n cudaLaunchKernel calls in \"capture\"" \
        "$captured" \
        "launch all N kernels after cudaStreamBeginCapture and before cudaStreamEndCapture (TODO 1): a kernel launched before the capture runs once, at once, and is not in the graph"; return 1; }
    reps=$(replays_of main)
    count=0
    while read -r line; do [ -z "$line" ] || count=$((count + 1)); done <<<"$reps"
    bad=$(replays_bad "$n" "$reps")
    [ "$count" = "$k" ] && [ -z "$bad" ] || say_fail \
        "$k replays, each $n kernels of one graph, $n distinct nodes, the same graph and nodes in every replay" \
        "$count replays with kernels of a graph${bad:+; $bad}" \
        "one capture, one cudaGraphInstantiate, and a cudaGraphLaunch of that exec per replay (TODO 1-3)"
}

# last_wait VAR RUN NAME: VAR = "END CALL" of the last cudaStreamSynchronize
# or cudaDeviceSynchronize that returned cudaSuccess in the NVTX range NAME
# after the range's last launch (cudaLaunchKernel*, cudaGraphLaunch*);
# empty where there is none.
last_wait() {
    local -n _lw_v=$1
    local lines=() f q i at last=-1 best=-1
    _lw_v=""
    for q in 'api:cudaLaunchKernel*' 'api:cudaGraphLaunch*'; do
        tq_lines lines "$2" returned "$q" --window "nvtx:$3"
        [ ${#lines[@]} -gt 0 ] || continue
        IFS=$'\t' read -r -a f <<<"${lines[-1]}"
        ns_of at "${f[0]:-}"
        [ "$at" -le "$last" ] || last=$at
    done
    for q in api:cudaStreamSynchronize api:cudaDeviceSynchronize; do
        tq_lines lines "$2" returned "$q" --window "nvtx:$3"
        for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
            IFS=$'\t' read -r -a f <<<"${lines[i]}"
            [ "${f[11]:-}" = 0 ] || continue
            ns_of at "${f[0]:-}"
            [ "$at" -gt "$last" ] && [ "$at" -gt "$best" ] && best=$at _lw_v="${f[1]} ${f[5]}"
            break
        done
    done
}

# loop_time NAME FIGURE RUN: passes, or says what is wrong: a wait
# (cudaStreamSynchronize or cudaDeviceSynchronize) made in the NVTX range NAME
# after its last launch, and every kernel queued in the range covered by a
# host wait before it ended (streamtrace ask's `done`: what the program
# guaranteed, the same in every run); the printed
# time, laid from the range's start, reaches past that kernel's end too
# (0.01 ms allowed: the clock is read right after the range opens), so it was
# read after the wait, not before it with the wait still inside the range;
# and the printed FIGURE (us per iteration) times the iterations is the
# range's length, within 0.5% + 0.1 ms (the same host interval, read twice).
# No range or figure, or no wait after the last launch, is the program's in
# every run: HOPELESS (second_chance makes no re-run).
# RUN comes last: second_chance gives it.
loop_time() {
    local name=$1 fig=$2 run=$3 k us span last d
    figure_in k "$run" iterations
    figure_in us "$run" "$fig"
    local r
    tq_line r "$run" 1 list "nvtx:$name"
    span=""
    [ -z "${r[0]:-}${r[1]:-}" ] || span="${r[0]:-} ${r[1]:-}"
    last=$(last_end "$(tq "$run" list kernel --window "nvtx:$name+gpu")")
    last=${last:-0}
    [ -n "$span" ] && [ -n "$us" ] && [ -n "$k" ] || {
        say_fail "an NVTX range \"$name\" and the figures $fig and iterations" \
            "range: ${span:-none}; $fig = ${us:-none}" "keep the given loop and its figures"; return "$HOPELESS"; }
    # the wait: a ...Synchronize call in the range after its last launch
    local wait
    last_wait wait "$run" "$name"
    [ -n "$wait" ] || { say_fail \
        "a wait (cudaStreamSynchronize) in \"$name\" after its last launch, returning after its last kernel ends at $(fmt "$last") ms" \
        "no wait after the last launch in \"$name\"" \
        "the time of a loop of launches counts the work only if the host waits for it: keep cudaStreamSynchronize(s) after the loop, before t1 (a GPU that keeps up with the launches hides the missing wait in one run, not in the next)"; return "$HOPELESS"; }
    # what the program guaranteed: every kernel the loop queued waited for
    # by the host before the range ended (streamtrace ask's `done`), not a
    # wait that happened to return after the last kernel
    local $SETTLED_FIELDS
    IFS=$'\t' read -r $SETTLED_FIELDS <<<"$(ask "$run" "done nvtx:$name#1")"
    [ "$answer" = done ] || { say_fail \
        "the wait after the loop (${wait#* }) covers all of its work, before \"$name\" ends" \
        "$(if [ "$answer" = not-done ]; then printf 'no wait covered the %s on stream %s (%s), queued at %.3f ms, by the end of the range at %.3f ms' "$what" "$st" "$kind" "$queued_ms" "$ms"; else echo "$answer: $range"; fi)" \
        "wait for the loop's own stream, s, with cudaStreamSynchronize(s): a wait for another stream returns without waiting for s"; return "$HOPELESS"; }
    local pe
    pe=$(calc -f '%.6f' 'a + u * k / 1000' u="$us" k="$k" a="${span% *}")
    is_true 'p >= l - 0.01' p="$pe" l="$last" || { say_fail \
        "$fig x $k iterations, from the start of \"$name\", reaches past its last kernel's end at $(fmt "$last") ms: the clock was read after the wait" \
        "it ends at $(fmt "$pe") ms, $(fmt "$(calc 'l - p' p="$pe" l="$last")") ms before that kernel ended" \
        "read t1 after cudaStreamSynchronize(s), not before it: a clock read right after the launches times the launches only, while the GPU still works"; return 1; }
    d=$(calc '(u * k / 1000 - (b - a) < 0 ? (b - a) - u * k / 1000 : u * k / 1000 - (b - a)) - 0.005 * (b - a)' \
        u="$us" k="$k" a="${span% *}" b="${span#* }")
    is_true 'd <= 0.1' d="$d" || say_fail \
        "$fig x $k iterations = the length of \"$name\", $(fmt "$(calc 'b - a' a="${span% *}" b="${span#* }")") ms" \
        "$fig = $us us: $(fmt "$(calc 'u * k / 1000' u="$us" k="$k")") ms" \
        "$fig is the host time of the whole loop, t1 - t0 in ms, times 1000 for us, divided by the iterations"
}

@test "each loop's host time covers its kernels and is the time printed" {
    need_run main
    need_trace main
    draw_on_fail main --window 'nvtx:stream_loop+gpu' --window 'nvtx:graph_loop+gpu'
    second_chance main loop_time stream_loop stream_us || return 1
    second_chance main loop_time graph_loop graph_us
}

# ------------------------------------------------------------ part 2

# branches RUN WINDOW: "OVERLAP A_ORDER B_ORDER" for branch_a_kernel and
# branch_b_kernel in WINDOW: the share of the shorter one that overlaps the
# other, and the order of each against join_kernel (before: the branch
# ended before the join began).
branches() {
    local run=$1 ov a b
    shift
    local x y nx ny
    read -r _ x y <<<"$(tq "$run" overlap kernel:branch_a kernel:branch_b "$@")"
    ns_of nx "${x:-0}"
    ns_of ny "${y:-0}"
    ov=$([ "$nx" -gt "$ny" ] && echo "$x" || echo "$y")
    tq_in a "$run" order kernel:branch_a kernel:join "$@" || true
    tq_in b "$run" order kernel:branch_b kernel:join "$@" || true
    echo "${ov:-0} ${a:-missing} ${b:-missing}"
}

# joined RUN BRANCH: on the streams (the first BRANCH and join_kernel: the
# fork and join's run on the streams comes first), "before" where the
# program ordered the join after BRANCH (streamtrace ask: stream order,
# the event and the wait), else ask's word: observed-only (this run's
# schedule only), not-ordered, unknown, none. A recording older than
# format 5 ties no wait to its event record (the kit's kept runs of 2026-11;
# its trace tool writes format 6): there, the order the GPU showed, as
# this check judged before.
joined() {
    local a
    a=$(ask "$1" "order kernel:$2#1 kernel:join#1") || true
    case $a in
        guaranteed*) echo before ;;
        unknown*"older than format 5"*)
            tq "$1" order "kernel:$2" kernel:join --window 'nvtx:fork_stream+gpu' || true ;;
        *) a=${a%%$'\t'*}; echo "${a:-none}" ;;
    esac
}

# fork_runs RUN: one line per run of the fork and join: "NAME OVERLAP A B"
# (branches): "streams" for the run on the streams, "replay K" for each.
# On the streams A and B say what the program guaranteed (joined); in a
# replay what the GPU did: the graph's own edges are not in the trace.
fork_runs() {
    local r n ov a b
    read -r ov a b <<<"$(branches "$1" --window 'nvtx:fork_stream+gpu')"
    echo "streams $ov $(joined "$1" branch_a) $(joined "$1" branch_b)"
    tq_in n "$1" count nvtx:replay
    for r in $(seq 1 "$n"); do
        echo "replay_$r $(branches "$1" --window "nvtx:replay#$r+gpu")"
    done
}

# branches_free RUN: passes, or says what is wrong. On the streams, what the
# program guaranteed: nothing orders one branch after the other (apart; a
# chain is the program's in every run: HOPELESS), or, in a trace that
# cannot tell, the two overlapping for OVERLAP_MIN of the shorter, as
# measured. In the replays, measured: the graph's own edges are not in the
# trace, and every replay launches the same graph (the check of the fork's
# replays), so one replay whose branches overlapped for OVERLAP_MIN of the
# shorter shows a graph that left them free; a GPU full of other programs'
# work may run them one after the other in some replays, not in all of
# them and its re-runs (second_chance). RUN comes last.
branches_free() {
    local run=$1 runs want reps=0 best=0 name ov free why
    figure_in want "$run" fork_replays
    want=${want%%.*}
    runs=$(fork_runs "$run")
    while read -r name ov _; do
        [[ $name == replay_* ]] || continue
        reps=$((reps + 1))
        is_true 'o > b' o="$ov" b="$best" && best=$ov
    done <<<"$runs"
    local which
    # the branches' first run: the fork and join on the streams
    IFS=$'\t' read -r free which why <<<"$(apart "$run" kernel:branch_a#1 kernel:branch_b#1)"
    case $free in
        ordered) say_fail \
            "branch_a_kernel and branch_b_kernel on the streams, neither ordered after the other: free to run at once" \
            "the program orders $([ "$which" = 1 ] && echo "branch_b_kernel after branch_a_kernel" || echo "branch_a_kernel after branch_b_kernel"): $why" \
            "branch A on the origin stream, branch B on the side stream, the side stream told to wait for forked only (TODO 4): the capture keeps what the streams say, so two branches on one stream are one chain in the graph too"
            return "$HOPELESS" ;;
        unknown)
            why=$which
            read -r _ ov _ <<<"${runs%%$'\n'*}"
            is_true 'o >= m' o="${ov:-0}" m="$OVERLAP_MIN" || { say_fail \
                "branch_a_kernel and branch_b_kernel overlapping on the streams for at least $(calc '100 * m' m="$OVERLAP_MIN")% of the shorter (this trace cannot tell what the program ordered: $why)" \
                "$(calc -f '%.0f%%' '100 * o' o="${ov:-0}")" \
                "branch A on the origin stream, branch B on the side stream, the side stream told to wait for forked only (TODO 4)"
                return 1; } ;;
    esac
    [ "$reps" = "$want" ] && is_true 'b >= m' b="$best" m="$OVERLAP_MIN" || say_fail \
        "$want replays of the fork, the two branches overlapping for at least $(calc '100 * m' m="$OVERLAP_MIN")% of the shorter in one of them at least (the same graph in each: one overlap shows that it left them free)" \
        "$reps replays, the most overlap $(calc -f '%.0f%%' '100 * b' b="$best")" \
        "capture fork_join() from the origin stream (TODO 6) as it runs on the streams: the capture keeps what the streams say"
}

@test "the two branches are free to run at the same time: nothing orders them on the streams, and a replay runs them at once" {
    need_run main
    need_trace main
    local want
    need_figure_in want main fork_replays || return 1
    draw_on_fail main --window 'nvtx:fork_stream+gpu' --window 'nvtx:replay+gpu'
    second_chance main branches_free
}

# order_words RUNS: of fork_runs' lines, those whose branch A or B is not
# before the join, in words ("replay_3: branch A before, branch B not
# ordered by the program before the join; ...")
order_words() {
    local name ov a b out=""
    while read -r name ov a b _; do
        [ -n "$name" ] || continue
        [ "$a" != before ] || [ "$b" != before ] || continue
        out+="${out:+; }$name: branch A $(order_word "$a"), branch B $(order_word "$b") the join"
    done <<<"$1"
    printf '%s' "$out"
}
# order_word ANSWER: ask's answer of an order as the hint says it
order_word() {
    case $1 in
        observed-only) echo "not ordered by the program before (in this run it ran before)" ;;
        not-ordered) echo "not ordered by the program before" ;;
        *) echo "$1" ;;
    esac
}

@test "the join starts after both branches end, on the streams and in every replay" {
    need_run main
    need_trace main
    local runs bad want end reps line
    draw_on_fail main --window 'nvtx:fork_stream+gpu' --window 'nvtx:replay+gpu'
    runs=$(fork_runs main)
    bad=$(order_words "$runs")
    # the capture of the fork and join must have ended, and its replays run
    end=$(tq main returned api:cudaStreamEndCapture --window nvtx:fork_capture | cut -f 12 | head -n 1)
    [ "${end:-0}" = 0 ] || bad+="${bad:+; }the capture's cudaStreamEndCapture returned $end ($(err_name "$end"))"
    figure_in want main fork_replays
    reps=0
    while read -r line; do [[ $line != replay_* ]] || reps=$((reps + 1)); done <<<"$runs"
    [ "$reps" = "${want%%.*}" ] ||
        bad+="${bad:+; }$reps replays of ${want:-(no figure fork_replays)}"
    [ -z "$bad" ] || say_fail \
        "join_kernel ordered after branch_a_kernel and branch_b_kernel on the streams (stream order, the event and the wait), and starting after they end in each replay" \
        "$bad" \
        "record joined on the side stream after branch B, and make the origin stream wait for it before the join (TODO 5): an event recorded before the work it should mark marks nothing"
}

# fork_nodes RUN: one line per replay of the fork and join that did not run
# the whole capture in one graph: pre_kernel, branch_a_kernel,
# branch_b_kernel, join_kernel and the D2H copy back, each once, all with
# one graph id: "replay K: WHAT".
fork_nodes() {
    local r n f w s x lines=() ids
    local -A c=() g=()
    tq_in n "$1" count nvtx:replay
    for ((r = 1; r <= n; r++)); do
        tq_lines lines "$1" graph gpu --window "nvtx:replay#$r+gpu"
        c=() g=() s="" ids=""
        for x in "${lines[@]}"; do
            [ -n "$x" ] || continue
            IFS=$'\t' read -r -a f <<<"$x"
            what_of w "${f[@]}"
            c[$w]=$((${c[$w]:-0} + 1))
            [ -n "${g[${f[10]}]+x}" ] || { g[${f[10]}]=1; ids+=" ${f[10]}"; }
        done
        for w in pre_kernel branch_a_kernel branch_b_kernel join_kernel "copy D2H"; do
            [ "${c[$w]:-0}" = 1 ] || s+="${s:+, }$w x${c[$w]:-0}"
        done
        [ ${#g[@]} = 1 ] && [ "$ids" != " -" ] || s+="${s:+, }graph ids${ids:- none} (- : no graph)"
        [ -z "$s" ] || echo "replay $r: $s"
    done
}

# what_of VAR FIELD...: VAR = a record (the fields of a `list`, `corr` or
# `graph` line) as the checks name it: a kernel's name without its
# arguments, "memset", or "copy DIR" (WHAT_AWK's what(), in bash)
what_of() {
    case $5 in
        kernel) printf -v "$1" '%s' "${7%%(*}" ;;
        memset) printf -v "$1" memset ;;
        *) printf -v "$1" '%s %s' "$5" "$7" ;;
    esac
}

@test "every replay of the fork runs its whole capture: pre_kernel, both branches, the join and the copy back, in one graph" {
    need_run main
    need_trace main
    local o n
    tq_in n main count nvtx:replay
    draw_on_fail main --window nvtx:fork_stream+gpu --window 'nvtx:replay#1+gpu'
    o=$(fork_nodes main)
    [ "$n" -ge 1 ] && [ -z "$o" ] || say_fail \
        "in each NVTX range \"replay\", one graph running pre_kernel, branch_a_kernel, branch_b_kernel, join_kernel and a D2H copy, each once" \
        "${o:-no range \"replay\"}" \
        "a capture records only the work queued into the captured streams, the origin stream and those that waited for an event recorded in it: work put on another stream before the fork runs once, at once, and is missing from every replay (keep pre_kernel on f->origin, and the fork as TODO 4 says)"
}

# Each replay's result is read after the host waited for the replay: every
# GPU operation queued before each range "read" covered by a host wait when
# it began (streamtrace ask's `idle`: a wait for the origin stream covers
# every node of a graph launched in it, the branch CUPTI runs on an internal
# stream too), not a read that happened to come after the replay's end.
@test "each replay's result is read after the replay ends" {
    need_run main
    need_trace main
    local n $SETTLED_FIELDS
    tq_in n main count nvtx:read
    draw_on_fail main --window 'nvtx:replay#1+gpu' --window 'nvtx:read#1'
    [ "$n" -ge 1 ] || say_fail "each NVTX range \"read\" begins after the host waited for its replay" \
        "no range \"read\"" "keep part 2's replays as given: each is read in a range \"read\""
    IFS=$'\t' read -r $SETTLED_FIELDS <<<"$(ask main "idle nvtx:read")"
    case $answer in
        idle) return 0 ;;
        not-idle) say_fail "each NVTX range \"read\" begins after the host waited for its replay" \
            "$(printf '"%s" began at %.3f ms, and no wait covered the %s on stream %s (%s), queued at %.3f ms: it %s' \
                "$range" "$ms" "$what" "$st" "$kind" "$queued_ms" \
                "$(ran_on "$ended_ms" "$ms")")" \
            "cudaGraphLaunch returns before the replay runs: wait for the origin stream before reading h_out (TODO 7)" ;;
        *) say_fail "each NVTX range \"read\" begins after the host waited for its replay" "$answer: $range" \
            "wait for the origin stream before reading h_out (TODO 7)" ;;
    esac
}

# ------------------------------------------------------------ part 3

# pitfall RUN RANGE CALL_REGEX FIGURE END_FIGURE: "ok", or what is wrong:
# in NVTX range RANGE the trace has a cudaStreamBeginCapture, a call
# matching CALL_REGEX that returned an error, and a cudaStreamEndCapture;
# the program printed FIGURE = the call's code and END_FIGURE = the end's.
pitfall() {
    local run=$1 range=$2 re=$3 fig=$4 endfig=$5 calls got gotend code="" endcode="" begun="" name rc
    tq_in calls "$run" returned api --window "nvtx:$range" || true
    # the first call matching CALL_REGEX, the first cudaStreamEndCapture: what they returned
    while IFS=$'\t' read -r _ _ _ _ _ name _ _ _ _ _ rc; do
        if [[ $name == cudaStreamBeginCapture* ]]; then begun=1; fi
        if [ -z "$code" ] && [[ $name =~ $re ]]; then code=$rc; fi
        if [ -z "$endcode" ] && [[ $name == cudaStreamEndCapture* ]]; then endcode=$rc; fi
    done <<<"$calls"
    figure_in got "$run" "$fig"
    figure_in gotend "$run" "$endfig"
    [ -n "$begun" ] && [ -n "$code" ] || {
        echo "in \"$range\": $([ -n "$begun" ] && echo "a capture, but no call matching $re" || echo "no capture begun")"; return 0; }
    [ "$code" != 0 ] || { echo "in \"$range\": the call returned cudaSuccess"; return 0; }
    is_true 'g == c' g="${got:--1}" c="$code" || {
        echo "in \"$range\": the call returned $code ($(err_name "$code")), the program printed $fig = ${got:-nothing}"; return 0; }
    is_true 'g == c' g="${gotend:--1}" c="${endcode:--2}" || {
        echo "in \"$range\": cudaStreamEndCapture returned ${endcode:-nothing} ($(err_name "$endcode")), the program printed $endfig = ${gotend:-nothing}"; return 0; }
    echo ok
}

@test "the pitfall part reports what the runtime said" {
    need_run main
    need_trace main
    local a b
    draw_on_fail main --window nvtx:pitfall_sync --window nvtx:pitfall_legacy
    a=$(pitfall main pitfall_sync '^cudaStreamSynchronize' sync_in_capture sync_end_capture)
    b=$(pitfall main pitfall_legacy '^cudaMemsetAsync' legacy_in_capture legacy_end_capture)
    [ "$a" = ok ] && [ "$b" = ok ] || say_fail \
        "each refused call made during its capture, its answer and cudaStreamEndCapture's printed as the trace recorded them" \
        "$([ "$a" = ok ] || echo "$a")$([ "$a" != ok ] && [ "$b" != ok ] && echo "; ")$([ "$b" = ok ] || echo "$b")" \
        "make the call itself and keep what it returns, outside CUDA_CHECK (TODO 8): the lesson is the runtime's answer"
}

@test "the replayed graph is updated in place, not captured again" {
    need_run main
    need_trace main
    local begins inst sets launches graphs
    draw_on_fail main --window nvtx:update
    begins=$(count_calls main update cudaStreamBeginCapture)
    inst=$(count_calls main update cudaGraphInstantiate)
    sets=$(count_calls main update cudaGraphExecKernelNodeSetParams cudaGraphExecNodeSetParams cudaGraphExecUpdate)
    launches=$(count_calls main update cudaGraphLaunch)
    graphs=$(tq main graph kernel:update_kernel --window nvtx:update+gpu | cut -f 11 | sort -u | paste -sd, -)
    [ "$begins" = 1 ] && [ "$inst" = 1 ] && [ "$sets" -ge 1 ] && [ "$launches" = 2 ] &&
        [[ $graphs =~ ^[0-9]+$ ]] || say_fail \
        "in \"update\": one capture, one cudaGraphInstantiate, a cudaGraphExecKernelNodeSetParams (or cudaGraphExecUpdate), two cudaGraphLaunch running update_kernel in one graph" \
        "$begins captures, $inst cudaGraphInstantiate, $sets updates of the exec, $launches cudaGraphLaunch; update_kernel ran in graph ${graphs:-none}" \
        "change the parameters in the instantiated graph: cudaGraphExecKernelNodeSetParams(exec, node, &params) (TODO 9); capturing and instantiating again costs what the graph saves"
}

# ------------------------------------------------------------ every lab

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace and output.
your_run() {
    your_run_ok main || return 0
    local k
    figure_in k main iterations
    your_fig speedup "$(ratio "$(figure main stream_us)" "$(figure main graph_us)")" x \
        "host time per iteration, stream loop / graph loop"
    your_fig stream_us "$(figure main stream_us)" us \
        "host time per iteration of N launches on a stream"
    local u=""
    is_positive "$k" && tq_in u main union kernel --window 'nvtx:graph_loop+gpu'
    your_fig graph_gpu_us "$(calc '1000 * u / k' u="$u" k="$k")" us \
        "GPU time per replay with a kernel running (the trace)"
}
