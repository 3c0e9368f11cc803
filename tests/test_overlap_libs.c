/* bench/overlap_libs.c: NVLink multicast kept off, and NCCL and cuBLAS found, or refused with
 * a message that says what was tried and how to point at the file. Each CTest entry gives the
 * environment its test expects (tests/overlap.cmake). */
#include <stdlib.h>

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
