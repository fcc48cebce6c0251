/*
 * lifetime.cu -- the memory handed to asynchronous work must outlive the
 * work: four scenarios, each with one lifetime bug to find and fix.
 *
 * Build:  make            Run:  ./lifetime [--scenario N] [--chunks C] [--n ELEMENTS]
 *                                           [--steps K] [--seed S]
 * Check:  make check      Trace: make trace
 * Stress: ../../checker/stress/stress -- ./lifetime   (what make check runs)
 *
 * Each scenario queues copies and kernels on its own streams, waits, checks
 * every element on the CPU and prints one line: "scenario N (...): verified"
 * or "... WRONG ...". A queued copy or kernel holds *pointers*, not copies of
 * the data: until the stream gets to it, the memory it points to must stay
 * alive and untouched. Run plainly, most of these bugs hide (the GPU is
 * fast); the stress tool makes the GPU as late as it is allowed to be, and
 * then every one of them shows.
 *
 * What to do -- find the bug at each TODO and fix it, without making the
 * whole device wait (no cudaDeviceSynchronize):
 *   TODO(1) the staging buffer is refilled while its copy is still in flight.
 *   TODO(2) the results are read before the copy that brings them is done.
 *   TODO(3) a buffer on a helper's stack is handed to an async copy.
 *   TODO(4) scratch memory goes back to the pool, in one stream, while a
 *           kernel in another stream still reads it.
 * To make one stream wait for another's event: cudaStreamWaitEvent(stream,
 * event, flags), with flags 0, as scenario 1 does. Done when `make check` passes.
 */
#include "lab.h"
#include "scramble.h"

#define THREADS        256
#define KEY_N          1024          /* words in a scenario 3 key */
#define HOST_POISON    0xcd          /* bytes of a host buffer nothing has filled */

static const char usage_text[] =
    "usage: lifetime [--scenario N] [--chunks C] [--n ELEMENTS] [--steps K] [--seed S]\n"
    "  --scenario N  run scenario N only, 1 to 4 (default: all)\n"
    "  --chunks C    chunks in scenarios 1, 3 and 4, 2 to 64 (default 8)\n"
    "  --n ELEMENTS  32-bit numbers per chunk, 1024 to 67108864 (default 1048576)\n"
    "  --steps K     scramble steps per number, 1 to 1048576 (default 32768:\n"
    "                a chunk's kernel outlasts its copy and refill)\n"
    "  --seed S      the input data, 0 to 4294967295 (default 1)\n";

struct params {
    size_t n;           /* elements per chunk */
    unsigned chunks;    /* chunks (scenarios 1, 3, 4) */
    uint32_t steps;     /* scramble steps per element */
    uint32_t seed;      /* every input comes from it */
};

/* ---------------------------------------------------------------- CPU check */

/* The scenario 3 key of batch `batch`: input 16 + batch of the seed. */
static void make_key(uint32_t *h_key, uint32_t seed, unsigned batch)
{
    lab_fill(h_key, KEY_N, seed, 16 + batch);
}

/*
 * Print the scenario's digest, "digest_scenarioN" (the checker recomputes
 * it), and its verdict line. Return 1 if it verified.
 */
static int verdict(int sc, const char *title, const struct lab_result *r, size_t n)
{
    const struct lab_mismatch *m = &r->m;
    char name[16];

    snprintf(name, sizeof name, "scenario%d", sc);
    if (lab_result_end(r, name) == 0) {
        printf("scenario %d (%s): verified all %zu elements\n", sc, title, n);
        return 1;
    }
    printf("scenario %d (%s): WRONG: %zu of %zu elements differ (first at %zu: "
           "got 0x%08x, expected 0x%08x%s)\n", sc, title, m->bad, n, m->first,
           m->got, m->want, m->got == 0xcdcdcdcdU ? "; 0xcdcdcdcd: never copied back" : "");
    return 0;
}

/* malloc or exit 1. */
static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);

    if (p == NULL) {
        fprintf(stderr, "out of host memory for %zu bytes\n", bytes);
        exit(LAB_EXIT_FAIL);
    }
    return p;
}

/* ---------------------------------------------------------------- kernels */

/* scramble_kernel (common/scramble.h), and the same from in[i] xor key[i % KEY_N]. */
__global__ void keyed_kernel(uint32_t *out, const uint32_t *in, const uint32_t *key,
                             size_t n, uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        out[i] = lcg_steps(in[i] ^ key[i % KEY_N], steps);
}

/* ---------------------------------------------------------------- launchers */

static unsigned int blocks_for(size_t n)
{
    return (unsigned int)((n + THREADS - 1) / THREADS);
}

/* Queue scramble_kernel on stream s. Returns at once. */
static void scramble(uint32_t *d_out, const uint32_t *d_in, size_t n, uint32_t steps,
                     cudaStream_t s)
{
    scramble_kernel<<<blocks_for(n), THREADS, 0, s>>>(d_out, d_in, n, steps);
    CUDA_CHECK_LAUNCH();
}

/* Queue keyed_kernel on stream s. Returns at once. */
static void keyed(uint32_t *d_out, const uint32_t *d_in, const uint32_t *d_key, size_t n,
                  uint32_t steps, cudaStream_t s)
{
    keyed_kernel<<<blocks_for(n), THREADS, 0, s>>>(d_out, d_in, d_key, n, steps);
    CUDA_CHECK_LAUNCH();
}

/* ---------------------------------------------------------------- scenario 1 */

/*
 * Stream chunks of h_src (pageable, as data read from a file would be)
 * through two pinned staging buffers to the GPU, and scramble each chunk
 * while the next one travels. Return 1 if the result verified.
 */
static int scenario_staging(const struct params *p)
{
    size_t n = p->n, total = n * p->chunks, chunk_bytes = n * sizeof(uint32_t);
    uint32_t *h_src, *h_out, *h_stage[2], *d_in, *d_out;
    cudaStream_t s_copy, s_comp;
    cudaEvent_t ev_staged[2];
    struct lab_result r;
    unsigned k;
    int b;

    h_src = (uint32_t *)xmalloc(total * sizeof(uint32_t));
    lab_fill(h_src, total, p->seed, 1);
    CUDA_CHECK(cudaMallocHost(&h_out, total * sizeof(uint32_t)));
    memset(h_out, HOST_POISON, total * sizeof(uint32_t));
    CUDA_CHECK(cudaMalloc(&d_in, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&d_out, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaStreamCreate(&s_copy));
    CUDA_CHECK(cudaStreamCreate(&s_comp));
    NVTX_NAME_STREAM(s_copy, "scenario 1 copy");
    NVTX_NAME_STREAM(s_comp, "scenario 1 compute");
    for (b = 0; b < 2; b++) {
        CUDA_CHECK(cudaMallocHost(&h_stage[b], chunk_bytes));
        /* ev_staged[b]: the last copy out of h_stage[b] is done */
        CUDA_CHECK(cudaEventCreateWithFlags(&ev_staged[b], cudaEventDisableTiming));
    }

    NVTX_PUSH("scenario 1", NVTX_BLUE);
    for (k = 0; k < p->chunks; k++) {
        b = k % 2;
        /* TODO(1) */
        /* (is h_stage[b] free to be refilled here?) */
        memcpy(h_stage[b], h_src + k * n, chunk_bytes);
        CUDA_CHECK(cudaMemcpyAsync(d_in + k * n, h_stage[b], chunk_bytes,
                                   cudaMemcpyHostToDevice, s_copy));
        CUDA_CHECK(cudaEventRecord(ev_staged[b], s_copy));
        CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_staged[b], 0)); /* the chunk is there */
        scramble(d_out + k * n, d_in + k * n, n, p->steps, s_comp);
    }
    CUDA_CHECK(cudaMemcpyAsync(h_out, d_out, total * sizeof(uint32_t),
                               cudaMemcpyDeviceToHost, s_comp));
    CUDA_CHECK(cudaStreamSynchronize(s_comp));
    NVTX_POP();

    lab_result_begin(&r);
    lab_result_add(&r, h_out, h_src, NULL, 1, total, p->steps, 0);
    for (b = 0; b < 2; b++) {
        CUDA_CHECK(cudaEventDestroy(ev_staged[b]));
        CUDA_CHECK(cudaFreeHost(h_stage[b]));
    }
    const cudaStream_t streams[] = { s_copy, s_comp };

    lab_destroy_streams(streams, 2);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFreeHost(h_out));
    free(h_src);
    return verdict(1, "staging buffer", &r, total);
}

/* ---------------------------------------------------------------- scenario 2 */

/*
 * Two halves, one stream each: copy in, scramble, copy back into pinned
 * h_out. The host checks each half as soon as that half is home, while the
 * other may still be running. Return 1 if the result verified.
 */
static int scenario_results(const struct params *p)
{
    size_t n = p->n, half_bytes = n * sizeof(uint32_t);
    uint32_t *h_in, *h_out, *d_in, *d_out;
    cudaStream_t s[2];
    cudaEvent_t ev_home[2];
    struct lab_result r;
    int h;

    CUDA_CHECK(cudaMallocHost(&h_in, 2 * half_bytes));
    CUDA_CHECK(cudaMallocHost(&h_out, 2 * half_bytes));
    lab_fill(h_in, 2 * n, p->seed, 2);
    memset(h_out, HOST_POISON, 2 * half_bytes);
    CUDA_CHECK(cudaMalloc(&d_in, 2 * half_bytes));
    CUDA_CHECK(cudaMalloc(&d_out, 2 * half_bytes));
    for (h = 0; h < 2; h++) {
        CUDA_CHECK(cudaStreamCreate(&s[h]));
        CUDA_CHECK(cudaEventCreateWithFlags(&ev_home[h], cudaEventDisableTiming));
    }
    NVTX_NAME_STREAM(s[0], "scenario 2 half 0");
    NVTX_NAME_STREAM(s[1], "scenario 2 half 1");

    NVTX_PUSH("scenario 2", NVTX_GREEN);
    for (h = 0; h < 2; h++) {
        CUDA_CHECK(cudaMemcpyAsync(d_in + h * n, h_in + h * n, half_bytes,
                                   cudaMemcpyHostToDevice, s[h]));
        scramble(d_out + h * n, d_in + h * n, n, p->steps, s[h]);
        CUDA_CHECK(cudaMemcpyAsync(h_out + h * n, d_out + h * n, half_bytes,
                                   cudaMemcpyDeviceToHost, s[h]));
        CUDA_CHECK(cudaEventRecord(ev_home[h], s[h]));   /* half h is home */
    }
    lab_result_begin(&r);
    for (h = 0; h < 2; h++) {
        /* TODO(2) */
        /* (is half h home yet?) */
        lab_result_add(&r, h_out + h * n, h_in + h * n, NULL, 1, n, p->steps, h * n);
    }
    NVTX_POP();

    for (h = 0; h < 2; h++) {
        CUDA_CHECK(cudaEventDestroy(ev_home[h]));
        CUDA_CHECK(cudaStreamDestroy(s[h]));
    }
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFreeHost(h_in));
    CUDA_CHECK(cudaFreeHost(h_out));
    return verdict(2, "reading results", &r, 2 * n);
}

/* ---------------------------------------------------------------- scenario 3 */

/*
 * Make the key of batch `batch` and queue its upload to d_key on stream s.
 * TODO(3) (how long does h_key live, and how long does the copy need it?)
 */
static void upload_key(uint32_t *d_key, uint32_t seed, unsigned batch, cudaStream_t s)
{
    uint32_t h_key[KEY_N];

    make_key(h_key, seed, batch);
    CUDA_CHECK(cudaMemcpyAsync(d_key, h_key, KEY_N * sizeof(uint32_t),
                               cudaMemcpyHostToDevice, s));
}

/*
 * Chunk j of the input is mixed with key j, made and uploaded by a helper
 * just before its kernel. Return 1 if the result verified.
 */
static int scenario_keys(const struct params *p)
{
    size_t n = p->n, total = n * p->chunks;
    /* TODO(3), its second part */
    uint32_t *h_in, *h_out, *d_in, *d_out, *d_keys, key[KEY_N];
    cudaStream_t s;
    struct lab_result r;
    unsigned j;

    /* TODO(3), its third part */
    CUDA_CHECK(cudaMallocHost(&h_in, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaMallocHost(&h_out, total * sizeof(uint32_t)));
    lab_fill(h_in, total, p->seed, 3);
    memset(h_out, HOST_POISON, total * sizeof(uint32_t));
    CUDA_CHECK(cudaMalloc(&d_in, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&d_out, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&d_keys, p->chunks * KEY_N * sizeof(uint32_t)));
    CUDA_CHECK(cudaStreamCreate(&s));
    NVTX_NAME_STREAM(s, "scenario 3");

    NVTX_PUSH("scenario 3", NVTX_ORANGE);
    CUDA_CHECK(cudaMemcpyAsync(d_in, h_in, total * sizeof(uint32_t),
                               cudaMemcpyHostToDevice, s));
    for (j = 0; j < p->chunks; j++) {
        /* TODO(3), its fourth part */
        upload_key(d_keys + j * KEY_N, p->seed, j, s);
        keyed(d_out + j * n, d_in + j * n, d_keys + j * KEY_N, n, p->steps, s);
    }
    CUDA_CHECK(cudaMemcpyAsync(h_out, d_out, total * sizeof(uint32_t),
                               cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    NVTX_POP();

    lab_result_begin(&r);
    for (j = 0; j < p->chunks; j++) {
        make_key(key, p->seed, j);
        lab_result_add(&r, h_out + j * n, h_in + j * n, key, KEY_N, n, p->steps, j * n);
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_keys));
    /* TODO(3), its fifth part */
    CUDA_CHECK(cudaFreeHost(h_in));
    CUDA_CHECK(cudaFreeHost(h_out));
    return verdict(3, "stack buffer", &r, total);
}

/* ---------------------------------------------------------------- scenario 4 */

/*
 * Queue, on the prep stream, a scratch buffer from the pool and the copy of
 * one chunk into it; `ready` marks it there.
 */
static void prep_chunk(uint32_t **d_tmp, const uint32_t *h_chunk, size_t n,
                       cudaStream_t s_prep, cudaEvent_t ready)
{
    CUDA_CHECK(cudaMallocAsync((void **)d_tmp, n * sizeof(uint32_t), s_prep));
    CUDA_CHECK(cudaMemcpyAsync(*d_tmp, h_chunk, n * sizeof(uint32_t),
                               cudaMemcpyHostToDevice, s_prep));
    CUDA_CHECK(cudaEventRecord(ready, s_prep));
}

/*
 * A prep stream brings each chunk into scratch memory from the stream-ordered
 * pool (cudaMallocAsync) one chunk ahead; the compute stream scrambles it;
 * the scratch goes back to the pool on the prep stream, which owns it.
 * Return 1 if the result verified.
 */
static int scenario_scratch(const struct params *p)
{
    size_t n = p->n, total = n * p->chunks;
    uint32_t *h_in, *h_out, *d_out, **d_tmp;
    cudaStream_t s_prep, s_comp;
    cudaEvent_t *ev_ready, *ev_used;
    struct lab_result r;
    unsigned j;

    d_tmp = (uint32_t **)xmalloc(p->chunks * sizeof *d_tmp);
    ev_ready = (cudaEvent_t *)xmalloc(p->chunks * sizeof *ev_ready);
    ev_used = (cudaEvent_t *)xmalloc(p->chunks * sizeof *ev_used);
    CUDA_CHECK(cudaMallocHost(&h_in, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaMallocHost(&h_out, total * sizeof(uint32_t)));
    lab_fill(h_in, total, p->seed, 4);
    memset(h_out, HOST_POISON, total * sizeof(uint32_t));
    CUDA_CHECK(cudaMalloc(&d_out, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaStreamCreate(&s_prep));
    CUDA_CHECK(cudaStreamCreate(&s_comp));
    NVTX_NAME_STREAM(s_prep, "scenario 4 prep");
    NVTX_NAME_STREAM(s_comp, "scenario 4 compute");
    for (j = 0; j < p->chunks; j++) {
        CUDA_CHECK(cudaEventCreateWithFlags(&ev_ready[j], cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&ev_used[j], cudaEventDisableTiming));
    }

    NVTX_PUSH("scenario 4", NVTX_PURPLE);
    prep_chunk(&d_tmp[0], h_in, n, s_prep, ev_ready[0]);
    for (j = 0; j < p->chunks; j++) {
        if (j + 1 < p->chunks)      /* the next chunk travels while this one computes */
            prep_chunk(&d_tmp[j + 1], h_in + (j + 1) * n, n, s_prep, ev_ready[j + 1]);
        CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_ready[j], 0));
        scramble(d_out + j * n, d_tmp[j], n, p->steps, s_comp);
        /* TODO(4) */
        /* (is the kernel just queued done with d_tmp[j]?) */
        CUDA_CHECK(cudaFreeAsync(d_tmp[j], s_prep));
    }
    CUDA_CHECK(cudaMemcpyAsync(h_out, d_out, total * sizeof(uint32_t),
                               cudaMemcpyDeviceToHost, s_comp));
    CUDA_CHECK(cudaStreamSynchronize(s_comp));
    NVTX_POP();

    CUDA_CHECK(cudaStreamSynchronize(s_prep));
    lab_result_begin(&r);
    lab_result_add(&r, h_out, h_in, NULL, 1, total, p->steps, 0);
    lab_destroy_events(ev_ready, p->chunks);
    lab_destroy_events(ev_used, p->chunks);
    const cudaStream_t streams[] = { s_prep, s_comp };

    lab_destroy_streams(streams, 2);
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFreeHost(h_in));
    CUDA_CHECK(cudaFreeHost(h_out));
    free(d_tmp);
    free(ev_ready);
    free(ev_used);
    return verdict(4, "scratch memory", &r, total);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    unsigned long long only = 0, chunks = 8, n = 1048576, steps = 32768,
                       seed = 1;                                /* the defaults */
    const struct lab_option opts[] = {
        { "--scenario", &only, 1, 4, NULL },
        { "--chunks", &chunks, 2, 64, NULL },
        { "--n", &n, KEY_N, 1ULL << 26, NULL },
        { "--steps", &steps, 1, 1ULL << 20, NULL },
        { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
    };
    /* Scenario k is scenarios[k - 1]; each returns 1 when it came out right. */
    static int (*const scenarios[4])(const struct params *) = {
        scenario_staging, scenario_results, scenario_keys, scenario_scratch,
    };
    struct params p;
    int sc, ran = 0, failed = 0;
    char which[16] = "";
    cudaDeviceProp prop;

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
    p.n = (size_t)n;
    p.chunks = (unsigned)chunks;
    p.steps = (uint32_t)steps;
    p.seed = (uint32_t)seed;
    prop = lab_pick_device();
    printf("lifetime: %s, chunks of %zu elements (%.1f MiB), %u steps, on %s\n",
           only ? "one scenario" : "4 scenarios", p.n,
           p.n * sizeof(uint32_t) / 1048576.0, p.steps, prop.name);

    for (sc = 1; sc <= 4; sc++) {
        if (only != 0 && only != (unsigned long long)sc)
            continue;
        ran++;
        if (!scenarios[sc - 1](&p))
            failed |= 1 << sc;
    }

    if (failed == 0) {
        printf("RESULT: verified %d scenario%s\n", ran, ran == 1 ? "" : "s");
        return LAB_EXIT_OK;
    }
    for (sc = 1; sc <= 4; sc++)
        if (failed & (1 << sc))
            snprintf(which + strlen(which), sizeof which - strlen(which), " %d", sc);
    printf("RESULT: WRONG: scenario%s%s failed\n", strchr(which + 1, ' ') ? "s" : "", which);
    return LAB_EXIT_FAIL;
}
