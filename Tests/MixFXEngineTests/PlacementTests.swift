import Foundation
import Testing
import MixFX
import TestSupport

/// Placing tracks in time (`Placement`, `PlayerNode.scheduleSegment`): start, trim and
/// equal-power fades, to the sample, through the whole engine.
@Suite struct PlacementTests {
    /// The expected placed signal, computed from the definition in `Placement`'s notes.
    func placedByHand(_ x: [Float], silence: Int, trimIn: Int, length: Int, fadeIn: Int, fadeOut: Int) -> [Float] {
        var y = [Float](repeating: 0, count: silence)
        for k in 0..<length {
            var g = 1.0
            if k < fadeIn { g *= sin(Double.pi / 2 * Double(k) / Double(fadeIn)) }
            if k >= length - fadeOut { g *= sin(Double.pi / 2 * Double(length - k) / Double(fadeOut)) }
            y.append(x[trimIn + k] * Float(g))
        }
        return y
    }

    @Test func startTrimAndFadesLandToTheSample() throws {
        let x = Signals.noise(frames: 20_000, amplitude: 0.5, seed: 7)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        // 0.1 s of silence, then 0.05..0.25 s of the file, faded in over 10 ms and out over 20 ms
        t.player.scheduleSegment(from: 0.05, to: 0.25, at: 0.1, fadeIn: 0.01, fadeOut: 0.02)
        let out = try renderAll(engine, block: 777)
        let want = placedByHand(x, silence: 4800, trimIn: 2400, length: 9600, fadeIn: 480, fadeOut: 960)
        #expect(out[0].count == 4800 + 9600, "the mix lasts the placed track: \(out[0].count) frames")
        let err = zip(out[0], want).map { abs($0 - $1) }.max()!
        #expect(err < 1e-7, "largest difference \(err)")
        #expect(out[0][..<4800].allSatisfy { $0 == 0 } && out[0][4800] == 0, "silent before, and the fade starts at 0")
        // the fades are equal-power: halfway through the fade-in the gain is √½
        #expect(abs(Double(out[0][4800 + 240]) / Double(x[2400 + 240]) - 0.70710678) < 1e-6)
        // the end: the fade reaches 0 one frame past the segment
        #expect(abs(Double(out[0][4800 + 9599]) / Double(x[2400 + 9599]) - sin(Double.pi / 2 / 960)) < 1e-6)
    }

    @Test func theMixLastsAsLongAsTheLongestPlacedTrackAndAlignsAcrossRates() throws {
        let a = Signals.noise(frames: 44_100, amplitude: 0.3, seed: 1)   // 1 s at 44.1 kHz
        let b = Signals.noise(frames: 24_000, amplitude: 0.3, seed: 2)   // 0.5 s at 48 kHz
        let engine = AudioEngine()
        let ta = engine.addTrack(source: MemorySource(channels: [a], sampleRate: 44_100))
        let tb = engine.addTrack(source: MemorySource(channels: [b], sampleRate: 48_000))
        ta.player.schedule(at: 2.5)       // 2.5 + 1 s: 3.5 s
        tb.player.scheduleSegment(from: 0.25, at: 1)   // 1 + 0.25 s
        let layout = try engine.validate()
        #expect(layout.trackFrameCounts == [168_000, 60_000] && layout.frameCount == 168_000)
        let out = try renderAll(engine)
        #expect(out[0].count == 168_000)
        // track b alone (a is silent until 2.5 s): its segment starts exactly at 1 s
        #expect(out[0][..<48_000].allSatisfy { $0 == 0 })
        #expect(Array(out[0][48_000..<60_000]) == Array(b[12_000...]))
        // then silence until track a's start, but for the resampler's reach (64 taps at 44.1 kHz:
        // a band-limited onset rings ahead of itself)
        #expect(out[0][60_000..<(120_000 - 70)].allSatisfy { $0 == 0 })
    }

    @Test func aSeekLandsInThePlacedTrack() throws {
        let x = Signals.noise(frames: 30_000, amplitude: 0.4, seed: 3)
        func engine() -> AudioEngine {
            let e = AudioEngine()
            let t = e.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
            t.player.scheduleSegment(from: 0.1, to: 0.5, at: 0.2, fadeIn: 0.05, fadeOut: 0.05)
            return e
        }
        let whole = try renderAll(engine())
        for target in [0, 5000, 9600, 12_000, 25_000] {
            let k = try engine().makeKernel(maximumFrameCount: 1000)
            try k.seek(toFrame: target)
            var tail: [Float] = []
            while case let n = k.render(frameCount: 1000), n > 0 { tail += UnsafeBufferPointer(start: k.output.channel(0), count: n) }
            #expect(tail == Array(whole[0][target...]), "a seek to \(target)")
        }
    }

    @Test func placementsThatLeaveNothingAreRefused() throws {
        let x = [Float](repeating: 0.1, count: 48_000)
        for (p, words) in [(Placement(trimInSeconds: 1.5), "trim-in 1.5 s is at or past the end of the file (1 s)"),
                           (Placement(trimInSeconds: 0.5, trimOutSeconds: 0.2), "the end is not after the start")] {
            let e = AudioEngine()
            let t = e.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000, name: "x.wav"))
            t.player.placement = p
            #expect { try e.validate() } throws: { "\($0)".contains(words) }
        }
        // the parameters' own ranges
        let e = AudioEngine()
        let t = e.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        t.player.placement.fadeInSeconds = -1
        #expect(throws: EngineError.self) { try e.validate() }
    }
}
