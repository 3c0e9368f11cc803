/* One `greenctx run` session, the same in its three rooms: the tool and the Slurm plugin plan
 * and claim it and hand it to the program as its environment; the preload joins it there.
 * Errors come back in err, which each room prints its way. */
#ifndef GREENCTX_COMMON_RUN_SESSION_H
#define GREENCTX_COMMON_RUN_SESSION_H

#include <sys/types.h>

#include "run_request.h"

/* Parses req->sms into s->plans' devices; GCTX_ERROR_NO_DEVICE when none matches. */
gctx_status run_session_open(const run_session_request *req, run_session *s, char *err,
                             size_t size);
/* run_session_open, then what each device gets: with req->shared the planner's split; else
 * sm_count 0 until the claim says (rest can give 68 = 64 + 4 on an H200, which no split can). */
gctx_status run_session_plan(const run_session_request *req, run_session *s, char *err,
                             size_t size);
/* Claims each planned device's SMs (not with req->shared), tokens in s->claim_list. On a
 * failure what was claimed is given back, s->failed is the plan that failed and err says why
 * (GCTX_ERROR_BUSY: what could be asked instead). */
gctx_status run_session_claim(const run_session_request *req, run_session *s, char *err,
                              size_t size);
/* Gives the claims back (a sweep's between sizes, a failed start's). */
void run_session_release(run_session *s);

/* One device as the program joined the session. */
typedef struct run_member {
    run_device_plan plan;
    gctx_context *context;      /* the green context the program's work runs in */
    gctx_claim *claim;          /* the claim it is on, or NULL (--shared) */
    gctx_claim_info claim_info; /* the claim as it was joined (size 0: none) */
    gctx_stream *probe;         /* the claim's stream: where a fault is seen */
    int claim_fd;               /* the claim's descriptor at its token's number, or -1: what
                                   an exec hands on to the program it starts */
    dev_t claim_dev;            /* the claim file claim_fd was, so that a number the program */
    ino_t claim_ino;            /* closed and reused is not handed on */
} run_member;

/* In the program: plan i made real, on its device's claim in req->claim_list, or a split. */
gctx_status run_session_join(const run_session_request *req, const run_session *s, unsigned i,
                             run_member *m, char *err, size_t size);

#endif
