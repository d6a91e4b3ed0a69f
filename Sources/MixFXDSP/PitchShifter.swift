#if canImport(Glibc)
import Glibc
#endif

/// Settings of the time-pitch processor, with AVAudioUnitTimePitch's units and ranges.
public struct PitchShifterSettings: Sendable, Equatable {
    /// Shift in cents, −2400…+2400; the frequency ratio is 2^(cents/1200).
    public var pitchCents: Double
    /// Analysis frames overlapping each output instant, 3…32 (more: smoother, more CPU).
    public var overlap: Int

    public init(pitchCents: Double = 0, overlap: Int = 8) {
        self.pitchCents = pitchCents
        self.overlap = overlap
    }

    public var ratio: Double { pow(2, pitchCents / 1200) }
    public var isNeutral: Bool { pitchCents == 0 }
}

/// A pitch shifter that keeps duration: a phase vocoder time-stretches by the ratio r, then a
/// band-limited resampler plays the stretched signal r times faster.
///
/// **Stretch** (Laroche & Dolson 1999, "Improved phase vocoder time-scale modification of audio",
/// identity phase locking). Analysis frame m is centred on input sample a_m = round(m·Hs/r), synthesis
/// frame m on stretched sample s_m = m·Hs, with Hs = N/overlap, N the FFT size. For each spectral
/// peak p the instantaneous frequency comes from the phase advance over the actual analysis hop Ha:
///
///     ω_p = 2πp/N,  Δφ = princarg(φa[p] − φa_prev[p] − ω_p·Ha),  ω_inst = ω_p + Δφ/Ha
///     φs[p] = φs_prev[p] + ω_inst·Hs
///
/// and every bin k in the peak's region (bounded by the magnitude minima between peaks) keeps its
/// phase offset to the peak: φs[k] = φs[p] + φa[k] − φa[p]. Hann windows on both sides; the
/// synthesis window is divided by Σ_m w²(n − m·Hs) so overlap-add reconstructs unity gain at any
/// overlap.
///
/// **Resample.** Output sample n reads the stretched signal at r·(n − L) through a `SincTable`
/// (anti-aliased when r > 1). Since s_m = r·a_m, output sample n holds input sample n − L shifted in
/// pitch: the processor has a fixed latency of L = `latencyFrames`, which offline rendering removes
/// (pre-roll L frames, drain L frames) so the output is aligned at sample 0 with exactly the
/// input's length.
///
/// At 0 cents the processor is a bit-exact passthrough with no latency.
public final class PitchShifter: @unchecked Sendable {
    public private(set) var settings = PitchShifterSettings()
    public private(set) var fftSize = 0
    public private(set) var latencyFrames = 0
    /// Output frames that had to be zero because the stretched signal was late (always 0 unless
    /// the latency computation is wrong; tests check it).
    public private(set) var starvedFrames = 0

    private var spec = ProcessSpec(sampleRate: 48_000, maximumFrameCount: 0, channelCount: 1)
    private var ratio = 1.0
    private var hop = 0                 // Hs
    private var fft: RealFFT?
    private var table: SincTable?
    private var window: UnsafeMutablePointer<Float>?
    private var synthWindow: UnsafeMutablePointer<Float>?
    // per channel: input history, stretched accumulator, phases
    private var inCapacity = 0, yCapacity = 0
    private var inBuf: UnsafeMutablePointer<Float>?
    private var yBuf: UnsafeMutablePointer<Float>?
    private var prevAnalysisPhase: UnsafeMutablePointer<Float>?
    private var prevSynthPhase: UnsafeMutablePointer<Float>?
    // scratch (shared by channels)
    private var frame: UnsafeMutablePointer<Float>?
    private var re: UnsafeMutablePointer<Float>?
    private var im: UnsafeMutablePointer<Float>?
    private var mag: UnsafeMutablePointer<Float>?
    private var phase: UnsafeMutablePointer<Float>?
    private var peaks: UnsafeMutablePointer<Int32>?

    private var inStart = 0, inEnd = 0        // absolute input indices held: [inStart, inEnd)
    private var yStart = 0, yEnd = 0          // absolute stretched indices held
    private var frameIndex = 0                // next analysis/synthesis frame m
    private var lastAnalysisCentre = 0
    private var outIndex = 0                  // next output sample n

    public init() {}

    deinit { deallocate() }

    /// Allocates for `spec` and `settings`. The FFT size follows the sample rate (≈ 85 ms:
    /// 4096 at 44.1/48 kHz, 8192 at 88.2/96 kHz).
    public func prepare(_ spec: ProcessSpec, settings: PitchShifterSettings) {
        precondition(spec.channelCount >= 1 && spec.channelCount <= 2)
        precondition((3...32).contains(settings.overlap))
        deallocate()
        self.spec = spec
        self.settings = settings
        ratio = settings.ratio
        if settings.isNeutral {
            latencyFrames = 0
            return
        }
        var n = 256
        while Double(n) < spec.sampleRate * 0.085 { n *= 2 }
        fftSize = n
        hop = max(1, n / settings.overlap)
        let bins = n / 2 + 1
        let fft = RealFFT(size: n)
        self.fft = fft
        let table = SincTable(scale: 1 / ratio, quality: .shifter)
        self.table = table
        // L ≥ N/2 + (N/2 + taps/2 + 2)/r: see the derivation in `process`.
        latencyFrames = n / 2 + Int((Double(n / 2 + table.taps / 2 + 2) / ratio).rounded(.up)) + 1

        let w = UnsafeMutablePointer<Float>.allocate(capacity: n)
        let ws = UnsafeMutablePointer<Float>.allocate(capacity: n)
        for i in 0..<n { w[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))) }
        // norm[j] = Σ_m w²(j + m·Hs) for the output positions ≡ j (mod Hs)
        var norm = [Double](repeating: 0, count: hop)
        for i in 0..<n { norm[((i - n / 2) % hop + hop) % hop] += Double(w[i]) * Double(w[i]) }
        for i in 0..<n { ws[i] = Float(Double(w[i]) / norm[((i - n / 2) % hop + hop) % hop]) }
        window = w
        synthWindow = ws

        let maxHa = Int((Double(hop) / ratio).rounded(.up)) + 1
        inCapacity = 2 * n + 2 * maxHa + 2 * spec.maximumFrameCount + 64
        yCapacity = Int((Double(latencyFrames + 2 * spec.maximumFrameCount) * max(1, ratio)).rounded(.up))
            + 3 * n + 2 * table.taps + 2 * hop + 64
        let ch = spec.channelCount
        inBuf = .allocate(capacity: inCapacity * ch)
        yBuf = .allocate(capacity: yCapacity * ch)
        prevAnalysisPhase = .allocate(capacity: bins * ch)
        prevSynthPhase = .allocate(capacity: bins * ch)
        frame = .allocate(capacity: n)
        re = .allocate(capacity: bins)
        im = .allocate(capacity: bins)
        mag = .allocate(capacity: bins)
        phase = .allocate(capacity: bins)
        peaks = .allocate(capacity: bins)
        reset()
    }

    /// Clears all signal state; the next sample is treated as sample 0.
    public func reset() {
        starvedFrames = 0
        guard let inBuf, let yBuf, let table else { return }
        let ch = spec.channelCount
        inBuf.initialize(repeating: 0, count: inCapacity * ch)
        yBuf.initialize(repeating: 0, count: yCapacity * ch)
        // Input before sample 0 is silence: hold N/2 zeros so frame 0 (centred on 0) can read them.
        inStart = -fftSize / 2
        inEnd = 0
        // The stretched signal holds zeros from before the first frame's reach.
        yStart = -fftSize / 2 - table.taps
        yEnd = yStart
        frameIndex = 0
        lastAnalysisCentre = 0
        outIndex = 0
    }

    /// Shifts `frameCount` frames in place (`right` nil for mono). Output lags input by
    /// `latencyFrames`. Never allocates.
    public func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        guard !settings.isNeutral, let inBuf, let table else { return }
        let ch = spec.channelCount
        // 1. Append the input.
        compactInput()
        for c in 0..<ch {
            let src = c == 0 ? left : (right ?? left)
            (inBuf + c * inCapacity + (inEnd - inStart)).update(from: src, count: frameCount)
        }
        inEnd += frameCount
        // 2. Run every frame whose analysis window is complete: a_m + N/2 ≤ inEnd.
        while true {
            let a = analysisCentre(frameIndex)
            if a + fftSize / 2 > inEnd { break }
            analyseAndSynthesise(centre: a)
            frameIndex += 1
        }
        // Stretched samples below s_m − N/2 (m = next frame) receive nothing more: they are final.
        //
        // Derivation of L: after input sample n arrived, frames with a_m + N/2 ≤ n + 1 ran, so the
        // final stretched signal reaches at least r·(n + 0.5 − N/2) − N/2. Output n reads up to
        // r·(n − L) + taps/2 + 1, which is inside when L ≥ N/2 + (N/2 + taps/2 + 1)/r.
        let yFinal = frameIndex * hop - fftSize / 2
        // 3. Read the output.
        let half = table.taps / 2
        for k in 0..<frameCount {
            let pos = ratio * Double(outIndex - latencyFrames)
            let i = Int(pos.rounded(.down))
            let frac = pos - Double(i)
            if i - half + 1 < yStart {
                left[k] = 0
                right?[k] = 0
            } else if i + half >= yFinal {
                starvedFrames += 1
                left[k] = 0
                right?[k] = 0
            } else {
                left[k] = table.interpolate(yBuf! + (i - yStart), index: 0, fraction: frac)
                if let right {
                    right[k] = ch > 1 ? table.interpolate(yBuf! + yCapacity + (i - yStart), index: 0, fraction: frac)
                                      : left[k]
                }
            }
            outIndex += 1
        }
    }

    @inline(__always)
    private func analysisCentre(_ m: Int) -> Int {
        Int((Double(m) * Double(hop) / ratio).rounded())
    }

    private func compactInput() {
        guard let inBuf else { return }
        let firstNeeded = analysisCentre(frameIndex) - fftSize / 2
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
        guard let yBuf, let table else { return }
        // The earliest stretched sample any future output reads.
        let firstNeeded = Int((ratio * Double(outIndex - latencyFrames)).rounded(.down)) - table.taps / 2
        let drop = firstNeeded - yStart
        if drop > 0 && end - yStart > yCapacity - fftSize {
            let held = yEnd - yStart
            for c in 0..<spec.channelCount {
                let base = yBuf + c * yCapacity
                base.update(from: base + drop, count: held - drop)
                (base + held - drop).update(repeating: 0, count: drop)
            }
            yStart += drop
        }
        precondition(end - yStart <= yCapacity, "PitchShifter stretch overflow")
    }

    private func analyseAndSynthesise(centre a: Int) {
        guard let fft, let inBuf, let yBuf, let window, let synthWindow, let frame, let re, let im,
              let mag, let phase, let peaks, let prevAnalysisPhase, let prevSynthPhase else { return }
        let n = fftSize, bins = n / 2 + 1
        let s = frameIndex * hop
        let frameStartY = s - n / 2
        compactY(upTo: frameStartY + n)
        if frameStartY + n > yEnd {
            yEnd = frameStartY + n
        }
        let ha = Double(a - lastAnalysisCentre)
        let first = frameIndex == 0
        for c in 0..<spec.channelCount {
            let src = inBuf + c * inCapacity + (a - n / 2 - inStart)
            for i in 0..<n { frame[i] = src[i] * window[i] }
            fft.forward(frame, re: re, im: im)
            for k in 0..<bins {
                mag[k] = (re[k] * re[k] + im[k] * im[k]).squareRoot()
                phase[k] = atan2f(im[k], re[k])
            }
            let pa = prevAnalysisPhase + c * bins
            let ps = prevSynthPhase + c * bins
            if first {
                for k in 0..<bins { ps[k] = phase[k] }
            } else {
                // Peaks: local maxima over ±2 bins.
                var peakCount = 0
                for k in 1..<(bins - 1) {
                    let m = mag[k]
                    if m > mag[k - 1] && m >= mag[k + 1]
                        && (k < 2 || m > mag[k - 2]) && (k + 2 >= bins || m >= mag[k + 2]) && m > 0 {
                        peaks[peakCount] = Int32(k); peakCount += 1
                    }
                }
                if peakCount == 0 {
                    for k in 0..<bins { ps[k] = phase[k] }
                } else {
                    var regionStart = 0
                    for q in 0..<peakCount {
                        let p = Int(peaks[q])
                        // Region end: the magnitude minimum between this peak and the next.
                        var regionEnd = bins
                        if q + 1 < peakCount {
                            let next = Int(peaks[q + 1])
                            var lowest = p + 1
                            for k in (p + 1)..<next where mag[k] < mag[lowest] { lowest = k }
                            regionEnd = lowest
                        }
                        let omega = 2 * Float.pi * Float(p) / Float(n)
                        let dphi = princarg(phase[p] - pa[p] - omega * Float(ha))
                        let omegaInst = omega + dphi / Float(ha)
                        let peakSynth = princarg(ps[p] + omegaInst * Float(hop))
                        let peakAnalysis = phase[p]
                        for k in regionStart..<regionEnd {
                            re[k] = princarg(peakSynth + phase[k] - peakAnalysis)   // new synth phase
                        }
                        regionStart = regionEnd
                    }
                    for k in 0..<bins { ps[k] = re[k] }
                }
            }
            for k in 0..<bins { pa[k] = phase[k] }
            for k in 0..<bins {
                re[k] = mag[k] * cosf(ps[k])
                im[k] = mag[k] * sinf(ps[k])
            }
            im[0] = 0; im[bins - 1] = 0
            fft.inverse(re: re, im: im, output: frame)
            let dst = yBuf + c * yCapacity + (frameStartY - yStart)
            for i in 0..<n { dst[i] += frame[i] * synthWindow[i] }
        }
        lastAnalysisCentre = a
    }

    private func deallocate() {
        fft = nil
        table = nil
        window?.deallocate(); window = nil
        synthWindow?.deallocate(); synthWindow = nil
        inBuf?.deallocate(); inBuf = nil
        yBuf?.deallocate(); yBuf = nil
        prevAnalysisPhase?.deallocate(); prevAnalysisPhase = nil
        prevSynthPhase?.deallocate(); prevSynthPhase = nil
        frame?.deallocate(); frame = nil
        re?.deallocate(); re = nil
        im?.deallocate(); im = nil
        mag?.deallocate(); mag = nil
        phase?.deallocate(); phase = nil
        peaks?.deallocate(); peaks = nil
    }
}

/// The principal argument: x wrapped into [−π, π).
@inline(__always)
func princarg(_ x: Float) -> Float {
    let twoPi = 2 * Float.pi
    return x - twoPi * (x / twoPi + 0.5).rounded(.down)
}
