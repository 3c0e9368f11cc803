/* GREENCTX_LOG (src/log.c): what info and debug print on stderr, nothing when off, and a
 * value it does not know refused naming the variable. Each case is its own CTest entry: the
 * level is read when the driver loads, once per process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static FILE *captured;
static int saved_stderr = -1;

static void capture_begin(void)
{
    fflush(stderr);
    captured = tmpfile();
    saved_stderr = dup(2);
    dup2(fileno(captured), 2);
}

/* What was written to stderr since capture_begin, NUL-terminated (static storage). */
static const char *capture_end(void)
{
    static char text[16384];
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    long n = ftell(captured);
    rewind(captured);
    size_t got = fread(text, 1, n > 0 && (size_t)n < sizeof text ? (size_t)n : sizeof text - 1,
                       captured);
    text[got] = '\0';
    fclose(captured);
    fputs(text, stdout); /* shown in the test's log */
    return text;
}

/* A split of 24 SMs and the rest, a context on the 24 made twice (a cache miss, then a hit). */
static void split_and_contexts_twice(void)
{
    gctx_partition *device = NULL, *parts[2] = {NULL, NULL};
    gctx_group groups[2] = {GCTX_GROUP_INIT, GCTX_GROUP_INIT};
    groups[0].num_sms = 24;
    groups[1].backfill = 1;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &device), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_partition_split(device, groups, 2, NULL, parts, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    for (int i = 0; i < 2; i++) {
        gctx_context *c = NULL;
        GT_ASSERT_STATUS(gctx_context_create(parts[0], NULL, &c), GCTX_SUCCESS);
        gctx_context_release(c);
    }
    gctx_partition_release(parts[0]);
    gctx_partition_release(parts[1]);
    gctx_partition_release(device);
}

/* What split_and_contexts_twice wrote on stderr. */
static const char *log_of_split_and_contexts(void)
{
    capture_begin();
    split_and_contexts_twice();
    return capture_end();
}

GT_TEST(info_shows_the_plan_path_and_the_cache)
{
    gt_require_sim(13000, "h200");
    GT_CHECK();
    const char *log = log_of_split_and_contexts();
    GT_CHECK();
    GT_ASSERT_CONTAINS(log, "info: driver 13.0 loaded from ");
    GT_ASSERT_CONTAINS(log, "info: plan: 132 SMs of device 0 -> 24 + 108, remainder 0, on the "
                            "granules path (granule 24 SMs)");
    GT_ASSERT_CONTAINS(log, "info: context cache of device 0: miss for 24 SMs");
    GT_ASSERT_CONTAINS(log, "info: context cache of device 0: hit for 24 SMs");
    GT_ASSERT(strstr(log, "debug:") == NULL); /* info leaves the driver calls out */
}

GT_TEST(info_shows_the_structured_fallback)
{
    gt_require_sim(13010, "h200");
    GT_CHECK();
    gctx_partition *device = NULL;
    gctx_group groups[2] = {GCTX_GROUP_INIT, GCTX_GROUP_INIT};
    groups[0].num_sms = 128;
    groups[1].backfill = 1;
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    capture_begin();
    gctx_status s = gctx_partition_from_device(0, &device);
    if (s == GCTX_SUCCESS)
        s = gctx_partition_plan(device, groups, 2, NULL, &plan, NULL);
    const char *log = capture_end();
    gctx_partition_release(device);
    GT_ASSERT_STATUS(s, GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan.path, GCTX_SPLIT_PATH_GRANULES);
    GT_ASSERT_CONTAINS(log, "info: fallback: the structured split refused the request");
    GT_ASSERT_CONTAINS(log, "-> 128 + 4, remainder 0, on the granules path (granule 128 SMs)");
}

GT_TEST(debug_shows_the_driver_calls)
{
    gt_require_sim(13000, "h200");
    GT_CHECK();
    const char *log = log_of_split_and_contexts();
    GT_CHECK();
    GT_ASSERT_CONTAINS(log, "debug: cuDevSmResourceSplitByCount(minCount 24, flags 0) of 132 SMs "
                            "-> CUDA_SUCCESS: 5 granules");
    GT_ASSERT_CONTAINS(log, "debug: cuGreenCtxCreate -> CUDA_SUCCESS (0)");
    GT_ASSERT_CONTAINS(log, "debug: feature structured_split: off, needs driver 13.1");
    GT_ASSERT_CONTAINS(log, "info: context cache of device 0: hit for 24 SMs");
}

GT_TEST(off_prints_nothing)
{
    gt_require_sim(0, "h200");
    GT_CHECK();
    const char *log = log_of_split_and_contexts();
    GT_CHECK();
    GT_ASSERT_STR_EQ(log, "");
}

GT_TEST(an_unknown_level_is_refused)
{
    gt_require_sim(0, "h200");
    GT_CHECK();
    /* The ctest entry sets GREENCTX_LOG to 39 'a's, an é and more: the message shows the
     * value cut before the é, not through it. */
    GT_ASSERT_STATUS(gctx_init(), GCTX_ERROR_INVALID_ARGUMENT);
    char expected[128] = "GREENCTX_LOG is '";
    memset(expected + strlen(expected), 'a', 39);
    strcat(expected, "...': set it to info");
    GT_ASSERT_CONTAINS(gctx_last_error(), expected);
    GT_ASSERT_CONTAINS(gctx_last_error(), "debug (and the driver calls behind it), off, or unset");
    int count = 0;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_ERROR_INVALID_ARGUMENT);
}
