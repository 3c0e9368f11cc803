/* Status names and strings, version macros, the thread-local error message. No driver. */
#include <pthread.h>
#include <stdio.h>

#include "harness.h"

static const struct {
    gctx_status status;
    const char *name;
} statuses[] = {
#define ROW_(name, value, text) {GCTX_##name, "GCTX_" #name},
    GCTX_STATUS_MAP(ROW_)
#undef ROW_
};
#define NB_STATUSES (sizeof statuses / sizeof statuses[0])

GT_TEST(status_table_names_and_strings)
{
    GT_ASSERT_EQ_INT(NB_STATUSES, 11);
    for (size_t i = 0; i < NB_STATUSES; i++) {
        GT_ASSERT_STR_EQ(gctx_status_name(statuses[i].status), statuses[i].name);
        const char *text = gctx_status_string(statuses[i].status);
        GT_ASSERT(text != NULL);
        GT_ASSERT_GT_INT(strlen(text), 0);
        /* No two codes share a description. */
        for (size_t j = 0; j < i; j++)
            GT_ASSERT(strcmp(text, gctx_status_string(statuses[j].status)) != 0);
    }
    GT_ASSERT_EQ_INT(GCTX_SUCCESS, 0);
    GT_ASSERT_STR_EQ(gctx_status_name(GCTX_ERROR_INSUFFICIENT_SMS), "GCTX_ERROR_INSUFFICIENT_SMS");
}

GT_TEST(status_unknown_code)
{
    GT_ASSERT_STR_EQ(gctx_status_name((gctx_status)11), "GCTX_UNKNOWN_STATUS");
    GT_ASSERT_STR_EQ(gctx_status_name((gctx_status)-1), "GCTX_UNKNOWN_STATUS");
    GT_ASSERT_STR_EQ(gctx_status_name((gctx_status)12345), "GCTX_UNKNOWN_STATUS");
    GT_ASSERT(gctx_status_string((gctx_status)12345) != NULL);
}

GT_TEST(version_macros_match_library)
{
    GT_ASSERT_EQ_INT(GCTX_VERSION, GCTX_VERSION_MAJOR * 10000 + GCTX_VERSION_MINOR * 100 +
                                       GCTX_VERSION_PATCH);
    GT_ASSERT_EQ_INT(gctx_version(), GCTX_VERSION);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", GCTX_VERSION_MAJOR, GCTX_VERSION_MINOR,
             GCTX_VERSION_PATCH);
    GT_ASSERT_STR_EQ(gctx_version_string(), expected);
}

GT_TEST(feature_names)
{
#define FEATURE_NAME_(name, value, text, version)                                              \
    GT_ASSERT_STR_EQ(gctx_feature_name(GCTX_FEATURE_##name), text);
    GCTX_FEATURE_MAP(FEATURE_NAME_)
#undef FEATURE_NAME_
    GT_ASSERT(gctx_feature_name((gctx_feature)99) == NULL);
    GT_ASSERT(gctx_feature_name((gctx_feature)-1) == NULL);
}

/* Two threads fail differently at the same time; each must read its own message. */
static pthread_barrier_t barrier;

static void *fail_one_way(void *arg)
{
    int which = *(int *)arg;
    gctx_status s = which ? gctx_driver_version(NULL) : gctx_device_get_info(0, NULL);
    pthread_barrier_wait(&barrier); /* both have failed before either reads */
    static const char *expected[] = {"info is NULL", "version is NULL"};
    int ok = s == GCTX_ERROR_INVALID_ARGUMENT && strstr(gctx_last_error(), expected[which]) &&
             !strstr(gctx_last_error(), expected[!which]) && gctx_last_cuda_result() == 0;
    pthread_barrier_wait(&barrier);
    return ok ? arg : NULL;
}

static void *read_message(void *arg)
{
    (void)arg;
    return (void *)gctx_last_error();
}

GT_TEST(last_error_is_per_thread)
{
    int ids[2] = {0, 1};
    pthread_t threads[2];
    GT_ASSERT_EQ_INT(pthread_barrier_init(&barrier, NULL, 2), 0);
    for (int i = 0; i < 2; i++)
        GT_ASSERT_EQ_INT(pthread_create(&threads[i], NULL, fail_one_way, &ids[i]), 0);
    void *results[2];
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], &results[i]);
    pthread_barrier_destroy(&barrier);
    GT_ASSERT(results[0] == &ids[0]);
    GT_ASSERT(results[1] == &ids[1]);
    /* A thread that failed nothing has an empty message. */
    pthread_t fresh;
    void *message = NULL;
    GT_ASSERT_EQ_INT(pthread_create(&fresh, NULL, read_message, NULL), 0);
    pthread_join(fresh, &message);
    GT_ASSERT_STR_EQ((const char *)message, "");
}

/* A successful fallible call (one that does reach the driver, and could set the message)
 * leaves the last failure's message alone. Needs a driver: registered as a driver test. */
GT_TEST(successful_call_keeps_last_error)
{
    gt_require_device();
    if (gt_state)
        return;
    GT_ASSERT_STATUS(gctx_driver_version(NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "version is NULL");
    int version = 0, count = 0;
    GT_ASSERT_STATUS(gctx_driver_version(&version), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_SUCCESS);
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &info), GCTX_SUCCESS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "version is NULL");
    GT_ASSERT_EQ_INT(gctx_last_cuda_result(), 0);
}

GT_TEST(info_size_checked_before_driver)
{
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    info.size = sizeof info - 1;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &info), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_DEVICE_INFO_INIT");
    info.size = 0;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &info), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_EQ_INT(info.ordinal, 0); /* untouched on failure */
    GT_ASSERT_STATUS(gctx_device_get_info(0, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_device_count(NULL), GCTX_ERROR_INVALID_ARGUMENT);
}
