/* Contexts made from a split in one call (src/context_device.c). */
#ifndef GREENCTX_CONTEXT_DEVICE_H
#define GREENCTX_CONTEXT_DEVICE_H

#include "internal.h"

/* Splits whole and makes a context per group (and one on the remainder when remainder is not
 * NULL): gctx_context_split and gctx_context_split_device after they found what to split. */
gctx_status gctx__split_into_contexts(gctx_partition *whole, const gctx_group *groups,
                                      unsigned nb_groups, const gctx_split_options *split_options,
                                      const gctx_context_options *options,
                                      gctx_context **contexts, gctx_context **remainder);

#endif
