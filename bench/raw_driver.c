/* Raw driver calls outside the library: see raw_driver.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "raw_driver.h"

int raw_driver_resolve(const raw_symbol *rows, size_t nb_rows, void *table, char *why,
                       size_t why_size)
{
    int version = 0;
    if (gctx_init() != GCTX_SUCCESS || gctx_driver_version(&version) != GCTX_SUCCESS) {
        snprintf(why, why_size, "%s", gctx_last_error());
        return -1;
    }
    /* The file is loaded already: RTLD_NOLOAD hands back that same library (its state, its
     * handles), never a second copy. The reference is kept for the process's life. */
    const char *path = gctx_driver_path();
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    gcu_pfn_cuGetProcAddress get_proc =
        lib ? (gcu_pfn_cuGetProcAddress)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (!get_proc) {
        snprintf(why, why_size, "could not reopen the driver %s for raw calls: %s",
                 path ? path : "(none)", lib ? "no cuGetProcAddress_v2" : dlerror());
        return -1;
    }
    for (size_t i = 0; i < nb_rows; i++) {
        void *fn = NULL;
        if (rows[i].abi <= version)
            get_proc(rows[i].name, &fn, rows[i].abi, 0, NULL);
        if (!fn && rows[i].required) {
            snprintf(why, why_size, "the driver %s does not give %s at ABI version %d", path,
                     rows[i].name, rows[i].abi);
            return -1;
        }
        memcpy((char *)table + rows[i].offset, &fn, sizeof fn);
    }
    return 0;
}
