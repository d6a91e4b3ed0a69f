/// A time map in Rubber Band's format (`rubberband --timemap FILE`): lines `SOURCEFRAME
/// TARGETFRAME`, whole frames of the file at its own rate, each pinning a source frame to the
/// output frame it must land on; time is piecewise linear between them. Rendered as the
/// track's tempo lane (`tempoLane`): between two points the tempo is ΔSOURCE/ΔTARGET, a step
/// at each point, so the output's input position is exactly the map (`TrackTempo`).
///
/// - The map starts at `0 0` (as Rubber Band's does; a first line `0 0` may be given).
/// - After the last line its last segment's tempo holds to the end of the file; a last line
///   whose source frame is the file's length (its end: frames 0 ..< N were read) gives the
///   output's length, its target frame.
/// - A track placed later or trimmed: the map is the file's, and the track's start sits at its
///   trim-in frame's mapped time. File frame F (at or after trim-in I) is heard at mix time
///   start + (T(F) − T(I))/rate, T being the map (with `--speed` v the map's times are the
///   speed's too: v also divides the source's time).
///
/// Blank lines and lines starting with `#` are skipped. Errors name the file and line.
public struct TimeMap: Sendable, Equatable {
    /// One line: a source frame, the target frame it lands on, and the line it was on (0 for
    /// the implicit start).
    public struct Point: Sendable, Equatable {
        public var source: Int
        public var target: Int
        public var line: Int
        public init(source: Int, target: Int, line: Int = 0) {
            self.source = source
            self.target = target
            self.line = line
        }
    }

    /// The points, from `0 0`, both columns increasing.
    public let points: [Point]
    /// Where it was read from (errors name it).
    public let name: String

    /// The tempos a time map may ask for (a moving tempo renders through the streaming
    /// shifter, whose buffers hold these).
    public static let tempoRange = 0.25...4.0

    /// Reads the map in `text` (named `name` in errors).
    public init(parsing text: String, name: String) throws(TimeMapError) {
        self.name = name
        var points = [Point(source: 0, target: 0, line: 0)]
        var lineNumber = 0
        // (`isNewline`: "\r\n" is one Character, so a split on "\n" alone would not cut CRLF lines)
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            let line = String(raw.drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count == 2, let s = Int(fields[0]), let t = Int(fields[1]), s >= 0, t >= 0 else {
                throw TimeMapError(file: name, line: lineNumber, problem: "'\(line)' is not two frame numbers",
                                   allowed: "lines SOURCEFRAME TARGETFRAME, whole numbers from 0, e.g. 44100 66150")
            }
            let p = Point(source: s, target: t, line: lineNumber)
            let last = points[points.count - 1]
            if s == 0 && t == 0 && last.line == 0 { continue }   // the start, given
            guard s > last.source && t > last.target else {
                let which = s <= last.source ? "source frame \(s)" : "target frame \(t)"
                let before = last.line == 0 ? "the start (0 0)" : "line \(last.line) (\(last.source) \(last.target))"
                throw TimeMapError(file: name, line: lineNumber, problem: "\(which) is not after \(before)",
                                   allowed: "source and target frames that both increase from line to line")
            }
            let tempo = Double(s - last.source) / Double(t - last.target)
            guard Self.tempoRange.contains(tempo) else {
                throw TimeMapError(file: name, line: lineNumber,
                                   problem: "from \(last.line == 0 ? "the start" : "line \(last.line)") to here \(s - last.source) source frames take \(t - last.target) target frames, a tempo of \(format(tempo))",
                                   allowed: "tempos ΔSOURCE/ΔTARGET from \(format(Self.tempoRange.lowerBound)) to \(format(Self.tempoRange.upperBound))")
            }
            points.append(p)
        }
        guard points.count > 1 else {
            throw TimeMapError(file: name, line: nil, problem: "no points", allowed: "lines SOURCEFRAME TARGETFRAME, e.g. 44100 66150")
        }
        self.points = points
    }

    /// The tempo of the segment from point i (the last segment's from the last point on).
    private func tempo(from i: Int) -> Double {
        let k = min(i, points.count - 2)
        return Double(points[k + 1].source - points[k].source) / Double(points[k + 1].target - points[k].target)
    }

    /// T(F): the target frame of source frame `frame` (fractional; past the last point, its
    /// segment's tempo holds).
    public func target(ofSource frame: Double) -> Double {
        var i = 0
        while i + 2 < points.count && Double(points[i + 1].source) <= frame { i += 1 }
        if Double(points[i + 1].source) <= frame { i = points.count - 1 }
        let p = points[min(i, points.count - 1)]
        return Double(p.target) + (frame - Double(p.source)) / tempo(from: i)
    }

    /// The tempo lane of a track playing a file of `frameCount` frames at `sampleRate` Hz,
    /// placed by `placement` and played at `speed`: a step at each point's mix time (see the
    /// type's notes), point (S, T) at start + (T − T(I))/(R·v). A source frame past the file's
    /// end is an error naming its line.
    public func tempoLane(sampleRate: Int, frameCount: Int, placement: Placement, speed: Double = 1) throws(TimeMapError) -> AutomationLane {
        if let p = points.first(where: { $0.source > frameCount }) {
            throw TimeMapError(file: name, line: p.line, problem: "source frame \(p.source) is past the end of the file (\(frameCount) frames)",
                               allowed: "source frames from 0 to \(frameCount)")
        }
        let rate = Double(sampleRate) * speed
        let trimIn = Double(placement.frames(sampleRate: sampleRate, frameCount: frameCount).trimIn)
        let origin = target(ofSource: trimIn)
        // the segment holding the trim-in frame, and the points after it
        var first = 0
        while first + 1 < points.count - 1 && Double(points[first + 1].source) <= trimIn { first += 1 }
        var lane = [AutomationLane.Breakpoint(seconds: placement.startSeconds, value: tempo(from: first), curve: .step)]
        for i in (first + 1)..<points.count where Double(points[i].source) > trimIn {
            lane.append(.init(seconds: placement.startSeconds + (Double(points[i].target) - origin) / rate, value: tempo(from: i), curve: .step))
        }
        return AutomationLane(lane)
    }
}

/// A time map that cannot be used: the file, the line (nil: the whole file), the problem and
/// what is allowed.
public struct TimeMapError: Error, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let problem: String
    public let allowed: String

    public var description: String { "\(file)\(line.map { ":\($0)" } ?? ""): \(problem) (allowed: \(allowed))" }
}

extension Track {
    /// Sets this track's tempo lane from `map` (`TimeMap.tempoLane`) for its file, its
    /// placement and its speed as they are now (set those first). Control side.
    public func setTimeMap(_ map: TimeMap) throws(TimeMapError) {
        let f = AudioEngine.unplacedFormat(player.source)
        automation[.tempo] = try map.tempoLane(sampleRate: f.sampleRate, frameCount: f.frameCount, placement: player.placement,
                                               speed: player.speed)
    }
}
