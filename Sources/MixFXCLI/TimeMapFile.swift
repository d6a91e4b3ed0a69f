import Foundation
import MixFX

/// `--timemap [N:]FILE`: Rubber Band's time map (`rubberband --timemap`), read as `TimeMap`
/// reads it, for track N or every track. A session option like `--pitchmap`: it becomes the
/// track's tempo lane when the session is resolved (`TimeMap.tempoLane`, which needs the
/// track's file's rate and length, its placement and its speed), so `--print-preset` writes it
/// as that lane, a preset or a batch job carries it, and `--dry-run` lists it.
struct TimeMapFile: Equatable {
    /// The track (0-based; nil: every track).
    var track: Int?
    var path: String
    var map: TimeMap

    static let flag = "--timemap"

    /// Reads the flag's value `text` (`[N:]FILE`) and the file.
    static func parse(_ text: String, flag: String = TimeMapFile.flag) throws(CLIError) -> TimeMapFile {
        let (track, path) = try PitchMapFile.trackAndPath(text, flag: flag)
        let data = try PitchMapFile.read(path, flag: flag)
        guard let text = String(data: data, encoding: .utf8) else {
            throw .usage("\(flag): \(PathBytes.shown(path)): not UTF-8 text (allowed: lines SOURCEFRAME TARGETFRAME)")
        }
        do throws(TimeMapError) {
            return TimeMapFile(track: track, path: path, map: try TimeMap(parsing: text, name: PathBytes.shown(path)))
        } catch {
            throw .usage("\(flag) \(error.description)")
        }
    }

    /// The map as the tempo lane of a track whose file has `frameCount` frames at `sampleRate`,
    /// placed and sped by `values` (the track's resolved settings).
    /// `trackName` ("track 2 (b.wav)") says in errors which track's file the map was read against.
    func lane(sampleRate: Int, frameCount: Int, values: [ParameterID: Double], trackName: String) throws(CLIError) -> AutomationLane {
        let placement = Placement(startSeconds: values[.startSeconds] ?? 0, trimInSeconds: values[.trimInSeconds] ?? 0,
                                  trimOutSeconds: values[.trimOutSeconds] ?? 0)
        do throws(TimeMapError) {
            return try map.tempoLane(sampleRate: sampleRate, frameCount: frameCount, placement: placement, speed: values[.speed] ?? 1)
        } catch {
            // (the engine's message says "the file": the map is checked against this track's)
            throw .usage("\(Self.flag) " + error.description.replacingOccurrences(of: "past the end of the file", with: "past the end of \(trackName)"))
        }
    }
}
