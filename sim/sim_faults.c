/* Per-entry-point call counters and fault injection: one numbered call of one entry point
 * fails before it does anything, so callers' rollback paths can be tested. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

#define SIM_NAME_(name, version, required, params) #name,
static const char *const symbol_names[SIM_SYM_COUNT] = {
    GCU_DRIVER_SYMBOLS(SIM_NAME_) "cuGetProcAddress"};
#undef SIM_NAME_

#define SIM_MAX_FAULTS 64

typedef struct sim_fault {
    int sym;
    long call;
    gcu_result code;
} sim_fault;

static long calls[SIM_SYM_COUNT];
static sim_fault faults[SIM_MAX_FAULTS];
static int nfaults;
/* A sticky fault fired: every later call answers it, as after an illegal address. 0: none. */
static gcu_result sticky;

/* What still works after a sticky fault: what needs no context. */
static int answers_sticky(int sym)
{
    return sym != SIM_SYM_cuInit && sym != SIM_SYM_cuDriverGetVersion &&
           sym != SIM_SYM_cuGetProcAddress && sym != SIM_SYM_cuGetErrorName &&
           sym != SIM_SYM_cuDeviceGet && sym != SIM_SYM_cuDeviceGetCount &&
           sym != SIM_SYM_cuDeviceGetName && sym != SIM_SYM_cuDeviceGetAttribute;
}

static int symbol_index(const char *name)
{
    if (!name)
        return -1;
    if (strcmp(name, "cuGetProcAddress_v2") == 0)
        name = "cuGetProcAddress";
    for (int i = 0; i < SIM_SYM_COUNT; i++)
        if (strcmp(symbol_names[i], name) == 0)
            return i;
    return -1;
}

/* gctxsim_on_call's: fn(arg) at each call of sym; sym -1 for none. */
static struct sim_hook {
    int sym;
    void (*fn)(void *);
    void *arg;
} hook = {-1, NULL, NULL};

gcu_result sim_count_call(int sym)
{
    if (sym == hook.sym)
        hook.fn(hook.arg);
    long call = ++calls[sym];
    if (sticky && answers_sticky(sym))
        return sticky;
    for (int i = 0; i < nfaults; i++)
        if (faults[i].sym == sym && faults[i].call == call) {
            if (gcu_result_is_sticky(faults[i].code))
                sticky = faults[i].code;
            return faults[i].code;
        }
    return GCU_SUCCESS;
}

static void faults_clear(void)
{
    nfaults = 0;
    sticky = GCU_SUCCESS;
}

static void fault_add(int sym, long call, int code)
{
    if (nfaults < SIM_MAX_FAULTS)
        faults[nfaults++] = (sim_fault){sym, call, code > 0 ? code : GCU_ERROR_OUT_OF_MEMORY};
}

/* One "symbol:N[:code]" entry; 0 when it is well formed and added. */
static int add_entry(const char *entry)
{
    char name[128];
    const char *colon = strchr(entry, ':');
    if (!colon || (size_t)(colon - entry) >= sizeof name)
        return -1;
    memcpy(name, entry, (size_t)(colon - entry));
    name[colon - entry] = '\0';
    char *rest, *code_end = NULL;
    long n = strtol(colon + 1, &rest, 10);
    long code = *rest == ':' ? strtol(rest + 1, &code_end, 10) : 0;
    int sym = symbol_index(name);
    if (sym < 0 || n <= 0 || rest == colon + 1 || (*rest && (*rest != ':' || *code_end)) ||
        code < 0 || code > 100000)
        return -1;
    fault_add(sym, n, (int)code);
    return 0;
}

/* "symbol:N[:code],...": the N-th call since the reset fails. A malformed entry refuses the
 * whole configuration (the caller fails cuInit with why): a fault silently dropped would let
 * a rollback test pass without testing anything. */
int sim_faults_reset(const char *spec, char *why, size_t why_size)
{
    memset(calls, 0, sizeof calls);
    faults_clear();
    hook = (struct sim_hook){-1, NULL, NULL};
    const char *whole = spec;
    char entry[128];
    while (spec && sim_list_next(&spec, entry, sizeof entry))
        if (add_entry(entry) != 0) {
            snprintf(why, why_size,
                     "GREENCTX_SIM_FAIL=%s: '%s' is not ENTRY_POINT:N[:CODE] with a driver "
                     "entry point the simulator has (e.g. cuGreenCtxCreate), N >= 1 and CODE a "
                     "CUresult from 0 to 100000",
                     whole, entry);
            return -1;
        }
    return 0;
}

GCTXSIM_API long gctxsim_calls(const char *symbol)
{
    int sym = symbol_index(symbol);
    sim_lock();
    long n = sym >= 0 ? calls[sym] : -1;
    sim_unlock();
    return n;
}

GCTXSIM_API int gctxsim_on_call(const char *symbol, void (*fn)(void *arg), void *arg)
{
    int sym = symbol_index(symbol);
    if (fn && sym < 0)
        return -1;
    sim_lock();
    hook = (struct sim_hook){fn ? sym : -1, fn, arg};
    sim_unlock();
    return 0;
}

GCTXSIM_API void gctxsim_fail_after(const char *symbol, int n, int code)
{
    int sym = symbol_index(symbol);
    sim_lock();
    sim_configure(); /* so that loading the environment later cannot drop this fault */
    if (n == 0)
        faults_clear();
    else if (sym >= 0 && n > 0)
        fault_add(sym, calls[sym] + n, code);
    sim_unlock();
}

GCTXSIM_API void gctxsim_sticky_fault(int code)
{
    sim_lock();
    sim_configure();
    sticky = gcu_result_is_sticky(code) ? code : GCU_ERROR_ILLEGAL_ADDRESS;
    sim_unlock();
}
