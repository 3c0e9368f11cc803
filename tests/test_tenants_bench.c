/* `bench tenants` without a GPU: its MPS daemon (a stand-in nvidia-cuda-mps-control,
 * tests/fake_mps_control.py, on PATH) is started with its own pipe and log directories and
 * quit at the end and on a signal, a running one is used and left alone, a missing one is
 * said; every arm with stand-in tenants (tests/fake_tenant_worker.py): who starts, with
 * which MPS environment, at which instant, a tenant that fails, the fault arm's new tenants;
 * and the report of a made-up run (ratios, rows that did not run, the fault arm, one
 * JSON document). Skips what needs python3 when it is missing. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_tenants.h"
#include "harness.h"

#if !defined(FAKE_MPS_CONTROL) || !defined(FAKE_TENANT_WORKER)
#error "FAKE_MPS_CONTROL, FAKE_TENANT_WORKER: the paths of tests/fake_*.py"
#endif

static char fake_dir[64], record[128];

/* PATH with the stand-in first, the record empty, and a user pipe directory no daemon
 * answers on. */
static void use_fake(void)
{
    if (system("command -v python3 >/dev/null 2>&1") != 0)
        GT_SKIP("python3 is not installed: the stand-in MPS control is a Python script");
    snprintf(fake_dir, sizeof fake_dir, "/tmp/greenctx-test-mps-XXXXXX");
    GT_ASSERT(mkdtemp(fake_dir) != NULL);
    char link[128], path[4096], pipe[128];
    snprintf(link, sizeof link, "%s/nvidia-cuda-mps-control", fake_dir);
    GT_ASSERT_EQ_INT(symlink(FAKE_MPS_CONTROL, link), 0);
    snprintf(path, sizeof path, "%s:%s", fake_dir, getenv("PATH") ? getenv("PATH") : "/usr/bin");
    setenv("PATH", path, 1);
    snprintf(record, sizeof record, "%s/record", fake_dir);
    setenv("GREENCTX_TEST_MPS_RECORD", record, 1);
    snprintf(pipe, sizeof pipe, "%s/user-pipe", fake_dir);
    GT_ASSERT_EQ_INT(mkdir(pipe, 0700), 0);
    setenv("CUDA_MPS_PIPE_DIRECTORY", pipe, 1);
    unsetenv("GREENCTX_TEST_MPS_FAIL");
}

/* The file's text ("" when it can't be read). */
static void read_text(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, size - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
}

/* What the stand-in MPS control recorded. */
static void read_record(char *buf, size_t size) { read_text(record, buf, size); }

static void drop_fake(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", fake_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fake_dir);
}

GT_TEST(own_daemon_is_started_in_its_directories_and_quit)
{
    use_fake();
    GT_CHECK();
    tenant_paths paths;
    tenant_mps mps;
    GT_ASSERT_EQ_INT(tenant_paths_make(&paths), 0);
    tenant_mps_start(&paths, &mps);
    GT_ASSERT_STR_EQ(mps.why, "");
    GT_ASSERT_EQ_INT(mps.available, 1);
    GT_ASSERT_EQ_INT(mps.started, 1);
    char want[1200], got[2048];
    snprintf(want, sizeof want, "start %s/mps-pipe %s/mps-log\n", paths.root, paths.root);
    read_record(got, sizeof got);
    GT_ASSERT_STR_EQ(got, want);
    struct stat st;
    GT_ASSERT_EQ_INT(stat(paths.mps_pipe, &st), 0);
    GT_ASSERT_EQ_INT(st.st_mode & 0777, 0700);
    tenant_mps_stop(&mps);
    snprintf(want + strlen(want), sizeof want - strlen(want), "quit %s/mps-pipe\n", paths.root);
    read_record(got, sizeof got);
    GT_ASSERT_STR_EQ(got, want);
    tenant_paths_remove(&paths);
    GT_ASSERT_NE_INT(stat(paths.root, &st), 0);
    drop_fake();
}

GT_TEST(running_daemon_is_used_and_left_running)
{
    use_fake();
    GT_CHECK();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s/nvidia-cuda-mps-control -d", fake_dir);
    GT_ASSERT_EQ_INT(system(cmd), 0);
    tenant_paths paths;
    tenant_mps mps;
    GT_ASSERT_EQ_INT(tenant_paths_make(&paths), 0);
    tenant_mps_start(&paths, &mps);
    GT_ASSERT_EQ_INT(mps.available, 1);
    GT_ASSERT_EQ_INT(mps.started, 0);
    GT_ASSERT_STR_EQ(paths.mps_pipe, getenv("CUDA_MPS_PIPE_DIRECTORY"));
    tenant_mps_stop(&mps);
    char got[2048];
    read_record(got, sizeof got);
    GT_ASSERT(strstr(got, "quit") == NULL); /* not ours: never quit */
    tenant_paths_remove(&paths);
    snprintf(cmd, sizeof cmd, "echo quit | %s/nvidia-cuda-mps-control", fake_dir);
    GT_ASSERT_EQ_INT(system(cmd), 0);
    drop_fake();
}

/* Alive and not a zombie (an orphan's zombie lingers where nothing reaps it). */
static int running(int pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = fscanf(f, "%*d (%*[^)]) %c", &state);
    fclose(f);
    return n == 1 && state != 'Z';
}

GT_TEST(signal_kills_the_workers_and_quits_the_daemon)
{
    use_fake();
    GT_CHECK();
    tenant_paths paths;
    GT_ASSERT_EQ_INT(tenant_paths_make(&paths), 0);
    pid_t bench = fork();
    GT_ASSERT(bench >= 0);
    if (bench == 0) { /* the bench: its daemon, a worker, then SIGTERM */
        tenant_mps mps;
        tenant_mps_start(&paths, &mps);
        pid_t worker = fork();
        if (worker == 0) {
            pause();
            _exit(0);
        }
        tenant_mps_watch(worker);
        char path[128];
        snprintf(path, sizeof path, "%s/worker", fake_dir);
        FILE *f = fopen(path, "w");
        if (f)
            fprintf(f, "%d\n", (int)worker), fclose(f);
        raise(SIGTERM);
        _exit(3); /* not reached: the handler re-raises */
    }
    int status = 0;
    GT_ASSERT_EQ_INT(waitpid(bench, &status, 0), bench);
    GT_ASSERT(WIFSIGNALED(status));
    GT_ASSERT_EQ_INT(WTERMSIG(status), SIGTERM);
    char got[2048], want[1200];
    read_record(got, sizeof got);
    snprintf(want, sizeof want, "quit %s/mps-pipe\n", paths.root);
    GT_ASSERT_CONTAINS(got, want);
    /* The worker it watched is gone too (killed, then reaped by init). */
    char path[128];
    snprintf(path, sizeof path, "%s/worker", fake_dir);
    FILE *f = fopen(path, "r");
    int worker = 0;
    GT_ASSERT(f != NULL);
    GT_ASSERT_EQ_INT(fscanf(f, "%d", &worker), 1);
    fclose(f);
    int alive = 1;
    for (int i = 0; i < 100 && alive; i++, usleep(10000))
        alive = running(worker);
    GT_ASSERT_EQ_INT(alive, 0);
    tenant_paths_remove(&paths);
    drop_fake();
}

GT_TEST(daemon_that_cannot_start_is_said_and_still_quit)
{
    use_fake();
    GT_CHECK();
    setenv("GREENCTX_TEST_MPS_FAIL", "1", 1);
    tenant_paths paths;
    tenant_mps mps;
    GT_ASSERT_EQ_INT(tenant_paths_make(&paths), 0);
    tenant_mps_start(&paths, &mps);
    GT_ASSERT_EQ_INT(mps.available, 0);
    GT_ASSERT_CONTAINS(mps.why, "-d` (CUDA_MPS_PIPE_DIRECTORY=");
    GT_ASSERT_CONTAINS(mps.why, "failed (exit status ");
    tenant_mps_stop(&mps);
    char got[2048];
    read_record(got, sizeof got);
    GT_ASSERT_CONTAINS(got, "quit ");
    tenant_paths_remove(&paths);
    unsetenv("GREENCTX_TEST_MPS_FAIL");
    drop_fake();
}

GT_TEST(no_control_program_is_said)
{
    char pipe[] = "/tmp/greenctx-test-nompsd-XXXXXX";
    GT_ASSERT(mkdtemp(pipe) != NULL);
    setenv("CUDA_MPS_PIPE_DIRECTORY", pipe, 1);
    char saved[4096];
    snprintf(saved, sizeof saved, "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", pipe, 1); /* an empty directory: no nvidia-cuda-mps-control on it */
    tenant_paths paths;
    tenant_mps mps;
    GT_ASSERT_EQ_INT(tenant_paths_make(&paths), 0);
    tenant_mps_start(&paths, &mps);
    tenant_mps_stop(&mps);
    tenant_paths_remove(&paths);
    setenv("PATH", saved, 1);
    rmdir(pipe);
    GT_ASSERT_EQ_INT(mps.available, 0);
    GT_ASSERT_CONTAINS(mps.why, "nvidia-cuda-mps-control is not on PATH");
}

/* GREENCTX_MPS_CONTROL names the control program for the bench as for `greenctx mps`
 * (common/mps_control.c): the stand-in there starts the run's daemon; a wrong one is said. */
GT_TEST(the_control_program_override_is_the_tools)
{
    use_fake();
    GT_CHECK();
    char control[600];
    snprintf(control, sizeof control, "%s/nvidia-cuda-mps-control", fake_dir);
    char saved[4096];
    snprintf(saved, sizeof saved, "%s", getenv("PATH"));
    setenv("PATH", "/usr/bin:/bin", 1); /* the stand-in only through the override */
    setenv("GREENCTX_MPS_CONTROL", control, 1);
    tenant_paths paths;
    tenant_mps mps;
    GT_ASSERT_EQ_INT(tenant_paths_make(&paths), 0);
    tenant_mps_start(&paths, &mps);
    GT_ASSERT_STR_EQ(mps.why, "");
    GT_ASSERT_EQ_INT(mps.started, 1);
    tenant_mps_stop(&mps);
    setenv("GREENCTX_MPS_CONTROL", "/nonexistent/mps-control", 1);
    tenant_mps_start(&paths, &mps);
    tenant_mps_stop(&mps);
    unsetenv("GREENCTX_MPS_CONTROL");
    setenv("PATH", saved, 1);
    tenant_paths_remove(&paths);
    drop_fake();
    GT_ASSERT_EQ_INT(mps.available, 0);
    GT_ASSERT_CONTAINS(mps.why, "GREENCTX_MPS_CONTROL names no executable file");
}

/* ---- every arm, with stand-in tenants ---- */

/* Lines of the stand-ins' record that start with prefix (and contain part, when not NULL). */
static int count_lines(const char *text, const char *prefix, const char *part)
{
    int n = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        n += !strncmp(buf, prefix, strlen(prefix)) && (!part || strstr(buf, part));
    }
    return n;
}

GT_TEST(every_arm_runs_its_tenants_together_and_a_failed_one_keeps_its_row)
{
    use_fake();
    GT_CHECK();
    char tenants[128];
    snprintf(tenants, sizeof tenants, "%s/tenants", fake_dir);
    setenv("GREENCTX_TEST_TENANT_RECORD", tenants, 1);
    setenv("GREENCTX_TEST_TENANT_FAIL", "hog:88", 1);
    bench_env env;
    memset(&env, 0, sizeof env);
    env.sm_count = 132;
    env.opt.quick = 1;
    tenants_result *r = calloc(1, sizeof *r);
    GT_ASSERT(r != NULL);
    /* Its progress on stderr, into a file. */
    char progress_path[128];
    snprintf(progress_path, sizeof progress_path, "%s/progress", fake_dir);
    fflush(stderr);
    int saved_stderr = dup(2), progress_fd = open(progress_path, O_WRONLY | O_CREAT, 0600);
    GT_ASSERT(saved_stderr >= 0 && progress_fd >= 0 && dup2(progress_fd, 2) == 2);
    close(progress_fd);
    int rc = bench_tenants_run(&env, FAKE_TENANT_WORKER, r);
    fflush(stderr);
    GT_ASSERT(dup2(saved_stderr, 2) == 2);
    close(saved_stderr);
    unsetenv("GREENCTX_TEST_TENANT_FAIL");
    int status;
    GT_ASSERT(waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD); /* every tenant reaped */
    GT_ASSERT_EQ_INT(rc, -1);
    GT_ASSERT_EQ_INT(r->failed, 1);
    GT_ASSERT(r->mps_available && r->mps_started);
    for (int id = 0; id < TA_NB_ARMS; id++)
        GT_ASSERT_EQ_INT(r->arm[id].ran, id != TA_MPS_THREADS);
    GT_ASSERT_STR_EQ(r->arm[TA_MPS_THREADS].why, "failed: see the messages above");
    GT_ASSERT_EQ_INT(r->arm[TA_MPS_CLAIMS].victim.sms, 16);
    GT_ASSERT_EQ_INT(r->arm[TA_MPS_CLAIMS].hog.sms, 116);
    GT_ASSERT_EQ_INT(r->hog_sms, 116);
    GT_ASSERT(tenant_victim_ratio(r, TA_SLICED_PRIMARY) > 2.85 &&
              tenant_victim_ratio(r, TA_SLICED_PRIMARY) < 2.86);
    GT_ASSERT(tenant_hog_ratio(r, TA_MPS_CLAIMS) == 1.0);
    /* The fault arm: without MPS one new tenant runs; under MPS the first one fails. */
    GT_ASSERT(r->fault[0].ran && r->fault[1].ran);
    GT_ASSERT_EQ_INT(r->fault[0].faulter.fault_result, 700);
    GT_ASSERT_EQ_INT(r->fault[0].launcher.failed, 0);
    GT_ASSERT_EQ_INT(r->fault[0].probe_attempts, 1);
    GT_ASSERT_EQ_INT(r->fault[1].probe_attempts, 2);
    GT_ASSERT(r->fault[1].probe_done_ns > r->fault[1].faulter.fault_ns);
    GT_ASSERT_EQ_INT(r->fault[1].launcher.failed, 5000);
    GT_ASSERT_CONTAINS(r->fault[1].launcher.message, "the fault of pid 1 reached");
    /* A step per arm and per fault arm, 13, the time left from the second on. */
    static char progress[16384];
    read_text(progress_path, progress, sizeof progress);
    GT_ASSERT_CONTAINS(progress, "greenctx bench: tenants [1/13] victim alone");
    GT_ASSERT_CONTAINS(progress, "greenctx bench: tenants [8/13] fault arm, no MPS (about ");
    GT_ASSERT_CONTAINS(progress, "greenctx bench: tenants [13/13] fault arm, MPS (about ");

    static char text[65536];
    read_text(tenants, text, sizeof text);
    char root[600], no_mps[1200], mps_pipe[1200];
    snprintf(mps_pipe, sizeof mps_pipe, " %s ", r->mps_pipe);
    snprintf(root, sizeof root, "%s", r->mps_pipe);
    snprintf(no_mps, sizeof no_mps, " %s/no-mps ", dirname(root));
    /* Started: 5 alone, 5 pairs, the two of the failed arm, 2 x (faulter, launcher, probe)
     * and the probe that failed under MPS; the arms without MPS never see the daemon. */
    GT_ASSERT_EQ_INT(count_lines(text, "start ", NULL), 5 + 10 + 2 + 6 + 1);
    GT_ASSERT_EQ_INT(count_lines(text, "start ", no_mps), 5 + 4 + 3);
    GT_ASSERT_EQ_INT(count_lines(text, "start ", mps_pipe), 6 + 2 + 4);
    GT_ASSERT_EQ_INT(count_lines(text, "start victim primary", " 12"), 1);
    GT_ASSERT_EQ_INT(count_lines(text, "start hog primary", " 88"), 1);
    GT_ASSERT_EQ_INT(count_lines(text, "start ", " -"), 5 + 10 + 6 + 1);
    GT_ASSERT_EQ_INT(count_lines(text, "start victim 16", NULL), 5); /* claims take 16 */
    GT_ASSERT_EQ_INT(count_lines(text, "start hog rest ", NULL), 3);
    /* alone: the rest beside the victim's claim, held aside */
    GT_ASSERT_EQ_INT(count_lines(text, "start hog rest-beside-16 ", NULL), 2);
    /* Each pair got one start: 5 + 5 + 2 distinct instants for the 20 that waited for one
     * (the probes start at once: "go 0"). */
    GT_ASSERT_EQ_INT(count_lines(text, "go ", NULL), 5 + 10 + 6);
    GT_ASSERT_EQ_INT(count_lines(text, "go probe", NULL), 2);
    int distinct = 0;
    long long starts[64];
    for (const char *line = strstr(text, "go "); line; line = strstr(line + 1, "\ngo ")) {
        long long start = 0;
        const char *last = strchr(line + 1, '\n');
        const char *space = last ? last : line + strlen(line);
        while (space > line && space[-1] != ' ')
            space--;
        start = atoll(space);
        int seen = start == 0;
        for (int i = 0; i < distinct && !seen; i++)
            seen = starts[i] == start;
        if (!seen && distinct < 64)
            starts[distinct++] = start;
    }
    GT_ASSERT_EQ_INT(distinct, 5 + 5 + 2);
    struct stat st;
    GT_ASSERT_NE_INT(stat(r->mps_pipe, &st), 0); /* the run's directories are gone */
    char got[4096];
    read_record(got, sizeof got);
    GT_ASSERT_EQ_INT(count_lines(got, "quit ", NULL), 1);
    free(r);
    drop_fake();
}

GT_TEST(on_a_running_daemon_every_arm_runs_but_no_fault_under_mps)
{
    use_fake();
    GT_CHECK();
    char cmd[256], tenants[128];
    snprintf(cmd, sizeof cmd, "%s/nvidia-cuda-mps-control -d", fake_dir);
    GT_ASSERT_EQ_INT(system(cmd), 0);
    snprintf(tenants, sizeof tenants, "%s/tenants", fake_dir);
    setenv("GREENCTX_TEST_TENANT_RECORD", tenants, 1);
    bench_env env;
    memset(&env, 0, sizeof env);
    env.sm_count = 132;
    env.opt.quick = 1;
    tenants_result *r = calloc(1, sizeof *r);
    GT_ASSERT(r != NULL);
    int rc = bench_tenants_run(&env, FAKE_TENANT_WORKER, r);
    snprintf(cmd, sizeof cmd, "echo quit | %s/nvidia-cuda-mps-control", fake_dir);
    GT_ASSERT_EQ_INT(system(cmd), 0);
    GT_ASSERT_EQ_INT(rc, 0);
    GT_ASSERT(r->mps_available && !r->mps_started);
    GT_ASSERT_STR_EQ(r->mps_pipe, getenv("CUDA_MPS_PIPE_DIRECTORY"));
    for (int id = 0; id < TA_NB_ARMS; id++)
        GT_ASSERT_EQ_INT(r->arm[id].ran, 1);
    GT_ASSERT(r->fault[0].ran && !r->fault[1].ran);
    GT_ASSERT_CONTAINS(r->fault[1].why, "is not this run's, and a fault under MPS reaches every "
                                        "client of its server");
    /* The MPS arms' tenants were clients of the running daemon. */
    char pipe[600];
    snprintf(pipe, sizeof pipe, " %s ", r->mps_pipe);
    static char text[65536];
    read_text(tenants, text, sizeof text);
    GT_ASSERT_EQ_INT(count_lines(text, "start ", pipe), 8);
    free(r);
    drop_fake();
}

/* ---- the report of a made-up run ---- */

static void victim(tenant_cell *c, unsigned sms, double p50, double p99)
{
    c->ran = c->has_victim = 1;
    c->victim.sms = sms;
    c->victim.latency_us.n = 1000;
    c->victim.latency_us.p50 = p50, c->victim.latency_us.p99 = p99;
    c->victim.latency_us.p999 = c->victim.latency_us.max = p99 * 1.1;
}

static void hog(tenant_cell *c, unsigned sms, double gflops)
{
    c->ran = c->has_hog = 1;
    c->hog.sms = sms;
    c->hog.units = 1000, c->hog.seconds = 1.0, c->hog.unit_amount = gflops * 1e6;
}

static void made_up(tenants_result *r)
{
    memset(r, 0, sizeof *r);
    r->sm_count = 132, r->victim_sms = 16, r->hog_sms = 116;
    r->duration_ms = 3000, r->fault_at_ms = 1000, r->victim_iters = TENANT_VICTIM_ITERS;
    r->mps_available = r->mps_started = 1;
    snprintf(r->mps_pipe, sizeof r->mps_pipe, "/tmp/greenctx-bench-x/mps-pipe");
    tenant_arm(TA_VICTIM_ALONE, 16, 132);
    victim(&r->arm[TA_VICTIM_ALONE], 16, 717, 730);
    hog(&r->arm[TA_HOG_ALONE_CLAIM], 116, 53787);
    hog(&r->arm[TA_HOG_ALONE_PRIMARY], 132, 61156);
    victim(&r->arm[TA_SLICED_PRIMARY], 132, 2005, 2020);
    hog(&r->arm[TA_SLICED_PRIMARY], 132, 50535);
    victim(&r->arm[TA_MPS_CLAIMS], 16, 719, 730);
    hog(&r->arm[TA_MPS_CLAIMS], 116, 53787);
    snprintf(r->arm[TA_MPS_THREADS].why, sizeof r->arm[0].why, "failed: see the messages above");
    r->fault[1].ran = 1;
    r->fault[1].faulter.fault_ns = 1000000000LL, r->fault[1].faulter.fault_result = 700;
    r->fault[1].launcher.ok = 107099, r->fault[1].launcher.failed = 707721;
    r->fault[1].launcher.first_fail_ns = 1150000000LL, r->fault[1].launcher.first_fail_result = 700;
    r->fault[1].probe_attempts = 2, r->fault[1].probe_done_ns = 2500000000LL;
    snprintf(r->fault[1].launcher.message, sizeof r->fault[1].launcher.message,
             "pid 42 faulted");
    snprintf(r->fault[0].why, sizeof r->fault[0].why, "failed: see the messages above");
}

/* Runs fn with stdout in a file; returns its contents (malloc'd). */
static char *captured(void (*fn)(const tenants_result *), const tenants_result *r)
{
    char path[] = "/tmp/greenctx-test-tenants-out-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    fn(r);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)size + 1);
    if (text && pread(fd, text, (size_t)size, 0) != size)
        text[0] = '\0';
    close(fd);
    unlink(path);
    return text;
}

static void print_table(const tenants_result *r) { bench_tenants_print(NULL, r); }
static void print_json(const tenants_result *r)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.test/1");
    bench_tenants_json(&w, r);
    json_end(&w);
}

GT_TEST(ratios_divide_by_the_alone_arm_in_the_same_sms)
{
    tenants_result r;
    made_up(&r);
    GT_ASSERT(tenant_victim_ratio(&r, TA_VICTIM_ALONE) == 1.0);
    GT_ASSERT(tenant_victim_ratio(&r, TA_SLICED_PRIMARY) > 2.76 &&
              tenant_victim_ratio(&r, TA_SLICED_PRIMARY) < 2.77);
    /* The primary hog over the primary hog alone; the claimed hog over the claim alone. */
    GT_ASSERT(tenant_hog_ratio(&r, TA_SLICED_PRIMARY) > 0.826 &&
              tenant_hog_ratio(&r, TA_SLICED_PRIMARY) < 0.827);
    GT_ASSERT(tenant_hog_ratio(&r, TA_MPS_CLAIMS) == 1.0);
    GT_ASSERT(tenant_victim_ratio(&r, TA_MPS_THREADS) == 0); /* did not run: no figure */
    GT_ASSERT(tenant_hog_ratio(&r, TA_MPS_CLAIMS_COPY) == 0);
}

GT_TEST(table_shows_every_arm_and_why_one_did_not_run)
{
    tenants_result r;
    made_up(&r);
    char *t = captured(print_table, &r);
    GT_ASSERT(t != NULL);
    GT_ASSERT_CONTAINS(t, "MPS, claims 16 | rest");
    GT_ASSERT_CONTAINS(t, "16 | 116");
    GT_ASSERT_CONTAINS(t, "719 / 730");
    GT_ASSERT_CONTAINS(t, "53787 GFLOP/s");
    GT_ASSERT_CONTAINS(t, "MPS, active threads 12% | 88%");
    GT_ASSERT_CONTAINS(t, "not run: failed: see the messages above");
    GT_ASSERT_CONTAINS(t, "copy hog alone, claim 116");
    GT_ASSERT_CONTAINS(t, "MPS: a daemon of this run, quit at the end");
    GT_ASSERT_CONTAINS(t, "107099        707721  0.150 s (CUDA error 700)");
    GT_ASSERT_CONTAINS(t, "1.500 s (2 processes)");
    GT_ASSERT_CONTAINS(t, "B was told: pid 42 faulted");
    GT_ASSERT_CONTAINS(t, "(error 700: "); /* its name comes from the driver, not loaded here */
    free(t);
}

GT_TEST(json_is_one_document_with_every_arm)
{
    tenants_result r;
    made_up(&r);
    char *j = captured(print_json, &r);
    GT_ASSERT(j != NULL);
    GT_ASSERT_CONTAINS(j, "\"name\":\"mps_claims\"");
    GT_ASSERT_CONTAINS(j, "\"victim_p99_vs_alone\":1.0000,\"hog_vs_alone\":1.0000");
    GT_ASSERT_CONTAINS(j, "\"other_failed\":707721");
    GT_ASSERT_CONTAINS(j, "\"new_tenant_runs_after_s\":1.500000");
    FILE *f = popen("python3 -c 'import json,sys; d=json.load(sys.stdin); "
                    "t = d[\"tenants\"]; assert len(t[\"arms\"]) == 11 and len(t[\"fault\"]) == 2' "
                    "2>&1", "w");
    if (f) {
        fputs(j, f);
        int rc = pclose(f);
        if (WIFEXITED(rc) && WEXITSTATUS(rc) != 127)
            GT_ASSERT_EQ_INT(WEXITSTATUS(rc), 0);
    }
    free(j);
}
