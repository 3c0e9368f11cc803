/* Numbers as the tool, the preload and the Slurm plugin read them from text. */
#ifndef GREENCTX_COMMON_NUMBERS_H
#define GREENCTX_COMMON_NUMBERS_H

/* Parses a whole decimal int in [min, max]; returns 0 on success, -1 otherwise. */
int greenctx_parse_int(const char *text, int min, int max, int *value);

#endif
