import MixFXDSP
import MixFXEngine

/// The plugin's ports, by index, as `bundle/mixfx.ttl` declares them (the mono plugin's audio
/// ports are `input`/`output` at 9 and 10; the stereo plugin's `input_l`/`output_l` there and
/// `input_r`/`output_r` at 11 and 12). The control inputs' ranges and defaults are the
/// parameter registry's (`ParameterID`), so the plugin clamps as `mixfx` does, and a test checks
/// that the TTL says the same.
enum LV2Port: UInt32, CaseIterable {
    /// Control output: the latency, frames (`lv2:reportsLatency`).
    case latency = 0
    /// Pitch, cents; `semitones` adds to it (as Rubber Band's plugin adds its ports).
    case cents, semitones
    /// Keep the formants, 0 or 1.
    case formant
    /// The bass (low) shelf's gain, dB, and corner, Hz.
    case bass, bassFreq
    /// The treble (high) shelf's gain, dB, and corner, Hz.
    case treble, trebleFreq
    /// The processed signal's share, 0 (the latency-aligned input) … 1.
    case wet
    /// Audio: input and output (the left channel's in the stereo plugin), then the right's.
    case inputLeft, outputLeft, inputRight, outputRight

    /// The ports of a plugin with `channelCount` channels.
    static func count(channels channelCount: Int) -> Int { channelCount == 1 ? 11 : 13 }

    /// The control inputs, in order.
    static let controls: [LV2Port] = [.cents, .semitones, .formant, .bass, .bassFreq, .treble, .trebleFreq, .wet]

    /// The registry's parameter a control input sets (nil: `semitones`, `wet`, not in it).
    var parameter: ParameterID? {
        switch self {
        case .cents: .pitchCents
        case .formant: .preserveFormants
        case .bass: .bassGainDB
        case .bassFreq: .bassFrequencyHz
        case .treble: .trebleGainDB
        case .trebleFreq: .trebleFrequencyHz
        default: nil
        }
    }

    /// A control input's range and default: the registry's; `semitones` is the pitch's range in
    /// whole semitones (its value × 100 adds to `cents`), `wet` 0 … 1 from 1.
    var bounds: (minimum: Double, maximum: Double, defaultValue: Double) {
        if let spec = parameter?.spec { return (spec.minimum, spec.maximum, spec.defaultValue) }
        switch self {
        case .semitones:
            let cents = ParameterID.pitchCents.spec
            return ((cents.minimum / 100).rounded(.up), (cents.maximum / 100).rounded(.down), 0)
        case .wet: return (0, 1, 1)
        default: return (0, 0, 0)
        }
    }
}
