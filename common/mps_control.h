/* An MPS control daemon with its own pipe and log directories (`greenctx mps`): finding the
 * control program (GREENCTX_MPS_CONTROL: another, for tests), running it, and asking whether a
 * daemon answers. The GPU's compute mode and every other setting stay as they are. */
#ifndef GREENCTX_MPS_CONTROL_H
#define GREENCTX_MPS_CONTROL_H

#include <limits.h>
#include <stddef.h>

#define MPS_CONTROL_NAME "nvidia-cuda-mps-control"

typedef struct mps_control {
    char pipe_dir[PATH_MAX];
    char log_dir[PATH_MAX];
    char program[PATH_MAX]; /* the control program, "" when none was found */
    const char *why_none;   /* then why, for a message */
    char pipe_var[PATH_MAX + 32], log_var[PATH_MAX + 32], start_log[PATH_MAX + 32];
    char **envp;            /* this environment with the two directories: the program's */
} mps_control;

/* The daemon of pipe_dir and log_dir: its control program found (else program "" and
 * why_none) and its environment made. -1 when out of room; else 0 (mps_control_close). */
int mps_control_open(mps_control *m, const char *pipe_dir, const char *log_dir);
void mps_control_close(mps_control *m);

/* Runs the control program with input on its stdin (its output into output), or NULL: `-d`,
 * the daemon, its output in <log_dir>/greenctx-start.log. Its exit status, -1 when it did not
 * run. Async-signal-safe (a signal handler may quit the daemon): flush stdio first. */
int mps_control_run(const mps_control *m, const char *input, char *output, size_t size);

/* 1 when a daemon answers on m's pipe directory (gctx_mps_get_info there). */
int mps_control_answers(const mps_control *m);

/* Waits up to ms milliseconds until mps_control_answers says `running`; 0 when it did. */
int mps_control_wait(const mps_control *m, int running, int ms);

/* Starts the daemon and waits up to ms for it to answer: 0, or why in why and -1 when `-d`
 * failed, -2 when no daemon answered. */
int mps_control_start(const mps_control *m, int ms, char *why, size_t size);

#endif
