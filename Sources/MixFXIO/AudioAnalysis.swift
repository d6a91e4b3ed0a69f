import Foundation
import MixFXDSP
import MixFXEngine

/// The measures mixfx reports for a signal: loudness (ITU-R BS.1770-4 / EBU R128), peaks, DC,
/// and how well two channels survive a sum to mono. Made by `AudioAnalyzer` from blocks of
/// samples (a file on disk with `analyze(path:)`).
public struct AudioAnalysis: Sendable, Equatable {
    /// Frames measured and their rate.
    public var frameCount: Int
    public var sampleRate: Int
    public var channelCount: Int
    /// Integrated loudness, LUFS (−∞: nothing above the gates).
    public var integratedLUFS: Double
    /// Loudness range, LU (EBU Tech 3342).
    public var loudnessRangeLU: Double
    /// Largest momentary (400 ms) and short-term (3 s) loudness, LUFS.
    public var momentaryMaxLUFS: Double
    public var shortTermMaxLUFS: Double
    /// True peak (4× oversampled), dBTP, and sample peak, dBFS (−∞ for silence).
    public var truePeakDBTP: Double
    public var samplePeakDBFS: Double
    /// Samples at or beyond full scale (|x| ≥ 32767/32768): clipped, or about to be.
    public var samplesAtFullScale: Int
    /// Mean of each channel (DC offset, linear).
    public var dcOffset: [Double]
    /// Pearson correlation of the two channels (1 for mono material; nil for one channel).
    public var correlation: Double?
    /// Level lost when the channels are summed to mono, dB: 0 for identical channels, 3 for
    /// uncorrelated ones, ∞ for opposite ones (nil for one channel). The mid signal (L+R)/2's
    /// power against the channels' mean power.
    public var monoSumLossDB: Double?
}

/// What a signal did over time, in steps of 100 ms or a power of two times that: what a report
/// plots.
///
/// At most `maximumPointCount` points, so a report's memory and size do not grow with the
/// session: when a point more would not fit, neighbours are merged in pairs and the step
/// doubles (the smallest of two minima, the largest of two maxima and true peaks, the power
/// mean of two short-term loudnesses, i.e. the mean of their energies). The last point may
/// cover fewer 100 ms steps than the others (the signal's end). Up to `maximumPointCount`
/// steps (6 min 49.6 s) every step is its own point.
public struct AnalysisHistory: Sendable, Equatable {
    /// The most points a series holds.
    public static let maximumPointCount = 4096
    /// Seconds per point (the loudness meter's 100 ms step, doubled as often as merged).
    public var stepSeconds: Double
    /// Per point, the smallest and largest sample over all channels (a waveform overview).
    public var minimum: [Float] = []
    public var maximum: [Float] = []
    /// Per point, the true peak, dBTP (−∞ for silence).
    public var truePeakDBTP: [Double] = []
    /// Per point, the short-term loudness (3 s window) at the end of its 100 ms steps, LUFS
    /// (merged points: the power mean of their steps').
    public var shortTermLUFS: [Double] = []
}

/// Builds an `AnalysisHistory` of at most `limit` points, step by step (see its notes).
struct HistoryRecorder {
    private(set) var history: AnalysisHistory
    /// Short-term energy per point (LUFS only when read, so merged points average energies).
    private var energies: [Double] = []
    private let limit: Int
    /// 100 ms steps per point, and the point being gathered.
    private var stepsPerPoint = 1
    private var pendingSteps = 0
    private var pendingMinimum: Float = 0, pendingMaximum: Float = 0, pendingPeak: Float = 0
    private var pendingEnergy = 0.0

    init(stepSeconds: Double, limit: Int) {
        precondition(limit >= 2 && limit % 2 == 0)
        history = AnalysisHistory(stepSeconds: stepSeconds)
        self.limit = limit
        history.minimum.reserveCapacity(limit); history.maximum.reserveCapacity(limit)
        history.truePeakDBTP.reserveCapacity(limit); energies.reserveCapacity(limit)
    }

    /// One 100 ms step: its extremes, true peak (linear) and short-term energy.
    mutating func append(minimum: Float, maximum: Float, truePeak: Float, energy: Double) {
        if pendingSteps == 0 {
            pendingMinimum = minimum; pendingMaximum = maximum; pendingPeak = truePeak; pendingEnergy = energy
        } else {
            pendingMinimum = min(pendingMinimum, minimum); pendingMaximum = max(pendingMaximum, maximum)
            pendingPeak = max(pendingPeak, truePeak); pendingEnergy += energy
        }
        pendingSteps += 1
        if pendingSteps == stepsPerPoint {
            // full: merge, and the steps gathered become the first half of a point of the new step
            if energies.count == limit { mergePairs() } else { appendPending() }
        }
    }

    private mutating func appendPending() {
        history.minimum.append(pendingMinimum)
        history.maximum.append(pendingMaximum)
        history.truePeakDBTP.append(HistoryRecorder.dB(pendingPeak))
        energies.append(pendingEnergy / Double(pendingSteps))
        pendingSteps = 0
    }

    private mutating func mergePairs() {
        let half = limit / 2
        for k in 0..<half {
            history.minimum[k] = min(history.minimum[2 * k], history.minimum[2 * k + 1])
            history.maximum[k] = max(history.maximum[2 * k], history.maximum[2 * k + 1])
            history.truePeakDBTP[k] = max(history.truePeakDBTP[2 * k], history.truePeakDBTP[2 * k + 1])
            energies[k] = (energies[2 * k] + energies[2 * k + 1]) / 2
        }
        history.minimum.removeLast(half); history.maximum.removeLast(half)
        history.truePeakDBTP.removeLast(half); energies.removeLast(half)
        stepsPerPoint *= 2
        history.stepSeconds *= 2
    }

    static func dB(_ peak: Float) -> Double { peak > 0 ? 20 * log10(Double(peak)) : -.infinity }

    /// The history so far, with a last point of the steps gathered for a point not yet full.
    var result: AnalysisHistory {
        var copy = self
        if copy.pendingSteps > 0 {
            if copy.energies.count == limit { copy.mergePairs() }
            copy.appendPending()
        }
        var h = copy.history
        h.shortTermLUFS = copy.energies.map { LoudnessMeter.lufs(energy: $0) }
        return h
    }
}

/// Accumulates an `AudioAnalysis` block by block. One thread at a time.
public struct AudioAnalyzer {
    public let sampleRate: Int
    public let channelCount: Int
    private var loudness: LoudnessMeter
    private var truePeak: TruePeakMeter
    private let maximumFrameCount: Int
    private var frames = 0
    private var atFullScale = 0
    private var sum: [Double], sumSquares: [Double]
    private var sumLR = 0.0, sumMid = 0.0
    /// With `keepsHistory`: the steps so far, the current step's extremes and fill.
    private var steps: HistoryRecorder?
    private var stepMin: Float = 0, stepMax: Float = 0, stepFill = 0
    private var earlierTruePeak: Float = 0, earlierSamplePeak: Float = 0

    /// An analyzer for blocks of up to `maximumFrameCount` frames. Control side (allocates).
    /// `historyPointLimit`: the most points the history's series hold (even; a test makes it small).
    public init(sampleRate: Int, channelCount: Int, maximumFrameCount: Int = 4096, keepsHistory: Bool = false,
                historyPointLimit: Int = AnalysisHistory.maximumPointCount) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.maximumFrameCount = maximumFrameCount
        loudness = LoudnessMeter(sampleRate: Double(sampleRate), channelCount: channelCount)
        truePeak = TruePeakMeter(channelCount: channelCount, maximumFrameCount: maximumFrameCount)
        sum = [Double](repeating: 0, count: channelCount)
        sumSquares = sum
        if keepsHistory {
            steps = HistoryRecorder(stepSeconds: Double(loudness.stepFrameCount) / Double(sampleRate), limit: historyPointLimit)
        }
    }

    /// The history so far (nil unless made with `keepsHistory`).
    public var history: AnalysisHistory? { steps?.result }

    /// Frees the true-peak meter's history (once, when done).
    public func deallocate() { truePeak.deallocate() }

    /// Adds `frameCount` (≤ maximumFrameCount) frames of planar `buffer`.
    public mutating func process(_ buffer: AudioBuffer, frameCount n: Int) {
        // (a closure handed to a checked function captures no reference: the channels' pointers)
        let planes = buffer.planes
        if steps == nil {
            loudness.measure({ UnsafePointer(planes[$0]) }, frameCount: n)
            truePeak.process({ UnsafePointer(planes[$0]) }, frameCount: n)
        } else {
            recordSteps(buffer, frameCount: n)
        }
        let fullScale: Float = 32767 / 32768
        for c in 0..<channelCount {
            let x = buffer.channel(c)
            var s = 0.0, q = 0.0
            for i in 0..<n {
                let v = Double(x[i])
                s += v; q += v * v
                if abs(x[i]) >= fullScale { atFullScale += 1 }
            }
            sum[c] += s; sumSquares[c] += q
        }
        if channelCount == 2 {
            let l = buffer.channel(0), r = buffer.channel(1)
            for i in 0..<n {
                let a = Double(l[i]), b = Double(r[i])
                sumLR += a * b
                sumMid += (a + b) * (a + b) / 4
            }
        }
        frames += n
    }

    /// The true peak and extremes of each 100 ms step.
    private mutating func recordSteps(_ buffer: AudioBuffer, frameCount n: Int) {
        let stepFrames = loudness.stepFrameCount
        var done = 0
        while done < n {
            let m = min(n - done, stepFrames - stepFill)
            // (the loudness meter split at the same step ends: the same sums as a whole block)
            let planes = buffer.planes
            loudness.measure({ UnsafePointer(planes[$0] + done) }, frameCount: m)
            truePeak.process({ UnsafePointer(planes[$0] + done) }, frameCount: m)
            for c in 0..<channelCount {
                let x = buffer.channel(c) + done
                if stepFill == 0 && c == 0 { stepMin = x[0]; stepMax = x[0] }
                for i in 0..<m { stepMin = min(stepMin, x[i]); stepMax = max(stepMax, x[i]) }
            }
            stepFill += m
            done += m
            if stepFill == stepFrames { finishStep() }
        }
    }

    private mutating func finishStep() {
        steps!.append(minimum: stepMin, maximum: stepMax, truePeak: truePeak.peak, energy: loudness.lastSeriesEnergy)
        earlierTruePeak = max(earlierTruePeak, truePeak.peak)
        earlierSamplePeak = max(earlierSamplePeak, truePeak.samplePeak)
        truePeak.restartPeaks()
        stepFill = 0
    }

    /// The measures so far.
    public var analysis: AudioAnalysis {
        let count = Double(max(frames, 1))
        var correlation: Double?, monoLoss: Double?
        if channelCount == 2 {
            let n = count
            let cov = sumLR / n - (sum[0] / n) * (sum[1] / n)
            let v0 = sumSquares[0] / n - pow(sum[0] / n, 2), v1 = sumSquares[1] / n - pow(sum[1] / n, 2)
            correlation = v0 > 0 && v1 > 0 ? cov / (v0 * v1).squareRoot() : 1
            let meanPower = (sumSquares[0] + sumSquares[1]) / 2
            monoLoss = meanPower > 0 ? (sumMid > 0 ? -10 * log10(sumMid / meanPower) : .infinity) : 0
        }
        let peakDB = { (x: Float) in x > 0 ? 20 * log10(Double(x)) : -.infinity }
        return AudioAnalysis(frameCount: frames, sampleRate: sampleRate, channelCount: channelCount,
                             integratedLUFS: loudness.integratedLUFS, loudnessRangeLU: loudness.loudnessRangeLU,
                             momentaryMaxLUFS: loudness.momentaryMaxLUFS, shortTermMaxLUFS: loudness.shortTermMaxLUFS,
                             truePeakDBTP: peakDB(max(earlierTruePeak, truePeak.peak)),
                             samplePeakDBFS: peakDB(max(earlierSamplePeak, truePeak.samplePeak)),
                             samplesAtFullScale: atFullScale, dcOffset: sum.map { $0 / count },
                             correlation: correlation, monoSumLossDB: monoLoss)
    }

    /// Analyzes a sound file (anything libsndfile reads), block by block: memory does not grow
    /// with its length.
    public static func analyze(path: String) throws(SoundFileError) -> AudioAnalysis {
        try analyze(path: path, reportedPath: path, keepsHistory: false).0
    }

    /// `analyze(path:)` with the history a report plots; errors name `reportedPath`.
    public static func analyzeWithHistory(path: String, reportedPath: String) throws(SoundFileError) -> (AudioAnalysis, AnalysisHistory) {
        let (a, h) = try analyze(path: path, reportedPath: reportedPath, keepsHistory: true)
        return (a, h!)
    }

    /// `analyzeWithHistory` of the open file `fd` (taken over: a render's own temporary output,
    /// read through its descriptor rather than its name).
    public static func analyzeWithHistory(descriptor fd: Int32, reportedPath: String) throws(SoundFileError) -> (AudioAnalysis, AnalysisHistory) {
        let reader = try SoundFileReader(descriptor: fd, path: reportedPath)
        let (a, h) = try analyze(reader, reportedPath: reportedPath, keepsHistory: true)
        return (a, h!)
    }

    static func analyze(path: String, reportedPath: String, keepsHistory: Bool) throws(SoundFileError) -> (AudioAnalysis, AnalysisHistory?) {
        try analyze(try SoundFileReader(path: path), reportedPath: reportedPath, keepsHistory: keepsHistory)
    }

    static func analyze(_ reader: SoundFileReader, reportedPath: String, keepsHistory: Bool) throws(SoundFileError) -> (AudioAnalysis, AnalysisHistory?) {
        let path = reportedPath
        let f = reader.format
        guard f.frameCount <= SourceFormat.maximumFrameCount else {
            throw .cannotOpen(path: path, reason: "a length of \(f.frameCount) frames (allowed: up to 2^40)")
        }
        // the rates a render takes, where the K-weighting is designed
        if let problem = AudioEngine.sourceSampleRateProblem(f.sampleRate) { throw .cannotOpen(path: path, reason: problem) }
        // the channels a render takes (the loudness meter's filters are one per channel, at most eight)
        guard f.channelCount >= 1 && f.channelCount <= SourceFormat.maximumChannelCount else {
            throw .cannotOpen(path: path, reason: "\(f.channelCount) channels (allowed: 1 to \(SourceFormat.maximumChannelCount), mono to 7.1)")
        }
        let block = 4096
        let buffer = AudioBuffer(channelCount: f.channelCount, capacityFrames: block)
        let dspCopy = DSPCopy.active   // the guard in the chosen DSP copy, as the render's tracks run it
        var analyzer = AudioAnalyzer(sampleRate: f.sampleRate, channelCount: f.channelCount, maximumFrameCount: block,
                                     keepsHistory: keepsHistory)
        defer { analyzer.deallocate() }
        while true {
            let n: Int
            do { n = try reader.read(into: buffer, offset: 0, frameCount: block) } catch {
                if case SoundFileError.readFailed(_, let reason) = error { throw .readFailed(path: reportedPath, reason: reason) }
                throw .readFailed(path: reportedPath, reason: "\(error)")
            }
            if n == 0 { break }
            for c in 0..<f.channelCount { _ = dspCopy.sanitize(buffer.channel(c), count: n) }
            analyzer.process(buffer, frameCount: n)
        }
        return (analyzer.analysis, analyzer.history)
    }
}
