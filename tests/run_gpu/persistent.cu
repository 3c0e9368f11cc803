// persistent [count]: an unmodified cudart program that sizes its grids by the SM count it is
// told, as CUTLASS-style persistent GEMMs, DeepGEMM and MoE kernels with grid barriers do
// (built with the shared and the static cudart: tests/run.cmake). Its kernel waits at a
// software grid barrier, so it completes only when every block of its grid is resident at once;
// a block that waits more than 2 s raises an abort flag and every block leaves, so a grid that
// does not fit fails instead of hanging. One line per case:
//   count: the SM count from cudaGetDeviceProperties, cudaDeviceGetAttribute and the driver's
//          cuDeviceGetAttribute and cuDeviceGetDevResource (by cudaGetDriverEntryPointByVersion,
//          which goes through cuGetProcAddress); they must agree
//   persistent            one block per SM told (200 KB of shared memory: one fits per SM),
//                         an ordinary launch
//   cooperative           the same grid through cudaLaunchCooperativeKernel
//   cooperative_occupancy count x cudaOccupancyMaxActiveBlocksPerMultiprocessor blocks of 256
//                         threads and no shared memory, cooperative
//   cooperative_ex        count blocks through cudaLaunchKernelEx with the cooperative attribute
//   too_large             one block more than count x occupancy, cooperative: the driver must
//                         refuse it (cudaErrorCooperativeLaunchTooLarge), so the count told is
//                         exactly what fits
//   clusters              cudaOccupancyMaxActiveClusters for clusters of 2 (printed, not checked)
// With `count` only the first line. Exit status 0 when every case passed.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#define BIG_SHARED (200 * 1024)
#define TIMEOUT_NS 2000000000ull
#define ROUNDS 3

__device__ __forceinline__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// state[0]: arrivals; state[1]: abort (a block waited past the timeout). shared_bytes: the
// launch's dynamic shared memory, which the block touches so that it is really held.
__global__ void grid_barrier(unsigned *state, unsigned *smids, unsigned shared_bytes)
{
    extern __shared__ unsigned char shared[];
    if (threadIdx.x == 0) {
        unsigned id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        smids[blockIdx.x] = id;
        volatile unsigned *v = state;
        bool leave = false;
        for (unsigned r = 1; r <= ROUNDS && !leave; r++) {
            __threadfence();
            atomicAdd(&state[0], 1u);
            unsigned long long t0 = now_ns();
            while (!leave && v[0] < r * gridDim.x)
                if (v[1] || now_ns() - t0 > TIMEOUT_NS) {
                    atomicExch(&state[1], 1u);
                    leave = true;
                }
        }
    }
    if (threadIdx.x < shared_bytes)
        shared[threadIdx.x] = (unsigned char)threadIdx.x;
    __syncthreads();
}

static int failures;

static bool ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return true;
    printf("FAIL %s: %s\n", what, cudaGetErrorString(e));
    failures++;
    return false;
}

enum launch_kind { ORDINARY, COOPERATIVE, COOPERATIVE_EX };

// One launch of grid_barrier; prints the case's line. expect: the error the launch must give.
static void run_case(const char *name, launch_kind kind, unsigned grid, unsigned threads,
                     size_t shared, cudaError_t expect)
{
    unsigned *state = nullptr, *smids = nullptr;
    if (!ok(cudaMalloc(&state, 2 * sizeof(unsigned)), name) ||
        !ok(cudaMalloc(&smids, grid * sizeof(unsigned)), name) ||
        !ok(cudaMemset(state, 0, 2 * sizeof(unsigned)), name))
        return;
    unsigned shared_bytes = (unsigned)shared;
    void *args[] = {&state, &smids, &shared_bytes};
    auto t0 = std::chrono::steady_clock::now();
    cudaError_t e;
    if (kind == ORDINARY) {
        grid_barrier<<<grid, threads, shared>>>(state, smids, shared_bytes);
        e = cudaGetLastError();
    } else if (kind == COOPERATIVE) {
        e = cudaLaunchCooperativeKernel((void *)grid_barrier, grid, threads, args, shared, 0);
    } else {
        cudaLaunchConfig_t config = {};
        cudaLaunchAttribute attribute = {};
        attribute.id = cudaLaunchAttributeCooperative;
        attribute.val.cooperative = 1;
        config.gridDim = grid;
        config.blockDim = threads;
        config.dynamicSmemBytes = shared;
        config.attrs = &attribute;
        config.numAttrs = 1;
        e = cudaLaunchKernelEx(&config, grid_barrier, state, smids, shared_bytes);
    }
    if (expect != cudaSuccess) {
        if (e == expect) {
            printf("case %s: ok, %u blocks refused as expected (%s)\n", name, grid,
                   cudaGetErrorName(e));
        } else {
            printf("FAIL case %s: %u blocks gave %s, expected %s\n", name, grid,
                   cudaGetErrorName(e), cudaGetErrorName(expect));
            failures++;
        }
        cudaGetLastError();
        cudaFree(state);
        cudaFree(smids);
        return;
    }
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    unsigned host_state[2] = {0, 0};
    std::vector<unsigned> ids(grid);
    if (e == cudaSuccess)
        e = cudaMemcpy(host_state, state, sizeof host_state, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(ids.data(), smids, grid * sizeof(unsigned), cudaMemcpyDeviceToHost);
    cudaFree(state);
    cudaFree(smids);
    if (e != cudaSuccess) {
        printf("FAIL case %s: %u blocks of %u threads, %zu KB shared: %s\n", name, grid, threads,
               shared / 1024, cudaGetErrorName(e));
        failures++;
        return;
    }
    std::set<unsigned> distinct(ids.begin(), ids.end());
    if (host_state[1]) {
        printf("FAIL case %s: %u blocks of %u threads, %zu KB shared: the grid barrier never "
               "completed (not every block was resident; aborted after 2 s)\n",
               name, grid, threads, shared / 1024);
        failures++;
        return;
    }
    printf("case %s: ok, %u blocks of %u threads, %zu KB shared, %d barriers in %.1f ms; %%smid: "
           "%zu distinct, %u to %u\n",
           name, grid, threads, shared / 1024, ROUNDS, ms, distinct.size(), *distinct.begin(),
           *distinct.rbegin());
}

// The driver's own answers, through cuGetProcAddress as cudart resolves the driver.
static int driver_counts(int device, int *attribute, int *resource)
{
    void *get_attribute = nullptr, *get_resource = nullptr;
    cudaDriverEntryPointQueryResult status;
    CUdevice dev;
    if (cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &get_attribute, 12000,
                                         cudaEnableDefault, &status) != cudaSuccess ||
        cudaGetDriverEntryPointByVersion("cuDeviceGetDevResource", &get_resource, 12040,
                                         cudaEnableDefault, &status) != cudaSuccess ||
        !get_attribute || !get_resource)
        return -1;
    void *device_get = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuDeviceGet", &device_get, 12000, cudaEnableDefault,
                                         &status) != cudaSuccess ||
        ((PFN_cuDeviceGet_v2000)device_get)(&dev, device) != CUDA_SUCCESS)
        return -1;
    CUdevResource r;
    memset(&r, 0, sizeof r);
    if (((PFN_cuDeviceGetAttribute_v2000)get_attribute)(
            attribute, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS ||
        ((PFN_cuDeviceGetDevResource_v12040)get_resource)(dev, &r, CU_DEV_RESOURCE_TYPE_SM) !=
            CUDA_SUCCESS)
        return -1;
    *resource = (int)r.sm.smCount;
    return 0;
}

int main(int argc, char **argv)
{
    bool count_only = argc > 1 && strcmp(argv[1], "count") == 0;
    cudaDeviceProp prop;
    int attribute = 0, drv_attribute = -1, drv_resource = -1;
    if (!ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties") ||
        !ok(cudaDeviceGetAttribute(&attribute, cudaDevAttrMultiProcessorCount, 0),
            "cudaDeviceGetAttribute"))
        return 1;
    if (driver_counts(0, &drv_attribute, &drv_resource) != 0) {
        printf("FAIL: the driver's cuDeviceGetAttribute or cuDeviceGetDevResource could not be "
               "reached or failed\n");
        failures++;
    }
    int count = prop.multiProcessorCount;
    printf("count: cudaGetDeviceProperties %d, cudaDeviceGetAttribute %d, cuDeviceGetAttribute "
           "%d, cuDeviceGetDevResource %d\n",
           count, attribute, drv_attribute, drv_resource);
    if (attribute != count || drv_attribute != count || drv_resource != count) {
        printf("FAIL: the SM counts disagree\n");
        failures++;
    }
    if (count_only || failures)
        return failures ? 1 : 0;

    int big = 0, small = 0;
    if (!ok(cudaFuncSetAttribute(grid_barrier, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 BIG_SHARED),
            "cudaFuncSetAttribute") ||
        !ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&big, grid_barrier, 128, BIG_SHARED),
            "occupancy") ||
        !ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&small, grid_barrier, 256, 0),
            "occupancy"))
        return 1;
    run_case("persistent", ORDINARY, (unsigned)count, 128, BIG_SHARED, cudaSuccess);
    run_case("cooperative", COOPERATIVE, (unsigned)(count * big), 128, BIG_SHARED, cudaSuccess);
    run_case("cooperative_occupancy", COOPERATIVE, (unsigned)(count * small), 256, 0,
             cudaSuccess);
    run_case("cooperative_ex", COOPERATIVE_EX, (unsigned)(count * big), 128, BIG_SHARED,
             cudaSuccess);
    run_case("too_large", COOPERATIVE, (unsigned)(count * big + 1), 128, BIG_SHARED,
             cudaErrorCooperativeLaunchTooLarge);

    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 2;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.gridDim = (unsigned)(count - count % 2);
    config.blockDim = 128;
    config.dynamicSmemBytes = BIG_SHARED;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = -1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, grid_barrier, &config);
    printf("clusters: cudaOccupancyMaxActiveClusters (2 blocks of 200 KB each) %d (%s)\n",
           clusters, cudaGetErrorName(e));
    cudaGetLastError();
    return failures ? 1 : 0;
}
