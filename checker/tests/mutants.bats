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

# ---------------------------------------------------------------- 06-lifetime

# ---------------------------------------------------------------- 07-default-streams
#
# Helpers of the sections of labs 07, 08 and 09 (they would serve any lab).

# survivor_replay LAB VARIANT CHECK: replay the recorded run `main` of
# fixtures/mutate/LAB/VARIANT (m-ID, solution, solution-2) through LAB's
# checker, the check CHECK alone. replay-prog reads r.rc, r.out, r.err,
# r.trace and seed: made here from main.rc, main.out.gz, main.err.gz (an
# empty one where there is none) and main.trace.gz, and mutate.py's SEED,
# which every run of make mutate gets. Its TAP: tap_of LAB/VARIANT; what
# the checker printed, $BATS_TEST_TMPDIR/LAB/VARIANT.log, is shown.
survivor_replay() {
    local f="$FIX/$1/$2" d="$BATS_TEST_TMPDIR/rec/$1/$2" x
    mkdir -p "$d"
    cp "$f/main.rc" "$d/r.rc"
    for x in out err trace; do
        if [ -f "$f/main.$x.gz" ]; then gunzip -c "$f/main.$x.gz" >"$d/r.$x"; else : >"$d/r.$x"; fi
    done
    sed -n "s/^SEED = '\([0-9]*\)'.*/\1/p" "$MUTATE" >"$d/seed"
    REPLAY_DIR="$d" replay_check "$1/$2" "$3"
    echo "--- $1/$2"
    cat "$BATS_TEST_TMPDIR/$1/$2.log"
}

# fail_with LAB CHECK HINT VARIANT...: each recorded run fails CHECK, and
# its hint matches HINT (grep -E, after "hint:"). The quick run (make test
# without a GPU) replays the first VARIANT alone; make test-all, every one.
fail_with() {
    local lab=$1 check=$2 hint=$3 v bad=""
    shift 3
    kit_full || set -- "$1"
    for v in "$@"; do
        survivor_replay "$lab" "$v" "$check"
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
        survivor_replay "$lab" "$v" "$check"
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

@test "lab 07: the waits deleted between the parts (m-9dd900eb.2, .3, .4) or at a part's end (m-9dd900eb), and a thread's wait moved above its copy back (m-f91413b2, m-4811e684), fail the check of the parts, the hint naming the wait; the solution's runs pass it" {
    local check="each part began with the GPU idle and waited for all its work before it ended"
    pass_all $L07 "$check" solution solution-2
    fail_with $L07 "$check" "keep the given cudaDeviceSynchronize\(\) before each part as it is" \
        m-9dd900eb.2 m-9dd900eb.3 m-9dd900eb.4
    log_has $L07 m-9dd900eb.2 'seen: *part2_legacy began at .* the last, the D2H copy on the legacy default stream (7), was queued at'
    log_has $L07 m-9dd900eb.3 'seen: *part2_per_thread began at .* the last, the memset on the legacy default stream (7)'
    log_has $L07 m-9dd900eb.4 'seen: *part3_pipeline began at .* the last, the memset on the legacy default stream (7)'
    fail_with $L07 "$check" "keep the given cudaDeviceSynchronize\(\) after part 1's four launches" m-9dd900eb
    log_has $L07 m-9dd900eb 'seen: *part1_kinds ended at .* ms, and thread 1 did not wait for its last work in it, the spin_per_thread_kernel'
    fail_with $L07 "$check" "keep round_trip_legacy\(\) as given: cudaStreamSynchronize\(0\) after the copy back" m-f91413b2
    fail_with $L07 "$check" "wait after the last call of the round trip: .*\(TODO 3\)$" m-4811e684
    log_has $L07 m-4811e684 'seen: *part2_per_thread ended at .* did not wait for its last work in it, the D2H copy on a per-thread default stream'
}

@test "lab 07: a survivor that leaves out a free did all else the solution did, call for call, and printed the same" {
    same_calls $L07 frees m-af53df8b m-0d829c30 m-2ddbf586 m-054460f8 m-90867298 m-1ee47c90
}

@test "lab 07: part 2's given version with a cudaMemcpy or a cudaDeviceSynchronize made the solution's calls on stream 0 otherwise, each thread's copies and kernel on the legacy default stream" {
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
    local check="the .to() from pageable memory is given non_blocking=True: it makes no wait of its own"
    pass_all $L08 "$check" solution solution-2
    fail_with $L08 "$check" "keep part 1's pageable copy as given: pageable.to\(DEVICE, non_blocking=True\)" m-2c7372cb
    log_has $L08 m-2c7372cb 'seen: *cudaStreamSynchronize$'
}

@test "lab 08: a torch.cuda.synchronize() left out or moved where nothing had been queued since the last wait changed nothing else: the same calls, and the work before it waited for" {
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
    same_calls $L09 frees m-4679eb9f m-f7b99b26 m-f021fbab m-9366ad45 m-8267fe59 m-fa63874b m-4d15537c m-25ee72e5 m-2391e035 m-802a5047
}

@test "lab 09: a survivor with another GPU current at calls that launch no kernel made the solution's calls otherwise, and its waits still covered their streams' work" {
    same_calls $L09 current m-4aab3c03 m-4aab3c03.3 m-87064c67 m-278f0752 m-29c32062 m-11f9448f m-547be7e1 m-a5e41d1e \
        m-efb1438d m-efb1438d.2 m-81d9abc7.2 m-27eb37ba.3 m-166105a7.3 m-0bc2b802.2
    pass_all $L09 "each timed run began with the GPUs idle, and the host waited for all its work before the run ended" \
        m-4aab3c03 m-4aab3c03.3 m-87064c67 m-278f0752 m-29c32062 m-11f9448f m-547be7e1
}

@test "lab 09: the kernels' code loaded with GPU 0 current only (m-2b34a9f4) left the solution's calls and work otherwise, GPU 1 loading it at its first launch, in the first sequential run" {
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
    same_calls $L09 waits m-6f9fbf2e m-4bc30118 m-8e19c73b
    pass_all $L09 "each timed run began with the GPUs idle, and the host waited for all its work before the run ended" \
        m-6f9fbf2e m-4bc30118 m-8e19c73b
}
