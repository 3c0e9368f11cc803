/* plugstack.conf's arguments, and what srun can check of a request before the job starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_request.h"
#include "spank_plugin.h"

/* The reason a check failed, into err; -1, as the checks return. */
#define REFUSE(...) (snprintf(err, size, __VA_ARGS__), -1)

static int copy_value(const char *key, const char *value, char *out, size_t out_size, char *err,
                      size_t size)
{
    if (!*value || strlen(value) >= out_size)
        return REFUSE("%s= needs a value (at most %zu characters)", key, out_size - 1);
    strcpy(out, value);
    return 0;
}

int spank_config_parse(int argc, char **argv, spank_config *config, char *err, size_t size)
{
    memset(config, 0, sizeof *config);
    snprintf(config->runtime_dir, sizeof config->runtime_dir, "%s", GREENCTX_SPANK_RUNTIME_DIR);
    snprintf(config->preload, sizeof config->preload, "%s", GREENCTX_SPANK_PRELOAD);
    for (int i = 0; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        size_t key_len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
        const char *value = eq ? eq + 1 : "";
        if (key_len == 7 && strncmp(argv[i], "default", 7) == 0) {
            if (copy_value("default", value, config->default_request,
                           sizeof config->default_request, err, size) != 0)
                return -1;
            char why[512];
            if (spank_request_check(value, why, sizeof why) != 0)
                return REFUSE("default=%s: %s", value, why);
        } else if (key_len == 11 && strncmp(argv[i], "require_mps", 11) == 0) {
            if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
                return REFUSE("require_mps=%s: use yes or no", value);
            config->require_mps = strcmp(value, "yes") == 0;
        } else if (key_len == 11 && strncmp(argv[i], "runtime_dir", 11) == 0) {
            if (copy_value("runtime_dir", value, config->runtime_dir, sizeof config->runtime_dir,
                           err, size) != 0)
                return -1;
            if (value[0] != '/')
                return REFUSE("runtime_dir=%s: give an absolute path", value);
        } else if (key_len == 7 && strncmp(argv[i], "preload", 7) == 0) {
            if (copy_value("preload", value, config->preload, sizeof config->preload, err,
                           size) != 0)
                return -1;
        } else {
            return REFUSE("unknown argument '%s' in plugstack.conf (the plugin takes "
                          "default=REQ, require_mps=yes|no, runtime_dir=DIR, preload=PATH)",
                          argv[i]);
        }
    }
    return 0;
}

/* What a claim takes: a count of SMs, a share of the device in percent, rest (every free
 * SM), or all (every SM). */
static int check_group(const char *text)
{
    size_t digits = strspn(text, "0123456789");
    if (strcmp(text, "all") == 0 || strcmp(text, "rest") == 0)
        return 0;
    if (digits == 0 || digits > 6)
        return -1;
    if (text[digits] == '%' && text[digits + 1] == '\0') {
        long percent = strtol(text, NULL, 10);
        return percent >= 1 && percent <= 100 ? 0 : -1;
    }
    return text[digits] == '\0' && strtol(text, NULL, 10) > 0 ? 0 : -1;
}

int spank_request_check(const char *request, char *err, size_t size)
{
    run_request parsed;
    char why[512];
    if (!*request)
        return REFUSE("give a count of SMs (16), a share of the GPU (25%%), rest or all");
    if (run_request_parse(request, &parsed, why, sizeof why) != 0)
        return REFUSE("%s", why);
    for (unsigned i = 0; i < parsed.nb_entries; i++)
        if (check_group(parsed.entries[i].text) != 0)
            return REFUSE("'%s' is not a count of SMs (16), a share of the GPU (25%%), rest "
                          "(every free SM) or all; DEV=COUNT,DEV=COUNT gives each of the task's "
                          "GPUs its own",
                          parsed.entries[i].text);
    return 0;
}
