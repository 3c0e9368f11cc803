/* The GPU's compute processes for greenctx ps: NVML's pids and memory, /proc's user and command. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps_processes.h"

/* Who runs pid and with what command line, from /proc ("?" where it does not say). */
static void describe(ps_process *p)
{
    char path[64];
    struct stat st;
    struct passwd pw, *found = NULL;
    char buf[1024];
    snprintf(p->user, sizeof p->user, "?");
    snprintf(p->command, sizeof p->command, "?");
    snprintf(path, sizeof path, "/proc/%d", p->pid);
    if (stat(path, &st) == 0) {
        if (getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &found) == 0 && found)
            snprintf(p->user, sizeof p->user, "%s", found->pw_name);
        else
            snprintf(p->user, sizeof p->user, "%u", (unsigned)st.st_uid);
    }
    snprintf(path, sizeof path, "/proc/%d/cmdline", p->pid);
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

void ps_processes_get(nvml_lib *nvml, const char *nvml_why, const char *uuid,
                      const int *claim_pids, unsigned nb_claim_pids, ps_processes *out)
{
    memset(out, 0, sizeof *out);
    if (!nvml) {
        snprintf(out->why, sizeof out->why, "%s", nvml_why);
        return;
    }
    unsigned count = 0;
    nvml_process *found = NULL;
    if (nvml_lib_processes(nvml, uuid, &found, &count, out->why, sizeof out->why) != 0)
        return;
    out->list = count ? calloc(count, sizeof *out->list) : NULL;
    out->known = !count || out->list;
    if (!out->known)
        snprintf(out->why, sizeof out->why, "out of memory for %u processes", count);
    for (unsigned i = 0; out->list && i < count; i++) {
        ps_process *p = &out->list[i];
        p->pid = found[i].pid;
        p->memory_bytes = found[i].memory_bytes;
        describe(p);
        for (unsigned c = 0; c < nb_claim_pids; c++)
            p->holds_claim |= claim_pids[c] == p->pid;
    }
    out->count = out->list ? count : 0;
    free(found);
}

void ps_processes_free(ps_processes *p)
{
    free(p->list);
    p->list = NULL;
    p->count = 0;
}

void ps_processes_print(const ps_processes *p)
{
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
        const ps_process *q = &p->list[i];
        if (q->memory_bytes != ~0ULL)
            snprintf(memory, sizeof memory, "%llu MiB", q->memory_bytes >> 20);
        printf("  %-8d %-10s %10s  %-5s %s\n", q->pid, q->user, memory,
               q->holds_claim ? "yes" : "no", q->command);
    }
}

void ps_processes_json(json_writer *w, const ps_processes *p)
{
    if (!p->known) {
        json_null(w, "processes");
        json_string(w, "processes_note", p->why);
        return;
    }
    json_array(w, "processes");
    for (unsigned i = 0; i < p->count; i++) {
        const ps_process *q = &p->list[i];
        json_object(w, NULL);
        json_int(w, "pid", q->pid);
        json_string(w, "user", q->user);
        json_string(w, "command", q->command);
        if (q->memory_bytes == ~0ULL)
            json_null(w, "memory_bytes");
        else
            json_uint(w, "memory_bytes", q->memory_bytes);
        json_bool(w, "holds_claim", q->holds_claim);
        json_close(w);
    }
    json_close(w);
    json_null(w, "processes_note");
}
