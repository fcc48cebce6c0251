#!/usr/bin/env bats
# 05-overlap.bats -- the checks of lab 05 (multi-stream overlap).
# Run from the lab folder with `make check`, or `make check LAB=05` at the top.
# The program runs once under the trace tool, as given. It does the
# sequential version and the pipelined one in both issue orders R times, in
# turn, each inside an NVTX range ("sequential", "depth_first",
# "breadth_first") so that the checks can tell them apart; then both orders
# once more, untimed, on an uneven shape (7 chunks over 3 streams, 16 MiB),
# inside "uneven_depth_first" and "uneven_breadth_first". Every result is
# checked.

bats_require_minimum_version 1.5.0
LAB_ID=05-overlap
PROG=overlap
load lib/checks

# How far above the stage bound a pipelined run may be: 1.5. A pipeline
# that does not overlap (a synchronize in the issue loop, a kernel on the
# default stream, stages separated by a synchronize) takes the sum of its
# stages, where a pipeline that overlaps takes the longest stage's chunks
# and a little more (the stage bound, `streamtrace query bound`).
# Each pipelined run is compared with the sequential run of its turn, and
# the median of the R pairs counts: another program on the same GPU slows a
# pair as a whole, or one pair, and neither moves the median far. 1.5 leaves
# a correct solution room for a GPU shared with other runs, and is still far
# below what any serialized version takes.
# The pipeline and its stages are still measured at different moments, which
# no structure of the trace can tie together: this check (and lab 03's
# pinned-against-pageable) may look at up to 2 more runs of the program and
# pass on the best (second_chance in lib/checks.bash).
BOUND_FACTOR=1.5

# One run of the program under the trace tool serves every check: each CUDA
# program's start costs the node's driver about 0.2 s, one start at a time
# (checker/grade/README.md, what limits a node).
setup_file() {
    build_lab
    run_beside badopt -- --frobnicate
    run_beside badstreams -- --streams 0
    run_beside nodev --env CUDA_VISIBLE_DEVICES= --
    run_lab main --trace
    runs_done
    # the questions its checks ask of the run, answered in one parse
    tq_ahead main <<'EOF'
        bound nvtx:sequential nvtx:breadth_first
        bound nvtx:sequential nvtx:depth_first
        count d2h --mem PAGEABLE
        count d2h --mem PINNED
        count h2d --mem PAGEABLE
        count h2d --mem PINNED
        count kernel --stream default --window nvtx:breadth_first#last
        count kernel --stream default --window nvtx:depth_first#last
        count kernel --stream default --window nvtx:uneven*
        count kernel --window nvtx:breadth_first#last
        count kernel --window nvtx:depth_first#last
        count nvtx:breadth_first
        count nvtx:depth_first
        count nvtx:sequential
        count nvtx:uneven_breadth_first
        count nvtx:uneven_depth_first
        list api --window nvtx:breadth_first#last
        list api --window nvtx:depth_first#last
        list copy --mem PAGEABLE --window nvtx:breadth_first#last
        list copy --mem PAGEABLE --window nvtx:depth_first#last
        list gpu --window nvtx:uneven* --whole
        list nvtx:breadth_first
        list nvtx:depth_first
        list nvtx:sequential
        meta copy_engines
        overlap h2d d2h --window nvtx:breadth_first+gpu
        overlap h2d d2h --window nvtx:depth_first+gpu
        overlap h2d kernel --window nvtx:breadth_first+gpu
        overlap h2d kernel --window nvtx:depth_first+gpu
        stages nvtx:breadth_first
        stages nvtx:depth_first
        stages nvtx:sequential
        streams gpu
        streams gpu --window nvtx:breadth_first#last
        streams gpu --window nvtx:breadth_first+gpu
        streams gpu --window nvtx:depth_first#last
        streams gpu --window nvtx:depth_first+gpu
EOF
    # and what the program guaranteed, asked of the run in one parse
    ask_ahead main <<'EOF'
        elapsed
        timings
EOF
}

# ORDERS: the two issue orders, as the program names their NVTX ranges.
ORDERS=(depth_first breadth_first)

# words ORDER: an order's name in messages ("depth-first").
words() { echo "${1/_/-}"; }

# reps RUN RANGE: one line per NVTX range RANGE ("sequential", "depth_first", "breadth_first") in
# the trace of RUN, for the GPU work that started inside it:
#   H2D_MS KERNEL_MS D2H_MS SPAN_MS KERNELS
# (the time each stage kept the GPU busy, first start to last end, number of
# kernels: streamtrace query's stages). Kept in $RUNS/RUN.reps-RANGE: the
# checks and Your run ask for it again.
reps() {
    kept "$RUNS/$1.reps-$2" reps_of "$1" "$2"
}
reps_of() {
    local l f
    tq_in l "$1" stages "nvtx:$2"
    while read -r -a f; do
        [ ${#f[@]} -eq 0 ] || echo "${f[2]:-} ${f[3]:-} ${f[4]:-} ${f[6]:-} ${f[5]:-}"
    done <<<"$l"
    return 0
}

# bound RUN ORDER: "FRACTION BOUND_MS PIPE_MS CHUNKS PAIRS" (streamtrace
# query's bound) -- each pipelined run in ORDER is set against the
# sequential run of the same turn (the program takes turns), so both saw the
# same GPU, busy or not. With C chunks (the kernels of the pipelined run) and per-chunk
# stage times h, k, d (the sequential run's busy times H, K, D / C), the
# pipeline cannot beat the slowest stage run whole plus the first chunk's
# earlier stages (fill) and the last chunk's later stages (drain):
# max(H + k + d, h + K + d, h + k + D). With one copy engine the copies take
# turns: max(H + D, h + K + d). FRACTION = bound / pipelined time; the pair
# with the median fraction is printed.
bound() { tq "$1" bound nvtx:sequential "nvtx:$2"; }

# last ORDER: the last sequential run and the last pipelined run in ORDER, as
# streamtrace's window words (what make trace draws): a failed check of that
# pipeline draws them.
last() { printf '%s\n' --window 'nvtx:sequential#last' --window "nvtx:$1#last"; }

# why_serial RUN ORDER: what the trace of RUN's last pipelined run in ORDER
# shows that keeps chunks from overlapping, and its fix, in words (the first
# found); nothing if none.
why_serial() {
    local w=(--window "nvtx:$2#last") k d pg="" dirs dir created waits
    tq_in k "$1" count kernel "${w[@]}"
    tq_in d "$1" count kernel --stream default "${w[@]}"
    [ "${d:-0}" -gt 0 ] && {
        echo "$d of the $k kernels of the last $(words "$2") run ran on the legacy default stream, which waits for every blocking stream (cudaStreamCreate makes blocking ones), and they for it: give scramble() the chunk's stream"; return 0; }
    pageable_dirs dirs "$1" "${w[@]}"
    for dir in "${dirs[@]}"; do pg+="${pg:+ and }$dir"; done
    [ -n "$pg" ] && { echo "its $pg copies were from or to pageable memory: allocate h_in and h_out with cudaMallocHost (TODO 1)"; return 0; }
    created=$(tq "$1" streams gpu "${w[@]}" | grep -c created)
    [ "${created:-0}" = 1 ] && { echo "all its chunks ran on one stream, which runs them one after the other: chunk c goes to p->streams[c % p->nstreams]"; return 0; }
    local -A c=()
    local f x n=0 s="" names=() fl
    tq_file fl "$1" list api "${w[@]}"
    while IFS=$'\t' read -r -a f; do
        [[ ${f[5]:-} == *Synchronize ]] || continue
        [ -n "${c[${f[5]}]:-}" ] || names+=("${f[5]}")
        n=$((n + 1)) c[${f[5]}]=$((${c[${f[5]}]:-0} + 1))
    done <"$fl"
    # in the order of their first calls
    for x in "${names[@]}"; do s+="${s:+, }$x x${c[$x]}"; done
    waits=""
    ((n <= 1)) || waits="$((n - 1)) $s"
    [ -n "$waits" ] && echo "the host waited inside the last $(words "$2") run ${waits%% *} more time$([ "${waits%% *}" = 1 ] || echo s) than the one wait at its end (${waits#* }): the issue loops only queue work, the given code waits once at the end"
    return 0
}

# near_bound ORDER RUN: one run's pipeline in ORDER (depth_first,
# breadth_first) against its stage bound, and nothing in it that holds the
# chunks back. A cause the trace shows
# (why_serial) fails it however close the times came: another program on
# the GPU can stretch the sequential run the bound comes from, and bring a
# pipeline that waits between its stages within the factor (seen once with 8
# checkers on an H100). A right program has none; this one has it in every
# run: HOPELESS, no re-run.
near_bound() {
    local order=$1 run=$2 frac b pipe chunks pairs cause="" w
    mapfile -t w < <(last "$order")
    draw_on_fail "$run" "${w[@]}"
    read -r frac b pipe chunks pairs <<<"$(bound "$run" "$order")"
    [ -n "$pairs" ] || { say_fail "NVTX ranges \"sequential\" and \"$order\" with GPU work in them" \
        "$(tq "$run" count nvtx:sequential) sequential, $(tq "$run" count "nvtx:$order") $order" \
        "keep run_sequential() and run_pipelined() as given"; return "$HOPELESS"; }
    # (a re-run's hint is never shown: second_chance shows the first run's;
    # a re-run is made only where the first run had no cause)
    [[ $run == *.again* ]] || cause=$(why_serial "$run" "$order")
    [ -z "$cause" ] && is_true 'f * x >= 1' f="$frac" x="$BOUND_FACTOR" && return 0
    say_fail \
        "the $(words "$order") pipeline within ${BOUND_FACTOR}x of what its stages allow ($chunks chunks; median of $pairs runs), nothing in it holding the chunks back" \
        "$(fmt "$pipe") ms against a bound of $(fmt "$b") ms: $(fmt "$(ratio 1 "$frac")")x the bound" \
        "${cause:-something serializes the chunks: a synchronize inside the issue loop, one stream for all, a kernel without its stream, or pageable memory}"
    failed_for "$cause"
}

# pageable_words: which of the main run's copies were from or to pageable
# memory, and where they came from or went ("the H2D copies came from
# pageable memory, h_in: "), for the pinned check's hint
pageable_words() {
    local dirs dir out=""
    pageable_dirs dirs main
    for dir in "${dirs[@]}"; do
        if [ "$dir" = H2D ]; then out+="${out:+; }the H2D copies came from pageable memory, h_in"
        else out+="${out:+; }the $dir copies went to pageable memory, h_out"; fi
    done
    [ -z "$out" ] || echo -n "$out: "
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace.
# best_span: the least of the spans (4th field) of reps' lines on stdin
best_span() { local s; while read -r _ _ _ s _; do echo "$s"; done | sort -g | head -n 1; }

# Each version's best run, as the program prints them (seq_ms, depth_ms,
# breadth_ms: "best run"), read off the trace; bound_pct is the program's
# bound_fraction in %.
your_run() {
    your_run_ok main || return 0
    local seq depth breadth ce frac
    seq=$(reps main sequential | best_span) ce=$(tq main meta copy_engines)
    depth=$(reps main depth_first | best_span) breadth=$(reps main breadth_first | best_span)
    figure_in frac main bound_fraction
    your_fig speedup "$(ratio "$seq" "$depth")" x \
        "the sequential version's time / the depth-first pipeline's (best runs, as seq_ms / depth_ms)"
    your_fig bound_pct "$(calc '100 * f' f="$frac")" % \
        "bound_fraction in %: the stage bound / the depth-first pipeline's time, on ${ce:-?} copy engines (100: at the bound)"
    your_fig breadth_vs_depth "$(is_positive "$depth" && calc '100 * (a / b - 1)' a="$breadth" b="$depth")" % \
        "how much longer breadth-first took than depth-first, best runs (negative: shorter)"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0, in both issue orders" {
    check_exits_ok main "a CUDA error names the file:line and the call; a wrong result is the next check"
}

@test "every element of the result is right, in both issue orders" {
    check_verified main "RESULT: verified all ... elements, sequential and pipelined in both orders" WRONG \
        "chunk c starts at element chunk_start(p, c), in h_in, d_in, d_out and h_out alike, and has chunk_len(p, c) elements"
}

@test "the chunks ran on two or more created streams" {
    local order n
    need_run main
    need_trace main
    for order in "${ORDERS[@]}"; do
        n=$(tq main streams gpu --window "nvtx:$order+gpu" | grep -c created || true)
        draw_on_fail main --window "nvtx:$order#last"
        is_true 'n >= 2' n="$n" || { say_fail "copies and kernels in 2 or more created streams" \
            "$(words "$order"): $n created streams in its pipelined runs ($(tq main streams gpu --window "nvtx:$order+gpu" | tr '\n' ' '))" \
            "$([ "$n" = 1 ] && echo "every chunk went to the same stream: ")chunk c goes to p->streams[c % p->nstreams]: one stream runs everything in order"
            return 1; }
    done
}

# UNEVEN: the NVTX ranges of the uneven shape's two runs (one an order).
UNEVEN=(uneven_depth_first uneven_breadth_first)

# streams_of RUN: for the chunks' work (copies and kernels) inside the NVTX
# ranges of the uneven shape in RUN, one line per stream: "KIND KERNELS"
# (KIND: created or default), most kernels first. A stream with copies and
# no kernel is listed too (a copy on another stream races the kernel of its
# chunk); a memset is not the chunks': a program that does not wait after
# poison()'s cudaMemset (on the legacy default stream) can have it start
# inside the range it enters next, every chunk on its right stream (make
# mutate, once on an H200 beside other checkers).
streams_of() {
    local -A kind=() used=()
    local id k f s fl
    while read -r id k _; do kind[$id]=$k; done < <(tq "$1" streams gpu)
    tq_file fl "$1" list gpu --window 'nvtx:uneven*' --whole
    while IFS=$'\t' read -r -a f; do
        [ "${f[3]:-memset}" != memset ] || continue
        k=0; [ "${f[3]}" != kernel ] || k=1
        used[${f[4]}]=$((${used[${f[4]}]:-0} + k))
    done <"$fl"
    for s in "${!used[@]}"; do echo "${kind[$s]:-unknown} ${used[$s]}"; done | sort -k2,2nr
}

# 7 chunks over 3 streams: chunks 0, 3, 6 in the first, 1 and 4 in the
# second, 2 and 5 in the third, in each order. With streams[c] instead of
# streams[c % 3], chunks 3 to 6 go to the part's streams[3..6], which it
# does not own: 0, the legacy default stream.
@test "with 7 chunks over 3 streams, chunk c runs in stream c % 3" {
    need_run main
    need_trace main
    local seen passes=0 r d
    for r in "${UNEVEN[@]}"; do passes=$((passes + $(tq main count "nvtx:$r"))); done
    seen=$(streams_of main | tr '\n' ' ' | sed 's/ $//')
    draw_on_fail main --window 'nvtx:uneven*'
    tq_in d main count kernel --stream default --window 'nvtx:uneven*'
    [ "$seen" = "created $((3 * passes)) created $((2 * passes)) created $((2 * passes))" ] ||
        say_fail "the uneven shape's kernels on 3 created streams: $((3 * passes)), $((2 * passes)) and $((2 * passes)) kernels ($passes runs of 7 chunks, one an order)" \
        "kernels per stream: ${seen:-none}" \
        "$(case ${d:-0} in
            $((7 * passes))) echo "all $((7 * passes)) kernels of the uneven runs ran on the legacy default stream: give scramble() the chunk's stream" ;;
            *) [ "${d:-0}" = 0 ] || printf '%s' "$d of the $((7 * passes)) kernels of the uneven runs ran on the legacy default stream: "
               echo "chunk c goes to p->streams[c % p->nstreams]: the uneven runs own p.nstreams = 3 streams, and p->streams[c] past them is 0, the default stream" ;;
           esac)"
}

@test "every copy is from or to pinned memory" {
    local pageable pinned w
    need_run main
    need_trace main
    pageable=$(( $(tq main count h2d --mem PAGEABLE) + $(tq main count d2h --mem PAGEABLE) ))
    pinned=$(( $(tq main count h2d --mem PINNED) + $(tq main count d2h --mem PINNED) ))
    mapfile -t w < <(last depth_first)
    draw_on_fail main "${w[@]}"
    [ "$pageable" = 0 ] && [ "$pinned" -gt 0 ] || say_fail \
        "every H2D and D2H copy from/to pinned memory" \
        "$pinned pinned, $pageable pageable copies" \
        "$(pageable_words)allocate h_in and h_out with cudaMallocHost (TODO 1): from malloc'd memory cudaMemcpyAsync may make the host wait, and its copy cannot overlap a kernel"
}

@test "an H2D copy of one chunk overlapped the kernel of another" {
    local order ov
    need_run main
    need_trace main
    for order in "${ORDERS[@]}"; do
        tq_in ov main overlap h2d kernel --window "nvtx:$order+gpu"
        draw_on_fail main --window "nvtx:$order#last"
        is_true 'ms > 0 && f >= 0.05' ms="$(cut -d ' ' -f 1 <<<"$ov")" f="$(cut -d ' ' -f 2 <<<"$ov")" || {
            say_fail "H2D copies running while kernels run (at least 5% of the H2D time)" \
            "$(words "$order"): $(fmt "$(cut -d ' ' -f 1 <<<"$ov")") ms of overlap, $(fmt "$(cut -d ' ' -f 2 <<<"$ov")") of the H2D time" \
            "$(why_serial main "$order" | grep . || echo "give scramble() the chunk's stream: a kernel on the legacy default stream waits for every blocking stream (cudaStreamCreate makes blocking ones), and they for it")"
            return 1; }
    done
}

@test "H2D and D2H copies overlapped, where the GPU has two copy engines" {
    local order ce ov
    need_run main
    need_trace main
    tq_in ce main meta copy_engines
    [ "${ce:-0}" -ge 2 ] || skip "this GPU has ${ce:-?} copy engine(s): H2D and D2H take turns on it"
    for order in "${ORDERS[@]}"; do
        tq_in ov main overlap h2d d2h --window "nvtx:$order+gpu"
        draw_on_fail main --window "nvtx:$order#last"
        is_true 'ms > 0 && f >= 0.05' ms="$(cut -d ' ' -f 1 <<<"$ov")" f="$(cut -d ' ' -f 2 <<<"$ov")" || {
            say_fail "H2D and D2H copies at the same time on this GPU's $ce copy engines (at least 5% of the H2D time)" \
            "$(words "$order"): $(fmt "$(cut -d ' ' -f 1 <<<"$ov")") ms of overlap" \
            "chunks in different streams: while chunk c comes back, chunk c+2 can go in"
            return 1; }
    done
}

# TIMING_HINT: what the printed times need, for the hint of the check below
TIMING_HINT="keep the given run_sequential() and run_pipelined() as they are: each records its events on the legacy default stream (0), the sequential version one right before and one right after each step (ev[0] to ev[3]), the pipelined version one before and one after the whole pipeline (the created streams wait for what is before it there, and what comes after it waits for all of them); seq_h2d_ms, seq_kernel_ms, seq_d2h_ms and so bound_ms are read from those events"

# span_of LO HI: streamtrace's words for the time from LO to HI (ms), a
# twentieth of it more on either side (a drawing of what a check judged)
span_of() {
    local a b m
    ns_of a "$1"; ns_of b "$2"
    m=$(((b - a) / 20)); ((m >= 10000)) || m=10000
    a=$(((a - m < 0 ? 0 : a - m) + 500)) b=$((b + m + 500))
    printf -- '--from\n%d.%03d\n--to\n%d.%03d\n' $((a / 1000000)) $((a / 1000 % 1000)) $((b / 1000000)) $((b / 1000 % 1000))
}

# timing_events RUN: the events each version of RUN is timed with bracket
# what they time, by what the program guaranteed: each cudaEventElapsedTime
# reads two records between which its thread queued one step of a
# sequential run (or all three), or the whole of a pipelined run, each
# ordered after the start record and before the stop record, and the stop
# record waited for by the host before the call (streamtrace ask's
# `elapsed`: the legacy default stream and the blocking streams order each
# other, CUDA Runtime API, "Stream synchronization behavior"). A structure:
# the same in every run of a program.
timing_events() {
    local run=$1 cd cb bad k lo hi win=()
    [ "$(tq "$run" count nvtx:sequential)" -gt 0 ] && [ "$(tq "$run" count nvtx:depth_first)" -gt 0 ] &&
        [ "$(tq "$run" count nvtx:breadth_first)" -gt 0 ] || {
        say_fail "NVTX ranges \"sequential\", \"depth_first\" and \"breadth_first\" with GPU work in them" \
        "$(tq "$run" count nvtx:sequential) sequential, $(tq "$run" count nvtx:depth_first) depth_first, $(tq "$run" count nvtx:breadth_first) breadth_first" \
        "keep run_sequential() and run_pipelined() as given"; return 1; }
    # the chunks: the kernels the GPU ran in the last pipelined run of each order
    tq_in cd "$run" count kernel --window nvtx:depth_first#last
    tq_in cb "$run" count kernel --window nvtx:breadth_first#last
    # "K LO HI why" of the first timing that is not so
    local all f o1 o2 work r call c w
    local -A n=() seen=()
    all=$(timings "$run")
    while IFS=$'\t' read -r f o1 o2; do
        read -r k lo hi work r _ <<<"$f"
        call="cudaEventElapsedTime call $k"
        [ "$r" = - ] || call+=" (range $r)"
        if [ "$lo" = - ] || [ "$hi" = - ]; then
            [ "$o1" != ok ] || o1="its events have no stamp in the trace"
            bad=${bad:-"$k - - $call: $o1"}
            continue
        fi
        case $r in
            sequential)
                n[$work]=$((${n[$work]:-0} + 1))
                case $work in
                    H2D:1 | kernel:1 | D2H:1 | H2D:1,kernel:1,D2H:1) ;;
                    *) bad=${bad:-"$k $lo $hi $call: its two events bracket $(work_words "$work"), not one step of a sequential run (or all three)"} ;;
                esac ;;
            depth_first | breadth_first)
                c=$cd; [ "$r" = depth_first ] || c=$cb
                w="H2D:${c:-0},kernel:${c:-0},D2H:${c:-0}"
                [ "$work" = "$w" ] ||
                    bad=${bad:-"$k $lo $hi $call: its two events bracket $(work_words "$work"), not the whole pipelined run ($(work_words "$w"))"}
                seen[$r]=1 ;;
            *) continue ;;
        esac
        if [ "$o1" != ok ]; then bad=${bad:-"$k $lo $hi $call: $o1"}
        elif [ "$o2" != ok ]; then bad=${bad:-"$k $lo $hi $call: $o2"}; fi
    done <<<"$all"
    local h=${n[H2D:1]:-0} kn=${n[kernel:1]:-0} d=${n[D2H:1]:-0}
    if [ "$h" = 0 ] || [ "$h" != "$kn" ] || [ "$h" != "$d" ]; then
        bad=${bad:-"- - - the sequential runs were timed $h times around an H2D copy alone, $kn around a kernel alone, $d around a D2H copy alone"}
    elif [ -z "${seen[depth_first]:-}" ] || [ -z "${seen[breadth_first]:-}" ]; then
        bad=${bad:-"- - - no timing of a $([ -n "${seen[depth_first]:-}" ] && echo breadth || echo depth)-first run"}
    fi
    [ -n "$bad" ] || return 0
    read -r k lo hi bad <<<"$bad"
    if [ "$lo" != - ]; then
        mapfile -t win < <(span_of "$lo" "$hi")
        draw_on_fail "$run" "${win[@]}"
    else
        draw_on_fail "$run" --window 'nvtx:sequential#1'
    fi
    say_fail "each time read from two events that the program made bracket what it times: one step of a sequential run (or all three), or a whole pipelined run; the stop event waited for" \
        "$bad" "$TIMING_HINT"
    return 1
}

# printed_times RUN: the sequential and pipelined times RUN printed are the
# GPU's times between the two events their cudaEventElapsedTime calls read
# (timing_events), the best of its runs each.
printed_times() {
    local run=$1 all fig v t what w want best a b work range
    timing_events "$run" || return 1
    all=$(timings "$run" | cut -f 1)
    mapfile -t w < <(last depth_first)
    draw_on_fail "$run" "${w[@]}" --window 'nvtx:breadth_first#last'
    for fig in seq_ms seq_h2d_ms seq_kernel_ms seq_d2h_ms depth_ms breadth_ms; do
        need_figure_in v "$run" "$fig" || return "$HOPELESS"
        case $fig in
            seq_ms) what="the first and the last event of a sequential run" want="H2D:1,kernel:1,D2H:1 sequential" ;;
            seq_h2d_ms) what="the events around the H2D copy of a sequential run" want="H2D:1 sequential" ;;
            seq_kernel_ms) what="the events around the kernel of a sequential run" want="kernel:1 sequential" ;;
            seq_d2h_ms) what="the events around the D2H copy of a sequential run" want="D2H:1 sequential" ;;
            *) what="the events around a $(words "${fig%_ms}")-first pipelined run" want="* ${fig%_ms}_first" ;;
        esac
        # the shortest of the timings of that work
        best=""
        while read -r _ a b work range _; do
            # shellcheck disable=SC2053 # want may be a pattern
            [[ "$work $range" == $want ]] || continue
            [ "$a" != - ] || a=0
            [ "$b" != - ] || b=0
            ns_of a "$a"; ns_of b "$b"
            [ -n "$best" ] && ((b - a >= best)) || best=$((b - a))
        done <<<"$all"
        t=""
        [ -z "$best" ] || printf -v t '%.6f' "${best}e-6"
        kept_time "$fig" "$v" "$t"
        same_gpu_time "$v" "$t" || { say_fail \
            "$fig = the GPU's time between $what, $(fmt "$t") ms, the best of the runs (within 0.5% + 0.1 ms)" \
            "$fig = $v" "$TIMING_HINT"; return 1; }
    done
}

# The events are a structure, judged on the first run; the printed times
# are two stamps of each event, which a switch to another program between
# them can put apart: they may look at up to 2 more runs (second_chance).
@test "the printed times are the GPU's times between the events around each version" {
    need_run main
    need_trace main
    timing_events main || return 1
    second_chance main printed_times
}

@test "the depth-first pipeline comes close to the stage bound" {
    need_run main
    need_trace main
    second_chance main near_bound depth_first
}

@test "the breadth-first pipeline comes close to the stage bound" {
    need_run main
    need_trace main
    second_chance main near_bound breadth_first
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
    check_usage badstreams "--streams 0"
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
