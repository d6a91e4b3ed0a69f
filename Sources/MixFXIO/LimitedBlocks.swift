import MixFXDSP

/// A stream of blocks run through a `Limiter` with its delay removed, as offline rendering
/// needs: the first `latencyFrames` frames out of the limiter (silence from before the start)
/// are dropped and the limiter is drained with as much silence at the end, so the output has
/// exactly the input's length and is aligned with it at frame 0.
final class LimitedBlocks {
    private var limiter = Limiter()
    private let source: () throws -> (AudioBuffer, Int)
    private let silence: AudioBuffer
    private let out: AudioBuffer
    private var toDrop: Int
    private var toDrain: Int
    private var ended = false

    /// Limits the blocks `source` returns ((buffer, frames); 0 frames at the end), each at most
    /// `maximumFrameCount` frames.
    init(settings: LimiterSettings, sampleRate: Int, channelCount: Int, maximumFrameCount: Int,
         source: @escaping () throws -> (AudioBuffer, Int)) {
        limiter.prepare(ProcessSpec(sampleRate: Double(sampleRate), maximumFrameCount: maximumFrameCount,
                                    channelCount: channelCount), settings: settings)
        self.source = source
        silence = AudioBuffer(channelCount: channelCount, capacityFrames: maximumFrameCount)
        out = AudioBuffer(channelCount: channelCount, capacityFrames: maximumFrameCount)
        toDrop = limiter.latencyFrames
        limiter.statisticsStartFrame = limiter.latencyFrames
        toDrain = limiter.latencyFrames
    }

    deinit { limiter.deallocate() }

    /// The largest gain reduction so far, dB, and the frames limited.
    var maximumGainReductionDB: Double { limiter.maximumGainReductionDB }
    var framesLimited: Int { limiter.framesLimited }

    /// The next limited block (0 frames at the end). The buffer is valid until the next call.
    func next() throws -> (AudioBuffer, Int) {
        while true {
            var (block, n) = ended ? (silence, 0) : try source()
            if n == 0 {
                ended = true
                guard toDrain > 0 else { return (out, 0) }
                n = min(toDrain, silence.capacityFrames)
                silence.clear(frameCount: n)
                block = silence
                toDrain -= n
            }
            limiter.process(block, frameCount: n)
            let dropped = min(toDrop, n)
            toDrop -= dropped
            if dropped == n { continue }
            if dropped == 0 { return (block, n) }
            for c in 0..<block.channelCount {
                out.channel(c).update(from: block.channel(c) + dropped, count: n - dropped)
            }
            return (out, n - dropped)
        }
    }
}
