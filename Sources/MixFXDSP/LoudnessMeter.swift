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
/// See `KWeighting` for how each rate is designed; `sampleRateRange` is where it is defined.
///
/// Memory: one Double per 100 ms of signal (29 KB an hour) when it keeps every step, for the
/// gating at the end. Not thread-safe: one thread at a time.
///
/// Two ways in: `process` measures into a ring of the last `ringSteps` steps (the momentary and
/// short-term windows, the display series) and nothing else, so the compiler checks that it
/// allocates nothing and takes no lock (`@_noAllocation`/`@_noLocks`): the live meter's path
/// (`keepingSteps`). `measure` does the same and copies every finished step into the history
/// that integrated loudness and range are gated over (offline analysis; it may allocate).
public struct LoudnessMeter {
    /// Channels measured (1 or 2 here: mixfx's mixes; at most `maximumChannelCount`).
    public let channelCount: Int
    /// Frames per second.
    public let sampleRate: Double
    private let stepFrames: Int
    /// One K-weighting filter per channel (the first `channelCount`).
    private var filters: InlineArray<8, KWeighting>
    /// The most channels a meter measures (a 7.1 source).
    public static let maximumChannelCount = 8
    private var stepEnergy = 0.0            // Σ weighted squares in the current 100 ms step
    private var stepFill = 0
    /// Mean-square energy of the last `ringSteps` finished 100 ms steps (summed over channels):
    /// step k (counting from 0) is at k mod `ringSteps`.
    private var ring: InlineArray<32, Double> = .init(repeating: 0)
    /// Steps the ring holds: the short-term window (30) and the one leaving it.
    public static let ringSteps = 32
    /// A meter that keeps every step (`measure`): all of them, in order.
    private var history: [Double] = []
    /// Largest momentary and short-term loudness so far.
    public private(set) var momentaryMaxLUFS = -Double.infinity
    public private(set) var shortTermMaxLUFS = -Double.infinity
    /// Short-term loudness of the last 3 s (for a live display).
    public private(set) var shortTermLUFS = -Double.infinity

    /// A meter for `channelCount` channels at `sampleRate`. Control side (allocates).
    /// `keepingSteps`: keep only the last that many 100 ms steps (a live meter: 30 for the
    /// short-term loudness; at most `ringSteps`), measured with `process`, which never
    /// allocates; integrated loudness and range then cover only those. Nil: every step, measured
    /// with `measure`.
    public init(sampleRate: Double, channelCount: Int, keepingSteps: Int? = nil) {
        precondition(Double(LoudnessMeter.sampleRateRange.lowerBound) <= sampleRate
                     && sampleRate <= Double(LoudnessMeter.sampleRateRange.upperBound),
                     "LoudnessMeter: \(sampleRate) Hz is outside \(LoudnessMeter.sampleRateRange)")
        precondition(channelCount >= 1 && channelCount <= LoudnessMeter.maximumChannelCount,
                     "LoudnessMeter: \(channelCount) channels (1 to \(LoudnessMeter.maximumChannelCount))")
        precondition(keepingSteps.map { $0 >= 1 && $0 <= LoudnessMeter.ringSteps } ?? true,
                     "LoudnessMeter: keeps 1 to \(LoudnessMeter.ringSteps) steps, or all")
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        stepFrames = max(1, Int((sampleRate / 10).rounded()))
        filters = .init(repeating: KWeighting(sampleRate: sampleRate))
        keptSteps = keepingSteps
        if keepingSteps == nil { history.reserveCapacity(36_000) }
    }
    private let keptSteps: Int?

    /// The sample rates the K-weighting is designed for, Hz: every rate a mixfx source may have
    /// (`AudioEngine.sourceSampleRateRange` is this range), so `analyze` measures whatever
    /// `render` takes.
    public static let sampleRateRange = 1000...768_000

    /// Loudness of a mean-square energy, LUFS.
    @inline(__always) @_noAllocation @_noLocks
    public static func lufs(energy z: Double) -> Double { z > 0 ? -0.691 + 10 * Libm.log10(z) : -.infinity }

    /// Measures `frameCount` frames of planar `channels` into the ring (a meter made with
    /// `keepingSteps`; one that keeps every step is fed through `measure`). Render side.
    /// Returns `shortTermLUFS` after the block: what a live display shows (read here, as a
    /// checked caller cannot copy the meter out of where it keeps it).
    @_noAllocation @_noLocks @discardableResult
    public mutating func process(_ channels: (Int) -> UnsafePointer<Float>, frameCount: Int) -> Double {
        let bounded = keptSteps != nil
        precondition(bounded, "LoudnessMeter.process is for a meter keeping some steps; measure keeps every step")
        run(channels, frameCount: frameCount)
        return shortTermLUFS
    }

    /// What `process` and `measure` run. (`measure` hands it a closure of its own, which a
    /// checked function would refuse: one calling a closure it was given.)
    @inline(__always)
    private mutating func run(_ channels: (Int) -> UnsafePointer<Float>, frameCount: Int) {
        var done = 0
        let stepFrames = stepFrames, channelCount = channelCount
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

    /// `process`, keeping every finished step for integrated loudness and range (offline
    /// analysis: the history grows by one Double per 100 ms).
    public mutating func measure(_ channels: (Int) -> UnsafePointer<Float>, frameCount: Int) {
        // (in pieces that finish fewer steps than the ring holds, copied out after each)
        let most = stepFrames * (LoudnessMeter.ringSteps - 1)
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, most)
            let before = finishedSteps
            let offset = done
            run({ channels($0) + offset }, frameCount: n)
            if keptSteps == nil {
                for k in before..<finishedSteps { history.append(ring[k % LoudnessMeter.ringSteps]) }
            }
            done += n
        }
    }

    @inline(__always) @_noAllocation @_noLocks
    private mutating func finishStep() {
        let size = LoudnessMeter.ringSteps
        let k = finishedSteps
        ring[k % size] = stepEnergy / Double(stepFrames)
        // the display series (`shortTermSeriesLUFS`), summed exactly as it is there
        seriesSum += ring[k % size]
        if k >= 30 { seriesSum -= ring[(k - 30) % size] }
        let sum = seriesSum, count = Double(min(k + 1, 30))
        lastSeriesEnergy = Swift.max(0, sum) / count
        finishedSteps = k + 1
        stepEnergy = 0
        stepFill = 0
        if let m = window(steps: 4) {
            let l = LoudnessMeter.lufs(energy: m), most = momentaryMaxLUFS
            momentaryMaxLUFS = Swift.max(most, l)
        }
        if let s = window(steps: 30) {
            let l = LoudnessMeter.lufs(energy: s), most = shortTermMaxLUFS
            shortTermLUFS = l
            shortTermMaxLUFS = Swift.max(most, l)
        }
    }

    /// Mean energy of the last `count` finished steps kept (nil until there are that many).
    /// (`mutating` though it only reads: a method not mutating would be given a copy of the
    /// meter from `finishStep`, retaining its history.)
    @inline(__always) @_noAllocation @_noLocks
    private mutating func window(steps count: Int) -> Double? {
        let finished = finishedSteps
        let kept = keptSteps.map { Swift.min(finished, $0) } ?? finished
        guard kept >= count else { return nil }
        let size = LoudnessMeter.ringSteps, end = finishedSteps
        var sum = 0.0
        for k in (end - count)..<end { sum += ring[k % size] }
        return sum / Double(count)
    }

    /// The steps kept, oldest first (control side).
    private var steps: [Double] {
        guard let keptSteps else { return history }
        let n = Swift.min(finishedSteps, keptSteps)
        return ((finishedSteps - n)..<finishedSteps).map { ring[$0 % LoudnessMeter.ringSteps] }
    }

    private var seriesSum = 0.0
    /// 100 ms steps finished so far.
    public private(set) var finishedSteps = 0
    /// The mean-square energy of the short-term window at the end of the last finished step,
    /// as `shortTermSeriesLUFS` gives it (a window of what there is during the first 3 s): what
    /// a history that cannot keep every step takes step by step.
    public private(set) var lastSeriesEnergy = 0.0

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
///
/// What it approximates at every rate: the analog prototypes (the shelf H₁, the high-pass H₂)
/// with the gain BS.1770's 48 kHz table gives the high-pass's passband (its numerator is
/// 1, −2, 1, so the gain is a₀ = 1 + K/Q + K² at 48 kHz, +0.043 dB; the −0.691 in the loudness
/// formula is calibrated on that table). Two designs:
///
/// - **32 kHz and up**: libebur128's. Both stages by the bilinear transform pre-warped at their
///   corners (K = tan(π·f0/fs)), the high-pass's numerator 1, −2, 1 as in the table. At 48 kHz
///   this is the table (to 1e-8); elsewhere the pre-warped shelf bends the response near
///   Nyquist and the unnormalised high-pass's gain drifts with the rate: within 0.041 dB of the
///   prototype from 20 Hz to Nyquist at every rate from 32 to 768 kHz. Kept because loudness
///   there then agrees exactly with libebur128 (and pyloudnorm's "DeMan" filters), and renders
///   normalised at these rates keep their samples.
/// - **Below 32 kHz**, where that drift grows (0.09 dB at 22.05 kHz, 0.5 dB at 8 kHz, and no
///   filter at all once the shelf's corner passes Nyquist, 3364 Hz): the high-pass as above
///   but with its numerator scaled to the 48 kHz gain, and the shelf *matched* (M. Vicanek,
///   "Matched Second Order Digital Filters", 2016): poles by the impulse invariance
///   z = e^(s/fs), which maps them exactly whatever the corner; numerator from the squared
///   magnitude |H(ω)|² = (B₀φ₀ + B₁φ₁ + B₂φ₂) / (A₀φ₀ + A₁φ₁ + A₂φ₂) with φ₁ = sin²(ω/2),
///   φ₀ = 1 − φ₁, φ₂ = 4φ₀φ₁, so that it equals the prototype's |H₁|² at DC, at Nyquist and at
///   min(f0, fs/4). Within 0.05 dB of the prototype over the whole band from 8 kHz up (a 997 Hz
///   tone within 0.041 dB), 0.11 dB from 6 kHz; below, one biquad cannot follow a shelf whose
///   corner is near or above Nyquist: up to 0.39 dB at 3 kHz, 0.08 dB at 1 kHz.
///   `KWeightingTests` checks these bounds.
struct KWeighting {
    private var b: (Double, Double, Double, Double, Double, Double)   // stage 1 b0 b1 b2, stage 2 b0 b1 b2
    private var a: (Double, Double, Double, Double)                   // stage 1 a1 a2, stage 2 a1 a2
    private var s1 = (0.0, 0.0), s2 = (0.0, 0.0)                      // transposed direct form II states

    /// The analog prototypes (libebur128's fit of BS.1770's 48 kHz table).
    static let shelfHz = 1681.974450955533, shelfGainDB = 3.999843853973347, shelfQ = 0.7071752369554196
    static let shelfBandExponent = 0.4996667741545416
    static let highPassHz = 38.13547087602444, highPassQ = 0.5003270373238773
    /// From this rate up, libebur128's design (see the type's notes).
    static let bilinearMinimumRate = 32_000.0

    init(sampleRate fs: Double) {
        if fs >= KWeighting.bilinearMinimumRate {
            // stage 1: the shelf (analog prototype of BS.1770's 48 kHz pre-filter)
            let f0 = KWeighting.shelfHz, gainDB = KWeighting.shelfGainDB, q = KWeighting.shelfQ
            var k = tan(Double.pi * f0 / fs)
            let vh = pow(10, gainDB / 20), vb = pow(vh, KWeighting.shelfBandExponent)
            var a0 = 1 + k / q + k * k
            let b10 = (vh + vb * k / q + k * k) / a0, b11 = 2 * (k * k - vh) / a0, b12 = (vh - vb * k / q + k * k) / a0
            let a11 = 2 * (k * k - 1) / a0, a12 = (1 - k / q + k * k) / a0
            // stage 2: the RLB high-pass
            let f1 = KWeighting.highPassHz, q1 = KWeighting.highPassQ
            k = tan(Double.pi * f1 / fs)
            a0 = 1 + k / q1 + k * k
            let a21 = 2 * (k * k - 1) / a0, a22 = (1 - k / q1 + k * k) / a0
            b = (b10, b11, b12, 1, -2, 1)
            a = (a11, a12, a21, a22)
        } else {
            let (b1, a1) = KWeighting.matchedShelf(sampleRate: fs)
            // stage 2: bilinear, its passband gain the 48 kHz table's
            let q1 = KWeighting.highPassQ
            let k48 = tan(Double.pi * KWeighting.highPassHz / 48_000), gain48 = 1 + k48 / q1 + k48 * k48
            let k = tan(Double.pi * KWeighting.highPassHz / fs), a0 = 1 + k / q1 + k * k
            let g = gain48 / a0
            b = (b1.0, b1.1, b1.2, g, -2 * g, g)
            a = (a1.0, a1.1, 2 * (k * k - 1) / a0, (1 - k / q1 + k * k) / a0)
        }
    }

    /// The shelf prototype's squared magnitude at `hz`: H₁(s) = (Vh·s² + Vb·(ω₀/Q)·s + ω₀²) /
    /// (s² + (ω₀/Q)·s + ω₀²), s = j·2π·hz.
    static func shelfSquaredMagnitude(hz: Double) -> Double {
        let vh = pow(10, shelfGainDB / 20), vb = pow(vh, shelfBandExponent)
        let w0 = 2 * Double.pi * shelfHz, w = 2 * Double.pi * hz
        let real = w0 * w0 - w * w, imag = w0 / shelfQ * w
        let numReal = w0 * w0 - vh * w * w, numImag = vb * imag
        return (numReal * numReal + numImag * numImag) / (real * real + imag * imag)
    }

    /// The matched shelf at `fs` (see the type's notes): (b0, b1, b2), (a1, a2).
    static func matchedShelf(sampleRate fs: Double) -> ((Double, Double, Double), (Double, Double)) {
        let w0 = 2 * Double.pi * shelfHz / fs, zeta = 1 / (2 * shelfQ)   // ζ < 1: complex poles
        let r = exp(-zeta * w0)
        let a1 = -2 * r * cos((1 - zeta * zeta).squareRoot() * w0), a2 = r * r
        let bigA0 = (1 + a1 + a2) * (1 + a1 + a2), bigA1 = (1 - a1 + a2) * (1 - a1 + a2), bigA2 = -4 * a2
        let bigB0 = bigA0 * shelfSquaredMagnitude(hz: 0)
        let bigB1 = bigA1 * shelfSquaredMagnitude(hz: fs / 2)
        let matchHz = min(shelfHz, fs / 4)
        let phi1 = pow(sin(Double.pi * matchHz / fs), 2), phi0 = 1 - phi1, phi2 = 4 * phi0 * phi1
        let target = shelfSquaredMagnitude(hz: matchHz) * (bigA0 * phi0 + bigA1 * phi1 + bigA2 * phi2)
        let bigB2 = (target - bigB0 * phi0 - bigB1 * phi1) / phi2
        // back to coefficients: √B₀ = b0 + b1 + b2, √B₁ = b0 − b1 + b2, B₂ = −4·b0·b2 (the
        // minimum-phase root)
        let r0 = bigB0.squareRoot(), r1 = bigB1.squareRoot(), w = (r0 + r1) / 2
        let b0 = (w + (w * w + bigB2).squareRoot()) / 2
        return ((b0, (r0 - r1) / 2, -bigB2 / (4 * b0)), (a1, a2))
    }

    /// The coefficients: stage 1 (b0, b1, b2, a1, a2), then stage 2's.
    var coefficients: [Double] { [b.0, b.1, b.2, a.0, a.1, b.3, b.4, b.5, a.2, a.3] }

    /// The filter's response magnitude at `hz` for the rate it was made for, dB.
    func responseDB(hz: Double, sampleRate fs: Double) -> Double {
        func stage(_ b0: Double, _ b1: Double, _ b2: Double, _ a1: Double, _ a2: Double) -> Double {
            let w = 2 * Double.pi * hz / fs, c1 = cos(w), s1 = sin(w), c2 = cos(2 * w), s2 = sin(2 * w)
            let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
            let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
            return (nr * nr + ni * ni) / (dr * dr + di * di)
        }
        let p = stage(b.0, b.1, b.2, a.0, a.1) * stage(b.3, b.4, b.5, a.2, a.3)
        return 10 * log10(p)
    }

    /// The prototype's response at `hz` with the 48 kHz table's high-pass gain, dB: what every
    /// rate's design approximates.
    static func prototypeDB(hz: Double) -> Double {
        let q1 = highPassQ
        let k48 = tan(Double.pi * highPassHz / 48_000), gain48 = 1 + k48 / q1 + k48 * k48
        let w1 = 2 * Double.pi * highPassHz, w = 2 * Double.pi * hz
        let real = w1 * w1 - w * w, imag = w1 / q1 * w
        let highPass = w * w * w * w / (real * real + imag * imag)
        return 10 * log10(shelfSquaredMagnitude(hz: hz) * highPass * gain48 * gain48)
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
