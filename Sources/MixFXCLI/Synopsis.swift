import MixFX

/// How a flag is written in a usage line: its names (`-o`, `--output`), its value's placeholder,
/// whether the value may be left out (`--limit [CEILING]`), whether the flag may repeat.
struct FlagSyntax: Sendable {
    var names: [String]
    var value: String? = nil
    var valueIsOptional = false
    var repeats = false

    /// The flag as a synopsis shows it: `[-o|--output OUT]`, `[--limit [CEILING]]`,
    /// `[--track N:KEY=VALUE,...]...`.
    var item: String {
        var s = names.joined(separator: "|")
        if let value { s += valueIsOptional ? " [\(value)]" : " \(value)" }
        return "[\(s)]" + (repeats ? "..." : "")
    }
}

/// A command's own flags (those that are not session settings), one case each. A command's
/// parser switches over them, so the compiler checks that it handles every flag its synopsis
/// names, and the synopsis is made from `allCases`, so it names every flag the parser takes.
protocol CommandFlag: CaseIterable {
    var syntax: FlagSyntax { get }
}

extension CommandFlag {
    /// The flag one of whose names is `name`.
    static func named(_ name: String) -> Self? { allCases.first { $0.syntax.names.contains(name) } }
    /// Every case's syntax, in order.
    static var syntaxes: [FlagSyntax] { allCases.map(\.syntax) }
}

/// `-h`, `--help`: every command's.
let helpFlag = FlagSyntax(names: ["-h", "--help"])

/// Usage lines, made from the flag tables the parsers use and wrapped as man pages and SoX wrap
/// theirs: each form of a command starts a line (`usage: ` before the first), and its items
/// continue on lines indented under its first item, none longer than `width`.
enum Synopsis {
    static let width = 80

    /// One form: the words that start it (`mixfx render`), then its items (operands such as
    /// `TRACK...`, and flags' `item`s).
    struct Form {
        var command: String
        var items: [String]
        init(_ command: String, _ items: [String]) { self.command = command; self.items = items }
        init(_ command: String, operands: [String] = [], flags: [FlagSyntax]) {
            self.init(command, operands + flags.map(\.item))
        }
    }

    static func text(_ forms: [Form], width: Int = Synopsis.width) -> String {
        var lines: [String] = []
        for (k, form) in forms.enumerated() {
            let lead = (k == 0 ? "usage: " : "       ") + form.command
            let indent = String(repeating: " ", count: lead.count + 1)
            var line = lead
            var fresh = true
            for item in form.items {
                if !fresh && line.count + 1 + item.count > width {
                    lines.append(line)
                    line = indent + item
                } else {
                    line += " " + item
                }
                fresh = false
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The last form of every command: `mixfx COMMAND -h|--help|--version` (`mixfx COMMAND
    /// --version` answers as `mixfx --version` does).
    static func helpForm(_ command: String) -> Form {
        Form("mixfx \(command)", [(helpFlag.names + ["--version"]).joined(separator: "|")])
    }

    /// Every flag `text` names (`--bass`, `-o`), in order, once each.
    static func flags(in text: String) -> [String] {
        var seen = Set<String>()
        return CLIError.flags(in: text).filter { seen.insert($0).inserted }
    }
}

extension SessionOptions {
    /// The session's flags besides the registries' (`--preset`, `--track`, `--bpm`, `--trim`,
    /// `--automate`, `--pitchmap`, `--timemap`).
    enum Flag: CommandFlag {
        case preset, track, bpm, trim, automate, pitchmap, timemap

        var syntax: FlagSyntax {
            switch self {
            case .preset: FlagSyntax(names: ["--preset"], value: "NAME|FILE")
            case .track: FlagSyntax(names: ["--track"], value: "N:KEY=VALUE,...", repeats: true)
            case .bpm: FlagSyntax(names: ["--bpm"], value: "FROM:TO")
            case .trim: FlagSyntax(names: ["--trim"], value: "IN..OUT")
            case .automate: FlagSyntax(names: ["--automate"], value: "[N:]KEY=VALUE@TIME,...", repeats: true)
            case .pitchmap: FlagSyntax(names: ["--pitchmap"], value: "[N:]FILE", repeats: true)
            case .timemap: FlagSyntax(names: ["--timemap"], value: "[N:]FILE", repeats: true)
            }
        }
    }

    /// The track parameters with a flag for every track (`--bass`), in the registry's order.
    static var parameterFlags: [ParameterID] { ParameterID.trackParameters.filter(\.spec.hasGlobalFlag) }

    /// A track parameter's flag as a synopsis shows it: `--bass DB`, `--formant [on|off]`.
    static func syntax(_ id: ParameterID) -> FlagSyntax {
        let spec = id.spec
        if spec.isBoolean { return FlagSyntax(names: ["--" + spec.key], value: "on|off", valueIsOptional: true) }
        let byUnit: String = switch spec.unit {
        case "dB": "DB"
        case "Hz": "HZ"
        case "cents": "CENTS"
        case "×": "RATIO"
        default: spec.isInteger ? "N" : "X"
        }
        return FlagSyntax(names: ["--" + spec.key], value: spec.isTime ? "SECONDS" : spec.isLinearGain ? "V" : byUnit)
    }

    /// A session option's flag as a synopsis shows it: `--sample-format s16|s24|s32|f32`,
    /// `--clip|--strict`, `--limit [CEILING]`.
    static func syntax(_ option: SessionOption) -> FlagSyntax {
        let spec = option.spec
        guard let flag = spec.flag else { return FlagSyntax(names: spec.choiceFlags.map(\.flag)) }
        return FlagSyntax(names: [flag], value: spec.choicesText, valueIsOptional: spec.valueIsOptional)
    }

    /// The session options a command takes: all of them with `renderOptions`, else those that
    /// are not a render's alone.
    static func options(renderOptions: Bool) -> [SessionOption] {
        SessionOption.allCases.filter { renderOptions || !$0.spec.isRenderOnly }
    }

    /// Every flag `parse` takes, in the order a synopsis lists them: the preset and per-track
    /// settings, the settings for every track, the session options.
    static func flagSyntaxes(renderOptions: Bool) -> [FlagSyntax] {
        [Flag.preset.syntax, Flag.track.syntax] + parameterFlags.map(syntax) + [Flag.bpm.syntax, Flag.trim.syntax, Flag.automate.syntax, Flag.pitchmap.syntax, Flag.timemap.syntax]
            + options(renderOptions: renderOptions).map(syntax)
    }
}
