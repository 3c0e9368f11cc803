/* What tests see of the library from inside, beyond the public API (defined in object.c, the
 * one file of the library that includes this). Tests that need more use the public API, a
 * pure module's own header (plan.h), or raw driver calls (tests/raw_calls.h). */
#ifndef GREENCTX_TESTING_H
#define GREENCTX_TESTING_H

/* Live objects: equal before and after a failed call, nothing leaked. */
int gctx__object_live_count(void);
/* The object behind a live handle, or NULL for a stale or foreign one. */
const void *gctx__handle_object(const void *handle);

#endif
