/*
 * trace_render.c -- the terminal timeline, and what every drawing shares:
 * lanes, panels, styles (render.h). JSON and SVG are in trace_export.c, the
 * summary in trace_summary.c.
 *
 * Lanes: one per GPU stream, by device (on each, the default stream first,
 * then in the order they started work), then per host thread one for its
 * NVTX ranges and one for its runtime calls.
 * Panels: a view's windows side by side at one scale; the whole trace is
 * one panel, the time of its GPU work and NVTX ranges.
 */
#define _POSIX_C_SOURCE 200809L
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Lanes                                                                     */
/* ------------------------------------------------------------------------ */

static int lane_cmp(const void *pa, const void *pb)
{
	const struct lane *a = pa, *b = pb;
	int ha = a->kind != LANE_STREAM, hb = b->kind != LANE_STREAM;
	if (ha != hb)
		return ha - hb;
	if (!ha && stream_proc(a->id) != stream_proc(b->id)) /* a job: by process */
		return stream_proc(a->id) < stream_proc(b->id) ? -1 : 1;
	if (!ha && a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->number != b->number) /* default stream first; threads in order */
		return a->number - b->number;
	if (ha)
		return a->kind - b->kind; /* a thread's NVTX lane above its calls */
	/* streams in the order they started work: a pipeline is a staircase */
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The lane r is drawn on: its stream (GPU work), or its thread's NVTX or
 * runtime-call lane. Return 0 for a record drawn on no lane. */
static int lane_key(const struct rec *r, int *kind, uint32_t *id)
{
	if (trace_is_gpu(r)) {
		*kind = LANE_STREAM;
		*id = r->stream;
	} else if (r->kind == K_NVTX || r->kind == K_API) {
		*kind = r->kind == K_NVTX ? LANE_NVTX : LANE_API;
		*id = r->tid;
	} else {
		return 0;
	}
	return 1;
}

/* Index of the lane (kind, id) in L, or -1. */
static int lane_find(const struct lanes *L, int kind, uint32_t id)
{
	for (size_t j = 0; j < L->n; j++)
		if (L->v[j].kind == kind && L->v[j].id == id)
			return (int)j;
	return -1;
}

/* Index of the lane of r, or -1 if r is drawn on none. */
int lane_of(const struct lanes *L, const struct rec *r)
{
	int kind;
	uint32_t id;
	return lane_key(r, &kind, &id) ? lane_find(L, kind, id) : -1;
}

/* Host thread tid's number: 1, 2, ... in the order of the threads' first
 * runtime call or NVTX range in the whole trace (a window keeps them). */
int thread_number(const struct trace *t, uint32_t tid)
{
	uint32_t seen[64];
	int n = 0;
	if (t->base)
		t = t->base;
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		if (r->kind != K_API && r->kind != K_NVTX)
			continue;
		if (r->tid == tid) /* its first record: the threads before it, + 1 */
			return n + 1;
		int k;
		for (k = 0; k < n && seen[k] != r->tid; k++)
			;
		if (k == n && n < 64)
			seen[n++] = r->tid;
	}
	return n + 1;
}

/* The device a stream belongs to (its declaration; else its first record's). */
uint32_t stream_device(const struct trace *t, uint32_t id)
{
	const struct trace *w = t->base ? t->base : t;
	for (size_t i = 0; i < w->nstreams; i++)
		if (w->streams[i].id == id)
			return w->streams[i].device;
	for (size_t i = 0; i < w->n; i++)
		if (w->recs[i].stream == id && w->recs[i].device != NO_DEVICE)
			return w->recs[i].device;
	return 0;
}

/* Stream a before stream b, as the JSON and SVG order tracks: by process
 * (a job), by device, the legacy default stream first, then by id. */
int stream_order(const struct trace *t, uint32_t a, uint32_t b)
{
	if (stream_proc(a) != stream_proc(b))
		return stream_proc(a) < stream_proc(b);
	uint32_t da = stream_device(t, a), db = stream_device(t, b);
	if (da != db)
		return da < db;
	int la = trace_stream_kind(t, a) == ST_DEFAULT, lb = trace_stream_kind(t, b) == ST_DEFAULT;
	return la != lb ? la : a < b;
}

/* The host thread whose calls queued work on stream id (its first record
 * that names one), or NO_THREAD. */
static uint32_t stream_thread(const struct trace *t, uint32_t id)
{
	const struct trace *w = t->base ? t->base : t;
	for (size_t i = 0; i < w->n; i++)
		if (w->recs[i].stream == id && trace_is_gpu(&w->recs[i])) {
			uint32_t tid = trace_thread_of(w, &w->recs[i]);
			if (tid != NO_THREAD)
				return tid;
		}
	return NO_THREAD;
}

/* The process of a job that host thread tid belongs to (0: none known). */
uint32_t thread_proc(const struct trace *t, uint32_t tid)
{
	if (t->base)
		t = t->base;
	for (size_t i = 0; t->nprocs > 1 && i < t->n; i++)
		if ((t->recs[i].kind == K_API || t->recs[i].kind == K_NVTX) && t->recs[i].tid == tid)
			return t->recs[i].proc;
	return 0;
}

/* What the drawings put before a lane's name: "p1 " (its process, proc, in
 * a job of several), then "dev 1 " where devices is set (its device, dev).
 * Return its length. */
int lane_where(const struct trace *t, uint32_t proc, int devices, uint32_t dev, char *buf,
	       size_t n)
{
	int at = 0;
	buf[0] = 0;
	if ((t->base ? t->base : t)->nprocs > 1)
		at = snprintf(buf, n, "p%u ", proc);
	if (devices)
		at += snprintf(buf + at, n - (size_t)at, "dev %u ", dev);
	return at;
}

/* A stream's name in the drawings: "default" (the legacy stream), "thread
 * 2 default" (that host thread's per-thread default stream), "stream 13",
 * "stream 14 nb" (created non-blocking), "internal 19"; "dev 1 ..." before
 * it when the trace's streams are on several devices; "p1 ..." before
 * that in a job of several processes (its process, from 0). Return its
 * length. */
int stream_label(const struct trace *t, uint32_t id, int devices, char *buf, size_t n)
{
	struct stream_decl d = trace_stream(t, id);
	char dev[24];
	lane_where(t, stream_proc(id), devices, devices ? stream_device(t, id) : 0, dev, sizeof dev);
	uint32_t lid = stream_local(id);
	switch (d.kind) {
	case ST_DEFAULT:
		return snprintf(buf, n, "%sdefault", dev);
	case ST_PER_THREAD: {
		uint32_t tid = stream_thread(t, id);
		if (tid != NO_THREAD)
			return snprintf(buf, n, "%sthread %d default", dev, thread_number(t, tid));
		return snprintf(buf, n, "%sper-thread %u", dev, lid);
	}
	case ST_INTERNAL:
		return snprintf(buf, n, "%sinternal %u", dev, lid);
	default:
		return snprintf(buf, n, "%sstream %u%s", dev, lid,
				d.sync == SY_NONBLOCKING ? " nb" : "");
	}
}

/* Name lane l: "default", "stream 13", "thread 1", "calls". */
static void lane_label(const struct trace *t, const struct lanes *L, struct lane *l)
{
	char p[24] = "";
	if (l->kind != LANE_STREAM)
		lane_where(t, thread_proc(t, l->id), 0, 0, p, sizeof p);
	if (l->kind == LANE_NVTX) {
		snprintf(l->label, sizeof l->label, "%sthread %d", p, l->number);
	} else if (l->kind == LANE_API) {
		/* under its thread's NVTX lane, "calls" says enough */
		int nvtx = lane_find(L, LANE_NVTX, l->id) >= 0;
		snprintf(l->label, sizeof l->label, nvtx ? "calls" : "%sthread %d calls", p, l->number);
	} else {
		stream_label(t, l->id, L->devices, l->label, sizeof l->label);
	}
}

/* Make the lanes of t: one per stream with GPU work, two per host thread
 * (NVTX ranges, runtime calls) where it has them. Return 0, or -1 when out
 * of memory. */
int lanes_make(const struct trace *t, struct lanes *L)
{
	size_t cap = 0;
	L->v = NULL;
	L->n = L->nstreams = 0;
	L->devices = 0;
	/* Linear scans over the (few) lanes seen so far: a trace has tens of
	 * streams at most. */
	for (size_t i = 0; i < t->n; i++) {
		int kind;
		uint32_t id;
		if (!lane_key(&t->recs[i], &kind, &id) || lane_find(L, kind, id) >= 0)
			continue;
		if (L->n == cap) {
			cap = cap ? cap * 2 : 16;
			struct lane *v = realloc(L->v, cap * sizeof *v);
			if (!v)
				return -1;
			L->v = v;
		}
		struct lane *l = &L->v[L->n++];
		l->kind = kind;
		l->id = id;
		l->first = t->recs[i].start;
		l->number = kind != LANE_STREAM ? thread_number(t, id)
						: trace_stream_kind(t, id) != ST_DEFAULT;
		l->device = kind == LANE_STREAM ? stream_device(t, id) : 0;
		if (kind == LANE_STREAM && L->v[0].device != l->device)
			L->devices = 1;
	}
	if (L->n)
		qsort(L->v, L->n, sizeof *L->v, lane_cmp);
	for (size_t j = 0; j < L->n; j++)
		lane_label(t, L, &L->v[j]);
	/* After a cudaDeviceReset the new context has its own default stream:
	 * then say which default is which. */
	for (size_t j = 0; j < L->n; j++) {
		struct lane *l = &L->v[j];
		int ndefault = 0;
		if (l->kind != LANE_STREAM || l->number != 0)
			continue;
		for (size_t k = 0; k < L->n; k++)
			ndefault += L->v[k].kind == LANE_STREAM && L->v[k].number == 0 &&
				    L->v[k].device == l->device &&
				    stream_proc(L->v[k].id) == stream_proc(l->id);
		if (ndefault > 1) {
			size_t at = (size_t)lane_where(t, stream_proc(l->id), L->devices, l->device,
						       l->label, sizeof l->label);
			if (at < sizeof l->label)
				snprintf(l->label + at, sizeof l->label - at, "default %u",
					 stream_local(l->id));
		}
	}
	while (L->nstreams < L->n && L->v[L->nstreams].kind == LANE_STREAM)
		L->nstreams++;
	return 0;
}

/* What ran it, for a title: "NVIDIA H200, 3 copy engines"; with several
 * devices "2 x NVIDIA H200, 3 copy engines each", or each named. */
void device_words(const struct trace *t, char *buf, size_t n)
{
	const struct trace *w = t->base ? t->base : t;
	if (w->ndevices <= 1) {
		const char *dev = trace_meta(w, "device"), *ce = trace_meta(w, "copy_engines");
		if (!dev && w->ndevices)
			dev = w->devices[0].name;
		snprintf(buf, n, "%s%s%s%s", dev ? dev : "unknown device", ce ? ", " : "",
			 ce ? ce : "", ce ? " copy engines" : "");
		return;
	}
	int same = 1;
	for (size_t i = 1; i < w->ndevices; i++)
		same &= strcmp(w->devices[i].name, w->devices[0].name) == 0 &&
			w->devices[i].copy_engines == w->devices[0].copy_engines;
	if (same) {
		snprintf(buf, n, "%zu x %s, %d copy engines each", w->ndevices,
			 w->devices[0].name, w->devices[0].copy_engines);
		return;
	}
	size_t used = (size_t)snprintf(buf, n, "%zu devices:", w->ndevices);
	for (size_t i = 0; i < w->ndevices && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s %u %s (%d copy engines)",
					 i ? "," : "", w->devices[i].id, w->devices[i].name,
					 w->devices[i].copy_engines);
}

/* ------------------------------------------------------------------------ */
/* Panels                                                                    */
/* ------------------------------------------------------------------------ */

/* The time range of the drawn records of a whole trace (GPU work and NVTX
 * ranges): the runtime calls before the first copy would only squeeze the
 * picture. */
static struct ival drawn_range(const struct trace *t)
{
	struct ival v = { UINT64_MAX, 0 };
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		if (!trace_is_gpu(r) && r->kind != K_NVTX)
			continue;
		if (r->start < v.a)
			v.a = r->start;
		if (r->end > v.b)
			v.b = r->end;
	}
	if (v.a == UINT64_MAX)
		v.a = v.b = t->t0;
	return v;
}

static uint64_t span_of(const struct ival *v)
{
	return v->b > v->a ? v->b - v->a : 1;
}

/* Sum of the panels' spans, ns. */
static double spans(const struct layout *lo)
{
	double s = 0;
	for (size_t k = 0; k < lo->n; k++)
		s += (double)span_of(&lo->p[k]);
	return s;
}

/* Merge the panels whose gap would be narrower than the gap drawn between
 * them (it shows nothing): one panel then. Return 1 if any merged. */
static int merge_close(struct layout *lo, double units, double sep)
{
	double avail = units - sep * (double)(lo->n - 1);
	if (avail < (double)lo->n)
		return 0;
	double npu = spans(lo) / avail;
	for (size_t k = 1; k < lo->n; k++)
		if ((double)(lo->p[k].a - lo->p[k - 1].b) < sep * npu) {
			lo->p[k - 1].b = lo->p[k].b;
			memmove(&lo->p[k], &lo->p[k + 1], (lo->n - k - 1) * sizeof *lo->p);
			lo->n--;
			return 1;
		}
	return 0;
}

/* Lay out t's panels in `units` (columns, or pixels), `sep` units apart.
 * whole: every panel gets a whole number of units, at least one. Return 0,
 * or -1 when out of memory. */
int layout_make(const struct trace *t, double units, double sep, int whole,
		struct layout *lo)
{
	size_t n = t->nwin ? t->nwin : 1;
	lo->p = malloc(n * sizeof *lo->p);
	lo->x0 = malloc(n * sizeof *lo->x0);
	lo->w = malloc(n * sizeof *lo->w);
	if (!lo->p || !lo->x0 || !lo->w) {
		layout_free(lo);
		return -1;
	}
	lo->n = n;
	if (t->nwin)
		memcpy(lo->p, t->win, n * sizeof *lo->p);
	else
		lo->p[0] = drawn_range(t);
	while (lo->n > 1 && merge_close(lo, units, sep))
		;
	/* too many panels to give each a unit: one panel over all of them */
	if (lo->n > 1 && (double)lo->n * (1 + sep) - sep > units) {
		lo->p[0].b = lo->p[lo->n - 1].b;
		lo->n = 1;
	}
	double avail = units - sep * (double)(lo->n - 1), used = 0;
	lo->npu = spans(lo) / avail;
	for (size_t k = 0; k < lo->n; k++) {
		double w = (double)span_of(&lo->p[k]) / lo->npu;
		lo->w[k] = whole ? (w < 1 ? 1 : floor(w + 0.5)) : w;
		used += lo->w[k];
	}
	/* rounding may overshoot by a unit or so: take it from the widest */
	while (whole && used > avail) {
		size_t widest = 0;
		for (size_t k = 1; k < lo->n; k++)
			if (lo->w[k] > lo->w[widest])
				widest = k;
		lo->w[widest]--;
		used--;
	}
	double x = 0;
	for (size_t k = 0; k < lo->n; k++) {
		lo->x0[k] = x;
		x += lo->w[k] + sep;
	}
	return 0;
}

void layout_free(struct layout *lo)
{
	free(lo->p);
	free(lo->x0);
	free(lo->w);
	memset(lo, 0, sizeof *lo);
}

/* Where time ns falls in panel k, in units. */
double layout_x(const struct layout *lo, size_t k, uint64_t ns)
{
	double off = ns > lo->p[k].a ? (double)(ns - lo->p[k].a) : 0;
	return lo->x0[k] + off * lo->w[k] / (double)span_of(&lo->p[k]);
}

/* ------------------------------------------------------------------------ */
/* Styles and numbers                                                        */
/* ------------------------------------------------------------------------ */

/* In the order that wins a tie for a column: kernels first. */
const struct style_info styles[ST_N] = {
	[ST_KERNEL] = { '#', "\033[34m", "#1f77b4", "kernel" },
	[ST_H2D] = { '>', "\033[32m", "#2ca02c", "H2D copy" },
	[ST_D2H] = { '<', "\033[35m", "#d62728", "D2H copy" },
	[ST_COPY] = { '=', "\033[36m", "#17becf", "other copy" },
	[ST_MEMSET] = { '~', "\033[33m", "#ff7f0e", "memset" },
	[ST_NVTX] = { '-', "\033[90m", "#8c8c8c", "NVTX range" },
	[ST_API] = { '.', "\033[37m", "#b5a642", "runtime call" },
};

int style_of(const struct rec *r)
{
	switch (r->kind) {
	case K_COPY:
		return r->dir == D_H2D ? ST_H2D : r->dir == D_D2H ? ST_D2H : ST_COPY;
	case K_KERNEL: return ST_KERNEL;
	case K_MEMSET: return ST_MEMSET;
	case K_API: return ST_API;
	default: return ST_NVTX;
	}
}

/* A round tick step (1, 2 or 5 times a power of ten, in ns) so that ticks
 * are at least `min_ns` apart. */
uint64_t tick_step(double min_ns)
{
	uint64_t p = 1;
	for (;;) {
		if ((double)p >= min_ns)
			return p;
		if ((double)(2 * p) >= min_ns)
			return 2 * p;
		if ((double)(5 * p) >= min_ns)
			return 5 * p;
		p *= 10;
	}
}

/* Print a number without trailing zeros (up to 6 decimals): 2.5, 10, 0.25. */
void fmt_num(char *buf, size_t n, double v)
{
	snprintf(buf, n, "%.6f", v);
	char *dot = strchr(buf, '.');
	if (dot) {
		char *e = buf + strlen(buf) - 1;
		while (e > dot && *e == '0')
			*e-- = 0;
		if (e == dot)
			*e = 0;
	}
}

/* A few words for record r: "H2D 4194304 bytes PINNED", a kernel's name. */
void rec_words(char *buf, size_t n, const struct rec *r)
{
	if (r->kind == K_COPY)
		snprintf(buf, n, "%s %llu bytes %s to %s", dir_name(r->dir),
			 (unsigned long long)r->bytes, mem_name(r->src), mem_name(r->dst));
	else if (r->kind == K_MEMSET)
		snprintf(buf, n, "memset %llu bytes", (unsigned long long)r->bytes);
	else
		snprintf(buf, n, "%s", r->name ? r->name : kind_name(r->kind));
}

/* ------------------------------------------------------------------------ */
/* Terminal timeline: a grid of cells                                        */
/* ------------------------------------------------------------------------ */

/* Rows of cells. Each lane is drawn on one row; folded streams share one. */
struct grid {
	size_t rows;
	int cols;
	double *busy;       /* rows x cols x ST_N: ns of each style in each cell */
	unsigned char *has; /* rows x cols: bit per style present (even 0 ns) */
	signed char *cell;  /* rows x cols: the style shown, -1 none */
	char *text;         /* rows x cols: a name drawn over a bar, 0 none */
};

static int grid_alloc(struct grid *g, size_t rows, int cols)
{
	size_t n = rows * (size_t)cols;
	g->rows = rows;
	g->cols = cols;
	g->busy = calloc(n * ST_N, sizeof *g->busy);
	g->has = calloc(n, 1);
	g->cell = malloc(n);
	g->text = calloc(n, 1);
	if (!g->busy || !g->has || !g->cell || !g->text)
		return -1;
	memset(g->cell, -1, n);
	return 0;
}

static void grid_free(struct grid *g)
{
	free(g->busy);
	free(g->has);
	free(g->cell);
	free(g->text);
	memset(g, 0, sizeof *g);
}

/* The columns c0..c1 that [a, b] covers in panel k. */
static void cols_of(const struct layout *lo, size_t k, uint64_t a, uint64_t b,
		    int *c0, int *c1)
{
	double xa = layout_x(lo, k, a), xb = layout_x(lo, k, b);
	int first = (int)lo->x0[k], last = (int)(lo->x0[k] + lo->w[k]) - 1;
	*c0 = (int)floor(xa);
	*c1 = (int)ceil(xb) - 1; /* an end exactly on a boundary stays left of it */
	if (*c1 < *c0)
		*c1 = *c0;
	if (*c0 < first)
		*c0 = first;
	if (*c1 > last)
		*c1 = last;
	if (*c0 > last)
		*c0 = last;
}

/* Calls f(lo, k, a, b, arg) for each piece of r inside a panel. */
static void for_pieces(const struct layout *lo, const struct rec *r,
		       void (*f)(const struct layout *, size_t, uint64_t, uint64_t, void *),
		       void *arg)
{
	for (size_t k = 0; k < lo->n; k++) {
		uint64_t a = r->start > lo->p[k].a ? r->start : lo->p[k].a;
		uint64_t b = r->end < lo->p[k].b ? r->end : lo->p[k].b;
		if (b > a || (b == a && r->start == r->end && a >= lo->p[k].a &&
			      a <= lo->p[k].b))
			f(lo, k, a, b, arg);
	}
}

struct paint {
	struct grid *g;
	const struct rec *r;
	size_t row;
};

/* Add one piece of a record to its row: busy time per cell, and the name
 * of an NVTX range or runtime call where it fits: [name----]. */
static void paint_piece(const struct layout *lo, size_t k, uint64_t a, uint64_t b,
			void *arg)
{
	struct paint *p = arg;
	struct grid *g = p->g;
	int s = style_of(p->r), c0, c1;
	cols_of(lo, k, a, b, &c0, &c1);
	double *busy = g->busy + p->row * (size_t)g->cols * ST_N;
	unsigned char *has = g->has + p->row * (size_t)g->cols;
	char *text = g->text + p->row * (size_t)g->cols;
	double npc = (double)span_of(&lo->p[k]) / lo->w[k];
	for (int c = c0; c <= c1; c++) {
		double ca = (double)lo->p[k].a + (c - lo->x0[k]) * npc, cb = ca + npc;
		double lo_ = (double)a > ca ? (double)a : ca, hi = (double)b < cb ? (double)b : cb;
		if (hi > lo_)
			busy[(size_t)c * ST_N + s] += hi - lo_;
		has[c] |= (unsigned char)(1u << s);
		text[c] = 0;
	}
	if ((s == ST_NVTX || s == ST_API) && c1 - c0 + 1 >= 3) {
		text[c0] = '[';
		text[c1] = ']';
		const char *name = p->r->name;
		for (int c = c0 + 1; c < c1 && *name; c++)
			text[c] = *name++;
	}
}

/* The style each cell shows: the one busiest there; on a tie (or where all
 * are instants) the first in style order, kernels first. */
static void grid_choose(struct grid *g)
{
	for (size_t i = 0; i < g->rows * (size_t)g->cols; i++) {
		int best = -1;
		for (int s = 0; s < ST_N; s++)
			if ((g->has[i] >> s & 1) &&
			    (best < 0 || g->busy[i * ST_N + s] > g->busy[i * ST_N + best]))
				best = s;
		g->cell[i] = (signed char)best;
	}
}

/* A kernel that lost every one of its columns to busier copies takes back
 * the column where it ran longest: kernels are never hidden. */
static void unhide_kernel(const struct layout *lo, size_t k, uint64_t a, uint64_t b,
			  void *arg)
{
	struct paint *p = arg;
	struct grid *g = p->g;
	int c0, c1, best;
	cols_of(lo, k, a, b, &c0, &c1);
	size_t base = p->row * (size_t)g->cols;
	best = c0;
	for (int c = c0; c <= c1; c++) {
		if (g->cell[base + c] == ST_KERNEL)
			return;
		if (g->busy[(base + c) * ST_N + ST_KERNEL] >
		    g->busy[(base + best) * ST_N + ST_KERNEL])
			best = c;
	}
	g->cell[base + best] = ST_KERNEL;
	g->text[base + best] = 0;
}

/* Fill g (rows already allocated) with t's records; lane j on row
 * row_of[j]. */
static void grid_fill(struct grid *g, const struct trace *t, const struct lanes *L,
		      const struct layout *lo, const int *row_of)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < t->n; i++) {
			const struct rec *r = &t->recs[i];
			int j = lane_of(L, r);
			if (j < 0 || (pass && r->kind != K_KERNEL))
				continue;
			struct paint p = { g, r, (size_t)row_of[j] };
			for_pieces(lo, r, pass ? unhide_kernel : paint_piece, &p);
		}
		if (!pass)
			grid_choose(g);
	}
}

/* ------------------------------------------------------------------------ */
/* Terminal timeline: folding streams into the rows there are                */
/* ------------------------------------------------------------------------ */

/* Rows: lane j is drawn on row row_of[j]; each row has a label. */
struct rows {
	int *row_of;
	char (*label)[LABEL_MAX + 16];
	size_t n;
	int folded_same, folded_group; /* for the note under the legend */
};

static int same_row(const struct grid *g, size_t a, size_t b)
{
	size_t n = (size_t)g->cols;
	return memcmp(g->cell + a * n, g->cell + b * n, n) == 0 &&
	       memcmp(g->text + a * n, g->text + b * n, n) == 0;
}

/* A stream lane that may share a row: not the default stream. */
static int foldable(const struct lane *l)
{
	return l->kind == LANE_STREAM && l->number != 0;
}

/* A row per lane, except that when more than `room` streams may fold,
 * those that drew the very same row share it ("stream 13 x4"). first[r]:
 * row r's first lane. */
static void fold_same(const struct lanes *L, const struct grid *g, size_t room,
		      struct rows *R, size_t *first, int *count)
{
	size_t nfold = 0;
	for (size_t j = 0; j < L->n; j++)
		nfold += foldable(&L->v[j]);
	R->n = 0;
	for (size_t j = 0; j < L->n; j++) {
		size_t r = R->n;
		for (size_t q = 0; nfold > room && foldable(&L->v[j]) && q < R->n; q++)
			if (foldable(&L->v[first[q]]) && same_row(g, first[q], j)) {
				r = q;
				break;
			}
		if (r == R->n)
			first[R->n++] = j;
		R->row_of[j] = (int)r;
		count[r]++;
	}
	for (size_t r = 0; r < R->n; r++) {
		const struct lane *l = &L->v[first[r]];
		snprintf(R->label[r], sizeof R->label[r], count[r] > 1 ? "%s x%d" : "%s",
			 l->label, count[r]);
		R->folded_same |= count[r] > 1;
	}
}

/* Still more than `room` stream rows: neighbours share a row, as many a
 * row as it takes ("streams 13-16"). Return 0, or -1 when out of memory. */
static int fold_groups(const struct lanes *L, size_t room, struct rows *R, const size_t *first)
{
	size_t nrows = 0, lo = R->n, hi = 0;
	for (size_t r = 0; r < R->n; r++)
		if (foldable(&L->v[first[r]])) {
			nrows++;
			lo = r < lo ? r : lo;
			hi = r;
		}
	if (nrows <= room)
		return 0;
	size_t per = (nrows + room - 1) / room, nr = 0, k = 0;
	(void)lo;
	(void)hi;
	int *merged = malloc(R->n * sizeof *merged);
	if (!merged)
		return -1;
	/* groups of `per` foldable rows of one device; a new row's label goes
	 * to a lower index than any still to be read */
	int open = -1;          /* the row of the group being filled */
	size_t open_first = 0;  /* its first lane */
	for (size_t r = 0; r < R->n; r++) {
		const struct lane *l = &L->v[first[r]];
		int grouped = foldable(l);
		int starts = !grouped || open < 0 || k % per == 0 ||
			     L->v[open_first].device != l->device;
		if (grouped && starts)
			k = 0;
		merged[r] = starts ? (int)nr++ : open;
		if (!grouped) {
			memmove(R->label[merged[r]], R->label[r], sizeof R->label[0]);
			open = -1;
			continue;
		}
		if (starts) {
			open = merged[r];
			open_first = first[r];
		}
		k++;
		/* the label of the group so far: first and last stream */
		char dev[16] = "";
		if (L->devices)
			snprintf(dev, sizeof dev, "dev %u ", l->device);
		uint32_t a = L->v[open_first].id, b = l->id;
		snprintf(R->label[open], sizeof R->label[0],
			 a == b ? "%sstream %u" : "%sstreams %u-%u", dev, a, b);
		if (a == b) /* a group of one keeps the lane's own label */
			memmove(R->label[open], R->label[r], sizeof R->label[0]);
	}
	for (size_t j = 0; j < L->n; j++)
		R->row_of[j] = merged[R->row_of[j]];
	R->n = nr;
	R->folded_group = 1;
	free(merged);
	return 0;
}

/* Rows for the lanes, at most `room` for the streams other than the
 * default. g is the grid of one row per lane. Return 0, or -1 when out of
 * memory. */
static int rows_fold(const struct lanes *L, const struct grid *g, size_t room, struct rows *R)
{
	R->row_of = malloc((L->n + 1) * sizeof *R->row_of);
	R->label = malloc((L->n + 1) * sizeof *R->label);
	size_t *first = calloc(L->n + 1, sizeof *first);
	int *count = calloc(L->n + 1, sizeof *count);
	int rc = -1;
	if (R->row_of && R->label && first && count) {
		fold_same(L, g, room, R, first, count);
		rc = fold_groups(L, room, R, first);
	}
	free(first);
	free(count);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Terminal timeline: the text                                               */
/* ------------------------------------------------------------------------ */

/* Print s cut to at most w columns, then a newline. */
static void put_cut(FILE *f, const char *s, int w)
{
	fprintf(f, "%.*s\n", w, s);
}

/* The first line (and, for a view, the windows' line): what is shown.
 * Return the number of lines printed. */
static int put_header(FILE *f, const struct trace *t, const struct layout *lo, int width)
{
	char line[1200], num[32], dev[600];
	device_words(t, dev, sizeof dev);
	fmt_num(num, sizeof num, floor(spans(lo) / 1e3 + 0.5) / 1e3);
	snprintf(line, sizeof line, "%s: %s, %s ms shown, %zu records%s", t->path,
		 dev, num, t->n, t->complete ? "" : " (ENDS EARLY)");
	put_cut(f, line, width);
	if (!t->nwin)
		return 1;
	/* "window nvtx:a#last, nvtx:b#last: 671.226-687.282, 687.294-694.274 ms" */
	int used = snprintf(line, sizeof line, "window %s:", t->win_desc ? t->win_desc : "");
	for (size_t k = 0; k < t->nwin && used < (int)sizeof line - 80; k++) {
		char a[32], b[32];
		fmt_num(a, sizeof a, floor((double)(t->win[k].a - t->t0) / 1e3 + 0.5) / 1e3);
		fmt_num(b, sizeof b, floor((double)(t->win[k].b - t->t0) / 1e3 + 0.5) / 1e3);
		used += snprintf(line + used, sizeof line - (size_t)used, "%s %s-%s",
				 k ? "," : "", a, b);
	}
	if (used > width - 3 && t->nwin > 1) {
		char a[32], b[32];
		fmt_num(a, sizeof a, floor((double)(t->win[0].a - t->t0) / 1e3 + 0.5) / 1e3);
		fmt_num(b, sizeof b, floor((double)(t->win[t->nwin - 1].b - t->t0) / 1e3 + 0.5) / 1e3);
		used = snprintf(line, sizeof line, "window %s: %zu ranges, %s to %s",
				t->win_desc ? t->win_desc : "", t->nwin, a, b);
	}
	snprintf(line + used, sizeof line - (size_t)used, " ms");
	put_cut(f, line, width);
	return 2;
}

/* One row: label, cells (coloured if asked), frame. */
static void put_row(FILE *f, const struct grid *g, size_t row, const char *label,
		    int labw, const struct layout *lo, int color)
{
	fprintf(f, "%*.*s |", labw, labw, label);
	int cur = -1;
	size_t k = 0;
	for (int c = 0; c < g->cols; c++) {
		while (k + 1 < lo->n && c >= (int)lo->x0[k + 1])
			k++;
		int s = g->cell[row * g->cols + c];
		char ch = g->text[row * g->cols + c];
		int sep = c >= (int)(lo->x0[k] + lo->w[k]);
		if (color && s != cur) {
			fputs(s >= 0 ? styles[s].ansi : "\033[0m", f);
			cur = s;
		}
		fputc(sep ? ':' : s < 0 ? ' ' : ch ? ch : styles[s].glyph, f);
	}
	if (color && cur >= 0)
		fputs("\033[0m", f);
	fputs("|\n", f);
}

/* The axis: '+' at round times (ms from the trace's first record), ':'
 * between panels, and the times below where they fit. */
static void put_axis(FILE *f, const struct trace *t, const struct layout *lo, int cols,
		     int labw, int width)
{
	char axis[1024], labels[1100], line[1200];
	uint64_t step = tick_step(lo->npu * 10);
	memset(axis, '-', (size_t)cols);
	memset(labels, ' ', sizeof labels);
	axis[cols] = 0;
	int free_from = 0;
	for (size_t k = 0; k < lo->n; k++) {
		int end = (int)(lo->x0[k] + lo->w[k]);
		if (k + 1 < lo->n)
			for (int c = end; c < (int)lo->x0[k + 1]; c++)
				axis[c] = ':';
		uint64_t rel = lo->p[k].a - t->t0;
		for (uint64_t tk = (rel + step - 1) / step * step; tk + t->t0 <= lo->p[k].b;
		     tk += step) {
			int c = (int)floor(layout_x(lo, k, t->t0 + tk));
			if (c >= end)
				break;
			axis[c] = '+';
			char num[32];
			fmt_num(num, sizeof num, (double)tk / 1e6);
			int l = (int)strlen(num);
			if (c >= free_from && c + l <= cols) {
				memcpy(labels + c, num, (size_t)l);
				free_from = c + l + 1;
			}
		}
	}
	labels[cols] = 0;
	fprintf(f, "%*s +%s+\n", labw, "", axis);
	snprintf(line, sizeof line, "%*s  %s", labw, "ms", labels);
	for (char *e = line + strlen(line) - 1; e > line && *e == ' '; e--)
		*e = 0;
	put_cut(f, line, width);
}

/* The legend of the styles drawn, wrapped to the width; then the scale and
 * what folded rows mean. Return the number of lines. */
static int put_legend(FILE *f, const struct grid *g, const struct layout *lo,
		      const struct rows *R, int width, int color, int dry)
{
	static const int order[] = { ST_H2D, ST_D2H, ST_COPY, ST_KERNEL, ST_MEMSET,
				     ST_NVTX, ST_API };
	int shown[ST_N] = { 0 }, used = 0, lines = 1;
	for (size_t i = 0; g && i < g->rows * (size_t)g->cols; i++)
		if (g->cell[i] >= 0)
			shown[(int)g->cell[i]] = 1;
	for (int o = -1; o < ST_N; o++) {
		char item[64];
		int s = o < 0 ? -1 : order[o];
		if (s >= 0 && g && !shown[s])
			continue;
		if (s < 0)
			snprintf(item, sizeof item, "legend:");
		else
			snprintf(item, sizeof item, "%c %s", styles[s].glyph, styles[s].label);
		int l = (int)strlen(item);
		if (used && used + 2 + l > width) {
			if (!dry)
				fputc('\n', f);
			used = 0;
			lines++;
		}
		if (used && !dry)
			fputs("  ", f);
		used += used ? 2 : 0;
		if (!dry && color && s >= 0)
			fprintf(f, "%s%c\033[0m%s", styles[s].ansi, styles[s].glyph, item + 1);
		else if (!dry)
			fputs(item, f);
		used += l;
	}
	char col[32], line[200];
	double ms = lo->npu / 1e6;
	snprintf(col, sizeof col, ms >= 1 ? "%.4g" : "%.3g", ms);
	snprintf(line, sizeof line, "one column = %s ms%s%s", col,
		 R && R->folded_same ? "; \"xN\": N streams drew the same row" : "",
		 R && R->folded_group ? "; \"streams A-B\": drawn as one row" : "");
	if (!dry) {
		fputc('\n', f);
		put_cut(f, line, width);
	}
	return lines + 1;
}

/* The label column's width: the longest label, at least 7. */
static int label_width(const struct rows *R)
{
	int w = 7;
	for (size_t r = 0; r < R->n; r++) {
		int l = (int)strlen(R->label[r]);
		w = l > w ? l : w;
	}
	return w;
}

/* Lay out and fill g for `width` columns with labels lw wide, lane j on
 * row row_of[j] of `rows`. Return 0, or -1 when out of memory. */
static int draw_grid(const struct trace *t, const struct lanes *L, int width, int lw,
		     const int *row_of, size_t rows, struct layout *lo, struct grid *g)
{
	int cols = width - lw - 3;
	cols = cols < 10 ? 10 : cols;
	layout_free(lo);
	grid_free(g);
	if (layout_make(t, cols, 1, 1, lo) || grid_alloc(g, rows, cols))
		return -1;
	grid_fill(g, t, L, lo, row_of);
	return 0;
}

/* Lines of the timeline that are not stream rows (the default stream's
 * row counts here: it never folds). */
static int fixed_lines(const struct trace *t, const struct lanes *L, const struct grid *g,
		       const struct layout *lo, int width)
{
	int n = 1 + (t->nwin > 0) + 2 + put_legend(NULL, g, lo, NULL, width, 0, 1);
	if (L->n > L->nstreams)
		n += 1 + (int)(L->n - L->nstreams);
	for (size_t j = 0; j < L->nstreams; j++)
		n += L->v[j].number == 0;
	return n;
}

/* Draw the timeline in `width` columns and at most `height` lines (0: no
 * limit; with more streams than fit, some share a row); colour if `color`.
 * Return 0, or 3 when out of memory. */
int render_timeline(const struct trace *t, FILE *f, int width, int height, int color)
{
	struct lanes L;
	struct layout lo = { 0 };
	struct grid g = { 0 };
	struct rows R = { 0 };
	int rc = 3, *ident = NULL;

	width = width < 30 ? 30 : width > 1000 ? 1000 : width;
	if (lanes_make(t, &L))
		return 3;
	if (L.n == 0) {
		if (layout_make(t, 100, 1, 1, &lo) == 0)
			put_header(f, t, &lo, width);
		put_cut(f, "(no GPU work, NVTX ranges or runtime calls in it)", width);
		layout_free(&lo);
		free(L.v);
		return 0;
	}
	/* first one row per lane; that picture says which rows are alike */
	int lw = 7;
	for (size_t j = 0; j < L.n; j++) {
		int l = (int)strlen(L.v[j].label);
		lw = l > lw ? l : lw;
	}
	lw = lw > width - 13 ? width - 13 : lw;
	ident = malloc(L.n * sizeof *ident);
	if (!ident)
		goto out;
	for (size_t j = 0; j < L.n; j++)
		ident[j] = (int)j;
	if (draw_grid(t, &L, width, lw, ident, L.n, &lo, &g))
		goto out;
	long room = height > 0 ? height - fixed_lines(t, &L, &g, &lo, width) : (long)L.n;
	if (rows_fold(&L, &g, room < 1 ? 1 : (size_t)room, &R))
		goto out;
	int lw2 = label_width(&R);
	lw2 = lw2 > width - 13 ? width - 13 : lw2;
	if ((R.n < L.n || lw2 != lw) &&
	    draw_grid(t, &L, width, lw = lw2, R.row_of, R.n, &lo, &g))
		goto out;
	put_header(f, t, &lo, width);
	size_t first_host = R.n;
	for (size_t j = L.nstreams; j < L.n; j++)
		if ((size_t)R.row_of[j] < first_host)
			first_host = (size_t)R.row_of[j];
	for (size_t r = 0; r < R.n; r++) {
		if (r == first_host && r > 0)
			fprintf(f, "%*s |%*s|\n", lw, "", g.cols, "");
		put_row(f, &g, r, R.label[r], lw, &lo, color);
	}
	put_axis(f, t, &lo, g.cols, lw, width);
	put_legend(f, &g, &lo, &R, width, color, 0);
	rc = 0;
out:
	free(ident);
	free(R.row_of);
	free(R.label);
	grid_free(&g);
	layout_free(&lo);
	free(L.v);
	return rc;
}
