/*
 * multi_gpu.cu -- several GPUs from one host thread: the current device, each
 * GPU's own streams and memory, an event that orders one GPU's work after
 * another's, and copies between GPUs with peer access off and on.
 *
 * Build:  make            Run:  ./multi_gpu [--part 1|2|3] [--size-mib N]
 * Check:  make check              [--chunks C] [--streams S] [--steps K]
 * Trace:  make trace              [--reps R] [--peer-mib N] [--seed S]
 *
 * cudaSetDevice(d) makes GPU d current for this host thread: the memory,
 * streams and events made from then on belong to d, and kernels are launched
 * on d, into d's streams (the CUDA Programming Guide says a launch into a
 * stream of another GPU fails). A copy, a stream's wait for an event and
 * cudaMemcpyPeerAsync may reach another GPU. Each GPU has its own legacy
 * default stream.
 *
 * Part 1 splits lab 05's pipeline over the GPUs: the data is cut into one
 * slice per GPU (two slices on a machine with one GPU, both on it), and each
 * slice has its own pinned buffers, device memory and streams on its GPU. A
 * sequential version (each slice's H2D, kernel and D2H one after the other,
 * the GPUs side by side) and the pipelined one (each slice's chunks over its
 * streams, as lab 05) run in turns, R times; the best of each is reported.
 * Part 2: a producer kernel on GPU 0; GPU 1 copies its result over and goes
 * on with it, ordered after the producer by a CUDA event alone: the host
 * never waits in between. Part 3: GPUs 0 and 1 swap their halves of the data
 * with cudaMemcpyPeerAsync, first with peer access off (the copy is staged
 * through host memory), then with it on; each way is warmed up once, then
 * timed R times, and the best counts, as in part 1. With one GPU, parts 2
 * and 3 run both sides on GPU 0.
 *
 * What to do, in the order the program reaches them:
 *   TODO(1) make the slice's GPU current before its memory and streams are made.
 *   TODO(2) queue every slice's pipeline, each on its GPU, before waiting for any.
 *   TODO(3) order the consumer's stream after the producer, with the event.
 *   TODO(4) the exchange: each GPU's data to the other, cudaMemcpyPeerAsync.
 *   TODO(5) turn peer access on, both ways.
 * The program stops at the lab_todo() line of the first TODO not done: your
 * code replaces that line, and the `(void)x;` line beside it if there is one.
 * Done when `make check` passes.
 */
#include "lab.h"
#include "scramble.h"

#define THREADS       256
#define MAX_GPUS      8             /* the GPUs used at most: one slice each */
#define MAX_STREAMS   16            /* per slice */

/* Part 2: the producer's numbers, and the work of each side. */
#define EVENT_N       (1u << 22)    /* 16 MiB */
#define PRODUCE_STEPS 16384u        /* a long kernel: several ms */
#define CONSUME_STEPS 16u

static const char usage_text[] =
    "usage: multi_gpu [--part 1|2|3] [--size-mib N] [--chunks C] [--streams S]\n"
    "                 [--steps K] [--reps R] [--peer-mib N] [--seed S]\n"
    "  --part N      run only part N (default: all three)\n"
    "  --size-mib N  part 1: data size in MiB, 1 to 4096 (default 256)\n"
    "  --chunks C    part 1: chunks of each slice, 1 to 256 (default 8)\n"
    "  --streams S   part 1: streams of each slice, 1 to 16 (default 4)\n"
    "  --steps K     part 1: kernel work per number, 1 to 1048576 (default 768)\n"
    "  --reps R      parts 1 and 3: timed runs of each version, 1 to 20; the best\n"
    "                counts (default 3)\n"
    "  --peer-mib N  part 3: MiB each GPU sends, 1 to 1024 (default 64)\n"
    "  --seed S      the input data, 0 to 4294967295 (default 1)\n";

/* ---------------------------------------------------------------- kernels */

/* Part 2's two kernels: scramble_kernel's work, each under its own name for
 * the trace. */
__global__ void produce_kernel(uint32_t *out, const uint32_t *in, size_t n, uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        out[i] = lcg_steps(in[i], steps);
}

__global__ void consume_kernel(uint32_t *out, const uint32_t *in, size_t n, uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        out[i] = lcg_steps(in[i], steps);
}

/* Blocks of THREADS for n numbers. */
static unsigned int blocks_for(size_t n)
{
    return (unsigned int)((n + THREADS - 1) / THREADS);
}

/* ---------------------------------------------------------------- part 1 */

/* One GPU's part of the data, and what it works with. */
struct slice {
    int device;
    size_t first, n;                /* its elements of the whole input */
    uint32_t *h_in, *h_out;         /* pinned host memory */
    uint32_t *d_in, *d_out;         /* on its GPU */
    cudaStream_t streams[MAX_STREAMS];      /* on its GPU */
};

/* The data split over the GPUs. */
struct split {
    int nslices, nchunks, nstreams;
    uint32_t steps;
    struct slice sl[MAX_GPUS];
};

/* The first element of chunk c of a slice (chunk nchunks: its end). */
static size_t chunk_start(const struct split *sp, const struct slice *sl, int c)
{
    return (size_t)((unsigned long long)sl->n * (unsigned)c / (unsigned)sp->nchunks);
}

/*
 * Make slice s: its share of the n numbers, on GPU s % ngpus, with its
 * pinned buffers (the input filled from seed), its device memory and its
 * streams.
 */
static void setup_slice(struct split *sp, int s, int ngpus, size_t n, uint32_t seed)
{
    struct slice *sl = &sp->sl[s];
    size_t bytes;
    int a;

    sl->device = s % ngpus;
    sl->first = (size_t)((unsigned long long)n * (unsigned)s / (unsigned)sp->nslices);
    sl->n = (size_t)((unsigned long long)n * (unsigned)(s + 1) / (unsigned)sp->nslices) - sl->first;
    bytes = sl->n * sizeof(uint32_t);

    /* Memory, streams and events belong to the GPU that is current when
     * they are made; a kernel is to be launched into a stream of the current
     * GPU (the Programming Guide says any other launch fails). */
    /* TODO(1) */
    lab_todo(1, "make the slice's GPU, sl->device, current (cudaSetDevice) before "
                "its memory and streams are made below");

    CUDA_CHECK(cudaMallocHost(&sl->h_in, bytes));
    CUDA_CHECK(cudaMallocHost(&sl->h_out, bytes));
    CUDA_CHECK(cudaMalloc(&sl->d_in, bytes));
    CUDA_CHECK(cudaMalloc(&sl->d_out, bytes));
    for (a = 0; a < sp->nstreams; a++)
        CUDA_CHECK(cudaStreamCreate(&sl->streams[a]));
    lab_fill_at(sl->h_in, sl->n, seed, 0, sl->first);
}

/* Release slice s (with its GPU current). */
static void free_slice(const struct split *sp, struct slice *sl)
{
    int a;

    CUDA_CHECK(cudaSetDevice(sl->device));
    for (a = 0; a < sp->nstreams; a++)
        CUDA_CHECK(cudaStreamDestroy(sl->streams[a]));
    CUDA_CHECK(cudaFree(sl->d_in));
    CUDA_CHECK(cudaFree(sl->d_out));
    CUDA_CHECK(cudaFreeHost(sl->h_in));
    CUDA_CHECK(cudaFreeHost(sl->h_out));
}

/* Queue the kernel for n numbers in `stream` (of the current GPU). */
static void scramble(uint32_t *d_out, const uint32_t *d_in, size_t n, uint32_t steps,
                     cudaStream_t stream)
{
    scramble_kernel<<<blocks_for(n), THREADS, 0, stream>>>(d_out, d_in, n, steps);
    CUDA_CHECK_LAUNCH();
}

/*
 * Queue slice sl's pipeline: chunk c in stream c % S, its H2D, kernel and
 * D2H (depth-first, as lab 05). Its GPU must be current. Returns at once.
 */
static void issue_slice(const struct split *sp, const struct slice *sl)
{
    int c;

    for (c = 0; c < sp->nchunks; c++) {
        size_t off = chunk_start(sp, sl, c), len = chunk_start(sp, sl, c + 1) - off;
        cudaStream_t s = sl->streams[c % sp->nstreams];

        CUDA_CHECK(cudaMemcpyAsync(sl->d_in + off, sl->h_in + off, len * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, s));
        scramble(sl->d_out + off, sl->d_in + off, len, sp->steps, s);
        CUDA_CHECK(cudaMemcpyAsync(sl->h_out + off, sl->d_out + off, len * sizeof(uint32_t),
                                   cudaMemcpyDeviceToHost, s));
    }
}

/*
 * The sequential version: each slice's whole H2D, kernel and D2H one after
 * the other in its first stream, every GPU's queued before waiting for any,
 * so that the GPUs work side by side. Return the host's time (ms).
 */
static double run_sequential(const struct split *sp)
{
    double t0 = lab_now_ms();
    int s;

    NVTX_PUSH("sequential", NVTX_GREY);
    for (s = 0; s < sp->nslices; s++) {
        const struct slice *sl = &sp->sl[s];
        size_t bytes = sl->n * sizeof(uint32_t);

        CUDA_CHECK(cudaSetDevice(sl->device));
        CUDA_CHECK(cudaMemcpyAsync(sl->d_in, sl->h_in, bytes, cudaMemcpyHostToDevice,
                                   sl->streams[0]));
        scramble(sl->d_out, sl->d_in, sl->n, sp->steps, sl->streams[0]);
        CUDA_CHECK(cudaMemcpyAsync(sl->h_out, sl->d_out, bytes, cudaMemcpyDeviceToHost,
                                   sl->streams[0]));
    }
    for (s = 0; s < sp->nslices; s++) {
        CUDA_CHECK(cudaSetDevice(sp->sl[s].device));
        CUDA_CHECK(cudaStreamSynchronize(sp->sl[s].streams[0]));
    }
    NVTX_POP();
    return lab_now_ms() - t0;
}

/*
 * The pipelined version: every slice's pipeline (issue_slice) on its GPU.
 * One host thread drives all the GPUs: it must queue every GPU's work before
 * it waits for any, or the GPUs take turns. Return the host's time (ms).
 */
static double run_pipelined(const struct split *sp)
{
    double t0 = lab_now_ms();
    int s, a;

    NVTX_PUSH("pipelined", NVTX_GREEN);
    /* TODO(2) */
    (void)sp, (void)s, (void)a, (void)issue_slice;
    lab_todo(2, "for each slice: make its GPU current (cudaSetDevice) and "
                "issue_slice() it; once every slice is queued, for each slice, with "
                "its GPU current, wait for every one of its streams "
                "(cudaStreamSynchronize)");
    NVTX_POP();
    return lab_now_ms() - t0;
}

/* Poison every slice's output, host and device, so that what a version does
 * not compute and copy back is wrong. */
static void poison(const struct split *sp)
{
    int s;

    for (s = 0; s < sp->nslices; s++) {
        const struct slice *sl = &sp->sl[s];

        memset(sl->h_out, 0xcd, sl->n * sizeof(uint32_t));
        CUDA_CHECK(cudaSetDevice(sl->device));
        CUDA_CHECK(cudaMemset(sl->d_out, 0xab, sl->n * sizeof(uint32_t)));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

/* Check every slice's output against the CPU's reference, in order: one
 * digest of the whole result, printed as digest_VERSION. Return the number
 * of elements that differ. */
static size_t verify_split(const struct split *sp, const char *version)
{
    struct lab_mismatch m;
    struct lab_digest d;
    int s;

    memset(&m, 0, sizeof m);
    lab_digest_init(&d);
    for (s = 0; s < sp->nslices; s++)
        scramble_compare(&m, &d, sp->sl[s].h_out, sp->sl[s].h_in, NULL, 1, sp->sl[s].n,
                         sp->steps, sp->sl[s].first);
    lab_digest_print(version, lab_digest_value(&d));
    if (m.bad)
        printf("part 1 (%s): WRONG: %zu elements differ (first at %zu: got %u, "
               "expected %u)\n", version, m.bad, m.first, m.got, m.want);
    return m.bad;
}

/* Part 1: the pipeline split over the GPUs. Return the elements that differ. */
static size_t part_split(int ngpus, size_t n, int chunks, int streams, uint32_t steps,
                         int reps, uint32_t seed)
{
    struct split sp;
    double seq_ms = 1e30, pipe_ms = 1e30, ms;
    size_t bad = 0;
    int s, r;

    memset(&sp, 0, sizeof sp);
    sp.nslices = ngpus < 2 ? 2 : ngpus;
    sp.nchunks = chunks;
    sp.nstreams = streams;
    sp.steps = steps;
    for (s = 0; s < sp.nslices; s++)
        setup_slice(&sp, s, ngpus, n, seed);
    printf("part 1: %zu MiB in %d slices (", n / (1048576 / sizeof(uint32_t)), sp.nslices);
    for (s = 0; s < sp.nslices; s++)
        printf("%sGPU %d", s ? ", " : "", sp.sl[s].device);
    printf("), each in %d chunks over %d streams, %u steps, %d reps\n", chunks, streams,
           steps, reps);

    NVTX_PUSH("part1_split", NVTX_PURPLE);
    /* The two versions in turns, so that a busy moment on a shared GPU hurts
     * both; the first run of each is checked. */
    for (r = 0; r < reps; r++) {
        if (r == 0)
            poison(&sp);
        ms = run_sequential(&sp);
        if (r == 0)
            bad += verify_split(&sp, "sequential");
        seq_ms = ms < seq_ms ? ms : seq_ms;

        if (r == 0)
            poison(&sp);
        ms = run_pipelined(&sp);
        if (r == 0)
            bad += verify_split(&sp, "pipelined");
        pipe_ms = ms < pipe_ms ? ms : pipe_ms;
    }
    NVTX_POP();

    lab_figure("slices", sp.nslices, "one per GPU (two on one GPU)");
    lab_figure("chunks", sp.nchunks, "of each slice");
    lab_figure("streams", sp.nstreams, "of each slice");
    lab_figure("seq_ms", seq_ms, "sequential, every GPU at once (host clock, best run)");
    lab_figure("pipe_ms", pipe_ms, "pipelined, every GPU at once (host clock, best run)");
    lab_figure("speedup", seq_ms / pipe_ms, "seq_ms / pipe_ms");
    for (s = 0; s < sp.nslices; s++)
        free_slice(&sp, &sp.sl[s]);
    return bad;
}

/* ---------------------------------------------------------------- part 2 */

/*
 * A producer on GPU 0 makes EVENT_N numbers; a consumer on GPU 1 (0 when
 * there is one) copies them over and goes on with them. The consumer's
 * stream waits for an event recorded after the producer: the GPUs order
 * themselves, the host queues both sides without waiting. Return the
 * numbers that differ.
 */
static size_t part_event(int ngpus, uint32_t seed)
{
    const int prod = 0, cons = 1 % ngpus;
    const size_t bytes = EVENT_N * sizeof(uint32_t);
    uint32_t *h_in, *h_out, *d_src, *d_made, *d_got, *d_out;
    cudaStream_t s_prod, s_cons;
    cudaEvent_t made;
    struct lab_mismatch m;
    struct lab_digest d;

    CUDA_CHECK(cudaMallocHost(&h_in, bytes));
    CUDA_CHECK(cudaMallocHost(&h_out, bytes));
    lab_fill(h_in, EVENT_N, seed, 1);
    memset(h_out, 0xcd, bytes);

    CUDA_CHECK(cudaSetDevice(prod));
    CUDA_CHECK(cudaMalloc(&d_src, bytes));
    CUDA_CHECK(cudaMalloc(&d_made, bytes));
    CUDA_CHECK(cudaStreamCreate(&s_prod));
    /* The event belongs to the producer's GPU, current now: an event can be
     * recorded only on a stream of its own GPU. It only orders, so it keeps
     * no time. */
    CUDA_CHECK(cudaEventCreateWithFlags(&made, cudaEventDisableTiming));
    CUDA_CHECK(cudaMemcpy(d_src, h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_made, 0xab, bytes));        /* poison */
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaSetDevice(cons));
    CUDA_CHECK(cudaMalloc(&d_got, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaStreamCreate(&s_cons));
    CUDA_CHECK(cudaMemset(d_got, 0xab, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());

    printf("part 2: a producer on GPU %d, a consumer on GPU %d, %u numbers\n", prod, cons,
           EVENT_N);
    NVTX_PUSH("part2_event", NVTX_BLUE);
    CUDA_CHECK(cudaSetDevice(prod));
    produce_kernel<<<blocks_for(EVENT_N), THREADS, 0, s_prod>>>(d_made, d_src, EVENT_N,
                                                                PRODUCE_STEPS);
    CUDA_CHECK_LAUNCH();
    /* TODO(3) */
    lab_todo(3, "record `made` in s_prod after the producer (cudaEventRecord), then "
                "make GPU `cons` current (cudaSetDevice) and let s_cons wait for "
                "`made` (cudaStreamWaitEvent): no host wait");

    /* GPU cons is current. What is queued in s_cons from here on runs once
     * the producer is done. */
    CUDA_CHECK(cudaMemcpyPeerAsync(d_got, cons, d_made, prod, bytes, s_cons));
    consume_kernel<<<blocks_for(EVENT_N), THREADS, 0, s_cons>>>(d_out, d_got, EVENT_N,
                                                                CONSUME_STEPS);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, s_cons));
    CUDA_CHECK(cudaStreamSynchronize(s_cons));          /* the one wait, at the end */
    NVTX_POP();

    /* The consumer's K steps after the producer's: PRODUCE + CONSUME steps. */
    memset(&m, 0, sizeof m);
    lab_digest_init(&d);
    scramble_compare(&m, &d, h_out, h_in, NULL, 1, EVENT_N, PRODUCE_STEPS + CONSUME_STEPS, 0);
    lab_digest_print("event", lab_digest_value(&d));
    if (m.bad)
        printf("part 2: WRONG: %zu of %u numbers differ (first at %zu: got %u, expected "
               "%u): did the consumer start before the producer was done?\n", m.bad,
               EVENT_N, m.first, m.got, m.want);

    CUDA_CHECK(cudaSetDevice(prod));
    CUDA_CHECK(cudaEventDestroy(made));
    CUDA_CHECK(cudaStreamDestroy(s_prod));
    CUDA_CHECK(cudaFree(d_src));
    CUDA_CHECK(cudaFree(d_made));
    CUDA_CHECK(cudaSetDevice(cons));
    CUDA_CHECK(cudaStreamDestroy(s_cons));
    CUDA_CHECK(cudaFree(d_got));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFreeHost(h_in));
    CUDA_CHECK(cudaFreeHost(h_out));
    return m.bad;
}

/* ---------------------------------------------------------------- part 3 */

/* Two GPUs that swap their data: side k sends d_mine[k] to the other's d_halo. */
struct peer {
    int dev[2];                     /* GPUs 0 and 1 (both 0 with one GPU) */
    size_t n;                       /* numbers each side sends */
    uint32_t *h_mine[2], *h_got[2]; /* pinned host memory */
    uint32_t *d_mine[2], *d_halo[2];        /* on dev[k] */
    cudaStream_t stream[2];                 /* on dev[k] */
    cudaEvent_t ev[2][2];                   /* on dev[k]: before and after its copy */
};

/*
 * One exchange, both ways at once: side k copies its numbers to the other
 * GPU's halo in its own stream, between its two events. Set ms[k] to the
 * time of side k's copy.
 */
static void exchange(const struct peer *p, float ms[2])
{
    int k;

    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaSetDevice(p->dev[k]));
        CUDA_CHECK(cudaEventRecord(p->ev[k][0], p->stream[k]));
        /* TODO(4) */
        lab_todo(4, "copy side k's numbers, p->d_mine[k] on GPU p->dev[k], to the other "
                    "side's halo, p->d_halo[1 - k] on GPU p->dev[1 - k], in "
                    "p->stream[k]: cudaMemcpyPeerAsync");
        CUDA_CHECK(cudaEventRecord(p->ev[k][1], p->stream[k]));
    }
    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaEventSynchronize(p->ev[k][1]));
        CUDA_CHECK(cudaEventElapsedTime(&ms[k], p->ev[k][0], p->ev[k][1]));
    }
}

/*
 * Let each of the two GPUs reach the other's memory, where both can: then a
 * copy between them goes straight from one to the other. Return 1 if peer
 * access is on, 0 where it cannot be (one GPU, or two that cannot reach
 * each other: their copies stay staged).
 */
static int peer_on(const struct peer *p)
{
    int can01 = 0, can10 = 0;

    if (p->dev[0] != p->dev[1]) {
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can01, p->dev[0], p->dev[1]));
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can10, p->dev[1], p->dev[0]));
    }
    /* TODO(5) */
    lab_todo(5, "where both can (can01 && can10): with GPU p->dev[0] current "
                "(cudaSetDevice), let it reach p->dev[1] (cudaDeviceEnablePeerAccess), "
                "and the other way round");
    return can01 && can10;
}

/* Poison both halos, so that an exchange that does not happen is wrong. */
static void poison_halos(const struct peer *p)
{
    int k;

    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaSetDevice(p->dev[k]));
        CUDA_CHECK(cudaMemset(p->d_halo[k], 0xab, p->n * sizeof(uint32_t)));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

/* Bring both halos back and check them: halo k holds the other side's
 * numbers. One digest of halo 0, then halo 1, printed as digest_NAME.
 * Return the numbers that differ. */
static size_t check_halos(const struct peer *p, const char *name)
{
    struct lab_mismatch m;
    struct lab_digest d;
    int k;

    memset(&m, 0, sizeof m);
    lab_digest_init(&d);
    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaSetDevice(p->dev[k]));
        CUDA_CHECK(cudaMemcpy(p->h_got[k], p->d_halo[k], p->n * sizeof(uint32_t),
                              cudaMemcpyDeviceToHost));
        scramble_compare(&m, &d, p->h_got[k], p->h_mine[1 - k], NULL, 1, p->n, 0,
                         (size_t)k * p->n);
    }
    lab_digest_print(name, lab_digest_value(&d));
    if (m.bad)
        printf("part 3 (%s): WRONG: %zu of %zu numbers differ (first in GPU %d's halo "
               "at %zu: got %u, expected %u)\n", name, m.bad, 2 * p->n,
               p->dev[m.first / p->n], m.first % p->n, m.got, m.want);
    return m.bad;
}

/*
 * Time the exchange as part 1 times its runs: one exchange to warm up (not
 * timed: the first copies over a path, or right after peer access changed,
 * pay for setting it up), then `reps` exchanges, each in an NVTX range of its
 * own, "direct" when `direct`, else "staged". Set ms[] to the times of the
 * quickest, the one whose slower side took least, and return its number, 1
 * to reps.
 */
static int best_exchange(const struct peer *p, int direct, int reps, float ms[2])
{
    float t[2];
    int r, best = 0;

    exchange(p, t);
    for (r = 1; r <= reps; r++) {
        NVTX_PUSH(direct ? "direct" : "staged", direct ? NVTX_GREEN : NVTX_GREY);
        exchange(p, t);
        NVTX_POP();
        if (best == 0 || fmaxf(t[0], t[1]) < fmaxf(ms[0], ms[1])) {
            ms[0] = t[0];
            ms[1] = t[1];
            best = r;
        }
    }
    return best;
}

/* Print one exchange's times and bandwidths: NAME_0to1_ms, NAME_0to1_gbps... */
static void exchange_figures(const char *name, const float ms[2], size_t bytes)
{
    char key[32];
    int k;

    for (k = 0; k < 2; k++) {
        snprintf(key, sizeof key, "%s_%dto%d_ms", name, k, 1 - k);
        lab_figure(key, ms[k], "the copy, between its events");
        snprintf(key, sizeof key, "%s_%dto%d_gbps", name, k, 1 - k);
        lab_figure(key, bytes / (ms[k] * 1e6), "GB/s: bytes / ms / 1e6");
    }
}

/* Part 3: the exchange with peer access off, then on, the best of `reps`
 * each. Return the numbers that differ. */
static size_t part_peer(int ngpus, size_t n, int reps, uint32_t seed)
{
    struct peer p;
    size_t bytes = n * sizeof(uint32_t), bad = 0;
    float staged[2], direct[2];
    int k, e, on, staged_rep, direct_rep;

    memset(&p, 0, sizeof p);
    p.dev[0] = 0;
    p.dev[1] = 1 % ngpus;
    p.n = n;
    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaSetDevice(p.dev[k]));
        CUDA_CHECK(cudaMallocHost(&p.h_mine[k], bytes));
        CUDA_CHECK(cudaMallocHost(&p.h_got[k], bytes));
        CUDA_CHECK(cudaMalloc(&p.d_mine[k], bytes));
        CUDA_CHECK(cudaMalloc(&p.d_halo[k], bytes));
        CUDA_CHECK(cudaStreamCreate(&p.stream[k]));
        for (e = 0; e < 2; e++)
            CUDA_CHECK(cudaEventCreate(&p.ev[k][e]));
        lab_fill(p.h_mine[k], n, seed, 2 + (uint32_t)k);
        CUDA_CHECK(cudaMemcpy(p.d_mine[k], p.h_mine[k], bytes, cudaMemcpyHostToDevice));
    }
    printf("part 3: GPUs %d and %d swap %zu MiB each way, peer access off, then on, "
           "best of %d\n", p.dev[0], p.dev[1], bytes >> 20, reps);

    NVTX_PUSH("part3_peer", NVTX_ORANGE);
    poison_halos(&p);
    staged_rep = best_exchange(&p, 0, reps, staged);
    bad += check_halos(&p, "staged");

    on = peer_on(&p);
    poison_halos(&p);
    direct_rep = best_exchange(&p, 1, reps, direct);
    NVTX_POP();
    bad += check_halos(&p, "direct");

    lab_figure("peer_access", on, "1: GPUs 0 and 1 reach each other's memory");
    lab_figure("staged_rep", staged_rep, "the timed exchange reported, 1 to reps");
    lab_figure("direct_rep", direct_rep, "the timed exchange reported, 1 to reps");
    exchange_figures("staged", staged, bytes);
    exchange_figures("direct", direct, bytes);

    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaSetDevice(p.dev[k]));
        for (e = 0; e < 2; e++)
            CUDA_CHECK(cudaEventDestroy(p.ev[k][e]));
        CUDA_CHECK(cudaStreamDestroy(p.stream[k]));
        CUDA_CHECK(cudaFree(p.d_mine[k]));
        CUDA_CHECK(cudaFree(p.d_halo[k]));
        CUDA_CHECK(cudaFreeHost(p.h_mine[k]));
        CUDA_CHECK(cudaFreeHost(p.h_got[k]));
    }
    return bad;
}

/* ---------------------------------------------------------------- main */

/*
 * How many of the GPUs 0, 1, 2... this process can use, counted until the
 * first it cannot (at most MAX_GPUS). lab_pick_device() has made sure of GPU
 * 0; a GPU whose compute mode is prohibited, or exclusive and taken by
 * another process, ends the count.
 */
static int usable_gpus(void)
{
    int count = 0, d;

    CUDA_CHECK(cudaGetDeviceCount(&count));
    for (d = 1; d < count && d < MAX_GPUS; d++)
        if (cudaSetDevice(d) != cudaSuccess || cudaFree(0) != cudaSuccess) {
            (void)cudaGetLastError();       /* not sticky: forget it */
            break;
        }
    CUDA_CHECK(cudaSetDevice(0));
    return d;
}

/*
 * Load every kernel's code on every GPU before anything runs. With lazy
 * loading (the default on Linux since CUDA 12.2, on Windows since 12.3) a
 * kernel's code is loaded on a GPU at its first launch there, and that may
 * wait for the work already queued.
 */
static void load_kernels(int ngpus)
{
    cudaFuncAttributes attr;
    int d;

    for (d = 0; d < ngpus; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaFuncGetAttributes(&attr, scramble_kernel));
        CUDA_CHECK(cudaFuncGetAttributes(&attr, produce_kernel));
        CUDA_CHECK(cudaFuncGetAttributes(&attr, consume_kernel));
    }
    CUDA_CHECK(cudaSetDevice(0));
}

int main(int argc, char **argv)
{
    unsigned long long part = 0, mib = 256, chunks = 8, streams = 4, steps = 768, reps = 3,
                       peer_mib = 64, seed = 1;         /* the defaults */
    const struct lab_option opts[] = {
        { "--part", &part, 1, 3, NULL },
        { "--size-mib", &mib, 1, 4096, NULL },
        { "--chunks", &chunks, 1, 256, NULL },
        { "--streams", &streams, 1, MAX_STREAMS, NULL },
        { "--steps", &steps, 1, 1ULL << 20, NULL },
        { "--reps", &reps, 1, 20, NULL },
        { "--peer-mib", &peer_mib, 1, 1024, NULL },
        { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
    };
    cudaDeviceProp prop;
    size_t bad = 0;
    int ngpus = 0, d;

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
    prop = lab_pick_device();
    ngpus = usable_gpus();
    printf("multi_gpu: %d GPU%s:", ngpus, ngpus > 1 ? "s" : "");
    for (d = 0; d < ngpus; d++) {
        CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
        printf("%s %d %s (%d copy engines)", d ? "," : "", d, prop.name,
               prop.asyncEngineCount);
    }
    printf("\n");
    if (ngpus < 2)
        printf("one GPU: both sides of every part run on GPU 0; what needs two GPUs "
               "is not graded here\n");
    lab_figure("gpus", ngpus, "GPUs used");
    load_kernels(ngpus);

    if (part == 0 || part == 1)
        bad += part_split(ngpus, (size_t)mib * (1048576 / sizeof(uint32_t)), (int)chunks,
                          (int)streams, (uint32_t)steps, (int)reps, (uint32_t)seed);
    if (part == 0 || part == 2)
        bad += part_event(ngpus, (uint32_t)seed);
    if (part == 0 || part == 3)
        bad += part_peer(ngpus, (size_t)peer_mib * (1048576 / sizeof(uint32_t)),
                         (int)reps, (uint32_t)seed);

    if (bad)
        printf("RESULT: WRONG: %zu numbers differ (see the part above)\n", bad);
    else
        printf("RESULT: verified every result of the parts that were run\n");
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
