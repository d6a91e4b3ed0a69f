import Foundation
import MixFX

/// Applies control commands to a playing session: the scriptable protocol of `mixfx play`
/// (one command per line on stdin) and what the terminal mixer's keys call.
///
///     track N KEY VALUE     KEY: volume, pan, bass, treble, pitch, tempo, mute, solo, bass-freq, ...
///     track all KEY VALUE   every track
///     master volume V
///     track N KEY release | track all KEY release | master volume release | release
///                           the hand lets go (a move touches the setting: it takes over the
///                           setting's lane until released, `AudioParameter.touch`)
///     seek SECONDS | seek +S | seek -S
///     pause | resume
///     save FILE.json [--force]   the current settings as a preset, with the session's lanes
///                           and the touches written into them (never over an input; over an
///                           existing file only with --force)
///     status
///     quit
/// `@unchecked Sendable`: its fields are set in `init`; commands run on one thread at a time
/// (the control input's or the terminal mixer's) and reach the engine through atomics.
final class LiveControl: @unchecked Sendable {
    let player: LivePlayer
    let tracks: [Track]
    let engine: AudioEngine
    let inputs: [String]
    /// The preset file the session was read from (never saved over, like the tracks).
    var presetFiles: [String] = []
    /// The files the device writes (`--device file:...`): never saved over either.
    var deviceFiles: [String] = []
    let sampleFormat: SampleFormat?
    let sampleRate: Int?
    /// What the touched gains and EQ settings played (each track's volume, pan and EQ, the
    /// master volume), written into the lanes by `save` (`TouchTakes`).
    let touches: [TouchTakes]

    init(player: LivePlayer, engine: AudioEngine, tracks: [Track], inputs: [String], sampleFormat: SampleFormat?, sampleRate: Int?) {
        self.player = player
        self.engine = engine
        self.tracks = tracks
        self.inputs = inputs
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
        let rate = Double(player.kernel.layout.sampleRate)
        touches = (tracks.flatMap { t in ParameterID.trackParameters.compactMap { t.parameter($0) } } + [engine.mainMixer.outputVolumeParameter])
            .filter { $0.touchRecording != nil }
            .map { TouchTakes($0, sampleRate: rate) }
    }

    /// Takes what the render side recorded of the touches (call every few tens of ms while
    /// playing, so its rings never fill).
    func collectTouches() { for t in touches { t.collect() } }

    /// Every setting a hand holds lets go.
    func releaseAll() {
        for t in tracks { for id in ParameterID.trackParameters { t.parameter(id)?.release() } }
        engine.mainMixer.outputVolumeParameter.release()
    }

    /// Why a hand move of `id` on track `track` (0-based) would not be heard, nil when it
    /// would: a tempo on a session that plays on its timeline
    /// (`RenderKernel.playsOnTimeline`: its tempos are the session's), or on a track whose
    /// moving pitch lane's shifter keeps the tempo it started with.
    func handMoveProblem(track: Int, _ id: ParameterID) -> String? {
        let t = tracks[track]
        switch id {
        case .tempo where player.kernel.playsOnTimeline:
            return "is fixed while this session plays: its lanes play on the session's timeline, which the tempos set (give tempos with --tempo, a tempo lane or the preset)"
        case .tempo where t.timePitch.pitchParameter.automation.map({ $0.constantValue == nil }) ?? false:
            return "is fixed while this track follows a moving pitch lane (give the tempo when playback starts)"
        default:
            return nil
        }
    }

    enum Outcome { case ok(String), quit }

    struct CommandError: Error { let message: String }

    /// Runs one command line (see `ControlCommand`). Throws a `CommandError` with a message for
    /// a bad command.
    func execute(_ line: String) throws(CommandError) -> Outcome {
        let command: ControlCommand?
        do { command = try ControlCommand.parse(line, trackCount: tracks.count) } catch {
            throw CommandError(message: error.message)
        }
        guard let command else { return .ok("") }
        switch command {
        case .setTrack(let n, let id, _):
            if let problem = handMoveProblem(track: n - 1, id) { throw CommandError(message: "track \(n) \(id.spec.key): \(problem)") }
        case .setAllTracks(let id, _):
            for k in tracks.indices {
                if let problem = handMoveProblem(track: k, id) { throw CommandError(message: "track all \(id.spec.key): track \(k + 1) \(problem)") }
            }
        default: break
        }
        switch command {
        case .setTrack(let n, let id, let v): tracks[n - 1].parameter(id)?.touch(v)
        case .setAllTracks(let id, let v): for t in tracks { t.parameter(id)?.touch(v) }
        case .masterVolume(let v): engine.mainMixer.outputVolumeParameter.touch(v)
        case .releaseTrack(let n, let id): tracks[n - 1].parameter(id)?.release()
        case .releaseAllTracks(let id): for t in tracks { t.parameter(id)?.release() }
        case .releaseMaster: engine.mainMixer.outputVolumeParameter.release()
        case .releaseAll: releaseAll()
        case .limiterCeiling(let v):
            guard let limiter = engine.masterLimiter else {
                throw CommandError(message: "master limit: this session has no limiter (start mixfx play with \(SettingFlags.name(SessionOption.limitDBTP.spec.setting())); it adds \(PlayCommand.limiterLatencyText) of latency, so it is chosen at the start)")
            }
            limiter.ceilingDBTP = v
        case .seek(let v, let relative):
            do { try player.seek(toSeconds: relative ? player.status.positionSeconds + v : v) } catch {
                throw CommandError(message: "seek: \(error)")
            }
        case .pause: player.pause(true)
        case .resume: player.pause(false)
        case .save(let path, let force):
            do throws(OutputFileError) { try save(to: path, overwrite: force) } catch {
                throw CommandError(message: "save: \(SettingFlags.text(error))")
            }
        case .status:
            let s = player.status
            let m = player.kernel.masterLevels
            let lufs = m.shortTermLUFS
            let tp = m.takeTruePeak()
            // (on the mix's timeline the position moves at 1: the tracks' own tempos are named)
            let tempo = player.kernel.playsOnTimeline
                ? "on the timeline, tempos " + s.trackTempos.map { String(format: "%.3f", $0) }.joined(separator: " ")
                : String(format: "at tempo %.3f", s.tempo)
            return .ok(String(format: "position %.3f s of %.3f s, played %.3f s %@, dsp %.1f%%, underruns %d%@; master short-term %@ LUFS, true peak %@ dBTP%@",
                              s.positionSeconds, s.durationSeconds, s.playedSeconds, tempo, s.dspLoad * 100, s.underruns, s.isPaused ? ", paused" : "",
                              lufs.isFinite ? String(format: "%.1f", lufs) : "-inf",
                              tp > 0 ? String(format: "%.1f", 20 * log10(Double(tp))) : "-inf",
                              engine.masterLimiter.map { String(format: ", limiter %.1f dBTP (gain %.1f dB)", $0.ceilingDBTP, m.limiterGainDB) } ?? ""))
        case .quit: return .quit
        case .debugStall(let ms): player.stall(milliseconds: ms)
        }
        return .ok(line)
    }

    /// The current settings of every track as a preset that loads back to the same mix, with
    /// the session's lanes and the touches written into them (thinned: `TouchTake`).
    func currentPreset() -> Preset {
        var p = Preset(name: "saved", description: "Settings saved from mixfx play (\(inputs.count) track(s)).")
        p.tracks = tracks.map { t in
            var v: [ParameterID: Double] = [:]
            for (_, id) in Preset.trackKeys { v[id] = t.parameter(id)?.value }
            return v
        }
        p.masterVolume = engine.mainMixer.outputVolume
        p.automation = currentLanes()
        p.limitDBTP = engine.masterLimiter?.ceilingDBTP
        p.sampleFormat = sampleFormat
        p.sampleRateHz = sampleRate
        return p
    }

    /// The session's lanes, each on its track or the master, the touches of the gains written
    /// into them (a gain without a lane that was touched gets one), in track order then the
    /// registry's.
    func currentLanes() -> [PresetLane] {
        var merged: [ObjectIdentifier: AutomationLane] = [:]
        for t in touches { if let lane = t.mergedLane() { merged[ObjectIdentifier(t.parameter)] = lane } }
        func lane(_ p: AudioParameter) -> AutomationLane? { merged[ObjectIdentifier(p)] ?? p.automation }
        var lanes: [PresetLane] = []
        for (i, t) in tracks.enumerated() {
            for id in ParameterID.automatable where id.spec.node != nil {
                if let p = t.parameter(id), let l = lane(p) { lanes.append(PresetLane(target: .track(i), id: id, lane: l)) }
            }
        }
        if let l = lane(engine.mainMixer.outputVolumeParameter) { lanes.append(PresetLane(target: .master, id: .masterVolume, lane: l)) }
        if let l = engine.masterLimiter?.ceilingParameter.automation { lanes.append(PresetLane(target: .master, id: .limiterCeilingDBTP, lane: l)) }
        return lanes
    }

    /// Writes the current settings as a preset, by the rules every output follows (never an
    /// input, never an existing file unless `overwrite`, temporary file and rename).
    func save(to path: String, overwrite: Bool = false) throws(OutputFileError) {
        // (the device's file is refused as an input is, below; named here as what it is)
        let target = FileIdentity(path: path)
        if deviceFiles.contains(where: { FileIdentity(path: $0) == target }) {
            throw .badPath(path: path, reason: "the playback device (--device) writes to it; save the preset under another name")
        }
        try OutputFile.write(currentPreset().jsonData(), to: path, inputs: inputs + presetFiles + deviceFiles, overwrite: overwrite)
    }
}
