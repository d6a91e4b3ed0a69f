import Foundation
import MixFX

/// `mixfx presets` and `mixfx preset show NAME`.
enum PresetsCommand {
    /// The flags (both commands take only these).
    enum Flag: CommandFlag {
        case help
        var syntax: FlagSyntax { helpFlag }
    }

    /// The synopsis of both commands: every flag their parsers take.
    static var usage: String {
        Synopsis.text([.init("mixfx presets", flags: []), .init("mixfx preset", ["show", "NAME"]),
                       Synopsis.helpForm("presets"), Synopsis.helpForm("preset")])
    }

    static let help = """
    \(usage)

    `mixfx presets` lists the presets with their descriptions; `mixfx preset show NAME` prints one
    (NAME is a preset's name or a path to a .json file).

    Presets are looked up in each directory of $MIXFX_PRESET_PATH (colon-separated), then in
    $XDG_CONFIG_HOME/mixfx/presets (default ~/.config/mixfx/presets), then among the built-in
    presets. A user preset with a built-in's name takes its place.
    """

    /// The words that are not flags, for `command`; nil when the arguments ask for help.
    static func parse(_ argv: [String], command: String) throws(CLIError) -> [String]? {
        var args = Arguments(argv)
        while let (name, _) = args.nextOption() {
            guard let flag = Flag.named(name) else { throw .unknownOption(name, command: command, help: help) }
            switch flag {
            case .help: return nil
            }
        }
        return args.positionals
    }

    static func list(_ argv: [String]) throws(CLIError) -> Int32 {
        guard let words = try parse(argv, command: "presets") else { HelpLayout.print(help); return 0 }
        if let extra = words.first { throw .usage("presets: unexpected argument '\(extra)'") }
        let all = PresetLibrary().available()
        // (the list never lands in a preset it read: `mixfx presets >> presets/mine.json`)
        var read = FileIdentitySet()
        for p in all { if case .file(let path) = p.origin { _ = read.insert(path) } }
        do throws(OutputFileError) { try OutputFile.checkStandardOutputText(beside: read) } catch {
            throw .usage("standard output is redirected into a preset this command reads; send it elsewhere")
        }
        let width = (all.map(\.name.count).max() ?? 0) + 2
        for p in all {
            let origin = p.origin == .builtin ? "" : "  [\(p.origin.text)]"
            print(p.name.padding(toLength: width, withPad: " ", startingAt: 0) + p.description + origin)
        }
        return 0
    }

    static func preset(_ argv: [String]) throws(CLIError) -> Int32 {
        if argv.isEmpty { HelpLayout.print(help); return 2 }
        guard let words = try parse(argv, command: "preset") else { HelpLayout.print(help); return 0 }
        guard words.count == 2, words[0] == "show" else {
            throw .usage("preset: expected `mixfx preset show NAME`")
        }
        do {
            // (as it is: a preset that parsed is JSON, which holds no raw control character
            // but whitespace, and `preset show x > copy.json` must copy it exactly)
            Swift.print(try PresetLibrary().text(of: words[1]), terminator: "")
        } catch {
            throw .usage(SettingFlags.text(error))
        }
        return 0
    }
}
