import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// A streaming shifter back at 0 cents and tempo 1 fades to the dry input, and the wet signal
/// it fades from must then be the input too: each partial's phase is turned back to the
/// input's first (`PhaseLocking.alignCents`), slowly enough that neither its pitch nor its level
/// moves, from low partials (below the 100 Hz floor) to high ones (where the turn per frame is
/// capped), and the fade waits until every frame a sample overlaps is the input.
@Suite struct ReturnToInputTests {
    /// The signals: a tone of 440 Hz at 48 kHz, one of 12 kHz at 44.1 kHz, and a chord of 55,
    /// 138.6, 330 and 2000 Hz at 44.1 kHz (with a 40 ms level window: longer than its lowest
    /// period, so the partials' beats do not count).
    enum Signal: String, CaseIterable, Sendable {
        case tone440, tone12k, chord
        var rate: Double { self == .tone440 ? 48_000 : 44_100 }
        var partialsHz: [Double] { self == .tone440 ? [440] : self == .tone12k ? [12_000] : [55, 138.6, 330, 2_000] }
        var windowFrames: Int { self == .chord ? Int(0.04 * rate) : Int(0.01 * rate) }
        /// The lowest level allowed against the input's: 0.26 dB under for a tone (the fade
        /// between the wet signal and the input half a sample apart took 0.6 dB off 12 kHz),
        /// 0.7 dB for the chord (its partials beat in a window while their phases turn).
        var lowestLevel: Double { self == .chord ? 0.92 : 0.97 }
        func samples(_ frames: Int) -> [Float] {
            let a = 0.5 / Double(partialsHz.count)
            return (0..<frames).map { i in
                Float(partialsHz.enumerated().reduce(0.0) { $0 + a * sin(2 * Double.pi * $1.element * Double(i) / rate + Double($1.offset)) })
            }
        }
    }

    /// The smallest level of `y` against `x`'s over windows of `window` frames (a quarter
    /// apart) from `from` on.
    static func lowestLevel(_ y: [Float], _ x: [Float], window: Int, from: Int) -> Double {
        var lowest = Double.infinity
        for start in stride(from: from, to: y.count - window, by: window / 4) {
            var sy = 0.0, sx = 0.0
            for i in start..<(start + window) { sy += Double(y[i]) * Double(y[i]); sx += Double(x[i]) * Double(x[i]) }
            lowest = min(lowest, (sy / sx).squareRoot())
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
    static func cents(_ y: [Float], rate: Double, start: Int, count: Int) -> Double {
        var crossings: [Double] = []
        for i in start..<(start + count - 1) where y[i] < 0 && y[i + 1] >= 0 {
            crossings.append(Double(i) + Double(-y[i] / (y[i + 1] - y[i])))
        }
        let hz = Double(crossings.count - 1) * rate / (crossings.last! - crossings.first!)
        return 1200 * log2(hz / 440)
    }

    /// Offline (a pitch map, as a lane renders): −1200 cents, then a step to 0 at 1.5 s and a
    /// little later (each leaves the partials' phases somewhere else). The level never dips by
    /// more than `Signal.lowestLevel`, the 440 Hz tone's pitch stays within 5 cents (and a little) once the
    /// glide is over, and within 2 s the output is the input exactly.
    @Test(arguments: Signal.allCases, [0, 1_440, 4_800])
    func aStepBackToZeroFromAMapFadesToTheInputWithoutADip(signal: Signal, later: Int) {
        let rate = signal.rate
        let stepFrame = Int(1.5 * rate) + later
        let frames = stepFrame + Int(2.5 * rate)
        let x = signal.samples(frames + 8_192)
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: 1024, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: -1200), mode: .streaming)
        ps.setPitchMap(PitchMap(stepFrames: 32, count: x.count / 32 + 2) { $0 * 32 < stepFrame ? -1200 : 0 }, originFrame: 0)
        let y = ps.streamed(x, frames: frames, blocks: [1024])
        // (from where the glide has settled: the step itself moves the pitch by an octave)
        let level = Self.lowestLevel(y, x, window: signal.windowFrames, from: stepFrame + Int(0.15 * rate))
        #expect(level > signal.lowestLevel, "\(signal): lowest level \(20 * log10(level)) dB")
        let exact = Self.exactFrom(y, x)
        #expect(exact != nil && exact! < stepFrame + 2 * Int(rate), "\(signal): the input from frame \(exact ?? -1)")
        if signal == .tone440 {
            var worst = 0.0
            for start in stride(from: stepFrame + Int(0.15 * rate), to: (exact ?? frames) - 4_800, by: 2_400) {
                worst = max(worst, abs(Self.cents(y, rate: rate, start: start, count: 4_800)))
            }
            #expect(worst < 5.2, "\(worst) cents off the tone while its phase turns back")
        }
    }

    /// Live: −40 cents (a small change: no switch, a glide) held for a while, then 0 again; the
    /// same: no dip, the exact input within 2 s.
    @Test(arguments: Signal.allCases, [150, 163, 177])
    func aGlideBackToZeroLiveFadesToTheInputWithoutADip(signal: Signal, backAtBlock: Int) {
        let block = 256, rate = signal.rate
        let blocks = backAtBlock + Int(2.5 * rate) / block
        let x = signal.samples(blocks * block + 8_192)
        let (y, ps) = StreamingSwitchTests.run(x, rate: rate, stereo: false, blocks: blocks, block: block) { b, ps in
            if b == 20 { ps.setPitchCents(-40) }
            if b == backAtBlock { ps.setPitchCents(0) }
        }
        #expect(ps.switchCount == 0)
        let level = Self.lowestLevel(y, x, window: signal.windowFrames, from: Int(0.5 * rate))
        #expect(level > signal.lowestLevel, "\(signal): lowest level \(20 * log10(level)) dB")
        // (live, input time t is output frame t: the shifter is exactly at tempo 1)
        let exact = Self.exactFrom(y, Array(x.prefix(y.count)))
        #expect(exact != nil && exact! < backAtBlock * block + 2 * Int(rate), "\(signal): the input from frame \(exact ?? -1)")
    }
}
