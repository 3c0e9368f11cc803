/* What names a GPU beside its number: its UUID and PCI bus id (gctx_device_uuid,
 * gctx_device_pci_bus_id), and its claims registry read by UUID from the files alone
 * (gctx_claim_registries, gctx_claim_list_uuid, gctx_claim_events_uuid), as greenctx ps does
 * on a machine without a driver. Each test has a runtime directory of its own (never the
 * user's registry, on the real GPU too). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "greenctx_claims.h"
#include "harness.h"

GT_TEST(uuid_and_pci_bus_id_as_nvidia_smi_prints_them)
{
    char uuid[GCTX_UUID_SIZE], bus_id[GCTX_PCI_BUS_ID_SIZE], small[8];
    GT_ASSERT_STATUS(gctx_device_uuid(0, uuid, sizeof uuid), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(strlen(uuid), 40);
    GT_ASSERT(!strncmp(uuid, "GPU-", 4) && uuid[12] == '-' && uuid[17] == '-' && uuid[22] == '-' &&
              uuid[27] == '-');
    GT_ASSERT_STATUS(gctx_device_pci_bus_id(0, bus_id, sizeof bus_id), GCTX_SUCCESS);
    unsigned domain, bus, dev, fn;
    GT_ASSERT_EQ_INT(sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn), 4);
    /* Too small a buffer, or none: refused, naming the size it needs. */
    GT_ASSERT_STATUS(gctx_device_uuid(0, small, sizeof small), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "needs a buffer of 41 bytes; got 8");
    GT_ASSERT_STATUS(gctx_device_pci_bus_id(0, NULL, 32), GCTX_ERROR_INVALID_ARGUMENT);
    int count = 0;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_device_uuid(count, uuid, sizeof uuid), GCTX_ERROR_NO_DEVICE);
}

static char runtime[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A fresh runtime directory for the test, and options that use it. */
static gctx_claim_options fresh_runtime(void)
{
    if (runtime[0])
        nftw(runtime, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(runtime, sizeof runtime, "/tmp/greenctx-identity-XXXXXX");
    if (!mkdtemp(runtime))
        gt_fail(__FILE__, __LINE__, "mkdtemp failed");
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = runtime;
    return o;
}

static void remove_runtime(void)
{
    nftw(runtime, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    runtime[0] = '\0';
}

/* <runtime>/gpu-<uuid>/<name>. */
static void registry_file(const char *uuid, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/gpu-%s/%s", runtime, uuid, name);
}

GT_TEST(a_registry_is_listed_by_uuid_from_its_files)
{
    char uuid[GCTX_UUID_SIZE], uuids[4 * GCTX_UUID_SIZE];
    GT_ASSERT_STATUS(gctx_device_uuid(0, uuid, sizeof uuid), GCTX_SUCCESS);
    gctx_claim_options o = fresh_runtime();
    gctx_claim *claim;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &o, &claim), GCTX_SUCCESS);
    /* Decoys beside it: a file and a link named like registries are no registries. */
    char path[600], target[600];
    snprintf(path, sizeof path, "%s/gpu-GPU-00000000-0000-0000-0000-000000000000", runtime);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    registry_file(uuid, "", target, sizeof target);
    snprintf(path, sizeof path, "%s/gpu-GPU-11111111-1111-1111-1111-111111111111", runtime);
    GT_ASSERT_EQ_INT(symlink(target, path), 0);
    unsigned n = 0;
    GT_ASSERT_STATUS(gctx_claim_registries(runtime, uuids, 4, &n), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, 1);
    GT_ASSERT_STR_EQ(uuids, uuid);

    /* What the driver-free listing says is what the device's says. */
    gctx_claim_info by_uuid = GCTX_CLAIM_INFO_INIT, by_device = GCTX_CLAIM_INFO_INIT;
    gctx_claim_usage u_uuid = GCTX_CLAIM_USAGE_INIT, u_device = GCTX_CLAIM_USAGE_INIT;
    unsigned c_uuid = 0, c_device = 0;
    GT_ASSERT_STATUS(gctx_claim_list_uuid(uuid, runtime, &by_uuid, 1, &c_uuid, &u_uuid),
                     GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_claim_list(0, runtime, &by_device, 1, &c_device, &u_device),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(c_uuid, 1);
    GT_ASSERT_EQ_INT(c_device, 1);
    GT_ASSERT_EQ_INT(by_uuid.sm_count, 16);
    GT_ASSERT_EQ_INT(by_uuid.pid, getpid());
    GT_ASSERT_STR_EQ(by_uuid.device_uuid, uuid);
    GT_ASSERT_EQ_INT(u_uuid.sm_count, u_device.sm_count);
    GT_ASSERT_EQ_INT(u_uuid.free_sms, u_device.free_sms);
    GT_ASSERT_EQ_INT(u_uuid.nb_granules, u_device.nb_granules);
    GT_ASSERT(!memcmp(u_uuid.granule_sms, u_device.granule_sms, sizeof u_uuid.granule_sms));
    GT_ASSERT_STR_EQ(u_uuid.path, u_device.path);
    gctx_claim_event events[4] = {GCTX_CLAIM_EVENT_INIT, GCTX_CLAIM_EVENT_INIT,
                                  GCTX_CLAIM_EVENT_INIT, GCTX_CLAIM_EVENT_INIT};
    GT_ASSERT_STATUS(gctx_claim_events_uuid(uuid, runtime, events, 4, &n), GCTX_SUCCESS);
    gctx_claim_release(claim);
    remove_runtime();
}

GT_TEST(a_uuid_that_is_no_uuid_is_refused)
{
    unsigned n = 0;
    const char *bad[] = {"../../etc", "GPU-../x", "GPU-1234/..", "gpu"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        GT_ASSERT_STATUS(gctx_claim_list_uuid(bad[i], NULL, NULL, 0, &n, NULL),
                         GCTX_ERROR_INVALID_ARGUMENT);
        GT_ASSERT_CONTAINS(gctx_last_error(), "is no GPU UUID");
        GT_ASSERT_STATUS(gctx_claim_events_uuid(bad[i], NULL, NULL, 0, &n),
                         GCTX_ERROR_INVALID_ARGUMENT);
    }
    GT_ASSERT_STATUS(gctx_claim_list_uuid(NULL, NULL, NULL, 0, &n, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
}

/* A registry another greenctx version wrote is refused, and left as it was: a listing
 * without the driver must not rebuild what it can't vouch for. */
GT_TEST(another_versions_registry_is_refused_not_rebuilt)
{
    char uuid[GCTX_UUID_SIZE], path[600], text[4096], after[4096];
    GT_ASSERT_STATUS(gctx_device_uuid(0, uuid, sizeof uuid), GCTX_SUCCESS);
    gctx_claim_options o = fresh_runtime();
    gctx_claim *claim;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &o, &claim), GCTX_SUCCESS);
    gctx_claim_release(claim);
    registry_file(uuid, "identity", path, sizeof path);
    FILE *f = fopen(path, "r");
    GT_ASSERT(f != NULL);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    char *version = strstr(text, "\nversion ");
    GT_ASSERT(version != NULL);
    version[9] = '9'; /* "version 9.3.0": another greenctx */
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    unsigned n = 0;
    GT_ASSERT_STATUS(gctx_claim_list_uuid(uuid, runtime, NULL, 0, &n, NULL), GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "was written by another greenctx version");
    f = fopen(path, "r");
    len = fread(after, 1, sizeof after - 1, f);
    fclose(f);
    after[len] = '\0';
    remove_runtime();
    GT_ASSERT_STR_EQ(after, text);
}

/* The registry read without the driver is hostile input as every registry read is: an
 * identity that is a link (to a right copy) or a FIFO, or a runtime directory other users may
 * write, is refused with GCTX_ERROR_REGISTRY, never followed, blocked on or read as free. */
GT_TEST(a_hostile_registry_is_refused_without_the_driver)
{
    char uuid[GCTX_UUID_SIZE], path[600], copy[600];
    GT_ASSERT_STATUS(gctx_device_uuid(0, uuid, sizeof uuid), GCTX_SUCCESS);
    gctx_claim_options o = fresh_runtime();
    gctx_claim *claim;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &o, &claim), GCTX_SUCCESS);
    gctx_claim_release(claim);
    unsigned n = 0;
    GT_ASSERT_STATUS(gctx_claim_list_uuid(uuid, runtime, NULL, 0, &n, NULL), GCTX_SUCCESS);
    registry_file(uuid, "identity", path, sizeof path);
    snprintf(copy, sizeof copy, "%s/identity-copy", runtime);
    GT_ASSERT_EQ_INT(rename(path, copy), 0);
    GT_ASSERT_EQ_INT(symlink(copy, path), 0);
    GT_ASSERT_STATUS(gctx_claim_list_uuid(uuid, runtime, NULL, 0, &n, NULL), GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "identity");
    GT_ASSERT_EQ_INT(unlink(path), 0);
    GT_ASSERT_EQ_INT(mkfifo(path, 0600), 0);
    GT_ASSERT_STATUS(gctx_claim_events_uuid(uuid, runtime, NULL, 0, &n), GCTX_ERROR_REGISTRY);
    GT_ASSERT_EQ_INT(unlink(path), 0);
    GT_ASSERT_EQ_INT(rename(copy, path), 0);
    GT_ASSERT_EQ_INT(chmod(runtime, 0777), 0);
    GT_ASSERT_STATUS(gctx_claim_registries(runtime, NULL, 0, &n), GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "writable by other users");
    GT_ASSERT_STATUS(gctx_claim_list_uuid(uuid, runtime, NULL, 0, &n, NULL), GCTX_ERROR_REGISTRY);
    GT_ASSERT_EQ_INT(chmod(runtime, 0700), 0);
    remove_runtime();
}
