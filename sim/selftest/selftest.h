/* sim_selftest LIBRARY TESTDATA_DIR: what its files share (main.c says what it checks, and
 * ../README.md which file checks what). */
#ifndef GREENCTX_SIM_SELFTEST_H
#define GREENCTX_SIM_SELFTEST_H

#include "cuda_abi.h"
#include "greenctx_sim.h"

/* ---- driver.c: the driver, reached as greenctx reaches it ---- */

typedef struct selftest_driver {
#define X(name, version, required, params) gcu_pfn_##name name;
    GCU_DRIVER_SYMBOLS(X)
#undef X
} selftest_driver;
extern selftest_driver D;

/* cuGetProcAddress_v2, and the simulator's hooks (greenctx_sim.h) by the names checks use. */
extern gcu_pfn_cuGetProcAddress get_proc;
#define SELFTEST_HOOKS(X)                                                                       \
    X(live, gctxsim_live_objects)                                                               \
    X(res_ids, gctxsim_resource_sm_ids)                                                         \
    X(green_ids, gctxsim_green_ctx_sm_ids)                                                      \
    X(stream_ids, gctxsim_stream_sm_ids)                                                        \
    X(calls, gctxsim_calls)                                                                     \
    X(reset, gctxsim_reset)                                                                     \
    X(fail_after, gctxsim_fail_after)                                                           \
    X(config_error, gctxsim_config_error)                                                       \
    X(kernel_model, gctxsim_kernel_model)                                                       \
    X(last_launch, gctxsim_last_launch)                                                         \
    X(default_stream_calls, gctxsim_default_stream_calls)
#define SELFTEST_HOOK_(name, symbol) extern __typeof__(symbol) *name;
SELFTEST_HOOKS(SELFTEST_HOOK_)
#undef SELFTEST_HOOK_

extern int passed, failed;

/* Counts a check; prints "FAIL: ..." when ok is 0. */
void check(int ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Resolves every entry point the configured driver version has, at its prototype's version. */
void resolve(void);
/* Switches the simulator to another configuration, as a test would between cases. */
void configure(const char *devices, const char *version, const char *faults);
/* dlopen of the simulator and its hooks; exits 2 when one is missing. */
void load(const char *path);

/* ---- helpers.c ---- */

#define MAXG 200

typedef struct split_out {
    gcu_result r;
    unsigned n;
    gcu_dev_resource res[MAXG];
    gcu_dev_resource rem;
} split_out;

gcu_dev_resource device_resource(int dev);
/* cuDevSmResourceSplitByCount into o, at most cap groups. */
void split(split_out *o, const gcu_dev_resource *in, unsigned flags, unsigned min, unsigned cap);
/* A green context from resources; NULL if any step fails. */
CUgreenCtx make_ctx(gcu_dev_resource *res, unsigned n);
gcu_dev_resource ctx_resource(CUgreenCtx g);
/* The simulated H200 (driver 13.0) with its primary context current and a green context of
 * 16 SMs (green, and as a CUcontext: as16), what the kernel checks launch on. */
void h200_with_16_sms(CUcontext *primary, CUgreenCtx *green, CUcontext *as16);
/* Its end, once the check released what it made: nothing may be left alive. */
void release_h200_with_16_sms(CUgreenCtx green);
/* "a b c " as the probes print SM lists. */
char *id_list(char *out, const unsigned *ids, int n);
int sets_disjoint(const unsigned *a, int na, const unsigned *b, int nb);
/* The groups of a split hold disjoint SMs, and with the remainder exactly the input's. */
int split_consistent(const split_out *o, const gcu_dev_resource *in);

/* ---- the measurements, replayed: each handler turns a measured line into the simulator's ---- */

/* replay.c: runs handler on every line of DIR/FILE and compares what it prints as text. */
void replay(const char *dir, const char *file, int (*handler)(const char *line, char *got));
int sweep_handler(const char *line, char *got);       /* replay_sweep.c */
int probe_line(const char *line, char *got);          /* replay_probe.c */
int identity_line(const char *line, char *got);       /* replay_granules.c */
int aggregation_line(const char *line, char *got);    /* replay_granules.c */

/* ---- behaviour beyond the measurements ---- */

void check_loading(void);          /* loading.c */
void check_structured_split(void); /* structured_split.c */
void check_errors_and_faults(void); /* faults.c */
void check_threads(void);          /* threads.c */
void check_kernel_model(void);     /* kernel_model.c */
void check_co_residency(void);     /* co_residency.c */
void check_waits(void);            /* waits.c */

#endif
