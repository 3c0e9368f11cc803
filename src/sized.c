/* Size-prefixed structs across header versions (the NCCL ncclConfig_t way): the library
 * touches only the bytes both the caller's header and its own know. */
#include <string.h>

#include "internal.h"

gctx_status gctx__sized_check(const void *caller, size_t min_size, const char *name,
                              const char *init_macro)
{
    if (!caller)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
    size_t size;
    memcpy(&size, caller, sizeof size);
    if (size < min_size)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "%s->size is %zu, below %zu, the smallest layout greenctx ever "
                          "published: initialise it with %s",
                          name, size, min_size, init_macro);
    return GCTX_SUCCESS;
}

gctx_status gctx__sized_in(void *local, size_t local_size, const void *caller, size_t min_size,
                           const char *name, const char *init_macro)
{
    GCTX_TRY(gctx__sized_check(caller, min_size, name, init_macro));
    size_t size;
    memcpy(&size, caller, sizeof size);
    memcpy(local, caller, size < local_size ? size : local_size);
    return GCTX_SUCCESS;
}

void gctx__sized_out(void *caller, const void *local, size_t local_size)
{
    size_t size;
    memcpy(&size, caller, sizeof size);
    size_t n = size < local_size ? size : local_size;
    /* The caller's size stays as the caller set it. */
    memcpy((char *)caller + sizeof size, (const char *)local + sizeof size, n - sizeof size);
}

gctx_status gctx__groups_check(const gctx_group *groups, unsigned nb_groups)
{
    const unsigned nb_reserved = sizeof groups[0].reserved / sizeof groups[0].reserved[0];
    for (unsigned i = 0; groups && i < nb_groups; i++)
        for (unsigned k = 0; k < nb_reserved; k++)
            if (groups[i].reserved[k])
                return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                                  "groups[%u].reserved[%u] is %u: reserved fields must be zero "
                                  "(initialise groups with designated initializers or zeroed "
                                  "memory)",
                                  i, k, groups[i].reserved[k]);
    return GCTX_SUCCESS;
}
