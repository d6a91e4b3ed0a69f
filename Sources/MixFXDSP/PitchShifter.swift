#if canImport(Glibc)
import Glibc
#endif

/// Settings of the time-pitch processor, with AVAudioUnitTimePitch's units and ranges.
public struct PitchShifterSettings: Sendable, Equatable {
    /// Shift in cents, −2400…+2400; the frequency ratio is 2^(cents/1200).
    public var pitchCents: Double
    /// Analysis frames overlapping each output instant, 3…32 (more: smoother, more CPU).
    public var overlap: Int

    /// Keep the spectral envelope (formants) where it was, so shifted voices keep their timbre.
    public var preserveFormants: Bool

    /// Settings for `PitchShifter.prepare`.
    public init(pitchCents: Double = 0, overlap: Int = 8, preserveFormants: Bool = false) {
        self.pitchCents = pitchCents
        self.overlap = overlap
        self.preserveFormants = preserveFormants
    }

    /// The frequency ratio 2^(cents/1200).
    public var ratio: Double { pow(2, pitchCents / 1200) }
    /// True at 0 cents.
    public var isNeutral: Bool { pitchCents == 0 }

    /// The allowed pitch range, cents.
    public static let centsRange = -2400.0...2400.0
}

/// How a shifter will be used.
public enum PitchShifterMode: Sendable {
    /// Fixed settings: at 0 cents the shifter is skipped (latency 0); otherwise the latency is the
    /// least the ratio needs.
    case offline
    /// The pitch may change while running (`setPitchCents`): the latency is fixed for the whole
    /// range, the vocoder always runs, and 0 cents crossfades to the exact (delayed) input.
    case live
}

/// A pitch shifter that keeps duration: a phase vocoder time-stretches by the ratio r, then a
/// band-limited resampler plays the stretched signal r times faster.
///
/// **Stretch.** Analysis frame m is centred on input position A_m, synthesis frame m on
/// stretched position S_m, with S_{m+1} = S_m + Hs_m and A_{m+1} = A_m + Hs_m/r_m, so the stretch
/// follows the ratio frame by frame. The shorter hop is N/overlap: Hs_m = N/overlap when lowering
/// the pitch, ≈ r_m·N/overlap when raising it (`synthesisHop`). Each output bin is the input bin
/// turned by a unit phasor U[k] from `PhaseLocking` (identity phase locking, Laroche & Dolson
/// 1999). The phasors are shared by all channels and measured on their summed cross-spectra, so
/// the channels keep their phase differences exactly and the stereo image and mono sum hold.
/// Hann windows, weighted overlap-add divided by the running Σ_m w²(s − S_m), so the gain is
/// unity for any sequence of hops. With formant preservation, `FormantCorrection` scales the bins
/// before synthesis.
///
/// **Resample.** Output sample n reads the stretched signal at p(n) = S_m + (n − L − A_m)·r_m,
/// the segment m with A_m ≤ n − L < A_{m+1}, through a `SincTable`. Raising the pitch, each
/// synthesis frame was cut above 0.92/r of Nyquist, so nothing is left to alias and a short
/// interpolator suffices (`SincTableCache.interpolator`: 32 taps at +200 cents where an
/// anti-aliasing kernel needs 72). The transient splice reads the input itself, so it uses the
/// anti-aliasing tables (`SincTableCache.table`). Output
/// n therefore holds input sample n − L: a fixed latency L = `latencyFrames`, which offline
/// rendering removes by pre-rolling L frames and draining L frames.
///
/// L must let the stretched signal be complete where it is read: after input n arrived, frames
/// with A_m + N/2 ≤ n + 1 ran, so it is final up to r·(n + 0.5 − N/2) − N/2; output n reads up to
/// r·(n − L) + taps/2 + 1, hence L ≥ N/2 + (N/2 + taps/2 + 1)/r (`starvedFrames` counts violations
/// and stays 0).
public final class PitchShifter: @unchecked Sendable {
    /// The settings of the last `prepare` (pitch updated by `setPitchCents`).
    public private(set) var settings = PitchShifterSettings()
    /// Offline or live, from `prepare`.
    public private(set) var mode = PitchShifterMode.offline
    /// Analysis frame length N, from the sample rate.
    public private(set) var fftSize = 0
    /// The shorter of the two hops, N / overlap: the synthesis hop when lowering the pitch, the
    /// analysis hop when raising it (see `synthesisHop`).
    public private(set) var hopFrames = 0
    /// Output lags input by this many frames; offline rendering removes it.
    public private(set) var latencyFrames = 0
    /// Output samples that had to be zero because the stretched signal was late (0 unless the
    /// latency bound is wrong; tests check it).
    public private(set) var starvedFrames = 0
    /// Analysis/synthesis frames run since `prepare` or `reset` (the cost: four FFTs each for
    /// stereo).
    public var framesRun: Int { frameIndex }

    private var spec = ProcessSpec(sampleRate: 48_000, maximumFrameCount: 0, channelCount: 1)
    private var active = false
    private var tables: [SincTable] = []          // reading the stretched signal, by ratio grid index
    private var spliceTables: [SincTable] = []    // reading the input r times faster (anti-aliased)
    private var maxHalfTaps = 0
    private var taper: UnsafeMutablePointer<Float>?     // the band edge's raised-cosine roll-off
    private var fft: RealFFT?
    private var window: UnsafeMutablePointer<Float>?
    private var windowSquared: UnsafeMutablePointer<Float>?
    private var inCapacity = 0, yCapacity = 0
    private var inBuf: UnsafeMutablePointer<Float>?
    private var yBuf: UnsafeMutablePointer<Float>?
    private var normBuf: UnsafeMutablePointer<Float>?     // Σ_m w²(s − S_m) beside yBuf, until final
    private var prevRe: UnsafeMutablePointer<Float>?      // previous analysis spectra, per channel
    private var prevIm: UnsafeMutablePointer<Float>?
    private var re: UnsafeMutablePointer<Float>?          // spectra of this frame, per channel
    private var im: UnsafeMutablePointer<Float>?
    private var power: UnsafeMutablePointer<Float>?
    private var outRe: UnsafeMutablePointer<Float>?       // the turned spectrum of one channel
    private var outIm: UnsafeMutablePointer<Float>?
    private var locking: PhaseLocking?                    // the phasors, shared by the channels
    private var formant: FormantCorrection?
    // Frame history for the output mapping: A_m and r_m, a ring of `historyCapacity`.
    private static let historyCapacity = 1024
    private static let historyMask = historyCapacity - 1
    private var historyA: UnsafeMutablePointer<Double>?
    private var historyR: UnsafeMutablePointer<Double>?
    private var historyS: UnsafeMutablePointer<Int>?      // and S_m, the synthesis centre

    private var inStart = 0, inEnd = 0        // absolute input indices held: [inStart, inEnd)
    private var yStart = 0                    // absolute stretched index of yBuf[0]
    private var frameIndex = 0                // next frame m
    private var nextA = 0.0                   // A_m of the next frame
    private var nextS = 0                     // S_m of the next frame
    private var lastCentre = 0                // rounded A of the previous frame
    private var lastSynthesisCentre = 0       // S of the previous frame
    private var segment = 0                   // frame whose segment holds the current output
    private var outIndex = 0
    private var currentCents = 0.0            // smoothed pitch, per frame
    private var targetCents = 0.0
    private var wet: Float = 1                // crossfade weight, live mode
    private var lastReadPosition = 0.0
    // Transient gate (see `process`): input envelope ring, output envelope, smoothed gain.
    private var envIn: UnsafeMutablePointer<Float>?
    private var envCapacity = 0, envMask = 0
    private var envInLevel: Float = 0, envOutLevel: Float = 0, gateGain: Float = 1
    private var envRelease: Float = 0, gateUp: Float = 0, gateDown: Float = 0
    private var lookaheadFrames = 0
    // The input by input time in a mirrored ring (the live dry path and the transient splice
    // read it), and the current splice: onset T (input time), ratio, table, and its
    // fade-in/hold/fade-out lengths.
    private var history: UnsafeMutablePointer<Float>?
    private var historyRingCapacity = 0, historyRingMask = 0, historyStride = 0
    private var onsetLookaheadFrames = 0, onsetBackFrames = 0, onsetAttackFrames = 0
    private var spliceOnset = 0, spliceEnd = Int.min, spliceHoldEnd = 0, spliceRatio = 1.0
    private var spliceTable = 0, spliceHoldoffEnd = Int.min
    private var segmentTableRatio = 0.0       // the ratio `segmentTable` was chosen for
    private var segmentTable = 0

    /// An unprepared shifter; call `prepare` (control side) before `process`.
    public init() {}

    deinit { deallocate() }

    /// Allocates for `spec`, `settings` and `mode`. The FFT size follows the sample rate (≈ 85 ms:
    /// 4096 at 44.1/48 kHz, 8192 at 88.2/96 kHz). Control side.
    public func prepare(_ spec: ProcessSpec, settings: PitchShifterSettings, mode: PitchShifterMode = .offline) {
        precondition(spec.channelCount >= 1 && spec.channelCount <= 2)
        precondition((3...32).contains(settings.overlap))
        deallocate()
        self.spec = spec
        self.settings = settings
        self.mode = mode
        active = mode == .live || !settings.isNeutral
        guard active else { latencyFrames = 0; return }
        var n = 256
        while Double(n) < spec.sampleRate * 0.085 { n *= 2 }
        fftSize = n
        hopFrames = max(1, n / settings.overlap)
        let bins = n / 2 + 1
        fft = RealFFT(size: n)
        // Latency for the smallest ratio this shifter may meet, and the tables it may read.
        let minRatio = mode == .live ? pow(2, PitchShifterSettings.centsRange.lowerBound / 1200) : settings.ratio
        let maxRatio = mode == .live ? pow(2, PitchShifterSettings.centsRange.upperBound / 1200) : settings.ratio
        if mode == .live {
            tables = SincTableCache.interpolators(upToRatio: maxRatio)
            spliceTables = SincTableCache.tables(upToRatio: maxRatio)
        } else {
            // a fixed ratio reads one grid index only: the tables below it are not built (each
            // costs milliseconds), the slots hold the one that is
            let g = SincTableCache.index(forRatio: maxRatio)
            tables = Array(repeating: SincTableCache.interpolator(index: g), count: g + 1)
            spliceTables = Array(repeating: SincTableCache.table(index: g), count: g + 1)
        }
        maxHalfTaps = (tables + spliceTables).map { $0.taps / 2 }.max()!
        // L = N/2 + ⌈(N/2 + taps/2 + 2)/r⌉ + 1 for each ratio the shifter may meet: live, every
        // grid index (with the smallest ratio of its cell); offline, the one fixed ratio.
        func latency(_ table: SincTable, _ r: Double) -> Int {
            n / 2 + Int((Double(n / 2 + table.taps / 2 + 2) / r).rounded(.up)) + 1
        }
        if mode == .live {
            latencyFrames = tables.enumerated().map { i, t in
                latency(t, i == 0 ? min(minRatio, 1) : pow(2, Double((i - 1) * SincTableCache.stepCents) / 1200))
            }.max()!
        } else {
            latencyFrames = latency(tables[tables.count - 1], settings.ratio)
        }

        let w = UnsafeMutablePointer<Float>.allocate(capacity: n)
        let w2 = UnsafeMutablePointer<Float>.allocate(capacity: n)
        for i in 0..<n { w[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))) }
        for i in 0..<n { w2[i] = w[i] * w[i] }
        window = w
        windowSquared = w2
        let taperBins = Self.taperBins(fftSize: n)
        taper = .allocate(capacity: taperBins)
        for j in 0..<taperBins { taper![j] = Float(0.5 + 0.5 * cos(Double.pi * Double(j + 1) / Double(taperBins + 1))) }

        let ch = spec.channelCount
        let maxHa = Int((Double(hopFrames) / minRatio).rounded(.up)) + 2
        inCapacity = 2 * n + 2 * maxHa + 2 * spec.maximumFrameCount + 64
        yCapacity = Int((Double(latencyFrames + 2 * spec.maximumFrameCount) * max(1, maxRatio)).rounded(.up))
            + 3 * n + 4 * maxHalfTaps + 2 * hopFrames + 64
        inBuf = .allocate(capacity: inCapacity * ch)
        yBuf = .allocate(capacity: yCapacity * ch)
        normBuf = .allocate(capacity: yCapacity)
        prevRe = .allocate(capacity: bins * ch)
        prevIm = .allocate(capacity: bins * ch)
        re = .allocate(capacity: bins * ch)
        im = .allocate(capacity: bins * ch)
        locking = PhaseLocking(fftSize: n)
        formant = FormantCorrection(bins: bins)
        power = .allocate(capacity: bins + 8)
        outRe = .allocate(capacity: bins)
        outIm = .allocate(capacity: bins)
        historyA = .allocate(capacity: Self.historyCapacity)
        historyR = .allocate(capacity: Self.historyCapacity)
        historyS = .allocate(capacity: Self.historyCapacity)
        lookaheadFrames = Int(0.0002 * spec.sampleRate)
        onsetLookaheadFrames = Int(0.001 * spec.sampleRate)
        onsetBackFrames = Int(0.003 * spec.sampleRate)
        onsetAttackFrames = Int(0.003 * spec.sampleRate)
        envCapacity = powerOfTwo(atLeast: latencyFrames + spec.maximumFrameCount + lookaheadFrames
                                 + onsetLookaheadFrames + onsetBackFrames + 8)
        historyRingCapacity = powerOfTwo(atLeast: latencyFrames + spec.maximumFrameCount + 4 * maxHalfTaps
                                         + 2 * onsetLookaheadFrames + 64)
        historyRingMask = historyRingCapacity - 1
        historyStride = 2 * historyRingCapacity + 2 * maxHalfTaps   // per channel
        history = .allocate(capacity: ch * historyStride)
        envMask = envCapacity - 1
        envIn = .allocate(capacity: envCapacity)
        envRelease = Float(exp(-1 / (0.02 * spec.sampleRate)))
        gateUp = Float(1 - exp(-1 / (0.00025 * spec.sampleRate)))
        gateDown = Float(1 - exp(-1 / (0.005 * spec.sampleRate)))
        reset()
    }

    /// Clears all signal state; the next sample is treated as sample 0. Does not allocate.
    public func reset() {
        starvedFrames = 0
        targetCents = settings.pitchCents
        currentCents = settings.pitchCents
        wet = mode == .live && settings.isNeutral ? 0 : 1
        guard active, let inBuf, let yBuf else { return }
        let ch = spec.channelCount
        let bins = fftSize / 2 + 1
        inBuf.update(repeating: 0, count: inCapacity * ch)
        yBuf.update(repeating: 0, count: yCapacity * ch)
        normBuf!.update(repeating: 0, count: yCapacity)
        prevRe!.update(repeating: 0, count: bins * ch)
        prevIm!.update(repeating: 0, count: bins * ch)
        locking!.reset()
        envIn!.update(repeating: 0, count: envCapacity)
        history!.update(repeating: 0, count: spec.channelCount * historyStride)
        spliceEnd = Int.min; spliceHoldoffEnd = Int.min
        envInLevel = 0; envOutLevel = 0; gateGain = 1
        inStart = -fftSize / 2        // input before sample 0 is silence
        inEnd = 0
        yStart = -fftSize / 2 - 2 * maxHalfTaps - 8
        frameIndex = 0
        nextA = 0
        nextS = 0
        lastCentre = 0
        lastSynthesisCentre = 0
        segment = 0
        outIndex = 0
        lastReadPosition = 0
    }

    /// Turns formant preservation on or off while running (render side, once per block).
    @inline(__always)
    public func setPreserveFormants(_ on: Bool) { settings.preserveFormants = on }

    /// Sets the pitch while running (live mode; the render side calls it once per block). The
    /// vocoder glides to it over about 20 ms.
    @inline(__always)
    public func setPitchCents(_ cents: Double) {
        targetCents = min(max(cents, PitchShifterSettings.centsRange.lowerBound), PitchShifterSettings.centsRange.upperBound)
        settings.pitchCents = targetCents
    }

    /// Shifts `frameCount` frames in place (`right` nil for mono). Output lags input by
    /// `latencyFrames`. Never allocates.
    public func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        guard active, let inBuf, let yBuf, let historyA, let historyR, let historyS else { return }
        let ch = spec.channelCount
        compactInput()
        for c in 0..<ch {
            let src = c == 0 ? left : (right ?? left)
            (inBuf + c * inCapacity + (inEnd - inStart)).update(from: src, count: frameCount)
        }
        // Input envelope (instant attack, 20 ms release), by input time.
        if let envIn {
            var e = envInLevel, done = 0
            while done < frameCount {   // in at most two runs of the ring
                let slot = (inEnd + done) & envMask
                let n = min(frameCount - done, envCapacity - slot)
                e = peakEnvelope(left + done, ch > 1 ? right.map { UnsafePointer($0 + done) } : nil, count: n,
                                 release: envRelease, from: e, into: envIn + slot)
                done += n
            }
            envInLevel = e
        }
        // The input by input time, written twice (at i and i + capacity) so that any span of
        // up to `capacity` samples is contiguous for the splice's interpolator.
        if let history {
            for c in 0..<ch {
                let src = c == 0 ? left : (right ?? left)
                let ring = history + c * historyStride
                var done = 0
                while done < frameCount {   // in at most two runs of the ring
                    let slot = (inEnd + done) & historyRingMask
                    let n = min(frameCount - done, historyRingCapacity - slot)
                    (ring + slot).update(from: src + done, count: n)
                    (ring + slot + historyRingCapacity).update(from: src + done, count: n)
                    done += n
                }
            }
        }
        inEnd += frameCount
        // Frames whose analysis window is complete.
        while roundToInt(nextA) + fftSize / 2 <= inEnd {
            runFrame()
        }
        let yFinal = nextS - fftSize / 2
        let live = mode == .live
        let fadeStep = Float(1 / (0.02 * spec.sampleRate))
        // The per-sample state in locals for the loop (stored back after it): class properties
        // written in a loop cost exclusivity checks and memory round trips.
        var out = outIndex, seg = segment, envOut = envOutLevel, gain = gateGain
        var lastRead = lastReadPosition, segTable = segmentTable, segTableRatio = segmentTableRatio
        var wetMix = wet, starved = starvedFrames
        defer {
            outIndex = out; segment = seg; envOutLevel = envOut; gateGain = gain
            lastReadPosition = lastRead; segmentTable = segTable; segmentTableRatio = segTableRatio
            wet = wetMix; starvedFrames = starved
        }
        for k in 0..<frameCount {
            // Dry path (live): the input delayed by L.
            var dryL: Float = 0, dryR: Float = 0
            if live, let history, out - latencyFrames >= 0 {
                let slot = (out - latencyFrames) & historyRingMask
                dryL = history[slot]
                dryR = ch > 1 ? history[historyStride + slot] : dryL
            }
            // Wet path: the stretched signal read at p(n).
            let t = Double(out - latencyFrames)
            var wetL: Float = 0, wetR: Float = 0
            var segmentRatio = 1.0
            if t >= 0 {
                var moved = false
                while seg + 1 < frameIndex && historyA[(seg + 1) & Self.historyMask] <= t { seg += 1; moved = true }
                let a = historyA[seg & Self.historyMask]
                let r = historyR[seg & Self.historyMask]
                if moved || r != segTableRatio {
                    segTableRatio = r
                    segTable = SincTableCache.index(forRatio: r)
                }
                segmentRatio = r
                let nextAOfSegment = seg + 1 < frameIndex ? historyA[(seg + 1) & Self.historyMask] : nextA
                let p = Double(historyS[seg & Self.historyMask]) + (t - a) * r
                lastRead = p
                let i = floorToInt(p)
                let table = tables[segTable]
                let half = table.taps / 2
                if t >= nextAOfSegment || i + half >= yFinal {
                    starved += 1
                } else if i - half + 1 >= yStart {
                    let frac = p - Double(i)
                    if ch > 1 {
                        (wetL, wetR) = table.interpolate(yBuf + (i - yStart), yBuf + yCapacity + (i - yStart),
                                                         index: 0, fraction: frac)
                    } else {
                        wetL = table.interpolate(yBuf + (i - yStart), index: 0, fraction: frac)
                        wetR = wetL
                    }
                }
            }
            // Transient gate: the vocoder spreads a hit over its whole window, so energy appears
            // before the hit (pre-echo). Where the wet signal is more than 6 dB above what the
            // input held at that instant (its envelope 0.2 ms ahead, instant attack, 20 ms
            // release), it is turned down; the gain opens in 0.25 ms and closes in 5 ms. On
            // steady material the two envelopes agree and the gain stays exactly 1. Measured on
            // noise hits: pre-echo −50 dB (it was −13 dB without the gate).
            if let envIn, t >= 0 {
                let pOut = ch > 1 ? 0.5 * (wetL * wetL + wetR * wetR) : wetL * wetL
                let decayed = envOut * envRelease
                envOut = pOut > decayed ? pOut : decayed
                let eIn = envIn[(out - latencyFrames + lookaheadFrames) & envMask]
                var g: Float = 1
                if envOut > 1e-12 && 4 * eIn < envOut { g = 2 * (eIn / envOut).squareRoot() }
                if g != 1 || gain != 1 {   // (steady, the gain stays 1 without a dependent chain)
                    gain += (g - gain) * (g > gain ? gateUp : gateDown)
                    if g == 1 && gain > 0.99999 { gain = 1 }
                    if gain != 1 { wetL *= gain; wetR *= gain }
                }
            }
            // Transient splice: the gate keeps a hit's smear out of the silence before it, but
            // the vocoder still lays copies of the hit at (T − A_m)·(1/r − 1) from its true time T
            // (frame m centred at A_m), so pitch-down attacks come out late and soft. At an onset
            // (the input envelope, 1 ms ahead, 9 dB above its value 3 ms earlier) the output
            // crossfades within 1 ms to the input itself: its first 3 ms as they are, then played
            // r times faster, g(t) = x(T + a + (t − T − a)·r): the right pitch, the attack in
            // place and untouched. After a 20 ms hold it crossfades back to the vocoder over
            // 10 ms (which by then holds no early copies). Steady material never triggers it;
            // new onsets wait 50 ms.
            if t >= 0, segmentRatio != 1, let envIn, let history {
                let now = out - latencyFrames
                if now >= spliceEnd && now >= spliceHoldoffEnd {
                    let probe = now + onsetLookaheadFrames
                    let eNow = envIn[probe & envMask], eBefore = envIn[(probe - onsetBackFrames) & envMask]
                    if probe - onsetBackFrames >= 0 && eNow > 8 * eBefore && eNow > 1e-8 {
                        spliceOnset = probe
                        spliceRatio = segmentRatio
                        spliceTable = segTable
                        // reading ahead of t by (t − T)·(r − 1) must stay inside the input held
                        var length = Int(0.03 * spec.sampleRate)
                        if spliceRatio > 1 {
                            let room = Double(latencyFrames - maxHalfTaps - 2 * onsetLookaheadFrames - onsetAttackFrames - 4)
                            length = max(0, min(length, Int(room / (spliceRatio - 1))))
                        }
                        spliceHoldEnd = probe + 2 * length / 3
                        spliceEnd = probe + length
                        spliceHoldoffEnd = probe + Int(0.05 * spec.sampleRate)
                    }
                }
                if now < spliceEnd {
                    let w: Float
                    if now < spliceOnset {
                        w = Float(now - (spliceOnset - onsetLookaheadFrames)) / Float(onsetLookaheadFrames)
                    } else if now < spliceHoldEnd {
                        w = 1
                    } else {
                        w = Float(spliceEnd - now) / Float(max(1, spliceEnd - spliceHoldEnd))
                    }
                    // the attack's first 3 ms at their own speed (too short to carry pitch),
                    // so the attack keeps its shape and time; then r times faster
                    let sinceAttack = now - spliceOnset - onsetAttackFrames
                    let pos = sinceAttack <= 0 ? Double(now)
                        : Double(spliceOnset + onsetAttackFrames) + Double(sinceAttack) * spliceRatio
                    let i = floorToInt(pos)
                    let table = spliceTables[spliceTable]
                    let base = (i - table.taps / 2 + 1) & historyRingMask
                    let frac = pos - Double(i)
                    var gL: Float, gR: Float
                    if ch > 1 {
                        (gL, gR) = table.interpolate(history + base, history + historyStride + base,
                                                     index: table.taps / 2 - 1, fraction: frac)
                    } else {
                        gL = table.interpolate(history + base, index: table.taps / 2 - 1, fraction: frac)
                        gR = gL
                    }
                    wetL += w * (gL - wetL)
                    wetR += w * (gR - wetR)
                }
            }
            if live {
                let wantWet = !(segmentRatio == 1 && targetCents == 0)
                wetMix = wantWet ? min(1, wetMix + fadeStep) : max(0, wetMix - fadeStep)
                if wetMix == 0 {
                    wetL = dryL; wetR = dryR
                } else if wetMix < 1 {
                    wetL = dryL + wetMix * (wetL - dryL)
                    wetR = dryR + wetMix * (wetR - dryR)
                }
            }
            left[k] = wetL
            if let right { right[k] = wetR }
            out += 1
        }
    }

    /// The synthesis hop for ratio r. The shorter of the two hops is N/overlap, so neither the
    /// analysis nor the synthesis frames overlap more than `overlap` times: lowering the pitch,
    /// Hs = N/overlap and Ha = Hs/r; raising it, Hs = r·N/overlap and Ha = N/overlap (raising by
    /// r costs no more frames than not shifting). The synthesis frames still overlap at least
    /// min(overlap, 4) times.
    @inline(__always)
    private func synthesisHop(ratio r: Double) -> Int {
        guard r > 1 else { return hopFrames }
        return max(hopFrames, min(roundToInt(Double(hopFrames) * r), fftSize / 4))
    }

    private func runFrame() {
        guard let historyA, let historyR, let historyS else { return }
        // Glide toward the target pitch (time constant ≈ 20 ms, in whole frames).
        if currentCents != targetCents {
            let frameSeconds = Double(hopFrames) / spec.sampleRate
            let alpha = min(1, frameSeconds / 0.02)
            currentCents += (targetCents - currentCents) * alpha
            if abs(targetCents - currentCents) < 0.05 { currentCents = targetCents }
        }
        let r = currentCents == 0 ? 1 : pow(2, currentCents / 1200)
        let a = nextA, s = nextS
        let hs = synthesisHop(ratio: r)
        historyA[frameIndex & Self.historyMask] = a
        historyR[frameIndex & Self.historyMask] = r
        historyS[frameIndex & Self.historyMask] = s
        analyseAndSynthesise(centre: roundToInt(a), ratio: r, at: s, hop: hs)
        nextA = a + Double(hs) / r
        nextS = s + hs
        frameIndex += 1
    }

    private func compactInput() {
        guard let inBuf else { return }
        let firstNeeded = roundToInt(nextA) - fftSize / 2
        let drop = firstNeeded - inStart
        let held = inEnd - inStart
        if drop > 0 && held + spec.maximumFrameCount + 1 > inCapacity / 2 {
            for c in 0..<spec.channelCount {
                let base = inBuf + c * inCapacity
                base.update(from: base + drop, count: held - drop)
            }
            inStart += drop
        }
        precondition(inEnd - inStart + spec.maximumFrameCount <= inCapacity, "PitchShifter input overflow")
    }

    private func compactY(upTo end: Int) {
        guard let yBuf else { return }
        let firstNeeded = floorToInt(lastReadPosition) - maxHalfTaps - 2
        let drop = min(firstNeeded, end - fftSize) - yStart
        if drop > 0 && end - yStart > yCapacity - fftSize {
            let held = end - fftSize - yStart
            for c in 0..<spec.channelCount {
                let base = yBuf + c * yCapacity
                base.update(from: base + drop, count: held + fftSize - drop)
                (base + held + fftSize - drop).update(repeating: 0, count: drop)
            }
            if let normBuf {
                normBuf.update(from: normBuf + drop, count: held + fftSize - drop)
                (normBuf + held + fftSize - drop).update(repeating: 0, count: drop)
            }
            yStart += drop
        }
        precondition(end - yStart <= yCapacity, "PitchShifter stretch overflow")
    }

    /// Bins of the raised-cosine roll-off below the band edge of a raised frame (≈ 350 Hz).
    static func taperBins(fftSize: Int) -> Int { max(4, fftSize / 128) }

    /// Frame m: analysis centred on input `a`, synthesis centred on `s` = S_m, and S_{m+1} =
    /// s + `hop`.
    private func analyseAndSynthesise(centre a: Int, ratio: Double, at s: Int, hop: Int) {
        guard let fft, let inBuf, let yBuf, let normBuf, let window, let windowSquared, let re, let im,
              let power, let prevRe, let prevIm, let locking, let outRe, let outIm else { return }
        let n = fftSize, bins = n / 2 + 1, ch = spec.channelCount
        let frameStartY = s - n / 2
        compactY(upTo: frameStartY + n)
        // Analysis: all channels.
        for c in 0..<ch {
            let src = inBuf + c * inCapacity + (a - n / 2 - inStart)
            fft.forward(src, window: window, re: re + c * bins, im: im + c * bins)
        }
        // Raising the pitch, the bins above the band edge are cut before synthesis (below), so
        // the phase work stops just above it, unless formant preservation reads the envelope
        // there.
        let formants = settings.preserveFormants && ratio != 1
        let grid = SincTableCache.index(forRatio: ratio)
        let edge = grid == 0 ? bins : min(bins, Int(SincTableCache.bandEdge(index: grid) * Double(bins - 1)))
        let activeBins = formants ? bins : min(bins, edge + 16)
        for c in 0..<ch {
            vaddPower(re + c * bins, im + c * bins, power, activeBins, accumulating: c > 0)
        }
        (power + activeBins).update(repeating: 0, count: bins + 8 - activeBins)   // the slack reads as silence
        if formants { formant?.update(power: power, ratio: ratio) }
        if frameIndex > 0 {
            locking.advance(power: power, re: re, im: im, prevRe: prevRe, prevIm: prevIm,
                            channels: ch, ha: a - lastCentre, hs: s - lastSynthesisCentre, activeBins: activeBins)
        }
        // Synthesis: turn every bin by its phasor, inverse FFT, window, overlap-add. This frame's
        // spectra then become the previous ones (the buffers swap). Raising the pitch, the bins
        // above 0.92/r of Nyquist are cut (a raised-cosine roll-off below the edge): the
        // stretched signal is read r times faster, and what it holds above 1/r of Nyquist would
        // alias. Cut here, it needs only a short interpolator (`SincTableCache.interpolator`).
        let taperBins = Self.taperBins(fftSize: n)
        for c in 0..<ch {
            vrotate(re + c * bins, im + c * bins, locking.rotRe, locking.rotIm, into: outRe, outIm, edge)
            if edge < bins {
                (outRe + edge).update(repeating: 0, count: bins - edge)
                (outIm + edge).update(repeating: 0, count: bins - edge)
                if let taper {
                    let start = max(0, edge - taperBins)
                    for k in start..<edge {
                        let g = taper[k - (edge - taperBins)]
                        outRe[k] *= g; outIm[k] *= g
                    }
                }
            }
            if formants, let gains = formant?.gains {
                vmul(outRe, gains, outRe, edge)
                vmul(outIm, gains, outIm, edge)
            }
            outIm[0] = 0; outIm[bins - 1] = 0
            let dst = yBuf + c * yCapacity + (frameStartY - yStart)
            fft.inverse(re: outRe, im: outIm, window: window, addingTo: dst)
        }
        // Weighted overlap-add with a running normalisation: Σ w·frame / Σ w², which is unity
        // gain for any sequence of hops. Output before S_{m+1} − N/2 gets no more frames, so it
        // is divided now.
        let norm = normBuf + (frameStartY - yStart)
        vadd(windowSquared, into: norm, n)
        let y0 = yBuf + (frameStartY - yStart), y1 = ch > 1 ? y0 + yCapacity : nil
        vdivideByNorm(y0, y1, norm, hop)
        lastSynthesisCentre = s
        self.prevRe = re; self.re = prevRe
        self.prevIm = im; self.im = prevIm
        lastCentre = a
    }

    private func deallocate() {
        fft = nil
        tables = []
        spliceTables = []
        taper?.deallocate(); taper = nil
        locking = nil
        formant = nil
        for p in [window, windowSquared, inBuf, yBuf, normBuf, prevRe, prevIm, re, im, power, envIn] {
            p?.deallocate()
        }
        window = nil; windowSquared = nil; inBuf = nil; yBuf = nil; normBuf = nil
        prevRe = nil; prevIm = nil; re = nil; im = nil; power = nil; envIn = nil
        for p in [outRe, outIm] { p?.deallocate() }
        outRe = nil; outIm = nil
        history?.deallocate(); history = nil
        historyA?.deallocate(); historyA = nil
        historyR?.deallocate(); historyR = nil
        historyS?.deallocate(); historyS = nil
    }
}

/// The least power of two ≥ n.
func powerOfTwo(atLeast n: Int) -> Int {
    var p = 1
    while p < n { p *= 2 }
    return p
}

/// ⌊x⌋ for finite x in Int's range, without the library call or the rounding-rule metadata
/// that `rounded(.down)` brings into a `@_noAllocation` function.
@inline(__always) @_noAllocation @_noLocks
func floorToInt(_ x: Double) -> Int {
    let k = Int(x)
    return Double(k) > x ? k - 1 : k
}

/// x rounded to the nearest integer (halves up), for x ≥ 0.
@inline(__always) @_noAllocation @_noLocks
func roundToInt(_ x: Double) -> Int { floorToInt(x + 0.5) }
