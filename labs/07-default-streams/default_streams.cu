/*
 * default_streams.cu -- stream 0 and its relatives: the legacy default
 * stream, per-thread default streams, blocking and non-blocking streams.
 *
 * Build:  make            Run:  ./default_streams [--part 1|2|3] [--seed S]
 * Check:  make check      Trace: make trace
 *
 * Part 1 launches a long kernel on the legacy default stream (stream 0), then
 * the same short kernel on three other streams: a created non-blocking
 * stream, a created blocking stream and this thread's per-thread default
 * stream. Every kernel stamps the GPU's clock when it starts and when it
 * ends; from those stamps the program says which of the three waited for the
 * long one. Part 2 runs two host threads, each copying its own numbers in,
 * running a kernel on them and copying them back: first on "the default
 * stream", stream 0, as given (one stream for the whole device: the threads
 * take turns), then each thread on its own per-thread default stream. Part 3
 * is a pipeline over four created streams, as in lab 05, where each chunk's
 * kernel also counts its results into a scratch buffer that must start at
 * zero; the given code clears it with a cudaMemset on stream 0 for every
 * chunk, and that call serializes the whole pipeline.
 *
 * What to do, in the order the program reaches them:
 *   TODO(1) create the blocking stream and the non-blocking stream.
 *   TODO(2) from the clock stamps, decide which kernels waited.
 *   TODO(3) a thread's round trip on its own per-thread default stream:
 *           cudaMemcpyAsync, crunch(), cudaMemcpyAsync, cudaStreamSynchronize,
 *           each on cudaStreamPerThread.
 *   TODO(4) clear the chunk's scratch on the chunk's own stream s
 *           (cudaMemsetAsync), so that it no longer serializes the pipeline.
 * The program stops at the lab_todo() line of the first TODO not done: your
 * code replaces that line. Done when `make check` passes.
 */
#include <pthread.h>
#include "lab.h"
#include "scramble.h"

#define THREADS         256

/* Part 1: each kernel has SPIN_BLOCKS blocks, far fewer than any GPU has SMs,
 * so that kernels of different streams fit on the GPU at once. */
#define SPIN_BLOCKS     2
#define SPIN_STEPS      (1u << 17)      /* the short kernels; the long one: 4x */

/* Part 2: each host thread's numbers, and its kernel's size. */
#define THREAD_N        (1u << 15)
#define THREAD_STEPS    (1u << 13)
#define THREAD_BLOCKS   2

/* Part 3: the pipeline. */
#define PIPE_N          (64u << 20)     /* 256 MiB of numbers */
#define PIPE_CHUNKS     16
#define PIPE_STREAMS    4
#define PIPE_STEPS      512u

static const char usage_text[] =
    "usage: default_streams [--part 1|2|3] [--seed S]\n"
    "  --part N   run only part N (default: all three)\n"
    "  --seed S   the input data, 0 to 4294967295 (default 1)\n";

/* ---------------------------------------------------------------- part 1 kernels */

/* The four streams of part 1, in the order their kernels are queued. */
enum { ON_LEGACY, ON_NONBLOCKING, ON_BLOCKING, ON_PER_THREAD, ON_COUNT };

static const char *const on_what[ON_COUNT] = {
    "the legacy default stream", "a non-blocking created stream",
    "a blocking created stream", "the per-thread default stream",
};

/* When a kernel ran, by the GPU's clock (ns): the first of its blocks to
 * start, the last to end. */
struct stamp {
    unsigned long long start, end;
};

/* The GPU's global nanosecond clock, the same for every SM. */
__device__ static unsigned long long gpu_clock_ns(void)
{
    unsigned long long t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Busy work for `steps` steps per thread, stamped at the start and the end
 * of each block; the result goes to sink so that the work is not dropped. */
__device__ static void spin(struct stamp *st, uint32_t *sink, uint32_t steps)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (threadIdx.x == 0)
        atomicMin(&st->start, gpu_clock_ns());
    sink[i] = lcg_steps(i, steps);
    __syncthreads();                    /* every thread of the block is done */
    if (threadIdx.x == 0)
        atomicMax(&st->end, gpu_clock_ns());
}

/* The same kernel four times, each under its own name for the trace. */
__global__ void spin_legacy_kernel(struct stamp *st, uint32_t *sink, uint32_t steps)
{
    spin(st, sink, steps);
}

__global__ void spin_nonblocking_kernel(struct stamp *st, uint32_t *sink, uint32_t steps)
{
    spin(st, sink, steps);
}

__global__ void spin_blocking_kernel(struct stamp *st, uint32_t *sink, uint32_t steps)
{
    spin(st, sink, steps);
}

__global__ void spin_per_thread_kernel(struct stamp *st, uint32_t *sink, uint32_t steps)
{
    spin(st, sink, steps);
}

/* ---------------------------------------------------------------- part 2 kernel */

/* out[i] = K steps from in[i]; a grid-stride loop, so a small grid covers n. */
__global__ void worker_kernel(uint32_t *out, const uint32_t *in, size_t n,
                              uint32_t steps)
{
    size_t i;

    for (i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = lcg_steps(in[i], steps);
}

/* ---------------------------------------------------------------- part 3 kernel */

/*
 * out[i] = K steps from in[i], and bins[b] += how many results have b as
 * their top byte (LAB_NBINS bins; THREADS == LAB_NBINS). bins is the chunk's
 * scratch: it must be all zero when the kernel starts. Each block counts in
 * shared memory, then adds its counts to bins.
 */
__global__ void count_kernel(uint32_t *out, uint32_t *bins, const uint32_t *in,
                             size_t n, uint32_t steps)
{
    __shared__ uint32_t local[LAB_NBINS];
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t y;

    local[threadIdx.x] = 0;
    __syncthreads();
    if (i < n) {
        y = lcg_steps(in[i], steps);
        out[i] = y;
        atomicAdd(&local[LAB_BIN(y)], 1u);
    }
    __syncthreads();
    if (local[threadIdx.x] != 0)
        atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

/* ---------------------------------------------------------------- part 1 */

/*
 * A long kernel on the legacy default stream, then the same short kernel on
 * a non-blocking created stream, a blocking created stream and this thread's
 * per-thread default stream. Print which of the three waited for the long one.
 */
static void part_kinds(void)
{
    cudaStream_t blocking = NULL, nonblocking = NULL;
    struct stamp h_st[ON_COUNT], *d_st;
    uint32_t *d_sink;
    int waited[ON_COUNT], k;
    size_t sink_n = SPIN_BLOCKS * THREADS;

    CUDA_CHECK(cudaMalloc(&d_st, sizeof h_st));
    CUDA_CHECK(cudaMalloc(&d_sink, ON_COUNT * sink_n * sizeof(uint32_t)));
    for (k = 0; k < ON_COUNT; k++) {
        h_st[k].start = ~0ULL;          /* atomicMin and atomicMax from here */
        h_st[k].end = 0;
        waited[k] = 0;
    }
    CUDA_CHECK(cudaMemcpy(d_st, h_st, sizeof h_st, cudaMemcpyHostToDevice));

    /* TODO(1) */
    lab_todo(1, "create `blocking` with cudaStreamCreate, and `nonblocking` with "
                "cudaStreamCreateWithFlags and the flag cudaStreamNonBlocking");

    CUDA_CHECK(cudaDeviceSynchronize());        /* the GPU is idle from here */
    NVTX_PUSH("part1_kinds", NVTX_PURPLE);
    spin_legacy_kernel<<<SPIN_BLOCKS, THREADS, 0, 0>>>(
        d_st + ON_LEGACY, d_sink + ON_LEGACY * sink_n, 4 * SPIN_STEPS);
    CUDA_CHECK_LAUNCH();
    /* The non-blocking one first: no kernel that waits is then ahead of it
     * in any hardware queue it may share with another stream (lab 05,
     * CUDA_DEVICE_MAX_CONNECTIONS). */
    spin_nonblocking_kernel<<<SPIN_BLOCKS, THREADS, 0, nonblocking>>>(
        d_st + ON_NONBLOCKING, d_sink + ON_NONBLOCKING * sink_n, SPIN_STEPS);
    CUDA_CHECK_LAUNCH();
    spin_blocking_kernel<<<SPIN_BLOCKS, THREADS, 0, blocking>>>(
        d_st + ON_BLOCKING, d_sink + ON_BLOCKING * sink_n, SPIN_STEPS);
    CUDA_CHECK_LAUNCH();
    spin_per_thread_kernel<<<SPIN_BLOCKS, THREADS, 0, cudaStreamPerThread>>>(
        d_st + ON_PER_THREAD, d_sink + ON_PER_THREAD * sink_n, SPIN_STEPS);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    NVTX_POP();
    CUDA_CHECK(cudaMemcpy(h_st, d_st, sizeof h_st, cudaMemcpyDeviceToHost));

    /* A kernel waited for the legacy one if it started only once that one
     * had ended, by the GPU's clock: set waited[k] for the three others. */
    /* TODO(2) */
    lab_todo(2, "set waited[k] to 1 where kernel k started (h_st[k].start) at or "
                "after the legacy kernel's end (h_st[ON_LEGACY].end), else 0");

    printf("part 1: a long kernel on %s, then the same short kernel on three streams\n",
           on_what[ON_LEGACY]);
    for (k = ON_LEGACY + 1; k < ON_COUNT; k++)
        printf("  on %-30s %s\n", on_what[k],
               waited[k] ? "waited for it" : "ran while it ran");
    lab_figure("waited_nonblocking", waited[ON_NONBLOCKING],
               "1: started only after the legacy kernel ended");
    lab_figure("waited_blocking", waited[ON_BLOCKING], NULL);
    lab_figure("waited_per_thread", waited[ON_PER_THREAD], NULL);

    CUDA_CHECK(cudaStreamDestroy(blocking));
    CUDA_CHECK(cudaStreamDestroy(nonblocking));
    CUDA_CHECK(cudaFree(d_st));
    CUDA_CHECK(cudaFree(d_sink));
}

/* ---------------------------------------------------------------- part 2 */

/* The two versions of part 2. */
enum version { AS_GIVEN, PER_THREAD };

/* What one host thread works on. */
struct job {
    enum version version;
    uint32_t *h_in, *h_out;             /* pinned: cudaMemcpyAsync can overlap */
    uint32_t *d_in, *d_out;
    pthread_barrier_t *start;
};

/* Queue the thread's kernel in `stream`. Returns at once. */
static void crunch(const struct job *j, cudaStream_t stream)
{
    worker_kernel<<<THREAD_BLOCKS, THREADS, 0, stream>>>(j->d_out, j->d_in,
                                                         THREAD_N, THREAD_STEPS);
    CUDA_CHECK_LAUNCH();
}

/* As given: the thread's numbers in, the kernel, the numbers out, on "the
 * default stream", 0 -- the legacy default stream, one for the whole device,
 * whichever thread queues on it. Then wait for it. */
static void round_trip_legacy(const struct job *j)
{
    size_t bytes = THREAD_N * sizeof(uint32_t);

    CUDA_CHECK(cudaMemcpyAsync(j->d_in, j->h_in, bytes, cudaMemcpyHostToDevice, 0));
    crunch(j, 0);
    CUDA_CHECK(cudaMemcpyAsync(j->h_out, j->d_out, bytes, cudaMemcpyDeviceToHost, 0));
    CUDA_CHECK(cudaStreamSynchronize(0));
}

/* The same round trip on the calling thread's own per-thread default stream;
 * then wait for that stream, and for nothing else. */
static void round_trip_own(const struct job *j)
{
    /* TODO(3) */
    (void)j;
    lab_todo(3, "as round_trip_legacy() above (cudaMemcpyAsync in, crunch(), "
                "cudaMemcpyAsync out, cudaStreamSynchronize), but every call on this "
                "thread's per-thread default stream, cudaStreamPerThread");
}

/* One host thread: wait for the other, then do the round trip. */
static void *worker(void *arg)
{
    const struct job *j = (const struct job *)arg;

    pthread_barrier_wait(j->start);     /* both threads queue at about the same time */
    NVTX_PUSH("worker", NVTX_BLUE);
    if (j->version == AS_GIVEN)
        round_trip_legacy(j);
    else
        round_trip_own(j);
    NVTX_POP();
    return NULL;
}

/* Run both jobs, each in a host thread of its own, as `version`. */
static void run_threads(struct job jobs[2], enum version version)
{
    pthread_barrier_t start;
    pthread_t t[2];
    int k;

    if (pthread_barrier_init(&start, NULL, 2) != 0) {
        fprintf(stderr, "default_streams: cannot make a barrier for the threads\n");
        exit(LAB_EXIT_FAIL);
    }
    for (k = 0; k < 2; k++) {
        jobs[k].version = version;
        jobs[k].start = &start;
        if (pthread_create(&t[k], NULL, worker, &jobs[k]) != 0) {
            fprintf(stderr, "default_streams: cannot start a host thread\n");
            exit(LAB_EXIT_FAIL);
        }
    }
    for (k = 0; k < 2; k++)
        pthread_join(t[k], NULL);
    pthread_barrier_destroy(&start);
}

/* Check both threads' results; print their digest as digest_NAME. Return
 * the number of elements that differ. */
static size_t verify_threads(const struct job jobs[2], const char *name)
{
    struct lab_result r;
    int k;

    lab_result_begin(&r);
    for (k = 0; k < 2; k++)
        lab_result_add(&r, jobs[k].h_out, jobs[k].h_in, NULL, 1, THREAD_N,
                       THREAD_STEPS, (size_t)k * THREAD_N);
    if (lab_result_end(&r, name))
        printf("part 2 (%s): WRONG: %zu of %u numbers differ (first: thread %zu, "
               "element %zu: got %u, expected %u)\n", name, r.m.bad, 2 * THREAD_N,
               r.m.first / THREAD_N, r.m.first % THREAD_N, r.m.got, r.m.want);
    return r.m.bad;
}

/* Two host threads, as given and on per-thread streams. Return the wrong elements. */
static size_t part_threads(uint32_t seed)
{
    struct job jobs[2];
    size_t bytes = THREAD_N * sizeof(uint32_t), bad = 0;
    int k;

    printf("part 2: two host threads, %u numbers each, on stream 0 as given, then "
           "each on its own stream\n", THREAD_N);
    memset(jobs, 0, sizeof jobs);
    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaMallocHost(&jobs[k].h_in, bytes));
        CUDA_CHECK(cudaMallocHost(&jobs[k].h_out, bytes));
        CUDA_CHECK(cudaMalloc(&jobs[k].d_in, bytes));
        CUDA_CHECK(cudaMalloc(&jobs[k].d_out, bytes));
        lab_fill(jobs[k].h_in, THREAD_N, seed, 1 + (uint32_t)k);
        memset(jobs[k].h_out, 0xcd, bytes);
    }

    CUDA_CHECK(cudaDeviceSynchronize());
    NVTX_PUSH("part2_legacy", NVTX_GREY);
    run_threads(jobs, AS_GIVEN);
    NVTX_POP();
    bad += verify_threads(jobs, "threads_legacy");

    for (k = 0; k < 2; k++) {           /* poison: start again from nothing */
        memset(jobs[k].h_out, 0xcd, bytes);
        CUDA_CHECK(cudaMemset(jobs[k].d_out, 0xab, bytes));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    NVTX_PUSH("part2_per_thread", NVTX_GREEN);
    run_threads(jobs, PER_THREAD);
    NVTX_POP();
    bad += verify_threads(jobs, "threads_per_thread");

    for (k = 0; k < 2; k++) {
        CUDA_CHECK(cudaFreeHost(jobs[k].h_in));
        CUDA_CHECK(cudaFreeHost(jobs[k].h_out));
        CUDA_CHECK(cudaFree(jobs[k].d_in));
        CUDA_CHECK(cudaFree(jobs[k].d_out));
    }
    return bad;
}

/* ---------------------------------------------------------------- part 3 */

/* The pipeline's buffers and streams. Chunk c goes to stream c % PIPE_STREAMS
 * and counts into that stream's scratch bins. */
struct pipeline {
    uint32_t *h_in, *h_out, *h_bins;    /* pinned; h_bins: LAB_NBINS per chunk */
    uint32_t *d_in, *d_out, *d_bins;    /* d_bins: LAB_NBINS per stream */
    cudaStream_t streams[PIPE_STREAMS];
};

/* The first number of chunk c (chunk PIPE_CHUNKS: the end). */
static size_t chunk_first(int c)
{
    return (size_t)((unsigned long long)PIPE_N * (unsigned)c / PIPE_CHUNKS);
}

/* Queue the count kernel for `len` numbers from `first` in `stream`. */
static void count(const struct pipeline *pl, size_t first, size_t len,
                  uint32_t *bins, cudaStream_t stream)
{
    unsigned int blocks = (unsigned int)((len + THREADS - 1) / THREADS);

    count_kernel<<<blocks, THREADS, 0, stream>>>(pl->d_out + first, bins,
                                                 pl->d_in + first, len, PIPE_STEPS);
    CUDA_CHECK_LAUNCH();
}

/* Queue every chunk: clear its scratch, copy it in, count, copy back its
 * bins and its numbers. */
static void issue_pipeline(const struct pipeline *pl)
{
    int c;

    for (c = 0; c < PIPE_CHUNKS; c++) {
        size_t first = chunk_first(c), len = chunk_first(c + 1) - first;
        size_t bytes = len * sizeof(uint32_t);
        cudaStream_t s = pl->streams[c % PIPE_STREAMS];
        uint32_t *bins = pl->d_bins + (size_t)(c % PIPE_STREAMS) * LAB_NBINS;

        /* The scratch bins of this chunk's stream count from zero. */
        /* TODO(4) */
        CUDA_CHECK(cudaMemset(bins, 0, LAB_NBINS * sizeof(uint32_t)));
        lab_todo(4, "the cudaMemset above runs on stream 0 and serializes the "
                    "pipeline: in its place, clear `bins` on the chunk's own stream "
                    "`s` (cudaMemsetAsync), where only the chunk's own work is "
                    "ordered around it");
        CUDA_CHECK(cudaMemcpyAsync(pl->d_in + first, pl->h_in + first, bytes,
                                   cudaMemcpyHostToDevice, s));
        count(pl, first, len, bins, s);
        CUDA_CHECK(cudaMemcpyAsync(pl->h_bins + (size_t)c * LAB_NBINS, bins,
                                   LAB_NBINS * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(pl->h_out + first, pl->d_out + first, bytes,
                                   cudaMemcpyDeviceToHost, s));
    }
}

/* Check the numbers and every chunk's bins; print their digests. Return the
 * number of elements and bins that differ. */
static size_t verify_pipeline(const struct pipeline *pl)
{
    uint32_t want[LAB_NBINS];
    uint64_t digest;
    size_t bad_bins = 0, first_bad = 0;
    struct lab_mismatch m = scramble_check(pl->h_out, pl->h_in, PIPE_N, PIPE_STEPS,
                                           &digest);
    int c, b;

    lab_digest_print("pipeline", digest);
    lab_digest_print("bins", lab_digest_of(pl->h_bins, (size_t)PIPE_CHUNKS *
                                                       LAB_NBINS * sizeof(uint32_t)));
    for (c = 0; c < PIPE_CHUNKS; c++) {
        scramble_bins(want, pl->h_in + chunk_first(c), chunk_first(c + 1) - chunk_first(c),
                      PIPE_STEPS);
        for (b = 0; b < LAB_NBINS; b++)
            if (pl->h_bins[(size_t)c * LAB_NBINS + b] != want[b] && bad_bins++ == 0)
                first_bad = (size_t)c;
    }
    if (m.bad)
        printf("part 3: WRONG: %zu of %u numbers differ (first at %zu: got %u, "
               "expected %u)\n", m.bad, PIPE_N, m.first, m.got, m.want);
    if (bad_bins)
        printf("part 3: WRONG: %zu bins differ (first in chunk %zu: was its scratch "
               "zero when its kernel started?)\n", bad_bins, first_bad);
    return m.bad + bad_bins;
}

/* The pipeline, once. Return the wrong elements and bins. */
static size_t part_pipeline(uint32_t seed)
{
    struct pipeline pl;
    size_t bytes = (size_t)PIPE_N * sizeof(uint32_t);
    size_t bin_bytes = (size_t)PIPE_CHUNKS * LAB_NBINS * sizeof(uint32_t), bad;
    int a;

    memset(&pl, 0, sizeof pl);
    CUDA_CHECK(cudaMallocHost(&pl.h_in, bytes));
    CUDA_CHECK(cudaMallocHost(&pl.h_out, bytes));
    CUDA_CHECK(cudaMallocHost(&pl.h_bins, bin_bytes));
    CUDA_CHECK(cudaMalloc(&pl.d_in, bytes));
    CUDA_CHECK(cudaMalloc(&pl.d_out, bytes));
    CUDA_CHECK(cudaMalloc(&pl.d_bins, PIPE_STREAMS * LAB_NBINS * sizeof(uint32_t)));
    lab_fill(pl.h_in, PIPE_N, seed, 3);
    /* Poison: numbers not copied back, and scratch never cleared, are wrong. */
    memset(pl.h_out, 0xcd, bytes);
    memset(pl.h_bins, 0xcd, bin_bytes);
    CUDA_CHECK(cudaMemset(pl.d_bins, 0xff, PIPE_STREAMS * LAB_NBINS * sizeof(uint32_t)));
    for (a = 0; a < PIPE_STREAMS; a++)
        CUDA_CHECK(cudaStreamCreate(&pl.streams[a]));
    CUDA_CHECK(cudaDeviceSynchronize());

    NVTX_PUSH("part3_pipeline", NVTX_ORANGE);
    issue_pipeline(&pl);
    CUDA_CHECK(cudaDeviceSynchronize());
    NVTX_POP();
    printf("part 3: %u MiB in %d chunks over %d streams; each chunk's bins counted "
           "in its stream's scratch\n", PIPE_N / (1048576u / 4), PIPE_CHUNKS, PIPE_STREAMS);
    bad = verify_pipeline(&pl);

    /* The host waited for the whole pipeline: nothing queued uses these now. */
    void *d[] = { pl.d_in, pl.d_out, pl.d_bins }, *h[] = { pl.h_in, pl.h_out, pl.h_bins };

    lab_destroy_streams(pl.streams, PIPE_STREAMS);
    lab_free_all(d, 3, h, 3);
    return bad;
}

/* ---------------------------------------------------------------- main */

/*
 * Every kernel, loaded before anything runs (lab_load_kernels, common/lab.h):
 * loaded at its first launch instead, a kernel may wait for the kernels
 * already running, and part 1's short kernels would then wait for the long
 * one whatever their stream.
 */
static const void *const all_kernels[] = {
    (const void *)spin_legacy_kernel, (const void *)spin_nonblocking_kernel,
    (const void *)spin_blocking_kernel, (const void *)spin_per_thread_kernel,
    (const void *)worker_kernel, (const void *)count_kernel,
};

int main(int argc, char **argv)
{
    unsigned long long part = 0, seed = 1;      /* the defaults */
    const struct lab_option opts[] = {
        { "--part", &part, 1, 3, NULL },
        { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
    };
    cudaDeviceProp prop;
    size_t bad = 0;

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
    prop = lab_pick_device();
    printf("default_streams: on %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
    lab_load_kernels(all_kernels, sizeof all_kernels / sizeof *all_kernels);

    if (part == 0 || part == 1)
        part_kinds();
    if (part == 0 || part == 2)
        bad += part_threads((uint32_t)seed);
    if (part == 0 || part == 3)
        bad += part_pipeline((uint32_t)seed);

    return lab_verdict(bad, "numbers or bins differ (see the part above)",
                       "every result of the parts that were run");
}
