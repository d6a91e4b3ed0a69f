/* FFTW's real forward transform (float, FFTW_MEASURE) timed the way mixfx-bench --fft times
 * mixfx's RealFFT: ns per transform for 256..8192 points. Built and run only by
 * Benchmarks/run.sh (apt: libfftw3-dev); FFTW is never a dependency of mixfx itself.
 *   gcc -O2 -o fftw_bench fftw_bench.c -lfftw3f -lm */
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

int main(void) {
    for (int n = 256; n <= 8192; n *= 2) {
        float *in = fftwf_alloc_real(n);
        fftwf_complex *out = fftwf_alloc_complex(n / 2 + 1);
        fftwf_plan p = fftwf_plan_dft_r2c_1d(n, in, out, FFTW_MEASURE);
        for (int i = 0; i < n; i++) in[i] = (float)rand() / RAND_MAX - 0.5f;
        int reps = (int)(2e7 / n);
        fftwf_execute(p);
        double t0 = now();
        for (int r = 0; r < reps; r++) fftwf_execute(p);
        double t = now() - t0;
        printf("%d %.1f\n", n, t / reps * 1e9);
        fftwf_destroy_plan(p); fftwf_free(in); fftwf_free(out);
    }
    return 0;
}
