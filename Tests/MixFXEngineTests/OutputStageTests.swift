import Foundation
import Testing
import MixFX
import TestSupport

/// The output stage (master gain → limiter → meters) removes its own latency: pre-rolled and
/// drained, its output is its input's length and aligned at frame 0, whatever the block sizes;
/// the kernel records a source's read error instead of throwing from `render`.
@Suite struct OutputStageTests {
    static let rate = 48_000

    /// Runs `x` (planar) through `stage` in blocks of `block` frames (the source hands out what
    /// is asked, but at most `sourceBlock` frames at a time: a live mix gives short blocks as a
    /// tempo glides).
    func run(_ stage: OutputStage, _ x: [[Float]], block: Int, sourceBlock: Int = .max) -> [[Float]] {
        let channels = x.count, frames = x[0].count
        let buffer = AudioBuffer(channelCount: channels, capacityFrames: 4096)
        var position = 0
        var out = [[Float]](repeating: [], count: channels)
        stage.reset()
        while true {
            let (b, n) = stage.render(frameCount: block) { (asked: Int) -> (AudioBuffer, Int) in
                let m = min(asked, sourceBlock, frames - position)
                for c in 0..<channels {
                    x[c].withUnsafeBufferPointer { buffer.channel(c).update(from: $0.baseAddress! + position, count: m) }
                }
                position += m
                return (buffer, m)
            }
            if n == 0 { break }
            #expect(n <= block)
            for c in 0..<channels { out[c] += UnsafeBufferPointer(start: b.channel(c), count: n) }
        }
        return out
    }

    func spec(_ channels: Int) -> ProcessSpec {
        ProcessSpec(sampleRate: Double(OutputStageTests.rate), maximumFrameCount: 4096, channelCount: channels)
    }

    /// The reference: the limiter alone over the input and `latencyFrames` of silence, its first
    /// `latencyFrames` output frames dropped.
    func limitedByHand(_ x: [[Float]], _ settings: LimiterSettings, gain: Float = 1) -> [[Float]] {
        var limiter = Limiter()
        limiter.prepare(spec(x.count), settings: settings)
        defer { limiter.deallocate() }
        let l = limiter.latencyFrames, frames = x[0].count
        let buffer = AudioBuffer(channelCount: x.count, capacityFrames: frames + l)
        for c in 0..<x.count {
            for i in 0..<frames { buffer.channel(c)[i] = x[c][i] * gain }
            (buffer.channel(c) + frames).update(repeating: 0, count: l)
        }
        var done = 0
        while done < frames + l {
            let n = min(4096, frames + l - done)
            let view = AudioBuffer(channelCount: x.count, capacityFrames: n)
            for c in 0..<x.count { view.channel(c).update(from: buffer.channel(c) + done, count: n) }
            limiter.process(view, frameCount: n)
            for c in 0..<x.count { (buffer.channel(c) + done).update(from: view.channel(c), count: n) }
            done += n
        }
        return (0..<x.count).map { c in Array(UnsafeBufferPointer(start: buffer.channel(c) + l, count: frames)) }
    }

    @Test(arguments: [(1, Int.max), (100, Int.max), (263, Int.max), (512, Int.max), (4000, Int.max), (4096, Int.max),
                      (4096, 300), (512, 7), (4000, 1)])
    func theLimitedOutputIsAlignedAndExactlyAsLong(block: Int, sourceBlock: Int) {
        let x = [Signals.noise(frames: 20_000, amplitude: 1.5, seed: 3), Signals.noise(frames: 20_000, amplitude: 1.5, seed: 4)]
        let settings = LimiterSettings(ceilingDBTP: -3)
        let stage = OutputStage(spec(2), limiter: settings)
        #expect(stage.latencyFrames == 240 + 12 + 11)   // 5 ms at 48 kHz, the interpolator's half, the detector's delay
        let y = run(stage, x, block: block, sourceBlock: sourceBlock)
        #expect(y[0].count == x[0].count && y[1].count == x[1].count)
        let same = y == limitedByHand(x, settings)
        #expect(same, "the stage's output is not the limiter's, aligned")
        #expect(stage.maximumGainReductionDB > 3 && stage.framesLimited > 0)
    }

    /// The master gain comes before the limiter; without a limiter the stage is the gain alone,
    /// with no latency (and no stage work at all at gain 1: the samples pass untouched).
    @Test func theGainComesBeforeTheLimiter() {
        let x = [Signals.noise(frames: 9_000, amplitude: 0.5, seed: 5)]
        let plain = OutputStage(spec(1), limiter: nil)
        #expect(plain.latencyFrames == 0)
        let untouched = run(plain, x, block: 1000) == x
        #expect(untouched)
        plain.gain = 0.25
        let scaled = run(plain, x, block: 1000) == [x[0].map { $0 * 0.25 }]
        #expect(scaled)
        let settings = LimiterSettings(ceilingDBTP: -1)
        let limited = OutputStage(spec(1), limiter: settings)
        limited.gain = 4
        let limitedAfterGain = run(limited, x, block: 700) == limitedByHand(x, settings, gain: 4)
        #expect(limitedAfterGain)
    }

    /// An input shorter than the latency still comes out whole: the pre-roll runs into the drain.
    @Test func anInputShorterThanTheLatency() {
        let x = [Signals.noise(frames: 100, amplitude: 1.5, seed: 6)]
        let settings = LimiterSettings(ceilingDBTP: -6)
        let stage = OutputStage(spec(1), limiter: settings)
        #expect(stage.latencyFrames > 100)
        let same = run(stage, x, block: 64) == limitedByHand(x, settings)
        #expect(same)
        #expect(run(stage, [[]], block: 64) == [[]])
    }

    /// A source that fails after `frames` frames.
    final class FailingSource: AudioSource, @unchecked Sendable {
        struct ReadError: Error, Equatable {}
        let format: SourceFormat
        let name = "failing"
        private var position = 0
        private let failAt: Int
        init(frames: Int, failAt: Int) {
            format = SourceFormat(sampleRate: OutputStageTests.rate, channelCount: 1, frameCount: frames)
            self.failAt = failAt
        }
        func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
            let n = min(frameCount, format.frameCount - position)
            if position + n > failAt { throw ReadError() }
            (buffer.channel(0) + offset).update(repeating: 0.25, count: n)
            position += n
            return n
        }
        func seek(toFrame frame: Int) throws { position = frame }
    }

    /// `render` does not throw: a track whose source fails records the error in `failure` and
    /// goes silent; the blocks before it are rendered as usual. Live and offline, one track
    /// and several (the offline pipeline's workers record it the same way).
    @Test(arguments: [RenderMode.offline, .live], [1, 3])
    func aReadErrorIsRecordedNotThrown(mode: RenderMode, tracks: Int) throws {
        let engine = AudioEngine()
        for k in 0..<tracks {
            _ = engine.addTrack(source: k == 0 ? FailingSource(frames: 48_000, failAt: 10_000)
                                               : MemorySource(channels: [[Float](repeating: 0.1, count: 48_000)], sampleRate: OutputStageTests.rate))
        }
        let kernel = try engine.makeKernel(maximumFrameCount: 1024, mode: mode)
        try kernel.start()
        var rendered = 0
        while kernel.failure == nil && rendered < 48_000 {
            let n = kernel.render(frameCount: 1024)
            if n == 0 { break }
            rendered += n
        }
        #expect(kernel.failure as? FailingSource.ReadError == FailingSource.ReadError())
        // (the offline pipeline renders at most `TrackPipeline.depth` = 4 blocks ahead of the mix)
        #expect(rendered >= 5 * 1024 && rendered < 48_000, "rendered \(rendered)")
    }
}
