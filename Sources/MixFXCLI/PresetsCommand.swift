import Foundation
import MixFX

/// `mixfx presets` and `mixfx preset show NAME`.
enum PresetsCommand {
    static let help = """
    usage: mixfx presets             list the presets with their descriptions
           mixfx preset show NAME    print a preset (name or path to a .json file)

    Presets are looked up in each directory of $MIXFX_PRESET_PATH (colon-separated), then in
    $XDG_CONFIG_HOME/mixfx/presets (default ~/.config/mixfx/presets), then among the built-in
    presets. A user preset with a built-in's name takes its place.
    """

    static func list(_ argv: [String]) throws(CLIError) -> Int32 {
        if argv.contains("--help") || argv.contains("-h") { print(help); return 0 }
        if let extra = argv.first {
            if extra.hasPrefix("-") && extra.count > 1 { throw .unknownOption(extra, command: "presets", help: help) }
            throw .usage("presets: unexpected argument '\(extra)'")
        }
        let all = PresetLibrary().available()
        let width = (all.map(\.name.count).max() ?? 0) + 2
        for p in all {
            let origin = p.origin == .builtin ? "" : "  [\(p.origin.text)]"
            print(p.name.padding(toLength: width, withPad: " ", startingAt: 0) + p.description + origin)
        }
        return 0
    }

    static func preset(_ argv: [String]) throws(CLIError) -> Int32 {
        if argv.isEmpty || argv.contains("--help") || argv.contains("-h") {
            print(help)
            return argv.isEmpty ? 2 : 0
        }
        guard argv.count == 2, argv[0] == "show" else {
            throw .usage("preset: expected `mixfx preset show NAME`")
        }
        do {
            // (as it is: a preset that parsed is JSON, which holds no raw control character
            // but whitespace, and `preset show x > copy.json` must copy it exactly)
            Swift.print(try PresetLibrary().text(of: argv[1]), terminator: "")
        } catch {
            throw .usage(SettingFlags.text(error))
        }
        return 0
    }
}
