import CMixFX

/// A failed C call: the `mixfx_status` it returns and the message `mixfx_last_error()` gives.
struct CAPIError: Error {
    var status: mixfx_status
    var message: String

    init(_ status: mixfx_status, _ message: String) {
        self.status = status
        self.message = message
    }

    static func null(_ argument: String) -> CAPIError { CAPIError(MIXFX_ERR_NULL, "\(argument) is NULL") }
    static func range(_ message: String) -> CAPIError { CAPIError(MIXFX_ERR_RANGE, message) }
    static func state(_ message: String) -> CAPIError { CAPIError(MIXFX_ERR_STATE, message) }
}

/// Runs the body of an exported function: MIXFX_OK, or the error's status with its message
/// recorded for the calling thread. (Only a failure touches the message: a call that succeeds
/// allocates nothing here.)
@inline(__always)
func cCall(_ function: StaticString, _ body: () throws(CAPIError) -> Void) -> Int32 {
    do {
        try body()
        return MIXFX_OK.rawValue
    } catch {
        // (#function is "name(_:_:)": the C name is what precedes the parenthesis)
        let name = "\(function)".prefix { $0 != "(" }
        "\(name): \(error.message)".withCString { mixfx_internal_set_last_error($0) }
        return error.status.rawValue
    }
}
