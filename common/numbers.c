/* Numbers read from text (numbers.h). */
#include <errno.h>
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
