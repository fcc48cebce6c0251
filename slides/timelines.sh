#!/usr/bin/env bash
# timelines.sh -- draw each deck's timeline: the SVG that checker/trace/streamtrace
# makes from a real run of the lab's solution, cut to the window that teaches.
#
#   ./timelines.sh TRACES OUTDIR
#
# TRACES holds the runs, as checker/tests/record-replays.sh writes them
# (TRACES/NN-name/solution/r.trace) or as `make trace` leaves them in a
# lab folder (TRACES/NN-name/PROG.trace, e.g. TRACES=../solutions, or a
# student's own runs: TRACES=../labs).
# The window is the lab's own TRACE_WINDOW (solutions/NN-name/Makefile), so a
# deck shows what `make trace` shows. Writes OUTDIR/NN-name.svg; a lab whose
# run is missing keeps its SVG, with a line that says so.
# `make timelines TRACES=DIR` calls this for timelines/.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kit=$here/..
st=$kit/checker/trace/streamtrace
[ $# -eq 2 ] || { echo "usage: timelines.sh TRACES OUTDIR" >&2; exit 2; }
traces=$1 out=$2
[ -d "$traces" ] || { echo "timelines: no folder $traces" >&2; exit 2; }
[ -x "$st" ] || { echo "timelines: $st not built (make tools)" >&2; exit 1; }
mkdir -p "$out"

# The run of LAB under $traces, or nothing.
find_trace() {
    local lab=$1 f
    for f in "$traces/$lab/solution/r.trace" "$traces/$lab"/*.trace; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
}

# The lab's TRACE_WINDOW as words, one a line (quotes and \# undone): the
# solution's, or in a kit without solutions (a student's) the lab's own.
window_of() {
    local mk=$kit/solutions/$1/Makefile
    [ -f "$mk" ] || mk=$kit/labs/$1/Makefile
    sed -n 's/^TRACE_WINDOW *:= *//p' "$mk" |
        sed 's/\\#/#/g' | tr -d "'\"" | tr ' ' '\n' | sed '/^$/d'
}

rc=0
for md in "$here"/[0-9][0-9]-*.md; do
    lab=$(basename "$md" .md)
    trace=$(find_trace "$lab")
    if [ -z "$trace" ]; then
        echo "timelines: $lab.svg: no run of $lab in $traces, left as it is"
        continue
    fi
    mapfile -t win < <(window_of "$lab")
    if "$st" svg "$trace" -o "$out/$lab.svg" "${win[@]}"; then
        echo "timelines: $lab.svg from $trace${win[*]:+ (${win[*]})}"
    else
        rc=1
    fi
done
exit $rc
