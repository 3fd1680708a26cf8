/*
 * Tests of libfibkit through its C header, as a C program uses it: tables
 * built route by route and loaded from files, every engine against a
 * reference longest-prefix match, bulk and network-order lookups, IPv6,
 * compiled files, every error path, and a router updated by one thread
 * while another looks up.
 *
 * Usage: test_fibkit [TABLE]   (TABLE: a real table file for the bulk and
 * scalar paths to agree on; skipped when absent). Prints one line per
 * failure and "N passed, M failed"; exits 1 on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "fibkit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define CHECK_OK(call) CHECK((call) == FIBKIT_OK, "%s", #call)

/* Marsaglia's xorshift32, the papers' key generator. */
static uint32_t xorshift32(uint32_t *state) {
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}


/* A temporary file holding `content`; its path is written to `path`. */
static void temp_file(char *path, size_t size, const char *content) {
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, size, "%s/fibkit-c-test-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        exit(2);
    }
    size_t length = strlen(content);
    if (write(fd, content, length) != (ssize_t)length) {
        perror("write");
        exit(2);
    }
    close(fd);
}

/* ---- A reference longest-prefix match over a list of routes ---- */

typedef struct {
    uint32_t addr;
    uint8_t len;
    uint32_t next_hop;
} route4;

typedef struct {
    fibkit_addr6 addr;
    uint8_t len;
    uint32_t next_hop;
} route6;

static uint32_t mask4(uint8_t len) { return len == 0 ? 0 : ~UINT32_C(0) << (32 - len); }

static uint32_t reference4(const route4 *routes, size_t n, uint32_t key) {
    int best = -1;
    uint32_t next_hop = FIBKIT_NO_ROUTE;
    for (size_t i = 0; i < n; i++) {
        if ((key & mask4(routes[i].len)) == routes[i].addr && (int)routes[i].len > best) {
            best = routes[i].len;
            next_hop = routes[i].next_hop;
        }
    }
    return next_hop;
}

static int covers6(const route6 *route, const fibkit_addr6 *key) {
    for (int bit = 0; bit < route->len; bit++) {
        uint8_t m = (uint8_t)(0x80 >> (bit % 8));
        if ((route->addr.bytes[bit / 8] & m) != (key->bytes[bit / 8] & m)) return 0;
    }
    return 1;
}

static uint32_t reference6(const route6 *routes, size_t n, const fibkit_addr6 *key) {
    int best = -1;
    uint32_t next_hop = FIBKIT_NO_ROUTE;
    for (size_t i = 0; i < n; i++) {
        if ((int)routes[i].len > best && covers6(&routes[i], key)) {
            best = routes[i].len;
            next_hop = routes[i].next_hop;
        }
    }
    return next_hop;
}

/* ---- Tests ---- */

static void test_version_and_engines(void) {
    CHECK(fibkit_version() != NULL && strlen(fibkit_version()) > 0, "version");
    int d16r = 0, poptrie18 = 0;
    size_t count = 0;
    for (const char *name; (name = fibkit_engine_name(count)) != NULL; count++) {
        d16r |= strcmp(name, "d16r") == 0;
        poptrie18 |= strcmp(name, "poptrie18") == 0;
    }
    CHECK(count >= 10 && d16r && poptrie18, "%zu engines listed", count);
    CHECK(fibkit_engine_serves("d18r", FIBKIT_IPV4) == 1, "d18r serves IPv4");
    CHECK(fibkit_engine_serves("d18r", FIBKIT_IPV6) == 0, "d18r does not serve IPv6");
    CHECK(fibkit_engine_serves("poptrie18", FIBKIT_IPV6) == 1, "poptrie18 serves IPv6");
    CHECK(fibkit_engine_serves("nonesuch", FIBKIT_IPV4) == 0, "unknown engine");
    CHECK(fibkit_engine_serves(NULL, FIBKIT_IPV4) == 0, "NULL name");
    CHECK(contains(fibkit_strerror(FIBKIT_EPARSE), "FIBKIT_EPARSE"), "strerror");
}

static void test_small_table(void) {
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(100, &table));
    CHECK_OK(fibkit_table_add4(table, 0x0a000000, 8, 1));
    CHECK_OK(fibkit_table_add4(table, 0x0a010000, 16, 2));
    CHECK_OK(fibkit_table_add4(table, 0x0a010200, 24, 3));
    CHECK_OK(fibkit_table_add4(table, 0, 0, 4));
    CHECK_OK(fibkit_table_add4(table, 0xc0a80101, 32, 100));
    fibkit_addr6 db8 = {{0x20, 0x01, 0x0d, 0xb8}};
    CHECK_OK(fibkit_table_add6(table, &db8, 32, 5));
    CHECK(fibkit_table_routes(table, FIBKIT_IPV4) == 5, "IPv4 routes");
    CHECK(fibkit_table_routes(table, FIBKIT_IPV6) == 1, "IPv6 routes");
    CHECK(fibkit_table_max_next_hop(table) == 100, "max next hop");
    CHECK(strcmp(fibkit_table_name(table), "table") == 0, "name %s", fibkit_table_name(table));

    fibkit_fib *fib = NULL;
    CHECK_OK(fibkit_fib_build(table, "d16r", &fib));
    CHECK(strcmp(fibkit_fib_engine(fib, FIBKIT_IPV4), "d16r") == 0, "IPv4 engine");
    CHECK(strcmp(fibkit_fib_engine(fib, FIBKIT_IPV6), "poptrie18") == 0, "IPv6 default engine");
    CHECK(fibkit_fib_engine(fib, 5) == NULL, "no family 5");
    CHECK(fibkit_fib_footprint(fib, FIBKIT_IPV4) > 0, "footprint");
    CHECK(fibkit_lookup4(fib, 0x0a010203) == 3, "10.1.2.3");
    CHECK(fibkit_lookup4(fib, 0x0a010303) == 2, "10.1.3.3");
    CHECK(fibkit_lookup4(fib, 0x0a020000) == 1, "10.2.0.0");
    CHECK(fibkit_lookup4(fib, 0x0b000000) == 4, "11.0.0.0 by the default route");
    CHECK(fibkit_lookup4(fib, 0xc0a80101) == 100, "the /32");
    CHECK(fibkit_lookup4(fib, 0xc0a80102) == 4, "beside the /32");
    CHECK(fibkit_lookup4_be(fib, 0x0302010a) == 3, "10.1.2.3 in network order");
    fibkit_addr6 inside = {{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
    fibkit_addr6 outside = {{0x20, 0x01, 0x0d, 0xb9}};
    CHECK(fibkit_lookup6(fib, &inside) == 5, "2001:db8::1");
    CHECK(fibkit_lookup6(fib, &outside) == FIBKIT_NO_ROUTE, "2001:db9::");

    uint32_t keys[5] = {0x0a010203, 0x0a010303, 0x0a020000, 0x0b000000, 0xc0a80101};
    uint32_t keys_be[5] = {0x0302010a, 0x0303010a, 0x0000020a, 0x0000000b, 0x0101a8c0};
    uint32_t out[5] = {0}, out_be[5] = {0};
    CHECK_OK(fibkit_lookup4_bulk(fib, keys, out, 5));
    CHECK_OK(fibkit_lookup4_bulk_be(fib, keys_be, out_be, 5));
    const uint32_t expected[5] = {3, 2, 1, 4, 100};
    CHECK(memcmp(out, expected, sizeof out) == 0, "bulk");
    CHECK(memcmp(out_be, expected, sizeof out) == 0, "bulk in network order");
    fibkit_addr6 keys6[2] = {inside, outside};
    uint32_t out6[2] = {9, 9};
    CHECK_OK(fibkit_lookup6_bulk(fib, keys6, out6, 2));
    CHECK(out6[0] == 5 && out6[1] == FIBKIT_NO_ROUTE, "bulk IPv6 %u %u", out6[0], out6[1]);
    CHECK_OK(fibkit_lookup4_bulk(fib, NULL, NULL, 0));

    /* The FIB does not depend on the table. */
    fibkit_table_free(table);
    CHECK(fibkit_lookup4(fib, 0x0a010203) == 3, "after the table is freed");
    fibkit_fib_free(fib);
}

/* Engine `name` built over `table` if it serves `family` (its failure to
 * build is a failed check); NULL if it does not serve it or failed. */
static fibkit_fib *build_serving(const fibkit_table *table, const char *name, int family) {
    if (!fibkit_engine_serves(name, family)) return NULL;
    fibkit_fib *fib = NULL;
    int status = fibkit_fib_build(table, name, &fib);
    CHECK(status == FIBKIT_OK, "build %s", name);
    return fib;
}

/* Random routes: nested prefixes at every length, /0 and /32 among them. */
static size_t random_routes4(route4 *routes, size_t n, uint32_t *state, fibkit_table *table) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t len = (uint8_t)(xorshift32(state) % 33);
        uint32_t addr = xorshift32(state);
        if (i % 4 == 1 && count > 0) addr = routes[xorshift32(state) % count].addr | (addr >> 8);
        addr &= mask4(len);
        uint32_t next_hop = 1 + xorshift32(state) % 1000;
        size_t slot = count;
        for (size_t j = 0; j < count; j++)
            if (routes[j].addr == addr && routes[j].len == len) slot = j;
        routes[slot] = (route4){addr, len, next_hop};
        if (slot == count) count++;
        CHECK_OK(fibkit_table_add4(table, addr, len, next_hop));
    }
    return count;
}

static void test_every_engine_against_the_reference(void) {
    enum { ROUTES = 1500, RANDOM_KEYS = 20000 };
    static route4 routes[ROUTES];
    static uint32_t keys[RANDOM_KEYS + 4 * ROUTES], expected[RANDOM_KEYS + 4 * ROUTES], out[RANDOM_KEYS + 4 * ROUTES];
    uint32_t state = 2014;
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(1000, &table));
    size_t n = random_routes4(routes, ROUTES, &state, table);
    size_t k = 0;
    for (; k < RANDOM_KEYS; k++) keys[k] = xorshift32(&state);
    for (size_t i = 0; i < n; i++) { /* every range boundary and its neighbours */
        uint32_t first = routes[i].addr, last = first | ~mask4(routes[i].len);
        keys[k++] = first;
        keys[k++] = last;
        keys[k++] = first - 1;
        keys[k++] = last + 1;
    }
    for (size_t i = 0; i < k; i++) expected[i] = reference4(routes, n, keys[i]);

    size_t engines = 0;
    for (size_t e = 0; fibkit_engine_name(e) != NULL; e++) {
        const char *name = fibkit_engine_name(e);
        fibkit_fib *fib = build_serving(table, name, FIBKIT_IPV4);
        if (fib == NULL) continue;
        engines++;
        CHECK(strcmp(fibkit_fib_engine(fib, FIBKIT_IPV4), name) == 0, "engine %s", name);
        size_t wrong = 0, wrong_bulk = 0;
        for (size_t i = 0; i < k; i++) wrong += fibkit_lookup4(fib, keys[i]) != expected[i];
        /* Bulk lengths that do and do not fill the batch path's groups. */
        size_t lengths[] = {1, 7, 64, 1000, 4097};
        for (size_t start = 0, step = 0; start < k; step++) {
            size_t length = lengths[step % 5] < k - start ? lengths[step % 5] : k - start;
            memset(out + start, 0xff, length * sizeof *out);
            CHECK_OK(fibkit_lookup4_bulk(fib, keys + start, out + start, length));
            start += length;
        }
        for (size_t i = 0; i < k; i++) wrong_bulk += out[i] != expected[i];
        CHECK(wrong == 0, "%s: %zu of %zu scalar lookups wrong", name, wrong, k);
        CHECK(wrong_bulk == 0, "%s: %zu of %zu bulk lookups wrong", name, wrong_bulk, k);
        fibkit_fib_free(fib);
    }
    CHECK(engines >= 8, "%zu IPv4 engines checked", engines);
    /* `auto` (not listed: it measures the listed ones) builds one of them. */
    fibkit_fib *fib = NULL;
    CHECK_OK(fibkit_fib_build(table, "auto", &fib));
    const char *chosen = fibkit_fib_engine(fib, FIBKIT_IPV4);
    CHECK(chosen != NULL && (chosen[0] == 'd' || strncmp(chosen, "poptrie", 7) == 0 || strncmp(chosen, "sail", 4) == 0),
          "auto chose %s", chosen);
    size_t wrong = 0;
    for (size_t i = 0; i < k; i++) wrong += fibkit_lookup4(fib, keys[i]) != expected[i];
    CHECK(wrong == 0, "auto (%s): %zu wrong", chosen, wrong);
    fibkit_fib_free(fib);
    /* `auto` measured on the caller's keys: IPv4 ones, and IPv6 ones of
     * which the mapped count as IPv4. */
    fibkit_addr6 mapped[2] = {{{0}}, {{0}}};
    for (int i = 0; i < 2; i++) {
        mapped[i].bytes[10] = mapped[i].bytes[11] = 0xff;
        memcpy(mapped[i].bytes + 12, &keys[i], 4);
    }
    CHECK_OK(fibkit_fib_build_calibrated(table, "auto", keys, k, mapped, 2, &fib));
    chosen = fibkit_fib_engine(fib, FIBKIT_IPV4);
    wrong = 0;
    for (size_t i = 0; i < k; i++) wrong += fibkit_lookup4(fib, keys[i]) != expected[i];
    CHECK(chosen != NULL && wrong == 0, "auto on the caller's keys (%s): %zu wrong", chosen, wrong);
    fibkit_fib_free(fib);
    /* Another engine takes no notice of the keys; keys must be there. */
    CHECK_OK(fibkit_fib_build_calibrated(table, "d16r", keys, k, NULL, 0, &fib));
    CHECK(strcmp(fibkit_fib_engine(fib, FIBKIT_IPV4), "d16r") == 0, "d16r");
    fibkit_fib_free(fib);
    fib = NULL;
    CHECK(fibkit_fib_build_calibrated(table, "auto", NULL, 5, NULL, 0, &fib) == FIBKIT_EINVAL && fib == NULL,
          "NULL keys4 with a count");
    CHECK(contains(fibkit_last_error(), "keys4"), "the error names keys4");
    /* A router of `auto` measured on the caller's keys, answering them
     * through a reader; bad keys are refused as for a FIB. */
    fibkit_router *router = NULL;
    fibkit_reader *reader = NULL;
    CHECK_OK(fibkit_router_new_calibrated(table, "auto", keys, k, mapped, 2, &router));
    chosen = fibkit_router_engine(router, FIBKIT_IPV4);
    CHECK_OK(fibkit_reader_new(router, &reader));
    wrong = 0;
    for (size_t i = 0; i < k; i++) wrong += fibkit_reader_lookup4(reader, keys[i]) != expected[i];
    CHECK(chosen != NULL && wrong == 0, "a router's auto on the caller's keys (%s): %zu wrong", chosen, wrong);
    fibkit_reader_free(reader);
    fibkit_router_free(router);
    router = NULL;
    CHECK(fibkit_router_new_calibrated(table, "auto", keys, 1, NULL, 3, &router) == FIBKIT_EINVAL && router == NULL,
          "a router: NULL keys6 with a count");
    CHECK(contains(fibkit_last_error(), "keys6"), "the error names keys6");
    fibkit_table_free(table);
}

static void test_ipv6_against_the_reference(void) {
    enum { ROUTES = 600, KEYS = 6000 };
    static route6 routes[ROUTES];
    static fibkit_addr6 keys[KEYS];
    static uint32_t expected[KEYS], out[KEYS];
    uint32_t state = 2026;
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(500, &table));
    size_t n = 0;
    for (size_t i = 0; i < ROUTES; i++) {
        route6 route = {{{0x20, 0x01, 0x0d, 0xb8}}, 0, 1 + xorshift32(&state) % 500};
        route.len = (uint8_t)(i == 0 ? 0 : 32 + xorshift32(&state) % 97);
        for (int byte = 4; byte < 16; byte++) route.addr.bytes[byte] = (uint8_t)(xorshift32(&state) % 4);
        for (int bit = route.len; bit < 128; bit++) route.addr.bytes[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
        int duplicate = 0;
        for (size_t j = 0; j < n; j++)
            duplicate |= routes[j].len == route.len && memcmp(&routes[j].addr, &route.addr, 16) == 0;
        if (duplicate) continue;
        routes[n++] = route;
        CHECK_OK(fibkit_table_add6(table, &route.addr, route.len, route.next_hop));
    }
    for (size_t i = 0; i < KEYS; i++) {
        keys[i] = routes[xorshift32(&state) % n].addr;
        for (int byte = 6 + (int)(i % 10); byte < 16; byte++) keys[i].bytes[byte] = (uint8_t)(xorshift32(&state) % 4);
        expected[i] = reference6(routes, n, &keys[i]);
    }
    size_t engines = 0;
    for (size_t e = 0; fibkit_engine_name(e) != NULL; e++) {
        const char *name = fibkit_engine_name(e);
        fibkit_fib *fib = build_serving(table, name, FIBKIT_IPV6);
        if (fib == NULL) continue;
        engines++;
        size_t wrong = 0, wrong_bulk = 0;
        for (size_t i = 0; i < KEYS; i++) wrong += fibkit_lookup6(fib, &keys[i]) != expected[i];
        CHECK_OK(fibkit_lookup6_bulk(fib, keys, out, KEYS));
        for (size_t i = 0; i < KEYS; i++) wrong_bulk += out[i] != expected[i];
        CHECK(wrong == 0 && wrong_bulk == 0, "%s: %zu scalar, %zu bulk of %d wrong", name, wrong, wrong_bulk, KEYS);
        fibkit_fib_free(fib);
    }
    CHECK(engines >= 4, "%zu IPv6 engines checked", engines);
    fibkit_table_free(table);
}

static void test_files(void) {
    char path[256], fib_path[300];
    temp_file(path, sizeof path, "10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 64502\n");
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_load(path, 0, 0, &table));
    CHECK(fibkit_table_max_next_hop(table) == 3, "three distinct values");
    CHECK(fibkit_table_warnings(table) == 0, "no warning");
    fibkit_fib *fib = NULL, *opened = NULL;
    CHECK_OK(fibkit_fib_build(table, "d18r,poptrie16", &fib));
    CHECK(strcmp(fibkit_fib_engine(fib, FIBKIT_IPV6), "poptrie16") == 0, "IPv6 gets the first serving it");
    uint32_t hop = fibkit_lookup4(fib, 0x0a010101);
    char value[16];
    CHECK(fibkit_fib_value(fib, hop, value, sizeof value) == 5 && strcmp(value, "64501") == 0, "value %s", value);
    CHECK(fibkit_fib_value(fib, hop, value, 3) == 5 && strcmp(value, "64") == 0, "cut value %s", value);
    CHECK(fibkit_fib_value(fib, hop, NULL, 0) == 5, "length only");
    CHECK(fibkit_fib_value(fib, FIBKIT_NO_ROUTE, value, sizeof value) == 0, "no value for no route");

    snprintf(fib_path, sizeof fib_path, "%s.fib", path);
    CHECK_OK(fibkit_fib_save(fib, fib_path));
    CHECK_OK(fibkit_fib_open(fib_path, &opened));
    CHECK(opened != NULL && strcmp(fibkit_fib_engine(opened, FIBKIT_IPV4), "d18r") == 0, "opened engine");
    uint32_t state = 7;
    size_t differ = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t key = xorshift32(&state) >> (i % 8);
        differ += fibkit_lookup4(fib, key) != fibkit_lookup4(opened, key);
    }
    fibkit_addr6 key6 = {{0x20, 0x01, 0x0d, 0xb8, 1}};
    CHECK(differ == 0 && fibkit_lookup6(opened, &key6) == fibkit_lookup6(fib, &key6), "%zu differ", differ);
    CHECK(fibkit_fib_value(opened, hop, value, sizeof value) == 5 && strcmp(value, "64501") == 0, "opened value");
    fibkit_fib_free(opened);
    fibkit_fib_free(fib);

    /* With next_hops N: value % N + 1. */
    fibkit_table_free(table);
    CHECK_OK(fibkit_table_load(path, 239, 0, &table));
    CHECK_OK(fibkit_fib_build(table, NULL, &fib));
    CHECK(fibkit_lookup4(fib, 0x0a010101) == 64501 % 239 + 1, "modulo mapping");
    CHECK(fibkit_fib_value(fib, 1, value, sizeof value) == 0, "no value of its own");
    fibkit_fib_free(fib);
    fibkit_table_free(table);
    unlink(fib_path);
    unlink(path);
}

static void test_errors(void) {
    fibkit_table *table = (fibkit_table *)&passed; /* stale: must become NULL */
    fibkit_fib *fib = NULL;
    char path[256];

    CHECK(fibkit_table_load("/nonexistent/table.txt", 0, 0, &table) == FIBKIT_EIO, "missing file");
    CHECK(table == NULL, "out cleared on failure");
    CHECK(contains(fibkit_last_error(), "/nonexistent/table.txt"), "the message names the file");

    temp_file(path, sizeof path, "10.0.0.0/8 1\nthis is not a route\n");
    CHECK(fibkit_table_load(path, 0, 0, &table) == FIBKIT_EPARSE, "bad line");
    CHECK(contains(fibkit_last_error(), ":2:"), "the message names line 2");
    unlink(path);

    temp_file(path, sizeof path, "10.0.0.0/8 1\n10.0.0.0/8 2\n");
    CHECK(fibkit_table_load(path, 0, FIBKIT_LOAD_STRICT, &table) == FIBKIT_EPARSE, "strict duplicate");
    CHECK_OK(fibkit_table_load(path, 0, 0, &table));
    CHECK(fibkit_table_warnings(table) == 1 && contains(fibkit_table_warning(table, 0), ":2"),
          "duplicate kept as a warning: %s", fibkit_table_warning(table, 0));
    CHECK(fibkit_table_warning(table, 1) == NULL, "no second warning");
    fibkit_table_free(table);
    CHECK(fibkit_table_load(path, 0, 2, &table) == FIBKIT_EINVAL, "unknown flag");
    CHECK(fibkit_table_load(NULL, 0, 0, &table) == FIBKIT_EINVAL, "NULL path");
    CHECK(fibkit_table_load(path, 0, 0, NULL) == FIBKIT_EINVAL, "NULL out");
    unlink(path);

    CHECK(fibkit_table_new(0, &table) == FIBKIT_ENEXTHOP, "max next hop 0");
    CHECK_OK(fibkit_table_new(10, &table));
    CHECK(fibkit_table_add4(table, 0x0a000001, 8, 1) == FIBKIT_EINVAL, "host bits");
    CHECK(contains(fibkit_last_error(), "10.0.0.0/8"), "the message suggests the prefix");
    CHECK(fibkit_table_add4(table, 0x0a000000, 33, 1) == FIBKIT_EINVAL, "length 33");
    CHECK(fibkit_table_add4(table, 0x0a000000, 8, 0) == FIBKIT_ENEXTHOP, "next hop 0");
    CHECK(fibkit_table_add4(table, 0x0a000000, 8, 11) == FIBKIT_ENEXTHOP, "next hop 11 of 10");
    CHECK(fibkit_table_add4(NULL, 0x0a000000, 8, 1) == FIBKIT_EINVAL, "NULL table");
    CHECK(contains(fibkit_last_error(), "`table` is NULL"), "the message names the argument");
    CHECK(fibkit_table_add6(table, NULL, 8, 1) == FIBKIT_EINVAL, "NULL address");
    fibkit_addr6 any = {{0}};
    CHECK(fibkit_table_add6(table, &any, 129, 1) == FIBKIT_EINVAL, "length 129");
    CHECK_OK(fibkit_table_add4(table, 0x0a000000, 8, 1));
    CHECK(fibkit_table_foreach4(table, NULL, NULL) == FIBKIT_EINVAL, "NULL callback");

    CHECK(fibkit_fib_build(table, "nonesuch", &fib) == FIBKIT_EENGINE, "unknown engine");
    CHECK(contains(fibkit_last_error(), "nonesuch") && contains(fibkit_last_error(), "d16r"),
          "the message names it and the valid ones");
    CHECK(fibkit_fib_build(NULL, NULL, &fib) == FIBKIT_EINVAL && fib == NULL, "NULL table");
    CHECK(fibkit_fib_build(table, NULL, NULL) == FIBKIT_EINVAL, "NULL out");
    CHECK_OK(fibkit_fib_build(table, "lulea", &fib));
    temp_file(path, sizeof path, "");
    CHECK(fibkit_fib_save(fib, path) == FIBKIT_ENOTSAVABLE, "lulea has no file format");
    CHECK(contains(fibkit_last_error(), "d18r"), "the message lists savable engines");
    fibkit_fib_free(fib);
    CHECK(fibkit_fib_open(path, &fib) == FIBKIT_EFILE && fib == NULL, "an empty file is no FIB");
    unlink(path);
    temp_file(path, sizeof path, "10.0.0.0/8 1\n");
    CHECK(fibkit_fib_open(path, &fib) == FIBKIT_EFILE, "a table is no compiled FIB");
    CHECK(contains(fibkit_last_error(), path), "the message names the file");
    unlink(path);
    CHECK(fibkit_fib_open("/nonexistent.fib", &fib) == FIBKIT_EIO, "missing FIB file");

    /* Lookups on NULL answer no route and say why. */
    CHECK(fibkit_lookup4(NULL, 1) == FIBKIT_NO_ROUTE, "NULL fib");
    CHECK(contains(fibkit_last_error(), "`fib` is NULL"), "the message");
    CHECK_OK(fibkit_fib_build(table, NULL, &fib));
    CHECK(fibkit_lookup6(fib, NULL) == FIBKIT_NO_ROUTE, "NULL address");
    uint32_t keys[4] = {0x0a000000, 1, 2, 3}, out[4];
    CHECK(fibkit_lookup4_bulk(fib, NULL, out, 4) == FIBKIT_EINVAL, "NULL keys");
    CHECK(fibkit_lookup4_bulk(fib, keys, NULL, 4) == FIBKIT_EINVAL, "NULL output");
    CHECK(fibkit_lookup4_bulk(fib, keys, (uint32_t *)((char *)out + 1), 2) == FIBKIT_EINVAL, "misaligned output");
    CHECK(contains(fibkit_last_error(), "aligned"), "the message says misaligned");
    CHECK(fibkit_lookup4_bulk(fib, keys, out, SIZE_MAX / 2) == FIBKIT_EINVAL, "length beyond memory");
    /* A family without routes answers no route. */
    fibkit_addr6 db8 = {{0x20, 0x01, 0x0d, 0xb8}};
    CHECK(fibkit_fib_engine(fib, FIBKIT_IPV6) == NULL && fibkit_lookup6(fib, &db8) == FIBKIT_NO_ROUTE, "no IPv6");
    fibkit_fib_free(fib);
    fibkit_table_free(table);

    /* An engine's limit: SAIL's 15-bit next hops. */
    CHECK_OK(fibkit_table_new(40000, &table));
    CHECK_OK(fibkit_table_add4(table, 0x0a000000, 8, 40000));
    CHECK(fibkit_fib_build(table, "sail", &fib) == FIBKIT_ELIMIT, "sail's next-hop limit");
    CHECK(contains(fibkit_last_error(), "sail-wide"), "the message names the engine that holds it: %s",
          fibkit_last_error());
    CHECK_OK(fibkit_fib_build(table, "sail-wide", &fib));
    CHECK(fibkit_lookup4(fib, 0x0a000001) == 40000, "sail-wide holds it");
    fibkit_fib_free(fib);
    /* A limit met by a router's batch (SAIL's 2^15 level-24 chunks, one
       for each /16 holding a /24): the message names each rejected update
       by its index in the caller's array, IPv6 updates counted. */
    fibkit_table *small = NULL;
    CHECK_OK(fibkit_table_new(10, &small));
    CHECK_OK(fibkit_table_add4(small, 0x0a000000, 8, 1));
    fibkit_router *router = NULL;
    CHECK_OK(fibkit_router_new(small, "sail", &router));
    enum { SLASH16S = 32770 };
    fibkit_update *mixed = calloc(SLASH16S + 1, sizeof *mixed);
    CHECK(mixed != NULL, "calloc");
    fibkit_addr6 db9 = {{0x20, 0x01, 0x0d, 0xb9}};
    mixed[0] = (fibkit_update){FIBKIT_IPV6, 32, 0, 0, 2, {.v6 = db9}};
    for (uint32_t i = 0; i < SLASH16S; i++)
        mixed[i + 1] = (fibkit_update){FIBKIT_IPV4, 24, 0, 0, 2, {.v4 = 0x20000000u + (i << 16)}};
    size_t rejected = 0;
    CHECK(fibkit_router_apply(router, mixed, SLASH16S + 1, &rejected) == FIBKIT_EREJECTED && rejected > 0,
          "%zu rejected", rejected);
    char first[64];
    uint32_t failed = 0x20000000u + ((uint32_t)(SLASH16S - rejected) << 16);
    snprintf(first, sizeof first, "update %zu (announce %u.%u.0.0/24", SLASH16S + 1 - rejected, failed >> 24,
             (failed >> 16) & 255);
    CHECK(contains(fibkit_last_error(), first), "the caller's index, %s: %.200s", first, fibkit_last_error());
    free(mixed);
    fibkit_router_free(router);
    fibkit_table_free(small);
    fibkit_table_free(table);
    fibkit_fib_free(NULL);
    fibkit_table_free(NULL);
    fibkit_router_free(NULL);
    fibkit_reader_free(NULL);
}

static int count_routes(void *context, uint32_t addr, uint8_t prefix_len, uint32_t next_hop) {
    (void)addr;
    (void)prefix_len;
    (void)next_hop;
    return ++*(int *)context == 2 ? 42 : 0;
}

static int sum_routes6(void *context, const fibkit_addr6 *addr, uint8_t prefix_len, uint32_t next_hop) {
    *(uint32_t *)context += addr->bytes[1] + prefix_len + next_hop;
    return 0;
}

static void test_foreach(void) {
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(10, &table));
    CHECK_OK(fibkit_table_add4(table, 0x0a000000, 8, 1));
    CHECK_OK(fibkit_table_add4(table, 0x0b000000, 8, 2));
    CHECK_OK(fibkit_table_add4(table, 0x0c000000, 8, 3));
    int seen = 0;
    CHECK(fibkit_table_foreach4(table, count_routes, &seen) == 42 && seen == 2, "stopped by the callback");
    fibkit_addr6 addr = {{0x20, 0x01}};
    CHECK_OK(fibkit_table_add6(table, &addr, 16, 7));
    uint32_t sum = 0;
    CHECK(fibkit_table_foreach6(table, sum_routes6, &sum) == FIBKIT_OK && sum == 0x01 + 16 + 7, "IPv6 walk");
    fibkit_table_free(table);
}

static void test_router(void) {
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(50, &table));
    CHECK_OK(fibkit_table_add4(table, 0x0a000000, 8, 1));
    fibkit_router *router = NULL;
    fibkit_reader *reader = NULL;
    CHECK(fibkit_router_new(table, "nonesuch", &router) == FIBKIT_EENGINE && router == NULL, "unknown engine");
    CHECK_OK(fibkit_router_new(table, "d18r", &router));
    fibkit_table_free(table);
    CHECK(strcmp(fibkit_router_engine(router, FIBKIT_IPV4), "d18r") == 0, "engine");
    CHECK_OK(fibkit_reader_new(router, &reader));
    CHECK(fibkit_reader_lookup4(reader, 0x0a010101) == 1, "initial");
    CHECK_OK(fibkit_router_announce4(router, 0x0a010000, 16, 2));
    CHECK(fibkit_reader_lookup4(reader, 0x0a010101) == 2, "announced");
    CHECK(fibkit_router_generation(router, FIBKIT_IPV4) == 1, "one generation");
    CHECK(fibkit_router_announce4(router, 0x0a010000, 16, 51) == FIBKIT_ENEXTHOP, "next hop beyond the table");
    CHECK(fibkit_router_announce4(router, 0x0a010001, 16, 2) == FIBKIT_EINVAL, "host bits");
    CHECK(fibkit_router_generation(router, FIBKIT_IPV4) == 1, "nothing published by refusals");
    fibkit_addr6 db8 = {{0x20, 0x01, 0x0d, 0xb8}}, key6 = {{0x20, 0x01, 0x0d, 0xb8, 9}};
    CHECK_OK(fibkit_router_announce6(router, &db8, 32, 3));
    CHECK(fibkit_reader_lookup6(reader, &key6) == 3, "IPv6 announced");
    CHECK_OK(fibkit_router_withdraw6(router, &db8, 32));
    CHECK(fibkit_reader_lookup6(reader, &key6) == FIBKIT_NO_ROUTE, "IPv6 withdrawn");

    fibkit_update batch[4];
    memset(batch, 0, sizeof batch);
    batch[0] = (fibkit_update){FIBKIT_IPV4, 24, 0, 0, 4, {.v4 = 0x0a010200}};
    batch[1] = (fibkit_update){FIBKIT_IPV4, 16, 1, 0, 0, {.v4 = 0x0a010000}};
    batch[2] = (fibkit_update){FIBKIT_IPV4, 8, 0, 0, 0, {.v4 = 0x0b000000}}; /* next hop 0: rejected */
    batch[3] = (fibkit_update){FIBKIT_IPV6, 32, 0, 0, 5, {.v6 = db8}};
    size_t rejected = 99;
    CHECK(fibkit_router_apply(router, batch, 4, &rejected) == FIBKIT_EREJECTED && rejected == 1, "%zu rejected",
          rejected);
    CHECK(contains(fibkit_last_error(), "update 2"), "the message names the update");
    CHECK(fibkit_reader_lookup4(reader, 0x0a010201) == 4, "the batch's /24");
    CHECK(fibkit_reader_lookup4(reader, 0x0a010301) == 1, "the /16 withdrawn");
    CHECK(fibkit_reader_lookup4(reader, 0x0b000001) == FIBKIT_NO_ROUTE, "the rejected update is not there");
    CHECK(fibkit_reader_lookup6(reader, &key6) == 5, "the batch's IPv6 route");
    CHECK(fibkit_router_apply(router, batch, 2, &rejected) == FIBKIT_OK && rejected == 0, "a valid batch");
    batch[0].family = 5;
    CHECK(fibkit_router_apply(router, batch, 1, NULL) == FIBKIT_EREJECTED, "family 5");
    CHECK(fibkit_router_apply(router, NULL, 1, NULL) == FIBKIT_EINVAL, "NULL updates");

    uint32_t keys[3] = {0x0a010201, 0x0a010301, 0x0b000001}, out[3];
    CHECK_OK(fibkit_reader_lookup4_bulk(reader, keys, out, 3));
    CHECK(out[0] == 4 && out[1] == 1 && out[2] == FIBKIT_NO_ROUTE, "bulk through the reader");
    uint32_t out6;
    CHECK_OK(fibkit_reader_lookup6_bulk(reader, &key6, &out6, 1));
    CHECK(out6 == 5, "IPv6 bulk through the reader");

    /* Readers outlive their router: they serve its last FIBs. */
    fibkit_router_free(router);
    CHECK(fibkit_reader_lookup4(reader, 0x0a010201) == 4, "after the router is freed");
    fibkit_reader_free(reader);
}

/* One writer flaps 10.X.0.0/16 (X = 0..255) between next hops 2 and 3 and
 * withdrawn, over 10.0.0.0/8 -> 1; readers must only ever see 1, 2 or 3
 * inside 10/8, 7 in the untouched 192.168.0.0/16, and no route elsewhere. */
typedef struct {
    fibkit_router *router;
    atomic_int done;
    atomic_size_t lookups;
    size_t wrong;
} shared_run;

static void *reader_thread(void *argument) {
    shared_run *run = argument;
    fibkit_reader *reader = NULL;
    if (fibkit_reader_new(run->router, &reader) != FIBKIT_OK) {
        run->wrong++;
        return NULL;
    }
    uint32_t state = 99, keys[64], out[64];
    while (!atomic_load(&run->done)) {
        for (int i = 0; i < 64; i++) keys[i] = xorshift32(&state);
        for (int i = 0; i < 16; i++) keys[i] = 0x0a000000 | (keys[i] >> 8);
        for (int i = 16; i < 20; i++) keys[i] = 0xc0a80000 | (keys[i] >> 16);
        if (fibkit_reader_lookup4_bulk(reader, keys, out, 64) != FIBKIT_OK) run->wrong++;
        for (int i = 0; i < 64; i++) {
            uint32_t scalar = fibkit_reader_lookup4(reader, keys[i]);
            for (int pass = 0; pass < 2; pass++) {
                uint32_t hop = pass ? scalar : out[i];
                int ok;
                if ((keys[i] >> 24) == 10) ok = hop >= 1 && hop <= 3;
                else if ((keys[i] >> 16) == 0xc0a8) ok = hop == 7;
                else ok = hop == FIBKIT_NO_ROUTE;
                run->wrong += !ok;
            }
        }
        atomic_fetch_add(&run->lookups, 128);
    }
    fibkit_reader_free(reader);
    return NULL;
}

static void test_readers_while_a_writer_updates(const char *engine) {
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(10, &table));
    CHECK_OK(fibkit_table_add4(table, 0x0a000000, 8, 1));
    CHECK_OK(fibkit_table_add4(table, 0xc0a80000, 16, 7));
    shared_run run = {NULL, 0, 0, 0};
    atomic_init(&run.done, 0);
    atomic_init(&run.lookups, 0);
    CHECK_OK(fibkit_router_new(table, engine, &run.router));
    fibkit_table_free(table);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, reader_thread, &run) == 0, "thread");
    size_t updates = 0;
    uint32_t state = 5;
    /* At least 12 rounds, and on until the reader has done 300,000 lookups. */
    for (int round = 0; round < 12 || (atomic_load(&run.lookups) < 300000 && round < 2000); round++) {
        for (uint32_t x = 0; x < 256; x++) {
            uint32_t choice = xorshift32(&state) % 3;
            int status = choice == 0 ? fibkit_router_withdraw4(run.router, 0x0a000000 | x << 16, 16)
                                     : fibkit_router_announce4(run.router, 0x0a000000 | x << 16, 16, 1 + choice);
            CHECK(status == FIBKIT_OK, "update %zu", updates);
            updates++;
        }
    }
    atomic_store(&run.done, 1);
    pthread_join(thread, NULL);
    CHECK(run.wrong == 0, "%s: %zu wrong answers during %zu updates", engine, run.wrong, updates);
    size_t lookups = atomic_load(&run.lookups);
    CHECK(lookups > 0, "the reader ran");
    printf("  %s: %zu lookups by a reader during %zu updates, %zu wrong\n", engine, lookups, updates, run.wrong);
    fibkit_router_free(run.router);
}

/* Atomic batches: each batch moves the default route and 10.1.0.0/16
 * together between next hops 1 and 2, with /17 to /32 routes inside
 * 10.1/16 (next hops 10 to 59) announced and withdrawn among them. A bulk
 * lookup of keys inside and outside 10.1/16 must then give every key
 * answered by either of the two moving routes the same next hop. */
typedef struct {
    fibkit_router *router;
    atomic_int done;
    atomic_size_t calls;
    size_t mixed, wrong;
} atomic_run;

static void *bulk_reader_thread(void *argument) {
    atomic_run *run = argument;
    fibkit_reader *reader = NULL;
    if (fibkit_reader_new(run->router, &reader) != FIBKIT_OK) {
        run->wrong++;
        return NULL;
    }
    uint32_t state = 7, keys[64], out[64];
    while (!atomic_load(&run->done)) {
        for (int i = 0; i < 64; i++) {
            uint32_t bits = xorshift32(&state);
            keys[i] = i % 2 ? 0x0a010000 | (bits & 0xffff) : 0x14000000 | (bits >> 8);
        }
        if (fibkit_reader_lookup4_bulk(reader, keys, out, 64) != FIBKIT_OK) run->wrong++;
        uint32_t moving = 0;
        int mixed = 0;
        for (int i = 0; i < 64; i++) {
            if (out[i] == 1 || out[i] == 2) {
                mixed |= moving != 0 && out[i] != moving;
                moving = out[i];
            } else {
                run->wrong += !(i % 2 && out[i] >= 10 && out[i] < 60);
            }
        }
        run->mixed += mixed;
        atomic_fetch_add(&run->calls, 1);
    }
    fibkit_reader_free(reader);
    return NULL;
}

/* Runs the batches against a router of `engine` with atomic batches or
 * not; returns the bulk calls that mixed batches. */
static size_t race_moving_routes(const char *engine, int atomic) {
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(60, &table));
    CHECK_OK(fibkit_table_add4(table, 0, 0, 1));
    CHECK_OK(fibkit_table_add4(table, 0x0a010000, 16, 1));
    atomic_run run = {NULL, 0, 0, 0, 0};
    atomic_init(&run.done, 0);
    atomic_init(&run.calls, 0);
    CHECK_OK(fibkit_router_new(table, engine, &run.router));
    fibkit_table_free(table);
    CHECK_OK(fibkit_router_set_atomic(run.router, atomic));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, bulk_reader_thread, &run) == 0, "thread");
    uint32_t state = 11;
    int batches = 0;
    /* At least 100 batches, and on until the reader has made 20,000 calls. */
    for (; batches < 100 || (atomic_load(&run.calls) < 20000 && batches < 20000); batches++) {
        fibkit_update updates[8];
        size_t n = 0;
        for (int moving = 0; moving < 2; moving++) {
            fibkit_update update = {FIBKIT_IPV4, moving ? 16 : 0, 0, 0, 1 + batches % 2, {0}};
            update.addr.v4 = moving ? 0x0a010000 : 0;
            updates[n++] = update;
        }
        for (uint32_t churn = xorshift32(&state) % 6; churn > 0; churn--) {
            uint8_t len = 17 + xorshift32(&state) % 16;
            fibkit_update update = {FIBKIT_IPV4, len, xorshift32(&state) % 3 == 0, 0, 10 + xorshift32(&state) % 50, {0}};
            update.addr.v4 = (0x0a010000 | (xorshift32(&state) & 0xffff)) & (uint32_t)(~0ull << (32 - len));
            updates[n++] = update;
        }
        CHECK_OK(fibkit_router_apply(run.router, updates, n, NULL));
    }
    atomic_store(&run.done, 1);
    pthread_join(thread, NULL);
    CHECK(run.wrong == 0, "%s: %zu answers that no route gives", engine, run.wrong);
    printf("  %s, %s: %zu bulk calls during %d batches, %zu mixed two batches\n", engine,
           atomic ? "atomic batches" : "in place", atomic_load(&run.calls), batches, run.mixed);
    fibkit_router_free(run.router);
    return run.mixed;
}

static void test_atomic_batches(const char *engine) {
    race_moving_routes(engine, 0);
    size_t mixed = race_moving_routes(engine, 1);
    CHECK(mixed == 0, "%s: %zu bulk calls mixed two atomic batches", engine, mixed);
    CHECK(fibkit_router_set_atomic(NULL, 1) == FIBKIT_EINVAL, "a NULL router");
}

/* On a real table: scalar, bulk and network-order lookups agree. */
static void test_real_table(const char *path) {
    if (path == NULL || access(path, R_OK) != 0) {
        printf("  real table: skipped (no table file given or readable)\n");
        return;
    }
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_load(path, 239, 0, &table));
    enum { KEYS = 1 << 18 };
    static uint32_t keys[KEYS], keys_be[KEYS], out[KEYS], out_be[KEYS];
    uint32_t state = 1;
    for (size_t i = 0; i < KEYS; i++) {
        keys[i] = xorshift32(&state);
        keys_be[i] = ((keys[i] & 0xff) << 24) | ((keys[i] & 0xff00) << 8) | ((keys[i] >> 8) & 0xff00) | (keys[i] >> 24);
    }
    const char *engines[] = {"d16r", "d18r", "poptrie18", "dir24-8"};
    for (size_t e = 0; e < 4; e++) {
        fibkit_fib *fib = NULL;
        CHECK_OK(fibkit_fib_build(table, engines[e], &fib));
        if (fib == NULL) continue;
        CHECK_OK(fibkit_lookup4_bulk(fib, keys, out, KEYS));
        CHECK_OK(fibkit_lookup4_bulk_be(fib, keys_be, out_be, KEYS));
        size_t differ = 0, routed = 0;
        for (size_t i = 0; i < KEYS; i++) {
            uint32_t hop = fibkit_lookup4(fib, keys[i]);
            differ += hop != out[i] || hop != out_be[i];
            routed += hop != FIBKIT_NO_ROUTE;
        }
        CHECK(differ == 0, "%s: %zu of %d differ", engines[e], differ, KEYS);
        CHECK(routed > KEYS / 4, "%s: %zu routed", engines[e], routed);
        fibkit_fib_free(fib);
    }
    printf("  real table %s: %zu IPv4 routes, bulk and scalar agree\n", fibkit_table_name(table),
           fibkit_table_routes(table, FIBKIT_IPV4));
    fibkit_table_free(table);
}

/* IPv4-mapped IPv6 routes and addresses (issue 48, defect 4): a route
 * inside ::ffff:0:0/96 is an IPv4 route, and a mapped address is looked
 * up among the IPv4 routes, by fibkit_lookup6 and its bulk call as by
 * fibkit_lookup4; ::/0 still answers IPv6 addresses. */
static void test_ipv4_mapped(void) {
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_new(10, &table));
    fibkit_addr6 any = {{0}};
    fibkit_addr6 mapped_net = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 0}};
    CHECK_OK(fibkit_table_add6(table, &any, 0, 6));
    CHECK_OK(fibkit_table_add6(table, &mapped_net, 120, 7));
    CHECK_OK(fibkit_table_add4(table, 0x0a000000, 8, 1));
    fibkit_fib *fib = NULL;
    CHECK_OK(fibkit_fib_build(table, NULL, &fib));
    fibkit_addr6 mapped = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}};
    fibkit_addr6 mapped10 = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 1, 1}};
    fibkit_addr6 mapped9 = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 9, 9, 9, 9}};
    fibkit_addr6 db8 = {{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
    CHECK(fibkit_lookup4(fib, 0x01020304) == 7, "1.2.3.4 by ::ffff:1.2.3.0/120");
    CHECK(fibkit_lookup6(fib, &mapped) == 7, "::ffff:1.2.3.4 %u", fibkit_lookup6(fib, &mapped));
    CHECK(fibkit_lookup6(fib, &mapped10) == 1, "::ffff:10.1.1.1 by 10.0.0.0/8");
    CHECK(fibkit_lookup6(fib, &mapped9) == FIBKIT_NO_ROUTE, "::ffff:9.9.9.9: ::/0 routes no IPv4");
    CHECK(fibkit_lookup6(fib, &db8) == 6, "2001:db8::1 by ::/0");
    fibkit_addr6 keys[4] = {mapped, mapped10, mapped9, db8};
    uint32_t out[4] = {0};
    CHECK_OK(fibkit_lookup6_bulk(fib, keys, out, 4));
    CHECK(out[0] == 7 && out[1] == 1 && out[2] == FIBKIT_NO_ROUTE && out[3] == 6, "bulk %u %u %u %u", out[0], out[1],
          out[2], out[3]);
    fibkit_fib_free(fib);

    /* A router's reader looks a mapped address up among the IPv4 routes
     * too, and an IPv6 route inside ::ffff:0:0/96 announced to it is
     * refused, naming the IPv4 route to announce instead. */
    fibkit_router *router = NULL;
    fibkit_reader *reader = NULL;
    CHECK_OK(fibkit_router_new(table, NULL, &router));
    CHECK_OK(fibkit_reader_new(router, &reader));
    CHECK(fibkit_reader_lookup6(reader, &mapped) == 7, "reader ::ffff:1.2.3.4");
    CHECK(fibkit_reader_lookup6(reader, &mapped10) == 1, "reader ::ffff:10.1.1.1 by 10.0.0.0/8");
    CHECK(fibkit_reader_lookup6(reader, &mapped9) == FIBKIT_NO_ROUTE, "reader ::ffff:9.9.9.9: ::/0 routes no IPv4");
    CHECK(fibkit_reader_lookup6(reader, &db8) == 6, "reader 2001:db8::1 by ::/0");
    memset(out, 0, sizeof out);
    CHECK_OK(fibkit_reader_lookup6_bulk(reader, keys, out, 4));
    CHECK(out[0] == 7 && out[1] == 1 && out[2] == FIBKIT_NO_ROUTE && out[3] == 6, "reader bulk %u %u %u %u", out[0],
          out[1], out[2], out[3]);
    fibkit_addr6 mapped11 = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 11, 0, 0, 0}};
    CHECK(fibkit_router_announce6(router, &mapped11, 104, 8) == FIBKIT_EINVAL, "a mapped route announced");
    CHECK(contains(fibkit_last_error(), "announce 11.0.0.0/8 as an IPv4 route"), "%s", fibkit_last_error());
    CHECK(fibkit_reader_lookup4(reader, 0x0b000001) == FIBKIT_NO_ROUTE, "nothing announced");
    fibkit_reader_free(reader);
    fibkit_router_free(router);
    fibkit_table_free(table);
}

/* Records: a field of a next hop's record by name, as text, int or float. */
static void test_records(void) {
    char path[256], fib_path[300], text[32];
    temp_file(path, sizeof path,
              "prefix,asn,org,share\n10.0.0.0/8,64500,\"Example, Inc.\",0.25\n10.1.0.0/16,64501,,\n2001:db8::/32,64502,Z,1.5\n");
    fibkit_table *table = NULL;
    CHECK_OK(fibkit_table_load_fields(path, "asn,org,share", 0, &table));
    fibkit_fib *fib = NULL, *opened = NULL;
    CHECK_OK(fibkit_fib_build(table, NULL, &fib));
    snprintf(fib_path, sizeof fib_path, "%s.fib", path);
    CHECK_OK(fibkit_fib_save(fib, fib_path));
    CHECK_OK(fibkit_fib_open(fib_path, &opened));
    fibkit_fib *fibs[2] = {fib, opened};
    for (int i = 0; i < 2; i++) {
        uint32_t hop = fibkit_lookup4(fibs[i], 0x0a090909), other = fibkit_lookup4(fibs[i], 0x0a010101);
        size_t length = 0;
        int64_t asn = 0;
        double share = 0;
        CHECK(fibkit_fib_field(fibs[i], hop, "org", text, sizeof text, &length) == 1 && strcmp(text, "Example, Inc.") == 0 &&
                  length == 13, "org %s", text);
        CHECK(fibkit_fib_field(fibs[i], hop, "org", text, 5, &length) == 1 && strcmp(text, "Exam") == 0 && length == 13,
              "cut org %s", text);
        CHECK(fibkit_fib_field_int(fibs[i], hop, "asn", &asn) == 1 && asn == 64500, "asn %lld", (long long)asn);
        CHECK(fibkit_fib_field_float(fibs[i], hop, "share", &share) == 1 && share == 0.25, "share %g", share);
        CHECK(fibkit_fib_field_float(fibs[i], hop, "asn", &share) == 1 && share == 64500.0, "an int as a float");
        CHECK(fibkit_fib_field(fibs[i], other, "org", text, sizeof text, NULL) == 0, "a missing value");
        CHECK(fibkit_fib_field_float(fibs[i], other, "share", &share) == 0, "a missing float");
        CHECK(fibkit_fib_field_int(fibs[i], FIBKIT_NO_ROUTE, "asn", &asn) == 0, "no route: no value");
        CHECK(fibkit_fib_field_int(fibs[i], hop, "nope", &asn) == FIBKIT_EINVAL &&
                  strstr(fibkit_last_error(), "no field \"nope\" (the fields: asn, org, share)") != NULL,
              "unknown field: %s", fibkit_last_error());
        CHECK(fibkit_fib_field_int(fibs[i], hop, "org", &asn) == FIBKIT_EINVAL &&
                  strstr(fibkit_last_error(), "not ints") != NULL, "wrong type: %s", fibkit_last_error());
        CHECK(fibkit_fib_value(fibs[i], hop, text, sizeof text) == 26 && strcmp(text, "64500,\"Example, Inc.\",0.25") == 0,
              "the whole record as a value: %s", text);
    }
    fibkit_table *bad = table;
    CHECK(fibkit_table_load_fields(path, "asn:integer", 0, &bad) == FIBKIT_EINVAL && bad == NULL, "a bad field list");
    CHECK(fibkit_table_load_fields(path, "org:int", 0, &bad) == FIBKIT_EPARSE &&
              strstr(fibkit_last_error(), ":2: field \"org\"") != NULL, "a value of another type: %s", fibkit_last_error());
    fibkit_fib_free(opened);
    fibkit_fib_free(fib);
    fibkit_table_free(table);
    remove(fib_path);
    remove(path);
}

int main(int argc, char **argv) {
    test_version_and_engines();
    test_small_table();
    test_ipv4_mapped();
    test_every_engine_against_the_reference();
    test_ipv6_against_the_reference();
    test_files();
    test_records();
    test_errors();
    test_foreach();
    test_router();
    test_readers_while_a_writer_updates("d18r");
    test_readers_while_a_writer_updates("poptrie18");
    test_readers_while_a_writer_updates("sail-runs");
    test_readers_while_a_writer_updates("lulea");
    test_atomic_batches("d18r");
    test_atomic_batches("poptrie18");
    test_atomic_batches("dir24-8");
    test_atomic_batches("sail-runs");
    test_real_table(argc > 1 ? argv[1] : NULL);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
