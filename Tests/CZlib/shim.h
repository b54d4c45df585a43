#ifndef SOMNI_CZLIB_SHIM_H
#define SOMNI_CZLIB_SHIM_H
#include <zlib.h>
#endif
