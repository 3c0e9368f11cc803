/* Reference counts and the registry of live handles.
 *
 * Every object is registered while alive, so a handle the caller already released is
 * recognised as stale from the registry alone, without reading freed memory. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

#define TOMBSTONE ((const void *)1)

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static const void **slots;
static size_t capacity; /* a power of two, or 0 */
static size_t used;     /* live entries plus tombstones */
static int live;

static size_t slot_of(const void *pointer, size_t mask)
{
    uintptr_t h = (uintptr_t)pointer;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h & mask;
}

/* Finds pointer's slot, or the slot where it would go. Caller holds the lock. */
static size_t find(const void *pointer, int *found)
{
    size_t mask = capacity - 1, i = slot_of(pointer, mask), free_slot = SIZE_MAX;
    for (;; i = (i + 1) & mask) {
        if (slots[i] == pointer) {
            *found = 1;
            return i;
        }
        if (slots[i] == TOMBSTONE && free_slot == SIZE_MAX)
            free_slot = i;
        if (slots[i] == NULL) {
            *found = 0;
            return free_slot != SIZE_MAX ? free_slot : i;
        }
    }
}

static int grow(void)
{
    size_t old_capacity = capacity;
    const void **old = slots;
    size_t new_capacity = old_capacity ? old_capacity * 2 : 64;
    if ((size_t)live * 4 < old_capacity)
        new_capacity = old_capacity; /* mostly tombstones: rehash at the same size */
    const void **fresh = calloc(new_capacity, sizeof *fresh);
    if (!fresh)
        return -1;
    slots = fresh;
    capacity = new_capacity;
    used = 0;
    for (size_t i = 0; i < old_capacity; i++) {
        if (old[i] && old[i] != TOMBSTONE) {
            int found;
            slots[find(old[i], &found)] = old[i];
            used++;
        }
    }
    free(old);
    return 0;
}

gctx_status gctx__object_init(gctx__object *object, gctx__type type,
                              void (*destroy)(gctx__object *))
{
    object->type = type;
    atomic_init(&object->refs, 1);
    object->destroy = destroy;
    pthread_mutex_lock(&registry_lock);
    if ((used + 1) * 2 > capacity && grow() != 0) {
        pthread_mutex_unlock(&registry_lock);
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory registering a handle");
    }
    int found;
    size_t i = find(object, &found);
    if (slots[i] == NULL)
        used++;
    slots[i] = object;
    live++;
    pthread_mutex_unlock(&registry_lock);
    return GCTX_SUCCESS;
}

void gctx__object_retain(gctx__object *object) { atomic_fetch_add(&object->refs, 1); }

void gctx__object_release(gctx__object *object)
{
    if (atomic_fetch_sub(&object->refs, 1) != 1)
        return;
    pthread_mutex_lock(&registry_lock);
    int found;
    size_t i = find(object, &found);
    if (found) {
        slots[i] = TOMBSTONE;
        live--;
    }
    pthread_mutex_unlock(&registry_lock);
    object->destroy(object);
}

gctx_status gctx__object_check(const void *pointer, gctx__type type, const char *what)
{
    if (!pointer)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
    int found = 0;
    gctx__type actual = 0;
    pthread_mutex_lock(&registry_lock);
    if (capacity) {
        find(pointer, &found);
        if (found)
            actual = ((const gctx__object *)pointer)->type;
    }
    pthread_mutex_unlock(&registry_lock);
    if (!found)
        return gctx__fail(GCTX_ERROR_INVALID_HANDLE,
                          "%s (%p) is not a live greenctx handle: it was released, or never "
                          "came from greenctx",
                          what, pointer);
    if (actual != type)
        return gctx__fail(GCTX_ERROR_INVALID_HANDLE,
                          "%s (%p) is a greenctx handle of another type", what, pointer);
    return GCTX_SUCCESS;
}

int gctx__object_live_count(void)
{
    pthread_mutex_lock(&registry_lock);
    int n = live;
    pthread_mutex_unlock(&registry_lock);
    return n;
}

void *gctx__handle_retain(void *handle, gctx__type type)
{
    if (handle && gctx__object_check(handle, type, "handle") == GCTX_SUCCESS)
        gctx__object_retain(handle);
    return handle;
}

void gctx__handle_release(void *handle, gctx__type type)
{
    if (handle && gctx__object_check(handle, type, "handle") == GCTX_SUCCESS)
        gctx__object_release(handle);
}
