/* Contexts made from a split in one call: what PyTorch's GreenContext.create and split ask
 * for, so that a binding (the Python package) makes one C call where it would make five. */
#include <stdlib.h>
#include <string.h>

#include "context_device.h"

gctx_status gctx__split_into_contexts(gctx_partition *whole, const gctx_group *groups,
                                      unsigned nb_groups, const gctx_split_options *split_options,
                                      const gctx_context_options *options,
                                      gctx_context **contexts, gctx_context **remainder)
{
    gctx_status s = GCTX_SUCCESS;
    gctx_partition **parts = groups && nb_groups ? calloc(nb_groups, sizeof *parts) : NULL;
    gctx_context **made = groups && nb_groups ? calloc(nb_groups, sizeof *made) : NULL;
    gctx_partition *left = NULL;
    gctx_context *left_context = NULL;
    if (groups && nb_groups && (!parts || !made))
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory splitting into contexts");
    if (s == GCTX_SUCCESS)
        s = gctx_partition_split(whole, groups, nb_groups, split_options, parts,
                                 remainder ? &left : NULL, NULL, NULL);
    unsigned done = 0;
    if (s == GCTX_SUCCESS) {
        for (; done < nb_groups; done++)
            if ((s = gctx_context_create(parts[done], options, &made[done])))
                break;
        if (s == GCTX_SUCCESS && left)
            s = gctx_context_create(left, options, &left_context);
        for (unsigned i = 0; i < nb_groups; i++)
            gctx_partition_release(parts[i]);
        gctx_partition_release(left);
    }
    if (s == GCTX_SUCCESS) {
        memcpy(contexts, made, nb_groups * sizeof *made);
        if (remainder)
            *remainder = left_context;
    } else {
        for (unsigned i = 0; i < done; i++)
            gctx_context_release(made[i]);
    }
    free(parts);
    free(made);
    return s;
}

gctx_status gctx_context_split_device(int device, const gctx_group *groups, unsigned nb_groups,
                                      const gctx_split_options *split_options,
                                      const gctx_context_options *options,
                                      gctx_context **contexts, gctx_context **remainder)
{
    if (!contexts)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "contexts (the output array of nb_groups) is NULL");
    gctx_partition *whole;
    gctx_status s = gctx_partition_from_device(device, &whole);
    if (s != GCTX_SUCCESS)
        return s;
    s = gctx__split_into_contexts(whole, groups, nb_groups, split_options, options, contexts,
                                  remainder);
    gctx_partition_release(whole);
    return s;
}

gctx_status gctx_context_create_at_least(int device, unsigned num_sms,
                                         const gctx_context_options *options,
                                         gctx_context **context)
{
    if (!context)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "context (the output) is NULL");
    if (num_sms == 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "num_sms is 0: give the least SM count the context should have");
    gctx_partition *whole, *group;
    gctx_status s = gctx_partition_from_device(device, &whole);
    if (s != GCTX_SUCCESS)
        return s;
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    if ((s = gctx_partition_get_info(whole, &info)))
        goto done;
    if (num_sms > info.sm_count) {
        s = gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                       "num_sms %u is more than device %d has (%u SMs): ask for at most %u",
                       num_sms, device, info.sm_count, info.sm_count);
        goto done;
    }
    gctx_group request = {.num_sms = num_sms};
    gctx_split_options up = {sizeof up, GCTX_ROUND_UP};
    gctx_group_plan plan;
    if ((s = gctx_partition_split(whole, &request, 1, &up, &group, NULL, NULL, &plan)))
        goto done;
    /* Rounding up stops at the largest group the device has: above it, the whole device. */
    s = gctx_context_create(plan.sm_count < num_sms ? whole : group, options, context);
    gctx_partition_release(group);
done:
    gctx_partition_release(whole);
    return s;
}
