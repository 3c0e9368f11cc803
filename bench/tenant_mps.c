/*
 * The run's directories and its MPS control daemon. When no daemon answers for this
 * process's CUDA_MPS_PIPE_DIRECTORY, the bench starts its own with its own pipe and log
 * directories through common/mps_control.h, as `greenctx mps` does (no change to the GPU's
 * compute mode or any other setting), and always quits it: at the end, on failure, and on
 * SIGINT, SIGTERM, SIGHUP or SIGQUIT, whose handler kills the workers and quits the daemon
 * (mps_control_run is async-signal-safe). Only SIGKILL can leave it.
 */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tenant_proc.h"
#include "greenctx_claims.h"
#include "mps_control.h"

#define MAX_WATCHED 8
#define ANSWER_WAIT_MS 5000

static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NB_HANDLED (sizeof handled / sizeof handled[0])

/* What the signal handler reads: set before the handlers are installed. */
static struct {
    volatile pid_t workers[MAX_WATCHED];
    volatile sig_atomic_t daemon_ours;
    mps_control control;
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

static void quit_daemon(void)
{
    if (mps_state.daemon_ours) {
        mps_control_run(&mps_state.control, "quit\n", NULL, 0);
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
    mps_control *c = &mps_state.control;
    if (mps_control_open(c, paths->mps_pipe, paths->mps_log) != 0) {
        snprintf(mps->why, sizeof mps->why, "out of memory");
        return;
    }
    if (!c->program[0]) {
        snprintf(mps->why, sizeof mps->why, "no MPS daemon answers on %s and %s",
                 info.pipe_dir, c->why_none);
        return;
    }
    mps_state.daemon_ours = 1; /* from here on a signal quits it, whatever -d answers */
    mps->available = mps_control_start(c, ANSWER_WAIT_MS, mps->why, sizeof mps->why) == 0;
    mps->started = 1;
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
    mps_control_close(&mps_state.control);
}
