/*
 * What `greenctx run` asks of the preload, and the code that turns it into a green context.
 * Shared by the tool (tools/cmd_run.c: validates the request with the planner before the
 * program starts), the preload (makes the same request real inside the program) and the
 * Slurm plugin (sets the variables for a task, as the tool does), so they can never read the
 * variables differently.
 *
 * The variables (docs/run.md), the only ones the preload reads besides the driver's own
 * GREENCTX_CUDA_LIBRARY; any other GREENCTX_RUN_* name is refused as a typo:
 *   GREENCTX_RUN_SMS      REQ, or DEV=REQ[,DEV=REQ...]: REQ is a GROUP of `greenctx plan`
 *                         (24, 25%, 16:c2, ...) or `all`; without DEV= every device gets REQ,
 *                         with it only the devices named are usable
 *   GREENCTX_RUN_ROUND    strict (default), down, nearest, up
 *   GREENCTX_RUN_REPORT_DIR  an absolute directory: each process that uses CUDA writes its
 *                         part of the report there (NAME.started when it starts using CUDA,
 *                         NAME.part when it exits or execs); the tool merges them
 *   GREENCTX_RUN_INHERIT  1 (default): child processes are confined too; 0: the children of
 *                         the first process that uses CUDA are not
 *   GREENCTX_RUN_CLAIM    DEV=TOKEN[,DEV=TOKEN...]: the claim the tool took for each device it
 *                         confines (gctx_claim_export's token; the lock's descriptor is
 *                         inherited); the preload joins it (gctx_claim_join) and makes the
 *                         device's green context on the claim's SMs, and stops the program
 *                         (exit status 125) when the join fails. Unset: no claim (--shared),
 *                         a fresh split as before
 *   GREENCTX_RUN_DEVICE_SMS  partition (default): a confined device reports the partition's
 *                         SM count and SM resource to the program (cuDeviceGetAttribute of
 *                         the SM count, cuDeviceGetDevResource, cuCtxGetDevResource of its
 *                         primary context); physical: the whole device's, as the driver says
 */
#ifndef GREENCTX_COMMON_RUN_REQUEST_H
#define GREENCTX_COMMON_RUN_REQUEST_H

#include <stddef.h>

#include "greenctx.h"

#define GREENCTX_RUN_VAR_PREFIX "GREENCTX_RUN_"
#define GREENCTX_RUN_SMS "GREENCTX_RUN_SMS"
#define GREENCTX_RUN_ROUND "GREENCTX_RUN_ROUND"
#define GREENCTX_RUN_REPORT_DIR "GREENCTX_RUN_REPORT_DIR"
#define GREENCTX_RUN_INHERIT "GREENCTX_RUN_INHERIT"
#define GREENCTX_RUN_CLAIM "GREENCTX_RUN_CLAIM"
#define GREENCTX_RUN_DEVICE_SMS "GREENCTX_RUN_DEVICE_SMS"

/* The report's parts in GREENCTX_RUN_REPORT_DIR: "<20-digit CLOCK_MONOTONIC ns>-<pid>" and
 * these suffixes, so that the names sort in the order the processes started using CUDA. */
#define RUN_PART_STARTED ".started"
#define RUN_PART_DONE ".part"

/* What only greenctx's own preload exports, and the tool checks before it starts a program
 * with it: any other library in LD_PRELOAD would let the program run unconfined. */
#define GREENCTX_PRELOAD_ABI_SYMBOL "greenctx_preload_abi"
#define GREENCTX_PRELOAD_ABI_MAGIC "greenctx run preload"
typedef struct run_preload_abi {
    char magic[24];
    int version; /* GCTX_VERSION of the build */
} run_preload_abi;

/* The exit status of a program the preload stopped because it could not confine it. */
#define GREENCTX_RUN_EXIT_NOT_CONFINED 125

#define RUN_MAX_DEVICES 64
#define RUN_MAX_REQUEST 64

typedef struct run_request_entry {
    int device; /* -1: every device */
    char text[RUN_MAX_REQUEST];
} run_request_entry;

typedef struct run_request {
    run_request_entry entries[RUN_MAX_DEVICES];
    unsigned nb_entries;
} run_request;

/* Parses GREENCTX_RUN_SMS's grammar (the groups themselves are checked by run_plan_device,
 * which knows the device). Returns 0, or -1 with a message in err. */
int run_request_parse(const char *text, run_request *out, char *err, size_t err_size);
/* The request for a device ordinal, or NULL when that device is not to be used. */
const char *run_request_for(const run_request *request, int device);

/* GREENCTX_RUN_DEVICE_SMS's values, and what `--device-sms` takes. */
enum { RUN_DEVICE_SMS_PHYSICAL = 0, RUN_DEVICE_SMS_PARTITION = 1 };
#define RUN_DEVICE_SMS_VALUES "partition or physical"
/* RUN_DEVICE_SMS_PARTITION or _PHYSICAL for "partition" or "physical"; -1 for anything else. */
int run_device_sms_parse(const char *text);
/* The name of a mode ("partition", "physical"). */
const char *run_device_sms_name(int mode);

/* GREENCTX_RUN_CLAIM: appends "DEV=TOKEN" to list (a comma first unless it is empty); -1
 * when it does not fit or the token holds a comma. */
int run_claim_list_add(char *list, size_t size, int device, const char *token);
/* The token for a device in such a list, into token; 0 when found, -1 when the device has
 * none. */
int run_claim_list_find(const char *list, int device, char *token, size_t size);

/* What a request gives on one device. */
typedef struct run_device_plan {
    int device;
    unsigned device_sms; /* SMs of the whole device */
    unsigned sm_count;   /* SMs of the green context */
    int whole;           /* 1 for `all`: a green context of every SM */
} run_device_plan;

/* What a request is on a device when the SMs are claimed (gctx_claim_acquire takes the
 * request: a count, a share, rest or all): the device's facts, sm_count 0 until the claim
 * says (rest can give a count a split can't, such as 68 = 64 + the 4 left over on an H200).
 * Returns GCTX_SUCCESS, or a status with the reason in err. */
gctx_status run_plan_claim(int device, const char *text, run_device_plan *plan, char *err,
                           size_t err_size);

/* Checks `text` on a device with the planner (`round` is GREENCTX_RUN_ROUND's value, or NULL:
 * strict, as `greenctx plan`) and, when context is not NULL, makes the green context. Returns
 * GCTX_SUCCESS, or a status with the reason in err ("'16x' is not a GROUP", ...); prints
 * nothing. */
gctx_status run_plan_device(int device, const char *text, const char *round, run_device_plan *plan,
                            gctx_context **context, char *err, size_t err_size);

#endif
