/*
 * selftest.c -- the kit's reference code computes what it claims: the digest
 * is XXH64 (known values of the xxHash project), in pieces as in one go; K
 * steps folded by affine_power are K steps done one by one. Prints "ok" and
 * exits 0, or says what is wrong and exits 1. Run by checker/tests/verify.bats.
 */
#include <stdio.h>
#include <string.h>

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

int main(void)
{
    static unsigned char bytes[1000];
    struct lab_digest d;
    uint32_t in[300], out[300], a, c, y, k;
    size_t i, at, step;

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
        expect(in[i] == lab_input(7, 2, i), "lab_fill(h, n, seed, salt) gives lab_input's elements");
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
    if (!failed)
        printf("ok\n");
    return failed;
}
