import Foundation
import Synchronization

/// Why mixfx would not write a file where it was asked to. In every case nothing is left at the
/// path, and a file that was there is untouched.
public enum OutputFileError: Error, Equatable, CustomStringConvertible {
    /// The file exists and replacing it was not allowed.
    case exists(path: String)
    /// The path is (a name of) one of the inputs.
    case isInput(path: String)
    /// The path is a directory, FIFO, device or socket, not a regular file.
    case notRegular(path: String, kind: String)
    /// A symbolic link whose target does not exist.
    case danglingLink(path: String, target: String)
    /// Another process created the file while mixfx was writing its own.
    case appeared(path: String)
    /// The file system refused (no directory, no permission, no space, ...).
    case cannotCreate(path: String, reason: String)

    /// One line naming the path and what to do.
    public var description: String {
        switch self {
        case .exists(let p): "'\(p)' exists; use --force to overwrite it"
        case .isInput(let p): "'\(p)' is one of the inputs; choose another output file"
        case .notRegular(let p, let kind):
            "'\(p)' is a \(kind), not a regular file; mixfx writes regular files only (choose a file path)"
        case .danglingLink(let p, let t):
            "'\(p)' is a symbolic link to '\(t)', which does not exist; give a file path (or create the target)"
        case .appeared(let p):
            "'\(p)' was created by another process while mixfx was writing; it was kept and this output was discarded (use --force to replace it)"
        case .cannotCreate(let p, let r): "cannot create '\(p)': \(r)"
        }
    }
}

/// The one way mixfx writes a file (renders, presets, reports): never over an input, never over
/// an existing file unless allowed, into a temporary file beside the target that is moved into
/// place only when complete.
///
/// - A symbolic link is followed: the file it points to is replaced (with `overwrite`), the link
///   stays. A link to nothing is refused.
/// - Directories, FIFOs, devices and sockets are refused.
/// - A replaced file keeps its permission bits.
/// - The final step does not replace a file that appeared while writing unless `overwrite` is
///   set (a hard link is made, which fails if the name exists; on file systems without hard links
///   the check and the rename are two steps).
public struct OutputFile: Sendable {
    /// The path as given.
    public let path: String
    /// Where the file goes: `path`, or the file a symbolic link at `path` points to.
    public let targetPath: String
    /// Whether a file exists at the target now (it will be replaced: `overwrite` was given).
    public let replacesExisting: Bool
    /// Replacing an existing file is allowed.
    public let overwrite: Bool
    private let replacedMode: mode_t?

    private static let counter = Atomic<Int>(0)

    /// Checks `path` as an output beside `inputs` (paths of files read). Control side.
    public init(path: String, inputs: [String], overwrite: Bool) throws(OutputFileError) {
        self.path = path
        self.overwrite = overwrite
        var target = path
        var st = stat()
        if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK {
            guard let resolved = realpath(path, nil) else {
                let dest = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
                throw .danglingLink(path: path, target: dest)
            }
            target = String(cString: resolved)
            free(resolved)
        }
        targetPath = target
        guard stat(target, &st) == 0 else {
            replacesExisting = false
            replacedMode = nil
            return
        }
        if let kind = OutputFile.irregularKind(st.st_mode) { throw .notRegular(path: path, kind: kind) }
        for input in inputs {
            var inStat = stat()
            if stat(input, &inStat) == 0 && inStat.st_dev == st.st_dev && inStat.st_ino == st.st_ino {
                throw .isInput(path: path)
            }
        }
        guard overwrite else { throw .exists(path: path) }
        replacesExisting = true
        replacedMode = st.st_mode & 0o7777
    }

    /// A fresh temporary path in the target's directory (so the final move is a rename on one
    /// file system). Hidden, and named after the target and this process.
    public func temporaryPath() -> String {
        let url = URL(fileURLWithPath: targetPath)
        let n = OutputFile.counter.add(1, ordering: .relaxed).newValue
        let path = url.deletingLastPathComponent().path + "/.\(url.lastPathComponent).mixfx-\(getpid())-\(n).tmp"
        TemporaryFiles.remember(path)
        return path
    }

    /// Lets the kernel drop the cached pages of the file this output will replace (none if it
    /// replaces nothing); called while the render runs. Otherwise they are freed at the final
    /// rename, when the old file's last link goes: about 2 µs a page on the 2-core benchmark
    /// machine, 6–15 ms for the band's 10 MB, after the last sample is written and with every
    /// other core idle. Dropped early, they cost the same on a core the render shares. The file
    /// is not changed: if the render fails it is as it was, only no longer cached (pages still
    /// on their way to disk stay).
    public func releaseReplacedPages() {
        guard replacesExisting else { return }
        let fd = open(targetPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
    }

    /// Moves the finished `temporary` file into place (see the type's notes); on failure the
    /// temporary file is removed.
    public func commit(temporary: String) throws(OutputFileError) {
        defer { TemporaryFiles.forget(temporary) }
        if let replacedMode { chmod(temporary, replacedMode) }
        if link(temporary, targetPath) == 0 {
            unlink(temporary)
            return
        }
        let linkErrno = errno
        if linkErrno == EEXIST && !overwrite {
            unlink(temporary)
            throw .appeared(path: path)
        }
        if linkErrno != EEXIST {
            // no hard links here (some file systems): check, then rename
            var st = stat()
            if !overwrite && lstat(targetPath, &st) == 0 {
                unlink(temporary)
                throw .appeared(path: path)
            }
        }
        if rename(temporary, targetPath) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .cannotCreate(path: path, reason: reason)
        }
    }

    /// Writes `data` to `path` by the same rules (presets, reports). Control side.
    public static func write(_ data: Data, to path: String, inputs: [String] = [], overwrite: Bool) throws(OutputFileError) {
        let out = try OutputFile(path: path, inputs: inputs, overwrite: overwrite)
        let tmp = out.temporaryPath()
        do {
            try data.write(to: URL(fileURLWithPath: tmp), options: .withoutOverwriting)
        } catch {
            OutputFile.discard(temporary: tmp)
            throw .cannotCreate(path: path, reason: OutputFile.reason(error))
        }
        try out.commit(temporary: tmp)
    }

    /// What a file of mode `mode` is when it is not a regular file ("directory", "FIFO (named
    /// pipe)", ...); nil for a regular file. (Inputs and outputs are refused by the same words.)
    static func irregularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "directory"
        case S_IFIFO: "FIFO (named pipe)"
        case S_IFCHR, S_IFBLK: "device"
        case S_IFSOCK: "socket"
        default: "special file"
        }
    }

    /// Removes a temporary file that will not be committed.
    public static func discard(temporary: String) {
        unlink(temporary)
        TemporaryFiles.forget(temporary)
    }

    /// The system's reason in a Foundation error, without Foundation's wrapping.
    static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return ns.localizedDescription
    }
}
