import CALSA
import MixFXFiles

/// The files a PCM's file plugins would write, read from ALSA's own expansion of the name (the
/// definitions of the ALSA configuration, `~/.asoundrc` included, with the name's arguments put
/// in), without opening anything: what `snd_pcm_open` would build, walked for `type file`.
///
/// The walk follows a definition's slaves (`slave.pcm`, `slave { pcm ... }`, `slaves.*.pcm`,
/// `playback.pcm`: every string under the key `pcm` is a PCM name, every string `slave` a
/// `pcm_slave` name) and inline definitions, to `maximumDepth`.
public enum ALSAFilePlugins {
    /// How deep the walk follows slaves and inline definitions.
    public static let maximumDepth = 32

    /// The file names (as the file plugin is given them: `%` keys and a leading `|` left in) the
    /// PCM `device` would write; nil when ALSA cannot expand the name (then it cannot open it
    /// either). Control side.
    public static func files(device: String) -> [String]? {
        mixfx_alsa_quiet()
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return nil }
        defer { snd_config_unref(top) }
        var walk = Walk(top: top)
        guard walk.definition(base: "pcm", name: device, depth: 0) else { return nil }
        return walk.files
    }

    private struct Walk {
        let top: OpaquePointer
        var files: [String] = []

        /// Expands `name` under `base` and walks it; false when ALSA cannot expand it.
        mutating func definition(base: String, name: String, depth: Int) -> Bool {
            guard depth <= maximumDepth else { return true }
            var conf: OpaquePointer?
            let err = PathBytes.withCString(name) { snd_config_search_definition(top, base, $0, &conf) }
            guard err >= 0, let conf else { return false }
            defer { snd_config_delete(conf) }
            if let alias = Walk.string(conf) {   // a name that stands for another
                return definition(base: base, name: alias, depth: depth + 1)
            }
            walk(conf, depth: depth)
            return true
        }

        mutating func walk(_ node: OpaquePointer, depth: Int) {
            guard depth <= maximumDepth, snd_config_get_type(node) == SND_CONFIG_TYPE_COMPOUND else { return }
            var type: OpaquePointer?, file: OpaquePointer?
            if snd_config_search(node, "type", &type) >= 0, let type, Walk.string(type) == "file",
               snd_config_search(node, "file", &file) >= 0, let file, let name = Walk.string(file) {
                files.append(name)
            }
            var it = snd_config_iterator_first(node)
            while it != snd_config_iterator_end(node) {
                defer { it = snd_config_iterator_next(it) }
                guard let entry = snd_config_iterator_entry(it) else { continue }
                if let value = Walk.string(entry) {
                    switch Walk.id(entry) {
                    case "pcm": _ = definition(base: "pcm", name: value, depth: depth + 1)
                    case "slave": _ = definition(base: "pcm_slave", name: value, depth: depth + 1)
                    default: break
                    }
                } else {
                    walk(entry, depth: depth + 1)
                }
            }
        }

        static func string(_ node: OpaquePointer) -> String? {
            var s: UnsafePointer<CChar>?
            guard snd_config_get_type(node) == SND_CONFIG_TYPE_STRING, snd_config_get_string(node, &s) >= 0, let s else { return nil }
            return PathBytes.string(UnsafeBufferPointer(start: UnsafeRawPointer(s).assumingMemoryBound(to: UInt8.self), count: strlen(s)))
        }

        static func id(_ node: OpaquePointer) -> String? {
            var s: UnsafePointer<CChar>?
            guard snd_config_get_id(node, &s) >= 0, let s else { return nil }
            return String(cString: s)
        }
    }
}
