#ifndef SOMNI_CALSA_SHIM_H
#define SOMNI_CALSA_SHIM_H
#include <alsa/asoundlib.h>

/* alsa-lib prints every refused setting, and every configuration file it cannot find, to
   stderr. Somni asks for two channels first and falls back to one, and says itself why a device
   cannot be opened, so the handler is swapped out while a device opens. Swift cannot write a
   variadic C callback, hence these two helpers. */
static void somni_alsa_ignore_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void somni_alsa_quiet_errors(int quiet) {
    snd_lib_error_set_handler(quiet ? somni_alsa_ignore_error : NULL);
}
#endif
