#!/usr/bin/env bats
# predict.bats -- "Predict, then measure" as a student with the handout meets
# it: the kit's reference runs are what its recordings give, the handout
# carries them and make check shows them beside the student's figures, no
# figure of theirs is in the text a student reads before the run, and every
# README section a message names is in the README that student has. No GPU.

bats_require_minimum_version 1.5.0
load lib

REF="$KIT_ROOT/checker/reference"

# the labs, by their checkers
labs() { (cd "$KIT_ROOT/checker" && ls [0-9][0-9]-*.bats | sed 's/\.bats$//'); }

# One handout for the file (make handout, as grade.bats makes it).
setup_file() {
    export HANDOUT="$BATS_FILE_TMPDIR/handout/cuda-stream-labs"
    "$KIT_ROOT/checker/grade/handout" "$BATS_FILE_TMPDIR/handout" >"$BATS_FILE_TMPDIR/handout.log" 2>&1 || true
}

need_handout() {
    [ -f "$HANDOUT/README.md" ] || { cat "$BATS_FILE_TMPDIR/handout.log"; return 1; }
}

# visible FILE: a deck or README as a reader sees it: no HTML comments
# (presenter notes, Marp directives)
visible() { python3 -c 'import re, sys; print(re.sub(r"<!--.*?-->", "", open(sys.argv[1]).read(), flags=re.S))' "$1"; }

# student_text LAB: what a student of LAB reads before the run, from the
# handout: the lab's README, its starter, its deck's visible slides, and the
# READMEs of the whole kit (the top one, the checker's)
student_text() {
    local f
    visible "$HANDOUT/README.md"
    visible "$HANDOUT/checker/README.md"
    for f in "$HANDOUT/labs/$1"/*; do
        case $f in *.md|*.cu|*.py|*.h) visible "$f" ;; esac
    done
    visible "$HANDOUT/slides/$1.md"
}

@test "each lab's reference runs are what its recorded runs give" {
    run -0 "$KIT_ROOT/checker/tests/reference-runs" --check
    echo "$output"
    local id n
    for id in $(labs); do
        [ -d "$KIT_ROOT/checker/tests/fixtures/replays/$id/solution" ] || continue
        n=$(grep -c '^fig' "$REF/$id.tsv")
        [ "$n" -ge 2 ] || { echo "$id: $n figures in checker/reference/$id.tsv"; return 1; }
    done
}

@test "Your run sets each figure beside the reference runs and the prediction" {
    printf 'launch_ratio\t40\tx\tthe kernel / the launch\ncopy_share\t-\t%%\tthe copies\n' >"$BATS_TEST_TMPDIR/figs"
    printf 'launch_ratio = 20\n' >"$BATS_TEST_TMPDIR/preds"
    printf '# a comment\nrun\tA\tGPU one\tCUDA 13.0, driver 580\t2026-11-23\t./sync_copy\nfig\tA\tlaunch_ratio\t56.6\tx\nfig\tA\tcopy_share\t91.6\t%%\nrun\tB\tGPU two\tCUDA 13.0, driver 580\t2026-11-25\t./sync_copy\nfig\tB\tlaunch_ratio\t60.1\tx\n' >"$BATS_TEST_TMPDIR/ref"
    run -0 awk -v preds="$BATS_TEST_TMPDIR/preds" -v ref="$BATS_TEST_TMPDIR/ref" \
        -f "$KIT_ROOT/checker/lib/your-run.awk" "$BATS_TEST_TMPDIR/figs"
    echo "$output"
    [[ ${lines[0]} == *"beside the kit's reference runs" ]]
    [[ ${lines[1]} == "    reference A: GPU one; CUDA 13.0, driver 580; \`./sync_copy\`, recorded 2026-11-23" ]]
    [[ ${lines[2]} == "    reference B: GPU two; "* ]]
    [[ ${lines[3]} =~ ^\ +yours\ +ref\ A\ +ref\ B$ ]]
    [[ ${lines[4]} =~ ^\ +launch_ratio\ +40\ x\ +56\.6\ x\ +60\.1\ x\ +you\ said\ 20\ x:\ 2\ times\ too\ low$ ]]
    [[ ${lines[5]} =~ ^\ +copy_share\ +-\ +91\.6\ %\ +-\ +the\ copies$ ]]
    # nothing measured in this run: no reference figures either
    printf '# not measured: no CUDA device\n' >"$BATS_TEST_TMPDIR/none"
    run -0 awk -v preds="$BATS_TEST_TMPDIR/preds" -v ref="$BATS_TEST_TMPDIR/ref" \
        -f "$KIT_ROOT/checker/lib/your-run.awk" "$BATS_TEST_TMPDIR/none"
    [[ $output != *56.6* ]]
}

# checks_in_handout H LAB [DIR]: the handout H's make check of its lab
# folder LAB (or of DIR), the program a recorded run of the lab's solution
checks_in_handout() {
    local h=$1 id=$2 d=${3:-$1/labs/$2} prog
    prog=$(sed -n 's/^PROG *:= *//p' "$KIT_ROOT/labs/$id/Makefile")
    mkdir -p "$d"
    printf '%s:\n\t@true\n' "$prog" >"$d/Makefile"
    rm -f "$d/$prog"
    ln -s "$KIT_ROOT/checker/tests/fixtures/progs/replay-prog" "$d/$prog"
    # (the kit's bats where make deps installed it; else, as run-checks
    # finds it, the machine's: Debian's bats where there is no npm)
    local b="$KIT_ROOT/checker/vendor/node_modules/bats/bin/bats"
    [ -x "$b" ] || b=$(PATH=/usr/local/bin:/usr/bin:/bin command -v bats)
    REPLAY="$KIT_ROOT/checker/tests/fixtures/replays/$id/solution" \
        LAB_SEED="$(cat "$KIT_ROOT/checker/tests/fixtures/replays/$id/solution/seed")" \
        BATS="$b" \
        PATH=$(tr : '\n' <<<"$PATH" | grep -v 'bats-core' | paste -sd: -) \
        without_bats_env "$h/checker/run-checks" --dir "$d" "$id"
}

@test "the handout carries the reference runs, compressed, and its make check shows them after Your run" {
    need_handout
    local id d
    for id in $(labs); do
        [ ! -f "$REF/$id.tsv" ] || cmp "$REF/$id.tsv" <(gzip -dc "$HANDOUT/checker/reference/$id.tsv.gz")
        [ ! -e "$HANDOUT/checker/reference/$id.tsv" ]
    done
    # the handout's own run-checks, on lab 01's recorded solution
    make -s -C "$HANDOUT/checker/trace" >/dev/null
    d="$BATS_TEST_TMPDIR/01"
    mkdir -p "$d"
    echo 'h2d_gbps = 20 GB/s' >"$d/predictions.txt"
    run -0 checks_in_handout "$HANDOUT" 01-sync-copy "$d"
    echo "$output"
    [[ $output == *"Your run (never graded): what the GPU did in the run checked above, beside the kit's reference runs"* ]]
    [[ $output == *"reference A: NVIDIA H100 80GB HBM3"* ]]
    local want
    want=$(awk -F'\t' '$1 == "fig" && $3 == "h2d_gbps" { print $4 }' "$REF/01-sync-copy.tsv")
    [[ $output =~ h2d_gbps\ +[0-9.]+\ GB/s\ +$want\ GB/s\ +you\ said\ 20\ GB/s ]]
}

@test "no figure of the reference runs is in what a student reads before the run" {
    need_handout
    local id bad=""
    for id in $(labs); do
        [ -f "$REF/$id.tsv" ] || continue
        # each figure as make check prints it (3 significant digits): a
        # number with a point anywhere, a whole number with its unit after
        # it (a bare 2 or 100 is in every text)
        bad+=$(student_text "$id" | python3 -c '
import re, sys
text = sys.stdin.read()
units = {"x": r"(x|×|times)", "%": r"%", "ms": r"ms", "us": r"(us|µs)", "GB/s": r"GB/s"}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] != "fig": continue
    name, value, unit = f[2], f[3], f[4]
    if unit.startswith("of "): continue        # a count: 2 of 3 is the question itself
    if float(value) in (0, 100): continue       # the ends of a share: "100: at the bound"
    num = re.escape(value)
    if "." in value:
        pat = r"(?<![\d.])" + num + r"(?![\d])(?!\.\d)"
    else:
        pat = r"(?<![\d.])" + num + r"\s*" + units.get(unit, re.escape(unit)) + r"(?![\w/])"
    for m in re.finditer(pat, text):
        ctx = text[max(0, m.start() - 50):m.end() + 30].replace("\n", " ")
        print("\n%s: %s = %s %s in the student text: ...%s..." % (sys.argv[2], name, value, unit, ctx))
' "$REF/$id.tsv" "$id")
    done
    [ -z "$bad" ] || { echo "$bad"; return 1; }
}

@test "each Predict, then measure section comes before any measured figure, and says what make check shows" {
    need_handout
    local id sec bad=""
    for id in $(labs); do
        sec=$(sed -n '/^## Predict, then measure/,/^## [^P]/p' "$HANDOUT/labs/$id/README.md")
        [ -n "$sec" ] || { bad+=$'\n'"$id: no section Predict, then measure"; continue; }
        ! grep -qi 'measured on\|give them away\|numbers further down' <<<"$sec" ||
            bad+=$'\n'"$id: $(grep -i 'measured on\|give them away\|numbers further down' <<<"$sec" | head -n 1)"
        grep -q "reference runs" <<<"$sec" || bad+=$'\n'"$id: the section does not say make check shows the reference runs"
    done
    [ -z "$bad" ] || { echo "$bad"; return 1; }
}

@test "every README section a message or hint names is in the README the student has" {
    need_handout
    local f sec where found=0 bad=""
    # messages a student meets: run-checks, the checkers and their helpers,
    # the starters; '(the top folder's README.md, "X")' names the top README,
    # any other README section a lab's
    while IFS=$'\t' read -r f where sec; do
        found=$((found + 1))
        local readmes=()
        case $where in
            top) readmes=("$HANDOUT/README.md") ;;
            lab) case ${f#"$HANDOUT"/} in
                     checker/[0-9][0-9]-*.bats) readmes=("$HANDOUT/labs/$(basename "$f" .bats)/README.md") ;;
                     labs/*) readmes=("$(dirname "$f")/README.md") ;;
                     *) readmes=("$HANDOUT"/labs/*/README.md) ;;
                 esac ;;
        esac
        local r
        for r in "${readmes[@]}"; do
            grep -qxF "## $sec" "$r" || grep -qxF "### $sec" "$r" ||
                bad+=$'\n'"${f#"$HANDOUT"/} names \"$sec\", which ${r#"$HANDOUT"/} lacks"
        done
    done < <(
        for f in "$HANDOUT"/checker/run-checks "$HANDOUT"/checker/lib/* "$HANDOUT"/checker/[0-9][0-9]-*.bats \
                 "$HANDOUT"/labs/*/* "$HANDOUT"/common/*; do
            [ -f "$f" ] || continue
            grep -oE "(top folder.s README(\.md)?|README(\.md|'s)?),? \\\\?\"[^\"\\\\]+\\\\?\"" "$f" |
                sed -E 's/\\"/"/g' | while IFS= read -r m; do
                    sec=${m#*\"} sec=${sec%\"}
                    case $m in *"top folder"*) printf '%s\ttop\t%s\n' "$f" "$sec" ;;
                                *) printf '%s\tlab\t%s\n' "$f" "$sec" ;; esac
                done
        done)
    [ "$found" -ge 3 ] || { echo "only $found sections named: is the pattern still right?"; return 1; }
    [ -z "$bad" ] || { echo "$bad"; return 1; }
    echo "$found sections named, each there"
}

@test "each figure of an earlier lab a Predict names is a question of that lab, and make check shows the student's own above the checks" {
    need_handout
    local id bad="" lab fig n=0
    # "your lab NN `name`": lab NN asks `name`, and NN comes before this lab
    for id in $(labs); do
        while read -r lab fig; do
            n=$((n + 1))
            [[ $lab < ${id%%-*} ]] || bad+=$'\n'"$id names lab $lab's $fig, not an earlier lab"
            sed -n '/^## Predict, then measure/,/^## [^P]/p' "$KIT_ROOT"/labs/"$lab"-*/README.md |
                grep -q "^| \`$fig\` |" || bad+=$'\n'"$id names lab $lab's $fig, which lab $lab does not ask"
        done < <(sed -n '/^## Predict, then measure/,/^## [^P]/p' "$KIT_ROOT/labs/$id/README.md" |
                 grep -o 'your lab [0-9][0-9] `[a-z0-9_]*`' | tr -d '`' | awk '{ print $3, $4 }' | sort -u)
    done
    [ "$n" -ge 10 ] || bad+=$'\n'"only $n earlier figures named"
    [ -z "$bad" ] || { echo "$bad"; return 1; }
    # a student's handout: lab 01 checked, then lab 10, which uses lab 01's
    # launch_us and lab 04's wait_gap_us (lab 04 not run yet)
    local h="$BATS_TEST_TMPDIR/h"
    cp -a "$HANDOUT" "$h"
    make -s -C "$h/checker/trace" >/dev/null
    run -0 checks_in_handout "$h" 01-sync-copy
    echo "$output"
    grep -q '^# Your run of 01-sync-copy, 20[0-9-]* [0-9:]* (make check: [0-9]* passed, 0 failed' "$h/labs/01-sync-copy/your-run.txt"
    local want
    want=$(awk -F'\t' '$1 == "launch_us" { print $2 }' "$h/labs/01-sync-copy/your-run.txt")
    [ -n "$want" ]
    run -0 checks_in_handout "$h" 10-graphs
    echo "$output"
    [[ ${lines[1]} == "  From your own runs, for this lab's Predict (its README, \"Predict, then measure\"):" ]]
    [[ ${lines[2]} =~ ^\ +lab\ 01\ launch_us\ +[0-9.]+\ us\ +for\ stream_us,\ speedup\;\ your\ run\ of\ 20[0-9-]+$ ]]
    [[ ${lines[3]} =~ ^\ +lab\ 04\ wait_gap_us\ +-\ +for\ graph_gpu_us,\ speedup:\ not\ measured\ yet:\ run\ make\ check\ in\ labs/04-events\ first$ ]]
    # and again under Your run
    [[ $output == *"the figures of your earlier runs it used:"*"lab 01 launch_us"* ]]
    [ -f "$h/labs/10-graphs/your-run.txt" ]
    # a copy checked outside the kit's labs/ (the grader's) keeps and shows none
    mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
    cp -a "$h/labs/10-graphs" "$BATS_TEST_TMPDIR/elsewhere/"
    rm -f "$BATS_TEST_TMPDIR/elsewhere/10-graphs/your-run.txt"
    run -0 checks_in_handout "$h" 10-graphs "$BATS_TEST_TMPDIR/elsewhere/10-graphs"
    [[ $output == *"21 passed, 0 failed"* ]]
    [[ $output != *"From your own runs"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/elsewhere/10-graphs/your-run.txt" ]
}

@test "a question whose figure the program prints asks it under the printed name, unit and statistic" {
    local id n u v p bad="" m=0 f
    for id in $(labs); do
        f="$KIT_ROOT/checker/tests/fixtures/replays/$id/solution/r.out"
        [ -f "$f" ] && [ -f "$REF/$id.tsv" ] || continue
        while read -r n u; do
            p=$(awk -v k="$n" '$1 == k && $2 == "=" { print $3; exit }' "$f")
            [ -n "$p" ] || continue
            m=$((m + 1))
            v=$(awk -F'\t' -v k="$n" '$1 == "fig" && $2 == "A" && $3 == k { print $4 }' "$REF/$id.tsv")
            # Your run reads the trace, the program its own clocks: the same
            # figure of the same run, within 10%
            awk -v a="$v" -v b="$p" 'BEGIN { exit !(a != "" && b + 0 != 0 && a / b > 0.9 && a / b < 1.1) }' ||
                bad+=$'\n'"$id: $n: the program printed $p, Your run of the same run shows ${v:-nothing} $u"
        done < <(sed -n '/^## Predict, then measure/,/^## [^P]/p' "$KIT_ROOT/labs/$id/README.md" |
                 sed -n 's/^| `\([a-z0-9_]*\)` |.*| \([^|]*\) |$/\1 \2/p')
    done
    [ "$m" -ge 6 ] || bad+=$'\n'"only $m printed figures asked"
    [ -z "$bad" ] || { echo "$bad"; return 1; }
}
