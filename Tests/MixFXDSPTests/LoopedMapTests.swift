import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// The maps of a looped live session: a tempo map that starts again every L output frames
/// (pass q at s(f − qL) + q·s(L)), and a pitch map whose period is not a whole frame (the
/// input a pass takes under a tempo map).
@Suite struct LoopedMapTests {
    /// A tempo falling from 1.4 to 0.6 over 48 000 frames, then 0.6; looped every 30 001.
    static let base = TempoMap(stepFrames: 16, untilPosition: 60_000) { 1.4 - 0.8 * min(1, $0 / 48_000) }
    static let period = 30_001

    @Test func aLoopedTempoMapIsItsFirstPassAgainAndAgain() {
        let looped = Self.base.looping(everyFrames: Self.period)
        let L = Self.period, P = Self.base.position(atFrame: L)
        #expect(looped.periodPosition == P)
        // within the first pass, the map itself, bit for bit
        for f in stride(from: 0, to: L, by: 997) {
            #expect(looped.position(atFrame: f) == Self.base.position(atFrame: f))
        }
        // pass q: the first pass's position plus q·s(L), and back (within 1e-6 frame)
        for q in 1...3 {
            for f in stride(from: 0, to: L, by: 1_231) {
                let x = looped.position(atFrame: q * L + f)
                #expect(x == Self.base.position(atFrame: f) + Double(q) * P)
                #expect(abs(looped.frame(atPosition: x) - Double(q * L + f)) < 1e-6)
                #expect(looped.tempo(atPosition: x) == Self.base.tempo(atPosition: Self.base.position(atFrame: f)))
            }
        }
        // a block over a seam: each frame as `position(atFrame:)` has it, less the offset
        var block = [Double](repeating: 0, count: 700)
        looped.positions(fromFrame: 2 * L - 300, count: 700, minus: 12.5, into: &block)
        for k in 0..<700 { #expect(block[k] == looped.position(atFrame: 2 * L - 300 + k) - 12.5) }
        // the look-ahead's fastest tempo over a seam: the fastest of the whole map, a bound
        #expect(looped.maximumTempo(fromPosition: P - 10, span: 100) == Self.base.maximumTempo)
        #expect(Self.base.maximumTempo > 1.39)
        // (and past the first pass, the map's own for the same span within it)
        #expect(looped.maximumTempo(fromPosition: 2 * P + 20_000, span: 500) == Self.base.maximumTempo(fromPosition: 20_000, span: 500))
    }

    /// A pitch map looped every 1 234.5 frames reads at f mod 1 234.5; a whole period, as
    /// before, at f mod P in whole frames.
    @Test func aPitchMapLoopsAtAFractionalPeriod() {
        let map = PitchMap(stepFrames: 1, count: 2_000) { Double($0) }   // cents = the frame
        map.periodFrames = 1_234.5
        for f in [0.0, 100.25, 1_234.0, 1_234.5, 1_300.75, 2_469.0, 5_000.5] {
            let within = f - (f / 1_234.5).rounded(.down) * 1_234.5
            #expect(abs(map.cents(atFrame: f) - within) < 1e-9, "frame \(f)")
        }
        map.periodFrames = 1_000
        #expect(map.cents(atFrame: 2_345.5) == 345.5)
        map.periodFrames = 0
        #expect(map.cents(atFrame: 1_500) == 1_500)
    }
}
