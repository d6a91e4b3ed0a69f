#ifndef MIXFX_FILE_IO_H
#define MIXFX_FILE_IO_H

/// Starts writing `length` bytes of the file open as `fd`, from `offset`, to disk without
/// waiting for them (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`). Returns 0, or -1
/// with errno set (ENOSYS where the system has no such call). Declared here because glibc
/// declares it only under _GNU_SOURCE, which Swift's Glibc module does not define.
int mixfx_start_writeback(int fd, long long offset, long long length);

/// Flushes stdout and says whether anything written to it was lost (an earlier write error, or
/// this flush's): 0 when all of it was written, else the errno of the failure (or EIO). Here
/// because Swift 6 will not touch C's global `stdout`.
int mixfx_finish_stdout(void);

/// The process's arguments as the C runtime passed them to the program (argc in `*argc`), read
/// without /proc; NULL (and 0) where the runtime did not pass them to initialisers.
char **mixfx_process_arguments(int *argc);

// The file mode creation mask the process started with (read before main, where no other thread
// can see it change), or -1 where it was not read (not glibc).
int mixfx_start_umask(void);

// The file system type (`statfs`'s f_type, linux/magic.h) of the file open on fd, or -1.
long long mixfx_file_system_type(int fd);

#endif
