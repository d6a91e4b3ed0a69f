/// Every user-visible parameter, with its unit, range and default: the one table that the CLI
/// help, preset validation and API validation all read.
public enum ParameterID: String, CaseIterable, Sendable {
    case bassGainDB, bassFrequencyHz, bassSlope, bassBypass
    case trebleGainDB, trebleFrequencyHz, trebleSlope, trebleBypass
    case eqGlobalGainDB
    case pitchCents, pitchOverlap, preserveFormants
    case volume, pan, mute, solo
    case masterVolume
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
    /// True when the minimum itself is not allowed (slope: 0 < S ≤ 1).
    public let minimumExcluded: Bool
    /// The value a missing preset key or a new node takes.
    public let defaultValue: Double
    /// Whole numbers only.
    public let isInteger: Bool
    /// Stored as 0 (off) or 1 (on).
    public let isBoolean: Bool
    /// One line for help texts.
    public let summary: String

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
        if !value.isFinite { return "\(value) is not a finite number" }
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
    /// The parameter's unit, range and default.
    public var spec: ParameterSpec {
        switch self {
        case .bassGainDB: s(-96, 24, 0, "dB", "bass (low shelf) gain")
        case .bassFrequencyHz: s(20, 24_000, 55, "Hz", "bass shelf corner frequency (below Nyquist)")
        case .bassSlope: s(0, 1, 1, "", "bass shelf slope S (RBJ), 0 < S ≤ 1", minEx: true)
        case .bassBypass: s(0, 1, 0, "", "bypass the bass shelf", bool: true)
        case .trebleGainDB: s(-96, 24, 0, "dB", "treble (high shelf) gain")
        case .trebleFrequencyHz: s(20, 24_000, 5800, "Hz", "treble shelf corner frequency (below Nyquist)")
        case .trebleSlope: s(0, 1, 1, "", "treble shelf slope S (RBJ), 0 < S ≤ 1", minEx: true)
        case .trebleBypass: s(0, 1, 0, "", "bypass the treble shelf", bool: true)
        case .eqGlobalGainDB: s(-96, 24, 0, "dB", "EQ global gain")
        case .pitchCents: s(-2400, 2400, 0, "cents", "pitch shift, duration kept (ratio 2^(cents/1200))")
        case .pitchOverlap: s(3, 32, 8, "", "time-pitch overlap (more: smoother, more CPU)", int: true)
        case .preserveFormants: s(0, 1, 0, "", "keep the formants (spectral envelope) of voices when shifting", bool: true)
        case .volume: s(0, 16, 1, "×", "track volume at the mixer input (linear)")
        case .pan: s(-1, 1, 0, "", "track pan, −1 left … +1 right")
        case .mute: s(0, 1, 0, "", "silence the track", bool: true)
        case .solo: s(0, 1, 0, "", "play only the soloed tracks", bool: true)
        case .masterVolume: s(0, 16, 1, "×", "mixer output volume (linear)")
        }
    }

    private func s(_ lo: Double, _ hi: Double, _ def: Double, _ unit: String, _ summary: String,
                   minEx: Bool = false, int: Bool = false, bool: Bool = false) -> ParameterSpec {
        ParameterSpec(id: self, unit: unit, minimum: lo, maximum: hi, minimumExcluded: minEx,
                      defaultValue: def, isInteger: int || bool, isBoolean: bool, summary: summary)
    }
}
