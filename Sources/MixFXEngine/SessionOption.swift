import MixFXDSP

/// Every setting of a whole session (the output, the master bus, the render's policies), beside
/// the track parameters' registry (`ParameterID`). Each is declared once, in `spec` below: its
/// name, kind, range or choices, default, flag on the command line, path in presets, help text
/// and unit. The CLI's parser and help, preset reading and writing, the report's schema, the
/// engine's validation and the library's error messages all read that one table.
///
/// The name (the raw value) is the setting's name in the library's messages and `Preset`'s
/// property for it. The order of the cases is the order help texts list them in.
public enum SessionOption: String, CaseIterable, Sendable {
    case sampleFormat, sampleRateHz, channels, lfeGainDB, dither, clipping, normalizeLUFS, limitDBTP, masterVolume

    /// The true peak a mix is kept at or below where mixfx chooses a gain: `ClipPolicy.avoid`
    /// brings a clipping mix to it, and a loudness target without a limiter must not pass it,
    /// dBTP. EBU R128's streaming ceiling, −1 dBTP: the limiter's default ceiling, the DSP's
    /// (`LimiterSettings`).
    public static let safeCeilingDBTP = LimiterSettings().ceilingDBTP
    /// The master limiter's look-ahead (its attack), ms: the DSP's (`LimiterSettings`).
    public static let limiterLookaheadMs = LimiterSettings().lookaheadMs

    /// The option a command-line flag sets, and the choice a flag of its own stands for
    /// (`--clip`: clipping clamp); nil when `flag` sets none.
    public static func forFlag(_ flag: String) -> (option: SessionOption, choice: String?)? {
        for option in allCases {
            if option.spec.flag == flag { return (option, nil) }
            if let choice = option.spec.choiceFlags.first(where: { $0.flag == flag }) { return (option, choice.choice) }
        }
        return nil
    }
}

/// Everything about a session option (see `SessionOption`).
public struct SessionOptionSpec: Sendable {
    /// How a value is written.
    public enum Kind: Sendable, Equatable {
        /// A decimal number within `minimum...maximum`.
        case number
        /// A whole number within `minimum...maximum`.
        case integer
        /// One of `choices`.
        case choice
    }

    /// The option described.
    public let id: SessionOption
    /// Its kind of value.
    public let kind: Kind
    /// Smallest allowed value (numbers).
    public let minimum: Double
    /// Largest allowed value (numbers).
    public let maximum: Double
    /// The values allowed (choices), in the order help texts list them.
    public let choices: [String]
    /// The value when the option is on but given no value (`--limit` alone), or when it is a
    /// level that always applies (the master volume); nil when not set means off or automatic.
    public let defaultValue: Double?
    /// The choice taken when none is given (nil: automatic, see `defaultText`).
    public let defaultChoice: String?
    /// What happens when the option is not set, in words for help texts.
    public let defaultText: String
    /// Unit shown to users ("dB", "Hz", "LUFS", ...; empty for none).
    public let unit: String
    /// Its flag on the command line (nil when only `choiceFlags` set it).
    public let flag: String?
    /// Choices with a flag of their own (`--clip` for clipping clamp, `--strict` for fail).
    public let choiceFlags: [(choice: String, flag: String)]
    /// Whether the flag may stand alone, taking `defaultValue` (`--limit`).
    public let valueIsOptional: Bool
    /// The value's placeholder in help texts ("LUFS", "HZ", "F").
    public let valueName: String
    /// Where a preset keeps it, from the top (["output", "sampleFormat"]).
    public let presetPath: [String]
    /// One line for help texts: what the option sets.
    public let summary: String
    /// Only `mixfx render` takes it (a render's policy: dither, clipping, normalisation).
    public let isRenderOnly: Bool
    /// The mixer parameter it also is (master volume, limiter ceiling: changed live by `mixfx
    /// play`'s control protocol); its range, default and messages are that parameter's.
    public let parameter: ParameterID?

    /// The setting's name in messages and in `Preset` (`normalizeLUFS`).
    public var name: String { id.rawValue }

    /// How a message names the setting, or one of its values (`clipping=fail`): what the
    /// naming function of an error's `description(naming:)` is given. The library prints it as
    /// it is; the CLI maps it to its flag (`--strict`).
    public func setting(_ value: String? = nil) -> String { value.map { "\(name)=\($0)" } ?? name }

    /// The flags that set it, in order.
    public var flags: [String] { (flag.map { [$0] } ?? []) + choiceFlags.map(\.flag) }

    /// What is allowed, in words: "from -60 to 20 dB", "a whole number from 8000 to 384000 Hz",
    /// "1 or 2", "one of s16, s24, s32, f32".
    public var allowedText: String {
        if let parameter { return parameter.spec.allowedText }
        let u = unit.isEmpty ? "" : " " + unit
        switch kind {
        case .number: return "from \(format(minimum)) to \(format(maximum))\(u)"
        case .integer:
            if maximum - minimum == 1 { return "\(format(minimum)) or \(format(maximum))" }
            return "a whole number from \(format(minimum)) to \(format(maximum))\(u)"
        case .choice: return "one of \(choices.joined(separator: ", "))"
        }
    }

    /// The values as a help text's placeholder lists them ("s16|s24|s32|f32", "1|2").
    public var choicesText: String {
        switch kind {
        case .choice: choices.joined(separator: "|")
        case .integer where maximum - minimum == 1: "\(format(minimum))|\(format(maximum))"
        default: valueName
        }
    }

    /// Whether `value` is allowed (numbers).
    public func contains(_ value: Double) -> Bool {
        if let parameter { return parameter.spec.contains(value) }
        guard kind != .choice, value.isFinite, value >= minimum, value <= maximum else { return false }
        return kind == .number || value.rounded() == value
    }

    /// Why `value` is not allowed ("30 is not from -60 to 20 dB"), or nil when it is (numbers).
    public func problem(with value: Double) -> String? {
        if let parameter { return parameter.spec.problem(with: value) }
        return contains(value) ? nil : "\(format(value)) is not \(allowedText)"
    }

    /// Why `text` is not one of the choices ("'s12' is not one of s16, s24, s32, f32"), or nil
    /// when it is one.
    public func problem(withChoice text: String) -> String? {
        choices.contains(text) ? nil : "'\(text)' is not \(allowedText)"
    }
}

extension SessionOption {
    /// Everything about the option (the registry: see the type's notes). Ranges that belong to
    /// the engine or the DSP are theirs (`AudioEngine.outputSampleRateRange`, `lfeGainRange`,
    /// the mixer parameters'), referenced here.
    public var spec: SessionOptionSpec {
        let rates = AudioEngine.outputSampleRateRange, lfe = AudioEngine.lfeGainRange
        return switch self {
        case .sampleFormat:
            s(.choice, choices: SampleFormat.allCases.map(\.rawValue), flag: "--sample-format", value: "F",
              path: ["output", "sampleFormat"], "the output's sample encoding",
              defaultText: "the most precise input, at least s16")
        case .sampleRateHz:
            s(.integer, Double(rates.lowerBound), Double(rates.upperBound), unit: "Hz", flag: "--rate", value: "HZ",
              path: ["output", "sampleRateHz"], "the mix's sample rate", defaultText: "the highest input rate")
        case .channels:
            s(.integer, 1, 2, flag: "--channels", value: "N", path: ["output", "channels"],
              "the mix's channels; sources with more are downmixed", defaultText: "stereo when any track has two or more")
        case .lfeGainDB:
            s(.number, lfe.lowerBound, lfe.upperBound, unit: "dB", flag: "--lfe-gain", value: "DB", path: ["output", "lfeGainDB"],
              "the gain of downmixed tracks' LFE into L and R", defaultText: "the LFE is dropped")
        case .dither:
            s(.choice, choices: DitherMode.allCases.map(\.rawValue), defaultChoice: DitherMode.auto.rawValue,
              flag: "--dither", value: "MODE", path: ["output", "dither"], "TPDF dither before rounding to integers",
              defaultText: DitherMode.auto.rawValue, renderOnly: true)
        case .clipping:
            s(.choice, choices: ClipPolicy.allCases.map(\.rawValue), defaultChoice: ClipPolicy.avoid.rawValue,
              flag: nil, choiceFlags: [(ClipPolicy.clamp.rawValue, "--clip"), (ClipPolicy.fail.rawValue, "--strict")],
              value: "", path: ["output", "clipping"], "what integer or lossy output that would clip gets",
              defaultText: ClipPolicy.avoid.rawValue, renderOnly: true)
        case .normalizeLUFS:
            s(.number, -70, 0, unit: "LUFS", flag: "--normalize", value: "LUFS", path: ["output", "normalizeLUFS"],
              "one gain for the whole mix that brings its integrated loudness (BS.1770-4) to LUFS", defaultText: "none", renderOnly: true)
        case .limitDBTP:
            parameterOption(.limiterCeilingDBTP, "a look-ahead true-peak limiter on the mix: its true peak stays at or below CEILING dBTP",
                            value: "CEILING", valueIsOptional: true, defaultText: "no limiter; alone, \(format(ParameterID.limiterCeilingDBTP.spec.defaultValue))")
        case .masterVolume:
            parameterOption(.masterVolume, "mixer output volume, linear", value: "V",
                            defaultText: format(ParameterID.masterVolume.spec.defaultValue))
        }
    }

    private func s(_ kind: SessionOptionSpec.Kind, _ lo: Double = 0, _ hi: Double = 0, choices: [String] = [],
                   defaultChoice: String? = nil, unit: String = "", flag: String?, choiceFlags: [(choice: String, flag: String)] = [],
                   value: String, path: [String], _ summary: String, defaultText: String, renderOnly: Bool = false) -> SessionOptionSpec {
        SessionOptionSpec(id: self, kind: kind, minimum: lo, maximum: hi, choices: choices, defaultValue: nil,
                          defaultChoice: defaultChoice, defaultText: defaultText, unit: unit, flag: flag, choiceFlags: choiceFlags,
                          valueIsOptional: false, valueName: value, presetPath: path, summary: summary,
                          isRenderOnly: renderOnly, parameter: nil)
    }

    /// An option that is a mixer parameter too: its key, range, default, unit and preset path
    /// are the parameter's.
    private func parameterOption(_ id: ParameterID, _ summary: String, value: String, valueIsOptional: Bool = false,
                                 defaultText: String) -> SessionOptionSpec {
        let p = id.spec
        return SessionOptionSpec(id: self, kind: p.isInteger ? .integer : .number, minimum: p.minimum, maximum: p.maximum,
                                 choices: [], defaultValue: p.defaultValue, defaultChoice: nil, defaultText: defaultText,
                                 unit: p.unit, flag: "--" + p.key, choiceFlags: [], valueIsOptional: valueIsOptional,
                                 valueName: value, presetPath: p.presetPath, summary: summary, isRenderOnly: false, parameter: id)
    }
}
