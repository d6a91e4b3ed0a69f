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

    /// An analyzer for blocks of up to `maximumFrameCount` frames. Control side (allocates).
    public init(sampleRate: Int, channelCount: Int, maximumFrameCount: Int = 4096) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.maximumFrameCount = maximumFrameCount
        loudness = LoudnessMeter(sampleRate: Double(sampleRate), channelCount: channelCount)
        truePeak = TruePeakMeter(channelCount: channelCount, maximumFrameCount: maximumFrameCount)
        sum = [Double](repeating: 0, count: channelCount)
        sumSquares = sum
    }

    /// Frees the true-peak meter's history (once, when done).
    public func deallocate() { truePeak.deallocate() }

    /// Adds `frameCount` (≤ maximumFrameCount) frames of planar `buffer`.
    public mutating func process(_ buffer: AudioBuffer, frameCount n: Int) {
        let channel = { (c: Int) in UnsafePointer(buffer.channel(c)) }
        loudness.process(channel, frameCount: n)
        truePeak.process(channel, frameCount: n)
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
                             truePeakDBTP: truePeak.peakDBTP, samplePeakDBFS: peakDB(truePeak.samplePeak),
                             samplesAtFullScale: atFullScale, dcOffset: sum.map { $0 / count },
                             correlation: correlation, monoSumLossDB: monoLoss)
    }

    /// Analyzes a sound file (anything libsndfile reads), block by block: memory does not grow
    /// with its length.
    public static func analyze(path: String) throws(SoundFileError) -> AudioAnalysis {
        let reader = try SoundFileReader(path: path)
        let f = reader.format
        guard f.frameCount <= SourceFormat.maximumFrameCount else {
            throw .cannotOpen(path: path, reason: "a length of \(f.frameCount) frames (allowed: up to 2^40)")
        }
        let block = 4096
        let buffer = AudioBuffer(channelCount: f.channelCount, capacityFrames: block)
        var analyzer = AudioAnalyzer(sampleRate: f.sampleRate, channelCount: f.channelCount, maximumFrameCount: block)
        defer { analyzer.deallocate() }
        while true {
            let n: Int
            do { n = try reader.read(into: buffer, offset: 0, frameCount: block) } catch {
                throw .readFailed(path: path, reason: "\(error)")
            }
            if n == 0 { break }
            for c in 0..<f.channelCount { _ = SampleGuard.sanitize(buffer.channel(c), count: n) }
            analyzer.process(buffer, frameCount: n)
        }
        return analyzer.analysis
    }
}
