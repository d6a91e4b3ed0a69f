import Foundation
import Testing
import MixFX
import TestSupport

/// How soon a live pitch change is heard. A live kernel's shifters read their input ahead as
/// they need it (`PitchShifterMode.streaming`): no latency, and a change is in the frames made
/// from the next block on, which are read within the look-ahead the current stretch needs.
@Suite struct LivePitchResponseTests {
    static let rate = 48_000, block = 512

    /// Frames from the block a change is applied in until the new pitch dominates a 10 ms
    /// window (its centre), for a tone moved from `from` to `to` cents.
    static func response(from: Double, to: Double) throws -> Int {
        let x = Signals.sine(frequencyHz: 440, sampleRate: Double(rate), frames: 4 * rate, amplitude: 0.5)
        let engine = AudioEngine()
        let track = engine.addTrack(source: MemorySource(channels: [x], sampleRate: rate))
        track.timePitch.pitchCents = from
        let kernel = try engine.makeKernel(maximumFrameCount: block, mode: .live)
        try kernel.start()
        let change = 188 * block   // about 2 s in
        var out: [Float] = []
        while out.count < 3 * rate {
            if out.count == change { track.timePitch.pitchCents = to }
            let n = kernel.render(frameCount: block)
            out += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
        }
        return Signals.dominance(out, from: change, oldHz: 440 * pow(2, from / 1200), newHz: 440 * pow(2, to / 1200),
                                 sampleRate: Double(rate)) ?? .max
    }

    /// Within the block plus 60 ms (the bound; a live shifter with a fixed latency took
    /// 10377 frames, 216 ms, for any change). From lowered pitches the frames already made would
    /// hold the old pitch for (N/2)/r (133 ms from −1200, 216 ms from −2400, before the switch):
    /// there the shifter restarts a second state at the new pitch and crossfades to it.
    @Test(arguments: [(0.0, 700.0), (0.0, -2400.0), (0.0, 2400.0), (2400.0, -2400.0), (700.0, -700.0), (-300.0, 500.0),
                      (-1200.0, -200.0), (-2400.0, 2400.0), (-700.0, 0.0), (-2400.0, -1200.0), (-500.0, -1700.0)])
    func aPitchChangeIsHeardWithin60Milliseconds(from: Double, to: Double) throws {
        let frames = try Self.response(from: from, to: to)
        #expect(frames > 0 && frames <= Self.block + Self.rate * 60 / 1000,
                "\(from) → \(to) cents: heard after \(frames) frames (\(Double(frames) * 1000 / Double(Self.rate)) ms)")
    }

    /// Renders `x` live, its pitch `from` cents and `to` from frame `change` on (nil: `from`
    /// throughout).
    static func live(_ x: [Float], from: Double, to: Double, change: Int?, frames: Int) throws -> [Float] {
        let engine = AudioEngine()
        let track = engine.addTrack(source: MemorySource(channels: [x], sampleRate: rate))
        track.timePitch.pitchCents = from
        let kernel = try engine.makeKernel(maximumFrameCount: block, mode: .live)
        try kernel.start()
        var out: [Float] = []
        while out.count < frames {
            if let change, out.count >= change { track.timePitch.pitchCents = to }
            let n = kernel.render(frameCount: block)
            out += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
        }
        return out
    }

    /// The switch from a lowered pitch does not click: a tone moved from −1200 to −200 cents
    /// keeps every sample step within the larger of the two tones' own (the two states sum to at
    /// most √2 of it in the equal-power crossfade), its fourth difference small (a step of d
    /// shows as about 3d), its level within 1 dB in 10 ms windows, and its new pitch to 0.1 cent.
    @Test func theSwitchFromALoweredPitchDoesNotClick() throws {
        let x = Signals.sine(frequencyHz: 440, sampleRate: Double(Self.rate), frames: 4 * Self.rate)
        let change = 188 * Self.block
        let y = try Self.live(x, from: -1200, to: -200, change: change, frames: 3 * Self.rate + Self.rate / 2)
        let region = (change - Self.rate / 10)..<(change + Self.rate / 5)
        let newHz = 440 * pow(2, -200.0 / 1200)
        let ownStep = 0.5 * 2 * Double.pi * newHz / Double(Self.rate)
        let worst = region.map { Double(abs(y[$0] - y[$0 - 1])) }.max()!
        #expect(worst < 1.45 * ownStep, "largest step \(worst), the new tone's own \(ownStep)")
        let d4 = region.map { i -> Float in abs(y[i] + y[i - 4] - 4 * (y[i - 1] + y[i - 3]) + 6 * y[i - 2]) }.max()!
        #expect(d4 < 0.02, "fourth difference \(d4)")
        let w = Self.rate / 100
        let levels = stride(from: region.lowerBound, to: region.upperBound, by: w).map {
            Signals.db(Signals.rms(y[$0..<($0 + w)]) / (0.5 / 2.0.squareRoot()))
        }
        #expect(levels.allSatisfy { abs($0) < 1 }, "level from \(levels.min()!) to \(levels.max()!) dB")
        let after = y[(change + Self.rate / 5)..<(change + Self.rate)]
        #expect(abs(Signals.cents(Signals.frequency(after, sampleRate: Double(Self.rate)), newHz)) < 0.1)
    }

    /// After a switch the track is where it was in time: a tone whose level swells at 5 Hz
    /// (never fast enough to splice) moved from −1200 to −200 cents has its swells where the
    /// input has them, within 0.5 ms, as with −200 cents from the start. (The waveform cannot
    /// show it: a vocoder's phases are its own, and a restarted one's differ.)
    @Test func theSwitchedStateIsAlignedWithTheInput() throws {
        let rate = Double(Self.rate)
        let x = (0..<(4 * Self.rate)).map { i -> Float in
            let t = Double(i) / rate
            return Float(0.5 * (0.6 + 0.4 * sin(2 * Double.pi * 5 * t)) * sin(2 * Double.pi * 440 * t))
        }
        let change = 188 * Self.block
        let frames = 3 * Self.rate + Self.rate / 2
        let switched = try Self.live(x, from: -1200, to: -200, change: change, frames: frames)
        let fixed = try Self.live(x, from: -200, to: -200, change: nil, frames: frames)
        // the time of the 5 Hz swell in y's power over whole periods from `start`, relative to
        // the input's (ms)
        func swellOffsetMS(_ y: [Float], from start: Int) -> Double {
            let count = 5 * Self.rate / 5   // five periods
            func phase(_ s: [Float]) -> Double {
                var c = 0.0, q = 0.0
                for i in start..<(start + count) {
                    let p = Double(s[i]) * Double(s[i]), w = 2 * Double.pi * 5 * Double(i) / rate
                    c += p * cos(w); q += p * sin(w)
                }
                return atan2(c, q)
            }
            var d = phase(y) - phase(x)
            while d > Double.pi { d -= 2 * Double.pi }
            while d < -Double.pi { d += 2 * Double.pi }
            return -d / (2 * Double.pi * 5) * 1000
        }
        let start = change + Self.rate / 5
        let offset = swellOffsetMS(switched, from: start), reference = swellOffsetMS(fixed, from: start)
        #expect(abs(offset) < 0.5 && abs(reference) < 0.5, "swells off by \(offset) ms after the switch, \(reference) ms without")
    }
}
