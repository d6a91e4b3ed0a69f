import Foundation
import Testing
@testable import MixFXCLI
import MixFX
import TestSupport

/// Placement on the command line and in presets: `--track N:start=,trim=IN..OUT,fade-in=,fade-out=`,
/// `--trim`, times as seconds or mm:ss.s, schema version 2 (version 1 still read), and the live
/// control input refusing what is fixed at the start.
@Suite struct PlacementCLITests {
    let dir = TempDir("mixfx-placement")

    func input(_ name: String, seconds: Double, rate: Int = 48_000, seed: UInt64) throws -> (String, [Float]) {
        let x = Signals.noise(frames: Int(seconds * Double(rate)), amplitude: 0.3, seed: seed).map { ($0 * 32768).rounded() / 32768 }
        let path = dir.file(name)
        try AudioFiles.write([x], to: path, sampleRate: rate)
        return (path, x)
    }

    /// The frames `mixfx render INPUT ARGS --dry-run` says the mix will have.
    func framesOfDryRun(_ input: String, _ args: [String]) throws -> Int? {
        let r = try MixFXBinary.run(["render", input, "--dry-run", "--json"] + args)
        let obj = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return obj?["frames"] as? Int
    }

    @Test func placedTracksRenderToTheSample() throws {
        defer { dir.remove() }
        let (a, x) = try input("a.wav", seconds: 3, seed: 1)
        let (b, y) = try input("b.wav", seconds: 1, seed: 2)
        let out = dir.file("out.wav")
        // a: 0:01.5..0:02.5 of the file at 0.5 s; b: whole at 2 s
        let r = try MixFXBinary.run(["render", a, b, "-o", out, "--sample-format", "f32", "--json",
                                     "--track", "1:trim=0:01.5..0:02.5,start=0.5", "--track", "2:start=2"])
        #expect(r.status == 0, "\(r.stderr)")
        let (mix, format) = try AudioFiles.read(out)
        #expect(format.frameCount == 3 * 48_000)   // b ends at 2 + 1 s
        #expect(mix[0][..<24_000].allSatisfy { $0 == 0 })
        #expect(Array(mix[0][24_000..<72_000]) == Array(x[72_000..<120_000]))
        #expect(mix[0][72_000..<96_000].allSatisfy { $0 == 0 })
        #expect(Array(mix[0][96_000...]) == y)
    }

    @Test func timesTrimsAndPresetVersions() throws {
        defer { dir.remove() }
        let (a, _) = try input("a.wav", seconds: 2, seed: 3)
        func frames(_ args: [String]) throws -> Int? { try framesOfDryRun(a, args) }
        #expect(try frames(["--trim", "0.5.."]) == 72_000)
        #expect(try frames(["--trim", "..0:01.25"]) == 60_000)
        #expect(try frames(["--track", "1:trim=0.25..1,start=1:00"]) == 36_000 + 60 * 48_000)
        #expect(try frames(["--fade-in", "0.1", "--fade-out", "0:00.2"]) == 96_000)
        // errors name the flag and what is allowed
        for (args, words) in [(["--trim", "1..0.5"], "the end is not after the start"),
                              (["--trim", "0.5"], "is not IN..OUT"),
                              (["--track", "1:start=1:75"], "is not a time (seconds, mm:ss.s or h:mm:ss"),
                              (["--fade-in", "-1"], "--fade-in: -1 is below 0"),
                              (["--start", "2"], "unknown option --start"),
                              (["--track", "1:trim=3.."], "trim-in 3 s is at or past the end of the file (2 s)")] {
            let r = try MixFXBinary.run(["render", a, "--dry-run"] + args)
            #expect(r.status == 2 && r.stderr.contains(words), "\(args): \(r.stderr)")
        }
        // a version 2 preset with placement; a version 1 preset is read, placement there is not
        let v2 = dir.file("v2.json"), v1 = dir.file("v1.json")
        try #"{"schemaVersion": 2, "tracks": [{"placement": {"startSeconds": 1, "trimOutSeconds": 1}}]}"#.write(toFile: v2, atomically: true, encoding: .utf8)
        try #"{"schemaVersion": 1, "all": {"placement": {"startSeconds": 1}, "pitch": {"cents": 100}}}"#.write(toFile: v1, atomically: true, encoding: .utf8)
        #expect(try frames(["--preset", v2]) == 96_000)
        let r1 = try MixFXBinary.run(["render", a, "--dry-run", "--json", "--preset", v1])
        #expect(r1.status == 0 && r1.stderr.contains("all.placement.startSeconds needs schemaVersion 2 (this preset says 1; ignored)"), "\(r1.stderr)")
        // --print-preset writes version 2 and round-trips the placement
        let p = try MixFXBinary.run(["render", a, "--track", "1:trim=0.5..1.5,start=0.25,fade-out=0.1", "--print-preset"])
        let saved = dir.file("saved.json")
        try p.stdout.write(toFile: saved, atomically: true, encoding: .utf8)
        #expect(p.stdout.contains("\"schemaVersion\" : 2"))
        #expect(try frames(["--preset", saved]) == 60_000)
    }

    @Test func speedOnTheCommandLineAndInPresets() throws {
        defer { dir.remove() }
        let (a, _) = try input("a.wav", seconds: 1, seed: 5)
        func frames(_ args: [String]) throws -> Int? { try framesOfDryRun(a, args) }
        #expect(try frames(["--speed", "80%"]) == 60_000)
        #expect(try frames(["--speed", "0.8"]) == 60_000)
        #expect(try frames(["--track", "1:speed=2,start=0.5"]) == 24_000 + 24_000)
        let bad = try MixFXBinary.run(["render", a, "--speed", "5"])
        #expect(bad.status == 2 && bad.stderr.contains("--speed: 5 is above 4"), "\(bad.stderr)")
        let v2 = dir.file("v2.json")
        try #"{"schemaVersion": 2, "all": {"varispeed": {"rate": 0.5}}}"#.write(toFile: v2, atomically: true, encoding: .utf8)
        #expect(try frames(["--preset", v2]) == 96_000)
    }

    @Test func tempoOnTheCommandLineAndInPresets() throws {
        defer { dir.remove() }
        let (a, _) = try input("a.wav", seconds: 1, seed: 6)
        func frames(_ args: [String]) throws -> Int? { try framesOfDryRun(a, args) }
        #expect(try frames(["--tempo", "0.8"]) == 60_000)
        #expect(try frames(["--tempo", "125%"]) == 38_400)
        #expect(try frames(["--bpm", "120:96"]) == 60_000)
        #expect(try frames(["--track", "1:bpm=100:200,pitch=-300"]) == 24_000)
        #expect(try frames(["--tempo", "0.03125"]) == 48_000 * 32)
        for (args, words) in [(["--tempo", "40"], "--tempo: 40 is above 32"),
                              (["--bpm", "120"], "is not FROM:TO in beats per minute"),
                              (["--bpm", "120:0"], "both tempos must be above 0 BPM")] {
            let r = try MixFXBinary.run(["render", a, "--dry-run"] + args)
            #expect(r.status == 2 && r.stderr.contains(words), "\(args): \(r.stderr)")
        }
        let v2 = dir.file("v2.json")
        try #"{"schemaVersion": 2, "all": {"pitch": {"rate": 2}}}"#.write(toFile: v2, atomically: true, encoding: .utf8)
        #expect(try frames(["--preset", v2]) == 24_000)
        // the render itself: exactly round(n / R) frames, written
        let out = dir.file("slow.wav")
        let r = try MixFXBinary.run(["render", a, "--tempo", "0.75", "--pitch", "100", "-o", out, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try AudioFiles.read(out).format.frameCount == 64_000)
        // live playback takes 0.25…4 and says how to get beyond
        let live = try MixFXBinary.run(["play", a, "--tempo", "8", "--device", "null", "--no-ui"])
        #expect(live.status != 0 && live.stderr.contains("tempo 8.0: live playback takes tempos from 0.25 to 4.0 (render the session for tempos beyond)"), "\(live.stderr)")
        let played = try MixFXBinary.run(["play", a, "--tempo", "2", "--device", "null", "--no-ui", "--json"])
        #expect(played.status == 0, "\(played.stderr)")
    }

    @Test func theControlInputRefusesWhatIsFixedAtTheStart() throws {
        for line in ["track 1 start 2", "track 1 overlap 4", "track 1 fade-in 1", "track 1 speed 2"] {
            #expect { try ControlCommand.parse(line, trackCount: 1) } throws: { error in
                (error as? ControlCommand.ParseError)?.message.contains("fixed when playback starts") == true
            }
        }
        #expect(try ControlCommand.parse("track 1 pitch 100", trackCount: 1) != nil)
        #expect(try ControlCommand.parse("track 1 tempo 0.9", trackCount: 1) != nil)   // (live since the tempo is)
    }
}
