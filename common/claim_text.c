/* Claims as people read them (claim_text.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "claim_text.h"

static void add_range(char *buf, size_t size, unsigned first, unsigned last)
{
    size_t used = strlen(buf);
    if (first == last)
        snprintf(buf + used, size - used, "%s%u", used ? "," : "", first);
    else
        snprintf(buf + used, size - used, "%s%u-%u", used ? "," : "", first, last);
}

const char *text_flagged_ranges(const unsigned char *flags, unsigned count, char *buf,
                                size_t size)
{
    buf[0] = '\0';
    for (unsigned i = 0; i < count;) {
        if (!flags[i]) {
            i++;
            continue;
        }
        unsigned last = i;
        while (last + 1 < count && flags[last + 1])
            last++;
        add_range(buf, size, i, last);
        i = last + 1;
    }
    if (!buf[0])
        snprintf(buf, size, "none");
    return buf;
}

const char *text_granule_ranges(const unsigned short *granules, unsigned count, char *buf,
                                size_t size)
{
    unsigned char flags[1024] = {0}; /* granule indices are below GCTX_CLAIM_MAX_GRANULES */
    unsigned top = 0;
    for (unsigned i = 0; i < count; i++)
        if (granules[i] < sizeof flags) {
            flags[granules[i]] = 1;
            top = granules[i] + 1u > top ? granules[i] + 1u : top;
        }
    return text_flagged_ranges(flags, top, buf, size);
}

const char *text_local_time(long long ns, char *buf, size_t size)
{
    time_t t = (time_t)(ns / 1000000000LL);
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, size, "?");
    return buf;
}

double text_age_seconds(long long since_ns)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double age = (double)now.tv_sec - (double)since_ns / 1e9 + (double)now.tv_nsec / 1e9;
    return age > 0 ? age : 0;
}

const char *text_age(long long since_ns, char *buf, size_t size)
{
    long s = (long)text_age_seconds(since_ns);
    if (s < 60)
        snprintf(buf, size, "%lds", s);
    else if (s < 3600)
        snprintf(buf, size, "%ldm%02lds", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, size, "%ldh%02ldm", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, size, "%ldd%02ldh", s / 86400, s % 86400 / 3600);
    return buf;
}

const char *text_join_words(char **words, char *buf, size_t size)
{
    buf[0] = '\0';
    for (char **w = words; *w; w++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", w == words ? "" : " ", *w);
    }
    return buf;
}
