#!/usr/bin/env bats
# header.bats -- common/check.h and common/nvtx.h do what they promise.
# These need no GPU: with no driver, the first CUDA call fails too.

bats_require_minimum_version 1.5.0
load lib

setup_file() { build_progs; }

@test "the test programs build without warnings" {
    run cat "$KIT_BUILD/progs/build.log"
    echo "$output"
    [ -x "$KIT_BUILD/progs/probe" ] && [ -x "$KIT_BUILD/progs/forced_error" ]
    refute_output --partial warning
}

@test "CUDA_CHECK names the file:line, the CUDA error and the call, on stderr, and exits 1" {
    run --separate-stderr -1 "$KIT_BUILD/progs/forced_error" call
    echo "stderr: $stderr"
    [ -z "$output" ]
    [[ "$stderr" =~ forced_error\.cu:[0-9]+:\ CUDA\ error\ cudaError[A-Za-z]+:\ [a-zA-Z] ]]
    [[ "$stderr" == *"in cudaSetDevice(9999)"* ]]
}

@test "CUDA_CHECK_LAUNCH reports a launch that failed, and exits 1" {
    run --separate-stderr -1 "$KIT_BUILD/progs/forced_error" launch
    echo "stderr: $stderr"
    [[ "$stderr" =~ forced_error\.cu:[0-9]+:\ CUDA\ error\ cudaError[A-Za-z]+: ]]
    [[ "$stderr" == *"in kernel launch"* ]]
}

@test "with no device visible, lab_pick_device says why in one line and exits 77" {
    CUDA_VISIBLE_DEVICES= run --separate-stderr -77 "$KIT_BUILD/progs/probe"
    echo "stderr: $stderr"
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "no usable CUDA device: "* ]]
}

# have_driver: libcuda.so.1, the NVIDIA driver's library, can be found
have_driver() {
    local d
    ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && return 0
    for d in ${LD_LIBRARY_PATH//:/ }; do [ -e "$d/libcuda.so.1" ] && return 0; done
    return 1
}

@test "with no NVIDIA driver at all, lab_pick_device says so, not a CUDA version error" {
    have_driver && skip "an NVIDIA driver is installed here"
    run --separate-stderr -77 "$KIT_BUILD/progs/probe"
    echo "stderr: $stderr"
    [[ "$stderr" == "no usable CUDA device: no NVIDIA driver found"* ]]
}

@test "NVTX=0 compiles the NVTX ranges out" {
    skip_full "two more builds of a test program"
    run grep -c NVTX_INJECTION64_PATH "$KIT_BUILD/progs/nvtx_on"
    [ "$output" -gt 0 ]
    run -1 grep -c NVTX_INJECTION64_PATH "$KIT_BUILD/progs/nvtx_off"
}
