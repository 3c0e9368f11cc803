/* greenctx mps start|stop|status: the user's own MPS control daemon, with its own pipe and log
 * directories; its control program is found on PATH (GREENCTX_MPS_CONTROL: another, for
 * tests). The GPU's compute mode and every other setting stay as they are. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define MPS_CONTROL_NAME "nvidia-cuda-mps-control"
#define ANSWER_WAIT_MS 10000

typedef struct mps_daemon {
    char runtime[PATH_MAX];
    char pipe_dir[PATH_MAX + 16], log_dir[PATH_MAX + 16];
    char program[PATH_MAX]; /* the control program, "" when none was found */
    const char *why_none;   /* then why, for a message */
    char start_log[PATH_MAX + 48];
    char shell_pipe[PATH_MAX]; /* CUDA_MPS_PIPE_DIRECTORY as the tool was started with, or "" */
} mps_daemon;

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

static void find_program(mps_daemon *m)
{
    const char *override = getenv("GREENCTX_MPS_CONTROL");
    if (override && *override) {
        struct stat st;
        if (stat(override, &st) == 0 && S_ISDIR(st.st_mode))
            m->why_none = "GREENCTX_MPS_CONTROL names a directory, not the control program "
                          "(nvidia-cuda-mps-control) itself";
        else if (access(override, X_OK) == 0)
            snprintf(m->program, sizeof m->program, "%s", override);
        else
            m->why_none = "GREENCTX_MPS_CONTROL names no executable file";
        return;
    }
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : ""), *save = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        char candidate[PATH_MAX];
        int n = snprintf(candidate, sizeof candidate, "%s/%s", *d ? d : ".", MPS_CONTROL_NAME);
        if (n > 0 && (size_t)n < sizeof candidate && access(candidate, X_OK) == 0) {
            snprintf(m->program, sizeof m->program, "%s", candidate);
            break;
        }
    }
    free(copy);
    if (!m->program[0])
        m->why_none = MPS_CONTROL_NAME " is not on PATH (it comes with the NVIDIA driver; "
                                       "GREENCTX_MPS_CONTROL may name it)";
}

/* The daemon's directories under the library's runtime directory (include/greenctx_claims.h),
 * set in this environment (the control program's, and where gctx_mps_get_info looks), and the
 * control program; -1 when out of room. */
static int open_daemon(mps_daemon *m)
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
    snprintf(m->pipe_dir, sizeof m->pipe_dir, "%s/mps/pipe", m->runtime);
    snprintf(m->log_dir, sizeof m->log_dir, "%s/mps/log", m->runtime);
    snprintf(m->start_log, sizeof m->start_log, "%s/greenctx-start.log", m->log_dir);
    const char *shell_pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
    snprintf(m->shell_pipe, sizeof m->shell_pipe, "%s", shell_pipe ? shell_pipe : "");
    if (setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1) != 0 ||
        setenv("CUDA_MPS_LOG_DIRECTORY", m->log_dir, 1) != 0)
        return -1;
    find_program(m);
    return 0;
}

/* Runs the control program with input on its stdin (its output into output), or NULL: `-d`,
 * the daemon, its output in the start log. Its exit status, -1 when it did not run. */
static int run_control(const mps_daemon *m, const char *input, char *output, size_t size)
{
    int in[2], out[2];
    if (pipe(in) != 0)
        return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    char *const argv[] = {(char *)m->program, input ? NULL : "-d", NULL};
    pid_t child = fork();
    if (child == 0) {
        int log = input ? -1 : open(m->start_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        dup2(in[0], STDIN_FILENO);
        dup2(input ? out[1] : log, STDOUT_FILENO);
        if (!input)
            dup2(log, STDERR_FILENO);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execv(m->program, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (input && child > 0 && write(in[1], input, strlen(input)) < 0)
        input = NULL;
    close(in[1]);
    size_t used = 0;
    for (ssize_t n; child > 0 && used + 1 < size &&
                    (n = read(out[0], output + used, size - 1 - used)) > 0;)
        used += (size_t)n;
    if (size)
        output[used] = '\0';
    close(out[0]);
    int status = 0;
    if (child < 0)
        return -1;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* 1 when a daemon answers on the pipe directory (open_daemon set it in this environment). */
static int answers(void)
{
    gctx_mps_info info = GCTX_MPS_INFO_INIT;
    return gctx_mps_get_info(&info) == GCTX_SUCCESS && info.daemon_running;
}

/* Waits up to ANSWER_WAIT_MS until answers() says `running`; 0 when it did. */
static int wait_answer(int running)
{
    for (int waited = 0; waited < ANSWER_WAIT_MS; waited += 20) {
        if (answers() == running)
            return 0;
        nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
    }
    return -1;
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

static void print_env(const mps_daemon *m)
{
    print_quoted_export("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir);
    print_quoted_export("CUDA_MPS_LOG_DIRECTORY", m->log_dir);
}

static void print_json(const mps_daemon *m, int running, const char *servers)
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

static int start(const greenctx_tool_options *opts, const mps_daemon *m, int print_env_only)
{
    if (answers())
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "running",
                                   "an MPS control daemon already answers on %s: nothing was "
                                   "started (greenctx mps status; stop it with greenctx mps "
                                   "stop)",
                                   m->pipe_dir);
    if (make_dir(m->runtime, m->pipe_dir) != 0 || make_dir(m->runtime, m->log_dir) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "runtime_dir",
                                   "%s/mps can't be made as the user's own directory: %s%s",
                                   m->runtime, strerror(errno),
                                   errno == EPERM ? " (it, or a directory on the way from the "
                                                    "runtime directory, is another user's, "
                                                    "writable by others, or a link: use a "
                                                    "GREENCTX_RUNTIME_DIR of your own)"
                                                  : "");
    int started = run_control(m, NULL, NULL, 0);
    if (started != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "control_failed",
                                   "`%s -d` (CUDA_MPS_PIPE_DIRECTORY=%s) failed (exit status %d); "
                                   "its output: %s",
                                   m->program, m->pipe_dir, started, m->start_log);
    if (wait_answer(1) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_answering",
                                   "`%s -d` (CUDA_MPS_PIPE_DIRECTORY=%s) started, but no daemon "
                                   "answered within %d s; its log: %s",
                                   m->program, m->pipe_dir, ANSWER_WAIT_MS / 1000, m->log_dir);
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

static int stop(const greenctx_tool_options *opts, const mps_daemon *m)
{
    char output[4096];
    if (!answers())
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_running",
                                   "no MPS control daemon answers on %s: nothing to stop",
                                   m->pipe_dir);
    int status = run_control(m, "quit\n", output, sizeof output);
    if (status != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "control_failed",
                                   "`echo quit | %s` exited with status %d%s%s", m->program,
                                   status, output[0] ? ": " : "", output);
    if (wait_answer(0) != 0)
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

static int status(const greenctx_tool_options *opts, const mps_daemon *m, int print_env_only)
{
    char servers[4096] = "";
    int running = answers();
    if (running && m->program[0])
        run_control(m, "get_server_list\n", servers, sizeof servers);
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
        if (m->shell_pipe[0] && strcmp(m->shell_pipe, m->pipe_dir) != 0)
            printf("  this shell's CUDA_MPS_PIPE_DIRECTORY is %s: its CUDA programs use that "
                   "daemon, not this one\n",
                   m->shell_pipe);
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
    mps_daemon m = {0};
    if (open_daemon(&m) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "runtime_dir",
                                   "the runtime directory's path is too long");
    if (which != STATUS && !m.program[0])
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "no_mps_control",
                                   "MPS can't be %s: %s", which == START ? "started" : "stopped",
                                   m.why_none);
    return which == START  ? start(opts, &m, print_env_only)
           : which == STOP ? stop(opts, &m)
                           : status(opts, &m, print_env_only);
}
