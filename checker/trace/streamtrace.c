/*
 * streamtrace.c -- the trace tool's command line: capture a CUDA program,
 * then draw or question what its GPU did.
 *
 *   streamtrace run [-o FILE] -- PROG [ARGS...]
 *   streamtrace timeline [--width N] [--color auto|always|never] FILE
 *   streamtrace json FILE [-o OUT]
 *   streamtrace svg FILE [-o OUT]
 *   streamtrace summary FILE
 *   streamtrace query FILE QUESTION [SEL [SEL2]] [--stream ID|default] [--mem KIND]
 *
 * Exit status: 0 ok; 2 bad command line; 3 unreadable or malformed trace;
 * `run` exits with the program's status (128+N if killed by signal N).
 * Plain C11: builds with no CUDA installed (capture lives in capture.c).
 */
#define _DEFAULT_SOURCE
#include "trace.h"

#include <errno.h>
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
	"  run [-o FILE] -- PROG [ARGS...]   run PROG under capture (default FILE:\n"
	"                                    streamtrace.trace); exits with PROG's status\n"
	"  timeline [--width N] [--color auto|always|never] FILE\n"
	"                                    one lane per stream and per host thread\n"
	"  json FILE [-o OUT]                Chrome trace-event JSON (ui.perfetto.dev)\n"
	"  svg FILE [-o OUT]                 SVG of the timeline\n"
	"  summary FILE                      headline figures\n"
	"  query FILE QUESTION [SEL [SEL2]] [--stream ID|default] [--mem KIND]\n"
	"questions: count total union span bytes bandwidth durations streams list SEL;\n"
	"           events SEL (each record with the CUDA events around it on its stream);\n"
	"           overlap order SEL SEL2; dropped; meta KEY\n"
	"selectors: kernel kernel:SUBSTR h2d d2h d2d copy memset gpu sync\n"
	"           sync:stream|event|context|wait api api:NAME api:PREFIX* nvtx nvtx:NAME event\n"
	"memory kinds (--mem): PAGEABLE PINNED DEVICE MANAGED (for copies, the host side)\n"
	"format: see checker/trace/FORMAT.md\n";

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "streamtrace: %s\n", why);
	fputs(usage_text, stderr);
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
			return usage("run: unknown option");
		else
			break;
	}
	if (i >= argc)
		return usage("run: no program to run");
	if (self_dir(lib, sizeof lib - 32))
		return usage("run: cannot find my own executable");
	strcat(lib, "/libstreamtrace.so");
	if (stat(lib, &st) != 0) {
		fprintf(stderr, "streamtrace: %s is missing (was it built without CUPTI?)\n", lib);
		return 1;
	}
	absolute(file, out, sizeof out);
	unlink(out); /* a stale trace must not pass for this run's */
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
	if (rc != 127 && stat(out, &st) != 0)
		fprintf(stderr, "streamtrace: no trace written: %s created no CUDA "
			"context (no device, or it never used the GPU)\n", argv[i]);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Commands on a trace file                                                  */
/* ------------------------------------------------------------------------ */

/* Columns of the terminal: $COLUMNS, else the tty's, else 100. */
static int term_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	if (c && atoi(c) > 0)
		return atoi(c);
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 100;
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

static int cmd_file(const char *cmd, int argc, char **argv)
{
	const char *file = NULL, *out = NULL;
	int width = 0, color = -1; /* -1: auto */
	struct trace t;

	if (strcmp(cmd, "query") == 0) {
		if (argc < 1 || argv[0][0] == '-')
			return usage("query: FILE comes first");
		int rc = trace_load(argv[0], &t);
		if (rc)
			return rc;
		rc = query_main(&t, argc - 1, argv + 1);
		trace_free(&t);
		return rc;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-o") == 0 && i + 1 < argc && strcmp(cmd, "timeline") &&
		    strcmp(cmd, "summary")) {
			out = argv[++i];
		} else if (strcmp(a, "--width") == 0 && i + 1 < argc &&
			   strcmp(cmd, "timeline") == 0) {
			char *end;
			long w = strtol(argv[++i], &end, 10);
			if (*end || w < 20 || w > 1000)
				return usage("timeline: --width takes 20..1000");
			width = (int)w;
		} else if (strcmp(a, "--color") == 0 && i + 1 < argc &&
			   strcmp(cmd, "timeline") == 0) {
			const char *v = argv[++i];
			if (strcmp(v, "auto") == 0)
				color = -1;
			else if (strcmp(v, "always") == 0)
				color = 1;
			else if (strcmp(v, "never") == 0)
				color = 0;
			else
				return usage("timeline: --color takes auto, always or never");
		} else if (a[0] == '-' && a[1]) {
			return usage("unknown option");
		} else if (!file) {
			file = a;
		} else {
			return usage("too many arguments");
		}
	}
	if (!file)
		return usage("no trace FILE");
	int rc = trace_load(file, &t);
	if (rc)
		return rc;
	FILE *f = open_out(out);
	if (!f) {
		trace_free(&t);
		return 1;
	}
	if (strcmp(cmd, "timeline") == 0) {
		if (color < 0) {
			const char *nc = getenv("NO_COLOR");
			color = isatty(STDOUT_FILENO) && !(nc && *nc);
		}
		rc = render_timeline(&t, f, width ? width : term_width(), color);
	} else if (strcmp(cmd, "json") == 0) {
		rc = render_json(&t, f);
	} else if (strcmp(cmd, "svg") == 0) {
		rc = render_svg(&t, f);
	} else {
		rc = render_summary(&t, f);
	}
	if (finish_out(f, out) && !rc)
		rc = 1;
	trace_free(&t);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(NULL);
	const char *cmd = argv[1];
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 2, argv + 2);
	if (strcmp(cmd, "timeline") == 0 || strcmp(cmd, "json") == 0 ||
	    strcmp(cmd, "svg") == 0 || strcmp(cmd, "summary") == 0 ||
	    strcmp(cmd, "query") == 0)
		return cmd_file(cmd, argc - 2, argv + 2);
	return usage("unknown command");
}
