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
load lib

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

# Helpers every section uses.

# fixture_replay LAB VARIANT [CHECK]: replay the runs of VARIANT kept in
# fixtures/mutate/LAB/VARIANT (NAME.rc, NAME.out.gz, NAME.err[.gz],
# NAME.trace.gz) through LAB's checker, only CHECK where given, as
# replay.bats replays its recordings (replay_check; lab 06's stress runs
# through fixtures/progs/replay-stress, no compute-sanitizer): `main` is the run
# without arguments, main.againN or main.lookN its (N+1)th call, and lab
# 06's s1-s4 the runs with their arguments. A
# run not kept answers as replay-prog answers a run not recorded. Every run
# was made with make mutate's seed. Its TAP where tap_of says (REPLAY_OUT,
# else $BATS_TEST_TMPDIR/LAB/VARIANT.tap), and what the checker printed,
# shown.
fixture_replay() {
    local lab=$1 v=$2 src="$FIX/$1/$2" d="${REPLAY_OUT:-$BATS_TEST_TMPDIR}/runs/$1/$2" f n k
    mkdir -p "$d"
    for f in "$src"/*.rc; do
        n=$(basename "$f" .rc)
        case $lab:$n in
            *:main) k=r ;;
            *:main.again*) k=r.$(( ${n##*again} + 1 )) ;;
            *:main.look*) k=r.$(( ${n##*look} + 1 )) ;;
            06-lifetime:s[1-4]) k=r--scenario-${n#s} ;;
            06-lifetime:stress) k=stress ;;
            *) continue ;;
        esac
        cp "$f" "$d/$k.rc"
        if [ -f "$src/$n.err.gz" ]; then gzip -dc "$src/$n.err.gz" >"$d/$k.err"
        else cp "$src/$n.err" "$d/$k.err" 2>/dev/null || : >"$d/$k.err"; fi
        gzip -dc "$src/$n.out.gz" >"$d/$k.out"
        [ ! -f "$src/$n.trace.gz" ] || gzip -dc "$src/$n.trace.gz" >"$d/$k.trace"
    done
    sed -n "s/^SEED = '\([0-9]*\)'.*/\1/p" "$MUTATE" >"$d/seed"
    if [ "$lab" = 06-lifetime ]; then
        STRESS="$KIT_ROOT/checker/tests/fixtures/progs/replay-stress" SANITIZER= REPLAY_DIR="$d" replay_check "$lab/$v" "${3:-}"
    else
        REPLAY_DIR="$d" replay_check "$lab/$v" "${3:-}"
    fi
    echo "--- $lab/$v"
    cat "${REPLAY_OUT:-$BATS_TEST_TMPDIR}/$lab/$v.log"
}

# kills LAB CHECK HINT VARIANT...: each variant's recorded run fails CHECK,
# its log saying HINT (a grep pattern); the two recorded solution runs pass it.
# The quick run (make test without a GPU) replays the first variant only,
# and no solution run (replay.bats replays the committed solutions there).
kills() {
    local lab=$1 check=$2 hint=$3 v
    shift 3
    kit_full || { set -- "$1"; KILLS_SOLUTIONS="$lab|$check"; }
    # the solution's runs once a test and check
    [ "${KILLS_SOLUTIONS:-}" = "$lab|$check" ] || for v in solution solution-2; do
        fixture_replay "$lab" "$v" "$check"
        grep -qx "ok 1 $check" "$BATS_TEST_TMPDIR/$lab/$v.tap"
    done
    KILLS_SOLUTIONS="$lab|$check"
    for v in "$@"; do
        fixture_replay "$lab" "$v" "$check"
        tap_failed "$BATS_TEST_TMPDIR/$lab/$v.tap" "$check"
        grep -q "hint: *$hint" "$BATS_TEST_TMPDIR/$lab/$v.log"
    done
}

# proves LAB PYTHON: run the Python program (stdin) with, in scope, mutate
# as M, the fixtures' folder FIX and these helpers:
#   runs(v): the runs kept of variant v; same(v): the GPU did the same in
#   v's runs as in the solution's two (M.same_schedule: True, else fail);
#   calls(v): v's main run as M.normalize_trace's lines;
#   changed(v): the lines of calls() that differ from the solution's, as
#   (removed, added) lists; records(v, tag): the records of one tag of v's
#   main trace, by start, as format 1 has them (no DEVICE field);
#   stream(r): a record's stream; check(cond, what): fail saying what.
proves() {
    local lab=$1
    python3 - "$MUTATE" "$FIX" "$lab" 3<&0 <<'PY'
import difflib, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import mutate as M
FIX, LAB = os.path.join(sys.argv[2], sys.argv[3]), sys.argv[3]
def runs(v): return M.kept_runs(os.path.join(FIX, v))
SOLS = [runs('solution'), runs('solution-2')]
def check(cond, what):
    if not cond:
        print('not so: %s' % what)
        sys.exit(1)
def same(v):
    ok, why = M.same_schedule(SOLS, runs(v))
    check(ok is True, '%s did the same as the solution on the GPU (%s)' % (v, why))
    print('%s: the same on the GPU (%s records)' % (v, why))
def calls(v): return M.normalize_trace(runs(v)['main'] + '.trace')
def records(v, tag):
    """v's main trace: the records of one tag, as lists of fields, the
    DEVICE field of format 2 and later taken out (as format 1 has them)."""
    with M.open_run(runs(v)['main'] + '.trace') as f:
        rows = [l.rstrip('\n').split('\t') for l in f]
    dev = rows[0][0] != 'streamtrace 1'
    out = []
    for r in rows[1:]:
        if r[0] == tag:
            if dev and tag in ('copy', 'kernel', 'memset', 'sync'):
                r = r[:3] + r[4:]
            elif dev and tag == 'event':
                r = r[:2] + r[3:]
            out.append(r)
    return sorted(out, key=lambda r: int(r[1]) if r[1].isdigit() else 0)
def stream(r): return r[2] if r[0] == 'event' else r[3]
def changed(v):
    a, b = calls('solution'), calls(v)
    check(a == calls('solution-2'), 'the solution\'s two runs made the same calls')
    rem, add = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != 'equal':
            rem += [l.strip() for l in a[i1:i2]]
            add += [l.strip() for l in b[j1:j2]]
    return rem, add
exec(os.fdopen(3).read())
PY
}

@test "lab 01: a copy time read before the host waited for its stop event fails the check of the copy times" {
    kills 01-sync-copy "the copy times are the GPU's times between the events around each copy" \
        "keep the given cudaEventSynchronize(stop) between cudaEventRecord(stop, 0) and cudaEventElapsedTime" \
        m-413724e4 m-413724e4.3 m-5120823d.3
    grep -q 'seen: *h2d_ms: no wait between' "$BATS_TEST_TMPDIR/01-sync-copy/m-413724e4.log"
    ! kit_full || grep -q 'seen: *d2h_ms: no wait between' "$BATS_TEST_TMPDIR/01-sync-copy/m-5120823d.3.log"
}

@test "lab 01: without the wait after the warm-up, the GPU still stamps the start event after the warm-up kernel" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 01-sync-copy <<'PY'
for v in ('m-9dd900eb', 'm-81410a81'):
    same(v)
    rem, add = changed(v)
    wait, record = 'cudaDeviceSynchronize | sync context on - dev 0', 'cudaEventRecord | event on default1 dev 0'
    if v == 'm-9dd900eb':
        check(rem == [wait] and add == [], '%s: only the wait after the warm-up is gone (%s / %s)' % (v, rem, add))
    else:
        check(rem == add and len(rem) == 1 and rem[0] in (wait, record),
              '%s: only the wait and the start record swapped (%s / %s)' % (v, rem, add))
    k = records(v, 'kernel')
    ev = [int(e[1]) for e in records(v, 'event')]
    # the event stamped right before the timed kernel (the 2nd) came after the warm-up (the 1st)
    start = max(t for t in ev if t <= int(k[1][1]))
    check(start >= int(k[0][2]), '%s: the start event stamped after the warm-up kernel ended' % v)
    check(len(set(stream(r) for r in k + records(v, 'event'))) == 1, '%s: one stream, in order' % v)
    print('%s: start stamped %.3f ms after the warm-up kernel ended' % (v, (start - int(k[0][2])) / 1e6))
PY
}

@test "lab 01: cudaEventRecord(start) moved before cudaEventCreate(&stop) changes nothing the GPU does" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 01-sync-copy <<'PY'
same('m-71468101')
rem, add = changed('m-71468101')
check(rem == add and len(rem) == 1 and rem[0] in ('cudaEventCreate', 'cudaEventRecord | event on default1 dev 0'),
      'the two calls swapped, nothing else (%s / %s)' % (rem, add))
PY
}

@test "lab 01: cudaDeviceSynchronize in place of cudaEventSynchronize(stop) waits for the same work" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 01-sync-copy <<'PY'
for v in ('m-9c855430', 'm-9c855430.2', 'm-9c855430.3'):
    same(v)
    rem, add = changed(v)
    check(rem == ['cudaEventSynchronize | sync event on - dev 0'] and add == ['cudaDeviceSynchronize | sync context on - dev 0'],
          '%s: one cudaEventSynchronize became cudaDeviceSynchronize, nothing else (%s / %s)' % (v, rem, add))
    streams = set(stream(r) for r in records(v, 'kernel') + records(v, 'copy') + records(v, 'event'))
    check(len(streams) == 1, '%s: every copy, kernel and event on one stream (%s)' % (v, streams))
PY
}

# ---------------------------------------------------------------- 02-async-copy

@test "lab 02: a rehearsal timed from an event on another stream fails the check of the times it reports" {
    kills 02-async-copy "the times it reports agree with what the trace recorded" \
        "keep the rehearsal's cudaEventRecord(start, stream) and cudaEventRecord(stop, stream) as given" \
        m-1e081be5
    grep -q 'seen: *rehearsal_ms (rehearsal 1): the H2D copy ran on stream 13 (created, blocking), the start event on stream 14' \
        "$BATS_TEST_TMPDIR/02-async-copy/m-1e081be5.log"
}

@test "lab 02: a time read before the host waited for its stop event fails the check of the times it reports" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    kills 02-async-copy "the times it reports agree with what the trace recorded" \
        "keep the rehearsal's cudaStreamSynchronize(stream) right after cudaEventRecord(stop, stream) as given" \
        m-4b37440b
}

@test "lab 02: the rehearsal's start event on stream 0 is ordered with the created stream's work, and the GPU did the same" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 02-async-copy <<'PY'
v = 'm-f554a9af'
same(v)
rem, add = changed(v)
check(rem == ['cudaEventRecord | event on created/blocking1 dev 0'] * 2 and add == ['cudaEventRecord | event on default1 dev 0'] * 2,
      'only the two rehearsals\' start events moved to the legacy stream (%s / %s)' % (rem, add))
kinds = {r[1]: (r[2], r[4] if len(r) > 4 else '?') for r in records(v, 'stream')}
work = set(stream(r) for r in records(v, 'copy') + records(v, 'kernel'))
check(all(kinds[s] == ('created', 'blocking') for s in work), 'the work on a created blocking stream (%s)' % kinds)
PY
}

# The legacy default stream synchronizes with the blocking streams: work
# queued on it waits for theirs (CUDA Runtime API, "Stream synchronization
# behavior"). That a cudaStreamSynchronize(0) waits for a blocking stream's
# work queued before it is not documented: the timing read after it is read
# with no wait the program made sure of (make mutate, one H100, 2026-12-06,
# format 6: both killed in 3 of 3 runs, each time read from the stop record
# cudaEventElapsedTime names).
@test "lab 02: cudaStreamSynchronize(0) in place of cudaStreamSynchronize(stream) fails the check of the times: no wait it made sure of covers the stop event" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    kills 02-async-copy "the times it reports agree with what the trace recorded" ".*without it, cudaEventElapsedTime returns cudaErrorNotReady" m-a17d8153 m-84ecb04c
    grep -q "seen: .*no wait between the stop event's record and cudaEventElapsedTime" "$BATS_TEST_TMPDIR/02-async-copy/m-a17d8153.log"
}

@test "lab 02: cudaDeviceSynchronize in place of cudaStreamSynchronize(stream) waits for the same work" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 02-async-copy <<'PY'
for v, n in (('m-648e56e1', 2), ('m-fe50b613', 1)):
    same(v)
    rem, add = changed(v)
    check(rem == ['cudaStreamSynchronize | sync stream on created/blocking1 dev 0'] * n and
          add == ['cudaDeviceSynchronize | sync context on - dev 0'] * n,
          '%s: only the wait for the stream became a wait for the device (%s / %s)' % (v, rem, add))
    ops = records(v, 'copy') + records(v, 'kernel') + records(v, 'memset') + records(v, 'event')
    check(len(set(stream(r) for r in ops)) == 1, '%s: every copy, kernel, memset and event on one stream' % v)
PY
}

@test "lab 02: the measured run's start record moved above the NVTX range issue changes nothing the GPU does" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 02-async-copy <<'PY'
v = 'm-bf23b5bc'
same(v)
rem, add = changed(v)
check(rem == add and len(rem) == 1 and rem[0] in ('[ issue', 'cudaEventRecord | event on created/blocking1 dev 0'),
      'the record and the start of the range swapped, nothing else (%s / %s)' % (rem, add))
PY
}

# ---------------------------------------------------------------- 03-pinned-memory

@test "lab 03: timings whose events or warm-up copy the GPU does not order with the timed copies fail the check of that order" {
    kills 03-pinned-memory "the GPU orders the timing events with the work they time" \
        "time_copies() gets one stream: keep its warm-up cudaMemcpyAsync on .stream. as given" \
        m-1e081be5 m-83388c1d
    grep -q 'seen: *pageable H2D 64 KiB: the H2D copy ran on stream 13 (created, blocking), the start event on stream 14' \
        "$BATS_TEST_TMPDIR/03-pinned-memory/m-1e081be5.log"
    ! kit_full || grep -q 'seen: *pageable H2D 64 KiB: the H2D copy queued right before the start event, not waited for, ran on a per-thread default stream' \
        "$BATS_TEST_TMPDIR/03-pinned-memory/m-83388c1d.log"
}

@test "lab 03: a re-run that crashed before its table no longer passes the bandwidth check's second chance" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    kills 03-pinned-memory "the printed bandwidths agree with the traced copies" \
        "record start after the warm-up and right before the loop" m-1e081be5
    # (its re-run crashed after its first line, exit status 1: in the
    # recording of 2026-11-26, on cudaErrorNotReady at pinned_memory.cu:139;
    # the one kept now, 2026-12-06, kept no error output)
    grep -q 're-run 1: no table rows: the program exited 1' \
        "$BATS_TEST_TMPDIR/03-pinned-memory/m-1e081be5.log"
}

@test "lab 03: cudaStreamSynchronize(0) or cudaDeviceSynchronize after the timed cudaMemcpyAsync waits for its copy as cudaStreamSynchronize(stream) does" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 03-pinned-memory <<'PY'
for v, to in (('m-84ecb04c', 'cudaStreamSynchronize | sync stream on default1 dev 0'),
              ('m-fe50b613', 'cudaDeviceSynchronize | sync context on - dev 0')):
    same(v)
    rem, add = changed(v)
    check(rem == ['cudaStreamSynchronize | sync stream on created/blocking1 dev 0'] * 3 and add == [to] * 3,
          '%s: only the three waits of time_return() changed (%s / %s)' % (v, rem, add))
    kinds = {r[1]: (r[2], r[4] if len(r) > 4 else '?') for r in records(v, 'stream')}
    ops = records(v, 'copy')
    check(all(kinds[stream(r)] == ('created', 'blocking') for r in ops), '%s: every copy on the created blocking stream' % v)
    api = records(v, 'api')
    corr = {r[-1]: r for r in ops}
    marks = records(v, 'nvtx')
    for m in (m for m in marks if m[-1].startswith('async_')):
        inside = [a for a in api if int(m[1]) <= int(a[1]) <= int(m[2])]
        copy = [corr[a[4]] for a in inside if a[5] == 'cudaMemcpyAsync']
        wait = [a for a in inside if a[5] in ('cudaStreamSynchronize', 'cudaDeviceSynchronize')]
        check(len(copy) == 1 and len(wait) == 1 and int(wait[0][2]) >= int(copy[0][2]),
              '%s, %s: the wait returned after the copy ended' % (v, m[-1]))
        print('%s, %s: the wait returned %.3f ms after the copy ended' % (v, m[-1], (int(wait[0][2]) - int(copy[0][2])) / 1e6))
PY
}

@test "lab 03: the wait after each kind's bandwidth series has nothing left to wait for" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 03-pinned-memory <<'PY'
old = 'cudaStreamSynchronize | sync stream on created/blocking1 dev 0'
for v, to in (('m-84ecb04c.2', 'cudaStreamSynchronize | sync stream on default1 dev 0'),
              ('m-8b54736a.2', 'cudaStreamSynchronize | sync stream on unknown1 dev 0'),
              ('m-3aa2e341.2', None),
              ('m-fe50b613.2', 'cudaDeviceSynchronize | sync context on - dev 0')):
    same(v)
    rem, add = changed(v)
    check(rem == [old] * 3 and add == ([to] * 3 if to else []), '%s: only the three waits changed (%s / %s)' % (v, rem, add))
    for who in ('solution', v):
        c = [l.strip() for l in calls(who)]
        for kind in ('pageable', 'pinned', 'registered'):
            end = c.index('] ' + kind)
            last = max(i for i in range(end) if c[i].startswith('cudaEventSynchronize'))
            between = set(c[last + 1:end]) - {old, to}
            check(between <= {'cudaEventElapsedTime', 'cudaEventDestroy'},
                  '%s, %s series: nothing queued after its last cudaEventSynchronize(stop) (%s)' % (who, kind, between))
PY
}

@test "lab 03: the pinned buffers left unfreed change nothing the GPU does" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 03-pinned-memory <<'PY'
v = 'm-cea4d37e'
same(v)
rem, add = changed(v)
check(rem == ['cudaFreeHost'] * 2 and add == [], 'only the two cudaFreeHost calls are gone (%s / %s)' % (rem, add))
PY
}

@test "lab 03: cudaDeviceSynchronize in place of cudaEventSynchronize(stop) waits for the same copies" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 03-pinned-memory <<'PY'
v = 'm-9c855430'
same(v)
rem, add = changed(v)
check(rem == ['cudaEventSynchronize | sync event on - dev 0'] * 42 and add == ['cudaDeviceSynchronize | sync context on - dev 0'] * 42,
      'each of the 42 cudaEventSynchronize(stop) became cudaDeviceSynchronize, nothing else (%d / %d)' % (len(rem), len(add)))
ops = records(v, 'copy') + records(v, 'event')
check(len(set(stream(r) for r in ops)) == 1, 'every copy and event on one stream')
PY
}

# ---------------------------------------------------------------- 04-events

@test "lab 04: part 1's event timings whose events the GPU does not order with the kernel fail the check of that order" {
    kills 04-events "the GPU orders the timing events with the work they time" \
        "keep the given cudaEventRecord(start, s), busy(w, s), cudaEventRecord(stop, s) of the cold launch as they are" \
        m-a3b59d81 m-8fd444dd m-ea9bc8dc m-d098c1b7 m-0d749eef m-dfb4bf3b m-a8f64798 m-f3a2209c
    kills 04-events "the GPU orders the timing events with the work they time" \
        "record start on s right before busy(w, s) and stop on s right after it (TODO 1)" \
        m-a3b59d81.2 m-d098c1b7.2
    grep -q 'seen: *cold_ms: busy_kernel ran on stream 13 (created, non-blocking), the start event on stream 0 (the legacy default stream)' \
        "$BATS_TEST_TMPDIR/04-events/m-a3b59d81.log"
    ! kit_full || grep -q 'seen: *cold_ms: no GPU work was queued between the start and the stop record' \
        "$BATS_TEST_TMPDIR/04-events/m-a8f64798.log"
}

@test "lab 04: part 1 cases run on another stream or not waited for fail the check that part 1 runs one case at a time on stream s" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    kills 04-events "part 1 runs one case at a time, every kernel on stream s" \
        "keep the given busy(w, s) calls as they are" \
        m-8fd444dd.4 m-8fd444dd.5 m-8fd444dd.6 m-0d749eef.4 m-0d749eef.5 m-0d749eef.6
    kills 04-events "part 1 runs one case at a time, every kernel on stream s" \
        "keep the given cudaStreamSynchronize(s) after the launch-only case as it is: s is non-blocking" \
        m-682d2a02.2 m-e6392005.2 m-babbf2c2.2
    grep -q 'seen: *busy_kernel 4 (the host clock without one) ran on stream 0 (the legacy default stream), busy_kernel 1 on stream 13' \
        "$BATS_TEST_TMPDIR/04-events/m-8fd444dd.4.log"
    grep -q 'seen: *busy_kernel 5 (the late case.s earlier kernel) was launched with no wait of the host for busy_kernel 4 (the host clock without one) before it (not-ordered)' \
        "$BATS_TEST_TMPDIR/04-events/m-682d2a02.2.log"
}

@test "lab 04: a late case that waits between its launches or not after them fails the check of the late case" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    kills 04-events "a host clock started while an earlier kernel runs counts that kernel too" \
        "keep the given cudaStreamSynchronize(s) before t1 of the late case as it is" \
        m-682d2a02.3 m-e6392005.3 m-babbf2c2.3
    kills 04-events "a host clock started while an earlier kernel runs counts that kernel too" \
        "keep the given busy(w, s); t0 = lab_now_ms(); busy(w, s); as they are" \
        m-19af8f2e.2
}

@test "lab 04: part 3 without the host's wait after the memsets, or waiting for stream A instead of B, fails the check of those waits" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    kills 04-events "part 3 waits on the host where stream 0 meets streams A and B" \
        "keep the given cudaDeviceSynchronize() after the two cudaMemset calls" m-9dd900eb
    kills 04-events "part 3 waits on the host where stream 0 meets streams A and B" \
        "keep the given cudaStreamSynchronize(w->stream_b) as it is" m-e9e5bbd3
    grep -q 'seen: *only cudaStreamSynchronize on stream 13, the consumer ran on stream 14' \
        "$BATS_TEST_TMPDIR/04-events/m-e9e5bbd3.log"
}

@test "lab 04: cudaDeviceSynchronize in place of a wait for stream s or its stop event in part 1 waits for the same work" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 04-events <<'PY'
for v, was in (('m-99912320', 'cudaStreamSynchronize | sync stream on created/non-blocking1 dev 0'),
               ('m-99912320.2', 'cudaStreamSynchronize | sync stream on created/non-blocking1 dev 0'),
               ('m-99912320.3', 'cudaStreamSynchronize | sync stream on created/non-blocking1 dev 0'),
               ('m-9c855430', 'cudaEventSynchronize | sync event on - dev 0'),
               ('m-9c855430.2', 'cudaEventSynchronize | sync event on - dev 0')):
    if v == 'm-99912320':
        # part 3 of this run: the consumer began 0.4 us before CUPTI's stamp
        # of the event `produced` it waited for; every other pair as the solution's
        ok, why = M.same_schedule(SOLS, runs(v))
        sa, sb, sm = (M.gpu_schedule(r['main'] + '.trace') for r in SOLS + [runs(v)])
        check(set(sm) == set(sa), '%s: the same work on the GPU' % v)
        keys = sorted(sa)
        for i, x in enumerate(keys):
            for y in keys[i + 1:]:
                r = M.relation(sa[x], sa[y])
                if r == M.relation(sb[x], sb[y]) and M.relation(sm[x], sm[y]) != r:
                    check(x[1] == 'event' and y[2].startswith('consumer_kernel') and 0 <= sm[x][0] - sm[y][0] < 2000,
                          '%s: only the consumer\'s start and the stamp of the event it waited for swapped (%s, %s)' % (v, x, y))
    else:
        same(v)
    rem, add = changed(v)
    check(rem == [was] and add == ['cudaDeviceSynchronize | sync context on - dev 0'],
          '%s: one wait became cudaDeviceSynchronize, nothing else (%s / %s)' % (v, rem, add))
    busy = [k for k in records(v, 'kernel') if k[-1].startswith('busy_kernel')][:6]
    ev = records(v, 'event')[:4]
    check(len(set(stream(r) for r in busy + ev)) == 1, '%s: part 1\'s kernels and events on one stream' % v)
    lo, hi = int(busy[0][1]), int(busy[-1][2])
    other = [r for r in records(v, 'kernel') + records(v, 'copy') + records(v, 'memset')
             if r not in busy and int(r[2]) > lo and int(r[1]) < hi]
    check(not other, '%s: nothing else ran on the GPU during part 1 (%s)' % (v, other))
PY
}

@test "lab 04: cudaDeviceSynchronize in place of the wait for stream B waits as long, the producer on A having ended before the consumer on B began" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 04-events <<'PY'
v = 'm-b109c91f'
same(v)
rem, add = changed(v)
check(rem == ['cudaStreamSynchronize | sync stream on created/non-blocking2 dev 0'] and add == ['cudaDeviceSynchronize | sync context on - dev 0'],
      'the wait for stream B became cudaDeviceSynchronize, nothing else (%s / %s)' % (rem, add))
k = records(v, 'kernel')
prod = [r for r in k if r[-1].startswith('producer_kernel')][0]
cons = [r for r in k if r[-1].startswith('consumer_kernel')][0]
check(int(prod[2]) <= int(cons[1]), 'the producer ended before the consumer began')
later = [r for r in k + records(v, 'copy') + records(v, 'memset') if int(r[1]) >= int(prod[1]) and r not in (prod, cons)]
check(all(int(r[1]) >= int(cons[2]) for r in later), 'nothing else was queued beside them (%s)' % later)
PY
}

@test "lab 04: the wait for stream B moved above the end of the NVTX range dependency changes nothing the GPU does" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 04-events <<'PY'
v = 'm-15146c40'
same(v)
rem, add = changed(v)
check(rem == add and len(rem) == 1 and rem[0] in ('] dependency', 'cudaStreamSynchronize | sync stream on created/non-blocking2 dev 0'),
      'the wait and the end of the range swapped, nothing else (%s / %s)' % (rem, add))
PY
}

@test "lab 04: cudaEventRecord(start) moved before cudaEventCreate(&stop) changes nothing the GPU does" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves 04-events <<'PY'
v = 'm-1c8eb967'
same(v)
rem, add = changed(v)
check(rem == add and len(rem) == 1 and rem[0] in ('cudaEventCreate', 'cudaEventRecord | event on created/non-blocking1 dev 0'),
      'the two calls swapped, nothing else (%s / %s)' % (rem, add))
PY
}

# ---------------------------------------------------------------- 05-overlap

# survivors_fail CHECK HINT LAB/VARIANT=SEEN...: replay each variant's runs
# for CHECK alone; each must fail it, its seen: line holding SEEN and its
# hint: line HINT. Says what went otherwise.
survivors_fail() {
    local check=$1 hint=$2 a v bad="" log
    shift 2
    survivor_check() { local v=${1%%=*}; fixture_replay "${v%%/*}" "${v#*/}" "$check" >/dev/null; }
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
        [ -s "$out/$1/$v.tap" ] || REPLAY_OUT=$out fixture_replay "$1" "$v" >/dev/null
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
        "05-overlap/m-7caa913d=cudaEventElapsedTime call 1 (range sequential): the H2D copy ran on stream 0 (the legacy default stream), the stop event on stream 29 (it ran no copy or kernel): the trace cannot tell whether the GPU orders the two" \
        "05-overlap/m-e335012d=cudaEventElapsedTime call 1 (range sequential): the H2D copy ran on stream 0 (the legacy default stream), the start event on stream 29" \
        "05-overlap/m-ed61e26e=cudaEventElapsedTime call 2 (range sequential): scramble_kernel ran on stream 0 (the legacy default stream), the stop event on stream 29" \
        "05-overlap/m-e56c863a=cudaEventElapsedTime call 1 (range sequential): no wait between the stop event's record and cudaEventElapsedTime" \
        "05-overlap/m-e335012d.2=cudaEventElapsedTime call 5 (range depth_first): the H2D copy ran on stream 13 (created, blocking), the start event on stream 29" \
        "05-overlap/m-bd6e37fb.2=cudaEventElapsedTime call 5 (range sequential): its two events bracket 17 H2D copies, 17 kernels, 17 D2H copies and 1 memset, not one step of a sequential run" \
        "05-overlap/m-5df2a4be=cudaEventElapsedTime call 1 (range sequential): its two events bracket no GPU work" \
        "05-overlap/m-21b98495=cudaEventElapsedTime call 2 (range sequential): its two events bracket no GPU work" \
        "05-overlap/m-571c0bad=cudaEventElapsedTime call 3 (range sequential): its two events bracket no GPU work" \
        "05-overlap/m-693481a7=cudaEventElapsedTime call 1 (range sequential): its two events bracket no GPU work" \
        "05-overlap/m-f4f378cd=cudaEventElapsedTime call 1 (range sequential): its two events bracket 1 H2D copy and 1 kernel, not one step" \
        "05-overlap/m-1f10c95c=cudaEventElapsedTime call 2 (range sequential): its two events bracket 1 kernel and 1 D2H copy, not one step" \
        "05-overlap/m-c815dcd4=cudaEventElapsedTime call 5 (range depth_first): its two events bracket no GPU work, not the whole pipelined run (16 H2D copies, 16 kernels and 16 D2H copies)")
    survivors_fail "$c" "keep the given run_sequential() and run_pipelined() as they are" "${runs[@]}"
    kit_full || echo "(make test-all: 12 more survivors, and both solution runs through every check)"
}

# LAB05_SEQUENCE: python whose sequence(TRACE) is what the GPU did in a lab 05
# run, in order: each copy, kernel, memset and event stamp by its kind,
# direction, bytes and the kind of its stream, in the order they started;
# the chunks of a pipelined run, in either order or the uneven shape, whose
# order among the streams the solution leaves to the GPU, as one set.
LAB05_SEQUENCE='
import gzip, os, sys
def rows(path):
    f = gzip.open(path + ".gz", "rt") if os.path.exists(path + ".gz") else open(path)
    with f:
        return [l.rstrip("\n").split("\t") for l in f]
def sequence(path):
    r = rows(path)
    d = 0 if r[0][0].split()[-1] == "1" else 1
    kind = {x[1]: x[2] for x in r if x[0] == "stream"}     # (declared where first seen)
    recs, ranges = [], []
    for x in r:
        if x[0] == "nvtx" and x[4] in ("depth_first", "breadth_first", "uneven_depth_first", "uneven_breadth_first"):
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

# LAB05_SAME (after LAB05_SEQUENCE), FIX/05-overlap [--per-thread-as-legacy]
# MUTANT...: each mutant's runs have the sequence of both solution runs; else
# what differs. --per-thread-as-legacy: records of the mutant that ran on the
# per-thread default stream count as the legacy one's (there must be some).
LAB05_SAME='
fix, bad, ms = sys.argv[1], [], sys.argv[2:]
legacy = ms[:1] == ["--per-thread-as-legacy"]
ms = ms[1:] if legacy else ms
for m in ms:
    for run in ("main",):
        a, b, c = (sequence(os.path.join(fix, v, run + ".trace")) for v in ("solution", "solution-2", m))
        if legacy:
            d = [tuple("default" if w == "per-thread" else w for w in r) for r in c]
            if d == c:
                bad.append("%s %s: nothing on the per-thread default stream" % (m, run))
                continue
            c = d
        if a != b:
            bad.append("%s: the two solution runs differ" % run)
        elif c != a:
            i = next(i for i in range(min(len(a), len(c)) + 1) if i == len(a) or i == len(c) or a[i] != c[i])
            bad.append("%s %s: record %d is %s, the solution has %s" % (m, run, i, c[i:i + 1], a[i:i + 1]))
print("\n".join(bad) or "%d survivors: the same sequence in each run%s" % (
    len(ms), " (the per-thread default stream for the legacy one)" if legacy else ""))
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
    replay_all() { fixture_replay "${1%%/*}" "${1#*/}" >/dev/null; }
    at_once replay_all "$@"
    for v in "$@"; do
        [ -s "$(tap_of "$v")" ] && ! grep -q '^not ok' "$(tap_of "$v")" ||
            bad+=$'\n'"$v fails a check:"$'\n'"$(sed 's/^/    /' "$BATS_TEST_TMPDIR/$v.log")"
    done
    echo "${bad:-$# variants pass every check}"
    [ -z "$bad" ]
}

@test "lab 05: the GPU ran the same work as the solution, in the same order but for the chunks of each pipelined run, and every check passes" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    local mids
    mids=$(listed 05-overlap "$BATS_TEST_DESCRIPTION")
    [ -n "$mids" ]
    run -0 python3 -c "$LAB05_SEQUENCE$LAB05_SAME" "$FIX/05-overlap" $mids
    echo "$output"
    ! kit_full || all_checks_pass $(sed 's|^|05-overlap/|' <<<"$mids")
    kit_full || echo "(make test-all: every check on their replayed runs)"
}

# The per-thread default stream synchronizes with the legacy default stream
# (CUDA Runtime API, "Stream synchronization behavior"): a copy of the
# sequential version put there still runs after stream 0's event before it
# and before the one after it, so the time between them is its own.
@test "lab 05: a sequential copy on the per-thread default stream is still ordered between stream 0's events, and every check passes" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    local mids
    mids=$(listed 05-overlap "$BATS_TEST_DESCRIPTION")
    [ -n "$mids" ]
    run -0 python3 -c "$LAB05_SEQUENCE$LAB05_SAME" "$FIX/05-overlap" --per-thread-as-legacy $mids
    echo "$output"
    ! kit_full || all_checks_pass $(sed 's|^|05-overlap/|' <<<"$mids")
    kit_full || echo "(make test-all: every check on their replayed runs)"
}

# ---------------------------------------------------------------- 06-lifetime

@test "lab 06: a scenario that puts a copy, a kernel, an event or a wait on the legacy or a per-thread default stream fails the check that keeps it off both" {
    local c="every scenario keeps its copies, kernels, events and waits off both default streams"
    ! kit_full || solutions_pass 06-lifetime "$c"
    local runs=()
    # m-f92a1eaa records both halves' events on stream 0; its kept run (an
    # H100, format 6) stamped the second after the range's last copy had
    # ended, outside the window "+gpu" (copies, kernels and memsets): one is
    # counted
    mapfile -t runs < <(quick_or_all \
        "06-lifetime/m-5fce955d=scenario 4: 8 events" \
        "06-lifetime/m-84f1080c=scenario 1: 8 events" \
        "06-lifetime/m-571f8d18=scenario 1: 8 cudaStreamWaitEvents" \
        "06-lifetime/m-18b8b9b2=scenario 1: 1 wait for the stream (cudaStreamSynchronize)" \
        "06-lifetime/m-07e458ae=scenario 1: 1 D2H copy" \
        "06-lifetime/m-eea55821=scenario 2: 2 H2D copies" \
        "06-lifetime/m-f294829f=scenario 2: 2 kernels" \
        "06-lifetime/m-0859601d=scenario 2: 2 D2H copies" \
        "06-lifetime/m-f92a1eaa=scenario 2: 1 event" \
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
        "06-lifetime/m-07e458ae.2=scenario 4: 1 D2H copy on the legacy default stream" \
        "06-lifetime/m-91f076f9=scenario 4: 1 H2D copy, 1 event on a per-thread default stream")
    survivors_fail "$c" "default stream" "${runs[@]}"
    ! kit_full || grep -qF 'a per-thread default stream (cudaStreamPerThread) synchronizes with the legacy default stream only' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-91f076f9.log"
    grep -qF 'the legacy default stream synchronizes with every blocking stream' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-5fce955d.log"
    # the hints that name the student's own TODO or call
    grep -qF 'Record ev_used[j] on s_comp, the stream of the kernel that reads the scratch (TODO 4).' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-5fce955d.log"
    ! kit_full || grep -qF 'cudaMemcpy (without Async) is a copy on the legacy default stream' \
        "$BATS_TEST_TMPDIR/06-lifetime/m-7cf04527.log"
    kit_full || echo "(make test-all: 23 more survivors, and both solution runs through every check)"
}

@test "lab 06: a scenario that leaves out a free fails the check that every scenario gives back the memory it allocated" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
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
    kit_full || echo "(make test-all: 12 more survivors, and both solution runs through every check)"
}

@test "lab 06: a kernel queued before the wait for its chunk's copy fails the check that each kernel is queued behind its copy" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    local c="each chunk's kernel is queued behind the copy that brings its chunk"
    ! kit_full || solutions_pass 06-lifetime "$c"
    survivors_fail "$c" "keep the given cudaStreamWaitEvent(s_comp, ev_staged[b], 0) right before scramble()" \
        "06-lifetime/m-3206fc2e=scenario 1: the kernel of chunk 0 (stream 14) was queued with nothing ordering it after its copy (stream 13)"
}

# LAB06_TRACE: python that reads a lab 06 run kept as a fixture: rows(PATH)
# (the trace's lines, split), scenario(R, N) (the range of NVTX "scenario N"),
# gpu(R) (copies, kernels and memsets: (start, end, tag, stream, what)),
# calls(R) ((start, end, name)), verified(DIR, RUN, N) (the run printed
# scenario N verified, and exited 0), stressed(DIR, N) (scenario N verified
# under the stress tool)
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
def stressed(d, n):
    # scenario N under the stress tool: its run alone (sN) where the run of
    # the four (stress) did not verify it
    run = "s%d" % n if os.path.exists(os.path.join(d, "s%d.rc" % n)) else "stress"
    return verified(d, run, n)
fix, bad = sys.argv[1], []
'

@test "lab 06: once scenario 4 had waited for its compute stream, no copy or kernel was left for the wait after its range, and every check passes" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
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
    if not (verified(d, "main", 4) and stressed(d, 4)):
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
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
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
    if not all(verified(d, "main", n) and stressed(d, n) for n in (1, 2, 3, 4)):
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
#
# Helpers of the sections of labs 07, 08 and 09 (they would serve any lab).

# fail_with LAB CHECK HINT VARIANT...: each recorded run fails CHECK, and
# its hint matches HINT (grep -E, after "hint:"). The quick run (make test
# without a GPU) replays the first VARIANT alone; make test-all, every one.
fail_with() {
    local lab=$1 check=$2 hint=$3 v bad=""
    shift 3
    kit_full || set -- "$1"
    for v in "$@"; do
        fixture_replay "$lab" "$v" "$check"
        tap_failed "$(tap_of "$lab/$v")" "$check" || { bad+=" $v(passed)"; continue; }
        grep -Eq "hint: *$hint" "$BATS_TEST_TMPDIR/$lab/$v.log" || bad+=" $v(hint)"
    done
    echo "wrong:${bad:- none}"
    [ -z "$bad" ]
}

# pass_all LAB CHECK VARIANT...: each recorded run passes CHECK (the quick
# run: the first).
pass_all() {
    local lab=$1 check=$2 v
    shift 2
    kit_full || set -- "$1"
    for v in "$@"; do
        fixture_replay "$lab" "$v" "$check"
        grep -qxF "ok 1 $check" "$(tap_of "$lab/$v")" || { echo "$v does not pass: $check"; return 1; }
    done
}

# log_has LAB VARIANT PATTERN: what the checker printed for that replay
# has a line matching PATTERN (grep's); in the quick run, a VARIANT not
# replayed (fail_with, pass_all) passes.
log_has() {
    local log="$BATS_TEST_TMPDIR/$1/$2.log"
    [ -f "$log" ] || { kit_full && echo "$1/$2 was not replayed"; ! kit_full; return; }
    grep -q "$3" "$log" || { echo "$1/$2: no line matches: $3"; return 1; }
}

# same_calls LAB MODE m-ID...: each mutant's recorded run made the
# solution's runtime calls, thread by thread, in the same order, each
# queuing the same work on the same streams (mutate.py's normalize_trace,
# equal in the solution's two runs), printed the same but for its times
# (same_output) and exited as it did -- but for what MODE allows:
#   frees    fewer calls that give memory back (cudaFree, cudaFreeHost: one
#            deleted in a loop is missing once a turn), the others in order
#   given2   (lab 07) in the NVTX ranges "worker" whose every copy and
#            kernel ran on the legacy default stream (the round trips of
#            part 2's given version): a cudaMemcpy
#            where the solution has a cudaMemcpyAsync on that stream, or a
#            cudaDeviceSynchronize where it has cudaStreamSynchronize(0)
#   waits    (lab 08) one wait (a ...Synchronize) left out, moved or made
#            another; the calls that queue nothing and only ask (mutate.py's
#            POLLS: PyTorch's cudaGetDevice, its caching allocator's
#            cudaEventQuery, cudaGetLastError) are not compared
#   current  (lab 09) the cudaSetDevice and cudaGetLastError calls, and so
#            the GPU current at a call, which the record of a wait carries;
#            and no kernel was launched while another GPU than its
#            stream's was current (the trace's `current` lines)
#   halo     (lab 09) as current, and the stream of a synchronous copy
#            (cudaMemcpy: the driver's choice, with another GPU current)
#   checks   (lab 10) the cudaGetLastError calls (CUDA_CHECK_LAUNCH), and
#            so where a call moved past one
same_calls() {
    python3 - "$MUTATE" "$FIX" "$KIT_ROOT/checker/trace/streamtrace" "$@" <<'PY'
import os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import mutate as M
fix, st, lab, mode, mids = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
sol = [os.path.join(fix, lab, v, 'main') for v in ('solution', 'solution-2')]
SYNC_DEV = re.compile(r'(\| sync [^|]*?) dev \d+')

def calls(prefix):
    lines = M.normalize_trace(prefix + '.trace')
    if mode in ('current', 'halo'):
        lines = [SYNC_DEV.sub(r'\1', l) for l in lines
                 if l.strip() not in ('cudaSetDevice', 'cudaGetLastError')]
    if mode == 'halo':
        lines = [re.sub(r'(\| copy \S+ \S+ \S+ async=0 .*) on \S+ (dev \d+)$', r'\1 on - \2', l) for l in lines]
    if mode == 'waits':
        lines = [l for l in lines if l.strip().split(' |')[0] not in M.POLLS]
    if mode == 'checks':
        lines = [l for l in lines if l.strip() != 'cudaGetLastError']
    if mode == 'given2':        # the round trips of part 2's given version
        out, seg = [], None
        for l in lines:
            if l.strip() == '[ worker':
                seg = []
            if seg is None:
                out.append(l)
                continue
            seg.append(l)
            if l.strip() == '] worker':
                work = [x for x in seg if re.search(r'\| (copy|kernel|memset) ', x)]
                if work and all(' on default1 dev ' in x for x in work):
                    seg = [re.sub(r'^(\s*)cudaMemcpy \| (copy \S+ \S+ \S+) async=0', r'\1cudaMemcpyAsync | \2 async=1', x)
                           .replace('cudaDeviceSynchronize | sync context on - dev', 'cudaStreamSynchronize | sync stream on default1 dev')
                           for x in seg]
                out += seg
                seg = None
        lines = out + (seg or [])
    # thread by thread, whatever order normalize_trace put them in
    blocks = []
    for l in lines:
        if l.startswith('thread') or not blocks:
            blocks.append([])
        else:
            blocks[-1].append(l)
    return [l for b in sorted(blocks) for l in ['thread'] + b]

bad, s0 = [], calls(sol[0])
assert s0 == calls(sol[1]), 'the solution\'s two runs differ'
for mid in mids:
    m = os.path.join(fix, lab, mid, 'main')
    c = calls(m)
    if mode == 'frees':
        gone = [l for l in s0 if l.strip() in ('cudaFree', 'cudaFreeHost')]
        left = [l for l in c if l.strip() in ('cudaFree', 'cudaFreeHost')]
        it = iter(gone)
        ok = len(left) < len(gone) and all(x in it for x in left) and \
            [l for l in c if l.strip() not in M.RELEASES] == [l for l in s0 if l.strip() not in M.RELEASES]
    elif mode == 'waits':
        wait = lambda l: 'Synchronize |' in l
        ok = [l for l in c if not wait(l)] == [l for l in s0 if not wait(l)] and \
            len([l for l in s0 if wait(l)]) - len([l for l in c if wait(l)]) in (0, 1)
    else:
        ok = c == s0
    if not ok:
        bad.append('%s: its calls differ: %s' % (mid, ' | '.join(
            x.strip() for x in list(__import__('difflib').unified_diff(s0, c, n=0, lineterm=''))[2:8])))
    if not M.same_output(*(M.normalize_output(p + '.out') for p in sol + [m])):
        bad.append('%s: its output differs' % mid)
    if M.read1(m + '.rc') != M.read1(sol[0] + '.rc'):
        bad.append('%s: its exit status differs' % mid)
    if mode in ('current', 'halo'):
        import tempfile
        with tempfile.NamedTemporaryFile('w', suffix='.trace') as t:
            t.write(M.open_run(m + '.trace').read())
            t.flush()
            off = subprocess.run([st, 'query', t.name, 'count', 'kernel', '--current', 'other'],
                                 capture_output=True, text=True).stdout.strip()
            known = subprocess.run([st, 'query', t.name, 'current', 'kernel'],
                                   capture_output=True, text=True).stdout
        if off != '0' or not known.strip():
            bad.append('%s: kernels launched while another GPU was current: %s' % (mid, off or '?'))
print('%d mutants, each the solution call for call but for: %s' % (len(mids), mode))
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
}


# on_trace LAB VARIANT CODE: run the Python CODE on the recorded run `main`
# of fixtures/mutate/LAB/VARIANT, after a prelude that reads its trace:
#   api[CORR]    a runtime call: .start .end .thread .name
#   recs         every copy, kernel and memset: .kind .start .end .dev
#                .stream .corr .what (DIR of a copy, a kernel's name)
#   evs          every event record: .time .stream .corr
#   syncs[CORR]  the sync record of a call: .type .stream
#   rng(NAME)    (START, END) of the first NVTX range NAME
#   call(R)      the call that queued record R; waits(A, B): the calls named
#                ...Synchronize that began in [A, B), in time order;
#                queued(A, B): the records whose call began in [A, B)
# Times are the trace's ns. CODE fails with an AssertionError.
on_trace() {
    python3 - "$MUTATE" "$FIX/$1/$2/main" "$3" <<'PY'
import os, sys
from types import SimpleNamespace as NS
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import mutate as M
with M.open_run(sys.argv[2] + '.trace') as f:
    rows = [l.rstrip('\n').split('\t') for l in f]
d = 0 if rows[0][0].split()[-1] == '1' else 1
api, recs, evs, syncs, ranges = {}, [], [], {}, {}
for r in rows:
    if r[0] == 'api':
        api[r[4]] = NS(start=int(r[1]), end=int(r[2]), thread=r[3], name=r[5], corr=r[4])
    elif r[0] == 'nvtx':
        ranges.setdefault(r[4], []).append((int(r[1]), int(r[2])))
    elif r[0] in ('copy', 'kernel', 'memset'):
        corr = r[-1] if r[0] != 'kernel' else r[6 + d]
        what = r[4 + d] if r[0] == 'copy' else r[-1] if r[0] == 'kernel' else 'memset'
        recs.append(NS(kind=r[0], start=int(r[1]), end=int(r[2]), dev=r[3] if d else '0',
                       stream=r[3 + d], corr=corr, what=what))
    elif r[0] == 'event':
        evs.append(NS(time=int(r[1]), stream=r[2 + d], corr=r[-1]))
    elif r[0] == 'sync':
        syncs[r[-1]] = NS(type=r[4 + d], stream=r[3 + d])
rng = lambda name: sorted(ranges[name])[0]
call = lambda rec: api[rec.corr]
waits = lambda a, b: sorted((c for c in api.values() if c.name.endswith('Synchronize') and a <= c.start < b),
                            key=lambda c: c.start)
queued = lambda a, b: [x for x in recs if x.corr in api and a <= api[x.corr].start < b]
exec(sys.argv[3])
PY
}

L07=07-default-streams

@test "lab 07: the given kernels of part 1 and the given version of part 2 run elsewhere than the given code says in m-b3a6cc67, m-c05dd9d5, m-7c756bb1, m-0b59f314 and m-abca3d5b, which fail the check of the given streams; the solution's runs pass it" {
    local check="the given launches and copies of parts 1 and 2 ran on the streams they name"
    pass_all $L07 "$check" solution solution-2
    fail_with $L07 "$check" "keep the given code as it is: part_kinds\(\) launches spin_legacy_kernel into stream 0 and spin_per_thread_kernel into cudaStreamPerThread" \
        m-b3a6cc67 m-c05dd9d5 m-7c756bb1 m-0b59f314 m-abca3d5b
    log_has $L07 m-b3a6cc67 'seen: *spin_per_thread_kernel on the legacy default stream (7)$'
    log_has $L07 m-c05dd9d5 'seen: *spin_per_thread_kernel on a created stream (13)$'
    log_has $L07 m-7c756bb1 'seen: *part 2 as given: worker_kernel on a per-thread default stream (16), worker_kernel on a per-thread default stream (17)$'
    log_has $L07 m-0b59f314 'seen: *part 2 as given: H2D copy on a per-thread default stream'
    log_has $L07 m-abca3d5b 'seen: *part 2 as given: D2H copy on a per-thread default stream'
}

@test "lab 07: the waits deleted between the parts (m-9dd900eb.3, .4) or at a part's end (m-9dd900eb), and a thread's wait moved above its copy back (m-f91413b2, m-4811e684), fail the check of the parts, the hint naming the wait; the solution's runs pass it" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    local check="each part began with the GPU idle and waited for all its work before it ended"
    pass_all $L07 "$check" solution solution-2
    fail_with $L07 "$check" "keep the given cudaDeviceSynchronize\(\) before each part as it is" \
        m-9dd900eb.3 m-9dd900eb.4
    log_has $L07 m-9dd900eb.3 'seen: *part2_per_thread began at .* the last, the memset on the legacy default stream (7)'
    log_has $L07 m-9dd900eb.4 'seen: *part3_pipeline began at .* the last, the memset on the legacy default stream (7)'
    fail_with $L07 "$check" "keep the given cudaDeviceSynchronize\(\) after part 1's four launches" m-9dd900eb
    log_has $L07 m-9dd900eb 'seen: *part1_kinds ended at .* ms, and thread 1 did not wait for all its work in it: the last not waited for, the spin_per_thread_kernel on a per-thread default stream'
    fail_with $L07 "$check" "keep round_trip_legacy\(\) as given: cudaStreamSynchronize\(0\) after the copy back" m-f91413b2
    fail_with $L07 "$check" "wait after the last call of the round trip: .*\(TODO 3\)$" m-4811e684
    log_has $L07 m-4811e684 'seen: *part2_per_thread ended at .* did not wait for all its work in it: the last not waited for, the D2H copy on a per-thread default stream'
}

@test "lab 07: the cudaDeviceSynchronize before part 2 left out (m-9dd900eb.2) had nothing to wait for: part 1 had waited for its launches and copied its stamps back with a synchronous cudaMemcpy" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L07 waits m-9dd900eb.2
    local t="$BATS_TEST_TMPDIR/m.trace"
    gzip -dc "$FIX/$L07/m-9dd900eb.2/main.trace.gz" >"$t"
    # what the program guaranteed: every record queued before part 2 was
    # done, by a host wait, when part 2 began; the last of them part 1's
    # copy back, a cudaMemcpy to the host, which returns once it is done
    # (CUDA Runtime API, "API synchronization behavior")
    run -0 "$KIT_ROOT/checker/trace/streamtrace" ask "$t" "idle nvtx:part2_legacy" \
        "order copy:D2H#1 api:cudaStreamDestroy#1"
    echo "$output"
    [ "${lines[0]}" = "idle	1" ]
    [[ "${lines[1]}" == "guaranteed	copy:"*"(a synchronous copy) cudaMemcpy:"* ]]
}

@test "lab 07: a survivor that leaves out a free did all else the solution did, call for call, and printed the same" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L07 frees m-af53df8b m-0d829c30 m-2ddbf586 m-054460f8 m-90867298 m-1ee47c90
}

@test "lab 07: part 2's given version with a cudaMemcpy or a cudaDeviceSynchronize made the solution's calls on stream 0 otherwise, each thread's copies and kernel on the legacy default stream" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L07 given2 m-6fcaa1f8 m-2d8627e4 m-f286644e
}

# ---------------------------------------------------------------- 08-pytorch

L08=08-pytorch

@test "lab 08: the given torch.cuda.synchronize() calls deleted before a part or a case (m-19a5da5f.2, m-19a5da5f.4, m-97dcae92), or deleted or moved above the launch in case 2 (m-19a5da5f.6, m-dc2d5454.3), fail the check of the ranges' starts, the hint naming the wait; the solution's runs pass it" {
    local check="each measured range starts with the GPU idle, but case 2's, as given"
    pass_all $L08 "$check" solution solution-2
    fail_with $L08 "$check" "keep part 1 as given: torch.cuda.synchronize\(\) between the two copies" m-19a5da5f.2
    log_has $L08 m-19a5da5f.2 'seen: *the range "pinned_copy" began at .* no wait covered: the last, an H2D copy on stream 7'
    fail_with $L08 "$check" "keep part 2 as given: torch.cuda.synchronize\(\) before the range \"side_stream\"" m-19a5da5f.4
    fail_with $L08 "$check" "keep part 3 as given: torch.cuda.synchronize\(\) before case 1" m-97dcae92
    log_has $L08 m-97dcae92 'seen: *the range "sync_before" began at .* the last, a kernel on stream 7, queued at .* ms, ran on until'
    fail_with $L08 "$check" "keep case 2 as given: torch.cuda.synchronize\(\) after its launch, before t1" m-19a5da5f.6 m-dc2d5454.3
    log_has $L08 m-19a5da5f.6 'seen: *the range "sync_neither" began at .* the last, a kernel on stream 7, queued at .* ms, ran on until'
}

@test "lab 08: the pageable .to() made blocking (m-2c7372cb) fails the check of its non_blocking=True; the solution's runs pass it" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    local check="the .to() from pageable memory is given non_blocking=True: it makes no wait of its own"
    pass_all $L08 "$check" solution solution-2
    fail_with $L08 "$check" "keep part 1's pageable copy as given: pageable.to\(DEVICE, non_blocking=True\)" m-2c7372cb
    log_has $L08 m-2c7372cb 'seen: *cudaStreamSynchronize$'
}

@test "lab 08: a torch.cuda.synchronize() left out or moved where nothing had been queued since the last wait changed nothing else: the same calls, and the work before it waited for" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L08 waits m-19a5da5f m-dc2d5454 m-dc2d5454.2
    local v r
    for v in m-19a5da5f:pageable_copy m-dc2d5454:pageable_copy m-dc2d5454.2:side_stream; do
        r=${v#*:} v=${v%%:*}
        echo "$v before $r"
        on_trace $L08 "$v" "
a = rng('$r')[0]
w = waits(0, a)[-1]                 # the last wait before the range
assert not queued(w.end, a), 'work queued after the last wait'
late = [x for x in queued(0, w.start) if x.end > w.end]
assert not late, '%d records ran on after it' % len(late)
print('the last wait before $r: %s; nothing queued after it, and every earlier record had ended when it returned' % w.name)
"
    done
}

@test "lab 08: a torch.cuda.synchronize() left out after part 1 or part 2 left the next wait, on the current stream, to wait for the same work" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L08 waits m-19a5da5f.3 m-19a5da5f.5
    on_trace $L08 m-19a5da5f.3 "
a, b = rng('pinned_copy')
w = waits(b, float('inf'))[0]       # the next wait after part 1's copies
work = queued(a, w.start)
s = {x.stream for x in work}
assert len(s) == 1 and w.name == 'cudaStreamSynchronize' and syncs[w.corr].stream in s, (s, w.name)
print('%d records from the pinned copy to the next wait, all on stream %s; that wait is %s of stream %s' % (len(work), *s, w.name, syncs[w.corr].stream))
"
    on_trace $L08 m-19a5da5f.5 "
a, b = rng('side_stream')
w = waits(b, float('inf'))[0]       # the next wait after part 2
cur = syncs[w.corr].stream
assert w.name == 'cudaStreamSynchronize', w.name
assert all(x.stream == cur for x in queued(b, w.start)), 'work on another stream after part 2'
for side in {x.stream for x in queued(a, b)} - {cur}:
    last = max(call(x).end for x in queued(a, b) if x.stream == side)
    assert any(sy.type == 'wait' and sy.stream == cur and api[c].start > last for c, sy in syncs.items() if c in api), side
    print('stream %s: the current stream %s waited for its last copy (a cudaStreamWaitEvent after it)' % (side, cur))
print('after part 2, until the next wait (cudaStreamSynchronize of stream %s), work only on that stream' % cur)
"
}

@test "lab 08: the torch.cuda.synchronize() left out after the events had nothing left to wait for" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L08 waits m-19a5da5f.9
    on_trace $L08 m-19a5da5f.9 "
a, b = rng('events')
assert not queued(b, float('inf')), 'work queued after the range'
w = waits(a, b)[-1]
late = [x for x in recs if x.end > w.end]
assert not late, '%d records ran on after the wait' % len(late)
print('nothing queued after the range events; every record had ended when its %s returned' % w.name)
"
}

@test "lab 08: the stop event's wait made torch.cuda.synchronize() waited for the same work: all of it on the current stream, the stop event last" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L08 waits m-5854de11
    on_trace $L08 m-5854de11 "
a, b = rng('events')
work, marks = queued(a, b), [e for e in evs if e.corr in api and a <= api[e.corr].start < b]
s = {x.stream for x in work} | {e.stream for e in marks}
w = waits(a, b)
assert len(s) == 1 and len(marks) == 2 and len(w) == 1 and w[0].name == 'cudaDeviceSynchronize', (s, len(marks), [x.name for x in w])
assert w[0].start > max(api[e.corr].end for e in marks), 'the wait before the stop event'
before = waits(0, a)[-1]
assert before.name == 'cudaDeviceSynchronize' and not queued(before.end, a), 'work before the range not waited for'
print('range events: its kernel and both events on stream %s, the one wait (%s) after the stop event; before it the GPU was waited for' % (*s, w[0].name))
"
}

# ---------------------------------------------------------------- 09-multi-gpu

L09=09-multi-gpu

@test "lab 09: copies, kernels, events and waits of parts 1 and 2 moved to a legacy default stream, or made by a call that takes no stream, fail the check of the created streams, the hint naming the cause; the solution's runs pass it" {
    local check="parts 1 and 2 queued every copy, kernel, event and stream wait in a stream the program created"
    pass_all $L09 "$check" solution solution-2
    fail_with $L09 "$check" "keep the given stream arguments: in part 1 each slice's copies and kernels go to its own streams" \
        m-1692b9f8 m-b108ec9e m-2e5c8fe0 m-74865dc2 m-76a912bd m-30cd46cc
    log_has $L09 m-1692b9f8 'seen: *part 1: H2D copy on the legacy default stream of GPU 0 (7), H2D copy on the legacy default stream of GPU 1 (15)$'
    log_has $L09 m-76a912bd 'seen: *part 2: produce_kernel on the legacy default stream of GPU 0 (7)$'
    fail_with $L09 "$check" "cudaMemcpy and cudaMemcpyPeer take no stream" m-6343be8b m-5d062576 m-a14c954c m-77279187
    log_has $L09 m-77279187 'seen: *part 2: P2P copy on the legacy default stream of GPU 1 (15)$'
    fail_with $L09 "$check" "record .made. in the producer's stream, s_prod, and make the consumer's stream, s_cons, wait for it.*\(TODO 3\)" m-651670b0 m-c84f178e
    log_has $L09 m-651670b0 'seen: *part 2: event record on the legacy default stream of GPU 0 (7)$'
    log_has $L09 m-c84f178e 'seen: *part 2: stream wait (cudaStreamWaitEvent) on the legacy default stream of GPU 1 (15)$'
}

@test "lab 09: the given waits deleted before a timed run, a wait moved above the copy back, waits for a legacy default stream, and cudaDeviceSynchronize of one GPU for the copies of both, fail the check of the timed runs, the hint naming the wait; the solution's runs pass it" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    local check="each timed run began with the GPUs idle, and the host waited for all its work before the run ended"
    pass_all $L09 "$check" solution solution-2
    fail_with $L09 "$check" "keep the given waits before each timed run" m-9dd900eb m-9dd900eb.2 m-9dd900eb.3 m-9dd900eb.4
    log_has $L09 m-9dd900eb.2 'seen: *"part2_event" began at .* the memset on the legacy default stream (7) of GPU 0, queued at .* (the waits after it, before the range: cudaDeviceSynchronize (GPU 1 current))$'
    log_has $L09 m-9dd900eb.4 'seen: *"staged" began at .* the memset on the legacy default stream'
    fail_with $L09 "$check" "keep part 2's one wait as given, at the end: cudaStreamSynchronize\(s_cons\)" m-4945fb26 m-a077e91a
    log_has $L09 m-4945fb26 'seen: *"part2_event" ended at .* the D2H copy on stream 31 of GPU 1, .* (the waits after it, in the range: none)$'
    log_has $L09 m-a077e91a 'the waits after it, in the range: cudaStreamSynchronize of stream 15 (the legacy default stream of GPU 1))$'
    fail_with $L09 "$check" "keep run_sequential\(\)'s waits as given" m-6431779e
    fail_with $L09 "$check" "once every slice is queued, wait for every one of each slice's streams.*\(TODO 2\)" m-0d4b1f8e
    log_has $L09 m-0d4b1f8e 'in the range: cudaStreamSynchronize of stream 7 (the legacy default stream of GPU 0) x4, cudaStreamSynchronize of stream 15 (the legacy default stream of GPU 1) x4)$'
    fail_with $L09 "$check" "keep exchange\(\)'s waits as given: cudaEventSynchronize" m-30c2d18b
    log_has $L09 m-30c2d18b 'seen: *"staged" ended at .* the P2P copy on stream 32 of GPU 0, .* cudaDeviceSynchronize (GPU 1 current) x2)$'
}

@test "lab 09: a survivor that leaves out a free did all else the solution did, call for call, and printed the same" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L09 frees m-4679eb9f m-f7b99b26 m-f021fbab m-9366ad45 m-8267fe59 m-fa63874b m-4d15537c m-25ee72e5 m-2391e035 m-802a5047
}

@test "lab 09: a survivor with another GPU current at calls that launch no kernel made the solution's calls otherwise, and its waits still covered their streams' work" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L09 current m-4aab3c03 m-4aab3c03.3 m-87064c67 m-278f0752 m-29c32062 m-11f9448f m-547be7e1 m-a5e41d1e \
        m-efb1438d m-efb1438d.2 m-81d9abc7.2 m-27eb37ba.3 m-166105a7.3 m-0bc2b802.2
    pass_all $L09 "each timed run began with the GPUs idle, and the host waited for all its work before the run ended" \
        m-4aab3c03 m-4aab3c03.3 m-87064c67 m-278f0752 m-29c32062 m-11f9448f m-547be7e1
}

@test "lab 09: the kernels' code loaded with GPU 0 current only (m-2b34a9f4) left the solution's calls and work otherwise, GPU 1 loading it at its first launch, in the first sequential run" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L09 current m-2b34a9f4
    on_trace $L09 m-2b34a9f4 "
cur = {}
with M.open_run(sys.argv[2] + '.trace') as f:
    for l in f:
        x = l.rstrip('\n').split('\t')
        if x[0] == 'current':
            cur[x[1]] = x[2]
loads = [c for c in api.values() if c.name == 'cudaFuncGetAttributes']
assert loads and all(cur.get(c.corr) == '0' for c in loads), 'a load with GPU 1 current'
first = min((call(x) for x in recs if x.kind == 'kernel' and x.dev == '1'), key=lambda c: c.start)
a, b = rng('sequential')
assert a <= first.start <= b, 'the first kernel of GPU 1 outside the first sequential run'
print('%d loads, all with GPU 0 current; GPU 1 first launched in the first sequential run, the call lasting %.3f ms' % (len(loads), (first.end - first.start) / 1e6))
"
}

@test "lab 09: the halos read back with the other GPU current (m-278f0752.3) made the solution's calls otherwise, each copy back after both copies of its exchange had ended" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L09 halo m-278f0752.3
    on_trace $L09 m-278f0752.3 "
for r in ('staged', 'direct'):
    a, b = rng(r)
    ends = max(x.end for x in queued(a, b) if x.what == 'P2P')
    back = [x for x in queued(b, float('inf')) if x.kind == 'copy' and x.what == 'D2H'][:2]
    assert len(back) == 2 and all(x.start >= ends for x in back), r
    print('%s: both halos came back after both copies had ended, on streams %s' % (r, ', '.join(x.stream for x in back)))
"
}

@test "lab 09: a wait for a stream made cudaDeviceSynchronize of the stream's GPU made the solution's calls otherwise and covered the same work" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L09 waits m-6f9fbf2e m-4bc30118 m-8e19c73b
    pass_all $L09 "each timed run began with the GPUs idle, and the host waited for all its work before the run ended" \
        m-6f9fbf2e m-4bc30118 m-8e19c73b
}

# ---------------------------------------------------------------- 10-graphs

L10=10-graphs

@test "lab 10: kernels, a copy back or a wait put on a default stream, the fork's first kernel left out of its graph, and the given waits left out or moved fail the checks added for them, the hint naming the cause; the solution's runs pass them" {
    local streams="every kernel, graph launch, copy back, event and wait is on a stream the program created"
    local ranges="each timed or checked range begins after the host waited for the work queued before it"
    pass_all $L10 "$streams" solution solution-2
    fail_with $L10 "$streams" "the part.s streams are non-blocking: .*cudaStreamSynchronize\(0\) waits for stream 0 only" m-5fbf1040 m-e6392005.2
    log_has $L10 m-5fbf1040 'seen: *step_kernel on the legacy default stream (cudaLaunchKernel) x6400$'
    pass_all $L10 "$ranges" solution solution-2
    fail_with $L10 "$ranges" "keep the given waits: .*after each cudaGraphUpload" m-9dd900eb m-babbf2c2.3
    log_has $L10 m-9dd900eb 'seen: *"fork_stream" #1 began at .*: the memset on stream 7, queued at'
    fail_with $L10 "part 3 waits for each copy back before it reads the result" ".*keep the given cudaStreamSynchronize\(s\) right after each copy back" m-babbf2c2.5
    fail_with $L10 "each loop's host time covers its kernels and is the time printed" ".*keep cudaStreamSynchronize\(s\) after the loop" m-babbf2c2.2
    log_has $L10 m-babbf2c2.2 'seen: *no wait after the last launch in "stream_loop"$'
    fail_with $L10 "every replay of the fork runs its whole capture: pre_kernel, both branches, the join and the copy back, in one graph" \
        ".*keep pre_kernel on f->origin" m-65cad534
    log_has $L10 m-65cad534 'seen: *replay 1: pre_kernel x0$'
}

@test "lab 10: a survivor that leaves out a free did all else the solution did, call for call, and printed the same" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L10 frees m-0c5690e0
}

@test "lab 10: an event record moved above the launch check before it made the solution's calls otherwise, each record right after its kernel on its stream" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L10 checks m-177ebcc3 m-6ec81685
}

@test "lab 10: the side stream's wait queued after branch A's launch (m-f3daf142) still comes before branch B on the side stream, and every check of the fork passes" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    proves $L10 <<'PY'
rem, add = changed('m-f3daf142')
check(sorted(rem) == sorted(add) and rem, 'the same calls, only in another order')
check(all(l.startswith('cudaLaunchKernel') and 'branch_a_kernel' in l or l == 'cudaLaunchKernel' for l in rem),
      'only branch A\'s launches moved (%s)' % rem)
c = [l.strip() for l in calls('m-f3daf142')]
# on the streams and in the capture: the side stream's wait, then branch B's
# launch alone before the origin stream's wait for the join
waits = [k for k, l in enumerate(c) if l.startswith('cudaStreamWaitEvent')]
check(len(waits) == 4, 'four stream waits, two a run of fork_join()')
for a, b in ((waits[0], waits[1]), (waits[2], waits[3])):
    between = c[a + 1:b]
    launches = [l for l in between if l.startswith('cudaLaunchKernel')]
    check(len(launches) == 1, 'one launch, branch B\'s, between the side stream\'s wait and the join\'s wait (%s)' % launches)
print('%d calls moved, each a launch of branch A; the side stream waits before branch B in both runs of fork_join()' % len(rem))
PY
    pass_all $L10 "the two branches are free to run at the same time: nothing orders them on the streams, and a replay runs them at once" m-f3daf142
    pass_all $L10 "the join starts after both branches end, on the streams and in every replay" m-f3daf142
    pass_all $L10 "every replay of the fork runs its whole capture: pre_kernel, both branches, the join and the copy back, in one graph" m-f3daf142
}

# waits_cover VARIANT: in the recorded run, every cudaStreamSynchronize and
# cudaDeviceSynchronize that returned cudaSuccess returned after every copy,
# kernel and memset queued before it had ended (0.02 ms allowed, as the
# checks allow for CUPTI's placing of GPU times on the host's clock).
waits_cover() {
    on_trace $L10 "$1" "
import re
ok = set()
with M.open_run(sys.argv[2] + '.trace') as f:
    errs = {l.split('\t')[1] for l in f if l.startswith('error\t')}
n = 0
for w in sorted((c for c in api.values() if c.name in ('cudaStreamSynchronize', 'cudaDeviceSynchronize') and c.corr not in errs), key=lambda c: c.start):
    before = [x for x in recs if x.corr in api and api[x.corr].start < w.start]
    late = [x for x in before if x.end > w.end + 20000]
    assert not late, '%s at %d returned before %s ended' % (w.name, w.start, late[0].what)
    n += 1
print('$1: %d waits, each returned after all the work queued before it' % n)
"
}

@test "lab 10: a wait for one stream made cudaDeviceSynchronize waited for the same work: in the solution's runs every wait already returned after all the work queued before it" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L10 waits m-99912320 m-99912320.2 m-99912320.3 m-99912320.4 m-ff77b885 m-ff77b885.2 m-ff77b885.3 \
        m-99912320.5 m-99912320.6
    waits_cover solution
    waits_cover solution-2
}

@test "lab 10: the wait left out after the pitfall part (m-9dd900eb.3) had nothing to wait for: no copy, kernel or memset was queued since the wait before it" {
    skip_full "a proof of make mutate's; the quick run keeps one a lab"
    same_calls $L10 waits m-9dd900eb.3
    local v
    for v in solution solution-2 m-9dd900eb.3; do
        on_trace $L10 $v "
a, b = rng('pitfall_sync')[0], rng('pitfall_legacy')[1]
before = [c for c in api.values() if c.name.endswith('Synchronize') and c.start < a]
last = max(before, key=lambda c: c.start)
after = [c for c in api.values() if c.start > b]
nxt = min(after, key=lambda c: c.start if c.name.endswith('Synchronize') or c.name == 'cudaMemcpy' else float('inf'))
q = queued(last.end, nxt.start)
assert not q, 'queued between %s and %s: %s' % (last.name, nxt.name, [x.what for x in q])
print('$v: nothing queued between %s before the pitfall part and %s after it' % (last.name, nxt.name))
"
    done
}
