import Foundation
import MixFX

/// Applies control commands to a playing session: the scriptable protocol of `mixfx play`
/// (one command per line on stdin) and what the terminal mixer's keys call.
///
///     track N KEY VALUE     KEY: volume, pan, bass, treble, pitch, mute, solo, bass-freq, ...
///     master volume V
///     seek SECONDS | seek +S | seek -S
///     pause | resume
///     save FILE.json [--force]   the current settings as a preset (never over an input;
///                           over an existing file only with --force)
///     status
///     quit
final class LiveControl: @unchecked Sendable {
    let player: LivePlayer
    let tracks: [Track]
    let engine: AudioEngine
    let inputs: [String]
    let sampleFormat: SampleFormat?
    let sampleRate: Int?

    init(player: LivePlayer, engine: AudioEngine, tracks: [Track], inputs: [String], sampleFormat: SampleFormat?, sampleRate: Int?) {
        self.player = player
        self.engine = engine
        self.tracks = tracks
        self.inputs = inputs
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
    }

    enum Outcome { case ok(String), quit }

    struct CommandError: Error { let message: String }

    /// Runs one command line. Throws a `CommandError` with a message for a bad command.
    func execute(_ line: String) throws(CommandError) -> Outcome {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { return .ok("") }
        switch verb {
        case "track":
            guard words.count == 4, let n = Int(words[1]) else {
                throw CommandError(message: "expected: track N KEY VALUE (e.g. track 2 pitch -300)")
            }
            guard n >= 1 && n <= tracks.count else {
                throw CommandError(message: "track \(words[1]): tracks go from 1 to \(tracks.count)")
            }
            guard let entry = trackFlagKeys.first(where: { $0.key == words[2] }) else {
                throw CommandError(message: "track \(n): unknown setting '\(words[2])' (settings: \(trackFlagKeys.map(\.key).joined(separator: ", ")))")
            }
            let v: Double
            do { v = try SessionOptions.value(words[3], id: entry.id, flag: "track \(n) \(words[2])") } catch {
                throw CommandError(message: error.message)
            }
            tracks[n - 1].parameter(entry.id)?.value = v
        case "master":
            guard words.count == 3, words[1] == "volume", let v = Double(words[2]) else {
                throw CommandError(message: "expected: master volume V")
            }
            if let p = ParameterID.masterVolume.spec.problem(with: v) {
                throw CommandError(message: "master volume: \(p) (allowed: \(ParameterID.masterVolume.spec.allowedText))")
            }
            engine.mainMixer.outputVolume = v
        case "seek":
            guard words.count == 2, let v = Double(words[1]) else { throw CommandError(message: "expected: seek SECONDS (or +S / -S)") }
            let relative = words[1].hasPrefix("+") || words[1].hasPrefix("-")
            let target = relative ? player.status.positionSeconds + v : v
            do { try player.seek(toSeconds: min(max(0, target), player.durationSeconds)) } catch {
                throw CommandError(message: "seek: \(error)")
            }
        case "pause": player.pause(true)
        case "resume", "play": player.pause(false)
        case "save":
            guard words.count == 2 || (words.count == 3 && words[2] == "--force") else {
                throw CommandError(message: "expected: save FILE.json [--force]")
            }
            do throws(OutputFileError) { try save(to: words[1], overwrite: words.count == 3) } catch {
                throw CommandError(message: "save: \(error)")
            }
        case "status":
            let s = player.status
            return .ok(String(format: "position %.3f s of %.3f s, dsp %.1f%%, underruns %d%@",
                              s.positionSeconds, s.durationSeconds, s.dspLoad * 100, s.underruns, s.isPaused ? ", paused" : ""))
        case "quit", "exit": return .quit
        case "debug":
            guard words.count == 3, words[1] == "stall", let ms = Int(words[2]) else { throw CommandError(message: "expected: debug stall MS") }
            player.stall(milliseconds: ms)
        default:
            throw CommandError(message: "unknown command '\(verb)' (commands: track, master, seek, pause, resume, save, status, quit)")
        }
        return .ok(line)
    }

    /// The current settings of every track as a preset that loads back to the same mix.
    func currentPreset() -> Preset {
        var p = Preset(name: "saved", description: "Settings saved from mixfx play (\(inputs.count) track(s)).")
        p.tracks = tracks.map { t in
            var v: [ParameterID: Double] = [:]
            for (_, id) in Preset.trackKeys { v[id] = t.parameter(id)?.value }
            return v
        }
        p.masterVolume = engine.mainMixer.outputVolume
        p.sampleFormat = sampleFormat?.rawValue
        p.sampleRateHz = sampleRate
        return p
    }

    /// Writes the current settings as a preset, by the rules every output follows (never an
    /// input, never an existing file unless `overwrite`, temporary file and rename).
    func save(to path: String, overwrite: Bool = false) throws(OutputFileError) {
        try OutputFile.write(currentPreset().jsonData(), to: path, inputs: inputs, overwrite: overwrite)
    }
}
