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

/// What a signal did over time, in 100 ms steps: what a report plots.
public struct AnalysisHistory: Sendable, Equatable {
    /// Seconds per step (the loudness meter's 100 ms).
    public var stepSeconds: Double
    /// Per step, the smallest and largest sample over all channels (a waveform overview).
    public var minimum: [Float] = []
    public var maximum: [Float] = []
    /// Per step, the true peak, dBTP (−∞ for silence).
    public var truePeakDBTP: [Double] = []
    /// Per step, the short-term loudness (3 s window) at its end, LUFS.
    public var shortTermLUFS: [Double] = []
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
    private var steps: AnalysisHistory?
    private var stepMin: Float = 0, stepMax: Float = 0, stepFill = 0
    private var earlierTruePeak: Float = 0, earlierSamplePeak: Float = 0

    /// An analyzer for blocks of up to `maximumFrameCount` frames. Control side (allocates).
    public init(sampleRate: Int, channelCount: Int, maximumFrameCount: Int = 4096, keepsHistory: Bool = false) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.maximumFrameCount = maximumFrameCount
        loudness = LoudnessMeter(sampleRate: Double(sampleRate), channelCount: channelCount)
        truePeak = TruePeakMeter(channelCount: channelCount, maximumFrameCount: maximumFrameCount)
        sum = [Double](repeating: 0, count: channelCount)
        sumSquares = sum
        if keepsHistory { steps = AnalysisHistory(stepSeconds: Double(loudness.stepFrameCount) / Double(sampleRate)) }
    }

    /// The history so far (nil unless made with `keepsHistory`).
    public var history: AnalysisHistory? {
        guard var h = steps else { return nil }
        h.shortTermLUFS = loudness.shortTermSeriesLUFS
        return h
    }

    /// Frees the true-peak meter's history (once, when done).
    public func deallocate() { truePeak.deallocate() }

    /// Adds `frameCount` (≤ maximumFrameCount) frames of planar `buffer`.
    public mutating func process(_ buffer: AudioBuffer, frameCount n: Int) {
        let channel = { (c: Int) in UnsafePointer(buffer.channel(c)) }
        loudness.process(channel, frameCount: n)
        if steps == nil {
            truePeak.process(channel, frameCount: n)
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
            truePeak.process({ UnsafePointer(buffer.channel($0) + done) }, frameCount: m)
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
        steps!.minimum.append(stepMin)
        steps!.maximum.append(stepMax)
        steps!.truePeakDBTP.append(truePeak.peak > 0 ? 20 * log10(Double(truePeak.peak)) : -.infinity)
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
