/*
 * A test double of libnccl.so.2 for `greenctx bench overlap` on the simulated driver (whose
 * device memory is host memory): the entry points bench/overlap_libs.h resolves, doing the
 * all-reduce's sum on the host when a group ends. Like the real one it checks the config it is
 * given and the device current at init (the primary context of the rank's device, as the
 * bench makes current), and leaves the last rank's primary context current after an init
 * (nvidia/nccl #1736), so the bench's save/restore has something to restore.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"

enum { SUCCESS = 0, INVALID_ARGUMENT = 4, INVALID_USAGE = 5, MAX_OPS = 64 };

typedef struct comm {
    int rank, nranks, device, max_ctas;
} comm;

typedef struct config { /* the first fields of ncclConfig_t (nccl.h) */
    size_t size;
    unsigned magic, version;
    int blocking, cga_cluster_size, min_ctas, max_ctas;
    const char *net_name;
} config;

static struct op {
    const float *send;
    float *recv;
    size_t count;
} ops[MAX_OPS];
static int nb_ops, depth, last_init_device = -1;

/* The simulated driver, reached as the bench reaches it: through its cuGetProcAddress. */
static void *driver(const char *name)
{
    const char *path = getenv("GREENCTX_CUDA_LIBRARY");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    gcu_pfn_cuGetProcAddress get = lib ? (gcu_pfn_cuGetProcAddress)dlsym(lib, "cuGetProcAddress_v2")
                                       : NULL;
    void *fn = NULL;
    if (get)
        get(name, &fn, 12000, 0, NULL);
    return fn;
}

static CUcontext primary_of(int device)
{
    gcu_pfn_cuDevicePrimaryCtxRetain retain = driver("cuDevicePrimaryCtxRetain");
    gcu_pfn_cuDevicePrimaryCtxRelease release = driver("cuDevicePrimaryCtxRelease");
    CUcontext ctx = NULL;
    if (retain && release && retain(&ctx, device) == GCU_SUCCESS)
        release(device);
    return ctx;
}

int ncclGetVersion(int *version)
{
    *version = 22809;
    return SUCCESS;
}

const char *ncclGetErrorString(int result)
{
    return result == SUCCESS ? "no error" : "fake NCCL: invalid argument or usage";
}

int ncclGetUniqueId(void *id)
{
    memset(id, 0, 128);
    return SUCCESS;
}

typedef struct unique_id { /* ncclUniqueId: passed by value */
    char internal[128];
} unique_id;

int ncclCommInitRankConfig(comm **out, int nranks, unique_id id, int rank, config *c)
{
    (void)id;
    if (!c || c->magic != 0xcafebeefu || c->version < 21700 || c->size < sizeof *c ||
        (c->blocking != 0 && c->blocking != 1) ||
        (c->max_ctas != INT_MIN && (c->max_ctas < 1 || c->max_ctas > 64)))
        return INVALID_ARGUMENT;
    gcu_pfn_cuCtxGetCurrent get_current = driver("cuCtxGetCurrent");
    CUcontext current = NULL;
    if (!get_current || get_current(&current) != GCU_SUCCESS || current != primary_of(rank))
        return INVALID_USAGE; /* the bench makes the rank's device current first */
    comm *cm = calloc(1, sizeof *cm);
    if (!cm)
        return INVALID_ARGUMENT;
    *cm = (comm){rank, nranks, rank, c->max_ctas};
    last_init_device = rank;
    *out = cm;
    return SUCCESS;
}

int ncclCommDestroy(comm *cm)
{
    free(cm);
    return SUCCESS;
}

int ncclGroupStart(void)
{
    depth++;
    return SUCCESS;
}

/* Every all-reduce of the group is one collective: each output gets the sum of the inputs. */
int ncclGroupEnd(void)
{
    if (depth == 0)
        return INVALID_USAGE;
    if (--depth)
        return SUCCESS;
    for (int o = 0; o < nb_ops; o++)
        for (size_t i = 0; i < ops[o].count; i++) {
            float sum = 0;
            for (int k = 0; k < nb_ops; k++)
                sum += ops[k].send[i];
            ops[o].recv[i] = sum;
        }
    nb_ops = 0;
    if (last_init_device >= 0) { /* what NCCL's init leaves current */
        gcu_pfn_cuCtxSetCurrent set_current = driver("cuCtxSetCurrent");
        if (set_current)
            set_current(primary_of(last_init_device));
        last_init_device = -1;
    }
    return SUCCESS;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, comm *cm,
                  CUstream stream)
{
    (void)stream;
    if (depth == 0 || nb_ops == MAX_OPS || datatype != 7 /* float32 */ || op != 0 /* sum */ ||
        !cm || (nb_ops && ops[0].count != count))
        return INVALID_USAGE;
    ops[nb_ops++] = (struct op){send, recv, count};
    return SUCCESS;
}
