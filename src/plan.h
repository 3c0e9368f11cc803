/* Split planning, pure: what a split-by-count gives is asked of an oracle (the driver, or a
 * test's model). */
#ifndef GREENCTX_PLAN_H
#define GREENCTX_PLAN_H

#include "greenctx.h"

/* What one split-by-count of the input gives for a granule (minCount) and flags. */
typedef struct gctx__granule_split {
    unsigned groups;    /* whole granules (at most the room asked for) */
    unsigned size;      /* SMs in each (the driver rounds minCount up) */
    unsigned remainder; /* SMs in no granule */
} gctx__granule_split;

/* room: the granules to ask for (0: every one), the rest staying in the remainder. */
typedef gctx_status (*gctx__granule_oracle)(void *context, unsigned granule, unsigned room,
                                            unsigned flags, gctx__granule_split *out);

typedef struct gctx__plan_input {
    unsigned sm_count;
    unsigned min_partition;
    unsigned alignment;
    int structured;     /* 0: a remainder's SMs, with no co-scheduling guarantee */
    int whole_device;   /* for messages: "on this device" rather than "on this partition" */
    int structured_api; /* 1: the driver's per-group split (13.1+) will make it */
    int fine_flag;      /* 1: the driver has the ignore-co-scheduling flag (12.5+) */
    unsigned max_coscheduled; /* the largest co-scheduled count the device allows */
    gctx__granule_oracle oracle; /* for the granule paths */
    void *oracle_context;
} gctx__plan_input;

/* A group after validation and rounding. */
typedef struct gctx__normal_group {
    unsigned num_sms; /* 0: discovery */
    unsigned coscheduled;
    unsigned preferred;
    int backfill;
    int rounded;
} gctx__normal_group;

/* Where each group's SMs come from on the granule paths. */
typedef struct gctx__assignment {
    unsigned first_granule;
    unsigned granules;
    int takes_remainder;
} gctx__assignment;

#define GCTX__PLAN_SMALL 8

typedef struct gctx__plan {
    gctx_split_path path;
    unsigned granule;  /* minCount of the one split-by-count (granule paths) */
    unsigned flags;    /* its useFlags */
    unsigned split_groups, split_remainder; /* what that split gives */
    unsigned used_granules; /* the groups take the first ones */
    int remainder_taken;
    unsigned remainder_sms;
    int rounded;
    unsigned nb_groups;
    /* nb_groups each: in small up to GCTX__PLAN_SMALL groups (a hot path), else one block */
    gctx__normal_group *normal;
    gctx__assignment *assign;    /* granule paths only */
    gctx__assignment *trial;     /* the granule paths' scratch while planning */
    gctx_group_plan *groups;
    struct {
        gctx_group_plan groups[GCTX__PLAN_SMALL];
        gctx__normal_group normal[GCTX__PLAN_SMALL];
        gctx__assignment assign[GCTX__PLAN_SMALL], trial[GCTX__PLAN_SMALL];
    } small;
} gctx__plan;

/* Checks and rounds; on the granule paths assigns granules to groups. */
gctx_status gctx__plan_make(const gctx__plan_input *input, const gctx_group *groups,
                            unsigned nb_groups, gctx_rounding rounding, gctx__plan *plan);
/* The structured path's sizes, as the driver's split gave them, checked. */
gctx_status gctx__plan_take_structured(const gctx__plan_input *input, gctx__plan *plan,
                                       const unsigned *sizes);
void gctx__plan_free(gctx__plan *plan);

/* "granule" or "granules": messages count things, and "1 granules" reads as a bug. */
#define GCTX__PLURAL(n) ((n) == 1 ? "" : "s")

#endif
