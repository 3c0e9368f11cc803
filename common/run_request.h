/* The protocol between the rooms of `greenctx run`, its GREENCTX_RUN_* variables (docs/run.md
 * has their table): written by the tool and the Slurm plugin, read by the preload, all through
 * this one file so the rooms can never read them differently; another GREENCTX_RUN_* name is
 * refused as a typo. */
#ifndef GREENCTX_COMMON_RUN_REQUEST_H
#define GREENCTX_COMMON_RUN_REQUEST_H

#include <stddef.h>

#include "greenctx_claims.h"

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

/* Parses GREENCTX_RUN_SMS's grammar (run_session_plan checks the groups); 0, or -1 with err. */
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

/* "DEV=VALUE,DEV=VALUE" (GREENCTX_RUN_CLAIM's tokens, MPS's memory limits): appends one; -1
 * when it does not fit or the value has a comma. */
int run_device_list_add(char *list, size_t size, int device, const char *value);
/* The value of a device in such a list into value; -1 when it has none. */
int run_device_list_find(const char *list, int device, char *value, size_t size);

/* Each room words its own errors around this one's message; returns -1. */
int run_say(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* What a request gives on one device. */
typedef struct run_device_plan {
    int device;
    unsigned device_sms; /* SMs of the whole device */
    unsigned sm_count;   /* SMs of the green context; with a claim, 0 until it is taken */
    int whole;           /* 1 for `all`: a green context of every SM */
    char granules[256];  /* the claim's granules as people read them ("0-7"), "" without one */
} run_device_plan;

/* What a room asks of one session: the request, how its SMs are taken, the environment. */
typedef struct run_session_request {
    const char *sms;             /* GREENCTX_RUN_SMS's value */
    const char *round;           /* GREENCTX_RUN_ROUND's value, or NULL: strict */
    int shared;                  /* no claim: the planner's split, SMs other tenants may use */
    const char *device_word;     /* how the room's users name a device: "GPU", NULL: "device" */
    const char *rest_option;     /* how they ask for every free SM ("--sms rest") and for a */
    const char *round_option;    /* rounding ("--round up"): a busy claim's advice */
    const char *waiting_note;    /* "greenctx run": with GCTX_CLAIM_WAIT, says on stderr when
                                    --sms queues (the holders may keep the SMs for hours) */
    gctx_claim_options claim;    /* each device's claim (rounding, waiting, label, registry) */
    const char *claim_list;      /* the preload: GREENCTX_RUN_CLAIM to join, or NULL */
    const char *preload, *program_preload; /* LD_PRELOAD: the preload, the program's own after */
    const char *report_dir;      /* GREENCTX_RUN_REPORT_DIR, or NULL */
    int no_inherit, device_sms;  /* GREENCTX_RUN_INHERIT=0, GREENCTX_RUN_DEVICE_SMS */
    const char *memory;          /* MPS's device-memory limit on each device confined, or NULL */
} run_session_request;

#define RUN_MAX_SMS_TEXT 512

/* One session as the tool or the Slurm plugin takes it for a program. */
typedef struct run_session {
    char sms[RUN_MAX_SMS_TEXT];             /* GREENCTX_RUN_SMS's value */
    run_request request;                    /* it, parsed */
    int device_count;                       /* devices the driver shows */
    run_device_plan plans[RUN_MAX_DEVICES]; /* each device confined, in order */
    unsigned nb_plans;
    gctx_claim *claims[RUN_MAX_DEVICES];    /* plans[i]'s claim; none when shared */
    unsigned nb_claims;
    char claim_list[4096];                  /* GREENCTX_RUN_CLAIM's value, "" when shared */
    unsigned failed;                        /* the plan whose claim failed */
} run_session;

/* Sets a variable of the program's environment (NULL: unset, in the tool); 0, or -1. */
typedef int run_setenv_fn(void *room, const char *name, const char *value);

/* Hands set the variables a session's program gets (the preload first in LD_PRELOAD,
 * GREENCTX_RUN_*, MPS's memory limit, a shared registry's place). 0, or -1 when one would be
 * cut or could not be set. */
int run_session_environment(const run_session_request *req, const run_session *s,
                            run_setenv_fn *set, void *room);

#endif
