# checker/tests/lib.bash -- what the kit's own tests (checker/tests/*.bats,
# their runner checker/tests/run and the GPU scripts beside them) share.

KIT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# One folder per `make test`, shared by its .bats files (checker/tests/run sets
# it; a .bats file run alone uses its own): every run builds afresh.
KIT_BUILD="${KIT_BUILD:-${BATS_RUN_TMPDIR:-/tmp}/kit}"

# kit_helpers: the folder that holds bats-support and bats-assert -- the
# kit's pinned copies (make deps), else the machine's ($BATS_LIB_PATH, by
# default /usr/lib/bats, where Debian's packages put them). Nothing if none.
# (tests/run asks it before the tests; the Makefile's bats rule, too.)
kit_helpers() {
    local d dirs
    IFS=: read -r -a dirs <<<"${BATS_LIB_PATH:-/usr/lib/bats}"
    for d in "$KIT_ROOT/checker/vendor/node_modules" "${dirs[@]}"; do
        if [ -f "$d/bats-support/load.bash" ] && [ -f "$d/bats-assert/load.bash" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

# Loaded by bats (not by a script that sources this file for its helpers).
if [ -n "${BATS_TEST_FILENAME:-}" ]; then
    if ! kit_lib_dir=$(kit_helpers); then
        echo "bats-support and bats-assert not found: make deps, or apt-get install bats-assert bats-support" >&2
        return 1
    fi
    load "$kit_lib_dir/bats-support/load.bash"
    load "$kit_lib_dir/bats-assert/load.bash"
fi

# kit_full: the whole self-test is asked for (make test-all, or any GPU
# node), not the quick run that make test is without a GPU. A .bats file run
# on its own is whole.
kit_full() { [ "${KIT_FULL:-1}" = 1 ]; }
# skip_full WHY: in the quick run, skip this test (run-checks counts these
# apart from the tests that need a GPU): make test-all runs it.
skip_full() { kit_full || skip "make test-all runs this ($*)"; }

# kit_jobs: how many builds or checker runs the kit's tests start at once.
kit_jobs() { echo "${KIT_JOBS:-$(nproc)}"; }

# kit_arch: the CUDA_ARCH the self-test builds its variants for. A GPU
# present (or CUDA_ARCH set): what the kit's Makefiles pick (that GPU's), so
# nothing is said. No GPU: one architecture, the oldest the kit supports
# (compute capability 7.5), not the seven a laptop build covers: every
# variant's host and device code still goes through the compiler, warnings
# and all, in 40% of the time (4.6 CPU seconds for lab 05's solution, 11.3
# for seven).
KIT_NOGPU_ARCH=75
kit_arch() {
    [ -n "${CUDA_ARCH:-}" ] && return 0
    kit_has_gpu && return 0
    echo "$KIT_NOGPU_ARCH"
}

# kit_has_gpu: nvidia-smi shows a GPU here (its compute capability), as the
# kit's Makefiles ask it (common/cuda.mk). Where there is one, tests/run
# runs every test, one file at a time.
kit_has_gpu() {
    nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
        grep -qE '^[0-9]+\.[0-9]+$'
}

# kit_make ARGS...: make, with CUDA_ARCH as kit_arch says.
kit_make() {
    local arch
    arch=$(kit_arch)
    make --no-print-directory ${arch:+CUDA_ARCH="$arch"} "$@"
}

# progress TEXT: a line tests/run shows while a long step runs (bats
# passes its fd 3 through). Outside bats (a script that sources this file),
# nothing: its fd 3, if any, is not ours.
progress() {
    [ -n "${BATS_TEST_FILENAME:-}" ] || return 0
    { echo "# $*" >&3; } 2>/dev/null || true
}

# at_once FUNC ARG...: FUNC ARG for each ARG, kit_jobs of them at a time;
# returns when all are done. FUNC leaves its results in files.
at_once() {
    local f=$1 a running=0 max
    max=$(kit_jobs)
    shift
    for a in "$@"; do
        if [ "$running" -ge "$max" ]; then
            wait -n || true
            running=$((running - 1))
        fi
        "$f" "$a" &
        running=$((running + 1))
    done
    wait || true
}

# Build the test programs of checker/tests/fixtures/progs into $KIT_BUILD/progs (once
# per make test: the .bats files that need them may run at the same time).
# The quick run leaves out the two NVTX builds (header.bats's NVTX test).
build_progs() {
    local o="$KIT_BUILD/progs" targets=()
    mkdir -p "$o"
    kit_full || targets=("$o/forced_error" "$o/probe")
    (
        flock 9
        kit_make -C "$KIT_ROOT/checker/tests/fixtures/progs" \
            KIT_ROOT="$KIT_ROOT" OUT="$o" -j"$(kit_jobs)" "${targets[@]}" >>"$o/build.log" 2>&1
    ) 9>"$o/.lock"
}

# gpu_or_skip: skip the test, with the reason, when there is no usable GPU.
gpu_or_skip() {
    local why rc=0
    why=$("$KIT_BUILD/progs/probe" 2>&1 >/dev/null) || rc=$?
    case $rc in
        0) ;;
        77) why=${why#no usable CUDA device: }
            skip "no CUDA device: ${why% (cudaError*)}" ;;
        *) echo "the GPU probe failed: $why"; return 1 ;;
    esac
}

# The labs: every checker/NN-name.bats, by id (kit_labs, resolve_lab: the
# runners' own, checker/lib/runner.bash).
# shellcheck source=../lib/runner.bash
. "$KIT_ROOT/checker/lib/runner.bash"
lab_ids() { kit_labs "$KIT_ROOT"; }

# selftest_labs: the labs whose starter, solution and mutants the self-test
# builds and, on a GPU, checks: every lab, or those KIT_LABS names, by number
# or whole name ("07 09", "07,09-multi-gpu"). A name that is no lab's fails,
# and says which labs there are: a typo must not make a self-test of nothing.
selftest_labs() {
    local all want id
    all=$(lab_ids)
    [ -n "${KIT_LABS:-}" ] || { echo "$all"; return 0; }
    for want in ${KIT_LABS//,/ }; do
        id=$(resolve_lab "$KIT_ROOT" "$want" 2>/dev/null) || {
            echo "KIT_LABS: no lab \"$want\" (the labs: $(echo $all))" >&2; return 1; }
        echo "$id"
    done
}

# prog_of ID: the program a lab builds (PROG in its Makefile).
prog_of() { sed -n 's/^PROG *:= *//p' "$KIT_ROOT/solutions/$1/Makefile"; }

# src_of ID: the source a student edits (SRC in its Makefile, else PROG.cu).
src_of() {
    local s
    s=$(sed -n 's/^SRC *:= *//p' "$KIT_ROOT/solutions/$1/Makefile")
    echo "${s:-$(prog_of "$1").cu}"
}

# Run a command with bats' own variables removed, so that a bats started by
# it (a lab's checker, inside the kit's tests) starts clean.
without_bats_env() {
    local unset=() v
    for v in $(compgen -e); do
        case $v in BATS_*) unset+=(-u "$v") ;; esac
    done
    env "${unset[@]}" "$@"
}

# variant_dirs: every built variant, as ID/KIND (KIND: starter, solution, mut-NAME)
variant_dirs() { (cd "$KIT_BUILD/variants" && ls -d */*); }

# Copy every lab's starter, solution and mutants (the solution with a patch
# applied, with no fuzz: a patch whose context has moved on must fail, not
# land on a line like it) into $KIT_BUILD/variants/ID/KIND and build them
# all, in parallel; the quick run (make test without a GPU) only applies the
# patches: 85 builds take minutes on two cores, and a variant is built to be
# run on a GPU (make check, make and CI's make test-all build every one too).
build_variants() {
    local id src p m v labs
    labs=$(selftest_labs) || return 1
    for id in $labs; do
        src=$(src_of "$id")
        v="$KIT_BUILD/variants/$id"
        mkdir -p "$v/starter" "$v/solution"
        cp "$KIT_ROOT/labs/$id/Makefile" "$KIT_ROOT/labs/$id/$src" "$v/starter/"
        cp "$KIT_ROOT/solutions/$id/Makefile" "$KIT_ROOT/solutions/$id/$src" "$v/solution/"
        for p in "$KIT_ROOT/checker/tests/mutants/$id"/*.patch; do
            [ -f "$p" ] || continue
            m="$v/mut-$(basename "$p" .patch)"
            mkdir -p "$m"
            cp "$v/solution/Makefile" "$v/solution/$src" "$m/"
            patch -s -F0 -p1 -d "$m" <"$p" >"$m/patch.log" 2>&1 || echo failed >"$m/patch.failed"
        done
    done
    local arch
    arch=$(kit_arch)
    kit_full || { progress "the quick run: $(variant_dirs | wc -l) variants made, none built (make test-all builds them)"; return 0; }
    progress "building $(variant_dirs | wc -l) variants${arch:+ for sm_$arch (no GPU here)}, $(kit_jobs) at a time"
    # a lab at a time, so that progress can say which are done
    for id in $labs; do
        variant_dirs | grep "^$id/" | xargs -P "$(kit_jobs)" -I{} sh -c \
            'make --no-print-directory -C "$1/$2" KIT_ROOT="$3" ${4:+CUDA_ARCH=$4} >"$1/$2/build.log" 2>&1; echo $? >"$1/$2/build.rc"' \
            _ "$KIT_BUILD/variants" {} "$KIT_ROOT" "$arch"
        progress "built the $(ls "$KIT_BUILD/variants/$id"/*/build.rc | wc -l) variants of $id"
    done
}

# expected_check PATCH: the check a mutant must fail ("# expect: ..." line).
expected_check() { sed -n '1,5s/^# expect: //p' "$1"; }
# mutant_gpus PATCH: the GPUs it takes to tell the mutant from the solution
# ("# needs: 2 GPUs" line; 1 without one)
mutant_gpus() { local n; n=$(sed -n '1,5s/^# needs: \([0-9][0-9]*\) GPUs$/\1/p' "$1"); echo "${n:-1}"; }
# kit_gpus: the GPUs a lab program here sees (the grader's visible_gpus:
# nvidia-smi's count, or as many as CUDA_VISIBLE_DEVICES names)
kit_gpus() { (. "$KIT_ROOT/checker/grade/lib.bash" && visible_gpus); }

# check_variant ID/KIND: run the lab's checker on that variant; TAP in KIND/checks.tap.
check_variant() {
    local id=${1%%/*} d="$KIT_BUILD/variants/$1"
    # its exit status says whether checks failed; the caller reads the TAP
    without_bats_env "$KIT_ROOT/checker/run-checks" --dir "$d" --tap-out "$d/checks.tap" "$id" \
        >"$d/checks.log" 2>&1 || true
}

# tap_failed TAP CHECK: did the check named CHECK fail in that TAP stream?
tap_failed() { grep -qxF "$2" <(sed -n 's/^not ok [0-9]* //p' "$1"); }

# replay_check LAB/VARIANT [CHECK] (replay.bats, tenant.bats): run LAB's checker on the recording of
# VARIANT (only the check named CHECK, when given); its TAP in
# $BATS_TEST_TMPDIR/LAB/VARIANT.tap and what run-checks printed in .log.
# REPLAY_DIR: replay that folder instead of the committed recording. The
# checker's runs get the seed the recording was made with (its file `seed`).
# REPLAY_OUT: the folder for the TAP and the log instead of BATS_TEST_TMPDIR
# (tap_of reads it too); REPLAY_PREDICTIONS: a folder whose LAB.predictions
# becomes the replayed lab folder's predictions.txt.
replay_check() {
    local id=${1%%/*} d prog r=${REPLAY_DIR:-$KIT_ROOT/checker/tests/fixtures/replays/$1} seed=()
    d="${REPLAY_OUT:-$BATS_TEST_TMPDIR}/$1"
    prog=$(prog_of "$id")
    mkdir -p "$d"
    printf '%s:\n\t@true\n' "$prog" >"$d/Makefile"
    ln -sf "$KIT_ROOT/checker/tests/fixtures/progs/replay-prog" "$d/$prog"
    [ -z "${REPLAY_PREDICTIONS:-}" ] || [ ! -f "$REPLAY_PREDICTIONS/$id.predictions" ] ||
        cp "$REPLAY_PREDICTIONS/$id.predictions" "$d/predictions.txt"
    [ -f "$r/seed" ] && seed=(LAB_SEED="$(cat "$r/seed")")
    REPLAY="$r" without_bats_env "${seed[@]}" \
        "$KIT_ROOT/checker/run-checks" --dir "$d" --tap-out "$d.tap" ${2:+--only "$2"} "$id" \
        >"$d.log" 2>&1 || true
}
tap_of() { echo "${REPLAY_OUT:-$BATS_TEST_TMPDIR}/$1.tap"; }
