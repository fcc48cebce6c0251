/*
 * trace.h -- the trace file in memory, and what the streamtrace CLI does
 * with it: parse (trace_parse.c), cut to a window (trace_window.c), select
 * and measure (trace_query.c), draw (trace_render.c: the terminal timeline;
 * trace_export.c: JSON and SVG; trace_summary.c: the figures). The file
 * format is FORMAT.md.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum rec_kind { K_COPY, K_KERNEL, K_MEMSET, K_SYNC, K_EVENT, K_API, K_NVTX, K_NKINDS };
enum copy_dir { D_H2D, D_D2H, D_D2D, D_H2H, D_P2P, D_UNKNOWN, D_NDIRS };
enum mem_kind { M_UNKNOWN, M_PAGEABLE, M_PINNED, M_DEVICE, M_MANAGED, M_NKINDS };
enum sync_kind { S_STREAM, S_EVENT, S_CONTEXT, S_WAIT, S_UNKNOWN };
enum stream_kind { ST_CREATED, ST_DEFAULT, ST_PER_THREAD, ST_INTERNAL, ST_UNKNOWN,
		   ST_NKINDS };
#define ST_NOT_CREATED ST_NKINDS
/* Does a stream synchronise with the legacy default stream? */
enum stream_sync { SY_NONE, SY_BLOCKING, SY_NONBLOCKING };
/* How a peer copy went: directly between the devices, or through the host. */
enum copy_via { VIA_NONE, VIA_DIRECT, VIA_HOST };

#define NO_STREAM UINT32_MAX /* host records, and syncs of the context */
#define NO_DEVICE UINT32_MAX /* host records; a peer copy's unknown peer */
#define NO_THREAD UINT32_MAX /* a GPU record no runtime call of the trace queued */

/* A job (FORMAT.md): the traces of several processes, one after another.
 * A stream's id in memory carries its process in its high bits (process 0:
 * the id as written), so that the streams of two processes never meet. */
#define PROC_SHIFT 24
#define PROC_MAX 255
static inline uint32_t stream_proc(uint32_t id)
{
	return id == UINT32_MAX ? 0 : id >> PROC_SHIFT;
}
static inline uint32_t stream_local(uint32_t id)
{
	return id == UINT32_MAX ? id : id & ((1u << PROC_SHIFT) - 1);
}

/* A time interval, ns on CUPTI's clock. */
struct ival {
	uint64_t a, b;
};

/* One record: a time interval (an event has start == end). */
struct rec {
	uint64_t start, end; /* ns, CUPTI's clock */
	uint64_t bytes;      /* copies and memsets */
	uint32_t stream;     /* GPU records and syncs; else NO_STREAM */
	uint32_t device;     /* GPU records, syncs, events; else NO_DEVICE */
	uint32_t peer;       /* a P2P copy's destination device (device: its source) */
	uint32_t tid;        /* host thread: api and nvtx */
	uint32_t line;       /* line in the file, for stable sorting */
	uint32_t corr;       /* CUPTI's correlation id (0: none) */
	uint32_t cur;        /* device current at the runtime call that queued it
			      * (api: its own call); NO_DEVICE: not known */
	uint32_t graph;      /* format 4: the CUDA graph that launched a GPU
			      * record (0: none, or not known) */
	uint64_t node;       /* ... and its node in that graph (0: none) */
	uint32_t ret;        /* format 4: an api call's cudaError_t (0: cudaSuccess) */
	uint32_t event;      /* format 5: an event's, a wait's or an event
			      * synchronize's CUDA event (CUPTI's id) */
	uint64_t link;       /* ... and CUPTI's cudaEventSyncId, which ties a
			      * wait to the record it waited for */
	uint8_t linked;      /* 1: event and link are known (format 5) */
	uint8_t proc;        /* the process of a job (0: the first, or the only) */
	uint8_t kind, dir, src, dst, async, sync, via;
	int32_t grid[3], block[3];
	const char *name; /* kernel, api, nvtx; else NULL */
};

struct meta {
	const char *key, *value;
	uint32_t proc;       /* the process of a job whose line it is */
};

struct stream_decl {
	uint32_t id, device; /* id: with its process (stream_proc) */
	uint8_t kind, sync;
};

struct device_decl {
	uint32_t id;
	int copy_engines, sm_count;
	const char *name;
};

/* Which host thread queued the GPU work of a correlation id. */
struct corr_tid {
	uint32_t corr, tid;
};

/* The device current to the thread at the runtime call of a correlation id
 * (format 3's `current` lines). */
struct corr_dev {
	uint32_t corr, device;
};

/* A cudaEventRecord (format 5): timed or not, where it was queued and the
 * link that the waits for it carry. */
struct mark {
	uint32_t corr, stream, device, event;
	uint64_t link;
	uint8_t linked;
};

/* A cudaEventElapsedTime (format 6's `elapsed` lines): the correlation ids
 * of the cudaEventRecord calls of its start and stop events (0: the event
 * had no record). */
struct elapsed_of {
	uint32_t corr, start, stop;
};

struct trace {
	const char *path;
	char *text;              /* the file; names point into it */
	struct rec *recs;        /* sorted by start, then end */
	size_t n;
	struct meta *meta;
	size_t nmeta;
	int version;             /* of the file format: 1 to 6 */
	struct stream_decl *streams; /* sorted by id */
	size_t nstreams;
	struct device_decl *devices; /* sorted by id */
	size_t ndevices;
	struct corr_tid *threads; /* the api records' correlation ids, sorted */
	size_t nthreads;
	struct corr_dev *currents; /* the `current` lines, sorted by corr */
	size_t ncurrents;
	struct mark *marks;      /* format 5: every event record, by corr */
	size_t nmarks;
	struct elapsed_of *elapsed; /* format 6: what each timing read, by corr */
	size_t nelapsed;
	int complete;            /* the `end` line was there (every process's) */
	int nprocs;              /* processes: 1, or a job's (FORMAT.md) */
	uint64_t dropped;        /* from the `end` line */
	uint64_t t0, t1;         /* first start, last end (0, 0 if empty) */
	/* A view (trace_window): only the records inside the windows, cut at
	 * their edges; the rest is borrowed from `base`, and t0 stays base's, so
	 * times print the same as in the whole trace. */
	const struct trace *base; /* the whole trace, or NULL if this is it */
	struct ival *win;        /* the windows, sorted and disjoint */
	size_t nwin;
	char *win_desc;          /* what the command line asked for */
};

/* trace_parse.c */
int trace_load(const char *path, struct trace *t);
void trace_free(struct trace *t);
const struct elapsed_of *trace_elapsed(const struct trace *t, uint32_t corr);
int trace_rec_cmp(const void *a, const void *b);
const char *trace_meta(const struct trace *t, const char *key);
int trace_stream_kind(const struct trace *t, uint32_t id);
struct stream_decl trace_stream(const struct trace *t, uint32_t id);
const struct device_decl *trace_device(const struct trace *t, uint32_t id);
uint32_t trace_thread_of(const struct trace *t, const struct rec *r);
int trace_is_gpu(const struct rec *r);
const char *kind_name(int kind);
const char *dir_name(int dir);
const char *mem_name(int mem);
const char *sync_name(int sync);
const char *stream_kind_name(int kind);
const char *stream_sync_name(int sync);
const char *via_name(int via);
int mem_parse(const char *s);
const char *trace_meta_of(const struct trace *t, uint32_t proc, const char *key);
int stream_id_text(const struct trace *t, uint32_t id, char *buf, size_t n);
int stream_id_parse(const char *s, uint32_t *id);
int host_mem(const struct rec *r);

/* trace_query.c */
enum name_match { NM_NONE, NM_SUBSTR, NM_EXACT, NM_PREFIX };

struct sel {
	unsigned kinds; /* bit per rec_kind */
	unsigned dirs;  /* bit per copy_dir, for copies */
	int via;        /* copy_via of a peer copy, or -1 for any */
	int sync;       /* sync_kind, or -1 for any */
	int match;      /* name_match */
	const char *name;
};

struct filter {
	int by_stream, mem;     /* mem: -1 none */
	int stream_kind;        /* -1: by id (stream); else a stream_kind, or
				 * ST_NOT_CREATED: any kind but created */
	int stream_sync;        /* -1: any; else the streams of that stream_sync */
	uint32_t stream;
	uint32_t device;        /* NO_DEVICE: any */
	uint32_t thread;        /* NO_THREAD: any */
	uint32_t current;       /* NO_DEVICE: any; else queued with that device current */
	int current_other;      /* 1: queued while a device other than its stream's was current */
	int captured;           /* 1: made while a stream capture was open (cap, ncap) */
	const struct capspan *cap;
	size_t ncap;
};

/* a stream capture open: from its cudaStreamBeginCapture call (start, line)
 * to the next cudaStreamEndCapture call's; ended 0: never ended (open to
 * the end of the trace) */
struct capspan {
	uint64_t s0, s1;
	uint32_t l0, l1;
	int ended;
};

int sel_parse(const char *s, struct sel *out);
struct filter filter_none(void);
size_t select_recs(const struct trace *t, const struct sel *s,
		   const struct filter *f, const struct rec ***out);
size_t merge_union(const struct rec *const *r, size_t n, struct ival *out);
uint64_t ivals_len(const struct ival *v, size_t n);
uint64_t ivals_overlap(const struct ival *a, size_t na, const struct ival *b,
		       size_t nb);
int query_main(const struct trace *t, int argc, char **argv);

/* trace_hb.c: what the program guaranteed (happens-before) */
int ask_main(const struct trace *t, int argc, char **argv);
void ask_usage(FILE *f);

/* trace_window.c */
#define WIN_MAX 32

struct winspec {
	const char *spec[WIN_MAX]; /* the --window arguments */
	int n;
	const char *from, *to;     /* --from MS, --to MS; NULL if not given */
	int whole;                 /* --whole: the records that start in a
				    * window, whole, none cut at its edges */
};

extern const char win_usage[];
int win_option(int argc, char **argv, int *i, struct winspec *w);
int trace_window(const struct trace *t, const struct winspec *w, struct trace *view);

/* trace_render.c, trace_export.c, trace_summary.c */
int render_timeline(const struct trace *t, FILE *f, int width, int height, int color);
int render_json(const struct trace *t, FILE *f);
int render_svg(const struct trace *t, FILE *f);
int render_summary(const struct trace *t, FILE *f, int width);

#endif
