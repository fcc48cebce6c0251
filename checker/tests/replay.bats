#!/usr/bin/env bats
# replay.bats -- the labs' checkers judge recorded runs rightly, with no GPU.
#
# checker/tests/fixtures/replays/LAB/VARIANT holds one run of a variant recorded on a
# GPU (output, exit status, trace; `RECORD=1 checker/tests/gpu-suite.sh`).
# Here a stand-in program (fixtures/progs/replay-prog) replays it to the lab's real
# checker. This tests the checkers' logic -- that a correct run passes and
# each mutant's run fails its named check -- on every machine, CI included.
# It proves nothing about a GPU: labs.bats does that, on one.

bats_require_minimum_version 1.5.0
load lib

# A failed check draws the part of its run that it judged; the tests below
# read the drawn windows' times from the TAP, so the drawings are made wide
# enough to list every window.
export DRAW_WIDTH=200
ST="$KIT_ROOT/checker/trace/streamtrace"
LEARN="$KIT_ROOT/checker/tests/fixtures/learn"


# unexpected TAPFILE LAB [LAB/VARIANT]: its failed and skipped checks, but
# for the skips of the runs LAB's file `unrecorded` lists (a checker's run
# newer than the recordings: replay-prog answers "no run recorded for:
# ARGS"), and, where VARIANT's recorded trace is of format 1 or 2, the skips
# of checks that need what only format 3 records ("not recorded: the trace
# does not say ..."; lab 09's current GPU at each launch).
unexpected() {
    local u="$KIT_ROOT/checker/tests/fixtures/replays/$2/unrecorded" line args older=""
    [ -z "${3:-}" ] || ! head -n 1 "$KIT_ROOT/checker/tests/fixtures/replays/$3/r.trace" 2>/dev/null |
        grep -qx 'streamtrace [12]' || older=1
    while IFS= read -r line; do
        if [[ $line == "ok "*"no run recorded for: "* ]]; then
            args=${line##*no run recorded for: }
            args=${args% (record the replays again)}
            grep -v '^#' "$u" 2>/dev/null | grep -qxF -- "$args" && continue
        fi
        [[ -n $older && $line == "ok "*"# skip not recorded: the trace does not say "* ]] && continue
        echo "$line"
    done < <(grep -E '^(not ok|ok .*# skip)' "$1")
}

# passes_all LAB/VARIANT: its replay ran, and failed and skipped nothing unexpected.
passes_all() { [ -s "$(tap_of "$1")" ] && [ -z "$(unexpected "$(tap_of "$1")" "${1%%/*}" "$1")" ]; }

# recorded KIND [LAB]: every LAB/VARIANT recorded whose VARIANT matches KIND.
recorded() { (cd "$KIT_ROOT/checker/tests/fixtures/replays" && ls -d ${2:-*}/$1 2>/dev/null); }

# A mutant's checker runs only the check its patch names: the verdict this
# file proves, at a twelfth of the cost. (labs.bats, on a GPU, runs them all.)
named_check() { expected_check "$KIT_ROOT/checker/tests/mutants/${1%%/*}/${1#*/mut-}.patch"; }
replay_named() { replay_check "$1" "$(named_check "$1")"; }

# mutants_fail_named LAB/VARIANT...: each replayed mutant failed the check it
# names; else say which did not, and what its checker printed.
mutants_fail_named() {
    local v bad=""
    for v in "$@"; do
        tap_failed "$(tap_of "$v")" "$(named_check "$v")" ||
            bad+=$'\n'"$v must fail \"$(named_check "$v")\":"$'\n'"$(sed 's/^/    /' "${REPLAY_OUT:-$BATS_TEST_TMPDIR}/$v.log")"
    done
    echo "${bad:-$# mutants fail the check each one names}"
    [ -z "$bad" ] && [ $# -gt 0 ]
}

# The solutions are replayed with a student's predictions.txt beside them
# (fixtures/learn/LAB.predictions), which must change no verdict; the test
# after this one reads their "Your run" (REPLAY_OUT: kept for it).
solutions_out() { echo "$BATS_FILE_TMPDIR/solutions"; }

@test "recorded runs of the solutions pass every check" {
    local v runs bad=""
    runs=$(recorded solution)
    REPLAY_OUT=$(solutions_out) REPLAY_PREDICTIONS=$LEARN KEEP_RUNS=$(solutions_out)/runs \
        at_once replay_check $runs
    for v in $runs; do
        # (`! cmd` would not fail a bats test: bash's errexit ignores it)
        if ! REPLAY_OUT=$(solutions_out) passes_all "$v"; then
            bad+=$'\n'"$v: the recorded run does not pass every check:"$'\n'"$(cat "$(solutions_out)/$v.log")"
        fi
    done
    echo "${bad:-$(echo $runs | wc -w) recorded solutions pass}"
    [ -z "$bad" ] && [ -n "$runs" ]
}

# Each checker asks the questions its checks ask of the program's run in
# setup_file, in one parse (tq_ahead): in the solutions' replays above, no
# check asked one of the main run that is not in its list, but for windows
# of the run's own times (--from, --to: made from an earlier answer).
@test "a checker's questions of its solution's run are answered in one parse, but windows of the run's own times" {
    local d lab q k ahead missing="" labs=0
    eval "$(sed -n '/^q_key() {/,/^}/p' "$KIT_ROOT/checker/lib/checks.bash")"    # (the answers' file names)
    for d in "$(solutions_out)"/runs/*.*/; do
        [ -d "$d/main.q" ] || continue
        lab=$(basename "$d") lab=${lab%.*}
        ahead=$(awk '/tq_ahead main <</ { f = 1; next } f && /^EOF$/ { f = 0 } f { sub(/^ +/, ""); print }' \
            "$KIT_ROOT/checker/$lab.bats")
        [ -n "$ahead" ] || { missing+=$'\n'"$lab: no tq_ahead main list"; continue; }
        labs=$((labs + 1))
        while IFS= read -r q; do
            q=${q//%20/ } q=${q//%2F//} q=${q//%25/%}
            [[ $q == *--from* || $q == *--to* ]] && continue
            grep -qxF -- "$q" <<<"$ahead" || missing+=$'\n'"$lab: tq main $q"
        done < <(ls "$d/main.q" | grep -v '\.rc$')
        # what it asks ahead of streamtrace ask, a check asked (the rest of
        # ask's questions are made from the run's own records)
        while IFS= read -r q; do
            [ -n "$q" ] || continue
            q_key k "$q"
            [ -f "$d/main.a/$k.rc" ] || missing+=$'\n'"$lab: asked ahead, never by a check: $q"
        done < <(awk '/ask_ahead main <</ { f = 1; next } f && /^EOF$/ { f = 0 } f { sub(/^ +/, ""); print }' \
            "$KIT_ROOT/checker/$lab.bats")
    done
    echo "${missing:-$labs checkers ask every other question of their run in one parse}"
    [ -z "$missing" ] && [ "$labs" -ge 9 ]
}

# ------------------------------------------------------------ Your run

# q DIR KEY QUESTION...: ask the trace of recorded run KEY in DIR
q() { local d=$1 k=$2; shift 2; "$ST" query "$d/$k.trace" "$@"; }
# printed FILE NAME: a figure the recorded program printed
printed() { awk -v k="$2" '$1 == k && $2 == "=" { print $3; exit }' "$1"; }
# median: of the numbers on stdin, one a line (the lower of the middle two)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
# inside DIR KEY RANGE SEL: the `list` lines of SEL starting in the Kth range
# RANGE#K (default: every one), as "RANGE_NO<TAB>line"
inside() {
    { q "$1" "$2" list "nvtx:$3" | sed 's/^/R\t/'; q "$1" "$2" list "$4" | sed 's/^/X\t/'; } |
        awk -F'\t' '$1 == "R" { n++; a[n] = $2; b[n] = $3; next }
            { for (i = 1; i <= n; i++) if ($2 + 0 >= a[i] && $2 + 0 <= b[i]) { print i "\t" substr($0, 3); break } }'
}
# spans DIR KEY RANGE: for each range RANGE, its GPU work's first start to last end
spans() {
    inside "$1" "$2" "$3" gpu | awk -F'\t' '
        !($1 in lo) || $2 < lo[$1] { lo[$1] = $2 } $3 > hi[$1] { hi[$1] = $3 }
        END { for (i in lo) print hi[i] - lo[i] }'
}

# expected LAB DIR: "NAME VALUE" for each figure of the lab's "Your run",
# computed here from the recorded run in DIR, not by the lab's checker.
expected() {
    local d=$2
    case $1 in
        01-sync-copy)
            q "$d" r list gpu | awk -F'\t' -v l="$(printed "$d/r.out" launch_ms)" '
                $4 == "copy" && $6 == "H2D" && h == "" { h = $3 } $4 == "copy" && $6 == "D2H" { e = $3 }
                $4 == "kernel" { k[++n] = $3 }
                END { print "launch_us", 1000 * l; print "copy_share", 100 * (h + e) / (h + k[2] + e)
                      print "kernel_gsteps", 16777219 * 1024 / (k[2] * 1e6) }'
            echo "h2d_gbps $(q "$d" r bandwidth h2d)" ;;
        02-async-copy)
            local i0 i1 c0 c1 w1 e
            read -r i0 i1 < <(q "$d" r list nvtx:issue | cut -f 1,2)
            read -r c0 c1 < <(q "$d" r list nvtx:cpu_work | cut -f 1,2)
            w1=$(q "$d" r list nvtx:wait | cut -f 2)
            e=$(q "$d" r list gpu | awk -F'\t' -v i="$i0" '$1 >= i && $2 > e { e = $2 } END { print e }')
            echo "issue_ms $(awk -v a="$i0" -v b="$i1" 'BEGIN { print b - a }')"
            echo "gpu_busy_pct $(q "$d" r overlap nvtx:cpu_work gpu | awk '{ print 100 * $2 }')"
            awk -v i0="$i0" -v w1="$w1" -v c0="$c0" -v c1="$c1" -v e="$e" \
                'BEGIN { print "wall_pct", 100 * (w1 - i0) / (c1 - c0 + e - i0) }' ;;
        03-pinned-memory)
            echo "pageable_return_ms $(inside "$d" r async_pageable api:cudaMemcpyAsync | cut -f 4)"
            echo "pinned_return_ms $(inside "$d" r async_pinned api:cudaMemcpyAsync | cut -f 4)"
            awk -v a="$(printed "$d/r.out" pinned_h2d_gbps)" -v b="$(printed "$d/r.out" pageable_h2d_gbps)" \
                'BEGIN { print "pinned_speedup", a / b; print "pinned_h2d_gbps", a }' ;;
        04-events)
            awk -v n="$(printed "$d/r.out" host_nosync_ms)" -v k="$(q "$d" r durations kernel:busy_kernel | sed -n 4p)" \
                -v c="$(printed "$d/r.out" cold_ms)" -v e="$(printed "$d/r.out" event_ms)" \
                'BEGIN { print "nosync_pct", 100 * n / k; print "cold_extra_ms", c - e }'
            awk -v p="$(q "$d" r list kernel:producer_kernel | cut -f 2)" -v c="$(q "$d" r list kernel:consumer_kernel | cut -f 1)" \
                'BEGIN { print "wait_gap_us", 1000 * (c - p) }' ;;
        05-overlap)
            # the best run of each, as the program prints them; bound_pct: the
            # program's bound_fraction in % (made of the printed times, which a check holds against the trace)
            local seq pipe bpipe
            seq=$(spans "$d" r sequential | sort -g | head -n 1) pipe=$(spans "$d" r depth_first | sort -g | head -n 1)
            bpipe=$(spans "$d" r breadth_first | sort -g | head -n 1)
            awk -v s="$seq" -v p="$pipe" -v b="$bpipe" \
                'BEGIN { print "speedup", s / p; print "breadth_vs_depth", 100 * (b / p - 1) }'
            echo "bound_pct $(awk -v f="$(printed "$d/r.out" bound_fraction)" 'BEGIN { print 100 * f }')"
            ;;
        06-lifetime)
            echo "plain_wrong $(grep -c '^scenario [1-4] .*: WRONG' "$d/r.out")"
            echo "stress_wrong $(cat "$d"/r--scenario-[1-4].out | grep -c '^scenario [1-4] .*: WRONG')"
            # the made run's scenario 1: 7 of 8 copies of 0.5 ms alongside a kernel
            echo "s1_overlap_pct 87.5" ;;
        07-default-streams)
            # part 1: the three short kernels that started at or after the legacy one's end
            q "$d" r list kernel | awk -F'\t' '$6 ~ /^spin_legacy_kernel/ { e = $2; next }
                $6 ~ /^spin_(nonblocking|blocking|per_thread)_kernel/ { s[++n] = $1 }
                END { for (i = 1; i <= n; i++) w += s[i] >= e; print "waited", w + 0 }'
            awk -v a="$(spans "$d" r part2_legacy)" -v b="$(spans "$d" r part2_per_thread)" \
                'BEGIN { print "threads_speedup", a / b }'
            echo "pipe_overlap_pct $(q "$d" r overlap copy kernel --window nvtx:part3_pipeline | awk '{ print 100 * $2 }')" ;;
        08-pytorch)
            local r0
            echo "pageable_call_ms $(printed "$d/r.out" pageable_call_ms)"
            r0=$(q "$d" r list nvtx:sync_neither | cut -f 1)
            awk -v n="$(printed "$d/r.out" sync_neither_ms)" \
                -v k="$(q "$d" r list kernel | awk -F'\t' -v r="$r0" '$1 >= r { print $3; exit }')" \
                'BEGIN { print "nosync_pct", 100 * n / k }'
            echo "overlap_pct $(q "$d" r overlap h2d kernel --window nvtx:side_stream+gpu | awk '{ print 100 * $2 }')" ;;
        09-multi-gpu)
            # part 1: for each rep, each GPU's stage bound from the busy time
            # (union) of each stage in the sequential rep and its kernels in
            # the pipelined rep (streamtrace's windows, not the checker's
            # code); the rep's bound is its busiest GPU's, against the
            # pipelined rep's span
            local i g w p ce
            for ((i = 1; i <= $(q "$d" r count nvtx:pipelined); i++)); do
                w="nvtx:sequential#$i" p="nvtx:pipelined#$i"
                for g in $(q "$d" r devices | cut -d ' ' -f 1); do
                    ce=$(q "$d" r devices | awk -v g="$g" '$1 == g { print $2 }')
                    echo "$(q "$d" r union h2d --device "$g" --window "$w") $(q "$d" r union kernel --device "$g" --window "$w")" \
                        "$(q "$d" r union d2h --device "$g" --window "$w") $(q "$d" r count kernel --device "$g" --window "$p")" \
                        "$(q "$d" r span gpu --window "$p") $ce $i"
                done
            done | awk 'function max(a, b) { return a > b ? a : b }
                $4 > 0 { H = $1; K = $2; D = $3; h = H / $4; k = K / $4; e = D / $4
                         b = $6 >= 2 ? max(max(H + k + e, h + K + e), h + k + D) : max(H + D, h + K + e)
                         if (b > best[$7]) best[$7] = b; span[$7] = $5 }
                END { for (i in best) print 100 * best[i] / span[i] }' | median | sed 's/^/bound_pct /'
            # part 3: GPU 0's copy (a peer copy's DEVICE is its source)
            local st di
            st=$(q "$d" r list p2p --window nvtx:staged | awk -F'\t' '$9 == 0 { print $3 }')
            di=$(q "$d" r list p2p --window nvtx:direct | awk -F'\t' '$9 == 0 { print $3, $7 }')
            awk -v s="$st" -v t="${di% *}" -v b="${di#* }" \
                'BEGIN { print "staged_vs_direct", s / t; print "direct_gbps", b / (t * 1e6) }' ;;
        10-graphs)
            # part 1: the two printed host times; the GPU's union of kernels
            # in the replays' range (until their work is done), per replay
            awk -v a="$(printed "$d/r.out" stream_us)" -v b="$(printed "$d/r.out" graph_us)" \
                'BEGIN { print "speedup", a / b; print "stream_us", a }'
            awk -v u="$(q "$d" r union kernel --window 'nvtx:graph_loop+gpu')" -v k="$(printed "$d/r.out" iterations)" \
                'BEGIN { print "graph_gpu_us", 1000 * u / k }' ;;
    esac
}

# your_run_of LOG: the figures of the Your run block in a log, "NAME VALUE"
your_run_of() {
    awk '/^  Your run/ { on = 1; next } on && /^    [a-z0-9_]+ +[-0-9.]+ / { print $1, $2; next } on && !/^    / { on = 0 }' "$1"
}

# replay_made6 VARIANT [CHECK]: replay lab 06's made run VARIANT (fixtures/learn:
# lab 06 has no recordings), its stress runs through fixtures/progs/replay-stress
replay_made6() {
    STRESS="$KIT_ROOT/checker/tests/fixtures/progs/replay-stress" SANITIZER= \
        REPLAY_DIR="$LEARN/06-lifetime/${1#*/}" replay_check "$@"
}

# your_run_variants: the runs whose Your run is checked: the recorded
# solutions (replayed by the test above), and in the whole self-test lab
# 06's made starter (fixtures/learn/make-06-lifetime.py: lab 06 has no
# recordings), wrong in 2 scenarios plainly and in 4 under stress.
your_run_variants() { recorded solution; ! kit_full || echo 06-lifetime/starter; }

@test "each lab's Your run shows what its run did, beside the student's predictions" {
    local v lab log tap bad="" name want got line
    ! kit_full || REPLAY_OUT=$(solutions_out) REPLAY_PREDICTIONS=$LEARN replay_made6 06-lifetime/starter
    for v in $(your_run_variants); do
        lab=${v%%/*} log="$(solutions_out)/$v.log" tap="$(solutions_out)/$v.tap"
        if [ ! -s "$log" ]; then
            REPLAY_OUT=$(solutions_out) REPLAY_PREDICTIONS=$LEARN replay_check "$v"
        fi
        local d="$KIT_ROOT/checker/tests/fixtures/replays/$v"
        [ "$lab" = 06-lifetime ] && d="$LEARN/06-lifetime/starter"
        while read -r name want; do
            got=$(your_run_of "$log" | awk -v n="$name" '$1 == n { print $2 }')
            # printed with 3 significant digits
            is_close() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; a = w < 0 ? -w : w
                exit !(g != "" && d <= 0.006 * a + 0.0005) }'; }
            is_close "$got" "$want" || bad+=$'\n'"$v: $name = ${got:-nothing} in Your run, the recording gives $want"
        done < <(expected "$lab" "$d")
        # the questions the README asks are the figures Your run shows
        local asked shown
        asked=$(sed -n '/^## Predict, then measure/,/^## /p' "$KIT_ROOT/labs/$lab/README.md" |
            sed -n 's/^| `\([a-z0-9_]*\)` |.*/\1/p' | sort | tr '\n' ' ')
        shown=$(your_run_of "$log" | awk '{ print $1 }' | sort | tr '\n' ' ')
        [ -n "$asked" ] && [ "$asked" = "$shown" ] ||
            bad+=$'\n'"$v: the README asks about ${asked:-nothing}, Your run shows ${shown:-nothing}"
        # every prediction was answered where given, the bad line named, and
        # nothing of it went into the TAP (no verdict, no report)
        grep -q '^    [a-z0-9_]* .* you said .*: \(about right\|.* times too \(high\|low\)\|.* too \(high\|low\)\)' "$log" ||
            bad+=$'\n'"$v: no \"you said ...: ... too high/low\" in Your run"
        grep -q '^    predictions.txt line [0-9]*: .*: skipped$' "$log" ||
            bad+=$'\n'"$v: the bad line of predictions.txt not named"
        ! grep -q 'Your run\|you said\|predictions.txt' "$tap" || bad+=$'\n'"$v: Your run in the TAP"
    done
    [ -z "$bad" ] || { echo "$bad"; for v in $(your_run_variants); do
        sed -n '/Your run/,/^$/p' "$(solutions_out)/$v.log"; done; return 1; }
    echo "$(your_run_variants | wc -l) runs: each Your run as its trace says"
    kit_full || echo "(lab 06's made run: make test-all)"
}

@test "recorded runs of the starters fail" {
    skip_full "$(recorded starter | wc -l) more replays"
    local v runs bad=""
    runs=$(recorded starter)
    at_once replay_check $runs
    for v in $runs; do
        grep -q '^not ok' "$(tap_of "$v")" || bad+=$'\n'"$v: the recorded starter run fails no check"
    done
    echo "${bad:-$(echo $runs | wc -w) recorded starters fail}"
    [ -z "$bad" ] && [ -n "$runs" ]
}

# first_mutants / other_mutants: the first recorded mutant of each lab (by
# name), and all the others. mutants_out: where the first ones' replays are
# kept, for the test of the drawings.
mutants_out() { echo "$BATS_FILE_TMPDIR/mutants"; }
first_mutants() { recorded 'mut-*' | awk -F/ '!seen[$1]++'; }
other_mutants() { recorded 'mut-*' | awk -F/ 'seen[$1]++'; }

@test "a recorded mutant of each lab fails the check it names" {
    local runs
    runs=$(first_mutants)
    REPLAY_OUT=$(mutants_out) at_once replay_named $runs
    REPLAY_OUT=$(mutants_out) mutants_fail_named $runs
}

# ------------------------------------------------------------ failure drawings

# drawn_windows TAP: the windows a failed check drew, "FROM TO" (ms) a line,
# from its "window ...: A-B, C-D ms" line; "0 1e99" for the whole run;
# nothing when nothing was drawn
drawn_windows() {
    grep -q '^# timeline: ' "$1" || return 0
    grep -m 1 '^# | window ' "$1" | sed 's/.*: //; s/ ms$//' | tr ',' '\n' |
        awk '{ split($1, x, "-"); print x[1], x[2] }'
    grep -q '^# | window ' "$1" || echo "0 1e99"
}

# judged VARIANT: "KEY CHECK" of the mutant's failed check (KEY: the run it
# judged), then the records it judged, "START END" a line, from the recording
# (not from the checker): one mutant for each kind of timing or structure check
judged() {
    local d="$KIT_ROOT/checker/tests/fixtures/replays/$1" i0
    case $1 in
        01-sync-copy/mut-d2h-elements)              # bytes: the D2H copy
            q "$d" r list d2h | cut -f 1,2 ;;
        01-sync-copy/mut-kernel-time-no-sync)       # an event time: the kernel and its events
            q "$d" r events kernel | sed -n 2p | awk -F'\t' '{ print $1, $2; print $(NF - 3), $(NF - 2) }' ;;
        02-async-copy/mut-kernel-default-stream)    # streams: the measured run's work
            i0=$(q "$d" r list nvtx:issue | cut -f 1)
            q "$d" r list gpu | awk -F'\t' -v i="$i0" '$1 >= i { print $1, $2 }' ;;
        03-pinned-memory/mut-gbps-in-mib)           # a table of event times: the series' copies
            inside "$d" r pageable copy | cut -f 2,3 ;;
        03-pinned-memory/mut-pinned-with-malloc)    # a memory kind: the pinned series and its call
            { inside "$d" r pinned copy; inside "$d" r async_pinned copy; } | cut -f 2,3 ;;
        04-events/mut-device-sync-instead-of-wait)  # a host wait between two launches
            { q "$d" r list kernel:producer_kernel; q "$d" r list kernel:consumer_kernel
              q "$d" r list api:cudaDeviceSynchronize | tail -n 1; } | cut -f 1,2 ;;
        04-events/mut-no-stream-wait)               # an order
            { q "$d" r list kernel:producer_kernel; q "$d" r list kernel:consumer_kernel; } | cut -f 1,2 ;;
        05-overlap/mut-breadth-sync-between-stages) # the stage bound: the last breadth-first run
            inside "$d" r breadth_first gpu | awk -F'\t' '{ n[NR] = $1; l[NR] = $2 " " $3 }
                END { for (i = 1; i <= NR; i++) if (n[i] == n[NR]) print l[i] }' ;;
        05-overlap/mut-kernel-default-stream)       # an overlap: the last depth-first run's H2D and kernels
            inside "$d" r depth_first gpu | awk -F'\t' '{ n[NR] = $1; l[NR] = $2 " " $3; k[NR] = $5 $7 }
                END { for (i = 1; i <= NR; i++) if (n[i] == n[NR] && k[i] != "copyD2H") print l[i] }' ;;
        08-pytorch/mut-clock-before-sync)           # a host time: the range and the calls in it
            { q "$d" r list nvtx:sync_both
              i0=$(q "$d" r list nvtx:sync_both | cut -f 1)
              q "$d" r list api | awk -F'\t' -v i="$i0" '$1 >= i' | head -n 2; } | cut -f 1,2 ;;
        06-lifetime/mut-s1-wait-for-kernels)        # lab 06's overlap: scenario 1's copies and kernels
            d="$LEARN/06-lifetime/mut-s1-wait-for-kernels"
            { inside "$d" r "scenario 1" h2d; inside "$d" r "scenario 1" kernel; } | cut -f 2,3 ;;
        07-default-streams/mut-kinds-both-nonblocking)      # an order against the legacy stream's kernel
            { q "$d" r list kernel:spin_legacy_kernel; q "$d" r list kernel:spin_blocking_kernel
              q "$d" r list kernel:spin_per_thread_kernel; } | cut -f 1,2 ;;
        07-default-streams/mut-threads-copies-without-stream)   # the streams of each host thread's work
            inside "$d" r part2_per_thread gpu | cut -f 2,3 ;;
        07-default-streams/mut-pipeline-nonblocking-streams)    # the order of each chunk's clear
            inside "$d" r part3_pipeline gpu | awk -F'\t' '$5 == "memset" || $5 == "kernel" || $7 == "D2H" { print $2, $3 }' ;;
        09-multi-gpu/mut-event-before-producer)     # an order between two GPUs' kernels
            { q "$d" r list kernel:produce_kernel; q "$d" r list kernel:consume_kernel; } | cut -f 1,2 ;;
        09-multi-gpu/mut-split-wait-before-next-device)     # the host's calls: queued before any wait
            inside "$d" r pipelined api | awk -F'\t' '{ n[NR] = $1; l[NR] = $2 " " $3; w[NR] = $7 }
                END { for (i = 1; i <= NR; i++) if (n[i] == n[NR] && w[i] ~ /^cuda(MemcpyAsync|LaunchKernel|StreamSynchronize)$/) print l[i] }' ;;
        09-multi-gpu/mut-peer-access-never-enabled) # how a copy between GPUs went
            inside "$d" r direct p2p | cut -f 2,3 ;;
        10-graphs/mut-branches-on-one-stream)       # the branches: ordered on the streams, and their overlap in the replays
            q "$d" r list kernel:branch_ | cut -f 1,2 ;;
    esac
}
# drawn_mutants: the first recorded mutant of each lab (replayed by the test
# above) and lab 06's made one; in the whole self-test, one more of each
# kind of check.
drawn_mutants() {
    first_mutants
    echo 06-lifetime/mut-s1-wait-for-kernels
    kit_full || return 0
    echo 01-sync-copy/mut-kernel-time-no-sync 03-pinned-memory/mut-pinned-with-malloc \
        04-events/mut-no-stream-wait 05-overlap/mut-kernel-default-stream \
        07-default-streams/mut-threads-copies-without-stream 07-default-streams/mut-pipeline-nonblocking-streams \
        09-multi-gpu/mut-split-wait-before-next-device 09-multi-gpu/mut-peer-access-never-enabled
}

# replay_drawn VARIANT: replay a mutant's named check (the first mutants'
# replays of the test above are used as they are)
replay_drawn() {
    [ -s "$(tap_of "$1")" ] && return 0
    case $1 in
        06-lifetime/*) replay_made6 "$1" "$(named_check "$1")" ;;
        *) replay_named "$1" ;;
    esac
}

@test "a failed check draws the part of the run that holds the records it judged" {
    local v bad="" n=0 a b inwin
    REPLAY_OUT=$(mutants_out) at_once replay_drawn $(drawn_mutants)
    for v in $(drawn_mutants); do
        local tap
        tap=$(REPLAY_OUT=$(mutants_out) tap_of "$v")
        REPLAY_OUT=$(mutants_out) tap_failed "$tap" "$(named_check "$v")" ||
            { bad+=$'\n'"$v: did not fail \"$(named_check "$v")\""; continue; }
        [ -n "$(drawn_windows "$tap")" ] || { bad+=$'\n'"$v: nothing drawn"; continue; }
        [ -n "$(judged "$v")" ] || { bad+=$'\n'"$v: no records judged?"; continue; }
        # every record judged lies inside a drawn window (0.001 ms: rounding)
        inwin=$( { drawn_windows "$tap" | sed 's/^/W /'; judged "$v" | sed 's/^/R /'; } | awk '
            $1 == "W" { n++; a[n] = $2; b[n] = $3; next }
            { r++; for (i = 1; i <= n; i++) if ($2 >= a[i] - 0.001 && $3 <= b[i] + 0.001) { ok++; break }
              if (i > n && !shown++) print "record " $2 "-" $3 " ms outside" }
            END { if (!shown) print "all " r " inside" }')
        [[ $inwin == all* ]] || bad+=$'\n'"$v: $inwin the drawn window(s) $(drawn_windows "$tap" | tr '\n' ' ')"
        # the drawing is in the TAP's comments, never on an ok / not ok line
        ! grep -q '^\(not \)\?ok .*|' "$tap" || bad+=$'\n'"$v: a drawing on a TAP result line"
        n=$((n + 1))
    done
    [ -z "$bad" ] || { echo "wrong:$bad"; return 1; }
    echo "$n failed checks: each drawing holds the records its check judged"
    kit_full || echo "(one more mutant of each other kind of check: make test-all)"
}

@test "every other recorded mutant fails the check it names" {
    skip_full "$(other_mutants | wc -l) more replays"
    local runs
    runs=$(other_mutants)
    at_once replay_named $runs
    mutants_fail_named $runs
}

# Lab 09 on a machine with one GPU: its replay `one-gpu` (the solution, both
# sides of every part on GPU 0).
@test "lab 09 on one GPU: the solution passes what one GPU can show, the rest is not graded" {
    local v=09-multi-gpu/one-gpu tap log
    REPLAY_DIR="$KIT_ROOT/checker/tests/fixtures/replays/$v" replay_check "$v"
    tap=$(tap_of "$v") log="$BATS_TEST_TMPDIR/$v.log"
    cat "$log"
    ! grep -q '^not ok' "$tap" || return 1
    [ "$(grep -c '# skip' "$tap")" = 5 ]
    [ "$(grep -c '# skip needs 2 GPUs: this machine has 1$' "$tap")" = 5 ]
    grep -q '^Score: not graded: 5 checks need 2 GPUs; 14 of 14 checks that ran pass\.$' "$log"
    grep -q '^Next: the skipped checks need 2 GPUs' "$log"
}

# one_engine LAB/VARIANT: a copy of the recording whose traces say the GPU
# has one copy engine (as many laptop and older GPUs do), and its replay.
one_engine() {
    local d="$BATS_TEST_TMPDIR/one-engine/$1"
    mkdir -p "$d"
    cp "$KIT_ROOT/checker/tests/fixtures/replays/$1"/* "$d/"
    sed -i 's/^meta\tcopy_engines\t.*/meta\tcopy_engines\t1/' "$d"/*.trace
    if [ "${1#*/}" = solution ]; then
        REPLAY_DIR=$d replay_check "$1"
    else
        REPLAY_DIR=$d replay_named "$1"
    fi
}

@test "lab 05 on a GPU with one copy engine: the solution passes, the H2D/D2H check skips and says why" {
    skip_full "one more replay"
    one_engine 05-overlap/solution
    grep -q '^meta.copy_engines.1$' "$BATS_TEST_TMPDIR/one-engine/05-overlap/solution/r.trace"
    run unexpected "$(tap_of 05-overlap/solution)" 05-overlap
    echo "$output"
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == *"H2D and D2H copies overlapped"*"# skip this GPU has 1 copy engine(s)"* ]]
}

@test "lab 05 on a GPU with one copy engine: every mutant still fails the check it names" {
    skip_full "$(recorded 'mut-*' 05-overlap | wc -l) more replays"
    local runs
    runs=$(recorded 'mut-*' 05-overlap)
    at_once one_engine $runs
    mutants_fail_named $runs
}

# derived REC DIR: DIR starts as a copy of the recording REC (its seed and
# output, not its trace: the caller writes r.trace, changed).
derived() { mkdir -p "$2" && cp "$1/seed" "$1/r.out" "$1/r.err" "$1/r.rc" "$2/"; }

# rerun_is REC DIR: the recording REC is DIR's second call (r.2.*), as a
# checker's re-run (second_look, second_chance) would get it.
rerun_is() {
    local f
    for f in out err rc trace; do cp "$1/r.$f" "$2/r.2.$f"; done
}

# lucky_02 DIR [AGAIN]: in DIR, a run of lab 02 that read h_out before its
# wait and got it right because the GPU was done first, as when another
# program stretched the rehearsal the CPU work is sized from (seen once on
# an H100 with 8 programs at once): the recorded solution's output, its
# trace with "cpu_work" (and "wait" after it) lasting until 1 ms after the
# D2H copy ended. AGAIN: the recorded mutant read-before-sync is the second
# call's run (r.2.*), as a re-run would have gone.
lucky_02() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/02-async-copy"
    derived "$r/solution" "$d"
    python3 - "$r/solution/r.trace" "$d/r.trace" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
d2h_end = max(int(l.split('\t')[2]) for l in lines if l.startswith('copy\t') and '\tD2H\t' in l)
out = []
for l in lines:
    f = l.split('\t')
    if f[0] == 'nvtx' and f[-1] == 'cpu_work':
        f[2] = str(d2h_end + 1000000)
    elif f[0] == 'nvtx' and f[-1] == 'wait':
        f[1], f[2] = str(d2h_end + 1040000), str(d2h_end + 1100000)
    out.append('\t'.join(f))
open(sys.argv[2], 'w').write('\n'.join(out))
PY
    [ -z "${2:-}" ] || rerun_is "$r/mut-read-before-sync" "$d"
}

# second_look_replay MAKE V CHECK OUTCOME SEEN: the replay MAKE derives
# (with "again": a re-run that is the recorded mutant) replayed to CHECK as
# V; OUTCOME "fails": the re-run fails it, and the log says the run before
# could not show it (SEEN, a pattern); "passes": no run could, the check
# passes and says so (SEEN).
second_look_replay() {
    local make=$1 v=$2 check=$3 outcome=$4 seen=$5 d="$BATS_TEST_TMPDIR/${2#*/}"
    if [ "$outcome" = fails ]; then "$make" "$d" again; else "$make" "$d"; fi
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    if [ "$outcome" = fails ]; then
        tap_failed "$(tap_of "$v")" "$check"
        grep -q "re-run 1 of 2 showed it; the run before it could not: $seen" "$BATS_TEST_TMPDIR/$v.log"
    else
        grep -qx "ok 1 $check" "$(tap_of "$v")"
        grep -q "not put to the test in 3 runs: $seen" "$BATS_TEST_TMPDIR/$v.log"
    fi
}

@test "lab 02: a run that read its results before the wait and got them right by chance is run again" {
    second_look_replay lucky_02 02-async-copy/lucky "every element of the result is right" fails \
        'its D2H copy began at'
    grep -q 'got 3452816845' "$BATS_TEST_TMPDIR/02-async-copy/lucky.log"
}

# verdicts_at_once V [MAKE]: V replayed whole (MAKE: derived as
# second_look_replay's, with a re-run) with its checks one at a time and all
# at once (run-checks, CHECK_JOBS): the same TAP, bar the times, re-runs and
# their notes included.
verdicts_at_once() {
    local v=$1 j d tap=()
    for j in 1 64; do
        d="$BATS_TEST_TMPDIR/jobs$j"
        [ -z "${2:-}" ] || "$2" "$d/${v#*/}" again
        REPLAY_OUT="$d" CHECK_JOBS=$j REPLAY_DIR=${2:+$d/${v#*/}} replay_check "$v"
        tap+=("$d/$v.tap")
    done
    grep -c '^ok' "${tap[0]}"
    diff <(sed 's/ in [0-9]*ms$//' "${tap[0]}") <(sed 's/ in [0-9]*ms$//' "${tap[1]}")
    [ "$(grep -c '^\(not \)\?ok' "${tap[0]}")" -gt 10 ]
}

@test "a lab's checks at once give the verdicts they give one at a time, a re-run's included (lab 02)" {
    verdicts_at_once 02-async-copy/lucky lucky_02
    grep -q 're-run 1 of 2 showed it' "$BATS_TEST_TMPDIR/jobs64/02-async-copy/lucky.tap"
}

@test "a lab's checks at once give the verdicts they give one at a time (labs 07, 10)" {
    skip_full "four more replays"
    verdicts_at_once 07-default-streams/late late_07
    verdicts_at_once 10-graphs/solution
}

@test "lab 02: when no run puts the wait to the test, the check passes and says so" {
    skip_full "one more replay, three runs of it"
    second_look_replay lucky_02 02-async-copy/lucky "every element of the result is right" passes \
        'its D2H copy began at'
}

# slow_05 DIR: in DIR, lab 05's recorded solution whose sequential runs'
# copies and kernels took a quarter of their time: its pipelined runs are
# then four times further from the stage bound, and the trace shows no cause
# (as when other programs slowed the pipelined runs alone).
slow_05() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/05-overlap/solution"
    derived "$r" "$d"
    python3 - "$r/r.trace" "$d/r.trace" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
seq = [(int(f[1]), int(f[2])) for f in (l.split('\t') for l in lines)
       if f[0] == 'nvtx' and f[-1] == 'sequential']
out = []
for l in lines:
    f = l.split('\t')
    if f[0] in ('copy', 'kernel') and any(a <= int(f[1]) <= b for a, b in seq):
        f[2] = str(int(f[1]) + (int(f[2]) - int(f[1])) // 4)
    out.append('\t'.join(f))
open(sys.argv[2], 'w').write('\n'.join(out))
PY
}

# uneven_05 MODE DIR: in DIR, lab 05's recorded solution whose first run of
# the uneven shape (7 chunks over 3 streams, depth-first) is changed: MODE
# late-memset, the cudaMemset of poison() before it starts on the GPU inside
# its range (a program that does not wait after it; every chunk on its right
# stream); MODE copy-elsewhere, its first H2D copy on a stream of its own (a
# copy that races its chunk's kernel).
uneven_05() {
    local mode=$1 d=$2 r="$KIT_ROOT/checker/tests/fixtures/replays/05-overlap/solution"
    derived "$r" "$d"
    python3 - "$mode" "$r/r.trace" "$d/r.trace" <<'PY'
import sys
mode, src, dst = sys.argv[1:]
lines = open(src).read().split('\n')
f = [l.split('\t') for l in lines]
o = 0 if f[0][0] == 'streamtrace 1' else 1     # formats 2 on: a device column
start = min(int(x[1]) for x in f if x[0] == 'nvtx' and x[-1] == 'uneven_depth_first')
if mode == 'late-memset':
    i = max(i for i, x in enumerate(f) if x[0] == 'memset' and int(x[1]) < start)
    f[i][1], f[i][2] = str(start + 10000), str(start + 15000)
else:
    i = min((int(x[1]), i) for i, x in enumerate(f) if x[0] == 'copy' and x[4 + o] == 'H2D' and int(x[1]) > start)[1]
    f[i][3 + o] = '99'
open(dst, 'w').write('\n'.join('\t'.join(x) for x in f))
PY
}

@test "lab 05: poison()'s memset starting inside an uneven run is not a stream of the chunks; a copy on another stream is" {
    local check="with 7 chunks over 3 streams, chunk c runs in stream c % 3"
    uneven_05 late-memset "$BATS_TEST_TMPDIR/late"
    REPLAY_DIR="$BATS_TEST_TMPDIR/late" replay_check 05-overlap/late "$check"
    cat "$BATS_TEST_TMPDIR/05-overlap/late.log"
    grep -qx "ok 1 $check" "$(tap_of 05-overlap/late)"
    uneven_05 copy-elsewhere "$BATS_TEST_TMPDIR/elsewhere"
    REPLAY_DIR="$BATS_TEST_TMPDIR/elsewhere" replay_check 05-overlap/elsewhere "$check"
    cat "$BATS_TEST_TMPDIR/05-overlap/elsewhere.log"
    tap_failed "$(tap_of 05-overlap/elsewhere)" "$check"
}

# early_join_10 US DIR: in DIR, lab 10's recorded solution whose join kernel
# of the first replay is stamped as starting US microseconds before branch B
# ended (its length kept). CUPTI did this by 0.54 us on an H200 with 48
# programs traced at once, where the graph starts the join only after the
# branch: a stamp, not a missing wait.
early_join_10() {
    local us=$1 d=$2 r="$KIT_ROOT/checker/tests/fixtures/replays/10-graphs/solution"
    derived "$r" "$d"
    python3 - "$us" "$r/r.trace" "$d/r.trace" <<'PY'
import sys
us, src, dst = float(sys.argv[1]), sys.argv[2], sys.argv[3]
f = [l.split('\t') for l in open(src).read().split('\n')]
def starts(name):
    return sorted((int(x[1]), i) for i, x in enumerate(f) if x[0] == 'kernel' and x[-1].startswith(name + '('))
# the first of each ran on the streams, the second in the first replay
b, j = starts('branch_b_kernel')[1][1], starts('join_kernel')[1][1]
n = int(f[j][2]) - int(f[j][1])
f[j][1] = str(int(f[b][2]) - round(us * 1000))
f[j][2] = str(int(f[j][1]) + n)
open(dst, 'w').write('\n'.join('\t'.join(x) for x in f))
PY
}

@test "lab 10: a join stamped under a microsecond before its branch's end still starts after it; 30 us before, it does not" {
    local check="the join starts after both branches end, on the streams and in every replay"
    early_join_10 0.54 "$BATS_TEST_TMPDIR/stamp"
    REPLAY_DIR="$BATS_TEST_TMPDIR/stamp" replay_check 10-graphs/stamp "$check"
    cat "$BATS_TEST_TMPDIR/10-graphs/stamp.log"
    grep -qx "ok 1 $check" "$(tap_of 10-graphs/stamp)"
    early_join_10 30 "$BATS_TEST_TMPDIR/early"
    REPLAY_DIR="$BATS_TEST_TMPDIR/early" replay_check 10-graphs/early "$check"
    cat "$BATS_TEST_TMPDIR/10-graphs/early.log"
    tap_failed "$(tap_of 10-graphs/early)" "$check"
    grep -q 'replay_1: branch A before, branch B overlap the join' "$BATS_TEST_TMPDIR/10-graphs/early.log"
}

# derived_10 MODE DIR: in DIR, lab 10's recorded solution (its times kept)
# with, MODE:
#   copy-default    the first copy back in "update" on the legacy default
#                   stream, as a cudaMemcpy in place of the given
#                   cudaMemcpyAsync(..., s) would (it read d_out after
#                   update_kernel ended, by luck, and the results were right)
#   copy-elsewhere  the cudaStreamSynchronize after that copy a wait for the
#                   legacy default stream instead of s
#   loop-elsewhere  the wait after the stream loop a wait for the legacy
#                   default stream instead of s
# (each such wait returned after what it should have waited for, by luck:
# s is non-blocking, so nothing made it wait)
derived_10() {
    local d=$2 r="$KIT_ROOT/checker/tests/fixtures/replays/10-graphs/solution"
    derived "$r" "$d"
    python3 - "$1" "$r/r.trace" "$d/r.trace" <<'PY'
import sys
mode, src, dst = sys.argv[1:4]
f = [l.split('\t') for l in open(src).read().split('\n')]
legacy = next(x[1] for x in f if x[0] == 'stream' and x[2] == 'default')
syncs = [(int(x[1]), int(x[4])) for x in f if x[0] == 'api' and x[5] == 'cudaStreamSynchronize']
if mode == 'loop-elsewhere':
    a, b = next((int(x[1]), int(x[2])) for x in f if x[0] == 'nvtx' and x[-1] == 'stream_loop')
    sync = max(s for s in syncs if a <= s[0] <= b)[1]
elif mode == 'replay-elsewhere':   # the last wait before the second replay
    a = sorted(int(x[1]) for x in f if x[0] == 'nvtx' and x[-1] == 'replay')[1]
    sync = max(s for s in syncs if s[0] < a)[1]
else:
    ks = sorted(int(x[1]) for x in f if x[0] == 'kernel' and x[-1].startswith('update_kernel('))
    c = min((int(x[1]), i) for i, x in enumerate(f) if x[0] == 'copy' and x[5] == 'D2H' and int(x[1]) > ks[0])[1]
    if mode == 'copy-default':
        f[c][4] = legacy
    sync = min(s[1] for s in syncs if s[1] > int(f[c][12]))
for x in f:
    if mode != 'copy-default' and x[0] == 'sync' and x[6] == str(sync):
        x[4] = legacy
open(dst, 'w').write('\n'.join('\t'.join(x) for x in f))
PY
}

# derived_10_fails MODE NAME CHECK: the recorded solution's run made into
# another (derived_10 MODE, in NAME) fails CHECK; its log is shown, and is
# LOG for the test's own greps.
derived_10_fails() {
    derived_10 "$1" "$BATS_TEST_TMPDIR/$2"
    REPLAY_DIR="$BATS_TEST_TMPDIR/$2" replay_check "10-graphs/$2" "$3"
    LOG="$BATS_TEST_TMPDIR/10-graphs/$2.log"
    cat "$LOG"
    tap_failed "$(tap_of "10-graphs/$2")" "$3"
}

@test "lab 10: a copy back in part 3 on the legacy default stream fails, though its result was right" {
    derived_10_fails copy-default copy "part 3 waits for each copy back before it reads the result"
    grep -q 'seen: *the copy back at [0-9.]* ms ran on stream 7, update_kernel on 21$' "$LOG"
    grep -q 'hint: .*does not wait for the graph' "$LOG"
}

@test "lab 10: a copy back followed by a wait for another stream fails, though that wait returned after the copy ended" {
    derived_10_fails copy-elsewhere elsewhere "part 3 waits for each copy back before it reads the result"
    grep -q 'seen: *the copy back queued at [0-9.]* ms, then cudaStreamSynchronize: not ordered by the program$' "$LOG"
}

@test "lab 10: a loop whose wait is for another stream fails, though that wait returned after the loop's last kernel" {
    derived_10_fails loop-elsewhere loop "each loop's host time covers its kernels and is the time printed"
    grep -q 'seen: *no wait covered the step_kernel on stream [0-9]* (created), queued at [0-9.]* ms, by the end of the range at [0-9.]* ms$' "$LOG"
    # no re-run: what the program guaranteed is the same in every run
    ! grep -q "run [0-9]* times in all" "$LOG"
}

@test "lab 10: a replay begun after a wait for another stream fails, though that wait returned after the replay before it ended" {
    derived_10_fails replay-elsewhere replay "each timed or checked range begins after the host waited for the work queued before it"
    grep -q 'seen: *"replay" #2 began at [0-9.]* ms: the [a-z_]* on stream [0-9]*, queued at [0-9.]* ms, had ended by then, as it happened, and no wait of the host made after it and before the range covered it$' \
        "$LOG"
}

# A timing check that fails for a cause the trace shows, the same in every
# run, makes no re-run (HOPELESS in lib/checks.bash); one the trace cannot
# explain looks at 2 more runs (second_chance).
@test "lab 05: a pipeline far from its bound for no cause the trace shows is run again; one whose kernels ran on the legacy default stream is not" {
    local check="the depth-first pipeline comes close to the stage bound" d="$BATS_TEST_TMPDIR/slow"
    slow_05 "$d"
    REPLAY_DIR="$d" replay_check 05-overlap/slow "$check"
    cat "$BATS_TEST_TMPDIR/05-overlap/slow.log"
    tap_failed "$(tap_of 05-overlap/slow)" "$check"
    grep -q "the program was run 3 times in all" "$BATS_TEST_TMPDIR/05-overlap/slow.log"
    replay_check 05-overlap/mut-kernel-default-stream "$check"
    cat "$BATS_TEST_TMPDIR/05-overlap/mut-kernel-default-stream.log"
    tap_failed "$(tap_of 05-overlap/mut-kernel-default-stream)" "$check"
    grep -q "ran on the legacy default stream" "$BATS_TEST_TMPDIR/05-overlap/mut-kernel-default-stream.log"
    run ! grep -q "times in all" "$BATS_TEST_TMPDIR/05-overlap/mut-kernel-default-stream.log"
}

# late_07 DIR [AGAIN]: in DIR, a run of lab 07's solution whose second host
# thread of part 2 (range "part2_per_thread") was held back until the first
# thread's kernel had ended, as a busy machine can (seen once grading 8
# submissions at once on an H100): the recorded solution, with every record
# of that thread, and the GPU work it queued, 0.5 ms after the other
# thread's kernel. AGAIN: the recorded mutant threads-kernel-on-stream-0
# (both kernels on the legacy stream) is the re-run (r.2.*).
late_07() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/07-default-streams"
    derived "$r/solution" "$d"
    python3 - "$r/solution/r.trace" "$d/r.trace" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
rec = [l.split('\t') for l in lines]
r0, r1 = next((int(f[1]), int(f[2])) for f in rec if f[0] == 'nvtx' and f[-1] == 'part2_per_thread')
# the two worker threads of the range, by their first call
first = {}
for f in rec:
    if f[0] == 'api' and r0 <= int(f[1]) <= r1:
        first[f[3]] = min(first.get(f[3], int(f[1])), int(f[1]))
a, b = sorted(first, key=first.get)[:2]
corr = {f[4]: f[3] for f in rec if f[0] == 'api' and f[3] in (a, b)}
def kernel_end(t):
    return max(int(f[2]) for f in rec if f[0] == 'kernel' and corr.get(f[7]) == t and r0 <= int(f[1]) <= r1)
delta = kernel_end(a) + 500000 - first[b]
def mine(f):
    if f[0] in ('api', 'nvtx'):
        return f[3] == b and r0 <= int(f[1]) <= r1
    c = f[7] if f[0] == 'kernel' else f[-1]
    return f[0] in ('copy', 'kernel', 'sync') and corr.get(c) == b
end = 0
for f in rec:
    if mine(f):
        f[1], f[2] = str(int(f[1]) + delta), str(int(f[2]) + delta)
        end = max(end, int(f[2]))
for f in rec:
    if f[0] == 'nvtx' and f[-1] == 'part2_per_thread':
        f[2] = str(max(int(f[2]), end + 100000))
open(sys.argv[2], 'w').write('\n'.join('\t'.join(f) for f in rec))
PY
    [ -z "${2:-}" ] || rerun_is "$r/mut-threads-kernel-on-stream-0" "$d"
}

@test "lab 07: a run whose second thread queued its kernel only after the first's had ended passes, nothing having ordered the two kernels; both on the legacy stream fail in every run" {
    local check="the two threads' kernels may run at the same time: nothing orders either after the other" d="$BATS_TEST_TMPDIR/late"
    grep -qF "@test \"$check\"" "$KIT_ROOT/checker/07-default-streams.bats"
    late_07 "$d"
    REPLAY_DIR="$d" replay_check 07-default-streams/late "$check"
    cat "$BATS_TEST_TMPDIR/07-default-streams/late.log"
    grep -qx "ok 1 $check" "$(tap_of 07-default-streams/late)"
    grep -q 'note: *in this run the GPU ran them one after the other, though nothing ordered them' \
        "$BATS_TEST_TMPDIR/07-default-streams/late.log"
    ! grep -q 're-run' "$BATS_TEST_TMPDIR/07-default-streams/late.log"
    replay_check 07-default-streams/mut-threads-kernel-on-stream-0 "$check"
    cat "$BATS_TEST_TMPDIR/07-default-streams/mut-threads-kernel-on-stream-0.log"
    tap_failed "$(tap_of 07-default-streams/mut-threads-kernel-on-stream-0)" "$check"
    grep -q 'seen: *the program orders them: kernel:[0-9]* (stream order) kernel:[0-9]*$' \
        "$BATS_TEST_TMPDIR/07-default-streams/mut-threads-kernel-on-stream-0.log"
}

# stream0_wait_07 DIR: in DIR, a run of lab 07 whose second host thread of
# part 2's own-stream version (range "part2_per_thread") waited with
# cudaStreamSynchronize(0), as mutant threads-wait-on-stream-0 does (there
# both threads do; one is enough to fail). Derived, not recorded: the
# recorded solution, its wait's record (the range's last sync record of a
# stream) moved from the thread's per-thread stream to the legacy default
# stream (meta default_stream), which is where this build's CUPTI puts
# cudaStreamSynchronize(0): the waits of part2_legacy in the same recording.
# Its times are left as recorded: that wait already ended after all of the
# other thread's work, as a wait for the legacy stream may.
stream0_wait_07() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/07-default-streams"
    derived "$r/solution" "$d"
    python3 - "$r/solution/r.trace" "$d/r.trace" <<'PY'
import sys
rec = [l.split('\t') for l in open(sys.argv[1]).read().split('\n')]
r0, r1 = next((int(f[1]), int(f[2])) for f in rec if f[0] == 'nvtx' and f[-1] == 'part2_per_thread')
legacy = next(f[2] for f in rec if f[0] == 'meta' and f[1] == 'default_stream')
# sync: START END DEVICE STREAM TYPE CORR
last = max((f for f in rec if f[0] == 'sync' and f[5] == 'stream' and r0 <= int(f[1]) <= r1),
           key=lambda f: int(f[1]))
assert last[4] != legacy
last[4] = legacy
open(sys.argv[2], 'w').write('\n'.join('\t'.join(f) for f in rec))
PY
}

@test "lab 07: a thread that waits for stream 0 instead of its own stream fails the check of the threads' waits, and the parts' check: the legacy stream's wait is not documented to cover its own stream's work" {
    local v=07-default-streams/stream0-wait d="$BATS_TEST_TMPDIR/stream0-wait" check
    check=$(expected_check "$KIT_ROOT/checker/tests/mutants/07-default-streams/threads-wait-on-stream-0.patch")
    stream0_wait_07 "$d"
    REPLAY_DIR="$d" replay_check "$v"
    cat "$BATS_TEST_TMPDIR/$v.log"
    tap_failed "$(tap_of "$v")" "$check"
    # and what the program guaranteed: cudaStreamSynchronize waits for the
    # work of the stream it names, here the legacy default stream, none of
    # whose own work was the thread's (streamtrace ask's settled), so the
    # part ended with the thread's copy back not waited for
    tap_failed "$(tap_of "$v")" "each part began with the GPU idle and waited for all its work before it ended"
    [ "$(grep -c '^not ok' "$(tap_of "$v")")" = 2 ]
    grep -qE 'seen: *part2_per_thread ended at .* ms, and thread [23] did not wait for all its work in it: the last not waited for, the D2H copy on a per-thread default stream \([0-9]+\), was queued at .* \(the waits after it, in the range: cudaStreamSynchronize \(stream 7\)\)$' "$BATS_TEST_TMPDIR/$v.log"
    # the thread that waited last in the recording is the one made to wait for stream 0
    grep -qE 'seen: *thread ([23]) waited for its own stream \(thread \1 default\); thread [23] waited for the legacy default stream \(stream 0\)$' "$BATS_TEST_TMPDIR/$v.log"
    grep -qE 'hint: *thread [23] waited for the legacy default stream \(cudaStreamSynchronize\(0\), or cudaStreamLegacy\): .*cudaStreamSynchronize\(cudaStreamPerThread\) \(TODO 3\)$' "$BATS_TEST_TMPDIR/$v.log"
}

# late_blocking_07 DIR: in DIR, lab 07's mutant whose "blocking" stream is
# non-blocking (kinds-both-nonblocking), in a run where its kernel happened
# to start 10 us after the legacy kernel ended (a busy GPU, a slow launch):
# spin_blocking_kernel moved, its length kept.
late_blocking_07() {
    local r="$KIT_ROOT/checker/tests/fixtures/replays/07-default-streams/mut-kinds-both-nonblocking"
    derived "$r" "$1"
    python3 - "$r/r.trace" "$1/r.trace" <<'PY'
import sys
rec = [l.split('\t') for l in open(sys.argv[1]).read().split('\n')]
kern = lambda name: next(f for f in rec if f[0] == 'kernel' and f[-1].startswith(name + '('))
legacy, blocking = kern('spin_legacy_kernel'), kern('spin_blocking_kernel')
n = int(blocking[2]) - int(blocking[1])
blocking[1] = str(int(legacy[2]) + 10000)
blocking[2] = str(int(blocking[1]) + n)
open(sys.argv[2], 'w').write('\n'.join('\t'.join(f) for f in rec))
PY
}

@test "lab 07: a kernel on a non-blocking stream that happened to start after the legacy kernel ended still fails the legacy stream's wait: nothing ordered it" {
    local v=07-default-streams/late-blocking d="$BATS_TEST_TMPDIR/late-blocking" check
    check=$(expected_check "$KIT_ROOT/checker/tests/mutants/07-default-streams/kinds-both-nonblocking.patch")
    late_blocking_07 "$d"
    # the GPU's schedule: in order
    [ "$(q "$d" r order kernel:spin_legacy_kernel kernel:spin_blocking_kernel)" = before ]
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    tap_failed "$(tap_of "$v")" "$check"
    grep -qE 'seen: *not ordered by the program \(in this run it came out in order\): nothing orders kernel:spin_blocking_kernel after kernel:spin_legacy_kernel; in this run it started 0\.0099[0-9]* ms after the other ended; it ran on a created non-blocking stream \([0-9]+\)$' "$BATS_TEST_TMPDIR/$v.log"
}

# early_clear_07 DIR US: in DIR, a run of lab 07's solution whose first
# clear of part 3's pipeline CUPTI stamped US microseconds before the
# range "part3_pipeline" began, as it did once grading a class of 100 on
# two H200s (15 clears for 16 chunks): the memset moved, its length kept.
early_clear_07() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/07-default-streams"
    derived "$r/solution" "$d"
    python3 - "$r/solution/r.trace" "$d/r.trace" "$2" <<'PY'
import sys
rec = [l.split('\t') for l in open(sys.argv[1]).read().split('\n')]
r0, r1 = next((int(f[1]), int(f[2])) for f in rec if f[0] == 'nvtx' and f[-1] == 'part3_pipeline')
first = min((f for f in rec if f[0] == 'memset' and r0 <= int(f[1]) <= r1), key=lambda f: int(f[-1]))
n = int(first[2]) - int(first[1])
first[1] = str(r0 - int(float(sys.argv[3]) * 1000))
first[2] = str(int(first[1]) + n)
open(sys.argv[2], 'w').write('\n'.join('\t'.join(f) for f in rec))
PY
}

@test "lab 07: a pipeline's first clear stamped up to 5 us before its range began is one of its chunks' clears; 30 us before is not" {
    local v=07-default-streams/early-clear d="$BATS_TEST_TMPDIR/early-clear" check
    check="every chunk's scratch was cleared after its last use and before its kernel"
    early_clear_07 "$d" 1
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    grep -q "^ok 1 $check" "$(tap_of "$v")"
    early_clear_07 "$d" 30
    REPLAY_DIR="$d" replay_check "$v" "$check"
    grep -q "^not ok 1 $check" "$(tap_of "$v")"
    grep -q 'seen: *15 clears (memsets) for 16 chunks (kernels)' "$BATS_TEST_TMPDIR/$v.log"
}

# derived_08 MODE REC DIR: in DIR, a run of lab 08 derived from the
# recording REC (its output, its trace edited by MODE):
#   late      the host held back after batch 0's copy was queued (its
#             cudaMemcpyAsync) until 0.5 ms after that copy ended, as a busy
#             machine can: every later call and range of the thread, and
#             the GPU work those calls queued, that much later
derived_08() {
    derived "$2" "$3"
    python3 - "$1" "$2/r.trace" "$3/r.trace" <<'PY'
import sys
mode, src, dst = sys.argv[1:4]
rec = [l.split('\t') for l in open(src).read().rstrip('\n').split('\n')]
CORR = {'copy': 12, 'kernel': 7, 'memset': 7, 'sync': 6, 'event': 5}
side = min((f for f in rec if f[0] == 'nvtx' and f[-1] == 'side_stream'), key=lambda f: int(f[1]))
th = side[3]
api = {f[4]: f for f in rec if f[0] == 'api'}

def part2_copies():
    """part 2's H2D copies, by their call: (api record, copy record)"""
    cs = [(api[f[12]], f) for f in rec if f[0] == 'copy' and f[5] == 'H2D' and f[12] in api
          and api[f[12]][3] == th and int(side[1]) <= int(api[f[12]][1]) <= int(side[2])]
    return sorted(cs, key=lambda p: int(p[0][1]))

def shift(t, delta):
    """the thread's calls and ranges from t on, and the GPU work those calls queued, delta ns later"""
    moved = set()
    for f in rec:
        if f[0] in ('api', 'nvtx') and f[3] == th:
            if int(f[1]) > t:
                f[1] = str(int(f[1]) + delta)
                f[2] = str(int(f[2]) + delta)
                if f[0] == 'api':
                    moved.add(f[4])
            elif int(f[2]) > t:
                f[2] = str(int(f[2]) + delta)
    for f in rec:
        if f[0] in CORR and f[CORR[f[0]]] in moved:
            f[1] = str(int(f[1]) + delta)
            if f[0] != 'event':
                f[2] = str(int(f[2]) + delta)

def next_call(t):
    return min(int(f[1]) for f in rec if f[0] == 'api' and f[3] == th and int(f[1]) > t)

if mode == 'late':
    # batch 0's copy is the second; the host held back 0.5 ms past its end
    a, c = part2_copies()[1]
    t = int(a[2])
    shift(t, int(c[2]) + 500000 - next_call(t))
open(dst, 'w').write('\n'.join('\t'.join(f) for f in rec) + '\n')
PY
}

# late_08 DIR: the recorded solution, its host held back after batch 0's
# copy (derived_08 late)
late_08() {
    local r="$KIT_ROOT/checker/tests/fixtures/replays/08-pytorch"
    derived_08 late "$r/solution" "$1"
}

# What the program guaranteed, not what the GPU did: a host held back until
# a copy had ended left the batch's kernels free to run beside it, and the
# check passes at once; the copies on the kernels' stream fail, the chain
# named.
@test "lab 08: a run whose host queued a batch's kernels only after its copy had ended passes, with no re-run" {
    local v=08-pytorch/late d="$BATS_TEST_TMPDIR/late" check="a copy of the next batch may run beside the batch's kernels: nothing orders either after the other"
    late_08 "$d"
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    grep -qx "ok 1 $check" "$(tap_of "$v")"
    ! grep -q 're-run' "$BATS_TEST_TMPDIR/$v.log"
}

@test "lab 08: copies of the next batch on the kernels' stream fail, the stream order named" {
    local v=08-pytorch/mut-prefetch-on-current-stream check="a copy of the next batch may run beside the batch's kernels: nothing orders either after the other"
    replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    tap_failed "$(tap_of "$v")" "$check"
    grep -q "seen: *batch 0: its kernels are ordered after the next batch's copy: copy:[0-9]* (stream order) kernel:[0-9]*" "$BATS_TEST_TMPDIR/$v.log"
    grep -q "hint: *the copy ran on the legacy default stream, torch's current one, behind the kernels" "$BATS_TEST_TMPDIR/$v.log"
}

# A side-stream copy that keeps the host until it is done (the recorded
# mutant prefetch-blocking): the copies of batches 2 and 3 still run beside
# batch 0's kernels, queued before them, so about half of the copy time runs
# beside a kernel, which an overlap check once took for the lesson. The host
# wait orders each batch's kernels after its copy, and the chain says so.
@test "lab 08: a side-stream copy that keeps the host fails, though it runs beside an earlier batch's kernels" {
    local v=08-pytorch/mut-prefetch-blocking log tap
    "$ST" query "$KIT_ROOT/checker/tests/fixtures/replays/$v/r.trace" overlap h2d kernel --window nvtx:side_stream+gpu |
        awk '{ exit !($2 >= 0.25) }'
    replay_check "$v"
    tap=$(tap_of "$v") log="$BATS_TEST_TMPDIR/$v.log"
    cat "$log"
    # these two fail, every other check passes
    [ "$(grep '^not ok' "$tap" | sed 's/^not ok [0-9]* //' | paste -sd '|' -)" = \
        "each side-stream .to() returns before its copy ends|a copy of the next batch may run beside the batch's kernels: nothing orders either after the other" ]
    grep -q "seen: *batch 0's copy .* ms, the host in cudaStreamSynchronize until .* ms; batch 1's copy" "$log"
    grep -q "seen: *batch 0: its kernels are ordered after the next batch's copy: copy:[0-9]* (a host wait) cudaStreamSynchronize:[0-9]* .* kernel:[0-9]*; batch 1: " "$log"
    [ "$(grep -c 'hint: .*right after the copy the host waited for the side stream (cudaStreamSynchronize) until the copy was done: .to() without non_blocking=True waits that way.* (TODO 3)$' "$log")" = 2 ]
}

# make test-shared keeps every run (KEEP_RUNS) in a folder made on the way.
# Lab 03's check once wrote into it before it existed: its awk died with the
# verdict unwritten, and the unit mutant passed (seen on an H100).
@test "keeping the runs (KEEP_RUNS, a folder not made yet) changes no verdict" {
    skip_full "one more replay, for make test-shared"
    local v=03-pinned-memory/mut-gbps-in-mib check
    check=$(expected_check "$KIT_ROOT/checker/tests/mutants/03-pinned-memory/gbps-in-mib.patch")
    KEEP_RUNS="$BATS_TEST_TMPDIR/keep/not-made-yet" replay_check "$v" "$check"
    tap_failed "$(tap_of "$v")" "$check" || { cat "$BATS_TEST_TMPDIR/$v.log"; return 1; }
    [ -s "$BATS_TEST_TMPDIR/keep/not-made-yet/event-times.txt" ]
}

# ------------------------------------------------------------ lab 09, derived
#
# Runs of lab 09 derived from its recorded solution (two H100s, format 2),
# each an edited copy of the recording that models one mistake: made, not
# recorded. They test that the checker names the cause, not what a GPU does.

# current_09 DIR [MUTANT]: in DIR, lab 09's recorded solution as format 3:
# a `current` line after each runtime call, with a model of the device
# current at it (not recorded: the recording's own current lines, if any,
# are dropped): a call that queued GPU work, the device of that work's
# stream; a cudaSetDevice, the device of the next such call; any other
# call, the device of the call before it.
# MUTANT: in every "pipelined" range the calls that queued slice 0's work
# (on GPU 0) say GPU 1, as a run_pipelined() without the cudaSetDevice
# before issue_slice() has it (GPU 1 is current from the run before it).
current_09() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/09-multi-gpu"
    derived "$r/solution" "$d"
    python3 - "$r/solution/r.trace" "$d/r.trace" "${2:-}" <<'PY'
import sys
lines = [l for l in open(sys.argv[1]).read().split('\n') if not l.startswith('current\t')]
rec = [l.split('\t') for l in lines]
mutant = sys.argv[3] == 'mutant'
sdev = {f[1]: int(f[3]) for f in rec if f[0] == 'stream'}
work = {}           # corr -> the device of its work's stream
for f in rec:
    if f[0] in ('copy', 'kernel', 'memset'):
        work[f[-1] if f[0] != 'kernel' else f[7]] = sdev.get(f[4], int(f[3]))
    elif f[0] == 'event':
        work[f[5]] = sdev.get(f[3], int(f[2]))
pipes = [(int(f[1]), int(f[2])) for f in rec if f[0] == 'nvtx' and f[-1] == 'pipelined']
calls = sorted((int(f[4]), f) for f in rec if f[0] == 'api')
cur, last = {}, 0
for i, (c, f) in enumerate(calls):
    if f[4] in work:
        last = work[f[4]]
        if mutant and last == 0 and any(a <= int(f[1]) <= b for a, b in pipes):
            cur[f[4]] = 1
            continue
    elif f[5] == 'cudaSetDevice':
        nxt = [work[g[4]] for _, g in calls[i + 1:] if g[4] in work]
        if nxt:
            last = nxt[0]
    cur[f[4]] = last
out = ['streamtrace 3']
for l, f in zip(lines[1:], rec[1:]):
    out.append(l)
    if f[0] == 'api':
        out.append('current\t%s\t%d' % (f[4], cur[f[4]]))
open(sys.argv[2], 'w').write('\n'.join(out))
PY
}

@test "lab 09 in format 3: the solution passes every check, its kernels all launched on their streams' GPUs" {
    skip_full "one more replay of every check"
    local v=09-multi-gpu/current d="$BATS_TEST_TMPDIR/09-current"
    current_09 "$d"
    REPLAY_DIR="$d" replay_check "$v"
    cat "$BATS_TEST_TMPDIR/$v.log"
    head -n 1 "$d/r.trace" | grep -qx 'streamtrace 3'
    [ -z "$(unexpected "$(tap_of "$v")" 09-multi-gpu)" ]
    grep -qx "ok [0-9]* every kernel was launched while its stream's GPU was current" "$(tap_of "$v")"
}

@test "lab 09: kernels launched while another GPU was current fail, the hint naming the kernel, both GPUs and TODO 2" {
    local v=09-multi-gpu/elsewhere d="$BATS_TEST_TMPDIR/09-elsewhere"
    local check="every kernel was launched while its stream's GPU was current"
    current_09 "$d" mutant
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    tap_failed "$(tap_of "$v")" "$check"
    # 3 pipelined runs of slice 0's 8 chunks, over its 4 streams
    grep -q 'seen: *24 launches of scramble_kernel into streams [0-9]*, [0-9]*, [0-9]*, [0-9]* of GPU 0 while GPU 1 was current (the first at' \
        "$BATS_TEST_TMPDIR/$v.log"
    grep -q 'hint: *make each slice.s GPU current (cudaSetDevice) before issue_slice() queues its work (TODO 2)\. The CUDA Programming Guide says' \
        "$BATS_TEST_TMPDIR/$v.log"
    grep -q 'timeline:' "$BATS_TEST_TMPDIR/$v.log"
}

@test "lab 09: where the trace does not say which GPU was current (format 2), the check skips and says why" {
    skip_full "one more replay"
    local v=09-multi-gpu/format2 d="$BATS_TEST_TMPDIR/09-format2" r="$KIT_ROOT/checker/tests/fixtures/replays/09-multi-gpu"
    local check="every kernel was launched while its stream's GPU was current"
    # the recorded solution as format 2 (its current lines, if any, dropped)
    derived "$r/solution" "$d"
    sed -e '1s/^streamtrace [0-9]*$/streamtrace 2/' -e '/^current\t/d' "$r/solution/r.trace" >"$d/r.trace"
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    grep -qx "ok 1 $check # skip not recorded: the trace does not say which GPU was current at each launch (a trace older than format 3)" \
        "$(tap_of "$v")"
}

# unwaited_09 DIR: in DIR, lab 09's recorded solution whose last pipelined
# run waited for one stream of each slice only (its first: chunks 0 and 4),
# as a run_pipelined() that synchronizes sp->sl[s].streams[0] alone does:
# the other streams' waits are gone, GPU 1's wait follows GPU 0's, and the
# range "pipelined" ends when it returns, while the other streams' last
# chunks still run.
unwaited_09() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/09-multi-gpu"
    derived "$r/solution" "$d"
    python3 - "$r/solution/r.trace" "$d/r.trace" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
rec = [l.split('\t') for l in lines]
a, b = max((int(f[1]), int(f[2])) for f in rec if f[0] == 'nvtx' and f[-1] == 'pipelined')
inr = lambda f: a <= int(f[1]) <= b
api = [f for f in rec if f[0] == 'api' and inr(f)]
syncs = [f for f in api if f[5] == 'cudaStreamSynchronize']
sets = [f for f in api if f[5] == 'cudaSetDevice']
sync_rec = {f[-1]: f for f in rec if f[0] == 'sync'}
# the waits: GPU 0's streams, then (after a cudaSetDevice) GPU 1's
first0, first1 = syncs[0], next(f for f in syncs if sync_rec[f[4]][3] == '1')
gone = {f[4] for f in syncs if f is not first0 and f is not first1}
# GPU 1's first stream: its work queued in the range, and when it ended
stream1 = sync_rec[first1[4]][4]
end1 = max(int(f[2]) for f in rec if f[0] in ('copy', 'kernel') and f[4] == stream1 and int(f[1]) >= a)
set1 = [f for f in sets if int(f[1]) > int(first0[2])][0]
t = int(first0[2]) + 3000
set1[1], set1[2] = str(t), str(t + 600)
first1[1], first1[2] = str(t + 1200), str(max(end1, t + 1200) + 5000)
s1 = sync_rec[first1[4]]
s1[1], s1[2] = first1[1], first1[2]
for f in rec:
    if f[0] == 'nvtx' and f[-1] == 'pipelined' and int(f[1]) == a:
        f[2] = str(int(first1[2]) + 3000)
out = [f for f in rec if not (f[0] in ('api', 'sync') and f[-1 if f[0] == 'sync' else 4] in gone)]
open(sys.argv[2], 'w').write('\n'.join('\t'.join(f) for f in out))
PY
}

@test "lab 09: streams left unwaited fail the streams check, the hint naming them and TODO 2" {
    local v=09-multi-gpu/unwaited d="$BATS_TEST_TMPDIR/09-unwaited"
    local check="each slice's chunks ran on streams of their own, on the slice's GPU"
    unwaited_09 "$d"
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    tap_failed "$(tap_of "$v")" "$check"
    # (in the recording of 2026-11-25: GPU 0 ran 7 kernels, GPU 1 6; the
    # streams 23, 24, 25 and 27, 28, 29 went on)
    grep -q "seen: *GPU 0 ran [0-7] kernels, not 8; GPU 1 ran [0-7] kernels, not 8, and work of this run went on after run_pipelined() had returned" \
        "$BATS_TEST_TMPDIR/$v.log"
    grep -q "hint: *the host left streams unwaited: GPU 0's streams* [0-9, ]* and GPU 1's streams* [0-9, ]* still had work when run_pipelined() returned\..*(TODO 2)" \
        "$BATS_TEST_TMPDIR/$v.log"
    ! grep -q 'TODO 1' "$BATS_TEST_TMPDIR/$v.log"
}

# one_way_09 DIR: in DIR, lab 09's recorded solution with peer access turned
# on one way only (GPU 0 may reach GPU 1's memory, not the other way): the
# exchange's copy from GPU 1 to GPU 0 in the range "direct" made by GPU 0 on
# an internal stream of its own (99, declared), as a run on two H100s did,
# instead of in GPU 1's p->stream[1].
one_way_09() {
    local d=$1 r="$KIT_ROOT/checker/tests/fixtures/replays/09-multi-gpu"
    derived "$r/solution" "$d"
    python3 - "$r/solution/r.trace" "$d/r.trace" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
rec = [l.split('\t') for l in lines]
# every "direct" range: the warm-up's and each timed exchange's
ranges = [(int(f[1]), int(f[2])) for f in rec if f[0] == 'nvtx' and f[-1] == 'direct']
for f in rec:
    if f[0] == 'copy' and f[5] == 'P2P' and f[3] == '1' and any(a <= int(f[1]) <= b for a, b in ranges):
        f[4] = '99'
i = next(i for i, f in enumerate(rec) if f[0] == 'stream')
rec.insert(i, ['stream', '99', 'internal', '0', '-'])
open(sys.argv[2], 'w').write('\n'.join('\t'.join(f) for f in rec))
PY
}

@test "lab 09: a copy made on the other GPU's internal stream (peer access one way) fails the copy times, the hint naming TODO 5" {
    local v=09-multi-gpu/one-way d="$BATS_TEST_TMPDIR/09-one-way"
    local check="the printed copy times are the GPU's own times of those copies"
    one_way_09 "$d"
    REPLAY_DIR="$d" replay_check "$v" "$check"
    cat "$BATS_TEST_TMPDIR/$v.log"
    tap_failed "$(tap_of "$v")" "$check"
    grep -q 'seen: *it ran on stream 99, an internal stream of GPU 0: GPU 0 made the copy, outside p->stream\[1\] and its events' \
        "$BATS_TEST_TMPDIR/$v.log"
    grep -q 'hint: *peer access was on one way only: GPU 0 could reach GPU 1.s memory .*(TODO 5)' "$BATS_TEST_TMPDIR/$v.log"
    ! grep -q 'TODO 4' "$BATS_TEST_TMPDIR/$v.log"
}

# ---------------------------------------------------------------- lab 06, stress runs

# made6_with VARIANT NAME EDIT...: a copy of lab 06's made run VARIANT as
# $BATS_TEST_TMPDIR/made6/NAME, each EDIT ("FILE:N" with the verdict line of
# scenario N in FILE made WRONG, its digest too; no-stress-run: without the
# run of four, as a folder recorded before it) applied; replayed, its runs
# kept in $BATS_TEST_TMPDIR/keep6/NAME.
made6_with() {
    local d="$BATS_TEST_TMPDIR/made6/$2" e f n
    mkdir -p "$d"
    cp "$LEARN/06-lifetime/$1"/* "$d/"
    for e in "${@:3}"; do
        [ "$e" = no-stress-run ] && { rm "$d"/stress.*; continue; }
        f=${e%:*} n=${e##*:}
        sed -i -e "s/^  digest_scenario$n = .*/  digest_scenario$n = 0badc0ffee0badc0/" \
            -e "s/^\(scenario $n ([^)]*)\): verified all \([0-9]*\) elements/\1: WRONG: 1 of \2 elements differ/" "$d/$f"
    done
    STRESS="$KIT_ROOT/checker/tests/fixtures/progs/replay-stress" SANITIZER= \
        KEEP_RUNS="$BATS_TEST_TMPDIR/keep6/$2" REPLAY_DIR="$d" replay_check "06-lifetime/$2"
}

# stress_runs NAME: the runs made under the stress tool, by name, sorted.
stress_runs() {
    (cd "$BATS_TEST_TMPDIR/keep6/$1"/06-lifetime.* && ls s[1-4].rc stress.rc 2>/dev/null | sed 's/\.rc$//' | tr '\n' ' ')
}

# scenario_ok NAME N / scenario_not_ok NAME N: made run NAME's check of scenario N passed / failed.
scenario_ok() { grep -q "^ok [0-9]* scenario $2:" "$(tap_of "06-lifetime/$1")"; }
scenario_not_ok() { grep -q "^not ok [0-9]* scenario $2:" "$(tap_of "06-lifetime/$1")"; }

@test "lab 06: the four scenarios run once under the stress tool; a scenario that run did not verify runs again alone, and its check judges that run" {
    local c
    # the solution: one run under the tool, every scenario judged there
    made6_with solution sol
    [ "$(stress_runs sol)" = "stress " ]
    for c in 1 2 3 4; do scenario_ok sol "$c"; done
    # scenario 2 WRONG in the run of four, verified alone: it passes, on its own run
    made6_with solution two stress.out:2
    [ "$(stress_runs two)" = "s2 stress " ]
    for c in 1 2 3 4; do scenario_ok two "$c"; done
    # and WRONG alone too: it fails, and no other scenario
    made6_with solution both stress.out:2 r--scenario-2.out:2
    scenario_not_ok both 2
    for c in 1 3 4; do scenario_ok both "$c"; done
    # a scenario verified in the run of four is not run alone
    made6_with solution three r--scenario-3.out:3
    [ "$(stress_runs three)" = "stress " ]
    scenario_ok three 3
    # a folder recorded before the run of four: each scenario alone
    made6_with solution old no-stress-run
    [ "$(stress_runs old)" = "s1 s2 s3 s4 stress " ]
    for c in 1 2 3 4; do scenario_ok old "$c"; done
    # the made starter: all four WRONG under the tool, each alone too
    made6_with starter starter
    [ "$(stress_runs starter)" = "s1 s2 s3 s4 stress " ]
    for c in 1 2 3 4; do scenario_not_ok starter "$c"; done
}

@test "lab 06, made runs: copies the program left free of the kernels pass though a busy GPU ran them first; a copy ordered after the kernel before it, or that kernel after the copy, fails in every run, the chain named" {
    local c1 c4 t
    c1=$(expected_check "$KIT_ROOT/checker/tests/mutants/06-lifetime/s1-wait-for-kernels.patch")
    c4="scenario 4's next-chunk copies can overlap its kernels: no copy and the kernel of the chunk before it wait for each other"
    grep -qF "@test \"$c4\"" "$KIT_ROOT/checker/06-lifetime.bats"
    for t in solution solution-busy; do
        for c in "$c1" "$c4"; do
            replay_made6 "06-lifetime/$t" "$c"
            grep -q "^ok [0-9]* $c" "$(tap_of "06-lifetime/$t")" || { cat "$BATS_TEST_TMPDIR/06-lifetime/$t.log"; return 1; }
        done
    done
    replay_made6 06-lifetime/mut-s1-wait-for-kernels "$c1"
    cat "$BATS_TEST_TMPDIR/06-lifetime/mut-s1-wait-for-kernels.log"
    tap_failed "$(tap_of 06-lifetime/mut-s1-wait-for-kernels)" "$c1"
    grep -q "seen: *chunk 2's copy waits for chunk 1's kernel: kernel:[0-9]* (a host wait) cudaStreamSynchronize:" \
        "$BATS_TEST_TMPDIR/06-lifetime/mut-s1-wait-for-kernels.log"
    replay_made6 06-lifetime/mut-s4-next-copy-after-free "$c4"
    cat "$BATS_TEST_TMPDIR/06-lifetime/mut-s4-next-copy-after-free.log"
    tap_failed "$(tap_of 06-lifetime/mut-s4-next-copy-after-free)" "$c4"
    grep -q "seen: *chunk 2's copy waits for chunk 1's kernel: kernel:[0-9]* (stream order) record:[0-9]* (an event wait) wait:" \
        "$BATS_TEST_TMPDIR/06-lifetime/mut-s4-next-copy-after-free.log"
    # the next chunk's copy queued on the compute stream, ahead of this
    # chunk's kernel: the kernel waits for it (the other way round)
    replay_made6 06-lifetime/mut-s4-prep-on-compute "$c4"
    cat "$BATS_TEST_TMPDIR/06-lifetime/mut-s4-prep-on-compute.log"
    tap_failed "$(tap_of 06-lifetime/mut-s4-prep-on-compute)" "$c4"
    grep -q "seen: *chunk 1's kernel waits for chunk 2's copy: copy:[0-9]* (stream order) kernel:" \
        "$BATS_TEST_TMPDIR/06-lifetime/mut-s4-prep-on-compute.log"
}

# ---------------------------------------------------------------- lab 10, made runs
#
# Lab 10's recorded runs (checker/tests/gpu-lab-10.sh) keep the solution,
# the starter and two mutants (a trace is 2.8 MB). Each other mistake is
# tested on runs MADE by fixtures/learn/make-10-graphs.py: a model of the solution's
# calls, NVTX ranges and GPU records in format 5, with made-up times, and of
# each mutant's mistake. They test the checker's logic, never a GPU.

# made_10 VARIANT: make the run VARIANT (a mistake the model knows) and
# replay it, all its checks, or only CHECK: made_10 VARIANT [CHECK].
made_10() {
    local d="$BATS_TEST_TMPDIR/made10/$1"
    python3 "$KIT_ROOT/checker/tests/fixtures/learn/make-10-graphs.py" \
        "$KIT_ROOT/checker/verify/digests" "$d" "$1"
    REPLAY_DIR="$d" replay_check "10-graphs/made-$1" "${2:-}"
}

# The model's mistakes and the mutants (checker/tests/mutants/10-graphs) they are.
MADE_10=(capture-never-ends:capture-never-ends sync-inside-capture:sync-inside-capture
    kernel-outside-capture:kernel-outside-capture replay-without-wait:replay-without-wait
    branches-on-one-stream:branches-on-one-stream join-before-branch:join-event-before-branch
    capture-again:update-by-capturing-again pitfall-not-called:pitfall-answer-made-up
    graph-time-before-wait:graph-time-before-wait instantiate-every-replay:instantiate-every-replay)

# made_10_fail PAIR...: each made mistake fails the check its mutant names.
made_10_fail() {
    local pair v check bad=""
    for pair in "$@"; do
        v=${pair%%:*}
        check=$(expected_check "$KIT_ROOT/checker/tests/mutants/10-graphs/${pair#*:}.patch")
        made_10 "$v" "$check"
        tap_failed "$(tap_of "10-graphs/made-$v")" "$check" ||
            bad+=$'\n'"made $v must fail \"$check\":"$'\n'"$(sed 's/^/    /' "$BATS_TEST_TMPDIR/10-graphs/made-$v.log")"
    done
    echo "${bad:-all failed as named}"
    [ -z "$bad" ]
}

@test "lab 10, made runs: the modelled solution passes every check, and Your run shows its figures beside the predictions" {
    REPLAY_PREDICTIONS=$LEARN made_10 solution
    cat "$BATS_TEST_TMPDIR/10-graphs/made-solution.log"
    grep -Eq '^    speedup +[0-9.]+ x +([0-9.]+ x +)?you said 3 x' "$BATS_TEST_TMPDIR/10-graphs/made-solution.log"
    grep -q 'predictions.txt line 5: .*skipped' "$BATS_TEST_TMPDIR/10-graphs/made-solution.log"
    [ -z "$(unexpected "$(tap_of 10-graphs/made-solution)" 10-graphs)" ]
    [ "$(grep -c '^ok ' "$(tap_of 10-graphs/made-solution)")" -eq "$(grep -c '^@test ' "$KIT_ROOT/checker/10-graphs.bats")" ]
    grep -Eq '^    speedup +[0-9.]+ x' "$BATS_TEST_TMPDIR/10-graphs/made-solution.log"
    grep -Eq '^    graph_gpu_us +[0-9.]+ us' "$BATS_TEST_TMPDIR/10-graphs/made-solution.log"
}

@test "lab 10, made runs: a kernel left outside the capture fails the check of the replays' kernels, the hint naming TODO 1" {
    made_10_fail kernel-outside-capture:kernel-outside-capture
    grep -q 'seen: *31$' "$BATS_TEST_TMPDIR/10-graphs/made-kernel-outside-capture.log"
    grep -q 'hint: .*before the capture runs once.*' "$BATS_TEST_TMPDIR/10-graphs/made-kernel-outside-capture.log"
}

@test "lab 10, made runs: a join event recorded before branch B fails the join's check, though this run's GPU started the join after both branches ended" {
    local check
    check=$(expected_check "$KIT_ROOT/checker/tests/mutants/10-graphs/join-event-before-branch.patch")
    made_10 join-before-branch-won
    cat "$BATS_TEST_TMPDIR/10-graphs/made-join-before-branch-won.log"
    tap_failed "$(tap_of 10-graphs/made-join-before-branch-won)" "$check"
    grep -q 'seen: *streams: branch A before, branch B not ordered by the program before (in this run it ran before) the join$' \
        "$BATS_TEST_TMPDIR/10-graphs/made-join-before-branch-won.log"
    # the one check it fails: its results are right, its replays too
    [ "$(grep -c '^not ok' "$(tap_of 10-graphs/made-join-before-branch-won)")" = 1 ]
}

@test "lab 10, made runs: branches that a busy GPU ran one after the other on the streams pass, nothing having ordered them; the two on one stream fail in every run" {
    local check
    check=$(expected_check "$KIT_ROOT/checker/tests/mutants/10-graphs/branches-on-one-stream.patch")
    made_10 branches-one-after-other
    cat "$BATS_TEST_TMPDIR/10-graphs/made-branches-one-after-other.log"
    [ -z "$(unexpected "$(tap_of 10-graphs/made-branches-one-after-other)" 10-graphs)" ]
    grep -q "^ok [0-9]* $check" "$(tap_of 10-graphs/made-branches-one-after-other)"
    made_10 branches-on-one-stream "$check"
    tap_failed "$(tap_of 10-graphs/made-branches-on-one-stream)" "$check"
    grep -q 'seen: *the program orders branch_b_kernel after branch_a_kernel: kernel:[0-9]* (stream order) kernel:[0-9]*$' \
        "$BATS_TEST_TMPDIR/10-graphs/made-branches-on-one-stream.log"
}

@test "lab 10, made runs: every other modelled mistake fails the check its mutant names" {
    skip_full "nine more replays of lab 10's checker"
    made_10_fail "${MADE_10[@]}"
}
