// spin START_NS KERNELS SPIN_US: an unmodified cudart program for the tenants' GPU test (two
// `greenctx run` tenants of at least 64 SMs under MPS). After its start-up it waits until the wall-clock
// instant START_NS (0: now), so that two tenants start together, then launches KERNELS
// kernels of 64 x 8 blocks of 256 threads, every thread spinning SPIN_US: on 64 SMs of its
// own each kernel is one wave of SPIN_US; on SMs shared with another tenant, two. Prints
// {"ms": wall time of the kernels, "sms": the SM count cudart reports}.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

__global__ void __launch_bounds__(256, 8) spin(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
}

static long long wall_ns()
{
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: spin START_NS KERNELS SPIN_US\n");
        return 2;
    }
    long long start = atoll(argv[1]);
    int kernels = atoi(argv[2]);
    unsigned long long ns = strtoull(argv[3], nullptr, 10) * 1000ull;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    spin<<<1, 256>>>(0); // start-up: the context and the module, before the clock
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "spin: %s\n", cudaGetErrorString(e));
        return 1;
    }
    while (wall_ns() < start) {
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kernels; k++)
        spin<<<64 * 8, 256>>>(ns);
    e = cudaDeviceSynchronize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (e != cudaSuccess) {
        fprintf(stderr, "spin: %s\n", cudaGetErrorString(e));
        return 1;
    }
    printf("{\"ms\": %.3f, \"sms\": %d}\n", ms, sms);
    return 0;
}
