import Foundation
import Synchronization

/// Standard input as a file to read (`-` as an input path): a regular file redirected into it
/// (`< in.wav`) is read as itself; a pipe is first copied, whole, into an unnamed file in
/// `UnnamedFile.temporaryFolder`, so every format libsndfile reads works from a pipe (FLAC,
/// Ogg, MP3, a WAV of unknown length as SoX writes one) and the length is known before the
/// render starts, as the engine needs it (placement, tempo, the no-clip gain).
public enum StandardInput {
    /// The path that names standard input.
    public static let path = "-"

    /// Standard input's file when it is a regular file (`< jobs.jsonl`), read or not: an input
    /// that no output may replace (`OutputFile`). Nil for a pipe, a terminal or a closed one.
    public static let fileIdentity: FileIdentity? = fileStatus.map { .existing(device: UInt64($0.st_dev), inode: UInt64($0.st_ino)) }

    /// Standard input's file's status when it is a regular file, as at the start (its version
    /// tells the file seen under other numbers: `FileVersion.mayBeOneFile`).
    public static let fileStatus: stat? = {
        var st = stat()
        guard !StandardDescriptors.wasClosed(0), fstat(0, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return st
    }()
    private static let taken = Atomic<Bool>(false)

    /// A descriptor of standard input's data, seekable, at its start. Standard input can be read
    /// once per process: a second call is refused (it would be empty). Control side.
    public static func openForReading() throws(FileOpenError) -> Int32 {
        guard !taken.exchange(true, ordering: .relaxed) else {
            throw FileOpenError(path: path, problem: .system("standard input can be read only once (give - once)"))
        }
        var st = stat()
        guard !StandardDescriptors.wasClosed(0), fstat(0, &st) == 0 else { throw FileOpenError(path: path, problem: .system("standard input is closed")) }
        guard isatty(0) == 0 else {
            throw FileOpenError(path: path, problem: .system("standard input is a terminal; pipe a sound file into it (e.g. sox in.flac -t wav - | mixfx render - ...)"))
        }
        if (st.st_mode & S_IFMT) == S_IFREG {
            let fd = fcntl(0, F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else { throw FileOpenError(path: path, problem: .system(String(cString: strerror(errno)))) }
            return fd
        }
        let folder = UnnamedFile.temporaryFolder
        let fd: Int32
        switch UnnamedFile.create(in: folder) {
        case .success(let f): fd = f
        case .failure(let e):
            throw FileOpenError(path: path, problem: .system("cannot keep it in the temporary folder '\(folder)' (TMPDIR): \(e.reason)"))
        }
        if let reason = copy(from: 0, to: fd, reserveBytes: reserveBytes(of: fd)) {
            close(fd)
            throw FileOpenError(path: path, problem: .system(reason))
        }
        lseek(fd, 0, SEEK_SET)
        return fd
    }

    /// How much room the copy of a pipe leaves free in the temporary folder's file system: 5 % of
    /// it, at least 64 MiB and at most 1 GiB, and at most half of what is free. A stream that does not end (a recorder, `yes`, a
    /// mistake) would otherwise fill the disk the user's other programs write to before failing.
    static func reserveBytes(of fd: Int32) -> Int {
        var fs = statvfs()
        guard fstatvfs(fd, &fs) == 0 else { return 64 << 20 }
        let size = Double(fs.f_blocks) * Double(fs.f_frsize)
        // (half of what is free where that is less: a short stream still goes through a folder
        // already under the reserve)
        let free = Double(fs.f_bavail) * Double(fs.f_frsize)
        return Int(min(Double(1 << 30), max(Double(64 << 20), 0.05 * size), free / 2))
    }

    /// The room left on the file system `fd` is on, for an unprivileged writer, in bytes.
    private static func availableBytes(of fd: Int32) -> Int? {
        var fs = statvfs()
        guard fstatvfs(fd, &fs) == 0 else { return nil }
        return Int(clamping: UInt64(fs.f_bavail) &* UInt64(fs.f_frsize))
    }

    /// Copies everything `source` gives until its end into `target`, stopping (with the problem
    /// in words) before the target's file system has less than `reserveBytes` free; nil when done.
    /// (Read first: a stream that ends within the first read is kept whole.)
    static func copy(from source: Int32, to target: Int32, reserveBytes: Int) -> String? {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var kept = 0
        var nextCheck = 0
        return buffer.withUnsafeMutableBytes { b -> String? in
            while true {
                let r = read(source, b.baseAddress!, b.count)
                if r < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN {
                        var ready = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
                        _ = poll(&ready, 1, -1)
                        continue
                    }
                    return "reading it failed: " + String(cString: strerror(errno))
                }
                if r == 0 { return nil }
                if kept >= nextCheck {
                    // checked every MiB, with more of the stream in hand: statvfs is cheap, and a
                    // MiB is far below any reserve
                    nextCheck = kept + (1 << 20)
                    if let left = availableBytes(of: target), left < reserveBytes + (1 << 20) {
                        return "kept \(mebibytes(kept)) of it in '\(UnnamedFile.temporaryFolder)' (TMPDIR) and it goes on, with "
                            + "\(mebibytes(left)) left there; stopped before the disk fills (mixfx leaves \(mebibytes(reserveBytes)) free). "
                            + "Give the sound as a file, or set TMPDIR to a folder with more room"
                    }
                }
                var done = 0
                while done < r {
                    let w = write(target, b.baseAddress! + done, r - done)
                    if w < 0 {
                        if errno == EINTR { continue }
                        let reason = errno == ENOSPC ? "the temporary folder is full" : String(cString: strerror(errno))
                        return "keeping it in '\(UnnamedFile.temporaryFolder)' (TMPDIR) failed: \(reason)"
                    }
                    done += w
                }
                kept += r
            }
        }
    }

    private static func mebibytes(_ bytes: Int) -> String { "\(bytes >> 20) MiB" }
}
