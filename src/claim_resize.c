/* Resizing a live claim: new granules are taken in the registry before anything runs on them,
 * dropped ones given back only once the work on them has finished; the claim's stream moves
 * to a context on the new SMs that waits (an event) for the old one's work. Only a claim's
 * sole member resizes it: other members' work is nothing this one can wait for. */
#include <string.h>
#include <sys/file.h>

#include "claim.h"

/* What a resize makes before it changes the claim, all or nothing. */
static gctx_status build(gctx_claim *c, const gctx__granules *target, int shrinks,
                         gctx__claim_parts *p)
{
    const gctx__claim_parts *now = &c->now;
    memset(p, 0, sizeof *p);
    GCTX_TRY(gctx__granules_partition(&c->granules, target, &p->partition));
    GCTX_TRY(gctx_context_create(p->partition, NULL, &p->context));
    if (now->context && (now->stream || shrinks))
        GCTX_TRY(gctx_event_create(now->context, &p->event));
    if (now->stream) {
        GCTX_TRY(gctx_stream_create(p->context, NULL, &p->stream));
        GCTX_TRY(gctx_event_record(p->event, now->stream));
        GCTX_TRY(gctx_stream_wait_event(p->stream, p->event));
    }
    /* Every stream of the claim's context, not only its own stream, ran on the SMs given
     * back: their work must be done before another tenant may be handed them. */
    if (shrinks && now->context) {
        GCTX_TRY(gctx_event_record_context(p->event, now->context));
        GCTX_TRY(gctx_event_synchronize(p->event));
    }
    return GCTX_SUCCESS;
}

/* The record back to `record` (NULL: left) and the claim shared again (LOCK_SH), as the
 * resize's last step under the same registry lock. */
static gctx_status write_record(gctx_claim *c, const gctx__record *record)
{
    gctx__registry reg;
    gctx_status s = gctx__claim_registry(c, &reg);
    if (s == GCTX_SUCCESS && record)
        s = gctx__registry_rewrite(&reg, record);
    if (c->alone)
        flock(c->fd, LOCK_SH);
    c->alone = 0;
    gctx__registry_close(&reg);
    return s;
}

/* LOCK_EX for the resize: BUSY while another member holds it; keeps members from joining. */
static gctx_status take_alone(gctx_claim *c)
{
    gctx__registry reg;
    gctx_status s;
    GCTX_TRY(gctx__claim_registry(c, &reg));
    GCTX_CHECK(gctx__claim_fd_check(c), done);
    if (c->made_in != gctx__claim_forks_seen()) {
        s = gctx__fail(GCTX_ERROR_BUSY,
                       "the claim %s was made in a process this one is a fork of: they share "
                       "its hold, and a resize here would move SMs from under its work. Resize "
                       "it there, or release it here and claim anew",
                       c->file);
        goto done;
    }
    if (flock(c->fd, LOCK_EX | LOCK_NB) == 0) {
        c->alone = 1;
        goto done;
    }
    int err = errno;
    /* A failed conversion dropped the LOCK_SH (flock(2)): taken again at once. */
    if (flock(c->fd, LOCK_SH | LOCK_NB) != 0 || err != EWOULDBLOCK)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't lock the claim %s/%s: %s", reg.dir, c->file,
                       strerror(err != EWOULDBLOCK ? err : errno));
    else
        s = gctx__fail(GCTX_ERROR_BUSY,
                       "the claim %s/%s is shared: another process holds it too (a member that "
                       "joined it with gctx_claim_join, as greenctx run's program and its "
                       "children do, or a child that inherited it), and a resize here would "
                       "move SMs from under that member's work. Resize it once this process "
                       "is its only holder, or claim the SMs that member doesn't need apart",
                       reg.dir, c->file);
done:
    gctx__registry_close(&reg);
    return s;
}

static gctx_status resize_locked(gctx_claim *c, unsigned count, const gctx_claim_options *opts)
{
    gctx__record taken = c->record;
    gctx__granules target;
    gctx__take take = {.device = c->device, .identity = &c->granules.identity,
                       .runtime_dir = c->runtime_dir, .dir_flags = c->dir_flags,
                       .file = c->file, .count = count, .opts = opts};
    GCTX_TRY(gctx__claim_take(&take, &taken, NULL, &target));
    gctx__granules dropped = gctx__granules_minus(&c->record.granules, &target);
    gctx__granules added = gctx__granules_minus(&target, &c->record.granules);
    if (!gctx__granules_count(&dropped) && !gctx__granules_count(&added))
        return GCTX_SUCCESS;
    gctx_status s;
    gctx__claim_parts parts;
    int shrinks = gctx__granules_count(&dropped) > 0;
    gctx__record final = taken;
    final.granules = target;
    /* The last resize's old parts, released first: the cache serves their context again. */
    gctx__claim_parts_release(&c->old);
    GCTX_CHECK(build(c, &target, shrinks, &parts), fail);
    if (shrinks)
        GCTX_CHECK(write_record(c, &final), fail);
    /* The claim takes the new objects; the ones it had are kept until the next resize. */
    c->old = c->now;
    c->old.event = parts.event;
    c->now = parts;
    c->now.event = NULL;
    c->record = final;
    return GCTX_SUCCESS;
fail:;
    gctx__error_state kept;
    gctx__error_save(&kept);
    gctx__claim_parts_release(&parts);
    if (gctx__granules_count(&added))
        write_record(c, &c->record);
    gctx__error_restore(&kept);
    return s;
}

gctx_status gctx_claim_resize(gctx_claim *claim, const char *request,
                              const gctx_claim_options *options, gctx_stream **stream)
{
    gctx_claim_options opts;
    gctx__request req;
    unsigned count;
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY(gctx__claim_options(options, &opts));
    GCTX_TRY(gctx__request_parse(request, &req));
    GCTX_TRY(gctx__request_count(&claim->granules.identity.layout, &req, opts.rounding, &count));
    gctx_status s;
    pthread_mutex_lock(&claim->lock);
    if (options)
        atomic_store(&claim->priority, opts.priority);
    GCTX_CHECK(take_alone(claim), done);
    s = resize_locked(claim, count, &opts);
    gctx__error_state kept;
    gctx__error_save(&kept);
    if (claim->alone) /* the resize's last step was not a write_record */
        write_record(claim, NULL);
    gctx__error_restore(&kept);
    if (s == GCTX_SUCCESS && stream)
        s = gctx__claim_own_stream(claim, stream);
done:
    pthread_mutex_unlock(&claim->lock);
    return s;
}
