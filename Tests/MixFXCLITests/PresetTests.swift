import Foundation
import Testing
@testable import MixFXPresets
import MixFX
import TestSupport

@Suite struct PresetTests {
    let dir = TempDir("mixfx-presets")
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test func builtinsMatchThePresetsFolder() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: PresetTests.repo + "/Presets")
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 4)
        #expect(files.map { String($0.dropLast(5)) } == BuiltinPresets.files.map(\.name).sorted(),
                "run scripts/embed-presets.sh")
        for f in files {
            let text = try String(contentsOfFile: PresetTests.repo + "/Presets/" + f, encoding: .utf8)
            #expect(BuiltinPresets.files.first { $0.name == String(f.dropLast(5)) }?.json == text.trimmingCharacters(in: .newlines),
                    "\(f) differs from the embedded copy: run scripts/embed-presets.sh")
            var w: [String] = []
            let p = try Preset.parse(Data(text.utf8), source: f, warnings: &w)
            #expect(w.isEmpty && !p.description.isEmpty && p.name == String(f.dropLast(5)))
        }
    }

    @Test func missingKeysTakeDefaultsAndUnknownKeysWarn() throws {
        var w: [String] = []
        let p = try Preset.parse(Data(#"{"schemaVersion": 1, "all": {"eq": {"bass": {"gainDB": 3, "colour": 1}}}, "extra": 2}"#.utf8),
                                 source: "t", warnings: &w)
        #expect(w.count == 2 && w.contains { $0.contains("all.eq.bass.colour") } && w.contains { $0.contains("extra") })
        let v = p.values(forTrack: 3)
        #expect(v[.bassGainDB] == 3 && v[.bassFrequencyHz] == 55 && v[.trebleFrequencyHz] == 5800 && v[.pitchOverlap] == 8)
    }

    @Test func errorsNameTheFieldPath() {
        func problem(_ json: String) -> String {
            var w: [String] = []
            do { _ = try Preset.parse(Data(json.utf8), source: "p.json", warnings: &w); return "" } catch { return error.description }
        }
        #expect(problem(#"{"schemaVersion": 1, "tracks": [{}, {}, {"eq": {"bass": {"gainDB": 40}}}]}"#)
                == "preset 'p.json': tracks[2].eq.bass.gainDB: 40 is above 24 (allowed: from -96 to 24 dB)")
        #expect(problem(#"{"schemaVersion": 4}"#).contains("schemaVersion: 4 is not supported (this mixfx reads schema versions 1 to 3)"))
        #expect(problem(#"{"schemaVersion": 1.5}"#).contains("schemaVersion"))
        // (found by the preset fuzzer: a version too large for an Int is an error, not a trap)
        #expect(problem(#"{"schemaVersion": 1e300}"#).contains("schemaVersion: 1e+300 is not supported"))
        #expect(problem(#"{"schemaVersion": -9e18}"#).contains("is not supported"))
        #expect(problem(#"{"all": {}}"#).contains("schemaVersion: missing"))
        #expect(problem(#"{"schemaVersion": 1, "all": {"eq": {"bass": {"slope": 0}}}}"#).contains("all.eq.bass.slope: 0 is below 0.0001"))
        #expect(problem(#"{"schemaVersion": 1, "all": {"pitch": {"overlap": 4.5}}}"#).contains("4.5 is not a whole number"))
        #expect(problem(#"{"schemaVersion": 1, "all": {"eq": {"treble": {"bypass": 1}}}}"#).contains("must be true or false"))
        #expect(problem(#"{"schemaVersion": 1, "output": {"sampleFormat": "s12"}}"#).contains("output.sampleFormat"))
        #expect(problem(#"[1]"#).contains("top level must be an object"))
    }

    @Test func listShowAndSearchPath() throws {
        defer { dir.remove() }
        let list = try MixFXBinary.run(["presets"], environment: ["HOME": dir.path, "PATH": "/usr/bin:/bin"])
        #expect(list.status == 0)
        for name in ["flat", "bass-boost", "chipmunk", "deep-voice", "karaoke-down-2", "demo"] {
            #expect(list.stdout.contains(name))
        }
        let show = try MixFXBinary.run(["preset", "show", "chipmunk"], cwd: "/")
        #expect(show.status == 0 && show.stdout.contains("\"cents\": 1200"))
        // A user preset in $MIXFX_PRESET_PATH shadows the built-in of the same name.
        try #"{"schemaVersion": 1, "description": "my own chipmunk", "all": {"pitch": {"cents": 700}}}"#
            .write(toFile: dir.file("chipmunk.json"), atomically: true, encoding: .utf8)
        let env = ["HOME": dir.path, "MIXFX_PRESET_PATH": dir.path, "PATH": "/usr/bin:/bin"]
        let list2 = try MixFXBinary.run(["presets"], environment: env)
        #expect(list2.stdout.contains("my own chipmunk") && !list2.stdout.contains("one octave up"))
        let input = dir.file("in.wav")
        try AudioFiles.write([Signals.noise(frames: 1000)], to: input, sampleRate: 44_100)
        let dry = try MixFXBinary.run(["render", input, "--preset", "chipmunk", "--dry-run"], environment: env)
        #expect(dry.stdout.contains("pitch +700 cents"))
        // --formant switches formant preservation on; the preset key is pitch.preserveFormants.
        let formant = try MixFXBinary.run(["render", input, "--preset", "chipmunk", "--formant", "--dry-run"], environment: env)
        #expect(formant.stdout.contains("formants kept"))
        try #"{"schemaVersion": 1, "all": {"pitch": {"cents": -300, "preserveFormants": true}}}"#
            .write(toFile: dir.file("voice.json"), atomically: true, encoding: .utf8)
        let voice = try MixFXBinary.run(["render", input, "--preset", dir.file("voice.json"), "--dry-run"], environment: env)
        #expect(voice.stdout.contains("pitch -300 cents (overlap 8, formants kept)"), "\(voice.stdout)")
        // ~/.config/mixfx/presets is searched too
        try FileManager.default.createDirectory(atPath: dir.path + "/.config/mixfx/presets", withIntermediateDirectories: true)
        try #"{"schemaVersion": 1, "description": "home preset", "all": {"pitch": {"cents": -100}}}"#
            .write(toFile: dir.path + "/.config/mixfx/presets/mine.json", atomically: true, encoding: .utf8)
        let dry2 = try MixFXBinary.run(["render", input, "--preset", "mine", "--dry-run"], environment: ["HOME": dir.path])
        #expect(dry2.stdout.contains("pitch -100 cents"), "\(dry2.stderr)")
        // a relative XDG_CONFIG_HOME is ignored (the XDG spec): the name does not depend on the
        // current folder
        try FileManager.default.createDirectory(atPath: dir.path + "/cfg/mixfx/presets", withIntermediateDirectories: true)
        try #"{"schemaVersion": 1, "all": {"pitch": {"cents": 500}}}"#.write(toFile: dir.path + "/cfg/mixfx/presets/mine.json", atomically: true, encoding: .utf8)
        let relative = try MixFXBinary.run(["render", input, "--preset", "mine", "--dry-run"], cwd: dir.path, environment: ["HOME": dir.path, "XDG_CONFIG_HOME": "cfg"])
        #expect(relative.stdout.contains("pitch -100 cents"), "\(relative.stdout) \(relative.stderr)")
        let absolute = try MixFXBinary.run(["render", input, "--preset", "mine", "--dry-run"], environment: ["HOME": dir.path, "XDG_CONFIG_HOME": dir.path + "/cfg"])
        #expect(absolute.stdout.contains("pitch +500 cents"), "\(absolute.stdout) \(absolute.stderr)")
    }

    @Test func flagsOverrideThePresetAndPrintPresetRoundTrips() throws {
        defer { dir.remove() }
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try AudioFiles.write([Signals.noise(frames: 20_000, amplitude: 0.2, seed: 1)], to: a, sampleRate: 44_100)
        try AudioFiles.write([Signals.noise(frames: 15_000, amplitude: 0.2, seed: 2), Signals.noise(frames: 15_000, amplitude: 0.2, seed: 3)],
                             to: b, sampleRate: 44_100)
        let flags = ["--preset", "deep-voice", "--bass", "5", "--track", "2:pitch=300,pan=-0.5", "--master-volume", "0.7",
                     "--sample-format", "s24"]
        let dry = try MixFXBinary.run(["render", a, b, "--dry-run"] + flags)
        #expect(dry.stdout.contains("bass +5 dB @ 120 Hz"))   // flag over preset gain, preset frequency kept
        #expect(dry.stdout.contains("pitch -500 cents") && dry.stdout.contains("pitch +300 cents"))
        let printed = try MixFXBinary.run(["render", a, b, "--print-preset"] + flags)
        #expect(printed.status == 0)
        let presetFile = dir.file("effective.json")
        try printed.stdout.write(toFile: presetFile, atomically: true, encoding: .utf8)
        let out1 = dir.file("one.wav"), out2 = dir.file("two.wav")
        #expect(try MixFXBinary.run(["render", a, b, "-o", out1, "--quiet"] + flags).status == 0)
        let r2 = try MixFXBinary.run(["render", a, b, "-o", out2, "--quiet", "--preset", presetFile])
        #expect(r2.status == 0 && r2.stderr.isEmpty, "\(r2.stderr)")
        let one = try Data(contentsOf: URL(fileURLWithPath: out1)), two = try Data(contentsOf: URL(fileURLWithPath: out2))
        #expect(one == two && one.count > 1000)
        #expect(try AudioFiles.read(out2).format.bitsPerSample == 24)
    }
}
