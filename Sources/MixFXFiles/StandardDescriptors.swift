import Foundation
import Synchronization

/// Descriptors 0, 1 and 2 (standard input, output and error) kept open for the whole run. A
/// process started with one of them closed would otherwise hand that number to the next file it
/// opens (a track, the kept standard input, an output being written), and a message meant for
/// stderr would be written into that file. `secure()` opens `/dev/null` on each closed one, the
/// wrong way round (standard input write-only, the others read-only), so using it still fails as
/// a closed descriptor does (`EBADF`: a lost stdout is still an error), and remembers which were
/// closed, so `-` can say "closed".
public enum StandardDescriptors {
    private static let closedMask = Atomic<UInt8>(0)

    /// Holds whichever of 0, 1 and 2 is closed with `/dev/null`. Call first thing in `main`.
    public static func secure() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let null = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY)
            if null >= 0 && null != fd {
                dup2(null, fd)
                close(null)
            }
            closedMask.bitwiseOr(UInt8(1) << UInt8(fd), ordering: .relaxed)
        }
    }

    /// Whether `fd` (0, 1 or 2) was closed when the process started (`secure()` was called).
    public static func wasClosed(_ fd: Int32) -> Bool {
        closedMask.load(ordering: .relaxed) & (UInt8(1) << UInt8(fd)) != 0
    }
}
