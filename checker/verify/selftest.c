/*
 * selftest.c -- the kit's reference code computes what it claims: the digest
 * is XXH64 (known values of the xxHash project), in pieces as in one go; K
 * steps folded by affine_power are K steps done one by one. Prints "ok" and
 * exits 0, or says what is wrong and exits 1. Run by checker/tests/verify.bats.
 *
 * `selftest --bench` (make -C checker/verify bench) prints instead how long
 * the digests of each lab's default run take on this CPU: the time the
 * digests add to a run, to set against the run's own (time ./PROG).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digest.h"
#include "scramble.h"

static int failed;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("wrong: %s\n", what);
        failed = 1;
    }
}

/* The bytes each lab digests in its default run, and the time they take. */
static int bench(void)
{
    static const struct { const char *lab; size_t mib; } runs[] = {
        { "01-sync-copy", 64 }, { "02-async-copy", 64 }, { "03-pinned-memory", 3 * 256 },
        { "04-events", 8 }, { "05-overlap", 3 * 256 + 2 * 16 }, { "06-lifetime", 104 },
        { "07-default-streams", 256 }, { "09-multi-gpu", 2 * 256 + 16 + 4 * 64 },
    };
    size_t bytes = 256u << 20, i;
    unsigned char *buf = (unsigned char *)malloc(bytes);
    struct timespec t0, t1;
    uint64_t sink = 0;
    double ms = 1e30, t;
    int r;

    if (buf == NULL)
        return 1;
    for (i = 0; i < bytes; i++)
        buf[i] = (unsigned char)(i * 131);
    for (r = 0; r < 5; r++) {                       /* the best of 5 */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        sink ^= lab_digest_of(buf, bytes);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        t = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        ms = t < ms ? t : ms;
    }
    printf("digest: %.1f GB/s on this CPU (best of 5 over 256 MiB; %016llx)\n",
           bytes / (ms * 1e6), (unsigned long long)sink);
    for (i = 0; i < sizeof runs / sizeof *runs; i++)
        printf("  %-18s %4zu MiB digested: %6.1f ms\n", runs[i].lab, runs[i].mib,
               ms * runs[i].mib / 256.0);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    static unsigned char bytes[1000];
    struct lab_digest d;
    uint32_t in[300], out[300], a, c, y, k;
    size_t i, at, step;

    if (argc > 1 && strcmp(argv[1], "--bench") == 0)
        return bench();
    for (i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)i;
    /* XXH64, seed 0, as libxxhash 0.8 computes it */
    expect(lab_digest_of("", 0) == 0xef46db3751d8e999ULL, "XXH64 of nothing");
    expect(lab_digest_of("abc", 3) == 0x44bc2cf5ad770999ULL, "XXH64 of \"abc\"");
    expect(lab_digest_of(bytes, 100) == 0x6ac1e58032166597ULL, "XXH64 of bytes 0..99");
    for (step = 1; step < 70; step += 3) {          /* the same in pieces */
        lab_digest_init(&d);
        for (at = 0; at < sizeof bytes; at += step)
            lab_digest_add(&d, bytes + at, at + step < sizeof bytes ? step : sizeof bytes - at);
        expect(lab_digest_value(&d) == lab_digest_of(bytes, sizeof bytes),
               "a digest added in pieces equals the digest in one go");
    }
    for (k = 0; k < 300; k += 7) {                  /* affine_power(K) = K steps */
        affine_power(k, &a, &c);
        for (y = 12345, i = 0; i < k; i++)
            y = y * LCG_A + LCG_C;
        expect(a * 12345 + c == y, "affine_power(K) is K steps of y -> A*y + C");
    }
    lab_fill(in, 300, 7, 2);                        /* lab_fill is lab_input */
    for (i = 0; i < 300; i++)
        expect(in[i] == lab_input(7, 2, i), "lab_fill(h, n, seed, salt) is lab_input's elements");
    affine_power(99, &a, &c);
    for (i = 0; i < 300; i++)
        out[i] = a * in[i] + c;
    {
        uint64_t dg;
        struct lab_mismatch m = scramble_check(out, in, 300, 99, &dg);

        expect(m.bad == 0 && dg == lab_digest_of(out, sizeof out),
               "scramble_check finds a right result right, and digests it");
        out[299]++;
        m = scramble_check(out, in, 300, 99, &dg);
        expect(m.bad == 1 && m.first == 299 && dg != lab_digest_of(in, sizeof in),
               "scramble_check finds the one wrong element");
    }
    {                                               /* lab 07's bins, step by step */
        uint32_t bins[LAB_NBINS], want[LAB_NBINS] = { 0 };
        size_t total = 0;

        for (i = 0; i < 300; i++) {
            for (y = in[i], k = 0; k < 99; k++)
                y = y * LCG_A + LCG_C;
            want[y >> 24]++;
        }
        scramble_bins(bins, in, 300, 99);
        for (i = 0; i < LAB_NBINS; i++)
            total += bins[i];
        expect(memcmp(bins, want, sizeof bins) == 0 && total == 300,
               "scramble_bins counts K steps from each element by its top byte");
    }
    if (!failed)
        printf("ok\n");
    return failed;
}
