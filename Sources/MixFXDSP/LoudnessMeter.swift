#if canImport(Glibc)
import Glibc
#endif

/// Loudness as ITU-R BS.1770-4 and EBU R128 define it (EBU Tech 3341, 3342): integrated
/// loudness (LUFS), loudness range (LU), and the largest momentary and short-term loudness.
///
/// Each channel is K-weighted (a high shelf of about +4 dB above 1.7 kHz, then a high-pass at
/// 38 Hz), squared and summed into 100 ms steps; the loudness of a window of energy z is
///
///     L = −0.691 + 10·log10(Σ_channels G_c · z_c)      (G = 1 for left, right and mono)
///
/// - momentary: 400 ms windows, short-term: 3 s windows, both every 100 ms;
/// - integrated: the 400 ms windows (75 % overlap) above −70 LUFS, then those above the mean of
///   these less 10 LU, averaged as energy;
/// - range (Tech 3342): the 3 s windows above −70 LUFS, then those above their energy mean
///   less 20 LU; the spread between their 10th and 95th percentiles.
///
/// The K-weighting filters are the standard's 48 kHz coefficients, recomputed for other rates
/// from their analog prototypes (the derivation libebur128 uses): stage 1 a shelf at
/// f0 = 1681.97 Hz, G = +4.00 dB, Q = 0.7072; stage 2 a high-pass at f0 = 38.135 Hz, Q = 0.5003.
///
/// Memory: one Double per 100 ms of signal (29 KB an hour), for the gating at the end. Not
/// thread-safe: one thread at a time.
public struct LoudnessMeter {
    /// Channels measured (1 or 2 here: mixfx's mixes).
    public let channelCount: Int
    /// Frames per second.
    public let sampleRate: Double
    private let stepFrames: Int
    private var filters: [KWeighting]
    private var stepEnergy = 0.0            // Σ weighted squares in the current 100 ms step
    private var stepFill = 0
    /// Mean-square energy of each finished 100 ms step (summed over channels).
    private var steps: [Double] = []
    /// Largest momentary and short-term loudness so far.
    public private(set) var momentaryMaxLUFS = -Double.infinity
    public private(set) var shortTermMaxLUFS = -Double.infinity
    /// Short-term loudness of the last 3 s (for a live display).
    public private(set) var shortTermLUFS = -Double.infinity

    /// A meter for `channelCount` channels at `sampleRate`. Control side (allocates).
    /// `keepingSteps`: keep only the last that many 100 ms steps (a live meter: 30 for the
    /// short-term loudness), so `process` never allocates; integrated loudness and range then
    /// cover only those.
    public init(sampleRate: Double, channelCount: Int, keepingSteps: Int? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        stepFrames = max(1, Int((sampleRate / 10).rounded()))
        filters = (0..<channelCount).map { _ in KWeighting(sampleRate: sampleRate) }
        keptSteps = keepingSteps
        steps.reserveCapacity(keepingSteps.map { $0 + 1 } ?? 36_000)
    }
    private let keptSteps: Int?

    /// Loudness of a mean-square energy, LUFS.
    @inline(__always)
    public static func lufs(energy z: Double) -> Double { z > 0 ? -0.691 + 10 * log10(z) : -.infinity }

    /// Measures `frameCount` frames of planar `channels`.
    public mutating func process(_ channels: (Int) -> UnsafePointer<Float>, frameCount: Int) {
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, stepFrames - stepFill)
            for c in 0..<channelCount {
                stepEnergy += filters[c].sumOfSquares(channels(c) + done, count: n)
            }
            stepFill += n
            done += n
            if stepFill == stepFrames { finishStep() }
        }
    }

    private mutating func finishStep() {
        steps.append(stepEnergy / Double(stepFrames))
        if let keptSteps, steps.count > keptSteps { steps.removeFirst() }   // (no allocation)
        stepEnergy = 0
        stepFill = 0
        if let m = window(steps: 4) { momentaryMaxLUFS = max(momentaryMaxLUFS, LoudnessMeter.lufs(energy: m)) }
        if let s = window(steps: 30) {
            shortTermLUFS = LoudnessMeter.lufs(energy: s)
            shortTermMaxLUFS = max(shortTermMaxLUFS, shortTermLUFS)
        }
    }

    /// Mean energy of the last `steps` finished steps (nil until there are that many).
    private func window(steps count: Int) -> Double? {
        guard steps.count >= count else { return nil }
        var sum = 0.0
        for z in steps[(steps.count - count)...] { sum += z }
        return sum / Double(count)
    }

    /// Frames in each 100 ms step.
    public var stepFrameCount: Int { stepFrames }

    /// The short-term loudness (3 s window) at the end of every finished 100 ms step, LUFS;
    /// during the first 3 s the window holds what there is (as a meter's display does).
    public var shortTermSeriesLUFS: [Double] {
        var out: [Double] = []
        out.reserveCapacity(steps.count)
        var sum = 0.0
        for (k, z) in steps.enumerated() {
            sum += z
            if k >= 30 { sum -= steps[k - 30] }
            out.append(LoudnessMeter.lufs(energy: max(0, sum) / Double(min(k + 1, 30))))
        }
        return out
    }

    /// Energies of every window of `count` steps, one per step.
    private func windows(of count: Int) -> [Double] {
        guard steps.count >= count else { return [] }
        var result: [Double] = []
        result.reserveCapacity(steps.count - count + 1)
        var sum = steps[0..<count].reduce(0, +)
        result.append(sum / Double(count))
        for i in count..<steps.count {
            sum += steps[i] - steps[i - count]
            result.append(sum / Double(count))
        }
        return result
    }

    /// Integrated loudness so far, LUFS (−∞ when nothing is above the gates).
    public var integratedLUFS: Double {
        let blocks = windows(of: 4).filter { LoudnessMeter.lufs(energy: $0) > -70 }
        guard !blocks.isEmpty else { return -.infinity }
        let relative = LoudnessMeter.lufs(energy: blocks.reduce(0, +) / Double(blocks.count)) - 10
        let gated = blocks.filter { LoudnessMeter.lufs(energy: $0) > relative }
        guard !gated.isEmpty else { return -.infinity }
        return LoudnessMeter.lufs(energy: gated.reduce(0, +) / Double(gated.count))
    }

    /// Loudness range so far, LU (EBU Tech 3342; 0 when fewer than two short-term windows pass
    /// the gates).
    public var loudnessRangeLU: Double {
        let blocks = windows(of: 30).filter { LoudnessMeter.lufs(energy: $0) > -70 }
        guard !blocks.isEmpty else { return 0 }
        let relative = LoudnessMeter.lufs(energy: blocks.reduce(0, +) / Double(blocks.count)) - 20
        let levels = blocks.map { LoudnessMeter.lufs(energy: $0) }.filter { $0 > relative }.sorted()
        guard levels.count > 1 else { return 0 }
        func percentile(_ p: Double) -> Double {
            let x = p * Double(levels.count - 1)
            let i = Int(x), f = x - Double(i)
            return i + 1 < levels.count ? levels[i] + f * (levels[i + 1] - levels[i]) : levels[i]
        }
        return percentile(0.95) - percentile(0.10)
    }
}

/// The K-weighting filter of one channel: two biquads in series, in double precision.
struct KWeighting {
    private var b: (Double, Double, Double, Double, Double, Double)   // stage 1 b0 b1 b2, stage 2 b0 b1 b2
    private var a: (Double, Double, Double, Double)                   // stage 1 a1 a2, stage 2 a1 a2
    private var s1 = (0.0, 0.0), s2 = (0.0, 0.0)                      // transposed direct form II states

    init(sampleRate fs: Double) {
        // stage 1: the shelf (analog prototype of BS.1770's 48 kHz pre-filter)
        let f0 = 1681.974450955533, gainDB = 3.999843853973347, q = 0.7071752369554196
        var k = tan(Double.pi * f0 / fs)
        let vh = pow(10, gainDB / 20), vb = pow(vh, 0.4996667741545416)
        var a0 = 1 + k / q + k * k
        let b10 = (vh + vb * k / q + k * k) / a0, b11 = 2 * (k * k - vh) / a0, b12 = (vh - vb * k / q + k * k) / a0
        let a11 = 2 * (k * k - 1) / a0, a12 = (1 - k / q + k * k) / a0
        // stage 2: the RLB high-pass
        let f1 = 38.13547087602444, q1 = 0.5003270373238773
        k = tan(Double.pi * f1 / fs)
        a0 = 1 + k / q1 + k * k
        let a21 = 2 * (k * k - 1) / a0, a22 = (1 - k / q1 + k * k) / a0
        b = (b10, b11, b12, 1, -2, 1)
        a = (a11, a12, a21, a22)
    }

    /// Filters `count` samples and returns Σ y² (the samples are not changed).
    mutating func sumOfSquares(_ x: UnsafePointer<Float>, count: Int) -> Double {
        var sum = 0.0
        var (p0, p1) = s1, (q0, q1) = s2
        for i in 0..<count {
            let v = Double(x[i])
            let y1 = b.0 * v + p0
            p0 = b.1 * v - a.0 * y1 + p1
            p1 = b.2 * v - a.1 * y1
            let y2 = b.3 * y1 + q0
            q0 = b.4 * y1 - a.2 * y2 + q1
            q1 = b.5 * y1 - a.3 * y2
            sum += y2 * y2
        }
        s1 = (p0, p1); s2 = (q0, q1)
        return sum
    }
}
