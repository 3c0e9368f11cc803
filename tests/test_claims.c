/* Claims: SMs of a GPU held across processes through the registry (include/greenctx.h,
 * "Tenants"). Each ctest entry has its own GREENCTX_RUNTIME_DIR; each test its own registry
 * below it (fresh_dir), so runs and tests never see each other's claims. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sm_ids.h"
#include "testing.h"

/* ---- helpers ---- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* <GREENCTX_RUNTIME_DIR>/<name>, emptied: this test's own runtime directory. */
static const char *fresh_dir(const char *name)
{
    static char path[512];
    const char *base = getenv("GREENCTX_RUNTIME_DIR");
    if (!base || !*base) {
        gt_fail(__FILE__, __LINE__, "GREENCTX_RUNTIME_DIR is not set: tests/claims.cmake sets "
                                    "one per ctest entry");
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", base, name);
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return path;
}

static gctx_claim_options options_in(const char *dir)
{
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = dir;
    return o;
}

static gctx_claim_info info_of(gctx_claim *c)
{
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    if (gctx_claim_get_info(c, &info) != GCTX_SUCCESS)
        info.sm_count = 0;
    return info;
}

static const char *granules_text(const gctx_claim_info *info, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < info->nb_granules && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%u", i ? " " : "", info->granules[i]);
    return buf;
}

#define ASSERT_GRANULES(claim, expected)                                                       \
    do {                                                                                       \
        char buf_[512];                                                                        \
        gctx_claim_info info_ = info_of(claim);                                                \
        GT_ASSERT_STR_EQ(granules_text(&info_, buf_, sizeof buf_), expected);                  \
    } while (0)

static unsigned listed(const char *dir, gctx_claim_info *claims, unsigned capacity,
                       gctx_claim_usage *usage)
{
    unsigned count = 0;
    if (capacity)
        claims[0].size = sizeof *claims;
    if (gctx_claim_list(0, dir, claims, capacity, &count, usage) != GCTX_SUCCESS) {
        gt_fail(__FILE__, __LINE__, "gctx_claim_list: %s", gctx_last_error());
        return 0;
    }
    return count;
}

static int require_h200(void)
{
    gt_require_sim(0, "h200");
    return gt_state ? -1 : gt_require_green_contexts();
}

/* ---- granules and sizes ---- */

GT_TEST(h200_granules)
{
    if (require_h200())
        return;
    const char *dir = fresh_dir("h200_granules");
    GT_CHECK();
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    GT_ASSERT_EQ_INT(listed(dir, NULL, 0, &usage), 0);
    GT_CHECK();
    GT_ASSERT_EQ_INT(usage.sm_count, 132);
    GT_ASSERT_EQ_INT(usage.free_sms, 132);
    GT_ASSERT_EQ_INT(usage.nb_granules, 16);
    for (unsigned i = 0; i < 15; i++)
        GT_ASSERT_EQ_INT(usage.granule_sms[i], 8);
    GT_ASSERT_EQ_INT(usage.granule_sms[15], 12);
    GT_ASSERT_EQ_INT(usage.nb_claims, 0);
    GT_ASSERT_CONTAINS(usage.path, "/gpu-GPU-");
}

GT_TEST(exact_sizes_and_best_fit)
{
    if (require_h200())
        return;
    const char *dir = fresh_dir("exact_sizes");
    GT_CHECK();
    gctx_claim_options o = options_in(dir);
    gctx_claim *a, *b, *c;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &o, &a), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info_of(a).sm_count, 16);
    ASSERT_GRANULES(a, "0 1");
    /* 20 = 8 + the remainder's 12: the remainder only when needed. */
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "20", &o, &b), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info_of(b).sm_count, 20);
    ASSERT_GRANULES(b, "2 15");
    /* 25% of 132 is 33, floored to 32 */
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "25%", &o, &c), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info_of(c).sm_count, 32);
    ASSERT_GRANULES(c, "3 4 5 6");
    gctx_claim_release(c);
    /* rest: every free SM */
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "rest", &o, &c), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info_of(c).sm_count, 132 - 16 - 20);
    gctx_claim *d;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "rest", &o, &d), GCTX_ERROR_BUSY);
    gctx_claim_release(c);
    gctx_claim_release(b);
    /* a hole between claims: adjacent granules first, the shortest run that fits */
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, &b), GCTX_SUCCESS);
    ASSERT_GRANULES(b, "2");
    gctx_claim_release(b);
    gctx_claim_release(a);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "132", &o, &a), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info_of(a).nb_granules, 16);
    gctx_claim_release(a);
}

GT_TEST(counts_no_granules_give)
{
    if (require_h200())
        return;
    const char *dir = fresh_dir("counts");
    GT_CHECK();
    gctx_claim_options o = options_in(dir);
    gctx_claim *c = NULL;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "10", &o, &c), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "10 SMs can't be claimed");
    GT_ASSERT_CONTAINS(gctx_last_error(), "15 of 8 SMs and one of 12");
    GT_ASSERT_CONTAINS(gctx_last_error(), "nearest counts that can be claimed are 8 and 12");
    GT_ASSERT(c == NULL);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "133", &o, &c), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "132 SMs in all");
    static const struct {
        gctx_rounding rounding;
        const char *request;
        unsigned sms;
    } rounded[] = {{GCTX_ROUND_DOWN, "10", 8}, {GCTX_ROUND_UP, "10", 12},
                   {GCTX_ROUND_NEAREST, "10", 12}, {GCTX_ROUND_NEAREST, "9", 8},
                   {GCTX_ROUND_DOWN, "3", 8},      {GCTX_ROUND_UP, "125", 132}};
    for (size_t i = 0; i < sizeof rounded / sizeof rounded[0]; i++) {
        o.rounding = rounded[i].rounding;
        GT_ASSERT_STATUS(gctx_claim_acquire(0, rounded[i].request, &o, &c), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(info_of(c).sm_count, rounded[i].sms);
        gctx_claim_release(c);
    }
    o.rounding = GCTX_ROUND_STRICT;
    const char *bad[] = {"", "0", "abc", "16x", "0%", "101%", "-8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        GT_ASSERT_STATUS(gctx_claim_acquire(0, bad[i], &o, &c), GCTX_ERROR_INVALID_ARGUMENT);
        GT_ASSERT_CONTAINS(gctx_last_error(), "\"rest\"");
    }
    GT_ASSERT_STATUS(gctx_claim_acquire(0, NULL, &o, &c), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    o.flags = 0x80;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, &c), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "unknown bits 0x80");
    GT_ASSERT_EQ_INT(listed(dir, NULL, 0, NULL), 0);
}

/* Every granule alone, then any set of them: a claim's context runs on exactly the union of
 * its granules' SMs, and claims never share one. */
GT_TEST(contexts_run_on_exactly_their_granules)
{
    if (require_h200())
        return;
    const char *dir = fresh_dir("union");
    GT_CHECK();
    gctx_claim_options o = options_in(dir);
    gctx_claim *one[16];
    gt_sm_set sms[16], all;
    memset(&all, 0, sizeof all);
    for (unsigned i = 0; i < 16; i++) {
        GT_ASSERT_STATUS(gctx_claim_acquire(0, i < 15 ? "8" : "12", &o, &one[i]), GCTX_SUCCESS);
        gctx_claim_info info = info_of(one[i]);
        GT_ASSERT_EQ_INT(info.nb_granules, 1);
        GT_ASSERT_EQ_INT(info.granules[0], i);
        gctx_context *ctx;
        GT_ASSERT_STATUS(gctx_claim_context(one[i], NULL, &ctx), GCTX_SUCCESS);
        gt_context_sms(ctx, &sms[i]);
        gctx_context_release(ctx);
        GT_CHECK();
        GT_ASSERT_EQ_INT(sms[i].count, i < 15 ? 8 : 12);
        for (unsigned k = 0; k < i; k++)
            GT_ASSERT(gt_sm_sets_disjoint(&sms[i], &sms[k]));
        for (unsigned id = 0; id < GT_MAX_SMS; id++)
            all.has[id] |= sms[i].has[id];
    }
    unsigned total = 0;
    for (unsigned id = 0; id < GT_MAX_SMS; id++)
        total += all.has[id];
    GT_ASSERT_EQ_INT(total, 132);
    /* Free granules 1, 7, 14 and the remainder: 24 + 12 SMs, none adjacent. */
    unsigned freed[] = {1, 7, 14, 15};
    for (unsigned k = 0; k < 4; k++)
        gctx_claim_release(one[freed[k]]);
    gctx_claim *mixed;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "36", &o, &mixed), GCTX_SUCCESS);
    ASSERT_GRANULES(mixed, "1 7 14 15");
    gctx_context *ctx;
    gt_sm_set got;
    GT_ASSERT_STATUS(gctx_claim_context(mixed, NULL, &ctx), GCTX_SUCCESS);
    gt_context_sms(ctx, &got);
    gctx_context_release(ctx);
    GT_CHECK();
    GT_ASSERT_EQ_INT(got.count, 36);
    for (unsigned k = 0; k < 4; k++)
        GT_ASSERT(gt_sm_set_within(&sms[freed[k]], &got));
    gctx_partition *p;
    gctx_partition_info pinfo = GCTX_PARTITION_INFO_INIT;
    GT_ASSERT_STATUS(gctx_claim_partition(mixed, &p), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_partition_get_info(p, &pinfo), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(pinfo.sm_count, 36);
    GT_ASSERT_EQ_INT(pinfo.structured, 0); /* the remainder's SMs carry no co-scheduling */
    gctx_partition_release(p);
    gctx_claim_release(mixed);
    for (unsigned i = 0; i < 16; i++)
        if (i != 1 && i != 7 && i != 14 && i != 15)
            gctx_claim_release(one[i]);
    GT_ASSERT_EQ_INT(listed(dir, NULL, 0, NULL), 0);
}

GT_TEST(reacquire_hits_the_cache_and_leaks_nothing)
{
    if (require_h200())
        return;
    const char *dir = fresh_dir("cache");
    GT_CHECK();
    gctx_claim_options o = options_in(dir);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS); /* what earlier tests left cached */
    int objects = gctx__object_live_count(), driver = gt_sim_live("all");
    gctx_cache_stats was = GCTX_CACHE_STATS_INIT, now = GCTX_CACHE_STATS_INIT;
    for (int round = 0; round < 2; round++) {
        gctx_claim *c;
        gctx_stream *s;
        GT_ASSERT_STATUS(gctx_cache_get_stats(0, &was), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_claim_acquire(0, "24", &o, &c), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_claim_stream(c, &s), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_stream_synchronize(s), GCTX_SUCCESS);
        gctx_stream_release(s);
        gctx_claim_release(c);
        GT_ASSERT_STATUS(gctx_cache_get_stats(0, &now), GCTX_SUCCESS);
        if (round == 1)
            GT_ASSERT_EQ_INT(now.hits, was.hits + 1); /* the same granules, the same bytes */
    }
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
    GT_ASSERT_EQ_INT(gt_sim_live("all"), driver);
    GT_ASSERT_EQ_INT(listed(dir, NULL, 0, NULL), 0);
}

GT_TEST(busy_names_the_holder)
{
    if (require_h200())
        return;
    const char *dir = fresh_dir("busy");
    GT_CHECK();
    gctx_claim_options o = options_in(dir);
    o.command = "hog --big";
    gctx_claim *hog, *c = NULL;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "124", &o, &hog), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &o, &c), GCTX_ERROR_BUSY);
    char pid[64];
    snprintf(pid, sizeof pid, "held by pid %d (", (int)getpid());
    GT_ASSERT_CONTAINS(gctx_last_error(), "16 SMs of device 0");
    GT_ASSERT_CONTAINS(gctx_last_error(), "8 of its 132 SMs are free");
    GT_ASSERT_CONTAINS(gctx_last_error(), pid);
    GT_ASSERT_CONTAINS(gctx_last_error(), "\"hog --big\", 124 SMs)");
    GT_ASSERT(c == NULL);
    gctx_claim_info claims[4];
    GT_ASSERT_EQ_INT(listed(dir, claims, 4, NULL), 1);
    GT_ASSERT_EQ_INT(claims[0].pid, getpid());
    GT_ASSERT_EQ_INT(claims[0].self, 1);
    GT_ASSERT_EQ_INT(claims[0].sm_count, 124);
    GT_ASSERT_STR_EQ(claims[0].command, "hog --big");
    gctx_claim_release(hog);
}
