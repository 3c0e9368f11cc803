/* Claims: acquiring SMs in the registry, the claim object and what it gives. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claim.h"
#include "log.h"

/* ---- what this process holds: `self` in listings ---- */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static gctx_claim **held;
static unsigned nb_held, held_capacity;
static pthread_once_t forks_watched = PTHREAD_ONCE_INIT;
static unsigned forks_seen; /* fork children this process is (of processes holding claims) */

/* A fork's child shares its parent's claim descriptions, and so their locks: it closes its
 * copies of the claims its parent made for itself (a claim handed to members it holds as one
 * of them). `making`: claim files not in `held` yet, which a child closes too. Under
 * held_lock. */
static int making[8];
static unsigned nb_making;

static void drop_own_claims_in_child(void)
{
    for (unsigned i = 0; i < nb_making; i++)
        close(making[i]);
    nb_making = 0;
    for (unsigned i = 0; i < nb_held;) {
        gctx_claim *c = held[i];
        if (c->inherit || c->joined) {
            i++;
            continue;
        }
        close(c->fd);
        c->fd = -1; /* its release drops the record only once nobody holds it */
        held[i] = held[--nb_held];
    }
    forks_seen++;
    pthread_mutex_unlock(&held_lock); /* the forking thread's, taken by lock_held */
}

unsigned gctx__claim_forks_seen(void)
{
    pthread_mutex_lock(&held_lock);
    unsigned n = forks_seen;
    pthread_mutex_unlock(&held_lock);
    return n;
}

static void lock_held(void) { pthread_mutex_lock(&held_lock); }
static void unlock_held(void) { pthread_mutex_unlock(&held_lock); }
static void watch_forks(void) { pthread_atfork(lock_held, unlock_held, drop_own_claims_in_child); }

/* A claim file made with no fork in between: a child forked after closes it. */
static gctx_status add_claim_file(gctx__registry *reg, gctx__record *record, int inherit, int *fd)
{
    pthread_once(&forks_watched, watch_forks);
    pthread_mutex_lock(&held_lock);
    gctx_status s = nb_making < sizeof making / sizeof making[0]
                        ? gctx__registry_add(reg, record, inherit, fd)
                        : gctx__fail(GCTX_ERROR_BUSY, "%u claims are being made at once in this "
                                                      "process: try again",
                                     nb_making);
    if (s == GCTX_SUCCESS && !inherit)
        making[nb_making++] = *fd;
    pthread_mutex_unlock(&held_lock);
    return s;
}

/* fd's claim is in `held`, or fd closed: no longer one being made (held_lock held). */
static void made(int fd)
{
    for (unsigned i = 0; i < nb_making; i++)
        if (making[i] == fd) {
            making[i] = making[--nb_making];
            return;
        }
}

/* fd: an inherited copy of c's claim file no claim here owns (held_lock held)? */
static int unowned_copy(const gctx_claim *c, int fd)
{
    struct stat st;
    int flags = fcntl(fd, F_GETFD);
    if (fd == c->fd || flags < 0 || (flags & FD_CLOEXEC) || fstat(fd, &st) != 0 ||
        st.st_dev != c->file_dev || st.st_ino != c->file_ino)
        return 0;
    for (unsigned i = 0; i < nb_held; i++)
        if (held[i]->fd == fd)
            return 0;
    return 1;
}

/* Counts c as this process's, its descriptor moved to `inherited` when that is an unowned
 * copy: one step under held_lock, so two joins of one token never both take the number. */
static int hold(gctx_claim *c, int inherited)
{
    pthread_once(&forks_watched, watch_forks);
    pthread_mutex_lock(&held_lock);
    unsigned cap = nb_held < held_capacity ? held_capacity : held_capacity ? 2 * held_capacity : 8;
    gctx_claim **grown = cap == held_capacity ? held : realloc(held, cap * sizeof *grown);
    int ok = grown != NULL;
    if (ok) {
        held = grown;
        held_capacity = cap;
        made(c->fd);
        if (inherited >= 0 && unowned_copy(c, inherited) &&
            dup3(c->fd, inherited, O_CLOEXEC) == inherited) {
            close(c->fd);
            c->fd = inherited;
        }
        held[nb_held++] = c;
    }
    c->made_in = forks_seen;
    pthread_mutex_unlock(&held_lock);
    return ok;
}

gctx_status gctx__claim_fd_check(const gctx_claim *c)
{
    struct stat st;
    if (c->fd >= 0 && fstat(c->fd, &st) == 0 && st.st_dev == c->file_dev &&
        st.st_ino == c->file_ino)
        return GCTX_SUCCESS;
    return gctx__fail(GCTX_ERROR_REGISTRY,
                      "the claim %s/%s lost its lock: its descriptor %d was closed by the "
                      "program (closefrom(3), or a loop closing inherited descriptors), and "
                      "the SMs were free for other tenants from the moment no process held "
                      "it. Close descriptors before claiming, or keep the claim's open",
                      c->registry_dir, c->file, c->fd);
}

int gctx__claim_held_here(const char *dir, const char *file)
{
    int found = 0;
    pthread_mutex_lock(&held_lock);
    for (unsigned i = 0; i < nb_held && !found; i++) {
        const gctx_claim *c = held[i];
        char mine[600];
        snprintf(mine, sizeof mine, "gpu-%s", c->granules.identity.uuid);
        const char *base = strrchr(dir, '/');
        found = strcmp(c->file, file) == 0 && base && strcmp(base + 1, mine) == 0;
    }
    pthread_mutex_unlock(&held_lock);
    return found;
}

/* ---- the holder ---- */

/* Who this process is, asked once (an exec starts a new copy of these). */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
static char self_command[256], self_user[64];
static int self_known;
static unsigned self_uid;

static void read_command(char *out, size_t size)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0) {
        snprintf(out, size, "pid %d", (int)getpid());
        return;
    }
    out[n] = '\0';
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    while (n > 0 && out[n - 1] == ' ')
        out[--n] = '\0';
}

static void read_user(unsigned uid, char *out, size_t size)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &found) == 0 && found)
        snprintf(out, size, "%s", found->pw_name);
    else
        snprintf(out, size, "%u", uid);
}

static void fill_holder(gctx__record *r, const gctx_claim_options *opts, int mps)
{
    memset(r, 0, sizeof *r);
    r->pid = (int)getpid();
    r->uid = (unsigned)geteuid();
    pthread_mutex_lock(&self_lock);
    if (!self_known)
        read_command(self_command, sizeof self_command);
    if (!self_known || self_uid != r->uid)
        read_user(r->uid, self_user, sizeof self_user);
    self_uid = r->uid;
    self_known = 1;
    snprintf(r->user, sizeof r->user, "%s", self_user);
    snprintf(r->command, sizeof r->command, "%s", opts->command ? opts->command : self_command);
    pthread_mutex_unlock(&self_lock);
    snprintf(r->label, sizeof r->label, "%s", opts->label ? opts->label : "");
    r->mps = mps;
    r->tenant_class = opts->tenant_class;
    r->target_ms = opts->target_ms;
    r->target_factor = opts->target_factor;
}

/* ---- the registry, as the acquiring and resizing calls see it ---- */

gctx_status gctx__claim_registry(const gctx_claim *c, gctx__registry *reg)
{
    return gctx__registry_open(c->runtime_dir[0] ? c->runtime_dir : NULL, c->dir_flags, 1,
                               &c->granules.identity, reg);
}

gctx_status gctx__claim_free(gctx__registry *reg, gctx__granules *free_set,
                             gctx__record **records, unsigned *count)
{
    GCTX_TRY(gctx__registry_claims(reg, records, count));
    memset(free_set, 0, sizeof *free_set);
    for (unsigned i = 0; i < gctx__layout_count(&reg->identity.layout); i++)
        gctx__granules_add(free_set, i);
    for (unsigned i = 0; i < *count; i++)
        *free_set = gctx__granules_minus(free_set, &(*records)[i].granules);
    return GCTX_SUCCESS;
}

/* Else, with rounding, the nearest count avail gives in the rounding's direction. */
static int choose_rounded(const gctx__granule_layout *l, unsigned count, gctx_rounding rounding,
                          const gctx__granules *avail, const gctx__granules *held,
                          gctx__granules *target)
{
    if (gctx__granules_choose(l, count, avail, held, target))
        return 1;
    if (count == 0 || rounding == GCTX_ROUND_STRICT)
        return 0;
    unsigned total = gctx__layout_total(l);
    for (unsigned d = 1; d <= total; d++) {
        int up = rounding != GCTX_ROUND_DOWN && count + d <= total;
        int down = rounding != GCTX_ROUND_UP && d < count;
        /* nearest: ties go up, as the device-wide rounding's do */
        if (up && gctx__layout_claimable(l, count + d) &&
            gctx__granules_choose(l, count + d, avail, held, target))
            return 1;
        if (down && gctx__layout_claimable(l, count - d) &&
            gctx__granules_choose(l, count - d, avail, held, target))
            return 1;
    }
    return 0;
}

static gctx_status busy(const gctx__identity *id, int device, unsigned count,
                        const gctx__granules *free_set, const gctx__record *records, unsigned nb,
                        int waited_ms)
{
    char holders[1024] = "";
    size_t n = 0;
    for (unsigned i = 0; i < nb && n < sizeof holders; i++)
        n += (size_t)snprintf(holders + n, sizeof holders - n, "%spid %d (%s, \"%.60s\", %u SMs)",
                              i ? ", " : "", records[i].pid, records[i].user,
                              records[i].command,
                              gctx__granules_sms(&id->layout, &records[i].granules));
    /* What would work now: the largest count the free granules give. */
    unsigned most = 0;
    gctx__granules none = {{0}}, fit;
    for (unsigned c = gctx__granules_sms(&id->layout, free_set); c > 0 && !most; c--)
        if (gctx__layout_claimable(&id->layout, c) &&
            gctx__granules_choose(&id->layout, c, free_set, &none, &fit))
            most = c;
    /* and the count rounding down gives, which may be below the most */
    unsigned down = 0;
    if (count && choose_rounded(&id->layout, count, GCTX_ROUND_DOWN, free_set, &none, &fit))
        down = gctx__granules_sms(&id->layout, &fit);
    char asked[48], waited[48] = "", now[96] = "";
    if (most && down && down != most)
        snprintf(now, sizeof now, " (%u can be claimed now, %u rounding down)", most, down);
    else if (most)
        snprintf(now, sizeof now, " (%u can be claimed now)", most);
    if (count)
        snprintf(asked, sizeof asked, "%u SMs", count);
    else
        snprintf(asked, sizeof asked, "the rest (every free SM)");
    if (waited_ms >= 0)
        snprintf(waited, sizeof waited, " after waiting %d ms", waited_ms);
    return gctx__fail(GCTX_ERROR_BUSY,
                      "%s of device %d (%s) can't be claimed now%s: %u of its %u SMs are "
                      "free%s; held by %s. Wait for them (GCTX_CLAIM_WAIT with a timeout, "
                      "greenctx run --wait), ask for fewer SMs, or see greenctx ps",
                      asked, device, id->uuid, waited, gctx__granules_sms(&id->layout, free_set),
                      gctx__layout_total(&id->layout), now, nb ? holders : "nobody");
}

gctx_status gctx__claim_take(const gctx__take *take, gctx__record *record, int *fd,
                             gctx__granules *target)
{
    const gctx_claim_options *opts = take->opts;
    unsigned count = take->count;
    long long start = clock_now_ns();
    unsigned step = 5;
    int wait = (opts->flags & GCTX_CLAIM_WAIT) != 0, watch_made = 0;
    gctx__want want = GCTX__WANT_NONE;
    gctx__watch watch = GCTX__WATCH_NONE;
    gctx__watch_pool *prepare = NULL;
    const gctx__granules held = record->granules;
    const gctx__granule_layout *layout = &take->identity->layout;
    gctx__registry reg;
    gctx__record *records = NULL;
    gctx_status s;
    for (;; free(records), records = NULL) {
        unsigned nb = 0;
        gctx__granules free_set = {{0}};
        GCTX_CHECK(gctx__registry_open(take->runtime_dir, take->dir_flags, 1, take->identity, &reg),
                   done);
        s = gctx__claim_free(&reg, &free_set, &records, &nb);
        gctx__granules avail = gctx__granules_union(&free_set, &held);
        int chosen = s == GCTX_SUCCESS &&
                     choose_rounded(layout, count, opts->rounding, &avail, &held, target);
        if (chosen) {
            gctx__granules taken = gctx__granules_union(&held, target);
            int adds = gctx__granules_count(&taken) != gctx__granules_count(&held);
            record->granules = taken;
            record->since_ns = gctx__now_ns();
            if (fd)
                s = add_claim_file(&reg, record, take->inherit, fd);
            else if (adds)
                s = gctx__registry_rewrite(&reg, record);
            if (s != GCTX_SUCCESS)
                record->granules = held;
            /* A latency claim waits to grow: its watch made now, not in a burst's wait. */
            else if (opts->priority >= GCTX_CLAIM_PRIORITY_LATENCY)
                prepare = gctx__registry_watches(&reg);
        } else if (s == GCTX_SUCCESS) {
            s = GCTX_ERROR_BUSY;
            /* What holders must give back: the SMs beyond those free to it (the left-over
             * SMs go with "rest" only, never towards a count), or, when the free ones add up
             * but no set of them gives the count, one more granule. */
            unsigned have = gctx__granules_sms(layout, &avail) -
                            gctx__uncounted_sms(layout, &avail);
            if (wait)
                gctx__want_post(&reg, &want, count > have ? count - have : layout->regular_sms,
                                opts->priority, take->file);
            if (wait && watch.fd >= 0) /* the changes this pass has seen */
                gctx__watch_drain(watch.fd);
            else if (wait)
                gctx__watch_borrow(&reg, &watch);
        }
        gctx__registry_close(&reg); /* reg.dir still names it */
        if (chosen || s != GCTX_ERROR_BUSY)
            break;
        /* None idle: one made once, then a look again, as frees meanwhile woke nobody. */
        if (wait && watch.fd < 0 && !watch_made) {
            watch_made = 1;
            if (gctx__watch_make(&watch, reg.dir))
                continue;
        }
        if (wait && gctx__claim_wait_step(start, opts->timeout_ms, &step, watch.fd))
            continue;
        s = busy(take->identity, take->device, count, &free_set, records, nb,
                             wait ? (int)((clock_now_ns() - start) / 1000000) : -1);
        break;
    }
done:
    free(records);
    gctx__want_end(&want);
    gctx__watch_return(&watch);
    if (prepare)
        gctx__watch_prepare(prepare, reg.dir);
    return s;
}

/* ---- the object ---- */

void gctx__claim_parts_release(gctx__claim_parts *p)
{
    gctx_event_release(p->event);
    gctx_stream_release(p->stream);
    gctx_context_release(p->context);
    gctx_partition_release(p->partition);
    memset(p, 0, sizeof *p);
}

/* Its work is done before another tenant gets the SMs; a fault's is logged. */
static void wait_idle(gctx_context *context)
{
    gctx_event *event = NULL;
    if (!context)
        return;
    gctx_status s = gctx_event_create(context, &event);
    if (s == GCTX_SUCCESS)
        s = gctx_event_record_context(event, context);
    if (s == GCTX_SUCCESS)
        s = gctx_event_synchronize(event);
    if (s != GCTX_SUCCESS)
        GCTX__INFO("a claim's context was not waited for before its SMs went back: %s",
                   gctx_last_error());
    gctx_event_release(event);
}

/* fd closed, the claim file dropped once nobody holds it and c unheld, in one step under
 * held_lock: no join takes the number meanwhile, no fork keeps a copy nobody closes. */
static void claim_end(gctx_claim *c, int fd, int log)
{
    gctx__error_state kept;
    gctx__error_save(&kept);
    gctx__claim_publisher_end(c);
    gctx__guard_watch_end(c);
    gctx__claim_parts_release(&c->old);
    gctx__claim_parts_release(&c->now);
    gctx__registry reg;
    int opened = gctx__claim_registry(c, &reg) == GCTX_SUCCESS;
    pthread_mutex_lock(&held_lock);
    made(fd);
    if (opened)
        gctx__registry_drop(&reg, &c->record, fd, log);
    else if (fd >= 0)
        close(fd); /* the claim is stale from now on: the next listing removes it */
    for (unsigned i = 0; i < nb_held; i++) /* no longer this process's */
        if (held[i] == c) {
            held[i] = held[--nb_held];
            break;
        }
    pthread_mutex_unlock(&held_lock);
    if (opened)
        gctx__registry_close(&reg);
    gctx__error_restore(&kept);
    gctx__device_granules_end(&c->granules);
    pthread_mutex_destroy(&c->guard_lock);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void claim_destroy(gctx__object *object)
{
    gctx_claim *c = (gctx_claim *)object;
    gctx__error_state kept;
    gctx__error_save(&kept);
    wait_idle(c->now.context);
    wait_idle(c->old.context);
    int fd = c->fd;
    if (fd >= 0 && gctx__claim_fd_check(c) != GCTX_SUCCESS) {
        GCTX__INFO("%s", gctx_last_error());
        fd = -1; /* the number may be another file's now */
    }
    gctx__error_restore(&kept);
    claim_end(c, fd, 1);
}

gctx_status gctx__claim_new(gctx__device_granules *granules, const char *runtime_dir,
                            unsigned dir_flags, int inherit, int joined,
                            const gctx__record *record, int fd, int inherited, gctx_claim **out)
{
    gctx_claim *c = calloc(1, sizeof *c);
    if (!c) {
        pthread_mutex_lock(&held_lock);
        made(fd);
        pthread_mutex_unlock(&held_lock);
        close(fd);
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a claim");
    }
    /* floor_sms: one granule, unless acquire's option sets it. */
    *c = (gctx_claim){.device = granules->device, .granules = *granules, .dir_flags = dir_flags,
                      .inherit = inherit, .joined = joined, .record = *record,
                      .tenant_class = record->tenant_class, .target_ms = record->target_ms,
                      .target_factor = record->target_factor, .fd = fd,
                      .acquired_ns = gctx__now_ns(), .guard_watch = -1,
                      .floor_sms = granules->identity.layout.regular_sms};
    granules->whole = NULL; /* the claim holds it now */
    snprintf(c->runtime_dir, sizeof c->runtime_dir, "%s", runtime_dir ? runtime_dir : "");
    snprintf(c->file, sizeof c->file, "%s", record->file);
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->guard_lock, NULL);
    char root[512];
    int shared;
    struct stat st;
    gctx_status s;
    GCTX_CHECK(gctx__runtime_path(runtime_dir, dir_flags, root, sizeof root, &shared), fail);
    GCTX_CHECK(gctx__registry_path(root, c->granules.identity.uuid, c->registry_dir,
                                   sizeof c->registry_dir),
               fail);
    if (fstat(fd, &st) != 0) {
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claim file %s/%s: %s",
                       c->registry_dir, c->file, strerror(errno));
        goto fail;
    }
    c->file_dev = st.st_dev;
    c->file_ino = st.st_ino;
    GCTX_CHECK(gctx__granules_partition(&c->granules, &c->record.granules, &c->now.partition),
               fail);
    if (!hold(c, inherited)) {
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a claim");
        goto fail;
    }
    GCTX_CHECK(gctx__object_init(&c->base, GCTX__TYPE_CLAIM, claim_destroy), fail);
    *out = c;
    return GCTX_SUCCESS;
fail:
    claim_end(c, c->fd, 0);
    return s;
}

/* Refuses a claim inside an MPS client held below 100 %; *running: an MPS daemon answers. */
static gctx_status refuse_partial_mps(int *running)
{
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    GCTX_TRY(gctx_mps_get_info(&mps));
    *running = mps.daemon_running;
    if (mps.active_thread_percentage < 100)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is %d: below 100 the driver refuses "
                          "green splits inside an MPS client (CUDA_ERROR_INVALID_RESOURCE_"
                          "CONFIGURATION), and the percentage only caps SMs, it reserves none. "
                          "Unset it (or set 100) and let the claim reserve the SMs",
                          mps.active_thread_percentage);
    return GCTX_SUCCESS;
}

gctx_status gctx__claim_options(const gctx_claim_options *options, gctx_claim_options *opts)
{
    gctx_claim_options defaults = GCTX_CLAIM_OPTIONS_INIT;
    *opts = defaults;
    if (options)
        GCTX_TRY(gctx__sized_in(opts, sizeof *opts, options, GCTX__MIN_CLAIM_OPTIONS, "options",
                                "GCTX_CLAIM_OPTIONS_INIT"));
    unsigned known = GCTX_CLAIM_WAIT | GCTX_CLAIM_INHERIT | GCTX_CLAIM_SHARED_DIR;
    if (opts->flags & ~known)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->flags has unknown bits 0x%x: use GCTX_CLAIM_WAIT, "
                          "GCTX_CLAIM_INHERIT and GCTX_CLAIM_SHARED_DIR",
                          opts->flags & ~known);
    if ((unsigned)opts->rounding > GCTX_ROUND_UP)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->rounding is %d: use a gctx_rounding value",
                          (int)opts->rounding);
    if (opts->timeout_ms < -1)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->timeout_ms is %d: give milliseconds, or -1 to wait forever",
                          opts->timeout_ms);
    size_t label_max = sizeof ((gctx_claim_info *)0)->label - 1;
    if (opts->label && strlen(opts->label) > label_max)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->label is %zu bytes: at most %zu (the registry and "
                          "gctx_claim_info keep it whole, not cut)",
                          strlen(opts->label), label_max);
    if (opts->priority < 0 || opts->priority > 100)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->priority is %d: give 0 .. 100 "
                          "(GCTX_CLAIM_PRIORITY_THROUGHPUT %d, GCTX_CLAIM_PRIORITY_LATENCY %d)",
                          opts->priority, GCTX_CLAIM_PRIORITY_THROUGHPUT,
                          GCTX_CLAIM_PRIORITY_LATENCY);
    return gctx__claim_class_check(opts);
}

gctx_status gctx_claim_count(int device, const char *request, gctx_rounding rounding,
                             unsigned *sm_count, unsigned *at_once)
{
    GCTX_TRY_OUTPUT(sm_count);
    if ((unsigned)rounding > GCTX_ROUND_UP)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "rounding %d is not a gctx_rounding value", (int)rounding);
    gctx__request req;
    gctx__device_granules granules;
    GCTX_TRY(gctx__request_parse(request, &req));
    GCTX_TRY(gctx__device_granules_get(device, &granules));
    unsigned count = 0;
    gctx_status s;
    GCTX_CHECK(gctx__request_count(&granules.identity.layout, &req, rounding, &count), done);
    *sm_count = count;
    if (at_once)
        *at_once = gctx__layout_fit(&granules.identity.layout, count);
done:
    gctx__device_granules_end(&granules);
    return s;
}

gctx_status gctx_claim_acquire(int device, const char *request, const gctx_claim_options *options,
                               gctx_claim **claim)
{
    GCTX_TRY_OUTPUT(claim);
    gctx_claim_options opts;
    gctx__request req;
    int mps = 0;
    gctx__device_granules granules;
    GCTX_TRY(gctx__claim_options(options, &opts));
    GCTX_TRY(gctx__request_parse(request, &req));
    GCTX_TRY(refuse_partial_mps(&mps));
    GCTX_TRY(gctx__device_granules_get(device, &granules));
    unsigned count = 0;
    gctx_claim *c;
    gctx_status s;
    GCTX_CHECK(gctx__request_count(&granules.identity.layout, &req, opts.rounding, &count), done);
    gctx__take take = {.device = device, .identity = &granules.identity,
                       .runtime_dir = opts.runtime_dir,
                       .dir_flags = opts.flags & GCTX_CLAIM_SHARED_DIR,
                       .inherit = (opts.flags & GCTX_CLAIM_INHERIT) != 0, .file = "",
                       .count = count, .opts = &opts};
    gctx__record record;
    fill_holder(&record, &opts, mps);
    int fd = -1;
    gctx__granules chosen;
    GCTX_CHECK(gctx__claim_take(&take, &record, &fd, &chosen), done);
    GCTX_CHECK(gctx__claim_new(&granules, opts.runtime_dir, take.dir_flags, take.inherit, 0,
                               &record, fd, -1, &c),
               done);
    atomic_store(&c->priority, opts.priority);
    if (opts.floor_sms)
        c->floor_sms = opts.floor_sms;
    *claim = gctx__handle_give(&c->base);
done:
    gctx__device_granules_end(&granules); /* nothing once the claim holds them */
    return s;
}

/* A release's side effects (the claim file dropped, RELEASED logged) are claim_destroy's. */
GCTX__HANDLE_REFS(claim, CLAIM)

/* ---- what a claim gives ---- */

gctx_status gctx_claim_partition(gctx_claim *claim, gctx_partition **partition)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY_OUTPUT(partition);
    pthread_mutex_lock(&claim->lock);
    *partition = gctx_partition_retain(claim->now.partition);
    pthread_mutex_unlock(&claim->lock);
    return GCTX_SUCCESS;
}

static gctx_status own_context(gctx_claim *c)
{
    gctx__claim_parts *p = &c->now;
    return p->context ? GCTX_SUCCESS : gctx_context_create(p->partition, NULL, &p->context);
}

gctx_status gctx_claim_context(gctx_claim *claim, const gctx_context_options *options,
                               gctx_context **context)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY_OUTPUT(context);
    gctx_status s;
    pthread_mutex_lock(&claim->lock);
    /* With options, a context of its own; without, the claim's. */
    if (options)
        s = gctx_context_create(claim->now.partition, options, context);
    else if (!(s = own_context(claim)))
        *context = gctx_context_retain(claim->now.context);
    pthread_mutex_unlock(&claim->lock);
    return s;
}

gctx_status gctx__claim_own_stream(gctx_claim *c, gctx_stream **stream)
{
    GCTX_TRY(own_context(c));
    if (!c->now.stream)
        GCTX_TRY(gctx_stream_create(c->now.context, NULL, &c->now.stream));
    *stream = gctx_stream_retain(c->now.stream);
    return GCTX_SUCCESS;
}

gctx_status gctx_claim_stream(gctx_claim *claim, gctx_stream **stream)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY_OUTPUT(stream);
    pthread_mutex_lock(&claim->lock);
    gctx_status s = gctx__claim_own_stream(claim, stream);
    pthread_mutex_unlock(&claim->lock);
    return s;
}

void gctx__claim_info(const gctx__record *r, const gctx__identity *id, int device, int self,
                      gctx_claim_info *out)
{
    *out = (gctx_claim_info){.size = sizeof *out, .device = device, .pid = r->pid, .uid = r->uid,
                             .since_ns = r->since_ns, .mps = r->mps, .self = self,
                             .sm_count = gctx__granules_sms(&id->layout, &r->granules)};
    snprintf(out->device_uuid, sizeof out->device_uuid, "%s", id->uuid);
    snprintf(out->user, sizeof out->user, "%s", r->user);
    snprintf(out->command, sizeof out->command, "%s", r->command);
    snprintf(out->label, sizeof out->label, "%s", r->label);
    for (unsigned i = 0; i < gctx__layout_count(&id->layout); i++)
        if (gctx__granules_has(&r->granules, i))
            out->granules[out->nb_granules++] = (unsigned short)i;
}

gctx_status gctx_claim_get_info(const gctx_claim *claim, gctx_claim_info *info)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY(gctx__sized_check(info, GCTX__MIN_CLAIM_INFO, "info", "GCTX_CLAIM_INFO_INIT"));
    gctx_claim *c = (gctx_claim *)claim;
    gctx_claim_info out;
    /* A copy: a resize replaces the record, and the state line is read outside the lock. */
    pthread_mutex_lock(&c->lock);
    gctx__record record = c->record;
    gctx__claim_info(&record, &c->granules.identity, c->device, 1, &out);
    pthread_mutex_unlock(&c->lock);
    gctx__claim_state_info(c->registry_dir, &record, &out);
    gctx__sized_out(info, &out, sizeof out);
    return GCTX_SUCCESS;
}
