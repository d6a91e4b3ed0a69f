import Foundation
import MixFX

/// Every command as the parsers take it, for what is made from the flag tables besides the usage
/// lines: the man page (`ManPage`) and the shell completions (`ShellCompletion`). Each command's
/// flags are the very `FlagSyntax`es its usage line is made from (its `Flag` enum, and
/// `SessionOptions.flagSyntaxes` for the session's), so a flag added to a parser reaches the
/// completions and the man page with no other edit (`InstallTests` checks they agree).
enum CommandTable {
    /// What a command's words that are not flags are.
    enum Operands: Equatable {
        /// None (`mixfx devices`).
        case none
        /// Sound files (`render`, `play`, `analyze`), or the manifest (`batch`).
        case files
        /// `mixfx preset show NAME`: the word `show`, then a preset.
        case presetShow
    }

    /// What a flag's value is, for completing it.
    enum Value: Equatable {
        /// The flag takes no value.
        case none
        /// A value from a fixed list (`--dither auto|tpdf|none`, `--type wav|flac|...`).
        case choices([String])
        /// A file's path (`-o OUT`, `--report FILE.json|FILE.html`, `--summary FILE.json`).
        case file
        /// A preset's name or a path (`--preset NAME|FILE`).
        case preset
        /// Anything else (numbers, times, `--track N:KEY=VALUE,...`): nothing to offer.
        case free
    }

    struct Command {
        /// As `mixfx NAME` names it.
        var name: String
        /// Every flag its parser takes, `-h|--help` included, in its usage line's order.
        var flags: [FlagSyntax]
        var operands: Operands
        /// Its usage line(s), as `mixfx NAME --help` prints them first.
        var usage: String
        /// `mixfx NAME --help`.
        var help: String
    }

    /// The commands, in `MixFXCommand.commands`' order.
    static var commands: [Command] {
        MixFXCommand.commands.map { name in
            let help = MixFXCommand.help(of: name) ?? ""
            return switch name {
            case "render":
                Command(name: name, flags: RenderCommand.Flag.syntaxes + SessionOptions.flagSyntaxes(renderOptions: true),
                        operands: .files, usage: RenderCommand.usage, help: help)
            case "batch": Command(name: name, flags: BatchCommand.Flag.syntaxes, operands: .files, usage: BatchCommand.usage, help: help)
            case "play":
                Command(name: name, flags: PlayCommand.Flag.syntaxes + SessionOptions.flagSyntaxes(renderOptions: false),
                        operands: .files, usage: PlayCommand.usage, help: help)
            case "analyze": Command(name: name, flags: AnalyzeCommand.Flag.syntaxes, operands: .files, usage: AnalyzeCommand.usage, help: help)
            case "eq-curve":
                Command(name: name, flags: EQCurveCommand.Flag.syntaxes + EQCurveCommand.sessionFlags, operands: .none,
                        usage: EQCurveCommand.usage, help: help)
            case "devices": Command(name: name, flags: DevicesCommand.Flag.syntaxes, operands: .none, usage: usageLines(of: help), help: help)
            case "presets": Command(name: name, flags: PresetsCommand.Flag.syntaxes, operands: .none, usage: PresetsCommand.usage, help: help)
            case "preset": Command(name: name, flags: PresetsCommand.Flag.syntaxes, operands: .presetShow, usage: PresetsCommand.usage, help: help)
            default: Command(name: name, flags: [helpFlag], operands: .none, usage: usageLines(of: help), help: help)
            }
        }
    }

    /// The flags every command also answers (`mixfx COMMAND --version`), and the tool's own.
    static let toolFlags = ["-h", "--help", "-V", "--version"]

    /// The usage lines at the top of a help text: up to its first blank line.
    static func usageLines(of help: String) -> String {
        String(help.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }.joined(separator: "\n"))
    }

    /// A command's one-line summary, from `mixfx --help`'s list ("mix tracks through EQ and
    /// pitch into a file"); empty if the list has none.
    static func summary(of command: String) -> String {
        for line in MixFXCommand.help.split(separator: "\n") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            let at = words.first == "usage:" ? 1 : 0
            guard words.count > at + 1, words[at] == "mixfx", words[at + 1] == command,
                  let gap = line.range(of: "  ", options: .backwards) else { continue }
            return line[gap.upperBound...].trimmingCharacters(in: .whitespaces)
        }
        return ""
    }

    /// What `syntax`'s value is: a file for the outputs and `--pitchmap`, the containers for `--type`, the
    /// choices its placeholder lists when they are all lower-case words or numbers
    /// (`auto|tpdf|none`, `on|off`, `1|2`), a preset for `NAME|FILE`, else free.
    static func value(of syntax: FlagSyntax) -> Value {
        guard let placeholder = syntax.value else { return .none }
        if syntax.names.contains("--type") { return .choices(Container.allCases.map(\.rawValue)) }
        if syntax.names.contains("--preset") { return .preset }
        let alternatives = placeholder.split(separator: "|").map(String.init)
        // (`[N:]FILE`: a file for one track or all: completed as a file)
        let file = { (a: String) in a == "OUT" || a.hasPrefix("OUT.") || a == "FILE" || a.hasPrefix("FILE.") || a == "[N:]FILE" }
        if alternatives.allSatisfy(file) { return .file }
        if alternatives.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLowercase || $0.isNumber } }) { return .choices(alternatives) }
        return .free
    }
}
