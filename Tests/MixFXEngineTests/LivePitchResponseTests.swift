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
            let n = try kernel.render(frameCount: block)
            out += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
        }
        return Signals.dominance(out, from: change, oldHz: 440 * pow(2, from / 1200), newHz: 440 * pow(2, to / 1200),
                                 sampleRate: Double(rate)) ?? .max
    }

    /// From 0 cents and above, and down to −300, within the block plus 60 ms (the bound;
    /// a live shifter with a fixed latency took 10377 frames, 216 ms, for any change).
    @Test(arguments: [(0.0, 700.0), (0.0, -2400.0), (0.0, 2400.0), (2400.0, -2400.0), (700.0, -700.0), (-300.0, 500.0)])
    func aPitchChangeIsHeardWithin60Milliseconds(from: Double, to: Double) throws {
        let frames = try Self.response(from: from, to: to)
        #expect(frames > 0 && frames <= Self.block + Self.rate * 60 / 1000,
                "\(from) → \(to) cents: heard after \(frames) frames (\(Double(frames) * 1000 / Double(Self.rate)) ms)")
    }

    /// From lower pitches the stretched signal is read r times slower, and the frames already
    /// made reach N/2 of it ahead: a change is heard within the block, (N/2)/r and 45 ms (the
    /// glide): 133 ms from −1200 cents, 216 ms from −2400 (where a fixed latency took 216 ms
    /// too). Hearing it sooner would take making those frames again.
    @Test(arguments: [(-1200.0, -200.0), (-2400.0, 2400.0), (-700.0, 0.0)])
    func fromLowPitchesWithinHalfAWindowOfTheSlowerRead(from: Double, to: Double) throws {
        let frames = try Self.response(from: from, to: to)
        let bound = Self.block + Int(2048 / pow(2, from / 1200)) + Self.rate * 45 / 1000
        #expect(frames > 0 && frames <= bound, "\(from) → \(to) cents: heard after \(frames) frames, bound \(bound)")
    }
}
