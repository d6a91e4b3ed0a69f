import Foundation
import MixFXEngine

/// What a finished (or planned) render did.
public struct RenderReport: Sendable, Equatable {
    /// The file written.
    public var outputPath: String
    /// Its container, sample format, rate and channels.
    public var format: OutputFormat
    /// Frames written: the longest track's length at the output rate.
    public var frameCount: Int
    /// Largest absolute sample before conversion (1.0 = 0 dBFS).
    public var peak: Float
    /// Samples clamped (integer output) or beyond ±1.0 (float).
    public var clippedSamples: Int
    /// Wall time of the render.
    public var elapsedSeconds: Double
    /// Latency each track's effects added and the render removed, in frames.
    public var trackLatencyFrames: [Int]
    /// Per track, input samples replaced by 0 because they were NaN, ±∞ or beyond ±10⁶.
    public var trackReplacedSamples: [Int] = []
    /// What was done about a mix that would clip (see `ClipPolicy`).
    public var clipPolicy: ClipPolicy = .avoid
    /// The gain applied to the whole mix so that nothing clips, dB (0: none was needed).
    public var appliedGainDB: Double = 0
    /// The mix's largest sample before that gain (equal to `peak` when none was applied).
    public var mixPeak: Float = 0
    /// The output's true peak (4× oversampled, BS.1770-4), dBTP, where it was measured (when a
    /// gain was applied); nil otherwise.
    public var truePeakDBTP: Double?
    /// True when the mix was needed again (it clipped, or was normalised) and could not be kept
    /// (no room for the spill): it was rendered again, to the same bytes.
    public var renderedTwice = false
    /// With `OfflineRenderer.normalizeLUFS`: the mix's integrated loudness before the gain, and
    /// the gain applied to reach the target (also in `appliedGainDB`).
    public var measuredLUFS: Double?
    /// The output's integrated loudness, where it was measured (normalised renders).
    public var integratedLUFS: Double?
    /// With `OfflineRenderer.measuresTracks`: each track's measures as it entered the mix (after
    /// its effects and mixer gains) and over time, and the written file's.
    public var trackMeasures: [AudioAnalysis] = []
    public var trackHistories: [AnalysisHistory] = []
    public var mixMeasures: AudioAnalysis?
    public var mixHistory: AnalysisHistory?
    /// Whether the written samples were TPDF-dithered.
    public var ditherApplied = false
    /// With a master limiter (`AudioEngine.masterLimiter`): its ceiling, dBTP.
    public var limiterCeilingDBTP: Double?
    /// The limiter's largest gain reduction, dB (0 when it never acted).
    public var limiterMaximumReductionDB: Double = 0
    /// Output frames the limiter turned down.
    public var limiterFramesLimited = 0

    /// The output's length, seconds.
    public var durationSeconds: Double { Double(frameCount) / Double(format.sampleRate) }
    /// The peak in dBFS (−∞ for silence).
    public var peakDBFS: Double { peak > 0 ? 20 * log10(Double(peak)) : -.infinity }
    /// Audio seconds rendered per second of wall time.
    public var speedTimesRealTime: Double { elapsedSeconds > 0 ? durationSeconds / elapsedSeconds : .infinity }
}
