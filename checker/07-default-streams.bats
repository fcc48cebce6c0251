#!/usr/bin/env bats
# 07-default-streams.bats -- the checks of lab 07 (default streams).
# Run from the lab folder with `make check`, or `make check LAB=07` at the top.
# The program runs once under the trace tool, all three parts, each inside an
# NVTX range of the main thread: "part1_kinds" (a long kernel on the legacy
# default stream, then the same short kernel on a non-blocking, a blocking
# and the per-thread default stream), "part2_legacy" and "part2_per_thread"
# (two host threads, as given on stream 0, then on their own streams), and
# "part3_pipeline" (lab 05's pipeline with a scratch buffer cleared per
# chunk). Every check reads that run. Each is a structure of the trace --
# which stream, of which kind, queued by which host thread, in which order,
# overlapping what -- and never a length of time: another program on the
# same GPU can delay our work, not reorder what CUDA orders. (That it did not
# keep apart two kernels of ours that both fit on the GPU was measured: on an
# H100 every verdict was the same alone and beside three other checkers,
# in the kit's own GPU test of this lab.)

bats_require_minimum_version 1.5.0
LAB_ID=07-default-streams
PROG=default_streams
load lib/checks

KINDS=(--window nvtx:part1_kinds)
THREADS=(--window nvtx:part2_per_thread)
PIPE=(--window nvtx:part3_pipeline)

setup_file() {
    build_lab
    run_beside badopt -- --frobnicate
    run_beside badpart -- --part 4
    run_beside nodev --env CUDA_VISIBLE_DEVICES= --
    run_lab main --trace
    runs_done
    # the questions its checks ask of the run, answered in one parse
    tq_ahead main <<'EOF'
        corr api
        corr gpu
        corr gpu --window nvtx:part2_per_thread
        corr nvtx
        corr nvtx:part3_pipeline
        count api:cudaDeviceSynchronize --window nvtx:part2_per_thread
        count gpu --stream default --window nvtx:part3_pipeline
        count kernel:spin_blocking_kernel
        count kernel:spin_legacy_kernel
        count kernel:spin_nonblocking_kernel
        count kernel:spin_per_thread_kernel
        list event --window nvtx:part2_per_thread
        list gpu --stream default --window nvtx:part3_pipeline
        list gpu --window nvtx:part2_per_thread
        list kernel:spin_blocking_kernel
        list kernel:spin_legacy_kernel
        list kernel:spin_nonblocking_kernel
        list kernel:spin_per_thread_kernel
        list sync --window nvtx:part2_per_thread
        order kernel:spin_legacy_kernel kernel:spin_blocking_kernel
        order kernel:spin_legacy_kernel kernel:spin_nonblocking_kernel
        order kernel:spin_legacy_kernel kernel:spin_per_thread_kernel
        overlap copy kernel --window nvtx:part3_pipeline
        overlap kernel:spin_legacy_kernel kernel:spin_nonblocking_kernel
        span gpu --window nvtx:part2_legacy
        span gpu --window nvtx:part2_per_thread
        streams
        streams gpu --window nvtx:part2_per_thread
        streams kernel:spin_blocking_kernel
        streams kernel:spin_nonblocking_kernel
        streams sync --window nvtx:part2_per_thread
        threads
EOF
    # and what the program guaranteed, asked of the run in one parse
    ask_ahead main <<'EOF'
        order kernel:spin_legacy_kernel kernel:spin_blocking_kernel
        order kernel:spin_legacy_kernel kernel:spin_per_thread_kernel
        settled nvtx:part*
EOF
}

# need_kernel NAME: the trace of run main holds kernel NAME; else say so.
need_kernel() {
    [ "$(tq main count "kernel:$1")" -ge 1 ] || {
        say_fail "$1 in the trace" "no such kernel" "keep part_kinds() as given: its four kernel launches"
        return 1
    }
}

# stream_on VAR KIND STREAM [SYNC]: VAR = a stream in words, as the hints
# name it ("the legacy default stream (7)", "a created stream (13)"; with
# SYNC, "a created non-blocking stream (14)")
stream_on() {
    case $2 in
        default) printf -v "$1" 'the legacy default stream (%s)' "$3" ;;
        per-thread) printf -v "$1" 'a per-thread default stream (%s)' "$3" ;;
        created) printf -v "$1" 'a created %sstream (%s)' "${4+$4 }" "$3" ;;
        *) printf -v "$1" 'stream %s (%s)' "$3" "$2" ;;
    esac
}

# stream_words "ID KIND DEVICE SYNC": a stream as a student reads it.
stream_words() {
    local id kind dev sync w
    read -r id kind dev sync <<<"$1"
    [ -n "$kind" ] || { echo "no stream"; return 0; }
    stream_on w "$kind" "$id" "$sync"
    echo "$w"
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace.
your_run() {
    your_run_ok main || return 0
    local k seen=0 waited=0 legacy own ov
    for k in nonblocking blocking per_thread; do
        [ "$(tq main count "kernel:spin_${k}_kernel")" -ge 1 ] || continue
        seen=$((seen + 1))
        [ "$(tq main order kernel:spin_legacy_kernel "kernel:spin_${k}_kernel")" = before ] &&
            waited=$((waited + 1))
    done
    [ "$seen" = 3 ] || waited=""
    your_fig waited "$waited" "of 3" \
        "part 1: the short kernels that started only after the legacy kernel ended"
    legacy=$(tq main span gpu --window nvtx:part2_legacy) own=$(tq main span gpu "${THREADS[@]}")
    your_fig threads_speedup "$(ratio "$legacy" "$own")" x \
        "part 2: the GPU time of the threads' round trips on stream 0 / on their own streams"
    tq_in ov main overlap copy kernel "${PIPE[@]}"
    read -r _ ov _ <<<"$ov"
    your_fig pipe_overlap_pct "$(calc '100 * f' f="$ov")" % \
        "part 3: of the pipeline's copy time, the share alongside a kernel"
}

# hint_of CAUSE WHY FIXED: a hint that names the cause the trace shows
# (CAUSE, what ran where: ran_elsewhere) followed by WHY; FIXED where the
# trace names none.
hint_of() {
    if [ -n "$1" ]; then echo "$1: $2"; else echo "$3"; fi
}

# ------------------------------------------------------------ part 1

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0" {
    check_exits_ok main \
        "a CUDA error names the file:line and the call; a wrong result is the next check"
}

@test "every element of the result is right" {
    check_verified main "RESULT: verified every result of the parts that were run" WRONG \
        "part 2: each thread's numbers go in, through crunch() and back (TODO 3); part 3: the bins of a chunk must be zero when its kernel starts and copied back after it (TODO 4)"
}

@test "the two created streams are one blocking and one non-blocking" {
    need_run main
    need_trace main
    draw_on_fail main "${KINDS[@]}"
    need_kernel spin_blocking_kernel || return 1
    need_kernel spin_nonblocking_kernel || return 1
    local b nb
    tq_in b main streams kernel:spin_blocking_kernel
    tq_in nb main streams kernel:spin_nonblocking_kernel
    [[ $b == *" created "*" blocking" && $nb == *" created "*" non-blocking" ]] || say_fail \
        "spin_blocking_kernel on a created blocking stream, spin_nonblocking_kernel on a created non-blocking one" \
        "spin_blocking_kernel on $(stream_words "$b"), spin_nonblocking_kernel on $(stream_words "$nb")" \
        "TODO 1: cudaStreamCreate makes a blocking stream; only cudaStreamCreateWithFlags with cudaStreamNonBlocking makes a non-blocking one"
}

# start_after_end A B: how many ms kernel B started after kernel A ended
# (negative: while A still ran).
start_after_end() {
    local a b
    tq_field a main 1 2 list "kernel:$1"
    tq_field b main 1 1 list "kernel:$2"
    calc -f '%.3f\n' 'b - a' a="$a" b="$b"
}

@test "the kernels on the blocking stream and on the per-thread default stream waited for the legacy kernel" {
    need_run main
    need_trace main
    draw_on_fail main "${KINDS[@]}"
    need_kernel spin_legacy_kernel || return 1
    local k label answer words why
    for k in spin_blocking_kernel spin_per_thread_kernel; do
        need_kernel "$k" || return 1
        label="" answer="" words="" why=""
        IFS=$'\t' read -r label answer words why < <(unguaranteed main <<<"order kernel:spin_legacy_kernel kernel:$k"$'\t'"$k") || true
        [ -z "$answer" ] || { say_fail \
            "$k ordered after spin_legacy_kernel (on stream 0) by the streams: the legacy default stream waits for the blocking streams' earlier work, and their later work waits for it" \
            "$words: $why; it ran on $(stream_words "$(tq main streams "kernel:$k")")" \
            "the legacy default stream and every blocking stream wait for each other; a stream made with cudaStreamNonBlocking does not (TODO 1)"
            return 1; }
    done
}

@test "the kernel on the non-blocking stream ran while the legacy kernel ran" {
    need_run main
    need_trace main
    draw_on_fail main "${KINDS[@]}"
    need_kernel spin_legacy_kernel || return 1
    need_kernel spin_nonblocking_kernel || return 1
    local ms
    ms=$(tq main overlap kernel:spin_legacy_kernel kernel:spin_nonblocking_kernel | cut -d ' ' -f 1)
    is_true 'ms > 0' ms="${ms:-0}" || say_fail \
        "spin_nonblocking_kernel running while spin_legacy_kernel runs" \
        "it started $(start_after_end spin_legacy_kernel spin_nonblocking_kernel) ms after the legacy kernel ended, on $(stream_words "$(tq main streams kernel:spin_nonblocking_kernel)")" \
        "only a stream created with the flag cudaStreamNonBlocking skips the wait for the legacy default stream (TODO 1)"
}

# The program says which kernels waited, from the GPU's clock stamps
# (waited_blocking and so on); the trace says when each kernel ran. They must
# tell the same story: a kernel waited if it started after the legacy kernel
# ended.
@test "the program's verdicts on which kernels waited agree with the trace" {
    need_run main
    need_trace main
    draw_on_fail main "${KINDS[@]}"
    need_kernel spin_legacy_kernel || return 1
    local k fig said traced gap
    for k in nonblocking blocking per_thread; do
        fig=waited_$k
        need_figure_in said main "$fig" || return 1
        need_kernel "spin_${k}_kernel" || return 1
        traced=0
        [ "$(tq main order kernel:spin_legacy_kernel "kernel:spin_${k}_kernel")" = before ] && traced=1
        gap=$(start_after_end spin_legacy_kernel "spin_${k}_kernel")
        is_true 's == t' s="$said" t="$traced" || { say_fail \
            "$fig = $traced: in the trace spin_${k}_kernel started $(calc -f '%.3f ms %s' 'd < 0 ? -d : d, d < 0 ? "before" : "after"' d="${gap:-0}") the legacy kernel ended" \
            "$fig = $said" \
            "TODO 2: a kernel waited if its start (h_st[k].start) is at or after the legacy kernel's end (h_st[ON_LEGACY].end); its start against the legacy kernel's start says nothing"
            return 1; }
    done
}

# given_elsewhere [RUN]: what of the given code of parts 1 and 2 ran on
# another stream than it names, in words ("spin_legacy_kernel on a created
# stream (13); part 2 as given: H2D copy on ..."); nothing where all ran
# where it should. Each copy, kernel and memset is taken with the runtime
# call that queued it (from the trace's records, by correlation id): part
# 2's given version is the work whose calls were made in its NVTX range
# "part2_legacy" (the last, where there are several).
given_elsewhere() {
    local run=${1:-main} file l x f r0="" r1="" st k w on out="" p2=""
    local -A kind=() as=() said=()
    local lines=()
    tq_lines lines "$run" streams
    for l in "${lines[@]}"; do
        x=${l#* }
        kind[${l%% *}]=${x%% *}
    done
    tq_file file "$run" corr nvtx
    while IFS=$'\t' read -r -a f; do
        [ "${f[5]:-}" = part2_legacy ] || continue
        ns_of r0 "${f[0]}"; ns_of r1 "${f[1]}"
    done <"$file"
    tq_file file "$run" corr api
    while IFS=$'\t' read -r -a f; do
        ns_of x "${f[0]}"
        as[${f[10]:--}]=$x
    done <"$file"
    tq_file file "$run" corr gpu
    while IFS=$'\t' read -r -a f; do
        [ -n "${as[${f[10]:--}]+x}" ] || continue
        st=${as[${f[10]}]} k=${kind[${f[4]}]:-unknown}
        case ${f[3]} in
            copy) w="${f[5]} copy" ;;
            kernel) w=${f[5]%%(*} ;;
            memset) w=memset ;;
            *) continue ;;
        esac
        stream_on on "$k" "${f[4]}"
        l=()
        [ "$w" = spin_legacy_kernel ] && [ "$k" != default ] && l+=("$w on $on")
        [ "$w" = spin_per_thread_kernel ] && [ "$k" != per-thread ] && l+=("$w on $on")
        for x in "${l[@]}"; do
            [ -z "${said[$x]+x}" ] || continue
            said[$x]=1 out+=${out:+; }$x
        done
        [ -n "$r0" ] && ((st >= r0 && st <= r1)) && [ "$k" != default ] || continue
        x="$w on $on"
        [ -z "${said[$x]+x}" ] || continue
        said[$x]=1
        if [ -z "$p2" ]; then p2="part 2 as given: $x"; else p2+=", $x"; fi
    done <"$file"
    [ -z "$p2" ] || [ -n "${said[$p2]+x}" ] || out+=${out:+; }$p2
    printf '%s\n' "$out"
}

# The given code of parts 1 and 2 puts its work where the lesson needs it:
# part 1's long kernel on the legacy default stream and one short kernel on
# the per-thread default stream (the two kinds of default stream), and the
# first version of part 2 on stream 0 (what the second is compared with).
# Which stream each record ran on is a structure of the trace.
@test "the given launches and copies of parts 1 and 2 ran on the streams they name" {
    need_run main
    need_trace main
    draw_on_fail main "${KINDS[@]}" --window nvtx:part2_legacy
    need_kernel spin_legacy_kernel || return 1
    need_kernel spin_per_thread_kernel || return 1
    local seen
    seen=$(given_elsewhere)
    [ -z "$seen" ] || say_fail \
        "spin_legacy_kernel on the legacy default stream, spin_per_thread_kernel on a per-thread default stream, and every copy and kernel of part 2's given version on the legacy default stream" \
        "$seen" \
        "keep the given code as it is: part_kinds() launches spin_legacy_kernel into stream 0 and spin_per_thread_kernel into cudaStreamPerThread, the two kinds of default stream; round_trip_legacy() gives stream 0 to both copies and to crunch(), and crunch() launches into the stream it is given: that version is what yours (TODO 3) is compared with"
}

# ------------------------------------------------------------ part 2

# threads_view [RUN]: for the GPU work of part 2's second version (range
# "part2_per_thread"), one line per host thread that queued any, in the order
# they first did:
#   THREAD  KERNEL_START  KERNEL_END  STREAMS  WHAT
# STREAMS: the streams its copies and kernels ran on, as ID:KIND (KIND
# default, per-thread, created...), comma-separated; WHAT: in words, which
# record ran where ("H2D, kernel, D2H on per-thread stream 15"). The kernel
# times are its first kernel's (ms), "-" without one.
threads_view() {
    local run=${1:-main} file l x f t s what w id kd d
    local -A kind=() used=() have=() on=() streams=() ks=() ke=()
    local lines=() order=() ss=()
    tq_lines lines "$run" streams gpu "${THREADS[@]}"
    for l in "${lines[@]}"; do
        x=${l#* }
        kind[${l%% *}]=${x%% *}
    done
    tq_file file "$run" list gpu "${THREADS[@]}"
    while IFS=$'\t' read -r -a f; do
        t=${f[9]:--} s=${f[4]:--}
        [ -n "${ks[$t]+x}" ] || { order+=("$t"); ks[$t]=- ke[$t]=-; }
        [ -n "${used[$t,$s]+x}" ] || { used[$t,$s]=1; streams[$t]+=${streams[$t]:+,}$s:${kind[$s]:-}; }
        what=${f[3]:-}
        [ "$what" != copy ] || what=${f[5]:-}
        [ -n "${have[$t,$s,$what]+x}" ] || { have[$t,$s,$what]=1; on[$t,$s]+=${on[$t,$s]:+, }$what; }
        [ "${f[3]:-}" != kernel ] || [ "${ks[$t]}" != - ] || ks[$t]=${f[0]} ke[$t]=${f[1]}
    done <"$file"
    for t in "${order[@]}"; do
        w=""
        IFS=, read -r -a ss <<<"${streams[$t]}"
        for x in "${ss[@]}"; do
            id=${x%%:*} kd=${x#*:}
            case $kd in
                default) d="the legacy default stream $id" ;;
                per-thread) d="per-thread stream $id" ;;
                *) d="$kd stream $id" ;;
            esac
            w+="${w:+; }${on[$t,$id]} on $d"
        done
        printf '%s\t%s\t%s\t%s\t%s\n' "$t" "${ks[$t]}" "${ke[$t]}" "${streams[$t]}" "$w"
    done
}

# threads_words VIEW: the view's threads in words, "thread 1: ...; thread 2: ...".
threads_words() {
    local f n=0 sep=""
    while IFS=$'\t' read -r -a f; do
        n=$((n + 1))
        printf '%sthread %d: %s' "$sep" "$n" "${f[4]:-}"
        sep="; "
    done <<<"$1"
}

@test "each thread's copies and kernel ran on its own per-thread default stream" {
    need_run main
    need_trace main
    draw_on_fail main "${THREADS[@]}"
    local view n ok=0 lines=() l f s=()
    view=$(threads_view)
    n=$(grep -c . <<<"$view" || true)
    # two threads; each on one stream, per-thread, with a kernel; not the same one
    mapfile -t lines <<<"$view"
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r -a f <<<"$l"
        [[ ${f[3]:-} =~ ^[0-9]+:per-thread$ ]] && [ "${f[1]:-}" != - ] && s+=("${f[3]}")
    done
    [ ${#lines[@]} = 2 ] && [ ${#s[@]} = 2 ] && [ "${s[0]}" != "${s[1]}" ] && ok=1
    [ "$ok" = 1 ] || say_fail \
        "2 host threads, each with its H2D, kernel and D2H on a per-thread default stream of its own" \
        "$n thread(s) queued work: $(threads_words "$view")" \
        "$(hint_of "$(ran_elsewhere main per-thread "${THREADS[@]}")" \
            "a call without a stream, or with 0, goes there; give every call of round_trip_own() the stream cudaStreamPerThread, crunch() too (TODO 3)" \
            "TODO 3: give every call the stream cudaStreamPerThread, crunch() too; a call without a stream, or with 0, goes to the legacy default stream, which is one for the whole device")"
}

# thread_questions: for each host thread of part 2's own-stream version, its
# round trip in the order it queued it (correlation ids): its first H2D copy,
# kernel and D2H copy. One line a question, "QUESTION<TAB>WHAT IT ASKS": the
# copy back ordered after the kernel, the kernel after the copy in; thread
# by thread in the order of their numbers (thread_numbers).
thread_questions() {
    local file f t w c n h k d
    local -A first=() seen=()
    local order=() lines=()
    tq_file file main corr gpu "${THREADS[@]}"
    while IFS=$'\t' read -r -a f; do
        t=${f[9]:--} c=${f[10]:-0} w=${f[3]:-}
        [ "$w" != copy ] || w=${f[5]:-}
        [ -n "${seen[$t]+x}" ] || { seen[$t]=1; order+=("$t"); }
        case $w in H2D | kernel | D2H) ;; *) continue ;; esac
        [ -n "${first[$t,$w]+x}" ] && ((c >= first[$t,$w])) || first[$t,$w]=$c
    done <"$file"
    # a thread that has no number last, as "thread ?"
    tq_lines lines main threads
    local -A num=()
    for f in "${lines[@]}"; do num[${f%%$'\t'*}]=${f#*$'\t'}; done
    for f in "${lines[@]}" ""; do
        for t in "${order[@]}"; do
            if [ -n "$f" ]; then [ "$t" = "${f%%$'\t'*}" ] || continue; n=${num[$t]}
            else [ -z "${num[$t]+x}" ] || continue; n="?"; fi
            h=${first[$t,H2D]:-} k=${first[$t,kernel]:-} d=${first[$t,D2H]:-}
            [ -n "$h" ] && [ -n "$k" ] && [ -n "$d" ] || continue
            printf 'order kernel:%d copy:%d\tthread %s: its copy back after its kernel\n' "$k" "$d" "$n"
            printf 'order copy:%d kernel:%d\tthread %s: its kernel after its copy in\n' "$h" "$k" "$n"
        done
    done
}

# On one stream work runs in the order it was queued: a kernel queued before
# the copy of its input reads what the buffer held before (here the same
# numbers, from the version before: right by chance, every run).
@test "each thread's kernel is ordered after its copy in, and its copy back after its kernel" {
    need_run main
    need_trace main
    draw_on_fail main "${THREADS[@]}"
    local q bad
    q=$(thread_questions)
    [ -n "$q" ] || { say_fail "in part 2's second version, host threads each queuing an H2D copy, a kernel and a D2H copy" \
        "none: $(threads_words "$(threads_view)")" "keep worker() and run_threads() as given; TODO 3 is round_trip_own()"; return 1; }
    local label answer words
    bad=""
    while IFS=$'\t' read -r label answer words _; do
        [ "$answer" = observed-only ] && words="not ordered by the program"
        bad+="${bad:+; }$label: $words"
    done < <(unguaranteed main <<<"$q")
    [ -z "$bad" ] || say_fail \
        "each thread's kernel ordered after its copy in and before its copy back" \
        "$bad" \
        "one stream runs its work in the order it was queued: in round_trip_own(), cudaMemcpyAsync in, then crunch(), then cudaMemcpyAsync back, all on cudaStreamPerThread (TODO 3)"
}

# threads_overlap VIEW: how long (ms) the two threads' kernels of a
# threads_view ran at the same time (0 or less: not at all); "-" without a
# kernel of each.
threads_overlap() {
    local t a b s=() e=()
    while IFS=$'\t' read -r t a b _; do
        [ -n "$t" ] && [ "$a" != - ] || continue
        ns_of a "$a"; ns_of b "$b"
        s+=("$a") e+=("$b")
    done <<<"$1"
    [ ${#s[@]} -ge 2 ] || { echo -; return 0; }
    a=$((s[0] > s[1] ? s[0] : s[1])) b=$((e[0] < e[1] ? e[0] : e[1]))
    printf '%.6f\n' "$((b - a))e-6"
}

# threads_tested RUN: could run RUN show whether the kernels run at once?
# Not when the later thread queued its kernel (its cudaLaunchKernel
# returned) only after the earlier kernel had ended: a busy machine can hold
# a host thread back that long (seen once grading 8 submissions at once).
# Then it says so and returns 1.
threads_tested() {
    local view late
    view=$(threads_view "$1")
    is_true 'ov > 0' ov="$(threads_overlap "$view" | sed 's/^-$/0/')" && return 0
    # each thread's first cudaLaunchKernel's return, against the kernel of
    # the other thread before it
    local -A call=()
    local f th=() s=() e=() l o x y
    while IFS=$'\t' read -r -a f; do
        [ -n "${f[0]:-}" ] && [ "${f[1]}" != - ] || continue
        th+=("${f[0]}") s+=("${f[1]}") e+=("${f[2]}")
    done <<<"$view"
    [ ${#th[@]} -ge 2 ] || return 0
    while IFS=$'\t' read -r -a f; do
        [ -n "${f[9]:-}" ] && [ -z "${call[${f[9]}]:-}" ] && call[${f[9]}]=${f[1]}
    done < <(tq "$1" list api:cudaLaunchKernel "${THREADS[@]}")
    ns_of x "${s[0]}"; ns_of y "${s[1]}"
    l=1 o=0
    ((x <= y)) || l=0 o=1
    [ -n "${call[${th[l]}]:-}" ] || return 0
    ns_of x "${call[${th[l]}]}"; ns_of y "${e[o]}"
    ((x >= y)) || return 0
    printf "thread %d queued its kernel at %.2f ms, after thread %d's kernel had ended at %.2f ms\n" \
        $((l + 1)) "${call[${th[l]}]}" $((o + 1)) "${e[o]}"
    return 1
}

# kernels_words VIEW: each thread's kernel of a threads_view, in words
# ("thread 1 2.00-3.50 ms, thread 2 ...")
kernels_words() {
    local f n=0 sep=""
    while IFS=$'\t' read -r -a f; do
        n=$((n + 1))
        [ "${f[1]:-}" != - ] || continue
        printf '%sthread %d %.2f-%.2f ms' "$sep" "$n" "${f[1]}" "${f[2]}"
        sep=", "
    done <<<"$1"
}

# threads_at_once RUN: the two threads' kernels overlapped in run RUN, or the
# run could not show it (threads_tested).
threads_at_once() {
    local view ov
    view=$(threads_view "$1")
    ov=$(threads_overlap "$view")
    [ "$ov" != - ] || { say_fail "a kernel queued by each of the 2 host threads" \
        "$(threads_words "$view")" "keep worker() and run_threads() as given"; return 1; }
    is_true 'ov > 0' ov="$ov" && return 0
    threads_tested "$1" >/dev/null || return 0
    say_fail \
        "thread 1's kernel and thread 2's kernel running at the same time" \
        "one after the other: $(kernels_words "$view")" \
        "$(hint_of "$(ran_elsewhere "$1" per-thread "${THREADS[@]}")" \
            "it waits for the other thread's per-thread stream, and that stream for it; give every call the stream cudaStreamPerThread (TODO 3)" \
            "a kernel on stream 0 (crunch(j, 0)) is on the legacy default stream: it waits for the other thread's per-thread stream, and that stream for it (TODO 3)")"
}

# threads_free: apart's answer for the two threads' kernels of part 2's
# own-stream version (each thread's first, thread_questions); nothing
# without a kernel of each of two threads.
threads_free() {
    local k=() q
    while IFS=$'\t' read -r q _; do
        [[ $q == "order copy:"*" kernel:"* ]] && k+=("${q##* }")
    done <<<"$(thread_questions)"
    [ ${#k[@]} -ge 2 ] || return 0
    apart main "${k[0]}" "${k[1]}"
}

# What the program guaranteed: nothing orders either thread's kernel after
# the other's (each on its own per-thread stream, no wait between them), the
# same in every run. A GPU full of other programs' work may still run them
# one after the other; they were free to run at once, and the check passes
# (a note says what this run did). An order between them fails every run:
# the legacy default stream, or a wait. A trace that cannot tell is judged
# as measured: a run that could not show it is looked at again
# (second_look), up to RERUNS_MAX times; a run where the later kernel was
# queued in time and still waited fails the check.
@test "the two threads' kernels may run at the same time: nothing orders either after the other" {
    need_run main
    need_trace main
    draw_on_fail main "${THREADS[@]}"
    local free why ov
    IFS=$'\t' read -r free _ why <<<"$(threads_free)"
    case $free in
        free)
            ov=$(threads_overlap "$(threads_view main)")
            is_true 'ov > 0' ov="$ov" ||
                note "in this run the GPU ran them one after the other, though nothing ordered them (another program on the GPU?)"
            return 0 ;;
        ordered) say_fail \
            "thread 1's kernel and thread 2's kernel, neither ordered after the other: free to run at the same time" \
            "the program orders them: $why" \
            "$(hint_of "$(ran_elsewhere main per-thread "${THREADS[@]}")" \
                "it waits for the other thread's per-thread stream, and that stream for it; give every call the stream cudaStreamPerThread (TODO 3)" \
                "a kernel on stream 0 (crunch(j, 0)) is on the legacy default stream: it waits for the other thread's per-thread stream, and that stream for it (TODO 3)")"
            return 1 ;;
    esac
    second_look main threads_tested threads_at_once
}

# thread_numbers RUN: "TID N" a line: host thread TID is "thread N" in the
# drawings (numbered by their first runtime call or NVTX range in the whole
# run, as streamtrace numbers them: thread 1 is the main thread).
thread_numbers() { tq "$1" threads; }

# thread_waits [RUN]: every time a host thread waited for the GPU in part 2's
# second version (range "part2_per_thread"), in time order, one line each:
#   N  OK  KIND  WORDS
# N: the thread's number in the drawing ("thread N"); OK: 1 when it waited
# for its own stream: one that carried its copies or kernel and no other
# thread's, and not the legacy default stream (in the solution, its
# per-thread default stream), or an event it recorded only on such streams;
# KIND: own, legacy (the legacy default stream: cudaStreamSynchronize(0) or
# cudaStreamLegacy), device (the whole device: cudaDeviceSynchronize, or the
# wait of a synchronous call), other (a stream that carried another thread's
# work), empty (a stream that carried none of its work), event (an event not
# recorded on its own stream); WORDS: the same in words, with the stream's
# name in the drawing. A wait is a sync record of the trace; its thread is
# the one whose call made it. (A cudaStreamWaitEvent makes a stream wait,
# not the host: it is left out. Which of its events a cudaEventSynchronize
# waited for the trace does not say: one that waited for another thread's
# event, recorded only on that thread's stream, is taken as its own.)
thread_waits() {
    local run=${1:-main} file l x f s t n k w ok
    local -A num=() kind=() nb=() on=() users=() user=() evs=() evbad=()
    local lines=() more=() ws=() wy=() wt=()
    tq_lines lines "$run" threads
    for l in "${lines[@]}"; do num[${l%%$'\t'*}]=${l#*$'\t'}; done
    tq_lines lines "$run" streams gpu "${THREADS[@]}"
    tq_lines more "$run" streams sync "${THREADS[@]}"
    lines+=("${more[@]}")
    for l in "${lines[@]}"; do
        read -r -a f <<<"$l"
        kind[${f[0]}]=${f[1]:-}
        [ "${f[3]:-}" = non-blocking ] && nb[${f[0]}]=" nb" || nb[${f[0]}]=""
    done
    tq_file file "$run" list gpu "${THREADS[@]}"
    while IFS=$'\t' read -r -a f; do
        s=${f[4]:--} t=${f[9]:--}
        [ -z "${on[$s,$t]+x}" ] || continue
        on[$s,$t]=1 users[$s]=$((${users[$s]:-0} + 1)) user[$s]=$t
    done <"$file"
    tq_file file "$run" list event "${THREADS[@]}"
    while IFS=$'\t' read -r -a f; do
        s=${f[4]:--} t=${f[9]:--}
        evs[$t]=$((${evs[$t]:-0} + 1))
        thread_owns "$s" "$t" || evbad[$t]=$((${evbad[$t]:-0} + 1))
    done <"$file"
    tq_file file "$run" list sync "${THREADS[@]}"
    while IFS=$'\t' read -r -a f; do
        [ "${f[5]:-}" != wait ] || continue
        ws+=("${f[4]:-}") wy+=("${f[5]:-}") wt+=("${f[9]:--}")
    done <"$file"
    for x in "${!ws[@]}"; do
        s=${ws[x]} t=${wt[x]} n=${num[$t]:-?}
        if [ "${wy[x]}" = context ]; then
            k=device w="the whole device"
        elif [ "${wy[x]}" = event ]; then
            if ((${evs[$t]:-0} > 0 && ${evbad[$t]:-0} == 0)); then
                k=own w="an event it recorded on its own stream"
            else
                k=event w="an event it did not record on a stream of its own"
            fi
        elif [ "$s" = - ] || [ -z "$s" ]; then
            k=other w="something the trace does not name (a ${wy[x]} wait)"
        elif [ "${kind[$s]:-}" = default ]; then
            k=legacy w="the legacy default stream (stream 0)"
        elif thread_owns "$s" "$t"; then
            stream_lane l "$s"
            k=own w="its own stream ($l)"
        elif ((${users[$s]:-0} >= 1)); then
            stream_lane l "$s"
            k=other w="stream $s, where "
            if [ "${users[$s]}" = 1 ]; then w+="thread ${num[${user[$s]}]:-}'s"; else w+="other threads'"; fi
            w+=" work ran ($l)"
        else
            k=empty w="stream $s, where none of its copies and kernels ran"
        fi
        ok=0
        [ "$k" != own ] || ok=1
        printf '%s\t%d\t%s\t%s\n' "$n" "$ok" "$k" "$w"
    done
}

# thread_owns STREAM THREAD: STREAM is THREAD's own (thread_waits: not the
# legacy default stream, and only THREAD's work ran there)
thread_owns() { [ "${kind[$1]:-}" != default ] && [ "${users[$1]:-0}" = 1 ] && [ "${user[$1]:-}" = "$2" ]; }

# stream_lane VAR STREAM: VAR = STREAM as the drawing names it (thread_waits)
stream_lane() {
    if [ "${kind[$2]:-}" = per-thread ] && ((${users[$2]:-0} >= 1)); then
        printf -v "$1" 'thread %s default' "${num[${user[$2]}]:-}"
    elif [ "${kind[$2]:-}" = per-thread ]; then
        printf -v "$1" 'per-thread %s' "$2"
    else
        printf -v "$1" 'stream %s%s' "$2" "${nb[$2]:-}"
    fi
}

# waits_hint WAIT: the hint for the first wrong wait (a line of thread_waits),
# naming what the thread waited for; without one, for cudaDeviceSynchronize.
waits_hint() {
    local n ok k w fix="wait for this thread's own stream alone: cudaStreamSynchronize(cudaStreamPerThread) (TODO 3)"
    IFS=$'\t' read -r n ok k w <<<"$1"
    case $k in
        legacy) echo "thread $n waited for the legacy default stream (cudaStreamSynchronize(0), or cudaStreamLegacy): it synchronizes with every blocking stream, the other thread's per-thread stream too, so the wait may last until the other thread's work is done; $fix" ;;
        device) echo "thread $n waited for the whole device (cudaDeviceSynchronize, or a call that waits like it): that waits for all work of the device, the other thread's too; $fix" ;;
        other) echo "thread $n waited for $w: not its own work; $fix" ;;
        empty) echo "thread $n waited for $w: its own work was not waited for; $fix" ;;
        event) echo "thread $n waited for $w; $fix" ;;
        *) echo "TODO 3: cudaDeviceSynchronize waits for all work of the device, the other thread's too; cudaStreamSynchronize(cudaStreamPerThread) waits for this thread's" ;;
    esac
}

# Each wait of the threads must be for the stream their own work ran on.
# Stream 0 is not: the legacy default stream synchronizes with every blocking
# stream (CUDA Runtime API, "Stream synchronization behavior"), the other
# thread's per-thread stream too, so a wait for it may last until the other
# thread is done; cudaDeviceSynchronize waits for the whole device. Which
# stream a wait was for is a structure of the trace (its sync record), not a
# time: another program on the GPU cannot change it.
@test "each thread waited for its own stream, not for the whole device" {
    need_run main
    need_trace main
    draw_on_fail main "${THREADS[@]}"
    local waits dev bad="" seen="" line f
    waits=$(thread_waits)
    tq_in dev main count api:cudaDeviceSynchronize "${THREADS[@]}"
    while IFS= read -r line; do
        IFS=$'\t' read -r -a f <<<"$line"
        [ -z "$bad" ] && [ "${f[1]:-}" = 0 ] && bad=$line
    done <<<"$waits"
    [ -z "$bad" ] && [ "$dev" = 0 ] && return 0
    while IFS=$'\t' read -r -a f; do
        seen+="${seen:+; }thread ${f[0]:-} waited for ${f[3]:-}"
    done <<<"$waits"
    [ "$dev" = 0 ] || grep -q $'\tdevice\t' <<<"$waits" ||
        seen="${seen:+$seen; }$dev cudaDeviceSynchronize call(s)"
    say_fail \
        "each thread waits for the stream its own copies and kernel ran on, and for nothing else: cudaStreamSynchronize(cudaStreamPerThread)" \
        "${seen:-no wait}" \
        "$(waits_hint "$bad")"
}

# ------------------------------------------------------------ part 3

@test "nothing in the pipeline ran on the legacy default stream" {
    need_run main
    need_trace main
    draw_on_fail main "${PIPE[@]}"
    local n what
    tq_in n main count gpu --stream default "${PIPE[@]}"
    local c w
    what=""
    while read -r c w; do
        what+="${what:+, }$c $w"
    done < <(tq main list gpu --stream default "${PIPE[@]}" | cut -f 4 | sort | uniq -c)
    [ "$n" = 0 ] || say_fail \
        "every clear, copy and kernel of the pipeline on a created stream" \
        "$n on the legacy default stream ($what)" \
        "TODO 4: cudaMemset takes no stream: it runs on stream 0, which waits for every blocking stream and makes them wait for it; so does cudaMemsetAsync without its stream argument"
}

@test "copies of one chunk ran while the kernel of another ran" {
    need_run main
    need_trace main
    draw_on_fail main "${PIPE[@]}"
    local ov ms f
    tq_in ov main overlap copy kernel "${PIPE[@]}"
    ms=$(cut -d ' ' -f 1 <<<"$ov") f=$(cut -d ' ' -f 2 <<<"$ov")
    is_true 'ms > 0 && f >= 0.05' ms="${ms:-0}" f="${f:-0}" || say_fail \
        "copies running while kernels run, in the pipeline (at least 5% of the copy time)" \
        "$(fmt "${ms:-0}") ms of overlap, $(fmt "${f:-0}") of the copy time" \
        "$(hint_of "$(ran_elsewhere main created "${PIPE[@]}")" \
            "it waits for every chunk queued before it, and every chunk after it waits for it; clear on the chunk's own stream (TODO 4)" \
            "the chunks ran one after the other: a clear on stream 0 (cudaMemset) waits for all of them before it, and all after it wait for it (TODO 4)")"
}

# clear_questions: from the trace's records, the pipeline's chunks in the
# order the program queued them (CUPTI's correlation ids grow with every
# call): the k-th memset is chunk k's clear, the k-th kernel its kernel, and
# the first D2H copy after that kernel its bins going back. Chunks whose
# kernels ran on the same stream share a scratch buffer; a clear larger
# than a chunk's bins clears other streams' scratch too. One line a
# question, "QUESTION<TAB>WHAT IT ASKS (for a failure)": each clear ordered
# before its chunk's kernel, and after the bins of the chunk before it on
# its stream went back (a clear of several streams' scratch, after the last
# chunk before it on each). A count that is off, or no range: one line
# "-<TAB>what is wrong".
clear_questions() {
    local file f lo="" hi="" x i j k r s nm=0 nk=0 mk kk wide suffix
    local ty=() st=() sm=() co=() by=() idx=() M=() K=() B=()
    local -A went=()
    tq_file file main corr nvtx:part3_pipeline
    while IFS=$'\t' read -r -a f; do
        [ -z "$lo" ] || break
        ns_of lo "${f[0]}"; ns_of hi "${f[1]}"
    done <"$file"
    [ -n "$lo" ] || { printf -- '-\tno NVTX range part3_pipeline\n'; return 0; }
    # the clears, kernels and D2H copies in the range (a record CUPTI
    # stamped up to 5 us before the range began is in it: the first clear
    # starts within microseconds of its call, and CUPTI can stamp it just
    # before the push: checker/README.md), by correlation id: the order of
    # the calls
    tq_file file main corr gpu
    i=0
    while IFS=$'\t' read -r -a f; do
        x=${f[3]:-}
        [ "$x" != copy ] || x=${f[5]:-}
        case $x in memset | kernel | D2H) ;; *) continue ;; esac
        ns_of r "${f[0]}"
        ((r >= lo - 5000 && r <= hi)) || continue
        i=$((i + 1))
        ty[i]=$x sm[i]=${f[4]:-} co[i]=${f[10]:-0} by[i]=${f[6]:-}
        [[ ${by[i]} =~ ^[0-9]+$ ]] || by[i]=0
        idx[co[i] * 100000 + i]=$i
    done <"$file"
    for r in "${idx[@]}"; do
        case ${ty[r]} in
            memset) M[++nm]=$r ;;
            kernel) K[++nk]=$r B[nk]="" ;;
            *) ((nk > 0)) && [ -z "${B[nk]}" ] && B[nk]=$r ;;
        esac
    done
    ((nk > 0)) || { printf -- '-\tno kernel in the pipeline\n'; return 0; }
    ((nm == nk)) || { printf -- '-\t%d clears (memsets) for %d chunks (kernels): one per chunk, please\n' "$nm" "$nk"; return 0; }
    for ((k = 1; k <= nk; k++)); do
        mk=${M[k]} kk=${K[k]}
        printf 'order memset:%d kernel:%d\tchunk %d: its clear before its kernel\n' "${co[mk]}" "${co[kk]}" $((k - 1))
        wide=0
        [ -z "${B[k]}" ] || ((by[mk] <= by[B[k]])) || wide=1
        went=()
        for ((j = k - 1; j >= 1; j--)); do
            s=${sm[K[j]]}
            [ -z "${went[$s]+x}" ] && [ -n "${B[j]}" ] || continue
            [ "$s" = "${sm[kk]}" ] || [ "$wide" = 1 ] || continue
            went[$s]=1
            if [ "$s" = "${sm[kk]}" ]; then
                suffix=" with the same scratch"
            else
                suffix=" (the clear of ${by[mk]} bytes is larger than the ${by[B[k]]} of a chunk's bins: it clears that stream's scratch too)"
            fi
            printf 'order copy:%d memset:%d\tchunk %d: its clear after chunk %d, before it on stream %s%s, copied its bins back\n' \
                "${co[B[j]]}" "${co[mk]}" $((k - 1)) $((j - 1)) "$s" "$suffix"
        done
    done
}

# clear_order: "ok", or the first of clear_questions that the program did
# not guarantee, with the answer's words.
clear_order() {
    local q
    q=$(clear_questions)
    [[ $q != -$'\t'* ]] || { cut -f 2 <<<"$q"; return 0; }
    local line words
    IFS= read -r line < <(unguaranteed main <<<"$q")
    [ -n "$line" ] || { echo ok; return 0; }
    words=${line#*$'\t'} words=${words#*$'\t'}
    echo "${line%%$'\t'*}: ${words%%$'\t'*}"
}

@test "every chunk's scratch was cleared after its last use and before its kernel" {
    need_run main
    need_trace main
    draw_on_fail main "${PIPE[@]}"
    local seen
    seen=$(clear_order)
    [ "$seen" = ok ] || say_fail \
        "each chunk's clear ordered after the chunk before it on its stream copied its bins back, and before its own kernel" \
        "$seen" \
        "TODO 4: a clear of the chunk's own scratch on the chunk's own stream is ordered by the stream; non-blocking streams with cudaMemset on stream 0 are not ordered at all (a race), a clear after the kernel comes too late, and a clear of every stream's scratch is not ordered after the other streams' chunks"
}

# ------------------------------------------------------------ the parts

# parts_apart [RUN]: "ok", or the first way in which the parts of RUN did
# not run apart, as "PART<TAB>HOW<TAB>WORDS": HOW is "before" (GPU work
# queued before the part's range was not known done, by a host wait, when
# the range began), "after" (work queued in the range was not waited for
# before it ended), or "unknown" (the trace cannot tell). What the program
# guaranteed (streamtrace ask's `settled`: a host wait, or a synchronous
# copy, after which the work is sure to be done), not when this run's work
# happened to end. The threads are numbered as in the drawing
# (thread_numbers).
parts_apart() {
    local run=${1:-main} n t k $SETTLED_FIELDS
    IFS=$'\t' read -r $SETTLED_FIELDS <<<"$(ask "$run" "settled nvtx:part*")"
    case $answer in
        settled) echo ok; return 0 ;;
        none) printf -- '-\tnone\tno NVTX range of a part\n'; return 0 ;;
        not-settled) ;;
        *) printf -- '-\tunknown\tunknown: %s\n' "$range"; return 0 ;;
    esac
    range=${range%#*}
    n=""
    while IFS=$'\t' read -r t k; do [ "$t" = "$tid" ] && n+=${n:+$'\n'}$k; done < <(thread_numbers "$run")
    if [ "$how" = before ]; then
        printf '%s\tbefore\t%s began at %.3f ms, and the GPU work queued before it was not waited for: the last, the %s on %s, was queued at %.3f ms (the waits after it, before the range: %s)\n' \
            "$range" "$range" "$ms" "$what" "$(stream_words "$st $kind $dev $sync")" "$queued_ms" "$waits"
    else
        printf '%s\tafter\t%s ended at %.3f ms, and thread %s did not wait for all its work in it: the last not waited for, the %s on %s, was queued at %.3f ms (the waits after it, in the range: %s)\n' \
            "$range" "$range" "$ms" "${n:-?}" "$what" "$(stream_words "$st $kind $dev $sync")" "$queued_ms" "$waits"
    fi
}

# Each part is judged alone, in its own NVTX range: the given code makes the
# GPU idle before each part (cudaDeviceSynchronize), and every host thread
# waits for its work before the part ends (the waits of part 2's threads,
# the cudaDeviceSynchronize at the end of parts 1 and 3). Without them a
# part's work runs into the next one, or the host reads results that the GPU
# may not have finished (part 1's stamps are copied back on stream 0, which
# does not wait for the non-blocking stream). Judged by what the program
# guaranteed (a host wait after the work), the same in every run.
@test "each part began with the GPU idle and waited for all its work before it ended" {
    need_run main
    need_trace main
    local part how seen hint
    IFS=$'\t' read -r part how seen <<<"$(parts_apart)"
    [ "$part" = ok ] && return 0
    [ "$part" = - ] || draw_on_fail main --window "nvtx:$part"
    case $part/$how in
        */unknown) hint="the trace cannot tell whether the host waited for this work (a wait for an event whose record the trace lacks): record it again with streamtrace" ;;
        */before) hint="keep the given cudaDeviceSynchronize() before each part as it is: each part starts with the GPU idle, so that its range holds its own work and nothing else" ;;
        part1_kinds/after) hint="keep the given cudaDeviceSynchronize() after part 1's four launches: the stamps are copied back on stream 0, which does not wait for the non-blocking stream's kernel" ;;
        part2_legacy/after) hint="keep round_trip_legacy() as given: cudaStreamSynchronize(0) after the copy back, so that the thread's numbers are home before it returns" ;;
        part2_per_thread/after) hint="wait after the last call of the round trip: cudaMemcpyAsync back, then cudaStreamSynchronize(cudaStreamPerThread), so that the thread's numbers are home before it returns (TODO 3)" ;;
        part3_pipeline/after) hint="keep the given cudaDeviceSynchronize() after issue_pipeline(): the results are read right after it" ;;
        *) hint="keep the parts as given: part_kinds(), part_threads() and part_pipeline(), each in its NVTX range" ;;
    esac
    say_fail "every part starting with the GPU idle (a host wait after the work before it), and every host thread waiting for its work before the part ends" \
        "$seen" "$hint"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
    check_usage badpart "--part 4"
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
