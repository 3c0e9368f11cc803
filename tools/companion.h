/* Files installed with the tool (the simulated driver, the preload of `greenctx run`). */
#ifndef GREENCTX_TOOL_COMPANION_H
#define GREENCTX_TOOL_COMPANION_H

/* The path of a file that ships with the tool: $env_var when set (as given, and used even if
 * it turns out wrong, so that errors name it), else, from the executable's own directory
 * (/proc/self/exe), `file` beside it, at `install_relpath` (NULL or "": none), in
 * ../lib/greenctx/, or at `build_relpath` (the build tree's layout; NULL or "": none). Never
 * an absolute path compiled in: a copied tool must not load whatever sits there now. NULL when
 * none is readable. Static storage, or the environment's. */
const char *tool_find_companion(const char *file, const char *env_var, const char *install_relpath,
                                const char *build_relpath);

#endif
