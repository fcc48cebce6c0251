/*
 * check.h -- error checking for every CUDA call and launch, and picking a device.
 *
 *   CUDA_CHECK(cudaMalloc(&d_x, bytes));   on failure: message on stderr, exit 1
 *   my_kernel<<<grid, block>>>(...);
 *   CUDA_CHECK_LAUNCH();                   a bad launch configuration shows here
 *   lab_pick_device();                     no usable GPU: one line, exit 77
 *   lab_free_all(d, 3, h, 2);              the end: cudaFree d[], cudaFreeHost h[]
 *   lab_destroy_streams(s, 2);             ... cudaStreamDestroy s[]
 *
 * The message names the place, the CUDA error and the call that failed:
 *   sync_copy.cu:42: CUDA error cudaErrorInvalidValue: invalid argument
 *     in cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost)
 *
 * The exit codes (0, 1, 2, 77) are in options.h.
 */
#ifndef LAB_CHECK_H
#define LAB_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <cuda_runtime.h>

#include "options.h"

/* A function that never returns: the compiler then knows the code after a
 * call to it is never reached. */
#define LAB_NORETURN __attribute__((noreturn))

/* Report a failed CUDA call and exit 1. Used by the macros below. */
LAB_NORETURN static inline void lab_cuda_fail(cudaError_t err, const char *expr,
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
 * bad configuration). A fault *inside* the kernel (out-of-bounds access) may
 * be reported by any later CUDA call; only a call that waits for the kernel
 * (cudaDeviceSynchronize, cudaStreamSynchronize, a cudaMemcpy after it) is
 * sure to report it -- which is why every call is checked.
 */
#define CUDA_CHECK_LAUNCH()                                             \
    do {                                                                \
        cudaError_t lab_err_ = cudaGetLastError();                      \
        if (lab_err_ != cudaSuccess)                                    \
            lab_cuda_fail(lab_err_, "kernel launch", __FILE__, __LINE__); \
    } while (0)

/* Is an NVIDIA driver installed at all? The runtime answers "insufficient
 * driver" both when there is none and when it is too old. */
static inline int lab_have_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

    if (lib == NULL)
        return 0;
    dlclose(lib);
    return 1;
}

/* Say in one line why there is no usable CUDA device, and exit 77. */
LAB_NORETURN static inline void lab_no_device(const char *why, cudaError_t err)
{
    fprintf(stderr, "no usable CUDA device: %s (%s)\n", why, cudaGetErrorName(err));
    exit(LAB_EXIT_NODEVICE);
}

/*
 * Use device 0, or exit 77 with a one-line reason when there is no usable
 * CUDA device (no driver, no GPU, CUDA_VISIBLE_DEVICES hides them all, or
 * device 0 refuses us: compute mode prohibited, or exclusive and taken).
 * Returns the device's properties for the lab's napkin math.
 */
static inline cudaDeviceProp lab_pick_device(void)
{
    cudaDeviceProp prop;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);

    if (err == cudaErrorInsufficientDriver && !lab_have_driver())
        lab_no_device("no NVIDIA driver found (libcuda.so.1 cannot be loaded)", err);
    if (err == cudaErrorInsufficientDriver)
        lab_no_device("the NVIDIA driver is older than this CUDA runtime", err);
    if (err != cudaSuccess)
        lab_no_device(cudaGetErrorString(err), err);
    if (count == 0)
        lab_no_device("the driver reports 0 devices", cudaErrorNoDevice);
    err = cudaSetDevice(0);
    if (err != cudaSuccess)
        lab_no_device("device 0 cannot be used: its compute mode may be prohibited, "
                      "or exclusive and taken by another process (nvidia-smi -q -d COMPUTE)",
                      err);
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    return prop;
}

/*
 * The end of a part or a program, after its last wait, when nothing queued
 * uses them any more: cudaFree each of d[0..nd), cudaFreeHost each of
 * h[0..nh). A free whose time matters (one the lesson is about) stays a
 * call of its own in the lab.
 */
static inline void lab_free_all(void *const *d, size_t nd, void *const *h, size_t nh)
{
    size_t i;

    for (i = 0; i < nd; i++)
        CUDA_CHECK(cudaFree(d[i]));
    for (i = 0; i < nh; i++)
        CUDA_CHECK(cudaFreeHost(h[i]));
}

/* The same end for streams s[0..n): cudaStreamDestroy each. */
static inline void lab_destroy_streams(const cudaStream_t *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        CUDA_CHECK(cudaStreamDestroy(s[i]));
}

/* ... and for events e[0..n): cudaEventDestroy each. */
static inline void lab_destroy_events(const cudaEvent_t *e, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        CUDA_CHECK(cudaEventDestroy(e[i]));
}

#endif /* LAB_CHECK_H */
