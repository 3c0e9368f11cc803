/* greenctx map GROUP...: the partitions made as green contexts, and each one's physical SMs. */
#include <stdio.h>
#include <stdlib.h>

#include "tool.h"

#define MAX_SM_ID 1024

typedef struct mapped {
    char label;
    int group; /* -1: the remainder */
    unsigned planned;
    unsigned count;
    unsigned ids[MAX_SM_ID];
} mapped;

static gctx_status observe(gctx_partition *partition, mapped *m)
{
    gctx_context *context;
    gctx_stream *stream;
    gctx_status s = gctx_context_create(partition, NULL, &context);
    if (s != GCTX_SUCCESS)
        return s;
    s = gctx_stream_create(context, NULL, &stream);
    if (s == GCTX_SUCCESS) {
        s = gctx_stream_observe_sms(stream, m->ids, MAX_SM_ID, &m->count);
        gctx_stream_release(stream);
    }
    gctx_context_release(context);
    return s;
}

static void print_grid(const mapped *maps, unsigned sm_count, const int *owners)
{
    printf("SM grid (row = 16 SMs; letter = partition, * = shared, . = none):\n");
    for (unsigned row = 0; row < sm_count; row += 16) {
        printf("  %4u  ", row);
        for (unsigned id = row; id < row + 16 && id < sm_count; id++) {
            putchar(owners[id] == -2 ? '*' : owners[id] >= 0 ? maps[owners[id]].label : '.');
            if (id % 4 == 3)
                putchar(' ');
        }
        putchar('\n');
    }
}

static void print_list(const mapped *m)
{
    if (m->group >= 0)
        printf("%c  group %d: planned %u SMs, ran on %u:", m->label, m->group, m->planned, m->count);
    else
        printf("%c  remainder: planned %u SMs, ran on %u:", m->label, m->planned, m->count);
    for (unsigned i = 0; i < m->count && i < MAX_SM_ID; i++)
        printf(" %u", m->ids[i]);
    putchar('\n');
}

static void print_json(const tool_split_setup *st, const mapped *maps, unsigned n,
                       const int *owners, unsigned shared)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.map/1");
    json_int(&w, "device", st->device_ordinal);
    json_uint(&w, "sm_count", st->info.sm_count);
    json_array(&w, "partitions");
    for (unsigned p = 0; p < n; p++) {
        char label[2] = {maps[p].label, '\0'};
        json_object(&w, NULL);
        json_string(&w, "label", label);
        json_int(&w, "group", maps[p].group);
        json_uint(&w, "planned_sm_count", maps[p].planned);
        json_uint(&w, "sm_count", maps[p].count);
        json_array(&w, "sm_ids");
        for (unsigned i = 0; i < maps[p].count && i < MAX_SM_ID; i++)
            json_uint(&w, NULL, maps[p].ids[i]);
        json_close(&w);
        json_close(&w);
    }
    json_close(&w);
    json_array(&w, "shared_sm_ids");
    unsigned printed = 0;
    for (unsigned id = 0; id < MAX_SM_ID && printed < shared; id++)
        if (owners[id] == -2) {
            json_uint(&w, NULL, id);
            printed++;
        }
    json_end(&w);
}

int greenctx_cmd_map(int argc, char **argv, greenctx_tool_options *opts)
{
    tool_split_setup st;
    int rc = tool_split_setup_begin(argc, argv, opts, &st);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    unsigned n = st.request.nb_groups;
    gctx_partition **parts = calloc(n + 1, sizeof *parts);
    mapped *maps = calloc(n + 1, sizeof *maps);
    int *owners = malloc(MAX_SM_ID * sizeof *owners);
    gctx_group_plan *plans = calloc(n, sizeof *plans);
    gctx_status s = GCTX_ERROR_OUT_OF_MEMORY;
    unsigned made = 0;
    if (parts && maps && owners && plans)
        s = gctx_partition_split(st.device, st.request.groups, n, &st.options, parts, &parts[n],
                                 NULL, plans);
    if (s == GCTX_SUCCESS) {
        made = parts[n] ? n + 1 : n;
        for (unsigned p = 0; p < made && s == GCTX_SUCCESS; p++) {
            maps[p].label = p < n ? (char)('A' + p % 26) : 'r';
            maps[p].group = p < n ? (int)p : -1;
            gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
            gctx_partition_get_info(parts[p], &info);
            maps[p].planned = info.sm_count;
            s = observe(parts[p], &maps[p]);
        }
    }
    if (s != GCTX_SUCCESS) {
        rc = tool_split_fail(opts, &st, s);
    } else {
        unsigned shared = 0, mismatched = 0;
        for (unsigned id = 0; id < MAX_SM_ID; id++)
            owners[id] = -1;
        for (unsigned p = 0; p < made; p++) {
            mismatched += maps[p].count != maps[p].planned;
            for (unsigned i = 0; i < maps[p].count && i < MAX_SM_ID; i++) {
                unsigned id = maps[p].ids[i];
                if (owners[id] == -1)
                    owners[id] = (int)p;
                else if (owners[id] >= 0) {
                    owners[id] = -2;
                    shared++;
                }
            }
        }
        if (opts->json) {
            print_json(&st, maps, made, owners, shared);
        } else {
            print_grid(maps, st.info.sm_count, owners);
            putchar('\n');
            for (unsigned p = 0; p < made; p++)
                print_list(&maps[p]);
            printf("\nshared SMs: %s\n", shared ? "YES" : "none");
            if (mismatched)
                printf("warning: %u partition(s) ran on a different number of SMs than planned\n",
                       mismatched);
        }
        if (shared || mismatched)
            rc = GREENCTX_EXIT_FAILED;
    }
    for (unsigned p = 0; p < made; p++)
        gctx_partition_release(parts[p]);
    free(parts);
    free(maps);
    free(owners);
    free(plans);
    tool_split_setup_end(&st);
    return rc;
}
