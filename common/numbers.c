/* Numbers read from text and written as text (numbers.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "numbers.h"

int greenctx_parse_int(const char *text, int min, int max, int *value)
{
    if (!text || !*text)
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end != '\0' || v < min || v > max)
        return -1;
    *value = (int)v;
    return 0;
}

const char *greenctx_format_driver_version(int version, char *buf, size_t size)
{
    snprintf(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
    return buf;
}
