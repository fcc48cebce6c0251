/*
 * stress.c -- libstress.so: makes the lifetime bugs of asynchronous CUDA work
 * show up on every run, in any program linked with the shared CUDA runtime.
 *
 * Build:  make                      Use:  ./stress -- PROG [ARGS...]
 * (README.md has the whole story; in short:)
 *
 * Preloaded into a program (LD_PRELOAD), it stands between the program and
 * libcudart.so and plays the worst legal scheduler:
 *
 *  1. The GPU runs as late as it may. Before each async copy, memset and
 *     kernel it queues a gate: a one-thread kernel of its own that spins
 *     until the host *waits* for that work (a stream, event or device
 *     synchronize, a query, a blocking call). A wait opens only the gates of
 *     the work it waits for, following events and stream waits, so waiting on
 *     the wrong stream or event leaves the right work shut.
 *  2. An async copy reads its host memory when the stream gets to it: a copy
 *     from pageable memory (which today's driver snapshots during the call)
 *     is deferred, by a host function queued behind the gate.
 *  3. Dead memory is poisoned: the stack below the caller at every CUDA call,
 *     memory given back to the pool by cudaFreeAsync (a memset queued before
 *     the free), and host memory freed (free, cudaFreeHost) while a queued
 *     copy still reads it.
 *  4. A free in one stream that is not ordered (by events) after a kernel or
 *     copy in another stream that uses the memory is a race: that work is
 *     held until the poison has landed, and the race is reported.
 *
 * So a premature reuse, read or free always yields wrong data. A correct
 * program is only slower. Options come from the environment (see ./stress).
 * The two kernels are in gate.cu.
 */
#define _GNU_SOURCE
#include <cuda.h>               /* CUkernel and the driver calls' types */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STREAMS 64          /* streams tracked; more pass through */
#define MAX_OPS     8192        /* ops remembered (a ring); also the hold slots */
#define MAX_RANGES  16          /* memory ranges remembered per op */
#define MAX_EVENTS  4096
#define MAX_ALLOCS  4096
#define MAX_HOLDS   1024
#define MAX_DEFER   1024        /* deferred pageable reads in flight */
#define POISON      0xdb        /* every byte of poison: 0xdbdbdbdb as a word */
#define SCRUB_MAX   (256 << 10) /* most stack scrubbed below a caller */

typedef uint32_t vclock[MAX_STREAMS];

static const dim3 one = { 1, 1, 1 };

/* ---------------------------------------------------------------- state */

struct range {
    uintptr_t a, b;             /* [a, b) */
    int reads_host;             /* a host range this op reads */
};

struct op {
    int sid;                    /* stream index, -1: slot unused */
    uint32_t seq;               /* its number in that stream */
    char what[64];              /* "kernel scale_kernel", "H2D copy" ... */
    int nr;
    struct range r[MAX_RANGES];
};

struct stream_info {
    cudaStream_t h;
    int blocking;               /* synchronizes with the legacy stream */
    uint32_t seq;               /* ops queued so far */
    vclock vc;                  /* what the next op on it comes after */
};

struct event_info {
    cudaEvent_t h;
    int recorded;
    vclock vc;
};

struct alloc_info {
    uintptr_t p;
    size_t n;
};

struct hold_info {
    int sid;                    /* the held op */
    uint32_t seq;
    int propagated;
    vclock vc;                  /* releasing it must release this (the poison's prerequisites) */
};

struct defer_info {
    uintptr_t src;
    size_t n;
    int sid;
    uint32_t seq;
    int active;
    void *bounce;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static __thread int in_shim;            /* this thread is inside the shim */
static __thread uintptr_t stack_lo;     /* lowest usable address of this thread's stack */

static int on;                          /* initialized and working */
static FILE *log_to;
static int verbose;
static unsigned long long delay_ns = 500000, timeout_ns = 2000000000ULL;
static size_t scrub_bytes = 64 << 10;

static volatile unsigned *h_rel;        /* mapped: released seq per stream */
static volatile unsigned *h_hold;       /* mapped: per op slot, 1 = held */
static volatile unsigned *h_timed_out;  /* mapped: per op slot, 1 = gate timed out */
static unsigned *d_rel, *d_hold, *d_timed_out;

static struct stream_info streams[MAX_STREAMS];
static int nstreams;
static uint32_t done_seq[MAX_STREAMS];  /* the host knows these finished */
static uint32_t rel_seq[MAX_STREAMS];   /* gates opened up to here */
static struct op ops[MAX_OPS];
static unsigned op_next;
static struct event_info events[MAX_EVENTS];
static int nevents;
static struct alloc_info pool_allocs[MAX_ALLOCS], host_allocs[MAX_ALLOCS];
static int npool, nhost;
static struct hold_info holds[MAX_HOLDS];
static int nholds;

/* pageable reads deferred to a host function, and their pinned bounce space */
static struct defer_info defers[MAX_DEFER];
static volatile int ndefer_active;
static pthread_mutex_t defer_mu = PTHREAD_MUTEX_INITIALIZER;
static char *bounce;
static size_t bounce_size = 32 << 20, bounce_used;

static struct {
    unsigned long gated, deferred, pool_poisoned, host_poisoned, races,
        passthrough, releases, scrubs;
} stats;

/* ---------------------------------------------------------------- the real runtime */

#define REAL(name) static __typeof__(&name) real_##name
REAL(cudaMemcpyAsync);
REAL(cudaMemsetAsync);
static cudaError_t (*real_cudaLaunchKernel)(const void *, dim3, dim3, void **, size_t,
                                            cudaStream_t);
/* what <<<...>>> calls since CUDA 12.8; declared for nvcc only */
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
REAL(__cudaLaunchKernel);
REAL(cudaLaunchKernelExC);
static cudaError_t (*real_cudaMallocAsync)(void **, size_t, cudaStream_t);
static cudaError_t (*real_cudaMallocFromPoolAsync)(void **, size_t, cudaMemPool_t,
                                                   cudaStream_t);
REAL(cudaFreeAsync);
static cudaError_t (*real_cudaMallocHost)(void **, size_t);
static cudaError_t (*real_cudaHostAlloc)(void **, size_t, unsigned int);
REAL(cudaHostRegister);
REAL(cudaHostUnregister);
REAL(cudaFreeHost);
REAL(cudaFree);
REAL(cudaMemcpy);
REAL(cudaEventCreate);
REAL(cudaEventCreateWithFlags);
REAL(cudaEventRecord);
REAL(cudaEventRecordWithFlags);
REAL(cudaEventDestroy);
REAL(cudaStreamWaitEvent);
REAL(cudaStreamSynchronize);
REAL(cudaEventSynchronize);
REAL(cudaEventQuery);
REAL(cudaStreamQuery);
REAL(cudaDeviceSynchronize);
REAL(cudaDeviceReset);
REAL(cudaLaunchHostFunc);

typedef CUresult (*kernel_param_info_fn)(CUkernel, size_t, size_t *, size_t *);
typedef CUresult (*kernel_name_fn)(const char **, CUkernel);
static kernel_param_info_fn drv_param_info;
static kernel_name_fn drv_kernel_name;

void __libc_free(void *);
const void *stress_gate_fn(void);     /* gate.cu */
const void *stress_signal_fn(void);

/* Look up the runtime's own `name` behind us. Return 0, or -1 if missing. */
static int resolve(void **slot, const char *name)
{
    *slot = dlsym(RTLD_NEXT, name);
    if (*slot == NULL) {
        fprintf(log_to, "stress: off: %s not found in the CUDA runtime\n", name);
        return -1;
    }
    return 0;
}

#define RESOLVE(name) resolve((void **)&real_##name, #name)

/* ---------------------------------------------------------------- small helpers */

static void say(const char *fmt, const char *a, const char *b)
{
    fprintf(log_to, fmt, a, b);
    fflush(log_to);
}

static void vmax(uint32_t *to, const uint32_t *from)
{
    for (int i = 0; i < nstreams; i++)
        if ((int)(from[i] - to[i]) > 0)
            to[i] = from[i];
}

static unsigned long long env_num(const char *name, unsigned long long dflt)
{
    const char *v = getenv(name);
    char *end;
    unsigned long long x;

    if (v == NULL || *v == '\0')
        return dflt;
    x = strtoull(v, &end, 10);
    return *end == '\0' ? x : dflt;
}

/*
 * Overwrite the dead stack below the caller: a buffer that lived in a function
 * which has returned now reads as poison. Only memory below the stack pointer
 * is touched, where nothing is alive.
 */
static __attribute__((noinline)) void scrub_below(void)
{
    char pad[SCRUB_MAX];

    memset(pad, POISON, scrub_bytes);
    __asm__ volatile("" : : "r"(pad) : "memory");
}

static void scrub_stack(void)
{
    char here;

    if (scrub_bytes == 0)
        return;
    if (stack_lo == 0) {
        pthread_attr_t a;
        void *lo;
        size_t n;

        stack_lo = 1;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &lo, &n) == 0)
                stack_lo = (uintptr_t)lo;
            pthread_attr_destroy(&a);
        }
    }
    /* room for the pad, the frames on the way and a margin */
    if (stack_lo > 1 && (uintptr_t)&here - stack_lo > SCRUB_MAX + (64 << 10)) {
        scrub_below();
        stats.scrubs++;
    }
}

/* ---------------------------------------------------------------- streams and clocks */

/* The index of stream h, registering it; -1 when it cannot be tracked. */
static int stream_id(cudaStream_t h)
{
    unsigned int flags = 0;
    int i;

    if (h == 0 || h == cudaStreamLegacy)
        return 0;
    for (i = 1; i < nstreams; i++)
        if (streams[i].h == h)
            return i;
    if (nstreams == MAX_STREAMS)
        return -1;
    if (h != cudaStreamPerThread && cudaStreamGetFlags(h, &flags) != cudaSuccess)
        return -1;
    i = nstreams++;
    memset(&streams[i], 0, sizeof streams[i]);
    streams[i].h = h;
    streams[i].blocking = !(flags & cudaStreamNonBlocking);
    return i;
}

/*
 * Work queued on stream `sid` from now on also comes after what the legacy
 * default stream implies: legacy work waits for every blocking stream, and a
 * blocking stream's work waits for legacy work.
 */
static void legacy_join(int sid)
{
    int b;

    if (sid == 0) {
        for (b = 1; b < nstreams; b++)
            if (streams[b].blocking)
                vmax(streams[0].vc, streams[b].vc);
    } else if (streams[sid].blocking) {
        vmax(streams[sid].vc, streams[0].vc);
    }
}

/* Count one more op on stream sid; return its seq. */
static uint32_t next_seq(int sid)
{
    legacy_join(sid);
    streams[sid].seq++;
    streams[sid].vc[sid] = streams[sid].seq;
    return streams[sid].seq;
}

/* Is stream h being captured into a graph? Such work is left alone. */
static int capturing(cudaStream_t h)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;

    if (h == 0 || h == cudaStreamLegacy)
        return 0;
    return cudaStreamIsCapturing(h, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone;
}

static struct event_info *event_of(cudaEvent_t e, int create)
{
    int i;

    for (i = 0; i < nevents; i++)
        if (events[i].h == e)
            return &events[i];
    if (!create || nevents == MAX_EVENTS)
        return NULL;
    memset(&events[nevents], 0, sizeof events[nevents]);
    events[nevents].h = e;
    return &events[nevents++];
}

/* Open every gate up to vc, and what held work needs first; the lock is held. */
static void release_vc(const uint32_t *vc)
{
    int changed = 1, i;

    vmax(rel_seq, vc);
    while (changed) {
        changed = 0;
        for (i = 0; i < nholds; i++) {
            if (!holds[i].propagated && (int)(rel_seq[holds[i].sid] - holds[i].seq) >= 0) {
                holds[i].propagated = 1;
                vmax(rel_seq, holds[i].vc);
                changed = 1;
            }
        }
    }
    for (i = 0; i < nstreams; i++)
        h_rel[i] = rel_seq[i];
    __sync_synchronize();
    stats.releases++;
    if (verbose) {
        fprintf(log_to, "stress: released");
        for (i = 0; i < nstreams; i++)
            fprintf(log_to, " #%d:%u", i, rel_seq[i]);
        fprintf(log_to, "\n");
    }
}

static void all_clock(uint32_t *vc)
{
    memset(vc, 0, sizeof(vclock));
    for (int i = 0; i < nstreams; i++)
        vc[i] = streams[i].seq;
}

static void release_all(void)
{
    vclock vc;

    all_clock(vc);
    release_vc(vc);
}

static void mark_done(const uint32_t *vc)
{
    vmax(done_seq, vc);
}

static int pending(const struct op *o)
{
    return o->sid >= 0 && (int)(o->seq - done_seq[o->sid]) > 0;
}

/* ---------------------------------------------------------------- ops and gates */

/*
 * Queue a gate on stream h (index sid) for a new op; remember the op with
 * its description. Return the op, or NULL if the gate could not be queued
 * (the op then goes on ungated). The lock is held.
 */
static struct op *gate(cudaStream_t h, int sid, const char *what)
{
    unsigned slot = op_next++ % MAX_OPS;
    struct op *o = &ops[slot];
    uint32_t seq = next_seq(sid);
    unsigned *rel = d_rel, *hold = d_hold + slot, *tout = d_timed_out + slot;
    unsigned s = (unsigned)sid;
    void *args[] = { &rel, &s, &seq, &hold, &tout, &delay_ns, &timeout_ns };

    h_hold[slot] = 0;
    h_timed_out[slot] = 0;
    memset(o, 0, sizeof *o);
    o->sid = sid;
    o->seq = seq;
    snprintf(o->what, sizeof o->what, "%s", what);
    if (real_cudaLaunchKernel(stress_gate_fn(), one, one,
                              args, 0, h) != cudaSuccess) {
        (void)cudaGetLastError();
        o->sid = -1;
        stats.passthrough++;
        return NULL;
    }
    stats.gated++;
    if (verbose)
        fprintf(log_to, "stress: held #%d:%u %s\n", sid, seq, what);
    return o;
}

static void add_range(struct op *o, const void *p, size_t n, int reads_host)
{
    if (o == NULL || o->nr == MAX_RANGES || p == NULL)
        return;
    o->r[o->nr].a = (uintptr_t)p;
    o->r[o->nr].b = (uintptr_t)p + (n ? n : 1);
    o->r[o->nr].reads_host = reads_host;
    o->nr++;
}

static int overlaps(const struct op *o, uintptr_t a, size_t n, int host_reads_only)
{
    for (int i = 0; i < o->nr; i++)
        if (o->r[i].a < a + n && a < o->r[i].b &&
            (!host_reads_only || o->r[i].reads_host))
            return 1;
    return 0;
}

/* cudaMemoryTypeHost (pinned), ...Device, ...Managed or ...Unregistered (pageable). */
static int mem_type(const void *p)
{
    struct cudaPointerAttributes a;

    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return cudaMemoryTypeUnregistered;
    }
    return a.type;
}

static size_t find_alloc(struct alloc_info *v, int *n, uintptr_t p, int remove)
{
    for (int i = 0; i < *n; i++) {
        if (v[i].p == p) {
            size_t sz = v[i].n;

            if (remove)
                v[i] = v[--*n];
            return sz;
        }
    }
    return 0;
}

static void add_alloc(struct alloc_info *v, int *n, const void *p, size_t sz)
{
    if (p != NULL && *n < MAX_ALLOCS) {
        v[*n].p = (uintptr_t)p;
        v[*n].n = sz;
        (*n)++;
    }
}

/* ---------------------------------------------------------------- deferred pageable reads */

/* Runs in the driver's thread when the stream reaches it: read the source now. */
static void CUDART_CB deferred_read(void *arg)
{
    struct defer_info *d = (struct defer_info *)arg;

    memcpy(d->bounce, (const void *)d->src, d->n);
}

/* Pinned bounce space for n bytes, or NULL when every slot is still in use. */
static void *bounce_get(size_t n)
{
    size_t need = (n + 255) & ~(size_t)255;
    int i, busy = 0;

    for (i = 0; i < MAX_DEFER; i++)
        if (defers[i].active && (int)(defers[i].seq - done_seq[defers[i].sid]) > 0)
            busy = 1;
    if (!busy)
        bounce_used = 0;        /* everything read so far has been waited for */
    if (bounce_used + need > bounce_size)
        return NULL;
    bounce_used += need;
    return bounce + bounce_used - need;
}

static struct defer_info *defer_slot(void)
{
    for (int i = 0; i < MAX_DEFER; i++)
        if (!defers[i].active || (int)(defers[i].seq - done_seq[defers[i].sid]) <= 0)
            return &defers[i];
    return NULL;
}

/* ---------------------------------------------------------------- start and end */

static void report(void)
{
    unsigned timeouts = 0;

    if (!on)
        return;
    for (int i = 0; i < MAX_OPS; i++)
        timeouts += h_timed_out[i] != 0;
    fprintf(log_to, "stress: summary: gated=%lu deferred=%lu pool_poisoned=%lu "
            "host_poisoned=%lu races=%lu timeouts=%u passthrough=%lu\n",
            stats.gated, stats.deferred, stats.pool_poisoned, stats.host_poisoned,
            stats.races, timeouts, stats.passthrough);
    if (timeouts)
        fprintf(log_to, "stress: %u gate(s) opened after %llu ms with nobody waiting: "
                "the program waits in a way the shim does not see\n",
                timeouts, timeout_ns / 1000000);
    fflush(log_to);
}

/* At exit: say what was done, and let everything still shut run. */
static void stress_exit(void)
{
    pthread_mutex_lock(&mu);
    if (on) {
        release_all();
        report();
        on = 0;
    }
    pthread_mutex_unlock(&mu);
}

static void stress_init(void)
{
    const char *path = getenv("STRESS_LOG");
    size_t words = MAX_STREAMS + 2 * MAX_OPS;
    enum cudaDriverEntryPointQueryResult q;
    unsigned *h;

    log_to = stderr;
    if (path != NULL && *path != '\0') {
        FILE *f = fopen(path, "a");

        if (f != NULL)
            log_to = f;
    }
    verbose = (int)env_num("STRESS_VERBOSE", 0);
    delay_ns = env_num("STRESS_DELAY_US", 500) * 1000ULL;
    timeout_ns = env_num("STRESS_TIMEOUT_MS", 2000) * 1000000ULL;
    scrub_bytes = (size_t)env_num("STRESS_SCRUB_KB", 64) << 10;
    if (scrub_bytes > SCRUB_MAX)
        scrub_bytes = SCRUB_MAX;
    bounce_size = (size_t)env_num("STRESS_BOUNCE_MB", 32) << 20;

    /* every one is looked up, so that calls still go through when the shim is off */
    if (RESOLVE(cudaMemcpyAsync) | RESOLVE(cudaMemsetAsync) | RESOLVE(cudaLaunchKernel) |
        RESOLVE(__cudaLaunchKernel) | RESOLVE(cudaLaunchKernelExC) |
        RESOLVE(cudaMallocAsync) | RESOLVE(cudaMallocFromPoolAsync) |
        RESOLVE(cudaFreeAsync) | RESOLVE(cudaMallocHost) | RESOLVE(cudaHostAlloc) |
        RESOLVE(cudaHostRegister) | RESOLVE(cudaHostUnregister) |
        RESOLVE(cudaFreeHost) | RESOLVE(cudaFree) | RESOLVE(cudaMemcpy) |
        RESOLVE(cudaEventCreate) | RESOLVE(cudaEventCreateWithFlags) |
        RESOLVE(cudaEventRecord) | RESOLVE(cudaEventRecordWithFlags) |
        RESOLVE(cudaEventDestroy) | RESOLVE(cudaStreamWaitEvent) |
        RESOLVE(cudaStreamSynchronize) | RESOLVE(cudaEventSynchronize) |
        RESOLVE(cudaEventQuery) | RESOLVE(cudaStreamQuery) |
        RESOLVE(cudaDeviceSynchronize) | RESOLVE(cudaDeviceReset) |
        RESOLVE(cudaLaunchHostFunc))
        return;

    /* Gates poll these words in host memory, over the bus: the host opens them. */
    if (real_cudaHostAlloc((void **)&h, words * sizeof *h,
                           cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
        real_cudaHostAlloc((void **)&bounce, bounce_size, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(log_to, "stress: off: cannot allocate pinned host memory\n");
        return;
    }
    memset(h, 0, words * sizeof *h);
    h_rel = h;
    h_hold = h + MAX_STREAMS;
    h_timed_out = h + MAX_STREAMS + MAX_OPS;
    if (cudaHostGetDevicePointer((void **)&d_rel, h, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(log_to, "stress: off: pinned memory is not mapped to the GPU\n");
        return;
    }
    d_hold = d_rel + MAX_STREAMS;
    d_timed_out = d_rel + MAX_STREAMS + MAX_OPS;

    /* Kernel arguments are scanned for pointers: which memory a kernel uses. */
    if (cudaGetDriverEntryPointByVersion("cuKernelGetParamInfo", (void **)&drv_param_info,
                                         12080, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        drv_param_info = NULL;
    if (cudaGetDriverEntryPointByVersion("cuKernelGetName", (void **)&drv_kernel_name,
                                         12080, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        drv_kernel_name = NULL;
    (void)cudaGetLastError();

    memset(&streams[0], 0, sizeof streams[0]);
    streams[0].blocking = 1;    /* index 0: the legacy default stream */
    nstreams = 1;
    atexit(stress_exit);
    on = 1;
    fprintf(log_to, "stress: on: gates open when the host waits, +%llu us; pageable "
            "reads deferred; stack scrubbed %zu KiB; frees poisoned%s\n",
            delay_ns / 1000, scrub_bytes >> 10,
            drv_param_info ? "" : " (kernel arguments not scanned: driver too old)");
    fflush(log_to);
}

/*
 * Before anything else in the process: kernels must load when the context is
 * made. Loaded lazily (the default since CUDA 12.2), a kernel's first launch
 * waits for the device to be idle -- and a gate waits for the host: both
 * would wait until the gate's timeout.
 */
__attribute__((constructor)) static void stress_preload(void)
{
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
}

/*
 * Every entry point starts here: set up once, scrub the dead stack, take the
 * lock. Returns 0 when the shim is off (the call goes straight through).
 */
static int enter(void)
{
    if (in_shim)
        return 0;
    pthread_once(&init_once, stress_init);
    if (!on)
        return 0;
    scrub_stack();
    pthread_mutex_lock(&mu);
    in_shim = 1;
    if (!on) {
        in_shim = 0;
        pthread_mutex_unlock(&mu);
        return 0;
    }
    return 1;
}

static void leave(void)
{
    in_shim = 0;
    pthread_mutex_unlock(&mu);
}

/* ---------------------------------------------------------------- waits */

/*
 * The host is about to wait for everything up to vc: open those gates, wait
 * without the lock (other threads may queue work), then remember it is done.
 * With `query`, done only if the call says so.
 */
#define WAIT_FOR(vc, call, query)                                       \
    do {                                                                \
        cudaError_t err_;                                               \
        release_vc(vc);                                                 \
        leave();                                                        \
        err_ = (call);                                                  \
        pthread_mutex_lock(&mu);                                        \
        in_shim = 1;                                                    \
        if (err_ == cudaSuccess || !(query))                            \
            mark_done(vc);                                              \
        leave();                                                        \
        return err_;                                                    \
    } while (0)

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    vclock vc;
    int sid;

    if (!enter())
        return real_cudaStreamSynchronize(s);
    sid = stream_id(s);
    if (sid < 0)
        all_clock(vc);
    else
        memcpy(vc, streams[sid].vc, sizeof vc);
    WAIT_FOR(vc, real_cudaStreamSynchronize(s), 0);
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    vclock vc;
    int sid;

    if (!enter())
        return real_cudaStreamQuery(s);
    sid = stream_id(s);
    if (sid < 0)
        all_clock(vc);
    else
        memcpy(vc, streams[sid].vc, sizeof vc);
    WAIT_FOR(vc, real_cudaStreamQuery(s), 1);
}

/* What waiting for event e waits for: its clock, or everything if unknown. */
static void event_clock(cudaEvent_t e, uint32_t *vc)
{
    struct event_info *ev = event_of(e, 0);

    if (ev != NULL && ev->recorded)
        memcpy(vc, ev->vc, sizeof(vclock));
    else if (ev != NULL)
        memset(vc, 0, sizeof(vclock));     /* never recorded: nothing to wait for */
    else
        all_clock(vc);
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    vclock vc;

    if (!enter())
        return real_cudaEventSynchronize(e);
    event_clock(e, vc);
    WAIT_FOR(vc, real_cudaEventSynchronize(e), 0);
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    vclock vc;

    if (!enter())
        return real_cudaEventQuery(e);
    event_clock(e, vc);
    WAIT_FOR(vc, real_cudaEventQuery(e), 1);
}

cudaError_t cudaDeviceSynchronize(void)
{
    vclock vc;

    if (!enter())
        return real_cudaDeviceSynchronize();
    all_clock(vc);
    WAIT_FOR(vc, real_cudaDeviceSynchronize(), 0);
}

cudaError_t cudaDeviceReset(void)
{
    if (!enter())
        return real_cudaDeviceReset();
    release_all();
    leave();
    return real_cudaDeviceReset();
}

/* cudaFree waits for the whole device before it frees. */
cudaError_t cudaFree(void *p)
{
    vclock vc;

    if (!enter())
        return real_cudaFree(p);
    all_clock(vc);
    WAIT_FOR(vc, real_cudaFree(p), 0);
}

/* A blocking copy on the legacy stream: it waits for what that stream waits for. */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    vclock vc;

    if (!enter())
        return real_cudaMemcpy(dst, src, n, k);
    next_seq(0);
    memcpy(vc, streams[0].vc, sizeof vc);
    WAIT_FOR(vc, real_cudaMemcpy(dst, src, n, k), 0);
}

/* ---------------------------------------------------------------- events */

/* A new event: until it is recorded, waiting for it waits for nothing. */
static cudaError_t new_event(cudaEvent_t *e, cudaError_t err)
{
    struct event_info *ev;

    if (err == cudaSuccess && (ev = event_of(*e, 1)) != NULL)
        ev->recorded = 0;
    leave();
    return err;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    if (!enter())
        return real_cudaEventCreate(e);
    return new_event(e, real_cudaEventCreate(e));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    if (!enter())
        return real_cudaEventCreateWithFlags(e, flags);
    return new_event(e, real_cudaEventCreateWithFlags(e, flags));
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    struct event_info *ev;
    int sid;

    if (!enter())
        return real_cudaEventRecord(e, s);
    sid = stream_id(s);
    ev = event_of(e, 1);
    if (ev != NULL) {
        if (sid >= 0) {
            legacy_join(sid);
            memcpy(ev->vc, streams[sid].vc, sizeof ev->vc);
            ev->recorded = 1;
        } else {
            *ev = events[--nevents];    /* untracked stream: a wait on it opens everything */
        }
    }
    leave();
    return real_cudaEventRecord(e, s);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int f)
{
    struct event_info *ev;
    int sid;

    if (!enter())
        return real_cudaEventRecordWithFlags(e, s, f);
    sid = stream_id(s);
    ev = event_of(e, 1);
    if (ev != NULL && sid >= 0) {
        legacy_join(sid);
        memcpy(ev->vc, streams[sid].vc, sizeof ev->vc);
        ev->recorded = 1;
    }
    leave();
    return real_cudaEventRecordWithFlags(e, s, f);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    struct event_info *ev;

    if (!enter())
        return real_cudaEventDestroy(e);
    ev = event_of(e, 0);
    if (ev != NULL)
        *ev = events[--nevents];
    leave();
    return real_cudaEventDestroy(e);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
    struct event_info *ev;
    int sid;

    if (!enter())
        return real_cudaStreamWaitEvent(s, e, f);
    sid = stream_id(s);
    ev = event_of(e, 0);
    if (sid >= 0 && ev != NULL && ev->recorded) {
        legacy_join(sid);
        vmax(streams[sid].vc, ev->vc);
    }
    leave();
    return real_cudaStreamWaitEvent(s, e, f);
}

/* ---------------------------------------------------------------- copies and memsets */

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
                                       enum cudaMemcpyKind kind, cudaStream_t s)
{
    int sid, st, dt, on_gpu_src, on_gpu_dst;
    struct op *o;
    struct defer_info *d;
    void *b;
    cudaError_t err;

    if (!enter())
        return real_cudaMemcpyAsync(dst, src, n, kind, s);
    sid = stream_id(s);
    if (sid < 0 || n == 0 || capturing(s)) {
        stats.passthrough += sid < 0;
        leave();
        return real_cudaMemcpyAsync(dst, src, n, kind, s);
    }
    st = mem_type(src);
    dt = mem_type(dst);
    on_gpu_src = st == cudaMemoryTypeDevice || st == cudaMemoryTypeManaged;
    on_gpu_dst = dt == cudaMemoryTypeDevice || dt == cudaMemoryTypeManaged;

    if (st == cudaMemoryTypeUnregistered && on_gpu_dst &&
        (d = defer_slot()) != NULL && (b = bounce_get(n)) != NULL &&
        (o = gate(s, sid, "copy from pageable host memory")) != NULL) {
        /* from pageable memory: read it when the stream gets here, not now */
        add_range(o, dst, n, 0);
        add_range(o, src, n, 1);
        pthread_mutex_lock(&defer_mu);
        d->src = (uintptr_t)src;
        d->n = n;
        d->sid = sid;
        d->seq = o->seq;
        d->bounce = b;
        d->active = 1;
        ndefer_active = 1;
        pthread_mutex_unlock(&defer_mu);
        err = real_cudaLaunchHostFunc(s, deferred_read, d);
        if (err == cudaSuccess)
            err = real_cudaMemcpyAsync(dst, b, n, cudaMemcpyHostToDevice, s);
        stats.deferred++;
        leave();
        return err;
    }
    if (dt == cudaMemoryTypeUnregistered || st == cudaMemoryTypeUnregistered ||
        (!on_gpu_src && !on_gpu_dst)) {
        /* pageable or host-to-host: the driver does it during the call, after
           the stream's earlier work, so that work is let through first */
        vclock vc;

        next_seq(sid);
        memcpy(vc, streams[sid].vc, sizeof vc);
        stats.passthrough += on_gpu_dst;    /* a pageable source not deferred */
        WAIT_FOR(vc, real_cudaMemcpyAsync(dst, src, n, kind, s), 0);
    }
    o = gate(s, sid, on_gpu_src && on_gpu_dst ? "device-to-device copy"
                     : on_gpu_dst ? "copy from pinned host memory"
                                  : "copy to pinned host memory");
    add_range(o, dst, n, 0);
    add_range(o, src, n, !on_gpu_src);
    leave();
    return real_cudaMemcpyAsync(dst, src, n, kind, s);
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    int sid;
    struct op *o;

    if (!enter())
        return real_cudaMemsetAsync(p, v, n, s);
    sid = stream_id(s);
    if (sid >= 0 && !capturing(s)) {
        o = gate(s, sid, "memset");
        add_range(o, p, n, 0);
    }
    leave();
    return real_cudaMemsetAsync(p, v, n, s);
}

/* ---------------------------------------------------------------- kernels */

/*
 * "scale_kernel" from a mangled name such as _Z12scale_kernelPfPKfm (the
 * kernels of a .cu file have C++ names), into out.
 */
static void plain_name(const char *name, char *out, size_t size)
{
    const char *p = name;
    unsigned long len = 0;

    if (strncmp(p, "_Z", 2) == 0) {
        for (p += 2; *p >= '0' && *p <= '9'; p++)
            len = len * 10 + (unsigned long)(*p - '0');
        if (len > 0 && len < size && strlen(p) >= len) {
            memcpy(out, p, len);
            out[len] = '\0';
            return;
        }
    }
    snprintf(out, size, "%s", name);
}

/* Gate a kernel launch on s and remember the pointers among its arguments. */
static void gate_kernel(CUkernel k, void **args, cudaStream_t s)
{
    char what[64], kname[48] = "?";
    const char *name = NULL;
    size_t off, size, i, w;
    int sid = stream_id(s);
    struct op *o;

    if (sid < 0 || capturing(s)) {
        stats.passthrough += sid < 0;
        return;
    }
    if (k != NULL && drv_kernel_name != NULL && drv_kernel_name(&name, k) == CUDA_SUCCESS &&
        name != NULL)
        plain_name(name, kname, sizeof kname);
    snprintf(what, sizeof what, "kernel %s", kname);
    o = gate(s, sid, what);
    if (o == NULL || k == NULL || drv_param_info == NULL || args == NULL)
        return;
    for (i = 0; drv_param_info(k, i, &off, &size) == CUDA_SUCCESS; i++) {
        for (w = 0; w + sizeof(uintptr_t) <= size; w += sizeof(uintptr_t)) {
            uintptr_t v;

            memcpy(&v, (const char *)args[i] + w, sizeof v);
            if (v > 0x10000)
                add_range(o, (const void *)v, 1, 0);
        }
    }
    (void)cudaGetLastError();
}

static CUkernel kernel_of(const void *func)
{
    cudaKernel_t k = NULL;

    if (cudaGetKernel(&k, func) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return (CUkernel)k;
}

/* What <<<grid, block, shmem, stream>>> calls (CUDA 12.8 and later). */
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args,
                                          size_t shmem, cudaStream_t s)
{
    if (!enter())
        return real___cudaLaunchKernel(k, grid, block, args, shmem, s);
    gate_kernel((CUkernel)k, args, s);
    leave();
    return real___cudaLaunchKernel(k, grid, block, args, shmem, s);
}

cudaError_t cudaLaunchKernel(const void *f, dim3 grid, dim3 block, void **args,
                                        size_t shmem, cudaStream_t s)
{
    if (!enter())
        return real_cudaLaunchKernel(f, grid, block, args, shmem, s);
    gate_kernel(kernel_of(f), args, s);
    leave();
    return real_cudaLaunchKernel(f, grid, block, args, shmem, s);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f,
                                           void **args)
{
    if (!enter())
        return real_cudaLaunchKernelExC(c, f, args);
    if (c != NULL)
        gate_kernel(kernel_of(f), args, c->stream);
    leave();
    return real_cudaLaunchKernelExC(c, f, args);
}

/* ---------------------------------------------------------------- stream-ordered memory */

cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    cudaError_t err;

    if (!enter())
        return real_cudaMallocAsync(p, n, s);
    err = real_cudaMallocAsync(p, n, s);
    if (err == cudaSuccess)
        add_alloc(pool_allocs, &npool, *p, n);
    leave();
    return err;
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool,
                                               cudaStream_t s)
{
    cudaError_t err;

    if (!enter())
        return real_cudaMallocFromPoolAsync(p, n, pool, s);
    err = real_cudaMallocFromPoolAsync(p, n, pool, s);
    if (err == cudaSuccess)
        add_alloc(pool_allocs, &npool, *p, n);
    leave();
    return err;
}

/*
 * Give p back to the pool in stream s. Work in another stream that uses p and
 * is not ordered before this point (by an event it recorded and s waited
 * for, or a host wait) races with the free: it is held until the poison
 * queued here has landed. The poison is queued in any case.
 */
cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    int sid, i, nheld = 0;
    unsigned held[MAX_RANGES];
    cudaError_t err;
    size_t n;
    const struct op *victim = NULL;

    if (!enter())
        return real_cudaFreeAsync(p, s);
    sid = stream_id(s);
    n = find_alloc(pool_allocs, &npool, (uintptr_t)p, 1);
    if (sid < 0 || p == NULL || n == 0 || capturing(s)) {
        leave();
        return real_cudaFreeAsync(p, s);
    }
    legacy_join(sid);
    for (i = 0; i < MAX_OPS; i++) {
        const struct op *o = &ops[i];

        if (!pending(o) || o->sid == sid || (int)(streams[sid].vc[o->sid] - o->seq) >= 0 ||
            !overlaps(o, (uintptr_t)p, n, 0))
            continue;
        stats.races++;
        victim = o;
        if ((int)(rel_seq[o->sid] - o->seq) < 0 && nheld < MAX_RANGES && nholds < MAX_HOLDS) {
            h_hold[i] = 1;
            held[nheld++] = (unsigned)i;
            holds[nholds].sid = o->sid;
            holds[nholds].seq = o->seq;
            holds[nholds].propagated = 0;
            memcpy(holds[nholds].vc, streams[sid].vc, sizeof(vclock));
            nholds++;
        }
    }
    if (victim != NULL) {
        char a[96], b[96];

        snprintf(a, sizeof a, "%p (%zu bytes) on stream #%d", p, n, sid);
        snprintf(b, sizeof b, "%s on stream #%d", victim->what, victim->sid);
        say("stress: race: cudaFreeAsync(%s) is not ordered after %s, which uses "
            "that memory: it now reads poison\n", a, b);
    }
    next_seq(sid);
    if (real_cudaMemsetAsync(p, POISON, n, s) == cudaSuccess)
        stats.pool_poisoned++;
    err = real_cudaFreeAsync(p, s);
    /* the held work goes once the memory is poisoned and freed (a checker
       such as compute-sanitizer then sees the use after free, every time) */
    for (i = 0; i < nheld; i++) {
        unsigned *slot = d_hold + held[i];
        void *args[] = { &slot };

        if (real_cudaLaunchKernel(stress_signal_fn(), one, one, args, 0, s) != cudaSuccess)
            h_hold[held[i]] = 0;
    }
    leave();
    return err;
}

/* ---------------------------------------------------------------- host memory */

cudaError_t cudaMallocHost(void **p, size_t n)
{
    cudaError_t err;

    if (!enter())
        return real_cudaMallocHost(p, n);
    err = real_cudaMallocHost(p, n);
    if (err == cudaSuccess)
        add_alloc(host_allocs, &nhost, *p, n);
    leave();
    return err;
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    cudaError_t err;

    if (!enter())
        return real_cudaHostAlloc(p, n, flags);
    err = real_cudaHostAlloc(p, n, flags);
    if (err == cudaSuccess)
        add_alloc(host_allocs, &nhost, *p, n);
    leave();
    return err;
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
    cudaError_t err;

    if (!enter())
        return real_cudaHostRegister(p, n, flags);
    err = real_cudaHostRegister(p, n, flags);
    if (err == cudaSuccess)
        add_alloc(host_allocs, &nhost, p, n);
    leave();
    return err;
}

/*
 * Host memory [p, p+n) is being freed: every queued copy that still reads it
 * now reads poison. Then let everything through, so that the real free (which
 * may wait for the device) does not wait for a shut gate.
 */
static void free_host_range(const char *how, void *p, size_t n)
{
    const struct op *victim = NULL;
    int i;

    for (i = 0; i < MAX_OPS; i++) {
        if (pending(&ops[i]) && overlaps(&ops[i], (uintptr_t)p, n, 1)) {
            victim = &ops[i];
            memset(p, POISON, n);
        }
    }
    if (victim != NULL) {
        char b[96];

        stats.host_poisoned++;
        snprintf(b, sizeof b, "%s on stream #%d", victim->what, victim->sid);
        say("stress: %s while %s, not waited for, still reads it: it now reads poison\n",
            how, b);
    }
    release_all();
}

cudaError_t cudaFreeHost(void *p)
{
    size_t n;

    if (!enter())
        return real_cudaFreeHost(p);
    n = find_alloc(host_allocs, &nhost, (uintptr_t)p, 1);
    if (p != NULL && n != 0)
        free_host_range("cudaFreeHost", p, n);
    else
        release_all();
    leave();
    return real_cudaFreeHost(p);
}

cudaError_t cudaHostUnregister(void *p)
{
    size_t n;

    if (!enter())
        return real_cudaHostUnregister(p);
    n = find_alloc(host_allocs, &nhost, (uintptr_t)p, 1);
    if (p != NULL && n != 0)
        free_host_range("cudaHostUnregister", p, n);
    else
        release_all();
    leave();
    return real_cudaHostUnregister(p);
}

/*
 * free(): only when a deferred read of pageable memory is still queued does
 * this do anything: the block is poisoned and kept (never handed back to
 * malloc), so the late read sees poison rather than faulting.
 */
void free(void *p)
{
    size_t n;
    int i, hit = 0;

    if (p == NULL || !ndefer_active || in_shim) {
        __libc_free(p);
        return;
    }
    n = malloc_usable_size(p);
    pthread_mutex_lock(&defer_mu);
    for (i = 0; i < MAX_DEFER; i++) {
        struct defer_info *d = &defers[i];

        if (d->active && (int)(d->seq - done_seq[d->sid]) > 0 &&
            d->src < (uintptr_t)p + n && (uintptr_t)p < d->src + d->n)
            hit = 1;
    }
    pthread_mutex_unlock(&defer_mu);
    if (!hit) {
        __libc_free(p);
        return;
    }
    memset(p, POISON, n);
    stats.host_poisoned++;
    fprintf(log_to, "stress: free(%p) while a queued copy still reads it: it now "
            "reads poison (the block is kept)\n", p);
    fflush(log_to);
}
