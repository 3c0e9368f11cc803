/* bench elastic's kernels (bench/kernels/elastic_kernels.cu) as a cost model for the simulated
 * driver (sim/greenctx_sim.h): what one launch of each moves and computes, from its parameters.
 * Registered only where the driver the library loaded is the simulator; a GPU runs them. */
#include <dlfcn.h>

#include "bench_elastic.h"
#include "greenctx_sim.h"

/* In the order of the site's functions (fill, gemv, attn, gemm: bench_elastic_work.c). */
const char *const el_kernel_names[EL_NB_KERNELS] = {"gce_fill_bf16", "gce_gemv",
                                                    "gce_decode_attn", "gce_gemm"};

static double u64(void **params, int i) { return (double)*(const unsigned long long *)params[i]; }
static double u32(void **params, int i) { return (double)*(const unsigned *)params[i]; }

/* (buf, n, seed) */
static gctxsim_work fill_work(void **params, unsigned long long blocks, void *user)
{
    (void)blocks, (void)user;
    return (gctxsim_work){.bytes = 2 * u64(params, 1)};
}

/* (W, x, y, rows, cols, batch): W read once per 32 rows of the batch */
static gctxsim_work gemv_work(void **params, unsigned long long blocks, void *user)
{
    (void)blocks, (void)user;
    double rows = u32(params, 3), cols = u32(params, 4), batch = u32(params, 5);
    double passes = (double)(((unsigned)batch + 31) / 32);
    return (gctxsim_work){.bytes = rows * cols * 2 * passes + batch * (cols * 2 + rows * 4),
                          .flops = 2 * rows * cols * batch};
}

/* (q, k, v, part, ctx, kv_heads, splits): a grid of batch x kv_heads x splits */
static gctxsim_work attn_work(void **params, unsigned long long blocks, void *user)
{
    (void)user;
    double ctx = u32(params, 4), heads = (double)blocks / u32(params, 6);
    return (gctxsim_work){.bytes = heads * ctx * 128 * 2 * 2, .flops = heads * 4 * ctx * 128 * 4};
}

/* (A, W, C, M, N, K) */
static gctxsim_work gemm_work(void **params, unsigned long long blocks, void *user)
{
    (void)blocks, (void)user;
    double m = u32(params, 3), n = u32(params, 4), k = u32(params, 5);
    return (gctxsim_work){.bytes = (m * k + n * k) * 2 + m * n * 4, .flops = 2 * m * n * k};
}

void el_register_sim_models(void)
{
    static const gctxsim_work_fn work[EL_NB_KERNELS] = {fill_work, gemv_work, attn_work,
                                                        gemm_work};
    const char *path = gctx_driver_path();
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (!lib)
        return;
    int (*model)(const char *, gctxsim_work_fn, void *);
    *(void **)&model = dlsym(lib, "gctxsim_kernel_model");
    for (int i = 0; model && i < EL_NB_KERNELS; i++)
        model(el_kernel_names[i], work[i], NULL);
    dlclose(lib); /* the library keeps its own reference */
}
