/*
 * lab.h -- the few utilities every lab program shares.
 *
 * Includes check.h (CUDA_CHECK, lab_pick_device, exit codes) and nvtx.h.
 *
 * The program/checker contract (checker/README.md has the whole of it):
 *   - figures are printed one per line as   name = value   (lab_figure);
 *   - the verdict is one line:  RESULT: verified ...  or  RESULT: WRONG ...;
 *   - an unfinished TODO prints  TODO(n) is not done: ...  and exits 1.
 */
#ifndef LAB_LAB_H
#define LAB_LAB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "nvtx.h"

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

/* The starter reached a TODO that is still empty: say which, exit 1. */
static inline void lab_todo(int n, const char *what)
{
    fflush(stdout);
    fprintf(stderr, "TODO(%d) is not done: %s\n", n, what);
    exit(LAB_EXIT_FAIL);
}

/*
 * Parse a whole positive number for option `opt`, within [lo, hi].
 * Return 0 and set *out on success; print why on stderr and return -1.
 */
static inline int lab_parse_size(const char *opt, const char *arg,
                                 unsigned long long lo, unsigned long long hi,
                                 unsigned long long *out)
{
    char *end = NULL;
    unsigned long long v;

    if (arg == NULL || *arg == '\0' || *arg == '-') {
        fprintf(stderr, "%s needs a positive number\n", opt);
        return -1;
    }
    v = strtoull(arg, &end, 10);
    if (*end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "%s %s: expected a whole number from %llu to %llu\n",
                opt, arg, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* A 32-bit mix of i (lowbias32): non-trivial, never all zeros, same on CPU and GPU. */
static inline uint32_t lab_hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

#endif /* LAB_LAB_H */
