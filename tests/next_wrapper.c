/*
 * A library that wraps execve the usual way, as a later LD_PRELOAD entry does (fakechroot,
 * snoopy, ...): under `greenctx run` the preload comes first and exports execve and dlsym,
 * and this library's dlsym(RTLD_NEXT, "execve") must still find the C library's, not itself.
 * Says on stderr that it ran; exits 99 when the lookup found itself (an endless recursion).
 */
#include <dlfcn.h>
#include <unistd.h>

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

__attribute__((visibility("default"))) int execve(const char *path, char *const argv[],
                                               char *const envp[])
{
    static const char ran[] = "next_wrapper: execve\n", itself[] = "next_wrapper: found itself\n";
    static _Thread_local int depth;
    if (depth++) {
        (void)!write(STDERR_FILENO, itself, sizeof itself - 1);
        _exit(99);
    }
    execve_fn next;
    *(void **)&next = dlsym(RTLD_NEXT, "execve");
    (void)!write(STDERR_FILENO, ran, sizeof ran - 1);
    int r = next ? next(path, argv, envp) : -1;
    depth--;
    return r;
}
