#if canImport(Glibc)
import Glibc
#endif

/// How a parameter's value is laid out for automation: which curves make sense for it and what
/// "linear in dB" means. Declared per parameter in the registry (`ParameterSpec.automation`).
public enum AutomationScale: Sendable, Equatable {
    /// A value on a plain linear scale (pan, cents): step, linear and S-curve.
    case linear
    /// A level in dB (the EQ's gains, the limiter's ceiling): the `db` curve is linear.
    case decibels
    /// A gain as a linear ratio (the volumes): the `db` and `exp` curves are geometric.
    case linearGain
    /// A positive quantity heard on a log scale (corners in Hz, tempo, slope): `exp` is geometric.
    case positive
    /// A switch (mute, solo): 0 (off) or 1 (on), and only the `step` curve (the render ramps
    /// the track's gain over 10 ms at each change, so a step does not click).
    case onOff
}

/// The curve of the segment that follows a breakpoint, from (t₀, v₀) to the next breakpoint
/// (t₁, v₁), with u = (t − t₀)/(t₁ − t₀) in [0, 1):
///
/// - `step`:   v = v₀ (the value jumps to v₁ at t₁)
/// - `linear`: v = v₀ + (v₁ − v₀)·u
/// - `db`:     linear in dB. For a level in dB that is `linear`; for a linear gain,
///             v = v₀·(v₁/v₀)^u (20·log10 v moves linearly), so both ends must be above 0
/// - `exp`:    v = v₀·(v₁/v₀)^u, for frequencies and ratios (equal steps in octaves or
///             ratio per second); both ends above 0
/// - `scurve`: v = v₀ + (v₁ − v₀)·s, s = u²(3 − 2u) (smoothstep: starts and ends flat)
///
/// The last breakpoint's curve is unused (its value holds after it).
public enum AutomationCurve: String, CaseIterable, Sendable {
    case step, linear, db, exp, scurve

    /// Whether the curve applies to parameters on `scale`.
    public func applies(to scale: AutomationScale) -> Bool {
        switch self {
        case .step: true
        case .linear, .scurve: scale != .onOff
        case .db: scale == .decibels || scale == .linearGain
        case .exp: scale == .linearGain || scale == .positive
        }
    }

    /// Whether the curve is geometric on `scale` (both ends must then be above 0).
    public func isGeometric(on scale: AutomationScale) -> Bool {
        self == .exp || (self == .db && scale == .linearGain)
    }

    /// The curve names, for help texts and messages ("step, linear, db, exp, scurve").
    public static var namesText: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The value at fraction `u` (0…1) of the segment from `v0` to `v1` (formulas: the type's
    /// notes). The one function both the model and the render kernel evaluate, so they agree
    /// to the bit. Does not allocate.
    @inline(__always)
    static func interpolate(_ v0: Double, _ v1: Double, u: Double, geometric: Bool, code: UInt8) -> Double {
        switch code {
        case 0: return v0                                   // step
        case 4: return v0 + (v1 - v0) * (u * u * (3 - 2 * u))   // scurve
        default:
            // (a geometric segment whose ends are equal is that value, exactly)
            return geometric ? (v0 == v1 ? v0 : geometricValue(v0, logRatio: Libm.log(v1 / v0), u: u)) : v0 + (v1 - v0) * u
        }
    }

    /// A geometric segment's value, v₀·e^(u·ln(v₁/v₀)), from its ln(v₁/v₀): what `interpolate`
    /// computes, for a reader that keeps the logarithm of the segment it is in.
    @inline(__always)
    static func geometricValue(_ v0: Double, logRatio: Double, u: Double) -> Double { v0 * Libm.exp(u * logRatio) }

    /// The curve's code for `interpolate` (its index in `allCases`).
    var code: UInt8 { UInt8(AutomationCurve.allCases.firstIndex(of: self)!) }
}
