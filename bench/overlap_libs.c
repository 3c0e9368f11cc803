/* Finding and loading NCCL and cuBLAS at run time: see overlap_libs.h. */
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "overlap_libs.h"

int olap_nvls_off(char *why, size_t why_size)
{
    const char *nvls = getenv("NCCL_NVLS_ENABLE");
    if (nvls && strcmp(nvls, "0") != 0) {
        snprintf(why, why_size,
                 "NCCL_NVLS_ENABLE is set to '%s': this benchmark runs NCCL only with NVLink "
                 "multicast (NVLS) off, which on a shared machine can take every GPU of the "
                 "host out of service; unset it or set NCCL_NVLS_ENABLE=0",
                 nvls);
        return -1;
    }
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    return 0;
}

/* What a library's search tried, for the message when nothing loaded. */
typedef struct attempts {
    char text[1536];
    size_t len;
} attempts;

static void tried(attempts *a, const char *what, const char *error)
{
    if (a->len < sizeof a->text)
        a->len += (size_t)snprintf(a->text + a->len, sizeof a->text - a->len, "%s%s (%s)",
                                   a->len ? "; " : "", what, error);
}

/* dlopen of path; for a path with a directory, the libraries it needs from that directory
 * (deps, e.g. libcublasLt.so.13) are loaded first, so a directory not on the loader's path
 * still works. */
static void *open_one(const char *path, const char *const *deps, char *loaded, size_t size,
                      attempts *a)
{
    const char *slash = strrchr(path, '/');
    for (; slash && deps && *deps; deps++) {
        char dep[640];
        snprintf(dep, sizeof dep, "%.*s/%s", (int)(slash - path), path, *deps);
        if (access(dep, R_OK) == 0)
            dlopen(dep, RTLD_NOW | RTLD_GLOBAL); /* kept for the process's life */
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        tried(a, path, e ? e : "dlopen failed");
        return NULL;
    }
    snprintf(loaded, size, "%s", path);
    return lib;
}


/* Where pip puts its nvidia-* wheels, found without running Python (Python run from the
 * current directory imports ./nvidia first: a directory there would get its code run and its
 * library loaded). Only absolute places: never the current directory, never a relative
 * environment variable. */
static const char *const site_dirs[] = {
    "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
    "/usr/lib/python3/dist-packages",        "/usr/lib/python3*/site-packages",
    "/usr/lib64/python3*/site-packages",     "/opt/conda/lib/python3*/site-packages",
    "/opt/*/.venv/lib/python3*/site-packages", "/opt/*/venv/lib/python3*/site-packages",
};
static const char *const site_roots[] = {"VIRTUAL_ENV", "CONDA_PREFIX"}; /* + lib/python3* */

/* Every match of dir/nvidia/<package>/lib/<soname>, tried in turn; the first that loads. */
static void *open_site(const olap_lib_search *s, const char *dir, char *loaded, size_t size,
                       attempts *a)
{
    char pattern[700];
    snprintf(pattern, sizeof pattern, "%s/nvidia/%s/lib/%s", dir, s->package, s->soname);
    glob_t found;
    void *lib = NULL;
    if (glob(pattern, 0, NULL, &found) == 0) {
        for (size_t i = 0; i < found.gl_pathc && !lib; i++)
            if (found.gl_pathv[i][0] == '/')
                lib = open_one(found.gl_pathv[i], s->deps, loaded, size, a);
        globfree(&found);
    }
    return lib;
}

/* pip's layout in the places above, then under $VIRTUAL_ENV and $CONDA_PREFIX when they are
 * absolute; what was searched goes into a. */
static void *search_pip(const olap_lib_search *s, char *loaded, size_t size, attempts *a)
{
    void *lib = NULL;
    for (size_t i = 0; i < sizeof site_dirs / sizeof site_dirs[0] && !lib; i++)
        lib = open_site(s, site_dirs[i], loaded, size, a);
    char roots[256] = "", dir[600];
    size_t used = 0;
    for (size_t i = 0; i < sizeof site_roots / sizeof site_roots[0] && !lib; i++) {
        const char *root = getenv(site_roots[i]);
        const char *state = !root || !*root ? "unset" : root[0] != '/' ? "not absolute" : NULL;
        if (!state) {
            snprintf(dir, sizeof dir, "%s/lib/python3*/site-packages", root);
            lib = open_site(s, dir, loaded, size, a);
        }
        if (used < sizeof roots)
            used += (size_t)snprintf(roots + used, sizeof roots - used, ", $%s/lib/python3*/"
                                     "site-packages%s%s%s", site_roots[i], state ? " (" : "",
                                     state ? state : "", state ? ")" : "");
    }
    if (!lib) {
        char what[1024];
        size_t n = (size_t)snprintf(what, sizeof what, "pip's nvidia/%s/lib/%s under",
                                    s->package, s->soname);
        for (size_t i = 0; i < sizeof site_dirs / sizeof site_dirs[0] && n < sizeof what; i++)
            n += (size_t)snprintf(what + n, sizeof what - n, "%s %s", i ? "," : "", site_dirs[i]);
        if (n < sizeof what)
            snprintf(what + n, sizeof what - n, "%s", roots);
        tried(a, what, "none there");
    }
    return lib;
}

void *olap_lib_find(const olap_lib_search *s, char *loaded, size_t size, char *why,
                    size_t why_size)
{
    attempts a = {{0}, 0};
    const char *named = getenv(s->env);
    void *lib = NULL;
    if (named && *named) {
        /* Named explicitly: that file or nothing, so a wrong setting is reported as such. */
        if ((lib = open_one(named, s->deps, loaded, size, &a)))
            return lib;
        snprintf(why, why_size, "%s could not be loaded from %s=%s: %s", s->name, s->env, named,
                 a.text);
        return NULL;
    }
    if ((lib = open_one(s->soname, NULL, loaded, size, &a)))
        return lib;
    if (s->system_path && (lib = open_one(s->system_path, s->deps, loaded, size, &a)))
        return lib;
    if ((lib = search_pip(s, loaded, size, &a)))
        return lib;
    snprintf(why, why_size, "%s was not found: tried %s. %s, or set %s to the file", s->name,
             a.text, s->hint, s->env);
    return NULL;
}

typedef struct symbol_row {
    const char *name;
    size_t offset;
} symbol_row;

static int resolve(void *lib, const char *what, const symbol_row *rows, size_t n, olap_libs *libs,
                   char *why, size_t why_size)
{
    for (size_t i = 0; i < n; i++) {
        void *fn = dlsym(lib, rows[i].name);
        if (!fn) {
            snprintf(why, why_size, "%s has no %s (too old?)", what, rows[i].name);
            return -1;
        }
        memcpy((char *)libs + rows[i].offset, &fn, sizeof fn);
    }
    return 0;
}

#define OLAP_ROW_(name, ret, params) {#name, offsetof(olap_libs, name)},
static const symbol_row nccl_rows[] = {OLAP_NCCL_SYMBOLS(OLAP_ROW_)};
static const symbol_row cublas_rows[] = {OLAP_CUBLAS_SYMBOLS(OLAP_ROW_)};
#undef OLAP_ROW_

static int cublas_load(olap_libs *libs, char *why, size_t why_size)
{
    static const char *const cublas_deps[] = {"libcudart.so.13", "libcublasLt.so.13", NULL};
    static const olap_lib_search cublas = {
        "cuBLAS", "GREENCTX_CUBLAS_LIBRARY", "libcublas.so.13",
        "/usr/local/cuda/lib64/libcublas.so.13", "cublas",
        "Install the CUDA 13 toolkit's cuBLAS (or pip install nvidia-cublas)", cublas_deps};
    void *lib = olap_lib_find(&cublas, libs->cublas_path, sizeof libs->cublas_path, why, why_size);
    if (!lib || resolve(lib, libs->cublas_path, cublas_rows,
                        sizeof cublas_rows / sizeof cublas_rows[0], libs, why, why_size))
        return -1;
    return 0;
}

int olap_libs_load(olap_libs *libs, char *why, size_t why_size)
{
    static const olap_lib_search nccl = {
        "NCCL", "GREENCTX_NCCL_LIBRARY", "libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
        "nccl",
        "Install it (pip install nvidia-nccl-cu13)", NULL};

    memset(libs, 0, sizeof *libs);
    void *lib = olap_lib_find(&nccl, libs->nccl_path, sizeof libs->nccl_path, why, why_size);
    if (!lib || resolve(lib, libs->nccl_path, nccl_rows, sizeof nccl_rows / sizeof nccl_rows[0],
                        libs, why, why_size))
        return -1;
    if (libs->ncclGetVersion(&libs->nccl_version) != OLAP_NCCL_SUCCESS)
        libs->nccl_version = 0;
    return cublas_load(libs, why, why_size);
}
