/*
 * render.h -- what the three renderers share (trace_render.c): the lanes a
 * trace is drawn on, the panels of its windows laid out at one scale, the
 * style of each kind of work, and numbers for axes.
 */
#ifndef RENDER_H
#define RENDER_H

#include "trace.h"

#define LABEL_MAX 28

/* A lane: a GPU stream, or a host thread's NVTX ranges or runtime calls. */
enum lane_kind { LANE_STREAM, LANE_NVTX, LANE_API };

struct lane {
	int kind;    /* lane_kind */
	uint32_t id; /* stream id, or CUPTI's thread id */
	int number;  /* streams: 0 the default stream, 1 others; threads: 1, 2, ... */
	uint32_t device; /* streams: its device */
	uint64_t first; /* start of its first record */
	char label[LABEL_MAX];
};

struct lanes {
	struct lane *v;
	size_t n, nstreams; /* streams are v[0..nstreams), grouped by device */
	int devices;        /* the streams are on more than one device */
};

int lanes_make(const struct trace *t, struct lanes *L);
int lane_of(const struct lanes *L, const struct rec *r);
int thread_number(const struct trace *t, uint32_t tid);
uint32_t thread_proc(const struct trace *t, uint32_t tid);
int lane_where(const struct trace *t, uint32_t proc, int devices, uint32_t dev, char *buf,
	       size_t n);
int stream_label(const struct trace *t, uint32_t id, int devices, char *buf, size_t n);
uint32_t stream_device(const struct trace *t, uint32_t id);
void device_words(const struct trace *t, char *buf, size_t n);
int stream_order(const struct trace *t, uint32_t a, uint32_t b);

/* Panels: the windows of a view (or the drawn part of a whole trace), side
 * by side at one scale, with a gap of `sep` units between two. */
struct layout {
	size_t n;
	struct ival *p; /* each panel's time range */
	double *x0, *w; /* where it starts and how wide it is, in units */
	double npu;     /* ns per unit, the same for all panels */
};

int layout_make(const struct trace *t, double units, double sep, int whole,
		struct layout *lo);
void layout_free(struct layout *lo);
double layout_x(const struct layout *lo, size_t k, uint64_t ns);
uint64_t tick_step(double min_ns);

/* Styles: glyph, ANSI colour, SVG colour, legend words. */
enum style { ST_KERNEL, ST_H2D, ST_D2H, ST_COPY, ST_MEMSET, ST_NVTX, ST_API, ST_N };

struct style_info {
	char glyph;
	const char *ansi, *svg, *label;
};

extern const struct style_info styles[ST_N];
int style_of(const struct rec *r);
void fmt_num(char *buf, size_t n, double v);
void rec_words(char *buf, size_t n, const struct rec *r);

#endif
