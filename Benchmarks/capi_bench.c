/* The same pitch shift through two C APIs: libmixfx's mixfx_timepitch and Rubber Band's
 * rubberband-c.h, on the same input, one thread each (Rubber Band with ThreadingNever; the
 * mixfx processor has no threads of its own). Prints the CPU seconds of each and the ratios.
 *
 *   Benchmarks/capi_bench.sh          (lays out libmixfx in a prefix, installs librubberband-dev,
 *                                      builds and runs this)
 *   capi_bench [SECONDS] [CENTS]      default 60 s of 44.1 kHz stereo, +200 cents
 *
 * Input: a deterministic stereo "song" (a chord of partials with vibrato, noise, a hit every
 * half second), generated here. Blocks of 1024 frames in, every call's output taken. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mixfx.h>
#include <rubberband/rubberband-c.h>

#define RATE 44100
#define BLOCK 1024
#define PI 3.14159265358979323846

static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void make_song(float *l, float *r, size_t n) {
    uint32_t seed = 12345;
    const double notes[] = { 220.0, 277.18, 329.63, 440.0, 554.37 };
    for (size_t i = 0; i < n; i++) {
        double t = (double)i / RATE, v = 0, w = 0;
        for (int k = 0; k < 5; k++) {
            double f = notes[k] * (1 + 0.003 * sin(2 * PI * 5 * t + k));
            v += 0.08 * sin(2 * PI * f * t) + 0.03 * sin(2 * PI * 2 * f * t);
            w += 0.08 * sin(2 * PI * f * t + 0.5 * k) + 0.02 * sin(2 * PI * 3 * f * t);
        }
        seed = seed * 1664525u + 1013904223u;
        double noise = ((double)(seed >> 8) / 16777216.0 - 0.5) * 0.02;
        double hit = fmod(t, 0.5) < 0.01 ? 0.3 * exp(-fmod(t, 0.5) * 400) * (seed & 1 ? 1 : -1) : 0;
        l[i] = (float)(v + noise + hit);
        r[i] = (float)(w - noise + hit);
    }
}

static float scratch_l[4 * BLOCK], scratch_r[4 * BLOCK];

/* mixfx: the whole input in blocks, end, drain. The CPU seconds; *frames_out the frames. */
static double run_mixfx(mixfx_mode mode, const float *l, const float *r, size_t n, double cents, size_t *frames_out) {
    mixfx_timepitch *tp = NULL;
    if (mixfx_timepitch_create(RATE, 2, mode, BLOCK, &tp) != MIXFX_OK ||
        mixfx_timepitch_set_pitch_cents(tp, cents) != MIXFX_OK) {
        fprintf(stderr, "mixfx: %s\n", mixfx_last_error());
        exit(1);
    }
    float *out[2] = { scratch_l, scratch_r };
    size_t total = 0, got = 0;
    double t0 = thread_seconds();
    for (size_t done = 0; done < n; done += BLOCK) {
        size_t k = n - done < BLOCK ? n - done : BLOCK;
        const float *in[2] = { l + done, r + done };
        if (mixfx_timepitch_process(tp, in, k, out, 4 * BLOCK, &got) != MIXFX_OK) { fprintf(stderr, "mixfx: %s\n", mixfx_last_error()); exit(1); }
        total += got;
    }
    if (mode == MIXFX_OFFLINE) {
        mixfx_timepitch_end_input(tp);
        do { mixfx_timepitch_process(tp, NULL, 0, out, 4 * BLOCK, &got); total += got; } while (got > 0);
    }
    double t = thread_seconds() - t0;
    mixfx_timepitch_destroy(tp);
    *frames_out = total;
    return t;
}

/* Rubber Band: study (offline), process in blocks, retrieve what is available. */
static double run_rubberband(RubberBandOptions options, const float *l, const float *r, size_t n, double cents, size_t *frames_out) {
    RubberBandState rb = rubberband_new(RATE, 2, options | RubberBandOptionThreadingNever, 1.0, pow(2.0, cents / 1200));
    rubberband_set_max_process_size(rb, BLOCK);
    int offline = !(options & RubberBandOptionProcessRealTime);
    float *out[2] = { scratch_l, scratch_r };
    size_t total = 0;
    double t0 = thread_seconds();
    if (offline) {
        rubberband_set_expected_input_duration(rb, (unsigned)n);
        for (size_t done = 0; done < n; done += BLOCK) {
            size_t k = n - done < BLOCK ? n - done : BLOCK;
            const float *in[2] = { l + done, r + done };
            rubberband_study(rb, in, (unsigned)k, done + k >= n);
        }
    }
    for (size_t done = 0; done < n; done += BLOCK) {
        size_t k = n - done < BLOCK ? n - done : BLOCK;
        const float *in[2] = { l + done, r + done };
        rubberband_process(rb, in, (unsigned)k, done + k >= n);
        int a;
        while ((a = rubberband_available(rb)) > 0) total += rubberband_retrieve(rb, out, a < 4 * BLOCK ? (unsigned)a : 4 * BLOCK);
    }
    int a;
    while ((a = rubberband_available(rb)) > 0) total += rubberband_retrieve(rb, out, a < 4 * BLOCK ? (unsigned)a : 4 * BLOCK);
    double t = thread_seconds() - t0;
    rubberband_delete(rb);
    *frames_out = total;
    return t;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 60, cents = argc > 2 ? atof(argv[2]) : 200;
    size_t n = (size_t)(seconds * RATE), frames;
    float *l = malloc(n * sizeof *l), *r = malloc(n * sizeof *r);
    if (!l || !r) return 1;
    make_song(l, r, n);
    printf("%.0f s of 44.1 kHz stereo, %+.0f cents, blocks of %d, one thread each; CPU seconds (best of 3)\n", seconds, cents, BLOCK);
    struct { const char *name; double best; size_t frames; } rows[6] = {
        { "mixfx offline (mixfx_timepitch, MIXFX_OFFLINE)", 1e9, 0 },
        { "mixfx live (MIXFX_LIVE)", 1e9, 0 },
        { "rubberband R2 offline (default options)", 1e9, 0 },
        { "rubberband R2 real-time (OptionProcessRealTime)", 1e9, 0 },
        { "rubberband R3 offline (OptionEngineFiner)", 1e9, 0 },
        { "rubberband R3 real-time (EngineFiner, RealTime)", 1e9, 0 },
    };
    for (int rep = 0; rep < 3; rep++) {
        double t;
        t = run_mixfx(MIXFX_OFFLINE, l, r, n, cents, &frames); if (t < rows[0].best) rows[0].best = t; rows[0].frames = frames;
        t = run_mixfx(MIXFX_LIVE, l, r, n, cents, &frames); if (t < rows[1].best) rows[1].best = t; rows[1].frames = frames;
        t = run_rubberband(RubberBandOptionProcessOffline, l, r, n, cents, &frames); if (t < rows[2].best) rows[2].best = t; rows[2].frames = frames;
        t = run_rubberband(RubberBandOptionProcessRealTime, l, r, n, cents, &frames); if (t < rows[3].best) rows[3].best = t; rows[3].frames = frames;
        t = run_rubberband(RubberBandOptionProcessOffline | RubberBandOptionEngineFiner, l, r, n, cents, &frames); if (t < rows[4].best) rows[4].best = t; rows[4].frames = frames;
        t = run_rubberband(RubberBandOptionProcessRealTime | RubberBandOptionEngineFiner, l, r, n, cents, &frames); if (t < rows[5].best) rows[5].best = t; rows[5].frames = frames;
    }
    for (int i = 0; i < 6; i++) {
        printf("%-50s %7.3f s  %6.1fx real time  %zu frames out", rows[i].name, rows[i].best, seconds / rows[i].best, rows[i].frames);
        if (i >= 2) printf("  mixfx offline/this %.2f, mixfx live/this %.2f", rows[0].best / rows[i].best, rows[1].best / rows[i].best);
        printf("\n");
    }
    free(l);
    free(r);
    return 0;
}
