/* `greenctx bench ...`: runs greenctx-bench, the benchmarks' own program beside the tool, with
 * the shared options the tool took before the command (--sim, --device, --json) handed on,
 * so the bench's commands and docs keep working through the tool. The tool has no bench
 * code. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "companion.h"
#include "tool.h"

extern char **environ;

int greenctx_cmd_bench(int argc, char **argv, greenctx_tool_options *opts)
{
    const char *bench = tool_find_companion("greenctx-bench", "GREENCTX_BENCH", NULL, NULL);
    if (!bench)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_found",
                                   "greenctx-bench, the benchmarks' program, was not found next "
                                   "to the tool; set GREENCTX_BENCH to its path");
    char sim[300], device[16], program[] = "greenctx-bench", sim_flag[] = "--sim",
                              device_flag[] = "--device", json_flag[] = "--json";
    char *args[argc + 8];
    int n = 0;
    args[n++] = program;
    if (opts->simulated) {
        snprintf(sim, sizeof sim, "%s", opts->sim_models);
        if (opts->sim_driver_version)
            snprintf(sim + strlen(sim), sizeof sim - strlen(sim), "@%d",
                     opts->sim_driver_version);
        args[n++] = sim_flag;
        args[n++] = sim;
    }
    if (opts->device_given) {
        snprintf(device, sizeof device, "%d", opts->device);
        args[n++] = device_flag;
        args[n++] = device;
    }
    if (opts->json)
        args[n++] = json_flag;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    /* A child, not an exec: `greenctx help bench` and the generated man page read its usage
     * from this process's stdout. */
    fflush(stdout);
    pid_t pid;
    int status, err = posix_spawn(&pid, bench, NULL, NULL, args, environ);
    if (err)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "failed", "could not run %s: %s",
                                   bench, strerror(err));
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    opts->json = 0; /* the bench printed its own document, error or not */
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "failed", "%s was killed by signal %d",
                               bench, WTERMSIG(status));
}
