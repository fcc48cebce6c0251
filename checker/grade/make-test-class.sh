#!/usr/bin/env bash
# make-test-class.sh -- a class of submissions whose right verdicts are known.
#
#   checker/grade/make-test-class.sh DIR [LABS]
#
# Writes DIR/submissions/ (one entry per student) and DIR/expected.tsv, the
# verdict every lab of every submission must get, on a GPU and without one.
# LABS (ids or numbers, "01,05") limits the mutants to those labs; the
# submissions that exercise the grader itself are always made.
#
#   solution, solution-flat.tar.gz, solution-git.bundle, solution-zip.zip
#                           every solution, in four forms and layouts: every
#                           lab passes
#   zip-bad-members.zip     lab 01's solution, and members with '..' and an
#                           absolute path (refused, named): lab 01 passes
#   zip-broken.zip          a zip cut in half: every lab is an "error" of the
#                           grader (it cannot be opened), never "missing"
#   tar-broken.tar.gz       solution-flat.tar.gz cut in half: tar unpacks
#                           its first files, the rest is lost; every lab is
#                           an "error" of the grader, with tar's own words,
#                           those found in the first half too (a file there
#                           may be cut short), never the student's failure
#   starter                 every starter: every lab fails
#   mut-ID-NAME             lab ID's solution with mutant NAME applied: the
#                           lab fails the check the patch names
#   hang, crash, no-compile a run that never ends, a segfault, a syntax error
#   edits-verify            lab 05 computes wrong, and its verify() says right
#   prints-result           lab 01 computes wrong, and prints RESULT by hand
#   ships-checker           lab 02's starter with a checker, common/ and a
#                           Makefile that pass everything
#   escape                  lab 01 writes into the kit's checker and /tmp
#   hostile                 lab 01 tries, before anything else, to read the
#                           kit's solutions and another student's files, to
#                           write into the kit and the class's folder, and
#                           to reach the network (HOSTILE_CONNECT=HOST:PORT, a
#                           listener of the test's, where given); any that
#                           works makes it exit 3 ("ESCAPED: ..."), failing
#                           its lab: it passes only in a sandbox (bubblewrap)
#   fork-bomb               lab 01 forks without end
#   child-holds-output      lab 01 leaves two children that sleep for 10
#                           minutes holding its output (one in a session of
#                           its own): the lab passes, in the time of a run
#   flood                   lab 01 prints without end: stopped at the size
#                           limit (GRADE_FSIZE), its run fails
#   slow-build              lab 01 with a macro that expands without end: the
#                           build does not finish in BUILD_TIMEOUT
#   nothing                 no lab file at all
#   forge-now, forge-later, forge-kit, prints-reference, exit77
#                           cheats (cheat.h): each tries to write its own
#                           verdict, in lab 02's unfinished starter: at once
#                           (every TAP, status, run, steps and log file it
#                           can find), from a child left behind that goes on
#                           past its checker and the grader's time limits,
#                           by editing its copy of the kit; or (lab 01's
#                           starter) prints the reference figures and the
#                           solution it finds and "RESULT: verified"; or
#                           exits 77 on every run but a
#                           bad option's (lab 02's starter too). Each fails
#                           on a GPU (exit77: "it exited 77, but this node
#                           has a GPU"), is "not graded" without one, never
#                           a pass; lab 01's solution beside it (lab 05's
#                           beside the one in lab 01) keeps its verdict
#
# expected.tsv: student, lab, verdict on a GPU, the check that must fail
# ("-" for any), verdict without a GPU, verdict on a machine with one GPU
# (check-verdicts compares). A lab with checks that need two GPUs (lab 09)
# is "pending" on one GPU wherever its program runs: its solutions and
# mutants; its starter, stopped at its first TODO, still fails.
set -eu
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KIT="$(cd "$HERE/../.." && pwd)"
. "$HERE/lib.bash"

[ $# -ge 1 ] || { echo "usage: make-test-class.sh DIR [LABS]" >&2; exit 2; }
out=$1
mut_labs=$(resolve_labs "$KIT" "${2:-}")
all_labs=$(kit_labs "$KIT")
subs="$out/submissions"
rm -rf "$subs" "$out/expected.tsv"
mkdir -p "$subs"
exp="$out/expected.tsv"
printf 'student\tlab\tverdict\tcheck\tverdict_without_gpu\tverdict_one_gpu\n' >"$exp"

die() { echo "make-test-class.sh: $*" >&2; exit 1; }
# each lab's program, and the lab of each number, read once (a process each
# time costs: this script asks hundreds of times)
declare -A SRC_OF LAB_OF
for id in $all_labs; do
    SRC_OF[$id]=$(kit_src "$KIT" "$id")
    LAB_OF[${id%%-*}]=$id
done
src() { printf '%s\n' "${SRC_OF[$1]}"; }
lab_of() { printf '%s\n' "${LAB_OF[$1]}"; }

# expect STUDENT LAB VERDICT CHECK NOGPU [ONEGPU]: one line of expected.tsv
# (ONEGPU: the verdict on one GPU, by default VERDICT, or "pending" for
# a run of a lab that needs two: one_gpu). A lab of the student not named
# is expected missing (see finish).
declare -A EXPECTED
expect() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:-$(one_gpu "$2" "$3")}" >>"$exp"
    EXPECTED["$1/$2"]=1
}
# one_gpu LAB VERDICT: a run of LAB on a machine with one GPU: "pending"
# where LAB's checker has checks that need two (need_gpus) and the run is a
# pass or a fail the program ran to; else VERDICT.
one_gpu() {
    if [ "$2" = pass ] || [ "$2" = fail ]; then
        grep -q 'need_gpus [2-9]' "$KIT/checker/$1.bats" 2>/dev/null && { echo pending; return; }
    fi
    echo "$2"
}

# finish STUDENT: every lab not expected yet is missing from the submission.
finish() {
    local id
    for id in $all_labs; do
        [ -n "${EXPECTED["$1/$id"]:-}" ] || expect "$1" "$id" missing - missing missing
    done
}

# put DIR ID FILE: FILE as lab ID's file in DIR/labs/ID/.
put() {
    mkdir -p "$1/labs/$2"
    cp "$3" "$1/labs/$2/$(src "$2")"
}

# mutant ID PATCH FILE: lab ID's solution with PATCH applied, into FILE.
mutant() {
    local t
    t=$(mktemp -d)
    cp "$KIT/solutions/$1/$(src "$1")" "$t/"
    patch -s -F0 -p1 -d "$t" <"$2" >/dev/null || die "$2 does not apply"
    cp "$t/$(src "$1")" "$3"
    rm -rf "$t"
}

# edit FILE AWK-ARGS...: rewrite FILE with awk; it must change.
edit() {
    local f=$1 t
    shift
    t=$(mktemp)
    awk "$@" "$f" >"$t"
    cmp -s "$f" "$t" && die "the edit of $(basename "$f") changed nothing: the lab's code moved on"
    mv "$t" "$f"
}

# insert FILE REGEX CODE [after]: CODE before (after) the first line matching REGEX.
insert() {
    RE=$2 CODE=$3 AFTER=${4:-} edit "$1" '
        !done && $0 ~ ENVIRON["RE"] {
            if (ENVIRON["AFTER"] != "") print
            print ENVIRON["CODE"]
            if (ENVIRON["AFTER"] == "") print
            done = 1; next }
        { print }'
}

expected_check() { sed -n '1,5s/^# expect: //p' "$1"; }

# ------------------------------------------------------------ the solutions

s="$subs/solution"
for id in $all_labs; do
    put "$s" "$id" "$KIT/solutions/$id/$(src "$id")"
    expect solution "$id" pass - "not graded"
done

t=$(mktemp -d)
mkdir "$t/my-labs"
for id in $all_labs; do
    cp "$KIT/solutions/$id/$(src "$id")" "$t/my-labs/"
    expect solution-flat "$id" pass - "not graded"
done
tar --sort=name -czf "$subs/solution-flat.tar.gz" -C "$t" my-labs
rm -rf "$t"

if command -v git >/dev/null; then
    t=$(mktemp -d)
    for id in $all_labs; do
        put "$t" "$id" "$KIT/solutions/$id/$(src "$id")"
        expect solution-git "$id" pass - "not graded"
    done
    git -C "$t" init -q
    git -C "$t" add -A
    git -C "$t" -c user.name=student -c user.email=student@example.org commit -q -m labs
    git -C "$t" bundle create -q "$subs/solution-git.bundle" HEAD 2>/dev/null ||
        git -C "$t" bundle create "$subs/solution-git.bundle" HEAD >/dev/null 2>&1
    rm -rf "$t"
fi

# zip_of ZIP MEMBER=FILE...: write the .zip ZIP (python3's zipfile: no zip
# needed), each FILE stored under the name MEMBER (any name: ../x, /x).
zip_of() {
    python3 - "$@" <<'EOF2'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for a in sys.argv[2:]:
        name, _, path = a.partition("=")
        with open(path, "rb") as f:
            z.writestr(name, f.read())
EOF2
}

members=()
for id in $all_labs; do
    members+=("labs/$id/$(src "$id")=$KIT/solutions/$id/$(src "$id")")
    expect solution-zip "$id" pass - "not graded"
done
zip_of "$subs/solution-zip.zip" "${members[@]}"

# zip-bad-members: lab 01, and three members that must not be written
t=$(mktemp)
echo "written by a member of a zip" >"$t"
id=$(lab_of 01)
zip_of "$subs/zip-bad-members.zip" \
    "my-labs/$(src "$id")=$KIT/solutions/$id/$(src "$id")" \
    "../cuda-stream-labs-zip-up.txt=$t" "my-labs/../../cuda-stream-labs-zip-up2.txt=$t" \
    "/tmp/cuda-stream-labs-zip-absolute.txt=$t"
rm -f "$t"
expect zip-bad-members "$id" pass - "not graded"
finish zip-bad-members

# zip-broken: the first half of solution-zip.zip (its index is at the end)
head -c $(($(wc -c <"$subs/solution-zip.zip") / 2)) "$subs/solution-zip.zip" >"$subs/zip-broken.zip"
for id in $all_labs; do
    expect zip-broken "$id" error - error error
done

# tar-broken: the first half of solution-flat.tar.gz
head -c $(($(wc -c <"$subs/solution-flat.tar.gz") / 2)) "$subs/solution-flat.tar.gz" >"$subs/tar-broken.tar.gz"
for id in $all_labs; do
    expect tar-broken "$id" error - error error
done

for id in $all_labs; do
    put "$subs/starter" "$id" "$KIT/labs/$id/$(src "$id")"
    expect starter "$id" fail - "not graded" fail    # it stops at TODO(1)
done

# ------------------------------------------------------------ the mutants

for id in $mut_labs; do
    for p in "$KIT/checker/tests/mutants/$id"/*.patch; do
        [ -f "$p" ] || continue
        n="mut-$id-$(basename "$p" .patch)"
        mkdir -p "$subs/$n"
        mutant "$id" "$p" "$subs/$n/$(src "$id")"
        expect "$n" "$id" fail "$(expected_check "$p")" "not graded"
        finish "$n"
    done
done

# ------------------------------------------------------------ the grader's own cases

# hang: lab 04 waits for a flag nobody sets, once it has a GPU.
id=$(lab_of 04) f="$subs/hang/labs/$id/$(src "$id")"
put "$subs/hang" "$id" "$KIT/solutions/$id/$(src "$id")"
insert "$f" 'lab_pick_device\(\)' '    { volatile int ready = 0; while (!ready) { } }   /* a hang */' after
expect hang "$id" fail "it runs to the end and exits 0" "not graded"
finish hang

# crash: lab 02 writes through a null pointer, once it has a GPU.
id=$(lab_of 02) f="$subs/crash/labs/$id/$(src "$id")"
put "$subs/crash" "$id" "$KIT/solutions/$id/$(src "$id")"
insert "$f" 'lab_pick_device\(\)' '    { volatile int *nowhere = NULL; *nowhere = 1; }   /* a crash */' after
expect crash "$id" fail "it runs to the end and exits 0" "not graded"
finish crash

# no-compile: lab 02 calls a function that does not exist.
id=$(lab_of 02) f="$subs/no-compile/labs/$id/$(src "$id")"
put "$subs/no-compile" "$id" "$KIT/solutions/$id/$(src "$id")"
insert "$f" 'lab_pick_device\(\)' '    undeclared_helper(42);' after
expect no-compile "$id" fail "the program builds without warnings" fail
finish no-compile

# edits-verify: lab 05 with a kernel that ignores the chunk offset (wrong
# results), and a verify() that no longer says so. The digest still tells.
id=$(lab_of 05) f="$subs/edits-verify/labs/$id/$(src "$id")"
p="$KIT/checker/tests/mutants/$id/kernel-without-offset.patch"
mkdir -p "$(dirname "$f")"
mutant "$id" "$p" "$f"
edit "$f" '/^static size_t verify\(/ { inv = 1 }
           inv && /return m\.bad;/ { sub(/return m\.bad;/, "return 0;   /* every element is fine, trust me */"); inv = 0 }
           { print }'
expect edits-verify "$id" fail "$(expected_check "$p")" "not graded"
finish edits-verify

# prints-result: lab 01 with too few blocks (wrong results), printing the
# verdict line and a digest by hand instead of checking.
id=$(lab_of 01) f="$subs/prints-result/labs/$id/$(src "$id")"
p="$KIT/checker/tests/mutants/$id/too-few-blocks.patch"
mkdir -p "$(dirname "$f")"
mutant "$id" "$p" "$f"
edit "$f" '/bad = scramble_verify\(/ {
               print "    bad = 0;"
               print "    printf(\"  digest_out = 0123456789abcdef\\nRESULT: verified all %zu elements\\n\", (size_t)n);"
               next }
           { print }'
expect prints-result "$id" fail "$(expected_check "$p")" "not graded"
finish prints-result

# ships-checker: lab 02's starter, with a checker, common/ and a Makefile of
# its own that pass everything. Grading uses the kit's.
id=$(lab_of 02) d="$subs/ships-checker"
put "$d" "$id" "$KIT/labs/$id/$(src "$id")"
mkdir -p "$d/checker/lib" "$d/common"
for b in "$KIT"/checker/[0-9][0-9]-*.bats; do
    sed 's/^\(@test ".*" {\)$/\1 true; }\nnever_run() {/' "$b" >"$d/checker/$(basename "$b")"
done
printf 'say_fail() { return 0; }\nneed_run() { return 0; }\n' >"$d/checker/lib/checks.bash"
cp "$KIT/common/lab.h" "$d/common/" && echo '#define LAB_EXIT_FAIL 0' >>"$d/common/lab.h"
printf 'all:\n\t@true\ncheck:\n\t@echo all checks pass\n' >"$d/Makefile"
expect ships-checker "$id" fail - "not graded"
finish ships-checker

# escape: lab 01, before anything else, appends to the kit's checks.bash (a
# say_fail that passes) and writes to /tmp; lab 02 is the starter, which
# must still fail. The kit is read-only to the sandbox user.
id=$(lab_of 01) f="$subs/escape/labs/$id/$(src "$id")"
put "$subs/escape" "$id" "$KIT/solutions/$id/$(src "$id")"
put "$subs/escape" "$(lab_of 02)" "$KIT/labs/$(lab_of 02)/$(src "$(lab_of 02)")"
insert "$f" '^#include "lab.h"' '#include <unistd.h>'
insert "$f" 'lab_parse_[a-z_]*\(' '    {   /* try to write where a lab program must not */
        char self[4096];
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 64);
        char *slash = k > 0 ? (self[k] = 0, strrchr(self, '"'"'/'"'"')) : NULL;
        FILE *w;
        if (slash != NULL) {
            strcpy(slash, "/../../checker/lib/checks.bash");
            if ((w = fopen(self, "a")) != NULL) {
                fputs("\nsay_fail() { return 0; }\nneed_run() { return 0; }\n", w);
                fclose(w);
            }
        }
        if ((w = fopen("/tmp/cuda-stream-labs-escape.txt", "w")) != NULL) {
            fputs("written by a lab program\n", w);
            fclose(w);
        }
    }'
expect escape "$id" pass - "not graded"
expect escape "$(lab_of 02)" fail - "not graded"
finish escape

# hostile: lab 01 attacks the grader's machine, as a submission could, once
# it has parsed its options (before it looks for a GPU: it attacks with or
# without one). Each attack that works is a hole in the sandbox: it says
# which on stderr and exits 3, so the lab fails; in a sandbox that holds
# (GRADE_SANDBOX bwrap) each fails and the lab gets its verdict. The paths
# it tries are this kit's solutions and this class's folder, written into
# the code here.
id=$(lab_of 01) f="$subs/hostile/labs/$id/$(src "$id")"
put "$subs/hostile" "$id" "$KIT/solutions/$id/$(src "$id")"
insert "$f" '^#include "lab.h"' '#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <glob.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* hostile_try: each way out of the sandbox; the first that works is named
   on stderr and ends the program with status 3. */
static void hostile_escaped(const char *what, const char *where)
{
    fprintf(stderr, "ESCAPED: %s %s\n", what, where);
    exit(3);
}

static void hostile_try(void)
{
    const char *secrets[] = { "'"$KIT"'/solutions/'"$id"'/'"$(src "$id")"'",
                              "'"$KIT"'/checker/tests/mutants" };
    const char *class_dir = "'"$subs"'";
    const char *connect_to = "'"${HOSTILE_CONNECT:-}"'";
    char self[4096], mine[4096];
    ssize_t k;
    size_t i;
    glob_t g;
    struct ifaddrs *ifs, *a;

    for (i = 0; i < sizeof secrets / sizeof *secrets; i++)
        if (fopen(secrets[i], "r") != NULL || opendir(secrets[i]) != NULL)
            hostile_escaped("read the instructor'"'"'s", secrets[i]);
    if (opendir(class_dir) != NULL)
        hostile_escaped("read the class'"'"'s folder", class_dir);
    /* another job'"'"'s files: the work folders of every grading run */
    k = readlink("/proc/self/exe", self, sizeof self - 1);
    self[k > 0 ? k : 0] = 0;
    snprintf(mine, sizeof mine, "%s", self);
    if (strstr(mine, "/kit/") != NULL)
        *strstr(mine, "/kit/") = 0;
    if (glob("/tmp/cuda-stream-labs-grade.*/*/kit/labs/*/*.cu", 0, NULL, &g) == 0) {
        for (i = 0; i < g.gl_pathc; i++)
            if (strncmp(g.gl_pathv[i], mine, strlen(mine)) != 0 &&
                fopen(g.gl_pathv[i], "r") != NULL)
                hostile_escaped("read another job'"'"'s", g.gl_pathv[i]);
        globfree(&g);
    }
    /* write outside its folder: the instructor'"'"'s kit, the class */
    {
        char w[4200];
        snprintf(w, sizeof w, "%s/hostile-was-here.txt", "'"$KIT"'");
        if (fopen(w, "w") != NULL)
            hostile_escaped("wrote into the instructor'"'"'s kit:", w);
        snprintf(w, sizeof w, "%s/hostile-was-here.txt", class_dir);
        if (fopen(w, "w") != NULL)
            hostile_escaped("wrote into the class'"'"'s folder:", w);
    }
    /* the network: an interface other than loopback, or the test'"'"'s listener */
    if (getifaddrs(&ifs) == 0) {
        for (a = ifs; a != NULL; a = a->ifa_next)
            if (a->ifa_addr != NULL && (a->ifa_flags & IFF_UP) && !(a->ifa_flags & IFF_LOOPBACK) &&
                (a->ifa_addr->sa_family == AF_INET || a->ifa_addr->sa_family == AF_INET6))
                hostile_escaped("sees the network interface", a->ifa_name);
        freeifaddrs(ifs);
    }
    if (connect_to[0] != 0 && strchr(connect_to, '"'"':'"'"') != NULL) {
        struct sockaddr_in to;
        char host[256];
        int s = socket(AF_INET, SOCK_STREAM, 0);
        snprintf(host, sizeof host, "%.*s", (int)(strchr(connect_to, '"'"':'"'"') - connect_to), connect_to);
        memset(&to, 0, sizeof to);
        to.sin_family = AF_INET;
        to.sin_port = htons((unsigned short)atoi(strchr(connect_to, '"'"':'"'"') + 1));
        if (s >= 0 && inet_pton(AF_INET, host, &to.sin_addr) == 1 &&
            connect(s, (struct sockaddr *)&to, sizeof to) == 0)
            hostile_escaped("connected to", connect_to);
    }
}'
insert "$f" 'lab_parse_[a-z_]*\(' '    hostile_try();   /* before anything else */' after
expect hostile "$id" pass - "not graded"
finish hostile

# fork-bomb: lab 01 forks without end once it has parsed its options (its
# main and no-device runs hang; the process limit holds the bomb).
id=$(lab_of 01) f="$subs/fork-bomb/labs/$id/$(src "$id")"
put "$subs/fork-bomb" "$id" "$KIT/solutions/$id/$(src "$id")"
insert "$f" '^#include "lab.h"' '#include <unistd.h>'
insert "$f" 'lab_parse_[a-z_]*\(' '    for (;;) (void)fork();   /* a fork bomb */' after
expect fork-bomb "$id" fail "it runs to the end and exits 0" fail
finish fork-bomb

# child-holds-output: lab 01, once it has parsed its options, leaves two
# children that sleep for 10 minutes, holding its output; the second in a
# session of its own (out of the run's process group). The run is over when
# the program ends: the verdict is the program's, in the time of a run.
id=$(lab_of 01) f="$subs/child-holds-output/labs/$id/$(src "$id")"
put "$subs/child-holds-output" "$id" "$KIT/solutions/$id/$(src "$id")"
insert "$f" '^#include "lab.h"' '#include <unistd.h>'
insert "$f" 'lab_parse_[a-z_]*\(' '    if (fork() == 0) { sleep(600); _exit(0); }              /* a helper left behind */
    if (fork() == 0) { setsid(); sleep(600); _exit(0); }    /* and one out of its group */' after
expect child-holds-output "$id" pass - "not graded"
finish child-holds-output

# flood: lab 01 prints without end once it has parsed its options; each run
# is stopped by the file size limit (GRADE_FSIZE), and says so.
id=$(lab_of 01) f="$subs/flood/labs/$id/$(src "$id")"
put "$subs/flood" "$id" "$KIT/solutions/$id/$(src "$id")"
insert "$f" 'lab_parse_[a-z_]*\(' '    for (;;) fputs("all work and no play makes a dull lab program\n", stdout);   /* a flood */' after
expect flood "$id" fail "it runs to the end and exits 0" fail
finish flood

# slow-build: lab 01 with a macro that doubles 40 times in an #if: the
# compiler works on it for hours (and its memory grows, some 50 MB a
# second): the build is stopped at BUILD_TIMEOUT (keep it small).
id=$(lab_of 01) f="$subs/slow-build/labs/$id/$(src "$id")"
put "$subs/slow-build" "$id" "$KIT/solutions/$id/$(src "$id")"
{
    echo '#define SLOW0 1'
    for i in $(seq 1 40); do echo "#define SLOW$i SLOW$((i - 1)) + SLOW$((i - 1))"; done
    echo '#if SLOW40 > 0'
    echo '#endif'
} >>"$f"
expect slow-build "$id" fail "the program builds without warnings" fail
finish slow-build

# ------------------------------------------------------------ cheats

# cheat STUDENT ID MODE [AFTER-REGEX CALL [CHECK]]: lab ID's starter with
# cheat.h planted in it (CHEAT_MODE MODE: its header says what each bit
# does; 0: none of it), and CALL inserted after the first line matching
# AFTER-REGEX; beside it, the solution of another lab (01, or 05 where ID
# is 01), which must keep its verdict. The planted lab fails on a GPU (on
# CHECK where given), is "not graded" without one.
cheat() {
    local who=$1 id=$2 mode=$3 f other
    f="$subs/$who/labs/$id/$(src "$id")"
    put "$subs/$who" "$id" "$KIT/labs/$id/$(src "$id")"
    [ "$mode" = 0 ] || insert "$f" '^#include "lab.h"' "#define CHEAT_MODE $mode
#define CHEAT_KIT \"$KIT\"
#define CHEAT_LAB \"$id\"
#define CHEAT_SRC \"$(src "$id")\"
$(cat "$HERE/cheat.h")"
    [ -z "${4:-}" ] || insert "$f" "$4" "$5" after
    expect "$who" "$id" fail "${6:--}" "not graded"
    other=$(lab_of 01)
    [ "$id" = "$other" ] && other=$(lab_of 05)
    put "$subs/$who" "$other" "$KIT/solutions/$other/$(src "$other")"
    expect "$who" "$other" pass - "not graded"
    finish "$who"
}
cheat forge-now "$(lab_of 02)" 1
cheat forge-later "$(lab_of 02)" 2
cheat forge-kit "$(lab_of 02)" 4
cheat prints-reference "$(lab_of 01)" 8 'lab_pick_device\(\)' '    cheat_answers(n);   /* the answers it finds, and RESULT */'
# exit77: "no device" on every run that gets past the options (a bad
# option's run still exits 2): on a GPU node the grader's probe finds one
cheat exit77 "$(lab_of 02)" 0 'lab_parse_[a-z_]*\(' '    fprintf(stderr, "no usable CUDA device: none here, honest (cudaErrorNoDevice)\n");
    exit(77);' "it runs to the end and exits 0"

# nothing: a folder with no lab file in it.
mkdir -p "$subs/nothing/notes"
echo "I did not get to the labs." >"$subs/nothing/notes/README.txt"
finish nothing

echo "make-test-class.sh: $(ls "$subs" | wc -l) submissions in $subs, $(($(wc -l <"$exp") - 1)) expected verdicts in $exp"
