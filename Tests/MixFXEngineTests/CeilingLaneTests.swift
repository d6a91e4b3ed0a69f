import Foundation
import Testing
import MixFX
import TestSupport

/// The limiter's ceiling lane (issue #33), offline: every frame's true peak stays under the
/// lane's ceiling there, the gain moves to a new ceiling with the limiter's own attack (a
/// straight ramp over the look-ahead: no click), the output does not depend on the block size,
/// and a constant lane is the static ceiling's bytes.
@Suite struct CeilingLaneTests {
    static let rate = 48_000

    /// `x` through a stage with `settings` and `lane`, in blocks of `block`.
    func run(_ x: [[Float]], settings: LimiterSettings, lane: AutomationLane?, block: Int = 1024) -> [[Float]] {
        let spec = ProcessSpec(sampleRate: Double(Self.rate), maximumFrameCount: 4096, channelCount: x.count)
        let stage = OutputStage(spec, limiter: settings, ceilingLane: lane)
        let buffer = AudioBuffer(channelCount: x.count, capacityFrames: 4096)
        var position = 0
        var out = [[Float]](repeating: [], count: x.count)
        while true {
            let (b, n) = stage.render(frameCount: block) { (asked: Int) -> (AudioBuffer, Int) in
                let m = min(asked, x[0].count - position)
                for c in 0..<x.count { x[c].withUnsafeBufferPointer { buffer.channel(c).update(from: $0.baseAddress! + position, count: m) } }
                position += m
                return (buffer, m)
            }
            if n == 0 { break }
            for c in 0..<x.count { out[c] += UnsafeBufferPointer(start: b.channel(c), count: n) }
        }
        return out
    }

    /// Loud stereo noise (peaks near +6 dBFS) under a lane 0 → step −12 at 0.5 s → linear to −3
    /// at 1.5 s → step −20 at 2 s: the output's true peak at every frame (4× oversampled, the
    /// detector's stretch (n − D − 1, n − D]) is at most the lane's ceiling at n − D (+0.01 dB).
    @Test func theTruePeakStaysUnderTheLaneEverywhere() throws {
        let n = 3 * Self.rate
        let x = [Signals.noise(frames: n, amplitude: 2, seed: 21), Signals.noise(frames: n, amplitude: 2, seed: 22)]
        let lane = AutomationLane([.init(seconds: 0, value: 0, curve: .step), .init(seconds: 0.5, value: -12, curve: .linear),
                                   .init(seconds: 1.5, value: -3, curve: .step), .init(seconds: 2, value: -20)])
        let y = run(x, settings: LimiterSettings(ceilingDBTP: 0), lane: lane)
        #expect(y[0].count == n)
        var meter = TruePeakMeter(channelCount: 2, maximumFrameCount: n)
        defer { meter.deallocate() }
        var peaks = [Float](repeating: 0, count: n)
        y[0].withUnsafeBufferPointer { l in
            y[1].withUnsafeBufferPointer { r in
                peaks.withUnsafeMutableBufferPointer { p in
                    meter.framePeaks({ $0 == 0 ? l.baseAddress! : r.baseAddress! }, frameCount: n, into: p.baseAddress!)
                }
            }
        }
        let d = TruePeakMeter.detectorDelayFrames
        var worst = -Double.infinity, at = 0
        for i in d..<n {
            let over = 20 * log10(Double(peaks[i])) - lane.value(at: Double(i - d) / Double(Self.rate), scale: .decibels)
            if over > worst { worst = over; at = i }
        }
        #expect(worst <= 0.01, "the true peak is \(worst) dB over the lane at frame \(at)")
        // (and the limiter works: near the ceiling somewhere in each part)
        #expect(worst > -1)
        // block sizes: the same bytes
        #expect(run(x, settings: LimiterSettings(ceilingDBTP: 0), lane: lane, block: 97) == y)
    }

    /// A constant 0.5 under a ceiling that steps from 0 to −12 dBTP at 0.5 s and back at 1 s:
    /// the gain g = y/0.5 is exactly 1 before the step, moves at most (1 − g_min)/L per frame
    /// going down (the look-ahead's ramp, L = 5 ms: 0.0021, where a click would be 0.5) and
    /// never faster coming back (the release: 40 ms, and the slow envelope's 800 ms), and holds
    /// the ceiling after the step (g = 10^(−12/20)/0.5 = 0.502).
    @Test func aSteppingCeilingDoesNotClick() throws {
        let n = 3 * Self.rate
        let level = Float(0.5)
        let x = [[Float](repeating: level, count: n)]
        let lane = AutomationLane([.init(seconds: 0, value: 0, curve: .step), .init(seconds: 0.5, value: -12, curve: .step),
                                   .init(seconds: 1, value: 0)])
        let y = run(x, settings: LimiterSettings(ceilingDBTP: 0), lane: lane)[0]
        let g = y.map { Double($0) / Double(level) }
        let low = pow(10, -12.0 / 20) / Double(level), l = 0.005 * Double(Self.rate)
        var steepest = 0.0
        for i in 1..<n { steepest = max(steepest, abs(g[i] - g[i - 1])) }
        #expect(steepest <= (1 - low) / l * 1.001, "the gain jumps by \(steepest) in one frame")
        #expect(g[..<(Self.rate / 2 - 256)].allSatisfy { $0 == 1 })
        #expect(abs(g[Self.rate * 3 / 4] - low) < 1e-4, "\(g[Self.rate * 3 / 4])")
        // coming back: never down again, and most of the way by the end (the slow envelope,
        // τ = 800 ms, still holds about 0.5 dB)
        #expect(zip(g[(Self.rate + 256)...], g[(Self.rate + 257)...]).allSatisfy { $0.0 <= $0.1 })
        #expect(g[n - 1] > 0.93 && g[n - 1] < 1, "\(g[n - 1])")
    }

    /// A lane of one value renders the static ceiling's bytes, and the engine takes ceiling
    /// lanes now (the node's settings start at the lane's first value).
    @Test func aConstantCeilingLaneIsTheStaticCeiling() throws {
        let x = [Signals.noise(frames: Self.rate, amplitude: 1.5, seed: 5)]
        let reference = run(x, settings: LimiterSettings(ceilingDBTP: -3), lane: nil)
        #expect(run(x, settings: LimiterSettings(ceilingDBTP: -3), lane: AutomationLane([(0, -3), (1, -3)])) == reference)
        #expect(run(x, settings: LimiterSettings(ceilingDBTP: -3), lane: AutomationLane([(0, -3), (1, -4)])) != reference)
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [x[0]], sampleRate: Self.rate))
        engine.masterLimiter = LimiterNode(ceilingDBTP: -1)
        try engine.automate(.limiterCeilingDBTP, AutomationLane([(0, -6), (0.5, -2)]))
        _ = try engine.makeKernel()
        #expect(engine.masterLimiter?.settings.ceilingDBTP == -6)
    }

    /// Through `OfflineRenderer` (the engine's lane reaches the render's output stage): a
    /// ceiling stepping from −1 to −10 dBTP at 0.5 s leaves samples above −10 dBFS before it
    /// and none after.
    @Test func anOfflineRenderFollowsTheLane() throws {
        let dir = TempDir("mixfx-ceiling-lane")
        defer { dir.remove() }
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: Self.rate, amplitude: 1, seed: 8)], sampleRate: Self.rate))
        engine.masterLimiter = LimiterNode(ceilingDBTP: -1)
        try engine.automate(.limiterCeilingDBTP, AutomationLane([.init(seconds: 0, value: -1, curve: .step), .init(seconds: 0.5, value: -10)]))
        let out = dir.file("out.wav")
        _ = try OfflineRenderer(outputPath: out, sampleFormat: .f32).render(engine)
        let (y, format) = try AudioFiles.read(out)
        #expect(format.frameCount == Self.rate)
        let limit = Float(pow(10, -10.0 / 20))
        #expect(y[0][..<(Self.rate / 2 - 300)].contains { abs($0) > limit * 1.5 })
        #expect(y[0][(Self.rate / 2)...].allSatisfy { abs($0) <= limit })
    }

    /// Live (`mixfx play`), the stage reads the lane at the mix's timeline frames: after a seek
    /// (`reset(timelineFrame:)`) from the seek's frame, and looping (`loopFrames`) from the
    /// lane's start again at each pass. Loud noise between silences, so the limiter is at rest
    /// at the seek's frame and at the seam: the output from a seek to 0.2 s is the whole run's
    /// from there and the second pass of a loop is the first, bit for bit (a lane read from the
    /// wrong frame gives other ceilings: checked against a stage that is not told).
    @Test func aLiveStageReadsTheLaneAtTheSeekAndEachPass() throws {
        let n = Self.rate, quiet = Self.rate / 5
        var x = [Signals.noise(frames: n, amplitude: 2, seed: 31)]
        for i in 0..<n where i < 2 * quiet || i >= n - quiet { x[0][i] = 0 }
        let lane = AutomationLane([(0, -1), (0.5, -12), (1, -2)])
        // (releases short enough that the silences bring the limiter back to rest)
        let settings = LimiterSettings(ceilingDBTP: 0, fastReleaseMs: 5, slowReleaseMs: 10)
        let whole = run(x, settings: settings, lane: lane)[0]
        // a seek to frame `quiet` (still silence): the rest of the run
        func stage(from first: Int, passes: Int, told: Bool) -> [Float] {
            let spec = ProcessSpec(sampleRate: Double(Self.rate), maximumFrameCount: 1024, channelCount: 1)
            let stage = OutputStage(spec, limiter: settings, ceilingLane: lane)
            if passes > 1 && told { stage.loopFrames = n }
            stage.reset(timelineFrame: told ? first : 0)
            let input = Array(x[0][first...]) + (1..<max(1, passes)).flatMap { _ in x[0] }
            let buffer = AudioBuffer(channelCount: 1, capacityFrames: 1024)
            var position = 0, out: [Float] = []
            while true {
                let (b, got) = stage.render(frameCount: 700) { (asked: Int) -> (AudioBuffer, Int) in
                    let m = min(asked, input.count - position)
                    input.withUnsafeBufferPointer { buffer.channel(0).update(from: $0.baseAddress! + position, count: m) }
                    position += m
                    return (buffer, m)
                }
                if got == 0 { break }
                out += UnsafeBufferPointer(start: b.channel(0), count: got)
            }
            return out
        }
        func largestDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Float {
            a.count == b.count ? zip(a, b).map { abs($0 - $1) }.max() ?? 0 : .infinity
        }
        let seeked = stage(from: quiet, passes: 1, told: true)
        #expect(largestDifference(seeked[...], whole[quiet...]) == 0, "after a seek the lane is not read from the seek's frame")
        #expect(largestDifference(stage(from: quiet, passes: 1, told: false)[...], whole[quiet...]) > 0.01)
        let looped = stage(from: 0, passes: 2, told: true)
        #expect(looped.count == 2 * n)
        let loopError = largestDifference(looped[n...], whole[...])
        #expect(loopError == 0, "the second pass of a loop differs from the first by \(loopError)")
        #expect(largestDifference(stage(from: 0, passes: 2, told: false)[n...], whole[...]) > 0.1)
    }
}
