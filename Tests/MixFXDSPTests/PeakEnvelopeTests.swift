import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct PeakEnvelopeTests {
    /// The eight-lane peak envelope equals the sample-by-sample recursion e = max(p, ρ·e) to
    /// float rounding, for mono and stereo, odd lengths, bursts and silence, across calls.
    @Test(arguments: [1, 2])
    func peakEnvelopeMatchesTheRecursion(channels: Int) {
        let n = 1001
        var l = Signals.noise(frames: n, amplitude: 0.5, seed: 60), r = Signals.noise(frames: n, amplitude: 0.5, seed: 61)
        for i in 300..<700 { l[i] *= 0.001; r[i] *= 0.001 }   // a quiet stretch: the release shows
        let rho: Float = 0.999
        var expected = [Float](repeating: 0, count: n), e: Float = 0.01
        for i in 0..<n {
            let p = channels > 1 ? 0.5 * (l[i] * l[i] + r[i] * r[i]) : l[i] * l[i]
            e = max(p, e * rho)
            expected[i] = e
        }
        var got = [Float](repeating: 0, count: n)
        var last: Float = 0.01
        l.withUnsafeBufferPointer { lp in
            r.withUnsafeBufferPointer { rp in
                got.withUnsafeMutableBufferPointer { g in
                    var at = 0
                    for size in [13, 400, 1, 587] {   // blocks of odd lengths, continued across calls
                        last = peakEnvelope(lp.baseAddress! + at, channels > 1 ? rp.baseAddress! + at : nil, count: size,
                                            release: rho, from: last, into: g.baseAddress! + at)
                        at += size
                    }
                }
            }
        }
        let worst = zip(got, expected).map { abs($0 - $1) / max($1, 1e-12) }.max()!
        #expect(worst < 1e-5, "worst relative difference \(worst)")
        #expect(last == got[n - 1])
    }
}
