/*
 * trace_parse.c -- read a streamtrace file (FORMAT.md) into a struct trace.
 *
 * The whole file is read into memory once; names point into that text.
 * Formats 1 to 6 (FORMAT.md): 2 adds devices, stream kinds and peer
 * copies to 1; 3 adds `current` lines to 2; 4 adds `graph` and `error`
 * lines to 3; 5 `record` and `link` lines; 6 `elapsed` lines.
 * A job: the traces of several processes one after another, each from its
 * own header line. Each process's ids (streams, correlation ids, events,
 * their links, graphs) are moved apart from the processes' before it, so
 * that what one process did never joins another's; process 0's stay as
 * written.
 * A malformed line stops the load with ONE message, FILE:LINE: ...; a file
 * without its `end` line loads with one warning (the program may have died).
 */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 16

/* ------------------------------------------------------------------------ */
/* Names                                                                     */
/* ------------------------------------------------------------------------ */

static const char *const kind_names[] = { "copy", "kernel", "memset", "sync",
					  "event", "api", "nvtx" };
static const char *const dir_names[] = { "H2D", "D2H", "D2D", "H2H", "P2P", "UNKNOWN" };
static const char *const mem_names[] = { "UNKNOWN", "PAGEABLE", "PINNED", "DEVICE",
					 "MANAGED" };
static const char *const sync_names[] = { "stream", "event", "context", "wait",
					  "unknown" };
static const char *const stream_kind_names[] = { "created", "default", "per-thread",
						 "internal", "unknown" };
static const char *const stream_sync_names[] = { "-", "blocking", "non-blocking" };
static const char *const via_names[] = { "-", "direct", "host" };

const char *kind_name(int k) { return kind_names[k]; }
const char *dir_name(int d) { return dir_names[d]; }
const char *mem_name(int m) { return mem_names[m]; }
const char *sync_name(int s) { return sync_names[s]; }
const char *stream_kind_name(int k) { return stream_kind_names[k]; }
const char *stream_sync_name(int s) { return stream_sync_names[s]; }
const char *via_name(int v) { return via_names[v]; }

/* Index of s in names[0..n), or -1. */
static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

int mem_parse(const char *s)
{
	return lookup(mem_names, M_NKINDS, s);
}

int trace_is_gpu(const struct rec *r)
{
	return r->kind == K_COPY || r->kind == K_KERNEL || r->kind == K_MEMSET;
}

/* The host side's memory kind of a copy (src of H2D, dst of D2H); the
 * memory kind of a memset; M_UNKNOWN for anything else. */
int host_mem(const struct rec *r)
{
	if (r->kind == K_MEMSET)
		return r->src;
	if (r->kind != K_COPY)
		return M_UNKNOWN;
	return r->dir == D_D2H ? r->dst : r->src;
}

const char *trace_meta(const struct trace *t, const char *key)
{
	const char *v = NULL;
	for (size_t i = 0; i < t->nmeta; i++) /* the last one wins */
		if (strcmp(t->meta[i].key, key) == 0)
			v = t->meta[i].value;
	return v;
}

/* The meta KEY of process proc of a job (the last one), or NULL. */
const char *trace_meta_of(const struct trace *t, uint32_t proc, const char *key)
{
	const char *v = NULL;
	if (t->base)
		t = t->base;
	for (size_t i = 0; i < t->nmeta; i++)
		if (t->meta[i].proc == proc && strcmp(t->meta[i].key, key) == 0)
			v = t->meta[i].value;
	return v;
}

/* A stream id as the queries print it: "13"; in a job of several
 * processes "1:13", process 1's stream 13. Return its length. */
int stream_id_text(const struct trace *t, uint32_t id, char *buf, size_t n)
{
	if ((t->base ? t->base : t)->nprocs > 1)
		return snprintf(buf, n, "%u:%u", stream_proc(id), stream_local(id));
	return snprintf(buf, n, "%u", id);
}

/* "13", or a job's "1:13", into *id. Return 0, or -1 if it is neither. */
int stream_id_parse(const char *s, uint32_t *id)
{
	char *end;
	unsigned long a, b;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	a = strtoul(s, &end, 10);
	if (*end == ':') {
		const char *p = end + 1;
		if (*p < '0' || *p > '9' || a > PROC_MAX)
			return -1;
		b = strtoul(p, &end, 10);
		if (*end || errno || b >> PROC_SHIFT)
			return -1;
		*id = (uint32_t)(a << PROC_SHIFT | b);
		return 0;
	}
	if (*end || errno || a > UINT32_MAX)
		return -1;
	*id = (uint32_t)a;
	return 0;
}

/* Stream id as declared; undeclared: the legacy one if meta default_stream
 * names it, else (format 1) a created one, or (format 2, where every stream
 * with work is declared by the end) of unknown kind, on device 0. */
struct stream_decl trace_stream(const struct trace *t, uint32_t id)
{
	size_t lo = 0, hi = t->nstreams;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->streams[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nstreams && t->streams[lo].id == id)
		return t->streams[lo];
	struct stream_decl d = { id, 0, t->version >= 2 ? ST_UNKNOWN : ST_CREATED, SY_NONE };
	const char *m = trace_meta_of(t, stream_proc(id), "default_stream");
	if (m && strtoul(m, NULL, 10) == stream_local(id))
		d.kind = ST_DEFAULT;
	return d;
}

int trace_stream_kind(const struct trace *t, uint32_t id)
{
	return trace_stream(t, id).kind;
}

/* Device id as declared, or NULL. */
const struct device_decl *trace_device(const struct trace *t, uint32_t id)
{
	for (size_t i = 0; i < t->ndevices; i++)
		if (t->devices[i].id == id)
			return &t->devices[i];
	return NULL;
}

/* The host thread whose runtime call queued r (the api record with r's
 * correlation id); an api or nvtx record's own thread; else NO_THREAD. */
uint32_t trace_thread_of(const struct trace *t, const struct rec *r)
{
	if (r->kind == K_API || r->kind == K_NVTX)
		return r->tid;
	if (t->base)
		t = t->base;
	size_t lo = 0, hi = t->nthreads;
	while (r->corr && lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->threads[mid].corr < r->corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (r->corr && lo < t->nthreads && t->threads[lo].corr == r->corr)
		return t->threads[lo].tid;
	return NO_THREAD;
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */

/* Parse a whole field as an unsigned number. Return 0 on success. */
static int num(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	if (*s < '0' || *s > '9')
		return -1;
	/* (what strtoull reads from a field that starts with a digit, and a
	 * number past 2^64 - 1 refused as its ERANGE is: a trace has some
	 * 100000 of them to read, and strtoull's locale costs) */
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (*s)
		return -1;
	*v = x;
	return 0;
}

static int num32(const char *s, uint32_t *v)
{
	uint64_t x;
	if (num(s, &x) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* "X,Y,Z" into three ints. */
static int dim3(const char *s, int32_t d[3])
{
	char tail;
	const char *p = s;
	/* the usual "X,Y,Z" of up to 9 digits each, by hand; anything else
	 * (signs, spaces, more digits) as sscanf reads it */
	for (int i = 0; i < 3; i++) {
		int32_t x = 0, k = 0;
		for (; *p >= '0' && *p <= '9' && k < 9; p++, k++)
			x = x * 10 + (*p - '0');
		if (!k || *p != (i < 2 ? ',' : 0))
			goto slow;
		d[i] = x;
		p++;
	}
	return 0;
slow:
	return sscanf(s, "%d,%d,%d%c", &d[0], &d[1], &d[2], &tail) == 3 ? 0 : -1;
}

/* Split line at tabs in place. Return the number of fields. */
static int split(char *line, char **f)
{
	int n = 0;
	f[n++] = line;
	for (char *p = line; *p; p++)
		if (*p == '\t') {
			*p = 0;
			if (n == MAX_FIELDS)
				return MAX_FIELDS + 1;
			f[n++] = p + 1;
		}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

/* Format 2's fields that format 1 lacks, taken out of f[] so that the rest
 * reads as format 1: a GPU record's DEVICE (after its times), a copy's PEER
 * and VIA (before its CORR). Return NULL, or what is wrong. */
static const char *take_v2(char **f, int *n, struct rec *r, int k)
{
	static const int nfields[] = { 13, 9, 8, 7, 6, 6, 5 };
	int at = k == K_EVENT ? 2 : 3;
	uint32_t v;

	if (*n != nfields[k])
		return "wrong number of fields";
	if (k == K_API || k == K_NVTX)
		return NULL;
	if (num32(f[at], &r->device))
		return "bad device";
	memmove(&f[at], &f[at + 1], (size_t)(*n - at - 1) * sizeof *f);
	(*n)--;
	if (k != K_COPY)
		return NULL;
	/* f: tag START END STREAM DIR BYTES SRC DST ASYNC PEER VIA CORR */
	if (strcmp(f[9], "-") == 0)
		r->peer = NO_DEVICE;
	else if (num32(f[9], &v))
		return "bad peer device";
	else
		r->peer = v;
	int via = lookup(via_names, 3, f[10]);
	if (via < 0)
		return "bad VIA (direct, host or -)";
	r->via = (uint8_t)via;
	f[9] = f[11];
	*n = 10;
	return NULL;
}

/* Fill r from fields f[0..n) of a format `version` line; f[0] is the tag.
 * Return NULL on success, or what is wrong. */
static const char *parse_rec(char **f, int n, struct rec *r, int version)
{
	int k = lookup(kind_names, K_NKINDS, f[0]);
	static const int nfields[] = { 10, 8, 7, 6, 5, 6, 5 };
	const char *why;
	int i;

	if (k < 0)
		return "unknown record type";
	memset(r, 0, sizeof *r);
	r->device = (k == K_API || k == K_NVTX) ? NO_DEVICE : 0;
	r->peer = NO_DEVICE;
	r->cur = NO_DEVICE;
	if (version >= 2 && (why = take_v2(f, &n, r, k)))
		return why;
	if (n != nfields[k])
		return "wrong number of fields";
	r->kind = (uint8_t)k;
	r->stream = NO_STREAM;
	/* CORR is the last field but a name's; a file that holds something
	 * else there still loads (corr 0: nothing joins on it). */
	static const int corr_field[] = { 9, 6, 6, 5, 4, 4, 0 };
	if (corr_field[k] && num32(f[corr_field[k]], &r->corr))
		r->corr = 0;
	if (k == K_EVENT) {
		if (num(f[1], &r->start) || num32(f[2], &r->stream) || num32(f[3], &r->event))
			return "bad number";
		r->end = r->start;
		return NULL;
	}
	if (num(f[1], &r->start) || num(f[2], &r->end))
		return "bad time";
	if (r->end < r->start)
		return "ends before it starts";
	switch (k) {
	case K_COPY:
		if (num32(f[3], &r->stream) || num(f[5], &r->bytes))
			return "bad number";
		if ((i = lookup(dir_names, D_NDIRS, f[4])) < 0)
			return "bad copy direction";
		r->dir = (uint8_t)i;
		if ((i = mem_parse(f[6])) < 0)
			return "bad memory kind";
		r->src = (uint8_t)i;
		if ((i = mem_parse(f[7])) < 0)
			return "bad memory kind";
		r->dst = (uint8_t)i;
		if (strcmp(f[8], "0") && strcmp(f[8], "1"))
			return "bad async flag";
		r->async = f[8][0] == '1';
		if ((r->dir == D_P2P) != (r->via != VIA_NONE) && version >= 2)
			return "a P2P copy needs VIA direct or host, any other copy -";
		break;
	case K_KERNEL:
		if (num32(f[3], &r->stream))
			return "bad stream";
		if (dim3(f[4], r->grid) || dim3(f[5], r->block))
			return "bad grid or block";
		r->name = f[7];
		break;
	case K_MEMSET:
		if (num32(f[3], &r->stream) || num(f[4], &r->bytes))
			return "bad number";
		if ((i = mem_parse(f[5])) < 0)
			return "bad memory kind";
		r->src = r->dst = (uint8_t)i;
		break;
	case K_SYNC:
		if (strcmp(f[3], "-") && num32(f[3], &r->stream))
			return "bad stream";
		if ((i = lookup(sync_names, 5, f[4])) < 0)
			return "bad sync type";
		r->sync = (uint8_t)i;
		break;
	case K_API:
		if (num32(f[3], &r->tid))
			return "bad thread id";
		r->name = f[5];
		break;
	case K_NVTX:
		if (num32(f[3], &r->tid))
			return "bad thread id";
		r->name = f[4];
		break;
	}
	return NULL;
}

/* Order of records: by start, then end, then line in the file. */
int trace_rec_cmp(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int device_cmp(const void *pa, const void *pb)
{
	const struct device_decl *a = pa, *b = pb;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int corr_cmp(const void *pa, const void *pb)
{
	const struct corr_tid *a = pa, *b = pb;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int corr_dev_cmp(const void *pa, const void *pb)
{
	const struct corr_dev *a = pa, *b = pb;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* The device of t's `current` line for correlation id corr, or NO_DEVICE. */
static uint32_t current_of(const struct trace *t, uint32_t corr)
{
	struct corr_dev key = { corr, 0 };
	const struct corr_dev *hit;
	if (!corr || !t->ncurrents)
		return NO_DEVICE;
	hit = bsearch(&key, t->currents, t->ncurrents, sizeof key, corr_dev_cmp);
	return hit ? hit->device : NO_DEVICE;
}

static int decl_cmp(const void *pa, const void *pb)
{
	const struct stream_decl *a = pa, *b = pb;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* ------------------------------------------------------------------------ */
/* The file                                                                  */
/* ------------------------------------------------------------------------ */

/* Read all of path. Return the text (NUL-terminated) or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = NULL;
	if (!f)
		return NULL;
	for (;;) {
		char *b = realloc(buf, cap + 1);
		if (!b) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = b;
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* Say what is wrong with line `lineno` (one line on stderr). */
static int bad_line(const char *path, size_t lineno, const char *raw, const char *why)
{
	char shown[48];
	size_t i;
	for (i = 0; i < sizeof shown - 1 && raw[i] && raw[i] != '\n'; i++)
		shown[i] = (raw[i] == '\t') ? ' ' : (raw[i] < 32 || raw[i] == 127) ? '?' : raw[i];
	shown[i] = 0;
	fprintf(stderr, "%s:%zu: not a streamtrace record: \"%s%s\" (%s)\n", path,
		lineno, shown, raw[i] && raw[i] != '\n' ? "..." : "", why);
	return 3;
}

/* Grow *v (of *cap elements of size sz) to hold n + 1. Return 0 on success. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 256;
	void *p = realloc(*v, c * sz);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* The first 63 characters of a line as read (split() put NULs where its
 * tabs were), into copy[64]: what a message about the line shows. */
static const char *line_copy(char *copy, const char *line, size_t ll)
{
	size_t i;
	for (i = 0; i < ll && i < 63; i++)
		copy[i] = line[i] ? line[i] : '\t';
	copy[i] = 0;
	return copy;
}

/* Where a process of a job puts its ids (process 0: where written). */
struct section {
	uint32_t proc, corr, event, graph; /* added to what the lines say */
	uint64_t link;
	uint32_t max_corr, max_event, max_graph; /* seen so far, moved */
	uint64_t max_link;
};

/* A correlation id of the process s is in, moved; 0 stays "none". */
static uint32_t sec_corr(struct section *s, uint32_t corr)
{
	if (!corr)
		return 0;
	corr += s->corr;
	if (corr > s->max_corr)
		s->max_corr = corr;
	return corr;
}

static uint32_t sec_event(struct section *s, uint32_t ev)
{
	ev += s->event;
	if (ev > s->max_event)
		s->max_event = ev;
	return ev;
}

/* A stream id of the process s is in, with its process; NO_STREAM stays.
 * Return -1 where the id has no room for it. */
static int sec_stream(const struct section *s, uint32_t *id)
{
	if (*id == NO_STREAM || !s->proc)
		return 0;
	if (*id >> PROC_SHIFT)
		return -1;
	*id |= s->proc << PROC_SHIFT;
	return 0;
}

/* A host thread of a job: CUPTI's thread ids are each process's own too,
 * and two processes may have the same one. */
struct job_thread {
	uint32_t proc, raw, tid;
};

/* Thread raw of process proc: as written, unless an earlier process has a
 * thread of that id (then one no thread has: NO_THREAD - 1, - 2, ...).
 * Return NO_THREAD where memory runs out. */
static uint32_t sec_thread(struct job_thread **v, size_t *n, size_t *cap, uint32_t proc,
			   uint32_t raw)
{
	int taken = 0;
	for (size_t i = 0; i < *n; i++) {
		if ((*v)[i].proc == proc && (*v)[i].raw == raw)
			return (*v)[i].tid;
		taken |= (*v)[i].tid == raw;
	}
	if (grow((void **)v, cap, *n, sizeof **v))
		return NO_THREAD;
	struct job_thread j = { proc, raw, raw };
	if (taken)
		j.tid = NO_THREAD - 1 - (uint32_t)*n;
	(*v)[(*n)++] = j;
	return j.tid;
}

/* The next process of a job: its ids after all of the ones before. */
static void sec_next(struct section *s)
{
	s->proc++;
	s->corr = s->max_corr;
	s->event = s->max_event + 1;
	s->graph = s->max_graph;
	s->link = s->max_link + 1;
}

/* A trace without its end line, once: the whole trace's, or in a job
 * (job set) process proc's. */
static void ends_early(const char *path, int job, uint32_t proc)
{
	if (job)
		fprintf(stderr, "%s: warning: process %u's trace ends early: it may have "
			"crashed (figures cover what was recorded)\n", path, proc);
	else
		fprintf(stderr, "%s: warning: trace ends early: the program may have "
			"crashed (figures cover what was recorded)\n", path);
}

/* Read the lines of t->text (the file path) into t's records, meta and
 * declarations; a job's threads in *jt (the caller frees it). Return 0, or
 * 3 after one line on stderr saying why. */
static int read_lines(const char *path, struct trace *t, struct job_thread **jtp)
{
	size_t cap_r = 0, cap_m = 0, cap_s = 0, cap_d = 0, cap_c = 0, cap_k = 0, cap_e = 0;
	size_t lineno = 0;
	int last_mark = 0; /* the line before was a `record` line */
	char *f[MAX_FIELDS + 1];
	char copy[64];
	int saw_end = 0, ended = 1;
	struct section sec = { 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	/* a job's threads, once it has two processes */
#define jt (*jtp)
	size_t njt = 0, cap_jt = 0;

	char *p = t->text;
	while (*p) {
		char *line = p, *nl = strchr(p, '\n');
		if (nl) {
			*nl = 0;
			p = nl + 1;
		} else {
			p += strlen(p);
		}
		lineno++;
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		if (ll && line[ll - 1] == '\r')
			line[--ll] = 0;
		if (lineno == 1) {
			unsigned v;
			char tail;
			if (sscanf(line, "streamtrace %u%c", &v, &tail) != 1) {
				fprintf(stderr, "%s: not a streamtrace file\n", path);
				return 3;
			}
			if (v < 1 || v > 6) {
				fprintf(stderr, "%s: streamtrace format %u; this tool reads "
					"formats 1 to 6\n", path, v);
				return 3;
			}
			t->version = (int)v;
			continue;
		}
		if (ll == 0 || line[0] == '#')
			continue;
		if (strncmp(line, "streamtrace ", 12) == 0) {
			/* a job: the next process's trace */
			unsigned v;
			char tail;
			if (sscanf(line, "streamtrace %u%c", &v, &tail) != 1 || (int)v != t->version)
				return bad_line(path, lineno, line_copy(copy, line, ll),
						"a job's processes are traces of one format");
			if (sec.proc == PROC_MAX)
				return bad_line(path, lineno, line_copy(copy, line, ll),
						"more processes than a job may have (256)");
			if (!saw_end)
				ends_early(path, 1, sec.proc);
			ended &= saw_end;
			saw_end = 0;
			last_mark = 0;
			sec_next(&sec);
			if (sec.proc == 1) /* process 0's threads, as written */
				for (size_t i = 0; i < t->n; i++)
					if ((t->recs[i].kind == K_API || t->recs[i].kind == K_NVTX) &&
					    sec_thread(&jt, &njt, &cap_jt, 0, t->recs[i].tid) == NO_THREAD)
						goto oom;
			continue;
		}
		if (saw_end)
			return bad_line(path, lineno, line_copy(copy, line, ll), "after the end line");
		int n = split(line, f);
		int after_mark = last_mark;
		last_mark = 0;
		if (strcmp(f[0], "meta") == 0) {
			if (n != 3)
				return bad_line(path, lineno, line_copy(copy, line, ll), "wrong number of fields");
			if (grow((void **)&t->meta, &cap_m, t->nmeta, sizeof *t->meta))
				goto oom;
			t->meta[t->nmeta].key = f[1];
			t->meta[t->nmeta].proc = sec.proc;
			t->meta[t->nmeta++].value = f[2];
		} else if (strcmp(f[0], "stream") == 0) {
			/* format 1: stream ID KIND; 2: stream ID KIND DEVICE SYNC */
			struct stream_decl d = { 0, 0, 0, SY_NONE };
			int want = t->version >= 2 ? 5 : 3, sy = 0;
			int k = n == want ? lookup(stream_kind_names, t->version >= 2 ? 4 : 3, f[2]) : -1;
			if (t->version >= 2 && k >= 0 &&
			    (num32(f[3], &d.device) || (sy = lookup(stream_sync_names, 3, f[4])) < 0))
				k = -1;
			if (n != want || num32(f[1], &d.id) || k < 0 || sec_stream(&sec, &d.id))
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad stream line");
			d.kind = (uint8_t)k;
			d.sync = (uint8_t)sy;
			if (grow((void **)&t->streams, &cap_s, t->nstreams, sizeof d))
				goto oom;
			t->streams[t->nstreams++] = d;
		} else if (strcmp(f[0], "device") == 0 && t->version >= 2) {
			/* device ID COPY_ENGINES SM_COUNT NAME */
			struct device_decl d;
			char *e1, *e2;
			if (n != 5 || num32(f[1], &d.id))
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad device line");
			d.copy_engines = (int)strtol(f[2], &e1, 10);
			d.sm_count = (int)strtol(f[3], &e2, 10);
			if (*e1 || *e2 || e1 == f[2] || e2 == f[3])
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad device line");
			d.name = f[4];
			if (sec.proc && trace_device(t, d.id))
				continue; /* another process of the job declared it */
			if (grow((void **)&t->devices, &cap_d, t->ndevices, sizeof d))
				goto oom;
			t->devices[t->ndevices++] = d;
		} else if (strcmp(f[0], "current") == 0 && t->version >= 3) {
			/* current CORR DEVICE */
			struct corr_dev c;
			if (n != 3 || num32(f[1], &c.corr) || num32(f[2], &c.device) ||
			    c.device == NO_DEVICE)
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad current line");
			c.corr = sec_corr(&sec, c.corr);
			if (grow((void **)&t->currents, &cap_c, t->ncurrents, sizeof c))
				goto oom;
			t->currents[t->ncurrents++] = c;
		} else if (strcmp(f[0], "graph") == 0 && t->version >= 4) {
			/* graph GRAPH NODE, right after the GPU record it belongs to */
			struct rec *r = t->n ? &t->recs[t->n - 1] : NULL;
			uint64_t node;
			if (!r || (r->kind != K_KERNEL && r->kind != K_COPY && r->kind != K_MEMSET) ||
			    r->graph)
				return bad_line(path, lineno, line_copy(copy, line, ll),
						"a graph line belongs right after a kernel, copy or memset");
			if (n != 3 || num32(f[1], &r->graph) || num(f[2], &node) || !r->graph)
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad graph line");
			r->graph += sec.graph;
			if (r->graph > sec.max_graph)
				sec.max_graph = r->graph;
			r->node = node;
		} else if (strcmp(f[0], "error") == 0 && t->version >= 4) {
			/* error CORR CODE, after the api line of the same CORR */
			struct rec *r = t->n ? &t->recs[t->n - 1] : NULL;
			uint32_t corr, code;
			if (n != 3 || num32(f[1], &corr) || num32(f[2], &code) || !code)
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad error line");
			corr = sec_corr(&sec, corr);
			if (!r || r->kind != K_API || r->corr != corr || r->ret)
				return bad_line(path, lineno, line_copy(copy, line, ll),
						"an error line belongs right after its api line");
			r->ret = code;
		} else if (strcmp(f[0], "record") == 0 && t->version >= 5) {
			/* record DEVICE STREAM EVENT CORR: an untimed event record */
			struct mark m = { 0, 0, 0, 0, 0, 0 };
			if (n != 5 || num32(f[1], &m.device) || num32(f[2], &m.stream) ||
			    num32(f[3], &m.event) || num32(f[4], &m.corr) || sec_stream(&sec, &m.stream))
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad record line");
			m.event = sec_event(&sec, m.event);
			m.corr = sec_corr(&sec, m.corr);
			if (grow((void **)&t->marks, &cap_k, t->nmarks, sizeof m))
				goto oom;
			t->marks[t->nmarks++] = m;
			last_mark = 1;
			continue;
		} else if (strcmp(f[0], "link") == 0 && t->version >= 5) {
			/* link EVENT SYNCID, after an event, record, or event sync */
			struct rec *r = t->n ? &t->recs[t->n - 1] : NULL;
			struct mark *m = after_mark ? &t->marks[t->nmarks - 1] : NULL;
			uint32_t ev;
			uint64_t id = 0;
			int known = n == 3 && strcmp(f[2], "-") != 0;
			if (n != 3 || num32(f[1], &ev) || (known && num(f[2], &id)))
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad link line");
			ev = sec_event(&sec, ev);
			if (known) {
				id += sec.link;
				if (id > sec.max_link)
					sec.max_link = id;
			}
			if (m && !m->linked) {
				if (m->event != ev)
					return bad_line(path, lineno, line_copy(copy, line, ll),
							"a link names the event of the record line before it");
				m->link = id;
				m->linked = (uint8_t)(known ? 1 : 2);
			} else if (r && !r->linked &&
				   (r->kind == K_EVENT ||
				    (r->kind == K_SYNC && (r->sync == S_WAIT || r->sync == S_EVENT)))) {
				if (r->kind == K_EVENT && r->event != ev)
					return bad_line(path, lineno, line_copy(copy, line, ll),
							"a link names the event of the event line before it");
				r->event = ev;
				r->link = id;
				r->linked = (uint8_t)(known ? 1 : 2);
			} else {
				return bad_line(path, lineno, line_copy(copy, line, ll),
						"a link line belongs right after an event, a record or a wait");
			}
			continue;
		} else if (strcmp(f[0], "elapsed") == 0 && t->version >= 6) {
			/* elapsed CORR START STOP, after the api line of CORR */
			struct rec *r = t->n ? &t->recs[t->n - 1] : NULL;
			struct elapsed_of e = { 0, 0, 0 };
			if (n != 4 || num32(f[1], &e.corr) || !e.corr ||
			    (strcmp(f[2], "-") != 0 && (num32(f[2], &e.start) || !e.start)) ||
			    (strcmp(f[3], "-") != 0 && (num32(f[3], &e.stop) || !e.stop)))
				return bad_line(path, lineno, line_copy(copy, line, ll),
						"bad elapsed line");
			e.corr = sec_corr(&sec, e.corr);
			e.start = sec_corr(&sec, e.start);
			e.stop = sec_corr(&sec, e.stop);
			if (!r || r->kind != K_API || r->corr != e.corr ||
			    strcmp(r->name, "cudaEventElapsedTime") != 0 ||
			    (t->nelapsed && t->elapsed[t->nelapsed - 1].corr == e.corr))
				return bad_line(path, lineno, line_copy(copy, line, ll),
						"an elapsed line belongs right after its "
						"cudaEventElapsedTime api line");
			if (grow((void **)&t->elapsed, &cap_e, t->nelapsed, sizeof e))
				goto oom;
			t->elapsed[t->nelapsed++] = e;
			continue;
		} else if (strcmp(f[0], "end") == 0) {
			uint64_t nrec;
			uint64_t dropped;
			if (n != 3 || num(f[1], &nrec) || num(f[2], &dropped))
				return bad_line(path, lineno, line_copy(copy, line, ll), "bad end line");
			t->dropped += dropped;
			saw_end = 1;
		} else {
			const char *why;
			if (grow((void **)&t->recs, &cap_r, t->n, sizeof *t->recs))
				goto oom;
			if (n > MAX_FIELDS)
				return bad_line(path, lineno, line_copy(copy, line, ll), "too many fields");
			why = parse_rec(f, n, &t->recs[t->n], t->version);
			struct rec *r = &t->recs[t->n];
			if (!why && sec.proc) {
				if (sec_stream(&sec, &r->stream))
					why = "bad stream";
				r->corr = sec_corr(&sec, r->corr);
				if (r->kind == K_EVENT)
					r->event = sec_event(&sec, r->event);
				if ((r->kind == K_API || r->kind == K_NVTX) &&
				    (r->tid = sec_thread(&jt, &njt, &cap_jt, sec.proc, r->tid)) == NO_THREAD)
					goto oom;
				r->proc = (uint8_t)sec.proc;
			} else if (!why) {
				sec_corr(&sec, r->corr);
				if (r->kind == K_EVENT)
					sec_event(&sec, r->event);
			}
			if (why)
				return bad_line(path, lineno, line_copy(copy, line, ll), why);
			t->recs[t->n++].line = (uint32_t)lineno;
		}
	}
	if (lineno == 0) {
		fprintf(stderr, "%s: not a streamtrace file\n", path);
		return 3;
	}
	t->complete = saw_end && ended;
	t->nprocs = (int)sec.proc + 1;
	if (!saw_end)
		ends_early(path, sec.proc > 0, sec.proc);
	return 0;
oom:
	fprintf(stderr, "%s: out of memory\n", path);
	return 3;
#undef jt
}

static int mark_cmp(const void *pa, const void *pb)
{
	const struct mark *a = pa, *b = pb;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int elapsed_cmp(const void *pa, const void *pb)
{
	const struct elapsed_of *a = pa, *b = pb;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* Format 6: the `elapsed` line of the cudaEventElapsedTime call corr, or
 * NULL where the trace has none (older formats; a call the tracer lost). */
const struct elapsed_of *trace_elapsed(const struct trace *t, uint32_t corr)
{
	struct elapsed_of key = { corr, 0, 0 };
	if (t->base)
		t = t->base;
	if (!t->nelapsed)
		return NULL;
	return bsearch(&key, t->elapsed, t->nelapsed, sizeof key, elapsed_cmp);
}

/* Sort the records; merge the stream declarations; find t0 and t1. */
static void finish(struct trace *t)
{
	if (t->n)
		qsort(t->recs, t->n, sizeof *t->recs, trace_rec_cmp);
	/* Declarations: sort by id; for the same id keep "default" over the
	 * rest, so a NULL-stream record beats a duplicate "created". */
	if (t->nstreams)
		qsort(t->streams, t->nstreams, sizeof *t->streams, decl_cmp);
	size_t w = 0;
	for (size_t i = 0; i < t->nstreams; i++) {
		if (w && t->streams[w - 1].id == t->streams[i].id) {
			if (t->streams[i].kind == ST_DEFAULT)
				t->streams[w - 1].kind = ST_DEFAULT;
			continue;
		}
		t->streams[w++] = t->streams[i];
	}
	t->nstreams = w;
	/* Format 1 named its one device in meta lines. */
	if (!t->ndevices && trace_meta(t, "device")) {
		t->devices = malloc(sizeof *t->devices);
		if (t->devices) {
			const char *ce = trace_meta(t, "copy_engines"), *sm = trace_meta(t, "sm_count");
			t->devices[0].id = 0;
			t->devices[0].copy_engines = ce ? atoi(ce) : -1;
			t->devices[0].sm_count = sm ? atoi(sm) : -1;
			t->devices[0].name = trace_meta(t, "device");
			t->ndevices = 1;
		}
	}
	if (t->ndevices > 1)
		qsort(t->devices, t->ndevices, sizeof *t->devices, device_cmp);
	/* Which thread queued what: the api records by correlation id. */
	size_t napi = 0;
	for (size_t i = 0; i < t->n; i++)
		napi += t->recs[i].kind == K_API && t->recs[i].corr;
	t->threads = malloc((napi ? napi : 1) * sizeof *t->threads);
	if (t->threads) {
		for (size_t i = 0; i < t->n; i++)
			if (t->recs[i].kind == K_API && t->recs[i].corr) {
				t->threads[t->nthreads].corr = t->recs[i].corr;
				t->threads[t->nthreads++].tid = t->recs[i].tid;
			}
		qsort(t->threads, t->nthreads, sizeof *t->threads, corr_cmp);
	}
	/* Format 3: the device current at each runtime call, given to the call
	 * and to the GPU work, syncs and events it queued (same corr). */
	if (t->ncurrents) {
		qsort(t->currents, t->ncurrents, sizeof *t->currents, corr_dev_cmp);
		for (size_t i = 0; i < t->n; i++)
			if (t->recs[i].kind != K_NVTX)
				t->recs[i].cur = current_of(t, t->recs[i].corr);
	}
	if (t->nelapsed)
		qsort(t->elapsed, t->nelapsed, sizeof *t->elapsed, elapsed_cmp);
	/* Format 5: every event record, timed (an `event` record) or not. */
	if (t->version >= 5) {
		size_t nev = 0;
		for (size_t i = 0; i < t->n; i++)
			nev += t->recs[i].kind == K_EVENT;
		struct mark *m = realloc(t->marks, (t->nmarks + nev + 1) * sizeof *m);
		if (m) {
			t->marks = m;
			for (size_t i = 0; i < t->n; i++)
				if (t->recs[i].kind == K_EVENT) {
					const struct rec *r = &t->recs[i];
					struct mark k = { r->corr, r->stream, r->device, r->event,
							  r->link, r->linked };
					t->marks[t->nmarks++] = k;
				}
			qsort(t->marks, t->nmarks, sizeof *t->marks, mark_cmp);
		}
	}
	if (t->n) {
		t->t0 = t->recs[0].start;
		for (size_t i = 0; i < t->n; i++)
			if (t->recs[i].end > t->t1)
				t->t1 = t->recs[i].end;
	}
}

/* Load path into t. Return 0, or 3 after one line on stderr saying why
 * (and nothing left allocated). */
int trace_load(const char *path, struct trace *t)
{
	size_t len = 0;

	memset(t, 0, sizeof *t);
	t->path = path;
	t->text = slurp(path, &len);
	if (!t->text) {
		fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno ? errno : EIO));
		return 3;
	}
	struct job_thread *jt = NULL;
	int rc = read_lines(path, t, &jt);
	free(jt);
	if (rc) {
		trace_free(t);
		return rc;
	}
	finish(t);
	return 0;
}

/* Free what t owns: a view owns only its records and windows. */
void trace_free(struct trace *t)
{
	if (!t->base) {
		free(t->text);
		free(t->meta);
		free(t->streams);
		free(t->devices);
		free(t->threads);
		free(t->currents);
		free(t->marks);
		free(t->elapsed);
	}
	free(t->recs);
	free(t->win);
	free(t->win_desc);
	memset(t, 0, sizeof *t);
}
