#if canImport(Glibc)
import Glibc
#endif

/// A mutual-exclusion lock around a value, for control-side state shared by threads (caches
/// built once, registries). A pthread mutex, not `Synchronization.Mutex`: on Linux the latter
/// is a raw futex that ThreadSanitizer cannot see, so every access it guards is reported as a
/// race (`make test-tsan`). Never used on a render thread.
public final class ControlLock<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched between lock and unlock
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
