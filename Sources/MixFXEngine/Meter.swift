import Synchronization

/// Levels of one signal, written by the render thread each block and read by any thread.
/// `peak` holds the largest absolute sample since the last `takePeak()`; `rms` the RMS of the
/// latest block.
public final class Meter: Sendable {
    private let peakBits = Atomic<UInt32>(0)
    private let rmsBits = Atomic<UInt32>(0)

    /// A meter at silence.
    public init() {}

    /// Render side.
    @inline(__always)
    func record(peak: Float, rms: Float) {
        let old = Float(bitPattern: peakBits.load(ordering: .relaxed))
        if peak > old { peakBits.store(peak.bitPattern, ordering: .relaxed) }
        rmsBits.store(rms.bitPattern, ordering: .relaxed)
    }

    /// The peak since the previous call (linear), resetting it. Any thread.
    public func takePeak() -> Float { Float(bitPattern: peakBits.exchange(0, ordering: .relaxed)) }

    /// The RMS of the latest block (linear). Any thread.
    public var rms: Float { Float(bitPattern: rmsBits.load(ordering: .relaxed)) }
}
