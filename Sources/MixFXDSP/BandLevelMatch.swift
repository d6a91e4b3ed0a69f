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
    /// The short frames' length: the least power of two ≥ 256 covering it (512 at 44.1 and
    /// 48 kHz, 1024 at 88.2 and 96 kHz).
    static let frameSeconds = 0.0106
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
    /// The correction at a frame is kept within the output's peak from the start of the block
    /// of `envelopeBlock` frames before its own up to it (`pop`).
    static let envelopeBlock = 32

    /// How far `pop` lags `push`, frames.
    let delayFrames: Int
    /// Where the owner may make a block before `push`: `maximumFrameCount` frames a channel.
    let staging: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)

    private let n: Int, hop: Int, bins: Int, bands: Int, channels: Int, tempo: Double
    private let outputFrames: Int, maximumFrameCount: Int
    private let fft: Owned<RealFFT>
    private let window: UnsafeMutablePointer<Float>
    /// Band b's bins, from `bandFirst[b]`, `bandCount[b]` of them, and their weights in it
    /// (from `bandWeights[bandOffset[b]]`; 1 in its plateau, the crossings' raised cosines at its
    /// edges; a bin's weights sum to 1). Band 0 (below the first edge) is not kept.
    private let bandFirst: UnsafeMutablePointer<Int>, bandCount: UnsafeMutablePointer<Int>
    private let bandOffset: UnsafeMutablePointer<Int>, bandWeights: UnsafeMutablePointer<Float>
    /// Turns a band power of Σ|X|² into a mean square per sample (Parseval, the window's power).
    private let powerScale: Double
    /// 1 / (Σ w²/H): the overlap-add's gain; the window times it (the synthesis window).
    private let olaScale: Float, scaledWindow: UnsafeMutablePointer<Float>
    /// Scratch: a frame's power by bin (the channels' sum), and its bins' gains less 1.
    private let binPower: UnsafeMutablePointer<Float>, binGain: UnsafeMutablePointer<Float>
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
        let ola = Float(Double(hop) / sumSquares)
        olaScale = ola
        // band b's weight at frequency f: above(b) − above(b + 1), above(e) the raised cosine
        // from 0 to 1 over `crossingOctaves` centred on edge e (1 for band 0, 0 past the last)
        let edges = Self.edgesHz, half = Self.crossingOctaves / 2, count = edges.count + 1
        func above(_ e: Int, _ k: Int) -> Double {
            if e == 0 { return 1 }
            if e > edges.count { return 0 }
            let f = max(1e-9, Double(k) * sampleRate / Double(size))
            let t = min(1, max(0, (log2(f / edges[e - 1]) + half) / Self.crossingOctaves))
            return 0.5 - 0.5 * cos(Double.pi * t)
        }
        bandFirst = .allocate(capacity: count)
        bandCount = .allocate(capacity: count)
        bandOffset = .allocate(capacity: count)
        var weights: [Float] = []
        for b in 0..<count {
            let inBand = (0..<bins).filter { above(b, $0) - above(b + 1, $0) > 0 }
            let first = b == 0 ? 0 : inBand.first ?? bins, end = b == 0 ? 0 : (inBand.last ?? (bins - 1)) + 1
            bandFirst[b] = first
            bandCount[b] = max(0, end - first)
            bandOffset[b] = weights.count
            for k in first..<max(first, end) { weights.append(Float(above(b, k) - above(b + 1, k))) }
        }
        bandWeights = .allocate(capacity: max(1, weights.count))
        bandWeights.initialize(from: weights, count: weights.count)
        scaledWindow = .allocate(capacity: size)
        for i in 0..<size { scaledWindow[i] = window[i] * ola }
        binPower = .allocate(capacity: bins)
        binGain = .allocate(capacity: bins)
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
        frameMask = powerOfTwo(atLeast: 2 * s + outputFrames + 4) - 1
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
        for p in [window, scaledWindow, binPower, binGain, held, correction, input, spectra, frame, re, im, bandWeights,
                  staging.left, staging.right] { p.deallocate() }
        outputPowers.deallocate(); logGains.deallocate(); inputPowers.deallocate(); gains.deallocate()
        bandFirst.deallocate(); bandCount.deallocate(); bandOffset.deallocate()
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
        copyIntoRing(left, ring, mask: mask, at: time, frameCount)
        if let right { copyIntoRing(right, ring + stride, mask: mask, at: time, frameCount) }
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
        copyIntoRing(left, ring, mask: mask, at: first, frameCount)
        if let right { copyIntoRing(right, ring + stride, mask: mask, at: first, frameCount) }
        pushed = first + frameCount
        let h = hop, halfFrame = n / 2, fMask = frameMask, b = bands, perFrame = 2 * channels * bins
        let powers = outputPowers, store = spectra, f = outputFrames, s = Self.smoothingHops
        var j = analysed, raw = rawDone, a = applied
        // each frame as soon as it is complete, and the gains it completes (raw gain i averages
        // the output over [i − F/2, i − F/2 + F); gain i smooths raw gains i − S … i + S), so the
        // rings hold only the frames between the oldest gain to come and the newest frame
        while j * h + halfFrame <= pushed {
            bandPowers(of: ring, mask: mask, start: j * h - halfFrame, spectraOut: store + (j & fMask) * perFrame,
                       into: powers + (j & fMask) * b)
            j += 1
            analysed = j
            while raw - f / 2 + f <= j {
                rawGain(raw)
                raw += 1
            }
            while a + s < raw {
                apply(a)
                a += 1
            }
        }
        rawDone = raw
        applied = a
    }

    /// The band powers (mean square per sample, the channels' mean) of the frame of `ring` from
    /// index `start` (before 0: silence); with `spectraOut`, each channel's spectrum kept there.
    @inline(__always)
    private func bandPowers(of ring: UnsafeMutablePointer<Float>, mask: Int, start: Int,
                            spectraOut: UnsafeMutablePointer<Float>?, into powers: UnsafeMutablePointer<Double>) {
        let nb = bins, b = bands, stride = mask + 1, ch = channels
        let scale = powerScale / Double(ch), power = binPower
        let x = frame, w = window, spectrumRe = re, spectrumIm = im
        let first = bandFirst, counts = bandCount, offsets = bandOffset, weights = bandWeights
        for c in 0..<ch {
            copyFrame(from: ring + c * stride, mask: mask, start: start, into: x)
            fft { $0.forward(x, window: w, re: spectrumRe, im: spectrumIm) }
            if let spectraOut {
                vcopy(spectrumRe, into: spectraOut + c * nb, nb)
                vcopy(spectrumIm, into: spectraOut + (ch + c) * nb, nb)
            }
            vaddPower(spectrumRe, spectrumIm, power, nb, accumulating: c > 0)
        }
        powers[0] = 0
        for band in 1..<b {
            powers[band] = Double(vdot(power + first[band], weights + offsets[band], counts[band])) * scale
        }
    }

    /// `count` samples into a ring at index `at` on, in at most two copies.
    @inline(__always)
    private func copyIntoRing(_ x: UnsafePointer<Float>, _ ring: UnsafeMutablePointer<Float>, mask: Int, at: Int, _ count: Int) {
        var t = 0
        while t < count {
            let slot = (at + t) & mask, run = min(count - t, mask + 1 - slot)
            vcopy(x + t, into: ring + slot, run)
            t += run
        }
    }

    /// The `n` samples of a ring from index `start` (silence before 0), in at most two copies.
    @inline(__always)
    private func copyFrame(from ring: UnsafeMutablePointer<Float>, mask: Int, start: Int, into x: UnsafeMutablePointer<Float>) {
        let size = n, lead = min(size, max(0, -start))
        if lead > 0 { x.update(repeating: 0, count: lead) }
        var t = lead
        while t < size {
            let slot = (start + t) & mask, run = min(size - t, mask + 1 - slot)
            vcopy(ring + slot, into: x + t, run)
            t += run
        }
    }

    /// Frame j's raw log gains, by band.
    @inline(__always)
    private func rawGain(_ j: Int) {
        let f = outputFrames, fi = Self.inputFrames, b = bands, fMask = frameMask, iMask = inputFrameMask
        let outPowers = outputPowers, inPowers = inputPowers, out = logGains + (j & fMask) * b
        let lo = max(0, j - f / 2), hi = j - f / 2 + f
        // the input hop where the input's average (over [i − Fi/2, i − Fi/2 + Fi), centred on
        // i + cIn) is centred on the output's (centred on frame j + cOut), and the input frames
        // either side of it
        let cOut = Double(f - 1) / 2 - Double(f / 2), cIn = Double(fi - 1) / 2 - Double(fi / 2)
        let x = max(0, (Double(j) + cOut) * tempo - cIn)
        let i0 = Int(Libm.roundedDown(x)), fraction = x - Double(i0)
        let inputDone = inputAnalysed
        precondition(i0 + 1 - fi / 2 + fi <= inputDone, "the input a band gain reads has not been recorded")
        let floor = Self.powerFloor, lowest = Self.lowestGain, highest = Self.highestGain
        out[0] = 0
        for band in 1..<b {
            var outputPower = 0.0
            for i in lo..<hi { outputPower += outPowers[(i & fMask) * b + band] }
            outputPower /= Double(hi - lo)
            // (the mean of input frames [i − Fi/2, i − Fi/2 + Fi) at the hops either side)
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
        // G(k) − 1 = Σ_b (g_b − 1)·weight_b(k) (the weights sum to 1; band 0's g is 1)
        let nb = bins, ch = channels, size = n, h = hop, perFrame = 2 * ch * nb, gain = binGain
        let first = bandFirst, counts = bandCount, offsets = bandOffset, weights = bandWeights
        gain.update(repeating: 0, count: nb)
        for band in 1..<b where g[band] != 1 {
            let step = Float(g[band] - 1), from = first[band], bandWeight = weights + offsets[band]
            for k in 0..<counts[band] { gain[from + k] += step * bandWeight[k] }
        }
        let stored = spectra + (j & fMask) * perFrame, spectrumRe = re, spectrumIm = im, x = frame, w = scaledWindow
        let corr = correction, mask = heldMask, stride = heldMask + 1, start = j * h - size / 2
        let lead = min(size, max(0, -start))
        for c in 0..<ch {
            vmul(stored + c * nb, gain, spectrumRe, nb)
            vmul(stored + (ch + c) * nb, gain, spectrumIm, nb)
            fft { $0.inverse(re: spectrumRe, im: spectrumIm, output: x) }
            let base = corr + c * stride
            var t = lead
            while t < size {
                let slot = (start + t) & mask, run = min(size - t, stride - slot)
                vaddScaledProduct(x + t, w + t, 1, into: base + slot, run)
                t += run
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
            // the correction kept within the output's own peak from the start of the block before
            // this frame's up to this frame (the same whatever the calls: a call that starts
            // within a block reads that block up to its first frame): a short frame's correction
            // is spread over the frame, and where a hit follows silence it would otherwise reach
            // into the silence before it
            if t / block != envelopeBlock {
                envelopeBlock = t / block
                envelope = 0
                for i in max(0, (envelopeBlock - 1) * block)..<max(0, t) {
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
