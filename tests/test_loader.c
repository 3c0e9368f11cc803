/*
 * Loading the driver: what happens when GREENCTX_CUDA_LIBRARY names a missing file or a file
 * that is not a CUDA driver, and which entry points the loader asks for. The driver is loaded
 * once per process, so each ctest entry runs one of these with its own environment (see
 * tests/CMakeLists.txt); a test whose environment is not set up skips.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

static const char *driver_env(void)
{
    const char *path = getenv("GREENCTX_CUDA_LIBRARY");
    return path && *path ? path : NULL;
}

GT_TEST(loader_missing_file)
{
    const char *path = driver_env();
    if (!path || access(path, F_OK) == 0)
        GT_SKIP("needs GREENCTX_CUDA_LIBRARY naming a file that does not exist");
    GT_ASSERT_STATUS(gctx_init(), GCTX_ERROR_NO_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), path);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GREENCTX_CUDA_LIBRARY");
    GT_ASSERT_CONTAINS(gctx_last_error(), "libgreenctx_sim.so");
    GT_ASSERT_EQ_INT(gctx_last_cuda_result(), 0);
    /* Every entry point fails the same way, and none crashes. */
    int version = -1, count = -1;
    GT_ASSERT_STATUS(gctx_driver_version(&version), GCTX_ERROR_NO_DRIVER);
    GT_ASSERT_EQ_INT(version, -1);
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_ERROR_NO_DRIVER);
    GT_ASSERT_EQ_INT(count, -1);
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &info), GCTX_ERROR_NO_DRIVER);
    GT_ASSERT(gctx_driver_path() == NULL);
    GT_ASSERT_EQ_INT(gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS), 0);
    GT_ASSERT_STR_EQ(gctx_feature_reason(GCTX_FEATURE_GREEN_CONTEXTS), "no CUDA driver is loaded");
    /* The failure is remembered, not retried into a different answer. */
    GT_ASSERT_STATUS(gctx_init(), GCTX_ERROR_NO_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), path);
}

GT_TEST(loader_not_a_driver)
{
    const char *path = driver_env();
    if (!path || access(path, R_OK) != 0)
        GT_SKIP("needs GREENCTX_CUDA_LIBRARY naming a shared library that is not a CUDA driver");
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int is_driver = lib && (dlsym(lib, "cuGetProcAddress") || dlsym(lib, "cuGetProcAddress_v2"));
    if (lib)
        dlclose(lib);
    if (!lib || is_driver)
        GT_SKIP("needs GREENCTX_CUDA_LIBRARY naming a shared library that is not a CUDA driver");
    GT_ASSERT_STATUS(gctx_init(), GCTX_ERROR_NO_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), path);
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuGetProcAddress");
    GT_ASSERT_EQ_INT(gctx_last_cuda_result(), 0);
    GT_ASSERT(gctx_driver_path() == NULL);
}
