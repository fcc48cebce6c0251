/*
 * events.cu -- CUDA events: time a kernel right, keep the CPU busy while the
 * GPU works, and order two streams on the GPU without stopping the host.
 *
 * Build:  make            Run:  ./events [--part 1|2|3] [--steps K] [--seed S]
 * Check:  make check      Trace: make trace
 *
 * Part 1 times one kernel five ways and prints them side by side: events
 * (right), the host clock with a synchronize after the launch (right, plus a
 * little), the host clock with none (the launch only), the host clock while
 * an earlier kernel still runs (that one counted too), and events around the
 * very first launch (no warm-up). Part 2 does CPU work in slices for as long
 * as cudaEventQuery says the GPU is not done. Part 3 runs a producer kernel
 * on stream A and a consumer on stream B that needs all of its output; an
 * event orders them on the GPU, and the host does not wait in between.
 *
 * What to do, in the order the program reaches them:
 *   TODO(1) time the warm launch with the start/stop events into event_ms.
 *   TODO(2) make host_sync_ms cover the kernel: wait for stream s before t1.
 *   TODO(3) poll: run cpu_slice() while cudaEventQuery(done) says not ready.
 *           Not inside CUDA_CHECK: cudaErrorNotReady is an answer there, not
 *           a failure. Any other error: lab_cuda_fail(err, "cudaEventQuery",
 *           __FILE__, __LINE__) reports it and exits.
 *   TODO(4) record the event `produced` on stream A right after the producer.
 *   TODO(5) make stream B wait for `produced` before the consumer is launched:
 *           cudaStreamWaitEvent(stream, event, flags), with flags 0.
 * The program stops at the lab_todo() line of the first TODO not done: your
 * code replaces that line. Done when `make check` passes.
 */
#include "lab.h"
#include "scramble.h"

#define THREADS        256
#define N              1048579ULL    /* 2^20 + 3 numbers, 4 MiB */
#define SLICE_HASHES   2048U         /* one slice of CPU work: a few µs */

static const char usage_text[] =
    "usage: events [--part 1|2|3] [--steps K] [--seed S]\n"
    "  --part N   run only part N (default: all three)\n"
    "  --steps K  work per number in the long kernels, 1 to 16777216\n"
    "             (default 16384)\n"
    "  --seed S   the input data, 0 to 4294967295 (default 1)\n";

/* What every part works on. Both streams are non-blocking: see main(). */
struct work {
    size_t n;
    uint32_t steps;
    unsigned int blocks;            /* grid of the long kernels: one per SM */
    uint32_t *h_in, *h_out;         /* pinned host buffers */
    uint32_t *d_in, *d_buf, *d_out;
    cudaStream_t stream_a, stream_b;
};

/* ---------------------------------------------------------------- CPU check */

/*
 * Check h_out against the reference of `part` (1: busy_kernel's output, 3:
 * the consumer's, common/scramble.h) and print its digest, "digest_part1" or
 * "digest_part3" (the checker recomputes it). Print the first difference.
 * Return the number that differ.
 */
static size_t verify(const struct work *w, int part)
{
    uint32_t a, c;
    size_t i, n = w->n;
    struct lab_mismatch m;

    memset(&m, 0, sizeof m);
    affine_power(w->steps, &a, &c);
    for (i = 0; i < n; i++) {
        uint32_t y = a * w->h_in[i] + c;

        if (part == 3)              /* the consumer adds the mirror element */
            y += a * w->h_in[n - 1 - i] + c;
        if (w->h_out[i] != y && m.bad++ == 0) {
            m.first = i;
            m.got = w->h_out[i];
            m.want = y;
        }
    }
    lab_digest_print(part == 1 ? "part1" : "part3",
                     lab_digest_of(w->h_out, n * sizeof(uint32_t)));
    if (m.bad)
        printf("part %d: WRONG: %zu of %zu elements differ (first at %zu: "
               "got %u, expected %u)\n", part, m.bad, n, m.first, m.got, m.want);
    return m.bad;
}

/* A slice of CPU work, the kind a program does while the GPU computes. */
static uint32_t cpu_slice(uint32_t seed)
{
    uint32_t h = seed, k;

    for (k = 0; k < SLICE_HASHES; k++)
        h = lab_hash32(h + k);
    return h;
}

/* ---------------------------------------------------------------- kernels */

/* Part 1's kernel: K steps from in[i] (long_work, common/scramble.h), a
 * grid-stride loop, so any grid covers all n. */
__global__ void busy_kernel(uint32_t *out, const uint32_t *in, size_t n,
                            uint32_t steps)
{
    long_work(out, in, n, steps);
}

/* The same work as busy_kernel, under its own name for the trace. */
__global__ void producer_kernel(uint32_t *buf, const uint32_t *in, size_t n,
                                uint32_t steps)
{
    long_work(buf, in, n, steps);
}

/* out[i] = buf[i] + buf[n-1-i]: needs the producer's whole output. Quick. */
__global__ void consumer_kernel(uint32_t *out, const uint32_t *buf, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        out[i] = buf[i] + buf[n - 1 - i];
}

/* ---------------------------------------------------------------- launchers */

/*
 * The long kernels get one block per SM: they run for milliseconds but leave
 * room on every SM, so a consumer that is not told to wait really does start
 * beside the producer (and reads poison), instead of queueing behind it.
 */
static void busy(const struct work *w, cudaStream_t stream)
{
    busy_kernel<<<w->blocks, THREADS, 0, stream>>>(w->d_out, w->d_in, w->n,
                                                   w->steps);
    CUDA_CHECK_LAUNCH();
}

static void producer(const struct work *w, cudaStream_t stream)
{
    producer_kernel<<<w->blocks, THREADS, 0, stream>>>(w->d_buf, w->d_in,
                                                       w->n, w->steps);
    CUDA_CHECK_LAUNCH();
}

static void consumer(const struct work *w, cudaStream_t stream)
{
    unsigned int blocks = (unsigned int)((w->n + THREADS - 1) / THREADS);

    consumer_kernel<<<blocks, THREADS, 0, stream>>>(w->d_out, w->d_buf, w->n);
    CUDA_CHECK_LAUNCH();
}

/* ---------------------------------------------------------------- part 1 */

/* Time busy_kernel five ways; print them. Return the wrong elements. */
static size_t part_timing(const struct work *w)
{
    cudaStream_t s = w->stream_a;
    cudaEvent_t start, stop;
    float cold_ms = 0, event_ms = 0;
    double t0, t1, sync_ms, nosync_ms, late_ms;

    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    /* No warm-up: the first launch of a kernel also loads its code. */
    CUDA_CHECK(cudaEventRecord(start, s));
    busy(w, s);
    CUDA_CHECK(cudaEventRecord(stop, s));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&cold_ms, start, stop));

    /* Events: the GPU stamps them as it reaches them in the stream. */
    /* TODO(1) */
    lab_todo(1, "time this launch as the one above: start and stop on s, "
                "wait for stop, read event_ms");
    busy(w, s);

    /* Host clock; the stream is idle before t0 (the wait just above). */
    t0 = lab_now_ms();
    busy(w, s);
    /* TODO(2) */
    lab_todo(2, "wait here for stream s, so host_sync_ms covers the kernel");
    t1 = lab_now_ms();
    sync_ms = t1 - t0;

    /* Host clock, nothing waited for: this times the launch alone. */
    t0 = lab_now_ms();
    busy(w, s);
    t1 = lab_now_ms();
    nosync_ms = t1 - t0;
    CUDA_CHECK(cudaStreamSynchronize(s));

    /* Host clock, but an earlier kernel is still running at t0: the stream
     * runs it first, so it is counted too. */
    busy(w, s);
    t0 = lab_now_ms();
    busy(w, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    t1 = lab_now_ms();
    late_ms = t1 - t0;

    printf("part 1: one kernel, timed five ways\n");
    lab_figure("event_ms", event_ms, "events around a warm launch: the kernel");
    lab_figure("host_sync_ms", sync_ms, "host clock, launch + synchronize");
    lab_figure("host_nosync_ms", nosync_ms, "host clock, no synchronize: the launch");
    lab_figure("host_late_ms", late_ms, "host clock, earlier kernel not waited for");
    lab_figure("cold_ms", cold_ms, "events around the first launch: no warm-up");

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaMemcpy(w->h_out, w->d_out, w->n * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost));
    return verify(w, 1);
}

/* ---------------------------------------------------------------- part 2 */

/* Work on the CPU in slices until the kernel is done; report the slices. */
static void part_polling(const struct work *w)
{
    cudaStream_t s = w->stream_a;
    cudaEvent_t done;
    unsigned long slices = 0;
    uint32_t sink = 1;
    double t0, t1;

    /* An event used only to ask "done yet?" needs no timestamp. */
    CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    busy(w, s);
    CUDA_CHECK(cudaEventRecord(done, s));

    NVTX_PUSH("polling", NVTX_ORANGE);
    t0 = lab_now_ms();
    for (;;) {
        /* TODO(3) */
        lab_todo(3, "ask cudaEventQuery(done): leave the loop once it is done, "
                    "fail (lab_cuda_fail) on any answer but cudaErrorNotReady");
        sink = cpu_slice(sink);
        slices++;
    }
    t1 = lab_now_ms();
    NVTX_POP();

    printf("part 2: the CPU worked while the GPU ran (CPU result %08x)\n", sink);
    lab_figure("poll_slices", (double)slices, "CPU slices while the event was not ready");
    lab_figure("poll_ms", t1 - t0, "host time until the event was done");
    CUDA_CHECK(cudaEventDestroy(done));
}

/* ---------------------------------------------------------------- part 3 */

/* Producer on stream A, consumer on stream B, ordered by an event alone. */
static size_t part_dependency(const struct work *w)
{
    size_t bytes = w->n * sizeof(uint32_t);
    cudaEvent_t produced;

    CUDA_CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
    /* Poison: a consumer that runs too early reads 0xabababab, not data. */
    CUDA_CHECK(cudaMemset(w->d_buf, 0xab, bytes));
    CUDA_CHECK(cudaMemset(w->d_out, 0xcd, bytes));
    /* Start clean. From here until the consumer is queued, the host waits for nothing. */
    CUDA_CHECK(cudaDeviceSynchronize());

    NVTX_PUSH("dependency", NVTX_PURPLE);
    producer(w, w->stream_a);
    /* TODO(4) */
    lab_todo(4, "record the event produced on stream A, after the producer");
    /* TODO(5) */
    lab_todo(5, "make stream B wait for produced (no host wait): "
                "cudaStreamWaitEvent(stream, event, flags), flags 0");
    consumer(w, w->stream_b);
    NVTX_POP();

    /* Now the host needs the result: wait for stream B (and only B). */
    CUDA_CHECK(cudaStreamSynchronize(w->stream_b));
    CUDA_CHECK(cudaMemcpy(w->h_out, w->d_out, bytes, cudaMemcpyDeviceToHost));
    printf("part 3: consumer on stream B after producer on stream A\n");
    CUDA_CHECK(cudaEventDestroy(produced));
    return verify(w, 3);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    unsigned long long part = 0, steps = 16384, seed = 1;      /* the defaults */
    const struct lab_option opts[] = {
        { "--part", &part, 1, 3, NULL },
        { "--steps", &steps, 1, 1ULL << 24, NULL },
        { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
    };
    struct work w;
    cudaDeviceProp prop;
    cudaFuncAttributes attr;
    size_t bytes, bad = 0;

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
    memset(&w, 0, sizeof w);
    w.n = N;
    w.steps = (uint32_t)steps;
    prop = lab_pick_device();
    w.blocks = (unsigned int)prop.multiProcessorCount;
    bytes = w.n * sizeof(uint32_t);
    printf("events: %zu numbers (%.1f MiB), %u steps each, on %s\n",
           w.n, bytes / 1048576.0, w.steps, prop.name);

    CUDA_CHECK(cudaMallocHost(&w.h_in, bytes));
    CUDA_CHECK(cudaMallocHost(&w.h_out, bytes));
    lab_fill(w.h_in, w.n, (uint32_t)seed, 0);
    memset(w.h_out, 0xee, bytes);   /* poison: what is not copied back is wrong */
    CUDA_CHECK(cudaMalloc(&w.d_in, bytes));
    CUDA_CHECK(cudaMalloc(&w.d_buf, bytes));
    CUDA_CHECK(cudaMalloc(&w.d_out, bytes));
    CUDA_CHECK(cudaMemcpy(w.d_in, w.h_in, bytes, cudaMemcpyHostToDevice));
    /*
     * Non-blocking streams do not wait for the legacy default stream, nor it
     * for them. With blocking streams, stray work on stream 0 would order
     * everything and hide a missing dependency; here only events order them.
     */
    CUDA_CHECK(cudaStreamCreateWithFlags(&w.stream_a, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&w.stream_b, cudaStreamNonBlocking));
    NVTX_NAME_STREAM(w.stream_a, "stream A");
    NVTX_NAME_STREAM(w.stream_b, "stream B");

    if (part == 0 || part == 1)
        bad += part_timing(&w);
    if (part == 0 || part == 2)
        part_polling(&w);
    if (part == 0 || part == 3) {
        /*
         * Load part 3's kernels first. With lazy loading (the default on
         * Linux since CUDA 12.2, on Windows since 12.3) a kernel's code is
         * loaded at its first launch, and that may wait for the kernels
         * already running: a first-time consumer would wait for the producer
         * by accident and hide a missing wait.
         */
        CUDA_CHECK(cudaFuncGetAttributes(&attr, producer_kernel));
        CUDA_CHECK(cudaFuncGetAttributes(&attr, consumer_kernel));
        bad += part_dependency(&w);
    }

    if (bad)
        printf("RESULT: WRONG: %zu elements differ (see the part above)\n", bad);
    else
        printf("RESULT: verified all %zu elements of every part that was run\n",
               w.n);

    /* Every part waited for its work: nothing queued uses these now. */
    cudaStream_t streams[] = { w.stream_a, w.stream_b };
    void *d[] = { w.d_in, w.d_buf, w.d_out }, *h[] = { w.h_in, w.h_out };

    lab_destroy_streams(streams, 2);
    lab_free_all(d, 3, h, 2);
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}
