import Foundation
import MixFX

/// The lock a batch holds on one job while it checks, renders and records it:
/// `OUTPUT.mixfx-batch.lock`, beside the output, locked with `flock`.
///
/// Two runs of the same manifest at once (a cluster task resubmitted while the first still
/// runs) would otherwise both render a job and each find the other's files at its names. With
/// the lock, a job another live run holds is left to that run (`busy`); a lock file nobody holds
/// is a run that is gone (killed), and is taken over. The lock is released when the process
/// ends however it ends (the kernel drops it), and its file is removed by the run that held it.
///
/// The file is created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`); one that is already there
/// is opened only when it is a regular file, never through a link, and is used only while the
/// name is still the file locked (the holder removes the name before it unlocks).
final class BatchJobLock {
    /// What trying to lock a job gave.
    enum Attempt {
        /// This run holds the job's lock now.
        case acquired(BatchJobLock)
        /// Another live run holds it; the text names that run (pid and host), if it said.
        case busy(holder: String)
        /// The folder does not let this process create the lock file (read-only, no permission)
        /// or is missing: the job goes on without a lock (it can only be skipped or fail on its
        /// own check, which names the folder: its files cannot be written there either).
        case unavailable
        /// The name is something else (a link, a folder): the job fails with this reason.
        case refused(String)
    }

    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    private var held = true

    /// Locks the job whose lock file is `path` (see the type's notes); never waits.
    static func acquire(_ path: String) -> Attempt {
        for _ in 0..<16 {
            var created = true
            var fd = FileSystem.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0o644)
            if fd < 0 && errno == EEXIST {
                created = false
                guard let l = FileSystem.linkStatus(path) else { continue }   // (gone meanwhile: create it)
                if let reason = refusal(path, l) { return .refused(reason) }
                fd = FileSystem.open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
                // (another user's lock, in a folder both write: read-only still locks)
                if fd < 0 && errno == EACCES { fd = FileSystem.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
                if fd < 0 && errno == ENOENT { continue }
                if fd >= 0 && !BatchJobLock.looksLikeALock(fd) {
                    close(fd)
                    return .refused(notALock(path))
                }
            }
            guard fd >= 0 else {
                let e = errno
                // (ENOENT, ENOTDIR: the output's folder is missing; the job's own check then
                // names the folder, and nothing is written)
                if e == EACCES || e == EROFS || e == EPERM || e == ENOENT || e == ENOTDIR { return .unavailable }
                return .refused("cannot open its lock file '\(path)': \(String(cString: strerror(e)))")
            }
            var mine = stat()
            guard fstat(fd, &mine) == 0, (mine.st_mode & S_IFMT) == S_IFREG else {
                close(fd)
                return .refused("its lock file '\(path)' is not a regular file (remove it)")
            }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let e = errno
                if e == EWOULDBLOCK {
                    let holder = BatchJobLock.holder(fd)
                    close(fd)
                    return .busy(holder: holder)
                }
                // no locks on this file system (some network mounts): as before locks, unlocked
                if created { _ = PathBytes.withCString(path) { unlink($0) } }
                close(fd)
                return .unavailable
            }
            // the name must still be the file locked: its last holder removes it before unlocking
            guard let there = FileSystem.linkStatus(path), there.st_dev == mine.st_dev, there.st_ino == mine.st_ino else {
                close(fd)
                continue
            }
            let text = Array("pid \(getpid()) on \(ProcessInfo.processInfo.hostName)\n".utf8)
            _ = ftruncate(fd, 0)
            _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress!, $0.count, 0) }
            return .acquired(BatchJobLock(path: path, descriptor: fd))
        }
        return .refused("its lock file '\(path)' kept being replaced by other processes")
    }

    /// Why the file at `path` (its `lstat`) is not one a batch would lock, or nil: only a
    /// regular file a batch left there is taken over (one name, no hard link to another file;
    /// a few bytes).
    private static func refusal(_ path: String, _ l: stat) -> String? {
        guard (l.st_mode & S_IFMT) == S_IFREG else {
            let kind = (l.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : RegularFile.irregularKind(l.st_mode).map { "a \($0)" } ?? "not a regular file"
            return "its lock file '\(path)' is \(kind); a batch uses only a regular file there (remove it)"
        }
        return l.st_nlink == 1 && l.st_size < 256 ? nil : notALock(path)
    }

    private static func notALock(_ path: String) -> String {
        "'\(path)' exists and is not a mixfx batch's lock file; a batch keeps it (remove it if it is not needed)"
    }

    /// For `--check`: why a run would refuse the job's lock file at `path` (a folder, a link,
    /// a file no batch left there), or nil (nothing there, or a lock a batch left or holds).
    /// Opens nothing for writing and locks nothing.
    static func check(_ path: String) -> String? {
        guard let l = FileSystem.linkStatus(path) else { return nil }
        if let reason = refusal(path, l) { return reason }
        let fd = FileSystem.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }   // (unreadable: another user's lock; the run decides)
        defer { close(fd) }
        return looksLikeALock(fd) ? nil : notALock(path)
    }

    /// Whether the open file holds what a batch writes in its lock file: nothing, or "pid ...".
    private static func looksLikeALock(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, 0) }
        return n == 0 || (n > 4 && buffer[0..<4] == Array("pid ".utf8)[0..<4])
    }

    /// What the holder wrote in the lock file ("pid N on HOST"), or "another mixfx batch".
    private static func holder(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, 0) }
        let text = n > 0 ? String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        let shown = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } ? text : ""
        return shown.hasPrefix("pid ") ? "another mixfx batch (\(shown))" : "another mixfx batch"
    }

    /// Removes the lock file (while it is still the file locked) and unlocks. Idempotent.
    func release() {
        guard held else { return }
        held = false
        var mine = stat()
        if fstat(descriptor, &mine) == 0, let there = FileSystem.linkStatus(path),
           there.st_dev == mine.st_dev, there.st_ino == mine.st_ino {
            _ = PathBytes.withCString(path) { unlink($0) }
        }
        close(descriptor)
    }
}
