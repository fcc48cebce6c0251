/*
 * sync_copy.cu -- the synchronous round trip: cudaMalloc, cudaMemcpy there,
 * a kernel, cudaMemcpy back, and a check of every element on the CPU.
 *
 * Build:  make            Run:  ./sync_copy [--n ELEMENTS] [--steps K]
 * Check:  make check      Trace: make trace
 *
 * The host fills n numbers, copies them to the GPU, a kernel scrambles each
 * one K times, the result comes back and the CPU checks every element. On the
 * way it times each step, and it shows that a kernel launch hands control back
 * to the host long before the kernel has finished.
 *
 * What to do:
 *   TODO(1) allocate d_in and d_out on the device with cudaMalloc.
 *   TODO(2) copy h_in to d_in with cudaMemcpy.
 *   TODO(3) launch enough blocks to cover all n elements.
 *   TODO(4) time the kernel with the start/stop events, as the copies are.
 *   TODO(5) copy d_out back to h_out with cudaMemcpy.
 *   TODO(6) make launch_sync_ms include the kernel's work, not just its launch.
 * Done when `make check` passes.
 */
#include "lab.h"

#define THREADS        256
#define DEFAULT_N      16777219ULL   /* 2^24 + 3: not a multiple of THREADS */
#define DEFAULT_STEPS  1024U
#define LCG_A          1664525U      /* y -> A*y + C (mod 2^32) */
#define LCG_C          1013904223U

/* ---------------------------------------------------------------- CPU reference */

/*
 * Set (*a, *c) so that y -> a*y + c equals K steps of y -> A*y + C. Composing
 * an affine map with itself by squaring makes the reference O(n), not O(n*K).
 */
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

/* Compare every element with the reference. Return the number that differ. */
static size_t verify(const uint32_t *h_in, const uint32_t *h_out, size_t n,
                     uint32_t steps)
{
    uint32_t a, c;
    size_t i, bad = 0, first = 0;

    affine_power(steps, &a, &c);
    for (i = 0; i < n; i++) {
        if (h_out[i] != a * h_in[i] + c) {
            if (bad++ == 0)
                first = i;
        }
    }
    if (bad)
        printf("RESULT: WRONG: %zu of %zu elements differ (first at %zu: "
               "got %u, expected %u)\n", bad, n, first, h_out[first],
               a * h_in[first] + c);
    else
        printf("RESULT: verified all %zu elements\n", n);
    return bad;
}

/* ---------------------------------------------------------------- kernel */

/* out[i] = K steps of y -> A*y + C from y = in[i]; one thread per element. */
__global__ void scramble_kernel(uint32_t *out, const uint32_t *in, size_t n,
                                uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {                    /* the last block may hang over the end */
        uint32_t y = in[i];

        /* Unrolled, the compiler would merge steps (two steps are y*A*A +
         * A*C + C): keep one multiply-add per step, so --steps means work. */
#pragma unroll 1
        for (uint32_t k = 0; k < steps; k++)
            y = y * LCG_A + LCG_C;
        out[i] = y;
    }
}

/* ---------------------------------------------------------------- launcher */

/* Queue the kernel on the default stream. Returns at once: it does not wait. */
static void scramble(uint32_t *d_out, const uint32_t *d_in, size_t n,
                     uint32_t steps)
{
    unsigned int blocks = 0;

    /* TODO(3) */
    blocks = (unsigned int)((n + THREADS - 1) / THREADS);
    scramble_kernel<<<blocks, THREADS>>>(d_out, d_in, n, steps);
    CUDA_CHECK_LAUNCH();
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *to)
{
    fprintf(to, "usage: sync_copy [--n ELEMENTS] [--steps K]\n"
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
                               1U << 20, &v) != 0)
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
    size_t n = DEFAULT_N, bytes;
    uint32_t steps = DEFAULT_STEPS;
    uint32_t *h_in, *h_out, *d_in = NULL, *d_out = NULL;
    cudaEvent_t start, stop;
    cudaDeviceProp prop;
    float h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;
    double t0, t1, t2;
    size_t i, bad;

    parse_args(argc, argv, &n, &steps);
    prop = lab_pick_device();
    bytes = n * sizeof(uint32_t);
    printf("sync_copy: %zu elements (%.1f MiB), %u steps each, on %s\n",
           n, bytes / 1048576.0, steps, prop.name);

    /* Plain malloc: pageable memory, as most programs have. Lab 03 pins it. */
    h_in = (uint32_t *)malloc(bytes);
    h_out = (uint32_t *)malloc(bytes);
    if (h_in == NULL || h_out == NULL) {
        fprintf(stderr, "out of host memory for %zu bytes\n", 2 * bytes);
        return LAB_EXIT_FAIL;
    }
    for (i = 0; i < n; i++)
        h_in[i] = lab_hash32((uint32_t)i + 1);      /* never all zeros */
    memset(h_out, 0xcd, bytes);     /* poison: what is not copied back is wrong */

    /* TODO(1) */
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaMemset(d_out, 0xab, bytes)); /* poison: what the kernel skips is wrong */
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    /* Events are stamped by the GPU as it reaches them in the stream. */
    CUDA_CHECK(cudaEventRecord(start, 0));
    /* TODO(2) */
    CUDA_CHECK(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&h2d_ms, start, stop));

    /* Warm-up: the first launch of a kernel also loads its code onto the GPU. */
    scramble(d_out, d_in, n, steps);
    CUDA_CHECK(cudaDeviceSynchronize());

    /* TODO(4) */
    CUDA_CHECK(cudaEventRecord(start, 0));
    scramble(d_out, d_in, n, steps);
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&kernel_ms, start, stop));

    /* A launch only queues the kernel; the host runs on at once. */
    t0 = lab_now_ms();
    scramble(d_out, d_in, n, steps);
    t1 = lab_now_ms();
    /* TODO(6) */
    CUDA_CHECK(cudaDeviceSynchronize());
    t2 = lab_now_ms();

    CUDA_CHECK(cudaEventRecord(start, 0));
    /* TODO(5) */
    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&d2h_ms, start, stop));

    lab_figure("h2d_ms", h2d_ms, "cudaMemcpy host -> device");
    lab_figure("h2d_gbps", bytes / (h2d_ms * 1e6), "GB/s");
    lab_figure("kernel_ms", kernel_ms, "kernel, timed with events");
    lab_figure("kernel_gsteps", (double)n * steps / (kernel_ms * 1e6),
               "billion scramble steps per second");
    lab_figure("d2h_ms", d2h_ms, "cudaMemcpy device -> host");
    lab_figure("d2h_gbps", bytes / (d2h_ms * 1e6), "GB/s");
    lab_figure("launch_ms", t1 - t0, "host time of the launch alone");
    lab_figure("launch_sync_ms", t2 - t0, "host time of launch + synchronize");

    bad = verify(h_in, h_out, n, steps);

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
