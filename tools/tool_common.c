/* Helpers every command shares: errors, --sim, the driver's start, the files installed with the
 * tool. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tool.h"

void greenctx_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
    int len = vsnprintf(buf, size, fmt, ap);
    if (len >= (int)size)
        buf[json_utf8_prefix(buf, size - 1)] = '\0';
}

static void greenctx_json_error(const char *command, const char *status, const char *message)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.error/1");
    json_string(&w, "command", command);
    json_object(&w, "error");
    json_string(&w, "status", status);
    json_string(&w, "message", message);
    json_end(&w);
}

int greenctx_tool_error(const greenctx_tool_options *opts, int exit_code, const char *status,
                        const char *fmt, ...)
{
    char message[2048];
    va_list ap;
    va_start(ap, fmt);
    greenctx_vformat(message, sizeof message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "greenctx%s%s: %s\n", opts->command ? " " : "",
            opts->command ? opts->command : "", message);
    if (opts->json)
        greenctx_json_error(opts->command, status, message);
    return exit_code;
}

int greenctx_tool_fail(const greenctx_tool_options *opts, gctx_status status)
{
    const char *message = gctx_last_error();
    return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(status), "%s",
                               message && *message ? message : gctx_status_string(status));
}

/* What `function` (const char *(void)) of the simulated driver at path returns, or NULL. */
static const char *greenctx_sim_text(const char *path, const char *function)
{
    void *sim = path && *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    const char *(*text)(void) = NULL;
    if (sim)
        *(void **)&text = dlsym(sim, function);
    return text ? text() : NULL; /* the library stays loaded: the text is its */
}

/* The user's own command line with "--sim h200" after the program, for the no-driver hint. */
static void print_sim_hint(const greenctx_tool_options *opts)
{
    fputs("  no CUDA driver here; try the simulated one: greenctx --sim h200", stderr);
    for (int i = 1; i < opts->argc; i++)
        fprintf(stderr, " %s", opts->argv[i]);
    fputc('\n', stderr);
}

/* 1 for the same slot: the driver writes a 4-digit PCI domain, nvidia-smi an 8-digit one. */
static int same_bus_id(const char *a, const char *b)
{
    unsigned x[4], y[4];
    char end;
    return sscanf(a, "%x:%x:%x.%x%c", &x[0], &x[1], &x[2], &x[3], &end) == 4 &&
           sscanf(b, "%x:%x:%x.%x%c", &y[0], &y[1], &y[2], &y[3], &end) == 4 && !memcmp(x, y, sizeof x);
}

/* --device GPU-... (a UUID or its start, as nvidia-smi -i takes it) or a PCI bus id. */
static int find_named_device(greenctx_tool_options *opts)
{
    const char *name = opts->device_name;
    int count = 0, found = -1, matches = 0;
    gctx_status s = gctx_device_count(&count);
    for (int d = 0; s == GCTX_SUCCESS && d < count; d++) {
        char uuid[GCTX_UUID_SIZE], bus_id[GCTX_PCI_BUS_ID_SIZE];
        if ((s = gctx_device_uuid(d, uuid, sizeof uuid)) != GCTX_SUCCESS ||
            (s = gctx_device_pci_bus_id(d, bus_id, sizeof bus_id)) != GCTX_SUCCESS)
            break;
        if (!strncasecmp(uuid, name, strlen(name)) || same_bus_id(bus_id, name)) {
            found = d;
            matches++;
        }
    }
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail(opts, s);
    if (matches > 1)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "--device %s: the UUIDs of %d devices start with it; give more "
                                   "of it (greenctx info --query index,uuid lists them)",
                                   name, matches);
    if (matches == 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DEVICE",
                                   "--device %s: no device has this UUID or PCI bus id; the "
                                   "driver shows %d (greenctx info --query index,uuid,pci.bus_id "
                                   "lists them)",
                                   name, count);
    opts->device = found;
    return GREENCTX_EXIT_OK;
}

int greenctx_tool_start(greenctx_tool_options *opts)
{
    gctx_status s = gctx_init();
    if (s != GCTX_SUCCESS) {
        /* The simulated driver knows what is valid: it is loaded again to ask why it refused. */
        const char *refused = opts->simulated || s != GCTX_ERROR_NO_DRIVER
                                  ? greenctx_sim_text(getenv("GREENCTX_CUDA_LIBRARY"),
                                                      "gctxsim_config_error")
                                  : NULL;
        /* The variables --sim set are blamed on --sim, which the user typed. */
        const char *why = refused ? strstr(refused, ": ") : NULL;
        if (why && opts->simulated && (!strncmp(refused, "GREENCTX_SIM_DEVICES=", 21) ||
                                       !strncmp(refused, "GREENCTX_SIM_DRIVER_VERSION=", 28)))
            return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "--sim %s%s%s%s",
                                       opts->sim_models, opts->sim_driver_version ? "@" : "",
                                       opts->sim_driver_version ? getenv("GREENCTX_SIM_DRIVER_VERSION") : "", why);
        if (refused)
            return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "%s", refused);
        if (s == GCTX_ERROR_INVALID_ARGUMENT) /* the library's own variables (GREENCTX_LOG) */
            return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "%s",
                                       gctx_last_error());
        const char *what = s == GCTX_ERROR_NO_DRIVER ? "no CUDA driver was found"
                                                     : "the CUDA driver failed to start";
        greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(s), "%s.\n  tried: %s",
                            what, gctx_last_error());
        if (!opts->simulated && s == GCTX_ERROR_NO_DRIVER)
            print_sim_hint(opts);
        return GREENCTX_EXIT_FAILED;
    }
    if (greenctx_tool_simulated(opts)) {
        int version = 0;
        char text[16] = "?";
        if (gctx_driver_version(&version) == GCTX_SUCCESS)
            greenctx_format_driver_version(version, text, sizeof text);
        const char *models = opts->sim_models ? opts->sim_models : getenv("GREENCTX_SIM_DEVICES");
        fprintf(opts->json || opts->banner_on_stderr ? stderr : stdout,
                "simulated driver: %s (driver %s) — no GPU is used\n",
                models && *models ? models : "its default devices", text);
    }
    return opts->device_name ? find_named_device(opts) : GREENCTX_EXIT_OK;
}

int greenctx_driver_simulated(void)
{
    /* GREENCTX_CUDA_LIBRARY may name the simulator without --sim: its file name tells. */
    const char *path = gctx_driver_path();
    const char *name = path ? strrchr(path, '/') : NULL;
    return path && strstr(name ? name + 1 : path, "libgreenctx_sim");
}

int greenctx_tool_simulated(const greenctx_tool_options *opts)
{
    return opts->simulated || greenctx_driver_simulated();
}

int greenctx_tool_finish(const greenctx_tool_options *opts, int rc)
{
    if (rc == GREENCTX_EXIT_HELP)
        rc = GREENCTX_EXIT_OK;
    /* A failure told on stderr only still gets a JSON document saying so under --json. */
    if (opts->json && rc != GREENCTX_EXIT_OK && json_documents_begun() == 0)
        greenctx_json_error(opts->command, rc == GREENCTX_EXIT_USAGE ? "usage" : "failed",
                            "the command failed; what went wrong is on stderr");
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    int saved = errno;
    fprintf(stderr, "greenctx%s%s: could not write the output: %s\n", opts->command ? " " : "",
            opts->command ? opts->command : "", strerror(saved));
    return GREENCTX_EXIT_FAILED;
}

static char found[PATH_MAX + 128];

/* dir/sub+file into `found`; 1 when it is a readable file (file NULL or "": none). */
static int try_path(const char *dir, const char *sub, const char *file)
{
    int n = snprintf(found, sizeof found, "%s/%s%s", dir, sub, file ? file : "");
    return file && *file && n > 0 && (size_t)n < sizeof found && access(found, R_OK) == 0;
}

const char *tool_find_companion(const char *file, const char *env_var, const char *install_relpath,
                                const char *build_relpath)
{
    const char *env = getenv(env_var);
    if (env && *env)
        return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        if (try_path(exe, "", file) || try_path(exe, "", install_relpath) ||
            try_path(exe, "../lib/greenctx/", file) || try_path(exe, "", build_relpath))
            return found;
    }
    return NULL;
}

/* The simulated driver's file: $GREENCTX_SIM_LIBRARY, else beside the executable, the install
 * layout, ../lib/greenctx/, then the build tree's (all relative to the executable). */
static const char *find_sim_library(void)
{
    return tool_find_companion("libgreenctx_sim.so", "GREENCTX_SIM_LIBRARY",
                               GREENCTX_SIM_INSTALL_RELPATH, GREENCTX_SIM_BUILD_RELPATH);
}

/* --sim MODEL[,MODEL...][@DRIVER]: the simulated driver found beside the tool or the bench. */
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
