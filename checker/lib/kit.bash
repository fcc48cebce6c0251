# checker/lib/kit.bash -- what the kit's own tests (checker/tests/*.bats) share.

KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
# One folder per `make test`, shared by its .bats files: every run builds afresh.
KIT_BUILD="${KIT_BUILD:-${BATS_RUN_TMPDIR:-/tmp}/kit}"

# bats-support and bats-assert: the kit's pinned copies, else Debian's.
for kit_lib_dir in "$KIT_ROOT/checker/vendor/node_modules" /usr/lib/bats; do
    if [ -f "$kit_lib_dir/bats-support/load.bash" ] && [ -f "$kit_lib_dir/bats-assert/load.bash" ]; then
        load "$kit_lib_dir/bats-support/load.bash"
        load "$kit_lib_dir/bats-assert/load.bash"
        break
    fi
done

# Build the test programs of checker/tests/progs into $KIT_BUILD/progs.
build_progs() {
    mkdir -p "$KIT_BUILD/progs"
    make --no-print-directory -C "$KIT_ROOT/checker/tests/progs" \
        KIT_ROOT="$KIT_ROOT" OUT="$KIT_BUILD/progs" -j4 >>"$KIT_BUILD/progs/build.log" 2>&1
}

# gpu_or_skip: skip the test, with the reason, when there is no usable GPU.
gpu_or_skip() {
    local why rc=0
    why=$("$KIT_BUILD/progs/probe" 2>&1 >/dev/null) || rc=$?
    case $rc in
        0) ;;
        77) skip "no CUDA device: ${why#no usable CUDA device: }" ;;
        *) echo "the GPU probe failed: $why"; return 1 ;;
    esac
}

# The labs: every checker/NN-name.bats, by id.
lab_ids() { (cd "$KIT_ROOT/checker" && ls [0-9][0-9]-*.bats | sed 's/\.bats$//'); }

# prog_of ID: the program a lab builds (PROG in its Makefile).
prog_of() { sed -n 's/^PROG *:= *//p' "$KIT_ROOT/solutions/$1/Makefile"; }

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
# applied) into $KIT_BUILD/variants/ID/KIND and build them all, in parallel.
build_variants() {
    local id prog p m v
    for id in $(lab_ids); do
        prog=$(prog_of "$id")
        v="$KIT_BUILD/variants/$id"
        mkdir -p "$v/starter" "$v/solution"
        cp "$KIT_ROOT/labs/$id/Makefile" "$KIT_ROOT/labs/$id/$prog.cu" "$v/starter/"
        cp "$KIT_ROOT/solutions/$id/Makefile" "$KIT_ROOT/solutions/$id/$prog.cu" "$v/solution/"
        for p in "$KIT_ROOT/checker/mutants/$id"/*.patch; do
            [ -f "$p" ] || continue
            m="$v/mut-$(basename "$p" .patch)"
            mkdir -p "$m"
            cp "$v/solution/Makefile" "$v/solution/$prog.cu" "$m/"
            patch -s -p1 -d "$m" <"$p" >"$m/patch.log" 2>&1 || echo failed >"$m/patch.failed"
        done
    done
    variant_dirs | xargs -P "$(nproc)" -I{} sh -c \
        'make --no-print-directory -C "$1/$2" KIT_ROOT="$3" >"$1/$2/build.log" 2>&1; echo $? >"$1/$2/build.rc"' \
        _ "$KIT_BUILD/variants" {} "$KIT_ROOT"
}

# expected_check PATCH: the check a mutant must fail ("# expect: ..." line).
expected_check() { sed -n '1,5s/^# expect: //p' "$1"; }

# check_variant ID/KIND: run the lab's checker on that variant; TAP in KIND/checks.tap.
check_variant() {
    local id=${1%%/*} d="$KIT_BUILD/variants/$1"
    # its exit status says whether checks failed; the caller reads the TAP
    without_bats_env "$KIT_ROOT/checker/run-checks" --dir "$d" --tap-out "$d/checks.tap" "$id" \
        >"$d/checks.log" 2>&1 || true
}

# tap_failed TAP CHECK: did the check named CHECK fail in that TAP stream?
tap_failed() { grep -qxF "$2" <(sed -n 's/^not ok [0-9]* //p' "$1"); }
