/* What tests see of the library from inside, beyond the public API (they link the static
 * library and include this header themselves; no file of the library includes it but
 * object.c, which defines these). Nothing else: tests that need more use the public API, a
 * pure module's own header (plan.h), or raw driver calls of their own (tests/raw_calls.h). */
#ifndef GREENCTX_TESTING_H
#define GREENCTX_TESTING_H

/* Objects alive now (every object with a slot of the handle table: partitions, contexts,
 * streams, events and the rest; a split record has none, and lives as long as its
 * partitions): a test that takes it before and after a failed call asserts nothing leaked. */
int gctx__object_live_count(void);
/* The object behind a live handle, or NULL for a stale or foreign one: tests of stale
 * handles see when a new object took a released one's memory. */
const void *gctx__handle_object(const void *handle);

#endif
