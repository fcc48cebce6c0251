/*
 * streamtrace.c -- the trace tool's command line: capture a CUDA program,
 * then draw or question what its GPU did.
 *
 *   streamtrace run [-o FILE] -- PROG [ARGS...]
 *   streamtrace timeline [--width N] [--height N] [--color auto|always|never] [WINDOW] FILE
 *   streamtrace json FILE [-o OUT] [WINDOW]
 *   streamtrace svg FILE [-o OUT] [WINDOW]
 *   streamtrace summary [--width N] [WINDOW] FILE
 *   streamtrace query FILE QUESTION [SEL [SEL2]] [FILTERS] [WINDOW]
 *   streamtrace ask FILE QUESTION... | ask FILE -   (what was guaranteed)
 *   WINDOW: --window nvtx:NAME[*][#K|#last][+gpu] (repeatable), or --from MS --to MS
 *
 * Exit status: 0 ok; 2 bad command line; 3 unreadable or malformed trace;
 * `run` exits with the program's status (128+N if killed by signal N).
 * Plain C11: builds with no CUDA installed (capture lives in capture.c).
 */
#define _DEFAULT_SOURCE
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef STREAMTRACE_CUPTI_PATH
#define STREAMTRACE_CUPTI_PATH ""
#endif

static const char usage_text[] =
	"usage: streamtrace COMMAND ...\n"
	"  run [-o FILE] -- PROG [ARGS...]   capture PROG and the processes it starts (a\n"
	"                                    job) in FILE (streamtrace.trace); PROG's status\n"
	"  timeline [--width N] [--height N] [--color auto|always|never] [WINDOW] FILE\n"
	"                                    a lane per stream, per host thread its NVTX\n"
	"                                    ranges and its runtime calls\n"
	"  json FILE [-o OUT] [WINDOW]       Chrome trace-event JSON (ui.perfetto.dev)\n"
	"  svg FILE [-o OUT] [WINDOW]        SVG of the timeline\n"
	"  summary [--width N] [WINDOW] FILE counts, bandwidth, overlap, streams at once\n"
	"  query FILE QUESTION [SEL [SEL2]] [FILTERS] [WINDOW]\n"
	"  query FILE -                      the questions on stdin, one a line, words\n"
	"                                    TAB-separated: one parse; after each answer\n"
	"                                    a line \"\\036\" and its exit status\n"
	"  ask FILE QUESTION... | ask FILE -  what the program guaranteed (below)\n"
	"questions: count total union span bytes bandwidth durations streams list SEL; events SEL\n"
	"           (each record with the CUDA events around it on its stream); current SEL (each\n"
	"           record with the device current at the call that queued it; format 3); corr\n"
	"           SEL (each record with the correlation id of the call that queued it, and for\n"
	"           a copy whether it was async); graph SEL (each record with the graph and graph\n"
	"           node that launched it, and its correlation id; format 4); returned SEL (each\n"
	"           call with its correlation id and the cudaError_t it returned; format 4);\n"
	"           streams (every declared stream); stages nvtx:NAME (per range and device, the\n"
	"           busy time of each stage); bound nvtx:SEQ nvtx:PIPE (a pipeline against its\n"
	"           fill/drain bound); overlap order SEL SEL2; dropped; devices; meta KEY;\n"
	"           threads (TID N: each host thread, its number in the drawings); processes (P\n"
	"           PID RANK ARGV; a job's streams: P:ID); queued (what each NVTX range queued);\n"
	"           caller SEL (each record with the id and name of the call that queued it);\n"
	"           next SEL (the calls that queued SEL, in order, each with the next call its\n"
	"           thread made, cudaGetLastError aside); launches SEL (per call: its records,\n"
	"           their graphs, how many nodes and names, the node ids sorted)\n"
	"selectors: kernel kernel:SUBSTR h2d d2h d2d p2p p2p:direct p2p:host copy\n"
	"           memset gpu sync sync:stream|event|context|wait event\n"
	"           api api:NAME api:PREFIX* nvtx nvtx:NAME\n"
	"FILTERS:   --stream ID|P:ID|default|per-thread|created|internal|blocking|non-blocking\n"
	"           (not-created: any but created)\n"
	"           --device N   --thread T (queued by thread T)   --captured (during a capture)\n"
	"           --current N|other (queued while device N, or a device other than its\n"
	"           stream's, was current)\n"
	"           --mem PAGEABLE|PINNED|DEVICE|MANAGED (for copies, the host side)\n"
	"WINDOW: only that time, records cut at its edges (--whole: those starting in it, uncut)\n"
	"  --window nvtx:NAME          every NVTX range named NAME (NAME*: starting so)\n"
	"  --window nvtx:NAME#K        the K-th of them (#1 the first), or #last\n"
	"  --window nvtx:NAME#K+gpu    and on until the GPU work queued in it is done\n"
	"  --window A --window B       both, side by side at one scale\n"
	"  --from MS --to MS           ms from the first record (alone: from the start, to the end)\n"
	"format: see checker/trace/FORMAT.md\n";

/* Each command's line of usage, for a mistake in its command line. */
static const char *const cmd_usage[][2] = {
	{ "run", "run [-o FILE] -- PROG [ARGS...]" },
	{ "timeline", "timeline [--width N] [--height N] [--color auto|always|never] [WINDOW] FILE" },
	{ "json", "json FILE [-o OUT] [WINDOW]" },
	{ "svg", "svg FILE [-o OUT] [WINDOW]" },
	{ "summary", "summary [--width N] [WINDOW] FILE" },
	{ "query", "query FILE QUESTION [SEL [SEL2]] [FILTERS] [WINDOW] | query FILE - (questions on stdin)" },
	{ "ask", "ask FILE QUESTION... | ask FILE - (questions on stdin)" },
};

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "streamtrace: %s\n", why);
	fputs(usage_text, stderr);
	ask_usage(stderr);
	return 2;
}

/* Say what is wrong with the command line of cmd (naming the word: "%s" in
 * fmt), then that command's usage in one line. Return 2. */
static int bad(const char *cmd, const char *fmt, const char *word)
{
	fprintf(stderr, "streamtrace %s: ", cmd);
	fprintf(stderr, fmt, word);
	for (size_t i = 0; i < sizeof cmd_usage / sizeof cmd_usage[0]; i++)
		if (strcmp(cmd, cmd_usage[i][0]) == 0)
			fprintf(stderr, "\nusage: streamtrace %s", cmd_usage[i][1]);
	fputs("\n(streamtrace help: every command, question, selector and window)\n", stderr);
	return 2;
}

/* ------------------------------------------------------------------------ */
/* run                                                                       */
/* ------------------------------------------------------------------------ */

/* The directory of our own executable, into dir. Return 0 on success. */
static int self_dir(char *dir, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", dir, n - 1);
	if (len <= 0)
		return -1;
	dir[len] = 0;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

/* Absolute form of path (the program may chdir). */
static void absolute(const char *path, char *out, size_t n)
{
	char cwd[2048];
	if (path[0] == '/' || !getcwd(cwd, sizeof cwd) || strlen(path) >= 2000)
		snprintf(out, n, "%s", path);
	else
		snprintf(out, n, "%.2047s/%.2000s", cwd, path);
}

/* A process's file of a job, and where it goes in the joined file. */
struct part {
	char *path;
	long rank, pid; /* rank: LONG_MAX where the process had none */
	int leader;
};

static int part_cmp(const void *pa, const void *pb)
{
	const struct part *a = pa, *b = pb;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->leader != b->leader)
		return b->leader - a->leader;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Read the head of a process's file: its `meta rank` into *rank (LONG_MAX
 * if none). Return 1 if it is what the tracer writes in process pid (its
 * header, and `meta pid` pid), else 0: a file of another kind that happens
 * to be named so is left alone. */
static int part_head(const char *path, long pid, long *rank)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int ours = 0;
	*rank = LONG_MAX;
	for (int i = 0; f && i < 16 && fgets(line, sizeof line, f); i++) {
		if (i == 0 && strncmp(line, "streamtrace ", 12) != 0)
			break;
		if (strncmp(line, "meta\tpid\t", 9) == 0)
			ours = atol(line + 9) == pid;
		if (strncmp(line, "meta\trank\t", 10) == 0)
			*rank = atol(line + 10);
	}
	if (f)
		fclose(f);
	return ours;
}

/* The files out.PID beside out that the tracer wrote (capture.c: the other
 * processes of a job) into *v, with room for one more. Return how many. */
static size_t job_parts(const char *out, struct part **v)
{
	char dir[4100];
	const char *slash = strrchr(out, '/'), *base = slash ? slash + 1 : out;
	size_t nb = strlen(base), n = 0, cap = 0;
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
	DIR *d = opendir(dir);
	*v = NULL;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		const char *tail = e->d_name + nb + 1;
		if (strncmp(e->d_name, base, nb) || e->d_name[nb] != '.' || !*tail ||
		    strspn(tail, "0123456789") != strlen(tail) || strlen(tail) > 9)
			continue;
		if (n + 1 >= cap) {
			struct part *p = realloc(*v, (cap = cap ? 2 * cap : 8) * sizeof **v);
			if (!p)
				break;
			*v = p;
		}
		struct part *x = &(*v)[n];
		x->path = malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (!x->path)
			break;
		sprintf(x->path, "%s/%s", dir, e->d_name);
		x->pid = atol(tail);
		x->leader = 0;
		if (part_head(x->path, x->pid, &x->rank))
			n++;
		else
			free(x->path);
	}
	closedir(d);
	return n;
}

/* Remove what an earlier job left beside out: it is not this run's. */
static void remove_parts(const char *out)
{
	struct part *v;
	size_t n = job_parts(out, &v);
	for (size_t i = 0; i < n; i++) {
		unlink(v[i].path);
		free(v[i].path);
	}
	free(v);
}

/* A job: the other processes of the program wrote out.PID beside out
 * (capture.c). Join them and out into out, one process after another (by
 * rank, where they have one; else the program's own process first, then by
 * pid: FORMAT.md, "A job"), and remove them. Return 0, or 1 after saying
 * why. */
static int join_job(const char *out, pid_t leader)
{
	struct part *v;
	struct stat st;
	size_t n = job_parts(out, &v);
	if (!n) {
		free(v);
		return 0;
	}
	if (stat(out, &st) == 0) {
		v[n].path = strdup(out);
		v[n].pid = (long)leader;
		v[n].leader = 1;
		part_head(out, (long)leader, &v[n].rank);
		if (v[n].path)
			n++;
	}
	qsort(v, n, sizeof *v, part_cmp);
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.joining", out);
	FILE *w = fopen(tmp, "w");
	int rc = w ? 0 : 1;
	for (size_t i = 0; w && i < n; i++) {
		FILE *r = fopen(v[i].path, "r");
		char buf[1 << 16];
		size_t k;
		while (r && (k = fread(buf, 1, sizeof buf, r)) > 0)
			if (fwrite(buf, 1, k, w) != k)
				rc = 1;
		if (!r)
			rc = 1;
		else
			fclose(r);
	}
	if (w && fclose(w))
		rc = 1;
	if (!rc && rename(tmp, out) != 0)
		rc = 1;
	if (rc) {
		fprintf(stderr, "streamtrace: cannot join the traces of the job's %zu "
			"processes into %s: %s\n", n, out, strerror(errno ? errno : EIO));
		unlink(tmp);
	}
	for (size_t i = 0; i < n; i++) {
		if (!rc && !v[i].leader)
			unlink(v[i].path);
		free(v[i].path);
	}
	free(v);
	return rc;
}

static int cmd_run(int argc, char **argv)
{
	const char *file = "streamtrace.trace";
	int i = 0;
	char lib[4096], out[4100];
	struct stat st;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (argv[i][0] == '-')
			return bad("run", "unknown option \"%s\"", argv[i]);
		else
			break;
	}
	if (i >= argc)
		return bad("run", "%s", "no program to run");
	if (self_dir(lib, sizeof lib - 32))
		return usage("run: cannot find my own executable");
	strcat(lib, "/libstreamtrace.so");
	if (stat(lib, &st) != 0) {
		fprintf(stderr, "streamtrace: %s is missing (was it built without CUPTI?)\n", lib);
		return 1;
	}
	absolute(file, out, sizeof out);
	unlink(out); /* a stale trace must not pass for this run's */
	remove_parts(out);
	const char *cupti = getenv("STREAMTRACE_CUPTI");
	if (!cupti || !*cupti)
		cupti = STREAMTRACE_CUPTI_PATH;
	setenv("CUDA_INJECTION64_PATH", lib, 1);
	if (*cupti)
		setenv("NVTX_INJECTION64_PATH", cupti, 1);
	setenv("STREAMTRACE_OUT", out, 1);
	setenv("STREAMTRACE_FROM_CLI", "1", 1);

	/* Like system(): the child takes ^C, we wait and report it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	pid_t pid = fork();
	if (pid < 0) {
		perror("streamtrace: fork");
		return 1;
	}
	if (pid == 0) {
		char me[24];
		snprintf(me, sizeof me, "%ld", (long)getpid());
		setenv("STREAMTRACE_LEADER", me, 1);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[i], argv + i);
		fprintf(stderr, "streamtrace: cannot run %s: %s\n", argv[i], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("streamtrace: waitpid");
			return 1;
		}
	int rc = WIFEXITED(status) ? WEXITSTATUS(status)
		 : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	join_job(out, pid);
	if (rc != 127 && stat(out, &st) != 0)
		fprintf(stderr, "streamtrace: no trace written: %s created no CUDA "
			"context (no device, or it never used the GPU)\n", argv[i]);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Commands on a trace file                                                  */
/* ------------------------------------------------------------------------ */

/* Columns of the terminal: $COLUMNS, else the tty's, else 100; at most
 * 120 (a wider timeline is asked for with --width). */
static int term_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	int w = 100;
	if (c && atoi(c) > 0)
		w = atoi(c);
	else if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		w = ws.ws_col;
	return w > 120 ? 120 : w;
}

/* Lines of the terminal: $LINES, else the tty's, else 40. */
static int term_height(void)
{
	const char *c = getenv("LINES");
	struct winsize ws;
	if (c && atoi(c) > 0)
		return atoi(c);
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 40;
}

/* Open -o OUT for writing, or stdout. */
static FILE *open_out(const char *path)
{
	if (!path || strcmp(path, "-") == 0)
		return stdout;
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "streamtrace: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

static int finish_out(FILE *f, const char *path)
{
	if (f == stdout)
		return fflush(f) ? 1 : 0;
	if (fclose(f) != 0) {
		fprintf(stderr, "streamtrace: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

/* What the command line of a drawing command asks for. */
struct opts {
	const char *file, *out;
	int width, height, color; /* 0: the terminal's; color -1: auto */
	struct winspec win;
};

/* A whole number in lo..hi from the value of option opt. Return 0 if ok. */
static int int_arg(const char *cmd, const char *opt, const char *v, long lo, long hi, int *out)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (!*v || *end || n < lo || n > hi) {
		char why[80];
		snprintf(why, sizeof why, "%s takes %ld..%ld, not \"%%s\"", opt, lo, hi);
		return bad(cmd, why, v);
	}
	*out = (int)n;
	return 0;
}

/* Read the options of timeline, json, svg and summary into o. Return 0, or
 * 2 after saying what is wrong. */
static int parse_opts(const char *cmd, int argc, char **argv, struct opts *o)
{
	int tl = strcmp(cmd, "timeline") == 0, sum = strcmp(cmd, "summary") == 0;
	memset(o, 0, sizeof *o);
	o->color = -1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int w = win_option(argc, argv, &i, &o->win), rc = 0;
		if (w == 2)
			return 2;
		if (w)
			continue;
		if (strcmp(a, "-o") == 0 && v && !tl && !sum) {
			o->out = argv[++i];
		} else if (strcmp(a, "--width") == 0 && v && (tl || sum)) {
			rc = int_arg(cmd, a, argv[++i], 20, 1000, &o->width);
		} else if (strcmp(a, "--height") == 0 && v && tl) {
			rc = int_arg(cmd, a, argv[++i], 10, 100000, &o->height);
		} else if (strcmp(a, "--color") == 0 && v && tl) {
			v = argv[++i];
			o->color = strcmp(v, "auto") == 0 ? -1 : strcmp(v, "always") == 0 ? 1
				 : strcmp(v, "never") == 0 ? 0 : -2;
			if (o->color == -2)
				return bad(cmd, "--color takes auto, always or never, not \"%s\"", v);
		} else if (a[0] == '-' && a[1]) {
			int known = !strcmp(a, "-o") || !strcmp(a, "--width") ||
				    !strcmp(a, "--height") || !strcmp(a, "--color");
			return bad(cmd, known && !v ? "\"%s\" needs a value"
					: "unknown option \"%s\"", a);
		} else if (!o->file) {
			o->file = a;
		} else {
			return bad(cmd, "one trace FILE, not also \"%s\"", a);
		}
		if (rc)
			return rc;
	}
	if (!o->file)
		return bad(cmd, "%s", "no trace FILE");
	return 0;
}

/* Load file, and cut it to the window if one is asked for: *use is then
 * the view, else the whole trace. Return 0, or the exit status. */
static int load(const char *file, const struct winspec *w, struct trace *whole,
		struct trace *view, struct trace **use)
{
	int rc = trace_load(file, whole);
	if (rc)
		return rc;
	*use = whole;
	if (!w->n && !w->from && !w->to && !w->whole)
		return 0;
	rc = trace_window(whole, w, view);
	if (rc) {
		trace_free(whole);
		return rc;
	}
	*use = view;
	return 0;
}

/* Take the window options of one question's words out into w, the rest
 * into rest (room for argc). Return 0, or 2 after saying what is wrong. */
static int split_window(int argc, char **argv, struct winspec *w, char **rest, int *nrest)
{
	*nrest = 0;
	for (int i = 0; i < argc; i++) {
		int r = win_option(argc, argv, &i, w);
		if (r == 2)
			return 2;
		if (!r)
			rest[(*nrest)++] = argv[i];
	}
	return 0;
}

/* One question on the whole trace: cut to its window w if it has one. */
static int query_in(const struct trace *whole, const struct winspec *w, int nrest, char **rest)
{
	struct trace view;
	if (!w->n && !w->from && !w->to && !w->whole)
		return query_main(whole, nrest, rest);
	int rc = trace_window(whole, w, &view);
	if (rc)
		return rc;
	rc = query_main(&view, nrest, rest);
	trace_free(&view);
	return rc;
}

/* `query FILE -`: the questions on stdin, one a line, its words separated by
 * tabs, answered from one parse of FILE (a checker asks a lab's questions at
 * once). After each answer, a line of the ASCII record separator (0x1e) and
 * that question's exit status; what a question gets wrong goes to stderr, as
 * alone, and the next is answered. Exit status: 0, or FILE's. */
#define BATCH_WORDS 64
static int query_batch(const char *file)
{
	struct trace whole;
	int rc = trace_load(file, &whole);
	if (rc)
		return rc;
	char *line = NULL, *words[BATCH_WORDS], *rest[BATCH_WORDS];
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		struct winspec w = { 0 };
		int n = 0, nrest, r;
		char *p = line, *tok;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		while ((tok = strsep(&p, "\t")) != NULL)
			if (*tok && n < BATCH_WORDS)
				words[n++] = tok;
		r = split_window(n, words, &w, rest, &nrest);
		if (!r)
			r = query_in(&whole, &w, nrest, rest);
		fflush(stdout);
		printf("\036%d\n", r);
	}
	free(line);
	trace_free(&whole);
	return ferror(stdout) ? 1 : 0;
}

/* `query FILE ...`: take the window options out, pass the rest on. */
static int cmd_query(int argc, char **argv)
{
	struct winspec w = { 0 };
	struct trace whole;
	char **rest;
	int nrest, rc;
	if (argc < 1 || argv[0][0] == '-')
		return bad("query", "%s", "FILE comes first");
	if (argc == 2 && strcmp(argv[1], "-") == 0)
		return query_batch(argv[0]);
	rest = malloc((size_t)argc * sizeof *rest);
	if (!rest || split_window(argc - 1, argv + 1, &w, rest, &nrest)) {
		free(rest);
		return rest ? 2 : 3;
	}
	rc = trace_load(argv[0], &whole);
	if (!rc) {
		rc = query_in(&whole, &w, nrest, rest);
		trace_free(&whole);
	}
	free(rest);
	return rc;
}

/* `ask FILE QUESTION...`: one parse, one model, every answer. */
static int cmd_ask(int argc, char **argv)
{
	struct trace t;
	if (argc < 2 || argv[0][0] == '-')
		return bad("ask", "%s", argc < 2 ? "FILE and a question (or -)" : "FILE comes first");
	int rc = trace_load(argv[0], &t);
	if (rc)
		return rc;
	rc = ask_main(&t, argc - 1, argv + 1);
	trace_free(&t);
	return rc;
}

/* timeline, json, svg, summary. */
static int cmd_draw(const char *cmd, int argc, char **argv)
{
	struct opts o;
	struct trace whole, view, *t;
	int rc = parse_opts(cmd, argc, argv, &o);
	if (rc)
		return rc;
	rc = load(o.file, &o.win, &whole, &view, &t);
	if (rc)
		return rc;
	FILE *f = open_out(o.out);
	if (!f) {
		rc = 1;
	} else if (strcmp(cmd, "timeline") == 0) {
		if (o.color < 0) {
			const char *nc = getenv("NO_COLOR");
			o.color = isatty(STDOUT_FILENO) && !(nc && *nc);
		}
		rc = render_timeline(t, f, o.width ? o.width : term_width(),
				     o.height ? o.height : term_height(), o.color);
	} else if (strcmp(cmd, "json") == 0) {
		rc = render_json(t, f);
	} else if (strcmp(cmd, "svg") == 0) {
		rc = render_svg(t, f);
	} else {
		rc = render_summary(t, f, o.width ? o.width : term_width());
	}
	if (f && finish_out(f, o.out) && !rc)
		rc = 1;
	if (t == &view)
		trace_free(&view);
	trace_free(&whole);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(NULL);
	const char *cmd = argv[1];
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fputs(usage_text, stdout);
		ask_usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "ask") == 0)
		return cmd_ask(argc - 2, argv + 2);
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 2, argv + 2);
	if (strcmp(cmd, "query") == 0)
		return cmd_query(argc - 2, argv + 2);
	if (strcmp(cmd, "timeline") == 0 || strcmp(cmd, "json") == 0 ||
	    strcmp(cmd, "svg") == 0 || strcmp(cmd, "summary") == 0)
		return cmd_draw(cmd, argc - 2, argv + 2);
	fprintf(stderr, "streamtrace: unknown command \"%s\"\n"
		"usage: streamtrace run|timeline|json|svg|summary|query|ask|help ...\n", cmd);
	return 2;
}
