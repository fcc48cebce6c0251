# checker/lib/checks.bash -- what every lab's checker shares.
#
# A lab's .bats file sets LAB_ID and PROG, loads this file, builds and runs the
# program once in setup_file (run_lab), and then each @test inspects what that
# run left behind: its exit status, output, figures and trace. So the checks
# are fast, and every check sees the same run. checker/README.md describes the
# contract between lab programs and this file.
#
# LAB_DIR   the folder with the program to check (default: labs/$LAB_ID)
# RUN_TIMEOUT   seconds one run of the program may take (default 60)
# BUILD_TIMEOUT seconds the build may take (default 180)
# LAB_SEED  the --seed every run gets (default: a new one from /dev/urandom
#           for each checker run; the kit's replays set it)

# (bats gives BATS_TEST_DIRNAME whole: the kit is its parent, no process)
KIT_ROOT=${BATS_TEST_DIRNAME%/*}
LAB_DIR="${LAB_DIR:-$KIT_ROOT/labs/$LAB_ID}"
RUN_TIMEOUT="${RUN_TIMEOUT:-60}"
BUILD_TIMEOUT="${BUILD_TIMEOUT:-180}"
STREAMTRACE="${STREAMTRACE:-$KIT_ROOT/checker/trace/streamtrace}"
DIGESTS="$KIT_ROOT/checker/verify/digests"

# Where setup_file keeps the runs. BATS_FILE_TMPDIR exists from bats 1.4 on.
RUNS="${BATS_FILE_TMPDIR:-${BATS_TMPDIR:-/tmp}}/runs"

# KEEP_RUNS=DIR keeps every run (output, trace) in DIR/LAB_ID.PID after the
# checks, and each event time a check compared in DIR/event-times.txt
# ("LAB FIGURE PRINTED TRACED"): how make test-shared shows what it saw.
teardown_file() {
    write_your_run
    [ -n "${KEEP_RUNS:-}" ] || return 0
    mkdir -p "$KEEP_RUNS" && cp -r "$RUNS" "$KEEP_RUNS/$LAB_ID.$$"
}

# kept_time FIGURE PRINTED TRACED: note one comparison for KEEP_RUNS.
kept_time() {
    [ -n "${KEEP_RUNS:-}" ] || return 0
    mkdir -p "$KEEP_RUNS" && echo "$LAB_ID $1 $2 $3" >>"$KEEP_RUNS/event-times.txt"
}

# ------------------------------------------------------------ step times

# GRADE_STEPS=FILE (the grader sets it; nobody else needs it): each build,
# run and trace query of this checker appends "STEP<TAB>NAME<TAB>SECONDS" to
# FILE, so that the grader can say where a lab's time went (make
# bench-grade). Never read by a check.
# step_now VAR: VAR = the time now in microseconds (bash 5's EPOCHREALTIME: no process)
step_now() { local t=${EPOCHREALTIME:-$(date +%s.%N)}; t=${t//[.,]/}; printf -v "$1" '%s' "${t:0:16}"; }
# step_done STEP NAME T0: note STEP (NAME) begun at T0 (step_now).
step_done() {
    [ -n "${GRADE_STEPS:-}" ] || return 0
    local t=${EPOCHREALTIME:-$(date +%s.%N)} d
    t=${t//[.,]/} t=${t:0:16}
    d=$((10#$t - 10#$3))
    printf '%s\t%s\t%d.%06d\n' "$1" "$2" $((d / 1000000)) $((d % 1000000)) >>"$GRADE_STEPS" 2>/dev/null
    return 0
}

# ------------------------------------------------------------ building

# Build the program (quietly); keep the log and status. Call from setup_file.
# GRADE_PREBUILT=DIR (the grader): the program was built already, by this
# very command in this folder (DIR/build.log and build.rc are its log and
# status, which the checks read as their own), ahead of the runs.
build_lab() {
    local rc=0 t0
    [ -d "$RUNS" ] || mkdir -p "$RUNS"
    if [ -n "${GRADE_PREBUILT:-}" ] && [ -f "$GRADE_PREBUILT/build.rc" ]; then
        cp "$GRADE_PREBUILT/build.log" "$RUNS/build.log"
        cp "$GRADE_PREBUILT/build.rc" "$RUNS/build.rc"
        return 0
    fi
    [ -n "${GRADE_STEPS:-}" ] && step_now t0
    # KIT_ROOT: the folder may be a copy outside the kit (the self-test's)
    timeout -k 5 "$BUILD_TIMEOUT" make --no-print-directory -C "$LAB_DIR" KIT_ROOT="$KIT_ROOT" "$PROG" \
        >"$RUNS/build.log" 2>&1 || rc=$?
    case $rc in 124|137) echo "error: the build did not finish in $BUILD_TIMEOUT s" >>"$RUNS/build.log" ;; esac
    echo "$rc" >"$RUNS/build.rc"
    [ -z "${GRADE_STEPS:-}" ] || step_done build "$PROG" "$t0"
}

# (read, not $(cat ...): these run in every check, and a process costs)
built_ok() { local rc=""; { read -r rc <"$RUNS/build.rc"; } 2>/dev/null; [ "$rc" = 0 ]; }

# ------------------------------------------------------------ running

# lab_seed: the seed of this checker's runs, chosen once (kept in $RUNS/seed):
# LAB_SEED, else 32 random bits. Each run is given --seed with it, so its input
# is new every time, and the kit's digest tool knows what the results must be.
lab_seed() {
    if [ ! -s "$RUNS/seed" ]; then
        [ -d "$RUNS" ] || mkdir -p "$RUNS"
        echo "${LAB_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}" >"$RUNS/seed.$BASHPID" &&
            mv -f "$RUNS/seed.$BASHPID" "$RUNS/seed"
    fi
    put "$RUNS/seed"
}

# run_lab NAME [--trace] [--env VAR=VALUE]... -- ARGS...
# Run the built program once under a timeout (and under the trace tool with
# --trace), given ARGS and --seed (lab_seed); keep NAME.out, NAME.err, NAME.rc
# and NAME.trace in $RUNS.
# Under the grader (GRADE_QUEUES=1), a traced run of a lab that names its
# QUEUES gets that many hardware queues (CUDA_DEVICE_MAX_CONNECTIONS): a
# CUDA start with fewer queues costs the node less (checker/grade/README.md,
# "Choosing JOBS"). Where its trace then says two streams shared a queue, or
# cannot tell (a graph's work), the run is made again with the variable
# unset, as every other run is, and only that run is kept.
run_lab() {
    local name=$1 trace=0 envs=()
    shift
    while [ $# -gt 0 ]; do
        case $1 in
            --trace) trace=1 ;;
            --env) envs+=("$2"); shift ;;
            --) shift; break ;;
        esac
        shift
    done
    [ -d "$RUNS" ] || mkdir -p "$RUNS"
    built_ok || return 0
    # how it was run, for rerun_lab
    local a
    { echo "$trace"; for a in "${envs[@]}"; do echo "$a"; done; echo --
      for a in "$@"; do echo "$a"; done; } >"$RUNS/$name.how"
    local queues=""
    if [ "$trace" = 1 ] && [ "${GRADE_QUEUES:-0}" = 1 ] && [[ ${QUEUES:-} =~ ^[1-9][0-9]?$ ]] &&
        [ -z "${CUDA_DEVICE_MAX_CONNECTIONS+set}" ] && [[ " ${envs[*]} " != *" CUDA_DEVICE_MAX_CONNECTIONS="* ]]; then
        queues=$QUEUES
    fi
    run_once "$name" "$trace" "$queues" "" "$@"
    if [ -n "$queues" ] && queues_shared "$name"; then
        rm -f "$RUNS/$name.trace"
        run_once "$name" "$trace" "" rerun-queues "$@"
    fi
}

# beside CMD...: CMD (a run, or runs: run_lab, a lab's own), made while the
# checker goes on to its next; runs_done waits for every one. For runs that
# cannot change what the next one measures: a run that is over before it
# could reach a GPU (run_beside: a bad option, no device visible), or two
# runs whose checks judge results, not times (lab 06's under the stress tool
# and the sanitizer). Under the grader each run is its to make, one request
# at a time (door_run): there CMD is made at once, as without beside.
BESIDE=()
beside() {
    lab_seed >/dev/null    # (one seed for every run: chosen before they start)
    if [ -n "${GRADE_DOOR:-}" ]; then
        "$@"
        return 0
    fi
    "$@" &
    BESIDE+=("$!")
}
# run_beside NAME [--env VAR=VALUE]... -- ARGS...: run_lab's run NAME, beside.
run_beside() { beside run_lab "$@"; }
runs_done() {
    local p
    for p in "${BESIDE[@]}"; do wait "$p" || true; done
    BESIDE=()
}

# queues_shared NAME: the trace of run NAME, made with fewer hardware queues,
# says two of its streams shared one, or that it cannot tell (capture.c).
queues_shared() {
    grep -q $'^meta\tqueues_shared\t' "$RUNS/$1.trace" 2>/dev/null
}

# run_once NAME TRACE QUEUES STEP ARGS...: run_lab's one run, with its
# envs (QUEUES: the hardware queues it gets, or "" for the driver's
# default; STEP: what GRADE_STEPS calls it, "" for the run's own kind).
run_once() {
    local name=$1 trace=$2 queues=$3 step=$4 runenv=("${envs[@]}")
    shift 4
    [ -z "$queues" ] || runenv+=("CUDA_DEVICE_MAX_CONNECTIONS=$queues")
    local cmd=("$LAB_DIR/$PROG" "$@" --seed "$(lab_seed)")
    # without the trace tool the run goes on untraced: need_trace says why
    [ ! -e "$RUNS/$name.trace" ] || rm -f "$RUNS/$name.trace"
    if [ "$trace" = 1 ] && [ -x "$STREAMTRACE" ]; then
        cmd=("$STREAMTRACE" run -o @OUT@/trace -- "${cmd[@]}")
    fi
    local us
    [ -n "${GRADE_STEPS:-}" ] && step_now us
    launch "$name" "${runenv[@]}" -- "${cmd[@]}"
    if [ -n "${GRADE_STEPS:-}" ]; then
        case $step:$name in
            ?*:*) step_done "$step" "$name" "$us" ;;
            *.again[0-9]*|*.look[0-9]*) step_done rerun "$name" "$us" ;;
            *) step_done "$([ "$trace" = 1 ] && echo run-traced || echo run)" "$name" "$us" ;;
        esac
    fi
}

# launch NAME [VAR=VALUE...] -- CMD...: run CMD once, with those variables,
# under RUN_TIMEOUT: its output in $RUNS/NAME.out and NAME.err, its exit
# status in NAME.rc, its seconds in NAME.secs. The word @OUT@ in CMD is a
# folder of the run's own: the file "trace" it leaves there is then
# $RUNS/NAME.trace (streamtrace run -o @OUT@/trace); nothing else of it is
# taken (a file named like the checker's own, NAME.how, cannot get in).
# The run is over when CMD's own process ends, or its time is up. Here it
# inherits no descriptor of the checker's but 0-2 (its output files): a
# child it leaves behind cannot hold bats' pipes open; and that child is
# killed with its process group (timeout's: timeout leads a group of its
# own, which the program and its children are in).
# Under the grader (GRADE_DOOR) the run is the grader's to make, in a
# sandbox of its own that sees none of the checker's files; whatever it
# started is gone before its results come back (door_run).
launch() {
    local name=$1 envs=() rc=0 t0=$SECONDS out pid f
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    [ -d "$RUNS" ] || mkdir -p "$RUNS"
    [ ! -e "$RUNS/$name.probe" ] || rm -f "$RUNS/$name.probe"
    if [ -n "${GRADE_DOOR:-}" ]; then
        door_run "$name" "${envs[@]}" -- "$@"
        return 0
    fi
    out="$RUNS/.out-$name"
    [ ! -e "$out" ] || rm -rf "$out"
    mkdir -p "$out"
    ( no_inherited_fds
      exec env "${envs[@]}" timeout -k 5 "$RUN_TIMEOUT" "${@//@OUT@/$out}" ) \
        >"$RUNS/$name.out" 2>"$RUNS/$name.err" </dev/null &
    pid=$!
    wait "$pid" 2>/dev/null || rc=$?
    kill -KILL -- "-$pid" 2>/dev/null || true
    echo "$rc" >"$RUNS/$name.rc"
    echo "$((SECONDS - t0))" >"$RUNS/$name.secs"    # describe_exit: a kill, or the time limit?
    f="$out/trace"
    [ -f "$f" ] && [ ! -L "$f" ] && mv -f "$f" "$RUNS/$name.trace"
    rm -rf "$out"
}

# door_run NAME [VAR=VALUE...] -- CMD...: launch's run, made by the grader
# (checker/grade/lib.bash, door_serve): the request goes through the FIFO
# $GRADE_DOOR/in (the counts of variables and words, then each, NUL after
# each), the answer comes back through $GRADE_DOOR/back ("N RC SECONDS
# PROBE"): the run's files are in $GRADE_DOOR/runs/N (out, err, and w/, its
# folder of its own), which only the grader writes once the run is over.
# PROBE: "-", or what the grader's probe printed where the run exited 77
# and the probe, in the same sandbox, found a GPU all the same
# (NAME.probe: need_run). NAME.out, .err and .trace are links to the run's.
door_run() {
    local name=$1 envs=() reply n rc secs probe r f
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    printf '%s\0' "${#envs[@]}" "$#" "${envs[@]}" "$@" >"$GRADE_DOOR/in"
    IFS= read -r reply <"$GRADE_DOOR/back"
    read -r n rc secs probe <<<"$reply"
    r="$GRADE_DOOR/runs/$n"
    if ! [[ $n =~ ^[0-9]+$ ]] || [ ! -d "$r" ]; then
        echo "grade: no answer from the grader for run $name: ${reply:-none}" >"$RUNS/$name.err"
        : >"$RUNS/$name.out"
        echo 125 >"$RUNS/$name.rc"
        echo 0 >"$RUNS/$name.secs"
        return 0
    fi
    # (links, not copies: the run is over, and nothing writes there again;
    # a copy of a run stopped at the file size limit would pass it)
    ln -sfn -- "$r/out" "$RUNS/$name.out"
    ln -sfn -- "$r/err" "$RUNS/$name.err"
    f="$r/w/trace"
    [ -f "$f" ] && [ ! -L "$f" ] && ln -sfn -- "$f" "$RUNS/$name.trace"
    echo "$rc" >"$RUNS/$name.rc"
    echo "$secs" >"$RUNS/$name.secs"
    [ "$probe" = - ] || printf '%s\n' "$probe" >"$RUNS/$name.probe"
}

# no_inherited_fds: close every descriptor above 2 (in the subshell that is
# about to exec a program: bats' own pipes stay the checker's).
no_inherited_fds() {
    local fd
    for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"
    done
    return 0
}

# rc_of RUN: run RUN's exit status (empty where it has none)
rc_of() { local rc; rc_in rc "$1"; echo "$rc"; }
# todo_in VAR RUN: VAR = the first "TODO(" line of RUN's stderr (a TODO the
# program reached while still empty), else empty; kept as RUN.err.todo, so
# that only the first check to ask starts a grep
todo_in() {
    local -n _td_v=$1
    _td_v=""
    run_kept "$RUNS/$2.err" todo grep -m 1 '^TODO(' "$RUNS/$2.err" >/dev/null || true
    { IFS= read -r _td_v <"$RUNS/$2.err.todo"; } 2>/dev/null || true
    return 0
}
# rc_in VAR RUN: VAR = rc_of RUN, in this shell
rc_in() { printf -v "$1" '%s' ""; { read -r "$1" <"$RUNS/$2.rc"; } 2>/dev/null || true; }

# ------------------------------------------------------------ checks at once
#
# run-checks may run a lab's checks at once (CHECK_JOBS: bats --jobs, within
# the lab's file; setup_file's runs are made before any check begins). So
# what a check keeps in $RUNS for the others is written whole under a name
# of its own and then renamed (kept), and a re-run is made once, by the
# first check that needs it, while the others wait for it (rerun_once):
# two programs of one checker never run at once.

# runs_locked CMD...: CMD, holding this checker's lock (flock on RUNS/.lock;
# the program a run starts does not inherit it: launch closes it).
runs_locked() {
    local fd rc=0
    mkdir -p "$RUNS"
    if ! command -v flock >/dev/null 2>&1 || ! { exec {fd}>>"$RUNS/.lock"; } 2>/dev/null; then
        "$@"
        return
    fi
    flock "$fd"
    "$@" || rc=$?
    exec {fd}>&-
    return "$rc"
}

# rerun_once NAME NEW: NEW, a re-run of run NAME (rerun_lab), made unless a
# check made it already.
rerun_once() { runs_locked rerun_missing "$1" "$2"; }
rerun_missing() { [ -f "$RUNS/$2.rc" ] || rerun_lab "$1" "$2"; }

# kept FILE CMD...: what CMD prints, made once (where FILE is empty or
# missing) and kept in FILE for the next check that asks.
kept() {
    local f=$1
    shift
    if ! [ -s "$f" ]; then
        local part="$f.$BASHPID"    # (expanded here: a command's redirection is its child's)
        "$@" >"$part" && mv -f "$part" "$f"
        rm -f "$part"
    fi
    put "$f" 2>/dev/null
}

# put FILE...: the files, as cat prints them (text, no NUL), with no process:
# the checks read their kept answers hundreds of times a lab. 1 where one
# cannot be read.
put() {
    local _f _l=() _rc=0 IFS=
    for _f in "$@"; do
        [ -f "$_f" ] && [ -r "$_f" ] || { _rc=1; continue; }
        mapfile _l <"$_f"    # (each line with its newline; read -d '' reads a byte a call)
        # the lines joined, one write (printf of each line writes each: a
        # reader of a pipe then reads a line a call)
        [ ${#_l[@]} -eq 0 ] || printf '%s' "${_l[*]}"
    done
    return "$_rc"
}

# kept_file VAR FILE SRC CMD...: VAR = FILE, kept (newer than SRC) or made by
# CMD, which prints what FILE holds and keeps it there (tq, run_kept); where
# CMD could not keep it, a file of the run's own with what CMD printed
kept_file() {
    local -n _kf_v=$1
    _kf_v=$2
    kept_ok "$2" "$3" && return 0
    "${@:4}" >/dev/null
    kept_ok "$2" "$3" && return 0
    _kf_v="$RUNS/kept.$BASHPID.$RANDOM"
    "${@:4}" >"$_kf_v"
}

# run_kept FILE WHAT CMD...: what CMD prints of a run's FILE, made once
# (FILE.WHAT, newer than FILE: a run made again makes it again), then read
# with no process. CMD's status is kept too (FILE.WHAT.rc) and returned; a
# status other than 0 or 1 is not kept.
run_kept() {
    local src=$1 f="$1.$2"
    shift 2
    kept_put "$f" "$src" && return "$KEPT_RC"
    keep_out "$f" "$src" 1 "$@" 2>/dev/null
}

# Kept answers. A lab's checks run at once (CHECK_JOBS), each a process, and
# ask the same: the first keeps its answer FILE, then its status FILE.rc,
# and a check reads FILE only once it finds FILE.rc, not empty and newer than
# the file the answer was made from (kept_ok FILE SRC: a run made again under
# its name makes it again). Written by bash alone, no process (a process
# costs 3-8 ms, and a lab's checks keep hundreds of answers): each file is
# created only where it is not there (noclobber, which opens it O_EXCL), so
# that one check writes it; a check that finds it being made makes its own
# answer and keeps nothing. An answer older than its file is removed first.
kept_ok() { [ -s "$1.rc" ] && [ "$1.rc" -nt "$2" ]; }
# kept_put FILE SRC: where FILE is kept (kept_ok), print it and set KEPT_RC
# to its status; 1 (and nothing printed) where it is not
kept_put() { kept_ok "$1" "$2" || return 1; put "$1"; read -r KEPT_RC <"$1.rc"; }
# kept_stale FILE SRC: a kept FILE older than SRC removed, to be made again
kept_stale() { [ ! -e "$1.rc" ] || [ "$1.rc" -nt "$2" ] || rm -f -- "$1" "$1.rc"; }

# keep_out FILE SRC MAX CMD...: what CMD prints, kept as FILE with its status
# (one above MAX is not kept), then printed; CMD's status.
keep_out() {
    local f=$1 src=$2 max=$3 fd="" rc=0
    shift 3
    kept_stale "$f" "$src"
    local -
    set -C
    { exec {fd}>"$f"; } 2>/dev/null || fd=""
    set +C
    if [ -z "$fd" ]; then   # (being made by another check)
        "$@"
        return
    fi
    "$@" >&"$fd" || rc=$?
    exec {fd}>&-
    if [ "$rc" -gt "$max" ]; then
        rm -f -- "$f"
        return "$rc"
    fi
    set -C
    { echo "$rc" >"$f.rc"; } 2>/dev/null || true
    put "$f"
    return "$rc"
}

# keep_text FILE SRC RC TEXT: TEXT (with a newline) kept as FILE with its
# status RC, as keep_out keeps an answer
keep_text() {
    kept_stale "$1" "$2"
    local -
    set -C
    { printf '%s\n' "$4" >"$1"; } 2>/dev/null || return 0
    { echo "$3" >"$1.rc"; } 2>/dev/null || true
    return 0
}

# rerun_lab NAME NEW: run the program again exactly as run NAME was (options,
# environment, trace), kept as NEW.
rerun_lab() {
    local how="$RUNS/$1.how" trace line args=() envs=() past=0
    [ -f "$how" ] || return 1
    { read -r trace
      while IFS= read -r line; do
          if [ "$past" = 0 ]; then
              [ "$line" = -- ] && past=1 || envs+=(--env "$line")
          else
              args+=("$line")
          fi
      done; } <"$how"
    if [ "$trace" = 1 ]; then
        run_lab "$2" --trace "${envs[@]}" -- "${args[@]}"
    else
        run_lab "$2" "${envs[@]}" -- "${args[@]}"
    fi
}

# ------------------------------------------------------------ a second chance

# A few checks compare two times that were measured at different moments
# (lab 03: pinned against pageable bandwidth; lab 05: the pipeline against
# its stages). Another program on the same GPU can slow one of the two, and
# no structure of the trace can tell. The checks of a printed event time
# compare two stamps of the same events, which a switch to another program
# can put apart (same_gpu_time). Those checks, and only those, may look
# at up to RERUNS_MAX more runs of the program and pass on the best, as
# benchmarks take the best of 3. A check of correctness is never re-run to
# pass (second_look, below, re-runs one only to look again).
RERUNS_MAX=2

# note TEXT: a line under a check that passed (run-checks shows it).
note() { echo "@note: $*" >&3; }

# second_chance RUN CHECK...: run the command CHECK... with RUN as its last
# argument; if it fails, run the program again (rerun_lab) up to RERUNS_MAX
# times and run CHECK on each new run; pass as soon as one passes. Says so
# under the check when a re-run was needed. A re-run an earlier check of the
# same run already made (RUN.againN) is looked at again, not made again: it
# is a run of the same program as any new one would be, and each costs the
# node a CUDA start (checker/grade/README.md: what limits a node).
# CHECK returns 2, not 1, when its failure has a cause the trace shows that
# no run of a right program has and every run of this one will (no event
# around the timed work, pageable memory, kernels on the legacy default
# stream...): then no re-run is made, since none could pass the check
# (HOPELESS).
HOPELESS=2

# failed_for CAUSE: the status a check returns once it has said why it
# failed: HOPELESS where CAUSE (what the trace shows, the same in every run)
# is not empty, else 1 (another run may pass). Its last command.
failed_for() { [ -n "$1" ] && return "$HOPELESS"; return 1; }

second_chance() {
    local run=$1 out i seen="" rc=0
    shift
    out=$("$@" "$run" 2>&1) && return 0 || rc=$?
    if [ "$rc" = "$HOPELESS" ]; then
        echo "$out"
        return 1
    fi
    for i in $(seq 1 "$RERUNS_MAX"); do
        rerun_once "$run" "$run.again$i" || break
        if "$@" "$run.again$i" >/dev/null 2>&1; then
            note "passed on re-run $i of $RERUNS_MAX: the first run $(grep -m 1 '^seen:' <<<"$out" | sed 's/^seen: *//')" \
                "(another program on the GPU?)"
            return 0
        fi
        seen+="; re-run $i: $("$@" "$run.again$i" 2>&1 | grep -m 1 '^seen:' | sed 's/^seen: *//')"
    done
    echo "$out"
    echo "note:     the program was run $((i + 1)) times in all (a GPU shared with other programs can slow one run), and no run passed${seen}"
    return 1
}

# second_look RUN TESTED CHECK...: a check whose run may not have put to the
# test the mistake it looks for: a program that reads its results before it
# waits for the GPU gets them right when the GPU happened to be done first,
# as it can be on a GPU that other programs share (lab 02); two host threads
# cannot show their kernels running at once when one was held back until the
# other's kernel had ended (lab 07).
# CHECK RUN must pass; then, if TESTED RUN says that the run could not have
# shown the mistake (it returns non-zero and prints why, in a few words), the
# program is run again (rerun_lab), up to RERUNS_MAX times, and CHECK must
# pass on each new run too, until one run did put it to the test. The
# opposite of second_chance: a re-run can fail the check, never pass one
# that failed. A failure names the re-run that showed it; when no run put it
# to the test, the check passes and says so under it.
second_look() {
    local run=$1 tested=$2 i out why runs=1
    shift 2
    "$@" "$run" || return 1
    why=$("$tested" "$run") && return 0
    for i in $(seq 1 "$RERUNS_MAX"); do
        rerun_once "$run" "$run.look$i" || break
        runs=$((runs + 1))
        if ! out=$("$@" "$run.look$i" 2>&1); then
            echo "$out"
            echo "note:     re-run $i of $RERUNS_MAX showed it; the run before it could not: $why"
            return 1
        fi
        why=$("$tested" "$run.look$i") && return 0
    done
    note "not put to the test in $runs runs: $why (another program on the GPU?)"
}

# describe_exit RC [RUN]: what happened to a run, in a few words: "exited
# 0", "crashed (SIGSEGV)"... 124 is timeout's own status at the time limit;
# 137 (SIGKILL) is the limit too where the run (RUN) lasted that long, else
# a kill from outside (out of memory, another program).
describe_exit() {
    local rc=$1 sig secs=""
    [ -n "${2:-}" ] && { read -r secs <"$RUNS/$2.secs"; } 2>/dev/null
    case $rc in
        137) if [ -n "$secs" ] && [ "$secs" -lt "$RUN_TIMEOUT" ]; then
                 echo "was killed (SIGKILL) after $secs s, before its time limit: out of memory, or killed by another program"
             else
                 echo "did not finish in $RUN_TIMEOUT s (it hangs, or waits forever)"
             fi ;;
        124) echo "did not finish in $RUN_TIMEOUT s (it hangs, or waits forever)" ;;
        77) echo "exited 77 (no CUDA device)" ;;
        "") echo "was not run" ;;
        *) if [ "$rc" -gt 128 ]; then
               sig=$(kill -l $((rc - 128)) 2>/dev/null) || sig=$((rc - 128))
               if [ "$sig" = XFSZ ]; then
                   echo "was stopped: its output passed the limit of $(size_limit) (SIGXFSZ)"
               else
                   echo "crashed (SIG$sig)"
               fi
           else
               echo "exited $rc"
           fi ;;
    esac
}

# size_limit: the largest file a process may write here (ulimit -f), in
# words: "16 MiB"; what SIGXFSZ stops.
size_limit() {
    local kib
    kib=$(ulimit -f)
    case $kib in
        unlimited|"") echo "the file size limit" ;;
        *) if [ $((kib % 1048576)) = 0 ]; then echo "$((kib / 1048576)) GiB"
           elif [ $((kib % 1024)) = 0 ]; then echo "$((kib / 1024)) MiB"
           else echo "$kib KiB"; fi ;;
    esac
}

# ------------------------------------------------------------ verdicts

# say_fail EXPECTED SEEN HINT: print the three lines a student reads, fail.
# A check that called draw_on_fail also draws, under those lines, the part of
# the run's trace it judged (draw_judged), once.
say_fail() {
    echo "expected: $1"
    echo "seen:     $2"
    [ -n "${3:-}" ] && echo "hint:     $3"
    if [ -n "${DRAW_RUN:-}" ]; then
        draw_judged || true
        DRAW_RUN=""
    fi
    return 1
}

# The program reached a TODO that is still empty, or crashed, or hung: every
# check that needs its run says so in the same words, instead of failing on a
# missing figure. No device: skip with the program's own reason.
need_run() {
    local name=${1:-main} rc todo
    if ! built_ok; then
        echo "not checked: the program did not build (see the first check)"
        return 1
    fi
    rc_in rc "$name"
    # "no device" is the grader's finding, not the program's claim: where
    # its probe, run as this run was, used a GPU, an exit 77 is a failure
    if [ "$rc" = 77 ] && [ -s "$RUNS/$name.probe" ]; then
        if [ -e "$RUNS/$name.told" ]; then
            echo "not checked: the program did not run to the end (see above)"
        else
            echo "not checked: the program exited 77 (no usable CUDA device), but this node has a GPU:" \
                "the grader's probe, run as the program was, used $(head -n 1 "$RUNS/$name.probe")"
            sed -n '1,3s/^/          /p' "$RUNS/$name.err"
            echo "hint:     exit 77 only where lab_pick_device() finds no GPU; keep its call as given"
        fi
        touch "$RUNS/$name.told"
        return 1
    fi
    if [ "$rc" = 77 ]; then
        # "no CUDA device" starts the reason of every check that needs a GPU
        # (run-checks counts them: not graded); then the program's own reason,
        # without the CUDA error's name: "... no NVIDIA driver found (...)"
        skip "no CUDA device: $(head -n 1 "$RUNS/$name.err" |
            sed -e 's/^no usable CUDA device: //' -e 's/ (cudaError[A-Za-z]*)$//')"
    fi
    todo_in todo "$name"
    # the reason is spelled out once; later checks refer to it
    if [ -n "$todo" ] || { [ "$rc" != 0 ] && [ "$rc" != 1 ]; }; then
        if [ -e "$RUNS/$name.told" ]; then
            echo "not checked: the program did not run to the end (see above)"
        elif [ -n "$todo" ]; then
            echo "not checked: the program stopped at $todo"
            echo "hint:     do the TODOs in order: the .cu file's header lists them"
        else
            echo "not checked: the program $(describe_exit "$rc" "$name")"
            sed -n '1,5s/^/          /p' "$RUNS/$name.err"
        fi
        touch "$RUNS/$name.told"
        return 1
    fi
}

# figure NAME KEY: the value the program printed as "KEY = value" (or nothing).
figure() {
    local _f=""
    figure_in _f "$1" "$2" || return
    [ -z "$_f" ] || printf '%s\n' "$_f"
}

# figure_in VAR NAME KEY: VAR = figure NAME KEY, in this shell. The first
# "KEY = value" of each KEY is kept (RUN.out.figures, run_kept) and read with
# no process; a run that printed more than 2000 such keys is read with awk
# each time.
figure_in() {
    local -n _fi_v=$1
    local _fi_k _fi_x
    _fi_v=""
    # (the kept file is read once it is whole, its status written: another
    # check may be making it now, and then the run's output is read here)
    if run_kept "$RUNS/$2.out" figures awk '$2 == "=" && !($1 in seen) { seen[$1]; print $1, $3; if (++n > 2000) exit 3 }' \
        "$RUNS/$2.out" >/dev/null && kept_ok "$RUNS/$2.out.figures" "$RUNS/$2.out"; then
        while read -r _fi_k _fi_x; do
            [ "$_fi_k" = "$3" ] && { _fi_v=$_fi_x; return 0; }
        done <"$RUNS/$2.out.figures"
        return 0
    fi
    _fi_v=$(awk -v k="$3" '$1 == k && $2 == "=" { print $3; exit }' "$RUNS/$2.out")
}

# need_figure NAME KEY: like figure, but fails the check when it is missing.
need_figure() {
    local v
    need_figure_in v "$1" "$2" || return 1
    echo "$v"
}
# need_figure_in VAR NAME KEY: VAR = need_figure NAME KEY, in this shell
need_figure_in() {
    local -n _nf_v=$1
    figure_in "$1" "$2" "$3" || true
    if [ -z "$_nf_v" ]; then
        say_fail "a line \"$3 = <number>\" in the output" "no such line" \
            "keep the lab_figure(\"$3\", ...) call that prints it" >&2
        return 1
    fi
}

# gpus RUN: the GPUs run RUN used, as a lab of several GPUs prints them (its
# figure "gpus"), a whole number; nothing where it printed none.
gpus() { local v; v=$(figure "${1:-main}" gpus); echo "${v%%.*}"; }

# need_gpus N [RUN]: skip the check where the run (default main) had fewer
# than N GPUs. "needs N GPUs" starts the reason: run-checks, the reports
# and the grader count such a check as not graded, like one with no GPU.
need_gpus() {
    local have
    have=$(gpus "${2:-main}")
    [ "${have:-0}" -ge "$1" ] || skip "needs $1 GPUs: this machine has ${have:-no figure gpus, so 1}"
}

# is_true EXPR [VAR=VALUE...]: evaluate a comparison of numbers with awk.
#   is_true 'a < 0.25 * b' a=0.1 b=2
is_true() {
    local expr=$1 vars=() a
    shift
    for a in "$@"; do vars+=(-v "$a"); done
    awk "${vars[@]}" "BEGIN { exit !($expr) }" </dev/null
}

# announced_in VAR WHAT: what the program announced in its first line
# ("PROG: N elements (...), S steps each, ..."): N (WHAT elements) or S
# (steps); read by bash, no process
announced_in() {
    local -n _an_v=$1
    local _an_l _an_w _an_i
    _an_v=""
    while IFS= read -r _an_l; do
        [[ $_an_l =~ ^$PROG:\ [0-9]+\ elements ]] || continue
        read -r -a _an_w <<<"$_an_l"
        if [ "$2" = elements ]; then
            _an_v=${_an_w[1]}
        else
            for ((_an_i = 1; _an_i + 1 < ${#_an_w[@]}; _an_i++)); do
                [ "${_an_w[_an_i + 1]}" = steps ] && { _an_v=${_an_w[_an_i]}; break; }
            done
        fi
        return 0
    done <"$RUNS/main.out"
}
# elements: the elements the program announced
elements() { local n; announced_in n elements; echo "$n"; }

# calc [-f FORMAT] EXPR [NAME=VALUE...]: EXPR, awk's arithmetic over the
# NAMEs, printed as FORMAT (default "%.6g\n"); nothing where a NAME's value
# is empty. (A division: ratio, pct.)
#   calc '1000 * l' l=0.0072        calc -f '%.0f%%' '100 * f' f=0.4
calc() {
    local fmt='%.6g\n' vars=() a
    [ "$1" = -f ] && { fmt=$2; shift 2; }
    local expr=$1
    shift
    for a in "$@"; do
        [ -n "${a#*=}" ] || return 0
        vars+=(-v "$a")
    done
    awk -v fmt="$fmt" "${vars[@]}" "BEGIN { printf fmt, $expr }" </dev/null
}

# is_positive WORD: WORD is a number above 0 (in bash: no process).
is_positive() {
    [[ $1 =~ ^\+?([0-9]*\.?[0-9]*)([eE][-+]?[0-9]+)?$ ]] && [[ ${BASH_REMATCH[1]} == *[1-9]* ]]
}

# words_of N LINES: the Nth word of each of LINES, each once, sorted, each
# followed by a space ("created default "; in bash: no process)
words_of() {
    local line w i out=() seen=" "
    while read -r -a line; do
        w=${line[$1 - 1]:-}
        [ -n "$w" ] && [[ $seen != *" $w "* ]] || continue
        seen+="$w "
        for ((i = ${#out[@]}; i > 0; i--)); do
            [[ ${out[i - 1]} > $w ]] || break
            out[i]=${out[i - 1]}
        done
        out[i]=$w
    done <<<"$2"
    [ ${#out[@]} -eq 0 ] || printf '%s ' "${out[@]}"
}

# ns_of VAR MS: VAR = MS, a time as streamtrace prints it (ms with six
# decimals), in ns: an integer bash compares (0 for an empty MS)
ns_of() {
    local -n _ns_v=$1
    local _ns_i=${2%%.*} _ns_f=${2#*.}
    [[ $2 == *.* ]] || _ns_f=""
    _ns_f=${_ns_f}000000
    _ns_v=$((10#${_ns_i:-0} * 1000000 + 10#${_ns_f:0:6}))
}

# last_end LINES: the latest end (the second field) of `list` lines, as
# printed; nothing where there are none
last_end() {
    local f b="" bn=-1 n
    # (thousands of lines, a timed loop's kernels: one awk, not a bash loop
    # of a few reads a line)
    if [ ${#1} -gt 32768 ]; then
        awk -F'\t' '$2 != "" && (b == "" || $2 + 0 > b + 0) { b = $2 } END { printf "%s", b }' <<<"$1"
        return
    fi
    while IFS=$'\t' read -r -a f; do
        [ -n "${f[1]:-}" ] || continue
        ns_of n "${f[1]}"
        [ "$n" -le "$bn" ] || { bn=$n; b=${f[1]}; }
    done <<<"$1"
    printf '%s' "$b"
}

# fmt NUMBER: a number as a student reads it (4 significant digits).
fmt() { awk -v x="$1" 'BEGIN { printf "%.4g", x }'; }

# ------------------------------------------------------------ the trace

# q_key VAR QUESTION: in VAR, the file name under which tq and ask keep
# QUESTION's answer (%, /, space and tab spelt %25 %2F %20 %09)
q_key() {
    local _qk=$2
    _qk=${_qk//%/%25} _qk=${_qk//\//%2F} _qk=${_qk// /%20} _qk=${_qk//$'\t'/%09}
    printf -v "$1" '%s' "$_qk"
}

# tq NAME QUESTION ARGS...: ask the trace of run NAME a question.
# Each answer is kept (RUNS/NAME.q/, with its exit status) and read again
# while the trace is not newer than it: a lab's checks, each a process of
# its own, ask many the same (lab 10's replay: 35 of 96 queries asked
# before), and a query parses the whole trace.
tq() {
    local name=$1 t0 rc=0 key c
    shift
    q_key key "$*"
    c="$RUNS/$name.q/$key"
    if [ ${#key} -le 200 ] && kept_put "$c" "$RUNS/$name.trace"; then
        return "$KEPT_RC"
    fi
    [ -z "${GRADE_STEPS:-}" ] || step_now t0
    if [ ${#key} -le 200 ] && { [ -d "$RUNS/$name.q" ] || mkdir -p "$RUNS/$name.q" 2>/dev/null; }; then
        keep_out "$c" "$RUNS/$name.trace" 255 \
            "$STREAMTRACE" query "$RUNS/$name.trace" "$@" 2>>"$RUNS/$name.tq.err" || rc=$?
    else
        "$STREAMTRACE" query "$RUNS/$name.trace" "$@" 2>>"$RUNS/$name.tq.err" || rc=$?
    fi
    [ -z "${GRADE_STEPS:-}" ] || step_done trace-query "$name" "$t0"
    return "$rc"
}

# tq_in VAR RUN QUESTION...: VAR = $(tq RUN QUESTION...) (its trailing
# newlines dropped) and tq's status, in this shell: a kept answer is read
# with no process.
tq_in() {
    local -n _tq_v=$1
    local _tq_k _tq_c _tq_r
    shift
    q_key _tq_k "${*:2}"
    _tq_c="$RUNS/$1.q/$_tq_k"
    if [ ${#_tq_k} -le 200 ] && kept_ok "$_tq_c" "$RUNS/$1.trace"; then
        _tq_v=$(<"$_tq_c")
        read -r _tq_r <"$_tq_c.rc"
        return "$_tq_r"
    fi
    _tq_v=$(tq "$@")
}

# tq_file VAR RUN QUESTION...: VAR = a file that holds tq RUN QUESTION...'s
# answer (the kept one, asked if need be), for a check that walks its lines:
# `while read ...; done <"$f"` reads a file a line a call, where a pipe or a
# here-string (`< <(tq ...)`, `<<<"$answer"`) is read a byte a call (a list
# of a run's calls: tens of thousands of reads)
tq_file() {
    local _tf_k
    q_key _tf_k "${*:3}"
    kept_file "$1" "$RUNS/$2.q/$_tf_k" "$RUNS/$2.trace" tq "${@:2}"
}

# tq_lines ARRAY RUN QUESTION...: ARRAY = the lines of tq RUN QUESTION...,
# in this shell, read from tq_file's file
tq_lines() {
    local -n _tq_a=$1
    local _tq_f
    shift
    tq_file _tq_f "$@"
    mapfile -t _tq_a <"$_tq_f"
}

# tq_line ARRAY RUN LINE QUESTION...: ARRAY = the tab-separated fields of
# the LINEth line (1 the first) of tq RUN QUESTION..., none where there is
# no such line; in this shell, as tq_in.
tq_line() {
    local -n _tl_v=$1
    local _tl_a _tl_l _tl_n=0
    _tl_v=()
    tq_in _tl_a "$2" "${@:4}"
    while IFS= read -r _tl_l; do
        _tl_n=$((_tl_n + 1))
        [ "$_tl_n" = "$3" ] || continue
        IFS=$'\t' read -r -a _tl_v <<<"$_tl_l"
        break
    done <<<"$_tl_a"
    return 0
}

# tq_field VAR RUN LINE FIELD QUESTION...: VAR = the FIELDth field (1 the
# first) of that line (tq_line), or nothing.
tq_field() {
    local -n _tf_v=$1
    local _tf_f=()
    tq_line _tf_f "$2" "$3" "${@:5}"
    _tf_v=${_tf_f[$4 - 1]:-}
}

# apart RUN A B: how the program left records A and B (ask's references),
# from streamtrace ask both ways: "free" where neither is ordered after the
# other (not-ordered, or observed-only: the GPU happened to run one first),
# "ordered<TAB>1<TAB>CHAIN" where B is ordered after A ("2": A after B),
# "unknown<TAB>WHY" where the trace cannot tell (or gave no answer). What
# may run at once is judged so (labs 07 and 10), not by a measured overlap.
apart() {
    local a why x=() w=() i
    while IFS=$'\t' read -r a why; do x+=("$a"); w+=("$why"); done \
        < <(ask "$1" "order $2 $3" "order $3 $2")
    for i in 0 1; do
        case ${x[i]:-none} in
            guaranteed) printf 'ordered\t%d\t%s\n' $((i + 1)) "${w[i]}"; return 0 ;;
            unknown|none) printf 'unknown\t%s\n' "${w[i]:-no answer}"; return 0 ;;
        esac
    done
    echo free
}

# pageable_dirs ARRAY RUN [WINDOW...]: the directions (H2D, D2H) of RUN's
# copies from or to pageable memory, each once, in the order they came
# (labs 02 and 05 name them in a hint)
pageable_dirs() {
    local -n _pd=$1
    local _pd_l _pd_f
    _pd=()
    tq_in _pd_l "$2" list copy --mem PAGEABLE "${@:3}"
    while IFS=$'\t' read -r -a _pd_f; do
        [ -n "${_pd_f[5]:-}" ] && [[ " ${_pd[*]} " != *" ${_pd_f[5]} "* ]] && _pd+=("${_pd_f[5]}")
    done <<<"$_pd_l"
    return 0
}

# tq_ahead RUN: the questions on stdin (one a line, as tq takes them, its
# words separated by one space) answered from one parse of RUN's trace
# (`streamtrace query FILE -`) and kept where tq keeps its answers: a check
# that asks one then starts no process. In setup_file, after the run: no
# check reads the answers yet. A question no check asks costs a little of
# that one process; one it asks that is not here is answered by tq.
tq_ahead() {
    local name=$1 t0 qs=() q k keys="" tab=$'\t'
    questions_in qs
    [ ${#qs[@]} -gt 0 ] && [ -f "$RUNS/$name.trace" ] && [ -x "$STREAMTRACE" ] || return 0
    [ -d "$RUNS/$name.q" ] || mkdir -p "$RUNS/$name.q" 2>/dev/null || return 0
    for q in "${qs[@]}"; do q_key k "$q"; keys+=$k$'\n'; done
    [ -z "${GRADE_STEPS:-}" ] || step_now t0
    printf '%s\n' "${qs[@]// /$tab}" | "$STREAMTRACE" query "$RUNS/$name.trace" - 2>>"$RUNS/$name.tq.err" |
        awk -v dir="$RUNS/$name.q" -v keys="$keys" '
            BEGIN { n = split(keys, k, "\n") - 1
                    for (i = 1; i <= n; i++)
                        key[i] = length(k[i]) <= 200 ? dir "/" k[i] : ""
                    i = 1 }
            # (each line written as it comes: an answer may be the whole trace)
            { c = index($0, "\036"); f = i <= n ? key[i] : "" }
            c == 0 { if (f != "") print > f; next }
            f != "" { printf "%s", substr($0, 1, c - 1) > f; close(f)
                      print substr($0, c + 1) > (f ".rc"); close(f ".rc") }
            { i++ }'
    [ -z "${GRADE_STEPS:-}" ] || step_done trace-ahead "$name" "$t0"
    return 0
}

# SETTLED_FIELDS: the tab-separated fields of an answer to `ask settled` or
# `idle`, in their order (streamtrace help): a reader says
# `local $SETTLED_FIELDS` and `IFS=$'\t' read -r $SETTLED_FIELDS`.
SETTLED_FIELDS="answer range how ms ref what st kind sync dev queued_ms ended_ms tid waits"

# ask RUN QUESTION...: what the program of RUN guaranteed (`streamtrace ask`:
# stream order, events and waits, host waits, the legacy default stream,
# graph launches), one answer line per question, in order: "guaranteed
# CHAIN", "observed-only", "not-ordered", "unknown WHY", or "none" (no such
# record). A QUESTION may hold several, one a line: one parse answers all
# those not answered before. Each answer is kept (RUNS/RUN.a/, with its
# status: 2 for an "error", else 0) and read again while the trace is not
# newer than it, as tq keeps its own; the status, the worst of them.
ask() {
    local name=$1 t0 rc=0 r q c out qs=() miss=() keys=() a=() i
    shift
    # the questions a line, blank lines left out (split by bash: no process)
    local - ifs=$IFS
    set -f
    IFS=$'\n'
    for q in $*; do [[ $q == *[![:space:]]* ]] && qs+=("$q"); done
    IFS=$ifs
    set +f
    [ ${#qs[@]} -gt 0 ] || return 0
    for q in "${qs[@]}"; do
        q_key c "$q"
        [ ${#c} -le 200 ] || { keys=(); break; }
        c="$RUNS/$name.a/$c"
        keys+=("$c")
        kept_ok "$c" "$RUNS/$name.trace" || miss+=("$q")
    done
    [ -z "${GRADE_STEPS:-}" ] || step_now t0
    if [ ${#keys[@]} -eq 0 ]; then      # (a question too long to keep)
        printf '%s\n' "${qs[@]}" | "$STREAMTRACE" ask "$RUNS/$name.trace" - 2>>"$RUNS/$name.tq.err" || rc=$?
        [ -z "${GRADE_STEPS:-}" ] || step_done trace-query "$name" "$t0"
        return "$rc"
    fi
    local -A made=()
    local tab=$'\t'
    if [ ${#miss[@]} -gt 0 ]; then
        out=$(printf '%s\n' "${miss[@]}" | "$STREAMTRACE" ask "$RUNS/$name.trace" - 2>>"$RUNS/$name.tq.err") || rc=$?
        [ -n "$out" ] && mapfile -t a <<<"$out"
        # (an answer a question: else the trace could not be read, and
        # what it said is on stderr)
        [ ${#a[@]} -eq ${#miss[@]} ] && { [ -d "$RUNS/$name.a" ] || mkdir -p "$RUNS/$name.a" 2>/dev/null; } || {
            [ -z "$out" ] || printf '%s\n' "$out"
            [ -z "${GRADE_STEPS:-}" ] || step_done trace-query "$name" "$t0"
            return "$rc"
        }
        i=0
        for q in "${miss[@]}"; do
            q_key c "$q"
            c="$RUNS/$name.a/$c"
            r=0
            [[ ${a[$i]} == error* ]] && r=2
            keep_text "$c" "$RUNS/$name.trace" "$r" "${a[$i]}"
            made[$c]=$r$tab${a[$i]}
            i=$((i + 1))
        done
        [ -z "${GRADE_STEPS:-}" ] || step_done trace-query "$name" "$t0"
    fi
    rc=0
    for c in "${keys[@]}"; do
        if [ -n "${made[$c]+set}" ]; then
            r=${made[$c]%%"$tab"*}
            printf '%s\n' "${made[$c]#*"$tab"}"
        else
            put "$c"
            read -r r <"$c.rc"
        fi
        [ "$r" -le "$rc" ] || rc=$r
    done
    return "$rc"
}

# ask_ahead RUN: the questions on stdin (one a line, as ask takes them)
# answered from one parse of RUN's trace and kept where ask keeps its
# answers: a check that asks one then starts no process. In setup_file,
# after the run (tq_ahead's counterpart).
ask_ahead() {
    local qs=() all
    questions_in qs
    [ ${#qs[@]} -gt 0 ] && [ -f "$RUNS/$1.trace" ] && [ -x "$STREAMTRACE" ] || return 0
    printf -v all '%s\n' "${qs[@]}"
    ask "$1" "$all" >/dev/null 2>&1
    return 0
}

# questions_in ARRAY: the lines on stdin, each without its leading blanks,
# blank lines left out (tq_ahead's and ask_ahead's questions; read by bash:
# no process)
questions_in() {
    local -n _qi_a=$1
    local _qi_q
    _qi_a=()
    while IFS= read -r _qi_q || [ -n "$_qi_q" ]; do
        _qi_q=${_qi_q#"${_qi_q%%[![:space:]]*}"}
        [ -z "$_qi_q" ] || _qi_a+=("$_qi_q")
    done
    return 0
}

# unguaranteed RUN: of the questions on stdin, "QUESTION<TAB>LABEL" a line
# (streamtrace ask's words; LABEL: what the hint calls it), each one the
# program of RUN did not guarantee, as "LABEL<TAB>ANSWER<TAB>WORDS<TAB>WHY":
# ANSWER observed-only, not-ordered, unknown or none, WORDS the answer for a
# student ("not ordered by the program (in this run it came out in order)",
# "unknown (WHY)"), WHY the rest of streamtrace's answer (the missing edge:
# "nothing orders kernel:14 after copy:10"). One parse of the trace answers
# them all; no questions, nothing.
unguaranteed() {
    local q a
    q=$(cat)
    [ -n "$q" ] || return 0
    mapfile -t a < <(ask "$1" "$(cut -f 1 <<<"$q")")
    paste <(cut -f 2 <<<"$q") <(printf '%s\n' "${a[@]}") | awk -F'\t' '$2 != "guaranteed" {
        w = $2 == "not-ordered" ? "not ordered by the program" : \
            $2 == "observed-only" ? "not ordered by the program (in this run it came out in order)" : \
            $2 " (" $3 ")"
        print $1 "\t" $2 "\t" w "\t" $3 }'
}

# ran_on ENDED_MS MS: what a record that no wait covered did after MS (a
# range's edge, of an answer to `ask settled`, `idle` or `done`): "ran on
# until ENDED_MS ms", or "had ended by then, as it happened".
ran_on() {
    if is_true 'e > m' e="$1" m="$2"; then printf 'ran on until %.3f ms\n' "$1"
    else echo "had ended by then, as it happened"; fi
}

# timings RUN: each cudaEventElapsedTime call of RUN, a line each, in call
# order: "K START STOP WORK RANGE<TAB>ORDER<TAB>WAIT". START and STOP: the GPU's
# stamps (ms) of the two event records the call read ("-" where none); WORK:
# what its thread queued between the two records, by kind ("H2D:1",
# "H2D:16,kernel:16,D2H:16"; "-" nothing); RANGE: the NVTX range the first of
# that work was queued in; ORDER and WAIT: "ok", or why not (streamtrace
# ask's `timings` and `elapsed`: what the program guaranteed, not when this
# run's work ran).
timings() {
    local t e x y i
    t=$(ask "$1" timings)
    e=$(ask "$1" elapsed)
    IFS=$'\t' read -r -a x <<<"$t"
    IFS=$'\t' read -r -a y <<<"$e"
    for ((i = 1; i < ${#x[@]}; i++)); do
        printf '%d %s\t%s\t%s\n' "$i" "${x[$i]}" "${y[$((2 * i - 1))]:-}" "${y[$((2 * i))]:-}"
    done
}

# timing_in RUN RANGE: the first of RUN's timings (above) whose work was
# queued in the NVTX range RANGE; nothing where none was.
timing_in() {
    local k lo hi work range rest
    while read -r k lo hi work range rest; do
        [ "$range" != "$2" ] || { printf '%s %s %s %s %s\t%s\n' "$k" "$lo" "$hi" "$work" "$range" "$rest"; return 0; }
    done < <(timings "$1")
}

# work_words WORK: timings' WORK ("H2D:16,kernel:16,D2H:16") in words
# ("16 H2D copies, 16 kernels and 16 D2H copies"; "no GPU work").
work_words() {
    local p o="" i n parts
    [ "$1" != - ] || { echo "no GPU work"; return; }
    IFS=, read -r -a parts <<<"$1"
    n=${#parts[@]}
    for ((i = 0; i < n; i++)); do
        p=${parts[$i]}
        [ "$i" -eq 0 ] || { [ "$i" -eq $((n - 1)) ] && o+=" and " || o+=", "; }
        case ${p%%:*} in
            H2D | D2H | D2D | H2H | P2P | UNKNOWN) o+="${p#*:} ${p%%:*} cop$([ "${p#*:}" = 1 ] && echo y || echo ies)" ;;
            *) o+="${p#*:} ${p%%:*}$([ "${p#*:}" = 1 ] || echo s)" ;;
        esac
    done
    echo "$o"
}

# records RUN SEL...: `tq RUN corr SEL` for each SEL, one after the other:
# the `list` line of each record (START END DUR KIND STREAM NAME BYTES MEM
# DEVICE THREAD), then CORR, the correlation id of the runtime call that
# queued it (an api record: its own), and ASYNC, for a copy 1 where an async
# call queued it, else 0 ("-" for the others). Times in ms from the trace's
# first record, exact to the ns.
# Each answer is tq's, kept where tq keeps it (RUNS/RUN.q/) and read again
# by the next check with no process: a lab's checks ask the same (lab 08:
# api, kernel, copy, event in most checks). The exit status: the last SEL's.
records() {
    local run=$1 sel rc=0
    shift
    for sel in "$@"; do
        rc=0
        tq "$run" corr "$sel" || rc=$?
    done
    return "$rc"
}

# timed_pairs RUN: one line per cudaEventElapsedTime call of RUN, in the
# order of the calls: "K<TAB>ORDER<TAB>WAIT" (streamtrace ask's `elapsed`).
# The call's start and stop are the records the trace names (format 6's
# `elapsed` lines), else the last two events its host thread recorded.
# ORDER is "ok" where the program made the GPU order those events with the
# work its thread queued between their two records, and
# the work queued right before the start after it or waited for, else why
# not, in words: by the model of what the program guaranteed (stream order,
# the legacy default stream against blocking streams, event waits, host
# waits; CUDA Runtime API, "Stream synchronization behavior"), not by when
# this run's work happened to run. WAIT is "ok" where a host wait after the
# stop event's record covered it before cudaEventElapsedTime (the call
# returns cudaErrorNotReady while an event is not complete), else why not.
# A trace older than format 5 has no node of an event record (streamtrace
# ask answers `unknown`): one line that says so, which fails the checks that
# read it (the trace tool of the kit writes format 6). Labs 01-04.
timed_pairs() {
    local f k=0 i why
    IFS=$'\t' read -r -a f <<<"$(ask "$1" elapsed)"
    if ! [[ ${f[0]:-} =~ ^[0-9]+$ ]]; then
        why="the trace cannot tell which records the timings read (${f[1]:-no answer}): make -C checker/trace, then run again"
        printf '1\t%s\t%s\n' "$why" "$why"
        return 0
    fi
    for ((i = 1; i + 1 < ${#f[@]}; i += 2)); do
        k=$((k + 1))
        printf '%s\t%s\t%s\n' "$k" "${f[i]}" "${f[i + 1]}"
    done
}

# events_around NAME SEL K: the Kth record of SEL in run NAME, with the CUDA
# events recorded on its stream right before and right after it (streamtrace
# query ... events): "FROM TO WINDOW INSIDE" in ms, INSIDE the number of GPU
# operations of that stream between the two; "-" where there is no event;
# nothing when there is no Kth record.
events_around() {
    tq "$1" events "$2" | sed -n "${3}p" |
        awk -F'\t' '{ print $(NF - 3), $(NF - 2), $(NF - 1), $NF }'
}

# same_gpu_time PRINTED TRACED: a cudaEventElapsedTime the program printed is
# the GPU's own time between the same two events in the trace, within
# EVENT_TOL_REL of it + EVENT_TOL_MS. The trace's stamps are CUPTI's, taken
# beside the event's own: alone on an H200 the two differed by at most 3 us
# in lab 01, 02 and 04 runs and 14 us in lab 03's; with 8 checkers at once
# on an H100 (the kit's shared-GPU test, 1269 pairs) by up to 59 us, and
# once 28 us on a 0.14 ms interval, whatever the length: the GPU switches
# between the programs sharing it. Grading a class 8 submissions at once on
# an H100 (checker/grade/gpu-class.sh), one lab 01 H2D copy of 9.8 ms was
# 0.28 ms longer in the trace than its printed time: a switch to another
# program fell between the two stamps of one event. So every check that
# compares them runs its comparison through second_chance (a misplaced event
# or a unit slip is wrong in every run, a switch in one). A unit slip (MiB
# for MB, 4.9%) still shows on every interval of 5 ms or more.
EVENT_TOL_REL=0.005
EVENT_TOL_MS=0.1
same_gpu_time() {
    is_true 'p >= t - (r * t + a) && p <= t + r * t + a' p="$1" t="$2" \
        r="$EVENT_TOL_REL" a="$EVENT_TOL_MS"
}

# check_event_time NAME SEL K FIGURE WHAT COUNT HINT: the figure FIGURE that
# run NAME printed is the time between the events around the Kth record of
# SEL (WHAT, in words), and those events enclose COUNT operations of its
# stream (that record, and what was timed with it). Another program on the
# same GPU may stretch that interval, never make the two disagree. A missing
# figure, record or event, or events around other work, are the program's
# in every run: HOPELESS (second_chance makes no re-run).
check_event_time() {
    local run=$1 sel=$2 k=$3 fig=$4 what=$5 count=$6 hint=$7 v from to w inside
    v=$(need_figure "$run" "$fig") || return "$HOPELESS"
    read -r from to w inside <<<"$(events_around "$run" "$sel" "$k")"
    if [ -z "$from" ]; then
        say_fail "$what in the trace" "$(tq "$run" count "$sel") records of $sel" "$hint"
        return "$HOPELESS"
    fi
    if [ "$from" = - ] || [ "$to" = - ]; then
        local seen="no event before it"
        [ "$from" = - ] || seen="an event before it"
        [ "$to" = - ] && seen+=", none after it" || seen+=", one after it"
        say_fail "events recorded on the stream of $what, right before and right after it" \
            "$seen" "$hint"
        return "$HOPELESS"
    fi
    if [ "$inside" != "$count" ]; then
        local want="it alone"
        [ "$count" = 1 ] || want="$count operations of its stream"
        say_fail "the events around $what enclosing $want" \
            "they enclose $inside operations of that stream, $(fmt "$w") ms apart" "$hint"
        return "$HOPELESS"
    fi
    kept_time "$fig" "$v" "$w"
    same_gpu_time "$v" "$w" || say_fail \
        "$fig = the GPU's time between those two events, $(fmt "$w") ms (within 0.5% + 0.1 ms)" \
        "$fig = $v" "$hint"
}

# need_trace NAME: the run was traced; otherwise say why not and fail.
need_trace() {
    local name=${1:-main}
    if [ ! -x "$STREAMTRACE" ]; then
        echo "not checked: the trace tool is not built (make -C checker/trace)"
        return 1
    fi
    if [ ! -s "$RUNS/$name.trace" ]; then
        echo "not checked: the run left no trace"
        sed -n '1,3s/^/          /p' "$RUNS/$name.err"
        return 1
    fi
}

# ------------------------------------------------------------ checks every lab makes

# The build left a program and printed no warning. A build stopped by its
# time limit (BUILD_TIMEOUT) says so.
check_builds() {
    if ! built_ok; then
        local rc=""
        { read -r rc <"$RUNS/build.rc"; } 2>/dev/null
        case $rc in 124|137)
            say_fail "make builds ./$PROG" "the build did not finish in $BUILD_TIMEOUT s" \
                "a lab builds in seconds: look in $PROG.cu for what keeps the compiler busy (a macro that expands without end, an #include of itself)"
            return 1 ;;
        esac
        sed -n '/error/{p}' "$RUNS/build.log" | head -n 5 | sed 's/^/note: /'
        say_fail "make builds ./$PROG" "the build failed" \
            "read the first error above; the line number points into $PROG.cu"
        return 1
    fi
    if grep -qi 'warning' "$RUNS/build.log"; then
        grep -i -m 3 'warning' "$RUNS/build.log" | sed 's/^/note: /'
        say_fail "no compiler warnings" "warnings (above)" "warnings are often bugs: fix them"
    fi
}

# check_exits_ok RUN HINT [PREFIX]: RUN exited 0; else say how it ended and
# the first line of its error output (PREFIX, e.g. "as given: ", before it).
check_exits_ok() {
    local rc
    need_run "$1" || return 1
    rc_in rc "$1"
    [ "$rc" = 0 ] || say_fail "exit status 0 (results verified)" \
        "${3:-}the program $(describe_exit "$rc" "$1"): $(grep -v '^ ' "$RUNS/$1.err" | head -n 1)" "$2"
}

# check_verified RUN EXPECTED PATTERN HINT [PREFIX]: RUN printed
# "RESULT: verified ..."; else show its first line matching PATTERN. And the
# digests it printed are those of the right results (check_digests).
check_verified() {
    need_run "$1" || return 1
    grep -q '^RESULT: verified' "$RUNS/$1.out" || { say_fail "$2" \
        "${5:-}$(grep -m 1 "$3" "$RUNS/$1.out" || echo 'no RESULT line')" "$4"; return 1; }
    check_digests "$1" "${5:-}"
}

# run_args RUN: the options RUN was given (as saved in RUN.how), one a line.
run_args() { sed '1,/^--$/d' "$RUNS/$1.how" 2>/dev/null; }

# check_digests RUN [PREFIX [NAME...]]: for each result of RUN (or only those
# named, e.g. scenario2), the program printed "digest_NAME = HEX" with the
# digest the kit's own tool (checker/verify/digests) computes for RUN's
# options and seed: the verdict does not rest on the program's verify().
check_digests() {
    local run=$1 prefix=${2:-} seed want name eq value got
    shift 2 2>/dev/null || shift
    seed=$(lab_seed)
    [ -x "$DIGESTS" ] || make --no-print-directory -s -C "$KIT_ROOT/checker/verify" >/dev/null 2>&1
    [ -x "$DIGESTS" ] || { echo "not checked: the kit's digest tool is not built (make tools)"; return 1; }
    want=$(run_digests "$run") || {
        echo "not checked: the kit's digest tool refused the run's options: $want"; return 1; }
    # each name's printed values, sorted, once, in one awk: "NAME<TAB>V1 V2"
    local -A printed=()
    while IFS=$'\t' read -r name got; do printed[$name]=$got; done < <(
        awk 'NR == FNR { if ($1 != "") w[$1]; next }
             ($1 in w) && $2 == "=" && !(($1, $3) in seen) {
                 seen[$1, $3]; n = ++c[$1]; v[$1, n] = $3
                 for (i = n; i > 1 && v[$1, i - 1] > v[$1, i]; i--) {
                     t = v[$1, i]; v[$1, i] = v[$1, i - 1]; v[$1, i - 1] = t }
             }
             END { for (k in w) { s = ""; for (i = 1; i <= c[k]; i++) s = s (i > 1 ? " " : "") v[k, i]; print k "\t" s } }' \
            - "$RUNS/$run.out" <<<"$want" 2>/dev/null)
    while read -r name eq value; do
        [ $# -eq 0 ] || [[ " $* " == *" ${name#digest_} "* ]] || continue
        got=${printed[$name]:-}
        [ "$got" = "$value" ] || { say_fail \
            "$name = $value, the digest of the right result for --seed $seed (computed by the kit)" \
            "$prefix$([ -n "$got" ] && echo "$name = $got" || echo "no line \"$name = ...\"")" \
            "the printed digest is not the digest of the right result: was verify() or the RESULT line edited? (--seed $seed gives this run's input again)"
            return 1; }
    done <<<"$want"
}

# check_usage NAME ARGS: run NAME (given ARGS) exited 2 with a usage line.
check_usage() {
    built_ok || { echo "not checked: the program did not build"; return 1; }
    local rc
    rc_in rc "$1"
    [ "$rc" = 2 ] && grep -qi usage "$RUNS/$1.err" || say_fail \
        "exit status 2 and a usage line on stderr for $2" \
        "the program $(describe_exit "$rc"); stderr: $(head -n 1 "$RUNS/$1.err")" \
        "keep parse_args as given"
}

# Run nodev (CUDA_VISIBLE_DEVICES='') exited 77 with lab_pick_device's line.
check_no_device() {
    built_ok || { echo "not checked: the program did not build"; return 1; }
    local rc
    rc_in rc nodev
    [ "$rc" = 77 ] && grep -q 'no usable CUDA device' "$RUNS/nodev.err" || say_fail \
        "exit status 77 and 'no usable CUDA device: ...' with CUDA_VISIBLE_DEVICES=''" \
        "the program $(describe_exit "$rc"); stderr: $(head -n 1 "$RUNS/nodev.err")" \
        "call lab_pick_device() before any other CUDA call"
}

# ------------------------------------------------------------ learning from the run
#
# Beside the verdicts, two things a student reads, both drawn from the run the
# checks judged, and neither graded:
#  - a failed timing or structure check draws the part of the trace it judged
#    under its expected / seen / hint lines: the check says which part with
#    draw_on_fail before it judges; say_fail draws it (draw_judged);
#  - after the checks, "Your run": the figures that answer the lab's "Predict,
#    then measure" questions. The lab's .bats file defines your_run, which
#    prints them with your_fig; teardown_file writes them to YOUR_RUN_FILE,
#    which run-checks names, and run-checks prints them beside the student's
#    predictions.txt (lib/your-run.awk). checker/README.md, "Predict, then
#    measure", says what a lab adds.
#
# DRAW_WIDTH    columns of a drawing (run-checks sets it from the terminal: 88)
# DRAW_HEIGHT   its lines at most, header and legend included (16)

# draw_on_fail RUN [WINDOW...]: if this check fails, say_fail draws run RUN's
# timeline over WINDOW: streamtrace's window words (--window nvtx:issue+gpu,
# --from MS --to MS), or records: --record SEL K, the Kth record of SEL (a
# GPU record, an NVTX range, a runtime call); --timed SEL K, the same with
# the CUDA events around it on its stream (what check_event_time judges);
# both repeatable, drawn from the first start to the last end, with a margin.
# No WINDOW: the whole run.
draw_on_fail() {
    DRAW_RUN=$1
    shift
    DRAW_WINDOW=("$@")
}

# record_spans RUN HOW SEL K [HOW SEL K]...: "FROM TO" (ms) spanning the Kth
# record of each SEL (HOW: --record, or --timed with the events around it on
# its stream); nothing if one is missing.
record_spans() {
    local run=$1 lo="" hi="" a b
    shift
    while [ $# -ge 3 ]; do
        a="" b=""
        if [ "$1" = --timed ]; then
            read -r a b < <(tq "$run" events "$2" | sed -n "${3}p" | awk -F'\t' '{
                a = $1; b = $2; f = $(NF - 3); t = $(NF - 2)
                if (f != "-" && f + 0 < a + 0) a = f
                if (t != "-" && t + 0 > b + 0) b = t
                print a, b }')
        else
            read -r a b < <(tq "$run" list "$2" | sed -n "${3}p" | awk -F'\t' '{ print $1, $2 }')
        fi
        [ -n "$a" ] || return 0
        lo=$(awk -v x="$a" -v y="${lo:-$a}" 'BEGIN { print (x + 0 < y + 0 ? x : y) }')
        hi=$(awk -v x="$b" -v y="${hi:-$b}" 'BEGIN { print (x + 0 > y + 0 ? x : y) }')
        shift 3
    done
    [ -n "$lo" ] && echo "$lo $hi"
}

# draw_window: DRAW_WINDOW as streamtrace's words, one a line: records become
# --from/--to around them (a tenth of their span either side).
draw_window() {
    local w=("${DRAW_WINDOW[@]}") recs=() i span
    for ((i = 0; i < ${#w[@]}; i++)); do
        case ${w[i]} in
            --record|--timed) recs+=("${w[i]}" "${w[i + 1]}" "${w[i + 2]}"); i=$((i + 2)) ;;
        esac
    done
    if [ ${#recs[@]} -eq 0 ]; then
        [ ${#w[@]} -eq 0 ] || printf '%s\n' "${w[@]}"
        return 0
    fi
    span=$(record_spans "$DRAW_RUN" "${recs[@]}")
    [ -n "$span" ] || return 0
    awk -v s="$span" 'BEGIN { split(s, x, " "); m = (x[2] - x[1]) / 10; if (m < 0.01) m = 0.01
        a = x[1] - m; if (a < 0) a = 0
        printf "--from\n%.3f\n--to\n%.3f\n", a, x[2] + m }'
}

# draw_judged: the timeline of DRAW_RUN over its window, DRAW_WIDTH wide, at
# most DRAW_HEIGHT lines, no colour (it goes into TAP and JUnit reports too;
# run-checks colours it on a terminal). Each line of the drawing starts with
# "| ", which run-checks (lib/present.awk) shows indented under the hint. A
# window that the run lacks (a range not there) gets the whole run.
draw_judged() {
    local run=$DRAW_RUN out why="" win=()
    # a re-run's failure is never shown (second_chance shows the first run's)
    [[ $run == *.again* ]] && return 0
    [ -x "$STREAMTRACE" ] && [ -s "$RUNS/$run.trace" ] || return 0
    mapfile -t win < <(draw_window)
    st_draw() {
        (cd "$RUNS" && "$STREAMTRACE" timeline --color never --width "${DRAW_WIDTH:-88}" \
            --height "${DRAW_HEIGHT:-16}" "$@" "$run.trace" 2>&1)
    }
    if ! out=$(st_draw "${win[@]}"); then
        why=$(head -n 1 <<<"$out")
        out=$(st_draw) || return 0
    fi
    echo "timeline: your run, the part this check judged (make trace draws the whole run)"
    [ -z "$why" ] || echo "| (the whole run: ${why#streamtrace: })"
    awk -v f="$run.trace: " 'NR == 1 && index($0, f) == 1 { $0 = "your run: " substr($0, length(f) + 1) }
        { print "| " $0 }' <<<"$out"
}

# ran_elsewhere RUN KIND [WINDOW...]: the GPU work of run RUN (in WINDOW,
# streamtrace's window words) that ran on streams not of KIND (default,
# created, ...), in words, each kind of work once: "the kernel ran on
# the legacy default stream; the D2H copy ran on a stream of your own". For a
# hint that names what the trace shows.
ran_elsewhere() {
    local run=$1 kind=$2
    shift 2
    { tq "$run" streams gpu "$@" | awk '{ print "S\t" $1 "\t" $2 }'
      tq "$run" list gpu "$@" | sed 's/^/G\t/'; } |
        awk -F'\t' -v want="$kind" '
            $1 == "S" { kind[$2] = $3; next }
            kind[$6] != want && !seen[$5 $7]++ {
                w = $5 == "kernel" ? "the kernel" : $5 == "copy" ? "the " $7 " copy" : "a " $5
                k = kind[$6]
                if (k == "default") where = "the legacy default stream"
                else if (k == "created") where = "a stream of your own"
                else where = "a stream of kind " (k == "" ? "unknown" : k)
                out = out (out == "" ? "" : "; ") w " ran on " where
            }
            END { print out }'
}

# your_fig NAME VALUE UNIT TEXT: one figure of "Your run" (a lab's your_run
# prints them): its name in predictions.txt, this run's value (empty: not
# measured), its unit (x, %, ms, us, GB/s, "of 4"...) and what it is.
your_fig() {
    printf '%s\t%s\t%s\t%s\n' "$1" "${2:--}" "$3" "$4"
}

# your_run_ok RUN: run RUN got far enough to be measured; else print
# "# not measured: WHY" (run-checks says it) and return 1.
your_run_ok() {
    local rc todo why=""
    rc_in rc "$1"
    todo_in todo "$1"
    if ! built_ok; then
        why="the program did not build"
    elif [ "$rc" = 77 ]; then
        why="no CUDA device"
    elif [ -n "$todo" ]; then
        why="the program stopped at ${todo%% *}"
    elif [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
        why="the program $(describe_exit "$rc")"
    fi
    [ -z "$why" ] && return 0
    echo "# not measured: $why"
    return 1
}

# ratio A B, pct A B, diff A B: A / B, 100 A / B, A - B (nothing where A or B
# is missing, or B is 0 for the first two).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b + 0 != 0) printf "%.6g\n", a / b }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b + 0 != 0) printf "%.6g\n", 100 * a / b }'; }
diff_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "") printf "%.6g\n", a - b }'; }

# write_your_run (teardown_file): when run-checks asks for it (YOUR_RUN_FILE),
# the lab's figures. Whatever goes wrong here changes no verdict.
write_your_run() {
    [ -n "${YOUR_RUN_FILE:-}" ] && declare -F your_run >/dev/null || return 0
    (your_run) >"$YOUR_RUN_FILE" 2>/dev/null || true
    # the kit's reference runs are made from these (checker/tests/reference-runs)
    [ -z "${YOUR_RUN_COPY:-}" ] || cp "$YOUR_RUN_FILE" "$YOUR_RUN_COPY" 2>/dev/null || true
}

# ------------------------------------------------------------ bats' cost
#
# bats' DEBUG trap (bats_debug_trap, under set -T: before every command of a
# check, and of each subshell it starts) keeps the stack trace that a failed
# check's report shows: about 40 us a command, a third of a checker's CPU.
# Only the check's own shell reports one: a subshell ($(...), a pipeline)
# ends with a status that the shell that started it traces. So a subshell
# drops the trap at its first command; the check's own shell calls
# bats_debug_trap as before, and the reports are the same. (At the end of
# this file, so that the reports' line numbers stay as they were.)
# (each check loads this file: what a builtin prints is read back through a
# file of this process's own, not a $(...), which would cost a process)
kit_said() {
    if [ -d "${BATS_RUN_TMPDIR:-}" ]; then    # (bats removes it at the end)
        local f="$BATS_RUN_TMPDIR/.kit-said.$BASHPID"
        "$@" >"$f"
        KIT_SAID=$(<"$f")    # (no process: bash reads the file itself)
    else
        KIT_SAID=$("$@")
    fi
    return 0
}
if declare -F bats_setup_tracing >/dev/null && ! declare -F kit_bats_setup_tracing >/dev/null; then
    kit_said declare -f bats_setup_tracing
    eval "kit_bats_setup_tracing ${KIT_SAID#bats_setup_tracing }"
    bats_setup_tracing() {
        kit_bats_setup_tracing "$@"
        # (only where bats set the trap this replaces: another bats's is kept)
        kit_said trap -p DEBUG
        [ "$KIT_SAID" = "trap -- 'bats_debug_trap \"\$BASH_SOURCE\"' DEBUG" ] &&
            trap 'if [ "$BASH_SUBSHELL" = 0 ]; then bats_debug_trap "$BASH_SOURCE"; else trap - DEBUG; fi' DEBUG
        return 0
    }
fi

# run_digests RUN: what the kit's digest tool prints (its stdout and stderr)
# for RUN's options and the checker's seed, and its status; kept as
# RUN.digests{,.rc}, as other answers of a run are (lab 06 asks for the
# same run's in a dozen checks, 31 ms of CPU each), and made again where the
# run was made anew since. (check_digests)
run_digests() {
    local keep="$RUNS/$1.digests" args=()
    kept_put "$keep" "$RUNS/$1.how" && return "$KEPT_RC"
    mapfile -t args < <(run_args "$1")
    keep_out "$keep" "$RUNS/$1.how" 255 digests_said "${args[@]}" --seed "$(lab_seed)"
}
# digests_said ARGS...: the digest tool's stdout and stderr for ARGS
digests_said() { "$DIGESTS" "$LAB_ID" "$@" 2>&1; }
