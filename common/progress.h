/* Progress of a long run on stderr: "greenctx bench: isolation [3/14] ... (about 40 s left)". */
#ifndef GREENCTX_PROGRESS_H
#define GREENCTX_PROGRESS_H

typedef struct progress_meter {
    const char *what;  /* "greenctx bench: isolation" */
    unsigned total, done;
    double start_us;
} progress_meter;

void progress_begin(progress_meter *p, const char *what, unsigned total);
/* Starts the next step: prints "WHAT [k/N] STEP" and, after the first step, the time left. */
void progress_step(progress_meter *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "about 40 s left" from `done` of `total` steps' elapsed time; "" before one. Into buf. */
const char *progress_left(double elapsed_s, unsigned done, unsigned total, char *buf,
                                unsigned size);

#endif
