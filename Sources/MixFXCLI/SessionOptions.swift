import Foundation
import MixFX

/// Flags that set a track parameter: `--bass 4` for every track, `--track 2:bass=4` for one.
/// Keys, ranges and help come from the registry (`ParameterID.spec`).

/// Everything that describes a session on the command line (shared by `render` and future
/// commands that play a session): inputs, preset, flags, output format.
struct SessionOptions {
    var inputs: [String] = []
    var presetName: String?
    /// A preset given as an object (a `mixfx batch` manifest line); it wins over `presetName`.
    var inlinePreset: Preset?
    var globalValues: [ParameterID: Double] = [:]
    var trackValues: [(track: Int, values: [ParameterID: Double], text: String)] = []
    var masterVolume: Double?
    var sampleFormat: SampleFormat?
    var sampleRate: Int?
    /// `--dither`, `--clip`/`--strict` (render only; nil: the preset's, else the default).
    var dither: DitherMode?
    var clipPolicy: ClipPolicy?
    /// `--limit [CEILING]`: the master limiter's ceiling, dBTP.
    var limitDBTP: Double?
    /// `--normalize LUFS` (render only).
    var normalizeLUFS: Double?
    /// `--channels 1|2`: the mix's channels (nil: stereo when any track has two or more).
    var channels: Int?
    /// `--lfe-gain DB`: keep the LFE of downmixed tracks at this gain (nil: dropped).
    var lfeGainDB: Double?
    /// `--automate`: lanes, in the order given (`AutomationFlags`).
    var lanes: [PresetLane] = []
    /// `--pitchmap`: Rubber Band pitch maps (`PitchMapFile`).
    var pitchMaps: [PitchMapFile] = []
    /// `--timemap`: Rubber Band time maps (`TimeMapFile`).
    var timeMaps: [TimeMapFile] = []

    /// Tries to consume one session flag; false when `name` is not one. The session options only
    /// a render takes (`SessionOptionSpec.isRenderOnly`) are flags only with `renderOptions`.
    /// The flags taken are those `SessionOptions.flagSyntaxes` lists for a synopsis.
    mutating func parse(_ name: String, inline: String?, _ args: inout Arguments, renderOptions: Bool = false) throws(CLIError) -> Bool {
        if let flag = Flag.named(name) {
            let text = try args.value(for: name, inline: inline)
            switch flag {
            case .bpm: globalValues[.tempo] = try SessionOptions.parseBPM(text, flag: name)
            case .trim: for (id, v) in try SessionOptions.parseTrim(text, flag: name) { globalValues[id] = v }
            case .preset: presetName = text
            case .track: trackValues.append(try SessionOptions.parseTrack(text))
            case .automate:
                let lane = try AutomationFlags.parseLane(text, flag: name)
                if lanes.contains(where: { $0.target == lane.target && $0.id == lane.id }) {
                    throw .usage("\(name) \(text): a second lane for \(lane.name) (one --automate per parameter and track)")
                }
                lanes.append(lane)
            case .pitchmap:
                let map = try PitchMapFile.parse(text, flag: name)
                if pitchMaps.contains(where: { $0.track == map.track }) {
                    throw .usage("\(name) \(text): a second pitch map for \(map.track.map { "track \($0 + 1)" } ?? "every track")")
                }
                pitchMaps.append(map)
            case .timemap:
                let map = try TimeMapFile.parse(text, flag: name)
                if timeMaps.contains(where: { $0.track == map.track }) {
                    throw .usage("\(name) \(text): a second time map for \(map.track.map { "track \($0 + 1)" } ?? "every track")")
                }
                timeMaps.append(map)
            }
            return true
        }
        if let id = SessionOptions.parameterFlags.first(where: { "--" + $0.spec.key == name }) {
            // A switch (`--formant`, `--mute`, ...) alone is on; `--formant on|off`,
            // `--formant=off` and `--track N:formant=off` work too.
            if id.spec.isBoolean && inline == nil && !args.nextIsSwitchValue {
                globalValues[id] = 1
                return true
            }
            let text = try args.value(for: name, inline: inline)
            globalValues[id] = try SessionOptions.value(text, id: id, flag: name)
            return true
        }
        if let (option, choice) = SessionOption.forFlag(name), SessionOptions.options(renderOptions: renderOptions).contains(option) {
            try set(option, flag: name, choice: choice, inline: inline, &args)
            return true
        }
        return false
    }

    /// Reads session option `option`'s value from flag `flag` (`choice`: the flag stands for that
    /// choice, `--clip`), checked against the registry (`SessionOption.spec`).
    mutating func set(_ option: SessionOption, flag: String, choice: String?, inline: String?, _ args: inout Arguments) throws(CLIError) {
        let spec = option.spec
        var number = 0.0, text = choice ?? ""
        if let choice {
            if let current = self.choice(option), current != choice {
                throw .usage("\(SettingFlags.name(spec.setting(current))) and \(flag) exclude each other")
            }
        } else if let id = spec.parameter {
            if spec.valueIsOptional {
                if let t = args.optionalNumber(inline: inline) {
                    number = try SessionOptions.value(t, id: id, flag: flag)
                } else {
                    number = spec.defaultValue!
                }
            } else {
                number = try SessionOptions.value(try args.value(for: flag, inline: inline), id: id, flag: flag)
            }
        } else {
            text = try args.value(for: flag, inline: inline)
            switch spec.kind {
            case .choice:
                if let p = spec.problem(withChoice: text) { throw .usage("\(flag): \(p)") }
            case .integer:
                guard let n = Int(text), spec.contains(Double(n)) else {
                    throw .usage("\(flag): '\(text)' is not \(spec.allowedText) (\(spec.summary))")
                }
                number = Double(n)
            case .number:
                number = try parseNumber(text, flag: flag, allowed: spec.allowedText)
                if let p = spec.problem(with: number) { throw .usage("\(flag): \(p)") }
            }
        }
        switch option {
        case .masterVolume: masterVolume = number
        case .limitDBTP: limitDBTP = number
        case .normalizeLUFS: normalizeLUFS = number
        case .lfeGainDB: lfeGainDB = number
        case .sampleRateHz: sampleRate = Int(number)
        case .channels: channels = Int(number)
        case .sampleFormat: sampleFormat = SampleFormat(rawValue: text)
        case .dither: dither = DitherMode(rawValue: text)
        case .clipping: clipPolicy = ClipPolicy(rawValue: text)
        }
    }

    /// The choice given for `option` so far, if it is one.
    func choice(_ option: SessionOption) -> String? {
        switch option {
        case .sampleFormat: sampleFormat?.rawValue
        case .dither: dither?.rawValue
        case .clipping: clipPolicy?.rawValue
        default: nil
        }
    }

    static func value(_ text: String, id: ParameterID, flag: String) throws(CLIError) -> Double {
        let spec = id.spec
        let v: Double
        if spec.isBoolean {
            switch text.lowercased() {
            case "on", "true", "yes", "1": v = 1
            case "off", "false", "no", "0": v = 0
            default: throw .usage("\(flag): '\(text)' is not on or off (allowed: on or off, 1 or 0)")
            }
        } else if spec.isTime {
            v = try parseTime(text, flag: flag, allowed: spec.allowedText)
        } else if spec.unit == "×" && text.hasSuffix("%") {
            // a ratio as a percentage: 90% = 0.9
            v = try parseNumber(String(text.dropLast()), flag: flag, allowed: "\(fmt(spec.minimum * 100))% to \(fmt(spec.maximum * 100))%") / 100
        } else if let unit = Unit.of(text, for: spec) {
            // a value in another unit than the parameter's (`-3dB` for a volume, `2st` for the
            // pitch), or the parameter's own unit written after it (`4dB` for an EQ gain)
            let number = String(text.dropLast(unit.suffixLength))
            guard isDecimal(number), let n = Double(number) else {
                throw .usage("\(flag): '\(text)' is not a number of \(unit.name) (\(Unit.formsText(spec)))")
            }
            v = unit.value(n)
            guard v.isFinite else { throw .usage("\(flag): \(text) is out of range (allowed: \(Unit.allowedText(spec)))") }
            if let p = spec.problem(with: v) {
                let converted = unit.name == spec.unit ? "" : "\(text) is \(fmt(v)) \(spec.unit): "
                throw .usage("\(flag): \(converted)\(p) (allowed: \(Unit.allowedText(spec)))")
            }
            return v
        } else {
            guard isDecimal(text) else {
                if spec.unit == "cents" || spec.unit == "dB" || spec.isLinearGain {
                    throw .usage("\(flag): '\(text)' is not a number (\(Unit.formsText(spec)))")
                }
                v = try parseNumber(text, flag: flag, allowed: spec.allowedText)
                return v
            }
            v = try parseNumber(text, flag: flag, allowed: Unit.allowedText(spec))
        }
        if let p = spec.problem(with: v) { throw .usage("\(flag): \(p) (allowed: \(Unit.allowedText(spec)))") }
        return v
    }

    /// The units a parameter's value may be written in besides its own: semitones for the
    /// pitch (`2st` = 200 cents, as `rubberband -p` takes them), decibels for a linear gain
    /// (`-6dB` = 10^(−6/20)), and its own unit written after the number (`4dB` for an EQ gain,
    /// `200c` or `200cents` for the pitch). Presets stay numeric, in the parameter's own unit.
    struct Unit {
        /// How the unit is written after the number, as matched (case-insensitive for dB).
        var suffixLength: Int
        /// Its name in messages ("semitones", "dB").
        var name: String
        /// The value in the parameter's own unit.
        var value: (Double) -> Double

        /// The unit `text` is written in, if it ends in one `spec` takes.
        static func of(_ text: String, for spec: ParameterSpec) -> Unit? {
            let lower = text.lowercased()
            if spec.unit == "cents" {
                if lower.hasSuffix("st") { return Unit(suffixLength: 2, name: "semitones") { $0 * 100 } }
                if lower.hasSuffix("cents") { return Unit(suffixLength: 5, name: "cents") { $0 } }
                if lower.hasSuffix("c") { return Unit(suffixLength: 1, name: "cents") { $0 } }
            } else if spec.isLinearGain && lower.hasSuffix("db") {
                return Unit(suffixLength: 2, name: "dB") { pow(10, $0 / 20) }
            } else if spec.unit == "dB" && lower.hasSuffix("db") {
                return Unit(suffixLength: 2, name: "dB") { $0 }
            }
            return nil
        }

        /// The forms a value of `spec` may take ("-300 (cents), -3st (semitones) or -300c").
        static func forms(_ spec: ParameterSpec) -> [String] {
            if spec.unit == "cents" { return ["200 (cents)", "2st or -0.5st (semitones)", "200c"] }
            if spec.isLinearGain { return ["0.5 (linear)", "50%", "-6dB"] }
            if spec.unit == "dB" { return ["-3 or -3dB"] }
            return [spec.unit == "×" ? "0.9 or 90%" : "a decimal number"]
        }

        static func formsText(_ spec: ParameterSpec) -> String {
            let f = forms(spec)
            return "write it as " + (f.count == 1 ? f[0] : f.dropLast().joined(separator: ", ") + " or " + f.last!)
                + "; allowed: " + allowedText(spec)
        }

        /// The allowed range in every unit the value may be written in.
        static func allowedText(_ spec: ParameterSpec) -> String {
            if spec.unit == "cents" {
                return "\(spec.allowedText), \(fmt(spec.minimum / 100)) to \(fmt(spec.maximum / 100)) st"
            }
            if spec.isLinearGain && spec.minimum == 0 && !spec.minimumExcluded {
                return "\(spec.allowedText), up to \(String(format: "%.2f", 20 * log10(spec.maximum))) dB"
            }
            return spec.allowedText
        }
    }

    /// `FROM:TO` (beats per minute): the tempo TO/FROM.
    static func parseBPM(_ text: String, flag: String) throws(CLIError) -> Double {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { throw .usage("\(flag): '\(text)' is not FROM:TO in beats per minute (e.g. 120:96)") }
        let from = try parseNumber(parts[0], flag: "\(flag) (from)"), to = try parseNumber(parts[1], flag: "\(flag) (to)")
        guard from > 0 && to > 0 else { throw .usage("\(flag): '\(text)': both tempos must be above 0 BPM") }
        let spec = ParameterID.tempo.spec
        if let p = spec.problem(with: to / from) { throw .usage("\(flag): the tempo \(text) is \(fmt(to / from)): \(p) (allowed: \(spec.allowedText))") }
        return to / from
    }

    /// `IN..OUT`, either side optional (`30..`, `..1:00`): the trim-in and trim-out values given.
    static func parseTrim(_ text: String, flag: String) throws(CLIError) -> [(ParameterID, Double)] {
        guard let dots = text.range(of: "..") else {
            throw .usage("\(flag): '\(text)' is not IN..OUT (seconds or mm:ss.s, either side optional, e.g. 30..1:15 or ..45)")
        }
        let lo = String(text[..<dots.lowerBound]), hi = String(text[dots.upperBound...])
        var out: [(ParameterID, Double)] = []
        if !lo.isEmpty { out.append((.trimInSeconds, try value(lo, id: .trimInSeconds, flag: "\(flag) (in)"))) }
        if !hi.isEmpty { out.append((.trimOutSeconds, try value(hi, id: .trimOutSeconds, flag: "\(flag) (out)"))) }
        guard !out.isEmpty else { throw .usage("\(flag): '\(text)' gives neither IN nor OUT") }
        if out.count == 2 && out[1].1 <= out[0].1 {
            throw .usage("\(flag): '\(text)': the end is not after the start")
        }
        return out
    }

    /// `N:key=value,key=value`
    static func parseTrack(_ text: String) throws(CLIError) -> (Int, [ParameterID: Double], String) {
        let flag = "--track \(text)"
        guard let colon = text.firstIndex(of: ":"), let n = Int(text[..<colon]), n >= 1 else {
            throw .usage("\(flag): expected N:key=value,... with N a track number from 1 (e.g. --track 2:pitch=-300,volume=0.8)")
        }
        var values: [ParameterID: Double] = [:]
        for item in text[text.index(after: colon)...].split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 && parts[0] == "bpm" {
                values[.tempo] = try parseBPM(parts[1], flag: "\(flag): bpm")
                continue
            }
            if parts.count == 2 && parts[0] == "trim" {
                for (id, v) in try parseTrim(parts[1], flag: "\(flag): trim") { values[id] = v }
                continue
            }
            guard parts.count == 2, let id = ParameterID.track(key: parts[0]) else {
                throw .usage("\(flag): '\(item)' is not key=value with a key from \(ParameterID.trackKeysText)")
            }
            values[id] = try value(parts[1], id: id, flag: "\(flag): \(parts[0])")
        }
        guard !values.isEmpty else { throw .usage("\(flag): no settings after the colon") }
        return (n, values, text)
    }

    /// The preset the session starts from (empty when none is named).
    func loadPreset(warnings: inout [String]) throws(CLIError) -> Preset {
        if let inlinePreset { return inlinePreset }
        guard let presetName else { return Preset(name: "none") }
        do {
            return try PresetLibrary().load(presetName, warnings: &warnings).0
        } catch {
            throw .usage(SettingFlags.text(error))
        }
    }

    /// Loads the preset (printing its warnings) and resolves every track's values.
    func resolveAll() throws(CLIError) -> ResolvedSession {
        var warnings: [String] = []
        let preset = try loadPreset(warnings: &warnings)
        let resolved = try resolve(preset: preset)
        for w in warnings + resolved.warnings { Terminal.printError("mixfx: warning: \(w)") }
        return resolved
    }

    /// Per-track values after preset, global flags, then per-track flags.
    func resolve(preset: Preset) throws(CLIError) -> ResolvedSession {
        for t in trackValues where t.track > inputs.count {
            throw .usage("--track \(t.text): there are \(inputs.count) track(s); track numbers go from 1 to \(inputs.count)")
        }
        var tracks: [[ParameterID: Double]] = []
        for i in 0..<inputs.count {
            var v = preset.values(forTrack: i)
            v.merge(globalValues) { $1 }
            for t in trackValues where t.track == i + 1 { v.merge(t.values) { $1 } }
            tracks.append(v)
        }
        var warnings: [String] = []
        let lanes = try resolveLanes(preset: preset, tracks: tracks, warnings: &warnings)
        if preset.tracks.count > inputs.count {
            warnings.append("preset '\(presetName ?? preset.name)' has settings for \(preset.tracks.count) tracks; the session has \(inputs.count), so tracks[\(inputs.count)] and after are ignored")
        }
        return ResolvedSession(inputs: inputs, tracks: tracks,
                               masterVolume: masterVolume ?? preset.masterVolume ?? ParameterID.masterVolume.spec.defaultValue,
                               sampleFormat: sampleFormat ?? preset.sampleFormat, sampleRate: sampleRate ?? preset.sampleRateHz,
                               dither: dither ?? preset.dither ?? .auto,
                               clipPolicy: clipPolicy ?? preset.clipping ?? .avoid,
                               limitDBTP: limitDBTP ?? preset.limitDBTP,
                               normalizeLUFS: normalizeLUFS ?? preset.normalizeLUFS,
                               channels: channels ?? preset.channels, lfeGainDB: lfeGainDB ?? preset.lfeGainDB,
                               lanes: lanes, warnings: warnings)
    }
}

/// A fully resolved session: every parameter of every track.
struct ResolvedSession {
    var inputs: [String]
    var tracks: [[ParameterID: Double]]
    var masterVolume: Double
    var sampleFormat: SampleFormat?
    var sampleRate: Int?
    var dither = DitherMode.auto
    var clipPolicy = ClipPolicy.avoid
    /// The master limiter's ceiling, dBTP (nil: no limiter).
    var limitDBTP: Double?
    /// The loudness a render normalises to, LUFS (nil: none).
    var normalizeLUFS: Double?
    /// The mix's channels (nil: stereo when any track has two or more channels).
    var channels: Int?
    /// The LFE's gain in downmixed tracks, dB (nil: dropped).
    var lfeGainDB: Double?
    /// The automation lanes, each on one track or the master (preset, then `--automate`, then
    /// `--pitchmap`), in track order then the registry's.
    var lanes: [PresetLane] = []
    /// What the user should know about how the session was resolved.
    var warnings: [String] = []

    /// Opens the inputs and builds the engine; `source` turns each file into the track's source
    /// (the file itself offline, a read-ahead `StreamingSource` live).
    func makeEngine(source: (SoundFileReader) -> any AudioSource = { $0 }) throws(CLIError) -> (AudioEngine, [Track]) {
        let engine = AudioEngine()
        var made: [Track] = []
        for (i, path) in inputs.enumerated() {
            let reader: SoundFileReader
            do { reader = try SoundFileReader(path: path) } catch { throw .failure(SettingFlags.text(error)) }
            let layout = reader.format.channelLayout
            if reader.format.channelCount > 2 && !layout.isDeclared && reader.format.channelCount <= SourceFormat.maximumChannelCount {
                Terminal.printError("mixfx: warning: \(path): \(reader.format.channelCount) channels and no declared layout: taken as \(layout.name) (\(layout.speakerList)), the usual order for \(reader.format.channelCount) channels")
            }
            let track = engine.addTrack(source: source(reader), name: "track \(i + 1) (\(path))")
            track.apply(tracks[i])
            let f = reader.format, placement = track.player.placement
            let segment = Double(placement.frames(sampleRate: f.sampleRate, frameCount: f.frameCount).length) / Double(f.sampleRate)
            for (key, fade) in [("fade-in", placement.fadeInSeconds), ("fade-out", placement.fadeOutSeconds)] where fade > segment && segment > 0 {
                Terminal.printError("mixfx: warning: track \(i + 1) (\(path)): \(key) \(fmt(fade)) s is longer than the segment played (\(fmt(segment)) s): it spans the whole segment")
            }
            made.append(track)
        }
        engine.mainMixer.outputVolume = masterVolume
        engine.masterLimiter = limitDBTP.map { LimiterNode(ceilingDBTP: $0) }
        if limitDBTP == nil, let l = lanes.first(where: { $0.id == .limiterCeilingDBTP }) {
            let option = SessionOption.limitDBTP.spec
            throw .usage("\(l.name) lane: the ceiling moves only on a master limiter, and the session has none (allowed: with \(SettingFlags.name(SessionOption.limitDBTP.rawValue)) [\(option.valueName)], or \"\(option.presetPath.joined(separator: "."))\" in a preset)")
        }
        for l in lanes {
            switch l.target {
            case .track(let i): made[i].automation[l.id] = l.lane
            case .master, .everyTrack:
                do { try engine.automate(l.id, l.lane) } catch { throw explain(error) }
            }
        }
        engine.outputSampleRate = sampleRate
        engine.outputChannelCount = channels
        engine.lfeGainDB = lfeGainDB
        return (engine, made)
    }

    /// An engine error in the words of the command line: a parameter is named by its flag, and
    /// a default the user never set is said to be one.
    func explain(_ error: EngineError) -> CLIError {
        switch error {
        case .parameterOutOfRange(let node, let id, let problem, let allowed):
            guard id.spec.node != nil else { return .usage(SettingFlags.text(error)) }
            return ResolvedSession.parameterError(node: node, id: id, problem: problem, allowed: allowed,
                                                  isDefault: tracks.allSatisfy { $0[id] == id.spec.defaultValue })
        case .unsupportedOutputRate(let rate, let fromInputs):
            let rates = AudioEngine.outputSampleRateRange
            let origin = fromInputs ? ", the highest input rate," : ""
            return .usage("output: sample rate \(rate) Hz\(origin) is not one mixfx renders at (allowed: \(rates.lowerBound) to \(rates.upperBound) Hz): give \(SettingFlags.name(SessionOption.sampleRateHz.spec.setting())) HZ, e.g. \(SettingFlags.name(SessionOption.sampleRateHz.spec.setting())) \(min(max(rate, rates.lowerBound), rates.upperBound))")
        case .unsupportedFormat, .sourceFailed:
            return .failure(SettingFlags.text(error))
        default:
            return .usage(SettingFlags.text(error))
        }
    }

    /// A track parameter's problem named by its flag ("track 1 (a.wav) EQ: --bass-freq: ...");
    /// a default the user never set is said to be one.
    static func parameterError(node: String?, id: ParameterID, problem: String, allowed: String, isDefault: Bool,
                               hasTracks: Bool = true) -> CLIError {
        let key = id.spec.key
        let hint = isDefault ? "; that is the default: set --\(key)\(hasTracks ? " (or --track N:\(key)=...)" : "")" : ""
        return .usage("\(node.map { "\($0): " } ?? "")--\(key): \(problem) (allowed: \(allowed))\(hint)")
    }

    /// The effective settings as a preset that loads back to the same render.
    func effectivePreset() -> Preset {
        var p = Preset(name: "effective", description: "Effective settings of a mixfx render of \(inputs.count) track(s).")
        p.tracks = tracks
        p.masterVolume = masterVolume
        p.sampleFormat = sampleFormat
        p.sampleRateHz = sampleRate
        p.dither = dither
        p.clipping = clipPolicy
        p.limitDBTP = limitDBTP
        p.normalizeLUFS = normalizeLUFS
        p.channels = channels
        p.lfeGainDB = lfeGainDB
        p.automation = lanes
        return p
    }
}

extension SessionOptions {
    /// The files the session is read from besides its tracks, which nothing mixfx writes may
    /// replace: the preset, if it is a file (a path, or a name found in the preset search
    /// path), and the pitch and time maps.
    var presetFiles: [String] {
        let maps = pitchMaps.map(\.path) + timeMaps.map(\.path)
        guard inlinePreset == nil, let p = presetName else { return maps }
        if p.contains("/") || p.hasSuffix(".json") { return (RegularFile.exists(p) ? [p] : []) + maps }
        return (PresetLibrary().searchDirectories.map { $0 + "/" + p + ".json" }.first(where: RegularFile.exists).map { [$0] } ?? []) + maps
    }
}

extension SessionOptions {
    /// Every track's and the master's lanes: the preset's, then `--automate`'s (a lane for one
    /// track wins over one for every track, the command line over the preset), then the pitch
    /// and time maps (`PitchMapFile`, `TimeMapFile`: they need the tracks' files' rates and
    /// lengths, read from their headers here). Each on one track or the master.
    func resolveLanes(preset: Preset, tracks: [[ParameterID: Double]], warnings: inout [String]) throws(CLIError) -> [PresetLane] {
        var byPlace: [PlaceKey: PresetLane] = [:]
        func add(_ l: PresetLane, from: String) {
            switch l.target {
            case .master: byPlace[PlaceKey(track: nil, id: l.id)] = l
            case .track(let i):
                if i < inputs.count { byPlace[PlaceKey(track: i, id: l.id)] = l }
                else { warnings.append("\(from): the lane on \(l.name) is ignored: the session has \(inputs.count) track(s)") }
            case .everyTrack:
                for i in inputs.indices { byPlace[PlaceKey(track: i, id: l.id)] = PresetLane(target: .track(i), id: l.id, lane: l.lane) }
            }
        }
        let presetName = "preset '\(self.presetName ?? preset.name)'"
        for l in preset.automation where l.target == .everyTrack || l.target == .master { add(l, from: presetName) }
        for l in preset.automation where l.target != .everyTrack && l.target != .master { add(l, from: presetName) }
        for l in lanes where l.target == .everyTrack || l.target == .master { add(l, from: "--automate") }
        for l in lanes where l.target != .everyTrack && l.target != .master {
            guard case .track(let i) = l.target, i < inputs.count else {
                throw .usage("--automate \(AutomationFlags.flagText(l)): there are \(inputs.count) track(s); track numbers go from 1 to \(inputs.count)")
            }
            add(l, from: "--automate")
        }
        // a map's track: a file whose rate and length can be read, given no lane for the same
        // parameter by --automate
        func mapTarget(_ i: Int, flag: String, path: String, id: ParameterID) throws(CLIError) -> SourceFormat {
            guard i < inputs.count else {
                throw .usage("\(flag) \(i + 1):\(PathBytes.shown(path)): there are \(inputs.count) track(s); track numbers go from 1 to \(inputs.count)")
            }
            if lanes.contains(where: { $0.id == id && ($0.target == .track(i) || $0.target == .everyTrack) }) {
                throw .usage("\(flag) \(PathBytes.shown(path)) and --automate \(id.spec.key) both give track \(i + 1) a \(id.spec.key) lane: give one")
            }
            guard inputs[i] != StandardInput.path else {
                throw .usage("\(flag): track \(i + 1) is standard input, whose sample rate is not known before it is read: give the track as a file")
            }
            do { return try SoundFileReader(path: inputs[i]).format } catch { throw .failure(SettingFlags.text(error)) }
        }
        for map in pitchMaps.sorted(by: { ($0.track ?? -1) < ($1.track ?? -1) }) {
            for i in map.track.map({ [$0] }) ?? Array(inputs.indices) {
                let format = try mapTarget(i, flag: "--pitchmap", path: map.path, id: .pitchCents)
                // (its frames are the source's: placed on the timeline by the track's time map,
                // or its steady tempo; a moving tempo lane of another kind cannot place them here)
                let timeMap = timeMaps.first { $0.track == i } ?? timeMaps.first { $0.track == nil }
                if timeMap == nil, let moving = byPlace[PlaceKey(track: i, id: .tempo)], moving.lane.constantValue == nil {
                    throw .usage("--pitchmap \(PathBytes.shown(map.path)): track \(i + 1) follows a moving tempo lane, which does not place a pitch map's source frames on the timeline (allowed: a pitch map with a steady tempo or a --timemap; or the pitch as an --automate pitch lane, in timeline seconds)")
                }
                let lane = try map.lane(sampleRate: format.sampleRate, frameCount: format.frameCount, values: tracks[i],
                                        timeMap: timeMap?.map, laneName: "track \(i + 1) (\(inputs[i]))")
                byPlace[PlaceKey(track: i, id: .pitchCents)] = PresetLane(target: .track(i), id: .pitchCents, lane: lane)
            }
        }
        for map in timeMaps.sorted(by: { ($0.track ?? -1) < ($1.track ?? -1) }) {
            for i in map.track.map({ [$0] }) ?? Array(inputs.indices) {
                let format = try mapTarget(i, flag: TimeMapFile.flag, path: map.path, id: .tempo)
                let lane = try map.lane(sampleRate: format.sampleRate, frameCount: format.frameCount, values: tracks[i],
                                        trackName: "track \(i + 1) (\(PathBytes.shown(inputs[i])))")
                byPlace[PlaceKey(track: i, id: .tempo)] = PresetLane(target: .track(i), id: .tempo, lane: lane)
            }
        }
        let order = Dictionary(uniqueKeysWithValues: ParameterID.allCases.enumerated().map { ($1, $0) })
        return byPlace.sorted { a, b in
            let ta = a.key.track ?? Int.max, tb = b.key.track ?? Int.max
            return ta != tb ? ta < tb : order[a.key.id]! < order[b.key.id]!
        }.map(\.value)
    }

    /// A lane's place: a track (0-based) or the master (nil), and its parameter.
    struct PlaceKey: Hashable {
        let track: Int?
        let id: ParameterID
    }
}
