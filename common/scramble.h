/*
 * scramble.h -- the work the labs give the GPU, and how the CPU checks it.
 *
 *   lab_fill(h_in, n, seed, 0);               the input: one hash per element
 *   lab_fill_at(h, len, seed, 0, first);      elements first.. of the same input
 *   scramble_kernel<<<b, t, 0, s>>>(d_out, d_in, n, steps);
 *   long_work(out, in, n, steps);             in a kernel: the same, any grid
 *   m = scramble_check(h_out, h_in, n, steps, &digest);   compare, digest
 *   lab_result_begin(&r); lab_result_add(&r, ...); lab_result_end(&r, "part1");
 *                                             the same, a piece at a time
 *   scramble_bins(bins, h_in, n, steps);      lab 07: the results by top byte
 *
 * The work: each number takes K steps of y -> A*y + C (mod 2^32), one
 * multiply-add each (lcg_steps). The check: K such steps are one map
 * y -> a*y + c (affine_power), so the CPU checks n numbers in O(n), not O(n*K).
 * The input comes from the program's --seed, and `salt` tells apart the
 * inputs of one program (lab 03's three buffers, lab 06's scenarios, lab
 * 07's parts).
 *
 * Plain C, but for the kernels (under nvcc only): the kit's digest tool
 * (checker/verify) computes the right results with the same code.
 */
#ifndef LAB_SCRAMBLE_H
#define LAB_SCRAMBLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "digest.h"

#define LCG_A 1664525U              /* y -> A*y + C (mod 2^32) */
#define LCG_C 1013904223U

/* A 32-bit mix of x (lowbias32): a bijection, the same on CPU and GPU. */
static inline uint32_t lab_hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Element i of input `salt` for `seed`. */
static inline uint32_t lab_input(uint32_t seed, uint32_t salt, size_t i)
{
    return lab_hash32((uint32_t)i + lab_hash32(seed ^ lab_hash32(salt + 1)));
}

/* Fill h[0..n) with elements first..first+n-1 of input `salt` for `seed`
 * (lab 09 gives each GPU its own part of one input). */
static inline void lab_fill_at(uint32_t *h, size_t n, uint32_t seed, uint32_t salt,
                               size_t first)
{
    uint32_t base = lab_hash32(seed ^ lab_hash32(salt + 1));
    size_t i;

    for (i = 0; i < n; i++)
        h[i] = lab_hash32((uint32_t)(first + i) + base);
}

/* Fill h[0..n) with elements 0..n-1 of input `salt` for `seed`. */
static inline void lab_fill(uint32_t *h, size_t n, uint32_t seed, uint32_t salt)
{
    lab_fill_at(h, n, seed, salt, 0);
}

/*
 * Set (*a, *c) so that y -> a*y + c equals K steps of y -> A*y + C. Composing
 * the map with itself by squaring takes log2(K) steps.
 */
static inline void affine_power(uint32_t steps, uint32_t *a, uint32_t *c)
{
    uint32_t ra = 1, rc = 0;                /* identity */
    uint32_t pa = LCG_A, pc = LCG_C;        /* the step applied 2^bit times */

    for (; steps != 0; steps >>= 1) {
        if (steps & 1) {
            rc = pa * rc + pc;
            ra = pa * ra;
        }
        pc = pa * pc + pc;
        pa = pa * pa;
    }
    *a = ra;
    *c = rc;
}

/* What a check found: how many elements differ, and the first that does. */
struct lab_mismatch {
    size_t bad, first;              /* first: its index in the whole result */
    uint32_t got, want;
};

/*
 * Compare out[0..n) with K steps from in[i] (from in[i] ^ key[i % key_n] when
 * key is not NULL); out[0] is element `base` of the whole result. Adds to *m,
 * and adds out to the digest *d. Call it once out is complete: it reads out
 * twice, to compare and to digest.
 */
static inline void scramble_compare(struct lab_mismatch *m, struct lab_digest *d,
                                    const uint32_t *out, const uint32_t *in,
                                    const uint32_t *key, size_t key_n, size_t n,
                                    uint32_t steps, size_t base)
{
    uint32_t a, c, want;
    size_t i;

    affine_power(steps, &a, &c);
    for (i = 0; i < n; i++) {
        want = a * (key != NULL ? in[i] ^ key[i % key_n] : in[i]) + c;
        if (out[i] != want && m->bad++ == 0) {
            m->first = base + i;
            m->got = out[i];
            m->want = want;
        }
    }
    lab_digest_add(d, out, n * sizeof *out);
}

/*
 * A result checked piece by piece, with the digest of what was checked: how
 * a program ends a part.
 *
 *   struct lab_result r;
 *   lab_result_begin(&r);
 *   for (each piece, in order)
 *       lab_result_add(&r, out, in, NULL, 1, n, steps, base);
 *   if (lab_result_end(&r, "part1"))      prints digest_part1; returns r.m.bad
 *       printf("... WRONG: %zu differ (first at %zu ...)", r.m.bad, r.m.first);
 */
struct lab_result {
    struct lab_mismatch m;
    struct lab_digest d;
};

static inline void lab_result_begin(struct lab_result *r)
{
    memset(&r->m, 0, sizeof r->m);
    lab_digest_init(&r->d);
}

/* scramble_compare() of one piece into r. */
static inline void lab_result_add(struct lab_result *r, const uint32_t *out,
                                  const uint32_t *in, const uint32_t *key, size_t key_n,
                                  size_t n, uint32_t steps, size_t base)
{
    scramble_compare(&r->m, &r->d, out, in, key, key_n, n, steps, base);
}

/* Print the result's digest as digest_NAME; return how many elements differ. */
static inline size_t lab_result_end(const struct lab_result *r, const char *name)
{
    lab_digest_print(name, lab_digest_value(&r->d));
    return r->m.bad;
}

/* Check out[0..n) against K steps from in[i]; set *digest to out's digest. */
static inline struct lab_mismatch scramble_check(const uint32_t *out, const uint32_t *in,
                                                 size_t n, uint32_t steps,
                                                 uint64_t *digest)
{
    struct lab_result r;

    lab_result_begin(&r);
    lab_result_add(&r, out, in, NULL, 1, n, steps, 0);
    *digest = lab_digest_value(&r.d);
    return r.m;
}

/*
 * Check out[0..n) against K steps from in[i]; print the result's digest as
 * "digest_out" (the checker recomputes it) and the verdict, the RESULT line.
 * Return the number of elements that differ.
 */
static inline size_t scramble_verify(const uint32_t *out, const uint32_t *in, size_t n,
                                     uint32_t steps)
{
    uint64_t digest;
    struct lab_mismatch m = scramble_check(out, in, n, steps, &digest);

    lab_digest_print("out", digest);
    if (m.bad)
        printf("RESULT: WRONG: %zu of %zu elements differ (first at %zu: "
               "got %u, expected %u)\n", m.bad, n, m.first, m.got, m.want);
    else
        printf("RESULT: verified all %zu elements\n", n);
    return m.bad;
}

/*
 * Lab 07 also counts results into LAB_NBINS bins by their top byte
 * (LAB_BIN(y)): bins[b] = how many of K steps from in[0..n) have top byte b.
 */
#define LAB_NBINS 256
#define LAB_BIN(y) ((y) >> 24)

static inline void scramble_bins(uint32_t bins[LAB_NBINS], const uint32_t *in, size_t n,
                                 uint32_t steps)
{
    uint32_t a, c;
    size_t i;

    affine_power(steps, &a, &c);
    memset(bins, 0, LAB_NBINS * sizeof *bins);
    for (i = 0; i < n; i++)
        bins[LAB_BIN(a * in[i] + c)]++;
}

#ifdef __CUDACC__
/* ---------------------------------------------------------------- on the GPU */

/* y after K steps of y -> A*y + C. */
__device__ static inline uint32_t lcg_steps(uint32_t y, uint32_t steps)
{
    /* One multiply-add per step. Unrolled, the compiler merges steps (two
     * steps are y*A*A + A*C + C): kept rolled, --steps means that much work. */
#pragma unroll 1
    for (uint32_t k = 0; k < steps; k++)
        y = y * LCG_A + LCG_C;
    return y;
}

/* out[i] = K steps from in[i]; one thread per element, any grid that covers n. */
__global__ void scramble_kernel(uint32_t *out, const uint32_t *in, size_t n,
                                uint32_t steps)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)                      /* the last block may hang over the end */
        out[i] = lcg_steps(in[i], steps);
}

/*
 * out[i] = K steps from in[i], for a long kernel (labs 04, 10) called with
 * any grid: a grid-stride loop covers all n, so one block per SM leaves room
 * on every SM for a kernel of another stream beside it.
 */
__device__ static inline void long_work(uint32_t *out, const uint32_t *in, size_t n,
                                        uint32_t steps)
{
    size_t i;

    for (i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = lcg_steps(in[i], steps);
}
#endif /* __CUDACC__ */

#endif /* LAB_SCRAMBLE_H */
