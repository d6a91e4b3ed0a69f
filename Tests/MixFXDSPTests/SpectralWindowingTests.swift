import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// The highs' narrower analysis frames (`SpectralWindowing`): the taps against the transform of
/// the frame times the window's power, a tone's level through the blend, the hops.
@Suite struct SpectralWindowingTests {
    /// Above the blend, the narrowed bins are κ_p times the transform of the frame multiplied by
    /// w^(1+p); within it the blend of the two; below it the frame's own; up to N/2 (the taps
    /// reach past it through the mirror). Analysis a = 2 (at overlap 8) and a = 1 (overlap 4),
    /// synthesis s = 2 (overlap 8) and s = 1 (overlap 6) (κ = 1).
    @Test(arguments: [(512, false, 2), (1024, false, 1), (512, true, 2), (682, true, 1)])
    func narrowedBinsAreTheTransformOfTheFrameTimesAPowerOfTheWindow(hop: Int, synthesis: Bool, powers: Int) {
        let n = 4096, bins = n / 2 + 1
        let tables = SpectralWindowing.shared(fftSize: n, sampleRate: 44_100, hopFrames: n / 8)
        let frame = tables.narrowing(hop: hop), narrowing = synthesis ? frame.synthesis : frame.analysis
        let a = narrowing.powers
        #expect(a == powers)
        let from = SpectralWindowing.firstBin(sampleRate: 44_100, fftSize: n)
        var x = [Float](repeating: 0, count: n)
        var seed: UInt64 = 7
        for i in 0..<n {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            x[i] = Float(Int64(bitPattern: seed >> 11) % 2000) / 1000 - 1
        }
        let w = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        let wa = w.map { $0 * Float(pow(Double($0), Double(a))) }
        let fft = RealFFT(size: n)
        var re = [Float](repeating: 0, count: bins), im = re, wideRe = re, wideIm = re, narrowRe = re, narrowIm = re
        fft.forward(x, window: w, re: &re, im: &im)
        fft.forward(x, window: w, re: &wideRe, im: &wideIm)
        fft.forward(x, window: wa, re: &narrowRe, im: &narrowIm)
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                narrowSpectrum(r.baseAddress!, i.baseAddress!, bins: bins, from: from, to: bins, narrowing)
            }
        }
        let kappa = synthesis ? 1 : Float(SpectralWindowing.meanOfWindowPower(1) / SpectralWindowing.meanOfWindowPower(1 + a))
        let scale = wideRe.map(abs).max()!
        var worst: Float = 0
        for k in 0..<bins {
            let beta: Float = k < from ? 0 : (k - from < narrowing.blendBins ? narrowing.narrowed[k - from] : 1)
            let expectRe = (1 - beta) * wideRe[k] + beta * kappa * narrowRe[k]
            let expectIm = (1 - beta) * wideIm[k] + beta * kappa * narrowIm[k]
            worst = max(worst, abs(re[k] - expectRe) / scale, abs(im[k] - expectIm) / scale)
        }
        #expect(worst < 1e-5)
        // and the blend rises from the frame's own to the narrowed bins
        #expect(narrowing.narrowed[0] < 0.02 && narrowing.narrowed[narrowing.blendBins - 1] > 0.98)
        #expect(abs(narrowing.own[3] + narrowing.narrowed[3] - 1) < 1e-6)
    }

    /// A steady tone keeps its level through the shifter below, within and above the blend
    /// (700 Hz ± 86 Hz at 44.1 kHz), raised and lowered: the gain G puts back what the
    /// narrower window's overlap-add changes.
    @Test(arguments: [300.0, -500.0, 700.0])
    func aToneKeepsItsLevelAcrossTheCrossover(cents: Double) {
        let rate = 44_100.0, n = 88_200
        var worst = 0.0
        for hz in [450.0, 600.0, 640.0, 680.0, 700.0, 720.0, 760.0, 800.0, 3000.0] {
            let x = (0..<n).map { Float(0.5 * sin(2 * Double.pi * hz * Double($0) / rate)) }
            let y = shift(x, cents: cents, rate: rate).out
            let middle = (n / 4)..<(3 * n / 4)
            let inRMS = sqrt(middle.map { Double(x[$0] * x[$0]) }.reduce(0, +) / Double(middle.count))
            let outRMS = sqrt(middle.map { Double(y[$0] * y[$0]) }.reduce(0, +) / Double(middle.count))
            worst = max(worst, abs(20 * log10(outRMS / inRMS)))
        }
        #expect(worst < 0.01, "worst level change \(worst) dB at \(cents) cents")
    }

    /// Every synthesis hop the vocoder can choose keeps the most powers its nearest whole overlap
    /// allows (a hop that would lose one is moved to that overlap), and where a power is
    /// allowed the highs' window sums flat against the normalisation's.
    @Test func everyWholeOverlapAllowsItsPowersAndTheyRippleLessThanTheLimit() {
        let n = 4096
        let tables = SpectralWindowing.shared(fftSize: n, sampleRate: 44_100, hopFrames: n / 8)
        for k in 4...8 {
            #expect(tables.narrowing(hop: n / k).analysis.powers == min(2, k - 3), "K = \(k)")
            #expect(tables.allowsAsMany(hop: n / k))
        }
        #expect(tables.narrowing(hop: n / 8).synthesis.powers == 2 && tables.narrowing(hop: n / 6).synthesis.powers == 1
                && tables.narrowing(hop: n / 5).synthesis.powers == 0)
        var used = 0
        for hop in (n / 8)...(n / 4) {
            let frame = tables.narrowing(hop: hop)
            let q = 2 + frame.analysis.powers + frame.synthesis.powers
            guard q > 2 else { continue }
            used += 1
            #expect(q < n / hop && SpectralWindowing.ripples(fftSize: n, hop: hop)[q - 3] < SpectralWindowing.rippleLimit, "hop \(hop)")
        }
        #expect(used > 50)
        // a hop between whole overlaps where the sums ripple allows fewer (+700 cents: 767)
        #expect(tables.narrowing(hop: 767).analysis.powers < 2 && !tables.allowsAsMany(hop: 767))
    }

    /// The formant mode leaves noise's spectrum as the plain shift does on both sides of the
    /// crossover: the envelope is read from the frame's own bins (the narrowed bins count a
    /// noise floor 1–2 dB higher, which put a step in the envelope and a bump or dip of about
    /// 1 dB at 600–1000 Hz into the output).
    @Test(arguments: [300.0, 700.0, -700.0])
    func theFormantModeKeepsNoiseFlatAcrossTheCrossover(cents: Double) {
        let rate = 44_100.0, n = 4 * 44_100, size = 4096, bins = size / 2 + 1
        let fft = RealFFT(size: size)
        let w = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
        func bandLevels(_ y: [Float]) -> [Double] {
            var power = [Double](repeating: 0, count: bins)
            var re = [Float](repeating: 0, count: bins), im = re
            var start = n / 8
            while start + size <= n - n / 8 {
                Array(y[start..<(start + size)]).withUnsafeBufferPointer { fft.forward($0.baseAddress!, window: w, re: &re, im: &im) }
                for k in 0..<bins { power[k] += Double(re[k] * re[k] + im[k] * im[k]) }
                start += size / 2
            }
            return stride(from: 500.0, to: 1_200.0, by: 100).map { lo in
                let a = Int(lo / rate * Double(size)), b = Int((lo + 100) / rate * Double(size))
                return 10 * log10(power[a..<b].reduce(0, +))
            }
        }
        // (the mean over six noises: one noise's envelope wanders by ±0.4 dB from band to band; the
        // envelope read from the narrowed bins spread them by 1.1–1.7 dB)
        var offsets = [Double](repeating: 0, count: 7)
        for seed in 1...6 {
            let x = Signals.noise(frames: n, amplitude: 0.3, seed: UInt64(seed) &* 0x9E3779B97F4A7C15)
            let kept = bandLevels(shift(x, cents: cents, rate: rate, preserveFormants: true).out)
            let plain = bandLevels(shift(x, cents: cents, rate: rate).out)
            for i in 0..<7 { offsets[i] += (kept[i] - plain[i]) / 6 }
        }
        // (the formant mode's own level, c, may move every band alike: the spread is what counts)
        let spread = offsets.max()! - offsets.min()!
        #expect(spread < 0.8, "band levels, formant mode against the plain shift: \(offsets) dB at \(cents) cents")
    }

    /// Between two whole powers a frame takes the mix of both narrowings: the narrowed bins are
    /// the transform of the frame times the mixed window, e.g. at p = 1.5 half of κ₁·w² and half
    /// of κ₂·w³ (analysis), at p = 2.5 the synthesis window ½ + ½·w, at p = 3.5 ½·w + ½·w²; whole
    /// powers read the shared tables as before.
    @Test(arguments: [0.25, 1.5, 2.5, 3.5])
    func aFrameBetweenTwoPowersTakesTheMixOfBoth(powers p: Double) {
        let n = 4096, bins = n / 2 + 1
        let tables = SpectralWindowing.shared(fftSize: n, sampleRate: 44_100, hopFrames: n / 8)
        var scratch = [Float](repeating: 0, count: tables.mixScratchCount)
        let frame = scratch.withUnsafeMutableBufferPointer { tables.narrowing(powers: p, scratch: $0.baseAddress!) }
        let synthesis = p > 2
        let narrowing = synthesis ? frame.synthesis : frame.analysis
        let m = SpectralWindowing.meanOfWindowPower, f = p - p.rounded(.down)
        // the extra factor the narrowed bins multiply the frame by, as a function of w
        let factor: (Double) -> Double = switch Int(p) {
        case 0: { w in (1 - f) + f * m(1) / m(2) * w }
        case 1: { w in (1 - f) * m(1) / m(2) * w + f * m(1) / m(3) * w * w }
        case 2: { w in (1 - f) + f * w }
        default: { w in (1 - f) * w + f * w * w }
        }
        let from = SpectralWindowing.firstBin(sampleRate: 44_100, fftSize: n)
        let x = Signals.noise(frames: n, amplitude: 1, seed: 7)
        let w = (0..<n).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n)) }
        let fft = RealFFT(size: n)
        var re = [Float](repeating: 0, count: bins), im = re, wideRe = re, wideIm = re, narrowRe = re, narrowIm = re
        fft.forward(x, window: w.map { Float($0) }, re: &re, im: &im)
        fft.forward(x, window: w.map { Float($0) }, re: &wideRe, im: &wideIm)
        fft.forward(x, window: w.map { Float($0 * factor($0)) }, re: &narrowRe, im: &narrowIm)
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                narrowSpectrum(r.baseAddress!, i.baseAddress!, bins: bins, from: from, to: bins, narrowing)
            }
        }
        let scale = wideRe.map(abs).max()!
        var worst: Float = 0
        for k in 0..<bins {
            let beta: Float = k < from ? 0 : (k - from < narrowing.blendBins ? narrowing.narrowed[k - from] : 1)
            worst = max(worst, abs(re[k] - ((1 - beta) * wideRe[k] + beta * narrowRe[k])) / scale,
                        abs(im[k] - ((1 - beta) * wideIm[k] + beta * narrowIm[k])) / scale)
        }
        #expect(worst < 1e-5, "p = \(p)")
        // the gain above the blends puts back a steady tone's level: m(2) over the highs' window's mean
        let highsMean = (0..<n).map { i in w[i] * w[i] * (synthesis ? m(1) / m(3) * w[i] * w[i] * factor(w[i]) : factor(w[i])) }
            .reduce(0, +) / Double(n)
        #expect(abs(Double(frame.gains[frame.gainBins]) - m(2) / highsMean) < 1e-5)
        // and within the blends: the analysis blend's weight β_a, then the synthesis blend's β_s
        let analysedMean = synthesis ? m(1) / m(3) * m(4) : highsMean
        for j in 0..<frame.gainBins {
            let betaA = j < frame.analysis.blendBins ? Double(frame.analysis.narrowed[j]) : 1
            let betaS = j < frame.analysis.blendBins ? 0 : Double(frame.synthesis.narrowed[j - frame.analysis.blendBins])
            let expected = m(2) / ((1 - betaS) * ((1 - betaA) * m(2) + betaA * analysedMean) + betaS * highsMean)
            #expect(abs(Double(frame.gains[j]) - expected) < 1e-5, "p = \(p), bin \(j) of the blends")
        }
        #expect(frame.gainBins == (synthesis ? 2 : 1) * narrowing.blendBins)
        // a whole p is the shared tables' narrowing
        let whole = scratch.withUnsafeMutableBufferPointer { tables.narrowing(powers: p.rounded(.down), scratch: $0.baseAddress!) }
        #expect(whole.analysis.taps == tables.narrowing(powers: Int(p)).analysis.taps && whole.gains == tables.narrowing(powers: Int(p)).gains)
    }

    /// A tone above the crossover keeps its level while the pitch or the tempo glides across
    /// hops that allow different powers (a lane, the live glide): the hop and the powers move in
    /// small steps (`PhaseVocoder.hopSlewDivisor`). Made at once, the changes moved a 1 kHz tone
    /// by 0.96 dB peak to peak under a 0 → 1200 cent lane; a 400 Hz tone, below the crossover, by
    /// 0.006 dB either way.
    @Test(arguments: [(1_000.0, "pitch up"), (1_000.0, "pitch down"), (3_000.0, "pitch up"), (680.0, "pitch up"), (1_000.0, "tempo step")])
    func aToneKeepsItsLevelWhileTheHopGlides(hz: Double, lane: String) {
        let rate = 44_100.0, n = 6 * 44_100
        let x = Signals.sine(frequencyHz: hz, sampleRate: rate, frames: n + 44_100, amplitude: 0.25)
        let cents: (Double, Double) = lane == "pitch down" ? (1_200, 0) : lane == "pitch up" ? (0, 1_200) : (0, 0)
        let pitchMap = PitchMap(stepFrames: 32, count: x.count / 32 + 2) { i in
            cents.0 + (cents.1 - cents.0) * min(1, max(0, Double(i * 32 - 44_100) / (4 * rate)))
        }
        // (tempo 1 → 0.5 at once at 2 s: the natural hop doubles in one frame)
        let tempoMap = TempoMap(stepFrames: 32, untilPosition: Double(x.count) + 4_096) { $0 < 2 * rate ? 1 : 0.5 }
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: 1024, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: cents.0), mode: .streaming)
        if lane == "tempo step" { ps.setTempoMap(tempoMap, originFrame: 0) } else { ps.setPitchMap(pitchMap, originFrame: 0) }
        var powers: [Double] = []
        let y = ps.streamed(x, frames: n, blocks: [512]) { _ in powers.append(ps.lastHopAndPowers.powers) }
        // the level in Hann windows of 1024 (a tone's level in each within 1e-4 dB whatever its
        // phase), every 256 frames after the first half second
        let size = 1_024, hann = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
        let hannPower = hann.map { $0 * $0 }.reduce(0, +)
        var levels: [Double] = []
        for start in stride(from: 22_050, to: n - size, by: 256) {
            var e = 0.0
            for i in 0..<size { e += hann[i] * hann[i] * Double(y[start + i]) * Double(y[start + i]) }
            levels.append(10 * log10(2 * e / hannPower / (0.25 * 0.25)))
        }
        let spread = levels.max()! - levels.min()!
        #expect(spread < 0.1, "\(hz) Hz, \(lane): level from \(levels.min()!) to \(levels.max()!) dB")
        // Not by turning the narrowing off: a lane over 4 s keeps it on most of the way (a step
        // turns it off, then the hop takes its target at once), and it is back at the end, at
        // the hop the stretch asks for (1024 at +1200 cents and at tempo 0.5, 512 at 0 cents).
        let tables = SpectralWindowing.shared(fftSize: 4096, sampleRate: rate, hopFrames: 512)
        let end = ps.lastHopAndPowers, endHop = lane == "pitch down" ? 512 : 1024
        #expect(end.hop == endHop && end.powers == Double(tables.powers(hop: endHop)), "\(end)")
        if lane != "tempo step" {
            let during = powers[(powers.count / 6)..<(5 * powers.count / 6)]
            #expect(during.reduce(0, +) / Double(during.count) > 1, "mean powers during the lane \(during.reduce(0, +) / Double(during.count))")
        }
    }
}
