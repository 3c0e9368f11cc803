/* gctx_current_context_save / _restore: the caller's current context survives a call that
 * changes it, the way NCCL's communicator init does (it makes a device's primary context
 * current: nvidia/nccl #1736, #2231). The "init" here is a fake that does what NCCL was seen
 * doing, through raw driver calls. */
#include "harness.h"
#include "raw_calls.h"
#include "testing.h"

static const raw_driver *drv;
static CUcontext primary;

static int begin(void)
{
    gt_require_device();
    if (gt_state)
        return -1;
    if (!(drv = gt_raw()) || !gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS)) {
        gt_skip("no green contexts on this driver");
        return -1;
    }
    if (!primary)
        drv->cuDevicePrimaryCtxRetain(&primary, 0);
    return 0;
}

static CUcontext current(void)
{
    CUcontext c = NULL;
    drv->cuCtxGetCurrent(&c);
    return c;
}

/* Empties this thread's context stack. */
static void clear_stack(void)
{
    for (int i = 0; i < 16 && current(); i++)
        drv->cuCtxPopCurrent(&(CUcontext){NULL});
}

/* What NCCL's init did to the thread: the device's primary context made current. */
static void fake_init_sets_primary(void) { drv->cuCtxSetCurrent(primary); }

GT_TEST(restore_after_an_init_that_changes_it)
{
    if (begin())
        return;
    gctx_context *green;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &green), GCTX_SUCCESS);
    CUcontext mine = gctx_context_cu_context(green);
    clear_stack();
    drv->cuCtxPushCurrent(primary);
    drv->cuCtxPushCurrent(mine); /* the caller works in its green context */
    CUcontext saved = NULL;
    GT_ASSERT_STATUS(gctx_current_context_save(&saved), GCTX_SUCCESS);
    GT_ASSERT(saved == mine);
    fake_init_sets_primary();
    GT_ASSERT(current() == primary); /* the fake did what NCCL does */
    int changed = -1;
    GT_ASSERT_STATUS(gctx_current_context_restore(saved, &changed), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(changed, 1);
    GT_ASSERT(current() == mine);
    /* Only the top was replaced: the caller's own push below is still there. */
    drv->cuCtxPopCurrent(&(CUcontext){NULL});
    GT_ASSERT(current() == primary);
    clear_stack();
    gctx_context_release(green);
}

GT_TEST(restore_when_nothing_changed)
{
    if (begin())
        return;
    clear_stack();
    drv->cuCtxSetCurrent(primary);
    CUcontext saved = NULL;
    GT_ASSERT_STATUS(gctx_current_context_save(&saved), GCTX_SUCCESS);
    int changed = -1;
    GT_ASSERT_STATUS(gctx_current_context_restore(saved, &changed), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(changed, 0);
    GT_ASSERT(current() == primary);
    GT_ASSERT_STATUS(gctx_current_context_restore(saved, NULL), GCTX_SUCCESS);
    clear_stack();
}

GT_TEST(restore_nothing_current_pops_what_was_pushed)
{
    if (begin())
        return;
    gctx_context *green;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &green), GCTX_SUCCESS);
    clear_stack();
    CUcontext saved = primary;
    GT_ASSERT_STATUS(gctx_current_context_save(&saved), GCTX_SUCCESS);
    GT_ASSERT(saved == NULL);
    /* An init that pushes two contexts and leaves them. */
    drv->cuCtxPushCurrent(primary);
    drv->cuCtxPushCurrent(gctx_context_cu_context(green));
    int changed = -1;
    GT_ASSERT_STATUS(gctx_current_context_restore(saved, &changed), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(changed, 1);
    GT_ASSERT(current() == NULL);
    gctx_context_release(green);
}

GT_TEST(restore_a_destroyed_context_fails_and_says_why)
{
    gt_require_sim(0, NULL); /* a destroyed handle is known bad only to the simulator */
    if (gt_state || begin())
        return;
    gctx_context *green;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &green), GCTX_SUCCESS);
    CUcontext gone = gctx_context_cu_context(green);
    gctx_context_release(green);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS); /* the cache kept it: destroy it now */
    clear_stack();
    drv->cuCtxSetCurrent(primary);
    GT_ASSERT_STATUS(gctx_current_context_restore(gone, NULL), GCTX_ERROR_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuCtxSetCurrent");
    GT_ASSERT_CONTAINS(gctx_last_error(), "destroyed after it was saved");
    GT_ASSERT(current() == primary); /* left as it was */
    GT_ASSERT_EQ_INT(gctx__object_live_count(), 0);
    clear_stack();
}

GT_TEST(save_needs_an_output)
{
    if (begin())
        return;
    GT_ASSERT_STATUS(gctx_current_context_save(NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "NULL");
}

/* gctx_current_sm_count answers for whatever is current: a green context's partition, the
 * primary context's whole device, and says why when nothing is. */
GT_TEST(sm_count_of_the_current_context)
{
    if (begin())
        return;
    gctx_device_info device = GCTX_DEVICE_INFO_INIT;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &device), GCTX_SUCCESS);
    gctx_context *green;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &green), GCTX_SUCCESS);
    clear_stack();
    unsigned n = 0;
    GT_ASSERT_STATUS(gctx_current_sm_count(&n), GCTX_ERROR_DRIVER);
    GT_ASSERT_EQ_INT(gctx_last_cuda_result(), 201); /* CUDA_ERROR_INVALID_CONTEXT */
    GT_ASSERT_CONTAINS(gctx_last_error(), "no context is current on this thread");
    drv->cuCtxPushCurrent(primary);
    GT_ASSERT_STATUS(gctx_current_sm_count(&n), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, device.sm_count);
    drv->cuCtxPushCurrent(gctx_context_cu_context(green));
    GT_ASSERT_STATUS(gctx_current_sm_count(&n), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, 16);
    GT_ASSERT(current() == gctx_context_cu_context(green)); /* the stack as it was */
    drv->cuCtxPopCurrent(&(CUcontext){NULL});
    GT_ASSERT_STATUS(gctx_current_sm_count(&n), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, device.sm_count);
    GT_ASSERT_STATUS(gctx_current_sm_count(NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "NULL");
    clear_stack();
    gctx_context_release(green);
}
