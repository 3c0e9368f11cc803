/* Files installed with the tool (the simulated driver, the preload of `greenctx run`). */
#ifndef GREENCTX_TOOL_COMPANION_H
#define GREENCTX_TOOL_COMPANION_H

/* The path of a file that ships with the tool: $env_var when set (as given, and used even if
 * it turns out wrong, so that errors name it), else `file` next to the executable, at
 * `install_relpath` from the executable's directory (NULL or "": none), in ../lib/greenctx/,
 * or at `build_path` (NULL or "": none). NULL when none is readable. Static storage, or the environment's. */
const char *tool_find_companion(const char *file, const char *env_var, const char *install_relpath,
                                const char *build_path);

#endif
