/*
 * trace_query.c -- selectors, interval arithmetic and `streamtrace query`.
 *
 * Every question prints one plain line (or one line per item) that a Bats
 * test can compare: times in ms with 6 decimals, fractions with 4.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define BIT(x) (1u << (x))
#define GPU_KINDS (BIT(K_COPY) | BIT(K_KERNEL) | BIT(K_MEMSET))
/* order: how far the first record's end may lie past the second's start and
 * still count as before it. CUPTI stamps the end of a kernel a little after
 * the GPU lets the work that waits for it begin: a join kernel of lab 10,
 * which the graph starts only after its branch ends, was stamped as starting
 * 0.54 us before that branch's end (1 of 480 joins, 24 programs traced at
 * once beside 24 others on one H200). A real missing wait overlaps by the
 * kernel or copy left to run, milliseconds in every lab. */
#define ORDER_SLACK_NS 5000u

/* ------------------------------------------------------------------------ */
/* Selectors                                                                 */
/* ------------------------------------------------------------------------ */

/* Parse a selector (see `streamtrace help`). Return 0, or -1 if unknown. */
int sel_parse(const char *s, struct sel *o)
{
	static const struct {
		const char *word;
		unsigned kinds, dirs;
	} plain[] = {
		{ "kernel", BIT(K_KERNEL), 0 },
		{ "h2d", BIT(K_COPY), BIT(D_H2D) },
		{ "d2h", BIT(K_COPY), BIT(D_D2H) },
		{ "d2d", BIT(K_COPY), BIT(D_D2D) },
		{ "h2h", BIT(K_COPY), BIT(D_H2H) },
		{ "p2p", BIT(K_COPY), BIT(D_P2P) },
		{ "copy", BIT(K_COPY), ~0u },
		{ "memset", BIT(K_MEMSET), 0 },
		{ "gpu", GPU_KINDS, ~0u },
		{ "sync", BIT(K_SYNC), 0 },
		{ "event", BIT(K_EVENT), 0 },
		{ "api", BIT(K_API), 0 },
		{ "nvtx", BIT(K_NVTX), 0 },
	};
	memset(o, 0, sizeof *o);
	o->sync = -1;
	o->via = -1;
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
		if (strcmp(s, plain[i].word) == 0) {
			o->kinds = plain[i].kinds;
			o->dirs = plain[i].dirs;
			return 0;
		}
	const char *arg = strchr(s, ':');
	if (!arg || !arg[1])
		return -1;
	size_t len = (size_t)(arg - s);
	arg++;
	if (len == 6 && strncmp(s, "kernel", 6) == 0) {
		o->kinds = BIT(K_KERNEL);
		o->match = NM_SUBSTR;
		o->name = arg;
	} else if (len == 3 && strncmp(s, "api", 3) == 0) {
		size_t n = strlen(arg);
		o->kinds = BIT(K_API);
		o->match = arg[n - 1] == '*' ? NM_PREFIX : NM_EXACT;
		o->name = arg;
	} else if (len == 4 && strncmp(s, "nvtx", 4) == 0) {
		o->kinds = BIT(K_NVTX);
		o->match = NM_EXACT;
		o->name = arg;
	} else if (len == 3 && strncmp(s, "p2p", 3) == 0) {
		/* p2p:direct, p2p:host: how a peer copy went */
		o->kinds = BIT(K_COPY);
		o->dirs = BIT(D_P2P);
		o->via = strcmp(arg, "direct") == 0 ? VIA_DIRECT
			 : strcmp(arg, "host") == 0 ? VIA_HOST : -1;
		if (o->via < 0)
			return -1;
	} else if (len == 4 && strncmp(s, "sync", 4) == 0) {
		static const char *const types[] = { "stream", "event", "context", "wait" };
		o->kinds = BIT(K_SYNC);
		for (int i = 0; i < 4; i++)
			if (strcmp(arg, types[i]) == 0)
				o->sync = i;
		if (o->sync < 0)
			return -1;
	} else {
		return -1;
	}
	return 0;
}

static int name_ok(const struct sel *s, const char *name)
{
	if (s->match == NM_NONE)
		return 1;
	if (!name)
		return 0;
	switch (s->match) {
	case NM_SUBSTR: return strstr(name, s->name) != NULL;
	case NM_EXACT: return strcmp(name, s->name) == 0;
	default: return strncmp(name, s->name, strlen(s->name) - 1) == 0;
	}
}

/* Did r start while a stream capture was open (after its
 * cudaStreamBeginCapture call, before its cudaStreamEndCapture call)? */
static int in_capture(const struct filter *f, const struct rec *r)
{
	for (size_t i = 0; i < f->ncap; i++) {
		const struct capspan *c = &f->cap[i];
		if (r->start < c->s0 || (r->start == c->s0 && r->line <= c->l0))
			return 0; /* (the spans are in start order) */
		if (!c->ended || r->start < c->s1 || (r->start == c->s1 && r->line < c->l1))
			return 1;
	}
	return 0;
}

/* The spans in which a stream capture was open, in start order: from a
 * cudaStreamBeginCapture call to the next cudaStreamEndCapture call, on
 * any thread (one begun while another is open: the same span), in the whole
 * trace (a window's view: its base). Made once a trace: the questions of a
 * batch (query FILE -) share them. */
static size_t capture_spans(const struct trace *t, const struct capspan **out)
{
	static const struct trace *made_for;
	static struct capspan *v;
	static size_t n;
	const struct trace *b = t->base ? t->base : t;
	if (made_for == b) {
		*out = v;
		return n;
	}
	free(v);
	v = malloc((b->n ? b->n : 1) * sizeof *v);
	n = 0;
	made_for = b;
	if (!v) {
		perror("streamtrace");
		exit(2);
	}
	for (size_t i = 0; i < b->n; i++) {
		const struct rec *r = &b->recs[i];
		if (r->kind != K_API || !r->name)
			continue;
		int open = n && !v[n - 1].ended;
		if (strncmp(r->name, "cudaStreamBeginCapture", 22) == 0 && !open)
			v[n++] = (struct capspan){ r->start, 0, r->line, 0, 0 };
		else if (strncmp(r->name, "cudaStreamEndCapture", 20) == 0 && open) {
			v[n - 1].s1 = r->start;
			v[n - 1].l1 = r->line;
			v[n - 1].ended = 1;
		}
	}
	*out = v;
	return n;
}

/* Was r queued by a runtime call made while a device other than its
 * stream's was current? (The stream's device as declared; a record on no
 * declared stream: its own device.) No, where either is not known. */
static int queued_elsewhere(const struct trace *t, const struct rec *r)
{
	uint32_t dev = r->device;
	if (r->cur == NO_DEVICE)
		return 0;
	if (r->stream != NO_STREAM) {
		struct stream_decl d = trace_stream(t, r->stream);
		if (d.kind != ST_UNKNOWN)
			dev = d.device;
	}
	return dev != NO_DEVICE && dev != r->cur;
}

static int rec_ok(const struct trace *t, const struct sel *s,
		  const struct filter *f, const struct rec *r)
{
	if (!(s->kinds & BIT(r->kind)))
		return 0;
	if (r->kind == K_COPY && !(s->dirs & BIT(r->dir)))
		return 0;
	if (s->sync >= 0 && r->sync != s->sync)
		return 0;
	if (s->via >= 0 && r->via != s->via)
		return 0;
	if (!name_ok(s, r->name))
		return 0;
	if (f && f->by_stream) {
		if (r->stream == NO_STREAM)
			return 0;
		if (f->stream_kind < 0 && f->stream_sync < 0 && r->stream != f->stream)
			return 0;
		struct stream_decl d = trace_stream(t, r->stream);
		if (f->stream_kind == ST_NOT_CREATED ? d.kind == ST_CREATED
						      : f->stream_kind >= 0 && d.kind != f->stream_kind)
			return 0;
		if (f->stream_sync >= 0 && d.sync != f->stream_sync)
			return 0;
	}
	if (f && f->device != NO_DEVICE && r->device != f->device)
		return 0;
	if (f && f->thread != NO_THREAD && trace_thread_of(t, r) != f->thread)
		return 0;
	if (f && f->current != NO_DEVICE && r->cur != f->current)
		return 0;
	if (f && f->current_other && !queued_elsewhere(t, r))
		return 0;
	if (f && f->captured && !in_capture(f, r))
		return 0;
	if (f && f->mem >= 0) {
		if (r->kind != K_COPY && r->kind != K_MEMSET)
			return 0;
		if (r->kind == K_COPY && r->dir != D_H2D && r->dir != D_D2H)
			return r->src == f->mem || r->dst == f->mem;
		return host_mem(r) == f->mem;
	}
	return 1;
}

/* A filter that lets every record through. */
struct filter filter_none(void)
{
	struct filter f = { 0, -1, -1, -1, 0, NO_DEVICE, NO_THREAD, NO_DEVICE, 0, 0, NULL, 0 };
	return f;
}

/* Point *out at a new array of the matching records, in start order.
 * Return how many. */
size_t select_recs(const struct trace *t, const struct sel *s,
		   const struct filter *f, const struct rec ***out)
{
	const struct rec **v = malloc((t->n ? t->n : 1) * sizeof *v);
	size_t n = 0;
	if (!v) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	for (size_t i = 0; i < t->n; i++)
		if (rec_ok(t, s, f, &t->recs[i]))
			v[n++] = &t->recs[i];
	*out = v;
	return n;
}

/* ------------------------------------------------------------------------ */
/* Intervals                                                                 */
/* ------------------------------------------------------------------------ */

/* Merge records (in start order) into disjoint intervals, written to out
 * (room for n). Return how many. Zero-length records add nothing. */
size_t merge_union(const struct rec *const *r, size_t n, struct ival *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = r[i]->start, b = r[i]->end;
		if (a == b)
			continue;
		if (m && a <= out[m - 1].b) {
			if (b > out[m - 1].b)
				out[m - 1].b = b;
		} else {
			out[m].a = a;
			out[m++].b = b;
		}
	}
	return m;
}

uint64_t ivals_len(const struct ival *v, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i].b - v[i].a;
	return s;
}

/* Measure of the intersection of two sorted disjoint interval lists. */
uint64_t ivals_overlap(const struct ival *a, size_t na, const struct ival *b,
		       size_t nb)
{
	uint64_t s = 0;
	size_t i = 0, j = 0;
	while (i < na && j < nb) {
		uint64_t lo = a[i].a > b[j].a ? a[i].a : b[j].a;
		uint64_t hi = a[i].b < b[j].b ? a[i].b : b[j].b;
		if (hi > lo)
			s += hi - lo;
		if (a[i].b < b[j].b)
			i++;
		else
			j++;
	}
	return s;
}

/* ------------------------------------------------------------------------ */
/* Questions                                                                 */
/* ------------------------------------------------------------------------ */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* two uint32_t: stream ids, correlation ids */
static int u32_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

/* One `list` line of r, ended by `end` ("\n", or "" to add fields). */
/* A record's name in a `list` line: a copy's direction, "memset", a sync's
 * kind, "record", else its own name (a kernel's, a call's, a range's). */
static const char *list_name(const struct rec *r)
{
	switch (r->kind) {
	case K_COPY:
		return dir_name(r->dir);
	case K_MEMSET:
		return "memset";
	case K_SYNC:
		return sync_name(r->sync);
	case K_EVENT:
		return "record";
	default:
		return r->name;
	}
}

static void print_list_line(const struct trace *t, const struct rec *r,
			    const char *end)
{
	char stream[24] = "-", bytes[24] = "-";
	const char *name = list_name(r), *mem = "-";
	if (r->stream != NO_STREAM)
		stream_id_text(t, r->stream, stream, sizeof stream);
	if (r->kind == K_COPY)
		mem = mem_name(r->dir == D_H2D || r->dir == D_D2H ? host_mem(r) : r->src);
	else if (r->kind == K_MEMSET)
		mem = mem_name(r->src);
	if (r->kind == K_COPY || r->kind == K_MEMSET)
		snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)r->bytes);
	char dev[16] = "-", thread[16] = "-";
	uint32_t tid = trace_thread_of(t, r);
	if (r->device != NO_DEVICE)
		snprintf(dev, sizeof dev, "%u", r->device);
	if (tid != NO_THREAD)
		snprintf(thread, sizeof thread, "%u", tid);
	printf("%.6f\t%.6f\t%.6f\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s", ms(r->start - t->t0),
	       ms(r->end - t->t0), ms(r->end - r->start), kind_name(r->kind),
	       stream, name, bytes, mem, dev, thread, end);
}

/*
 * For each record of a[] (start order): its `list` line, then the CUDA events
 * around it on its own stream -- the last one stamped at or before its start
 * (FROM), the first one stamped at or after its end (TO) -- the time between
 * them, and how many GPU records of that stream lie wholly between them.
 * A printed cudaEventElapsedTime is held against TO - FROM: both are the
 * GPU's own stamps of the same two events, whatever else shares the GPU.
 * "-" where there is no such event.
 */
static void print_events_around(const struct trace *t, const struct rec *const *a,
				size_t na)
{
	for (size_t i = 0; i < na; i++) {
		const struct rec *r = a[i], *from = NULL, *to = NULL;
		size_t inside = 0;
		print_list_line(t, r, "");
		if (r->stream != NO_STREAM) {
			for (size_t j = 0; j < t->n; j++) {
				const struct rec *e = &t->recs[j];
				if (e->kind != K_EVENT || e->stream != r->stream)
					continue;
				if (e->start <= r->start && (!from || e->start >= from->start))
					from = e;
				if (e->start >= r->end && (!to || e->start < to->start))
					to = e;
			}
		}
		if (!from || !to) {
			if (from)
				printf("\t%.6f\t-\t-\t-\n", ms(from->start - t->t0));
			else if (to)
				printf("\t-\t%.6f\t-\t-\n", ms(to->start - t->t0));
			else
				printf("\t-\t-\t-\t-\n");
			continue;
		}
		for (size_t j = 0; j < t->n; j++) {
			const struct rec *g = &t->recs[j];
			if (trace_is_gpu(g) && g->stream == r->stream &&
			    g->start >= from->start && g->end <= to->start)
				inside++;
		}
		printf("\t%.6f\t%.6f\t%.6f\t%zu\n", ms(from->start - t->t0),
		       ms(to->start - t->t0), ms(to->start - from->start), inside);
	}
}

/*
 * The GPU work of each range of r[] (NVTX records, start order), per device:
 * a copy, kernel or memset of g[] (start order) belongs to the first range
 * it started in (edges included). For range i and device d, the time each
 * stage kept d busy (the union of its records: kernels of two streams may
 * run at once), its kernels, and the range's span (first start to last
 * end of its work, every device).
 */
struct stage {
	size_t rep;            /* 0-based index of the range */
	uint32_t device;       /* NO_DEVICE: a range without GPU work */
	uint64_t h2d, kernel, d2h;
	size_t kernels;
	uint64_t span;         /* of the whole range, every device */
};

/* Busy time of the records of g[] (start order) that `take` picks. */
static uint64_t busy_of(const struct rec *const *g, size_t n, const char *take)
{
	struct ival *u = malloc((n ? n : 1) * sizeof *u);
	const struct rec **v = malloc((n ? n : 1) * sizeof *v);
	size_t m = 0;
	if (!u || !v) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	for (size_t i = 0; i < n; i++)
		if (take[i])
			v[m++] = g[i];
	uint64_t len = ivals_len(u, merge_union(v, m, u));
	free(u);
	free(v);
	return len;
}

/* Fill *out with the stages of every range (a line per range and device;
 * one with device NO_DEVICE for a range without work). Return how many. */
static size_t stages_of(const struct rec *const *r, size_t nr,
			const struct rec *const *g, size_t ng, struct stage **out)
{
	size_t *in = malloc((ng ? ng : 1) * sizeof *in), cap = nr + 1, n = 0;
	char *take = malloc(ng ? ng : 1);
	struct stage *s = malloc(cap * sizeof *s);
	if (!in || !take || !s) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	for (size_t j = 0; j < ng; j++) {
		in[j] = nr;
		for (size_t i = 0; i < nr; i++)
			if (g[j]->start >= r[i]->start && g[j]->start <= r[i]->end) {
				in[j] = i;
				break;
			}
	}
	for (size_t i = 0; i < nr; i++) {
		uint64_t lo = 0, hi = 0;
		int any = 0;
		for (size_t j = 0; j < ng; j++)
			if (in[j] == i) {
				if (!any || g[j]->start < lo)
					lo = g[j]->start;
				if (!any || g[j]->end > hi)
					hi = g[j]->end;
				any = 1;
			}
		/* the devices of the range, in increasing order */
		uint32_t last = 0;
		int first = 1;
		for (;;) {
			uint32_t dev = NO_DEVICE;
			for (size_t j = 0; j < ng; j++)
				if (in[j] == i && (first || g[j]->device > last) &&
				    (dev == NO_DEVICE || g[j]->device < dev))
					dev = g[j]->device;
			if (any && dev == NO_DEVICE)
				break;
			if (n == cap) {
				cap *= 2;
				s = realloc(s, cap * sizeof *s);
				if (!s) {
					fprintf(stderr, "streamtrace: out of memory\n");
					exit(3);
				}
			}
			struct stage *x = &s[n++];
			memset(x, 0, sizeof *x);
			x->rep = i;
			x->device = dev;
			x->span = hi - lo;
			if (!any)
				break;
			static const int dirs[] = { D_H2D, -1, D_D2H };
			uint64_t *to[] = { &x->h2d, &x->kernel, &x->d2h };
			for (int k = 0; k < 3; k++) {
				for (size_t j = 0; j < ng; j++) {
					const struct rec *q = g[j];
					take[j] = in[j] == i && q->device == dev &&
						  (dirs[k] < 0 ? q->kind == K_KERNEL
							       : q->kind == K_COPY && q->dir == dirs[k]);
					if (k == 1 && take[j])
						x->kernels++;
				}
				*to[k] = busy_of(g, ng, take);
			}
			last = dev;
			first = 0;
		}
	}
	free(in);
	free(take);
	*out = s;
	return n;
}

/* The copy engines of device d: its declaration, else the trace's meta
 * copy_engines, else 1. */
static int engines_of(const struct trace *t, uint32_t d)
{
	const struct device_decl *dd = trace_device(t, d);
	const char *m = trace_meta(t, "copy_engines");
	if (dd && dd->copy_engines > 0)
		return dd->copy_engines;
	return m && atoi(m) > 0 ? atoi(m) : 1;
}

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

/*
 * `bound SEQ PIPE`: the i-th range of PIPE (a pipelined run) against the
 * i-th of SEQ (the same work run one stage after the other). Each device
 * with H, K, D (its busy times in the SEQ range) and C chunks (its kernels
 * in the PIPE range), h = H / C, k = K / C, d = D / C, cannot finish its
 * pipeline sooner than its slowest stage run whole plus the first chunk's
 * earlier stages (fill) and the last chunk's later ones (drain):
 * max(H + k + d, h + K + d, h + k + D); with one copy engine the two copy
 * directions take turns: max(H + D, h + K + d). The devices work at once:
 * the pair's bound is the largest device's, its fraction bound / the PIPE
 * range's span. Prints the pair with the median fraction (the lower of
 * two): "FRACTION BOUND_MS PIPE_MS CHUNKS PAIRS", nothing without a pair.
 */
static void print_bound(const struct trace *t, const struct stage *s, size_t ns,
			const struct stage *p, size_t np)
{
	size_t n = 0, cap = np + 1;
	double *f = malloc(cap * sizeof *f), *fb = malloc(cap * sizeof *fb),
	       *fp = malloc(cap * sizeof *fp);
	size_t *fc = malloc(cap * sizeof *fc);
	if (!f || !fb || !fp || !fc) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	for (size_t i = 0; i < np;) {
		size_t rep = p[i].rep, chunks = 0;
		double b = 0, span = ms(p[i].span);
		int ok = 0;
		for (; i < np && p[i].rep == rep; i++) {
			const struct stage *q = &p[i], *sq = NULL;
			chunks += q->kernels;
			for (size_t j = 0; j < ns; j++)
				if (s[j].rep == rep && s[j].device == q->device)
					sq = &s[j];
			if (!sq || q->device == NO_DEVICE || q->kernels < 1)
				continue;
			double c = (double)q->kernels, H = ms(sq->h2d), K = ms(sq->kernel),
			       D = ms(sq->d2h), h = H / c, k = K / c, d = D / c, bg;
			if (engines_of(t, q->device) >= 2)
				bg = dmax(dmax(H + k + d, h + K + d), h + k + D);
			else
				bg = dmax(H + D, h + K + d);
			b = dmax(b, bg);
			ok = 1;
		}
		if (!ok || span <= 0)
			continue;
		f[n] = b / span;
		fb[n] = b;
		fp[n] = span;
		fc[n++] = chunks;
	}
	for (size_t i = 1; i < n; i++) /* insertion sort by fraction: stable */
		for (size_t j = i; j > 0 && f[j] < f[j - 1]; j--) {
			double x = f[j];
			f[j] = f[j - 1];
			f[j - 1] = x;
			x = fb[j];
			fb[j] = fb[j - 1];
			fb[j - 1] = x;
			x = fp[j];
			fp[j] = fp[j - 1];
			fp[j - 1] = x;
			size_t y = fc[j];
			fc[j] = fc[j - 1];
			fc[j - 1] = y;
		}
	if (n) {
		size_t m = (n + 1) / 2 - 1;
		printf("%.4f %.6f %.6f %zu %zu\n", f[m], fb[m], fp[m], fc[m], n);
	}
	free(f);
	free(fb);
	free(fp);
	free(fc);
}

/* Say what is wrong (naming the word: "%s" in fmt) and the one-line usage.
 * Return 2. */
static int usage_q(const char *fmt, const char *word)
{
	fprintf(stderr, "streamtrace query: ");
	fprintf(stderr, fmt, word);
	fprintf(stderr, "\nusage: streamtrace query FILE QUESTION [SEL [SEL2]] "
		"[FILTERS] [WINDOW]\n"
		"(streamtrace help lists questions, selectors, filters and windows)\n");
	return 2;
}

/*
 * queued: for each NVTX range, what the code in it queued, found by
 * correlation id (a GPU record and the runtime call that queued it share
 * one). Lines "NAME<TAB>K<TAB>..." (K: its number among the ranges of that
 * name, by start), sorted by range, then by type and time:
 *   R  START END                       the range
 *   A  FIRST_START LAST_END N          its thread's calls wholly inside it
 *   C  START END DIR MEM STREAM CORR   each copy those calls queued
 *   E  START STREAM                    each event record they queued
 *   K  START END STREAM CORR           each kernel they queued
 *   P  END SINCE                       each kernel or copy queued by a call
 *                                      before the range, still running when
 *                                      it began: its end, and how long after
 *                                      the range's start
 */
struct qline {
	char type;
	double at;
	char *text;
};

static int qline_cmp(const void *pa, const void *pb)
{
	const struct qline *a = pa, *b = pb;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return strcmp(a->text, b->text);
}

/* corr -> start of the runtime call of that correlation id (the last one) */
struct corr_start {
	uint32_t corr;
	uint64_t start;
	size_t i;
};

static int corr_start_cmp(const void *pa, const void *pb)
{
	const struct corr_start *a = pa, *b = pb;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static void qline_add(struct qline **l, size_t *n, size_t *cap, char type, double at,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void qline_add(struct qline **l, size_t *n, size_t *cap, char type, double at,
		      const char *fmt, ...)
{
	va_list ap;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*l = realloc(*l, *cap * sizeof **l);
		if (!*l) {
			perror("streamtrace");
			exit(2);
		}
	}
	va_start(ap, fmt);
	int len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = malloc((size_t)len + 1);
	if (!s) {
		perror("streamtrace");
		exit(2);
	}
	va_start(ap, fmt);
	vsnprintf(s, (size_t)len + 1, fmt, ap);
	va_end(ap);
	(*l)[(*n)++] = (struct qline){ type, at, s };
}

static void print_queued(const struct trace *t)
{
	struct corr_start *cs = malloc((t->n ? t->n : 1) * sizeof *cs);
	uint32_t *in = malloc((t->n ? t->n : 1) * sizeof *in);
	size_t ncs = 0;
	if (!cs || !in) {
		perror("streamtrace");
		exit(2);
	}
	for (size_t i = 0; i < t->n; i++)
		if (t->recs[i].kind == K_API && t->recs[i].corr)
			cs[ncs++] = (struct corr_start){ t->recs[i].corr, t->recs[i].start, i };
	qsort(cs, ncs, sizeof *cs, corr_start_cmp);
	for (size_t ri = 0; ri < t->n; ri++) {
		const struct rec *r = &t->recs[ri];
		if (r->kind != K_NVTX || !r->name)
			continue;
		size_t k = 1;
		for (size_t j = 0; j < t->n; j++) {
			const struct rec *o = &t->recs[j];
			if (o->kind == K_NVTX && o->name && strcmp(o->name, r->name) == 0 &&
			    (o->start < r->start || (o->start == r->start && j < ri)))
				k++;
		}
		uint32_t th = trace_thread_of(t, r);
		uint64_t a0 = 0, a1 = 0;
		size_t nin = 0;
		for (size_t j = 0; j < t->n; j++) {
			const struct rec *c = &t->recs[j];
			if (c->kind != K_API || trace_thread_of(t, c) != th || c->start < r->start ||
			    c->end > r->end)
				continue;
			if (!nin || c->start < a0)
				a0 = c->start;
			if (!nin || c->end > a1)
				a1 = c->end;
			in[nin++] = c->corr;
		}
		qsort(in, nin, sizeof *in, u32_cmp);
		struct qline *l = NULL;
		size_t nl = 0, cap = 0;
		double r0 = ms(r->start - t->t0);
		qline_add(&l, &nl, &cap, 'R', r0, "R\t%.6f\t%.6f", r0, ms(r->end - t->t0));
		if (nin)
			qline_add(&l, &nl, &cap, 'A', ms(a0 - t->t0), "A\t%.6f\t%.6f\t%zu",
				  ms(a0 - t->t0), ms(a1 - t->t0), nin);
		for (size_t j = 0; j < t->n; j++) {
			const struct rec *g = &t->recs[j];
			if ((g->kind != K_KERNEL && g->kind != K_COPY && g->kind != K_EVENT) || !g->corr)
				continue;
			char st[24] = "-";
			if (g->stream != NO_STREAM)
				stream_id_text(t, g->stream, st, sizeof st);
			double gs = ms(g->start - t->t0), ge = ms(g->end - t->t0);
			if (nin && bsearch(&g->corr, in, nin, sizeof *in, u32_cmp)) {
				if (g->kind == K_KERNEL)
					qline_add(&l, &nl, &cap, 'K', gs, "K\t%.6f\t%.6f\t%s\t%u", gs, ge,
						  st, g->corr);
				else if (g->kind == K_COPY)
					qline_add(&l, &nl, &cap, 'C', gs, "C\t%.6f\t%.6f\t%s\t%s\t%s\t%u",
						  gs, ge, dir_name(g->dir),
						  mem_name(g->dir == D_H2D || g->dir == D_D2H ? host_mem(g)
											      : g->src),
						  st, g->corr);
				else
					qline_add(&l, &nl, &cap, 'E', gs, "E\t%.6f\t%s", gs, st);
				continue;
			}
			if (g->kind == K_EVENT || g->end <= r->start)
				continue;
			/* the last call of that correlation id */
			struct corr_start key = { g->corr, 0, SIZE_MAX };
			size_t lo = 0, hi = ncs;
			while (lo < hi) { /* the first entry above key */
				size_t mid = lo + (hi - lo) / 2;
				if (corr_start_cmp(&cs[mid], &key) <= 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo && cs[lo - 1].corr == g->corr && cs[lo - 1].start < r->start)
				qline_add(&l, &nl, &cap, 'P', ge, "P\t%.6f\t%.6f", ge,
					  ms(g->end - r->start));
		}
		qsort(l, nl, sizeof *l, qline_cmp);
		for (size_t j = 0; j < nl; j++) {
			printf("%s\t%zu\t%s\n", r->name, k, l[j].text);
			free(l[j].text);
		}
		free(l);
	}
	free(cs);
	free(in);
}

/* The runtime calls of the whole trace (a window's: its base) by
 * correlation id, made once a trace (a batch's questions share them). */
static int call_corr_cmp(const void *pa, const void *pb)
{
	const struct rec *a = *(const struct rec *const *)pa, *b = *(const struct rec *const *)pb;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The runtime call (an api record of the base trace) whose correlation id
 * is corr; NULL: none, or corr 0. */
static const struct rec *call_of(const struct trace *t, uint32_t corr)
{
	static const struct trace *made_for;
	static const struct rec **v;
	static size_t n;
	const struct trace *b = t->base ? t->base : t;
	if (made_for != b) {
		free(v);
		v = malloc((b->n ? b->n : 1) * sizeof *v);
		if (!v) {
			perror("streamtrace");
			exit(2);
		}
		n = 0;
		made_for = b;
		for (size_t i = 0; i < b->n; i++)
			if (b->recs[i].kind == K_API && b->recs[i].corr)
				v[n++] = &b->recs[i];
		qsort(v, n, sizeof *v, call_corr_cmp);
	}
	size_t lo = 0, hi = n;
	while (corr && lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid]->corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return corr && lo < n && v[lo]->corr == corr ? v[lo] : NULL;
}

static int call_start_cmp(const void *pa, const void *pb)
{
	const struct rec *a = *(const struct rec *const *)pa, *b = *(const struct rec *const *)pb;
	return a < b ? -1 : a > b; /* the base's records are in start order */
}

/* next: the calls that queued a[] (an api record: itself), each once, in
 * the order they were made, and the call their thread made next, an error
 * query (cudaGetLastError, cudaPeekAtLastError) aside: the call's list
 * line, its correlation id, the next call's correlation id and name ("-"
 * and "-": it was its thread's last). */
static void print_next(const struct trace *t, const struct rec *const *a, size_t na)
{
	const struct trace *b = t->base ? t->base : t;
	const struct rec **c = malloc((na ? na : 1) * sizeof *c);
	size_t nc = 0;
	if (!c) {
		perror("streamtrace");
		exit(2);
	}
	for (size_t i = 0; i < na; i++) {
		const struct rec *k = call_of(t, a[i]->corr);
		if (k)
			c[nc++] = k;
	}
	qsort(c, nc, sizeof *c, call_start_cmp);
	for (size_t i = 0; i < nc; i++) {
		if (i && c[i] == c[i - 1])
			continue;
		const struct rec *nx = NULL;
		for (const struct rec *r = c[i] + 1; r < b->recs + b->n; r++)
			if (r->kind == K_API && r->tid == c[i]->tid && r->name &&
			    strcmp(r->name, "cudaGetLastError") != 0 &&
			    strcmp(r->name, "cudaPeekAtLastError") != 0) {
				nx = r;
				break;
			}
		print_list_line(t, c[i], "");
		if (nx)
			printf("\t%u\t%u\t%s\n", c[i]->corr, nx->corr, nx->name);
		else
			printf("\t%u\t-\t-\n", c[i]->corr);
	}
	free(c);
}

/* A graph node in launches' words: the node id, or "-" for a record no
 * graph launched ("-" sorts first). */
struct node_key {
	int none;
	uint64_t node;
};

static int node_key_cmp(const void *pa, const void *pb)
{
	const struct node_key *a = pa, *b = pb;
	if (a->none != b->none)
		return a->none ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* launches: per call that queued records of a[] (by correlation id, in the
 * order of its first record), one line "CORR N GRAPHS NODES NAMES IDS": its
 * records, its distinct graphs in order ("," between; "-": no graph), how
 * many distinct graph nodes and distinct names, and the node ids sorted. */
static void print_launches(const struct rec *const *a, size_t na)
{
	uint32_t *done = malloc((na ? na : 1) * sizeof *done);
	struct node_key *nk = malloc((na ? na : 1) * sizeof *nk);
	const char **names = malloc((na ? na : 1) * sizeof *names);
	uint32_t *graphs = malloc((na ? na : 1) * sizeof *graphs);
	size_t ndone = 0;
	if (!done || !nk || !names || !graphs) {
		perror("streamtrace");
		exit(2);
	}
	for (size_t i = 0; i < na; i++) {
		uint32_t c = a[i]->corr;
		size_t d;
		for (d = 0; d < ndone && done[d] != c; d++)
			;
		if (d < ndone)
			continue;
		done[ndone++] = c;
		size_t k = 0, nn = 0, nm = 0, ng = 0;
		for (size_t j = i; j < na; j++) {
			const struct rec *r = a[j];
			if (r->corr != c)
				continue;
			k++;
			size_t x;
			for (x = 0; x < ng && graphs[x] != r->graph; x++)
				;
			if (x == ng)
				graphs[ng++] = r->graph;
			struct node_key key = { r->graph == 0, r->graph ? r->node : 0 };
			for (x = 0; x < nn && node_key_cmp(&nk[x], &key) != 0; x++)
				;
			if (x == nn)
				nk[nn++] = key;
			const char *name = list_name(r) ? list_name(r) : "-";
			for (x = 0; x < nm && strcmp(names[x], name) != 0; x++)
				;
			if (x == nm)
				names[nm++] = name;
		}
		printf("%u %zu ", c, k);
		for (size_t x = 0; x < ng; x++) {
			if (graphs[x])
				printf("%s%u", x ? "," : "", graphs[x]);
			else
				printf("%s-", x ? "," : "");
		}
		printf(" %zu %zu ", nn, nm);
		qsort(nk, nn, sizeof *nk, node_key_cmp);
		for (size_t x = 0; x < nn; x++) {
			if (nk[x].none)
				printf("%s-", x ? "," : "");
			else
				printf("%s%llu", x ? "," : "", (unsigned long long)nk[x].node);
		}
		putchar('\n');
	}
	free(done);
	free(nk);
	free(names);
	free(graphs);
}

/* `streamtrace query FILE ...` with the file loaded: argv[0] is the
 * question. Return the exit status. */
int query_main(const struct trace *t, int argc, char **argv)
{
	struct filter f = filter_none();
	const char *pos[4];
	int npos = 0;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--stream") == 0 && i + 1 < argc) {
			/* an id, or a kind: default, per-thread, created, internal;
			 * blocking, non-blocking (how it syncs with the legacy one) */
			const char *v = argv[++i];
			f.by_stream = 1;
			for (int k = 0; k < ST_UNKNOWN; k++)
				if (strcmp(v, stream_kind_name(k)) == 0)
					f.stream_kind = k;
			if (strcmp(v, "not-created") == 0)
				f.stream_kind = ST_NOT_CREATED;
			if (strcmp(v, "blocking") == 0)
				f.stream_sync = SY_BLOCKING;
			else if (strcmp(v, "non-blocking") == 0)
				f.stream_sync = SY_NONBLOCKING;
			if (f.stream_kind < 0 && f.stream_sync < 0 && stream_id_parse(v, &f.stream))
				return usage_q("--stream takes a stream id (a job's: PROCESS:ID) or a "
					       "kind (default, per-thread, created, internal, not-created, "
					       "blocking, non-blocking), not \"%s\"", v);
		} else if ((strcmp(argv[i], "--device") == 0 || strcmp(argv[i], "--thread") == 0) &&
			   i + 1 < argc) {
			const char *v = argv[i + 1];
			char *end;
			unsigned long id = strtoul(v, &end, 10);
			if (*end || end == v || *v == '-')
				return usage_q(argv[i][2] == 'd' ? "--device takes a device number, not \"%s\""
								 : "--thread takes a thread id, not \"%s\"", v);
			if (argv[i][2] == 'd')
				f.device = (uint32_t)id;
			else
				f.thread = (uint32_t)id;
			i++;
		} else if (strcmp(argv[i], "--current") == 0 && i + 1 < argc) {
			/* a device number, or "other": a device not its stream's */
			const char *v = argv[++i];
			char *end;
			unsigned long id = strtoul(v, &end, 10);
			if (strcmp(v, "other") == 0)
				f.current_other = 1;
			else if (*end || end == v || *v == '-' || id >= NO_DEVICE)
				return usage_q("--current takes a device number or \"other\", "
					       "not \"%s\"", v);
			else
				f.current = (uint32_t)id;
		} else if (strcmp(argv[i], "--captured") == 0) {
			f.captured = 1;
		} else if (strcmp(argv[i], "--mem") == 0 && i + 1 < argc) {
			f.mem = mem_parse(argv[++i]);
			if (f.mem <= M_UNKNOWN)
				return usage_q("--mem takes PAGEABLE, PINNED, DEVICE or "
					       "MANAGED, not \"%s\"", argv[i]);
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			return usage_q("unknown option \"%s\"", argv[i]);
		} else if (npos < 4) {
			pos[npos++] = argv[i];
		} else {
			return usage_q("too many arguments: \"%s\"", argv[i]);
		}
	}
	if (npos == 0)
		return usage_q("%s", "no question");
	if (f.captured)
		f.ncap = capture_spans(t, &f.cap);
	const char *q = pos[0];

	if (strcmp(q, "dropped") == 0) {
		if (npos != 1)
			return usage_q("%s", "dropped takes no selector");
		printf("%llu\n", (unsigned long long)t->dropped);
		return 0;
	}
	if (strcmp(q, "devices") == 0) {
		if (npos != 1)
			return usage_q("%s", "devices takes no selector");
		for (size_t i = 0; i < t->ndevices; i++)
			printf("%u %d %d %s\n", t->devices[i].id, t->devices[i].copy_engines,
			       t->devices[i].sm_count, t->devices[i].name);
		return 0;
	}
	if (strcmp(q, "processes") == 0) {
		/* a job's processes (one: the trace's own): P PID RANK ARGV */
		if (npos != 1)
			return usage_q("%s", "processes takes no selector");
		for (int p = 0; p < (t->nprocs > 1 ? t->nprocs : 1); p++) {
			const char *pid = trace_meta_of(t, (uint32_t)p, "pid");
			const char *rank = trace_meta_of(t, (uint32_t)p, "rank");
			const char *args = trace_meta_of(t, (uint32_t)p, "argv");
			printf("%d\t%s\t%s\t%s\n", p, pid ? pid : "-", rank ? rank : "-",
			       args ? args : "-");
		}
		return 0;
	}
	if (strcmp(q, "threads") == 0) {
		/* each host thread, TID N: its number in the drawings (the order
		 * of the threads' first runtime call or NVTX range, thread_number) */
		if (npos != 1)
			return usage_q("%s", "threads takes no selector");
		const struct trace *b = t->base ? t->base : t;
		uint32_t seen[64];
		int n = 0;
		for (size_t i = 0; i < b->n && n < 64; i++) {
			const struct rec *r = &b->recs[i];
			if (r->kind != K_API && r->kind != K_NVTX)
				continue;
			int k;
			for (k = 0; k < n && seen[k] != r->tid; k++)
				;
			if (k == n) {
				seen[n++] = r->tid;
				printf("%u\t%d\n", r->tid, n);
			}
		}
		return 0;
	}
	if (strcmp(q, "queued") == 0) {
		if (npos != 1)
			return usage_q("%s", "queued takes no selector");
		print_queued(t);
		return 0;
	}
	if (strcmp(q, "meta") == 0) {
		if (npos != 2)
			return usage_q("%s", "meta takes one KEY");
		const char *v = trace_meta(t, pos[1]);
		if (!v) {
			fprintf(stderr, "streamtrace: %s has no meta %s\n", t->path, pos[1]);
			return 1;
		}
		printf("%s\n", v);
		return 0;
	}

	if (strcmp(q, "streams") == 0 && npos == 1) {
		/* every stream the trace declares */
		const struct trace *b = t->base ? t->base : t;
		char id[24];
		for (size_t i = 0; i < b->nstreams; i++) {
			stream_id_text(b, b->streams[i].id, id, sizeof id);
			printf("%s %s %u %s\n", id,
			       stream_kind_name(b->streams[i].kind), b->streams[i].device,
			       stream_sync_name(b->streams[i].sync));
		}
		return 0;
	}

	int two = strcmp(q, "overlap") == 0 || strcmp(q, "order") == 0 ||
		  strcmp(q, "bound") == 0;
	static const char *const one_sel[] = { "count", "total", "union", "span", "bytes",
					       "bandwidth", "durations", "streams", "list",
					       "events", "current", "corr", "stages", "graph",
					       "returned", "caller", "next", "launches" };
	int known = two;
	for (size_t i = 0; i < sizeof one_sel / sizeof one_sel[0]; i++)
		known |= strcmp(q, one_sel[i]) == 0;
	if (!known)
		return usage_q("unknown question \"%s\"", q);
	if (npos != (two ? 3 : 2))
		return usage_q(two ? "%s takes two selectors" : "%s takes one selector", q);
	struct sel s1, s2;
	if (sel_parse(pos[1], &s1))
		return usage_q("unknown selector \"%s\"", pos[1]);
	if (two && sel_parse(pos[2], &s2))
		return usage_q("unknown selector \"%s\"", pos[2]);

	const struct rec **a, **b = NULL;
	size_t na = select_recs(t, &s1, &f, &a), nb = 0;
	if (two)
		nb = select_recs(t, &s2, &f, &b);

	if (strcmp(q, "count") == 0) {
		printf("%zu\n", na);
	} else if (strcmp(q, "total") == 0 || strcmp(q, "bandwidth") == 0 ||
		   strcmp(q, "bytes") == 0) {
		uint64_t dur = 0, bytes = 0;
		for (size_t i = 0; i < na; i++) {
			dur += a[i]->end - a[i]->start;
			bytes += a[i]->bytes;
		}
		if (q[0] == 't')
			printf("%.6f\n", ms(dur));
		else if (q[1] == 'y')
			printf("%llu\n", (unsigned long long)bytes);
		else /* bytes per ns is GB/s */
			printf("%.3f\n", dur ? (double)bytes / (double)dur : 0.0);
	} else if (strcmp(q, "union") == 0) {
		struct ival *u = malloc((na ? na : 1) * sizeof *u);
		size_t nu = merge_union(a, na, u);
		printf("%.6f\n", ms(ivals_len(u, nu)));
		free(u);
	} else if (strcmp(q, "span") == 0) {
		uint64_t lo = na ? a[0]->start : 0, hi = lo;
		for (size_t i = 0; i < na; i++)
			if (a[i]->end > hi)
				hi = a[i]->end;
		printf("%.6f\n", ms(hi - lo));
	} else if (strcmp(q, "durations") == 0) {
		for (size_t i = 0; i < na; i++)
			printf("%.6f\n", ms(a[i]->end - a[i]->start));
	} else if (strcmp(q, "list") == 0) {
		for (size_t i = 0; i < na; i++)
			print_list_line(t, a[i], "\n");
	} else if (strcmp(q, "events") == 0) {
		print_events_around(t, a, na);
	} else if (strcmp(q, "current") == 0) {
		/* the list line and the device current at the call that queued it */
		for (size_t i = 0; i < na; i++) {
			print_list_line(t, a[i], "");
			if (a[i]->cur == NO_DEVICE)
				printf("\t-\n");
			else
				printf("\t%u\n", a[i]->cur);
		}
	} else if (strcmp(q, "corr") == 0) {
		/* the list line, the call that queued it (an api record: its own
		 * correlation id) and, for a copy, whether an async call did */
		for (size_t i = 0; i < na; i++) {
			print_list_line(t, a[i], "");
			if (a[i]->corr)
				printf("\t%u", a[i]->corr);
			else
				printf("\t-");
			if (a[i]->kind == K_COPY)
				printf("\t%u\n", (unsigned)a[i]->async);
			else
				printf("\t-\n");
		}
	} else if (strcmp(q, "stages") == 0 || strcmp(q, "bound") == 0) {
		/* ranges of SEL (and SEL2): the GPU work (FILTERS) started in them */
		struct sel gs;
		struct filter all = filter_none();
		const struct rec **g;
		struct stage *st1, *st2 = NULL;
		/* the ranges whatever FILTERS say: they pick the GPU work */
		free(a);
		free(b);
		na = select_recs(t, &s1, &all, &a);
		if (two)
			nb = select_recs(t, &s2, &all, &b);
		sel_parse("gpu", &gs);
		size_t ng = select_recs(t, &gs, &f, &g);
		size_t n1 = stages_of(a, na, g, ng, &st1), n2 = 0;
		if (two)
			n2 = stages_of(b, nb, g, ng, &st2);
		if (!two) {
			for (size_t i = 0; i < n1; i++) {
				char dev[16] = "-";
				if (st1[i].device != NO_DEVICE)
					snprintf(dev, sizeof dev, "%u", st1[i].device);
				printf("%zu %s %.6f %.6f %.6f %zu %.6f\n", st1[i].rep + 1, dev,
				       ms(st1[i].h2d), ms(st1[i].kernel), ms(st1[i].d2h),
				       st1[i].kernels, ms(st1[i].span));
			}
		} else {
			print_bound(t, st1, n1, st2, n2);
		}
		free(g);
		free(st1);
		free(st2);
	} else if (strcmp(q, "graph") == 0) {
		/* format 4: the list line, the graph and graph node that
		 * launched it ("-": none) and its correlation id (the
		 * cudaGraphLaunch's, for a record of a graph) */
		for (size_t i = 0; i < na; i++) {
			print_list_line(t, a[i], "");
			if (a[i]->graph)
				printf("\t%u\t%llu\t%u\n", a[i]->graph,
				       (unsigned long long)a[i]->node, a[i]->corr);
			else
				printf("\t-\t-\t%u\n", a[i]->corr);
		}
	} else if (strcmp(q, "returned") == 0) {
		/* the list line, the correlation id and what a runtime call
		 * returned (a cudaError_t, 0: cudaSuccess; "-": a trace of
		 * format 1 to 3, which does not say) */
		for (size_t i = 0; i < na; i++) {
			print_list_line(t, a[i], "");
			if (t->version < 4 || a[i]->kind != K_API)
				printf("\t%u\t-\n", a[i]->corr);
			else
				printf("\t%u\t%u\n", a[i]->corr, a[i]->ret);
		}
	} else if (strcmp(q, "caller") == 0) {
		/* the list line, and the correlation id and name of the runtime
		 * call that queued it (an api record: itself; "-": none known) */
		for (size_t i = 0; i < na; i++) {
			const struct rec *c = call_of(t, a[i]->corr);
			print_list_line(t, a[i], "");
			if (c && c->name)
				printf("\t%u\t%s\n", c->corr, c->name);
			else
				printf("\t-\t-\n");
		}
	} else if (strcmp(q, "next") == 0) {
		print_next(t, a, na);
	} else if (strcmp(q, "launches") == 0) {
		print_launches(a, na);
	} else if (strcmp(q, "streams") == 0) {
		uint32_t *ids = malloc((na ? na : 1) * sizeof *ids);
		size_t n = 0;
		for (size_t i = 0; i < na; i++)
			if (a[i]->stream != NO_STREAM)
				ids[n++] = a[i]->stream;
		qsort(ids, n, sizeof *ids, u32_cmp);
		for (size_t i = 0; i < n; i++)
			if (i == 0 || ids[i] != ids[i - 1]) {
				struct stream_decl d = trace_stream(t, ids[i]);
				char id[24];
				stream_id_text(t, ids[i], id, sizeof id);
				printf("%s %s %u %s\n", id, stream_kind_name(d.kind),
				       d.device, stream_sync_name(d.sync));
			}
		free(ids);
	} else if (strcmp(q, "overlap") == 0) {
		struct ival *ua = malloc((na ? na : 1) * sizeof *ua);
		struct ival *ub = malloc((nb ? nb : 1) * sizeof *ub);
		size_t nua = merge_union(a, na, ua), nub = merge_union(b, nb, ub);
		uint64_t ov = ivals_overlap(ua, nua, ub, nub);
		uint64_t la = ivals_len(ua, nua), lb = ivals_len(ub, nub);
		printf("%.6f %.4f %.4f\n", ms(ov), la ? (double)ov / (double)la : 0.0,
		       lb ? (double)ov / (double)lb : 0.0);
		free(ua);
		free(ub);
	} else { /* order */
		if (!na || !nb)
			printf("missing\n");
		else if (a[0]->end <= b[0]->start + ORDER_SLACK_NS)
			printf("before\n");
		else if (b[0]->end <= a[0]->start + ORDER_SLACK_NS)
			printf("after\n");
		else
			printf("overlap\n");
	}
	free(a);
	free(b);
	return 0;
}
