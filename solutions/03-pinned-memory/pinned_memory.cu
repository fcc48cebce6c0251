/*
 * pinned_memory.cu -- pageable vs pinned host memory: how fast a copy is, and
 * whether cudaMemcpyAsync really returns before the copy is done.
 *
 * Build:  make            Run:  ./pinned_memory [--max-mib N] [--seed S]
 * Check:  make check      Trace: make trace
 *
 * For three kinds of host memory -- pageable (malloc), pinned
 * (cudaMallocHost) and registered (malloc, then cudaHostRegister) -- it copies
 * 64 KiB, 256 KiB, ... up to 256 MiB to the GPU and back, times each size
 * with events and prints a table of GB/s. Then it measures how long one
 * cudaMemcpyAsync of the largest size takes to *return* to the host, from
 * each kind. Each kind's copies run inside an NVTX range named after it
 * ("pageable", "pinned", "registered"; "async_pageable", ...), so the trace
 * tells which copy came from which buffer. Last, the data that went to the
 * GPU and back is compared with what was sent.
 *
 * What to do, in the order the program reaches them:
 *   TODO(1) time the copies with the start/stop events, recorded on `stream`,
 *           the stream the copies run in.
 *   TODO(2) read t1 as soon as cudaMemcpyAsync returns; then wait, read t2.
 *   TODO(3) allocate pinned memory with cudaMallocHost.
 *   TODO(4) pin a malloc'd buffer with cudaHostRegister.
 * The program stops at the lab_todo() line of the first TODO not done: your
 * code replaces that line. Done when `make check` passes.
 */
#include "lab.h"
#include "scramble.h"

#define MIN_BYTES        (64ULL << 10)  /* the first size: 64 KiB */
#define REP_BYTES        (64ULL << 20)  /* each size copies about this much... */
#define MIN_REPS         3              /* ...but at least 3 times */
#define MAX_REPS         20             /* and at most 20 */
#define MAX_SIZES        12

enum { PAGEABLE, PINNED, REGISTERED, KINDS };
enum { H2D, D2H, DIRS };

/* NVTX range names: the checker finds each kind's copies by them. */
static const char *const series_name[KINDS] = { "pageable", "pinned", "registered" };
static const char *const async_name[KINDS] = {
    "async_pageable", "async_pinned", "async_registered"
};

/* ---------------------------------------------------------------- host memory */

/* Allocate `bytes` of host memory of one kind. Exits 1 when there is none. */
static void *alloc_host(int kind, size_t bytes)
{
    void *p = NULL;

    switch (kind) {
    case PAGEABLE:
        p = malloc(bytes);
        break;
    case PINNED:
        /* Page-locked from the start: the GPU's copy engine reads it directly. */
        /* TODO(3) */
        CUDA_CHECK(cudaMallocHost(&p, bytes));
        break;
    case REGISTERED:
        /* Ordinary memory, locked in place afterwards: for buffers that some
         * other code allocated (a framework, a file reader). */
        p = malloc(bytes);
        if (p == NULL)
            break;
        /* TODO(4) */
        CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
        break;
    }
    if (p == NULL) {
        fprintf(stderr, "out of host memory for %zu bytes\n", bytes);
        exit(LAB_EXIT_FAIL);
    }
    return p;
}

/* Give back memory from alloc_host, the way its kind requires. */
static void free_host(int kind, void *p)
{
    switch (kind) {
    case PAGEABLE:
        free(p);
        break;
    case PINNED:
        CUDA_CHECK(cudaFreeHost(p));
        break;
    case REGISTERED:
        CUDA_CHECK(cudaHostUnregister(p));      /* unlock, then free */
        free(p);
        break;
    }
}

/*
 * Compare the round trip word by word (0 scramble steps: back as sent), and
 * print its digest, "digest_<kind>" (the checker recomputes it). Return the
 * number of words that differ.
 */
static size_t verify(int kind, const uint32_t *h_sent, const uint32_t *h_back,
                     size_t bytes)
{
    size_t n = bytes / sizeof(uint32_t);
    uint64_t digest;
    struct lab_mismatch m = scramble_check(h_back, h_sent, n, 0, &digest);

    lab_digest_print(series_name[kind], digest);
    if (m.bad)
        printf("RESULT: WRONG: %s: %zu of %zu words differ after the round "
               "trip (first at %zu: got %08x, sent %08x)\n", series_name[kind],
               m.bad, n, m.first, m.got, m.want);
    return m.bad;
}

/* ---------------------------------------------------------------- timing */

/*
 * Copy `bytes` from src to dst `reps` times on `stream`, after one warm-up
 * copy that is not timed. Return the bandwidth in GB/s, from events.
 */
static double time_copies(void *dst, const void *src, size_t bytes, int reps,
                          enum cudaMemcpyKind dir, cudaStream_t stream)
{
    cudaEvent_t start, stop;
    float ms = 0;
    int r;

    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, dir, stream));      /* warm-up */

    /* TODO(1) */
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (r = 0; r < reps; r++)
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, dir, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    /* The copies from pinned memory are only queued when the loop ends. */
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms > 0 ? (double)bytes * reps / (ms * 1e6) : 0.0;
}

/*
 * One cudaMemcpyAsync host -> device of `bytes`, on its own. Set *return_ms
 * to the time the call took to return, *done_ms to the time until the copy
 * had finished (host clock, both from just before the call).
 */
static void time_return(void *d_buf, const void *h_src, size_t bytes,
                        cudaStream_t stream, double *return_ms, double *done_ms)
{
    double t0, t1 = 0, t2 = 0;

    t0 = lab_now_ms();
    CUDA_CHECK(cudaMemcpyAsync(d_buf, h_src, bytes, cudaMemcpyHostToDevice, stream));
    /* TODO(2) */
    t1 = lab_now_ms();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    t2 = lab_now_ms();
    *return_ms = t1 - t0;
    *done_ms = t2 - t0;
}

/* ---------------------------------------------------------------- main */

static const char usage_text[] =
    "usage: pinned_memory [--max-mib N] [--seed S]\n"
    "  --max-mib N   largest copy in MiB, 1 to 1024; sizes go 64 KiB, 256 KiB,\n"
    "                ... up to N (default 256)\n"
    "  --seed S      the data sent, 0 to 4294967295 (default 1)\n";

/* "64 KiB", "16 MiB": a size as a reader (and the checker) reads it. */
static void size_label(char *out, size_t len, size_t bytes)
{
    if (bytes >= (1u << 20))
        snprintf(out, len, "%6zu MiB", bytes >> 20);
    else
        snprintf(out, len, "%6zu KiB", bytes >> 10);
}

int main(int argc, char **argv)
{
    unsigned long long max_mib = 256, seed = 1;                 /* the defaults */
    const struct lab_option opts[] = {
        { "--max-mib", &max_mib, 1, 1024, NULL },
        { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
    };
    size_t max_bytes, sizes[MAX_SIZES];
    size_t i, s, nsizes = 0, words, bad = 0;
    int reps[MAX_SIZES], kind;
    double gbps[KINDS][DIRS][MAX_SIZES], return_ms[KINDS], done_ms[KINDS];
    uint32_t *h_src, *h_dst;
    void *d_buf = NULL;
    cudaStream_t stream;
    cudaDeviceProp prop;
    char label[32];

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
    prop = lab_pick_device();
    max_bytes = (size_t)(max_mib << 20);
    for (s = MIN_BYTES; s <= max_bytes && nsizes < MAX_SIZES; s *= 4) {
        sizes[nsizes] = s;
        reps[nsizes] = s >= REP_BYTES / MIN_REPS ? MIN_REPS
                     : (int)(REP_BYTES / s < MAX_REPS ? REP_BYTES / s : MAX_REPS);
        nsizes++;
    }
    max_bytes = sizes[nsizes - 1];      /* the largest size actually copied */
    words = max_bytes / sizeof(uint32_t);
    printf("pinned_memory: %zu sizes from 64 KiB to %zu MiB, on %s\n",
           nsizes, max_bytes >> 20, prop.name);

    CUDA_CHECK(cudaMalloc(&d_buf, max_bytes));
    CUDA_CHECK(cudaStreamCreate(&stream));
    NVTX_NAME_STREAM(stream, "copy stream");

    /* One kind at a time, so that at most two big host buffers exist. */
    for (kind = 0; kind < KINDS; kind++) {
        h_src = (uint32_t *)alloc_host(kind, max_bytes);
        h_dst = (uint32_t *)alloc_host(kind, max_bytes);
        lab_fill(h_src, words, (uint32_t)seed, (uint32_t)kind + 1);
        memset(h_dst, 0xcd, max_bytes);     /* poison: what never comes back is wrong */

        NVTX_PUSH(series_name[kind], NVTX_BLUE);
        for (i = 0; i < nsizes; i++)
            gbps[kind][H2D][i] = time_copies(d_buf, h_src, sizes[i], reps[i],
                                             cudaMemcpyHostToDevice, stream);
        /* d_buf now holds all of h_src; the last D2H brings all of it back */
        for (i = 0; i < nsizes; i++)
            gbps[kind][D2H][i] = time_copies(h_dst, d_buf, sizes[i], reps[i],
                                             cudaMemcpyDeviceToHost, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        NVTX_POP();

        NVTX_PUSH(async_name[kind], NVTX_ORANGE);
        time_return(d_buf, h_src, max_bytes, stream, &return_ms[kind], &done_ms[kind]);
        NVTX_POP();

        bad += verify(kind, h_src, h_dst, max_bytes);
        free_host(kind, h_src);
        free_host(kind, h_dst);
    }

    printf("\nbandwidth in GB/s (events around `reps` copies, after one warm-up copy)\n");
    printf("      size   reps   pageable  H2D    D2H     pinned  H2D    D2H"
           "   registered H2D    D2H\n");
    for (i = 0; i < nsizes; i++) {
        size_label(label, sizeof label, sizes[i]);
        printf("%s %6d %15.2f %6.2f %15.2f %6.2f %15.2f %6.2f\n", label, reps[i],
               gbps[PAGEABLE][H2D][i], gbps[PAGEABLE][D2H][i],
               gbps[PINNED][H2D][i], gbps[PINNED][D2H][i],
               gbps[REGISTERED][H2D][i], gbps[REGISTERED][D2H][i]);
    }
    printf("\nat %zu MiB:\n", max_bytes >> 20);
    i = nsizes - 1;
    lab_figure("pageable_h2d_gbps", gbps[PAGEABLE][H2D][i], "GB/s, malloc");
    lab_figure("pageable_d2h_gbps", gbps[PAGEABLE][D2H][i], "GB/s, malloc");
    lab_figure("pinned_h2d_gbps", gbps[PINNED][H2D][i], "GB/s, cudaMallocHost");
    lab_figure("pinned_d2h_gbps", gbps[PINNED][D2H][i], "GB/s, cudaMallocHost");
    lab_figure("registered_h2d_gbps", gbps[REGISTERED][H2D][i], "GB/s, cudaHostRegister");
    lab_figure("registered_d2h_gbps", gbps[REGISTERED][D2H][i], "GB/s, cudaHostRegister");
    lab_figure("pageable_return_ms", return_ms[PAGEABLE], "cudaMemcpyAsync H2D returned after");
    lab_figure("pageable_done_ms", done_ms[PAGEABLE], "...and the copy was done after");
    lab_figure("pinned_return_ms", return_ms[PINNED], "cudaMemcpyAsync H2D returned after");
    lab_figure("pinned_done_ms", done_ms[PINNED], "...and the copy was done after");
    lab_figure("registered_return_ms", return_ms[REGISTERED], "cudaMemcpyAsync H2D returned after");
    lab_figure("registered_done_ms", done_ms[REGISTERED], "...and the copy was done after");

    if (!bad)
        printf("RESULT: verified the round trip of %zu MiB from pageable, "
               "pinned and registered memory\n", max_bytes >> 20);

    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(d_buf));
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
