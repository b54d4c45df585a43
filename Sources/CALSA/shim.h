#ifndef SOMNI_CALSA_SHIM_H
#define SOMNI_CALSA_SHIM_H
#include <alsa/asoundlib.h>

/* alsa-lib prints every refused setting to stderr. Somni asks for two channels first and falls
   back to one, so a mono-only microphone would leave a scary line on the terminal for a choice
   that went as planned; the handler is swapped out around that one attempt. Swift cannot write
   a variadic C callback, hence these two helpers. */
static void somni_alsa_ignore_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void somni_alsa_quiet_errors(int quiet) {
    snd_lib_error_set_handler(quiet ? somni_alsa_ignore_error : NULL);
}
#endif
