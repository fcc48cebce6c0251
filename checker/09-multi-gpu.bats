#!/usr/bin/env bats
# 09-multi-gpu.bats -- the checks of lab 09 (several GPUs).
# Run from the lab folder with `make check`, or `make check LAB=09` at the top.
# The program runs once under the trace tool, all three parts, each in an
# NVTX range: "part1_split" (the pipeline split over the GPUs, R times the
# ranges "sequential" and "pipelined"), "part2_event" (a producer on GPU 0, a
# consumer on GPU 1 ordered after it by an event) and "part3_peer" (GPUs 0
# and 1 swap data: after one exchange to warm up, R timed exchanges, each in
# a range "staged", peer access off, then the same in ranges "direct", peer
# access on; the program prints the times of the best, staged_rep and
# direct_rep say which). Every record of the trace names its GPU.
#
# What needs two GPUs (which GPU did what, the GPUs at the same time, how a
# copy between GPUs went) is skipped on a machine with one, "needs 2 GPUs":
# not graded, never a pass or a fail. The program still runs there, both
# sides of every part on GPU 0, and every other check is made.

bats_require_minimum_version 1.5.0
LAB_ID=09-multi-gpu
PROG=multi_gpu
load lib/checks

LASTPIPE=(--window 'nvtx:pipelined#last')
EVENT=(--window nvtx:part2_event)
EVENT_GPU=(--window nvtx:part2_event+gpu)   # what a failed check of part 2 draws
STAGED=(--window nvtx:staged)
DIRECT=(--window nvtx:direct)

# How far above the stage bound the split pipeline may be, as lab 05's
# BOUND_FACTOR (05-overlap.bats says why 1.5): a correct pipeline takes about
# the bound, one that serializes its chunks or its GPUs twice it and more.
# The pipeline and its stages are measured at different moments, so this
# check may look at up to 2 more runs (second_chance), as lab 05's does.
BOUND_FACTOR=1.5

setup_file() {
    build_lab
    run_beside badopt -- --frobnicate
    run_beside badpart -- --part 4
    run_beside nodev --env CUDA_VISIBLE_DEVICES= --
    run_lab main --trace
    runs_done
    # the questions its checks ask of the run, answered in one parse
    tq_ahead main <<'EOF'
        bound nvtx:sequential nvtx:pipelined
        corr api
        corr copy
        corr event
        corr kernel
        corr memset
        corr nvtx
        corr nvtx:part1_split
        corr nvtx:part2_event
        corr sync
        corr sync:wait
        count kernel --device 0 --window nvtx:pipelined#last
        count kernel --device 1 --window nvtx:pipelined#last
        count kernel:consume_kernel --window nvtx:part2_event
        count kernel:produce_kernel --window nvtx:part2_event
        count p2p:direct --window nvtx:direct
        count p2p:host --window nvtx:staged
        current kernel
        events p2p
        list api --window nvtx:part2_event
        list api --window nvtx:pipelined#last
        list gpu --window nvtx:part2_event
        list gpu --window nvtx:pipelined#last
        list kernel:consume_kernel --window nvtx:part2_event
        list kernel:produce_kernel --window nvtx:part2_event
        list nvtx:direct
        list nvtx:staged
        list p2p
        order kernel:produce_kernel kernel:consume_kernel --window nvtx:part2_event
        streams
        streams gpu --window nvtx:pipelined#last
        streams kernel --device 0 --window nvtx:pipelined#last
        streams kernel --device 1 --window nvtx:pipelined#last
        streams p2p --window nvtx:direct
        streams p2p --window nvtx:staged
EOF
}

# slices_on RUN DEVICE: how many slices part 1 put on GPU DEVICE (slice s
# goes to GPU s % gpus).
slices_on() {
    local n g
    n=$(figure "$1" slices) g=$(gpus "$1")
    [[ $n =~ ^[0-9]+ ]] && n=$((10#${BASH_REMATCH[0]})) || n=0
    if [[ $g =~ ^[0-9]+$ ]] && [ "$((10#$g))" -gt 0 ] && [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -lt "$((10#$g))" ] && [ "$n" -gt "$2" ]; then
        echo $(((n - 1 - $2) / 10#$g + 1))
    else
        echo 0
    fi
}

# ------------------------------------------------------------ part 1 helpers

# split_reps RUN RANGE: for each NVTX range RANGE ("sequential", "pipelined")
# of RUN, one line per GPU that did work in it:
#   REP DEVICE H2D_MS KERNEL_MS D2H_MS KERNELS SPAN_MS
# the time each stage kept that GPU busy (the union of its records: on one
# GPU the two slices' kernels may run at once), its kernels, and the span
# of the whole rep (every GPU, first start to last end). GPU work belongs to
# the range it started in (streamtrace query's stages, less the line of a
# range without GPU work). Kept in $RUNS: the checks and Your run ask again.
split_reps() {
    kept "$RUNS/$1.split-$2" split_reps_of "$1" "$2"
}
split_reps_of() {
    local lines=() l f
    tq_lines lines "$1" stages "nvtx:$2"
    for l in "${lines[@]}"; do
        read -r -a f <<<"$l"
        [ "${f[1]:-}" = - ] || printf '%s\n' "$l"
    done
    return 0
}

# split_bound RUN: "FRACTION BOUND_MS PIPE_MS REPS". Each pipelined rep is set
# against the sequential rep just before it (the program alternates them).
# Each GPU d has its stage busy times H, K, D (sequential) and C chunks (the
# kernels it ran in the pipelined rep): its pipeline cannot beat its slowest
# stage run whole plus the first chunk's earlier stages and the last chunk's
# later ones, max(H + k + d, h + K + d, h + k + D) with h = H / C..., or with
# one copy engine max(H + D, h + K + d) (as lab 05). The GPUs work at once,
# so the rep's bound is the largest GPU's; FRACTION = bound / the pipelined
# rep's span, the median over the reps (streamtrace query's bound).
split_bound() {
    local lines=() l f
    tq_lines lines "$1" bound nvtx:sequential nvtx:pipelined
    for l in "${lines[@]}"; do
        read -r -a f <<<"$l"
        printf '%s %s %s %s\n' "${f[0]:-}" "${f[1]:-}" "${f[2]:-}" "${f[4]:-}"
    done
    return 0
}

# queued_before_wait RUN [WINDOW...]: "ok" when, in WINDOW, every call that
# queued work (cudaMemcpyAsync, a kernel launch) began before the first call
# that waited (a ...Synchronize, a cudaMemcpy, which waits, or a ...Query
# polled until the work is done); else what came first, in words.
queued_before_wait() {
    local run=$1
    shift
    local lines=() l t n last="" lastname="" nq=0 wait="" waitname="" wait_ns last_ns
    tq_lines lines "$run" list api "$@"
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r t _ _ _ _ n _ <<<"$l"
        case $n in
            cudaMemcpyAsync*|cudaLaunchKernel*) last=$t lastname=$n nq=$((nq + 1)) ;;
            *Synchronize|cudaMemcpy|*Query) [ -n "$wait" ] || wait=$t waitname=$n ;;
        esac
    done
    if [ "$nq" = 0 ]; then
        echo "no copy or kernel queued"
    elif [ -n "$wait" ] && ns_of wait_ns "$wait" && ns_of last_ns "$last" && [ "$wait_ns" -lt "$last_ns" ]; then
        printf '%s at %.3f ms, before the last %s at %.3f ms\n' "$waitname" "$wait" "$lastname" "$last"
    else
        echo ok
    fi
}

# unwaited RUN: the streams whose GPU work, queued in the last pipelined run,
# went on after that run's NVTX range had ended: the host returned from
# run_pipelined() without waiting for them. In words ("GPU 0's streams 23,
# 24, 25 and GPU 1's stream 29"), or nothing. (A wait that returned leaves
# its stream's work ended before the range's end: a stream it waited for is
# never named.)
unwaited() {
    local lines=() l f end d st t out="" words=""
    local -a on=() # on[DEVICE * 2^32 + STREAM]: ended after the range (bash lists them in order)
    tq_lines lines "$1" list nvtx:pipelined
    [ ${#lines[@]} -gt 0 ] || return 0
    IFS=$'\t' read -r -a f <<<"${lines[-1]}"
    end=${f[1]:-}
    [ -n "$end" ] || return 0
    ns_of end "$end"
    tq_lines lines "$1" list gpu --window 'nvtx:pipelined#last+gpu'
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r -a f <<<"$l"
        [[ ${f[8]:-} =~ ^[0-9]+$ && ${f[4]:-} =~ ^[0-9]+$ ]] || continue
        ns_of t "${f[1]}"
        [ "$t" -le $((end + 1000)) ] || on[$((10#${f[8]} << 32 | 10#${f[4]}))]=1
    done
    d=-1
    for l in "${!on[@]}"; do
        st=$((l & 0xffffffff))
        if [ $((l >> 32)) != "$d" ]; then
            [ -z "$words" ] || out+="${out:+ and }$words"
            d=$((l >> 32)) words="GPU $d's stream $st"
        else
            words="${words/"'s stream "/"'s streams "}, $st"
        fi
    done
    [ -z "$words" ] || out+="${out:+ and }$words"
    [ -z "$out" ] || echo "$out"
}

# gpu_spans RUN [WINDOW...]: one line per GPU that worked in WINDOW:
# "DEVICE FIRST_START LAST_END" (ms)
gpu_spans() {
    local run=$1
    shift
    local lines=() l f d t
    local -a lo=() hi=() los=() his=()
    tq_lines lines "$run" list gpu "$@"
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r -a f <<<"$l"
        [[ ${f[8]:-} =~ ^[0-9]+$ ]] || continue
        d=$((10#${f[8]}))
        ns_of t "${f[0]}"
        [ -n "${lo[d]:-}" ] && [ "$t" -ge "${lo[d]}" ] || lo[d]=$t los[d]=${f[0]}
        ns_of t "${f[1]}"
        [ -n "${hi[d]:-}" ] && [ "$t" -le "${hi[d]}" ] || hi[d]=$t his[d]=${f[1]}
    done
    for d in "${!lo[@]}"; do printf '%s %.6f %.6f\n' "$d" "${los[d]}" "${his[d]}"; done
}

# ------------------------------------------------------------ part 3 helpers

# rep_of RUN RANGE: which timed exchange of RANGE ("staged", "direct") the
# program reported, its figure RANGE_rep (1 where there is none: a program
# that timed one exchange of each)
rep_of() {
    local k
    figure_in k "$1" "${2}_rep"
    k=${k%%.*}
    [[ "$k" =~ ^[1-9][0-9]*$ ]] || k=1
    echo "$k"
}

# ranges_of RUN RANGE: how many NVTX ranges named RANGE the run has
ranges_of() {
    local all n=0 line
    tq_in all "$1" list "nvtx:$2"
    [ -z "$all" ] || while IFS= read -r line; do n=$((n + 1)); done <<<"$all"
    echo "$n"
}

# copies RUN RANGE: the two copies of the reported exchange, in the NVTX
# range RANGE ("staged", "direct") that rep_of names, GPU 0's first, one line each:
#   K START END DUR BYTES DEVICE STREAM SEL
# SEL is p2p on two GPUs, d2d on one (both sides on GPU 0); K the record's
# number among all records of SEL in the trace (what check_event_time
# takes). GPU 0's copy: on two GPUs the one from GPU 0 (a peer copy's
# DEVICE is its source); on one GPU the one on the stream made first.
copies() {
    local sel=p2p r
    [ "$(gpus "$1")" -ge 2 ] 2>/dev/null || sel=d2d
    tq_line r "$1" "$(rep_of "$1" "$2")" list "nvtx:$2"
    [ -n "${r[0]:-}" ] || return 0
    [ -n "${r[1]:-}" ] || return 0
    local lines=() l f t a b k=0 x y got=()
    ns_of a "${r[0]}"
    ns_of b "${r[1]}"
    tq_lines lines "$1" list "$sel"
    for l in "${lines[@]}"; do
        k=$((k + 1))
        IFS=$'\t' read -r -a f <<<"$l"
        ns_of t "${f[0]:-}"
        [ "$t" -ge "$a" ] && [ "$t" -le "$b" ] || continue
        # in order of DEVICE, then STREAM (numbers), then the whole line
        printf -v l '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "$k" "${f[0]}" "${f[1]}" "${f[2]}" "${f[6]}" "${f[8]}" "${f[4]}" "$sel"
        for ((x = ${#got[@]}; x > 0; x--)); do
            copy_before "$l" "${got[x - 1]}" || break
            got[x]=${got[x - 1]}
        done
        got[x]=$l
    done
    for ((y = 0; y < ${#got[@]} && y < 2; y++)); do printf '%s\n' "${got[y]}"; done
}

# copy_before LINE1 LINE2: copies' LINE1 sorts before LINE2: by DEVICE, then
# STREAM (as numbers, where they are), then the whole line
copy_before() {
    local a b x y i
    IFS=$'\t' read -r -a a <<<"$1"
    IFS=$'\t' read -r -a b <<<"$2"
    for i in 5 6; do
        x=${a[i]:-0} y=${b[i]:-0}
        [[ $x =~ ^[0-9]+$ ]] || x=0
        [[ $y =~ ^[0-9]+$ ]] || y=0
        [ "$((10#$x))" = "$((10#$y))" ] || { [ "$((10#$x))" -lt "$((10#$y))" ]; return; }
    done
    [[ $1 < $2 ]]
}

# how_copied RUN RANGE: the exchange's copies in RANGE as the trace says they
# went, in words: "2 staged through host memory", "1 direct, 1 staged..."
how_copied() {
    local d h
    tq_in d "$1" count p2p:direct --window "nvtx:$2"
    tq_in h "$1" count p2p:host --window "nvtx:$2"
    echo "${d:-0} straight from GPU to GPU, ${h:-0} staged through host memory"
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace.
your_run() {
    your_run_ok main || return 0
    local frac staged direct
    read -r frac _ <<<"$(split_bound main)"
    your_fig bound_pct "$(calc '100 * f' f="$frac")" % \
        "part 1: the largest GPU's stage bound / the split pipeline's time (100: at the bound)"
    if [ "$(gpus main)" -ge 2 ] 2>/dev/null; then
        staged=$(copies main staged | head -n 1) direct=$(copies main direct | head -n 1)
    fi
    your_fig staged_vs_direct "$(ratio "$(cut -f 4 <<<"${staged:-}")" "$(cut -f 4 <<<"${direct:-}")")" x \
        "part 3: GPU 0 -> 1, the copy's time with peer access off / on (two GPUs)"
    local b t
    IFS=$'\t' read -r _ _ _ t b _ <<<"${direct:-}"
    is_positive "$t" && [ -n "$b" ] || b="" t=""
    your_fig direct_gbps "$(calc -f '%.4g\n' 'b / (t * 1e6)' b="$b" t="$t")" GB/s \
        "part 3: GPU 0 -> 1 with peer access on, bytes / the traced copy's time (two GPUs)"
}

# ------------------------------------------------------------ the checks

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0" {
    check_exits_ok main \
        "a CUDA error names the file:line and the call: a kernel must not read another GPU's memory while peer access is off (it may fault: cudaErrorIllegalAddress), as one does that runs on the GPU of a stream made before its slice's GPU was current (TODO 1); and the CUDA Programming Guide says a kernel launch into a stream of a GPU that is not current fails"
}

@test "every element of the result is right" {
    check_verified main "RESULT: verified every result of the parts that were run" WRONG \
        "part 1: every slice in, through the kernel and back (TODO 2); part 2: the consumer must not start before the producer is done (TODO 3); part 3: each side's numbers into the other's halo (TODO 4)"
}

# A kernel runs on the GPU of its stream. The CUDA Programming Guide says a
# launch into a stream of a GPU that is not the current one fails; on two
# H100s (CUDA 13.0, driver 580) such launches ran, on the stream's GPU, with
# right results, so that no other check could tell. The trace says which GPU
# was current at each launch (format 3: `streamtrace query FILE current
# kernel`), and this check holds the Guide's rule. On one GPU every stream is
# GPU 0's and GPU 0 always current: it cannot fail there, so it needs two.

# elsewhere_kernels RUN: the kernels launched while a GPU other than their
# stream's was current, one line per kernel name, stream GPU and current GPU:
#   NAME<TAB>COUNT<TAB>STREAM_GPU<TAB>CURRENT_GPU<TAB>STREAMS<TAB>FIRST_MS<TAB>K
# (K: the first one's number among the trace's kernels, for draw_on_fail);
# "unknown" alone when the trace says for no kernel which GPU was current.
elsewhere_kernels() {
    local lines=() l f i=0 known=0 key sep=$'\x1c'
    local -A cnt=() first=() nr=() st=() seen=()
    local order=()
    tq_lines lines "$1" current kernel
    for l in "${lines[@]}"; do
        i=$((i + 1))
        IFS=$'\t' read -r -a f <<<"$l"
        [ "${f[10]:-}" != - ] || continue
        known=1
        [ "${f[10]:-}" != "${f[8]:-}" ] || continue
        key="${f[5]%%(*}$sep${f[8]:-}$sep${f[10]:-}"
        if [ -z "${cnt[$key]:-}" ]; then
            order+=("$key") cnt[$key]=0 nr[$key]=$i st[$key]=""
            printf -v "first[$key]" '%.3f' "${f[0]}"
        fi
        cnt[$key]=$((cnt[$key] + 1))
        [ -n "${seen[$key$sep${f[4]:-}]:-}" ] ||
            { seen[$key$sep${f[4]:-}]=1; st[$key]+="${st[$key]:+, }${f[4]:-}"; }
    done
    [ "$known" = 1 ] || { echo unknown; return 0; }
    for key in "${order[@]}"; do
        IFS=$sep read -r -a f <<<"$key"
        printf '%s\t%d\t%s\t%s\t%s\t%s\t%d\n' "${f[0]}" "${cnt[$key]}" "${f[1]:-}" "${f[2]:-}" "${st[$key]}" "${first[$key]}" "${nr[$key]}"
    done
}

@test "every kernel was launched while its stream's GPU was current" {
    need_run main
    need_trace main
    need_gpus 2
    local off seen="" todo="" name n sg cg streams first k k1=""
    off=$(elsewhere_kernels main)
    [ "$off" != unknown ] || skip "not recorded: the trace does not say which GPU was current at each launch (a trace older than format 3)"
    [ -n "$off" ] || return 0
    while IFS=$'\t' read -r name n sg cg streams first k; do
        k1=${k1:-$k}
        seen+="${seen:+; }$n launch$([ "$n" = 1 ] || echo es) of $name into stream$([[ $streams != *,* ]] || echo s) $streams of GPU $sg while GPU $cg was current (the first at $first ms)"
        case $name in
            scramble_kernel) todo+="${todo:+; }make each slice's GPU current (cudaSetDevice) before issue_slice() queues its work (TODO 2)" ;;
            consume_kernel) todo+="${todo:+; }make GPU cons current (cudaSetDevice) after recording the event, before s_cons's wait, copy and launch (TODO 3)" ;;
            produce_kernel) todo+="${todo:+; }keep cudaSetDevice(prod) before the producer's launch, as part_event() has it" ;;
            *) todo+="${todo:+; }make the GPU of $name's stream current before its launch" ;;
        esac
    done <<<"$off"
    draw_on_fail main --record kernel "$k1"
    say_fail "every kernel launched with the GPU of its stream current (cudaSetDevice to that GPU first)" \
        "$seen" \
        "$todo. The CUDA Programming Guide says a kernel launch into a stream of a GPU that is not the current one fails. Two H100s with CUDA 13.0 ran such launches anyway, on the stream's GPU, with right results: only the trace shows it."
}

# ------------------------------------------------------------ part 1

@test "each slice's chunks ran on streams of their own, on the slice's GPU" {
    need_run main
    need_trace main
    draw_on_fail main "${LASTPIPE[@]}"
    local g n bad="" want per_stream streams chunks kinds
    need_figure_in chunks main chunks || return 1
    need_figure_in streams main streams || return 1
    chunks=${chunks%%.*} streams=${streams%%.*}
    per_stream=$((streams < chunks ? streams : chunks))
    tq_in kinds main streams gpu "${LASTPIPE[@]}"
    kinds=$(words_of 2 "$kinds")
    [ "$kinds" = "created " ] || { say_fail \
        "every copy and kernel of the pipeline on a stream the program created" \
        "streams of kinds: $kinds" \
        "$(ran_elsewhere main created "${LASTPIPE[@]}"): issue_slice() puts chunk c in the slice's stream c % S"
        return 1; }
    for ((g = 0; g < $(gpus main); g++)); do
        want=$(( $(slices_on main "$g") * chunks ))
        tq_in n main count kernel --device "$g" "${LASTPIPE[@]}"
        [ "$n" = "$want" ] || bad+="${bad:+; }GPU $g ran $n kernels, not $want"
        n=$(tq main streams kernel --device "$g" "${LASTPIPE[@]}" | wc -l)
        want=$(( $(slices_on main "$g") * per_stream ))
        [ "$n" = "$want" ] || bad+="${bad:+; }GPU $g's kernels ran on $n streams, not $want"
    done
    [ -n "$bad" ] || return 0
    local late
    late=$(unwaited main)
    if [ -n "$late" ]; then
        say_fail \
            "slice s's $chunks chunks on GPU s % $(gpus main), over $per_stream streams of that GPU, within the pipelined run" \
            "$bad, and work of this run went on after run_pipelined() had returned" \
            "the host left streams unwaited: $late still had work when run_pipelined() returned. Once every slice is queued, wait for every one of each slice's streams (cudaStreamSynchronize), each with its slice's GPU current (TODO 2)"
        return 1
    fi
    say_fail \
        "slice s's $chunks chunks on GPU s % $(gpus main), over $per_stream streams of that GPU" \
        "$bad" \
        "a stream belongs to the GPU current when it is made: make the slice's GPU current first (TODO 1), and again before its work is queued (TODO 2)"
}

@test "the host queued every GPU's work before it waited for any" {
    need_run main
    need_trace main
    draw_on_fail main "${LASTPIPE[@]}"
    local seen
    seen=$(queued_before_wait main "${LASTPIPE[@]}")
    [ "$seen" = ok ] || say_fail \
        "in the pipelined run, every chunk of every slice queued before the first wait" \
        "$seen" \
        "one host thread drives every GPU: a wait before the next GPU's work is queued leaves that GPU idle until then. Queue every slice, then wait (TODO 2)"
}

# all_at_once GPUS SPANS: every GPU (at least 2, and GPUS) has a line of
# gpu_spans, and one time lies in all of them
all_at_once() {
    local g=${1:-0} d a b n=0 lo=0 hi=0
    [[ $g =~ ^[0-9]+$ ]] || g=0
    while read -r d a b; do
        [ -n "$d" ] || continue
        n=$((n + 1))
        ns_of a "$a"
        ns_of b "$b"
        [ "$n" -gt 1 ] && [ "$a" -le "$lo" ] || lo=$a
        [ "$n" -gt 1 ] && [ "$b" -ge "$hi" ] || hi=$b
    done <<<"$2"
    [ "$n" -ge "$((10#$g))" ] && [ "$n" -ge 2 ] && [ "$hi" -gt "$lo" ]
}

# Two GPUs, each running its own slice: their work must overlap in time. On
# a node whose GPUs other programs share, one GPU's work can be held back
# while the other's runs, which no structure of the trace can tell from a
# program that waits for one GPU before it queues the next (the check above
# proves the program did not): this check may look at up to 2 more runs,
# unless a GPU had no work at all (HOPELESS: the same in every run).
gpus_at_once() {
    local run=$1 spans
    draw_on_fail "$run" "${LASTPIPE[@]}"
    spans=$(gpu_spans "$run" "${LASTPIPE[@]}")
    all_at_once "$(gpus "$run")" "$spans" && return 0
    local d a b words=""
    while read -r d a b; do printf -v words '%s%sGPU %s %.3f-%.3f ms' "$words" "${words:+, }" "$d" "$a" "$b"; done <<<"$spans"
    say_fail "every GPU working on its slice while the others work on theirs (the last pipelined run)" \
        "$words" \
        "queue every GPU's work before waiting for any (TODO 2); each slice on its own GPU (TODO 1)"
    local n g cause=""
    n=$(grep -c . <<<"$spans" || true) g=$(gpus "$run")
    [ "$n" -ge "${g:-2}" ] && [ "$n" -ge 2 ] || cause="a GPU with no work"
    failed_for "$cause"
}

@test "the GPUs worked at the same time" {
    need_run main
    need_trace main
    need_gpus 2
    second_chance main gpus_at_once
}

near_bound() {
    local run=$1 frac b pipe reps
    draw_on_fail "$run" "${LASTPIPE[@]}"
    read -r frac b pipe reps <<<"$(split_bound "$run")"
    [ -n "$reps" ] || { say_fail "NVTX ranges \"sequential\" and \"pipelined\" with GPU work in them" \
        "$(tq "$run" count nvtx:sequential) sequential, $(tq "$run" count nvtx:pipelined) pipelined" \
        "keep run_sequential() and run_pipelined() as given, TODO 2 inside the range"; return "$HOPELESS"; }
    is_true 'f * x >= 1' f="$frac" x="$BOUND_FACTOR" && return 0
    say_fail \
        "the split pipeline within ${BOUND_FACTOR}x of what the stages of its busiest GPU allow (median of $reps runs)" \
        "$(fmt "$pipe") ms against a bound of $(fmt "$b") ms: $(fmt "$(ratio 1 "$frac")")x the bound" \
        "something serializes the chunks or the GPUs: a wait inside the issue loop, or a slice's chunks on one stream"
}

@test "the split pipeline comes close to what each GPU's stages allow" {
    need_run main
    need_trace main
    second_chance main near_bound
}

# ------------------------------------------------------------ part 2

@test "the consumer started only after the producer had ended" {
    need_run main
    need_trace main
    draw_on_fail main "${EVENT_GPU[@]}"
    local n order
    for n in produce_kernel consume_kernel; do
        [ "$(tq main count "kernel:$n" "${EVENT[@]}")" = 1 ] || { say_fail \
            "one $n in the range \"part2_event\"" "$(tq main count "kernel:$n" "${EVENT[@]}")" \
            "keep part_event()'s two launches as given"; return 1; }
    done
    # The consumer's first work is the copy of the producer's buffer. A peer
    # copy without peer access is traced from its queueing, the wait for the
    # event inside it, so it is judged by its end: one that ended before the
    # producer did read the buffer half made, though consume_kernel, behind
    # it, may start after the producer's end.
    local early
    local lines=() l f pe="" ce="" pn cn
    tq_lines lines main list gpu "${EVENT[@]}"
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r -a f <<<"$l"
        case ${f[3]:-}/${f[5]:-} in
            kernel/produce_kernel*) [ -n "$pe" ] || pe=${f[1]} ;;
            copy/P2P|copy/D2D) [ -n "$ce" ] || ce=${f[1]} ;;
        esac
    done
    if [ -n "$pe" ] && [ -n "$ce" ] && ns_of pn "$pe" && ns_of cn "$ce" && [ "$cn" -le "$pn" ]; then
        printf -v early '%.3f %.3f' "$ce" "$pe"
        set -- $early
        say_fail "the copy of the producer's buffer in s_cons ending after produce_kernel ended" \
            "the copy ended at $1 ms, produce_kernel at $2 ms: the copy read the buffer before it was made" \
            "an event records the work queued in its stream before cudaEventRecord: record \`made\` after the producer's launch, then let s_cons wait for it (TODO 3)"
        return 1
    fi
    tq_in order main order kernel:produce_kernel kernel:consume_kernel "${EVENT[@]}"
    [ "$order" = before ] || say_fail \
        "consume_kernel (and the copy before it in s_cons) starting after produce_kernel ended" \
        "they overlapped: $(kernels_in_words main "${EVENT_GPU[@]}")" \
        "an event records the work queued in its stream before cudaEventRecord: record \`made\` after the producer's launch, then let s_cons wait for it (TODO 3)"
}

# kernels_in_words RUN WINDOW...: the kernels of WINDOW, "NAME A-B ms on GPU D", ", " between
kernels_in_words() {
    local lines=() l f words=""
    tq_lines lines "$1" list kernel "${@:2}"
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r -a f <<<"$l"
        printf -v words '%s%s%s %.3f-%.3f ms on GPU %s' "$words" "${words:+, }" "${f[5]:-}" "${f[0]:-}" "${f[1]:-}" "${f[8]:-}"
    done
    printf '%s' "$words"
}

# between_launches RUN WINDOW...: between the first and second kernel launch
# of WINDOW, a cudaStreamWaitEvent and no host wait: "ok", else what is wrong
between_launches() {
    local lines=() l n launches=0 waits=0 host=""
    tq_lines lines "$1" list api "${@:2}"
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r _ _ _ _ _ n _ <<<"$l"
        [ "$n" != cudaLaunchKernel ] || { launches=$((launches + 1)); continue; }
        [ "$launches" = 1 ] || continue
        case $n in
            cudaStreamWaitEvent) waits=$((waits + 1)) ;;
            *Synchronize|cudaMemcpy|*Query) host+="${host:+, }$n" ;;
        esac
    done
    if [ "$launches" -lt 2 ]; then echo "fewer than 2 kernel launches"
    elif [ -n "$host" ]; then echo "the host waited in between: $host"
    elif [ "$waits" = 0 ]; then echo "no cudaStreamWaitEvent in between"
    else echo ok
    fi
}

@test "the consumer waited through the event alone, the host never waited" {
    need_run main
    need_trace main
    draw_on_fail main "${EVENT_GPU[@]}"
    local seen
    seen=$(between_launches main "${EVENT[@]}")
    [ "$seen" = ok ] || say_fail \
        "between the producer's launch and the consumer's, a cudaStreamWaitEvent and no host wait" \
        "$seen" \
        "the GPUs can order themselves: cudaStreamWaitEvent(s_cons, made, 0) makes s_cons wait on the GPU, and the host goes on queueing (TODO 3)"
}

@test "the producer ran on GPU 0 and the consumer on GPU 1" {
    need_run main
    need_trace main
    need_gpus 2
    draw_on_fail main "${EVENT_GPU[@]}"
    local p c
    p=$(tq main list kernel:produce_kernel "${EVENT[@]}" | cut -f 9 | head -n 1)
    c=$(tq main list kernel:consume_kernel "${EVENT[@]}" | cut -f 9 | head -n 1)
    [ "$p" = 0 ] && [ "$c" = 1 ] || say_fail "produce_kernel on GPU 0, consume_kernel on GPU 1" \
        "produce_kernel on GPU ${p:--}, consume_kernel on GPU ${c:--}" \
        "a kernel runs on the GPU of its stream; make \`cons\` current (cudaSetDevice) before the consumer's work (TODO 3)"
}

# created_streams RUN: what parts 1 and 2 of RUN queued (the calls made in
# their NVTX ranges, "part1_split" and "part2_event") on a stream the
# program did not create: one line each, "PART<TAB>WHAT<TAB>WHERE<TAB>SYNC"
# (SYNC 1: a copy made by a call that takes no stream, cudaMemcpy or
# cudaMemcpyPeer). Copies, kernels, events and stream waits; not the given
# poison's memsets.
created_streams() {
    local lines=() l f k t c sel what where sync out=()
    local -A kind=() sdev=() as=()
    local -a rn=() r0=() r1=()
    tq_lines lines "$1" streams
    for l in "${lines[@]}"; do read -r -a f <<<"$l"; [ -z "${f[0]:-}" ] || kind[${f[0]}]=${f[1]:-} sdev[${f[0]}]=${f[2]:-}; done
    for sel in nvtx:part1_split nvtx:part2_event; do
        tq_lines lines "$1" corr "$sel"
        for l in "${lines[@]}"; do
            IFS=$'\t' read -r -a f <<<"$l"
            rn+=("${f[5]:-}")
            ns_of t "${f[0]:-}"; r0+=("$t")
            ns_of t "${f[1]:-}"; r1+=("$t")
        done
    done
    tq_lines lines "$1" corr api
    for l in "${lines[@]}"; do
        IFS=$'\t' read -r -a f <<<"$l"
        ns_of t "${f[0]:-}"
        as[${f[10]:--}]=$t
    done
    for sel in copy kernel event sync:wait; do
        tq_lines lines "$1" corr "$sel"
        for l in "${lines[@]}"; do
            IFS=$'\t' read -r -a f <<<"$l"
            c=${f[10]:-} sync=0
            [ -n "${as[$c]:-}" ] && [ "${kind[${f[4]:-}]:-}" != created ] || continue
            for ((k = 0; k < ${#rn[@]}; k++)); do
                [ "${as[$c]}" -ge "${r0[k]}" ] && [ "${as[$c]}" -le "${r1[k]}" ] && break
            done
            [ "$k" -lt ${#rn[@]} ] || continue
            case $sel in
                copy) what="${f[5]} copy"; [ "${f[11]:-}" != 0 ] || sync=1 ;;
                kernel) what=${f[5]%%(*} ;;
                event) what="event record" ;;
                *) what="stream wait (cudaStreamWaitEvent)" ;;
            esac
            case ${kind[${f[4]}]:-} in
                default) where="the legacy default stream of GPU ${sdev[${f[4]}]}" ;;
                "") where="stream ${f[4]}" ;;
                *) where="a ${kind[${f[4]}]} stream of GPU ${sdev[${f[4]}]}" ;;
            esac
            out+=("${rn[k]}"$'\t'"$what"$'\t'"$where (${f[4]})"$'\t'"$sync")
        done
    done
    [ ${#out[@]} -eq 0 ] || printf '%s\n' "${out[@]}" | sort -u
}

# In parts 1 and 2 all work goes to streams the program made: each slice's
# own streams, s_prod and s_cons. Work on a GPU's legacy default stream is
# ordered with the blocking streams of that GPU by the legacy stream's own
# rules, not by the program's streams and events: a lesson broken even where
# the results come out right. Which stream each record ran on is a
# structure of the trace.
@test "parts 1 and 2 queued every copy, kernel, event and stream wait in a stream the program created" {
    need_run main
    need_trace main
    local off seen hint
    off=$(created_streams main)
    [ -n "$off" ] || return 0
    draw_on_fail main --window nvtx:part1_split --window nvtx:part2_event
    local part last="" what where sync synced=0
    seen=""
    while IFS=$'\t' read -r part what where sync; do
        [ "$part" = part1_split ] && part="part 1" || part="part 2"
        if [ "$part" = "$last" ]; then seen+=", "; else seen+="${seen:+; }$part: "; fi
        seen+="$what on $where" last=$part
        [ "$sync" != 1 ] || synced=1
    done <<<"$off"
    if [ "$synced" = 1 ]; then
        hint="cudaMemcpy and cudaMemcpyPeer take no stream: they run on the legacy default stream of the current GPU (and cudaMemcpy keeps the host until the copy is done); keep the given cudaMemcpyAsync and cudaMemcpyPeerAsync, each with its stream"
    elif grep -q $'^part2_event\t\(event record\|stream wait\)' <<<"$off"; then
        hint="record \`made\` in the producer's stream, s_prod, and make the consumer's stream, s_cons, wait for it: cudaStreamWaitEvent(s_cons, made, 0) (TODO 3); on a legacy default stream the order comes from that stream's rules, not from the event"
    else
        hint="keep the given stream arguments: in part 1 each slice's copies and kernels go to its own streams (sl->streams[...]), in part 2 the producer's work to s_prod and the consumer's to s_cons; 0 is the legacy default stream of the current GPU, which only the legacy stream's rules order with the others"
    fi
    say_fail "every copy, kernel, event record and stream wait of parts 1 and 2 on a stream the program created (a slice's streams, s_prod, s_cons)" \
        "$seen" "$hint"
}

# ------------------------------------------------------------ part 3

# A printed time is cudaEventElapsedTime between the events around one copy:
# the same interval as the GPU's own stamps of those events in the trace.
# Another program can come between an event's own stamp and the trace's, so
# this check may look at up to 2 more runs (see same_gpu_time in
# lib/checks.bash); a misplaced event is misplaced in every run.
# copy_times RUN: every printed copy time agrees with its events.
copy_times() {
    local r line=0 k dir sel
    for r in staged direct; do
        [ "$(copies "$1" "$r" | wc -l)" = 2 ] || { say_fail \
            "two copies between the GPUs in the range \"$r\"" \
            "$(copies "$1" "$r" | wc -l)" "exchange() copies each side's numbers to the other (TODO 4)"; return "$HOPELESS"; }
        while IFS=$'\t' read -r k _ _ _ _ _ _ sel; do
            line=$((line + 1))
            dir=$([ "$line" = 1 ] && echo 0to1 || echo 1to0)
            check_event_time "$1" "$sel" "$k" "${r}_${dir}_ms" "the $r copy from GPU ${dir%to*} to GPU ${dir#*to}" 1 \
                "the events ev[k][0] and ev[k][1] are recorded in the copy's own stream, right before and after it (TODO 4: the copy goes in p->stream[k])" ||
                return
        done < <(copies "$1" "$r")
        line=0
    done
}

# on_other_gpus_stream RUN: fail, naming TODO 5, where a copy of an exchange
# ran on an internal stream of the GPU it goes to, not in the stream it was
# queued in: with peer access on one way only, the driver has the GPU that
# can reach the other's memory make the copy (seen on two H100s), outside
# p->stream[k] and its events. A structure of the trace, the same in every
# run: no second chance.
on_other_gpus_stream() {
    local r k dev stream sel kind sdev line from lines=() l f
    for r in staged direct; do
        line=0
        while IFS=$'\t' read -r k _ _ _ _ dev stream sel; do
            line=$((line + 1))
            [ -n "$stream" ] || continue
            from=$([ "$line" = 1 ] && echo 0 || echo 1)
            kind="" sdev=""
            tq_lines lines "$1" streams "$sel" --window "nvtx:$r"
            for l in "${lines[@]}"; do
                read -r -a f <<<"$l"
                [ "${f[0]:-}" != "$stream" ] || { kind=${f[1]:-} sdev=${f[2]:-}; break; }
            done
            [ "$kind" = internal ] && [ -n "$sdev" ] && [ "$sdev" != "$dev" ] || continue
            say_fail "the $r copy from GPU $from to GPU $((1 - from)) in p->stream[$from], between its two events" \
                "it ran on stream $stream, an internal stream of GPU $sdev: GPU $sdev made the copy, outside p->stream[$from] and its events" \
                "peer access was on one way only: GPU $sdev could reach GPU $dev's memory and fetched the data itself, on a stream of its own. Turn peer access on both ways: cudaDeviceEnablePeerAccess with each GPU current in turn, for the other (TODO 5)"
            return 1
        done < <(copies "$1" "$r")
    done
}

@test "the printed copy times are the GPU's own times of those copies" {
    need_run main
    need_trace main
    draw_on_fail main --window nvtx:staged --window nvtx:direct
    on_other_gpus_stream main
    second_chance main copy_times
}

@test "the printed bandwidths are the bytes over the printed times" {
    need_run main
    need_trace main
    local r dir ms gbps bytes want
    for r in staged direct; do
        bytes=$(copies main "$r" | head -n 1 | cut -f 5)
        [ -n "$bytes" ] || { say_fail "a copy between the GPUs in the range \"$r\"" "none" \
            "exchange() copies each side's numbers to the other (TODO 4)"; return 1; }
        for dir in 0to1 1to0; do
            need_figure_in ms main "${r}_${dir}_ms" || return 1
            need_figure_in gbps main "${r}_${dir}_gbps" || return 1
            want=""
            ! is_positive "$ms" || want=$(calc -f '%.4f' 'b / (t * 1e6)' b="$bytes" t="$ms")
            is_true 'g >= w * 0.998 - 0.0002 && g <= w * 1.002 + 0.0002' g="$gbps" w="${want:-0}" || {
                say_fail "${r}_${dir}_gbps = $bytes bytes / ${r}_${dir}_ms / 1e6 = $want GB/s" \
                    "${r}_${dir}_gbps = $gbps" \
                    "$(if is_true 'w > 0 && g / w > 0.95 && g / w < 0.96' g="$gbps" w="${want:-0}"; then echo "4.6% low: 2^20 where 10^6 belongs (GB/s is 10^9 bytes a second)"; else echo "GB/s = bytes / (ms * 1e6)"; fi)"
                return 1; }
        done
    done
}

@test "with peer access off, the copies between the GPUs went through host memory" {
    need_run main
    need_trace main
    need_gpus 2
    draw_on_fail main "${STAGED[@]}"
    local h n
    h=$(tq main count p2p:host "${STAGED[@]}") n=$(ranges_of main staged)
    [ "$n" -ge 1 ] && [ "$h" = $((2 * n)) ] ||
        say_fail "2 copies staged through host memory in each range \"staged\" ($n of them)" \
        "$(how_copied main staged)" \
        "turn peer access on only after the first exchange: peer_on() comes between the two (keep part_peer() as given)"
}

@test "with peer access on, the copies went straight from GPU to GPU" {
    need_run main
    need_trace main
    need_gpus 2
    local on d n
    figure_in on main peer_access
    [ "${on%%.*}" != 0 ] || skip "needs 2 GPUs that can reach each other's memory: on this machine cudaDeviceCanAccessPeer says GPUs 0 and 1 cannot"
    draw_on_fail main "${DIRECT[@]}"
    d=$(tq main count p2p:direct "${DIRECT[@]}") n=$(ranges_of main direct)
    [ "$n" -ge 1 ] && [ "$d" = $((2 * n)) ] ||
        say_fail "2 copies straight from GPU to GPU in each range \"direct\" ($n of them)" \
        "$(how_copied main direct)" \
        "without peer access the driver stages every copy between GPUs through host memory: cudaDeviceEnablePeerAccess, with each GPU current in turn, for the other (TODO 5)"
}

# ------------------------------------------------------------ the runs apart

# runs_apart RUN: "ok", or the first timed run of RUN (an NVTX range
# "sequential", "pipelined", "part2_event", "staged" or "direct", in time
# order) that did not begin with the GPUs idle or end with its work waited
# for: "RANGE<TAB>HOW<TAB>WORDS", HOW "before" or "after". A copy, kernel
# or memset is waited for when, after its call (and before the range began,
# or before it ended), the host made a wait that covers it:
#   cudaDeviceSynchronize with the GPU of its stream current (the GPU its
#     sync record names), cudaStreamSynchronize of its stream, or
#     cudaStreamQuery of its stream begun after it had ended on the GPU;
#   cudaEventSynchronize, after an event was recorded on its stream after it;
#   its own call, for a cudaMemcpy from pinned memory to the device, or from
#     the device to the host (synchronous with respect to the host, CUDA
#     Runtime API, "API synchronization behavior");
#   or through another stream: an event recorded on its stream after it, that
#     another stream was told to wait for (cudaStreamWaitEvent) before work
#     queued there that such a wait covers (part 2's producer, through s_cons).
# A wait for GPU d's legacy default stream does not cover work of d's other
# streams: that the legacy stream synchronizes with them is a rule for the
# work queued in it, and it had none. Which call came after which is a
# structure of the trace: the same in every run.
runs_apart() {
    { tq "$1" streams | awk '{ printf "S\t%s\t%s\t%s\n", $1, $2, $3 }'
      records "$1" nvtx api sync copy kernel memset event; } | awk -F'\t' '
        $1 == "S" { kind[$2] = $3; sdev[$2] = $4; next }
        { dev = $9 == "-" ? "0" : $9 }
        $4 == "nvtx" && $6 ~ /^(sequential|pipelined|part2_event|staged|direct)$/ { nr++; rn[nr] = $6; r0[nr] = $1 + 0; r1[nr] = $2 + 0; next }
        $4 == "api" { as[$11] = $1 + 0; ae[$11] = $2 + 0; an[$11] = $6; next }
        $4 == "sync" { sy[$11] = $6; ss[$11] = $5; sd[$11] = dev; next }
        $4 == "copy" { n++; c[n] = $11; s[n] = $5; e[n] = $2 + 0; dv[n] = dev; w[n] = $6 " copy"
                       self[n] = $12 == "0" && ($6 == "D2H" || ($6 == "H2D" && $8 == "PINNED")); next }
        $4 == "kernel" { n++; c[n] = $11; s[n] = $5; e[n] = $2 + 0; dv[n] = dev; w[n] = $6; sub(/\(.*/, "", w[n]); next }
        $4 == "memset" { n++; c[n] = $11; s[n] = $5; e[n] = $2 + 0; dv[n] = dev; w[n] = "memset"; next }
        $4 == "event" { ne++; ec[ne] = $11; es[ne] = $5; next }
        function gpu(i) { return (s[i] in sdev) ? sdev[s[i]] : dv[i] }
        # direct(i, lim): a wait of the host after the call of record i, ended by lim
        function direct(i, lim,   q, k) {
            if (self[i]) return 1
            for (q = 1; q <= nw; q++) {
                k = wc[q]
                if (as[k] < ae[c[i]] || ae[k] > lim) continue
                if (an[k] == "cudaDeviceSynchronize" && sd[k] != "" && sd[k] == gpu(i)) return 1
                if (an[k] == "cudaStreamSynchronize" && ss[k] == s[i]) return 1
                if (an[k] == "cudaStreamQuery" && ss[k] == s[i] && as[k] >= e[i]) return 1
                if (an[k] == "cudaEventSynchronize" && after_event(i, k)) return 1
            }
            return 0
        }
        # after_event(i, k): an event recorded on the stream of record i after its call, before call k
        function after_event(i, k,   x) {
            for (x = 1; x <= ne; x++)
                if (es[x] == s[i] && (ec[x] in as) && as[ec[x]] >= ae[c[i]] && ae[ec[x]] <= as[k]) return 1
            return 0
        }
        function covered(i, lim,   x, v, j) {
            if (direct(i, lim)) return 1
            for (x = 1; x <= ne; x++) {
                if (es[x] != s[i] || !(ec[x] in as) || as[ec[x]] < ae[c[i]]) continue
                for (v in sy) {
                    if (sy[v] != "wait" || !(v in as) || as[v] < ae[ec[x]] || ss[v] == s[i]) continue
                    for (j = 1; j <= n; j++)
                        if (s[j] == ss[v] && (c[j] in as) && as[c[j]] >= ae[v] && as[c[j]] <= lim && direct(j, lim)) return 1
                }
            }
            return 0
        }
        function on(i) {
            return (kind[s[i]] == "default" ? "the legacy default stream (" s[i] ")" : "stream " s[i]) " of GPU " gpu(i)
        }
        # after(i, lim): the waits after the call of record i, ended by lim, in words
        function after(i, lim,   q, k, x, last, cnt, out) {
            for (q = 1; q <= nw + 1; q++) {
                x = ""
                if (q <= nw) {
                    k = wc[q]
                    if (as[k] < ae[c[i]] || ae[k] > lim) continue
                    x = an[k] (ss[k] != "-" && ss[k] != "" ? " of stream " ss[k] (kind[ss[k]] == "default" ? " (the legacy default stream of GPU " sdev[ss[k]] ")" : "") : " (GPU " sd[k] " current)")
                }
                if (x == last) { cnt++; continue }
                if (last != "") out = out (out == "" ? "" : ", ") last (cnt > 1 ? " x" cnt : "")
                last = x; cnt = 1
            }
            return out == "" ? "none" : out
        }
        END {
            for (k in an) if (an[k] ~ /Synchronize$|^cudaStreamQuery$/) wc[++nw] = k
            for (q = 2; q <= nw; q++)           # in the order of the calls
                for (x = q; x > 1 && as[wc[x]] < as[wc[x - 1]]; x--) { y = wc[x]; wc[x] = wc[x - 1]; wc[x - 1] = y }
            o = ""
            for (k in as) if (o == "" || as[k] < o) o = as[k]
            for (p = 1; p <= nr; p++) order[p] = p
            for (p = 2; p <= nr; p++)
                for (q = p; q > 1 && r0[order[q]] < r0[order[q - 1]]; q--) { x = order[q]; order[q] = order[q - 1]; order[q - 1] = x }
            for (q = 1; q <= nr; q++) {
                p = order[q]
                for (i = 1; i <= n; i++) {
                    if (!(c[i] in as)) continue
                    if (as[c[i]] < r0[p] && !covered(i, r0[p])) {
                        printf "%s\tbefore\t\"%s\" began at %.3f ms while the %s on %s, queued at %.3f ms, was not waited for (the waits after it, before the range: %s)\n", \
                            rn[p], rn[p], r0[p] - o, w[i], on(i), as[c[i]] - o, after(i, r0[p])
                        exit
                    }
                    if (as[c[i]] >= r0[p] && as[c[i]] <= r1[p] && !covered(i, r1[p])) {
                        printf "%s\tafter\t\"%s\" ended at %.3f ms, and the %s on %s, queued in it at %.3f ms, was not waited for (the waits after it, in the range: %s)\n", \
                            rn[p], rn[p], r1[p] - o, w[i], on(i), as[c[i]] - o, after(i, r1[p])
                        exit
                    }
                }
            }
            print "ok"
        }'
}

# Each timed run starts with every GPU idle (the given waits after poison(),
# part_event()'s setup and poison_halos()), and the host waits for all of
# its work before it ends (run_sequential()'s and run_pipelined()'s waits,
# part 2's one wait at the end, exchange()'s waits for the copies' end
# events): its time, its range and its results are its own. A blocking
# stream of one GPU does not wait for another GPU's legacy default stream,
# and a wait for a GPU's legacy default stream is for the work queued in it.
@test "each timed run began with the GPUs idle, and the host waited for all its work before the run ended" {
    need_run main
    need_trace main
    local r how seen hint
    IFS=$'\t' read -r r how seen <<<"$(runs_apart main)"
    [ "$r" = ok ] && return 0
    draw_on_fail main --window "nvtx:$r"
    case $r/$how in
        */before) hint="keep the given waits before each timed run: cudaDeviceSynchronize with each GPU current in turn, after poison(), after part_event()'s setup and in poison_halos(); a stream of one GPU does not wait for another GPU's work, nor for its legacy default stream" ;;
        sequential/after) hint="keep run_sequential()'s waits as given: cudaStreamSynchronize of each slice's stream; a wait for stream 0 is for the legacy default stream's own work, and the slices' work is not in it" ;;
        pipelined/after) hint="once every slice is queued, wait for every one of each slice's streams: cudaStreamSynchronize(sl->streams[a]), with the slice's GPU current (TODO 2); a wait for stream 0 is for the legacy default stream's own work, and the slices' work is not in it" ;;
        part2_event/after) hint="keep part 2's one wait as given, at the end: cudaStreamSynchronize(s_cons) after the copy back; a wait for stream 0 is for the legacy default stream's own work, not s_cons's" ;;
        *) hint="keep exchange()'s waits as given: cudaEventSynchronize(p->ev[k][1]) for each side before its time is read; cudaDeviceSynchronize waits for the current GPU alone" ;;
    esac
    say_fail "every timed run beginning with no work of the GPUs left unwaited, and the host waiting for all of its work (its streams, its GPUs or its events) before it ends" \
        "$seen" "$hint"
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
    check_usage badpart "--part 4"
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
