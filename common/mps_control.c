/* An MPS control daemon with its own directories (mps_control.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "greenctx_claims.h"
#include "mps_control.h"

extern char **environ;

static void find_program(mps_control *m)
{
    const char *override = getenv("GREENCTX_MPS_CONTROL");
    m->program[0] = '\0';
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

int mps_control_open(mps_control *m, const char *pipe_dir, const char *log_dir)
{
    memset(m, 0, sizeof *m);
    int a = snprintf(m->pipe_dir, sizeof m->pipe_dir, "%s", pipe_dir);
    int b = snprintf(m->log_dir, sizeof m->log_dir, "%s", log_dir);
    if (a < 0 || b < 0 || (size_t)a >= sizeof m->pipe_dir || (size_t)b >= sizeof m->log_dir)
        return -1;
    snprintf(m->pipe_var, sizeof m->pipe_var, "CUDA_MPS_PIPE_DIRECTORY=%s", pipe_dir);
    snprintf(m->log_var, sizeof m->log_var, "CUDA_MPS_LOG_DIRECTORY=%s", log_dir);
    snprintf(m->start_log, sizeof m->start_log, "%s/greenctx-start.log", log_dir);
    size_t n = 0;
    while (environ[n])
        n++;
    if (!(m->envp = calloc(n + 3, sizeof *m->envp)))
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "CUDA_MPS_PIPE_DIRECTORY=", 24) &&
            strncmp(environ[i], "CUDA_MPS_LOG_DIRECTORY=", 23))
            m->envp[k++] = environ[i];
    m->envp[k++] = m->pipe_var;
    m->envp[k] = m->log_var;
    find_program(m);
    return 0;
}

void mps_control_close(mps_control *m)
{
    free(m->envp);
    m->envp = NULL;
}

int mps_control_run(const mps_control *m, const char *input, char *output, size_t size)
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
        execve(m->program, argv, m->envp);
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

int mps_control_answers(const mps_control *m)
{
    const char *saved = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char *old = saved ? strdup(saved) : NULL;
    if (saved && !old)
        return 0;
    setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
    gctx_mps_info info = GCTX_MPS_INFO_INIT;
    int up = gctx_mps_get_info(&info) == GCTX_SUCCESS && info.daemon_running;
    if (old)
        setenv("CUDA_MPS_PIPE_DIRECTORY", old, 1);
    else
        unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    free(old);
    return up;
}

int mps_control_wait(const mps_control *m, int running, int ms)
{
    for (int waited = 0; waited < ms; waited += 20) {
        if (mps_control_answers(m) == running)
            return 0;
        nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
    }
    return -1;
}

int mps_control_start(const mps_control *m, int ms, char *why, size_t size)
{
    int status = mps_control_run(m, NULL, NULL, 0);
    if (status == 0 && mps_control_wait(m, 1, ms) == 0)
        return 0;
    if (status != 0)
        snprintf(why, size, "`%s -d` (CUDA_MPS_PIPE_DIRECTORY=%s) failed (exit status %d); its "
                 "output: %s", m->program, m->pipe_dir, status, m->start_log);
    else
        snprintf(why, size, "`%s -d` (CUDA_MPS_PIPE_DIRECTORY=%s) started, but no daemon "
                 "answered within %d s; its log: %s", m->program, m->pipe_dir, ms / 1000,
                 m->log_dir);
    return status != 0 ? -1 : -2;
}
