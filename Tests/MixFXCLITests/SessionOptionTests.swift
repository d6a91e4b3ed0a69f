import Foundation
import Testing
@testable import MixFXCLI
import MixFX
import TestSupport

/// The session-option registry (`SessionOption.spec`): each option declared once, and the CLI's
/// parser and help, presets and the report schema read it; library errors name the setting and
/// the CLI's version of them names the flag.
@Suite struct SessionOptionTests {
    let dir = TempDir("mixfx-session-options")

    /// Parses `args` as `mixfx render` would (one track), or gives the usage message.
    func render(_ args: [String]) -> Result<RenderCommand, CLIError> {
        do throws(CLIError) {
            guard let cmd = try RenderCommand.parse(["t.wav"] + args) else { return .failure(.usage("help")) }
            return .success(cmd)
        } catch { return .failure(error) }
    }

    func parsePreset(_ json: String) -> Result<Preset, PresetError> {
        var w: [String] = []
        do throws(PresetError) { return .success(try Preset.parse(Data(json.utf8), source: "p.json", warnings: &w)) } catch {
            return .failure(error)
        }
    }

    /// A preset holding `value` at `option`'s path.
    func presetJSON(_ option: SessionOption, _ value: String) -> String {
        let path = option.spec.presetPath
        return #"{"schemaVersion": 2, "\#(path[0])": {"\#(path[1])": \#(value)}}"#
    }

    /// A value of `option` and its JSON text, for every way of writing one: each choice, each
    /// end of a range and a point inside.
    func samples(_ option: SessionOption) -> [(cli: String, json: String)] {
        let spec = option.spec
        switch spec.kind {
        case .choice: return spec.choices.map { ($0, "\"\($0)\"") }
        case .integer, .number:
            let mid = spec.kind == .integer ? ((spec.minimum + spec.maximum) / 2).rounded(.down) : (spec.minimum + spec.maximum) / 2
            return [spec.minimum, mid, spec.maximum].map { (fmt($0), "\($0)") }
        }
    }

    /// Every option has a name of its own, a flag (or a flag per choice) the parser takes, a
    /// preset path under "master" or "output", a help line and a unit or choices.
    @Test func everyOptionIsComplete() {
        let specs = SessionOption.allCases.map(\.spec)
        #expect(Set(specs.map(\.name)).count == specs.count)
        #expect(Set(specs.flatMap(\.flags)).count == specs.flatMap(\.flags).count)
        #expect(Set(specs.map { $0.presetPath.joined(separator: ".") }).count == specs.count)
        for spec in specs {
            #expect(!spec.flags.isEmpty, "\(spec.name) has no flag")
            for flag in spec.flags { #expect(SessionOption.forFlag(flag)?.option == spec.id, "\(flag)") }
            #expect(spec.presetPath.count == 2 && ["master", "output"].contains(spec.presetPath[0]), "\(spec.name)")
            #expect(!spec.summary.isEmpty && !spec.defaultText.isEmpty && !spec.valueName.isEmpty || spec.flag == nil, "\(spec.name)")
            switch spec.kind {
            case .choice:
                #expect(!spec.choices.isEmpty && spec.defaultValue == nil)
                if let d = spec.defaultChoice { #expect(spec.choices.contains(d)) }
                // a choice with a flag of its own is one of the choices, never the default
                for c in spec.choiceFlags { #expect(spec.choices.contains(c.choice) && c.choice != spec.defaultChoice) }
            case .number, .integer:
                #expect(spec.minimum < spec.maximum && spec.choices.isEmpty, "\(spec.name)")
                if let d = spec.defaultValue { #expect(spec.contains(d), "\(spec.name): default \(d)") }
            }
            if let id = spec.parameter {
                #expect(spec.presetPath == id.spec.presetPath && spec.flag == "--" + id.spec.key)
                #expect(spec.minimum == id.spec.minimum && spec.maximum == id.spec.maximum && spec.defaultValue == id.spec.defaultValue)
            }
        }
    }

    /// The choices are the enums' raw values; the ranges are the engine's and the DSP's, and the
    /// constants are defined once.
    @Test func choicesAndRangesAreReferencedNotCopied() {
        #expect(SessionOption.sampleFormat.spec.choices == SampleFormat.allCases.map(\.rawValue))
        #expect(SessionOption.dither.spec.choices == DitherMode.allCases.map(\.rawValue))
        #expect(SessionOption.clipping.spec.choices == ClipPolicy.allCases.map(\.rawValue))
        let rate = SessionOption.sampleRateHz.spec, lfe = SessionOption.lfeGainDB.spec
        #expect(Int(rate.minimum)...Int(rate.maximum) == AudioEngine.outputSampleRateRange)
        #expect(lfe.minimum...lfe.maximum == AudioEngine.lfeGainRange)
        #expect(SessionOption.limitDBTP.spec.minimum...SessionOption.limitDBTP.spec.maximum == LimiterSettings.ceilingRange)
        #expect(OfflineRenderer.safeCeilingDBTP == SessionOption.safeCeilingDBTP && SessionOption.safeCeilingDBTP == -1)
        #expect(SessionOption.limitDBTP.spec.defaultValue == LimiterSettings().ceilingDBTP)
        #expect(LimiterNode().ceilingDBTP == SessionOption.limitDBTP.spec.defaultValue)
        #expect(SessionOption.limiterLookaheadMs == LimiterSettings().lookaheadMs && SessionOption.limiterLookaheadMs == 5)
    }

    /// Every allowed value is taken by the CLI's flag and by a preset, and both give the same
    /// session; the values just outside a range, and a choice that is not one, are refused by
    /// both with the registry's words.
    @Test(arguments: SessionOption.allCases)
    func valuesRoundTripThroughTheParserAndPresets(option: SessionOption) throws {
        let spec = option.spec
        for (cli, json) in samples(option) {
            let flagArgs: [String] = if let own = spec.choiceFlags.first(where: { $0.choice == cli }) {
                [own.flag]
            } else if let flag = spec.flag {
                [flag, cli]
            } else {
                []  // the default choice (clipping avoid) has no flag: it is what none gives
            }
            let preset = try parsePreset(presetJSON(option, json)).get()
            #expect(preset.jsonValue(of: option) != nil, "\(option) \(json)")
            let fromPreset = try #require(try? render([]).get()).session.resolve(preset: preset).effectivePreset()
            let cmd = try render(flagArgs).get()
            let fromFlag = try cmd.session.resolve(preset: Preset(name: "none")).effectivePreset()
            #expect(String(describing: fromFlag.jsonValue(of: option)) == String(describing: fromPreset.jsonValue(of: option)),
                    "\(option): \(flagArgs) vs \(json)")
            // --print-preset writes it back at its path, and it reads back the same
            let written = try parsePreset(String(decoding: fromFlag.jsonData(), as: UTF8.self)).get()
            #expect(written == fromFlag, "\(option) \(cli)")
        }
        if let flag = spec.flag {
            let bad: [String] = switch spec.kind {
            case .choice: ["x" + spec.choices[0]]
            case .integer: [fmt(spec.minimum - 1), fmt(spec.maximum + 1), fmt(spec.minimum + 0.5)]
            case .number: [fmt(spec.minimum - 1), fmt(spec.maximum + 1)]
            }
            for text in bad {
                guard case .failure(let e) = render([flag, text]) else { Issue.record("\(flag) \(text) was taken"); continue }
                #expect(e.exitCode == 2 && e.message.hasPrefix(flag + ":") && e.message.contains(spec.allowedText), "\(e.message)")
                let json = spec.kind == .choice ? "\"\(text)\"" : text
                guard case .failure(let p) = parsePreset(presetJSON(option, json)) else { Issue.record("preset \(json) was taken"); continue }
                #expect(p.field == spec.presetPath.joined(separator: ".") && p.problem.contains(spec.allowedText), "\(p)")
            }
        }
    }

    /// `mixfx render --help` lists every session option by its flag with exactly the registry's
    /// choices, range and default; `mixfx play --help` those it takes.
    @Test func helpListsExactlyTheRegistrysChoices() {
        let help = RenderCommand.help
        for option in SessionOption.allCases {
            let spec = option.spec
            for flag in spec.flags { #expect(help.contains("\n  \(flag) ") || help.contains("\n  \(flag)\n") || help.contains("[\(flag)"), "\(flag)") }
            guard spec.flag != nil else { continue }
            let line = SettingFlags.help(option).replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            let flat = help.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            #expect(flat.contains(line), "\(option): \(line)")
            #expect(line.contains("(\(spec.allowedText); default \(spec.defaultText))"), "\(line)")
        }
        // the choices listed are the registry's, all of them and no others
        for option in SessionOption.allCases where option.spec.kind == .choice && option.spec.flag != nil {
            let spec = option.spec
            let listed = help.components(separatedBy: "\(spec.flag!) ").dropFirst().map { $0.prefix { $0 != " " && $0 != "]" } }
            for l in listed where l.contains("|") { #expect(l.split(separator: "|").map(String.init) == spec.choices, "\(l)") }
            #expect(help.contains("one of \(spec.choices.joined(separator: ", "))"))
        }
        #expect(help.contains("[--sample-format s16|s24|s32|f32]") && help.contains("[--clip|--strict]") && help.contains("[--limit [CEILING]]"))
        for option in SessionOption.allCases where !option.spec.isRenderOnly && option != .masterVolume {
            #expect(PlayCommand.help.contains("  \(SettingFlags.placeholder(option, column: 20))"), "\(option)")
        }
        #expect(PlayCommand.help.contains(SessionOption.sampleFormat.spec.choices.joined(separator: ", ")))
        #expect(!PlayCommand.help.contains("--dither") && !PlayCommand.help.contains("--normalize"))
    }

    /// The report schema's output sample formats, rates and channels are the registry's.
    @Test func theReportSchemaReadsTheRegistry() throws {
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(ReportSchema.json.utf8)) as? [String: Any])
        let output = try #require(((schema["properties"] as? [String: Any])?["output"] as? [String: Any])?["properties"] as? [String: Any])
        #expect((output["sampleFormat"] as? [String: Any])?["enum"] as? [String] == SessionOption.sampleFormat.spec.choices + ["lossy"])
        for (key, option) in [("sampleRateHz", SessionOption.sampleRateHz), ("channels", .channels)] {
            let o = output[key] as? [String: Any]
            #expect(o?["minimum"] as? Double == option.spec.minimum && o?["maximum"] as? Double == option.spec.maximum, "\(key)")
        }
    }

    /// Library errors name the setting (the library's words: no flag), and the CLI's version of
    /// the same error names its flag.
    @Test func libraryErrorsNameTheSettingAndTheCLIItsFlag() {
        let cases: [(any Error & CustomStringConvertible, setting: String, flag: String)] = [
            (RenderError.cannotNormalize(targetLUFS: -3, measuredLUFS: -20, truePeakDBTP: -2), "normalizeLUFS -3", "--normalize -3"),
            (RenderError.cannotNormalize(targetLUFS: -3, measuredLUFS: -20, truePeakDBTP: -2), "Add limitDBTP", "Add --limit"),
            (RenderError.cannotNormalize(targetLUFS: -3, measuredLUFS: -.infinity, truePeakDBTP: -90), "normalizeLUFS -3", "--normalize -3"),
            (RenderError.wouldClip(path: "o.wav", peakDBFS: 3, atSeconds: 1), "clipping=fail forbids", "--strict forbids"),
            (RenderError.wouldClip(path: "o.wav", peakDBFS: 3, atSeconds: 1), "lower masterVolume", "lower --master-volume"),
            (RenderError.output(.exists(path: "o.wav")), "use overwrite=true", "use --force"),
            (OutputFileError.exists(path: "o.wav"), "use overwrite=true", "use --force"),
            (OutputFileError.appeared(path: "o.wav"), "use overwrite=true", "use --force"),
            (DeviceError.cannotOpen(device: "hw:9", reason: "no such device", available: []), "try device=default", "try --device default"),
            (DeviceError.tooFewPeriods(device: "hw:0", periodFrames: 512, bufferFrames: 768), "choose a periodMilliseconds of at most half the bufferMilliseconds",
             "choose a --period-ms of at most half the --buffer-ms"),
            (EngineError.invalidSetting(.channels, problem: "3 is not 1 or 2"), "channels: 3 is not 1 or 2", "--channels: 3 is not 1 or 2"),
            (EngineError.unsupportedOutputRate(rateHz: 1000, isHighestInputRate: false), "set sampleRateHz", "set --rate"),
            (RenderError.engine(.invalidSetting(.lfeGainDB, problem: "40 is not from -60 to 20 dB")), "lfeGainDB: 40", "--lfe-gain: 40"),
        ]
        for (error, setting, flag) in cases {
            let library = error.description, cli = SettingFlags.text(error)
            #expect(library.contains(setting) && !library.contains("--"), "\(library)")
            // (the setting's words, not inside a flag: "channels: 3" is in "--channels: 3")
            let named = cli.hasPrefix(setting) || cli.contains(" " + setting) || cli.contains("(" + setting)
            #expect(cli.contains(flag) && !named, "\(cli)")
        }
        // the container's rate limits, likewise
        let ogg = Container.ogg.sampleRateProblem(384_000)!, oggCLI = Container.ogg.sampleRateProblem(384_000, naming: SettingFlags.name)!
        #expect(ogg.contains("give sampleRateHz up to 200000") && !ogg.contains("--") && oggCLI.contains("give --rate up to 200000"))
        #expect(Container.flac.sampleRateProblem(192_001, naming: SettingFlags.name)!.contains("--rate 192000"))
        // every setting name maps to a flag the parser takes
        for option in SessionOption.allCases {
            let flag = SettingFlags.name(option.spec.setting())
            for f in flag.components(separatedBy: " or ") { #expect(SessionOption.forFlag(f)?.option == option, "\(option): \(flag)") }
            for c in option.spec.choiceFlags { #expect(SettingFlags.name(option.spec.setting(c.choice)) == c.flag) }
        }
        #expect(SettingFlags.name(OutputFileError.overwriteSetting) == "--force")
        #expect(SettingFlags.name("unknownSetting") == "unknownSetting")
    }

    /// The engine checks the options the CLI checks, with the registry's words.
    @Test func theEngineValidatesWithTheRegistry() {
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [[0, 0]], sampleRate: 48_000))
        engine.outputChannelCount = 3
        #expect(throws: EngineError.invalidSetting(.channels, problem: "3 is not 1 or 2")) { try engine.validate() }
        engine.outputChannelCount = 2
        engine.lfeGainDB = 40
        #expect(throws: EngineError.invalidSetting(.lfeGainDB, problem: "40 is not from -60 to 20 dB")) { try engine.validate() }
        engine.lfeGainDB = -60
        #expect(throws: Never.self) { try engine.validate() }
    }

    /// The CLI's messages for the same problems keep naming the flag (end to end).
    @Test func theCLIsMessagesNameTheFlag() throws {
        defer { dir.remove() }
        let input = dir.file("a.wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 4800, amplitude: 0.3)], to: input, sampleRate: 48_000)
        let out = dir.file("o.wav")
        try Data().write(to: URL(fileURLWithPath: out))
        let exists = try MixFXBinary.run(["render", input, "-o", out])
        #expect(exists.status == 2 && exists.stderr.contains("exists; use --force to overwrite it"), "\(exists.stderr)")
        let ogg = try MixFXBinary.run(["render", input, "-o", dir.file("o.ogg"), "--rate", "384000"])
        #expect(ogg.status == 2 && ogg.stderr.contains("give --rate up to 200000") && !ogg.stderr.contains("sampleRateHz"), "\(ogg.stderr)")
    }
}
