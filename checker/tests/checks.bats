#!/usr/bin/env bats
# checks.bats -- the shared helpers of the labs' checkers (lib/checks.bash)
# that decide timing verdicts: the same interval measured twice, and the
# bounded second chance; and what a student reads beside them: the drawing
# of a failed check, Your run beside predictions.txt (lib/your-run.awk), and
# run-checks' showing of a drawing (lib/present.awk). No GPU: a stand-in
# program prints what a lab would.

bats_require_minimum_version 1.5.0

setup() {
    LAB_ID=00-test PROG=fake
    BATS_TEST_DIRNAME_SAVED=$BATS_TEST_DIRNAME
    # checks.bash finds the kit from the checker's folder
    BATS_TEST_DIRNAME=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
    LAB_DIR=$BATS_TEST_TMPDIR/lab
    mkdir -p "$LAB_DIR"
    # shellcheck source=../lib/checks.bash
    . "$BATS_TEST_DIRNAME/lib/checks.bash"
    RUNS=$BATS_TEST_TMPDIR/runs
    mkdir -p "$RUNS"
    echo 0 >"$RUNS/build.rc"
    # fake: prints "speed = N", N from the Nth line of $LAB_DIR/speeds (one
    # line per run), and its arguments
    cat >"$LAB_DIR/fake" <<'EOF'
#!/usr/bin/env bash
n=$(( $(cat "$(dirname "$0")/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$(dirname "$0")/count"
echo "  speed = $(sed -n "${n}p" "$(dirname "$0")/speeds")"
echo "args: $*"
echo "env: ${FAKE_ENV:-unset}"
EOF
    chmod +x "$LAB_DIR/fake"
}

# own_bats ARGS...: the bats run-checks would take (the kit's copy, else the
# machine's; BATS_TEST_DIRNAME is checker/ here, see setup), not the one on
# bats' own PATH, which needs bats' settings; a bats of its own, with none of
# ours' settings (BATS_*), for at most 60 s.
own_bats() {
    local clean=() v b
    b=${BATS:-$BATS_TEST_DIRNAME/vendor/node_modules/bats/bin/bats}
    [ -x "$b" ] || b=$(PATH=/usr/local/bin:/usr/bin:/bin command -v bats)
    for v in $(compgen -e); do
        case $v in BATS_*) clean+=(-u "$v") ;; esac
    done
    env "${clean[@]}" timeout 60 "$b" "$@"
}

# fast_enough RUN: the check under test: speed above 10
fast_enough() {
    local v
    v=$(figure "$1" speed)
    is_true 'v > 10' v="${v:-0}" || say_fail "speed above 10" "speed = $v" "go faster"
}

@test "rerun_lab runs the program again with the same arguments and environment" {
    printf '1\n2\n' >"$LAB_DIR/speeds"
    run_lab first --env FAKE_ENV=yes -- --size 3 "two words"
    rerun_lab first second
    run cat "$RUNS/second.out"
    echo "$output"
    [[ $output == *"speed = 2"* ]]
    [[ $output == *"args: --size 3 two words"* ]]
    [[ $output == *"env: yes"* ]]
    [ "$(rc_of second)" = 0 ]
}

@test "a run with no arguments is run again with none" {
    printf '1\n2\n' >"$LAB_DIR/speeds"
    run_lab first --
    rerun_lab first second
    # run_lab adds the checker's seed, the same for every run of the checker
    grep '^args:' "$RUNS/first.out" "$RUNS/second.out"
    [[ $(grep '^args:' "$RUNS/second.out") =~ ^args:\ --seed\ [0-9]+$ ]]
    [ "$(grep '^args:' "$RUNS/first.out")" = "$(grep '^args:' "$RUNS/second.out")" ]
    [ "$(grep '^env:' "$RUNS/second.out")" = "env: unset" ]
}

# fake_tracer: a stand-in for streamtrace run: it runs the program and
# writes a trace whose meta lines say what capture.c would: the queues it
# was given, and (where $LAB_DIR/share exists) that two streams shared one.
# Each run's CUDA_DEVICE_MAX_CONNECTIONS goes to $LAB_DIR/conn.
fake_tracer() {
    STREAMTRACE=$BATS_TEST_TMPDIR/streamtrace
    cat >"$STREAMTRACE" <<'EOF'
#!/usr/bin/env bash
[ "$1" = run ] && [ "$2" = -o ] && [ "$4" = -- ] || exit 2
trace=$3; shift 4
echo "${CUDA_DEVICE_MAX_CONNECTIONS-unset}" >>"$LAB_DIR/conn"
"$@"; rc=$?
{ printf 'streamtrace 4\n'
  if [ -n "${CUDA_DEVICE_MAX_CONNECTIONS+set}" ]; then
      printf 'meta\tmax_connections\t%s\n' "$CUDA_DEVICE_MAX_CONNECTIONS"
      [ -e "$LAB_DIR/share" ] &&
          printf 'meta\tqueues_shared\t1 queue held two streams or more; the first: device 0, compute channel 1, streams 13 and 14\n'
  fi
  printf 'end\t0\t0\n'; } >"$trace"
exit $rc
EOF
    chmod +x "$STREAMTRACE"
    export LAB_DIR
}

@test "under the grader a traced run gets the lab's QUEUES; its run is kept where no queue held two streams" {
    fake_tracer
    printf '1\n2\n' >"$LAB_DIR/speeds"
    GRADE_QUEUES=1 QUEUES=2 GRADE_STEPS=$BATS_TEST_TMPDIR/steps.tsv run_lab main --trace --
    run cat "$LAB_DIR/conn"
    echo "$output"; [ "$output" = "2" ]
    grep -q 'speed = 1' "$RUNS/main.out"
    grep -q $'^meta\tmax_connections\t2$' "$RUNS/main.trace"
    run cut -f 1,2 "$BATS_TEST_TMPDIR/steps.tsv"
    echo "$output"; [ "$output" = $'run-traced\tmain' ]
}

@test "a traced run whose trace says two streams shared a queue is made again with the driver's queues, and only that run kept" {
    fake_tracer
    touch "$LAB_DIR/share"
    printf '1\n2\n3\n4\n' >"$LAB_DIR/speeds"
    GRADE_QUEUES=1 QUEUES=1 GRADE_STEPS=$BATS_TEST_TMPDIR/steps.tsv run_lab main --trace -- --n 3
    run cat "$LAB_DIR/conn"
    echo "$output"; [ "$output" = $'1\nunset' ]
    grep -q 'speed = 2' "$RUNS/main.out"
    grep -q 'args: --n 3' "$RUNS/main.out"
    ! grep -q max_connections "$RUNS/main.trace"
    [ "$(rc_of main)" = 0 ]
    run cut -f 1,2 "$BATS_TEST_TMPDIR/steps.tsv"
    echo "$output"; [ "$output" = $'run-traced\tmain\nrerun-queues\tmain' ]
    # a re-run of it (second_chance, second_look) tries the lab's queues again
    GRADE_QUEUES=1 QUEUES=1 rerun_lab main main.again1
    run cat "$LAB_DIR/conn"
    echo "$output"; [ "$output" = $'1\nunset\n1\nunset' ]
    grep -q 'speed = 4' "$RUNS/main.again1.out"
}

@test "the driver's queues: no QUEUES, no GRADE_QUEUES, an untraced run, or a run given the variable" {
    fake_tracer
    printf '1\n2\n3\n4\n5\n6\n' >"$LAB_DIR/speeds"
    GRADE_QUEUES=1 run_lab a --trace --
    QUEUES=2 run_lab b --trace --
    GRADE_QUEUES=0 QUEUES=2 run_lab c --trace --
    GRADE_QUEUES=1 QUEUES=2 run_lab d --
    GRADE_QUEUES=1 QUEUES=2 run_lab e --trace --env CUDA_DEVICE_MAX_CONNECTIONS=8 --
    GRADE_QUEUES=1 QUEUES=2 CUDA_DEVICE_MAX_CONNECTIONS=16 run_lab f --trace --
    run cat "$LAB_DIR/conn"
    echo "$output"; [ "$output" = $'unset\nunset\nunset\n8\n16' ]
    [ ! -e "$RUNS/d.trace" ]
    grep -q 'speed = 4' "$RUNS/d.out"
}

@test "a run's own folder gives the checker its trace, and nothing named like the checker's own files" {
    fake_tracer
    # the stand-in tracer also leaves a how and an rc beside the trace
    sed -i 's|^exit \$rc$|echo hostile >"$(dirname "$trace")/how"; echo 0 >"$(dirname "$trace")/rc"; exit 3|' "$STREAMTRACE"
    printf '1\n' >"$LAB_DIR/speeds"
    run_lab main --trace -- --n 7
    cat "$RUNS/main.how"
    [ "$(head -n 1 "$RUNS/main.how")" = 1 ] && ! grep -q hostile "$RUNS/main.how"
    [ "$(rc_of main)" = 3 ]
    grep -q '^streamtrace 4$' "$RUNS/main.trace"
    [ ! -e "$RUNS/.out-main" ]
}

@test "a run that exited 77 where the grader's probe, run as it was, found a GPU fails, in words, once" {
    echo 77 >"$RUNS/main.rc"
    echo "no usable CUDA device: none here (cudaErrorNoDevice)" >"$RUNS/main.err"
    echo "NVIDIA H200, compute capability 9.0, 3 copy engines" >"$RUNS/main.probe"
    run -1 need_run main
    echo "$output"
    [ "${lines[0]}" = "not checked: the program exited 77 (no usable CUDA device), but this node has a GPU: the grader's probe, run as the program was, used NVIDIA H200, compute capability 9.0, 3 copy engines" ]
    [[ $output == *"no usable CUDA device: none here"* ]]
    [[ $output == *"hint:     exit 77 only where lab_pick_device() finds no GPU"* ]]
    run -1 need_run main
    [ "$output" = "not checked: the program did not run to the end (see above)" ]
}

@test "second_chance passes at once, with no note, when the first run passes" {
    printf '20\n' >"$LAB_DIR/speeds"
    run_lab main --
    local out
    out=$(second_chance main fast_enough 3>&1)
    echo "$out"
    [ -z "$out" ]
    [ "$(cat "$LAB_DIR/count")" = 1 ]
}

@test "second_chance passes on a re-run and says so" {
    printf '5\n20\n' >"$LAB_DIR/speeds"
    run_lab main --
    local out
    out=$(second_chance main fast_enough 3>&1)     # the note goes to bats' fd 3
    echo "$out"
    [[ $out == "@note: passed on re-run 1 of 2: the first run speed = 5"* ]]
    [ "$(cat "$LAB_DIR/count")" = 2 ]
}

@test "second_chance gives up after two more runs and lists them all" {
    printf '5\n6\n7\n99\n' >"$LAB_DIR/speeds"
    run_lab main --
    run -1 second_chance main fast_enough
    echo "$output"
    [[ $output == *"seen:     speed = 5"* ]]
    [[ $output == *"run 3 times in all"*"re-run 1: speed = 6; re-run 2: speed = 7"* ]]
    [ "$(cat "$LAB_DIR/count")" = 3 ]
}

# fast_or_hopeless RUN: fast_enough, and a speed of 0 is a cause no run can
# mend (failed_for: HOPELESS)
fast_or_hopeless() {
    local cause=""
    fast_enough "$1" && return 0
    [ "$(figure "$1" speed)" != 0 ] || cause="stopped"
    failed_for "$cause"
}

@test "second_chance makes no re-run when the check says no run can pass" {
    printf '0\n99\n' >"$LAB_DIR/speeds"
    run_lab main --
    run -1 second_chance main fast_or_hopeless
    echo "$output"
    [[ $output == *"seen:     speed = 0"* ]]
    [[ $output != *"re-run"* ]]
    [ "$(cat "$LAB_DIR/count")" = 1 ]
    # a failure that a re-run may mend is still run again
    printf '5\n99\n' >"$LAB_DIR/speeds"
    echo 0 >"$LAB_DIR/count"
    run_lab main2 --
    second_chance main2 fast_or_hopeless 3>/dev/null
    [ "$(cat "$LAB_DIR/count")" = 2 ]
}

# tested_speed RUN: the run put the check to the test when its speed is
# above 15 (for second_look); else say so
tested_speed() {
    local v
    v=$(figure "$1" speed)
    is_true 'v > 15' v="${v:-0}" || { echo "speed $v"; return 1; }
}

@test "second_look stops at the first run that puts the check to the test" {
    printf '20\n' >"$LAB_DIR/speeds"
    run_lab main --
    local out
    out=$(second_look main tested_speed fast_enough 3>&1)
    echo "$out"
    [ -z "$out" ]
    [ "$(cat "$LAB_DIR/count")" = 1 ]
}

@test "second_look fails on a re-run that fails, and says the first run could not show it" {
    printf '12\n5\n' >"$LAB_DIR/speeds"
    run_lab main --
    run -1 second_look main tested_speed fast_enough
    echo "$output"
    [[ $output == *"seen:     speed = 5"* ]]
    [[ $output == *"re-run 1 of 2 showed it; the run before it could not: speed 12"* ]]
    [ "$(cat "$LAB_DIR/count")" = 2 ]
}

@test "second_look never passes a first run that fails" {
    printf '5\n20\n' >"$LAB_DIR/speeds"
    run_lab main --
    run -1 second_look main tested_speed fast_enough
    [ "$(cat "$LAB_DIR/count")" = 1 ]
}

@test "second_look passes, and says so, when no run puts the check to the test" {
    printf '12\n13\n11\n' >"$LAB_DIR/speeds"
    run_lab main --
    local out
    out=$(second_look main tested_speed fast_enough 3>&1)
    echo "$out"
    [[ $out == "@note: not put to the test in 3 runs: speed 11 (another program on the GPU?)" ]]
    [ "$(cat "$LAB_DIR/count")" = 3 ]
}

# A lab's checks may run at once (run-checks, CHECK_JOBS): two checks that
# want the same re-run get one, made by the first while the other waits.
@test "checks at once: a re-run two checks ask for at the same time is made once, and both pass on it" {
    printf '5\n20\n30\n' >"$LAB_DIR/speeds"
    run_lab main --
    # (each run noted at once, then slower than the other check's start:
    # without the lock both would make it)
    sed -i '2i echo run >>"$(dirname "$0")/runs"; sleep 0.3' "$LAB_DIR/fake"
    local a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b
    second_chance main fast_enough >"$a" 3>&1 &
    second_chance main fast_enough >"$b" 3>&1 &
    wait
    cat "$a" "$b"
    [ "$(wc -l <"$LAB_DIR/runs")" = 1 ]
    [[ $(cat "$a") == "@note: passed on re-run 1 of 2: the first run speed = 5"* ]]
    [[ $(cat "$b") == "@note: passed on re-run 1 of 2: the first run speed = 5"* ]]
    [[ $(cat "$RUNS/main.again1.out") == *"speed = 20"* ]]
}

@test "checks at once: what one keeps for the others (kept) is made where missing, and read whole" {
    local f=$RUNS/answer
    run -0 kept "$f" printf 'one\ntwo\n'
    [ "$output" = "$(printf 'one\ntwo')" ]
    run -0 kept "$f" printf 'other\n'
    [ "$output" = "$(printf 'one\ntwo')" ]
    # (no piece of a half-written answer is left beside it)
    [ "$(ls "$RUNS" | grep -c '^answer')" = 1 ]
}

@test "the runs beside the traced one (a bad option, no device) share its seed, and are over when it is" {
    unset LAB_SEED
    printf '1\n2\n3\n' >"$LAB_DIR/speeds"
    run_beside badopt -- --frobnicate
    run_beside nodev --env FAKE_ENV=none --
    run_lab main --
    runs_done
    local s
    s=$(cat "$RUNS/seed")
    [[ $s =~ ^[0-9]+$ ]]
    grep -qx "args: --frobnicate --seed $s" "$RUNS/badopt.out"
    grep -qx "args: --seed $s" "$RUNS/nodev.out"
    grep -qx "env: none" "$RUNS/nodev.out"
    grep -qx "args: --seed $s" "$RUNS/main.out"
    [ "$(rc_of badopt)$(rc_of nodev)$(rc_of main)" = 000 ]
}

@test "a run's digests are computed once however many checks ask, its status and output kept" {
    DIGESTS=$BATS_TEST_TMPDIR/digests LAB_SEED=7
    cat >"$DIGESTS" <<'EOF'
#!/usr/bin/env bash
echo x >>"$(dirname "$0")/digests.calls"
[[ " $* " == *" --bad "* ]] && { echo "digests: bad option --bad" >&2; exit 2; }
echo "digest_a = $*"
printf 'digest_b = two words\n'
EOF
    chmod +x "$DIGESTS"
    printf '1\n1\n1\n1\n' >"$LAB_DIR/speeds"
    run_lab first -- --n "1 2"
    run -0 run_digests first
    [ "$output" = "$(printf 'digest_a = 00-test --n 1 2 --seed 7\ndigest_b = two words')" ]
    run -0 run_digests first
    [ "$output" = "$(printf 'digest_a = 00-test --n 1 2 --seed 7\ndigest_b = two words')" ]
    [ "$(wc -l <"$BATS_TEST_TMPDIR/digests.calls")" = 1 ]
    # a run made anew is computed anew
    sleep 0.01
    run_lab first -- --n 3
    run -0 run_digests first
    [ "$output" = "$(printf 'digest_a = 00-test --n 3 --seed 7\ndigest_b = two words')" ]
    [ "$(wc -l <"$BATS_TEST_TMPDIR/digests.calls")" = 2 ]
    run_lab bad -- --bad
    run -2 run_digests bad
    [ "$output" = "digests: bad option --bad" ]
    run -2 run_digests bad
    [ "$output" = "digests: bad option --bad" ]
    [ "$(wc -l <"$BATS_TEST_TMPDIR/digests.calls")" = 3 ]
}

@test "ask keeps each answer: asked again, or asked ahead in one parse, it starts no streamtrace; a newer trace is asked anew" {
    local real=$STREAMTRACE
    STREAMTRACE=$BATS_TEST_TMPDIR/st
    printf '#!/usr/bin/env bash\necho x >>"%s/st.calls"\nexec "%s" "$@"\n' "$BATS_TEST_TMPDIR" "$real" >"$STREAMTRACE"
    chmod +x "$STREAMTRACE"
    cp "$BATS_TEST_DIRNAME/tests/fixtures/trace/settled.trace" "$RUNS/main.trace"
    ask_ahead main <<'EOF'
        settled nvtx:part
        idle nvtx:part
EOF
    [ "$(wc -l <"$BATS_TEST_TMPDIR/st.calls")" = 1 ]
    run -0 ask main "idle nvtx:part" "settled nvtx:part"
    [ "${lines[0]}" = "idle	1" ]
    [[ "${lines[1]}" == "not-settled	part#1	after	"* ]]
    [ "$(wc -l <"$BATS_TEST_TMPDIR/st.calls")" = 1 ]
    # one new question among kept ones: one parse, for it alone; a bad
    # one is answered error, with status 2, and kept so
    run -2 ask main "idle nvtx:part" "order kernel:k1 kernel:k2" "frob"
    [ "${lines[1]}" = "guaranteed	kernel:10 (stream order) kernel:12" ]
    [ "${lines[2]}" = "error	no such question: frob" ]
    run -2 ask main "frob"
    [ "$(wc -l <"$BATS_TEST_TMPDIR/st.calls")" = 2 ]
    # a trace made anew is asked anew
    sleep 0.01
    touch "$RUNS/main.trace"
    run -0 ask main "idle nvtx:part"
    [ "$(wc -l <"$BATS_TEST_TMPDIR/st.calls")" = 3 ]
    # no trace: what streamtrace said is the checker's, nothing kept
    run ask none "idle nvtx:part"
    [ "$status" -ne 0 ]
    [ ! -d "$RUNS/none.a" ]
}

# lib/checks.bash drops bats' DEBUG trap in subshells (its cost): a failed
# check still names its own line and command, also where a function of the
# lib and a subshell ran before it.
@test "a failed check's report names the line and command that failed, subshells and all" {
    local f=$BATS_TEST_TMPDIR/t.bats
    # (bats would take a line that starts with @test here for one of ours)
    printf '%s\n' "load \"$BATS_TEST_DIRNAME/lib/checks\"" '@''test "one" {' \
        '    v=$(echo a | tr a b; x=$(echo c))' "    is_true '1 < 2'" '    [ "$v" = c ]' '}' >"$f"
    run -1 own_bats --tap "$f"
    echo "$output"
    [[ $output == *"not ok 1 one"* ]]
    [[ $output == *"in test file $f, line 5)"* ]]
    [[ $output == *'`[ "$v" = c ]'"' failed"* ]]
}

@test "same_gpu_time allows 0.5% + 0.1 ms and no more" {
    same_gpu_time 10.14 10
    same_gpu_time 9.86 10
    run ! same_gpu_time 10.16 10
    run ! same_gpu_time 10.46 10     # MB against MiB: 4.9% off
    same_gpu_time 0.2 0.1
    run ! same_gpu_time 0.21 0.1
}

@test "check_event_time holds a printed time against the events around its work; a misplaced event is hopeless" {
    local fx="$BATS_TEST_DIRNAME_SAVED/fixtures/trace/events.trace"
    cp "$fx" "$RUNS/ev.trace"
    # the kernel [3, 7] lies between the events at 2.5 and 7.2 on stream 13
    echo "  k_ms = 4.7" >"$RUNS/ev.out"
    run -0 check_event_time ev kernel 1 k_ms "the kernel" 1 "hint"
    echo "  k_ms = 4.0" >"$RUNS/ev.out"
    run -1 check_event_time ev kernel 1 k_ms "the kernel" 1 "hint"
    echo "$output"
    [[ $output == *"k_ms = the GPU's time between those two events, 4.7 ms"* ]]
    # the copy on stream 14 has no event after it: no run can mend that
    # (HOPELESS: second_chance makes no re-run)
    echo "  c_ms = 1" >"$RUNS/ev.out"
    run -2 check_event_time ev h2d 1 c_ms "the copy" 1 "hint"
    echo "$output"
    [[ $output == *"seen:     an event before it, none after it"* ]]
    # the second kernel's events enclose both kernels
    echo "  k2_ms = 9.7" >"$RUNS/ev.out"
    run -2 check_event_time ev kernel 2 k2_ms "the second kernel" 1 "hint"
    echo "$output"
    [[ $output == *"they enclose 2 operations of that stream, 9.7 ms apart"* ]]
}

# A run is over when the program's own process ends: a child it leaves
# behind (a helper that sleeps, holding its output) is killed, and it never
# got the checker's own descriptors (bats' pipes), which would hold the
# checker up until the child ends. Run as bats runs a lab's checker: a
# setup_file that calls run_lab, in a bats of its own.
@test "a run ends with the program: a child it leaves is killed and holds no pipe of the checker's" {
    cat >"$LAB_DIR/fake" <<'EOF2'
#!/usr/bin/env bash
# the descriptors it got (bash keeps its script on 255), then a helper that
# sleeps holding all of them, and one that leaves the process group
ls -l "/proc/$$/fd" >"$(dirname "$0")/fds"
sleep 20 &
echo "$!" >"$(dirname "$0")/child.pid"
setsid sleep 20 &
echo "$!" >"$(dirname "$0")/setsid.pid"
echo "the program ends"
exit 0
EOF2
    cat >"$BATS_TEST_TMPDIR/run.bats" <<EOF2
setup_file() {
    LAB_ID=00-test PROG=fake LAB_DIR="$LAB_DIR" RUNS="$RUNS"
    BATS_TEST_DIRNAME="$BATS_TEST_DIRNAME"
    . "\$BATS_TEST_DIRNAME/lib/checks.bash"
    RUNS="$RUNS"
    run_lab main --
}
EOF2
    # (bats would take a line that starts with @test here for one of ours)
    printf '%s\n' '@''test "ran" {' '    true' '}' >>"$BATS_TEST_TMPDIR/run.bats"
    local t0 t1
    t0=$(date +%s)
    run own_bats --tap "$BATS_TEST_TMPDIR/run.bats"
    t1=$(date +%s)
    echo "$output"
    cat "$RUNS/main.out"
    echo "the checker took $((t1 - t0)) s; the program's children sleep 20 s"
    [ "$status" = 0 ]
    [ $((t1 - t0)) -lt 10 ]
    [ "$(rc_of main)" = 0 ]
    grep -q '^the program ends$' "$RUNS/main.out"
    cat "$LAB_DIR/fds"
    ! grep -vE '^total| (0|1|2|255) -> ' "$LAB_DIR/fds"
    # (a child killed may linger as a zombie until something reaps it)
    local pid
    pid=$(cat "$LAB_DIR/child.pid")
    ! [ -e "/proc/$pid" ] || grep -q '^[0-9]* (.*) Z ' "/proc/$pid/stat"
}

teardown() {
    # the child that left its group is the grader's to kill (sandbox_kill)
    [ -f "$LAB_DIR/setsid.pid" ] && kill "$(cat "$LAB_DIR/setsid.pid")" 2>/dev/null
    return 0
}

@test "a build stopped by BUILD_TIMEOUT says it did not finish in that time" {
    rm -f "$LAB_DIR/fake"
    printf 'fake:\n\tsleep 10\n' >"$LAB_DIR/Makefile"
    BUILD_TIMEOUT=1
    build_lab
    run -1 check_builds
    echo "$output"
    [[ $output == *"seen:     the build did not finish in 1 s"* ]]
    [[ $output != *"the build failed"* ]]
}

@test "a program stopped by the file size limit says its output passed the limit" {
    printf '#!/bin/sh\nexec yes "all work and no play"\n' >"$LAB_DIR/fake"
    # as the grader runs it (GRADE_FSIZE): the checker under the limit too
    limited() { ( ulimit -f 1024 && run_lab main -- && check_exits_ok main "hint" ); }
    run -1 limited
    echo "$output"
    [ "$(rc_of main)" = $((128 + $(kill -l XFSZ))) ]
    [[ $output == *"not checked: the program was stopped: its output passed the limit of 1 MiB (SIGXFSZ)"* ]]
}

@test "a program killed (SIGKILL) before its time limit is not said to have hung" {
    printf '#!/bin/sh\nkill -KILL $$\n' >"$LAB_DIR/fake"
    RUN_TIMEOUT=30
    run_lab main --
    run -1 check_exits_ok main "hint"
    echo "$output"
    [ "$(rc_of main)" = 137 ]
    [[ $output == *"the program was killed (SIGKILL) after "*" s, before its time limit: out of memory, or killed by another program"* ]]
    [[ $output != *"did not finish"* ]]
}

# ------------------------------------------------------------ learning from the run

@test "a failed check draws the part of its run it judged, once, without colour; a re-run's failure is not drawn" {
    cp "$KIT_ROOT/checker/tests/fixtures/trace/basic.trace" "$RUNS/main.trace"
    DRAW_WIDTH=60
    draw_on_fail main --window nvtx:inner
    run say_fail "this" "that" "a hint"
    echo "$output"
    [ "$status" = 1 ]
    [[ ${lines[3]} == "timeline: your run, the part this check judged"* ]]
    [[ ${lines[4]} == "| your run: "* ]]
    [[ ${lines[5]} == "| window nvtx:inner: 3-4 ms" ]]
    [ "$(grep -c '^timeline:' <<<"$output")" = 1 ]
    [ "$(grep -c $'\033' <<<"$output")" = 0 ]
    # every line of the drawing fits the width asked, and is marked
    [ -z "$(sed -n '5,$p' <<<"$output" | grep -v '^| ')" ]
    [ -z "$(sed -n '5,$p' <<<"$output" | awk 'length($0) > 62')" ]
    # records: the 2nd kernel (empty_kernel at 6 ms) with a margin
    draw_on_fail main --record kernel 2
    run draw_judged
    [[ $output == *"| window 5.990 to 6.010 ms"* ]]
    # a range the run lacks: the whole run, saying why
    draw_on_fail main --window nvtx:nosuch
    run draw_judged
    [[ ${lines[1]} == "| (the whole run: "*nosuch* ]]
    # second_chance's re-runs are not drawn
    cp "$RUNS/main.trace" "$RUNS/main.again1.trace"
    draw_on_fail main.again1
    run say_fail "this" "that"
    [ "${#lines[@]}" = 2 ]
}

# your_block FIGURES [PREDICTIONS]: what run-checks prints as Your run
your_block() {
    printf '%b' "$1" >"$BATS_TEST_TMPDIR/figs"
    local preds=""
    [ $# -gt 1 ] && { printf '%b' "$2" >"$BATS_TEST_TMPDIR/predictions.txt"; preds=$BATS_TEST_TMPDIR/predictions.txt; }
    awk -v preds="$preds" -f "$KIT_ROOT/checker/lib/your-run.awk" "$BATS_TEST_TMPDIR/figs"
}

@test "Your run sets each figure beside its prediction; predictions.txt is read leniently" {
    local figs='ratio\t50\tx\tthe ratio\nshare\t40\t%\tthe share\ncount\t2\tof 4\tthe count\nrate\t-\tGB/s\tthe rate\n'
    run your_block "$figs" '# mine\nratio = 100 x   # a guess\nshare=40.5\n\ncount = 3 of 4\nrate = 5\nbogus = 1\nshare is big\nratio = 3 ms\ncount = lots\n'
    echo "$output"
    [ "$status" = 0 ]
    [[ ${lines[0]} == "  Your run (never graded)"* ]]
    [[ $output == *"ratio"*"50 x"*"you said 100 x: 2 times too high"* ]]
    [[ $output == *"share"*"40 %"*"you said 40.5 %: about right"* ]]
    [[ $output == *"count"*"2 of 4"*"you said 3 of 4: 1 too high"* ]]
    [[ $output == *"rate"*"-"*"you said 5 GB/s: not measured in this run"* ]]
    [[ $output == *'line 7: no question named "bogus" (this lab'"'"'s: ratio, share, count, rate): skipped'* ]]
    [[ $output == *'line 8: "share is big" is not "name = number": skipped'* ]]
    [[ $output == *'line 9: "3 ms": the answer to ratio is in x: skipped'* ]]
    [[ $output == *'line 10: "lots" is not a number: skipped'* ]]
    # no file: the figures, what each is, and where the questions are
    run your_block "$figs"
    [[ $output == *"share"*"40 %"*"the share"* ]]
    [[ ${lines[-1]} == *'"Predict, then measure" (predictions.txt).' ]]
    # nothing measured: nothing, or one line when there are predictions
    run your_block '# not measured: no CUDA device\n'
    [ -z "$output" ]
    run your_block '# not measured: no CUDA device\n' 'ratio = 2\n'
    [ "$output" = "  Your run: not measured (no CUDA device); your predictions wait for a run that gets there" ]
}

@test "run-checks shows a drawing indented, coloured only on a terminal that wants colour" {
    local tap='1..1\nnot ok 1 a check\n# (in test file x.bats, line 1)\n# expected: a\n# seen:     b\n# timeline: your run, the part this check judged\n# | stream 13 |>>##<<|\n# |  thread 1 |[r---]|\n# | legend:  > H2D copy  < D2H copy  # kernel\n'
    run awk -v color=0 -f "$KIT_ROOT/checker/lib/present.awk" <(printf '%b' "$tap")
    echo "$output"
    [[ ${lines[3]} == "          timeline: your run"* ]]
    [ "${lines[4]}" = "            stream 13 |>>##<<|" ]
    [ "$(grep -c $'\033' <<<"$output")" = 0 ]
    run awk -v color=0 -v indent=2 -f "$KIT_ROOT/checker/lib/present.awk" <(printf '%b' "$tap")
    [ "${lines[4]}" = "  stream 13 |>>##<<|" ]
    run awk -v color=1 -f "$KIT_ROOT/checker/lib/present.awk" <(printf '%b' "$tap")
    [[ ${lines[4]} == *$'\033[32m>>\033[0m\033[34m##\033[0m\033[35m<<\033[0m|' ]]
    [[ ${lines[5]} == *$'\033[90m[r---]\033[0m|' ]]
}
