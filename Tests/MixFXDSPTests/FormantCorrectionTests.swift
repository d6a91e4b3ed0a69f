import Foundation
import Testing
@testable import MixFXDSP

/// The spectral envelope `FormantCorrection` draws through a frame's peaks, against the smooth
/// envelope the peaks were sampled from.
@Suite struct FormantCorrectionTests {
    /// Harmonics every 20 bins under a formant whose top (bin 310) lies between two of them:
    /// the envelope between the harmonics stays within 0.03 (ln magnitude, 0.26 dB) of the
    /// formant's, where a straight join between the harmonics is 0.08 under its top; at the
    /// harmonics it is their own value; the gains for a shift are the envelope's ratio.
    @Test func theEnvelopeFollowsAFormantBetweenHarmonics() {
        let bins = 2_049
        func formant(_ k: Double) -> Double { 3 * exp(-pow((k - 310) / 60, 2)) }   // ln |E|
        var power = [Float](repeating: 0, count: bins)
        for k in stride(from: 20, to: bins - 1, by: 20) {
            power[k] = Float(exp(2 * formant(Double(k))))
            // (a harmonic's window spreads it: lower bins beside it, 40 dB under)
            power[k - 1] = power[k] * 1e-4
            power[k + 1] = power[k] * 1e-4
        }
        let fc = FormantCorrection(bins: bins)
        let ratio = 0.75
        power.withUnsafeBufferPointer { fc.update(power: $0.baseAddress!, ratio: ratio, keptBins: bins) }
        var worst = 0.0, straight = 0.0
        for k in 200...420 {
            worst = max(worst, abs(Double(fc.logEnvelope[k]) - formant(Double(k))))
            let p0 = Double(k / 20 * 20), p1 = p0 + 20
            let line = formant(p0) + (formant(p1) - formant(p0)) * (Double(k) - p0) / 20
            straight = max(straight, abs(line - formant(Double(k))))
        }
        #expect(worst < 0.03 && straight > 0.08, "the envelope is \(worst) off the formant (a straight join: \(straight))")
        for k in stride(from: 40, to: 2_000, by: 20) {
            #expect(abs(Double(fc.logEnvelope[k]) - formant(Double(k))) < 1e-5, "at the harmonic at bin \(k)")
        }
        // gain(k) = c·E(r·k)/E(k), read linearly between bins, c keeping the frame's power
        func ratioGain(_ k: Int) -> Double {
            let pos = min(ratio * Double(k), Double(bins - 1)), i = Int(pos), f = pos - Double(i)
            let target = i + 1 < bins ? Double(fc.logEnvelope[i]) + f * Double(fc.logEnvelope[i + 1] - fc.logEnvelope[i]) : Double(fc.logEnvelope[i])
            return exp(min(max(target - Double(fc.logEnvelope[k]), -4.14), 4.14))
        }
        let c = (power.reduce(0.0) { $0 + Double($1) } / (0..<bins).reduce(0.0) { $0 + Double(power[$1]) * pow(ratioGain($1), 2) }).squareRoot()
        #expect(abs(c - 1) > 0.05, "c \(c): the envelope alone keeps this frame's power (the check below could not fail)")
        for k in [300, 310, 333, 400, 413] {
            #expect(abs(Double(fc.gains[k]) - c * ratioGain(k)) < 1e-4 * Double(fc.gains[k]), "gain at bin \(k)")
        }
        let kept = (0..<bins).reduce(0.0) { $0 + Double(power[$1]) * Double(fc.gains[$1] * fc.gains[$1]) }
        #expect(abs(kept / power.reduce(0.0) { $0 + Double($1) } - 1) < 1e-4, "the frame's power moved by \(kept)")
    }

    /// A lone high peak among low ones: the joins beside it rise at most `overshoot` above
    /// their higher end and fall at most `undershoot` below their lower one.
    @Test func theJoinsStayNearTheirEnds() {
        let bins = 513
        var power = [Float](repeating: 0, count: bins)
        for (k, db) in [(40, -40.0), (60, -40.0), (80, 0.0), (100, -60.0), (120, -60.0), (140, -20.0)] { power[k] = Float(pow(10, db / 10)) }
        let fc = FormantCorrection(bins: bins)
        power.withUnsafeBufferPointer { fc.update(power: $0.baseAddress!, ratio: 1.2, keptBins: bins) }
        let peaks = [40, 60, 80, 100, 120, 140]
        var rose = false
        for (p0, p1) in zip(peaks, peaks.dropFirst()) {
            let a = 0.5 * log(Double(power[p0])), b = 0.5 * log(Double(power[p1]))
            for k in p0...p1 {
                let e = Double(fc.logEnvelope[k])
                #expect(e <= max(a, b) + Double(FormantCorrection.overshoot) + 1e-5 && e >= min(a, b) - Double(FormantCorrection.undershoot) - 1e-5,
                        "bin \(k): \(e) between \(a) and \(b)")
                rose = rose || e > max(a, b) + 0.1 || e < min(a, b) - 0.1
            }
        }
        #expect(rose, "no join left the straight line: the cubic is not in use")
    }
}
