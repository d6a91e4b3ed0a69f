import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// `SincTable`'s interpolation paths agree bit for bit: the shifter's reader takes four stereo
/// positions at once where it can (`interpolate4`) and one at a time at a segment's end, and
/// output must not depend on which.
@Suite struct SincTableTests {
    @Test(arguments: [0, 2, 3, 14])
    func fourPositionsAtOnceGiveTheValuesOfOneAtATime(gridIndex: Int) {
        let table = SincTableCache.interpolator(index: gridIndex)
        var generator = SeededGenerator(seed: UInt64(gridIndex) + 3)
        func random() -> Float { Float(Double(generator.next() % 2_000_001) / 1_000_000 - 1) }
        let count = 4096
        let a = (0..<count).map { _ in random() }, b = (0..<count).map { _ in random() }
        var compared = 0
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                for trial in 0..<2000 {
                    // positions a reader's step apart (up to four samples), and the fractions'
                    // edges: 0, just below 1 (the last phase), halfway between two phases
                    let start = table.taps + Int(generator.next() % UInt64(count - 3 * table.taps))
                    var offsets = SIMD4<Int>(), fractions = SIMD4<Double>()
                    var at = start
                    for e in 0..<4 {
                        offsets[e] = at - start
                        let pick = (trial + e) % 5
                        fractions[e] = pick == 0 ? 0 : pick == 1 ? 1 - 1e-12 : pick == 2 ? 0.5 / Double(table.phases)
                            : Double(generator.next() % 1_000_000) / 1_000_000
                        at += Int(generator.next() % 5)
                    }
                    let (l, r) = table.interpolate4(pa.baseAddress! + start, pb.baseAddress! + start, offsets: offsets,
                                                    fractions: fractions)
                    for e in 0..<4 {
                        let (x, y) = table.interpolate(pa.baseAddress! + start, pb.baseAddress! + start, index: offsets[e],
                                                       fraction: fractions[e])
                        #expect(l[e].bitPattern == x.bitPattern && r[e].bitPattern == y.bitPattern,
                                "position \(e) of trial \(trial): \(l[e]), \(r[e]) against \(x), \(y)")
                        compared += 1
                    }
                }
            }
        }
        #expect(compared == 8000)
    }

    /// Every table holds the formula's values at each tap, bit for bit: the build computes half
    /// the rows and mirrors the rest (h is even), which must give exactly what evaluating each
    /// tap gives. The designs the shifter's cache builds (full band, lowered, anti-aliasing at
    /// every 100-cent step, the interpolators), the resampler's, and a phase count that is not a
    /// power of two (no mirroring).
    @Test func everyTableHoldsTheFormulasValues() {
        var designs: [(scale: Double, quality: ResamplerQuality, phases: Int)] = []
        let shifter = ResamplerQuality.shifter
        designs.append((1, ResamplerQuality(halfWidthZeroCrossings: shifter.halfWidthZeroCrossings,
                                            kaiserBeta: shifter.kaiserBeta, cutoff: 1), 512))
        designs.append((1, shifter, 512))
        for cents in stride(from: 100, through: 2400, by: 100) {
            let r = PitchShifterSettings.ratio(cents: Double(cents))
            designs.append((1 / r, shifter, 512))
            let edge = 0.46 / r
            let taps = (shifter.kaiserBeta / 0.1102 + 8.7 - 8) / (14.36 * (1 - 2 * edge))
            designs.append((1, ResamplerQuality(halfWidthZeroCrossings: max(4, Int((taps / 2).rounded(.up))),
                                                kaiserBeta: shifter.kaiserBeta, cutoff: 1), 512))
        }
        designs.append((1, .mastering, 1024))
        designs.append((44_100.0 / 48_000, .mastering, 1024))
        designs.append((0.37, shifter, 1000))
        for (scale, quality, phases) in designs {
            let table = SincTable(scale: scale, quality: quality, phases: phases)
            let t = table.taps, w = Double(t / 2), sc = min(1, scale) * quality.cutoff
            let i0beta = SincTable.besselI0(quality.kaiserBeta)
            func h(_ p: Int, _ j: Int) -> Float {
                let d = Double(j) - w + 1 - Double(p) / Double(phases)
                let u = d / w
                guard abs(u) < 1 else { return 0 }
                let x = Double.pi * sc * d
                let sinc = abs(x) < 1e-12 ? 1 : sin(x) / x
                return Float(sc * sinc * SincTable.besselI0(quality.kaiserBeta * (1 - u * u).squareRoot()) / i0beta)
            }
            let stored = table.storedValues
            var mismatches = 0
            for p in 0..<phases {
                for j in 0..<t {
                    let v = h(p, j), next = h(p + 1, j)
                    if stored[2 * p * t + j].bitPattern != v.bitPattern { mismatches += 1 }
                    if stored[(2 * p + 1) * t + j].bitPattern != (next - v).bitPattern { mismatches += 1 }
                }
            }
            #expect(mismatches == 0, "scale \(scale), \(t) taps, \(phases) phases: \(mismatches) values differ")
        }
    }
}
