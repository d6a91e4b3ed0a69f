import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct ShelfEQTests {
    /// The cookbook high-pass (the transient splice's crossover): Butterworth, so −3.01 dB at its
    /// corner, −40 dB a decade below (12 dB per octave) and flat well above.
    @Test func highPassIsButterworth() {
        let rate = 48_000.0
        let h = BiquadCoefficients.highPass(frequencyHz: 1500, q: 0.5.squareRoot(), sampleRate: rate)
        #expect(abs(h.magnitudeDB(atHz: 1500, sampleRate: rate) + 3.0103) < 0.01)
        #expect(abs(h.magnitudeDB(atHz: 150, sampleRate: rate) + 40) < 0.1)
        #expect(abs(h.magnitudeDB(atHz: 12_000, sampleRate: rate)) < 0.05)
    }

    /// The filters step two samples at a time, and a block that ends inside a pair leaves its
    /// first sample pending: blocks of any length (one sample each, odd lengths) give the same
    /// samples as one long block, in mono and stereo.
    @Test(arguments: [1, 2])
    func outputDoesNotDependOnBlockLengths(channels: Int) {
        let n = 20_000
        let settings = ShelfEQSettings(bass: .init(frequencyHz: 55, gainDB: 6), treble: .init(frequencyHz: 5800, gainDB: -4))
        func run(_ blocks: [Int]) -> [[Float]] {
            var eq = ShelfEQ()
            eq.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: n, channelCount: channels))
            eq.update(settings)
            var left = Signals.noise(frames: n, seed: 50), right = Signals.noise(frames: n, seed: 51)
            var at = 0, k = 0
            while at < n {
                let m = min(blocks[k % blocks.count], n - at)
                left.withUnsafeMutableBufferPointer { l in
                    right.withUnsafeMutableBufferPointer { r in
                        eq.process(left: l.baseAddress! + at, right: channels > 1 ? r.baseAddress! + at : nil, frameCount: m)
                    }
                }
                at += m; k += 1
            }
            return channels > 1 ? [left, right] : [left]
        }
        let whole = run([n])
        #expect(run([1]) == whole)
        #expect(run([3, 1, 7, 64, 333]) == whole)
        #expect(run([2, 5]) == whole)
        #expect(whole[0] != Signals.noise(frames: n, seed: 50))   // it did filter
    }

    /// The magnitude response measured from the processor's impulse response matches the RBJ
    /// formula within 0.01 dB from 20 Hz to 20 kHz.
    @Test(arguments: [
        (55.0, 4.0, 1.0, 6.0, 5800.0, 44_100.0),
        (100.0, -12.0, 0.5, 12.0, 3000.0, 48_000.0),
        (55.0, 24.0, 1.0, -24.0, 8000.0, 48_000.0),
        (250.0, -6.0, 0.3, 3.0, 10_000.0, 96_000.0),
        // the slope's lower edge (`ShelfBandSettings.slopeRange`)
        (100.0, 12.0, 0.0001, 24.0, 5800.0, 48_000.0),
        (20.0, -96.0, 0.0001, -12.0, 3000.0, 8000.0),
    ])
    func measuredResponseMatchesFormula(bassHz: Double, bassDB: Double, slope: Double, trebleDB: Double,
                                        trebleHz: Double, rate: Double) {
        var eq = ShelfEQ()
        eq.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: 1 << 18, channelCount: 1))
        let settings = ShelfEQSettings(bass: .init(frequencyHz: bassHz, gainDB: bassDB, slope: slope),
                                       treble: .init(frequencyHz: trebleHz, gainDB: trebleDB, slope: slope))
        eq.update(settings)
        let n = 1 << 18
        var h = [Float](repeating: 0, count: n)
        h[0] = 1
        h.withUnsafeMutableBufferPointer { eq.process(left: $0.baseAddress!, right: nil, frameCount: n) }
        let low = BiquadCoefficients.shelf(.low, frequencyHz: bassHz, gainDB: bassDB, slope: slope, sampleRate: rate)
        let high = BiquadCoefficients.shelf(.high, frequencyHz: trebleHz, gainDB: trebleDB, slope: slope, sampleRate: rate)
        var worst = 0.0
        var f = 20.0
        while f <= 20_000 {
            var re = 0.0, im = 0.0
            let w = 2 * Double.pi * f / rate
            // Σ h[n]·e^{−iωn} by a rotating phasor (double precision)
            var cr = 1.0, ci = 0.0
            let dr = cos(w), di = -sin(w)
            for v in h {
                re += Double(v) * cr; im += Double(v) * ci
                let t = cr * dr - ci * di; ci = cr * di + ci * dr; cr = t
            }
            let measured = 10 * log10(re * re + im * im)
            let expected = low.magnitudeDB(atHz: f, sampleRate: rate) + high.magnitudeDB(atHz: f, sampleRate: rate)
            worst = max(worst, abs(measured - expected))
            f *= 1.25
        }
        #expect(worst < 0.01, "worst deviation \(worst) dB")
    }

    /// Across the edges of every range the shelves take (corner 20 Hz to just below Nyquist,
    /// −96 to 24 dB, the slope's range, 8 to 384 kHz) the coefficients are finite and the poles
    /// stay inside the unit circle by at least 1e-8 (the slope's lower edge is set by this: at
    /// S = 1e-6 the nearest pole is 1.3e-9 from it, and below about 1e-18 it reaches it).
    @Test func polesStayInsideTheUnitCircleAtEveryEdge() {
        var nearest = 1.0
        for rate in [8000.0, 44_100, 384_000] {
            for f in [20.0, 1000, 24_000] {
                for gain in [-96.0, -0.001, 0.001, 24] {
                    for slope in [ShelfBandSettings.slopeRange.lowerBound, 0.01, ShelfBandSettings.slopeRange.upperBound] {
                        for kind in [ShelfKind.low, .high] {
                            let c = BiquadCoefficients.shelf(kind, frequencyHz: min(f, rate * 0.499), gainDB: gain, slope: slope, sampleRate: rate)
                            let finite = [c.b0, c.b1, c.b2, c.a1, c.a2].allSatisfy(\.isFinite)
                            #expect(finite)
                            // the roots of z² + a1·z + a2
                            let disc = c.a1 * c.a1 - 4 * c.a2
                            let radius = disc < 0 ? c.a2.squareRoot()
                                : max(abs(-c.a1 + disc.squareRoot()), abs(-c.a1 - disc.squareRoot())) / 2
                            nearest = min(nearest, 1 - radius)
                        }
                    }
                }
            }
        }
        #expect(nearest >= 1e-8, "the nearest pole is \(nearest) inside the unit circle")
    }

    @Test func zeroDBIsBitExact() {
        var eq = ShelfEQ()
        eq.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: 4096, channelCount: 2))
        eq.update(ShelfEQSettings(bass: .init(frequencyHz: 80, gainDB: 0), treble: .init(frequencyHz: 4000, gainDB: 0)))
        let x = Signals.noise(frames: 4096)
        var l = x, r = Signals.noise(frames: 4096, seed: 7)
        let r0 = r
        l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in eq.process(left: lp.baseAddress!, right: rp.baseAddress!, frameCount: 4096) }
        }
        #expect(l == x && r == r0)
    }

    @Test func bypassedBandIsNeutral() {
        let band = ShelfBandSettings(frequencyHz: 55, gainDB: 12, bypass: true)
        #expect(band.isNeutral)
        #expect(ShelfEQSettings(bass: band).isNeutral)
    }

    @Test func panLawIsConstantPowerForMonoAndBalanceForStereo() {
        for p in stride(from: -1.0, through: 1.0, by: 0.25) {
            let g = PanLaw.monoGains(pan: p)
            #expect(abs(g.left * g.left + g.right * g.right - 1) < 1e-12)
        }
        let c = PanLaw.monoGains(pan: 0)
        #expect(abs(20 * log10(c.left) + 3.0103) < 1e-3)
        #expect(PanLaw.monoGains(pan: -1).right < 1e-15)
        #expect(PanLaw.balanceGains(pan: 0) == (1, 1))
        #expect(PanLaw.balanceGains(pan: -0.25) == (1, 0.75))
        #expect(PanLaw.balanceGains(pan: 0.5) == (0.5, 1))
    }
}
