import CMixFX
import MixFXCLI

/// The release, as a C string that lives as long as the process (`mixfx --version`'s).
nonisolated(unsafe) private let versionText: UnsafeMutablePointer<CChar> = strdupVersion()

private func strdupVersion() -> UnsafeMutablePointer<CChar> {
    let bytes = Array(MixFXCommand.version.utf8CString)
    let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
    p.initialize(from: bytes, count: bytes.count)
    return p
}

/// `const char *mixfx_version(void)`
@_cdecl("mixfx_version")
public func mixfx_version() -> UnsafePointer<CChar> { UnsafePointer(versionText) }

/// `int mixfx_api_version(void)`: the header's MIXFX_API_VERSION this library implements.
@_cdecl("mixfx_api_version")
public func mixfx_api_version() -> Int32 { Int32(MIXFX_API_VERSION) }
