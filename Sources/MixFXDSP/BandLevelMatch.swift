#if canImport(Glibc)
import Glibc
#endif

/// Brings a slower tempo's output back to the input's short-time level in each octave above
/// 1 kHz (a faster tempo: `LevelMatch`; a fixed pitch at tempo 1: `PitchLevelMatch`).
///
/// Stretching (σ = r/R above 1 at a slower tempo R, pitch ratio r = 1), the vocoder's frames
/// (N ≈ 93 ms) spread what changes within them over their whole length: the start of a
/// consonant, a shaker or a cymbal comes up to half a frame early and stays after it has
/// stopped, and the more so the faster the material changes (stretching what a faster tempo
/// made, a round trip's second pass, most). Below 1 kHz that is what keeps the bass's
/// resolution; above it the input's own level is known at a finer time. This part splits the
/// output into short frames (n = `frameSeconds`, hop H = n/4, Hann), measures each frame's
/// power in the bands, and scales each band toward the input's at the same time:
///
///     g_b(j) = √(P_in,b(jR) / P_out,b(j)),
///
/// P_out,b(j) the mean of the output's band power over `outputFrames`/R frames centred on
/// frame j, P_in,b(x) the input's over `inputFrames` frames at input hop x (its frames the same
/// length, at hops H of input time, interpolated between hops): the same time span on both
/// sides. g is kept within `lowestGain`…`highestGain`, smoothed in dB by a triangle of
/// ±`smoothingHops` hops, and moved toward 1 by `deadZone` (1 exactly within it). The bands
/// are octaves from `edgesHz` up, complementary (raised-cosine crossings half an octave wide,
/// their weights summing to 1 at every bin), and below the first edge g = 1. A bin's gain is
/// its bands' gains by their weights, G(k), and the output is
///
///     y = x + Σ_j OLA_j(IFFT((G_j − 1)·X_j)·w) / Σ w²/H,
///
/// so a frame whose every band has g = 1 adds nothing: a steady tone passes to the bit.
///
/// The smoothing and the window look ahead: `push` takes the shifter's output as it is made,
/// `pop` gives it back `delayFrames` later (the shifter makes its output that far ahead, as with
/// `LevelMatch`). `recordInput` follows the input as it is pulled, by input time. Made by
/// `PitchShifter.prepare` (control side); `reset`, `recordInput`, `push`, `pop` on the render
/// side (no allocation). One thread at a time. Only an offline shifter at a fixed tempo has
/// one (a tempo lane and live playback run the streaming shifter).
final class BandLevelMatch {
    /// The short frames' length: the least power of two ≥ 256 covering it (512 at 44.1/48 kHz).
    static let frameSeconds = 0.0107
    /// The bands' lower edges; below the first, no match.
    static let edgesHz: [Double] = [1000, 2000, 4000, 8000]
    /// Width of each crossing between two bands, octaves.
    static let crossingOctaves = 0.5
    /// Frames the input's power is averaged over (input hops); the output's over that over R.
    static let inputFrames = 2
    /// Half-width of the gains' triangular smoothing, hops.
    static let smoothingHops = 5
    /// The gains' range: −20 dB to +3 dB.
    static let lowestGain = 0.1, highestGain = 1.41253754462275
    /// g within this of 1 is 1; beyond it, g is moved this much toward 1.
    static let deadZone = 0.005
    /// Added to both powers (mean square per sample): silence against silence is g = 1.
    static let powerFloor = 1e-10
    /// The correction at a frame is kept within the output's peak from the start of the
    /// `envelopeBlock` frames before its own block up to it (`pop`).
    static let envelopeBlock = 32

    /// How far `pop` lags `push`, frames.
    let delayFrames: Int
    /// Where the owner may make a block before `push`: `maximumFrameCount` frames a channel.
    let staging: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)

    private let n: Int, hop: Int, bins: Int, bands: Int, channels: Int, tempo: Double
    private let outputFrames: Int, maximumFrameCount: Int
    private let fft: Owned<RealFFT>
    private let window: UnsafeMutablePointer<Float>
    /// Per bin: the band below it (or its own) and the weight of the band above (0 in a plateau).
    private let bandBelow: UnsafeMutablePointer<Int>, upperWeight: UnsafeMutablePointer<Float>
    /// Turns a band power of Σ|X|² into a mean square per sample (Parseval, the window's power).
    private let powerScale: Double
    /// 1 / (Σ w²/H): the overlap-add's gain.
    private let olaScale: Float
    // the output held back and its correction, by output index (`heldMask + 1` frames a channel)
    private let held: UnsafeMutablePointer<Float>, correction: UnsafeMutablePointer<Float>, heldMask: Int
    // the input by input time (`inputMask + 1` frames a channel)
    private let input: UnsafeMutablePointer<Float>, inputMask: Int
    // per output frame (`frameMask + 1` of them): its spectra (channel c's re at c·bins, im after
    // all channels), its band powers, its raw log gains
    private let spectra: UnsafeMutablePointer<Float>, outputPowers: UnsafeMutablePointer<Double>
    private let logGains: UnsafeMutablePointer<Double>, frameMask: Int
    // per input frame (`inputFrameMask + 1`): its band powers
    private let inputPowers: UnsafeMutablePointer<Double>, inputFrameMask: Int
    // scratch: one frame's samples, one channel's spectrum, the gains of a frame's bands
    private let frame: UnsafeMutablePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>
    private let gains: UnsafeMutablePointer<Double>
    /// The output frames the state has reached: pushed, popped; frames analysed, given a raw
    /// gain, applied; input recorded, input frames analysed.
    private var pushed = 0, popped = 0, analysed = 0, rawDone = 0, applied = 0
    private var inputRecorded = 0, inputAnalysed = 0

    /// A match for a shifter at `tempo` R (below 1) with `channels` channels at `sampleRate`,
    /// given blocks of at most `maximumFrameCount`, whose input is pulled at most
    /// `inputAheadFrames` past the input time of the last output frame made.
    init(sampleRate: Double, channels: Int, tempo: Double, maximumFrameCount: Int, inputAheadFrames: Int) {
        precondition(channels == 1 || channels == 2)
        precondition(tempo > 0 && tempo < 1)
        var size = 256
        while Double(size) < sampleRate * Self.frameSeconds { size *= 2 }
        n = size
        hop = size / 4
        bins = size / 2 + 1
        bands = Self.edgesHz.count + 1
        self.channels = channels
        self.tempo = tempo
        self.maximumFrameCount = max(1, maximumFrameCount)
        outputFrames = max(1, Int((Double(Self.inputFrames) / tempo).rounded()))
        fft = Owned(RealFFT(size: size))
        window = .allocate(capacity: size)
        var sumSquares = 0.0
        for i in 0..<size {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(size))
            window[i] = Float(w)
            sumSquares += w * w
        }
        // Parseval: Σ_k |X_k|² over the half spectrum (k = 1 … n/2 − 1 counted twice) is
        // n·Σ(w·x)²/2, the mean square of a steady signal times n·Σw²/2
        powerScale = 2 / (Double(size) * sumSquares)
        olaScale = Float(Double(hop) / sumSquares)
        bandBelow = .allocate(capacity: bins)
        upperWeight = .allocate(capacity: bins)
        let edges = Self.edgesHz, half = Self.crossingOctaves / 2
        for k in 0..<bins {
            let f = max(1e-9, Double(k) * sampleRate / Double(size))
            var below = 0, weight = 0.0
            for (e, edge) in edges.enumerated() {
                let t = min(1, max(0, (log2(f / edge) + half) / Self.crossingOctaves))
                if t >= 1 { below = e + 1 } else if t > 0 { below = e; weight = 0.5 - 0.5 * cos(Double.pi * t) }
            }
            bandBelow[k] = below
            upperWeight[k] = Float(weight)
        }
        let s = Self.smoothingHops
        // frame j is final once the output reaches its window's end; its gain once the raw
        // gains up to j + S are (the output's average reaching outputFrames/2 past each); the
        // output at t once every frame covering it is applied
        delayFrames = size + (s + outputFrames - outputFrames / 2 + 1) * hop
        heldMask = powerOfTwo(atLeast: delayFrames + self.maximumFrameCount + size + 1) - 1
        held = .allocate(capacity: channels * (heldMask + 1))
        correction = .allocate(capacity: channels * (heldMask + 1))
        inputMask = powerOfTwo(atLeast: size + self.maximumFrameCount + hop + 1) - 1
        input = .allocate(capacity: channels * (inputMask + 1))
        frameMask = powerOfTwo(atLeast: delayFrames / hop + 2 * s + outputFrames + self.maximumFrameCount / hop + 8) - 1
        spectra = .allocate(capacity: (frameMask + 1) * 2 * channels * bins)
        outputPowers = .allocate(capacity: (frameMask + 1) * bands)
        logGains = .allocate(capacity: (frameMask + 1) * bands)
        // the input frames from those the oldest raw gain still to come reads to those the
        // input pulled ahead completes
        let inputFrameSpan = (inputAheadFrames + self.maximumFrameCount + delayFrames) / hop + outputFrames + 2 * s + 16
        inputFrameMask = powerOfTwo(atLeast: inputFrameSpan) - 1
        inputPowers = .allocate(capacity: (inputFrameMask + 1) * bands)
        frame = .allocate(capacity: size)
        re = .allocate(capacity: bins)
        im = .allocate(capacity: bins)
        gains = .allocate(capacity: bands)
        staging = (.allocate(capacity: self.maximumFrameCount), .allocate(capacity: self.maximumFrameCount))
        staging.left.initialize(repeating: 0, count: self.maximumFrameCount)
        staging.right.initialize(repeating: 0, count: self.maximumFrameCount)
        reset()
    }

    deinit {
        for p in [window, held, correction, input, spectra, frame, re, im, upperWeight, staging.left, staging.right] { p.deallocate() }
        outputPowers.deallocate(); logGains.deallocate(); inputPowers.deallocate(); gains.deallocate(); bandBelow.deallocate()
        fft.release()
    }

    /// Nothing recorded; the input and output before time 0 are silence.
    @_noLocks
    func reset() {
        held.update(repeating: 0, count: channels * (heldMask + 1))
        correction.update(repeating: 0, count: channels * (heldMask + 1))
        input.update(repeating: 0, count: channels * (inputMask + 1))
        pushed = 0; popped = 0; analysed = 0; rawDone = 0; applied = 0
        inputRecorded = 0; inputAnalysed = 0
    }

    /// Follows the input's next `frameCount` frames, input times `time` on (each call's `time`
    /// where the last one ended).
    @_noLocks
    func recordInput(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        let recorded = inputRecorded
        precondition(time == recorded)
        let ring = input, mask = inputMask, stride = inputMask + 1
        for k in 0..<frameCount {
            ring[(time + k) & mask] = left[k]
            if let right { ring[stride + ((time + k) & mask)] = right[k] }
        }
        inputRecorded = time + frameCount
        // input frame i covers [iH − n/2, iH + n/2)
        let h = hop, halfFrame = n / 2, powers = inputPowers, fMask = inputFrameMask, b = bands
        var i = inputAnalysed
        while i * h + halfFrame <= inputRecorded {
            bandPowers(of: ring, mask: mask, start: i * h - halfFrame, spectraOut: nil, into: powers + (i & fMask) * b)
            i += 1
        }
        inputAnalysed = i
    }

    /// Takes the shifter's next `frameCount` output frames (after the ones pushed before) and
    /// applies the gains of every short frame they complete.
    @_noLocks
    func push(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int) {
        let first = pushed, ring = held, mask = heldMask, stride = heldMask + 1
        for k in 0..<frameCount {
            ring[(first + k) & mask] = left[k]
            if let right { ring[stride + ((first + k) & mask)] = right[k] }
        }
        pushed = first + frameCount
        let h = hop, halfFrame = n / 2, fMask = frameMask, b = bands, perFrame = 2 * channels * bins
        let powers = outputPowers, store = spectra
        var j = analysed
        while j * h + halfFrame <= pushed {
            bandPowers(of: ring, mask: mask, start: j * h - halfFrame, spectraOut: store + (j & fMask) * perFrame,
                       into: powers + (j & fMask) * b)
            j += 1
        }
        analysed = j
        // raw gain j averages the output over [j − F/2, j − F/2 + F)
        let f = outputFrames, s = Self.smoothingHops
        var raw = rawDone
        while raw - f / 2 + f <= analysed {
            rawGain(raw)
            raw += 1
        }
        rawDone = raw
        var a = applied
        while a + s < rawDone {
            apply(a)
            a += 1
        }
        applied = a
    }

    /// The band powers (mean square per sample, the channels' mean) of the frame of `ring` from
    /// index `start`; with `spectraOut`, each channel's spectrum kept there.
    @inline(__always)
    private func bandPowers(of ring: UnsafeMutablePointer<Float>, mask: Int, start: Int,
                            spectraOut: UnsafeMutablePointer<Float>?, into powers: UnsafeMutablePointer<Double>) {
        let size = n, nb = bins, b = bands, stride = mask + 1, ch = channels
        let below = bandBelow, upper = upperWeight, scale = powerScale / Double(ch)
        let x = frame, w = window, spectrumRe = re, spectrumIm = im
        for band in 0..<b { powers[band] = 0 }
        for c in 0..<ch {
            let base = ring + c * stride
            for t in 0..<size {
                let i = start + t
                x[t] = i < 0 ? 0 : base[i & mask]
            }
            fft { $0.forward(x, window: w, re: spectrumRe, im: spectrumIm) }
            if let spectraOut {
                vcopy(spectrumRe, into: spectraOut + c * nb, nb)
                vcopy(spectrumIm, into: spectraOut + (ch + c) * nb, nb)
            }
            for k in 0..<nb {
                let p = Double(spectrumRe[k] * spectrumRe[k] + spectrumIm[k] * spectrumIm[k])
                let u = Double(upper[k]), lower = below[k]
                powers[lower] += (1 - u) * p * scale
                if u > 0 { powers[lower + 1] += u * p * scale }
            }
        }
    }

    /// Frame j's raw log gains, by band.
    @inline(__always)
    private func rawGain(_ j: Int) {
        let f = outputFrames, fi = Self.inputFrames, b = bands, fMask = frameMask, iMask = inputFrameMask
        let outPowers = outputPowers, inPowers = inputPowers, out = logGains + (j & fMask) * b
        let lo = max(0, j - f / 2), hi = j - f / 2 + f
        // the input hop of frame j's time, and the input frames either side of it
        let x = Double(j) * tempo
        let i0 = Int(Libm.roundedDown(x)), fraction = x - Double(i0)
        let inputDone = inputAnalysed
        precondition(i0 + 1 - fi / 2 + fi <= inputDone, "the input a band gain reads has not been recorded")
        let floor = Self.powerFloor, lowest = Self.lowestGain, highest = Self.highestGain
        out[0] = 0
        for band in 1..<b {
            var outputPower = 0.0
            for i in lo..<hi { outputPower += outPowers[(i & fMask) * b + band] }
            outputPower /= Double(hi - lo)
            // (the mean of input frames [i − F/2, i − F/2 + F) at the hops either side)
            var before = 0.0, after = 0.0
            let a0 = max(0, i0 - fi / 2), e0 = i0 - fi / 2 + fi, a1 = max(0, i0 + 1 - fi / 2), e1 = e0 + 1
            for i in a0..<e0 { before += inPowers[(i & iMask) * b + band] }
            for i in a1..<e1 { after += inPowers[(i & iMask) * b + band] }
            let inputPower = (1 - fraction) * before / Double(e0 - a0) + fraction * after / Double(e1 - a1)
            let g = min(max(Libm.sqrt((inputPower + floor) / (outputPower + floor)), lowest), highest)
            out[band] = Libm.log(g)
        }
    }

    /// Smooths frame j's gains and adds its correction to the output.
    @inline(__always)
    private func apply(_ j: Int) {
        let s = Self.smoothingHops, b = bands, fMask = frameMask, logs = logGains, g = gains
        let dead = Self.deadZone, norm = Double((s + 1) * (s + 1))
        var any = false
        for band in 1..<b {
            var sum = 0.0
            for d in -s...s where j + d >= 0 {
                sum += Double(s + 1 - abs(d)) * logs[((j + d) & fMask) * b + band]
            }
            var gain = Libm.exp(sum / norm)
            if gain > 1 + dead { gain -= dead } else if gain < 1 - dead { gain += dead } else { gain = 1 }
            g[band] = gain
            if gain != 1 { any = true }
        }
        guard any else { return }
        g[0] = 1
        let nb = bins, ch = channels, size = n, h = hop, perFrame = 2 * ch * nb
        let below = bandBelow, upper = upperWeight, scale = olaScale, w = window
        let stored = spectra + (j & fMask) * perFrame, spectrumRe = re, spectrumIm = im, x = frame
        let corr = correction, mask = heldMask, stride = heldMask + 1, start = j * h - size / 2
        for c in 0..<ch {
            for k in 0..<nb {
                let u = upper[k], lower = below[k]
                let gk = Float(g[lower]) * (1 - u) + (u > 0 ? Float(g[lower + 1]) * u : 0) - 1
                spectrumRe[k] = stored[c * nb + k] * gk
                spectrumIm[k] = stored[(ch + c) * nb + k] * gk
            }
            fft { $0.inverse(re: spectrumRe, im: spectrumIm, output: x) }
            let base = corr + c * stride
            for t in 0..<size where start + t >= 0 {
                base[(start + t) & mask] += x[t] * w[t] * scale
            }
        }
    }

    /// Writes the next `frameCount` frames of the held output with their corrections (frame i
    /// is what `push` was given as frame i; `delayFrames` more must have been pushed).
    @_noLocks
    func pop(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let first = popped, ring = held, corr = correction, mask = heldMask, stride = heldMask + 1
        let reach = (first + frameCount + n / 2) / hop, done = applied
        precondition(reach < done || first + frameCount <= 0,
                     "a band match popped ahead of its gains")
        let block = Self.envelopeBlock
        var envelopeBlock = Int.min, envelope: Float = 0
        for k in 0..<frameCount {
            let t = first + k, slot = t & mask
            // the correction kept within the output's own peak from the block before this
            // frame's up to this frame: a short frame's correction is spread over the frame, and
            // where a hit follows silence it would otherwise reach into the silence before it
            if t / block != envelopeBlock {
                envelopeBlock = t / block
                envelope = 0
                for i in max(0, (envelopeBlock - 1) * block)..<max(0, envelopeBlock * block) {
                    envelope = max(envelope, abs(ring[i & mask]))
                    if right != nil { envelope = max(envelope, abs(ring[stride + (i & mask)])) }
                }
            }
            envelope = max(envelope, abs(ring[slot]))
            if right != nil { envelope = max(envelope, abs(ring[stride + slot])) }
            left[k] = ring[slot] + min(max(corr[slot], -envelope), envelope)
            corr[slot] = 0
            if let right {
                right[k] = ring[stride + slot] + min(max(corr[stride + slot], -envelope), envelope)
                corr[stride + slot] = 0
            }
        }
        popped = first + frameCount
    }
}
