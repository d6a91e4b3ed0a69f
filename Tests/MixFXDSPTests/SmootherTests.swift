import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// `Smoother`: every ramp in the engine goes through it.
@Suite struct SmootherTests {
    /// A linear ramp moves by exactly `step` per call, never passes its target and lands on it
    /// exactly, in both directions, and stays there.
    @Test(arguments: [(Float(0), Float(1)), (Float(1), Float(0)), (Float(0.25), Float(0.8))])
    func linearLandsExactlyOnTheTarget(from: Float, to: Float) {
        let step: Float = 1 / 960
        var x = from, calls = 0
        var previous = x
        while x != to && calls < 10_000 {
            Smoother.linear(&x, toward: to, step: step)
            #expect(abs(abs(x - previous) - step) < 1e-6 || x == to)
            #expect(to > from ? x <= to : x >= to)
            previous = x
            calls += 1
        }
        #expect(x == to)
        // (the steps add in float: the last may be a rounding's worth)
        let exact = Int((abs(to - from) / step).rounded(.up))
        #expect(calls == exact || calls == exact + 1, "\(calls) steps for \(exact)")
        Smoother.linear(&x, toward: to, step: step)
        #expect(x == to)
    }

    /// A one-pole with α = 1 − e^(−T/τ) covers 1 − 1/e of the distance in τ, and snaps onto the
    /// target once within `snap` (so it gets there, exactly, in finite time).
    @Test func onePoleHasItsTimeConstantAndArrives() {
        let rate = 48_000.0, tau = 0.01
        let alpha = 1 - exp(-1 / (tau * rate))
        var x = 0.0
        for _ in 0..<Int(tau * rate) { Smoother.onePole(&x, toward: 1, coefficient: alpha, snap: 1e-4) }
        #expect(abs(x - (1 - exp(-1))) < 1e-3, "after τ: \(x)")
        var steps = 0
        while x != 1 && steps < 100_000 { Smoother.onePole(&x, toward: 1, coefficient: alpha, snap: 1e-4); steps += 1 }
        #expect(x == 1)
        #expect(Double(steps) / rate < 10 * tau)
    }

    /// On a log scale: a frequency glides by equal ratios (half way in octaves after τ·ln 2) and
    /// arrives exactly.
    @Test func onePoleLogGlidesInRatios() {
        let alpha = 0.01
        var f = 100.0
        let steps = Int((log(2) / -log(1 - alpha)).rounded())
        for _ in 0..<steps { Smoother.onePoleLog(&f, toward: 400, coefficient: alpha, snapRatio: 1e-4) }
        #expect(abs(log2(f / 100) - 1) < 0.02, "half way in octaves: \(f) Hz")
        while f != 400 { Smoother.onePoleLog(&f, toward: 400, coefficient: alpha, snapRatio: 1e-4) }
        #expect(f == 400)
    }

    /// A `LinearRamp` takes exactly the steps it is given, in equal steps, across runs of any
    /// length, and then is the target exactly.
    @Test func linearRampTakesExactlyItsSteps() {
        var g = LinearRamp(0.2)
        g.ramp(to: 0.9, steps: 480)
        var values: [Float] = []
        for run in [100, 1, 250, 129] {
            for _ in 0..<run { values.append(g.next()) }
            g.finish(steps: run)
        }
        #expect(g.stepsLeft == 0 && g.value == 0.9 && g.target == 0.9)
        #expect(values.count == 480)
        let steps = zip(values.dropFirst(), values).map { $0 - $1 }
        #expect(steps.allSatisfy { abs($0 - 0.7 / 480) < 1e-6 })
        g.jump(to: 0.1)
        #expect(g.value == 0.1 && g.stepsLeft == 0)
    }
}
