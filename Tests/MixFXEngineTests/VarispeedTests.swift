import Foundation
import Testing
import MixFX
import TestSupport

/// Tape-style speed (`Varispeed`, `PlayerNode.speed`): pitch and tempo move together through the
/// resampler, lengths follow the rate conversion's rule, and placement stays in the mix's time.
@Suite struct VarispeedTests {
    @Test func speedsAreTakenAsCloseFractions() {
        for v in [0.25, 0.5, 0.8, 1, 1.0594630943592953, 1.25, 2, 3.999, 4] {
            let (p, q) = Varispeed.fraction(v)
            #expect(q <= 10_000 && abs(Double(p) / Double(q) - v) < 1 / (2 * Double(q) * Double(q)) + 1e-15, "\(v) → \(p)/\(q)")
            #expect(abs(1200 * log2(Double(p) / Double(q) / v)) < 0.0005, "\(v): \(p)/\(q) is more than 0.0005 cents off")
        }
        #expect(Varispeed.ratePair(sourceRate: 48_000, outputRate: 48_000, speed: 1) == (1, 1))
        #expect(Varispeed.ratePair(sourceRate: 44_100, outputRate: 48_000, speed: 0.5) == (147, 320))
    }

    /// A 1 kHz sine at several speeds: the pitch moves by the speed (measured to 0.01 cent), the
    /// length is ceil(n / v) at the same rate, and the tone starts at sample 0.
    @Test(arguments: [0.5, 0.8, 1.0594630943592953, 1.5, 2.0])
    func pitchAndLengthFollowTheSpeed(speed: Double) throws {
        let n = 48_000
        let x = Signals.sine(frequencyHz: 1000, sampleRate: 48_000, frames: n, amplitude: 0.5)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        t.player.speed = speed
        let out = try renderAll(engine)[0]
        let (p, q) = Varispeed.fraction(speed)
        #expect(out.count == (n * q + p - 1) / p, "length \(out.count) for \(n) frames at speed \(speed)")
        let f = Signals.frequency(out[2000..<(out.count - 2000)], sampleRate: 48_000)
        #expect(abs(Signals.cents(f, 1000 * speed)) < 0.01, "at speed \(speed): \(f) Hz, expected \(1000 * speed)")
        // aligned at sample 0: away from the abrupt ends, output k is the sine at time k·v
        let v = Double(p) / Double(q)
        let err = (5000..<(out.count - 5000)).map { abs(Double(out[$0]) - 0.5 * sin(2 * Double.pi * 1000 * v * Double($0) / 48_000)) }.max()!
        #expect(err < 1e-4, "at speed \(speed) the output is off the sine read \(v)× faster by \(err)")
    }

    @Test func placementStaysInTheMixsTimeAtAnySpeed() throws {
        let x = Signals.noise(frames: 48_000, amplitude: 0.3, seed: 9)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        t.player.speed = 0.5
        t.player.scheduleSegment(from: 0.25, to: 0.75, at: 1)   // 0.5 s of the file at half speed: 1 s
        let out = try renderAll(engine)[0]
        #expect(out.count == 48_000 + 48_000, "1 s of silence, then the segment at half speed: \(out.count)")
        // silent up to 1 s (but for the resampler's reach ahead of an abrupt start)
        #expect(out[..<(48_000 - 140)].allSatisfy { $0 == 0 } && Signals.rms(out[48_200..<96_000]) > 0.1)
        // speed 1 is no conversion at all: bit-exact
        let e1 = AudioEngine()
        e1.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000)).player.speed = 1
        #expect(try renderAll(e1)[0] == x)
    }

    @Test func aSeekAtAnySpeedIsTheRenderFromThere() throws {
        let x = Signals.sine(frequencyHz: 440, sampleRate: 44_100, frames: 30_000, amplitude: 0.3)
        func engine() -> AudioEngine {
            let e = AudioEngine()
            e.addTrack(source: MemorySource(channels: [x], sampleRate: 44_100)).player.speed = 0.75
            e.outputSampleRate = 48_000
            return e
        }
        let whole = try renderAll(engine())[0]
        let k = try engine().makeKernel(maximumFrameCount: 1024)
        try k.seek(toFrame: 20_000)
        var tail: [Float] = []
        while case let n = k.render(frameCount: 1024), n > 0 { tail += UnsafeBufferPointer(start: k.output.channel(0), count: n) }
        #expect(tail.count == whole.count - 20_000)
        // a seek starts the resampler afresh at the nearest source frame: after its reach the
        // output is the render's but for that rounding (within half a source frame: for this
        // sine at most 0.3·2π·330 Hz·0.5/33075 s ≈ 0.0094)
        // (and away from the file's abrupt end, where the filters' ringing is offset likewise)
        let err = zip(tail[200..<(tail.count - 300)], whole[20_200...]).map { abs($0 - $1) }.max() ?? 1
        #expect(err < 0.0095, "after a seek: \(err)")
    }
}
