/* greenctx mps start|stop|status: the user's own MPS control daemon (common/mps_control.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mps_control.h"
#include "options.h"
#include "tool.h"

#define ANSWER_WAIT_MS 10000

typedef struct mps_setup {
    char runtime[PATH_MAX];
    mps_control control;
} mps_setup;

const char *const greenctx_mps_usage[] = {
    "usage: greenctx mps start|stop|status [--print-env] [--json]\n"
    "\n"
    "Your own MPS control daemon, so that tenants on disjoint SM claims (greenctx run)\n"
    "run side by side instead of time-sliced. Its pipe and log directories are\n"
    "<runtime>/mps/pipe and <runtime>/mps/log (runtime: $GREENCTX_RUNTIME_DIR, else\n"
    "/var/tmp/greenctx-UID), each your own. Nothing else changes: not the GPU's\n"
    "compute mode, not any setting.\n"
    "  start        starts `" MPS_CONTROL_NAME " -d`; prints the export line clients need\n"
    "  stop         sends it `quit`\n"
    "  status       running or not, and its MPS servers (get_server_list); exit 0 when\n"
    "               running, 1 when not\n"
    "  --print-env  start, status: only the export lines, for\n"
    "               eval \"$(greenctx mps start --print-env)\"\n"
    "GREENCTX_MPS_CONTROL names another control program (a path). Under MPS a fatal\n"
    "fault in one client reaches every client of the server (docs/tenants.md).\n",
    NULL};

/* The library's rule for the runtime directory (include/greenctx_claims.h). */
static int resolve_runtime(mps_setup *m)
{
    const char *dir = getenv("GREENCTX_RUNTIME_DIR");
    int n;
    if (dir && *dir)
        n = snprintf(m->runtime, sizeof m->runtime, "%s", dir);
    else
        n = snprintf(m->runtime, sizeof m->runtime, "%s/greenctx-%u",
                     access("/var/tmp", W_OK) == 0 ? "/var/tmp" : "/tmp", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= sizeof m->runtime - 16)
        return -1;
    char pipe_dir[PATH_MAX + 16], log_dir[PATH_MAX + 16];
    snprintf(pipe_dir, sizeof pipe_dir, "%s/mps/pipe", m->runtime);
    snprintf(log_dir, sizeof log_dir, "%s/mps/log", m->runtime);
    return mps_control_open(&m->control, pipe_dir, log_dir);
}

/* 0 when path is a directory (not a link) of the user's own that no other user can write. */
static int own_dir(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

/* mkdir -p, 0700; from the runtime directory down every directory must be the user's own, or
 * its owner could swap the exported CUDA_MPS_PIPE_DIRECTORY for his own. */
static int make_dir(const char *runtime, const char *path)
{
    char mps[PATH_MAX + 16];
    snprintf(mps, sizeof mps, "%s/mps", runtime);
    char partial[PATH_MAX + 16];
    snprintf(partial, sizeof partial, "%s", path);
    for (char *p = partial + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(partial, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = saved;
        if (!saved)
            break;
    }
    return own_dir(runtime) || own_dir(mps) || own_dir(path) ? -1 : 0;
}

static void print_quoted_export(const char *name, const char *value)
{
    printf("export %s='", name);
    for (const char *p = value; *p; p++)
        fputs(*p == '\'' ? "'\\''" : (char[2]){*p, 0}, stdout);
    printf("'\n");
}

static void print_env(const mps_control *m)
{
    print_quoted_export("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir);
    print_quoted_export("CUDA_MPS_LOG_DIRECTORY", m->log_dir);
}

static void print_json(const mps_control *m, int running, const char *servers)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.mps/1");
    json_bool(&w, "running", running);
    json_string(&w, "pipe_dir", m->pipe_dir);
    json_string(&w, "log_dir", m->log_dir);
    json_string(&w, "control", m->program[0] ? m->program : NULL);
    json_array(&w, "servers");
    char copy[4096], *save = NULL;
    snprintf(copy, sizeof copy, "%s", servers ? servers : "");
    for (char *s = strtok_r(copy, " \t\r\n", &save); s; s = strtok_r(NULL, " \t\r\n", &save))
        json_string(&w, NULL, s);
    json_end(&w);
}

static int start(const greenctx_tool_options *opts, const mps_setup *setup, int print_env_only)
{
    const mps_control *m = &setup->control;
    if (mps_control_answers(m))
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "running",
                                   "an MPS control daemon already answers on %s: nothing was "
                                   "started (greenctx mps status; stop it with greenctx mps "
                                   "stop)",
                                   m->pipe_dir);
    if (make_dir(setup->runtime, m->pipe_dir) != 0 || make_dir(setup->runtime, m->log_dir) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "runtime_dir",
                                   "%s/mps can't be made as the user's own directory: %s%s",
                                   setup->runtime, strerror(errno),
                                   errno == EPERM ? " (it, or a directory on the way from the "
                                                    "runtime directory, is another user's, "
                                                    "writable by others, or a link: use a "
                                                    "GREENCTX_RUNTIME_DIR of your own)"
                                                  : "");
    char why[3 * PATH_MAX];
    int started = mps_control_start(m, ANSWER_WAIT_MS, why, sizeof why);
    if (started != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED,
                                   started == -1 ? "control_failed" : "not_answering", "%s", why);
    if (opts->json) {
        print_json(m, 1, NULL);
    } else if (print_env_only) {
        fprintf(stderr, "greenctx mps: an MPS control daemon runs on %s\n", m->pipe_dir);
        print_env(m);
    } else {
        printf("greenctx mps: your MPS control daemon runs (pipe %s, log %s); every client\n"
               "(greenctx run, your programs) must see the same pipe directory:\n",
               m->pipe_dir, m->log_dir);
        print_env(m);
        printf("Stop it with greenctx mps stop. Under MPS a fatal fault in one client reaches "
               "every client of the server.\n");
    }
    return GREENCTX_EXIT_OK;
}

static int stop(const greenctx_tool_options *opts, const mps_control *m)
{
    char output[4096];
    if (!mps_control_answers(m))
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_running",
                                   "no MPS control daemon answers on %s: nothing to stop",
                                   m->pipe_dir);
    int status = mps_control_run(m, "quit\n", output, sizeof output);
    if (status != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "control_failed",
                                   "`echo quit | %s` exited with status %d%s%s", m->program,
                                   status, output[0] ? ": " : "", output);
    if (mps_control_wait(m, 0, ANSWER_WAIT_MS) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "still_running",
                                   "the daemon on %s was sent quit, but still answers after %d s "
                                   "(its clients may still run; its log: %s)",
                                   m->pipe_dir, ANSWER_WAIT_MS / 1000, m->log_dir);
    if (opts->json)
        print_json(m, 0, NULL);
    else
        printf("greenctx mps: the MPS control daemon on %s has stopped\n", m->pipe_dir);
    return GREENCTX_EXIT_OK;
}

static int status(const greenctx_tool_options *opts, const mps_control *m, int print_env_only)
{
    const char *shell_pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char servers[4096] = "";
    int running = mps_control_answers(m);
    if (running && m->program[0])
        mps_control_run(m, "get_server_list\n", servers, sizeof servers);
    if (opts->json) {
        print_json(m, running, servers);
    } else if (print_env_only) {
        if (running)
            print_env(m);
    } else {
        printf("greenctx mps: %s on %s\n",
               running ? "your MPS control daemon runs" : "no MPS control daemon answers",
               m->pipe_dir);
        for (char *c = servers; *c; c++)
            *c = *c == '\n' || *c == '\r' ? ' ' : *c;
        if (running)
            printf("  MPS servers (get_server_list): %s\n",
                   servers[strspn(servers, " \t")] ? servers
                                                   : "none yet (one starts with the first "
                                                     "client)");
        if (shell_pipe && *shell_pipe && strcmp(shell_pipe, m->pipe_dir) != 0)
            printf("  this shell's CUDA_MPS_PIPE_DIRECTORY is %s: its CUDA programs use that "
                   "daemon, not this one\n",
                   shell_pipe);
        if (!running)
            printf("  start it with greenctx mps start\n");
    }
    return running ? GREENCTX_EXIT_OK : GREENCTX_EXIT_FAILED;
}

const greenctx_option greenctx_mps_options[] = {{"--print-env", NULL}, {NULL, NULL}};
const char *const greenctx_mps_actions[] = {"start", "stop", "status", NULL};

int greenctx_cmd_mps(int argc, char **argv, greenctx_tool_options *opts)
{
    enum { PRINT_ENV };
    enum { START, STOP, STATUS }; /* greenctx_mps_actions */
    const greenctx_option *own = greenctx_mps_options;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    const char *action = NULL;
    int print_env_only = 0;
    for (int id; (id = greenctx_args_next(&args, own)) != GREENCTX_ARG_END;) {
        if (id == GREENCTX_ARG_STOP)
            return args.rc;
        if (id == PRINT_ENV)
            print_env_only = 1;
        else if (action)
            return greenctx_args_bad(&args, "give one of start, stop or status; got '%s' too",
                                     args.value);
        else
            action = args.value;
    }
    int which = -1;
    for (int i = 0; action && greenctx_mps_actions[i]; i++)
        if (!strcmp(action, greenctx_mps_actions[i]))
            which = i;
    if (which < 0)
        return greenctx_args_bad(&args, "give start, stop or status%s%s%s",
                                 action ? "; got '" : "", action ? action : "", action ? "'" : "");
    if (print_env_only && which == STOP)
        return greenctx_args_bad(&args, "--print-env goes with start or status");
    mps_setup m;
    memset(&m, 0, sizeof m);
    if (resolve_runtime(&m) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "runtime_dir",
                                   "the runtime directory's path is too long");
    int rc;
    if (which != STATUS && !m.control.program[0])
        rc = greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "no_mps_control",
                                 "MPS can't be %s: %s", which == START ? "started" : "stopped",
                                 m.control.why_none);
    else
        rc = which == START  ? start(opts, &m, print_env_only)
             : which == STOP ? stop(opts, &m.control)
                             : status(opts, &m.control, print_env_only);
    mps_control_close(&m.control);
    return rc;
}
