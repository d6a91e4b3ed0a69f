import Foundation
import MixFXEngine

/// A preset: settings for all tracks, for individual tracks, for the master and the output.
///
/// Schema (version 2; version 1 is read too), every key optional except `schemaVersion`:
///
///     { "schemaVersion": 2, "name": "...", "description": "...",
///       "all":    { TRACK },            settings for every track
///       "tracks": [ { TRACK }, ... ],   tracks[0] is track 1; overrides "all"
///       "master": { "volume": 1.0, "limitDBTP": -1.0 },
///       "output": { "sampleFormat": "s16|s24|s32|f32", "sampleRateHz": 48000,
///                   "dither": "auto|tpdf|none", "normalizeLUFS": -14, "clipping": "avoid|clamp|fail",
///                   "channels": 1|2, "lfeGainDB": -10 } }
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
/// of range are errors naming the field path.
public struct Preset: Equatable, Sendable {
    /// The schema version this mixfx writes.
    public static let schemaVersion = 2
    /// The schema versions it reads: version 1 has no `placement`.
    public static let readableVersions = 1...2

    /// The first schema version that has `id`'s key.
    public static func firstVersion(of id: ParameterID) -> Int {
        switch id {
        case .startSeconds, .trimInSeconds, .trimOutSeconds, .fadeInSeconds, .fadeOutSeconds, .speed, .tempo: 2
        default: 1
        }
    }
    /// The largest preset document read (presets are small; a larger file is refused before it
    /// is parsed).
    public static let maximumBytes = 1 << 20
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
    /// Output sample format (s16, s24, s32, f32), if set.
    public var sampleFormat: String?
    /// Output rate, if set.
    public var sampleRateHz: Int?
    /// Dither for integer output ("auto", "tpdf" or "none"), if set.
    public var dither: String?
    /// What to do when integer output would clip ("avoid", "clamp" or "fail"), if set.
    public var clipping: String?
    /// The mix's channels (1 or 2), if set.
    public var channels: Int?
    /// The LFE's gain in downmixed tracks, dB, if set (else dropped).
    public var lfeGainDB: Double?

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
            case "master":
                guard case .object(let m) = value else { throw fail("master", "must be an object, not \(value.kindText)") }
                for (k, v) in m.sorted(by: { $0.key < $1.key }) {
                    if k == "volume" {
                        preset.masterVolume = try number(v, at: "master.volume", id: .masterVolume, fail: fail)
                    } else if k == "limitDBTP" {
                        preset.limitDBTP = try number(v, at: "master.limitDBTP", id: .limiterCeilingDBTP, fail: fail)
                    } else { warnings.append("preset '\(source)': unknown key master.\(k) (ignored)") }
                }
            case "output":
                guard case .object(let o) = value else { throw fail("output", "must be an object, not \(value.kindText)") }
                for (k, v) in o.sorted(by: { $0.key < $1.key }) {
                    switch k {
                    case "sampleFormat":
                        guard case .string(let s) = v, ["s16", "s24", "s32", "f32"].contains(s) else {
                            throw fail("output.sampleFormat", "\(describe(v)) is not one of s16, s24, s32, f32")
                        }
                        preset.sampleFormat = s
                    case "sampleRateHz":
                        let rates = AudioEngine.outputSampleRateRange
                        guard case .number(let r) = v, r.rounded() == r, r >= Double(rates.lowerBound), r <= Double(rates.upperBound) else {
                            throw fail("output.sampleRateHz", "\(describe(v)) is not a whole number from \(rates.lowerBound) to \(rates.upperBound)")
                        }
                        preset.sampleRateHz = Int(r)
                    case "dither":
                        guard case .string(let d) = v, ["auto", "tpdf", "none"].contains(d) else {
                            throw fail("output.dither", "\(describe(v)) is not one of \"auto\", \"tpdf\", \"none\"")
                        }
                        preset.dither = d
                    case "normalizeLUFS":
                        guard case .number(let n) = v, n >= -70, n <= 0 else {
                            throw fail("output.normalizeLUFS", "\(describe(v)) is not a number of LUFS from -70 to 0")
                        }
                        preset.normalizeLUFS = n
                    case "clipping":
                        guard case .string(let c) = v, ["avoid", "clamp", "fail"].contains(c) else {
                            throw fail("output.clipping", "\(describe(v)) is not one of \"avoid\", \"clamp\", \"fail\"")
                        }
                        preset.clipping = c
                    case "channels":
                        guard case .number(let c) = v, c == 1 || c == 2 else {
                            throw fail("output.channels", "\(describe(v)) is not 1 or 2")
                        }
                        preset.channels = Int(c)
                    case "lfeGainDB":
                        let range = AudioEngine.lfeGainRange
                        guard case .number(let g) = v, range.contains(g) else {
                            throw fail("output.lfeGainDB", "\(describe(v)) is not a number of dB from \(Int(range.lowerBound)) to \(Int(range.upperBound))")
                        }
                        preset.lfeGainDB = g
                    default: warnings.append("preset '\(source)': unknown key output.\(k) (ignored)")
                    }
                }
            default:
                warnings.append("preset '\(source)': unknown key \(key) (ignored)")
            }
        }
        return preset
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
                warnings.append("preset '\(source)': unknown key \(here) (ignored)")
                return
            }
            guard case .object(let o) = v else { throw fail(here, "must be an object, not \(v.kindText)") }
            for (k, child) in o.sorted(by: { $0.key < $1.key }) { try walk(child, keys + [k]) }
        }
        try walk(value, [])
        return result
    }

    private static func number(_ v: JSONValue, at path: String, id: ParameterID,
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

    private static func describe(_ v: JSONValue) -> String {
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
        var root: [String: Any] = ["schemaVersion": Preset.schemaVersion, "name": name, "description": description]
        if !all.isEmpty { root["all"] = track(all) }
        if !tracks.isEmpty { root["tracks"] = tracks.map(track) }
        var master: [String: Any] = [:]
        if let masterVolume { master["volume"] = masterVolume }
        if let limitDBTP { master["limitDBTP"] = limitDBTP }
        if !master.isEmpty { root["master"] = master }
        var output: [String: Any] = [:]
        if let sampleFormat { output["sampleFormat"] = sampleFormat }
        if let sampleRateHz { output["sampleRateHz"] = sampleRateHz }
        if let dither { output["dither"] = dither }
        if let clipping { output["clipping"] = clipping }
        if let normalizeLUFS { output["normalizeLUFS"] = normalizeLUFS }
        if let channels { output["channels"] = channels }
        if let lfeGainDB { output["lfeGainDB"] = lfeGainDB }
        if !output.isEmpty { root["output"] = output }
        return (try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }
}

private func insert(_ obj: inout [String: Any], _ path: [String], _ value: Any) {
    if path.count == 1 { obj[path[0]] = value; return }
    var child = obj[path[0]] as? [String: Any] ?? [:]
    insert(&child, Array(path.dropFirst()), value)
    obj[path[0]] = child
}
