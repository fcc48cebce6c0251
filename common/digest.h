/*
 * digest.h -- a 64-bit digest of a result, printed for the checker.
 *
 *   lab_digest_print("out", lab_digest_of(h_out, bytes));
 *   prints   "  digest_out = 0123456789abcdef"
 *
 * The checker passes the program a --seed of its choosing, and the kit's own
 * tool (checker/verify) computes the digest of the right result for that
 * seed: a result passes only when the two agree, whatever the program's
 * verify() says. The digest is XXH64 (seed 0) of the result's bytes, the
 * hash of the xxHash project (`xxhsum -H1` prints the same): it reads 8 bytes
 * at a time, about as fast as memory delivers them. For results checked a
 * block at a time, feed the blocks in order to lab_digest_add().
 *
 * Plain C: the kit's digest tool compiles it as C11.
 */
#ifndef LAB_DIGEST_H
#define LAB_DIGEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LAB_XXH_P1 0x9E3779B185EBCA87ULL
#define LAB_XXH_P2 0xC2B2AE3D27D4EB4FULL
#define LAB_XXH_P3 0x165667B19E3779F9ULL
#define LAB_XXH_P4 0x85EBCA77C2B2AE63ULL
#define LAB_XXH_P5 0x27D4EB2F165667C5ULL

/* A digest in progress: four lanes over 32-byte stripes, and the bytes of an
 * unfinished stripe. */
struct lab_digest {
    uint64_t lane[4];
    uint64_t total;                 /* bytes added so far */
    unsigned char buf[32];
    size_t nbuf;
};

static inline uint64_t lab_rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t lab_read64(const unsigned char *p)
{
    uint64_t v;

    memcpy(&v, p, 8);               /* little-endian machines: x86-64, arm64 */
    return v;
}

static inline uint64_t lab_xxh_round(uint64_t acc, uint64_t in)
{
    return lab_rotl64(acc + in * LAB_XXH_P2, 31) * LAB_XXH_P1;
}

static inline void lab_digest_init(struct lab_digest *d)
{
    memset(d, 0, sizeof *d);
    d->lane[0] = LAB_XXH_P1 + LAB_XXH_P2;
    d->lane[1] = LAB_XXH_P2;
    d->lane[3] = 0 - LAB_XXH_P1;
}

/* Fold whole 32-byte stripes of p[0..bytes) into the lanes; return the bytes used. */
static inline size_t lab_digest_stripes(struct lab_digest *d, const unsigned char *p,
                                        size_t bytes)
{
    uint64_t v0 = d->lane[0], v1 = d->lane[1], v2 = d->lane[2], v3 = d->lane[3];
    size_t done;

    for (done = 0; done + 32 <= bytes; done += 32, p += 32) {
        v0 = lab_xxh_round(v0, lab_read64(p));
        v1 = lab_xxh_round(v1, lab_read64(p + 8));
        v2 = lab_xxh_round(v2, lab_read64(p + 16));
        v3 = lab_xxh_round(v3, lab_read64(p + 24));
    }
    d->lane[0] = v0;
    d->lane[1] = v1;
    d->lane[2] = v2;
    d->lane[3] = v3;
    return done;
}

/* Add `bytes` bytes at `data` to the digest. */
static inline void lab_digest_add(struct lab_digest *d, const void *data, size_t bytes)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t take;

    d->total += bytes;
    if (d->nbuf > 0) {              /* finish the stripe begun last time */
        take = 32 - d->nbuf < bytes ? 32 - d->nbuf : bytes;
        memcpy(d->buf + d->nbuf, p, take);
        d->nbuf += take;
        p += take;
        bytes -= take;
        if (d->nbuf < 32)
            return;
        lab_digest_stripes(d, d->buf, 32);
        d->nbuf = 0;
    }
    take = lab_digest_stripes(d, p, bytes);
    memcpy(d->buf, p + take, bytes - take);
    d->nbuf = bytes - take;
}

/* The digest of everything added so far (the state is left as it was). */
static inline uint64_t lab_digest_value(const struct lab_digest *d)
{
    const unsigned char *p = d->buf, *end = d->buf + d->nbuf;
    uint64_t h;
    int k;

    if (d->total >= 32) {
        h = lab_rotl64(d->lane[0], 1) + lab_rotl64(d->lane[1], 7) +
            lab_rotl64(d->lane[2], 12) + lab_rotl64(d->lane[3], 18);
        for (k = 0; k < 4; k++)
            h = (h ^ lab_xxh_round(0, d->lane[k])) * LAB_XXH_P1 + LAB_XXH_P4;
    } else {
        h = LAB_XXH_P5;
    }
    h += d->total;
    for (; p + 8 <= end; p += 8)
        h = lab_rotl64(h ^ lab_xxh_round(0, lab_read64(p)), 27) * LAB_XXH_P1 + LAB_XXH_P4;
    if (p + 4 <= end) {
        uint32_t w;

        memcpy(&w, p, 4);
        h = lab_rotl64(h ^ (uint64_t)w * LAB_XXH_P1, 23) * LAB_XXH_P2 + LAB_XXH_P3;
        p += 4;
    }
    for (; p < end; p++)
        h = lab_rotl64(h ^ *p * LAB_XXH_P5, 11) * LAB_XXH_P1;
    h ^= h >> 33;
    h *= LAB_XXH_P2;
    h ^= h >> 29;
    h *= LAB_XXH_P3;
    h ^= h >> 32;
    return h;
}

/* The digest of `bytes` bytes at `data`, in one go. */
static inline uint64_t lab_digest_of(const void *data, size_t bytes)
{
    struct lab_digest d;

    lab_digest_init(&d);
    lab_digest_add(&d, data, bytes);
    return lab_digest_value(&d);
}

/* Print the line the checker compares: "  digest_NAME = 16 hex digits". */
static inline void lab_digest_print(const char *name, uint64_t value)
{
    printf("  digest_%s = %016llx\n", name, (unsigned long long)value);
}

#endif /* LAB_DIGEST_H */
