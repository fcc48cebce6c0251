#!/usr/bin/env bash
# gpu-lab-10.sh -- on a GPU node (one GPU is enough): prove lab 10 in one go,
# in under 5 minutes on one H100.
#
#   checker/tests/gpu-lab-10.sh            (from the kit's root; OUT=DIR for files)
#
# Builds the kit, then checks lab 10's solution, starter and every mutant
# with the checker alone, and the solution again three times beside 3 other
# checkers (lab 04's, 05's and 10's solutions, over and over, in a copy of
# the kit; the starter and mutants too while time allows). Every checker run
# gets the replays' seed (20261123). Runs the trace tool's GPU tests
# beside the second round (trace-gpu.bats: format 4 on a real GPU, graphs.cu
# among its programs; at most 120 s, else "exit 124"). Records the replays from the
# runs alone (OUT/replays-10.tgz: unpack it over checker/tests/fixtures/replays/),
# draws the deck's timeline (OUT/10-graphs.svg -> slides/timelines/), and
# prints one table of verdicts, the graph's host time per iteration against
# the stream loop's (stream_us / graph_us of each solution run: two
# measurements of one run), and what the trace recorded of the graphs and
# of the calls a capture refused.
# Files in OUT (at most 4): summary.txt, replays-10.tgz, 10-graphs.svg, logs.tgz.
# Exit status 0: every verdict right; 1: some wrong; 77: no CUDA device.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
KIT=$PWD
LAB=10-graphs
PROG=graphs
OUT=${OUT:-$KIT/build/gpu-lab-10}
mkdir -p "$OUT"
export PATH="$KIT/checker/vendor/node_modules/bats/bin:$PATH:/usr/local/cuda/bin" NO_COLOR=1
export LAB_SEED=${REPLAY_SEED:-20261123}
command -v bats >/dev/null || { echo "gpu-lab-10.sh: no bats (apt-get install bats, or carry checker/vendor/node_modules)"; exit 2; }
ST=checker/trace/streamtrace
W=$(mktemp -d)                      # everything but the four files of OUT
L=$W/logs
mkdir -p "$L"
log=$L/build.txt
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
GPUS=$(. checker/grade/lib.bash && visible_gpus)
[ "${GPUS:-0}" -gt 0 ] || { echo "gpu-lab-10.sh: not run: no GPU (nvidia-smi lists none)"; exit 77; }
NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
DRIVER="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)"

make --no-print-directory -j"$(nproc)" tools all >>"$log" 2>&1 || { echo "the build failed"; tail -5 "$log"; exit 1; }

# variants: solution, starter, mutants
V=$W/variants
mkdir -p "$V/solution" "$V/starter"
cp solutions/$LAB/{Makefile,$PROG.cu} "$V/solution/"
cp labs/$LAB/{Makefile,$PROG.cu} "$V/starter/"
cp "checker/tests/fixtures/learn/$LAB.predictions" "$V/solution/predictions.txt"
for p in checker/tests/mutants/$LAB/*.patch; do
    m="$V/mut-$(basename "$p" .patch)"
    mkdir -p "$m" && cp solutions/$LAB/{Makefile,$PROG.cu} "$m/"
    patch -s -F0 -p1 -d "$m" <"$p" || echo "$p does not apply" | tee -a "$log"
done
(cd "$V" && ls -d *) | xargs -P "$(nproc)" -I{} make --no-print-directory -s -C "$V/{}" KIT_ROOT="$KIT" >>"$log" 2>&1

# verdict TAP: "pass" (every check ok), or the failed checks
verdict() {
    local f
    f=$(sed -n 's/^not ok [0-9]* //p' "$1" | sed 's/ # .*//' | paste -sd '|' -)
    if [ -n "$f" ]; then echo "FAIL: $f"
    elif grep -q '# skip' "$1"; then echo "SKIPPED: $(grep '# skip' "$1" | head -n 1)"
    elif grep -q '^ok' "$1"; then echo pass
    else echo "no result"; fi
}
# judge NAME VERDICT: right or WRONG
judge() {
    local p="checker/tests/mutants/$LAB/${1#mut-}.patch"
    case $1 in
        solution*) [[ $2 == pass ]] ;;
        starter) [[ $2 == FAIL* ]] ;;
        mut-*) [[ "|${2#FAIL: }|" == *"|$(sed -n '1s/^# expect: //p' "$p")|"* ]] ;;
    esac && echo right || echo WRONG
}
# check ROUND NAME [DIR]: one checker run of variant NAME (folder DIR)
check() {
    local r=$1 n=$2 d=${3:-$V/$2} v
    rm -rf "$W/runs-$r/$n"
    KEEP_RUNS="$W/runs-$r/$n" checker/run-checks --dir "$d" --tap-out "$L/$r-$n.tap" $LAB >"$L/$r-$n.log" 2>&1
    v=$(verdict "$L/$r-$n.tap")
    printf '%-7s %-28s %-6s %s\n' "$r" "$n" "$(judge "$n" "$v")" "$v" >>"$W/table.txt"
}
: >"$W/table.txt"
t0=$(date +%s)
for d in "$V"/*; do check alone "$(basename "$d")"; done
t1=$(date +%s)

# beside: 3 other checkers in a copy of the kit, over and over, until done
B=$W/kit
mkdir -p "$B"
trap 'touch "$W/stop"; kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
tar -C "$KIT" --exclude=./build --exclude=./reports --exclude=./.git -cf - . | tar -C "$B" -xf -
beside() {
    local lab=$1 j=0
    while [ ! -e "$W/stop" ]; do
        j=$((j + 1))
        "$B/checker/run-checks" --tree solutions --tap-out "$W/b-$lab-$j.tap" "$lab" >"$W/b-$lab-$j.log" 2>&1
        echo "beside $lab run $j: exit $?" >>"$W/beside.txt"
    done
}
: >"$W/beside.txt"
for lab in 04 05 10; do beside "$lab" & done
# the trace tool on this GPU (format 4 among its tests), beside them too
timeout 120 bats checker/tests/trace-gpu.bats >"$L/trace-gpu.tap" 2>&1 &
tgpid=$!
sleep 3
for i in 1 2 3; do
    mkdir -p "$V/solution-$i" && cp "$V/solution/"{Makefile,$PROG.cu,$PROG} "$V/solution-$i/"
    check beside "solution-$i"
done
# the rest beside while there is time (the script must end in 5 minutes)
for d in "$V"/starter "$V"/mut-*; do
    [ "$(elapsed)" -lt 170 ] || { echo "beside: $(basename "$d") and after left out (time)" >>"$W/table.txt"; break; }
    check beside "$(basename "$d")"
done
touch "$W/stop"
tg=0
wait "$tgpid" || tg=$?
wait
t2=$(date +%s)

# replays from the runs alone (the checker's one traced run, "main": r.*)
R=$W/rec/replays/$LAB
for d in "$V"/*; do
    n=$(basename "$d") k=$(ls -d "$W/runs-alone/$(basename "$d")/$LAB".* 2>/dev/null | head -n 1)
    [[ $n == solution-* ]] && continue
    [ -n "$k" ] && [ -s "$k/main.trace" ] || { echo "$n: not recorded" >>"$log"; continue; }
    mkdir -p "$R/$n"
    for f in trace out err rc; do cp "$k/main.$f" "$R/$n/r.$f" 2>/dev/null || : >"$R/$n/r.$f"; done
    cat "$k/seed" >"$R/$n/seed"
done
tar -C "$W/rec/replays" -czf "$OUT/replays-10.tgz" $LAB
T=$(ls "$W"/runs-alone/solution/$LAB.*/main.trace 2>/dev/null | head -n 1)
WIN=$(sed -n 's/^TRACE_WINDOW *:= *//p' solutions/$LAB/Makefile | sed 's/\\#/#/g')
if [ -n "$T" ]; then
    # shellcheck disable=SC2086  # the window's words
    "$ST" svg "$T" -o "$OUT/$LAB.svg" $WIN >>"$log" 2>&1
    # shellcheck disable=SC2086
    "$ST" timeline --width 110 --color never $WIN "$T" >"$L/timeline.txt" 2>&1
fi

# figures of a run's output
fig() { awk -v k="$2" '$1 == k && $2 == "=" { print $3; exit }' "$1" 2>/dev/null; }
q() { "$ST" query "$T" "$@" 2>/dev/null; }
{
echo "lab 10 on 1 x $NAME (driver $DRIVER), $({ nvcc --version || /usr/local/cuda/bin/nvcc --version; } 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p')"
echo "verdicts (alone: $((t1 - t0)) s; beside 3 checkers: $((t2 - t1)) s; whole script: $(elapsed) s):"
cat "$W/table.txt"
echo "checkers beside: $(grep -c ': exit [^0]' "$W/beside.txt") of $(grep -c . "$W/beside.txt") runs did not exit 0"
echo "wrong verdicts: $(grep -c ' WRONG ' "$W/table.txt")"
echo "trace-gpu.bats: exit $tg, $(grep '^ok' "$L/trace-gpu.tap" | grep -vc '# skip') ok, $(grep -c '^not ok' "$L/trace-gpu.tap") not ok, $(grep -c '# skip' "$L/trace-gpu.tap") skipped"
echo "host time per iteration, stream loop / graph loop (stream_us, graph_us of one run each):"
for o in "$W"/runs-*/solution*/$LAB.*/main.out; do
    r=${o#"$W"/runs-} r=${r%%/$LAB.*}
    printf '  %-22s stream_us %8s  graph_us %8s  ratio %s\n' "$r" "$(fig "$o" stream_us)" "$(fig "$o" graph_us)" \
        "$(awk -v a="$(fig "$o" stream_us)" -v b="$(fig "$o" graph_us)" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"
done
if [ -n "$T" ]; then
    O=$(dirname "$T")/main.out
    echo "the solution's trace: format $(head -n 1 "$T" | cut -d ' ' -f 2)"
    echo "  part 1: kernels in graph_loop: $(q count kernel --window 'nvtx:graph_loop+gpu'), graph ids:" \
         "$(q graph kernel --window 'nvtx:graph_loop+gpu' | cut -f 11 | sort -u | paste -sd, -), nodes:" \
         "$(q graph kernel --window 'nvtx:graph_loop+gpu' | cut -f 12 | sort -u | wc -l), launches (corr):" \
         "$(q graph kernel --window 'nvtx:graph_loop+gpu' | cut -f 13 | sort -u | wc -l)," \
         "kernel streams: $(q graph kernel --window 'nvtx:graph_loop+gpu' | cut -f 5 | sort -u | paste -sd, -)"
    echo "  part 1: GPU time with a kernel running, stream loop $(q union kernel --window 'nvtx:stream_loop+gpu') ms," \
         "graph loop $(q union kernel --window 'nvtx:graph_loop+gpu') ms; ranges $(q list nvtx:stream_loop | cut -f 3) / $(q list nvtx:graph_loop | cut -f 3) ms"
    echo "  part 2: branch overlap on the streams $(q overlap kernel:branch_a kernel:branch_b --window 'nvtx:fork_stream+gpu')," \
         "replay 1 $(q overlap kernel:branch_a kernel:branch_b --window 'nvtx:replay#1+gpu');" \
         "replay 1 streams: $(q graph gpu --window 'nvtx:replay#1+gpu' | awk -F'\t' '{ print $6 "@" $5 }' | sed 's/(.*)//' | paste -sd, -)"
    echo "  part 3: printed sync $(fig "$O" sync_in_capture)/$(fig "$O" sync_end_capture), legacy" \
         "$(fig "$O" legacy_in_capture)/$(fig "$O" legacy_end_capture); the trace's errors:" \
         "$(q returned api | awk -F'\t' '$12 != "0" { print $6 "=" $12 }' | paste -sd, -)"
    echo "  part 3: update_kernel graph ids $(q graph kernel:update_kernel | cut -f 11 | paste -sd, -);" \
         "calls in update: $(q list api --window nvtx:update | cut -f 6 | sort | uniq -c | awk '{ printf "%s%s x%s", (n++ ? ", " : ""), $2, $1 }')"
    echo "--- the solution's Your run:"
    sed -n '/^  Your run/,/^$/p' "$L/alone-solution.log"
    echo "--- timeline (make trace's window):"
    cat "$L/timeline.txt"
fi
echo "files: $OUT/replays-10.tgz (tar -C checker/tests/fixtures/replays -xzf it), $OUT/$LAB.svg (cp to slides/timelines/), logs.tgz"
} | tee "$OUT/summary.txt"
cp "$W/table.txt" "$W/beside.txt" "$L/" 2>/dev/null
tar -C "$W" -czf "$OUT/logs.tgz" logs
! grep -q ' WRONG ' "$W/table.txt"
