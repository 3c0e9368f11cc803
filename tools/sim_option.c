/* --sim MODEL[,MODEL...][@DRIVER]: the simulated driver found beside the tool or the bench. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* The simulated driver's file: $GREENCTX_SIM_LIBRARY, else beside the executable, the install
 * layout, ../lib/greenctx/, then the build tree's (all relative to the executable). */
static const char *find_sim_library(void)
{
    return tool_find_companion("libgreenctx_sim.so", "GREENCTX_SIM_LIBRARY",
                               GREENCTX_SIM_INSTALL_RELPATH, GREENCTX_SIM_BUILD_RELPATH);
}

int greenctx_tool_use_sim(greenctx_tool_options *opts, const char *spec)
{
    static char models[256];
    const char *at = strchr(spec, '@');
    size_t len = at ? (size_t)(at - spec) : strlen(spec);
    if (len == 0 || len >= sizeof models)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "--sim needs MODEL[,MODEL...][@DRIVER], e.g. h200@13000; got "
                                   "'%s' (models: h200 h100 a100 l4 b200)",
                                   spec);
    memcpy(models, spec, len);
    models[len] = '\0';
    if (at && greenctx_parse_int(at + 1, 2000, 99999, &opts->sim_driver_version) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "--sim: the driver version after @ is 1000 * major + 10 * "
                                   "minor, e.g. 13000 for 13.0 or 12050 for 12.5; got '%s'",
                                   at + 1);

    const char *lib = find_sim_library();
    if (!lib)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED,
                                   gctx_status_name(GCTX_ERROR_NO_DRIVER),
                                   "--sim: the simulated driver (libgreenctx_sim.so) was not "
                                   "found next to the tool, in ../lib/greenctx, or in the build "
                                   "tree; set GREENCTX_SIM_LIBRARY to its path");
    setenv("GREENCTX_CUDA_LIBRARY", lib, 1);
    setenv("GREENCTX_SIM_DEVICES", models, 1);
    if (opts->sim_driver_version) {
        char version[16];
        snprintf(version, sizeof version, "%d", opts->sim_driver_version);
        setenv("GREENCTX_SIM_DRIVER_VERSION", version, 1);
    }
    opts->simulated = 1;
    opts->sim_models = models;
    return GREENCTX_EXIT_OK;
}

const char *greenctx_tool_sim_models(void)
{
    return greenctx_sim_text(find_sim_library(), "gctxsim_models");
}
