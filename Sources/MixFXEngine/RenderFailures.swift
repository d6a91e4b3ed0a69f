import Synchronization

/// The errors a kernel's tracks met while rendering (a source that could not be read), kept
/// for the thread that drives the render: the render entry points do not throw (see
/// `RenderKernel.render`), so a track that fails records why and renders silence, and the
/// driver checks `first` after each block (an offline renderer stops with it; a live player
/// stops and reports it).
///
/// Recording takes a lock, but only on the failure path, which ends the render; reading
/// `first` on the normal path is one atomic load. Any thread.
final class RenderFailures: Sendable {
    private let failed = Atomic<Bool>(false)
    private let errors = Mutex<(any Error)?>(nil)

    /// The first error recorded, if any.
    var first: (any Error)? {
        guard failed.load(ordering: .acquiring) else { return nil }
        return errors.withLock { $0 }
    }

    /// Records `error` unless an earlier one is kept.
    func record(_ error: any Error) {
        errors.withLock { if $0 == nil { $0 = error } }
        failed.store(true, ordering: .releasing)
    }
}
