/* The group syntax shared by `plan`, `map` and `run` (group_syntax.c; `run`'s preload links
 * it too):
 *
 *   COUNT[:cN][:pN][:b]   COUNT SMs; cN co-scheduled units of N SMs, pN preferred units of N,
 *                         b backfill (may take SMs outside whole units)
 *   P%[...]               P percent of the partition's SMs. Percentages that add up to at
 *                         most 100% always fit: the shares are cut at multiples of the
 *                         smallest partition (cumulative bounds, rounded down, at least one
 *                         unit each), and a last group that brings the total to 100% takes
 *                         everything left (as `rest` does)
 *   0[...]                discovery: every SM still free when the group's turn comes
 *   rest                  0:b, the last group: everything left over
 */
#ifndef GREENCTX_TOOL_GROUPS_H
#define GREENCTX_TOOL_GROUPS_H

#include "greenctx.h"
#include "tool.h"

typedef struct tool_group_request {
    gctx_group *groups;
    unsigned nb_groups;
    char **texts;    /* each group as written on the command line */
    int has_percent; /* some group was given in percent */
    unsigned unit_sms; /* percentages were cut at multiples of this */
} tool_group_request;

/* Parses argv[0..argc-1] into groups, percentages taken of sm_count in units of unit_sms
 * (the smallest partition). On a syntax error prints why and returns -1. */
int tool_parse_groups(const greenctx_tool_options *opts, int argc, char **argv, unsigned sm_count,
                      unsigned unit_sms, tool_group_request *out);
void tool_free_groups(tool_group_request *request);
/* "strict", "down", "nearest", "up" -> a gctx_rounding; -1 for anything else. */
int tool_parse_rounding(const char *text);
/* Text shown in the usage of commands taking groups. */
extern const char tool_groups_help[];


/* What `plan` and `map` share: their options, the device's partition and the parsed groups. */

typedef struct tool_split_setup {
    int device_ordinal;
    gctx_partition *device; /* the whole device */
    gctx_partition_info info;
    tool_group_request request;
    gctx_split_options options;
} tool_split_setup;

/* Parses "[--device N] [--json] [--round MODE] GROUP...", starts the tool and takes the
 * device's partition. Returns GREENCTX_EXIT_OK, TOOL_SPLIT_HELP_SHOWN after printing the
 * usage for --help (the command then exits 0), or the exit code after printing why. */
#define TOOL_SPLIT_HELP_SHOWN (-1)
int tool_split_setup_begin(int argc, char **argv, greenctx_tool_options *opts,
                           tool_split_setup *setup);
void tool_split_setup_end(tool_split_setup *setup);
/* "granules of 8 SMs, aggregated per group" etc. */
const char *tool_path_text(gctx_split_path path);

#endif
