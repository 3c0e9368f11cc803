/* A latency program's closed steps, from any of its threads to the pacer thread (run_pace.c). */
#ifndef GREENCTX_RUN_STEPS_H
#define GREENCTX_RUN_STEPS_H

#include <stdatomic.h>

#define RUN_STEPS 256 /* steps between two reads (25,600 a second); divides 2^32 */

/* Zeroed: empty. Ticket t lives in slot t % RUN_STEPS, and seq says when it is written. */
typedef struct run_steps {
    atomic_uint head;           /* tickets taken by writers */
    atomic_uint tail;           /* tickets read: their slots may be written again */
    atomic_uint seq[RUN_STEPS]; /* ticket + 1 once the slot holds that ticket's step */
    float ms[RUN_STEPS];
    atomic_ulong lost; /* steps dropped since the last read: the ring held RUN_STEPS unread */
} run_steps;

/* A writer's step: a ticket, then its slot; a ring full of unread steps counts it, dropped. */
unsigned run_steps_claim(run_steps *r, int *full);
void run_steps_publish(run_steps *r, unsigned ticket, float ms);
void run_steps_put(run_steps *r, float ms);

/* The reader: report(ms, arg) for each step written since the last read, in ticket order, up
 * to the first one not yet written. Returns how many were dropped since the last read. */
unsigned long run_steps_read(run_steps *r, void (*report)(float ms, void *arg), void *arg);

#endif
