/*
 * overlap.cu -- cut the data into chunks and pipeline copy in, kernel and
 * copy out over several streams, beside the sequential version of the same work.
 *
 * Build:  make            Run:  ./overlap [--streams S] [--chunks C]
 * Check:  make check              [--size-mib N] [--steps K] [--reps R]
 * Trace:  make trace
 *
 * The sequential version copies the whole array to the GPU, runs the kernel,
 * and copies it back: one step after the other, and the copy engines and the
 * SMs take turns. The pipelined version splits the array into C chunks, chunk
 * c in stream c % S, so that while chunk 3 is being copied in, chunk 2 can be
 * computed and chunk 1 copied out. It is queued in two orders: depth-first
 * (chunk by chunk) and breadth-first (stage by stage). The three run R times
 * in turn on the same data; the best of each is reported, with the bound the
 * stages allow. Then both orders run once more, untimed, on an uneven shape
 * (the first 16 MiB at most, in 7 chunks over 3 streams), and every result is
 * checked.
 *
 * What to do, in the order the program reaches them:
 *   TODO(1) allocate h_in and h_out as pinned host memory (cudaMallocHost).
 *   TODO(2) create the streams.
 *   TODO(3) depth-first: queue each chunk's H2D, kernel and D2H in its stream.
 *   TODO(4) breadth-first: every chunk's H2D, then every kernel, then every D2H.
 *   TODO(5) release the streams and the pinned buffers.
 * The program stops at the lab_todo() line of the first TODO not done: your
 * code replaces that line. Done when `make check` passes.
 */
#include <math.h>
#include "lab.h"
#include "scramble.h"

#define THREADS      256
#define MAX_STREAMS  32
#define UNEVEN_N       (4u << 20)   /* the uneven shape: 16 MiB at most, */
#define UNEVEN_CHUNKS  7            /* in 7 chunks */
#define UNEVEN_STREAMS 3            /* over 3 streams */

static const char usage_text[] =
    "usage: overlap [--streams S] [--chunks C] [--size-mib N] [--steps K]\n"
    "               [--reps R] [--seed S]\n"
    "  --streams S   streams, 1 to 32 (default 16)\n"
    "  --chunks C    chunks, 1 to 1024 (default 16)\n"
    "  --size-mib N  data size in MiB, 1 to 4096 (default 256)\n"
    "  --steps K     kernel work per number, 1 to 1048576 (default 768)\n"
    "  --reps R      runs of each version and order, 1 to 100; the best\n"
    "                counts (default 5)\n"
    "  --seed S      the input data, 0 to 4294967295 (default 1)\n";

enum order { DEPTH_FIRST, BREADTH_FIRST };

/* NVTX range and digest names of the orders, and of the uneven shape's runs. */
static const char *const order_name[] = { "depth_first", "breadth_first" };
static const char *const uneven_name[] = { "uneven_depth_first", "uneven_breadth_first" };

/* The data, its chunks and the streams they go to. */
struct pipe {
    size_t n;                       /* elements in all */
    int nchunks, nstreams;
    uint32_t steps;
    uint32_t *h_in, *h_out;         /* pinned host memory */
    uint32_t *d_in, *d_out;
    cudaStream_t streams[MAX_STREAMS];
};

/* ---------------------------------------------------------------- chunks */

/* The first element of chunk c (chunk nchunks: the end). Chunk sizes differ
 * by one at most, and none is empty (--chunks is at most the elements). */
static size_t chunk_start(const struct pipe *p, int c)
{
    return (size_t)((unsigned long long)p->n * (unsigned)c / (unsigned)p->nchunks);
}

/* Elements in chunk c. */
static size_t chunk_len(const struct pipe *p, int c)
{
    return chunk_start(p, c + 1) - chunk_start(p, c);
}

/* ---------------------------------------------------------------- CPU check */

/*
 * Compare all of h_out with the reference (common/scramble.h); print its
 * digest under the version's name (the checker recomputes it), and the first
 * difference. Return the number of elements that differ.
 */
static size_t verify(const struct pipe *p, const char *version)
{
    uint64_t digest;
    struct lab_mismatch m = scramble_check(p->h_out, p->h_in, p->n, p->steps, &digest);
    int c = 0;

    lab_digest_print(version, digest);
    if (m.bad) {
        while (chunk_start(p, c + 1) <= m.first)
            c++;
        printf("%s: WRONG: %zu of %zu elements differ (first at %zu, in chunk "
               "%d: got %u, expected %u)\n", version, m.bad, p->n, m.first, c,
               m.got, m.want);
    }
    return m.bad;
}

/*
 * The least time the pipeline can take, from the sequential stage times h, k,
 * d (ms for the whole array) cut into `chunks`. The slowest stage must run
 * whole; before it the first chunk's earlier stages (fill), after it the last
 * chunk's later stages (drain). With one copy engine, H2D and D2H take turns.
 */
static double stage_bound(double h, double k, double d, int chunks, int engines)
{
    double hc = h / chunks, kc = k / chunks, dc = d / chunks;

    if (engines < 2)
        return fmax(h + d, hc + k + dc);
    return fmax(fmax(h + kc + dc, hc + k + dc), hc + kc + d);
}

/* ---------------------------------------------------------------- launchers */

/* Queue the kernel for n elements in `stream`. Returns at once. */
static void scramble(uint32_t *d_out, const uint32_t *d_in, size_t n,
                     uint32_t steps, cudaStream_t stream)
{
    unsigned int blocks = (unsigned int)((n + THREADS - 1) / THREADS);

    scramble_kernel<<<blocks, THREADS, 0, stream>>>(d_out, d_in, n, steps);
    CUDA_CHECK_LAUNCH();
}

/* Depth-first (V1): chunk by chunk, its three steps one after the other. */
static void issue_depth_first(const struct pipe *p)
{
    int c;

    for (c = 0; c < p->nchunks; c++) {
        /* TODO(3) */
        size_t off = chunk_start(p, c), len = chunk_len(p, c);
        cudaStream_t s = p->streams[c % p->nstreams];

        CUDA_CHECK(cudaMemcpyAsync(p->d_in + off, p->h_in + off,
                                   len * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, s));
        scramble(p->d_out + off, p->d_in + off, len, p->steps, s);
        CUDA_CHECK(cudaMemcpyAsync(p->h_out + off, p->d_out + off,
                                   len * sizeof(uint32_t),
                                   cudaMemcpyDeviceToHost, s));
    }
}

/* Breadth-first (V2): stage by stage, each stage for every chunk. */
static void issue_breadth_first(const struct pipe *p)
{
    int c;

    for (c = 0; c < p->nchunks; c++) {
        /* TODO(4) */
        size_t off = chunk_start(p, c);

        CUDA_CHECK(cudaMemcpyAsync(p->d_in + off, p->h_in + off,
                                   chunk_len(p, c) * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice,
                                   p->streams[c % p->nstreams]));
    }
    for (c = 0; c < p->nchunks; c++) {
        size_t off = chunk_start(p, c);

        scramble(p->d_out + off, p->d_in + off, chunk_len(p, c), p->steps,
                 p->streams[c % p->nstreams]);
    }
    for (c = 0; c < p->nchunks; c++) {
        size_t off = chunk_start(p, c);

        CUDA_CHECK(cudaMemcpyAsync(p->h_out + off, p->d_out + off,
                                   chunk_len(p, c) * sizeof(uint32_t),
                                   cudaMemcpyDeviceToHost,
                                   p->streams[c % p->nstreams]));
    }
}

/* Queue the pipeline in `order`. */
static void issue(const struct pipe *p, enum order order)
{
    if (order == DEPTH_FIRST)
        issue_depth_first(p);
    else
        issue_breadth_first(p);
}

/* ---------------------------------------------------------------- the two versions */

/*
 * The whole array in three steps on the legacy default stream. Put the
 * time of each step in stage_ms[0..2] (H2D, kernel, D2H); return the total.
 */
static float run_sequential(const struct pipe *p, cudaEvent_t ev[4],
                            float stage_ms[3])
{
    size_t bytes = p->n * sizeof(uint32_t);
    float total;
    int i;

    NVTX_PUSH("sequential", NVTX_GREY);
    CUDA_CHECK(cudaEventRecord(ev[0], 0));
    CUDA_CHECK(cudaMemcpyAsync(p->d_in, p->h_in, bytes, cudaMemcpyHostToDevice, 0));
    CUDA_CHECK(cudaEventRecord(ev[1], 0));
    scramble(p->d_out, p->d_in, p->n, p->steps, 0);
    CUDA_CHECK(cudaEventRecord(ev[2], 0));
    CUDA_CHECK(cudaMemcpyAsync(p->h_out, p->d_out, bytes, cudaMemcpyDeviceToHost, 0));
    CUDA_CHECK(cudaEventRecord(ev[3], 0));
    CUDA_CHECK(cudaEventSynchronize(ev[3]));
    NVTX_POP();
    for (i = 0; i < 3; i++)
        CUDA_CHECK(cudaEventElapsedTime(&stage_ms[i], ev[i], ev[i + 1]));
    CUDA_CHECK(cudaEventElapsedTime(&total, ev[0], ev[3]));
    return total;
}

/*
 * One pipelined pass in `order`; return its time. The events go on the
 * legacy default stream: work in (blocking) created streams waits for what
 * is before it there, and what comes after it there waits for all of them,
 * so the two events bracket the whole pipeline, whatever stream each chunk
 * went to.
 */
static float run_pipelined(const struct pipe *p, enum order order,
                           cudaEvent_t ev[4])
{
    float ms;

    NVTX_PUSH(order_name[order], order == DEPTH_FIRST ? NVTX_GREEN : NVTX_BLUE);
    CUDA_CHECK(cudaEventRecord(ev[0], 0));
    issue(p, order);
    CUDA_CHECK(cudaEventRecord(ev[3], 0));
    CUDA_CHECK(cudaEventSynchronize(ev[3]));
    NVTX_POP();
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[3]));
    return ms;
}

/* Poison both outputs, so that what a version does not write back is wrong. */
static void poison(const struct pipe *p)
{
    memset(p->h_out, 0xcd, p->n * sizeof(uint32_t));
    CUDA_CHECK(cudaMemset(p->d_out, 0xab, p->n * sizeof(uint32_t)));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/*
 * Both orders once more, untimed, on an uneven shape: the first UNEVEN_N
 * elements at most, in UNEVEN_CHUNKS chunks of unequal size over the first
 * UNEVEN_STREAMS streams (fewer if there are fewer): more chunks than
 * streams. The part owns those streams only: past them its streams[] holds
 * 0, the legacy default stream. Each result is checked. Return the number
 * of elements that differ.
 */
static size_t run_uneven(const struct pipe *p)
{
    struct pipe part = *p;
    size_t bad = 0;
    int a;
    enum order o;

    part.n = p->n < UNEVEN_N ? p->n : UNEVEN_N;
    part.nchunks = UNEVEN_CHUNKS;
    part.nstreams = p->nstreams < UNEVEN_STREAMS ? p->nstreams : UNEVEN_STREAMS;
    for (a = part.nstreams; a < MAX_STREAMS; a++)
        part.streams[a] = 0;
    for (o = DEPTH_FIRST; o <= BREADTH_FIRST; o = (enum order)(o + 1)) {
        poison(&part);
        NVTX_PUSH(uneven_name[o], NVTX_ORANGE);
        issue(&part, o);
        CUDA_CHECK(cudaDeviceSynchronize());
        NVTX_POP();
        bad += verify(&part, uneven_name[o]);
    }
    return bad;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    unsigned long long mib = 256, chunks = 16, streams = 16, steps = 768,
                       reps = 5, seed = 1;      /* the defaults */
    const struct lab_option opts[] = {
        { "--streams", &streams, 1, MAX_STREAMS, NULL },
        { "--chunks", &chunks, 1, 1024, NULL },
        { "--size-mib", &mib, 1, 4096, NULL },
        { "--steps", &steps, 1, 1ULL << 20, NULL },
        { "--reps", &reps, 1, 100, NULL },
        { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
    };
    enum order o;
    struct pipe p;
    cudaDeviceProp prop;
    cudaEvent_t ev[4];
    float stage[3], best_stage[3] = { 1e30f, 1e30f, 1e30f };
    float seq_ms = 1e30f, pipe_ms[2] = { 1e30f, 1e30f }, ms;
    double bound;
    size_t bytes, bad = 0;
    int a, r;

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
    prop = lab_pick_device();
    memset(&p, 0, sizeof p);
    p.n = (size_t)mib * (1048576 / sizeof(uint32_t));
    p.nchunks = (int)chunks;
    p.nstreams = (int)streams;
    p.steps = (uint32_t)steps;
    bytes = p.n * sizeof(uint32_t);
    printf("overlap: %llu MiB in %d chunks of %zu to %zu numbers over %d streams, "
           "%u steps, %llu reps, on %s (%d copy engines)\n",
           mib, p.nchunks, chunk_len(&p, 0), chunk_len(&p, p.nchunks - 1),
           p.nstreams, p.steps, reps, prop.name, prop.asyncEngineCount);

    /* From pageable memory, cudaMemcpyAsync may be staged by the driver and
     * make the host wait: copies from pinned memory are the ones that can
     * overlap a kernel. */
    /* TODO(1) */
    CUDA_CHECK(cudaMallocHost(&p.h_in, bytes));
    CUDA_CHECK(cudaMallocHost(&p.h_out, bytes));
    lab_fill(p.h_in, p.n, (uint32_t)seed, 0);
    CUDA_CHECK(cudaMalloc(&p.d_in, bytes));
    CUDA_CHECK(cudaMalloc(&p.d_out, bytes));
    /* TODO(2) */
    for (a = 0; a < p.nstreams; a++)
        CUDA_CHECK(cudaStreamCreate(&p.streams[a]));
    for (a = 0; a < 4; a++)
        CUDA_CHECK(cudaEventCreate(&ev[a]));

    /* Warm-up: load the kernel before anything is timed. */
    scramble(p.d_out, p.d_in, THREADS, p.steps, 0);
    CUDA_CHECK(cudaDeviceSynchronize());

    /* Take turns, so that a busy moment on a shared GPU hurts all three.
     * The first run of each is checked. */
    for (r = 0; r < (int)reps; r++) {
        if (r == 0)
            poison(&p);
        ms = run_sequential(&p, ev, stage);
        if (r == 0)
            bad += verify(&p, "sequential");
        seq_ms = fminf(seq_ms, ms);
        for (a = 0; a < 3; a++)
            best_stage[a] = fminf(best_stage[a], stage[a]);

        for (o = DEPTH_FIRST; o <= BREADTH_FIRST; o = (enum order)(o + 1)) {
            if (r == 0)
                poison(&p);
            ms = run_pipelined(&p, o, ev);
            if (r == 0)
                bad += verify(&p, order_name[o]);
            pipe_ms[o] = fminf(pipe_ms[o], ms);
        }
    }
    bad += run_uneven(&p);
    bound = stage_bound(best_stage[0], best_stage[1], best_stage[2], p.nchunks,
                        prop.asyncEngineCount);

    lab_figure("seq_ms", seq_ms, "sequential: H2D, kernel, D2H (best run)");
    lab_figure("seq_h2d_ms", best_stage[0], "its H2D copy");
    lab_figure("seq_kernel_ms", best_stage[1], "its kernel");
    lab_figure("seq_d2h_ms", best_stage[2], "its D2H copy");
    lab_figure("depth_ms", pipe_ms[DEPTH_FIRST], "pipelined, depth-first (best run)");
    lab_figure("breadth_ms", pipe_ms[BREADTH_FIRST], "pipelined, breadth-first (best run)");
    lab_figure("speedup", seq_ms / pipe_ms[DEPTH_FIRST], "seq_ms / depth_ms");
    lab_figure("bound_ms", bound, "least time the stages allow");
    lab_figure("bound_fraction", bound / pipe_ms[DEPTH_FIRST],
               "bound_ms / depth_ms (1 = at the bound)");
    lab_figure("breadth_fraction", bound / pipe_ms[BREADTH_FIRST],
               "bound_ms / breadth_ms");
    lab_figure("copy_engines", prop.asyncEngineCount, "asyncEngineCount");
    if (bad)
        printf("RESULT: WRONG: %zu elements differ (see above)\n", bad);
    else
        printf("RESULT: verified all %zu elements, sequential and pipelined "
               "in both orders\n", p.n);

    for (a = 0; a < 4; a++)
        CUDA_CHECK(cudaEventDestroy(ev[a]));
    CUDA_CHECK(cudaFree(p.d_in));
    CUDA_CHECK(cudaFree(p.d_out));
    /* TODO(5) */
    for (a = 0; a < p.nstreams; a++)
        CUDA_CHECK(cudaStreamDestroy(p.streams[a]));
    CUDA_CHECK(cudaFreeHost(p.h_in));
    CUDA_CHECK(cudaFreeHost(p.h_out));
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
