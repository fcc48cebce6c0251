#!/usr/bin/env bats
# build.bats -- the build finds the CUDA toolkit however nvcc is installed.
# No GPU needed: these compile, they do not run.

bats_require_minimum_version 1.5.0
load lib

setup() {
    real_nvcc=$(command -v nvcc || true)
    [ -n "$real_nvcc" ] || real_nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
    [ -x "$real_nvcc" ] || skip "no nvcc on PATH or in \$CUDA_HOME/bin"
    # A copy of the build files, so nothing here touches the tree's build.
    t="$BATS_TEST_TMPDIR/kit"
    mkdir -p "$t/common" "$t/checker/stress" "$t/checker/trace" "$t/bin"
    cp "$KIT_ROOT"/common/*.mk "$t/common/"
    cp "$KIT_ROOT"/checker/stress/{Makefile,stress.c} "$t/checker/stress/"
    cp "$KIT_ROOT"/checker/trace/Makefile "$t/checker/trace/"
    # What some machines put first on PATH: a script that runs the real nvcc
    # (CI's /usr/local/bin/nvcc), in a folder with no include/ beside it.
    printf '#!/bin/sh\nexec %s "$@"\n' "$real_nvcc" >"$t/bin/nvcc"
    chmod +x "$t/bin/nvcc"
}

# make_var DIR NAME: the value make works out for NAME in DIR, with the
# wrapper first on PATH and no CUDA_HOME.
make_var() {
    env -u CUDA_HOME -u CUDA_TOP PATH="$t/bin:/usr/bin:/bin" \
        make --no-print-directory -pn -C "$1" 2>/dev/null | sed -n "s/^$2 :\?= //p" | head -n 1
}

@test "through an nvcc wrapper script on PATH, the build still finds cuda.h, cudart and CUPTI" {
    inc=$(make_var "$t/checker/stress" CUDA_INCDIR)
    lib=$(make_var "$t/checker/stress" CUDA_LIBDIR)
    cupti=$(make_var "$t/checker/trace" CUPTI_SO)
    echo "CUDA_INCDIR=$inc CUDA_LIBDIR=$lib CUPTI_SO=$cupti"
    [ -f "$inc/cuda.h" ]
    [ -f "$lib/libcudart.so" ]
    [ -f "$cupti" ]
}

@test "through an nvcc wrapper script on PATH, checker/stress's C part compiles" {
    run env -u CUDA_HOME -u CUDA_TOP PATH="$t/bin:/usr/bin:/bin" \
        make --no-print-directory -C "$t/checker/stress" stress.o
    echo "$output"
    [ "$status" -eq 0 ]
    [ -f "$t/checker/stress/stress.o" ]
}
