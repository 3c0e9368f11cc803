/* plugstack.conf's arguments, and what srun can check of a request before the job starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_request.h"
#include "spank_plugin.h"

/* The reason a check failed, into err; -1, as the checks return. */
#define REFUSE(...) (snprintf(err, size, __VA_ARGS__), -1)

int spank_config_parse(int argc, char **argv, spank_config *config, char *err, size_t size)
{
    memset(config, 0, sizeof *config);
    snprintf(config->runtime_dir, sizeof config->runtime_dir, "%s", GREENCTX_SPANK_RUNTIME_DIR);
    snprintf(config->preload, sizeof config->preload, "%s", GREENCTX_SPANK_PRELOAD);
    /* The arguments that take a text, and where it goes. */
    const struct {
        const char *key;
        char *field;
        size_t size;
    } texts[] = {{"default", config->default_request, sizeof config->default_request},
                 {"runtime_dir", config->runtime_dir, sizeof config->runtime_dir},
                 {"preload", config->preload, sizeof config->preload}};
    for (int i = 0; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        const char *value = eq ? eq + 1 : "";
        char key[16], why[512];
        snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - argv[i]) : (int)strlen(argv[i]),
                 argv[i]);
        int text = -1;
        for (int t = 0; t < (int)(sizeof texts / sizeof texts[0]); t++)
            if (strcmp(key, texts[t].key) == 0)
                text = t;
        if (text >= 0 && (!*value || strlen(value) >= texts[text].size))
            return REFUSE("%s= needs a value (at most %zu characters)", key, texts[text].size - 1);
        if (text >= 0)
            strcpy(texts[text].field, value);
        if (strcmp(key, "default") == 0 && spank_request_check(value, why, sizeof why) != 0)
            return REFUSE("default=%s: %s", value, why);
        if (strcmp(key, "runtime_dir") == 0 && value[0] != '/')
            return REFUSE("runtime_dir=%s: give an absolute path", value);
        if (strcmp(key, "require_mps") == 0) {
            if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
                return REFUSE("require_mps=%s: use yes or no", value);
            config->require_mps = strcmp(value, "yes") == 0;
        } else if (text < 0) {
            return REFUSE("unknown argument '%s' in plugstack.conf (the plugin takes "
                          "default=REQ, require_mps=yes|no, runtime_dir=DIR, preload=PATH)",
                          argv[i]);
        }
    }
    return 0;
}

/* What a claim takes: a count of SMs, a percent share, rest (free SMs) or all (every SM). */
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
