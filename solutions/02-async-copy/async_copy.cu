/*
 * async_copy.cu -- hand the GPU a queue of work on a stream of our own, walk
 * away, do something useful on the CPU, and only then wait for the results.
 *
 * Build:  make            Run:  ./async_copy [--n ELEMENTS] [--steps K]
 * Check:  make check      Trace: make trace
 *
 * The host queues three things on a stream it created: copy the input in
 * (cudaMemcpyAsync), a kernel that scrambles every number K times, copy the
 * result back (cudaMemcpyAsync). Queueing takes microseconds; the GPU needs
 * milliseconds. Meanwhile the host does independent CPU work (the NVTX range
 * "cpu_work"), then waits for the stream (the range "wait") and checks every
 * element. Wall time ends up near max(CPU, GPU) instead of CPU + GPU.
 * The host buffers are pinned (cudaMallocHost) for you: lab 03 shows why an
 * async copy from ordinary malloc memory is not async at all.
 *
 * What to do:
 *   TODO(1) create the stream with cudaStreamCreate.
 *   TODO(2) queue the H2D copy h_in -> d_in on the stream with cudaMemcpyAsync.
 *   TODO(3) launch the kernel on the stream (the 4th launch parameter).
 *   TODO(4) queue the D2H copy d_out -> h_out on the stream.
 *   TODO(5) wait for the stream before the results are read.
 * Done when `make check` passes.
 */
#include "lab.h"

#define THREADS        256
#define DEFAULT_N      16777219ULL   /* 2^24 + 3: not a multiple of THREADS */
#define DEFAULT_STEPS  65536U        /* enough for ~20 ms of kernel on an H200 */
#define CPU_SHARE      0.5           /* CPU work = this share of the GPU's work */
#define LCG_A          1664525U      /* y -> A*y + C (mod 2^32) */
#define LCG_C          1013904223U

/* ---------------------------------------------------------------- CPU side */

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

/*
 * Compare every element with the reference. Return the number that differ.
 * Each element is read once: read too early, h_out may change under our feet.
 */
static size_t verify(const uint32_t *h_in, const uint32_t *h_out, size_t n,
                     uint32_t steps)
{
    uint32_t a, c, got, first_got = 0;
    size_t i, bad = 0, first = 0;

    affine_power(steps, &a, &c);
    for (i = 0; i < n; i++) {
        got = h_out[i];
        if (got != a * h_in[i] + c) {
            if (bad++ == 0) {
                first = i;
                first_got = got;
            }
        }
    }
    if (bad)
        printf("RESULT: WRONG: %zu of %zu elements differ (first at %zu: "
               "got %u, expected %u)\n", bad, n, first, first_got,
               a * h_in[first] + c);
    else
        printf("RESULT: verified all %zu elements\n", n);
    return bad;
}

/*
 * The independent host work: hash numbers for `ms` milliseconds. It stands
 * in for whatever else a program has to do (decode the next batch, log, talk
 * to the network) and touches none of the GPU's buffers. Returns the hash,
 * so that the compiler cannot drop the work.
 */
static uint32_t cpu_work(double ms)
{
    double end = lab_now_ms() + ms;
    uint32_t h = 1;
    int i;

    do {
        for (i = 0; i < 4096; i++)
            h = lab_hash32(h + (uint32_t)i);
    } while (lab_now_ms() < end);
    return h;
}

/* ---------------------------------------------------------------- kernel */

/* out[i] = K steps of y -> A*y + C from y = in[i]; one thread per element. */
__global__ void scramble_kernel(uint32_t *out, const uint32_t *in, size_t n,
                                uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {                    /* the last block may hang over the end */
        uint32_t y = in[i];

        for (uint32_t k = 0; k < steps; k++)
            y = y * LCG_A + LCG_C;
        out[i] = y;
    }
}

/* ---------------------------------------------------------------- launchers */

/* Queue the kernel on `stream`. Returns at once. */
static void scramble(uint32_t *d_out, const uint32_t *d_in, size_t n,
                     uint32_t steps, cudaStream_t stream)
{
    unsigned int blocks = (unsigned int)((n + THREADS - 1) / THREADS);

    /* TODO(3) */
    scramble_kernel<<<blocks, THREADS, 0, stream>>>(d_out, d_in, n, steps);
    CUDA_CHECK_LAUNCH();
}

/*
 * Queue the whole job on `stream`: H2D, kernel, D2H. Nothing here waits for
 * the GPU: when this returns, the work may not even have started. The
 * stream keeps the three in order, so the kernel never reads d_in early.
 */
static void issue_work(uint32_t *h_out, const uint32_t *h_in, uint32_t *d_out,
                       uint32_t *d_in, size_t n, uint32_t steps,
                       cudaStream_t stream)
{
    /* TODO(2) */
    CUDA_CHECK(cudaMemcpyAsync(d_in, h_in, n * sizeof(uint32_t),
                               cudaMemcpyHostToDevice, stream));
    scramble(d_out, d_in, n, steps, stream);
    /* TODO(4) */
    CUDA_CHECK(cudaMemcpyAsync(h_out, d_out, n * sizeof(uint32_t),
                               cudaMemcpyDeviceToHost, stream));
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *to)
{
    fprintf(to, "usage: async_copy [--n ELEMENTS] [--steps K]\n"
                "  --n ELEMENTS  how many 32-bit numbers (default %llu)\n"
                "  --steps K     scramble steps per number (default %u)\n",
            DEFAULT_N, DEFAULT_STEPS);
}

/* Read the options into *n and *steps. Exits 2 with usage on a bad one. */
static void parse_args(int argc, char **argv, size_t *n, uint32_t *steps)
{
    unsigned long long v;
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(LAB_EXIT_OK);
        } else if (strcmp(argv[i], "--n") == 0) {
            if (lab_parse_size("--n", i + 1 < argc ? argv[++i] : NULL, 1,
                               1ULL << 30, &v) != 0)
                goto bad;
            *n = (size_t)v;
        } else if (strcmp(argv[i], "--steps") == 0) {
            if (lab_parse_size("--steps", i + 1 < argc ? argv[++i] : NULL, 1,
                               1U << 24, &v) != 0)
                goto bad;
            *steps = (uint32_t)v;
        } else {
            fprintf(stderr, "unknown option: %s\n", argv[i]);
            goto bad;
        }
    }
    return;
bad:
    usage(stderr);
    exit(LAB_EXIT_USAGE);
}

int main(int argc, char **argv)
{
    size_t n = DEFAULT_N, bytes, i, bad;
    uint32_t steps = DEFAULT_STEPS, cpu_hash;
    uint32_t *h_in = NULL, *h_out = NULL, *d_in = NULL, *d_out = NULL;
    cudaStream_t stream = NULL;
    cudaEvent_t start, stop;
    cudaDeviceProp prop;
    float rehearsal_ms = 0, gpu_ms = 0;
    double cpu_target_ms, t0, t1, t2, t3;
    int r;

    parse_args(argc, argv, &n, &steps);
    prop = lab_pick_device();
    bytes = n * sizeof(uint32_t);
    printf("async_copy: %zu elements (%.1f MiB), %u steps each, on %s\n",
           n, bytes / 1048576.0, steps, prop.name);

    /* Pinned host memory: the GPU can copy from it while the host runs on.
     * From malloc memory, cudaMemcpyAsync would block (lab 03). */
    CUDA_CHECK(cudaMallocHost(&h_in, bytes));
    CUDA_CHECK(cudaMallocHost(&h_out, bytes));
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    for (i = 0; i < n; i++)
        h_in[i] = lab_hash32((uint32_t)i + 1);      /* never all zeros */

    /* TODO(1) */
    CUDA_CHECK(cudaStreamCreate(&stream));
    NVTX_NAME_STREAM(stream, "work stream");
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    /*
     * Rehearsal, twice, waiting each time: the first run also loads the
     * kernel and wakes the GPU up, the second tells how long the GPU's part
     * takes. The CPU work below is sized from it, so that the lesson shows
     * on any GPU and CPU.
     */
    for (r = 0; r < 2; r++) {
        CUDA_CHECK(cudaEventRecord(start, stream));
        issue_work(h_out, h_in, d_out, d_in, n, steps, stream);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));  /* here we wait on purpose */
        CUDA_CHECK(cudaEventElapsedTime(&rehearsal_ms, start, stop));
    }
    cpu_target_ms = CPU_SHARE * rehearsal_ms;

    /* Poison both outputs: an element not computed and copied back by the
     * measured run below, or read too early, is caught. */
    memset(h_out, 0xcd, bytes);
    CUDA_CHECK(cudaMemsetAsync(d_out, 0xab, bytes, stream));

    /* ---- the measured run: issue, work on the CPU, then wait */
    t0 = lab_now_ms();
    NVTX_PUSH("issue", NVTX_BLUE);
    CUDA_CHECK(cudaEventRecord(start, stream));
    issue_work(h_out, h_in, d_out, d_in, n, steps, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    NVTX_POP();
    t1 = lab_now_ms();

    NVTX_PUSH("cpu_work", NVTX_GREEN);
    cpu_hash = cpu_work(cpu_target_ms);
    NVTX_POP();
    t2 = lab_now_ms();

    NVTX_PUSH("wait", NVTX_RED);
    /* TODO(5) */
    CUDA_CHECK(cudaStreamSynchronize(stream));
    NVTX_POP();
    t3 = lab_now_ms();

    bad = verify(h_in, h_out, n, steps);            /* only now is h_out ready */
    CUDA_CHECK(cudaEventElapsedTime(&gpu_ms, start, stop));

    printf("cpu work: hashed for %.1f ms (result %08x)\n", cpu_target_ms, cpu_hash);
    lab_figure("rehearsal_ms", rehearsal_ms, "GPU work alone, host waiting (events)");
    lab_figure("issue_ms", t1 - t0, "host: queue H2D, kernel, D2H");
    lab_figure("cpu_ms", t2 - t1, "host: independent CPU work");
    lab_figure("wait_ms", t3 - t2, "host: wait for the stream");
    lab_figure("wall_ms", t3 - t0, "host: issue + CPU work + wait");
    lab_figure("gpu_ms", gpu_ms, "GPU: H2D + kernel + D2H (events)");
    lab_figure("serial_ms", (t2 - t1) + gpu_ms, "CPU work + GPU work, one after the other");
    lab_figure("wall_vs_serial", (t3 - t0) / ((t2 - t1) + gpu_ms),
               "1.0: no overlap; 0.5: perfect overlap of equal parts");

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFreeHost(h_in));
    CUDA_CHECK(cudaFreeHost(h_out));
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
