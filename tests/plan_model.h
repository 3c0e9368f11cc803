/* Models of what the real driver's split-by-count gives, for testing the planner without a
 * driver. The H200 model is the rule read off shared/measurements/h200-split-sweep.md; the
 * uniform model is what a structured context's resource showed there (floor(N/s) groups). */
#ifndef GREENCTX_TEST_PLAN_MODEL_H
#define GREENCTX_TEST_PLAN_MODEL_H

#include "plan.h"

typedef enum model_kind { MODEL_H200_DEVICE, MODEL_UNIFORM } model_kind;

typedef struct plan_model {
    model_kind kind;
    unsigned sm_count, min_partition, alignment;
    long calls;
} plan_model;

gctx_status plan_model_oracle(void *model, unsigned granule, unsigned room, unsigned flags,
                              gctx__granule_split *out);
/* Plan input for a model: the H200 device with driver 13.0, or a uniform structured
 * resource (whole_device says which wording the messages use). */
gctx__plan_input plan_model_input(plan_model *model);

#endif
