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
    /// The reader's vector floor gives `floorToInt`'s values, as whole doubles and as integers,
    /// across (−2^51, 2^51) (a stretched signal's positions start below 0): whole numbers, the
    /// halves the magic number's rounding ties at, the values just below and above them, and
    /// random positions of both signs.
    @Test func vectorFloorMatchesTheScalarOne() {
        var generator = SeededGenerator(seed: 51)
        var values: [Double] = [0, -0.0, 0.5, 1.5, 2.5, 0x1p51 - 0.5, 0x1p51 - 1, 0x1p50 + 0.25, 511.99999999,
                                -0x1p51 + 0.5, -0x1p51 + 1, -1e-300, 1e-300]
        for k in [1.0, 2, 3, 511, 512, 2128, 4097, 1e6, 123_456_789] {
            for v in [k, k.nextDown, k.nextUp, k + 0.5, (k + 0.5).nextDown, (k + 0.5).nextUp, k - 0.5] {
                values += [v, -v]
            }
        }
        for _ in 0..<4000 {
            let v = Double(generator.next() % (1 << 40)) / Double(1 + generator.next() % 4096)
            values.append(generator.next() % 2 == 0 ? v : -v)
        }
        var checked = 0
        for i in stride(from: 0, to: values.count - 3, by: 1) {
            let x = SIMD4(values[i], values[i + 1], values[i + 2], values[i + 3])
            let (whole, int) = floorWhole(x)
            for e in 0..<4 {
                let want = floorToInt(x[e])
                #expect(int[e] == want && whole[e].bitPattern == Double(want).bitPattern,
                        "⌊\(x[e])⌋: \(whole[e]), \(int[e]) against \(want)")
                checked += 1
            }
        }
        #expect(checked > 16_000)
    }

    /// Eight sums at once are each vector's `sum()`, bit for bit (an order-dependent sum of
    /// values of every size and sign).
    @Test func orderedSumsAreTheLanesSums() {
        var generator = SeededGenerator(seed: 8)
        func random() -> Float {
            let m = Float(Int(generator.next() % 2_000_001) - 1_000_000) / 1_000_000
            return m * Float(sign: .plus, exponent: Int(generator.next() % 40) - 20, significand: 1)
        }
        for _ in 0..<2000 {
            var v = [SIMD8<Float>](repeating: .zero, count: 8)
            for e in 0..<8 { for j in 0..<8 { v[e][j] = random() } }
            let sums = orderedSums((v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]))
            for e in 0..<8 {
                #expect(sums[e].bitPattern == v[e].sum().bitPattern, "vector \(e): \(sums[e]) against \(v[e].sum())")
            }
        }
    }

    /// `laneByte` and `laneBits` give every mask's lanes as bits (lane i: bit i), for all 256
    /// eight-lane and 16 four-lane masks, built from comparisons as the render path builds them.
    @Test func laneBitsNameEveryMask() {
        for m in 0..<256 {
            var x = SIMD8<Float>()
            for i in 0..<8 where m & (1 << i) != 0 { x[i] = 1 }
            #expect(laneByte(x .> SIMD8<Float>(repeating: 0.5)) == m, "mask \(m)")
        }
        for m in 0..<16 {
            var x = SIMD4<Double>()
            for i in 0..<4 where m & (1 << i) != 0 { x[i] = 1 }
            #expect(laneBits(x .== SIMD4<Double>(repeating: 1)) == m, "mask \(m)")
        }
    }
}
