/* greenctx info --sizes (info_sizes.c). */
#ifndef GREENCTX_TOOL_INFO_SIZES_H
#define GREENCTX_TOOL_INFO_SIZES_H

#include "tool.h"

/* Prints (or writes as one JSON document) every legal partition size of each device and how
 * many such partitions fit. Returns an exit code. */
int tool_info_sizes(const greenctx_tool_options *opts, const gctx_device_info *devices,
                    int nb_devices);

#endif
