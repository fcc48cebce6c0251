#!/usr/bin/env bats
# 05-overlap.bats -- the checks of lab 05 (multi-stream overlap).
# Run from the lab folder with `make check`, or `make check LAB=05` at the top.
# The program runs three times under the trace tool: as given (depth-first
# issue order timed), with --order breadth, and on an uneven shape (7 chunks
# over 3 streams, small). Each run does the sequential and the pipelined
# version R times, alternately, each inside an NVTX range ("sequential",
# "pipelined") so that the checks can tell them apart, then the order it did
# not time once, untimed, inside the range "other_order"; every version's
# result is checked.

bats_require_minimum_version 1.5.0
LAB_ID=05-overlap
PROG=overlap
load lib/checks

# How far above the stage bound a pipelined run may be, and why 1.5: on an
# H200 a correct pipeline takes 1.00x the bound (median of 5 pairs), while
# one that does not overlap (a synchronize in the issue loop, a kernel on the
# default stream, stages separated by a synchronize) takes the sum of the
# stages, 2.3-2.4x the bound.
# Each pipelined run is compared with the sequential run just before it, and
# the median of the R pairs counts: another program on the same GPU slows a
# pair as a whole, or one pair, and neither moves the median far. 1.5 leaves
# a correct solution room for a GPU shared with other runs, and is still far
# below what any serialized version takes.
# The pipeline and its stages are still measured at different moments, which
# no structure of the trace can tie together: this check (and lab 03's
# pinned-against-pageable) may look at up to 2 more runs of the program and
# pass on the best (second_chance in lib/checks.bash).
BOUND_FACTOR=1.5

setup_file() {
    build_lab
    run_lab main --trace
    run_lab breadth --trace -- --order breadth
    run_lab uneven --trace -- --chunks 7 --streams 3 --size-mib 16 --reps 1
    run_lab badopt -- --frobnicate
    run_lab badorder -- --order sideways
    run_lab nodev --env CUDA_VISIBLE_DEVICES= --
}

# label RUN: how a run was made, for messages.
label() {
    case $1 in
        breadth) echo "with --order breadth" ;;
        uneven) echo "with --chunks 7 --streams 3" ;;
        *) echo "as given (depth-first)" ;;
    esac
}

# reps RUN RANGE: one line per NVTX range RANGE ("sequential", "pipelined") in
# the trace of RUN, for the GPU work that started inside it:
#   H2D_MS KERNEL_MS D2H_MS SPAN_MS KERNELS
# (stage totals, first start to last end, number of kernels). Kept in
# $RUNS/RUN.reps-RANGE: the checks and Your run ask for it again.
reps() {
    local keep="$RUNS/$1.reps-$2"
    [ -s "$keep" ] || reps_of "$1" "$2" >"$keep"
    cat "$keep"
}
reps_of() {
    { tq "$1" list "nvtx:$2" | sed 's/^/R\t/'; tq "$1" list gpu | sed 's/^/G\t/'; } |
    awk -F'\t' '
        $1 == "R" { n++; rs[n] = $2; re[n] = $3; next }
        {
            for (i = 1; i <= n; i++)
                if ($2 + 0 >= rs[i] + 0 && $2 + 0 <= re[i] + 0) break
            if (i > n) next
            if ($5 == "copy" && $7 == "H2D") h[i] += $4
            if ($5 == "copy" && $7 == "D2H") d[i] += $4
            if ($5 == "kernel") { k[i] += $4; nk[i]++ }
            if (!(i in lo) || $2 + 0 < lo[i]) lo[i] = $2 + 0
            if (!(i in hi) || $3 + 0 > hi[i]) hi[i] = $3 + 0
        }
        END {
            for (i = 1; i <= n; i++)
                printf "%.6f %.6f %.6f %.6f %d\n", h[i], k[i], d[i], hi[i] - lo[i], nk[i]
        }'
}

# bound RUN: "FRACTION BOUND_MS PIPE_MS CHUNKS PAIRS" -- each pipelined run
# is set against the sequential run just before it (the program alternates
# them), so both saw the same GPU, busy or not. With C chunks (the kernels of
# the pipelined run) and per-chunk stage times h, k, d (the sequential totals
# H, K, D / C), the pipeline cannot beat the slowest stage run whole plus the
# first chunk's earlier stages (fill) and the last chunk's later stages
# (drain): max(H + k + d, h + K + d, h + k + D). With one copy engine the
# copies take turns: max(H + D, h + K + d). FRACTION = bound / pipelined time;
# the pair with the median fraction is printed.
bound() {
    { reps "$1" sequential | sed 's/^/S /'; reps "$1" pipelined | sed 's/^/P /'; } |
        bound_of "$(tq "$1" meta copy_engines)"
}

# bound_of ENGINES: bound's answer from its "S ..." and "P ..." lines (reps
# of the sequential and the pipelined runs, so marked) on stdin.
bound_of() {
    awk -v ce="${1:-1}" '
        function max(a, b) { return a > b ? a : b }
        $1 == "S" { ns++; H[ns] = $2; K[ns] = $3; D[ns] = $4 }
        $1 == "P" { np++; P[np] = $5; C[np] = $6 }
        END {
            for (i = 1; i <= np && i <= ns; i++) {
                if (C[i] < 1 || P[i] <= 0) continue
                h = H[i] / C[i]; k = K[i] / C[i]; d = D[i] / C[i]
                if (ce >= 2) b = max(max(H[i] + k + d, h + K[i] + d), h + k + D[i])
                else b = max(H[i] + D[i], h + K[i] + d)
                n++; f[n] = b / P[i]; fb[n] = b; fp[n] = P[i]; fc[n] = C[i]
            }
            if (n == 0) exit
            for (i = 2; i <= n; i++)        # insertion sort by fraction
                for (j = i; j > 1 && f[j] < f[j - 1]; j--) {
                    t = f[j]; f[j] = f[j - 1]; f[j - 1] = t
                    t = fb[j]; fb[j] = fb[j - 1]; fb[j - 1] = t
                    t = fp[j]; fp[j] = fp[j - 1]; fp[j - 1] = t
                    t = fc[j]; fc[j] = fc[j - 1]; fc[j - 1] = t
                }
            m = int((n + 1) / 2)            # the median; the lower one of two
            printf "%.4f %.6f %.6f %d %d\n", f[m], fb[m], fp[m], fc[m], n
        }'
}

# LAST: the last sequential and pipelined runs, as streamtrace's window words
# (what make trace draws): a failed check of the pipeline draws them.
LAST=(--window 'nvtx:sequential#last' --window 'nvtx:pipelined#last')

# why_serial RUN: what the trace of RUN's last pipelined run shows that keeps
# chunks from overlapping, and its fix, in words (the first found); nothing
# if none.
why_serial() {
    local w=(--window 'nvtx:pipelined#last') k d pg created waits
    k=$(tq "$1" count kernel "${w[@]}")
    d=$(tq "$1" count kernel --stream default "${w[@]}")
    [ "${d:-0}" -gt 0 ] && {
        echo "$d of the $k kernels of the last pipelined run ran on the legacy default stream, which waits for every blocking stream (cudaStreamCreate makes blocking ones), and they for it: give scramble() the chunk's stream"; return 0; }
    pg=$(tq "$1" list copy --mem PAGEABLE "${w[@]}" | awk -F'\t' '!seen[$6]++ { printf "%s%s", (n++ ? " and " : ""), $6 }')
    [ -n "$pg" ] && { echo "its $pg copies were from or to pageable memory: allocate h_in and h_out with cudaMallocHost (TODO 1)"; return 0; }
    created=$(tq "$1" streams gpu "${w[@]}" | grep -c created)
    [ "${created:-0}" = 1 ] && { echo "all its chunks ran on one stream, which runs them one after the other: chunk c goes to p->streams[c % p->nstreams]"; return 0; }
    waits=$(tq "$1" list api "${w[@]}" | awk -F'\t' '$6 ~ /Synchronize$/ { n++; c[$6]++ }
        END { if (n > 1) { for (x in c) s = s (s == "" ? "" : ", ") x " x" c[x]; print n - 1, s } }')
    [ -n "$waits" ] && echo "the host waited inside the last pipelined run ${waits%% *} more time$([ "${waits%% *}" = 1 ] || echo s) than the one wait at its end (${waits#* }): the issue loops only queue work, the given code waits once at the end"
    return 0
}

# near_bound ORDER RUN: one run's pipeline against its stage bound.
near_bound() {
    local order=$1 run=$2 frac b pipe chunks pairs cause=""
    draw_on_fail "$run" "${LAST[@]}"
    read -r frac b pipe chunks pairs <<<"$(bound "$run")"
    [ -n "$pairs" ] || { say_fail "NVTX ranges \"sequential\" and \"pipelined\" with GPU work in them" \
        "$(tq "$run" count nvtx:sequential) sequential, $(tq "$run" count nvtx:pipelined) pipelined" \
        "keep run_sequential() and run_pipelined() as given"; return 1; }
    is_true 'f * x >= 1' f="$frac" x="$BOUND_FACTOR" && return 0
    # (a re-run's hint is never shown: second_chance shows the first run's)
    [[ $run == *.again* ]] || cause=$(why_serial "$run")
    say_fail \
        "the $order pipeline within ${BOUND_FACTOR}x of what its stages allow ($chunks chunks; median of $pairs runs)" \
        "$(fmt "$pipe") ms against a bound of $(fmt "$b") ms: $(fmt "$(awk -v f="$frac" 'BEGIN { print 1 / f }')")x the bound" \
        "${cause:-something serializes the chunks: a synchronize inside the issue loop, one stream for all, a kernel without its stream, or pageable memory}"
}

# Your run (run-checks prints it after the checks; never graded): the answers
# to the README's "Predict, then measure", from this run's trace.
# median_span: the median of the spans (4th field) of reps' lines on stdin
median_span() { awk '{ print $4 }' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

your_run() {
    your_run_ok main || return 0
    local seq pipe ce frac bpipe=""
    seq=$(reps main sequential) pipe=$(reps main pipelined) ce=$(tq main meta copy_engines)
    frac=$({ sed 's/^/S /' <<<"$seq"; sed 's/^/P /' <<<"$pipe"; } | bound_of "$ce" | awk '{ print $1 }')
    your_fig speedup "$(ratio "$(median_span <<<"$seq")" "$(median_span <<<"$pipe")")" x \
        "the sequential version's time / the pipelined version's (medians of the runs)"
    your_fig bound_pct "$(awk -v f="$frac" 'BEGIN { if (f != "") print 100 * f }')" % \
        "the stage bound / the pipelined time, on ${ce:-?} copy engines (100: at the bound)"
    pipe=$(median_span <<<"$pipe")
    case $(rc_of breadth) in 0|1) bpipe=$(reps breadth pipelined | median_span) ;; esac
    your_fig breadth_vs_depth "$(awk -v a="${bpipe:-}" -v b="$pipe" 'BEGIN { if (a != "" && b + 0 > 0) printf "%.6g\n", 100 * (a / b - 1) }')" % \
        "how much longer breadth-first took than depth-first (negative: shorter)"
}

@test "the program builds without warnings" {
    check_builds
}

@test "it runs to the end and exits 0, in both issue orders" {
    local run
    for run in main breadth uneven; do
        check_exits_ok "$run" \
            "a CUDA error names the file:line and the call; a wrong result is the next check" \
            "$(label "$run"): "
    done
}

@test "every element of the result is right, in both issue orders" {
    local run
    for run in main breadth uneven; do
        check_verified "$run" "RESULT: verified all ... elements, sequential and pipelined in both orders" WRONG \
            "chunk c starts at element chunk_start(p, c), in h_in, d_in, d_out and h_out alike, and has chunk_len(p, c) elements" \
            "$(label "$run"): " || return 1
    done
}

@test "the chunks ran on two or more created streams" {
    local run n
    for run in main breadth; do
        need_run "$run"
        need_trace "$run"
        # only the pipelined runs: the default run's other_order part
        # (TODO(4)) must not stand in for the order the run is about
        n=$(tq "$run" streams gpu --window nvtx:pipelined+gpu | grep -c created || true)
        draw_on_fail "$run" --window 'nvtx:pipelined#last'
        is_true 'n >= 2' n="$n" || say_fail "copies and kernels in 2 or more created streams" \
            "$(label "$run"): $n created streams in its pipelined runs ($(tq "$run" streams gpu --window nvtx:pipelined+gpu | tr '\n' ' '))" \
            "$([ "$n" = 1 ] && echo "every chunk went to the same stream: ")chunk c goes to p->streams[c % p->nstreams]: one stream runs everything in order"
    done
}

# streams_of RUN: for the GPU work inside the NVTX ranges "pipelined" and
# "other_order" of RUN, one line per stream: "KIND KERNELS" (KIND: created or
# default), most kernels first.
streams_of() {
    { tq "$1" streams gpu | sed 's/^/S\t/' | tr ' ' '\t'
      tq "$1" list nvtx:pipelined | sed 's/^/R\t/'
      tq "$1" list nvtx:other_order | sed 's/^/R\t/'
      tq "$1" list gpu | sed 's/^/G\t/'; } |
    awk -F'\t' '
        $1 == "S" { kind[$2] = $3; next }
        $1 == "R" { n++; rs[n] = $2; re[n] = $3; next }
        {
            for (i = 1; i <= n; i++)
                if ($2 + 0 >= rs[i] + 0 && $2 + 0 <= re[i] + 0) break
            if (i > n) next
            used[$6] += 0
            if ($5 == "kernel") used[$6]++
        }
        END { for (s in used) print (s in kind ? kind[s] : "unknown"), used[s] }' |
    sort -k2,2nr
}

# 7 chunks over 3 streams: chunks 0, 3, 6 in the first, 1 and 4 in the
# second, 2 and 5 in the third, for each pipelined pass. With streams[c]
# instead of streams[c % 3], chunks 3 to 6 go to p->streams[3..6], which were
# never created: the legacy default stream.
@test "with 7 chunks over 3 streams, chunk c runs in stream c % 3" {
    need_run uneven
    need_trace uneven
    local seen passes
    passes=$(( $(tq uneven count nvtx:pipelined) + $(tq uneven count nvtx:other_order) ))
    seen=$(streams_of uneven | tr '\n' ' ' | sed 's/ $//')
    draw_on_fail uneven --window 'nvtx:pipelined#last'
    local d
    d=$(tq uneven count kernel --stream default --window 'nvtx:pipelined#last')
    [ "$seen" = "created $((3 * passes)) created $((2 * passes)) created $((2 * passes))" ] ||
        say_fail "the pipelined kernels on 3 created streams: $((3 * passes)), $((2 * passes)) and $((2 * passes)) kernels ($passes pipelined passes)" \
        "$(label uneven): kernels per stream: ${seen:-none}" \
        "$(case ${d:-0} in
            7) echo "all 7 kernels of the last pipelined pass ran on the legacy default stream: give scramble() the chunk's stream" ;;
            *) [ "${d:-0}" = 0 ] || printf '%s' "$d of the 7 kernels of the last pipelined pass ran on the legacy default stream: "
               echo "chunk c goes to p->streams[c % p->nstreams]: only p.nstreams streams were created, and p->streams[c] past them is 0, the default stream" ;;
           esac)"
}

@test "every copy is from or to pinned memory" {
    local run pageable pinned
    for run in main breadth; do
        need_run "$run"
        need_trace "$run"
        pageable=$(( $(tq "$run" count h2d --mem PAGEABLE) + $(tq "$run" count d2h --mem PAGEABLE) ))
        pinned=$(( $(tq "$run" count h2d --mem PINNED) + $(tq "$run" count d2h --mem PINNED) ))
        draw_on_fail "$run" "${LAST[@]}"
        [ "$pageable" = 0 ] && [ "$pinned" -gt 0 ] || say_fail \
            "every H2D and D2H copy from/to pinned memory" \
            "$pinned pinned, $pageable pageable copies" \
            "$(tq "$run" list copy --mem PAGEABLE | awk -F'\t' '!seen[$6]++ { printf "%sthe %s copies %s", (n++ ? "; " : ""), $6, ($6 == "H2D" ? "came from pageable memory, h_in" : "went to pageable memory, h_out") } END { if (n) printf ": " }')allocate h_in and h_out with cudaMallocHost (TODO 1): from malloc'd memory cudaMemcpyAsync may make the host wait, and its copy cannot overlap a kernel"
    done
}

@test "an H2D copy of one chunk overlapped the kernel of another" {
    local run ov
    for run in main breadth; do
        need_run "$run"
        need_trace "$run"
        ov=$(tq "$run" overlap h2d kernel)
        draw_on_fail "$run" --window 'nvtx:pipelined#last'
        is_true 'ms > 0 && f >= 0.05' ms="$(cut -d ' ' -f 1 <<<"$ov")" f="$(cut -d ' ' -f 2 <<<"$ov")" || say_fail \
            "H2D copies running while kernels run (at least 5% of the H2D time)" \
            "$(fmt "$(cut -d ' ' -f 1 <<<"$ov")") ms of overlap, $(fmt "$(cut -d ' ' -f 2 <<<"$ov")") of the H2D time" \
            "$(why_serial "$run" | grep . || echo "give scramble() the chunk's stream: a kernel on the legacy default stream waits for every blocking stream (cudaStreamCreate makes blocking ones), and they for it")"
    done
}

@test "H2D and D2H copies overlapped, where the GPU has two copy engines" {
    local run ce ov
    need_run main
    need_trace main
    ce=$(tq main meta copy_engines)
    [ "${ce:-0}" -ge 2 ] || skip "this GPU has ${ce:-?} copy engine(s): H2D and D2H take turns on it"
    for run in main breadth; do
        need_trace "$run"
        ov=$(tq "$run" overlap h2d d2h)
        draw_on_fail "$run" --window 'nvtx:pipelined#last'
        is_true 'ms > 0 && f >= 0.05' ms="$(cut -d ' ' -f 1 <<<"$ov")" f="$(cut -d ' ' -f 2 <<<"$ov")" || say_fail \
            "H2D and D2H copies at the same time on this GPU's $ce copy engines (at least 5% of the H2D time)" \
            "$(fmt "$(cut -d ' ' -f 1 <<<"$ov")") ms of overlap" \
            "chunks in different streams: while chunk c comes back, chunk c+2 can go in"
    done
}

@test "the depth-first pipeline comes close to the stage bound" {
    need_run main
    need_trace main
    second_chance main near_bound depth-first
}

@test "the breadth-first pipeline comes close to the stage bound" {
    need_run breadth
    need_trace breadth
    second_chance breadth near_bound breadth-first
}

@test "a bad option is refused with usage and exit status 2" {
    check_usage badopt --frobnicate
    check_usage badorder "--order sideways"
}

@test "without a CUDA device it says why and exits 77" {
    check_no_device
}
