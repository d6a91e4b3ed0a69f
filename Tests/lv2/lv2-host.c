/* A minimal LV2 host for mixfx's tests and benchmarks: loads a plugin library, instantiates one
 * of its plugins, runs raw interleaved float32 audio through it in host blocks of a fixed or a
 * random size, and reports what the plugin said and did. No lilv: the ports are given by index.
 *
 *   lv2-host LIB URI RATE CHANNELS IN.f32 OUT.f32 ports=N audio=IN,OUT[,IN,OUT] [latency=P]
 *            [blocks=N|random] [P=VALUE]...
 *
 * Unnamed ports get a value of 0. Prints, one per line: `latency L` (port P after run(0)) and
 * `latency_end L` (after the last run),
 * `frames N`, `run_cpu_seconds S` (the thread's CPU time inside run), and, when the allocation
 * counter (Tests/alsa/alloccount.c) is preloaded, `instantiate_allocations N` and
 * `run_allocations N` (every run call, the first included).
 *   gcc -O2 -I Sources/CLV2/include -o lv2-host Tests/lv2/lv2-host.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lv2_core_abi.h"

static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: lv2-host LIB URI RATE CHANNELS IN.f32 OUT.f32 ports=N audio=I,O[,I,O] [latency=P] [blocks=N|random] [P=V]...\n");
        return 2;
    }
    const char *uri = argv[2];
    double rate = atof(argv[3]);
    int channels = atoi(argv[4]);
    int nports = 0, latency_port = -1, block = 256, random_blocks = 0, audio[4] = {-1, -1, -1, -1};
    float values[64] = {0};
    for (int i = 7; i < argc; ++i) {
        if (!strncmp(argv[i], "ports=", 6)) nports = atoi(argv[i] + 6);
        else if (!strncmp(argv[i], "latency=", 8)) latency_port = atoi(argv[i] + 8);
        else if (!strcmp(argv[i], "blocks=random")) random_blocks = 1;
        else if (!strncmp(argv[i], "blocks=", 7)) block = atoi(argv[i] + 7);
        else if (!strncmp(argv[i], "audio=", 6)) sscanf(argv[i] + 6, "%d,%d,%d,%d", &audio[0], &audio[1], &audio[2], &audio[3]);
        else {
            int p; float v;
            if (sscanf(argv[i], "%d=%f", &p, &v) != 2 || p < 0 || p >= 64) { fprintf(stderr, "bad argument %s\n", argv[i]); return 2; }
            values[p] = v;
        }
    }
    if (nports <= 0 || nports > 64 || channels < 1 || channels > 2 || block < 1) { fprintf(stderr, "bad ports, channels or blocks\n"); return 2; }

    FILE *in = fopen(argv[5], "rb");
    if (!in) { perror(argv[5]); return 1; }
    fseek(in, 0, SEEK_END);
    long frames = ftell(in) / (long)(sizeof(float) * channels);
    fseek(in, 0, SEEK_SET);
    float *interleaved = malloc(sizeof(float) * channels * (frames + 1));
    if (fread(interleaved, sizeof(float) * channels, frames, in) != (size_t)frames) { fprintf(stderr, "short read\n"); return 1; }
    fclose(in);

    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    const LV2Descriptor *(*entry)(uint32_t) = (const LV2Descriptor *(*)(uint32_t))dlsym(lib, "lv2_descriptor");
    if (!entry) { fprintf(stderr, "no lv2_descriptor\n"); return 1; }
    const LV2Descriptor *d = NULL;
    for (uint32_t i = 0; (d = entry(i)) != NULL; ++i) if (!strcmp(d->URI, uri)) break;
    if (!d) { fprintf(stderr, "no plugin %s\n", uri); return 1; }

    uint64_t (*alloc_count)(void) = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "mixfx_alloc_count");
    const LV2Feature *const features[] = {NULL};
    uint64_t a0 = alloc_count ? alloc_count() : 0;
    LV2Handle h = d->instantiate(d, rate, "", features);
    if (!h) { fprintf(stderr, "instantiate failed\n"); return 1; }
    uint64_t instantiate_allocations = alloc_count ? alloc_count() - a0 : 0;

    /* the largest block the host passes; buffers per channel, in and out */
    int cap = random_blocks ? 4096 : block;
    float *buf_in[2], *buf_out[2];
    for (int c = 0; c < channels; ++c) { buf_in[c] = calloc(cap, sizeof(float)); buf_out[c] = calloc(cap, sizeof(float)); }
    for (int p = 0; p < nports; ++p) d->connect_port(h, p, &values[p]);
    for (int c = 0; c < channels; ++c) {
        d->connect_port(h, audio[2 * c], buf_in[c]);
        d->connect_port(h, audio[2 * c + 1], buf_out[c]);
    }
    float *outer = malloc(sizeof(float) * channels * (frames + 1));
    if (d->activate) d->activate(h);
    d->run(h, 0);
    if (latency_port >= 0) printf("latency %.0f\n", values[latency_port]);

    uint64_t before = alloc_count ? alloc_count() : 0;
    double cpu = 0;
    unsigned seed = 12345;
    long done = 0;
    while (done < frames) {
        long n = block;
        if (random_blocks) { seed = seed * 1103515245u + 12345u; n = 1 + (long)((seed >> 8) % 4096u); if (n > 64 && (seed & 3) == 0) n = 1 + (n & 63); }
        if (n > frames - done) n = frames - done;
        for (long i = 0; i < n; ++i) for (int c = 0; c < channels; ++c) buf_in[c][i] = interleaved[(done + i) * channels + c];
        double t0 = thread_seconds();
        d->run(h, (uint32_t)n);
        cpu += thread_seconds() - t0;
        for (long i = 0; i < n; ++i) for (int c = 0; c < channels; ++c) outer[(done + i) * channels + c] = buf_out[c][i];
        done += n;
    }
    uint64_t run_allocations = alloc_count ? alloc_count() - before : 0;
    if (latency_port >= 0) printf("latency_end %.0f\n", values[latency_port]);
    if (d->deactivate) d->deactivate(h);
    d->cleanup(h);

    FILE *out = fopen(argv[6], "wb");
    if (!out || fwrite(outer, sizeof(float) * channels, frames, out) != (size_t)frames) { perror(argv[6]); return 1; }
    fclose(out);
    printf("frames %ld\nrun_cpu_seconds %.6f\n", frames, cpu);
    if (alloc_count) printf("instantiate_allocations %llu\nrun_allocations %llu\n",
                            (unsigned long long)instantiate_allocations, (unsigned long long)run_allocations);
    return 0;
}
