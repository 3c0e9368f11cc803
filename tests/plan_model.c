#include "plan_model.h"

static unsigned round_up(unsigned x, unsigned step) { return (x + step - 1) / step * step; }

gctx_status plan_model_oracle(void *context, unsigned granule, unsigned room, unsigned flags,
                              gctx__granule_split *out)
{
    plan_model *m = context;
    m->calls++;
    out->groups = out->size = out->remainder = 0;
    if (flags > 2 || granule > m->sm_count)
        return GCTX_SUCCESS; /* the driver's 1 and 915: no groups */
    unsigned s;
    if (flags == 1) {
        s = round_up(granule ? granule : 2, 2);
        out->groups = m->sm_count / s;
    } else {
        unsigned minimum = granule < m->min_partition ? m->min_partition : granule;
        s = round_up(minimum, m->alignment);
        if (m->kind == MODEL_H200_DEVICE && s > 128) {
            s = m->sm_count; /* 129..132 gave the whole device */
            out->groups = 1;
        } else if (m->kind == MODEL_H200_DEVICE) {
            out->groups = (s % 16 == 0 ? 128 : 120) / s;
            if (!out->groups)
                out->groups = 1;
        } else {
            out->groups = s <= m->sm_count ? m->sm_count / s : 0;
        }
    }
    if (room && out->groups > room)
        out->groups = room; /* the granules without room go to the remainder */
    out->size = s;
    out->remainder = m->sm_count - out->groups * s;
    return GCTX_SUCCESS;
}

gctx__plan_input plan_model_input(plan_model *model)
{
    gctx__plan_input in = {0};
    in.sm_count = model->sm_count;
    in.min_partition = model->min_partition;
    in.alignment = model->alignment;
    in.structured = 1;
    in.whole_device = model->kind == MODEL_H200_DEVICE;
    in.structured_api = 0;
    in.fine_flag = 1;
    in.max_coscheduled = model->alignment >= 8 ? 32 : 2;
    in.oracle = plan_model_oracle;
    in.oracle_context = model;
    return in;
}
