/* greenctx_spank.so: a SPANK plugin that gives each task of a Slurm job step SMs of its GPUs
 * (docs/slurm.md): `srun --gpu-sms=16` claims 16 SMs of each GPU the task sees and confines the
 * task to them as `greenctx run` does. The claim's lock is inherited by the task, so it goes
 * when the task's last process ends, however it ends. */
#ifndef GREENCTX_SPANK_PLUGIN_H
#define GREENCTX_SPANK_PLUGIN_H

#include <limits.h>
#include <stddef.h>

#include <slurm/spank.h>

#define SPANK_PREFIX "greenctx"
#define SPANK_MAX_REQUEST 256

/* plugstack.conf's arguments. */
typedef struct spank_config {
    char default_request[SPANK_MAX_REQUEST]; /* default=REQ: for jobs that do not ask; "" none */
    int require_mps;                         /* require_mps=yes: refuse tasks without MPS */
    char runtime_dir[PATH_MAX];              /* runtime_dir=DIR: the node's shared registry */
    char preload[PATH_MAX];                  /* preload=PATH: libgreenctx_preload.so */
} spank_config;

/* What a task asks for (spank_task.c). */
typedef struct spank_task_request {
    const char *request;  /* --gpu-sms, else the default */
    int wait_s;           /* --gpu-sms-wait=SECONDS; 0: fail at once when the SMs are taken */
    int rounding;         /* --gpu-sms-round=MODE: a gctx_rounding */
    int device_sms;       /* --gpu-device-sms=MODE: RUN_DEVICE_SMS_PARTITION (default, as
                             greenctx run) or _PHYSICAL */
    const spank_config *config;
} spank_task_request;

/* In the task's process, before Slurm execs it: claims the SMs of every GPU the task sees and
 * sets the preload's variables; 0, or -1 after saying why (the task is then not started). */
int spank_task_confine(spank_t sp, const spank_task_request *request);

#endif
