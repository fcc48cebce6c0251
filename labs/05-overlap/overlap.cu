/*
 * overlap.cu -- cut the data into chunks and pipeline copy in, kernel and
 * copy out over several streams, beside the sequential version of the same work.
 *
 * Build:  make            Run:  ./overlap [--order depth|breadth] [--streams S]
 * Check:  make check              [--chunks C] [--size-mib N] [--steps K] [--reps R]
 * Trace:  make trace      (make trace ARGS="--order breadth" for the other order)
 *
 * The sequential version copies the whole array to the GPU, runs the kernel,
 * and copies it back: one step after the other, and the copy engines and the
 * SMs take turns. The pipelined version splits the array into C chunks, chunk
 * c in stream c % S, so that while chunk 3 is being copied in, chunk 2 is
 * computed and chunk 1 copied out. Both run R times, alternately, on the same
 * data; the best of each is reported, with the bound the stages allow.
 *
 * What to do:
 *   TODO(1) allocate h_in and h_out as pinned host memory (cudaMallocHost).
 *   TODO(2) create the streams.
 *   TODO(3) depth-first: queue each chunk's H2D, kernel and D2H in its stream.
 *   TODO(4) breadth-first: every chunk's H2D, then every kernel, then every D2H.
 *   TODO(5) release the streams and the pinned buffers.
 * Done when `make check` passes.
 */
#include <math.h>
#include "lab.h"

#define THREADS          256
#define MAX_STREAMS      32
#define DEFAULT_MIB      256ULL
#define DEFAULT_CHUNKS   16ULL
#define DEFAULT_STREAMS  16ULL
#define DEFAULT_STEPS    768ULL
#define DEFAULT_REPS     5ULL
#define LCG_A            1664525U      /* y -> A*y + C (mod 2^32) */
#define LCG_C            1013904223U

enum order { DEPTH_FIRST, BREADTH_FIRST };

/* The data, its chunks and the streams they go to. */
struct pipe {
    size_t n, chunk;                /* elements in all; per chunk (the last: less) */
    int nchunks, nstreams;
    uint32_t steps;
    uint32_t *h_in, *h_out;         /* pinned host memory */
    uint32_t *d_in, *d_out;
    cudaStream_t streams[MAX_STREAMS];
};

/* ---------------------------------------------------------------- CPU reference */

/* Set (*a, *c) so that y -> a*y + c equals K steps of y -> A*y + C. */
static void affine_power(uint32_t steps, uint32_t *a, uint32_t *c)
{
    uint32_t ra = 1, rc = 0;                /* identity */
    uint32_t pa = LCG_A, pc = LCG_C;        /* the step applied 2^bit times */

    for (; steps != 0; steps >>= 1) {
        if (steps & 1) {
            rc = pa * rc + pc;
            ra = pa * ra;
        }
        pc = pa * pc + pc;
        pa = pa * pa;
    }
    *a = ra;
    *c = rc;
}

/* Compare all of h_out with the reference; say which version. Return the bad count. */
static size_t verify(const struct pipe *p, const char *version)
{
    uint32_t a, c;
    size_t i, bad = 0, first = 0;

    affine_power(p->steps, &a, &c);
    for (i = 0; i < p->n; i++) {
        if (p->h_out[i] != a * p->h_in[i] + c && bad++ == 0)
            first = i;
    }
    if (bad)
        printf("%s: WRONG: %zu of %zu elements differ (first at %zu, in chunk "
               "%zu: got %u, expected %u)\n", version, bad, p->n, first,
               first / p->chunk, p->h_out[first], a * p->h_in[first] + c);
    return bad;
}

/* Elements in chunk c: p->chunk each, the last one what is left. */
static size_t chunk_len(const struct pipe *p, int c)
{
    size_t off = (size_t)c * p->chunk;

    return p->n - off < p->chunk ? p->n - off : p->chunk;
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

/* ---------------------------------------------------------------- kernel */

/* out[i] = K steps of y -> A*y + C from y = in[i]; one thread per element. */
__global__ void scramble_kernel(uint32_t *out, const uint32_t *in, size_t n,
                                uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        uint32_t y = in[i];

        /* one multiply-add per step: unrolled, the compiler would merge steps */
#pragma unroll 1
        for (uint32_t k = 0; k < steps; k++)
            y = y * LCG_A + LCG_C;
        out[i] = y;
    }
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
        lab_todo(3, "queue chunk c in stream c % p->nstreams: the H2D copy of "
                    "its part of h_in, scramble() on it, the D2H copy into h_out");
    }
}

/* Breadth-first (V2): stage by stage, each stage for every chunk. */
static void issue_breadth_first(const struct pipe *p)
{
    int c;

    for (c = 0; c < p->nchunks; c++) {
        /* TODO(4) */
        lab_todo(4, "this loop: every chunk's H2D copy; then one loop of every "
                    "chunk's kernel and one of every D2H copy");
    }
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
 * One pipelined pass; return its time. The events go on the legacy default
 * stream: work in (blocking) created streams waits for what is before it
 * there, and what comes after it there waits for all of them, so the two
 * events bracket the whole pipeline, whatever stream each chunk went to.
 */
static float run_pipelined(const struct pipe *p, enum order order,
                           cudaEvent_t ev[4])
{
    float ms;

    NVTX_PUSH("pipelined", NVTX_GREEN);
    CUDA_CHECK(cudaEventRecord(ev[0], 0));
    if (order == DEPTH_FIRST)
        issue_depth_first(p);
    else
        issue_breadth_first(p);
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

/* ---------------------------------------------------------------- main */

static void usage(FILE *to)
{
    fprintf(to, "usage: overlap [--order depth|breadth] [--streams S] [--chunks C]\n"
                "               [--size-mib N] [--steps K] [--reps R]\n"
                "  --order O     issue order of the pipeline (default depth)\n"
                "  --streams S   streams, 1 to %d (default %llu)\n"
                "  --chunks C    chunks (default %llu)\n"
                "  --size-mib N  data size in MiB (default %llu)\n"
                "  --steps K     kernel work per number (default %llu)\n"
                "  --reps R      runs of each version; the best counts (default %llu)\n",
            MAX_STREAMS, DEFAULT_STREAMS, DEFAULT_CHUNKS, DEFAULT_MIB,
            DEFAULT_STEPS, DEFAULT_REPS);
}

/* The command line. */
struct opts {
    unsigned long long mib, chunks, streams, steps, reps;
    enum order order;
};

/* Read the options into *o. Exits 2 with usage on a bad one. */
static void parse_args(int argc, char **argv, struct opts *o)
{
    const char *arg;
    int i;

    for (i = 1; i < argc; i++) {
        arg = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(LAB_EXIT_OK);
        } else if (strcmp(argv[i], "--order") == 0) {
            if (arg != NULL && strcmp(arg, "depth") == 0)
                o->order = DEPTH_FIRST;
            else if (arg != NULL && strcmp(arg, "breadth") == 0)
                o->order = BREADTH_FIRST;
            else {
                fprintf(stderr, "--order takes depth or breadth\n");
                goto bad;
            }
        } else if (strcmp(argv[i], "--streams") == 0) {
            if (lab_parse_size("--streams", arg, 1, MAX_STREAMS, &o->streams) != 0)
                goto bad;
        } else if (strcmp(argv[i], "--chunks") == 0) {
            if (lab_parse_size("--chunks", arg, 1, 1024, &o->chunks) != 0)
                goto bad;
        } else if (strcmp(argv[i], "--size-mib") == 0) {
            if (lab_parse_size("--size-mib", arg, 1, 4096, &o->mib) != 0)
                goto bad;
        } else if (strcmp(argv[i], "--steps") == 0) {
            if (lab_parse_size("--steps", arg, 1, 1U << 20, &o->steps) != 0)
                goto bad;
        } else if (strcmp(argv[i], "--reps") == 0) {
            if (lab_parse_size("--reps", arg, 1, 100, &o->reps) != 0)
                goto bad;
        } else {
            fprintf(stderr, "unknown option: %s\n", argv[i]);
            goto bad;
        }
        i++;                        /* every option but --help takes a value */
    }
    return;
bad:
    usage(stderr);
    exit(LAB_EXIT_USAGE);
}

int main(int argc, char **argv)
{
    struct opts o = { DEFAULT_MIB, DEFAULT_CHUNKS, DEFAULT_STREAMS,
                      DEFAULT_STEPS, DEFAULT_REPS, DEPTH_FIRST };
    struct pipe p;
    cudaDeviceProp prop;
    cudaEvent_t ev[4];
    float stage[3], best_stage[3] = { 1e30f, 1e30f, 1e30f };
    float seq_ms = 1e30f, pipe_ms = 1e30f, ms;
    double bound;
    size_t i, bytes, bad = 0;
    int a, r;

    parse_args(argc, argv, &o);
    prop = lab_pick_device();
    memset(&p, 0, sizeof p);
    p.n = (size_t)o.mib * (1048576 / sizeof(uint32_t));
    p.nchunks = (int)o.chunks;
    p.chunk = (p.n + p.nchunks - 1) / p.nchunks;
    p.nstreams = (int)o.streams;
    p.steps = (uint32_t)o.steps;
    bytes = p.n * sizeof(uint32_t);
    printf("overlap: %llu MiB in %d chunks of %zu numbers (last %zu) over %d "
           "streams, %s order, %u steps, %llu reps, on %s (%d copy engines)\n",
           o.mib, p.nchunks, p.chunk, chunk_len(&p, p.nchunks - 1), p.nstreams,
           o.order == DEPTH_FIRST ? "depth-first" : "breadth-first", p.steps,
           o.reps, prop.name, prop.asyncEngineCount);

    /* Copies from pageable memory are staged by the driver and make the
     * host wait: only pinned memory lets cudaMemcpyAsync overlap anything. */
    /* TODO(1) */
    lab_todo(1, "allocate p.h_in and p.h_out (bytes each) with cudaMallocHost");
    for (i = 0; i < p.n; i++)
        p.h_in[i] = lab_hash32((uint32_t)i + 1);    /* never all zeros */
    CUDA_CHECK(cudaMalloc(&p.d_in, bytes));
    CUDA_CHECK(cudaMalloc(&p.d_out, bytes));
    /* TODO(2) */
    lab_todo(2, "create p.nstreams streams in p.streams[] with cudaStreamCreate");
    for (a = 0; a < 4; a++)
        CUDA_CHECK(cudaEventCreate(&ev[a]));

    /* Warm-up: load the kernel before anything is timed. */
    scramble(p.d_out, p.d_in, THREADS, p.steps, 0);
    CUDA_CHECK(cudaDeviceSynchronize());

    /* Alternate the two, so that a busy moment on a shared GPU hurts both. */
    for (r = 0; r < (int)o.reps; r++) {
        if (r == 0)
            poison(&p);
        ms = run_sequential(&p, ev, stage);
        if (r == 0)
            bad += verify(&p, "sequential");
        seq_ms = fminf(seq_ms, ms);
        for (a = 0; a < 3; a++)
            best_stage[a] = fminf(best_stage[a], stage[a]);

        if (r == 0)
            poison(&p);
        ms = run_pipelined(&p, o.order, ev);
        if (r == 0)
            bad += verify(&p, "pipelined");
        pipe_ms = fminf(pipe_ms, ms);
    }
    bound = stage_bound(best_stage[0], best_stage[1], best_stage[2], p.nchunks,
                        prop.asyncEngineCount);

    lab_figure("seq_ms", seq_ms, "sequential: H2D, kernel, D2H (best run)");
    lab_figure("seq_h2d_ms", best_stage[0], "its H2D copy");
    lab_figure("seq_kernel_ms", best_stage[1], "its kernel");
    lab_figure("seq_d2h_ms", best_stage[2], "its D2H copy");
    lab_figure("pipe_ms", pipe_ms, "pipelined over the streams (best run)");
    lab_figure("speedup", seq_ms / pipe_ms, "seq_ms / pipe_ms");
    lab_figure("bound_ms", bound, "least time the stages allow");
    lab_figure("bound_fraction", bound / pipe_ms, "bound_ms / pipe_ms (1 = at the bound)");
    lab_figure("copy_engines", prop.asyncEngineCount, "asyncEngineCount");
    if (bad)
        printf("RESULT: WRONG: %zu elements differ (see above)\n", bad);
    else
        printf("RESULT: verified all %zu elements, sequential and pipelined\n", p.n);

    for (a = 0; a < 4; a++)
        CUDA_CHECK(cudaEventDestroy(ev[a]));
    CUDA_CHECK(cudaFree(p.d_in));
    CUDA_CHECK(cudaFree(p.d_out));
    /* TODO(5) */
    lab_todo(5, "destroy the streams; free h_in and h_out with cudaFreeHost");
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
