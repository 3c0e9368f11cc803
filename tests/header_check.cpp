// The public headers compiled as C++ (see header_check.c).
#include "header_check.c"
