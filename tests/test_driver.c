/*
 * Driver-facing behaviour: the feature matrix per driver version, device queries, concurrent
 * initialisation. Each ctest entry runs one test with its environment (GREENCTX_SIM_DEVICES,
 * GREENCTX_SIM_DRIVER_VERSION); tests with exact expectations need the simulated driver with
 * that environment and skip elsewhere, the others check invariants on any driver.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

/* The feature matrix per simulated driver version: on, or off with this reason. */
static const struct {
    int driver;
    gctx_feature feature;
    int available;
    const char *reason; /* NULL: any reason */
} feature_rows[] = {
    {12030, GCTX_FEATURE_GREEN_CONTEXTS, 0, "needs driver 12.4, found 12.3"},
    {12030, GCTX_FEATURE_GREEN_STREAMS, 0, "needs driver 12.5, found 12.3"},
    {12030, GCTX_FEATURE_STRUCTURED_SPLIT, 0, "needs driver 13.1, found 12.3"},
    {12040, GCTX_FEATURE_GREEN_CONTEXTS, 1, NULL},
    {12040, GCTX_FEATURE_GREEN_STREAMS, 0, "needs driver 12.5, found 12.4"},
    {12040, GCTX_FEATURE_CONTEXT_IDS, 0, "needs driver 12.9, found 12.4"},
    {12040, GCTX_FEATURE_REPORTED_SM_RULES, 0, "needs driver 13.0, found 12.4"},
    {12040, GCTX_FEATURE_STRUCTURED_SPLIT, 0, "needs driver 13.1, found 12.4"},
    {12040, GCTX_FEATURE_FINE_GRANULES, 0, "needs driver 12.5, found 12.4"},
    {13000, GCTX_FEATURE_GREEN_CONTEXTS, 1, NULL},
    {13000, GCTX_FEATURE_GREEN_STREAMS, 1, NULL},
    {13000, GCTX_FEATURE_CONTEXT_IDS, 1, NULL},
    {13000, GCTX_FEATURE_REPORTED_SM_RULES, 1, NULL},
    {13000, GCTX_FEATURE_FINE_GRANULES, 1, NULL},
    {13000, GCTX_FEATURE_STRUCTURED_SPLIT, 0, "needs driver 13.1, found 13.0"},
    {13000, GCTX_FEATURE_WORKQUEUES, 0, "needs driver 13.1, found 13.0"},
    {13000, GCTX_FEATURE_LOCALITY_DOMAINS, 0, "needs driver 13.4, found 13.0"},
    {13010, GCTX_FEATURE_GREEN_CONTEXTS, 1, NULL},
    {13010, GCTX_FEATURE_GREEN_STREAMS, 1, NULL},
    {13010, GCTX_FEATURE_STRUCTURED_SPLIT, 1, NULL},
    {13010, GCTX_FEATURE_WORKQUEUES, 1, NULL},
    {13010, GCTX_FEATURE_LOCALITY_DOMAINS, 0, "needs driver 13.4, found 13.1"},
};

/* On the simulated driver of that version: gctx_init succeeds and every row holds. */
static void expect_features(int driver)
{
    gt_require_sim(driver, NULL);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_init(), GCTX_SUCCESS);
    int version = 0;
    GT_ASSERT_STATUS(gctx_driver_version(&version), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(version, driver);
    for (size_t i = 0; i < sizeof feature_rows / sizeof feature_rows[0]; i++) {
        if (feature_rows[i].driver != driver)
            continue;
        gctx_feature f = feature_rows[i].feature;
        if (gctx_feature_available(f) != feature_rows[i].available)
            GT_FAIL("%s on %d: available %d, expected %d (reason \"%s\")", gctx_feature_name(f),
                    driver, gctx_feature_available(f), feature_rows[i].available,
                    gctx_feature_reason(f));
        if (feature_rows[i].reason)
            GT_ASSERT_CONTAINS(gctx_feature_reason(f), feature_rows[i].reason);
    }
}

GT_TEST(features_12030)
{
    expect_features(12030);
    GT_CHECK();
    /* No SM resource before 12.4: the device's facts still come, the rules from the
     * architecture. */
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &info), GCTX_SUCCESS);
    GT_ASSERT_GT_INT(info.sm_count, 0);
    GT_ASSERT_EQ_INT(info.sm_rules_derived, 1);
    gctx_partition *partition = NULL;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &partition), GCTX_ERROR_UNSUPPORTED);
    GT_ASSERT(partition == NULL);
    GT_ASSERT_CONTAINS(gctx_last_error(), "needs driver 12.4, found 12.3");
}

GT_TEST(features_12040) { expect_features(12040); }
GT_TEST(features_13000) { expect_features(13000); }
GT_TEST(features_13010) { expect_features(13010); }

/* Any driver: a feature is on exactly when the driver is new enough and exports what it
 * needs, and every row has a reason. */
static const struct {
    gctx_feature feature;
    int since;
} feature_versions[] = {
#define FEATURE_ROW_(name, value, text, version) {GCTX_FEATURE_##name, version},
    GCTX_FEATURE_MAP(FEATURE_ROW_)
#undef FEATURE_ROW_
};

GT_TEST(features_consistent)
{
    gt_require_device();
    GT_CHECK();
    int version = 0;
    GT_ASSERT_STATUS(gctx_driver_version(&version), GCTX_SUCCESS);
    GT_ASSERT(gctx_driver_path() != NULL);
    for (size_t i = 0; i < sizeof feature_versions / sizeof feature_versions[0]; i++) {
        gctx_feature f = feature_versions[i].feature;
        const char *reason = gctx_feature_reason(f);
        GT_ASSERT(reason && *reason);
        if (version < feature_versions[i].since) {
            GT_ASSERT_EQ_INT(gctx_feature_available(f), 0);
            GT_ASSERT_CONTAINS(reason, "needs driver");
        } else if (!gctx_feature_available(f)) {
            GT_ASSERT_CONTAINS(reason, "not exported");
        }
    }
    GT_ASSERT_EQ_INT(gctx_feature_available((gctx_feature)99), 0);
    GT_ASSERT_STR_EQ(gctx_feature_reason((gctx_feature)99), "no such feature");
}

/* ---- devices ---- */

static void get_info(int device, gctx_device_info *info)
{
    *info = (gctx_device_info)GCTX_DEVICE_INFO_INIT;
    gctx_status s = gctx_device_get_info(device, info);
    if (s != GCTX_SUCCESS)
        gt_fail(__FILE__, __LINE__, "gctx_device_get_info(%d): %s (%s)", device,
                gctx_status_name(s), gctx_last_error());
    else if (info->ordinal != device)
        gt_fail(__FILE__, __LINE__, "ordinal %d, expected %d", info->ordinal, device);
}

typedef struct expected_device {
    const char *name_part;
    int cc_major, cc_minor;
    unsigned sms, min, alignment;
    int derived;
} expected_device;

static void expect_device(int device, const expected_device *e)
{
    gctx_device_info info;
    get_info(device, &info);
    GT_CHECK();
    GT_ASSERT_CONTAINS(info.name, e->name_part);
    GT_ASSERT_EQ_INT(info.cc_major, e->cc_major);
    GT_ASSERT_EQ_INT(info.cc_minor, e->cc_minor);
    GT_ASSERT_EQ_INT(info.sm_count, e->sms);
    GT_ASSERT_EQ_INT(info.min_partition_sms, e->min);
    GT_ASSERT_EQ_INT(info.coscheduled_alignment, e->alignment);
    GT_ASSERT_EQ_INT(info.sm_rules_derived, e->derived);
    GT_ASSERT_EQ_INT(info.locality_domain_count, 0);
}

/* The simulated h200 and a100 on a driver version: the same facts on every driver; before
 * 13.0 the driver reports no rules, so they are the architecture's, marked derived. */
static void expect_h200_a100(int driver)
{
    gt_require_sim(driver, "h200,a100");
    GT_CHECK();
    int derived = driver < 13000;
    const expected_device h200 = {"H200", 9, 0, 132, 8, 8, derived};
    const expected_device a100 = {"A100", 8, 0, 108, 4, 2, derived};
    int count = 0;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(count, 2);
    expect_device(0, &h200);
    GT_CHECK();
    expect_device(1, &a100);
}

GT_TEST(devices_13000) { expect_h200_a100(13000); }
GT_TEST(devices_12050) { expect_h200_a100(12050); }

GT_TEST(devices_none)
{
    gt_require_sim(0, "none");
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_init(), GCTX_SUCCESS);
    int count = -1;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(count, 0);
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &info), GCTX_ERROR_NO_DEVICE);
    GT_ASSERT_CONTAINS(gctx_last_error(), "no CUDA device");
}

/* Any driver with a device: invariants only (the exact values are the sim tests' job). */
GT_TEST(devices_invariants)
{
    gt_require_device();
    GT_CHECK();
    int count = 0;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_SUCCESS);
    GT_ASSERT_GE_INT(count, 1);
    for (int d = 0; d < count; d++) {
        gctx_device_info info;
        get_info(d, &info);
        GT_CHECK();
        GT_ASSERT_GT_INT(strlen(info.name), 0);
        GT_ASSERT_GT_INT(info.cc_major, 0);
        GT_ASSERT_GT_INT(info.sm_count, 0);
        GT_ASSERT_GT_INT(info.coscheduled_alignment, 0);
        GT_ASSERT_GE_INT(info.min_partition_sms, info.coscheduled_alignment);
        GT_ASSERT(info.sm_rules_derived == 0 || info.sm_rules_derived == 1);
        printf("# device %d: %s, cc %d.%d, %u SMs, min %u, alignment %u, derived %d\n", d,
               info.name, info.cc_major, info.cc_minor, info.sm_count, info.min_partition_sms,
               info.coscheduled_alignment, info.sm_rules_derived);
    }
}

GT_TEST(devices_bad_ordinal)
{
    gt_require_device();
    GT_CHECK();
    int count = 0;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_SUCCESS);
    char valid[64];
    if (count == 1)
        snprintf(valid, sizeof valid, "the only device is 0");
    else
        snprintf(valid, sizeof valid, "valid devices are 0 to %d", count - 1);
    const int bad[] = {-1, count, count + 1000, -2147483647 - 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gctx_device_info info = GCTX_DEVICE_INFO_INIT;
        GT_ASSERT_STATUS(gctx_device_get_info(bad[i], &info), GCTX_ERROR_NO_DEVICE);
        GT_ASSERT_CONTAINS(gctx_last_error(), valid);
        GT_ASSERT_EQ_INT(info.sm_count, 0); /* untouched */
    }
}

/* ---- threads ---- */

#define INIT_THREADS 16
static pthread_barrier_t start;

static void *init_concurrently(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    gctx_status s = gctx_init();
    int version = 0, count = 0;
    if (s == GCTX_SUCCESS)
        s = gctx_driver_version(&version);
    if (s == GCTX_SUCCESS)
        s = gctx_device_count(&count);
    long packed = s == GCTX_SUCCESS ? (long)version * 1000 + count : -1 - (long)s;
    return (void *)packed;
}

GT_TEST(init_from_many_threads)
{
    pthread_t threads[INIT_THREADS];
    GT_ASSERT_EQ_INT(pthread_barrier_init(&start, NULL, INIT_THREADS), 0);
    for (int i = 0; i < INIT_THREADS; i++)
        GT_ASSERT_EQ_INT(pthread_create(&threads[i], NULL, init_concurrently, NULL), 0);
    long results[INIT_THREADS];
    for (int i = 0; i < INIT_THREADS; i++) {
        void *r;
        pthread_join(threads[i], &r);
        results[i] = (long)r;
    }
    pthread_barrier_destroy(&start);
    /* Everyone saw the same outcome, and the driver loaded. */
    for (int i = 1; i < INIT_THREADS; i++)
        GT_ASSERT_EQ_INT(results[i], results[0]);
    if (results[0] == -1 - (long)GCTX_ERROR_NO_DRIVER && !gt_on_sim())
        GT_SKIP("no CUDA driver on this machine: %s", (gctx_init(), gctx_last_error()));
    GT_ASSERT_GT_INT(results[0], 0);
    int version = 0;
    GT_ASSERT_STATUS(gctx_driver_version(&version), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(results[0] / 1000, version);
}

/* ---- a failed load is tried again ---- */

/* GREENCTX_SIM_FAIL=cuInit:1 (or cuDriverGetVersion:1): the first attempt fails and says so,
 * and the next call loads the driver: one failure does not disable greenctx for the process. */
static void expect_retry(const char *entry_point)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_init(), entry_point[2] == 'I' ? GCTX_ERROR_DRIVER : GCTX_ERROR_NO_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), entry_point);
    GT_ASSERT_CONTAINS(gctx_last_error(), "failed");
    GT_ASSERT_CONTAINS(gctx_last_error(), "tries again on the next call");
    GT_ASSERT(gctx_last_cuda_result() != 0);
    GT_ASSERT_STATUS(gctx_init(), GCTX_SUCCESS);
    int count = 0;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_SUCCESS);
    GT_ASSERT_GT_INT(count, 0);
    GT_ASSERT(gctx_driver_path() != NULL);
    GT_ASSERT_EQ_INT(gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS), 1);
}

GT_TEST(init_retries_after_cuInit_fails) { expect_retry("cuInit"); }
GT_TEST(init_retries_after_cuDriverGetVersion_fails) { expect_retry("cuDriverGetVersion"); }
