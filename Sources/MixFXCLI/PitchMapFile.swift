import Foundation
import MixFX

/// `--pitchmap [N:]FILE`: Rubber Band's pitch map, as `rubberband --pitchmap` reads it. Each
/// line is `FRAME SEMITONES` (a frame of the track's source file, from 0, and a shift in
/// semitones), separated by spaces or tabs; blank lines are skipped. As in Rubber Band, the
/// offsets are not cumulative and are relative to the track's own pitch (`--pitch`, as to
/// `rubberband -p`), the lines may come in any order and a frame given twice takes its last
/// line; the pitch steps to the new value at that frame and holds until the next.
///
/// Rubber Band has one input; mixfx applies a map to every track (`--pitchmap FILE`) or to
/// track N (`--pitchmap N:FILE`; a file whose name starts with digits and a colon is given as
/// `./2:name`). FRAME counts frames of that track's file, so the map stays right whatever the
/// mix's rate: source frame F of a track placed at `start` S and trimmed from frame I (its
/// `trim-in`), played at speed v, is heard at mix time t = (round(S·R·v) + F − I) / (R·v)
/// (R the file's rate: `Placement.frames`), where the step is put. Lines before the trim's
/// start set the value the segment starts with; lines at or after its end are not heard and
/// are dropped.
struct PitchMapFile: Equatable {
    /// The track (nil: every track).
    var track: Int?
    var path: String
    /// The map's steps, in frame order (a frame given twice: its last line).
    var entries: [(frame: Int, semitones: Double, line: Int)]

    static func == (a: PitchMapFile, b: PitchMapFile) -> Bool {
        a.track == b.track && a.path == b.path && a.entries.elementsEqual(b.entries) { $0 == $1 }
    }

    /// The largest map file read (pitch maps and time maps).
    static let maximumBytes = 64 << 20

    /// Reads the flag's value `text` (`[N:]FILE`) and the file.
    static func parse(_ text: String, flag: String = "--pitchmap") throws(CLIError) -> PitchMapFile {
        let (track, path) = try trackAndPath(text, flag: flag)
        let data = try read(path, flag: flag)
        return PitchMapFile(track: track, path: path, entries: try entries(data, name: "\(flag): \(PathBytes.shown(path))"))
    }

    /// A map flag's value `[N:]FILE` split: the track (0-based; nil: every track) and the path.
    /// (A file whose name starts with digits and a colon is given as `./2:name`.)
    static func trackAndPath(_ text: String, flag: String) throws(CLIError) -> (track: Int?, path: String) {
        var track: Int?, path = text
        if let colon = text.firstIndex(of: ":"), !text[..<colon].isEmpty, text[..<colon].allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let n = Int(text[..<colon]), n >= 1, n <= Preset.maximumTracks else {
                throw .usage("\(flag) \(text): '\(text[..<colon])' is not a track number (from 1 to \(Preset.maximumTracks))")
            }
            track = n - 1
            path = String(text[text.index(after: colon)...])
        }
        guard !path.isEmpty else { throw .usage("\(flag) \(text): no file given (usage: \(flag) [N:]FILE)") }
        return (track, path)
    }

    /// A map file's bytes: opened once and checked on the descriptor (a FIFO or a device is
    /// refused, not read), at most `maximumBytes`.
    static func read(_ path: String, flag: String) throws(CLIError) -> Data {
        do { return Data(try RegularFile.read(path, maximumBytes: maximumBytes)) } catch {
            throw .usage("\(flag): \(PathBytes.shown(path)): \(error.reason)")
        }
    }

    /// The lines of a map (`name` names the file in messages).
    static func entries(_ data: Data, name: String) throws(CLIError) -> [(frame: Int, semitones: Double, line: Int)] {
        var byFrame: [Int: (Double, Int)] = [:]
        let text = String(decoding: data, as: UTF8.self)
        // (`isNewline`: "\r\n" is one Character, so a split on "\n" alone would not cut CRLF lines)
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = i + 1
            let fields = raw.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            if fields.isEmpty { continue }
            guard fields.count == 2 else {
                throw .usage("\(name), line \(line): '\(raw.trimmingCharacters(in: .whitespacesAndNewlines))' is not FRAME SEMITONES (e.g. 48000 2.5)")
            }
            guard fields[0].allSatisfy({ $0.isASCII && $0.isNumber }), let frame = Int(fields[0]) else {
                throw .usage("\(name), line \(line): '\(fields[0])' is not a frame number (a whole number from 0)")
            }
            let st = try parseNumber(fields[1], flag: "\(name), line \(line)")
            byFrame[frame] = (st, line)
        }
        guard !byFrame.isEmpty else { throw .usage("\(name): no lines FRAME SEMITONES") }
        return byFrame.sorted { $0.key < $1.key }.map { ($0.key, $0.value.0, $0.value.1) }
    }

    /// The map as a step pitch lane on the mix's timeline for a track whose file has
    /// `frameCount` frames at `sampleRate`, placed by `values` (the track's resolved settings:
    /// placement, speed, tempo, pitch) and `timeMap` (its time map, if it has one: source frame
    /// F is then at start + (T(F) − T(trim-in))/(R·v), as the map's tempo lane puts it; else at
    /// start + (F − trim-in)/(R·v·tempo)). `laneName` names the lane in messages.
    func lane(sampleRate: Int, frameCount: Int, values: [ParameterID: Double], timeMap: TimeMap? = nil,
              laneName: String) throws(CLIError) -> AutomationLane {
        let placement = Placement(startSeconds: values[.startSeconds] ?? 0, trimInSeconds: values[.trimInSeconds] ?? 0,
                                  trimOutSeconds: values[.trimOutSeconds] ?? 0)
        let speed = values[.speed] ?? 1, base = values[.pitchCents] ?? 0
        let tempo = timeMap == nil ? values[.tempo] ?? 1 : 1
        let f = placement.frames(sampleRate: sampleRate, frameCount: frameCount, speed: speed)
        let rate = Double(sampleRate) * speed
        /// The timeline seconds of source frame `x` (at or after the trim-in).
        func seconds(_ x: Int) -> Double {
            if let timeMap {
                return placement.startSeconds + (timeMap.target(ofSource: Double(x)) - timeMap.target(ofSource: Double(f.trimIn))) / rate
            }
            return Double(f.silence) / rate + Double(x - f.trimIn) / (rate * tempo)
        }
        let spec = ParameterID.pitchCents.spec
        var points: [AutomationLane.Breakpoint] = [.init(seconds: 0, value: base, curve: .step)]
        for e in entries where e.frame < f.trimIn + f.length {
            let cents = base + 100 * e.semitones
            if let p = spec.problem(with: cents) {
                throw .usage("--pitchmap: \(PathBytes.shown(path)), line \(e.line): \(laneName): \(fmt(e.semitones)) semitones on the track's \(fmt(base)) cents is \(fmt(cents)) cents: \(p) (allowed: \(spec.allowedText))")
            }
            let seconds = e.frame <= f.trimIn ? 0 : seconds(e.frame)
            if seconds == points[points.count - 1].seconds { points[points.count - 1].value = cents } else {
                points.append(.init(seconds: seconds, value: cents, curve: .step))
            }
        }
        points[points.count - 1].curve = ParameterID.pitchCents.spec.automation!.defaultCurve
        return AutomationLane(points)
    }
}
