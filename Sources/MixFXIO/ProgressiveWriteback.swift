import CFileIO
import Foundation

/// Starts writing a growing file to disk as it grows, a step at a time, without waiting for the
/// writes (`sync_file_range`).
///
/// Why: when a file is renamed over an existing one, as every render that replaces its output
/// is, ext4 (its default `auto_da_alloc`) writes the new file out in the rename, so that a crash
/// soon after cannot leave it empty. With the whole file still in memory that rename waited on
/// the disk: 8–15 ms for the band's 10 MB on the 2-core benchmark machine, after the last
/// sample, with the other core idle. Started as the file grows, the same writes go out while
/// the tracks render, and the rename took 2.5 ms. The output also reaches the disk sooner.
///
/// It works through a read-only descriptor of its own (the writeback is the file's, whichever
/// descriptor asks); where it cannot open one, or the system has no such call, it does nothing.
final class ProgressiveWriteback {
    /// Bytes between two requests: small enough that each request's writes do not wait on the
    /// disk's queue (at most 0.3 ms each, 40 for the band), large enough to be few.
    static let stepBytes = 256 << 10
    private var fd: Int32
    private var appendedBytes = 0
    /// Bytes whose writeback has been requested so far (from the file's start).
    private(set) var requested = 0

    /// For the file just created that `descriptor` (taken over; -1 for none) is open on.
    init(descriptor: Int32) {
        fd = descriptor
    }

    deinit { if fd >= 0 { close(fd) } }

    /// `bytes` more were appended (the file's first bytes, a header that is written again at
    /// the end, are counted with them: the ranges only need to be about right).
    func appended(bytes: Int) {
        guard fd >= 0 else { return }
        appendedBytes += bytes
        guard appendedBytes - requested >= ProgressiveWriteback.stepBytes else { return }
        if mixfx_start_writeback(fd, Int64(requested), Int64(appendedBytes - requested)) != 0 {
            close(fd)
            fd = -1
            return
        }
        requested = appendedBytes
    }
}
