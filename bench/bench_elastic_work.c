/* bench elastic's workloads: the model's buffers, its kernels in each context, and one decode
 * step or one prefill unit as launches. Activations are not chained from kernel to kernel:
 * every kernel reads inputs filled once; the shapes, and so the bytes and FLOPs, are the
 * model's, which is what the SMs' share decides. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench_elastic.h"
#include "bench_kernels.h"

#define ATTN_BLOCKS_PER_SM 4u
#define ATTN_MIN_POSITIONS 64u
#define GEMV_WARPS_PER_BLOCK (BENCH_BLOCK / 32u)
#define GEMM_TILE 64u
#define FILL_SEED 0x5eed0e1au

const unsigned el_matrix_rows[EL_NB_MATRICES] = {EL_HIDDEN + 2 * EL_KV_HEADS * EL_HEAD_DIM,
                                                 EL_HIDDEN, 2 * EL_FFN, EL_HIDDEN};
const unsigned el_matrix_cols[EL_NB_MATRICES] = {EL_HIDDEN, EL_HIDDEN, EL_HIDDEN, EL_FFN};

#define SITE_EVENTS (4 + 2 * EL_THR_SLOTS)

/* Every event of a site, for making and destroying them all. */
static unsigned site_events(el_site *s, CUevent **out)
{
    unsigned n = 0;
    out[n++] = &s->lat_start;
    out[n++] = &s->lat_end;
    out[n++] = &s->lat_mark;
    out[n++] = &s->thr_mark;
    for (unsigned i = 0; i < EL_THR_SLOTS; i++) {
        out[n++] = &s->thr_start[i];
        out[n++] = &s->thr_end[i];
    }
    return n;
}

int el_blas_open(const bench_env *env, el_gemm_kind kind, el_blas *blas)
{
    memset(blas, 0, sizeof *blas);
    if (kind == EL_GEMM_OWN)
        return 0;
    int rc = -1;
    if (env->simulated && kind == EL_GEMM_AUTO) /* --gemm cublas: a test double there */
        snprintf(blas->why, sizeof blas->why, "the simulated driver runs no cuBLAS");
    else
        rc = olap_cublas_load(&blas->libs, blas->why, sizeof blas->why);
    if (rc == 0 && bench_push(env, env->primary) == 0) { /* a cuBLAS that works, once */
        olap_cublas_handle check = NULL;
        olap_cublas_status st = blas->libs.cublasCreate_v2(&check);
        if (st == OLAP_CUBLAS_SUCCESS)
            blas->libs.cublasDestroy_v2(check);
        bench_pop(env);
        if (st != OLAP_CUBLAS_SUCCESS) {
            snprintf(blas->why, sizeof blas->why, "cublasCreate: %s",
                     blas->libs.cublasGetStatusString(st));
            rc = -1;
        }
    }
    if (rc && kind == EL_GEMM_CUBLAS) {
        fprintf(stderr, "greenctx bench: --gemm cublas: %s\n", blas->why);
        return -1;
    }
    /* A fallback is said where it happens too, not only in the report's GEMM line: its
     * figures are the bench's own kernel's, not cuBLAS's. */
    if (rc)
        fprintf(stderr, "greenctx bench: cuBLAS not used (%s): the GEMMs run on the bench's own "
                        "kernel, whose figures are not cuBLAS's (--gemm cublas refuses instead)\n",
                blas->why);
    blas->used = rc == 0;
    return 0;
}

void el_sites_close_blas(const bench_env *env, el_sites *sites)
{
    for (unsigned i = 0; i < sites->count; i++) {
        el_site *s = &sites->site[i];
        olap_cublas_handle handles[] = {s->handle, s->decode_handle};
        if (!s->handle || bench_push(env, s->ctx))
            continue;
        for (size_t h = 0; h < sizeof handles / sizeof handles[0]; h++)
            if (handles[h]) {
                s->blas->libs.cublasSetStream_v2(handles[h], NULL);
                s->blas->libs.cublasDestroy_v2(handles[h]);
            }
        bench_pop(env);
        s->handle = s->decode_handle = NULL;
    }
}

const char *el_blas_name(const el_blas *blas, char *buf, size_t size)
{
    if (blas->used)
        snprintf(buf, size, "cuBLAS (%s): cublasGemmEx, bf16 in, fp32 out and accumulate, "
                 "for prefill's GEMMs and decode's GEMVs", blas->libs.cublas_path);
    else
        snprintf(buf, size, "the bench's own bf16 tiled GEMM (CUDA cores, fp32 accumulate)%s%s",
                 blas->why[0] ? "; cuBLAS not used: " : "", blas->why);
    return buf;
}

el_site *el_site_get(const bench_env *env, el_sites *sites, CUcontext ctx, unsigned sms)
{
    for (unsigned i = 0; i < sites->count; i++)
        if (sites->site[i].ctx == ctx)
            return &sites->site[i];
    if (sites->count == EL_MAX_SITES) {
        fprintf(stderr, "greenctx bench: elastic: more than %u contexts\n", EL_MAX_SITES);
        return NULL;
    }
    el_site *s = &sites->site[sites->count];
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->sms = sms;
    s->blas = sites->blas;
    if (bench_push(env, ctx))
        return NULL;
    const raw_driver *drv = env->drv;
    el_register_sim_models();
    int rc = bench_cu(drv->cuModuleLoadData(&s->module, bench_elastic_ptx),
                      "cuModuleLoadData of bench elastic's kernels (PTX)");
    gcu_function *fns[EL_NB_KERNELS] = {&s->fill, &s->gemv, &s->attn, &s->gemm};
    for (int i = 0; i < EL_NB_KERNELS && rc == 0; i++)
        rc = bench_cu(drv->cuModuleGetFunction(fns[i], s->module, el_kernel_names[i]),
                      el_kernel_names[i]);
    CUevent *events[SITE_EVENTS];
    unsigned n = site_events(s, events);
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = bench_cu(drv->cuEventCreate(events[i], GCU_EVENT_DEFAULT), "cuEventCreate");
    olap_cublas_handle *handles[] = {&s->handle, &s->decode_handle};
    size_t nb_handles = s->blas && s->blas->used ? sizeof handles / sizeof handles[0] : 0;
    for (size_t i = 0; i < nb_handles && rc == 0; i++) {
        olap_cublas_status st = s->blas->libs.cublasCreate_v2(handles[i]);
        if (st != OLAP_CUBLAS_SUCCESS) {
            *handles[i] = NULL;
            fprintf(stderr, "greenctx bench: cublasCreate in a %u-SM context: %s\n", sms,
                    s->blas->libs.cublasGetStatusString(st));
            rc = -1;
        }
    }
    bench_pop(env);
    sites->count++; /* closed with the others, even half made */
    return rc ? NULL : s;
}

void el_sites_close(const bench_env *env, el_sites *sites)
{
    const raw_driver *drv = env->drv;
    for (unsigned i = 0; i < sites->count; i++) {
        el_site *s = &sites->site[i];
        if (bench_push(env, s->ctx))
            continue;
        CUevent *events[SITE_EVENTS];
        unsigned n = site_events(s, events);
        for (unsigned e = 0; e < n; e++)
            if (*events[e])
                drv->cuEventDestroy(*events[e]);
        if (s->module)
            drv->cuModuleUnload(s->module);
        bench_pop(env);
    }
    sites->count = 0;
}

unsigned el_attn_splits(const el_shape *shape, unsigned batch)
{
    unsigned rows = batch * EL_KV_HEADS;
    unsigned splits = (ATTN_BLOCKS_PER_SM * shape->device_sms + rows - 1) / rows;
    unsigned most = shape->context / ATTN_MIN_POSITIONS;
    if (splits > most)
        splits = most;
    return splits ? splits : 1;
}

static double kv_bytes(const el_shape *shape, unsigned batch)
{
    return 2.0 * batch * EL_KV_HEADS * shape->context * EL_HEAD_DIM * 2;
}

static double el_decode_weight_bytes(const el_shape *shape)
{
    double bytes = 0;
    for (unsigned m = 0; m < EL_NB_MATRICES; m++)
        bytes += (double)el_matrix_rows[m] * el_matrix_cols[m] * 2;
    return bytes * shape->layers;
}

double el_decode_bytes(const el_shape *shape, unsigned batch)
{
    return el_decode_weight_bytes(shape) + kv_bytes(shape, batch) * shape->layers;
}

double el_prefill_flops(const el_shape *shape, unsigned tokens)
{
    (void)shape;
    double flops = 0;
    for (unsigned m = 0; m < EL_NB_MATRICES; m++)
        flops += 2.0 * tokens * el_matrix_rows[m] * el_matrix_cols[m];
    return flops;
}

static double el_prefill_bytes(const el_shape *shape, unsigned tokens)
{
    (void)shape;
    double bytes = 0;
    for (unsigned m = 0; m < EL_NB_MATRICES; m++)
        bytes += (double)el_matrix_rows[m] * el_matrix_cols[m] * 2 +
                 (double)tokens * (el_matrix_cols[m] * 2 + el_matrix_rows[m] * 4);
    return bytes;
}

void el_buffer_sizes(const el_shape *shape, el_sizes *z)
{
    size_t peak = shape->peak_batch, tokens = 2 * (size_t)shape->chunk; /* chunked goes to 2x */
    size_t max_grid = 0;
    for (unsigned b = 1; b <= shape->peak_batch; b++) {
        size_t g = (size_t)b * EL_KV_HEADS * el_attn_splits(shape, b);
        max_grid = g > max_grid ? g : max_grid;
    }
    for (unsigned m = 0; m < EL_NB_MATRICES; m++)
        z->weight[m] = (size_t)el_matrix_rows[m] * el_matrix_cols[m] * 2;
    z->kv = peak * EL_KV_HEADS * shape->context * EL_HEAD_DIM * 2;
    z->x = peak * EL_FFN * 2;                          /* bf16 [batch][widest cols] */
    z->q = peak * EL_Q_HEADS * EL_HEAD_DIM * 2;        /* bf16 [batch][q heads][128] */
    z->y = peak * 2 * EL_FFN * 4;                      /* fp32 [batch][widest rows] */
    z->part = max_grid * 4 * (EL_HEAD_DIM + 2) * 4;    /* fp32 [block][4 heads][130] */
    z->a = tokens * EL_FFN * 2;                        /* bf16 [tokens][widest cols] */
    z->c = tokens * 2 * EL_FFN * 4;                    /* fp32 [tokens][widest rows] */
}

/* bytes of bf16 values, filled */
static int alloc_filled(const bench_env *env, const el_site *site, CUstream stream,
                        gcu_deviceptr *ptr, size_t bytes, unsigned seed, const char *what)
{
    if (bench_alloc(env, ptr, bytes, what))
        return -1;
    unsigned long long n = bytes / 2;
    void *params[] = {ptr, &n, &seed};
    return bench_launch(env, site->fill, env->sm_count * BENCH_FULL_BLOCKS_SM, stream, params,
                        "launching gce_fill_bf16");
}

int el_buffers_make(const bench_env *env, const el_shape *shape, const el_site *site,
                    CUstream stream, el_buffers *buf)
{
    memset(buf, 0, sizeof *buf);
    unsigned seed = FILL_SEED;
    el_sizes z;
    el_buffer_sizes(shape, &z);
    /* the site's kernels launch with its context current (the allocations push the primary's) */
    if (bench_push(env, site->ctx))
        return -1;
    int rc = 0;
    for (unsigned l = 0; l < shape->layers && rc == 0; l++) {
        for (unsigned m = 0; m < EL_NB_MATRICES && rc == 0; m++)
            rc = alloc_filled(env, site, stream, &buf->w[l][m], z.weight[m], seed++,
                              "the weights");
        rc = rc ? rc : alloc_filled(env, site, stream, &buf->k[l], z.kv, seed++, "the K cache");
        rc = rc ? rc : alloc_filled(env, site, stream, &buf->v[l], z.kv, seed++, "the V cache");
    }
    if (rc == 0)
        rc = alloc_filled(env, site, stream, &buf->x, z.x, seed++, "decode's activations") ||
             alloc_filled(env, site, stream, &buf->q, z.q, seed++, "decode's queries") ||
             bench_alloc(env, &buf->y, z.y, "decode's outputs") ||
             bench_alloc(env, &buf->part, z.part, "the attention's partials") ||
             alloc_filled(env, site, stream, &buf->a, z.a, seed++, "prefill's tokens") ||
             bench_alloc(env, &buf->c, z.c, "prefill's outputs");
    if (rc == 0)
        rc = bench_cu(env->drv->cuStreamSynchronize(stream), "filling bench elastic's buffers");
    bench_pop(env);
    if (rc)
        el_buffers_free(env, buf);
    return rc ? -1 : 0;
}

void el_buffers_free(const bench_env *env, el_buffers *buf)
{
    for (unsigned l = 0; l < EL_MAX_LAYERS; l++) {
        for (unsigned m = 0; m < EL_NB_MATRICES; m++)
            bench_free(env, &buf->w[l][m]);
        bench_free(env, &buf->k[l]);
        bench_free(env, &buf->v[l]);
    }
    gcu_deviceptr *rest[] = {&buf->x, &buf->q, &buf->y, &buf->part, &buf->a, &buf->c};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        bench_free(env, rest[i]);
}

/* C = A W^T, row-major, in cuBLAS's column-major terms: C^T (rows x tokens, ld rows) =
 * op_T(W') A', where W' is W read column-major (cols x rows, ld cols) and A' is A read
 * column-major (cols x tokens, ld cols). */
static int blas_gemm(const bench_env *env, const el_site *site, olap_cublas_handle h,
                     CUstream stream, gcu_deviceptr a, gcu_deviceptr w, gcu_deviceptr c,
                     unsigned tokens, unsigned rows, unsigned cols)
{
    static const float one = 1.0f, zero = 0.0f;
    const olap_libs *L = &site->blas->libs;
    if (bench_push(env, site->ctx))
        return -1;
    olap_cublas_status st = L->cublasSetStream_v2(h, stream);
    if (st == OLAP_CUBLAS_SUCCESS)
        st = L->cublasSetSmCountTarget(h, (int)site->sms);
    if (st == OLAP_CUBLAS_SUCCESS)
        st = L->cublasGemmEx(h, OLAP_CUBLAS_OP_T, OLAP_CUBLAS_OP_N, (int)rows, (int)tokens,
                             (int)cols, &one, (void *)(uintptr_t)w, OLAP_CUDA_R_16BF, (int)cols,
                             (void *)(uintptr_t)a, OLAP_CUDA_R_16BF, (int)cols, &zero,
                             (void *)(uintptr_t)c, OLAP_CUDA_R_32F, (int)rows,
                             OLAP_CUBLAS_COMPUTE_32F, OLAP_CUBLAS_GEMM_DEFAULT);
    if (st == OLAP_CUBLAS_SUCCESS) {
        bench_pop(env);
        return 0;
    }
    fprintf(stderr, "greenctx bench: cublasGemmEx (%u x %u x %u) in a %u-SM context: %s\n",
            tokens, rows, cols, site->sms, L->cublasGetStatusString(st));
    /* A launch refused now, or an earlier kernel's fault that cuBLAS only passes on. */
    bench_cu(env->drv->cuStreamSynchronize(stream), "the stream after cuBLAS's failure");
    bench_pop(env);
    return -1;
}

/* y = x W^T for the batch: through cuBLAS when it is used (tensor cores: as memory bound as
 * serving's decode is; the own kernel's CUDA-core reads of x bind it at the peak batch), else
 * the own GEMV. */
static int decode_gemv(const bench_env *env, const el_site *site, CUstream stream,
                       gcu_deviceptr w, gcu_deviceptr x, gcu_deviceptr y, unsigned rows,
                       unsigned cols, unsigned batch)
{
    if (site->decode_handle)
        return blas_gemm(env, site, site->decode_handle, stream, x, w, y, batch, rows,
                         cols);
    void *params[] = {(void *)&w, (void *)&x, (void *)&y, &rows, &cols, &batch};
    return bench_launch(env, site->gemv, rows / GEMV_WARPS_PER_BLOCK, stream, params,
                        "launching gce_gemv");
}

int el_decode_step(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                   const el_site *site, CUstream stream, unsigned batch)
{
    unsigned ctx = shape->context, kv_heads = EL_KV_HEADS, splits = el_attn_splits(shape, batch);
    for (unsigned l = 0; l < shape->layers; l++)
        for (unsigned m = 0; m < EL_NB_MATRICES; m++) {
            unsigned rows = el_matrix_rows[m], cols = el_matrix_cols[m];
            if (decode_gemv(env, site, stream, buf->w[l][m], buf->x, buf->y, rows, cols, batch))
                return -1;
            if (m != 0)
                continue;
            void *attn[] = {(void *)&buf->q, (void *)&buf->k[l], (void *)&buf->v[l],
                            (void *)&buf->part, &ctx, &kv_heads, &splits};
            if (bench_launch(env, site->attn, batch * kv_heads * splits, stream, attn,
                             "launching gce_decode_attn"))
                return -1;
        }
    return 0;
}

int el_prefill_gemm(const bench_env *env, const el_buffers *buf, const el_site *site,
                    CUstream stream, unsigned layer, unsigned matrix, unsigned tokens)
{
    unsigned rows = el_matrix_rows[matrix], cols = el_matrix_cols[matrix];
    if (site->handle)
        return blas_gemm(env, site, site->handle, stream, buf->a, buf->w[layer][matrix],
                         buf->c, tokens, rows, cols);
    unsigned grid = ((tokens + GEMM_TILE - 1) / GEMM_TILE) * ((rows + GEMM_TILE - 1) / GEMM_TILE);
    void *params[] = {(void *)&buf->a, (void *)&buf->w[layer][matrix], (void *)&buf->c, &tokens,
                      &rows, &cols};
    return bench_launch(env, site->gemm, grid, stream, params, "launching gce_gemm");
}

int el_prefill_unit(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                    const el_site *site, CUstream stream, unsigned layer, unsigned tokens)
{
    (void)shape;
    for (unsigned m = 0; m < EL_NB_MATRICES; m++)
        if (el_prefill_gemm(env, buf, site, stream, layer, m, tokens))
            return -1;
    return 0;
}

int el_prefill_fn(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                  const el_site *site, CUstream stream, unsigned tokens)
{
    return el_prefill_unit(env, shape, buf, site, stream, 0, tokens);
}

double el_step_latency_ms(double event_ms, double host_ms)
{
    return host_ms > event_ms ? host_ms : event_ms;
}

int el_time_work(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                 const el_site *site, CUstream stream, el_work_fn fn, unsigned arg,
                 unsigned reps, double *median_s)
{
    enum { WARMUPS = 2, MAX_REPS = 64 };
    double ms[MAX_REPS];
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (bench_push(env, site->ctx))
        return -1;
    const raw_driver *drv = env->drv;
    int rc = 0;
    for (unsigned i = 0; i < WARMUPS + reps && rc == 0; i++) {
        float elapsed = 0;
        double t0 = bench_now_us();
        rc = bench_cu(drv->cuEventRecord(site->lat_start, stream), "cuEventRecord") ||
             fn(env, shape, buf, site, stream, arg) ||
             bench_cu(drv->cuEventRecord(site->lat_end, stream), "cuEventRecord") ||
             bench_cu(drv->cuEventSynchronize(site->lat_end), "waiting for bench elastic's work") ||
             bench_cu(drv->cuEventElapsedTime(&elapsed, site->lat_start, site->lat_end),
                      "cuEventElapsedTime");
        if (i >= WARMUPS) /* as a step's latency is taken */
            ms[i - WARMUPS] = el_step_latency_ms(elapsed, (bench_now_us() - t0) * 1e-3);
    }
    bench_pop(env);
    if (rc == 0)
        *median_s = bench_median(ms, reps) * 1e-3;
    return rc ? -1 : 0;
}

int el_controller_make(const el_shape *shape, double target_ms, const el_prior prior[2],
                       const unsigned *rows, unsigned nb_rows, unsigned device_sms, double hbm,
                       int disjoint, gctx_controller **ctl)
{
    gctx_workload w[2] = {GCTX_WORKLOAD_INIT, GCTX_WORKLOAD_INIT};
    for (int k = 0; k < 2; k++) {
        w[k].nb_points = prior[k].n;
        w[k].prior_sms = prior[k].sms;
        w[k].prior_step_s = prior[k].s;
    }
    w[0].kind = GCTX_WORKLOAD_LATENCY;
    w[0].target_s = target_ms * 1e-3;
    w[0].ref_demand = shape->peak_batch;
    /* the KV cache's share grows with the batch; the weights' does not */
    double peak_bytes = el_decode_bytes(shape, shape->peak_batch);
    w[0].demand_weight = 1.0 - el_decode_weight_bytes(shape) / peak_bytes;
    w[0].bytes_per_step = peak_bytes;
    w[1].kind = GCTX_WORKLOAD_THROUGHPUT;
    w[1].bytes_per_step = el_prefill_bytes(shape, shape->chunk);
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.device_sms = device_sms;
    o.hbm_bytes_per_s = hbm;
    o.disjoint = disjoint;
    return bench_gctx(gctx_controller_create(w, 2, rows, nb_rows, &o, ctl),
                      "gctx_controller_create");
}
