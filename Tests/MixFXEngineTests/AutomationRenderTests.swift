import Foundation
import Testing
import MixFX
import TestSupport

/// Lanes in an offline render: gains sample-accurate against their formula, constant lanes the
/// static render's bytes, the output independent of the block size, a pitch sweep following
/// its lane, and what is refused.
@Suite struct AutomationRenderTests {
    /// A volume ramp on a constant signal is the lane's formula at every frame, exactly (mono
    /// mix: gain = Float(volume(t))); a pan ramp is the pan law at every frame's value.
    @Test func gainLanesAreTheirFormulaAtEverySample() throws {
        let n = 48_000
        let x = [Float](repeating: 0.5, count: n)
        let volume = AutomationLane([.init(seconds: 0.1, value: 0.25, curve: .db), .init(seconds: 0.6, value: 2, curve: .linear),
                                     .init(seconds: 0.9, value: 1)])
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        t.automation[.volume] = volume
        let out = try renderAll(engine, block: 777)[0]
        #expect(out.count == n)
        var worst = 0
        for i in 0..<n where out[i] != Float(volume.value(at: Double(i) / 48_000, scale: .linearGain)) * 0.5 { worst += 1 }
        #expect(worst == 0, "\(worst) frames differ from the formula")
        #expect(out[0] == 0.125 && out[n - 1] == 0.5 && abs(out[24_000] - 0.5 * Float(0.25 * pow(8, 0.8))) < 1e-6)

        // pan: a mono track in a stereo mix, constant-power law at each frame's pan
        let pan = AutomationLane([(0, -1), (1, 1)], curve: .scurve)
        let e2 = AudioEngine()
        let m = e2.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        e2.addTrack(source: MemorySource(channels: [[Float](repeating: 0, count: n), [Float](repeating: 0, count: n)], sampleRate: 48_000))
        m.automation[.pan] = pan
        let st = try renderAll(e2, block: 1000)
        var off = 0
        for i in stride(from: 0, to: n, by: 1) {
            let g = PanLaw.monoGains(pan: pan.value(at: Double(i) / 48_000, scale: .linear))
            if st[0][i] != Float(g.left) * 0.5 || st[1][i] != Float(g.right) * 0.5 { off += 1 }
        }
        #expect(off == 0, "\(off) frames off the pan law")
    }

    /// The session every byte test renders: two tracks (mono and stereo noise), EQ, pitch,
    /// volume, pan, master volume.
    private func session(static values: Bool, lanes: (Track, Track, AudioEngine) -> Void = { _, _, _ in }) -> AudioEngine {
        let n = 48_000 * 2
        let engine = AudioEngine()
        let a = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: n, amplitude: 0.3, seed: 11)], sampleRate: 48_000))
        let b = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: n, amplitude: 0.2, seed: 12),
                                                                Signals.noise(frames: n, amplitude: 0.2, seed: 13)], sampleRate: 48_000))
        if values {
            a.player.volume = 0.7; a.player.pan = -0.3; a.eq.bassGain.value = 5; a.eq.trebleFrequency.value = 3000
            a.timePitch.pitchCents = 300
            b.player.pan = 0.4; b.eq.globalGain.value = -2; b.timePitch.pitchCents = -150
            engine.mainMixer.outputVolume = 0.8
        }
        lanes(a, b, engine)
        return engine
    }

    /// Lanes that do not move (one breakpoint, or breakpoints of one value) render exactly the
    /// static settings' samples.
    @Test func constantLanesRenderTheStaticBytes() throws {
        let reference = try renderAll(session(static: true), block: 1024)
        let laned = try renderAll(session(static: false) { a, b, engine in
            a.automation[.volume] = AutomationLane([(0.5, 0.7)])
            a.automation[.pan] = AutomationLane([(0, -0.3), (1, -0.3), (1.5, -0.3)])
            a.automation[.bassGainDB] = AutomationLane([(0, 5), (2, 5)], curve: .scurve)
            a.automation[.trebleFrequencyHz] = AutomationLane([(0.2, 3000), (0.4, 3000)], curve: .exp)
            a.automation[.pitchCents] = AutomationLane([(1, 300)])
            b.automation[.pan] = AutomationLane([(0, 0.4)])
            b.automation[.eqGlobalGainDB] = AutomationLane([(0, -2), (1, -2)])
            b.automation[.pitchCents] = AutomationLane([(0, -150), (3, -150)])
            engine.mainMixer.outputVolumeParameter.automation = AutomationLane([(0, 0.8), (9, 0.8)])
        }, block: 1024)
        #expect(laned == reference)
        // (and a lane that moves does change them: the comparison can fail)
        let moved = try renderAll(session(static: true) { a, _, _ in a.automation[.volume] = AutomationLane([(0, 0.7), (2, 0.71)]) })
        #expect(moved != reference)
    }

    /// Moving lanes on every kind of parameter render the same samples in blocks of 64, 2048
    /// and 1000 frames, on one thread or the pipeline's.
    @Test func movingLanesDoNotDependOnTheBlockSize() throws {
        func render(_ block: Int, parallel: Bool) throws -> [[Float]] {
            let engine = session(static: true) { a, b, engine in
                a.automation[.volume] = AutomationLane([(0.1, 0.2), (1.2, 1.5)], curve: .db)
                a.automation[.pitchCents] = AutomationLane([.init(seconds: 0, value: 300, curve: .linear), .init(seconds: 0.8, value: -400, curve: .step),
                                                           .init(seconds: 1.3, value: 100)])
                a.automation[.trebleFrequencyHz] = AutomationLane([(0, 1000), (1.9, 9000)], curve: .exp)
                b.automation[.pan] = AutomationLane([(0, -1), (2, 1)], curve: .scurve)
                b.automation[.bassGainDB] = AutomationLane([.init(seconds: 0.3, value: -9, curve: .step), .init(seconds: 0.7, value: 9)])
                engine.mainMixer.outputVolumeParameter.automation = AutomationLane([(0, 1), (2, 0.5)])
            }
            let kernel = try engine.makeKernel(maximumFrameCount: block)
            kernel.parallelTracks = parallel
            try kernel.start()
            var out = [[Float]](repeating: [], count: kernel.layout.channelCount)
            while true {
                let n = kernel.render(frameCount: block)
                if n == 0 { break }
                for c in 0..<out.count { out[c] += UnsafeBufferPointer(start: kernel.output.channel(c), count: n) }
            }
            return out
        }
        let reference = try render(2048, parallel: false)
        #expect(reference[0].count == 96_000)
        #expect(try render(64, parallel: false) == reference)
        #expect(try render(1000, parallel: true) == reference)
        #expect(try render(2048, parallel: true) == reference)
    }

    /// A sine swept from 0 to +200 cents over 4 s by a pitch lane: its frequency follows the
    /// lane within 1 cent wherever the glide has settled (measured over 0.17 s windows, away from
    /// the start and the corner at 4 s), and holds +200 after.
    @Test func aPitchSweepFollowsItsLane() throws {
        let rate = 48_000.0, n = 6 * 48_000
        let x = Signals.sine(frequencyHz: 440, sampleRate: rate, frames: n, amplitude: 0.5)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        let lane = AutomationLane([(0, 0), (4, 200)])
        t.automation[.pitchCents] = lane
        let y = try renderAll(engine, block: 1024)[0]
        #expect(y.count == n)
        let w = 8192
        var worst = 0.0, at = 0.0
        for centre in stride(from: 0.3, through: 5.5, by: 0.1) where abs(centre - 4) > 0.25 {
            let c = Int(centre * rate)
            let f = Signals.frequency(y[(c - w / 2)..<(c + w / 2)], sampleRate: rate)
            let expected = 440 * pow(2, lane.value(at: centre, scale: .linear) / 1200)
            let e = abs(Signals.cents(f, expected))
            if e > worst { worst = e; at = centre }
        }
        #expect(worst < 1, "\(worst) cents off the lane at \(at) s")
    }

    /// What this version does not render is refused by name: a moving pitch or tempo lane on a track at tempos beyond the live range (offline and live), a lane on a switch.
    @Test func unrenderedLanesAreRefused() throws {
        func error(_ make: (AudioEngine, Track) -> Void, mode: RenderMode = .offline) -> String? {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [[0, 0, 0]], sampleRate: 48_000), name: "t")
            make(engine, t)
            do { _ = try engine.makeKernel(mode: mode); return nil } catch { return error.description }
        }
        // live: every lane plays (with a tempo, on the timeline: `LiveTimelineTests`)
        #expect(error({ _, t in t.automation[.volume] = AutomationLane([(0, 1), (1, 0)]) }, mode: .live) == nil)
        #expect(error({ _, t in t.automation[.pitchCents] = AutomationLane([(0, 0), (1, 200)]); t.automation[.bassGainDB] = AutomationLane([(0, 0), (1, 6)]) },
                      mode: .live) == nil)
        #expect(error({ _, t in t.automation[.tempo] = AutomationLane([(0, 1), (1, 2)]) }, mode: .live) == nil)
        // (a lane that reaches the live range's ends exactly, through the map's rounding)
        #expect(error({ _, t in t.automation[.tempo] = AutomationLane([(0, 0.25), (0.3, 4)]) }, mode: .live) == nil)
        #expect(error({ _, t in t.automation[.tempo] = AutomationLane([(0, 4), (0.2, 0.5), (0.7, 4)]) }) == nil)
        #expect(error({ _, t in t.automation[.tempo] = AutomationLane([(0, 1), (1, 5)]) }, mode: .live)?
                    .contains("a moving tempo lane on a track whose fastest tempo is 5 is not rendered") == true)
        #expect(error({ e, _ in e.masterLimiter = LimiterNode(); e.masterLimiter?.ceilingParameter.automation = AutomationLane([(0, -1), (1, -3)]) },
                      mode: .live) == nil)
        #expect(error({ _, t in t.timePitch.rate = 0.5; t.automation[.volume] = AutomationLane([(0, 1), (1, 0)]) }, mode: .live) == nil)
        #expect(error({ _, t in t.automation[.tempo] = AutomationLane([(0, 1), (1, 2)]) }) == nil)
        #expect(error({ e, _ in e.masterLimiter = LimiterNode(); e.masterLimiter?.ceilingParameter.automation = AutomationLane([(0, -1), (1, -3)]) }) == nil)
        #expect(error({ _, t in t.timePitch.rate = 0.5; t.automation[.pitchCents] = AutomationLane([(0, 1), (1, 2)]) }) == nil)
        #expect(error({ _, t in t.timePitch.rate = 8; t.automation[.pitchCents] = AutomationLane([(0, 1), (1, 2)]) })?
                    .contains("a moving pitch lane on a track whose slowest tempo is 8 is not rendered") == true)
        #expect(error({ _, t in t.automation[.preserveFormants] = AutomationLane([(0, 1)]) })?.contains("formant cannot be automated") == true)
        #expect(error({ _, t in t.automation[.mute] = AutomationLane([(0, 1), (1, 0)], curve: .step) }, mode: .live) == nil)
        #expect(error({ _, t in t.automation[.pitchCents] = AutomationLane([(0, 1), (1, 5000)]) })?
                    .contains("t time-pitch pitch lane, breakpoint 2: 5000 is above 2400") == true)
        #expect(error({ _, t in t.automation[.pitchCents] = AutomationLane([(0, 1), (1, 5)]) }) == nil)
    }
}

/// The render thread allocates nothing while lanes move: `mixfx-bench --automation-allocations`
/// (moving volume, pan, EQ, pitch and master lanes, one thread) under the per-thread allocation
/// counter (Tests/alsa/alloccount.c), counting every `RenderKernel.render` call after the
/// first; the first allocates what the same session without lanes does.
@Suite struct AutomationAllocationTests {
    @Test(.enabled(if: which("gcc") != nil, "gcc is not installed (apt-get install gcc)"),
          .disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func movingLanesAllocateNothingOnTheRenderThread() throws {
        let dir = TempDir("mixfx-automation")
        defer { dir.remove() }
        let bench = URL(fileURLWithPath: MixFXBinary.path).deletingLastPathComponent().appendingPathComponent("mixfx-bench").path
        try #require(FileManager.default.isExecutableFile(atPath: bench), "mixfx-bench is not built (swift build -c release)")
        let counter = try #require(ALSARig.allocationCounterLibrary(in: dir.path), "the allocation counter did not build")
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = counter
        let r = try runProcess(bench, ["--automation-allocations"], environment: env)
        let s = try runProcess(bench, ["--automation-allocations", "static"], environment: env)
        // (and with mute and solo lanes switching every 0.1 s: `MuteLanes`)
        let m = try runProcess(bench, ["--automation-allocations", "mute"], environment: env)
        #expect(r.status == 0 && s.status == 0 && m.status == 0, "\(r.stderr)\(s.stderr)\(m.stderr)")
        #expect(r.stdout.hasSuffix("render_allocations 0\n"), "\(r.stdout)")
        #expect(m.stdout.hasSuffix("render_allocations 0\n"), "\(m.stdout)")
        // the first block allocates what the same session without lanes does (the kernel's own
        // first use, not the lanes')
        #expect(r.stdout.hasPrefix("first_block_allocations ") && r.stdout.split(separator: "\n").first == s.stdout.split(separator: "\n").first,
                "lanes: \(r.stdout) static: \(s.stdout)")
    }
}
