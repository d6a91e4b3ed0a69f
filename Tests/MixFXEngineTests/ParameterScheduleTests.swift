import Foundation
import Synchronization
import Testing
import MixFX
import TestSupport

/// `AudioParameter.schedule(value:atFrame:rampFrames:)` (issue #33, AVAudioEngine's
/// `scheduleParameterBlock`): events from several threads land at their frames exactly, ramps
/// are their formula at every frame, offline and live, whatever the blocks; a full queue, a
/// parameter that is not a gain and a bad value are refused; the render thread allocates
/// nothing.
@Suite struct ParameterScheduleTests {
    /// A mono DC track of 1 (so the mix is the gain, exactly): the engine and its track.
    func dcSession(frames: Int = 20_000) -> (AudioEngine, Track) {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [[Float](repeating: 1, count: frames)], sampleRate: 48_000))
        return (engine, t)
    }

    /// The values the documented formula gives for `events` (sorted by frame) from `initial`.
    func expected(_ events: [(frame: Int, ramp: Int, value: Double)], initial: Double, frames: Int) -> [Double] {
        var out = [Double](repeating: initial, count: frames)
        var value = initial, from = initial, to = initial, start = 0, length = 0, next = 0
        for f in 0..<frames {
            while next < events.count && events[next].frame <= f {
                from = value; to = events[next].value; start = f; length = max(1, events[next].ramp)
                next += 1
            }
            if length > 0 {
                let k = f - start + 1
                if k >= length { value = to; length = 0 } else { value = from + (to - from) * Double(k) / Double(length) }
            }
            out[f] = value
        }
        return out
    }

    /// Steps and ramps on the volume, the master volume's ramp on top: every frame is
    /// Float(volume·master) exactly, in blocks of 256 and 1000; the volume parameter holds the
    /// last target after its ramp.
    @Test func scheduledGainsAreExactAtEveryFrame() throws {
        let volumeEvents = [(frame: 1000, ramp: 0, value: 0.5), (frame: 3000, ramp: 100, value: 0.25), (frame: 3050, ramp: 1000, value: 1.5),
                            (frame: 9000, ramp: 1, value: 0.75)]
        let masterEvents = [(frame: 5000, ramp: 2000, value: 2.0)]
        for block in [256, 1000] {
            let (engine, t) = dcSession()
            for e in volumeEvents { try t.player.volumeParameter.schedule(value: e.value, atFrame: e.frame, rampFrames: e.ramp) }
            for e in masterEvents { try engine.mainMixer.outputVolumeParameter.schedule(value: e.value, atFrame: e.frame, rampFrames: e.ramp) }
            let y = try renderAll(engine, block: block)[0]
            let v = expected(volumeEvents, initial: 1, frames: y.count), m = expected(masterEvents, initial: 1, frames: y.count)
            var off = 0, first = -1
            for i in 0..<y.count where y[i] != Float(v[i] * m[i]) {
                off += 1
                if first < 0 { first = i }
            }
            #expect(off == 0, "block \(block): \(off) frames off the schedule, the first at \(first)")
            #expect(y[999] == 1 && y[1000] == 0.5 && y[9000] == 1.5)
            #expect(t.player.volume == 0.75 && engine.mainMixer.outputVolume == 2)
        }
    }

    /// Four threads schedule 60 steps each on one volume at once (frames interleaved): every one
    /// is in the output at its frame.
    @Test func eventsFromSeveralThreadsAllLand() throws {
        let (engine, t) = dcSession(frames: 48_000)
        let parameter = t.player.volumeParameter
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for j in 0..<60 {
                let frame = 500 + (j * 4 + thread) * 150
                do { try parameter.schedule(value: Double(thread + 1) / 8 + Double(j) / 1000, atFrame: frame) } catch { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let y = try renderAll(engine, block: 512)[0]
        var wrong = 0
        for thread in 0..<4 {
            for j in 0..<60 {
                let frame = 500 + (j * 4 + thread) * 150
                if y[frame] != Float(Double(thread + 1) / 8 + Double(j) / 1000) || y[frame + 149] != y[frame] { wrong += 1 }
            }
        }
        #expect(wrong == 0, "\(wrong) of 240 events are not at their frames")
        #expect(y[499] == 1)
    }

    /// A second pass over the same kernel (a render's normalisation or dither pass, a seek
    /// back to 0) plays the events it took again: the same samples.
    @Test func aSecondPassPlaysThemAgain() throws {
        let (engine, t) = dcSession()
        try t.player.volumeParameter.schedule(value: 0.5, atFrame: 3000, rampFrames: 200)
        try t.player.panParameter.schedule(value: -0.5, atFrame: 5000)
        let kernel = try engine.makeKernel(maximumFrameCount: 512)
        func pass() throws -> [Float] {
            try kernel.seek(toFrame: 0)
            var y: [Float] = []
            while true {
                let n = kernel.render(frameCount: 512)
                if n == 0 { break }
                y += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
            }
            return y
        }
        let first = try pass()
        #expect(first[2999] == 1 && first[3199] == 0.5)
        #expect(try pass() == first)
    }

    /// A live kernel applies them at the same frames as an offline one.
    @Test func liveKernelsApplyThemSampleAccurately() throws {
        let events = [(frame: 4000, ramp: 0, value: 0.5), (frame: 6000, ramp: 480, value: 0.2)]
        let (engine, t) = dcSession()
        for e in events { try t.player.volumeParameter.schedule(value: e.value, atFrame: e.frame, rampFrames: e.ramp) }
        let kernel = try engine.makeKernel(maximumFrameCount: 256, mode: .live)
        try kernel.start()
        var y: [Float] = []
        while y.count < 10_000 {
            let n = kernel.render(frameCount: 256)
            y += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
        }
        let v = expected(events, initial: 1, frames: y.count)
        var off = 0
        for i in 2000..<y.count where y[i] != Float(v[i]) { off += 1 }
        #expect(off == 0, "\(off) frames off the schedule live")
        #expect(y[3999] == 1 && y[4000] == 0.5 && y[6479] == 0.2)
    }

    /// What is refused: a full queue (and room again once the render side took them), a
    /// parameter that is not a gain, a value outside the range, a frame below 0.
    @Test func refusals() throws {
        let (engine, t) = dcSession()
        let p = t.player.volumeParameter
        for i in 0..<ParameterEventQueue.capacity { try p.schedule(value: 0.5, atFrame: 10 + i) }
        #expect(throws: ScheduleError.full(parameter: "volume")) { try p.schedule(value: 0.5, atFrame: 999) }
        let kernel = try engine.makeKernel(maximumFrameCount: 256)
        try kernel.start()
        _ = kernel.render(frameCount: 256)
        try p.schedule(value: 0.5, atFrame: 999)
        #expect(throws: ScheduleError.notSchedulable(parameter: "bass")) { try t.eq.bassGain.schedule(value: 3, atFrame: 0) }
        do {
            try p.schedule(value: 17, atFrame: 0)
            Issue.record("17 was taken")
        } catch {
            #expect(error.description == "volume: 17 is above 16 (allowed: \(ParameterID.volume.spec.allowedText))")
        }
        #expect(throws: ScheduleError.invalid(parameter: "pan", problem: "frame -1, ramp 0 (allowed: frames and ramps from 0)")) {
            try t.player.panParameter.schedule(value: 0, atFrame: -1)
        }
    }
}

/// The render thread allocates nothing while scheduled events (pushed by another thread as it
/// renders) and a tempo lane run: `mixfx-bench --automation-allocations schedule|tempo` under
/// the per-thread allocation counter.
@Suite struct ScheduleAllocationTests {
    @Test(.enabled(if: which("gcc") != nil, "gcc is not installed (apt-get install gcc)"),
          .disabled(if: Sanitizer.name != nil, Sanitizer.reason), arguments: ["schedule", "tempo"])
    func nothingIsAllocatedOnTheRenderThread(mode: String) throws {
        let dir = TempDir("mixfx-schedule-alloc")
        defer { dir.remove() }
        let bench = URL(fileURLWithPath: MixFXBinary.path).deletingLastPathComponent().appendingPathComponent("mixfx-bench").path
        try #require(FileManager.default.isExecutableFile(atPath: bench), "mixfx-bench is not built (swift build -c release)")
        let counter = try #require(ALSARig.allocationCounterLibrary(in: dir.path), "the allocation counter did not build")
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = counter
        let r = try runProcess(bench, ["--automation-allocations", mode], environment: env)
        let s = try runProcess(bench, ["--automation-allocations", "static"], environment: env)
        #expect(r.status == 0 && s.status == 0, "\(r.stderr)\(s.stderr)")
        #expect(r.stdout.hasSuffix("render_allocations 0\n"), "\(r.stdout)")
        #expect(r.stdout.contains("events_scheduled 400") || mode != "schedule", "\(r.stdout)")
    }
}
