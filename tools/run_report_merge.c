/* greenctx run --report FILE.json: the parts each CUDA process wrote beside FILE, merged into
 * it when the program ends (or which processes are missing). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool.h"

static int bad_report(const run_job *job, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int bad_report(const run_job *job, const char *fmt, ...)
{
    char why[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return greenctx_tool_error(job->opts, GREENCTX_EXIT_USAGE, "usage",
                               "--report '%s': %s; the program was not started",
                               job->options.report, why);
}

int run_report_check(run_job *job)
{
    char dir[PATH_MAX] = ".", real_dir[PATH_MAX];
    const char *path = job->options.report, *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    struct stat st;
    if (!*path)
        return bad_report(job, "give a file name");
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return bad_report(job, "is a directory; give a file name");
    if (slash && (size_t)(slash - path) >= sizeof dir)
        return bad_report(job, "the path is longer than %d bytes", PATH_MAX);
    if (slash == path)
        strcpy(dir, "/");
    else if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!realpath(dir, real_dir))
        return bad_report(job, "its directory %s does not exist (%s)", dir, strerror(errno));
    int n = snprintf(job->report_path, sizeof job->report_path, "%s/%s",
                     strcmp(real_dir, "/") ? real_dir : "", base);
    if (n < 0 || (size_t)n >= sizeof job->report_path)
        return bad_report(job, "the path is longer than %d bytes", PATH_MAX);
    if (stat(job->report_path, &st) == 0 && S_ISDIR(st.st_mode))
        return bad_report(job, "is a directory; give a file name");
    if (access(real_dir, W_OK | X_OK) != 0)
        return bad_report(job, "its directory %s can't be written (%s)", real_dir,
                          strerror(errno));
    if (stat(job->report_path, &st) == 0 && access(job->report_path, W_OK) != 0)
        return bad_report(job, "the file can't be written (%s)", strerror(errno));
    return GREENCTX_EXIT_OK;
}

/* A part's announcement, NAME RUN_PART_STARTED (run_request.h: the names sort by start). */
static int is_started(const struct dirent *e)
{
    size_t len = strlen(e->d_name), suffix = strlen(RUN_PART_STARTED);
    return len > suffix && strcmp(e->d_name + len - suffix, RUN_PART_STARTED) == 0;
}

/* NAME.part: one JSON object the preload wrote; NULL when the process never wrote it. */
static char *read_part(const char *dir, const char *name)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s%s", dir, name, RUN_PART_DONE);
    FILE *f = n > 0 && (size_t)n < sizeof path ? fopen(path, "re") : NULL;
    if (!f)
        return NULL;
    char *text = NULL;
    size_t cap = 0;
    ssize_t got = getdelim(&text, &cap, '\0', f); /* the whole file: JSON holds no NUL */
    fclose(f);
    size_t size = got > 0 ? (size_t)got : 0;
    while (size && (text[size - 1] == '\n' || text[size - 1] == ' '))
        size--;
    if (size < 2 || text[0] != '{' || text[size - 1] != '}') {
        free(text);
        return NULL;
    }
    text[size] = '\0';
    return text;
}

/* The first process's part, with every part in "processes" and the missing ones listed. */
static void write_merged(FILE *f, long pid, const char *text, struct dirent **names, size_t count,
                         char **bodies, size_t *nb_missing)
{
    size_t first = 0;
    while (first < count && !bodies[first])
        first++;
    if (first < count) {
        fprintf(f, "%.*s", (int)strlen(bodies[first]) - 1, bodies[first]);
    } else {
        fprintf(f, "{\"pid\":%ld,\"cuda_used\":false,\"driver_version\":0,\"driver_path\":null,"
                   "\"request\":",
                pid);
        greenctx_json_string(f, text);
        fputs(",\"devices\":[]", f);
    }
    fputs(",\"processes_missing\":[", f);
    *nb_missing = 0;
    for (size_t i = 0; i < count; i++)
        if (!bodies[i]) {
            const char *dash = strchr(names[i]->d_name, '-');
            fprintf(f, "%s%ld", (*nb_missing)++ ? "," : "", dash ? atol(dash + 1) : -1L);
        }
    fputs("],\"processes\":[", f);
    for (size_t i = 0, n = 0; i < count; i++)
        if (bodies[i])
            fprintf(f, "%s%s", n++ ? "," : "", bodies[i]);
    fprintf(f, "],\"complete\":%s}\n", *nb_missing ? "false" : "true");
}

/* Every file in the directory (all the preload's), then the directory. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    char path[PATH_MAX];
    for (struct dirent *e; d && (e = readdir(d));) {
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && n > 0 && (size_t)n < sizeof path)
            unlink(path);
    }
    if (d)
        closedir(d);
    if (rmdir(dir) != 0)
        fprintf(stderr, "greenctx run: the report's directory %s was left: %s\n", dir,
                strerror(errno));
}

/* 0 complete, 1 processes missing, -1 unwritten; via FILE.XXXXXX, renamed: never half written. */
static int merge(const run_job *job, long pid, const char *text)
{
    struct dirent **names;
    int found = scandir(job->report_dir, &names, is_started, alphasort);
    if (found < 0) {
        fprintf(stderr, "greenctx run: the report's directory %s can't be read: %s\n",
                job->report_dir, strerror(errno));
        return -1;
    }
    size_t count = (size_t)found;
    char **bodies = calloc(count + 1, sizeof *bodies);
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof tmp, "%s.XXXXXX", job->report_path);
    int fd = bodies && n > 0 && (size_t)n < sizeof tmp ? mkstemp(tmp) : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    size_t nb_missing = 0;
    int rc = -1;
    if (f) {
        for (size_t i = 0; i < count; i++) {
            names[i]->d_name[strlen(names[i]->d_name) - strlen(RUN_PART_STARTED)] = '\0';
            bodies[i] = read_part(job->report_dir, names[i]->d_name);
        }
        write_merged(f, pid, text, names, count, bodies, &nb_missing);
        if (fclose(f) == 0 && rename(tmp, job->report_path) == 0)
            rc = nb_missing ? 1 : 0;
        else
            unlink(tmp);
    } else if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    if (rc < 0)
        fprintf(stderr, "greenctx run: the report %s could not be written: %s\n", job->report_path,
                strerror(errno));
    else if (rc > 0)
        fprintf(stderr,
                "greenctx run: the report %s is incomplete: %zu process(es) used CUDA but ended "
                "without writing their part (killed, _exit, stopped by the preload, or still "
                "running when the program ended): see its \"processes_missing\"\n",
                job->report_path, nb_missing);
    for (size_t i = 0; i < count; i++) {
        free(names[i]);
        if (bodies)
            free(bodies[i]);
    }
    free(names);
    free(bodies);
    return rc;
}

int run_with_report(run_job *job, run_session *session)
{
    char *dir = job->report_dir;
    const char *slash = strrchr(job->report_path, '/');
    int n = snprintf(dir, sizeof job->report_dir, "%.*s/.greenctx-run-XXXXXX",
                     (int)(slash - job->report_path), job->report_path);
    if (n < 0 || (size_t)n >= sizeof job->report_dir || !mkdtemp(dir)) {
        int err = n < 0 || (size_t)n >= sizeof job->report_dir ? ENAMETOOLONG : errno;
        run_session_release(session);
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_FAILED, "report",
                                   "the report's directory %s could not be made: %s; the program "
                                   "was not started",
                                   dir, strerror(err));
    }
    pid_t child;
    int status = 0, waited = run_child_program(job, session, &child, &status);
    int merged = waited == 0 ? merge(job, (long)child, session->sms) : -1;
    remove_dir(dir);
    /* A program that exited 0 fails when its report is incomplete or could not be written. */
    if (waited != 0 || (merged != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        run_session_release(session);
        return GREENCTX_EXIT_FAILED;
    }
    return run_child_end(session, status);
}
