# checker/grade/lib.bash -- what the grading scripts share: the labs of a kit,
# the submissions of a class, the pristine kit, and the sandbox a student's
# program runs in. Sourced by grade, grade-one, handout and slurm/*.
# README.md (in this folder) says how grading works and why.

# ------------------------------------------------------------ the kit

# kit_labs KIT (the lab ids of a kit) and resolve_lab KIT WANT (a lab by
# its id or number): the checker's, which run-checks shares
# shellcheck source=../lib/runner.bash
. "$(dirname "${BASH_SOURCE[0]}")/../lib/runner.bash"

# kit_prog KIT ID: the program lab ID builds (PROG in labs/ID/Makefile).
kit_prog() { sed -n 's/^PROG *:= *//p' "$1/labs/$2/Makefile"; }

# kit_src KIT ID: the file a student writes for lab ID (a name, no folder):
# SRC in labs/ID/Makefile where it sets one; else what prepare_kit noted
# (labs/ID/.source: a prepared kit has no starters); else the starter
# labs/ID/PROG.EXT (.cu first, then .py, .c, any other that is no build
# output); else PROG.cu. Lab 08's is streams.py, the others' PROG.cu.
kit_src() {
    local kit=$1 id=$2 s p f
    s=$(sed -n 's/^SRC *:= *//p' "$kit/labs/$id/Makefile")
    [ -n "$s" ] || { read -r s <"$kit/labs/$id/.source"; } 2>/dev/null
    if [ -z "$s" ]; then
        p=$(kit_prog "$kit" "$id")
        for f in "$kit/labs/$id/$p".cu "$kit/labs/$id/$p".py "$kit/labs/$id/$p".c "$kit/labs/$id/$p".*; do
            case $f in *.trace|*.json|*.o|*.out|*.log) continue ;; esac
            [ -f "$f" ] && { s=${f##*/}; break; }
        done
    fi
    printf '%s\n' "${s:-$(kit_prog "$kit" "$id").cu}"
}

# kit_checks KIT ID: the names of lab ID's checks, in order, one a line.
kit_checks() { sed -n 's/^@test "\(.*\)" {$/\1/p' "$1/checker/$2.bats"; }

# resolve_labs KIT LIST: a list of ids or numbers ("01 03-pinned-memory",
# commas allowed) as full lab ids; every lab when LIST is empty.
resolve_labs() {
    local kit=$1 want
    if [ -z "${2:-}" ]; then kit_labs "$kit"; return 0; fi
    for want in ${2//,/ }; do
        resolve_lab "$kit" "$want" || return 1
    done
}

# What of checker/ never goes into a graded or a handed-out kit, by rule:
# tests/ (the kit's own tests, their mutants, which hold answer lines, their
# recordings, the load program) and grade/ (this folder). Nothing else of
# checker/ is left out.
KIT_ONLY="tests grade"

# copy_checker SRC DEST: SRC's checker/ without KIT_ONLY into DEST/checker.
copy_checker() {
    local e
    mkdir -p "$2/checker"
    for e in "$1"/checker/* "$1"/checker/.[!.]*; do
        [ -e "$e" ] || continue
        [[ " $KIT_ONLY " == *" $(basename "$e") "* ]] && continue
        cp -a "$e" "$2/checker/"
    done
}

# prepare_kit SRC DEST: the pristine kit submissions are graded in: the
# instructor's common/, checker/ (run-checks, the labs' checkers, lib/, the
# tools, built) and each lab's Makefile. No solutions, no mutants, no
# self-tests, no starters. Owned by whoever runs this (root when grading as
# root), and read-only to everybody else.
prepare_kit() {
    local src=$1 dest=$2 id
    rm -rf "$dest"
    mkdir -p "$dest/labs"
    cp -a "$src/common" "$src/Makefile" "$dest/"
    copy_checker "$src" "$dest"
    for id in $(kit_labs "$src"); do
        mkdir -p "$dest/labs/$id"
        cp -a "$src/labs/$id/Makefile" "$dest/labs/$id/"
        kit_src "$src" "$id" >"$dest/labs/$id/.source"
    done
    # which kit grades: its git description, where it is a work tree of its
    # own, and the hash of its files (before anything is built in it)
    kit_version "$src" "$dest" >"$dest/.kit-version"
    # the tools (every checker/*/Makefile), built once here: a sandboxed
    # checker cannot write to the kit
    local t ok=1
    make --no-print-directory -C "$dest" tools >"$dest/tools-build.log" 2>&1 || ok=0
    for t in "$dest"/checker/*/Makefile; do
        [ -f "$t" ] || continue
        make --no-print-directory -C "$(dirname "$t")" >>"$dest/tools-build.log" 2>&1 || ok=0
    done
    if [ "$ok" = 0 ]; then
        echo "grade: the kit's tools did not build (log: $dest/tools-build.log):" >&2
        tail -n 5 "$dest/tools-build.log" >&2
        return 1
    fi
    chmod -R go-w,a+rX "$dest"
}

# kit_version SRC DEST: one line for the kit that grades, recorded with every
# lab graded: `git describe --always --dirty` of SRC where SRC is the top of
# its own git work tree, then "content:" and the first 12 hex digits of the
# sha256 of DEST's files (names and contents, sorted): v1.2-3-gabc1234 or
# abc1234-dirty, and content:0123456789ab.
kit_version() {
    local src=$1 dest=$2 d="" top h
    if command -v git >/dev/null && top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) &&
       [ "$(cd "$top" && pwd -P)" = "$(cd "$src" && pwd -P)" ]; then
        d=$(git -C "$src" describe --always --dirty --tags 2>/dev/null)
    fi
    h=$(cd "$dest" && find . -type f ! -name .kit-version -print0 | LC_ALL=C sort -z |
        xargs -0 -r sha256sum | sha256sum | cut -c 1-12)
    printf '%s\n' "${d:+$d }content:$h"
}

# ------------------------------------------------------------ the class

# A submission is a folder, a tarball (.tar, .tar.gz, .tgz, .tar.xz, .txz,
# .tar.bz2, .tbz2), a .zip (unpacked by python3: unzip.py) or a git bundle
# (.bundle). Its name, the student, is the entry's name without that ending.
submission_kind() {
    case $1 in
        *.tar|*.tar.gz|*.tgz|*.tar.xz|*.txz|*.tar.bz2|*.tbz2) [ -f "$1" ] && echo tar ;;
        *.zip) [ -f "$1" ] && echo zip ;;
        *.bundle) [ -f "$1" ] && echo bundle ;;
        *) [ -d "$1" ] && echo dir ;;
    esac
}

# submission_id NAME: a name as a safe id, for a file name and a CSV cell:
# its letters without their accents (É is E), every other character but
# A-Za-z0-9._@+- as one _ (none first or last); "Ève O'Brien (late!)
# résumé" is Eve_O_Brien_late_resume. The name itself (UTF-8) is kept
# beside it (submissions.tsv, meta, students.csv).
SUBMISSION_ID_PY='
import re, sys, unicodedata
def safe(n):
    n = "".join(c for c in unicodedata.normalize("NFKD", n) if not unicodedata.combining(c))
    n = re.sub(r"[^A-Za-z0-9._@+-]+", "_", n).strip("_")
    return "_" + n if n == "" or n.startswith(".") else n
'
submission_id() {
    python3 -c "$SUBMISSION_ID_PY"'
print(safe(sys.argv[1]))' "$1"
}

# entry_name PATH: the entry's name without its ending (.tar.gz, .zip, ...).
entry_name() {
    local n
    n=$(basename "$1")
    n=${n%.tar.gz} n=${n%.tgz} n=${n%.tar.xz} n=${n%.txz} n=${n%.tar.bz2} n=${n%.tbz2}
    n=${n%.tar} n=${n%.zip} n=${n%.bundle}
    printf '%s\n' "$n"
}

# Gradescope's export of the submissions holds this file beside its
# submission_<id> folders: who made each (read by report.py), no submission.
GRADESCOPE_METADATA=submission_metadata.yml

# list_submissions DIR: "ID<TAB>KIND<TAB>PATH<TAB>NAME" for every submission
# in DIR, sorted by ID: ID the safe id of NAME, the entry's name without its
# ending (submission_id); two entries with the same id get -2, -3 (in the
# order of the folder's listing). What is not a submission goes to stderr as
# "ignored: ...".
list_submissions() {
    local dir=$1 p kind
    for p in "$dir"/* ; do
        [ -e "$p" ] || continue
        [ "$(basename "$p")" = "$GRADESCOPE_METADATA" ] && continue
        kind=$(submission_kind "$p")
        if [ -z "$kind" ]; then
            echo "ignored: $p (not a folder, tarball, zip or git bundle)" >&2
            continue
        fi
        printf '%s\t%s\t%s\n' "$kind" "$(cd "$(dirname "$p")" && pwd)/$(basename "$p")" "$(entry_name "$p")"
    done | python3 -c "$SUBMISSION_ID_PY"'
seen = set()
for line in sys.stdin:
    kind, path, name = line.rstrip("\n").split("\t")
    base = n = safe(name)
    i = 2
    while n in seen:
        n, i = "%s-%d" % (base, i), i + 1
    seen.add(n)
    print("\t".join((n, kind, path, name)))' | LC_ALL=C sort -t $'\t' -k1,1
}

# pick_students LISTED NAMES: the lines of LISTED (list_submissions') whose
# id or name is one of NAMES (commas between; a name's case aside), each
# once; a name that matches none is said on stderr, with the ids, and makes
# the status 1.
pick_students() {
    STUDENTS=$2 python3 -c '
import os, sys
want = [w.strip() for w in os.environ["STUDENTS"].split(",") if w.strip()]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1], encoding="utf-8")]
bad, seen = 0, set()
for w in want:
    hit = [r for r in rows if w in (r[0], r[3]) or w.casefold() == r[3].casefold()]
    if not hit:
        print("grade: no submission is named %s (ids: %s)" % (w, ", ".join(r[0] for r in rows[:8])), file=sys.stderr)
        bad = 1
    for r in hit:
        if r[0] not in seen:
            seen.add(r[0])
            print("\t".join(r))
sys.exit(bad)' "$1"
}

# merge_submissions OLD NEW: the class list of an output folder graded
# before (OLD) and of this run (NEW), one line per id, this run's line first
# where both have it; sorted by id.
merge_submissions() {
    { cat "$2"; [ -f "$1" ] && cat "$1"; } | awk -F '\t' '!seen[$1]++' | LC_ALL=C sort -t $'\t' -k1,1
}

# best_file ROOT ID SRC: of the files named SRC (sync_copy.cu, streams.py:
# kit_src) under ROOT, the one that is lab ID's: labs/ID/SRC first, then
# ID/SRC, then any, the shortest path first. Regular files only (no links),
# at most 1 MiB.
best_file() {
    local root=$1 id=$2 src=$3
    find "$root" -name .git -prune -o -type f -name "$src" -size -1025k -print 2>/dev/null |
        awk -v id="$id" -v src="$src" -v root="$root/" '
            { rel = substr($0, length(root) + 1)
              rank = 2
              if (rel == "labs/" id "/" src || substr(rel, length(rel) - length("/labs/" id "/" src) + 1) == "/labs/" id "/" src) rank = 0
              else if (rel == id "/" src || substr(rel, length(rel) - length("/" id "/" src) + 1) == "/" id "/" src) rank = 1
              printf "%d\t%06d\t%s\n", rank, length(rel), $0 }' |
        sort | head -n 1 | cut -f 3
}

# changed_kit_files ROOT KIT: the kit's code files (the checker's sources,
# common/, a lab's Makefile) that a submission at ROOT carries, in any folder,
# and that differ from KIT's: "checker/lib/checks.bash", one a line. Grading ignores
# them; the gradebook says so.
changed_kit_files() {
    local root=$1 kit=$2 f rel k
    find "$root" -name .git -prune -o -type f -size -1025k -print 2>/dev/null |
        while IFS= read -r f; do
            rel=${f#"$root"/}
            case /$rel in */checker/*|*/common/*|*/labs/*/Makefile) ;; *) continue ;; esac
            k=$(sed -E 's#^(.*/)?((checker|common)/.*)$#\2#; s#^(.*/)?(labs/[^/]+/Makefile)$#\2#' <<<"$rel")
            # code only: not what a build made, nor the handout's READMEs
            case $k in checker/vendor/*) continue ;; esac
            case $k in *.bats|*.bash|*.awk|*.sh|*.c|*.h|*.cu|*.mk|*Makefile|checker/run-checks|checker/stress/stress) ;;
                *) continue ;; esac
            [ -f "$kit/$k" ] && ! cmp -s "$f" "$kit/$k" && echo "$k"
        done | sort -u
}

# keep_history RESULTS ID: lab ID's result in RESULTS (a student's results
# folder), graded before, moved to RESULTS/history/WHEN-ID/ (WHEN its
# graded_at, colons as dashes; -2, -3 where taken): its status, log, TAP,
# steps, notes, what it left outside, and the file it graded (files/ID/).
# A regrade keeps what it replaces; report.py lists and links them.
keep_history() {
    local res=$1 id=$2 when h i=1 f
    [ -f "$res/$id.status" ] || return 0
    when=$(sed -n 's/^graded_at=//p' "$res/$id.status" | head -n 1 | tr -c 'A-Za-z0-9\n-' '-')
    h="$res/history/${when:-unknown}-$id"
    while [ -e "$h" ]; do i=$((i + 1)); h="$res/history/${when:-unknown}-$id-$i"; done
    mkdir -p "$h"
    for f in status log tap outside sub steps; do
        [ -f "$res/$id.$f" ] && mv -- "$res/$id.$f" "$h/$id.$f"
    done
    if [ -d "$res/files/$id" ]; then
        mkdir -p "$h/files"
        mv -- "$res/files/$id" "$h/files/$id"
    fi
    return 0
}

# ------------------------------------------------------------ the sandbox

# A student's program is built and run by the instructor's checker, as an
# unprivileged user when the grader runs as root: uid GRADE_UID + SLOT (a
# number with no account; its group the same number). Each parallel job has
# its own uid, so that one job's fork bomb (RLIMIT_NPROC counts per user) or
# its leftover processes cannot touch another's: claim_uids hands them out
# (local jobs from GRADE_UID + 1 up, Slurm array tasks from GRADE_UID + 100).
GRADE_UID=${GRADE_UID:-61000}
GRADE_NPROC=${GRADE_NPROC:-256}       # processes and threads per job
GRADE_FSIZE=${GRADE_FSIZE:-1073741824} # the largest file a program may write

is_root() { [ "$EUID" = 0 ]; }

# The sandbox itself, GRADE_SANDBOX (sandbox_choose decides, once):
#   bwrap  bubblewrap (Debian's bubblewrap): each step sees the system's
#          folders (/usr, /etc) read-only, the GPU's devices (/dev/nvidia*),
#          the folders the step names (SANDBOX_RO read-only, SANDBOX_RW
#          writable: the job's kit copy, its lab folder), a /tmp of its own
#          (SANDBOX_SCRATCH), and nothing else: no other submission, no file
#          of the instructor's (the kit's solutions), no network (a network
#          namespace of its own), no other process (a PID namespace). As root,
#          bwrap makes the namespaces and the step runs as the sandbox uid
#          inside them; as an ordinary user, bwrap makes them in a user
#          namespace of its own (unprivileged user namespaces must be allowed).
#          A lab's checker and each run of its program are two such steps,
#          apart (the door, below).
#   uid    (root, and only where the instructor names it) two uids a job,
#          the checker's and its programs', and no namespaces: a program can
#          read what every user may, and reach the network.
#   none   (not root, and only where the instructor names it) no sandbox:
#          the submissions run as the grading user, beside their checkers.
# GRADE_SANDBOX=auto (the default) and =bwrap take bwrap, and stop grading
# where it does not work (fail closed); =uid or =none ask for less.

# sandbox_cmd UID CPUS: set SANDBOX_CMD to the words that run a command as
# UID (when root; else as the caller) with a clean environment (SANDBOX_ENV),
# a process limit, no core files, a file size limit, pinned to CPUS ("" =
# any), so that a fork bomb burns its own job's cores, and (GRADE_SANDBOX
# bwrap) inside bubblewrap, seeing SANDBOX_RO, SANDBOX_RW and SANDBOX_SCRATCH:
#   SANDBOX_RW=("$dir"); sandbox_cmd 64001 0-1; timeout 60 "${SANDBOX_CMD[@]}" make ...
sandbox_cmd() {
    local uid=$1 cpus=$2 drop=()
    SANDBOX_CMD=(env -i "${SANDBOX_ENV[@]}")
    [ -n "$cpus" ] && SANDBOX_CMD+=(taskset -c "$cpus")
    if is_root; then
        local groups=(--clear-groups) g
        # (found once: a door makes a sandbox for every run)
        [ -n "${GRADE_GPU_GROUPS+x}" ] || GRADE_GPU_GROUPS=$(gpu_groups)
        g=$GRADE_GPU_GROUPS
        # (SANDBOX_GROUPS: more groups, the door's runs': the checker's own,
        # so that they can reach the job's folder and their own)
        [ -n "${SANDBOX_GROUPS:-}" ] && g=${g:+$g,}$SANDBOX_GROUPS
        [ -n "$g" ] && groups=(--groups="$g")
        drop=(setpriv --reuid="$uid" --regid="$uid" "${groups[@]}" --no-new-privs --)
        SANDBOX_CMD+=(prlimit --nproc="$GRADE_NPROC" --core=0 --fsize="$GRADE_FSIZE" --)
    else
        # as an ordinary user the limit counts all of the user's processes
        local mine
        mine=$(ps -U "$(id -u)" -L --no-headers 2>/dev/null | wc -l)
        SANDBOX_CMD+=(prlimit --nproc=$((mine + GRADE_NPROC)) --core=0 --fsize="$GRADE_FSIZE" --)
    fi
    if [ "${GRADE_SANDBOX:-}" = bwrap ]; then
        sandbox_bwrap_args
        SANDBOX_CMD+=("${BWRAP[@]}")
        # (root: bwrap keeps only what setpriv needs to become the sandbox uid)
        is_root && SANDBOX_CMD+=(--cap-add CAP_SETUID --cap-add CAP_SETGID)
        SANDBOX_CMD+=(--)
    fi
    SANDBOX_CMD+=("${drop[@]}")
}

# sandbox_parents DIR...: add to BWRAP the folders above each DIR, made
# readable (bwrap would make them mode 700 as root), none of their other
# files there; each once (BWRAP_MADE), none under /usr, /etc, /sys, /proc,
# /dev.
sandbox_parents() {
    local d h p
    for d in "$@"; do
        [ -n "$d" ] || continue
        p=""
        local IFS=/
        for h in ${d#/}; do
            p+=/$h
            [ "$p" = "$d" ] && break
            case $p/ in /usr/*|/etc/*|/sys/*|/proc/*|/dev/*) continue ;; esac
            [[ $BWRAP_MADE == *" $p "* ]] && continue
            BWRAP_MADE+="$p "
            BWRAP+=(--dir "$p")
        done
        unset IFS
    done
}

# sandbox_bwrap_args: set BWRAP to bubblewrap's words for one step: the
# namespaces, the system read-only, the GPU's devices, /tmp, /var/tmp and
# /dev/shm of the step's own (SANDBOX_SCRATCH/{tmp,var-tmp,shm}, else empty
# ones in memory), the instructor's folders hidden where a system folder
# holds them (GRADE_HIDE, colon-separated), then SANDBOX_RO and SANDBOX_RW.
sandbox_bwrap_args() {
    local d h
    # (what is the same for every step, made once: a door makes a sandbox
    # for every run)
    if [ -z "${BWRAP_CACHED:-}" ]; then
        [ -n "${GRADE_BWRAP:-}" ] || GRADE_BWRAP=$(command -v bwrap || echo bwrap)
        BWRAP_HEAD=("$GRADE_BWRAP" --die-with-parent --new-session --unshare-ipc --unshare-pid --unshare-net
                    --unshare-uts --unshare-cgroup-try)
        is_root || BWRAP_HEAD+=(--unshare-user)
        BWRAP_HEAD+=(--ro-bind /usr /usr --ro-bind /etc /etc --ro-bind-try /sys /sys --proc /proc --dev /dev)
        for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
            if [ -L "$d" ]; then BWRAP_HEAD+=(--symlink "$(readlink "$d")" "$d")
            elif [ -d "$d" ]; then BWRAP_HEAD+=(--ro-bind "$d" "$d"); fi
        done
        for d in /dev/nvidia* /run/nvidia-persistenced; do
            [ -e "$d" ] && BWRAP_HEAD+=(--dev-bind "$d" "$d")
        done
        sandbox_system_ro
        BWRAP=() BWRAP_MADE=" "
        local IFS=:
        # (their parents first, readable: bwrap would make /opt of /opt/torch
        # mode 700 as root, and the sandbox uid could not reach the venv)
        sandbox_parents $GRADE_SANDBOX_SYSTEM
        for d in $GRADE_SANDBOX_SYSTEM; do [ -n "$d" ] && BWRAP+=(--ro-bind "$d" "$d"); done
        for h in ${GRADE_HIDE:-}; do
            [ -d "$h" ] || continue
            for d in /usr /etc $GRADE_SANDBOX_SYSTEM; do
                [ -n "$d" ] && case $h/ in "$d"/*) BWRAP+=(--tmpfs "$h"); break ;; esac
            done
        done
        unset IFS
        BWRAP_SYSTEM=("${BWRAP[@]}") BWRAP_SYSTEM_MADE=$BWRAP_MADE BWRAP_CACHED=1
    fi
    BWRAP=("${BWRAP_HEAD[@]}")
    if [ -n "${SANDBOX_SCRATCH:-}" ]; then
        BWRAP+=(--bind "$SANDBOX_SCRATCH/tmp" /tmp --bind "$SANDBOX_SCRATCH/var-tmp" /var/tmp
                --bind "$SANDBOX_SCRATCH/shm" /dev/shm)
    else
        BWRAP+=(--tmpfs /tmp --tmpfs /var/tmp --tmpfs /dev/shm)
    fi
    BWRAP+=("${BWRAP_SYSTEM[@]}")
    BWRAP_MADE=$BWRAP_SYSTEM_MADE
    sandbox_parents "${SANDBOX_RO[@]}" "${SANDBOX_RW[@]}"
    for d in "${SANDBOX_RO[@]}"; do BWRAP+=(--ro-bind "$d" "$d"); done
    for d in "${SANDBOX_RW[@]}"; do BWRAP+=(--bind "$d" "$d"); done
}

# torch_python: the python3 lab 08 runs with, found as common/pylab.sh finds
# it (LAB_PYTHON, python3 on PATH, /usr/bin/python3: the first that has
# torch), as a path; nothing and status 1 where none has. A torch in a
# virtual environment (/opt/torch/.venv on a GPU node) is found by PATH.
torch_python() {
    local py
    for py in ${LAB_PYTHON:-} python3 /usr/bin/python3; do
        py=$(command -v "$py" 2>/dev/null) || continue
        "$py" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' 2>/dev/null &&
            { echo "$py"; return 0; }
    done
    return 1
}

# torch_bytecode DIR KIT LAB...: where one of LABS is a Python lab (lab 08)
# and the python3 it runs with (torch_python) has a torch with no compiled
# modules beside it (.pyc: a torch installed with pip --no-compile, or by a
# PYTHONDONTWRITEBYTECODE=1 environment), compile what `import torch` loads,
# once, as the grader, into DIR, and print DIR: every run of the lab would
# compile them again (measured on an H200 node: import torch 3.7 s, 1.8 s
# with them compiled). The lab's launcher (common/pylab.sh) reads them from
# LAB_PYCACHE=DIR; DIR is read-only to the sandbox, so that no submission
# can change what another's import runs. Nothing, status 1, otherwise.
torch_bytecode() {
    local dir=$1 kit=$2 id py=0 p
    shift 2
    for id in "$@"; do
        case $(kit_src "$kit" "$id") in *.py) py=1 ;; esac
    done
    [ "$py" = 1 ] && p=$(torch_python) || return 1
    # (a torch whose own .pyc is there: nothing to do)
    env -u PYTHONPYCACHEPREFIX "$p" -c '
import importlib.util as u, os, sys
s = u.find_spec("torch")
sys.exit(0 if s and s.origin and os.path.exists(u.cache_from_source(s.origin)) else 1)' 2>/dev/null && return 1
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    (cd / && env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$dir" \
        timeout -k 5 300 "$p" -c 'import torch
try: import torch.cuda.nvtx
except Exception: pass' >/dev/null 2>&1) || { rm -rf "$dir"; return 1; }
    chmod -R go-w,a+rX "$dir"
    echo "$dir"
}

# sandbox_system_ro: set (once) GRADE_SANDBOX_SYSTEM, the folders outside
# /usr and /etc a step must read, colon-separated: the CUDA toolkit's (nvcc's
# or CUDA_HOME), lab 08's python3 and its packages (torch_python), bats's
# (BATS), and the instructor's own (GRADE_SANDBOX_RO, colon-separated).
sandbox_system_ro() {
    [ -n "${GRADE_SANDBOX_SYSTEM+x}" ] && return 0
    local c=() p d
    p=$(command -v nvcc 2>/dev/null) && c+=("$(dirname "$(dirname "$(readlink -f "$p")")")")
    [ -n "${CUDA_HOME:-}" ] && c+=("$(readlink -f "$CUDA_HOME")")
    # (found here, not only in sandbox_base_env: this may run first, from
    # sandbox_choose, and keeps what it found)
    if p=$(torch_python); then
        c+=("$(dirname "$(dirname "$p")")")
        while IFS= read -r d; do c+=("$d"); done < <("$p" -c \
            'import sys, site; print(sys.prefix); print(sys.base_prefix); [print(p) for p in site.getsitepackages()]' 2>/dev/null)
    fi
    [ -n "${BATS:-}" ] && c+=("$(dirname "$(dirname "$(readlink -f "$BATS")")")")
    local IFS=:
    for d in ${GRADE_SANDBOX_RO:-}; do c+=("$d"); done
    unset IFS
    GRADE_SANDBOX_SYSTEM=$(for d in "${c[@]}"; do
        [ -d "$d" ] || continue
        d=$(readlink -f "$d")
        case $d/ in /|/usr/*|/etc/*|/proc/*|/sys/*|/dev/*|/tmp/*) continue ;; esac
        printf '%s\n' "$d"
    done | sort -u | paste -sd: -)
    export GRADE_SANDBOX_SYSTEM
}

# sandbox_choose UID: decide GRADE_SANDBOX (bwrap, uid or none) from
# GRADE_SANDBOX (auto, bwrap, uid, none; default auto), trying bubblewrap as
# the sandbox user UID would use it; print one line that says which sandbox
# runs the submissions. Fails closed: where bubblewrap cannot work and no
# weaker sandbox is named (GRADE_SANDBOX=uid as root, none otherwise),
# return 1 with a line that says why, and how to get bubblewrap.
sandbox_choose() {
    local uid=$1 want=${GRADE_SANDBOX:-auto} why=""
    sandbox_base_env     # (it finds lab 08's python3, whose folders the sandbox reads)
    case $want in
        auto|bwrap) ;;
        uid) is_root || { echo "GRADE_SANDBOX=uid needs root (two uids of its own for each job)"; return 1; }
             echo "sandbox: WEAKER: a uid of its own for each job's checker and another for its programs, no bubblewrap (GRADE_SANDBOX=uid): a program can read what every user may, and reach the network"
             return 0 ;;
        none) is_root && { echo "GRADE_SANDBOX=none: as root the submissions run as a uid of their own at least: say uid"; return 1; }
              echo "sandbox: NONE (GRADE_SANDBOX=none): the submissions run as $(id -un), unsandboxed, beside their checkers: a program can read and write whatever $(id -un) may, its own verdict included"
              return 0 ;;
        *) echo "GRADE_SANDBOX=$want: say auto, bwrap, uid or none"; return 1 ;;
    esac
    if ! command -v bwrap >/dev/null; then
        why="bubblewrap is not installed"
    else
        local o mine SANDBOX_ENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME=/) SANDBOX_RO=() SANDBOX_RW=() SANDBOX_SCRATCH=""
        GRADE_SANDBOX=bwrap sandbox_cmd "$uid" ""
        # it sees the system, and of root's home only the folders bound for
        # the system's tools (a python3 of pyenv's in /root/.pyenv): nothing
        # else of root's
        mine=$(tr ':' '\n' <<<"$GRADE_SANDBOX_SYSTEM" | sed -n 's|^/root/\([^/]*\).*|\1|p' | sort -u | paste -sd ' ')
        if ! o=$(cd / && timeout 60 "${SANDBOX_CMD[@]}" sh -c 'test -r /usr/bin/env || exit 1
                for f in $(ls -A /root 2>/dev/null); do case " $1 " in *" $f "*) ;; *) exit 1 ;; esac; done' _ "$mine" 2>&1); then
            why="bubblewrap cannot make a sandbox here ($(grep -m 1 . <<<"$o" || echo "it failed"))"
        fi
    fi
    if [ -z "$why" ]; then
        GRADE_SANDBOX=bwrap
        export GRADE_SANDBOX
        echo "sandbox: bubblewrap, as $(is_root && echo "a uid of its own for each job's checker and another for its programs" || id -un 2>/dev/null || id -u): each lab's checker sees its own folder and the kit read-only; each run of its program a folder of its own, the kit read-only and the GPU; nothing else (no network, no other process)"
        return 0
    fi
    if [ "$want" = bwrap ]; then
        echo "GRADE_SANDBOX=bwrap, but $why"
        return 1
    fi
    # (fail closed: what runs without bubblewrap is the instructor's choice)
    if is_root; then
        echo "$why: install it (apt-get install bubblewrap), or name a weaker sandbox: GRADE_SANDBOX=uid (a uid of its own for each job, no namespaces: a program can read what every user may, and reach the network; every report then says so)"
    else
        echo "$why: ask for it (apt-get install bubblewrap) and for unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor rule that lets bwrap make them), grade as root, or name no sandbox: GRADE_SANDBOX=none (the submissions then run as $(id -un), beside their checkers: every report says so)"
    fi
    return 1
}

# sandbox_scratch DIR UID: make DIR/{tmp,var-tmp,shm}, a step's /tmp,
# /var/tmp and /dev/shm under bubblewrap, the sandbox user's; set
# SANDBOX_SCRATCH to DIR (to nothing without bubblewrap).
sandbox_scratch() {
    SANDBOX_SCRATCH=""
    [ "${GRADE_SANDBOX:-}" = bwrap ] || return 0
    if is_root; then
        install -d -m 1777 -o "$2" -g "$2" "$1/tmp" "$1/var-tmp" "$1/shm"
    else
        install -d -m 1777 "$1/tmp" "$1/var-tmp" "$1/shm"
    fi
    SANDBOX_SCRATCH=$1
}

# gpu_groups: the groups (other than root's) that own the GPU's device files,
# comma-separated: the sandbox user's only groups, where the devices are not
# open to everybody.
gpu_groups() {
    stat -c %g /dev/nvidia* /dev/dri/* 2>/dev/null | sort -un | grep -vx 0 | paste -sd, -
}

# visible_gpus: how many GPUs the lab programs will see: nvidia-smi's count,
# or as many as CUDA_VISIBLE_DEVICES names where it is set (nvidia-smi does
# not heed it); 0 without a GPU. Lab 09's checks that need two GPUs skip
# with fewer, and check-verdicts reads this number (gpus= in each meta).
visible_gpus() {
    local n
    n=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -c . || true)
    if [ -n "${CUDA_VISIBLE_DEVICES+x}" ] && [ "${n:-0}" -gt 0 ]; then
        n=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c '[^[:space:]]' || true)
    fi
    echo "${n:-0}"
}

# sandbox_base_env: set SANDBOX_BASE to the environment of everything the
# sandbox runs: nothing of the grader's own, only what the build and the
# checker need (grade-one adds HOME and TMPDIR per step). PATH: the folder
# of the grader's nvcc, then the system's folders.
sandbox_base_env() {
    local nvcc v
    nvcc=$(command -v nvcc 2>/dev/null || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
    SANDBOX_BASE=(PATH="$(dirname "$nvcc"):/usr/local/bin:/usr/bin:/bin"
                  LANG=C.UTF-8 NO_COLOR=1 TERM=dumb
                  RUN_TIMEOUT="${RUN_TIMEOUT:-60}" BUILD_TIMEOUT="${BUILD_TIMEOUT:-180}")
    # a Python lab (08) runs with the grader's python3 that has torch: the
    # sandbox's PATH has the system's python3 only (LAB_PYTHON: common/pylab.sh)
    if [ -z "${LAB_PYTHON:-}" ] && v=$(torch_python); then
        LAB_PYTHON=$v
        export LAB_PYTHON
    fi
    for v in CUDA_HOME CUDA_ARCH CUDA_VISIBLE_DEVICES LAB_SEED BATS NVTX LAB_PYTHON; do
        [ -n "${!v+x}" ] && SANDBOX_BASE+=("$v=${!v}")
    done
    return 0
}

# sandbox_preflight UID DIR KIT [KINDS]: can the sandbox user UID do what
# grading asks of it, wherever the kit's own folder is? In DIR (made here
# as grade-one makes a job's folder), with a copy of the prepared KIT, it
# reads and runs the kit's checker and tools, runs a test with bats (found
# as run-checks finds it) and compiles with nvcc; python3 too when KINDS (the
# kinds of submission in the class) has zip, git when it has bundle, tar
# when it has tar; and imports torch with LAB_PYTHON when the kit has a
# Python lab and the grader found such a python3 (lab 08). Not root:
# the same, as the grading user. On the first thing it cannot do, prints
# one line (what, and what to do) and returns 1.
sandbox_preflight() {
    local uid=$1 dir=$2 kit=$3 kinds=${4:-} out rc=0
    rm -rf "$dir"
    mkdir -p "$dir/home"
    if is_root; then chown "0:$uid" "$dir" && chmod 750 "$dir" && chown "$uid:$uid" "$dir/home"; fi
    cp -a "$kit" "$dir/kit" || { echo "the kit could not be copied to $dir"; return 1; }
    printf '@test "bats runs a test here" {\n    true\n}\n' >"$dir/home/preflight.bats"
    sandbox_base_env
    local SANDBOX_ENV=("${SANDBOX_BASE[@]}" HOME="$dir/home" TMPDIR="$dir/home")
    local SANDBOX_RO=("$dir/kit") SANDBOX_RW=("$dir/home") SANDBOX_SCRATCH
    sandbox_scratch "$dir/outside" "$uid"
    sandbox_cmd "$uid" ""
    out=$(cd "$dir/home" && timeout -k 5 120 "${SANDBOX_CMD[@]}" bash -c "$SANDBOX_PREFLIGHT" preflight \
        "$dir/kit" "$kinds" 2>&1 </dev/null) || rc=$?
    [ "$rc" = 0 ] && return 0
    echo "${out:-its check ended with exit status $rc}" | tail -n 1
    return 1
}
SANDBOX_PREFLIGHT='
k=$1 kinds=$2
no() { echo "$*"; exit 1; }
cd "$k" 2>/dev/null || no "cannot enter its copy of the kit ($k): set GRADE_WORK to a folder every user can enter"
for t in checker/run-checks checker/lib/checks.bash common/lab.mk common/lab.h; do
    [ -r "$t" ] || no "cannot read the kit'"'"'s $t in its copy ($k)"
done
[ -x checker/run-checks ] || no "cannot run the kit'"'"'s checker/run-checks"
for t in checker/trace/streamtrace checker/verify/digests; do
    [ -e "$t" ] || continue
    "$t" >/dev/null 2>&1 </dev/null
    case $? in 126|127) no "cannot run the kit'"'"'s $t (built by the grader): rebuild the tools with a toolkit every user can read (make tools)" ;; esac
done
for t in checker/*/*.so; do
    [ -e "$t" ] && { [ -r "$t" ] || no "cannot read the kit'"'"'s $t"; }
done
b=${BATS:-}
[ -z "$b" ] && [ -x checker/vendor/node_modules/bats/bin/bats ] && b=$PWD/checker/vendor/node_modules/bats/bin/bats
[ -z "$b" ] && b=$(command -v bats)
[ -n "$b" ] || no "finds no bats (PATH=$PATH): install bats for every user (apt-get install bats), or make deps"
fix="install bats where every user can run it (apt-get install bats, or make deps: the kit'"'"'s own copy travels with it), and set BATS to no folder of yours"
[ -x "$b" ] || no "cannot run bats ($b: not there, or in a folder closed to it): $fix"
o=$(cd "$HOME" && "$b" --tap preflight.bats 2>&1) && [[ $o == *"ok 1 "* ]] ||
    no "cannot run a test with bats ($b: $(grep -v "^1\.\.1" <<<"$o" | grep -m 1 . || echo "no test ran")): $fix"
t=$(command -v nvcc) || { [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && t=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc; } ||
    no "finds no nvcc (PATH=$PATH): put the CUDA toolkit where every user can run it, or set CUDA_HOME"
o=$("$t" --version 2>&1) || no "cannot run nvcc ($t): $(head -n 1 <<<"$o"): put the CUDA toolkit where every user can run it, or set CUDA_HOME to such a copy"
printf "#include <cuda_runtime.h>\nint main(void) { return cudaSuccess; }\n" >"$HOME/preflight.cu"
o=$(cd "$HOME" && "$t" -c -o preflight.o preflight.cu 2>&1) ||
    no "cannot compile with nvcc ($t): $(grep -m 1 . <<<"$o"): its headers and host compiler must be readable by every user"
if [ -n "${LAB_PYTHON:-}" ] && ls labs/*/*.py >/dev/null 2>&1; then
    o=$("$LAB_PYTHON" -c "import torch" 2>&1) ||
        no "cannot import torch with LAB_PYTHON=$LAB_PYTHON ($(tail -n 1 <<<"$o")): lab 08 would be not graded for every student: put a python3 with torch where every user can run it and set LAB_PYTHON to it, or grade the other labs (--labs)"
fi
if [[ " $kinds " == *" tar "* ]]; then
    o=$(tar --version 2>&1) || no "cannot run tar, which unpacks the tarballs: $(head -n 1 <<<"$o")"
fi
if [[ " $kinds " == *" zip "* ]]; then
    o=$(python3 -c "import zipfile" 2>&1) || no "cannot run python3, which unpacks the .zip submissions: $(head -n 1 <<<"$o")"
fi
if [[ " $kinds " == *" bundle "* ]]; then
    o=$(git --version 2>&1) || no "cannot run git, which unpacks the git bundles: $(head -n 1 <<<"$o")"
fi
exit 0
'

# grader_tools_ok: the tools the grader runs are here; else one line on
# stdout, what is missing, and status 1 (grade and slurm/submit stop there).
grader_tools_ok() {
    local tool
    for tool in timeout prlimit python3 make; do
        command -v "$tool" >/dev/null || { echo "$tool not found"; return 1; }
    done
    if is_root; then
        command -v setpriv >/dev/null || { echo "setpriv (util-linux) not found"; return 1; }
    fi
    return 0
}

# sandbox_user_ok UID DIR KIT KINDS: sandbox_preflight, its failure said as
# a sentence with who could not ("the sandbox user (uid N) cannot ...", or
# the grading user's name); status 1 then.
sandbox_user_ok() {
    local why who
    why=$(sandbox_preflight "$@") && return 0
    if is_root; then who="the sandbox user (uid $1)"; else who="$(id -un)"; fi
    echo "$who $why"
    return 1
}

# sandbox_gpu_ok UID: the sandbox user can use the GPU (nvidia-smi runs as it).
sandbox_gpu_ok() {
    is_root || return 0
    local SANDBOX_ENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME=/)
    sandbox_cmd "$1" ""
    timeout 60 "${SANDBOX_CMD[@]}" nvidia-smi -L >/dev/null 2>&1
}

# ------------------------------------------------------------ the door

# A lab's checker never runs the student's program itself. It asks the
# grader, through a door (door_run in checker/lib/checks.bash), and the
# grader runs it in a sandbox of its own: another uid (as root), its own
# namespaces (bubblewrap), a folder of its own to write in, and nothing of
# the checker's (its TAP, its runs, its steps), which stays where the
# program cannot reach it. A run is over when its own process ends: under
# bubblewrap its PID namespace ends with it, and whatever it left running
# with it (as root without bubblewrap: every process of its uid is
# killed); only then does the checker get its output and files. So a
# program can write nothing the grader reads, now or later.

# door_open DIR UID: make the door DIR for a checker that runs as UID (root;
# "-" otherwise): DIR/in (a FIFO the checker writes its requests to),
# DIR/back (a FIFO it reads the answers from), DIR/runs/ (the runs' files,
# the grader's), DIR/outside (what the runs left in their /tmp). As root
# the FIFOs are the checker's alone: the runs, in its group (DOOR_GROUP)
# to reach their own folders, can neither ask nor answer.
door_open() {
    local x=$1 uid=$2
    rm -rf "$x"
    mkdir -p "$x/runs"
    mkfifo "$x/in" "$x/back"
    : >"$x/outside"
    if is_root; then
        chown "0:$uid" "$x"
        chmod 750 "$x"
        chown "$uid:0" "$x/in" "$x/back"
        chmod 600 "$x/in" "$x/back"
        chmod 755 "$x/runs"
    fi
}

# door_serve DIR: make the runs asked for through the door DIR, one at a
# time, until killed. Each run: the request's words (@OUT@ is the run's own
# folder, DIR/runs/N/w) in the sandbox (sandbox_cmd) as DOOR_UID on
# DOOR_CPUS, with DOOR_ENV, the request's variables, HOME and TMPDIR its
# folder, reading DOOR_RO, writing only its folder; its output to
# DIR/runs/N/out and err; under RUN_TIMEOUT. Where it exits 77, its
# variables leave it a GPU, and DOOR_PROBE is a program (the grader's
# probe: probe.cu), the probe runs as the run did: what it prints where it
# finds a GPU is the answer's PROBE. Answers "N RC SECONDS PROBE".
door_serve() {
    local x=$1 n=0 ne nc i f e envs cmd r w rc t0 probe
    # (TERM, from grade-one once the checker has ended: the run it may
    # still be making ends too)
    DOOR_PID=""
    trap '[ -z "$DOOR_PID" ] || kill -KILL -- "-$DOOR_PID" 2>/dev/null; exit 0' TERM
    exec 3<>"$x/in"
    while :; do
        IFS= read -r -d '' ne <&3 || return 0
        IFS= read -r -d '' nc <&3 || return 0
        # (a request the checker did not write whole: answered, never run)
        if ! [[ $ne =~ ^[0-9]{1,4}$ && $nc =~ ^[1-9][0-9]{0,3}$ ]]; then
            echo "bad request" >"$x/back"
            continue
        fi
        n=$((n + 1)) r="$x/runs/$n"
        w="$r/w"
        envs=() cmd=()
        for ((i = 0; i < ne; i++)); do
            IFS= read -r -d '' e <&3 || return 0
            [[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] && envs+=("$e")
        done
        for ((i = 0; i < nc; i++)); do
            IFS= read -r -d '' f <&3 || return 0
            cmd+=("${f//@OUT@/$w}")
        done
        door_once "$r" "${envs[@]}" -- "${cmd[@]}"
        rc=$DOOR_RC t0=$DOOR_SECS probe=-
        if [ "$rc" = 77 ] && [ -n "${DOOR_PROBE:-}" ] && door_sees_gpu "${DOOR_ENV[@]}" "${envs[@]}"; then
            door_once "$r/probe" "${envs[@]}" -- "$DOOR_PROBE"
            [ "$DOOR_RC" = 0 ] && probe=$(head -n 1 "$r/probe/out" | tr -cd '[:print:]' | head -c 200)
            [ -n "$probe" ] || probe=-
        fi
        printf '%s %s %s %s\n' "$n" "$rc" "$t0" "$probe" >"$x/back"
    done
}

# door_once DIR [VAR=VALUE...] -- CMD...: one run of door_serve's, in DIR
# (its folder of its own DIR/w, made): DIR/out, DIR/err; DOOR_RC its exit
# status, DOOR_SECS its seconds. What it left in its /tmp goes to
# DOOR_OUTSIDE. Whatever it started is gone when this returns.
door_once() {
    local r=$1 e=() pid t0=$SECONDS
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do e+=("$1"); shift; done
    shift
    # (the checker, another uid as root, reads what the run leaves there:
    # a run that closes its own folder to it fails its own checks)
    if is_root; then
        install -d -m 755 -o "$DOOR_UID" -g "$DOOR_UID" "$r/w"
    else
        install -d -m 755 "$r/w"
    fi
    local SANDBOX_ENV=("${DOOR_ENV[@]}" HOME="$r/w" TMPDIR="$r/w" "${e[@]}") SANDBOX_GROUPS=${DOOR_GROUP:-}
    local SANDBOX_RO=("${DOOR_RO[@]}") SANDBOX_RW=("$r/w") SANDBOX_SCRATCH
    sandbox_scratch "$r/scratch" "$DOOR_UID"
    sandbox_cmd "$DOOR_UID" "${DOOR_CPUS:-}"
    DOOR_RC=0
    # (timeout leads a process group of its own: without bubblewrap's PID
    # namespace, what the program left in it is killed with it)
    ( cd "$r/w" && exec timeout -k 5 "${RUN_TIMEOUT:-60}" "${SANDBOX_CMD[@]}" "$@" ) \
        >"$r/out" 2>"$r/err" </dev/null 3>&- &
    pid=$! DOOR_PID=$!
    wait "$pid" || DOOR_RC=$?
    kill -KILL -- "-$pid" 2>/dev/null
    DOOR_PID=""
    # (under bubblewrap the run's PID namespace ends with it, and all in
    # it; a fork bomb's thousands take a while to go, and until they have,
    # the next run's first fork fails on the process limit: gone, then on)
    sandbox_gone "$DOOR_UID"
    DOOR_SECS=$((SECONDS - t0))
    outside_files "$DOOR_UID" "${GRADE_WORK_ROOT:-/nonexistent}" >>"${DOOR_OUTSIDE:-/dev/null}"
    return 0
}

# probe_build DIR KIT: build the grader's probe (probe.cu, with KIT's
# common/) as DIR/probe, readable and runnable by every user; print its
# path. The compiler's words on stderr where it fails (status 1).
probe_build() {
    local dir=$1 kit=$2 nvcc
    nvcc=$(command -v nvcc 2>/dev/null || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    "$nvcc" -O2 ${CUDA_ARCH:+-arch=sm_$CUDA_ARCH} -I"$kit/common" \
        -o "$dir/probe" "$(dirname "${BASH_SOURCE[0]}")/probe.cu" >&2 || return 1
    chmod 755 "$dir" "$dir/probe"
    echo "$dir/probe"
}

# door_sees_gpu [VAR=VALUE...]: a run with these variables may see a GPU:
# they do not hide every one (CUDA_VISIBLE_DEVICES empty, or -1).
door_sees_gpu() {
    local e v=unset
    for e in "$@"; do
        case $e in CUDA_VISIBLE_DEVICES=*) v=${e#*=} ;; esac
    done
    [ "$v" = unset ] && return 0
    v=${v//[[:space:]]/}
    [ -n "$v" ] && [ "${v#-1}" = "$v" ]
}

# sandbox_kill UID: end every process of the sandbox user UID (root only):
# whatever a program left running (a daemon, a fork bomb's children).
sandbox_kill() {
    is_root || return 0
    # (a sandbox uid only: never root's, never a number that is none)
    [[ $1 =~ ^[1-9][0-9]*$ ]] || return 0
    setpriv --reuid="$1" --regid="$1" --clear-groups -- kill -KILL -1 2>/dev/null
    return 0
}

# sandbox_gone UID: as sandbox_kill, and then wait (10 s at most) until no
# process of UID is left, its zombies reaped too: the process limit counts
# them, and the next run of that uid starts from none (root only).
sandbox_gone() {
    is_root || return 0
    [[ $1 =~ ^[1-9][0-9]*$ ]] || return 0
    local i
    for ((i = 0; i < 100; i++)); do
        # (grep -s: a process gone between the list and its read is no error)
        grep -qs $'^Uid:\t'"$1"$'\t' /proc/[0-9]*/status || return 0
        sandbox_kill "$1"
        sleep 0.1
    done
    return 0
}

# claim_uids N [FROM]: claim N sandbox uids for this grading run, from
# GRADE_UID + FROM (default 1) up: each free of accounts and processes, and
# locked (flock on /tmp/cuda-stream-labs-grade.uids/UID.lock, held by this
# shell until it exits), so that two grading runs on one machine (two make
# test, a Slurm node running several tasks) never share a sandbox user. Sets
# CLAIMED_UIDS, and GRADE_LOCK_FDS (grade-one closes them: the sandbox must
# not hold the locks). Not root: no claim, CLAIMED_UIDS is N times "-".
claim_uids() {
    local n=$1 uid=$((GRADE_UID + ${2:-1})) last d=/tmp/cuda-stream-labs-grade.uids fd
    CLAIMED_UIDS=()
    if ! is_root; then
        while [ ${#CLAIMED_UIDS[@]} -lt "$n" ]; do CLAIMED_UIDS+=(-); done
        return 0
    fi
    last=$((uid + 999))
    mkdir -p "$d" && chmod 755 "$d"
    while [ ${#CLAIMED_UIDS[@]} -lt "$n" ]; do
        [ "$uid" -le "$last" ] || { echo "grade: no free sandbox uid from $((last - 999)) to $last" >&2; return 1; }
        exec {fd}>"$d/$uid.lock"
        if flock -n "$fd" && sandbox_uid_ok "$uid" 2>/dev/null; then
            CLAIMED_UIDS+=("$uid")
            GRADE_LOCK_FDS="${GRADE_LOCK_FDS:-} $fd"
        else
            exec {fd}>&-
        fi
        uid=$((uid + 1))
    done
    export GRADE_LOCK_FDS
}

# sandbox_uid_ok UID: UID may be a sandbox user: it has no account, and no
# process runs as it (another grading run). Says why not on stderr.
sandbox_uid_ok() {
    is_root || return 0
    local who
    if who=$(getent passwd "$1"); then
        echo "grade: uid $1 is the account ${who%%:*}: set GRADE_UID to a free range" >&2
        return 1
    fi
    if ps -U "$1" --no-headers >/dev/null 2>&1; then
        echo "grade: uid $1 already runs processes (another grading run?): set GRADE_UID to another range" >&2
        return 1
    fi
}

# outside_files UID [SKIP]: files the sandbox user left in the places every
# user may write to (/tmp, /var/tmp, /dev/shm), SKIP (the grading folders)
# aside: listed, then removed (root only). Under bubblewrap those places
# were the step's own (SANDBOX_SCRATCH): what is in them, by the name the
# program gave it, and the scratch folder removed.
outside_files() {
    local uid=$1 skip=${2:-/nonexistent} d
    if [ -n "${SANDBOX_SCRATCH:-}" ]; then
        # (one find for the three: a door makes a scratch for every run)
        local f n=0
        while IFS= read -r f && [ "$n" -lt 50 ]; do
            n=$((n + 1))
            case $f in
                tmp/*) echo "/tmp/${f#tmp/}" ;;
                var-tmp/*) echo "/var/tmp/${f#var-tmp/}" ;;
                shm/*) echo "/dev/shm/${f#shm/}" ;;
            esac
        done < <(find "$SANDBOX_SCRATCH" -mindepth 2 ! -type d -printf '%P\n' 2>/dev/null)
        rm -rf "$SANDBOX_SCRATCH"
        return 0
    fi
    is_root || return 0
    for d in /tmp /var/tmp /dev/shm; do
        [ -d "$d" ] && find "$d" -xdev -mindepth 1 -path "$skip" -prune -o -user "$uid" -print 2>/dev/null
    done | head -n 50
    for d in /tmp /var/tmp /dev/shm; do
        [ -d "$d" ] && find "$d" -xdev -mindepth 1 -path "$skip" -prune -o -user "$uid" -print0 2>/dev/null |
            sort -rz | xargs -0 -r rm -rf -- 2>/dev/null
    done
    return 0
}

# cpus_for SLOT JOBS: the cores job SLOT (1..JOBS) is pinned to ("" when
# GRADE_PIN=0 or there are fewer cores than jobs): the cores shared out in
# turn, every core a job's (24 jobs on 32 cores: one or two each).
cpus_for() {
    local slot=$1 jobs=$2 n from to
    [ "${GRADE_PIN:-1}" = 1 ] || return 0
    n=$(nproc)
    [ "$jobs" -gt 1 ] && [ "$n" -ge "$jobs" ] || return 0
    from=$(( (slot - 1) * n / jobs )) to=$(( slot * n / jobs - 1 ))
    if [ "$from" = "$to" ]; then echo "$from"; else echo "$from-$to"; fi
}

# ------------------------------------------------------------ the node

# cpu_count LIST: how many cores a taskset list names ("0-3,8" is 5); the
# machine's (nproc) for "".
cpu_count() {
    [ -n "${1:-}" ] || { nproc; return; }
    tr ',' '\n' <<<"$1" | awk -F- '{ n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n + 0 }'
}

# gpu_list: the GPUs the grader may hand out, one a line, as
# CUDA_VISIBLE_DEVICES names them: its entries where it is set, else 0 to
# N-1 for the N GPUs nvidia-smi sees; nothing without a GPU.
gpu_list() {
    local n
    n=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -c . || true)
    [ "${n:-0}" -gt 0 ] || return 0
    if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
        tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | sed 's/[[:space:]]//g' | grep .
    else
        seq 0 $((n - 1))
    fi
    return 0
}

# job_gpus SLOT GPU...: "OWN ALL": the GPU job SLOT (1..JOBS) runs its
# programs on, the GPUs taken in turn (job 1 the first, job 2 the second,
# ...); and every GPU, its own first, comma-separated, for a lab whose checks
# need two or more (lab 09). "job_gpus 2 0 1" is "1 1,0". Every job sees a
# GPU of its own share and lab 09 never waits for a GPU to be free: the GPUs
# are shared, as the timing checks allow (checker/README.md).
job_gpus() {
    local slot=$1 n k ids all
    shift
    n=$# ids=("$@")
    k=$(((slot - 1) % n))
    all=$(printf '%s\n' "${ids[@]:$k}" "${ids[@]:0:$k}" | paste -sd, -)
    echo "${ids[$k]} $all"
}

# node_jobs GPUS CORES MEM_KIB: how many labs to grade at once on a node
# (grade's JOBS when none is given): GRADE_JOBS_PER_GPU (16) a GPU, at most
# one per core (a job runs one lab at a time: its build, then its program
# under the tracer and the checks) and one per 4 GiB of memory (nvcc, lab
# 08's torch); without a GPU one per two cores; at least 1.
node_jobs() {
    local gpus=$1 cores=$2 mem=$3 per=${GRADE_JOBS_PER_GPU:-16} j
    j=$cores
    [ "$gpus" -gt 0 ] || j=$((cores / 2))
    [ "$gpus" -gt 0 ] && [ $((gpus * per)) -lt "$j" ] && j=$((gpus * per))
    [ $((mem / 4194304)) -lt "$j" ] && j=$((mem / 4194304))
    [ "$j" -ge 1 ] || j=1
    echo "$j"
}

# compiler_id: one line for the compiler a build uses: nvcc's path and
# version, the host compiler's, python3's (lab 08's build compiles its
# source), CUDA_ARCH and NVTX. Two builds with the same source, kit and
# compiler_id make the same program (the build cache, grade-one).
compiler_id() {
    local nvcc
    nvcc=$(command -v nvcc 2>/dev/null || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
    { readlink -f "$nvcc"; "$nvcc" --version 2>&1
      for c in c++ g++ gcc; do command -v "$c" >/dev/null && { "$c" --version 2>&1 | head -n 1; break; }; done
      python3 --version 2>&1
      echo "CUDA_ARCH=${CUDA_ARCH-unset} NVTX=${NVTX-unset}"; } | sha256sum | cut -c 1-16
}

# gpu_slots_take DIR N DEVS: hold one of N slots of each GPU in DEVS (the
# job's CUDA_VISIBLE_DEVICES: 0, or 0,1 for a lab that needs two), waiting
# while all N are held, and taking the GPUs in one order, so that two
# checkers that need the same two cannot wait on each other. A slot is a
# lock file of the grader's (DIR/gpuG.K, flock), outside every sandbox: no
# submission can take or hold one. Sets GPU_SLOT_FDS, the descriptors to
# close in what runs while they are held, and to give back with
# gpu_slots_give. (GRADE_GPU_SLOTS: at most N checkers at once on a GPU;
# checker/grade/README.md, "Choosing JOBS".)
gpu_slots_take() {
    local dir=$1 n=$2 g k fd got
    GPU_SLOT_FDS=()
    # (the grader's alone: a sandbox's uid cannot even open a slot)
    [ -d "$dir" ] || mkdir -p -m 700 "$dir" 2>/dev/null || [ -d "$dir" ] || return 1
    for g in $(tr ',' '\n' <<<"$3" | tr -c 'A-Za-z0-9.\n-' '_' | sort -u); do
        got=""
        while [ -z "$got" ]; do
            for ((k = 1; k <= n; k++)); do
                exec {fd}>>"$dir/gpu$g.$k" || return 1
                if flock -n "$fd"; then got=$fd; break; fi
                exec {fd}>&-
            done
            [ -n "$got" ] || sleep 0.05
        done
        GPU_SLOT_FDS+=("$got")
    done
}

# gpu_slots_give: give back the slots gpu_slots_take holds.
gpu_slots_give() {
    local fd
    for fd in "${GPU_SLOT_FDS[@]}"; do exec {fd}>&-; done
    GPU_SLOT_FDS=()
}

# grade_now: the time now in microseconds. grade_step FILE STEP NAME T0:
# append "STEP<TAB>NAME<TAB>SECONDS" (since T0, grade_now's) to FILE (-:
# print it), the
# lines checks.bash's step_done writes (make bench-grade sums them).
grade_now() { local t=${EPOCHREALTIME:-$(date +%s.%N)}; t=${t//[.,]/}; echo "${t:0:16}"; }
grade_step() {
    local t d
    t=$(grade_now)
    d=$((10#$t - 10#$4))
    if [ "$1" = - ]; then
        printf '%s\t%s\t%d.%06d\n' "$2" "$3" $((d / 1000000)) $((d % 1000000))
    else
        printf '%s\t%s\t%d.%06d\n' "$2" "$3" $((d / 1000000)) $((d % 1000000)) >>"$1"
    fi
}
