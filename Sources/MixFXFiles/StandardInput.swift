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
        if let reason = copy(from: 0, to: fd) {
            close(fd)
            throw FileOpenError(path: path, problem: .system(reason))
        }
        lseek(fd, 0, SEEK_SET)
        return fd
    }

    /// Copies everything `source` gives until its end into `target`; the problem in words, or nil.
    private static func copy(from source: Int32, to target: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
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
            }
        }
    }
}
