# checker/grade/lib.bash -- what the grading scripts share: the labs of a kit,
# the submissions of a class, the pristine kit, and the sandbox a student's
# program runs in. Sourced by grade, grade-one, handout and slurm/*.
# README.md (in this folder) says how grading works and why.

# ------------------------------------------------------------ the kit

# kit_labs KIT: the lab ids of a kit, one a line (its checker/NN-name.bats).
kit_labs() {
    local f
    for f in "$1"/checker/[0-9][0-9]-*.bats; do
        [ -f "$f" ] && basename "$f" .bats
    done
}

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
    local kit=$1 want id found
    if [ -z "${2:-}" ]; then kit_labs "$kit"; return 0; fi
    for want in ${2//,/ }; do
        found=""
        for id in $(kit_labs "$kit"); do
            case $id in "$want"|"$want"-*) found=$id ;; esac
        done
        [ -n "$found" ] || { echo "no lab matches '$want'" >&2; return 1; }
        echo "$found"
    done
}

# What of checker/ is the kit's own testing, never part of a graded or a
# handed-out kit: the mutants (they hold answer lines), the self-tests and
# their recordings, the load program, and this folder.
KIT_ONLY="mutants tests load grade"

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

# student_name PATH: the entry's name without its ending, in characters safe
# for a file name and a CSV cell.
student_name() {
    local n
    n=$(basename "$1")
    n=${n%.tar.gz} n=${n%.tgz} n=${n%.tar.xz} n=${n%.txz} n=${n%.tar.bz2} n=${n%.tbz2}
    n=${n%.tar} n=${n%.zip} n=${n%.bundle}
    n=$(printf '%s' "$n" | tr -c 'A-Za-z0-9._@+-' '_')
    case $n in .*|"") n="_$n" ;; esac
    printf '%s\n' "$n"
}

# list_submissions DIR: "NAME<TAB>KIND<TAB>PATH" for every submission in DIR,
# sorted by name; two entries with the same name get -2, -3. What is not a
# submission goes to stderr as "ignored: ...".
list_submissions() {
    local dir=$1 p kind name seen=" " n
    for p in "$dir"/* ; do
        [ -e "$p" ] || continue
        kind=$(submission_kind "$p")
        if [ -z "$kind" ]; then
            echo "ignored: $p (not a folder, tarball, zip or git bundle)" >&2
            continue
        fi
        name=$(student_name "$p")
        n=$name
        local i=2
        while [[ $seen == *" $n "* ]]; do n=$name-$i; i=$((i + 1)); done
        seen+="$n "
        printf '%s\t%s\t%s\n' "$n" "$kind" "$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"
    done | sort -t $'\t' -k1,1
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

is_root() { [ "$(id -u)" = 0 ]; }

# sandbox_cmd UID CPUS: set SANDBOX_CMD to the words that run a command as
# UID (when root; else as the caller) with a clean environment (SANDBOX_ENV),
# a process limit, no core files, a file size limit, and pinned to CPUS
# ("" = any), so that a fork bomb burns its own job's cores:
#   sandbox_cmd 64001 0-1; timeout 60 "${SANDBOX_CMD[@]}" make ...
sandbox_cmd() {
    local uid=$1 cpus=$2
    SANDBOX_CMD=(env -i "${SANDBOX_ENV[@]}")
    [ -n "$cpus" ] && SANDBOX_CMD+=(taskset -c "$cpus")
    if is_root; then
        local groups=(--clear-groups) g
        g=$(gpu_groups)
        [ -n "$g" ] && groups=(--groups="$g")
        SANDBOX_CMD+=(prlimit --nproc="$GRADE_NPROC" --core=0 --fsize="$GRADE_FSIZE" --
                      setpriv --reuid="$uid" --regid="$uid" "${groups[@]}" --no-new-privs --)
    else
        # as an ordinary user the limit counts all of the user's processes
        local mine
        mine=$(ps -U "$(id -u)" -L --no-headers 2>/dev/null | wc -l)
        SANDBOX_CMD+=(prlimit --nproc=$((mine + GRADE_NPROC)) --core=0 --fsize="$GRADE_FSIZE" --)
    fi
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
    if [ -z "${LAB_PYTHON:-}" ] && v=$(command -v python3 2>/dev/null) &&
        "$v" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' 2>/dev/null; then
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

# sandbox_gpu_ok UID: the sandbox user can use the GPU (nvidia-smi runs as it).
sandbox_gpu_ok() {
    is_root || return 0
    local SANDBOX_ENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME=/)
    sandbox_cmd "$1" ""
    timeout 60 "${SANDBOX_CMD[@]}" nvidia-smi -L >/dev/null 2>&1
}

# sandbox_kill UID: end every process of the sandbox user UID (root only):
# whatever a program left running (a daemon, a fork bomb's children).
sandbox_kill() {
    is_root || return 0
    setpriv --reuid="$1" --regid="$1" --clear-groups -- kill -KILL -1 2>/dev/null
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
# aside: listed, then removed (root only).
outside_files() {
    is_root || return 0
    local uid=$1 skip=${2:-/nonexistent} d
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
# GRADE_PIN=0 or there are fewer cores than jobs).
cpus_for() {
    local slot=$1 jobs=$2 n per from
    [ "${GRADE_PIN:-1}" = 1 ] || return 0
    n=$(nproc)
    [ "$jobs" -gt 1 ] && [ "$n" -ge "$jobs" ] || return 0
    per=$((n / jobs)) from=$(( (slot - 1) * per ))
    echo "$from-$((from + per - 1))"
}
