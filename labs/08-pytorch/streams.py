"""streams.py -- the lessons of labs 01-06 from PyTorch: pin_memory() and
non_blocking=True, a side stream that copies the next batch while the current
one computes, and timing a kernel with and without torch.cuda.synchronize().

Build:  make            Run:  ./streams [--part 1|2|3] [--size-mib N] [--batches B]
                              [--batch-mib M] [--steps K] [--seed S]
Check:  make check      Trace: make trace

Part 1 copies the same data to the GPU twice with non_blocking=True: from
pageable memory, then from pinned memory. Part 2 runs a small pipeline: while
the current batch computes on the current stream, the next batch is copied on
a side stream (torch.cuda.Stream). Part 3 times one kernel (x.normal_()) four
ways with time.perf_counter() -- a synchronize before the clock starts, after
the launch, both or neither -- and once with torch.cuda.Event.

What to do, in the order the program reaches them:
  TODO(1) page-lock a copy of `pageable` into `pinned`: Tensor.pin_memory.
  TODO(2) copy `pinned` to the GPU into `d_pinned` without making the host
          wait: Tensor.to, with non_blocking.
  TODO(3) queue the copy of `host` on the side stream `side` and return it:
          the context manager torch.cuda.stream, then Tensor.to as in TODO(2).
  TODO(4) before the batch is used, make the current stream
          (torch.cuda.current_stream) wait for the work queued on `side` so
          far: Stream.wait_stream.
  TODO(5) tell the caching allocator that the current stream uses `cur`, so
          that its memory is not handed out again while the kernels still
          read it: Tensor.record_stream (one of two remedies; the README says
          the other).
  TODO(6) the fourth case: wait for the GPU (torch.cuda.synchronize) before
          t0 (outside the range) and again right after the launch (before t1).
  TODO(7) time the same kernel with two torch.cuda.Event, made with
          enable_timing: Event.record before and after the launch,
          Event.synchronize on the second, then Event.elapsed_time into
          `event_ms`.
The program stops at the lab_todo() line of the first TODO not done: your
code replaces that line. Done when `make check` passes.
"""
import os
import struct
import sys
import time

USAGE = """usage: streams [--part 1|2|3] [--size-mib N] [--batches B] [--batch-mib M] [--steps K] [--seed S]
  --part N       run only part N (default: all three)
  --size-mib N   part 1's copy and part 3's kernel, in MiB, 1 to 2048 (default 256)
  --batches B    part 2's batches, 2 to 16 (default 4)
  --batch-mib M  one batch, in MiB, 1 to 512 (default 64)
  --steps K      work per number in part 2's kernels, 1 to 4096 (default 32)
  --seed S       the input data, 0 to 4294967295 (default 1)
"""

# name, default, lowest, highest (checker/verify/digests.c has the same table)
OPTIONS = [
    ('--part', 0, 1, 3),
    ('--size-mib', 256, 1, 2048),
    ('--batches', 4, 2, 16),
    ('--batch-mib', 64, 1, 512),
    ('--steps', 32, 1, 4096),
    ('--seed', 1, 0, 4294967295),
]

M32 = 0xFFFFFFFF
LCG_A, LCG_C = 1664525, 1013904223      # y -> A*y + C (mod 2^32), as the C labs
COLS = 4096                             # a result is folded to 4096 numbers
MIB = 1048576 // 4                      # 32-bit numbers in a MiB

# ---------------------------------------------------------------- the contract


def lab_todo(n, what):
    """An unfinished TODO: say which, exit 1."""
    print('TODO(%d) is not done: %s' % (n, what), file=sys.stderr)
    sys.exit(1)


def parse_args(argv):
    """The options as a dict ('part': 0, ...); usage and exit 2 on a bad one."""
    vals = {name: default for name, default, _, _ in OPTIONS}
    ranges = {name: (lo, hi) for name, _, lo, hi in OPTIONS}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ('-h', '--help'):
            sys.stdout.write(USAGE)
            sys.exit(0)
        name, eq, value = arg.partition('=')
        if name not in vals:
            sys.stderr.write('%s: %s\n%s' % ('unknown option' if arg.startswith('-')
                                             else 'unexpected argument', arg, USAGE))
            sys.exit(2)
        if not eq:
            i += 1
            value = argv[i] if i < len(argv) else ''
        lo, hi = ranges[name]
        if not value.isdigit() or not lo <= int(value) <= hi:
            sys.stderr.write('%s %s: expected a whole number from %d to %d\n%s'
                             % (name, value, lo, hi, USAGE))
            sys.exit(2)
        vals[name] = int(value)
        i += 1
    return {name[2:].replace('-', '_'): v for name, v in vals.items()}


def figure(name, value, what):
    """One figure for the checker: "name = value   (what)"."""
    print('  %-16s = %.6g   (%s)' % (name, value, what))


def xxh64(data):
    """XXH64 (seed 0) of bytes: the kit's digest (common/digest.h)."""
    p1, p2, p3, p4, p5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                          0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)
    m = (1 << 64) - 1

    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & m

    def rnd(acc, x):
        return rotl((acc + x * p2) & m, 31) * p1 & m

    n, i = len(data), 0
    if n >= 32:
        v = [(p1 + p2) & m, p2, 0, (-p1) & m]
        while i + 32 <= n:
            w = struct.unpack_from('<4Q', data, i)
            v = [rnd(v[k], w[k]) for k in range(4)]
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
        for k in range(4):
            h = ((h ^ rnd(0, v[k])) * p1 + p4) & m
    else:
        h = p5
    h = (h + n) & m
    while i + 8 <= n:
        h = (rotl(h ^ rnd(0, struct.unpack_from('<Q', data, i)[0]), 27) * p1 + p4) & m
        i += 8
    if i + 4 <= n:
        h = (rotl(h ^ (struct.unpack_from('<I', data, i)[0] * p1 & m), 23) * p2 + p3) & m
        i += 4
    while i < n:
        h = (rotl(h ^ (data[i] * p5 & m), 11) * p1) & m
        i += 1
    h = ((h ^ (h >> 33)) * p2) & m
    h = ((h ^ (h >> 29)) * p3) & m
    return h ^ (h >> 32)


def digest_print(name, folds):
    """Print "  digest_NAME = HEX" of the folded results (see fold())."""
    data = b''.join(struct.pack('<%dI' % COLS, *f.tolist()) for f in folds)
    print('  digest_%s = %016x' % (name, xxh64(data)))


# ---------------------------------------------------------------- the numbers

def hash32(x):
    """lab_hash32 (common/scramble.h) of a Python int."""
    x ^= x >> 16
    x = x * 0x7feb352d & M32
    x ^= x >> 15
    x = x * 0x846ca68b & M32
    return x ^ (x >> 16)


def mul32(x, k):
    """x * k mod 2^32 for a tensor x of int64 numbers below 2^32: in two
    16-bit halves of k, so that no product leaves int64."""
    return (x * (k & 0xFFFF) + (((x * (k >> 16)) & 0xFFFF) << 16)) & M32


def hash32_t(x):
    """lab_hash32 of every number of an int64 tensor."""
    x = x ^ (x >> 16)
    x = mul32(x, 0x7feb352d)
    x = x ^ (x >> 15)
    x = mul32(x, 0x846ca68b)
    return x ^ (x >> 16)


def make_input(n, seed, salt):
    """Input `salt` for `seed` (lab_fill, common/scramble.h): n 32-bit numbers
    in an int32 tensor on the GPU (made there: making them is not the lesson)."""
    base = hash32(seed ^ hash32(salt + 1))
    i = torch.arange(n, dtype=torch.int64, device=DEVICE)
    return hash32_t((i + base) & M32).to(torch.int32)


def scramble(x, steps):
    """out[i] = (K steps of y -> A*y + C from x[i]) XOR x[i], unsigned 32-bit
    numbers held in int64: about 3K kernels, and x is read again at the end."""
    y = x.to(torch.int64) & M32
    for _ in range(steps):
        y.mul_(LCG_A).add_(LCG_C).bitwise_and_(M32)
    return y ^ (x.to(torch.int64) & M32)


def fold(y):
    """4096 numbers that stand for y (unsigned 32-bit numbers, a multiple of
    4096 of them): column j of the rows of 4096 is summed, row r times 2r+1,
    mod 2^32. The kit's digest tool folds its reference the same way."""
    rows = (y.to(torch.int64) & M32).view(-1, COLS)
    w = torch.arange(rows.shape[0], dtype=torch.int64, device=y.device) * 2 + 1
    return (rows * w[:, None] & M32).sum(dim=0) & M32


# ---------------------------------------------------------------- part 1

def part_copies(o):
    """The same data to the GPU from pageable and from pinned memory, both
    with non_blocking=True; time each call. Return the wrong copies."""
    src = make_input(o['size_mib'] * MIB, o['seed'], 0)
    pageable = src.cpu()                        # plain malloc'ed host memory
    # TODO(1)
    lab_todo(1, 'page-lock a copy of `pageable` into `pinned` (Tensor.pin_memory)')
    torch.cuda.synchronize()

    with torch.cuda.nvtx.range('pageable_copy'):
        t0 = time.perf_counter()
        d_pageable = pageable.to(DEVICE, non_blocking=True)
        t1 = time.perf_counter()
    torch.cuda.synchronize()
    with torch.cuda.nvtx.range('pinned_copy'):
        t2 = time.perf_counter()
        # TODO(2)
        lab_todo(2, 'copy `pinned` to the GPU into `d_pinned`, without making the host wait (Tensor.to and its non_blocking)')
        t3 = time.perf_counter()
    torch.cuda.synchronize()

    print('part 1: %d MiB to the GPU, non_blocking=True' % o['size_mib'])
    figure('pageable_call_ms', 1e3 * (t1 - t0), 'the .to() call from pageable memory')
    figure('pinned_call_ms', 1e3 * (t3 - t2), 'the .to() call from pinned memory')
    bad = sum(not torch.equal(d, src) for d in (d_pageable, d_pinned))
    digest_print('copy', [fold(d_pinned)])
    if bad:
        print('part 1: WRONG: %d of 2 copies differ from the host data' % bad)
    return bad


# ---------------------------------------------------------------- part 2

def prefetch(host, side):
    """Queue the copy of a pinned host batch to the GPU on stream `side`;
    return the GPU tensor at once, its copy still running: a host that waits
    for the copy here queues the batch's kernels only after it."""
    # TODO(3)
    lab_todo(3, 'queue the copy of `host` on `side` (torch.cuda.stream), without making the host wait, and return it')


def part_pipeline(o):
    """Batch b computes on the current stream while batch b+1 is copied on a
    side stream. Return the wrong batches."""
    n, steps = o['batch_mib'] * MIB, o['steps']
    srcs = [make_input(n, o['seed'], 1 + b) for b in range(o['batches'])]
    hosts = [s.cpu().pin_memory() for s in srcs]    # pinned: see part 1
    scramble(srcs[0], 1)                            # warm-up: load the kernels
    side = torch.cuda.Stream()
    torch.cuda.synchronize()

    outs = []
    with torch.cuda.nvtx.range('side_stream'):
        nxt = prefetch(hosts[0], side)
        for b in range(o['batches']):
            with torch.cuda.nvtx.range('batch'):
                cur = nxt
                # TODO(4)
                lab_todo(4, 'make the current stream wait for the work queued on `side` so far (Stream.wait_stream)')
                # TODO(5)
                lab_todo(5, 'tell the caching allocator that the current stream uses `cur` (Tensor.record_stream)')
                if b + 1 < o['batches']:
                    nxt = prefetch(hosts[b + 1], side)
                outs.append(scramble(cur, steps))
    torch.cuda.synchronize()

    print('part 2: %d batches of %d MiB, the next one copied on a side stream'
          % (o['batches'], o['batch_mib']))
    bad = 0
    for b, out in enumerate(outs):
        if not torch.equal(out, scramble(srcs[b], steps)):
            bad += 1
            print('part 2: WRONG: batch %d differs from its reference' % b)
    digest_print('batches', [fold(out) for out in outs])
    return bad


# ---------------------------------------------------------------- part 3

def part_timing(o):
    """One kernel (x.normal_()) timed four ways with the host clock, and
    with events. Each host clock runs inside an NVTX range of its name."""
    x = torch.empty(o['size_mib'] * MIB, dtype=torch.float32, device=DEVICE)
    x.normal_()                                 # warm-up: load the kernel
    ms = {}

    torch.cuda.synchronize()                    # 1. before only
    with torch.cuda.nvtx.range('sync_before'):
        t0 = time.perf_counter()
        x.normal_()
        t1 = time.perf_counter()
    ms['sync_before'] = 1e3 * (t1 - t0)

    with torch.cuda.nvtx.range('sync_after'):   # 2. after only
        t0 = time.perf_counter()
        x.normal_()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
    ms['sync_after'] = 1e3 * (t1 - t0)

    with torch.cuda.nvtx.range('sync_neither'):  # 3. neither
        t0 = time.perf_counter()
        x.normal_()
        t1 = time.perf_counter()
    ms['sync_neither'] = 1e3 * (t1 - t0)

    # 4. both: the clock starts with the GPU idle and stops when it is done
    # TODO(6)
    lab_todo(6, 'wait for the GPU (torch.cuda.synchronize) before the range, and again right after the kernel')
    with torch.cuda.nvtx.range('sync_both'):
        t0 = time.perf_counter()
        x.normal_()
        # TODO(6), its second part
        t1 = time.perf_counter()
    ms['sync_both'] = 1e3 * (t1 - t0)

    # events: the GPU stamps them as it reaches them on the stream
    with torch.cuda.nvtx.range('events'):
        # TODO(7)
        lab_todo(7, 'time x.normal_() with two timing events into `event_ms` (torch.cuda.Event: record, synchronize, elapsed_time)')
    torch.cuda.synchronize()

    print('part 3: x.normal_() on %d MiB, timed five ways' % o['size_mib'])
    figure('sync_before_ms', ms['sync_before'], 'synchronize before t0 only: the launch')
    figure('sync_after_ms', ms['sync_after'], 'after the launch only: the kernel before it too')
    figure('sync_neither_ms', ms['sync_neither'], 'no synchronize: the launch')
    figure('sync_both_ms', ms['sync_both'], 'before t0 and after the launch: the kernel')
    figure('event_ms', event_ms, 'torch.cuda.Event around the launch: the kernel')


# ---------------------------------------------------------------- main

def no_device(why):
    """No GPU to run on: one line, exit 77 (as lab_pick_device in the C labs)."""
    print('no usable CUDA device: %s' % why, file=sys.stderr)
    sys.exit(77)


def main(argv):
    global torch, DEVICE
    o = parse_args(argv)
    # CUDA_VISIBLE_DEVICES set and empty: CUDA sees no device (CUDA C++
    # Programming Guide, "CUDA Environment Variables"); said before the
    # seconds that importing torch costs
    if os.environ.get('CUDA_VISIBLE_DEVICES', None) is not None and \
            not os.environ['CUDA_VISIBLE_DEVICES'].strip():
        no_device('CUDA_VISIBLE_DEVICES is empty: no device is visible')
    try:
        import torch
    except ImportError as e:
        no_device('import torch failed (%s)' % e)
    if not torch.cuda.is_available():
        no_device('torch %s sees no CUDA device%s' % (torch.__version__,
                  '' if torch.version.cuda else ' (built without CUDA)'))
    DEVICE = torch.device('cuda')
    print('device: %s, torch %s' % (torch.cuda.get_device_name(DEVICE), torch.__version__))

    bad = 0
    if o['part'] in (0, 1):
        bad += part_copies(o)
    if o['part'] in (0, 2):
        bad += part_pipeline(o)
    if o['part'] in (0, 3):
        part_timing(o)
    if bad:
        print('RESULT: WRONG: %d result(s) differ (see above)' % bad)
        return 1
    print('RESULT: verified every copy and batch of every part that was run')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except RuntimeError as e:
        # a CUDA error: one line, where, and exit 1 (not a stack of frames)
        tb = e.__traceback__
        while tb.tb_next is not None and tb.tb_next.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        print('streams.py:%d: %s' % (tb.tb_lineno, str(e).splitlines()[0]), file=sys.stderr)
        sys.exit(1)
