#if canImport(Glibc)
import Glibc
#endif

/// Above a tonality limit, the highs move by a constant frequency instead of by the pitch ratio.
///
/// A pitch shift by r maps f to r·f. Above a limit L the highs of most music are noise (air,
/// cymbals, breath, consonants) more than partials, and there a frequency shift, f → f + (r − 1)·L,
/// keeps every sample's timing (no frames, no smear of an attack) and is undone exactly by the
/// opposite shift: the two maps meet at L (r·L either way), so the spectrum is continuous. The
/// cost: partials above L are no longer harmonic (a 10 kHz partial of a 5 kHz note raised an
/// octave with L = 8 kHz lands at 18 kHz, not 20). Signalsmith Stretch's "tonality limit"; as
/// there, L is the limit over √r, so that a shift and its inverse split the band at the same
/// place (the first's output limit r·L is the second's input limit).
///
/// The input is split by two linear-phase FIRs of the same Kaiser window (so they sum exactly to
/// a low-pass at the top of the band): the lows, a low-pass at L, go to the pitch shifter; the
/// highs, an analytic band-pass from L to the top (only positive frequencies, so its real part is
/// the band-pass and its imaginary part that band-pass's Hilbert transform), are moved by
///
///     y[n] = Re{ z[n] · e^{jφ(n)} },   φ(n) = 2π·Δ·n/fs,   Δ = (r − 1)·L,
///
/// n the input time, so that a render and its inverse turn by opposite phases at the same
/// instant. The band-pass's ideal response, for m ≠ 0 (θ = 2π·f·m/fs), and m = 0:
///
///     Re a[m] = (sin θ_top − sin θ_L)/(π·m),   Im a[m] = (cos θ_L − cos θ_top)/(π·m)
///     Re a[0] = 2·(top − L)/fs,                 Im a[0] = 0
///
/// and the low-pass's h[m] = sin θ_L/(π·m), h[0] = 2·L/fs, each times the window. The top is
/// `transitionHz`/2 under Nyquist, and Δ lower when Δ > 0 (the shift must not carry the highs past
/// it). The filters run by overlap-save FFTs on fixed chunks of input (one forward and three
/// inverse transforms a chunk and channel, about a seventh of the work of the direct sums at
/// 250 taps); lows and highs come out `delayFrames` late, which the shifter adds to its latency.
/// Before a hit from silence both paths' filters ring (for 3 ms; unshifted the two rings cancel,
/// but the shifts part them), and the shifter's splice would copy the lows' ring as it puts the
/// hit back. So each path has a `TransientGate` against the whole input's envelope: the lows
/// before the shifter takes them, the moved highs before they are added. Neither path can top
/// the whole input's power but by that ring, so on other sound the gates pass every sample as it
/// is. Neither smears a hit either, so the gates do not look ahead and open at once (the hit's
/// first sample whole), and they close in a quarter of a millisecond (`gateCloseSeconds`).
///
/// Made by `PitchShifter.prepare` (control side); `reset`, `split` and `addHighs` on the render
/// side. One thread at a time.
final class TonalityLimit {
    /// The width of the filters' transition bands, where both paths carry part of the signal.
    static let transitionHz = 1000.0
    /// The filters' stop-band attenuation, dB (Kaiser's design rule gives β and the length).
    static let stopbandDB = 90.0
    /// The phase is worked out exactly every `phaseGroup` input frames and stepped by a table
    /// between (the same value whatever the blocks).
    static let phaseGroup = 64
    /// How fast the gates close (a one-pole time constant): neither path smears a hit, so what
    /// tops the input's envelope is the filters' ring, which starts 3 ms before the hit; the
    /// shifter's gate closes in 1 ms, which would leave it 10 dB higher.
    static let gateCloseSeconds = 0.00025

    /// The split's limit L (Hz, in the input) and the shift Δ (Hz).
    let crossoverHz: Double, shiftHz: Double
    /// The filters' length (odd) and how late their output is (half the length).
    let taps: Int, filterDelayFrames: Int
    /// The filters run by overlap-save on chunks of `chunkFrames` input frames (FFTs of
    /// `fftSize` = `chunkFrames` + `taps` − 1 points, at fixed input times, so the same for any
    /// blocks); lows and highs are `delayFrames` late: the filters' delay and a chunk.
    let fftSize: Int, chunkFrames: Int, delayFrames: Int
    private let channels: Int
    private let fft: Owned<RealFFT>
    /// The spectra of the low-pass and of the band-pass's real and imaginary parts (each re,
    /// then im, of `fftSize`/2 + 1 bins).
    private let spectra: UnsafeMutablePointer<Float>
    /// Per channel, the FFT's input: the last `taps` − 1 frames of the previous chunk, then this
    /// chunk's (`fill` of them so far).
    private let segments: UnsafeMutablePointer<Float>
    private var fill = 0
    /// Scratch: the chunk's spectrum, a product, and the inverse transform.
    private let scratch: UnsafeMutablePointer<Float>
    /// The lows by output time, per channel, a ring of `lowsFrames`.
    private let lows: UnsafeMutablePointer<Float>
    private let lowsFrames: Int
    /// The analytic highs by input time, per channel re then im, a ring of `highsFrames` (it
    /// holds them for the shifter's latency, a chunk and a block).
    private let highs: UnsafeMutablePointer<Float>
    private let highsFrames: Int
    /// e^{j·2π·Δ·k/fs} for k in 0..<`phaseGroup` (re, im).
    private let steps: UnsafeMutablePointer<Double>
    /// The moved highs of a block before they are added, per channel.
    private let moved: UnsafeMutablePointer<Float>
    private let maximumFrameCount: Int
    /// The gates on the moved highs and on the lows, each against the whole input's envelope
    /// by input time (`gate` records it; `lowsGate` reads it there).
    private let gate: Owned<TransientGate>, lowsGate: Owned<TransientGate>
    /// Input frames written since `reset`.
    private var written = 0
    private let sampleRate: Double

    /// The limit for `limitHz` at ratio `ratio` and `sampleRate`, or nil where it leaves no highs
    /// to move (the limit at or above the top of the band, or a neutral ratio) or where the split
    /// would reach 0 Hz (L or r·L under `transitionHz`: the engine refuses such a limit,
    /// `PitchShifterSettings.tonalityLimitFloorHz`).
    static func crossover(limitHz: Double, ratio: Double, sampleRate: Double) -> (crossoverHz: Double, shiftHz: Double, topHz: Double)? {
        guard limitHz > 0 && ratio != 1 else { return nil }
        let l = limitHz / ratio.squareRoot(), shift = (ratio - 1) * l
        guard l * min(1, ratio) >= transitionHz else { return nil }
        let top = sampleRate / 2 - transitionHz / 2 - max(0, shift)
        guard l + transitionHz < top else { return nil }
        return (l, shift, top)
    }

    /// The filters' length at `sampleRate`: Kaiser's N − 1 = (A − 8)/(2.285·Δω), odd.
    static func taps(sampleRate: Double) -> Int {
        let dw = 2 * Double.pi * transitionHz / sampleRate
        let n = Int(((stopbandDB - 8) / (2.285 * dw)).rounded(.up)) + 1
        return n | 1
    }

    /// The FFT size for `taps`: at least four times the filters' length, so that most of each
    /// transform is new output.
    static func fftSize(taps: Int) -> Int { powerOfTwo(atLeast: 4 * (taps - 1)) }

    /// The delay the split adds at `sampleRate` (the filters' and a chunk).
    static func delayFrames(sampleRate: Double) -> Int {
        let n = taps(sampleRate: sampleRate)
        return n / 2 + fftSize(taps: n) - (n - 1)
    }

    /// A split at `crossoverHz` moving the highs by `shiftHz`, for `channels` channels, whose
    /// highs wait `latencyFrames` (the shifter's own latency) in blocks of at most
    /// `maximumFrameCount`.
    init(limitHz: Double, ratio: Double, sampleRate: Double, channels: Int, latencyFrames: Int, maximumFrameCount: Int) {
        let c = Self.crossover(limitHz: limitHz, ratio: ratio, sampleRate: sampleRate)!
        crossoverHz = c.crossoverHz; shiftHz = c.shiftHz
        self.sampleRate = sampleRate
        self.channels = channels
        let n = Self.taps(sampleRate: sampleRate), d = n / 2, size = Self.fftSize(taps: n), bins = size / 2 + 1
        taps = n; filterDelayFrames = d; fftSize = size; chunkFrames = size - (n - 1)
        delayFrames = d + chunkFrames
        fft = Owned(RealFFT(size: size))
        // the filters' impulse responses h[k], k = 0…n − 1, at m = k − d from their centre
        let beta = 0.1102 * (Self.stopbandDB - 8.7), i0 = SincTable.besselI0(beta)
        let thetaL = 2 * Double.pi * c.crossoverHz / sampleRate, thetaTop = 2 * Double.pi * c.topHz / sampleRate
        let impulses = UnsafeMutablePointer<Float>.allocate(capacity: 3 * size)
        impulses.initialize(repeating: 0, count: 3 * size)
        for k in 0..<n {
            let m = Double(k - d), u = m / Double(d)
            let w = SincTable.besselI0(beta * max(0, 1 - u * u).squareRoot()) / i0
            if m == 0 {
                impulses[k] = Float(w * thetaL / Double.pi)
                impulses[size + k] = Float(w * (thetaTop - thetaL) / Double.pi)
            } else {
                impulses[k] = Float(w * sin(thetaL * m) / (Double.pi * m))
                impulses[size + k] = Float(w * (sin(thetaTop * m) - sin(thetaL * m)) / (Double.pi * m))
                impulses[2 * size + k] = Float(w * (cos(thetaL * m) - cos(thetaTop * m)) / (Double.pi * m))
            }
        }
        spectra = .allocate(capacity: 6 * bins)
        for f in 0..<3 { fft.object.forward(impulses + f * size, re: spectra + 2 * f * bins, im: spectra + (2 * f + 1) * bins) }
        impulses.deallocate()
        segments = .allocate(capacity: channels * size)
        scratch = .allocate(capacity: 4 * bins + size)
        lowsFrames = powerOfTwo(atLeast: 2 * chunkFrames + 8)
        lows = .allocate(capacity: channels * lowsFrames)
        highsFrames = powerOfTwo(atLeast: latencyFrames + chunkFrames + maximumFrameCount + n)
        highs = .allocate(capacity: 2 * channels * highsFrames)
        self.maximumFrameCount = maximumFrameCount
        moved = .allocate(capacity: channels * maximumFrameCount)
        gate = Owned(TransientGate(sampleRate: sampleRate, reachFrames: latencyFrames + delayFrames + maximumFrameCount + 64,
                                   lookaheadSeconds: 0, openSeconds: 0, closeSeconds: Self.gateCloseSeconds))
        lowsGate = Owned(TransientGate(sampleRate: sampleRate, reachFrames: 0,
                                       lookaheadSeconds: 0, openSeconds: 0, closeSeconds: Self.gateCloseSeconds))
        steps = .allocate(capacity: 2 * Self.phaseGroup)
        for k in 0..<Self.phaseGroup {
            let phase = 2 * Double.pi * c.shiftHz * Double(k) / sampleRate
            steps[2 * k] = cos(phase); steps[2 * k + 1] = sin(phase)
        }
        reset()
    }

    deinit {
        spectra.deallocate(); segments.deallocate(); scratch.deallocate(); lows.deallocate()
        highs.deallocate(); steps.deallocate(); moved.deallocate()
        fft.release(); gate.release(); lowsGate.release()
    }

    @_noLocks
    func reset() {
        segments.update(repeating: 0, count: channels * fftSize)
        lows.update(repeating: 0, count: channels * lowsFrames)
        highs.update(repeating: 0, count: 2 * channels * highsFrames)
        gate { $0.reset() }
        lowsGate { $0.reset() }
        fill = 0
        written = 0
    }

    /// Takes the block's input (input times `written` on) and leaves in its place the lows,
    /// `delayFrames` late and gated; keeps the highs' analytic signal for `addHighs`.
    @_noLocks
    func split(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let at = written, history = taps - 1, size = fftSize, lMask = lowsFrames - 1, delay = delayFrames
        let input = UnsafePointer(left), inputRight = right.map { UnsafePointer($0) }
        gate { $0.recordInput(left: input, right: inputRight, frameCount: frameCount, at: at) }
        for k in 0..<frameCount {
            let t = at + k
            segments[history + fill] = left[k]
            if let right { segments[size + history + fill] = right[k] }
            fill += 1
            if fill == chunkFrames {
                runChunk(firstTime: t + 1 - chunkFrames)
                fill = 0
            }
            // the lows of output time t − delay (their chunk ended a chunk ago)
            let slot = (t - delay) & lMask
            left[k] = lows[slot]
            if let right { right[k] = lows[lowsFrames + slot] }
        }
        let envelope = gate { $0.view }
        lowsGate { $0.process(left: left, right: right, frameCount: frameCount, firstTime: at - delay, envelopeOf: envelope) }
        written += frameCount
    }

    /// The filters on a whole chunk (input times `firstTime` on), every channel: their outputs
    /// for output times `firstTime` − d on into the rings; the segment then keeps its last
    /// `taps` − 1 frames for the next.
    @inline(__always)
    private func runChunk(firstTime: Int) {
        let size = fftSize, bins = size / 2 + 1, history = taps - 1, count = chunkFrames
        let lMask = lowsFrames - 1, hMask = highsFrames - 1, d = filterDelayFrames
        let specRe = scratch, specIm = scratch + bins, prodRe = scratch + 2 * bins, prodIm = scratch + 3 * bins
        let wave = scratch + 4 * bins
        for c in 0..<channels {
            let segment = segments + c * size
            fft { $0.forward(segment, re: specRe, im: specIm) }
            for f in 0..<3 {
                let hRe = spectra + 2 * f * bins, hIm = spectra + (2 * f + 1) * bins
                vmultiplyComplex(specRe, specIm, hRe, hIm, prodRe, prodIm, bins)
                fft { $0.inverse(re: prodRe, im: prodIm, output: wave) }
                // output i of the chunk: output time firstTime + i − d, into its ring in at most
                // two runs
                let ring = f == 0 ? lows + c * lowsFrames : highs + (2 * c + f - 1) * highsFrames
                let ringMask = f == 0 ? lMask : hMask
                var i = 0
                while i < count {
                    let slot = (firstTime + i - d) & ringMask
                    let run = min(count - i, ringMask + 1 - slot)
                    vcopy(wave + history + i, into: ring + slot, run)
                    i += run
                }
            }
            for i in 0..<history { segment[i] = segment[count + i] }
        }
    }

    /// Adds the highs, moved and gated, to the block whose frame k holds the lows of input time
    /// `firstTime` + k (before 0: nothing).
    @_noLocks
    func addHighs(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int, firstTime: Int) {
        let movedLeft = moved, movedRight = right != nil ? moved + maximumFrameCount : nil
        movedLeft.update(repeating: 0, count: frameCount)
        movedRight?.update(repeating: 0, count: frameCount)
        shiftHighs(movedLeft, movedRight, frameCount: frameCount, firstTime: firstTime)
        gate { $0.process(left: movedLeft, right: movedRight, frameCount: frameCount, firstTime: firstTime) }
        vadd(movedLeft, into: left, frameCount)
        if let right, let movedRight { vadd(movedRight, into: right, frameCount) }
    }

    /// The block's moved highs (frame k at input time `firstTime` + k; before 0 left at 0).
    @inline(__always)
    private func shiftHighs(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                            firstTime: Int) {
        let hMask = highsFrames - 1, group = Self.phaseGroup, rate = sampleRate, shift = shiftHz
        var k = max(0, -firstTime)
        while k < frameCount {
            let t = firstTime + k
            // e^{jφ} at the group's start, exactly (the fraction of turns), then the table
            let start = t - t % group
            let turns = shift * Double(start) / rate
            let phase = 2 * Double.pi * (turns - Libm.roundedDown(turns))
            let (c0, s0) = (Libm.cos(phase), Libm.sin(phase))
            let end = min(frameCount, k + group - (t - start))
            while k < end {
                let j = firstTime + k - start
                let cr = c0 * steps[2 * j] - s0 * steps[2 * j + 1], ci = c0 * steps[2 * j + 1] + s0 * steps[2 * j]
                let (c, s) = (Float(cr), Float(ci))
                let slot = (firstTime + k) & hMask
                left[k] += highs[slot] * c - highs[highsFrames + slot] * s
                if let right {
                    let h = highs + 2 * highsFrames
                    right[k] += h[slot] * c - h[highsFrames + slot] * s
                }
                k += 1
            }
        }
    }
}

/// out = a·b for complex spectra in split form (`count` bins), eight at a time.
@inline(__always)
private func vmultiplyComplex(_ aRe: UnsafePointer<Float>, _ aIm: UnsafePointer<Float>, _ bRe: UnsafePointer<Float>,
                              _ bIm: UnsafePointer<Float>, _ outRe: UnsafeMutablePointer<Float>, _ outIm: UnsafeMutablePointer<Float>,
                              _ count: Int) {
    var i = 0
    while i + 8 <= count {
        let ar = UnsafeRawPointer(aRe + i).loadUnaligned(as: SIMD8<Float>.self), ai = UnsafeRawPointer(aIm + i).loadUnaligned(as: SIMD8<Float>.self)
        let br = UnsafeRawPointer(bRe + i).loadUnaligned(as: SIMD8<Float>.self), bi = UnsafeRawPointer(bIm + i).loadUnaligned(as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(outRe + i).storeBytes(of: ar * br - ai * bi, as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(outIm + i).storeBytes(of: ar * bi + ai * br, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        outRe[i] = aRe[i] * bRe[i] - aIm[i] * bIm[i]
        outIm[i] = aRe[i] * bIm[i] + aIm[i] * bRe[i]
        i += 1
    }
}
