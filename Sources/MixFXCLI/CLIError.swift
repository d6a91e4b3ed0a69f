/// A CLI failure: one line for stderr and the exit status (2 for usage errors, 1 for failures).
public struct CLIError: Error, CustomStringConvertible {
    public var message: String
    public var exitCode: Int32

    public static func usage(_ message: String) -> CLIError { CLIError(message: message, exitCode: 2) }
    public static func failure(_ message: String) -> CLIError { CLIError(message: message, exitCode: 1) }

    public var description: String { message }
}
