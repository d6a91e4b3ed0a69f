import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// A streaming shifter (`PitchShifterMode.streaming`) under pitch and tempo changes at random
/// moments, many of them switches (a second state restarted at the new pitch and crossfaded
/// in): it never starves, never leaves the finite range, and at 0 cents and tempo 1 it is the
/// exact input again.
@Suite struct StreamingSwitchTests {
    /// Runs a streaming shifter at `rate` over `x` (in both channels when `stereo`), calling
    /// `change(block)` before each block; returns the left output and the shifter.
    static func run(_ x: [Float], rate: Double, stereo: Bool, blocks: Int, block: Int,
                    change: (Int, PitchShifter) -> Void) -> ([Float], PitchShifter) {
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: stereo ? 2 : 1),
                   settings: PitchShifterSettings(), mode: .streaming)
        var consumed = 0
        var scratch = [Float](repeating: 0, count: block)
        var out: [Float] = []
        var l = [Float](repeating: 0, count: block), r = [Float](repeating: 0, count: block)
        for b in 0..<blocks {
            change(b, ps)
            l.withUnsafeMutableBufferPointer { lp in
                r.withUnsafeMutableBufferPointer { rp in
                    ps.process(live: lp.baseAddress!, stereo ? rp.baseAddress! : nil, frameCount: block, maximumPull: block) { k in
                        for i in 0..<k { scratch[i] = consumed + i < x.count ? x[consumed + i] : 0 }
                        consumed += k
                        return scratch.withUnsafeBufferPointer { p in (p.baseAddress!, p.baseAddress!) }
                    }
                }
            }
            if stereo { #expect(l == r, "block \(b): a centred source stays centred") }
            out += l
        }
        return (out, ps)
    }

    /// Random changes every 2 to 40 blocks (of 256 or 512 frames; stereo at 48 and 96 kHz, where
    /// N is 8192 (which overran the stretched buffer before `nextFrameFits`), mono at 44.1 kHz)
    /// over 60 s: pitches from −2400
    /// to +2400 cents, a fifth of the time a tempo from 0.25 to 4 as well (which starved the
    /// reader for a few ms before the look-ahead bounded the glide's dip in r/R), ten or more
    /// of them switches; then 0 cents at
    /// tempo 1 for 5 s, whose last second is the input exactly (at its input time): the tempo's
    /// glide back to 1 snaps within about 1.5 s, then each partial's phase turns back to the
    /// input's (`PhaseLocking.alignCents`: up to 1.7 s below 100 Hz) before the fade to the input.
    @Test(arguments: [(UInt64(1), 512, 48_000.0, true), (UInt64(2), 256, 48_000.0, true), (UInt64(3), 512, 48_000.0, true),
                      (UInt64(4), 512, 96_000.0, true), (UInt64(5), 512, 44_100.0, false)])
    func randomChangesNeverStarveAndEndExact(seed: UInt64, block: Int, rate: Double, stereo: Bool) {
        var rng = SeededGenerator(seed: seed)
        let x = Signals.noise(frames: Int(250 * rate), amplitude: 0.3, seed: seed)   // (60 s at up to tempo 4)
        let blocks = Int(65 * rate) / block
        let settle = Int(60 * rate) / block
        var next = 0
        let (y, ps) = Self.run(x, rate: rate, stereo: stereo, blocks: blocks, block: block) { b, ps in
            if b == settle {
                ps.setPitchCents(0)
                ps.setTempo(1)
            } else if b < settle && b >= next {
                let cents = Double(Int.random(in: -2400...2400, using: &rng))
                ps.setPitchCents(cents)
                if Int.random(in: 0..<5, using: &rng) == 0 { ps.setTempo(Double.random(in: 0.25...4, using: &rng)) }
                next = b + Int.random(in: 2...40, using: &rng)
            }
        }
        #expect(ps.starvedFrames == 0)
        #expect(y.allSatisfy { $0.isFinite && abs($0) < 4 }, "largest \(y.map { abs($0) }.max()!)")
        #expect(ps.switchCount >= 10, "\(ps.switchCount) switches")
        // at 0 cents and tempo 1 again, steered onto whole input frames: the exact input
        let t = ps.inputTime
        #expect(t == t.rounded())
        let tail = Int(rate)
        let first = Int(t) - tail
        #expect(Array(y.suffix(tail)) == Array(x[first..<(first + tail)]), "the last second is the input from \(first)")
    }
}
