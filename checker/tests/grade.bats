#!/usr/bin/env bats
# grade.bats -- handing the kit out and grading a class, without a GPU:
# make handout holds no answer and every file a student needs, also from a
# copy of the kit inside another git work tree; and a small class (made by
# checker/grade/make-test-class.sh) is graded with every verdict the one it
# must get without a GPU -- "not graded" for whatever needs a GPU, never a
# pass. As an instructor's clone often is, the kit that grades sits in a
# folder no other user may enter (mode 700, as /root or mktemp -d), and is
# run from there, on a node with no unzip: the verdicts must not depend on
# either. Builds for one GPU architecture, labs 01 and 02 only, so it is
# quick; the quick run (make test without a GPU) grades lab 02 of seven
# submissions (the solutions as a zip, a build that fails, a zip with
# members that would land outside, a zip and a tarball cut in half, a
# program that leaves a child to forge its verdict, one that exits 77),
# make test-all labs 01 and 02 of seventeen, and a build that never ends in
# a run of its own.
# The GPU half: checker/grade/gpu-class.sh on a GPU node.

bats_require_minimum_version 1.5.0
load lib

GRADE="$KIT_ROOT/checker/grade"
G="$KIT_BUILD/grade"
# the kit that grades, a copy of this one in a folder closed to other users,
# and where its grading writes (make grade's default: build/grade)
CLOSED="$G/closed"
CK="$CLOSED/kit"
O="$CK/build/grade"
# No GPU here, even on a GPU node: these are the verdicts without one.
export CUDA_VISIBLE_DEVICES=

# copy_kit DEST: this kit's working tree (its build outputs too, not its
# .git or build/) into DEST.
copy_kit() {
    mkdir -p "$1"
    tar -C "$KIT_ROOT" --exclude=./.git --exclude=./build --exclude=./reports \
        --exclude=./slides/node_modules -cf - . | tar -C "$1" -xf -
}

# NO_UNZIP: the words that run a command where no unzip can be found. As
# root, in a mount namespace of its own where each unzip on PATH or in the
# system's folders (the sandbox's PATH) is /dev/null, so that not even the
# sandbox finds one; else (no namespace to be had) first on PATH an unzip
# that says it is not there.
no_unzip() {
    local u=() d
    for d in $(tr : ' ' <<<"$PATH") /usr/local/bin /usr/bin /bin; do
        [ -x "$d/unzip" ] && [[ " ${u[*]} " != *" $d/unzip "* ]] && u+=("$d/unzip")
    done
    NO_UNZIP=()
    [ ${#u[@]} = 0 ] && return 0
    if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        NO_UNZIP=(unshare -m bash -c 'for f in "${@:2:$1}"; do mount --bind /dev/null "$f" || exit 1; done
                  shift $(($1 + 1)); exec "$@"' no-unzip ${#u[@]} "${u[@]}")
    else
        mkdir -p "$G/no-unzip"
        printf '#!/bin/sh\necho "unzip: not found" >&2\nexit 127\n' >"$G/no-unzip/unzip"
        chmod +x "$G/no-unzip/unzip"
        NO_UNZIP=(env PATH="$G/no-unzip:$PATH")
    fi
}

setup_file() {
    export CUDA_ARCH=${CUDA_ARCH:-75} RUN_TIMEOUT=5 LAB_TIMEOUT=120 GRADE_FSIZE=$((16 << 20))
    rm -rf "$G"
    mkdir -p "$G"
    local rc=0
    "$GRADE/handout" "$G/handout" >"$G/handout.log" 2>&1 || rc=$?
    echo "$rc" >"$G/handout.rc"
    # the handout of a copy of the kit inside another project's git work
    # tree, which ignores it (build outputs and all)
    mkdir -p "$G/outer"
    git -C "$G/outer" init -q
    echo 'vendor/' >"$G/outer/.gitignore"
    copy_kit "$G/outer/vendor/kit"
    rc=0
    "$G/outer/vendor/kit/checker/grade/handout" "$G/nested" >"$G/nested.log" 2>&1 || rc=$?
    echo "$rc" >"$G/nested.rc"

    # the quick run (make test without a GPU) grades lab 02 of four of them
    local s picks="solution-zip.zip no-compile zip-bad-members.zip zip-broken.zip tar-broken.tar.gz forge-later exit77" labs=02
    # a listener the hostile submission must not reach (its port baked in)
    python3 -c 'import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1]); sys.stdout.flush()
while True:
    c, _ = s.accept(); open(sys.argv[2], "a").write("connected\n"); c.close()' \
        "$G/listener.port" "$G/listener.log" 3>&- </dev/null >/dev/null 2>&1 &
    echo "$!" >"$G/listener.pid"
    disown "$!" 2>/dev/null || true
    for _ in $(seq 50); do [ -s "$G/listener.port" ] && break; sleep 0.1; done
    export HOSTILE_CONNECT="127.0.0.1:$(cat "$G/listener.port")"
    if kit_full; then
        labs=01,02
        picks+=" solution-flat.tar.gz solution-git.bundle ships-checker nothing child-holds-output flood"
        picks+=" forge-now forge-kit prints-reference"
        # the sandbox (another user, a process limit) needs root: without it,
        # the submissions that attack the grader would attack this machine
        [ "$(id -u)" = 0 ] && picks+=" escape fork-bomb"
    fi
    "$GRADE/make-test-class.sh" "$G/made" "$labs" >"$G/made.log" 2>&1 || return 0
    # the hostile submission (lab 01) and a solution, graded as root and as
    # an ordinary user (below), each in a sandbox of bubblewrap where it
    # works here
    mkdir -p "$G/hostile-class"
    cp -a "$G/made/submissions/hostile" "$G/made/submissions/solution" "$G/hostile-class/"
    # (and, in the whole self-test, the forger, lab 02 graded too)
    HOSTILE_LABS=01
    if kit_full; then
        cp -a "$G/made/submissions/forge-later" "$G/hostile-class/"
        HOSTILE_LABS=01,02
    fi
    mkdir -p "$CLOSED/class" "$CLOSED/slow-class"
    chmod 700 "$CLOSED"
    copy_kit "$CK"
    for s in $picks; do
        cp -a "$G/made/submissions/$s" "$CLOSED/class/"
    done
    rm -f /tmp/cuda-stream-labs-escape.txt /tmp/cuda-stream-labs-zip-absolute.txt
    no_unzip
    # a build that never ends: graded in a run of its own, with a short
    # BUILD_TIMEOUT (the class's builds need longer), beside the class
    if kit_full; then
        cp -a "$G/made/submissions/slow-build" "$CLOSED/slow-class/"
        ( cd "$CK" && BUILD_TIMEOUT=3 without_bats_env checker/grade/grade --labs 01 \
              -o build/grade-slow "$CLOSED/slow-class" >"$G/slow.log" 2>&1
          echo "$?" >"$G/slow.rc" ) &
    fi
    rc=0
    ( cd "$CK" && without_bats_env "${NO_UNZIP[@]}" checker/grade/grade -j 3 --labs "$labs" \
          "$CLOSED/class" >"$G/grade.log" 2>&1 ) || rc=$?
    echo "$rc" >"$G/grade.rc"
    # (the gradebook as grading left it: a child of a program must not
    # change it after; a test below looks again)
    find "$O/gradebook.csv" "$O/results/forge-later" -type f -exec sha256sum {} + >"$G/graded.sha256" 2>/dev/null || true
    grade_probed
    grade_hostile
    kill "$(cat "$G/listener.pid")" 2>/dev/null || true
    wait
}

# grade_probed: lab 02 of exit77 (a program that exits 77 on every run) as
# on a GPU node: grade-one with the grader's probe (GRADE_PROBE) a stand-in
# that finds a GPU, and the runs allowed to see one; and with one that
# finds none. The build is the class's (its build cache).
grade_probed() {
    local w p rc uids=(- -)
    w=$(mktemp -d /tmp/cuda-stream-labs-grade.test.XXXXXX)
    chmod 711 "$w"
    mkdir -p "$w/probe"
    printf '#!/bin/sh\necho "Made GPU 0, compute capability 9.0, 3 copy engines"\n' >"$w/probe/gpu"
    printf '#!/bin/sh\necho "no usable CUDA device: none (made)" >&2\nexit 77\n' >"$w/probe/none"
    chmod 755 "$w/probe" "$w/probe/gpu" "$w/probe/none"
    if [ "$(id -u)" = 0 ]; then
        . "$GRADE/lib.bash"
        claim_uids 2 600
        uids=("${CLAIMED_UIDS[@]}")
    fi
    for p in gpu none; do
        rc=0
        without_bats_env env -u CUDA_VISIBLE_DEVICES GRADE_PROBE="$w/probe/$p" GRADE_CACHE="$O/build-cache" \
            GRADE_WORK_ROOT="$w" "$GRADE/grade-one" --kit "$O/kit" --work "$w/job-$p" \
            --results "$G/probed-$p/exit77" --name exit77 --kind dir --uid "${uids[0]}" --run-uid "${uids[1]}" \
            --labs 02-async-copy "$CLOSED/class/exit77" >"$G/probed-$p.log" 2>&1 || rc=$?
        echo "$rc" >"$G/probed-$p.rc"
    done
    rm -rf "$w"
}

# grade_hostile: lab 01 of the hostile submission and a solution (and lab
# 02 of the forger, HOSTILE_LABS), by this kit as it runs (root or not),
# and, as root, by a copy of the kit that an ordinary user (uid 61990) owns
# and runs; and, as root, with the sandbox of a uid alone
# (GRADE_SANDBOX=uid), to show what it lets through, and what it does not.
grade_hostile() {
    local rc=0
    without_bats_env "$GRADE/grade" --labs "$HOSTILE_LABS" -o "$G/hostile" "$G/hostile-class" >"$G/hostile.log" 2>&1 || rc=$?
    echo "$rc" >"$G/hostile.rc"
    [ "$(id -u)" = 0 ] || return 0
    rc=0
    GRADE_SANDBOX=uid without_bats_env "$GRADE/grade" --labs "$HOSTILE_LABS" -o "$G/hostile-uid" "$G/hostile-class" \
        >"$G/hostile-uid.log" 2>&1 || rc=$?
    echo "$rc" >"$G/hostile-uid.rc"
    # (in a folder the user may reach: the kit's build folder may be closed)
    local u
    u=$(mktemp -d /tmp/cuda-stream-labs-user.XXXXXX)
    chmod 755 "$u"
    mkdir -p "$u/home"
    copy_kit "$u/kit"
    cp -a "$G/hostile-class" "$u/class"
    chown -R 61990:61990 "$u"
    rc=0
    ( cd "$u/kit" && without_bats_env setpriv --reuid=61990 --regid=61990 --clear-groups \
          env HOME="$u/home" checker/grade/grade --labs "$HOSTILE_LABS" \
          -o "$u/out" "$u/class" >"$G/user.log" 2>&1 ) || rc=$?
    echo "$rc" >"$G/user.rc"
    cp -r "$u/out" "$G/user-out"
    rm -rf "$u"
}

# handout_lacks DIR: the files every student needs that the handout in DIR
# lacks (each lab's starter, Makefile, README, checker and deck; common/;
# the checker's run-checks and helpers; the trace tool's sources)
handout_lacks() {
    local h=$1 id f
    for id in $(lab_ids); do
        for f in "labs/$id/$(src_of "$id")" "labs/$id/Makefile" "labs/$id/README.md" \
                 "checker/$id.bats" "slides/$id.md"; do
            [ -f "$h/$f" ] || echo "$f"
        done
    done
    for f in "$KIT_ROOT"/common/* "$KIT_ROOT"/checker/trace/*.[ch] "$KIT_ROOT"/checker/trace/Makefile \
             "$KIT_ROOT"/checker/run-checks "$KIT_ROOT"/checker/lib/checks.bash \
             "$KIT_ROOT"/Makefile "$KIT_ROOT"/README.md "$KIT_ROOT"/slides/Makefile; do
        f=${f#"$KIT_ROOT"/}
        [ -f "$h/$f" ] || echo "$f"
    done
}

@test "make handout leaves out the solutions, the mutants and the kit's self-tests, and carries Predict, then measure" {
    cat "$G/handout.log"
    [ "$(cat "$G/handout.rc")" = 0 ]
    local h="$G/handout/cuda-stream-labs" bad=""
    [ -f "$G/handout/cuda-stream-labs.tar.gz" ] || bad+=" (no tarball)"
    for p in solutions checker/tests checker/grade .ci; do
        [ -e "$h/$p" ] && bad+=" $p"
    done
    for p in $(handout_lacks "$h"); do
        bad+=" (missing $p)"
    done
    # Predict, then measure: the questions, Your run and the drawings travel
    [ -f "$h/checker/lib/your-run.awk" ] || bad+=" (missing checker/lib/your-run.awk)"
    for id in $(lab_ids); do
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

@test "make handout from a copy of the kit inside another git work tree hands out the same files" {
    cat "$G/nested.log"
    [ "$(cat "$G/nested.rc")" = 0 ]
    local lacks
    lacks=$(handout_lacks "$G/nested/cuda-stream-labs")
    echo "lacks: ${lacks:-nothing}"
    [ -z "$lacks" ]
    # the same files as the kit's own handout: its .gitignore rules keep
    # the build outputs the copy has (make test built the tools) at home
    diff <(cd "$G/handout/cuda-stream-labs" && find . -type f | sort) \
         <(cd "$G/nested/cuda-stream-labs" && find . -type f | sort)
}

@test "make handout refuses a handout that lacks a file every student needs" {
    local k="$BATS_TEST_TMPDIR/kit"
    mkdir -p "$k"
    tar -C "$G/outer/vendor/kit" --exclude=./slides --exclude=./checker/trace -cf - . | tar -C "$k" -xf -
    run -1 "$k/checker/grade/handout" "$BATS_TEST_TMPDIR/out"
    echo "$output"
    [[ $output == *"handout: refused: the handout lacks files every student needs:"*"slides/01-sync-copy.md"*"checker/trace/Makefile"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/out/cuda-stream-labs" ] && [ ! -e "$BATS_TEST_TMPDIR/out/cuda-stream-labs.tar.gz" ]
}

@test "no statement a solution adds to its starter is in any file of the handout, whatever its spelling" {
    local h="$G/handout/cuda-stream-labs" n found
    n=$("$GRADE/answer-lines" "$KIT_ROOT" | wc -l)
    [ "$n" -ge 30 ] || { echo "only $n answer statements?"; return 1; }
    # statements, not lines: whitespace, comments and CUDA_CHECK( ) aside
    printf '```c\ncudaStreamWaitEvent(w->stream_b,\n    produced, 0);   /* TODO(5) */\n```\n' >"$BATS_TEST_TMPDIR/deck.md"
    run python3 "$GRADE/answers.py" find "$KIT_ROOT" "$BATS_TEST_TMPDIR/deck.md"
    echo "$output"
    [[ $output == *"deck.md:2:3:cudaStreamWaitEvent(w->stream_b,produced,0)" ]]
    # the kit's decks show some (deck 04's wait, deck 09's event pair): the handout has none
    python3 "$GRADE/answers.py" find "$KIT_ROOT" "$KIT_ROOT/slides/04-events.md" | grep -q 'cudaStreamWaitEvent(w->stream_b,produced,0)'
    # deck 06's fix, as inline code in a bullet: the span goes, the bullet stays
    python3 "$GRADE/answers.py" find "$KIT_ROOT" "$KIT_ROOT/slides/06-lifetime.md" | grep -qF 'cudaEventRecord(ev_used[j],s_comp)'
    grep -qF -- '- Fix: `/* ... */` after the kernel, and' "$h/slides/06-lifetime.md"
    grep -q 'slides/04-events.md: elided [0-9]* answer statement' "$G/handout.log"
    # and in the packed tarball too: what a student actually gets
    mkdir -p "$G/unpacked"
    tar -xzf "$G/handout/cuda-stream-labs.tar.gz" -C "$G/unpacked"
    found=$(find "$h" "$G/unpacked" -type f \( -name '*.md' -o -name '*.cu' -o -name '*.h' -o -name '*.py' \
                -o -name '*.bats' -o -name '*.bash' -o -name '*.sh' -o -name '*.mk' -o -name Makefile \) -print0 |
            xargs -0 python3 "$GRADE/answers.py" find "$KIT_ROOT")
    echo "${found:-no answer statement anywhere}"
    [ -z "$found" ]
}

@test "make handout refuses what answers a Predict question before the run: a solution line in a message, a reference figure, a measured figure on a GPU, a measured timeline" {
    local k="$BATS_TEST_TMPDIR/kit" v
    mkdir -p "$k"
    tar -C "$G/outer/vendor/kit" -cf - . | tar -C "$k" -xf -
    # lab 08's starter message that once was the solution's line
    sed -i "s|lab_todo(4, '[^']*')|lab_todo(4, 'TODO: torch.cuda.current_stream().wait_stream(side)')|" \
        "$k/labs/08-pytorch/streams.py"
    run -1 "$k/checker/grade/handout" "$BATS_TEST_TMPDIR/out"
    echo "$output"
    [[ $output == *"labs/08-pytorch/streams.py:"*": torch.cuda.current_stream().wait_stream(side)"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/out/cuda-stream-labs" ]
    cp "$KIT_ROOT/labs/08-pytorch/streams.py" "$k/labs/08-pytorch/"
    # the measured answer lab 05's checker once had in a comment; a figure
    # of lab 01's reference run in lab 03's README; a drawn run of the kit's
    printf '# on an H200 a correct pipeline takes 1.00x the bound\n' >>"$k/checker/05-overlap.bats"
    v=$(awk -F'\t' '$1 == "fig" && $3 == "h2d_gbps" { print $4 }' "$k/checker/reference/01-sync-copy.tsv")
    printf '\nA copy from malloc memory runs at %s GB/s.\n' "$v" >>"$k/labs/03-pinned-memory/README.md"
    cp "$KIT_ROOT/slides/timelines/01-sync-copy.svg" "$k/slides/timelines/extra-run.svg"
    run -1 "$k/checker/grade/handout" "$BATS_TEST_TMPDIR/out"
    echo "$output"
    [[ $output == *"answer a Predict question before the student's own run"* ]]
    [[ $output == *"checker/05-overlap.bats:"*": a measured figure on a named GPU (1.00x)"* ]]
    [[ $output == *"labs/03-pinned-memory/README.md:"*": h2d_gbps = $v GB/s, a figure of the kit's reference runs of 01-sync-copy"* ]]
    [[ $output == *"slides/timelines/extra-run.svg:1: a timeline of a measured run"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/out/cuda-stream-labs" ] && [ ! -e "$BATS_TEST_TMPDIR/out/cuda-stream-labs.tar.gz" ]
    # the kit's own handout: its decks' timelines are frames for the student's own
    ! grep -l 'ms shown, [0-9]* records' "$G/handout/cuda-stream-labs/slides/timelines/"*.svg
    grep -q "Your own run's timeline goes here" "$G/handout/cuda-stream-labs/slides/timelines/05-overlap.svg"
}

@test "the handout's decks carry no presenter notes unless asked, and its Next: hints name what it has" {
    local h="$G/handout/cuda-stream-labs" f
    grep -q 'handout: slides: took out [1-9][0-9]* presenter notes' "$G/handout.log"
    for f in "$h"/slides/[0-9]*.md; do
        # only Marp's directives are left as comments
        ! grep -v '^<!-- _\?[a-zA-Z]*: .* -->$' "$f" | grep -q '<!--' || { echo "$f keeps notes"; return 1; }
    done
    grep -q '^Answer\|<!--' "$KIT_ROOT/slides/04-events.md"
    # NOTES=1: the presenter's own decks
    run "$GRADE/handout" --notes "$BATS_TEST_TMPDIR/with-notes"
    [ "$status" = 0 ]
    [ "$(grep -c '<!--' "$BATS_TEST_TMPDIR/with-notes/cuda-stream-labs/slides/04-events.md")" = \
      "$(grep -c '<!--' "$KIT_ROOT/slides/04-events.md")" ]
    # each section run-checks' Next: lines send a student to is in the handout's README
    grep -o 'README.md, \\"[^\\]*' "$KIT_ROOT/checker/run-checks" | sed 's/^README.md, \\"//' | sort -u |
        while IFS= read -r sec; do
            grep -q "^## $sec" "$h/README.md" || { echo "the handout's README has no section $sec"; exit 1; }
        done
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
    run best_file "$d" 01-sync-copy sync_copy.cu
    [ "$output" = "$d/a/labs/01-sync-copy/sync_copy.cu" ]
    rm "$d/a/labs/01-sync-copy/sync_copy.cu"
    run best_file "$d" 01-sync-copy sync_copy.cu
    [ "$output" = "$d/01-sync-copy/sync_copy.cu" ]
    run best_file "$d" 02-async-copy async_copy.cu   # a link is not a file
    [ -z "$output" ]
    # a lab whose source is no .cu (lab 08's is Python): found by its name too
    mkdir -p "$d/x/labs/08-py"
    touch "$d/streams.py" "$d/x/labs/08-py/streams.py"
    run best_file "$d" 08-py streams.py
    [ "$output" = "$d/x/labs/08-py/streams.py" ]
}

@test "a lab's source is the Makefile's SRC, else its starter PROG.EXT, else PROG.cu; a prepared kit keeps it" {
    . "$GRADE/lib.bash"
    local k="$BATS_TEST_TMPDIR/kit" id
    for id in 01-a 02-b 03-c 04-d; do mkdir -p "$k/labs/$id"; done
    printf 'LAB := 01-a\nPROG := a\n' >"$k/labs/01-a/Makefile"
    printf 'LAB := 02-b\nPROG := b\nSRC := b_main.py\n' >"$k/labs/02-b/Makefile"
    printf 'LAB := 03-c\nPROG := streams\n' >"$k/labs/03-c/Makefile"
    touch "$k/labs/03-c/streams.py" "$k/labs/03-c/streams.json" "$k/labs/03-c/streams.trace"
    printf 'LAB := 04-d\nPROG := d\n' >"$k/labs/04-d/Makefile"
    echo "d.py" >"$k/labs/04-d/.source"
    [ "$(kit_src "$k" 01-a)" = a.cu ]
    [ "$(kit_src "$k" 02-b)" = b_main.py ]
    [ "$(kit_src "$k" 03-c)" = streams.py ]
    [ "$(kit_src "$k" 04-d)" = d.py ]
    [ "$(kit_src "$O/kit" 02-async-copy)" = async_copy.cu ]
    # every lab of this kit: what its starter is
    for id in $(lab_ids); do
        [ -f "$KIT_ROOT/labs/$id/$(kit_src "$KIT_ROOT" "$id")" ]
    done
}

@test "submissions are named after their folder, tarball or bundle" {
    . "$GRADE/lib.bash"
    local d="$BATS_TEST_TMPDIR/class"
    mkdir -p "$d/alice" "$d/bo b"
    touch "$d/alice.tar.gz" "$d/carol.bundle" "$d/notes.txt"
    run list_submissions "$d"
    echo "$output"
    grep -q "^alice	dir	.*	alice$" <<<"$output"
    grep -q "^alice-2	tar	.*	alice$" <<<"$output"
    grep -q "^bo_b	dir	.*	bo b$" <<<"$output"
    grep -q "^carol	bundle	" <<<"$output"
    grep -q "ignored: .*notes.txt" <<<"$output"
    # a name keeps its letters beside a safe id; Gradescope's metadata is no submission
    touch "$d/Ève O'Brien (late!) résumé.tgz" "$d/submission_metadata.yml"
    run list_submissions "$d"
    echo "$output"
    grep -qx "Eve_O_Brien_late_resume	tar	$d/Ève O'Brien (late!) résumé.tgz	Ève O'Brien (late!) résumé" <<<"$output"
    [[ $output != *submission_metadata* ]]
}

@test "a class is graded: every verdict is the one it must get without a GPU" {
    cat "$G/made.log" "$G/grade.log"
    # graded by a kit in a folder closed to other users, run from there
    [ "$(stat -c %a "$CLOSED")" = 700 ]
    # 3: some labs are not graded (there is no GPU)
    [ "$(cat "$G/grade.rc")" = 3 ]
    run "$GRADE/check-verdicts" --no-gpu --only-graded "$O" "$G/made/expected.tsv"
    echo "$output"
    [ "$status" = 0 ]
    # every picked submission has its rows
    [ "$(cut -d, -f1 "$O/gradebook.csv" | sort -u | grep -vc student)" = "$(ls "$CLOSED/class" | wc -l)" ]
}

@test "without a GPU no lab passes, and every report says not graded" {
    local f st
    ! grep -q ',pass,' <(cut -d, -f1-4 "$O/gradebook.csv")
    grep -q '^solution-zip,02-async-copy,not graded,not graded,' "$O/gradebook.csv"
    # no points for what was not graded
    grep -q '^solution-zip,solution-zip,,,not graded,not graded,,0,' "$O/students.csv"
    grep -q 'Not graded' "$O/report.md"
    grep -q 'not graded' "$O/junit/solution-zip.xml"
    python3 - "$O" <<'EOF'
import json, sys
out = sys.argv[1]
gs = json.load(open(out + "/gradescope/solution-zip/results.json"))
assert gs["extra_data"]["graded"] is False and gs["visibility"] == "hidden", gs
assert gs["output"].startswith("CUDA Stream Labs: solution-zip\nNOT GRADED"), gs["output"]
assert gs["score"] == 0
gc = json.load(open(out + "/classroom/solution-zip.json"))
assert gc["version"] == 1 and gc["status"] == "error", gc["status"]
assert any(t["status"] == "error" and t["message"].startswith("not graded") for t in gc["tests"])
EOF
}

@test "grading stops before it starts, in one line, when the sandbox user cannot run what it needs" {
    # bats where only the grader can reach it (as root; else nowhere)
    local b="$CLOSED/bin/bats"
    mkdir -p "$CLOSED/bin"
    printf '#!/bin/sh\nexec bats "$@"\n' >"$b"
    chmod 755 "$b"
    [ "$(id -u)" = 0 ] || b="$CLOSED/no-such/bats"
    cd "$CK"
    run -2 without_bats_env BATS="$b" checker/grade/grade --labs 02 -o build/grade-refused "$CLOSED/class"
    echo "$output"
    [ "$(grep -c 'stopped before grading' <<<"$output")" = 1 ]
    [[ ${lines[-1]} == "grade: stopped before grading: "*"cannot run bats ($b: not there, or in a folder closed to it): install bats where every user can run it"* ]]
    [ ! -e build/grade-refused/gradebook.csv ] && [ -z "$(ls build/grade-refused/results)" ]
}

@test "a zip is graded where no unzip can be found, its members that would land outside refused and named" {
    no_unzip
    echo "unzip hidden by: ${NO_UNZIP[*]:0:2}"
    grep -q '^solution-zip,02-async-copy,not graded,not graded,' "$O/gradebook.csv"
    grep -q '^02-async-copy: labs/02-async-copy/async_copy.cu$' "$O/results/solution-zip/submission.txt"
    cat "$O/results/zip-bad-members/submission.txt"
    grep -qF "unpack: refused 3 member(s) that would land outside the submission's folder or are links: ../cuda-stream-labs-zip-up.txt (a '..' in its path), my-labs/../../cuda-stream-labs-zip-up2.txt (a '..' in its path), /tmp/cuda-stream-labs-zip-absolute.txt (an absolute path)" \
        "$O/results/zip-bad-members/submission.txt"
    if kit_full; then
        grep -q '^01-sync-copy: my-labs/sync_copy.cu$' "$O/results/zip-bad-members/submission.txt"
        grep -q '^zip-bad-members,01-sync-copy,not graded,not graded,' "$O/gradebook.csv"
    fi
    grep -q '^- zip-bad-members: unpack: refused 3 member' "$O/report.md"
    [ ! -e /tmp/cuda-stream-labs-zip-absolute.txt ]
}

@test "a damaged member of a zip is named, and every intact member is unpacked all the same" {
    local d="$BATS_TEST_TMPDIR/uz"
    mkdir -p "$d"
    python3 - "$d/t.zip" <<'EOF2'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("my-labs/sync_copy.cu", "A" * 5000)
    z.writestr("my-labs/async_copy.cu", "B" * 5000)
data = bytearray(open(sys.argv[1], "rb").read())
i = data.find(b"my-labs/sync_copy.cu") + len("my-labs/sync_copy.cu") + 5
data[i] ^= 0xff; data[i + 1] ^= 0xff        # the first member's data, damaged
open(sys.argv[1], "wb").write(bytes(data))
EOF2
    run -1 python3 "$GRADE/unzip.py" "$d/t.zip" "$d/out"
    echo "$output"
    [[ $output == "error: member my-labs/sync_copy.cu cannot be unpacked"* ]]
    [ -f "$d/out/my-labs/async_copy.cu" ]
    [ ! -e "$d/out/my-labs/sync_copy.cu" ]
}

@test "a program cannot write its own verdict: a child it leaves to forge its TAP, status and logs changes nothing" {
    cut -d, -f1-9 "$O/gradebook.csv" | grep '^forge-'
    # the unfinished starter it is planted in, without a GPU: not graded
    grep -q '^forge-later,02-async-copy,not graded,not graded,3,0,0,10,' "$O/gradebook.csv"
    # in the time of a run, not of the child's 400 s
    [ "$(sed -n 's/^seconds=//p' "$O/results/forge-later/02-async-copy.status")" -lt 60 ]
    # and nothing of it outlived its runs: what grading wrote is as it was
    sleep 2
    sha256sum -c --quiet "$G/graded.sha256"
    if kit_full; then
        grep -q '^forge-later,01-sync-copy,not graded,not graded,3,0,0,9,' "$O/gradebook.csv"
        grep -q '^forge-now,02-async-copy,not graded,not graded,3,0,0,10,' "$O/gradebook.csv"
        grep -q '^forge-kit,02-async-copy,not graded,not graded,3,0,0,10,' "$O/gradebook.csv"
        grep -q '^prints-reference,01-sync-copy,not graded,not graded,3,0,0,9,' "$O/gradebook.csv"
    fi
}

@test "the cheat itself works: where it can reach them, it rewrites a TAP, a status, a run and the steps" {
    local d="$BATS_TEST_TMPDIR/c"
    mkdir -p "$d/job/tmp-02/runs" "$d/results"
    printf '1..3\nok 1 builds\nnot ok 2 runs\n# expected: x\nok 3 right # skip no CUDA device: none\n' >"$d/job/tmp-02/checks.tap"
    printf 'rc=1\nseconds=3\ntimed_out=0\n' >"$d/results/02-async-copy.status"
    echo 1 >"$d/job/tmp-02/runs/main.rc"
    printf 'run\tmain\t1.0\n' >"$d/job/tmp-02/steps.tsv"
    # (CHEAT_ONLY: this folder and nothing else; a constructor, as planted)
    printf '#define CHEAT_MODE 1\n#define CHEAT_ONLY "%s"\n#include "cheat.h"\nint main(void) { return 0; }\n' "$d" >"$d/c.c"
    cc -std=c11 -D_DEFAULT_SOURCE -I"$GRADE" -o "$d/c" "$d/c.c"
    run -0 "$d/c"
    echo "$output"
    [ "$output" = "cheat: rewrote 4 files" ]
    cat "$d/job/tmp-02/checks.tap"
    [ "$(grep -c '^ok ' "$d/job/tmp-02/checks.tap")" = 3 ] && ! grep -q 'not ok\|skip' "$d/job/tmp-02/checks.tap"
    grep -qx 'rc=0' "$d/results/02-async-copy.status"
    [ "$(cat "$d/job/tmp-02/runs/main.rc")" = 0 ] && [ ! -s "$d/job/tmp-02/steps.tsv" ]
}

@test "a program that exits 77 where the grader's probe, run as it was, finds a GPU fails; where the probe finds none, not graded" {
    cat "$G/probed-gpu.log"
    [ "$(cat "$G/probed-gpu.rc")" = 0 ] && [ "$(cat "$G/probed-none.rc")" = 0 ]
    local out="$BATS_TEST_TMPDIR/out"
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$G/probed-gpu" --out "$out" --labs 02-async-copy
    cut -d, -f1-9 "$out/gradebook.csv"
    grep -qF 'exit77,02-async-copy,fail,23,3,10,0,0,"it runs to the end and exits 0: not checked: the program exited 77 (no usable CUDA device), but this node has a GPU: the grader'"'"'s probe, run as the program was, used Made GPU 0, compute capability 9.0, 3 copy engines",' \
        "$out/gradebook.csv"
    grep -qF 'no usable CUDA device: none here, honest (cudaErrorNoDevice)' "$G/probed-gpu/exit77/02-async-copy.log"
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$G/probed-none" --out "$out.none" --labs 02-async-copy
    grep -q '^exit77,02-async-copy,not graded,not graded,3,0,0,10,' "$out.none/gradebook.csv"
    # and so it is in the class, graded with no GPU and no probe
    grep -q '^exit77,02-async-copy,not graded,not graded,3,0,0,10,' "$O/gradebook.csv"
}

@test "a tarball cut short is an error of the grader for every lab, with tar's own words, never the student's failure" {
    grep '^tar-broken,' "$O/gradebook.csv" | cut -d, -f1-9
    # every lab graded, those whose file was in the first half too
    [ "$(grep -c '^tar-broken,[^,]*,error,error,0,0,0,0,error: the tar could not be unpacked: gzip: stdin: unexpected end of file,' "$O/gradebook.csv")" = \
      "$(grep -c '^tar-broken,' "$O/gradebook.csv")" ]
    grep -q '^tar-broken,tar-broken,,,error,error,,0,' "$O/students.csv"
    grep -q "^02-async-copy: error (my-labs/async_copy.cu found, but the tar could not be unpacked" \
        "$O/results/tar-broken/submission.txt"
}

@test "an archive that cannot be opened is an error of the grader in every report, never missing" {
    local r
    r=$(grep '^zip-broken,02-async-copy,' "$O/gradebook.csv")
    echo "$r"
    [[ $r == "zip-broken,02-async-copy,error,error,0,0,0,0,error: the zip could not be unpacked: File is not a zip file,"* ]]
    grep -q '^zip-broken,zip-broken,,,error,error,,0,' "$O/students.csv"
    # as many as the gradebook has lab rows in error
    grep -q "^> \*\*Grader error:\*\* $(grep -c '^[^,]*,[^,]*,error,' "$O/gradebook.csv") labs could not be checked" "$O/report.md"
    grep -qxF '> - zip-broken, 02-async-copy: error: the zip could not be unpacked: File is not a zip file' "$O/report.md"
    grep -q '^- zip-broken: unpack: failed: the zip could not be unpacked' "$O/report.md"
    grep -qF '<error message="not graded: the zip could not be unpacked: File is not a zip file"' "$O/junit/zip-broken.xml"
    python3 - "$O" <<'EOF'
import json, sys
out = sys.argv[1]
gs = json.load(open(out + "/gradescope/zip-broken/results.json"))
assert gs["extra_data"]["graded"] is False and gs["extra_data"]["status"] == "error", gs
assert gs["visibility"] == "hidden" and gs["score"] == 0, gs
assert "NOT GRADED: the grader could not check some lab" in gs["output"], gs["output"]
gc = json.load(open(out + "/classroom/zip-broken.json"))
assert gc["status"] == "error" and all(t["status"] == "error" for t in gc["tests"]), gc
EOF
}

@test "each way a checker can end has its own words: out of LAB_TIMEOUT, killed, stopped" {
    . "$GRADE/lib.bash"
    local w res="$BATS_TEST_TMPDIR/results" out="$BATS_TEST_TMPDIR/out" rc=0
    # a work folder the sandbox user can enter (as grade makes its own)
    w=$(mktemp -d /tmp/cuda-stream-labs-grade.test.XXXXXX)
    chmod 711 "$w"
    claim_uids 2 500
    LAB_TIMEOUT=1 without_bats_env "$GRADE/grade-one" --kit "$O/kit" --work "$w/job" \
        --results "$res/late" --name late --kind dir --uid "${CLAIMED_UIDS[0]}" --run-uid "${CLAIMED_UIDS[1]}" \
        --labs 02-async-copy "$G/made/submissions/solution" || rc=$?
    rm -rf "$w"
    [ "$rc" = 0 ]
    cat "$res/late/02-async-copy.status" "$res/late/02-async-copy.log"
    grep -q '^timed_out=1$' "$res/late/02-async-copy.status"
    grep -q "^grade: the lab's checks did not finish in 1 s (LAB_TIMEOUT): stopped$" "$res/late/02-async-copy.log"
    # the same lab, had its checker been killed, or stopped by itself
    cp -r "$res/late" "$res/killed"
    cp -r "$res/late" "$res/stopped"
    printf 'rc=137\nseconds=3\ntimed_out=0\n' >"$res/killed/02-async-copy.status"
    printf 'rc=1\nseconds=3\ntimed_out=0\n' >"$res/stopped/02-async-copy.status"
    rm -f "$res"/*/02-async-copy.tap
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$res" --out "$out" --labs 02-async-copy
    echo "$output"
    cut -d, -f1-9 "$out/gradebook.csv"
    grep -qF "late,02-async-copy,fail,0,0,13,0,0,the program builds without warnings: not checked: the lab's checks did not finish in 1 s (LAB_TIMEOUT) and were stopped," \
        "$out/gradebook.csv"
    grep -qF "killed,02-async-copy,fail,0,0,13,0,0,the program builds without warnings: not checked: the checker was killed (SIGKILL) before this check: did the program kill it?," \
        "$out/gradebook.csv"
    grep -qF "stopped,02-async-copy,fail,0,0,13,0,0,the program builds without warnings: not checked: the checker stopped before this check (exit status 1; its log says why)," \
        "$out/gradebook.csv"
    # checks that could not look are "not checked", apart from failures:
    # none of the three failed a check that looked
    grep -q ',not checked,not checked,' "$out/gradebook.csv"
    grep -qF '| | no check failed |' "$out/report.md"
}

@test "a check skipped as needing 2 GPUs makes its lab pending, with that reason, never a pass" {
    local res="$BATS_TEST_TMPDIR/results" out="$BATS_TEST_TMPDIR/out"
    mkdir -p "$res"
    cp -r "$O/results/solution-zip" "$res/two"
    # as on a node with one GPU: every check passes but one that needs two
    sed -i -e 's/ # skip no CUDA device.*$//' \
        -e '0,/^ok 3 .*/s/^\(ok 3 .*\)$/\1 # skip needs 2 GPUs: this node has 1/' "$res/two/02-async-copy.tap"
    cat "$res/two/02-async-copy.tap"
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$res" --out "$out" --labs 02-async-copy
    echo "$output"
    cut -d, -f1-9 "$out/gradebook.csv"
    grep -q '^two,02-async-copy,pending,pending,12,0,0,1,pending: 1 checks need more GPUs than this node has (needs 2 GPUs: this node has 1),' \
        "$out/gradebook.csv"
    tr -d '\r' <"$out/students.csv" | grep -qx 'two,solution-zip,,,pending,,0,0,02-async-copy,pending,' 
    [ "$status" = 0 ]
}

@test "a child that holds the program's output open: the verdict is the program's, in the time of a run" {
    skip_full "a program that leaves two children behind, graded"
    local st="$O/results/child-holds-output/01-sync-copy.steps" runs
    grep '^child-holds-output,01-sync-copy,' "$O/gradebook.csv"
    grep -q '^child-holds-output,01-sync-copy,not graded,not graded,3,0,0,9,' "$O/gradebook.csv"
    grep -qx 'timed_out=0' "$O/results/child-holds-output/01-sync-copy.status"
    # each run of the program ends with the program, not at its time limit
    # (the children sleep 10 minutes): its own seconds, not the lab's, which
    # another lab's grading beside it stretches
    cat "$st"
    runs=$(awk -F'\t' '$1 ~ /^(run|run-traced|rerun)$/' "$st" | wc -l)
    echo "lab 01: $runs runs, RUN_TIMEOUT $RUN_TIMEOUT s"
    [ "$runs" -ge 3 ]
    awk -F'\t' -v lim="$RUN_TIMEOUT" '$1 ~ /^(run|run-traced|rerun)$/ && $3 + 0 >= lim { print "too long: " $0; bad = 1 }
        END { exit bad }' "$st"
}

@test "a program that floods its output is stopped at the size limit, and every report says so" {
    skip_full "a program that prints without end, graded"
    grep -qF "flood,01-sync-copy,fail,17,2,10,0,0,it runs to the end and exits 0: not checked: the program was stopped: its output passed the limit of 16 MiB (SIGXFSZ)," \
        "$O/gradebook.csv"
    grep -qxF '          not checked: the program was stopped: its output passed the limit of 16 MiB (SIGXFSZ)' \
        "$O/results/flood/01-sync-copy.log"
}

@test "a build that does not finish in BUILD_TIMEOUT says so, in every report" {
    skip_full "a build that never ends, graded"
    cat "$G/slow.log"
    [ "$(cat "$G/slow.rc")" = 0 ]
    local so="$CK/build/grade-slow"
    run "$GRADE/check-verdicts" --no-gpu --only-graded "$so" "$G/made/expected.tsv"
    echo "$output"
    [ "$status" = 0 ]
    grep -qF 'slow-build,01-sync-copy,fail,0,0,12,0,0,the program builds without warnings: expected: make builds ./sync_copy | seen: the build did not finish in 3 s,' \
        "$so/gradebook.csv"
    grep -qxF '          seen:     the build did not finish in 3 s' "$so/results/slow-build/01-sync-copy.log"
    grep -qF '| 01.1 | the program builds without warnings | 1 | 0 | 1 | 0 | seen:     the build did not finish in 3 s |' \
        "$so/report.md"
}

@test "the gradebook says why a lab failed" {
    run grep '^no-compile,02-async-copy,fail,0,' "$O/gradebook.csv"
    echo "$output"
    [[ $output == *"the program builds without warnings: expected: make builds ./async_copy | seen: the build failed"* ]]
}

@test "grading ignores the checker, common/ and Makefile a submission carries" {
    skip_full "a submission that ships its own checker, graded"
    cat "$O/results/ships-checker/submission.txt"
    # the first 8 named, then "and N more": the labs' checkers come first
    grep -Eq "^ignored: kit files that differ from the kit's own .*checker/0[0-9]-[a-z-]+\.bats.*(checker/lib/checks\.bash.*common/lab\.h|and [0-9]+ more)" \
        "$O/results/ships-checker/submission.txt"
    # the handout as a student has it is no change
    . "$GRADE/lib.bash"
    [ -z "$(changed_kit_files "$G/handout" "$O/kit")" ]
    grep -q '^ships-checker,02-async-copy,not graded,' "$O/gradebook.csv"
}

@test "a program cannot write into the kit, and what it leaves in /tmp is removed and noted" {
    skip_full "a submission that writes outside its folder, graded"
    [ "$(id -u)" = 0 ] || skip "needs root: grading runs the submissions as another user only as root"
    grep -q '^escape,02-async-copy,not graded,' "$O/gradebook.csv"
    [ ! -e /tmp/cuda-stream-labs-escape.txt ]
    grep -q 'escape, 01-sync-copy: left files outside its folder (removed): /tmp/cuda-stream-labs-escape.txt' \
        "$O/report.md"
}

@test "a fork bomb fails its lab, within the time limits, and grading goes on" {
    skip_full "a fork bomb, graded"
    [ "$(id -u)" = 0 ] || skip "needs root: the process limit is per sandbox user"
    grep -q '^fork-bomb,01-sync-copy,fail,' "$O/gradebook.csv"
    grep -q 'did not finish in 5 s' "$O/results/fork-bomb/01-sync-copy.log"
    # nothing of it outlives grading: no process of any sandbox user it had.
    # (The kit's test files run side by side: another grading, bench.bats',
    # may hold one of those uids now, its lock taken (claim_uids), and its
    # processes are its own. Each uid is looked at with its lock held.)
    local uids u fd seen=() left=()
    uids=$(sed -n 's/^user=uid //p' "$O"/results/*/meta | sort -u)
    [ -n "$uids" ]
    for u in $uids; do
        exec {fd}>"/tmp/cuda-stream-labs-grade.uids/$u.lock"
        if flock -n "$fd"; then
            seen+=("$u")
            ps -U "$u" --no-headers && left+=("$u")
        fi
        exec {fd}>&-
    done
    echo "sandbox users: $(echo $uids); looked at (free now): ${seen[*]:-none}; with processes: ${left[*]:-none}"
    [ ${#left[@]} = 0 ]
}

@test "the reports are well-formed: CSV, JUnit XML, JSON, SVG" {
    python3 - "$O" <<'EOF'
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

@test "grading one lab and one student again into the same folder keeps every other cell, byte for byte" {
    skip_full "two more gradings into one folder"
    local a="$BATS_TEST_TMPDIR/again" rc=0 row
    cp -a "$O" "$a"
    sleep 1    # (a new second: the regraded cells' time must differ)
    # one lab of one student, into the folder graded before
    cd "$CK"
    without_bats_env checker/grade/grade --labs 02 --student no-compile -o "$a" "$CLOSED/class" \
        >"$BATS_TEST_TMPDIR/again.log" 2>&1 || rc=$?
    cat "$BATS_TEST_TMPDIR/again.log"
    [ "$rc" = 3 ]
    grep -q "holds results graded before: those of the labs and students graded now are replaced, the others kept (--replace, or REPLACE=1, to start anew)" \
        "$BATS_TEST_TMPDIR/again.log"
    # every other row the same bytes; the regraded one a new time, the rest the same
    diff <(grep -v '^no-compile,02-async-copy,' "$O/gradebook.csv") <(grep -v '^no-compile,02-async-copy,' "$a/gradebook.csv")
    python3 - "$O/gradebook.csv" "$a/gradebook.csv" <<'EOF'
import csv, sys
old = {(r["student"], r["lab"]): r for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))}
new = {(r["student"], r["lab"]): r for r in csv.DictReader(open(sys.argv[2], encoding="utf-8"))}
o, n = old["no-compile", "02-async-copy"], new["no-compile", "02-async-copy"]
assert n["graded_at"] > o["graded_at"], (o["graded_at"], n["graded_at"])
assert n["status"] == o["status"] and n["sha256"] == o["sha256"], (o, n)
EOF
    # then a lab graded before for no one, for one student: make grade STUDENT= LAB=
    run make --no-print-directory -C "$CK" grade SUBMISSIONS="$CLOSED/class" OUT="$a" LAB=01 STUDENT=solution-zip
    echo "$output" | tail -n 5
    [ "$status" = 0 ]
    python3 - "$O/gradebook.csv" "$a/gradebook.csv" <<'EOF'
import csv, sys
old = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
new = {(r["student"], r["lab"]): r for r in csv.DictReader(open(sys.argv[2], encoding="utf-8"))}
for r in old:
    if (r["student"], r["lab"]) in (("no-compile", "02-async-copy"), ("solution-zip", "01-sync-copy")):
        continue
    n = new[r["student"], r["lab"]]
    for k, v in r.items():        # every cell it had, kept
        assert n[k] == v, (r["student"], r["lab"], k, v, n[k])
s = new["solution-zip", "01-sync-copy"]
assert s["status"] == "not graded" and s["graded_at"] and s["sha256"], s
had = {(r["student"], r["lab"]) for r in old}
for (st, lab), r in new.items():       # (the quick run graded no lab 01 before)
    if (st, lab) not in had and st != "solution-zip":
        assert r["why"].startswith("not graded yet:") and r["graded_at"] == "", r
EOF
    # the file graded is kept, with its checksum
    local sum
    sum=$(sed -n 's/^sha256=//p' "$a/results/solution-zip/01-sync-copy.status")
    [ "$sum" = "$(sha256sum <"$a/results/solution-zip/files/01-sync-copy/sync_copy.cu" | cut -d ' ' -f 1)" ]
    grep -q '^kit=.*content:[0-9a-f]\{12\}$' "$a/results/solution-zip/01-sync-copy.status"
    # --replace starts anew: only what it grades
    cd "$CK"
    without_bats_env checker/grade/grade --replace --labs 02 --student no-compile -o "$a" "$CLOSED/class" >/dev/null 2>&1 || true
    python3 - "$a/gradebook.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
assert {(r["student"], r["lab"]) for r in rows if r["graded_at"]} == {("no-compile", "02-async-copy")}, rows
assert all(r["why"].startswith("not graded yet") for r in rows if not r["graded_at"]), rows
EOF
}

@test "a lab pending for want of GPUs leaves the student's points to the labs graded, and Gradescope gets them" {
    . "$GRADE/lib.bash"
    local res="$BATS_TEST_TMPDIR/results" out="$BATS_TEST_TMPDIR/out" n=0 c
    mkdir -p "$res/one"
    cp "$O/results/solution-zip/meta" "$res/one/"
    touch "$res/one/done"
    # lab 02 passes; lab 09 passes but for its four checks that need two GPUs
    sed -e 's/ # skip no CUDA device.*$//' "$O/results/solution-zip/02-async-copy.tap" >"$res/one/02-async-copy.tap"
    printf 'rc=0\nseconds=1\ntimed_out=0\ngraded_at=2026-01-01T00:00:00Z\ngpu=H100\ngpus=1\n' >"$res/one/02-async-copy.status"
    cp "$res/one/02-async-copy.status" "$res/one/09-multi-gpu.status"
    { echo "1..$(kit_checks "$O/kit" 09-multi-gpu | wc -l)"
      while IFS= read -r c; do
          n=$((n + 1))
          case $n in 5|6|7|8) echo "ok $n $c # skip needs 2 GPUs: this node has 1" ;; *) echo "ok $n $c" ;; esac
      done < <(kit_checks "$O/kit" 09-multi-gpu); } >"$res/one/09-multi-gpu.tap"
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$res" --out "$out" --labs "02-async-copy 09-multi-gpu"
    echo "$output"
    [ "$status" = 0 ]
    cat "$out/students.csv"
    tr -d '\r' <"$out/students.csv" | grep -qx 'one,solution-zip,,,pending,100.0,10,10,09-multi-gpu,pass 100,pending,' 
    grep -q '^one,09-multi-gpu,pending,pending,.*,pending: 4 checks need more GPUs than this node has (needs 2 GPUs: this node has 1),' \
        "$out/gradebook.csv"
    python3 - "$out" <<'EOF'
import json, sys
gs = json.load(open(sys.argv[1] + "/gradescope/one/results.json"))
assert gs["score"] == 10 and "visibility" not in gs, gs
assert gs["extra_data"]["pending"] == ["09-multi-gpu"] and gs["extra_data"]["graded"] is True, gs["extra_data"]
assert "Pending: 09-multi-gpu" in gs["output"], gs["output"]
assert abs(sum(t["max_score"] for t in gs["tests"]) - 10) < 0.01
EOF
    grep -q 'Pending:\*\* 1 labs have checks that need more GPUs' "$out/report.md"
}

@test "a hostile submission cannot read the solutions or another's files, write outside, or reach the network" {
    cat "$G/hostile.log"
    grep '^grade: sandbox: ' "$G/hostile.log"
    grep -q '^grade: sandbox: bubblewrap' "$G/hostile.log" || skip "bubblewrap cannot make a sandbox here (see the line above)"
    cut -d, -f1-9 "$G/hostile/gradebook.csv"
    # it ran, and every attack failed: its lab gets the solution's verdict
    grep -q '^hostile,01-sync-copy,not graded,not graded,3,0,0,9,' "$G/hostile/gradebook.csv"
    ! grep -rq ESCAPED "$G/hostile/results/hostile/"
    [ ! -e "$KIT_ROOT/hostile-was-here.txt" ] && [ ! -e "$G/made/submissions/hostile-was-here.txt" ]
    [ ! -s "$G/listener.log" ]
}

@test "a sandbox of a uid alone lets a hostile submission read the solutions; the grader says which sandbox ran" {
    [ "$(id -u)" = 0 ] || skip "needs root: the sandbox of a uid alone is root's"
    cat "$G/hostile-uid.log"
    grep -q "^grade: sandbox: WEAKER: a uid of its own for each job's checker and another for its programs, no bubblewrap (GRADE_SANDBOX=uid): a program can read what every user may, and reach the network" \
        "$G/hostile-uid.log"
    grep "^hostile," "$G/hostile-uid/gradebook.csv" | cut -d, -f1-9
    grep -q "^hostile,01-sync-copy,fail," "$G/hostile-uid/gradebook.csv"
    grep "ESCAPED: " "$G/hostile-uid/results/hostile/01-sync-copy.log"
    grep -q '^Sandbox: uid\.$' "$G/hostile-uid/report.md"
    # and every report says so, in its first line
    head -n 1 "$G/hostile-uid/report.md" | grep -q '^> \*\*WARNING: graded with a weaker sandbox: [0-9]* labs with a uid of its own (GRADE_SANDBOX=uid'
    head -n 1 "$G/hostile-uid/students.csv" | grep -q '^# WARNING: graded with a weaker sandbox: [0-9]* labs with a uid of its own'
    head -n 1 "$G/hostile-uid/feedback/solution.txt" | grep -q '^WARNING: graded with a weaker sandbox: [0-9]* labs with a uid of its own'
    # (the sandbox of bubblewrap says nothing of the kind)
    ! grep -q WARNING "$O/report.md" "$O/students.csv" "$O/feedback/solution-zip.txt"
    # what it does not let through: a program's child, forging its verdict
    # (its programs run as a uid of their own, apart from the checker's)
    kit_full || return 0
    grep -q '^forge-later,02-async-copy,not graded,not graded,3,0,0,10,' "$G/hostile-uid/gradebook.csv"
}

@test "as an ordinary user, the grader sandboxes a hostile submission with bubblewrap too" {
    [ "$(id -u)" = 0 ] || skip "needs root: to make an ordinary user here"
    cat "$G/user.log"
    grep '^grade: sandbox: ' "$G/user.log"
    if ! grep -q '^grade: sandbox: bubblewrap, as 61990' "$G/user.log"; then
        # where bwrap cannot work, the grader must say so, and stop
        grep -q '^grade: stopped before grading: .*GRADE_SANDBOX=none' "$G/user.log"
        [ "$(cat "$G/user.rc")" = 2 ]
        skip "bubblewrap cannot make a sandbox for an ordinary user here"
    fi
    grep -q '^hostile,01-sync-copy,not graded,not graded,3,0,0,9,' "$G/user-out/gradebook.csv"
    grep -q '^solution,01-sync-copy,not graded,not graded,3,0,0,9,' "$G/user-out/gradebook.csv"
    [ ! -s "$G/listener.log" ]
    kit_full || return 0
    # the forger, as an ordinary user's grading runs it: its own namespaces
    grep -q '^forge-later,02-async-copy,not graded,not graded,3,0,0,10,' "$G/user-out/gradebook.csv"
}

@test "students are named from a roster or Gradescope's metadata, keep their letters, and get a feedback file" {
    local res="$BATS_TEST_TMPDIR/results" out="$BATS_TEST_TMPDIR/out"
    mkdir -p "$res" "$out"
    cp -r "$O/results/no-compile" "$res/submission_1001"
    cp -r "$O/results/no-compile" "$res/Eve_O_Brien"
    cp -r "$O/results/solution-zip" "$res/bob"
    printf 'submission_1001:\n  :submitters:\n  - :name: Zoë Ångström\n    :sid: '"'"'s-77'"'"'\n    :email: zoe@example.org\n  :created_at: 2026-11-20\n' \
        >"$out/submission_metadata.yml"
    printf 'id,name,email\n42,Ève O'"'"'Brien,eve@example.org\n43,Bob Brown,bob@example.org\n44,Nobody Here,no@example.org\n' >"$BATS_TEST_TMPDIR/roster.csv"
    printf 'Eve_O_Brien\ttar\t/x\tÈve O'"'"'Brien\nbob\tdir\t/y\tbob\nsubmission_1001\tdir\t/z\tsubmission_1001\n' >"$BATS_TEST_TMPDIR/subs.tsv"
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$res" --out "$out" --labs 02-async-copy \
        --submissions "$BATS_TEST_TMPDIR/subs.tsv" --roster "$BATS_TEST_TMPDIR/roster.csv" --weights 02=25
    echo "$output"
    cat "$out/students.csv"
    local st
    st=$(tr -d '\r' <"$out/students.csv")
    grep -qx "Eve_O_Brien,Ève O'Brien,42,eve@example.org,fail,0.0,0,25,,fail 0," <<<"$st"
    # Zoë is on no roster entry: flagged, and so is the roster's entry with
    # no submission (it may be hers)
    grep -qx "submission_1001,Zoë Ångström,s-77,zoe@example.org,fail,0.0,0,25,,fail 0,on no roster entry: find whose submission this is" <<<"$st"
    grep -qx "bob,Bob Brown,43,bob@example.org,not graded,not graded,,0,,not graded," <<<"$st"
    grep -qx ",Nobody Here,44,no@example.org,no submission,0.0,0,25,,missing,no submission matched; 1 submission matches no roster entry (submission_1001): one may be this student's" <<<"$st"
    grep -q "points: 25 in all (the Gradescope assignment's total)" <<<"$output"
    grep -q "grade: 1 submissions match no roster entry (submission_1001): see report.md before you upload" <<<"$output"
    grep -qF '> - submission_1001 (Zoë Ångström)' "$out/report.md"
    # one feedback file each: the summary, then what the checker said
    head -n 3 "$out/feedback/submission_1001.txt"
    grep -q '^CUDA Stream Labs: Zoë Ångström (submission_1001)$' "$out/feedback/submission_1001.txt"
    grep -q '^  FAIL  the program builds without warnings$' "$out/feedback/submission_1001.txt"
    grep -q 'Zoë Ångström' "$out/gradescope/submission_1001/results.json"
}

@test "a roster and Gradescope's export: one row per person, a group's members each their own, nobody twice" {
    local res="$BATS_TEST_TMPDIR/results" out="$BATS_TEST_TMPDIR/out" st
    mkdir -p "$res" "$out"
    cp -r "$O/results/no-compile" "$res/submission_1"
    cp -r "$O/results/no-compile" "$res/submission_2"
    # submission_1: a group of two (ids and emails as the roster has them,
    # one name spelled otherwise); submission_2: one student, by email
    cat >"$out/submission_metadata.yml" <<'EOF'
submission_1:
  :submitters:
  - :name: Ana Lima
    :sid: '101'
    :email: ana@example.org
  - :name: Bruno Costa-Silva
    :sid: '102'
    :email: bruno@example.org
  :created_at: 2026-11-20
submission_2:
  :submitters:
  - :name: C. Dias
    :sid: ''
    :email: carla@example.org
EOF
    printf 'id,name,email\n101,Ana Lima,ana@example.org\n102,Bruno Costa,bruno@example.org\n103,Carla Dias,carla@example.org\n104,Davi Reis,davi@example.org\n' \
        >"$BATS_TEST_TMPDIR/roster.csv"
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$res" --out "$out" --labs 02-async-copy \
        --roster "$BATS_TEST_TMPDIR/roster.csv"
    echo "$output"
    st=$(tr -d '\r' <"$out/students.csv")
    echo "$st"
    # a row each: the group's two members (the roster's names), Carla, and
    # Davi with no submission, unflagged (every submission has its person)
    [ "$(grep -c . <<<"$st")" = 5 ]
    grep -qx "submission_1,Ana Lima,101,ana@example.org,fail,0.0,0,10,,fail 0," <<<"$st"
    grep -qx "submission_1,Bruno Costa,102,bruno@example.org,fail,0.0,0,10,,fail 0," <<<"$st"
    grep -qx "submission_2,Carla Dias,103,carla@example.org,fail,0.0,0,10,,fail 0," <<<"$st"
    grep -qx ",Davi Reis,104,davi@example.org,no submission,0.0,0,10,,missing," <<<"$st"
    ! grep -q "no roster entry" "$out/report.md"
    # Gradescope's own result stays one per submission, the group named
    grep -q '"name": "Ana Lima & Bruno Costa"' "$out/gradescope/submission_1/results.json"
}

@test "a regrade keeps the result it replaces in a history the report links" {
    . "$GRADE/lib.bash"
    local res="$BATS_TEST_TMPDIR/results" out="$BATS_TEST_TMPDIR/out" h
    mkdir -p "$res"
    cp -r "$O/results/no-compile" "$res/one"
    # the lab graded again (as grade-one does before it writes its own)
    keep_history "$res/one" 02-async-copy
    h=$(ls -d "$res"/one/history/*-02-async-copy)
    echo "kept: $h"
    [ -f "$h/02-async-copy.status" ] && [ -f "$h/02-async-copy.log" ] && [ -f "$h/02-async-copy.tap" ]
    [ -f "$h/files/02-async-copy/async_copy.cu" ]
    [ ! -e "$res/one/02-async-copy.status" ] && [ ! -e "$res/one/files/02-async-copy" ]
    # then a grading whose result is replaced in turn
    cp -r "$O/results/solution-zip/02-async-copy".* "$res/one/"
    sed -i 's/^graded_at=.*/graded_at=2099-01-01T00:00:00Z/' "$res/one/02-async-copy.status"
    keep_history "$res/one" 02-async-copy
    cp -r "$O/results/solution-zip/02-async-copy".* "$res/one/"
    [ "$(ls "$res/one/history" | wc -l)" = 2 ]
    run python3 "$GRADE/report.py" --kit "$O/kit" --results "$res" --out "$out" --labs 02-async-copy
    echo "$output"
    sed -n '/^## Regraded/,/^## /p' "$out/report.md"
    grep -q "^| one | 02-async-copy | [0-9T:-]*Z | fail 0 | not graded | \[results/one/history/[0-9T-]*Z-02-async-copy\](results/one/history/[0-9T-]*Z-02-async-copy/) |$" "$out/report.md"
    grep -q "^| one | 02-async-copy | 2099-01-01T00:00:00Z | not graded | not graded | " "$out/report.md"
    # the gradebook has the result now, once
    [ "$(grep -c '^one,02-async-copy,' "$out/gradebook.csv")" = 1 ]
}

@test "a build that failed counts once, as did not build; the heat map keeps not checked apart; alike files are named" {
    grep '^no-compile,02-async-copy,' "$O/gradebook.csv" | tr , '\n' | sort | uniq -c | sort -rn | head -n 4
    # the build check failed; every other check was not checked
    python3 - "$O/gradebook.csv" <<'EOF'
import csv, sys
r = next(r for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))
         if (r["student"], r["lab"]) == ("no-compile", "02-async-copy"))
cells = [v for k, v in r.items() if k.startswith("02-async-copy: ")]
assert r["02-async-copy: the program builds without warnings"] == "fail"
assert cells.count("fail") == 1 and cells.count("not checked") == len(cells) - 1, cells
EOF
    grep -q '^Did not build: 1 labs (no-compile 02)\.$' "$O/report.md"
    grep '^| 02\.' "$O/report.md"
    [ "$(grep -c '^| 02\.[0-9]* |' "$O/report.md")" = 1 ]
    grep -q 'fill="#f4b4b4"><title>no-compile, 02.2' "$O/heatmap.svg"
    # alike: the solution and the solution with one line more
    cat "$O/similarity.md"
    if command -v sim_c >/dev/null; then
        grep -Eq '^\| (no-compile|solution-zip) \| (100|[6-9][0-9]) % \| (solution-zip|no-compile) \|$' "$O/similarity.md"
        grep -q '^\[similarity.md\](similarity.md): [1-9][0-9]* pairs of files alike' "$O/report.md"
    else
        grep -q 'Not made: sim_c .* is not installed here' "$O/similarity.md"
    fi
}

@test "where bubblewrap cannot make a sandbox, the grader stops before grading anyone, and says how to get it" {
    local b="$BATS_TEST_TMPDIR/bin"
    mkdir -p "$b"
    printf '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n' >"$b/bwrap"
    chmod 755 "$b/bwrap"
    cd "$CK"
    PATH="$b:$PATH" run -2 without_bats_env checker/grade/grade --labs 02 --student no-compile \
        -o "$BATS_TEST_TMPDIR/out" "$CLOSED/class"
    echo "$output"
    if [ "$(id -u)" = 0 ]; then
        [[ ${lines[-1]} == "grade: stopped before grading: bubblewrap cannot make a sandbox here (bwrap: No permissions to create new namespace): install it (apt-get install bubblewrap), or name a weaker sandbox: GRADE_SANDBOX=uid"* ]]
    else
        [[ ${lines[-1]} == "grade: stopped before grading: bubblewrap cannot make a sandbox here (bwrap: No permissions to create new namespace): ask for it (apt-get install bubblewrap) and for unprivileged user namespaces"*"GRADE_SANDBOX=none"* ]]
    fi
    [ ! -e "$BATS_TEST_TMPDIR/out/gradebook.csv" ] && [ -z "$(ls "$BATS_TEST_TMPDIR/out/results")" ]
}

@test "a weaker sandbox, where the instructor names it, grades, and every report says so in its first line" {
    skip_full "one more grading, with a bubblewrap that fails"
    local b="$BATS_TEST_TMPDIR/bin" rc=0 mode=none
    mkdir -p "$b"
    printf '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n' >"$b/bwrap"
    chmod 755 "$b/bwrap"
    [ "$(id -u)" = 0 ] && mode=uid
    cd "$CK"
    PATH="$b:$PATH" GRADE_SANDBOX=$mode without_bats_env checker/grade/grade --labs 02 --student no-compile \
        -o "$BATS_TEST_TMPDIR/out" "$CLOSED/class" >"$BATS_TEST_TMPDIR/log" 2>&1 || rc=$?
    cat "$BATS_TEST_TMPDIR/log"
    [ "$rc" = 3 ]    # (the other students: not graded yet)
    grep -q "^grade: sandbox: $(tr a-z A-Z <<<"${mode/uid/weaker}")" "$BATS_TEST_TMPDIR/log"
    grep -q "^sandbox=$mode$" "$BATS_TEST_TMPDIR/out/results/no-compile/02-async-copy.status"
    grep -q '^no-compile,02-async-copy,fail,0,0,13,' "$BATS_TEST_TMPDIR/out/gradebook.csv"
    head -n 1 "$BATS_TEST_TMPDIR/out/report.md" | grep -q '^> \*\*WARNING: graded with a weaker sandbox: 1 labs with '
    head -n 1 "$BATS_TEST_TMPDIR/out/students.csv" | grep -q '^# WARNING: graded with a weaker sandbox'
    head -n 1 "$BATS_TEST_TMPDIR/out/feedback/no-compile.txt" | grep -q '^WARNING: graded with a weaker sandbox'
    # GRADE_SANDBOX=bwrap: no grading without it
    PATH="$b:$PATH" GRADE_SANDBOX=bwrap run -2 without_bats_env checker/grade/grade --labs 02 --student no-compile \
        -o "$BATS_TEST_TMPDIR/out2" "$CLOSED/class"
    echo "$output"
    [[ $output == *"grade: stopped before grading: GRADE_SANDBOX=bwrap, but bubblewrap cannot make a sandbox here (bwrap: No permissions to create new namespace)"* ]]
}

# A GPU node's torch often lives in a virtual environment outside /usr
# (/opt/torch/.venv): the sandbox must bind it, and make its parent readable
# to the sandbox uid, or lab 08 is "not graded: import torch failed" for
# every student (seen on an H100 node). A made venv with a made torch that
# sees no GPU: the lab must get as far as asking it. That node's torch has
# no compiled modules and its environment says PYTHONDONTWRITEBYTECODE=1, so
# that each run compiled torch again: the grader compiles it once, and the
# lab's run reads them from there (the made torch's version says so).
@test "lab 08 in the sandbox runs with the torch of a virtual environment outside /usr, compiled once" {
    skip_full "one more grading, of lab 08"
    local v sp out="$BATS_TEST_TMPDIR/l8" c="$BATS_TEST_TMPDIR/c8"
    # (in /opt, as a GPU node has it; not under /tmp, where the kit of a CI
    # clone may be: the sandbox has a /tmp of its own)
    v=$(mktemp -d /opt/kit-test-venv.XXXXXX 2>/dev/null) || skip "cannot make a folder in /opt here"
    python3 -m venv --without-pip "$v" 2>/dev/null || { rm -rf "$v"; skip "python3 cannot make a virtual environment here"; }
    sp=$("$v/bin/python3" -c 'import site; print(site.getsitepackages()[0])')
    mkdir -p "$sp/torch" "$c/one"
    # (made-cached: this module was read from the grader's compiled copy)
    printf '%s\n' 'import os, sys' \
        "__version__ = 'made-cached' if sys.pycache_prefix and os.path.exists(__cached__) else 'made'" \
        'class version: cuda = None' \
        'class cuda:' '    @staticmethod' '    def is_available(): return False' >"$sp/torch/__init__.py"
    chmod -R a+rX "$v" "$BATS_TEST_TMPDIR"     # (mktemp made it mode 700)
    cp "$KIT_ROOT/solutions/08-pytorch/streams.py" "$c/one/"
    # (no GPU for the programs as -1, not as this file's empty value: where
    # it is empty, lab 08 says "no device" before it imports torch, and this
    # test is about the import)
    CUDA_VISIBLE_DEVICES=-1 PATH="$v/bin:$PATH" PYTHONDONTWRITEBYTECODE=1 \
        run without_bats_env "$KIT_ROOT/checker/grade/grade" --labs 08 -o "$out" "$c"
    echo "$output"
    [[ $output == *"grade: sandbox: bubblewrap"* ]] || { rm -rf "$v"; skip "bubblewrap cannot make a sandbox here"; }
    local beside=0
    [ -e "$sp/torch/__pycache__" ] && beside=1     # (none written beside the venv's torch)
    rm -rf "$v"
    [ "$beside" = 0 ]
    [[ $output == *"grade: torch's modules compiled once for lab 08"* ]]
    grep -m 1 '# skip' "$out/results/one/08-pytorch.tap"
    grep -q '# skip no CUDA device: torch made-cached sees no CUDA device' "$out/results/one/08-pytorch.tap"
}

# A torch that has its compiled modules beside it (a pip install) is left
# as it is, and a class without lab 08 compiles none (torch_bytecode).
@test "the grader compiles torch only for a Python lab, and only where it has no compiled modules" {
    local sp="$BATS_TEST_TMPDIR/sp" d="$BATS_TEST_TMPDIR/pyc"
    mkdir -p "$sp/torch/cuda"
    echo "x = 1" >"$sp/torch/__init__.py"
    : >"$sp/torch/cuda/__init__.py"
    : >"$sp/torch/cuda/nvtx.py"
    tb() { PYTHONPATH=$sp LAB_PYTHON=python3 bash -c '. "$1/checker/grade/lib.bash"; torch_bytecode "${@:2}"' _ "$KIT_ROOT" "$@"; }
    PYTHONDONTWRITEBYTECODE=1 run -1 tb "$d" "$KIT_ROOT" 01-sync-copy 02-async-copy
    [ -z "$output" ] && [ ! -e "$d" ]
    PYTHONDONTWRITEBYTECODE=1 run -0 tb "$d" "$KIT_ROOT" 01-sync-copy 08-pytorch
    [ "$output" = "$d" ]
    ls -R "$d" | grep -q '__init__\..*\.pyc'
    [ ! -e "$sp/torch/__pycache__" ]
    python3 -m compileall -q "$sp/torch"
    rm -rf "$d"
    run -1 tb "$d" "$KIT_ROOT" 08-pytorch
    [ -z "$output" ] && [ ! -e "$d" ]
}

# GRADE_GPU_SLOTS=N: at most N labs' checkers at once on a GPU (a start of
# a CUDA program costs more the more programs are alive on its GPU:
# checker/grade/README.md, "Choosing JOBS"). The slots are lock files of
# the grader's, in a folder only it can open (gpu_slots_take).
@test "GRADE_GPU_SLOTS: at most N checkers at once on a GPU, two GPUs taken in one order, the slots the grader's alone" {
    local d="$BATS_TEST_TMPDIR/slots"
    run -0 timeout 30 bash -c '
        . "$1/checker/grade/lib.bash"; d=$2
        stamp() { echo "$1 $EPOCHREALTIME"; }
        gpu_slots_take "$d" 1 0 && stamp "A took GPU 0"
        ( gpu_slots_give; gpu_slots_take "$d" 1 0; stamp "B took GPU 0"; gpu_slots_give ) &
        ( gpu_slots_give; gpu_slots_take "$d" 1 1; stamp "C took GPU 1"; gpu_slots_give ) &
        sleep 0.5; stamp "A gives GPU 0"; gpu_slots_give; wait
        gpu_slots_take "$d" 2 0 && ( gpu_slots_give; gpu_slots_take "$d" 2 0; stamp "D took GPU 0 beside A (N=2)" )
        gpu_slots_give
        for o in 0,1 1,0 0,1 1,0; do ( gpu_slots_take "$d" 1 "$o"; sleep 0.05; gpu_slots_give ) & done; wait
        stamp "E: four checkers of two GPUs each, in both orders, all done"
        stat -c "%a" "$d"' _ "$KIT_ROOT" "$d"
    echo "$output"
    # B waited for A; C, on the other GPU, did not
    local a b c
    a=$(awk '/^A gives/ { print $NF }' <<<"$output") b=$(awk '/^B took/ { print $NF }' <<<"$output")
    c=$(awk '/^C took/ { print $NF }' <<<"$output")
    awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { exit !(b >= a && c < a) }'
    assert_line --partial "D took GPU 0 beside A (N=2)"
    assert_line --partial "E: four checkers of two GPUs each, in both orders, all done"
    assert_line 700
    GRADE_GPU_SLOTS=0 run -2 without_bats_env checker/grade/grade -o "$BATS_TEST_TMPDIR/g" "$BATS_TEST_TMPDIR"
    assert_output "grade: GRADE_GPU_SLOTS must be a number from 1 up (labs' checkers at once on a GPU)"
    GRADE_QUEUES=2 run -2 without_bats_env checker/grade/grade -o "$BATS_TEST_TMPDIR/g" "$BATS_TEST_TMPDIR"
    assert_output "grade: GRADE_QUEUES must be 1 (fewer hardware queues where a lab names them) or 0"
}
