/* The program as a child of `greenctx run`: the signals the tool forwards are held until it
 * knows the child, and its end is passed on as the tool's own. The child stays in the tool's
 * process group, so the terminal's foreground group is as if the tool had exec'd it. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool.h"

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NB_FORWARDED (sizeof forwarded / sizeof forwarded[0])

static volatile sig_atomic_t child_pid, interrupted;
static struct sigaction saved[NB_FORWARDED];

static void forward(int sig, siginfo_t *info, void *context)
{
    (void)context;
    interrupted = sig;
    /* What the terminal sends (SI_KERNEL) reaches its whole foreground group, the child too. */
    if (info->si_code != SI_KERNEL && child_pid > 0)
        kill((pid_t)child_pid, sig);
}

pid_t run_child_start(char **command, int stdout_to_stderr)
{
    /* An ignored SIGCHLD (a daemon's, a CI runner's) makes the kernel reap the child unseen. */
    signal(SIGCHLD, SIG_DFL);
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < NB_FORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (stdout_to_stderr)
            dup2(STDERR_FILENO, STDOUT_FILENO);
        execvp(command[0], command);
        int err = errno;
        fprintf(stderr, "greenctx run: %s: %s\n", command[0], strerror(err));
        _exit(err == ENOENT ? 127 : 126);
    }
    if (pid < 0) {
        perror("greenctx run: fork");
        sigprocmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    child_pid = pid;
    interrupted = 0;
    struct sigaction sa = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NB_FORWARDED; i++)
        sigaction(forwarded[i], &sa, &saved[i]);
    /* A signal that came meanwhile is delivered now, to the handler: the child gets it. */
    sigprocmask(SIG_SETMASK, &old, NULL);
    return pid;
}

int run_child_wait(pid_t pid, int *status)
{
    pid_t got;
    while ((got = waitpid(pid, status, 0)) < 0 && errno == EINTR)
        continue;
    int err = errno;
    for (size_t i = 0; i < NB_FORWARDED; i++)
        sigaction(forwarded[i], &saved[i], NULL);
    child_pid = 0;
    if (got < 0) {
        fprintf(stderr, "greenctx run: waiting for the program failed: %s\n", strerror(err));
        return -1;
    }
    return 0;
}

/* Once a second each claim's file is checked: once removed (a /tmp cleaner), another tenant
 * may be given its SMs, so the user is told at once. Not without pidfd (Linux < 5.3). */
static int wait_holding(pid_t pid, int *status, const run_session *session)
{
#ifdef SYS_pidfd_open
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    unsigned long long told = 0; /* a bit per claim already reported (RUN_MAX_DEVICES: 64) */
    while (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int ready = poll(&p, 1, 1000);
        if (ready > 0 || (ready < 0 && errno != EINTR))
            break;
        for (unsigned i = 0; i < session->nb_claims; i++) {
            unsigned wanted;
            if (!session->claims[i] || (told & 1ull << i) ||
                gctx_claim_pressure(session->claims[i], &wanted) != GCTX_ERROR_REGISTRY)
                continue;
            told |= 1ull << i;
            fprintf(stderr,
                    "greenctx run: warning: %s. Its SMs are no longer counted as held: another "
                    "tenant may be given them while this program runs (stop it and run it "
                    "again to claim them anew)\n",
                    gctx_last_error());
        }
    }
    if (pidfd >= 0)
        close(pidfd);
#else
    (void)session;
#endif
    return run_child_wait(pid, status);
}

int run_child_program(const run_job *job, run_session *session, pid_t *pid, int *status)
{
    *pid = run_set_environment(job, session) == 0 ? run_child_start(job->options.command, 0) : -1;
    if (*pid < 0 || wait_holding(*pid, status, session) != 0) {
        run_session_release(session);
        return -1;
    }
    return 0;
}

int run_child_interrupted(void) { return interrupted; }

int run_child_raise(int sig)
{
    fflush(NULL);
    /* A core dump was the program's, not the tool's. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}

int run_child_exit(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : run_child_raise(WTERMSIG(status));
}

int run_child_end(run_session *session, int status)
{
    /* A killed program's claims are left stale ("died"): the tool dies of the same signal. */
    if (WIFEXITED(status))
        run_session_release(session);
    return run_child_exit(status);
}
