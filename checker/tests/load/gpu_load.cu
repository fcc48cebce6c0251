/*
 * gpu_load.cu -- another tenant on the GPU: keeps copies and kernels going
 * until it is told to stop, so that the kit can prove its checks give the
 * same verdicts on a GPU that other programs are using.
 *
 * Build:  make -C checker/tests/load        Run:  checker/tests/load/gpu_load [--seconds S]
 *
 * Each of --streams streams loops: a pinned H2D copy of --mib MiB, a kernel
 * that works on it for a few milliseconds on every SM, a D2H copy back. Two
 * streams keep both copy directions and the SMs busy at once, as a class
 * running the labs does. It stops after --seconds (0: on SIGINT or SIGTERM)
 * and prints how many rounds it ran. Exit 0; 2 bad option; 77 no device.
 */
#include <signal.h>
#include "lab.h"

#define THREADS     256
#define MAX_STREAMS 8

static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
    (void)sig;
    stop_now = 1;
}

/* K multiply-adds per element: GPU time without more memory traffic. */
__global__ void busy_kernel(uint32_t *buf, size_t n, uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        uint32_t y = buf[i];

#pragma unroll 1
        for (uint32_t k = 0; k < steps; k++)
            y = y * 1664525U + 1013904223U;
        buf[i] = y;
    }
}

static void usage(FILE *to)
{
    fprintf(to, "usage: gpu_load [--seconds S] [--mib M] [--streams N] [--steps K]\n"
                "  --seconds S  stop after S seconds (default 0: on SIGINT/SIGTERM)\n"
                "  --mib M      MiB copied each way per round and stream (default 64)\n"
                "  --streams N  streams working at once, 1..%d (default 2)\n"
                "  --steps K    kernel work per element (default 2048)\n", MAX_STREAMS);
}

/* Read option i's value into *v within [lo, hi], or exit 2 with usage. */
static void option(int argc, char **argv, int *i, unsigned long long lo,
                   unsigned long long hi, unsigned long long *v)
{
    const char *opt = argv[*i];

    *i += 1;
    if (lab_parse_size(opt, *i < argc ? argv[*i] : NULL, lo, hi, v) != 0) {
        usage(stderr);
        exit(LAB_EXIT_USAGE);
    }
}

int main(int argc, char **argv)
{
    unsigned long long seconds = 0, mib = 64, nstreams = 2, steps = 2048, v;
    cudaStream_t streams[MAX_STREAMS];
    uint32_t *h_buf[MAX_STREAMS], *d_buf[MAX_STREAMS];
    unsigned long rounds = 0;
    size_t bytes, n;
    double t0;
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0) {
            option(argc, argv, &i, 0, 86400, &seconds);
        } else if (strcmp(argv[i], "--mib") == 0) {
            option(argc, argv, &i, 1, 4096, &mib);
        } else if (strcmp(argv[i], "--streams") == 0) {
            option(argc, argv, &i, 1, MAX_STREAMS, &nstreams);
        } else if (strcmp(argv[i], "--steps") == 0) {
            option(argc, argv, &i, 1, 1U << 20, &v);
            steps = v;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return LAB_EXIT_OK;
        } else {
            fprintf(stderr, "gpu_load: unknown option %s\n", argv[i]);
            usage(stderr);
            return LAB_EXIT_USAGE;
        }
    }
    lab_pick_device();
    bytes = (size_t)mib << 20;
    n = bytes / sizeof(uint32_t);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    for (i = 0; i < (int)nstreams; i++) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
        CUDA_CHECK(cudaMallocHost(&h_buf[i], bytes));
        CUDA_CHECK(cudaMalloc(&d_buf[i], bytes));
        memset(h_buf[i], i + 1, bytes);
    }
    t0 = lab_now_ms();
    while (!stop_now && (seconds == 0 || lab_now_ms() - t0 < seconds * 1e3)) {
        for (i = 0; i < (int)nstreams; i++) {
            CUDA_CHECK(cudaMemcpyAsync(d_buf[i], h_buf[i], bytes,
                                       cudaMemcpyHostToDevice, streams[i]));
            busy_kernel<<<(unsigned int)((n + THREADS - 1) / THREADS), THREADS, 0,
                          streams[i]>>>(d_buf[i], n, (uint32_t)steps);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaMemcpyAsync(h_buf[i], d_buf[i], bytes,
                                       cudaMemcpyDeviceToHost, streams[i]));
        }
        /* a round at a time: a stop request is answered within one round */
        CUDA_CHECK(cudaDeviceSynchronize());
        rounds++;
    }
    printf("gpu_load: %lu rounds of %llu MiB each way on %llu streams in %.1f s\n",
           rounds, mib, nstreams, (lab_now_ms() - t0) / 1e3);
    for (i = 0; i < (int)nstreams; i++) {
        CUDA_CHECK(cudaStreamDestroy(streams[i]));
        CUDA_CHECK(cudaFreeHost(h_buf[i]));
        CUDA_CHECK(cudaFree(d_buf[i]));
    }
    return LAB_EXIT_OK;
}
