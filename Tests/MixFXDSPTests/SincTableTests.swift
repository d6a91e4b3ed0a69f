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
}
