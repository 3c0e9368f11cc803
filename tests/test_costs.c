/* What the hot paths cost (issue 20). Driver calls: the simulator's counter of every entry
 * point (src/cuda_abi.h's whole list, summed), against the calls the same operation needs when
 * written by hand, made through the raw table in the same test. Allocations of a split and a
 * re-partition, and the claims registry's calls into libc per claim, counted by wrapping them
 * at link time (-Wl,--wrap in tests/costs.cmake).
 * A path that starts making a call it doesn't need fails here, naming the call. */
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "greenctx_claims.h"
#include "raw_calls.h"
#include "sm_ids.h"

/* ---- driver calls ---- */

#define NAME_(name, version, required, params) #name,
static const char *const entry_points[] = {GCU_DRIVER_SYMBOLS(NAME_)};
#undef NAME_
#define NB_ENTRY_POINTS (sizeof entry_points / sizeof entry_points[0])

typedef struct calls {
    long n[NB_ENTRY_POINTS];
} calls;

static void calls_now(calls *c)
{
    for (size_t i = 0; i < NB_ENTRY_POINTS; i++)
        c->n[i] = gt_sim_calls(entry_points[i]);
}

/* What was called since *since, per entry point, and the total. */
static long calls_since(const calls *since, calls *made)
{
    calls now;
    calls_now(&now);
    long total = 0;
    for (size_t i = 0; i < NB_ENTRY_POINTS; i++)
        total += made->n[i] = now.n[i] - since->n[i];
    return total;
}

static long made_of(const calls *made, const char *entry)
{
    for (size_t i = 0; i < NB_ENTRY_POINTS; i++)
        if (strcmp(entry_points[i], entry) == 0)
            return made->n[i];
    return -1;
}

/* "cuEventRecord 2, cuStreamWaitEvent 4" */
static const char *calls_text(const calls *made, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NB_ENTRY_POINTS && n < size; i++)
        if (made->n[i])
            n += (size_t)snprintf(buf + n, size - n, "%s%s %ld", n ? ", " : "", entry_points[i],
                                  made->n[i]);
    return buf;
}

/* Every entry point called as often in `lib` as in `hand`. */
static void same_calls(const calls *lib, const calls *hand, const char *what)
{
    char a[1024], b[1024];
    for (size_t i = 0; i < NB_ENTRY_POINTS; i++)
        if (lib->n[i] != hand->n[i])
            GT_FAIL("%s through greenctx: %s; by hand: %s", what, calls_text(lib, a, sizeof a),
                    calls_text(hand, b, sizeof b));
}

/* The simulated driver's counters and green contexts, or the test is skipped: -1. */
static int require_counters(void)
{
    gt_require_sim(0, NULL);
    return gt_state ? -1 : gt_require_green_contexts();
}

static const gctx_group sixteen_and_rest[2] = {{.num_sms = 16}, {.backfill = 1}};

/* A context and a stream on each of a {16, rest} split's two parts (test failure: some left
 * unmade, and the caller's GT_CHECK returns). */
static void build_on(gctx_partition *parts[2], gctx_context *ctx[2], gctx_stream *st[2])
{
    for (int i = 0; i < 2; i++) {
        GT_ASSERT_STATUS(gctx_context_create(parts[i], NULL, &ctx[i]), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_stream_create(ctx[i], NULL, &st[i]), GCTX_SUCCESS);
    }
}

/* What build_on made, and the parts, released: into the cache. */
static void tear_down(gctx_partition *parts[2], gctx_context *ctx[2], gctx_stream *st[2])
{
    for (int i = 0; i < 2; i++) {
        gctx_stream_release(st[i]);
        gctx_context_release(ctx[i]);
        gctx_partition_release(parts[i]);
    }
}

/* A {16, rest} split as an application writes it with the driver alone, on the path and
 * granule greenctx planned (bench/bench_overhead.c does the same for the benchmark's baseline). */
static void split_by_hand(const gcu_dev_resource *whole, const gctx_split_plan *plan,
                          const gctx_group_plan *groups)
{
    const raw_driver *raw = gt_raw();
    gcu_dev_resource res[80], remainder;
    memset(&remainder, 0, sizeof remainder);
    gcu_result r;
    if (plan->path == GCTX_SPLIT_PATH_STRUCTURED) {
        gcu_dev_sm_resource_group_params params[2];
        memset(params, 0, sizeof params);
        params[0].smCount = groups[0].sm_count;
        params[1].flags = GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
        r = raw->cuDevSmResourceSplit(res, 2, whole, &remainder, 0, params);
    } else {
        unsigned n = sizeof res / sizeof res[0];
        unsigned flags = plan->path == GCTX_SPLIT_PATH_FINE_GRANULES
                             ? GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING : 0;
        r = raw->cuDevSmResourceSplitByCount(res, &n, whole, &remainder, flags,
                                             plan->granule_sms);
    }
    if (r != GCU_SUCCESS)
        GT_FAIL("the split by hand: CUresult %d", (int)r);
}

GT_TEST(split_makes_the_driver_calls_of_a_split_by_hand)
{
    if (require_counters())
        return;
    gctx_partition *whole = gt_whole_device(), *parts[2];
    GT_CHECK();
    gcu_dev_resource resource;
    memset(&resource, 0, sizeof resource);
    GT_ASSERT_EQ_INT(gt_raw()->cuDeviceGetDevResource(0, &resource, GCU_DEV_RESOURCE_TYPE_SM),
                     GCU_SUCCESS);
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    gctx_group_plan groups[2];
    GT_ASSERT_STATUS(gctx_partition_plan(whole, sixteen_and_rest, 2, NULL, &plan, groups),
                     GCTX_SUCCESS);
    for (int round = 0; round < 3; round++) { /* the first as every later one */
        calls since, lib, hand, released;
        calls_now(&since);
        GT_ASSERT_STATUS(gctx_partition_split(whole, sixteen_and_rest, 2, NULL, parts, NULL,
                                              NULL, NULL),
                         GCTX_SUCCESS);
        long through = calls_since(&since, &lib);
        calls_now(&since);
        split_by_hand(&resource, &plan, groups);
        GT_CHECK();
        GT_ASSERT_EQ_INT(through, calls_since(&since, &hand));
        same_calls(&lib, &hand, "a {16, rest} split");
        GT_CHECK();
        GT_ASSERT_EQ_INT(through, 1);
        /* The device partition lives on: its outputs go without a driver call, as a split's
         * resources by hand need none. */
        calls_now(&since);
        gctx_partition_release(parts[0]);
        gctx_partition_release(parts[1]);
        GT_ASSERT_EQ_INT(calls_since(&since, &released), 0);
    }
    gctx_partition_release(whole);
}

/* The SMs of a resource the driver wrote, by the simulated driver's record of it. */
static int resource_sms(const gcu_dev_resource *resource, gt_sm_set *set)
{
    int (*ids_of)(const void *, unsigned *, int) =
        (int (*)(const void *, unsigned *, int))gt_sim_symbol("gctxsim_resource_sm_ids");
    unsigned ids[GT_MAX_SMS];
    int n = ids_of ? ids_of(resource, ids, GT_MAX_SMS) : -1;
    if (n < 0) {
        gt_fail(__FILE__, __LINE__, "the simulated driver does not know the resource by hand");
        return -1;
    }
    memset(set, 0, sizeof *set);
    for (int i = 0; i < n; i++)
        set->has[ids[i]] = 1;
    set->count = (unsigned)n;
    return 0;
}

/* One group of 32 SMs and the rest, as cuda.core's sm.split(count=32) asks: a split of the
 * resource with room for that one group, the others' SMs in the remainder. greenctx makes
 * that call and no other: its group gets the SMs of the peer's group (with room for every
 * granule, the driver writes all 4 and the H200 deals its 16-SM units over them, so the
 * first is another set of SMs). */
GT_TEST(a_split_with_a_remainder_makes_the_peers_driver_call)
{
    if (require_counters())
        return;
    gctx_partition *whole = gt_whole_device(), *group = NULL, *rest = NULL;
    GT_CHECK();
    gcu_dev_resource resource, res[1], remainder;
    memset(&resource, 0, sizeof resource);
    memset(&remainder, 0, sizeof remainder);
    const raw_driver *raw = gt_raw();
    GT_ASSERT_EQ_INT(raw->cuDeviceGetDevResource(0, &resource, GCU_DEV_RESOURCE_TYPE_SM),
                     GCU_SUCCESS);
    const gctx_group one[1] = {{.num_sms = 32}};
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    gctx_group_plan planned[1];
    GT_ASSERT_STATUS(gctx_partition_plan(whole, one, 1, NULL, &plan, planned), GCTX_SUCCESS);
    calls since, lib, hand;
    calls_now(&since);
    GT_ASSERT_STATUS(gctx_partition_split(whole, one, 1, NULL, &group, &rest, NULL, NULL),
                     GCTX_SUCCESS);
    long through = calls_since(&since, &lib);
    calls_now(&since);
    gcu_result r;
    if (plan.path == GCTX_SPLIT_PATH_STRUCTURED) {
        gcu_dev_sm_resource_group_params params[1];
        memset(params, 0, sizeof params);
        params[0].smCount = 32;
        params[0].coscheduledSmCount = planned[0].coscheduled_sm_count;
        r = raw->cuDevSmResourceSplit(res, 1, &resource, &remainder, 0, params);
    } else {
        unsigned room = 32 / plan.granule_sms;
        GT_ASSERT_EQ_INT(room, 1);
        r = raw->cuDevSmResourceSplitByCount(res, &room, &resource, &remainder, 0,
                                             plan.granule_sms);
    }
    GT_ASSERT_EQ_INT(r, GCU_SUCCESS);
    GT_ASSERT_EQ_INT(through, calls_since(&since, &hand));
    same_calls(&lib, &hand, "a {32} split with its remainder");
    GT_ASSERT_EQ_INT(through, 1);
    gt_sm_set mine, theirs;
    if (resource_sms(&res[0], &theirs) || gt_partition_sms(group, &mine))
        return;
    char a[4096], b[4096];
    if (mine.count != theirs.count || memcmp(mine.has, theirs.has, sizeof mine.has) != 0)
        GT_FAIL("greenctx's group of 32: SMs %s; the peer's: %s",
                gt_sm_set_text(&mine, a, sizeof a), gt_sm_set_text(&theirs, b, sizeof b));
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    GT_ASSERT_STATUS(gctx_partition_get_info(rest, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.sm_count, resource.u.sm.smCount - 32);
    gctx_partition_release(group);
    gctx_partition_release(rest);
    gctx_partition_release(whole);
}

/* Tear down and rebuild a {16, rest} setup with a context and a stream on each part, through
 * the context cache: what it costs beyond the split is one synchronize per context it hands
 * back (of the idle stream that came back with it: this is how a fault met outside greenctx
 * is seen; the context's stream then takes that stream with no second check) and one per
 * stream drained at the end. By hand, without a cache, the same is 2 descriptors, 2 context
 * creates and 2 stream creates, then 2 + 2 destroys. 7 calls before issue 20 (a second
 * synchronize of each stream as its context's stream took it). */
GT_TEST(repartition_through_the_cache_costs_its_checks_only)
{
    if (require_counters())
        return;
    gctx_partition *whole = gt_whole_device();
    GT_CHECK();
    for (int round = 0; round < 3; round++) {
        gctx_partition *parts[2];
        gctx_context *ctx[2];
        gctx_stream *st[2];
        calls since, built, torn;
        calls_now(&since);
        GT_ASSERT_STATUS(gctx_partition_split(whole, sixteen_and_rest, 2, NULL, parts, NULL,
                                              NULL, NULL),
                         GCTX_SUCCESS);
        build_on(parts, ctx, st);
        GT_CHECK();
        long build = calls_since(&since, &built);
        calls_now(&since);
        tear_down(parts, ctx, st);
        long teardown = calls_since(&since, &torn);
        if (round == 0)
            continue; /* the first made the contexts and streams the cache keeps */
        char text[1024];
        if (build != 3 || made_of(&built, "cuStreamSynchronize") != 2)
            GT_FAIL("a rebuild from the cache: %s; expected the split and 2 cuStreamSynchronize",
                    calls_text(&built, text, sizeof text));
        if (teardown != 2 || made_of(&torn, "cuStreamSynchronize") != 2)
            GT_FAIL("a teardown into the cache: %s; expected 2 cuStreamSynchronize",
                    calls_text(&torn, text, sizeof text));
    }
    gctx_partition_release(whole);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* The synchronize of a context's hand-out from the cache checks the one idle stream it made
 * it with, for the context's first stream only: a second idle stream of the same context, and
 * the drained stream of a live context (released to it, never handed out of the cache with
 * it), are each checked as they are taken. */
GT_TEST(only_the_stream_checked_with_its_context_skips_its_check)
{
    if (require_counters())
        return;
    gctx_partition *whole = gt_whole_device(), *parts[2];
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_partition_split(whole, sixteen_and_rest, 2, NULL, parts, NULL, NULL,
                                          NULL),
                     GCTX_SUCCESS);
    gctx_context *c = NULL;
    gctx_stream *s[2] = {NULL, NULL};
    GT_ASSERT_STATUS(gctx_context_create(parts[0], NULL, &c), GCTX_SUCCESS);
    for (int i = 0; i < 2; i++)
        GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s[i]), GCTX_SUCCESS);
    for (int i = 0; i < 2; i++)
        gctx_stream_release(s[i]); /* both drained, kept by c */
    gctx_context_release(c);        /* cached with its two idle streams */
    calls since, made;
    calls_now(&since);
    GT_ASSERT_STATUS(gctx_context_create(parts[0], NULL, &c), GCTX_SUCCESS); /* a hit */
    GT_ASSERT_EQ_INT(calls_since(&since, &made), 1);
    GT_ASSERT_EQ_INT(made_of(&made, "cuStreamSynchronize"), 1);
    long expected[2] = {0, 1}; /* checked with the context; the other one */
    for (int i = 0; i < 2; i++) {
        calls_now(&since);
        GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s[i]), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(calls_since(&since, &made), expected[i]);
        GT_ASSERT_EQ_INT(made_of(&made, "cuStreamSynchronize"), expected[i]);
    }
    /* Released to the live context and taken again: checked, as any stream it kept is. */
    gctx_stream_release(s[0]);
    calls_now(&since);
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s[0]), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(calls_since(&since, &made), 1);
    GT_ASSERT_EQ_INT(made_of(&made, "cuStreamSynchronize"), 1);
    for (int i = 0; i < 2; i++)
        gctx_stream_release(s[i]);
    gctx_context_release(c);
    /* The context's first stream is of another priority (made by the driver): the idle one
     * the hit checked is checked again when a later stream takes it. */
    GT_ASSERT_STATUS(gctx_context_create(parts[0], NULL, &c), GCTX_SUCCESS); /* a hit */
    gctx_stream_options urgent = GCTX_STREAM_OPTIONS_INIT;
    urgent.priority = -1;
    GT_ASSERT_STATUS(gctx_stream_create(c, &urgent, &s[1]), GCTX_SUCCESS);
    calls_now(&since);
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s[0]), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(calls_since(&since, &made), 1);
    GT_ASSERT_EQ_INT(made_of(&made, "cuStreamSynchronize"), 1);
    for (int i = 0; i < 2; i++)
        gctx_stream_release(s[i]);
    gctx_context_release(c);
    gctx_partition_release(parts[0]);
    gctx_partition_release(parts[1]);
    gctx_partition_release(whole);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* n partitions, each old stream recording one event: the barrier funnelled through old
 * stream 0 (its n - 1 siblings' events, then every new stream waits for its one), or by part
 * (each new stream waits for its own old stream: the floor); nothing else. Switching to the
 * active layout makes no call. */
static void switch_costs(unsigned n, unsigned flags)
{
    unsigned counts[2 * 4];
    for (unsigned l = 0; l < 2; l++)
        for (unsigned i = 0; i < n; i++)
            counts[l * n + i] = i + 1 < n ? 8 * (l + 1) : 0;
    const long waits = flags & GCTX_LAYOUTS_ORDER_BY_PART ? (long)n : 2 * (long)n - 1;
    gctx_layouts *layouts = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, counts, 2, n, NULL, &layouts), GCTX_SUCCESS);
    char text[1024];
    for (unsigned k = 1; k <= 4; k++) {
        calls since, made;
        calls_now(&since);
        GT_ASSERT_STATUS(gctx_layouts_switch_ordered(layouts, k & 1, flags, NULL), GCTX_SUCCESS);
        long total = calls_since(&since, &made);
        if (total != (long)n + waits || made_of(&made, "cuEventRecord") != (long)n ||
            made_of(&made, "cuStreamWaitEvent") != waits)
            GT_FAIL("a switch of %u partitions (flags 0x%x): %s; expected %u cuEventRecord and "
                    "%ld cuStreamWaitEvent", n, flags, calls_text(&made, text, sizeof text), n,
                    waits);
        calls_now(&since);
        GT_ASSERT_STATUS(gctx_layouts_switch_ordered(layouts, k & 1, flags, NULL), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(calls_since(&since, &made), 0);
    }
    gctx_layouts_release(layouts);
}

GT_TEST(layout_switch_records_and_waits_only)
{
    if (require_counters())
        return;
    for (unsigned n = 2; n <= 3; n++) {
        switch_costs(n, GCTX_LAYOUTS_ORDER_ALL);
        GT_CHECK();
        switch_costs(n, GCTX_LAYOUTS_ORDER_BY_PART);
        GT_CHECK();
    }
    /* gctx_layouts_switch is the barrier: 2 records and 3 waits for 2 partitions. */
    const unsigned counts[] = {8, 0, 16, 0};
    gctx_layouts *layouts = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, counts, 2, 2, NULL, &layouts), GCTX_SUCCESS);
    calls since, made;
    calls_now(&since);
    GT_ASSERT_STATUS(gctx_layouts_switch(layouts, 1, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(calls_since(&since, &made), 5);
    GT_ASSERT_EQ_INT(made_of(&made, "cuEventRecord"), 2);
    GT_ASSERT_EQ_INT(made_of(&made, "cuStreamWaitEvent"), 3);
    gctx_layouts_release(layouts);
}

/* ---- allocations on the hot paths ---- */

/* The library's malloc, calloc and realloc while `allocating` (wrapped at link time, as the
 * libc calls below are: the static library's calls, not the simulator's). */
static long allocations;
static int allocating;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size)
{
    allocations += allocating;
    return __real_malloc(size);
}
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    allocations += allocating;
    return __real_calloc(n, size);
}
void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size)
{
    allocations += allocating;
    return __real_realloc(p, size);
}

static void count_allocations(int on)
{
    if (on)
        allocations = 0;
    allocating = on;
}

/* A {16, rest} split is one allocation at most (its record and both partitions, before
 * issue 20 an allocation each and the planning's scratch), and none once a split of the same
 * size was released (its block is kept for the next: the first round may reuse an earlier
 * test's); a rebuild from the cache adds one per context and per stream object, and its
 * teardown none. */
GT_TEST(hot_paths_allocate_once_per_object)
{
    if (require_counters())
        return;
    gctx_partition *whole = gt_whole_device();
    GT_CHECK();
    for (int round = 0; round < 3; round++) {
        gctx_partition *parts[2];
        gctx_context *ctx[2];
        gctx_stream *st[2];
        count_allocations(1);
        GT_ASSERT_STATUS(gctx_partition_split(whole, sixteen_and_rest, 2, NULL, parts, NULL,
                                              NULL, NULL),
                         GCTX_SUCCESS);
        count_allocations(0);
        long most = round == 0 ? 1 : 0; /* later rounds reuse the block the last one released */
        GT_ASSERT_GE_INT(most, allocations);
        count_allocations(1);
        build_on(parts, ctx, st);
        count_allocations(0);
        GT_CHECK();
        long built = allocations;
        count_allocations(1);
        tear_down(parts, ctx, st);
        count_allocations(0);
        if (round == 0)
            continue; /* the first made the contexts (their cache keys) and streams */
        GT_ASSERT_EQ_INT(built, 4);
        GT_ASSERT_EQ_INT(allocations, 0);
    }
    gctx_partition_release(whole);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* ---- the claims registry's calls into libc ---- */

/* Every libc call of src/ that reaches the file system or asks the kernel who we are. */
#define LIBC_CALLS(X)                                                                          \
    X(open) X(openat) X(close) X(opendir) X(closedir) X(readdir) X(rewinddir) X(lstat) X(stat) \
    X(fstat) X(fstatat) X(mkdir) X(chmod) X(fchmod) X(flock) X(read) X(pread) X(write)         \
    X(pwrite) X(ftruncate) X(unlink) X(rename) X(getpwuid_r) X(geteuid) X(getpid)

enum {
#define LIBC_INDEX_(name) LIBC_##name,
    LIBC_CALLS(LIBC_INDEX_)
#undef LIBC_INDEX_
    NB_LIBC
};
static const char *const libc_names[NB_LIBC] = {
#define LIBC_NAME_(name) #name,
    LIBC_CALLS(LIBC_NAME_)
#undef LIBC_NAME_
};
static long libc_calls[NB_LIBC];
static int counting;

#define COUNT(name) (counting ? (void)libc_calls[LIBC_##name]++ : (void)0)

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    COUNT(open);
    return __real_open(path, flags, mode);
}
int __real_openat(int dir, const char *path, int flags, ...);
int __wrap_openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    COUNT(openat);
    return __real_openat(dir, path, flags, mode);
}
#define WRAP(ret, name, params, args)                                                          \
    ret __real_##name params;                                                                  \
    ret __wrap_##name params                                                                   \
    {                                                                                          \
        COUNT(name);                                                                           \
        return __real_##name args;                                                             \
    }
WRAP(int, close, (int fd), (fd))
WRAP(DIR *, opendir, (const char *path), (path))
WRAP(int, closedir, (DIR *d), (d))
WRAP(struct dirent *, readdir, (DIR *d), (d))
WRAP(int, lstat, (const char *path, struct stat *st), (path, st))
WRAP(int, stat, (const char *path, struct stat *st), (path, st))
WRAP(int, fstat, (int fd, struct stat *st), (fd, st))
WRAP(int, fstatat, (int dir, const char *path, struct stat *st, int flags), (dir, path, st, flags))
WRAP(int, mkdir, (const char *path, mode_t mode), (path, mode))
WRAP(int, chmod, (const char *path, mode_t mode), (path, mode))
WRAP(int, fchmod, (int fd, mode_t mode), (fd, mode))
WRAP(int, flock, (int fd, int op), (fd, op))
WRAP(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, pread, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at))
WRAP(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t at), (fd, buf, n, at))
WRAP(int, ftruncate, (int fd, off_t n), (fd, n))
WRAP(int, unlink, (const char *path), (path))
WRAP(int, rename, (const char *from, const char *to), (from, to))
WRAP(int, getpwuid_r,
     (uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **found),
     (uid, pw, buf, size, found))
WRAP(uid_t, geteuid, (void), ())
WRAP(pid_t, getpid, (void), ())
void __real_rewinddir(DIR *d);
void __wrap_rewinddir(DIR *d)
{
    COUNT(rewinddir);
    __real_rewinddir(d);
}

/* Acquire 16 SMs, make their context (a cache hit after the first time), release. */
static void claim_cycle(void)
{
    gctx_claim *claim = NULL;
    gctx_context *context = NULL;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", NULL, &claim), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_claim_context(claim, NULL, &context), GCTX_SUCCESS);
    gctx_context_release(context);
    gctx_claim_release(claim);
}

/* The registry stays open between claims: a claim costs the lock, the checks that the files
 * are still the ones opened, the scan of claim files, its own file, the liveness test at its
 * release and the event. What it no longer does (each asked once per process): opening the
 * directory and the lock file, reading the identity, the runtime directory's checks, the
 * user's name, the command line. */
GT_TEST(a_claim_keeps_its_registry_open)
{
    if (require_counters())
        return;
    /* A registry of its own: each of its entries costs a readdir in every scan. */
    const char *base = getenv("GREENCTX_RUNTIME_DIR");
    char dir[512];
    if (base)
        mkdir(base, 0700); /* the first run of a fresh build tree */
    snprintf(dir, sizeof dir, "%s/run-XXXXXX", base ? base : "/tmp");
    GT_ASSERT(mkdtemp(dir) != NULL);
    setenv("GREENCTX_RUNTIME_DIR", dir, 1);
    claim_cycle(); /* opens the registry, and makes the context the cache keeps */
    GT_CHECK();
    for (int round = 0; round < 3; round++) {
        memset(libc_calls, 0, sizeof libc_calls);
        counting = 1;
        claim_cycle();
        counting = 0;
        GT_CHECK();
        char text[1024];
        size_t n = 0;
        long total = 0;
        for (int i = 0; i < NB_LIBC; i++) {
            total += libc_calls[i];
            if (libc_calls[i] && n < sizeof text)
                n += (size_t)snprintf(text + n, sizeof text - n, " %s %ld", libc_names[i],
                                      libc_calls[i]);
        }
        GT_ASSERT_EQ_INT(libc_calls[LIBC_opendir] + libc_calls[LIBC_mkdir] +
                             libc_calls[LIBC_getpwuid_r] + libc_calls[LIBC_read], 0);
        GT_ASSERT_EQ_INT(libc_calls[LIBC_flock], 6); /* registry lock and unlock twice, the
                                                        claim's hold, its liveness test */
        /* 66 before the registry stayed open; 39 before each file was checked (fstat,
         * fstatat before a scan opens an entry), events were replaced by rename and the claim
         * file's identity was kept to check its descriptor at the release (a descriptor the
         * program closed is never closed again). */
        if (total != 50)
            GT_FAIL("a cached claim made %ld calls into libc (expected 50):%s", total, text);
    }
}
