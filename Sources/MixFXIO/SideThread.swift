import Foundation

/// A closure run on a thread of its own, for work at a render's end that need not hold up the
/// rest: the render thread goes on and `join`s it when it must know the work is done.
///
/// Used for teardown that is the kernel's work, not ours: closing the spill file (its cached
/// pages are freed then, about 3 ms for a minute of stereo on the 2-core benchmark machine)
/// while the output is moved into place. At the end of a render the workers have stopped, so a
/// core is free for it.
///
/// Where the system refuses a thread, the closure runs at once in the caller.
/// `@unchecked Sendable`: `thread` is set in `init` and read in `join`, both on the creating thread.
final class SideThread: @unchecked Sendable {
    private var thread: pthread_t?

    /// Starts `body`.
    init(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, box)
        if rc == 0 {
            thread = t
        } else {
            Unmanaged<Body>.fromOpaque(box).takeRetainedValue().run()
        }
    }

    /// Waits until the closure has run (at most once; later calls return at once).
    func join() {
        if let t = thread { pthread_join(t, nil) }
        thread = nil
    }

    deinit { join() }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
