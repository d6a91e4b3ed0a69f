#if canImport(Glibc)
import Glibc
#endif

/// True peak (ITU-R BS.1770-4 Annex 2): the largest magnitude the signal reaches between its
/// samples, which a DAC's reconstruction (and every lossy encoder) sees and a sample peak misses:
/// a full-scale sine at fs/4 sampled at 45° peaks at −3.01 dBFS in its samples and 0 dBTP.
///
/// The signal is oversampled 4× (as BS.1770-4 asks) by a polyphase windowed-sinc interpolator:
/// the value a quarter, a half and three quarters of a sample after x[n − D] is
///
///     y_p[n] = Σ_{j=0}^{T−1} x[n − j] · sinc(j − D − p/4) · w(j − D − p/4),   p = 1, 2, 3
///
/// with T = 24 taps, D = 11 and w a Kaiser window (β = 8) over ±12 samples; p = 0 is the sample
/// itself. Passband: within 0.1 dB up to 0.9 of Nyquist (19.8 kHz at 44.1 kHz), so it reads
/// music's inter-sample peaks to about 0.1 dB. The meter's output is the largest |x| and |y_p|
/// over all channels since `reset`.
///
/// Not thread-safe: one thread at a time.
public struct TruePeakMeter {
    /// Taps per phase (a multiple of 8: three eight-lane vectors).
    public static let tapsPerPhase = 24
    /// The oversampling factor.
    public static let oversampling = 4
    static let kaiserBeta = 8.0

    /// The largest magnitude so far, linear (1 = full scale).
    public private(set) var peak: Float = 0
    /// The largest |sample| so far (the peak without oversampling), linear.
    public private(set) var samplePeak: Float = 0
    /// `peak` in dBTP (−∞ for silence).
    public var peakDBTP: Double { peak > 0 ? 20 * log10(Double(peak)) : -.infinity }

    private let channelCount: Int
    private let maximumFrameCount: Int
    /// Per phase 1...3, the taps in time order (oldest sample first), as eight-lane vectors
    /// (nine: three per phase).
    private let taps: UnsafeMutablePointer<SIMD8<Float>>
    /// Per channel: the last T − 1 samples, then the block.
    private let history: UnsafeMutablePointer<Float>
    /// The most an interpolated value can exceed the largest |x| it is made from: the largest
    /// Σ|taps| over the phases. A block whose largest |x| (with the history) times this is
    /// below the peak so far cannot raise it, so `process` skips its interpolation (exactly
    /// the same result, at a fraction of the cost once the loud parts have been seen).
    private let overshootBound: Float

    /// A meter for blocks of up to `maximumFrameCount` frames of `channelCount` channels.
    /// Control side (allocates).
    public init(channelCount: Int, maximumFrameCount: Int) {
        self.channelCount = channelCount
        self.maximumFrameCount = maximumFrameCount
        let t = TruePeakMeter.tapsPerPhase, d = Double(t / 2 - 1)
        var v: [SIMD8<Float>] = []
        for p in 1..<TruePeakMeter.oversampling {
            var row = [Float](repeating: 0, count: t)
            for k in 0..<t {
                let j = t - 1 - k   // row[k] multiplies x[n − j]
                let u = Double(j) - d - Double(p) / Double(TruePeakMeter.oversampling)
                row[k] = Float(TruePeakMeter.sinc(u) * TruePeakMeter.kaiser(u / Double(t / 2), beta: TruePeakMeter.kaiserBeta))
            }
            for g in stride(from: 0, to: t, by: 8) { v.append(SIMD8(row[g..<g + 8])) }
        }
        taps = .allocate(capacity: v.count)
        taps.initialize(from: v, count: v.count)
        overshootBound = (0..<(TruePeakMeter.oversampling - 1)).map { p in
            (0..<(t / 8)).reduce(Float(0)) { sum, g in
                let k = v[p * (t / 8) + g]
                return sum + (0..<8).reduce(Float(0)) { $0 + abs(k[$1]) }
            }
        }.max()! * 1.0001   // (a margin for the float sums' rounding)
        let stride = maximumFrameCount + t
        history = .allocate(capacity: channelCount * stride)
        history.initialize(repeating: 0, count: channelCount * stride)
    }

    /// Frees the history and the taps. (A struct with pointers: the owner calls it once.)
    public func deallocate() {
        history.deallocate()
        taps.deallocate()
    }

    /// Starts the peaks over (the next `peak` is of what follows), keeping the history so a
    /// peak between the blocks is still found.
    @_noAllocation @_noLocks
    public mutating func restartPeaks() {
        peak = 0
        samplePeak = 0
    }

    /// Back to silence and no history.
    public mutating func reset() {
        peak = 0
        samplePeak = 0
        history.update(repeating: 0, count: channelCount * (maximumFrameCount + TruePeakMeter.tapsPerPhase))
    }

    /// Measures `frameCount` (≤ maximumFrameCount) frames of planar `channels`.
    @_noAllocation @_noLocks
    public mutating func process(_ channels: (Int) -> UnsafePointer<Float>, frameCount: Int) {
        analyse(channels, frameCount: frameCount, framePeaks: nil)
    }

    /// The delay of `framePeaks`: the value written for frame n is the peak of the stretch just
    /// before and at frame n − `detectorDelayFrames`.
    public static let detectorDelayFrames = tapsPerPhase / 2 - 1

    /// Measures like `process`, and also writes, per frame n, the largest magnitude over every
    /// channel in (n − D − 1, n − D] (D = `detectorDelayFrames`): the sample x[n − D] and the
    /// three interpolated values before it. A limiter's detector (`Limiter`).
    @_noAllocation @_noLocks
    public mutating func framePeaks(_ channels: (Int) -> UnsafePointer<Float>, frameCount: Int,
                                    into peaks: UnsafeMutablePointer<Float>) {
        analyse(channels, frameCount: frameCount, framePeaks: peaks)
    }

    @_noAllocation @_noLocks
    private mutating func analyse(_ channels: (Int) -> UnsafePointer<Float>, frameCount: Int,
                                  framePeaks: UnsafeMutablePointer<Float>?) {
        let t = TruePeakMeter.tapsPerPhase
        let stride = maximumFrameCount + t
        var best: Float = 0
        var samplePeak: Float = self.samplePeak
        framePeaks?.update(repeating: 0, count: frameCount)
        // A meter skips the interpolation of each stretch of `chunk` frames that cannot raise
        // the peak (see `overshootBound`); a detector (`framePeaks`) computes every frame.
        let chunk = framePeaks == nil ? 64 : frameCount
        for c in 0..<channelCount {
            let h = history + c * stride
            let src = channels(c)
            vcopy(src, into: h + (t - 1), frameCount)
            for i in 0..<frameCount { samplePeak = max(samplePeak, abs(src[i])) }
            let raw = UnsafeRawPointer(h)
            let d = t - 1 - TruePeakMeter.detectorDelayFrames   // h[i + d] is x[n − D]
            var start = 0
            while start < frameCount {
                let end = min(frameCount, start + chunk)
                if framePeaks == nil {
                    // the frames' interpolators read h[start ..< end + T − 1]
                    var largest: Float = 0
                    for i in start..<(end + t - 1) { largest = max(largest, abs(h[i])) }
                    if largest * overshootBound <= max(peak, best) { start = end; continue }
                }
                do {
                    let k = taps
                    for i in start..<end {
                        let a = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                        let b = raw.loadUnaligned(fromByteOffset: (i + 8) * 4, as: SIMD8<Float>.self)
                        let e = raw.loadUnaligned(fromByteOffset: (i + 16) * 4, as: SIMD8<Float>.self)
                        let y1 = (a * k[0] + b * k[1] + e * k[2]).sum()
                        let y2 = (a * k[3] + b * k[4] + e * k[5]).sum()
                        let y3 = (a * k[6] + b * k[7] + e * k[8]).sum()
                        let v = max(max(abs(y1), abs(y2)), abs(y3))   // (the three-argument max builds an array)
                        best = max(best, v)
                        if let framePeaks {
                            framePeaks[i] = max(max(framePeaks[i], v), abs(h[i + d]))
                        }
                    }
                }
                start = end
            }
            // keep the last T − 1 samples for the next block
            vcopy(h + frameCount, into: h, t - 1)
        }
        self.samplePeak = samplePeak
        peak = max(max(peak, samplePeak), best)
    }

    static func sinc(_ x: Double) -> Double {
        x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
    }

    /// Kaiser window at x ∈ [−1, 1] (0 outside).
    static func kaiser(_ x: Double, beta: Double) -> Double {
        guard abs(x) <= 1 else { return 0 }
        return SincTable.besselI0(beta * (1 - x * x).squareRoot()) / SincTable.besselI0(beta)
    }
}
