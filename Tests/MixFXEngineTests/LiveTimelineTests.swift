import Foundation
import Testing
import MixFX
import TestSupport

/// A live session whose lanes play at a tempo plays on the mix's timeline (issue #33,
/// `RenderKernel.playsOnTimeline`): tempo lanes, time maps and lanes on tracks at a tempo, live
/// as offline, from the start and after a seek (and lanes at tempo 1, in song time, after a seek).
@Suite struct LiveTimelineTests {
    static let rate = 48_000

    /// Two tracks: clicks under `make`'s lanes, and noise at 44.1 kHz (resampled).
    static func session(_ make: (Track, Track) -> Void) -> AudioEngine {
        let engine = AudioEngine()
        let onsets = Array(stride(from: 4_000, to: 140_000, by: 9_000))
        var x = Signals.noise(frames: 144_000, amplitude: 0.05, seed: 7)
        for o in onsets { x[o] = 0.9 }
        let a = engine.addTrack(source: MemorySource(channels: [x], sampleRate: rate), name: "a")
        let b = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 100_000, amplitude: 0.2, seed: 8),
                                                                Signals.noise(frames: 100_000, amplitude: 0.2, seed: 9)], sampleRate: 44_100), name: "b")
        make(a, b)
        return engine
    }

    /// `frames` frames of `kernel` from where it is, in blocks of `block`.
    static func render(_ kernel: RenderKernel, frames: Int, block: Int) -> [[Float]] {
        var out = [[Float]](repeating: [], count: kernel.layout.channelCount)
        while out[0].count < frames {
            let n = kernel.render(frameCount: min(block, frames - out[0].count))
            if n == 0 { break }
            for c in 0..<out.count { out[c] += UnsafeBufferPointer(start: kernel.output.channel(c), count: n) }
        }
        return out
    }

    static let sessions: [(String, @Sendable (Track, Track) -> Void)] = [
        ("a tempo lane", { a, b in
            a.automation[.tempo] = AutomationLane([(0, 0.8), (1.2, 1.4)])
            b.automation[.volume] = AutomationLane([(0, 1), (1.5, 0.2)])
        }),
        ("a steady tempo with pitch lanes", { a, b in
            a.timePitch.rate = 1.25
            b.timePitch.rate = 1.25
            a.automation[.pitchCents] = AutomationLane([(0, 0), (1, 300)])
            b.automation[.pitchCents] = AutomationLane([(0.5, -200), (1.5, 100)])
        }),
        // (in song time: a seek's pitch map and EQ lanes start at the seek's frame)
        ("a pitch lane and an EQ lane at tempo 1", { a, _ in
            a.automation[.pitchCents] = AutomationLane([(0, 0), (1, 300)])
            a.automation[.trebleGainDB] = AutomationLane([(0, -6), (2, 6)])
        }),
        ("a time map's lane and an EQ lane before the shifter", { a, _ in
            let map = try? TimeMap(parsing: "48000 60000\n144000 130000\n", name: "map")
            a.automation[.tempo] = try? map?.tempoLane(sampleRate: rate, frameCount: 144_000, placement: Placement())
            a.automation[.bassGainDB] = AutomationLane([(0, 0), (2, 9)])
        }),
    ]

    /// The live kernel renders what the offline one does (the same streaming shifters on the
    /// same maps), at other block sizes; and the session does play on the
    /// timeline (its length is the offline one, not the tracks' own).
    @Test(arguments: sessions.indices)
    func liveIsTheOfflineRender(_ i: Int) throws {
        let engine = Self.session(Self.sessions[i].1)
        let offline = try engine.makeKernel(maximumFrameCount: 1000, mode: .offline)
        let live = try engine.makeKernel(maximumFrameCount: 512, mode: .live)
        #expect(live.layout.frameCount == offline.layout.frameCount, "\(Self.sessions[i].0)")
        #expect(!live.playsOnTimeline || offline.layout.frameCount != 144_000, "\(Self.sessions[i].0): the lanes' tempo does not set the length")
        // (one after the other: they read the same sources)
        let n = offline.layout.frameCount
        try offline.start()
        let x = Self.render(offline, frames: n + 1, block: 1000)
        try live.start()
        let y = Self.render(live, frames: n + 1, block: 512)
        #expect(x[0].count == n && y[0].count == n, "\(Self.sessions[i].0)")
        // (float sums in another order: within −120 dB; what reaches a 16-bit device is the
        // same, `PlayLanesTests`)
        let d = Self.difference(x, y)
        #expect(d.worst < 1e-6, "\(Self.sessions[i].0): live differs from offline at frame \(d.frame ?? -1) by up to \(d.worst)")
    }

    /// Where two renders part (nil: nowhere), and by how much at most.
    static func difference(_ x: [[Float]], _ y: [[Float]]) -> (frame: Int?, worst: Float) {
        let n = min(x[0].count, y[0].count)
        let first = (0..<n).first { x[0][$0] != y[0][$0] || x[1][$0] != y[1][$0] }
        let worst = (0..<n).map { max(abs(x[0][$0] - y[0][$0]), abs(x[1][$0] - y[1][$0])) }.max() ?? 0
        return (first, worst)
    }

    /// A seek: the live kernel's own (`seek(toFrame:)`) renders what the offline one does from
    /// there (each track's input placed by its tempo map, the lanes read on the timeline), and
    /// the seek the live player makes (each source moved to `sourceFrame(track:restartingAt:)`,
    /// then `restartSignal`) is the live kernel's, sample for sample, from the target on.
    @Test(arguments: sessions.indices)
    func aSeekLandsOnTheTimeline(_ i: Int) throws {
        let name = Self.sessions[i].0
        let engine = Self.session(Self.sessions[i].1)
        let offline = try engine.makeKernel(maximumFrameCount: 1000, mode: .offline)
        let target = 61_111, count = 20_000
        try offline.seek(toFrame: target)
        let x = Self.render(offline, frames: count, block: 1000)
        let sought = try engine.makeKernel(maximumFrameCount: 512, mode: .live)
        try sought.start()
        _ = Self.render(sought, frames: 10_000, block: 512)
        try sought.seek(toFrame: target)
        let y = Self.render(sought, frames: count, block: 512)
        let d = Self.difference(x, y)
        #expect(d.worst < 1e-6, "\(name): after the seek, live differs from offline at frame \(target + (d.frame ?? 0)) by up to \(d.worst)")
        let restarted = try engine.makeKernel(maximumFrameCount: 512, mode: .live)
        try restarted.start()
        _ = Self.render(restarted, frames: 10_000, block: 512)
        for (k, t) in restarted.layout.tracks.enumerated() {
            try t.player.source.seek(toFrame: restarted.sourceFrame(track: k, restartingAt: target))
        }
        restarted.restartSignal(atFrame: target)
        _ = Self.render(restarted, frames: target - restarted.framesRendered, block: 512)
        #expect(restarted.framesRendered == target)
        let z = Self.render(restarted, frames: count, block: 512)
        let e = Self.difference(y, z)
        #expect(e.frame == nil, "\(name): the player's seek differs from the kernel's at frame \(target + (e.frame ?? 0)) by up to \(e.worst)")
        // (on the timeline it does move: the source frame is not the timeline frame)
        #expect(!restarted.playsOnTimeline || abs(restarted.sourceFrame(track: 0, restartingAt: target) - target) > 1_000)
    }

    /// After a seek at a steady tempo, a pitch lane's step lands at its timeline time (the
    /// lane's map is read at the input's frames, from where the tempo has the input at the
    /// seek's frame): a 440 Hz sine at tempo 1.25 steps an octave up at 1 s; seeking to 0.6 s,
    /// it passes 660 Hz (in the vocoder's glide) within 10 ms of where it does from the start,
    /// offline and live.
    @Test(arguments: [RenderMode.offline, .live])
    func aPitchStepAfterASeekLandsAtItsTime(_ mode: RenderMode) throws {
        let rate = Double(Self.rate)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [Signals.sine(frequencyHz: 440, sampleRate: rate, frames: 3 * Self.rate)], sampleRate: Self.rate))
        t.timePitch.rate = 1.25
        t.automation[.pitchCents] = AutomationLane([(0, 0), (1, 1200)], curve: .step)
        func crossing(from start: Int) throws -> Int? {
            let kernel = try engine.makeKernel(maximumFrameCount: 512, mode: mode)
            try kernel.seek(toFrame: start)
            let y = Self.render(kernel, frames: 67_200 - start, block: 512)[0]
            let w = 1024
            return stride(from: w / 2, to: y.count - w / 2, by: 48).first { c in
                Signals.frequency(y[(c - w / 2)..<(c + w / 2)], sampleRate: rate) > 660
            }.map { $0 + start }
        }
        // (from the start, the step's glide crosses 660 Hz about 15 ms after 1 s)
        let fromStart = try #require(try crossing(from: 0))
        let afterSeek = try crossing(from: 28_800)
        #expect(abs(fromStart - 48_000) <= 960, "\(mode): from the start the step at \(fromStart)")
        #expect(afterSeek.map { abs($0 - fromStart) <= 480 } == true, "\(mode): after the seek the step at frame \(afterSeek ?? -1) of the timeline, from the start at \(fromStart)")
    }

    /// A session without lanes, or with lanes at tempo 1 only, plays in song time (its tempos
    /// may change by hand); a tempo lane beyond what live playback takes is refused by name.
    @Test func whichSessionsPlayOnTheTimeline() throws {
        func kernel(_ make: (Track) -> Void) throws -> RenderKernel {
            let engine = AudioEngine()
            make(engine.addTrack(source: MemorySource(channels: [[Float](repeating: 0.1, count: 4_800)], sampleRate: Self.rate), name: "t"))
            return try engine.makeKernel(mode: .live)
        }
        #expect(try !kernel { $0.timePitch.rate = 1.5 }.playsOnTimeline)
        #expect(try !kernel { $0.automation[.volume] = AutomationLane([(0, 1), (1, 0)]) }.playsOnTimeline)
        #expect(try kernel { $0.timePitch.rate = 1.5; $0.automation[.volume] = AutomationLane([(0, 1), (1, 0)]) }.playsOnTimeline)
        #expect(try kernel { $0.automation[.tempo] = AutomationLane([(0, 1.5)]) }.playsOnTimeline)
        // (a constant lane at 1 is tempo 1)
        #expect(try !kernel { $0.automation[.tempo] = AutomationLane([(0, 1), (1, 1)]); $0.automation[.volume] = AutomationLane([(0, 1), (1, 0)]) }.playsOnTimeline)
        #expect(throws: EngineError.self) { try kernel { $0.automation[.tempo] = AutomationLane([(0, 1), (0.05, 6)]) } }
        do { _ = try kernel { $0.automation[.tempo] = AutomationLane([(0, 1), (0.05, 6)]) } } catch {
            #expect("\(error)".contains("a moving tempo lane on a track whose fastest tempo is 6 is not rendered"), "\(error)")
        }
    }
}
