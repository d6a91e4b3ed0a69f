import Foundation
import MixFX

/// `--automate [N:]KEY=VALUE@TIME[,CURVE],VALUE@TIME...`: one automation lane per flag.
///
/// - `N:` the track (from 1); without it, every track (as `--pitch` is every track's); the
///   master's parameters (`master-volume`, `limit`) take none.
/// - `KEY` a parameter that takes lanes (the registry's: `ParameterID.automatable`).
/// - `VALUE@TIME` a breakpoint: the value in any form the setting's flag takes (`2st`, `-6dB`,
///   `50%`, `200`), at TIME seconds (`4`, `4s`) or `mm:ss.s` (`1:30.5`, `1:02:03`) on the mix's
///   timeline.
/// - `CURVE` between two breakpoints: the curve of that segment (step, linear, db, exp, scurve);
///   left out, the parameter's (`AutomationScale.defaultCurve`: db for gains, exp for
///   frequencies, slopes and tempo, linear otherwise).
///
/// Every name, range and unit comes from the registry; the engine refuses what it does not
/// render yet (its message is printed as it is).
enum AutomationFlags {
    static let example = "e.g. --automate 2:pitch=0@0,200@4 or --automate volume=0dB@1:00,exp,-40dB@1:10.5"

    /// The lane `text` describes (the flag's value).
    static func parseLane(_ text: String, flag: String = "--automate") throws(CLIError) -> PresetLane {
        guard let eq = text.firstIndex(of: "=") else {
            throw .usage("\(flag) '\(text)': expected [N:]KEY=VALUE@TIME,[CURVE,]VALUE@TIME,... (\(example))")
        }
        let head = String(text[..<eq]), body = String(text[text.index(after: eq)...])
        let name = "\(flag) \(head)"
        // N: and KEY
        var key = head
        var track: Int?
        if let colon = head.firstIndex(of: ":") {
            let n = String(head[..<colon])
            guard let t = Int(n), t >= 1, t <= Preset.maximumTracks else {
                throw .usage("\(name): '\(n)' is not a track number (from 1 to \(Preset.maximumTracks); \(example))")
            }
            track = t - 1
            key = String(head[head.index(after: colon)...])
        }
        let keys = ParameterID.automatable.map(\.spec.key)
        guard let id = ParameterID.allCases.first(where: { $0.spec.key == key }), id.spec.automation != nil else {
            let known = ParameterID.allCases.contains { $0.spec.key == key }
            let hint = known ? "" : NameSuggestion.text(key, among: keys).map { "\($0); " } ?? ""
            throw .usage("\(name): \(known ? "\(key) cannot be automated" : "'\(key)' is not a parameter") (\(hint)allowed: lanes for \(keys.joined(separator: ", ")))")
        }
        if id.isMaster && track != nil {
            throw .usage("\(name): \(key) is the master bus's: give it without a track number (--automate \(key)=...)")
        }
        let target: LaneTarget = id.isMaster ? .master : track.map { .track($0) } ?? .everyTrack
        // the breakpoints and curves
        let scale = id.spec.automation!
        var points: [AutomationLane.Breakpoint] = []
        var pendingCurve: (AutomationCurve, String)?
        let items = body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        for item in items {
            guard !item.isEmpty else { throw .usage("\(name): an empty item between commas (\(example))") }
            if let at = item.firstIndex(of: "@") {
                let k = points.count + 1
                let value = try SessionOptions.value(String(item[..<at]), id: id, flag: "\(name), breakpoint \(k)")
                var timeText = String(item[item.index(after: at)...])
                if timeText.hasSuffix("s") { timeText.removeLast() }
                let seconds = try parseTime(timeText, flag: "\(name), breakpoint \(k) time", allowed: "from 0 s")
                if let (curve, _) = pendingCurve { points[points.count - 1].curve = curve }
                pendingCurve = nil
                points.append(.init(seconds: seconds, value: value, curve: scale.defaultCurve))
                continue
            }
            guard let curve = AutomationCurve(rawValue: item.lowercased()) else {
                let hint = NameSuggestion.text(item.lowercased(), among: AutomationCurve.allCases.map(\.rawValue)).map { "\($0); " } ?? ""
                throw .usage("\(name): '\(item)' is neither a breakpoint VALUE@TIME nor a curve (\(hint)curves: \(AutomationCurve.namesText))")
            }
            guard !points.isEmpty, pendingCurve == nil else {
                throw .usage("\(name): the curve '\(item)' must stand between two breakpoints (VALUE@TIME,\(item),VALUE@TIME)")
            }
            pendingCurve = (curve, item)
        }
        if let (_, item) = pendingCurve {
            throw .usage("\(name): the curve '\(item)' must stand between two breakpoints (VALUE@TIME,\(item),VALUE@TIME)")
        }
        guard !points.isEmpty else { throw .usage("\(name): no breakpoints (\(example))") }
        let lane = PresetLane(target: target, id: id, lane: AutomationLane(points))
        do { try lane.lane.validate(for: id, lane: lane.name) } catch {
            throw .usage("\(name)\(error.breakpoint.map { ", breakpoint \($0)" } ?? ""): \(error.problem) (allowed: \(error.allowed))")
        }
        return lane
    }

    // MARK: text

    /// A value in the parameter's unit, for listings ("+200 cents", "-6 dB", "0.5").
    static func valueText(_ v: Double, _ id: ParameterID) -> String {
        let spec = id.spec
        if spec.isLinearGain {
            return fmt(v) + (v > 0 ? String(format: " (%+.1f dB)", 20 * log10(v)) : " (-inf dB)")
        }
        return (spec.unit == "cents" && v > 0 ? "+" : "") + fmt(v) + (spec.unit.isEmpty ? "" : " " + spec.unit)
    }

    /// A lane's breakpoints in the `--automate` form it can be given back in
    /// (`0@0,200@4`, curves written where they are not the parameter's default).
    static func flagText(_ lane: PresetLane) -> String {
        let scale = lane.id.spec.automation ?? .linear
        let b = lane.lane.breakpoints
        var items: [String] = []
        for (k, p) in b.enumerated() {
            items.append("\(fmt(p.value))@\(fmt(p.seconds))")
            if k + 1 < b.count && p.curve != scale.defaultCurve { items.append(p.curve.rawValue) }
        }
        let head = switch lane.target {
        case .everyTrack, .master: lane.id.spec.key
        case .track(let i): "\(i + 1):\(lane.id.spec.key)"
        }
        return "\(head)=" + items.joined(separator: ",")
    }

    /// One line per lane for `--dry-run`: "track 2 pitch: 0 cents @ 0 s linear → +200 cents @
    /// 4 s; from 0 cents to +200 cents". A lane of more than 12 breakpoints (a pitch map's) shows
    /// its first 8 and its last 2, and how many there are (`--json` gives them all).
    static func listing(_ lane: PresetLane) -> String {
        let b = lane.lane.breakpoints, id = lane.id
        var parts: [String] = []
        for (k, p) in b.enumerated() {
            if b.count > 12 && k == 8 { parts.append("… (\(b.count) breakpoints) …") }
            if b.count > 12 && k >= 8 && k < b.count - 2 { continue }
            parts.append("\(valueText(p.value, id)) @ \(fmt(p.seconds)) s" + (k + 1 < b.count ? " \(p.curve.rawValue) →" : ""))
        }
        let values = b.map(\.value)
        return "\(lane.name): \(parts.joined(separator: " ")); from \(valueText(values.min()!, id)) to \(valueText(values.max()!, id))"
    }

    /// A lane as `--dry-run --json` and the report's JSON give it.
    static func json(_ lane: PresetLane) -> [String: Any] {
        let b = lane.lane.breakpoints
        var o: [String: Any] = [
            "parameter": lane.id.spec.key, "unit": lane.id.spec.unit,
            "breakpoints": b.enumerated().map { k, p -> [String: Any] in
                var x: [String: Any] = ["seconds": p.seconds, "value": p.value]
                if k + 1 < b.count { x["curve"] = p.curve.rawValue }
                return x
            },
            "minimum": b.map(\.value).min()!, "maximum": b.map(\.value).max()!,
        ]
        if case .track(let i) = lane.target { o["track"] = i + 1 }
        return o
    }
}
