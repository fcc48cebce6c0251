/*
 * trace_window.c -- cut a trace to a window: the time of one or more NVTX
 * ranges (--window), or of two times (--from/--to, ms as the tool prints
 * them: from the first record).
 *
 * The result is a view: a struct trace that holds only the records inside
 * the windows, each cut at the window's edges, so that every command (draw,
 * export, summary, query) works on it unchanged. A record that crosses from
 * one window into another is cut into a piece per window; a copy cut at an
 * edge keeps its share of the bytes. With --whole, the view holds instead the
 * records that start inside a window (its edges included), each whole: what
 * a program queued in a range, not the part of its run that fell there.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char win_usage[] =
	"usage: --window nvtx:NAME[*][#K|#last][+gpu] [--window ...], "
	"or --from MS --to MS; --whole: records starting there, not cut";

/* One --window argument, taken apart. */
struct wspec {
	char name[256]; /* the range name, without its suffixes */
	int prefix;     /* NAME* : every range whose name starts with NAME */
	long k;         /* #K (1 = the first), -1 #last, 0 every one */
	int gpu;        /* +gpu: until the GPU work queued in the range is done */
};

/* Say what is wrong with `word`, then the one-line usage. Return 2. */
static int win_error(const char *word, const char *fmt, const char *arg)
{
	fprintf(stderr, "streamtrace: %s: ", word);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s\n", win_usage);
	return 2;
}

/* If argv[*i] is a window option, take it (and its value) into w and return
 * 1; return 0 if it is not one; 2 after saying what is wrong. */
int win_option(int argc, char **argv, int *i, struct winspec *w)
{
	const char *a = argv[*i];
	int is_win = strcmp(a, "--window") == 0;
	if (strcmp(a, "--whole") == 0) {
		w->whole = 1;
		return 1;
	}
	if (!is_win && strcmp(a, "--from") && strcmp(a, "--to"))
		return 0;
	if (*i + 1 >= argc)
		return win_error(a, "%s", "needs a value");
	const char *v = argv[++*i];
	if (is_win) {
		if (w->n == WIN_MAX)
			return win_error(a, "at most %s windows", "32");
		w->spec[w->n++] = v;
	} else if (a[2] == 'f') {
		w->from = v;
	} else {
		w->to = v;
	}
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------ */

/* Take "nvtx:NAME[*][#K|#last][+gpu]" apart. Return 0, or 2 after a message. */
static int wspec_parse(const char *s, struct wspec *o)
{
	memset(o, 0, sizeof *o);
	if (strncmp(s, "nvtx:", 5) != 0)
		return win_error(s, "%s", "a window is an NVTX range: nvtx:NAME");
	const char *p = s + 5;
	size_t len = strlen(p);
	if (len >= 4 && strcmp(p + len - 4, "+gpu") == 0) {
		o->gpu = 1;
		len -= 4;
	}
	const char *hash = NULL;
	for (size_t j = len; j-- > 0;)
		if (p[j] == '#') {
			hash = p + j;
			break;
		}
	if (hash) {
		const char *k = hash + 1;
		size_t kl = len - (size_t)(k - p);
		char *end;
		if (kl == 4 && strncmp(k, "last", 4) == 0) {
			o->k = -1;
		} else {
			errno = 0;
			o->k = strtol(k, &end, 10);
			if (kl == 0 || k[0] < '0' || k[0] > '9' || end != k + kl || errno ||
			    o->k < 1)
				return win_error(s, "%s", "#K counts the ranges from #1; or #last");
		}
		len = (size_t)(hash - p);
	}
	if (len && p[len - 1] == '*') {
		o->prefix = 1;
		len--;
	}
	if (len == 0 && !o->prefix)
		return win_error(s, "%s", "no range name after nvtx:");
	if (len >= sizeof o->name)
		return win_error(s, "%s", "range name too long");
	memcpy(o->name, p, len);
	o->name[len] = 0;
	return 0;
}

/* Parse "MS" (ms from the first record) into ns on the trace's clock.
 * Return 0, or 2 after a message. */
static int ms_parse(const struct trace *t, const char *opt, const char *v, uint64_t *ns)
{
	char *end;
	errno = 0;
	double ms = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(ms) || ms < 0 || ms > 1e12)
		return win_error(opt, "\"%s\" is not a time in ms (0 or more, as the "
				 "tool prints them)", v);
	*ns = t->t0 + (uint64_t)llround(ms * 1e6);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Resolving a window to intervals                                           */
/* ------------------------------------------------------------------------ */

static int nvtx_matches(const struct wspec *w, const struct rec *r)
{
	if (r->kind != K_NVTX)
		return 0;
	if (w->prefix)
		return strncmp(r->name, w->name, strlen(w->name)) == 0;
	return strcmp(r->name, w->name) == 0;
}

/* Say that no range matches w, and which range names the trace has.
 * Return 2. */
static int no_such_range(const struct trace *t, const char *spec, const struct wspec *w)
{
	char names[200] = "";
	size_t used = 0, shown = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		if (r->kind != K_NVTX)
			continue;
		size_t j; /* seen before? */
		for (j = 0; j < i; j++)
			if (t->recs[j].kind == K_NVTX && strcmp(t->recs[j].name, r->name) == 0)
				break;
		if (j < i)
			continue;
		int n = snprintf(names + used, sizeof names - used, "%s\"%s\"",
				 shown++ ? ", " : "", r->name);
		if (n < 0 || (size_t)n >= sizeof names - used) {
			snprintf(names + used, sizeof names - used, "%s", shown > 1 ? ", ..." : "...");
			break;
		}
		used += (size_t)n;
	}
	fprintf(stderr, "streamtrace: %s: no NVTX range %s\"%s\" in %s (%s%s)\n%s\n",
		spec, w->prefix ? "starting with " : "named ", w->name, t->path,
		shown ? "its ranges: " : "it has no NVTX ranges", names, win_usage);
	return 2;
}

/* The end of each correlation id's GPU work: sorted by corr, for +gpu. */
struct corr_end {
	uint32_t corr;
	uint64_t end;
};

static int corr_cmp(const void *pa, const void *pb)
{
	const struct corr_end *a = pa, *b = pb;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* The GPU records' correlation ids and ends, sorted by id, into *out.
 * Return how many. */
static size_t corr_ends(const struct trace *t, struct corr_end **out)
{
	struct corr_end *v = malloc((t->n + 1) * sizeof *v);
	size_t n = 0;
	if (!v) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	for (size_t i = 0; i < t->n; i++)
		if (trace_is_gpu(&t->recs[i]) && t->recs[i].corr) {
			v[n].corr = t->recs[i].corr;
			v[n++].end = t->recs[i].end;
		}
	qsort(v, n, sizeof *v, corr_cmp);
	*out = v;
	return n;
}

/* The latest end of GPU work queued by a runtime call of thread tid that
 * started inside [a, b]; b if there is none, or it ends earlier. */
static uint64_t gpu_end_of(const struct trace *t, const struct corr_end *ce, size_t nce,
			   uint32_t tid, uint64_t a, uint64_t b)
{
	uint64_t end = b;
	for (size_t i = 0; i < t->n && t->recs[i].start <= b; i++) {
		const struct rec *c = &t->recs[i];
		if (c->kind != K_API || c->tid != tid || c->start < a || !c->corr)
			continue;
		struct corr_end key = { c->corr, 0 };
		const struct corr_end *hit = bsearch(&key, ce, nce, sizeof *ce, corr_cmp);
		if (!hit)
			continue;
		while (hit > ce && hit[-1].corr == c->corr) /* the first of that id */
			hit--;
		for (; hit < ce + nce && hit->corr == c->corr; hit++)
			if (hit->end > end)
				end = hit->end;
	}
	return end;
}

/* Add the intervals of one --window spec to v (room for t->n + 1 more).
 * Return 0, or 2 after a message. */
static int spec_ivals(const struct trace *t, const char *spec, struct ival *v, size_t *nv)
{
	struct wspec w;
	int rc = wspec_parse(spec, &w);
	if (rc)
		return rc;
	long count = 0;
	for (size_t i = 0; i < t->n; i++)
		count += nvtx_matches(&w, &t->recs[i]);
	if (count == 0)
		return no_such_range(t, spec, &w);
	if (w.k > count) {
		char why[96];
		snprintf(why, sizeof why, "there %s only %ld range%s %%s",
			 count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
		char what[300];
		snprintf(what, sizeof what, "%s\"%s\"", w.prefix ? "starting with " : "named ",
			 w.name);
		return win_error(spec, why, what);
	}
	struct corr_end *ce = NULL;
	size_t nce = w.gpu ? corr_ends(t, &ce) : 0;
	long want = w.k == -1 ? count : w.k, seen = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		if (!nvtx_matches(&w, r) || (++seen != want && w.k != 0))
			continue;
		v[*nv].a = r->start;
		v[*nv].b = w.gpu ? gpu_end_of(t, ce, nce, r->tid, r->start, r->end) : r->end;
		(*nv)++;
	}
	free(ce);
	return 0;
}

static int ival_cmp(const void *pa, const void *pb)
{
	const struct ival *a = pa, *b = pb;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* Sort v and merge the intervals that overlap or touch. Return how many. */
static size_t ivals_merge(struct ival *v, size_t n)
{
	size_t m = 0;
	qsort(v, n, sizeof *v, ival_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && v[i].a <= v[m - 1].b) {
			if (v[i].b > v[m - 1].b)
				v[m - 1].b = v[i].b;
		} else {
			v[m++] = v[i];
		}
	}
	return m;
}

/* ------------------------------------------------------------------------ */
/* Cutting                                                                   */
/* ------------------------------------------------------------------------ */

/* Index of the first window of v[0..n) that ends at or after time x. */
static size_t first_ending_after(const struct ival *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].b < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Append r's pieces inside the windows of view to view->recs (room for
 * them is there). A record of some length keeps what lies strictly inside;
 * an instant is kept when it lies in a window, edges included. */
static void cut_rec(struct trace *view, const struct rec *r, size_t *cap)
{
	for (size_t k = first_ending_after(view->win, view->nwin, r->start);
	     k < view->nwin && view->win[k].a <= r->end; k++) {
		const struct ival *w = &view->win[k];
		uint64_t a = r->start > w->a ? r->start : w->a;
		uint64_t b = r->end < w->b ? r->end : w->b;
		if (r->end > r->start ? b <= a : b < a)
			continue;
		if (view->n == *cap) {
			size_t c = *cap * 2;
			struct rec *p = realloc(view->recs, c * sizeof *p);
			if (!p) {
				fprintf(stderr, "streamtrace: out of memory\n");
				exit(3);
			}
			view->recs = p;
			*cap = c;
		}
		struct rec *o = &view->recs[view->n++];
		*o = *r;
		o->start = a;
		o->end = b;
		/* a copy cut at an edge keeps its share of the bytes, as if it ran
		 * at one rate: its bandwidth stays the whole copy's */
		if (r->bytes && b - a < r->end - r->start)
			o->bytes = (uint64_t)llround((double)r->bytes * (double)(b - a) /
						    (double)(r->end - r->start));
	}
}

/* --whole: append r to view->recs, uncut, if it starts inside a window of
 * view (edges included; room for it is there). */
static void keep_rec(struct trace *view, const struct rec *r)
{
	size_t k = first_ending_after(view->win, view->nwin, r->start);
	if (k < view->nwin && view->win[k].a <= r->start)
		view->recs[view->n++] = *r;
}

/* What the command line asked for, in a few words, for headers. */
static char *describe(const struct winspec *w)
{
	size_t len = 64;
	for (int i = 0; i < w->n; i++)
		len += strlen(w->spec[i]) + 2;
	len += (w->from ? strlen(w->from) : 0) + (w->to ? strlen(w->to) : 0);
	char *d = malloc(len);
	if (!d)
		return NULL;
	d[0] = 0;
	for (int i = 0; i < w->n; i++) {
		strcat(d, i ? ", " : "");
		strcat(d, w->spec[i]);
	}
	if (w->from && w->to)
		sprintf(d, "%s to %s ms", w->from, w->to);
	else if (w->from)
		sprintf(d, "from %s ms", w->from);
	else if (w->to)
		sprintf(d, "to %s ms", w->to);
	if (w->whole)
		strcat(d, ", the records starting there");
	return d;
}

/* The windows w asks for, into v (sorted, disjoint). Return 0, or 2 after
 * one message. */
static int windows_of(const struct trace *t, const struct winspec *w,
		      struct ival **out, size_t *nout)
{
	struct ival *v = malloc((t->n + 2) * sizeof *v);
	size_t nv = 0;
	int rc = 0;
	if (!v) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	if ((w->from || w->to) && w->n)
		rc = win_error("--window", "%s", "give --window or --from/--to, not both");
	if (!rc && w->whole && !w->n && !w->from && !w->to)
		rc = win_error("--whole", "%s", "needs a window: --window or --from/--to");
	for (int i = 0; !rc && i < w->n; i++)
		rc = spec_ivals(t, w->spec[i], v, &nv);
	if (!rc && (w->from || w->to)) {
		uint64_t a = t->t0, b = t->t1;
		if (w->from)
			rc = ms_parse(t, "--from", w->from, &a);
		if (!rc && w->to)
			rc = ms_parse(t, "--to", w->to, &b);
		if (!rc && b <= a && w->to)
			rc = win_error("--to", "\"%s\" is not after --from", w->to);
		else if (!rc && b <= a)
			rc = win_error("--from", "\"%s\" is at or after the trace's last record",
				       w->from);
		v[nv].a = a;
		v[nv++].b = b;
	}
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*nout = ivals_merge(v, nv);
	return 0;
}

/* Make view: t cut to the windows w asks for. Return 0, or 2 after one
 * message (an unknown range name, a #K out of range, a bad number). */
int trace_window(const struct trace *t, const struct winspec *w, struct trace *view)
{
	memset(view, 0, sizeof *view);
	*view = *t;
	view->base = t;
	view->recs = NULL;
	view->n = 0;
	view->win_desc = NULL;
	int rc = windows_of(t, w, &view->win, &view->nwin);
	if (rc) {
		view->win = NULL;
		return rc;
	}
	size_t cap = t->n + 16;
	view->recs = malloc(cap * sizeof *view->recs);
	view->win_desc = describe(w);
	if (!view->recs || !view->win_desc) {
		fprintf(stderr, "streamtrace: out of memory\n");
		exit(3);
	}
	for (size_t i = 0; i < t->n; i++) {
		if (w->whole)
			keep_rec(view, &t->recs[i]);
		else
			cut_rec(view, &t->recs[i], &cap);
	}
	/* A record's pieces come out one after the other: its piece in a later
	 * window can start after the next record's piece. Sort again. */
	qsort(view->recs, view->n, sizeof *view->recs, trace_rec_cmp);
	view->t1 = view->t0;
	for (size_t i = 0; i < view->n; i++)
		if (view->recs[i].end > view->t1)
			view->t1 = view->recs[i].end;
	return 0;
}
