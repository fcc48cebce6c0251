/*
 * graphs.cu -- CUDA graphs: capture a stream's work once, replay it with one
 * call, keep a fork and join of two streams in the capture, and see what a
 * capture refuses and how a replayed graph is changed without capturing it
 * again.
 *
 * Build:  make            Run:  ./graphs [--part 1|2|3] [--kernels N]
 *                                        [--replays K] [--seed S]
 * Check:  make check      Trace: make trace
 *
 * Part 1 runs N small kernels an iteration, K iterations, twice: launched one
 * by one on a stream, then captured once into a graph and replayed K times,
 * one cudaGraphLaunch a replay. It prints the host time per iteration of
 * each. Part 2 forks the work of an origin stream into two branches (the
 * origin and a side stream, ordered by events as in lab 04), joins them, and
 * runs it once on the streams and then as a graph captured from the origin
 * stream, replayed and checked replay by replay. Part 3 makes two calls a
 * capture refuses and prints what the runtime answered, then changes a
 * kernel's parameters in an instantiated graph instead of capturing again.
 *
 * What to do, in the order the program reaches them:
 *   TODO(1) capture stream s: cudaStreamBeginCapture(s, mode) before the N
 *           launches (mode cudaStreamCaptureModeGlobal), cudaStreamEndCapture
 *           (s, &graph) after them.
 *   TODO(2) instantiate the graph: cudaGraphInstantiate(&exec, graph, 0).
 *   TODO(3) replay it: one cudaGraphLaunch(exec, s) per iteration.
 *   TODO(4) fork: record `forked` on the origin stream, and make the side
 *           stream wait for it before branch B.
 *   TODO(5) join: record `joined` on the side stream after branch B, and make
 *           the origin stream wait for it before the join kernel.
 *   TODO(6) capture fork_join() from the origin stream (as in TODO 1).
 *   TODO(7) wait for the replay before the host reads its result.
 *   TODO(8) during the capture, call cudaStreamSynchronize(s) and keep what
 *           it returns in err_sync (not in CUDA_CHECK: the error is the lesson).
 *   TODO(9) give the replayed graph the new parameters in place:
 *           cudaGraphExecKernelNodeSetParams(exec, node, &params).
 * The program stops at the lab_todo() line of the first TODO not done: your
 * code replaces that line. Done when `make check` passes.
 */
#include "lab.h"
#include "scramble.h"

#define THREADS        256
#define SMALL_N        4096U         /* part 1: numbers each small kernel works on */
#define SMALL_STEPS    8U            /* ... and steps per number: a few µs a kernel */
#define FORK_N         (1U << 20)    /* part 2: numbers, 4 MiB */
#define PRE_STEPS      16U           /* part 2: the kernel before the fork */
#define BRANCH_A_STEPS 4096U         /* part 2: branch A, long enough to see */
#define BRANCH_B_STEPS 8192U         /* ... and branch B, twice as long */
#define FORK_REPLAYS   4             /* part 2: replays, each checked */
#define UPDATE_N       (1U << 16)    /* part 3: numbers of the updated kernel */
#define STEPS_BEFORE   100U          /* part 3: its steps as captured */
#define STEPS_AFTER    1000U         /* ... and after the update */

static const char usage_text[] =
    "usage: graphs [--part 1|2|3] [--kernels N] [--replays K] [--seed S]\n"
    "  --part N      run only part N (default: all three)\n"
    "  --kernels N   small kernels an iteration in part 1, 1 to 256 (default 32)\n"
    "  --replays K   iterations of part 1, 1 to 10000 (default 200)\n"
    "  --seed S      the input data, 0 to 4294967295 (default 1)\n";

/* ---------------------------------------------------------------- kernels */

/* x[i] = SMALL_STEPS steps from x[i]: a small kernel, in place. */
__global__ void step_kernel(uint32_t *x, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        x[i] = lcg_steps(x[i], SMALL_STEPS);
}

/* Part 2: the kernel before the fork, the two branches (K steps of each
 * number, long_work in common/scramble.h), the join. Branch B does twice
 * branch A's work: a join that waits for A alone starts while B still runs. */
__global__ void pre_kernel(uint32_t *mid, const uint32_t *in, size_t n)
{
    long_work(mid, in, n, PRE_STEPS);
}

__global__ void branch_a_kernel(uint32_t *a, const uint32_t *mid, size_t n)
{
    long_work(a, mid, n, BRANCH_A_STEPS);
}

__global__ void branch_b_kernel(uint32_t *b, const uint32_t *mid, size_t n)
{
    long_work(b, mid, n, BRANCH_B_STEPS);
}

/* out[i] = a[i] + b[n-1-i]: needs both branches' whole output. */
__global__ void join_kernel(uint32_t *out, const uint32_t *a, const uint32_t *b,
                            size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        out[i] = a[i] + b[n - 1 - i];
}

/* Part 3: out[i] = K steps from in[i]; its K is what the update changes. */
__global__ void update_kernel(uint32_t *out, const uint32_t *in, size_t n,
                              uint32_t steps)
{
    long_work(out, in, n, steps);
}

/* Every kernel above, for main() to load before the first capture. */
static const void *const all_kernels[] = {
    (const void *)step_kernel, (const void *)pre_kernel, (const void *)branch_a_kernel,
    (const void *)branch_b_kernel, (const void *)join_kernel, (const void *)update_kernel,
};

/* ---------------------------------------------------------------- launchers */

static unsigned int grid_of(size_t n)
{
    return (unsigned int)((n + THREADS - 1) / THREADS);
}

static void step(uint32_t *d_x, cudaStream_t s)
{
    step_kernel<<<grid_of(SMALL_N), THREADS, 0, s>>>(d_x, SMALL_N);
    CUDA_CHECK_LAUNCH();
}

/* ---------------------------------------------------------------- CPU check */

/*
 * Check out[0..n) against K steps from input `salt` of `seed`; print its
 * digest as digest_NAME (the checker recomputes it) and the first difference.
 * Return the number that differ.
 */
static size_t check_steps(const char *name, const uint32_t *out, size_t n,
                          uint32_t steps, uint32_t seed, uint32_t salt)
{
    uint32_t *in = (uint32_t *)malloc(n * sizeof *in);
    struct lab_mismatch m;
    uint64_t digest;

    if (in == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(LAB_EXIT_FAIL);
    }
    lab_fill(in, n, seed, salt);
    m = scramble_check(out, in, n, steps, &digest);
    lab_digest_print(name, digest);
    if (m.bad)
        printf("%s: WRONG: %zu of %zu elements differ (first at %zu: got %u, "
               "expected %u)\n", name, m.bad, n, m.first, m.got, m.want);
    free(in);
    return m.bad;
}

/* Part 2's reference: ya(in[i]) + yb(in[n-1-i]), ya = PRE + BRANCH_A
 * steps, yb = PRE + BRANCH_B steps. Return the elements of out that differ;
 * *digest gets out's digest. */
static size_t check_fork(const uint32_t *out, uint32_t seed, uint64_t *digest)
{
    uint32_t a1, c1, a2, c2, want;
    size_t i, bad = 0, n = FORK_N;

    affine_power(PRE_STEPS + BRANCH_A_STEPS, &a1, &c1);
    affine_power(PRE_STEPS + BRANCH_B_STEPS, &a2, &c2);
    for (i = 0; i < n; i++) {
        want = a1 * lab_input(seed, 1, i) + c1 + a2 * lab_input(seed, 1, n - 1 - i) + c2;
        bad += out[i] != want;
    }
    *digest = lab_digest_of(out, n * sizeof *out);
    return bad;
}

/* ---------------------------------------------------------------- part 1 */

/*
 * N small kernels an iteration, K iterations: on stream s one launch at a
 * time, then as a graph captured once and replayed K times. Print the host
 * time per iteration of each. Return the wrong elements.
 */
static size_t part_capture(unsigned int nk, unsigned int k, uint32_t seed)
{
    size_t bytes = SMALL_N * sizeof(uint32_t), bad = 0;
    uint32_t *h_x, *d_stream, *d_graph, *d_warm;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaStream_t s;
    double t0, t1, stream_us, graph_us;
    unsigned int r, j;

    printf("part 1: %u small kernels an iteration, %u iterations\n", nk, k);
    lab_figure("iterations", k, "iterations of each loop");
    lab_figure("kernels", nk, "small kernels an iteration");
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMallocHost(&h_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_stream, bytes));
    CUDA_CHECK(cudaMalloc(&d_graph, bytes));
    CUDA_CHECK(cudaMalloc(&d_warm, bytes));
    lab_fill(h_x, SMALL_N, seed, 0);
    CUDA_CHECK(cudaMemcpy(d_stream, h_x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_graph, h_x, bytes, cudaMemcpyHostToDevice));
    /* Warm-up on a scratch buffer: the first launch also loads the kernel. */
    step(d_warm, s);
    CUDA_CHECK(cudaStreamSynchronize(s));

    /* On the stream: K x N launches, one wait at the end. */
    NVTX_PUSH("stream_loop", NVTX_BLUE);
    t0 = lab_now_ms();
    for (r = 0; r < k; r++)
        for (j = 0; j < nk; j++)
            step(d_stream, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    t1 = lab_now_ms();
    NVTX_POP();
    stream_us = 1e3 * (t1 - t0) / k;

    /* The same N launches, captured: they are recorded into `graph`, not
     * run. Nothing may wait for the GPU until the capture ends. */
    NVTX_PUSH("capture", NVTX_GREY);
    /* TODO(1) */
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (j = 0; j < nk; j++)
        step(d_graph, s);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    /* TODO(2) */
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    /* The first launch of a graph also copies it to the GPU: do that now,
     * so the timed loop compares launches with launches. */
    CUDA_CHECK(cudaGraphUpload(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    NVTX_POP();

    /* K replays, one wait at the end, as the stream loop. */
    NVTX_PUSH("graph_loop", NVTX_GREEN);
    t0 = lab_now_ms();
    for (r = 0; r < k; r++) {
        /* TODO(3) */
        CUDA_CHECK(cudaGraphLaunch(exec, s));
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    t1 = lab_now_ms();
    NVTX_POP();
    graph_us = 1e3 * (t1 - t0) / k;

    lab_figure("stream_us", stream_us, "host time per iteration: N launches on a stream");
    lab_figure("graph_us", graph_us, "host time per iteration: one graph replay");

    CUDA_CHECK(cudaMemcpy(h_x, d_stream, bytes, cudaMemcpyDeviceToHost));
    bad += check_steps("stream", h_x, SMALL_N, k * nk * SMALL_STEPS, seed, 0);
    CUDA_CHECK(cudaMemcpy(h_x, d_graph, bytes, cudaMemcpyDeviceToHost));
    bad += check_steps("graph", h_x, SMALL_N, k * nk * SMALL_STEPS, seed, 0);

    /* The host waited for both loops: nothing queued uses these now. */
    void *d[] = { d_stream, d_graph, d_warm }, *h[] = { h_x };

    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    lab_free_all(d, 3, h, 1);
    CUDA_CHECK(cudaStreamDestroy(s));
    return bad;
}

/* ---------------------------------------------------------------- part 2 */

struct fork {
    cudaStream_t origin, side;
    cudaEvent_t forked, joined;
    unsigned int branch_blocks;     /* one block per SM: both branches fit at once */
    uint32_t *d_in, *d_mid, *d_a, *d_b, *d_out, *h_out;
};

/*
 * pre_kernel, then branch A on the origin stream beside branch B on the side
 * stream, then the join and the copy back, on the origin stream. The same
 * calls run the work on the streams, or, while the origin stream is being
 * captured, record it into the graph: a stream that waits for an event
 * recorded in a capture joins that capture.
 */
static void fork_join(const struct fork *f)
{
    size_t n = FORK_N;

    pre_kernel<<<grid_of(n), THREADS, 0, f->origin>>>(f->d_mid, f->d_in, n);
    CUDA_CHECK_LAUNCH();
    /* TODO(4) */
    CUDA_CHECK(cudaEventRecord(f->forked, f->origin));
    CUDA_CHECK(cudaStreamWaitEvent(f->side, f->forked, 0));
    branch_a_kernel<<<f->branch_blocks, THREADS, 0, f->origin>>>(f->d_a, f->d_mid, n);
    CUDA_CHECK_LAUNCH();
    branch_b_kernel<<<f->branch_blocks, THREADS, 0, f->side>>>(f->d_b, f->d_mid, n);
    CUDA_CHECK_LAUNCH();
    /* TODO(5) */
    CUDA_CHECK(cudaEventRecord(f->joined, f->side));
    CUDA_CHECK(cudaStreamWaitEvent(f->origin, f->joined, 0));
    join_kernel<<<grid_of(n), THREADS, 0, f->origin>>>(f->d_out, f->d_a, f->d_b, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(f->h_out, f->d_out, n * sizeof(uint32_t),
                               cudaMemcpyDeviceToHost, f->origin));
}

/* Fill h_out with poison: a result read before it is copied back is wrong. */
static void poison(const struct fork *f)
{
    memset(f->h_out, 0xee, FORK_N * sizeof(uint32_t));
}

/* The fork and join on streams, then captured and replayed, each replay
 * checked. Return the wrong elements. */
static size_t part_fork(unsigned int sms, uint32_t seed)
{
    size_t bytes = FORK_N * sizeof(uint32_t), bad = 0, wrong;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    uint64_t digest = 0;
    struct fork f;
    int r, right = 0;

    memset(&f, 0, sizeof f);
    f.branch_blocks = sms;
    CUDA_CHECK(cudaStreamCreateWithFlags(&f.origin, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&f.side, cudaStreamNonBlocking));
    NVTX_NAME_STREAM(f.origin, "origin");
    NVTX_NAME_STREAM(f.side, "side");
    CUDA_CHECK(cudaEventCreateWithFlags(&f.forked, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&f.joined, cudaEventDisableTiming));
    CUDA_CHECK(cudaMallocHost(&f.h_out, bytes));
    CUDA_CHECK(cudaMalloc(&f.d_in, bytes));
    CUDA_CHECK(cudaMalloc(&f.d_mid, bytes));
    CUDA_CHECK(cudaMalloc(&f.d_a, bytes));
    CUDA_CHECK(cudaMalloc(&f.d_b, bytes));
    CUDA_CHECK(cudaMalloc(&f.d_out, bytes));
    lab_fill(f.h_out, FORK_N, seed, 1);
    CUDA_CHECK(cudaMemcpy(f.d_in, f.h_out, bytes, cudaMemcpyHostToDevice));
    /* Poison the branches' outputs: a join that runs too early reads it. */
    CUDA_CHECK(cudaMemset(f.d_a, 0xab, bytes));
    CUDA_CHECK(cudaMemset(f.d_b, 0xab, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
    poison(&f);

    /* On the streams, once. */
    NVTX_PUSH("fork_stream", NVTX_PURPLE);
    fork_join(&f);
    CUDA_CHECK(cudaStreamSynchronize(f.origin));
    NVTX_POP();
    wrong = check_fork(f.h_out, seed, &digest);
    lab_digest_print("fork_stream", digest);
    if (wrong)
        printf("fork_stream: WRONG: %zu of %u elements differ\n", wrong, FORK_N);
    bad += wrong;

    /* Captured from the origin stream, then replayed. */
    CUDA_CHECK(cudaMemset(f.d_a, 0xab, bytes));
    CUDA_CHECK(cudaMemset(f.d_b, 0xab, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
    NVTX_PUSH("fork_capture", NVTX_GREY);
    /* TODO(6) */
    CUDA_CHECK(cudaStreamBeginCapture(f.origin, cudaStreamCaptureModeGlobal));
    fork_join(&f);
    CUDA_CHECK(cudaStreamEndCapture(f.origin, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphUpload(exec, f.origin));
    CUDA_CHECK(cudaStreamSynchronize(f.origin));
    NVTX_POP();

    for (r = 0; r < FORK_REPLAYS; r++) {
        poison(&f);
        NVTX_PUSH("replay", NVTX_GREEN);
        CUDA_CHECK(cudaGraphLaunch(exec, f.origin));
        /* TODO(7) */
        CUDA_CHECK(cudaStreamSynchronize(f.origin));
        NVTX_POP();
        NVTX_PUSH("read", NVTX_ORANGE);
        wrong = check_fork(f.h_out, seed, &digest);
        NVTX_POP();
        if (wrong)
            printf("fork_graph: replay %d: WRONG: %zu of %u elements differ\n",
                   r + 1, wrong, FORK_N);
        else
            right++;
        bad += wrong;
    }
    lab_digest_print("fork_graph", digest);
    printf("part 2: fork and join on two streams, %d replays of its graph\n",
           FORK_REPLAYS);
    lab_figure("fork_replays", FORK_REPLAYS, "replays of the fork/join graph");
    lab_figure("fork_replays_right", right, "replays whose whole result was right");

    /* The host waited for every replay: nothing queued uses these now. */
    cudaEvent_t events[] = { f.forked, f.joined };
    cudaStream_t streams[] = { f.origin, f.side };
    void *d[] = { f.d_in, f.d_mid, f.d_a, f.d_b, f.d_out }, *h[] = { f.h_out };

    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    lab_destroy_events(events, 2);
    lab_free_all(d, 5, h, 1);
    lab_destroy_streams(streams, 2);
    return bad;
}

/* ---------------------------------------------------------------- part 3 */

/* Print what a call answered, as a figure (its number) and its name. */
static void answer(const char *figure, const char *call, cudaError_t err)
{
    char note[160];

    snprintf(note, sizeof note, "%s: %s", call, cudaGetErrorName(err));
    lab_figure(figure, (double)err, note);
}

/*
 * End a capture that a refused call broke; print what the end answered. A
 * refused call leaves the error as the last error too: clear it, or the next
 * CUDA_CHECK_LAUNCH would report it.
 */
static void end_broken_capture(cudaStream_t s, const char *figure)
{
    cudaGraph_t graph = NULL;
    cudaError_t err = cudaStreamEndCapture(s, &graph);

    answer(figure, "cudaStreamEndCapture after it", err);
    if (graph != NULL)
        CUDA_CHECK(cudaGraphDestroy(graph));
    (void)cudaGetLastError();
}

/* Two calls that a capture in global mode refuses; what the runtime said. */
static void part_pitfalls(uint32_t *d_x)
{
    cudaStream_t s, blocking;
    cudaError_t err_sync = cudaSuccess, err_legacy;

    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreate(&blocking));    /* syncs with stream 0 */

    /* A wait for the GPU inside a capture: the work is not running, only
     * being recorded, so there is nothing to wait for. */
    NVTX_PUSH("pitfall_sync", NVTX_RED);
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    step(d_x, s);
    /* TODO(8) */
    err_sync = cudaStreamSynchronize(s);
    answer("sync_in_capture", "cudaStreamSynchronize during the capture", err_sync);
    end_broken_capture(s, "sync_end_capture");
    NVTX_POP();

    /* Work on the legacy default stream (0) while a blocking stream is being
     * captured: stream 0 would have to wait for work that is not running. */
    NVTX_PUSH("pitfall_legacy", NVTX_RED);
    CUDA_CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal));
    step(d_x, blocking);
    err_legacy = cudaMemsetAsync(d_x, 0, SMALL_N * sizeof(uint32_t), 0);
    answer("legacy_in_capture", "cudaMemsetAsync on stream 0 during the capture",
           err_legacy);
    end_broken_capture(blocking, "legacy_end_capture");
    NVTX_POP();

    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaStreamDestroy(blocking));
}

/*
 * Capture update_kernel once, replay it; then change its steps in the
 * instantiated graph and replay again: no second capture, no second
 * instantiation. Return the wrong elements.
 */
static size_t part_update(uint32_t seed)
{
    size_t n = UPDATE_N, bytes = n * sizeof(uint32_t), bad = 0, count = 1;
    uint32_t *h_buf, *d_in, *d_out, steps = STEPS_AFTER;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaGraphNode_t node;
    cudaKernelNodeParams params;
    cudaStream_t s;
    void *args[4];

    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMallocHost(&h_buf, bytes));
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    lab_fill(h_buf, n, seed, 2);
    CUDA_CHECK(cudaMemcpy(d_in, h_buf, bytes, cudaMemcpyHostToDevice));

    NVTX_PUSH("update", NVTX_BLUE);
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    update_kernel<<<grid_of(n), THREADS, 0, s>>>(d_out, d_in, n, STEPS_BEFORE);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaMemcpyAsync(h_buf, d_out, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    bad += check_steps("update_before", h_buf, n, STEPS_BEFORE, seed, 2);

    /* The graph's one node is the kernel; its parameters are pointers to
     * the arguments, read when they are set. */
    CUDA_CHECK(cudaGraphGetNodes(graph, &node, &count));
    CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &params));
    args[0] = &d_out;
    args[1] = &d_in;
    args[2] = &n;
    args[3] = &steps;
    params.kernelParams = args;
    /* TODO(9) */
    CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &params));
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaMemcpyAsync(h_buf, d_out, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    NVTX_POP();
    bad += check_steps("update_after", h_buf, n, STEPS_AFTER, seed, 2);
    printf("part 3: one kernel's steps changed in the replayed graph, %u then %u\n",
           STEPS_BEFORE, STEPS_AFTER);

    /* The host waited for the last replay: nothing queued uses these now. */
    void *d[] = { d_in, d_out }, *h[] = { h_buf };

    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    lab_free_all(d, 2, h, 1);
    CUDA_CHECK(cudaStreamDestroy(s));
    return bad;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    unsigned long long part = 0, kernels = 32, replays = 200, seed = 1;      /* the defaults */
    const struct lab_option opts[] = {
        { "--part", &part, 1, 3, NULL },
        { "--kernels", &kernels, 1, 256, NULL },
        { "--replays", &replays, 1, 10000, NULL },
        { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
    };
    cudaDeviceProp prop;
    uint32_t *d_scratch;
    size_t bad = 0;

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
    prop = lab_pick_device();
    printf("graphs: on %s\n", prop.name);
    /*
     * Load every kernel now (lab_load_kernels, common/lab.h). With lazy
     * loading (the default on Linux since CUDA 12.2) a kernel's code is
     * loaded at its first launch, and loading may wait for the GPU: not a
     * thing to happen first inside a capture.
     */
    lab_load_kernels(all_kernels, sizeof all_kernels / sizeof *all_kernels);

    if (part == 0 || part == 1)
        bad += part_capture((unsigned int)kernels, (unsigned int)replays, (uint32_t)seed);
    if (part == 0 || part == 2)
        bad += part_fork((unsigned int)prop.multiProcessorCount, (uint32_t)seed);
    if (part == 0 || part == 3) {
        CUDA_CHECK(cudaMalloc(&d_scratch, SMALL_N * sizeof(uint32_t)));
        printf("part 3: what a capture refuses, and an update in place\n");
        part_pitfalls(d_scratch);
        CUDA_CHECK(cudaFree(d_scratch));
        bad += part_update((uint32_t)seed);
    }

    return lab_verdict(bad, "elements differ (see the parts above)",
                       "every result of every part that was run");
}
