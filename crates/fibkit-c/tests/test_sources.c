/*
 * A C program following live routes through libfibkit: a BGP source or
 * the kernel's routing table, read through fibkit_reader handles while
 * reader threads look up.
 *
 * Usage:
 *   test_sources errors   checks every error path of the source calls that
 *                         needs no daemon; prints "N passed, M failed" and
 *                         exits 1 on any failure.
 *   test_sources          reads commands on standard input, one a line, and
 *                         answers each with one line ("ok ..." or
 *                         "error CODE MESSAGE"), for a test that drives a
 *                         routing daemon (crates/fibkit-c/tests/sources.rs):
 *     bgp LOCAL_AS ROUTER_ID VALUE LISTEN NEIGHBOR...   -> ok PORT
 *     kernel TABLE VALUE                                -> ok ROUTES4 ROUTES6
 *     neighbor INDEX    -> ok STATE PREFIXES UPDATES SESSIONS ADDRESS
 *     stats             -> ok ROUTES4 ROUTES6 APPLIED REJECTED BATCHES
 *     lookup IN OUT     -> ok N: the value of each address of file IN (a
 *                          line each, either family) written to OUT, a line
 *                          each, "-" for no route (bulk lookups)
 *     spin              -> ok: two threads look up random addresses through
 *                          readers of their own until "unspin"
 *     unspin            -> ok LOOKUPS
 *     log               -> "log LINE" for each line of the source's log, ok
 *     stop              -> ok: fibkit_source_stop (the readers stay)
 *   VALUE is next-hop, origin-as, gateway or interface.
 */
#define _DEFAULT_SOURCE
#include "fibkit.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"


/* The call's status is `code` and the last error says `part`. */
#define CHECK_FAILS(call, code, part)                                           \
    CHECK((call) == (code) && contains(fibkit_last_error(), part), "%s", #call)

static int count_lines(void *context, const char *line) {
    (void)line;
    ++*(size_t *)context;
    return 0;
}

static void test_errors(void) {
    fibkit_source *source = (fibkit_source *)1;
    fibkit_bgp_config config;
    fibkit_bgp_config_init(&config);
    CHECK(config.hold_time == 90 && config.value == FIBKIT_VALUE_NEXT_HOP && config.neighbors == NULL,
          "the defaults");
    CHECK_FAILS(fibkit_bgp_start(NULL, &source), FIBKIT_EINVAL, "config");
    CHECK(source == NULL, "a failed start leaves NULL");
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EINVAL, "router_id");
    config.router_id = "10.0.0.1.5";
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EINVAL, "not an IPv4 address");
    config.router_id = "10.0.0.1";
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EINVAL, "local_as is 0");
    config.local_as = 65000;
    const char *neighbors[] = {"127.0.0.2,as=65001", "127.0.0.3,as=65002,hold=3"};
    config.neighbors = neighbors;
    config.neighbor_count = 2;
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EINVAL, "neighbors[1]: unknown key");
    config.neighbor_count = 1;
    config.value = 7;
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EINVAL, "config->value 7");
    config.value = FIBKIT_VALUE_ORIGIN_AS;
    config.hold_time = 2;
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EINVAL, "hold time 2");
    config.hold_time = 90;
    const char *listen[] = {"127.0.0.1"};
    config.listen = listen;
    config.listen_count = 1;
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EINVAL, "listen[0]");
    config.engines = "no-such-engine";
    listen[0] = "127.0.0.1:0";
    CHECK_FAILS(fibkit_bgp_start(&config, &source), FIBKIT_EENGINE, "no-such-engine");
    config.engines = "d18r,poptrie16x12";

    /* A started source, with no neighbour connected. */
    CHECK(fibkit_bgp_start(&config, &source) == FIBKIT_OK, "start");
    uint16_t port = fibkit_bgp_port(source);
    CHECK(port != 0, "a free port");
    CHECK(strcmp(fibkit_source_engine(source, FIBKIT_IPV4), "d18r") == 0, "engine");
    CHECK(strcmp(fibkit_source_engine(source, FIBKIT_IPV6), "poptrie16x12") == 0, "engine6");
    CHECK(fibkit_source_engine(source, 5) == NULL, "another family");

    /* A second source on the same port cannot listen. */
    char taken[32];
    snprintf(taken, sizeof taken, "127.0.0.1:%u", (unsigned)port);
    listen[0] = taken;
    fibkit_source *second = NULL;
    CHECK_FAILS(fibkit_bgp_start(&config, &second), FIBKIT_EIO, "cannot listen");

    fibkit_bgp_neighbor_status status;
    CHECK(fibkit_bgp_neighbor(source, 0, &status) == FIBKIT_OK, "neighbour 0");
    CHECK(strcmp(status.address, "127.0.0.2") == 0 && status.remote_as == 65001 &&
              status.state == FIBKIT_BGP_IDLE && status.prefixes == 0,
          "neighbour 0 is %s AS %u state %d", status.address, status.remote_as, status.state);
    CHECK_FAILS(fibkit_bgp_neighbor(source, 1, &status), FIBKIT_EINVAL, "neighbour 1 of 1");
    CHECK_FAILS(fibkit_bgp_neighbor(source, 0, NULL), FIBKIT_EINVAL, "out");

    fibkit_source_counts counts;
    CHECK(fibkit_source_stats(source, &counts) == FIBKIT_OK && counts.routes4 == 0 && counts.routes6 == 0,
          "no routes yet");
    fibkit_reader *reader = NULL;
    CHECK(fibkit_source_reader(source, &reader) == FIBKIT_OK, "reader");
    CHECK(fibkit_reader_lookup4(reader, 0x0a000001) == FIBKIT_NO_ROUTE, "an empty FIB");
    char value[64] = "x";
    CHECK(fibkit_source_value(source, FIBKIT_IPV4, FIBKIT_NO_ROUTE, value, sizeof value) == 0, "no value");
    CHECK(fibkit_source_value(source, FIBKIT_IPV4, 1, value, sizeof value) == 0, "a next hop not given");
    CHECK(fibkit_source_value(NULL, FIBKIT_IPV4, 1, NULL, 0) == 0, "NULL source");
    CHECK_FAILS(fibkit_source_log(source, NULL, NULL), FIBKIT_EINVAL, "line");
    size_t lines = 0;
    CHECK(fibkit_source_log(source, count_lines, &lines) == FIBKIT_OK, "the log");

    /* Kernel sources: the arguments are checked first. */
    fibkit_source *kernel = (fibkit_source *)1;
    CHECK_FAILS(fibkit_kernel_start(0, FIBKIT_VALUE_GATEWAY, NULL, &kernel), FIBKIT_EINVAL, "table 0");
    CHECK(kernel == NULL, "a failed start leaves NULL");
    CHECK_FAILS(fibkit_kernel_start(254, FIBKIT_VALUE_ORIGIN_AS, NULL, &kernel), FIBKIT_EINVAL, "value 1");
    CHECK_FAILS(fibkit_kernel_start(254, FIBKIT_VALUE_GATEWAY, "no-such-engine", &kernel), FIBKIT_EENGINE,
                "no-such-engine");

    /* Stopping keeps the readers; NULL is ignored. */
    fibkit_source_stop(source);
    fibkit_source_stop(NULL);
    CHECK(fibkit_reader_lookup4(reader, 0x0a000001) == FIBKIT_NO_ROUTE, "a reader outlives its source");
    fibkit_reader_free(reader);
    CHECK(fibkit_bgp_port(NULL) == 0, "NULL source");
    CHECK_FAILS(fibkit_source_reader(NULL, &reader), FIBKIT_EINVAL, "source");
}

/* ---- The command loop ---- */

static fibkit_source *source;
static fibkit_reader *reader;

static void error(void) {
    const char *message = fibkit_last_error();
    printf("error %s\n", message ? message : "(none)");
}

static int value_code(const char *name) {
    if (strcmp(name, "next-hop") == 0) return FIBKIT_VALUE_NEXT_HOP;
    if (strcmp(name, "origin-as") == 0) return FIBKIT_VALUE_ORIGIN_AS;
    if (strcmp(name, "gateway") == 0) return FIBKIT_VALUE_GATEWAY;
    if (strcmp(name, "interface") == 0) return FIBKIT_VALUE_INTERFACE;
    return -1;
}

static void started(int status) {
    if (status != FIBKIT_OK) {
        error();
        return;
    }
    if (fibkit_source_reader(source, &reader) != FIBKIT_OK) {
        error();
        return;
    }
    fibkit_source_counts counts;
    fibkit_source_stats(source, &counts);
    printf("ok %u %llu %llu\n", (unsigned)fibkit_bgp_port(source), (unsigned long long)counts.routes4,
           (unsigned long long)counts.routes6);
}

static void start_bgp(char *arguments) {
    char *words[64];
    size_t n = 0;
    for (char *word = strtok(arguments, " "); word != NULL && n < 64; word = strtok(NULL, " ")) words[n++] = word;
    if (n < 4) {
        printf("error bgp LOCAL_AS ROUTER_ID VALUE LISTEN NEIGHBOR...\n");
        return;
    }
    fibkit_bgp_config config;
    fibkit_bgp_config_init(&config);
    config.local_as = (uint32_t)strtoul(words[0], NULL, 10);
    config.router_id = words[1];
    config.value = value_code(words[2]);
    const char *listen[1] = {words[3]};
    config.listen = listen;
    config.listen_count = 1;
    config.neighbors = (const char *const *)&words[4];
    config.neighbor_count = n - 4;
    started(fibkit_bgp_start(&config, &source));
}

static void start_kernel(char *arguments) {
    char value[32];
    unsigned table;
    if (sscanf(arguments, "%u %31s", &table, value) != 2) {
        printf("error kernel TABLE VALUE\n");
        return;
    }
    started(fibkit_kernel_start(table, value_code(value), NULL, &source));
}

static void neighbor(const char *arguments) {
    fibkit_bgp_neighbor_status status;
    if (fibkit_bgp_neighbor(source, strtoul(arguments, NULL, 10), &status) != FIBKIT_OK) {
        error();
        return;
    }
    printf("ok %d %llu %llu %llu %s\n", status.state, (unsigned long long)status.prefixes,
           (unsigned long long)status.updates, (unsigned long long)status.sessions, status.address);
}

static void stats(void) {
    fibkit_source_counts counts;
    if (fibkit_source_stats(source, &counts) != FIBKIT_OK) {
        error();
        return;
    }
    printf("ok %llu %llu %llu %llu %llu\n", (unsigned long long)counts.routes4, (unsigned long long)counts.routes6,
           (unsigned long long)counts.updates_applied, (unsigned long long)counts.updates_rejected,
           (unsigned long long)counts.batches);
}

/* An address of either family, parsed into one of the two key arrays. */
typedef struct {
    int family;
    size_t index;
} slot;

static void lookup(const char *arguments) {
    char in_path[4096], out_path[4096];
    if (sscanf(arguments, "%4095s %4095s", in_path, out_path) != 2) {
        printf("error lookup IN OUT\n");
        return;
    }
    FILE *in = fopen(in_path, "r"), *out = fopen(out_path, "w");
    if (in == NULL || out == NULL) {
        printf("error cannot open %s or %s\n", in_path, out_path);
        return;
    }
    size_t capacity = 1 << 16, n = 0, n4 = 0, n6 = 0;
    slot *slots = malloc(capacity * sizeof *slots);
    uint32_t *keys4 = malloc(capacity * sizeof *keys4);
    fibkit_addr6 *keys6 = malloc(capacity * sizeof *keys6);
    char line[128];
    while (fgets(line, sizeof line, in) != NULL) {
        line[strcspn(line, "\n")] = 0;
        if (n == capacity) {
            capacity *= 2;
            slots = realloc(slots, capacity * sizeof *slots);
            keys4 = realloc(keys4, capacity * sizeof *keys4);
            keys6 = realloc(keys6, capacity * sizeof *keys6);
        }
        struct in_addr v4;
        if (inet_pton(AF_INET, line, &v4) == 1) {
            keys4[n4] = ntohl(v4.s_addr);
            slots[n++] = (slot){FIBKIT_IPV4, n4++};
        } else if (inet_pton(AF_INET6, line, &keys6[n6]) == 1) {
            slots[n++] = (slot){FIBKIT_IPV6, n6++};
        } else {
            printf("error line %zu of %s: %s is not an address\n", n + 1, in_path, line);
            fclose(in);
            fclose(out);
            return;
        }
    }
    uint32_t *hops4 = malloc((n4 + 1) * sizeof *hops4), *hops6 = malloc((n6 + 1) * sizeof *hops6);
    if (fibkit_reader_lookup4_bulk(reader, keys4, hops4, n4) != FIBKIT_OK ||
        fibkit_reader_lookup6_bulk(reader, keys6, hops6, n6) != FIBKIT_OK) {
        error();
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t hop = slots[i].family == FIBKIT_IPV4 ? hops4[slots[i].index] : hops6[slots[i].index];
            char value[64];
            if (hop == FIBKIT_NO_ROUTE) {
                fputs("-\n", out);
            } else if (fibkit_source_value(source, slots[i].family, hop, value, sizeof value) == 0) {
                fprintf(out, "next hop %u without a value\n", hop);
            } else {
                fprintf(out, "%s\n", value);
            }
        }
        printf("ok %zu\n", n);
    }
    fclose(in);
    fclose(out);
    free(slots);
    free(keys4);
    free(keys6);
    free(hops4);
    free(hops6);
}

static atomic_int spinning;
static atomic_ullong spun;
static pthread_t spinners[2];

static void *spin(void *argument) {
    fibkit_reader *own = NULL;
    if (fibkit_source_reader(source, &own) != FIBKIT_OK) return NULL;
    uint32_t state = (uint32_t)(uintptr_t)argument * 2654435761u + 1, keys[256], hops[256];
    fibkit_addr6 keys6[256];
    unsigned long long lookups = 0;
    while (atomic_load(&spinning)) {
        for (int i = 0; i < 256; i++) {
            state ^= state << 13, state ^= state >> 17, state ^= state << 5;
            keys[i] = state;
            memset(&keys6[i], 0, sizeof keys6[i]);
            memcpy(&keys6[i], &state, sizeof state);
            keys6[i].bytes[0] = 0x20;
        }
        fibkit_reader_lookup4_bulk(own, keys, hops, 256);
        fibkit_reader_lookup6_bulk(own, keys6, hops, 256);
        lookups += 512;
    }
    fibkit_reader_free(own);
    atomic_fetch_add(&spun, lookups);
    return NULL;
}

static int print_line(void *context, const char *line) {
    (void)context;
    printf("log %s\n", line);
    return 0;
}

static int commands(void) {
    char line[65536];
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = 0;
        char *arguments = strchr(line, ' ');
        if (arguments != NULL) *arguments++ = 0;
        else arguments = line + strlen(line);
        if (strcmp(line, "bgp") == 0) start_bgp(arguments);
        else if (strcmp(line, "kernel") == 0) start_kernel(arguments);
        else if (strcmp(line, "neighbor") == 0) neighbor(arguments);
        else if (strcmp(line, "stats") == 0) stats();
        else if (strcmp(line, "lookup") == 0) lookup(arguments);
        else if (strcmp(line, "spin") == 0) {
            atomic_store(&spinning, 1);
            for (uintptr_t i = 0; i < 2; i++) pthread_create(&spinners[i], NULL, spin, (void *)i);
            printf("ok\n");
        } else if (strcmp(line, "unspin") == 0) {
            atomic_store(&spinning, 0);
            for (int i = 0; i < 2; i++) pthread_join(spinners[i], NULL);
            printf("ok %llu\n", (unsigned long long)atomic_load(&spun));
        } else if (strcmp(line, "log") == 0) {
            fibkit_source_log(source, print_line, NULL);
            printf("ok\n");
        } else if (strcmp(line, "stop") == 0) {
            fibkit_source_stop(source);
            source = NULL;
            printf("ok\n");
        } else {
            printf("error unknown command %s\n", line);
        }
        fflush(stdout);
    }
    fibkit_source_stop(source);
    fibkit_reader_free(reader);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "errors") == 0) {
        test_errors();
        printf("%d passed, %d failed\n", passed, failed);
        return failed > 0;
    }
    return commands();
}
