/*
 * trace_export.c -- a trace (or a window of it) as Chrome trace-event JSON
 * for Perfetto and chrome://tracing, and as a self-contained SVG.
 *
 * JSON: process 1 is the GPU, a track per stream in the timeline's order;
 * process 2 the host, per thread a track of NVTX ranges (nested), one of
 * runtime calls and one of its waits. A window's JSON holds only the
 * window, so Perfetto opens at it; a "window" track marks its edges.
 */
#define _POSIX_C_SOURCE 200809L
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ",KEY:US": microseconds since the trace's first record, as JSON wants
 * them (exact: ns / 1000 with three decimals). */
static void json_us(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

/* Host tracks: pid 2, tid = 10 * thread number + track; tid 1 for waits
 * of no known thread, tid 2 the window. */
enum { TRACK_NVTX = 1, TRACK_API = 2, TRACK_WAIT = 3, TID_WAITS = 1, TID_WINDOW = 2 };

/* A metadata event: a name (name != NULL) or a sort index. */
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

/* Name a track and give it its place. */
static void json_track(FILE *f, int *first, int pid, uint32_t tid, const char *name, long sort)
{
	json_meta(f, first, pid, tid, "thread_name", name, 0);
	json_meta(f, first, pid, tid, "thread_sort_index", NULL, sort);
}

/* The process of device d's GPU tracks: 1 for device 0 (and a trace of
 * one device), 10 + d for the others; the host is process 2. */
static int gpu_pid(uint32_t d)
{
	return d == 0 ? 1 : 10 + (int)d;
}

/* The track (pid, tid) of record r: its stream's, on its device's GPU
 * process; a host wait on its caller's track; else its thread's. */
static int json_track_of(const struct trace *t, const struct rec *r, uint32_t *tid)
{
	if (trace_is_gpu(r) || r->kind == K_EVENT) {
		*tid = r->stream;
		return gpu_pid(stream_device(t, r->stream));
	}
	if (r->kind == K_SYNC) {
		uint32_t caller = trace_thread_of(t, r);
		*tid = caller != NO_THREAD ? (uint32_t)(10 * thread_number(t, caller) + TRACK_WAIT)
					   : TID_WAITS;
		return 2;
	}
	*tid = (uint32_t)(10 * thread_number(t, r->tid) +
			  (r->kind == K_NVTX ? TRACK_NVTX : TRACK_API));
	return 2;
}

/* The name of a record's slice. */
static void json_name(char *buf, size_t n, const struct rec *r)
{
	switch (r->kind) {
	case K_COPY:
		if (r->dir == D_P2P && r->peer != NO_DEVICE)
			snprintf(buf, n, "P2P %u to %u %s", r->device, r->peer, via_name(r->via));
		else if (r->dir == D_P2P)
			snprintf(buf, n, "P2P from %u %s", r->device, via_name(r->via));
		else
			snprintf(buf, n, "%s %s", dir_name(r->dir),
				 mem_name(r->dir == D_H2D || r->dir == D_D2H ? host_mem(r) : r->src));
		break;
	case K_MEMSET:
		snprintf(buf, n, "memset %s", mem_name(r->src));
		break;
	case K_SYNC:
		snprintf(buf, n, "sync %s", sync_name(r->sync));
		break;
	case K_EVENT:
		snprintf(buf, n, "event record");
		break;
	default:
		snprintf(buf, n, "%s", r->name);
	}
}

/* One slice ("X") or instant ("i") for r. */
static void json_rec(FILE *f, const struct trace *t, const struct rec *r)
{
	char buf[512];
	uint32_t tid;
	int pid = json_track_of(t, r, &tid);
	json_name(buf, sizeof buf, r);
	fprintf(f, ",\n{\"ph\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%u,\"name\":",
		r->kind == K_EVENT ? "i" : "X", kind_name(r->kind), pid, tid);
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

/* Slices nest when a parent comes before its children: by start, then the
 * longer first. */
static int nest_cmp(const void *pa, const void *pb)
{
	const struct rec *a = *(const struct rec *const *)pa, *b = *(const struct rec *const *)pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* The streams of t's GPU work and CUDA events, in the timeline's order,
 * into *out. Return how many. */
static size_t gpu_tracks(const struct trace *t, const struct lanes *L, uint32_t **out)
{
	uint32_t *v = malloc((L->nstreams + t->n + 1) * sizeof *v);
	size_t n = 0;
	if (!v) {
		*out = NULL;
		return 0;
	}
	for (size_t j = 0; j < L->nstreams; j++)
		v[n++] = L->v[j].id;
	for (size_t i = 0; i < t->n; i++) { /* streams with events alone */
		const struct rec *r = &t->recs[i];
		size_t k;
		if (r->kind != K_EVENT)
			continue;
		for (k = 0; k < n && v[k] != r->stream; k++)
			;
		if (k == n)
			v[n++] = r->stream;
	}
	for (size_t i = 1; i < n; i++) /* insertion sort: few streams */
		for (size_t k = i; k > 0 && stream_order(t, v[k], v[k - 1]); k--) {
			uint32_t x = v[k];
			v[k] = v[k - 1];
			v[k - 1] = x;
		}
	*out = v;
	return n;
}

/* The tracks: GPU streams in the timeline's order, then per host thread
 * NVTX, calls and waits, the waits of no known thread, the window. */
static void json_tracks(FILE *f, const struct trace *t, const struct lanes *L, int *first)
{
	char buf[300];
	uint32_t *ids = NULL;
	size_t n = gpu_tracks(t, L, &ids);
	/* a GPU process per device that has tracks: "GPU: NAME" when there
	 * is one, "GPU 1: NAME" when there are several */
	int several = 0;
	for (size_t j = 1; j < n; j++)
		several |= stream_device(t, ids[j]) != stream_device(t, ids[0]);
	for (size_t j = 0; j < n; j++) {
		uint32_t d = stream_device(t, ids[j]);
		if (j > 0 && d == stream_device(t, ids[j - 1]))
			continue;
		const struct device_decl *dd = trace_device(t, d);
		const char *name = dd ? dd->name : trace_meta(t, "device");
		if (several)
			snprintf(buf, sizeof buf, "GPU %u: %s", d, name ? name : "unknown device");
		else
			snprintf(buf, sizeof buf, "GPU: %s", name ? name : "unknown device");
		json_meta(f, first, gpu_pid(d), 0, "process_name", buf, 0);
		json_meta(f, first, gpu_pid(d), 0, "process_sort_index", NULL, 1 + (long)d);
	}
	if (!n) {
		const char *dev = trace_meta(t, "device");
		snprintf(buf, sizeof buf, "GPU: %s", dev ? dev : "unknown device");
		json_meta(f, first, 1, 0, "process_name", buf, 0);
		json_meta(f, first, 1, 0, "process_sort_index", NULL, 1);
	}
	json_meta(f, first, 2, 0, "process_name", "Host", 0);
	json_meta(f, first, 2, 0, "process_sort_index", NULL, 1000);
	for (size_t j = 0; j < n; j++) {
		struct stream_decl d = trace_stream(t, ids[j]);
		char p[24]; /* a job: "p1 created stream 13" */
		lane_where(t, stream_proc(ids[j]), 0, 0, p, sizeof p);
		snprintf(buf, sizeof buf, "%s%s%s stream %u", p, stream_kind_name(d.kind),
			 d.sync == SY_NONBLOCKING ? " non-blocking" : "", stream_local(ids[j]));
		json_track(f, first, gpu_pid(stream_device(t, ids[j])), ids[j], buf, (long)j);
	}
	free(ids);
	int done = 0; /* thread numbers named so far */
	for (size_t j = L->nstreams; j < L->n; j++) {
		int k = L->v[j].number;
		if (k <= done)
			continue;
		done = k;
		char p[24];
		lane_where(t, thread_proc(t, L->v[j].id), 0, 0, p, sizeof p);
		snprintf(buf, sizeof buf, "%sthread %d (%u): NVTX", p, k, L->v[j].id);
		json_track(f, first, 2, (uint32_t)(10 * k + TRACK_NVTX), buf, 10 * k + TRACK_NVTX);
		snprintf(buf, sizeof buf, "%sthread %d (%u): CUDA API", p, k, L->v[j].id);
		json_track(f, first, 2, (uint32_t)(10 * k + TRACK_API), buf, 10 * k + TRACK_API);
		snprintf(buf, sizeof buf, "%sthread %d (%u): waits", p, k, L->v[j].id);
		json_track(f, first, 2, (uint32_t)(10 * k + TRACK_WAIT), buf, 10 * k + TRACK_WAIT);
	}
	json_track(f, first, 2, TID_WAITS, "synchronization (host waits)", 1000000);
	if (t->nwin)
		json_track(f, first, 2, TID_WINDOW, "window", 0);
}

/* For a view, a slice per window on the "window" track: its edges are the
 * trace's edges, so Perfetto opens at exactly the window. */
static void json_windows(FILE *f, const struct trace *t)
{
	for (size_t k = 0; k < t->nwin; k++) {
		fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"window\",\"pid\":2,\"tid\":%d,\"name\":",
			TID_WINDOW);
		json_str(f, t->win_desc ? t->win_desc : "window");
		json_us(f, "ts", t->win[k].a - t->t0);
		json_us(f, "dur", t->win[k].b - t->win[k].a);
		fputc('}', f);
	}
}

/* Write t as Chrome trace-event JSON. Return 0, or 3 when out of memory. */
int render_json(const struct trace *t, FILE *f)
{
	struct lanes L;
	int first = 1;

	if (lanes_make(t, &L))
		return 3;
	const struct rec **v = malloc((t->n + 1) * sizeof *v);
	if (!v) {
		free(L.v);
		return 3;
	}
	for (size_t i = 0; i < t->n; i++)
		v[i] = &t->recs[i];
	qsort(v, t->n, sizeof *v, nest_cmp);
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	json_tracks(f, t, &L, &first);
	json_windows(f, t);
	for (size_t i = 0; i < t->n; i++)
		json_rec(f, t, v[i]);
	fprintf(f, "\n],\"otherData\":{\"records\":%zu,\"dropped\":%llu,\"complete\":%s",
		t->n, (unsigned long long)t->dropped, t->complete ? "true" : "false");
	if (t->nwin) {
		fputs(",\"window\":", f);
		json_str(f, t->win_desc ? t->win_desc : "");
		fprintf(f, ",\"window_ms\":[");
		for (size_t k = 0; k < t->nwin; k++)
			fprintf(f, "%s[%.6f,%.6f]", k ? "," : "", (double)(t->win[k].a - t->t0) / 1e6,
				(double)(t->win[k].b - t->t0) / 1e6);
		fputc(']', f);
	}
	fputs("}}\n", f);
	free(v);
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

enum { SVG_W = 1200, SVG_LAB = 150, SVG_LANE = 26, SVG_BAR = 18, SVG_TOP = 44,
       SVG_SEP = 14 };

/* The y of lane j's top: a gap between the streams and the host lanes. */
static int svg_lane_y(const struct lanes *L, size_t j)
{
	int gap = (L->nstreams && L->nstreams < L->n) ? 10 : 0;
	return SVG_TOP + (int)j * SVG_LANE + (j >= L->nstreams ? gap : 0);
}

/* The title, the lanes' labels and their backgrounds, panel by panel. */
static void svg_frame(FILE *f, const struct trace *t, const struct lanes *L,
		      const struct layout *lo, int H)
{
	char shown[32], dev[600];
	double sum = 0;
	device_words(t, dev, sizeof dev);
	for (size_t k = 0; k < lo->n; k++)
		sum += (double)(lo->p[k].b - lo->p[k].a);
	fmt_num(shown, sizeof shown, floor(sum / 1e3 + 0.5) / 1e3);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, Menlo, monospace\" "
		"font-size=\"12\">\n", SVG_W, H, SVG_W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", SVG_W, H);
	fputs("<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", f);
	xml_str(f, dev);
	if (t->nwin) {
		fputs(" \xe2\x80\x94 ", f); /* an em dash */
		xml_str(f, t->win_desc ? t->win_desc : "window");
	}
	fprintf(f, "</text>\n<text x=\"10\" y=\"36\" fill=\"#555555\">%s ms shown, %zu "
		"records%s</text>\n", shown, t->n, t->complete ? "" : ", trace ends early");
	for (size_t j = 0; j < L->n; j++) {
		int y = svg_lane_y(L, j);
		for (size_t k = 0; k < lo->n; k++)
			fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
				"fill=\"%s\"/>\n", SVG_LAB + lo->x0[k], y, lo->w[k], SVG_LANE - 2,
				j % 2 ? "#f4f4f4" : "#fafafa");
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", SVG_LAB - 8,
			y + SVG_LANE / 2 + 4);
		xml_str(f, L->v[j].label);
		fputs("</text>\n", f);
	}
}

/* One bar per piece of r inside a panel, with its words as a tooltip and
 * an NVTX range's or call's name on it where it fits. */
static void svg_rec(FILE *f, const struct lanes *L, const struct layout *lo,
		    const struct rec *r, int j)
{
	char words[512];
	rec_words(words, sizeof words, r);
	int y = svg_lane_y(L, (size_t)j) + (SVG_LANE - 2 - SVG_BAR) / 2;
	for (size_t k = 0; k < lo->n; k++) {
		uint64_t a = r->start > lo->p[k].a ? r->start : lo->p[k].a;
		uint64_t b = r->end < lo->p[k].b ? r->end : lo->p[k].b;
		if (b < a || (b == a && r->end > r->start))
			continue;
		double x = SVG_LAB + layout_x(lo, k, a), w = layout_x(lo, k, b) - (x - SVG_LAB);
		if (w < 0.5)
			w = 0.5;
		/* a white edge keeps two bars of one colour apart, where it fits */
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"%s>"
			"<title>", x, y, w, SVG_BAR, styles[style_of(r)].svg,
			w >= 3 ? " stroke=\"#ffffff\" stroke-width=\"0.75\"" : "");
		xml_str(f, words);
		fprintf(f, ", %.3f ms</title></rect>\n", (double)(r->end - r->start) / 1e6);
		if ((r->kind == K_NVTX || r->kind == K_API) && w > 7.5 * (double)strlen(r->name) + 6) {
			fprintf(f, "<text x=\"%.2f\" y=\"%d\" fill=\"#ffffff\">", x + 3,
				y + SVG_BAR - 5);
			xml_str(f, r->name);
			fputs("</text>\n", f);
		}
	}
}

/* The axis of each panel: ticks at round ms from the trace's first record,
 * a dashed line between panels. */
static void svg_axis(FILE *f, const struct trace *t, const struct layout *lo, int ay, int h)
{
	uint64_t step = tick_step(lo->npu * 80);
	for (size_t k = 0; k < lo->n; k++) {
		double x0 = SVG_LAB + lo->x0[k];
		fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#333333\"/>\n",
			x0, ay, x0 + lo->w[k], ay);
		if (k > 0)
			fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#999999\" "
				"stroke-dasharray=\"4 3\"/>\n", x0 - SVG_SEP / 2.0, ay - h,
				x0 - SVG_SEP / 2.0, ay);
		uint64_t rel = lo->p[k].a - t->t0;
		for (uint64_t tk = (rel + step - 1) / step * step; tk + t->t0 <= lo->p[k].b;
		     tk += step) {
			double x = SVG_LAB + layout_x(lo, k, t->t0 + tk);
			char num[32];
			fmt_num(num, sizeof num, (double)tk / 1e6);
			fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#333333\"/>"
				"<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
				x, ay, x, ay + 5, x, ay + 18, num);
		}
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">ms</text>\n", SVG_LAB - 8, ay + 18);
}

/* The legend: a swatch per style the picture has. */
static void svg_legend(FILE *f, const struct trace *t, const struct lanes *L, int ly)
{
	int has[ST_N] = { 0 }, lx = SVG_LAB;
	for (size_t i = 0; i < t->n; i++)
		if (lane_of(L, &t->recs[i]) >= 0)
			has[style_of(&t->recs[i])] = 1;
	for (int s = 0; s < ST_N; s++) {
		if (!has[s])
			continue;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n", lx, ly - 11, styles[s].svg,
			lx + 18, ly, styles[s].label);
		lx += 150;
	}
}

/* Write the timeline (a view's windows side by side at one scale) as a
 * self-contained SVG. Return 0, or 3 when out of memory. */
int render_svg(const struct trace *t, FILE *f)
{
	struct lanes L;
	struct layout lo = { 0 };

	if (lanes_make(t, &L))
		return 3;
	int *ix = malloc((t->n + 1) * sizeof *ix);
	if (!ix || layout_make(t, SVG_W - SVG_LAB - 20, SVG_SEP, 0, &lo)) {
		free(ix);
		free(L.v);
		return 3;
	}
	for (size_t i = 0; i < t->n; i++)
		ix[i] = lane_of(&L, &t->recs[i]);
	int h_lanes = L.n ? svg_lane_y(&L, L.n - 1) + SVG_LANE - SVG_TOP : 0;
	int H = SVG_TOP + h_lanes + 70;
	svg_frame(f, t, &L, &lo, H);
	/* kernels last, on top: a copy's least width never hides one */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < t->n; i++)
			if (ix[i] >= 0 && (t->recs[i].kind == K_KERNEL) == pass)
				svg_rec(f, &L, &lo, &t->recs[i], ix[i]);
	svg_axis(f, t, &lo, SVG_TOP + h_lanes + 6, h_lanes);
	svg_legend(f, t, &L, SVG_TOP + h_lanes + 46);
	fputs("</svg>\n", f);
	layout_free(&lo);
	free(ix);
	free(L.v);
	return 0;
}
