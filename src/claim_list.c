/* What the registry shows: every live claim of a device, its events, and a holder's fault. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claim.h"

/* Element i lies first->size bytes after i - 1; count: how many there are. */
static gctx_status check_array(const void *first, unsigned capacity, const unsigned *count,
                               size_t min_size, const char *name, const char *init_macro)
{
    GCTX_TRY_OUTPUT(count);
    if (capacity == 0)
        return GCTX_SUCCESS;
    if (!first)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "%s is NULL with capacity %u", name,
                          capacity);
    return gctx__sized_check(first, min_size, name, init_macro);
}

static void *element(void *first, unsigned i)
{
    size_t stride;
    memcpy(&stride, first, sizeof stride);
    void *e = (char *)first + (size_t)i * stride;
    memcpy(e, &stride, sizeof stride); /* each element's size as the first one says */
    return e;
}

/* The device's registry, opened with its granules as the driver gives them; or, with a
 * uuid, as the registry itself records them (no driver: the device is -1). */
static gctx_status open_device(int device, const char *uuid, const char *runtime_dir,
                               gctx__device_granules *g, gctx__registry *reg)
{
    if (!uuid)
        GCTX_TRY(gctx__device_granules_get(device, g));
    else if (strncmp(uuid, "GPU-", 4) || strspn(uuid + 4, "0123456789abcdef-") != strlen(uuid + 4))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "'%.60s' is no GPU UUID (GPU- and hex digits, as nvidia-smi -L "
                          "prints it)",
                          uuid);
    else {
        memset(g, 0, sizeof *g);
        g->device = -1;
        GCTX_TRY(gctx__registry_identity(runtime_dir, uuid, &g->identity));
    }
    /* Without the driver the registry is only read: one that isn't there is not made. */
    gctx_status s = gctx__registry_open(runtime_dir, 0, !uuid, &g->identity, reg);
    if (s != GCTX_SUCCESS)
        gctx__device_granules_end(g);
    return s;
}

/* A live process holding dir/file open when its recorded pid has ended (sh -c 'daemon &'),
 * among those whose descriptors this user may see; 0 when none is. */
static int live_holder(const char *dir, const char *file)
{
    char path[700];
    struct stat claim, st;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (lstat(path, &claim) != 0)
        return 0;
    DIR *proc = opendir("/proc");
    int found = 0;
    for (struct dirent *p; proc && !found && (p = readdir(proc));) {
        char *end;
        long pid = strtol(p->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/fd", pid);
        DIR *fds = opendir(path);
        for (struct dirent *f; fds && !found && (f = readdir(fds));) {
            snprintf(path, sizeof path, "/proc/%ld/fd/%s", pid, f->d_name);
            if (f->d_name[0] != '.' && stat(path, &st) == 0 && st.st_dev == claim.st_dev &&
                st.st_ino == claim.st_ino)
                found = (int)pid;
        }
        if (fds)
            closedir(fds);
    }
    if (proc)
        closedir(proc);
    return found;
}

static gctx_status list(int device, const char *uuid, const char *runtime_dir,
                        gctx_claim_info *claims, unsigned capacity, unsigned *count,
                        gctx_claim_usage *usage)
{
    GCTX_TRY(check_array(claims, capacity, count, GCTX__MIN_CLAIM_INFO, "claims",
                         "GCTX_CLAIM_INFO_INIT"));
    if (usage)
        GCTX_TRY(gctx__sized_check(usage, GCTX__MIN_CLAIM_USAGE, "usage", "GCTX_CLAIM_USAGE_INIT"));
    gctx__device_granules g;
    gctx__registry reg;
    GCTX_TRY(open_device(device, uuid, runtime_dir, &g, &reg));
    gctx__record *records = NULL;
    unsigned nb = 0;
    gctx__granules free_set;
    gctx_status s = gctx__claim_free(&reg, &free_set, &records, &nb);
    gctx__registry_close(&reg);
    if (s != GCTX_SUCCESS)
        goto done;
    for (unsigned i = 0; i < nb && i < capacity; i++) {
        gctx_claim_info info;
        int self = records[i].pid == (int)getpid() ||
                   gctx__claim_held_here(reg.dir, records[i].file);
        int holder = kill(records[i].pid, 0) != 0 && errno == ESRCH
                         ? live_holder(reg.dir, records[i].file)
                         : 0;
        if (holder)
            records[i].pid = holder;
        gctx__claim_info(&records[i], &g.identity, device, self, &info);
        gctx__claim_state_info(reg.dir, &records[i], &info);
        gctx__sized_out(element(claims, i), &info, sizeof info);
    }
    *count = nb;
    if (usage) {
        const gctx__granule_layout *l = &g.identity.layout;
        gctx_claim_usage out = GCTX_CLAIM_USAGE_INIT;
        out.sm_count = gctx__layout_total(l);
        out.free_sms = gctx__granules_sms(l, &free_set);
        out.nb_granules = gctx__layout_count(l);
        for (unsigned i = 0; i < out.nb_granules; i++) {
            out.granule_sms[i] = gctx__layout_sms(l, i);
            out.granule_free[i] = (unsigned char)gctx__granules_has(&free_set, i);
        }
        out.nb_claims = nb;
        gctx_mps_info mps = GCTX_MPS_INFO_INIT;
        out.mps_active = gctx_mps_get_info(&mps) == GCTX_SUCCESS && mps.daemon_running;
        snprintf(out.path, sizeof out.path, "%s", reg.dir);
        gctx__sized_out(usage, &out, sizeof out);
    }
done:
    free(records);
    gctx__device_granules_end(&g);
    return s;
}

gctx_status gctx_claim_list(int device, const char *runtime_dir, gctx_claim_info *claims,
                            unsigned capacity, unsigned *count, gctx_claim_usage *usage)
{
    return list(device, NULL, runtime_dir, claims, capacity, count, usage);
}

gctx_status gctx_claim_list_uuid(const char *uuid, const char *runtime_dir,
                                 gctx_claim_info *claims, unsigned capacity, unsigned *count,
                                 gctx_claim_usage *usage)
{
    if (!uuid)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "uuid is NULL");
    return list(-1, uuid, runtime_dir, claims, capacity, count, usage);
}

gctx_status gctx_claim_registries(const char *runtime_dir, char *uuids, unsigned capacity,
                                  unsigned *count)
{
    if (!count || (capacity && !uuids))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "%s is NULL", count ? "uuids" : "count");
    char(*found)[48] = capacity ? calloc(capacity, sizeof *found) : NULL;
    if (capacity && !found)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory for %u UUIDs", capacity);
    gctx_status s = gctx__registry_uuids(runtime_dir, found, capacity, count);
    for (unsigned i = 0; s == GCTX_SUCCESS && i < *count && i < capacity; i++)
        snprintf(uuids + (size_t)i * GCTX_UUID_SIZE, GCTX_UUID_SIZE, "%s", found[i]);
    free(found);
    return s;
}

static gctx_status events_of(int device, const char *uuid, const char *runtime_dir,
                             gctx_claim_event *events, unsigned capacity, unsigned *count)
{
    GCTX_TRY(check_array(events, capacity, count, GCTX__MIN_CLAIM_EVENT, "events",
                         "GCTX_CLAIM_EVENT_INIT"));
    gctx__device_granules g;
    gctx__registry reg;
    GCTX_TRY(open_device(device, uuid, runtime_dir, &g, &reg));
    gctx__event_record *kept = NULL;
    unsigned nb = 0;
    gctx_status s = gctx__registry_events(&reg, &kept, &nb);
    gctx__registry_close(&reg);
    gctx__device_granules_end(&g);
    if (s != GCTX_SUCCESS)
        return s;
    for (unsigned i = 0; i < nb && i < capacity; i++) {
        gctx_claim_event ev = {sizeof ev, kept[i].kind, kept[i].time_ns, kept[i].pid, "",
                               kept[i].cuda_result, kept[i].sm_count};
        snprintf(ev.command, sizeof ev.command, "%s", kept[i].command);
        gctx__sized_out(element(events, i), &ev, sizeof ev);
    }
    *count = nb;
    free(kept);
    return GCTX_SUCCESS;
}

gctx_status gctx_claim_events(int device, const char *runtime_dir, gctx_claim_event *events,
                              unsigned capacity, unsigned *count)
{
    return events_of(device, NULL, runtime_dir, events, capacity, count);
}

gctx_status gctx_claim_events_uuid(const char *uuid, const char *runtime_dir,
                                   gctx_claim_event *events, unsigned capacity, unsigned *count)
{
    if (!uuid)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "uuid is NULL");
    return events_of(-1, uuid, runtime_dir, events, capacity, count);
}

gctx_status gctx_claim_report_fault(gctx_claim *claim, int cuda_result)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    gctx__event_record e = {.kind = GCTX_CLAIM_EVENT_FAULT, .cuda_result = cuda_result,
                            .pid = (int)getpid()};
    pthread_mutex_lock(&claim->lock);
    snprintf(e.command, sizeof e.command, "%s", claim->record.command);
    e.sm_count = gctx__granules_sms(&claim->granules.identity.layout, &claim->record.granules);
    long long since = claim->acquired_ns;
    int mps = claim->record.mps;
    pthread_mutex_unlock(&claim->lock);
    gctx__registry reg;
    gctx__event_record *events = NULL;
    unsigned n = 0;
    GCTX_TRY(gctx__claim_registry(claim, &reg));
    gctx_status s;
    /* Stale claims first, so that a tenant that died of the fault is logged before ours;
     * the events read before ours is logged: the other tenant's came first. */
    gctx__record *records = NULL;
    unsigned live = 0;
    GCTX_CHECK(gctx__registry_claims(&reg, &records, &live), done);
    GCTX_CHECK(gctx__registry_events(&reg, &events, &n), done);
    e.time_ns = gctx__now_ns(); /* after the deaths just logged: events sort by time */
    s = gctx__registry_log(&reg, &e);
done:
    free(records);
    gctx__registry_close(&reg);
    if (s != GCTX_SUCCESS) {
        free(events);
        return s;
    }
    /* Without MPS processes are time-sliced and fault-isolated (h200-faults.md: the other
     * tenant ran on untouched), so another tenant's end says nothing about this fault. */
    const gctx__event_record *other = NULL;
    for (unsigned i = 0; mps && !other && i < n; i++)
        if (events[i].kind != GCTX_CLAIM_EVENT_RELEASED && events[i].pid != e.pid &&
            events[i].time_ns >= since)
            other = &events[i];
    const char *name = gctx__cuda_result_name(cuda_result);
    if (other)
        gctx__fail(GCTX_ERROR_DRIVER,
                   "work on this claim's %u SMs failed with %s (%d); another tenant of the GPU, "
                   "pid %d (\"%.80s\", %u SMs), %s %.3f s earlier: under MPS a fatal fault in "
                   "one client reaches every client of the server, so this is most likely its "
                   "fault, not yours. Release the claim and start again",
                   e.sm_count, name, cuda_result, other->pid, other->command, other->sm_count,
                   other->kind == GCTX_CLAIM_EVENT_DIED ? "died" : "faulted",
                   (double)(e.time_ns - other->time_ns) / 1e9);
    else
        gctx__fail(GCTX_ERROR_DRIVER,
                   "work on this claim's %u SMs failed with %s (%d); %s",
                   e.sm_count, name, cuda_result,
                   mps ? "no other tenant of the GPU faulted or died since the claim was taken "
                         "(under MPS a fault of any client would reach this one)"
                       : "this process is not an MPS client, so other tenants' faults do not "
                         "reach it: the fault is this process's own");
    free(events);
    return GCTX_SUCCESS;
}
