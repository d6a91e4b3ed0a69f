/* Counts heap allocations per thread, for mixfx's real-time-safety test.
 * Preloaded into `mixfx play` (LD_PRELOAD); the render thread reads its own count through
 * mixfx_alloc_count() and reports what it allocated after its warm-up.
 *   gcc -O2 -shared -fPIC -o libmixfx-alloccount.so alloccount.c */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static __thread uint64_t allocations;

uint64_t mixfx_alloc_count(void) { return allocations; }

void *malloc(size_t n) { allocations++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { allocations++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { allocations++; return __libc_realloc(p, n); }
int posix_memalign(void **out, size_t align, size_t n) {
    allocations++;
    void *p = __libc_memalign(align, n);
    if (!p) return 12;
    *out = p;
    return 0;
}
void *aligned_alloc(size_t align, size_t n) { allocations++; return __libc_memalign(align, n); }
