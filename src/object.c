/* Reference counts, and public handles that encode a slot of the handle table and its
 * generation, not the object's address: a released handle is refused even when malloc gives
 * its memory to a new object. A slot's generation is odd while a handle is out and only grows.
 * Callers' references are counted per handle, which holds one object reference, so a caller's
 * extra release retires at most its handle. Lookups take no lock. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testing.h" /* the hooks defined at the end */

#define CHUNK_BITS 10
#define CHUNK_SLOTS (1u << CHUNK_BITS)
#define MAX_CHUNKS 1024u /* about a million objects alive at once */
#define INDEX_BITS 20    /* log2(CHUNK_SLOTS * MAX_CHUNKS) */
/* The low bit of a handle is always 1 (never NULL, never an object's aligned address); then
 * the slot index; then the generation in what is left of the pointer. */
#define GEN_BITS (sizeof(uintptr_t) * 8 - 1 - INDEX_BITS)
#define GEN_MASK ((((uintptr_t)1) << GEN_BITS) - 1)

typedef struct slot {
    _Atomic uintptr_t generation;      /* odd: a handle is out */
    _Atomic(gctx__object *) object;    /* set while an object owns the slot */
    unsigned handle_refs;              /* callers' references to the handle (under lock) */
    unsigned lent;                     /* 1: one of handle_refs is a lender's (under lock) */
    unsigned next_free;                /* free list link, index + 1 (under lock) */
} slot;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(slot *) chunks[MAX_CHUNKS];
static unsigned nb_slots;  /* slots ever made (under lock) */
static unsigned free_head; /* index + 1 of the first free slot, 0 when none (under lock) */
static int live; /* objects alive (under lock) */

/* Lookups read what was published under the lock with a release store (not seq_cst, whose
 * every store is a locked instruction). */
static uintptr_t load(const _Atomic uintptr_t *v)
{
    return atomic_load_explicit(v, memory_order_acquire);
}

static void store(_Atomic uintptr_t *v, uintptr_t value)
{
    atomic_store_explicit(v, value, memory_order_release);
}

/* A slot that exists: it belongs to an object, or once did. */
static slot *slot_at(unsigned index)
{
    return &atomic_load_explicit(&chunks[index >> CHUNK_BITS],
                                memory_order_acquire)[index & (CHUNK_SLOTS - 1)];
}

static void *encode(unsigned index, uintptr_t generation)
{
    uintptr_t bits = (((generation & GEN_MASK) << INDEX_BITS | index) << 1) | 1;
    return (void *)bits;
}

/* The slot and generation a handle names, or NULL for no handle. */
static slot *decode(const void *handle, uintptr_t *generation)
{
    uintptr_t bits = (uintptr_t)handle >> 1;
    unsigned index = (unsigned)(bits & ((1u << INDEX_BITS) - 1));
    *generation = bits >> INDEX_BITS;
    if (!((uintptr_t)handle & 1))
        return NULL;
    /* Every index has its chunk's place: one load per lookup. */
    _Static_assert((1u << INDEX_BITS) == CHUNK_SLOTS * MAX_CHUNKS, "an index names a slot");
    slot *chunk = atomic_load_explicit(&chunks[index >> CHUNK_BITS], memory_order_acquire);
    return chunk ? &chunk[index & (CHUNK_SLOTS - 1)] : NULL;
}

static int generation_is(const slot *s, uintptr_t generation)
{
    return (load(&s->generation) & GEN_MASK) == generation && (generation & 1);
}

/* Under the lock, or where nothing else can reach the slot: a new handle value (an old one
 * stays dead) with refs callers' references, published with the counts. */
static uintptr_t open_handle(slot *s, unsigned refs)
{
    uintptr_t generation = load(&s->generation) + 1;
    s->handle_refs = refs;
    s->lent = 0;
    store(&s->generation, generation);
    return generation;
}

/* Under the lock: the handle's last reference went, and its value with it. */
static void retire_handle(slot *s)
{
    s->lent = 0;
    store(&s->generation, load(&s->generation) + 1);
}

/* Under the lock, after the last reference went (so no handle is out): the slot goes back to
 * the free list with an even generation. */
static void free_slot(gctx__object *object)
{
    slot *s = slot_at(object->slot);
    atomic_store_explicit(&s->object, NULL, memory_order_release);
    s->next_free = free_head;
    free_head = object->slot + 1;
    live--;
}

/* Under the lock: a free or new slot; 0 when out of memory. */
static int take_slot(gctx__object *object)
{
    unsigned index;
    slot *s;
    if (free_head) {
        index = free_head - 1;
        s = slot_at(index);
        free_head = s->next_free;
    } else {
        index = nb_slots;
        if (index == CHUNK_SLOTS * MAX_CHUNKS)
            return 0;
        if (!atomic_load_explicit(&chunks[index >> CHUNK_BITS], memory_order_relaxed)) {
            slot *chunk = calloc(CHUNK_SLOTS, sizeof *chunk);
            if (!chunk)
                return 0;
            atomic_store_explicit(&chunks[index >> CHUNK_BITS], chunk, memory_order_release);
        }
        nb_slots++;
        s = slot_at(index);
    }
    object->slot = index;
    atomic_store_explicit(&s->object, object, memory_order_release);
    live++;
    return 1;
}

gctx_status gctx__objects_register(gctx__object *const *objects, unsigned n)
{
    pthread_mutex_lock(&table_lock);
    unsigned taken = 0;
    while (taken < n && take_slot(objects[taken]))
        taken++;
    if (taken < n) {
        while (taken)
            free_slot(objects[--taken]); /* all or none: no handle of these was out */
        unsigned alive = nb_slots;
        pthread_mutex_unlock(&table_lock);
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY,
                          "out of memory for a handle (%u objects alive)", alive);
    }
    pthread_mutex_unlock(&table_lock);
    return GCTX_SUCCESS;
}

gctx_status gctx__object_init(gctx__object *object, gctx__type type,
                              void (*destroy)(gctx__object *))
{
    gctx__object_prepare(object, type, destroy);
    return gctx__objects_register(&object, 1);
}

void gctx__object_release(gctx__object *object)
{
    if (atomic_fetch_sub(&object->refs, 1) != 1)
        return;
    pthread_mutex_lock(&table_lock);
    free_slot(object);
    pthread_mutex_unlock(&table_lock);
    object->destroy(object);
}

void *gctx__handle_give_new(gctx__object *object)
{
    /* No handle is out and nothing else reaches the slot: no lock. */
    return encode(object->slot, open_handle(slot_at(object->slot), 1));
}

void *gctx__handle_give(gctx__object *object)
{
    /* The object's only reference: a create call handing out what it made. */
    if (atomic_load_explicit(&object->refs, memory_order_acquire) == 1)
        return gctx__handle_give_new(object);
    slot *s = slot_at(object->slot);
    pthread_mutex_lock(&table_lock);
    uintptr_t generation = load(&s->generation);
    int handle_out = generation & 1;
    if (handle_out)
        s->handle_refs++;
    else
        generation = open_handle(s, 1);
    pthread_mutex_unlock(&table_lock);
    if (handle_out)
        gctx__object_release(object); /* the handle already holds the object: never the last */
    return encode(object->slot, generation);
}

void *gctx__handle_lend(gctx__object *object)
{
    pthread_mutex_lock(&table_lock);
    slot *s = slot_at(object->slot);
    uintptr_t generation = load(&s->generation);
    if (!(generation & 1)) {
        generation = open_handle(s, 0);
        gctx__object_retain(object); /* the handle's; under the lock, before anyone can drop it */
    }
    if (!s->lent) {
        s->handle_refs++;
        s->lent = 1;
    }
    pthread_mutex_unlock(&table_lock);
    return encode(object->slot, generation);
}

void gctx__handle_unlend(gctx__object *object)
{
    pthread_mutex_lock(&table_lock);
    slot *s = slot_at(object->slot);
    int retired = 0;
    if ((load(&s->generation) & 1) && s->lent) {
        s->lent = 0;
        if ((retired = --s->handle_refs == 0))
            retire_handle(s);
    }
    pthread_mutex_unlock(&table_lock);
    if (retired)
        gctx__object_release(object); /* the handle's; the lender still holds its own */
}

/* The object of a live handle of that type, with its slot and generation for the caller's
 * locked step; or NULL with the thread's error set. Inline: every entry point calls it. */
static inline gctx__object *lookup(const void *handle, gctx__type type, const char *what,
                                   slot **where, uintptr_t *generation_out)
{
    uintptr_t generation = 0;
    slot *s = decode(handle, &generation);
    *where = s;
    *generation_out = generation;
    gctx__object *object =
        s && generation_is(s, generation)
            ? atomic_load_explicit(&s->object, memory_order_acquire) : NULL;
    /* Read again: a handle retired meanwhile is refused rather than half-seen. */
    if (!object || !generation_is(s, generation)) {
        gctx__fail(GCTX_ERROR_INVALID_HANDLE,
                   "%s (%p) is not a live greenctx handle: it was released, or never came from "
                   "greenctx",
                   what, handle);
        return NULL;
    }
    if (object->type != type) {
        gctx__fail(GCTX_ERROR_INVALID_HANDLE, "%s (%p) is a greenctx handle of another type",
                   what, handle);
        return NULL;
    }
    return object;
}

gctx_status gctx__handle_resolve(void *var, gctx__type type, const char *what)
{
    const void *handle;
    memcpy(&handle, var, sizeof handle);
    if (!handle)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
    slot *s;
    uintptr_t generation;
    gctx__object *object = lookup(handle, type, what, &s, &generation);
    if (!object)
        return GCTX_ERROR_INVALID_HANDLE;
    memcpy(var, &object, sizeof object);
    return GCTX_SUCCESS;
}

void *gctx__handle_retain(void *handle, gctx__type type)
{
    slot *s;
    uintptr_t generation;
    if (!handle || !lookup(handle, type, "handle", &s, &generation))
        return NULL;
    pthread_mutex_lock(&table_lock);
    int ok = generation_is(s, generation);
    if (ok)
        s->handle_refs++;
    pthread_mutex_unlock(&table_lock);
    if (!ok)
        gctx__fail(GCTX_ERROR_INVALID_HANDLE, "handle (%p) was released meanwhile", handle);
    return ok ? handle : NULL;
}

void gctx__handle_release(void *handle, gctx__type type)
{
    slot *s;
    uintptr_t generation;
    gctx__object *object = handle ? lookup(handle, type, "handle", &s, &generation) : NULL;
    if (!object)
        return;
    pthread_mutex_lock(&table_lock);
    int ok = generation_is(s, generation), last = 0;
    if (ok && --s->handle_refs == 0) {
        retire_handle(s);
        /* The handle's reference; when it was the last, the slot goes in this same lock. */
        if ((last = atomic_fetch_sub(&object->refs, 1) == 1))
            free_slot(object);
    }
    pthread_mutex_unlock(&table_lock);
    if (!ok)
        gctx__fail(GCTX_ERROR_INVALID_HANDLE, "handle (%p) was released meanwhile", handle);
    if (last)
        object->destroy(object);
}

/* ---- what tests see from inside (testing.h): nothing in the library calls these ---- */

int gctx__object_live_count(void)
{
    pthread_mutex_lock(&table_lock);
    int n = live;
    pthread_mutex_unlock(&table_lock);
    return n;
}

const void *gctx__handle_object(const void *handle)
{
    uintptr_t generation = 0;
    slot *s = decode(handle, &generation);
    return s && generation_is(s, generation)
               ? atomic_load_explicit(&s->object, memory_order_acquire) : NULL;
}
