/* Exercises every call of mixfx.h, misuse included: each must return its error code with a
 * message, never abort. Built by MixFXCTests with
 *   gcc -std=c99 -Wall -Wextra -Werror -pedantic -I PREFIX/include check.c -L PREFIX/lib -lmixfx -lm
 * against a prefix laid out by scripts/capi-install.sh, and run as
 *   check INPUT.wav OUTDIR
 * (INPUT: a short stereo file to render). Prints "ok" and exits 0 when every check holds.
 * With MIXFX_CHECK_ALLOCATIONS=1 and Tests/alsa/alloccount.c preloaded, it also checks that
 * live processing and the EQ allocate nothing after creation. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mixfx.h>

/* the preloaded allocation counter, if any */
extern uint64_t mixfx_alloc_count(void) __attribute__((weak));

static int failures = 0;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "check.c:%d: ", __LINE__); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

/* The call returned `want` and left a message that contains `needle`. */
static void expect_error(int got, int want, const char *needle, int line) {
    const char *m = mixfx_last_error();
    if (got != want) { failures++; fprintf(stderr, "check.c:%d: returned %d, not %d (%s)\n", line, got, want, m); return; }
    if (m == NULL || strstr(m, needle) == NULL) {
        failures++;
        fprintf(stderr, "check.c:%d: message '%s' does not name '%s'\n", line, m ? m : "(null)", needle);
    }
}
#define EXPECT_ERROR(call, want, needle) expect_error((call), (want), (needle), __LINE__)
#define EXPECT_OK(call) do { int s_ = (call); CHECK(s_ == MIXFX_OK, "%s returned %d: %s", #call, s_, mixfx_last_error()); } while (0)

#define RATE 48000.0
#define BLOCK 512

static void fill_sine(float *x, size_t n, double hz, size_t start) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(0.5 * sin(2 * 3.14159265358979 * hz * (double)(start + i) / RATE));
}

static void check_version(void) {
    CHECK(mixfx_version() != NULL && strlen(mixfx_version()) > 0, "no version");
    CHECK(mixfx_api_version() == MIXFX_API_VERSION, "api version %d, header %d", mixfx_api_version(), MIXFX_API_VERSION);
    CHECK(mixfx_last_error() != NULL, "mixfx_last_error() is NULL");
}

static void check_timepitch_misuse(void) {
    mixfx_timepitch *tp = NULL;
    float buf[BLOCK];
    float *out[1] = { buf };
    const float *in[1] = { buf };
    size_t n = 0;
    EXPECT_ERROR(mixfx_timepitch_create(RATE, 2, MIXFX_OFFLINE, BLOCK, NULL), MIXFX_ERR_NULL, "out");
    EXPECT_ERROR(mixfx_timepitch_create(0, 2, MIXFX_OFFLINE, BLOCK, &tp), MIXFX_ERR_RANGE, "sample_rate");
    CHECK(tp == NULL, "a failed create left a handle");
    EXPECT_ERROR(mixfx_timepitch_create(NAN, 2, MIXFX_OFFLINE, BLOCK, &tp), MIXFX_ERR_RANGE, "sample_rate");
    EXPECT_ERROR(mixfx_timepitch_create(1e9, 2, MIXFX_OFFLINE, BLOCK, &tp), MIXFX_ERR_RANGE, "384000");
    EXPECT_ERROR(mixfx_timepitch_create(RATE, 3, MIXFX_OFFLINE, BLOCK, &tp), MIXFX_ERR_RANGE, "channels");
    EXPECT_ERROR(mixfx_timepitch_create(RATE, 0, MIXFX_OFFLINE, BLOCK, &tp), MIXFX_ERR_RANGE, "channels");
    EXPECT_ERROR(mixfx_timepitch_create(RATE, 1, (mixfx_mode)7, BLOCK, &tp), MIXFX_ERR_RANGE, "mode");
    EXPECT_ERROR(mixfx_timepitch_create(RATE, 1, MIXFX_OFFLINE, 0, &tp), MIXFX_ERR_RANGE, "max_block_frames");
    EXPECT_ERROR(mixfx_timepitch_create(RATE, 1, MIXFX_OFFLINE, (size_t)-1, &tp), MIXFX_ERR_RANGE, "max_block_frames");
    /* a NULL handle, every call */
    EXPECT_ERROR(mixfx_timepitch_set_pitch_cents(NULL, 100), MIXFX_ERR_NULL, "tp");
    EXPECT_ERROR(mixfx_timepitch_set_tempo(NULL, 1), MIXFX_ERR_NULL, "tp");
    EXPECT_ERROR(mixfx_timepitch_set_formants(NULL, 1), MIXFX_ERR_NULL, "tp");
    EXPECT_ERROR(mixfx_timepitch_set_overlap(NULL, 8), MIXFX_ERR_NULL, "tp");
    EXPECT_ERROR(mixfx_timepitch_process(NULL, in, 1, out, 1, &n), MIXFX_ERR_NULL, "tp");
    EXPECT_ERROR(mixfx_timepitch_end_input(NULL), MIXFX_ERR_NULL, "tp");
    EXPECT_ERROR(mixfx_timepitch_latency(NULL, &n), MIXFX_ERR_NULL, "tp");
    EXPECT_ERROR(mixfx_timepitch_reset(NULL), MIXFX_ERR_NULL, "tp");
    EXPECT_OK(mixfx_timepitch_destroy(NULL));

    EXPECT_OK(mixfx_timepitch_create(RATE, 1, MIXFX_OFFLINE, BLOCK, &tp));
    CHECK(tp != NULL, "no handle");
    EXPECT_ERROR(mixfx_timepitch_set_pitch_cents(tp, 3000), MIXFX_ERR_RANGE, "2400");
    EXPECT_ERROR(mixfx_timepitch_set_pitch_cents(tp, NAN), MIXFX_ERR_RANGE, "nan");
    EXPECT_ERROR(mixfx_timepitch_set_tempo(tp, 0), MIXFX_ERR_RANGE, "tempo");
    EXPECT_ERROR(mixfx_timepitch_set_tempo(tp, 100), MIXFX_ERR_RANGE, "32");
    EXPECT_ERROR(mixfx_timepitch_set_formants(tp, 2), MIXFX_ERR_RANGE, "on");
    EXPECT_ERROR(mixfx_timepitch_set_overlap(tp, 2), MIXFX_ERR_RANGE, "overlap");
    EXPECT_ERROR(mixfx_timepitch_latency(tp, NULL), MIXFX_ERR_NULL, "frames");
    EXPECT_ERROR(mixfx_timepitch_process(tp, in, BLOCK + 1, out, BLOCK, &n), MIXFX_ERR_RANGE, "max_block_frames");
    EXPECT_ERROR(mixfx_timepitch_process(tp, NULL, 1, out, 1, &n), MIXFX_ERR_NULL, "input");
    EXPECT_ERROR(mixfx_timepitch_process(tp, in, 1, NULL, 1, &n), MIXFX_ERR_NULL, "output");
    EXPECT_ERROR(mixfx_timepitch_process(tp, in, 1, out, 1, NULL), MIXFX_ERR_NULL, "output_frames");
    /* an EQ is not a time-pitch processor */
    mixfx_shelf_eq *eq = NULL;
    EXPECT_OK(mixfx_shelf_eq_create(RATE, 1, &eq));
    EXPECT_ERROR(mixfx_timepitch_set_pitch_cents((mixfx_timepitch *)(void *)eq, 100), MIXFX_ERR_HANDLE, "tp");
    EXPECT_ERROR(mixfx_shelf_eq_set_gain((mixfx_shelf_eq *)(void *)tp, 1), MIXFX_ERR_HANDLE, "eq");
    EXPECT_OK(mixfx_shelf_eq_destroy(eq));
    /* offline settings are fixed once processing starts */
    EXPECT_OK(mixfx_timepitch_set_pitch_cents(tp, 300));
    fill_sine(buf, BLOCK, 440, 0);
    EXPECT_OK(mixfx_timepitch_process(tp, in, BLOCK, out, BLOCK, &n));
    EXPECT_ERROR(mixfx_timepitch_set_pitch_cents(tp, 100), MIXFX_ERR_STATE, "reset");
    EXPECT_OK(mixfx_timepitch_end_input(tp));
    EXPECT_ERROR(mixfx_timepitch_process(tp, in, 1, out, 1, &n), MIXFX_ERR_STATE, "end_input");
    EXPECT_OK(mixfx_timepitch_reset(tp));
    EXPECT_OK(mixfx_timepitch_set_pitch_cents(tp, 100));
    EXPECT_OK(mixfx_timepitch_destroy(tp));
}

/* Offline: a whole signal in, end, drain; n + L frames without a tempo, round(n/R) with one. */
static void check_timepitch_offline(double cents, double tempo, size_t frames) {
    mixfx_timepitch *tp = NULL;
    EXPECT_OK(mixfx_timepitch_create(RATE, 2, MIXFX_OFFLINE, BLOCK, &tp));
    EXPECT_OK(mixfx_timepitch_set_pitch_cents(tp, cents));
    EXPECT_OK(mixfx_timepitch_set_tempo(tp, tempo));
    EXPECT_OK(mixfx_timepitch_set_formants(tp, 1));
    EXPECT_OK(mixfx_timepitch_set_overlap(tp, 8));
    size_t latency = 99;
    EXPECT_OK(mixfx_timepitch_latency(tp, &latency));
    if (tempo == 1 && cents != 0) CHECK(latency > 0, "offline at %g cents: latency 0", cents);
    else if (tempo == 1) CHECK(latency == 0, "offline at 0 cents (a pass-through): latency %zu", latency);
    else CHECK(latency == 0, "offline with a tempo: latency %zu", latency);
    float l[BLOCK], r[BLOCK], ol[2 * BLOCK], or_[2 * BLOCK];
    const float *in[2] = { l, r };
    float *out[2] = { ol, or_ };
    size_t done = 0, total = 0, n = 0;
    while (done < frames) {
        size_t k = frames - done < BLOCK ? frames - done : BLOCK;
        fill_sine(l, k, 440, done);
        fill_sine(r, k, 660, done);
        int s = mixfx_timepitch_process(tp, in, k, out, 2 * BLOCK, &n);
        CHECK(s == MIXFX_OK, "process: %d %s", s, mixfx_last_error());
        if (s != MIXFX_OK) break;
        done += k;
        total += n;
    }
    EXPECT_OK(mixfx_timepitch_end_input(tp));
    do {
        EXPECT_OK(mixfx_timepitch_process(tp, NULL, 0, out, 2 * BLOCK, &n));
        total += n;
    } while (n > 0);
    size_t want = tempo == 1 ? frames + latency : (size_t)llround((double)frames / tempo);
    CHECK(total == want, "offline %g cents tempo %g: %zu frames out, expected %zu", cents, tempo, total, want);
    EXPECT_OK(mixfx_timepitch_destroy(tp));
}

/* Live: at tempo 1 as many frames out as in, every call; setters while it runs; allocations. */
static void check_timepitch_live(int count_allocations) {
    mixfx_timepitch *tp = NULL;
    EXPECT_OK(mixfx_timepitch_create(RATE, 2, MIXFX_LIVE, BLOCK, &tp));
    size_t latency = 0;
    EXPECT_OK(mixfx_timepitch_latency(tp, &latency));
    CHECK(latency > 0, "live latency 0");
    EXPECT_ERROR(mixfx_timepitch_set_tempo(tp, 5), MIXFX_ERR_RANGE, "live");
    EXPECT_ERROR(mixfx_timepitch_end_input(tp), MIXFX_ERR_STATE, "live");
    float l[BLOCK], r[BLOCK], ol[BLOCK], or_[BLOCK];
    const float *in[2] = { l, r };
    float *out[2] = { ol, or_ };
    uint64_t before = 0;
    for (int b = 0; b < 200; b++) {
        if (b == 4 && count_allocations) before = mixfx_alloc_count();
        fill_sine(l, BLOCK, 440, (size_t)b * BLOCK);
        fill_sine(r, BLOCK, 440, (size_t)b * BLOCK);
        if (b == 20) EXPECT_OK(mixfx_timepitch_set_pitch_cents(tp, 700));
        if (b == 60) EXPECT_OK(mixfx_timepitch_set_formants(tp, 1));
        if (b == 80) EXPECT_OK(mixfx_timepitch_set_pitch_cents(tp, -500));   /* a switch */
        if (b == 120) EXPECT_OK(mixfx_timepitch_set_tempo(tp, 0.8));
        if (b == 160) EXPECT_OK(mixfx_timepitch_reset(tp));
        size_t n = 0;
        int s = mixfx_timepitch_process(tp, in, BLOCK, out, BLOCK, &n);
        CHECK(s == MIXFX_OK, "live process: %d %s", s, mixfx_last_error());
        if (b < 120) CHECK(n == BLOCK, "live block %d: %zu frames out of %d in", b, n, BLOCK);
    }
    if (count_allocations) {
        uint64_t during = mixfx_alloc_count() - before;
        CHECK(during == 0, "live processing allocated %llu times", (unsigned long long)during);
    }
    EXPECT_ERROR(mixfx_timepitch_set_overlap(tp, 4), MIXFX_ERR_STATE, "reset");
    EXPECT_OK(mixfx_timepitch_reset(tp));
    EXPECT_OK(mixfx_timepitch_set_overlap(tp, 4));
    EXPECT_OK(mixfx_timepitch_destroy(tp));
}

static void check_shelf_eq(int count_allocations) {
    mixfx_shelf_eq *eq = NULL;
    float a[BLOCK], b[BLOCK], c[BLOCK], d[BLOCK];
    const float *in[2] = { a, b };
    float *out[2] = { c, d };
    EXPECT_ERROR(mixfx_shelf_eq_create(RATE, 2, NULL), MIXFX_ERR_NULL, "out");
    EXPECT_ERROR(mixfx_shelf_eq_create(-1, 2, &eq), MIXFX_ERR_RANGE, "sample_rate");
    EXPECT_ERROR(mixfx_shelf_eq_create(RATE, 5, &eq), MIXFX_ERR_RANGE, "channels");
    EXPECT_ERROR(mixfx_shelf_eq_set_bass(NULL, 1, 100), MIXFX_ERR_NULL, "eq");
    EXPECT_ERROR(mixfx_shelf_eq_set_treble(NULL, 1, 100), MIXFX_ERR_NULL, "eq");
    EXPECT_ERROR(mixfx_shelf_eq_set_gain(NULL, 1), MIXFX_ERR_NULL, "eq");
    EXPECT_ERROR(mixfx_shelf_eq_process(NULL, in, out, BLOCK), MIXFX_ERR_NULL, "eq");
    EXPECT_ERROR(mixfx_shelf_eq_reset(NULL), MIXFX_ERR_NULL, "eq");
    EXPECT_OK(mixfx_shelf_eq_destroy(NULL));
    EXPECT_OK(mixfx_shelf_eq_create(RATE, 2, &eq));
    EXPECT_ERROR(mixfx_shelf_eq_set_bass(eq, 30, 100), MIXFX_ERR_RANGE, "24");
    EXPECT_ERROR(mixfx_shelf_eq_set_bass(eq, 3, 10), MIXFX_ERR_RANGE, "corner_hz");
    EXPECT_ERROR(mixfx_shelf_eq_set_treble(eq, 3, 24000), MIXFX_ERR_RANGE, "Nyquist");
    EXPECT_ERROR(mixfx_shelf_eq_set_treble(eq, INFINITY, 5000), MIXFX_ERR_RANGE, "gain_db");
    EXPECT_ERROR(mixfx_shelf_eq_set_gain(eq, -100), MIXFX_ERR_RANGE, "-96");
    EXPECT_ERROR(mixfx_shelf_eq_process(eq, NULL, out, BLOCK), MIXFX_ERR_NULL, "input");
    EXPECT_ERROR(mixfx_shelf_eq_process(eq, in, NULL, BLOCK), MIXFX_ERR_NULL, "output");
    EXPECT_OK(mixfx_shelf_eq_set_bass(eq, 6, 100));
    EXPECT_OK(mixfx_shelf_eq_set_treble(eq, -3, 5000));
    EXPECT_OK(mixfx_shelf_eq_set_gain(eq, -1));
    fill_sine(a, BLOCK, 60, 0);
    fill_sine(b, BLOCK, 9000, 0);
    uint64_t before = count_allocations ? mixfx_alloc_count() : 0;
    EXPECT_OK(mixfx_shelf_eq_process(eq, in, out, BLOCK));
    if (count_allocations) CHECK(mixfx_alloc_count() == before, "the EQ's process allocated");
    /* in place gives the same samples */
    EXPECT_OK(mixfx_shelf_eq_reset(eq));
    float *inplace[2] = { a, b };
    EXPECT_OK(mixfx_shelf_eq_process(eq, (const float *const *)inplace, inplace, BLOCK));
    CHECK(memcmp(a, c, sizeof a) == 0 && memcmp(b, d, sizeof b) == 0, "in place differs from out of place");
    EXPECT_OK(mixfx_shelf_eq_destroy(eq));
}

static void check_render(const char *input, const char *dir) {
    char output[4096], report[4096];
    snprintf(output, sizeof output, "%s/check-render.wav", dir);
    snprintf(report, sizeof report, "%s/check-render.json", dir);
    const char *inputs[1] = { input };
    const char *preset = "{\"schemaVersion\": 2, \"all\": {\"eq\": {\"bass\": {\"gainDB\": 3}}, \"pitch\": {\"cents\": 200}}}";
    mixfx_render_summary summary;
    memset(&summary, 0, sizeof summary);
    EXPECT_ERROR(mixfx_render_preset(preset, inputs, 1, NULL, NULL, 0, NULL), MIXFX_ERR_NULL, "output_path");
    EXPECT_ERROR(mixfx_render_preset(preset, NULL, 1, output, NULL, 0, NULL), MIXFX_ERR_NULL, "inputs");
    EXPECT_ERROR(mixfx_render_preset(preset, inputs, 0, output, NULL, 0, NULL), MIXFX_ERR_RANGE, "track_count");
    EXPECT_ERROR(mixfx_render_preset("{", inputs, 1, output, NULL, 0, NULL), MIXFX_ERR_INVALID, "JSON");
    EXPECT_ERROR(mixfx_render_preset("{\"schemaVersion\": 2, \"all\": {\"pitch\": {\"cents\": 5000}}}", inputs, 1, output, NULL, 0, NULL),
                 MIXFX_ERR_INVALID, "2400");
    const char *missing[1] = { "/nonexistent/mixfx-check.wav" };
    EXPECT_ERROR(mixfx_render_preset(preset, missing, 1, output, NULL, 0, NULL), MIXFX_ERR_FAILED, "mixfx-check.wav");
    EXPECT_ERROR(mixfx_render_preset(preset, inputs, 1, input, NULL, 1, NULL), MIXFX_ERR_INVALID, "input");
    EXPECT_OK(mixfx_render_preset(preset, inputs, 1, output, report, 0, &summary));
    CHECK(summary.frames > 0 && summary.sample_rate_hz > 0 && summary.channels == 2, "summary %lld frames, %d Hz, %d channels",
          (long long)summary.frames, summary.sample_rate_hz, summary.channels);
    FILE *f = fopen(report, "r");
    CHECK(f != NULL, "no report at %s", report);
    if (f) fclose(f);
    EXPECT_ERROR(mixfx_render_preset(preset, inputs, 1, output, NULL, 0, NULL), MIXFX_ERR_INVALID, "exists");
    EXPECT_OK(mixfx_render_preset(NULL, inputs, 1, output, NULL, 1, NULL));
}

/* The first call of each setter in the process (before any other call touched the parameter
 * registry) allocates nothing either: the header promises it for live use. */
static void check_first_setters(void) {
    mixfx_timepitch *tp = NULL;
    mixfx_shelf_eq *eq = NULL;
    EXPECT_OK(mixfx_timepitch_create(RATE, 2, MIXFX_LIVE, BLOCK, &tp));
    EXPECT_OK(mixfx_shelf_eq_create(RATE, 2, &eq));
    uint64_t before = mixfx_alloc_count();
    EXPECT_OK(mixfx_timepitch_set_pitch_cents(tp, 300));
    EXPECT_OK(mixfx_timepitch_set_tempo(tp, 1.1));
    EXPECT_OK(mixfx_timepitch_set_formants(tp, 1));
    EXPECT_OK(mixfx_shelf_eq_set_bass(eq, 3, 120));
    EXPECT_OK(mixfx_shelf_eq_set_treble(eq, -2, 6000));
    EXPECT_OK(mixfx_shelf_eq_set_gain(eq, -1));
    uint64_t during = mixfx_alloc_count() - before;
    CHECK(during == 0, "the first setter calls allocated %llu times", (unsigned long long)during);
    EXPECT_OK(mixfx_timepitch_destroy(tp));
    EXPECT_OK(mixfx_shelf_eq_destroy(eq));
}

/* One NaN or infinite input sample does not poison what follows (it is replaced by 0). */
static void check_bad_samples(void) {
    mixfx_timepitch *tp = NULL;
    mixfx_shelf_eq *eq = NULL;
    EXPECT_OK(mixfx_timepitch_create(RATE, 2, MIXFX_LIVE, BLOCK, &tp));
    EXPECT_OK(mixfx_timepitch_set_pitch_cents(tp, 700));
    EXPECT_OK(mixfx_shelf_eq_create(RATE, 2, &eq));
    EXPECT_OK(mixfx_shelf_eq_set_bass(eq, 6, 200));
    float l[BLOCK], r[BLOCK], ol[BLOCK], or_[BLOCK];
    const float *in[2] = { l, r };
    float *out[2] = { ol, or_ };
    size_t bad_tp = 0, bad_eq = 0;
    for (int b = 0; b < 100; b++) {
        fill_sine(l, BLOCK, 440, (size_t)b * BLOCK);
        fill_sine(r, BLOCK, 440, (size_t)b * BLOCK);
        if (b == 10) { l[7] = NAN; r[100] = INFINITY; l[200] = 1e30f; }
        size_t n = 0;
        EXPECT_OK(mixfx_timepitch_process(tp, in, BLOCK, out, BLOCK, &n));
        for (size_t i = 0; i < n; i++) bad_tp += !isfinite(ol[i]) + !isfinite(or_[i]);
        EXPECT_OK(mixfx_shelf_eq_process(eq, in, out, BLOCK));
        for (size_t i = 0; i < BLOCK; i++) bad_eq += !isfinite(ol[i]) + !isfinite(or_[i]);
    }
    CHECK(bad_tp == 0, "time-pitch: %zu non-finite output samples after one bad input block", bad_tp);
    CHECK(bad_eq == 0, "shelf EQ: %zu non-finite output samples after one bad input block", bad_eq);
    EXPECT_OK(mixfx_timepitch_destroy(tp));
    EXPECT_OK(mixfx_shelf_eq_destroy(eq));
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: check INPUT.wav OUTDIR\n"); return 2; }
    const char *env = getenv("MIXFX_CHECK_ALLOCATIONS");
    int count_allocations = env != NULL && strcmp(env, "1") == 0;
    if (count_allocations && !mixfx_alloc_count) { fprintf(stderr, "MIXFX_CHECK_ALLOCATIONS=1 but no counter preloaded\n"); return 2; }
    if (count_allocations) check_first_setters();   /* first: nothing has touched the registry */
    check_version();
    check_bad_samples();
    check_timepitch_misuse();
    check_timepitch_offline(300, 1, 48000);
    check_timepitch_offline(0, 1, 10000);
    check_timepitch_offline(-700, 1.25, 48000);
    check_timepitch_offline(0, 0.5, 20000);
    check_timepitch_live(count_allocations);
    check_shelf_eq(count_allocations);
    check_render(argv[1], argv[2]);
    if (failures) { fprintf(stderr, "%d checks failed\n", failures); return 1; }
    printf("ok\n");
    return 0;
}
