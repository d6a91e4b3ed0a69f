#if canImport(Glibc)
import Glibc
#endif

/// The ramps that keep a change from clicking, in one place. Each moves a value one step toward
/// a target; the caller keeps the value and calls once per sample (or per block, or per frame).
///
/// - `linear`: by at most `step`, landing exactly on the target (fades: the shifter's wet/dry
///   crossfade, the player's pause, stop and seek fades);
/// - `onePole`: x += (target − x)·α, exactly the target once within `snap` (time constant τ:
///   α = 1 − e^(−T/τ) for steps T apart; the pitch glide, EQ gains and slopes);
/// - `onePoleLog`: the same on a log scale, x *= (target/x)^α, for frequencies.
///
/// (The mixer's gain ramps reach their target in an exact number of samples instead; see
/// `TrackKernel.rampGains`.)
public enum Smoother {
    @inline(__always) @_noAllocation @_noLocks
    public static func linear(_ x: inout Float, toward target: Float, step: Float) {
        x = target > x ? min(target, x + step) : max(target, x - step)
    }

    @inline(__always) @_noAllocation @_noLocks
    public static func onePole(_ x: inout Double, toward target: Double, coefficient alpha: Double, snap: Double) {
        x += (target - x) * alpha
        if abs(target - x) < snap { x = target }
    }

    @inline(__always)
    public static func onePoleLog(_ x: inout Double, toward target: Double, coefficient alpha: Double, snapRatio: Double) {
        x *= pow(target / x, alpha)
        if abs(target / x - 1) < snapRatio { x = target }
    }
}
