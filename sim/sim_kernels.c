/* Code loading, kernel launches and graphs. Two kinds of image load: the library's %smid
 * kernel (src/observe.c), whose blocks spin in real time, and kernels registered with a cost
 * model (gctxsim_kernel_model), whose launch computes nothing and advances its stream's clock.
 * Every other image, and every graph, answers CUDA_ERROR_NOT_SUPPORTED ("needs a real GPU"). */
#include <string.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

#define SIM_SMID_ENTRY "greenctx_smid"

/* The registered models; a removed one keeps its slot: a function's index never changes kernel. */
enum { SIM_MAX_MODELS = 32, SIM_MODEL_NAME = 64 };
static struct {
    char entry[SIM_MODEL_NAME];
    gctxsim_work_fn work;
    void *user;
} models[SIM_MAX_MODELS];
static int nb_models;

/* A loaded module, or one function of a modelled module (parent: the module's handle). A
 * function's handle is its slot's, retagged, so the %smid module's one function is the module
 * itself and a modelled module's functions are freed with it. */
typedef struct sim_module {
    sim_slot slot;
    bool modelled;    /* else the %smid kernel's module */
    uintptr_t parent; /* 0: a module */
    int kernel;       /* a function of a modelled module: its index in models */
    sim_ctx ctx;      /* the context current at its load: its functions launch there only */
} sim_module;

/* The model registered as entry, or -1; the lock held. */
static int model_index(const char *entry)
{
    for (int k = 0; k < nb_models; k++)
        if (strcmp(models[k].entry, entry) == 0)
            return k;
    return -1;
}

GCTXSIM_API int gctxsim_kernel_model(const char *entry, gctxsim_work_fn work, void *user)
{
    if (!entry || !*entry || strlen(entry) >= SIM_MODEL_NAME)
        return -1;
    sim_lock();
    int k = model_index(entry);
    if (k < 0 && nb_models < SIM_MAX_MODELS)
        strcpy(models[k = nb_models++].entry, entry);
    if (k >= 0) {
        models[k].work = work;
        models[k].user = user;
    }
    sim_unlock();
    return k >= 0 ? 0 : -1;
}

/* 1 when image defines a registered entry (".entry NAME("); the lock held. */
static int image_modelled(const char *image)
{
    for (const char *p = image; (p = strstr(p, ".entry ")) != NULL;) {
        p += strlen(".entry ");
        size_t len = strcspn(p, "( \t\n");
        for (int k = 0; k < nb_models; k++)
            if (models[k].work && strlen(models[k].entry) == len &&
                !strncmp(models[k].entry, p, len) && p[len] == '(')
                return 1;
    }
    return 0;
}

static sim_pool modules = {.item_size = sizeof(sim_module), .tag = SIM_TAG_MODULE};

/* The slot behind a function handle (a module's, retagged), or NULL. */
static const sim_module *function_get(gcu_function fn)
{
    return sim_pool_get_as(&modules, (uintptr_t)fn, SIM_TAG_FUNCTION);
}

/* The last launch that ran (gctxsim_last_launch); blocks 0 when none did. */
static struct {
    unsigned long long blocks, resident;
} last_launch;

/* A function's slot is not a module. */
static bool module_counts(const void *m) { return !((const sim_module *)m)->parent; }

int sim_modules_live(void) { return sim_pool_live(&modules, module_counts); }

void sim_kernels_reset(void)
{
    sim_pool_clear(&modules);
    last_launch.blocks = 0;
}

gcu_result sim_cuModuleLoadData(gcu_module *module, const void *image)
{
    SIM_BEGIN_ARGS(cuModuleLoadData, !module || !image);
    bool smid = strstr(image, ".entry " SIM_SMID_ENTRY "(") != NULL;
    SIM_FAIL_IF(!smid && !image_modelled(image), GCU_ERROR_NOT_SUPPORTED);
    SIM_CTX(c, sim_ctx_current(&c));
    uintptr_t h;
    sim_module *m = sim_pool_alloc(&modules, &h);
    SIM_FAIL_IF(!m, GCU_ERROR_OUT_OF_MEMORY);
    m->modelled = !smid;
    m->ctx = c;
    *module = (gcu_module)h;
    SIM_END();
}

gcu_result sim_cuModuleUnload(gcu_module module)
{
    SIM_BEGIN(cuModuleUnload);
    sim_module *m = sim_pool_get(&modules, (uintptr_t)module);
    SIM_FAIL_IF(!m || m->parent, GCU_ERROR_INVALID_HANDLE);
    for (uint32_t i = 0; i < modules.count; i++) {
        sim_module *f = sim_pool_at(&modules, i);
        if (f && f->parent == (uintptr_t)module)
            sim_pool_free(f);
    }
    sim_pool_free(m);
    SIM_END();
}

gcu_result sim_cuModuleGetFunction(gcu_function *fn, gcu_module module, const char *name)
{
    SIM_BEGIN_ARGS(cuModuleGetFunction, !fn || !name);
    const sim_module *m = sim_pool_get(&modules, (uintptr_t)module);
    SIM_FAIL_IF(!m || m->parent, GCU_ERROR_INVALID_HANDLE);
    if (!m->modelled) {
        SIM_FAIL_IF(strcmp(name, SIM_SMID_ENTRY) != 0, GCU_ERROR_NOT_FOUND);
        *fn = (gcu_function)sim_handle_retag((uintptr_t)module, SIM_TAG_FUNCTION);
        goto out;
    }
    int k = model_index(name);
    SIM_FAIL_IF(k < 0 || !models[k].work, GCU_ERROR_NOT_FOUND);
    uintptr_t h;
    sim_ctx ctx = m->ctx; /* the allocation may move the pool, and m with it */
    sim_module *f = sim_pool_alloc(&modules, &h);
    SIM_FAIL_IF(!f, GCU_ERROR_OUT_OF_MEMORY);
    *f = (sim_module){.slot = f->slot, .modelled = true, .parent = (uintptr_t)module,
                      .kernel = k, .ctx = ctx};
    *fn = (gcu_function)sim_handle_retag(h, SIM_TAG_FUNCTION);
    SIM_END();
}

/* The time of a modelled kernel's work in nanoseconds on `sms` SMs (greenctx_sim.h's figures,
 * of the H200's order): a model of the shapes, not a measurement. */
#define SIM_LAUNCH_NS 3000.0
#define SIM_BYTES_PER_SM_S 60e9
#define SIM_HBM_BYTES_S 3.9e12
#define SIM_FLOPS_PER_SM_S 0.15e12

static double work_ns(gctxsim_work w, unsigned sms)
{
    double bw = sms * SIM_BYTES_PER_SM_S;
    if (bw > SIM_HBM_BYTES_S)
        bw = SIM_HBM_BYTES_S;
    double t_mem = w.bytes / bw, t_flops = w.flops / (sms * SIM_FLOPS_PER_SM_S);
    return SIM_LAUNCH_NS + 1e9 * (t_mem > t_flops ? t_mem : t_flops);
}

/* Co-residency in Hopper's SM limits: the blocks of `threads` threads and `shmem` bytes that
 * one SM holds at once (0: none fits); a cooperative grid or a grid barrier needs them all. */
#define SIM_SM_SHARED_BYTES (228u * 1024u)
#define SIM_BLOCK_SHARED_MAX (227u * 1024u)
#define SIM_SM_THREADS 2048u
#define SIM_SM_BLOCKS 32u

static unsigned blocks_per_sm(unsigned long long threads, unsigned long long shmem)
{
    if (!threads || threads > 1024 || shmem > SIM_BLOCK_SHARED_MAX)
        return 0;
    unsigned long long by_threads = SIM_SM_THREADS / threads;
    unsigned long long by_shared = shmem ? SIM_SM_SHARED_BYTES / shmem : SIM_SM_BLOCKS;
    unsigned long long n = by_threads < by_shared ? by_threads : by_shared;
    return (unsigned)(n < SIM_SM_BLOCKS ? n : SIM_SM_BLOCKS);
}

/* A launch (sym) of greenctx_smid(flags, spin_ns): block b marks flags[smid] of the b-th SM
 * the stream's context may use, round-robin as a GPU spreads spinning blocks (blocks past the
 * last SM mark nothing new, so they are not simulated). A cooperative grid larger than the
 * context's SMs hold at once is refused, as the driver does. */
static gcu_result launch(int sym, gcu_function fn, unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                         void **params)
{
    SIM_BEGIN_SYM(sym, true);
    const sim_module *m = function_get(fn);
    SIM_FAIL_IF(!m || (m->modelled && (!m->parent || !models[m->kernel].work)),
                GCU_ERROR_INVALID_HANDLE);
    unsigned long long threads = (unsigned long long)bx * by * bz;
    unsigned per_sm = blocks_per_sm(threads, shmem);
    SIM_FAIL_IF(!params || !params[0] || !gx || !gy || !gz || !per_sm, GCU_ERROR_INVALID_VALUE);
    /* A CUfunction belongs to its module's context: a launch needs a stream of that context,
     * and a current context (perhaps stricter than the driver; code that passes works there). */
    SIM_CTX(current, sim_ctx_current(&current));
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    SIM_FAIL_IF(c.dev != m->ctx.dev || c.green != m->ctx.green, GCU_ERROR_INVALID_HANDLE);
    sim_smset sms = sim_ctx_sms(&c);
    unsigned ids[SIM_MAX_SMS];
    unsigned n = sim_set_ids(&sms, ids);
    unsigned long long blocks = (unsigned long long)gx * gy * gz;
    unsigned long long resident = (unsigned long long)n * per_sm;
    SIM_FAIL_IF(sym == SIM_SYM_cuLaunchCooperativeKernel && blocks > resident,
                GCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    if (m->modelled) {
        SIM_FAIL_IF(n == 0, GCU_ERROR_INVALID_VALUE);
        gctxsim_work w = models[m->kernel].work(params, blocks, models[m->kernel].user);
        sim_stream_advance(stream, work_ns(w, n));
    } else {
        gcu_deviceptr flags = *(const gcu_deviceptr *)params[0];
        for (unsigned long long b = 0; b < blocks && b < n; b++) {
            unsigned char *slot = sim_memory_range(flags + (ids[b] & 1023u) * 4u, 4);
            SIM_FAIL_IF(!slot, GCU_ERROR_INVALID_VALUE);
            memcpy(slot, &(uint32_t){1}, 4);
        }
        /* Its blocks spin spin_ns each, in as many waves as the context's SMs need. */
        unsigned long long spin = params[1] ? *(const unsigned long long *)params[1] : 0;
        if (spin && n)
            sim_stream_run(stream, &c, (long long)(spin * ((blocks + resident - 1) / resident)));
    }
    last_launch.blocks = blocks;
    last_launch.resident = resident;
    sim_count_default_stream(sym, stream);
    SIM_END();
}

gcu_result sim_cuLaunchKernel(gcu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                              void **params, void **extra)
{
    (void)extra;
    return launch(SIM_SYM_cuLaunchKernel, fn, gx, gy, gz, bx, by, bz, shmem, stream, params);
}

gcu_result sim_cuLaunchCooperativeKernel(gcu_function fn, unsigned gx, unsigned gy, unsigned gz,
                                         unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                         CUstream stream, void **params)
{
    return launch(SIM_SYM_cuLaunchCooperativeKernel, fn, gx, gy, gz, bx, by, bz, shmem, stream,
                  params);
}

/* Per SM, whatever the context: as the driver answers. */
gcu_result sim_cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, gcu_function fn,
                                                           int block_size, size_t shmem)
{
    SIM_BEGIN(cuOccupancyMaxActiveBlocksPerMultiprocessor);
    SIM_FAIL_IF(!function_get(fn), GCU_ERROR_INVALID_HANDLE);
    SIM_FAIL_IF(!blocks || block_size <= 0 || block_size > 1024, GCU_ERROR_INVALID_VALUE);
    *blocks = (int)blocks_per_sm((unsigned long long)block_size, shmem);
    SIM_END();
}

GCTXSIM_API int gctxsim_last_launch(unsigned long long *blocks, unsigned long long *resident)
{
    sim_lock();
    int made = last_launch.blocks > 0;
    if (made && blocks)
        *blocks = last_launch.blocks;
    if (made && resident)
        *resident = last_launch.resident;
    sim_unlock();
    return made ? 0 : -1;
}

/* Graphs are not simulated; each call is still counted and can be made to fail. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define SIM_NOT_SUPPORTED(name, params)                                                         \
    gcu_result sim_##name params                                                                \
    {                                                                                           \
        SIM_BEGIN(name);                                                                        \
        SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);                                                      \
        SIM_END();                                                                              \
    }
SIM_NOT_SUPPORTED(cuStreamBeginCapture, (CUstream stream, int mode))
SIM_NOT_SUPPORTED(cuStreamEndCapture, (CUstream stream, gcu_graph *graph))
SIM_NOT_SUPPORTED(cuGraphInstantiateWithFlags,
                  (gcu_graph_exec * exec, gcu_graph graph, unsigned long long flags))
SIM_NOT_SUPPORTED(cuGraphLaunch, (gcu_graph_exec exec, CUstream stream))
SIM_NOT_SUPPORTED(cuGraphExecDestroy, (gcu_graph_exec exec))
SIM_NOT_SUPPORTED(cuGraphDestroy, (gcu_graph graph))
#pragma GCC diagnostic pop
