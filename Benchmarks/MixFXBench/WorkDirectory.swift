import Foundation

/// A folder of this run's own under the temporary directory, made afresh (`mkdtemp`): two
/// benchmarks running at once must not read each other's intermediate files (a round trip's
/// second pass reading another run's first pass gives figures that belong to neither).
func workDirectory(_ prefix: String) throws -> String {
    let path = NSTemporaryDirectory() + prefix + "-XXXXXX"
    var template = Array(path.utf8CString)
    // (errno read inside: nothing between the call and the read may set it)
    let failure = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) == nil ? errno : 0 }
    guard failure == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)])
    }
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
