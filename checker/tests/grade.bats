#!/usr/bin/env bats
# grade.bats -- handing the kit out and grading a class, without a GPU:
# make handout holds no answer, and a small class (made by
# checker/grade/make-test-class.sh) is graded with every verdict the one it
# must get without a GPU -- "not graded" for whatever needs a GPU, never a
# pass. Builds for one GPU architecture, labs 01 and 02 only, so it is quick;
# the quick run (make test without a GPU) grades lab 02 of two submissions of
# the seven, make test-all both labs of all of them.
# The GPU half: checker/grade/gpu-class.sh on a GPU node.

bats_require_minimum_version 1.5.0
load ../lib/kit

GRADE="$KIT_ROOT/checker/grade"
G="$KIT_BUILD/grade"
# No GPU here, even on a GPU node: these are the verdicts without one.
export CUDA_VISIBLE_DEVICES=

setup_file() {
    export CUDA_ARCH=${CUDA_ARCH:-75} RUN_TIMEOUT=5
    rm -rf "$G"
    mkdir -p "$G/class"
    local rc=0
    "$GRADE/handout" "$G/handout" >"$G/handout.log" 2>&1 || rc=$?
    echo "$rc" >"$G/handout.rc"
    # the quick run (make test without a GPU) grades lab 02 of two of them:
    # a git bundle of the solutions and a lab that does not compile
    local s picks="solution-git.bundle no-compile" labs=02
    if kit_full; then
        labs=01,02
        picks+=" solution-flat.tar.gz ships-checker nothing"
        # the sandbox (another user, a process limit) needs root: without it,
        # the submissions that attack the grader would attack this machine
        [ "$(id -u)" = 0 ] && picks+=" escape fork-bomb"
    fi
    "$GRADE/make-test-class.sh" "$G/made" "$labs" >"$G/made.log" 2>&1 || return 0
    for s in $picks; do
        cp -a "$G/made/submissions/$s" "$G/class/"
    done
    rm -f /tmp/cuda-stream-labs-escape.txt
    rc=0
    without_bats_env "$GRADE/grade" -j 3 --labs "$labs" -o "$G/out" "$G/class" >"$G/grade.log" 2>&1 || rc=$?
    echo "$rc" >"$G/grade.rc"
}

@test "make handout leaves out the solutions, the mutants and the kit's self-tests, and carries Predict, then measure" {
    cat "$G/handout.log"
    [ "$(cat "$G/handout.rc")" = 0 ]
    local h="$G/handout/cuda-stream-labs" bad=""
    [ -f "$G/handout/cuda-stream-labs.tar.gz" ] || bad+=" (no tarball)"
    for p in solutions checker/mutants checker/tests checker/grade checker/lib/kit.bash .ci; do
        [ -e "$h/$p" ] && bad+=" $p"
    done
    for p in Makefile README.md common/lab.mk checker/run-checks checker/lib/checks.bash \
             slides/Makefile; do
        [ -e "$h/$p" ] || bad+=" (missing $p)"
    done
    # Predict, then measure: the questions, Your run and the drawings travel
    [ -f "$h/checker/lib/your-run.awk" ] || bad+=" (missing checker/lib/your-run.awk)"
    for id in $(lab_ids); do
        [ -f "$h/labs/$id/$(src_of "$id")" ] && [ -f "$h/checker/$id.bats" ] &&
            [ -f "$h/slides/$id.md" ] || bad+=" (lab $id incomplete)"
        grep -q '^## Predict, then measure$' "$h/labs/$id/README.md" &&
            grep -q '^# Predict, then measure$' "$h/slides/$id.md" &&
            grep -q '^your_run() {$' "$h/checker/$id.bats" &&
            grep -q 'draw_on_fail ' "$h/checker/$id.bats" || bad+=" (lab $id: no Predict, then measure)"
        cmp -s "$h/labs/$id/$(src_of "$id")" "$KIT_ROOT/labs/$id/$(src_of "$id")" ||
            bad+=" (labs/$id is not the starter)"
    done
    echo "wrong:${bad:- nothing}"
    [ -z "$bad" ]
}

@test "no line a solution adds to its starter is in any file of the handout" {
    local h="$G/handout/cuda-stream-labs" answers found
    answers=$("$GRADE/answer-lines" "$KIT_ROOT" | cut -f 2)
    [ "$(wc -l <<<"$answers")" -ge 30 ] || { echo "only $(wc -l <<<"$answers") answer lines?"; return 1; }
    # and in the packed tarball too: what a student actually gets
    mkdir -p "$G/unpacked"
    tar -xzf "$G/handout/cuda-stream-labs.tar.gz" -C "$G/unpacked"
    found=$(grep -rnF -f <(printf '%s\n' "$answers") "$h" "$G/unpacked" || true)
    echo "${found:-no answer line anywhere}"
    [ -z "$found" ]
}

@test "the handout builds and checks a lab, and has the student's make targets" {
    skip_full "the handout's tools and a lab built, and the lab checked"
    local h="$G/handout/cuda-stream-labs"
    run make --no-print-directory -C "$h" labs/01-sync-copy tools
    echo "$output" | tail -n 5
    [ "$status" = 0 ]
    # a student installs bats with npm (make deps); on a node without npm
    # (a GPU node without network), the kit's own copy stands in for that
    if ! command -v npm >/dev/null && [ -d "$KIT_ROOT/checker/vendor/node_modules" ]; then
        cp -a "$KIT_ROOT/checker/vendor/node_modules" "$h/checker/vendor/"
    fi
    # as a student runs it: no bats of ours on PATH (bats puts its libexec there)
    PATH=$(tr : '\n' <<<"$PATH" | grep -v 'bats-core' | paste -sd: -) \
        run without_bats_env make --no-print-directory -C "$h" check LAB=01
    echo "$output" | tail -n 4
    [[ $output == *"01-sync-copy  (labs/01-sync-copy)"* ]]
    [[ $output != *FAIL* ]]
    run make --no-print-directory -C "$h" -n slides trace LAB=01
    [ "$status" = 0 ]
    run make --no-print-directory -C "$h" help
    [[ $output == *"make check"* ]] && [[ $output != *solutions* ]]
    grep -q '^## Handing in' "$h/README.md"
    grep -q '| \[01-sync-copy\]' "$h/README.md"
}

@test "a student's file is found by its name, wherever it is in the submission" {
    . "$GRADE/lib.bash"
    local d="$BATS_TEST_TMPDIR/sub"
    mkdir -p "$d/old" "$d/a/labs/01-sync-copy" "$d/01-sync-copy" "$d/.git"
    touch "$d/old/sync_copy.cu" "$d/a/labs/01-sync-copy/sync_copy.cu" "$d/01-sync-copy/sync_copy.cu" \
          "$d/.git/sync_copy.cu"
    ln -s /etc/passwd "$d/async_copy.cu"
    run best_file "$d" 01-sync-copy sync_copy
    [ "$output" = "$d/a/labs/01-sync-copy/sync_copy.cu" ]
    rm "$d/a/labs/01-sync-copy/sync_copy.cu"
    run best_file "$d" 01-sync-copy sync_copy
    [ "$output" = "$d/01-sync-copy/sync_copy.cu" ]
    run best_file "$d" 02-async-copy async_copy      # a link is not a file
    [ -z "$output" ]
}

@test "submissions are named after their folder, tarball or bundle" {
    . "$GRADE/lib.bash"
    local d="$BATS_TEST_TMPDIR/class"
    mkdir -p "$d/alice" "$d/bo b"
    touch "$d/alice.tar.gz" "$d/carol.bundle" "$d/notes.txt"
    run list_submissions "$d"
    echo "$output"
    grep -q "^alice	dir	" <<<"$output"
    grep -q "^alice-2	tar	" <<<"$output"
    grep -q "^bo_b	dir	" <<<"$output"
    grep -q "^carol	bundle	" <<<"$output"
    grep -q "ignored: .*notes.txt" <<<"$output"
}

@test "a class is graded: every verdict is the one it must get without a GPU" {
    cat "$G/made.log" "$G/grade.log"
    # 3: some labs are not graded (there is no GPU)
    [ "$(cat "$G/grade.rc")" = 3 ]
    run "$GRADE/check-verdicts" --no-gpu --only-graded "$G/out" "$G/made/expected.tsv"
    echo "$output"
    [ "$status" = 0 ]
    # every picked submission has its rows
    [ "$(cut -d, -f1 "$G/out/gradebook.csv" | sort -u | grep -vc student)" = "$(ls "$G/class" | wc -l)" ]
}

@test "without a GPU no lab passes, and every report says not graded" {
    local f st
    ! grep -q ',pass,' <(cut -d, -f1-4 "$G/out/gradebook.csv")
    grep -q '^solution-git,02-async-copy,not graded,not graded,' "$G/out/gradebook.csv"
    grep -q '^solution-git,not graded,not graded,' "$G/out/students.csv"
    grep -q 'Not graded' "$G/out/report.md"
    grep -q 'not graded' "$G/out/junit/solution-git.xml"
    python3 - "$G/out" <<'EOF'
import json, sys
out = sys.argv[1]
gs = json.load(open(out + "/gradescope/solution-git/results.json"))
assert gs["extra_data"]["graded"] is False and gs["visibility"] == "hidden", gs
assert gs["output"].startswith("CUDA Stream Labs: solution-git\nNOT GRADED"), gs["output"]
assert gs["score"] == 0
gc = json.load(open(out + "/classroom/solution-git.json"))
assert gc["version"] == 1 and gc["status"] == "error", gc["status"]
assert any(t["status"] == "error" and t["message"].startswith("not graded") for t in gc["tests"])
EOF
}

@test "the gradebook says why a lab failed" {
    run grep '^no-compile,02-async-copy,fail,0,' "$G/out/gradebook.csv"
    echo "$output"
    [[ $output == *"the program builds without warnings: expected: make builds ./async_copy | seen: the build failed"* ]]
}

@test "grading ignores the checker, common/ and Makefile a submission carries" {
    skip_full "a submission that ships its own checker, graded"
    cat "$G/out/results/ships-checker/submission.txt"
    grep -q "^ignored: kit files that differ from the kit's own .*checker/lib/checks.bash.*common/lab.h" \
        "$G/out/results/ships-checker/submission.txt"
    # the handout as a student has it is no change
    . "$GRADE/lib.bash"
    [ -z "$(changed_kit_files "$G/handout" "$G/out/kit")" ]
    grep -q '^ships-checker,02-async-copy,not graded,' "$G/out/gradebook.csv"
}

@test "a program cannot write into the kit, and what it leaves in /tmp is removed and noted" {
    skip_full "a submission that writes outside its folder, graded"
    [ "$(id -u)" = 0 ] || skip "needs root: grading runs the submissions as another user only as root"
    grep -q '^escape,02-async-copy,not graded,' "$G/out/gradebook.csv"
    [ ! -e /tmp/cuda-stream-labs-escape.txt ]
    grep -q 'escape, 01-sync-copy: left files outside its folder (removed): /tmp/cuda-stream-labs-escape.txt' \
        "$G/out/report.md"
}

@test "a fork bomb fails its lab, within the time limits, and grading goes on" {
    skip_full "a fork bomb, graded"
    [ "$(id -u)" = 0 ] || skip "needs root: the process limit is per sandbox user"
    grep -q '^fork-bomb,01-sync-copy,fail,' "$G/out/gradebook.csv"
    grep -q 'did not finish in 5 s' "$G/out/results/fork-bomb/01-sync-copy.log"
    # nothing of it outlives grading: no process of any sandbox user it had
    local uids
    uids=$(sed -n 's/^user=uid //p' "$G"/out/results/*/meta | sort -u | paste -sd, -)
    echo "sandbox users: $uids"
    [ -n "$uids" ] && ! ps -U "$uids" --no-headers
}

@test "the reports are well-formed: CSV, JUnit XML, JSON, SVG" {
    python3 - "$G/out" <<'EOF'
import csv, glob, json, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
rows = list(csv.reader(open(out + "/gradebook.csv")))
assert all(len(r) == len(rows[0]) for r in rows), "ragged gradebook"
labs = {r[1] for r in rows[1:]}
assert rows[0][:9] == ["student", "lab", "status", "score", "passed", "failed", "skipped",
                       "not_graded", "why"], rows[0][:9]
for f in glob.glob(out + "/junit/*.xml"):
    root = ET.parse(f).getroot()
    assert root.tag == "testsuites" and len(root.findall("testsuite")) == len(labs), f
for f in glob.glob(out + "/gradescope/*/results.json"):
    r = json.load(open(f))
    assert all({"name", "score", "max_score", "output"} <= set(t) for t in r["tests"]), f
    assert all(t.get("status") in (None, "passed", "failed") for t in r["tests"]), f
for f in glob.glob(out + "/classroom/*.json"):
    r = json.load(open(f))
    assert r["version"] == 1 and all(t["status"] in ("pass", "fail", "error") for t in r["tests"])
svg = ET.parse(out + "/heatmap.svg").getroot()
assert svg.tag.endswith("svg")
EOF
}
