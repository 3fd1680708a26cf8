/*
 * fibkit through its C API beside DPDK's rte_lpm and rte_fib (DIR-24-8),
 * on one table, with the same xorshift keys, in one process.
 *
 *   bench_dpdk TABLE [--nexthops N] [--engines d16r,d18r,poptrie18]
 *                    [--runs 5] [--seconds 0.25] [--thp] [--json PATH]
 *
 * First every implementation answers 1,000,000 random addresses and every
 * route's first and last address and their neighbours; any difference
 * between them is printed and the program exits 1. Then the DXR and
 * Poptrie papers' tests run, each implementation in turn within every
 * round (A B C A B C, so a shared machine's swings spread over all):
 *   SEQ   each key is a random number XORed with the previous answer;
 *   RND   independent random keys (Marsaglia's xorshift32);
 *   REP   a window of 8 random keys, one new per step, all 8 looked up;
 *   x4    RND through rte_lpm_lookupx4 (rte_lpm only);
 *   bulk  RND in batches of 64 keys through each bulk call (keys from 16
 *         xorshift32 lanes);
 *   2 thr RND scalar and bulk on two threads (their own seeds).
 * Every stream is the one `fibkit bench` draws for the same test and worker
 * (bench_keys.h), so that the two harnesses measure the same lookups.
 * Figures are millions of lookups per second: the median of the runs with
 * the lowest and highest. The `ceiling` row is one random load from a 1
 * MiB table per key (scalar, and 64 keys at a time), as fibkit's `ceiling`
 * example measures it: compare ratios to it across machines. --json
 * writes the figures to PATH as well, for bench_compare.py to set beside
 * `fibkit bench`'s.
 *
 * Built without DPDK (pkg-config finds no libdpdk), it measures fibkit
 * alone. DPDK's EAL runs with --no-huge --no-pci: on 4 KiB pages its
 * 64 MiB tbl24 costs a TLB miss on nearly every lookup, which understates
 * DIR-24-8 beside a machine with huge pages. --thp asks the kernel for
 * transparent huge pages on DPDK's memory (madvise), where it gives them.
 */
#define _GNU_SOURCE
#include "fibkit.h"
#include "bench_keys.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifdef FIBKIT_WITH_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_lpm.h>
#include <rte_memory.h>
#endif

#define MAX_IMPLS 12
#define MAX_RUNS 15
#define BATCH 64

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "bench_dpdk: %s: %s\n", what, fibkit_last_error() ? fibkit_last_error() : "failed");
    exit(2);
}

/* ---- The implementations ---- */

enum kind { FIBKIT, CEILING, LPM, RTEFIB };

typedef struct {
    enum kind kind;
    char name[32];
    const fibkit_fib *fib;
    const uint32_t *ceiling;
#ifdef FIBKIT_WITH_DPDK
    struct rte_lpm *lpm;
    struct rte_fib *rte_fib;
#endif
    double footprint_mib, build_ms;
} impl;

#define CEILING_MASK ((UINT32_C(1) << 18) - 1) /* 1 MiB of uint32_t */

static inline uint32_t ceiling_one(const impl *im, uint32_t key) { return im->ceiling[key & CEILING_MASK]; }

static inline uint32_t fibkit_one(const impl *im, uint32_t key) { return fibkit_lookup4(im->fib, key); }

/* One scalar load per key, as the scalar ceiling (not a vector gather). */
__attribute__((optimize("no-tree-vectorize"))) static void ceiling_bulk(const impl *im, const uint32_t *keys, uint32_t *out, unsigned n) {
    for (unsigned i = 0; i < n; i++) out[i] = im->ceiling[keys[i] & CEILING_MASK];
}

static void fibkit_bulk(const impl *im, const uint32_t *keys, uint32_t *out, unsigned n) {
    fibkit_lookup4_bulk(im->fib, keys, out, n);
}

#ifdef FIBKIT_WITH_DPDK
static inline uint32_t lpm_one(const impl *im, uint32_t key) {
    uint32_t next_hop;
    return rte_lpm_lookup(im->lpm, key, &next_hop) == 0 ? next_hop : 0;
}

static void lpm_bulk(const impl *im, const uint32_t *keys, uint32_t *out, unsigned n) {
    rte_lpm_lookup_bulk(im->lpm, keys, out, n);
    for (unsigned i = 0; i < n; i++) out[i] = out[i] & RTE_LPM_LOOKUP_SUCCESS ? out[i] & 0x00ffffff : 0;
}

static void lpm_x4(const impl *im, const uint32_t *keys, uint32_t *out, unsigned n) {
    for (unsigned i = 0; i + 4 <= n; i += 4) {
        xmm_t ip = _mm_loadu_si128((const __m128i *)(keys + i));
        rte_lpm_lookupx4(im->lpm, ip, out + i, 0);
    }
}

static void rtefib_bulk(const impl *im, const uint32_t *keys, uint32_t *out, unsigned n) {
    uint64_t wide[BATCH];
    for (unsigned done = 0; done < n; done += BATCH) {
        unsigned step = n - done < BATCH ? n - done : BATCH;
        rte_fib_lookup_bulk(im->rte_fib, (uint32_t *)(keys + done), wide, (int)step);
        for (unsigned i = 0; i < step; i++) out[done + i] = (uint32_t)wide[i];
    }
}
#endif

/* ---- The tests, one loop per implementation so each lookup inlines ---- */

enum test { SEQ, RND, REP, X4, BULK, RND2, BULK2, TESTS };
static const char *test_names[TESTS] = {"SEQ", "RND", "REP", "RND x4", "RND bulk", "RND 2thr", "bulk 2thr"};

#define SCALAR_LOOPS(NAME, ONE)                                                                     \
    static uint64_t NAME##_seq(const impl *im, uint64_t n, uint32_t seed) {                        \
        uint32_t state = seed, previous = 0;                                                        \
        uint64_t sum = 0;                                                                           \
        for (uint64_t i = 0; i < n; i++) sum += previous = ONE(im, xorshift32(&state) ^ previous); \
        return sum;                                                                                 \
    }                                                                                               \
    static uint64_t NAME##_rnd(const impl *im, uint64_t n, uint32_t seed) {                        \
        uint32_t state = seed;                                                                      \
        uint64_t sum = 0;                                                                           \
        for (uint64_t i = 0; i < n; i++) sum += ONE(im, xorshift32(&state));                        \
        return sum;                                                                                 \
    }                                                                                               \
    static uint64_t NAME##_rep(const impl *im, uint64_t n, uint32_t seed) {                        \
        uint32_t state = seed, window[8];                                                           \
        uint64_t sum = 0;                                                                           \
        for (int i = 0; i < 8; i++) window[i] = xorshift32(&state);                                 \
        for (uint64_t step = 0; step < n / 8; step++) {                                             \
            window[step % 8] = xorshift32(&state);                                                  \
            for (int i = 0; i < 8; i++) sum += ONE(im, window[i]);                                  \
        }                                                                                           \
        return sum;                                                                                 \
    }

SCALAR_LOOPS(ceiling, ceiling_one)
SCALAR_LOOPS(fibkit, fibkit_one)
#ifdef FIBKIT_WITH_DPDK
SCALAR_LOOPS(lpm, lpm_one)
#endif

typedef void (*bulk_fn)(const impl *, const uint32_t *, uint32_t *, unsigned);

static uint64_t bulk_rnd(const impl *im, bulk_fn bulk, uint64_t n, uint64_t seed) {
    uint32_t lanes[LANES], keys[BATCH], out[BATCH];
    uint64_t sum = 0;
    lanes_seed(lanes, seed);
    for (uint64_t done = 0; done < n; done += BATCH) {
        lanes_fill(lanes, keys, BATCH);
        bulk(im, keys, out, BATCH);
        for (int i = 0; i < BATCH; i++) sum += out[i];
    }
    return sum;
}

static bulk_fn bulk_of(const impl *im, enum test test) {
    switch (im->kind) {
    case CEILING: return test == X4 ? NULL : ceiling_bulk;
    case FIBKIT: return test == X4 ? NULL : fibkit_bulk;
#ifdef FIBKIT_WITH_DPDK
    case LPM: return test == X4 ? lpm_x4 : lpm_bulk;
    case RTEFIB: return test == X4 ? NULL : rtefib_bulk;
#endif
    default: return NULL;
    }
}

/* Runs `test` for `n` lookups as worker `thread` (its keys are those of
 * fibkit bench's worker `thread`); returns the checksum, or UINT64_MAX
 * when the implementation has no such path. */
static uint64_t run(const impl *im, enum test test, uint64_t n, unsigned thread) {
    if (test == X4 || test == BULK || test == BULK2) {
        bulk_fn bulk = bulk_of(im, test);
        return bulk ? bulk_rnd(im, bulk, n, bench_seed(thread)) : UINT64_MAX;
    }
    enum test scalar = test == RND2 ? RND : test;
    uint32_t state = bench_scalar(bench_seed(thread));
#define DISPATCH(NAME)                                               \
    return scalar == SEQ ? NAME##_seq(im, n, state)                  \
         : scalar == RND ? NAME##_rnd(im, n, state)                  \
                         : NAME##_rep(im, n, state)
    switch (im->kind) {
    case CEILING: DISPATCH(ceiling);
    case FIBKIT: DISPATCH(fibkit);
#ifdef FIBKIT_WITH_DPDK
    case LPM: DISPATCH(lpm);
#endif
    default: return UINT64_MAX; /* rte_fib: bulk only */
    }
}

typedef struct {
    const impl *im;
    enum test test;
    uint64_t n;
    unsigned thread;
    uint64_t sum;
} job;

/* The CPUs the process may run on, taken at its start. */
static cpu_set_t allowed;

/* Pins the calling thread to the `worker`-th allowed CPU, as fibkit bench
 * pins its worker `worker` to a core: a thread the scheduler moves between
 * cores finds its table gone from the new core's L2, and measured 0 to 20%
 * below the pinned Rust harness, varying from run to run. */
static void pin(unsigned worker) {
    int cpus = CPU_COUNT(&allowed), seen = 0;
    for (int cpu = 0; cpus > 0 && cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed) || seen++ != (int)(worker % (unsigned)cpus)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) die("pthread_setaffinity_np");
        return;
    }
}

static void *run_job(void *argument) {
    job *j = argument;
    pin(j->thread);
    j->sum = run(j->im, j->test, j->n, j->thread);
    return NULL;
}

static volatile uint64_t sink;

/* Millions of lookups per second of `test`, or -1 without such a path. */
static double measure(const impl *im, enum test test, uint64_t n) {
    int threads = test == RND2 || test == BULK2 ? 2 : 1;
    double start = now();
    if (threads == 1) {
        pin(0);
        uint64_t sum = run(im, test, n, 0);
        if (sum == UINT64_MAX) return -1;
        sink += sum;
    } else {
        job jobs[2] = {{im, test, n, 0, 0}, {im, test, n, 1, 0}};
        pthread_t other;
        if (pthread_create(&other, NULL, run_job, &jobs[1]) != 0) die("pthread_create");
        run_job(&jobs[0]);
        pthread_join(other, NULL);
        if (jobs[0].sum == UINT64_MAX) return -1;
        sink += jobs[0].sum + jobs[1].sum;
    }
    return (double)(n * (uint64_t)threads) / (now() - start) / 1e6;
}

/* ---- Building ---- */

typedef struct {
    uint32_t *slash24; /* /24s under prefixes longer than /24 */
    size_t count, capacity;
    uint32_t max_next_hop;
    size_t routes;
} table_shape;

static int shape_route(void *context, uint32_t addr, uint8_t prefix_len, uint32_t next_hop) {
    table_shape *shape = context;
    shape->routes++;
    if (next_hop > shape->max_next_hop) shape->max_next_hop = next_hop;
    if (prefix_len > 24 && (shape->count == 0 || shape->slash24[shape->count - 1] != addr >> 8)) {
        if (shape->count == shape->capacity) {
            shape->capacity = shape->capacity ? 2 * shape->capacity : 1024;
            shape->slash24 = realloc(shape->slash24, shape->capacity * sizeof *shape->slash24);
            if (!shape->slash24) die("realloc");
        }
        shape->slash24[shape->count++] = addr >> 8;
    }
    return 0;
}

#ifdef FIBKIT_WITH_DPDK
static int lpm_add(void *context, uint32_t addr, uint8_t prefix_len, uint32_t next_hop) {
    return rte_lpm_add(context, addr, prefix_len, next_hop) == 0 ? 0 : 1;
}

static int rtefib_add(void *context, uint32_t addr, uint8_t prefix_len, uint32_t next_hop) {
    return rte_fib_add(context, addr, prefix_len, next_hop) == 0 ? 0 : 1;
}

static int madvise_memseg_list(const struct rte_memseg_list *list, void *argument) {
    (void)argument;
    if (list->base_va && madvise(list->base_va, list->len, MADV_HUGEPAGE) != 0) perror("madvise");
    return 0;
}
#endif

/* ---- Checking ---- */

typedef struct {
    uint32_t *keys;
    size_t count, capacity;
} key_list;

static void push_key(key_list *list, uint32_t key) {
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 1 << 20;
        list->keys = realloc(list->keys, list->capacity * sizeof *list->keys);
        if (!list->keys) die("realloc");
    }
    list->keys[list->count++] = key;
}

static int boundary_keys(void *context, uint32_t addr, uint8_t prefix_len, uint32_t next_hop) {
    (void)next_hop;
    uint32_t last = addr | (prefix_len == 0 ? ~UINT32_C(0) : ~(~UINT32_C(0) << (32 - prefix_len)));
    push_key(context, addr);
    push_key(context, last);
    push_key(context, addr - 1);
    push_key(context, last + 1);
    return 0;
}

/* The scalar lookup of `im`, for the check (rte_fib has none). */
static uint32_t one(const impl *im, uint32_t key) {
#ifdef FIBKIT_WITH_DPDK
    if (im->kind == LPM) return lpm_one(im, key);
#endif
    return fibkit_one(im, key);
}

/* Every implementation's scalar and bulk answers against the first's:
 * the number of differences (the first ten are printed). */
static size_t check(impl *impls, int count, const key_list *keys) {
    uint32_t *expected = malloc(keys->count * sizeof *expected), *out = malloc(keys->count * sizeof *out);
    if (!expected || !out) die("malloc");
    for (size_t i = 0; i < keys->count; i++) expected[i] = fibkit_one(&impls[0], keys->keys[i]);
    size_t differences = 0;
    for (int m = 0; m < count; m++) {
        impl *im = &impls[m];
        for (int bulk = 0; bulk < 2; bulk++) {
            if (!bulk && im->kind == RTEFIB) continue;
            for (size_t i = 0; i < keys->count; i += BATCH) {
                unsigned step = keys->count - i < BATCH ? (unsigned)(keys->count - i) : BATCH;
                if (bulk) bulk_of(im, BULK)(im, keys->keys + i, out + i, step);
                else
                    for (unsigned j = 0; j < step; j++) out[i + j] = one(im, keys->keys[i + j]);
            }
            for (size_t i = 0; i < keys->count; i++) {
                if (out[i] == expected[i]) continue;
                if (differences++ < 10)
                    fprintf(stderr, "DIFFERENCE: %s (%s) answers %u for %u.%u.%u.%u, %s (scalar) answers %u\n",
                            im->name, bulk ? "bulk" : "scalar", out[i], keys->keys[i] >> 24,
                            (keys->keys[i] >> 16) & 255, (keys->keys[i] >> 8) & 255, keys->keys[i] & 255,
                            impls[0].name, expected[i]);
            }
        }
    }
    free(expected);
    free(out);
    return differences;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The figures as JSON: per implementation, per test, the sorted runs'
 * median, lowest and highest (-1: no such path). */
static void write_json(const char *path, const impl *impls, int count, double figures[][TESTS][MAX_RUNS], int runs) {
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        exit(2);
    }
    fprintf(out, "{\"runs\": %d, \"implementations\": [", runs);
    for (int m = 0; m < count; m++) {
        const char *engine = impls[m].kind == FIBKIT ? impls[m].name + strlen("fibkit ") : "";
        fprintf(out, "%s\n  {\"name\": \"%s\", \"fibkit_engine\": \"%s\", \"ceiling\": %s, \"tests\": {", m ? "," : "",
                impls[m].name, engine, impls[m].kind == CEILING ? "true" : "false");
        for (int t = 0; t < TESTS; t++) {
            const double *values = figures[m][t];
            fprintf(out, "%s\"%s\": {\"median\": %.2f, \"min\": %.2f, \"max\": %.2f}", t ? ", " : "", test_names[t],
                    values[runs / 2], values[0], values[runs - 1]);
        }
        fprintf(out, "}}");
    }
    fprintf(out, "\n]}\n");
    if (fclose(out) != 0) {
        perror(path);
        exit(2);
    }
}

int main(int argc, char **argv) {
    const char *path = NULL, *engines = "d16r,d18r,poptrie18", *json = NULL;
    uint32_t next_hops = 0;
    int runs = 5, thp = 0;
    double seconds = 0.25;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nexthops") == 0 && i + 1 < argc) next_hops = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--engines") == 0 && i + 1 < argc) engines = argv[++i];
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--thp") == 0) thp = 1;
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) json = argv[++i];
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else {
            fprintf(stderr, "usage: %s TABLE [--nexthops N] [--engines LIST] [--runs R] [--seconds S] [--thp] [--json PATH]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: %s TABLE [--nexthops N] [--engines LIST] [--runs R] [--seconds S] [--thp] [--json PATH]\n", argv[0]);
        return 2;
    }
    if (runs < 1 || runs > MAX_RUNS) runs = runs < 1 ? 1 : MAX_RUNS;

    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) die("sched_getaffinity");
    fibkit_table *table = NULL;
    if (fibkit_table_load(path, next_hops, 0, &table) != FIBKIT_OK) die("loading the table");
    table_shape shape = {0};
    fibkit_table_foreach4(table, shape_route, &shape);
    printf("table %s: %zu IPv4 routes, next hops 1 to %u, %zu /24s under longer prefixes\n", fibkit_table_name(table),
           shape.routes, shape.max_next_hop, shape.count);

    impl impls[MAX_IMPLS];
    int count = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", engines);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name && count < MAX_IMPLS - 3;
         name = strtok_r(NULL, ",", &save)) {
        impl *im = &impls[count++];
        memset(im, 0, sizeof *im);
        im->kind = FIBKIT;
        snprintf(im->name, sizeof im->name, "fibkit %s", name);
        fibkit_fib *fib = NULL;
        double start = now();
        if (fibkit_fib_build(table, name, &fib) != FIBKIT_OK) die(name);
        im->build_ms = (now() - start) * 1e3;
        im->fib = fib;
        im->footprint_mib = (double)fibkit_fib_footprint(fib, FIBKIT_IPV4) / (1 << 20);
    }
    if (count == 0) die("no engine");

#ifdef FIBKIT_WITH_DPDK
    /* rte_eal_init pins the calling thread to its main lcore, and threads
     * it creates would inherit that: the main thread gets back the CPUs the
     * process had, and each worker is pinned to one of them. */
    char *eal_args[] = {argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "1024", "--log-level=lib.eal:error", NULL};
    if (rte_eal_init(7, eal_args) < 0) {
        fprintf(stderr, "bench_dpdk: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
        return 2;
    }
    if (pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed) != 0) die("pthread_setaffinity_np");
    if (thp) rte_memseg_list_walk(madvise_memseg_list, NULL);
    uint32_t tbl8s = (uint32_t)shape.count * 2 + 256;
    {
        impl *im = &impls[count++];
        memset(im, 0, sizeof *im);
        im->kind = LPM;
        snprintf(im->name, sizeof im->name, "rte_lpm");
        struct rte_lpm_config config = {(uint32_t)shape.routes + 1024, tbl8s, 0};
        double start = now();
        im->lpm = rte_lpm_create("bench", SOCKET_ID_ANY, &config);
        if (!im->lpm || fibkit_table_foreach4(table, lpm_add, im->lpm) != 0) {
            fprintf(stderr, "bench_dpdk: rte_lpm: %s\n", rte_strerror(rte_errno));
            return 2;
        }
        im->build_ms = (now() - start) * 1e3;
        im->footprint_mib = ((double)(1 << 24) + (double)tbl8s * 256) * 4 / (1 << 20);
    }
    {
        impl *im = &impls[count++];
        memset(im, 0, sizeof *im);
        im->kind = RTEFIB;
        struct rte_fib_conf config;
        memset(&config, 0, sizeof config);
        config.type = RTE_FIB_DIR24_8;
        config.default_nh = 0;
        config.max_routes = (int)shape.routes + 1024;
        /* The narrowest next hop holding the table's (one bit marks tbl8 entries). */
        int bytes = shape.max_next_hop < 128 ? 1 : shape.max_next_hop < 32768 ? 2 : 4;
        config.dir24_8.nh_sz = bytes == 1 ? RTE_FIB_DIR24_8_1B : bytes == 2 ? RTE_FIB_DIR24_8_2B : RTE_FIB_DIR24_8_4B;
        config.dir24_8.num_tbl8 = tbl8s;
        snprintf(im->name, sizeof im->name, "rte_fib (%d-byte)", bytes);
        double start = now();
        im->rte_fib = rte_fib_create("bench", SOCKET_ID_ANY, &config);
        if (!im->rte_fib || fibkit_table_foreach4(table, rtefib_add, im->rte_fib) != 0) {
            fprintf(stderr, "bench_dpdk: rte_fib: %s\n", rte_strerror(rte_errno));
            return 2;
        }
        im->build_ms = (now() - start) * 1e3;
        im->footprint_mib = ((double)(1 << 24) + (double)tbl8s * 256) * bytes / (1 << 20);
    }
#else
    (void)thp;
    printf("built without DPDK (pkg-config found no libdpdk: apt-get install libdpdk-dev): fibkit alone\n");
#endif

    /* Every answer of every implementation, against the first. */
    key_list keys = {0};
    uint32_t state = 12345;
    for (int i = 0; i < 1000000; i++) push_key(&keys, xorshift32(&state));
    fibkit_table_foreach4(table, boundary_keys, &keys);
    size_t differences = check(impls, count, &keys);
    printf("checked %zu addresses (1,000,000 random, every route's ends and their neighbours) in %d "
           "implementations: %zu differences\n",
           keys.count, count, differences);
    free(keys.keys);
    if (differences) return 1;

    uint32_t *ceiling_table = malloc((CEILING_MASK + 1) * sizeof *ceiling_table);
    if (!ceiling_table) die("malloc");
    for (uint32_t i = 0; i <= CEILING_MASK; i++) ceiling_table[i] = i * 2654435761u;
    impl *ceiling = &impls[count++];
    memset(ceiling, 0, sizeof *ceiling);
    ceiling->kind = CEILING;
    ceiling->ceiling = ceiling_table;
    ceiling->footprint_mib = 1.0;
    snprintf(ceiling->name, sizeof ceiling->name, "ceiling (1 MiB)");

    /* Lookups per run: about `seconds` at the ceiling's RND rate. */
    uint64_t n = 1 << 20;
    for (double taken = 0; taken < seconds / 4; n *= 2) {
        double start = now();
        sink += run(ceiling, RND, n, 0);
        taken = now() - start;
    }
    static double figures[MAX_IMPLS][TESTS][MAX_RUNS];
    for (int round = 0; round < runs; round++) {
        fprintf(stderr, "round %d of %d\r", round + 1, runs);
        for (int m = 0; m < count; m++)
            for (int t = 0; t < TESTS; t++)
                figures[m][t][round] = measure(&impls[m], (enum test)t, t == SEQ || t == REP ? n / 4 : n);
    }
    fprintf(stderr, "\n");

    printf("\n%-20s %9s %9s", "Mlps (median, low-high)", "MiB", "build ms");
    for (int t = 0; t < TESTS; t++) printf(" %17s", test_names[t]);
    printf("\n");
    for (int m = 0; m < count; m++) {
        printf("%-20s %9.2f %9.1f", impls[m].name, impls[m].footprint_mib, impls[m].build_ms);
        for (int t = 0; t < TESTS; t++) {
            double *values = figures[m][t];
            qsort(values, (size_t)runs, sizeof *values, compare_doubles);
            if (values[0] < 0) {
                printf(" %17s", "-");
                continue;
            }
            char cell[40];
            snprintf(cell, sizeof cell, "%.1f (%.0f-%.0f)", values[runs / 2], values[0], values[runs - 1]);
            printf(" %17s", cell);
        }
        printf("\n");
    }
    printf("(lookups per run: %llu scalar and bulk, a quarter of that for SEQ and REP; %d runs; checksum %llu)\n",
           (unsigned long long)n, runs, (unsigned long long)(sink & 0xffff));
    if (json) write_json(json, impls, count, figures, runs);

    for (int m = 0; m < count; m++) {
        if (impls[m].kind == FIBKIT) fibkit_fib_free((fibkit_fib *)impls[m].fib);
#ifdef FIBKIT_WITH_DPDK
        if (impls[m].kind == LPM) rte_lpm_free(impls[m].lpm);
        if (impls[m].kind == RTEFIB) rte_fib_free(impls[m].rte_fib);
#endif
    }
#ifdef FIBKIT_WITH_DPDK
    rte_eal_cleanup();
#endif
    free(ceiling_table);
    free(shape.slash24);
    fibkit_table_free(table);
    return 0;
}
