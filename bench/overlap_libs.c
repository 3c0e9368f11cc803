/* Finding and loading NCCL and cuBLAS at run time: see overlap_libs.h. */
#include <dlfcn.h>
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

/* The directory of python3's nvidia.<package> (pip's nvidia-nccl-cu13, nvidia-cublas), into
 * dir; 0 when found. */
static int python_package_dir(const char *package, char *dir, size_t size)
{
    char command[256];
    snprintf(command, sizeof command,
             "python3 -c 'import importlib; print(list(importlib.import_module(\"nvidia.%s\")"
             ".__path__)[0])' 2>/dev/null",
             package);
    FILE *p = popen(command, "r");
    if (!p)
        return -1;
    int found = fgets(dir, (int)size, p) != NULL;
    int status = pclose(p);
    if (!found || status != 0)
        return -1;
    dir[strcspn(dir, "\n")] = '\0';
    return dir[0] ? 0 : -1;
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

typedef struct lib_search {
    const char *name;        /* "NCCL" */
    const char *env;         /* GREENCTX_NCCL_LIBRARY */
    const char *soname;      /* libnccl.so.2 */
    const char *system_path; /* a toolkit's copy, or NULL */
    const char *package;     /* python3's nvidia.<package> */
    const char *hint;        /* how to install it */
    const char *const *deps;
} lib_search;

static void *search(const lib_search *s, char *loaded, size_t size, char *why, size_t why_size)
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
    char dir[512], path[600];
    if (python_package_dir(s->package, dir, sizeof dir) == 0) {
        snprintf(path, sizeof path, "%s/lib/%s", dir, s->soname);
        if ((lib = open_one(path, s->deps, loaded, size, &a)))
            return lib;
    } else {
        char what[64];
        snprintf(what, sizeof what, "python3's nvidia.%s", s->package);
        tried(&a, what, "not installed, or no python3");
    }
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

int olap_libs_load(olap_libs *libs, char *why, size_t why_size)
{
    static const symbol_row nccl_rows[] = {
#define OLAP_ROW_(name, ret, params) {#name, offsetof(olap_libs, name)},
        OLAP_NCCL_SYMBOLS(OLAP_ROW_)};
    static const symbol_row cublas_rows[] = {OLAP_CUBLAS_SYMBOLS(OLAP_ROW_)};
#undef OLAP_ROW_
    static const char *const cublas_deps[] = {"libcudart.so.13", "libcublasLt.so.13", NULL};
    static const lib_search nccl = {
        "NCCL", "GREENCTX_NCCL_LIBRARY", "libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
        "nccl",
        "Install it (pip install nvidia-nccl-cu13)", NULL};
    static const lib_search cublas = {
        "cuBLAS", "GREENCTX_CUBLAS_LIBRARY", "libcublas.so.13",
        "/usr/local/cuda/lib64/libcublas.so.13", "cublas",
        "Install the CUDA 13 toolkit's cuBLAS (or pip install nvidia-cublas)", cublas_deps};

    memset(libs, 0, sizeof *libs);
    void *lib = search(&nccl, libs->nccl_path, sizeof libs->nccl_path, why, why_size);
    if (!lib || resolve(lib, libs->nccl_path, nccl_rows, sizeof nccl_rows / sizeof nccl_rows[0],
                        libs, why, why_size))
        return -1;
    if (libs->ncclGetVersion(&libs->nccl_version) != OLAP_NCCL_SUCCESS)
        libs->nccl_version = 0;
    lib = search(&cublas, libs->cublas_path, sizeof libs->cublas_path, why, why_size);
    if (!lib || resolve(lib, libs->cublas_path, cublas_rows,
                        sizeof cublas_rows / sizeof cublas_rows[0], libs, why, why_size))
        return -1;
    return 0;
}
