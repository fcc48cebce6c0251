#!/usr/bin/env bats
# mutants.bats -- what make mutate found, proven without a GPU on the runs it
# recorded (checker/tests/fixtures/mutate/LAB/VARIANT: each run's exit
# status, output and trace, gzip'd, as the checker kept them on a GPU):
#   - every mutant listed as equivalent (checker/tests/mutate/equivalent/
#     LAB.tsv) is so: PROOF `schedule`, its runs show the GPU did the same as
#     the solution's two runs (mutate.py's same_schedule); any other PROOF
#     names a test below that proves its reason on its runs;
#   - each check added or tightened to kill a survivor fails that survivor's
#     recorded run and passes the recorded solution's.

bats_require_minimum_version 1.5.0
load ../lib/kit

MUTATE="$KIT_ROOT/checker/tests/mutate/mutate.py"
FIX="$KIT_ROOT/checker/tests/fixtures/mutate"

@test "every mutant listed as equivalent by its schedule shows the GPU did the same in its recorded runs" {
    run -0 python3 - "$MUTATE" "$FIX" <<'PY'
import os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import mutate as M
fix, bad, n = sys.argv[2], [], 0
for (lab, mid), (proof, reason) in sorted(M.load_equivalents().items()):
    if proof != 'schedule':
        continue
    n += 1
    sols = [M.kept_runs(os.path.join(fix, lab, v)) for v in ('solution', 'solution-2')]
    ok, why = M.same_schedule(sols, M.kept_runs(os.path.join(fix, lab, mid)))
    if ok is not True:
        bad.append('%s %s: %s' % (lab, mid, why))
print('%d listed by their schedule' % n)
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
    echo "$output"
}

@test "every other equivalent names a test of this file that proves its reason" {
    local lab mid proof reason bad=""
    while IFS=$'\t' read -r mid proof reason; do
        [ -n "$mid" ] && [ "${mid:0:1}" != "#" ] && [ "$proof" != schedule ] || continue
        grep -qF "@test \"$proof\"" "$BATS_TEST_FILENAME" || bad+=" $mid($proof)"
    done < <(cat "$KIT_ROOT"/checker/tests/mutate/equivalent/*.tsv 2>/dev/null)
    echo "no such test:${bad:- none}"
    [ -z "$bad" ]
}

# ---------------------------------------------------------------- 01-sync-copy

# ---------------------------------------------------------------- 02-async-copy

# ---------------------------------------------------------------- 03-pinned-memory

# ---------------------------------------------------------------- 04-events

# ---------------------------------------------------------------- 05-overlap

# replay_survivor_runs LAB/VARIANT [CHECK]: replay the runs recorded of a
# variant (fixtures/mutate/LAB/VARIANT: NAME.rc, NAME.err, NAME.out.gz,
# NAME.trace.gz, seed) through LAB's checker, only CHECK where given, as
# replay.bats replays its recordings (replay_check; lab 06's stress runs
# through progs/replay-stress, no compute-sanitizer): its TAP and log where
# tap_of says. A run not kept answers as replay-prog answers a run not
# recorded. (Labs 05 and 06 use it; it could serve every lab's section.)
replay_survivor_runs() {
    local lab=${1%%/*} src="$FIX/$1" d="$BATS_TEST_TMPDIR/runs/$1" f name key
    mkdir -p "$d"
    cp "$src/seed" "$d/seed"
    for f in "$src"/*.rc; do
        name=$(basename "$f" .rc)
        case $lab:$name in
            *:main) key=r ;;
            05-overlap:breadth) key=r--order-breadth ;;
            05-overlap:uneven) key=r--chunks-7---streams-3---size-mib-16---reps-1 ;;
            06-lifetime:s[1-4]) key=r--scenario-${name#s} ;;
            *) continue ;;
        esac
        cp "$f" "$d/$key.rc"
        cp "$src/$name.err" "$d/$key.err" 2>/dev/null || : >"$d/$key.err"
        gzip -dc "$src/$name.out.gz" >"$d/$key.out"
        [ ! -f "$src/$name.trace.gz" ] || gzip -dc "$src/$name.trace.gz" >"$d/$key.trace"
    done
    if [ "$lab" = 06-lifetime ]; then
        STRESS="$KIT_ROOT/checker/tests/progs/replay-stress" SANITIZER= REPLAY_DIR="$d" replay_check "$@"
    else
        REPLAY_DIR="$d" replay_check "$@"
    fi
}

# survivors_fail CHECK HINT LAB/VARIANT=SEEN...: replay each variant's runs
# for CHECK alone; each must fail it, its seen: line holding SEEN and its
# hint: line HINT. Says what went otherwise.
survivors_fail() {
    local check=$1 hint=$2 a v bad="" log
    shift 2
    survivor_check() { replay_survivor_runs "${1%%=*}" "$check"; }
    at_once survivor_check "$@"
    for a in "$@"; do
        v=${a%%=*} log="$BATS_TEST_TMPDIR/$v.log"
        if ! tap_failed "$(tap_of "$v")" "$check"; then
            bad+=$'\n'"$v did not fail \"$check\":"$'\n'"$(sed 's/^/    /' "$log")"
        elif ! grep '^ *seen: ' "$log" | grep -qF -- "${a#*=}"; then
            bad+=$'\n'"$v: its seen: line does not say \"${a#*=}\":"$'\n'"$(grep -E '^ *(expected|seen):' "$log")"
        elif ! grep '^ *hint: ' "$log" | grep -qF -- "$hint"; then
            bad+=$'\n'"$v: its hint does not say \"$hint\":"$'\n'"$(grep -E '^ *hint:' "$log")"
        fi
    done
    echo "${bad:-$# survivors fail \"$check\" and say why}"
    [ -z "$bad" ]
}

# solutions_pass LAB [CHECK]: both recorded runs of LAB's solution pass
# CHECK, replayed through every check once for the whole file (every check
# must pass them: they are correct runs)
solutions_pass() {
    local v bad="" out="$BATS_FILE_TMPDIR/solutions"
    for v in solution solution-2; do
        [ -s "$out/$1/$v.tap" ] || REPLAY_OUT=$out replay_survivor_runs "$1/$v"
        [ -s "$out/$1/$v.tap" ] && ! grep -q '^not ok' "$out/$1/$v.tap" &&
            { [ -z "${2:-}" ] || sed -n 's/^ok [0-9]* //p' "$out/$1/$v.tap" | grep -qxF -- "$2"; } ||
            bad+=$'\n'"$1/$v:"$'\n'"$(cat "$out/$1/$v.log")"
    done
    echo "${bad:-both recorded runs of the solution of $1 pass every check}"
    [ -z "$bad" ]
}

# quick_or_all FIRST REST...: the quick run (make test) takes the first
# argument only; make test-all all of them
quick_or_all() { if kit_full; then printf '%s\n' "$@"; else printf '%s\n' "$1"; fi; }

@test "lab 05: the printed times fail where an event or a sequential step left its place on the legacy default stream" {
    local c="the printed times are the GPU's times between the events around each version"
    ! kit_full || solutions_pass 05-overlap "$c"
    local runs=()
    mapfile -t runs < <(quick_or_all \
        "05-overlap/m-7caa913d=sequential run 1: the events around its H2D copy enclose 2 operations of its stream" \
        "05-overlap/m-e335012d=sequential run 1: no event right before its H2D copy on its stream (the legacy default stream), one right after it" \
        "05-overlap/m-c44fe9c2=sequential run 1: no event right before its H2D copy on its stream (stream 29, per-thread), none right after it" \
        "05-overlap/m-ed61e26e=sequential run 1: the events around its kernel enclose 2 operations of its stream" \
        "05-overlap/m-2c10cc50=sequential run 1: no event right before its D2H copy on its stream (stream 29, per-thread), none right after it" \
        "05-overlap/m-e56c863a=sequential run 1: the events around its D2H copy enclose 2 operations of its stream" \
        "05-overlap/m-e335012d.2=pipelined run 1: 49 operations ran between the events around it, 48 of them its own; an event recorded in its range went to stream 29, not the legacy default stream" \
        "05-overlap/m-bd6e37fb.2=pipelined run 1: 49 operations ran between the events around it, 48 of them its own" \
        "05-overlap/m-5df2a4be=sequential run 1: the events around its H2D copy enclose 2 operations of its stream" \
        "05-overlap/m-21b98495=sequential run 1: the events around its kernel enclose 2 operations of its stream" \
        "05-overlap/m-571c0bad=sequential run 1: the events around its D2H copy enclose 2 operations of its stream" \
        "05-overlap/m-693481a7=sequential run 1: no event right before its H2D copy on its stream (the legacy default stream), one right after it" \
        "05-overlap/m-f4f378cd=sequential run 1: the events around its H2D copy enclose 2 operations of its stream" \
        "05-overlap/m-1f10c95c=sequential run 1: the events around its kernel enclose 2 operations of its stream" \
        "05-overlap/m-c815dcd4=pipelined run 1: 49 operations ran between the events around it, 48 of them its own")
    survivors_fail "$c" "keep the given run_sequential() and run_pipelined() as they are" "${runs[@]}"
    kit_full || echo "(make test-all: 14 more survivors, and both solution runs through every check)"
}

# LAB05_SEQUENCE: python whose sequence(TRACE) is what the GPU did in a lab 05
# run, in order: each copy, kernel, memset and event stamp by its kind,
# direction, bytes and the kind of its stream, in the order they started;
# the chunks of a pipelined run (or of the other order's), whose order among
# the streams the solution leaves to the GPU, as one set.
LAB05_SEQUENCE='
import gzip, os, sys
def rows(path):
    f = gzip.open(path + ".gz", "rt") if os.path.exists(path + ".gz") else open(path)
    with f:
        return [l.rstrip("\n").split("\t") for l in f]
def sequence(path):
    r = rows(path)
    d = 0 if r[0][0].split()[-1] == "1" else 1
    kind, recs, ranges = {}, [], []
    for x in r:
        if x[0] == "stream":
            kind[x[1]] = x[2]
        elif x[0] == "nvtx" and x[4] in ("pipelined", "other_order"):
            ranges.append((int(x[1]), int(x[2])))
        elif x[0] in ("copy", "kernel", "memset"):
            s = kind.get(x[3 + d], "unknown")
            f = x[4 + d:]
            what = {"copy": ("copy", f[0], f[1]), "kernel": ("kernel", f[-1]), "memset": ("memset", f[0])}[x[0]]
            recs.append((int(x[1]), int(x[2]), what + (s,)))
        elif x[0] == "event":
            recs.append((int(x[1]), int(x[1]), ("event", kind.get(x[2 + d], "unknown"))))
    out, block = [], []
    for t0, t1, what in sorted(recs):
        if what[-1] == "created" and any(a <= t0 <= b for a, b in ranges):
            block.append(what)
            continue
        if block:
            out.append(("chunks",) + tuple(sorted(block)))
            block = []
        out.append(what)
    if block:
        out.append(("chunks",) + tuple(sorted(block)))
    return out
'

# LAB05_SAME (after LAB05_SEQUENCE), FIX/05-overlap MUTANT...: each
# mutant's runs have the sequence of both solution runs; else what differs
LAB05_SAME='
fix, bad = sys.argv[1], []
for m in sys.argv[2:]:
    for run in ("main", "breadth", "uneven"):
        a, b, c = (sequence(os.path.join(fix, v, run + ".trace")) for v in ("solution", "solution-2", m))
        if a != b:
            bad.append("%s: the two solution runs differ" % run)
        elif c != a:
            i = next(i for i in range(min(len(a), len(c)) + 1) if i == len(a) or i == len(c) or a[i] != c[i])
            bad.append("%s %s: record %d is %s, the solution has %s" % (m, run, i, c[i:i + 1], a[i:i + 1]))
print("\n".join(bad) or "%d survivors: the same sequence in each run" % (len(sys.argv) - 2))
sys.exit(1 if bad else 0)
'

# listed LAB PROOF: the variants equivalent/LAB.tsv lists with that PROOF
listed() {
    awk -F'\t' -v p="$2" '$2 == p { print $1 }' "$KIT_ROOT/checker/tests/mutate/equivalent/$1.tsv"
}

# all_checks_pass LAB/VARIANT...: each variant's runs replayed through every
# check of its lab: none fails. Says which did.
all_checks_pass() {
    local v bad=""
    at_once replay_survivor_runs "$@"
    for v in "$@"; do
        [ -s "$(tap_of "$v")" ] && ! grep -q '^not ok' "$(tap_of "$v")" ||
            bad+=$'\n'"$v fails a check:"$'\n'"$(sed 's/^/    /' "$BATS_TEST_TMPDIR/$v.log")"
    done
    echo "${bad:-$# variants pass every check}"
    [ -z "$bad" ]
}

@test "lab 05: the GPU ran the same work as the solution, in the same order but for the chunks of each pipelined run, and every check passes" {
    local mids
    mids=$(listed 05-overlap "$BATS_TEST_DESCRIPTION")
    [ -n "$mids" ]
    run -0 python3 -c "$LAB05_SEQUENCE$LAB05_SAME" "$FIX/05-overlap" $mids
    echo "$output"
    ! kit_full || all_checks_pass $(sed 's|^|05-overlap/|' <<<"$mids")
    kit_full || echo "(make test-all: every check on their replayed runs)"
}

# ---------------------------------------------------------------- 06-lifetime

@test "lab 06: a scenario that puts a copy, a kernel, an event or a wait on the legacy default stream fails the check that keeps it off" {
    local c="every scenario keeps its copies, kernels, events and waits off the legacy default stream"
    ! kit_full || solutions_pass 06-lifetime "$c"
    local runs=()
    mapfile -t runs < <(quick_or_all \
        "06-lifetime/m-5fce955d=scenario 4: 8 events" \
        "06-lifetime/m-84f1080c=scenario 1: 8 events" \
        "06-lifetime/m-571f8d18=scenario 1: 8 cudaStreamWaitEvents" \
        "06-lifetime/m-18b8b9b2=scenario 1: 1 wait for the stream (cudaStreamSynchronize)" \
        "06-lifetime/m-07e458ae=scenario 1: 1 D2H copy" \
        "06-lifetime/m-eea55821=scenario 2: 2 H2D copies" \
        "06-lifetime/m-f294829f=scenario 2: 2 kernels" \
        "06-lifetime/m-0859601d=scenario 2: 2 D2H copies" \
        "06-lifetime/m-f92a1eaa=scenario 2: 2 events" \
        "06-lifetime/m-ddeba40b=scenario 2: 2 H2D copies" \
        "06-lifetime/m-c8e2dae0=scenario 2: 2 D2H copies" \
        "06-lifetime/m-b8a54c1c=scenario 3: 8 H2D copies" \
        "06-lifetime/m-b8a54c1c.2=scenario 3: 1 H2D copy" \
        "06-lifetime/m-ade34e22=scenario 3: 8 H2D copies" \
        "06-lifetime/m-26b19261=scenario 3: 8 kernels" \
        "06-lifetime/m-681fae8b=scenario 3: 8 kernels" \
        "06-lifetime/m-682d2a02=scenario 3: 1 wait for the stream (cudaStreamSynchronize)" \
        "06-lifetime/m-7cf04527=scenario 3: 8 H2D copies" \
        "06-lifetime/m-2fcc607d=scenario 3: 1 H2D copy" \
        "06-lifetime/m-ae825379=scenario 3: 1 D2H copy" \
        "06-lifetime/m-bb98a8c6=scenario 4: 1 H2D copy, 1 event" \
        "06-lifetime/m-18b8b9b2.2=scenario 4: 1 wait for the stream (cudaStreamSynchronize)" \
        "06-lifetime/m-07e458ae.2=scenario 4: 1 D2H copy")
    survivors_fail "$c" "the legacy default stream synchronizes with every blocking stream" "${runs[@]}"
    # the hints that name the student's own TODO or call
    grep -qF 'Record ev_used[j] on s_comp, the stream of the kernel that reads the scratch (TODO 4).' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-5fce955d.log"
    ! kit_full || grep -qF 'cudaMemcpy (without Async) is a copy on the legacy default stream' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-7cf04527.log"
    kit_full || echo "(make test-all: 22 more survivors, and both solution runs through every check)"
}

@test "lab 06: a scenario that leaves out a free fails the check that every scenario gives back the memory it allocated" {
    local c="every scenario gives back the memory it allocated"
    ! kit_full || solutions_pass 06-lifetime "$c"
    local runs=()
    mapfile -t runs < <(quick_or_all \
        "06-lifetime/m-be330b7a=scenario 3: 3 cudaMallocHost, 2 cudaFreeHost" \
        "06-lifetime/m-d9945b5b=scenario 4: 8 cudaMallocAsync, 0 cudaFreeAsync" \
        "06-lifetime/m-86d52222=scenario 1: 3 cudaMallocHost, 1 cudaFreeHost" \
        "06-lifetime/m-0eee0f00=scenario 1: 2 cudaMalloc, 1 cudaFree" \
        "06-lifetime/m-25ee72e5=scenario 1: 2 cudaMalloc, 1 cudaFree" \
        "06-lifetime/m-802a5047=scenario 1: 3 cudaMallocHost, 2 cudaFreeHost" \
        "06-lifetime/m-0eee0f00.2=scenario 2: 2 cudaMalloc, 1 cudaFree" \
        "06-lifetime/m-25ee72e5.2=scenario 2: 2 cudaMalloc, 1 cudaFree" \
        "06-lifetime/m-2391e035=scenario 2: 2 cudaMallocHost, 1 cudaFreeHost" \
        "06-lifetime/m-802a5047.2=scenario 2: 2 cudaMallocHost, 1 cudaFreeHost" \
        "06-lifetime/m-0eee0f00.3=scenario 3: 3 cudaMalloc, 2 cudaFree" \
        "06-lifetime/m-25ee72e5.3=scenario 3: 3 cudaMalloc, 2 cudaFree" \
        "06-lifetime/m-9567f5c5=scenario 3: 3 cudaMalloc, 2 cudaFree" \
        "06-lifetime/m-2391e035.2=scenario 3: 3 cudaMallocHost, 2 cudaFreeHost" \
        "06-lifetime/m-802a5047.3=scenario 3: 3 cudaMallocHost, 2 cudaFreeHost")
    survivors_fail "$c" "keep the given frees: each buffer goes back once the stream is done with it" "${runs[@]}"
    grep -qF 'free h_keys with cudaFreeHost after the cudaStreamSynchronize at its end (TODO 3)' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-be330b7a.log"
    ! kit_full || grep -qF 'the fix is to order cudaFreeAsync(d_tmp[j], s_prep) after the kernel (TODO 4), not to leave it out' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-d9945b5b.log"
    kit_full || echo "(make test-all: 14 more survivors, and both solution runs through every check)"
}

@test "lab 06: a kernel queued before the wait for its chunk's copy fails the check that each kernel is queued behind its copy" {
    local c="each chunk's kernel is queued behind the copy that brings its chunk"
    ! kit_full || solutions_pass 06-lifetime "$c"
    survivors_fail "$c" "keep the given cudaStreamWaitEvent(s_comp, ev_staged[b], 0) right before scramble()" \
        "06-lifetime/m-3206fc2e=scenario 1: the kernel of chunk 0 (stream 14) was queued with nothing ordering it after its copy (stream 13)"
}

# LAB06_TRACE: python that reads a lab 06 run kept as a fixture: rows(PATH)
# (the trace's lines, split), scenario(R, N) (the range of NVTX "scenario N"),
# gpu(R) (copies, kernels and memsets: (start, end, tag, stream, what)),
# calls(R) ((start, end, name)), verified(DIR, RUN, N) (the run printed
# scenario N verified, and exited 0)
LAB06_TRACE='
import gzip, os, sys
def rows(path):
    with gzip.open(path + ".gz", "rt") as f:
        return [l.rstrip("\n").split("\t") for l in f]
def scenario(r, n):
    return next((int(x[1]), int(x[2])) for x in r if x[0] == "nvtx" and x[4] == "scenario %d" % n)
def gpu(r):
    d = 0 if r[0][0].split()[-1] == "1" else 1
    return sorted((int(x[1]), int(x[2]), x[0], x[3 + d], x[4 + d] + " " + x[5 + d] if x[0] == "copy" else x[-1])
                  for x in r if x[0] in ("copy", "kernel", "memset"))
def calls(r):
    return sorted((int(x[1]), int(x[2]), x[5]) for x in r if x[0] == "api")
def verified(d, run, n):
    out = gzip.open(os.path.join(d, run + ".out.gz"), "rt").read()
    return open(os.path.join(d, run + ".rc")).read().strip() == "0" and \
        any(l.startswith("scenario %d " % n) and ": verified" in l for l in out.split("\n"))
fix, bad = sys.argv[1], []
'

@test "lab 06: once scenario 4 had waited for its compute stream, no copy or kernel was left for the wait after its range, and every check passes" {
    local mids
    mids=$(listed 06-lifetime "$BATS_TEST_DESCRIPTION")
    [ -n "$mids" ]
    run -0 python3 -c "$LAB06_TRACE"'
for m in sys.argv[2:]:
    d = os.path.join(fix, m)
    r = rows(os.path.join(d, "main.trace"))
    a, b = scenario(r, 4)
    wait = next((c for c in calls(r) if a <= c[0] <= b and c[2] == "cudaStreamSynchronize"), None)
    if wait is None:
        bad.append("%s: no cudaStreamSynchronize in scenario 4" % m)
        continue
    late = [g for g in gpu(r) if g[1] > wait[1]]
    if late:
        bad.append("%s: %d records ended after scenario 4 waited for its compute stream: %s" % (m, len(late), late[0]))
    if not (verified(d, "main", 4) and verified(d, "s4", 4)):
        bad.append("%s: scenario 4 not verified, plainly and under the stress tool" % m)
    if "ERROR SUMMARY: 0 errors" not in gzip.open(os.path.join(d, "sanitizer.out.gz"), "rt").read():
        bad.append("%s: compute-sanitizer found errors" % m)
print("\n".join(bad) or "%d survivors: the GPU had nothing left to do" % (len(sys.argv) - 2))
sys.exit(1 if bad else 0)
' "$FIX/06-lifetime" $mids
    echo "$output"
    ! kit_full || all_checks_pass $(sed 's|^|06-lifetime/|' <<<"$mids")
    kit_full || echo "(make test-all: every check on their replayed runs)"
}

@test "lab 06: with a chunk's scratch or the copy back on another stream, scenario 4 still ran each kernel after its chunk's copy and the copy back after the last kernel, and every check passes" {
    local mids
    mids=$(listed 06-lifetime "$BATS_TEST_DESCRIPTION")
    [ -n "$mids" ]
    run -0 python3 -c "$LAB06_TRACE"'
for m in ["solution", "solution-2"] + sys.argv[2:]:
    d = os.path.join(fix, m)
    r = rows(os.path.join(d, "main.trace"))
    a, b = scenario(r, 4)
    g = [x for x in gpu(r) if x[0] >= a]
    h2d = [x for x in g if x[2] == "copy" and x[4].startswith("H2D")]
    ker = [x for x in g if x[2] == "kernel"]
    d2h = [x for x in g if x[2] == "copy" and x[4].startswith("D2H")]
    if len(h2d) != len(ker) or len(d2h) != 1:
        bad.append("%s: %d copies in, %d kernels, %d copies back" % (m, len(h2d), len(ker), len(d2h)))
        continue
    for k, (c, q) in enumerate(zip(h2d, ker)):
        if q[0] < c[1]:
            bad.append("%s: the kernel of chunk %d began before its copy ended" % (m, k))
    if d2h[0][0] < max(q[1] for q in ker):
        bad.append("%s: the copy back began before the last kernel ended" % m)
    if not any(c[2].endswith("Synchronize") and c[1] >= d2h[0][1] for c in calls(r)):
        bad.append("%s: no host wait returned after the copy back ended" % m)
    if not all(verified(d, run, n) for n in (1, 2, 3, 4) for run in ("main", "s%d" % n)):
        bad.append("%s: a scenario not verified, plainly or under the stress tool" % m)
    if "ERROR SUMMARY: 0 errors" not in gzip.open(os.path.join(d, "sanitizer.out.gz"), "rt").read():
        bad.append("%s: compute-sanitizer found errors" % m)
print("\n".join(bad) or "%d survivors and the solution: each kernel after its copy, the copy back after them" % (len(sys.argv) - 2))
sys.exit(1 if bad else 0)
' "$FIX/06-lifetime" $mids
    echo "$output"
    ! kit_full || all_checks_pass $(sed 's|^|06-lifetime/|' <<<"$mids")
    kit_full || echo "(make test-all: every check on their replayed runs)"
}

# ---------------------------------------------------------------- 07-default-streams

# ---------------------------------------------------------------- 08-pytorch

# ---------------------------------------------------------------- 09-multi-gpu
