/*
 * lab.h -- the few utilities every lab program shares.
 *
 * Includes check.h (CUDA_CHECK, lab_pick_device), nvtx.h, options.h (the
 * command line, exit codes) and digest.h (the result's digest).
 *
 * The program/checker contract (checker/README.md has the whole of it):
 *   - it takes --seed S, and every input it makes comes from S;
 *   - figures are printed one per line as   name = value   (lab_figure);
 *   - each verified result's digest as   digest_NAME = hex   (lab_digest_print);
 *   - the verdict is one line:  RESULT: verified ...  or  RESULT: WRONG ...
 *     (lab_verdict);
 *   - an unfinished TODO prints  TODO(n) is not done: ...  and exits 1.
 */
#ifndef LAB_LAB_H
#define LAB_LAB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nvtx.h"
#include "options.h"
#include "digest.h"

/* Milliseconds on the host's monotonic clock. Only differences mean anything. */
static inline double lab_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Print one figure the checker reads: "  name = value  note". */
static inline void lab_figure(const char *name, double value, const char *note)
{
    printf("  %-18s = %12.4f  %s\n", name, value, note ? note : "");
}

/*
 * Print the verdict line and return the exit code: with bad wrong results
 * "RESULT: WRONG: <bad> <wrong>" and LAB_EXIT_FAIL, else
 * "RESULT: verified <right>" and LAB_EXIT_OK.
 */
static inline int lab_verdict(size_t bad, const char *wrong, const char *right)
{
    if (bad)
        printf("RESULT: WRONG: %zu %s\n", bad, wrong);
    else
        printf("RESULT: verified %s\n", right);
    return bad ? LAB_EXIT_FAIL : LAB_EXIT_OK;
}

#ifdef __CUDACC__
/*
 * Load the code of kernels[0..n) now. With lazy loading (the default on
 * Linux since CUDA 12.2, on Windows since 12.3) a kernel's code is loaded at
 * its first launch, and that may wait for the kernels already running; the
 * lab says why that would hide or fake what it shows. Give each kernel as
 * (const void *)name_kernel.
 */
static inline void lab_load_kernels(const void *const *kernels, size_t n)
{
    cudaFuncAttributes attr;
    size_t i;

    for (i = 0; i < n; i++)
        CUDA_CHECK(cudaFuncGetAttributes(&attr, kernels[i]));
}
#endif

/*
 * The starter reached a TODO that is still empty: say which, exit 1. In a
 * starter, a lab_todo() line marks each TODO: your code replaces it. Where
 * several host threads reach it at once (lab 07), the first one says it and
 * exits; the others wait for the exit (two threads in exit() at once is
 * undefined in C).
 */
LAB_NORETURN static inline void lab_todo(int n, const char *what)
{
    static int reached;

    if (__atomic_exchange_n(&reached, 1, __ATOMIC_SEQ_CST))
        for (;;)
            pause();
    fflush(stdout);
    fprintf(stderr, "TODO(%d) is not done: %s\n", n, what);
    exit(LAB_EXIT_FAIL);
}

#endif /* LAB_LAB_H */
