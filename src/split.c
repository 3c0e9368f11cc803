/* gctx_partition_plan and gctx_partition_split: turning a plan into driver resources. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "partition.h"
#include "plan.h"

/* AddressSanitizer's manual poisoning (the spare block, below), a no-op without it. */
#if defined(__has_include)
#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

/* Groups a split holds in its own stack buffers; a larger request takes them from the heap. */
#define SMALL_SPLIT 8
/* Stack scratch: sm_count / 2 + 1 resources for up to 160 SMs (any current GPU). */
#define STACK_SCRATCH 81

typedef struct split_job {
    const gctx__driver *drv;
    gctx_partition *input;   /* what the caller passed */
    gctx_partition *through; /* what the driver splits: input, or an intermediate context's */
    gctx__plan_input rules;
    /* The last planning split's outputs: handed out when they are what the plan chose. */
    gcu_dev_resource *scratch;
    unsigned scratch_capacity;
    unsigned last_nb;
    gcu_dev_resource last_remainder;
    unsigned last_granule, last_flags; /* granule paths: what that split was asked */
    gctx__plan plan;
    gcu_dev_resource small_scratch[STACK_SCRATCH];
} split_job;

/* Room for n resources in the job's scratch (what it held is lost when it grows). */
static gctx_status scratch_reserve(split_job *job, unsigned n)
{
    if (n <= job->scratch_capacity)
        return GCTX_SUCCESS;
    gcu_dev_resource *grown = malloc(n * sizeof *grown);
    if (!grown)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory planning a split");
    if (job->scratch != job->small_scratch)
        free(job->scratch);
    job->scratch = grown;
    job->scratch_capacity = n;
    return GCTX_SUCCESS;
}

/* The SMs of a split's remainder; 0 when it has none. */
static unsigned remainder_sms(const gcu_dev_resource *remainder)
{
    return remainder->type == GCU_DEV_RESOURCE_TYPE_SM ? remainder->u.sm.smCount : 0;
}

static gcu_result split_by_count(split_job *job, gcu_dev_resource *results, unsigned *nb,
                                 unsigned granule, unsigned flags)
{
    job->last_remainder = (gcu_dev_resource){0}; /* the driver may leave it unwritten */
    gcu_result r = job->drv->cuDevSmResourceSplitByCount(
        results, nb, &job->through->resources[0], &job->last_remainder, flags, granule);
    GCTX__DEBUG("cuDevSmResourceSplitByCount(minCount %u, flags %u) of %u SMs -> %s: %u granules",
                granule, flags, job->through->sm_count, gctx__cuda_result_name(r),
                r == GCU_SUCCESS ? *nb : 0);
    return r;
}

static gctx_status check_split_by_count(const split_job *job, gcu_result r, unsigned granule,
                                        unsigned flags)
{
    return gctx__check_cuda(r, "cuDevSmResourceSplitByCount(minCount %u, flags %u) of %u SMs",
                            granule, flags, job->through->sm_count);
}

/* Asked of the driver itself: a split writes only into our memory, creating no object. */
static gctx_status granule_oracle(void *context, unsigned granule, unsigned room, unsigned flags,
                                  gctx__granule_split *out)
{
    split_job *job = context;
    unsigned nb = room ? room : job->through->sm_count / 2 + 1;
    GCTX_TRY(scratch_reserve(job, nb));
    job->last_nb = 0;
    gcu_result r = split_by_count(job, job->scratch, &nb, granule, flags);
    memset(out, 0, sizeof *out);
    if (r == GCU_ERROR_INVALID_RESOURCE_CONFIGURATION)
        return GCTX_SUCCESS; /* this granule doesn't fit the resource: no groups */
    GCTX_TRY(check_split_by_count(job, r, granule, flags));
    job->last_nb = nb;
    job->last_granule = granule;
    job->last_flags = flags;
    out->groups = nb;
    out->size = nb ? job->scratch[0].u.sm.smCount : 0;
    out->remainder = remainder_sms(&job->last_remainder);
    return GCTX_SUCCESS;
}

static void job_end(split_job *job)
{
    gctx__plan_free(&job->plan);
    if (job->scratch != job->small_scratch)
        free(job->scratch);
    if (job->through && job->through != job->input)
        gctx__object_release(&job->through->base); /* the intermediate context's partition */
}

/* Split outputs can't be split again (915): through a green context. */
static gctx_status reach_splittable(split_job *job)
{
    if (job->input->kind != GCTX_PARTITION_GROUP && job->input->kind != GCTX_PARTITION_REMAINDER) {
        /* The caller's handle holds it for the call; the split's record takes its own. */
        job->through = job->input;
        return GCTX_SUCCESS;
    }
    gctx_context *intermediate;
    gctx_status s = gctx__context_create(job->input, NULL, &intermediate);
    if (s != GCTX_SUCCESS) {
        gctx__append_error("making the intermediate green context to split a %s of %u SMs",
                           job->input->kind == GCTX_PARTITION_GROUP ? "split's group"
                                                                    : "split's remainder",
                           job->input->sm_count);
        return s;
    }
    s = gctx__partition_from_context(intermediate, &job->through);
    gctx__context_release(intermediate); /* job->through holds it now, or nothing does */
    return s;
}

static gctx_status structured_probe(split_job *job)
{
    unsigned n = job->plan.nb_groups;
    gcu_dev_sm_resource_group_params small_params[SMALL_SPLIT];
    unsigned small_sizes[SMALL_SPLIT];
    gcu_dev_sm_resource_group_params *params = small_params;
    unsigned *sizes = small_sizes;
    GCTX_TRY(scratch_reserve(job, n));
    if (n > SMALL_SPLIT) {
        if (!(params = malloc(n * (sizeof *params + sizeof *sizes))))
            return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory planning a split");
        sizes = (unsigned *)(params + n);
    }
    memset(params, 0, n * sizeof *params);
    for (unsigned i = 0; i < n; i++) {
        const gctx__normal_group *g = &job->plan.normal[i];
        params[i].smCount = g->num_sms;
        params[i].coscheduledSmCount = g->coscheduled;
        params[i].preferredCoscheduledSmCount = g->preferred;
        params[i].flags = g->backfill ? GCU_DEV_SM_RESOURCE_GROUP_BACKFILL : 0;
    }
    /* Unlike a NULL-result dry run it applies every rule; the split hands out these outputs. */
    gcu_dev_resource *results = job->scratch;
    job->last_remainder = (gcu_dev_resource){0};
    gcu_result r = job->drv->cuDevSmResourceSplit(results, n, &job->through->resources[0],
                                                  &job->last_remainder, 0, params);
    GCTX__DEBUG_CALL("cuDevSmResourceSplit", r);
    gctx_status s;
    if (r == GCU_ERROR_INVALID_RESOURCE_CONFIGURATION)
        s = gctx__fail(GCTX_ERROR_INSUFFICIENT_SMS,
                       "the driver's split can't give %s %u group%s from %u SMs "
                       "(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION): a group would get no SMs, "
                       "or no whole co-scheduled unit; ask for fewer SMs, or end with one "
                       "group \"rest\" (discovery with backfill)",
                       n == 1 ? "this" : "these", n, GCTX__PLURAL(n), job->through->sm_count);
    else if (r != GCU_SUCCESS)
        s = gctx__check_cuda(r, "cuDevSmResourceSplit of %u groups", n);
    else {
        for (unsigned i = 0; i < n; i++)
            sizes[i] = results[i].u.sm.smCount;
        s = gctx__plan_take_structured(&job->rules, &job->plan, sizes);
    }
    if (params != small_params)
        free(params); /* sizes with it */
    return s;
}

/* The structured split (13.1+) refuses some requests the granule split gives: then the
 * granule path makes it, or the structured split's refusal is what the caller sees. */
static gctx_status granule_fallback(split_job *job, const gctx_group *groups, unsigned nb_groups,
                                    gctx_rounding rounding)
{
    gctx__error_state refused;
    gctx__error_save(&refused);
    gctx__plan_free(&job->plan);
    job->rules.structured_api = 0;
    GCTX__INFO("fallback: the structured split refused the request (%s); planning it on the "
               "granule path", gctx_last_error());
    gctx_status s = gctx__plan_make(&job->rules, groups, nb_groups, rounding, &job->plan);
    if (s == GCTX_SUCCESS)
        return s;
    GCTX__INFO("the granule path can't give it either: the structured split's refusal stands");
    gctx__error_restore(&refused);
    return GCTX_ERROR_INSUFFICIENT_SMS;
}

/* The plan's path and sizes, at info. */
static void log_plan(const split_job *job)
{
    if (atomic_load_explicit(&gctx__log_level, memory_order_relaxed) < GCTX__LOG_INFO)
        return;
    const gctx__plan *p = &job->plan;
    char sizes[256] = "", granule[32] = "";
    size_t n = 0;
    for (unsigned i = 0; i < p->nb_groups && n < sizeof sizes; i++)
        n += (size_t)snprintf(sizes + n, sizeof sizes - n, "%s%u", i ? " + " : "",
                              p->groups[i].sm_count);
    if (p->path != GCTX_SPLIT_PATH_STRUCTURED)
        snprintf(granule, sizeof granule, " (granule %u SMs)", p->granule);
    GCTX__INFO("plan: %u SMs of device %d%s -> %s, remainder %u, on the %s path%s",
               job->through->sm_count, job->input->device,
               job->through != job->input ? " (through an intermediate green context)" : "",
               sizes, p->remainder_sms,
               p->path == GCTX_SPLIT_PATH_STRUCTURED ? "structured split"
               : p->path == GCTX_SPLIT_PATH_GRANULES ? "granules"
                                                     : "fine granules (2-SM)",
               granule);
}

static gctx_status job_plan(split_job *job, gctx_partition *input, const gctx_group *groups,
                            unsigned nb_groups, const gctx_split_options *options)
{
    /* Field by field, not a memset of the large job: the rest is set before it is read. */
    job->drv = NULL;
    job->input = job->through = NULL;
    job->scratch = job->small_scratch;
    job->scratch_capacity = STACK_SCRATCH;
    job->last_nb = job->last_granule = job->last_flags = 0;
    job->plan.groups = NULL; /* what job_end frees when planning never started */
    GCTX_TRY(gctx__handle_resolve(&input, GCTX__TYPE_PARTITION, "input partition"));
    gctx_split_options opts = GCTX_SPLIT_OPTIONS_INIT;
    if (options)
        GCTX_TRY(gctx__sized_in(&opts, sizeof opts, options, GCTX__MIN_SPLIT_OPTIONS, "options",
                                "GCTX_SPLIT_OPTIONS_INIT"));
    GCTX_TRY(gctx__groups_check(groups, nb_groups));
    GCTX_TRY(gctx__driver_load_green(&job->drv));
    job->input = input;
    GCTX_TRY(reach_splittable(job));
    const gctx_partition *t = job->through;
    job->rules = (gctx__plan_input){
        .sm_count = t->sm_count, .min_partition = t->rules.min_partition,
        .alignment = t->rules.alignment, .structured = t->structured,
        .whole_device = input->kind == GCTX_PARTITION_DEVICE,
        .structured_api = job->drv->cuDevSmResourceSplit != NULL,
        .fine_flag = job->drv->features[GCTX_FEATURE_FINE_GRANULES].available,
        .max_coscheduled = t->cc_major >= 9 ? 32 : 2, .oracle = granule_oracle,
        .oracle_context = job};
    gctx_rounding rounding = opts.rounding;
    gctx_status s = gctx__plan_make(&job->rules, groups, nb_groups, rounding, &job->plan);
    if (s == GCTX_SUCCESS && job->plan.path == GCTX_SPLIT_PATH_STRUCTURED)
        s = structured_probe(job);
    if (s == GCTX_ERROR_INSUFFICIENT_SMS && job->rules.structured_api)
        s = granule_fallback(job, groups, nb_groups, rounding);
    if (s == GCTX_SUCCESS)
        log_plan(job);
    return s;
}

/* Inline: a split that asks for no report pays its two tests, not a call. */
static inline void job_report(const split_job *job, gctx_split_plan *plan, gctx_group_plan *group_plans)
{
    if (plan) {
        const gctx__plan *p = &job->plan;
        gctx_split_plan out = {
            .size = sizeof out, .device = job->input->device, .driver_version = job->drv->version,
            .path = p->path, .granule_sms = p->path == GCTX_SPLIT_PATH_STRUCTURED ? 0 : p->granule,
            .nb_groups = p->nb_groups, .remainder_sms = p->remainder_sms, .rounded = p->rounded,
            .nested = job->through != job->input};
        gctx__sized_out(plan, &out, sizeof out);
    }
    if (group_plans)
        memcpy(group_plans, job->plan.groups, job->plan.nb_groups * sizeof *group_plans);
}

static gctx_status check_plan_output(gctx_split_plan *plan)
{
    return plan ? gctx__sized_check(plan, GCTX__MIN_SPLIT_PLAN, "plan", "GCTX_SPLIT_PLAN_INIT")
                : GCTX_SUCCESS;
}

gctx_status gctx_partition_plan(const gctx_partition *input, const gctx_group *groups,
                                unsigned nb_groups, const gctx_split_options *options,
                                gctx_split_plan *plan, gctx_group_plan *group_plans)
{
    GCTX_TRY(check_plan_output(plan));
    split_job job;
    /* Planning reads the input; the cast lets a nested plan hold a reference meanwhile. */
    gctx_status s = job_plan(&job, (gctx_partition *)input, groups, nb_groups, options);
    if (s == GCTX_SUCCESS)
        job_report(&job, plan, group_plans);
    job_end(&job);
    return s;
}

/* ---- making it real ---- */

/* The job's scratch when planning made them, else their own; the remainder: last_remainder. */
typedef struct split_outputs {
    gcu_dev_resource *results;
    unsigned nb_results;
} split_outputs;

/* The granule split again, planning's last split having been another candidate. */
static gctx_status split_again(split_job *job, split_outputs *out)
{
    const gctx__plan *plan = &job->plan;
    out->results = calloc(out->nb_results ? out->nb_results : 1, sizeof *out->results);
    if (!out->results)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory splitting");
    gcu_result r = split_by_count(job, out->results, &out->nb_results, plan->granule,
                                  plan->flags);
    GCTX_TRY(check_split_by_count(job, r, plan->granule, plan->flags));
    unsigned remainder = remainder_sms(&job->last_remainder);
    if (out->nb_results != plan->split_groups || remainder != plan->split_remainder)
        return gctx__fail(GCTX_ERROR_DRIVER,
                          "cuDevSmResourceSplitByCount gave %u granules and %u SMs left where "
                          "planning saw %u and %u",
                          out->nb_results, remainder, plan->split_groups, plan->split_remainder);
    return GCTX_SUCCESS;
}

static gctx_status run_split(split_job *job, split_outputs *out)
{
    const gctx__plan *plan = &job->plan;
    int structured = plan->path == GCTX_SPLIT_PATH_STRUCTURED;
    out->nb_results = structured ? plan->nb_groups : plan->split_groups;
    int planned_outputs = structured || (job->last_nb == plan->split_groups &&
                                         job->last_granule == plan->granule &&
                                         job->last_flags == plan->flags);
    if (planned_outputs)
        out->results = job->scratch;
    else
        GCTX_TRY(split_again(job, out));
    if (structured)
        return GCTX_SUCCESS; /* planning checked every group of these very outputs */
    for (unsigned i = 0; i < out->nb_results; i++)
        if (out->results[i].u.sm.smCount != plan->granule)
            return gctx__fail(GCTX_ERROR_DRIVER,
                              "cuDevSmResourceSplitByCount gave a granule of %u SMs where %u "
                              "were asked",
                              out->results[i].u.sm.smCount, plan->granule);
    return GCTX_SUCCESS;
}

/* An output's resources: a run of the split's results (contiguous), perhaps its remainder. */
typedef struct output_span {
    unsigned first, count;
    int with_remainder;
} output_span;

/* The span of group i, or with i == nb_groups of the remainder. */
static void span_of(const split_job *job, const split_outputs *out, unsigned i,
                    output_span *span)
{
    const gctx__plan *plan = &job->plan;
    int structured = plan->path == GCTX_SPLIT_PATH_STRUCTURED;
    if (i < plan->nb_groups && structured) {
        *span = (output_span){i, 1, 0};
        return;
    }
    if (i < plan->nb_groups) {
        const gctx__assignment *a = &plan->assign[i];
        *span = (output_span){a->first_granule, a->granules, a->takes_remainder};
        return;
    }
    int has_remainder = remainder_sms(&job->last_remainder) > 0;
    /* Granules: those no group took, and the split's own remainder unless taken. */
    assert(structured || plan->used_granules <= out->nb_results);
    span->first = structured ? 0 : plan->used_granules;
    span->count = structured ? 0 : out->nb_results - plan->used_granules;
    span->with_remainder = has_remainder && (structured || !plan->remainder_taken);
}

/* Without a pass over its resources: run_split checked each granule's size. */
static unsigned span_sms(const split_job *job, const split_outputs *out, const output_span *span)
{
    const gctx__plan *plan = &job->plan;
    unsigned sms = plan->path != GCTX_SPLIT_PATH_STRUCTURED ? span->count * plan->granule
                   : span->count                            ? out->results[span->first].u.sm.smCount
                                                            : 0;
    return span->with_remainder ? sms + job->last_remainder.u.sm.smCount : sms;
}

static unsigned gather(const split_job *job, const split_outputs *out, const output_span *span,
                       gcu_dev_resource *list)
{
    memcpy(list, &out->results[span->first], span->count * sizeof *list);
    if (span->with_remainder)
        list[span->count] = job->last_remainder;
    return span->count + !!span->with_remainder;
}

/* The last released split's block, kept for the next: it is above the allocator's
 * per-thread cache. One block at most, of at most SPARE_BYTES. */
#define SPARE_BYTES 16384
static _Atomic(gctx__split *) spare_block;

/* Poisoned for AddressSanitizer while it waits: a use after release stays an error. */
static void spare_poison(gctx__split *block, int poisoned)
{
    char *partitions = (char *)block + sizeof *block;
    size_t bytes = block->block_bytes - sizeof *block;
    if (poisoned)
        ASAN_POISON_MEMORY_REGION(partitions, bytes);
    else
        ASAN_UNPOISON_MEMORY_REGION(partitions, bytes);
}

static gctx__split *block_take(size_t bytes)
{
    gctx__split *block = atomic_exchange_explicit(&spare_block, NULL, memory_order_acquire);
    if (block)
        spare_poison(block, 0);
    if (block && block->block_bytes >= bytes)
        return block;
    free(block); /* too small for this one: the heap's again */
    block = malloc(bytes);
    if (block)
        block->block_bytes = bytes;
    return block;
}

static void block_give_back(gctx__split *block)
{
    if (block->block_bytes <= SPARE_BYTES) {
        spare_poison(block, 1); /* before another thread can take it */
        block = atomic_exchange_explicit(&spare_block, block, memory_order_acq_rel);
        if (block)
            spare_poison(block, 0);
    }
    free(block); /* the spare it replaced, or itself */
}

void gctx__split_release(gctx__split *split)
{
    if (atomic_fetch_sub(&split->refs, 1) != 1)
        return;
    gctx__object_release(&split->input->base);
    block_give_back(split); /* and the partitions of its block, whose last reference this was */
}

/* The record's own bytes, where its block's partitions start. */
#define RECORD_BYTES                                                                           \
    ((sizeof(gctx__split) + _Alignof(gctx_partition) - 1) / _Alignof(gctx_partition) *        \
     _Alignof(gctx_partition))

/* A record of input with `extra` bytes after it, its references for the caller to set. */
static gctx__split *split_block_new(gctx_partition *input, size_t extra)
{
    gctx__split *record = block_take(RECORD_BYTES + extra);
    if (record)
        record->input = input;
    return record;
}

gctx_status gctx__split_new(gctx_partition *input, gctx__split **out)
{
    gctx__split *record = split_block_new(input, 0);
    if (!record)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory splitting");
    atomic_init(&record->refs, 1);
    gctx__object_retain(&input->base);
    *out = record;
    return GCTX_SUCCESS;
}

/* The outputs as partitions in one block with their record, registered in one lock:
 * objects gets the groups', then the remainder's when want_remainder and there is one. */
static gctx_status make_partitions(split_job *job, const split_outputs *out, int want_remainder,
                                   gctx__object **objects, unsigned *nb_objects)
{
    const gctx__plan *plan = &job->plan;
    unsigned outputs = plan->nb_groups + !!want_remainder;
    /* Sized by a bound: each resource goes to one output at most. */
    _Static_assert(sizeof(gcu_dev_resource) % _Alignof(gctx_partition) == 0,
                   "a partition's bytes are linear in its resources");
    size_t extra = outputs * gctx__partition_bytes(0) +
                   (out->nb_results + 1) * sizeof(gcu_dev_resource);
    gctx__split *record = split_block_new(job->through, extra);
    if (!record)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory splitting");
    const gctx__sm_rules unstructured = {2, 2, 0};
    int fine = plan->path == GCTX_SPLIT_PATH_FINE_GRANULES;
    char *at = (char *)record + RECORD_BYTES;
    unsigned n_objects = 0;
    for (unsigned i = 0; i < outputs; i++) {
        gctx_partition *p = (gctx_partition *)(void *)at;
        output_span span;
        span_of(job, out, i, &span);
        unsigned n = gather(job, out, &span, p->resources);
        if (!n)
            continue; /* the remainder, when it has no SMs */
        at += gctx__partition_bytes(n);
        int group = i < plan->nb_groups;
        gctx__sm_rules rules = fine || !group ? unstructured : job->through->rules;
        if (group && plan->path == GCTX_SPLIT_PATH_STRUCTURED &&
            p->resources[0].u.sm.minSmPartitionSize &&
            p->resources[0].u.sm.smCoscheduledAlignment) {
            rules.min_partition = p->resources[0].u.sm.minSmPartitionSize;
            rules.alignment = p->resources[0].u.sm.smCoscheduledAlignment;
        }
        gctx__partition_in_split_block(job->drv, record, p, i,
                                       group ? GCTX_PARTITION_GROUP : GCTX_PARTITION_REMAINDER, n,
                                       span_sms(job, out, &span), &rules,
                                       group && !fine && job->through->structured);
        objects[n_objects++] = &p->base;
    }
    atomic_init(&record->refs, (int)n_objects);
    gctx_status s = gctx__objects_register(objects, n_objects);
    if (s != GCTX_SUCCESS) {
        block_give_back(record); /* nothing registered: the block is all there is */
        return s;
    }
    gctx__object_retain(&job->through->base); /* the record's */
    *nb_objects = n_objects;
    return GCTX_SUCCESS;
}

gctx_status gctx_partition_split(gctx_partition *input, const gctx_group *groups,
                                 unsigned nb_groups, const gctx_split_options *options,
                                 gctx_partition **partitions, gctx_partition **remainder,
                                 gctx_split_plan *plan, gctx_group_plan *group_plans)
{
    GCTX_TRY(check_plan_output(plan));
    gctx_status s;
    split_job job;
    split_outputs out = {NULL, 0};
    gctx__object *small_objects[SMALL_SPLIT + 1];
    gctx__object **objects = NULL;
    unsigned nb_objects = 0;
    /* The request first: gctx_contexts_create's message must name what its caller passed. */
    GCTX_CHECK(job_plan(&job, input, groups, nb_groups, options), done);
    if (!partitions) {
        s = gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                       "partitions (the output array of nb_groups) is NULL");
        goto done;
    }
    if (!(objects = nb_groups <= SMALL_SPLIT ? small_objects
                                             : malloc((nb_groups + 1) * sizeof *objects))) {
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory splitting");
        goto done;
    }
    GCTX_CHECK(run_split(&job, &out), done);
    GCTX_CHECK(make_partitions(&job, &out, remainder != NULL, objects, &nb_objects), done);
    /* Each holds the one reference it was prepared with: nothing else reaches it yet. */
    for (unsigned i = 0; i < nb_groups; i++)
        partitions[i] = gctx__handle_give_new(objects[i]);
    if (remainder)
        *remainder = nb_objects > nb_groups ? gctx__handle_give_new(objects[nb_groups]) : NULL;
    job_report(&job, plan, group_plans);
done:
    if (objects != small_objects)
        free(objects);
    if (out.results != job.scratch)
        free(out.results);
    job_end(&job);
    return s;
}
