/*
 * options.h -- the command line of a lab program, read from a table, and the
 * exit codes every lab program shares.
 *
 *   unsigned long long n = 1000, seed = 1;      the defaults
 *   const struct lab_option opts[] = {
 *       { "--n", &n, 1, 1ULL << 30, NULL },      a whole number in [1, 2^30]
 *       { "--seed", &seed, 0, LAB_SEED_MAX, NULL },
 *   };
 *   lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
 *
 * `--n 5` and `--n=5` both work; `-h` or `--help` prints usage_text and exits
 * 0; anything else it does not know prints why, then usage_text, on stderr,
 * and exits 2. An option with `words` takes one of them ("depth", "breadth")
 * and stores its index.
 *
 * Plain C: the kit's digest tool (checker/verify) reads its options with it.
 */
#ifndef LAB_OPTIONS_H
#define LAB_OPTIONS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit codes shared by every lab program: 0 ran and verified, 1 wrong results
 * or a CUDA error, 2 bad command line, 77 no usable CUDA device (the "skip"
 * code of automake and of the checker). */
#define LAB_EXIT_OK       0
#define LAB_EXIT_FAIL     1
#define LAB_EXIT_USAGE    2
#define LAB_EXIT_NODEVICE 77

/* --seed takes a 32-bit whole number: every input a lab makes comes from it. */
#define LAB_SEED_MAX      4294967295ULL

struct lab_option {
    const char *name;               /* "--steps" */
    unsigned long long *value;      /* holds the default; gets what was given */
    unsigned long long lo, hi;      /* the range of a number */
    const char *const *words;       /* or the words it takes, ending in NULL */
};

/*
 * Parse a whole number for option `opt`, within [lo, hi].
 * Return 0 and set *out on success; print why on stderr and return -1.
 */
static inline int lab_parse_size(const char *opt, const char *arg,
                                 unsigned long long lo, unsigned long long hi,
                                 unsigned long long *out)
{
    char *end = NULL;
    unsigned long long v;

    if (arg == NULL || *arg < '0' || *arg > '9') {
        fprintf(stderr, "%s needs a whole number from %llu to %llu\n", opt, lo, hi);
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

/* Set *o's value from `arg`. Return 0, or say why on stderr and return -1. */
static inline int lab_option_set(const struct lab_option *o, const char *arg)
{
    unsigned long long i;

    if (o->words == NULL)
        return lab_parse_size(o->name, arg, o->lo, o->hi, o->value);
    for (i = 0; arg != NULL && o->words[i] != NULL; i++) {
        if (strcmp(arg, o->words[i]) == 0) {
            *o->value = i;
            return 0;
        }
    }
    fprintf(stderr, "%s takes one of:", o->name);
    for (i = 0; o->words[i] != NULL; i++)
        fprintf(stderr, " %s", o->words[i]);
    fprintf(stderr, "\n");
    return -1;
}

/* Read argv into the table opts[0..count). Exits 0 after -h, 2 on a bad option. */
static inline void lab_parse_options(int argc, char **argv, const char *usage_text,
                                     const struct lab_option *opts, size_t count)
{
    const struct lab_option *o;
    const char *arg, *eq;
    size_t len, k;
    int i;

    for (i = 1; i < argc; i++) {
        arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(usage_text, stdout);
            exit(LAB_EXIT_OK);
        }
        eq = strchr(arg, '=');
        len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        for (o = NULL, k = 0; k < count && o == NULL; k++)
            if (strncmp(arg, opts[k].name, len) == 0 && opts[k].name[len] == '\0')
                o = &opts[k];
        if (o == NULL) {
            fprintf(stderr, "%s: %s\n", arg[0] == '-' ? "unknown option"
                                                      : "unexpected argument", arg);
            break;
        }
        /* --name=VALUE, or --name VALUE */
        if (lab_option_set(o, eq != NULL ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL)) != 0)
            break;
    }
    if (i < argc) {
        fputs(usage_text, stderr);
        exit(LAB_EXIT_USAGE);
    }
}

/* The command line of labs 01 and 02, the one table both read: --n in
 * [1, 2^30], --steps in [1, steps_max], --seed. The variables hold the
 * defaults. */
static inline void lab_parse_n_steps_seed(int argc, char **argv, const char *usage_text,
                                          unsigned long long *n, unsigned long long *steps,
                                          unsigned long long steps_max,
                                          unsigned long long *seed)
{
    const struct lab_option opts[] = {
        { "--n", n, 1, 1ULL << 30, NULL },
        { "--steps", steps, 1, steps_max, NULL },
        { "--seed", seed, 0, LAB_SEED_MAX, NULL },
    };

    lab_parse_options(argc, argv, usage_text, opts, sizeof opts / sizeof *opts);
}

#endif /* LAB_OPTIONS_H */
