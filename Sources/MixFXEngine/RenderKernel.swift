import MixFXDSP

/// The one render entry point: renders the whole graph block by block into `output`.
///
/// Offline use: `start()`, then `render(frameCount:)` until it returns 0. `start()` pre-rolls each
/// track by its latency so block 0 is aligned with sample 0 of the inputs, and the mix ends after
/// exactly `layout.frameCount` frames. The result does not depend on the block sizes.
///
/// Threading: call from one thread at a time (the render thread). Node parameters may change from
/// any thread; EQ, volume and pan changes are picked up at the next block.
public final class RenderKernel: @unchecked Sendable {
    public let layout: EngineLayout
    public let maximumFrameCount: Int
    /// The mix (planar, `layout.channelCount` channels) of the last `render` call.
    public let output: AudioBuffer
    private let tracks: [TrackKernel]
    public private(set) var framesRendered = 0

    init(layout: EngineLayout, maximumFrameCount: Int) {
        self.layout = layout
        self.maximumFrameCount = maximumFrameCount
        output = AudioBuffer(channelCount: layout.channelCount, capacityFrames: maximumFrameCount)
        tracks = layout.tracks.map {
            TrackKernel(layout: $0, outputRate: layout.sampleRate, maximumFrameCount: maximumFrameCount)
        }
    }

    /// The latency each track's effects add (removed by `start()` offline).
    public var trackLatencyFrames: [Int] { tracks.map(\.latencyFrames) }

    /// Rewinds every source and pre-rolls every track by its latency.
    public func start() throws {
        framesRendered = 0
        for t in tracks {
            try t.reset()
            var left = t.latencyFrames
            while left > 0 {
                let n = min(left, maximumFrameCount)
                try t.render(frameCount: n)
                left -= n
            }
        }
    }

    /// Renders up to `frameCount` (≤ `maximumFrameCount`) frames of the mix into `output`; returns
    /// the frames rendered, fewer at the end of the mix and 0 after it.
    public func render(frameCount: Int) throws -> Int {
        let n = min(frameCount, maximumFrameCount, layout.frameCount - framesRendered)
        guard n > 0 else { return 0 }
        let outChannels = layout.channelCount
        output.clear(frameCount: n)
        let master = layout.mixer.outputVolumeParameter.clampedValue
        let outL = output.channel(0)
        let outR = outChannels > 1 ? output.channel(1) : outL
        for t in tracks {
            try t.render(frameCount: n)
            let volume = t.layout.player.volumeParameter.clampedValue * master
            let pan = t.layout.player.panParameter.clampedValue
            if outChannels == 1 {
                accumulate(t.buffer.channel(0), into: outL, gain: Float(volume), count: n)
            } else if t.channelCount == 1 {
                let g = PanLaw.monoGains(pan: pan)
                accumulate(t.buffer.channel(0), into: outL, gain: Float(volume * g.left), count: n)
                accumulate(t.buffer.channel(0), into: outR, gain: Float(volume * g.right), count: n)
            } else {
                let g = PanLaw.balanceGains(pan: pan)
                accumulate(t.buffer.channel(0), into: outL, gain: Float(volume * g.left), count: n)
                accumulate(t.buffer.channel(1), into: outR, gain: Float(volume * g.right), count: n)
            }
        }
        framesRendered += n
        return n
    }
}

/// out[i] += gain·x[i]; a gain of exactly 1 adds the samples unchanged.
@inline(__always)
func accumulate(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, gain: Float, count: Int) {
    if gain == 1 {
        for i in 0..<count { out[i] += x[i] }
    } else if gain != 0 {
        for i in 0..<count { out[i] += gain * x[i] }
    }
}
