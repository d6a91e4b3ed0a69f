import MixFX

/// One line of `mixfx play`'s control protocol, parsed and checked, before anything is applied
/// (so the parser can be tested and fuzzed alone; `LiveControl` applies it).
enum ControlCommand: Equatable {
    case setTrack(track: Int, id: ParameterID, value: Double)
    /// `track all KEY VALUE`: every track at once (the same block sees them all).
    case setAllTracks(id: ParameterID, value: Double)
    case masterVolume(Double)
    /// `track N KEY release`, `track all KEY release`, `master volume release`, `release`: the
    /// hand lets go of a setting it moved (its lane, if it has one, plays again).
    case releaseTrack(track: Int, id: ParameterID)
    case releaseAllTracks(id: ParameterID)
    case releaseMaster
    case releaseAll
    /// The master limiter's ceiling, dBTP (a session started with `--limit`).
    case limiterCeiling(Double)
    /// Seconds; relative to the position when `relative`.
    case seek(seconds: Double, relative: Bool)
    case pause, resume, status, quit
    case save(path: String, force: Bool)
    case debugStall(milliseconds: Int)

    struct ParseError: Error, Equatable { let message: String }

    /// The longest stall `debug stall` may ask for (a test hook).
    static let maximumStallMilliseconds = 10_000

    /// Parses `line` for a session of `trackCount` tracks; nil for a blank line.
    static func parse(_ line: String, trackCount: Int) throws(ParseError) -> ControlCommand? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { return nil }
        func fail(_ m: String) -> ParseError { ParseError(message: m) }
        switch verb {
        case "track":
            let all = words.count == 4 && words[1] == "all"
            guard words.count == 4, let n = all ? 0 : Int(words[1]) else {
                throw fail("expected: track N KEY VALUE, track all KEY VALUE or track N KEY release (e.g. track 2 pitch -300)")
            }
            guard all || (n >= 1 && n <= trackCount) else { throw fail("track \(words[1]): tracks go from 1 to \(trackCount), or all") }
            guard let id = ParameterID.track(key: words[2]) else {
                throw fail("track \(n): unknown setting '\(words[2])' (settings: \(ParameterID.trackKeysText))")
            }
            guard id.spec.isLive else {
                throw fail("track \(n) \(words[2]): fixed when playback starts (give it on the command line or in the preset); live settings: \(ParameterID.trackParameters.filter(\.spec.isLive).map(\.spec.key).joined(separator: ", "))")
            }
            if words[3] == "release" { return all ? .releaseAllTracks(id: id) : .releaseTrack(track: n, id: id) }
            let flag = "track \(words[1]) \(words[2])"
            let value: Double
            do { value = try SessionOptions.value(words[3], id: id, flag: flag) } catch { throw fail(error.message) }
            let live = PitchShifterSettings.liveTempoRange
            if id == .tempo && !live.contains(value) {
                throw fail("\(flag) \(words[3]): live playback takes tempos from \(fmt(live.lowerBound)) to \(fmt(live.upperBound)) (render the session for tempos beyond)")
            }
            return all ? .setAllTracks(id: id, value: value) : .setTrack(track: n, id: id, value: value)
        case "master":
            if words.count == 3 && words[1] == "limit" {
                do { return .limiterCeiling(try SessionOptions.value(words[2], id: .limiterCeilingDBTP, flag: "master limit")) } catch {
                    throw fail(error.message)
                }
            }
            guard words.count == 3, words[1] == "volume" else {
                throw fail("expected: master volume V, master volume release, or master limit CEILING_DBTP")
            }
            if words[2] == "release" { return .releaseMaster }
            // (read as --master-volume reads it: linear, 50% or -6dB)
            do { return .masterVolume(try SessionOptions.value(words[2], id: .masterVolume, flag: "master volume")) } catch {
                throw fail(error.message)
            }
        case "seek":
            guard words.count == 2, isDecimal(words[1]), let v = Double(words[1]), v.isFinite else {
                throw fail("expected: seek SECONDS (or +S / -S), a decimal number")
            }
            return .seek(seconds: v, relative: words[1].hasPrefix("+") || words[1].hasPrefix("-"))
        case "release":
            guard words.count == 1 else { throw fail("expected: release (every setting moved by hand), or track N KEY release, master volume release") }
            return .releaseAll
        case "pause": return .pause
        case "resume", "play": return .resume
        case "save":
            guard words.count == 2 || (words.count == 3 && words[2] == "--force") else { throw fail("expected: save FILE.json [--force]") }
            // (a name forgotten is not a file named `--force`: ./-name gives such a name; a
            // name in quotes, as a shell takes it, is the name inside them)
            var path = String(words[1])
            guard !path.hasPrefix("-") else { throw fail("expected: save FILE.json [--force], the file's name first ('\(path)' is not a file name; for a name that starts with '-', write ./\(path))") }
            if path.count >= 2, let q = path.first, q == "\"" || q == "'", path.last == q { path = String(path.dropFirst().dropLast()) }
            return .save(path: path, force: words.count == 3)
        case "status": return .status
        case "quit", "exit": return .quit
        case "debug":
            guard words.count == 3, words[1] == "stall", let ms = Int(words[2]), ms >= 0, ms <= maximumStallMilliseconds else {
                throw fail("expected: debug stall MS (0 to \(maximumStallMilliseconds))")
            }
            return .debugStall(milliseconds: ms)
        default:
            throw fail("unknown command '\(verb)' (commands: track, master, release, seek, pause, resume, save, status, quit)")
        }
    }
}
