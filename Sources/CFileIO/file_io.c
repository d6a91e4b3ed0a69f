#define _GNU_SOURCE
#include <sys/vfs.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include "file_io.h"

int mixfx_start_writeback(int fd, long long offset, long long length) {
#if defined(__linux__)
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}

int mixfx_finish_stdout(void) {
    errno = 0;
    int flushed = fflush(stdout);
    int e = errno;
    if (flushed != 0 || ferror(stdout)) return e != 0 ? e : EIO;
    return 0;
}

long long mixfx_file_system_type(int fd) {
    struct statfs s;
    if (fstatfs(fd, &s) != 0) return -1;
    return (long long)s.f_type;
}
