/* Contexts made from a split in one call: of num_sms SMs of a device (strict, or rounded up as
 * torch's GreenContext.create), and one per group of a split of a context or of a device
 * (torch's GreenContext.split), so that a binding makes one C call where it would make five. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One context of num_sms SMs of the device, from a one-group split of it: strict, or
 * (at_least) rounded up, the whole device above the largest group. */
static gctx_status context_of_sms(int device, unsigned num_sms, int at_least,
                                  const gctx_context_options *options, gctx_context **context)
{
    if (!context)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "context (the output) is NULL");
    if (num_sms == 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "num_sms is 0: give the SM count the context should have");
    gctx_partition *whole, *group = NULL;
    gctx_status s = gctx_partition_from_device(device, &whole);
    if (s != GCTX_SUCCESS)
        return s;
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    if (at_least)
        GCTX_CHECK(gctx_partition_get_info(whole, &info), done);
    if (at_least && num_sms > info.sm_count) {
        s = gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                       "num_sms %u is more than device %d has (%u SMs): ask for at most %u",
                       num_sms, device, info.sm_count, info.sm_count);
        goto done;
    }
    gctx_group request = {.num_sms = num_sms};
    gctx_split_options up = {sizeof up, GCTX_ROUND_UP};
    gctx_group_plan plan;
    GCTX_CHECK(gctx_partition_split(whole, &request, 1, at_least ? &up : NULL, &group, NULL, NULL,
                                    &plan),
               done);
    /* Rounding up stops at the largest group the device has: above it, the whole device. */
    s = gctx_context_create(at_least && plan.sm_count < num_sms ? whole : group, options, context);
done:
    gctx_partition_release(group);
    gctx_partition_release(whole);
    return s;
}

gctx_status gctx_context_create_with_sms(int device, unsigned num_sms,
                                         const gctx_context_options *options,
                                         gctx_context **context)
{
    return context_of_sms(device, num_sms, 0, options, context);
}

gctx_status gctx_context_create_at_least(int device, unsigned num_sms,
                                         const gctx_context_options *options,
                                         gctx_context **context)
{
    return context_of_sms(device, num_sms, 1, options, context);
}

/* Splits whole (got: the status of getting it; released here) and makes a context per group,
 * and one on the remainder when remainder is not NULL. The callers get whole only when
 * contexts is not NULL. */
static gctx_status split_into_contexts(gctx_status got, gctx_partition *whole,
                                       const gctx_group *groups, unsigned nb_groups,
                                       const gctx_split_options *split_options,
                                       const gctx_context_options *options,
                                       gctx_context **contexts, gctx_context **remainder)
{
    if (!contexts)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "contexts (the output array of nb_groups) is NULL");
    if (got != GCTX_SUCCESS)
        return got;
    gctx_partition **parts = groups && nb_groups ? calloc(nb_groups, sizeof *parts) : NULL;
    gctx_context **made = groups && nb_groups ? calloc(nb_groups, sizeof *made) : NULL;
    gctx_partition *left = NULL;
    gctx_context *left_context = NULL;
    unsigned nb_made = 0;
    gctx_status s = groups && nb_groups && (!parts || !made)
                        ? gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory splitting into "
                                                               "contexts")
                        : gctx_partition_split(whole, groups, nb_groups, split_options, parts,
                                               remainder ? &left : NULL, NULL, NULL);
    gctx_partition_release(whole);
    if (s != GCTX_SUCCESS)
        goto done;
    for (; nb_made < nb_groups; nb_made++)
        GCTX_CHECK(gctx_context_create(parts[nb_made], options, &made[nb_made]), done);
    if (left)
        GCTX_CHECK(gctx_context_create(left, options, &left_context), done);
    memcpy(contexts, made, nb_groups * sizeof *made);
    if (remainder)
        *remainder = left_context;
done:
    for (unsigned i = 0; s != GCTX_SUCCESS && i < nb_made; i++)
        gctx_context_release(made[i]);
    for (unsigned i = 0; parts && i < nb_groups; i++)
        gctx_partition_release(parts[i]);
    gctx_partition_release(left);
    free(parts);
    free(made);
    return s;
}

gctx_status gctx_context_split(gctx_context *context, const gctx_group *groups,
                               unsigned nb_groups, const gctx_split_options *split_options,
                               const gctx_context_options *options, gctx_context **contexts,
                               gctx_context **remainder)
{
    gctx_partition *whole = NULL;
    gctx_status got = contexts ? gctx_context_partition(context, &whole) : GCTX_SUCCESS;
    return split_into_contexts(got, whole, groups, nb_groups, split_options, options, contexts,
                               remainder);
}

gctx_status gctx_context_split_device(int device, const gctx_group *groups, unsigned nb_groups,
                                      const gctx_split_options *split_options,
                                      const gctx_context_options *options,
                                      gctx_context **contexts, gctx_context **remainder)
{
    gctx_partition *whole = NULL;
    gctx_status got = contexts ? gctx_partition_from_device(device, &whole) : GCTX_SUCCESS;
    return split_into_contexts(got, whole, groups, nb_groups, split_options, options, contexts,
                               remainder);
}
