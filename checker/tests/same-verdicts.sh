#!/usr/bin/env bash
# same-verdicts.sh [--text] OLD NEW [LAB...] -- do two trees of the kit give the same
# verdicts on the recorded runs? For every replay (fixtures/replays/LAB/
# VARIANT, as replay.bats's replay_check runs it) and every run make mutate
# kept (fixtures/mutate/LAB/VARIANT, as mutants.bats's fixture_replay runs
# it), each tree's checker of LAB judges it; the two TAP streams are compared
# check by check ("ok"/"not ok" and the check's name). No GPU needed. Each
# tree must have its tools built (make tools) and bats at hand. For a change
# that must not move a verdict (a checker reading the trace another way):
#   git worktree add /tmp/old HEAD~3; make -C /tmp/old tools
#   checker/tests/same-verdicts.sh /tmp/old . 05 09
# --text compares all a student reads of each run instead (run-checks'
# output: verdicts, hints, Your run), the trees' folders made alike: for a
# change that must move no word, as a checker's awk made bash.
# Prints a line per lab (runs compared, runs that differ) and each
# difference; exit 1 when any run differs. Minutes a lab on two cores.
set -u
text=0
[ "${1:-}" = --text ] && { text=1; shift; }
[ $# -ge 2 ] || { echo "usage: same-verdicts.sh [--text] OLD NEW [LAB...]" >&2; exit 2; }
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# verdicts TREE OUT LAB...: OUT/LAB/{replay,fix}-VARIANT.res, sorted "ok|not ok<TAB>check"
verdicts() (
    root=$1 out=$2
    shift 2
    export BATS_TEST_DIRNAME="$root/checker/tests" BATS_TEST_TMPDIR="$out.tmp"
    mkdir -p "$BATS_TEST_TMPDIR"
    . "$root/checker/tests/lib.bash"
    MUTATE="$KIT_ROOT/checker/tests/mutate/mutate.py"
    FIX="$KIT_ROOT/checker/tests/fixtures/mutate"
    eval "$(sed -n '/^fixture_replay() {/,/^}/p' "$root/checker/tests/mutants.bats")"
    # (--text: what run-checks printed, the tree's and the run's folders
    # made alike, and no second)
    res() {
        if [ "$text" = 1 ]; then
            sed -e "s|$root|TREE|g; s|$BATS_TEST_TMPDIR|TMP|g" -e 's/[0-9.]* s\b/N s/g' "${1%.tap}.log"
        else
            sed -n 's/^\(not ok\|ok\) [0-9]* /\1\t/p' "$1" | sort
        fi
    }
    for lab in "$@"; do
        mkdir -p "$out/$lab"
        for v in $(ls "$root/checker/tests/fixtures/replays/$lab" 2>/dev/null); do
            REPLAY_OUT=$BATS_TEST_TMPDIR/r replay_check "$lab/$v"
            res "$BATS_TEST_TMPDIR/r/$lab/$v.tap" >"$out/$lab/replay-$v.res"
        done
        for v in $(ls "$FIX/$lab" 2>/dev/null); do
            REPLAY_OUT=$BATS_TEST_TMPDIR/f fixture_replay "$lab" "$v" >/dev/null
            res "$BATS_TEST_TMPDIR/f/$lab/$v.tap" >"$out/$lab/fix-$v.res"
        done
    done
)

labs=()
# (a lab by its number or name: one with replays, or runs make mutate kept only, as lab 06)
for a in "$@"; do labs+=("$(cd "$new/checker/tests/fixtures" 2>/dev/null; ls -d replays/"$a"* mutate/"$a"* 2>/dev/null | head -n 1 | sed 's|^[a-z]*/||')"); done
[ ${#labs[@]} -gt 0 ] && [ -n "${labs[0]}" ] ||
    mapfile -t labs < <(ls "$new/checker/tests/fixtures/replays" "$new/checker/tests/fixtures/mutate" | grep '^[0-9]' | sort -u)
verdicts "$old" "$work/old" "${labs[@]}"
verdicts "$new" "$work/new" "${labs[@]}"
rc=0
for lab in "${labs[@]}"; do
    n=0 d=0
    for f in "$work/new/$lab"/*.res; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        g="$work/old/$lab/${f##*/}"
        if ! cmp -s "$g" "$f"; then
            d=$((d + 1)) rc=1
            echo "  $lab/${f##*/}: old < > new"
            diff "$g" "$f" | sed -n 's/^\([<>]\)/    \1/p'
        fi
    done
    printf '%-20s %4d runs, %d differ\n' "$lab" "$n" "$d"
done
exit $rc
