#!/usr/bin/env bash
# gpu-lab-08.sh -- on a GPU node with PyTorch: prove lab 08 in one go.
#
#   checker/tests/gpu-lab-08.sh            (from the kit's root; OUT=DIR for files)
#
# Builds the kit, checks lab 08's solution, starter and every mutant with the
# checker alone, then once more each beside 3 `make check-solutions` (every
# lab's solution, each checker over and over until the round is done;
# ROUNDS="alone" or "shared" runs one round only); records the replays
# (RECORD=0: not) (OUT/replays-08.tgz: unpack it over
# checker/tests/fixtures/replays/); draws the
# deck's timeline (OUT/08-pytorch.svg -> slides/timelines/); prints one table:
# verdicts, and the figures the lab's closing note needs (pinned H2D GB/s of
# lab 08 and of lab 03 at 256 MiB, from their traces).
set -u
ROUNDS=${ROUNDS:-alone shared} RECORD=${RECORD:-1}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
KIT=$PWD
OUT=${OUT:-$KIT/build/gpu-lab-08}
mkdir -p "$OUT"
export PATH="$KIT/checker/vendor/node_modules/.bin:$PATH"
ST=checker/trace/streamtrace
log=$OUT/log.txt
: >"$log"

make --no-print-directory -j"$(nproc)" all >>"$log" 2>&1 || { echo "the build failed (see $log)"; tail -5 "$log"; exit 1; }
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' | tee -a "$log"

# variants: solution, starter, mutants
V=$OUT/variants
rm -rf "$V"
mkdir -p "$V/solution" "$V/starter"
cp solutions/08-pytorch/{Makefile,streams.py} "$V/solution/"
cp labs/08-pytorch/{Makefile,streams.py} "$V/starter/"
for p in checker/tests/mutants/08-pytorch/*.patch; do
    m="$V/mut-$(basename "$p" .patch)"
    mkdir -p "$m" && cp solutions/08-pytorch/{Makefile,streams.py} "$m/"
    patch -s -F0 -p1 -d "$m" <"$p" || echo "$p does not apply" | tee -a "$log"
done
for d in "$V"/*; do make --no-print-directory -s -C "$d" KIT_ROOT="$KIT" >>"$log" 2>&1; done

# verdict DIR TAP: "pass" (every check ok), or the names of the failed checks
verdict() {
    local f
    f=$(sed -n 's/^not ok [0-9]* //p' "$1" | sed 's/ # .*//' | paste -sd '|' -)
    [ -n "$f" ] && echo "FAIL: $f" || { grep -q '^ok' "$1" && echo pass || echo "no result"; }
}
# judge NAME VERDICT: right or WRONG for that variant
judge() {
    case $1 in
        solution) [ "$2" = pass ] ;;
        starter) [[ $2 == FAIL* ]] ;;
        mut-*) [[ "|${2#FAIL: }|" == *"|$(sed -n '1s/^# expect: //p' "checker/tests/mutants/08-pytorch/${1#mut-}.patch")|"* ]] ;;
    esac && echo right || echo WRONG
}

round() {   # round LABEL: every variant once through the checker
    local d n
    for d in "$V"/*; do
        n=$(basename "$d")
        KEEP_RUNS="$OUT/runs-$1/$n" checker/run-checks --dir "$d" --tap-out "$OUT/$1-$n.tap" 08 >"$OUT/$1-$n.log" 2>&1
        v=$(verdict "$OUT/$1-$n.tap")
        printf '%-7s %-28s %-6s %s\n' "$1" "$n" "$(judge "$n" "$v")" "$v" >>"$OUT/table.txt"
    done
}
: >"$OUT/table.txt"
t0=$(date +%s)
[[ " $ROUNDS " == *" alone "* ]] && round alone
t1=$(date +%s)
# beside: 3 make check-solutions, each over and over until the round is done
stop=$(mktemp -u)
beside() {
    local j=0
    while [ ! -e "$stop" ]; do
        j=$((j + 1))
        make --no-print-directory check-solutions >"$OUT/beside-$1.log" 2>&1
        echo "beside $1 run $j: exit $?" >>"$OUT/beside.txt"
    done
}
if [[ " $ROUNDS " == *" shared "* ]]; then
    pids=()
    for i in 1 2 3; do beside "$i" & pids+=($!); done
    sleep 3
    round shared
    touch "$stop"
    wait "${pids[@]}"
    rm -f "$stop"
fi
t2=$(date +%s)

# replays, the SVG
if [ "$RECORD" = 1 ]; then
    checker/tests/record-replays.sh "$OUT/rec" 08-pytorch >>"$log" 2>&1
    tar -C "$OUT/rec" -xzf "$OUT/rec/replays.tgz" && tar -C "$OUT/rec/replays" -czf "$OUT/replays-08.tgz" 08-pytorch
    rm -rf "$OUT/rec"
fi
(cd solutions/08-pytorch && "$KIT/$ST" run -o "$OUT/sol.trace" -- ./streams >"$OUT/sol.out" 2>&1)
"$ST" svg --window nvtx:side_stream+gpu "$OUT/sol.trace" -o "$OUT/08-pytorch.svg" >>"$log" 2>&1
"$ST" timeline --width 100 --window nvtx:side_stream+gpu "$OUT/sol.trace" >"$OUT/sol-timeline.txt" 2>&1

# figures: pinned H2D GB/s from the traces, lab 08 (256 MiB in pinned_copy)
# and lab 03 (its largest pinned H2D, 256 MiB by default)
gbps() { awk -F'\t' '{ b = $7; d = $3 } END { if (d > 0) printf "%.1f", b / d / 1e6 }'; }
g08=$("$ST" query "$OUT/sol.trace" list h2d --mem PINNED --window nvtx:pinned_copy+gpu | gbps)
(cd solutions/03-pinned-memory && make -s >/dev/null 2>&1 && "$KIT/$ST" run -o "$OUT/lab03.trace" -- ./pinned_memory >"$OUT/lab03.out" 2>&1)
g03=$("$ST" query "$OUT/lab03.trace" list h2d --mem PINNED --window nvtx:pinned 2>/dev/null |
    awk -F'\t' '$7 == 268435456' | sort -t $'\t' -k3,3g | head -n 1 | gbps)
fig() { awk -v k="$1" '$1 == k && $2 == "=" { print $3; exit }' "$OUT/sol.out"; }

echo "lab 08 on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(python3 -c 'import torch; print("torch", torch.__version__)' 2>/dev/null)"
echo "verdicts (alone: $((t1 - t0)) s; beside 3 make check-solutions: $((t2 - t1)) s):"
cat "$OUT/table.txt"
cat "$OUT/beside.txt" 2>/dev/null
echo "wrong verdicts: $(grep -c ' WRONG ' "$OUT/table.txt")"
echo "solution: pageable_call_ms $(fig pageable_call_ms), pinned_call_ms $(fig pinned_call_ms)," \
     "sync_before/after/neither/both $(fig sync_before_ms)/$(fig sync_after_ms)/$(fig sync_neither_ms)/$(fig sync_both_ms) ms, event_ms $(fig event_ms)"
echo "pinned H2D 256 MiB from the traces: lab 08 ${g08:-?} GB/s, lab 03 ${g03:-?} GB/s (ratio $(awk -v a="$g08" -v b="$g03" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "?" }'))"
echo "files: $OUT/replays-08.tgz (tar -C checker/tests/fixtures/replays -xzf it), $OUT/08-pytorch.svg (cp to slides/timelines/), logs"
