/* greenctx ps: each GPU's live claims, free SMs, MPS and recent events, from the registry. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claim_text.h"
#include "nvml.h"
#include "tool.h"

#define MAX_EVENTS 64

/* Under MPS every client sees its own SMs numbered from 0: a physical id here would be wrong. */
static const char sm_ids_note[] =
    "physical SM ids are not shown: under MPS %smid is renumbered per client, so no process "
    "can know another's; the claims' granules are disjoint";

const char *const greenctx_ps_usage[] = {
    "usage: greenctx ps [--device N] [--json]\n"
    "\n"
    "The tenants of each GPU: every SM claim (greenctx run, gctx_claim_acquire) with its\n"
    "holder's pid, user, command, label, SMs, granules and since when; the free SMs;\n"
    "whether an MPS daemon answers (tenants run side by side only under MPS); the\n"
    "registry's recent events (a holder that died holding SMs, a fault it reported).\n"
    "A guarded claim (--class of greenctx run) gets a line: a latency tenant's target,\n"
    "p99 step and pressure (step over target); what the guard holds a best-effort one\n"
    "to and why (steps, power, hbm).\n"
    "A claim whose holder ended is removed, never shown. The runtime directory is\n"
    "$GREENCTX_RUNTIME_DIR, else /var/tmp/greenctx-UID.\n"
    "Where NVML (libnvidia-ml.so.1) loads, the GPU's compute processes too, any\n"
    "user's, with their memory. Without a CUDA driver (a login node) the claims are\n"
    "read from the registry alone and each GPU is named by its UUID (--device UUID).\n"
    "--json: one document, its shape in docs/tenants.md.\n",
    NULL};

/* The GPU's compute processes as NVML sees them; without NVML the list is unknown (only --json
 * says why). */
typedef struct ps_processes {
    int known;      /* 0: NVML is absent or failed, why[] says why */
    char why[256];
    nvml_process *list;
    unsigned count;
} ps_processes;

typedef struct device_listing {
    int device; /* -1: listed without the driver, named by uuid alone */
    char uuid[GCTX_UUID_SIZE];
    ps_processes processes;
    gctx_claim_usage usage;
    gctx_claim_info *claims;
    unsigned nb_claims;
    gctx_claim_event events[MAX_EVENTS];
    unsigned nb_events;
    unsigned claimable; /* the largest count a claim gets of the free SMs now (0: none) */
} device_listing;

/* What ps adds to a process NVML lists. */
typedef struct ps_process {
    char user[64];     /* "?" when /proc does not say (another PID namespace) */
    char command[160];
    int holds_claim;   /* one of the claims listed beside it is this process's */
} ps_process;

/* Who runs pid and with what command line, from /proc ("?" where it does not say). */
static void describe(const device_listing *l, int pid, ps_process *p)
{
    char path[64];
    struct stat st;
    struct passwd pw, *found = NULL;
    char buf[1024];
    p->holds_claim = 0;
    for (unsigned c = 0; c < l->nb_claims; c++)
        p->holds_claim |= l->claims[c].pid == pid;
    snprintf(p->user, sizeof p->user, "?");
    snprintf(p->command, sizeof p->command, "?");
    snprintf(path, sizeof path, "/proc/%d", pid);
    if (stat(path, &st) == 0) {
        if (getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &found) == 0 && found)
            snprintf(p->user, sizeof p->user, "%s", found->pw_name);
        else
            snprintf(p->user, sizeof p->user, "%u", (unsigned)st.st_uid);
    }
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    /* The arguments are NUL-separated; control characters are not shown as they are. */
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0' || (unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
            buf[i] = i == n - 1 ? '\0' : ' ';
    buf[n] = '\0';
    snprintf(p->command, sizeof p->command, "%.*s", (int)sizeof p->command - 1, buf);
}

/* "  compute processes (NVML): ..." and one line each; nothing when unknown. */
static void ps_processes_print(const device_listing *l)
{
    const ps_processes *p = &l->processes;
    if (!p->known)
        return;
    if (!p->count) {
        printf("  compute processes (NVML): none\n");
        return;
    }
    printf("  compute processes (NVML):\n  %-8s %-10s %10s  %-5s %s\n", "PID", "USER", "MEMORY",
           "CLAIM", "COMMAND");
    for (unsigned i = 0; i < p->count; i++) {
        char memory[32] = "n/a";
        const nvml_process *q = &p->list[i];
        ps_process d;
        describe(l, q->pid, &d);
        if (q->memory_bytes != ~0ULL)
            snprintf(memory, sizeof memory, "%llu MiB", q->memory_bytes >> 20);
        printf("  %-8d %-10s %10s  %-5s %s\n", q->pid, d.user, memory, d.holds_claim ? "yes" : "no",
               d.command);
    }
}

/* "processes" (or null) and "processes_note" (why they are unknown, or null). */
static void ps_processes_json(json_writer *w, const device_listing *l)
{
    const ps_processes *p = &l->processes;
    if (!p->known) {
        json_null(w, "processes");
        json_string(w, "processes_note", p->why);
        return;
    }
    json_array(w, "processes");
    for (unsigned i = 0; i < p->count; i++) {
        const nvml_process *q = &p->list[i];
        ps_process d;
        describe(l, q->pid, &d);
        json_object(w, NULL);
        json_int(w, "pid", q->pid);
        json_string(w, "user", d.user);
        json_string(w, "command", d.command);
        if (q->memory_bytes == ~0ULL)
            json_null(w, "memory_bytes");
        else
            json_uint(w, "memory_bytes", q->memory_bytes);
        json_bool(w, "holds_claim", d.holds_claim);
        json_close(w);
    }
    json_close(w);
    json_null(w, "processes_note");
}

static const char *event_name(gctx_claim_event_kind kind)
{
    return kind == GCTX_CLAIM_EVENT_DIED ? "died" : kind == GCTX_CLAIM_EVENT_FAULT ? "fault"
                                                                                  : "released";
}

/* Every claim, asked again with more room while the registry grows; device -1: by uuid alone. */
static gctx_status list_device(int device, const char *uuid, device_listing *l)
{
    memset(l, 0, sizeof *l);
    l->device = device;
    if (uuid)
        snprintf(l->uuid, sizeof l->uuid, "%s", uuid);
    else if (gctx_device_uuid(device, l->uuid, sizeof l->uuid) != GCTX_SUCCESS)
        l->uuid[0] = '\0';
    l->usage = (gctx_claim_usage)GCTX_CLAIM_USAGE_INIT;
    unsigned count = 0, capacity = 0;
    gctx_status s;
    for (;;) {
        s = uuid ? gctx_claim_list_uuid(uuid, NULL, l->claims, capacity, &count, &l->usage)
                 : gctx_claim_list(device, NULL, l->claims, capacity, &count, &l->usage);
        if (s != GCTX_SUCCESS || count <= capacity)
            break;
        capacity = count + 8;
        gctx_claim_info *more = realloc(l->claims, capacity * sizeof *more);
        if (!more)
            return GCTX_ERROR_OUT_OF_MEMORY;
        l->claims = more;
        for (unsigned i = 0; i < capacity; i++)
            l->claims[i] = (gctx_claim_info)GCTX_CLAIM_INFO_INIT;
    }
    l->nb_claims = count < capacity ? count : capacity;
    if (s != GCTX_SUCCESS)
        return s;
    /* Any set of free granules makes one context: the free SMs rounded down to a count. */
    char free_text[16];
    snprintf(free_text, sizeof free_text, "%u", l->usage.free_sms);
    if (uuid || !l->usage.free_sms ||
        gctx_claim_count(device, free_text, GCTX_ROUND_DOWN, &l->claimable, NULL) != GCTX_SUCCESS ||
        l->claimable > l->usage.free_sms)
        l->claimable = 0;
    for (unsigned i = 0; i < MAX_EVENTS; i++)
        l->events[i] = (gctx_claim_event)GCTX_CLAIM_EVENT_INIT;
    s = uuid ? gctx_claim_events_uuid(uuid, NULL, l->events, MAX_EVENTS, &l->nb_events)
             : gctx_claim_events(device, NULL, l->events, MAX_EVENTS, &l->nb_events);
    if (l->nb_events > MAX_EVENTS)
        l->nb_events = MAX_EVENTS;
    return s;
}

/* A time as nanoseconds (KEY_ns) and as local time (KEY). */
static void json_time(json_writer *w, const char *key, long long ns)
{
    char when[32], key_ns[32];
    snprintf(key_ns, sizeof key_ns, "%s_ns", key);
    json_int(w, key_ns, ns);
    json_string(w, key, text_local_time(ns, when, sizeof when));
}

/* A latency tenant's step over its target (0: no step or target known). */
static double pressure(const gctx_claim_info *c)
{
    double target = c->target_ms > 0 ? c->target_ms : c->alone_ms * c->target_factor;
    return c->step_ms > 0 && target > 0 ? c->step_ms / target : 0;
}

/* The guard's view of a claim: null for an unguarded one. */
static void json_tenant(json_writer *w, const gctx_claim_info *c)
{
    if (c->tenant_class == GCTX_TENANT_UNGUARDED) {
        json_null(w, "tenant");
        return;
    }
    json_object(w, "tenant");
    json_string(w, "class", c->tenant_class == GCTX_TENANT_LATENCY ? "latency" : "best-effort");
    if (c->tenant_class == GCTX_TENANT_LATENCY) {
        json_fixed(w, "target_ms", c->target_ms, 3);
        json_fixed(w, "target_factor", c->target_factor, 3);
        json_fixed(w, "step_ms", c->step_ms, 3);
        json_fixed(w, "alone_ms", c->alone_ms, 3);
        json_fixed(w, "pressure", pressure(c), 3);
    } else {
        json_uint(w, "guard_level", c->guard_level);
        json_string(w, "guard_reason", c->guard_reason[0] ? c->guard_reason : NULL);
        json_uint(w, "allowed_sms", c->guard_sms);
        json_uint(w, "max_outstanding", c->guard_outstanding);
        json_bool(w, "paced", c->guard_paced);
        json_uint(w, "duty_permille", c->guard_duty_permille);
        json_fixed(w, "held_ms", c->guard_held_ms, 1);
    }
    json_close(w);
}

/* Control characters (C0, DEL, C1) as \xNN: labels are other users', and terminals act on them. */
static const char *visible(const char *text, char *out, size_t size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && n + 5 < size; p++) {
        int c1 = *p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
        unsigned c = c1 ? *++p : *p;
        if (c < 0x20 || c == 0x7f || c1 || (c >= 0x80 && c <= 0x9f))
            n += (size_t)snprintf(out + n, size - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
        /* the rest of a multi-byte character: its continuation bytes are not C1 */
        for (int more = c >= 0xc0 ? (c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1) : 0;
             more && (p[1] & 0xc0) == 0x80 && n + 1 < size; more--)
            out[n++] = (char)*++p;
    }
    out[n] = '\0';
    return out;
}

/* One line under the claim's row: its class and what the guard sees or does. */
static void print_tenant(const gctx_claim_info *c)
{
    char reason[sizeof c->guard_reason * 5];
    if (c->tenant_class == GCTX_TENANT_LATENCY) {
        printf("           latency, target ");
        if (c->target_ms > 0)
            printf("%.2f ms", c->target_ms);
        else
            printf("%.2fx alone", c->target_factor);
        if (c->step_ms > 0)
            printf(": p99 step %.2f ms (alone %.2f), pressure %.2f", c->step_ms, c->alone_ms,
                   pressure(c));
        else
            printf(": no step reported yet");
    } else if (c->tenant_class == GCTX_TENANT_BEST_EFFORT) {
        printf("           best-effort%s: ", c->guard_paced ? ", paced" : "");
        if (c->guard_level && c->guard_paced)
            printf("held to %u launch%s in flight and %.0f%% of the time", c->guard_outstanding,
                   c->guard_outstanding == 1 ? "" : "es", c->guard_duty_permille / 10.0);
        else if (c->guard_level)
            printf("held to %u SMs", c->guard_sms);
        else
            printf("nothing held back");
        if (c->guard_level)
            printf(" (guard level %u, %s)", c->guard_level,
                   visible(c->guard_reason, reason, sizeof reason));
        if (c->guard_paced)
            printf("; its launches waited %.1f s in all", c->guard_held_ms / 1000);
    } else {
        return;
    }
    putchar('\n');
}

static void json_claim(json_writer *w, const gctx_claim_info *c)
{
    json_object(w, NULL);
    json_int(w, "pid", c->pid);
    json_uint(w, "uid", c->uid);
    json_string(w, "user", c->user);
    json_string(w, "command", c->command);
    json_string(w, "label", c->label[0] ? c->label : NULL);
    json_uint(w, "sm_count", c->sm_count);
    json_array(w, "granules");
    for (unsigned g = 0; g < c->nb_granules && g < GCTX_CLAIM_MAX_GRANULES; g++)
        json_uint(w, NULL, c->granules[g]);
    json_close(w);
    json_time(w, "since", c->since_ns);
    json_fixed(w, "age_s", text_age_seconds(c->since_ns), 3);
    json_bool(w, "mps", c->mps);
    json_bool(w, "self", c->self);
    json_null(w, "sm_ids");
    json_tenant(w, c);
    json_close(w);
}

static void json_device(json_writer *w, const device_listing *l)
{
    const gctx_claim_usage *u = &l->usage;
    json_object(w, NULL);
    if (l->device >= 0)
        json_int(w, "device", l->device);
    else
        json_null(w, "device");
    json_string(w, "uuid", l->uuid[0] ? l->uuid : NULL);
    json_string(w, "registry", u->path);
    json_uint(w, "sm_count", u->sm_count);
    json_uint(w, "free_sms", u->free_sms);
    json_uint(w, "claimable_sms", l->claimable);
    json_array(w, "granules");
    for (unsigned g = 0; g < u->nb_granules && g < GCTX_CLAIM_MAX_GRANULES; g++) {
        json_object(w, NULL);
        json_uint(w, "index", g);
        json_uint(w, "sm_count", u->granule_sms[g]);
        json_bool(w, "free", u->granule_free[g]);
        json_close(w);
    }
    json_close(w);
    json_array(w, "claims");
    for (unsigned i = 0; i < l->nb_claims; i++)
        json_claim(w, &l->claims[i]);
    json_close(w);
    json_array(w, "events");
    for (unsigned i = 0; i < l->nb_events; i++) {
        const gctx_claim_event *e = &l->events[i];
        json_object(w, NULL);
        json_string(w, "kind", event_name(e->kind));
        json_time(w, "time", e->time_ns);
        json_int(w, "pid", e->pid);
        json_string(w, "command", e->command);
        json_uint(w, "sm_count", e->sm_count);
        if (e->kind == GCTX_CLAIM_EVENT_FAULT)
            json_int(w, "cuda_result", e->cuda_result);
        else
            json_null(w, "cuda_result");
        json_close(w);
    }
    json_close(w);
    ps_processes_json(w, l);
    json_close(w);
}

static void print_json(const gctx_mps_info *mps, const device_listing *ls, int n, int driver)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.ps/1");
    json_bool(&w, "driver", driver);
    json_object(&w, "mps");
    json_bool(&w, "daemon_running", mps->daemon_running);
    json_string(&w, "pipe_dir", mps->pipe_dir);
    json_int(&w, "active_thread_percentage", mps->active_thread_percentage);
    json_string(&w, "pinned_mem_limit", mps->pinned_mem_limit[0] ? mps->pinned_mem_limit : NULL);
    json_close(&w);
    json_string(&w, "sm_ids_note", sm_ids_note);
    json_array(&w, "devices");
    for (int i = 0; i < n; i++)
        json_device(&w, &ls[i]);
    json_end(&w);
}

static void print_device_text(const device_listing *l)
{
    const gctx_claim_usage *u = &l->usage;
    char ranges[512], when[32], age[32];
    char now[96] = "";
    if (l->claimable)
        snprintf(now, sizeof now, "; --sms %u can be claimed%s", l->claimable,
                 l->claimable < u->free_sms ? ", rest takes them all" : "");
    if (l->device >= 0)
        printf("device %d", l->device);
    else
        printf("%s", l->uuid);
    printf(": %u of %u SMs free (granules %s%s), %u claim%s; registry %s\n",
           u->free_sms, u->sm_count,
           text_flagged_ranges(u->granule_free, u->nb_granules, ranges, sizeof ranges), now,
           u->nb_claims, u->nb_claims == 1 ? "" : "s", u->path);
    if (l->nb_claims) {
        printf("  %-8s %-10s %4s %-10s %-19s %7s  %-12s %s\n", "PID", "USER", "SMS", "GRANULES",
               "SINCE", "AGE", "LABEL", "COMMAND");
        for (unsigned i = 0; i < l->nb_claims; i++) {
            const gctx_claim_info *c = &l->claims[i];
            char user[4 * sizeof c->user], label[4 * sizeof c->label],
                command[4 * sizeof c->command];
            printf("  %-8d %-10s %4u %-10s %-19s %7s  %-12s %s%s\n", c->pid,
                   visible(c->user, user, sizeof user), c->sm_count,
                   text_granule_ranges(c->granules, c->nb_granules, ranges, sizeof ranges),
                   text_local_time(c->since_ns, when, sizeof when),
                   text_age(c->since_ns, age, sizeof age),
                   c->label[0] ? visible(c->label, label, sizeof label) : "-",
                   visible(c->command, command, sizeof command), c->self ? " (this process)" : "");
            print_tenant(c);
        }
    }
    for (unsigned i = 0, shown = 0; i < l->nb_events; i++) {
        const gctx_claim_event *e = &l->events[i];
        if (e->kind == GCTX_CLAIM_EVENT_RELEASED)
            continue; /* a release is no event a user needs told */
        if (!shown++)
            printf("  recent events:\n");
        char command[4 * sizeof e->command];
        printf("    %s  %-5s pid %d (%s), %u SMs", text_local_time(e->time_ns, when, sizeof when),
               event_name(e->kind), e->pid, visible(e->command, command, sizeof command),
               e->sm_count);
        if (e->kind == GCTX_CLAIM_EVENT_FAULT)
            printf(": CUDA error %d\n", e->cuda_result);
        else
            printf(": ended without releasing its claim\n");
    }
    ps_processes_print(l);
}

static void print_text(const gctx_mps_info *mps, const device_listing *ls, int n, int driver)
{
    if (!driver)
        printf("no CUDA driver here: the claims are read from the registry alone, each GPU "
               "named by its UUID\n");
    printf("MPS: %s control daemon answers on %s: %s\n", mps->daemon_running ? "a" : "no",
           mps->pipe_dir,
           mps->daemon_running ? "tenants on disjoint claims run side by side (a fatal fault in "
                                 "one client reaches every client)"
                               : "tenants are time-sliced, not run side by side (greenctx mps "
                                 "start)");
    for (int i = 0; i < n; i++)
        print_device_text(&ls[i]);
    printf("(%s)\n", sm_ids_note);
}

/* With the driver every device (or --device's); without it every registry's GPU, by UUID. */
static int list_devices(greenctx_tool_options *opts, int driver, device_listing **ls, int *n)
{
    int count = 0, rc = GREENCTX_EXIT_OK;
    char (*uuids)[GCTX_UUID_SIZE] = NULL;
    gctx_status s = driver ? gctx_device_count(&count)
                           : gctx_claim_registries(NULL, NULL, 0, (unsigned *)&count);
    if (s == GCTX_SUCCESS && !driver && count &&
        !(uuids = calloc((size_t)count, sizeof *uuids)))
        s = GCTX_ERROR_OUT_OF_MEMORY;
    unsigned found = (unsigned)count;
    if (s == GCTX_SUCCESS && uuids)
        s = gctx_claim_registries(NULL, uuids[0], found, &found);
    count = found < (unsigned)count ? (int)found : count;
    if (s == GCTX_SUCCESS && !(*ls = calloc(count > 0 ? (size_t)count : 1, sizeof **ls)))
        s = GCTX_ERROR_OUT_OF_MEMORY;
    if (s != GCTX_SUCCESS)
        rc = greenctx_tool_fail(opts, s);
    else if (driver && opts->device_given && opts->device >= count)
        rc = greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DEVICE",
                                 "there is no device %d: the driver shows %d", opts->device, count);
    else if (!driver && opts->device_given && !opts->device_name)
        rc = greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DRIVER",
                                 "--device %d: without a CUDA driver devices have no numbers; "
                                 "give the GPU's UUID (or its start)",
                                 opts->device);
    *n = 0;
    for (int i = 0; rc == GREENCTX_EXIT_OK && i < count && s == GCTX_SUCCESS; i++) {
        if (driver && opts->device_given && i != opts->device)
            continue;
        if (!driver && opts->device_name &&
            strncasecmp(uuids[i], opts->device_name, strlen(opts->device_name)))
            continue;
        s = list_device(driver ? i : -1, driver ? NULL : uuids[i], &(*ls)[(*n)++]);
    }
    free(uuids);
    return rc == GREENCTX_EXIT_OK && s != GCTX_SUCCESS ? greenctx_tool_fail(opts, s) : rc;
}

/* Beside each GPU's claims, its compute processes where NVML loads. */
static void list_processes(device_listing *ls, int n)
{
    char why[256];
    nvml_lib *nvml = nvml_lib_open(greenctx_driver_simulated(), why, sizeof why);
    for (int i = 0; i < n; i++) {
        ps_processes *p = &ls[i].processes;
        if (!ls[i].uuid[0])
            snprintf(p->why, sizeof p->why, "the driver gives no UUID for this device");
        else if (!nvml)
            snprintf(p->why, sizeof p->why, "%s", why);
        else
            p->known = !nvml_lib_processes(nvml, ls[i].uuid, &p->list, &p->count, p->why,
                                           sizeof p->why);
    }
    nvml_lib_close(nvml);
}

int greenctx_cmd_ps(int argc, char **argv, greenctx_tool_options *opts)
{
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    int id = greenctx_args_next(&args, NULL);
    if (id == GREENCTX_ARG_STOP)
        return args.rc;
    if (id != GREENCTX_ARG_END)
        return greenctx_args_bad(&args, "ps takes no arguments; got '%s'", args.value);
    /* No driver at all (not one that failed): the registry alone. */
    int driver = opts->simulated || gctx_init() != GCTX_ERROR_NO_DRIVER;
    int rc = driver ? greenctx_tool_start(opts) : GREENCTX_EXIT_OK, n = 0;
    device_listing *ls = NULL;
    if (rc == GREENCTX_EXIT_OK)
        rc = list_devices(opts, driver, &ls, &n);
    if (rc != GREENCTX_EXIT_OK) {
        free(ls);
        return rc;
    }
    list_processes(ls, n);
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    gctx_status s = gctx_mps_get_info(&mps);
    if (s != GCTX_SUCCESS)
        rc = greenctx_tool_fail(opts, s);
    else if (opts->json)
        print_json(&mps, ls, n, driver);
    else
        print_text(&mps, ls, n, driver);
    for (int i = 0; i < n; i++) {
        free(ls[i].claims);
        free(ls[i].processes.list);
    }
    free(ls);
    return rc;
}
