/*
 * check.h -- error checking for every CUDA call and launch, and picking a device.
 *
 *   CUDA_CHECK(cudaMalloc(&d_x, bytes));   on failure: message on stderr, exit 1
 *   my_kernel<<<grid, block>>>(...);
 *   CUDA_CHECK_LAUNCH();                   a bad launch configuration shows here
 *   lab_pick_device();                     no usable GPU: one line, exit 77
 *
 * The message names the place, the CUDA error and the call that failed:
 *   sync_copy.cu:42: CUDA error cudaErrorInvalidValue: invalid argument
 *     in cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost)
 *
 * Exit codes shared by every lab program: 0 ran and verified, 1 wrong results
 * or a CUDA error, 2 bad command line, 77 no usable CUDA device (the "skip" code
 * of automake and of the checker).
 */
#ifndef LAB_CHECK_H
#define LAB_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define LAB_EXIT_OK       0
#define LAB_EXIT_FAIL     1
#define LAB_EXIT_USAGE    2
#define LAB_EXIT_NODEVICE 77

/* Report a failed CUDA call and exit 1. Used by the macros below. */
static inline void lab_cuda_fail(cudaError_t err, const char *expr,
                                 const char *file, int line)
{
    fprintf(stderr, "%s:%d: CUDA error %s: %s\n  in %s\n", file, line,
            cudaGetErrorName(err), cudaGetErrorString(err), expr);
    exit(LAB_EXIT_FAIL);
}

#define CUDA_CHECK(call)                                                \
    do {                                                                \
        cudaError_t lab_err_ = (call);                                  \
        if (lab_err_ != cudaSuccess)                                    \
            lab_cuda_fail(lab_err_, #call, __FILE__, __LINE__);         \
    } while (0)

/*
 * After every <<<>>>: catches errors of the launch itself (too many threads,
 * bad configuration). A fault *inside* the kernel (out-of-bounds access) is
 * only reported by the next call that waits for the GPU, e.g. a cudaMemcpy or
 * cudaDeviceSynchronize -- which is why those are checked too.
 */
#define CUDA_CHECK_LAUNCH()                                             \
    do {                                                                \
        cudaError_t lab_err_ = cudaGetLastError();                      \
        if (lab_err_ != cudaSuccess)                                    \
            lab_cuda_fail(lab_err_, "kernel launch", __FILE__, __LINE__); \
    } while (0)

/*
 * Use device 0, or exit 77 with a one-line reason when there is no usable
 * CUDA device (no driver, no GPU, CUDA_VISIBLE_DEVICES hides them all).
 * Returns the device's properties for the lab's napkin math.
 */
static inline cudaDeviceProp lab_pick_device(void)
{
    cudaDeviceProp prop;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);

    if (err != cudaSuccess || count == 0) {
        fprintf(stderr, "no usable CUDA device: %s%s\n",
                err != cudaSuccess ? cudaGetErrorString(err)
                                   : "the driver reports 0 devices",
                err == cudaErrorInsufficientDriver
                    ? " (no NVIDIA driver, or one older than this CUDA)" : "");
        exit(LAB_EXIT_NODEVICE);
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    return prop;
}

#endif /* LAB_CHECK_H */
