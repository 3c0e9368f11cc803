/* The group syntax of `plan`, `map` and `run`, as a pure parser: it prints nothing and
 * returns what is wrong, so that the preload and the Slurm plugin carry no printing of the
 * tool's (tools/groups.c prints it).
 *
 *   COUNT[:cN][:pN][:b]   COUNT SMs; cN co-scheduled units of N SMs, pN preferred units of N,
 *                         b backfill (may take SMs outside whole units)
 *   P%[...]               P percent of the partition's SMs (percentages up to 100% always fit)
 *   0[...]                discovery: every SM still free when the group's turn comes
 *   rest                  0:b, the last group: everything left over
 */
#ifndef GREENCTX_COMMON_GROUP_SYNTAX_H
#define GREENCTX_COMMON_GROUP_SYNTAX_H

#include <stddef.h>

#include "greenctx.h"

typedef struct group_request {
    gctx_group *groups;
    unsigned nb_groups;
    char **texts;      /* each group as written on the command line */
    int has_percent;   /* some group was given in percent */
    unsigned unit_sms; /* percentages were cut at multiples of this */
} group_request;

/* Why a request was refused. */
typedef struct group_syntax_error {
    gctx_status status; /* GCTX_ERROR_INVALID_ARGUMENT or GCTX_ERROR_OUT_OF_MEMORY */
    int about_syntax;   /* 1: the message is about how a GROUP is written (group_syntax_help
                           says how); 0: the groups are well written but ask too much */
    char message[2048]; /* "'24x' is not a GROUP", ... */
} group_syntax_error;

/* Parses argv into groups, percentages of sm_count in units of unit_sms. Returns GCTX_SUCCESS,
 * or the status with the reason in err. */
gctx_status group_syntax_parse(int argc, char **argv, unsigned sm_count, unsigned unit_sms,
                               group_request *out, group_syntax_error *err);
void group_request_free(group_request *request);
/* "strict", "down", "nearest", "up" -> a gctx_rounding; -1 for anything else. */
int group_syntax_rounding(const char *text);
/* Those names, in gctx_rounding order, NULL-terminated (the tool's completions offer them). */
extern const char *const group_syntax_roundings[];
/* How a GROUP is written, for the usage of commands taking groups. */
extern const char group_syntax_help[];

#endif
