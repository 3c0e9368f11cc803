/* bench/overlap_libs.c: NVLink multicast kept off, and NCCL and cuBLAS found, or refused with
 * a message that says what was tried and how to point at the file. Each CTest entry gives the
 * environment its test expects (tests/overlap.cmake). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dlfcn.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "overlap_libs.h"

GT_TEST(nvls_is_set_off)
{
    const char *before = getenv("NCCL_NVLS_ENABLE");
    if (before && strcmp(before, "0") != 0)
        GT_SKIP("NCCL_NVLS_ENABLE=%s in this environment", before);
    char why[512] = "";
    GT_ASSERT_EQ_INT(olap_nvls_off(why, sizeof why), 0);
    GT_ASSERT(getenv("NCCL_NVLS_ENABLE") != NULL);
    GT_ASSERT_EQ_INT(strcmp(getenv("NCCL_NVLS_ENABLE"), "0"), 0);
}

GT_TEST(nvls_asked_for_is_refused)
{
    const char *before = getenv("NCCL_NVLS_ENABLE");
    if (!before || strcmp(before, "1") != 0)
        GT_SKIP("needs NCCL_NVLS_ENABLE=1 (the CTest entry sets it)");
    char why[512] = "";
    GT_ASSERT_EQ_INT(olap_nvls_off(why, sizeof why), -1);
    GT_ASSERT_CONTAINS(why, "NCCL_NVLS_ENABLE is set to '1'");
    GT_ASSERT_CONTAINS(why, "set NCCL_NVLS_ENABLE=0");
    GT_ASSERT_EQ_INT(strcmp(getenv("NCCL_NVLS_ENABLE"), "1"), 0); /* left as the user set it */
}

/* GREENCTX_NCCL_LIBRARY names a file the CTest entry chose (its path contains like): the
 * load is refused and the reason contains said. */
static void expect_refused(const char *like, const char *said)
{
    const char *named = getenv("GREENCTX_NCCL_LIBRARY");
    if (!named || !strstr(named, like))
        GT_SKIP("needs GREENCTX_NCCL_LIBRARY naming a %s file (the CTest entry sets it)", like);
    olap_libs libs;
    char why[2048] = "";
    GT_ASSERT_EQ_INT(olap_libs_load(&libs, why, sizeof why), -1);
    GT_ASSERT_CONTAINS(why, said);
    GT_ASSERT_CONTAINS(why, named);
}

GT_TEST(nccl_named_but_missing)
{
    expect_refused("nonexistent", "NCCL could not be loaded from GREENCTX_NCCL_LIBRARY=");
}

GT_TEST(nccl_named_is_not_nccl) { expect_refused("libgreenctx", "has no ncclGetVersion"); }

GT_TEST(nccl_and_cublas_load)
{
    const char *named = getenv("GREENCTX_NCCL_LIBRARY");
    if (!named || !strstr(named, "nccl") || strstr(named, "nonexistent"))
        GT_SKIP("needs GREENCTX_NCCL_LIBRARY naming NCCL (the CTest entry sets it when found)");
    olap_libs libs;
    char why[2048] = "";
    if (olap_libs_load(&libs, why, sizeof why) != 0)
        GT_FAIL("%s", why);
    GT_ASSERT_GE_INT(libs.nccl_version, 21700); /* maxCTAs in ncclConfig_t */
    GT_ASSERT(libs.ncclAllReduce != NULL && libs.cublasGemmEx != NULL &&
              libs.cublasSetSmCountTarget != NULL);
    GT_ASSERT_CONTAINS(libs.nccl_path, named);
    GT_ASSERT_CONTAINS(libs.cublas_path, "libcublas");
}

/* ---- issue 18: never code from the current directory ---- */

/* Makes every directory of path (relative to the current one, or absolute); 0 on success. */
static int make_dirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0700) && access(buf, F_OK))
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0700) && access(buf, F_OK) ? -1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes a scratch directory and everything in it. */
static void remove_tree(const char *dir) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

/* dir/<site>/nvidia/<package>/lib/<soname> as a link to a test double; 0 on success. */
static int plant(const char *dir, const char *package, const char *soname, const char *target)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/nvidia/%s/lib", dir, package);
    if (make_dirs(path))
        return -1;
    snprintf(path, sizeof path, "%s/nvidia/%s/lib/%s", dir, package, soname);
    return symlink(target, path);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    return chmod(path, mode);
}

/* A soname no loader finds, so every step of the search is reached on any machine (this one
 * may have NCCL on the loader's path, which is tried first). */
#define ABSENT "libgreenctx-test-absent-nccl.so.2"
static const olap_lib_search absent = {"the test library", "GREENCTX_TEST_UNSET_LIBRARY", ABSENT,
                                       NULL, "nccl", "Install it", NULL};

/* A scratch directory holding pip's layout as Python run from it would see it (./nvidia/nccl,
 * with an __init__.py that leaves a mark), a relative $VIRTUAL_ENV's layout, and a python3
 * first on PATH that leaves a mark: the search must use none of them, for NCCL (where this
 * machine has none on the loader's path) and for a library no loader finds. */
GT_TEST(never_from_the_current_directory)
{
    const char *fake = getenv("GREENCTX_TEST_FAKE_NCCL");
    if (!fake || fake[0] != '/')
        GT_SKIP("needs GREENCTX_TEST_FAKE_NCCL, the test double of NCCL (the CTest entry sets it)");
    char dir[] = "/tmp/greenctx-cwd-XXXXXX";
    GT_ASSERT(mkdtemp(dir) != NULL);
    GT_ASSERT_EQ_INT(chdir(dir), 0);
    const char *venv = "venv/lib/python3.12/site-packages";
    GT_ASSERT_EQ_INT(plant(".", "nccl", "libnccl.so.2", fake), 0);
    GT_ASSERT_EQ_INT(plant(".", "nccl", ABSENT, fake), 0);
    GT_ASSERT_EQ_INT(plant(venv, "nccl", "libnccl.so.2", fake), 0);
    GT_ASSERT_EQ_INT(plant(venv, "nccl", ABSENT, fake), 0);
    GT_ASSERT_EQ_INT(write_file("nvidia/__init__.py", "open('ran', 'w').write('import')\n", 0600),
                     0);
    GT_ASSERT_EQ_INT(write_file("nvidia/nccl/__init__.py", "open('ran', 'w').write('import')\n",
                                0600), 0);
    GT_ASSERT_EQ_INT(make_dirs("bin"), 0);
    char script[1200];
    snprintf(script, sizeof script, "#!/bin/sh\necho python > %s/ran\necho %s/nvidia/nccl\n", dir,
             dir);
    GT_ASSERT_EQ_INT(write_file("bin/python3", script, 0700), 0);
    char path_env[4096];
    snprintf(path_env, sizeof path_env, "%s/bin:%s", dir, getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", path_env, 1);
    setenv("VIRTUAL_ENV", "venv", 1);
    setenv("CONDA_PREFIX", "venv", 1);
    unsetenv("GREENCTX_NCCL_LIBRARY");
    unsetenv("GREENCTX_CUBLAS_LIBRARY");
    char loaded[512] = "", why[4096] = "";
    void *lib = olap_lib_find(&absent, loaded, sizeof loaded, why, sizeof why);
    olap_libs libs;
    char libs_why[4096] = "";
    int libs_loaded = olap_libs_load(&libs, libs_why, sizeof libs_why) == 0;
    int ran = access("ran", F_OK) == 0;
    char planted[4][1200];
    snprintf(planted[0], sizeof planted[0], "%s/nvidia/nccl/lib/libnccl.so.2", dir);
    snprintf(planted[1], sizeof planted[1], "%s/nvidia/nccl/lib/" ABSENT, dir);
    snprintf(planted[2], sizeof planted[2], "%s/%s/nvidia/nccl/lib/libnccl.so.2", dir, venv);
    snprintf(planted[3], sizeof planted[3], "%s/%s/nvidia/nccl/lib/" ABSENT, dir, venv);
    int planted_loaded = 0;
    for (int i = 0; i < 4; i++)
        planted_loaded += dlopen(planted[i], RTLD_NOW | RTLD_NOLOAD) != NULL;
    GT_ASSERT_EQ_INT(chdir("/"), 0);
    remove_tree(dir);
    GT_ASSERT(!ran); /* no python3 run, no ./nvidia imported */
    GT_ASSERT_EQ_INT(planted_loaded, 0);
    GT_ASSERT(lib == NULL);
    GT_ASSERT_CONTAINS(why, "the test library was not found: tried " ABSENT);
    GT_ASSERT_CONTAINS(why, "pip's nvidia/nccl/lib/" ABSENT " under /usr/local/lib/python3*/"
                            "dist-packages");
    GT_ASSERT_CONTAINS(why, "/opt/*/.venv/lib/python3*/site-packages");
    GT_ASSERT_CONTAINS(why, "$VIRTUAL_ENV/lib/python3*/site-packages (not absolute)");
    GT_ASSERT_CONTAINS(why, "$CONDA_PREFIX/lib/python3*/site-packages (not absolute)");
    GT_ASSERT_CONTAINS(why, "Install it, or set GREENCTX_TEST_UNSET_LIBRARY to the file");
    if (libs.nccl_path[0])
        GT_ASSERT(strstr(libs.nccl_path, dir) == NULL && libs.nccl_path[0] != '.');
    if (!libs_loaded && !libs.nccl_path[0])
        GT_ASSERT_CONTAINS(libs_why, "NCCL was not found: tried libnccl.so.2");
}

/* pip's layout under an absolute $VIRTUAL_ENV is found, with no python3 on PATH at all. */
GT_TEST(pip_layout_under_an_absolute_virtual_env)
{
    const char *fake = getenv("GREENCTX_TEST_FAKE_NCCL");
    if (!fake || fake[0] != '/')
        GT_SKIP("needs GREENCTX_TEST_FAKE_NCCL, the test double of NCCL (the CTest entry sets it)");
    char dir[] = "/tmp/greenctx-venv-XXXXXX";
    GT_ASSERT(mkdtemp(dir) != NULL);
    char site[256];
    snprintf(site, sizeof site, "%s/lib/python3.11/site-packages", dir);
    GT_ASSERT_EQ_INT(plant(site, "nccl", ABSENT, fake), 0);
    setenv("VIRTUAL_ENV", dir, 1);
    setenv("PATH", "/nonexistent", 1);
    char loaded[512] = "", why[4096] = "";
    void *lib = olap_lib_find(&absent, loaded, sizeof loaded, why, sizeof why);
    remove_tree(dir);
    if (!lib)
        GT_FAIL("%s", why);
    GT_ASSERT_CONTAINS(loaded, site);
    GT_ASSERT_CONTAINS(loaded, "/nvidia/nccl/lib/" ABSENT);
    GT_ASSERT(dlsym(lib, "ncclGetVersion") != NULL);
}
