import Foundation
import Testing
@testable import MixFXDSP

/// The K-weighting at every rate a source may have (`LoudnessMeter.sampleRateRange`), against
/// the analog prototype it approximates (`KWeighting.prototypeDB`), as a response and as what
/// the meter reads for a sine. Issue #30: a tone read +1917 LUFS at 100 Hz and −∞ at 1 kHz.
@Suite struct KWeightingTests {
    /// The bound `KWeighting`'s notes state for a rate, dB from the prototype over the band.
    static func bound(_ fs: Double) -> Double {
        switch fs {
        case 32_000...: 0.041
        case 8000...: 0.05
        case 6000...: 0.11
        default: 0.39
        }
    }

    static let rates: [Double] = [1000, 1500, 2000, 3000, 3364, 4000, 5000, 6000, 8000, 11_025, 16_000, 22_050, 31_999,
                                  32_000, 44_100, 48_000, 88_200, 96_000, 192_000, 384_000, 768_000]

    /// The response from 10 Hz to Nyquist follows the prototype within each rate's bound, and
    /// 997 Hz from 8 kHz up within 0.041 dB.
    @Test(arguments: rates)
    func responseFollowsThePrototype(fs: Double) {
        let k = KWeighting(sampleRate: fs)
        var worst = 0.0, worstHz = 0.0
        for i in 0...2000 {
            let hz = 10 + (fs / 2 * 0.999 - 10) * Double(i) / 2000
            let e = abs(k.responseDB(hz: hz, sampleRate: fs) - KWeighting.prototypeDB(hz: hz))
            if e > worst { worst = e; worstHz = hz }
        }
        #expect(worst <= KWeightingTests.bound(fs), "\(fs) Hz: \(worst) dB off the prototype at \(worstHz) Hz")
        if fs >= 8000 {
            let e = k.responseDB(hz: 997, sampleRate: fs) - KWeighting.prototypeDB(hz: 997)
            #expect(abs(e) <= 0.041, "\(fs) Hz: \(e) dB off at 997 Hz")
        }
    }

    /// At 48 kHz the filters are BS.1770-4's table (Table 1 and 2), so renders normalised at the
    /// common rates keep their loudness.
    @Test func at48kHzTheStandardsTable() {
        let table = [1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585,
                     1, -2, 1, -1.99004745483398, 0.99007225036621]
        let ours = KWeighting(sampleRate: 48_000).coefficients
        for (x, y) in zip(ours, table) { #expect(abs(x - y) < 1e-8, "\(ours) against \(table)") }
    }

    /// What the meter reads for a sine of amplitude A in one channel: −0.691 + 10·log10(A²/2)
    /// plus the prototype's gain at its frequency, within the rate's bound (the first 400 ms
    /// hold the filters' start; 10 s make it negligible).
    @Test(arguments: rates)
    func aSineReadsThePrototypesLoudness(fs: Double) {
        var frequencies = [fs / 10, 0.45 * fs]
        if fs >= 8000 { frequencies.append(997) }
        for hz in frequencies {
            let amplitude = 0.25
            var meter = LoudnessMeter(sampleRate: fs, channelCount: 1)
            let frames = Int(fs * 10)
            var block = [Float](repeating: 0, count: 4096)
            var done = 0
            while done < frames {
                let n = min(block.count, frames - done)
                for i in 0..<n { block[i] = Float(amplitude * sin(2 * Double.pi * hz * Double(done + i) / fs)) }
                block.withUnsafeBufferPointer { p in meter.measure({ _ in p.baseAddress! }, frameCount: n) }
                done += n
            }
            let expected = -0.691 + 10 * log10(amplitude * amplitude / 2) + KWeighting.prototypeDB(hz: hz)
            #expect(abs(meter.integratedLUFS - expected) <= KWeightingTests.bound(fs) + 0.005,
                    "\(hz) Hz at \(fs) Hz: \(meter.integratedLUFS) LUFS, the prototype gives \(expected)")
        }
    }
}
