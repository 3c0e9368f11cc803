/* Numbers as the tool, the preload, the Slurm plugin and the bench read and write them as text. */
#ifndef GREENCTX_COMMON_NUMBERS_H
#define GREENCTX_COMMON_NUMBERS_H

#include <stddef.h>

/* Parses a whole decimal int in [min, max]; returns 0 on success, -1 otherwise. */
int greenctx_parse_int(const char *text, int min, int max, int *value);

/* "13.0" from 13000, into buf; returns buf. */
const char *greenctx_format_driver_version(int version, char *buf, size_t size);

#endif
