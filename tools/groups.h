/* Groups on the tool's command line with the tool's errors, and what `plan` and `map` share. */
#ifndef GREENCTX_TOOL_GROUPS_H
#define GREENCTX_TOOL_GROUPS_H

#include "greenctx.h"
#include "group_syntax.h"
#include "tool.h"

/* Parses argv into groups; on an error prints why (with the syntax's help) and returns -1. */
int tool_parse_groups(const greenctx_tool_options *opts, int argc, char **argv, unsigned sm_count,
                      unsigned unit_sms, group_request *out);

/* What `plan` and `map` share: their options, the device's partition and the parsed groups. */

typedef struct tool_split_setup {
    int device_ordinal;
    gctx_partition *device; /* the whole device */
    gctx_partition_info info;
    group_request request;
    gctx_split_options options;
} tool_split_setup;

/* Parses "[--device N] [--json] [--round MODE] GROUP...", starts the tool and takes the
 * device's partition. Returns an exit code (GREENCTX_EXIT_HELP after the usage). */
int tool_split_setup_begin(int argc, char **argv, greenctx_tool_options *opts,
                           tool_split_setup *setup);
void tool_split_setup_end(tool_split_setup *setup);
/* greenctx_tool_fail for a refused split, with the groups scaled down to fit when they don't. */
int tool_split_fail(const greenctx_tool_options *opts, const tool_split_setup *st, gctx_status s);
/* "structured", "granules" or "fine_granules", as the JSON documents write the path. */
const char *tool_path_name(gctx_split_path path);
/* "granules of 8 SMs, aggregated per group" etc. */
const char *tool_path_text(gctx_split_path path);

#endif
