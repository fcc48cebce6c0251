/*
 * digests.c -- the digests of the right results of a lab program's run,
 * computed by the kit, not by the program.
 *
 *   checker/verify/digests LAB [OPTIONS...]      LAB: 01-sync-copy, or 01
 *   checker/verify/digests --options LAB         the lab's options, one a line:
 *                                                NAME DEFAULT LO HI (or WORDS)
 *
 * Given the options a lab program was run with, --seed included, it prints
 * the lines the program prints for each result it verifies, each with the
 * digest of the right result:
 *
 *   $ checker/verify/digests 01 --n 1000 --seed 7
 *     digest_out = 0123456789abcdef
 *
 * The checker holds a run's digest lines against these (check_digests in
 * checker/lib/checks.bash): a program whose verify() was edited, or that
 * prints its RESULT line by hand, has the wrong digests or none. The inputs,
 * the reference and the digest are common/scramble.h and common/digest.h, the
 * code the labs use; the options are read with common/options.h, with each
 * lab's names, ranges and defaults, as in its .cu file (checker/tests/
 * verify.bats holds the two against each other). Exit status 0; 2 on a bad
 * command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "digest.h"
#include "scramble.h"

#define MAX_OPTS 10
#define BLOCK    65536              /* elements made and digested at a time */

/* ---------------------------------------------------------------- results */

/*
 * The digest of K steps from input `salt` of `seed`, elements [0, n): from
 * in[i] ^ key[i % key_n] when key is not NULL. Made a block at a time.
 */
static uint64_t scramble_digest(size_t n, uint32_t steps, uint32_t seed, uint32_t salt,
                                const uint32_t *key, size_t key_n)
{
    static uint32_t out[BLOCK];
    struct lab_digest d;
    uint32_t a, c, x;
    size_t b, i, len;

    affine_power(steps, &a, &c);
    lab_digest_init(&d);
    for (b = 0; b < n; b += len) {
        len = n - b < BLOCK ? n - b : BLOCK;
        for (i = 0; i < len; i++) {
            x = lab_input(seed, salt, b + i);
            out[i] = a * (key != NULL ? x ^ key[(b + i) % key_n] : x) + c;
        }
        lab_digest_add(&d, out, len * sizeof *out);
    }
    return lab_digest_value(&d);
}

/* malloc or exit 1. */
static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);

    if (p == NULL) {
        fprintf(stderr, "digests: out of memory for %zu bytes\n", bytes);
        exit(LAB_EXIT_FAIL);
    }
    return p;
}

/* ---------------------------------------------------------------- per lab */

/* Each takes the option values in the order of the lab's table below. */

/* 01-sync-copy, 02-async-copy: --n, --steps, --seed. One result. */
static void scramble_out(const unsigned long long *v)
{
    lab_digest_print("out", scramble_digest(v[0], (uint32_t)v[1], (uint32_t)v[2], 0, NULL, 1));
}

/* 03-pinned-memory: --max-mib, --seed. The round trip of each kind of memory
 * brings back input 1, 2, 3 (pageable, pinned, registered), as large as the
 * largest of the sizes 64 KiB, 256 KiB, ... up to --max-mib (12 at most). */
static void pinned_memory(const unsigned long long *v)
{
    static const char *const kind[] = { "pageable", "pinned", "registered" };
    size_t s, largest = 0, nsizes = 0;
    int k;

    for (s = 64 << 10; s <= (size_t)(v[0] << 20) && nsizes < 12; s *= 4, nsizes++)
        largest = s;
    for (k = 0; k < 3; k++)         /* 0 steps: back as sent */
        lab_digest_print(kind[k], scramble_digest(largest / sizeof(uint32_t), 0,
                                                  (uint32_t)v[1], (uint32_t)k + 1, NULL, 1));
}

/* 04-events: --part, --steps, --seed, on 2^20 + 3 numbers of input 0. Part
 * 1: K steps each; part 3: y[i] + y[n-1-i] of those. */
static void events(const unsigned long long *v)
{
    const size_t n = 1048579;
    uint32_t a, c, *y;
    size_t i;

    if (v[0] == 0 || v[0] == 1)
        lab_digest_print("part1", scramble_digest(n, (uint32_t)v[1], (uint32_t)v[2], 0, NULL, 1));
    if (v[0] == 0 || v[0] == 3) {
        y = (uint32_t *)xmalloc(2 * n * sizeof *y);
        affine_power((uint32_t)v[1], &a, &c);
        for (i = 0; i < n; i++)
            y[i] = a * lab_input((uint32_t)v[2], 0, i) + c;
        for (i = 0; i < n; i++)
            y[n + i] = y[i] + y[n - 1 - i];
        lab_digest_print("part3", lab_digest_of(y + n, n * sizeof *y));
        free(y);
    }
}

/* 05-overlap: --streams, --chunks, --size-mib, --steps, --reps, --seed. The
 * same result five ways: sequential and pipelined in both orders on all n
 * numbers; both orders again on the uneven shape, the first 2^22 (16 MiB) at
 * most. */
static void overlap(const unsigned long long *v)
{
    size_t n = v[2] * (1048576 / sizeof(uint32_t)), part = n < (4u << 20) ? n : 4u << 20;
    uint32_t steps = (uint32_t)v[3], seed = (uint32_t)v[5];
    uint64_t all = scramble_digest(n, steps, seed, 0, NULL, 1);
    uint64_t first = part < n ? scramble_digest(part, steps, seed, 0, NULL, 1) : all;

    lab_digest_print("sequential", all);
    lab_digest_print("depth_first", all);
    lab_digest_print("breadth_first", all);
    lab_digest_print("uneven_depth_first", first);
    lab_digest_print("uneven_breadth_first", first);
}

/* 06-lifetime: --scenario, --chunks, --n, --steps, --seed. Scenario s works
 * on input s; scenario 2 on two halves of n, the others on `chunks` chunks
 * of n, and scenario 3 mixes chunk j with key j (input 16 + j, 1024 words). */
static void lifetime(const unsigned long long *v)
{
    const size_t key_n = 1024;
    size_t n = v[2], total = v[2] * v[1], j;
    uint32_t steps = (uint32_t)v[3], seed = (uint32_t)v[4], *key, *out, a, c;
    struct lab_digest d;
    char name[16];
    int sc;

    for (sc = 1; sc <= 4; sc++) {
        if (v[0] != 0 && v[0] != (unsigned long long)sc)
            continue;
        snprintf(name, sizeof name, "scenario%d", sc);
        if (sc != 3) {
            lab_digest_print(name, scramble_digest(sc == 2 ? 2 * n : total, steps, seed,
                                                   (uint32_t)sc, NULL, 1));
            continue;
        }
        key = (uint32_t *)xmalloc(key_n * sizeof *key);
        out = (uint32_t *)xmalloc(n * sizeof *out);
        affine_power(steps, &a, &c);
        lab_digest_init(&d);
        for (j = 0; j < v[1]; j++) {
            size_t i;

            lab_fill(key, key_n, seed, 16 + (uint32_t)j);
            for (i = 0; i < n; i++)
                out[i] = a * (lab_input(seed, 3, j * n + i) ^ key[i % key_n]) + c;
            lab_digest_add(&d, out, n * sizeof *out);
        }
        lab_digest_print(name, lab_digest_value(&d));
        free(key);
        free(out);
    }
}

/* 07-default-streams: --part, --seed. Part 1 has no result to check. Part 2:
 * two host threads' 2^15 numbers each (inputs 1 and 2), 2^13 steps, digested
 * one after the other; run as given and on per-thread streams, the same
 * result twice. Part 3: 2^26 numbers of input 3 at 512 steps, and the bins
 * of each of its 16 chunks (scramble_bins), one chunk after the other. */
static void default_streams(const unsigned long long *v)
{
    const size_t tn = 1u << 15, pn = 64u << 20, chunks = 16;
    const uint32_t tsteps = 1u << 13, psteps = 512, seed = (uint32_t)v[1];
    uint32_t *buf, *bins, a, c;
    struct lab_digest d;
    size_t k, i, first, len;
    uint64_t threads;

    if (v[0] == 0 || v[0] == 2) {
        buf = (uint32_t *)xmalloc(tn * sizeof *buf);
        affine_power(tsteps, &a, &c);
        lab_digest_init(&d);
        for (k = 0; k < 2; k++) {
            for (i = 0; i < tn; i++)
                buf[i] = a * lab_input(seed, 1 + (uint32_t)k, i) + c;
            lab_digest_add(&d, buf, tn * sizeof *buf);
        }
        threads = lab_digest_value(&d);
        free(buf);
        lab_digest_print("threads_legacy", threads);
        lab_digest_print("threads_per_thread", threads);
    }
    if (v[0] == 0 || v[0] == 3) {
        lab_digest_print("pipeline", scramble_digest(pn, psteps, seed, 3, NULL, 1));
        buf = (uint32_t *)xmalloc((pn / chunks + 1) * sizeof *buf);
        bins = (uint32_t *)xmalloc(chunks * LAB_NBINS * sizeof *bins);
        for (k = 0; k < chunks; k++) {
            first = pn * k / chunks;
            len = pn * (k + 1) / chunks - first;
            for (i = 0; i < len; i++)
                buf[i] = lab_input(seed, 3, first + i);
            scramble_bins(bins + k * LAB_NBINS, buf, len, psteps);
        }
        lab_digest_print("bins", lab_digest_of(bins, chunks * LAB_NBINS * sizeof *bins));
        free(buf);
        free(bins);
    }
}

/* 08-pytorch: --part, --size-mib, --batches, --batch-mib, --steps, --seed.
 * A result is folded to 4096 numbers before it is digested (fold_add):
 * column j of its rows of 4096 summed, row r times 2r+1, mod 2^32 (the
 * Python program folds on the GPU the same way). Part 1: input 0 as sent,
 * size-mib MiB; part 2: batch b is input 1 + b, batch-mib MiB each, out[i] =
 * (K steps from x[i]) ^ x[i]; one digest of the folds of every batch. */
#define FOLD_COLS 4096
static void fold_add(struct lab_digest *d, uint32_t seed, uint32_t salt, size_t n,
                     int steps_on, uint32_t steps)
{
    uint32_t col[FOLD_COLS], a = 1, c = 0, x;
    size_t i;

    memset(col, 0, sizeof col);
    if (steps_on)
        affine_power(steps, &a, &c);
    for (i = 0; i < n; i++) {
        x = lab_input(seed, salt, i);
        if (steps_on)
            x = (a * x + c) ^ x;
        col[i % FOLD_COLS] += x * (uint32_t)(2 * (i / FOLD_COLS) + 1);
    }
    lab_digest_add(d, col, sizeof col);
}

static void pytorch(const unsigned long long *v)
{
    const size_t mib = 1048576 / sizeof(uint32_t);
    uint32_t seed = (uint32_t)v[5];
    struct lab_digest d;
    unsigned long long b;

    if (v[0] == 0 || v[0] == 1) {
        lab_digest_init(&d);
        fold_add(&d, seed, 0, v[1] * mib, 0, 0);
        lab_digest_print("copy", lab_digest_value(&d));
    }
    if (v[0] == 0 || v[0] == 2) {
        lab_digest_init(&d);
        for (b = 0; b < v[2]; b++)
            fold_add(&d, seed, 1 + (uint32_t)b, v[3] * mib, 1, (uint32_t)v[4]);
        lab_digest_print("batches", lab_digest_value(&d));
    }
}

/* 09-multi-gpu: --part, --size-mib, --chunks, --streams, --steps, --reps,
 * --peer-mib, --seed. Part 1: K steps of input 0, size-mib MiB, whichever
 * GPU computed which slice, sequential and pipelined. Part 2: 2^22 numbers
 * of input 1 through the producer's 16384 steps and the consumer's 16. Part
 * 3: each GPU's halo holds the other's numbers, peer-mib MiB each as sent:
 * GPU 0's (input 3), then GPU 1's (input 2); staged and direct alike. */
static void multi_gpu(const unsigned long long *v)
{
    const size_t mib = 1048576 / sizeof(uint32_t), pn = v[6] * mib;
    uint32_t seed = (uint32_t)v[7], *buf;
    struct lab_digest d;
    uint64_t halos;
    uint32_t salt;
    size_t b, len;

    if (v[0] == 0 || v[0] == 1) {
        uint64_t all = scramble_digest(v[1] * mib, (uint32_t)v[4], seed, 0, NULL, 1);

        lab_digest_print("sequential", all);
        lab_digest_print("pipelined", all);
    }
    if (v[0] == 0 || v[0] == 2)
        lab_digest_print("event", scramble_digest(1u << 22, 16384 + 16, seed, 1, NULL, 1));
    if (v[0] == 0 || v[0] == 3) {
        buf = (uint32_t *)xmalloc(BLOCK * sizeof *buf);
        lab_digest_init(&d);
        for (salt = 3; salt >= 2; salt--)
            for (b = 0; b < pn; b += len) {
                len = pn - b < BLOCK ? pn - b : BLOCK;
                lab_fill_at(buf, len, seed, salt, b);
                lab_digest_add(&d, buf, len * sizeof *buf);
            }
        halos = lab_digest_value(&d);
        free(buf);
        lab_digest_print("staged", halos);
        lab_digest_print("direct", halos);
    }
}

/* 10-graphs: --part, --kernels, --replays, --seed. Part 1: 4096 numbers of
 * input 0, --replays x --kernels small kernels of 8 steps each, on a stream
 * and as graph replays. Part 2: 2^20 numbers of input 1, ya = 16 + 4096
 * steps (branch A), yb = 16 + 8192 (branch B), out[i] = ya(in[i]) +
 * yb(in[n-1-i]), on the streams and in the graph's replays. Part 3: 2^16 numbers of input 2, 100 steps, then 1000 after the
 * graph's update. */
static void graphs(const unsigned long long *v)
{
    const size_t fn = 1u << 20;
    uint32_t seed = (uint32_t)v[3], a, c, *y;
    uint64_t fork;
    size_t i;

    if (v[0] == 0 || v[0] == 1) {
        uint64_t all = scramble_digest(4096, (uint32_t)(v[1] * v[2] * 8), seed, 0, NULL, 1);

        lab_digest_print("stream", all);
        lab_digest_print("graph", all);
    }
    if (v[0] == 0 || v[0] == 2) {
        y = (uint32_t *)xmalloc(2 * fn * sizeof *y);
        affine_power(16 + 8192, &a, &c);            /* branch B */
        for (i = 0; i < fn; i++)
            y[i] = a * lab_input(seed, 1, i) + c;
        affine_power(16 + 4096, &a, &c);            /* branch A */
        for (i = 0; i < fn; i++)
            y[fn + i] = a * lab_input(seed, 1, i) + c + y[fn - 1 - i];
        fork = lab_digest_of(y + fn, fn * sizeof *y);
        free(y);
        lab_digest_print("fork_stream", fork);
        lab_digest_print("fork_graph", fork);
    }
    if (v[0] == 0 || v[0] == 3) {
        lab_digest_print("update_before", scramble_digest(1u << 16, 100, seed, 2, NULL, 1));
        lab_digest_print("update_after", scramble_digest(1u << 16, 1000, seed, 2, NULL, 1));
    }
}

/* ---------------------------------------------------------------- the table */

/* An option as the lab program takes it: name, default, range (or words). */
struct spec {
    const char *name;
    unsigned long long def, lo, hi;
    const char *const *words;
};

struct lab {
    const char *id, *usage;
    struct spec opt[MAX_OPTS];      /* ends with a NULL name */
    void (*print)(const unsigned long long *v);
};

#define SEED { "--seed", 1, 0, LAB_SEED_MAX, NULL }

static const struct lab lab_table[] = {
    { "01-sync-copy", "usage: digests 01-sync-copy [--n N] [--steps K] [--seed S]\n",
      { { "--n", 16777219, 1, 1ULL << 30, NULL }, { "--steps", 1024, 1, 1ULL << 20, NULL },
        SEED }, scramble_out },
    { "02-async-copy", "usage: digests 02-async-copy [--n N] [--steps K] [--seed S]\n",
      { { "--n", 16777219, 1, 1ULL << 30, NULL }, { "--steps", 16384, 1, 1ULL << 24, NULL },
        SEED }, scramble_out },
    { "03-pinned-memory", "usage: digests 03-pinned-memory [--max-mib N] [--seed S]\n",
      { { "--max-mib", 256, 1, 1024, NULL }, SEED }, pinned_memory },
    { "04-events", "usage: digests 04-events [--part N] [--steps K] [--seed S]\n",
      { { "--part", 0, 1, 3, NULL }, { "--steps", 16384, 1, 1ULL << 24, NULL }, SEED },
      events },
    { "05-overlap", "usage: digests 05-overlap [--streams S] [--chunks C] [--size-mib N]"
                    " [--steps K] [--reps R] [--seed S]\n",
      { { "--streams", 16, 1, 32, NULL },
        { "--chunks", 16, 1, 1024, NULL }, { "--size-mib", 256, 1, 4096, NULL },
        { "--steps", 768, 1, 1ULL << 20, NULL }, { "--reps", 5, 1, 100, NULL }, SEED },
      overlap },
    { "06-lifetime", "usage: digests 06-lifetime [--scenario N] [--chunks C] [--n N]"
                     " [--steps K] [--seed S]\n",
      { { "--scenario", 0, 1, 4, NULL }, { "--chunks", 8, 2, 64, NULL },
        { "--n", 1048576, 1024, 1ULL << 26, NULL }, { "--steps", 32768, 1, 1ULL << 20, NULL },
        SEED }, lifetime },
    { "07-default-streams", "usage: digests 07-default-streams [--part N] [--seed S]\n",
      { { "--part", 0, 1, 3, NULL }, SEED }, default_streams },
    { "08-pytorch", "usage: digests 08-pytorch [--part N] [--size-mib N] [--batches B]"
                    " [--batch-mib M] [--steps K] [--seed S]\n",
      { { "--part", 0, 1, 3, NULL }, { "--size-mib", 256, 1, 2048, NULL },
        { "--batches", 4, 2, 16, NULL }, { "--batch-mib", 64, 1, 512, NULL },
        { "--steps", 32, 1, 4096, NULL }, SEED }, pytorch },
    { "09-multi-gpu", "usage: digests 09-multi-gpu [--part N] [--size-mib N] [--chunks C]"
                      " [--streams S] [--steps K] [--reps R] [--peer-mib N] [--seed S]\n",
      { { "--part", 0, 1, 3, NULL }, { "--size-mib", 256, 1, 4096, NULL },
        { "--chunks", 8, 1, 256, NULL }, { "--streams", 4, 1, 16, NULL },
        { "--steps", 768, 1, 1ULL << 20, NULL }, { "--reps", 3, 1, 20, NULL },
        { "--peer-mib", 64, 1, 1024, NULL }, SEED }, multi_gpu },
    { "10-graphs", "usage: digests 10-graphs [--part N] [--kernels N] [--replays K] [--seed S]\n",
      { { "--part", 0, 1, 3, NULL }, { "--kernels", 32, 1, 256, NULL },
        { "--replays", 200, 1, 10000, NULL }, SEED }, graphs },
};

/* The lab whose id is `arg` or starts with `arg` and a dash (01). */
static const struct lab *find_lab(const char *arg)
{
    size_t i, len = strlen(arg);

    for (i = 0; i < sizeof lab_table / sizeof *lab_table; i++)
        if (strcmp(lab_table[i].id, arg) == 0 ||
            (len > 0 && strncmp(lab_table[i].id, arg, len) == 0 && lab_table[i].id[len] == '-'))
            return &lab_table[i];
    return NULL;
}

static const char usage_text[] =
    "usage: digests LAB [OPTIONS...]   the digest lines of LAB's right results\n"
    "       digests --options LAB      LAB's options: NAME DEFAULT LO HI (or WORDS)\n"
    "LAB: 01-sync-copy ... 10-graphs, or its number; OPTIONS: as the lab program's.\n";

int main(int argc, char **argv)
{
    struct lab_option opts[MAX_OPTS];
    unsigned long long v[MAX_OPTS];
    const struct lab *lab;
    int list = argc > 1 && strcmp(argv[1], "--options") == 0;
    size_t k, n;

    lab = argc > 1 + list ? find_lab(argv[1 + list]) : NULL;
    if (lab == NULL) {
        if (argc > 1 + list)
            fprintf(stderr, "digests: no lab %s\n", argv[1 + list]);
        fputs(usage_text, stderr);
        return LAB_EXIT_USAGE;
    }
    for (n = 0; n < MAX_OPTS && lab->opt[n].name != NULL; n++) {
        const struct spec *s = &lab->opt[n];

        v[n] = s->def;
        opts[n].name = s->name;
        opts[n].value = &v[n];
        opts[n].lo = s->lo;
        opts[n].hi = s->hi;
        opts[n].words = s->words;
        if (!list)
            continue;
        printf("%s %llu", s->name, s->def);
        if (s->words == NULL)
            printf(" %llu %llu\n", s->lo, s->hi);
        for (k = 0; s->words != NULL && s->words[k] != NULL; k++)
            printf("%s%s", k ? "," : " ", s->words[k]);
        if (s->words != NULL)
            printf("\n");
    }
    if (list)
        return LAB_EXIT_OK;
    lab_parse_options(argc - 1, argv + 1, lab->usage, opts, n);
    lab->print(v);
    return LAB_EXIT_OK;
}
