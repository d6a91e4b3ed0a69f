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
