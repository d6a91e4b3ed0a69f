import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// The tonality limit (`TonalityLimit`, `PitchShifterSettings.tonalityLimitHz`): below L = limit/√r
/// the shifter's ratio, above it a constant shift Δ = (r − 1)·L, the two joined without a seam.
@Suite struct TonalityLimitTests {
    static let rate = 44_100.0

    /// Tones below the limit move by the ratio, tones above it by Δ (measured to 0.05 Hz), each
    /// at its level (0.1 dB), the other sideband of a shift (f − Δ) 60 dB under it.
    @Test(arguments: [300.0, -300.0, 1200.0, -700.0])
    func tonesBelowMoveByTheRatioAndAboveByTheShift(cents: Double) throws {
        let r = pow(2, cents / 1200), limit = 8000.0
        let (l, delta, _) = try #require(TonalityLimit.crossover(limitHz: limit, ratio: r, sampleRate: Self.rate))
        for f in [1000.0, l - 1200, l + 1200, min(16_000, (Self.rate / 2 - 1500 - max(0, delta)) * 0.95)] {
            let n = 3 * Int(Self.rate)
            let x = Signals.sine(frequencyHz: f, sampleRate: Self.rate, frames: n, amplitude: 0.25)
            let y = shift(x, cents: cents, tonalityLimitHz: limit).out
            let body = y[Int(0.5 * Self.rate)..<(n - Int(0.5 * Self.rate))]
            let expected = f < l ? f * r : f + delta
            let measured = Signals.frequency(body, sampleRate: Self.rate)
            #expect(abs(measured - expected) < 0.05, "\(f) Hz at \(cents) ct: \(measured) Hz, expected \(expected)")
            #expect(abs(Signals.db(Signals.rms(body) / (0.25 / 2.0.squareRoot()))) < 0.1, "\(f) Hz at \(cents) ct: level \(Signals.rms(body))")
            if f > l {
                let wanted = Signals.power(body, hz: expected, sampleRate: Self.rate), mirror = Signals.power(body, hz: f - delta, sampleRate: Self.rate)
                #expect(10 * log10(mirror / wanted) < -60, "\(f) Hz at \(cents) ct: the other sideband \(10 * log10(mirror / wanted)) dB")
            }
        }
    }

    /// White noise keeps its level through the split (the highs' shift moves power, it does not
    /// lose it): within 0.5 dB of the input above the limit, where the shifter alone loses more.
    @Test(arguments: [-400.0, 400.0])
    func noiseAboveTheLimitKeepsItsLevel(cents: Double) {
        let n = 3 * Int(Self.rate)
        let x = Signals.noise(frames: n, amplitude: 0.3, seed: 21)
        let y = shift(x, cents: cents, tonalityLimitHz: 6000).out
        let mid = Int(0.5 * Self.rate)..<(n - Int(0.5 * Self.rate))
        // the band 10–14 kHz, clear of the crossover and the top (both shifted into it too)
        func band(_ s: [Float]) -> Double {
            let hp = Signals.butterworth(s, highPass: true, cornerHz: 10_000, rate: Self.rate, sections: 4)
            return Signals.rms(Signals.butterworth(hp, highPass: false, cornerHz: 14_000, rate: Self.rate, sections: 4)[mid])
        }
        let change = Signals.db(band(y) / band(x))
        #expect(abs(change) < 0.5, "noise 10–14 kHz at \(cents) ct: \(change) dB")
    }

    /// A shift and its inverse: the highs come back as they were (the two maps split the band at
    /// the same place), the residual 35 dB under them over 11–18 kHz (clear of the crossover and of
    /// the top, which the raising shift leaves out), where the shifter alone leaves 10 dB or more.
    @Test func aRoundTripReturnsTheHighs() {
        let n = 3 * Int(Self.rate)
        let (hits, _) = Signals.hits(rate: Int(Self.rate))
        let x = Array(hits.prefix(n))
        let mid = Int(0.3 * Self.rate)..<(n - Int(0.3 * Self.rate))
        func highs(_ s: [Float]) -> [Float] {
            let hp = Signals.butterworth(s, highPass: true, cornerHz: 11_000, rate: Self.rate, sections: 4)
            return Signals.butterworth(hp, highPass: false, cornerHz: 18_000, rate: Self.rate, sections: 4)
        }
        func residual(limit: Double) -> Double {
            let back = shift(shift(x, cents: 300, tonalityLimitHz: limit).out, cents: -300, tonalityLimitHz: limit).out
            let hx = highs(x), hy = highs(back)
            return Signals.db(Signals.rms(zip(hx, hy).map { $0 - $1 }[mid]) / Signals.rms(hx[mid]))
        }
        let limited = residual(limit: 8000), alone = residual(limit: 0)
        #expect(limited < -35, "round trip with the limit, 11–18 kHz: residual \(limited) dB")
        #expect(alone > -10, "round trip without it: residual \(alone) dB")
    }

    /// Hits from silence stay as clean as without the limit: under −70 dB in the 30 ms before
    /// each (the two paths' filters ring for 3 ms before a hit, and the shifts part the rings
    /// that cancel unshifted: −50 dB with a gate on the moved highs alone, which closed in 1 ms
    /// after looking ahead 0.2 ms), in place within 1 ms, and not repeated.
    @Test(arguments: [-1200.0, -500.0, 200.0, 1200.0])
    func hitsStayCleanAndInPlace(cents: Double) {
        let h = Signals.hits(rate: Int(Self.rate))
        let y = shift(h.signal, cents: cents, tonalityLimitHz: 8000).out
        let a = Signals.attacks(y, input: h.signal, onsets: h.onsets, rate: Int(Self.rate))
        #expect(a.preEchoDB < -70, "pre-echo \(a.preEchoDB) dB at \(cents) cents")
        #expect(abs(a.shiftMS) < 1, "onset moved \(a.shiftMS) ms at \(cents) cents")
        #expect(a.doubledDB < 3, "level after the attack \(a.doubledDB) dB above the input's at \(cents) cents")
    }

    /// The same samples for any blocks, stereo.
    @Test func theOutputDoesNotDependOnTheBlocks() {
        let (hits, _) = Signals.hitsOverBed(rate: Int(Self.rate))
        let x = Array(hits.prefix(60_000)), xr = x.map { 0.5 * $0 }
        func render(_ blocks: [Int]) -> [Float] {
            let ps = PitchShifter()
            ps.prepare(ProcessSpec(sampleRate: Self.rate, maximumFrameCount: 4096, channelCount: 2),
                       settings: PitchShifterSettings(pitchCents: 500, tonalityLimitHz: 7000))
            var l = x, r = xr
            var i = 0, b = 0
            l.withUnsafeMutableBufferPointer { lp in
                r.withUnsafeMutableBufferPointer { rp in
                    while i < lp.count {
                        let k = min(blocks[b % blocks.count], lp.count - i)
                        ps.process(left: lp.baseAddress! + i, right: rp.baseAddress! + i, frameCount: k)
                        i += k; b += 1
                    }
                }
            }
            return l + r
        }
        let reference = render([512])
        for blocks in [[1], [37, 4096, 3], [4096]] { #expect(render(blocks) == reference, "blocks \(blocks)") }
    }

    /// Off (0), at tempo 1 with no shift, or with the limit above the band or under its floor: the shifter is the
    /// one without it, to the bit; on, its latency grows by the split's delay (its filters' and a chunk).
    @Test func offOrOutOfTheBandIsTheShifterAlone() {
        let x = Signals.noise(frames: 30_000, amplitude: 0.3, seed: 4)
        #expect(shift(x, cents: 300, tonalityLimitHz: 0).out == shift(x, cents: 300).out)
        #expect(shift(x, cents: 300, tonalityLimitHz: 22_000).out == shift(x, cents: 300).out)
        // under the floor (1415 Hz at 1200 cents: the split would reach 0 Hz), which the engine refuses
        #expect(shift(x, cents: 1200, tonalityLimitHz: 1400).out == shift(x, cents: 1200).out)
        #expect(shift(x, cents: 0, tonalityLimitHz: 8000).out == x)
        let on = PitchShifter(), off = PitchShifter()
        let spec = ProcessSpec(sampleRate: Self.rate, maximumFrameCount: 512, channelCount: 1)
        on.prepare(spec, settings: PitchShifterSettings(pitchCents: 300, tonalityLimitHz: 8000))
        off.prepare(spec, settings: PitchShifterSettings(pitchCents: 300))
        #expect(on.latencyFrames == off.latencyFrames + TonalityLimit.delayFrames(sampleRate: Self.rate))
    }
}
