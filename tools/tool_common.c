/* Helpers every command shares: common options, numbers, JSON strings, the start banner. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

int greenctx_parse_int(const char *text, int min, int max, int *value)
{
    if (!text || !*text)
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end != '\0' || v < min || v > max)
        return -1;
    *value = (int)v;
    return 0;
}

int greenctx_parse_common(int *argc, char **argv, int default_device, greenctx_common_args *args)
{
    args->device = default_device;
    args->device_given = 0;
    args->json = 0;
    int out = 1, in = 1, ended = 0;
    while (in < *argc) {
        char *arg = argv[in];
        if (ended) {
            argv[out++] = argv[in++];
        } else if (!strcmp(arg, "--")) {
            ended = 1;
            argv[out++] = argv[in++];
        } else if (!strcmp(arg, "--json")) {
            args->json = 1;
            in++;
        } else if (!strcmp(arg, "--device") || !strncmp(arg, "--device=", 9)) {
            const char *value = arg[8] == '=' ? arg + 9 : (in + 1 < *argc ? argv[in + 1] : NULL);
            if (greenctx_parse_int(value, 0, INT_MAX, &args->device) != 0) {
                fprintf(stderr, "greenctx %s: --device needs a device number (0, 1, ...), got "
                                "'%s'\n",
                        argv[0], value ? value : "nothing");
                return GREENCTX_EXIT_USAGE;
            }
            args->device_given = 1;
            in += arg[8] == '=' ? 1 : 2;
        } else {
            argv[out++] = argv[in++];
        }
    }
    *argc = out;
    argv[out] = NULL;
    return GREENCTX_EXIT_OK;
}

void greenctx_json_string(FILE *out, const char *text)
{
    if (!text) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

const char *greenctx_format_driver_version(int version, char *buf, size_t size)
{
    snprintf(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
    return buf;
}

int greenctx_tool_fail(const char *command, gctx_status status)
{
    const char *message = gctx_last_error();
    fprintf(stderr, "greenctx %s: %s\n", command,
            message && *message ? message : gctx_status_string(status));
    return GREENCTX_EXIT_FAILED;
}

int greenctx_tool_start(const greenctx_tool_options *opts, const char *command, int json)
{
    gctx_status s = gctx_init();
    if (s != GCTX_SUCCESS) {
        const char *what = s == GCTX_ERROR_NO_DRIVER ? "no CUDA driver was found"
                                                     : "the CUDA driver failed to start";
        fprintf(stderr, "greenctx %s: %s.\n  tried: %s\n", command, what, gctx_last_error());
        if (!opts->simulated)
            fprintf(stderr, "  try the simulated driver: greenctx --sim h200 %s\n", command);
        return GREENCTX_EXIT_FAILED;
    }
    if (greenctx_tool_simulated(opts)) {
        int version = 0;
        char text[16] = "?";
        if (gctx_driver_version(&version) == GCTX_SUCCESS)
            greenctx_format_driver_version(version, text, sizeof text);
        const char *models = opts->sim_models ? opts->sim_models : getenv("GREENCTX_SIM_DEVICES");
        fprintf(json ? stderr : stdout, "simulated driver: %s (driver %s) — no GPU is used\n",
                models && *models ? models : "its default devices", text);
    }
    return GREENCTX_EXIT_OK;
}

int greenctx_tool_simulated(const greenctx_tool_options *opts)
{
    if (opts->simulated)
        return 1;
    /* GREENCTX_CUDA_LIBRARY may name the simulator without --sim: it exports test hooks. */
    const char *path = gctx_driver_path();
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int simulated = lib && dlsym(lib, "gctxsim_live_objects");
    if (lib)
        dlclose(lib);
    return simulated;
}
