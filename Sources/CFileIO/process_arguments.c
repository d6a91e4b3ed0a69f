// The process's arguments as the C runtime received them, and its umask. Swift's CommandLine on Linux reads
// them from /proc/self/cmdline, which a chroot or a sandbox without /proc lacks (mixfx then saw
// no arguments and printed its usage). glibc calls each function of .init_array with argc,
// argv and envp before main; the pointers stay valid for the process's life.
#include "file_io.h"
#include <stdlib.h>   // (glibc defines __GLIBC__ through it)

#include <sys/stat.h>

static int saved_argc;
static char **saved_argv;
static int saved_umask = -1;

#ifdef __GLIBC__
static void save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
    // (umask can only be read by setting it: here, before main and any other thread, it is
    // set back at once; /proc/self/status, which says it without setting it, may be missing)
    mode_t mask = umask(0);
    umask(mask);
    saved_umask = (int)mask;
}

__attribute__((section(".init_array"), used))
static void (*const mixfx_save_arguments)(int, char **, char **) = save_arguments;
#endif

int mixfx_start_umask(void) { return saved_umask; }

char **mixfx_process_arguments(int *argc) {
    *argc = saved_argc;
    return saved_argv;
}
