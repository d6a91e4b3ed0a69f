import Foundation
import Testing
import MixFX
import TestSupport

/// The tonality limit through the engine (`TimePitchNode.tonalityParameter`, `--tonality-limit`):
/// the render stays aligned with its input (the split's delay is in the latency it removes), and
/// what it cannot do is refused with the track and the reason.
@Suite struct TonalityLimitEngineTests {
    static func engine(limit: Double, cents: Double = 300, tempo: Double = 1, frames: Int = 48_000) -> (AudioEngine, Track) {
        let engine = AudioEngine()
        let (hits, _) = Signals.hits(rate: 48_000)
        let t = engine.addTrack(source: MemorySource(channels: [Array(hits.prefix(frames))], sampleRate: 48_000))
        t.timePitch.pitchCents = cents
        t.timePitch.rate = tempo
        t.timePitch.tonalityParameter.value = limit
        return (engine, t)
    }

    /// Offline: as long as the input, and each hit's highs (above 12 kHz, moved by a constant
    /// frequency: no frames to smear them) in place: their power envelope lags the input's by at
    /// most 2 frames (the best correlation over each hit).
    @Test func aRenderStaysAlignedWithItsInput() throws {
        let (hits, onsets) = Signals.hits(rate: 48_000)
        let (engine, _) = Self.engine(limit: 8000, frames: hits.count)
        let out = try renderAll(engine, block: 1000)[0]
        #expect(out.count == hits.count)
        let highsIn = Signals.butterworth(hits, highPass: true, cornerHz: 12_000, rate: 48_000, sections: 4)
        let highsOut = Signals.butterworth(out, highPass: true, cornerHz: 12_000, rate: 48_000, sections: 4)
        // the lag of the output's highs' power envelope (0.5 ms mean) against the input's that
        // correlates best over each hit
        func envelope(_ s: [Float], _ span: Range<Int>) -> [Double] {
            span.map { i in (i..<(i + 24)).reduce(0.0) { $0 + Double(s[$1] * s[$1]) } }
        }
        var worst = 0
        for o in onsets where o > 2_000 && o + 2_000 < hits.count {
            let a = envelope(highsIn, (o - 480)..<(o + 960))
            var best = (lag: 0, score: -Double.infinity)
            for lag in -48...48 {
                let b = envelope(highsOut, (o - 480 + lag)..<(o + 960 + lag))
                let score = zip(a, b).reduce(0.0) { $0 + $1.0 * $1.1 }
                if score > best.score { best = (lag, score) }
            }
            worst = max(worst, abs(best.lag))
        }
        #expect(worst <= 2, "hits' highs moved by up to \(worst) frames")
    }

    /// A tempo (the node's own), a moving pitch lane, a limit under the pitch's floor or live
    /// playback: refused, naming the track's node, the limit and why.
    @Test func whatItCannotDoIsRefused() throws {
        let (tempo, _) = Self.engine(limit: 8000, tempo: 0.8)
        #expect {
            _ = try tempo.makeKernel()
        } throws: { "\($0)".contains("tonalityLimitHz: 8000 Hz with a tempo (0.8)") }
        let (lane, t) = Self.engine(limit: 8000)
        t.automation[.pitchCents] = AutomationLane([(0, 0), (1, 300)])
        #expect {
            _ = try lane.makeKernel()
        } throws: { "\($0)".contains("with a pitch lane") }
        let (live, _) = Self.engine(limit: 6000)
        #expect {
            _ = try live.makeKernel(maximumFrameCount: 256, mode: .live)
        } throws: { "\($0)".contains("live playback has no tonality limit") }
        // under the floor for the pitch, 1000·max(√r, 1/√r) Hz (1415 at ±1200 cents), also in
        // `validate` (a dry run, a batch's check)
        let (low, _) = Self.engine(limit: 1400, cents: -1200)
        #expect {
            _ = try low.validate()
        } throws: { "\($0)".contains("1400 Hz at -1200 cents, under 1415 Hz") }
        // two shifters on one track, tempos 2 and 0.5 (the track's product 1): the limited
        // one's own tempo counts (it once reached the shifter's precondition)
        let (chain, t2) = Self.engine(limit: 0, cents: 0, tempo: 2)
        let second = TimePitchNode(name: "second")
        chain.attach(second)
        chain.disconnectOutput(of: t2.timePitch)
        try chain.connect(t2.timePitch, to: second)
        try chain.connect(second, to: chain.mainMixer)
        second.rate = 0.5
        second.pitchCents = 300
        second.tonalityParameter.value = 8000
        #expect {
            _ = try chain.makeKernel()
        } throws: { "\($0)".contains("second: tonalityLimitHz: 8000 Hz with a tempo (0.5)") }
        // off, at a fixed pitch and tempo 1, or with a constant tempo lane at 1: accepted
        _ = try Self.engine(limit: 0, tempo: 0.8).0.makeKernel()
        _ = try Self.engine(limit: 8000).0.makeKernel()
        _ = try Self.engine(limit: 1415, cents: 1200).0.makeKernel()
        let (constant, t3) = Self.engine(limit: 8000)
        t3.automation[.tempo] = AutomationLane([(0, 1), (1, 1)])
        _ = try constant.makeKernel()
    }
}
