import Foundation
import Testing
import MixFX
import TestSupport

/// `mixfx play` through real ALSA: the raw file tap for content, a private PulseAudio null sink
/// for real-time pacing and underruns (see Tests/alsa).
@Suite struct PlayTests {
    let dir = TempDir("mixfx-play")

    func json(_ text: String) -> [String: Any] {
        guard let start = text.firstIndex(of: "{"),
              let obj = try? JSONSerialization.jsonObject(with: Data(text[start...].utf8)) as? [String: Any] else { return [:] }
        return obj
    }

    func sine(_ name: String, seconds: Double, frequency: Double = 440, rate: Int = 48_000, amplitude: Float = 0.5) throws -> String {
        let path = dir.file(name)
        let x = Signals.sine(frequencyHz: frequency, sampleRate: Double(rate), frames: Int(seconds * Double(rate)),
                             amplitude: Double(amplitude)).map { ($0 * 32768).rounded() / 32768 }
        try AudioFiles.write([x], to: path, sampleRate: rate)
        return path
    }

    /// A mono noise track (30000 frames at `firstRate`) and a stereo one (40000 frames at
    /// 48 kHz, FLAC).
    func noiseTracks(amplitude: Float, firstRate: Int) throws -> (String, String) {
        let a = dir.file("a.wav"), b = dir.file("b.flac")
        try AudioFiles.write([Signals.noise(frames: 30_000, amplitude: amplitude, seed: 3)], to: a, sampleRate: firstRate)
        try AudioFiles.write([Signals.noise(frames: 40_000, amplitude: amplitude, seed: 4), Signals.noise(frames: 40_000, amplitude: amplitude, seed: 5)],
                             to: b, sampleRate: 48_000)
        return (a, b)
    }

    /// With and without placed tracks (live, the feeder reads the placement). (The render with
    /// `--level-match off`: at a fixed pitch a render keeps the input's level, which live playback
    /// does not, `PitchLevelMatch`; `LevelMatchTests.aStreamingShifterIsTheOfflineShifterWithoutTheMatch`
    /// covers the rest. Play takes the flag and has no match either way.)
    @Test(arguments: [[], ["--track", "1:start=0.2,trim=0.05..,fade-in=0.1", "--track", "2:trim=..0.6,fade-out=0.3,start=0:00.1"]])
    func whatReachesALSAIsBitExactTheOfflineRender(placement: [String]) throws {
        defer { dir.remove() }
        let (a, b) = try noiseTracks(amplitude: 0.2, firstRate: 44_100)
        let settings = ["--bass", "4", "--pitch", "200", "--track", "2:pitch=-700,pan=0.4,treble=-3", "--sample-format", "s16", "--level-match", "off"]
            + placement
        let offline = dir.file("offline.wav")
        // (live output is not dithered; the render that matches it is asked not to dither)
        #expect(try MixFXBinary.run(["render", a, b, "-o", offline, "--quiet", "--dither", "none"] + settings).status == 0)
        let tap = dir.file("tap.raw")
        let r = try MixFXBinary.run(["play", a, b, "--device", "mixfx_tap", "--no-ui", "--json"] + settings,
                                    environment: ALSARig.environment(tap: tap))
        #expect(r.status == 0, "\(r.stderr)")
        let report = json(r.stdout)
        #expect(report["sampleFormat"] as? String == "s16" && report["underruns"] as? Int == 0)
        let captured = try ALSARig.readS16(tap)
        let (ref, format) = try AudioFiles.read(offline)
        #expect(captured.count == format.frameCount * 2)
        var same = captured.count == format.frameCount * 2
        for i in 0..<min(format.frameCount, captured.count / 2) where same {
            same = Int16((ref[0][i] * 32768).rounded()) == captured[2 * i] && Int16((ref[1][i] * 32768).rounded()) == captured[2 * i + 1]
        }
        #expect(same, "the tap differs from the offline render")
    }

    /// `--limit` live is the same output stage as offline on the same mix, its latency pre-rolled
    /// and drained the same way (`OutputStage`): what reaches ALSA is the limited offline render,
    /// bit for bit and frame for frame, on a mix the limiter works on hard. (Before the stage had
    /// one home, the live limiter's output came 5 ms + 23 frames late and lost its tail.)
    @Test func theLiveLimiterIsTheOfflineLimiter() throws {
        defer { dir.remove() }
        let (a, b) = try noiseTracks(amplitude: 0.6, firstRate: 48_000)
        let settings = ["--bass", "6", "--volume", "2", "--limit", "-2", "--sample-format", "s16"]
        let offline = dir.file("offline.wav")
        let o = try MixFXBinary.run(["render", a, b, "-o", offline, "--json", "--dither", "none"] + settings)
        #expect(o.status == 0, "\(o.stderr)")
        #expect(((json(o.stdout)["limiter"] as? [String: Any])?["maximumGainReductionDB"] as? Double ?? 0) > 6, "\(o.stdout)")
        let tap = dir.file("tap.raw")
        let r = try MixFXBinary.run(["play", a, b, "--device", "mixfx_tap", "--no-ui", "--json"] + settings,
                                    environment: ALSARig.environment(tap: tap))
        #expect(r.status == 0, "\(r.stderr)")
        let captured = try ALSARig.readS16(tap)
        let (ref, format) = try AudioFiles.read(offline)
        #expect(captured.count == format.frameCount * 2)
        var same = captured.count == format.frameCount * 2
        for i in 0..<format.frameCount where same {
            same = Int16((ref[0][i] * 32768).rounded()) == captured[2 * i] && Int16((ref[1][i] * 32768).rounded()) == captured[2 * i + 1]
        }
        #expect(same, "the live limiter's output differs from the offline limiter's")
    }

    /// `--loop` loops the sources, so the mix runs straight through every seam: many loops of a
    /// session through the tap are bit-exact the offline render of the session repeated (two
    /// tracks of different lengths and rates, both shifted): no gap, no restart, no click.
    /// (Paced through PulseAudio: an unpaced tap would spin a real-time render thread and starve
    /// the paced tests running beside it. `--level-match off`, as above.)
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func loopRunsStraightThroughTheSeam() throws {
        defer { dir.remove() }
        let loops = 6
        let a = Signals.noise(frames: 12_000, amplitude: 0.2, seed: 7)     // 0.25 s at 48 kHz: the session
        // 0.2 s of stereo at 44.1 kHz, then silence
        let b = [Signals.noise(frames: 8_820, amplitude: 0.2, seed: 8), Signals.noise(frames: 8_820, amplitude: 0.2, seed: 9)]
        try AudioFiles.write([a], to: dir.file("a.wav"), sampleRate: 48_000)
        try AudioFiles.write(b, to: dir.file("b.wav"), sampleRate: 44_100)
        func tiled(_ x: [Float], padding: Int) -> [Float] {
            Array([[Float]](repeating: x + [Float](repeating: 0, count: padding), count: loops).joined())
        }
        try AudioFiles.write([tiled(a, padding: 0)], to: dir.file("a-tiled.wav"), sampleRate: 48_000)
        try AudioFiles.write(b.map { tiled($0, padding: 2_205) }, to: dir.file("b-tiled.wav"), sampleRate: 44_100)
        let settings = ["--pitch", "300", "--track", "2:pitch=-500,pan=0.5", "--sample-format", "s16", "--level-match", "off"]
        let offline = dir.file("offline.wav")
        let r = try MixFXBinary.run(["render", dir.file("a-tiled.wav"), dir.file("b-tiled.wav"), "-o", offline, "--quiet", "--dither", "none"] + settings)
        #expect(r.status == 0, "\(r.stderr)")
        let tap = dir.file("tap.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", dir.file("a.wav"), dir.file("b.wav"), "--loop", "--device", "mixfx_pulse_tap",
                                                          "--no-ui", "--json"] + settings, environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: loops * 12_000 + 4_800, bytesPerFrame: 4)
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let captured = try ALSARig.readS16(tap)
        let (ref, format) = try AudioFiles.read(offline)
        // (the render holds one loop more: its last frames see the silence after its end)
        let compared = (loops - 1) * 12_000
        #expect(format.frameCount == loops * 12_000 && captured.count >= 2 * compared)
        var firstDifference: Int?
        for i in 0..<min(compared, captured.count / 2) where firstDifference == nil {
            if Int16((ref[0][i] * 32768).rounded()) != captured[2 * i] || Int16((ref[1][i] * 32768).rounded()) != captured[2 * i + 1] {
                firstDifference = i
            }
        }
        #expect(firstDifference == nil, "the looped tap differs from the repeated render at frame \(firstDifference ?? 0) (seams at multiples of 12000)")
    }

    /// A seek while playing resumes exactly at its frame: after the fade-out and the silence
    /// while the files move and the effects start up, the tap is bit-exact what a render that
    /// starts there gives (the input cut at the target frame; past the 10 ms fade-in; the render
    /// with `--level-match off`, as above).
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aSeekResumesBitExactAtItsFrame() throws {
        defer { dir.remove() }
        let input = dir.file("n.wav"), target = 36_000
        let x = Signals.noise(frames: 96_000, amplitude: 0.3, seed: 11)
        try AudioFiles.write([x, x.reversed()], to: input, sampleRate: 48_000)
        // from the target on, and on into the next loop (the render's last frames see what follows)
        let y0 = Array(x[target...] + x[..<24_000]), y1 = Array(x.reversed()[target...] + x.reversed()[..<24_000])
        try AudioFiles.write([y0, y1], to: dir.file("cut.wav"), sampleRate: 48_000)
        let settings = ["--pitch", "500", "--bass", "3", "--sample-format", "s16", "--level-match", "off"]
        let offline = dir.file("offline.wav")
        #expect(try MixFXBinary.run(["render", dir.file("cut.wav"), "-o", offline, "--quiet", "--dither", "none"] + settings).status == 0)
        let tap = dir.file("tap.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--loop", "--device", "mixfx_pulse_tap", "--no-ui", "--json"] + settings,
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 24_000, bytesPerFrame: 4)
        p.send("seek 0.75")
        #expect(p.waitForLine(startingWith: "ok seek 0.75") != nil, "\(p.stderr)")
        let atSeek = try ALSARig.readS16(tap).count / 2
        ALSARig.waitForTap(tap, frames: atSeek + 96_000, bytesPerFrame: 4)
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let y = try ALSARig.readS16(tap)
        let (ref, _) = try AudioFiles.read(offline)
        // the resume point: where the render's frames after the 10 ms fade-in first appear in the
        // tap, 64 of them in a row (noise: nowhere else), less the fade
        let fade = 480
        let probe = (0..<64).map { Int16((ref[0][fade + $0] * 32768).rounded()) }
        var resume: Int?
        for i in (atSeek - 48_000 > 0 ? atSeek - 48_000 : 0)..<(y.count / 2 - 64) where resume == nil {
            if y[2 * i] == probe[0] && (0..<64).allSatisfy({ y[2 * (i + $0)] == probe[$0] }) { resume = i - fade }
        }
        let r = try #require(resume, "the render's frames after the seek were not found in the tap")
        let compared = 96_000 - target
        #expect(r + compared <= y.count / 2, "too little played after the seek")
        var firstDifference: Int?
        for k in fade..<compared where firstDifference == nil && r + k < y.count / 2 {
            if Int16((ref[0][k] * 32768).rounded()) != y[2 * (r + k)] || Int16((ref[1][k] * 32768).rounded()) != y[2 * (r + k) + 1] {
                firstDifference = k
            }
        }
        #expect(firstDifference == nil, "after the seek (resumed at tap frame \(r)) the tap differs from the render from frame \(target) at \(target) + \(firstDifference ?? -1)")
    }

    @Test func devicesAndDeviceErrors() throws {
        defer { dir.remove() }
        let env = ALSARig.environment(tap: dir.file("t.raw"))
        let list = try MixFXBinary.run(["devices"], environment: env)
        #expect(list.status == 0 && list.stdout.contains("mixfx_tap") && list.stdout.contains("raw file tap"))
        let input = try sine("s.wav", seconds: 0.2)
        let bad = try MixFXBinary.run(["play", input, "--device", "nosuchcard", "--no-ui"], environment: env)
        #expect(bad.status == 1)
        // one line, mixfx's (ALSA's own "Unknown PCM" line is silenced)
        let lines = bad.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(lines)")
        let line = lines.last ?? ""
        #expect(line.contains("'nosuchcard'") && line.contains("mixfx_tap") && line.contains("--device default"), "\(line)")
    }

    /// The master meter live: after 3.5 s of a steady tone, `status` reads the short-term
    /// loudness and true peak the offline analysis of the same session gives; `master limit`
    /// moves the ceiling, and needs a session started with `--limit`.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func theMasterMeterReadsLoudnessAndTruePeakLive() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 1, frequency: 997, amplitude: 0.3)
        let offline = dir.file("o.wav")
        #expect(try MixFXBinary.run(["render", input, "-o", offline, "--sample-format", "f32", "--quiet"]).status == 0)
        let a = try JSONSerialization.jsonObject(with: Data(try MixFXBinary.run(["analyze", offline, "--json"]).stdout.utf8)) as! [String: Any]
        let measured = (a["files"] as! [[String: Any]])[0]
        let lufs = try #require(measured["momentaryMaxLUFS"] as? Double), tp = try #require(measured["truePeakDBTP"] as? Double)
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--loop", "--device", "mixfx_pulse", "--no-ui", "--limit", "-1"],
                                       environment: ALSARig.environment(tap: dir.file("t.raw")))
        // 3.5 s of sound first (the short-term window is 3 s): by the frame the status reports,
        // not the clock (a sanitizer's build starts slowly)
        var frame = 0
        for _ in 0..<480 where frame < 168_000 {
            p.send("status")
            usleep(250_000)
            let last = p.stdout.split(separator: "\n").last { $0.hasPrefix("ok position") }
            frame = last.flatMap { $0.firstMatch(of: /@ frame (\d+)/) }.map { Int($0.1)! } ?? 0
        }
        let earlier = p.stdout.split(separator: "\n").filter { $0.contains("short-term") }.count
        p.send("status")
        p.send("master limit -20")
        usleep(400_000)
        p.send("status")
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let statuses = Array(p.stdout.split(separator: "\n").filter { $0.contains("short-term") }.map(String.init).dropFirst(earlier))
        try #require(statuses.count == 2, "\(p.stdout)")
        let pattern = /short-term (-?[0-9.]+) LUFS, true peak (-?[0-9.]+) dBTP, limiter (-?[0-9.]+) dBTP \(gain (-?[0-9.]+) dB\)/
        let before = try #require(statuses[0].firstMatch(of: pattern)), after = try #require(statuses[1].firstMatch(of: pattern))
        // a steady tone: its short-term loudness is its momentary loudness offline
        #expect(abs(Double(before.1)! - lufs) < 0.2, "live \(before.1) LUFS, offline \(lufs)")
        #expect(abs(Double(before.2)! - tp) < 0.2, "live true peak \(before.2), offline \(tp)")
        #expect(Double(before.3)! == -1 && Double(before.4)! == 0, "\(statuses[0])")
        // the tone's true peak is about -13.5 dBTP: a -20 dBTP ceiling takes about 6.5 dB
        let reduction = -Double(after.4)!
        #expect(Double(after.3)! == -20 && abs(reduction - (tp + 20)) < 0.3, "\(statuses[1]); offline true peak \(tp)")
        #expect(p.stdout.contains("ok master limit -20"), "\(p.stdout)")
        // without --limit, the command says why it cannot
        let q = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse", "--no-ui"],
                                       environment: ALSARig.environment(tap: dir.file("t2.raw")))
        q.send("master limit -3")
        q.send("quit")
        #expect(q.wait() == 0)
        #expect(q.stderr.contains("--limit"), "\(q.stderr)")
    }

    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func badControlCommandsAreReportedAndPlaybackGoesOn() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 1.5)
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse", "--no-ui", "--json"],
                                       environment: ALSARig.environment(tap: dir.file("t.raw")))
        p.send("track 9 volume 1")
        p.send("wobble")
        p.send("track 1 pitch 5000")
        p.send("track 1 volume 0.5")
        #expect(p.waitForLine(startingWith: "ok track 1 volume 0.5") != nil)
        p.closeInput()
        #expect(p.wait() == 0)
        #expect(p.stderr.contains("track 9: tracks go from 1 to 1"))
        #expect(p.stderr.contains("unknown command 'wobble'"))
        #expect(p.stderr.contains("5000 is above 2400"))
        #expect(json(p.stdout)["framesPlayed"] as? Int == 72_000)
    }

    /// The sound travels through two threads of ours: the render thread, and the client thread
    /// PulseAudio's ALSA plugin starts in our process, which does the socket writes. Both must run
    /// real-time, or a busy machine delays the second and the server underruns; the thread that
    /// opened the device gets its own policy back.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)),
          .enabled(if: ALSARig.realtimeAllowed, "this system refuses real-time scheduling (SCHED_FIFO) to this user"))
    func theAudioPathRunsRealTimeWhereTheSystemAllowsIt() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 3)
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse", "--no-ui"],
                                       environment: ALSARig.environment(tap: dir.file("t.raw")))
        p.send("status")
        #expect(p.waitForLine(startingWith: "ok position") != nil)
        // (the render thread raises itself as it starts, which on a busy machine may come a
        // little after the first status: up to 3 s)
        let fifo = 1
        func settled(_ t: [(tid: Int32, name: String, policy: Int)]) -> Bool {
            let plugin = t.filter { $0.name == "threaded-ml" }
            return !plugin.isEmpty && plugin.allSatisfy { $0.policy == fifo } && t.filter { $0.name != "threaded-ml" && $0.policy == fifo }.count == 1
        }
        var threads = ALSARig.threadPolicies(of: p.process.processIdentifier)
        let deadline = Date().addingTimeInterval(3)
        while !settled(threads) && Date() < deadline {
            usleep(20_000)
            threads = ALSARig.threadPolicies(of: p.process.processIdentifier)
        }
        p.send("quit")
        p.closeInput()
        #expect(p.wait() == 0, "\(p.stderr)")
        let plugin = threads.filter { $0.name == "threaded-ml" }
        #expect(!plugin.isEmpty && plugin.allSatisfy { $0.policy == fifo }, "\(threads)")
        #expect(threads.filter { $0.name != "threaded-ml" && $0.policy == fifo }.count == 1, "one render thread: \(threads)")
        #expect(threads.first { $0.tid == p.process.processIdentifier }?.policy == 0, "the main thread: \(threads)")
    }

    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    /// (The suite runs beside every other test on the machine's cores: a run that underran is
    /// played again, up to three runs, and one of them must have none. The wall time and the
    /// frames are asked of every run: an underrun recovers without losing or adding any.)
    func playbackTakesRealTimeAndDrainsTheTail() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 4)
        let tap = dir.file("t.raw")
        var underruns: [Int] = []
        while underruns.count < 3 && !underruns.contains(0) {
            try? FileManager.default.removeItem(atPath: tap)
            let r = try MixFXBinary.run(["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json", "--sample-format", "s16"],
                                        environment: ALSARig.environment(tap: tap))
            #expect(r.status == 0, "\(r.stderr)")
            let report = json(r.stdout)
            let wall = report["wallSeconds"] as? Double ?? 0
            #expect(abs(wall - 4) / 4 < 0.02, "4 s of audio took \(wall) s")
            #expect(try ALSARig.readS16(tap).count == 4 * 48_000)   // every frame reached the device
            underruns.append(report["underruns"] as? Int ?? -1)
        }
        #expect(underruns.contains(0), "underruns in each run: \(underruns)")
    }

    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)),
          .disabled(if: Sanitizer.name == "thread", "at ThreadSanitizer's speed the recovery itself can underrun once more"))
    func aStalledRenderThreadUnderrunsRecoversAndIsCounted() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 3)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "s16", "--buffer-ms", "50"],
                                       environment: ALSARig.environment(tap: tap))
        usleep(800_000)
        p.send("debug stall 400")   // 8× the buffer
        #expect(p.waitForLine(startingWith: "ok debug stall") != nil)
        p.closeInput()
        #expect(p.wait() == 0, "\(p.stderr)")
        let report = json(p.stdout)
        #expect(report["underruns"] as? Int == 1, "\(p.stdout)")
        let wall = report["wallSeconds"] as? Double ?? 0
        #expect(wall > 3.3 && wall < 3.6, "3 s with a 0.4 s stall took \(wall) s")
        // Recovered without losing or repeating anything: the tap holds the whole session once.
        let captured = try ALSARig.readS16(tap)
        let (x, _) = try AudioFiles.read(input)
        #expect(captured.count == x[0].count)   // mono session, mono stream
        #expect(zip(captured, x[0]).allSatisfy { $0 == Int16(($1 * 32768).rounded()) })
    }

    /// The tempo live, in real time: `track all tempo 0.5` half a second in plays the rest of
    /// the song in twice its time at the same pitch; `status` then shows song time and played
    /// time apart; a tempo beyond what live playback takes is refused with the range. (Beside
    /// the whole suite on two cores a run can underrun: up to three runs, one of them with
    /// none; every run is asked the rest, as an underrun recovers without losing a frame.)
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func theTempoChangesWhilePlayingAndSongAndPlayedTimePart() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 3)
        var underruns: [Int] = []
        while underruns.count < 3 && !underruns.contains(0) {
            let tap = dir.file("t.raw")
            try? FileManager.default.removeItem(atPath: tap)
            let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                              "--sample-format", "s16"],
                                           environment: ALSARig.environment(tap: tap))
            ALSARig.waitForTap(tap, frames: 24_000, bytesPerFrame: 2)
            p.send("track 1 tempo 8")
            p.send("track all tempo 0.5")
            #expect(p.waitForLine(startingWith: "ok track all tempo 0.5") != nil, "\(p.stderr)")
            usleep(1_500_000)
            p.send("status")
            let status = try #require(p.waitForLine(startingWith: "ok position"), "\(p.stdout)")
            p.closeInput()
            #expect(p.wait() == 0, "\(p.stderr)")
            #expect(p.stderr.contains("track 1 tempo 8: live playback takes tempos from 0.25 to 4"), "\(p.stderr)")
            // "position S s of 3.000 s, played W s at tempo 0.500": about 0.75 s of song in 1.5 s
            let words = status.split(separator: " ")
            let song = Double(words[2]) ?? -1, played = Double(words[8]) ?? -1
            #expect(status.contains("at tempo 0.500"), "\(status)")
            #expect(played - song > 0.6 && played - song < 0.9, "\(status)")
            // the whole song: x s at tempo 1, then 3 − x s at 0.5, x the half second before the
            // command plus the buffer and the latency (0.27 s) and the time the command took to
            // arrive: from 0.5 to 1 s, so 5 to 5.5 s in all
            let report = json(p.stdout)
            let captured = try ALSARig.readS16(tap).map { Float($0) / 32768 }
            let seconds = Double(captured.count) / 48_000
            #expect(seconds > 5 && seconds < 5.5, "\(captured.count) frames")
            // the pitch kept in the slow part
            let f = Signals.frequency(captured[(2 * 48_000)..<(4 * 48_000)], sampleRate: 48_000)
            #expect(abs(Signals.cents(f, 440)) < 0.1, "\(f) Hz")
            underruns.append(report["underruns"] as? Int ?? -1)
        }
        #expect(underruns.contains(0), "underruns in each run: \(underruns)")
    }

    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aParameterChangeArrivesOnTimeWithoutAClick() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 4)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "f32"],
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 48_000, bytesPerFrame: 4)   // a second played (a slow build starts later)
        p.send("track 1 volume 0.25")
        guard let ack = p.waitForLine(startingWith: "ok track 1 volume"),
              let frame = Int(ack.split(separator: " ").last ?? "") else {
            Issue.record("no acknowledgement: \(p.stdout) \(p.stderr)"); return
        }
        ALSARig.waitForTap(tap, frames: frame + 24_000, bytesPerFrame: 4)
        p.send("track 1 pitch 700")
        guard let ack2 = p.waitForLine(startingWith: "ok track 1 pitch"),
              let frame2 = Int(ack2.split(separator: " ").last ?? "") else {
            Issue.record("no acknowledgement: \(p.stdout)"); return
        }
        p.closeInput()
        #expect(p.wait() == 0)
        let report = json(p.stdout)
        let period = report["periodFrames"] as? Int ?? 0
        let latency = report["latencyFrames"] as? Int ?? 0
        let data = try Data(contentsOf: URL(fileURLWithPath: tap))
        let y: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(y.count == 4 * 48_000)
        // (the ranges below must exist: a failed expectation, not a trap, when they do not)
        try #require(frame >= 4800 && frame + period + 5280 <= y.count && frame2 + period + latency + 4800 + 9600 < y.count - 2400,
                     "acknowledged at frames \(frame) and \(frame2) of \(y.count)")
        // Volume: full level up to the acknowledged frame, a quarter from one period + 10 ms after.
        let before = Signals.rms(y[(frame - 4800)..<frame]), after = Signals.rms(y[(frame + period + 480)..<(frame + period + 5280)])
        #expect(abs(Signals.db(before / (0.5 / 2.squareRoot()))) < 0.1)
        #expect(abs(Signals.db(after / before) - Signals.db(0.25)) < 0.1, "level change \(Signals.db(after / before)) dB")
        // No click: no sample-to-sample step larger than the material's own (a 659 Hz sine at 0.5).
        let ownMax = 0.5 * 2 * Double.pi * 659.3 / 48_000
        let worst = zip(y.dropFirst(), y).map { abs(Double($0 - $1)) }.max()!
        #expect(worst < ownMax * 1.1, "largest step \(worst), the material's own \(ownMax)")
        // Pitch: heard within a period (the block the change lands in) plus 60 ms of the
        // acknowledgement (the tap is what the device was given: its buffer comes on top)
        let heard = Signals.dominance(y, from: frame2, oldHz: 440, newHz: 440 * pow(2, 7.0 / 12), sampleRate: 48_000)
        #expect(heard != nil && heard! <= period + 2880, "the fifth dominated \(heard ?? -1) frames after the acknowledgement")
        // and a fifth up once the shifter's latency has passed.
        let shifted = y[(frame2 + period + latency + 4800)..<(y.count - 2400)]
        #expect(shifted.count > 9600)
        #expect(abs(Signals.cents(Signals.frequency(shifted, sampleRate: 48_000), 440 * pow(2, 7.0 / 12))) < 1)
        #expect(y.allSatisfy { $0.isFinite })
    }

    /// From a lowered pitch (the switch to a restarted state): an octave down moved to −200
    /// cents through ALSA is heard within a period plus 60 ms of the acknowledgement, without a
    /// click, and holds the new pitch.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aChangeFromALoweredPitchArrivesOnTime() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 4)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--pitch", "-1200", "--device", "mixfx_pulse_tap",
                                                          "--no-ui", "--json", "--sample-format", "f32"],
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 72_000, bytesPerFrame: 4)
        p.send("track 1 pitch -200")
        guard let ack = p.waitForLine(startingWith: "ok track 1 pitch"),
              let frame = Int(ack.split(separator: " ").last ?? "") else {
            Issue.record("no acknowledgement: \(p.stdout) \(p.stderr)"); return
        }
        p.closeInput()
        #expect(p.wait() == 0)
        let period = json(p.stdout)["periodFrames"] as? Int ?? 0
        let data = try Data(contentsOf: URL(fileURLWithPath: tap))
        let y: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        try #require(frame >= 9600 && frame + period + 24_000 < y.count, "acknowledged at frame \(frame) of \(y.count)")
        let newHz = 440 * pow(2, -200.0 / 1200)
        let heard = Signals.dominance(y, from: frame, oldHz: 220, newHz: newHz, sampleRate: 48_000)
        #expect(heard != nil && heard! <= period + 2880, "the new pitch dominated \(heard ?? -1) frames after the acknowledgement")
        // no click: within the equal-power crossfade the two tones' sum stays under √2 of the new one's step
        let ownMax = 0.5 * 2 * Double.pi * newHz / 48_000
        let worst = zip(y[(frame - 4800)..<(frame + period + 9600)].dropFirst(), y[(frame - 4800)..<(frame + period + 9600)])
            .map { abs(Double($0 - $1)) }.max()!
        #expect(worst < ownMax * 1.45, "largest step \(worst), the new tone's own \(ownMax)")
        let after = y[(frame + period + 9600)..<(frame + period + 24_000)]
        #expect(abs(Signals.cents(Signals.frequency(after, sampleRate: 48_000), newHz)) < 1)
    }

    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func seekJumpsWithAFadeAndNoClick() throws {
        defer { dir.remove() }
        // 440 Hz for 2 s, then 880 Hz for 2 s
        let a = Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 96_000, amplitude: 0.4)
        let b = Signals.sine(frequencyHz: 880, sampleRate: 48_000, frames: 96_000, amplitude: 0.4, phase: 0)
        let input = dir.file("two.wav")
        try AudioFiles.write([(a + b).map { ($0 * 32768).rounded() / 32768 }], to: input, sampleRate: 48_000)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "f32"], environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 24_000, bytesPerFrame: 4)   // about half a second played
        p.send("seek 3")
        #expect(p.waitForLine(startingWith: "ok seek 3") != nil)
        p.closeInput()
        #expect(p.wait() == 0, "\(p.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: tap))
        let y: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        // Played about 0.5 s, then the last second: far less than 4 s, ending on 880 Hz.
        #expect(y.count > 60_000 && y.count < 110_000, "\(y.count) frames played")
        let tail = y[(y.count - 30_000)..<(y.count - 2_000)]
        #expect(abs(Signals.cents(Signals.frequency(tail, sampleRate: 48_000), 880)) < 1)
        let ownMax = 0.4 * 2 * Double.pi * 880 / 48_000
        #expect(zip(y.dropFirst(), y).allSatisfy { abs(Double($0 - $1)) < ownMax * 1.1 }, "a click at the seek")
    }

    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)),
          .disabled(if: Sanitizer.name == "thread", "its timing does not hold at ThreadSanitizer's speed"))
    func pauseIsSilenceAndResumesWhereItStoppedWithoutClicks() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 2)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "f32"], environment: ALSARig.environment(tap: tap))
        usleep(500_000)
        p.send("pause")
        usleep(400_000)
        p.send("resume")
        p.closeInput()
        #expect(p.wait() == 0, "\(p.stderr)")
        #expect(json(p.stdout)["framesPlayed"] as? Int == 96_000)
        let data = try Data(contentsOf: URL(fileURLWithPath: tap))
        let y: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        // The whole session plus about 0.4 s of silence in the middle.
        var longestSilence = 0, run = 0
        for v in y { run = v == 0 ? run + 1 : 0; longestSilence = max(longestSilence, run) }
        #expect(longestSilence > 14_400 && longestSilence < 28_800, "silence of \(longestSilence) frames")
        #expect(y.count > 96_000 + 14_400)
        let ownMax = 0.5 * 2 * Double.pi * 440 / 48_000
        #expect(zip(y.dropFirst(), y).allSatisfy { abs(Double($0 - $1)) < ownMax * 1.1 }, "a click at pause or resume")
    }

    /// The realtime contract from the first frame: on the raw tap (whose ALSA plugin allocates
    /// nothing), the render thread allocates nothing at all, its warm-up included, through every
    /// part of the chain (resampling, a mono track panned, EQ, pitch with formants, tempo, the
    /// output stage's limiter): no global is first built there, no buffer grown. (The paced test
    /// below must leave out the warm-up: PulseAudio's plugin allocates in its first writes.)
    @Test(.disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func theRenderThreadAllocatesNothingFromTheFirstFrame() throws {
        defer { dir.remove() }
        let lib = try #require(ALSARig.allocationCounterLibrary(in: dir.path), "gcc is needed to build the allocation counter")
        let a = try sine("a.wav", seconds: 1, rate: 44_100), b = try sine("b.wav", seconds: 1, frequency: 220)
        var env = ALSARig.environment(tap: dir.file("t.raw"))
        env["LD_PRELOAD"] = lib
        let r = try MixFXBinary.run(["play", a, b, "--device", "mixfx_tap", "--no-ui", "--json", "--bass", "3", "--treble", "-2",
                                     "--pitch", "200", "--formant", "--tempo", "0.9", "--track", "1:pan=-0.5", "--limit", "-3"],
                                    environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let report = json(r.stdout)
        #expect(report["renderThreadWarmUpAllocations"] as? Int == 0, "\(r.stdout)")
        #expect(report["renderThreadAllocations"] as? Int == 0, "\(r.stdout)")
    }

    /// Looped (several seams), with parameter changes (a pitch switch among them), a pause and a
    /// seek: the render thread allocates nothing after its warm-up and the device never runs dry.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)),
          .disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func theRenderThreadDoesNotAllocate() throws {
        defer { dir.remove() }
        let lib = try #require(ALSARig.allocationCounterLibrary(in: dir.path), "gcc is needed to build the allocation counter")
        // short tracks looped: several seams while the commands (a seek among them) arrive
        let a = try sine("a.wav", seconds: 0.4), b = try sine("b.wav", seconds: 0.3, frequency: 220)
        var env = ALSARig.environment(tap: dir.file("t.raw"))
        env["LD_PRELOAD"] = lib
        let p = try InteractiveProcess(MixFXBinary.path, ["play", a, b, "--loop", "--device", "mixfx_pulse", "--no-ui", "--json",
                                                          "--bass", "3", "--pitch", "200", "--limit", "-3"], environment: env)
        usleep(500_000)
        // (from −500 cents to +300 is a switch: a second vocoder restarted at the new pitch)
        for cmd in ["track 1 pitch -500", "track 2 volume 0.3", "track 1 pitch 300", "track 1 bass -6", "seek 0.2", "track 2 treble 5", "master volume 0.7",
                    "track 1 pan -0.5", "track 2 mute on", "track 2 mute off", "track 1 solo on", "master limit -6", "status",
                    "pause", "resume"] {
            p.send(cmd)
            usleep(80_000)
        }
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let report = json(p.stdout)
        #expect(report["renderThreadAllocations"] as? Int == 0, "\(p.stdout)")
        // paced in real time across the loop seams and the seek: the device never ran dry
        #expect(report["underruns"] as? Int == 0 && report["diskUnderflowFrames"] as? Int == 0, "\(p.stdout)")
    }

    /// Ctrl-C ends playing normally (0); SIGTERM and SIGHUP are 128 + N, as for every command.
    /// (A real-time device: the null device plays faster than real time and would be done.)
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)),
          arguments: [(SIGINT, Int32(0)), (SIGTERM, 128 + SIGTERM), (SIGHUP, 128 + SIGHUP)])
    func stopSignalsGiveTheirStatus(signal: Int32, status: Int32) throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 30)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--quiet",
                                                          "--sample-format", "f32"],
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 24_000, bytesPerFrame: 4)   // half a second played
        kill(p.process.processIdentifier, signal)
        #expect(p.wait(timeout: 10) == status, "\(p.stderr)")
    }

    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func interruptFadesOutAndStops() throws {
        defer { dir.remove() }
        let input = try sine("s.wav", seconds: 5)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "f32"],
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 48_000, bytesPerFrame: 4)   // about a second played
        let t0 = Date()
        kill(p.process.processIdentifier, SIGINT)
        #expect(p.wait(timeout: 5) == 0)
        // (a sanitizer's build is several times slower: the bound then only catches a hang)
        #expect(Date().timeIntervalSince(t0) < (Sanitizer.name == nil ? 0.5 : 3))
        let data = try Data(contentsOf: URL(fileURLWithPath: tap))
        let y: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(y.count > 40_000 && y.count < 5 * 48_000)
        // It ends in a fade: the last 2 ms are near silence and no step is a click.
        #expect(y.suffix(96).allSatisfy { abs($0) < 0.02 })
        let ownMax = 0.5 * 2 * Double.pi * 440 / 48_000
        #expect(zip(y.dropFirst(), y).allSatisfy { abs(Double($0 - $1)) < ownMax * 1.1 })
    }

    /// `--loop` of a session with no frames is refused before the device opens (exit 2, one
    /// line): the feeder went round a zero-frame loop forever at 100 % CPU, and `quit` and
    /// Ctrl-C hung waiting for it (issue #30). Without `--loop` it just ends. No device needed.
    @Test func loopingAnEmptySessionIsRefused() throws {
        defer { dir.remove() }
        let empty = dir.file("empty.wav")
        try AudioFiles.write([[Float]()], to: empty, sampleRate: 48_000)
        let env = ALSARig.environment(tap: dir.file("t.raw"))
        let p = try InteractiveProcess(MixFXBinary.path, ["play", empty, "--loop", "--device", "mixfx_tap", "--no-ui"], environment: env)
        let t0 = Date()
        while p.process.isRunning && Date().timeIntervalSince(t0) < 10 { usleep(10_000) }
        // (the spinning player ignored SIGTERM too)
        if p.process.isRunning { kill(p.process.processIdentifier, SIGKILL) }
        #expect(Date().timeIntervalSince(t0) < 5, "still playing after \(Date().timeIntervalSince(t0)) s")
        #expect(p.wait(timeout: 10) == 2, "\(p.stderr)")
        let lines = p.stderr.split(separator: "\n")
        #expect(lines.count == 1 && p.stderr.contains("0 frames long: there is nothing to loop"), "\(p.stderr)")
        let tapped = (try? Data(contentsOf: URL(fileURLWithPath: dir.file("t.raw"))))?.count ?? 0
        #expect(tapped == 0)
        // not looped: ends at once
        let once = try InteractiveProcess(MixFXBinary.path, ["play", empty, "--device", "mixfx_tap", "--no-ui"], environment: env)
        #expect(once.wait(timeout: 10) == 0, "\(once.stderr)")
    }

    /// An empty file placed after silence is a session of that silence: `--loop` plays it and
    /// `quit` stops it (the loop's length is the session's, not the file's).
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func anEmptyFileAfterSilenceLoopsAndQuits() throws {
        defer { dir.remove() }
        let empty = dir.file("empty.wav")
        try AudioFiles.write([[Float]()], to: empty, sampleRate: 48_000)
        let tap = dir.file("t.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", empty, "--track", "1:start=0.1", "--loop", "--device", "mixfx_pulse_tap",
                                                          "--no-ui", "--sample-format", "f32"],
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 3 * 4800, bytesPerFrame: 4)   // three loops of 0.1 s
        p.send("quit")
        #expect(p.wait(timeout: 5) == 0, "\(p.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: tap))
        #expect(data.count >= 3 * 4800 * 4)
    }
}
