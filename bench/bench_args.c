/* A benchmark's own options as data (bench_commands.h), parsed by one loop. */
#include <stddef.h>

#include "bench_commands.h"

/* value into what a's `to` points at (the i-th of a list); 0, or -1 when it is not one. */
static int set(const bench_arg *a, const char *value, unsigned i)
{
    int n;
    switch (a->kind) {
    case BENCH_ARG_FLAG: *(int *)a->to = 1; return 0;
    case BENCH_ARG_TEXT:
        *(const char **)a->to = value;
        return !*value || value[0] == '-' ? -1 : 0;
    default:
        if (greenctx_parse_int(value, a->lo, a->hi, &n))
            return -1;
        ((unsigned *)a->to)[i] = (unsigned)n;
        return 0;
    }
}

int bench_args_parse(greenctx_args *args, const bench_arg *table, size_t n,
                     bench_positional positional, void *ctx)
{
    greenctx_option own[BENCH_MAX_ARGS + 1] = {{NULL, NULL}};
    for (size_t i = 0; i < n && i < BENCH_MAX_ARGS; i++)
        own[i] = (greenctx_option){table[i].name, table[i].kind ? table[i].help : NULL};
    const bench_arg *list = NULL; /* the list option whose values follow */
    for (int id; (id = greenctx_args_next(args, own)) != GREENCTX_ARG_END;) {
        const char *v = args->value;
        if (id == GREENCTX_ARG_STOP)
            return args->rc;
        const bench_arg *a = id >= 0 ? &table[id] : list;
        if (id == GREENCTX_ARG_POSITIONAL) {
            /* a list's next value, else a word of the command's own */
            if (list && *list->count < list->max && set(list, v, *list->count) == 0) {
                (*list->count)++;
                continue;
            }
            int n;
            if (list && greenctx_parse_int(v, list->lo, list->hi, &n) == 0)
                return greenctx_args_bad(args, "%s takes at most %u values; '%s' is one too many",
                                         list->name, list->max, v);
            list = NULL;
            int rc = positional(args, v, ctx);
            if (rc != GREENCTX_EXIT_OK)
                return rc;
            continue;
        }
        if (!a)
            return greenctx_args_bad(args, "unexpected argument '%s'", v);
        list = a->max > 1 ? a : NULL;
        unsigned i = list ? *a->count : 0;
        if (list && i == a->max)
            return greenctx_args_bad(args, "%s takes at most %u values; '%s' is one too many",
                                     a->name, a->max, v);
        if (set(a, v, i))
            return greenctx_args_bad(args, "%s needs %s, got '%s'", a->name, a->help, v);
        if (list)
            (*a->count)++;
    }
    return GREENCTX_EXIT_OK;
}
