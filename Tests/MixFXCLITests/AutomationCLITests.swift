import Foundation
import Testing
@testable import MixFXCLI
import MixFX
import TestSupport

/// Automation on the command line and in presets (issue #33): `--automate`'s form and its
/// errors, `--dry-run`'s listing, the preset's `automation` section and `--print-preset`'s exact
/// round trip, a volume ramp and a pitch sweep measured in the output file, `--pitchmap`
/// (placed and trimmed tracks; against `rubberband` itself), and the report's lane plots.
@Suite struct AutomationCLITests {
    let dir = TempDir("mixfx-automation")

    func write(_ name: String, _ channels: [[Float]], rate: Int = 48_000) throws -> String {
        let path = dir.file(name)
        try AudioFiles.write(channels, to: path, sampleRate: rate, sampleFormat: .f32)
        return path
    }

    func sine(_ name: String, hz: Double = 440, seconds: Double, rate: Int = 48_000) throws -> String {
        try write(name, [Signals.sine(frequencyHz: hz, sampleRate: Double(rate), frames: Int(seconds * Double(rate)), amplitude: 0.5)], rate: rate)
    }

    // MARK: the flag

    @Test func theFlagsFormReadsEveryPartFromTheRegistry() throws {
        func lane(_ text: String) throws(CLIError) -> PresetLane { try AutomationFlags.parseLane(text) }
        // a pitch sweep on track 2, semitones and cents, the default (linear) curve
        #expect(try lane("2:pitch=0@0,2st@4s") == PresetLane(target: .track(1), id: .pitchCents,
                                                              lane: AutomationLane([(0, 0), (4, 200)], curve: .linear)))
        // every track's volume in dB and percent, mm:ss.s times, a curve between breakpoints
        // (the default for a gain is db, for a frequency exp)
        let v = try lane("volume=0dB@1:00,scurve,50%@1:10.5,-6dB@1:02:03")
        #expect(v.target == .everyTrack && v.id == .volume)
        #expect(v.lane.breakpoints.map(\.seconds) == [60, 70.5, 3723])
        #expect(v.lane.breakpoints.map(\.value) == [1, 0.5, pow(10, -6.0 / 20)])
        #expect(v.lane.breakpoints.map(\.curve) == [.scurve, .db, .db])
        #expect(try lane("1:bass-freq=100@0,400@2").lane.breakpoints[0].curve == .exp)
        #expect(try lane("1:bass=0@0,6dB@2").lane.breakpoints.map(\.value) == [0, 6])
        #expect(try lane("1:pan=-1@0,step,1@2").lane.breakpoints[0].curve == .step)
        // the master's lanes take no track
        #expect(try lane("master-volume=1@0,0.5@3").target == .master)
        #expect(try lane("limit=-1@0,-3@2").target == .master)

        // errors: the flag, the lane, the breakpoint and what is allowed
        let keys = "bass, treble, pitch, bass-freq, treble-freq, bass-slope, treble-slope, eq-gain, tempo, volume, pan, mute, solo, master-volume, limit"
        let cases: [(String, String)] = [
            ("pitch", "--automate 'pitch': expected [N:]KEY=VALUE@TIME,[CURVE,]VALUE@TIME,... (\(AutomationFlags.example))"),
            ("2:pich=0@0", "--automate 2:pich: 'pich' is not a parameter (did you mean 'pitch'?; allowed: lanes for \(keys))"),
            ("2:bass-bypass=1@0", "--automate 2:bass-bypass: bass-bypass cannot be automated (allowed: lanes for \(keys))"),
            ("2:mute=0@0,0.5@1", "--automate 2:mute, breakpoint 2: '0.5' is not on or off (allowed: on or off, 1 or 0)"),
            ("0:pitch=1@0", "--automate 0:pitch: '0' is not a track number (from 1 to 4096; \(AutomationFlags.example))"),
            ("2:master-volume=1@0", "--automate 2:master-volume: master-volume is the master bus's: give it without a track number (--automate master-volume=...)"),
            ("2:pitch=0@0,lin,1@2", "--automate 2:pitch: 'lin' is neither a breakpoint VALUE@TIME nor a curve (did you mean 'linear'?; curves: step, linear, db, exp, scurve)"),
            ("2:pitch=0@0,step", "--automate 2:pitch: the curve 'step' must stand between two breakpoints (VALUE@TIME,step,VALUE@TIME)"),
            ("2:pitch=0@0,,1@2", "--automate 2:pitch: an empty item between commas (\(AutomationFlags.example))"),
            ("2:pitch=0@2,1@1", "--automate 2:pitch, breakpoint 2: 1 s is not after breakpoint 1 at 2 s (allowed: times that increase from one breakpoint to the next)"),
            ("2:pitch=0@0,30st@1", "--automate 2:pitch, breakpoint 2: 30st is 3000 cents: 3000 is above 2400 (allowed: from -2400 to 2400 cents, -24 to 24 st)"),
            ("2:pitch=3x@0", "--automate 2:pitch, breakpoint 1: '3x' is not a number (write it as 200 (cents), 2st or -0.5st (semitones) or 200c; allowed: from -2400 to 2400 cents, -24 to 24 st)"),
            ("2:pitch=0@1:75", "--automate 2:pitch, breakpoint 1 time: '1:75' is not a time (seconds, mm:ss.s or h:mm:ss, e.g. 90, 1:30 or 1:02:03.5)"),
            ("2:pitch=0@-1", "--automate 2:pitch, breakpoint 1: the time -1 s is not a time in the mix (allowed: from 0 s)"),
            ("2:pitch=0@0,db,100@1", "--automate 2:pitch, breakpoint 1: the db curve does not apply to pitch (allowed: for pitch: step, linear, scurve)"),
            ("volume=1@0,exp,0@2", "--automate volume, breakpoint 1: the exp curve from 1 to 0 cannot reach 0 (it moves by ratios) (allowed: values above 0 at both ends (e.g. 0.001, −60 dB), or the linear or scurve curve)"),
        ]
        for (text, message) in cases {
            do { _ = try lane(text); Issue.record("\(text) was taken") } catch {
                #expect(error.message == message && error.exitCode == 2, "\(text): \(error.message)")
            }
        }

        // through the binary: exit status 2 and nothing written; a second lane for one place;
        // a track beyond the session; what the engine does not render yet, in its own words
        let a = try sine("a.wav", seconds: 0.5), out = dir.file("never.wav")
        for (args, message) in [
            (["--automate", "pitch=0@0", "--automate", "pitch=1@0"], "mixfx: error: --automate pitch=1@0: a second lane for every track's pitch (one --automate per parameter and track)"),
            (["--automate", "2:pitch=0@0,100@1"], "mixfx: error: --automate 2:pitch=0@0,100@1: there are 1 track(s); track numbers go from 1 to 1"),
            (["--automate", "tempo=1@0,8@1"], "mixfx: error: track 1 (\(a)) time-pitch tempo lane: a moving tempo lane on a track whose fastest tempo is 8 is not rendered (allowed: tempos from 0.25 to 4 on a track with a moving tempo or pitch lane)"),
            (["--tempo", "8", "--automate", "pitch=0@0,100@1"], "mixfx: error: track 1 (\(a)) time-pitch pitch lane: a moving pitch lane on a track whose slowest tempo is 8 is not rendered (allowed: tempos from 0.25 to 4 on a track with a moving tempo or pitch lane)"),
        ] {
            for extra in [["--dry-run"], ["-o", out]] {
                let r = try MixFXBinary.run(["render", a] + args + extra)
                #expect(r.status == 2 && r.stderr == message + "\n", "\(args): \(r.stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: out))
        // the usage line, the man page and the completions come from the flag tables
        let help = try MixFXBinary.run(["render", "--help"]).stdout
        #expect(help.contains("[--automate [N:]KEY=VALUE@TIME,...]...") && help.contains("[--pitchmap [N:]FILE]..."))
        let man = try MixFXBinary.run(["--man-page"])
        #expect(man.stdout.contains(#"[\-\-automate [N:]KEY=VALUE@TIME,...]..."#) && man.stdout.contains(#"[\-\-pitchmap [N:]FILE]..."#), "\(man.stderr)")
        let bash = try MixFXBinary.run(["--completions", "bash"]).stdout
        #expect(bash.contains("--automate") && bash.contains("--pitchmap) _mixfx_files"))
        dir.remove()
    }

    // MARK: dry run

    @Test func theDryRunListsTheLanes() throws {
        defer { dir.remove() }
        let a = try sine("a.wav", seconds: 0.5), b = try sine("b.wav", seconds: 0.5)
        let args = ["render", a, b, "--dry-run", "--automate", "2:pitch=0@0,2st@4", "--automate", "volume=0dB@0.5,-20dB@1:01.5",
                    "--automate", "master-volume=1@0,step,0.5@1", "--track", "1:volume=0.5", "--automate", "1:pan=-1@0,scurve,1@2"]
        let r = try MixFXBinary.run(args)
        #expect(r.status == 0, "\(r.stderr)")
        let lanes = r.stdout.split(separator: "\n").filter { $0.hasPrefix("lane ") }
        #expect(lanes == [
            "lane     track 1 volume: 1 (+0.0 dB) @ 0.5 s db → 0.1 (-20.0 dB) @ 61.5 s; from 0.1 (-20.0 dB) to 1 (+0.0 dB)",
            "lane     track 1 pan: -1 @ 0 s scurve → 1 @ 2 s; from -1 to 1",
            "lane     track 2 pitch: 0 cents @ 0 s linear → +200 cents @ 4 s; from 0 cents to +200 cents",
            "lane     track 2 volume: 1 (+0.0 dB) @ 0.5 s db → 0.1 (-20.0 dB) @ 61.5 s; from 0.1 (-20.0 dB) to 1 (+0.0 dB)",
            "lane     master-volume: 1 (+0.0 dB) @ 0 s step → 0.5 (-6.0 dB) @ 1 s; from 0.5 (-6.0 dB) to 1 (+0.0 dB)",
        ], "\(r.stdout)")
        let j = try MixFXBinary.run(args + ["--json"])
        let obj = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as! [String: Any]
        let auto = obj["automation"] as! [[String: Any]]
        #expect(auto.count == 5)
        #expect(auto[2]["track"] as? Int == 2 && auto[2]["parameter"] as? String == "pitch" && auto[2]["unit"] as? String == "cents")
        #expect(auto[2]["minimum"] as? Double == 0 && auto[2]["maximum"] as? Double == 200)
        let bp = auto[2]["breakpoints"] as! [[String: Any]]
        #expect(bp.count == 2 && bp[0]["seconds"] as? Double == 0 && bp[0]["curve"] as? String == "linear" && bp[1]["value"] as? Double == 200 && bp[1]["curve"] == nil)
        #expect(auto[4]["track"] == nil && auto[4]["parameter"] as? String == "master-volume")
        // without lanes the listing is empty
        let none = try MixFXBinary.run(["render", a, "--dry-run", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(none.stdout.utf8)) as! [String: Any])["automation"] as? [Any] != nil)
        #expect(!(try MixFXBinary.run(["render", a, "--dry-run"])).stdout.contains("lane "))
    }

    // MARK: presets

    /// The lanes of the command line and of the preset `--print-preset` writes render the same
    /// bytes; the printed preset, read and printed again, is the same text; a preset's lane
    /// errors name the field.
    @Test func thePresetRoundTripIsExact() throws {
        defer { dir.remove() }
        let a = try write("a.wav", [Signals.noise(frames: 48_000, amplitude: 0.3, seed: 4)])
        let b = try sine("b.wav", seconds: 1.2)
        let lanes = ["--automate", "2:pitch=0@0.1,scurve,-1.5st@0.9", "--automate", "1:volume=-6dB@0.1,exp,-13.3dB@0.7",
                     "--automate", "pan=-0.3333333333333@0,1@1.23456789", "--automate", "1:treble-freq=2000@0,9000@1",
                     "--automate", "master-volume=1@0,step,0.7@0.5"]
        let direct = dir.file("direct.wav"), viaPreset = dir.file("preset.wav"), preset = dir.file("p.json")
        var r = try MixFXBinary.run(["render", a, b, "-o", direct, "--sample-format", "f32", "-q"] + lanes)
        #expect(r.status == 0, "\(r.stderr)")
        r = try MixFXBinary.run(["render", a, b, "--print-preset"] + lanes)
        try r.stdout.write(toFile: preset, atomically: true, encoding: .utf8)
        #expect(r.stdout.contains("\"schemaVersion\" : 3") && r.stdout.contains("\"automation\""))
        r = try MixFXBinary.run(["render", a, b, "-o", viaPreset, "--sample-format", "f32", "-q", "--preset", preset])
        #expect(r.status == 0, "\(r.stderr)")
        let x = try Data(contentsOf: URL(fileURLWithPath: direct)), y = try Data(contentsOf: URL(fileURLWithPath: viaPreset))
        #expect(x == y && x.count > 57_600 * 4)   // (a mono mix of 1.2 s, f32)
        let again = try MixFXBinary.run(["render", a, b, "--preset", preset, "--print-preset"]).stdout
        #expect(again == (try String(contentsOfFile: preset, encoding: .utf8)))
        // and the lanes moved the sound: without them the bytes differ
        let plain = dir.file("plain.wav")
        _ = try MixFXBinary.run(["render", a, b, "-o", plain, "--sample-format", "f32", "-q"])
        let plainBytes = try Data(contentsOf: URL(fileURLWithPath: plain))
        #expect(plainBytes != x)
        // a preset without lanes is still written as version 2
        #expect(try MixFXBinary.run(["render", a, "--print-preset"]).stdout.contains("\"schemaVersion\" : 2"))

        // the section in the library: field paths in errors, "all", version 2 ignores it
        func problem(_ json: String) -> String {
            var w: [String] = []
            do { _ = try Preset.parse(Data(json.utf8), source: "t", warnings: &w); return "" } catch { return error.description }
        }
        let lane = #"{"track": 1, "parameter": "pitch", "breakpoints": [{"seconds": 0, "value": 0}, {"seconds": 1, "value": 100}]}"#
        #expect(problem(#"{"schemaVersion": 3, "automation": [\#(lane), {"parameter": "pitch", "breakpoints": []}]}"#)
                == "preset 't': automation[1].track: missing (a track number from 1, or \"all\"; pitch is a track's)")
        #expect(problem(#"{"schemaVersion": 3, "automation": [{"track": 1, "parameter": "pich", "breakpoints": []}]}"#)
                .hasPrefix("preset 't': automation[0].parameter: \"pich\" is not a parameter (did you mean 'pitch'?; allowed: bass, treble, pitch,"))
        #expect(problem(#"{"schemaVersion": 3, "automation": [{"track": 1, "parameter": "pitch", "breakpoints": [{"seconds": 0, "value": 0}, {"seconds": 1, "value": 3000}]}]}"#)
                == "preset 't': automation[0].breakpoints[1].value: 3000 is above 2400 (allowed: from -2400 to 2400 cents)")
        #expect(problem(#"{"schemaVersion": 3, "automation": [{"track": 1, "parameter": "pitch", "breakpoints": [{"seconds": 1, "value": 0}, {"seconds": 0.5, "value": 1}]}]}"#)
                == "preset 't': automation[0].breakpoints[1]: 0.5 s is not after breakpoint 1 at 1 s (allowed: times that increase from one breakpoint to the next)")
        #expect(problem(#"{"schemaVersion": 3, "automation": [{"track": 1, "parameter": "pitch", "breakpoints": [{"seconds": 0, "value": 0, "curve": "cubic"}]}]}"#)
                == "preset 't': automation[0].breakpoints[0].curve: \"cubic\" is not a curve (allowed: step, linear, db, exp, scurve)")
        #expect(problem(#"{"schemaVersion": 3, "automation": [{"track": 2, "parameter": "master-volume", "breakpoints": [{"seconds": 0, "value": 1}]}]}"#)
                == "preset 't': automation[0].track: master-volume is the master bus's: give no track")
        #expect(problem(#"{"schemaVersion": 3, "automation": [\#(lane), \#(lane)]}"#)
                == "preset 't': automation[1]: a second lane for track 1 pitch (the first is automation[0])")
        var w: [String] = []
        let all = try Preset.parse(Data(#"{"schemaVersion": 3, "automation": [{"track": "all", "parameter": "volume", "breakpoints": [{"seconds": 0, "value": 1}, {"seconds": 1, "value": 0.5}]}]}"#.utf8), source: "t", warnings: &w)
        #expect(all.automation == [PresetLane(target: .everyTrack, id: .volume, lane: AutomationLane([(0, 1), (1, 0.5)], curve: .db))])
        let old = try Preset.parse(Data(#"{"schemaVersion": 2, "automation": [\#(lane)]}"#.utf8), source: "t", warnings: &w)
        #expect(old.automation.isEmpty && w == ["preset 't': automation needs schemaVersion 3 (this preset says 2; ignored)"])
    }

    // MARK: measured in the output

    /// `--automate volume=...` on a constant signal: every sample of the f32 file is the lane's
    /// formula, v(t) = 10^((g₀ + (g₁ − g₀)·u)/20) on the db segment, linear on the next.
    @Test func aVolumeRampIsItsFormulaInTheFile() throws {
        defer { dir.remove() }
        let n = 48_000
        let a = try write("dc.wav", [[Float](repeating: 0.5, count: n)])
        let out = dir.file("ramp.wav")
        let r = try MixFXBinary.run(["render", a, "-o", out, "--sample-format", "f32", "-q",
                                     "--automate", "volume=-12dB@0.1,0dB@0.6,linear,0.25@0.9"])
        #expect(r.status == 0, "\(r.stderr)")
        let (y, f) = try AudioFiles.read(out)
        #expect(f.frameCount == n)
        func formula(_ t: Double) -> Double {
            if t <= 0.1 { return pow(10, -12.0 / 20) }
            if t < 0.6 { return pow(10, (-12 + 12 * (t - 0.1) / 0.5) / 20) }
            if t < 0.9 { return 1 + (0.25 - 1) * (t - 0.6) / 0.3 }
            return 0.25
        }
        var worst = 0.0
        for i in 0..<n { worst = max(worst, abs(Double(y[0][i]) - 0.5 * formula(Double(i) / 48_000))) }
        #expect(worst < 1e-7, "\(worst) off the formula")   // (the float's rounding: 0.5·2⁻²⁴ = 3e-8)
        #expect(y[0][0] == Float(0.5 * pow(10, -12.0 / 20)) && y[0][n - 1] == 0.125)
    }

    /// `--automate pitch=0@0,2st@4` (the issue's sweep: +200 cents over 4 s): a 440 Hz sine's
    /// frequency in the file follows the lane within 1 cent wherever the vocoder's glide has
    /// settled (0.17 s windows, away from the start and the corner at 4 s).
    @Test func aPitchSweepFromTheCommandLineFollowsItsLane() throws {
        defer { dir.remove() }
        let a = try sine("s.wav", seconds: 5), out = dir.file("sweep.wav")
        let r = try MixFXBinary.run(["render", a, "-o", out, "--sample-format", "f32", "-q", "--automate", "pitch=0@0,2st@4"])
        #expect(r.status == 0, "\(r.stderr)")
        let y = try AudioFiles.read(out).channels[0]
        let w = 8192
        var worst = 0.0, at = 0.0
        for centre in stride(from: 0.3, through: 4.7, by: 0.1) where abs(centre - 4) > 0.25 {
            let c = Int(centre * 48_000)
            let f = Signals.frequency(y[(c - w / 2)..<(c + w / 2)], sampleRate: 48_000)
            let e = abs(Signals.cents(f, 440 * pow(2, min(centre, 4) * 50 / 1200)))
            if e > worst { worst = e; at = centre }
        }
        #expect(worst < 1, "\(worst) cents off the lane at \(at) s")
    }

    // MARK: --pitchmap

    /// Rubber Band's map on placed and trimmed tracks: source frame F of a track at start S,
    /// trimmed from frame I, is heard at (round(S·R) + F − I)/R; lines before the trim set the
    /// start's value; lines past the segment are dropped; offsets add to the track's --pitch.
    @Test func aPitchMapLandsOnTheTimelineOfEachTrack() throws {
        defer { dir.remove() }
        let a = try sine("a.wav", seconds: 2), b = try sine("b.wav", seconds: 2, rate: 44_100)
        let map = dir.file("map.txt")
        try "0 0\n  48000 2\n\n24000\t-1\n96000 5\n".write(toFile: map, atomically: true, encoding: .utf8)
        func lanes(_ args: [String]) throws -> [String] {
            let r = try MixFXBinary.run(["render", a, b, "--dry-run"] + args)
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n").filter { $0.hasPrefix("lane ") }.map(String.init)
        }
        // every track: a at 48 kHz, b at 44.1 kHz (frames of its own file), b's pitch +50
        #expect(try lanes(["--pitchmap", map, "--track", "2:pitch=50"]) == [
            "lane     track 1 pitch: 0 cents @ 0 s step → -100 cents @ 0.5 s step → +200 cents @ 1 s; from -100 cents to +200 cents",
            "lane     track 2 pitch: +50 cents @ 0 s step → -50 cents @ \(fmt(24_000 / 44_100.0)) s step → +250 cents @ \(fmt(48_000 / 44_100.0)) s; from -50 cents to +250 cents",
        ])
        // track 1 placed at 0.25 s and trimmed from 0.5 s: frame 24000 is the segment's start
        #expect(try lanes(["--pitchmap", "1:" + map, "--track", "1:start=0.25,trim=0.5..1.75"]) == [
            "lane     track 1 pitch: -100 cents @ 0 s step → +200 cents @ 0.75 s; from -100 cents to +200 cents",
        ])
        // at speed 2 a frame is heard at F/(2R); the line at the file's end (96000) is dropped
        #expect(try lanes(["--pitchmap", "1:" + map, "--track", "1:speed=2"]) == [
            "lane     track 1 pitch: 0 cents @ 0 s step → -100 cents @ 0.25 s step → +200 cents @ 0.5 s; from -100 cents to +200 cents",
        ])
        // at a steady tempo 1.25, frame F is heard at F/(1.25·R); with a time map (48000 → 72000,
        // then tempo 1), at T(F)/R: frames 24000 and 48000 at 0.75 s and 1.5 s
        #expect(try lanes(["--pitchmap", "1:" + map, "--track", "1:tempo=1.25"]) == [
            "lane     track 1 pitch: 0 cents @ 0 s step → -100 cents @ 0.4 s step → +200 cents @ 0.8 s; from -100 cents to +200 cents",
        ])
        let timeMap = dir.file("time.txt")
        try "48000 72000\n".write(toFile: timeMap, atomically: true, encoding: .utf8)
        let mapped = try lanes(["--pitchmap", "1:" + map, "--timemap", "1:" + timeMap])
        #expect(mapped.contains("lane     track 1 pitch: 0 cents @ 0 s step → -100 cents @ 0.75 s step → +200 cents @ 1.5 s; from -100 cents to +200 cents"), "\(mapped)")
        // a moving tempo lane of --automate cannot place its frames: refused by name
        let moving = try MixFXBinary.run(["render", a, "--dry-run", "--pitchmap", map, "--automate", "tempo=1@0,2@1"])
        #expect(moving.status == 2 && moving.stderr.contains("track 1 follows a moving tempo lane, which does not place a pitch map's source frames on the timeline"), "\(moving.stderr)")
        // a long map: the listing shows its first 8 and last 2 breakpoints; --json has them all
        try (0..<30).map { "\($0 * 1000) \(Double($0) / 10)" }.joined(separator: "\n").write(toFile: map, atomically: true, encoding: .utf8)
        let long = try lanes(["--pitchmap", "1:" + map])
        #expect(long.count == 1 && long[0].contains("+70 cents @ 0.145833 s step → … (30 breakpoints) … +280 cents @ 0.583333 s step → +290 cents @ 0.604167 s;"), "\(long)")
        let j = try MixFXBinary.run(["render", a, "--dry-run", "--json", "--pitchmap", map])
        let auto = (try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as! [String: Any])["automation"] as! [[String: Any]]
        #expect((auto[0]["breakpoints"] as! [Any]).count == 30)
        // errors: the file and line, the track and what is allowed
        try "0 0\n48000 two\n".write(toFile: map, atomically: true, encoding: .utf8)
        var r = try MixFXBinary.run(["render", a, "--dry-run", "--pitchmap", map])
        #expect(r.status == 2 && r.stderr == "mixfx: error: --pitchmap: \(map), line 2: 'two' is not a number (write it in decimal, e.g. -3 or 0.5)\n", "\(r.stderr)")
        try "0 0\n-5 1\n".write(toFile: map, atomically: true, encoding: .utf8)
        r = try MixFXBinary.run(["render", a, "--dry-run", "--pitchmap", map])
        #expect(r.stderr == "mixfx: error: --pitchmap: \(map), line 2: '-5' is not a frame number (a whole number from 0)\n", "\(r.stderr)")
        try "0 0\n100 30\n".write(toFile: map, atomically: true, encoding: .utf8)
        r = try MixFXBinary.run(["render", a, "--dry-run", "--pitchmap", map])
        #expect(r.stderr == "mixfx: error: --pitchmap: \(map), line 2: track 1 (\(a)): 30 semitones on the track's 0 cents is 3000 cents: 3000 is above 2400 (allowed: from -2400 to 2400 cents)\n", "\(r.stderr)")
        r = try MixFXBinary.run(["render", a, "--dry-run", "--pitchmap", map, "--automate", "pitch=0@0"])
        #expect(r.stderr.contains("both give track 1 a pitch lane: give one"), "\(r.stderr)")
        r = try MixFXBinary.run(["render", a, "--dry-run", "--pitchmap", dir.file("missing.txt")])
        #expect(r.status == 2 && r.stderr == "mixfx: error: --pitchmap: \(dir.file("missing.txt")): no such file\n", "\(r.stderr)")
    }

    /// The same map through `rubberband --pitchmap` and `mixfx --pitchmap`: a 440 Hz sine,
    /// +2 semitones at frame 48000, −1.5 at 96000. mixfx's pitch in each segment is the map's
    /// within 1 cent; each step's time (where the new tone dominates, 10 ms windows) is printed
    /// beside rubberband's.
    @Test(.enabled(if: which("rubberband") != nil, "rubberband is not installed (apt-get install rubberband-cli)"))
    func aPitchMapAgainstRubberBand() throws {
        defer { dir.remove() }
        let a = try sine("s.wav", seconds: 3), map = dir.file("map.txt")
        try "0 0\n48000 2\n96000 -1.5\n".write(toFile: map, atomically: true, encoding: .utf8)
        let ours = dir.file("mixfx.wav"), theirs = dir.file("rubberband.wav")
        let r = try MixFXBinary.run(["render", a, "-o", ours, "--sample-format", "f32", "-q", "--pitchmap", map])
        #expect(r.status == 0, "\(r.stderr)")
        let rb = try runProcess(which("rubberband")!, ["-q", "--pitchmap", map, a, theirs])
        #expect(rb.status == 0, "\(rb.stderr)")
        let y = try AudioFiles.read(ours).channels[0], z = try AudioFiles.read(theirs).channels[0]
        #expect(y.count == 144_000)
        let steps = [0.0, 2, -1.5]
        var report: [String] = []
        for (k, st) in steps.enumerated() {
            let expected = 440 * pow(2, st / 12)
            let c = Int((Double(k) + 0.5) * 48_000), w = 8192
            let fy = Signals.frequency(y[(c - w / 2)..<(c + w / 2)], sampleRate: 48_000)
            let fz = Signals.frequency(z[(c - w / 2)..<(c + w / 2)], sampleRate: 48_000)
            #expect(abs(Signals.cents(fy, expected)) < 1, "segment \(k): mixfx \(fy) Hz, the map \(expected) Hz")
            // (rubberband's realtime pitch wavers by tens of cents; the same map, read alike)
            #expect(abs(Signals.cents(fz, expected)) < 25, "segment \(k): rubberband \(fz) Hz, the map \(expected) Hz")
            report.append(String(format: "segment %d: map %.3f Hz, mixfx %+.3f cents, rubberband %+.3f cents", k, expected,
                                 Signals.cents(fy, expected), Signals.cents(fz, expected)))
        }
        for (k, frame) in [48_000, 96_000].enumerated() {
            let old = 440 * pow(2, steps[k] / 12), new = 440 * pow(2, steps[k + 1] / 12)
            let dy = Signals.dominance(y, from: frame, oldHz: old, newHz: new, sampleRate: 48_000)
            let dz = Signals.dominance(z, from: frame, oldHz: old, newHz: new, sampleRate: 48_000)
            #expect(dy != nil && abs(dy!) <= 960, "mixfx's step at \(frame) lands \(dy.map(String.init) ?? "nowhere") frames off")   // 20 ms
            #expect(dz != nil && abs(dz!) <= 9600, "rubberband's step at \(frame) lands \(dz.map(String.init) ?? "nowhere") frames off")
            report.append(String(format: "step at frame %d: the new tone dominates at %+.1f ms (mixfx), %+.1f ms (rubberband)", frame,
                                 Double(dy ?? 0) / 48, Double(dz ?? 0) / 48))
        }
        print("pitchmap vs rubberband:\n  " + report.joined(separator: "\n  "))
    }

    /// A batch job takes the same flags (a pitch map's path from the manifest's folder): the map
    /// renders the very bytes of the step lane it stands for; `mixfx play` refuses a tempo lane
    /// beyond the live tempos in the engine's words.
    @Test func batchAndPlayTakeTheSameFlags() throws {
        defer { dir.remove() }
        let a = try sine("s.wav", seconds: 1.5)
        try FileManager.default.createDirectory(atPath: dir.file("maps"), withIntermediateDirectories: true)
        try "0 0\n24000 2\n48000 -1.5\n".write(toFile: dir.file("maps/m.txt"), atomically: true, encoding: .utf8)
        let manifest = dir.file("jobs.jsonl")
        try """
        {"tracks": ["s.wav"], "output": "map.wav", "args": ["--pitchmap", "1:maps/m.txt", "--sample-format", "f32"]}
        {"tracks": ["s.wav"], "output": "lane.wav", "args": ["--automate", "pitch=0@0,step,2st@0.5,step,-1.5st@1", "--sample-format", "f32"]}
        """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let r = try MixFXBinary.run(["batch", manifest], cwd: NSTemporaryDirectory())
        #expect(r.status == 0, "\(r.stderr)")
        let x = try Data(contentsOf: URL(fileURLWithPath: dir.file("map.wav"))), y = try Data(contentsOf: URL(fileURLWithPath: dir.file("lane.wav")))
        #expect(x == y && x.count > 72_000 * 4)
        let p = try MixFXBinary.run(["play", a, "--no-ui", "--device", "null", "--automate", "tempo=1@0,5@1"])
        // a ceiling lane with no limiter: the flag that adds one is named
        let noLimit = try MixFXBinary.run(["render", a, "--automate", "limit=-1@0,-6@1", "-o", dir.file("nolimit.wav")])
        #expect(noLimit.status == 2 && noLimit.stderr == "mixfx: error: limit lane: the ceiling moves only on a master limiter, and the session has none (allowed: with --limit [CEILING], or \"master.limitDBTP\" in a preset)\n", "\(noLimit.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("nolimit.wav")))
        #expect(p.status == 2 && p.stderr == "mixfx: error: track 1 (\(a)) time-pitch tempo lane: a moving tempo lane on a track whose fastest tempo is 5 is not rendered (allowed: tempos from 0.25 to 4 on a track with a moving tempo or pitch lane)\n", "\(p.stderr)")
    }

    // MARK: the report

    /// `--report FILE.html` draws each lane against time (one plot per lane, on the loudness
    /// plot's time axis); the points read back from the SVG are the lane's values; the JSON
    /// carries the lanes and follows the schema (version 2).
    /// Mute and solo lanes from the command line: `--dry-run` lists them, `--print-preset`
    /// writes them (steps of 0 and 1) and the render of the printed preset is the same bytes,
    /// the report draws them; a lane all 1 renders `--mute`'s bytes; other values and curves
    /// are refused naming the lane, the breakpoint and what is allowed.
    @Test func muteAndSoloLanesRoundTripAndAreDrawn() throws {
        defer { dir.remove() }
        let a = try sine("a.wav", seconds: 1.5), b = try sine("b.wav", hz: 660, seconds: 1.5)
        let lanes = ["--automate", "1:mute=off@0,on@0.4,off@0.9", "--automate", "2:solo=0@0,1@1.1"]
        let dry = try MixFXBinary.run(["render", a, b, "--dry-run"] + lanes)
        #expect(dry.stdout.split(separator: "\n").filter { $0.hasPrefix("lane ") } == [
            "lane     track 1 mute: 0 @ 0 s step → 1 @ 0.4 s step → 0 @ 0.9 s; from 0 to 1",
            "lane     track 2 solo: 0 @ 0 s step → 1 @ 1.1 s; from 0 to 1",
        ], "\(dry.stdout)")
        let direct = dir.file("direct.wav"), viaPreset = dir.file("preset.wav"), preset = dir.file("p.json"), html = dir.file("r.html")
        var r = try MixFXBinary.run(["render", a, b, "-o", direct, "--sample-format", "f32", "-q", "--report", html] + lanes)
        #expect(r.status == 0, "\(r.stderr)")
        r = try MixFXBinary.run(["render", a, b, "--print-preset"] + lanes)
        try r.stdout.write(toFile: preset, atomically: true, encoding: .utf8)
        let printed = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let auto = printed["automation"] as! [[String: Any]]
        #expect(auto.map { $0["parameter"] as? String } == ["mute", "solo"])
        let bp = auto[0]["breakpoints"] as! [[String: Any]]
        #expect(bp.map { $0["value"] as? Double } == [0, 1, 0] && bp.map { $0["curve"] as? String } == ["step", "step", nil])
        r = try MixFXBinary.run(["render", a, b, "-o", viaPreset, "--sample-format", "f32", "-q", "--preset", preset])
        #expect(r.status == 0, "\(r.stderr)")
        let x = try Data(contentsOf: URL(fileURLWithPath: direct)), y = try Data(contentsOf: URL(fileURLWithPath: viaPreset))
        #expect(x == y && x.count > 72_000 * 4)
        // the lanes change the sound; a mute lane all 1 is --mute
        let plain = dir.file("plain.wav"), muted = dir.file("muted.wav"), laneMuted = dir.file("lane-muted.wav")
        _ = try MixFXBinary.run(["render", a, b, "-o", plain, "--sample-format", "f32", "-q"])
        let plainBytes = try Data(contentsOf: URL(fileURLWithPath: plain))
        #expect(plainBytes != x)
        _ = try MixFXBinary.run(["render", a, b, "-o", muted, "--sample-format", "f32", "-q", "--track", "1:mute=on"])
        _ = try MixFXBinary.run(["render", a, b, "-o", laneMuted, "--sample-format", "f32", "-q", "--automate", "1:mute=1@0,1@1"])
        let m = try Data(contentsOf: URL(fileURLWithPath: muted)), lm = try Data(contentsOf: URL(fileURLWithPath: laneMuted))
        let pl = try Data(contentsOf: URL(fileURLWithPath: plain))
        #expect(m == lm && m != pl)
        // the report draws each lane, a dot per breakpoint
        let page = try String(contentsOfFile: html, encoding: .utf8)
        for (id, count) in [("track1-mute-lane", 3), ("track2-solo-lane", 2)] {
            let g = try #require(page.range(of: "<g id=\"\(id)\""), "no plot \(id)")
            let end = try #require(page.range(of: "</g>", range: g.upperBound..<page.endIndex))
            #expect(page[g.lowerBound..<end.lowerBound].components(separatedBy: "class=\"breakpoint\"").count - 1 == count)
        }
        // refused: a value that is not a switch's, a curve other than step
        for (lane, message) in [
            ("1:mute=0@0,0.5@1", "--automate 1:mute, breakpoint 2: '0.5' is not on or off (allowed: on or off, 1 or 0)"),
            ("1:solo=0@0,linear,1@1", "--automate 1:solo, breakpoint 1: the linear curve does not apply to solo (a switch: off or on) (allowed: for solo: step)"),
        ] {
            let e = try MixFXBinary.run(["render", a, "--dry-run", "--automate", lane])
            #expect(e.status != 0 && e.stderr.contains(message), "\(e.stderr)")
        }
        var w: [String] = []
        do {
            _ = try Preset.parse(Data(#"{"schemaVersion": 3, "automation": [{"track": 1, "parameter": "mute", "breakpoints": [{"seconds": 0, "value": 0}, {"seconds": 1, "value": 2}]}]}"#.utf8),
                                 source: "t", warnings: &w)
            Issue.record("a mute of 2 was taken")
        } catch {
            #expect(error.description == "preset 't': automation[0].breakpoints[1].value: 2 is not 0 or 1 (allowed: 0 (off) or 1 (on), or false or true)",
                    "\(error)")
        }
    }

    @Test func theReportDrawsEachLane() throws {
        defer { dir.remove() }
        let a = try sine("a.wav", seconds: 2), b = try sine("b.wav", seconds: 2)
        let html = dir.file("r.html"), json = dir.file("r.json")
        let lanes = ["--automate", "2:pitch=0@0,step,100@0.5,200@1.5", "--automate", "1:volume=0dB@0.2,-20dB@1.8", "--automate", "master-volume=1@0,0.5@1"]
        var r = try MixFXBinary.run(["render", a, b, "-o", dir.file("m.wav"), "-q", "--report", html] + lanes)
        #expect(r.status == 0, "\(r.stderr)")
        r = try MixFXBinary.run(["render", a, b, "-o", dir.file("m2.wav"), "-q", "--report", json] + lanes)
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        // the lanes' plots come right after the loudness plot
        let loudness = try #require(page.range(of: "id=\"loudness\""))
        let lanesAt = try #require(page.range(of: "<h2>Automation</h2>"))
        let truePeak = try #require(page.range(of: "<h2>Mix true peak</h2>"))
        #expect(loudness.upperBound < lanesAt.lowerBound && lanesAt.upperBound < truePeak.lowerBound)
        let expected: [(id: String, lane: AutomationLane, scale: AutomationScale)] = [
            ("track1-volume-lane", AutomationLane([(0.2, 1), (1.8, 0.1)], curve: .db), .linearGain),
            ("track2-pitch-lane", AutomationLane([.init(seconds: 0, value: 0, curve: .step), .init(seconds: 0.5, value: 100), .init(seconds: 1.5, value: 200)]), .linear),
            ("master-volume-lane", AutomationLane([(0, 1), (1, 0.5)], curve: .db), .linearGain),
        ]
        for e in expected {
            let g = try #require(page.range(of: "<g id=\"\(e.id)\""), "no plot \(e.id)")
            let end = try #require(page.range(of: "</g>", range: g.upperBound..<page.endIndex))
            let group = String(page[g.lowerBound..<end.lowerBound])
            func attr(_ name: String) -> Double { Double(group.components(separatedBy: "\(name)=\"")[1].prefix { $0 != "\"" })! }
            let (xMax, yMin, yMax) = (attr("data-xmax"), attr("data-ymin"), attr("data-ymax"))
            let (left, top, w, h) = (attr("data-left"), attr("data-top"), attr("data-width"), attr("data-height"))
            let points = group.components(separatedBy: "points=\"")[1].prefix { $0 != "\"" }.split(separator: " ").map { p in
                let xy = p.split(separator: ",").map { Double($0)! }
                return (t: (xy[0] - left) / w * xMax, v: yMax - (xy[1] - top) / h * (yMax - yMin))
            }
            #expect(points.count >= 3 && points.first!.t == 0 && abs(points.last!.t - 2) < 1e-9, "\(e.id)")
            var worst = 0.0
            for (k, p) in points.enumerated() {
                // (a step's vertical: its first point holds the value before)
                let before = k + 1 < points.count && abs(points[k + 1].t - p.t) < 1e-6
                let v = e.lane.value(at: before ? p.t - 1e-9 : p.t, scale: e.scale)
                worst = max(worst, abs(p.v - v) / (yMax - yMin))
            }
            #expect(worst < 0.01, "\(e.id): points off the lane by \(worst) of the axis")   // (pixels rounded to 0.01)
            #expect(group.components(separatedBy: "class=\"breakpoint\"").count - 1 == e.lane.breakpoints.count)
        }
        // the settings table says which settings a lane replaces
        let pitchRow = try #require(page.components(separatedBy: "<tr data-key=\"pitch\">").dropFirst().first?.components(separatedBy: "</tr>").first)
        #expect(pitchRow.hasSuffix("<td>0</td><td>0 (lane)</td>"), "\(pitchRow)")
        #expect(page.contains("<tr data-key=\"master.volume\"><th>master volume (×)</th><td colspan=\"2\">1 (lane)</td></tr>"))
        // the JSON report: the same lanes, valid against the schema
        let obj = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as! [String: Any]
        #expect(obj["reportVersion"] as? Int == 2)
        let auto = obj["automation"] as! [[String: Any]]
        #expect(auto.map { $0["parameter"] as! String } == ["volume", "pitch", "master-volume"])
        #expect(auto.map { $0["track"] as? Int } == [1, 2, nil])
        let schema = try JSONSerialization.jsonObject(with: Data(try MixFXBinary.run(["render", "--report-schema"]).stdout.utf8)) as! [String: Any]
        let problems = JSONSchemaCheck(schema: schema).violations(obj)
        #expect(problems.isEmpty, "\(problems)")
    }
}
