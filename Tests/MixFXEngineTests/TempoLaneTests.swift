import Foundation
import Testing
import MixFX
import TestSupport

/// Tempo lanes in an offline render (issue #33): the output lasts the integral of the lane,
/// exactly; clicks land at their mapped times; the bytes do not depend on the block size; a
/// constant lane is the static render; other lanes on a track at a tempo are on the timeline.
@Suite struct TempoLaneTests {
    static let rate = 48_000

    /// Clicks (single samples of 0.9) at `onsets` in `frames` of silence.
    static func clicks(frames: Int, onsets: [Int]) -> [Float] {
        var x = [Float](repeating: 0, count: frames)
        for o in onsets { x[o] = 0.9 }
        return x
    }

    /// The output frame of each click: the loudest sample within ±20 ms of `expected`.
    static func landing(_ y: [Float], near expected: Double) -> Int {
        let w = rate / 50, c = Int(expected.rounded())
        var best = max(0, c - w)
        for i in max(0, c - w)..<min(y.count, c + w) where abs(y[i]) > abs(y[best]) { best = i }
        return best
    }

    /// A linear tempo ramp 1 → 2 over the first 2 s (96 000 frames), then 2: the input reaches
    /// s(t) = t + t²/(2·96 000) (frames), 144 000 at t = 96 000, and the rest of a 192 000-frame
    /// source takes 48 000/2 = 24 000 frames more: 120 000 frames, exactly. An exponential ramp
    /// 0.5 → 2 over 3 s: ∫ = T·R₀·(k − 1)/ln k (k = 4), and the rest at 2.
    @Test func theOutputLastsTheIntegralOfTheLane() throws {
        let n = 4 * Self.rate
        func length(_ lane: AutomationLane) throws -> Int {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: n, amplitude: 0.2, seed: 3)], sampleRate: Self.rate))
            t.automation[.tempo] = lane
            let frames = try engine.validate().frameCount
            let rendered = try renderAll(engine, block: 1000)[0].count
            #expect(frames == rendered)
            return rendered
        }
        #expect(try length(AutomationLane([(0, 1), (2, 2)])) == 120_000)
        let r = Double(Self.rate), T = 3 * r, k = 4.0
        let ramp = T * 0.5 * (k - 1) / log(k)   // input frames taken by the ramp
        let expected = T + (Double(n) - ramp) / 2
        #expect(ramp < Double(n))
        #expect(try length(AutomationLane([(0, 0.5), (3, 2)], curve: .exp)) == Int(expected.rounded()))
    }

    /// Clicks every 0.25 s of the source, under a lane that slows to 0.6 and speeds up to 1.7
    /// (linear segments), the track placed at 0.5 s: each click at source frame x lands at
    /// D + s⁻¹(x) within 1 ms, s being the lane's integral from D = 0.5 s (the silence before a
    /// track passes at tempo 1), computed here by closed form per segment.
    @Test func clicksLandAtTheirMappedTimes() throws {
        let r = Double(Self.rate), n = 6 * Self.rate
        let onsets = Array(stride(from: Self.rate / 4, to: n - Self.rate / 4, by: Self.rate / 4))
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [Self.clicks(frames: n, onsets: onsets)], sampleRate: Self.rate))
        t.player.placement = Placement(startSeconds: 0.5)
        let points: [(seconds: Double, value: Double)] = [(0.5, 1), (1.5, 0.6), (3, 0.6), (4.5, 1.7)]
        t.automation[.tempo] = AutomationLane(points)
        let y = try renderAll(engine, block: 512)[0]
        // s⁻¹(x): walk the segments (linear tempo: s = R₀u + (R₁ − R₀)u²/(2L) over a segment of L)
        func mapped(_ x: Double) -> Double {
            var s = 0.0
            for i in 0..<points.count {
                let t0 = points[i].seconds * r, r0 = points[i].value
                guard i + 1 < points.count else { return t0 + (x - s) / r0 }
                let len = (points[i + 1].seconds - points[i].seconds) * r, r1 = points[i + 1].value
                let whole = (r0 + r1) / 2 * len
                if s + whole >= x {
                    // solve r0·u + (r1 − r0)·u²/(2·len) = x − s for u
                    let a = (r1 - r0) / (2 * len), b = r0, c = -(x - s)
                    let u = abs(a) < 1e-15 ? -c / b : (-b + sqrt(b * b - 4 * a * c)) / (2 * a)
                    return t0 + u
                }
                s += whole
            }
            return .nan
        }
        var worst = 0.0, at = 0
        for o in onsets {
            let expected = mapped(Double(o))
            let e = abs(Double(Self.landing(y, near: expected)) - expected)
            if e > worst { worst = e; at = o }
        }
        #expect(worst <= r / 1000, "a click lands \(worst) frames from its mapped time (source frame \(at))")
        #expect(y.count == Int(mapped(Double(n)).rounded()))
    }

    /// A tempo lane with a pitch lane and an EQ lane renders the same bytes in blocks of 64,
    /// 1000 and 4096 frames, on one thread or the pipeline's.
    @Test func tempoLanesDoNotDependOnTheBlockSize() throws {
        func render(_ block: Int, parallel: Bool) throws -> [[Float]] {
            let engine = AudioEngine()
            let n = 3 * Self.rate
            let a = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: n, amplitude: 0.3, seed: 5),
                                                                    Signals.noise(frames: n, amplitude: 0.3, seed: 6)], sampleRate: Self.rate))
            let b = engine.addTrack(source: MemorySource(channels: [Signals.sine(frequencyHz: 330, sampleRate: 48_000, frames: n)],
                                                         sampleRate: Self.rate))
            a.automation[.tempo] = AutomationLane([.init(seconds: 0, value: 0.7, curve: .scurve), .init(seconds: 1.5, value: 1.4, curve: .step),
                                                   .init(seconds: 2.5, value: 1.1)])
            a.automation[.pitchCents] = AutomationLane([(0, -200), (2, 300)])
            a.automation[.bassGainDB] = AutomationLane([(0, -6), (3, 6)])
            b.timePitch.rate = 0.8
            b.automation[.pitchCents] = AutomationLane([(0, 0), (3, 100)])
            let kernel = try engine.makeKernel(maximumFrameCount: block)
            kernel.parallelTracks = parallel
            try kernel.start()
            var out = [[Float]](repeating: [], count: kernel.layout.channelCount)
            while true {
                let k = kernel.render(frameCount: block)
                if k == 0 { break }
                for c in 0..<out.count { out[c] += UnsafeBufferPointer(start: kernel.output.channel(c), count: k) }
            }
            return out
        }
        let reference = try render(4096, parallel: false)
        #expect(reference[0].count == Int((3.0 * 48_000 / 0.8).rounded()))
        #expect(try render(64, parallel: false) == reference)
        #expect(try render(1000, parallel: true) == reference)
    }

    /// A tempo lane whose breakpoints all have one value renders the static tempo's bytes (and
    /// one that moves does not).
    @Test func aConstantTempoLaneIsTheStaticRender() throws {
        func render(_ set: (Track) -> Void) throws -> [[Float]] {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 96_000, amplitude: 0.3, seed: 9)], sampleRate: Self.rate))
            t.player.placement = Placement(startSeconds: 0.2)
            t.timePitch.pitchCents = 150
            set(t)
            return try renderAll(engine, block: 1024)
        }
        let reference = try render { $0.timePitch.rate = 0.8 }
        #expect(try render { $0.automation[.tempo] = AutomationLane([(0, 0.8), (1, 0.8), (3, 0.8)]) } == reference)
        #expect(try render { $0.automation[.tempo] = AutomationLane([(0, 0.8), (3, 0.81)]) } != reference)
    }

    /// A pitch sweep on a track at tempo 0.8 follows its lane on the mix's timeline (within 1
    /// cent where the glide has settled), as at tempo 1.
    @Test func aPitchLaneAtATempoIsOnTheTimeline() throws {
        let rate = 48_000.0, n = 5 * 48_000
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [Signals.sine(frequencyHz: 440, sampleRate: rate, frames: n)], sampleRate: 48_000))
        t.timePitch.rate = 0.8
        let lane = AutomationLane([(0, 0), (4, 200)])
        t.automation[.pitchCents] = lane
        let y = try renderAll(engine, block: 1024)[0]
        #expect(y.count == Int((Double(n) / 0.8).rounded()))
        let w = 8192
        var worst = 0.0, at = 0.0
        for centre in stride(from: 0.3, through: 5.8, by: 0.1) where abs(centre - 4) > 0.25 {
            let c = Int(centre * rate)
            let f = Signals.frequency(y[(c - w / 2)..<(c + w / 2)], sampleRate: rate)
            let e = abs(Signals.cents(f, 440 * pow(2, lane.value(at: centre, scale: .linear) / 1200)))
            if e > worst { worst = e; at = centre }
        }
        #expect(worst < 1, "\(worst) cents off the lane at \(at) s")
    }

    /// A tempo lane beyond the streaming shifter's tempos (0.25…4) is refused by name.
    @Test func aTempoLaneOutsideTheLiveRangeIsRefused() throws {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [[Float](repeating: 0, count: 48_000)], sampleRate: 48_000), name: "t")
        t.automation[.tempo] = AutomationLane([(0, 1), (0.5, 8)])
        do {
            _ = try engine.makeKernel()
            Issue.record("a tempo lane up to 8 was not refused")
        } catch {
            #expect(error.description.contains("t time-pitch tempo lane: a moving tempo lane on a track whose fastest tempo is 8 is not rendered"),
                    "\(error.description)")
        }
    }
}
