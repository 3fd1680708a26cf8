/*
 * The checks of the C test programs: CHECK(cond, fmt, ...) counts a pass
 * or prints the failure with the call's last error; each program prints
 * "N passed, M failed" at its end.
 */
#ifndef FIBKIT_TEST_CHECK_H
#define FIBKIT_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#include "fibkit.h"

static int passed, failed;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (cond) {                                                             \
            passed++;                                                           \
        } else {                                                                \
            failed++;                                                           \
            fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, " (last error: %s)\n",                             \
                    fibkit_last_error() ? fibkit_last_error() : "none");        \
        }                                                                       \
    } while (0)

/* Whether `text` (NULL: no) contains `part`. */
static inline int contains(const char *text, const char *part) {
    return text != NULL && strstr(text, part) != NULL;
}

#endif
