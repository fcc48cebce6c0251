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

# kit_src KIT ID: the file a student edits in lab ID (SRC in labs/ID/Makefile,
# else PROG.cu).
kit_src() {
    local s
    s=$(sed -n 's/^SRC *:= *//p' "$1/labs/$2/Makefile")
    echo "${s:-$(kit_prog "$1" "$2").cu}"
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
# .tar.bz2, .tbz2), a .zip (where unzip is installed) or a git bundle
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

# best_file ROOT ID PROG [EXT]: of the files named PROG.EXT (EXT default cu)
# under ROOT, the one that is lab ID's: labs/ID/PROG.EXT first, then
# ID/PROG.EXT, then any, the shortest path first. Regular files only (no
# links), at most 1 MiB.
best_file() {
    local root=$1 id=$2 prog=$3 ext=${4:-cu}
    find "$root" -name .git -prune -o -type f -name "$prog.$ext" -size -1025k -print 2>/dev/null |
        awk -v id="$id" -v prog="$prog" -v ext="$ext" -v root="$root/" '
            { rel = substr($0, length(root) + 1)
              rank = 2
              if (rel == "labs/" id "/" prog "." ext || rel ~ ("/labs/" id "/" prog "\\." ext "$")) rank = 0
              else if (rel == id "/" prog "." ext || rel ~ ("/" id "/" prog "\\." ext "$")) rank = 1
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
