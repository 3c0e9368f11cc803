/* How the API grows: size-prefixed structs of older and newer headers (smaller and larger
 * sizes), the smallest layout each accepts, and the reserved fields of group arrays. */
#include <stdlib.h>

#include "sized.h"
#include "testing.h"
#include "sm_ids.h"

#define GUARD 0xAB

/* A caller's struct of `size` bytes inside a buffer of guard bytes, to see every write. */
typedef struct guarded {
    unsigned char bytes[512];
} guarded;

static void *guarded_struct(guarded *g, size_t size)
{
    memset(g, GUARD, sizeof *g);
    memcpy(g->bytes, &size, sizeof size);
    return g->bytes;
}

/* The first byte from `from` on that is not a guard byte, or -1. */
static int written_from(const guarded *g, size_t from)
{
    for (size_t i = from; i < sizeof g->bytes; i++)
        if (g->bytes[i] != GUARD)
            return (int)i;
    return -1;
}

/* ---- the helper pair, with a struct the library knows in two layouts ---- */

typedef struct v1 { /* the first published layout */
    size_t size;
    int a;
    int b;
} v1;
typedef struct v2 { /* what this library knows: two fields more */
    size_t size;
    int a;
    int b;
    int c;
    int d;
} v2;
#define V2_INIT {sizeof(v2), 1, 2, 3, 4}

GT_TEST(older_input_gets_defaults_for_what_it_lacks)
{
    v1 old = {sizeof old, 10, 20};
    v2 local = V2_INIT;
    GT_ASSERT_STATUS(gctx__sized_in(&local, sizeof local, &old, GCTX__SIZE_THROUGH(v1, b),
                                    "options", "V2_INIT"),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(local.a, 10);
    GT_ASSERT_EQ_INT(local.b, 20);
    GT_ASSERT_EQ_INT(local.c, 3); /* defaults: the old caller never knew these */
    GT_ASSERT_EQ_INT(local.d, 4);
}

GT_TEST(older_output_gets_no_byte_past_its_size)
{
    guarded g;
    v1 *old = guarded_struct(&g, sizeof(v1));
    gctx__sized_out(old, &(v2){sizeof(v2), 10, 20, 30, 40}, sizeof(v2));
    GT_ASSERT_EQ_INT(old->a, 10);
    GT_ASSERT_EQ_INT(old->b, 20);
    GT_ASSERT_EQ_INT(old->size, sizeof(v1)); /* the caller's size stays */
    GT_ASSERT_EQ_INT(written_from(&g, sizeof(v1)), -1);
}

GT_TEST(newer_struct_keeps_what_the_library_does_not_know)
{
    guarded g;
    size_t newer = sizeof(v2) + 24;
    v2 *out = guarded_struct(&g, newer);
    gctx__sized_out(out, &(v2){sizeof(v2), 10, 20, 30, 40}, sizeof(v2));
    GT_ASSERT_EQ_INT(out->d, 40);
    GT_ASSERT_EQ_INT(out->size, newer);
    GT_ASSERT_EQ_INT(written_from(&g, sizeof(v2)), -1); /* the newer fields are left alone */
    /* As an input, the newer fields are ignored: the library reads only what it knows. */
    v2 local = V2_INIT;
    GT_ASSERT_STATUS(gctx__sized_in(&local, sizeof local, out, GCTX__SIZE_THROUGH(v1, b), "o",
                                    "V2_INIT"),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(local.d, 40);
    GT_ASSERT_EQ_INT(local.size, newer);
}

GT_TEST(below_the_first_layout_is_refused)
{
    v1 old = {GCTX__SIZE_THROUGH(v1, a), 10, 20};
    v2 local = V2_INIT;
    GT_ASSERT_STATUS(gctx__sized_in(&local, sizeof local, &old, GCTX__SIZE_THROUGH(v1, b),
                                    "options", "V2_INIT"),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "options->size is 12, below 16");
    GT_ASSERT_CONTAINS(gctx_last_error(), "initialise it with V2_INIT");
    GT_ASSERT_EQ_INT(local.a, 1); /* nothing copied */
    old.size = 0;                 /* never set */
    GT_ASSERT_STATUS(gctx__sized_in(&local, sizeof local, &old, GCTX__SIZE_THROUGH(v1, b),
                                    "options", "V2_INIT"),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx__sized_check(NULL, 8, "info", "V2_INIT"), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "info is NULL");
}

/* ---- the public structs ---- */

/* Each info struct at its first layout's exact size (which may end before sizeof's padding),
 * and at a newer header's larger size: filled, and not a byte written past its size. */
GT_TEST(info_structs_at_first_and_newer_sizes)
{
    gctx_partition *p = gt_whole_device();
    GT_CHECK();
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create(p, NULL, &c), GCTX_SUCCESS);
    size_t extra = 32;
    const struct {
        const char *name;
        size_t first, known;
    } sizes[] = {{"device", GCTX__MIN_DEVICE_INFO, sizeof(gctx_device_info)},
                 {"partition", GCTX__MIN_PARTITION_INFO, sizeof(gctx_partition_info)},
                 {"context", GCTX__MIN_CONTEXT_INFO, sizeof(gctx_context_info)},
                 {"release failures", GCTX__MIN_RELEASE_FAILURES, sizeof(gctx_release_failures)}};
    for (unsigned i = 0; i < 4; i++) {
        size_t try_sizes[2] = {sizes[i].first, sizes[i].known + extra};
        for (unsigned k = 0; k < 2; k++) {
            guarded g;
            void *info = guarded_struct(&g, try_sizes[k]);
            gctx_status s = i == 0   ? gctx_device_get_info(0, info)
                            : i == 1 ? gctx_partition_get_info(p, info)
                            : i == 2 ? gctx_context_get_info(c, info)
                                     : gctx_release_failures_get(info);
            printf("# %s info, size %zu: %s\n", sizes[i].name, try_sizes[k], gctx_status_name(s));
            GT_ASSERT_STATUS(s, GCTX_SUCCESS);
            GT_ASSERT_EQ_INT(written_from(&g, k ? sizes[i].known : try_sizes[k]), -1);
            size_t size;
            memcpy(&size, info, sizeof size);
            GT_ASSERT_EQ_INT(size, try_sizes[k]);
        }
    }
    guarded g;
    gctx_partition_info *pinfo = guarded_struct(&g, sizeof(gctx_partition_info) + extra);
    GT_ASSERT_STATUS(gctx_partition_get_info(p, pinfo), GCTX_SUCCESS);
    GT_ASSERT_GT_INT(pinfo->sm_count, 0);
    GT_ASSERT_EQ_INT(pinfo->locality_domain_id != 0xABABABABu, 1);
    gctx_context_release(c);
    gctx_partition_release(p);
}

/* A caller compiled with a header older than the first published layout (here: the device
 * info without its last fields) is refused, and nothing is written. */
GT_TEST(struct_older_than_the_first_layout_is_refused)
{
    struct pre_release_device_info {
        size_t size;
        int ordinal;
        char name[256];
        int cc_major, cc_minor;
        unsigned sm_count;
    };
    guarded g;
    void *old = guarded_struct(&g, sizeof(struct pre_release_device_info));
    GT_ASSERT_STATUS(gctx_device_get_info(0, (gctx_device_info *)old), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "info->size is 280");
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_DEVICE_INFO_INIT");
    GT_ASSERT_EQ_INT(written_from(&g, sizeof(size_t)), -1);
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    plan.size = 0;
    gctx_partition *p = gt_whole_device();
    GT_CHECK();
    gctx_group one = gt_group(16);
    GT_ASSERT_STATUS(gctx_partition_plan(p, &one, 1, NULL, &plan, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_SPLIT_PLAN_INIT");
    gctx_partition_release(p);
}

/* Inputs from a newer header: what the library doesn't know is ignored; from the first
 * layout: what it has is used. */
GT_TEST(options_at_first_and_newer_sizes)
{
    gctx_partition *p = gt_whole_device();
    GT_CHECK();
    gctx_group one = gt_group(20);
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    guarded g;
    gctx_split_options *opts = guarded_struct(&g, sizeof(gctx_split_options) + 16);
    opts->rounding = GCTX_ROUND_UP; /* the bytes past it stay 0xAB: a newer field, ignored */
    GT_ASSERT_STATUS(gctx_partition_plan(p, &one, 1, opts, &plan, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan.rounded, 1);
    opts->size = GCTX__MIN_SPLIT_OPTIONS;
    opts->rounding = GCTX_ROUND_DOWN;
    GT_ASSERT_STATUS(gctx_partition_plan(p, &one, 1, opts, &plan, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan.rounded, 1);
    opts->size = GCTX__MIN_SPLIT_OPTIONS - 1;
    GT_ASSERT_STATUS(gctx_partition_plan(p, &one, 1, opts, &plan, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_SPLIT_OPTIONS_INIT");

    gctx_context *c = NULL;
    gctx_context_options *copts = guarded_struct(&g, sizeof(gctx_context_options) + 16);
    copts->workqueue_scope = GCTX_WORKQUEUE_SCOPE_DEFAULT;
    copts->workqueue_concurrency_limit = 0;
    copts->flags = 0;
    GT_ASSERT_STATUS(gctx_context_create(p, copts, &c), GCTX_SUCCESS);
    gctx_stream *st = NULL;
    gctx_stream_options *sopts = guarded_struct(&g, GCTX__MIN_STREAM_OPTIONS);
    sopts->priority = 0;
    sopts->blocking = 0;
    GT_ASSERT_STATUS(gctx_stream_create(c, sopts, &st), GCTX_SUCCESS);
    sopts->size = 0;
    gctx_stream *none = NULL;
    GT_ASSERT_STATUS(gctx_stream_create(c, sopts, &none), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_STREAM_OPTIONS_INIT");
    gctx_stream_release(st);
    gctx_context_release(c);
    gctx_partition_release(p);
}

/* ---- group arrays grow through reserved fields ---- */

GT_TEST(group_reserved_fields_must_be_zero)
{
    gctx_partition *p = gt_whole_device();
    GT_CHECK();
    int live = gctx__object_live_count();
    gctx_group groups[2] = {gt_group(16), gt_group(8)};
    groups[1].reserved[2] = 7;
    gctx_partition *out[2] = {NULL, NULL};
    GT_ASSERT_STATUS(gctx_partition_split(p, groups, 2, NULL, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "groups[1].reserved[2] is 7");
    GT_ASSERT(out[0] == NULL && out[1] == NULL);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live);
    /* Output reserved fields come back zero whatever the caller's memory held. */
    groups[1].reserved[2] = 0;
    gctx_group_plan plans[2];
    memset(plans, 0xff, sizeof plans);
    GT_ASSERT_STATUS(gctx_partition_plan(p, groups, 2, NULL, NULL, plans), GCTX_SUCCESS);
    for (unsigned i = 0; i < 2; i++)
        for (unsigned k = 0; k < 4; k++)
            GT_ASSERT_EQ_INT(plans[i].reserved[k], 0);
    GT_ASSERT_EQ_INT(plans[1].sm_count, 8);
    gctx_partition_release(p);
}
