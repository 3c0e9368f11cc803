// include/greenctx.h compiled as C++ (see header_check.c).
#include "header_check.c"
