#!/usr/bin/env python3
"""model.py -- replays of lab 08 written from a model, until runs recorded on
a GPU replace them (checker/tests/gpu-lab-08.sh): then delete this file.

    checker/tests/replays/08-pytorch/model.py [SEED]

Writes VARIANT/r.{out,err,rc,trace} and VARIANT/seed beside this file for the
solution, the starter and every mutant of checker/mutants/08-pytorch: what
streams.py would print, and a trace in format 2 (checker/trace/FORMAT.md) of
what the GPU would do by CUDA's stream rules (torch's current stream is the
legacy default stream; torch.cuda.Stream() is created non-blocking).
Durations are round figures near an H100's. It tests the checker's logic,
not a GPU. The digests come from checker/verify/digests (built).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
SEED = sys.argv[1] if len(sys.argv) > 1 else '20261123'
T0 = 1795600000000000000
US, MS = 1000, 1000000
MAIN, LEGACY, SIDE = 2203090944, 7, 13
MUTANTS = sorted(p[:-6] for p in os.listdir(os.path.join(KIT, 'checker/mutants/08-pytorch'))
                 if p.endswith('.patch'))


class Run:
    def __init__(self, v):
        self.v, self.lines, self.corr, self.t = v, [], 100, 400 * MS
        self.end = {LEGACY: 0, SIDE: 0}

    def api(self, name, dur=5 * US):
        self.corr += 1
        a = self.t
        self.lines.append('api\t%d\t%d\t%d\t%d\t%s' % (T0 + a, T0 + a + dur, MAIN, self.corr, name))
        self.t = a + dur + 2 * US
        return self.corr, a, a + dur

    def nvtx(self, name, a, b):
        self.lines.append('nvtx\t%d\t%d\t%d\t%s' % (T0 + a, T0 + b, MAIN, name))

    def kernel(self, s, corr, ready, dur, name):
        a = max(ready, self.end[s])
        self.end[s] = a + dur
        self.lines.append('kernel\t%d\t%d\t0\t%d\t1024,1,1\t256,1,1\t%d\t%s' % (
            T0 + a, T0 + a + dur, s, corr, name))
        return a + dur

    def copy(self, s, corr, ready, dur, mem, nbytes):
        a = max(ready, self.end[s])
        self.end[s] = a + dur
        self.lines.append('copy\t%d\t%d\t0\t%d\tH2D\t%d\t%s\tDEVICE\t1\t-\t-\t%d' % (
            T0 + a, T0 + a + dur, s, nbytes, mem, corr))
        return a + dur

    def event(self, s, corr, ready):
        a = max(ready, self.end[s])
        self.lines.append('event\t%d\t0\t%d\t%d\t%d' % (T0 + a, s, 900 + corr, corr))
        return a

    def sync(self, until):
        corr, a, _ = self.api('cudaDeviceSynchronize')
        b = max(a + 5 * US, until)
        self.lines[-1] = 'api\t%d\t%d\t%d\t%d\tcudaDeviceSynchronize' % (T0 + a, T0 + b, MAIN, corr)
        self.lines.append('sync\t%d\t%d\t0\t-\tcontext\t%d' % (T0 + a, T0 + b, corr))
        self.t = b + 2 * US

    def gpu_end(self):
        return max(self.end.values())


def part1(r, out):
    v = r.v
    # pageable: the call stays until its copy is nearly done
    a = r.t
    r.t += 10 * US
    corr, c0, _ = r.api('cudaMemcpyAsync', 0)
    end = r.copy(LEGACY, corr, c0 + 1 * MS, 34 * MS, 'PAGEABLE', 256 << 20)
    r.lines[-2] = 'api\t%d\t%d\t%d\t%d\tcudaMemcpyAsync' % (T0 + c0, T0 + end - 50 * US, MAIN, corr)
    r.t = end - 40 * US
    r.nvtx('pageable_copy', a, r.t + 5 * US)
    out.append('  pageable_call_ms = %.6g   (the .to() call from pageable memory)' % ((r.t - a) / MS))
    r.t += 20 * US
    r.sync(r.gpu_end())
    # pinned
    a = r.t
    r.t += 10 * US
    corr, c0, c1 = r.api('cudaMemcpyAsync', 20 * US)
    if v == 'no-pin-memory':
        end = r.copy(LEGACY, corr, c0 + 1 * MS, 34 * MS, 'PAGEABLE', 256 << 20)
        r.lines[-2] = 'api\t%d\t%d\t%d\t%d\tcudaMemcpyAsync' % (T0 + c0, T0 + end - 50 * US, MAIN, corr)
        r.t = end - 40 * US
    else:
        end = r.copy(LEGACY, corr, c0 + 15 * US, 4900 * US, 'PINNED', 256 << 20)
        if v == 'pinned-copy-blocking':
            r.sync(end)
        else:
            r.t = c1 + 5 * US
    r.nvtx('pinned_copy', a, r.t + 5 * US)
    out.append('  pinned_call_ms   = %.6g   (the .to() call from pinned memory)' % ((r.t - a) / MS))
    r.t += 20 * US
    r.sync(r.gpu_end())


def part2(r):
    v = r.v
    side = LEGACY if v == 'prefetch-on-current-stream' else SIDE
    mem = 'PAGEABLE' if v == 'pageable-batches' else 'PINNED'
    s0 = r.t

    def prefetch():
        corr, a, b = r.api('cudaMemcpyAsync', 15 * US)
        end = r.copy(side, corr, a + 10 * US, 1200 * US, mem, 64 << 20)
        if mem == 'PAGEABLE':
            r.t = end + 5 * US
        return end

    cend = prefetch()
    for b in range(4):
        a = r.t
        ready = a
        if v != 'no-wait-stream':
            r.api('cudaEventRecord')
            r.api('cudaStreamWaitEvent')
            ready = cend
        nxt = prefetch() if b < 3 else None
        for k in range(3):
            corr, ka, _ = r.api('cudaLaunchKernel')
            r.kernel(LEGACY, corr, max(ka, ready), 3 * MS, 'void at::native::vectorized_elementwise_kernel<4>(int, ...)')
        r.nvtx('batch', a, r.t)
        cend = nxt
    r.nvtx('side_stream', s0, r.t)
    r.t += 10 * US
    r.sync(r.gpu_end())


def part3(r, out):
    v = r.v
    k = 600 * US
    name = 'void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>(...)'
    ms = {}
    corr, a, _ = r.api('cudaLaunchKernel')           # warm-up
    r.kernel(LEGACY, corr, a, k, name)
    r.sync(r.gpu_end())
    for case in ('sync_before', 'sync_after', 'sync_neither', 'sync_both'):
        if case == 'sync_both' and v != 'no-sync-before':
            r.sync(r.gpu_end())
        a = r.t
        r.t += 5 * US
        t0 = r.t
        corr, ka, _ = r.api('cudaLaunchKernel', 8 * US)
        r.kernel(LEGACY, corr, ka, k, name)
        wait = case == 'sync_after' or (case == 'sync_both' and v != 'no-sync-after')
        if case == 'sync_both' and v == 'clock-before-sync':
            t1 = r.t
            r.sync(r.gpu_end())
        elif wait:
            r.sync(r.gpu_end())
            t1 = r.t
        else:
            t1 = r.t
        r.nvtx(case, a, r.t + 3 * US)
        r.t += 10 * US
        ms[case] = (t1 - t0) / MS
    if v == 'elapsed-without-sync':
        return 'streams.py:337: CUDA error: device not ready'
    a = r.t
    launch = []
    order = ('rec', 'k', 'rec') if v != 'start-after-launch' else ('k', 'rec', 'rec')
    times = []
    for w in order:
        if w == 'k':
            corr, ka, _ = r.api('cudaLaunchKernel', 8 * US)
            r.kernel(LEGACY, corr, ka, k, name)
        else:
            corr, ea, _ = r.api('cudaEventRecord')
            times.append(r.event(LEGACY, corr, ea))
    r.sync(r.gpu_end())
    r.nvtx('events', a, r.t)
    out.append('part 3: x.normal_() on 256 MiB, timed five ways')
    for case in ('sync_before', 'sync_after', 'sync_neither', 'sync_both'):
        out.append('  %-16s = %.6g   (...)' % (case + '_ms', ms[case]))
    out.append('  %-16s = %.6g   (torch.cuda.Event around the launch: the kernel)' % (
        'event_ms', (times[1] - times[0]) / MS))
    return None


def digests():
    return subprocess.run([os.path.join(KIT, 'checker/verify/digests'), '08', '--seed', SEED],
                          check=True, capture_output=True, text=True).stdout.splitlines()


def write(v):
    d = os.path.join(HERE, 'mut-' + v if v not in ('solution', 'starter') else v)
    os.makedirs(d, exist_ok=True)
    r = Run(v)
    out = ['device: NVIDIA H100 80GB HBM3, torch 2.11.0+cu130 (a model, not a recording)']
    err, rc = '', 0
    dig = digests()
    if v == 'starter':
        err, rc = 'TODO(1) is not done: page-lock a copy of the host data: pinned = pageable.pin_memory()\n', 1
    else:
        out.append('part 1: 256 MiB to the GPU, non_blocking=True')
        part1(r, out)
        out.append(dig[0])
        out.append('part 2: 4 batches of 64 MiB, the next one copied on a side stream')
        part2(r)
        wrong = v in ('no-wait-stream', 'no-record-stream')
        if wrong:
            out.append('part 2: WRONG: batch 1 differs from its reference')
            out.append('  digest_batches = 0123456789abcdef')
        else:
            out.append(dig[1])
        e = part3(r, out)
        if e:
            err, rc = e + '\n', 1
        elif wrong:
            out.append('RESULT: WRONG: 1 result(s) differ (see above)')
            rc = 1
        else:
            out.append('RESULT: verified every copy and batch of every part that was run')
    head = ['streamtrace 2', 'meta\tclock\tcupti_ns', 'meta\tdevice\tNVIDIA H100 80GB HBM3',
            'meta\tcopy_engines\t3', 'meta\tdefault_stream\t7', 'meta\tmodel\tlab 08 model.py, not a recording',
            'device\t0\t3\t132\tNVIDIA H100 80GB HBM3', 'stream\t7\tdefault\t0\t-',
            'stream\t13\tcreated\t0\tnon-blocking']
    body = head + r.lines
    with open(os.path.join(d, 'r.trace'), 'w') as f:
        f.write('\n'.join(body) + '\nend\t%d\t0\n' % len(r.lines))
    with open(os.path.join(d, 'r.out'), 'w') as f:
        f.write('\n'.join(out) + '\n')
    with open(os.path.join(d, 'r.err'), 'w') as f:
        f.write(err)
    with open(os.path.join(d, 'r.rc'), 'w') as f:
        f.write('%d\n' % rc)
    with open(os.path.join(d, 'seed'), 'w') as f:
        f.write(SEED + '\n')


for variant in ['solution', 'starter'] + MUTANTS:
    write(variant)
