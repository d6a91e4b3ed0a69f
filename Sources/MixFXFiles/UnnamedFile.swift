import Foundation

/// A file with no name in a folder: it takes disk space only while it is open, and nothing of it
/// can outlive the process (an error, a signal, even SIGKILL). The spill of a render, standard
/// input kept so it can be read as a file, an output bound for standard output.
public enum UnnamedFile {
    /// Creates one in `folder` and returns its descriptor (read-write, close-on-exec, mode 0600),
    /// or `errno`'s words. With `O_TMPFILE` it never has a name; where the file system lacks it,
    /// it is created under an unpredictable name exclusively (`O_EXCL`, no link followed) and
    /// unlinked at once (remembered meanwhile, so a fatal signal in between still removes it).
    public static func create(in folder: String) -> Result<Int32, UnnamedFileError> {
        // O_TMPFILE is __O_TMPFILE | O_DIRECTORY (a macro Swift does not import)
        let unnamed = FileSystem.open(folder, 0o20000000 | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o600)
        if unnamed >= 0 { return .success(unnamed) }
        let path = folder + "/.mixfx-unnamed-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).tmp"
        TemporaryFiles.remember(path)
        defer { TemporaryFiles.forget(path) }
        let fd = FileSystem.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(UnnamedFileError(reason: String(cString: strerror(errno)))) }
        PathBytes.withCString(path) { _ = unlink($0) }
        return .success(fd)
    }

    /// The folder for files that belong beside no file of the user's: `$TMPDIR`, else `/tmp`.
    public static var temporaryFolder: String {
        if let t = ProcessInfo.processInfo.environment["TMPDIR"], !t.isEmpty { return t }
        return "/tmp"
    }
}

/// Why an unnamed file could not be made (the system's words).
public struct UnnamedFileError: Error, Equatable {
    public let reason: String
}
