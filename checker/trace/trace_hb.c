/*
 * trace_hb.c -- what the program guaranteed, not what the GPU happened to
 * do: a happens-before model of a trace, and `streamtrace ask`.
 *
 * The model. Every GPU record (kernel, copy, memset), every event record
 * (cudaEventRecord), every wait queued in a stream (cudaStreamWaitEvent) and
 * every runtime call is a node. B is guaranteed after A when a chain of
 * these edges leads from A to B, each one an order that the CUDA
 * Programming Guide ("Asynchronous Concurrent Execution") promises:
 *   - stream order: the work of one stream runs in the order it was queued
 *     (the calls' correlation ids: CUPTI numbers the calls as they begin);
 *   - the call that queues work comes before the work, and a host thread's
 *     calls come one after the other (program order);
 *   - the legacy default stream: work queued on it waits for the work queued
 *     before on the device's blocking streams (created without
 *     cudaStreamNonBlocking, and the per-thread default streams), and their
 *     work queued after waits for it;
 *   - an event: a wait queued in a stream (cudaStreamWaitEvent) comes after
 *     the work queued before the event's record on the record's stream, on
 *     any device; CUPTI's cudaEventSyncId ties the wait to that very record
 *     (format 5);
 *   - host waits: cudaStreamSynchronize, cudaEventSynchronize,
 *     cudaDeviceSynchronize and the waits CUPTI records inside other calls
 *     (a `sync` record of the call) come after what they waited for; a
 *     synchronous cudaMemcpy returns after its copy when it copies to the
 *     host or from pinned memory (Runtime API, "API synchronization
 *     behavior"). A cudaStreamSynchronize of the legacy default stream
 *     waits for the work queued in it: that the legacy stream waits for
 *     the blocking streams is said of the actions queued in it, and a
 *     synchronize queues none (a wait for it may last longer, as it
 *     happens; labs 07 and 09 teach the wait for the stream itself);
 *   - a graph launch: its nodes come after the work queued before it on its
 *     stream, and the work queued after waits for all of them. Its stream
 *     is the one of its nodes' streams that is not the driver's own (CUPTI
 *     puts a branch of the graph on an internal stream; with none, or
 *     several, each stream's nodes are joined apart). The graph's
 *     own edges between its nodes are not in the trace: two nodes of one
 *     launch are "unknown".
 *   - a cudaStreamQuery or cudaEventQuery that returned cudaSuccess (the
 *     work was done; CUPTI records a query as a synchronize; format 4 and
 *     later say what a call returned): not a wait, but what it found done
 *     is before the calls after it.
 * Nothing else orders: two host threads are not ordered (only events and
 * host waits join them), nor two processes of a job (their streams and
 * events are their own; what NCCL's kernels do between them is not in the
 * trace).
 *
 * How: the nodes in the order their calls were made (correlation id) are an
 * order every edge agrees with, so one pass gives each node a vector clock,
 * one entry per stream and per host thread; A is before B when B's clock
 * has reached A's place in A's own stream or thread. Each node keeps its
 * edges, so a "yes" is shown as the chain that proves it.
 *
 * Where the trace cannot tell (a wait with no known event record: a trace
 * older than format 5, or records CUPTI dropped), an answer that is not
 * "guaranteed" is "unknown", never "yes".
 */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"

#include <stdlib.h>
#include <string.h>

/* The slack of "observed": as trace_query.c's order (CUPTI stamps a
 * kernel's end a little after the work waiting for it may begin). */
#define OBS_SLACK_NS 5000u

enum item_kind { I_GPU, I_MARK, I_WAIT, I_CALL, I_JOIN };

/* Why one node follows another (an edge of the model). */
enum edge {
	E_STREAM,  /* stream order */
	E_ISSUE,   /* the host thread's calls before the call that queued it */
	E_THREAD,  /* the thread's call before */
	E_LEGACY,  /* the legacy default stream against a blocking stream */
	E_EVENT,   /* a wait for an event's record */
	E_HOST,    /* a host wait: stream, event or device synchronize */
	E_COPY,    /* a synchronous copy returned after its copy */
	E_GRAPH,   /* the work before a graph launch, or all of its nodes */
	E_QUERY,   /* a cudaEventQuery or cudaStreamQuery that returned cudaSuccess */
};

static const char *const edge_words[] = {
	"stream order", "queued after the thread's earlier calls", "program order",
	"the legacy default stream", "an event wait", "a host wait",
	"a synchronous copy", "a graph launch", "a query that found it done",
};

/* A node. I_JOIN: where a graph launch's nodes meet again in its stream
 * (not in the trace: what the work queued after the launch waits for). */
struct item {
	const struct rec *r;  /* the record; NULL for an untimed event record */
	const struct mark *m; /* an event record (I_MARK) */
	uint32_t corr, stream, device, tid;
	uint32_t lstream;     /* a node of a graph launch: the stream the graph
			       * was launched in (its join's); else stream */
	uint32_t agent, seq;  /* its place: which stream or thread, how far */
	uint32_t pred0, npred;
	uint8_t kind;
	uint8_t unlinked;     /* a wait, or a call that waited for an event,
			       * whose event record is not known */
	uint8_t waited;       /* a call that waited for the GPU */
};

struct pred {
	uint32_t item;
	uint8_t why;
};

struct agent {
	uint32_t id;      /* stream id or thread id */
	uint8_t thread;   /* 1: a host thread */
	uint8_t legacy;   /* a legacy default stream */
	uint8_t blocking; /* a stream that synchronises with the legacy one */
	uint32_t device;
	int64_t last;     /* its last node so far (-1: none) */
	uint32_t seq;
	int64_t pts;      /* a thread: the agent of its per-thread stream */
};

/* An index from a key (an event id, a link, a correlation id) to a node or
 * a record, sorted by key. */
struct key {
	uint64_t key;
	size_t at;
};

struct hb {
	const struct trace *t;
	struct item *it;
	size_t n;
	struct agent *ag;
	size_t na;
	uint32_t *vc;     /* n rows of na */
	struct pred *pr;
	size_t npr, cappr;
	struct key *links; /* event records by link */
	size_t nlinks;
	struct key *syncs; /* the host-wait sync records by corr */
	size_t nsyncs;
	struct key *evlast; /* per event id, its latest record so far */
	size_t nev;
	size_t *unlinked;   /* the nodes with a wait whose record is unknown */
	size_t nunlinked;
	int per_thread;   /* meta default_stream_per_thread */
};

static uint32_t *row(const struct hb *h, size_t i) { return h->vc + i * h->na; }

static int key_cmp(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* The first entry of v[0..n) with key k; n if none. */
static size_t key_find(const struct key *v, size_t n, uint64_t k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].key < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].key == k ? lo : n;
}

static int item_cmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	/* within one call: what it queued, then the call (it returns last) */
	if ((a->kind == I_CALL) != (b->kind == I_CALL))
		return a->kind == I_CALL ? 1 : -1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	uint64_t sa = a->r ? a->r->start : 0, sb = b->r ? b->r->start : 0;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	uint32_t la = a->r ? a->r->line : 0, lb = b->r ? b->r->line : 0;
	return la < lb ? -1 : la > lb;
}

/* Is agent a a stream of the context of device dev in process proc (a
 * device synchronize and the legacy stream concern those alone)? */
static int in_context(const struct agent *a, uint32_t dev, uint32_t proc)
{
	return !a->thread && a->device == dev && stream_proc(a->id) == proc;
}

static int64_t agent_of(const struct hb *h, uint32_t id, int thread)
{
	for (size_t i = 0; i < h->na; i++)
		if (h->ag[i].id == id && h->ag[i].thread == thread)
			return (int64_t)i;
	return -1;
}

static int add_agent(struct hb *h, uint32_t id, int thread, size_t *cap)
{
	if (agent_of(h, id, thread) >= 0)
		return 0;
	if (h->na == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct agent *a = realloc(h->ag, nc * sizeof *a);
		if (!a)
			return -1;
		h->ag = a;
		*cap = nc;
	}
	struct agent a = { id, (uint8_t)thread, 0, 0, NO_DEVICE, -1, 0, -1 };
	if (!thread) {
		struct stream_decl d = trace_stream(h->t, id);
		a.device = d.device;
		a.legacy = d.kind == ST_DEFAULT;
		a.blocking = d.kind == ST_PER_THREAD ||
			     (d.kind == ST_CREATED && d.sync == SY_BLOCKING);
	}
	h->ag[h->na++] = a;
	return 0;
}

static int add_pred(struct hb *h, struct item *x, int64_t from, int why)
{
	if (from < 0)
		return 0;
	for (uint32_t p = x->pred0; p < x->pred0 + x->npred; p++)
		if (h->pr[p].item == (uint32_t)from)
			return 0;
	if (h->npr == h->cappr) {
		size_t nc = h->cappr ? h->cappr * 2 : 1024;
		struct pred *p = realloc(h->pr, nc * sizeof *p);
		if (!p)
			return -1;
		h->pr = p;
		h->cappr = nc;
	}
	h->pr[h->npr].item = (uint32_t)from;
	h->pr[h->npr++].why = (uint8_t)why;
	x->npred++;
	return 0;
}

/* The node of the event record a wait or event synchronize r waited for:
 * by CUPTI's link, else the latest record of the same event queued before
 * it. -1: none known (*unlinked set where one should be there), or none
 * made: an event never recorded before the wait, in a trace that lost no
 * record, is waited for at once (CUDA Runtime API, cudaEventSynchronize
 * and cudaStreamWaitEvent: if cudaEventRecord has not been called on the
 * event, the call returns at once / acts as if the record had completed;
 * CUPTI still links such a wait to a sync id that no record carries). */
static int64_t record_of(const struct hb *h, const struct rec *r, uint8_t *unlinked)
{
	size_t k;
	if (!r->linked) {
		*unlinked = 1;
		return -1;
	}
	if (r->linked == 1) {
		k = key_find(h->links, h->nlinks, r->link);
		if (k < h->nlinks)
			return (int64_t)h->links[k].at;
		k = key_find(h->evlast, h->nev, r->event);
		if (!h->t->dropped && (k >= h->nev || h->evlast[k].at == SIZE_MAX))
			return -1; /* never recorded: the wait waits for nothing */
		*unlinked = 1; /* a link to no record: the record was lost */
		return -1;
	}
	k = key_find(h->evlast, h->nev, r->event);
	if (k < h->nev && h->evlast[k].at != SIZE_MAX)
		return (int64_t)h->evlast[k].at;
	return -1; /* never recorded: the wait waits for nothing */
}

static void hb_free(struct hb *h)
{
	free(h->it);
	free(h->ag);
	free(h->vc);
	free(h->pr);
	free(h->links);
	free(h->syncs);
	free(h->evlast);
	free(h->unlinked);
	memset(h, 0, sizeof *h);
}

/* The nodes, in the order of their calls, with a join after the nodes of
 * each graph launch. */
static int hb_nodes(const struct trace *t, struct hb *h)
{
	size_t n = 0, cap = t->n + t->nmarks + 1;
	struct item *raw = calloc(cap, sizeof *raw);
	struct key *timed = calloc(t->n + 1, sizeof *timed);
	size_t ntimed = 0;
	if (!raw || !timed)
		goto fail;
	for (size_t i = 0; i < t->n; i++)
		if (t->recs[i].kind == K_EVENT)
			timed[ntimed++] = (struct key){ ((uint64_t)t->recs[i].corr << 32) |
							t->recs[i].event, i };
	qsort(timed, ntimed, sizeof *timed, key_cmp);
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		struct item x = { r, NULL, r->corr, r->stream, r->device, NO_THREAD,
				  r->stream, 0, 0, 0, 0, 0, 0, 0 };
		if (r->kind == K_COPY || r->kind == K_KERNEL || r->kind == K_MEMSET)
			x.kind = I_GPU;
		else if (r->kind == K_SYNC && r->sync == S_WAIT && r->stream != NO_STREAM)
			x.kind = I_WAIT;
		else if (r->kind == K_API && r->corr)
			x.kind = I_CALL;
		else
			continue;
		if (x.kind != I_CALL && x.stream == NO_STREAM)
			continue;
		x.tid = x.kind == I_CALL ? r->tid : trace_thread_of(t, r);
		raw[n++] = x;
	}
	for (size_t i = 0; i < t->nmarks; i++) {
		const struct mark *m = &t->marks[i];
		struct item x = { NULL, m, m->corr, m->stream, m->device, NO_THREAD,
				  m->stream, 0, 0, 0, 0, I_MARK, 0, 0 };
		struct rec probe;
		memset(&probe, 0, sizeof probe);
		probe.corr = m->corr;
		x.tid = trace_thread_of(t, &probe);
		size_t k = key_find(timed, ntimed, ((uint64_t)m->corr << 32) | m->event);
		if (k < ntimed)
			x.r = &t->recs[timed[k].at]; /* a timed record: its time */
		raw[n++] = x;
	}
	qsort(raw, n, sizeof *raw, item_cmp);
	/* the stream each graph launch was made in: the one stream of its
	 * nodes that is not the driver's own (CUPTI puts a branch of the
	 * graph on an internal stream); where there is none, or more than
	 * one, each stream's nodes are joined apart */
	for (size_t i = 0, e; i < n; i = e) {
		uint32_t launch = NO_STREAM;
		int many = 0;
		for (e = i; e < n && raw[e].corr == raw[i].corr; e++)
			if (raw[e].kind == I_GPU && raw[e].r->graph &&
			    trace_stream(t, raw[e].stream).kind != ST_INTERNAL) {
				many |= launch != NO_STREAM && launch != raw[e].stream;
				launch = raw[e].stream;
			}
		for (size_t k = i; k < e && launch != NO_STREAM && !many; k++)
			if (raw[k].kind == I_GPU && raw[k].r->graph)
				raw[k].lstream = launch;
	}
	/* a join after the last node of each launch stream's nodes of a
	 * launch (the call that launched it comes last) */
	size_t joins = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			h->it = calloc(n + joins + 1, sizeof *h->it);
			if (!h->it)
				goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			if (pass)
				h->it[h->n++] = raw[i];
			if (raw[i].kind != I_GPU || !raw[i].r->graph)
				continue;
			size_t k = i + 1;
			while (k < n && raw[k].corr == raw[i].corr &&
			       !(raw[k].kind == I_GPU && raw[k].r->graph &&
				 raw[k].lstream == raw[i].lstream))
				k++;
			if (k < n && raw[k].corr == raw[i].corr)
				continue; /* not the last of its launch stream's */
			if (!pass) {
				joins++;
				continue;
			}
			struct item j = raw[i];
			j.r = NULL;
			j.kind = I_JOIN;
			j.stream = raw[i].lstream;
			h->it[h->n++] = j;
		}
	}
	free(raw);
	free(timed);
	return 0;
fail:
	free(raw);
	free(timed);
	return -1;
}

/* Build the model of t (the whole trace, not a view). Return 0, or -1 (said
 * on stderr). */
static int hb_build(const struct trace *t, struct hb *h)
{
	size_t cap_a = 0;
	memset(h, 0, sizeof *h);
	h->t = t;
	const char *pt = trace_meta(t, "default_stream_per_thread");
	h->per_thread = pt && strcmp(pt, "1") == 0;
	if (hb_nodes(t, h))
		goto oom;
	size_t n = h->n;
	for (size_t i = 0; i < n; i++) {
		struct item *x = &h->it[i];
		if ((x->kind != I_CALL && add_agent(h, x->stream, 0, &cap_a)) ||
		    (x->tid != NO_THREAD && add_agent(h, x->tid, 1, &cap_a)))
			goto oom;
	}
	if (n && h->na > ((size_t)1 << 28) / n) {
		fprintf(stderr, "%s: too large for the happens-before model "
			"(%zu nodes, %zu streams and threads)\n", t->path, n, h->na);
		hb_free(h);
		return -1;
	}
	h->vc = calloc(n * h->na + 1, sizeof *h->vc);
	h->links = calloc(n + 1, sizeof *h->links);
	h->evlast = calloc(n + 1, sizeof *h->evlast);
	h->syncs = calloc(t->n + 1, sizeof *h->syncs);
	h->unlinked = calloc(n + 1, sizeof *h->unlinked);
	if (!h->vc || !h->links || !h->evlast || !h->syncs || !h->unlinked)
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (h->it[i].kind == I_MARK) {
			if (h->it[i].m->linked == 1)
				h->links[h->nlinks++] = (struct key){ h->it[i].m->link, i };
			h->evlast[h->nev++] = (struct key){ h->it[i].m->event, SIZE_MAX };
		}
	qsort(h->links, h->nlinks, sizeof *h->links, key_cmp);
	qsort(h->evlast, h->nev, sizeof *h->evlast, key_cmp);
	for (size_t i = 0; i < t->n; i++)
		if (t->recs[i].kind == K_SYNC && t->recs[i].sync != S_WAIT)
			h->syncs[h->nsyncs++] = (struct key){ t->recs[i].corr, i };
	qsort(h->syncs, h->nsyncs, sizeof *h->syncs, key_cmp);

	for (size_t i = 0; i < n; i++) {
		struct item *x = &h->it[i];
		x->pred0 = (uint32_t)h->npr;
		int64_t self = x->kind == I_CALL ? agent_of(h, x->tid, 1)
						 : agent_of(h, x->stream, 0);
		int64_t th = x->tid != NO_THREAD ? agent_of(h, x->tid, 1) : -1;
		struct agent *a = &h->ag[self];
		int graph = x->kind == I_GPU && x->r->graph;
		int rc = 0;
		if (x->kind == I_CALL) {
			rc |= add_pred(h, x, a->last, E_THREAD);
			/* CUPTI records a query as a synchronize: it is one only
			 * where it returned cudaSuccess (format 4 says), and then
			 * not a wait */
			int query = strcmp(x->r->name, "cudaEventQuery") == 0 ||
				    strcmp(x->r->name, "cudaStreamQuery") == 0;
			int why = query ? E_QUERY : E_HOST;
			if (query && (t->version < 4 || x->r->ret))
				goto synced;
			for (size_t k = key_find(h->syncs, h->nsyncs, x->corr);
			     k < h->nsyncs && h->syncs[k].key == x->corr; k++) {
				const struct rec *s = &t->recs[h->syncs[k].at];
				x->waited |= !query && s->sync != S_UNKNOWN;
				if (s->sync == S_STREAM) {
					int64_t sa = agent_of(h, s->stream, 0);
					/* under --default-stream per-thread CUPTI names the
					 * legacy stream for cudaStreamSynchronize(0): the
					 * thread's own stream is the one waited for */
					if (sa >= 0 && h->ag[sa].legacy && h->per_thread && a->pts >= 0)
						rc |= add_pred(h, x, h->ag[a->pts].last, why);
					if (sa >= 0)
						rc |= add_pred(h, x, h->ag[sa].last, why);
				} else if (s->sync == S_EVENT) {
					rc |= add_pred(h, x, record_of(h, s, &x->unlinked), why);
				} else if (s->sync == S_CONTEXT) {
					for (size_t b = 0; b < h->na; b++)
						if (in_context(&h->ag[b], s->device, s->proc))
							rc |= add_pred(h, x, h->ag[b].last, why);
				}
			}
		synced:
			/* a synchronous copy to the host, or from pinned memory */
			for (size_t j = i; j-- > 0 && h->it[j].corr == x->corr;) {
				const struct rec *c = h->it[j].r;
				if (h->it[j].kind == I_GPU && c->kind == K_COPY && !c->async &&
				    (c->dir == D_D2H || (c->dir == D_H2D && c->src == M_PINNED))) {
					rc |= add_pred(h, x, (int64_t)j, E_COPY);
					x->waited = 1;
				}
			}
		} else if (x->kind == I_JOIN) {
			for (size_t j = i; j-- > 0 && h->it[j].corr == x->corr;)
				if (h->it[j].kind == I_GPU && h->it[j].r->graph &&
				    h->it[j].lstream == x->stream)
					rc |= add_pred(h, x, (int64_t)j, E_GRAPH);
		} else {
			/* in its stream; a node of a graph launch, in the stream
			 * the graph was launched in */
			struct agent *sa = graph ? &h->ag[agent_of(h, x->lstream, 0)] : a;
			rc |= add_pred(h, x, sa->last, graph ? E_GRAPH : E_STREAM);
			if (th >= 0) {
				rc |= add_pred(h, x, h->ag[th].last, E_ISSUE);
				if (trace_stream(t, x->stream).kind == ST_PER_THREAD)
					h->ag[th].pts = self;
			}
			if (sa->legacy) {
				for (size_t b = 0; b < h->na; b++)
					if (h->ag[b].blocking &&
					    in_context(&h->ag[b], sa->device, stream_proc(sa->id)))
						rc |= add_pred(h, x, h->ag[b].last, E_LEGACY);
			} else if (sa->blocking) {
				for (size_t b = 0; b < h->na; b++)
					if (h->ag[b].legacy &&
					    in_context(&h->ag[b], sa->device, stream_proc(sa->id)))
						rc |= add_pred(h, x, h->ag[b].last, E_LEGACY);
			}
			if (x->kind == I_WAIT)
				rc |= add_pred(h, x, record_of(h, x->r, &x->unlinked), E_EVENT);
		}
		if (rc)
			goto oom;
		if (x->unlinked)
			h->unlinked[h->nunlinked++] = i;
		/* the clock: the join of the edges', then its own place */
		uint32_t *v = row(h, i);
		for (uint32_t p = x->pred0; p < x->pred0 + x->npred; p++) {
			const uint32_t *w = row(h, h->pr[p].item);
			for (size_t k = 0; k < h->na; k++)
				if (w[k] > v[k])
					v[k] = w[k];
		}
		/* a join of nodes that ran on another stream (an internal
		 * one): their places, now taken */
		for (uint32_t p = x->pred0; x->kind == I_JOIN && p < x->pred0 + x->npred; p++) {
			const struct item *g = &h->it[h->pr[p].item];
			if ((int64_t)g->agent == self)
				continue;
			if (g->seq > v[g->agent])
				v[g->agent] = g->seq;
			if (g->seq > h->ag[g->agent].seq)
				h->ag[g->agent].seq = g->seq;
		}
		x->agent = (uint32_t)self;
		if (graph) {
			/* a node of a graph launch: after the work before the
			 * launch, not after the other nodes; its place is the
			 * join's, so what comes after the join comes after it */
			x->seq = a->seq + 1;
		} else {
			x->seq = ++a->seq;
			v[self] = x->seq;
			a->last = (int64_t)i;
		}
		if (x->kind == I_MARK) {
			size_t k = key_find(h->evlast, h->nev, x->m->event);
			if (k < h->nev)
				h->evlast[k].at = i;
		}
	}
	return 0;
oom:
	fprintf(stderr, "%s: out of memory\n", t->path);
	hb_free(h);
	return -1;
}

/* Is node a before node b? */
static int before(const struct hb *h, size_t a, size_t b)
{
	return a != b && row(h, b)[h->it[a].agent] >= h->it[a].seq;
}

/* ------------------------------------------------------------------------ */
/* References and answers                                                    */
/* ------------------------------------------------------------------------ */

static const char *item_word(const struct item *x)
{
	switch (x->kind) {
	case I_GPU:
		return kind_name(x->r->kind);
	case I_MARK:
		return "record";
	case I_WAIT:
		return "wait";
	case I_JOIN:
		return "launch";
	default:
		return "api";
	}
}

static int kind_match(const struct item *x, int k)
{
	switch (k) {
	case 0: return x->kind == I_GPU && x->r->kind == K_KERNEL;
	case 1: return x->kind == I_GPU && x->r->kind == K_COPY;
	case 2: return x->kind == I_GPU && x->r->kind == K_MEMSET;
	case 3: return x->kind == I_GPU;
	case 4: return x->kind == I_MARK;
	case 5: return x->kind == I_WAIT;
	default: return x->kind == I_CALL;
	}
}

/* A reference by name, KIND:NAME[#K] (NAME not a number): the Kth (default
 * first) node of that kind, in the order the calls were made, whose name
 * holds NAME (a kernel's name; a copy's H2D D2H D2D P2P; a call's name). */
static int64_t find_named(const struct hb *h, int k, const char *s)
{
	char name[256];
	const char *hash = strrchr(s, '#');
	unsigned long nth = 1;
	size_t len = hash ? (size_t)(hash - s) : strlen(s);
	if (hash) {
		char *e;
		nth = strtoul(hash + 1, &e, 10);
		if (e == hash + 1 || *e || nth == 0)
			return -2;
	}
	if (len == 0 || len >= sizeof name || k == 4 || k == 5)
		return -2;
	memcpy(name, s, len);
	name[len] = 0;
	for (size_t i = 0; i < h->n; i++) {
		const struct item *x = &h->it[i];
		const char *xn = !x->r ? NULL : x->r->kind == K_COPY ? dir_name(x->r->dir) : x->r->name;
		if (kind_match(x, k) && xn && strstr(xn, name) && --nth == 0)
			return (int64_t)i;
	}
	return -1;
}

/* A reference KIND:CORR[.N]: the Nth (default first) node of that kind of
 * call CORR; or KIND:NAME[#K] (find_named). KIND: kernel copy memset gpu
 * record wait api. -1: none, -2: not a reference. */
static int64_t find_ref(const struct hb *h, const char *s)
{
	static const char *const kinds[] = { "kernel", "copy", "memset", "gpu",
					     "record", "wait", "api" };
	const char *colon = strchr(s, ':');
	int k = -1;
	if (!colon)
		return -2;
	for (int i = 0; i < 7; i++)
		if ((size_t)(colon - s) == strlen(kinds[i]) &&
		    strncmp(s, kinds[i], strlen(kinds[i])) == 0)
			k = i;
	char *e;
	unsigned long corr = strtoul(colon + 1, &e, 10), nth = 1;
	if (k < 0)
		return -2;
	if (e == colon + 1)
		return find_named(h, k, colon + 1);
	if (*e == '.') {
		const char *d = e + 1;
		nth = strtoul(d, &e, 10);
		if (e == d || nth == 0)
			return -2;
	}
	if (*e)
		return -2;
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (h->it[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < h->n && h->it[i].corr == corr; i++)
		if (kind_match(&h->it[i], k) && --nth == 0)
			return (int64_t)i;
	return -1;
}

static void put_ref(FILE *f, const struct hb *h, size_t i)
{
	const struct item *x = &h->it[i];
	size_t nth = 1, of = 0;
	if (x->kind == I_CALL) {
		fprintf(f, "%s:%u", x->r->name, x->corr);
		return;
	}
	/* KIND:CORR.N where several of that kind share the call */
	for (size_t j = i; j-- > 0 && h->it[j].corr == x->corr;)
		nth += h->it[j].kind == x->kind &&
		       (x->kind != I_GPU || h->it[j].r->kind == x->r->kind);
	for (size_t j = i + 1; j < h->n && h->it[j].corr == x->corr; j++)
		of += h->it[j].kind == x->kind &&
		      (x->kind != I_GPU || h->it[j].r->kind == x->r->kind);
	if (nth > 1 || of)
		fprintf(f, "%s:%u.%zu", item_word(x), x->corr, nth);
	else
		fprintf(f, "%s:%u", item_word(x), x->corr);
}

/* The chain that makes a before b, from b back to a, printed from a on:
 * "copy:81 (stream order) kernel:90", runs of one stream kept short. */
static void put_chain(FILE *f, const struct hb *h, size_t a, size_t b)
{
	size_t cap = 64, n = 0;
	size_t *path = malloc(cap * sizeof *path);
	uint8_t *why = malloc(cap);
	size_t cur = b;
	while (path && why && cur != a) {
		const struct item *x = &h->it[cur];
		size_t next = cur;
		uint8_t w = 0;
		/* a itself, else a step along the same stream or thread, else
		 * the first edge that leads back to a */
		int best = 3;
		for (uint32_t p = x->pred0; p < x->pred0 + x->npred && best; p++) {
			size_t q = h->pr[p].item;
			uint8_t pw = h->pr[p].why;
			int rank = q == a ? 0 : !before(h, a, q) ? 4
				: (pw == E_STREAM || pw == E_THREAD || pw == E_GRAPH) ? 1 : 2;
			if (rank < best) {
				best = rank;
				next = q;
				w = pw;
			}
		}
		if (next == cur)
			break;
		if (n + 1 >= cap) {
			cap *= 2;
			size_t *np = realloc(path, cap * sizeof *path);
			uint8_t *nw = np ? realloc(why, cap) : NULL;
			if (np)
				path = np;
			if (!nw)
				break;
			why = nw;
		}
		path[n] = cur;
		why[n++] = w;
		cur = next;
	}
	if (!path || !why) {
		fputs("(out of memory)", f);
	} else {
		put_ref(f, h, a);
		for (size_t i = n; i-- > 0;) {
			/* leave out the middle of a run along one stream or thread */
			if (i > 0 && why[i] == why[i - 1] &&
			    (why[i] == E_STREAM || why[i] == E_THREAD))
				continue;
			fprintf(f, " (%s) ", edge_words[why[i]]);
			put_ref(f, h, path[i]);
		}
	}
	free(path);
	free(why);
}

/* Why a "no" may be wrong: a wait whose record is not known, that b is
 * after (or is), queued after a. Returns its node, or -1. */
static int64_t unknown_wait(const struct hb *h, size_t a, size_t b)
{
	for (size_t k = 0; k < h->nunlinked; k++) {
		size_t w = h->unlinked[k];
		if (h->it[w].corr > h->it[a].corr && (w == b || before(h, w, b)))
			return (int64_t)w;
	}
	return -1;
}

/* Why a "no" may be wrong, as an "unknown" answer: the wait w (a node, or
 * -1) whose event record the trace lacks, else the records CUPTI dropped.
 * Returns 1 if it wrote one. */
static int put_unknown(FILE *f, const struct hb *h, int64_t w)
{
	if (w >= 0) {
		fputs("unknown\t", f);
		put_ref(f, h, (size_t)w);
		fprintf(f, " waited for an event record the trace does not have%s\n",
			h->t->version < 5 ? " (a trace older than format 5 links no wait "
					    "to its record)" : "");
		return 1;
	}
	if (h->t->dropped) {
		fprintf(f, "unknown\tCUPTI dropped %llu records of this trace\n",
			(unsigned long long)h->t->dropped);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Questions                                                                 */
/* ------------------------------------------------------------------------ */

struct question {
	const char *name, *args;
	int nargs;
	int (*run)(const struct hb *h, char **argv, FILE *f);
	const char *help;
};

static int q_order(const struct hb *h, char **argv, FILE *f)
{
	int64_t a = find_ref(h, argv[0]), b = find_ref(h, argv[1]);
	if (a == -2 || b == -2) {
		fprintf(f, "error\tnot a reference: %s (KIND:CORR[.N] or KIND:NAME[#K], KIND one of "
			"kernel copy memset gpu record wait api)\n", a == -2 ? argv[0] : argv[1]);
		return 2;
	}
	if (a < 0 || b < 0) {
		fprintf(f, "none\tno such record: %s\n", a < 0 ? argv[0] : argv[1]);
		return 0;
	}
	if (a == b) {
		fprintf(f, "same\t%s is %s\n", argv[0], argv[1]);
		return 0;
	}
	const struct item *x = &h->it[a], *y = &h->it[b];
	if (before(h, (size_t)a, (size_t)b)) {
		fputs("guaranteed\t", f);
		put_chain(f, h, (size_t)a, (size_t)b);
		fputc('\n', f);
		return 0;
	}
	if (x->r && y->r && x->corr == y->corr && x->r->graph && y->r->graph) {
		fprintf(f, "unknown\tboth are nodes of one graph launch (call %u): the "
			"graph's own edges are not in the trace\n", x->corr);
		return 0;
	}
	if (put_unknown(f, h, unknown_wait(h, (size_t)a, (size_t)b)))
		return 0;
	if (x->r && y->r && x->r->end <= y->r->start + OBS_SLACK_NS) {
		fprintf(f, "observed-only\tnothing orders %s after %s; in this run it "
			"started %.6f ms after the other ended\n", argv[1], argv[0],
			((double)y->r->start - (double)x->r->end) / 1e6);
		return 0;
	}
	fprintf(f, "not-ordered\tnothing orders %s after %s", argv[1], argv[0]);
	if (before(h, (size_t)b, (size_t)a))
		fputs(" (it is guaranteed before it)", f);
	fputc('\n', f);
	return 0;
}

/* The Kth (1-based) NVTX range named name, by start; NULL if none. */
static const struct rec *range_of(const struct trace *t, const char *spec)
{
	char name[512];
	unsigned long k = 1;
	const char *hash = strrchr(spec, '#');
	size_t len = hash ? (size_t)(hash - spec) : strlen(spec);
	if (len >= sizeof name)
		return NULL;
	memcpy(name, spec, len);
	name[len] = 0;
	if (hash) {
		char *e;
		k = strtoul(hash + 1, &e, 10);
		if (*e || k == 0)
			return NULL;
	}
	for (size_t i = 0; i < t->n; i++)
		if (t->recs[i].kind == K_NVTX && strcmp(t->recs[i].name, name) == 0 &&
		    --k == 0)
			return &t->recs[i];
	return NULL;
}

/* Did the call at node i wait for GPU work (a host wait, or a synchronous
 * copy that returned after its copy)? */
static int host_wait(const struct hb *h, size_t i)
{
	return h->it[i].waited;
}

static int q_waits(const struct hb *h, char **argv, FILE *f)
{
	if (strncmp(argv[0], "nvtx:", 5) != 0) {
		fprintf(f, "error\tnot a range: %s (nvtx:NAME[#K])\n", argv[0]);
		return 2;
	}
	const struct rec *r = range_of(h->t, argv[0] + 5);
	if (!r) {
		fprintf(f, "none\tno such range: %s\n", argv[0]);
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < h->n; i++) {
		const struct item *x = &h->it[i];
		n += x->kind == I_CALL && x->tid == r->tid && x->r->start >= r->start &&
		     x->r->end <= r->end && host_wait(h, i);
	}
	fprintf(f, "%zu\t", n);
	size_t shown = 0;
	for (size_t i = 0; i < h->n && shown < 8; i++) {
		const struct item *x = &h->it[i];
		if (x->kind == I_CALL && x->tid == r->tid && x->r->start >= r->start &&
		    x->r->end <= r->end && host_wait(h, i)) {
			fputs(shown++ ? " " : "", f);
			put_ref(f, h, i);
		}
	}
	fputs(n > shown ? " ...\n" : "\n", f);
	return 0;
}

static int q_unordered(const struct hb *h, char **argv, FILE *f)
{
	int64_t a = find_ref(h, argv[0]);
	if (a == -2) {
		fprintf(f, "error\tnot a reference: %s\n", argv[0]);
		return 2;
	}
	if (a < 0) {
		fprintf(f, "none\tno such record: %s\n", argv[0]);
		return 0;
	}
	size_t n = 0, shown = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			fprintf(f, "%zu\t", n);
		for (size_t i = 0; i < h->n; i++) {
			if (i == (size_t)a || h->it[i].kind != I_GPU ||
			    before(h, i, (size_t)a) || before(h, (size_t)a, i))
				continue;
			if (pass == 0) {
				n++;
			} else if (shown < 8) {
				fputs(shown++ ? " " : "", f);
				put_ref(f, h, i);
			}
		}
	}
	fputs(n > shown ? " ...\n" : "\n", f);
	return 0;
}

/* The node of the runtime call that queued GPU node i (after it in the
 * order, with its correlation id); -1: none in the trace. */
static int64_t call_of(const struct hb *h, size_t i)
{
	for (size_t j = i + 1; j < h->n && h->it[j].corr == h->it[i].corr; j++)
		if (h->it[j].kind == I_CALL)
			return (int64_t)j;
	return -1;
}

/* done[k]: how far along stream or thread k the host knew the work done by
 * time T: the most any call that ended by T had waited for (its clock). */
static void done_by(const struct hb *h, uint64_t T, uint32_t *done)
{
	memset(done, 0, h->na * sizeof *done);
	for (size_t i = 0; i < h->n; i++) {
		if (h->it[i].kind != I_CALL || h->it[i].r->end > T)
			continue;
		const uint32_t *v = row(h, i);
		for (size_t k = 0; k < h->na; k++)
			if (v[k] > done[k])
				done[k] = v[k];
	}
}

/* The calls that waited for the GPU after call node c began and ended by T,
 * in words: "cudaStreamSynchronize (stream 13) x2, cudaDeviceSynchronize";
 * "none". */
static void put_waits(FILE *f, const struct hb *h, size_t c, uint64_t T)
{
	char last[160] = "", cur[160];
	int cnt = 0, any = 0;
	for (size_t i = c + 1; i <= h->n; i++) {
		cur[0] = 0;
		if (i < h->n) {
			const struct item *x = &h->it[i];
			if (x->kind != I_CALL || !x->waited || x->r->end > T ||
			    x->r->start < h->it[c].r->start)
				continue;
			uint32_t st = NO_STREAM;
			size_t k = key_find(h->syncs, h->nsyncs, x->corr);
			if (k < h->nsyncs && h->t->recs[h->syncs[k].at].sync == S_STREAM)
				st = h->t->recs[h->syncs[k].at].stream;
			char sid[24];
			if (st != NO_STREAM && stream_id_text(h->t, st, sid, sizeof sid) > 0)
				snprintf(cur, sizeof cur, "%s (stream %s)", x->r->name, sid);
			else
				snprintf(cur, sizeof cur, "%s", x->r->name);
			if (strcmp(cur, last) == 0) {
				cnt++;
				continue;
			}
		}
		if (last[0]) {
			fprintf(f, "%s%s", any ? ", " : "", last);
			if (cnt > 1)
				fprintf(f, " x%d", cnt);
			any = 1;
		}
		snprintf(last, sizeof last, "%s", cur);
		cnt = 1;
	}
	if (!any)
		fputs("none", f);
}

/* Which (from 1) of the NVTX ranges of its name, by start, is record ri? */
static unsigned long nth_range(const struct trace *t, size_t ri)
{
	unsigned long nth = 0;
	for (size_t j = 0; j <= ri; j++)
		nth += t->recs[j].kind == K_NVTX && t->recs[j].name &&
		       strcmp(t->recs[j].name, t->recs[ri].name) == 0;
	return nth;
}

/* Is range r one that spec (NAME, NAME#K or NAME*) names, but for which
 * of its name it is (#K: nth_range)? */
static int range_name_is(const struct rec *r, const char *spec)
{
	const char *hash = strrchr(spec, '#');
	size_t len = hash ? (size_t)(hash - spec) : strlen(spec);
	if (!hash && len && spec[len - 1] == '*')
		return strncmp(r->name, spec, len - 1) == 0;
	return strlen(r->name) == len && strncmp(r->name, spec, len) == 0;
}

/* A GPU node in the words of an answer: "the H2D copy", "the memset",
 * "scramble_kernel" (the: "H2D copy", "memset" without the article, as a
 * field of settled's and idle's answers). */
static void work_words(char *buf, size_t len, const struct item *x, int the)
{
	const char *a = the ? "the " : "";
	if (x->r->kind == K_COPY)
		snprintf(buf, len, "%s%s copy", a, dir_name(x->r->dir));
	else if (x->r->kind == K_MEMSET)
		snprintf(buf, len, "%smemset", a);
	else
		snprintf(buf, len, "%.*s", (int)strcspn(x->r->name, "("), x->r->name);
}

/* settled (both: the work before each range and the work in it), idle
 * (the work before it alone) and done (the work in it alone). */
enum halves { H_IDLE = 1, H_DONE = 2, H_SETTLED = 3 };
static const char *const half_words[][2] = {
	[H_IDLE] = { "idle", "not-idle" },
	[H_DONE] = { "done", "not-done" },
	[H_SETTLED] = { "settled", "not-settled" },
};

static int settled_or_idle(const struct hb *h, char **argv, FILE *f, int halves)
{
	const struct trace *t = h->t;
	const char *spec = argv[0] + 5;
	if (strncmp(argv[0], "nvtx:", 5) != 0 || !*spec) {
		fprintf(f, "error\tnot a range: %s (nvtx:NAME, nvtx:NAME#K or nvtx:NAME*)\n", argv[0]);
		return 2;
	}
	const char *hash = strrchr(spec, '#');
	if (hash) {
		char *e;
		unsigned long k = strtoul(hash + 1, &e, 10);
		if (e == hash + 1 || *e || k == 0) {
			fprintf(f, "error\tnot a range: %s (#K counts from 1)\n", argv[0]);
			return 2;
		}
	}
	uint32_t *done = calloc(h->na + 1, sizeof *done);
	int64_t *callnode = calloc(h->n + 1, sizeof *callnode);
	if (!done || !callnode) {
		free(done);
		free(callnode);
		fputs("error\tout of memory\n", f);
		return 2;
	}
	for (size_t i = 0; i < h->n; i++)
		callnode[i] = h->it[i].kind == I_GPU ? call_of(h, i) : -1;
	size_t judged = 0;
	int answered = 0;
	for (size_t ri = 0; ri < t->n && !answered; ri++) {
		const struct rec *r = &t->recs[ri];
		if (r->kind != K_NVTX || !r->name)
			continue;
		if (!range_name_is(r, spec))
			continue;
		/* (which of its name it is: counted where #K asks, or for
		 * the answer) */
		unsigned long nth = 0;
		if (hash && (nth = nth_range(t, ri)) != strtoul(hash + 1, NULL, 10))
			continue;
		judged++;
		/* before: the work queued before the range began, done when it
		 * began; after: the work queued in it, done when it ended */
		for (int after = 0; after < 2 && !answered; after++) {
			if (!(halves & (after ? H_DONE : H_IDLE)))
				continue;
			uint64_t T = after ? r->end : r->start;
			int64_t bad = -1;
			done_by(h, T, done);
			for (size_t i = 0; i < h->n; i++) {
				const struct item *x = &h->it[i];
				if (x->kind != I_GPU || callnode[i] < 0)
					continue;
				uint64_t q = h->it[callnode[i]].r->start;
				if (after ? (q < r->start || q > r->end) : q >= r->start)
					continue;
				if (done[x->agent] < x->seq && (bad < 0 || x->corr >= h->it[bad].corr))
					bad = (int64_t)i;
			}
			if (bad < 0)
				continue;
			answered = 1;
			const struct item *x = &h->it[bad];
			int64_t w = -1;
			for (size_t k = 0; k < h->nunlinked && w < 0; k++) {
				const struct item *u = &h->it[h->unlinked[k]];
				if (u->corr > x->corr && u->r && u->r->start <= T)
					w = (int64_t)h->unlinked[k];
			}
			if (put_unknown(f, h, w))
				goto out;
			struct stream_decl d = trace_stream(t, x->stream);
			char what[200];
			work_words(what, sizeof what, x, 0);
			const struct item *c = &h->it[callnode[bad]];
			fprintf(f, "%s\t%s#%lu\t%s\t%.6f\t", half_words[halves][1],
				r->name, nth ? nth : nth_range(t, ri),
				after ? "after" : "before", (double)(T - t->t0) / 1e6);
			put_ref(f, h, (size_t)bad);
			char sid[24];
			stream_id_text(t, x->stream, sid, sizeof sid);
			fprintf(f, "\t%s\t%s\t%s\t%s\t%u\t%.6f\t%.6f\t%u\t", what, sid,
				stream_kind_name(d.kind), stream_sync_name(d.sync), x->device,
				(double)(c->r->start - t->t0) / 1e6,
				(double)(x->r->end - t->t0) / 1e6, c->tid);
			put_waits(f, h, (size_t)callnode[bad], T);
			fputc('\n', f);
		}
	}
	if (!answered) {
		if (judged)
			fprintf(f, "%s\t%zu\n", half_words[halves][0], judged);
		else
			fprintf(f, "none\tno such range: %s\n", argv[0]);
	}
out:
	free(done);
	free(callnode);
	return 0;
}

static int q_settled(const struct hb *h, char **argv, FILE *f)
{
	return settled_or_idle(h, argv, f, H_SETTLED);
}

static int q_idle(const struct hb *h, char **argv, FILE *f)
{
	return settled_or_idle(h, argv, f, H_IDLE);
}

static int q_done(const struct hb *h, char **argv, FILE *f)
{
	return settled_or_idle(h, argv, f, H_DONE);
}

/* A stream in the words of an answer: "stream 0 (the legacy default
 * stream)", "a per-thread default stream", "stream 13 (created, blocking)". */
static void stream_words(char *buf, size_t len, const struct trace *t, uint32_t s)
{
	struct stream_decl d = trace_stream(t, s);
	char sid[24];
	stream_id_text(t, s, sid, sizeof sid);
	if (d.kind == ST_DEFAULT)
		snprintf(buf, len, "stream 0 (the legacy default stream)");
	else if (d.kind == ST_PER_THREAD)
		snprintf(buf, len, "a per-thread default stream");
	else if (d.kind == ST_CREATED)
		snprintf(buf, len, "stream %s (created%s%s)", sid, d.sync == SY_NONE ? "" : ", ",
			 d.sync == SY_NONE ? "" : stream_sync_name(d.sync));
	else
		snprintf(buf, len, "stream %s (it ran no copy or kernel)", sid);
}

/* Does the GPU order node w after (start) or before (stop) the event record
 * e? Else why not, in buf. */
static int ordered_with(const struct hb *h, size_t w, size_t e, int start,
			char *buf, size_t len)
{
	if (start ? before(h, e, w) : before(h, w, e))
		return 1;
	char what[160], ws[96], es[96];
	work_words(what, sizeof what, &h->it[w], 1);
	stream_words(ws, sizeof ws, h->t, h->it[w].stream);
	stream_words(es, sizeof es, h->t, h->it[e].stream);
	if ((start ? unknown_wait(h, e, w) : unknown_wait(h, w, e)) >= 0 || h->t->dropped)
		snprintf(buf, len, "%s ran on %s, the %s event on %s: the trace cannot tell "
			 "whether the GPU orders the two (a wait whose event record it lacks, "
			 "or records CUPTI dropped)", what, ws, start ? "start" : "stop", es);
	else if (trace_stream(h->t, h->it[w].stream).kind == ST_UNKNOWN ||
		 trace_stream(h->t, h->it[e].stream).kind == ST_UNKNOWN)
		snprintf(buf, len, "%s ran on %s, the %s event on %s: the trace cannot tell "
			 "whether the GPU orders the two (it does not say what kind of stream "
			 "ran no copy or kernel)", what, ws, start ? "start" : "stop", es);
	else
		snprintf(buf, len, "%s ran on %s, the %s event on %s: the GPU does not order "
			 "the two", what, ws, start ? "start" : "stop", es);
	return 0;
}

/* The two event records cudaEventElapsedTime call node c read: those format
 * 6 names, else the last two its thread recorded before it (*a start, *b
 * stop). 0, or 1 with why not in buf. */
static int elapsed_records(const struct hb *h, size_t c, int64_t *a, int64_t *b,
			   char *buf, size_t len)
{
	const struct item *call = &h->it[c];
	const struct elapsed_of *e = trace_elapsed(h->t, call->corr);
	*a = *b = -1;
	if (e) {
		for (size_t i = 0; i < c; i++)
			if (h->it[i].kind == I_MARK && h->it[i].corr == e->start)
				*a = (int64_t)i;
			else if (h->it[i].kind == I_MARK && h->it[i].corr == e->stop)
				*b = (int64_t)i;
		if (*a < 0 || *b < 0) {
			snprintf(buf, len, "%s %s", *a < 0 ? "its start event" : "its stop event",
				 (*a < 0 ? e->start : e->stop)
					 ? "has a record the trace does not show"
					 : "was not recorded before it");
			return 1;
		}
		return 0;
	}
	for (size_t i = c; i-- > 0 && *a < 0;)
		if (h->it[i].kind == I_MARK && h->it[i].tid == call->tid) {
			if (*b < 0)
				*b = (int64_t)i;
			else
				*a = (int64_t)i;
		}
	if (*a < 0) {
		snprintf(buf, len, "two events were not recorded before it");
		return 1;
	}
	return 0;
}

static int is_elapsed_call(const struct item *x)
{
	return x->kind == I_CALL && strcmp(x->r->name, "cudaEventElapsedTime") == 0;
}

static size_t count_elapsed_calls(const struct hb *h)
{
	size_t n = 0;
	for (size_t i = 0; i < h->n; i++)
		n += is_elapsed_call(&h->it[i]);
	return n;
}

/* The CUDA event a cudaEventQuery call node x queried (CUPTI records the
 * query as an event synchronize), or -1. */
static int64_t queried_event(const struct hb *h, const struct item *x)
{
	if (x->kind != I_CALL || strcmp(x->r->name, "cudaEventQuery") != 0)
		return -1;
	for (size_t k = key_find(h->syncs, h->nsyncs, x->corr);
	     k < h->nsyncs && h->syncs[k].key == x->corr; k++) {
		const struct rec *s = &h->t->recs[h->syncs[k].at];
		if (s->sync == S_EVENT && s->linked)
			return s->event;
	}
	return -1;
}

/* Did the host wait for stop record b before cudaEventElapsedTime call c?
 * A call on its thread after the record that the record is before and that
 * waited (a synchronize, a synchronous copy), or a poll: a query that found
 * it done (the record before it) of an event the thread had queried since
 * the record. One query that found it done is not a wait but the GPU
 * winning a race: PyTorch's Event.elapsed_time queries both events itself
 * and raises where one is not done. NULL, or why not. */
static const char *stop_waited(const struct hb *h, size_t b, size_t c)
{
	uint32_t tid = h->it[c].tid;
	if (!before(h, b, c))
		return "no wait between the stop event's record and cudaEventElapsedTime";
	for (size_t w = b + 1; w < c; w++) {
		const struct item *x = &h->it[w];
		if (x->kind != I_CALL || x->tid != tid || !before(h, b, w))
			continue;
		if (x->waited)
			return NULL;
		int64_t ev = queried_event(h, x);
		for (size_t p = b + 1; ev >= 0 && p < w; p++)
			if (h->it[p].tid == tid && queried_event(h, &h->it[p]) == ev)
				return NULL;
	}
	return "no wait between the stop event's record and cudaEventElapsedTime: only a "
	       "query (cudaEventQuery) found it done, as the GPU happened to be; where the "
	       "GPU is slower the event is not ready and the time cannot be read";
}

/* elapsed: each cudaEventElapsedTime call, in call order, and the two
 * records it read (elapsed_records): is the work its thread queued between
 * the two records ordered after start and before stop, and the work it
 * queued right before start before start (ORDER); was stop done, by a host
 * wait or a poll, before the call (WAIT: stop_waited)? "N" and, for each call, TAB ORDER TAB WAIT:
 * "ok", or why not in words. */
static int q_elapsed(const struct hb *h, char **argv, FILE *f)
{
	(void)argv;
	if (h->t->version < 5) {
		fputs("unknown\ta trace older than format 5 has no node of an event record\n", f);
		return 0;
	}
	fprintf(f, "%zu", count_elapsed_calls(h));
	for (size_t c = 0; c < h->n; c++) {
		const struct item *call = &h->it[c];
		if (!is_elapsed_call(call))
			continue;
		int64_t a, b;
		char why[600] = "";
		if (elapsed_records(h, c, &a, &b, why, sizeof why)) {
			fprintf(f, "\t%s\t-", why);
			continue;
		}
		size_t between = 0;
		for (size_t i = (size_t)a + 1; i < (size_t)b && !why[0]; i++) {
			if (h->it[i].kind != I_GPU || h->it[i].tid != call->tid)
				continue;
			between++;
			if (ordered_with(h, i, (size_t)a, 1, why, sizeof why))
				ordered_with(h, i, (size_t)b, 0, why, sizeof why);
		}
		if (!why[0] && !between)
			snprintf(why, sizeof why, "no GPU work was queued between the start and the stop record");
		for (size_t i = (size_t)a; !why[0] && i-- > 0;) {
			if (h->it[i].kind != I_GPU || h->it[i].tid != call->tid)
				continue;
			if (!before(h, i, (size_t)a)) {
				char what[160], ws[96], es[96];
				work_words(what, sizeof what, &h->it[i], 1);
				stream_words(ws, sizeof ws, h->t, h->it[i].stream);
				stream_words(es, sizeof es, h->t, h->it[a].stream);
				snprintf(why, sizeof why, "%s queued right before the start event, not "
					 "waited for, ran on %s, the start event on %s: the GPU may "
					 "stamp the start before it ends", what, ws, es);
			}
			break;
		}
		const char *wait = stop_waited(h, (size_t)b, c);
		fprintf(f, "\t%s\t%s", why[0] ? why : "ok", wait ? wait : "ok");
	}
	fputc('\n', f);
	return 0;
}

/* The innermost NVTX range of thread tid open at time T (ns), or NULL. */
static const char *range_at(const struct trace *t, uint32_t tid, uint64_t T)
{
	const struct rec *in = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->recs[i];
		if (r->start > T)
			break;
		if (r->kind == K_NVTX && r->tid == tid && r->end >= T)
			in = r; /* sorted by start: the last one is the innermost */
	}
	return in ? in->name : NULL;
}

/* timings: each cudaEventElapsedTime call, in call order (as `elapsed`), and
 * what the GPU did between the two records it read: "N" and, for each call,
 * TAB "START STOP WORK RANGE": the two records' GPU stamps (ms on the
 * trace's axis; "-" where a record has none: not timed, or not in the
 * trace), the GPU work its thread queued between the two records, counted
 * by kind in the order each came first ("H2D:16,kernel:16,D2H:16": a
 * copy's direction, "kernel", "memset"; "-" none), and the
 * NVTX range, on its thread, the first of that work was queued in (with
 * none, the start record; "-": no range). A call whose records are not
 * known: "- - - -". */
static int q_timings(const struct hb *h, char **argv, FILE *f)
{
	(void)argv;
	const struct trace *t = h->t;
	fprintf(f, "%zu", count_elapsed_calls(h));
	for (size_t c = 0; c < h->n; c++) {
		if (!is_elapsed_call(&h->it[c]))
			continue;
		int64_t a, b;
		char why[200];
		if (t->version < 5 || elapsed_records(h, c, &a, &b, why, sizeof why)) {
			fputs("\t- - - -", f);
			continue;
		}
		fputc('\t', f);
		for (int k = 0; k < 2; k++) {
			const struct rec *r = h->it[k ? b : a].r;
			if (r)
				fprintf(f, "%.6f ", (double)(r->start - t->t0) / 1e6);
			else
				fputs("- ", f);
		}
		/* the work between, counted by kind in the order each came first */
		const char *word[8];
		size_t count[8], nw = 0;
		uint32_t first = h->it[a].corr; /* the call whose range is told */
		for (size_t i = (size_t)a + 1; i < (size_t)b; i++) {
			const struct item *x = &h->it[i];
			if (x->kind != I_GPU || x->tid != h->it[c].tid)
				continue;
			if (!nw)
				first = x->corr;
			const char *w = x->r->kind == K_COPY ? dir_name(x->r->dir) : kind_name(x->r->kind);
			size_t k = 0;
			while (k < nw && strcmp(word[k], w) != 0)
				k++;
			if (k == nw && nw < 8) {
				word[nw] = w;
				count[nw++] = 0;
			}
			if (k < nw)
				count[k]++;
		}
		for (size_t k = 0; k < nw; k++)
			fprintf(f, "%s%s:%zu", k ? "," : "", word[k], count[k]);
		/* that call's time on the host */
		const char *range = NULL;
		for (size_t i = 0; i < h->n; i++)
			if (h->it[i].kind == I_CALL && h->it[i].corr == first) {
				range = range_at(t, h->it[i].tid, h->it[i].r->start);
				break;
			}
		fprintf(f, "%s %s", nw ? "" : "-", range ? range : "-");
	}
	fputc('\n', f);
	return 0;
}

static const struct question questions[] = {
	{ "order", "A B", 2, q_order,
	  "is B sure to start after A ended? guaranteed CHAIN, observed-only,\n"
	  "                       not-ordered, or unknown WHY" },
	{ "waits", "nvtx:NAME[#K]", 1, q_waits,
	  "calls in the range (its thread) that waited for the GPU: N, each" },
	{ "unordered", "A", 1, q_unordered,
	  "kernels, copies, memsets neither before nor after A: N, 8 of them" },
	{ "settled", "nvtx:RANGE", 1, q_settled,
	  "the work before each range NAME[#K] or NAME* waited for by the host\n"
	  "                       when it began, its own when it ended: settled N, or not-settled ..." },
	{ "idle", "nvtx:RANGE", 1, q_idle,
	  "settled's first half: idle N, or not-idle ..." },
	{ "done", "nvtx:RANGE", 1, q_done,
	  "settled's second half: done N, or not-done ..." },
	{ "elapsed", "", 0, q_elapsed,
	  "per cudaEventElapsedTime: events ordered with the work, stop waited" },
	{ "timings", "", 0, q_timings,
	  "per cudaEventElapsedTime: its records' stamps, work between, range" },
};
#define NQUESTIONS (sizeof questions / sizeof questions[0])

void ask_usage(FILE *f)
{
	fputs("ask FILE QUESTION... or ask FILE - (one a line on stdin): what the program guaranteed\n", f);
	for (size_t i = 0; i < NQUESTIONS; i++)
	{
		char head[64];
		snprintf(head, sizeof head, "%s %s", questions[i].name, questions[i].args);
		fprintf(f, "  %-20s %s\n", head, questions[i].help);
	}
	fputs("  A, B: KIND:CORR[.N], the Nth record of that kind of call CORR (query corr), or\n"
	      "  KIND:NAME[#K], the Kth whose name has NAME; KIND: kernel copy memset gpu record wait api\n", f);
}

/* Answer one question (its words in argv); 0, or 2 for a bad question. */
static int ask_one(const struct hb *h, int argc, char **argv, FILE *f)
{
	for (size_t i = 0; i < NQUESTIONS; i++)
		if (strcmp(argv[0], questions[i].name) == 0) {
			if (argc - 1 != questions[i].nargs) {
				fprintf(f, "error\tusage: %s%s%s\n", questions[i].name,
					*questions[i].args ? " " : "", questions[i].args);
				return 2;
			}
			return questions[i].run(h, argv + 1, f);
		}
	fprintf(f, "error\tno such question: %s\n", argv[0]);
	return 2;
}

/* ask: the questions from argv (each one word list separated by `;` or
 * given as one argument with spaces), or from stdin with `-`. */
int ask_main(const struct trace *t, int argc, char **argv)
{
	struct hb h;
	int rc = 0;
	if (hb_build(t->base ? t->base : t, &h))
		return 3;
	char line[4096];
	int from_stdin = argc == 1 && strcmp(argv[0], "-") == 0;
	for (int i = 0; from_stdin || i < argc; i++) {
		if (from_stdin) {
			if (!fgets(line, sizeof line, stdin))
				break;
		} else {
			snprintf(line, sizeof line, "%s", argv[i]);
		}
		char *w[8];
		int n = 0;
		for (char *p = strtok(line, " \t\r\n"); p && n < 8; p = strtok(NULL, " \t\r\n"))
			w[n++] = p;
		if (n == 0) {
			if (from_stdin)
				continue;
			fputs("error\tan empty question\n", stdout);
			rc = 2;
			continue;
		}
		if (ask_one(&h, n, w, stdout))
			rc = 2;
	}
	hb_free(&h);
	return rc;
}
