#if canImport(Glibc)
import Glibc
#endif
import MixFXDSP
import Synchronization

/// What the master bus measures live, written by the render thread each block and read by any
/// thread (the terminal mixer): the short-term loudness, the true peak and the limiter's gain.
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

    @inline(__always)
    func record(shortTermLUFS: Double, truePeak: Float, limiterGain: Float) {
        shortTermBits.store(shortTermLUFS.bitPattern, ordering: .relaxed)
        truePeakBits.max(truePeak.bitPattern, ordering: .relaxed)   // non-negative floats order as their bits
        gainBits.store(limiterGain.bitPattern, ordering: .relaxed)
    }
}

/// The master bus as a live kernel runs it after the mix: the limiter (when the engine has a
/// `LimiterNode`; its ceiling read once per block) and the meters (`MasterMeter`). Offline the
/// renderer runs the same `Limiter` over the mix itself, so it can remove its delay and place it
/// after a normalisation gain (`MixFXIO.OfflineRenderer`).
///
/// `init` allocates; `process` does not allocate, lock or throw.
struct MasterSection {
    private var limiter: Limiter?
    private let limiterNode: LimiterNode?
    private var loudness: LoudnessMeter
    private var truePeak: TruePeakMeter
    let meter: MasterMeter

    init(layout: EngineLayout, maximumFrameCount: Int, meter: MasterMeter) {
        let spec = ProcessSpec(sampleRate: Double(layout.sampleRate), maximumFrameCount: maximumFrameCount,
                               channelCount: layout.channelCount)
        limiterNode = layout.masterLimiter
        if let node = layout.masterLimiter {
            var l = Limiter()
            l.prepare(spec, settings: node.settings)
            limiter = l
        }
        loudness = LoudnessMeter(sampleRate: spec.sampleRate, channelCount: spec.channelCount, keepingSteps: 30)
        truePeak = TruePeakMeter(channelCount: spec.channelCount, maximumFrameCount: maximumFrameCount)
        self.meter = meter
    }

    /// Frees the limiter and meter state (once, by the owner).
    mutating func deallocate() {
        limiter?.deallocate()
        truePeak.deallocate()
    }

    /// The delay the limiter adds, frames (0 without one).
    var latencyFrames: Int { limiter?.latencyFrames ?? 0 }

    /// Silence in the limiter (a seek or restart).
    mutating func reset() { limiter?.reset() }

    /// Limits and measures `frameCount` frames of `buffer` in place.
    mutating func process(_ buffer: AudioBuffer, frameCount: Int) {
        if limiter != nil, let node = limiterNode {
            limiter!.setCeiling(dBTP: node.ceilingParameter.clampedValue)
            limiter!.process(buffer, frameCount: frameCount)
        }
        let channel = { (c: Int) in UnsafePointer(buffer.channel(c)) }
        loudness.process(channel, frameCount: frameCount)
        truePeak.restartPeaks()
        truePeak.process(channel, frameCount: frameCount)
        meter.record(shortTermLUFS: loudness.shortTermLUFS, truePeak: truePeak.peak, limiterGain: limiter?.currentGain ?? 1)
    }
}
