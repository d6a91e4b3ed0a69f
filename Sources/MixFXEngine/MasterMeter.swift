#if canImport(Glibc)
import Glibc
#endif
import MixFXDSP
import Synchronization

/// What the output stage measures live (`OutputStage`, with meters), written by the render
/// thread each block and read by any thread (the terminal mixer): the short-term loudness, the
/// true peak and the limiter's gain.
public final class MasterMeter: Sendable {
    private let shortTermBits = Atomic<UInt64>((-Double.infinity).bitPattern)
    private let truePeakBits = Atomic<UInt32>(0)
    private let gainBits = Atomic<UInt32>(Float(1).bitPattern)

    /// A meter at silence.
    public init() {}

    /// Short-term loudness (3 s window, BS.1770-4) of the master output, LUFS (−∞ at first).
    public var shortTermLUFS: Double { Double(bitPattern: shortTermBits.load(ordering: .relaxed)) }
    /// The largest true peak since the last call, linear (4× oversampled), resetting it.
    public func takeTruePeak() -> Float { Float(bitPattern: truePeakBits.exchange(0, ordering: .relaxed)) }
    /// The limiter's gain now, dB (0 when it is not limiting or there is none).
    public var limiterGainDB: Double {
        let g = Float(bitPattern: gainBits.load(ordering: .relaxed))
        return g < 1 ? 20 * log10(Double(g)) : 0
    }

    /// Render side (checked: `@_noAllocation`/`@_noLocks`).
    @inline(__always) @_noAllocation @_noLocks
    func record(shortTermLUFS: Double, truePeak: Float, limiterGain: Float) {
        shortTermBits.store(shortTermLUFS.bitPattern, ordering: .relaxed)
        truePeakBits.max(truePeak.bitPattern, ordering: .relaxed)   // non-negative floats order as their bits
        gainBits.store(limiterGain.bitPattern, ordering: .relaxed)
    }
}
