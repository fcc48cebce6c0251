/*
 * trace_render.c -- draw a trace: terminal timeline, Chrome trace-event
 * JSON (Perfetto, chrome://tracing), SVG, and the summary of headline figures.
 *
 * All four use the same lanes: one per GPU stream (the default stream first,
 * then by id), then one per host thread that has NVTX ranges. Each pass over
 * the records is linear; the records are already sorted by the parser.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#define LABEL_MAX 16

/* ------------------------------------------------------------------------ */
/* Lanes                                                                     */
/* ------------------------------------------------------------------------ */

struct lane {
	int host;       /* 0: GPU stream; 1: host thread */
	uint32_t id;    /* stream id, or thread id */
	int number;     /* host threads: 1, 2, ... in order of first record */
	char label[LABEL_MAX + 8];
};

struct lanes {
	struct lane *v;
	size_t n, nstreams; /* streams are v[0..nstreams) */
};

static int lane_cmp(const void *pa, const void *pb)
{
	const struct lane *a = pa, *b = pb;
	if (a->host != b->host)
		return a->host - b->host;
	if (a->host)
		return a->number - b->number;
	/* the default stream first: number holds 0 for it, 1 otherwise */
	if (a->number != b->number)
		return a->number - b->number;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The lane r is drawn on: its stream (GPU work) or its host thread (NVTX
 * ranges). Return 0 for a record drawn on no lane. */
static int lane_key(const struct rec *r, int *host, uint32_t *id)
{
	if (trace_is_gpu(r)) {
		*host = 0;
		*id = r->stream;
	} else if (r->kind == K_NVTX) {
		*host = 1;
		*id = r->tid;
	} else {
		return 0;
	}
	return 1;
}

/* Index of the lane (host, id) in L, or -1. */
static int lane_find(const struct lanes *L, int host, uint32_t id)
{
	for (size_t j = 0; j < L->n; j++)
		if (L->v[j].host == host && L->v[j].id == id)
			return (int)j;
	return -1;
}

/* Make the lanes of t: one per stream with GPU work, one per thread with
 * NVTX ranges. Return 0, or -1 when out of memory. */
static int lanes_make(const struct trace *t, struct lanes *L)
{
	L->v = NULL;
	L->n = L->nstreams = 0;
	size_t cap = 0;
	int next_thread = 1;
	/* Linear scans over the (few) lanes seen so far: a trace has tens of
	 * streams at most, and the order of first appearance is what we want. */
	for (size_t i = 0; i < t->n; i++) {
		int host;
		uint32_t id;
		if (!lane_key(&t->recs[i], &host, &id) || lane_find(L, host, id) >= 0)
			continue;
		if (L->n == cap) {
			cap = cap ? cap * 2 : 16;
			struct lane *v = realloc(L->v, cap * sizeof *v);
			if (!v)
				return -1;
			L->v = v;
		}
		struct lane *l = &L->v[L->n++];
		l->host = host;
		l->id = id;
		if (host) {
			l->number = next_thread++;
			snprintf(l->label, sizeof l->label, "thread %d", l->number);
		} else {
			int k = trace_stream_kind(t, id);
			l->number = k != ST_DEFAULT;
			if (k == ST_DEFAULT)
				snprintf(l->label, sizeof l->label, "default");
			else if (k == ST_PER_THREAD)
				snprintf(l->label, sizeof l->label, "per-thread %u", id);
			else
				snprintf(l->label, sizeof l->label, "stream %u", id);
		}
	}
	qsort(L->v, L->n, sizeof *L->v, lane_cmp);
	/* After a cudaDeviceReset the new context has its own default stream:
	 * then say which default is which. */
	int ndefault = 0;
	for (size_t j = 0; j < L->n; j++)
		ndefault += !L->v[j].host && L->v[j].number == 0;
	for (size_t j = 0; ndefault > 1 && j < L->n; j++)
		if (!L->v[j].host && L->v[j].number == 0)
			snprintf(L->v[j].label, sizeof L->v[j].label, "default %u", L->v[j].id);
	while (L->nstreams < L->n && !L->v[L->nstreams].host)
		L->nstreams++;
	return 0;
}

/* The time range of the drawn records (GPU work and NVTX ranges): the
 * runtime calls before the first copy would only squeeze the picture. */
static void drawn_range(const struct trace *t, uint64_t *t0, uint64_t *span)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		if (!trace_is_gpu(r) && r->kind != K_NVTX)
			continue;
		if (r->start < lo)
			lo = r->start;
		if (r->end > hi)
			hi = r->end;
	}
	if (lo == UINT64_MAX)
		lo = hi = t->t0;
	*t0 = lo;
	*span = hi > lo ? hi - lo : 1;
}

/* Index of the lane of r, or -1 if r is drawn on none. */
static int lane_of(const struct lanes *L, const struct rec *r)
{
	int host;
	uint32_t id;
	return lane_key(r, &host, &id) ? lane_find(L, host, id) : -1;
}

/* For each record, its lane index (-1: none). One pass, with a one-entry
 * cache: consecutive records are often on the same lane. */
static int *lane_index(const struct trace *t, const struct lanes *L)
{
	int *ix = malloc((t->n ? t->n : 1) * sizeof *ix);
	if (!ix)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		ix[i] = lane_of(L, &t->recs[i]);
	return ix;
}

/* ------------------------------------------------------------------------ */
/* Styles: glyph, ANSI colour, SVG colour per kind of work                   */
/* ------------------------------------------------------------------------ */

enum style { ST_H2D, ST_D2H, ST_COPY, ST_KERNEL, ST_MEMSET, ST_NVTX, ST_N };

static const struct {
	char glyph;
	const char *ansi, *svg, *label;
} styles[ST_N] = {
	{ '>', "\033[32m", "#2ca02c", "H2D copy" },
	{ '<', "\033[35m", "#d62728", "D2H copy" },
	{ '=', "\033[36m", "#17becf", "other copy" },
	{ '#', "\033[34m", "#1f77b4", "kernel" },
	{ '~', "\033[33m", "#ff7f0e", "memset" },
	{ '-', "\033[90m", "#8c8c8c", "NVTX range" },
};

static int style_of(const struct rec *r)
{
	switch (r->kind) {
	case K_COPY:
		return r->dir == D_H2D ? ST_H2D : r->dir == D_D2H ? ST_D2H : ST_COPY;
	case K_KERNEL: return ST_KERNEL;
	case K_MEMSET: return ST_MEMSET;
	default: return ST_NVTX;
	}
}

/* ------------------------------------------------------------------------ */
/* Time axis                                                                 */
/* ------------------------------------------------------------------------ */

/* A unit for a span of ns: divisor and name. */
static void unit_for(uint64_t span, double *div, const char **name)
{
	if (span >= 1000000000ull) {
		*div = 1e9;
		*name = "s";
	} else if (span >= 1000000ull) {
		*div = 1e6;
		*name = "ms";
	} else if (span >= 1000ull) {
		*div = 1e3;
		*name = "us";
	} else {
		*div = 1;
		*name = "ns";
	}
}

/* A round tick step (1, 2 or 5 times a power of ten, in ns) so that ticks
 * are at least `min_ns` apart. */
static uint64_t tick_step(double min_ns)
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

/* Print a number without trailing zeros: 2.5, 10, 0.25. */
static void fmt_num(char *buf, size_t n, double v)
{
	snprintf(buf, n, "%.3f", v);
	char *dot = strchr(buf, '.');
	if (dot) {
		char *e = buf + strlen(buf) - 1;
		while (e > dot && *e == '0')
			*e-- = 0;
		if (e == dot)
			*e = 0;
	}
}

/* ------------------------------------------------------------------------ */
/* Terminal timeline                                                         */
/* ------------------------------------------------------------------------ */

/* Print s cut to at most w columns, then a newline. */
static void put_cut(FILE *f, const char *s, int w)
{
	fprintf(f, "%.*s\n", w, s);
}

/* Draw the timeline in `width` columns; colour if `color`. Return 0. */
int render_timeline(const struct trace *t, FILE *f, int width, int color)
{
	struct lanes L;
	char line[1100];
	const char *dev = trace_meta(t, "device");
	const char *ce = trace_meta(t, "copy_engines");

	if (width < 30)
		width = 30;
	if (width > 1000)
		width = 1000;
	if (lanes_make(t, &L))
		return 3;
	uint64_t t0, span;
	drawn_range(t, &t0, &span);
	double div;
	const char *uname;
	unit_for(span, &div, &uname);
	char sp[32];
	fmt_num(sp, sizeof sp, (double)span / div);
	snprintf(line, sizeof line, "%s: %s%s%s%s, %s %s shown, %zu records%s", t->path,
		 dev ? dev : "unknown device", ce ? ", " : "", ce ? ce : "",
		 ce ? " copy engines" : "", sp, uname, t->n,
		 t->complete ? "" : " (ENDS EARLY)");
	put_cut(f, line, width);
	if (L.n == 0) {
		put_cut(f, "(no GPU work and no NVTX ranges recorded)", width);
		free(L.v);
		return 0;
	}

	int labw = 7;
	for (size_t j = 0; j < L.n; j++) {
		int l = (int)strlen(L.v[j].label);
		if (l > labw)
			labw = l;
	}
	int cols = width - labw - 3; /* "LABEL |....|" */
	if (cols < 10) {
		labw = width - 13;
		cols = 10;
	}
	/* cells: one row per lane; style index per cell, -1 empty */
	signed char *cell = malloc(L.n * (size_t)cols);
	char *text = malloc(L.n * (size_t)cols); /* NVTX names drawn in bars */
	int *ix = lane_index(t, &L);
	if (!cell || !text || !ix) {
		free(cell);
		free(text);
		free(ix);
		free(L.v);
		return 3;
	}
	memset(cell, -1, L.n * (size_t)cols);
	memset(text, 0, L.n * (size_t)cols);
	for (size_t i = 0; i < t->n; i++) {
		if (ix[i] < 0)
			continue;
		const struct rec *r = &t->recs[i];
		uint64_t c0 = (r->start - t0) * (uint64_t)cols / span;
		uint64_t c1 = (r->end - t0) * (uint64_t)cols / span;
		if (c1 > c0 && (r->end - t0) * (uint64_t)cols % span == 0)
			c1--; /* an end exactly on a cell boundary stays left of it */
		if (c0 >= (uint64_t)cols)
			c0 = cols - 1;
		if (c1 >= (uint64_t)cols)
			c1 = cols - 1;
		signed char *row = cell + (size_t)ix[i] * cols;
		char *trow = text + (size_t)ix[i] * cols;
		for (uint64_t c = c0; c <= c1; c++) {
			row[c] = (signed char)style_of(r);
			trow[c] = 0;
		}
		/* NVTX ranges show their name when it fits: [host_work---] */
		if (r->kind == K_NVTX && c1 - c0 + 1 >= 3) {
			trow[c0] = '[';
			trow[c1] = ']';
			size_t nl = strlen(r->name);
			for (uint64_t c = c0 + 1, k = 0; c < c1 && k < nl; c++, k++)
				trow[c] = r->name[k];
		}
	}
	for (size_t j = 0; j < L.n; j++) {
		if (j == L.nstreams && j > 0)
			fprintf(f, "%*s |%*s|\n", labw, "", cols, "");
		fprintf(f, "%*.*s |", labw, labw, L.v[j].label);
		int cur = -1;
		for (int c = 0; c < cols; c++) {
			int s = cell[j * cols + c];
			char ch = text[j * cols + c];
			if (color && s != cur) {
				fputs(s >= 0 ? styles[s].ansi : "\033[0m", f);
				cur = s;
			}
			fputc(s < 0 ? ' ' : ch ? ch : styles[s].glyph, f);
		}
		if (color && cur >= 0)
			fputs("\033[0m", f);
		fputs("|\n", f);
	}

	/* axis: ticks at round times, labels below where they fit */
	double ns_per_col = (double)span / cols;
	uint64_t step = tick_step(ns_per_col * 10);
	char axis[1024], labels[1024];
	memset(axis, '-', (size_t)cols);
	memset(labels, ' ', (size_t)cols + 16);
	axis[cols] = 0;
	int free_from = 0;
	for (uint64_t tk = 0; tk <= span; tk += step) {
		int c = (int)((double)tk / ns_per_col);
		if (c >= cols)
			break;
		axis[c] = '+';
		char num[32];
		fmt_num(num, sizeof num, (double)tk / div);
		int l = (int)strlen(num);
		if (c >= free_from && c + l <= cols) {
			memcpy(labels + c, num, (size_t)l);
			free_from = c + l + 1;
		}
	}
	labels[cols] = 0;
	fprintf(f, "%*s +%s+\n", labw, "", axis);
	snprintf(line, sizeof line, "%*s  %.1000s", labw, uname, labels);
	/* drop trailing spaces */
	for (char *e = line + strlen(line) - 1; e > line && *e == ' '; e--)
		*e = 0;
	put_cut(f, line, width);

	/* legend, wrapped to the width */
	int used = 0;
	char col_ms[32];
	fmt_num(col_ms, sizeof col_ms, ns_per_col / div);
	for (int s = -1; s < ST_N; s++) {
		char item[64];
		if (s < 0)
			snprintf(item, sizeof item, "legend:");
		else
			snprintf(item, sizeof item, "%c %s", styles[s].glyph, styles[s].label);
		int l = (int)strlen(item);
		if (used && used + 2 + l > width) {
			fputc('\n', f);
			used = 0;
		}
		if (used) {
			fputs("  ", f);
			used += 2;
		}
		if (color && s >= 0)
			fprintf(f, "%s%c\033[0m%s", styles[s].ansi, styles[s].glyph, item + 1);
		else
			fputs(item, f);
		used += l;
	}
	fputc('\n', f);
	snprintf(line, sizeof line, "one column = %s %s", col_ms, uname);
	put_cut(f, line, width);
	free(cell);
	free(text);
	free(ix);
	free(L.v);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Chrome trace-event JSON                                                   */
/* ------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Microseconds since the trace's start, as JSON wants them. */
static void json_us(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

/* Host thread tracks: pid 2, tid = 10 * thread number + track. */
enum { TRACK_NVTX = 1, TRACK_API = 2 };

static void json_meta(FILE *f, int *first, int pid, uint32_t tid, const char *what,
		      const char *name, long sort)
{
	fprintf(f, "%s\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"%s\",\"args\":{",
		*first ? "" : ",", pid, tid, what);
	if (name) {
		fputs("\"name\":", f);
		json_str(f, name);
	} else {
		fprintf(f, "\"sort_index\":%ld", sort);
	}
	fputs("}}", f);
	*first = 0;
}

/* Write the whole trace as Chrome trace-event JSON. Return 0. */
int render_json(const struct trace *t, FILE *f)
{
	struct lanes L;
	int first = 1;
	char buf[128];
	const char *dev = trace_meta(t, "device");

	if (lanes_make(t, &L))
		return 3;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	snprintf(buf, sizeof buf, "GPU: %s", dev ? dev : "unknown device");
	json_meta(f, &first, 1, 0, "process_name", buf, 0);
	json_meta(f, &first, 1, 0, "process_sort_index", NULL, 1);
	json_meta(f, &first, 2, 0, "process_name", "Host", 0);
	json_meta(f, &first, 2, 0, "process_sort_index", NULL, 2);
	for (size_t j = 0; j < L.nstreams; j++) {
		int k = trace_stream_kind(t, L.v[j].id);
		snprintf(buf, sizeof buf, "%s stream %u", stream_kind_name(k), L.v[j].id);
		json_meta(f, &first, 1, L.v[j].id, "thread_name", buf, 0);
		json_meta(f, &first, 1, L.v[j].id, "thread_sort_index", NULL, (long)j);
	}
	/* host threads: every thread with NVTX ranges or runtime calls */
	uint32_t *tids = NULL;
	size_t ntids = 0, cap = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		if (r->kind != K_API && r->kind != K_NVTX)
			continue;
		size_t k;
		for (k = 0; k < ntids && tids[k] != r->tid; k++)
			;
		if (k < ntids)
			continue;
		if (ntids == cap) {
			cap = cap ? cap * 2 : 8;
			uint32_t *v = realloc(tids, cap * sizeof *v);
			if (!v)
				break;
			tids = v;
		}
		tids[ntids++] = r->tid;
		snprintf(buf, sizeof buf, "thread %zu (%u): NVTX", ntids, r->tid);
		json_meta(f, &first, 2, (uint32_t)(10 * ntids + TRACK_NVTX), "thread_name", buf, 0);
		snprintf(buf, sizeof buf, "thread %zu (%u): CUDA API", ntids, r->tid);
		json_meta(f, &first, 2, (uint32_t)(10 * ntids + TRACK_API), "thread_name", buf, 0);
	}
	json_meta(f, &first, 2, 1, "thread_name", "synchronization (host waits)", 0);

	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		int pid = 1;
		uint32_t tid = r->stream;
		const char *cat = kind_name(r->kind);
		switch (r->kind) {
		case K_COPY:
			snprintf(buf, sizeof buf, "%s %s", dir_name(r->dir),
				 mem_name(r->dir == D_H2D || r->dir == D_D2H ? host_mem(r) : r->src));
			break;
		case K_MEMSET:
			snprintf(buf, sizeof buf, "memset %s", mem_name(r->src));
			break;
		case K_KERNEL:
			snprintf(buf, sizeof buf, "%s", r->name);
			break;
		case K_SYNC:
			pid = 2;
			tid = 1;
			snprintf(buf, sizeof buf, "sync %s", sync_name(r->sync));
			break;
		case K_EVENT:
			snprintf(buf, sizeof buf, "event record");
			break;
		default: {
			size_t k;
			for (k = 0; k < ntids && tids[k] != r->tid; k++)
				;
			pid = 2;
			tid = (uint32_t)(10 * (k + 1) + (r->kind == K_NVTX ? TRACK_NVTX : TRACK_API));
			snprintf(buf, sizeof buf, "%s", r->name);
		}
		}
		fprintf(f, ",\n{\"ph\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%u,\"name\":",
			r->kind == K_EVENT ? "i" : "X", cat, pid, tid);
		json_str(f, buf);
		json_us(f, "ts", r->start - t->t0);
		if (r->kind == K_EVENT)
			fputs(",\"s\":\"t\"", f);
		else
			json_us(f, "dur", r->end - r->start);
		if (r->kind == K_COPY || r->kind == K_MEMSET)
			fprintf(f, ",\"args\":{\"bytes\":%llu,\"src\":\"%s\",\"dst\":\"%s\"}",
				(unsigned long long)r->bytes, mem_name(r->src), mem_name(r->dst));
		else if (r->kind == K_KERNEL)
			fprintf(f, ",\"args\":{\"grid\":\"%d,%d,%d\",\"block\":\"%d,%d,%d\"}",
				r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1],
				r->block[2]);
		else if (r->kind == K_SYNC && r->stream != NO_STREAM)
			fprintf(f, ",\"args\":{\"stream\":%u}", r->stream);
		fputc('}', f);
	}
	fprintf(f, "\n],\"otherData\":{\"records\":%zu,\"dropped\":%llu,\"complete\":%s}}\n",
		t->n, (unsigned long long)t->dropped, t->complete ? "true" : "false");
	free(tids);
	free(L.v);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* SVG                                                                       */
/* ------------------------------------------------------------------------ */

static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

/* Write the timeline as a self-contained SVG. Return 0. */
int render_svg(const struct trace *t, FILE *f)
{
	struct lanes L;
	const int W = 1200, LAB = 150, LANE = 26, BAR = 18, TOP = 44;
	const char *dev = trace_meta(t, "device");

	if (lanes_make(t, &L))
		return 3;
	int *ix = lane_index(t, &L);
	if (!ix) {
		free(L.v);
		return 3;
	}
	int plot = W - LAB - 20;
	int gap = (L.nstreams && L.nstreams < L.n) ? 10 : 0;
	int h_lanes = (int)L.n * LANE + gap;
	int H = TOP + h_lanes + 70;
	uint64_t t0, span;
	drawn_range(t, &t0, &span);
	double div;
	const char *uname;
	unit_for(span, &div, &uname);

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, Menlo, monospace\" "
		"font-size=\"12\">\n", W, H, W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">");
	xml_str(f, dev ? dev : "GPU timeline");
	fprintf(f, "</text>\n<text x=\"10\" y=\"36\" fill=\"#555555\">%zu records%s</text>\n",
		t->n, t->complete ? "" : ", trace ends early");
	for (size_t j = 0; j < L.n; j++) {
		int y = TOP + (int)j * LANE + (j >= L.nstreams ? gap : 0);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
			LAB, y, plot, LANE - 2, j % 2 ? "#f4f4f4" : "#fafafa");
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LAB - 8,
			y + LANE / 2 + 4);
		xml_str(f, L.v[j].label);
		fputs("</text>\n", f);
	}
	for (size_t i = 0; i < t->n; i++) {
		if (ix[i] < 0)
			continue;
		const struct rec *r = &t->recs[i];
		int j = ix[i];
		double x = LAB + (double)(r->start - t0) * plot / (double)span;
		double w = (double)(r->end - r->start) * plot / (double)span;
		if (w < 0.5)
			w = 0.5;
		int y = TOP + j * LANE + ((size_t)j >= L.nstreams ? gap : 0) + (LANE - 2 - BAR) / 2;
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
			"<title>", x, y, w, BAR, styles[style_of(r)].svg);
		if (r->kind == K_COPY)
			fprintf(f, "%s %llu bytes %s to %s", dir_name(r->dir),
				(unsigned long long)r->bytes, mem_name(r->src), mem_name(r->dst));
		else if (r->kind == K_MEMSET)
			fprintf(f, "memset %llu bytes", (unsigned long long)r->bytes);
		else
			xml_str(f, r->name);
		fprintf(f, ", %.3f ms</title></rect>\n", (double)(r->end - r->start) / 1e6);
		if (r->kind == K_NVTX && w > 8.0 * (double)strlen(r->name)) {
			fprintf(f, "<text x=\"%.2f\" y=\"%d\" fill=\"#ffffff\">", x + 3, y + BAR - 5);
			xml_str(f, r->name);
			fputs("</text>\n", f);
		}
	}
	/* axis */
	int ay = TOP + h_lanes + 6;
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n",
		LAB, ay, LAB + plot, ay);
	uint64_t step = tick_step((double)span / plot * 80);
	for (uint64_t tk = 0; tk <= span; tk += step) {
		double x = LAB + (double)tk * plot / (double)span;
		char num[32];
		fmt_num(num, sizeof num, (double)tk / div);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#333333\"/>"
			"<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			x, ay, x, ay + 5, x, ay + 18, num);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", LAB - 8, ay + 18,
		uname);
	/* legend */
	int lx = LAB, ly = ay + 40;
	for (int s = 0; s < ST_N; s++) {
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n", lx, ly - 11, styles[s].svg,
			lx + 18, ly, styles[s].label);
		lx += 150;
	}
	fputs("</svg>\n", f);
	free(ix);
	free(L.v);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                   */
/* ------------------------------------------------------------------------ */

/* Sum and union of the records matching one selector text. */
static void measure(const struct trace *t, const char *seltext, const struct filter *flt,
		    size_t *count, uint64_t *total, uint64_t *busy, uint64_t *bytes)
{
	struct sel s;
	const struct rec **v;
	sel_parse(seltext, &s);
	size_t n = select_recs(t, &s, flt, &v);
	struct ival *u = malloc((n ? n : 1) * sizeof *u);
	*count = n;
	*total = *bytes = 0;
	for (size_t i = 0; i < n; i++) {
		*total += v[i]->end - v[i]->start;
		*bytes += v[i]->bytes;
	}
	*busy = u ? ivals_len(u, merge_union(v, n, u)) : 0;
	free(u);
	free(v);
}

/* Overlap of two selectors' unions: ns, and the unions' lengths. */
static uint64_t overlap_of(const struct trace *t, const char *s1, const char *s2,
			   uint64_t *l1, uint64_t *l2)
{
	struct sel a, b;
	const struct rec **va, **vb;
	sel_parse(s1, &a);
	sel_parse(s2, &b);
	size_t na = select_recs(t, &a, NULL, &va), nb = select_recs(t, &b, NULL, &vb);
	struct ival *ua = malloc((na ? na : 1) * sizeof *ua);
	struct ival *ub = malloc((nb ? nb : 1) * sizeof *ub);
	uint64_t ov = 0;
	*l1 = *l2 = 0;
	if (ua && ub) {
		size_t nua = merge_union(va, na, ua), nub = merge_union(vb, nb, ub);
		ov = ivals_overlap(ua, nua, ub, nub);
		*l1 = ivals_len(ua, nua);
		*l2 = ivals_len(ub, nub);
	}
	free(ua);
	free(ub);
	free(va);
	free(vb);
	return ov;
}

static double frac(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* Print the headline figures. Return 0. */
int render_summary(const struct trace *t, FILE *f)
{
	const char *dev = trace_meta(t, "device"), *ce = trace_meta(t, "copy_engines");
	const char *argv = trace_meta(t, "argv");
	static const char *const kinds[] = { "h2d", "d2h", "d2d", "h2h", "p2p", "kernel",
					     "memset", "sync", "api", "nvtx" };
	static const char *const dirs[] = { "h2d", "d2h" };
	size_t n;
	uint64_t total, busy, bytes;

	fprintf(f, "trace      %s (%s)\n", t->path,
		t->complete ? "complete" : "ENDS EARLY: the program may have crashed");
	fprintf(f, "device     %s%s%s%s\n", dev ? dev : "unknown", ce ? ", " : "",
		ce ? ce : "", ce ? " copy engines" : "");
	if (argv)
		fprintf(f, "program    %s\n", argv);
	fprintf(f, "span       %.6f ms, %zu records, %llu dropped\n\n",
		(double)(t->t1 - t->t0) / 1e6, t->n, (unsigned long long)t->dropped);

	fprintf(f, "%-10s %8s %14s %14s\n", "kind", "count", "total ms", "busy ms");
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		measure(t, kinds[k], NULL, &n, &total, &busy, &bytes);
		if (n)
			fprintf(f, "%-10s %8zu %14.6f %14.6f\n", kinds[k], n, total / 1e6,
				busy / 1e6);
	}

	int header = 0;
	for (int d = 0; d < 2; d++)
		for (int m = M_PAGEABLE; m < M_NKINDS; m++) {
			struct filter flt = { 0, 0, m, 0 };
			measure(t, dirs[d], &flt, &n, &total, &busy, &bytes);
			if (!n)
				continue;
			if (!header++)
				fprintf(f, "\n%-14s %6s %14s %12s %9s\n", "copies", "count",
					"bytes", "ms", "GB/s");
			char what[32];
			snprintf(what, sizeof what, "%s %s", d ? "D2H" : "H2D", mem_name(m));
			fprintf(f, "%-14s %6zu %14llu %12.6f %9.3f\n", what, n,
				(unsigned long long)bytes, total / 1e6,
				total ? (double)bytes / (double)total : 0.0);
		}

	struct lanes L;
	if (lanes_make(t, &L) == 0) {
		fprintf(f, "\nstreams    ");
		for (size_t j = 0; j < L.nstreams; j++) {
			struct filter flt = { 1, 0, -1, L.v[j].id };
			size_t nc, nk, nm;
			measure(t, "copy", &flt, &nc, &total, &busy, &bytes);
			measure(t, "kernel", &flt, &nk, &total, &busy, &bytes);
			measure(t, "memset", &flt, &nm, &total, &busy, &bytes);
			fprintf(f, "%s%s (%zu copies, %zu kernels, %zu memsets)", j ? "; " : "",
				L.v[j].label, nc, nk, nm);
		}
		fprintf(f, "%s\n", L.nstreams ? "" : "none");
		free(L.v);
	}
	uint64_t l1, l2, ov = overlap_of(t, "copy", "kernel", &l1, &l2);
	fprintf(f, "overlap    copy/kernel %.6f ms (%.4f of copy time, %.4f of kernel time)\n",
		ov / 1e6, frac(ov, l1), frac(ov, l2));
	ov = overlap_of(t, "h2d", "d2h", &l1, &l2);
	fprintf(f, "           H2D/D2H     %.6f ms (%.4f of H2D time, %.4f of D2H time)\n",
		ov / 1e6, frac(ov, l1), frac(ov, l2));
	return 0;
}
