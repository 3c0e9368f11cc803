/* Green contexts from one request (torch's GreenContext.create and .split). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The rules of a request that no split would name: which fields go together. */
static gctx_status request_check(const gctx_context_request *r, gctx_context **contexts)
{
    if (!contexts)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "contexts (the output array: nb_groups contexts, one without groups) "
                          "is NULL");
    if (r->partition && r->context)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the request names both a partition and a context: give one, or "
                          "neither for every SM of device %d",
                          r->device);
    if (r->groups && !r->nb_groups)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "groups is set but nb_groups is 0: give their number");
    if (!r->groups && r->nb_groups)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "nb_groups is %u but groups is NULL",
                          r->nb_groups);
    if (r->nb_groups && r->num_sms)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the request asks for a split (%u groups) and for one context of "
                          "num_sms %u: give groups or num_sms, not both",
                          r->nb_groups, r->num_sms);
    if (r->flags & ~GCTX_CONTEXT_REQUEST_AT_LEAST)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "unknown flags 0x%x in the request (GCTX_CONTEXT_REQUEST_AT_LEAST is "
                          "0x%x)",
                          r->flags, GCTX_CONTEXT_REQUEST_AT_LEAST);
    if ((r->flags & GCTX_CONTEXT_REQUEST_AT_LEAST) && !r->num_sms)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "GCTX_CONTEXT_REQUEST_AT_LEAST needs num_sms, the count to round up");
    if ((r->flags & GCTX_CONTEXT_REQUEST_AT_LEAST) && r->split_options)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "GCTX_CONTEXT_REQUEST_AT_LEAST rounds up itself: leave split_options "
                          "NULL");
    return GCTX_SUCCESS;
}

/* The request's SMs as a partition (a reference for the caller) and their name for messages. */
static gctx_status request_source(const gctx_context_request *r, gctx_partition **whole,
                                  char *name, size_t size)
{
    if (r->partition) {
        snprintf(name, size, "the partition");
        *whole = gctx_partition_retain(r->partition);
        return *whole ? GCTX_SUCCESS : GCTX_ERROR_INVALID_HANDLE;
    }
    if (r->context) {
        snprintf(name, size, "the context");
        return gctx_context_partition(r->context, whole);
    }
    snprintf(name, size, "device %d", r->device);
    return gctx_partition_from_device(r->device, whole);
}

/* GCTX_CONTEXT_REQUEST_AT_LEAST rounds up to every SM of whole at the most. */
static gctx_status at_most_every_sm(const gctx_partition *whole, unsigned num_sms,
                                    const char *name)
{
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    GCTX_TRY(gctx_partition_get_info(whole, &info));
    if (num_sms > info.sm_count)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "num_sms %u is more than %s has (%u SMs): ask for at most %u", num_sms,
                          name, info.sm_count, info.sm_count);
    return GCTX_SUCCESS;
}

/* A context per group (and the remainder); at_least: all of whole when no group is that
 * large. The outputs are written only once everything is made. */
static gctx_status split_into_contexts(gctx_partition *whole, const gctx_group *groups,
                                       unsigned nb_groups, const gctx_split_options *split_options,
                                       int at_least, const gctx_context_options *options,
                                       gctx_context **contexts, gctx_context **remainder)
{
    gctx_split_options up = {sizeof up, GCTX_ROUND_UP};
    gctx_partition **parts = calloc(nb_groups, sizeof *parts);
    gctx_context **made = calloc(nb_groups, sizeof *made);
    gctx_partition *left = NULL;
    gctx_context *left_context = NULL;
    gctx_group_plan plan;
    unsigned done = 0;
    gctx_status s = GCTX_SUCCESS;
    if (!parts || !made) {
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory splitting into contexts");
        goto done;
    }
    GCTX_CHECK(gctx_partition_split(whole, groups, nb_groups, at_least ? &up : split_options,
                                    parts, remainder ? &left : NULL, NULL,
                                    at_least ? &plan : NULL),
               done);
    if (at_least && plan.sm_count < groups[0].num_sms) {
        /* Rounding up stops at the largest group the SMs give: above it, all of them. */
        gctx_partition_release(parts[0]);
        gctx_partition_release(left);
        left = NULL;
        parts[0] = gctx_partition_retain(whole);
    }
    for (; done < nb_groups; done++)
        GCTX_CHECK(gctx_context_create(parts[done], options, &made[done]), done);
    if (left)
        GCTX_CHECK(gctx_context_create(left, options, &left_context), done);
    memcpy(contexts, made, nb_groups * sizeof *made);
    if (remainder)
        *remainder = left_context;
done:
    for (unsigned i = 0; s != GCTX_SUCCESS && i < done; i++)
        gctx_context_release(made[i]);
    for (unsigned i = 0; parts && i < nb_groups; i++)
        gctx_partition_release(parts[i]);
    gctx_partition_release(left);
    free(parts);
    free(made);
    return s;
}

gctx_status gctx_contexts_create(const gctx_context_request *request, gctx_context **contexts,
                                 gctx_context **remainder)
{
    gctx_context_request r = GCTX_CONTEXT_REQUEST_INIT;
    GCTX_TRY(gctx__sized_in(&r, sizeof r, request, GCTX__MIN_CONTEXT_REQUEST, "request",
                            "GCTX_CONTEXT_REQUEST_INIT"));
    GCTX_TRY(request_check(&r, contexts));
    gctx_status s;
    gctx_partition *whole = NULL;
    char name[32];
    int at_least = (r.flags & GCTX_CONTEXT_REQUEST_AT_LEAST) != 0;
    gctx_group one = {.num_sms = r.num_sms};
    GCTX_CHECK(request_source(&r, &whole, name, sizeof name), done);
    if (at_least)
        GCTX_CHECK(at_most_every_sm(whole, r.num_sms, name), done);
    if (r.nb_groups)
        s = split_into_contexts(whole, r.groups, r.nb_groups, r.split_options, 0, r.options,
                                contexts, remainder);
    else if (r.num_sms)
        s = split_into_contexts(whole, &one, 1, r.split_options, at_least, r.options, contexts,
                                remainder);
    else if ((s = gctx_context_create(whole, r.options, contexts)) == GCTX_SUCCESS && remainder)
        *remainder = NULL;
done:
    gctx_partition_release(whole);
    return s;
}

/* ---- the Python API's shapes ---- */

/* num_sms 0 would ask for every SM, which these two shapes refuse. */
static gctx_status context_of_sms(int device, unsigned num_sms, unsigned flags,
                                  const gctx_context_options *options, gctx_context **context)
{
    if (num_sms == 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "num_sms is 0: give the SM count the context should have");
    gctx_context_request r = {.size = sizeof r, .device = device, .num_sms = num_sms,
                              .flags = flags, .options = options};
    return gctx_contexts_create(&r, context, NULL);
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
    return context_of_sms(device, num_sms, GCTX_CONTEXT_REQUEST_AT_LEAST, options, context);
}

gctx_status gctx_context_split_device(int device, const gctx_group *groups, unsigned nb_groups,
                                      const gctx_split_options *split_options,
                                      const gctx_context_options *options,
                                      gctx_context **contexts, gctx_context **remainder)
{
    if (!groups || !nb_groups)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "groups is NULL or nb_groups is 0: give the groups to split into");
    gctx_context_request r = {.size = sizeof r, .device = device, .groups = groups,
                              .nb_groups = nb_groups, .split_options = split_options,
                              .options = options};
    return gctx_contexts_create(&r, contexts, remainder);
}
