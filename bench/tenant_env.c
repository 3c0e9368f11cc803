/* The environment of a child of the bench (a tenant, the MPS daemon and its quit): this
 * process's, with some variables dropped and others added. Used by tenant_proc.c and
 * tenant_mps.c, calling neither. */
#include <stdlib.h>
#include <string.h>

#include "bench_tenants.h"

extern char **environ;

char **tenant_environment(const char *const drop[], size_t nb_drop, char *const add[],
                          size_t nb_add)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + nb_add + 1, sizeof *envp);
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int dropped = 0;
        for (size_t j = 0; j < nb_drop; j++)
            dropped |= !strncmp(environ[i], drop[j], strlen(drop[j]));
        if (!dropped)
            envp[k++] = environ[i];
    }
    for (size_t j = 0; j < nb_add; j++)
        envp[k++] = add[j];
    return envp;
}
