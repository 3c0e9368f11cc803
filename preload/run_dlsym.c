/* The interposed dlsym: where cudart, torch and cuda-python find cuGetProcAddress_v2. */
#include <dlfcn.h>
#include <stdatomic.h>

#include "run_preload.h"

typedef void *(*dlsym_fn)(void *, const char *);

static _Atomic(dlsym_fn) real_dlsym_fn;

void *run_real_dlsym(void *handle, const char *name)
{
    dlsym_fn fn = atomic_load_explicit(&real_dlsym_fn, memory_order_acquire);
    if (!fn) {
        /* dlvsym is not interposed, so this reaches the C library. dlsym moved into libc
         * with glibc 2.34; before, the first version of each architecture. */
        static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17",
                                               "GLIBC_2.0"};
        for (size_t i = 0; !fn && i < sizeof versions / sizeof versions[0]; i++)
            fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
        if (!fn)
            run_die("the C library's dlsym was not found (dlvsym of dlsym at GLIBC_2.34, 2.2.5, "
                    "2.17 and 2.0 failed)");
        atomic_store_explicit(&real_dlsym_fn, fn, memory_order_release);
    }
    return fn(handle, name);
}

/* What a lookup of a cu* name returns: its wrapper, once the confinement exists, when the name
 * is wrapped and came from the driver the preload confines (a second driver would run the
 * program unconfined). Not inlined: its thread-local read must stay off the path of other
 * names (below). */
static __attribute__((noinline)) void *driver_name(void *found, const char *name)
{
    if (run_inside)
        return found;
    void *hook = run_hook_for_symbol(name);
    if (!hook || found == hook)
        return found;
    run_setup();
    if (run_real_dlsym(run.drv.handle, name) != found)
        run_die("the program looked %s up in a CUDA driver other than the one greenctx "
                "confines (%s)",
                name, gctx_driver_path());
    return hook;
}

/* Every lookup goes to the C library first. */
RUN_EXPORT void *dlsym(void *handle, const char *name)
{
    /* RTLD_NEXT means "after the caller", which the C library reads from its return address:
     * a tail call (this file is always optimised, preload/CMakeLists.txt) leaves it the
     * caller's, so a library loaded after this one that wraps a call and looks the next one
     * up gets the next one, not itself. Driver names are wrapped whatever the handle. */
    if (handle == RTLD_NEXT && (name[0] != 'c' || name[1] != 'u'))
        return run_real_dlsym(handle, name);
    void *found = run_real_dlsym(handle, name);
    /* The name is checked by hand: sanitizer runtimes look names up before their
     * interceptors (strncmp, __tls_get_addr) work, and never a cu* name. */
    if (!found || name[0] != 'c' || name[1] != 'u')
        return found;
    return driver_name(found, name);
}
