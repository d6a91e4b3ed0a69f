import Foundation
import MixFXFiles

/// Where a preset came from.
public enum PresetOrigin: Equatable, Sendable {
    case builtin
    case file(String)

    /// For messages: "built-in" or the file path.
    public var text: String {
        switch self {
        case .builtin: "built-in"
        case .file(let p): p
        }
    }
}

/// Finds presets by name or path.
///
/// `--preset NAME` looks, in order, in each directory of `$MIXFX_PRESET_PATH` (colon-separated),
/// then `$XDG_CONFIG_HOME/mixfx/presets` (default `~/.config/mixfx/presets`), for `NAME.json`,
/// and last among the built-in presets. A user preset shadows a built-in one of the same name.
/// A value containing `/` or ending in `.json` is a file path.
public struct PresetLibrary: Sendable {
    /// Where names are looked up, in order, before the built-ins.
    public var searchDirectories: [String]

    /// The search path from `MIXFX_PRESET_PATH`, `XDG_CONFIG_HOME` and `HOME`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        var dirs: [String] = []
        if let p = environment["MIXFX_PRESET_PATH"] {
            dirs += p.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        }
        // (a relative XDG_CONFIG_HOME is ignored, as the XDG spec says: which preset a name
        // loads must not depend on the current folder)
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        dirs.append(config + "/mixfx/presets")
        searchDirectories = dirs
    }

    /// Loads a preset by name or path.
    public func load(_ nameOrPath: String, warnings: inout [String]) throws(PresetError) -> (Preset, PresetOrigin) {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") {
            return (try loadFile(nameOrPath, warnings: &warnings), .file(nameOrPath))
        }
        for dir in searchDirectories {
            let path = dir + "/" + nameOrPath + ".json"
            if FileSystem.exists(path) {
                return (try loadFile(path, warnings: &warnings), .file(path))
            }
        }
        if let builtin = BuiltinPresets.files.first(where: { $0.name == nameOrPath }) {
            return (try Preset.parse(Data(builtin.json.utf8), source: nameOrPath, warnings: &warnings), .builtin)
        }
        let names = available().map(\.name).joined(separator: ", ")
        throw PresetError(source: nameOrPath, field: "",
                          problem: "no such preset (available: \(names); search path: \(searchDirectories.joined(separator: ":")))")
    }

    /// Loads and validates one preset file.
    public func loadFile(_ path: String, warnings: inout [String]) throws(PresetError) -> Preset {
        // opened once and checked on the descriptor: a FIFO is refused without blocking
        let bytes: [UInt8]
        do { bytes = try RegularFile.read(path, maximumBytes: Preset.maximumBytes) } catch {
            let problem: String = switch error.problem {
            case .notRegular(let kind): "it is a \(kind), not a regular file (a preset is a JSON file)"
            case .tooLarge(let b, _): "\(b) bytes is more than a preset may hold (\(Preset.maximumBytes / 1024) KiB)"
            default: error.reason
            }
            throw PresetError(source: path, field: "", problem: problem)
        }
        return try Preset.parse(Data(bytes), source: path, warnings: &warnings)
    }

    /// The raw JSON text of a preset (for `mixfx preset show`).
    public func text(of nameOrPath: String) throws(PresetError) -> String {
        var warnings: [String] = []
        let (_, origin) = try load(nameOrPath, warnings: &warnings)
        switch origin {
        case .builtin: return BuiltinPresets.files.first { $0.name == nameOrPath }!.json
        case .file(let p): return ((try? RegularFile.read(p, maximumBytes: Preset.maximumBytes)).map { String(decoding: $0, as: UTF8.self) }) ?? ""
        }
    }

    /// Every preset reachable by name: user presets first, then built-ins not shadowed by them.
    public func available() -> [(name: String, description: String, origin: PresetOrigin)] {
        var result: [(name: String, description: String, origin: PresetOrigin)] = []
        var seen = Set<String>()
        for dir in searchDirectories {
            let files = FileSystem.names(inFolder: dir) ?? []
            // (a link to nothing, a folder or a FIFO named *.json is no preset)
            for f in files.sorted() where f.hasSuffix(".json") && RegularFile.exists(dir + "/" + f) {
                let name = String(f.dropLast(5))
                guard !seen.contains(name) else { continue }
                var w: [String] = []
                let desc = (try? loadFile(dir + "/" + f, warnings: &w).description) ?? "(invalid preset)"
                result.append((name, desc, .file(dir + "/" + f)))
                seen.insert(name)
            }
        }
        for b in BuiltinPresets.files where !seen.contains(b.name) {
            var w: [String] = []
            let desc = (try? Preset.parse(Data(b.json.utf8), source: b.name, warnings: &w).description) ?? ""
            result.append((b.name, desc, .builtin))
        }
        return result
    }
}
