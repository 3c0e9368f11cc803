/* How claims are written for people: run's banner and refusals, ps, the Slurm plugin. */
#ifndef GREENCTX_COMMON_CLAIM_TEXT_H
#define GREENCTX_COMMON_CLAIM_TEXT_H

#include <stddef.h>

/* "0-7", "0-3,8,10-11" (sorted), "none" for no granule; into buf, returned. */
const char *text_granule_ranges(const unsigned short *granules, unsigned count, char *buf,
                                size_t size);
/* The granules whose `flags[i]` is nonzero, as ranges (what is free). */
const char *text_flagged_ranges(const unsigned char *flags, unsigned count, char *buf,
                                size_t size);
/* A CLOCK_REALTIME time in ns as local time, "2026-12-01 20:01:02". */
const char *text_local_time(long long ns, char *buf, size_t size);
/* How long ago: "42s", "3m12s", "5h04m", "2d03h". */
const char *text_age(long long since_ns, char *buf, size_t size);
/* Seconds since a CLOCK_REALTIME time in ns. */
double text_age_seconds(long long since_ns);
/* argv joined with spaces, cut to size. */
const char *text_join_words(char **words, char *buf, size_t size);

#endif
