#!/usr/bin/env bash
# timelines.sh -- draw each deck's timeline: the SVG that checker/trace/streamtrace
# makes from a real run of the lab's solution.
#
#   ./timelines.sh TRACES OUTDIR
#
# TRACES holds the runs, as checker/tests/record-replays.sh writes them
# (TRACES/NN-name/solution/RUN.trace) or as `make trace` leaves them in a
# solution folder (TRACES/NN-name/PROG.trace, e.g. TRACES=../solutions).
# A timeline whose run is missing is left as it is, with a line that says so.
# `make timelines TRACES=DIR` calls this for timelines/.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
st=$here/../checker/trace/streamtrace
[ $# -eq 2 ] || { echo "usage: timelines.sh TRACES OUTDIR" >&2; exit 2; }
traces=$1 out=$2
[ -d "$traces" ] || { echo "timelines: no folder $traces" >&2; exit 2; }
[ -x "$st" ] || { echo "timelines: $st not built (make tools)" >&2; exit 1; }
mkdir -p "$out"

# Does this streamtrace draw a window of a run? (issue 13: --window, --from/--to)
windows=0
"$st" help 2>&1 | grep -q -- '--from' && windows=1

# One timeline a line: the SVG, the lab, the run (r = no arguments,
# r--order-breadth = --order breadth), the window. The window is `-` for the
# whole run, or FROM..TO: from the start of the last record FROM selects to the
# end of the last record TO selects (streamtrace selectors).
table() {
    cat <<'EOF'
01-sync-copy.svg    01-sync-copy      r                -
02-async-copy.svg   02-async-copy     r                nvtx:issue..nvtx:wait
03-pageable.svg     03-pinned-memory  r                nvtx:async_pageable..nvtx:async_pageable
03-pinned.svg       03-pinned-memory  r                nvtx:async_pinned..nvtx:async_pinned
04-events.svg       04-events         r                nvtx:polling..kernel:consumer
05-overlap.svg      05-overlap        r                nvtx:sequential..nvtx:pipelined
06-lifetime.svg     06-lifetime       r                -
EOF
}

# The trace of RUN of LAB under $traces, or nothing.
find_trace() {
    local lab=$1 run=$2 f
    for f in "$traces/$lab/solution/$run.trace" "$traces/$lab/$run.trace"; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
    [ "$run" = r ] || return
    for f in "$traces/$lab"/*.trace; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
}

# Start of the last record of SEL, or its end with field 2.
last_of() {
    "$st" query "$1" list "$2" | awk -v f="$3" 'END { if (NR) print $f }'
}

rc=0
while read -r svg lab run window; do
    trace=$(find_trace "$lab" "$run")
    if [ -z "$trace" ]; then
        echo "timelines: $svg: no run of $lab in $traces, left as it is"
        continue
    fi
    args=()
    if [ "$window" != - ] && [ "$windows" = 1 ]; then
        from=$(last_of "$trace" "${window%%..*}" 1)
        to=$(last_of "$trace" "${window##*..}" 2)
        if [ -z "$from" ] || [ -z "$to" ]; then
            echo "timelines: $svg: $trace has no record for $window" >&2
            rc=1
            continue
        fi
        args=(--from "$from" --to "$to")
    elif [ "$window" != - ]; then
        echo "timelines: $svg: this streamtrace draws no windows yet: the whole run"
    fi
    if "$st" svg "${args[@]}" "$trace" -o "$out/$svg"; then
        echo "timelines: $svg from $trace${args[*]:+ (${args[*]} ms)}"
    else
        rc=1
    fi
done < <(table)
exit $rc
