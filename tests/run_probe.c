/*
 * run_probe CASE [ARGS]: an unmodified "program" for `greenctx run`'s tests. It knows nothing
 * of greenctx: it finds the driver the way cudart does (dlopen of the driver, one dlsym of
 * cuGetProcAddress_v2, every other entry point through it), binds the primary context on
 * threads that never retained it, and uses new threads, streams and (on a GPU) a graph. Where its work would run
 * is read from the simulated driver (gctxsim_stream_sm_ids) or, on a GPU, from a %smid kernel.
 *
 *   confined N     every observation sees exactly N SMs, and the same ones
 *   direct N       the same through the exported names (a program linked with -lcuda)
 *   refusals       prints what each refused call returned ("cuCtxCreate -> 800")
 *   foreign_bind   binds a context no device has and prints the result
 *   second_driver PATH   looks cuGetProcAddress_v2 up in another copy of the driver
 *   spawn CASE...  runs itself with CASE... as a child and returns its exit status (without
 *                  using CUDA itself: a wrapper, as far as greenctx run is concerned)
 *   parent N HOW CASE...   uses CUDA (every observation N SMs), then starts itself with CASE...
 *                  through HOW: exec (replaces itself), execv, execve and posix_spawn (with the
 *                  environment it started with, as Python's os.environ), vfork, system (sh -c)
 *                  or bash (bash -c); returns its own failure, else the child's exit status
 *   no_part        uses CUDA, then ends with _exit (no atexit handlers: no report part)
 *   sleep S        uses CUDA, then sleeps S seconds (to be killed)
 *   sigchld_ignored CMD...   runs CMD with SIGCHLD ignored (as daemons and CI runners leave it)
 *   fault          after its first bind, a fault (700) on the next call of each wrapped entry
 *                  point (simulated driver only); prints what each returned
 *   noop           loads the driver and retains the primary context, nothing else
 *   claim_fd       prints whether a claim file's descriptor came with it (before any CUDA)
 *   env NAME       prints NAME=its value (or NAME unset): what the program was given
 *   hold DIR       binds the primary context (so the preload confines the program), writes
 *                  DIR/ready, then waits for DIR/go (at most 60 s): a tenant that stays while
 *                  the test looks at the registry
 *   sm_counts      prints each device's SM count as a program reads it: cuDeviceGetAttribute
 *                  through cuGetProcAddress and by its exported name (as -lcuda binds it),
 *                  cuDeviceGetDevResource; fails when they disagree
 *   steps S MS [direct] [KERNEL_MS]  for S seconds: a launch, then (MS > 0) MS ms of host
 *                  work and a wait for it (a latency program's step), or (MS 0) launches
 *                  without end, a wait every 100 or every 200 ms of kernels (a best-effort
 *                  hog); prints its launches and, on the simulated driver, the event records
 *                  and waits the driver saw (what greenctx run's pacing made) and on which
 *                  default stream its launches and the records went (legacy, per-thread),
 *                  and the file of the function its launches called. `direct`: launches and
 *                  waits by their exported names.
 *                  KERNEL_MS: each kernel runs that long (it spins); prints the share of the
 *                  second half of the run (after a wait) that the GPU ran its kernels
 *   copies S MS [direct] COPY_MS  the same with device-to-device copies for kernels, each
 *                  sized to take COPY_MS at the simulated driver's GREENCTX_SIM_COPY_GBPS (on a
 *                  GPU, at 1950 GB/s: its gpu_share is then a rate, to compare with another):
 *                  cuMemcpyAsync through cuGetProcAddress, or (`direct`) cuMemcpyDtoDAsync_v2
 *                  by its exported name (as cudaMemcpyAsync reaches the driver)
 *   persistent [count]  on device 0, prints its "count:" line (the above, and
 *                  cuCtxGetDevResource of the primary context), then sizes grids by that count
 *                  as persistent kernels do: one block of 200 KB of shared memory (one fits per
 *                  SM) per SM told, an ordinary launch whose blocks must all be resident at
 *                  once (the simulator says: gctxsim_last_launch), a cooperative launch of
 *                  count x occupancy blocks that must run, and one block more that the driver
 *                  must refuse (720); a line per case. `count`: the first line only
 *
 * Exit status 0 when what it checked held, 1 otherwise (with the reason).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef unsigned long long CUdeviceptr;
typedef int CUresult;
typedef int CUdevice;

#define MAX_SMS 1024
#define BLOCKS 1024

static struct {
    void *lib;
    CUresult (*getproc)(const char *, void **, int, unsigned long long, int *);
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*release)(CUdevice);
    CUresult (*reset)(CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*get_current)(CUcontext *);
    CUresult (*push)(CUcontext);
    CUresult (*pop)(CUcontext *);
    CUresult (*ctx_create)(CUcontext *, unsigned, CUdevice);
    CUresult (*green_create)(void **, void *, CUdevice, unsigned);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*stream_destroy)(CUstream);
    CUresult (*stream_sync)(CUstream);
    int (*sim_stream_sm_ids)(CUstream, unsigned *, int);
    void (*sim_fail_after)(const char *, int, int);
    /* The %smid kernel, on a GPU. */
    CUresult (*module_load)(CUmodule *, const void *);
    CUresult (*module_function)(CUfunction *, CUmodule, const char *);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*memset32)(CUdeviceptr, unsigned, size_t);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*begin_capture)(CUstream, int);
    CUresult (*end_capture)(CUstream, CUgraph *);
    CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*graph_launch)(CUgraphExec, CUstream);
    CUresult (*get_attribute)(int *, int, CUdevice);
    CUresult (*device_resource)(CUdevice, void *, int);
    CUresult (*ctx_resource)(CUcontext, void *, int);
    CUresult (*cooperative)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **);
    CUresult (*occupancy)(int *, CUfunction, int, size_t);
    CUresult (*func_set_attribute)(CUfunction, int, int);
    int (*sim_last_launch)(unsigned long long *, unsigned long long *);
    CUdevice dev;
    CUcontext primary;
    unsigned expected;
    unsigned first_ids[MAX_SMS], nb_first;
    pthread_mutex_t lock;
    int failed;
} p = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void fail(const char *what, long value)
{
    pthread_mutex_lock(&p.lock);
    printf("FAIL: %s (%ld)\n", what, value);
    p.failed = 1;
    pthread_mutex_unlock(&p.lock);
}

static void check(CUresult r, const char *what)
{
    if (r != 0)
        fail(what, r);
}

static void *proc(const char *name, int version)
{
    void *fn = NULL;
    int status = 0;
    if (p.getproc(name, &fn, version, 0, &status) != 0 || !fn)
        return NULL;
    return fn;
}

/* dlopen of the driver and one dlsym, as cudart does; everything else through
 * cuGetProcAddress. `direct` takes the wrapped names from the global scope instead, as a
 * program linked with -lcuda binds them. */
static void load(int direct)
{
    const char *path = getenv("GREENCTX_CUDA_LIBRARY");
    p.lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!p.lib) {
        printf("FAIL: no driver: %s\n", dlerror());
        exit(1);
    }
    *(void **)&p.getproc = dlsym(p.lib, "cuGetProcAddress_v2");
    if (!p.getproc) {
        printf("FAIL: the driver has no cuGetProcAddress_v2\n");
        exit(1);
    }
#define GET(field, name, version) *(void **)&p.field = proc(name, version)
    GET(init, "cuInit", 2000);
    GET(device_get, "cuDeviceGet", 2000);
    GET(retain, "cuDevicePrimaryCtxRetain", 7000);
    GET(release, "cuDevicePrimaryCtxRelease", 11000);
    GET(reset, "cuDevicePrimaryCtxReset", 11000);
    GET(set_current, "cuCtxSetCurrent", 4000);
    GET(get_current, "cuCtxGetCurrent", 4000);
    GET(push, "cuCtxPushCurrent", 4000);
    GET(pop, "cuCtxPopCurrent", 4000);
    GET(ctx_create, "cuCtxCreate", 3020);
    GET(green_create, "cuGreenCtxCreate", 12040);
    GET(stream_create, "cuStreamCreate", 2000);
    GET(stream_destroy, "cuStreamDestroy", 4000);
    GET(stream_sync, "cuStreamSynchronize", 2000);
    GET(module_load, "cuModuleLoadData", 2000);
    GET(module_function, "cuModuleGetFunction", 2000);
    GET(mem_alloc, "cuMemAlloc", 3020);
    GET(memset32, "cuMemsetD32", 3020);
    GET(memcpy_dtoh, "cuMemcpyDtoH", 3020);
    GET(launch, "cuLaunchKernel", 4000);
    GET(begin_capture, "cuStreamBeginCapture", 10010);
    GET(end_capture, "cuStreamEndCapture", 10000);
    GET(instantiate, "cuGraphInstantiateWithFlags", 11040);
    GET(graph_launch, "cuGraphLaunch", 10000);
    GET(get_attribute, "cuDeviceGetAttribute", 2000);
    GET(device_resource, "cuDeviceGetDevResource", 12040);
    GET(ctx_resource, "cuCtxGetDevResource", 12040);
    GET(cooperative, "cuLaunchCooperativeKernel", 9000);
    GET(occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050);
    GET(func_set_attribute, "cuFuncSetAttribute", 9000);
#undef GET
    if (direct) {
#define GLOBAL(field, name) *(void **)&p.field = dlsym(RTLD_DEFAULT, name)
        GLOBAL(retain, "cuDevicePrimaryCtxRetain");
        GLOBAL(release, "cuDevicePrimaryCtxRelease_v2");
        GLOBAL(set_current, "cuCtxSetCurrent");
        GLOBAL(get_current, "cuCtxGetCurrent");
        GLOBAL(push, "cuCtxPushCurrent_v2");
        GLOBAL(pop, "cuCtxPopCurrent_v2");
#undef GLOBAL
    }
    *(void **)&p.sim_stream_sm_ids = dlsym(p.lib, "gctxsim_stream_sm_ids");
    *(void **)&p.sim_fail_after = dlsym(p.lib, "gctxsim_fail_after");
    *(void **)&p.sim_last_launch = dlsym(p.lib, "gctxsim_last_launch");
    if (!p.init || !p.device_get || !p.retain || !p.release || !p.set_current || !p.get_current ||
        !p.push || !p.pop || !p.stream_create || !p.stream_destroy) {
        printf("FAIL: the driver lacks an entry point the probe needs\n");
        exit(1);
    }
    check(p.init(0), "cuInit");
    check(p.device_get(&p.dev, 0), "cuDeviceGet");
}

/* Thread 0 of every block writes its SM's id; the blocks spin a little so they spread. */
static const char smid_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry probe_smid(.param .u64 out)\n{\n"
    "  .reg .b32 r<3>;\n  .reg .b64 rd<6>;\n  .reg .pred q;\n"
    "  mov.u32 r0, %tid.x;\n  setp.ne.u32 q, r0, 0;\n  @q bra END;\n"
    "  ld.param.u64 rd0, [out];\n  cvta.to.global.u64 rd0, rd0;\n"
    "  mov.u32 r1, %ctaid.x;\n  mul.wide.u32 rd1, r1, 4;\n  add.s64 rd2, rd0, rd1;\n"
    "  mov.u32 r2, %smid;\n  st.global.u32 [rd2], r2;\n"
    "  mov.u64 rd3, %globaltimer;\n  add.u64 rd4, rd3, 50000;\n"
    "LOOP:\n  mov.u64 rd5, %globaltimer;\n  setp.lt.u64 q, rd5, rd4;\n  @q bra LOOP;\n"
    "END:\n  ret;\n}\n";

/* The SMs a kernel launched on `stream` in the current context runs on; sorted, unique. */
static unsigned observe(CUstream stream, int graph, unsigned *ids)
{
    if (p.sim_stream_sm_ids) {
        int n = p.sim_stream_sm_ids(stream, ids, MAX_SMS);
        return n < 0 ? 0 : (unsigned)n;
    }
    CUmodule module;
    CUfunction fn;
    CUdeviceptr out;
    unsigned blocks[BLOCKS];
    check(p.module_load(&module, smid_ptx), "cuModuleLoadData");
    check(p.module_function(&fn, module, "probe_smid"), "cuModuleGetFunction");
    check(p.mem_alloc(&out, sizeof blocks), "cuMemAlloc");
    check(p.memset32(out, 0xffffffffu, BLOCKS), "cuMemsetD32");
    void *args[] = {&out};
    if (graph) {
        CUgraph g;
        CUgraphExec exec;
        check(p.begin_capture(stream, 1 /* thread-local */), "cuStreamBeginCapture");
        check(p.launch(fn, BLOCKS, 1, 1, 32, 1, 1, 0, stream, args, NULL), "cuLaunchKernel");
        check(p.end_capture(stream, &g), "cuStreamEndCapture");
        check(p.instantiate(&exec, g, 0), "cuGraphInstantiateWithFlags");
        check(p.graph_launch(exec, stream), "cuGraphLaunch");
    } else {
        check(p.launch(fn, BLOCKS, 1, 1, 32, 1, 1, 0, stream, args, NULL), "cuLaunchKernel");
    }
    check(p.stream_sync(stream), "cuStreamSynchronize");
    check(p.memcpy_dtoh(blocks, out, sizeof blocks), "cuMemcpyDtoH");
    unsigned char seen[MAX_SMS] = {0};
    unsigned n = 0;
    for (unsigned b = 0; b < BLOCKS; b++)
        if (blocks[b] < MAX_SMS)
            seen[blocks[b]] = 1;
    for (unsigned id = 0; id < MAX_SMS; id++)
        if (seen[id])
            ids[n++] = id;
    return n;
}

/* Every observation must see the expected count, and the same SMs as the first one. */
static void expect_confined(const char *where, CUstream stream, int graph)
{
    unsigned ids[MAX_SMS];
    unsigned n = observe(stream, graph, ids);
    pthread_mutex_lock(&p.lock);
    printf("%s: %u SMs:", where, n);
    for (unsigned i = 0; i < n; i++)
        printf(" %u", ids[i]);
    putchar('\n');
    if (!p.nb_first) {
        memcpy(p.first_ids, ids, n * sizeof *ids);
        p.nb_first = n;
    }
    int same = n == p.nb_first && memcmp(ids, p.first_ids, n * sizeof *ids) == 0;
    pthread_mutex_unlock(&p.lock);
    if (n != p.expected)
        fail(where, (long)n);
    if (!same)
        fail("not the SMs of the first observation", (long)n);
}

static void expect_current_primary(const char *where)
{
    CUcontext current = NULL;
    check(p.get_current(&current), "cuCtxGetCurrent");
    if (current != p.primary)
        fail(where, (long)(current != NULL));
}

/* A new thread: nothing is current until it binds the primary context, as cudart's threads
 * do; then the default stream, a stream of its own, push and pop. */
static void *thread_main(void *arg)
{
    const char *name = arg;
    CUcontext current = (CUcontext)1;
    check(p.get_current(&current), "cuCtxGetCurrent on a new thread");
    if (current != NULL)
        fail("a new thread has a current context", 1);
    check(p.set_current(p.primary), "cuCtxSetCurrent on a new thread");
    expect_current_primary("cuCtxGetCurrent after the bind on a new thread");
    expect_confined(name, NULL, 0);
    CUstream s;
    check(p.stream_create(&s, 1), "cuStreamCreate on a new thread");
    expect_confined("a stream of a new thread", s, 0);
    check(p.stream_destroy(s), "cuStreamDestroy");
    check(p.set_current(NULL), "cuCtxSetCurrent(NULL)");
    check(p.push(p.primary), "cuCtxPushCurrent");
    expect_confined("pushed on a new thread", NULL, 0);
    CUcontext popped = NULL;
    check(p.pop(&popped), "cuCtxPopCurrent");
    if (popped != p.primary)
        fail("cuCtxPopCurrent did not give back the primary context", 0);
    return NULL;
}

static int confined(int direct, const char *expected)
{
    p.expected = (unsigned)strtoul(expected, NULL, 10);
    load(direct);
    /* cudart binds the primary context before its own retain; the simulated driver only
     * binds a primary context someone holds, so the probe binds between two retains. */
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.set_current(p.primary), "cuCtxSetCurrent before the second retain");
    CUcontext again = NULL;
    check(p.retain(&again, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.release(p.dev), "cuDevicePrimaryCtxRelease");
    if (again != p.primary)
        fail("the primary context changed between two retains", 0);
    expect_current_primary("cuCtxGetCurrent on the main thread");
    expect_confined("main thread, default stream", NULL, 0);
    CUstream s;
    check(p.stream_create(&s, 0), "cuStreamCreate");
    expect_confined("main thread, own stream", s, 0);
    if (!p.sim_stream_sm_ids)
        expect_confined("main thread, graph", s, 1);
    check(p.stream_destroy(s), "cuStreamDestroy");
    /* cudaSetDevice binds the primary context again. */
    check(p.set_current(p.primary), "cuCtxSetCurrent again");
    expect_confined("after binding again", NULL, 0);
    pthread_t t[4];
    pthread_create(&t[0], NULL, thread_main, "a new thread");
    pthread_join(t[0], NULL);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_main, "one of 4 threads");
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    check(p.release(p.dev), "cuDevicePrimaryCtxRelease");
    return p.failed;
}

static int refusals(void)
{
    load(0);
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.set_current(p.primary), "cuCtxSetCurrent");
    CUcontext ctx = NULL;
    void *green = NULL;
    CUcontext other = NULL;
    printf("cuCtxCreate -> %d\n", p.ctx_create ? p.ctx_create(&ctx, 0, p.dev) : -1);
    printf("cuGreenCtxCreate -> %d\n", p.green_create ? p.green_create(&green, NULL, p.dev, 1) : -1);
    printf("cuDevicePrimaryCtxReset -> %d\n", p.reset ? p.reset(p.dev) : -1);
    CUdevice second;
    if (p.device_get(&second, 1) == 0)
        printf("cuDevicePrimaryCtxRetain(device 1) -> %d\n", p.retain(&other, second));
    expect_current_primary("the current context after the refusals");
    check(p.release(p.dev), "cuDevicePrimaryCtxRelease");
    return p.failed;
}

static int foreign_bind(void)
{
    load(0);
    printf("cuCtxSetCurrent(foreign) -> %d\n", p.set_current((CUcontext)(uintptr_t)0x5eed0000));
    printf("cuCtxPushCurrent(foreign) -> %d\n", p.push((CUcontext)(uintptr_t)0x5eed0000));
    return 0;
}

static int second_driver(const char *path)
{
    load(0);
    void *other = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!other) {
        printf("FAIL: %s\n", dlerror());
        return 1;
    }
    printf("looked up: %p\n", dlsym(other, "cuGetProcAddress_v2"));
    return 0;
}

/* run_probe spawn CASE ARGS...: the child is run_probe CASE ARGS..., started with exec so
 * that it gets the environment a child process gets. */
static int spawn(char **argv)
{
    fflush(stdout);
    argv[1] = argv[0];
    pid_t child = fork();
    if (child == 0) {
        execv("/proc/self/exe", argv + 1);
        _exit(127);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

extern char **environ;

/* The environment as the program started, copied as Python's os.environ is. */
static char **start_env;

/* Waits for `child`; its exit status, or 1. */
static int child_status(pid_t child)
{
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* run_probe parent N HOW CASE...: argv[3] becomes this program's path, so argv + 3 is the
 * child's command line. */
static int parent(char **argv)
{
    p.expected = (unsigned)strtoul(argv[2], NULL, 10);
    load(0);
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.set_current(p.primary), "cuCtxSetCurrent");
    expect_confined("the parent", NULL, 0);
    const char *how = argv[3];
    static char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    char **child = argv + 3;
    child[0] = self;
    char line[4096] = "";
    for (char **a = child; *a; a++) {
        size_t used = strlen(line);
        if (used + strlen(*a) + 4 > sizeof line)
            return 1;
        sprintf(line + used, "%s'%s'", a == child ? "" : " ", *a);
    }
    fflush(stdout);
    if (p.failed)
        return 1;
    pid_t pid = -1;
    if (strcmp(how, "exec") == 0) {
        execv(self, child);
    } else if (strcmp(how, "execv") == 0) {
        if ((pid = fork()) == 0) {
            execv(self, child);
            _exit(127);
        }
    } else if (strcmp(how, "execve") == 0) {
        if ((pid = fork()) == 0) {
            execve(self, child, start_env);
            _exit(127);
        }
    } else if (strcmp(how, "posix_spawn") == 0) {
        if (posix_spawn(&pid, self, NULL, NULL, child, start_env) != 0)
            pid = -1;
    } else if (strcmp(how, "vfork") == 0) {
        if ((pid = vfork()) == 0) {
            execv(self, child);
            _exit(127);
        }
    } else if (strcmp(how, "system") == 0) {
        int status = system(line);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    } else if (strcmp(how, "bash") == 0) {
        if ((pid = fork()) == 0) {
            execl("/bin/bash", "bash", "-c", line, (char *)NULL);
            _exit(127);
        }
    } else {
        printf("FAIL: no way '%s' to start a child\n", how);
        return 2;
    }
    return child_status(pid);
}

/* A wrapped call's result after a fault must be the driver's own, not the preload's. */
static int fault(void)
{
    load(0);
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.set_current(p.primary), "cuCtxSetCurrent");
    if (!p.sim_fail_after) {
        printf("the driver is not the simulated one: no fault to inject\n");
        return 77;
    }
    CUcontext ctx = NULL;
#define FAULT(name, call)                                                                          \
    p.sim_fail_after(name, 1, 700);                                                                \
    printf("%s -> %d\n", name, call)
    FAULT("cuCtxSetCurrent", p.set_current(p.primary));
    FAULT("cuCtxPushCurrent", p.push(p.primary));
    FAULT("cuCtxGetCurrent", p.get_current(&ctx));
    FAULT("cuCtxPopCurrent", p.pop(&ctx));
    FAULT("cuDevicePrimaryCtxRetain", p.retain(&ctx, p.dev));
    FAULT("cuDevicePrimaryCtxRelease", p.release(p.dev));
#undef FAULT
    /* And the calls after it as the driver answers them (700 sticks, as on the H200). */
    printf("cuCtxSetCurrent after -> %d\n", p.set_current(p.primary));
    return 0;
}

/* ---- sizing by the SM count ---- */

#define SM_COUNT_ATTRIBUTE 16 /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
#define SM_RESOURCE 1         /* CU_DEV_RESOURCE_TYPE_SM */
#define BIG_SHARED (200 * 1024)
#define COOPERATIVE_TOO_LARGE 720

/* CUdevResource: 144 bytes; an SM resource's smCount at byte 96. */
static int resource_sms(CUresult r, const unsigned char resource[144])
{
    unsigned n;
    memcpy(&n, resource + 96, sizeof n);
    return r == 0 ? (int)n : -r;
}

/* A device's SM count through cuGetProcAddress, the exported name (-1 where the program has
 * none: not under the preload) and cuDeviceGetDevResource. */
static void device_sms(CUdevice dev, int counts[3])
{
    CUresult (*exported)(int *, int, CUdevice);
    *(void **)&exported = dlsym(RTLD_DEFAULT, "cuDeviceGetAttribute");
    unsigned char resource[144] = {0};
    counts[0] = counts[1] = -1;
    check(p.get_attribute(&counts[0], SM_COUNT_ATTRIBUTE, dev), "cuDeviceGetAttribute");
    if (exported)
        check(exported(&counts[1], SM_COUNT_ATTRIBUTE, dev), "cuDeviceGetAttribute (exported)");
    counts[2] = resource_sms(p.device_resource(dev, resource, SM_RESOURCE), resource);
    if ((exported && counts[1] != counts[0]) || counts[2] != counts[0])
        fail("the SM counts disagree", counts[0]);
}

static int sm_counts(void)
{
    load(0);
    int nb = 0;
    CUresult (*count)(int *);
    *(void **)&count = proc("cuDeviceGetCount", 2000);
    check(count ? count(&nb) : 1, "cuDeviceGetCount");
    for (int i = 0; i < nb; i++) {
        CUdevice dev;
        int counts[3];
        check(p.device_get(&dev, i), "cuDeviceGet");
        device_sms(dev, counts);
        printf("device %d: cuDeviceGetAttribute %d, exported %d, cuDeviceGetDevResource %d\n", i,
               counts[0], counts[1], counts[2]);
    }
    return p.failed;
}

/* greenctx_smid(flags, spin): thread 0 of each block sets flags[%smid & 1023] (the entry the
 * simulated driver runs; real PTX on a GPU). */
static const char persistent_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry greenctx_smid(.param .u64 flags, .param .u64 spin)\n{\n"
    "  .reg .b32 r<3>;\n  .reg .b64 rd<6>;\n  .reg .pred q;\n"
    "  mov.u32 r0, %tid.x;\n  setp.ne.u32 q, r0, 0;\n  @q bra END;\n"
    "  ld.param.u64 rd0, [flags];\n  cvta.to.global.u64 rd0, rd0;\n"
    "  mov.u32 r1, %smid;\n  and.b32 r1, r1, 1023;\n  mul.wide.u32 rd1, r1, 4;\n"
    "  add.s64 rd2, rd0, rd1;\n  mov.u32 r2, 1;\n  st.global.u32 [rd2], r2;\n"
    "  ld.param.u64 rd3, [spin];\n  mov.u64 rd4, %globaltimer;\n  add.u64 rd3, rd3, rd4;\n"
    "SPIN:\n  mov.u64 rd5, %globaltimer;\n  setp.lt.u64 q, rd5, rd3;\n  @q bra SPIN;\n"
    "END:\n  ret;\n}\n";

/* One launch of `blocks` blocks of 128 threads and 200 KB; prints its case's line. */
static void sized_launch(const char *name, CUfunction fn, CUdeviceptr flags, unsigned blocks,
                         int cooperative, CUresult expect)
{
    unsigned long long spin = 0;
    void *args[] = {&flags, &spin};
    CUresult r = cooperative ? p.cooperative(fn, blocks, 1, 1, 128, 1, 1, BIG_SHARED, NULL, args)
                             : p.launch(fn, blocks, 1, 1, 128, 1, 1, BIG_SHARED, NULL, args, NULL);
    if (r == 0)
        r = p.stream_sync(NULL);
    if (r != expect) {
        printf("FAIL case %s: %u blocks gave %d, expected %d\n", name, blocks, r, expect);
        p.failed = 1;
        return;
    }
    unsigned long long launched = 0, resident = 0;
    /* A persistent kernel waits for every block of its grid: they must all be resident. */
    if (r == 0 && p.sim_last_launch && (p.sim_last_launch(&launched, &resident) != 0 ||
                                        launched != blocks || resident < launched)) {
        printf("FAIL case %s: %llu blocks, only %llu resident at once: a grid barrier would "
               "never complete\n",
               name, launched, resident);
        p.failed = 1;
        return;
    }
    printf("case %s: ok, %u blocks of 200 KB (%s)\n", name, blocks, r ? "refused" : "ran");
}

static int persistent(int count_only)
{
    load(0);
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.set_current(p.primary), "cuCtxSetCurrent");
    int counts[3];
    unsigned char resource[144] = {0};
    device_sms(p.dev, counts);
    int ctx_sms = resource_sms(p.ctx_resource(p.primary, resource, SM_RESOURCE), resource);
    printf("count: cuDeviceGetAttribute %d, exported %d, cuDeviceGetDevResource %d, "
           "cuCtxGetDevResource %d\n",
           counts[0], counts[1], counts[2], ctx_sms);
    if (ctx_sms != counts[0])
        fail("cuCtxGetDevResource of the primary context disagrees", ctx_sms);
    if (count_only || p.failed)
        return p.failed;
    CUmodule module;
    CUfunction fn;
    CUdeviceptr flags;
    int per_sm = 0;
    check(p.module_load(&module, persistent_ptx), "cuModuleLoadData");
    check(p.module_function(&fn, module, "greenctx_smid"), "cuModuleGetFunction");
    /* Above 48 KB a block asks for its shared memory (the simulator has no such limit). */
    if (p.func_set_attribute)
        check(p.func_set_attribute(fn, 8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, BIG_SHARED),
              "cuFuncSetAttribute");
    check(p.occupancy(&per_sm, fn, 128, BIG_SHARED), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    check(p.mem_alloc(&flags, 4096), "cuMemAlloc");
    if (p.failed)
        return 1;
    unsigned fits = (unsigned)(counts[0] * per_sm);
    sized_launch("persistent", fn, flags, (unsigned)counts[0], 0, 0);
    sized_launch("cooperative", fn, flags, fits, 1, 0);
    sized_launch("too_large", fn, flags, fits + 1, 1, COOPERATIVE_TOO_LARGE);
    return p.failed;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int steps(double seconds, double step_ms, int direct, double kernel_ms, int copies)
{
    load(0);
    if (direct) {
        *(void **)&p.launch = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
        *(void **)&p.stream_sync = dlsym(RTLD_DEFAULT, "cuStreamSynchronize");
    }
    CUresult (*copy)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = NULL;
    if (copies)
        *(void **)&copy = direct ? dlsym(RTLD_DEFAULT, "cuMemcpyDtoDAsync_v2")
                                 : proc("cuMemcpyAsync", 4000);
    const char *gbps = p.sim_stream_sm_ids ? getenv("GREENCTX_SIM_COPY_GBPS") : NULL;
    size_t bytes = (size_t)(kernel_ms * 1e6 * (gbps ? strtod(gbps, NULL) : 1950)); /* B/ns */
    CUdeviceptr src = 0, dst = 0;
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.set_current(p.primary), "cuCtxSetCurrent");
    CUmodule module;
    CUfunction fn;
    CUdeviceptr flags;
    check(p.module_load(&module, persistent_ptx), "cuModuleLoadData");
    check(p.module_function(&fn, module, "greenctx_smid"), "cuModuleGetFunction");
    check(p.mem_alloc(&flags, 4096), "cuMemAlloc");
    if (copies) {
        if (!copy)
            fail("the driver has no copy entry point", 0);
        check(p.mem_alloc(&src, bytes), "cuMemAlloc");
        check(p.mem_alloc(&dst, bytes), "cuMemAlloc");
    }
    if (p.failed)
        return 1;
    unsigned long long spin = (unsigned long long)(kernel_ms * 1e6), launches = 0;
    unsigned long long half_launches = 0;
    /* A hog waits every 100 launches, or 200 ms of its kernels. */
    unsigned long long wait_every = kernel_ms > 2 ? (unsigned long long)(200 / kernel_ms) : 100;
    void *args[] = {&flags, &spin};
    double start = seconds_now(), half = 0;
    for (double end = start + seconds; seconds_now() < end && !p.failed;) {
        if (copies)
            check(copy(dst, src, bytes, NULL), "the copy");
        else
            check(p.launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
        launches++;
        if (step_ms > 0)
            usleep((useconds_t)(step_ms * 1000));
        /* The second half starts once the first one's work is done. */
        int halfway = !half && seconds_now() >= start + seconds / 2;
        if (step_ms > 0 || launches % wait_every == 0 || halfway)
            check(p.stream_sync(NULL), "cuStreamSynchronize");
        if (halfway)
            half = seconds_now(), half_launches = launches;
    }
    check(p.stream_sync(NULL), "cuStreamSynchronize");
    if (kernel_ms > 0 && half)
        printf("gpu_share %.3f\n",
               (double)(launches - half_launches) * kernel_ms / 1e3 / (seconds_now() - half));
    long (*calls)(const char *) = NULL;
    long (*on_default)(const char *, CUstream) = NULL;
    *(void **)&calls = dlsym(p.lib, "gctxsim_calls");
    *(void **)&on_default = dlsym(p.lib, "gctxsim_default_stream_calls");
    /* Whose function the program's launches called: the driver's own, or a wrapper. */
    Dl_info where;
    const char *file = dladdr(copies ? *(void **)&copy : *(void **)&p.launch, &where) &&
                               where.dli_fname
                           ? strrchr(where.dli_fname, '/')
                           : NULL;
    printf("launch in %s\n", file ? file + 1 : "?");
    printf("launches %llu", launches);
    if (calls)
        printf(" event_records %ld event_waits %ld", calls("cuEventRecord"),
               calls("cuEventSynchronize"));
    printf("\n");
    /* The default streams: (CUstream)1 legacy, (CUstream)2 per-thread. */
    if (on_default)
        printf("launches legacy %ld per_thread %ld, event_records legacy %ld per_thread %ld\n",
               on_default("cuLaunchKernel", (CUstream)1), on_default("cuLaunchKernel", (CUstream)2),
               on_default("cuEventRecord", (CUstream)1), on_default("cuEventRecord", (CUstream)2));
    return p.failed;
}

static int hold(const char *dir)
{
    char ready[4096], go[4096];
    snprintf(ready, sizeof ready, "%s/ready", dir);
    snprintf(go, sizeof go, "%s/go", dir);
    load(0);
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    check(p.set_current(p.primary), "cuCtxSetCurrent");
    FILE *f = fopen(ready, "w");
    if (!f || fclose(f) != 0)
        fail("writing DIR/ready", 0);
    for (int i = 0; i < 6000 && access(go, F_OK) != 0; i++)
        usleep(10000);
    check(p.release(p.dev), "cuDevicePrimaryCtxRelease");
    return p.failed;
}

/* A program that closes every descriptor it did not open itself once it runs (closefrom(3),
 * as daemons do), after its first CUDA call: the claim's lock with them. The numbers go to
 * files of its own. */
static int close_inherited(void)
{
    load(0);
    check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    for (int i = 0; i < 16; i++)
        if (open("/dev/null", O_RDONLY) < 0)
            fail("opening /dev/null", 0);
    check(p.release(p.dev), "cuDevicePrimaryCtxRelease");
    return p.failed;
}

int main(int argc, char **argv)
{
    size_t nb_env = 0;
    while (environ[nb_env])
        nb_env++;
    start_env = calloc(nb_env + 1, sizeof *start_env);
    if (start_env)
        memcpy(start_env, environ, nb_env * sizeof *start_env);
    if (argc >= 5 && strcmp(argv[1], "parent") == 0)
        return parent(argv);
    if (argc >= 2 && strcmp(argv[1], "no_part") == 0) {
        load(0);
        fflush(stdout);
        _exit(0);
    }
    if (argc >= 3 && strcmp(argv[1], "sleep") == 0) {
        load(0);
        sleep((unsigned)strtoul(argv[2], NULL, 10));
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "sigchld_ignored") == 0) {
        signal(SIGCHLD, SIG_IGN);
        execvp(argv[2], argv + 2);
        perror("run_probe sigchld_ignored");
        return 127;
    }
    if (argc >= 2 && strcmp(argv[1], "fault") == 0)
        return fault();
    if (argc >= 3 && strcmp(argv[1], "confined") == 0)
        return confined(0, argv[2]);
    if (argc >= 3 && strcmp(argv[1], "direct") == 0)
        return confined(1, argv[2]);
    if (argc >= 2 && strcmp(argv[1], "refusals") == 0)
        return refusals();
    if (argc >= 2 && strcmp(argv[1], "foreign_bind") == 0)
        return foreign_bind();
    if (argc >= 3 && strcmp(argv[1], "second_driver") == 0)
        return second_driver(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "spawn") == 0)
        return spawn(argv);
    if (argc >= 3 && strcmp(argv[1], "hold") == 0)
        return hold(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "closefrom") == 0)
        return close_inherited();
    if (argc >= 3 && strcmp(argv[1], "env") == 0) {
        const char *value = getenv(argv[2]);
        if (value)
            printf("%s=%s\n", argv[2], value);
        else
            printf("%s unset\n", argv[2]);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "sm_counts") == 0)
        return sm_counts();
    if (argc >= 4 && strcmp(argv[1], "steps") == 0) {
        int direct = argc >= 5 && strcmp(argv[4], "direct") == 0;
        return steps(strtod(argv[2], NULL), strtod(argv[3], NULL), direct,
                     argc >= 5 + direct ? strtod(argv[4 + direct], NULL) : 0, 0);
    }
    if (argc >= 5 && strcmp(argv[1], "copies") == 0) {
        int direct = strcmp(argv[4], "direct") == 0;
        return steps(strtod(argv[2], NULL), strtod(argv[3], NULL), direct,
                     argc >= 5 + direct ? strtod(argv[4 + direct], NULL) : 0, 1);
    }
    if (argc >= 2 && strcmp(argv[1], "persistent") == 0)
        return persistent(argc >= 3 && strcmp(argv[2], "count") == 0);
    if (argc >= 2 && strcmp(argv[1], "claim_fd") == 0) {
        /* Whether a claim file's descriptor came with this program (inherited, as a forked
         * child's is), before it uses CUDA. */
        for (int fd = 0; fd < 1024; fd++) {
            char link[64], target[PATH_MAX];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t got = readlink(link, target, sizeof target - 1);
            if (got > 0 && (target[got] = '\0', strstr(target, "/claim-"))) {
                printf("claim inherited\n");
                return 0;
            }
        }
        printf("claim not inherited\n");
        return 1;
    }
    if (argc >= 2 && strcmp(argv[1], "noop") == 0) {
        load(0);
        check(p.retain(&p.primary, p.dev), "cuDevicePrimaryCtxRetain");
        check(p.release(p.dev), "cuDevicePrimaryCtxRelease");
        return p.failed;
    }
    fprintf(stderr, "usage: run_probe confined|direct N | refusals | foreign_bind | "
                    "second_driver PATH | spawn CASE... | parent N HOW CASE... | no_part | "
                    "sleep S | sigchld_ignored CMD... | fault | noop | claim_fd | hold DIR | "
                    "closefrom | env NAME | sm_counts | steps S MS [direct] [KERNEL_MS] | "
                    "copies S MS [direct] COPY_MS | persistent [count]\n");
    return 2;
}
