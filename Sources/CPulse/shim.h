#ifndef SOMNI_CPULSE_SHIM_H
#define SOMNI_CPULSE_SHIM_H
#include <pulse/pulseaudio.h>
#include <pulse/thread-mainloop.h>
#endif
