import Foundation
import MixFX
import Synchronization

/// Automation lanes: what a lane on every track costs on the band, and whether the render
/// thread allocates while lanes move.
enum AutomationBench {
    /// `mixfx-bench --automation BANDDIR [RUNS]`: the band (bass +4 dB, pitch +200 cents, s16,
    /// as Benchmarks/run.sh renders it), static and with a volume lane on every track
    /// (linear from 1 to 0.5 over the minute), alternated RUNS times (default 5); prints the
    /// process CPU seconds of each and the ratio of the medians. `tempo` (a third argument):
    /// a tempo lane on every track instead (linear from 0.9 to 1.1 over the minute, about
    /// the static length), against the static render at tempo 1; `pitch`: a pitch lane on
    /// every track (linear from +100 to +300 cents), the same streaming path a tempo lane takes;
    /// `pitch+volume`: both the pitch and the volume lane (what `pitch` rendered until
    /// 2026-12-03); `tempo-steady`: the tempo lane against the static render at a steady tempo
    /// of 1.0001 (the steady-tempo path at the lane's mean tempo, where tempo 1 skips it);
    /// `mute`: a mute lane on every track (muted from 20 to 20.5 s and from 40 to 40.2 s, each
    /// change a 10 ms ramp); `tempo-ends`: the tempo lane against the static renders at its two
    /// end tempos, 0.9 and 1.1 (the mean of the two: the same work per output frame, about the
    /// lane's output length).
    static func cost(band: String, runs: Int, kind: String = "volume") throws {
        let tempo = kind.hasPrefix("tempo")
        let paths = (1...4).map { "\(band)/track\($0).wav" }
        let work = try workDirectory("mixfx-automation-bench")
        defer { try? FileManager.default.removeItem(atPath: work) }
        func render(lanes: Bool) throws -> Double {
            guard lanes || kind != "tempo-ends" else {
                return (try renderOnce(lanes: false, steadyTempo: 0.9) + renderOnce(lanes: false, steadyTempo: 1.1)) / 2
            }
            return try renderOnce(lanes: lanes, steadyTempo: kind == "tempo-steady" ? 1.0001 : 1)
        }
        func renderOnce(lanes: Bool, steadyTempo: Double) throws -> Double {
            let engine = AudioEngine()
            for p in paths {
                let t = engine.addTrack(source: try SoundFileReader(path: p))
                t.eq.bassGain.value = 4
                t.timePitch.pitchCents = 200
                if lanes && (kind == "volume" || kind == "pitch+volume") { t.automation[.volume] = AutomationLane([(0, 1), (60, 0.5)]) }
                if lanes && tempo { t.automation[.tempo] = AutomationLane([(0, 0.9), (60, 1.1)]) }
                if !lanes && steadyTempo != 1 { t.timePitch.rate = steadyTempo }
                if lanes && kind == "mute" {
                    t.automation[.mute] = AutomationLane([(0, 0), (20, 1), (20.5, 0), (40, 1), (40.2, 0)], curve: .step)
                }
                if lanes && kind.hasPrefix("pitch") { t.automation[.pitchCents] = AutomationLane([(0, 100), (60, 300)]) }
            }
            var r = OfflineRenderer(outputPath: work + "/out.wav", sampleFormat: .s16)
            r.overwrite = true
            let before = cpuSeconds()
            _ = try r.render(engine)
            return cpuSeconds() - before
        }
        var plain: [Double] = [], laned: [Double] = []
        for _ in 0..<runs {
            plain.append(try render(lanes: false))
            laned.append(try render(lanes: true))
        }
        func median(_ x: [Double]) -> Double { let s = x.sorted(); return s[s.count / 2] }
        print(String(format: "static      CPU s: %@  median %.3f", plain.map { String(format: "%.3f", $0) }.joined(separator: " "), median(plain)))
        print(String(format: "%@ lanes CPU s: %@  median %.3f", kind, laned.map { String(format: "%.3f", $0) }.joined(separator: " "), median(laned)))
        print(String(format: "ratio %.4f", median(laned) / median(plain)))
    }

    /// `mixfx-bench --automation-allocations`: renders two tracks with moving lanes on volume,
    /// pan, the EQ's gain and corner, pitch and the master volume, one thread, counting the
    /// render thread's heap allocations in `RenderKernel.render` with the counter
    /// Tests/alsa/alloccount.c preloaded (LD_PRELOAD). Prints the first block's count and
    /// `render_allocations N`, the rest's (and `no counter` without it); `static`: the same
    /// session without lanes; `tempo`: the lanes and a moving tempo lane; `schedule`: no
    /// lanes, 400 volume and pan events scheduled by another thread while the kernel renders
    /// (`events_scheduled N` counts those the queue took); `mute`: the lanes and a mute lane
    /// and a solo lane switching every 0.1 s (ramps in most blocks).
    static func allocations(mode: String = "lanes") throws {
        typealias Count = @convention(c) () -> UInt64
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mixfx_alloc_count") else {
            print("no counter")
            return
        }
        let count = unsafeBitCast(sym, to: Count.self)
        let n = 48_000 * 3
        let engine = AudioEngine()
        let a = engine.addTrack(source: MemorySource(channels: [(0..<n).map { Float(sin(Double($0) * 0.0577)) * 0.3 }], sampleRate: 48_000))
        let b = engine.addTrack(source: MemorySource(channels: [(0..<n).map { Float(sin(Double($0) * 0.031)) * 0.2 },
                                                                (0..<n).map { Float(sin(Double($0) * 0.047)) * 0.2 }], sampleRate: 48_000))
        if mode == "lanes" || mode == "tempo" || mode == "mute" { laneUp(a, b, engine) }
        if mode == "mute" {
            a.automation[.mute] = AutomationLane((0..<30).map { (Double($0) * 0.1, Double($0 % 2)) }, curve: .step)
            b.automation[.solo] = AutomationLane((0..<20).map { (Double($0) * 0.15 + 0.05, Double($0 % 2)) }, curve: .step)
        }
        if mode == "tempo" { a.automation[.tempo] = AutomationLane([(0, 0.8), (2, 1.25)]) }
        let kernel = try engine.makeKernel(maximumFrameCount: 1000)
        kernel.parallelTracks = false
        try kernel.start()
        let scheduled = Atomic<Int>(0)
        let pusher = mode != "schedule" ? nil : Thread {
            for j in 0..<400 {
                let p = j % 2 == 0 ? a.player.volumeParameter : b.player.panParameter
                for _ in 0..<10_000 {
                    do {
                        try p.schedule(value: j % 2 == 0 ? 0.2 + Double(j % 7) / 10 : Double(j % 5) / 5 - 0.4, atFrame: j * 300, rampFrames: j % 3 * 100)
                        scheduled.add(1, ordering: .relaxed)
                        break
                    } catch { usleep(100) }
                }
            }
        }
        pusher?.start()
        // (per block, into memory taken before the count starts: printing would count, and so
        // would this array, with its type's first use)
        var perBlock = [UInt64](repeating: 0, count: 10_000)
        let before = count()
        var blocks = 0, last = before
        while kernel.render(frameCount: 1000) > 0 {
            // (scheduling: give the other thread time to push while the kernel renders)
            if pusher != nil { usleep(300) }
            let now = count()
            if blocks < perBlock.count { perBlock[blocks] = now - last }
            blocks += 1
            last = count()
        }
        // (the first block's are the offline kernel's own first use, lanes or not: compare
        // with `static`)
        print("first_block_allocations \(perBlock[0])")
        if pusher != nil {
            while !(pusher?.isFinished ?? true) { usleep(1000) }
            print("events_scheduled \(scheduled.load(ordering: .relaxed))")
        }
        print("render_allocations \(perBlock.dropFirst().reduce(0, +))")
    }

    private static func laneUp(_ a: Track, _ b: Track, _ engine: AudioEngine) {
        a.automation[.volume] = AutomationLane([(0, 1), (2, 0.2)], curve: .db)
        a.automation[.pitchCents] = AutomationLane([(0, 0), (2.5, 300)])
        a.automation[.trebleFrequencyHz] = AutomationLane([(0, 2000), (3, 8000)], curve: .exp)
        b.automation[.pan] = AutomationLane([(0, -1), (3, 1)], curve: .scurve)
        b.automation[.bassGainDB] = AutomationLane([(0, -6), (1, 6)])
        engine.mainMixer.outputVolumeParameter.automation = AutomationLane([(0, 0.5), (3, 1)])
    }

    private static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }
}
