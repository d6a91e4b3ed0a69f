import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// `BandLevelMatch` in the offline tempo path at a slower tempo: a steady tone passes to the bit,
/// the highs of a sound that swells and fades keep its envelope (not spread half a frame either
/// side), noise keeps its level, any blocks and a reset give the same samples.
@Suite struct BandLevelMatchTests {
    /// A sound whose highs swell and fade: a 300 Hz tone throughout, and noise above 2 kHz that
    /// rises over 20 ms, holds 100 ms, falls over 20 ms and rests 260 ms, every 0.4 s; the
    /// starts of the rises.
    static func swells(rate: Int, periods: Int) -> (signal: [Float], starts: [Int]) {
        let period = rate * 2 / 5, ramp = rate / 50, hold = rate / 10
        let noise = Signals.butterworth(Signals.noise(frames: periods * period, amplitude: 0.5, seed: 51), highPass: true,
                                        cornerHz: 2_000, rate: Double(rate), sections: 4)
        let tone = Signals.sine(frequencyHz: 300, sampleRate: Double(rate), frames: periods * period, amplitude: 0.2)
        var x = tone, starts: [Int] = []
        for p in 0..<periods {
            let s = p * period + period / 4
            starts.append(s)
            for i in 0..<(2 * ramp + hold) {
                let e = i < ramp ? Float(i) / Float(ramp) : i < ramp + hold ? 1 : Float(2 * ramp + hold - i) / Float(ramp)
                x[s + i] += e * noise[s + i]
            }
        }
        return (x, starts)
    }

    /// The highs' level (above 2 kHz) over `range` of `y`, dB.
    static func highs(_ y: [Float], _ range: Range<Int>, rate: Int) -> Double {
        let h = Signals.butterworth(Array(y[max(0, range.lowerBound - 4_800)..<min(y.count, range.upperBound + 4_800)]),
                                    highPass: true, cornerHz: 2_000, rate: Double(rate), sections: 4)
        let offset = range.lowerBound - max(0, range.lowerBound - 4_800)
        return Signals.db(Signals.rms(h[offset..<(offset + range.count)]))
    }

    /// At tempos 0.5 and 0.8 the highs before a swell (the 30 ms up to 10 ms before where it
    /// lands) and after it has faded (10 to 40 ms after) stay well under the vocoder's spread of
    /// them: at least 10 dB lower than without the match (16 to 18 dB measured), while the
    /// swell's own level (its hold) moves by less than 1 dB.
    @Test(arguments: [0.5, 0.8])
    func theHighsKeepTheirEnvelope(tempo: Double) {
        let rate = 48_000
        let (x, starts) = Self.swells(rate: rate, periods: 6)
        let ramp = rate / 50, hold = rate / 10, ms = rate / 1000
        func levels(_ on: Bool) -> (before: Double, after: Double, hold: Double) {
            let y = stretch([x], tempo: tempo, rate: Double(rate), block: 1024, levelMatch: on).out[0]
            var before = 0.0, after = 0.0, held = 0.0
            for s in starts.dropFirst() {
                let start = Int(Double(s) / tempo), end = Int(Double(s + 2 * ramp + hold) / tempo)
                before += Self.highs(y, (start - 40 * ms)..<(start - 10 * ms), rate: rate)
                after += Self.highs(y, (end + 10 * ms)..<(end + 40 * ms), rate: rate)
                held += Self.highs(y, Int(Double(s + ramp) / tempo)..<Int(Double(s + ramp + hold) / tempo), rate: rate)
            }
            let count = Double(starts.count - 1)
            return (before / count, after / count, held / count)
        }
        let matched = levels(true), plain = levels(false)
        print("tempo \(tempo): before \(plain.before) → \(matched.before), after \(plain.after) → \(matched.after), hold \(plain.hold) → \(matched.hold) dB")
        #expect(matched.before < plain.before - 10, "before: \(matched.before) dB, \(plain.before) without")
        #expect(matched.after < plain.after - 10, "after: \(matched.after) dB, \(plain.after) without")
        #expect(abs(matched.hold - plain.hold) < 1, "hold: \(matched.hold) dB, \(plain.hold) without")
    }

    /// A steady tone below the bands and one in them come out the same to the bit past the first
    /// and last 0.2 s.
    @Test(arguments: [0.5, 0.8])
    func aSteadyToneIsUntouched(tempo: Double) {
        let a = Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 96_000, amplitude: 0.3)
        let b = Signals.sine(frequencyHz: 3_000, sampleRate: 48_000, frames: 96_000, amplitude: 0.2)
        let x = zip(a, b).map { $0 + $1 }
        let matched = stretch([x, x], tempo: tempo, block: 1024).out
        let plain = stretch([x, x], tempo: tempo, block: 1024, levelMatch: false).out
        let body = 9_600..<(matched[0].count - 9_600)
        let differing = body.filter { matched[0][$0] != plain[0][$0] || matched[1][$0] != plain[1][$0] }.count
        #expect(differing == 0, "tempo \(tempo): \(differing) samples differ")
    }

    /// White noise keeps its level (the middle two thirds within 0.2 dB): the match moves the
    /// highs' envelope, not a steady sound's level.
    @Test(arguments: [0.5, 0.8])
    func whiteNoiseKeepsItsLevel(tempo: Double) {
        let x = [Signals.noise(frames: 96_000, amplitude: 0.3, seed: 61), Signals.noise(frames: 96_000, amplitude: 0.3, seed: 62)]
        let y = stretch(x, tempo: tempo, block: 1024).out
        let m = y[0].count
        let level = Signals.db(Signals.rms(y[0][(m / 6)..<(5 * m / 6)] + y[1][(m / 6)..<(5 * m / 6)])
                               / Signals.rms(x[0][...] + x[1][...]))
        #expect(abs(level) < 0.2, "tempo \(tempo): \(level) dB")
    }

    /// The same samples in any blocks, stereo and mono (hits from silence too, where the
    /// correction is held to the output's peak), and again after a reset.
    @Test func theSameForAnyBlocksAndAfterAReset() {
        let (s, _) = Self.swells(rate: 48_000, periods: 3)
        let n = Signals.noise(frames: s.count, amplitude: 0.05, seed: 71)
        let x = [s, zip(s, n).map { $0 + $1 }]
        let reference = stretch(x, tempo: 0.6, block: 4096).out
        for blocks in [[1], [333, 17, 1024], [4096, 5]] {
            let same = stretch(x, tempo: 0.6, block: 4096, blocks: blocks).out == reference
            #expect(same, "blocks \(blocks)")
        }
        let moved = reference != stretch(x, tempo: 0.6, block: 4096, levelMatch: false).out
        #expect(moved, "the match moved something")
        let mono = stretch([x[1]], tempo: 0.6, block: 1000).out
        let sameMono = stretch([x[1]], tempo: 0.6, block: 1000, blocks: [7, 1000, 64]).out == mono
        #expect(sameMono, "mono")
        let hits = [Array(Signals.hits(rate: 48_000).signal.prefix(72_000))]
        let reference2 = stretch(hits, tempo: 0.7, block: 1024).out
        for blocks in [[1], [45, 1024, 3]] {
            let sameHits = stretch(hits, tempo: 0.7, block: 1024, blocks: blocks).out == reference2
            #expect(sameHits, "hits, blocks \(blocks)")
        }
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: 512, channelCount: 2),
                   settings: PitchShifterSettings(tempo: 0.6))
        #expect(ps.matchesLevel)
        let first = stretch(x, tempo: 0.6, block: 512, shifter: ps).out
        let again = stretch(x, tempo: 0.6, block: 512, shifter: ps).out == first
        #expect(again, "after a reset")
    }
}
