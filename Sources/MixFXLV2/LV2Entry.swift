import CLV2
#if canImport(Glibc)
import Glibc
#endif

/// The two plugins of the bundle, in `lv2_descriptor`'s order. Their URIs are fixed for good:
/// hosts save sessions by them.
enum LV2PluginKind: Int, CaseIterable {
    case mono, stereo

    var uri: String {
        switch self {
        case .mono: "https://mixfx.dev/lv2/pitch#mono"
        case .stereo: "https://mixfx.dev/lv2/pitch#stereo"
        }
    }

    var channelCount: Int { self == .mono ? 1 : 2 }
}

/// The descriptors `lv2_descriptor` hands out: made on its first call (on the host's control
/// thread, before any instance), never freed. `nonisolated(unsafe)`: written once by the lazy
/// global initialiser (thread-safe), read-only after.
nonisolated(unsafe) private let descriptors: UnsafeMutablePointer<LV2Descriptor> = {
    let kinds = LV2PluginKind.allCases
    let d = UnsafeMutablePointer<LV2Descriptor>.allocate(capacity: kinds.count)
    for kind in kinds {
        d[kind.rawValue] = LV2Descriptor(
            URI: UnsafePointer(strdup(kind.uri)),
            instantiate: { descriptor, sampleRate, _, _ in
                guard let descriptor, sampleRate >= 8000, sampleRate <= 768_000,
                      let kind = LV2PluginKind(rawValue: UnsafePointer(descriptors).distance(to: descriptor)) else { return nil }
                let plugin = LV2Plugin(sampleRate: sampleRate, channelCount: kind.channelCount)
                return Unmanaged.passRetained(plugin).toOpaque()
            },
            connect_port: { handle, port, location in
                guard let handle else { return }
                Unmanaged<LV2Plugin>.fromOpaque(handle)._withUnsafeGuaranteedRef { $0.connect(port, to: location) }
            },
            activate: { handle in
                guard let handle else { return }
                Unmanaged<LV2Plugin>.fromOpaque(handle)._withUnsafeGuaranteedRef { $0.activate() }
            },
            run: { handle, frameCount in
                guard let handle else { return }
                Unmanaged<LV2Plugin>.fromOpaque(handle)._withUnsafeGuaranteedRef { $0.run(Int(frameCount)) }
            },
            deactivate: { _ in },
            cleanup: { handle in
                guard let handle else { return }
                Unmanaged<LV2Plugin>.fromOpaque(handle).release()
            },
            extension_data: { _ in nil })
    }
    return d
}()

/// The LV2 entry point: the descriptor of plugin `index` (0 mono, 1 stereo), nil past the last.
@_cdecl("lv2_descriptor")
public func lv2Descriptor(_ index: UInt32) -> UnsafePointer<LV2Descriptor>? {
    guard Int(index) < LV2PluginKind.allCases.count else { return nil }
    return UnsafePointer(descriptors + Int(index))
}
