import MixFXDSP

/// A node of the graph. Nodes hold parameters only; the render side owns all signal state.
/// Parameter properties may be set from any thread (they are atomics).
/// `@unchecked Sendable` (and the subclasses'): every parameter is an `AudioParameter` (an
/// atomic); the rest is set in `init` and never changes.
public class AudioNode: @unchecked Sendable {
    /// A name for messages ("track 2 EQ").
    public let name: String
    init(nodeName: String) { name = nodeName }

    /// The node's parameters, for validation and listing.
    public var parameters: [AudioParameter] { [] }
}

/// Plays one source (a file). Its `volume` and `pan` are applied where its chain enters the
/// mixer, whatever effect nodes lie between (unlike AVAudioEngine, where they are lost behind
/// effect nodes).
public final class PlayerNode: AudioNode, @unchecked Sendable {
    /// Where the player reads from (its file).
    public let source: any AudioSource
    /// Track volume (linear) at the mixer input.
    public let volumeParameter = AudioParameter(.volume)
    /// Track pan, −1…+1.
    public let panParameter = AudioParameter(.pan)
    /// Mute (0 or 1).
    public let muteParameter = AudioParameter(.mute)
    /// Solo (0 or 1).
    public let soloParameter = AudioParameter(.solo)
    /// Tape-style speed (`Varispeed`), 0.25…4; read when the engine is prepared.
    public let speedParameter = AudioParameter(.speed)
    /// The placement's parameters (`placement`), seconds; read when the engine is prepared.
    public let startParameter = AudioParameter(.startSeconds)
    public let trimInParameter = AudioParameter(.trimInSeconds)
    public let trimOutParameter = AudioParameter(.trimOutSeconds)
    public let fadeInParameter = AudioParameter(.fadeInSeconds)
    public let fadeOutParameter = AudioParameter(.fadeOutSeconds)

    /// A player for `source`, named after it unless `name` is given. Control side.
    public init(source: any AudioSource, name: String? = nil) {
        self.source = source
        super.init(nodeName: name ?? source.name)
    }

    /// Linear gain at the mixer input, 0…16 (1 = unity). Any thread.
    public var volume: Double {
        get { volumeParameter.value }
        set { volumeParameter.value = newValue }
    }
    /// −1 (left) … +1 (right); see `PanLaw`. Any thread.
    public var pan: Double {
        get { panParameter.value }
        set { panParameter.value = newValue }
    }

    /// Silences the track (click-free when live). Any thread.
    public var isMuted: Bool {
        get { muteParameter.value != 0 }
        set { muteParameter.value = newValue ? 1 : 0 }
    }
    /// When any track is soloed, only soloed tracks play. Any thread.
    public var isSoloed: Bool {
        get { soloParameter.value != 0 }
        set { soloParameter.value = newValue ? 1 : 0 }
    }

    /// Where the source sits in the mix: start, trim, fades (see `Placement`). Control side;
    /// takes effect when the engine is next prepared (`makeKernel`, a renderer, a live player).
    public var placement: Placement {
        get {
            Placement(startSeconds: startParameter.value, trimInSeconds: trimInParameter.value,
                      trimOutSeconds: trimOutParameter.value, fadeInSeconds: fadeInParameter.value,
                      fadeOutSeconds: fadeOutParameter.value)
        }
        set {
            startParameter.value = newValue.startSeconds
            trimInParameter.value = newValue.trimInSeconds
            trimOutParameter.value = newValue.trimOutSeconds
            fadeInParameter.value = newValue.fadeInSeconds
            fadeOutParameter.value = newValue.fadeOutSeconds
        }
    }

    /// Plays the whole source from `startSeconds` into the mix (AVAudioPlayerNode's
    /// `scheduleFile(_:at:)`). Control side.
    public func schedule(at startSeconds: Double) {
        placement.startSeconds = startSeconds
    }

    /// Plays the source's seconds `from..<to` (`to` nil: to its end) from `startSeconds` into the
    /// mix (AVAudioPlayerNode's `scheduleSegment`), with equal-power fades at its ends. Control side.
    public func scheduleSegment(from: Double, to: Double? = nil, at startSeconds: Double = 0,
                                fadeIn: Double = 0, fadeOut: Double = 0) {
        placement = Placement(startSeconds: startSeconds, trimInSeconds: from, trimOutSeconds: to ?? 0,
                              fadeInSeconds: fadeIn, fadeOutSeconds: fadeOut)
    }

    /// Tape-style speed: the source played `speed` times faster, pitch and tempo together
    /// (AVAudioUnitVarispeed's `rate`; see `Varispeed`). Control side; takes effect when the
    /// engine is next prepared.
    public var speed: Double {
        get { speedParameter.value }
        set { speedParameter.value = newValue }
    }

    /// This node's parameters (for validation and listing).
    public override var parameters: [AudioParameter] {
        [volumeParameter, panParameter, muteParameter, soloParameter, speedParameter,
         startParameter, trimInParameter, trimOutParameter, fadeInParameter, fadeOutParameter]
    }
}

/// Two-band shelf EQ (RBJ low shelf + high shelf) with a global gain; see `ShelfEQ`.
public final class ShelfEQNode: AudioNode, @unchecked Sendable {
    /// Low-shelf gain, dB. Any thread.
    public let bassGain = AudioParameter(.bassGainDB)
    /// Low-shelf corner, Hz. Any thread.
    public let bassFrequency = AudioParameter(.bassFrequencyHz)
    /// Low-shelf slope S (`ShelfBandSettings.slopeRange`). Any thread.
    public let bassSlopeParameter = AudioParameter(.bassSlope)
    /// Low-shelf bypass (0 or 1). Any thread.
    public let bassBypassParameter = AudioParameter(.bassBypass)
    /// High-shelf gain, dB. Any thread.
    public let trebleGain = AudioParameter(.trebleGainDB)
    /// High-shelf corner, Hz. Any thread.
    public let trebleFrequency = AudioParameter(.trebleFrequencyHz)
    /// High-shelf slope S (`ShelfBandSettings.slopeRange`). Any thread.
    public let trebleSlopeParameter = AudioParameter(.trebleSlope)
    /// High-shelf bypass (0 or 1). Any thread.
    public let trebleBypassParameter = AudioParameter(.trebleBypass)
    /// Gain after both shelves, dB. Any thread.
    public let globalGain = AudioParameter(.eqGlobalGainDB)

    /// A flat EQ (bass at 55 Hz, treble at 5800 Hz, 0 dB). Control side.
    public init(name: String = "EQ") { super.init(nodeName: name) }

    /// All settings at once. Any thread (each field is its own atomic).
    public var settings: ShelfEQSettings {
        get {
            ShelfEQSettings(
                bass: .init(frequencyHz: bassFrequency.clampedValue, gainDB: bassGain.clampedValue,
                            slope: bassSlopeParameter.clampedValue, bypass: bassBypassParameter.value != 0),
                treble: .init(frequencyHz: trebleFrequency.clampedValue, gainDB: trebleGain.clampedValue,
                              slope: trebleSlopeParameter.clampedValue, bypass: trebleBypassParameter.value != 0),
                globalGainDB: globalGain.clampedValue)
        }
        set {
            bassFrequency.value = newValue.bass.frequencyHz
            bassGain.value = newValue.bass.gainDB
            bassSlopeParameter.value = newValue.bass.slope
            bassBypassParameter.value = newValue.bass.bypass ? 1 : 0
            trebleFrequency.value = newValue.treble.frequencyHz
            trebleGain.value = newValue.treble.gainDB
            trebleSlopeParameter.value = newValue.treble.slope
            trebleBypassParameter.value = newValue.treble.bypass ? 1 : 0
            globalGain.value = newValue.globalGainDB
        }
    }

    /// This node's parameters (for validation and listing).
    public override var parameters: [AudioParameter] {
        [bassGain, bassFrequency, bassSlopeParameter, bassBypassParameter,
         trebleGain, trebleFrequency, trebleSlopeParameter, trebleBypassParameter, globalGain]
    }
}

/// Pitch shift in cents with the duration kept (AVAudioUnitTimePitch's `pitch` and `overlap`).
public final class TimePitchNode: AudioNode, @unchecked Sendable {
    /// Pitch, cents. Any thread.
    public let pitchParameter = AudioParameter(.pitchCents)
    /// Overlap 3…32. Any thread; used when the engine is prepared.
    public let overlapParameter = AudioParameter(.pitchOverlap)
    /// Formant preservation (0 or 1). Any thread.
    public let formantParameter = AudioParameter(.preserveFormants)
    /// Tempo (AVAudioUnitTimePitch's `rate`), 1/32…32; live, 0.25…4 and any thread.
    public let rateParameter = AudioParameter(.tempo)
    /// The tonality limit, Hz (0: off; `PitchShifterSettings.tonalityLimitHz`). Used when the
    /// engine is prepared; offline, at a fixed pitch and tempo 1.
    public let tonalityParameter = AudioParameter(.tonalityLimitHz)
    /// The level match on (1) or off (0) (`PitchShifterSettings.levelMatch`). Used when the
    /// engine is prepared; offline.
    public let levelMatchParameter = AudioParameter(.levelMatch)

    /// A shifter at 0 cents, overlap 8. Control side.
    public init(name: String = "TimePitch") { super.init(nodeName: name) }

    /// −2400…+2400 cents. Any thread.
    public var pitchCents: Double {
        get { pitchParameter.value }
        set { pitchParameter.value = newValue }
    }
    /// 3…32, default 8. Any thread; takes effect when the engine is next prepared.
    public var overlap: Int {
        get { Int(overlapParameter.value) }
        set { overlapParameter.value = Double(newValue) }
    }

    /// Tempo, 1/32…32 (AVAudioUnitTimePitch's `rate`): the track lasts 1/rate as long, its pitch
    /// kept (or moved by `pitchCents`). Any thread: live kernels glide to it (0.25…4, within
    /// the latency; see `PitchShifter.setTempo`); offline it is read when the engine is prepared.
    public var rate: Double {
        get { rateParameter.value }
        set { rateParameter.value = newValue }
    }

    /// The current settings, clamped into range. Any thread.
    public var settings: PitchShifterSettings {
        PitchShifterSettings(pitchCents: pitchParameter.clampedValue, overlap: Int(overlapParameter.clampedValue),
                             preserveFormants: formantParameter.value != 0, tempo: rateParameter.clampedValue,
                             tonalityLimitHz: tonalityParameter.clampedValue, levelMatch: levelMatchParameter.value != 0)
    }

    /// This node's parameters (for validation and listing).
    public override var parameters: [AudioParameter] {
        [pitchParameter, overlapParameter, formantParameter, rateParameter, tonalityParameter, levelMatchParameter]
    }
}

/// Sums its inputs: out = outputVolume · Σ gains(volume, pan) · input. A plain sum: no hidden 1/N,
/// no normalisation. Mono inputs are panned with constant power, stereo inputs with balance
/// (`PanLaw`).
/// The master bus's look-ahead true-peak limiter (`AudioEngine.masterLimiter`), after the main
/// mixer's output volume: the mix's true peak stays at or below `ceilingDBTP`, and where it never
/// reaches it the samples pass untouched (see `MixFXDSP.Limiter`). Live, the ceiling may change
/// at any time (the gain follows with the limiter's own attack and release). It runs in the
/// output stage (`OutputStage`), which removes its delay live and offline alike.
public final class LimiterNode: AudioNode, @unchecked Sendable {
    /// The ceiling, dBTP. Any thread.
    public let ceilingParameter: AudioParameter

    /// A limiter with its ceiling (default the registry's, −1 dBTP). Control side.
    public init(ceilingDBTP: Double = ParameterID.limiterCeilingDBTP.spec.defaultValue, name: String = "limiter") {
        ceilingParameter = AudioParameter(.limiterCeilingDBTP, value: ceilingDBTP)
        super.init(nodeName: name)
    }

    /// The ceiling, dBTP (−30…0). Any thread.
    public var ceilingDBTP: Double {
        get { ceilingParameter.value }
        set { ceilingParameter.value = newValue }
    }

    /// The limiter's settings now.
    /// (With a lane: its value at the start; a constant lane is that ceiling.)
    public var settings: LimiterSettings {
        LimiterSettings(ceilingDBTP: ceilingParameter.automation.map { $0.value(at: 0, scale: .decibels) } ?? ceilingParameter.clampedValue)
    }

    public override var parameters: [AudioParameter] { [ceilingParameter] }
}

public final class MixerNode: AudioNode, @unchecked Sendable {
    /// Mixer output volume (linear). Any thread.
    public let outputVolumeParameter = AudioParameter(.masterVolume)

    /// A mixer at unity output volume. Control side.
    public init(name: String = "mixer") { super.init(nodeName: name) }

    /// Linear gain after the sum, 0…16. Any thread.
    public var outputVolume: Double {
        get { outputVolumeParameter.value }
        set { outputVolumeParameter.value = newValue }
    }

    /// This node's parameters (for validation and listing).
    public override var parameters: [AudioParameter] { [outputVolumeParameter] }
}
