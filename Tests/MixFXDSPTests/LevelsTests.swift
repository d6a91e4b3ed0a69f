import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct LevelsTests {
    /// The eight-lane meter levels equal the plain loops: peak over both channels, each
    /// channel's sum of squares, for odd lengths; one channel leaves `sumB` alone.
    @Test(arguments: [0, 1, 7, 8, 9, 1001])
    func levelsMatchThePlainLoops(count: Int) {
        let a = Signals.noise(frames: max(count, 1), amplitude: 0.7, seed: 70), b = Signals.noise(frames: max(count, 1), amplitude: 0.9, seed: 71)
        var peak: Float = 0.01, sumA: Float = 0, sumB: Float = 0
        levels(a, b, count: count, peak: &peak, sumA: &sumA, sumB: &sumB)
        let n = count
        let expectedPeak = max(0.01, (a.prefix(n) + b.prefix(n)).map(abs).max() ?? 0)
        #expect(peak == expectedPeak)
        #expect(abs(sumA - a.prefix(n).reduce(0) { $0 + $1 * $1 }) <= 1e-4 * max(1, sumA))
        #expect(abs(sumB - b.prefix(n).reduce(0) { $0 + $1 * $1 }) <= 1e-4 * max(1, sumB))
        var monoPeak: Float = 0, monoA: Float = 0, untouched: Float = 42
        levels(a, nil, count: count, peak: &monoPeak, sumA: &monoA, sumB: &untouched)
        #expect(untouched == 42 && monoA == sumA)
        #expect(monoPeak == (a.prefix(n).map(abs).max() ?? 0))
    }
}
