import Foundation
import Testing
import MixFX
import TestSupport

/// Errors name the user's flag, file or preset field; parsing is strict where leniency hides
/// mistakes; --json is JSON in every case.
@Suite struct CLIConsistencyTests {
    let dir = TempDir("mixfx-cli-consistency")

    func input(rate: Int = 44_100) throws -> String {
        let path = dir.file("in-\(rate).wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: Double(rate), frames: rate / 2, amplitude: 0.3)], to: path, sampleRate: rate)
        return path
    }

    func json(_ text: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
    }

    @Test func aDefaultTheUserNeverSetIsNamedByItsFlag() throws {
        defer { dir.remove() }
        let r = try MixFXBinary.run(["render", try input(rate: 8000), "--treble", "3", "--dry-run"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--treble-freq") && r.stderr.contains("that is the default") && !r.stderr.contains("trebleFrequencyHz"), "\(r.stderr)")
    }

    @Test func switchesTakeTheDocumentedForms() throws {
        defer { dir.remove() }
        let x = try input()
        for (args, on) in [(["--formant", "on"], true), (["--formant", "off"], false), (["--formant"], true),
                           (["--formant=off"], false), (["--track", "1:formant=on"], true)] {
            let r = try MixFXBinary.run(["render", x, "--dry-run", "--json"] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            let tracks = try json(r.stdout)["tracks"] as? [[String: Any]]
            let settings = tracks?.first?["settings"] as? [String: Any]
            #expect(settings?["preserveFormants"] as? Bool == on, "\(args): \(String(describing: settings?["preserveFormants"]))")
        }
    }

    // (a decimal beyond the largest double, 1e400, is a number out of range: NumericEdgeTests)
    @Test(arguments: ["0x10", "inf", "nan", " 1", "1,5", "--", "1.2.3", "+-1", "e5"])
    func numbersAreDecimal(text: String) throws {
        defer { dir.remove() }
        let r = try MixFXBinary.run(["render", try input(), "--pitch=\(text)", "--dry-run"])
        #expect(r.status == 2 && r.stderr.contains("--pitch") && r.stderr.contains("not a number"), "\(text): \(r.stderr)")
    }

    @Test func decimalNumbersAreTaken() throws {
        defer { dir.remove() }
        for text in ["-300", "+2", "0.5", ".5", "5.", "1e2", "-1.5E+1"] {
            #expect(try MixFXBinary.run(["render", try input(), "--pitch=\(text)", "--dry-run"]).status == 0, "\(text)")
        }
    }

    /// A UTF-8 byte-order mark before a preset or a manifest (as some Windows editors save
    /// them) is skipped, as JSON's RFC 8259 allows; it was "unexpected character 'ï'".
    @Test func aByteOrderMarkIsSkipped() throws {
        defer { dir.remove() }
        let x = try input()
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        try Data(bom + Array(#"{"schemaVersion": 1, "all": {"pitch": {"cents": 300}}}"#.utf8)).write(to: URL(fileURLWithPath: dir.file("p.json")))
        let preset = try MixFXBinary.run(["render", x, "--preset", dir.file("p.json"), "--dry-run"])
        #expect(preset.status == 0 && preset.stdout.contains("pitch +300 cents"), "\(preset.stderr)")
        try Data(bom + Array("{\"tracks\": [\"\(x)\"], \"output\": \"\(dir.file("o.wav"))\"}\n".utf8)).write(to: URL(fileURLWithPath: dir.file("m.jsonl")))
        let batch = try MixFXBinary.run(["batch", dir.file("m.jsonl"), "--quiet"])
        #expect(batch.status == 0 && FileManager.default.fileExists(atPath: dir.file("o.wav")), "\(batch.stderr)")
    }

    @Test func presetsAreStandardJSONAndSmall() throws {
        defer { dir.remove() }
        let x = try input()
        let cases: [(String, String)] = [
            (#"{"schemaVersion": 1, "all": {"pitch": {"cents": 100,}}}"#, "trailing commas"),
            (#"{"schemaVersion": 1, "name": "a", "name": "b"}"#, "appears twice"),
            (#"{"schemaVersion": 1, "all": {"pitch": {"cents": NaN}}}"#, "line 1, column"),
            ("{\"schemaVersion\": 1,\n // a comment\n}", "line 2, column 2"),
            (#"{"schemaVersion": 01}"#, "leading zero"),
            ("{\"schemaVersion\": \u{00E9}}", "unexpected byte 0xC3"),
            // found by the preset fuzz target: describing a huge whole number trapped
            (#"{"schemaVersion": 1, "output": {"sampleRateHz": 1e300}}"#, "output.sampleRateHz: 1e+300 is not a whole number"),
            (#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#, "nested more than 64"),
        ]
        for (k, (text, words)) in cases.enumerated() {
            let path = dir.file("p\(k).json")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let r = try MixFXBinary.run(["render", x, "--preset", path, "--dry-run"])
            #expect(r.status == 2 && r.stderr.contains("p\(k).json") && r.stderr.contains(words), "\(text): \(r.stderr)")
        }
        // a 50 MB preset is refused at once, with the limit stated
        let huge = dir.file("huge.json")
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 50_000_000) == 0)
        let t0 = Date()
        let r = try MixFXBinary.run(["render", x, "--preset", huge, "--dry-run"])
        #expect(Date().timeIntervalSince(t0) < 2)
        #expect(r.status == 2 && r.stderr.contains("50000000 bytes") && r.stderr.contains("16384 KiB"), "\(r.stderr)")
        // a preset that is a FIFO does not block
        #expect(mkfifo(dir.file("fifo.json"), 0o644) == 0)
        let f = try MixFXBinary.run(["render", x, "--preset", dir.file("fifo.json"), "--dry-run"])
        #expect(f.status == 2 && f.stderr.contains("not a regular file"), "\(f.stderr)")
    }

    @Test func whatASessionIgnoresIsSaid() throws {
        defer { dir.remove() }
        let x = try input()
        let preset = dir.file("three.json")
        try Data(#"{"schemaVersion": 1, "tracks": [{}, {}, {"pitch": {"cents": 100}}]}"#.utf8).write(to: URL(fileURLWithPath: preset))
        let r = try MixFXBinary.run(["render", x, "--preset", preset, "--dry-run"])
        #expect(r.status == 0 && r.stderr.contains("warning") && r.stderr.contains("3 tracks") && r.stderr.contains("tracks[1]"), "\(r.stderr)")
        let ogg = try MixFXBinary.run(["render", x, "-o", dir.file("o.ogg"), "--sample-format", "s24", "--dry-run"])
        #expect(ogg.stderr.contains("lossy") && ogg.stderr.contains("--sample-format s24 is ignored"), "\(ogg.stderr)")
        let fl = try MixFXBinary.run(["render", x, "-o", dir.file("o.wav"), "--sample-format", "f32", "--dither", "tpdf", "--dry-run"])
        #expect(fl.stderr.contains("--dither tpdf applies to integer output only"), "\(fl.stderr)")
    }

    @Test func jsonIsJSONInEveryCase() throws {
        defer { dir.remove() }
        let x = try input()
        for (args, code) in [(["render", x, "--bass", "40", "--json"], 2), (["render", dir.file("missing.wav"), "--json"], 1),
                             (["render", "--json"], 2), (["render", x, "--frobnicate", "--json"], 2)] {
            let r = try MixFXBinary.run(args)
            #expect(r.status == Int32(code))
            let e = try json(r.stdout)["error"] as? [String: Any]
            #expect(e?["code"] as? Int == code && (e?["message"] as? String)?.isEmpty == false, "\(args): \(r.stdout)")
            #expect(r.stderr.hasPrefix("mixfx: error: "))
        }
        let help = try MixFXBinary.run(["--help"])
        #expect(help.stdout.contains("exit status") && help.stdout.contains("128+N") && help.stdout.contains("70"))
    }

    /// Every setting a render uses is in --print-preset, and the preset loads back to itself
    /// without a warning.
    @Test func printPresetRoundTripsEverything() throws {
        defer { dir.remove() }
        let x = try input()
        let first = try MixFXBinary.run(["render", x, x, "--print-preset", "--dither", "tpdf", "--strict", "--bass", "3",
                                         "--track", "2:mute=on,pitch=-300", "--master-volume", "0.5", "--sample-format", "s24",
                                         "--limit", "-2.5", "--normalize", "-16"])
        #expect(first.status == 0)
        let saved = dir.file("saved.json")
        try Data(first.stdout.utf8).write(to: URL(fileURLWithPath: saved))
        let obj = try json(first.stdout)
        let output = obj["output"] as? [String: Any]
        #expect(output?["dither"] as? String == "tpdf" && output?["clipping"] as? String == "fail" && output?["sampleFormat"] as? String == "s24")
        #expect(output?["normalizeLUFS"] as? Double == -16 && (obj["master"] as? [String: Any])?["limitDBTP"] as? Double == -2.5)
        let second = try MixFXBinary.run(["render", x, x, "--preset", saved, "--print-preset"])
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second.stderr)")
        #expect(second.stdout == first.stdout)
    }
}

extension CLIConsistencyTests {
    /// The same render gives the same bytes, whenever it runs (no time stamp in a float file's
    /// header: libsndfile's PEAK chunk is off).
    @Test func theSameRenderIsTheSameBytesLater() throws {
        defer { dir.remove() }
        let x = try input()
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        #expect(try MixFXBinary.run(["render", x, "-o", a, "--sample-format", "f32", "--pitch", "100", "-q"]).status == 0)
        usleep(1_100_000)
        #expect(try MixFXBinary.run(["render", x, "-o", b, "--sample-format", "f32", "--pitch", "100", "-q"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)))
    }
}
