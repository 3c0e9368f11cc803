/* The context cache. The driver keeps device memory for every green context destroyed, until
 * the primary context is reset, and takes milliseconds to make one (BENCHMARKS.md): so the
 * driver side of a context waits here, per device, for the next request on the same SMs with
 * the same options. Eviction is the only place one is destroyed, so the limit also bounds
 * what the driver can lose. A context's drained streams (at most GCTX__IDLE_STREAMS) go with
 * it: making one costs a re-partition's largest part once its contexts come from here.
 *
 * The key is what the driver is given: the SM resources' bytes (but nextResource, a pointer),
 * the device and the options. A green context's resource doesn't identify its SMs, so the key
 * of the context a partition comes from stands in for it; an adopted context gives no key,
 * nor anything made from it: never cached. Other bytes for the same SMs are a miss: safe. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_cache.h"
#include "log.h"

#define DEFAULT_LIMIT 16u
/* Every byte of a CUdevResource but nextResource. */
#define RESOURCE_KEY_BYTES offsetof(gcu_dev_resource, nextResource)

/* A context's key, and its driver side's entry once cached: one allocation per context. */
struct gctx__cache_key {
    struct gctx__cache_key *prev, *next; /* in the device's list, most recently cached first */
    gctx__driver_context driver;          /* while cached */
    uint64_t hash;
    size_t size; /* of bytes */
    unsigned char bytes[];
};
typedef gctx__cache_key entry;

typedef struct device_cache {
    entry *newest, *oldest;
    unsigned cached, live, limit;
    unsigned long long hits, misses, evictions;
} device_cache;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static device_cache *devices; /* grown to the highest device seen */
static int nb_devices;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static unsigned env_limit = DEFAULT_LIMIT;
static char env_error[256]; /* "" when GREENCTX_CONTEXT_CACHE is unset or well formed */

static void read_env(void)
{
    const char *v = getenv("GREENCTX_CONTEXT_CACHE");
    if (!v)
        return; /* set but empty is refused: a mistake more often than a choice */
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || n > UINT_MAX) {
        char shown[64];
        gctx__shown(v, shown, sizeof shown);
        snprintf(env_error, sizeof env_error,
                 "GREENCTX_CONTEXT_CACHE is '%s': set it to 0 to turn the context cache off, "
                 "or to how many idle green contexts to keep per device (the default is %u), "
                 "or unset it",
                 shown, DEFAULT_LIMIT);
        return;
    }
    env_limit = (unsigned)n;
}

static gctx_status check_env(void)
{
    pthread_once(&env_once, read_env);
    return env_error[0] ? gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "%s", env_error)
                        : GCTX_SUCCESS;
}

/* The device's cache, growing the table to reach it; NULL when out of memory. Lock held. */
static device_cache *device_of(int device)
{
    if (device < 0)
        return NULL;
    if (device >= nb_devices) {
        device_cache *grown = realloc(devices, (size_t)(device + 1) * sizeof *grown);
        if (!grown)
            return NULL;
        for (int d = nb_devices; d <= device; d++)
            grown[d] = (device_cache){.limit = env_limit};
        devices = grown;
        nb_devices = device + 1;
    }
    return &devices[device];
}

/* ---- keys ---- */

/* Bytes past capacity are only counted: a key too long is measured, then written again. */
typedef struct key_buffer {
    unsigned char *bytes;
    size_t size, capacity;
} key_buffer;

static void put(key_buffer *b, const void *bytes, size_t size)
{
    if (b->size + size <= b->capacity)
        memcpy(b->bytes + b->size, bytes, size);
    b->size += size;
}

/* What identifies a partition's SMs; 0 when nothing does. */
static int put_partition(key_buffer *b, const gctx_partition *p)
{
    if (p->kind == GCTX_PARTITION_CONTEXT) {
        const gctx__cache_key *of = p->context->cache_key;
        if (!of)
            return 0;
        put(b, "C", 1);
        put(b, &of->size, sizeof of->size);
        put(b, of->bytes, of->size);
        return 1;
    }
    put(b, "R", 1);
    put(b, &p->nb_resources, sizeof p->nb_resources);
    for (unsigned i = 0; i < p->nb_resources; i++)
        put(b, &p->resources[i], RESOURCE_KEY_BYTES);
    /* A split of a context's SMs: its outputs are relative to that context. */
    if (p->split && p->split->input->kind == GCTX_PARTITION_CONTEXT)
        return put_partition(b, p->split->input);
    return 1;
}

static int put_key(key_buffer *b, const gctx_partition *p, const gctx_context_options *options)
{
    const struct {
        int device;
        int workqueue_scope;
        unsigned workqueue_limit;
        unsigned create_flags;
    } head = {p->device, options ? (int)options->workqueue_scope : 0,
              options ? options->workqueue_concurrency_limit : 0, GCU_GREEN_CTX_DEFAULT_STREAM};
    b->size = 0;
    put(b, &head, sizeof head);
    return put_partition(b, p);
}

/* FNV-1a over 8-byte words, then the tail's bytes. */
static uint64_t key_hash(const unsigned char *bytes, size_t size)
{
    uint64_t h = 1469598103934665603ull, word;
    size_t i = 0;
    for (; i + sizeof word <= size; i += sizeof word) {
        memcpy(&word, bytes + i, sizeof word);
        h = (h ^ word) * 1099511628211ull;
    }
    for (; i < size; i++)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

/* A lookup's key, in the caller's buffer when it fits, else in one of its own. */
typedef struct lookup_key {
    key_buffer b;
    uint64_t hash;
    int known; /* 0: the SMs can't be recognised, nothing to look up */
} lookup_key;

static gctx_status make_key(const gctx_partition *p, const gctx_context_options *options,
                            unsigned char *buffer, size_t capacity, lookup_key *k)
{
    k->b = (key_buffer){buffer, 0, capacity};
    k->known = put_key(&k->b, p, options);
    if (k->known && k->b.size > capacity) {
        if (!(k->b.bytes = malloc(k->b.size)))
            return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a green context");
        k->b.capacity = k->b.size;
        put_key(&k->b, p, options);
    }
    k->hash = k->known ? key_hash(k->b.bytes, k->b.size) : 0;
    return GCTX_SUCCESS;
}

/* ---- the lists ---- */

static void unlink_entry(device_cache *d, entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        d->newest = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        d->oldest = e->prev;
    d->cached--;
}

static void push_newest(device_cache *d, entry *e)
{
    e->prev = NULL;
    e->next = d->newest;
    if (d->newest)
        d->newest->prev = e;
    else
        d->oldest = e;
    d->newest = e;
    d->cached++;
}

static void evict_beyond(device_cache *d, unsigned keep, entry **victims)
{
    while (d->cached > keep) {
        entry *e = d->oldest;
        unlink_entry(d, e);
        e->next = *victims;
        *victims = e;
        d->evictions++;
    }
}

/* Streams first: the context takes them with it on some drivers. */
static void destroy_idle(const gctx__driver *drv, gctx__idle_streams *idle)
{
    for (unsigned i = 0; i < idle->n; i++)
        GCTX__RELEASE(drv, STREAM, stream, idle->stream[i]);
    idle->n = 0;
}

static void destroy_driver_context(const gctx__driver *drv, gctx__driver_context *driver)
{
    destroy_idle(drv, &driver->idle);
    GCTX__RELEASE(drv, GREEN_CONTEXT, green, driver->green);
    driver->green = NULL;
}

/* Destroys evicted contexts, outside the lock (the driver call takes time). */
static void destroy_victims(entry *victims)
{
    const gctx__driver *drv = NULL;
    gctx__driver_loaded(&drv); /* loaded before anything was cached */
    while (victims) {
        entry *e = victims;
        victims = e->next;
        destroy_driver_context(drv, &e->driver);
        free(e);
    }
}

/* ---- the hooks of context.c ---- */

gctx_status gctx__cache_take(gctx_partition *partition, const gctx_context_options *options,
                             gctx_context *c)
{
    c->cache_key = NULL;
    GCTX_TRY(check_env());
    unsigned char buffer[2048];
    lookup_key k;
    GCTX_TRY(make_key(partition, options, buffer, sizeof buffer, &k));
    if (!k.known)
        return GCTX_SUCCESS;
    int fresh = options && (options->flags & GCTX_CONTEXT_FRESH);
    pthread_mutex_lock(&lock);
    device_cache *d = device_of(partition->device);
    entry *e = NULL;
    int on = d && d->limit > 0;
    for (entry *it = on ? d->newest : NULL; it && !fresh; it = it->next)
        if (it->hash == k.hash && it->size == k.b.size &&
            memcmp(it->bytes, k.b.bytes, it->size) == 0) {
            e = it;
            break;
        }
    if (e) {
        unlink_entry(d, e);
        d->hits++;
    } else if (on) {
        d->misses++;
    }
    pthread_mutex_unlock(&lock);
    gctx_status s = GCTX_SUCCESS;
    if (on) { /* else off, or no memory to track the device: a plain context */
        GCTX__INFO("context cache of device %d: %s for %u SMs", partition->device,
                   e ? "hit" : fresh ? "skipped (GCTX_CONTEXT_FRESH)" : "miss",
                   partition->sm_count);
        if (e) {
            c->driver = e->driver; /* the entry is the new context's key from now on */
        } else if ((e = malloc(sizeof *e + k.b.size))) {
            e->hash = k.hash;
            e->size = k.b.size;
            memcpy(e->bytes, k.b.bytes, k.b.size);
        } else {
            s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a green context");
        }
        c->cache_key = e;
    }
    if (k.b.bytes != buffer)
        free(k.b.bytes);
    return s;
}

void gctx__cache_count_live(const gctx_context *c)
{
    pthread_mutex_lock(&lock);
    device_cache *d = device_of(c->device);
    if (d)
        d->live++;
    pthread_mutex_unlock(&lock);
}

int gctx__cache_give(gctx_context *c)
{
    entry *e = c->cache_key, *victims = NULL;
    int kept = 0;
    pthread_mutex_lock(&lock);
    device_cache *d = device_of(c->device);
    if (d)
        d->live--;
    if (d && e && d->limit > 0 && !gctx__faulted()) { /* after a fault no context is kept */
        e->driver = c->driver;
        e->driver.idle.checked = NULL; /* checked again at its next hand-out */
        push_newest(d, e);
        evict_beyond(d, d->limit, &victims);
        kept = 1;
    }
    pthread_mutex_unlock(&lock);
    destroy_victims(victims);
    if (!kept) {
        const gctx__driver *drv;
        if (c->driver.idle.n && gctx__driver_loaded(&drv))
            destroy_idle(drv, &c->driver.idle);
        free(e);
    }
    c->driver.idle.n = 0;
    c->cache_key = NULL;
    return kept;
}

void gctx__cache_forget(gctx_context *c)
{
    free(c->cache_key);
    c->cache_key = NULL;
}

void gctx__cache_discard(const gctx__driver *drv, gctx_context *c)
{
    destroy_driver_context(drv, &c->driver);
    gctx__cache_forget(c);
}

int gctx__cache_keep_stream(gctx_context *c, CUstream stream, int priority)
{
    int kept = 0;
    pthread_mutex_lock(&lock);
    if (c->cache_key && c->driver.idle.n < GCTX__IDLE_STREAMS) {
        c->driver.idle.stream[c->driver.idle.n] = stream;
        c->driver.idle.priority[c->driver.idle.n] = priority;
        c->driver.idle.n++;
        kept = 1;
    }
    pthread_mutex_unlock(&lock);
    return kept;
}

int gctx__cache_take_stream(gctx_context *c, int priority, CUstream *stream, int *checked)
{
    int taken = 0;
    pthread_mutex_lock(&lock);
    /* Only the context's first stream: the check was made at the context's hand-out. */
    CUstream checked_with_context = c->driver.idle.checked;
    c->driver.idle.checked = NULL;
    *checked = 0;
    for (unsigned i = 0; i < c->driver.idle.n && !taken; i++) {
        if (c->driver.idle.priority[i] == priority) {
            *stream = c->driver.idle.stream[i];
            *checked = *stream == checked_with_context;
            c->driver.idle.n--;
            c->driver.idle.stream[i] = c->driver.idle.stream[c->driver.idle.n];
            c->driver.idle.priority[i] = c->driver.idle.priority[c->driver.idle.n];
            taken = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return taken;
}

/* ---- the public API ---- */

/* Locked on success. cleanup: a trim, which goes on after a fault. */
static gctx_status lock_device(int device, int cleanup, device_cache **out)
{
    const gctx__driver *drv;
    if (!cleanup || !gctx__driver_loaded(&drv))
        GCTX_TRY(gctx__driver_load_green(&drv));
    GCTX_TRY(gctx__check_device(drv, device));
    GCTX_TRY(check_env());
    pthread_mutex_lock(&lock);
    if (!(*out = device_of(device))) {
        pthread_mutex_unlock(&lock);
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory for device %d's context cache",
                          device);
    }
    return GCTX_SUCCESS;
}

gctx_status gctx_cache_get_limit(int device, unsigned *limit)
{
    GCTX_TRY_OUTPUT(limit);
    device_cache *d;
    GCTX_TRY(lock_device(device, 0, &d));
    *limit = d->limit;
    pthread_mutex_unlock(&lock);
    return GCTX_SUCCESS;
}

static gctx_status shrink(int device, int set_limit, unsigned keep)
{
    device_cache *d;
    GCTX_TRY(lock_device(device, 1, &d));
    entry *victims = NULL;
    if (set_limit)
        d->limit = keep;
    evict_beyond(d, keep, &victims);
    pthread_mutex_unlock(&lock);
    destroy_victims(victims);
    return GCTX_SUCCESS;
}

gctx_status gctx_cache_set_limit(int device, unsigned limit) { return shrink(device, 1, limit); }

gctx_status gctx_cache_trim(int device) { return shrink(device, 0, 0); }

gctx_status gctx_cache_get_stats(int device, gctx_cache_stats *stats)
{
    GCTX_TRY(gctx__sized_check(stats, GCTX__MIN_CACHE_STATS, "stats", "GCTX_CACHE_STATS_INIT"));
    device_cache *d;
    GCTX_TRY(lock_device(device, 0, &d));
    gctx_cache_stats out = {.size = sizeof out, .hits = d->hits, .misses = d->misses,
                            .evictions = d->evictions, .cached = d->cached, .live = d->live,
                            .limit = d->limit};
    pthread_mutex_unlock(&lock);
    gctx__sized_out(stats, &out, sizeof out);
    return GCTX_SUCCESS;
}
