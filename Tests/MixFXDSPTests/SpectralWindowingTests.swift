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
    /// synthesis s = 1 (κ = 1).
    @Test(arguments: [(512, false), (1024, false), (512, true)])
    func narrowedBinsAreTheTransformOfTheFrameTimesAPowerOfTheWindow(hop: Int, synthesis: Bool) {
        let n = 4096, bins = n / 2 + 1
        let tables = SpectralWindowing.shared(fftSize: n, sampleRate: 44_100, hopFrames: n / 8)
        let frame = tables.narrowing(hop: hop), narrowing = synthesis ? frame.synthesis : frame.analysis
        let a = narrowing.powers
        #expect(a == (hop == 512 ? (synthesis ? 1 : 2) : 1))
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
        #expect(tables.narrowing(hop: n / 8).synthesis.powers == 1 && tables.narrowing(hop: n / 5).synthesis.powers == 0)
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
}
