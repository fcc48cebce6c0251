#!/usr/bin/env bash
# gpu-lab-09.sh -- on a GPU node, one GPU or two: prove lab 09 in one go.
#
#   checker/tests/gpu-lab-09.sh            (from the kit's root; OUT=DIR for files)
#
# Builds the kit, checks lab 09's solution, starter and every mutant with the
# checker alone, then once more each beside a second checker (lab 09's own
# solution, over and over, in a copy of the kit; on one GPU beside 3 `make
# check-solutions`); a mutant that needs more GPUs than the node has ("#
# needs: 2 GPUs") is not judged, and says so. Every checker run gets the
# replays' seed (20261123). Records the replays from the runs alone
# (OUT/replays-09.tgz: on two GPUs the solution, starter and mutants, on one
# GPU the solution as `one-gpu`; unpack it over checker/tests/fixtures/replays/);
# draws the deck's timeline (OUT/09-multi-gpu.svg -> slides/timelines/, from
# two GPUs); prints one table of verdicts and the lab's figures from the
# solution's trace. The trace tool writes format 3 (the GPU current at each
# call): after unpacking new replays, the numbers of trace.bats's lab 09
# test are read off the new solution's r.trace again.
# Exit status 0: every verdict right; 1: some wrong; 77: no CUDA device.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
KIT=$PWD
LAB=09-multi-gpu
OUT=${OUT:-$KIT/build/gpu-lab-09}
mkdir -p "$OUT"
export PATH="$KIT/checker/vendor/node_modules/bats/bin:$PATH" NO_COLOR=1
export LAB_SEED=${REPLAY_SEED:-20261123}
command -v bats >/dev/null || { echo "gpu-lab-09.sh: no bats (apt-get install bats, or carry checker/vendor/node_modules)"; exit 2; }
ST=checker/trace/streamtrace
log=$OUT/log.txt
: >"$log"
GPUS=$(. checker/grade/lib.bash && visible_gpus)
[ "${GPUS:-0}" -gt 0 ] || { echo "gpu-lab-09.sh: not run: no GPU (nvidia-smi lists none)"; exit 77; }
NAME="$GPUS x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"

make --no-print-directory -j"$(nproc)" all >>"$log" 2>&1 || { echo "the build failed (see $log)"; tail -5 "$log"; exit 1; }
[ "$GPUS" -lt 2 ] || nvidia-smi topo -m >"$OUT/topo.txt" 2>&1

# variants: solution, starter, mutants
V=$OUT/variants
rm -rf "$V"
mkdir -p "$V/solution" "$V/starter"
cp solutions/$LAB/{Makefile,multi_gpu.cu} "$V/solution/"
cp labs/$LAB/{Makefile,multi_gpu.cu} "$V/starter/"
cp "checker/tests/fixtures/learn/$LAB.predictions" "$V/solution/predictions.txt"
for p in checker/tests/mutants/$LAB/*.patch; do
    m="$V/mut-$(basename "$p" .patch)"
    mkdir -p "$m" && cp solutions/$LAB/{Makefile,multi_gpu.cu} "$m/"
    patch -s -F0 -p1 -d "$m" <"$p" || echo "$p does not apply" | tee -a "$log"
done
(cd "$V" && ls -d *) | xargs -P "$(nproc)" -I{} make --no-print-directory -s -C "$V/{}" KIT_ROOT="$KIT" >>"$log" 2>&1

# needs PATCH: the GPUs a mutant needs ("# needs: N GPUs", else 1)
needs() { local n; n=$(sed -n '1,5s/^# needs: \([0-9][0-9]*\) GPUs$/\1/p' "$1"); echo "${n:-1}"; }
# verdict TAP: "pass" (every check ok; skips "needs N GPUs" allowed), or the failed checks
verdict() {
    local f
    f=$(sed -n 's/^not ok [0-9]* //p' "$1" | sed 's/ # .*//' | paste -sd '|' -)
    if [ -n "$f" ]; then echo "FAIL: $f"
    elif grep '# skip' "$1" | grep -qv '# skip needs [0-9]* GPUs: '; then echo "SKIPPED: $(grep '# skip' "$1" | head -n 1)"
    elif grep -q '^ok' "$1"; then echo "pass$(grep -q '# skip needs' "$1" && echo " ($(grep -c '# skip needs' "$1") not graded)")"
    else echo "no result"; fi
}
# judge NAME VERDICT: right, WRONG, or "not judged" for a mutant that needs more GPUs
judge() {
    local p="checker/tests/mutants/$LAB/${1#mut-}.patch"
    case $1 in
        mut-*) [ "$(needs "$p")" -le "$GPUS" ] || { echo "not-judged"; return; } ;;
    esac
    case $1 in
        solution) [[ $2 == pass* ]] ;;
        starter) [[ $2 == FAIL* ]] ;;
        mut-*) [[ "|${2#FAIL: }|" == *"|$(sed -n '1s/^# expect: //p' "$p")|"* ]] ;;
    esac && echo right || echo WRONG
}
round() {   # round LABEL: every variant once through the checker
    local d n v
    for d in "$V"/*; do
        n=$(basename "$d")
        rm -rf "$OUT/runs-$1/$n"
        KEEP_RUNS="$OUT/runs-$1/$n" checker/run-checks --dir "$d" --tap-out "$OUT/$1-$n.tap" $LAB >"$OUT/$1-$n.log" 2>&1
        v=$(verdict "$OUT/$1-$n.tap")
        printf '%-7s %-40s %-10s %s\n' "$1" "$n" "$(judge "$n" "$v")" "$v" >>"$OUT/table.txt"
    done
}
: >"$OUT/table.txt"
t0=$(date +%s)
round alone
t1=$(date +%s)
# beside: a second checker of lab 09 in a copy of the kit (two GPUs), or 3
# make check-solutions (one GPU), until the round is done
W=$(mktemp -d)
trap 'touch "$W/stop"; kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
tar -C "$KIT" --exclude=./build --exclude=./reports --exclude=./.git -cf - . | tar -C "$W" -xf -
beside() {
    local i=$1 j=0
    while [ ! -e "$W/stop" ]; do
        j=$((j + 1))
        if [ "$GPUS" -ge 2 ]; then
            "$W/checker/run-checks" --tree solutions --tap-out "$W/b$i-$j.tap" $LAB >"$W/b$i-$j.log" 2>&1
        else
            (cd "$W" && make --no-print-directory check-solutions >"$W/b$i-$j.log" 2>&1)
        fi
        echo "beside $i run $j: exit $?" >>"$OUT/beside.txt"
    done
}
: >"$OUT/beside.txt"
nb=1
[ "$GPUS" -ge 2 ] || nb=3
for i in $(seq 1 "$nb"); do beside "$i" & done
sleep 3
round beside
touch "$W/stop"
wait
t2=$(date +%s)

# replays from the runs alone (the checker's one traced run, "main": r.*)
R=$W/rec/replays/$LAB
for d in "$V"/*; do
    n=$(basename "$d") k=$(ls -d "$OUT/runs-alone/$(basename "$d")/$LAB".* 2>/dev/null | head -n 1)
    [ "$GPUS" -ge 2 ] || { [ "$n" = solution ] && n=one-gpu || continue; }
    [ -n "$k" ] && [ -s "$k/main.trace" ] || { echo "$n: not recorded" >>"$log"; continue; }
    mkdir -p "$R/$n"
    for f in trace out err rc; do cp "$k/main.$f" "$R/$n/r.$f" 2>/dev/null || : >"$R/$n/r.$f"; done
    cat "$k/seed" >"$R/$n/seed"
done
tar -C "$W/rec/replays" -czf "$OUT/replays-09.tgz" $LAB
T=$(ls "$OUT"/runs-alone/solution/$LAB.*/main.trace 2>/dev/null | head -n 1)
WIN=$(sed -n 's/^TRACE_WINDOW *:= *//p' solutions/$LAB/Makefile | sed 's/\\#/#/g')
if [ -n "$T" ]; then
    # shellcheck disable=SC2086  # the window's words
    [ "$GPUS" -lt 2 ] || "$ST" svg "$T" -o "$OUT/$LAB.svg" $WIN >>"$log" 2>&1
    # shellcheck disable=SC2086
    "$ST" timeline --width 110 --color never $WIN "$T" >"$OUT/timeline.txt" 2>&1
fi

# figures from the solution's first run alone
fig() { awk -v k="$1" '$1 == k && $2 == "=" { print $3; exit }' "$(dirname "$T")/main.out" 2>/dev/null; }
q() { "$ST" query "$T" "$@" 2>/dev/null; }
echo "lab 09 on $NAME"
echo "verdicts (alone: $((t1 - t0)) s; beside: $((t2 - t1)) s):"
cat "$OUT/table.txt"
echo "checkers beside: $(grep -c ': exit [^0]' "$OUT/beside.txt") of $(grep -c . "$OUT/beside.txt") runs did not exit 0 (3 is 'not graded' on one GPU)"
echo "wrong verdicts: $(grep -c ' WRONG ' "$OUT/table.txt")"
if [ -n "$T" ]; then
    echo "part 1: seq_ms $(fig seq_ms), pipe_ms $(fig pipe_ms), speedup $(fig speedup);" \
         "per GPU: $(for g in $(q devices | cut -d ' ' -f 1); do printf 'GPU %s %s kernels; ' "$g" "$(q count kernel --device "$g" --window 'nvtx:pipelined#last')"; done)"
    echo "part 2: produce $(q durations kernel:produce_kernel) ms, consume $(q durations kernel:consume_kernel) ms," \
         "order $(q order kernel:produce_kernel kernel:consume_kernel)"
    echo "part 3: peer_access $(fig peer_access); staged $(fig staged_0to1_ms)/$(fig staged_1to0_ms) ms," \
         "$(fig staged_0to1_gbps)/$(fig staged_1to0_gbps) GB/s; direct $(fig direct_0to1_ms)/$(fig direct_1to0_ms) ms," \
         "$(fig direct_0to1_gbps)/$(fig direct_1to0_gbps) GB/s; p2p records: $(q count p2p:host) staged, $(q count p2p:direct) direct"
    echo "current GPU: trace format $(head -n 1 "$T" | cut -d ' ' -f 2); kernels launched with another GPU current:" \
         "$(q count kernel --current other) (solution)$(for m in split-issue-without-set-device event-consumer-queued-from-gpu0; do
            t=$(ls "$OUT/runs-alone/mut-$m/$LAB".*/main.trace 2>/dev/null | head -n 1)
            [ -z "$t" ] || printf ', %s (%s)' "$("$ST" query "$t" count kernel --current other 2>/dev/null)" "$m"; done)"
    echo "--- the solution's Your run:"
    sed -n '/^  Your run/,/^$/p' "$OUT/alone-solution.log"
fi
echo "files: $OUT/replays-09.tgz (tar -C checker/tests/fixtures/replays -xzf it), $OUT/$LAB.svg (two GPUs: cp to slides/timelines/), $OUT/timeline.txt, logs"
! grep -q ' WRONG ' "$OUT/table.txt"
