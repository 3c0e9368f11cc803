/*
 * A small test harness: every test binary links harness.c, which provides main().
 *
 *   GT_TEST(status_names) { GT_ASSERT_EQ_INT(gctx_status_name(0)[0], 'G'); }
 *
 * main() runs the tests named on the command line (all of them when none is named) in
 * registration order and prints TAP-ish lines: "ok N name", "not ok N name",
 * "ok N name # SKIP reason". Exit status: 0 when every test that ran passed (or was skipped
 * while another passed), 1 when one failed, 77 when every test was skipped (CTest's
 * SKIP_RETURN_CODE, so a test needing a GPU or the simulated driver is never reported passed
 * where it could not run). `--list` prints the names.
 *
 * Assertions print both operands with file:line and end the test (they return from the test
 * function, so use them in the test function itself, or in helpers through GT_CHECK).
 */
#ifndef GREENCTX_TEST_HARNESS_H
#define GREENCTX_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

#include "greenctx.h"

typedef void (*gt_test_fn)(void);
void gt_register(const char *name, gt_test_fn fn);

/* Outcome of the running test: 0 ok so far, 1 failed, 2 skipped. */
extern int gt_state;
void gt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void gt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define GT_TEST(name)                                                                          \
    static void name(void);                                                                    \
    __attribute__((constructor)) static void gt_register_##name(void)                         \
    {                                                                                          \
        gt_register(#name, name);                                                              \
    }                                                                                          \
    static void name(void)

/* Leaves the test function when the running test has failed or been skipped (after a helper). */
#define GT_CHECK()                                                                             \
    do {                                                                                       \
        if (gt_state)                                                                          \
            return;                                                                            \
    } while (0)

#define GT_SKIP(...)                                                                           \
    do {                                                                                       \
        gt_skip(__VA_ARGS__);                                                                  \
        return;                                                                                \
    } while (0)

#define GT_FAIL(...)                                                                           \
    do {                                                                                       \
        gt_fail(__FILE__, __LINE__, __VA_ARGS__);                                              \
        return;                                                                                \
    } while (0)

#define GT_ASSERT(cond)                                                                        \
    do {                                                                                       \
        if (!(cond))                                                                           \
            GT_FAIL("assertion failed: %s", #cond);                                            \
    } while (0)

#define GT_ASSERT_OP_(a, op, b, type, fmt)                                                     \
    do {                                                                                       \
        type gt_a_ = (a), gt_b_ = (b);                                                         \
        if (!(gt_a_ op gt_b_))                                                                 \
            GT_FAIL("%s %s %s: " fmt " vs " fmt, #a, #op, #b, gt_a_, gt_b_);                   \
    } while (0)
#define GT_ASSERT_EQ_INT(a, b) GT_ASSERT_OP_(a, ==, b, long long, "%lld")
#define GT_ASSERT_NE_INT(a, b) GT_ASSERT_OP_(a, !=, b, long long, "%lld")
#define GT_ASSERT_GE_INT(a, b) GT_ASSERT_OP_(a, >=, b, long long, "%lld")
#define GT_ASSERT_GT_INT(a, b) GT_ASSERT_OP_(a, >, b, long long, "%lld")

/* A status, printed by name: GT_ASSERT_STATUS(gctx_init(), GCTX_SUCCESS) also prints the
 * thread's last error message when they differ. */
#define GT_ASSERT_STATUS(expr, expected)                                                       \
    do {                                                                                       \
        gctx_status gt_s_ = (expr), gt_e_ = (expected);                                        \
        if (gt_s_ != gt_e_)                                                                    \
            GT_FAIL("%s: %s, expected %s (last error: \"%s\")", #expr, gctx_status_name(gt_s_), \
                    gctx_status_name(gt_e_), gctx_last_error());                               \
    } while (0)

#define GT_ASSERT_STR_EQ(a, b)                                                                 \
    do {                                                                                       \
        const char *gt_a_ = (a), *gt_b_ = (b);                                                 \
        if (!gt_a_ || !gt_b_ || strcmp(gt_a_, gt_b_) != 0)                                     \
            GT_FAIL("%s == %s: \"%s\" vs \"%s\"", #a, #b, gt_a_ ? gt_a_ : "(null)",            \
                    gt_b_ ? gt_b_ : "(null)");                                                 \
    } while (0)

/* haystack contains needle */
#define GT_ASSERT_CONTAINS(haystack, needle)                                                   \
    do {                                                                                       \
        const char *gt_h_ = (haystack), *gt_n_ = (needle);                                     \
        if (!gt_h_ || !strstr(gt_h_, gt_n_))                                                   \
            GT_FAIL("%s contains %s: \"%s\" does not contain \"%s\"", #haystack, #needle,       \
                    gt_h_ ? gt_h_ : "(null)", gt_n_);                                          \
    } while (0)

/* ---- the driver under test ---- */

/* 1 when GREENCTX_CUDA_LIBRARY names the simulated driver (its test hooks resolve). */
int gt_on_sim(void);
/* A test hook of the simulated driver (sim/greenctx_sim.h), or NULL on the real driver or
 * when the symbol is missing: dlopen(getenv("GREENCTX_CUDA_LIBRARY")) + dlsym. */
void *gt_sim_symbol(const char *name);
/* Skips the test unless it runs on the simulated driver with GREENCTX_SIM_DRIVER_VERSION
 * equal to driver_version (0: any) and GREENCTX_SIM_DEVICES equal to devices (NULL: any).
 * The ctest entry sets the environment; the test states what it expects. */
void gt_require_sim(int driver_version, const char *devices);
/* Skips the test unless a driver loads and counts at least one device. */
void gt_require_device(void);

/* The simulated driver's live-object count for a kind ("green_ctx", "all", ...), or -1 when
 * not on the simulator. */
int gt_sim_live(const char *kind);
/* Calls the simulated driver's gctxsim_calls(symbol), or -1 when not on the simulator. */
long gt_sim_calls(const char *symbol);

#endif
