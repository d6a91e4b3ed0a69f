#if canImport(Glibc)
import Glibc
#endif

/// The mixer's pan law.
///
/// - A **mono** source panned to a stereo output uses constant power (sin/cos):
///   θ = (pan + 1)·π/4, left = cos θ, right = sin θ. Centre gives −3.01 dB on each side, and
///   left² + right² = 1 at every pan.
/// - A **stereo** source uses balance: pan < 0 turns the right channel down by (1 + pan),
///   pan > 0 turns the left channel down by (1 − pan); centre leaves both at unity.
/// - A mono source into a mono output ignores pan (gain 1).
public enum PanLaw {
    /// (left gain, right gain) for a mono source.
    @_noAllocation @_noLocks
    public static func monoGains(pan: Double) -> (left: Double, right: Double) {
        let p = min(max(pan, -1), 1)
        let theta = (p + 1) * Double.pi / 4
        return (Libm.cos(theta), Libm.cos(Double.pi / 2 - theta))   // sin θ, written so centre is exactly symmetric
    }

    /// (left gain, right gain) for a stereo source.
    @_noAllocation @_noLocks
    public static func balanceGains(pan: Double) -> (left: Double, right: Double) {
        let p = min(max(pan, -1), 1)
        return (p > 0 ? 1 - p : 1, p < 0 ? 1 + p : 1)
    }
}
