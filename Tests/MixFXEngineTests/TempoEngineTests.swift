import Foundation
import Testing
import MixFX
import TestSupport

/// Tempo through the engine (`TimePitchNode.rate`): exact lengths, alignment at sample 0,
/// placement in the mix's time, tempo 1 untouched.
@Suite struct TempoEngineTests {
    /// round(n / R) frames for every tempo, for tracks at the mix's rate and resampled ones.
    @Test func lengthsAreExactForEveryTempo() throws {
        for tempo in [1.0 / 32, 0.25, 0.5, 0.75, 0.8, 0.9, 1.25, 1.5, 2, 3, 7.3, 32] {
            for (frames, rate) in [(1000, 48_000), (48_000, 48_000), (12_345, 48_000), (44_100, 44_100)] {
                let engine = AudioEngine()
                let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: frames, amplitude: 0.2, seed: 3)], sampleRate: rate))
                t.timePitch.rate = tempo
                engine.outputSampleRate = 48_000
                let atOutputRate = (frames * 48_000 + rate - 1) / rate
                let expected = Int((Double(atOutputRate) / tempo).rounded())
                let validated = try engine.validate().frameCount
                #expect(validated == expected, "tempo \(tempo), \(frames) frames at \(rate) Hz")
                if frames <= 12_345 || tempo >= 0.5 {
                    let out = try renderAll(engine, block: 1000)
                    #expect(out[0].count == expected)
                    #expect(out[0].allSatisfy { $0.isFinite })
                }
            }
        }
    }

    /// The output does not depend on how it is cut into blocks: output frame n is at input time
    /// n·R computed from n, not summed block by block (which differed in the last bit at about
    /// one sample in 2000 between 4096- and 1024-frame blocks). Exact equality.
    @Test func tempoOutputIsTheSameForAnyBlockSize() throws {
        func make() -> AudioEngine {
            let engine = AudioEngine()
            for (k, (tempo, cents)) in [(0.8, -200.0), (1.25, 700.0), (0.5, 0.0), (1.6, -300.0)].enumerated() {
                let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 30_000, amplitude: 0.3, seed: 40 + UInt64(k)),
                                                                        Signals.noise(frames: 30_000, amplitude: 0.3, seed: 50 + UInt64(k))],
                                                             sampleRate: 48_000))
                t.timePitch.rate = tempo
                t.timePitch.pitchCents = cents
            }
            return engine
        }
        let reference = try renderAll(make(), block: 4096)
        #expect(reference[0].count == 60_000)
        for block in [1000, 2048, 333] {
            let out = try renderAll(make(), block: block)
            let differing = zip(out.joined(), reference.joined()).filter { $0 != $1 }.count
            #expect(out.map(\.count) == reference.map(\.count) && differing == 0,
                    "blocks of \(block) frames: \(differing) samples differ")
        }
    }

    /// A DC offset stays a constant through a tempo or a shift: the mean of the output (a 440 Hz
    /// tone over +0.1, from the start or from 1 s on) over every stretch of about 0.1 s stays
    /// within 0.002 of 0.1, and a constant alone stays constant. (Bins 0 and 1 turned with the
    /// tone's phasor, and a shift lost the offset.)
    @Test(arguments: [(0.25, 0.0), (0.8, 0.0), (2.0, 0.0), (1.0, -700.0), (1.0, 500.0)])
    func aDCOffsetStaysConstant(tempo: Double, cents: Double) throws {
        let rate = 48_000, n = rate * 2
        let tone = (0..<n).map { Float(0.1 + 0.5 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        // (and an offset that starts after the tone: bin 0 was the tone's region until then)
        let later = tone.enumerated().map { $0.offset < rate ? $0.element - 0.1 : $0.element }
        for (name, x) in [("tone over DC", tone), ("DC alone", [Float](repeating: 0.5, count: n)), ("DC after 1 s", later)] {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: rate))
            t.timePitch.rate = tempo
            t.timePitch.pitchCents = cents
            let y = try renderAll(engine, block: 1000)[0]
            let expected = name == "DC after 1 s" ? 0.1 : Double(x.reduce(0, +)) / Double(n)
            // (means over whole periods of the shifted tone, about 0.1 s, away from the ends)
            let hz = 440 * pow(2, cents / 1200), periods = (0.1 * hz).rounded()
            let window = Int((periods * Double(rate) / hz).rounded())
            var worst = 0.0, count = 0
            var i = name == "DC after 1 s" ? Int(Double(rate) * 1.2 / tempo) : rate / 5
            while i + window <= y.count - rate / 5 {
                let mean = Double(y[i..<(i + window)].reduce(0, +)) / Double(window)
                worst = max(worst, abs(mean - expected)); count += 1
                i += window / 3
            }
            #expect(count >= (name == "DC after 1 s" ? 2 : 10), "\(name): \(count) windows measured")
            #expect(worst < 0.002, "\(name), tempo \(tempo), \(cents) cents: the 0.1 s means are up to \(worst) off \(expected)")
        }
    }

    @Test func tempoAndPitchCombineAndPlacementStaysInTheMixsTime() throws {
        let rate = 48_000.0
        let x = Signals.sine(frequencyHz: 440, sampleRate: rate, frames: 48_000)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        t.timePitch.rate = 0.75
        t.timePitch.pitchCents = -200
        t.player.scheduleSegment(from: 0, at: 0.5)   // half a second of silence first, at any tempo
        let out = try renderAll(engine)[0]
        #expect(out.count == 24_000 + 64_000, "\(out.count)")
        // silent before the track: exactly, but for the vocoder's reach (two windows) before it,
        // where its smear of the abrupt start stays below −100 dB, then −40 dB in the last window
        #expect(out[..<(24_000 - 8192)].allSatisfy { $0 == 0 })
        #expect(out[..<(24_000 - 4096)].allSatisfy { abs($0) < 1e-5 })
        #expect(Signals.db(Signals.rms(out[(24_000 - 4096)..<24_000]) / Signals.rms(out[24_000..<28_096])) < -40)
        let f = Signals.frequency(out[40_000..<80_000], sampleRate: rate)
        #expect(abs(Signals.cents(f, 440 * pow(2, -200.0 / 1200))) < 0.1, "\(f) Hz")
    }
}
