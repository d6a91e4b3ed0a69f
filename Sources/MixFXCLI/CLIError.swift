import MixFX

/// A CLI failure: one line for stderr and the exit status (2 for usage errors, 1 for failures).
public struct CLIError: Error, CustomStringConvertible {
    /// The one line printed after "mixfx: error: ".
    public var message: String
    /// 2 for usage errors, 1 for failures.
    public var exitCode: Int32

    /// A usage error (bad flag, value, preset or path): exit status 2.
    public static func usage(_ message: String) -> CLIError { CLIError(message: message, exitCode: 2) }
    /// A failure while working (unreadable file, device error): exit status 1.
    public static func failure(_ message: String) -> CLIError { CLIError(message: message, exitCode: 1) }

    /// The message.
    public var description: String { message }
}

extension CLIError {
    /// An option `command` does not take, with the one it most likely meant among those its
    /// help text names: "render: unknown option --bas (did you mean '--bass'? see mixfx render --help)".
    static func unknownOption(_ name: String, command: String, help: String) -> CLIError {
        let hint = NameSuggestion.text(name, among: flags(in: help) + ["--help"]).map { $0 + " " } ?? ""
        return .usage("\(command): unknown option \(name) (\(hint)see mixfx \(command) --help)")
    }

    /// The flags a help text names (`--bass`, `-o`), in order.
    static func flags(in help: String) -> [String] {
        help.split { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-")) }
            .map { $0.hasSuffix("-") ? String($0.dropLast()) : String($0) }
            .filter { $0.hasPrefix("-") && $0.dropFirst().drop { $0 == "-" }.first?.isLetter == true }
    }
}
