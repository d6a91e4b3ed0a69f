#if canImport(Glibc)
import Glibc
#endif

/// A closure run on a thread of its own, joined by the thread that started it (pthreads: the
/// engine does not use Foundation).
///
/// Used for the offline pipeline's workers (`TrackPipeline`) and for teardown at a render's end
/// that need not hold the render up (the spill's close, whose freeing of cached pages overlaps
/// the output's final rename: `SpillFile.closeConcurrently`).
/// `@unchecked Sendable`: `thread` is set by `start` and read by `join`, both on the starting
/// thread.
package final class SideThread: @unchecked Sendable {
    private var thread: pthread_t?

    private init() {}

    /// Starts `body` on a new thread; nil if the system refused one (then `body` did not run).
    package static func start(_ body: @escaping @Sendable () -> Void) -> SideThread? {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return nil
        }
        let side = SideThread()
        side.thread = t
        return side
    }

    /// Waits until the closure has returned (once; later calls return at once).
    package func join() {
        if let t = thread { pthread_join(t, nil) }
        thread = nil
    }

    deinit { join() }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
