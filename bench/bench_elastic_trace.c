/* The arrival traces of bench elastic: the latency workload's batch over time, the same for
 * every arm of a run and reproducible from the seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_elastic.h"

const char *const el_trace_names[EL_NB_TRACES + 1] = {"onoff", "duty50", "poisson",
                                                       "stationary", NULL};

const char *el_trace_name(el_trace_kind kind) { return el_trace_names[kind]; }

/* On/off: 1 s of 5 at the peak. Poisson and stationary take the on/off mean. */
double el_trace_mean_load(el_trace_kind kind)
{
    double peak_share = kind == EL_TRACE_DUTY50 ? 0.5 : 1.0 / EL_PERIOD_S;
    return peak_share + (1.0 - peak_share) * EL_LOW_LOAD;
}

int el_trace_make(el_trace *trace, el_trace_kind kind, double seconds, unsigned peak_batch,
                  unsigned long long seed)
{
    memset(trace, 0, sizeof *trace);
    trace->kind = kind;
    trace->seconds = seconds;
    trace->peak_batch = peak_batch;
    trace->seed = seed;
    if (kind != EL_TRACE_POISSON)
        return 0;
    /* Little's law: requests in the batch = rate x how long each stays. */
    double rate = el_trace_mean_load(kind) * peak_batch / EL_REQUEST_S;
    size_t cap = (size_t)(rate * (seconds + EL_REQUEST_S) * 2 + 64);
    trace->arrivals = malloc(cap * sizeof *trace->arrivals);
    if (!trace->arrivals) {
        fprintf(stderr, "greenctx bench: out of memory for the trace\n");
        return -1;
    }
    /* Arrivals from before the start fill the batch at t = 0 as a long-running server's. */
    unsigned long long state = seed ? seed : 1;
    double t = -EL_REQUEST_S;
    while (trace->nb_arrivals < cap) {
        double u = ((double)(bench_random(&state) >> 11) + 0.5) / 9007199254740992.0;
        t += -log(u) / rate;
        if (t >= seconds)
            break;
        trace->arrivals[trace->nb_arrivals++] = t;
    }
    return 0;
}

void el_trace_free(el_trace *trace)
{
    free(trace->arrivals);
    trace->arrivals = NULL;
    trace->nb_arrivals = 0;
}

unsigned el_trace_batch(const el_trace *trace, double t)
{
    double load;
    double phase = fmod(t, EL_PERIOD_S);
    switch (trace->kind) {
    case EL_TRACE_ONOFF:
        load = phase < 1.0 ? 1.0 : EL_LOW_LOAD;
        break;
    case EL_TRACE_DUTY50:
        load = phase < EL_PERIOD_S / 2 ? 1.0 : EL_LOW_LOAD;
        break;
    case EL_TRACE_POISSON: {
        unsigned active = 0;
        for (unsigned i = 0; i < trace->nb_arrivals && trace->arrivals[i] <= t; i++)
            active += trace->arrivals[i] > t - EL_REQUEST_S;
        load = (double)active / trace->peak_batch;
        break;
    }
    default:
        load = el_trace_mean_load(EL_TRACE_ONOFF);
        break;
    }
    long batch = lround(load * trace->peak_batch);
    if (batch < 1)
        batch = 1;
    if (batch > (long)trace->peak_batch)
        batch = (long)trace->peak_batch;
    return (unsigned)batch;
}
