// Links against an installed greenctx through the C++ wrapper; needs no driver to run.
#include <greenctx.hpp>
#include <greenctx_sim.h>

#include <cstdio>
#include <cstring>

int main()
{
    // With no driver the wrapper carries the library's refusal; with one, the device count.
    auto count = greenctx::try_device_count();
    if (!count && (count.status() == GCTX_SUCCESS || !std::strlen(count.error().what()))) {
        std::printf("consumer_cpp: a failure without a status or a message\n");
        return 1;
    }
    std::printf("consumer_cpp: greenctx %s, %s\n", greenctx::version_string(),
                count ? "a driver" : gctx_status_name(count.status()));
    return 0;
}
