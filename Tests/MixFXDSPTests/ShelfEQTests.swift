import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct ShelfEQTests {
    /// The magnitude response measured from the processor's impulse response matches the RBJ
    /// formula within 0.01 dB from 20 Hz to 20 kHz.
    @Test(arguments: [
        (55.0, 4.0, 1.0, 6.0, 5800.0, 44_100.0),
        (100.0, -12.0, 0.5, 12.0, 3000.0, 48_000.0),
        (55.0, 24.0, 1.0, -24.0, 8000.0, 48_000.0),
        (250.0, -6.0, 0.3, 3.0, 10_000.0, 96_000.0),
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
