import Foundation
import Testing
@testable import MixFXDSP

@Suite struct FastMathTests {
    @Test func atan2AndSinCosAreAccurate() {
        var worstAtan: Float = 0, worstSin: Float = 0
        for i in 0..<20_000 {
            let a = -Float.pi + 2 * Float.pi * Float(i) / 20_000
            let r = 0.001 + Float(i % 97)
            let y = r * sin(a), x = r * cos(a)
            var d = abs(fastAtan2(y, x) - atan2(y, x))
            if d > Float.pi { d = 2 * Float.pi - d }
            worstAtan = max(worstAtan, d)
            let (s, c) = fastSinCos(a)
            worstSin = max(worstSin, abs(s - sin(a)), abs(c - cos(a)))
        }
        #expect(worstAtan < 1e-5, "atan2 error \(worstAtan)")
        #expect(worstSin < 2e-6, "sincos error \(worstSin)")
    }
}
