/*
 * trace_summary.c -- `streamtrace summary`: the headline figures of a trace,
 * or of a window of it. Counts, busy time and bandwidth by kind; per stream
 * its work and how much of it ran alongside another stream; and the overlap
 * figures the lab checkers use (copy/kernel, H2D/D2H), with labels. Lines
 * longer than the width wrap, under their label.
 */
#define _POSIX_C_SOURCE 200809L
#include "render.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define INDENT 11 /* "overlap    ": where a label's text starts */

/* Print one line (printf-style), wrapped at spaces to `width`; the lines
 * after the first start at column INDENT. */
static void say(FILE *f, int width, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	const char *p = buf;
	int indent = 0;
	while ((int)strlen(p) + indent > width) {
		int room = width - indent, cut = -1;
		for (int i = room; i > 0; i--)
			if (p[i] == ' ') {
				cut = i;
				break;
			}
		if (cut <= 0) /* one long word: let it run over */
			break;
		fprintf(f, "%*s%.*s\n", indent, "", cut, p);
		p += cut;
		while (*p == ' ')
			p++;
		indent = INDENT;
	}
	fprintf(f, "%*s%s\n", indent, "", p);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double frac(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	return p;
}

/* Count, total and union (busy) time, and bytes of one selector's records. */
static void measure(const struct trace *t, const char *seltext, const struct filter *flt,
		    size_t *count, uint64_t *total, uint64_t *busy, uint64_t *bytes)
{
	struct sel s;
	const struct rec **v;
	sel_parse(seltext, &s);
	size_t n = select_recs(t, &s, flt, &v);
	struct ival *u = xmalloc(n * sizeof *u);
	*count = n;
	*total = *bytes = 0;
	for (size_t i = 0; i < n; i++) {
		*total += v[i]->end - v[i]->start;
		*bytes += v[i]->bytes;
	}
	*busy = ivals_len(u, merge_union(v, n, u));
	free(u);
	free(v);
}

/* The union of one selector's records (on stream id, if by_stream), into
 * *out. Return how many intervals. */
static size_t union_of(const struct trace *t, const char *seltext, int by_stream,
		       uint32_t id, struct ival **out)
{
	struct sel s;
	const struct rec **v;
	struct filter flt = filter_none();
	flt.by_stream = by_stream;
	flt.stream = id;
	sel_parse(seltext, &s);
	size_t n = select_recs(t, &s, &flt, &v);
	*out = xmalloc(n * sizeof **out);
	n = merge_union(v, n, *out);
	free(v);
	return n;
}

/* Overlap of two selectors' unions, ns; the unions' lengths in l1, l2. */
static uint64_t overlap_of(const struct trace *t, const char *s1, const char *s2,
			   uint64_t *l1, uint64_t *l2)
{
	struct ival *a, *b;
	size_t na = union_of(t, s1, 0, 0, &a), nb = union_of(t, s2, 0, 0, &b);
	uint64_t ov = ivals_overlap(a, na, b, nb);
	*l1 = ivals_len(a, na);
	*l2 = ivals_len(b, nb);
	free(a);
	free(b);
	return ov;
}

/* The GPU work of every stream but `except`, as one union, into *out.
 * Return how many intervals. */
static size_t others_union(const struct trace *t, uint32_t except, struct ival **out)
{
	struct sel s;
	const struct rec **v;
	sel_parse("gpu", &s);
	size_t n = select_recs(t, &s, NULL, &v), m = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i]->stream != except)
			v[m++] = v[i];
	*out = xmalloc(m * sizeof **out);
	m = merge_union(v, m, *out);
	free(v);
	return m;
}

/* ------------------------------------------------------------------------ */
/* Sections                                                                  */
/* ------------------------------------------------------------------------ */

/* Where the figures come from: file, device, program, window, span. */
static void sum_head(FILE *f, const struct trace *t, int width)
{
	const char *argv = trace_meta(t, "argv");
	char dev[600];
	device_words(t, dev, sizeof dev);
	say(f, width, "trace      %s (%s)", t->path,
	    t->complete ? "complete" : "ENDS EARLY: the program may have crashed");
	say(f, width, "device     %s", dev);
	if (argv && t->nprocs <= 1)
		say(f, width, "program    %s", argv);
	for (int p = 0; t->nprocs > 1 && p < t->nprocs; p++) {
		/* a job: each process, as the lanes name it */
		const char *pid = trace_meta_of(t, (uint32_t)p, "pid");
		const char *rank = trace_meta_of(t, (uint32_t)p, "rank");
		const char *args = trace_meta_of(t, (uint32_t)p, "argv");
		say(f, width, "%-10s p%d: pid %s%s%s, %s", p ? "" : "processes", p,
		    pid ? pid : "?", rank ? ", rank " : "", rank ? rank : "", args ? args : "?");
	}
	if (!t->nwin) {
		say(f, width, "span       %.6f ms, %zu records, %llu dropped", ms(t->t1 - t->t0),
		    t->n, (unsigned long long)t->dropped);
		return;
	}
	char list[2048] = "";
	size_t used = 0;
	uint64_t len = 0;
	for (size_t k = 0; k < t->nwin; k++) {
		len += t->win[k].b - t->win[k].a;
		if (used < sizeof list - 64)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%.6f to %.6f",
						 k ? ", " : "", ms(t->win[k].a - t->t0),
						 ms(t->win[k].b - t->t0));
	}
	say(f, width, "window     %s: %s ms (ms from the trace's first record)",
	    t->win_desc ? t->win_desc : "", list);
	say(f, width, "span       %.6f ms in the window, %zu records in it (cut at its "
	    "edges), %llu dropped in the whole trace", ms(len), t->n,
	    (unsigned long long)t->dropped);
}

/* Count, total and busy time of each kind; bytes and GB/s of the copies by
 * host memory kind. */
static void sum_kinds(FILE *f, const struct trace *t, int width)
{
	static const char *const kinds[] = { "h2d", "d2h", "d2d", "h2h", "p2p", "kernel",
					     "memset", "sync", "api", "nvtx" };
	size_t n;
	uint64_t total, busy, bytes;
	say(f, width, "");
	say(f, width, "%-10s %8s %14s %14s", "kind", "count", "total ms", "busy ms");
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		measure(t, kinds[k], NULL, &n, &total, &busy, &bytes);
		if (n)
			say(f, width, "%-10s %8zu %14.6f %14.6f", kinds[k], n, ms(total), ms(busy));
	}
	int header = 0;
	for (int d = 0; d < 2; d++)
		for (int m = M_PAGEABLE; m < M_NKINDS; m++) {
			struct filter flt = filter_none();
			flt.mem = m;
			measure(t, d ? "d2h" : "h2d", &flt, &n, &total, &busy, &bytes);
			if (!n)
				continue;
			if (!header++) {
				say(f, width, "");
				say(f, width, "%-14s %6s %14s %12s %9s", "copies", "count", "bytes",
				    "ms", "GB/s");
			}
			char what[32];
			snprintf(what, sizeof what, "%s %s", d ? "D2H" : "H2D", mem_name(m));
			say(f, width, "%-14s %6zu %14llu %12.6f %9.3f", what, n,
			    (unsigned long long)bytes, ms(total), frac(bytes, total));
		}
	/* copies between devices: directly, or staged through the host */
	for (int v = 0; v < 2; v++) {
		measure(t, v ? "p2p:host" : "p2p:direct", NULL, &n, &total, &busy, &bytes);
		if (!n)
			continue;
		if (!header++) {
			say(f, width, "");
			say(f, width, "%-14s %6s %14s %12s %9s", "copies", "count", "bytes",
			    "ms", "GB/s");
		}
		say(f, width, "%-14s %6zu %14llu %12.6f %9.3f", v ? "P2P via host" : "P2P direct",
		    n, (unsigned long long)bytes, ms(total), frac(bytes, total));
	}
}

/* Per stream: its work, its busy time, and the fraction of that time
 * another stream was busy too. */
static void sum_streams(FILE *f, const struct trace *t, const struct lanes *L, int width)
{
	if (!L->nstreams)
		return;
	int lw = 14; /* the widest label: "dev 1 thread 2 default" */
	for (size_t j = 0; j < L->nstreams; j++)
		if ((int)strlen(L->v[j].label) > lw)
			lw = (int)strlen(L->v[j].label);
	say(f, width, "");
	say(f, width, "%-*s %6s %7s %7s %12s %s", lw, "stream", "copies", "kernels", "memsets",
	    "busy ms", "alongside");
	for (size_t j = 0; j < L->nstreams; j++) {
		struct filter flt = filter_none();
		flt.by_stream = 1;
		flt.stream = L->v[j].id;
		size_t nc, nk, nm;
		uint64_t total, busy, bytes;
		measure(t, "copy", &flt, &nc, &total, &busy, &bytes);
		measure(t, "kernel", &flt, &nk, &total, &busy, &bytes);
		measure(t, "memset", &flt, &nm, &total, &busy, &bytes);
		struct ival *mine, *rest;
		size_t n1 = union_of(t, "gpu", 1, L->v[j].id, &mine);
		size_t n2 = others_union(t, L->v[j].id, &rest);
		uint64_t b = ivals_len(mine, n1), ov = ivals_overlap(mine, n1, rest, n2);
		say(f, width, "%-*s %6zu %7zu %7zu %12.6f %.4f", lw, L->v[j].label, nc, nk, nm,
		    ms(b), frac(ov, b));
		free(mine);
		free(rest);
	}
	say(f, width, "%-10s of a stream's busy time, the part another stream was busy too",
	    "alongside:");
}

static int ival_start_cmp(const void *pa, const void *pb)
{
	const struct ival *a = pa, *b = pb;
	return a->a < b->a ? -1 : a->a > b->a;
}

/* Streams busy at once: the most, and the mean while any is busy (the sum
 * of the streams' busy times over the union of all GPU work). */
static void concurrency(const struct trace *t, const struct lanes *L, int *most,
			double *mean)
{
	struct ival *all = NULL, *ends;
	size_t n = 0;
	uint64_t sum = 0;
	for (size_t j = 0; j < L->nstreams; j++) {
		struct ival *u;
		size_t m = union_of(t, "gpu", 1, L->v[j].id, &u);
		struct ival *p = realloc(all, (n + m + 1) * sizeof *p);
		if (!p) {
			fprintf(stderr, "streamtrace: out of memory\n");
			exit(3);
		}
		all = p;
		memcpy(all + n, u, m * sizeof *u);
		n += m;
		sum += ivals_len(u, m);
		free(u);
	}
	/* sweep: starts in order against ends in order */
	ends = xmalloc(n * sizeof *ends);
	for (size_t i = 0; i < n; i++)
		ends[i].a = all ? all[i].b : 0;
	if (n) {
		qsort(all, n, sizeof *all, ival_start_cmp);
		qsort(ends, n, sizeof *ends, ival_start_cmp);
	}
	int cur = 0;
	*most = 0;
	for (size_t i = 0, e = 0; i < n; i++) {
		while (e < n && ends[e].a <= all[i].a) {
			e++;
			cur--;
		}
		if (++cur > *most)
			*most = cur;
	}
	struct ival *g;
	size_t ng = union_of(t, "gpu", 0, 0, &g);
	*mean = frac(sum, ivals_len(g, ng));
	free(g);
	free(ends);
	free(all);
}

/* The overlap figures: copy/kernel, H2D/kernel, D2H/kernel, H2D/D2H, and
 * how many streams were busy at once. */
static void sum_overlap(FILE *f, const struct trace *t, const struct lanes *L, int width)
{
	static const char *const pairs[][4] = {
		{ "copy", "kernel", "copy/kernel", "copy" },
		{ "h2d", "kernel", "H2D/kernel", "H2D" },
		{ "d2h", "kernel", "D2H/kernel", "D2H" },
		{ "h2d", "d2h", "H2D/D2H", "H2D" },
	};
	uint64_t l1, l2;
	say(f, width, "");
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		uint64_t ov = overlap_of(t, pairs[i][0], pairs[i][1], &l1, &l2);
		say(f, width, "%-10s %-11s %.6f ms: %.4f of %s time, %.4f of %s time",
		    i ? "" : "overlap", pairs[i][2], ms(ov), frac(ov, l1), pairs[i][3],
		    frac(ov, l2), i == 3 ? "D2H" : "kernel");
	}
	int most;
	double mean;
	concurrency(t, L, &most, &mean);
	say(f, width, "%-10s %-11s at most %d busy at once; %.2f on average while any is busy",
	    "", "streams", most, mean);
}

/* Print the headline figures in `width` columns. Return 0, or 3 when out
 * of memory. */
int render_summary(const struct trace *t, FILE *f, int width)
{
	struct lanes L;
	if (width < 40)
		width = 40;
	if (lanes_make(t, &L))
		return 3;
	sum_head(f, t, width);
	sum_kinds(f, t, width);
	sum_streams(f, t, &L, width);
	sum_overlap(f, t, &L, width);
	free(L.v);
	return 0;
}
