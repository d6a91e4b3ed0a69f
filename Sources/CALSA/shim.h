#include <alsa/asoundlib.h>

/* ALSA prints its own errors to stderr ("ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM
   x") before mixfx reports them with what is allowed. mixfx_alsa_quiet() replaces that printer with
   one that prints nothing: the error codes still reach mixfx. (A C variadic function: Swift cannot
   define one.) */
static inline void mixfx_alsa_print_nothing(const char *file, int line, const char *function, int err,
                                            const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void mixfx_alsa_quiet(void) {
    snd_lib_error_set_handler(mixfx_alsa_print_nothing);
}
