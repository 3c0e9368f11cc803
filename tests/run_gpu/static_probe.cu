// An unmodified cudart program, linked with the static runtime (nvcc -cudart static), for
// `greenctx run`: kernels on the default stream, its own stream, a graph, a new thread, after
// cudaSetDevice and from 4 threads at once. Prints one JSON line per case with every block's
// SM id; `static_probe launch` prints the host time of an empty kernel launch instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define BLOCKS 528

__global__ void smid(int *out)
{
    if (threadIdx.x != 0)
        return;
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    out[blockIdx.x] = (int)id;
    long long t0 = clock64();
    while (clock64() - t0 < 40000) {
    }
}

__global__ void empty() {}

static std::mutex print_lock;

static void observe(const char *name, cudaStream_t s, bool graph)
{
    int *out = nullptr;
    std::vector<int> host(BLOCKS, -1);
    cudaError_t e = cudaMalloc(&out, BLOCKS * sizeof(int));
    if (e == cudaSuccess)
        e = cudaMemset(out, 0xff, BLOCKS * sizeof(int));
    if (e == cudaSuccess && graph) {
        cudaGraph_t g;
        cudaGraphExec_t exec;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        smid<<<BLOCKS, 32, 0, s>>>(out);
        cudaStreamEndCapture(s, &g);
        e = cudaGraphInstantiate(&exec, g, 0);
        if (e == cudaSuccess)
            e = cudaGraphLaunch(exec, s);
    } else if (e == cudaSuccess) {
        smid<<<BLOCKS, 32, 0, s>>>(out);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e == cudaSuccess)
        e = cudaMemcpy(host.data(), out, BLOCKS * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(out);
    std::lock_guard<std::mutex> lock(print_lock);
    std::printf("{\"case\":\"%s\",\"error\":\"%s\",\"samples\":[", name, cudaGetErrorName(e));
    for (int i = 0; i < BLOCKS; i++)
        std::printf("%s%d", i ? "," : "", host[i]);
    std::printf("]}\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !std::strcmp(argv[1], "launch")) {
        double best = 1e9;
        cudaFree(0);
        for (int rep = 0; rep < 5; rep++) {
            cudaDeviceSynchronize();
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < 50000; i++)
                empty<<<1, 1>>>();
            auto t1 = std::chrono::steady_clock::now();
            cudaDeviceSynchronize();
            best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / 50000);
        }
        std::printf("{\"us_per_launch\":%.4f}\n", best);
        return 0;
    }
    observe("main thread", 0, false);
    cudaStream_t s;
    cudaStreamCreate(&s);
    observe("own stream", s, false);
    observe("graph", s, true);
    std::thread([] { observe("new thread", 0, false); }).join();
    cudaSetDevice(0);
    observe("after cudaSetDevice", 0, false);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; i++)
        threads.emplace_back([] { observe("one of 4 threads", 0, false); });
    for (auto &t : threads)
        t.join();
    cudaError_t reset = cudaDeviceReset();
    std::printf("{\"case\":\"cudaDeviceReset\",\"error\":\"%s\",\"samples\":[]}\n",
                cudaGetErrorName(reset));
    return 0;
}
