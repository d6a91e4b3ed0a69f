import Foundation
import Synchronization

/// The temporary files mixfx has open right now, kept where a crash handler can reach them:
/// `removeAll()` only unlinks paths from memory allocated up front, so it is async-signal-safe
/// and a process dying of a fatal error (out of memory, say) still leaves no partial file.
public enum TemporaryFiles {
    static let slots = 32
    static let pathBytes = 4096
    // slot i is in use when its first byte is not 0
    nonisolated(unsafe) static let storage: UnsafeMutablePointer<CChar> = {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: slots * pathBytes)
        p.initialize(repeating: 0, count: slots * pathBytes)
        return p
    }()
    static let lock = Mutex(())

    /// Remembers `path` until `forget(path)`. Control side. (Paths past the slots or too long
    /// are not remembered: they are still removed on every ordinary way out.)
    public static func remember(_ path: String) {
        let bytes = PathBytes.bytes(path).map { CChar(bitPattern: $0) } + [0]
        guard bytes.count <= pathBytes else { return }
        lock.withLock { _ in
            for i in 0..<slots where storage[i * pathBytes] == 0 {
                bytes.withUnsafeBufferPointer { (storage + i * pathBytes).update(from: $0.baseAddress!, count: bytes.count) }
                return
            }
        }
    }

    /// Forgets `path` (it was committed or removed). Control side.
    public static func forget(_ path: String) {
        lock.withLock { _ in
            for i in 0..<slots where storage[i * pathBytes] != 0 && PathBytes.string(cString: storage + i * pathBytes) == path {
                storage[i * pathBytes] = 0
            }
        }
    }

    /// Sets up the table; call before installing a handler that calls `removeAll` (the table is
    /// a lazily made global: a crash inside its making must not be the first touch).
    public static func prepare() { _ = storage }

    /// Unlinks every remembered file. Safe in a signal handler: no allocation, no lock.
    public static func removeAll() {
        for i in 0..<slots where storage[i * pathBytes] != 0 { unlink(storage + i * pathBytes) }
    }
}
