#!/usr/bin/env python3
"""model.py -- replays of lab 07 written from a model, until runs recorded on
a GPU replace them (RECORD=1 checker/tests/gpu-suite.sh, or
checker/tests/gpu-lab-07.sh): then delete this file.

    checker/tests/replays/07-default-streams/model.py [SEED]

Writes VARIANT/r.{out,err,rc,trace} and VARIANT/seed beside this file for the
solution, the starter and every mutant of checker/mutants/07-default-streams:
what the program would print, and a trace in format 2 (checker/trace/
FORMAT.md) of what the GPU would do by CUDA's stream rules -- the legacy
default stream waits for every blocking stream and they for it; per-thread
default streams are blocking; non-blocking streams wait for nobody; one copy
engine each way, one kernel at a time in part 3. Durations are round figures
near an H100's. It tests the checker's logic, not a GPU. The digests come
from checker/verify/digests (built), the seed from SEED (default 20261123,
as record-replays.sh).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
SEED = sys.argv[1] if len(sys.argv) > 1 else '20261123'
T0 = 1795600000000000000
US = 1000
MS = 1000000
MAIN, A1, B1, A2, B2 = 2203090944, 2203094001, 2203094002, 2203094003, 2203094004
LEGACY = 7


class Run:
    def __init__(self, variant):
        self.v = variant
        self.lines = []
        self.corr = 117
        self.streams = {LEGACY: 'default\t0\t-'}
        self.legacy_end = 0             # end of the last op on the legacy stream
        self.blocking_end = 0           # end of the last op on any blocking stream
        self.stream_end = {}
        self.legacy_ops = []            # (issue, end) of legacy-stream ops

    def api(self, thread, name, start, dur=4 * US):
        self.corr += 1
        self.lines.append('api\t%d\t%d\t%d\t%d\t%s' % (T0 + start, T0 + start + dur, thread,
                                                     self.corr, name))
        return self.corr

    def nvtx(self, thread, name, start, end):
        self.lines.append('nvtx\t%d\t%d\t%d\t%s' % (T0 + start, T0 + end, thread, name))

    def sync(self, stream, kind, corr, start, end):
        self.lines.append('sync\t%d\t%d\t0\t%s\t%s\t%d' % (T0 + start, T0 + end, stream, kind, corr))

    def blocking(self, s):
        return self.streams[s].endswith('\tblocking')

    def when(self, s, ready):
        """When an op queued on stream s, ready at `ready`, may start by the
        stream rules (its engine aside)."""
        t = max(ready, self.stream_end.get(s, 0))
        if s == LEGACY:
            t = max(t, self.blocking_end)
        elif self.blocking(s):
            t = max(t, self.legacy_end)
        return t

    def done(self, s, end):
        self.stream_end[s] = max(self.stream_end.get(s, 0), end)
        if s == LEGACY:
            self.legacy_end = max(self.legacy_end, end)
        elif self.blocking(s):
            self.blocking_end = max(self.blocking_end, end)

    def kernel(self, s, corr, start, dur, grid, name):
        self.lines.append('kernel\t%d\t%d\t0\t%d\t%s\t256,1,1\t%d\t%s' % (
            T0 + start, T0 + start + dur, s, grid, corr, name))
        self.done(s, start + dur)
        return start + dur

    def copy(self, s, corr, start, dur, direction, nbytes, host='PINNED', asynchronous=1):
        src, dst = (host, 'DEVICE') if direction == 'H2D' else ('DEVICE', host)
        self.lines.append('copy\t%d\t%d\t0\t%d\t%s\t%d\t%s\t%s\t%d\t-\t-\t%d' % (
            T0 + start, T0 + start + dur, s, direction, nbytes, src, dst, asynchronous, corr))
        self.done(s, start + dur)
        return start + dur

    def memset(self, s, corr, start, dur, nbytes):
        self.lines.append('memset\t%d\t%d\t0\t%d\t%d\tDEVICE\t%d' % (
            T0 + start, T0 + start + dur, s, nbytes, corr))
        self.done(s, start + dur)
        return start + dur


SPIN_NAME = 'spin_%s_kernel(stamp*, unsigned int*, unsigned int)'
WORKER = 'worker_kernel(unsigned int*, unsigned int const*, unsigned long, unsigned int)'
COUNT = 'count_kernel(unsigned int*, unsigned int*, unsigned int const*, unsigned long, unsigned int)'


def part_kinds(r, t, out):
    """Part 1 from time t; returns the time it ends."""
    v = r.v
    r.api(MAIN, 'cudaMalloc', t)
    r.api(MAIN, 'cudaMalloc', t + 10 * US)
    c = r.api(MAIN, 'cudaMemcpy', t + 20 * US, 20 * US)
    r.copy(LEGACY, c, t + 25 * US, 2 * US, 'H2D', 64, 'PAGEABLE', 0)
    if v == 'starter':
        return None
    b_flags = 'non-blocking' if v in ('mut-kinds-flags-swapped', 'mut-kinds-both-nonblocking') else 'blocking'
    nb_flags = 'blocking' if v in ('mut-kinds-flags-swapped', 'mut-kinds-no-flag') else 'non-blocking'
    r.streams[13] = 'created\t0\t' + b_flags
    r.streams[14] = 'created\t0\t' + nb_flags
    r.streams[15] = 'per-thread\t0\tblocking'
    r.api(MAIN, 'cudaStreamCreate' if b_flags == 'blocking' else 'cudaStreamCreateWithFlags', t + 50 * US)
    r.api(MAIN, 'cudaStreamCreate' if nb_flags == 'blocking' else 'cudaStreamCreateWithFlags', t + 60 * US)
    c = r.api(MAIN, 'cudaDeviceSynchronize', t + 70 * US)
    r.sync('-', 'context', c, t + 70 * US, t + 74 * US)
    t1 = t + 80 * US
    start = {}
    c = r.api(MAIN, 'cudaLaunchKernel', t1 + 2 * US, 6 * US)
    start['legacy'] = r.when(LEGACY, t1 + 10 * US)
    lend = r.kernel(LEGACY, c, start['legacy'], 7700 * US, '2,1,1', SPIN_NAME % 'legacy')
    for k, (name, s) in enumerate((('nonblocking', 14), ('blocking', 13), ('per_thread', 15))):
        at = t1 + (12 + 6 * k) * US
        c = r.api(MAIN, 'cudaLaunchKernel', at, 4 * US)
        start[name] = r.when(s, at + 8 * US)
        r.kernel(s, c, start[name], 1900 * US, '2,1,1', SPIN_NAME % name)
    end = max(r.stream_end.values())
    c = r.api(MAIN, 'cudaDeviceSynchronize', t1 + 40 * US, end + 5 * US - (t1 + 40 * US))
    r.sync('-', 'context', c, t1 + 40 * US, end + 5 * US)
    r.nvtx(MAIN, 'part1_kinds', t1, end + 8 * US)
    c = r.api(MAIN, 'cudaMemcpy', end + 10 * US, 20 * US)
    r.copy(LEGACY, c, end + 14 * US, 2 * US, 'D2H', 64, 'PAGEABLE', 0)
    waited = {}
    for name in ('nonblocking', 'blocking', 'per_thread'):
        if v == 'mut-kinds-verdict-turned-around':
            waited[name] = int(start[name] < lend)
        else:
            waited[name] = int(start[name] >= lend)
    out.append('part 1: a long kernel on the legacy default stream, then the same short '
               'kernel on three streams')
    for name, what in (('nonblocking', 'a non-blocking created stream'),
                       ('blocking', 'a blocking created stream'),
                       ('per_thread', 'the per-thread default stream')):
        out.append('  on %-30s %s' % (what, 'waited for it' if waited[name] else 'ran while it ran'))
    out.append('  %-18s = %12.4f  %s' % ('waited_nonblocking', waited['nonblocking'],
                                         '1: started only after the legacy kernel ended'))
    out.append('  %-18s = %12.4f  ' % ('waited_blocking', waited['blocking']))
    out.append('  %-18s = %12.4f  ' % ('waited_per_thread', waited['per_thread']))
    return end + 40 * US


def threads(r, t, version, ta, tb):
    """One version of part 2 from time t; returns the time it ends."""
    v = r.v
    n_bytes = 131072
    own = version == 'per_thread'
    sa, sb = (16, 17) if own else (LEGACY, LEGACY)
    if own:
        r.streams[16] = 'per-thread\t0\tblocking'
        r.streams[17] = 'per-thread\t0\tblocking'
    ends = []
    calls = []
    for th, s, off in ((ta, sa, 100), (tb, sb, 120)):
        at = t + off * US
        copy_s = LEGACY if (own and v == 'mut-threads-copies-without-stream') else s
        kern_s = LEGACY if (own and v == 'mut-threads-kernel-on-stream-0') else s
        calls.append((at, th, 'H2D', copy_s))
        calls.append((at + 6 * US, th, 'kernel', kern_s))
        calls.append((at + 12 * US, th, 'D2H', copy_s))
    calls.sort()
    copy_free = {'H2D': 0, 'D2H': 0}
    for at, th, what, s in calls:
        c = r.api(th, 'cudaLaunchKernel' if what == 'kernel' else 'cudaMemcpyAsync', at)
        ready = r.when(s, at + 5 * US)
        if what == 'kernel':
            ends.append(r.kernel(s, c, ready, 7700 * US, '2,1,1', WORKER))
        else:
            ready = max(ready, copy_free[what])
            copy_free[what] = r.copy(s, c, ready, 6 * US, what, n_bytes)
            ends.append(copy_free[what])
    end = max(ends)
    for th, s, off in ((ta, sa, 100), (tb, sb, 120)):
        at = t + (off + 18) * US
        if own and v == 'mut-threads-device-sync':
            c = r.api(th, 'cudaDeviceSynchronize', at, end + 3 * US - at)
            r.sync('-', 'context', c, at, end + 3 * US)
        else:
            mine = max(e for e in [r.stream_end.get(s, 0)])
            c = r.api(th, 'cudaStreamSynchronize', at, mine + 3 * US - at)
            r.sync(s, 'stream', c, at, mine + 3 * US)
        r.nvtx(th, 'worker', t + (off - 2) * US, end + 6 * US)
    r.nvtx(MAIN, 'part2_' + ('per_thread' if own else 'legacy'), t, end + 20 * US)
    return end + 30 * US


def pipeline(r, t):
    """Part 3 from time t; returns the time it ends."""
    v = r.v
    chunk = 16777216
    nb = v == 'mut-pipeline-nonblocking-streams'
    for s in range(18, 22):
        r.streams[s] = 'created\t0\t' + ('non-blocking' if nb else 'blocking')
    c = r.api(MAIN, 'cudaMemset', t)
    r.memset(LEGACY, c, r.when(LEGACY, t + 5 * US), 2 * US, 4096)
    c = r.api(MAIN, 'cudaDeviceSynchronize', t + 20 * US)
    r.sync('-', 'context', c, t + 20 * US, t + 24 * US)
    t3 = t + 30 * US
    free = {'H2D': 0, 'D2H': 0, 'kernel': 0}
    at = t3 + 2 * US
    ends = []
    for k in range(16):
        s = 18 + k % 4
        clear_s = LEGACY if v in ('mut-pipeline-memset-on-stream-0', 'mut-pipeline-memsetasync-without-stream',
                                  'mut-pipeline-nonblocking-streams') else s
        clear_name = 'cudaMemset' if v in ('mut-pipeline-memset-on-stream-0',
                                            'mut-pipeline-nonblocking-streams') else 'cudaMemsetAsync'
        ops = [('clear', clear_s), ('H2D', s), ('kernel', s), ('D2Hbins', s), ('D2H', s)]
        if v == 'mut-pipeline-clear-after-kernel':
            ops = [('H2D', s), ('kernel', s), ('clear', s), ('D2Hbins', s), ('D2H', s)]
        for what, st in ops:
            name = {'clear': clear_name, 'kernel': 'cudaLaunchKernel'}.get(what, 'cudaMemcpyAsync')
            c = r.api(MAIN, name, at, 3 * US)
            ready = r.when(st, at + 5 * US)
            if what == 'clear':
                ends.append(r.memset(st, c, ready, 2 * US, 1024))
            elif what == 'kernel':
                ready = max(ready, free['kernel'])
                free['kernel'] = r.kernel(st, c, ready, 265 * US, '16384,1,1', COUNT)
                ends.append(free['kernel'])
            elif what == 'H2D':
                ready = max(ready, free['H2D'])
                free['H2D'] = r.copy(st, c, ready, 300 * US, 'H2D', chunk)
                ends.append(free['H2D'])
            else:
                ready = max(ready, free['D2H'])
                free['D2H'] = r.copy(st, c, ready, 3 * US if what == 'D2Hbins' else 300 * US, 'D2H',
                                     1024 if what == 'D2Hbins' else chunk)
                ends.append(free['D2H'])
            at += 4 * US
    end = max(ends)
    c = r.api(MAIN, 'cudaDeviceSynchronize', at, end + 4 * US - at)
    r.sync('-', 'context', c, at, end + 4 * US)
    r.nvtx(MAIN, 'part3_pipeline', t3, end + 8 * US)
    return end + 50 * US


def digests():
    d = subprocess.run([os.path.join(KIT, 'checker/verify/digests'), '07', '--seed', SEED],
                       capture_output=True, text=True, check=True).stdout
    return dict(line.strip().replace('digest_', '').split(' = ') for line in d.strip().split('\n'))


def write(variant):
    r = Run(variant)
    out = ['default_streams: on NVIDIA H100 80GB HBM3 (132 SMs)']
    err = ''
    rc = 0
    dg = digests()
    t = 0
    r.api(MAIN, 'cudaGetDeviceCount', t)
    r.api(MAIN, 'cudaSetDevice', t + 10 * US, 150 * MS)
    for k in range(7):
        r.api(MAIN, 'cudaFuncGetAttributes' if k else 'cudaGetDeviceProperties', 151 * MS + k * 10 * US)
    t = part_kinds(r, 152 * MS, out)
    if t is None:
        err = ('TODO(1) is not done: create `blocking` with cudaStreamCreate, and `nonblocking` '
               'with cudaStreamCreateWithFlags and the flag cudaStreamNonBlocking\n')
        rc = 1
    else:
        out.append('part 2: two host threads, 32768 numbers each, on stream 0 as given, '
                   'then each on its own stream')
        for k in range(8):
            r.api(MAIN, 'cudaHostAlloc' if k < 4 else 'cudaMalloc', t + k * 200 * US, 150 * US)
        t += 2 * MS
        t = threads(r, t, 'legacy', A1, B1)
        out.append('  digest_threads_legacy = ' + dg['threads_legacy'])
        t = threads(r, t + 100 * US, 'per_thread', A2, B2)
        out.append('  digest_threads_per_thread = ' + dg['threads_per_thread'])
        t = pipeline(r, t + 60 * MS)
        out.append('part 3: 256 MiB in 16 chunks over 4 streams; each chunk\'s bins counted '
                   'in its stream\'s scratch')
        out.append('  digest_pipeline = ' + dg['pipeline'])
        if variant in ('mut-pipeline-nonblocking-streams', 'mut-pipeline-clear-after-kernel'):
            out.append('  digest_bins = 5a17e0b4c2d9f013')
            bad = 3072 if variant.endswith('streams') else 4096
            out.append('part 3: WRONG: %d bins differ (first in chunk %d: was its scratch zero '
                       'when its kernel started?)' % (bad, 4 if variant.endswith('streams') else 0))
            out.append('RESULT: WRONG: %d numbers or bins differ (see the part above)' % bad)
            rc = 1
        else:
            out.append('  digest_bins = ' + dg['bins'])
            out.append('RESULT: verified every result of the parts that were run')
    d = os.path.join(HERE, variant)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed'), 'w') as f:
        f.write(SEED + '\n')
    with open(os.path.join(d, 'r.out'), 'w') as f:
        f.write('\n'.join(out) + '\n')
    with open(os.path.join(d, 'r.err'), 'w') as f:
        f.write(err)
    with open(os.path.join(d, 'r.rc'), 'w') as f:
        f.write('%d\n' % rc)
    head = ['streamtrace 2',
            '# %s of lab 07, written by checker/tests/replays/07-default-streams/model.py:' % variant,
            '# a model of a run by CUDA\'s stream rules, not a recording; record anew on a GPU',
            'meta\tclock\tcupti_ns', 'meta\tcupti_version\t130001', 'meta\tpid\t4242',
            'meta\targv\t./default_streams --seed %s' % SEED,
            'meta\tdevice\tNVIDIA H100 80GB HBM3', 'meta\tdevice_id\t0', 'meta\tcopy_engines\t3',
            'meta\tsm_count\t132', 'meta\tdefault_stream\t7',
            'device\t0\t3\t132\tNVIDIA H100 80GB HBM3']
    head += ['stream\t%d\t%s' % (s, kind) for s, kind in sorted(r.streams.items())]
    with open(os.path.join(d, 'r.trace'), 'w') as f:
        f.write('\n'.join(head + r.lines) + '\nend\t%d\t0\n' % len(r.lines))


def main():
    variants = ['solution', 'starter']
    mdir = os.path.join(KIT, 'checker/mutants/07-default-streams')
    variants += ['mut-' + p[:-6] for p in sorted(os.listdir(mdir)) if p.endswith('.patch')]
    for v in variants:
        write(v)
        print(v)


main()
