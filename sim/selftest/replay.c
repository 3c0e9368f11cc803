/* Replays a file of measured lines: each line is run on the simulator and compared as text. */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

/* Real pointers differ from run to run; the probes' only hex numbers are pointers. */
static void normalise(const char *in, char *out)
{
    while (*in) {
        if (in[0] == '0' && in[1] == 'x') {
            out += sprintf(out, "<ptr>");
            for (in += 2; strchr("0123456789abcdef", *in) && *in; in++)
                ;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
}

void replay(const char *dir, const char *file, int (*handler)(const char *, char *))
{
    char path[1024], line[4096], want[4096], got[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        check(0, "cannot open %s", path);
        return;
    }
    int lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        got[0] = '\0';
        if (!handler(line, got)) {
            check(0, "%s:%d: no replay for: %s", file, lineno, line);
            continue;
        }
        normalise(line, want);
        check(strcmp(want, got) == 0, "%s:%d:\n  measured:  %s\n  simulated: %s", file, lineno,
              want, got);
    }
    fclose(fp);
}
