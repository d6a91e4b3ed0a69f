import MixFXDSP

/// Every user-visible parameter. Each is declared once, in `spec` below: unit, range, default,
/// its key on the command line and in the control protocol, its path in presets, its help text
/// and the node parameter it sets. The CLI's flags and help, preset reading and writing, the
/// control protocol, the terminal mixer and API validation all read that one table. Adding a
/// parameter is one case and one entry there (plus its DSP).
///
/// The order of the cases is the order help texts list them in.
public enum ParameterID: String, CaseIterable, Sendable {
    case bassGainDB, trebleGainDB, pitchCents
    case bassFrequencyHz, trebleFrequencyHz, bassSlope, trebleSlope, bassBypass, trebleBypass
    case eqGlobalGainDB, pitchOverlap, preserveFormants, tonalityLimitHz, levelMatch, tempo, speed
    case volume, pan, mute, solo
    case startSeconds, trimInSeconds, trimOutSeconds, fadeInSeconds, fadeOutSeconds
    case masterVolume, limiterCeilingDBTP

    /// The parameters every track has (all but the mixer's own).
    public static let trackParameters: [ParameterID] = allCases.filter { $0.spec.node != nil }

    /// The track parameter whose key is `key` ("bass", "pitch", ...).
    public static func track(key: String) -> ParameterID? { trackParameters.first { $0.spec.key == key } }

    /// The track parameters' keys, in order ("bass, treble, pitch, ...").
    public static var trackKeysText: String { trackParameters.map(\.spec.key).joined(separator: ", ") }
}

/// Unit, range, default and description of a parameter.
public struct ParameterSpec: Sendable {
    /// The parameter described.
    public let id: ParameterID
    /// Unit shown to users ("dB", "Hz", "cents", "×", ...).
    public let unit: String
    /// Smallest allowed value (excluded when `minimumExcluded`).
    public let minimum: Double
    /// Largest allowed value.
    public let maximum: Double
    /// True when the minimum itself is not allowed.
    public let minimumExcluded: Bool
    /// The value a missing preset key or a new node takes.
    public let defaultValue: Double
    /// Whole numbers only.
    public let isInteger: Bool
    /// Stored as 0 (off) or 1 (on).
    public let isBoolean: Bool
    /// One line for help texts.
    public let summary: String
    /// Its name on the command line (`--KEY`, `--track N:KEY=V`), in `mixfx play`'s control
    /// protocol (`track N KEY V`) and in messages.
    public let key: String
    /// Where a preset keeps it: inside a TRACK object for a track's parameter, from the top for
    /// the mixer's.
    public let presetPath: [String]
    /// The node parameter of a track it sets (nil: the main mixer's).
    public let node: (KeyPath<Track, AudioParameter> & Sendable)?
    /// Whether a change while playing is heard (false: fixed when the engine is prepared, like
    /// the overlap and the placement).
    public let isLive: Bool
    /// Whether a flag for every track (`--KEY`) exists besides `--track N:KEY=` (not for
    /// `start`: placing every track at one time is `mixfx play --start`'s job, a different one).
    public let hasGlobalFlag: Bool
    /// A time in seconds that may also be written `mm:ss.s` or `h:mm:ss`.
    public let isTime: Bool
    /// How an automation lane moves it (nil: it cannot be automated). Every parameter that moves
    /// while playing can be but the bypasses and the formant switch: volume, pan, the EQ's
    /// gains, corners and slopes, pitch, tempo, the master volume, the limiter's ceiling, and
    /// the switches mute and solo (step lanes of 0 and 1, `AutomationScale.onOff`;
    /// `AutomationLane`). A bypass switched at a frame would click (the shelf's output jumps),
    /// and the formant switch changes the vocoder's mode, so they do not move.
    public let automation: AutomationScale?

    /// A gain given as a linear ratio (the volumes), which the command line also takes in dB.
    public var isLinearGain: Bool { unit == "×" && (id == .volume || id == .masterVolume) }

    /// Whether `value` is allowed.
    public func contains(_ value: Double) -> Bool {
        guard value.isFinite else { return false }
        if isInteger && value.rounded() != value { return false }
        return (minimumExcluded ? value > minimum : value >= minimum) && value <= maximum
    }

    /// "between −96 and 24 dB" style text for error messages.
    public var allowedText: String {
        if isBoolean { return "true or false" }
        let lo = minimumExcluded ? "above \(format(minimum))" : "from \(format(minimum))"
        return "\(lo) to \(format(maximum))\(unit.isEmpty ? "" : " " + unit)\(isInteger ? " (whole numbers)" : "")"
    }

    /// Why `value` is not allowed ("40 is above 24"), or nil when it is.
    public func problem(with value: Double) -> String? {
        if value.isNaN { return "nan is not a number" }
        if value.isInfinite { return value > 0 ? "infinity is above \(format(maximum))" : "-infinity is below \(format(minimum))" }
        if isInteger && value.rounded() != value { return "\(format(value)) is not a whole number" }
        if value > maximum { return "\(format(value)) is above \(format(maximum))" }
        if value < minimum || (minimumExcluded && value == minimum) {
            return minimumExcluded ? "\(format(value)) must be above \(format(minimum))"
                                   : "\(format(value)) is below \(format(minimum))"
        }
        return nil
    }
}

func format(_ v: Double) -> String {
    v.rounded() == v && abs(v) < 1e15 ? String(Int(v)) : String(v)
}

extension ParameterID {
    /// Everything about the parameter (the registry: see the type's notes). DSP limits are the
    /// DSP's own (`PitchShifterSettings`).
    public var spec: ParameterSpec {
        let pitch = PitchShifterSettings.centsRange, overlap = PitchShifterSettings.overlapRange
        let slope = ShelfBandSettings.slopeRange
        return switch self {
        case .bassGainDB: s("bass", ["eq", "bass", "gainDB"], \Track.eq.bassGain, -96, 24, 0, "dB", "bass (low shelf) gain", auto: .decibels)
        case .trebleGainDB: s("treble", ["eq", "treble", "gainDB"], \Track.eq.trebleGain, -96, 24, 0, "dB", "treble (high shelf) gain", auto: .decibels)
        case .pitchCents: s("pitch", ["pitch", "cents"], \Track.timePitch.pitchParameter, pitch.lowerBound, pitch.upperBound, 0, "cents",
                            "pitch shift, duration kept (ratio 2^(cents/1200))", auto: .linear)
        case .bassFrequencyHz: s("bass-freq", ["eq", "bass", "frequencyHz"], \Track.eq.bassFrequency, 20, 24_000, 55, "Hz",
                                 "bass shelf corner frequency (below Nyquist)", auto: .positive)
        case .trebleFrequencyHz: s("treble-freq", ["eq", "treble", "frequencyHz"], \Track.eq.trebleFrequency, 20, 24_000, 5800, "Hz",
                                   "treble shelf corner frequency (below Nyquist)", auto: .positive)
        case .bassSlope: s("bass-slope", ["eq", "bass", "slope"], \Track.eq.bassSlopeParameter, slope.lowerBound, slope.upperBound, 1, "",
                           "bass shelf slope S (RBJ; 1: steepest without overshoot)", auto: .positive)
        case .trebleSlope: s("treble-slope", ["eq", "treble", "slope"], \Track.eq.trebleSlopeParameter, slope.lowerBound, slope.upperBound, 1, "",
                             "treble shelf slope S (RBJ; 1: steepest without overshoot)", auto: .positive)
        case .bassBypass: s("bass-bypass", ["eq", "bass", "bypass"], \Track.eq.bassBypassParameter, 0, 1, 0, "",
                            "bypass the bass shelf", bool: true)
        case .trebleBypass: s("treble-bypass", ["eq", "treble", "bypass"], \Track.eq.trebleBypassParameter, 0, 1, 0, "",
                              "bypass the treble shelf", bool: true)
        case .eqGlobalGainDB: s("eq-gain", ["eq", "globalGainDB"], \Track.eq.globalGain, -96, 24, 0, "dB", "EQ global gain", auto: .decibels)
        case .pitchOverlap: s("overlap", ["pitch", "overlap"], \Track.timePitch.overlapParameter,
                              Double(overlap.lowerBound), Double(overlap.upperBound), 8, "",
                              "time-pitch overlap (more: smoother, more CPU)", int: true, live: false)
        case .preserveFormants: s("formant", ["pitch", "preserveFormants"], \Track.timePitch.formantParameter, 0, 1, 0, "",
                                  "keep the formants (spectral envelope) of voices when shifting", bool: true)
        case .tonalityLimitHz: s("tonality-limit", ["pitch", "tonalityLimitHz"], \Track.timePitch.tonalityParameter,
                                 PitchShifterSettings.tonalityLimitRange.lowerBound, PitchShifterSettings.tonalityLimitRange.upperBound, 0, "Hz",
                                 "above this (over √ratio) move the highs by a constant frequency, not the ratio: no smear, partials inharmonic (0: off; offline, fixed pitch, tempo 1; at least 1000·max(√ratio, 1/√ratio))",
                                 live: false)
        case .levelMatch: s("level-match", ["pitch", "levelMatch"], \Track.timePitch.levelMatchParameter, 0, 1, 1, "",
                            "keep the input's level through a fixed pitch or a faster tempo, its highs' at a slower tempo (render only; off: as mixfx play sounds)",
                            bool: true, live: false)
        case .tempo: s("tempo", ["pitch", "rate"], \Track.timePitch.rateParameter, PitchShifterSettings.tempoRange.lowerBound,
                       PitchShifterSettings.tempoRange.upperBound, 1, "×",
                       "tempo, pitch kept (0.8 or 80%: 25 % longer; with pitch: both; live 0.25…4)", auto: .positive)
        case .speed: s("speed", ["varispeed", "rate"], \Track.player.speedParameter, Varispeed.range.lowerBound, Varispeed.range.upperBound, 1, "×",
                       "tape-style speed: pitch and tempo together (0.5: an octave down, twice as long)", live: false)
        case .volume: s("volume", ["mixer", "volume"], \Track.player.volumeParameter, 0, 16, 1, "×", "track volume at the mixer input (linear)", auto: .linearGain)
        case .pan: s("pan", ["mixer", "pan"], \Track.player.panParameter, -1, 1, 0, "", "track pan, −1 left … +1 right", auto: .linear)
        case .mute: s("mute", ["mixer", "mute"], \Track.player.muteParameter, 0, 1, 0, "", "silence the track", bool: true, auto: .onOff)
        case .solo: s("solo", ["mixer", "solo"], \Track.player.soloParameter, 0, 1, 0, "", "play only the soloed tracks", bool: true, auto: .onOff)
        case .startSeconds: s("start", ["placement", "startSeconds"], \Track.player.startParameter, 0, 1_000_000, 0, "s",
                              "silence before the track in the mix (per track only: --track N:start=S)", live: false, time: true, global: false)
        case .trimInSeconds: s("trim-in", ["placement", "trimInSeconds"], \Track.player.trimInParameter, 0, 10_000_000, 0, "s",
                               "where the track's segment starts in its file (trim=IN..OUT sets both)", live: false, time: true)
        case .trimOutSeconds: s("trim-out", ["placement", "trimOutSeconds"], \Track.player.trimOutParameter, 0, 10_000_000, 0, "s",
                                "where the segment ends in the file (0: at its end)", live: false, time: true)
        case .fadeInSeconds: s("fade-in", ["placement", "fadeInSeconds"], \Track.player.fadeInParameter, 0, 3600, 0, "s",
                               "equal-power fade at the segment's start", live: false, time: true)
        case .fadeOutSeconds: s("fade-out", ["placement", "fadeOutSeconds"], \Track.player.fadeOutParameter, 0, 3600, 0, "s",
                                "equal-power fade at the segment's end", live: false, time: true)
        case .masterVolume: s("master-volume", ["master", "volume"], nil, 0, 16, 1, "×", "mixer output volume (linear)", auto: .linearGain)
        case .limiterCeilingDBTP: s("limit", ["master", "limitDBTP"], nil, LimiterSettings.ceilingRange.lowerBound,
                                    LimiterSettings.ceilingRange.upperBound, LimiterSettings().ceilingDBTP, "dBTP",
                                    "master limiter ceiling (true peak; present only when the limiter is on)", auto: .decibels)
        }
    }

    private func s(_ key: String, _ path: [String], _ node: (KeyPath<Track, AudioParameter> & Sendable)?,
                   _ lo: Double, _ hi: Double, _ def: Double, _ unit: String, _ summary: String,
                   minEx: Bool = false, int: Bool = false, bool: Bool = false, live: Bool = true, time: Bool = false,
                   global: Bool = true, auto: AutomationScale? = nil) -> ParameterSpec {
        ParameterSpec(id: self, unit: unit, minimum: lo, maximum: hi, minimumExcluded: minEx,
                      defaultValue: def, isInteger: int || bool, isBoolean: bool, summary: summary,
                      key: key, presetPath: path, node: node, isLive: live, hasGlobalFlag: global, isTime: time,
                      automation: auto)
    }
}
