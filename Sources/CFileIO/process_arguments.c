// The process's arguments as the C runtime received them. Swift's CommandLine on Linux reads
// them from /proc/self/cmdline, which a chroot or a sandbox without /proc lacks (mixfx then saw
// no arguments and printed its usage). glibc calls each function of .init_array with argc,
// argv and envp before main; the pointers stay valid for the process's life.
#include "file_io.h"
#include <stdlib.h>   // (glibc defines __GLIBC__ through it)

static int saved_argc;
static char **saved_argv;

#ifdef __GLIBC__
static void save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

__attribute__((section(".init_array"), used))
static void (*const mixfx_save_arguments)(int, char **, char **) = save_arguments;
#endif

char **mixfx_process_arguments(int *argc) {
    *argc = saved_argc;
    return saved_argv;
}
