/* greenctx mps start|stop|status [--print-env] [--json]: the user's own MPS control daemon,
 * with its own pipe and log directories under the runtime directory (<runtime>/mps/pipe,
 * <runtime>/mps/log). It only runs `nvidia-cuda-mps-control` (GREENCTX_MPS_CONTROL: another
 * program, for tests) with CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY set: the GPU's
 * compute mode and every other setting stay as they are. */
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

#include "options.h"
#include "tool.h"

#define CONTROL_NAME "nvidia-cuda-mps-control"
#define ANSWER_WAIT_MS 10000

typedef struct mps_setup {
    char runtime[PATH_MAX];
    char pipe_dir[PATH_MAX + 16];
    char log_dir[PATH_MAX + 16];
    char control[PATH_MAX]; /* the control program, "" when none was found */
    const char *why_no_control;
} mps_setup;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: greenctx mps start|stop|status [--print-env] [--json]\n"
            "\n"
            "Your own MPS control daemon, so that tenants on disjoint SM claims (greenctx run)\n"
            "run side by side instead of time-sliced. Its pipe and log directories are\n"
            "<runtime>/mps/pipe and <runtime>/mps/log (runtime: $GREENCTX_RUNTIME_DIR, else\n"
            "$XDG_RUNTIME_DIR/greenctx, else /tmp/greenctx-UID). Nothing else changes: not the\n"
            "GPU's compute mode, not any setting.\n"
            "  start        starts `%s -d`; prints the export line clients need\n"
            "  stop         sends it `quit`\n"
            "  status       running or not, and its MPS servers (get_server_list); exit 0 when\n"
            "               running, 1 when not\n"
            "  --print-env  start, status: only the export lines, for\n"
            "               eval \"$(greenctx mps start --print-env)\"\n"
            "GREENCTX_MPS_CONTROL names another control program (a path). Under MPS a fatal\n"
            "fault in one client reaches every client of the server (docs/tenants.md).\n",
            CONTROL_NAME);
}

/* The library's rule for the runtime directory (include/greenctx.h, Tenants). */
static int resolve_runtime(mps_setup *m)
{
    const char *dir = getenv("GREENCTX_RUNTIME_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (dir && *dir)
        n = snprintf(m->runtime, sizeof m->runtime, "%s", dir);
    else if (xdg && *xdg)
        n = snprintf(m->runtime, sizeof m->runtime, "%s/greenctx", xdg);
    else
        n = snprintf(m->runtime, sizeof m->runtime, "/tmp/greenctx-%u", (unsigned)getuid());
    if (n < 0 || (size_t)n >= sizeof m->runtime - 16)
        return -1;
    snprintf(m->pipe_dir, sizeof m->pipe_dir, "%s/mps/pipe", m->runtime);
    snprintf(m->log_dir, sizeof m->log_dir, "%s/mps/log", m->runtime);
    return 0;
}

static void find_control(mps_setup *m)
{
    const char *override = getenv("GREENCTX_MPS_CONTROL");
    m->control[0] = '\0';
    if (override && *override) {
        if (access(override, X_OK) == 0)
            snprintf(m->control, sizeof m->control, "%s", override);
        else
            m->why_no_control = "GREENCTX_MPS_CONTROL names no executable file";
        return;
    }
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : ""), *save = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        char candidate[PATH_MAX];
        int n = snprintf(candidate, sizeof candidate, "%s/%s", *d ? d : ".", CONTROL_NAME);
        if (n > 0 && (size_t)n < sizeof candidate && access(candidate, X_OK) == 0) {
            snprintf(m->control, sizeof m->control, "%s", candidate);
            break;
        }
    }
    free(copy);
    if (!m->control[0])
        m->why_no_control = CONTROL_NAME " is not on PATH (it comes with the NVIDIA driver; "
                                         "GREENCTX_MPS_CONTROL may name it)";
}

/* mkdir -p with mode 0700 for what is made; an existing directory must be the user's. */
static int make_dir(const char *path)
{
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
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

/* What clients use: this process's view, so gctx_mps_get_info asks the right pipe. */
static int daemon_answers(const mps_setup *m)
{
    setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", m->log_dir, 1);
    gctx_mps_info info = GCTX_MPS_INFO_INIT;
    return gctx_mps_get_info(&info) == GCTX_SUCCESS && info.daemon_running;
}

static int wait_for(const mps_setup *m, int running)
{
    for (int waited = 0; waited < ANSWER_WAIT_MS; waited += 20) {
        if (daemon_answers(m) == running)
            return 0;
        nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
    }
    return -1;
}

/* Runs the control program: with `command` fed on stdin (its output, up to size, in output),
 * or with NULL, as `-d` (the daemon). The daemon gets no end of this process's output, else
 * eval "$(greenctx mps start --print-env)" would wait for it to end: its stdout and stderr go
 * to <log>/greenctx-start.log. Returns its exit status, -1 when it did not run. */
static int control(const mps_setup *m, const char *command, char *output, size_t size)
{
    char start_log[PATH_MAX + 64];
    snprintf(start_log, sizeof start_log, "%s/greenctx-start.log", m->log_dir);
    int in[2], out[2];
    if (pipe(in) != 0)
        return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        int log = command ? -1 : open(start_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        dup2(in[0], STDIN_FILENO);
        dup2(command ? out[1] : log, STDOUT_FILENO);
        if (!command)
            dup2(log, STDERR_FILENO);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
        setenv("CUDA_MPS_LOG_DIRECTORY", m->log_dir, 1);
        if (command)
            execl(m->control, m->control, (char *)NULL);
        else
            execl(m->control, m->control, "-d", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (command && child > 0 && write(in[1], command, strlen(command)) < 0)
        command = NULL;
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
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        continue;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void print_quoted_export(const char *name, const char *value)
{
    printf("export %s='", name);
    for (const char *p = value; *p; p++)
        fputs(*p == '\'' ? "'\\''" : (char[2]){*p, 0}, stdout);
    printf("'\n");
}

static void print_env(const mps_setup *m)
{
    print_quoted_export("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir);
    print_quoted_export("CUDA_MPS_LOG_DIRECTORY", m->log_dir);
}

static void print_json(const mps_setup *m, int running, const char *servers)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.mps/1");
    json_bool(&w, "running", running);
    json_string(&w, "pipe_dir", m->pipe_dir);
    json_string(&w, "log_dir", m->log_dir);
    json_string(&w, "control", m->control[0] ? m->control : NULL);
    json_array(&w, "servers");
    char copy[4096], *save = NULL;
    snprintf(copy, sizeof copy, "%s", servers ? servers : "");
    for (char *s = strtok_r(copy, " \t\r\n", &save); s; s = strtok_r(NULL, " \t\r\n", &save))
        json_string(&w, NULL, s);
    json_end(&w);
}

static int start(const greenctx_tool_options *opts, const mps_setup *m, int print_env_only)
{
    if (!m->control[0])
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "no_mps_control",
                                   "MPS can't be started: %s", m->why_no_control);
    if (daemon_answers(m))
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "running",
                                   "an MPS control daemon already answers on %s: nothing was "
                                   "started (greenctx mps status; stop it with greenctx mps "
                                   "stop)",
                                   m->pipe_dir);
    if (make_dir(m->pipe_dir) != 0 || make_dir(m->log_dir) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "runtime_dir",
                                   "%s/mps can't be made as the user's own directory: %s",
                                   m->runtime, strerror(errno));
    int status = control(m, NULL, NULL, 0);
    if (status != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "control_failed",
                                   "%s -d exited with status %d (its output: "
                                   "%s/greenctx-start.log)",
                                   m->control, status, m->log_dir);
    if (wait_for(m, 1) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_answering",
                                   "%s -d started, but no daemon answers on %s after %d s (its "
                                   "log: %s)",
                                   m->control, m->pipe_dir, ANSWER_WAIT_MS / 1000, m->log_dir);
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

static int stop(const greenctx_tool_options *opts, const mps_setup *m)
{
    char output[4096];
    if (!m->control[0])
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "no_mps_control",
                                   "MPS can't be stopped: %s", m->why_no_control);
    if (!daemon_answers(m))
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "not_running",
                                   "no MPS control daemon answers on %s: nothing to stop",
                                   m->pipe_dir);
    int status = control(m, "quit\n", output, sizeof output);
    if (status != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "control_failed",
                                   "`echo quit | %s` exited with status %d%s%s", m->control,
                                   status, output[0] ? ": " : "", output);
    if (wait_for(m, 0) != 0)
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

static int status(const greenctx_tool_options *opts, const mps_setup *m, int print_env_only)
{
    const char *shell_pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char other[PATH_MAX] = "", servers[4096] = "";
    if (shell_pipe && *shell_pipe && strcmp(shell_pipe, m->pipe_dir) != 0)
        snprintf(other, sizeof other, "%s", shell_pipe);
    int running = daemon_answers(m);
    if (running && m->control[0])
        control(m, "get_server_list\n", servers, sizeof servers);
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
        if (other[0])
            printf("  this shell's CUDA_MPS_PIPE_DIRECTORY is %s: its CUDA programs use that "
                   "daemon, not this one\n",
                   other);
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
    const greenctx_option *own = greenctx_mps_options;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    const char *action = NULL;
    int print_env_only = 0;
    for (int id; (id = greenctx_args_next(&args, own)) != GREENCTX_ARG_END;) {
        if (id == GREENCTX_ARG_HELP) {
            usage(stdout);
            return GREENCTX_EXIT_OK;
        }
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
    if (print_env_only && which == 1)
        return greenctx_args_bad(&args, "--print-env goes with start or status");
    mps_setup m;
    memset(&m, 0, sizeof m);
    if (resolve_runtime(&m) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "runtime_dir",
                                   "the runtime directory's path is too long");
    find_control(&m);
    return which == 0 ? start(opts, &m, print_env_only)
           : which == 1 ? stop(opts, &m)
                        : status(opts, &m, print_env_only);
}
