import Foundation
import Testing
import MixFX
import TestSupport

/// Touch in `mixfx play` (issue #33, docs/automation.md "Touch"): a track's volume held by the
/// control input over its lane, released, saved; `mixfx render` of the saved preset plays what
/// was heard, through the paced ALSA tap (PulseAudio, see Tests/alsa).
@Suite struct PlayTouchTests {
    let dir = TempDir("mixfx-play-touch")

    /// Plays `length` frames of stereo noise (48 kHz, `seeds`) with `settings` into the paced tap, sends
    /// `hold` once the tap has 0.75 s and `release` once it has 1.5 s, then `save` once it has
    /// `saveAt(frames at the release)`, and lets it end. The input, its length, the tap's s16
    /// samples (interleaved) and the saved preset's path.
    func touchAndSave(seeds: (UInt64, UInt64), length: Int = 144_000, settings: [String], hold: String, release: String,
                      saveAt: (Int) -> Int) throws -> (input: String, length: Int, tap: [Int16], saved: String) {
        let input = dir.file("n.wav")
        try AudioFiles.write([Signals.noise(frames: length, amplitude: 0.3, seed: seeds.0), Signals.noise(frames: length, amplitude: 0.3, seed: seeds.1)],
                             to: input, sampleRate: 48_000)
        let tap = dir.file("tap.raw"), saved = dir.file("saved.json")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse_tap", "--no-ui", "--json"] + settings,
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 36_000, bytesPerFrame: 4)
        p.send(hold)
        #expect(p.waitForLine(startingWith: "ok \(hold)") != nil, "\(p.stderr)")
        ALSARig.waitForTap(tap, frames: 72_000, bytesPerFrame: 4)
        p.send(release)
        #expect(p.waitForLine(startingWith: "ok \(release)") != nil, "\(p.stderr)")
        let released = try ALSARig.readS16(tap).count / 2
        ALSARig.waitForTap(tap, frames: saveAt(released), bytesPerFrame: 4)
        p.send("save \(saved)")
        #expect(p.waitForLine(startingWith: "ok save") != nil, "\(p.stderr)")
        p.closeInput()
        #expect(p.wait() == 0, "\(p.stderr)")
        return (input, length, try ALSARig.readS16(tap), saved)
    }

    /// RMS level in dB of frames `range` of interleaved stereo s16.
    func level(_ y: [Int16], _ range: Range<Int>) -> Double {
        var sum = 0.0
        for i in range { sum += Double(y[2 * i]) * Double(y[2 * i]) + Double(y[2 * i + 1]) * Double(y[2 * i + 1]) }
        return 10 * log10(max(sum / Double(2 * range.count), 1e-9))
    }

    /// A touch move recorded and played back: noise under a volume lane (1 → 0.3 over 3 s);
    /// `track 1 volume 0.2` at about 0.75 s, `track 1 volume release` at about 1.5 s, `save`
    /// once the lane is back. The saved preset's lane rendered offline matches the tap within
    /// 0.2 dB in every 25 ms window, and the touch is in it (about 10 dB below the lane).
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aTouchRecordedByControlInputIsSavedAndRendersWhatWasHeard() throws {
        defer { dir.remove() }
        let settings = ["--automate", "volume=1@0,0.3@3", "--sample-format", "s16", "--rate", "48000"]
        let (input, length, y, saved) = try touchAndSave(seeds: (21, 22), settings: settings, hold: "track 1 volume 0.2",
                                                         release: "track 1 volume release") { $0 + 24_000 }
        #expect(y.count == 2 * length)
        // the saved preset: version 3, the lane with the touch, thinned
        let preset = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: saved))) as? [String: Any])
        #expect(preset["schemaVersion"] as? Int == 3)
        let lanes = preset["automation"] as? [[String: Any]] ?? []
        let volume = try #require(lanes.first { $0["parameter"] as? String == "volume" })
        let count = (volume["breakpoints"] as? [Any])?.count ?? 0
        #expect(count > 4 && count < 60, "\(count) breakpoints: \(volume)")
        // rendered offline
        let rendered = dir.file("r.wav")
        let r = try MixFXBinary.run(["render", input, "--preset", saved, "-o", rendered, "--quiet", "--dither", "none"])
        #expect(r.status == 0, "\(r.stderr)")
        let (ref, format) = try AudioFiles.read(rendered)
        #expect(format.frameCount == length)
        let z = (0..<min(length, ref[0].count)).flatMap { [Int16((ref[0][$0] * 32768).rounded()), Int16((ref[1][$0] * 32768).rounded())] }
        let window = 1200
        var worst = 0.0, at = 0
        for w in 0..<(min(y.count, z.count) / 2 / window) {
            let range = (w * window)..<((w + 1) * window)
            let d = abs(level(y, range) - level(z, range))
            if d > worst { worst = d; at = w * window }
        }
        #expect(worst <= 0.2, "the render of the saved preset is \(worst) dB off the tap in the window at frame \(at)")
        // the touch is in it: held at 0.2 where the lane is 0.65 to 0.8 (10 to 12 dB below it),
        // for at least 0.25 s of 25 ms windows (the control lines are 0.75 s apart; a loaded
        // machine may apply them later than the tap says)
        let plain = dir.file("plain.wav")
        #expect(try MixFXBinary.run(["render", input, "-o", plain, "--quiet", "--dither", "none"] + settings).status == 0)
        let (lane, _) = try AudioFiles.read(plain)
        let l = (0..<min(length, lane[0].count)).flatMap { [Int16((lane[0][$0] * 32768).rounded()), Int16((lane[1][$0] * 32768).rounded())] }
        var touched = 0
        for w in 0..<(length / window) {
            let range = (w * window)..<((w + 1) * window)
            let d = level(z, range) - level(l, range)
            if d < -9.5 && d > -12.5 { touched += 1 }
        }
        #expect(touched >= 10, "\(touched) windows of 25 ms held 10 to 12 dB below the lane")
    }

    /// A hand's mute over a mute lane (unmuted until 2.5 s, then muted): `track 1 mute on` at
    /// about 0.75 s and `track 1 mute release` at about 1.5 s, then `save`: the saved lane has
    /// a step to 1 where the mute was heard and back to 0 where the release was, the lane's own
    /// step at 2.5 s, every curve a step; rendered offline it is what reached the tap, bit for
    /// bit.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aHandsMuteIsSavedAsStepsAndRendersWhatWasHeard() throws {
        defer { dir.remove() }
        let settings = ["--automate", "mute=0@0,1@2.5", "--sample-format", "s16", "--rate", "48000"]
        let (input, length, y, saved) = try touchAndSave(seeds: (23, 24), settings: settings, hold: "track 1 mute on",
                                                         release: "track 1 mute release") { _ in 100_000 }
        #expect(y.count == 2 * length)
        let preset = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: saved))) as? [String: Any])
        let lanes = preset["automation"] as? [[String: Any]] ?? []
        let mute = try #require(lanes.first { $0["parameter"] as? String == "mute" })
        let points = try #require(mute["breakpoints"] as? [[String: Any]])
        #expect(points.map { $0["value"] as? Double } == [0, 1, 0, 1], "\(points)")
        #expect(points.dropLast().allSatisfy { $0["curve"] as? String == "step" }, "\(points)")
        let times = points.compactMap { $0["seconds"] as? Double }
        #expect(times.count == 4 && times[0] == 0 && times[3] == 2.5)
        // (the lines were sent once the tap had 0.75 s and 1.5 s: heard at or after that)
        #expect(times.count == 4 && times[1] >= 0.7 && times[1] < 1.4 && times[2] >= 1.45 && times[2] < 2.4, "\(times)")
        // rendered offline: the tap's samples
        let rendered = dir.file("r.wav")
        let r = try MixFXBinary.run(["render", input, "--preset", saved, "-o", rendered, "--quiet", "--dither", "none"])
        #expect(r.status == 0, "\(r.stderr)")
        let (ref, format) = try AudioFiles.read(rendered)
        #expect(format.frameCount == length)
        let z = (0..<min(length, ref[0].count)).flatMap { [Int16((ref[0][$0] * 32768).rounded()), Int16((ref[1][$0] * 32768).rounded())] }
        let first = zip(y, z).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(first == nil, "the render of the saved preset differs from the tap at frame \((first ?? 0) / 2)")
        // and the hand's mute is in it: silence between the two steps
        let f1 = Int(times[1] * 48_000), f2 = Int(times[2] * 48_000)
        #expect(z[(2 * (f1 + 480))..<(2 * f2)].allSatisfy { $0 == 0 } && z[(2 * (f2 + 480))..<(2 * (f2 + 2_000))].contains { $0 != 0 })
    }

    /// A session without lanes: `track 1 mute on` at about 0.75 s, `track 1 mute off` at about
    /// 1.5 s, `save`: the saved preset has a mute lane (0, a step to 1, a step back to 0), and
    /// its render is the tap within 1 LSB (live, a track without lanes ramps its gains itself,
    /// in single precision), silent where the tap is.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func anUnlanedMuteIsSavedAsALane() throws {
        defer { dir.remove() }
        let (input, length, y, saved) = try touchAndSave(seeds: (25, 26), length: 120_000, settings: ["--sample-format", "s16", "--rate", "48000"],
                                                         hold: "track 1 mute on", release: "track 1 mute off") { _ in 90_000 }
        #expect(y.count == 2 * length)
        let preset = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: saved))) as? [String: Any])
        #expect(preset["schemaVersion"] as? Int == 3)
        let lanes = preset["automation"] as? [[String: Any]] ?? []
        #expect(lanes.map { $0["parameter"] as? String } == ["mute"], "\(lanes)")
        let points = try #require(lanes.first?["breakpoints"] as? [[String: Any]])
        #expect(points.map { $0["value"] as? Double } == [0, 1, 0], "\(points)")
        let times = points.compactMap { $0["seconds"] as? Double }
        #expect(times.count == 3 && times[0] == 0 && times[1] >= 0.7 && times[1] < 1.4 && times[2] > times[1] + 0.3, "\(times)")
        let rendered = dir.file("r.wav")
        let r = try MixFXBinary.run(["render", input, "--preset", saved, "-o", rendered, "--quiet", "--dither", "none"])
        #expect(r.status == 0, "\(r.stderr)")
        let (ref, _) = try AudioFiles.read(rendered)
        let z = (0..<min(length, ref[0].count)).flatMap { [Int16((ref[0][$0] * 32768).rounded()), Int16((ref[1][$0] * 32768).rounded())] }
        let worst = zip(y, z).map { abs(Int($0) - Int($1)) }.max() ?? -1
        #expect(z.count == y.count && worst <= 1, "the render of the saved preset is \(worst) LSB off the tap")
        guard times.count == 3 else { return }
        let f1 = Int(times[1] * 48_000), f2 = Int(times[2] * 48_000)
        #expect(y[(2 * (f1 + 480))..<(2 * f2)].allSatisfy { $0 == 0 } && z[(2 * (f1 + 480))..<(2 * f2)].allSatisfy { $0 == 0 })
    }

    /// The realtime contract with touches: lanes on volume, pan, the master volume, mute and solo, looped
    /// (seams), touched, moved while touched, released one by one and all at once, a seek and
    /// a save among them: the render thread allocates nothing, and the device never runs dry.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)),
          .disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func touchesAllocateNothingOnTheRenderThread() throws {
        defer { dir.remove() }
        let lib = try #require(ALSARig.allocationCounterLibrary(in: dir.path), "gcc is needed to build the allocation counter")
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: 44_100, frames: 17_640, amplitude: 0.5)], to: a, sampleRate: 44_100)
        try AudioFiles.write([Signals.sine(frequencyHz: 220, sampleRate: 48_000, frames: 14_400, amplitude: 0.5)], to: b, sampleRate: 48_000)
        var env = ALSARig.environment(tap: dir.file("t.raw"))
        env["LD_PRELOAD"] = lib
        let p = try InteractiveProcess(MixFXBinary.path, ["play", a, b, "--loop", "--device", "mixfx_pulse", "--no-ui", "--json", "--limit", "-3",
                                                          "--automate", "1:volume=1@0,0.3@0.3", "--automate", "2:pan=-1@0,1@0.3",
                                                          "--automate", "master-volume=1@0,0.5@0.4", "--automate", "2:mute=0@0,1@0.2,0@0.25",
                                                          "--automate", "1:solo=0@0,1@0.1,0@0.3"], environment: env)
        usleep(400_000)
        for cmd in ["track 1 volume 0.5", "track 2 pan 0.5", "master volume 0.8", "track 1 volume 0.2", "track all volume 0.7",
                    "track 1 volume release", "seek 0.1", "track 2 pan -0.2", "save \(dir.file("s.json"))", "master volume release",
                    "track all pan release", "track 2 volume 1.5", "release", "track 1 pan 0.3", "track all volume release",
                    "track 2 mute on", "track 1 solo on", "track 2 mute release", "track all solo off", "save \(dir.file("s2.json"))",
                    "release"] {
            p.send(cmd)
            usleep(120_000)
        }
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(p.stdout[p.stdout.firstIndex(of: "{")!...].utf8)) as? [String: Any]
        #expect(report?["renderThreadAllocations"] as? Int == 0, "\(p.stdout)")
        #expect(report?["underruns"] as? Int == 0, "\(p.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir.file("s.json")))
    }

    /// A hand move that would not be heard is refused by name, not answered "ok": the tempo of
    /// a track whose moving pitch lane's shifter keeps its starting tempo, and any tempo on a
    /// session that plays on the mix's timeline; the moves that are heard are taken (a pitch
    /// over its lane: touch).
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func handMovesThatWouldNotBeHeardAreRefused() throws {
        defer { dir.remove() }
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try AudioFiles.write([Signals.noise(frames: 96_000, amplitude: 0.2, seed: 1)], to: a, sampleRate: 48_000)
        try AudioFiles.write([Signals.noise(frames: 96_000, amplitude: 0.2, seed: 2)], to: b, sampleRate: 48_000)
        func session(_ settings: [String], _ moves: [(line: String, answer: String)]) throws {
            let p = try InteractiveProcess(MixFXBinary.path, ["play", a, b, "--device", "mixfx_pulse", "--no-ui"] + settings,
                                           environment: ALSARig.environment(tap: dir.file("t.raw")))
            for (line, answer) in moves {
                p.send(line)
                if answer.hasPrefix("ok") {
                    #expect(p.waitForLine(startingWith: answer) != nil, "\(line): \(p.stdout) \(p.stderr)")
                } else {
                    let deadline = Date().addingTimeInterval(10)
                    while !p.stderr.contains(answer) && Date() < deadline { usleep(20_000) }
                    #expect(p.stderr.contains("mixfx: control: " + answer), "\(line): \(p.stderr)")
                }
            }
            p.send("quit")
            #expect(p.wait() == 0, "\(p.stderr)")
            for (line, answer) in moves where !answer.hasPrefix("ok") {
                #expect(!p.stdout.contains("ok " + line), "\(p.stdout)")
            }
        }
        try session(["--automate", "1:pitch=0@0,200@1"], [
            ("track 1 pitch 300", "ok track 1 pitch 300"),
            ("track 1 tempo 1.1", "track 1 tempo: is fixed while this track follows a moving pitch lane"),
            ("track all tempo 1.1", "track all tempo: track 1 is fixed while this track follows a moving pitch lane"),
            ("track 2 tempo 1.1", "ok track 2 tempo 1.1"),
            ("track 2 pitch 100", "ok track 2 pitch 100"),
        ])
        try session(["--tempo", "1.25", "--automate", "2:volume=1@0,0.5@1"], [
            ("track 2 tempo 1.1", "track 2 tempo: is fixed while this session plays: its lanes play on the session's timeline"),
            ("track 1 pitch 100", "ok track 1 pitch 100"),
        ])
    }
}
