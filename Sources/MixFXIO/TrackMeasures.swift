import MixFXDSP
import MixFXEngine

/// Measures each track as it enters the mix (after its effects and the mixer's gains: its part
/// of the mix) for a render's report: an `AudioAnalyzer` with history per track, fed by the
/// kernel's `trackTap` on the render thread. Offline only.
final class TrackMeasures {
    private var analyzers: [AudioAnalyzer] = []
    private let scratch: AudioBuffer
    private let sampleRate: Int
    private let channelCount: Int
    private let blockFrames: Int
    private let trackCount: Int

    /// Measures for `kernel`'s tracks; call `restart` before each `kernel.start()`.
    init(kernel: RenderKernel) {
        sampleRate = kernel.layout.sampleRate
        channelCount = kernel.layout.channelCount
        blockFrames = kernel.maximumFrameCount
        trackCount = kernel.layout.tracks.count
        scratch = AudioBuffer(channelCount: channelCount, capacityFrames: blockFrames)
        kernel.trackTap = { [unowned self] k, left, right, gains, n in
            let l = scratch.channel(0)
            for i in 0..<n { l[i] = left[i] * gains.left }
            if channelCount > 1 {
                let r = scratch.channel(1)
                for i in 0..<n { r[i] = right[i] * gains.right }
            }
            analyzers[k].process(scratch, frameCount: n)
        }
    }

    deinit { for a in analyzers { a.deallocate() } }

    /// Starts every track's measures over (the kernel is about to render from the start).
    func restart() {
        for a in analyzers { a.deallocate() }
        analyzers = (0..<trackCount).map { _ in
            AudioAnalyzer(sampleRate: sampleRate, channelCount: channelCount, maximumFrameCount: blockFrames, keepsHistory: true)
        }
    }

    /// Each track's measures and history so far.
    var results: [(AudioAnalysis, AnalysisHistory)] { analyzers.map { ($0.analysis, $0.history!) } }
}
