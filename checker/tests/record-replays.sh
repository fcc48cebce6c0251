#!/usr/bin/env bash
# record-replays.sh -- on a GPU node: record one run of every lab variant
# (solution, starter, each mutant) for checker/tests/replay.bats.
#   checker/tests/record-replays.sh OUTDIR [LAB...]   writes OUTDIR/replays.tgz
# Each run the checker traces is recorded: the one with no arguments (r.*)
# and each `run_lab NAME --trace -- ARGS` of the lab's .bats file (r<args>.*),
# all with --seed REPLAY_SEED (default 20261123), kept in each variant's file
# `seed`: replay.bats gives the checker that seed (LAB_SEED), so the digests
# the programs printed are the ones the kit computes.
set -u
REPLAY_SEED=${REPLAY_SEED:-20261123}
out=$(mkdir -p "$1" && cd "$1" && pwd)
shift
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
KIT=$PWD
labs=("$@")
# Not a lab whose checker runs the program under checker/stress (lab 06):
# the stress tool works inside a real CUDA program, which a replay is not.
[ ${#labs[@]} -gt 0 ] || labs=($(cd checker && grep -L 'checker/stress' [0-9][0-9]-*.bats | sed 's/\.bats$//'))
make --no-print-directory tools >/dev/null || exit 1
work=$(mktemp -d)

for id in "${labs[@]}"; do
    src=$(sed -n 's/^SRC *:= *//p' "solutions/$id/Makefile")
    [ -n "$src" ] || src=$(sed -n 's/^PROG *:= *//p' "solutions/$id/Makefile").cu
    mkdir -p "$work/$id/starter" "$work/$id/solution"
    cp "labs/$id/Makefile" "labs/$id/$src" "$work/$id/starter/"
    cp "solutions/$id/Makefile" "solutions/$id/$src" "$work/$id/solution/"
    for p in checker/tests/mutants/"$id"/*.patch; do
        m="$work/$id/mut-$(basename "$p" .patch)"
        mkdir -p "$m" && cp "$work/$id/solution/Makefile" "$work/$id/solution/$src" "$m/"
        patch -s -F0 -p1 -d "$m" <"$p" || echo "$p does not apply" >&2
    done
done
(cd "$work" && ls -d */*) | xargs -P "$(nproc)" -I{} make --no-print-directory -s -C "$work/{}" KIT_ROOT="$KIT" >/dev/null

for v in $(cd "$work" && ls -d */*); do
    id=${v%%/*}
    prog=$(sed -n 's/^PROG *:= *//p' "$work/$v/Makefile")
    r="$out/replays/$v"
    mkdir -p "$r"
    echo "$REPLAY_SEED" >"$r/seed"
    sed -n 's/^ *run_lab [a-z0-9_]* --trace -- \(.*\)$/\1/p' "checker/$id.bats" |
    { echo; cat; } | while read -r args; do
        key=r
        [ -n "$args" ] && key=r$(printf '%s' "$args" | tr -c 'A-Za-z0-9' '-')
        # shellcheck disable=SC2086  # the arguments split as the checker splits them
        (cd "$work/$v" && timeout 120 "$KIT/checker/trace/streamtrace" run -o "$r/$key.trace" \
            -- "./$prog" $args --seed "$REPLAY_SEED" </dev/null >"$r/$key.out" 2>"$r/$key.err"; echo $? >"$r/$key.rc")
    done
    echo "$v: exit $(cat "$r/r.rc")"
done
tar -C "$out" -czf "$out/replays.tgz" replays && rm -rf "$out/replays" "$work"
