/* What the programs a confined process starts get (docs/run.md, "Child processes"). Until it
 * uses CUDA, the variables pass on untouched, so confinement follows the program through
 * wrappers (env, shells, scripts). Under GREENCTX_RUN_INHERIT=0, once it has, environ is
 * replaced by a clean copy and the exec family and posix_spawn, exported here, clean the
 * environment they are given (a copy taken earlier, as Python's os.environ is). Every exec
 * first writes this process's report part: an exec runs no atexit handlers.
 *
 * The exec wrappers may run in a vfork child, which shares its parent's memory: they write
 * only their own stack (the environment they build is a variable-length array there) and call
 * no allocator. Not instrumented by sanitizers for the same reason (preload/CMakeLists.txt). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_preload.h"

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

/* The C library's calls, found once before main: a vfork child must not look them up. */
static struct {
    execve_fn execve, execvpe;
    fexecve_fn fexecve;
    execveat_fn execveat;
    spawn_fn spawn, spawnp;
} real;

__attribute__((constructor)) static void find_real_calls(void)
{
    *(void **)&real.execve = run_real_dlsym(RTLD_NEXT, "execve");
    *(void **)&real.execvpe = run_real_dlsym(RTLD_NEXT, "execvpe");
    *(void **)&real.fexecve = run_real_dlsym(RTLD_NEXT, "fexecve");
    *(void **)&real.execveat = run_real_dlsym(RTLD_NEXT, "execveat"); /* glibc 2.34 */
    *(void **)&real.spawn = run_real_dlsym(RTLD_NEXT, "posix_spawn");
    *(void **)&real.spawnp = run_real_dlsym(RTLD_NEXT, "posix_spawnp");
}

/* Set once this process (or its parent) used CUDA under GREENCTX_RUN_INHERIT=0: this library. */
static atomic_int releasing;
static char self_path[PATH_MAX];
static dev_t self_dev;
static ino_t self_ino;

static int is_self(const char *item, size_t len)
{
    char path[PATH_MAX];
    struct stat st;
    if (len == 0 || len >= sizeof path)
        return 0;
    memcpy(path, item, len);
    path[len] = '\0';
    return strcmp(path, self_path) == 0 ||
           (stat(path, &st) == 0 && st.st_dev == self_dev && st.st_ino == self_ino);
}

/* "LD_PRELOAD=" and `list` less this library (entries split by ':' or ' '); 0 when none left. */
static int kept_preload(const char *list, char *ld)
{
    static const char name[] = "LD_PRELOAD=";
    char *first = ld + sizeof name - 1, *w = first;
    memcpy(ld, name, sizeof name - 1);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ": ");
        if (len && !is_self(p, len)) {
            if (w != first)
                *w++ = ' ';
            memcpy(w, p, len);
            w += len;
        }
        p += len + (p[len] != '\0');
    }
    *w = '\0';
    return w != first;
}

/* The room child_env needs: envp's entries, and its LD_PRELOAD's size (0 and 1: not released). */
static size_t child_env_size(char *const envp[], size_t *ld_size)
{
    size_t n = 0;
    *ld_size = 1;
    if (!atomic_load(&releasing))
        return 0;
    for (; envp && envp[n]; n++)
        if (*ld_size == 1 && strncmp(envp[n], "LD_PRELOAD=", 11) == 0)
            *ld_size = strlen(envp[n]) + 1;
    return n;
}

/* envp as the next program gets it (once released: cleaned), in `list` and `ld`. */
static char *const *child_env(char *const envp[], char **list, char *ld)
{
    if (!atomic_load(&releasing))
        return envp;
    size_t n = 0, prefix = strlen(GREENCTX_RUN_VAR_PREFIX);
    int ld_seen = 0;
    for (char *const *e = envp; e && *e; e++) {
        if (strncmp(*e, GREENCTX_RUN_VAR_PREFIX, prefix) == 0)
            continue;
        if (strncmp(*e, "LD_PRELOAD=", 11) == 0) {
            /* The loader reads the first; a later one is dropped rather than left to it. */
            if (!ld_seen++ && kept_preload(*e + 11, ld))
                list[n++] = ld;
            continue;
        }
        list[n++] = *e;
    }
    list[n] = NULL;
    return list;
}

/* Declares `name`, envp as the next program gets it, on the caller's stack. */
#define CHILD_ENV(name, envp)                                                                      \
    size_t name##_ld, name##_n = child_env_size(envp, &name##_ld);                                 \
    char *name##_list[name##_n + 1];                                                               \
    char name##_buf[name##_ld];                                                                    \
    char *const *name = child_env(envp, name##_list, name##_buf)

void run_release_children(void)
{
    Dl_info info;
    struct stat st;
    if (dladdr((void *)run_release_children, &info) && info.dli_fname &&
        strlen(info.dli_fname) < sizeof self_path) {
        strcpy(self_path, info.dli_fname);
        if (stat(self_path, &st) == 0) {
            self_dev = st.st_dev;
            self_ino = st.st_ino;
        }
    }
    atomic_store(&releasing, 1);
    size_t ld_size, n = child_env_size(environ, &ld_size);
    char **list = malloc((n + 1) * sizeof *list), *ld = malloc(ld_size);
    if (!list || !ld)
        run_die("out of memory while releasing the program's children (%s=0)",
                GREENCTX_RUN_INHERIT);
    /* Not setenv/unsetenv: a program may export its own (bash does). The old array may be
     * read by another thread: it is left as it is. */
    environ = (char **)child_env(environ, list, ld);
    int ld_kept = 0;
    for (char **e = environ; *e; e++)
        ld_kept |= *e == ld;
    if (!ld_kept)
        free(ld);
}

/* 1 while d->joined.claim_fd is still the claim file's descriptor. */
static int claim_fd_intact(const run_device *d)
{
    const run_member *m = &d->joined;
    struct stat st;
    return m->claim_fd >= 0 && fstat(m->claim_fd, &st) == 0 && st.st_dev == m->claim_dev &&
           st.st_ino == m->claim_ino;
}

/* Across an exec the claims go with the program, which joins them with the same token: their
 * descriptors are made inheritable for the exec (close-on-exec again if it fails), or a last
 * holder's exec would give the claim up under the program it becomes. */
static void hand_claims_on(int on)
{
    if (atomic_load(&releasing))
        return;
    for (unsigned i = 0; i < run.nb_devices; i++)
        if (run.devices[i].joined.claim && claim_fd_intact(&run.devices[i]))
            fcntl(run.devices[i].joined.claim_fd, F_SETFD, on ? 0 : FD_CLOEXEC);
}

/* Calls the C library's fn(...) with the claims handed on; `missing`: its answer when the C
 * library has no fn. An exec writes the report part first: it runs no atexit handlers. */
#define WITH_CLAIMS(missing, fn, ...)                                                             \
    do {                                                                                           \
        if (!(fn))                                                                                 \
            return missing;                                                                        \
        hand_claims_on(1);                                                                         \
        int rc_ = (fn)(__VA_ARGS__), err_ = errno;                                                 \
        hand_claims_on(0);                                                                         \
        errno = err_;                                                                              \
        return rc_;                                                                                \
    } while (0)
#define EXEC_WITH_CLAIMS(fn, ...)                                                                 \
    run_report_write_part();                                                                       \
    WITH_CLAIMS((errno = ENOSYS, -1), fn, __VA_ARGS__)

/* execve or execvpe (fn) of the C library. */
static int exec_env(execve_fn fn, const char *file, char *const argv[], char *const envp[])
{
    CHILD_ENV(env, envp);
    EXEC_WITH_CLAIMS(fn, file, argv, env);
}

RUN_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_env(real.execve, path, argv, envp);
}

RUN_EXPORT int execv(const char *path, char *const argv[])
{
    return exec_env(real.execve, path, argv, environ);
}

RUN_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_env(real.execvpe, file, argv, envp);
}

RUN_EXPORT int execvp(const char *file, char *const argv[])
{
    return exec_env(real.execvpe, file, argv, environ);
}

RUN_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    CHILD_ENV(env, envp);
    EXEC_WITH_CLAIMS(real.fexecve, fd, argv, env);
}

RUN_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                        int flags)
{
    CHILD_ENV(env, envp);
    EXEC_WITH_CLAIMS(real.execveat, dirfd, path, argv, env, flags);
}

/* posix_spawn replaces nothing: no report part. Its child gets the claims' descriptors as an
 * exec does, so it holds the claim itself. */
RUN_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    CHILD_ENV(env, envp);
    WITH_CLAIMS(ENOSYS, real.spawn, pid, path, actions, attr, argv, env);
}

RUN_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    CHILD_ENV(env, envp);
    WITH_CLAIMS(ENOSYS, real.spawnp, pid, file, actions, attr, argv, env);
}

/* execl, execlp, execle: the arguments after `arg` up to the NULL. */
static size_t nb_args(va_list args)
{
    size_t n = 0;
    while (va_arg(args, const char *))
        n++;
    return n;
}

/* argv: `arg` and the rest up to the NULL (room for nb_args + 2); `args` is left after it. */
static void take_args(char **argv, const char *arg, va_list *args)
{
    size_t n = 0;
    argv[n++] = (char *)arg;
    while ((argv[n] = va_arg(*args, char *)))
        n++;
}

/* Declares argv from the variadic arguments after `arg` (the caller va_ends `args`). */
#define LIST_ARGV(argv, arg, args)                                                                 \
    va_list args, args##_count;                                                                    \
    va_start(args, arg);                                                                           \
    va_copy(args##_count, args);                                                                   \
    size_t argv##_n = nb_args(args##_count);                                                       \
    va_end(args##_count);                                                                          \
    char *argv[argv##_n + 2];                                                                      \
    take_args(argv, arg, &args)

RUN_EXPORT int execl(const char *path, const char *arg, ...)
{
    LIST_ARGV(argv, arg, args);
    va_end(args);
    return exec_env(real.execve, path, argv, environ);
}

RUN_EXPORT int execlp(const char *file, const char *arg, ...)
{
    LIST_ARGV(argv, arg, args);
    va_end(args);
    return exec_env(real.execvpe, file, argv, environ);
}

RUN_EXPORT int execle(const char *path, const char *arg, ...)
{
    LIST_ARGV(argv, arg, args);
    char *const *envp = va_arg(args, char *const *);
    va_end(args);
    return exec_env(real.execve, path, argv, envp);
}
