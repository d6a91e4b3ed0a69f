import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// A streaming shifter back at 0 cents and tempo 1 fades to the dry input, and the wet signal
/// it fades from must then be the input too: each partial's phase is turned back to the
/// input's first (`PhaseLocking.alignCents`). Before, a tone could dip by 20 dB in that fade,
/// depending on the phase its partials had gathered away from 0 cents.
@Suite struct ReturnToInputTests {
    static let rate = 48_000.0
    static let amplitude: Float = 0.5

    /// A steady tone of 440 Hz.
    static func tone(frames: Int) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * Double.pi * 440 * Double($0) / rate)) }
    }

    /// The smallest RMS of `y` over windows of 480 frames (10 ms, four periods and a bit) from
    /// `from` on, over the tone's (A/√2).
    static func lowestLevel(_ y: [Float], from: Int) -> Double {
        var lowest = Double.infinity
        for start in stride(from: from, to: y.count - 480, by: 120) {
            var sum = 0.0
            for i in start..<(start + 480) { sum += Double(y[i]) * Double(y[i]) }
            lowest = min(lowest, (sum / 480).squareRoot() / (Double(amplitude) / 2.0.squareRoot()))
        }
        return lowest
    }

    /// The first frame from which `y` is `x` exactly to the end (nil: never).
    static func exactFrom(_ y: [Float], _ x: [Float]) -> Int? {
        var k = y.count
        while k > 0 && y[k - 1] == x[k - 1] { k -= 1 }
        return k == y.count ? nil : k
    }

    /// The tone's pitch in cents off 440 Hz over `count` frames from `start` (zero crossings
    /// upward, interpolated).
    static func cents(_ y: [Float], start: Int, count: Int) -> Double {
        var crossings: [Double] = []
        for i in start..<(start + count - 1) where y[i] < 0 && y[i + 1] >= 0 {
            crossings.append(Double(i) + Double(-y[i] / (y[i + 1] - y[i])))
        }
        let hz = Double(crossings.count - 1) * rate / (crossings.last! - crossings.first!)
        return 1200 * log2(hz / 440)
    }

    /// Offline (a pitch map, as a lane renders): −1200 cents, then a step to 0 at several
    /// moments (each leaves the tone's phase somewhere else). The level never dips by more than
    /// 1 dB, the pitch stays within 5 cents (and a little) of the tone once the glide is over,
    /// and within 2 s the output is the input exactly.
    @Test(arguments: [72_000, 73_440, 74_880, 76_800, 78_240])
    func aStepBackToZeroFromAMapFadesToTheInputWithoutADip(stepFrame: Int) {
        let frames = stepFrame + 2 * Int(Self.rate) + 24_000
        let x = Self.tone(frames: frames + 8_192)
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: Self.rate, maximumFrameCount: 1024, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: -1200), mode: .streaming)
        ps.setPitchMap(PitchMap(stepFrames: 32, count: x.count / 32 + 2) { $0 * 32 < stepFrame ? -1200 : 0 }, originFrame: 0)
        var y = [Float](repeating: 0, count: frames)
        var scratch = [Float](repeating: 0, count: 1024)
        var pulled = 0, done = 0
        y.withUnsafeMutableBufferPointer { p in
            while done < frames {
                let n = min(1024, frames - done)
                ps.process(live: p.baseAddress! + done, nil, frameCount: n, maximumPull: n) { k in
                    for j in 0..<k { scratch[j] = pulled + j < x.count ? x[pulled + j] : 0 }
                    pulled += k
                    return scratch.withUnsafeBufferPointer { ($0.baseAddress!, nil) }
                }
                done += n
            }
        }
        let level = Self.lowestLevel(y, from: 24_000)
        #expect(level > 0.89, "lowest level \(20 * log10(level)) dB")
        // once glided (about 100 ms), until the input takes over: within the turn's bound
        let exact = Self.exactFrom(y, x)
        #expect(exact != nil && exact! < stepFrame + 2 * Int(Self.rate), "the input from frame \(exact ?? -1)")
        var worst = 0.0
        for start in stride(from: stepFrame + 7_200, to: (exact ?? frames) - 4_800, by: 2_400) {
            worst = max(worst, abs(Self.cents(y, start: start, count: 4_800)))
        }
        #expect(worst < 5.2, "\(worst) cents off the tone while its phase turns back")
    }

    /// Live: −40 cents (a small change: no switch, a glide) held for a while, then 0 again; the
    /// same: no dip, the exact input within 2 s.
    @Test(arguments: [150, 163, 177])
    func aGlideBackToZeroLiveFadesToTheInputWithoutADip(backAtBlock: Int) {
        let block = 256
        let blocks = backAtBlock + Int(2.5 * Self.rate) / block
        let x = Self.tone(frames: blocks * block + 8_192)
        let (y, ps) = StreamingSwitchTests.run(x, rate: Self.rate, stereo: false, blocks: blocks, block: block) { b, ps in
            if b == 20 { ps.setPitchCents(-40) }
            if b == backAtBlock { ps.setPitchCents(0) }
        }
        #expect(ps.switchCount == 0)
        let level = Self.lowestLevel(y, from: 24_000)
        #expect(level > 0.89, "lowest level \(20 * log10(level)) dB")
        // (live, input time t is output frame t: the shifter is exactly at tempo 1)
        let exact = Self.exactFrom(y, Array(x.prefix(y.count)))
        #expect(exact != nil && exact! < backAtBlock * block + 2 * Int(Self.rate), "the input from frame \(exact ?? -1)")
    }
}
