/* greenctx ps's GPU compute processes as NVML sees them, beside the claims; without NVML the
 * list is unknown (only --json says why). */
#ifndef GREENCTX_TOOL_PS_PROCESSES_H
#define GREENCTX_TOOL_PS_PROCESSES_H

#include "json.h"
#include "nvml.h"

typedef struct ps_process {
    int pid;
    char user[64];     /* "?" when /proc does not say (another PID namespace) */
    char command[160];
    unsigned long long memory_bytes; /* ~0ULL: NVML can't tell */
    int holds_claim;   /* one of the claims listed beside it is this process's */
} ps_process;

typedef struct ps_processes {
    int known;      /* 0: NVML is absent or failed, why[] says why */
    char why[256];
    ps_process *list;
    unsigned count;
} ps_processes;

/* The processes on the GPU with this UUID (unknown when nvml is NULL), claim_pids marked. */
void ps_processes_get(nvml_lib *nvml, const char *nvml_why, const char *uuid,
                      const int *claim_pids, unsigned nb_claim_pids, ps_processes *out);
void ps_processes_free(ps_processes *p);
/* "  compute processes (NVML): ..." and one line each; nothing when unknown. */
void ps_processes_print(const ps_processes *p);
/* "processes" (or null) and "processes_note" (why they are unknown, or null). */
void ps_processes_json(json_writer *w, const ps_processes *p);

#endif
