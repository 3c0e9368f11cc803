/* `greenctx bench ...`: greenctx-bench, beside the tool, with the shared options handed on. A
 * child as run's programs are, not an exec: `help bench` and the man page read its usage. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

int greenctx_cmd_bench(int argc, char **argv, greenctx_tool_options *opts)
{
    const char *bench = tool_find_companion("greenctx-bench", "GREENCTX_BENCH", NULL, NULL);
    if (!bench)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_found",
                                   "greenctx-bench, the benchmarks' program, was not found next "
                                   "to the tool; set GREENCTX_BENCH to its path");
    if (access(bench, X_OK) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_found",
                                   "could not run %s: %s", bench, strerror(errno));
    char path[4096], sim[300], device[16], sim_flag[] = "--sim", device_flag[] = "--device",
                                            json_flag[] = "--json";
    snprintf(path, sizeof path, "%s", bench);
    char *args[argc + 8];
    int n = 0;
    args[n++] = path;
    if (opts->simulated) {
        snprintf(sim, sizeof sim, "%s", opts->sim_models);
        if (opts->sim_driver_version)
            snprintf(sim + strlen(sim), sizeof sim - strlen(sim), "@%d",
                     opts->sim_driver_version);
        args[n++] = sim_flag;
        args[n++] = sim;
    }
    if (opts->device_given) { /* a UUID or bus id as given: the bench resolves it */
        snprintf(device, sizeof device, "%d", opts->device);
        args[n++] = device_flag;
        args[n++] = opts->device_name ? (char *)opts->device_name : device;
    }
    if (opts->json)
        args[n++] = json_flag;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    int status;
    pid_t pid = run_child_start(args, 0);
    if (pid < 0 || run_child_wait(pid, &status) != 0)
        return GREENCTX_EXIT_FAILED;
    opts->json = 0; /* the bench printed its own document, error or not */
    return run_child_exit(status);
}
