/*
 * What the MPI test programs share: checks that count failures on this rank
 * (and say where), a seeded generator every rank can replay, and the end of
 * a test (every rank learns whether any rank failed, so mpirun's exit code
 * is the verdict whichever rank saw the failure).
 */
#ifndef SM_MPI_TEST_UTIL_H
#define SM_MPI_TEST_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stridemem.h"
#include "stridemem_mpi.h"

static int g_failures = 0;
static int g_rank = -1;

/* Every failure counts; the first 30 of a rank are printed (enough to debug
 * from). A test never stops early on failure: its ranks must go on posting
 * the same messages, or the others would wait for them forever. */
#define FAIL(...)                                                                  \
    do {                                                                           \
        if (++g_failures <= 30) {                                                  \
            fprintf(stderr, "[rank %d] FAIL %s:%d: ", g_rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
        }                                                                          \
    } while (0)

/* A library call that must succeed; on failure the test cannot go on in
 * this function. */
#define SM_OK_OR_RETURN(call)                                                             \
    do {                                                                                  \
        sm_status st_ = (call);                                                           \
        if (st_ != SM_OK) {                                                               \
            FAIL("%s -> %s: %s", #call, sm_mpi_status_string(st_), sm_last_error());      \
            return;                                                                       \
        }                                                                                 \
    } while (0)

#define EXPECT_STATUS(call, want)                                                         \
    do {                                                                                  \
        sm_status st_ = (call);                                                           \
        if (st_ != (want)) {                                                              \
            FAIL("%s -> %s, expected %s", #call, sm_mpi_status_string(st_),               \
                 sm_mpi_status_string(want));                                             \
        }                                                                                 \
    } while (0)

#define EXPECT_TRUE(cond)                                  \
    do {                                                   \
        if (!(cond)) FAIL("expected %s", #cond);           \
    } while (0)

#define EXPECT_EQ_I64(a, b)                                                             \
    do {                                                                                \
        long long a_ = (long long)(a), b_ = (long long)(b);                             \
        if (a_ != b_) FAIL("%s == %lld, expected %s == %lld", #a, a_, #b, b_);          \
    } while (0)

/* splitmix64: every rank can replay any other rank's sequence from its seed. */
typedef struct test_rng {
    uint64_t s;
} test_rng;

static inline uint64_t rng_next(test_rng* r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline int64_t rng_range(test_rng* r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static inline test_rng rng_seeded(uint64_t a, uint64_t b, uint64_t c)
{
    test_rng r;
    r.s = a * UINT64_C(1000003) ^ b * UINT64_C(7919) ^ c * UINT64_C(104729);
    rng_next(&r);
    return r;
}

/* The verdict, the same on every rank: 0 when no rank failed. */
static inline int finish_test(const char* name)
{
    int total = 0;
    MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) {
        if (total == 0) {
            printf("%s: OK\n", name);
        } else {
            printf("%s: %d failure(s) over all ranks\n", name, total);
        }
        fflush(stdout);
    }
    return total == 0 ? 0 : 1;
}

#endif /* SM_MPI_TEST_UTIL_H */
