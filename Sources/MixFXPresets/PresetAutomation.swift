import Foundation
import MixFXEngine

/// Where a lane applies: every track, one track (0-based), or the master bus (the parameters
/// that are the mixer's or its limiter's: `ParameterID.isMaster`).
public enum LaneTarget: Hashable, Sendable {
    case everyTrack
    case track(Int)
    case master

    /// How messages name the lane of parameter `id` here: "track 2 pitch", "every track's
    /// volume", "master-volume".
    public func laneName(_ id: ParameterID) -> String {
        switch self {
        case .everyTrack: "every track's \(id.spec.key)"
        case .track(let i): "track \(i + 1) \(id.spec.key)"
        case .master: id.spec.key
        }
    }
}

/// One automation lane of a preset (or of the command line's `--automate`): which parameter,
/// where, and its breakpoints (`AutomationLane`, checked against the registry).
public struct PresetLane: Equatable, Sendable {
    public var target: LaneTarget
    public var id: ParameterID
    public var lane: AutomationLane

    public init(target: LaneTarget, id: ParameterID, lane: AutomationLane) {
        self.target = target
        self.id = id
        self.lane = lane
    }

    /// How messages name it ("track 2 pitch").
    public var name: String { target.laneName(id) }
}

/// The preset's `automation` section (schema version 3): a list of lanes,
///
///     "automation": [
///       { "track": 2, "parameter": "pitch",
///         "breakpoints": [ { "seconds": 0, "value": 0, "curve": "linear" },
///                          { "seconds": 4, "value": 200 } ] },
///       { "track": "all", "parameter": "volume", "breakpoints": [ ... ] },
///       { "parameter": "master-volume", "breakpoints": [ ... ] } ]
///
/// `track`: the track number from 1, or "all"; absent for the master's parameters
/// (`master-volume`, `limit`). `parameter`: the registry's key of a parameter that takes lanes
/// (`ParameterID.automatable`). A breakpoint: `seconds` on the mix's timeline, `value` in the
/// parameter's own unit (as everywhere in presets), `curve` of the segment that follows
/// (default: the registry's, `AutomationScale.defaultCurve`; the last breakpoint's is unused
/// and not written).
extension Preset {
    /// The first schema version with the `automation` section.
    public static let automationVersion = 3

    /// The schema version a preset needs for what it holds: 3 with lanes, else 2 (so a preset
    /// without lanes is written as before and older mixfx read it).
    public var neededSchemaVersion: Int { automation.isEmpty ? 2 : Preset.automationVersion }

    /// Reads the `automation` array (`at`: "automation").
    static func parseAutomation(_ value: JSONValue, version: Int, fail: (String, String) -> PresetError,
                                warnings: inout [String], source: String) throws(PresetError) -> [PresetLane] {
        guard version >= automationVersion else {
            warnings.append("preset '\(source)': automation needs schemaVersion \(automationVersion) (this preset says \(version); ignored)")
            return []
        }
        guard case .array(let items) = value else { throw fail("automation", "must be an array of lanes, not \(value.kindText)") }
        var lanes: [PresetLane] = []
        var seen: [PresetLaneKey: Int] = [:]
        for (i, item) in items.enumerated() {
            let here = "automation[\(i)]"
            guard case .object(let o) = item else { throw fail(here, "must be an object (a lane), not \(item.kindText)") }
            for key in o.keys.sorted() where !["track", "parameter", "breakpoints"].contains(key) {
                warnings.append("preset '\(source)': unknown key \(here).\(key) \(ignoredText(key, among: ["track", "parameter", "breakpoints"]))")
            }
            // the parameter
            let keys = ParameterID.automatable.map(\.spec.key)
            guard let p = o["parameter"] else { throw fail("\(here).parameter", "missing (one of \(keys.joined(separator: ", ")))") }
            guard case .string(let key) = p else { throw fail("\(here).parameter", "must be a string, not \(p.kindText)") }
            guard let id = ParameterID.allCases.first(where: { $0.spec.key == key }), id.spec.automation != nil else {
                let known = ParameterID.allCases.contains { $0.spec.key == key }
                let what = known ? "\(key) cannot be automated" : "\"\(key)\" is not a parameter"
                let hint = known ? "" : NameSuggestion.text(key, among: keys).map { "\($0); " } ?? ""
                throw fail("\(here).parameter", "\(what) (\(hint)allowed: \(keys.joined(separator: ", ")))")
            }
            // the track
            let target: LaneTarget
            switch o["track"] {
            case nil:
                guard id.isMaster else { throw fail("\(here).track", "missing (a track number from 1, or \"all\"; \(key) is a track's)") }
                target = .master
            case .some(let t):
                guard !id.isMaster else { throw fail("\(here).track", "\(key) is the master bus's: give no track") }
                switch t {
                case .string("all"): target = .everyTrack
                case .number(let n) where n.rounded() == n && n >= 1 && n <= Double(maximumTracks): target = .track(Int(n) - 1)
                default: throw fail("\(here).track", "\(describe(t)) is not a track number from 1 to \(maximumTracks), or \"all\"")
                }
            }
            // the breakpoints
            let scale = id.spec.automation!
            guard let b = o["breakpoints"] else { throw fail("\(here).breakpoints", "missing (an array of { \"seconds\", \"value\", \"curve\" })") }
            guard case .array(let points) = b, !points.isEmpty else {
                throw fail("\(here).breakpoints", "must be a non-empty array of { \"seconds\", \"value\", \"curve\" }, not \(b.kindText)")
            }
            var breakpoints: [AutomationLane.Breakpoint] = []
            for (k, point) in points.enumerated() {
                let at = "\(here).breakpoints[\(k)]"
                guard case .object(let bp) = point else { throw fail(at, "must be an object { \"seconds\", \"value\", \"curve\" }, not \(point.kindText)") }
                for key in bp.keys.sorted() where !["seconds", "value", "curve"].contains(key) {
                    warnings.append("preset '\(source)': unknown key \(at).\(key) \(ignoredText(key, among: ["seconds", "value", "curve"]))")
                }
                guard case .number(let s)? = bp["seconds"] else {
                    throw fail("\(at).seconds", bp["seconds"].map { "must be a number, not \($0.kindText)" } ?? "missing (seconds on the mix's timeline)")
                }
                // (a switch's lane holds 0 and 1, as `--print-preset` writes it; true and false too)
                let value: Double
                if id.spec.isBoolean, case .number(let n)? = bp["value"] {
                    guard n == 0 || n == 1 else {
                        throw fail("\(at).value", "\(describe(.number(n))) is not 0 or 1 (allowed: 0 (off) or 1 (on), or false or true)")
                    }
                    value = n
                } else {
                    value = try number(bp["value"] ?? .null, at: "\(at).value", id: id, fail: fail)
                }
                var curve = scale.defaultCurve
                if let c = bp["curve"] {
                    guard case .string(let name) = c, let parsed = AutomationCurve(rawValue: name) else {
                        throw fail("\(at).curve", "\(describe(c)) is not a curve (allowed: \(AutomationCurve.namesText))")
                    }
                    curve = parsed
                }
                breakpoints.append(.init(seconds: s, value: value, curve: curve))
            }
            breakpoints[breakpoints.count - 1].curve = scale.defaultCurve   // (unused: see the type's notes)
            let lane = PresetLane(target: target, id: id, lane: AutomationLane(breakpoints))
            do { try lane.lane.validate(for: id, lane: lane.name) } catch {
                let field = error.breakpoint.map { "\(here).breakpoints[\($0 - 1)]" } ?? here
                throw fail(field, "\(error.problem) (allowed: \(error.allowed))")
            }
            let laneKey = PresetLaneKey(target: target, id: id)
            if let first = seen[laneKey] { throw fail(here, "a second lane for \(lane.name) (the first is automation[\(first)])") }
            seen[laneKey] = i
            lanes.append(lane)
        }
        return lanes
    }

    /// The `automation` array as written (see `parseAutomation`).
    func automationJSON() -> [[String: Any]] {
        automation.map { l in
            var o: [String: Any] = ["parameter": l.id.spec.key]
            switch l.target {
            case .everyTrack: o["track"] = "all"
            case .track(let i): o["track"] = i + 1
            case .master: break
            }
            let last = l.lane.breakpoints.count - 1
            o["breakpoints"] = l.lane.breakpoints.enumerated().map { k, p -> [String: Any] in
                var b: [String: Any] = ["seconds": p.seconds, "value": l.id.spec.isInteger ? Int(p.value) as Any : p.value as Any]
                if k < last { b["curve"] = p.curve.rawValue }
                return b
            }
            return o
        }
    }
}

/// A lane's place, for finding two lanes of one parameter in one place.
struct PresetLaneKey: Hashable {
    let target: LaneTarget
    let id: ParameterID
}
