#ifndef SOMNI_CALSA_SHIM_H
#define SOMNI_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
