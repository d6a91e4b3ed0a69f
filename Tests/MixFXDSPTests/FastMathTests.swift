import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct FastMathTests {
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

    @Test func atan2AndSinCosAreAccurate() {
        var worstAtan: Float = 0, worstSin: Float = 0
        for i in 0..<20_000 {
            let a = -Float.pi + 2 * Float.pi * Float(i) / 20_000
            let r = 0.001 + Float(i % 97)
            let y = r * sin(a), x = r * cos(a)
            // each value in a different lane position across the run
            var ys = SIMD8<Float>(repeating: 1), xs = SIMD8<Float>(repeating: -2), angles = SIMD8<Float>(repeating: 0.3)
            ys[i % 8] = y; xs[i % 8] = x; angles[i % 8] = a
            var d = abs(fastAtan2(ys, xs)[i % 8] - atan2(y, x))
            if d > Float.pi { d = 2 * Float.pi - d }
            worstAtan = max(worstAtan, d)
            let (s, c) = fastSinCos(angles)
            worstSin = max(worstSin, abs(s[i % 8] - sin(a)), abs(c[i % 8] - cos(a)))
        }
        #expect(worstAtan < 1e-5, "atan2 error \(worstAtan)")
        #expect(worstSin < 2e-6, "sincos error \(worstSin)")
        // the axes and zero
        let edge = fastAtan2(SIMD8(0, 1, 0, -1, 0, 1, -1, 1e-30), SIMD8(0, 0, 1, 0, -1, 1, -1, -1))
        let want: [Float] = [0, .pi / 2, 0, -.pi / 2, .pi, .pi / 4, -3 * .pi / 4, .pi]
        for i in 0..<8 { #expect(abs(edge[i] - want[i]) < 1e-5, "lane \(i): \(edge[i])") }
    }

    @Test func principalArgumentWrapsIntoMinusPiPi() {
        for i in 0..<10_000 {
            let x = Float(i - 5000) * 0.37
            let p = princarg(SIMD8<Float>(repeating: x))[0]
            #expect(abs(p) <= Float.pi * (1 + 1e-6), "\(x) → \(p)")
            let turns = (x - p) / (2 * Float.pi)
            #expect(abs(turns - turns.rounded()) < 1e-3, "\(x) → \(p) is not x − 2πk")
        }
    }
}
