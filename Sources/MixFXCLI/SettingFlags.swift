import Foundation
import MixFX

/// The command line's names for the library's settings. The library's messages name a setting
/// (`normalizeLUFS`, `clipping=fail`, `overwrite=true`: see `SessionOptionSpec.setting`); the
/// CLI prints them with its flags (`--normalize`, `--strict`, `--force`). Session options take
/// their flags from the registry (`SessionOption.spec`); the few settings that are not session
/// options are in `otherSettings`.
enum SettingFlags {
    /// Library settings that are not session options, and their flags: the renderer's and
    /// `OutputFile`'s `overwrite`, `LiveOptions`' device, buffer and period.
    static let otherSettings: [String: String] = [
        "overwrite": "--force", "device": "--device",
        "bufferMilliseconds": "--buffer-ms", "periodMilliseconds": "--period-ms",
    ]

    /// How the command line says `setting` (`name` or `name=value`): its flag, with the value
    /// when it takes one (`--device default`); a choice with a flag of its own is that flag
    /// (`clipping=fail`: `--strict`), a switch set to true is the flag alone (`overwrite=true`:
    /// `--force`). A name the CLI has no flag for is kept.
    static func name(_ setting: String) -> String {
        let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
        let key = parts[0], value = parts.count == 2 ? parts[1] : nil
        if let option = SessionOption(rawValue: key) {
            let spec = option.spec
            if let value, let own = spec.choiceFlags.first(where: { $0.choice == value }) { return own.flag }
            let flag = spec.flag ?? spec.choiceFlags.map(\.flag).joined(separator: " or ")
            return value.map { "\(flag) \($0)" } ?? flag
        }
        guard let flag = otherSettings[key] else { return setting }
        guard let value, value != "true" else { return flag }
        return "\(flag) \(value)"
    }

    /// A library error's message in the command line's words (its settings named by their
    /// flags): what the CLI prints for every error the library throws.
    static func text(_ error: any Error) -> String {
        switch error {
        case let e as RenderError: e.description(naming: name)
        case let e as EngineError: e.description(naming: name)
        case let e as OutputFileError: e.description(naming: name)
        case let e as DeviceError: e.description(naming: name)
        default: "\(error)"
        }
    }

    // MARK: help texts

    /// The flag and its value as an option list shows them (`--dither auto|tpdf|none`,
    /// `--sample-format F`, `--limit [CEILING]`), the choices themselves when they fit the column.
    static func placeholder(_ option: SessionOption, column: Int = 24) -> String {
        let spec = option.spec
        guard let flag = spec.flag else { return spec.choiceFlags.map(\.flag).joined(separator: "|") }
        if spec.valueIsOptional { return "\(flag) [\(spec.valueName)]" }
        let listed = "\(flag) \(spec.choicesText)"
        return listed.count < column ? listed : "\(flag) \(spec.valueName)"
    }

    /// The option in a usage line: `[--sample-format s16|s24|s32|f32]`, `[--clip|--strict]`.
    static func usage(_ option: SessionOption) -> String {
        let spec = option.spec
        guard let flag = spec.flag else { return "[\(spec.choiceFlags.map(\.flag).joined(separator: "|"))]" }
        if spec.valueIsOptional { return "[\(flag) [\(spec.valueName)]]" }
        return "[\(flag) \(spec.choicesText)]"
    }

    /// The registry's line for `option` in an option list, then `detail` (the command's own
    /// words), wrapped to the help's width: "  --rate HZ  the mix's sample rate (a whole number
    /// from 8000 to 384000 Hz; default the highest input rate). DETAIL".
    static func help(_ option: SessionOption, _ detail: String = "", column: Int = 24) -> String {
        let spec = option.spec
        var text = "\(spec.summary) (\(spec.allowedText); default \(spec.defaultText))"
        if !detail.isEmpty { text += ". " + detail }
        return entry(placeholder(option, column: column), text, column: column)
    }

    /// One entry of an option list: `left` in a column of `column`, `text` wrapped beside it
    /// (lines of at most `width` characters, continuation lines indented to the column).
    static func entry(_ left: String, _ text: String, column: Int = 24, width: Int = 100) -> String {
        let indent = String(repeating: " ", count: column + 2)
        var lines: [String] = []
        var line = "  " + left
        if line.count >= column + 2 { lines.append(line); line = indent } else { line = line.padding(toLength: column + 2, withPad: " ", startingAt: 0) }
        var fresh = true
        for word in text.split(separator: " ") {
            if !fresh && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                fresh = true
            }
            line += (fresh ? "" : " ") + word
            fresh = false
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
