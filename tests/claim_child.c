/* A process of its own for tests/test_claims.c (a fresh process, as on a GPU a forked child
 * can't use CUDA):
 *
 *   claim_child TOKEN [hold]                  joins the claim a holder exported, says what it
 *                                             holds, then (hold) waits for a line on stdin
 *   claim_child acquire REQUEST DIR [MS]      claims REQUEST in the runtime directory DIR as
 *                                             command "holder", says so, then releases after
 *                                             MS milliseconds, or waits to be killed
 *   claim_child wait REQUEST DIR PRIORITY     claims REQUEST with GCTX_CLAIM_WAIT (no timeout)
 *                                             at PRIORITY, says how long it waited, then
 *                                             releases at a line on stdin
 *   claim_child fork REQUEST DIR own|inherit  claims REQUEST (inherit: GCTX_CLAIM_INHERIT),
 *                                             forks a child that never execs and sleeps until
 *                                             killed, says the child's pid, waits to be killed
 *   claim_child latency REQUEST DIR STEP_MS   claims REQUEST as a latency tenant (target
 *                                             1 ms), says so, then reports a step of STEP_MS
 *                                             every ms until killed
 *
 * Each prints one line on stdout; exit status 0 when its claim or join worked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "greenctx.h"
#include "greenctx_claims.h"

static int acquire(const char *request, const char *dir, const char *hold_ms)
{
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = dir;
    o.command = "holder";
    gctx_claim *claim;
    gctx_status s = gctx_claim_acquire(0, request, &o, &claim);
    if (s != GCTX_SUCCESS) {
        printf("acquire %s %s\n", gctx_status_name(s), gctx_last_error());
        return 1;
    }
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    gctx_claim_get_info(claim, &info);
    printf("claimed %u SMs\n", info.sm_count);
    fflush(stdout);
    if (!hold_ms)
        for (;;)
            pause();
    long ms = atol(hold_ms);
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
    gctx_claim_release(claim);
    return 0;
}

static int fork_holding(const char *request, const char *dir, const char *how)
{
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = dir;
    o.command = "holder";
    o.flags = strcmp(how, "inherit") == 0 ? GCTX_CLAIM_INHERIT : 0;
    gctx_claim *claim;
    gctx_status s = gctx_claim_acquire(0, request, &o, &claim);
    if (s != GCTX_SUCCESS) {
        printf("acquire %s %s\n", gctx_status_name(s), gctx_last_error());
        return 1;
    }
    fflush(stdout);
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) { /* no exec, no CUDA: only the descriptors it got, after fork's handlers */
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    char r;
    if (child < 0 || read(ready[0], &r, 1) != 1)
        return 1;
    printf("claimed, child %d\n", (int)child);
    fflush(stdout);
    for (;;)
        pause();
}

static long long now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000ll + t.tv_nsec / 1000;
}

static int wait_for(const char *request, const char *dir, const char *priority)
{
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = dir;
    o.command = "waiter";
    o.flags = GCTX_CLAIM_WAIT;
    o.timeout_ms = -1;
    o.priority = atoi(priority);
    gctx_device_info dev = GCTX_DEVICE_INFO_INIT;
    gctx_device_get_info(0, &dev); /* the driver loaded before the clock starts */
    long long start = now_us();
    gctx_claim *claim;
    gctx_status s = gctx_claim_acquire(0, request, &o, &claim);
    long long waited = now_us() - start;
    if (s != GCTX_SUCCESS) {
        printf("acquire %s %s\n", gctx_status_name(s), gctx_last_error());
        return 1;
    }
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    gctx_claim_get_info(claim, &info);
    printf("claimed %u SMs after %lld us\n", info.sm_count, waited);
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        line[0] = '\0';
    gctx_claim_release(claim);
    return 0;
}

static int join(const char *token, int hold)
{
    gctx_claim *claim;
    gctx_status s = gctx_claim_join(0, token, &claim);
    if (s != GCTX_SUCCESS) {
        printf("join %s %s\n", gctx_status_name(s), gctx_last_error());
        return 1;
    }
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    gctx_claim_get_info(claim, &info);
    printf("joined %u SMs of pid %d, self %d\n", info.sm_count, info.pid, info.self);
    fflush(stdout);
    if (hold) {
        char line[16];
        if (!fgets(line, sizeof line, stdin))
            line[0] = '\0';
    }
    gctx_claim_release(claim);
    return 0;
}

static int latency(const char *request, const char *dir, const char *step_ms)
{
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = dir;
    o.command = "latency";
    o.tenant_class = GCTX_TENANT_LATENCY;
    o.target_ms = 1.0;
    gctx_claim *claim;
    gctx_status s = gctx_claim_acquire(0, request, &o, &claim);
    if (s != GCTX_SUCCESS) {
        printf("acquire %s %s\n", gctx_status_name(s), gctx_last_error());
        return 1;
    }
    printf("stepping\n");
    fflush(stdout);
    for (;;) {
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
        gctx_claim_report_step(claim, atof(step_ms));
    }
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "latency") == 0)
        return latency(argv[2], argv[3], argv[4]);
    if (argc >= 4 && strcmp(argv[1], "acquire") == 0)
        return acquire(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
    if (argc >= 5 && strcmp(argv[1], "wait") == 0)
        return wait_for(argv[2], argv[3], argv[4]);
    if (argc >= 5 && strcmp(argv[1], "fork") == 0)
        return fork_holding(argv[2], argv[3], argv[4]);
    if (argc >= 2 && strcmp(argv[1], "acquire") != 0)
        return join(argv[1], argc > 2 && strcmp(argv[2], "hold") == 0);
    fprintf(stderr, "usage: claim_child TOKEN [hold] | claim_child acquire REQUEST DIR [MS] | "
                    "claim_child wait REQUEST DIR PRIORITY | "
                    "claim_child fork REQUEST DIR own|inherit | "
                    "claim_child latency REQUEST DIR STEP_MS\n");
    return 2;
}
