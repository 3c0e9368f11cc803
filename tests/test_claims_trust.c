/* Claims whatever else is in the registry (issue 28): links, FIFOs and directories planted
 * under a registry's names, scan errors, a registry lock held for good, a clock stepped back,
 * shared directories not set up as the docs say, and bad join tokens. Holders are forked
 * children (the simulator lets them use their parent's driver). Tests that need another user
 * are in tests/shared_registry_test.sh. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "claims_common.h"
#include "sm_ids.h"

/* ---- a clock that steps back (the M3 test), else the real one ---- */

static volatile int realtime_runs_backwards;

/* The library's calls resolve to this one in the test binary. CLOCK_REALTIME goes back an
 * hour at every read while realtime_runs_backwards is set. */
int clock_gettime(clockid_t id, struct timespec *t)
{
    static long long back_s;
    int rc = (int)syscall(SYS_clock_gettime, id, t);
    if (rc == 0 && id == CLOCK_REALTIME && realtime_runs_backwards)
        t->tv_sec -= (back_s += 3600);
    return rc;
}

/* flock as the kernel's, but ENOLCK (NFS without lockd) for a test of a claim file's lock
 * while flock_fails is set. */
static volatile int flock_fails;

int flock(int fd, int operation)
{
    char link[64], path[600] = "";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    if (flock_fails && operation == (LOCK_EX | LOCK_NB) &&
        readlink(link, path, sizeof path - 1) > 0 && strstr(path, "/claim-")) {
        errno = ENOLCK;
        return -1;
    }
    return (int)syscall(SYS_flock, fd, operation);
}

/* ---- helpers ---- */

/* A forked child holding `request` in dir until killed: its pid, or -1. */
static pid_t holder(const char *dir, const char *request)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        gctx_claim_options o = options_in(dir);
        gctx_claim *c;
        char ok = gctx_claim_acquire(0, request, &o, &c) == GCTX_SUCCESS ? 'y' : 'n';
        if (write(p[1], &ok, 1) == 1 && ok == 'y')
            pause();
        _exit(0);
    }
    close(p[1]);
    char ok = 'n';
    if (pid > 0 && read(p[0], &ok, 1) != 1)
        ok = 'n';
    close(p[0]);
    if (pid > 0 && ok != 'y') {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static void end(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

/* The registry directory of device 0 under dir (made by a first listing). */
static int registry_of(const char *dir, char *out, size_t size)
{
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    unsigned n;
    if (gctx_claim_list(0, dir, NULL, 0, &n, &usage) != GCTX_SUCCESS)
        return -1;
    snprintf(out, size, "%s", usage.path);
    return 0;
}

/* What a listing says, in a forked child killed after 10 s (a hang): the status, or -1. */
static int list_in_child(const char *dir, unsigned *free_sms)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
        unsigned n;
        int out[2] = {(int)gctx_claim_list(0, dir, NULL, 0, &n, &usage), (int)usage.free_sms};
        _exit(write(p[1], out, sizeof out) == sizeof out ? 0 : 1);
    }
    close(p[1]);
    int out[2] = {-1, 0}, status = 0;
    if (read(p[0], out, sizeof out) != sizeof out)
        out[0] = -1;
    close(p[0]);
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        fprintf(stderr, "# the listing child ended by signal %d (SIGALRM: it hung)\n",
                WTERMSIG(status));
    *free_sms = (unsigned)out[1];
    return out[0];
}

static long long ms_since(long long start_ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000ll + t.tv_nsec / 1000000 - start_ms;
}

/* ---- C2, M1: names planted in the registry ---- */

/* Links where events, claims and temporary files go, FIFOs, a directory and a device named
 * like claims and wants, and a stale claim whose event would be written: nothing blocks,
 * nothing is written through a link, the SMs stay counted right. */
GT_TEST(registry_files_are_never_followed_or_blocked_on)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("planted");
    GT_CHECK();
    char reg[600], path[700], target[700];
    GT_ASSERT_EQ_INT(registry_of(dir, reg, sizeof reg), 0);
    snprintf(target, sizeof target, "%s/victim", dir);
    GT_ASSERT_EQ_INT(write_text(target, "precious\n"), 0);
    const char *links[] = {"events", "claim-1-1", "identity.tmp.1", NULL};
    for (int i = 0; links[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", reg, links[i]);
        GT_ASSERT_EQ_INT(symlink(target, path), 0);
    }
    snprintf(path, sizeof path, "%s/events-%u", reg, (unsigned)geteuid());
    GT_ASSERT_EQ_INT(symlink(target, path), 0);
    const char *fifos[] = {"claim-2-2", "want-3-3-p0-s8", NULL};
    for (int i = 0; fifos[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", reg, fifos[i]);
        GT_ASSERT_EQ_INT(mkfifo(path, 0600), 0);
    }
    snprintf(path, sizeof path, "%s/claim-4-4", reg);
    GT_ASSERT_EQ_INT(mkdir(path, 0700), 0);
    /* A stale claim (nobody holds it): its removal logs a died event. */
    snprintf(path, sizeof path, "%s/claim-4242-0", reg);
    GT_ASSERT_EQ_INT(write_text(path, "greenctx-claim 1\npid 4242\nuid 0\nuser x\ncommand x; id "
                                      "> /tmp/pwned\nlabel \nsince_ns 1\nmps 0\ngranules 0\n"),
                     0);
    pid_t pid = holder(dir, "64");
    GT_ASSERT(pid > 0);
    unsigned free_sms = 0;
    GT_ASSERT_STATUS(list_in_child(dir, &free_sms), GCTX_SUCCESS);
    end(pid);
    GT_ASSERT_EQ_INT(free_sms, 132 - 64);
    char text[64] = {0};
    FILE *f = fopen(target, "r");
    GT_ASSERT(f != NULL);
    GT_ASSERT(fgets(text, sizeof text, f) != NULL);
    fclose(f);
    GT_ASSERT_STR_EQ(text, "precious\n");
    struct stat st;
    snprintf(path, sizeof path, "%s/events-%u", reg, (unsigned)geteuid());
    GT_ASSERT_EQ_INT(lstat(path, &st), 0);
    GT_ASSERT(S_ISREG(st.st_mode)); /* the link replaced, not followed */
    gctx_claim_event events[4];
    events[0].size = sizeof events[0];
    unsigned n = 0;
    GT_ASSERT_STATUS(gctx_claim_events(0, dir, events, 4, &n), GCTX_SUCCESS);
    GT_ASSERT(n >= 1);
    GT_ASSERT_EQ_INT(events[0].pid, 4242);
}

/* ---- C5: a scan that can't look is no scan ---- */

/* At the descriptor limit the claim files can't be opened: the listing and an acquire fail
 * with GCTX_ERROR_REGISTRY, never "0 claims, 132 free". */
GT_TEST(scan_errors_fail_and_never_count_as_free)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("emfile");
    GT_CHECK();
    char reg[600];
    GT_ASSERT_EQ_INT(registry_of(dir, reg, sizeof reg), 0);
    pid_t pid = holder(dir, "64");
    GT_ASSERT(pid > 0);
    struct rlimit old;
    GT_ASSERT_EQ_INT(getrlimit(RLIMIT_NOFILE, &old), 0);
    int fds[64], nb = 0;
    /* Every descriptor below a limit of 64 taken, then the limit lowered to it. */
    for (int fd; nb < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) {
        if (fd >= 64) {
            close(fd);
            break;
        }
        fds[nb++] = fd;
    }
    struct rlimit low = {64, old.rlim_max};
    GT_ASSERT_EQ_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    unsigned n = 99;
    gctx_status listed = gctx_claim_list(0, dir, NULL, 0, &n, &usage);
    char message[1024];
    snprintf(message, sizeof message, "%s", gctx_last_error());
    gctx_claim_options o = options_in(dir);
    gctx_claim *c = NULL;
    gctx_status acquired = gctx_claim_acquire(0, "rest", &o, &c);
    setrlimit(RLIMIT_NOFILE, &old);
    while (nb)
        close(fds[--nb]);
    end(pid);
    if (acquired == GCTX_SUCCESS)
        gctx_claim_release(c);
    GT_ASSERT_EQ_INT(listed, GCTX_ERROR_REGISTRY);
    GT_ASSERT(strstr(message, "claim-") != NULL);
    GT_ASSERT(strstr(message, "Too many open files") != NULL);
    GT_ASSERT_EQ_INT(acquired, GCTX_ERROR_REGISTRY);
}

/* A claim whose lock can't be tested (ENOLCK) is no free claim: the listing fails. */
GT_TEST(a_lock_test_that_fails_is_no_free_claim)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("enolck");
    GT_CHECK();
    pid_t pid = holder(dir, "64");
    GT_ASSERT(pid > 0);
    flock_fails = 1;
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    unsigned n = 99;
    gctx_status s = gctx_claim_list(0, dir, NULL, 0, &n, &usage);
    flock_fails = 0;
    end(pid);
    GT_ASSERT_STATUS(s, GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "can't test the lock of");
    GT_ASSERT_CONTAINS(gctx_last_error(), "No locks available");
}

/* ---- M2, M3: bounded waits ---- */

/* Another process holds the registry's lock for good (stopped, or on purpose): a listing
 * gives up at GREENCTX_REGISTRY_LOCK_TIMEOUT_MS, naming it. */
GT_TEST(a_held_registry_lock_times_out_naming_its_holder)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("lock_held");
    GT_CHECK();
    char reg[600], lock[700];
    GT_ASSERT_EQ_INT(registry_of(dir, reg, sizeof reg), 0);
    snprintf(lock, sizeof lock, "%s/lock", reg);
    int p[2];
    GT_ASSERT_EQ_INT(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(lock, O_RDWR);
        char ok = fd >= 0 && flock(fd, LOCK_EX) == 0 ? 'y' : 'n';
        if (write(p[1], &ok, 1) == 1)
            sleep(30);
        _exit(0);
    }
    close(p[1]);
    char ok = 'n';
    GT_ASSERT_EQ_INT(read(p[0], &ok, 1), 1);
    close(p[0]);
    setenv("GREENCTX_REGISTRY_LOCK_TIMEOUT_MS", "300", 1);
    long long start = ms_since(0);
    unsigned free_sms;
    int s = list_in_child(dir, &free_sms);
    long long took = ms_since(start);
    char message[1024];
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    unsigned n;
    gctx_claim_list(0, dir, NULL, 0, &n, &usage);
    snprintf(message, sizeof message, "%s", gctx_last_error());
    unsetenv("GREENCTX_REGISTRY_LOCK_TIMEOUT_MS");
    end(pid);
    GT_ASSERT_EQ_INT(ok, 'y');
    GT_ASSERT_STATUS(s, GCTX_ERROR_REGISTRY);
    GT_ASSERT(took < 3000);
    char named[64];
    snprintf(named, sizeof named, "stayed locked by pid %d for 300 ms", (int)pid);
    GT_ASSERT_CONTAINS(message, named);
}

/* The wall clock stepping back (an hour at every read) doesn't stretch a 200 ms wait. */
GT_TEST(waits_are_timed_on_the_monotonic_clock)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("clock");
    GT_CHECK();
    pid_t pid = holder(dir, "rest");
    GT_ASSERT(pid > 0);
    pid_t waiter = fork();
    if (waiter == 0) {
        alarm(10);
        realtime_runs_backwards = 1;
        gctx_claim_options o = options_in(dir);
        o.flags = GCTX_CLAIM_WAIT;
        o.timeout_ms = 200;
        gctx_claim *c;
        _exit(gctx_claim_acquire(0, "8", &o, &c) == GCTX_ERROR_BUSY ? 0 : 1);
    }
    long long start = ms_since(0);
    int status = 0;
    waitpid(waiter, &status, 0);
    long long took = ms_since(start);
    end(pid);
    GT_ASSERT(WIFEXITED(status));
    GT_ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    GT_ASSERT(took < 3000);
}

/* ---- C1: shared directories ---- */

/* A shared directory: sticky or refused; its GPU registry made sticky (never 0777), claims
 * private (no other user can open one to hold its lock), their info readable. As root, a
 * shared directory or registry owned by another user is refused. */
GT_TEST(shared_directories_must_be_sticky_and_trusted)
{
    if (gt_require_green_contexts())
        return;
    const char *base = fresh_dir("shared");
    GT_CHECK();
    char root[600], reg[700], path[1100];
    snprintf(root, sizeof root, "%s/root", base);
    GT_ASSERT_EQ_INT(mkdir(base, 0700), 0);
    GT_ASSERT_EQ_INT(mkdir(root, 0700), 0);
    GT_ASSERT_EQ_INT(chmod(root, 0777), 0);
    gctx_claim_options o = options_in(root);
    o.flags = GCTX_CLAIM_SHARED_DIR;
    gctx_claim *c = NULL;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, &c), GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "is not sticky");
    GT_ASSERT_CONTAINS(gctx_last_error(), "install -d -m 1777 -o root");
    GT_ASSERT_EQ_INT(chmod(root, 01777), 0);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, &c), GCTX_SUCCESS);
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    GT_ASSERT_STATUS(gctx_claim_get_info(c, &info), GCTX_SUCCESS);
    snprintf(reg, sizeof reg, "%s/gpu-%s", root, info.device_uuid);
    struct stat st;
    GT_ASSERT_EQ_INT(lstat(reg, &st), 0);
    GT_ASSERT_EQ_INT(st.st_mode & 07777, 01777);
    DIR *d = opendir(reg);
    GT_ASSERT(d != NULL);
    unsigned claims = 0, infos = 0;
    for (struct dirent *e; (e = readdir(d));) {
        snprintf(path, sizeof path, "%s/%s", reg, e->d_name);
        GT_ASSERT_EQ_INT(lstat(path, &st), 0);
        if (strncmp(e->d_name, "claim-", 6) == 0 && ++claims)
            GT_ASSERT_EQ_INT(st.st_mode & 07777, 0600);
        if (strncmp(e->d_name, "info-", 5) == 0 && ++infos)
            GT_ASSERT_EQ_INT(st.st_mode & 07777, 0644);
        if (strcmp(e->d_name, "lock") == 0)
            GT_ASSERT_EQ_INT(st.st_mode & 07777, 0666);
    }
    closedir(d);
    GT_ASSERT_EQ_INT(claims, 1);
    GT_ASSERT_EQ_INT(infos, 1);
    gctx_claim_release(c);
    if (geteuid() != 0)
        GT_SKIP("the checks of directories owned by another user need root (chown)");
    /* Owned by another user: its owner could remove anyone's claims. */
    GT_ASSERT_EQ_INT(chown(reg, 65534, 65534), 0);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, &c), GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "is owned by uid 65534");
    GT_ASSERT_EQ_INT(chown(reg, 0, 0), 0);
    GT_ASSERT_EQ_INT(chown(root, 65534, 65534), 0);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, &c), GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "is owned by uid 65534");
    GT_ASSERT_EQ_INT(chown(root, 0, 0), 0);
}

/* ---- m4: a join checks its token before it touches a file ---- */

GT_TEST(a_bad_join_token_creates_nothing)
{
    if (gt_require_green_contexts())
        return;
    const char *base = fresh_dir("join_token");
    GT_CHECK();
    char cwd[600], token[900], made[700], reg[600];
    GT_ASSERT_EQ_INT(registry_of(base, reg, sizeof reg), 0);
    const char *gpu = strrchr(reg, '/') + 1; /* gpu-<uuid> */
    GT_ASSERT(getcwd(cwd, sizeof cwd) != NULL);
    GT_ASSERT_EQ_INT(chdir(base), 0);
    gctx_claim *c = NULL;
    snprintf(token, sizeof token, "v1:relative/%s:claim-1-0:-1", gpu);
    gctx_status relative = gctx_claim_join(0, token, &c);
    snprintf(token, sizeof token, "v1:%s/absent/%s:claim-1-0:-1", base, gpu);
    gctx_status absent = gctx_claim_join(0, token, &c);
    GT_ASSERT_EQ_INT(chdir(cwd), 0);
    GT_ASSERT_STATUS(relative, GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(absent, GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "absent");
    struct stat st;
    snprintf(made, sizeof made, "%s/relative", base);
    GT_ASSERT_NE_INT(lstat(made, &st), 0);
    snprintf(made, sizeof made, "%s/absent", base);
    GT_ASSERT_NE_INT(lstat(made, &st), 0);
}

/* ---- C6: a default registry that outlives the login session ---- */

GT_TEST(the_default_registry_outlives_the_login_session)
{
    if (gt_require_green_contexts())
        return;
    const char *base = fresh_dir("xdg");
    GT_CHECK();
    char keep[600], expected[64];
    snprintf(keep, sizeof keep, "%s", getenv("GREENCTX_RUNTIME_DIR"));
    setenv("XDG_RUNTIME_DIR", base, 1);
    unsetenv("GREENCTX_RUNTIME_DIR");
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    unsigned n;
    gctx_status s = gctx_claim_list(0, NULL, NULL, 0, &n, &usage);
    setenv("GREENCTX_RUNTIME_DIR", keep, 1);
    unsetenv("XDG_RUNTIME_DIR");
    GT_ASSERT_STATUS(s, GCTX_SUCCESS);
    snprintf(expected, sizeof expected, "/var/tmp/greenctx-%u/gpu-", (unsigned)geteuid());
    GT_ASSERT_CONTAINS(usage.path, expected);
}

/* ---- m1: the live holder, not a dead pid ---- */

/* The program ended, its child that inherited the claim lives on: the listing names the
 * child, who holds the SMs. */
GT_TEST(a_listing_names_the_live_holder_when_the_program_ended)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("live_holder");
    GT_CHECK();
    int p[2];
    GT_ASSERT_EQ_INT(pipe(p), 0);
    pid_t program = fork();
    if (program == 0) {
        close(p[0]);
        gctx_claim_options o = options_in(dir);
        o.flags = GCTX_CLAIM_INHERIT;
        gctx_claim *c;
        int child = -1;
        if (gctx_claim_acquire(0, "16", &o, &c) == GCTX_SUCCESS && (child = fork()) == 0) {
            close(p[1]);
            sleep(30);
            _exit(0);
        }
        _exit(write(p[1], &child, sizeof child) == sizeof child ? 0 : 1);
    }
    close(p[1]);
    int child = -1;
    GT_ASSERT_EQ_INT(read(p[0], &child, sizeof child), sizeof child);
    close(p[0]);
    waitpid(program, NULL, 0); /* the program's pid is dead; its child holds the claim */
    gctx_claim_info claims[2];
    claims[0].size = sizeof claims[0];
    unsigned n = 0;
    gctx_status s = gctx_claim_list(0, dir, claims, 2, &n, NULL);
    end(child);
    GT_ASSERT_STATUS(s, GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, 1);
    GT_ASSERT_EQ_INT(claims[0].pid, child);
    GT_ASSERT_EQ_INT(claims[0].sm_count, 16);
}

/* ---- m8: a link where a GPU's registry should be ---- */

GT_TEST(a_link_for_a_gpu_registry_is_named_as_such)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("gpu_link");
    GT_CHECK();
    char reg[600], elsewhere[700];
    GT_ASSERT_EQ_INT(registry_of(dir, reg, sizeof reg), 0);
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
    GT_ASSERT_EQ_INT(rename(reg, elsewhere), 0);
    GT_ASSERT_EQ_INT(symlink(elsewhere, reg), 0);
    /* Shared, where a user could plant it before the registry was made. */
    GT_ASSERT_EQ_INT(chmod(dir, 01777), 0);
    gctx_claim_options o = options_in(dir);
    o.flags = GCTX_CLAIM_SHARED_DIR;
    gctx_claim *c = NULL;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "8", &o, &c), GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), reg);
    GT_ASSERT_CONTAINS(gctx_last_error(), "is not a directory (a symbolic link or a file)");
}

/* ---- C6: a holder learns that its file was removed ---- */

GT_TEST(a_holder_learns_that_its_claim_file_was_removed)
{
    if (gt_require_green_contexts())
        return;
    const char *dir = fresh_dir("removed");
    GT_CHECK();
    gctx_claim_options o = options_in(dir);
    gctx_claim *c = NULL;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &o, &c), GCTX_SUCCESS);
    unsigned wanted = 99;
    GT_ASSERT_STATUS(gctx_claim_pressure(c, &wanted), GCTX_SUCCESS);
    char reg[600], path[900];
    GT_ASSERT_EQ_INT(registry_of(dir, reg, sizeof reg), 0);
    DIR *d = opendir(reg);
    GT_ASSERT(d != NULL);
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "claim-", 6) == 0) {
            snprintf(path, sizeof path, "%s/%s", reg, e->d_name);
            unlink(path);
        }
    closedir(d);
    gctx_status s = gctx_claim_pressure(c, &wanted);
    gctx_claim_release(c);
    GT_ASSERT_STATUS(s, GCTX_ERROR_REGISTRY);
    GT_ASSERT_CONTAINS(gctx_last_error(), "was removed from the registry");
}
