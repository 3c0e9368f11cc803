/*
 * The tenants' processes: each is this executable again (/proc/self/exe: the same
 * greenctx-bench, library and driver, nothing to look for), run as a worker command, with its
 * stdin and stdout on pipes to the bench (the protocol: tenant_proc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tenant_proc.h"

#define EXIT_WAIT_MS 20000

extern char **environ;

void tenant_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

void tenant_say_summary(const char *name, const bench_summary *s)
{
    tenant_say("%s %zu %.5f %.5f %.5f %.5f %.5f %.5f", name, s->n, s->min, s->p50, s->p99,
               s->p999, s->max, s->mean);
}

int tenant_summary_line(const char *line, const char *name, bench_summary *s)
{
    size_t len = strlen(name);
    return !strncmp(line, name, len) && line[len] == ' ' &&
           sscanf(line + len, "%zu %lf %lf %lf %lf %lf %lf", &s->n, &s->min, &s->p50, &s->p99,
                  &s->p999, &s->max, &s->mean) == 7;
}

/* One line into proc: 1 for "done", 0 for another line, -1 (with a message) for a line the
 * bench does not know. */
static int tenant_parse_line(const char *line, tenant_proc *proc)
{
    if (!strcmp(line, "done"))
        return 1;
    int ok = sscanf(line, "ready %u", &proc->sms) == 1;
    if (!ok)
        fprintf(stderr, "greenctx bench: a tenant said '%s', which the bench does not know\n",
                line);
    return ok ? 0 : -1;
}

/* This process's environment without the variables named by drop ("NAME=" prefixes) and
 * with add: a NULL-terminated array to free (the strings stay the caller's or environ's). */
static char **environment(const char *const drop[], size_t nb_drop, char *const add[],
                          size_t nb_add)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + nb_add + 1, sizeof *envp);
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int dropped = 0;
        for (size_t j = 0; j < nb_drop; j++)
            dropped |= !strncmp(environ[i], drop[j], strlen(drop[j]));
        if (!dropped)
            envp[k++] = environ[i];
    }
    for (size_t j = 0; j < nb_add; j++)
        envp[k++] = add[j];
    return envp;
}

/* The worker's environment: the MPS variables of spec instead of the user's. */
static char **worker_environment(const tenant_run *run, const tenant_spec *spec,
                                 char vars[3][600])
{
    static const char *const ours[] = {"CUDA_MPS_PIPE_DIRECTORY=", "CUDA_MPS_LOG_DIRECTORY=",
                                       "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="};
    snprintf(vars[0], sizeof vars[0], "%s%s", ours[0],
             spec->mps ? run->paths->mps_pipe : run->paths->no_mps);
    snprintf(vars[1], sizeof vars[1], "%s%s", ours[1], run->paths->mps_log);
    snprintf(vars[2], sizeof vars[2], "%s%d", ours[2], spec->thread_percentage);
    char *add[] = {vars[0], vars[1], vars[2]};
    return environment(ours, 3, add, spec->thread_percentage > 0 ? 3 : 2);
}

/* One line from the worker into line (without the newline): 1, 0 at the end of its output,
 * -1 after timeout_ms. */
static int read_line(tenant_proc *proc, char *line, size_t size, int timeout_ms)
{
    long long deadline = bench_wall_ns() + timeout_ms * 1000000LL;
    for (;;) {
        char *nl = memchr(proc->buf, '\n', proc->len);
        if (nl) {
            size_t n = (size_t)(nl - proc->buf);
            snprintf(line, size, "%.*s", (int)n, proc->buf);
            memmove(proc->buf, nl + 1, proc->len - n - 1);
            proc->len -= n + 1;
            return 1;
        }
        if (proc->len == sizeof proc->buf) /* a line longer than the buffer: cut it */
            proc->len = 0;
        long long left_ms = (deadline - bench_wall_ns()) / 1000000LL;
        if (left_ms <= 0)
            return -1;
        struct pollfd pfd = {proc->from_child, POLLIN, 0};
        int p = poll(&pfd, 1, (int)left_ms);
        if (p < 0 && errno == EINTR)
            continue;
        if (p <= 0)
            return -1;
        ssize_t got = read(proc->from_child, proc->buf + proc->len, sizeof proc->buf - proc->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        proc->len += (size_t)got;
    }
}

static void close_pipes(tenant_proc *proc)
{
    if (proc->to_child >= 0)
        close(proc->to_child);
    if (proc->from_child >= 0)
        close(proc->from_child);
    proc->to_child = proc->from_child = -1;
}

/* Reaps the worker, killing it when it has not exited within EXIT_WAIT_MS (a context torn
 * down after a fault must not hang the bench); 0 when it exited with status 0. */
static int reap(tenant_proc *proc)
{
    int status = 0;
    pid_t pid = proc->pid, got = 0;
    for (int waited = 0; got == 0 && waited < EXIT_WAIT_MS; waited += 10) {
        got = waitpid(pid, &status, WNOHANG);
        if (got < 0 && errno == EINTR)
            got = 0;
        if (got == 0)
            usleep(10000);
    }
    if (got == 0) {
        fprintf(stderr, "greenctx bench: the %s (pid %d) had not exited %d s after its "
                        "results: killed\n", proc->name, (int)pid, EXIT_WAIT_MS / 1000);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    tenant_mps_unwatch(pid);
    proc->pid = 0;
    close_pipes(proc);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        fprintf(stderr, "greenctx bench: the %s (pid %d) exited with status %d\n", proc->name,
                (int)pid, WEXITSTATUS(status));
    else
        fprintf(stderr, "greenctx bench: the %s (pid %d) died of signal %d\n", proc->name,
                (int)pid, WTERMSIG(status));
    return -1;
}

void tenant_kill(tenant_proc *proc)
{
    if (proc->pid <= 0)
        return;
    kill(proc->pid, SIGKILL);
    int status;
    while (waitpid(proc->pid, &status, 0) < 0 && errno == EINTR) {
    }
    tenant_mps_unwatch(proc->pid);
    proc->pid = 0;
    close_pipes(proc);
}

static pid_t spawn(const char *exe, char **argv, char **envp, int in[2], int out[2])
{
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
            _exit(127);
        execve(exe, argv, envp);
        _exit(127);
    }
    return pid;
}

int tenant_launch(const tenant_run *run, const tenant_spec *spec, const char *name, char **argv,
                  tenant_proc *proc, int timeout_ms)
{
    memset(proc, 0, sizeof *proc);
    proc->to_child = proc->from_child = -1;
    proc->name = name;
    char vars[3][600];
    char **envp = worker_environment(run, spec, vars);
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if (!envp || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
        fprintf(stderr, "greenctx bench: starting the %s: %s\n", proc->name, strerror(errno));
        free(envp);
        for (int i = 0; i < 2; i++) {
            if (in[i] >= 0)
                close(in[i]);
            if (out[i] >= 0)
                close(out[i]);
        }
        return -1;
    }
    fflush(NULL); /* nothing buffered is written twice */
    proc->pid = spawn(run->worker, argv, envp, in, out);
    int saved = errno;
    free(envp);
    close(in[0]);
    close(out[1]);
    proc->to_child = in[1];
    proc->from_child = out[0];
    if (proc->pid < 0) {
        fprintf(stderr, "greenctx bench: fork for the %s: %s\n", proc->name, strerror(saved));
        proc->pid = 0;
        close_pipes(proc);
        return -1;
    }
    tenant_mps_watch(proc->pid);
    char line[600];
    int got = read_line(proc, line, sizeof line, timeout_ms);
    if (got == 1 && tenant_parse_line(line, proc) == 0 && proc->sms)
        return 0;
    if (got == 0) { /* it ended before it was ready: its messages are above */
        reap(proc);
        return -1;
    }
    if (got < 0)
        fprintf(stderr, "greenctx bench: the %s was not ready after %d ms\n", proc->name,
                timeout_ms);
    tenant_kill(proc);
    return -1;
}

int tenant_ready(unsigned sms, long long *start_ns)
{
    char line[128];
    tenant_say("ready %u", sms);
    if (!fgets(line, sizeof line, stdin) || sscanf(line, "go %lld", start_ns) != 1) {
        fprintf(stderr, "greenctx bench: a tenant: no start from the bench\n");
        return -1;
    }
    while (bench_wall_ns() < *start_ns) {
    }
    return 0;
}

int tenant_go(tenant_proc *proc, long long start_ns)
{
    char line[64];
    int n = snprintf(line, sizeof line, "go %lld\n", start_ns);
    if (write(proc->to_child, line, (size_t)n) != n) {
        fprintf(stderr, "greenctx bench: starting the %s: %s\n", proc->name, strerror(errno));
        return -1;
    }
    return 0;
}

int tenant_finish(tenant_proc *proc, int timeout_ms)
{
    char line[600];
    int got = 0, done = 0;
    while (!done && (got = read_line(proc, line, sizeof line, timeout_ms)) == 1) {
        if (proc->own_line && proc->own_line(proc->own_ctx, line))
            continue;
        int r = tenant_parse_line(line, proc);
        if (r < 0)
            break;
        done = r == 1;
    }
    if (!done) {
        if (got < 0)
            fprintf(stderr, "greenctx bench: the %s did not finish within %d ms\n", proc->name,
                    timeout_ms);
        tenant_kill(proc);
        return -1;
    }
    return reap(proc);
}
