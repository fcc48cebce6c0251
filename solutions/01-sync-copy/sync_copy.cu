/*
 * sync_copy.cu -- the synchronous round trip: cudaMalloc, cudaMemcpy there,
 * a kernel, cudaMemcpy back, and a check of every element on the CPU.
 *
 * Build:  make            Run:  ./sync_copy [--n ELEMENTS] [--steps K] [--seed S]
 * Check:  make check      Trace: make trace
 *
 * The host fills n numbers, copies them to the GPU, a kernel scrambles each
 * one K times (scramble_kernel, in common/scramble.h), the result comes back
 * and the CPU checks every element. On the way it times each step, and it
 * shows that a kernel launch hands control back to the host long before the
 * kernel has finished.
 *
 * What to do, in the order the program reaches them:
 *   TODO(1) allocate d_in and d_out on the device with cudaMalloc.
 *   TODO(2) copy h_in to d_in with cudaMemcpy.
 *   TODO(3) launch enough blocks to cover all n elements.
 *   TODO(4) time the kernel with the start/stop events, as the copies are.
 *   TODO(5) make launch_sync_ms include the kernel's work, not just its launch.
 *   TODO(6) copy d_out back to h_out with cudaMemcpy.
 * The program stops at the lab_todo() line of the first TODO not done: your
 * code replaces that line. Done when `make check` passes.
 */
#include "lab.h"
#include "scramble.h"

#define THREADS 256

static const char usage_text[] =
    "usage: sync_copy [--n ELEMENTS] [--steps K] [--seed S]\n"
    "  --n ELEMENTS  how many 32-bit numbers (default 16777219, 2^24 + 3:\n"
    "                not a multiple of the block size)\n"
    "  --steps K     scramble steps per number, 1 to 1048576 (default 1024)\n"
    "  --seed S      the input data, 0 to 4294967295 (default 1)\n";

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

int main(int argc, char **argv)
{
    unsigned long long n = 16777219, steps = 1024, seed = 1;   /* the defaults */
    size_t bytes, bad;
    uint32_t *h_in, *h_out, *d_in = NULL, *d_out = NULL;
    cudaEvent_t start, stop;
    cudaDeviceProp prop;
    float h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;
    double t0, t1, t2;

    lab_parse_n_steps_seed(argc, argv, usage_text, &n, &steps, 1ULL << 20, &seed);
    prop = lab_pick_device();
    bytes = n * sizeof(uint32_t);
    printf("sync_copy: %llu elements (%.1f MiB), %llu steps each, on %s\n",
           n, bytes / 1048576.0, steps, prop.name);

    /* Plain malloc: pageable memory, as most programs have. Lab 03 pins it. */
    h_in = (uint32_t *)malloc(bytes);
    h_out = (uint32_t *)malloc(bytes);
    if (h_in == NULL || h_out == NULL) {
        fprintf(stderr, "out of host memory for %zu bytes\n", 2 * bytes);
        return LAB_EXIT_FAIL;
    }
    lab_fill(h_in, n, (uint32_t)seed, 0);
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
    /* TODO(5) */
    CUDA_CHECK(cudaDeviceSynchronize());
    t2 = lab_now_ms();

    CUDA_CHECK(cudaEventRecord(start, 0));
    /* TODO(6) */
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

    /* Every element against the CPU's reference (common/scramble.h). */
    bad = scramble_verify(h_out, h_in, n, steps);

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
