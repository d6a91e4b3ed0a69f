import Foundation
import MixFXEngine

/// A preset: settings for all tracks, for individual tracks, for the master and the output.
///
/// Schema (version 3; versions 1 and 2 are read too), every key optional except `schemaVersion`:
///
///     { "schemaVersion": 2, "name": "...", "description": "...",
///       "all":    { TRACK },            settings for every track
///       "tracks": [ { TRACK }, ... ],   tracks[0] is track 1; overrides "all"
///       "master": { "volume", "limitDBTP" },
///       "output": { "sampleFormat", "sampleRateHz", "dither", "normalizeLUFS", "clipping",
///                   "channels", "lfeGainDB" },       (values: `SessionOption.spec`)
///       "automation": [ LANE, ... ] }                (version 3: `PresetAutomation.swift`)
///
///     TRACK = { "eq": { "bass":   { "gainDB", "frequencyHz", "slope", "bypass" },
///                       "treble": { "gainDB", "frequencyHz", "slope", "bypass" },
///                       "globalGainDB" },
///               "pitch": { "cents", "overlap", "preserveFormants", "rate" (version 2) },
///               "mixer": { "volume", "pan", "mute", "solo" },
///               "placement": { "startSeconds", "trimInSeconds", "trimOutSeconds",
///                              "fadeInSeconds", "fadeOutSeconds" },           (version 2)
///               "varispeed": { "rate" } }                                      (version 2)
///
/// Missing keys take the defaults of `ParameterID.spec`; unknown keys give warnings; values out
/// of range are errors naming the field path. `master` and `output` hold the session options:
/// their paths, ranges and choices are the registry's (`SessionOption.spec`).
public struct Preset: Equatable, Sendable {
    /// The newest schema version this mixfx writes (a preset is written in the lowest version
    /// that holds it: `neededSchemaVersion`).
    public static let schemaVersion = 3
    /// The schema versions it reads: version 1 has no `placement`, version 2 no `automation`.
    public static let readableVersions = 1...3

    /// The first schema version that has `id`'s key.
    public static func firstVersion(of id: ParameterID) -> Int {
        switch id {
        case .startSeconds, .trimInSeconds, .trimOutSeconds, .fadeInSeconds, .fadeOutSeconds, .speed, .tempo: 2
        default: 1
        }
    }
    /// The largest preset document read (a larger file is refused before it is parsed). Presets
    /// are small, but one with automation lanes may hold many breakpoints (a pitch map's steps,
    /// about 80 bytes each as `--print-preset` writes them): 16 MiB holds some 200 000.
    public static let maximumBytes = 16 << 20
    /// The most tracks a session (and a preset's `tracks`) may have.
    public static let maximumTracks = 4096

    /// Short name (the file name of a built-in).
    public var name: String
    /// One line for `mixfx presets`.
    public var description: String
    /// Settings for every track.
    public var all: [ParameterID: Double] = [:]
    /// Settings per track; `tracks[0]` is track 1 and overrides `all`.
    public var tracks: [[ParameterID: Double]] = []
    /// Mixer output volume, if set.
    public var masterVolume: Double?
    /// The master limiter's ceiling, dBTP (its presence turns the limiter on), if set.
    public var limitDBTP: Double?
    /// A render's loudness target, LUFS (`mixfx render --normalize`), if set.
    public var normalizeLUFS: Double?
    /// Output sample format, if set.
    public var sampleFormat: SampleFormat?
    /// Output rate, if set.
    public var sampleRateHz: Int?
    /// Dither for integer output, if set.
    public var dither: DitherMode?
    /// What to do when integer output would clip, if set.
    public var clipping: ClipPolicy?
    /// The mix's channels (1 or 2), if set.
    public var channels: Int?
    /// The LFE's gain in downmixed tracks, dB, if set (else dropped).
    public var lfeGainDB: Double?
    /// Automation lanes (schema version 3), in the order given; one per parameter and place.
    public var automation: [PresetLane] = []

    /// An empty preset: every track at the defaults.
    public init(name: String, description: String = "") {
        self.name = name
        self.description = description
    }

    /// The JSON path of each track-level parameter inside a TRACK object (from the registry,
    /// `ParameterID.spec`).
    public static let trackKeys: [(path: [String], id: ParameterID)] = ParameterID.trackParameters.map { ($0.spec.presetPath, $0) }

    /// The values for track `index` (0-based): defaults ← `all` ← `tracks[index]`.
    public func values(forTrack index: Int) -> [ParameterID: Double] {
        var v: [ParameterID: Double] = [:]
        for (_, id) in Preset.trackKeys { v[id] = id.spec.defaultValue }
        v.merge(all) { $1 }
        if index < tracks.count { v.merge(tracks[index]) { $1 } }
        return v
    }
}

/// A preset problem, naming the preset and the field.
public struct PresetError: Error, Equatable, CustomStringConvertible {
    /// The preset's name or file.
    public var source: String
    /// The JSON path of the bad field (empty for the whole file).
    public var field: String
    /// What is wrong and what is allowed.
    public var problem: String

    /// One line for `mixfx presets`.
    public var description: String {
        field.isEmpty ? "preset '\(source)': \(problem)" : "preset '\(source)': \(field): \(problem)"
    }
}

extension Preset {
    /// Parses and validates a preset. `source` names it in messages; unknown keys are reported
    /// through `warnings`.
    public static func parse(_ data: Data, source: String, warnings: inout [String]) throws(PresetError) -> Preset {
        guard data.count <= maximumBytes else {
            throw PresetError(source: source, field: "", problem: "\(data.count) bytes is more than a preset may hold (\(maximumBytes / 1024) KiB)")
        }
        var bytes = [UInt8](data)
        // a byte-order mark (some editors write one) is not part of the JSON text
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        let root: JSONValue
        do { root = try JSONValue.parse(bytes) } catch {
            throw PresetError(source: source, field: "", problem: "not valid JSON (\(error))")
        }
        guard case .object(let top) = root else {
            throw PresetError(source: source, field: "", problem: "the top level must be an object, not \(root.kindText)")
        }
        func fail(_ field: String, _ problem: String) -> PresetError {
            PresetError(source: source, field: field, problem: problem)
        }
        guard let versionValue = top["schemaVersion"] else {
            throw fail("schemaVersion", "missing (this mixfx reads schema versions \(readableVersions.lowerBound) to \(readableVersions.upperBound))")
        }
        // (compared as a number first: a huge one, 1e300, has no Int)
        guard case .number(let versionNumber) = versionValue,
              let version = readableVersions.first(where: { Double($0) == versionNumber }) else {
            throw fail("schemaVersion", "\(describe(versionValue)) is not supported (this mixfx reads schema versions \(readableVersions.lowerBound) to \(readableVersions.upperBound))")
        }
        var preset = Preset(name: "", description: "")
        for (key, value) in top.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "schemaVersion": break
            case "name", "description":
                guard case .string(let s) = value else { throw fail(key, "must be a string, not \(value.kindText)") }
                if key == "name" { preset.name = s } else { preset.description = s }
            case "all":
                preset.all = try parseTrack(value, at: "all", version: version, fail: fail, warnings: &warnings, source: source)
            case "tracks":
                guard case .array(let items) = value else { throw fail("tracks", "must be an array, not \(value.kindText)") }
                guard items.count <= maximumTracks else {
                    throw fail("tracks", "\(items.count) entries is more than the \(maximumTracks) tracks a session may have")
                }
                for (i, item) in items.enumerated() {
                    preset.tracks.append(try parseTrack(item, at: "tracks[\(i)]", version: version, fail: fail, warnings: &warnings, source: source))
                }
            case "automation":
                preset.automation = try parseAutomation(value, version: version, fail: fail, warnings: &warnings, source: source)
            case _ where sessionGroups.contains(key):
                guard case .object(let group) = value else { throw fail(key, "must be an object, not \(value.kindText)") }
                for (k, v) in group.sorted(by: { $0.key < $1.key }) {
                    guard let option = SessionOption.allCases.first(where: { $0.spec.presetPath == [key, k] }) else {
                        let known = SessionOption.allCases.map(\.spec.presetPath).filter { $0.count == 2 && $0[0] == key }.map { $0[1] }
                        warnings.append("preset '\(source)': unknown key \(key).\(k) \(ignoredText(k, among: known))")
                        continue
                    }
                    try preset.set(option, from: v, fail: fail)
                }
            default:
                warnings.append("preset '\(source)': unknown key \(key) \(ignoredText(key, among: topLevelKeys))")
            }
        }
        return preset
    }

    /// "(ignored)" for an unknown key, with the known key it most likely meant:
    /// "(ignored; did you mean 'bass'?)".
    static func ignoredText(_ key: String, among known: [String]) -> String {
        NameSuggestion.text(key, among: known).map { "(ignored; \($0))" } ?? "(ignored)"
    }

    /// The keys a preset's top level may have.
    static var topLevelKeys: [String] { ["schemaVersion", "name", "description", "all", "tracks", "automation"] + sessionGroups.sorted() }

    /// The top-level objects that hold session options ("master", "output").
    static let sessionGroups = Set(SessionOption.allCases.map { $0.spec.presetPath[0] })

    /// Reads session option `option` from its preset value `v`, checked against the registry.
    private mutating func set(_ option: SessionOption, from v: JSONValue, fail: (String, String) -> PresetError) throws(PresetError) {
        let spec = option.spec, path = spec.presetPath.joined(separator: ".")
        if let id = spec.parameter {
            set(option, number: try Preset.number(v, at: path, id: id, fail: fail), choice: "")
            return
        }
        switch spec.kind {
        case .choice:
            guard case .string(let c) = v, spec.problem(withChoice: c) == nil else {
                throw fail(path, "\(Preset.describe(v)) is not \(spec.allowedText)")
            }
            set(option, number: 0, choice: c)
        case .number, .integer:
            // (compared as a number first: a huge one, 1e300, has no Int)
            guard case .number(let n) = v, spec.contains(n) else {
                throw fail(path, "\(Preset.describe(v)) is not \(spec.kind == .number ? "a number " : "")\(spec.allowedText)")
            }
            set(option, number: n, choice: "")
        }
    }

    /// Stores a checked value of `option` (a number, or a choice's raw value).
    private mutating func set(_ option: SessionOption, number n: Double, choice c: String) {
        switch option {
        case .masterVolume: masterVolume = n
        case .limitDBTP: limitDBTP = n
        case .normalizeLUFS: normalizeLUFS = n
        case .lfeGainDB: lfeGainDB = n
        case .sampleRateHz: sampleRateHz = Int(n)
        case .channels: channels = Int(n)
        case .sampleFormat: sampleFormat = SampleFormat(rawValue: c)
        case .dither: dither = DitherMode(rawValue: c)
        case .clipping: clipping = ClipPolicy(rawValue: c)
        }
    }

    /// Session option `option`'s value as it is written in JSON, if set.
    public func jsonValue(of option: SessionOption) -> Any? {
        switch option {
        case .masterVolume: return masterVolume
        case .limitDBTP: return limitDBTP
        case .normalizeLUFS: return normalizeLUFS
        case .lfeGainDB: return lfeGainDB
        case .sampleRateHz: return sampleRateHz
        case .channels: return channels
        case .sampleFormat: return sampleFormat?.rawValue
        case .dither: return dither?.rawValue
        case .clipping: return clipping?.rawValue
        }
    }

    private static func parseTrack(_ value: JSONValue, at path: String, version: Int, fail: (String, String) -> PresetError,
                                   warnings: inout [String], source: String) throws(PresetError) -> [ParameterID: Double] {
        var result: [ParameterID: Double] = [:]
        // Walk the object; every leaf must be a known key.
        func walk(_ v: JSONValue, _ keys: [String]) throws(PresetError) {
            let here = ([path] + keys).joined(separator: ".")
            if let entry = trackKeys.first(where: { $0.path == keys }) {
                guard version >= firstVersion(of: entry.id) else {
                    warnings.append("preset '\(source)': \(here) needs schemaVersion \(firstVersion(of: entry.id)) (this preset says \(version); ignored)")
                    return
                }
                result[entry.id] = try number(v, at: here, id: entry.id, fail: fail)
                return
            }
            guard trackKeys.contains(where: { $0.path.starts(with: keys) }) else {
                // the keys that may stand where this one does
                let known = trackKeys.map(\.path).filter { $0.count >= keys.count && $0.starts(with: keys.dropLast()) }.map { $0[keys.count - 1] }
                warnings.append("preset '\(source)': unknown key \(here) \(ignoredText(keys.last ?? here, among: known))")
                return
            }
            guard case .object(let o) = v else { throw fail(here, "must be an object, not \(v.kindText)") }
            for (k, child) in o.sorted(by: { $0.key < $1.key }) { try walk(child, keys + [k]) }
        }
        try walk(value, [])
        return result
    }

    static func number(_ v: JSONValue, at path: String, id: ParameterID,
                               fail: (String, String) -> PresetError) throws(PresetError) -> Double {
        let spec = id.spec
        let x: Double
        switch v {
        case .bool(let b) where spec.isBoolean: x = b ? 1 : 0
        case .number(let n) where !spec.isBoolean: x = n
        default: throw fail(path, "must be \(spec.isBoolean ? "true or false" : "a number"), not \(v.kindText)")
        }
        if let problem = spec.problem(with: x) {
            throw fail(path, "\(problem) (allowed: \(spec.allowedText))")
        }
        return x
    }

    static func describe(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): "\"\(s)\""
        case .number(let n): n.rounded() == n && abs(n) < 1e15 ? String(Int(n)) : String(n)
        default: v.kindText
        }
    }

    /// The preset as JSON (stable key order), loadable by `parse`.
    public func jsonData() -> Data {
        func track(_ values: [ParameterID: Double]) -> [String: Any] {
            var obj: [String: Any] = [:]
            for (path, id) in Preset.trackKeys {
                guard let v = values[id] else { continue }
                let leaf: Any = id.spec.isBoolean ? (v != 0) : (id.spec.isInteger ? Int(v) as Any : v as Any)
                insert(&obj, path, leaf)
            }
            return obj
        }
        var root: [String: Any] = ["schemaVersion": neededSchemaVersion, "name": name, "description": description]
        if !automation.isEmpty { root["automation"] = automationJSON() }
        if !all.isEmpty { root["all"] = track(all) }
        if !tracks.isEmpty { root["tracks"] = tracks.map(track) }
        for option in SessionOption.allCases {
            if let v = jsonValue(of: option) { insert(&root, option.spec.presetPath, v) }
        }
        return (try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }
}

private func insert(_ obj: inout [String: Any], _ path: [String], _ value: Any) {
    if path.count == 1 { obj[path[0]] = value; return }
    var child = obj[path[0]] as? [String: Any] ?? [:]
    insert(&child, Array(path.dropFirst()), value)
    obj[path[0]] = child
}
