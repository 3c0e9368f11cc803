/*
 * The run's directories and its MPS control daemon. When no daemon answers for this
 * process's CUDA_MPS_PIPE_DIRECTORY, the bench starts its own with its own pipe and log
 * directories (`nvidia-cuda-mps-control -d`: no change to the GPU's compute mode or any other
 * setting) and always quits it (`echo quit | nvidia-cuda-mps-control`, the same environment):
 * at the end, on failure, and on SIGINT, SIGTERM, SIGHUP or SIGQUIT, whose handler kills the
 * workers and quits the daemon with async-signal-safe calls only (fork, execve, write,
 * waitpid), from an argv and environment prepared beforehand. Only SIGKILL can leave it.
 */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_tenants.h"

#define MAX_WATCHED 8
#define ANSWER_WAIT_MS 5000

static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NB_HANDLED (sizeof handled / sizeof handled[0])

/* What the signal handler reads: set before the handlers are installed. */
static struct {
    volatile pid_t workers[MAX_WATCHED];
    volatile sig_atomic_t daemon_ours;
    char control[512]; /* nvidia-cuda-mps-control, found on PATH */
    char pipe_var[600], log_var[600];
    char **envp;
    struct sigaction previous[NB_HANDLED], previous_pipe;
    int installed;
} mps_state;

int tenant_paths_make(tenant_paths *paths)
{
    memset(paths, 0, sizeof *paths);
    snprintf(paths->root, sizeof paths->root, "/tmp/greenctx-bench-XXXXXX");
    if (!mkdtemp(paths->root)) {
        fprintf(stderr, "greenctx bench: mkdtemp in /tmp: %s\n", strerror(errno));
        return -1;
    }
    snprintf(paths->registry, sizeof paths->registry, "%s/registry", paths->root);
    snprintf(paths->no_mps, sizeof paths->no_mps, "%s/no-mps", paths->root);
    snprintf(paths->mps_pipe, sizeof paths->mps_pipe, "%s/mps-pipe", paths->root);
    snprintf(paths->mps_log, sizeof paths->mps_log, "%s/mps-log", paths->root);
    const char *dirs[] = {paths->registry, paths->no_mps, paths->mps_pipe, paths->mps_log};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (mkdir(dirs[i], 0700) != 0) {
            fprintf(stderr, "greenctx bench: mkdir %s: %s\n", dirs[i], strerror(errno));
            tenant_paths_remove(paths);
            return -1;
        }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

void tenant_paths_remove(const tenant_paths *paths)
{
    if (paths->root[0] && nftw(paths->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "greenctx bench: could not remove %s: %s\n", paths->root,
                strerror(errno));
}

/* The control program on PATH; 0 when found. */
static int find_control(void)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path && *path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(mps_state.control, sizeof mps_state.control, "%s/nvidia-cuda-mps-control", d);
        if (access(mps_state.control, X_OK) == 0)
            return 0;
    }
    mps_state.control[0] = '\0';
    return -1;
}

/* This environment with our pipe and log directories: the daemon's and its quit's. */
static char **daemon_environment(const tenant_paths *paths)
{
    static const char *const ours[] = {"CUDA_MPS_PIPE_DIRECTORY=", "CUDA_MPS_LOG_DIRECTORY="};
    snprintf(mps_state.pipe_var, sizeof mps_state.pipe_var, "%s%s", ours[0], paths->mps_pipe);
    snprintf(mps_state.log_var, sizeof mps_state.log_var, "%s%s", ours[1], paths->mps_log);
    char *add[] = {mps_state.pipe_var, mps_state.log_var};
    return tenant_environment(ours, 2, add, 2);
}

/* Runs the control program with argument arg (NULL: none) and input (NULL: none); its exit
 * status, or -1. Async-signal-safe. */
static int control(const char *arg, const char *input)
{
    int p[2] = {-1, -1};
    if (input && pipe(p) != 0)
        return -1;
    char *argv[] = {mps_state.control, (char *)arg, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        if (input && dup2(p[0], 0) < 0)
            _exit(127);
        if (input)
            close(p[1]);
        execve(mps_state.control, argv, mps_state.envp);
        _exit(127);
    }
    if (input) {
        close(p[0]);
        if (pid > 0) {
            size_t len = 0;
            while (input[len])
                len++;
            ssize_t w = write(p[1], input, len);
            (void)w;
        }
        close(p[1]);
    }
    if (pid < 0)
        return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void quit_daemon(void)
{
    if (mps_state.daemon_ours) {
        control(NULL, "quit\n");
        mps_state.daemon_ours = 0;
    }
}

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_WATCHED; i++)
        if (mps_state.workers[i] > 0)
            kill(mps_state.workers[i], SIGKILL);
    quit_daemon();
    signal(sig, SIG_DFL);
    raise(sig);
}

void tenant_mps_watch(pid_t pid)
{
    for (int i = 0; i < MAX_WATCHED; i++)
        if (mps_state.workers[i] == 0) {
            mps_state.workers[i] = pid;
            return;
        }
}

void tenant_mps_unwatch(pid_t pid)
{
    for (int i = 0; i < MAX_WATCHED; i++)
        if (mps_state.workers[i] == pid)
            mps_state.workers[i] = 0;
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NB_HANDLED; i++)
        sigaction(handled[i], &sa, &mps_state.previous[i]);
    /* A worker that died must not take the bench (and our daemon's quit) with it. */
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &mps_state.previous_pipe);
    mps_state.installed = 1;
}

/* Whether a daemon answers on pipe_dir, as the library sees it for a client there. */
static int answers(const char *pipe_dir)
{
    const char *saved = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char old[512];
    snprintf(old, sizeof old, "%s", saved ? saved : "");
    setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
    gctx_mps_info info = GCTX_MPS_INFO_INIT;
    int up = gctx_mps_get_info(&info) == GCTX_SUCCESS && info.daemon_running;
    if (saved)
        setenv("CUDA_MPS_PIPE_DIRECTORY", old, 1);
    else
        unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    return up;
}

void tenant_mps_start(tenant_paths *paths, tenant_mps *mps)
{
    memset(mps, 0, sizeof *mps);
    install_handlers();
    gctx_mps_info info = GCTX_MPS_INFO_INIT;
    if (gctx_mps_get_info(&info) == GCTX_SUCCESS && info.daemon_running) {
        snprintf(paths->mps_pipe, sizeof paths->mps_pipe, "%s", info.pipe_dir);
        mps->available = 1;
        return;
    }
    if (find_control() != 0) {
        snprintf(mps->why, sizeof mps->why, "no MPS daemon answers on %s and "
                 "nvidia-cuda-mps-control is not on PATH to start one", info.pipe_dir);
        return;
    }
    if (!(mps_state.envp = daemon_environment(paths))) {
        snprintf(mps->why, sizeof mps->why, "out of memory");
        return;
    }
    mps_state.daemon_ours = 1; /* from here on a signal quits it, whatever -d answers */
    int status = control("-d", NULL);
    for (int waited = 0; status == 0 && waited < ANSWER_WAIT_MS && !mps->available;
         waited += 20) {
        mps->available = answers(paths->mps_pipe);
        if (!mps->available)
            usleep(20000);
    }
    mps->started = 1;
    if (!mps->available)
        snprintf(mps->why, sizeof mps->why,
                 "`%s -d` (CUDA_MPS_PIPE_DIRECTORY=%s) %s; its log: %s/control.log",
                 mps_state.control, paths->mps_pipe,
                 status ? "failed" : "started, but no daemon answered within 5 s",
                 paths->mps_log);
}

void tenant_mps_stop(tenant_mps *mps)
{
    if (mps->started)
        quit_daemon();
    mps->started = 0;
    if (mps_state.installed) {
        for (size_t i = 0; i < NB_HANDLED; i++)
            sigaction(handled[i], &mps_state.previous[i], NULL);
        sigaction(SIGPIPE, &mps_state.previous_pipe, NULL);
        mps_state.installed = 0;
    }
    free(mps_state.envp);
    mps_state.envp = NULL;
}
