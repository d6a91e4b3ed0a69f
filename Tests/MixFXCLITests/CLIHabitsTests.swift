import Foundation
import Testing
@testable import MixFXCLI
import MixFX
import TestSupport

/// Issue #34's CLI habits: semitones and decibels on the command line, "did you mean" for a
/// mistyped flag or preset key, `mixfx help COMMAND`.
@Suite struct CLIHabitsTests {
    let dir = TempDir("mixfx-habits")

    func input(_ name: String = "in.wav", seed: UInt64 = 3) throws -> String {
        let path = dir.file(name)
        let chans = (0..<2).map { c in Signals.noise(frames: 11_025, amplitude: 0.2, seed: seed &+ UInt64(c)) }
        try AudioFiles.write(chans, to: path, sampleRate: 44_100, sampleFormat: .s16)
        return path
    }

    /// The bytes `mixfx render` writes for `args` (float output: nothing rounds a difference away).
    func render(_ tracks: [String], _ args: [String], _ name: String) throws -> Data {
        let out = dir.file(name)
        let r = try MixFXBinary.run(["render"] + tracks + args + ["-o", out, "--sample-format", "f32", "--quiet"])
        #expect(r.status == 0, "\(args): \(r.stderr)")
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    @Test func semitonesAreHundredsOfCents() throws {
        defer { dir.remove() }
        let a = try input()
        let cents = try render([a], ["--pitch", "200"], "c.wav")
        #expect(try render([a], ["--pitch", "2st"], "st.wav") == cents)
        #expect(try render([a], ["--pitch=200c"], "c2.wav") == cents)
        #expect(try render([a], ["--pitch", "200cents"], "c3.wav") == cents)
        #expect(try render([a], ["--pitch", "-0.5st"], "half.wav") == render([a], ["--pitch", "-50"], "half-c.wav"))
        // (the comparison can fail: another pitch is other bytes)
        #expect(try render([a], ["--pitch", "1st"], "one.wav") != cents)
        for (text, cents) in [("2st", 200.0), ("-0.5st", -50), ("24st", 2400), ("200c", 200), ("-7cents", -7), ("+1.25ST", 125)] {
            #expect(try SessionOptions.value(text, id: .pitchCents, flag: "--pitch") == cents, "\(text)")
        }
    }

    @Test func decibelsForLinearGains() throws {
        defer { dir.remove() }
        let a = try input()
        let v = try SessionOptions.value("-6dB", id: .volume, flag: "--volume")
        #expect(v == pow(10, -6.0 / 20) && abs(v - 0.501187) < 1e-6)
        let db = try render([a], ["--volume", "-6dB"], "db.wav")
        #expect(try render([a], ["--volume", "\(v)"], "lin.wav") == db)
        #expect(try render([a], ["--volume", "0.5"], "half.wav") != db)
        let m = try SessionOptions.value("-3db", id: .masterVolume, flag: "--master-volume")
        #expect(m == pow(10, -3.0 / 20))
        #expect(try render([a], ["--master-volume=-3db"], "mdb.wav") == render([a], ["--master-volume", "\(m)"], "mlin.wav"))
        #expect(try SessionOptions.value("0dB", id: .volume, flag: "--volume") == 1)
        // EQ gains are dB already: the suffix is optional
        #expect(try render([a], ["--bass", "4dB", "--treble=-2DB"], "eq-db.wav") == render([a], ["--bass", "4", "--treble", "-2"], "eq.wav"))
        // dB is for gains only: a tempo is not one
        #expect(throws: CLIError.self) { try SessionOptions.value("-3dB", id: .tempo, flag: "--tempo") }
    }

    @Test func perTrackAndLiveForms() throws {
        defer { dir.remove() }
        let a = try input("a.wav"), b = try input("b.wav", seed: 9)
        let v = try SessionOptions.value("-3dB", id: .volume, flag: "--volume")
        let named = try render([a, b], ["--track", "2:pitch=-3st,volume=-3dB,bass=5dB"], "named.wav")
        #expect(try render([a, b], ["--track", "2:pitch=-300,volume=\(v),bass=5"], "plain.wav") == named)
        #expect(try render([a, b], ["--track", "1:pitch=-3st,volume=-3dB,bass=5dB"], "other.wav") != named)
        #expect(try ControlCommand.parse("track 2 pitch 1.5st", trackCount: 2) == .setTrack(track: 2, id: .pitchCents, value: 150))
        #expect(try ControlCommand.parse("track all volume -6dB", trackCount: 2) == .setAllTracks(id: .volume, value: pow(10, -6.0 / 20)))
        #expect(try ControlCommand.parse("master volume -6dB", trackCount: 2) == .masterVolume(pow(10, -6.0 / 20)))
        #expect(throws: ControlCommand.ParseError.self) { try ControlCommand.parse("master volume 30dB", trackCount: 2) }
    }

    @Test(arguments: [
        ("--pitch", "2sts", ["200 (cents)", "2st", "-24 to 24 st"]),
        ("--pitch", "st", ["semitones", "2st"]),
        ("--pitch", "25st", ["2500 cents", "above 2400", "from -2400 to 2400 cents", "-24 to 24 st"]),
        ("--volume", "dB", ["not a number of dB", "-6dB"]),
        ("--volume", "-inf dB", ["not a number", "-6dB", "from 0 to 16"]),
        ("--volume", "nandB", ["not a number of dB", "-6dB"]),
        ("--volume", "30dB", ["31.6228", "above 16", "up to 24.08 dB"]),
        ("--master-volume", "infdB", ["not a number of dB", "-6dB"]),
        ("--bass", "4dBs", ["-3dB", "from -96 to 24 dB"]),
    ])
    func badFormsNameTheFlagAndTheForms(flag: String, text: String, mentions: [String]) throws {
        defer { dir.remove() }
        let r = try MixFXBinary.run(["render", try input(), "\(flag)=\(text)", "--dry-run"])
        #expect(r.status == 2, "\(r.stderr)")
        for m in [flag] + mentions { #expect(r.stderr.contains(m), "\(flag) \(text): \(m) in \(r.stderr)") }
        // the same at --track N:KEY=
        let key = String(flag.dropFirst(2))
        if key != "master-volume" {
            let t = try MixFXBinary.run(["render", try input(), "--track", "1:\(key)=\(text)", "--dry-run"])
            #expect(t.status == 2 && t.stderr.contains("--track 1:\(key)=\(text): \(key)"), "\(t.stderr)")
        }
    }

    @Test func unknownFlagsSuggestTheNearest() throws {
        defer { dir.remove() }
        let a = try input()
        for (args, hint) in [(["render", a, "--bas", "4"], "did you mean '--bass'?"),
                             (["render", a, "--norm", "-16"], "did you mean '--normalize'?"),
                             (["render", a, "--sample-formt", "s16"], "did you mean '--sample-format'?"),
                             (["play", a, "--no-iu"], "did you mean '--no-ui'?"),
                             (["batch", "m.jsonl", "--jbos", "2"], "did you mean '--jobs'?"),
                             (["analyze", a, "--jsn"], "did you mean '--json'?"),
                             (["eq-curve", "--trebel", "3"], "did you mean '--treble'?"),
                             (["presets", "--hep"], "did you mean '--help'?"),
                             (["rendr", a], "did you mean 'render'?")] {
            let r = try MixFXBinary.run(args, cwd: dir.path)
            #expect(r.status == 2 && r.stderr.contains(hint), "\(args): \(r.stderr)")
        }
        // nothing near: no guess
        let r = try MixFXBinary.run(["render", a, "--frobnicate"])
        #expect(r.status == 2 && r.stderr.contains("unknown option --frobnicate (see mixfx render --help)"), "\(r.stderr)")
        #expect(NameSuggestion.nearest("--bas", among: ["--bass", "--bass-freq", "--treble"]) == ["--bass"])
        #expect(NameSuggestion.nearest("--bass-fr", among: ["--bass", "--bass-freq", "--treble"]) == ["--bass-freq"])
        #expect(NameSuggestion.nearest("-x", among: ["-o", "-q"]).isEmpty)
    }

    @Test func unknownPresetKeysSuggestTheNearest() throws {
        defer { dir.remove() }
        let preset = dir.file("p.json")
        try #"{"schemaVersion": 2, "nmae": "x", "all": {"eq": {"bas": {"gainDB": 3}}, "pitch": {"cent": 100}}, "master": {"volum": 0.5}, "zzzzzz": 1}"#
            .write(toFile: preset, atomically: true, encoding: .utf8)
        let r = try MixFXBinary.run(["render", try input(), "--preset", preset, "--dry-run"])
        #expect(r.status == 0, "\(r.stderr)")
        for w in ["unknown key all.eq.bas (ignored; did you mean 'bass'?)", "unknown key all.pitch.cent (ignored; did you mean 'cents'?)",
                  "unknown key master.volum (ignored; did you mean 'volume'?)", "unknown key nmae (ignored; did you mean 'name'?)",
                  "unknown key zzzzzz (ignored)"] {
            #expect(r.stderr.contains(w), "\(w) in \(r.stderr)")
        }
    }

    @Test func helpCommandIsTheCommandsHelp() throws {
        for command in MixFXCommand.commands {
            let a = try MixFXBinary.run(["help", command]), b = try MixFXBinary.run([command, "--help"])
            #expect(a.status == 0 && a.status == b.status && a.stdout == b.stdout && !a.stdout.isEmpty, "\(command)")
        }
        let top = try MixFXBinary.run(["--help"]), help = try MixFXBinary.run(["help"])
        #expect(help.status == 0 && help.stdout == top.stdout && top.stdout.contains("help [COMMAND]"))
        #expect(try MixFXBinary.run(["help", "render"]).stdout != top.stdout)
        let bad = try MixFXBinary.run(["help", "nonsense"])
        #expect(bad.status == 2 && bad.stdout.isEmpty && bad.stderr.contains("unknown command 'nonsense'")
                && bad.stderr.contains("render, batch, play, analyze, eq-curve, devices, presets, preset"), "\(bad.stderr)")
        #expect(try MixFXBinary.run(["help", "rendr"]).stderr.contains("did you mean 'render'?"))
    }

    /// Whether `command` takes `flag`: its parser, given the flag after an operand, says
    /// anything but "unknown option" (a flag with no value says it needs one: it is taken).
    static func takes(_ command: String, _ flag: String) -> Bool {
        let operands = ["render": ["x.wav"], "play": ["x.wav"], "analyze": ["x.wav"], "batch": ["m.jsonl"], "preset": ["show", "x"]]
        do throws(CLIError) {
            try MixFXCommand.parse([command] + (operands[command] ?? []) + [flag])
            return true
        } catch {
            return !error.message.contains("unknown option \(flag) ")
        }
    }

    /// The flags an option list documents: those at the start of an indented line, before the
    /// gap that separates them from their description ("  -o, --output OUT     output file").
    static func documentedFlags(_ help: String) -> [String] {
        help.split(separator: "\n").flatMap { line -> [String] in
            let text = line.drop { $0 == " " }
            guard text.hasPrefix("-"), line.count > text.count else { return [] }
            let left = text.range(of: "  ").map { String(text[..<$0.lowerBound]) } ?? String(text)
            return Synopsis.flags(in: left)
        }
    }

    /// Issue #34: every command's usage names every flag its parser takes (the synopsis is made
    /// from the parser's flag tables), within 80 columns, and every flag its help names in the
    /// synopsis or an option list is taken. Candidates: every flag any help text or the README
    /// names, every registry key and session option as a flag.
    @Test func everyFlagIsInItsCommandsUsageAndEveryFlagItNamesIsTaken() throws {
        let readme = try String(contentsOfFile: PresetTests.repo + "/README.md", encoding: .utf8)
        var candidates = Set(Synopsis.flags(in: readme) + Synopsis.flags(in: MixFXCommand.help))
        for command in MixFXCommand.commands { candidates.formUnion(Synopsis.flags(in: try #require(MixFXCommand.help(of: command)))) }
        candidates.formUnion(ParameterID.allCases.map { "--" + $0.spec.key })
        candidates.formUnion(SessionOption.allCases.flatMap(\.spec.flags))
        #expect(candidates.count > 60, "\(candidates.count) candidates")
        for command in MixFXCommand.commands {
            let help = try #require(MixFXCommand.help(of: command))
            // the printed help is this text, wrapped to $COLUMNS or 80 (stdout is a pipe here)
            let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init).map { max($0, HelpLayout.minimumColumns) } ?? 80
            #expect(try MixFXBinary.run([command, "--help"]).stdout == HelpLayout.wrap(help, columns: columns) + "\n", "\(command)")
            let usage = String(help.split(separator: "\n\n", maxSplits: 1)[0])
            #expect(usage.hasPrefix("usage: mixfx \(command)"), "\(command): \(usage)")
            for line in usage.split(separator: "\n") { #expect(line.count <= 80, "\(command): \(line.count) columns: \(line)") }
            let named = Set(Synopsis.flags(in: usage))
            let taken = candidates.filter { Self.takes(command, $0) }
            #expect(taken.subtracting(named).isEmpty, "\(command) takes \(taken.subtracting(named).sorted()), which its usage does not name")
            for flag in named.union(Self.documentedFlags(help)) {
                #expect(Self.takes(command, flag), "\(command)'s help names \(flag), which it does not take")
            }
            #expect(!Self.takes(command, "--frobnicate") && named.contains("--help") && named.contains("--version"), "\(command)")
        }
        // the probe tells taken from not taken
        #expect(Self.takes("render", "--bass") && Self.takes("render", "--report") && Self.takes("play", "--no-ui"))
        #expect(!Self.takes("analyze", "--bass") && !Self.takes("eq-curve", "--pitch") && Self.takes("eq-curve", "--treble-freq"))
        #expect(!Self.takes("play", "--normalize") && !Self.takes("render", "--no-ui") && !Self.takes("render", "--start"))
        // the option-list reader finds both names of an entry
        #expect(Self.documentedFlags("x\n  -o, --output OUT   the file (see --force)\n") == ["-o", "--output"])
        // what a synopsis looks like: wrapped under its first item
        let text = Synopsis.text([.init("mixfx x", operands: ["A..."], flags: (1...12).map { FlagSyntax(names: ["--flag\($0)"], value: "V") })])
        #expect(text.split(separator: "\n").count == 3 && text.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(text.split(separator: "\n")[1].hasPrefix(String(repeating: " ", count: "usage: mixfx x ".count) + "[--flag"))
    }
}
