import Synchronization

/// Levels of one signal, written by the render thread each block and read by any thread.
/// `peak` holds the largest absolute sample since the last `takePeak()`; `rms` the RMS of the
/// latest block over the output channels (a track's: of its contribution to the mix, so a mono
/// track reads the same at every pan position of the constant-power law).
public final class Meter: Sendable {
    private let peakBits = Atomic<UInt32>(0)
    private let rmsBits = Atomic<UInt32>(0)

    /// A meter at silence.
    public init() {}

    /// Render side (checked: `@_noAllocation`/`@_noLocks`).
    @inline(__always) @_noAllocation @_noLocks
    func record(peak: Float, rms: Float) {
        // one atomic max (a load and a store could lose a peak to a concurrent `takePeak`); the
        // bit patterns of non-negative floats order as the floats do
        peakBits.max(peak.bitPattern, ordering: .relaxed)
        rmsBits.store(rms.bitPattern, ordering: .relaxed)
    }

    /// The peak since the previous call (linear), resetting it. Any thread.
    public func takePeak() -> Float { Float(bitPattern: peakBits.exchange(0, ordering: .relaxed)) }

    /// The RMS of the latest block (linear). Any thread.
    public var rms: Float { Float(bitPattern: rmsBits.load(ordering: .relaxed)) }
}
