import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct FastMathTests {
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
