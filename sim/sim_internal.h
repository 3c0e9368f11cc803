/* Shared state of the simulated driver. Every entry point runs under one global mutex
 * (SIM_BEGIN/SIM_END); only the current-context stack is per thread. */
#ifndef GREENCTX_SIM_INTERNAL_H
#define GREENCTX_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_abi.h"

#define SIM_MAX_SMS 160
#define SIM_MAX_DEVICES 8

/* ---- entry points ------------------------------------------------------------------------ */

#define SIM_SYM_ENUM_(name, version, required, params) SIM_SYM_##name,
enum {
    GCU_DRIVER_SYMBOLS(SIM_SYM_ENUM_) SIM_SYM_cuGetProcAddress,
    SIM_SYM_COUNT
};
#undef SIM_SYM_ENUM_

#define SIM_DECLARE_(name, version, required, params) gcu_result sim_##name params;
GCU_DRIVER_SYMBOLS(SIM_DECLARE_)
#undef SIM_DECLARE_
gcu_result sim_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                unsigned long long flags, int *symbolStatus);

void sim_configure(void); /* reads the environment on first use; lock held */
/* The next item of a comma-separated list into item (cut), past it; false at the end. */
bool sim_list_next(const char **list, char *item, size_t size);
void sim_lock(void);
void sim_unlock(void);
/* Lock held: configures on first use, counts the call, injects a fault, needs cuInit. */
gcu_result sim_enter(int sym, bool need_init);

/* Every entry point has this shape, so counting, faults and locking cannot be forgotten; a
 * helper that serves several entry points begins with SIM_BEGIN_SYM (sym: the one called).
 * SIM_BEGIN_ARGS and SIM_BEGIN_NOINIT (for the calls that need no cuInit) refuse the call's
 * arguments when `invalid`, once it is counted; SIM_BEGIN_DEVICE then a device not there. */
#define SIM_BEGIN(name) SIM_BEGIN_SYM(SIM_SYM_##name, true)
#define SIM_BEGIN_ARGS(name, invalid)                                                           \
    SIM_BEGIN(name);                                                                            \
    SIM_FAIL_IF(invalid, GCU_ERROR_INVALID_VALUE)
#define SIM_BEGIN_DEVICE(name, invalid, dev)                                                    \
    SIM_BEGIN_ARGS(name, invalid);                                                              \
    SIM_FAIL_IF((dev) < 0 || (dev) >= sim.ndev, GCU_ERROR_INVALID_DEVICE)
#define SIM_BEGIN_NOINIT(name, invalid)                                                         \
    SIM_BEGIN_SYM(SIM_SYM_##name, false);                                                       \
    SIM_FAIL_IF(invalid, GCU_ERROR_INVALID_VALUE)
#define SIM_BEGIN_SYM(sym, need_init)                                                           \
    gcu_result rc = GCU_SUCCESS;                                                                \
    sim_lock();                                                                                 \
    rc = sim_enter(sym, need_init);                                                             \
    if (rc != GCU_SUCCESS)                                                                      \
    goto out
#define SIM_FAIL(code)                                                                          \
    do {                                                                                        \
        rc = (code);                                                                            \
        goto out;                                                                               \
    } while (0)
#define SIM_FAIL_IF(cond, code)                                                                 \
    do {                                                                                        \
        if (cond)                                                                               \
            SIM_FAIL(code);                                                                     \
    } while (0)
#define SIM_CHECK(expr)                                                                         \
    do {                                                                                        \
        rc = (expr);                                                                            \
        if (rc != GCU_SUCCESS)                                                                  \
            goto out;                                                                           \
    } while (0)
/* type *var = lookup, or the call fails with CUDA_ERROR_INVALID_HANDLE when it found nothing. */
#define SIM_LOOKUP(type, var, lookup)                                                           \
    type *var = (lookup);                                                                       \
    SIM_FAIL_IF(!var, GCU_ERROR_INVALID_HANDLE)
/* sim_ctx var as `find` writes it (sim_ctx_current(&var), ...), or the call fails with it. */
#define SIM_CTX(var, find)                                                                      \
    sim_ctx var;                                                                                \
    SIM_CHECK(find)
#define SIM_END()                                                                               \
    out:                                                                                        \
    sim_unlock();                                                                               \
    return rc

/* ---- call counters and faults (sim_faults.c) --------------------------------------------- */

/* Counts a call of sym, runs its gctxsim_on_call hook, and returns the fault injected for it. */
gcu_result sim_count_call(int sym);
/* Zeroes the counters too. -1 with why when env_spec is malformed. */
int sim_faults_reset(const char *env_spec, char *why, size_t why_size);

/* ---- SM sets ----------------------------------------------------------------------------- */

typedef struct sim_smset {
    uint32_t w[SIM_MAX_SMS / 32];
} sim_smset;

static inline void sim_set_add(sim_smset *s, unsigned id) { s->w[id / 32] |= 1u << (id % 32); }
static inline bool sim_set_has(const sim_smset *s, unsigned id)
{
    return (s->w[id / 32] >> (id % 32)) & 1u;
}
unsigned sim_set_count(const sim_smset *s);
unsigned sim_set_ids(const sim_smset *s, unsigned *ids); /* ascending; returns count */
void sim_set_union(sim_smset *s, const sim_smset *add);
void sim_set_minus(sim_smset *s, const sim_smset *take);
sim_smset sim_set_range(unsigned first, unsigned count);
sim_smset sim_set_of(const unsigned *ids, unsigned n);

/* ---- devices (sim_devices.c) ------------------------------------------------------------- */

typedef enum { SIM_LAYOUT_UNIFORM, SIM_LAYOUT_GH100 } sim_layout;

typedef struct sim_model {
    const char *key;
    const char *name;
    unsigned sms;
    int cc_major, cc_minor;
    unsigned min_part, align;
    unsigned max_coscheduled; /* the largest coscheduledSmCount of cuDevSmResourceSplit */
    unsigned locality_domains; /* > 1 only where the sim models domains (13.4+) */
    sim_layout layout;
    unsigned memory_mib; /* what cuMemGetInfo reports as total */
} sim_model;

const sim_model *sim_model_find(const char *key);
/* The SMs of `set` in complete coscheduled units of groups of `size`, in device order; count. */
unsigned sim_layout_units(const sim_model *m, const sim_smset *set, unsigned size, unsigned *order);
/* Locality domain of every SM of `set`, or -1 when they span several (or none are modelled). */
int sim_set_domain(const sim_model *m, const sim_smset *set);
sim_smset sim_domain_set(const sim_model *m, unsigned domain);

/* ---- global state (sim_main.c) ----------------------------------------------------------- */

typedef struct sim_state {
    bool configured;
    bool initialized;
    gcu_result config_error; /* what cuInit answers when the environment names no usable device */
    int driver_version;
    int ndev;
    const sim_model *dev[SIM_MAX_DEVICES];
    unsigned wq_limit; /* default wqConcurrencyLimit */
    bool default_per_thread; /* cuGetProcAddress's flags 0 give the _ptsz entry points */
    double copy_bytes_per_ns; /* an async copy's rate (GREENCTX_SIM_COPY_GBPS) */
    uint32_t epoch;    /* bumped by gctxsim_reset: older handles and resources go stale */
    unsigned long long next_green_id;
    int descs_made;
} sim_state;

extern sim_state sim;

static inline bool sim_version_at_least(int v) { return sim.driver_version >= v; }

/* ---- handles (sim_handles.c) ------------------------------------------------------------- */

/* Handles are never pointers: the reset epoch, the slot's generation, a tag and the slot packed
 * into the value, so stale, foreign or mistyped handles are recognised, not dereferenced. */
enum { SIM_TAG_GREEN = 1, SIM_TAG_CTX_GREEN, SIM_TAG_CTX_PRIMARY, SIM_TAG_STREAM, SIM_TAG_EVENT,
       SIM_TAG_DESC, SIM_TAG_MODULE, SIM_TAG_FUNCTION };

typedef struct sim_slot {
    uint16_t gen;
    bool live;
} sim_slot;

typedef struct sim_pool {
    unsigned char *mem;
    size_t item_size; /* each item starts with a sim_slot */
    uint32_t count, cap;
    uint8_t tag;
} sim_pool;

void *sim_pool_alloc(sim_pool *p, uintptr_t *handle); /* NULL when out of memory */
void *sim_pool_get(const sim_pool *p, uintptr_t handle);
/* The item behind a handle of p's retagged `tag` (a function's is its module's), or NULL. */
void *sim_pool_get_as(const sim_pool *p, uintptr_t handle, uint8_t tag);
void *sim_pool_at(const sim_pool *p, uint32_t index); /* live item or NULL */
/* The live items, those that counts accepts where it is not NULL. */
int sim_pool_live(const sim_pool *p, bool (*counts)(const void *item));
uintptr_t sim_pool_handle(const sim_pool *p, const void *item);
void sim_pool_free(void *item);
void sim_pool_clear(sim_pool *p);
uintptr_t sim_handle_make(uint8_t tag, uint32_t index, uint16_t gen);
uintptr_t sim_handle_retag(uintptr_t h, uint8_t tag);

/* ---- resources (sim_resources.c) --------------------------------------------------------- */

extern sim_pool sim_descs; /* what cuDevResourceGenerateDesc made */
void sim_resources_reset(void);

/* What the 92 padding bytes of a gcu_dev_resource carry. */
typedef struct sim_res {
    uint32_t magic;
    uint32_t epoch;
    uint32_t split_id; /* which split produced it (a hash of the input and the request, so two
                          identical splits write identical bytes, as the H200's do); 0 for a
                          queried resource, the only kind that splits */
    uint16_t type;     /* a gcu_dev_resource_type */
    uint8_t device;
    uint8_t structured;
    uint8_t report_min, report_align; /* the values shown from 13.0 on */
    uint8_t flags;                    /* BACKFILL / LOCALITY_DOMAIN_ID group flags */
    uint8_t domain;
    uint32_t wq_limit;
    int32_t wq_scope;
    sim_smset sms;
    uint32_t check;
} sim_res;

sim_res sim_res_new(int type, int dev); /* of this epoch, all else 0 */
void sim_res_write(gcu_dev_resource *out, const sim_res *r);
/* Checks the record (check: its FNV-1a hash) and that it is of this epoch and of in->type. */
gcu_result sim_res_read(const gcu_dev_resource *in, sim_res *out);
uint32_t sim_fnv1a(uint32_t h, const void *bytes, size_t size);

/* ---- contexts (sim_contexts.c) ------------------------------------------------------------ */

typedef struct sim_green {
    sim_slot slot;
    int dev;
    bool structured;
    sim_smset sms;
    unsigned long long id;
    unsigned wq_limit;
    int wq_scope;
    long long default_done_ns; /* when the spinning work of its default streams ends */
} sim_green;

typedef struct sim_desc {
    sim_slot slot;
    int dev;
    bool structured;
    sim_smset sms;
    bool has_wq;
    unsigned wq_limit;
    int wq_scope;
} sim_desc;

/* A context as streams and queries see it: a device's primary context or a green context. */
typedef struct sim_ctx {
    int dev;
    sim_green *green; /* NULL for the primary context */
} sim_ctx;

extern sim_pool sim_greens;
gcu_result sim_ctx_current(sim_ctx *out);
sim_green *sim_green_get(CUgreenCtx g);
sim_smset sim_ctx_sms(const sim_ctx *c);
/* The SM / workqueue resource of a context (sim_resources.c): `type` as passed by the caller. */
gcu_result sim_res_of_context(gcu_dev_resource *out, int type, const sim_ctx *c);
void sim_contexts_reset(void);
/* Green contexts of dev alive, and destroyed since its primary's last reset (sim_memory.c). */
void sim_greens_count(int dev, size_t *live, size_t *destroyed);
int sim_primary_refs(void); /* explicit cuDevicePrimaryCtxRetain references */

/* ---- streams and events (sim_streams.c) --------------------------------------------------- */

void sim_streams_reset(void);
int sim_streams_live(void);
int sim_events_live(void);
/* The context a stream's work runs in; default-stream handles mean the current context. */
gcu_result sim_stream_ctx(CUstream s, sim_ctx *out);
/* Adds ns of modelled work to a created stream's clock (default streams keep none). */
void sim_stream_advance(CUstream s, double ns);
/* Queues ns of real time of a spinning kernel on stream s of context c (sim_streams.c). */
void sim_stream_run(CUstream s, const sim_ctx *c, long long ns);
/* The default-stream handles (cuda.h's CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define SIM_STREAM_LEGACY ((CUstream)0x1)
#define SIM_STREAM_PER_THREAD ((CUstream)0x2)
/* Counts a call of cuLaunchKernel or cuEventRecord on a default stream, by kind. */
void sim_count_default_stream(int sym, CUstream s);

/* ---- memory (sim_memory.c) ---------------------------------------------------------------- */

void sim_memory_reset(void); /* frees every allocation */
int sim_memory_live(void);   /* allocations not freed */
/* The host address of [ptr, ptr + bytes) if one live allocation holds all of it, else NULL. */
unsigned char *sim_memory_range(gcu_deviceptr ptr, size_t bytes);

/* ---- modules (sim_kernels.c) --------------------------------------------------------------- */

int sim_modules_live(void);
void sim_kernels_reset(void);

#endif
