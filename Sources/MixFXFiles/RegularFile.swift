import Foundation

/// Why a file could not be opened for reading. Each names the path.
public struct FileOpenError: Error, Equatable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        case missing
        case danglingLink(target: String)
        case linkLoop
        case notRegular(kind: String)
        case tooLarge(bytes: Int, limit: Int)
        case system(String)
    }
    public let path: String
    public let problem: Problem

    /// The problem alone ("no such file", "it is a FIFO (named pipe), not a regular file").
    public var reason: String {
        switch problem {
        case .missing: "no such file"
        case .danglingLink(let t): "it is a symbolic link to '\(t)', which does not exist"
        case .linkLoop: "its symbolic links form a loop (or are nested more than 40 deep)"
        case .notRegular(let kind): "it is a \(kind), not a regular file"
        case .tooLarge(let b, let l): "it is \(b) bytes, more than the \(l) allowed"
        case .system(let r): r
        }
    }

    public var description: String { "cannot open '\(path)': \(reason)" }
}

/// Files mixfx reads (audio, presets, manifests, sidecars), opened once and checked on the open
/// descriptor, never by the path and then the path again: a FIFO, device or socket at the path
/// (or swapped in after a check) is refused without blocking, and what is read is what was
/// checked.
public enum RegularFile {
    /// Opens `path` read-only and returns the descriptor (close-on-exec, blocking mode). The open
    /// itself cannot block (`O_NONBLOCK`: a FIFO opens at once and is then refused by `fstat`).
    /// Symbolic links are followed: a user's links to inputs are theirs to make.
    public static func openForReading(_ path: String) throws(FileOpenError) -> Int32 {
        let fd = FileSystem.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw FileOpenError(path: path, problem: problem(errno: errno, path: path)) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw FileOpenError(path: path, problem: .system(String(cString: strerror(e))))
        }
        if let kind = irregularKind(st.st_mode) {
            close(fd)
            throw FileOpenError(path: path, problem: .notRegular(kind: kind))
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return fd
    }

    /// The whole of the regular file at `path`, at most `maximumBytes` (more is refused, naming
    /// both sizes). Control side.
    public static func read(_ path: String, maximumBytes: Int) throws(FileOpenError) -> [UInt8] {
        let fd = try openForReading(path)
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        guard Int(st.st_size) <= maximumBytes else {
            throw FileOpenError(path: path, problem: .tooLarge(bytes: Int(st.st_size), limit: maximumBytes))
        }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size) + 1)
        var done = 0
        while true {
            if done == bytes.count {
                // the file grew since fstat: read on, within the limit
                guard bytes.count <= maximumBytes else {
                    throw FileOpenError(path: path, problem: .tooLarge(bytes: bytes.count, limit: maximumBytes))
                }
                bytes += [UInt8](repeating: 0, count: max(4096, bytes.count))
            }
            let n = bytes.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileOpenError(path: path, problem: .system(String(cString: strerror(errno))))
            }
            if n == 0 { break }
            done += n
        }
        guard done <= maximumBytes else { throw FileOpenError(path: path, problem: .tooLarge(bytes: done, limit: maximumBytes)) }
        return Array(bytes[0..<done])
    }

    /// Whether a regular file (links followed) is at `path`.
    public static func exists(_ path: String) -> Bool {
        guard let st = FileSystem.status(path) else { return false }
        return (st.st_mode & S_IFMT) == S_IFREG
    }

    /// The problem an `open` of `path` that failed with `errno` had, in words a user can act on.
    public static func problem(errno e: Int32, path: String) -> FileOpenError.Problem {
        switch e {
        case ENOENT:
            if let st = FileSystem.linkStatus(path), (st.st_mode & S_IFMT) == S_IFLNK {
                return .danglingLink(target: FileSystem.linkTarget(path) ?? "?")
            }
            return .missing
        case ELOOP: return .linkLoop
        case ENOTDIR: return .system("a part of the path before the file name is not a folder")
        case ENAMETOOLONG: return .system("the path or one of its names is too long for the file system (a name holds at most 255 bytes)")
        default: return .system(String(cString: strerror(e)))
        }
    }

    /// What a file of mode `mode` is when it is not a regular file ("directory", "FIFO (named
    /// pipe)", ...); nil for a regular file. (Inputs and outputs are refused by the same words.)
    public static func irregularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "directory"
        case S_IFIFO: "FIFO (named pipe)"
        case S_IFCHR, S_IFBLK: "device"
        case S_IFSOCK: "socket"
        default: "special file"
        }
    }
}
