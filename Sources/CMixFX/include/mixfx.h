/* mixfx.h: the C API of mixfx (libmixfx.so), the audio effects engine.
 *
 *   cc app.c -I PREFIX/include -L PREFIX/lib -lmixfx -Wl,-rpath,PREFIX/lib
 *
 * What it offers: a time-pitch processor (pitch in cents, tempo, formants; planar float
 * blocks), the two-band shelf EQ, and rendering a whole session from a preset to a file, the
 * same bytes `mixfx render` writes. C99; no call aborts on misuse.
 *
 * Errors. Every call returns an int: MIXFX_OK (0) or one of the negative mixfx_status codes.
 * A failing call also leaves a one-line message for the calling thread, read with
 * mixfx_last_error(): it names the argument or setting, the value and what is allowed
 * (`pitch: 3000 is above 2400 (allowed: from -2400 to 2400 cents)`). Calls that succeed
 * leave it as it was (read it only after a failure, as errno). A NULL handle or pointer
 * argument is MIXFX_ERR_NULL; a handle of the wrong kind is MIXFX_ERR_HANDLE. A handle is
 * invalid after its destroy call (using it then is undefined, as with free()).
 *
 * Ranges are the engine's parameter registry's (the same as `mixfx render --help` lists);
 * the error message of an out-of-range value states the range.
 *
 * Threads. Different handles are independent: any thread, any time. On one handle, calls
 * must not overlap, except where a call says "any thread". mixfx_last_error,
 * mixfx_version and mixfx_api_version: any thread. The session render: any thread, any
 * number at once (distinct output files).
 */
#ifndef MIXFX_H
#define MIXFX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API this header describes; mixfx_api_version() returns the library's. A library with
 * the same number takes every call declared here. */
#define MIXFX_API_VERSION 1

/* What a call returns. */
typedef enum mixfx_status {
    MIXFX_OK = 0,
    MIXFX_ERR_NULL = -1,     /* a NULL handle or pointer argument */
    MIXFX_ERR_HANDLE = -2,   /* a handle of another kind (an EQ given to a time-pitch call) */
    MIXFX_ERR_RANGE = -3,    /* a number outside its range (sample rate, channels, a setting) */
    MIXFX_ERR_STATE = -4,    /* not allowed now (an offline setting once processing started) */
    MIXFX_ERR_FULL = -5,     /* the time-pitch input queue cannot take the block: take output first */
    MIXFX_ERR_INVALID = -6,  /* a render refused before it started: a bad preset, an output
                                that may not be written (exists, is an input, unknown
                                extension): `mixfx render`'s exit status 2 */
    MIXFX_ERR_FAILED = -7,   /* a render failed: a track that cannot be read, a write error,
                                disk full, clipping=fail: `mixfx render`'s exit status 1 */
    MIXFX_ERR_INTERNAL = -8  /* a bug or out of memory */
} mixfx_status;

/* The message of the calling thread's last failed call ("" if none). Valid until the thread's
 * next failing call; never NULL. Any thread. */
const char *mixfx_last_error(void);

/* The library's release ("0.1.0"), as `mixfx --version` prints it. Any thread. */
const char *mixfx_version(void);

/* The library's MIXFX_API_VERSION. Any thread. */
int mixfx_api_version(void);

/* ---------------------------------------------------------------------------------------
 * Time-pitch processor: pitch in cents (duration kept), tempo (pitch kept), formants.
 * Planar float blocks: input[c] and output[c] point at channel c's samples (1 or 2 channels).
 *
 * mixfx_timepitch_process queues its input and writes the output frames that are ready.
 *
 * MIXFX_OFFLINE: settings are fixed once processing starts (set them first, or reset).
 *   Without a tempo (tempo 1) every input frame gives one output frame, late by
 *   mixfx_timepitch_latency() frames L; after mixfx_timepitch_end_input the processor
 *   drains L more frames, so feeding a whole signal of n frames gives n + L frames, and
 *   dropping the first L gives exactly what `mixfx render --pitch` writes for it, its level
 *   match included (L counts its 61 ms of look-ahead; 0 cents is a bit-exact pass-through,
 *   L = 0). With a tempo R the latency is 0 and, after
 *   end_input, the output ends at round(n/R) frames, as a `mixfx render --tempo` track.
 *   May allocate when settings change; process allocates nothing.
 * MIXFX_LIVE: settings may change while it runs and are glided to (pitch ~20 ms, tempo
 *   100 ms); the set_* calls are "any thread" (atomics, read once per process call).
 *   The output is late by a fixed latency (the largest look-ahead any live setting needs),
 *   and at tempo 1 each call returns as many frames as it was given. With a tempo (0.25 to
 *   4 live) the output runs faster or slower than the input: the counts differ, and the
 *   caller keeps the queue fed. process, reset and the setters never allocate or lock
 *   (a setter that fails allocates its error message).
 * Input samples that are NaN, infinite or beyond +-1e6 are replaced by 0 (as in the engine):
 *   one such sample would otherwise stay in the shifter's state for good.
 * ------------------------------------------------------------------------------------- */

typedef struct mixfx_timepitch mixfx_timepitch;

typedef enum mixfx_mode {
    MIXFX_OFFLINE = 0,
    MIXFX_LIVE = 1
} mixfx_mode;

/* A processor for sample_rate Hz, channels 1 or 2, blocks of at most max_block_frames
 * frames per process call (1 to 65536), into *out. */
int mixfx_timepitch_create(double sample_rate, int channels, mixfx_mode mode,
                           size_t max_block_frames, mixfx_timepitch **out);

/* Frees it (NULL: nothing happens, MIXFX_OK). */
int mixfx_timepitch_destroy(mixfx_timepitch *tp);

/* Pitch shift in cents (ratio 2^(cents/1200)). Live: any thread. */
int mixfx_timepitch_set_pitch_cents(mixfx_timepitch *tp, double cents);

/* Tempo R: the output lasts 1/R as long (pitch kept). Live: any thread, the live range. */
int mixfx_timepitch_set_tempo(mixfx_timepitch *tp, double tempo);

/* Keep the formants (spectral envelope) of voices: 0 off, 1 on. Live: any thread. */
int mixfx_timepitch_set_formants(mixfx_timepitch *tp, int on);

/* Analysis frames overlapping each output instant (more: smoother, more CPU). Both modes:
 * only before processing starts (or after reset). */
int mixfx_timepitch_set_overlap(mixfx_timepitch *tp, int overlap);

/* Takes input_frames frames from input (may be 0; input may then be NULL) and writes at
 * most output_capacity ready frames to output; *output_frames says how many. Frames ready
 * but not written wait for the next call. MIXFX_ERR_FULL (nothing taken) when the queue
 * cannot hold the input: call again with input_frames 0 to take output. input_frames is
 * at most max_block_frames. */
int mixfx_timepitch_process(mixfx_timepitch *tp, const float *const *input, size_t input_frames,
                            float *const *output, size_t output_capacity, size_t *output_frames);

/* Offline: no more input; process calls (input_frames 0) then drain what is left
 * (*output_frames 0: all written). */
int mixfx_timepitch_end_input(mixfx_timepitch *tp);

/* Frames the output lags the input, for the settings now (offline: changes with the pitch;
 * live: fixed). */
int mixfx_timepitch_latency(const mixfx_timepitch *tp, size_t *frames);

/* Clears the signal, the queue and end_input; settings are kept. */
int mixfx_timepitch_reset(mixfx_timepitch *tp);

/* ---------------------------------------------------------------------------------------
 * Shelf EQ: RBJ low shelf (bass) -> RBJ high shelf (treble) -> gain, in double precision;
 * `mixfx render --bass/--treble/--eq-gain`. The set_* calls are any thread (atomics, read
 * once per process call); a change applies from the next process call with the filter state
 * kept (not smoothed). process and the setters never allocate or lock (a setter that fails
 * allocates its error message). No latency. Input samples that are NaN, infinite or beyond
 * +-1e6 are replaced by 0 in the output.
 * ------------------------------------------------------------------------------------- */

typedef struct mixfx_shelf_eq mixfx_shelf_eq;

/* A flat EQ for sample_rate Hz, channels 1 or 2, into *out. */
int mixfx_shelf_eq_create(double sample_rate, int channels, mixfx_shelf_eq **out);

/* Frees it (NULL: nothing happens, MIXFX_OK). */
int mixfx_shelf_eq_destroy(mixfx_shelf_eq *eq);

/* The low shelf: gain (0 dB: skipped, bit-exact) and corner (below Nyquist). Any thread. */
int mixfx_shelf_eq_set_bass(mixfx_shelf_eq *eq, double gain_db, double corner_hz);

/* The high shelf, as the low. Any thread. */
int mixfx_shelf_eq_set_treble(mixfx_shelf_eq *eq, double gain_db, double corner_hz);

/* The gain after both shelves, dB. Any thread. */
int mixfx_shelf_eq_set_gain(mixfx_shelf_eq *eq, double gain_db);

/* Filters frames frames of input into output (planar; output may be input: in place). */
int mixfx_shelf_eq_process(mixfx_shelf_eq *eq, const float *const *input, float *const *output,
                           size_t frames);

/* Clears the filter state. */
int mixfx_shelf_eq_reset(mixfx_shelf_eq *eq);

/* ---------------------------------------------------------------------------------------
 * Session render: `mixfx render TRACK... --preset PRESET -o OUTPUT [--report REPORT]`, the
 * same code path and the same bytes. preset_json is a preset document (`mixfx preset show
 * NAME` prints one; NULL or "": every track at the defaults). inputs are track_count file
 * paths. The output's extension picks the container; report_path (NULL: none) ends in .json
 * or .html. The file rules are the CLI's: nothing is written unless the call succeeds, an
 * input is never written over, an existing output or report only with overwrite != 0.
 * summary (NULL: not wanted) receives the figures of the file written. Warnings are not
 * returned: those about the preset (an unknown key) are dropped, those about a track (its
 * channel layout assumed, a fade longer than its segment) print on stderr as mixfx's do.
 * Any thread.
 * ------------------------------------------------------------------------------------- */

typedef struct mixfx_render_summary {
    int64_t frames;           /* frames written */
    int32_t sample_rate_hz;
    int32_t channels;
    double peak_dbfs;         /* sample peak of the file (-inf: silent); of the mix before
                                 encoding for the lossy ones (ogg, opus, mp3) */
    int64_t clipped_samples;  /* integer output: clamped; float output: over 0 dBFS */
    double applied_gain_db;   /* the gain that avoided clipping or normalised, 0 if none */
    double elapsed_seconds;
} mixfx_render_summary;

int mixfx_render_preset(const char *preset_json, const char *const *inputs, size_t track_count,
                        const char *output_path, const char *report_path, int overwrite,
                        mixfx_render_summary *summary);

#ifdef __cplusplus
}
#endif

#endif /* MIXFX_H */
